/* kernel.c — one fused node at run time.  Its hipdnn plan is built the first time a set
 * of input shapes is seen and kept (a dynamic batch size gets one plan per size); each
 * run looks the shapes up, asks ORT for outputs of the shapes the plan computes, and
 * executes the plan on the kernel context's memory.  Inputs with no elements are planned
 * like any others (lower.c leaves their values out of the graph, which may cut it into
 * parts, each run in turn); when every output is empty too, nothing runs.
 *
 * On the CPU device that memory is the host's and the plan has finished when execute
 * returns.  On the GPU it is device memory (ORT allocates it with allocator.c and copies
 * into it with transfer.c), declared so in the variant pack; the plan is enqueued on the
 * sync stream ORT gives the kernel context (stream.c), and the workspace, device memory
 * kept by the kernel across runs, is guarded by an event: a run on another stream first
 * waits for the last one that used it. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipdnn_ep.h"

typedef struct {
    ep_shape* in; /* the shapes the plan was built for, one per fused-node input */
    ep_plan plan;
    bool tuned; /* ep.hipdnn.autotune: its first run timed the candidates (autotune.c) */
} cached_plan;

/* Entries are never dropped while the kernel lives (one per distinct set of input shapes
 * seen), so a plan found under the lock can run outside it. */
struct ep_kernel {
    ep_model model;
    char name[256];
    ep_exec* x;
    ep_options opt;
    const OrtLogger* logger;
    pthread_mutex_t lock; /* guards the cache; then x->lock while a plan is built */
    cached_plan** cache;
    int n_cache, cap_cache;
    bool fixed; /* restored from an EPContext node: no ONNX nodes to plan other shapes */
    /* GPU only, guarded by x->lock */
    void* ws;
    size_t ws_size;
    hipdnnEvent_t ws_done; /* recorded on the stream of the last run that used ws */
    bool ws_used;
    /* EP_BIND_ZERO's float 0: host_zero on the CPU; on the GPU dev_zero, allocated (under
     * x->lock) by the first plan that reads it, never written after */
    float host_zero;
    void* dev_zero;
};

ep_kernel* ep_kernel_create(ep_model* m, const char* name, ep_exec* x, const ep_options* opt,
                            const OrtLogger* logger) {
    ep_kernel* k = calloc(1, sizeof(*k));
    if (!k) return NULL;
    k->model = *m;
    memset(m, 0, sizeof(*m));
    snprintf(k->name, sizeof(k->name), "%s", name);
    k->x = x;
    k->opt = *opt;
    k->logger = logger;
    pthread_mutex_init(&k->lock, NULL);
    return k;
}

const ep_model* ep_kernel_model(const ep_kernel* k) { return &k->model; }

/* The GPU workspace and its event, once no stream uses them any more. */
static void release_workspace(ep_kernel* k) {
    if (k->ws_used) hipdnnEventSynchronize_ext(k->ws_done);
    ep_device_free(k->x->factory, k->ws);
    k->ws = NULL;
    k->ws_size = 0;
    k->ws_used = false;
}

void ep_kernel_destroy(ep_kernel* k) {
    if (!k) return;
    if (k->x->space != HIPDNN_MEMORY_HOST) {
        OrtStatus* st = ep_gpu_enter(k->x->ordinal, "fused node release");
        if (st) g_ort->ReleaseStatus(st);
        release_workspace(k);
        if (k->ws_done) hipdnnEventDestroy_ext(k->ws_done);
        ep_device_free(k->x->factory, k->dev_zero);
    }
    for (int i = 0; i < k->n_cache; ++i) {
        ep_plan_free(&k->cache[i]->plan);
        free(k->cache[i]->in);
        free(k->cache[i]);
    }
    free(k->cache);
    ep_model_free(&k->model);
    pthread_mutex_destroy(&k->lock);
    free(k);
}

