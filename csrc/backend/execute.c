/* VARIANT_PACK descriptors and hipdnnBackendExecute: check that every tensor the graph
 * reads or writes has a pointer in the engine's memory space, then run the plugin. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aliasing.h"
#include "descriptor.h"
#include "device.h"
#include "error.h"
#include "plan.h"
#include "registry.h"

/* A pack's uid and its position, sorted by uid at finalize: execute looks every graph
 * tensor up in the pack, and a scan per tensor made a 8000-tensor pack cost 0.4 s per call
 * (the duplicate check at finalize was quadratic too: 2^16 uids took 7 s). */
typedef struct {
    int64_t uid;
    int64_t index;
} uid_index;

/* Packs of up to PACK_INLINE tensors keep their arrays in the descriptor: a pack made for
 * each call (cuDNN frontend's execute, hipdnn's Python) then allocates only the descriptor. */
#define PACK_INLINE 8

typedef struct {
    int64_t num_uids;
    int64_t* uids;
    uid_index* sorted; /* after finalize */
    int64_t num_ptrs;
    void** ptrs;
    int64_t num_spaces; /* 0: probe each pointer */
    int64_t* spaces;    /* hipdnnMemorySpace_t per pointer, as the caller declared */
    void* workspace;
    int64_t own_uids[PACK_INLINE];
    uid_index own_sorted[PACK_INLINE];
    void* own_ptrs[PACK_INLINE];
    int64_t own_spaces[PACK_INLINE];
} pack_state;

#define V(d) ((pack_state*)(d)->state)

/* Frees an array unless it is the descriptor's own. */
static void release(void* p, const void* own) {
    if (p != own) free(p);
}

static void pack_destroy(hipdnnBackendDescriptor_t d) {
    pack_state* s = V(d);
    release(s->uids, s->own_uids);
    release(s->sorted, s->own_sorted);
    release(s->ptrs, s->own_ptrs);
    release(s->spaces, s->own_spaces);
}

/* A copy of v's count elements of `size` bytes in place of *slot: in `own` (room for
 * PACK_INLINE) when they fit, else allocated.  False when out of memory (*slot kept). */
static bool store(void** slot, void* own, const void* v, int64_t count, size_t size) {
    void* copy = count <= PACK_INLINE ? own : malloc((size_t)count * size + 1);
    if (!copy) return false;
    if (count) memmove(copy, v, (size_t)count * size);
    if (*slot != copy) release(*slot, own);
    *slot = copy;
    return true;
}

static hipdnnStatus_t pack_set(hipdnnBackendDescriptor_t d, hipdnnBackendAttributeName_t name,
                               hipdnnBackendAttributeType_t type, int64_t count, const void* v) {
    pack_state* s = V(d);
    hipdnnStatus_t st;
    switch (name) {
    case HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS: {
        if ((st = hipdnnAttrExpect("VARIANT_PACK", "UNIQUE_IDS", HIPDNN_TYPE_INT64, type, count, 0,
                                   1 << 20, v)))
            return st;
        if (!store((void**)&s->uids, s->own_uids, v, count, sizeof(int64_t)))
            return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory");
        s->num_uids = count;
        return HIPDNN_STATUS_SUCCESS;
    }
    case HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS: {
        if ((st = hipdnnAttrExpect("VARIANT_PACK", "DATA_POINTERS", HIPDNN_TYPE_VOID_PTR, type, count,
                                   0, 1 << 20, v)))
            return st;
        if (!store((void**)&s->ptrs, s->own_ptrs, v, count, sizeof(void*)))
            return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory");
        s->num_ptrs = count;
        return HIPDNN_STATUS_SUCCESS;
    }
    case HIPDNN_ATTR_VARIANT_PACK_WORKSPACE:
        if ((st = hipdnnAttrExpect("VARIANT_PACK", "WORKSPACE", HIPDNN_TYPE_VOID_PTR, type, count, 1,
                                   1, v)))
            return st;
        s->workspace = *(void* const*)v;
        return HIPDNN_STATUS_SUCCESS;
    case HIPDNN_ATTR_VARIANT_PACK_MEMORY_SPACES_EXT: {
        if ((st = hipdnnAttrExpect("VARIANT_PACK", "MEMORY_SPACES_EXT", HIPDNN_TYPE_INT64, type,
                                   count, 0, 1 << 20, v)))
            return st;
        const int64_t* m = v;
        for (int64_t i = 0; i < count; ++i)
            if (m[i] != HIPDNN_MEMORY_HOST && m[i] != HIPDNN_MEMORY_DEVICE &&
                m[i] != HIPDNN_MEMORY_MANAGED)
                return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                                  "VARIANT_PACK: MEMORY_SPACES_EXT[%lld] = %lld is no memory space",
                                  (long long)i, (long long)m[i]);
        if (!store((void**)&s->spaces, s->own_spaces, v, count, sizeof(int64_t)))
            return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory");
        s->num_spaces = count;
        return HIPDNN_STATUS_SUCCESS;
    }
    default: return hipdnnAttrUnknown("VARIANT_PACK", name);
    }
}

