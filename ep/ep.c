/* ep.c — the OrtEp that a session gets from the factory: GetCapability (claims nodes and
 * groups them, capability.c), Compile (one kernel per fused node, kernel.c) and the
 * compute functions ORT calls per run.  Members that this slice does not use are stubs
 * that give ORT's defaults, so that every member ORT may call is set. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipdnn_ep.h"

typedef struct {
    OrtEp base; /* first: ORT hands back OrtEp* */
    ep_options opt;
    const OrtLogger* logger;
    hipdnnHandle_t h;
    ep_device_kind device;
} hip_ep;

typedef struct {
    OrtNodeComputeInfo base; /* first: ORT hands back OrtNodeComputeInfo* */
    ep_kernel* kernel;
} hip_compute;

static hip_ep* self(const OrtEp* ep) { return (hip_ep*)ep; }

static hipdnnMemorySpace_t memory_space(const hip_ep* e) {
    return e->device == EP_DEVICE_CPU ? HIPDNN_MEMORY_HOST : HIPDNN_MEMORY_DEVICE;
}

static const char* ORT_API_CALL get_name(const OrtEp* ep) {
    (void)ep;
    return EP_NAME;
}

/* ---- GetCapability ------------------------------------------------------------------- */

static OrtStatus* ORT_API_CALL get_capability(OrtEp* ep, const OrtGraph* graph,
                                              OrtEpGraphSupportInfo* info) {
    hip_ep* e = self(ep);
    ep_model m;
    OrtStatus* st = ep_model_read(graph, &m);
    bool* supported = calloc((size_t)(m.n_nodes ? m.n_nodes : 1), sizeof(bool));
    int* group = calloc((size_t)(m.n_nodes ? m.n_nodes : 1), sizeof(int));
    const OrtNode** members = calloc((size_t)(m.n_nodes ? m.n_nodes : 1), sizeof(*members));
    if (!st && (!supported || !group || !members)) st = ep_status(ORT_FAIL, "out of memory");
    int claimed = 0, groups = 0;
    if (!st) {
        char why[512], label[200];
        for (int i = 0; i < m.n_nodes; ++i) {
            supported[i] = ep_node_supported(&m, &m.nodes[i], why, sizeof(why));
            if (supported[i]) ++claimed;
            else
                ep_log(e->logger, e->opt.log_level, ORT_LOGGING_LEVEL_INFO,
                       "node %s (domain '%s') stays with ORT: %s",
                       ep_node_label(&m.nodes[i], label, sizeof(label)), m.nodes[i].domain, why);
        }
        groups = ep_group_nodes(&m, supported, group);
    }
    OrtNodeFusionOptions fusion;
    memset(&fusion, 0, sizeof(fusion));
    fusion.ort_version_supported = ORT_API_VERSION;
    fusion.drop_constant_initializers = false; /* weights arrive as fused-node inputs */
    for (int g = 0; !st && g < groups; ++g) {
        size_t n = 0;
        for (int i = 0; i < m.n_nodes; ++i)
            if (group[i] == g) members[n++] = m.nodes[i].ort;
        st = g_ep_api->EpGraphSupportInfo_AddNodesToFuse(info, members, n, &fusion);
    }
    if (!st)
        ep_log(e->logger, e->opt.log_level, ORT_LOGGING_LEVEL_INFO,
               "claimed %d of %d nodes, in %d fused node%s", claimed, m.n_nodes, groups,
               groups == 1 ? "" : "s");
    free(supported);
    free(group);
    free(members);
    ep_model_free(&m);
    return st;
}

/* ---- Compile and compute -------------------------------------------------------------- */

static OrtStatus* ORT_API_CALL create_state(OrtNodeComputeInfo* info, OrtNodeComputeContext* ctx,
                                            void** state) {
    (void)ctx;
    *state = ((hip_compute*)info)->kernel;
    return NULL;
}

static OrtStatus* ORT_API_CALL compute(OrtNodeComputeInfo* info, void* state,
                                       OrtKernelContext* ctx) {
    (void)info;
    return ep_kernel_compute((ep_kernel*)state, ctx);
}

static void ORT_API_CALL release_state(OrtNodeComputeInfo* info, void* state) {
    (void)info;
    (void)state; /* the kernel belongs to the compute info */
}

static void release_compute_infos(OrtNodeComputeInfo** infos, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        if (!infos[i]) continue;
        ep_kernel_destroy(((hip_compute*)infos[i])->kernel);
        free(infos[i]);
        infos[i] = NULL;
    }
}

