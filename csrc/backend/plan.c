/* EXECUTION_PLAN descriptors: an engine config made ready to run on a handle.  Finalize
 * asks the engine's plugin for its workspace size and an execution context. */
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
            st = hipdnnFail(HIPDNN_STATUS_PLUGIN_ERROR_EXT,
                            "engine '%s': could not build a plan: %s", e->name,
                            hipdnnPluginLastError(p));
        else if (p->workspace_from_context(ph, ctx, &ws) != HIPDNN_PLUGIN_STATUS_SUCCESS)
            st = hipdnnFail(HIPDNN_STATUS_PLUGIN_ERROR_EXT,
                            "engine '%s': workspace query failed: %s", e->name,
                            hipdnnPluginLastError(p));
    } else if (p->get_workspace(ph, cfg_bytes, cfg_size, gs->bytes, gs->num_bytes, &ws) !=
               HIPDNN_PLUGIN_STATUS_SUCCESS) {
        st = hipdnnFail(HIPDNN_STATUS_PLUGIN_ERROR_EXT, "engine '%s': workspace query failed: %s",
                        e->name, hipdnnPluginLastError(p));
    } else if (p->create_context(ph, cfg_bytes, cfg_size, gs->bytes, gs->num_bytes, &ctx) !=
               HIPDNN_PLUGIN_STATUS_SUCCESS) {
        st = hipdnnFail(HIPDNN_STATUS_PLUGIN_ERROR_EXT, "engine '%s': could not build a plan: %s",
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
