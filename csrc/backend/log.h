/* Logging: $HIPDNN_LOG_LEVEL (off, error, warn, info; default warn), $HIPDNN_LOG_FILE
 * (default stderr) and a user callback that replaces both. */
#ifndef HIPDNN_BACKEND_LOG_H
#define HIPDNN_BACKEND_LOG_H

#include "hipdnn/hipdnn.h"

void hipdnnLog(hipdnnLogLevel_t level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
/* For plugins' log callbacks: message already formatted. */
void hipdnnLogMessage(int level, const char* message);

#endif