static hipdnnStatus_t pack_get(hipdnnBackendDescriptor_t d, hipdnnBackendAttributeName_t name,
                               hipdnnBackendAttributeType_t type, int64_t req, int64_t* count,
                               void* v) {
    pack_state* s = V(d);
    switch (name) {
    case HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS:
        return hipdnnAttrReturn("VARIANT_PACK", "UNIQUE_IDS", HIPDNN_TYPE_INT64, type, req, count, v,
                                s->uids, s->num_uids, sizeof(int64_t));
    case HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS:
        return hipdnnAttrReturn("VARIANT_PACK", "DATA_POINTERS", HIPDNN_TYPE_VOID_PTR, type, req,
                                count, v, s->ptrs, s->num_ptrs, sizeof(void*));
    case HIPDNN_ATTR_VARIANT_PACK_WORKSPACE:
        return hipdnnAttrReturn("VARIANT_PACK", "WORKSPACE", HIPDNN_TYPE_VOID_PTR, type, req, count,
                                v, &s->workspace, 1, sizeof(void*));
    default: return hipdnnAttrUnknown("VARIANT_PACK", name);
    }
}

static int by_uid(const void* a, const void* b) {
    int64_t x = ((const uid_index*)a)->uid, y = ((const uid_index*)b)->uid;
    return (x > y) - (x < y);
}

static hipdnnStatus_t pack_finalize(hipdnnBackendDescriptor_t d) {
    pack_state* s = V(d);
    if (s->num_uids != s->num_ptrs)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                          "VARIANT_PACK: %lld unique ids but %lld data pointers",
                          (long long)s->num_uids, (long long)s->num_ptrs);
    if (s->num_spaces != 0 && s->num_spaces != s->num_uids)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                          "VARIANT_PACK: %lld unique ids but %lld memory spaces",
                          (long long)s->num_uids, (long long)s->num_spaces);
    uid_index* sorted = s->num_uids <= PACK_INLINE
                            ? s->own_sorted
                            : malloc((size_t)s->num_uids * sizeof(*sorted) + 1);
    if (!sorted) return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory");
    for (int64_t i = 0; i < s->num_uids; ++i) sorted[i] = (uid_index){s->uids[i], i};
    if (sorted != s->own_sorted) {
        qsort(sorted, (size_t)s->num_uids, sizeof(*sorted), by_uid);
    } else { /* a few: in place (qsort allocates) */
        for (int64_t i = 1; i < s->num_uids; ++i) {
            uid_index x = sorted[i];
            int64_t j = i;
            for (; j > 0 && sorted[j - 1].uid > x.uid; --j) sorted[j] = sorted[j - 1];
            sorted[j] = x;
        }
    }
    for (int64_t i = 1; i < s->num_uids; ++i)
        if (sorted[i].uid == sorted[i - 1].uid) {
            long long twice = (long long)sorted[i].uid;
            release(sorted, s->own_sorted);
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "VARIANT_PACK: uid %lld appears twice",
                              twice);
        }
    release(s->sorted, s->own_sorted);
    s->sorted = sorted;
    return HIPDNN_STATUS_SUCCESS;
}

