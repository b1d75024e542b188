/* kernel.c — one fused node at run time.  Its hipdnn plan is built the first time a set
 * of input shapes is seen and kept (a dynamic batch size gets one plan per size); each
 * run looks the shapes up, asks ORT for outputs of the shapes the plan computes, and
 * executes the plan on the kernel context's memory. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipdnn_ep.h"

typedef struct {
    ep_shape* in; /* the shapes the plan was built for, one per fused-node input */
    ep_plan plan;
} cached_plan;

/* Entries are never dropped while the kernel lives (one per distinct set of input shapes
 * seen), so a plan found under the lock can run outside it. */
struct ep_kernel {
    ep_model model;
    char name[256];
    hipdnnHandle_t h;
    ep_options opt;
    hipdnnMemorySpace_t space;
    const OrtLogger* logger;
    pthread_mutex_t lock; /* guards the cache; plans themselves run concurrently */
    cached_plan** cache;
    int n_cache, cap_cache;
};

ep_kernel* ep_kernel_create(ep_model* m, const char* name, hipdnnHandle_t h,
                            const ep_options* opt, hipdnnMemorySpace_t space,
                            const OrtLogger* logger) {
    ep_kernel* k = calloc(1, sizeof(*k));
    if (!k) return NULL;
    k->model = *m;
    memset(m, 0, sizeof(*m));
    snprintf(k->name, sizeof(k->name), "%s", name);
    k->h = h;
    k->opt = *opt;
    k->space = space;
    k->logger = logger;
    pthread_mutex_init(&k->lock, NULL);
    return k;
}

