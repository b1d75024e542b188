/* host_overhead_exec.c — the host cost of hipdnnBackendExecute from C, for
 * benchmarks/host_overhead_bench.py (which compiles and runs it).
 *
 *   host_overhead_exec ENGINE DEVICE N [KNOB=VALUE]
 *
 * Builds y = relu(x) over float32 [1, N] on engine ENGINE (knob choices optional), puts x
 * and y in device memory (DEVICE = 1, hipdnnDeviceMalloc_ext) or host memory (0), and
 * times, per call, the median of 7 samples of 20000 calls (after 2000 warm-up calls) of
 *   execute: hipdnnBackendExecute on one variant pack made once;
 *   pack+execute: a VARIANT_PACK made, set, finalized, run and destroyed each call, as a
 *                 caller whose pointers change does (cuDNN frontend's execute).
 * A device engine's launches are asynchronous: each sample ends with a stream
 * synchronize (DEVICE = 1), so that queued kernels are counted in the total, not hidden.
 * Prints "execute_us <v>", "pack_execute_us <v>" and "engine <name>"; exit 1 on an error,
 * with hipdnn's message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hipdnn/hipdnn.h"

#define SAMPLES 7
#define CALLS 20000

static int fail(const char* what, hipdnnStatus_t s) {
    char msg[1024];
    hipdnnGetLastErrorString(msg, sizeof(msg));
    fprintf(stderr, "%s: %s: %s\n", what, hipdnnGetErrorString(s), msg);
    return 1;
}

#define TRY(what, call)                                                                       \
    do {                                                                                      \
        hipdnnStatus_t s_ = (call);                                                           \
        if (s_ != HIPDNN_STATUS_SUCCESS) return fail(what, s_);                               \
    } while (0)

typedef hipdnnBackendDescriptor_t desc_t;

static int set_desc(desc_t d, hipdnnBackendAttributeName_t a, desc_t v) {
    return hipdnnBackendSetAttribute(d, a, HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &v);
}

static int tensor(desc_t* t, int64_t uid, const char* name, int64_t n) {
    int64_t dims[2] = {1, n}, strides[2] = {n, 1};
    hipdnnDataType_t dt = HIPDNN_DATA_FLOAT;
    TRY("tensor", hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_TENSOR_DESCRIPTOR, t));
    TRY("tensor uid", hipdnnBackendSetAttribute(*t, HIPDNN_ATTR_TENSOR_UNIQUE_ID,
                                                HIPDNN_TYPE_INT64, 1, &uid));
    TRY("tensor name", hipdnnBackendSetAttribute(*t, HIPDNN_ATTR_TENSOR_NAME_EXT, HIPDNN_TYPE_CHAR,
                                                 (int64_t)strlen(name), name));
    TRY("tensor dtype", hipdnnBackendSetAttribute(*t, HIPDNN_ATTR_TENSOR_DATA_TYPE,
                                                  HIPDNN_TYPE_DATA_TYPE, 1, &dt));
    TRY("tensor dims", hipdnnBackendSetAttribute(*t, HIPDNN_ATTR_TENSOR_DIMENSIONS,
                                                 HIPDNN_TYPE_INT64, 2, dims));
    TRY("tensor strides", hipdnnBackendSetAttribute(*t, HIPDNN_ATTR_TENSOR_STRIDES,
                                                    HIPDNN_TYPE_INT64, 2, strides));
    TRY("tensor finalize", hipdnnBackendFinalize(*t));
    return 0;
}

/* The finalized graph y = relu(x). */
static int relu_graph(hipdnnHandle_t h, int64_t n, desc_t* graph) {
    desc_t x, y, op;
    hipdnnPointwiseMode_t mode = HIPDNN_POINTWISE_RELU_FWD;
    hipdnnDataType_t ct = HIPDNN_DATA_FLOAT;
    if (tensor(&x, 1, "x", n) || tensor(&y, 2, "y", n)) return 1;
    TRY("op", hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, &op));
    TRY("op compute", hipdnnBackendSetAttribute(op, HIPDNN_ATTR_OPERATION_COMPUTE_TYPE_EXT,
                                                HIPDNN_TYPE_DATA_TYPE, 1, &ct));
    TRY("op mode", hipdnnBackendSetAttribute(op, HIPDNN_ATTR_POINTWISE_MODE,
                                             HIPDNN_TYPE_POINTWISE_MODE_EXT, 1, &mode));
    TRY("op x", set_desc(op, HIPDNN_ATTR_OPERATION_POINTWISE_XDESC, x));
    TRY("op y", set_desc(op, HIPDNN_ATTR_OPERATION_POINTWISE_YDESC, y));
    TRY("op finalize", hipdnnBackendFinalize(op));
    TRY("graph", hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, graph));
    TRY("graph handle", hipdnnBackendSetAttribute(*graph, HIPDNN_ATTR_OPERATIONGRAPH_HANDLE,
                                                  HIPDNN_TYPE_HANDLE, 1, &h));
    TRY("graph ops", hipdnnBackendSetAttribute(*graph, HIPDNN_ATTR_OPERATIONGRAPH_OPS,
                                               HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op));
    TRY("graph finalize", hipdnnBackendFinalize(*graph));
    hipdnnBackendDestroyDescriptor(op);
    hipdnnBackendDestroyDescriptor(x);
    hipdnnBackendDestroyDescriptor(y);
    return 0;
}

