/* The logger: one of the two process-wide states the backend keeps (with the plugin
 * registry).  Configured from the environment on first use.
 *
 * A user callback may call any hipdnn function, hipdnnCreate and logging included, so it
 * never runs while a backend lock is held: code that holds one brackets its region with
 * hipdnnLogDeferBegin/End, and messages logged meanwhile on that thread are copied into a
 * per-thread queue and delivered by the End that releases the last lock.  Delivery itself
 * reads the callback under g_lock and calls it after releasing it.  A thread that works for
 * another one holding a lock (engine_query.c's workers) captures what it logs into a queue
 * that the other thread logs afterwards, so it too reaches the user outside the lock. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* secure_getenv: set[ug]id processes ignore our variables */
#endif
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "error.h"
#include "log.h"

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* the fields below */
static pthread_cond_t g_idle = PTHREAD_COND_INITIALIZER;   /* g_old_in_flight reached 0 */
static atomic_int g_level = HIPDNN_LOG_WARN;
static FILE* g_file; /* NULL = stderr */
static hipdnnLogCallback_t g_callback;
static void* g_user_data;
/* Callbacks running now: of the current callback (g_generation) and of earlier ones.
 * hipdnnSetUserLogCallback_ext waits for the earlier ones, so that once it returns the
 * replaced callback's user_data may be freed. */
static uint64_t g_generation;
static int g_in_flight;
static int g_old_in_flight;

typedef struct hipdnnLogPending {
    struct hipdnnLogPending* next;
    int level;
    char text[]; /* NUL-terminated */
} pending;

static _Thread_local int t_defer;       /* backend locks this thread holds */
static _Thread_local int t_in_callback; /* callbacks this thread is inside */
static _Thread_local hipdnnLogQueue t_queue;    /* what it deferred */
static _Thread_local hipdnnLogQueue* t_capture; /* hipdnnLogCapture's queue, if any */

