/* lower.c — one fused node's ONNX model lowered to a hipdnn operation graph for concrete
 * input shapes and finalized; plan.c then picks the engine and builds the plan.
 *
 * Every ONNX value gets a hipdnn tensor with explicit dims (shape.c computes them): the
 * fused node's inputs and outputs are non-virtual and bound to the kernel context's
 * memory, packed row-major as ORT keeps them; everything else is virtual.  Where an op
 * needs a value in other dims (a lower rank lined up for broadcasting, a 1-D bias as
 * [1, K, 1, 1], a reduction's kept axes dropped) it gets a view: a second tensor over the
 * same memory for a fused-node input, a LOGICAL reshape for anything computed inside the
 * graph (so the dependency stays in the graph).
 *
 * A value with no elements (a batch of 0 after detection, a static empty dim, and what the
 * shape rules make of them) gets no tensor: hipdnn takes none, and there is nothing in it
 * to compute.  A node reading one computes nothing when its output is empty too, which is
 * what ONNX gives for most ops; a contraction or reduction over the empty dim still has an
 * output with elements (a sum over nothing, a MatMul over K = 0), which its row's `empty`
 * lowering makes without reading the empty input.  Every other node runs as usual, in the
 * same graph, so each output of the fused node is written whichever of its inputs are
 * empty.  (Declining such graphs at GetCapability cannot work: a symbolic batch is empty
 * only at run time, and ORT expects a fused node to compute what its nodes would.) */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipdnn_ep.h"

#include "lowering.h"

/* ---- bookkeeping ---------------------------------------------------------------------- */

static bool grow(void** p, int* cap, int need, size_t elem) {
    if (need <= *cap) return true;
    int c = *cap ? *cap * 2 : 16;
    while (c < need) c *= 2;
    void* q = realloc(*p, (size_t)c * elem);
    if (!q) return false;
    *p = q;
    *cap = c;
    return true;
}

void lw_failf(lw* w, const char* fmt, ...) {
    if (w->failed) return;
    w->failed = true;
    int n = snprintf(w->err, sizeof(w->err), "%s: ", w->label ? w->label : "graph");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->err + n, sizeof(w->err) - (size_t)n, fmt, ap);
    va_end(ap);
}

/* Checks a hipdnn call; on failure records "<node>: <what>: <status>: <hipdnn's message>". */
bool lw_ok(lw* w, hipdnnStatus_t st, const char* what) {
    if (st == HIPDNN_STATUS_SUCCESS) return true;
    lw_failf(w, "%s: %s: %s", what, hipdnnGetErrorString(st), hipdnnPeekLastErrorString_ext());
    return false;
}

static hipdnnBackendDescriptor_t keep(lw* w, hipdnnBackendDescriptor_t d) {
    if (!d) return NULL;
    if (!grow((void**)&w->descs, &w->cap_descs, w->n_descs + 1, sizeof(*w->descs))) {
        hipdnnBackendDestroyDescriptor(d);
        lw_failf(w, "out of memory");
        return NULL;
    }
    w->descs[w->n_descs++] = d;
    return d;
}

static hipdnnBackendDescriptor_t new_desc(lw* w, hipdnnBackendDescriptorType_t type) {
    if (w->failed) return NULL;
    hipdnnBackendDescriptor_t d = NULL;
    if (!lw_ok(w, hipdnnBackendCreateDescriptor(type, &d), "create descriptor")) return NULL;
    return keep(w, d);
}

void lw_bind(lw* w, hipdnnBackendDescriptor_t t, int64_t uid, int kind, int index) {
    if (!grow((void**)&w->binds, &w->cap_binds, w->n_binds + 1, sizeof(*w->binds)) ||
        !grow((void**)&w->bind_t, &w->cap_bind_t, w->n_binds + 1, sizeof(*w->bind_t))) {
        lw_failf(w, "out of memory");
        return;
    }
    w->bind_t[w->n_binds] = t;
    w->binds[w->n_binds++] = (ep_binding){uid, (ep_bind_kind)kind, index};
}

static void packed_strides(const ep_shape* s, int64_t* strides) {
    int64_t acc = 1;
    for (int i = s->rank - 1; i >= 0; --i) {
        strides[i] = acc;
        acc *= s->dims[i];
    }
}