static bool shapes_equal(const ep_shape* a, const ep_shape* b, int n) {
    for (int i = 0; i < n; ++i)
        if (a[i].rank != b[i].rank ||
            memcmp(a[i].dims, b[i].dims, (size_t)a[i].rank * sizeof(int64_t)))
            return false;
    return true;
}

/* On the GPU, the float 0 a plan's EP_BIND_ZERO tensors read, made once; under x->lock. */
static OrtStatus* device_zero(ep_kernel* k, const ep_plan* p) {
    bool reads = false;
    for (int j = 0; j < p->n_parts; ++j)
        for (int i = 0; i < p->parts[j].n_bindings; ++i)
            reads = reads || p->parts[j].bindings[i].kind == EP_BIND_ZERO;
    if (!reads || k->dev_zero || k->x->space == HIPDNN_MEMORY_HOST) return NULL;
    void* z = NULL;
    OrtStatus* st = ep_device_alloc(k->x->factory, sizeof(float), k->name, &z);
    if (st) return st;
    hipdnnStatus_t hs = hipdnnDeviceMemset_ext(z, 0, sizeof(float));
    if (hs != HIPDNN_STATUS_SUCCESS) {
        st = ep_status(ORT_FAIL, "fused node '%s': hipdnnDeviceMemset_ext (a float 0 its empty "
                       "inputs' outputs are filled from): %s: %s", k->name,
                       hipdnnGetErrorString(hs), hipdnnPeekLastErrorString_ext());
        ep_device_free(k->x->factory, z);
        return st;
    }
    k->dev_zero = z;
    return NULL;
}

/* A new cache entry for input shapes `in` (its plan still empty), or NULL when out of
 * memory; under k->lock. */
static cached_plan* add_entry(ep_kernel* k, const ep_shape* in) {
    int n = k->model.n_inputs;
    if (k->n_cache == k->cap_cache) {
        int cap = k->cap_cache ? 2 * k->cap_cache : 4;
        cached_plan** c = realloc(k->cache, (size_t)cap * sizeof(*c));
        if (!c) return NULL;
        k->cache = c;
        k->cap_cache = cap;
    }
    cached_plan* e = calloc(1, sizeof(*e));
    if (e) e->in = malloc((size_t)(n ? n : 1) * sizeof(ep_shape));
    if (!e || !e->in) {
        if (e) free(e->in);
        free(e);
        return NULL;
    }
    memcpy(e->in, in, (size_t)n * sizeof(ep_shape));
    k->cache[k->n_cache++] = e;
    return e;
}

OrtStatus* ep_kernel_seed(ep_kernel* k, const ep_shape* in, ep_plan* p, bool fixed,
                          const char* how) {
    OrtStatus* st = NULL;
    pthread_mutex_lock(&k->lock);
    pthread_mutex_lock(&k->x->lock);
    if (k->x->space != HIPDNN_MEMORY_HOST) st = ep_gpu_enter(k->x->ordinal, k->name);
    if (!st) st = device_zero(k, p);
    pthread_mutex_unlock(&k->x->lock);
    cached_plan* e = st ? NULL : add_entry(k, in);
    if (!st && !e) st = ep_status(ORT_FAIL, "fused node '%s': out of memory", k->name);
    if (st) {
        ep_plan_free(p);
    } else {
        e->plan = *p;
        memset(p, 0, sizeof(*p));
        k->fixed = fixed;
        for (int j = 0; j < e->plan.n_parts; ++j)
            ep_log(k->logger, k->opt.log_level, ORT_LOGGING_LEVEL_INFO,
                   "fused node '%s': plan %d on engine %s (workspace %lld bytes, %d "
                   "attention as sdpa) %s", k->name, k->n_cache, e->plan.parts[j].engine,
                   (long long)e->plan.parts[j].workspace, e->plan.n_sdpa, how);
    }
    pthread_mutex_unlock(&k->lock);
    return st;
}

