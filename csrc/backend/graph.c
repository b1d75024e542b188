/* OPERATIONGRAPH descriptors: collect the ops' tensors into an SDK graph model, validate
 * and infer it, and keep it with its encoded bytes for heuristics, plans and plugins.
 * What was inferred stays in the graph (TENSORS_EXT shows it): the user's TENSOR
 * descriptors keep exactly what the user set, so one tensor may serve several graphs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aliasing.h"
#include "descriptor.h"
#include "error.h"
#include "graph_rules.h"
#include "handle.h"
#include "registry.h"

#define G(d) ((hipdnnGraphState*)(d)->state)

static void graph_destroy(hipdnnBackendDescriptor_t d) {
    hipdnnGraphState* s = G(d);
    if (s->handle) hipdnnHandleRelease(s->handle);
    for (int64_t i = 0; i < s->num_ops; ++i) hipdnnDescriptorRelease(s->ops[i]);
    free(s->ops);
    free(s->name);
    hipdnnSdkGraphFree(s->graph);
    free(s->bytes);
    free(s->span_bytes);
}

static hipdnnStatus_t graph_set(hipdnnBackendDescriptor_t d, hipdnnBackendAttributeName_t name,
                                hipdnnBackendAttributeType_t type, int64_t count, const void* v) {
    hipdnnGraphState* s = G(d);
    hipdnnStatus_t st;
    switch (name) {
    case HIPDNN_ATTR_OPERATIONGRAPH_HANDLE:
        if ((st = hipdnnAttrExpect("OPERATIONGRAPH", "HANDLE", HIPDNN_TYPE_HANDLE, type, count, 1, 1,
                                   v)))
            return st;
        if (d->finalized && s->handle)
            return hipdnnFail(HIPDNN_STATUS_NOT_INITIALIZED,
                              "OPERATIONGRAPH: HANDLE is already set on this finalized graph");
        if ((st = hipdnnHandleCheck(*(const hipdnnHandle_t*)v, "OPERATIONGRAPH HANDLE")))
            return st;
        /* Heuristics run on it, so the graph keeps it alive, as a plan does. */
        hipdnnHandleRetain(*(const hipdnnHandle_t*)v);
        if (s->handle) hipdnnHandleRelease(s->handle);
        s->handle = *(const hipdnnHandle_t*)v;
        return HIPDNN_STATUS_SUCCESS;
    case HIPDNN_ATTR_OPERATIONGRAPH_NAME_EXT:
        if ((st = hipdnnAttrExpect("OPERATIONGRAPH", "NAME_EXT", HIPDNN_TYPE_CHAR, type, count, 0,
                                   INT32_MAX, v)))
            return st;
        return hipdnnAttrSetString(&s->name, count, v);
    case HIPDNN_ATTR_OPERATIONGRAPH_OPS: {
        if ((st = hipdnnAttrExpect("OPERATIONGRAPH", "OPS", HIPDNN_TYPE_BACKEND_DESCRIPTOR, type,
                                   count, 1, 1 << 20, v)))
            return st;
        const hipdnnBackendDescriptor_t* ops = v;
        for (int64_t i = 0; i < count; ++i) {
            char what[64];
            snprintf(what, sizeof(what), "OPERATIONGRAPH OPS[%lld]", (long long)i);
            if ((st = hipdnnDescriptorCheck(ops[i], -1, what))) return st;
            if (!hipdnnSdkOpInfoForDescriptor(ops[i]->type))
                return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                                  "OPERATIONGRAPH OPS[%lld]: a %s descriptor is not an operation",
                                  (long long)i, hipdnnDescriptorName(ops[i]));
        }
        hipdnnBackendDescriptor_t* copy = malloc((size_t)count * sizeof(*copy));
        if (!copy) return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory");
        for (int64_t i = 0; i < count; ++i) {
            copy[i] = ops[i];
            hipdnnDescriptorRetain(copy[i]);
        }
        for (int64_t i = 0; i < s->num_ops; ++i) hipdnnDescriptorRelease(s->ops[i]);
        free(s->ops);
        s->ops = copy;
        s->num_ops = count;
        return HIPDNN_STATUS_SUCCESS;
    }
    default: return hipdnnAttrUnknown("OPERATIONGRAPH", name);
    }
}

