/* ep.c — the OrtEp that a session gets from the factory: GetCapability (claims nodes and
 * groups them, capability.c; on the GPU keeps only what a device engine takes,
 * engine_check.c), Compile (one kernel per fused node, kernel.c) and the compute
 * functions ORT calls per run.  On the GPU device the OrtEp also gives ORT the device
 * allocator and sync streams of its factory.  Members that hipdnn-ep does not use are
 * stubs that give ORT's defaults, so that every member ORT may call is set. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipdnn_ep.h"

typedef struct {
    OrtEp base; /* first: ORT hands back OrtEp* */
    ep_options opt;
    const OrtLogger* logger;
    ep_factory* f;
    ep_exec x; /* the handle, the memory space, the GPU's lock: what kernels run with */
    ep_device_kind device;
    OrtKernelRegistry* registry; /* GPU: the Memcpy kernels (memcpy.c) */
    int fusing_calls;            /* GetCapability calls that fused nodes (ep_ort_fuses_once) */
} hip_ep;

typedef struct {
    OrtNodeComputeInfo base; /* first: ORT hands back OrtNodeComputeInfo* */
    ep_kernel* kernel;
} hip_compute;

static hip_ep* self(const OrtEp* ep) { return (hip_ep*)ep; }

static const char* ORT_API_CALL get_name(const OrtEp* ep) {
    (void)ep;
    return EP_NAME;
}

/* ---- GetCapability ------------------------------------------------------------------- */

/* The memory the device's engines run on, and its name in the log. */
static hipdnnMemorySpace_t space_of(const hip_ep* e) {
    return e->device == EP_DEVICE_GPU ? HIPDNN_MEMORY_DEVICE : HIPDNN_MEMORY_HOST;
}
static const char* space_label(const hip_ep* e) {
    return e->device == EP_DEVICE_GPU ? "the GPU" : "host memory";
}

/* A node is claimed only when an engine for the device's memory takes it alone: on the
 * GPU the engine runs the memory-bound ops (convolutions and matmuls stay with ORT); on
 * the CPU the reference engine runs every op, but not every parameter (a Conv stride of
 * 2^40 is valid ONNX and past what it takes), and a claimed node must not fail at Run. */
static void keep_what_an_engine_runs(hip_ep* e, const ep_model* m, bool* supported,
                                     int* claimed) {
    char why[1024], label[200];
    for (int i = 0; i < m->n_nodes; ++i) {
        if (!supported[i]) continue;
        if (ep_engine_takes(m, &i, 1, e->x.h, &e->opt, space_of(e), why, sizeof(why)))
            continue;
        supported[i] = false;
        --*claimed;
        ep_log(e->logger, e->opt.log_level, ORT_LOGGING_LEVEL_INFO,
               "node %s (domain '%s') stays with ORT: no engine for %s takes it: %s",
               ep_node_label(&m->nodes[i], label, sizeof(label)), m->nodes[i].domain,
               space_label(e), why);
    }
}

/* Whether node `n` reads a value that one of nodes[0..count) makes. */
static bool reads_from(const ep_model* m, int n, const int* nodes, int count) {
    for (int k = 0; k < m->nodes[n].n_in; ++k) {
        int v = ep_node_in(&m->nodes[n], k), p = v >= 0 ? m->values[v].producer : -1;
        for (int j = 0; p >= 0 && j < count; ++j)
            if (nodes[j] == p) return true;
    }
    return false;
}

/* A group of nodes each taken alone but declined together is cut, in topological order,
 * into runs the engine takes: a node joins the run before it when it reads from it and
 * the engine takes the run with it, else starts the next.  A run of consecutive members
 * of an acyclic group is itself acyclic (a path between two of its nodes passes only
 * nodes between them), and runs only feed later runs.  Returns the new group count. */
static int split_what_engines_decline(hip_ep* e, const ep_model* m, int* group, int groups,
                                       int* members) {
    char why[1024], label[200];
    int total = groups;
    for (int g = 0; g < groups; ++g) {
        int n = 0;
        for (int i = 0; i < m->n_nodes; ++i)
            if (group[i] == g) members[n++] = i;
        if (n < 2 || ep_engine_takes(m, members, n, e->x.h, &e->opt, space_of(e), why,
                                     sizeof(why)))
            continue;
        ep_node_label(&m->nodes[members[0]], label, sizeof(label));
        int start = 0, id = g, runs = 1;
        char unused[8];
        for (int j = 1; j < n; ++j) {
            if (!reads_from(m, members[j], members + start, j - start) ||
                !ep_engine_takes(m, members + start, j - start + 1, e->x.h, &e->opt,
                                 space_of(e), unused, sizeof(unused))) {
                start = j;
                id = total++;
                ++runs;
            }
            group[members[j]] = id;
        }
        ep_log(e->logger, e->opt.log_level, ORT_LOGGING_LEVEL_INFO,
               "the %d nodes from %s are not taken as one graph by an engine for %s (%s); "
               "they are claimed as %d fused nodes", n, label, space_label(e), why, runs);
    }
    return total;
}

