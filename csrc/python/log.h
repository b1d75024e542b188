/* log.h — the queue between the backend's logger and a Python callable (log.c).
 *
 * A leaf: log.c knows nothing of module state, exceptions or the other files of _C.
 * errors.c (hd_log_flush, hd_check) and module.c (set_log_callback, flush_log) call in.
 *
 * The queue is process-wide, as the backend's logger is: hipdnnSetUserLogCallback_ext
 * keeps one callback for the whole process, so there is one queue per process and
 * whichever module instance flushes next delivers its messages.
 */
#ifndef HIPDNN_PY_LOG_H
#define HIPDNN_PY_LOG_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "hipdnn/hipdnn.h"

/* Creates the queue's lock; with the GIL held, before the first hd_log_enqueue.
 * Returns 0, or -1 with MemoryError set. */
int hd_log_init(void);

/* The hipdnnLogCallback_t given to the backend.  Runs on any thread, without the GIL;
 * copies the message into the queue (at most 1024 entries; the rest are counted as
 * dropped).  user_data is unused. */
void hd_log_enqueue(hipdnnLogLevel_t level, const char* message, void* user_data);

/* Drops every queued message. */
void hd_log_discard(void);

/* With the GIL held: calls callback(level, message) for each queued message, oldest
 * first (NULL callback: does nothing, messages stay queued).  Never raises: an exception
 * from the callable is reported as unraisable, and one already set is kept. */
void hd_log_deliver(PyObject* callback);

#endif /* HIPDNN_PY_LOG_H */