/* A new TENSOR descriptor holding a finalized graph's tensor (and its ragged offset's,
 * which validation found in g without one of its own). */
static hipdnnStatus_t tensor_descriptor_of(const hipdnnSdkGraph* g, const hipdnnSdkTensor* t,
                                           hipdnnBackendDescriptor_t* out) {
    hipdnnStatus_t st = hipdnnDescriptorNew(HIPDNN_BACKEND_TENSOR_DESCRIPTOR, out);
    if (st) return st;
    hipdnnTensorState* ts = (*out)->state;
    ts->t = *t;
    ts->t.name = NULL;
    if ((st = hipdnnAttrSetString(&ts->t.name, (int64_t)strlen(t->name), t->name))) {
        hipdnnDescriptorRelease(*out);
        return st;
    }
    ts->has_uid = true;
    ts->has_strides = true;
    ts->num_strides = t->ndim;
    ts->has_value = t->has_value;
    (*out)->finalized = true;
    const hipdnnSdkTensor* r = t->has_ragged_offset
                                   ? hipdnnSdkGraphFindTensor(g, t->ragged_offset) : NULL;
    if (r && !r->has_ragged_offset && (st = tensor_descriptor_of(g, r, &ts->ragged))) {
        hipdnnDescriptorRelease(*out);
        return st;
    }
    return HIPDNN_STATUS_SUCCESS;
}

/* A deserialized graph's OPS: a TENSOR descriptor per tensor, an operation descriptor per
 * node, all finalized, so it reads like a graph built from descriptors. */
hipdnnStatus_t hipdnnGraphAdoptNodes(hipdnnGraphState* s) {
    const hipdnnSdkGraph* g = s->graph;
    hipdnnStatus_t st = HIPDNN_STATUS_SUCCESS;
    hipdnnSdkUidMap map;
    hipdnnBackendDescriptor_t* tensors = calloc((size_t)g->num_tensors + 1, sizeof(*tensors));
    s->ops = calloc((size_t)g->num_nodes + 1, sizeof(*s->ops));
    if (!tensors || !s->ops || !hipdnnSdkUidMapBuild(&map, g)) {
        free(tensors);
        return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory");
    }
    for (int32_t i = 0; i < g->num_tensors && !st; ++i)
        st = tensor_descriptor_of(g, &g->tensors[i], &tensors[i]);
    for (int32_t i = 0; i < g->num_nodes && !st; ++i) {
        st = hipdnnOperationFromNode(&map, &g->nodes[i], tensors, &s->ops[i]);
        if (!st) s->num_ops = i + 1;
    }
    for (int32_t i = 0; i < g->num_tensors; ++i) hipdnnDescriptorRelease(tensors[i]);
    free(tensors);
    hipdnnSdkUidMapFree(&map);
    return st;
}

/* One line per node and per tensor; ports are looked up through `map` (linear in the
 * graph's size: a scan per port made 80 000-node graphs take minutes). */
