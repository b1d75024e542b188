/* ENGINE, ENGINECFG and KNOB_CHOICE descriptors: which engine, with which knob values. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "descriptor.h"
#include "error.h"
#include "registry.h"

/* ---- ENGINE ------------------------------------------------------------------------ */

#define E(d) ((hipdnnEngineState*)(d)->state)

static void engine_destroy(hipdnnBackendDescriptor_t d) { hipdnnDescriptorRelease(E(d)->graph); }

static hipdnnStatus_t engine_set(hipdnnBackendDescriptor_t d, hipdnnBackendAttributeName_t name,
                                 hipdnnBackendAttributeType_t type, int64_t count, const void* v) {
    hipdnnEngineState* s = E(d);
    hipdnnStatus_t st;
    switch (name) {
    case HIPDNN_ATTR_ENGINE_OPERATION_GRAPH:
        return hipdnnAttrSetDescriptor("ENGINE", "OPERATION_GRAPH",
                                       HIPDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, type, count, v,
                                       &s->graph);
    case HIPDNN_ATTR_ENGINE_GLOBAL_INDEX:
        if ((st = hipdnnAttrExpect("ENGINE", "GLOBAL_INDEX", HIPDNN_TYPE_INT64, type, count, 1, 1, v)))
            return st;
        s->engine_index = *(const int64_t*)v;
        s->has_index = true;
        return HIPDNN_STATUS_SUCCESS;
    case HIPDNN_ATTR_ENGINE_ID_EXT: {
        if ((st = hipdnnAttrExpect("ENGINE", "ID_EXT", HIPDNN_TYPE_INT64, type, count, 1, 1, v)))
            return st;
        hipdnnRegistryEnsureLoaded();
        uint64_t id = (uint64_t)*(const int64_t*)v;
        int32_t idx = hipdnnRegistryFindEngine(id);
        if (idx < 0)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "ENGINE: no loaded engine has id %llu",
                              (unsigned long long)id);
        s->engine_index = idx;
        s->has_index = true;
        return HIPDNN_STATUS_SUCCESS;
    }
    default: return hipdnnAttrUnknown("ENGINE", name);
    }
}

