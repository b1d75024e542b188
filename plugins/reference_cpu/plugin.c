/* The plugin ABI entry points (1.0 and 1.1) of the CPU reference engine: identity, the
 * handle, engine details, applicability, workspace sizes and execution contexts. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "reference_cpu.h"

struct hipdnnEnginePluginHandle {
    hipdnnStream_t stream; /* kept for the ABI; host execution is synchronous */
    char reason[REF_MSG_LEN]; /* GetNotApplicableReason's answer, valid until the next call */
};

/* The one engine's details: static, so that ABI 1.1 queries need no handle. */
static const hipdnnPluginEngineDetails_t k_details = {
    .struct_size = (uint32_t)sizeof(hipdnnPluginEngineDetails_t),
    .engine_id = 0, /* filled by engine_details() */
    .name = REF_ENGINE_NAME,
    .memory_space = HIPDNN_MEMORY_HOST,
    .priority = 0,
    .flags = HIPDNN_ENGINE_FLAG_FALLBACK | HIPDNN_ENGINE_FLAG_DETERMINISTIC,
    .num_knobs = 0,
    .knobs = NULL,
    .notes = "CPU reference: every op and layout, computed in float64 and rounded once to "
             "each tensor's data type; exact, deterministic",
};

struct hipdnnEnginePluginExecutionContext {
    ref_plan* plan;
    /* GetKernelInfo's answer: a fused pointwise run is one pass, every other node its own */
    uint32_t num_kernels;
    hipdnnPluginKernelInfo_t* kernels;
    uint32_t* kernel_nodes;
    char (*kernel_detail)[48];
};

static uint64_t engine_id(void) { return hipdnnSdkFnv1a64(REF_ENGINE_NAME); }

static hipdnnPluginStatus_t fail(hipdnnPluginStatus_t st, const char* what) {
    return hipdnnSdkPluginFail(st, REF_ENGINE_NAME ": %s", what);
}

HIPDNN_SDK_PLUGIN_BASE(REF_ENGINE_NAME, REF_PLUGIN_VERSION, HIPDNN_PLUGIN_API_MAJOR,
                       HIPDNN_PLUGIN_API_MINOR)

/* ---- handle and engine details ---------------------------------------------------- */

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetAllEngineIds(uint64_t* ids,
                                                                            uint32_t max,
                                                                            uint32_t* num) {
    if (!num) return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "GetAllEngineIds: NULL count");
    *num = 1;
    if (ids && max >= 1) ids[0] = engine_id();
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t
hipdnnEnginePluginCreate(hipdnnEnginePluginHandle_t* handle) {
    if (!handle) return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "Create: NULL handle output");
    struct hipdnnEnginePluginHandle* h = calloc(1, sizeof(*h));
    if (!h) return fail(HIPDNN_PLUGIN_STATUS_ALLOC_FAILED, "Create: out of memory");
    *handle = h;
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

HIPDNN_SDK_PLUGIN_HANDLE_BASE(REF_ENGINE_NAME)

static hipdnnPluginEngineDetails_t g_details; /* k_details with its id */

static void fill_details(void) {
    g_details = k_details;
    g_details.engine_id = engine_id();
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetEngineDetails(
    hipdnnEnginePluginHandle_t handle, uint64_t id, const hipdnnPluginEngineDetails_t** details) {
    (void)handle; /* ABI 1.1: answered without one */
    if (!details) return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "GetEngineDetails: NULL output");
    hipdnnPluginStatus_t st = hipdnnSdkPluginCheckEngine(REF_ENGINE_NAME, id, "GetEngineDetails");
    if (st != HIPDNN_PLUGIN_STATUS_SUCCESS) return st;
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, fill_details);
    *details = &g_details;
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginDestroyEngineDetails(
    hipdnnEnginePluginHandle_t handle, const hipdnnPluginEngineDetails_t* details) {
    (void)handle;
    if (details && details != &g_details)
        return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM,
                    "DestroyEngineDetails: details not given out by this handle");
    return HIPDNN_PLUGIN_STATUS_SUCCESS; /* owned by the handle */
}

/* ---- graphs and configs ------------------------------------------------------------- */

/* Decodes config + graph and proves the graph runnable; NULL with the error set if not. */
static hipdnnSdkGraph* prepare(hipdnnEnginePluginHandle_t handle, const uint8_t* cfg_bytes,
                               size_t cfg_size, const uint8_t* graph, size_t graph_size,
                               const char* fn, hipdnnPluginStatus_t* st) {
    *st = HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    if (!handle) {
        ref_set_error(REF_ENGINE_NAME ": %s: NULL handle", fn);
        return NULL;
    }
    if (hipdnnSdkPluginCheckConfig(REF_ENGINE_NAME, cfg_bytes, cfg_size, fn)) return NULL;
    hipdnnSdkGraph* g = hipdnnSdkPluginDecodeGraph(REF_ENGINE_NAME, graph, graph_size, fn);
    if (!g) return NULL;
    char err[REF_MSG_LEN];
    if (!ref_graph_supported(g, err, sizeof(err))) {
        ref_set_error("%s", err);
        hipdnnSdkGraphFree(g);
        *st = HIPDNN_PLUGIN_STATUS_NOT_SUPPORTED;
        return NULL;
    }
    *st = HIPDNN_PLUGIN_STATUS_SUCCESS;
    return g;
}

