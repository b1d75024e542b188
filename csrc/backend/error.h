/* Status plus a thread-local message saying what and where. */
#ifndef HIPDNN_BACKEND_ERROR_H
#define HIPDNN_BACKEND_ERROR_H

#include "hipdnn/hipdnn.h"

/* Records the message for the calling thread and returns `status`, so that callers
 * write `return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "...", ...)`. */
hipdnnStatus_t hipdnnFail(hipdnnStatus_t status, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Clears the thread's message; every public entry point calls it first. */
void hipdnnClearError(void);
/* The thread's message buffer, for prefixing ("graph 'g': " + message). */
const char* hipdnnErrorMessage(void);

#endif
