/* Asking engine plugins whether their engines run a graph.
 *
 * A full ranking asks every plugin, and on a GPU the vendor plugins' first answers are
 * most of a cold build (cudnnCreate, cublasLtCreate and each library's first heuristic
 * query, ~100 ms apiece).  With HIPDNN_PARALLEL_QUERIES=1 the plugins are asked at once:
 * one worker thread per plugin, the calling thread asking one of them itself (measured no
 * faster on an H200, where the libraries' first calls serialise: off by default).  The calling thread holds the handle's lock
 * for all of them until every worker is joined: no other call reaches the handle's plugin
 * handles meanwhile and a fork waits, as when each call took the lock; the workers take no
 * lock (hipdnnHandleLock is not recursive, and the caller holds it).  Each plugin is asked
 * by one thread, which alone makes its plugin handle (hipdnnHandlePluginHandleLocked).
 *
 * Error messages are thread-local (the backend's and each plugin's), so a worker reads them
 * on its own thread into its plugin's answers.  What a worker logs is captured and logged by
 * the calling thread after the joins, plugin by plugin in registry order, still under the
 * lock (so it reaches the user once the lock is released, as the calling thread's own
 * messages do).  The answers, reasons and log lines are those of asking one plugin after
 * another, which is what happens for a single plugin (the short cut), by default, or where
 * a thread cannot be started.
 *
 * ABI 1.0 plugins are asked on the calling thread: their Create may use that thread's
 * current device.  ABI 1.1 ones get the device in CreateForDevice and must not depend on
 * the thread that calls them (hipdnn_plugin.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine_query.h"
#include "error.h"
#include "handle.h"
#include "log.h"
#include "registry.h"

/* A worker's stack: at least what a main thread usually has, as plugins were only ever
 * called on application threads. */
#define WORKER_STACK ((size_t)8 << 20)

typedef struct {
    hipdnnGraphState* gs;
    int32_t plugin, ne;
    bool* ok;
    char** why;
    hipdnnLogQueue log; /* what was logged while asking, for the calling thread */
    double ms;          /* how long it took */
    pthread_t thread;
    bool on_worker; /* asked on its own thread (joined before the answers are read) */
} query;

/* Asks q's plugin; the handle's lock is held for this thread.  Reads every message on this
 * thread, into why[]. */
static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static void ask_plugin(query* q);

static void ask(query* q) {
    const double t0 = now_ms();
    ask_plugin(q);
    q->ms = now_ms() - t0;
}

static void ask_plugin(query* q) {
    hipdnnPlugin* p = hipdnnRegistryPlugin(q->plugin);
    const hipdnnGraphState* gs = q->gs;
    uint64_t ids[256];
    uint32_t n = 0;
    /* The graph's handle's own plugin handle, made on first use (a device plugin
     * touches its device only then). */
    hipdnnEnginePluginHandle_t ph = NULL;
    char create_err[600] = "";
    if (hipdnnHandlePluginHandleLocked(gs->handle, q->plugin, &ph) != HIPDNN_STATUS_SUCCESS)
        snprintf(create_err, sizeof(create_err), "%s", hipdnnErrorMessage());
    hipdnnClearError();
    hipdnnPluginStatus_t ps = HIPDNN_PLUGIN_STATUS_INTERNAL_ERROR;
    if (ph) ps = p->get_applicable(ph, gs->bytes, gs->num_bytes, ids, 256, &n);
    for (int32_t e = 0; e < q->ne; ++e) {
        const hipdnnEngineEntry* en = hipdnnRegistryEngine(e);
        if (en->plugin != q->plugin) continue;
        char buf[700];
        if (!ph) {
            snprintf(buf, sizeof(buf), "%s", create_err);
        } else if (ps != HIPDNN_PLUGIN_STATUS_SUCCESS) {
            snprintf(buf, sizeof(buf), "plugin error while checking the graph: %s",
                     hipdnnPluginLastError(p));
        } else {
            for (uint32_t k = 0; k < n && k < 256; ++k)
                if (ids[k] == en->id) q->ok[e] = true;
            if (q->ok[e]) continue;
            const char* r = NULL;
            if (!p->get_reason ||
                p->get_reason(ph, en->id, gs->bytes, gs->num_bytes, &r) !=
                    HIPDNN_PLUGIN_STATUS_SUCCESS || !r || !*r)
                r = "declined, no reason given";
            snprintf(buf, sizeof(buf), "%s", r);
        }
        q->why[e] = strdup(buf);
    }
}