/* ref_graph_supported as the SDK's entry-point helpers ask it (every handle alike). */
static bool supported(void* ctx, const hipdnnSdkGraph* g, char* why, size_t len) {
    (void)ctx;
    return ref_graph_supported(g, why, len);
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetApplicableEngineIds(
    hipdnnEnginePluginHandle_t handle, const uint8_t* graph, size_t graph_size, uint64_t* ids,
    uint32_t max, uint32_t* num) {
    if (!handle || !num)
        return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "GetApplicableEngineIds: NULL handle or count");
    *num = 0;
    bool ok = false;
    hipdnnPluginStatus_t st = hipdnnSdkPluginApplicable(REF_ENGINE_NAME, graph, graph_size,
                                                        supported, NULL, &ok);
    if (st != HIPDNN_PLUGIN_STATUS_SUCCESS || !ok) return st; /* declining is not an error */
    if (!ids) {
        *num = 1; /* count query */
    } else if (max >= 1) {
        ids[0] = engine_id();
        *num = 1;
    }
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetNotApplicableReason(
    hipdnnEnginePluginHandle_t handle, uint64_t id, const uint8_t* graph, size_t graph_size,
    const char** reason) {
    if (!handle || !reason)
        return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM,
                    "GetNotApplicableReason: NULL handle or output");
    hipdnnPluginStatus_t st =
        hipdnnSdkPluginCheckEngine(REF_ENGINE_NAME, id, "GetNotApplicableReason");
    if (st != HIPDNN_PLUGIN_STATUS_SUCCESS) return st;
    hipdnnSdkPluginReason(REF_ENGINE_NAME, graph, graph_size, supported, NULL, handle->reason,
                          sizeof(handle->reason));
    *reason = handle->reason;
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetWorkspaceSize(
    hipdnnEnginePluginHandle_t handle, const uint8_t* engine_config, size_t config_size,
    const uint8_t* graph, size_t graph_size, size_t* workspace_size) {
    if (!workspace_size)
        return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "GetWorkspaceSize: NULL output");
    hipdnnPluginStatus_t st;
    hipdnnSdkGraph* g = prepare(handle, engine_config, config_size, graph, graph_size,
                                "GetWorkspaceSize", &st);
    if (!g) return st;
    *workspace_size = ref_workspace_size(g);
    hipdnnSdkGraphFree(g);
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

/* ---- execution contexts ------------------------------------------------------------- */

static void destroy_context(hipdnnEnginePluginExecutionContext_t c) {
    ref_plan_destroy(c->plan);
    free(c->kernels);
    free(c->kernel_nodes);
    free(c->kernel_detail);
    free(c);
}

/* The kernels the plan runs, in the executor's order (ref_plan_run): a fused pointwise run
 * is one pass over blocks of its output, every other node is one kernel of its own. */
static bool describe_kernels(hipdnnEnginePluginExecutionContext_t c) {
    const ref_plan* p = c->plan;
    const int32_t nn = p->graph->num_nodes;
    uint32_t n = 0;
    for (int32_t i = 0, r = 0; i < nn; ++n)
        i += r < p->num_runs && p->runs[r].first == i ? p->runs[r++].count : 1;
    c->kernels = calloc(n ? n : 1, sizeof(*c->kernels));
    c->kernel_nodes = malloc((size_t)(nn ? nn : 1) * sizeof(uint32_t));
    c->kernel_detail = calloc(n ? n : 1, sizeof(*c->kernel_detail));
    if (!c->kernels || !c->kernel_nodes || !c->kernel_detail) return false;
    c->num_kernels = n;
    int32_t i = 0, r = 0;
    for (uint32_t k = 0; k < n; ++k) {
        hipdnnPluginKernelInfo_t* e = &c->kernels[k];
        const bool run = r < p->num_runs && p->runs[r].first == i;
        const int32_t count = run ? p->runs[r++].count : 1;
        const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(p->graph->nodes[i].kind);
        e->struct_size = (uint32_t)sizeof(*e);
        e->name = run ? "pointwise" : info ? info->name : "unknown op";
        if (run) {
            hipdnnSdkFormat(c->kernel_detail[k], sizeof(c->kernel_detail[k]),
                            "%d pointwise nodes fused: one pass over blocks", (int)count);
            e->detail = c->kernel_detail[k];
        }
        e->num_nodes = (uint32_t)count;
        e->nodes = &c->kernel_nodes[i];
        for (int32_t j = 0; j < count; ++j) c->kernel_nodes[i + j] = (uint32_t)(i + j);
        i += count;
    }
    return true;
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginCreateExecutionContext(
    hipdnnEnginePluginHandle_t handle, const uint8_t* engine_config, size_t config_size,
    const uint8_t* graph, size_t graph_size, hipdnnEnginePluginExecutionContext_t* ctx) {
    if (!ctx) return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "CreateExecutionContext: NULL output");
    *ctx = NULL;
    hipdnnPluginStatus_t st;
    hipdnnSdkGraph* g = prepare(handle, engine_config, config_size, graph, graph_size,
                                "CreateExecutionContext", &st);
    if (!g) return st;
    struct hipdnnEnginePluginExecutionContext* c = calloc(1, sizeof(*c));
    if (!c) {
        hipdnnSdkGraphFree(g);
        return fail(HIPDNN_PLUGIN_STATUS_ALLOC_FAILED, "CreateExecutionContext: out of memory");
    }
    st = ref_plan_create(g, &c->plan); /* owns g from here on */
    if (st != HIPDNN_PLUGIN_STATUS_SUCCESS) {
        free(c);
        return st;
    }
    if (!describe_kernels(c)) {
        destroy_context(c);
        return fail(HIPDNN_PLUGIN_STATUS_ALLOC_FAILED, "CreateExecutionContext: out of memory");
    }
    ref_log(HIPDNN_LOG_INFO, REF_ENGINE_NAME ": execution context for graph '%s': %d node(s), "
            "%d fused pointwise run(s), workspace %zu bytes", c->plan->graph->name,
            c->plan->graph->num_nodes, (int)c->plan->num_runs, c->plan->workspace_size);
    *ctx = c;
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

HIPDNN_SDK_PLUGIN_CONTEXT_BASE(REF_ENGINE_NAME, destroy_context)

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginExecuteOpGraph(
    hipdnnEnginePluginHandle_t handle, hipdnnEnginePluginExecutionContext_t ctx,
    void* workspace, const hipdnnPluginDeviceBuffer_t* buffers, uint32_t num_buffers) {
    if (!handle || !ctx || !ctx->plan)
        return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "ExecuteOpGraph: NULL handle or context");
    if (num_buffers > 0 && !buffers)
        return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "ExecuteOpGraph: NULL buffers with a count");
    /* ABI 1.0: {uid, ptr}, host memory. */
    hipdnnPluginTensorBuffer_t stack[32] = {{0, NULL, HIPDNN_MEMORY_HOST}};
    hipdnnPluginTensorBuffer_t* b = num_buffers <= 32 ? stack : malloc(num_buffers * sizeof(*b));
    if (!b) return fail(HIPDNN_PLUGIN_STATUS_ALLOC_FAILED, "ExecuteOpGraph: out of memory");
    for (uint32_t i = 0; i < num_buffers; ++i) {
        b[i].uid = buffers[i].uid;
        b[i].ptr = buffers[i].ptr;
        b[i].memory_space = HIPDNN_MEMORY_HOST;
    }
    hipdnnPluginStatus_t st = ref_plan_run(ctx->plan, workspace, b, num_buffers);
    if (b != stack) free(b);
    return st;
}

