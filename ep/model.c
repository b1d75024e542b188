/* model.c — the ONNX nodes of an OrtGraph copied into plain C (ep_model): op, domain,
 * attributes, and for each value its name, element type, shape as far as ORT knows it,
 * whether it is a constant initializer (with its values when it is a small int64 one,
 * such as a reduction's axes, or a one-element float one, such as a scale), and which node of the model produces it.  Names are
 * copied: an OrtGraph lives only as long as the call that passed it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipdnn_ep.h"

#define TRY(call)                         \
    do {                                  \
        OrtStatus* st_ = (call);          \
        if (st_) return st_;              \
    } while (0)

static char* dup_str(const char* s) {
    size_t n = strlen(s ? s : "");
    char* d = malloc(n + 1);
    if (d) memcpy(d, s ? s : "", n + 1);
    return d;
}

/* FNV-1a: value names are looked up once per node port, so a large model needs an index. */
static uint64_t name_hash(const char* s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; ++s) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

int ep_model_find(const ep_model* m, const char* name) {
    if (!m->n_slots) return -1;
    for (size_t i = name_hash(name) & (size_t)(m->n_slots - 1);; i = (i + 1) & (size_t)(m->n_slots - 1)) {
        int v = m->slots[i] - 1;
        if (v < 0) return -1;
        if (!strcmp(m->values[v].name, name)) return v;
    }
}

/* Adds value v to the index, doubling it past half full. */
static bool index_add(ep_model* m, int v) {
    if (2 * (m->n_values + 1) > m->n_slots) {
        int n = m->n_slots ? 2 * m->n_slots : 64;
        int* slots = calloc((size_t)n, sizeof(int));
        if (!slots) return false;
        free(m->slots);
        m->slots = slots;
        m->n_slots = n;
        for (int i = 0; i < m->n_values; ++i)
            if (i != v) index_add(m, i);
    }
    size_t i = name_hash(m->values[v].name) & (size_t)(m->n_slots - 1);
    while (m->slots[i]) i = (i + 1) & (size_t)(m->n_slots - 1);
    m->slots[i] = v + 1;
    return true;
}

static float half_to_float(uint16_t h) {
    uint32_t e = (h >> 10) & 31u, f = h & 1023u, bits;
    if (e == 0) { /* zero or subnormal: f * 2^-24, exact in float */
        float m = (float)f * 5.9604644775390625e-8f;
        return h & 0x8000u ? -m : m;
    }
    bits = ((uint32_t)(h & 0x8000u) << 16) | (e == 31 ? 255u << 23 : (e + 112u) << 23) | f << 13;
    float out;
    memcpy(&out, &bits, sizeof(out));
    return out;
}

/* A one-element float32 / float16 constant's value into v->fval (an attention pattern's
 * scale, read at lowering). */
static OrtStatus* read_scalar(const OrtValueInfo* vi, ep_value* v) {
    const OrtValue* val = NULL;
    TRY(g_ort->ValueInfo_GetInitializerValue(vi, &val));
    if (!val) return NULL;
    ONNXTensorElementDataType et;
    const int64_t* shape = NULL;
    size_t nd = 0;
    TRY(g_ort->GetTensorElementTypeAndShapeDataReference(val, &et, &shape, &nd));
    int64_t count = 1;
    for (size_t i = 0; i < nd; ++i) count *= shape[i];
    if (count != 1) return NULL;
    const void* data = NULL;
    TRY(g_ort->GetTensorData(val, &data));
    v->fval = et == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16 ? half_to_float(*(const uint16_t*)data)
                                                         : *(const float*)data;
    v->has_fval = true;
    return NULL;
}