static OrtStatus* ORT_API_CALL compile(OrtEp* ep, const OrtGraph** graphs,
                                       const OrtNode** fused_nodes, size_t count,
                                       OrtNodeComputeInfo** infos, OrtNode** ep_context_nodes) {
    hip_ep* e = self(ep);
    OrtStatus* st = NULL;
    for (size_t i = 0; i < count; ++i) infos[i] = NULL;
    for (size_t i = 0; !st && i < count; ++i) {
        if (ep_context_nodes) ep_context_nodes[i] = NULL; /* no EPContext models yet */
        const char* name = NULL;
        st = g_ort->Node_GetName(fused_nodes[i], &name);
        ep_model m;
        memset(&m, 0, sizeof(m));
        if (!st) st = ep_model_read(graphs[i], &m);
        if (!st) st = ep_model_bind_fused(&m, fused_nodes[i]);
        hip_compute* c = st ? NULL : calloc(1, sizeof(*c));
        if (!st && !c) st = ep_status(ORT_FAIL, "out of memory");
        if (!st) {
            c->kernel = ep_kernel_create(&m, name ? name : "fused", e->h, &e->opt,
                                         memory_space(e), e->logger);
            if (!c->kernel) {
                free(c);
                st = ep_status(ORT_FAIL, "out of memory");
            }
        }
        ep_model_free(&m);
        if (st) break;
        c->base.ort_version_supported = ORT_API_VERSION;
        c->base.CreateState = create_state;
        c->base.Compute = compute;
        c->base.ReleaseState = release_state;
        infos[i] = &c->base;
    }
    if (st) release_compute_infos(infos, count);
    return st;
}

static void ORT_API_CALL release_node_compute_infos(OrtEp* ep, OrtNodeComputeInfo** infos,
                                                    size_t n) {
    (void)ep;
    release_compute_infos(infos, n);
}

/* ---- defaults for what this slice does not use ---------------------------------------- */

static OrtStatus* ORT_API_CALL preferred_layout(OrtEp* ep, OrtEpDataLayout* layout) {
    (void)ep;
    *layout = OrtEpDataLayout_NCHW;
    return NULL;
}

static OrtStatus* ORT_API_CALL should_convert_layout(OrtEp* ep, const char* domain,
                                                     const char* op, OrtEpDataLayout target,
                                                     int* should_convert) {
    (void)ep, (void)domain, (void)op, (void)target;
    *should_convert = -1; /* ORT decides */
    return NULL;
}

static OrtStatus* ORT_API_CALL set_dynamic_options(OrtEp* ep, const char* const* keys,
                                                   const char* const* values, size_t n) {
    hip_ep* e = self(ep);
    for (size_t i = 0; i < n; ++i)
        ep_log(e->logger, e->opt.log_level, ORT_LOGGING_LEVEL_WARNING,
               "dynamic option %s='%s' ignored: hipdnn-ep has no dynamic options", keys[i],
               values[i]);
    return NULL;
}

static OrtStatus* ORT_API_CALL on_run_start(OrtEp* ep, const OrtRunOptions* ro) {
    (void)ep, (void)ro;
    return NULL;
}

static OrtStatus* ORT_API_CALL on_run_end(OrtEp* ep, const OrtRunOptions* ro, bool sync) {
    (void)ep, (void)ro, (void)sync; /* host execution: finished when Compute returns */
    return NULL;
}

static OrtStatus* ORT_API_CALL ep_create_allocator(OrtEp* ep, const OrtMemoryInfo* info,
                                                   OrtAllocator** allocator) {
    (void)ep, (void)info;
    *allocator = NULL; /* ORT's CPU allocator */
    return NULL;
}

static OrtStatus* ORT_API_CALL ep_create_sync_stream(OrtEp* ep, const OrtMemoryDevice* dev,
                                                     OrtSyncStreamImpl** stream) {
    (void)ep, (void)dev;
    *stream = NULL; /* not stream aware on the CPU */
    return NULL;
}

static const char* ORT_API_CALL compat_info(OrtEp* ep, const OrtGraph* graph) {
    (void)ep, (void)graph;
    return "hipdnn-ep " HIPDNN_EP_VERSION;
}

static OrtStatus* ORT_API_CALL get_kernel_registry(OrtEp* ep, const OrtKernelRegistry** reg) {
    (void)ep;
    *reg = NULL; /* a compiling EP */
    return NULL;
}

static OrtStatus* ORT_API_CALL concurrent_runs(OrtEp* ep, bool* supported) {
    (void)ep;
    *supported = true; /* kernels lock their plan cache; plans run concurrently */
    return NULL;
}

/* ---- life cycle ------------------------------------------------------------------------ */

