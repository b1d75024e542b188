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

/* Messages kept for another thread to log (the engine queries' workers, engine_query.c):
 * while a thread captures into a queue, what it logs goes there, whatever it defers. */
typedef struct hipdnnLogQueue {
    struct hipdnnLogPending* head;
    struct hipdnnLogPending* tail;
    unsigned lost; /* messages that could not be kept (no memory) */
} hipdnnLogQueue;
/* Starts capturing this thread's messages into q (NULL: stops). */
void hipdnnLogCapture(hipdnnLogQueue* q);
/* Logs q's messages on this thread, in order (queued if it defers), and empties q. */
void hipdnnLogQueueFlush(hipdnnLogQueue* q);

/* fork.c: the logger's lock around fork(). */
void hipdnnLogForkPrepare(void);
void hipdnnLogForkParent(void);
void hipdnnLogForkChild(void);

#endif