/* ask(), its log lines kept in q->log. */
static void ask_captured(query* q) {
    hipdnnLogCapture(&q->log);
    ask(q);
    hipdnnLogCapture(NULL);
}

static void* worker(void* arg) {
    ask_captured(arg);
    return NULL;
}

/* Asked for with HIPDNN_PARALLEL_QUERIES=1 only: on an H200 (2026-11-30) the vendor
 * libraries' first calls serialised inside the process (blaslt's first query 134 -> 200
 * ms, hip's 9 -> 104 ms when asked beside cuDNN's), so the cold build did not shorten
 * (benchmarks/profiles/2026-11-30-ab-77bc7dd.md). */
static bool parallel_wanted(void) {
    const char* v = getenv("HIPDNN_PARALLEL_QUERIES");
    return v && strcmp(v, "1") == 0;
}

static bool start_worker(query* q) {
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) return false;
    size_t have = 0;
    if (pthread_attr_getstacksize(&attr, &have) == 0 && have < WORKER_STACK)
        pthread_attr_setstacksize(&attr, WORKER_STACK);
    q->on_worker = pthread_create(&q->thread, &attr, worker, q) == 0;
    pthread_attr_destroy(&attr);
    return q->on_worker;
}

/* The queries at once: the calling thread asks the ABI 1.0 plugins, or the first plugin
 * when all are 1.1; each other one gets a worker, or is asked here if none starts. */
static void ask_at_once(query* qs, int32_t n) {
    bool taken = false; /* the calling thread has a plugin to ask */
    for (int32_t i = 0; i < n; ++i)
        if (!hipdnnRegistryPlugin(qs[i].plugin)->create_for_device) taken = true;
    for (int32_t i = 0; i < n; ++i) {
        if (!hipdnnRegistryPlugin(qs[i].plugin)->create_for_device) continue;
        if (taken) start_worker(&qs[i]);
        taken = true;
    }
    for (int32_t i = 0; i < n; ++i)
        if (!qs[i].on_worker) ask_captured(&qs[i]);
    for (int32_t i = 0; i < n; ++i)
        if (qs[i].on_worker) pthread_join(qs[i].thread, NULL);
}

/* One info line when several plugins were asked: the wall time and each plugin's own, so
 * that the log shows whether the slow ones overlapped. */
static void say_times(const hipdnnGraphState* gs, const query* qs, int32_t n, bool at_once,
                      double ms) {
    char each[1024] = "";
    size_t off = 0;
    for (int32_t i = 0; i < n; ++i) {
        int w = snprintf(each + off, sizeof(each) - off, "%s%s %.1f ms", i ? ", " : "",
                         hipdnnRegistryPlugin(qs[i].plugin)->name, qs[i].ms);
        if (w > 0 && off + (size_t)w < sizeof(each)) off += (size_t)w;
    }
    hipdnnLog(HIPDNN_LOG_INFO, "heuristics: graph '%s': %d engine plugins asked %s in %.1f ms "
              "(%s)", gs->name ? gs->name : "", (int)n, at_once ? "at once" : "in turn", ms,
              each);
}

void hipdnnAskPlugins(hipdnnGraphState* gs, const int32_t* plugins, int32_t n, int32_t ne,
                      bool* ok, char** why) {
    hipdnnHandle_t h = gs->handle;
    query* qs = n > 1 ? calloc((size_t)n, sizeof(*qs)) : NULL;
    if (!qs) { /* one plugin (or no memory for the list): here, under the lock */
        for (int32_t i = 0; i < n; ++i) {
            query q = {.gs = gs, .plugin = plugins[i], .ne = ne, .ok = ok, .why = why};
            hipdnnHandleLock(h);
            ask(&q);
            hipdnnHandleUnlock(h);
        }
        return;
    }
    const bool at_once = parallel_wanted();
    const double t0 = now_ms();
    for (int32_t i = 0; i < n; ++i)
        qs[i] = (query){.gs = gs, .plugin = plugins[i], .ne = ne, .ok = ok, .why = why};
    if (!at_once) { /* in turn, here, each under the lock as any plugin call is */
        for (int32_t i = 0; i < n; ++i) {
            hipdnnHandleLock(h);
            ask(&qs[i]);
            hipdnnHandleUnlock(h);
        }
    } else {
        hipdnnHandleLock(h);
        ask_at_once(qs, n);
        for (int32_t i = 0; i < n; ++i) hipdnnLogQueueFlush(&qs[i].log);
        hipdnnHandleUnlock(h);
    }
    say_times(gs, qs, n, at_once, now_ms() - t0);
    free(qs);
}
