/* Two host engines, "tune_a" and "tune_b", that run a graph of one float32 relu on packed
 * tensors, at speeds a test chooses: the autotuning tests (tests/test_autotune.py) know in
 * advance which config is fastest.  Each execute sleeps
 *     2 ms * |knob 1000 - 1|  (+ 6 ms when the engine is named in $HIPDNN_TUNE_SLOW),
 * so knob value 1 (not the default, 0) is an engine's fastest config, and the engine named
 * slow loses to the other.  tune_a has the higher priority: heuristics rank it first.
 * Two more knobs change nothing but say which of their values are valid, as the hip
 * engine's tile width does: "pad" takes 0 to 12 in steps of 4, "tile" only 0, 64, 128 or
 * 256 of 0 to 256; the engine refuses other values when a plan is built, and a tile over
 * four times the tensor's element count (a plan the sweep tries that does not build). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hipdnn/hipdnn_plugin.h"
#include "hipdnn/hipdnn_sdk.h"
#include "hipdnn/hipdnn_sdk_plugin.h"

#define NAME "tune_engine"
#define KNOB_DELAY 1000
#define KNOB_PAD 1001
#define KNOB_TILE 1002
#define NUM_KNOBS 3

static const char* const k_engines[2] = {"tune_a", "tune_b"};
static const hipdnnPluginKnobInfo_t k_knobs[NUM_KNOBS] = {
    {KNOB_DELAY, "delay", 0, 2, 0}, {KNOB_PAD, "pad", 0, 12, 0}, {KNOB_TILE, "tile", 0, 256, 0}};
static const int64_t k_tiles[] = {0, 64, 128, 256};
static const hipdnnPluginKnobValues_t k_knob_values[NUM_KNOBS] = {
    {1, 0, NULL}, {4, 0, NULL}, {64, 4, k_tiles}};

struct hipdnnEnginePluginHandle {
    hipdnnStream_t stream;
};

struct hipdnnEnginePluginExecutionContext {
    int engine;
    int64_t delay;
    int64_t x, y, count; /* uids and element count */
};

HIPDNN_SDK_PLUGIN_BASE(NAME, "1.0.0-test", HIPDNN_PLUGIN_API_MAJOR, 0)
HIPDNN_SDK_PLUGIN_HANDLE_BASE(NAME)

static int engine_of(uint64_t id) {
    for (int i = 0; i < 2; ++i)
        if (id == hipdnnSdkFnv1a64(k_engines[i])) return i;
    return -1;
}

/* One float32 relu node whose x and y are packed and of the same dims. */
static bool supported(void* ctx, const hipdnnSdkGraph* g, char* why, size_t len) {
    (void)ctx;
    if (g->num_nodes != 1 || g->nodes[0].kind != HIPDNN_OP_POINTWISE ||
        hipdnnSdkNodeMode(&g->nodes[0]) != HIPDNN_POINTWISE_RELU_FWD || g->num_tensors != 2)
        return hipdnnSdkDecline(why, len, NULL, "takes one relu node only");
    const hipdnnSdkTensor *a = &g->tensors[0], *b = &g->tensors[1];
    if (a->data_type != HIPDNN_DATA_FLOAT || b->data_type != HIPDNN_DATA_FLOAT || a->ndim != b->ndim)
        return hipdnnSdkDecline(why, len, NULL, "takes float32 tensors of one shape only");
    int64_t expect = 1;
    for (int32_t i = a->ndim - 1; i >= 0; --i) {
        if (a->dims[i] != b->dims[i] || (a->dims[i] > 1 && (a->strides[i] != expect ||
                                                            b->strides[i] != expect)))
            return hipdnnSdkDecline(why, len, NULL, "takes packed tensors of one shape only");
        expect *= a->dims[i];
    }
    return true;
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetAllEngineIds(uint64_t* ids,
                                                                            uint32_t max,
                                                                            uint32_t* num) {
    if (!num) return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, NAME ": num is NULL");
    *num = 2;
    for (uint32_t i = 0; ids && i < 2 && i < max; ++i) ids[i] = hipdnnSdkFnv1a64(k_engines[i]);
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginCreate(hipdnnEnginePluginHandle_t* h) {
    if (!h) return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, NAME ": NULL handle");
    *h = calloc(1, sizeof(**h));
    return *h ? HIPDNN_PLUGIN_STATUS_SUCCESS : HIPDNN_PLUGIN_STATUS_ALLOC_FAILED;
}

/* Whether $HIPDNN_TUNE_DECLINE names engine e: it then declines every graph (a later
 * process in which a tuned engine no longer applies). */
static bool told_to_decline(int e) {
    const char* d = getenv("HIPDNN_TUNE_DECLINE");
    return d && strstr(d, k_engines[e]);
}

