/* log_capture.h — a hipdnnLogCallback_t that keeps every message, so tests can ask
 * "was a line logged that names this path and says this?".  The callback may run on any
 * thread, hence the lock. */
#ifndef HIPDNN_TEST_LOG_CAPTURE_H
#define HIPDNN_TEST_LOG_CAPTURE_H

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "hipdnn/hipdnn.h"

#define LOG_CAPTURE_MAX 512

typedef struct {
    pthread_mutex_t lock;
    int count;
    int dropped;
    hipdnnLogLevel_t levels[LOG_CAPTURE_MAX];
    char* lines[LOG_CAPTURE_MAX];
} log_capture;

static log_capture g_log = {PTHREAD_MUTEX_INITIALIZER, 0, 0, {0}, {0}};

static inline void log_capture_callback(hipdnnLogLevel_t level, const char* message, void* user_data) {
    log_capture* c = user_data;
    pthread_mutex_lock(&c->lock);
    if (c->count < LOG_CAPTURE_MAX && message) {
        size_t n = strlen(message);
        char* s = malloc(n + 1);
        if (s) {
            memcpy(s, message, n + 1);
            c->levels[c->count] = level;
            c->lines[c->count++] = s;
        } else {
            ++c->dropped;
        }
    } else {
        ++c->dropped;
    }
    pthread_mutex_unlock(&c->lock);
}

/* Sets the callback and the level; call before the first hipdnnCreate to see loading. */
static inline hipdnnStatus_t log_capture_start(hipdnnLogLevel_t level) {
    hipdnnStatus_t st = hipdnnSetLogLevel_ext(level);
    if (st != HIPDNN_STATUS_SUCCESS) return st;
    return hipdnnSetUserLogCallback_ext(log_capture_callback, &g_log);
}

static inline int log_capture_count(void) {
    pthread_mutex_lock(&g_log.lock);
    int n = g_log.count;
    pthread_mutex_unlock(&g_log.lock);
    return n;
}

/* Number of captured lines containing every non-NULL needle. */
static inline int log_capture_matches(const char* a, const char* b, const char* c) {
    int n = 0;
    pthread_mutex_lock(&g_log.lock);
    for (int i = 0; i < g_log.count; ++i) {
        const char* s = g_log.lines[i];
        if ((!a || strstr(s, a)) && (!b || strstr(s, b)) && (!c || strstr(s, c))) ++n;
    }
    pthread_mutex_unlock(&g_log.lock);
    return n;
}

static inline void log_capture_dump(const char* why) {
    pthread_mutex_lock(&g_log.lock);
    printf("   captured log (%s), %d line(s):\n", why, g_log.count);
    for (int i = 0; i < g_log.count; ++i) printf("     [%d] %s\n", (int)g_log.levels[i], g_log.lines[i]);
    pthread_mutex_unlock(&g_log.lock);
}

static inline void log_capture_stop(void) {
    hipdnnSetUserLogCallback_ext(NULL, NULL);
    pthread_mutex_lock(&g_log.lock);
    for (int i = 0; i < g_log.count; ++i) free(g_log.lines[i]);
    g_log.count = 0;
    pthread_mutex_unlock(&g_log.lock);
}

#endif /* HIPDNN_TEST_LOG_CAPTURE_H */
