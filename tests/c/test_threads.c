/* test_threads — the API's thread rules, exercised so that `make test-tsan` has something to
 * watch: the first handles created at once from many threads (the plugins load once),
 * plans built and run on distinct handles at the same time, one plan run through several
 * handles at once, calls on one handle from several threads (serialized by the backend),
 * deserialization from several threads, and each thread's last-error message its own.
 * The reference engine's own worker threads run too (HIPDNN_CPU_THREADS=4 and plans big
 * enough to split).  Every result is compared with a float64 reference.
 *
 * Worker threads do not use CHECK (its counters are not thread-safe): each fills its own
 * report, and the main thread checks the reports. */
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hipdnn/hipdnn.h"

#define THREADS 4
#define M 256 /* a @ b with a [M, M], b [M, M]: 16.8M multiply-adds, split over workers */

static float g_a[M * M], g_b[M * M];
static double g_ref[M * M]; /* relu(a @ b) in float64 */

typedef struct {
    hipdnnStatus_t st;
    char what[160];
    char msg[512];
    double worst; /* largest error against g_ref, relative to 1 + |ref| */
} report;

static void fail_report(report* r, hipdnnStatus_t st, const char* what) {
    r->st = st;
    snprintf(r->what, sizeof(r->what), "%.150s", what);
    snprintf(r->msg, sizeof(r->msg), "%s", hipdnnPeekLastErrorString_ext());
}

#define TRY(r, call)                                                                    \
    do {                                                                                \
        hipdnnStatus_t st_ = (call);                                                    \
        if (st_ != HIPDNN_STATUS_SUCCESS) {                                             \
            fail_report((r), st_, #call);                                               \
            goto done;                                                                  \
        }                                                                               \
    } while (0)

static void make_data(void) {
    uint64_t s = 0x2545F4914F6CDD1Dull;
    for (int i = 0; i < M * M; ++i) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        g_a[i] = (float)((double)(s >> 40) / 16777216.0 - 0.5);
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        g_b[i] = (float)((double)(s >> 40) / 16777216.0 - 0.5);
    }
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < M; ++j) {
            double acc = 0;
            for (int k = 0; k < M; ++k) acc += (double)g_a[i * M + k] * g_b[k * M + j];
            g_ref[i * M + j] = acc > 0 ? acc : 0;
        }
}

static hipdnnStatus_t tensor(int64_t uid, int is_virtual, hipdnnBackendDescriptor_t* out) {
    int64_t dims[2] = {M, M};
    hipdnnDataType_t dt = HIPDNN_DATA_FLOAT;
    bool virt = is_virtual != 0;
    hipdnnStatus_t st = hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_TENSOR_DESCRIPTOR, out);
    if (!st) st = hipdnnBackendSetAttribute(*out, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT64, 1, &uid);
    if (!st) st = hipdnnBackendSetAttribute(*out, HIPDNN_ATTR_TENSOR_DATA_TYPE, HIPDNN_TYPE_DATA_TYPE, 1, &dt);
    if (!st) st = hipdnnBackendSetAttribute(*out, HIPDNN_ATTR_TENSOR_DIMENSIONS, HIPDNN_TYPE_INT64, 2, dims);
    if (!st) st = hipdnnBackendSetAttribute(*out, HIPDNN_ATTR_TENSOR_IS_VIRTUAL, HIPDNN_TYPE_BOOLEAN, 1, &virt);
    if (!st) st = hipdnnBackendFinalize(*out);
    return st;
}

static hipdnnStatus_t set_desc(hipdnnBackendDescriptor_t d, hipdnnBackendAttributeName_t a,
                               hipdnnBackendDescriptor_t v) {
    return hipdnnBackendSetAttribute(d, a, HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &v);
}