/* "[2, 3]" of each shape, one per input, into buf. */
static void shapes_str(const ep_shape* s, int n, char* buf, size_t len) {
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && used < len; ++i) {
        char one[160];
        ep_shape_str(&s[i], one, sizeof(one));
        int w = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", one);
        used = w < 0 ? len : used + (size_t)w;
    }
}

/* The plan for these input shapes, built when they are new.  With ep.hipdnn.autotune,
 * the first run of a plan gets its entry in *tune with k->lock still held: no other run
 * takes the plan until this one has tuned it (and unlocked). */
static OrtStatus* find_plan(ep_kernel* k, const ep_shape* in, const ep_plan** out,
                            cached_plan** tune) {
    int n = k->model.n_inputs;
    OrtStatus* st = NULL;
    pthread_mutex_lock(&k->lock);
    *out = NULL;
    *tune = NULL;
    for (int i = 0; i < k->n_cache && !*out; ++i)
        if (shapes_equal(k->cache[i]->in, in, n)) *out = &k->cache[i]->plan;
    if (!*out && k->fixed) {
        char want[512], got[512];
        shapes_str(k->cache[0]->in, n, want, sizeof(want));
        shapes_str(in, n, got, sizeof(got));
        st = ep_status(ORT_INVALID_ARGUMENT, "fused node '%s' runs the plan of its EPContext "
                       "node, made for inputs of shapes %s; this run gives %s (compile the "
                       "model again for these shapes)", k->name, want, got);
    } else if (!*out) {
        cached_plan* e = calloc(1, sizeof(*e));
        if (e) e->in = malloc((size_t)(n ? n : 1) * sizeof(ep_shape));
        if (k->n_cache == k->cap_cache) {
            int cap = k->cap_cache ? 2 * k->cap_cache : 4;
            cached_plan** c = realloc(k->cache, (size_t)cap * sizeof(*c));
            if (c) {
                k->cache = c;
                k->cap_cache = cap;
            }
        }
        if (!e || !e->in || k->n_cache == k->cap_cache)
            st = ep_status(ORT_FAIL, "fused node '%s': out of memory", k->name);
        if (!st) {
            /* the handle is used by one thread at a time (hipdnn.h): another fused node's
             * plan or execute waits */
            pthread_mutex_lock(&k->x->lock);
            st = ep_lower(&k->model, in, k->x->h, &k->opt, k->x->space, k->name, &e->plan);
            if (!st && (st = device_zero(k, &e->plan))) ep_plan_free(&e->plan);
            pthread_mutex_unlock(&k->x->lock);
        }
        if (st) {
            if (e) free(e->in);
            free(e);
        } else {
            memcpy(e->in, in, (size_t)n * sizeof(ep_shape));
            k->cache[k->n_cache++] = e;
            *out = &e->plan;
            for (int j = 0; j < e->plan.n_parts; ++j)
                ep_log(k->logger, k->opt.log_level, ORT_LOGGING_LEVEL_INFO,
                       "fused node '%s': plan %d built on engine %s (%d ONNX nodes, "
                       "workspace %lld bytes, %d attention as sdpa)%s", k->name, k->n_cache,
                       e->plan.parts[j].engine, k->model.n_nodes,
                       (long long)e->plan.parts[j].workspace, e->plan.n_sdpa,
                       e->plan.n_parts > 1 ? ", one of the graphs empty inputs cut it into" : "");
            if (!e->plan.n_parts)
                ep_log(k->logger, k->opt.log_level, ORT_LOGGING_LEVEL_INFO,
                       "fused node '%s': plan %d computes nothing (every output is empty)",
                       k->name, k->n_cache);
        }
    }
    for (int i = 0; !st && k->opt.autotune && i < k->n_cache; ++i)
        if (&k->cache[i]->plan == *out && !k->cache[i]->tuned && (*out)->n_parts) *tune = k->cache[i];
    if (!*tune) pthread_mutex_unlock(&k->lock);
    return st;
}

/* On the GPU every tensor ORT hands a fused node must be in hipdnn-ep's device memory;
 * anything else is ORT's mistake or an application's, said here rather than by a fault. */
