/* The logger: one of the two process-wide states the backend keeps (with the plugin
 * registry).  Configured from the environment on first use. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* secure_getenv: set[ug]id processes ignore our variables */
#endif
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static hipdnnLogLevel_t g_level = HIPDNN_LOG_WARN;
static FILE* g_file; /* NULL = stderr */
static hipdnnLogCallback_t g_callback;
static void* g_user_data;

static void configure(void) {
    const char* lv = getenv("HIPDNN_LOG_LEVEL");
    if (lv && *lv) {
        if (!strcasecmp(lv, "off") || !strcmp(lv, "0")) g_level = HIPDNN_LOG_OFF;
        else if (!strcasecmp(lv, "error") || !strcmp(lv, "1")) g_level = HIPDNN_LOG_ERROR;
        else if (!strcasecmp(lv, "warn") || !strcasecmp(lv, "warning") || !strcmp(lv, "2"))
            g_level = HIPDNN_LOG_WARN;
        else if (!strcasecmp(lv, "info") || !strcmp(lv, "3")) g_level = HIPDNN_LOG_INFO;
        else fprintf(stderr, "hipdnn [warn] HIPDNN_LOG_LEVEL='%s' is not off, error, warn or info; using warn\n", lv);
    }
    const char* path = secure_getenv("HIPDNN_LOG_FILE");
    if (path && *path) {
        g_file = fopen(path, "a");
        if (!g_file)
            fprintf(stderr, "hipdnn [warn] cannot open HIPDNN_LOG_FILE '%s'; logging to stderr\n", path);
    }
}

static const char* level_name(int level) {
    switch (level) {
    case HIPDNN_LOG_ERROR: return "error";
    case HIPDNN_LOG_WARN: return "warn";
    default: return "info";
    }
}

void hipdnnLogMessage(int level, const char* message) {
    pthread_once(&g_once, configure);
    pthread_mutex_lock(&g_lock);
    if (level > HIPDNN_LOG_OFF && level <= (int)g_level) {
        if (g_callback) {
            g_callback((hipdnnLogLevel_t)level, message, g_user_data);
        } else {
            FILE* f = g_file ? g_file : stderr;
            fprintf(f, "hipdnn [%s] %s\n", level_name(level), message);
            fflush(f);
        }
    }
    pthread_mutex_unlock(&g_lock);
}

void hipdnnLog(hipdnnLogLevel_t level, const char* fmt, ...) {
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    hipdnnLogMessage((int)level, buf);
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnSetUserLogCallback_ext(hipdnnLogCallback_t callback,
                                                          void* user_data) {
    pthread_once(&g_once, configure);
    pthread_mutex_lock(&g_lock);
    g_callback = callback;
    g_user_data = user_data;
    pthread_mutex_unlock(&g_lock);
    return HIPDNN_STATUS_SUCCESS;
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnSetLogLevel_ext(hipdnnLogLevel_t level) {
    if ((int)level < HIPDNN_LOG_OFF || level > HIPDNN_LOG_INFO) return HIPDNN_STATUS_BAD_PARAM;
    pthread_once(&g_once, configure);
    pthread_mutex_lock(&g_lock);
    g_level = level;
    pthread_mutex_unlock(&g_lock);
    return HIPDNN_STATUS_SUCCESS;
}