/* The finalized plan of `graph` on the engine named `name`, with one knob choice. */
static int plan_on(hipdnnHandle_t h, desc_t graph, const char* name, const char* knob,
                   desc_t* plan) {
    int64_t count = 0, index = -1;
    TRY("engine count", hipdnnGetEngineCount_ext(&count));
    for (int64_t i = 0; i < count && index < 0; ++i) {
        hipdnnEngineInfo_ext_t info;
        TRY("engine info", hipdnnGetEngineInfo_ext(i, &info));
        if (strcmp(info.name, name) == 0) index = i;
    }
    if (index < 0) {
        fprintf(stderr, "engine '%s' is not loaded\n", name);
        return 1;
    }
    desc_t engine, cfg, choice = NULL;
    TRY("engine", hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_ENGINE_DESCRIPTOR, &engine));
    TRY("engine graph", set_desc(engine, HIPDNN_ATTR_ENGINE_OPERATION_GRAPH, graph));
    TRY("engine index", hipdnnBackendSetAttribute(engine, HIPDNN_ATTR_ENGINE_GLOBAL_INDEX,
                                                  HIPDNN_TYPE_INT64, 1, &index));
    TRY("engine finalize", hipdnnBackendFinalize(engine));
    TRY("cfg", hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg));
    TRY("cfg engine", set_desc(cfg, HIPDNN_ATTR_ENGINECFG_ENGINE, engine));
    long long id, value;
    if (knob && sscanf(knob, "%lld=%lld", &id, &value) == 2) {
        int64_t k = id, v = value;
        TRY("knob", hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, &choice));
        TRY("knob type", hipdnnBackendSetAttribute(choice, HIPDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
                                                   HIPDNN_TYPE_INT64, 1, &k));
        TRY("knob value", hipdnnBackendSetAttribute(choice, HIPDNN_ATTR_KNOB_CHOICE_KNOB_VALUE,
                                                    HIPDNN_TYPE_INT64, 1, &v));
        TRY("knob finalize", hipdnnBackendFinalize(choice));
        TRY("cfg knobs", set_desc(cfg, HIPDNN_ATTR_ENGINECFG_KNOB_CHOICES, choice));
    }
    TRY("cfg finalize", hipdnnBackendFinalize(cfg));
    TRY("plan", hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, plan));
    TRY("plan handle", hipdnnBackendSetAttribute(*plan, HIPDNN_ATTR_EXECUTION_PLAN_HANDLE,
                                                 HIPDNN_TYPE_HANDLE, 1, &h));
    TRY("plan cfg", set_desc(*plan, HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfg));
    TRY("plan finalize", hipdnnBackendFinalize(*plan));
    if (choice) hipdnnBackendDestroyDescriptor(choice);
    hipdnnBackendDestroyDescriptor(cfg);
    hipdnnBackendDestroyDescriptor(engine);
    return 0;
}

static void* g_workspace; /* the plan's, allocated once */