static OrtStatus* check_on_device(const ep_kernel* k, const OrtValue* v, const char* port, int i,
                                  int value) {
    if (k->x->space == HIPDNN_MEMORY_HOST) return NULL;
    const OrtMemoryDevice* d = g_ep_api->Value_GetMemoryDevice(v);
    if (d && g_ep_api->MemoryDevice_AreEqual(d, k->x->factory->gpu_memory_device)) return NULL;
    return ep_status(ORT_INVALID_ARGUMENT, "fused node '%s': %s %d '%s' is not in the device "
                     "memory of GPU %d (memory type %d of device type %d); plans on the GPU "
                     "read and write device memory only", k->name, port, i,
                     value >= 0 ? k->model.values[value].name : "?", k->x->ordinal,
                     d ? (int)g_ep_api->MemoryDevice_GetMemoryType(d) : -1,
                     d ? (int)g_ep_api->MemoryDevice_GetDeviceType(d) : -1);
}

static OrtStatus* read_inputs(ep_kernel* k, OrtKernelContext* ctx, ep_shape* shapes,
                              void** ptrs) {
    const ep_model* m = &k->model;
    for (int i = 0; i < m->n_inputs; ++i) {
        const OrtValue* v = NULL;
        OrtStatus* st = g_ort->KernelContext_GetInput(ctx, (size_t)i, &v);
        if (st) return st;
        if (!v) continue;
        ONNXTensorElementDataType et;
        const int64_t* dims = NULL;
        size_t nd = 0;
        if ((st = g_ort->GetTensorElementTypeAndShapeDataReference(v, &et, &dims, &nd))) return st;
        bool is_float = et == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT ||
                        et == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16;
        if (nd > EP_MAX_RANK)
            return ep_status(ORT_INVALID_ARGUMENT, "%s: input %d has rank %zu (at most %d)",
                             k->name, i, nd, EP_MAX_RANK);
        shapes[i].rank = (int)nd;
        for (size_t d = 0; d < nd; ++d) shapes[i].dims[d] = dims[d];
        /* an int64 input (a Reshape's shape, a reduction's axes) is read at plan time from
         * the model, never from memory: only the float tensors must be on the device */
        if (is_float && (st = check_on_device(k, v, "input", i, m->inputs[i])))
            return st;
        if ((st = g_ort->GetTensorData(v, (const void**)&ptrs[i]))) return st;
    }
    return NULL;
}

/* A finalized variant pack for plan part p; the caller destroys it. */
static hipdnnStatus_t make_pack(const ep_plan_part* p, const int64_t* uids, void* const* ptrs,
                                const int64_t* spaces, void* ws, hipdnnBackendDescriptor_t* out) {
    hipdnnBackendDescriptor_t pack = NULL;
    hipdnnStatus_t hs = hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack);
    if (hs == HIPDNN_STATUS_SUCCESS)
        hs = hipdnnBackendSetAttribute(pack, HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, HIPDNN_TYPE_INT64,
                                       p->n_bindings, uids);
    if (hs == HIPDNN_STATUS_SUCCESS)
        hs = hipdnnBackendSetAttribute(pack, HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                       HIPDNN_TYPE_VOID_PTR, p->n_bindings, ptrs);
    if (hs == HIPDNN_STATUS_SUCCESS && spaces)
        hs = hipdnnBackendSetAttribute(pack, HIPDNN_ATTR_VARIANT_PACK_MEMORY_SPACES_EXT,
                                       HIPDNN_TYPE_INT64, p->n_bindings, spaces);
    if (hs == HIPDNN_STATUS_SUCCESS)
        hs = hipdnnBackendSetAttribute(pack, HIPDNN_ATTR_VARIANT_PACK_WORKSPACE,
                                       HIPDNN_TYPE_VOID_PTR, 1, &ws);
    if (hs == HIPDNN_STATUS_SUCCESS) hs = hipdnnBackendFinalize(pack);
    *out = pack;
    return hs;
}

