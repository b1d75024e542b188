/* VARIANT_PACK descriptors and hipdnnBackendExecute: check that every tensor the graph
 * reads or writes has a pointer in the engine's memory space, then run the plugin. */
#include <stdlib.h>
#include <string.h>

#include "descriptor.h"
#include "device.h"
#include "error.h"
#include "plan.h"
#include "registry.h"

typedef struct {
    int64_t num_uids;
    int64_t* uids;
    int64_t num_ptrs;
    void** ptrs;
    void* workspace;
} pack_state;

#define V(d) ((pack_state*)(d)->state)

static void pack_destroy(hipdnnBackendDescriptor_t d) {
    free(V(d)->uids);
    free(V(d)->ptrs);
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
        int64_t* copy = malloc((size_t)count * sizeof(int64_t) + 1);
        if (!copy) return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory");
        if (count) memcpy(copy, v, (size_t)count * sizeof(int64_t));
        free(s->uids);
        s->uids = copy;
        s->num_uids = count;
        return HIPDNN_STATUS_SUCCESS;
    }
    case HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS: {
        if ((st = hipdnnAttrExpect("VARIANT_PACK", "DATA_POINTERS", HIPDNN_TYPE_VOID_PTR, type, count,
                                   0, 1 << 20, v)))
            return st;
        void** copy = malloc((size_t)count * sizeof(void*) + 1);
        if (!copy) return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory");
        if (count) memcpy(copy, v, (size_t)count * sizeof(void*));
        free(s->ptrs);
        s->ptrs = copy;
        s->num_ptrs = count;
        return HIPDNN_STATUS_SUCCESS;
    }
    case HIPDNN_ATTR_VARIANT_PACK_WORKSPACE:
        if ((st = hipdnnAttrExpect("VARIANT_PACK", "WORKSPACE", HIPDNN_TYPE_VOID_PTR, type, count, 1,
                                   1, v)))
            return st;
        s->workspace = *(void* const*)v;
        return HIPDNN_STATUS_SUCCESS;
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

static hipdnnStatus_t pack_finalize(hipdnnBackendDescriptor_t d) {
    pack_state* s = V(d);
    if (s->num_uids != s->num_ptrs)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                          "VARIANT_PACK: %lld unique ids but %lld data pointers",
                          (long long)s->num_uids, (long long)s->num_ptrs);
    for (int64_t i = 0; i < s->num_uids; ++i)
        for (int64_t k = 0; k < i; ++k)
            if (s->uids[k] == s->uids[i])
                return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "VARIANT_PACK: uid %lld appears twice",
                                  (long long)s->uids[i]);
    return HIPDNN_STATUS_SUCCESS;
}

const hipdnnDescriptorClass hipdnnVariantPackClass = {
    "VARIANT_PACK", sizeof(pack_state), NULL, pack_destroy, pack_set, pack_get, pack_finalize,
};

static const char* space_name(hipdnnMemorySpace_t m) {
    return m == HIPDNN_MEMORY_DEVICE ? "device" : "host";
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnBackendExecute(hipdnnHandle_t handle,
                                                  hipdnnBackendDescriptor_t plan,
                                                  hipdnnBackendDescriptor_t variant_pack) {
    hipdnnClearError();
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
    hipdnnPlanState* ps = plan->state;
    pack_state* vp = variant_pack->state;
    if (ps->handle != handle)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                          "hipdnnBackendExecute: the plan was built on another handle; build a "
                          "plan per handle");
    const hipdnnSdkGraph* g = ((hipdnnGraphState*)ps->graph->state)->graph;
    const hipdnnEngineEntry* e = hipdnnRegistryEngine(ps->engine);
    hipdnnPluginDeviceBuffer_t stack_buf[32];
    hipdnnPluginDeviceBuffer_t* bufs = stack_buf;
    if (g->num_tensors > 32) {
        bufs = malloc((size_t)g->num_tensors * sizeof(*bufs));
        if (!bufs) return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory");
    }
    uint32_t nb = 0;
    for (int64_t i = 0; i < vp->num_uids && !st; ++i) {
        const hipdnnSdkTensor* t = hipdnnSdkGraphFindTensor(g, vp->uids[i]);
        if (!t)
            st = hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "variant pack: uid %lld is not a tensor of graph "
                            "'%s'", (long long)vp->uids[i], g->name);
        else if (t->is_virtual || t->is_by_value)
            st = hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "variant pack: tensor '%s' (uid %lld) is %s; it "
                            "takes no pointer", t->name, (long long)t->uid,
                            t->is_virtual ? "virtual" : "pass-by-value");
    }
    for (int32_t k = 0; k < g->num_tensors && !st; ++k) {
        const hipdnnSdkTensor* t = &g->tensors[k];
        if (t->is_virtual || t->is_by_value) continue;
        void* ptr = NULL;
        bool found = false;
        for (int64_t i = 0; i < vp->num_uids; ++i)
            if (vp->uids[i] == t->uid) {
                ptr = vp->ptrs[i];
                found = true;
            }
        if (!found || !ptr) {
            st = hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "variant pack: tensor '%s' (uid %lld) %s",
                            t->name, (long long)t->uid, found ? "has a NULL pointer" : "has no pointer");
            break;
        }
        hipdnnMemorySpace_t where = hipdnnDevicePointerSpace(ptr);
        if (where != e->memory_space) {
            st = hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                            "variant pack: tensor '%s' (uid %lld) is in %s memory but engine '%s' "
                            "runs on %s memory",
                            t->name, (long long)t->uid, space_name(where), e->name,
                            space_name(e->memory_space));
            break;
        }
        bufs[nb].uid = t->uid;
        bufs[nb].ptr = ptr;
        ++nb;
    }
    if (!st && ps->workspace_size > 0 && !vp->workspace)
        st = hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "variant pack: engine '%s' needs a workspace of %zu "
                        "bytes but WORKSPACE is NULL", e->name, ps->workspace_size);
    if (!st) {
        hipdnnPlugin* p = hipdnnRegistryPlugin(ps->plugin);
        pthread_mutex_lock(&handle->lock); /* a plugin handle runs one call at a time */
        hipdnnPluginStatus_t rs = p->execute(ps->plugin_handle, ps->ctx, vp->workspace, bufs, nb);
        if (rs != HIPDNN_PLUGIN_STATUS_SUCCESS)
            st = hipdnnFail(HIPDNN_STATUS_EXECUTION_FAILED, "engine '%s' failed on graph '%s': %s",
                            e->name, g->name, hipdnnPluginLastError(p));
        pthread_mutex_unlock(&handle->lock);
    }
    if (bufs != stack_buf) free(bufs);
    return st;
}