static int make_pack(void** ptrs, desc_t* vp) {
    static const int64_t uids[2] = {1, 2};
    void* ws = g_workspace;
    TRY("pack", hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, vp));
    TRY("pack uids", hipdnnBackendSetAttribute(*vp, HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
                                               HIPDNN_TYPE_INT64, 2, uids));
    TRY("pack ptrs", hipdnnBackendSetAttribute(*vp, HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                               HIPDNN_TYPE_VOID_PTR, 2, ptrs));
    TRY("pack ws", hipdnnBackendSetAttribute(*vp, HIPDNN_ATTR_VARIANT_PACK_WORKSPACE,
                                             HIPDNN_TYPE_VOID_PTR, 1, &ws));
    TRY("pack finalize", hipdnnBackendFinalize(*vp));
    return 0;
}

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int by_value(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

/* The median over SAMPLES of the per-call time of `calls` runs; fresh: a pack per call. */
static int time_calls(hipdnnHandle_t h, desc_t plan, void** ptrs, int fresh, int calls,
                      int stream_sync, double* us) {
    double samples[SAMPLES];
    desc_t vp = NULL;
    hipdnnStream_t stream = NULL;
    TRY("stream", hipdnnGetStream(h, &stream));
    if (!fresh && make_pack(ptrs, &vp)) return 1;
    for (int s = 0; s < SAMPLES; ++s) {
        double t0 = now_us();
        for (int i = 0; i < calls; ++i) {
            if (fresh && make_pack(ptrs, &vp)) return 1;
            TRY("execute", hipdnnBackendExecute(h, plan, vp));
            if (fresh) hipdnnBackendDestroyDescriptor(vp);
        }
        if (stream_sync) TRY("synchronize", hipdnnStreamSynchronize_ext(stream));
        samples[s] = (now_us() - t0) / calls;
    }
    if (!fresh) hipdnnBackendDestroyDescriptor(vp);
    qsort(samples, SAMPLES, sizeof(double), by_value);
    *us = samples[SAMPLES / 2];
    return 0;
}

int main(int argc, char** argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s ENGINE DEVICE(0|1) N [KNOB=VALUE]\n", argv[0]);
        return 2;
    }
    const char* name = argv[1];
    int device = atoi(argv[2]);
    int64_t n = atoll(argv[3]);
    hipdnnHandle_t h;
    desc_t graph, plan;
    TRY("hipdnnCreate", hipdnnCreate(&h));
    if (relu_graph(h, n, &graph) || plan_on(h, graph, name, argc > 4 ? argv[4] : NULL, &plan))
        return 1;
    void* ptrs[2];
    size_t bytes = (size_t)n * sizeof(float);
    for (int i = 0; i < 2; ++i) {
        if (device) TRY("device malloc", hipdnnDeviceMalloc_ext(&ptrs[i], bytes));
        else if (!(ptrs[i] = calloc((size_t)n, sizeof(float)))) return 1;
    }
    int64_t ws_size = 0, got = 0;
    TRY("workspace size", hipdnnBackendGetAttribute(plan, HIPDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                                    HIPDNN_TYPE_INT64, 1, &got, &ws_size));
    if (ws_size > 0) {
        if (device) TRY("workspace malloc", hipdnnDeviceMalloc_ext(&g_workspace, (size_t)ws_size));
        else if (!(g_workspace = calloc((size_t)ws_size, 1))) return 1;
    }
    double warm, execute_us, pack_us;
    if (time_calls(h, plan, ptrs, 0, CALLS / 10, device, &warm) ||
        time_calls(h, plan, ptrs, 0, CALLS, device, &execute_us) ||
        time_calls(h, plan, ptrs, 1, CALLS, device, &pack_us))
        return 1;
    printf("engine %s\nexecute_us %.3f\npack_execute_us %.3f\n", name, execute_us, pack_us);
    for (int i = 0; i < 2; ++i) {
        if (device) hipdnnDeviceFree_ext(ptrs[i]);
        else free(ptrs[i]);
    }
    if (device) hipdnnDeviceFree_ext(g_workspace);
    else free(g_workspace);
    hipdnnBackendDestroyDescriptor(plan);
    hipdnnBackendDestroyDescriptor(graph);
    hipdnnDestroy(h);
    return 0;
}