/* The applicability queries answered: tests/test_warm_build.py sees which builds asked. */
static atomic_long g_queries;
HIPDNN_PLUGIN_EXPORT long tuneEngineQueries(void) { return atomic_load(&g_queries); }

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetApplicableEngineIds(
    hipdnnEnginePluginHandle_t handle, const uint8_t* graph, size_t size, uint64_t* ids,
    uint32_t max, uint32_t* num) {
    if (!handle || !num) return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, NAME ": NULL");
    atomic_fetch_add(&g_queries, 1);
    bool ok = false;
    hipdnnPluginStatus_t st = hipdnnSdkPluginApplicable(k_engines[0], graph, size, supported, NULL, &ok);
    *num = 0;
    for (uint32_t i = 0; !st && ok && i < 2 && i < max; ++i)
        if (!told_to_decline((int)i)) ids[(*num)++] = hipdnnSdkFnv1a64(k_engines[i]);
    return st;
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetNotApplicableReason(
    hipdnnEnginePluginHandle_t handle, uint64_t id, const uint8_t* graph, size_t size,
    const char** reason) {
    static _Thread_local char buf[256];
    const int e = engine_of(id);
    if (!handle || !reason || e < 0)
        return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, NAME ": bad argument");
    if (told_to_decline(e))
        snprintf(buf, sizeof(buf), "%s: declined ($HIPDNN_TUNE_DECLINE)", k_engines[e]);
    else
        hipdnnSdkPluginReason(k_engines[e], graph, size, supported, NULL, buf, sizeof(buf));
    *reason = buf;
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetEngineDetails(
    hipdnnEnginePluginHandle_t handle, uint64_t id, const hipdnnPluginEngineDetails_t** details) {
    static hipdnnPluginEngineDetails_t d[2];
    const int e = engine_of(id);
    if (!handle || !details || e < 0)
        return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, NAME ": bad argument");
    d[e] = (hipdnnPluginEngineDetails_t){.struct_size = sizeof(d[e]), .engine_id = id,
                                         .name = k_engines[e], .memory_space = HIPDNN_MEMORY_HOST,
                                         .priority = e == 0 ? 50 : 40, .flags = 0,
                                         .num_knobs = NUM_KNOBS, .knobs = k_knobs,
                                         .notes = "test engine: a relu at a chosen speed",
                                         .knob_values = k_knob_values};
    *details = &d[e];
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginDestroyEngineDetails(
    hipdnnEnginePluginHandle_t handle, const hipdnnPluginEngineDetails_t* details) {
    (void)handle, (void)details; /* static */
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetWorkspaceSize(
    hipdnnEnginePluginHandle_t handle, const uint8_t* config, size_t config_size,
    const uint8_t* graph, size_t graph_size, size_t* workspace) {
    (void)handle, (void)config, (void)config_size, (void)graph, (void)graph_size;
    if (workspace) *workspace = 0;
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

static void destroy_ctx(hipdnnEnginePluginExecutionContext_t ctx) { free(ctx); }

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginCreateExecutionContext(
    hipdnnEnginePluginHandle_t handle, const uint8_t* config, size_t config_size,
    const uint8_t* graph, size_t graph_size, hipdnnEnginePluginExecutionContext_t* out) {
    hipdnnSdkEngineConfig* cfg = out ? hipdnnSdkEngineConfigDecode(config, config_size, NULL, 0) : NULL;
    if (!handle || !cfg) return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, NAME ": bad config");
    const int e = engine_of(cfg->engine_id);
    hipdnnSdkEngineConfigFree(cfg);
    int64_t v[NUM_KNOBS] = {0};
    hipdnnPluginStatus_t st = e < 0 ? HIPDNN_PLUGIN_STATUS_BAD_PARAM
                                    : hipdnnSdkPluginConfigKnobs(k_engines[e], config, config_size,
                                                                 "CreateExecutionContext", k_knobs, NUM_KNOBS, v);
    if (st) return st;
    if (v[1] % 4 != 0 || (v[2] != 0 && v[2] != 64 && v[2] != 128 && v[2] != 256))
        return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, NAME ": pad %lld or tile %lld "
                                   "is not one of the engine's values", (long long)v[1], (long long)v[2]);
    const int64_t delay = v[0];
    hipdnnSdkGraph* g = hipdnnSdkPluginDecodeGraph(NAME, graph, graph_size, "CreateExecutionContext");
    if (!g) return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    char why[200];
    *out = supported(NULL, g, why, sizeof(why)) ? calloc(1, sizeof(**out)) : NULL;
    if (*out) {
        **out = (struct hipdnnEnginePluginExecutionContext){
            e, delay, hipdnnSdkPointwiseOperand(&g->nodes[0], 0), hipdnnSdkPointwiseOutput(&g->nodes[0]), 1};
        const hipdnnSdkTensor* x = g->tensors[0].uid == (*out)->x ? &g->tensors[0] : &g->tensors[1];
        for (int32_t i = 0; i < x->ndim; ++i) (*out)->count *= x->dims[i];
    }
    hipdnnSdkGraphFree(g);
    if (*out && v[2] > 4 * (*out)->count) {
        const int64_t count = (*out)->count;
        destroy_ctx(*out);
        *out = NULL;
        return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_NOT_SUPPORTED, NAME ": tile %lld is over "
                                   "four times the tensor's %lld elements", (long long)v[2], (long long)count);
    }
    return *out ? HIPDNN_PLUGIN_STATUS_SUCCESS
                : hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, NAME ": graph declined");
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginDestroyExecutionContext(
    hipdnnEnginePluginHandle_t handle, hipdnnEnginePluginExecutionContext_t ctx) {
    (void)handle;
    destroy_ctx(ctx);
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

static void sleep_ms(int64_t ms) {
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (ms > 0 && nanosleep(&t, &t) != 0) {
    }
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginExecuteOpGraph(
    hipdnnEnginePluginHandle_t handle, hipdnnEnginePluginExecutionContext_t ctx, void* workspace,
    const hipdnnPluginDeviceBuffer_t* buffers, uint32_t num_buffers) {
    (void)workspace;
    if (!handle || !ctx || !buffers) return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, NAME ": NULL");
    const float* x = NULL;
    float* y = NULL;
    for (uint32_t i = 0; i < num_buffers; ++i) {
        if (buffers[i].uid == ctx->x) x = buffers[i].ptr;
        if (buffers[i].uid == ctx->y) y = buffers[i].ptr;
    }
    if (!x || !y) return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, NAME ": x or y missing");
    const char* slow = getenv("HIPDNN_TUNE_SLOW");
    sleep_ms(2 * llabs(ctx->delay - 1) + (slow && strstr(slow, k_engines[ctx->engine]) ? 6 : 0));
    for (int64_t i = 0; i < ctx->count; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}