/* Whether s has no elements (a dim of 0); a rank-0 tensor has one. */
bool lw_no_elements(const ep_shape* s) {
    for (int i = 0; i < s->rank; ++i)
        if (s->dims[i] == 0) return true;
    return false;
}

/* s's element count, or -1 past int64. */
static int64_t elements(const ep_shape* s) {
    int64_t n = 1;
    for (int i = 0; i < s->rank; ++i)
        if (s->dims[i] < 0 || __builtin_mul_overflow(n, s->dims[i], &n)) return -1;
    return n;
}

static bool same_shape(const ep_shape* a, const ep_shape* b) {
    return a->rank == b->rank && !memcmp(a->dims, b->dims, (size_t)a->rank * sizeof(int64_t));
}

/* `s` with 1s prepended up to rank r. */
ep_shape lw_aligned(const ep_shape* s, int r) {
    ep_shape o = {r, {0}};
    int pad = r - s->rank;
    for (int i = 0; i < r; ++i) o.dims[i] = i < pad ? 1 : s->dims[i - pad];
    return o;
}

/* ---- tensors -------------------------------------------------------------------------- */

/* A finalized tensor of element type dt (NOT_SET: hipdnn types it), virtual or bound to
 * memory, with the given strides (NULL: hipdnn lays it out); value non-NULL makes a
 * by-value float constant. */
static hipdnnBackendDescriptor_t make_tensor(lw* w, const char* name, const ep_shape* s,
                                             const int64_t* strides, hipdnnDataType_t dt,
                                             const float* value, bool is_virtual,
                                             int64_t* uid_out) {
    /* ONNX's rank-0 tensor (a scalar) is one element, hipdnn's [1]: a value GetCapability
     * saw with a rank can arrive as a scalar at Run (ORT's shapes and kernels disagree on
     * some attributes), and every rule of shape.c runs on the shapes that arrive */
    static const ep_shape one = {1, {1}};
    static const int64_t one_stride[1] = {1};
    if (s->rank == 0) {
        s = &one;
        if (strides) strides = one_stride;
    }
    hipdnnBackendDescriptor_t t = new_desc(w, HIPDNN_BACKEND_TENSOR_DESCRIPTOR);
    if (!t) return NULL;
    int64_t uid = w->next_uid++;
    bool virt = is_virtual, yes = true;
    char nm[160];
    snprintf(nm, sizeof(nm), "%s", name);
    if (!lw_ok(w, hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT64, 1, &uid),
            "tensor uid") ||
        !lw_ok(w, hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_NAME_EXT, HIPDNN_TYPE_CHAR,
                                         (int64_t)strlen(nm), nm), "tensor name") ||
        !lw_ok(w, hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_DATA_TYPE, HIPDNN_TYPE_DATA_TYPE, 1,
                                         &dt), "tensor data type") ||
        !lw_ok(w, hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_IS_VIRTUAL, HIPDNN_TYPE_BOOLEAN, 1,
                                         &virt), "tensor is_virtual") ||
        !lw_ok(w, hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_DIMENSIONS, HIPDNN_TYPE_INT64,
                                         s->rank, s->dims), "tensor dims"))
        return NULL;
    if (strides && !lw_ok(w, hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_STRIDES, HIPDNN_TYPE_INT64,
                                                    s->rank, strides), "tensor strides"))
        return NULL;
    if (value &&
        (!lw_ok(w, hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_IS_BY_VALUE, HIPDNN_TYPE_BOOLEAN, 1,
                                          &yes), "tensor by_value") ||
         !lw_ok(w, hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_VALUE_EXT, HIPDNN_TYPE_UINT8_EXT,
                                          sizeof(float), value), "tensor value")))
        return NULL;
    if (!lw_ok(w, hipdnnBackendFinalize(t), "tensor finalize")) return NULL;
    if (uid_out) *uid_out = uid;
    return t;
}

/* A finalized tensor of element type dt (NOT_SET: hipdnn types it): strides NULL makes it
 * virtual, laid out by hipdnn; value non-NULL makes a by-value float constant. */
hipdnnBackendDescriptor_t lw_tensor(lw* w, const char* name, const ep_shape* s,
                                    const int64_t* strides, hipdnnDataType_t dt,
                                    const float* value, int64_t* uid_out) {
    return make_tensor(w, name, s, strides, dt, value, !strides && !value, uid_out);
}

