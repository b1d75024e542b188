/* The plugin ABI 1.1 entry points of the cudnn engine: a hipdnn graph translated into
 * cuDNN's backend graph API (cudnn_graph.c), planned from cuDNN's heuristic
 * (cudnn_plan.c) and run on the handle's stream, on device memory.
 *
 * The plugin links neither the driver nor cuDNN: cudnn_load.c opens both when the plugin
 * is loaded, and the engine declines to load, saying what it looked for, where either is
 * missing (any machine without an NVIDIA GPU). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cudnn.h"

/* How many graphs' answers a handle remembers (applicability, below). */
#define CUDNN_ANSWERS 8

/* Whether the engine runs one graph (its canonical bytes), and why not. */
typedef struct {
    uint8_t* bytes;
    size_t size;
    bool ok;
    char why[CUDNN_MSG_LEN];
} cd_answer;

struct hipdnnEnginePluginHandle {
    int device;
    hipdnnStream_t stream;
    cd_handle cudnn;             /* made on `device` by library_handle, on first need */
    pthread_mutex_t made;        /* over making it */
    char reason[CUDNN_MSG_LEN]; /* GetNotApplicableReason's answer, until the next call */
    pthread_mutex_t lock;        /* over the answers */
    cd_answer answers[CUDNN_ANSWERS];
    unsigned next_answer;
};

struct hipdnnEnginePluginExecutionContext {
    cd_graph graph; /* its descriptors, the plan's among them */
    cd_plan plan;
    int device;
    char graph_name[128];
    atomic_flag ran; /* the first run is logged */
    /* GetKernelInfo's answer: one cuDNN execution plan running every node */
    uint32_t num_kernels;
    hipdnnPluginKernelInfo_t* kernels;
    hipdnnPluginKernelInfo_t kernel;
    uint32_t* nodes;
    char detail[CUDNN_MSG_LEN];
};

static hipdnnPluginStatus_t fail(hipdnnPluginStatus_t st, const char* what) {
    return hipdnnSdkPluginFail(st, CUDNN_ENGINE_NAME ": %s", what);
}

static uint64_t engine_id(void) { return hipdnnSdkFnv1a64(CUDNN_ENGINE_NAME); }

/* ABI 1.1: minor 1 whatever minor hipdnn_plugin.h grows to. */
HIPDNN_SDK_PLUGIN_BASE(CUDNN_ENGINE_NAME, CUDNN_PLUGIN_VERSION, HIPDNN_PLUGIN_API_MAJOR, 1)

/* ---- loading, engines and handles -------------------------------------------------------- */