static void describe(const hipdnnSdkGraph* g, const hipdnnSdkUidMap* map, char* buf,
                     size_t len) {
    size_t off = 0;
#define APPEND(...)                                                                 \
    do {                                                                            \
        if (off < len) {                                                            \
            int k_ = snprintf(buf + off, len - off, __VA_ARGS__);                   \
            off += k_ > 0 ? (size_t)k_ : 0;                                         \
        }                                                                           \
    } while (0)
    APPEND("graph '%s': %d nodes, %d tensors\n", g->name, g->num_nodes, g->num_tensors);
    for (int32_t i = 0; i < g->num_nodes; ++i) {
        const hipdnnSdkNode* n = &g->nodes[i];
        const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(n->kind);
        char label[160];
        APPEND("  %s:", hipdnnSdkNodeLabel(n, label, sizeof(label)));
        for (int p = 0; p < info->num_inputs; ++p) {
            int32_t k = hipdnnSdkUidMapFind(map, n->inputs[p]);
            if (k < 0) continue;
            const hipdnnSdkTensor* t = &g->tensors[k];
            APPEND(" %s=%s", info->inputs[p].name, t->name[0] ? t->name : "?");
        }
        APPEND(" ->");
        for (int p = 0; p < info->num_outputs; ++p) {
            int32_t k = hipdnnSdkUidMapFind(map, n->outputs[p]);
            if (k >= 0)
                APPEND(" %s=%s", info->outputs[p].name,
                       g->tensors[k].name[0] ? g->tensors[k].name : "?");
        }
        APPEND("\n");
    }
    for (int32_t i = 0; i < g->num_tensors; ++i) {
        const hipdnnSdkTensor* t = &g->tensors[i];
        APPEND("  tensor '%s' uid %lld %s [", t->name, (long long)t->uid,
               hipdnnSdkDataTypeName(t->data_type));
        for (int k = 0; k < t->ndim; ++k) APPEND("%s%lld", k ? ", " : "", (long long)t->dims[k]);
        APPEND("] strides [");
        for (int k = 0; k < t->ndim; ++k)
            APPEND("%s%lld", k ? ", " : "", (long long)t->strides[k]);
        APPEND("]%s%s\n", t->is_virtual ? " virtual" : "", t->is_by_value ? " by-value" : "");
    }
#undef APPEND
}

/* OPS: the operation descriptors, each retained for the caller. */
static hipdnnStatus_t get_ops(const hipdnnGraphState* s, hipdnnBackendAttributeType_t type,
                              int64_t req, int64_t* count, void* v) {
    if (type != HIPDNN_TYPE_BACKEND_DESCRIPTOR)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                          "OPERATIONGRAPH descriptor: OPS has type BACKEND_DESCRIPTOR");
    *count = s->num_ops;
    hipdnnBackendDescriptor_t* out = v;
    for (int64_t i = 0; i < req && i < s->num_ops; ++i) {
        hipdnnDescriptorRetain(s->ops[i]);
        out[i] = s->ops[i];
    }
    return HIPDNN_STATUS_SUCCESS;
}

/* TENSORS_EXT: a new TENSOR descriptor per tensor of the finalized graph, inferred
 * values included. */
static hipdnnStatus_t get_tensors(hipdnnBackendDescriptor_t d, hipdnnBackendAttributeType_t type,
                                  int64_t req, int64_t* count, void* v) {
    const hipdnnGraphState* s = G(d);
    if (!d->finalized)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED,
                          "OPERATIONGRAPH: TENSORS_EXT needs a finalized graph");
    if (type != HIPDNN_TYPE_BACKEND_DESCRIPTOR)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                          "OPERATIONGRAPH descriptor: TENSORS_EXT has type BACKEND_DESCRIPTOR");
    *count = s->graph->num_tensors;
    hipdnnBackendDescriptor_t* out = v;
    for (int64_t i = 0; i < req && i < s->graph->num_tensors; ++i) {
        hipdnnStatus_t st = tensor_descriptor_of(s->graph, &s->graph->tensors[i], &out[i]);
        if (st) {
            for (int64_t k = 0; k < i; ++k) hipdnnDescriptorRelease(out[k]);
            return st;
        }
    }
    return HIPDNN_STATUS_SUCCESS;
}