/* A virtual tensor whose layout is fixed by `strides` (NULL: packed row-major), where
 * hipdnn would otherwise take an input's: a transposed view inside the graph, or a value
 * that a later VIEW_ONLY reshape reads as packed. */
hipdnnBackendDescriptor_t lw_virtual(lw* w, const char* name, const ep_shape* s,
                                     const int64_t* strides) {
    int64_t packed[EP_MAX_RANK];
    if (!strides) {
        packed_strides(s, packed);
        strides = packed;
    }
    return make_tensor(w, name, s, strides, HIPDNN_DATA_NOT_SET, NULL, true, NULL);
}

hipdnnBackendDescriptor_t lw_tmp(lw* w, const char* what, const ep_shape* s) {
    char nm[160];
    snprintf(nm, sizeof(nm), "%s/%s", w->label, what);
    return lw_tensor(w, nm, s, NULL, HIPDNN_DATA_NOT_SET, NULL, NULL);
}

/* A by-value float constant of rank r, every dim 1. */
hipdnnBackendDescriptor_t lw_scalar(lw* w, const char* what, float v, int r) {
    ep_shape s = {r, {0}};
    for (int i = 0; i < r; ++i) s.dims[i] = 1;
    int64_t strides[EP_MAX_RANK];
    packed_strides(&s, strides);
    char nm[160];
    snprintf(nm, sizeof(nm), "%s/%s", w->label, what);
    return lw_tensor(w, nm, &s, strides, HIPDNN_DATA_FLOAT, &v, NULL);
}

/* A non-virtual tensor over the memory of value v's binding, in dims s (packed, or with
 * the given strides). */
hipdnnBackendDescriptor_t lw_bound(lw* w, int v, const ep_shape* s, const int64_t* strides) {
    int64_t packed[EP_MAX_RANK], uid = 0;
    if (!strides) {
        packed_strides(s, packed);
        strides = packed;
    }
    int32_t et = w->m->values[v].elem_type;
    hipdnnBackendDescriptor_t t =
        lw_tensor(w, w->m->values[v].name, s, strides,
                  et == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16 ? HIPDNN_DATA_HALF
                  : et == ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL  ? HIPDNN_DATA_BOOLEAN /* Where */
                                                              : HIPDNN_DATA_FLOAT,
                  NULL, &uid);
    if (t) lw_bind(w, t, uid, w->vals[v].bind_kind, w->vals[v].bind_index);
    return t;
}

hipdnnBackendDescriptor_t lw_op_new(lw* w, hipdnnBackendDescriptorType_t type,
                                        const char* what) {
    hipdnnBackendDescriptor_t op = new_desc(w, type);
    if (!op) return NULL;
    char nm[160];
    snprintf(nm, sizeof(nm), "%s%s%s", w->label, what ? "/" : "", what ? what : "");
    hipdnnDataType_t ct = HIPDNN_DATA_FLOAT;
    if (!lw_ok(w, hipdnnBackendSetAttribute(op, HIPDNN_ATTR_OPERATION_NAME_EXT, HIPDNN_TYPE_CHAR,
                                         (int64_t)strlen(nm), nm), "operation name") ||
        !lw_ok(w, hipdnnBackendSetAttribute(op, HIPDNN_ATTR_OPERATION_COMPUTE_TYPE_EXT,
                                         HIPDNN_TYPE_DATA_TYPE, 1, &ct), "compute type"))
        return NULL;
    return op;
}

bool lw_set_t(lw* w, hipdnnBackendDescriptor_t op, hipdnnBackendAttributeName_t attr,
                  hipdnnBackendDescriptor_t t) {
    if (w->failed || !op || !t) {
        lw_failf(w, "missing descriptor");
        return false;
    }
    if (!lw_ok(w, hipdnnBackendSetAttribute(op, attr, HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t),
            "operation port"))
        return false;
    if (!grow((void**)&w->ports, &w->cap_ports, w->n_ports + 1, sizeof(*w->ports))) {
        lw_failf(w, "out of memory");
        return false;
    }
    w->ports[w->n_ports++] = (struct port){op, t, -1};
    return true;
}