/* Called at load: without the driver, a device or cuDNN 9 the plugin declines to load
 * (NOT_SUPPORTED, logged as info by the loader) and the other engines carry on. */
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetAllEngineIds(uint64_t* ids,
                                                                            uint32_t max,
                                                                            uint32_t* num) {
    return hipdnnSdkVendorEngineIds(CUDNN_ENGINE_NAME, cudnn_load, cudnn_library, ids, max, num);
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginCreateForDevice(
    hipdnnEnginePluginHandle_t* handle, const hipdnnPluginHandleInfo_t* info) {
    if (!handle || !info)
        return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "CreateForDevice: NULL handle or info");
    *handle = NULL;
    int device = 0;
    cd_cu_context saved = NULL;
    const hipdnnPluginStatus_t entered =
        hipdnnSdkVendorEnterDevice(CUDNN_ENGINE_NAME, cudnn_load, info, &device, &saved);
    if (entered != HIPDNN_PLUGIN_STATUS_SUCCESS) return entered;
    cudnn_leave(saved);
    /* No cudnnCreate here: library_handle makes it for the first graph cuDNN is asked about. */
    struct hipdnnEnginePluginHandle* h = calloc(1, sizeof(*h));
    if (!h) return fail(HIPDNN_PLUGIN_STATUS_ALLOC_FAILED, "CreateForDevice: out of memory");
    h->device = device;
    pthread_mutex_init(&h->lock, NULL);
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
    char why[CUDNN_MSG_LEN];
    cd_cu_context saved = NULL;
    if (handle->cudnn && cudnn_enter(handle->device, &saved, why, sizeof(why))) {
        g_cd.destroy(handle->cudnn);
        cudnn_leave(saved);
    }
    for (int i = 0; i < CUDNN_ANSWERS; ++i) free(handle->answers[i].bytes);
    pthread_mutex_destroy(&handle->lock);
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

/* 0: the heuristic's best engine config that builds a plan. */
static const hipdnnPluginKnobInfo_t k_knobs[] = {
    {CUDNN_KNOB_ENGINE_CONFIG, "engine_config", 0, CUDNN_MAX_CONFIGS - 1, 0},
};

static hipdnnPluginEngineDetails_t g_details = {
    .struct_size = (uint32_t)sizeof(hipdnnPluginEngineDetails_t),
    .engine_id = 0, /* filled once, when first asked */
    .name = CUDNN_ENGINE_NAME,
    .memory_space = HIPDNN_MEMORY_DEVICE,
    .priority = CUDNN_PRIORITY,
    .flags = 0,
    .num_knobs = (int32_t)(sizeof(k_knobs) / sizeof(k_knobs[0])),
    .knobs = k_knobs,
    .notes = "NVIDIA GPU: the graph translated into cuDNN's backend graph API (convolution "
             "fprop / dgrad / wgrad and matmul with the pointwise nodes cuDNN fuses after "
             "them; sdpa forward and backward in fp16 / bf16 as cuDNN frontend builds "
             "them; each norm node, forward or backward, as one NORM_FORWARD / "
             "NORM_BACKWARD); cuDNN's heuristic picks the engine config (knob engine_config)",
};

static void fill_details(void) { g_details.engine_id = engine_id(); }

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetEngineDetails(
    hipdnnEnginePluginHandle_t handle, uint64_t id, const hipdnnPluginEngineDetails_t** details) {
    (void)handle; /* answered without one */
    if (!details) return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "GetEngineDetails: NULL output");
    hipdnnPluginStatus_t st = hipdnnSdkPluginCheckEngine(CUDNN_ENGINE_NAME, id, "GetEngineDetails");
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

/* The handle's cuDNN handle, made when cudnn_graph_make first needs one (a graph it
 * translated), inside cudnn_enter: cudnnCreate and cuDNN's first queries cost tens of ms on
 * a GPU, which a process whose plan cache or preferred engine names another engine, or
 * whose graphs cuDNN cannot take, never pays.  NULL with `why` when it cannot be made. */
static cd_handle library_handle(void* owner, char* why, size_t len) {
    hipdnnEnginePluginHandle_t h = owner;
    pthread_mutex_lock(&h->made);
    if (!h->cudnn) {
        const cd_status st = g_cd.create(&h->cudnn);
        if (st != CD_STATUS_SUCCESS) {
            char text[600];
            hipdnnSdkFormat(why, len, "cudnnCreate on device %d: %s", h->device,
                            cudnn_status_text(st, text, sizeof(text)));
            h->cudnn = NULL;
        }
    }
    cd_handle out = h->cudnn;
    pthread_mutex_unlock(&h->made);
    return out;
}

/* Whether the engine runs g: it translates, cuDNN finalizes the operation graph and its
 * heuristic offers an engine config for it.  (Whether the config builds a plan is only
 * learnt by building it, which may compile kernels: that waits for the plan.) */
static bool runs(void* handle, const hipdnnSdkGraph* g, char* why, size_t len) {
    hipdnnEnginePluginHandle_t h = handle;
    cd_cu_context saved = NULL;
    if (!cudnn_enter(h->device, &saved, why, len)) return false;
    cd_graph graph;
    int count = 0;
    bool ok = cudnn_graph_make(library_handle, h, g, &graph, why, len);
    if (ok) {
        ok = cudnn_heuristic_count(&graph, &count, why, len);
        cudnn_graph_free(&graph);
    }
    cudnn_leave(saved);
    return ok;
}

/* runs' answer for the graph of these bytes: remembered for the handle's last
 * CUDNN_ANSWERS graphs, so that building a graph again in the process (every engine is
 * asked at each build) skips the translation and cuDNN's heuristic query, milliseconds on
 * a GPU.  The answer depends on the bytes, the device and the loaded cuDNN only, all fixed
 * for a handle.  BAD_PARAM (the error set) for bytes that hold no graph. */
static hipdnnPluginStatus_t answer(hipdnnEnginePluginHandle_t h, const uint8_t* graph,
                                   size_t size, const char* fn, bool* ok, char* why, size_t len) {
    pthread_mutex_lock(&h->lock);
    for (int i = 0; graph && i < CUDNN_ANSWERS; ++i) {
        const cd_answer* a = &h->answers[i];
        if (a->bytes && a->size == size && memcmp(a->bytes, graph, size) == 0) {
            *ok = a->ok;
            hipdnnSdkFormat(why, len, "%s", a->why);
            pthread_mutex_unlock(&h->lock);
            return HIPDNN_PLUGIN_STATUS_SUCCESS;
        }
    }
    pthread_mutex_unlock(&h->lock);
    hipdnnSdkGraph* g = hipdnnSdkPluginDecodeGraph(CUDNN_ENGINE_NAME, graph, size, fn);
    if (!g) return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    why[0] = '\0';
    *ok = runs(h, g, why, len);
    hipdnnSdkGraphFree(g);
    uint8_t* copy = malloc(size ? size : 1);
    if (!copy) return HIPDNN_PLUGIN_STATUS_SUCCESS; /* answered, not remembered */
    memcpy(copy, graph, size);
    pthread_mutex_lock(&h->lock);
    cd_answer* a = &h->answers[h->next_answer++ % CUDNN_ANSWERS];
    free(a->bytes);
    *a = (cd_answer){.bytes = copy, .size = size, .ok = *ok};
    hipdnnSdkFormat(a->why, sizeof(a->why), "%s", why);
    pthread_mutex_unlock(&h->lock);
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetApplicableEngineIds(
    hipdnnEnginePluginHandle_t handle, const uint8_t* graph, size_t graph_size, uint64_t* ids,
    uint32_t max, uint32_t* num) {
    if (!handle || !num) return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "GetApplicableEngineIds: "
                                     "NULL handle or count");
    *num = 0;
    bool ok = false;
    char why[CUDNN_MSG_LEN];
    const hipdnnPluginStatus_t st =
        answer(handle, graph, graph_size, "GetApplicableEngineIds", &ok, why, sizeof(why));
    if (st != HIPDNN_PLUGIN_STATUS_SUCCESS || !ok) return st; /* declining: no error */
    *num = 1;
    if (ids && max >= 1) ids[0] = engine_id();
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetNotApplicableReason(
    hipdnnEnginePluginHandle_t handle, uint64_t id, const uint8_t* graph, size_t graph_size,
    const char** reason) {
    if (!handle || !reason)
        return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "GetNotApplicableReason: NULL handle or output");
    hipdnnPluginStatus_t st = hipdnnSdkPluginCheckEngine(CUDNN_ENGINE_NAME, id,
                                                         "GetNotApplicableReason");
    if (st != HIPDNN_PLUGIN_STATUS_SUCCESS) return st;
    bool ok = false;
    if (answer(handle, graph, graph_size, "GetNotApplicableReason", &ok, handle->reason,
               sizeof(handle->reason)) != HIPDNN_PLUGIN_STATUS_SUCCESS) {
        hipdnnSdkPluginReason(CUDNN_ENGINE_NAME, graph, graph_size, runs, handle, handle->reason,
                              sizeof(handle->reason)); /* says why the bytes are no graph */
    } else if (ok) {
        hipdnnSdkFormat(handle->reason, sizeof(handle->reason),
                        "%s: applicable (no reason to decline)", CUDNN_ENGINE_NAME);
    }
    *reason = handle->reason;
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

/* Frees host objects only: cuDNN's descriptors need no device (work the plan enqueued
 * reads nothing the descriptors own). */
static void destroy_context(hipdnnEnginePluginExecutionContext_t c) {
    cudnn_graph_free(&c->graph);
    free(c->nodes);
    free(c);
}

/* The context's one kernel: cuDNN's plan, running every node of the graph. */
static bool describe(hipdnnEnginePluginExecutionContext_t c, int32_t num_nodes, int index) {
    c->nodes = malloc((size_t)(num_nodes > 0 ? num_nodes : 1) * sizeof(uint32_t));
    if (!c->nodes) return false;
    for (int32_t i = 0; i < num_nodes; ++i) c->nodes[i] = (uint32_t)i;
    hipdnnSdkFormat(c->detail, sizeof(c->detail), "%s, engine config %d (heuristic's #%d of %d, "
                    "engine %lld), %zu bytes of workspace", c->graph.what, index, c->plan.tried - 1,
                    c->plan.offered, (long long)c->plan.engine, c->plan.workspace);
    c->kernel = (hipdnnPluginKernelInfo_t){(uint32_t)sizeof(hipdnnPluginKernelInfo_t),
                                           "cudnnBackendExecute", c->detail, (uint32_t)num_nodes,
                                           c->nodes};
    c->kernels = &c->kernel;
    c->num_kernels = 1;
    return true;
}

static hipdnnPluginStatus_t make_context(hipdnnEnginePluginHandle_t handle, const uint8_t* cfg,
                                         size_t cfg_size, const uint8_t* graph,
                                         size_t graph_size, const char* fn,
                                         hipdnnEnginePluginExecutionContext_t* out) {
    *out = NULL;
    if (!handle) return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_BAD_PARAM,
                                            CUDNN_ENGINE_NAME ": %s: NULL handle", fn);
    int64_t v[sizeof(k_knobs) / sizeof(k_knobs[0])];
    hipdnnPluginStatus_t st = hipdnnSdkPluginConfigKnobs(CUDNN_ENGINE_NAME, cfg, cfg_size, fn,
                                                         k_knobs, g_details.num_knobs, v);
    if (st != HIPDNN_PLUGIN_STATUS_SUCCESS) return st;
    hipdnnSdkGraph* g = hipdnnSdkPluginDecodeGraph(CUDNN_ENGINE_NAME, graph, graph_size, fn);
    if (!g) return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    struct hipdnnEnginePluginExecutionContext* c = calloc(1, sizeof(*c));
    if (!c) {
        hipdnnSdkGraphFree(g);
        return fail(HIPDNN_PLUGIN_STATUS_ALLOC_FAILED, "out of memory");
    }
    atomic_flag_clear(&c->ran);
    c->device = handle->device;
    hipdnnSdkFormat(c->graph_name, sizeof(c->graph_name), "%s", g->name);
    char why[CUDNN_MSG_LEN];
    cd_cu_context saved = NULL;
    bool ok = cudnn_enter(handle->device, &saved, why, sizeof(why));
    if (ok) {
        ok = cudnn_graph_make(library_handle, handle, g, &c->graph, why, sizeof(why)) &&
             cudnn_plan_make(handle->cudnn, &c->graph, (int)v[0], &c->plan, why, sizeof(why));
        cudnn_leave(saved);
    }
    if (!ok) {
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
        hipdnnSdkPluginLog(HIPDNN_LOG_INFO, CUDNN_ENGINE_NAME ": graph '%s': %s",
                           (*ctx)->graph_name, (*ctx)->detail);
    return st;
}

HIPDNN_SDK_PLUGIN_CONTEXT_BASE(CUDNN_ENGINE_NAME, destroy_context)

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

/* The pointer the variant pack gives cuDNN for io: a constant's value, a workspace
 * tensor's place, a runtime scalar's host pointer, or a tensor's device pointer aligned as
 * the plan was built for. */
static hipdnnPluginStatus_t pointer(const char* graph, const cd_io* io,
                                    const hipdnnPluginTensorBuffer_t* b, uint32_t n,
                                    void* workspace, void** ptr) {
    if (io->has_value) {
        *ptr = (void*)io->value;
        return HIPDNN_PLUGIN_STATUS_SUCCESS;
    }
    if (io->in_workspace) {
        *ptr = (char*)workspace + io->offset;
        return HIPDNN_PLUGIN_STATUS_SUCCESS;
    }
    for (uint32_t i = 0; i < n; ++i) {
        if (b[i].uid != io->uid || !b[i].ptr) continue;
        if (!io->by_value && b[i].memory_space == HIPDNN_MEMORY_HOST)
            return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, CUDNN_ENGINE_NAME ": graph "
                                       "'%s': tensor '%s' (uid %lld) is in host memory; this "
                                       "engine needs device memory", graph, io->name,
                                       (long long)io->uid);
        if (!io->by_value && (uintptr_t)b[i].ptr % CUDNN_ALIGNMENT)
            return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_EXECUTION_FAILED, CUDNN_ENGINE_NAME
                                       ": graph '%s': tensor '%s' (uid %lld) at %p is not "
                                       "%d-byte aligned, as the cuDNN plan was built for",
                                       graph, io->name, (long long)io->uid, b[i].ptr,
                                       CUDNN_ALIGNMENT);
        *ptr = b[i].ptr;
        return HIPDNN_PLUGIN_STATUS_SUCCESS;
    }
    return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, CUDNN_ENGINE_NAME ": graph '%s': "
                               "tensor '%s' (uid %lld) has no pointer", graph, io->name,
                               (long long)io->uid);
}