static hipdnnLogLevel_t hipdnn_level(OrtLoggingLevel l) {
    return l <= ORT_LOGGING_LEVEL_INFO      ? HIPDNN_LOG_INFO
           : l == ORT_LOGGING_LEVEL_WARNING ? HIPDNN_LOG_WARN
                                            : HIPDNN_LOG_ERROR;
}

/* An engine option naming no loaded engine is logged with the names there are, and
 * dropped, so that the heuristics rank as usual. */
static void check_engine(hip_ep* e) {
    if (!e->opt.engine[0]) return;
    int64_t count = 0;
    char known[512] = "";
    size_t kl = 0;
    if (hipdnnGetEngineCount_ext(&count) != HIPDNN_STATUS_SUCCESS) return;
    for (int64_t i = 0; i < count; ++i) {
        hipdnnEngineInfo_ext_t info;
        if (hipdnnGetEngineInfo_ext(i, &info) != HIPDNN_STATUS_SUCCESS) continue;
        if (!strcmp(info.name, e->opt.engine)) return;
        if (kl < sizeof(known))
            kl += (size_t)snprintf(known + kl, sizeof(known) - kl, "%s%s", kl ? ", " : "", info.name);
    }
    ep_log(e->logger, e->opt.log_level, ORT_LOGGING_LEVEL_WARNING,
           "option " EP_OPTION_PREFIX "engine='%s' names no loaded engine (loaded: %s); ignored",
           e->opt.engine, kl ? known : "none");
    e->opt.engine[0] = '\0';
}

OrtStatus* ep_create(const OrtSessionOptions* so, const OrtLogger* logger,
                     ep_device_kind device, OrtEp** out) {
    *out = NULL;
    hip_ep* e = calloc(1, sizeof(*e));
    if (!e) return ep_status(ORT_FAIL, "out of memory");
    e->logger = logger;
    e->device = device;
    OrtStatus* st = ep_options_read(so, logger, &e->opt);
    if (st) {
        free(e);
        return st;
    }
    if (e->opt.log_level_given) hipdnnSetLogLevel_ext(hipdnn_level(e->opt.log_level));
    if (e->opt.plugin_path[0]) {
        const char* paths[1] = {e->opt.plugin_path};
        hipdnnStatus_t hs = hipdnnSetEnginePluginPaths_ext(1, paths, HIPDNN_PLUGIN_LOADING_ADDITIVE);
        if (hs != HIPDNN_STATUS_SUCCESS)
            ep_log(logger, e->opt.log_level, ORT_LOGGING_LEVEL_WARNING,
                   "option " EP_OPTION_PREFIX "plugin_path='%s' not applied: %s: %s (plugins "
                   "load once per process, before the first hipdnn handle)",
                   e->opt.plugin_path, hipdnnGetErrorString(hs), hipdnnPeekLastErrorString_ext());
    }
    hipdnnStatus_t hs = hipdnnCreate(&e->h);
    if (hs != HIPDNN_STATUS_SUCCESS) {
        st = ep_status(ORT_FAIL, "hipdnnCreate: %s: %s", hipdnnGetErrorString(hs),
                       hipdnnPeekLastErrorString_ext());
        free(e);
        return st;
    }
    check_engine(e);
    OrtEp* b = &e->base;
    b->ort_version_supported = ORT_API_VERSION;
    b->GetName = get_name;
    b->GetCapability = get_capability;
    b->Compile = compile;
    b->ReleaseNodeComputeInfos = release_node_compute_infos;
    b->GetPreferredDataLayout = preferred_layout;
    b->ShouldConvertDataLayoutForOp = should_convert_layout;
    b->SetDynamicOptions = set_dynamic_options;
    b->OnRunStart = on_run_start;
    b->OnRunEnd = on_run_end;
    b->CreateAllocator = ep_create_allocator;
    b->CreateSyncStreamForDevice = ep_create_sync_stream;
    b->GetCompiledModelCompatibilityInfo = compat_info;
    b->GetKernelRegistry = get_kernel_registry;
    b->IsConcurrentRunSupported = concurrent_runs;
    ep_log(logger, e->opt.log_level, ORT_LOGGING_LEVEL_INFO,
           "created on the %s (heuristic mode %d%s%s)", device == EP_DEVICE_CPU ? "CPU" : "GPU",
           (int)e->opt.heur, e->opt.engine[0] ? ", engine " : "", e->opt.engine);
    *out = b;
    return NULL;
}

void ep_destroy(OrtEp* ep) {
    if (!ep) return;
    hip_ep* e = self(ep);
    hipdnnDestroy(e->h);
    free(e);
}