const hipdnnDescriptorClass hipdnnVariantPackClass = {
    "VARIANT_PACK", sizeof(pack_state), NULL, pack_destroy, pack_set, pack_get, pack_finalize,
};

static const char* space_name(hipdnnMemorySpace_t m) {
    return m == HIPDNN_MEMORY_DEVICE ? "device" : m == HIPDNN_MEMORY_MANAGED ? "managed" : "host";
}

/* What the runtime says of one pointer. */
typedef struct {
    hipdnnMemorySpace_t where;
    int device; /* -1: host */
    int ranged; /* base and size are the runtime's answer (size 0: none) */
    uintptr_t base;
    size_t size;
    bool cached; /* the answer was the pointer cache's, not asked now */
} ptr_facts;

/* Where pointer i of the pack lives.  While only host engines are loaded no GPU runtime
 * is ever loaded to ask: the declared space (or host) stands.  Otherwise the runtime's
 * answer for every pointer, whatever was declared, so that a wrong declaration is refused
 * here instead of faulting in a kernel, with the range of device memory for the extent
 * check: asked once per allocation and thread while hipdnn frees nothing
 * (pointer_cache.c). */
static hipdnnStatus_t space_of(const pack_state* vp, int64_t i, const hipdnnSdkTensor* t,
                               ptr_facts* f, bool fresh) {
    hipdnnMemorySpace_t declared =
        vp->num_spaces ? (hipdnnMemorySpace_t)vp->spaces[i] : HIPDNN_MEMORY_HOST;
    hipdnnMemorySpace_t* where = &f->where;
    *f = (ptr_facts){declared, -1, 0, 0, 0, false};
    if (!hipdnnRegistryHasDeviceEngine()) return HIPDNN_STATUS_SUCCESS;
    const hipdnnDeviceRuntime* rt = hipdnnDeviceRuntimeGet();
    if (rt) {
        f->cached = hipdnnDevicePointerFacts(rt, vp->ptrs[i], where, &f->device, &f->base,
                                             &f->size, fresh);
        f->ranged = 1;
    } else {
        *where = HIPDNN_MEMORY_HOST;
    }
    if (vp->num_spaces && declared != *where && *where != HIPDNN_MEMORY_MANAGED)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                          "variant pack: tensor '%s' (uid %lld) is declared %s memory but the "
                          "%s runtime reports %s memory at %p", t->name, (long long)t->uid,
                          space_name(declared), rt ? rt->name : "GPU", space_name(*where),
                          vp->ptrs[i]);
    return HIPDNN_STATUS_SUCCESS;
}

/* The index of `uid` in a finalized pack; -1 if absent. */
static int64_t find_uid(const pack_state* vp, int64_t uid) {
    int64_t lo = 0, hi = vp->num_uids;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (vp->sorted[mid].uid < uid) lo = mid + 1;
        else hi = mid;
    }
    return lo < vp->num_uids && vp->sorted[lo].uid == uid ? vp->sorted[lo].index : -1;
}

/* The arguments are live objects of the right kinds, finalized, and of one device. */
static hipdnnStatus_t check_execute_args(hipdnnHandle_t handle, hipdnnBackendDescriptor_t plan,
                                         hipdnnBackendDescriptor_t variant_pack) {
    hipdnnStatus_t st = hipdnnHandleCheck(handle, "hipdnnBackendExecute");
    if (!st) st = hipdnnDescriptorCheck(plan, HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR,
                                        "hipdnnBackendExecute plan");
    if (!st) st = hipdnnDescriptorCheck(variant_pack, HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR,
                                        "hipdnnBackendExecute variant pack");
    if (st) return st;
    if (!plan->finalized || !variant_pack->finalized)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED,
                          "hipdnnBackendExecute: the %s is not finalized",
                          plan->finalized ? "variant pack" : "execution plan");
    const hipdnnPlanState* ps = plan->state;
    if (handle->device != ps->handle->device)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_STREAM_MISMATCH,
                          "hipdnnBackendExecute: the plan was built for device %d but the "
                          "handle is on device %d", ps->handle->device, handle->device);
    return HIPDNN_STATUS_SUCCESS;
}

