/* The plugin ABI 1.1 entry points of the blaslt engine: a matmul and its cuBLASLt epilogue
 * (bias, relu, gelu_tanh, gelu_tanh with its input kept, the tanh gelu's gradient, bias
 * gradients: blaslt_epilogue.c) on NVIDIA's cuBLASLt, on device memory, on the handle's
 * stream.
 *
 * The plugin links neither the driver nor cuBLASLt: blaslt_load.c opens both when the
 * plugin is loaded and the engine declines to load, saying what it looked for, where
 * either is missing (any machine without an NVIDIA GPU).  Graphs are read by
 * blaslt_graph.c, plans made by blaslt_plan.c. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "blaslt.h"

struct hipdnnEnginePluginHandle {
    int device;
    hipdnnStream_t stream;
    bl_lt lt; /* made on `device` by library_handle, on first need */
    pthread_mutex_t made; /* over making it */
    char reason[BLASLT_MSG_LEN]; /* GetNotApplicableReason's answer, until the next call */
};

struct hipdnnEnginePluginExecutionContext {
    bl_problem problem;
    bl_plan plan;
    char graph_name[128];
    /* The descriptor is the plan's and a run sets its bias and aux pointers: one run at a
     * time between setting them and cublasLtMatmul having read them. */
    pthread_mutex_t lock;
    _Atomic(unsigned) ran; /* bit 1: aligned algorithm run once, bit 2: unaligned */
    /* GetKernelInfo's answer: one cublasLtMatmul running every node */
    uint32_t num_kernels;
    hipdnnPluginKernelInfo_t* kernels;
    hipdnnPluginKernelInfo_t kernel;
    uint32_t* nodes;
    char detail[BLASLT_MSG_LEN];
};

static hipdnnPluginStatus_t fail(hipdnnPluginStatus_t st, const char* what) {
    return hipdnnSdkPluginFail(st, BLASLT_ENGINE_NAME ": %s", what);
}

static uint64_t engine_id(void) { return hipdnnSdkFnv1a64(BLASLT_ENGINE_NAME); }

/* ABI 1.1: minor 1 whatever minor hipdnn_plugin.h grows to. */
HIPDNN_SDK_PLUGIN_BASE(BLASLT_ENGINE_NAME, BLASLT_PLUGIN_VERSION, HIPDNN_PLUGIN_API_MAJOR, 1)

/* ---- loading, engines and handles -------------------------------------------------------- */

