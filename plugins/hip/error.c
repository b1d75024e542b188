/* Diagnostics: the thread-local last-error message and the backend's log callback. */
#include <stdarg.h>
#include <stdio.h>

#include "hip_engine.h"

static _Thread_local char t_error[HIPE_MSG_LEN];

/* Set once by the backend right after loading, before any handle exists. */
static hipdnnPluginLoggingCallback_t g_log;

void hipe_set_error(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t_error, sizeof(t_error), fmt, ap);
    va_end(ap);
}

const char* hipe_last_error(void) { return t_error; }

void hipe_set_log_callback(hipdnnPluginLoggingCallback_t cb) { g_log = cb; }

void hipe_log(int level, const char* fmt, ...) {
    hipdnnPluginLoggingCallback_t cb = g_log;
    if (!cb) return;
    char line[HIPE_MSG_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    cb(level, line);
}