/* OUTPUT_UIDS_EXT: the uids of the non-virtual tensors nodes write, in node order. */
static hipdnnStatus_t get_output_uids(hipdnnBackendDescriptor_t d,
                                      hipdnnBackendAttributeType_t type, int64_t req,
                                      int64_t* count, void* v) {
    if (!d->finalized)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED,
                          "OPERATIONGRAPH: OUTPUT_UIDS_EXT needs a finalized graph");
    const hipdnnSdkGraph* g = G(d)->graph;
    int64_t* uids = malloc(((size_t)g->num_nodes * HIPDNN_MAX_PORTS + 1) * sizeof(int64_t));
    hipdnnSdkUidMap map;
    if (!uids || !hipdnnSdkUidMapBuild(&map, g)) {
        free(uids);
        return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory");
    }
    int64_t n = 0;
    for (int32_t i = 0; i < g->num_nodes; ++i)
        for (int p = 0; p < HIPDNN_MAX_PORTS; ++p) {
            int64_t uid = g->nodes[i].outputs[p];
            int32_t t = uid == HIPDNN_NO_TENSOR ? -1 : hipdnnSdkUidMapFind(&map, uid);
            if (t >= 0 && !g->tensors[t].is_virtual) uids[n++] = uid;
        }
    hipdnnSdkUidMapFree(&map);
    hipdnnStatus_t st = hipdnnAttrReturn("OPERATIONGRAPH", "OUTPUT_UIDS_EXT", HIPDNN_TYPE_INT64,
                                         type, req, count, v, uids, n, sizeof(int64_t));
    free(uids);
    return st;
}

/* DESCRIPTION_EXT: describe()'s text of the finalized graph. */
static hipdnnStatus_t get_description(hipdnnBackendDescriptor_t d,
                                      hipdnnBackendAttributeType_t type, int64_t req,
                                      int64_t* count, void* v) {
    if (!d->finalized)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED,
                          "OPERATIONGRAPH: DESCRIPTION_EXT needs a finalized graph");
    const hipdnnSdkGraph* g = G(d)->graph;
    size_t len = 256 + (size_t)(g->num_nodes + g->num_tensors) * 400;
    char* buf = malloc(len);
    hipdnnSdkUidMap map;
    if (!buf || !hipdnnSdkUidMapBuild(&map, g)) {
        free(buf);
        return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory");
    }
    describe(g, &map, buf, len);
    hipdnnSdkUidMapFree(&map);
    hipdnnStatus_t st =
        hipdnnAttrReturnString("OPERATIONGRAPH", "DESCRIPTION_EXT", type, req, count, v, buf);
    free(buf);
    return st;
}

static hipdnnStatus_t graph_get(hipdnnBackendDescriptor_t d, hipdnnBackendAttributeName_t name,
                                hipdnnBackendAttributeType_t type, int64_t req, int64_t* count,
                                void* v) {
    hipdnnGraphState* s = G(d);
    switch (name) {
    case HIPDNN_ATTR_OPERATIONGRAPH_HANDLE:
        return hipdnnAttrReturn("OPERATIONGRAPH", "HANDLE", HIPDNN_TYPE_HANDLE, type, req, count, v,
                                &s->handle, s->handle ? 1 : 0, sizeof(hipdnnHandle_t));
    case HIPDNN_ATTR_OPERATIONGRAPH_NAME_EXT:
        return hipdnnAttrReturnString("OPERATIONGRAPH", "NAME_EXT", type, req, count, v,
                                      s->graph ? s->graph->name : s->name);
    case HIPDNN_ATTR_OPERATIONGRAPH_OPS: return get_ops(s, type, req, count, v);
    case HIPDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT: {
        int64_t n = 0;
        hipdnnStatus_t st = hipdnnRegistryEnsureLoaded();
        if (st) return st;
        n = hipdnnRegistryEngineCount();
        return hipdnnAttrReturn("OPERATIONGRAPH", "ENGINE_GLOBAL_COUNT", HIPDNN_TYPE_INT64, type,
                                req, count, v, &n, 1, sizeof(n));
    }
    case HIPDNN_ATTR_OPERATIONGRAPH_TENSORS_EXT: return get_tensors(d, type, req, count, v);
    case HIPDNN_ATTR_OPERATIONGRAPH_OUTPUT_UIDS_EXT:
        return get_output_uids(d, type, req, count, v);
    case HIPDNN_ATTR_OPERATIONGRAPH_DESCRIPTION_EXT:
        return get_description(d, type, req, count, v);
    default: return hipdnnAttrUnknown("OPERATIONGRAPH", name);
    }
}

