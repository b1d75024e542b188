/* EXECUTION_PLAN descriptors: an engine config made ready to run on a handle.  Finalize
 * asks the engine's plugin for its workspace size and an execution context. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "plan.h"
#include "registry.h"

#define P(d) ((hipdnnPlanState*)(d)->state)

static void plan_destroy(hipdnnBackendDescriptor_t d) {
    hipdnnPlanState* s = P(d);
    if (s->ctx) {
        hipdnnHandleLock(s->handle); /* the context's plugin handle is this handle's */
        hipdnnRegistryPlugin(s->plugin)->destroy_context(s->plugin_handle, s->ctx);
        hipdnnHandleUnlock(s->handle);
    }
    free(s->kernels);
    free(s->kernel_data);
    if (s->handle && d->finalized) hipdnnHandleRelease(s->handle);
    hipdnnDescriptorRelease(s->config);
    hipdnnDescriptorRelease(s->graph);
}

static hipdnnStatus_t plan_set(hipdnnBackendDescriptor_t d, hipdnnBackendAttributeName_t name,
                               hipdnnBackendAttributeType_t type, int64_t count, const void* v) {
    hipdnnPlanState* s = P(d);
    hipdnnStatus_t st;
    switch (name) {
    case HIPDNN_ATTR_EXECUTION_PLAN_HANDLE:
        if ((st = hipdnnAttrExpect("EXECUTION_PLAN", "HANDLE", HIPDNN_TYPE_HANDLE, type, count, 1, 1, v)))
            return st;
        if ((st = hipdnnHandleCheck(*(const hipdnnHandle_t*)v, "EXECUTION_PLAN HANDLE"))) return st;
        s->handle = *(const hipdnnHandle_t*)v;
        return HIPDNN_STATUS_SUCCESS;
    case HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG:
        return hipdnnAttrSetDescriptor("EXECUTION_PLAN", "ENGINE_CONFIG",
                                       HIPDNN_BACKEND_ENGINECFG_DESCRIPTOR, type, count, v,
                                       &s->config);
    default: return hipdnnAttrUnknown("EXECUTION_PLAN", name);
    }
}

static hipdnnStatus_t plan_get(hipdnnBackendDescriptor_t d, hipdnnBackendAttributeName_t name,
                               hipdnnBackendAttributeType_t type, int64_t req, int64_t* count,
                               void* v) {
    hipdnnPlanState* s = P(d);
    if (name == HIPDNN_ATTR_EXECUTION_PLAN_HANDLE)
        return hipdnnAttrReturn("EXECUTION_PLAN", "HANDLE", HIPDNN_TYPE_HANDLE, type, req, count, v,
                                &s->handle, s->handle ? 1 : 0, sizeof(hipdnnHandle_t));
    if (name == HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG) {
        if (type != HIPDNN_TYPE_BACKEND_DESCRIPTOR)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                              "EXECUTION_PLAN: ENGINE_CONFIG has type BACKEND_DESCRIPTOR");
        *count = s->config ? 1 : 0;
        if (req > 0 && s->config) {
            hipdnnDescriptorRetain(s->config);
            *(hipdnnBackendDescriptor_t*)v = s->config;
        }
        return HIPDNN_STATUS_SUCCESS;
    }
    if (!d->finalized)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED,
                          "EXECUTION_PLAN: attribute %d needs a finalized plan", (int)name);
    const hipdnnEngineEntry* e = hipdnnRegistryEngine(s->engine);
    int64_t x;
    switch (name) {
    case HIPDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE:
        x = (int64_t)s->workspace_size;
        return hipdnnAttrReturn("EXECUTION_PLAN", "WORKSPACE_SIZE", HIPDNN_TYPE_INT64, type, req,
                                count, v, &x, 1, sizeof(x));
    case HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_NAME_EXT:
        return hipdnnAttrReturnString("EXECUTION_PLAN", "ENGINE_NAME_EXT", type, req, count, v,
                                      e->name);
    case HIPDNN_ATTR_EXECUTION_PLAN_MEMORY_SPACE_EXT:
        x = e->memory_space;
        return hipdnnAttrReturn("EXECUTION_PLAN", "MEMORY_SPACE_EXT", HIPDNN_TYPE_INT64, type, req,
                                count, v, &x, 1, sizeof(x));
    default: return hipdnnAttrUnknown("EXECUTION_PLAN", name);
    }
}

