/* test_engine_queries.c — a full ranking asks the engine plugins at once, on worker threads
 * (csrc/backend/engine_query.c), and gives what asking them in turn gives: the same support
 * report and the same log lines in the same order, delivered on the thread that ranked.
 * Plugins: reference_cpu and tests/query_fails (ABI 1.1: on workers; query_fails' query
 * fails, naming the thread it ran on) and three ABI 1.0 test plugins (on the calling
 * thread).  Rankings on fresh handles make each plugin handle on a worker; two threads rank
 * at once on handles of their own.  Run under TSan (make test-tsan) this is the race check
 * of the workers, the handle's plugin slots and the log capture. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* syscall */
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "check.h"
#include "graph_builder.h"
#include "hipdnn/hipdnn.h"

#define TP(name) HIPDNN_TEST_PLUGIN_DIR "/lib" name ".so"
#define FAILED_ON "cannot check the graph on thread "

static pthread_mutex_t g_log_lock = PTHREAD_MUTEX_INITIALIZER;
static char g_log[1 << 16];
static size_t g_log_len;
static long g_log_tid; /* the thread every message was delivered on; -1: several */

static long tid(void) { return (long)syscall(SYS_gettid); }

static void collect(hipdnnLogLevel_t level, const char* message, void* user_data) {
    (void)level, (void)user_data;
    pthread_mutex_lock(&g_log_lock);
    const long me = tid();
    if (g_log_tid == 0) g_log_tid = me;
    else if (g_log_tid != me) g_log_tid = -1;
    int w = snprintf(g_log + g_log_len, sizeof(g_log) - g_log_len, "%s\n", message);
    if (w > 0 && g_log_len + (size_t)w < sizeof(g_log)) g_log_len += (size_t)w;
    pthread_mutex_unlock(&g_log_lock);
}

static void log_reset(void) {
    pthread_mutex_lock(&g_log_lock);
    g_log_len = 0;
    g_log[0] = '\0';
    g_log_tid = 0;
    pthread_mutex_unlock(&g_log_lock);
}

/* s with every "thread <digits>" as "thread N" (in place); the first such number, or 0. */
static long without_thread_ids(char* s) {
    long first = 0;
    for (char* at = s; (at = strstr(at, "thread ")) != NULL;) {
        at += 7;
        char* end = at;
        const long n = strtol(at, &end, 10);
        if (end == at) continue;
        if (!first) first = n;
        *at = 'N';
        memmove(at + 1, end, strlen(end) + 1);
    }
    return first;
}

/* A mode-A ranking of a new conv graph on h: its support report and the log lines it made
 * (both malloc'd, thread ids normalized), and the thread query_fails was asked on. */
static int rank(hipdnnHandle_t h, char** report, char** log, long* asked_on) {
    car_graph g;
    int ok = car_build(&g, h, 1);
    hipdnnBackendDescriptor_t heur = NULL;
    if (ok) {
        log_reset();
        heur = gb_heur(g.graph, HIPDNN_HEUR_MODE_A);
        *report = heur ? gb_get_string(heur, HIPDNN_ATTR_ENGINEHEUR_SUPPORT_REPORT_EXT) : NULL;
        ok = *report != NULL;
    }
    if (ok) {
        const char* why = strstr(*report, "plugin error while checking the graph: query_fails: "
                                 FAILED_ON);
        ok = CHECK_MSG(why, "query_fails' reason is not its message: %s", *report);
        *asked_on = ok ? strtol(strstr(why, FAILED_ON) + strlen(FAILED_ON), NULL, 10) : 0;
        without_thread_ids(*report);
        pthread_mutex_lock(&g_log_lock);
        *log = strdup(g_log);
        CHECK_MSG(g_log_tid == tid(), "log lines delivered on thread %ld, not the ranking's %ld",
                  g_log_tid, tid());
        pthread_mutex_unlock(&g_log_lock);
        if (*log) without_thread_ids(*log);
    }
    gb_destroy(&heur);
    car_destroy(&g);
    return ok;
}

static void test_at_once_and_in_turn_give_the_same_answers_and_log(void) {
    hipdnnHandle_t h = NULL;
    REQUIRE_OK(hipdnnCreate(&h));
    char *report[3] = {NULL, NULL, NULL}, *log[3] = {NULL, NULL, NULL};
    long asked_on[3] = {0, 0, 0};
    /* a first ranking loads the heuristic plugins (a log line of its own) */
    CHECK(rank(h, &report[2], &log[2], &asked_on[2]));
    for (int parallel = 0; parallel < 2; ++parallel) {
        setenv("HIPDNN_PARALLEL_QUERIES", parallel ? "1" : "0", 1);
        CHECK(rank(h, &report[parallel], &log[parallel], &asked_on[parallel]));
    }
    unsetenv("HIPDNN_PARALLEL_QUERIES");
    if (report[0] && report[1] && log[0] && log[1]) {
        CHECK_MSG(strcmp(report[0], report[1]) == 0, "reports differ:\n%s---\n%s", report[0],
                  report[1]);
        CHECK_MSG(strcmp(log[0], log[1]) == 0, "logs differ:\n%s---\n%s", log[0], log[1]);
        CHECK_STR_CONTAINS(report[1], "reference_cpu\t");
        CHECK_STR_CONTAINS(log[1], "declines_all: declining graph 'conv_add_relu'");
        CHECK_STR_CONTAINS(log[1], "query_fails: asked on thread N");
        CHECK_MSG(asked_on[0] == tid(), "in turn: asked on %ld, not %ld", asked_on[0], tid());
        CHECK_MSG(asked_on[1] && asked_on[1] != tid(), "at once: asked on %ld (this thread: "
                  "%ld)", asked_on[1], tid());
    }
    for (int i = 0; i < 3; ++i) free(report[i]), free(log[i]);
    CHECK_OK(hipdnnDestroy(h));
}