static OrtStatus* exec_failed(const ep_kernel* k, const ep_plan_part* p, const char* what,
                              hipdnnStatus_t hs) {
    return ep_status(ORT_FAIL, "fused node '%s' (engine %s): %s: %s: %s", k->name, p->engine,
                     what, hipdnnGetErrorString(hs), hipdnnPeekLastErrorString_ext());
}

/* Host plans: a workspace of host memory per run; done when execute returns. */
static OrtStatus* run_on_host(ep_kernel* k, const ep_plan_part* p, const int64_t* uids,
                              void* const* ptrs) {
    void* ws = p->workspace > 0 ? malloc((size_t)p->workspace) : NULL;
    if (p->workspace > 0 && !ws)
        return ep_status(ORT_FAIL, "fused node '%s': out of memory for a %lld-byte workspace",
                         k->name, (long long)p->workspace);
    hipdnnBackendDescriptor_t pack = NULL;
    hipdnnStatus_t hs = make_pack(p, uids, ptrs, NULL, ws, &pack);
    if (hs == HIPDNN_STATUS_SUCCESS) hs = hipdnnBackendExecute(k->x->h, p->plan, pack);
    OrtStatus* st = hs == HIPDNN_STATUS_SUCCESS ? NULL : exec_failed(k, p, "execute", hs);
    hipdnnBackendDestroyDescriptor(pack);
    free(ws);
    return st;
}

/* Device plans: enqueued on ORT's stream for this kernel context, under the EP's lock
 * (the stream is the handle's, set per execute). */
static OrtStatus* run_on_device(ep_kernel* k, OrtKernelContext* ctx, const ep_plan_part* p,
                                const int64_t* uids, void* const* ptrs) {
    void* stream = NULL;
    OrtStatus* st = g_ort->KernelContext_GetGPUComputeStream(ctx, &stream);
    if (st) return st;
    int64_t* spaces = malloc((size_t)(p->n_bindings ? p->n_bindings : 1) * sizeof(int64_t));
    if (!spaces) return ep_status(ORT_FAIL, "fused node '%s': out of memory", k->name);
    for (int i = 0; i < p->n_bindings; ++i) spaces[i] = HIPDNN_MEMORY_DEVICE;
    hipdnnBackendDescriptor_t pack = NULL;
    hipdnnStatus_t hs = HIPDNN_STATUS_SUCCESS;
    const char* what = "execute";
    pthread_mutex_lock(&k->x->lock);
    st = ep_gpu_enter(k->x->ordinal, k->name);
    size_t need = p->workspace > 0 ? (size_t)p->workspace : 0;
    if (!st && need > k->ws_size) {
        release_workspace(k);
        st = ep_device_alloc(k->x->factory, need, k->name, &k->ws);
        if (!st) k->ws_size = need;
    }
    /* made with the first workspace, which autotuning may have allocated (tune_part) */
    if (!st && need && !k->ws_done && (hs = hipdnnEventCreate_ext(&k->ws_done)) != HIPDNN_STATUS_SUCCESS)
        what = "hipdnnEventCreate_ext";
    if (!st && hs == HIPDNN_STATUS_SUCCESS && need && k->ws_used &&
        (hs = hipdnnStreamWaitEvent_ext(stream, k->ws_done)) != HIPDNN_STATUS_SUCCESS)
        what = "hipdnnStreamWaitEvent_ext (the workspace's last run)";
    if (!st && hs == HIPDNN_STATUS_SUCCESS &&
        (hs = hipdnnSetStream(k->x->h, stream)) != HIPDNN_STATUS_SUCCESS)
        what = "hipdnnSetStream (ORT's sync stream)";
    if (!st && hs == HIPDNN_STATUS_SUCCESS &&
        (hs = make_pack(p, uids, ptrs, spaces, need ? k->ws : NULL, &pack)) != HIPDNN_STATUS_SUCCESS)
        what = "variant pack";
    if (!st && hs == HIPDNN_STATUS_SUCCESS)
        hs = hipdnnBackendExecute(k->x->h, p->plan, pack);
    if (!st && hs == HIPDNN_STATUS_SUCCESS && need) {
        if ((hs = hipdnnEventRecord_ext(k->ws_done, stream)) != HIPDNN_STATUS_SUCCESS)
            what = "hipdnnEventRecord_ext (after the run)";
        else
            k->ws_used = true;
    }
    if (!st && hs != HIPDNN_STATUS_SUCCESS) st = exec_failed(k, p, what, hs);
    pthread_mutex_unlock(&k->x->lock);
    hipdnnBackendDestroyDescriptor(pack);
    free(spaces);
    return st;
}