static hipdnnStatus_t plan_finalize(hipdnnBackendDescriptor_t d) {
    hipdnnPlanState* s = P(d);
    hipdnnStatus_t st;
    if (!s->handle) return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "EXECUTION_PLAN: HANDLE is not set");
    if (!s->config) return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "EXECUTION_PLAN: ENGINE_CONFIG is not set");
    if (!s->config->finalized)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED,
                          "EXECUTION_PLAN: the engine config is not finalized");
    hipdnnEngineCfgState* cs = s->config->state;
    hipdnnEngineState* es = cs->engine->state;
    hipdnnGraphState* gs = es->graph->state;
    const hipdnnEngineEntry* e = hipdnnRegistryEngine((int32_t)es->engine_index);
    hipdnnPlugin* p = hipdnnRegistryPlugin(e->plugin);

    hipdnnSdkEngineConfig cfg = {e->id, (int32_t)cs->num_knobs, NULL};
    hipdnnSdkKnobChoice knobs[64];
    for (int64_t i = 0; i < cs->num_knobs; ++i) {
        hipdnnKnobChoiceState* k = cs->knobs[i]->state;
        knobs[i].knob_id = k->knob_id;
        knobs[i].value = k->value;
    }
    cfg.knobs = knobs;
    uint8_t* cfg_bytes = NULL;
    size_t cfg_size = 0;
    if (hipdnnSdkEngineConfigEncode(&cfg, &cfg_bytes, &cfg_size) != 0)
        return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory encoding the engine config");
    hipdnnEnginePluginHandle_t ph = NULL;
    if ((st = hipdnnHandlePluginHandle(s->handle, e->plugin, &ph))) {
        free(cfg_bytes);
        return st;
    }
    size_t ws = 0;
    hipdnnEnginePluginExecutionContext_t ctx = NULL;
    hipdnnHandleLock(s->handle);
    if (p->workspace_from_context) {
        /* ABI 1.1: build once, then ask what was built for its workspace. */
        if (p->create_context(ph, cfg_bytes, cfg_size, gs->bytes, gs->num_bytes, &ctx) !=
            HIPDNN_PLUGIN_STATUS_SUCCESS)
            st = hipdnnFail(HIPDNN_STATUS_PLUGIN_ERROR,
                            "engine '%s': could not build a plan: %s", e->name,
                            hipdnnPluginLastError(p));
        else if (p->workspace_from_context(ph, ctx, &ws) != HIPDNN_PLUGIN_STATUS_SUCCESS)
            st = hipdnnFail(HIPDNN_STATUS_PLUGIN_ERROR,
                            "engine '%s': workspace query failed: %s", e->name,
                            hipdnnPluginLastError(p));
    } else if (p->get_workspace(ph, cfg_bytes, cfg_size, gs->bytes, gs->num_bytes, &ws) !=
               HIPDNN_PLUGIN_STATUS_SUCCESS) {
        st = hipdnnFail(HIPDNN_STATUS_PLUGIN_ERROR, "engine '%s': workspace query failed: %s",
                        e->name, hipdnnPluginLastError(p));
    } else if (p->create_context(ph, cfg_bytes, cfg_size, gs->bytes, gs->num_bytes, &ctx) !=
               HIPDNN_PLUGIN_STATUS_SUCCESS) {
        st = hipdnnFail(HIPDNN_STATUS_PLUGIN_ERROR, "engine '%s': could not build a plan: %s",
                        e->name, hipdnnPluginLastError(p));
    }
    if (st && ctx) p->destroy_context(ph, ctx);
    hipdnnHandleUnlock(s->handle);
    free(cfg_bytes);
    if (st) return st;
    s->engine = (int32_t)es->engine_index;
    s->plugin = e->plugin;
    s->plugin_handle = ph;
    s->ctx = ctx;
    s->workspace_size = ws;
    s->graph = es->graph;
    hipdnnDescriptorRetain(s->graph);
    hipdnnHandleRetain(s->handle);
    return HIPDNN_STATUS_SUCCESS;
}

const hipdnnDescriptorClass hipdnnPlanClass = {
    "EXECUTION_PLAN", sizeof(hipdnnPlanState), NULL, plan_destroy, plan_set, plan_get, plan_finalize,
};