bool lw_op_done(lw* w, hipdnnBackendDescriptor_t op) {
    if (w->failed || !op) return false;
    if (!lw_ok(w, hipdnnBackendFinalize(op), "operation finalize")) return false;
    if (!grow((void**)&w->ops, &w->cap_ops, w->n_ops + 1, sizeof(*w->ops))) {
        lw_failf(w, "out of memory");
        return false;
    }
    /* operations are built one at a time: the ports set since the last one are its own */
    for (int i = w->ports_pending; i < w->n_ports; ++i)
        if (w->ports[i].op == op) w->ports[i].index = w->n_ops;
    w->ports_pending = w->n_ports;
    w->ops[w->n_ops++] = op;
    return true;
}

/* ---- operations ------------------------------------------------------------------------ */

bool lw_pointwise(lw* w, const char* what, hipdnnPointwiseMode_t mode,
                      hipdnnBackendDescriptor_t x, hipdnnBackendDescriptor_t b,
                      hipdnnBackendDescriptor_t y) {
    hipdnnBackendDescriptor_t op = lw_op_new(w, HIPDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, what);
    return op &&
           lw_ok(w, hipdnnBackendSetAttribute(op, HIPDNN_ATTR_POINTWISE_MODE,
                                           HIPDNN_TYPE_POINTWISE_MODE_EXT, 1, &mode),
              "pointwise mode") &&
           lw_set_t(w, op, HIPDNN_ATTR_OPERATION_POINTWISE_XDESC, x) &&
           (!b || lw_set_t(w, op, HIPDNN_ATTR_OPERATION_POINTWISE_BDESC, b)) &&
           lw_set_t(w, op, HIPDNN_ATTR_OPERATION_POINTWISE_YDESC, y) && lw_op_done(w, op);
}

bool lw_reduction(lw* w, const char* what, hipdnnReduceTensorOp_t mode,
                      hipdnnBackendDescriptor_t x, hipdnnBackendDescriptor_t y) {
    hipdnnBackendDescriptor_t op = lw_op_new(w, HIPDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, what);
    return op &&
           lw_ok(w, hipdnnBackendSetAttribute(op, HIPDNN_ATTR_REDUCTION_OPERATOR,
                                           HIPDNN_TYPE_REDUCTION_OPERATOR_TYPE_EXT, 1, &mode),
              "reduction operator") &&
           lw_set_t(w, op, HIPDNN_ATTR_OPERATION_REDUCTION_XDESC, x) &&
           lw_set_t(w, op, HIPDNN_ATTR_OPERATION_REDUCTION_YDESC, y) && lw_op_done(w, op);
}

bool lw_reshape(lw* w, hipdnnBackendDescriptor_t x, hipdnnBackendDescriptor_t y) {
    return lw_reshape_mode(w, x, y, HIPDNN_RESHAPE_LOGICAL);
}

bool lw_reshape_mode(lw* w, hipdnnBackendDescriptor_t x, hipdnnBackendDescriptor_t y,
                     hipdnnReshapeMode_t mode) {
    hipdnnBackendDescriptor_t op = lw_op_new(w, HIPDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR, "view");
    return op &&
           lw_ok(w, hipdnnBackendSetAttribute(op, HIPDNN_ATTR_OPERATION_RESHAPE_MODE_EXT,
                                           HIPDNN_TYPE_RESHAPE_MODE_EXT, 1, &mode),
              "reshape mode") &&
           lw_set_t(w, op, HIPDNN_ATTR_OPERATION_RESHAPE_XDESC, x) &&
           lw_set_t(w, op, HIPDNN_ATTR_OPERATION_RESHAPE_YDESC, y) && lw_op_done(w, op);
}

/* ---- values ------------------------------------------------------------------------------ */