static hipdnnStatus_t engine_get(hipdnnBackendDescriptor_t d, hipdnnBackendAttributeName_t name,
                                 hipdnnBackendAttributeType_t type, int64_t req, int64_t* count,
                                 void* v) {
    hipdnnEngineState* s = E(d);
    if (name == HIPDNN_ATTR_ENGINE_OPERATION_GRAPH) {
        if (type != HIPDNN_TYPE_BACKEND_DESCRIPTOR)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "ENGINE: OPERATION_GRAPH has type BACKEND_DESCRIPTOR");
        *count = s->graph ? 1 : 0;
        if (req > 0 && s->graph) {
            hipdnnDescriptorRetain(s->graph);
            *(hipdnnBackendDescriptor_t*)v = s->graph;
        }
        return HIPDNN_STATUS_SUCCESS;
    }
    if (name == HIPDNN_ATTR_ENGINE_GLOBAL_INDEX)
        return hipdnnAttrReturn("ENGINE", "GLOBAL_INDEX", HIPDNN_TYPE_INT64, type, req, count, v,
                                &s->engine_index, s->has_index ? 1 : 0, sizeof(int64_t));
    if (!d->finalized)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED, "ENGINE: attribute %d needs a "
                          "finalized descriptor", (int)name);
    const hipdnnEngineEntry* e = hipdnnRegistryEngine((int32_t)s->engine_index);
    int64_t x;
    switch (name) {
    case HIPDNN_ATTR_ENGINE_ID_EXT:
        x = (int64_t)e->id;
        return hipdnnAttrReturn("ENGINE", "ID_EXT", HIPDNN_TYPE_INT64, type, req, count, v, &x, 1,
                                sizeof(x));
    case HIPDNN_ATTR_ENGINE_NAME_EXT:
        return hipdnnAttrReturnString("ENGINE", "NAME_EXT", type, req, count, v, e->name);
    case HIPDNN_ATTR_ENGINE_MEMORY_SPACE_EXT:
        x = e->memory_space;
        return hipdnnAttrReturn("ENGINE", "MEMORY_SPACE_EXT", HIPDNN_TYPE_INT64, type, req, count, v,
                                &x, 1, sizeof(x));
    case HIPDNN_ATTR_ENGINE_KNOB_INFO_EXT: {
        int64_t info[4 * HIPDNN_ENGINE_MAX_KNOBS];
        for (int32_t i = 0; i < e->num_knobs; ++i) {
            info[4 * i] = e->knobs[i].id;
            info[4 * i + 1] = e->knobs[i].min;
            info[4 * i + 2] = e->knobs[i].max;
            info[4 * i + 3] = e->knobs[i].def;
        }
        return hipdnnAttrReturn("ENGINE", "KNOB_INFO_EXT", HIPDNN_TYPE_INT64, type, req, count, v,
                                info, 4 * e->num_knobs, sizeof(int64_t));
    }
    case HIPDNN_ATTR_ENGINE_KNOB_VALUES_EXT: {
        int64_t vals[(2 + HIPDNN_KNOB_MAX_VALUES) * HIPDNN_ENGINE_MAX_KNOBS];
        int64_t n = 0;
        for (int32_t i = 0; i < e->num_knobs; ++i) {
            vals[n++] = e->knobs[i].stride;
            vals[n++] = e->knobs[i].num_values;
            for (int32_t j = 0; j < e->knobs[i].num_values; ++j) vals[n++] = e->knobs[i].values[j];
        }
        return hipdnnAttrReturn("ENGINE", "KNOB_VALUES_EXT", HIPDNN_TYPE_INT64, type, req, count,
                                v, vals, n, sizeof(int64_t));
    }
    case HIPDNN_ATTR_ENGINE_FLAGS_EXT:
        x = (int64_t)e->flags;
        return hipdnnAttrReturn("ENGINE", "FLAGS_EXT", HIPDNN_TYPE_INT64, type, req, count, v, &x,
                                1, sizeof(x));
    default: return hipdnnAttrUnknown("ENGINE", name);
    }
}

static hipdnnStatus_t engine_finalize(hipdnnBackendDescriptor_t d) {
    hipdnnEngineState* s = E(d);
    if (!s->graph) return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "ENGINE: OPERATION_GRAPH is not set");
    if (!s->graph->finalized)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED, "ENGINE: the graph is not finalized");
    hipdnnRegistryEnsureLoaded();
    if (!s->has_index || s->engine_index < 0 || s->engine_index >= hipdnnRegistryEngineCount())
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND,
                          "ENGINE: GLOBAL_INDEX %lld, but %d engines are loaded",
                          (long long)s->engine_index, (int)hipdnnRegistryEngineCount());
    return HIPDNN_STATUS_SUCCESS;
}

const hipdnnDescriptorClass hipdnnEngineClass = {
    "ENGINE", sizeof(hipdnnEngineState), NULL, engine_destroy, engine_set, engine_get, engine_finalize,
};

/* ---- ENGINECFG ----------------------------------------------------------------------- */

#define C(d) ((hipdnnEngineCfgState*)(d)->state)

static void cfg_destroy(hipdnnBackendDescriptor_t d) {
    hipdnnEngineCfgState* s = C(d);
    hipdnnDescriptorRelease(s->engine);
    for (int64_t i = 0; i < s->num_knobs; ++i) hipdnnDescriptorRelease(s->knobs[i]);
    free(s->knobs);
}