/* ---- ABI 1.1 ---------------------------------------------------------------------------- */

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginCreateForDevice(
    hipdnnEnginePluginHandle_t* handle, const hipdnnPluginHandleInfo_t* info) {
    (void)info; /* a host engine: any device will do */
    return hipdnnEnginePluginCreate(handle);
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetWorkspaceSizeFromExecutionContext(
    hipdnnEnginePluginHandle_t handle, hipdnnEnginePluginExecutionContext_t ctx,
    size_t* workspace_size) {
    if (!handle || !ctx || !ctx->plan || !workspace_size)
        return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM,
                    "GetWorkspaceSizeFromExecutionContext: NULL handle, context or output");
    *workspace_size = ctx->plan->workspace_size;
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginEnqueueOpGraph(
    hipdnnEnginePluginHandle_t handle, hipdnnEnginePluginExecutionContext_t ctx,
    void* workspace, size_t workspace_size, const hipdnnPluginTensorBuffer_t* buffers,
    uint32_t num_buffers) {
    if (!handle || !ctx || !ctx->plan)
        return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "EnqueueOpGraph: NULL handle or context");
    if (num_buffers > 0 && !buffers)
        return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "EnqueueOpGraph: NULL buffers with a count");
    if (workspace_size < ctx->plan->workspace_size) {
        ref_set_error(REF_ENGINE_NAME ": EnqueueOpGraph: workspace of %zu bytes, the plan needs "
                      "%zu", workspace_size, ctx->plan->workspace_size);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    for (uint32_t i = 0; i < num_buffers; ++i)
        if (buffers[i].memory_space == HIPDNN_MEMORY_DEVICE) {
            ref_set_error(REF_ENGINE_NAME ": tensor uid %lld is in device memory; this engine "
                          "runs on the host", (long long)buffers[i].uid);
            return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
        }
    /* Host execution: finished on return, which any stream order allows. */
    return ref_plan_run(ctx->plan, workspace, buffers, num_buffers);
}