/* A mode-A ranking's support report (malloc'd, thread ids normalized), or NULL: no CHECK
 * here, as it runs on threads of the test's own (check.h's counts are not atomic). */
static char* report_of(hipdnnBackendDescriptor_t graph) {
    hipdnnBackendDescriptor_t heur = NULL;
    hipdnnBackendHeurMode_t mode = HIPDNN_HEUR_MODE_A;
    char* r = NULL;
    int64_t n = 0;
    if (hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur) ||
        hipdnnBackendSetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_MODE, HIPDNN_TYPE_HEUR_MODE, 1,
                                  &mode) ||
        hipdnnBackendSetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                                  HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph) ||
        hipdnnBackendFinalize(heur) ||
        hipdnnBackendGetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_SUPPORT_REPORT_EXT,
                                  HIPDNN_TYPE_CHAR, 0, &n, NULL) ||
        !(r = calloc((size_t)n + 1, 1)) ||
        hipdnnBackendGetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_SUPPORT_REPORT_EXT,
                                  HIPDNN_TYPE_CHAR, n + 1, &n, r)) {
        free(r);
        r = NULL;
    }
    if (heur) hipdnnBackendDestroyDescriptor(heur);
    if (r) without_thread_ids(r);
    return r;
}

#define RANKINGS 4

typedef struct {
    car_graph graphs[RANKINGS]; /* each on a handle of its own, not used before */
    hipdnnHandle_t handles[RANKINGS];
    const char* want;
    int differ; /* rankings whose report was not `want` (or failed) */
} ranker;

static void* rank_all(void* arg) {
    ranker* r = arg;
    for (int i = 0; i < RANKINGS; ++i) {
        char* got = report_of(r->graphs[i].graph);
        r->differ += !got || strcmp(got, r->want) != 0;
        free(got);
    }
    return NULL;
}

/* Two threads rank at once, each on fresh handles: every plugin handle is made on a
 * worker, two rankings' workers running together. */
static void test_rankings_on_new_handles_from_two_threads_at_once(void) {
    hipdnnHandle_t h = NULL;
    REQUIRE_OK(hipdnnCreate(&h));
    setenv("HIPDNN_PARALLEL_QUERIES", "0", 1);
    char *want = NULL, *log = NULL;
    long asked_on = 0;
    const int ok = rank(h, &want, &log, &asked_on);
    unsetenv("HIPDNN_PARALLEL_QUERIES");
    free(log);
    CHECK_OK(hipdnnDestroy(h));
    REQUIRE(ok);
    static ranker r[2];
    for (int t = 0; t < 2; ++t) {
        r[t].want = want;
        for (int i = 0; i < RANKINGS; ++i)
            if (CHECK_OK(hipdnnCreate(&r[t].handles[i])))
                CHECK(car_build(&r[t].graphs[i], r[t].handles[i], 1));
    }
    pthread_t threads[2];
    int started[2];
    for (int t = 0; t < 2; ++t) started[t] = pthread_create(&threads[t], NULL, rank_all, &r[t]) == 0;
    for (int t = 0; t < 2; ++t) {
        if (!CHECK(started[t])) continue;
        pthread_join(threads[t], NULL);
        CHECK_MSG(r[t].differ == 0, "thread %d: %d of %d reports were not the one asked in "
                  "turn:\n%s", t, r[t].differ, RANKINGS, want);
        for (int i = 0; i < RANKINGS; ++i) {
            car_destroy(&r[t].graphs[i]);
            CHECK_OK(hipdnnDestroy(r[t].handles[i]));
        }
    }
    free(want);
}

int main(void) {
    /* no plan cache: every ranking is a full one */
    setenv("HIPDNN_CACHE", "0", 1);
    const char* paths[] = {HIPDNN_ENGINE_DIR "/libhipdnn_reference_cpu.so", TP("declines_all"),
                           HIPDNN_QUERY_FAILS_PLUGIN, TP("no_reason"), HIPDNN_TUNE_ENGINE};
    if (!CHECK_OK(hipdnnSetEnginePluginPaths_ext(5, paths, HIPDNN_PLUGIN_LOADING_ABSOLUTE)))
        return check_finish();
    hipdnnSetLogLevel_ext(HIPDNN_LOG_INFO);
    hipdnnSetUserLogCallback_ext(collect, NULL);
    RUN_TEST(test_at_once_and_in_turn_give_the_same_answers_and_log);
    RUN_TEST(test_rankings_on_new_handles_from_two_threads_at_once);
    hipdnnSetUserLogCallback_ext(NULL, NULL);
    return check_finish();
}