static hipdnnStatus_t cfg_set(hipdnnBackendDescriptor_t d, hipdnnBackendAttributeName_t name,
                              hipdnnBackendAttributeType_t type, int64_t count, const void* v) {
    hipdnnEngineCfgState* s = C(d);
    hipdnnStatus_t st;
    if (name == HIPDNN_ATTR_ENGINECFG_ENGINE)
        return hipdnnAttrSetDescriptor("ENGINECFG", "ENGINE", HIPDNN_BACKEND_ENGINE_DESCRIPTOR,
                                       type, count, v, &s->engine);
    if (name == HIPDNN_ATTR_ENGINECFG_KNOB_CHOICES) {
        if ((st = hipdnnAttrExpect("ENGINECFG", "KNOB_CHOICES", HIPDNN_TYPE_BACKEND_DESCRIPTOR, type,
                                   count, 0, 64, v)))
            return st;
        const hipdnnBackendDescriptor_t* k = v;
        for (int64_t i = 0; i < count; ++i)
            if ((st = hipdnnDescriptorCheck(k[i], HIPDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR,
                                            "ENGINECFG KNOB_CHOICES")))
                return st;
        hipdnnBackendDescriptor_t* copy = malloc((size_t)count * sizeof(*copy) + 1);
        if (!copy) return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory");
        for (int64_t i = 0; i < count; ++i) {
            copy[i] = k[i];
            hipdnnDescriptorRetain(k[i]);
        }
        for (int64_t i = 0; i < s->num_knobs; ++i) hipdnnDescriptorRelease(s->knobs[i]);
        free(s->knobs);
        s->knobs = copy;
        s->num_knobs = count;
        return HIPDNN_STATUS_SUCCESS;
    }
    return hipdnnAttrUnknown("ENGINECFG", name);
}

static hipdnnStatus_t cfg_get(hipdnnBackendDescriptor_t d, hipdnnBackendAttributeName_t name,
                              hipdnnBackendAttributeType_t type, int64_t req, int64_t* count,
                              void* v) {
    hipdnnEngineCfgState* s = C(d);
    if (name != HIPDNN_ATTR_ENGINECFG_ENGINE && name != HIPDNN_ATTR_ENGINECFG_KNOB_CHOICES)
        return hipdnnAttrUnknown("ENGINECFG", name);
    if (type != HIPDNN_TYPE_BACKEND_DESCRIPTOR)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "ENGINECFG: attribute %d has type BACKEND_DESCRIPTOR",
                          (int)name);
    hipdnnBackendDescriptor_t* src = name == HIPDNN_ATTR_ENGINECFG_ENGINE ? &s->engine : s->knobs;
    int64_t n = name == HIPDNN_ATTR_ENGINECFG_ENGINE ? (s->engine ? 1 : 0) : s->num_knobs;
    *count = n;
    hipdnnBackendDescriptor_t* out = v;
    for (int64_t i = 0; i < req && i < n; ++i) {
        hipdnnDescriptorRetain(src[i]);
        out[i] = src[i];
    }
    return HIPDNN_STATUS_SUCCESS;
}

/* Whether a knob of a registered engine takes value v (registry.h: range, stride, list). */
static bool knob_takes(const struct hipdnnEngineKnob* k, int64_t v) {
    if (v < k->min || v > k->max || (v - k->min) % k->stride != 0) return false;
    bool listed = k->num_values == 0;
    for (int32_t i = 0; i < k->num_values; ++i) listed = listed || k->values[i] == v;
    return listed;
}

/* Each knob choice names a knob the engine offers, once, with a value in its range: said
 * here, naming the engine, rather than by the plugin when the plan is built. */