static void configure(void) {
    const char* lv = getenv("HIPDNN_LOG_LEVEL");
    if (lv && *lv) {
        int level = HIPDNN_LOG_WARN;
        if (!strcasecmp(lv, "off") || !strcmp(lv, "0")) level = HIPDNN_LOG_OFF;
        else if (!strcasecmp(lv, "error") || !strcmp(lv, "1")) level = HIPDNN_LOG_ERROR;
        else if (!strcasecmp(lv, "warn") || !strcasecmp(lv, "warning") || !strcmp(lv, "2"))
            level = HIPDNN_LOG_WARN;
        else if (!strcasecmp(lv, "info") || !strcmp(lv, "3")) level = HIPDNN_LOG_INFO;
        else fprintf(stderr, "hipdnn [warn] HIPDNN_LOG_LEVEL='%s' is not off, error, warn or info; using warn\n", lv);
        atomic_store(&g_level, level);
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

/* To the callback (outside g_lock) or to the file; the caller holds no backend lock. */
static void deliver(int level, const char* message) {
    pthread_mutex_lock(&g_lock);
    hipdnnLogCallback_t cb = g_callback;
    void* user_data = g_user_data;
    uint64_t generation = g_generation;
    if (!cb) {
        FILE* f = g_file ? g_file : stderr;
        fprintf(f, "hipdnn [%s] %s\n", level_name(level), message);
        fflush(f);
        pthread_mutex_unlock(&g_lock);
        return;
    }
    ++g_in_flight;
    pthread_mutex_unlock(&g_lock);
    ++t_in_callback;
    cb((hipdnnLogLevel_t)level, message, user_data);
    --t_in_callback;
    pthread_mutex_lock(&g_lock);
    /* The counts are clamped: in a child forked from inside a callback they start at 0. */
    if (generation == g_generation) {
        if (g_in_flight > 0) --g_in_flight;
    } else if (g_old_in_flight > 0 && --g_old_in_flight == 0) {
        pthread_cond_broadcast(&g_idle);
    }
    pthread_mutex_unlock(&g_lock);
}

static void enqueue(hipdnnLogQueue* q, int level, const char* message) {
    size_t n = strlen(message);
    pending* p = malloc(sizeof(*p) + n + 1);
    if (!p) {
        ++q->lost;
        return;
    }
    p->next = NULL;
    p->level = level;
    memcpy(p->text, message, n + 1);
    if (q->tail) q->tail->next = p;
    else q->head = p;
    q->tail = p;
}

void hipdnnLogMessage(int level, const char* message) {
    pthread_once(&g_once, configure);
    if (level <= HIPDNN_LOG_OFF || level > atomic_load(&g_level) || !message) return;
    if (t_capture) {
        enqueue(t_capture, level, message);
        return;
    }
    if (t_defer == 0) {
        deliver(level, message);
        return;
    }
    enqueue(&t_queue, level, message);
}

void hipdnnLog(hipdnnLogLevel_t level, const char* fmt, ...) {
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    hipdnnLogMessage((int)level, buf);
}

void hipdnnLogDeferBegin(void) { ++t_defer; }

void hipdnnLogDeferEnd(void) {
    if (t_defer <= 0 || --t_defer > 0) return;
    /* Detached first: what the callbacks log now is delivered at once, not queued here. */
    pending* list = t_queue.head;
    unsigned lost = t_queue.lost;
    t_queue = (hipdnnLogQueue){NULL, NULL, 0};
    while (list) {
        pending* next = list->next;
        deliver(list->level, list->text);
        free(list);
        list = next;
    }
    if (lost) {
        char msg[96];
        snprintf(msg, sizeof(msg), "%u log message%s lost: out of memory", lost,
                 lost == 1 ? "" : "s");
        deliver(HIPDNN_LOG_ERROR, msg);
    }
}

void hipdnnLogCapture(hipdnnLogQueue* q) { t_capture = q; }

void hipdnnLogQueueFlush(hipdnnLogQueue* q) {
    pending* list = q->head;
    const unsigned lost = q->lost;
    *q = (hipdnnLogQueue){NULL, NULL, 0};
    for (pending* next; list; list = next) {
        next = list->next;
        hipdnnLogMessage(list->level, list->text); /* the level checked again */
        free(list);
    }
    if (lost)
        hipdnnLog(HIPDNN_LOG_ERROR, "%u log message%s lost: out of memory", lost,
                  lost == 1 ? "" : "s");
}

void hipdnnLogForkPrepare(void) { pthread_mutex_lock(&g_lock); }

void hipdnnLogForkParent(void) { pthread_mutex_unlock(&g_lock); }

/* Callbacks of other threads do not exist in the child; neither do waiters of g_idle. */
void hipdnnLogForkChild(void) {
    g_in_flight = 0;
    g_old_in_flight = 0;
    ++g_generation;
    pthread_cond_init(&g_idle, NULL);
    pthread_mutex_unlock(&g_lock);
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnSetUserLogCallback_ext(hipdnnLogCallback_t callback,
                                                          void* user_data) {
    pthread_once(&g_once, configure);
    pthread_mutex_lock(&g_lock);
    g_callback = callback;
    g_user_data = user_data;
    ++g_generation;
    g_old_in_flight += g_in_flight;
    g_in_flight = 0;
    /* Called from a callback, it cannot wait for the callbacks in flight: its own is one. */
    if (t_in_callback == 0)
        while (g_old_in_flight > 0) pthread_cond_wait(&g_idle, &g_lock);
    pthread_mutex_unlock(&g_lock);
    return HIPDNN_STATUS_SUCCESS;
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnSetLogLevel_ext(hipdnnLogLevel_t level) {
    if ((int)level < HIPDNN_LOG_OFF || level > HIPDNN_LOG_INFO) return HIPDNN_STATUS_BAD_PARAM;
    pthread_once(&g_once, configure);
    atomic_store(&g_level, (int)level);
    return HIPDNN_STATUS_SUCCESS;
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnLogMessage_ext(hipdnnLogLevel_t level, const char* message) {
    if (!message)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NULL_POINTER, "hipdnnLogMessage_ext: message "
                          "is NULL");
    if ((int)level <= HIPDNN_LOG_OFF || level > HIPDNN_LOG_INFO)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "hipdnnLogMessage_ext: level %d is not "
                          "error (1), warn (2) or info (3)", (int)level);
    hipdnnLogMessage((int)level, message);
    return HIPDNN_STATUS_SUCCESS;
}
