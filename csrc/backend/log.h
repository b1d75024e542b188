/* Logging: $HIPDNN_LOG_LEVEL (off, error, warn, info; default warn), $HIPDNN_LOG_FILE
 * (default stderr) and a user callback that replaces both. */
#ifndef HIPDNN_BACKEND_LOG_H
#define HIPDNN_BACKEND_LOG_H

#include "hipdnn/hipdnn.h"

void hipdnnLog(hipdnnLogLevel_t level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
/* For plugins' log callbacks: message already formatted. */
void hipdnnLogMessage(int level, const char* message);

/* Around a region that holds a backend lock (they nest): messages this thread logs inside
 * are queued and delivered by the End that closes the outermost region, after the lock is
 * released, so that a user callback may call back into hipdnn. */
void hipdnnLogDeferBegin(void);
void hipdnnLogDeferEnd(void);

/* fork.c: the logger's lock around fork(). */
void hipdnnLogForkPrepare(void);
void hipdnnLogForkParent(void);
void hipdnnLogForkChild(void);

#endif