void ep_kernel_destroy(ep_kernel* k) {
    if (!k) return;
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

/* The plan for these input shapes, built when they are new. */
static OrtStatus* find_plan(ep_kernel* k, const ep_shape* in, const ep_plan** out) {
    int n = k->model.n_inputs;
    OrtStatus* st = NULL;
    pthread_mutex_lock(&k->lock);
    *out = NULL;
    for (int i = 0; i < k->n_cache && !*out; ++i)
        if (shapes_equal(k->cache[i]->in, in, n)) *out = &k->cache[i]->plan;
    if (!*out) {
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
        if (!st) st = ep_lower(&k->model, in, k->h, &k->opt, k->space, k->name, &e->plan);
        if (st) {
            if (e) free(e->in);
            free(e);
        } else {
            memcpy(e->in, in, (size_t)n * sizeof(ep_shape));
            k->cache[k->n_cache++] = e;
            *out = &e->plan;
            ep_log(k->logger, k->opt.log_level, ORT_LOGGING_LEVEL_INFO,
                   "fused node '%s': plan %d built on engine %s (%d ONNX nodes, workspace "
                   "%lld bytes)", k->name, k->n_cache, e->plan.engine, k->model.n_nodes,
                   (long long)e->plan.workspace);
        }
    }
    pthread_mutex_unlock(&k->lock);
    return st;
}

OrtStatus* ep_kernel_compute(ep_kernel* k, OrtKernelContext* ctx) {
    const ep_model* m = &k->model;
    int n_in = m->n_inputs, n_out = m->n_outputs;
    ep_shape* shapes = calloc((size_t)(n_in ? n_in : 1), sizeof(ep_shape));
    void** in_ptr = calloc((size_t)(n_in ? n_in : 1), sizeof(void*));
    void** out_ptr = calloc((size_t)(n_out ? n_out : 1), sizeof(void*));
    const ep_plan* p = NULL;
    OrtStatus* st = (!shapes || !in_ptr || !out_ptr) ? ep_status(ORT_FAIL, "out of memory") : NULL;
    for (int i = 0; !st && i < n_in; ++i) {
        const OrtValue* v = NULL;
        st = g_ort->KernelContext_GetInput(ctx, (size_t)i, &v);
        if (st || !v) continue;
        ONNXTensorElementDataType et;
        const int64_t* dims = NULL;
        size_t nd = 0;
        st = g_ort->GetTensorElementTypeAndShapeDataReference(v, &et, &dims, &nd);
        if (st) break;
        if (nd > EP_MAX_RANK) {
            st = ep_status(ORT_INVALID_ARGUMENT, "%s: input %d has rank %zu (at most %d)",
                           k->name, i, nd, EP_MAX_RANK);
            break;
        }
        shapes[i].rank = (int)nd;
        for (size_t d = 0; d < nd; ++d) {
            shapes[i].dims[d] = dims[d];
            if (dims[d] < 1 && et == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT)
                st = ep_status(ORT_INVALID_ARGUMENT, "%s: input %d '%s' has an empty dim %zu; "
                               "hipdnn needs every dim >= 1", k->name, i,
                               m->inputs[i] >= 0 ? m->values[m->inputs[i]].name : "?", d);
        }
        if (!st) st = g_ort->GetTensorData(v, (const void**)&in_ptr[i]);
    }
    if (!st) st = find_plan(k, shapes, &p);
    for (int i = 0; !st && i < n_out; ++i) {
        OrtValue* v = NULL;
        st = g_ort->KernelContext_GetOutput(ctx, (size_t)i, p->out_shapes[i].dims,
                                            (size_t)p->out_shapes[i].rank, &v);
        if (!st && v) st = g_ort->GetTensorMutableData(v, &out_ptr[i]);
    }
    int64_t* uids = NULL;
    void** ptrs = NULL;
    void* ws = NULL;
    if (!st) {
        uids = calloc((size_t)(p->n_bindings ? p->n_bindings : 1), sizeof(int64_t));
        ptrs = calloc((size_t)(p->n_bindings ? p->n_bindings : 1), sizeof(void*));
        ws = p->workspace > 0 ? malloc((size_t)p->workspace) : NULL;
        if (!uids || !ptrs || (p->workspace > 0 && !ws)) st = ep_status(ORT_FAIL, "out of memory");
    }
    for (int i = 0; !st && i < p->n_bindings; ++i) {
        uids[i] = p->bindings[i].uid;
        ptrs[i] = p->bindings[i].kind == EP_BIND_INPUT ? in_ptr[p->bindings[i].index]
                                                      : out_ptr[p->bindings[i].index];
    }
    if (!st) {
        hipdnnBackendDescriptor_t pack = NULL;
        hipdnnStatus_t hs = hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack);
        if (hs == HIPDNN_STATUS_SUCCESS)
            hs = hipdnnBackendSetAttribute(pack, HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
                                           HIPDNN_TYPE_INT64, p->n_bindings, uids);
        if (hs == HIPDNN_STATUS_SUCCESS)
            hs = hipdnnBackendSetAttribute(pack, HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                           HIPDNN_TYPE_VOID_PTR, p->n_bindings, ptrs);
        if (hs == HIPDNN_STATUS_SUCCESS)
            hs = hipdnnBackendSetAttribute(pack, HIPDNN_ATTR_VARIANT_PACK_WORKSPACE,
                                           HIPDNN_TYPE_VOID_PTR, 1, &ws);
        if (hs == HIPDNN_STATUS_SUCCESS) hs = hipdnnBackendFinalize(pack);
        if (hs == HIPDNN_STATUS_SUCCESS) hs = hipdnnBackendExecute(k->h, p->plan, pack);
        if (hs != HIPDNN_STATUS_SUCCESS)
            st = ep_status(ORT_FAIL, "fused node '%s' (engine %s): execute: %s: %s", k->name,
                           p->engine, hipdnnGetErrorString(hs), hipdnnPeekLastErrorString_ext());
        hipdnnBackendDestroyDescriptor(pack);
    }
    free(uids);
    free(ptrs);
    free(ws);
    free(shapes);
    free(in_ptr);
    free(out_ptr);
    return st;
}