/* ---- the kernel-fusion report ------------------------------------------------------------ */

/* The OPS index of each node of the plan's sorted graph: a node is known by its first
 * output (every op has one, and each tensor has one producer).  OPS keeps the order the
 * user set; the graph the plugin saw is sorted topologically. */
static hipdnnStatus_t ops_index_of_nodes(const hipdnnGraphState* gs, int64_t* out) {
    const hipdnnSdkGraph* g = gs->graph;
    int64_t* first = malloc((size_t)(gs->num_ops > 0 ? gs->num_ops : 1) * sizeof(int64_t));
    if (!first) return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory reading kernels");
    for (int64_t k = 0; k < gs->num_ops; ++k) {
        const hipdnnOperationState* os = gs->ops[k]->state;
        first[k] = HIPDNN_NO_TENSOR;
        for (int p = 0; p < HIPDNN_MAX_PORTS && first[k] == HIPDNN_NO_TENSOR; ++p)
            if (os->out[p]) first[k] = ((const hipdnnTensorState*)os->out[p]->state)->t.uid;
    }
    hipdnnStatus_t st = HIPDNN_STATUS_SUCCESS;
    for (int32_t i = 0; i < g->num_nodes && !st; ++i) {
        int64_t uid = HIPDNN_NO_TENSOR;
        for (int p = 0; p < HIPDNN_MAX_PORTS && uid == HIPDNN_NO_TENSOR; ++p) uid = g->nodes[i].outputs[p];
        out[i] = -1;
        for (int64_t k = 0; k < gs->num_ops && out[i] < 0; ++k)
            if (first[k] == uid) out[i] = k;
        if (out[i] < 0)
            st = hipdnnFail(HIPDNN_STATUS_INTERNAL_ERROR, "graph '%s': node '%s' has no operation "
                            "descriptor", g->name, g->nodes[i].name);
    }
    free(first);
    return st;
}

/* Copies the plugin's answer into the plan, checked: entry size, node indices, and every
 * node in some kernel. */