/* ep.hipdnn.autotune: part p's candidate configs (ep_plan_candidates) timed on this run's
 * buffers by hipdnnAutotune_ext (outputs put back, inputs only read), the fastest stored
 * in the plan cache and put in p's place; a failure leaves p as it was, with a warning. */
static void tune_part(ep_kernel* k, OrtKernelContext* ctx, ep_plan_part* p, const int64_t* uids,
                      void* const* ptrs) {
    ep_plan_part cand[EP_TUNE_MAX];
    int64_t spaces[EP_TUNE_BINDINGS], need = 0, best = -1;
    void* stream = NULL;
    OrtStatus* st = NULL;
    if (p->from_cache) { /* tuned before, by this option in another session or by the user */
        ep_log(k->logger, k->opt.log_level, ORT_LOGGING_LEVEL_INFO,
               "fused node '%s': autotune: the plan on %s is the plan cache's tuned one; not "
               "tuned again", k->name, p->engine);
        return;
    }
    memset(cand, 0, sizeof(cand));
    pthread_mutex_lock(&k->x->lock);
    bool host = k->x->space == HIPDNN_MEMORY_HOST;
    if (!host) st = ep_gpu_enter(k->x->ordinal, k->name);
    if (!st && !host) st = g_ort->KernelContext_GetGPUComputeStream(ctx, &stream);
    int n = st || p->n_bindings > EP_TUNE_BINDINGS
                ? 0 : ep_plan_candidates(k->x->h, p->graph, &k->opt, k->x->space, cand, EP_TUNE_MAX);
    for (int i = 0; i < n; ++i) need = cand[i].workspace > need ? cand[i].workspace : need;
    for (int i = 0; i < p->n_bindings && i < EP_TUNE_BINDINGS; ++i) spaces[i] = HIPDNN_MEMORY_DEVICE;
    void* ws = NULL;
    if (n && host && need) ws = malloc((size_t)need);
    if (n && !host && need > (int64_t)k->ws_size) {
        release_workspace(k);
        if (!(st = ep_device_alloc(k->x->factory, (size_t)need, k->name, &k->ws)))
            k->ws_size = (size_t)need;
    } else if (n && !host && k->ws_used) {
        hipdnnEventSynchronize_ext(k->ws_done); /* the last run on another stream */
    }
    if (!host) ws = k->ws;
    hipdnnBackendDescriptor_t pack = NULL;
    char why[1024] = "";
    bool ok = n && !st && (!need || ws) && (host || hipdnnSetStream(k->x->h, stream) == 0) &&
              make_pack(p, uids, ptrs, host ? NULL : spaces, need ? ws : NULL, &pack) == 0 &&
              ep_autotune_run(k->x->h, k->name, cand, n, pack, k->opt.autotune_budget_ms,
                              k->logger, k->opt.log_level, &best, why, sizeof(why));
    hipdnnBackendDestroyDescriptor(pack);
    if (host) free(ws);
    for (int i = 0; i < n; ++i)
        if (i != best || !ok) hipdnnBackendDestroyDescriptor(cand[i].plan);
    if (ok) { /* the winner takes p's place; p keeps its graph and bindings */
        hipdnnBackendDestroyDescriptor(p->plan);
        p->plan = cand[best].plan;
        p->workspace = cand[best].workspace;
        memcpy(p->engine, cand[best].engine, sizeof(p->engine));
        p->n_knobs = cand[best].n_knobs;
        memcpy(p->knobs, cand[best].knobs, sizeof(p->knobs));
    }
    pthread_mutex_unlock(&k->x->lock);
    if (!ok)
        ep_log(k->logger, k->opt.log_level, ORT_LOGGING_LEVEL_WARNING, "fused node '%s': "
               "autotune left the plan on engine %s: %s", k->name, p->engine,
               st ? g_ort->GetErrorMessage(st) : why[0] ? why : n ? "no workspace or variant "
               "pack" : "no candidate config built");
    if (st) g_ort->ReleaseStatus(st);
}