/* Reads what a value info says about its tensor into v. */
static OrtStatus* read_value(const OrtValueInfo* vi, ep_value* v) {
    v->rank = -1;
    v->producer = -1;
    const OrtTypeInfo* ti = NULL;
    TRY(g_ort->GetValueInfoTypeInfo(vi, &ti));
    const OrtTensorTypeAndShapeInfo* tsi = NULL;
    if (ti) TRY(g_ort->CastTypeInfoToTensorInfo(ti, &tsi));
    if (tsi) {
        ONNXTensorElementDataType et;
        TRY(g_ort->GetTensorElementType(tsi, &et));
        v->elem_type = (int32_t)et;
        size_t nd = 0;
        TRY(g_ort->GetDimensionsCount(tsi, &nd));
        /* ORT reports an unknown rank as 0 dims with no shape; a real scalar also has 0
         * dims.  Scalars are not claimed, so both mean "not usable". */
        if (nd <= EP_MAX_RANK && nd > 0) {
            TRY(g_ort->GetDimensions(tsi, v->dims, nd));
            v->rank = (int)nd;
            for (size_t i = 0; i < nd; ++i)
                if (v->dims[i] <= 0) v->dims[i] = -1;
        } else if (nd == 0) {
            v->rank = 0;
        }
    }
    bool is_const = false;
    TRY(g_ort->ValueInfo_IsConstantInitializer(vi, &is_const));
    v->is_const = is_const;
    bool is_out = false;
    TRY(g_ort->ValueInfo_IsGraphOutput(vi, &is_out));
    v->is_graph_output = is_out;
    if (is_const && (v->elem_type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT ||
                     v->elem_type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16))
        TRY(read_scalar(vi, v));
    if (is_const && v->elem_type == ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64) {
        const OrtValue* val = NULL;
        TRY(g_ort->ValueInfo_GetInitializerValue(vi, &val));
        if (val) {
            ONNXTensorElementDataType et;
            const int64_t* shape = NULL;
            size_t nd = 0;
            TRY(g_ort->GetTensorElementTypeAndShapeDataReference(val, &et, &shape, &nd));
            int64_t count = 1;
            for (size_t i = 0; i < nd; ++i) count *= shape[i];
            if (count <= 64) {
                const void* data = NULL;
                TRY(g_ort->GetTensorData(val, &data));
                v->ivals = malloc((size_t)(count > 0 ? count : 1) * sizeof(int64_t));
                if (!v->ivals) return ep_status(ORT_FAIL, "out of memory");
                if (count > 0) memcpy(v->ivals, data, (size_t)count * sizeof(int64_t));
                v->n_ivals = count;
            }
        }
    }
    return NULL;
}

/* The index of the value named by vi, added on first sight; -1 for an absent one. */
static OrtStatus* intern(ep_model* m, const OrtValueInfo* vi, int* index) {
    *index = -1;
    if (!vi) return NULL;
    const char* name = NULL;
    TRY(g_ort->GetValueInfoName(vi, &name));
    if (!name || !name[0]) return NULL;
    int i = ep_model_find(m, name);
    if (i >= 0) {
        *index = i;
        return NULL;
    }
    if (m->n_values == m->cap_values) {
        int cap = m->cap_values ? 2 * m->cap_values : 32;
        ep_value* nv = realloc(m->values, (size_t)cap * sizeof(ep_value));
        if (!nv) return ep_status(ORT_FAIL, "out of memory");
        m->values = nv;
        m->cap_values = cap;
    }
    ep_value* v = &m->values[m->n_values];
    memset(v, 0, sizeof(*v));
    v->name = dup_str(name);
    if (!v->name) return ep_status(ORT_FAIL, "out of memory");
    ++m->n_values; /* counted now so that ep_model_free frees what read_value made */
    if (!index_add(m, m->n_values - 1)) return ep_status(ORT_FAIL, "out of memory");
    TRY(read_value(vi, v));
    *index = m->n_values - 1;
    return NULL;
}

static OrtStatus* read_attr(const OrtOpAttr* a, ep_attr* out) {
    const char* name = NULL;
    TRY(g_ort->OpAttr_GetName(a, &name));
    out->name = dup_str(name);
    TRY(g_ort->OpAttr_GetType(a, &out->type));
    size_t got = 0;
    switch (out->type) {
        case ORT_OP_ATTR_INT:
            TRY(g_ort->ReadOpAttr(a, ORT_OP_ATTR_INT, &out->i, sizeof(out->i), &got));
            break;
        case ORT_OP_ATTR_FLOAT:
            TRY(g_ort->ReadOpAttr(a, ORT_OP_ATTR_FLOAT, &out->f, sizeof(out->f), &got));
            break;
        case ORT_OP_ATTR_INTS: {
            /* the size query fails with the size it needs */
            OrtStatus* st = g_ort->ReadOpAttr(a, ORT_OP_ATTR_INTS, NULL, 0, &got);
            if (st) g_ort->ReleaseStatus(st);
            out->n_ints = got / sizeof(int64_t);
            out->ints = malloc(got ? got : 1);
            if (!out->ints) return ep_status(ORT_FAIL, "out of memory");
            if (got) TRY(g_ort->ReadOpAttr(a, ORT_OP_ATTR_INTS, out->ints, got, &got));
            break;
        }
        case ORT_OP_ATTR_STRING: {
            OrtStatus* st = g_ort->ReadOpAttr(a, ORT_OP_ATTR_STRING, NULL, 0, &got);
            if (st) g_ort->ReleaseStatus(st);
            out->s = calloc(got + 1, 1);
            if (!out->s) return ep_status(ORT_FAIL, "out of memory");
            if (got) TRY(g_ort->ReadOpAttr(a, ORT_OP_ATTR_STRING, out->s, got, &got));
            out->n_s = got;
            break;
        }
        default: /* FLOATS, STRINGS, GRAPH, TENSOR: no claimed op reads them */
            break;
    }
    return NULL;
}