/* c = relu(a @ b) planned on handle h: the finalized graph and plan (caller destroys). */
static void build_plan(hipdnnHandle_t h, report* r, hipdnnBackendDescriptor_t* graph_out,
                       hipdnnBackendDescriptor_t* plan_out) {
    hipdnnBackendDescriptor_t a = NULL, b = NULL, t = NULL, c = NULL, mm = NULL, act = NULL,
                              g = NULL, heur = NULL, cfg = NULL, plan = NULL;
    hipdnnPointwiseMode_t relu = HIPDNN_POINTWISE_RELU_FWD;
    hipdnnBackendHeurMode_t mode = HIPDNN_HEUR_MODE_A;
    int64_t n = 0;
    TRY(r, tensor(1, 0, &a));
    TRY(r, tensor(2, 0, &b));
    TRY(r, tensor(3, 1, &t));
    TRY(r, tensor(4, 0, &c));
    TRY(r, hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, &mm));
    TRY(r, set_desc(mm, HIPDNN_ATTR_OPERATION_MATMUL_ADESC, a));
    TRY(r, set_desc(mm, HIPDNN_ATTR_OPERATION_MATMUL_BDESC, b));
    TRY(r, set_desc(mm, HIPDNN_ATTR_OPERATION_MATMUL_CDESC, t));
    TRY(r, hipdnnBackendFinalize(mm));
    TRY(r, hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, &act));
    TRY(r, hipdnnBackendSetAttribute(act, HIPDNN_ATTR_POINTWISE_MODE,
                                     HIPDNN_TYPE_POINTWISE_MODE_EXT, 1, &relu));
    TRY(r, set_desc(act, HIPDNN_ATTR_OPERATION_POINTWISE_XDESC, t));
    TRY(r, set_desc(act, HIPDNN_ATTR_OPERATION_POINTWISE_YDESC, c));
    TRY(r, hipdnnBackendFinalize(act));
    hipdnnBackendDescriptor_t ops[2] = {act, mm};
    TRY(r, hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &g));
    TRY(r, hipdnnBackendSetAttribute(g, HIPDNN_ATTR_OPERATIONGRAPH_HANDLE, HIPDNN_TYPE_HANDLE, 1, &h));
    TRY(r, hipdnnBackendSetAttribute(g, HIPDNN_ATTR_OPERATIONGRAPH_OPS,
                                     HIPDNN_TYPE_BACKEND_DESCRIPTOR, 2, ops));
    TRY(r, hipdnnBackendFinalize(g));
    TRY(r, hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur));
    TRY(r, hipdnnBackendSetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_MODE, HIPDNN_TYPE_HEUR_MODE, 1, &mode));
    TRY(r, set_desc(heur, HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, g));
    TRY(r, hipdnnBackendFinalize(heur));
    TRY(r, hipdnnBackendGetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_RESULTS,
                                     HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &cfg));
    TRY(r, hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan));
    TRY(r, hipdnnBackendSetAttribute(plan, HIPDNN_ATTR_EXECUTION_PLAN_HANDLE, HIPDNN_TYPE_HANDLE, 1, &h));
    TRY(r, set_desc(plan, HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfg));
    TRY(r, hipdnnBackendFinalize(plan));
    *plan_out = plan;
    plan = NULL;
    if (graph_out) {
        *graph_out = g;
        g = NULL;
    }
done:;
    hipdnnBackendDescriptor_t all[] = {a, b, t, c, mm, act, g, heur, cfg, plan};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); ++i) hipdnnBackendDestroyDescriptor(all[i]);
}

/* Runs `plan` on handle h with fresh buffers and records the worst error. */
static void run(hipdnnHandle_t h, hipdnnBackendDescriptor_t plan, report* r) {
    float* c = malloc(sizeof(float) * M * M);
    void* ws = NULL;
    hipdnnBackendDescriptor_t pack = NULL;
    int64_t ws_size = 0, n = 0, uids[3] = {1, 2, 4};
    if (!c) {
        r->st = HIPDNN_STATUS_ALLOC_FAILED;
        return;
    }
    for (int i = 0; i < M * M; ++i) c[i] = NAN;
    void* ptrs[3] = {g_a, g_b, c};
    TRY(r, hipdnnBackendGetAttribute(plan, HIPDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                     HIPDNN_TYPE_INT64, 1, &n, &ws_size));
    ws = malloc((size_t)ws_size + 1);
    TRY(r, hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack));
    TRY(r, hipdnnBackendSetAttribute(pack, HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, HIPDNN_TYPE_INT64, 3, uids));
    TRY(r, hipdnnBackendSetAttribute(pack, HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                     HIPDNN_TYPE_VOID_PTR, 3, ptrs));
    TRY(r, hipdnnBackendSetAttribute(pack, HIPDNN_ATTR_VARIANT_PACK_WORKSPACE, HIPDNN_TYPE_VOID_PTR, 1, &ws));
    TRY(r, hipdnnBackendFinalize(pack));
    TRY(r, hipdnnBackendExecute(h, plan, pack));
    for (int i = 0; i < M * M; ++i) {
        double e = fabs((double)c[i] - g_ref[i]) / (1 + fabs(g_ref[i]));
        if (!(e <= r->worst)) r->worst = isnan(e) ? INFINITY : e;
    }