/* Index of a tensor descriptor in the list being built, adding it if new: an open-
 * addressing set of descriptor pointers (`cap` slots, a power of two), so collecting is
 * linear in the number of ports. */
static int64_t tensor_slot(hipdnnBackendDescriptor_t* seen, int64_t* n, int64_t* set,
                           int64_t cap, hipdnnBackendDescriptor_t t) {
    uint64_t h = ((uint64_t)(uintptr_t)t >> 4) * UINT64_C(0x9E3779B97F4A7C15);
    for (int64_t i = (int64_t)(h >> 20) & (cap - 1);; i = (i + 1) & (cap - 1)) {
        if (set[i] < 0) {
            set[i] = *n;
            seen[*n] = t;
            return (*n)++;
        }
        if (seen[set[i]] == t) return set[i];
    }
}

static hipdnnStatus_t oom_building(void) {
    return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory building the graph");
}

/* The tensor descriptors met so far, each once, in order of first use. */
typedef struct {
    hipdnnBackendDescriptor_t* seen;
    int64_t n;
    int64_t* set; /* tensor_slot's open-addressing set, `cap` slots */
    int64_t cap;
} tensor_list;

/* Node i from op descriptor od (finalized here if the user did not: are its ports set?),
 * its name copied and each port's tensor finalized and listed. */
static hipdnnStatus_t collect_node(hipdnnBackendDescriptor_t od, hipdnnSdkGraph* g, int64_t i,
                                   tensor_list* tl) {
    hipdnnStatus_t st;
    hipdnnOperationState* os = od->state;
    if (!od->finalized && (st = od->cls->finalize(od))) return st;
    od->finalized = true;
    hipdnnSdkNode* n = &g->nodes[i];
    *n = os->node;
    const char* nm = os->node.name ? os->node.name : "";
    n->name = malloc(strlen(nm) + 1);
    g->num_nodes = (int32_t)i + 1;
    if (!n->name) return oom_building();
    strcpy(n->name, nm);
    for (int p = 0; p < HIPDNN_MAX_PORTS; ++p) {
        hipdnnBackendDescriptor_t ports[2] = {os->in[p], os->out[p]};
        for (int io = 0; io < 2; ++io) {
            if (!ports[io]) continue;
            if ((st = hipdnnTensorClass.finalize(ports[io]))) return st;
            tensor_slot(tl->seen, &tl->n, tl->set, tl->cap, ports[io]);
            hipdnnTensorState* ts = ports[io]->state;
            if (ts->ragged) /* finalized with its tensor: a graph input too */
                tensor_slot(tl->seen, &tl->n, tl->set, tl->cap, ts->ragged);
            (io ? n->outputs : n->inputs)[p] = ts->t.uid;
        }
    }
    return HIPDNN_STATUS_SUCCESS;
}

/* The graph's tensors: copies of the listed descriptors' (strides only where set). */
static hipdnnStatus_t collect_tensors(hipdnnSdkGraph* g, const tensor_list* tl) {
    g->tensors = calloc((size_t)tl->n + 1, sizeof(hipdnnSdkTensor));
    if (!g->tensors) return oom_building();
    for (int64_t i = 0; i < tl->n; ++i) {
        hipdnnTensorState* ts = tl->seen[i]->state;
        hipdnnSdkTensor* t = &g->tensors[i];
        *t = ts->t;
        if (!ts->has_strides) memset(t->strides, 0, sizeof(t->strides));
        t->has_value = t->is_by_value && ts->has_value;
        const char* nm = ts->t.name ? ts->t.name : "";
        t->name = malloc(strlen(nm) + 1);
        g->num_tensors = (int32_t)i + 1;
        if (!t->name) return oom_building();
        strcpy(t->name, nm); /* two descriptors sharing a uid: validation says so */
    }
    return HIPDNN_STATUS_SUCCESS;
}