/* Every uid of the pack names a tensor that takes a pointer: counted from the graph's
 * side (its uids are unique), so the cost is tensors x log(uids). */
static hipdnnStatus_t check_pack_uids(const pack_state* vp, const hipdnnSdkGraph* g) {
    int64_t named = 0;
    for (int32_t k = 0; k < g->num_tensors; ++k) {
        const hipdnnSdkTensor* t = &g->tensors[k];
        if (find_uid(vp, t->uid) < 0) continue;
        if (t->is_virtual || (t->is_by_value && t->has_value))
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "variant pack: tensor '%s' (uid %lld) is %s; "
                              "it takes no pointer", t->name, (long long)t->uid,
                              t->is_virtual ? "virtual" : "a pass-by-value constant");
        ++named;
    }
    if (named == vp->num_uids) return HIPDNN_STATUS_SUCCESS;
    hipdnnSdkUidMap map; /* only to name the stranger */
    if (!hipdnnSdkUidMapBuild(&map, g))
        return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory");
    int64_t stranger = 0;
    for (int64_t i = 0; i < vp->num_uids; ++i)
        if (hipdnnSdkUidMapFind(&map, vp->uids[i]) < 0) {
            stranger = vp->uids[i];
            break;
        }
    hipdnnSdkUidMapFree(&map);
    return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "variant pack: uid %lld is not a tensor of "
                      "graph '%s'", (long long)stranger, g->name);
}

/* The buffer of graph tensor t, pack entry i: a pointer in the memory the engine (or,
 * for a runtime scalar, the host) reads, on the handle's device, that holds the `bytes`
 * t's strides reach (-1: past int64, not checked). */
static hipdnnStatus_t check_buffer(const pack_state* vp, int64_t i, const hipdnnSdkTensor* t,
                                   int64_t bytes, const hipdnnEngineEntry* e, int device,
                                   hipdnnPluginTensorBuffer_t* buf, bool fresh, bool* cached);

/* Pointer i as the plugin's buffer for tensor t, checked; a refusal made from the pointer
 * cache's kept answer is checked again on the runtime's fresh one before it stands. */
static hipdnnStatus_t tensor_buffer(const pack_state* vp, int64_t i, const hipdnnSdkTensor* t,
                                    int64_t bytes, const hipdnnEngineEntry* e, int device,
                                    hipdnnPluginTensorBuffer_t* buf) {
    if (i < 0 || !vp->ptrs[i])
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "variant pack: tensor '%s' (uid %lld) %s",
                          t->name, (long long)t->uid,
                          i >= 0 ? "has a NULL pointer" : "has no pointer");
    bool cached = false;
    hipdnnStatus_t st = check_buffer(vp, i, t, bytes, e, device, buf, false, &cached);
    if (st && cached) {
        hipdnnClearError();
        st = check_buffer(vp, i, t, bytes, e, device, buf, true, &cached);
    }
    return st;
}