/* Value v as a tensor of dims `want` (as many elements as its ONNX shape). */
hipdnnBackendDescriptor_t lw_get(lw* w, int v, const ep_shape* want) {
    if (w->failed) return NULL;
    lval* lv = &w->vals[v];
    /* the lowerings read each value in dims of its own element count; anything else would
     * read past its memory */
    if (lv->shaped && (lw_no_elements(&lv->onnx) || elements(want) != elements(&lv->onnx))) {
        lw_failf(w, "value '%s' has %lld elements, read as %lld", w->m->values[v].name,
              (long long)elements(&lv->onnx), (long long)elements(want));
        return NULL;
    }
    if (!lv->desc && lv->bind_kind == EP_BIND_INPUT) {
        /* made on first use, so that an input read only in other dims adds no tensor the
         * graph does not use */
        lv->hs = *want;
        lv->desc = lw_bound(w, v, want, NULL);
        return lv->desc;
    }
    if (!lv->desc) {
        lw_failf(w, "value '%s' is read before any node makes it", w->m->values[v].name);
        return NULL;
    }
    if (same_shape(&lv->hs, want)) return lv->desc;
    /* Memory given to the fused node is described anew; a value computed in the graph is
     * reshaped, so that the reader stays ordered after the writer. */
    if (lv->bind_kind == EP_BIND_INPUT) return lw_bound(w, v, want, NULL);
    hipdnnBackendDescriptor_t y = lw_tmp(w, "view", want);
    return lw_reshape(w, lv->desc, y) ? y : NULL;
}

hipdnnBackendDescriptor_t lw_get_onnx(lw* w, int v) { return lw_get(w, v, &w->vals[v].onnx); }

/* Value v as an input of a pointwise op whose output has rank r.  hipdnn broadcasts each
 * input onto the output right-aligned, so a value computed in the graph is read in its own
 * dims, with no reshape op to line it up (one would also stand between the value's writer
 * and its reader in an engine's fused kernel); memory given to the fused node is described
 * in r dims, a descriptor and no op. */
hipdnnBackendDescriptor_t lw_get_bcast(lw* w, int v, int r) {
    if (w->vals[v].bind_kind == EP_BIND_INPUT || w->vals[v].onnx.rank > r) {
        ep_shape s = lw_aligned(&w->vals[v].onnx, r);
        return lw_get(w, v, &s);
    }
    return lw_get_onnx(w, v);
}

/* The tensor node output v is written to, in dims hs. */
hipdnnBackendDescriptor_t lw_make_out(lw* w, int v, const ep_shape* hs) {
    lval* lv = &w->vals[v];
    hipdnnBackendDescriptor_t t = lv->bind_kind == EP_BIND_OUTPUT
                                      ? lw_bound(w, v, hs, NULL)
                                      : lw_tensor(w, w->m->values[v].name, hs, NULL,
                                               HIPDNN_DATA_NOT_SET, NULL, NULL);
    lv->desc = t;
    lv->hs = *hs;
    return t;
}

/* ---- one node ------------------------------------------------------------------------- */

/* The first float input of n with no elements, or -1 (int64 inputs, Reshape's shape and a
 * reduction's axes, are read from the model, never as tensors). */
static int empty_input(const lw* w, const ep_node* n) {
    for (int k = 0; k < n->n_in && k < EP_MAX_IO; ++k) {
        int v = n->in[k];
        int32_t et = v >= 0 ? w->m->values[v].elem_type : 0;
        if (v >= 0 && w->vals[v].shaped && lw_no_elements(&w->vals[v].onnx) &&
            (et == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT ||
             et == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16))
            return v;
    }
    return -1;
}

/* The node's lowering, from its row (op_table.c): nothing when its outputs have no
 * elements, the row's `empty` lowering when only an input has none. */
static bool lower_node(lw* w, const ep_node* n) {
    const ep_op_def* d = ep_op_find(n);
    if (!d) {
        lw_failf(w, "no lowering for %s", n->op);
        return false;
    }
    bool outputs_empty = true;
    for (int k = 0; k < n->n_out && k < EP_MAX_IO; ++k)
        if (n->out[k] >= 0 && !lw_no_elements(&w->vals[n->out[k]].onnx)) outputs_empty = false;
    int e = outputs_empty ? -1 : empty_input(w, n);
    w->emptied = w->emptied || outputs_empty || e >= 0;
    if (outputs_empty) return true;
    if (e < 0) return d->lower(w, n, d->arg);
    if (d->empty) return d->empty(w, n, d->arg);
    lw_failf(w, "input '%s' has no elements, yet ONNX's shape rule gives output '%s' %lld",
          w->m->values[e].name, w->m->values[n->out[0]].name,
          (long long)elements(&w->vals[n->out[0]].onnx));
    return false;
}

/* ---- the operation graph ---------------------------------------------------------------- */

/* Finalizes the graph of operations ops[0..n) as `name` and plans it into `out`, or with
 * out NULL only asks whether an engine for `space` takes it. */
