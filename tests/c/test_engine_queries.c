/* test_engine_queries.c — a full ranking asks the engine plugins at once, on worker threads
 * (csrc/backend/engine_query.c), and gives what asking them in turn gives: the same support
 * report and the same log lines in the same order, delivered on the thread that ranked.
 * Plugins: reference_cpu and tests/query_fails (ABI 1.1: on workers; query_fails' query
 * fails, naming the thread it ran on) and three ABI 1.0 test plugins (on the calling
 * thread).  Rankings on fresh handles make each plugin handle on a worker; two threads rank
 * at once on handles of their own.  Again over the fake driver (fake_gpu.h), with the
 * cudnn and blaslt engines on the fake cuDNN and cuBLASLt: their library handles are made
 * on two workers at once.  Run under TSan (make test-tsan) this is the race check
 * of the workers, the handle's plugin slots and the log capture. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* syscall */
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "check.h"
#include "fake_gpu.h"
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

/* s without its lines holding `what` (in place); whether one was there. */
static int drop_lines(char* s, const char* what) {
    int found = 0;
    for (char* at; (at = strstr(s, what)) != NULL;) {
        char* start = at;
        while (start > s && start[-1] != '\n') --start;
        char* end = strchr(at, '\n');
        end = end ? end + 1 : at + strlen(at);
        memmove(start, end, strlen(end) + 1);
        found = 1;
    }
    return found;
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
/* The run over the fake driver: the vendor engines' world (main). */
static int g_vendor;

/* Whether the report's line of engine `name` says applicable. */
static int applicable(const char* report, const char* name) {
    const size_t n = strlen(name);
    for (const char* at = report; at && *at; at = strchr(at, '\n'), at = at ? at + 1 : NULL) {
        const char* end = strchr(at, '\n');
        const size_t len = end ? (size_t)(end - at) : strlen(at);
        if (len > n && strncmp(at, name, n) == 0 && at[n] == '\t')
            return len >= 11 && strncmp(at + len - 11, "\tapplicable", 11) == 0;
    }
    return 0;
}

/* y = relu(a @ b), fp16 in and out, finalized on h: what both vendor engines take (each then makes
 * its library handle).  d[0] is the graph; 0 on failure. */
static int mm_build(hipdnnHandle_t h, hipdnnBackendDescriptor_t d[7]) {
    const int64_t ad[3] = {1, 32, 16}, bd[3] = {1, 16, 8}, cd[3] = {1, 32, 8};
    d[1] = gb_tensor(1, "a", HIPDNN_DATA_HALF, 3, ad, NULL, 0);
    d[2] = gb_tensor(2, "b", HIPDNN_DATA_HALF, 3, bd, NULL, 0);
    d[3] = gb_tensor(3, "c", HIPDNN_DATA_FLOAT, 3, cd, NULL, 1);
    d[4] = gb_tensor(4, "y", HIPDNN_DATA_HALF, 3, cd, NULL, 0);
    d[5] = d[1] && d[2] && d[3] ? gb_matmul("mm", d[1], d[2], d[3]) : NULL;
    d[6] = d[3] && d[4] ? gb_pointwise("act", HIPDNN_POINTWISE_RELU_FWD, d[3], NULL, d[4]) : NULL;
    d[0] = d[5] && d[6] ? gb_graph(h, "mm_relu", 2, d + 5) : NULL;
    return d[0] && CHECK_OK(hipdnnBackendFinalize(d[0]));
}

static int rank(hipdnnHandle_t h, char** report, char** log, long* asked_on) {
    car_graph g;
    hipdnnBackendDescriptor_t mm[7] = {NULL};
    int ok = g_vendor ? mm_build(h, mm) : car_build(&g, h, 1);
    hipdnnBackendDescriptor_t heur = NULL;
    if (ok) {
        log_reset();
        heur = gb_heur(g_vendor ? mm[0] : g.graph, HIPDNN_HEUR_MODE_A);
        *report = heur ? gb_get_string(heur, HIPDNN_ATTR_ENGINEHEUR_SUPPORT_REPORT_EXT) : NULL;
        ok = *report != NULL;
    }
    if (ok && g_vendor) {
        ok = CHECK_MSG(applicable(*report, "cudnn") && applicable(*report, "blaslt"),
                       "cudnn and blaslt do not both take the graph:\n%s", *report);
        pthread_mutex_lock(&g_log_lock);
        *log = strdup(g_log);
        pthread_mutex_unlock(&g_log_lock);
    } else if (ok) {
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
    if (g_vendor)
        for (int i = 0; i < 7; ++i) gb_destroy(&mm[i]);
    else
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
        /* the one line that differs: how the plugins were asked, and how long each took */
        if (log[parallel])
            CHECK_MSG(drop_lines(log[parallel], parallel ? " engine plugins asked at once in "
                                                         : " engine plugins asked in turn in "),
                      "no timing line:\n%s", log[parallel]);
    }
    setenv("HIPDNN_PARALLEL_QUERIES", "1", 1); /* the default here */
    if (report[0] && report[1] && log[0] && log[1]) {
        CHECK_MSG(strcmp(report[0], report[1]) == 0, "reports differ:\n%s---\n%s", report[0],
                  report[1]);
        CHECK_MSG(strcmp(log[0], log[1]) == 0, "logs differ:\n%s---\n%s", log[0], log[1]);
        CHECK_STR_CONTAINS(report[1], "reference_cpu\t");
    }
    if (log[1] && !g_vendor) {
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

/* The support report of a ranking asked in turn on a fresh handle (what every ranking at
 * once must give), or NULL. */
static char* in_turn_report(void) {
    hipdnnHandle_t h = NULL;
    if (!CHECK_OK(hipdnnCreate(&h))) return NULL;
    setenv("HIPDNN_PARALLEL_QUERIES", "0", 1);
    char *want = NULL, *log = NULL;
    long asked_on = 0;
    const int ok = rank(h, &want, &log, &asked_on);
    setenv("HIPDNN_PARALLEL_QUERIES", "1", 1); /* the default here */
    free(log);
    CHECK_OK(hipdnnDestroy(h));
    if (!ok) free(want);
    return ok ? want : NULL;
}

/* Two threads rank at once, each on fresh handles: every plugin handle is made on a
 * worker, two rankings' workers running together. */
static void test_rankings_on_new_handles_from_two_threads_at_once(void) {
    char* want = in_turn_report();
    REQUIRE(want);
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

#define CUDNN_LIB HIPDNN_FAKE_CUDA_DIR "/../fake_cudnn/libcudnn.so.9"
#define BLASLT_LIB HIPDNN_FAKE_CUDA_DIR "/../fake_cublaslt/libcublasLt.so.13"

/* How many library handles the fake library made (its test-only counter); -1 if unknown. */
static long fake_handles(const char* lib, const char* counter) {
    void* l = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
    long (*count)(void) = l ? (long (*)(void))dlsym(l, counter) : NULL;
    const long n = count ? count() : -1;
    if (l) dlclose(l);
    return n;
}

/* Over the fake driver: cudnn and blaslt make their library handles on two workers at
 * once, on fresh handles, and answer as when asked in turn. */
static void test_vendor_handles_made_at_once_answer_as_in_turn(void) {
    char* want = in_turn_report();
    REQUIRE(want);
    hipdnnHandle_t h = NULL;
    char* log = NULL;
    long asked_on = 0;
    const long made[2] = {fake_handles(CUDNN_LIB, "fakeCudnnHandlesCreated"),
                          fake_handles(BLASLT_LIB, "fakeCublasLtHandlesCreated")};
    for (int i = 0; i < 4; ++i) {
        char* got = NULL;
        if (!CHECK_OK(hipdnnCreate(&h))) break;
        if (CHECK(rank(h, &got, &log, &asked_on)))
            CHECK_MSG(strcmp(got, want) == 0, "report differs:\n%s---\n%s", got, want);
        free(got), free(log);
        log = NULL;
        CHECK_OK(hipdnnDestroy(h));
    }
    /* each fresh handle made one handle of each library */
    CHECK_EQ_INT(fake_handles(CUDNN_LIB, "fakeCudnnHandlesCreated") - made[0], 4);
    CHECK_EQ_INT(fake_handles(BLASLT_LIB, "fakeCublasLtHandlesCreated") - made[1], 4);
    free(want);
}

static void vendor_world(void) {
    g_vendor = 1;
    setenv("HIPDNN_CUDNN_LIBRARY", CUDNN_LIB, 1);
    setenv("HIPDNN_BLASLT_LIBRARY", BLASLT_LIB, 1);
    const char* paths[] = {HIPDNN_ENGINE_DIR "/libhipdnn_reference_cpu.so",
                           HIPDNN_ENGINE_DIR "/libhipdnn_cudnn.so",
                           HIPDNN_ENGINE_DIR "/libhipdnn_blaslt.so", HIPDNN_EMULATED_PLUGIN};
    if (!CHECK_OK(hipdnnSetEnginePluginPaths_ext(4, paths, HIPDNN_PLUGIN_LOADING_ABSOLUTE)))
        return;
    RUN_TEST(test_at_once_and_in_turn_give_the_same_answers_and_log);
    RUN_TEST(test_vendor_handles_made_at_once_answer_as_in_turn);
}

int main(int argc, char** argv) {
    /* no plan cache: every ranking is a full one; plugins asked at once (HIPDNN_PARALLEL_
     * QUERIES=1, off by default) but where a test asks in turn */
    setenv("HIPDNN_CACHE", "0", 1);
    setenv("HIPDNN_PARALLEL_QUERIES", "1", 1);
    hipdnnSetLogLevel_ext(HIPDNN_LOG_INFO);
    hipdnnSetUserLogCallback_ext(collect, NULL);
    if (fake_gpu_is_child(argc, argv)) {
        vendor_world();
        hipdnnSetUserLogCallback_ext(NULL, NULL);
        return check_finish();
    }
    const char* paths[] = {HIPDNN_ENGINE_DIR "/libhipdnn_reference_cpu.so", TP("declines_all"),
                           HIPDNN_QUERY_FAILS_PLUGIN, TP("no_reason"), HIPDNN_TUNE_ENGINE};
    if (!CHECK_OK(hipdnnSetEnginePluginPaths_ext(5, paths, HIPDNN_PLUGIN_LOADING_ABSOLUTE)))
        return check_finish();
    RUN_TEST(test_at_once_and_in_turn_give_the_same_answers_and_log);
    RUN_TEST(test_rankings_on_new_handles_from_two_threads_at_once);
    fake_gpu_run_self();
    hipdnnSetUserLogCallback_ext(NULL, NULL);
    return check_finish();
}