static hipdnnStatus_t check_knob_choices(const hipdnnEngineCfgState* s) {
    const hipdnnEngineEntry* e =
        hipdnnRegistryEngine((int32_t)((hipdnnEngineState*)s->engine->state)->engine_index);
    for (int64_t i = 0; i < s->num_knobs; ++i) {
        const hipdnnKnobChoiceState* k = s->knobs[i]->state;
        int32_t at = -1;
        for (int32_t j = 0; j < e->num_knobs && at < 0; ++j)
            if (e->knobs[j].id == k->knob_id) at = j;
        for (int64_t j = 0; j < i; ++j)
            if (((const hipdnnKnobChoiceState*)s->knobs[j]->state)->knob_id == k->knob_id)
                return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "ENGINECFG: knob %lld of engine '%s' "
                                  "is chosen twice", (long long)k->knob_id, e->name);
        if (at < 0) {
            char ids[160] = "";
            for (int32_t j = 0; j < e->num_knobs; ++j) {
                size_t used = strlen(ids);
                snprintf(ids + used, sizeof(ids) - used, "%s%lld", j ? ", " : "",
                         (long long)e->knobs[j].id);
            }
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "ENGINECFG: engine '%s' has no knob %lld "
                              "(%s%s)", e->name, (long long)k->knob_id,
                              e->num_knobs ? "its knobs: " : "it has none", ids);
        }
        if (!knob_takes(&e->knobs[at], k->value)) {
            char list[HIPDNN_KNOB_MAX_VALUES * 22 + 40] = "";
            if (e->knobs[at].stride > 1)
                snprintf(list, sizeof(list), " in steps of %lld", (long long)e->knobs[at].stride);
            for (int32_t j = 0; j < e->knobs[at].num_values; ++j) {
                size_t used = strlen(list);
                snprintf(list + used, sizeof(list) - used, "%s%lld", j ? ", " : " (only ",
                         (long long)e->knobs[at].values[j]);
            }
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "ENGINECFG: knob %lld of engine '%s' "
                              "takes %lld to %lld%s%s, not %lld", (long long)k->knob_id, e->name,
                              (long long)e->knobs[at].min, (long long)e->knobs[at].max, list,
                              e->knobs[at].num_values ? ")" : "", (long long)k->value);
        }
    }
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t cfg_finalize(hipdnnBackendDescriptor_t d) {
    hipdnnEngineCfgState* s = C(d);
    if (!s->engine) return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "ENGINECFG: ENGINE is not set");
    if (!s->engine->finalized)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED, "ENGINECFG: the engine is not finalized");
    return check_knob_choices(s);
}

const hipdnnDescriptorClass hipdnnEngineCfgClass = {
    "ENGINECFG", sizeof(hipdnnEngineCfgState), NULL, cfg_destroy, cfg_set, cfg_get, cfg_finalize,
};

/* ---- KNOB_CHOICE ---------------------------------------------------------------------- */

#define K(d) ((hipdnnKnobChoiceState*)(d)->state)

static hipdnnStatus_t knob_set(hipdnnBackendDescriptor_t d, hipdnnBackendAttributeName_t name,
                               hipdnnBackendAttributeType_t type, int64_t count, const void* v) {
    hipdnnStatus_t st;
    if (name != HIPDNN_ATTR_KNOB_CHOICE_KNOB_TYPE && name != HIPDNN_ATTR_KNOB_CHOICE_KNOB_VALUE)
        return hipdnnAttrUnknown("KNOB_CHOICE", name);
    if ((st = hipdnnAttrExpect("KNOB_CHOICE", name == HIPDNN_ATTR_KNOB_CHOICE_KNOB_TYPE ? "KNOB_TYPE"
                               : "KNOB_VALUE", HIPDNN_TYPE_INT64, type, count, 1, 1, v)))
        return st;
    if (name == HIPDNN_ATTR_KNOB_CHOICE_KNOB_TYPE) K(d)->knob_id = *(const int64_t*)v;
    else K(d)->value = *(const int64_t*)v;
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t knob_get(hipdnnBackendDescriptor_t d, hipdnnBackendAttributeName_t name,
                               hipdnnBackendAttributeType_t type, int64_t req, int64_t* count,
                               void* v) {
    if (name == HIPDNN_ATTR_KNOB_CHOICE_KNOB_TYPE)
        return hipdnnAttrReturn("KNOB_CHOICE", "KNOB_TYPE", HIPDNN_TYPE_INT64, type, req, count, v,
                                &K(d)->knob_id, 1, sizeof(int64_t));
    if (name == HIPDNN_ATTR_KNOB_CHOICE_KNOB_VALUE)
        return hipdnnAttrReturn("KNOB_CHOICE", "KNOB_VALUE", HIPDNN_TYPE_INT64, type, req, count, v,
                                &K(d)->value, 1, sizeof(int64_t));
    return hipdnnAttrUnknown("KNOB_CHOICE", name);
}

static hipdnnStatus_t knob_finalize(hipdnnBackendDescriptor_t d) {
    (void)d;
    return HIPDNN_STATUS_SUCCESS;
}

const hipdnnDescriptorClass hipdnnKnobChoiceClass = {
    "KNOB_CHOICE", sizeof(hipdnnKnobChoiceState), NULL, NULL, knob_set, knob_get, knob_finalize,
};