static OrtStatus* read_node(ep_model* m, const OrtNode* on, int index) {
    ep_node* n = &m->nodes[index];
    const char *name = NULL, *op = NULL, *domain = NULL;
    TRY(g_ort->Node_GetName(on, &name));
    TRY(g_ort->Node_GetOperatorType(on, &op));
    TRY(g_ort->Node_GetDomain(on, &domain));
    TRY(g_ort->Node_GetSinceVersion(on, &n->since_version));
    n->ort = on;
    n->name = dup_str(name);
    n->op = dup_str(op);
    n->domain = dup_str(domain);
    if (!n->name || !n->op || !n->domain) return ep_status(ORT_FAIL, "out of memory");
    size_t ni = 0, no = 0, na = 0;
    TRY(g_ort->Node_GetNumInputs(on, &ni));
    TRY(g_ort->Node_GetNumOutputs(on, &no));
    TRY(g_ort->Node_GetNumAttributes(on, &na));
    /* A node with more inputs or outputs than any claimed op keeps the first EP_MAX_IO in
     * in[] / out[] (it is declined by its op type), but every value it touches is read: an
     * EPContext node has one input per weight, and its fused node is bound by name. */
    n->n_in = (int)ni;
    n->n_out = (int)no;
    for (int k = 0; k < EP_MAX_IO; ++k) n->in[k] = n->out[k] = -1;
    if (ni > EP_MAX_IO && !(n->in_more = malloc((ni - EP_MAX_IO) * sizeof(int))))
        return ep_status(ORT_FAIL, "out of memory");
    for (size_t k = EP_MAX_IO; k < ni; ++k) n->in_more[k - EP_MAX_IO] = -1;
    const OrtValueInfo** ins = calloc(ni + no + 1, sizeof(*ins));
    const OrtValueInfo** outs = ins + ni;
    if (!ins) return ep_status(ORT_FAIL, "out of memory");
    OrtStatus* st = ni ? g_ort->Node_GetInputs(on, ins, ni) : NULL;
    if (!st && no) st = g_ort->Node_GetOutputs(on, outs, no);
    for (size_t k = 0; !st && k < ni + no; ++k) {
        int v = -1;
        st = intern(m, ins[k], &v);
        if (k < ni && k < EP_MAX_IO) n->in[k] = v;
        if (k < ni && k >= EP_MAX_IO) n->in_more[k - EP_MAX_IO] = v;
        if (k >= ni && k - ni < EP_MAX_IO) n->out[k - ni] = v;
        if (!st && v >= 0 && k >= ni) m->values[v].producer = index;
        if (!st && v >= 0 && k < ni) ++m->values[v].n_consumers;
    }
    free(ins);
    if (st) return st;
    if (na) {
        const OrtOpAttr** attrs = calloc(na, sizeof(*attrs));
        n->attrs = calloc(na, sizeof(ep_attr));
        if (!attrs || !n->attrs) {
            free(attrs);
            return ep_status(ORT_FAIL, "out of memory");
        }
        st = g_ort->Node_GetAttributes(on, attrs, na);
        for (size_t k = 0; !st && k < na; ++k, ++n->n_attrs) st = read_attr(attrs[k], &n->attrs[k]);
        free(attrs);
        if (st) return st;
    }
    return NULL;
}