OrtStatus* ep_kernel_compute(ep_kernel* k, OrtKernelContext* ctx) {
    const ep_model* m = &k->model;
    int n_in = m->n_inputs, n_out = m->n_outputs;
    ep_shape* shapes = calloc((size_t)(n_in ? n_in : 1), sizeof(ep_shape));
    void** in_ptr = calloc((size_t)(n_in ? n_in : 1), sizeof(void*));
    void** out_ptr = calloc((size_t)(n_out ? n_out : 1), sizeof(void*));
    const ep_plan* p = NULL;
    cached_plan* tune = NULL;
    OrtStatus* st = (!shapes || !in_ptr || !out_ptr) ? ep_status(ORT_FAIL, "out of memory") : NULL;
    if (!st) st = read_inputs(k, ctx, shapes, in_ptr);
    if (!st) st = find_plan(k, shapes, &p, &tune);
    for (int i = 0; !st && i < n_out; ++i) {
        OrtValue* v = NULL;
        st = g_ort->KernelContext_GetOutput(ctx, (size_t)i, p->out_shapes[i].dims,
                                            (size_t)p->out_shapes[i].rank, &v);
        if (!st && v) st = check_on_device(k, v, "output", i, m->outputs[i]);
        if (!st && v) st = g_ort->GetTensorMutableData(v, &out_ptr[i]);
    }
    /* each part in turn (none when every output is empty: their shapes were all there
     * was); parts share no tensor, so their order does not matter */
    int most = 1;
    for (int j = 0; !st && j < p->n_parts; ++j)
        if (p->parts[j].n_bindings > most) most = p->parts[j].n_bindings;
    int64_t* uids = st ? NULL : calloc((size_t)most, sizeof(int64_t));
    void** ptrs = st ? NULL : calloc((size_t)most, sizeof(void*));
    if (!st && (!uids || !ptrs)) st = ep_status(ORT_FAIL, "out of memory");
    void* zero = k->x->space == HIPDNN_MEMORY_HOST ? (void*)&k->host_zero : k->dev_zero;
    for (int j = 0; !st && j < p->n_parts; ++j) {
        const ep_plan_part* part = &p->parts[j];
        for (int i = 0; i < part->n_bindings; ++i) {
            const ep_binding* b = &part->bindings[i];
            uids[i] = b->uid;
            ptrs[i] = b->kind == EP_BIND_INPUT    ? in_ptr[b->index]
                      : b->kind == EP_BIND_OUTPUT ? out_ptr[b->index]
                                                  : zero;
        }
        /* the real run below overwrites the outputs the timing runs wrote (and restored) */
        if (tune) tune_part(k, ctx, &tune->plan.parts[j], uids, ptrs);
        st = k->x->space == HIPDNN_MEMORY_HOST ? run_on_host(k, part, uids, ptrs)
                                               : run_on_device(k, ctx, part, uids, ptrs);
    }
    if (tune) {
        tune->tuned = true;
        pthread_mutex_unlock(&k->lock);
    }
    free(uids);
    free(ptrs);
    free(shapes);
    free(in_ptr);
    free(out_ptr);
    return st;
}