done:
    hipdnnBackendDestroyDescriptor(pack);
    free(ws);
    free(c);
}

static void check_reports(const report* r, int n, const char* what) {
    for (int i = 0; i < n; ++i) {
        CHECK_MSG(r[i].st == HIPDNN_STATUS_SUCCESS, "%s, thread %d: %s gave %s: %s", what, i,
                  r[i].what, hipdnnGetErrorString(r[i].st), r[i].msg);
        CHECK_MSG(r[i].worst <= 1e-5, "%s, thread %d: error %g against float64", what, i,
                  r[i].worst);
    }
}

/* ---- the first handles, all at once ------------------------------------------------- */

static pthread_barrier_t g_start;

static void* create_handle(void* p) {
    report* r = p;
    hipdnnHandle_t h = NULL;
    int64_t engines = 0;
    pthread_barrier_wait(&g_start);
    TRY(r, hipdnnCreate(&h));
    TRY(r, hipdnnGetEngineCount_ext(&engines));
    if (engines < 1) fail_report(r, HIPDNN_STATUS_PLUGIN_ERROR, "no engine loaded");
done:
    hipdnnDestroy(h);
    return NULL;
}

static void test_first_handles_created_at_once(void) {
    pthread_t t[THREADS];
    report r[THREADS];
    memset(r, 0, sizeof(r));
    pthread_barrier_init(&g_start, NULL, THREADS);
    for (int i = 0; i < THREADS; ++i) pthread_create(&t[i], NULL, create_handle, &r[i]);
    for (int i = 0; i < THREADS; ++i) pthread_join(t[i], NULL);
    pthread_barrier_destroy(&g_start);
    check_reports(r, THREADS, "concurrent first hipdnnCreate");
}

/* ---- plans on distinct handles -------------------------------------------------------- */

static void* own_handle_own_plan(void* p) {
    report* r = p;
    hipdnnHandle_t h = NULL;
    hipdnnBackendDescriptor_t plan = NULL;
    TRY(r, hipdnnCreate(&h));
    build_plan(h, r, NULL, &plan);
    for (int k = 0; k < 2 && plan && r->st == HIPDNN_STATUS_SUCCESS; ++k) run(h, plan, r);
done:
    hipdnnBackendDestroyDescriptor(plan);
    hipdnnDestroy(h);
    return NULL;
}

static void test_plans_built_and_run_on_distinct_handles_at_once(void) {
    pthread_t t[THREADS];
    report r[THREADS];
    memset(r, 0, sizeof(r));
    for (int i = 0; i < THREADS; ++i) pthread_create(&t[i], NULL, own_handle_own_plan, &r[i]);
    for (int i = 0; i < THREADS; ++i) pthread_join(t[i], NULL);
    check_reports(r, THREADS, "own handle, own plan");
}

/* ---- one plan, several handles or one handle ------------------------------------------ */

typedef struct {
    report r;
    hipdnnBackendDescriptor_t plan;
    hipdnnHandle_t shared; /* NULL: the thread makes its own handle */
} shared_job;

static void* run_shared_plan(void* p) {
    shared_job* j = p;
    hipdnnHandle_t h = j->shared;
    if (!h) TRY(&j->r, hipdnnCreate(&h));
    run(h, j->plan, &j->r);
done:
    if (!j->shared) hipdnnDestroy(h);
    return NULL;
}

static void run_plan_from_threads(int share_handle, const char* what) {
    hipdnnHandle_t h = NULL;
    hipdnnBackendDescriptor_t plan = NULL;
    report br;
    memset(&br, 0, sizeof(br));
    REQUIRE_OK(hipdnnCreate(&h));
    build_plan(h, &br, NULL, &plan);
    check_reports(&br, 1, "building the shared plan");
    if (plan) {
        pthread_t t[THREADS];
        shared_job j[THREADS];
        memset(j, 0, sizeof(j));
        for (int i = 0; i < THREADS; ++i) {
            j[i].plan = plan;
            j[i].shared = share_handle ? h : NULL;
            pthread_create(&t[i], NULL, run_shared_plan, &j[i]);
        }
        for (int i = 0; i < THREADS; ++i) pthread_join(t[i], NULL);
        for (int i = 0; i < THREADS; ++i) check_reports(&j[i].r, 1, what);
    }
    CHECK_OK(hipdnnBackendDestroyDescriptor(plan));
    CHECK_OK(hipdnnDestroy(h));
}