/* Called at load: without the driver, a device or cuBLASLt the plugin declines to load
 * (NOT_SUPPORTED, logged as info by the loader) and the other engines carry on. */
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetAllEngineIds(uint64_t* ids,
                                                                            uint32_t max,
                                                                            uint32_t* num) {
    return hipdnnSdkVendorEngineIds(BLASLT_ENGINE_NAME, blaslt_load, blaslt_library, ids, max, num);
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginCreateForDevice(
    hipdnnEnginePluginHandle_t* handle, const hipdnnPluginHandleInfo_t* info) {
    if (!handle || !info)
        return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "CreateForDevice: NULL handle or info");
    *handle = NULL;
    int device = 0;
    bl_cu_context saved = NULL;
    const hipdnnPluginStatus_t entered =
        hipdnnSdkVendorEnterDevice(BLASLT_ENGINE_NAME, blaslt_load, info, &device, &saved);
    if (entered != HIPDNN_PLUGIN_STATUS_SUCCESS) return entered;
    blaslt_leave(saved);
    /* No cublasLtCreate here: library_handle makes it for the first matmul it may take. */
    struct hipdnnEnginePluginHandle* h = calloc(1, sizeof(*h));
    if (!h) return fail(HIPDNN_PLUGIN_STATUS_ALLOC_FAILED, "CreateForDevice: out of memory");
    h->device = device;
    pthread_mutex_init(&h->made, NULL);
    *handle = h;
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

/* ABI 1.0's constructor, still exported: device 0. */
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t
hipdnnEnginePluginCreate(hipdnnEnginePluginHandle_t* handle) {
    hipdnnPluginHandleInfo_t info = {(uint32_t)sizeof(info), 0};
    return hipdnnEnginePluginCreateForDevice(handle, &info);
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t
hipdnnEnginePluginDestroy(hipdnnEnginePluginHandle_t handle) {
    if (!handle) return HIPDNN_PLUGIN_STATUS_SUCCESS;
    char why[BLASLT_MSG_LEN];
    bl_cu_context saved = NULL;
    if (handle->lt && blaslt_enter(handle->device, &saved, why, sizeof(why))) {
        g_lt.destroy(handle->lt);
        blaslt_leave(saved);
    }
    pthread_mutex_destroy(&handle->made);
    free(handle);
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t
hipdnnEnginePluginSetStream(hipdnnEnginePluginHandle_t handle, hipdnnStream_t stream) {
    if (!handle) return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "SetStream: NULL handle");
    handle->stream = stream;
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

/* 0 in each: the heuristic's best algorithm, fp32 inputs multiplied in exact fp32. */
static const hipdnnPluginKnobInfo_t k_knobs[] = {
    {BLASLT_KNOB_ALGORITHM, "algorithm", 0, BLASLT_MAX_ALGOS - 1, 0},
    {BLASLT_KNOB_TF32, "tf32", 0, 1, 0},
};

static hipdnnPluginEngineDetails_t g_details = {
    .struct_size = (uint32_t)sizeof(hipdnnPluginEngineDetails_t),
    .engine_id = 0, /* filled once, when first asked */
    .name = BLASLT_ENGINE_NAME,
    .memory_space = HIPDNN_MEMORY_DEVICE,
    .priority = BLASLT_PRIORITY,
    .flags = 0,
    .num_knobs = (int32_t)(sizeof(k_knobs) / sizeof(k_knobs[0])),
    .knobs = k_knobs,
    .notes = "NVIDIA GPU: a matmul with its cuBLASLt epilogue (bias, relu, gelu_tanh and its "
             "aux, dgelu, bias gradients); fp32/fp16/bf16 storage, fp32 accumulation (TF32 "
             "only by its knob)",
};

static void fill_details(void) { g_details.engine_id = engine_id(); }

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetEngineDetails(
    hipdnnEnginePluginHandle_t handle, uint64_t id, const hipdnnPluginEngineDetails_t** details) {
    (void)handle; /* answered without one */
    if (!details) return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "GetEngineDetails: NULL output");
    hipdnnPluginStatus_t st =
        hipdnnSdkPluginCheckEngine(BLASLT_ENGINE_NAME, id, "GetEngineDetails");
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
                    "DestroyEngineDetails: details not given out by this plugin");
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

/* ---- graphs ------------------------------------------------------------------------------ */

/* The handle's cuBLASLt handle, made inside blaslt_enter for the first graph blaslt maps
 * (cublasLtCreate and cuBLASLt's first heuristic query cost ~100 ms on a GPU, which a
 * process whose plan cache or preferred engine names another engine, or that has no
 * matmul for it, never pays); NULL with `why`. */
static bl_lt library_handle(hipdnnEnginePluginHandle_t h, char* why, size_t len) {
    pthread_mutex_lock(&h->made);
    if (!h->lt) {
        const bl_status st = g_lt.create(&h->lt);
        if (st != BL_STATUS_SUCCESS) {
            char text[96];
            hipdnnSdkFormat(why, len, BLASLT_ENGINE_NAME ": cublasLtCreate on device %d: %s",
                            h->device, blaslt_status_text(st, text, sizeof(text)));
            h->lt = NULL;
        }
    }
    bl_lt out = h->lt;
    pthread_mutex_unlock(&h->made);
    return out;
}

/* The graph as a problem, planned on the handle's device; false with the reason. */
static bool plan_on(hipdnnEnginePluginHandle_t h, const hipdnnSdkGraph* g, int index, bool tf32,
                    bl_problem* p, bl_plan* plan, char* why, size_t len) {
    memset(plan, 0, sizeof(*plan));
    if (!blaslt_problem(g, p, why, len)) return false;
    bl_cu_context saved = NULL;
    if (!blaslt_enter(h->device, &saved, why, len)) return false;
    const bl_lt lt = library_handle(h, why, len);
    const bool ok = lt && blaslt_plan_make(lt, p, index, tf32, plan, why, len);
    blaslt_leave(saved);
    return ok;
}

/* Whether the engine runs g: the graph is a matmul it maps and the heuristic has an
 * algorithm for it. */
static bool runs(void* handle, const hipdnnSdkGraph* g, char* why, size_t len) {
    hipdnnEnginePluginHandle_t h = handle;
    bl_problem p;
    bl_plan plan;
    const bool ok = plan_on(h, g, 0, false, &p, &plan, why, len);
    blaslt_plan_free(&plan);
    return ok;
}

HIPDNN_SDK_PLUGIN_APPLICABILITY_BASE(BLASLT_ENGINE_NAME, runs)

static void destroy_context(hipdnnEnginePluginExecutionContext_t c) {
    blaslt_plan_free(&c->plan); /* host objects: no device needed */
    pthread_mutex_destroy(&c->lock);
    free(c->nodes);
    free(c);
}

/* The context's one kernel, running every node of the graph. */
static bool describe(hipdnnEnginePluginExecutionContext_t c, int32_t num_nodes, int index) {
    c->nodes = malloc((size_t)(num_nodes > 0 ? num_nodes : 1) * sizeof(uint32_t));
    if (!c->nodes) return false;
    for (int32_t i = 0; i < num_nodes; ++i) c->nodes[i] = (uint32_t)i;
    hipdnnSdkFormat(c->detail, sizeof(c->detail), "%s, compute %s, algorithm %d of %d, "
                    "%zu bytes of workspace", c->problem.what,
                    c->plan.compute == BL_COMPUTE_32F ? "32F" : "32F_FAST_TF32", index,
                    c->plan.offered, c->plan.workspace);
    c->kernel = (hipdnnPluginKernelInfo_t){(uint32_t)sizeof(hipdnnPluginKernelInfo_t),
                                           "cublasLtMatmul", c->detail, (uint32_t)num_nodes,
                                           c->nodes};
    c->kernels = &c->kernel;
    c->num_kernels = 1;
    return true;
}

/* Decodes the config's knobs and the graph, and plans; NULL with the error set if the
 * engine cannot run it. */
static hipdnnPluginStatus_t make_context(hipdnnEnginePluginHandle_t handle, const uint8_t* cfg,
                                         size_t cfg_size, const uint8_t* graph,
                                         size_t graph_size, const char* fn,
                                         hipdnnEnginePluginExecutionContext_t* out) {
    *out = NULL;
    if (!handle) return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_BAD_PARAM,
                                            BLASLT_ENGINE_NAME ": %s: NULL handle", fn);
    int64_t v[sizeof(k_knobs) / sizeof(k_knobs[0])];
    hipdnnPluginStatus_t st = hipdnnSdkPluginConfigKnobs(
        BLASLT_ENGINE_NAME, cfg, cfg_size, fn, k_knobs, g_details.num_knobs, v);
    if (st != HIPDNN_PLUGIN_STATUS_SUCCESS) return st;
    hipdnnSdkGraph* g = hipdnnSdkPluginDecodeGraph(BLASLT_ENGINE_NAME, graph, graph_size, fn);
    if (!g) return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    struct hipdnnEnginePluginExecutionContext* c = calloc(1, sizeof(*c));
    if (!c) {
        hipdnnSdkGraphFree(g);
        return fail(HIPDNN_PLUGIN_STATUS_ALLOC_FAILED, "out of memory");
    }
    pthread_mutex_init(&c->lock, NULL);
    hipdnnSdkFormat(c->graph_name, sizeof(c->graph_name), "%s", g->name);
    char why[BLASLT_MSG_LEN];
    if (!plan_on(handle, g, (int)v[0], v[1] != 0, &c->problem, &c->plan, why, sizeof(why))) {
        hipdnnSdkGraphFree(g);
        destroy_context(c);
        hipdnnSdkPluginSetError("%s", why);
        return HIPDNN_PLUGIN_STATUS_NOT_SUPPORTED;
    }
    const bool described = describe(c, g->num_nodes, (int)v[0]);
    hipdnnSdkGraphFree(g);
    if (!described) {
        destroy_context(c);
        return fail(HIPDNN_PLUGIN_STATUS_ALLOC_FAILED, "out of memory");
    }
    *out = c;
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetWorkspaceSize(
    hipdnnEnginePluginHandle_t handle, const uint8_t* engine_config, size_t config_size,
    const uint8_t* graph, size_t graph_size, size_t* workspace_size) {
    if (!workspace_size)
        return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "GetWorkspaceSize: NULL output");
    hipdnnEnginePluginExecutionContext_t c = NULL;
    hipdnnPluginStatus_t st = make_context(handle, engine_config, config_size, graph,
                                           graph_size, "GetWorkspaceSize", &c);
    if (st != HIPDNN_PLUGIN_STATUS_SUCCESS) return st;
    *workspace_size = c->plan.workspace;
    destroy_context(c);
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginCreateExecutionContext(
    hipdnnEnginePluginHandle_t handle, const uint8_t* engine_config, size_t config_size,
    const uint8_t* graph, size_t graph_size, hipdnnEnginePluginExecutionContext_t* ctx) {
    if (!ctx) return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "CreateExecutionContext: NULL output");
    hipdnnPluginStatus_t st = make_context(handle, engine_config, config_size, graph,
                                           graph_size, "CreateExecutionContext", ctx);
    if (st == HIPDNN_PLUGIN_STATUS_SUCCESS)
        hipdnnSdkPluginLog(HIPDNN_LOG_INFO, BLASLT_ENGINE_NAME ": graph '%s': %s%s",
                           (*ctx)->graph_name, (*ctx)->detail,
                           (*ctx)->plan.have[1] ? "" : "; no algorithm for pointers not "
                                                       "16-byte aligned");
    return st;
}

HIPDNN_SDK_PLUGIN_CONTEXT_BASE(BLASLT_ENGINE_NAME, destroy_context)

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetWorkspaceSizeFromExecutionContext(
    hipdnnEnginePluginHandle_t handle, hipdnnEnginePluginExecutionContext_t ctx,
    size_t* workspace_size) {
    if (!handle || !ctx || !workspace_size)
        return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM,
                    "GetWorkspaceSizeFromExecutionContext: NULL handle, context or output");
    *workspace_size = ctx->plan.workspace;
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

/* ---- running ----------------------------------------------------------------------------- */

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginExecuteOpGraph(
    hipdnnEnginePluginHandle_t handle, hipdnnEnginePluginExecutionContext_t ctx,
    void* workspace, const hipdnnPluginDeviceBuffer_t* buffers, uint32_t num_buffers) {
    (void)handle, (void)ctx, (void)workspace, (void)buffers, (void)num_buffers;
    return fail(HIPDNN_PLUGIN_STATUS_NOT_SUPPORTED,
                "ExecuteOpGraph (ABI 1.0) passes host memory; this device engine runs through "
                "EnqueueOpGraph (ABI 1.1)");
}

/* The device pointer of tensor uid: present, and in device (or managed) memory. */
static hipdnnPluginStatus_t pointer(const char* graph, const hipdnnPluginTensorBuffer_t* b,
                                    uint32_t n, int64_t uid, const void** ptr) {
    for (uint32_t i = 0; i < n; ++i) {
        if (b[i].uid != uid || !b[i].ptr) continue;
        if (b[i].memory_space == HIPDNN_MEMORY_HOST)
            return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_BAD_PARAM,
                                       BLASLT_ENGINE_NAME ": graph '%s': tensor uid %lld is in "
                                       "host memory; this engine needs device memory", graph,
                                       (long long)uid);
        *ptr = b[i].ptr;
        return HIPDNN_PLUGIN_STATUS_SUCCESS;
    }
    return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, BLASLT_ENGINE_NAME ": graph '%s': "
                               "tensor uid %lld has no pointer", graph, (long long)uid);
}