/* cudnnBackendExecute with a variant pack of uids and pointers; the error set if it fails.
 * The plan's own workspace follows the graph's workspace tensors. */
static hipdnnPluginStatus_t run(hipdnnEnginePluginHandle_t h,
                                hipdnnEnginePluginExecutionContext_t c, const int64_t* uids,
                                void** ptrs, void* workspace) {
    if (workspace && c->graph.workspace) workspace = (char*)workspace + c->graph.workspace;
    char why[CUDNN_MSG_LEN], text[600];
    cd_cu_context saved = NULL;
    if (!cudnn_enter(h->device, &saved, why, sizeof(why)))
        return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_EXECUTION_FAILED, "%s", why);
    cd_desc pack = NULL;
    const char* call = "cudnnBackendCreateDescriptor(VARIANT_PACK)";
    cd_status st = g_cd.create_descriptor(CD_VARIANT_PACK_DESCRIPTOR, &pack);
    if (st == CD_STATUS_SUCCESS) {
        call = "cudnnBackendSetAttribute(VARIANT_PACK_UNIQUE_IDS)";
        st = g_cd.set_attribute(pack, CD_ATTR_VARIANT_PACK_UNIQUE_IDS, CD_TYPE_INT64,
                                c->graph.num_io, uids);
    }
    if (st == CD_STATUS_SUCCESS) {
        call = "cudnnBackendSetAttribute(VARIANT_PACK_DATA_POINTERS)";
        st = g_cd.set_attribute(pack, CD_ATTR_VARIANT_PACK_DATA_POINTERS, CD_TYPE_VOID_PTR,
                                c->graph.num_io, ptrs);
    }
    if (st == CD_STATUS_SUCCESS) {
        call = "cudnnBackendSetAttribute(VARIANT_PACK_WORKSPACE)";
        st = g_cd.set_attribute(pack, CD_ATTR_VARIANT_PACK_WORKSPACE, CD_TYPE_VOID_PTR, 1,
                                &workspace);
    }
    if (st == CD_STATUS_SUCCESS) {
        call = "cudnnBackendFinalize(VARIANT_PACK)";
        st = g_cd.finalize(pack);
    }
    /* the handle executing need not be the one that built the plan (a hipdnn handle made
       for another stream): its library handle is made here then */
    const cd_handle lib = st == CD_STATUS_SUCCESS ? library_handle(h, why, sizeof(why)) : NULL;
    if (st == CD_STATUS_SUCCESS && !lib) {
        if (pack) g_cd.destroy_descriptor(pack);
        cudnn_leave(saved);
        return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_EXECUTION_FAILED, CUDNN_ENGINE_NAME
                                   ": graph '%s': %s", c->graph_name, why);
    }
    if (st == CD_STATUS_SUCCESS) {
        call = "cudnnSetStream";
        st = g_cd.set_stream(lib, h->stream);
    }
    if (st == CD_STATUS_SUCCESS) {
        call = "cudnnBackendExecute";
        st = g_cd.execute(lib, c->plan.plan, pack);
    }
    if (st != CD_STATUS_SUCCESS) cudnn_status_text(st, text, sizeof(text));
    if (pack) g_cd.destroy_descriptor(pack);
    cudnn_leave(saved);
    if (st != CD_STATUS_SUCCESS)
        return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_EXECUTION_FAILED, CUDNN_ENGINE_NAME
                                   ": graph '%s': %s: %s (%s)", c->graph_name, call, text,
                                   c->graph.what);
    if (!atomic_flag_test_and_set(&c->ran))
        hipdnnSdkPluginLog(HIPDNN_LOG_INFO, CUDNN_ENGINE_NAME ": graph '%s': first run of "
                           "engine config %d of %d", c->graph_name, c->plan.tried - 1,
                           c->plan.offered);
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
        return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, CUDNN_ENGINE_NAME ": graph "
                                   "'%s': %zu bytes of workspace, the plan needs %zu",
                                   ctx->graph_name, workspace ? workspace_size : 0,
                                   ctx->plan.workspace);
    const int n = ctx->graph.num_io;
    int64_t* uids = malloc((size_t)(n + 1) * sizeof(int64_t));
    void** ptrs = malloc((size_t)(n + 1) * sizeof(void*));
    hipdnnPluginStatus_t st = HIPDNN_PLUGIN_STATUS_SUCCESS;
    if (!uids || !ptrs) st = fail(HIPDNN_PLUGIN_STATUS_ALLOC_FAILED, "EnqueueOpGraph: out of memory");
    for (int i = 0; st == HIPDNN_PLUGIN_STATUS_SUCCESS && i < n; ++i) {
        uids[i] = ctx->graph.io[i].uid;
        st = pointer(ctx->graph_name, &ctx->graph.io[i], buffers, num_buffers, workspace,
                     &ptrs[i]);
    }
    if (st == HIPDNN_PLUGIN_STATUS_SUCCESS) st = run(handle, ctx, uids, ptrs, workspace);
    free(uids);
    free(ptrs);
    return st;
}