static bool build_graph(lw* w, hipdnnBackendDescriptor_t* ops, int n, const ep_options* opt,
                        hipdnnMemorySpace_t space, const char* name, ep_plan_part* out) {
    w->label = name;
    hipdnnBackendDescriptor_t g = new_desc(w, HIPDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    bool made = g &&
        lw_ok(w, hipdnnBackendSetAttribute(g, HIPDNN_ATTR_OPERATIONGRAPH_HANDLE, HIPDNN_TYPE_HANDLE,
                                        1, &w->h), "graph handle") &&
        lw_ok(w, hipdnnBackendSetAttribute(g, HIPDNN_ATTR_OPERATIONGRAPH_NAME_EXT, HIPDNN_TYPE_CHAR,
                                        (int64_t)strlen(name), name), "graph name") &&
        lw_ok(w, hipdnnBackendSetAttribute(g, HIPDNN_ATTR_OPERATIONGRAPH_OPS,
                                        HIPDNN_TYPE_BACKEND_DESCRIPTOR, n, ops), "graph ops") &&
        lw_ok(w, hipdnnBackendFinalize(g), "graph finalize");
    char err[1024];
    if (made && (out ? ep_plan_choose(w->h, g, opt, space, out, err, sizeof(err))
                     : ep_plan_check(w->h, g, opt, space, err, sizeof(err)))) {
        w->label = NULL;
        /* the plan keeps its graph (an EPContext payload serializes it): g was the last
         * descriptor made, so it leaves the list lowering_finish destroys */
        if (out && w->n_descs > 0 && w->descs[w->n_descs - 1] == g) {
            out->graph = g;
            --w->n_descs;
        }
        return true;
    }
    if (made) lw_failf(w, "%s", err);
    w->label = NULL; /* `name` may go out of scope */
    return false;
}

static int root(int* parent, int i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
}

static int by_tensor(const void* a, const void* b) {
    uintptr_t x = (uintptr_t)((const struct port*)a)->t, y = (uintptr_t)((const struct port*)b)->t;
    return x < y ? -1 : x > y;
}

/* Which part each operation is in (part[i] for ops[i], numbered from 0 in the order of
 * their first operations): operations that share a tensor, directly or through others,
 * are in one.  Returns the count, -1 when out of memory; w->ports ends sorted by tensor. */
static int graph_parts(lw* w, int* part) {
    int n = w->n_ops, count = 0;
    int* parent = malloc((size_t)n * sizeof(int));
    int* number = malloc((size_t)n * sizeof(int));
    if (!parent || !number) {
        free(parent);
        free(number);
        return -1;
    }
    for (int i = 0; i < n; ++i) parent[i] = i, number[i] = -1;
    qsort(w->ports, (size_t)w->n_ports, sizeof(*w->ports), by_tensor);
    for (int i = 0, first = -1; i < w->n_ports; ++i) {
        if (i == 0 || w->ports[i].t != w->ports[i - 1].t) first = -1;
        int op = w->ports[i].index; /* -1: a port of an operation never finalized */
        if (op < 0) continue;
        if (first < 0) first = op;
        else parent[root(parent, op)] = root(parent, first);
    }
    for (int i = 0; i < n; ++i) {
        int r = root(parent, i);
        if (number[r] < 0) number[r] = count++;
        part[i] = number[r];
    }
    free(parent);
    free(number);
    return count;
}

/* The part of the operations that read or write tensor t, -1 when none does. */
static int part_of(const lw* w, const int* part, hipdnnBackendDescriptor_t t) {
    for (int i = 0; i < w->n_ports; ++i)
        if (w->ports[i].t == t && w->ports[i].index >= 0) return part[w->ports[i].index];
    return -1;
}

/* Part p's bindings, those of the tensors its operations use, into out. */
static bool part_bindings(lw* w, const int* part, int n_parts, int p, ep_plan_part* out) {
    out->bindings = malloc((size_t)(w->n_binds ? w->n_binds : 1) * sizeof(ep_binding));
    if (!out->bindings) return false;
    for (int i = 0; i < w->n_binds; ++i)
        if (n_parts == 1 || part_of(w, part, w->bind_t[i]) == p)
            out->bindings[out->n_bindings++] = w->binds[i];
    return true;
}

/* The graph, finalized and planned into out->parts (with out NULL, only asked about):
 * one part, unless values with no elements left pieces that share no tensor, which
 * hipdnn would refuse as one graph ("not connected"), each then a graph of its own; no
 * part when there is no operation (every output is empty). */
static void plan_parts(lw* w, const ep_options* opt, hipdnnMemorySpace_t space,
                       const char* graph_name, ep_plan* out) {
    if (w->n_ops == 0) return;
    int* part = calloc((size_t)w->n_ops, sizeof(int));
    hipdnnBackendDescriptor_t* ops = malloc((size_t)w->n_ops * sizeof(*ops));
    int n = part && ops ? (w->emptied ? graph_parts(w, part) : 1) : -1;
    if (n > 0 && out && !(out->parts = calloc((size_t)n, sizeof(ep_plan_part)))) n = -1;
    if (n < 0) lw_failf(w, "out of memory");
    if (out && n > 0) out->n_parts = n;
    for (int p = 0; p < n && !w->failed; ++p) {
        int k = 0;
        for (int i = 0; i < w->n_ops; ++i)
            if (part[i] == p) ops[k++] = w->ops[i];
        char name[320];
        if (n == 1) snprintf(name, sizeof(name), "%s", graph_name);
        else snprintf(name, sizeof(name), "%s (part %d of %d)", graph_name, p + 1, n);
        if (build_graph(w, ops, k, opt, space, name, out ? &out->parts[p] : NULL) && out &&
            !part_bindings(w, part, n, p, &out->parts[p]))
            lw_failf(w, "out of memory");
    }
    free(part);
    free(ops);
}

/* The lowering state for model m: every value virtual but the fused node's inputs (their
 * shapes given) and outputs; out->out_shapes allocated.  False when out of memory. */
static bool lowering_init(lw* w, const ep_model* m, const ep_shape* in_shapes, hipdnnHandle_t h,
                          ep_plan* out) {
    memset(out, 0, sizeof(*out));
    memset(w, 0, sizeof(*w));
    w->m = m;
    w->h = h;
    w->next_uid = 1;
    w->vals = calloc((size_t)(m->n_values ? m->n_values : 1), sizeof(lval));
    out->out_shapes = calloc((size_t)(m->n_outputs ? m->n_outputs : 1), sizeof(ep_shape));
    if (!w->vals || !out->out_shapes) {
        free(w->vals);
        free(out->out_shapes);
        out->out_shapes = NULL;
        return false;
    }
    for (int i = 0; i < m->n_values; ++i) w->vals[i].bind_kind = -1;
    for (int k = 0; k < m->n_outputs; ++k)
        if (m->outputs[k] >= 0) {
            w->vals[m->outputs[k]].bind_kind = EP_BIND_OUTPUT;
            w->vals[m->outputs[k]].bind_index = k;
        }
    for (int k = 0; k < m->n_inputs && !w->failed; ++k) {
        int v = m->inputs[k];
        if (v < 0) continue;
        lval* lv = &w->vals[v];
        lv->bind_kind = EP_BIND_INPUT;
        lv->bind_index = k;
        lv->onnx = in_shapes[k]; /* its tensor is made when a node reads it (get) */
        lv->shaped = true;
    }
    return true;
}

/* Each node in turn: its output shapes (shape.c), then its operations. */
static void lower_nodes(lw* w) {
    const ep_model* m = w->m;
    char why[512], label[200];
    if (!lw_find_attention(w)) lw_failf(w, "out of memory");
    for (int i = 0; i < m->n_nodes && !w->failed; ++i) {
        const ep_node* n = &m->nodes[i];
        w->label = ep_node_label(n, label, sizeof(label));
        const ep_shape* ins[EP_MAX_IO] = {0};
        for (int k = 0; k < n->n_in && k < EP_MAX_IO; ++k) {
            int v = n->in[k];
            if (v >= 0 && w->vals[v].shaped) ins[k] = &w->vals[v].onnx;
        }
        ep_shape outs[EP_MAX_IO];
        memset(outs, 0, sizeof(outs));
        if (!ep_shape_infer(m, n, ins, outs, why, sizeof(why))) {
            lw_failf(w, "%s", why);
            w->shape_failed = true;
            break;
        }
        for (int k = 0; k < n->n_out && k < EP_MAX_IO; ++k)
            if (n->out[k] >= 0) {
                w->vals[n->out[k]].onnx = outs[k];
                w->vals[n->out[k]].shaped = true;
            }
        if (!w->role[i]) lower_node(w, n);
        else if (w->role[i] > 1) lw_emit_attention_pattern(w, w->role[i] - 2, lower_node);
    }
    /* `label` goes out of scope: later messages name the graph */
    w->label = NULL;
}

/* The fused node's output shapes into out->out_shapes; each must have been made, or have
 * no elements (no tensor, nothing to write). */
static void collect_outputs(lw* w, const char* graph_name, ep_plan* out) {
    const ep_model* m = w->m;
    for (int k = 0; k < m->n_outputs && !w->failed; ++k) {
        int v = m->outputs[k];
        bool empty = v >= 0 && w->vals[v].shaped && lw_no_elements(&w->vals[v].onnx);
        if (v < 0 || (!w->vals[v].desc && !empty)) {
            w->label = graph_name;
            lw_failf(w, "fused output %d '%s' is not made by any node", k,
                  v >= 0 ? m->values[v].name : "?");
            break;
        }
        out->out_shapes[k] = w->vals[v].onnx;
    }
}

/* Frees the lowering state; a plan keeps its parts, a failure or a check nothing. */
static bool lowering_finish(lw* w, bool check_only, ep_plan* out, char* err, size_t err_len) {
    for (int i = w->n_descs - 1; i >= 0; --i) hipdnnBackendDestroyDescriptor(w->descs[i]);
    free(w->descs);
    free(w->ops);
    free(w->vals);
    free(w->ports);
    free(w->binds);
    free(w->bind_t);
    free(w->role);
    free(w->pats);
    if (w->failed || check_only) {
        ep_plan_free(out);
        if (w->failed) snprintf(err, err_len, "%s", w->err);
        return !w->failed;
    }
    return true;
}

/* ep_lower and ep_lower_check: with `out` a plan is built, without one only asked about;
 * false with the reason in `err`. */
static bool lower_model(const ep_model* m, const ep_shape* in_shapes, hipdnnHandle_t h,
                        const ep_options* opt, hipdnnMemorySpace_t space, const char* graph_name,
                        ep_plan* out, char* err, size_t err_len, bool* in_shape_rules) {
    ep_plan scratch;
    bool check_only = out == NULL;
    if (check_only) out = &scratch;
    lw w;
    if (!lowering_init(&w, m, in_shapes, h, out)) {
        snprintf(err, err_len, "out of memory");
        return false;
    }
    lower_nodes(&w);
    collect_outputs(&w, graph_name, out);
    if (in_shape_rules) *in_shape_rules = w.shape_failed;
    if (!w.failed) plan_parts(&w, opt, space, graph_name, check_only ? NULL : out);
    out->n_sdpa = w.n_sdpa;
    return lowering_finish(&w, check_only, out, err, err_len);
}

OrtStatus* ep_lower(const ep_model* m, const ep_shape* in_shapes, hipdnnHandle_t h,
                    const ep_options* opt, hipdnnMemorySpace_t space, const char* graph_name,
                    ep_plan* out) {
    char err[1536];
    if (lower_model(m, in_shapes, h, opt, space, graph_name, out, err, sizeof(err), NULL))
        return NULL;
    return ep_status(ORT_FAIL, "%s", err);
}

bool ep_lower_check(const ep_model* m, const ep_shape* in_shapes, hipdnnHandle_t h,
                    const ep_options* opt, hipdnnMemorySpace_t space, const char* graph_name,
                    char* why, size_t why_len, bool* in_shape_rules) {
    return lower_model(m, in_shapes, h, opt, space, graph_name, NULL, why, why_len,
                       in_shape_rules);
}

void ep_plan_free(ep_plan* p) {
    if (!p) return;
    for (int i = 0; p->parts && i < p->n_parts; ++i) {
        if (p->parts[i].plan) hipdnnBackendDestroyDescriptor(p->parts[i].plan);
        if (p->parts[i].graph) hipdnnBackendDestroyDescriptor(p->parts[i].graph);
        free(p->parts[i].bindings);
    }
    free(p->parts);
    free(p->out_shapes);
    memset(p, 0, sizeof(*p));
}