static hipdnnStatus_t check_buffer(const pack_state* vp, int64_t i, const hipdnnSdkTensor* t,
                                   int64_t bytes, const hipdnnEngineEntry* e, int device,
                                   hipdnnPluginTensorBuffer_t* buf, bool fresh, bool* cached) {
    ptr_facts f;
    hipdnnStatus_t st = space_of(vp, i, t, &f, fresh);
    *cached = f.cached;
    if (st) return st;
    hipdnnMemorySpace_t where = f.where;
    int on_device = f.device;
    /* A runtime scalar is read on the host; data must be where the engine runs
     * (managed memory serves both). */
    hipdnnMemorySpace_t want = t->is_by_value ? HIPDNN_MEMORY_HOST : e->memory_space;
    if (where != want && where != HIPDNN_MEMORY_MANAGED)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                          "variant pack: tensor '%s' (uid %lld) is in %s memory but %s "
                          "needs %s memory", t->name, (long long)t->uid, space_name(where),
                          t->is_by_value ? "a by-value scalar" : e->name, space_name(want));
    if (want != HIPDNN_MEMORY_HOST && on_device >= 0 && on_device != device)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                          "variant pack: tensor '%s' (uid %lld) is on device %d but the plan "
                          "runs on device %d", t->name, (long long)t->uid, on_device, device);
    /* A device pointer whose dims overstate its allocation (a lying array interface) would
     * be written past its end: refused while the runtime can tell. */
    uint64_t inside;
    if (where != HIPDNN_MEMORY_HOST && bytes >= 0 &&
        (f.ranged ? hipdnnDeviceExtentBeyondFrom(vp->ptrs[i], (uint64_t)bytes, f.base, f.size,
                                                  &inside)
                  : hipdnnDeviceExtentBeyond(vp->ptrs[i], (uint64_t)bytes, &inside)))
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "variant pack: tensor '%s' (uid %lld) spans "
                          "%lld bytes from %p but its %s allocation ends %llu bytes after it; "
                          "its dims or strides overstate the memory", t->name,
                          (long long)t->uid, (long long)bytes, vp->ptrs[i], space_name(where),
                          (unsigned long long)inside);
    buf->uid = t->uid;
    buf->ptr = vp->ptrs[i];
    buf->memory_space = where;
    return HIPDNN_STATUS_SUCCESS;
}

/* The buffers of every graph tensor that takes a pointer, in graph order, into bufs
 * (room for every tensor); *nb is how many. */
static hipdnnStatus_t collect_buffers(const pack_state* vp, const hipdnnGraphState* gs,
                                      const hipdnnEngineEntry* e, int device,
                                      hipdnnPluginTensorBuffer_t* bufs, uint32_t* nb) {
    const hipdnnSdkGraph* g = gs->graph;
    *nb = 0;
    for (int32_t k = 0; k < g->num_tensors; ++k) {
        const hipdnnSdkTensor* t = &g->tensors[k];
        if (t->is_virtual || (t->is_by_value && t->has_value)) continue;
        hipdnnStatus_t st = tensor_buffer(vp, find_uid(vp, t->uid), t, gs->span_bytes[k], e,
                                          device, &bufs[*nb]);
        if (st) return st;
        ++*nb;
    }
    return HIPDNN_STATUS_SUCCESS;
}

/* The workspace the plan needs is given, and is where the engine runs (device memory for
 * device engines): probed, since it is never declared, whenever a GPU runtime may be
 * involved. */
static hipdnnStatus_t check_workspace(const pack_state* vp, const hipdnnPlanState* ps,
                                      const hipdnnEngineEntry* e) {
    if (ps->workspace_size == 0) return HIPDNN_STATUS_SUCCESS;
    if (!vp->workspace)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT, "variant pack: engine '%s' "
                          "needs a workspace of %zu bytes but WORKSPACE is NULL", e->name,
                          ps->workspace_size);
    const hipdnnDeviceRuntime* rt =
        hipdnnRegistryHasDeviceEngine() ? hipdnnDeviceRuntimeGet() : NULL;
    if (rt) {
        hipdnnMemorySpace_t ws;
        int device;
        uintptr_t base = 0;
        size_t size;
        uint64_t inside = 0;
        bool wrong_space, too_short;
        /* a verdict against the workspace made from a kept answer is asked again, fresh */
        for (bool fresh = false;; fresh = true) {
            bool cached =
                hipdnnDevicePointerFacts(rt, vp->workspace, &ws, &device, &base, &size, fresh);
            wrong_space = ws != e->memory_space && ws != HIPDNN_MEMORY_MANAGED;
            too_short = !wrong_space && ws != HIPDNN_MEMORY_HOST &&
                        hipdnnDeviceExtentBeyondFrom(vp->workspace, ps->workspace_size, base,
                                                     size, &inside);
            if (!cached || !(wrong_space || too_short)) break;
        }
        if (wrong_space)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "variant pack: the workspace is in %s "
                              "memory but engine '%s' needs %s memory", space_name(ws), e->name,
                              space_name(e->memory_space));
        if (too_short)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT, "variant pack: engine "
                              "'%s' needs a workspace of %zu bytes but the workspace's %s "
                              "allocation ends %llu bytes after it", e->name,
                              ps->workspace_size, space_name(ws), (unsigned long long)inside);
    }
    return HIPDNN_STATUS_SUCCESS;
}