static OrtStatus* ORT_API_CALL get_capability(OrtEp* ep, const OrtGraph* graph,
                                              OrtEpGraphSupportInfo* info) {
    hip_ep* e = self(ep);
    ep_model m;
    OrtStatus* st = ep_model_read(graph, &m);
    if (!st && e->fusing_calls && ep_ort_fuses_once()) {
        ep_log(e->logger, e->opt.log_level, ORT_LOGGING_LEVEL_INFO, "claimed 0 of %d nodes: "
               "ONNX Runtime %s would give fused nodes of this graph the names of earlier ones "
               "(1.25 and later do not), so it stays with ORT", m.n_nodes, ep_ort_runtime());
        ep_model_free(&m);
        return NULL;
    }
    bool* supported = calloc((size_t)(m.n_nodes ? m.n_nodes : 1), sizeof(bool));
    int* group = calloc((size_t)(m.n_nodes ? m.n_nodes : 1), sizeof(int));
    const OrtNode** members = calloc((size_t)(m.n_nodes ? m.n_nodes : 1), sizeof(*members));
    if (!st && (!supported || !group || !members)) st = ep_status(ORT_FAIL, "out of memory");
    int claimed = 0, groups = 0, total = 0;
    if (!st) {
        char why[512], label[200];
        for (int i = 0; i < m.n_nodes; ++i) {
            /* hipdnn-ep's EPContext nodes: each a fused node of its own (context.c) */
            if (ep_context_is_mine(&m.nodes[i])) {
                const OrtNode* one = m.nodes[i].ort;
                OrtNodeFusionOptions alone = {ORT_API_VERSION, false};
                if (!st) st = g_ep_api->EpGraphSupportInfo_AddNodesToFuse(info, &one, 1, &alone);
                ++claimed, ++groups;
                continue;
            }
            supported[i] = ep_node_supported(&m, &m.nodes[i], why, sizeof(why));
            if (supported[i]) ++claimed;
            else
                ep_log(e->logger, e->opt.log_level, ORT_LOGGING_LEVEL_INFO,
                       "node %s (domain '%s') stays with ORT: %s",
                       ep_node_label(&m.nodes[i], label, sizeof(label)), m.nodes[i].domain, why);
        }
        keep_what_an_engine_runs(e, &m, supported, &claimed);
        int contexts = groups;
        groups = ep_group_nodes(&m, supported, group);
        int* scratch = calloc((size_t)(m.n_nodes ? m.n_nodes : 1), sizeof(int));
        if (!scratch) st = ep_status(ORT_FAIL, "out of memory");
        else groups = split_what_engines_decline(e, &m, group, groups, scratch);
        free(scratch);
        total = groups + contexts;
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
    if (!st && total) ++e->fusing_calls; /* EPContext nodes fuse too */
    if (!st)
        ep_log(e->logger, e->opt.log_level, ORT_LOGGING_LEVEL_INFO,
               "claimed %d of %d nodes, in %d fused node%s%s", claimed, m.n_nodes, total,
               total == 1 ? "" : "s", e->device == EP_DEVICE_GPU ? ", on the GPU" : "");
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
    ep_ctx_env env = {&e->x, &e->opt, e->device, e->f->gpu.runtime, e->logger};
    for (size_t i = 0; i < count; ++i) infos[i] = NULL;
    for (size_t i = 0; !st && i < count; ++i) {
        if (ep_context_nodes) ep_context_nodes[i] = NULL;
        const char* name = NULL;
        st = g_ort->Node_GetName(fused_nodes[i], &name);
        ep_model m;
        memset(&m, 0, sizeof(m));
        if (!st) st = ep_model_read(graphs[i], &m);
        if (!st) st = ep_model_bind_fused(&m, fused_nodes[i]);
        hip_compute* c = st ? NULL : calloc(1, sizeof(*c));
        if (!st && !c) st = ep_status(ORT_FAIL, "out of memory");
        bool load = !st && m.n_nodes == 1 && ep_context_is_mine(&m.nodes[0]);
        if (!st && load) {
            st = ep_context_load(&env, graphs[i], &m, name ? name : "fused", &c->kernel);
        } else if (!st) {
            c->kernel = ep_kernel_create(&m, name ? name : "fused", &e->x, &e->opt, e->logger);
            if (!c->kernel) st = ep_status(ORT_FAIL, "out of memory");
        }
        /* ep.context_enable: the plan made now, its EPContext node returned */
        if (!st && !load && e->opt.ctx_enable && ep_context_nodes)
            st = ep_context_compile(&env, graphs[i], fused_nodes[i], ep_kernel_model(c->kernel),
                                    c->kernel, &ep_context_nodes[i]);
        if (st && c) {
            ep_kernel_destroy(c->kernel);
            free(c);
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
    /* host execution is finished when Compute returns; GPU work is on ORT's sync streams,
     * which ORT flushes (stream.c) when the run must end synchronized */
    (void)ep, (void)ro, (void)sync;
    return NULL;
}

/* The factory's: the same device allocator serves every session (ORT releases it through
 * the factory's ReleaseAllocator). */
static OrtStatus* ORT_API_CALL ep_create_allocator(OrtEp* ep, const OrtMemoryInfo* info,
                                                   OrtAllocator** allocator) {
    hip_ep* e = self(ep);
    *allocator = NULL;
    if (e->device == EP_DEVICE_CPU || !info) return NULL; /* ORT's CPU allocator */
    return ep_allocator_create(e->f, info, allocator);
}

static OrtStatus* ORT_API_CALL ep_create_sync_stream(OrtEp* ep, const OrtMemoryDevice* dev,
                                                     OrtSyncStreamImpl** stream) {
    hip_ep* e = self(ep);
    *stream = NULL;
    if (e->device == EP_DEVICE_CPU) return NULL; /* not stream aware on the CPU */
    return ep_stream_create(e->f, dev, stream);
}

static const char* ORT_API_CALL compat_info(OrtEp* ep, const OrtGraph* graph) {
    (void)ep, (void)graph;
    return "hipdnn-ep " HIPDNN_EP_VERSION;
}

/* A compiling EP; on the GPU it also has kernels for the Memcpy nodes ORT inserts. */
static OrtStatus* ORT_API_CALL get_kernel_registry(OrtEp* ep, const OrtKernelRegistry** reg) {
    *reg = self(ep)->registry;
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

OrtStatus* ep_create(ep_factory* f, const OrtSessionOptions* so, const OrtLogger* logger,
                     ep_device_kind device, OrtEp** out) {
    *out = NULL;
    hip_ep* e = calloc(1, sizeof(*e));
    if (!e) return ep_status(ORT_FAIL, "out of memory");
    e->logger = logger;
    e->device = device;
    e->f = f;
    e->x.factory = f;
    e->x.space = device == EP_DEVICE_CPU ? HIPDNN_MEMORY_HOST : HIPDNN_MEMORY_DEVICE;
    e->x.ordinal = f->gpu.ordinal;
    OrtStatus* st = ep_options_read(so, logger, &e->opt);
    /* the handle records the thread's device: make it the GPU offered */
    if (!st && device == EP_DEVICE_GPU) st = ep_gpu_enter(f->gpu.ordinal, "CreateEp");
    if (!st && device == EP_DEVICE_GPU) st = ep_memcpy_registry(f, &e->registry);
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
    hipdnnStatus_t hs = hipdnnCreate(&e->x.h);
    if (hs != HIPDNN_STATUS_SUCCESS) {
        st = ep_status(ORT_FAIL, "hipdnnCreate: %s: %s", hipdnnGetErrorString(hs),
                       hipdnnPeekLastErrorString_ext());
        if (e->registry) g_ep_api->ReleaseKernelRegistry(e->registry);
        free(e);
        return st;
    }
    pthread_mutex_init(&e->x.lock, NULL);
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
    char where[64] = "CPU";
    if (device == EP_DEVICE_GPU)
        snprintf(where, sizeof(where), "GPU %d (%s)", f->gpu.ordinal, f->gpu.runtime);
    ep_log(logger, e->opt.log_level, ORT_LOGGING_LEVEL_INFO,
           "created on the %s (heuristic mode %d%s%s)", where, (int)e->opt.heur,
           e->opt.engine[0] ? ", engine " : "", e->opt.engine);
    *out = b;
    return NULL;
}

void ep_destroy(OrtEp* ep) {
    if (!ep) return;
    hip_ep* e = self(ep);
    hipdnnDestroy(e->x.h);
    pthread_mutex_destroy(&e->x.lock);
    if (e->registry) g_ep_api->ReleaseKernelRegistry(e->registry);
    free(e);
}