static void test_one_plan_through_several_handles_at_once(void) {
    run_plan_from_threads(0, "one plan, a handle per thread");
}

static void test_one_handle_from_several_threads_is_serialized(void) {
    run_plan_from_threads(1, "one plan, one handle");
}

/* ---- deserialization and thread-local errors -------------------------------------------- */

typedef struct {
    report r;
    const uint8_t* bytes;
    size_t size;
    int index;
} bytes_job;

static void* deserialize_and_fail(void* p) {
    bytes_job* j = p;
    for (int k = 0; k < 20 && j->r.st == HIPDNN_STATUS_SUCCESS; ++k) {
        hipdnnBackendDescriptor_t g = NULL;
        int64_t n = 0;
        char text[64];
        TRY(&j->r, hipdnnBackendCreateAndDeserializeGraph_ext(&g, j->bytes, j->size));
        hipdnnStatus_t st = hipdnnBackendGetAttribute(
            g, HIPDNN_ATTR_OPERATIONGRAPH_DESCRIPTION_EXT, HIPDNN_TYPE_CHAR, sizeof(text), &n, text);
        hipdnnBackendDestroyDescriptor(g);
        TRY(&j->r, st);
        /* a failure of this thread's own, whose message no other thread may overwrite */
        int64_t bad = -(int64_t)j->index - 1;
        hipdnnBackendDescriptor_t t = NULL;
        TRY(&j->r, hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_TENSOR_DESCRIPTOR, &t));
        st = hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_DIMENSIONS, HIPDNN_TYPE_INT64, 1, &bad);
        char want[64], got[512];
        snprintf(want, sizeof(want), "dim 0 is %lld", (long long)bad);
        hipdnnGetLastErrorString(got, sizeof(got));
        hipdnnBackendDestroyDescriptor(t);
        if (st != HIPDNN_STATUS_BAD_PARAM || !strstr(got, want)) {
            j->r.st = HIPDNN_STATUS_INTERNAL_ERROR;
            snprintf(j->r.what, sizeof(j->r.what), "own last error");
            snprintf(j->r.msg, sizeof(j->r.msg), "wanted '%s' in '%.300s'", want, got);
        }
    }
done:
    return NULL;
}

static void test_deserialize_and_last_errors_from_several_threads(void) {
    hipdnnHandle_t h = NULL;
    hipdnnBackendDescriptor_t graph = NULL, plan = NULL;
    report br;
    memset(&br, 0, sizeof(br));
    REQUIRE_OK(hipdnnCreate(&h));
    build_plan(h, &br, &graph, &plan);
    check_reports(&br, 1, "building the graph");
    size_t size = 0;
    uint8_t* bytes = NULL;
    if (graph && CHECK_OK(hipdnnBackendGetSerializedBinaryGraph_ext(graph, 0, &size, NULL)) &&
        (bytes = malloc(size)) &&
        CHECK_OK(hipdnnBackendGetSerializedBinaryGraph_ext(graph, size, &size, bytes))) {
        pthread_t t[THREADS];
        bytes_job j[THREADS];
        memset(j, 0, sizeof(j));
        for (int i = 0; i < THREADS; ++i) {
            j[i].bytes = bytes;
            j[i].size = size;
            j[i].index = i;
            pthread_create(&t[i], NULL, deserialize_and_fail, &j[i]);
        }
        for (int i = 0; i < THREADS; ++i) pthread_join(t[i], NULL);
        for (int i = 0; i < THREADS; ++i) check_reports(&j[i].r, 1, "deserialize + own error");
    }
    free(bytes);
    CHECK_OK(hipdnnBackendDestroyDescriptor(plan));
    CHECK_OK(hipdnnBackendDestroyDescriptor(graph));
    CHECK_OK(hipdnnDestroy(h));
}

int main(void) {
    unsetenv("HIPDNN_PLUGIN_DIR");    /* the default folder: the shipped engines */
    setenv("HIPDNN_CPU_THREADS", "4", 1); /* the engine's workers too, even on 2 cores */
    setenv("HIPDNN_LOG_LEVEL", "off", 1);
    make_data();
    RUN_TEST(test_first_handles_created_at_once); /* first: nothing loaded yet */
    RUN_TEST(test_plans_built_and_run_on_distinct_handles_at_once);
    RUN_TEST(test_one_plan_through_several_handles_at_once);
    RUN_TEST(test_one_handle_from_several_threads_is_serialized);
    RUN_TEST(test_deserialize_and_last_errors_from_several_threads);
    return check_finish();
}