/* The plugin's enqueue recorded on `cap` instead of run (graph_capture.c): the plugin
 * handle's stream is cap for the call, and the capture's graph goes to *graph.  Called
 * under the handle's lock. */
static hipdnnPluginStatus_t enqueue_captured(hipdnnHandle_t handle, hipdnnPlugin* p,
                                             hipdnnEnginePluginHandle_t ph, const hipdnnPlanState* ps,
                                             const pack_state* vp, hipdnnPluginTensorBuffer_t* bufs,
                                             uint32_t nb, hipdnnStream_t cap, void** graph,
                                             hipdnnStatus_t* st) {
    const hipdnnDeviceRuntime* rt = hipdnnDeviceRuntimeGet();
    hipdnnPluginStatus_t rs = p->set_stream(ph, cap);
    if (rs != HIPDNN_PLUGIN_STATUS_SUCCESS) return rs;
    if ((*st = rt->capture_begin(cap)) == HIPDNN_STATUS_SUCCESS) {
        rs = p->enqueue(ph, ps->ctx, vp->workspace, ps->workspace_size, bufs, nb);
        *st = rt->capture_end(cap, graph);
        if (rs != HIPDNN_PLUGIN_STATUS_SUCCESS && *graph) { /* a partial recording */
            rt->graph_destroy(*graph);
            *graph = NULL;
        }
    }
    hipdnnPluginStatus_t back = p->set_stream(ph, handle->stream);
    return rs != HIPDNN_PLUGIN_STATUS_SUCCESS ? rs : back;
}

/* Runs the plan's graph on its plugin through plugin handle ph, under the handle's lock:
 * ABI 1.1 enqueues {uid, ptr, memory space}; ABI 1.0 executes {uid, ptr} (host memory
 * only, checked before).  With `cap`, records the enqueue into *graph instead. */
static hipdnnStatus_t run_plugin(hipdnnHandle_t handle, const hipdnnPlanState* ps,
                                 hipdnnEnginePluginHandle_t ph, const pack_state* vp,
                                 hipdnnPluginTensorBuffer_t* bufs, uint32_t nb, hipdnnStream_t cap,
                                 void** graph) {
    const hipdnnSdkGraph* g = ((hipdnnGraphState*)ps->graph->state)->graph;
    const hipdnnEngineEntry* e = hipdnnRegistryEngine(ps->engine);
    hipdnnPlugin* p = hipdnnRegistryPlugin(ps->plugin);
    hipdnnStatus_t st = HIPDNN_STATUS_SUCCESS, cst = HIPDNN_STATUS_SUCCESS;
    hipdnnHandleLock(handle);
    hipdnnPluginStatus_t rs;
    if (cap) {
        rs = enqueue_captured(handle, p, ph, ps, vp, bufs, nb, cap, graph, &cst);
    } else if (p->enqueue) {
        rs = p->enqueue(ph, ps->ctx, vp->workspace, ps->workspace_size, bufs, nb);
    } else {
        hipdnnPluginDeviceBuffer_t old[32];
        hipdnnPluginDeviceBuffer_t* ob = nb <= 32 ? old : malloc(nb * sizeof(*ob));
        if (!ob) {
            rs = HIPDNN_PLUGIN_STATUS_ALLOC_FAILED;
        } else {
            for (uint32_t b = 0; b < nb; ++b) {
                ob[b].uid = bufs[b].uid;
                ob[b].ptr = bufs[b].ptr;
            }
            rs = p->execute(ph, ps->ctx, vp->workspace, ob, nb);
            if (ob != old) free(ob);
        }
    }
    if (rs != HIPDNN_PLUGIN_STATUS_SUCCESS)
        st = hipdnnFail(HIPDNN_STATUS_EXECUTION_FAILED, "engine '%s' failed on graph '%s'%s: %s",
                        e->name, g->name, cap ? " while its run was recorded into a graph" : "",
                        hipdnnPluginLastError(p));
    else if (cst)
        st = hipdnnFail(cst, "engine '%s' on graph '%s': its run could not be recorded into a "
                        "graph (an engine that synchronizes or allocates while it enqueues "
                        "cannot be): %s", e->name, g->name, hipdnnPeekLastErrorString_ext());
    hipdnnHandleUnlock(handle);
    return st;
}