/* cublasLtMatmul with the algorithm the pointers allow; the error set if it fails. */
static hipdnnPluginStatus_t run(hipdnnEnginePluginHandle_t handle,
                                hipdnnEnginePluginExecutionContext_t c, const void* const* ptr,
                                void* workspace) {
    const bl_plan* plan = &c->plan;
    const uintptr_t bits = (uintptr_t)ptr[0] | (uintptr_t)ptr[1] | (uintptr_t)ptr[2] |
                           (uintptr_t)ptr[3] | (uintptr_t)ptr[4];
    const int which = (bits & 15u) == 0 ? 0 : 1;
    if (!plan->have[which])
        return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_EXECUTION_FAILED, BLASLT_ENGINE_NAME
                                   ": graph '%s': a tensor is not 16-byte aligned and cuBLASLt "
                                   "offered no algorithm for such pointers (%s)", c->graph_name,
                                   c->problem.what);
    const float alpha = 1.0f, beta = 0.0f; /* beta 0: C (= D) is not read */
    char why[BLASLT_MSG_LEN];
    bl_cu_context saved = NULL;
    if (!blaslt_enter(handle->device, &saved, why, sizeof(why)))
        return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_EXECUTION_FAILED, "%s", why);
    /* the handle executing need not be the one that built the plan (a hipdnn handle made
       for another stream): its library handle is made here then */
    const bl_lt lt = library_handle(handle, why, sizeof(why));
    if (!lt) {
        blaslt_leave(saved);
        return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_EXECUTION_FAILED, BLASLT_ENGINE_NAME
                                   ": graph '%s': %s", c->graph_name, why);
    }
    pthread_mutex_lock(&c->lock);
    bl_status st = BL_STATUS_SUCCESS;
    if (ptr[3])
        st = g_lt.desc_set(plan->desc, BL_DESC_BIAS_POINTER, &ptr[3], sizeof(ptr[3]));
    if (ptr[4] && st == BL_STATUS_SUCCESS)
        st = g_lt.desc_set(plan->desc, BL_DESC_EPILOGUE_AUX_POINTER, &ptr[4], sizeof(ptr[4]));
    if (st == BL_STATUS_SUCCESS)
        st = g_lt.matmul(lt, plan->desc, &alpha, ptr[0], plan->a, ptr[1], plan->b,
                         &beta, ptr[2], plan->d, (void*)ptr[2], plan->d, &plan->algo[which],
                         workspace, plan->workspace, handle->stream);
    pthread_mutex_unlock(&c->lock);
    blaslt_leave(saved);
    if (st != BL_STATUS_SUCCESS) {
        char text[96];
        return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_EXECUTION_FAILED, BLASLT_ENGINE_NAME
                                   ": graph '%s': cublasLtMatmul: %s (%s)", c->graph_name,
                                   blaslt_status_text(st, text, sizeof(text)), c->problem.what);
    }
    const unsigned bit = 1u << which;
    if (!(atomic_fetch_or(&c->ran, bit) & bit))
        hipdnnSdkPluginLog(HIPDNN_LOG_INFO, BLASLT_ENGINE_NAME ": graph '%s': first run of the "
                           "algorithm for %s pointers", c->graph_name,
                           which ? "unaligned" : "16-byte aligned");
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginEnqueueOpGraph(
    hipdnnEnginePluginHandle_t handle, hipdnnEnginePluginExecutionContext_t ctx,
    void* workspace, size_t workspace_size, const hipdnnPluginTensorBuffer_t* buffers,
    uint32_t num_buffers) {
    if (!handle || !ctx)
        return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "EnqueueOpGraph: NULL handle or context");
    if (num_buffers > 0 && !buffers)
        return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "EnqueueOpGraph: NULL buffers with a count");
    if (workspace_size < ctx->plan.workspace || (ctx->plan.workspace && !workspace))
        return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, BLASLT_ENGINE_NAME ": graph "
                                   "'%s': %zu bytes of workspace, the plan needs %zu",
                                   ctx->graph_name, workspace ? workspace_size : 0,
                                   ctx->plan.workspace);
    const bl_problem* p = &ctx->problem;
    const int64_t uids[5] = {p->a.uid, p->b.uid, p->d.uid, p->bias_uid, p->aux.uid};
    const void* ptr[5] = {NULL, NULL, NULL, NULL, NULL};
    for (int i = 0; i < 5; ++i) {
        if (uids[i] == HIPDNN_NO_TENSOR) continue;
        hipdnnPluginStatus_t st = pointer(ctx->graph_name, buffers, num_buffers, uids[i], &ptr[i]);
        if (st != HIPDNN_PLUGIN_STATUS_SUCCESS) return st;
    }
    return run(handle, ctx, ptr, workspace);
}