static hipdnnStatus_t copy_kernels(hipdnnPlanState* s, const char* engine,
                                   const hipdnnPluginKernelInfo_t* k, uint32_t n) {
    const hipdnnGraphState* gs = s->graph->state;
    const int32_t nn = gs->graph->num_nodes;
    if (n > 0 && !k)
        return hipdnnFail(HIPDNN_STATUS_PLUGIN_ERROR, "engine '%s': GetKernelInfo gave %u "
                          "kernels and no array", engine, n);
    const uint32_t stride = n > 0 ? k->struct_size : 0;
    if (n > 0 && stride < sizeof(hipdnnPluginKernelInfo_t))
        return hipdnnFail(HIPDNN_STATUS_PLUGIN_ERROR, "engine '%s': GetKernelInfo entries of "
                          "%u bytes; this backend reads %zu", engine, stride,
                          sizeof(hipdnnPluginKernelInfo_t));
    size_t bytes = 1; /* never malloc(0) */
    for (uint32_t i = 0; i < n; ++i) {
        const hipdnnPluginKernelInfo_t* e = (const void*)((const char*)k + (size_t)i * stride);
        if (e->num_nodes > 0 && !e->nodes)
            return hipdnnFail(HIPDNN_STATUS_PLUGIN_ERROR, "engine '%s': kernel %u lists %u "
                              "nodes and no array", engine, i, e->num_nodes);
        bytes += (size_t)e->num_nodes * sizeof(int64_t) + strlen(e->name ? e->name : "") + 1 +
                 strlen(e->detail ? e->detail : "") + 1;
    }
    hipdnnKernelInfo_ext_t* out = calloc(n > 0 ? n : 1, sizeof(*out));
    char* data = malloc(bytes);
    int64_t* ops_of = malloc((size_t)(nn > 0 ? nn : 1) * sizeof(int64_t));
    bool* seen = calloc((size_t)(nn > 0 ? nn : 1), sizeof(bool));
    hipdnnStatus_t st = out && data && ops_of && seen
                            ? ops_index_of_nodes(gs, ops_of)
                            : hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory reading kernels");
    int64_t* idx = (int64_t*)(void*)data; /* malloc'd: aligned for int64_t */
    for (uint32_t i = 0; i < n && !st; ++i) {
        const hipdnnPluginKernelInfo_t* e = (const void*)((const char*)k + (size_t)i * stride);
        out[i].num_nodes = e->num_nodes;
        out[i].nodes = idx;
        for (uint32_t j = 0; j < e->num_nodes && !st; ++j) {
            if (e->nodes[j] >= (uint32_t)nn) {
                st = hipdnnFail(HIPDNN_STATUS_PLUGIN_ERROR, "engine '%s': kernel %u ('%s') "
                                "names node %u; the graph has %d", engine, i,
                                e->name ? e->name : "", e->nodes[j], (int)nn);
                break;
            }
            seen[e->nodes[j]] = true;
            idx[j] = ops_of[e->nodes[j]];
        }
        /* ascending in OPS order, as the header promises, whatever order the plugin used */
        for (uint32_t a = 1; a < e->num_nodes && !st; ++a)
            for (uint32_t b = a; b > 0 && idx[b - 1] > idx[b]; --b) {
                int64_t t = idx[b];
                idx[b] = idx[b - 1];
                idx[b - 1] = t;
            }
        idx += e->num_nodes;
    }
    char* str = (char*)idx; /* the strings follow every kernel's indices */
    for (uint32_t i = 0; i < n && !st; ++i) {
        const hipdnnPluginKernelInfo_t* e = (const void*)((const char*)k + (size_t)i * stride);
        const char* parts[2] = {e->name ? e->name : "", e->detail ? e->detail : ""};
        for (int p = 0; p < 2; ++p) {
            size_t len = strlen(parts[p]);
            memcpy(str, parts[p], len + 1);
            if (p == 0) out[i].name = str;
            else out[i].detail = str;
            str += len + 1;
        }
    }
    for (int32_t i = 0; i < nn && !st; ++i)
        if (!seen[i])
            st = hipdnnFail(HIPDNN_STATUS_PLUGIN_ERROR, "engine '%s': node '%s' is in none of "
                            "its %u kernels", engine, gs->graph->nodes[i].name, n);
    free(ops_of);
    free(seen);
    if (st) {
        free(out);
        free(data);
        return st;
    }
    s->kernels = out;
    s->kernel_data = data;
    s->num_kernels = n;
    return HIPDNN_STATUS_SUCCESS;
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnGetPlanKernels_ext(hipdnnBackendDescriptor_t plan,
                                                      int64_t* num_kernels,
                                                      const hipdnnKernelInfo_ext_t** kernels) {
    hipdnnClearError();
    hipdnnStatus_t st = hipdnnDescriptorCheck(plan, HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR,
                                              "hipdnnGetPlanKernels_ext");
    if (st) return st;
    if (!num_kernels || !kernels)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NULL_POINTER, "hipdnnGetPlanKernels_ext: %s is NULL",
                          num_kernels ? "kernels" : "num_kernels");
    if (!plan->finalized)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED,
                          "hipdnnGetPlanKernels_ext: finalize the plan first");
    hipdnnPlanState* s = P(plan);
    if (!s->kernels) {
        const hipdnnEngineEntry* e = hipdnnRegistryEngine(s->engine);
        hipdnnPlugin* p = hipdnnRegistryPlugin(s->plugin);
        if (!p->get_kernels)
            return hipdnnFail(HIPDNN_STATUS_NOT_SUPPORTED, "engine '%s' does not describe its "
                              "kernels (its plugin %s has no hipdnnEnginePluginGetKernelInfo)",
                              e->name, p->path);
        const hipdnnPluginKernelInfo_t* k = NULL;
        uint32_t n = 0;
        hipdnnHandleLock(s->handle);
        hipdnnPluginStatus_t ps = p->get_kernels(s->plugin_handle, s->ctx, &k, &n);
        st = ps == HIPDNN_PLUGIN_STATUS_SUCCESS
                 ? copy_kernels(s, e->name, k, n)
                 : hipdnnFail(HIPDNN_STATUS_PLUGIN_ERROR, "engine '%s': GetKernelInfo failed: "
                              "%s", e->name, hipdnnPluginLastError(p));
        hipdnnHandleUnlock(s->handle);
        if (st) return st;
    }
    *num_kernels = s->num_kernels;
    *kernels = s->kernels;
    return HIPDNN_STATUS_SUCCESS;
}