/* hipdnnBackendExecute, or with `cap` its recording into *graph (graph_capture.c). */
static hipdnnStatus_t execute(hipdnnHandle_t handle, hipdnnBackendDescriptor_t plan,
                              hipdnnBackendDescriptor_t variant_pack, hipdnnStream_t cap,
                              void** graph) {
    hipdnnStatus_t st = check_execute_args(handle, plan, variant_pack);
    if (st) return st;
    hipdnnPlanState* ps = plan->state;
    pack_state* vp = variant_pack->state;
    const hipdnnSdkGraph* g = ((hipdnnGraphState*)ps->graph->state)->graph;
    const hipdnnEngineEntry* e = hipdnnRegistryEngine(ps->engine);
    hipdnnPlugin* p = hipdnnRegistryPlugin(ps->plugin);
    if (cap && (e->memory_space == HIPDNN_MEMORY_HOST || !p->enqueue))
        return hipdnnFail(HIPDNN_STATUS_NOT_SUPPORTED, "graph '%s': engine '%s' runs on the host "
                          "(host memory), so its run cannot be recorded into a device graph; "
                          "build the plan on a device engine", g->name, e->name);
    if ((st = check_pack_uids(vp, g))) return st;
    hipdnnPluginTensorBuffer_t stack_buf[32];
    hipdnnPluginTensorBuffer_t* bufs = stack_buf;
    if (g->num_tensors > 32) {
        bufs = malloc((size_t)g->num_tensors * sizeof(*bufs));
        if (!bufs) return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory");
    }
    uint32_t nb = 0;
    const hipdnnGraphState* gs = ps->graph->state;
    st = collect_buffers(vp, gs, e, handle->device, bufs, &nb);
    if (!st) st = check_workspace(vp, ps, e);
    if (!st && !p->enqueue && e->memory_space != HIPDNN_MEMORY_HOST)
        st = hipdnnFail(HIPDNN_STATUS_NOT_SUPPORTED, "engine '%s': an ABI 1.0 plugin runs on host "
                        "memory only", e->name);
    /* The plan may run through any handle of its device: that handle's plugin handle. */
    hipdnnEnginePluginHandle_t ph = ps->plugin_handle;
    if (!st && handle != ps->handle) st = hipdnnHandlePluginHandle(handle, ps->plugin, &ph);
    hipdnnAliasStaging staging = {0};
    if (!st)
        st = hipdnnAliasStage(g, gs->span_bytes, bufs, nb, e->memory_space != HIPDNN_MEMORY_HOST,
                              handle->stream, &staging);
    if (!st && cap && staging.n) /* the copies would have to outlive the graph */
        st = hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "graph '%s': an output overlaps an input, and "
                        "such a run reads a copy of the input made for it, which a recorded "
                        "graph cannot hold: give the output its own memory", g->name);
    if (!st) st = run_plugin(handle, ps, ph, vp, bufs, nb, cap, graph);
    hipdnnAliasRelease(&staging);
    if (bufs != stack_buf) free(bufs);
    return st;
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnBackendExecute(hipdnnHandle_t handle,
                                                  hipdnnBackendDescriptor_t plan,
                                                  hipdnnBackendDescriptor_t variant_pack) {
    hipdnnClearError();
    return execute(handle, plan, variant_pack, NULL, NULL);
}

hipdnnStatus_t hipdnnExecuteRecorded(hipdnnHandle_t handle, hipdnnBackendDescriptor_t plan,
                                     hipdnnBackendDescriptor_t variant_pack, hipdnnStream_t cap,
                                     void** graph) {
    *graph = NULL;
    return execute(handle, plan, variant_pack, cap, graph);
}