/* Builds the SDK model from the op descriptors. */
static hipdnnStatus_t collect(hipdnnGraphState* s, hipdnnSdkGraph** out,
                              hipdnnBackendDescriptor_t** tensors_out, int64_t* num_out) {
    hipdnnStatus_t st = HIPDNN_STATUS_SUCCESS;
    int64_t max_t = s->num_ops * 4 * HIPDNN_MAX_PORTS; /* a port's tensor and its offsets */
    tensor_list tl = {NULL, 0, NULL, 16};
    while (tl.cap < 2 * max_t) tl.cap *= 2;
    tl.seen = calloc((size_t)max_t + 1, sizeof(*tl.seen));
    tl.set = malloc((size_t)tl.cap * sizeof(int64_t));
    hipdnnSdkGraph* g = calloc(1, sizeof(*g));
    if (!tl.seen || !tl.set || !g) {
        free(tl.seen);
        free(tl.set);
        free(g);
        return oom_building();
    }
    memset(tl.set, 0xff, (size_t)tl.cap * sizeof(int64_t));
    g->name = malloc(1 + (s->name ? strlen(s->name) : 0));
    g->nodes = calloc((size_t)s->num_ops, sizeof(hipdnnSdkNode));
    if (!g->name || !g->nodes) st = oom_building();
    else strcpy(g->name, s->name ? s->name : "");
    for (int64_t i = 0; i < s->num_ops && !st; ++i) st = collect_node(s->ops[i], g, i, &tl);
    if (!st) st = collect_tensors(g, &tl);
    free(tl.set);
    if (st) {
        free(tl.seen);
        hipdnnSdkGraphFree(g);
        return st;
    }
    *out = g;
    *tensors_out = tl.seen;
    *num_out = tl.n;
    return HIPDNN_STATUS_SUCCESS;
}

/* Validate + infer + encode; shared by finalize and deserialize. */
hipdnnStatus_t hipdnnGraphCheckAndEncode(hipdnnGraphState* s, hipdnnSdkGraph* g) {
    hipdnnStatus_t st = hipdnnValidateGraph(g);
    if (!st) st = hipdnnInferGraph(g);
    if (st) return st;
    uint8_t* bytes = NULL;
    size_t n = 0;
    int64_t* spans = malloc(((size_t)g->num_tensors + 1) * sizeof(int64_t));
    if (!spans || hipdnnSdkGraphEncode(g, &bytes, &n) != 0) {
        free(spans);
        return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory serializing the graph");
    }
    for (int32_t k = 0; k < g->num_tensors; ++k) {
        const hipdnnSdkTensor* t = &g->tensors[k];
        int64_t span;
        if (t->has_ragged_offset)
            spans[k] = HIPDNN_SPAN_RAGGED;
        else if (!hipdnnSdkSpanElements(t->ndim, t->dims, t->strides, &span) ||
                 __builtin_mul_overflow(span, (int64_t)hipdnnSdkDataTypeSize(t->data_type),
                                        &spans[k]))
            spans[k] = -1;
    }
    s->span_bytes = spans;
    s->graph = g;
    s->bytes = bytes;
    s->num_bytes = n;
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t graph_finalize(hipdnnBackendDescriptor_t d) {
    hipdnnGraphState* s = G(d);
    if (s->num_ops == 0)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "graph '%s': OPS is not set; a graph needs at "
                          "least one operation", s->name ? s->name : "");
    if (!s->handle)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "graph '%s': HANDLE is not set; engines check "
                          "support on the graph's handle", s->name ? s->name : "");
    hipdnnSdkGraph* g = NULL;
    hipdnnBackendDescriptor_t* tensors = NULL;
    int64_t nt = 0;
    hipdnnStatus_t st = collect(s, &g, &tensors, &nt);
    if (st) return st;
    st = hipdnnGraphCheckAndEncode(s, g);
    if (st) {
        hipdnnSdkGraphFree(g);
        free(tensors);
        return st;
    }
    free(tensors);
    return HIPDNN_STATUS_SUCCESS;
}

const hipdnnDescriptorClass hipdnnGraphClass = {
    "OPERATIONGRAPH", sizeof(hipdnnGraphState), NULL, graph_destroy,
    graph_set,        graph_get,                graph_finalize,
};