OrtStatus* ep_model_read(const OrtGraph* graph, ep_model* m) {
    memset(m, 0, sizeof(*m));
    size_t nn = 0;
    TRY(g_ort->Graph_GetNumNodes(graph, &nn));
    const OrtNode** nodes = calloc(nn ? nn : 1, sizeof(*nodes));
    m->nodes = calloc(nn ? nn : 1, sizeof(ep_node));
    if (!nodes || !m->nodes) {
        free(nodes);
        return ep_status(ORT_FAIL, "out of memory");
    }
    OrtStatus* st = nn ? g_ort->Graph_GetNodes(graph, nodes, nn) : NULL;
    for (size_t i = 0; !st && i < nn; ++i) {
        m->n_nodes = (int)i + 1;
        st = read_node(m, nodes[i], (int)i);
    }
    free(nodes);
    return st;
}

static OrtStatus* bind_list(ep_model* m, const OrtValueInfo** vis, size_t n, int** out,
                            int* count, const char* what) {
    *out = calloc(n ? n : 1, sizeof(int));
    if (!*out) return ep_status(ORT_FAIL, "out of memory");
    *count = (int)n;
    for (size_t k = 0; k < n; ++k) {
        const char* name = NULL;
        if (vis[k]) TRY(g_ort->GetValueInfoName(vis[k], &name));
        (*out)[k] = name && name[0] ? ep_model_find(m, name) : -1;
        if (vis[k] && name && name[0] && (*out)[k] < 0)
            return ep_status(ORT_FAIL, "fused node %s %zu '%s' is not a value of its graph",
                             what, k, name);
    }
    return NULL;
}

OrtStatus* ep_model_bind_fused(ep_model* m, const OrtNode* fused) {
    size_t ni = 0, no = 0;
    TRY(g_ort->Node_GetNumInputs(fused, &ni));
    TRY(g_ort->Node_GetNumOutputs(fused, &no));
    const OrtValueInfo** ins = calloc(ni ? ni : 1, sizeof(*ins));
    const OrtValueInfo** outs = calloc(no ? no : 1, sizeof(*outs));
    OrtStatus* st = (!ins || !outs) ? ep_status(ORT_FAIL, "out of memory") : NULL;
    if (!st && ni) st = g_ort->Node_GetInputs(fused, ins, ni);
    if (!st && no) st = g_ort->Node_GetOutputs(fused, outs, no);
    if (!st) st = bind_list(m, ins, ni, &m->inputs, &m->n_inputs, "input");
    if (!st) st = bind_list(m, outs, no, &m->outputs, &m->n_outputs, "output");
    free(ins);
    free(outs);
    return st;
}

void ep_model_free(ep_model* m) {
    if (!m) return;
    for (int i = 0; i < m->n_values; ++i) {
        free(m->values[i].name);
        free(m->values[i].ivals);
    }
    for (int i = 0; i < m->n_nodes; ++i) {
        ep_node* n = &m->nodes[i];
        for (int k = 0; k < n->n_attrs; ++k) {
            free(n->attrs[k].name);
            free(n->attrs[k].ints);
            free(n->attrs[k].s);
        }
        free(n->attrs);
        free(n->in_more);
        free(n->name);
        free(n->op);
        free(n->domain);
    }
    free(m->values);
    free(m->slots);
    free(m->nodes);
    free(m->inputs);
    free(m->outputs);
    memset(m, 0, sizeof(*m));
}

const ep_attr* ep_attr_get(const ep_node* n, const char* name) {
    for (int k = 0; k < n->n_attrs; ++k)
        if (n->attrs[k].name && !strcmp(n->attrs[k].name, name)) return &n->attrs[k];
    return NULL;
}

int64_t ep_attr_int(const ep_node* n, const char* name, int64_t dflt) {
    const ep_attr* a = ep_attr_get(n, name);
    return a && a->type == ORT_OP_ATTR_INT ? a->i : dflt;
}

float ep_attr_float(const ep_node* n, const char* name, float dflt) {
    const ep_attr* a = ep_attr_get(n, name);
    return a && a->type == ORT_OP_ATTR_FLOAT ? a->f : dflt;
}

const char* ep_attr_string(const ep_node* n, const char* name, const char* dflt) {
    const ep_attr* a = ep_attr_get(n, name);
    return a && a->type == ORT_OP_ATTR_STRING && a->s ? a->s : dflt;
}

const char* ep_node_label(const ep_node* n, char* buf, size_t len) {
    if (n->name && n->name[0]) snprintf(buf, len, "%s '%s'", n->op, n->name);
    else snprintf(buf, len, "%s (unnamed)", n->op);
    return buf;
}
