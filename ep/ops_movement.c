/* ops_movement.c — the ONNX ops that move elements without computing (op_table.c's rows
 * name these checks, shape rules and lowerings): Transpose as a VIEW_ONLY reshape to
 * permuted dims and strides (or, for memory given to the fused node, a view of it) copied
 * out packed; Concat as hipdnn's concatenate; Slice and Split as hipdnn's slice, their
 * starts, ends, axes, steps and split sizes constants of the model; Squeeze and Unsqueeze
 * as Reshape; Expand as a pointwise identity broadcast into the larger output; Where as
 * pointwise BINARY_SELECT over its boolean condition.
 *
 * Every value a lowering makes is packed row-major (lw_virtual's explicit strides where
 * hipdnn would otherwise lay an output out like a strided input), so that a VIEW_ONLY
 * reshape of it may read its memory as packed. */
#include <stdio.h>
#include <string.h>

#include "lowering.h"

#define WHY(...) (snprintf(why, why_len, __VA_ARGS__), false)

static void packed_strides(const ep_shape* s, int64_t* strides) {
    int64_t acc = 1;
    for (int i = s->rank - 1; i >= 0; --i) {
        strides[i] = acc;
        acc *= s->dims[i];
    }
}

/* The tensor output v is written to, packed in dims s whatever its writer reads. */
static hipdnnBackendDescriptor_t packed_out(lw* w, int v, const ep_shape* s) {
    lval* lv = &w->vals[v];
    if (lv->bind_kind == EP_BIND_OUTPUT) return lw_make_out(w, v, s);
    lv->desc = lw_virtual(w, w->m->values[v].name, s, NULL);
    lv->hs = *s;
    return lv->desc;
}

/* An int64 list given as attribute `attr` (set when the node's opset is below `since`) or
 * as constant input `input` (from `since` on): *given false when neither is there. */
static bool int_list(const ep_model* m, const ep_node* n, const char* attr, int since, int input,
                     const int64_t** vals, int64_t* count, bool* given, char* why,
                     size_t why_len) {
    *given = false;
    *vals = NULL;
    *count = 0;
    if (n->since_version < since) {
        const ep_attr* a = ep_attr_get(n, attr);
        if (!a) return true;
        if (a->type != ORT_OP_ATTR_INTS) return WHY("attribute %s is not a list of ints", attr);
        *vals = a->ints;
        *count = (int64_t)a->n_ints;
        *given = true;
        return true;
    }
    if (input >= n->n_in || n->in[input] < 0) return true;
    const ep_value* v = &m->values[n->in[input]];
    if (!v->is_const || !v->ivals)
        return WHY("%s '%s' is not a constant int64 initializer of at most 64 values", attr,
                   v->name);
    *vals = v->ivals;
    *count = v->n_ivals;
    *given = true;
    return true;
}

/* ---- Transpose ------------------------------------------------------------------------ */

/* perm, a permutation of [0, rank) (reversed when absent) */
static bool perm_of(const ep_node* n, int rank, int* perm, char* why, size_t why_len) {
    const ep_attr* a = ep_attr_get(n, "perm");
    if (!a) {
        for (int i = 0; i < rank; ++i) perm[i] = rank - 1 - i;
        return true;
    }
    if (a->type != ORT_OP_ATTR_INTS || a->n_ints != (size_t)rank)
        return WHY("perm has %zu values for an input of rank %d", a->n_ints, rank);
    bool seen[EP_MAX_RANK] = {false};
    for (int i = 0; i < rank; ++i) {
        int64_t p = a->ints[i];
        if (p < 0 || p >= rank || seen[p])
            return WHY("perm is not a permutation of the %d axes", rank);
        seen[p] = true;
        perm[i] = (int)p;
    }
    return true;
}

bool ep_check_transpose(const ep_model* m, const ep_node* n, char* why, size_t why_len) {
    int perm[EP_MAX_RANK];
    return ep_float_tensor(m, n->in[0], "data", why, why_len) &&
           perm_of(n, m->values[n->in[0]].rank, perm, why, why_len);
}

bool ep_shape_transpose(const ep_model* m, const ep_node* n, const ep_shape* const* in,
                        ep_shape* out, char* why, size_t why_len) {
    (void)m;
    int perm[EP_MAX_RANK];
    if (!perm_of(n, in[0]->rank, perm, why, why_len)) return false;
    out[0].rank = in[0]->rank;
    for (int i = 0; i < in[0]->rank; ++i) out[0].dims[i] = in[0]->dims[perm[i]];
    return true;
}

/* x's memory read in the output's dims through permuted strides (a view of fused-node
 * memory, else a VIEW_ONLY reshape of the packed value), then copied out packed. */
bool ep_emit_transpose(lw* w, const ep_node* n, int arg) {
    (void)arg;
    int v = n->in[0], perm[EP_MAX_RANK];
    const ep_shape* xs = &w->vals[v].onnx;
    const ep_shape* ys = &w->vals[n->out[0]].onnx;
    char why[160];
    if (!perm_of(n, xs->rank, perm, why, sizeof(why))) {
        lw_failf(w, "%s", why);
        return false;
    }
    int64_t xst[EP_MAX_RANK], vst[EP_MAX_RANK];
    packed_strides(xs, xst);
    for (int i = 0; i < xs->rank; ++i) vst[i] = xst[perm[i]];
    hipdnnBackendDescriptor_t view;
    if (w->vals[v].bind_kind == EP_BIND_INPUT) {
        view = lw_bound(w, v, ys, vst);
    } else {
        char nm[200];
        snprintf(nm, sizeof(nm), "%s/permuted", w->label);
        hipdnnBackendDescriptor_t x = lw_get_onnx(w, v);
        view = lw_virtual(w, nm, ys, vst);
        if (!lw_reshape_mode(w, x, view, HIPDNN_RESHAPE_VIEW_ONLY)) return false;
    }
    return lw_pointwise(w, "copy", HIPDNN_POINTWISE_IDENTITY, view, NULL,
                        packed_out(w, n->out[0], ys));
}

/* ---- Concat --------------------------------------------------------------------------- */

bool ep_check_concat(const ep_model* m, const ep_node* n, char* why, size_t why_len) {
    if (n->n_in < 1) return WHY("no inputs");
    int r = m->values[n->out[0]].rank;
    for (int k = 0; k < n->n_in; ++k) {
        if (!ep_float_tensor(m, n->in[k], "an input", why, why_len)) return false;
        if (m->values[n->in[k]].rank != r)
            return WHY("input %d has rank %d, the output %d", k, m->values[n->in[k]].rank, r);
    }
    int64_t axis = ep_attr_int(n, "axis", n->since_version < 4 ? 1 : INT64_MIN);
    if (axis < -r || axis >= r) return WHY("axis %lld of rank %d", (long long)axis, r);
    return true;
}

static int concat_axis(const ep_node* n, int rank) {
    int64_t axis = ep_attr_int(n, "axis", n->since_version < 4 ? 1 : INT64_MIN);
    return (int)(axis < 0 ? axis + rank : axis);
}

bool ep_shape_concat(const ep_model* m, const ep_node* n, const ep_shape* const* in,
                     ep_shape* out, char* why, size_t why_len) {
    (void)m;
    int r = in[0]->rank, axis = concat_axis(n, r);
    if (axis < 0 || axis >= r) return WHY("axis out of range for rank %d", r);
    out[0] = *in[0];
    for (int k = 1; k < n->n_in; ++k) {
        char a[128], b[128];
        bool ok = in[k] && in[k]->rank == r;
        for (int i = 0; ok && i < r; ++i) ok = i == axis || in[k]->dims[i] == in[0]->dims[i];
        if (!ok) {
            if (in[k]) ep_shape_str(in[k], b, sizeof(b));
            ep_shape_str(in[0], a, sizeof(a));
            return WHY("input %d %s does not match input 0 %s off axis %d", k,
                       in[k] ? b : "(absent)", a, axis);
        }
        out[0].dims[axis] += in[k]->dims[axis];
    }
    return true;
}

/* The inputs with elements joined (also the row's empty lowering: an input with none adds
 * nothing).  In float16 each goes through FLOAT first: hipdnn joins one data type, and a
 * value computed inside the graph is FLOAT where fused-node memory is HALF. */
bool ep_emit_concat(lw* w, const ep_node* n, int arg) {
    (void)arg;
    const ep_shape* ys = &w->vals[n->out[0]].onnx;
    bool half = w->m->values[n->out[0]].elem_type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16;
    hipdnnBackendDescriptor_t xs[EP_MAX_IO];
    int count = 0;
    for (int k = 0; k < n->n_in && k < EP_MAX_IO; ++k) {
        const ep_shape* s = &w->vals[n->in[k]].onnx;
        if (lw_no_elements(s)) continue;
        xs[count] = lw_get_onnx(w, n->in[k]);
        if (half) {
            char nm[200];
            snprintf(nm, sizeof(nm), "%s/float%d", w->label, k);
            hipdnnBackendDescriptor_t f = lw_tensor(w, nm, s, NULL, HIPDNN_DATA_FLOAT, NULL, NULL);
            if (!lw_pointwise(w, "to_float", HIPDNN_POINTWISE_IDENTITY, xs[count], NULL, f))
                return false;
            xs[count] = f;
        }
        ++count;
    }
    if (count == 1)
        return lw_pointwise(w, "copy", HIPDNN_POINTWISE_IDENTITY, xs[0], NULL,
                            lw_make_out(w, n->out[0], ys));
    hipdnnBackendDescriptor_t y = half ? lw_tmp(w, "joined", ys) : lw_make_out(w, n->out[0], ys);
    hipdnnBackendDescriptor_t op = lw_op_new(w, HIPDNN_BACKEND_OPERATION_CONCAT_DESCRIPTOR, NULL);
    int64_t axis = concat_axis(n, ys->rank);
    bool ok = op && lw_ok(w, hipdnnBackendSetAttribute(op, HIPDNN_ATTR_OPERATION_CONCAT_AXIS,
                                                       HIPDNN_TYPE_INT64, 1, &axis),
                          "concat axis");
    for (int k = 0; ok && k < count; ++k)
        ok = lw_set_t(w, op, (hipdnnBackendAttributeName_t)(HIPDNN_ATTR_OPERATION_CONCAT_INPUT_0_EXT + k),
                      xs[k]);
    if (!ok || !lw_set_t(w, op, HIPDNN_ATTR_OPERATION_CONCAT_OUTPUT_DESC, y) || !lw_op_done(w, op))
        return false;
    return !half || lw_pointwise(w, "copy", HIPDNN_POINTWISE_IDENTITY, y, NULL,
                                 lw_make_out(w, n->out[0], ys));
}

/* One hipdnn slice of value v, [start, limit) by step per dim, into tensor y. */
static bool slice_op(lw* w, const char* what, int v, const int64_t* start, const int64_t* limit,
                     const int64_t* step, hipdnnBackendDescriptor_t y) {
    int r = w->vals[v].onnx.rank;
    hipdnnBackendDescriptor_t x = lw_get_onnx(w, v);
    hipdnnBackendDescriptor_t op = lw_op_new(w, HIPDNN_BACKEND_OPERATION_SLICE_DESCRIPTOR_EXT, what);
    return op && lw_set_t(w, op, HIPDNN_ATTR_OPERATION_SLICE_X_EXT, x) &&
           lw_set_t(w, op, HIPDNN_ATTR_OPERATION_SLICE_Y_EXT, y) &&
           lw_ok(w, hipdnnBackendSetAttribute(op, HIPDNN_ATTR_OPERATION_SLICE_START_EXT,
                                              HIPDNN_TYPE_INT64, r, start), "slice start") &&
           lw_ok(w, hipdnnBackendSetAttribute(op, HIPDNN_ATTR_OPERATION_SLICE_LIMIT_EXT,
                                              HIPDNN_TYPE_INT64, r, limit), "slice limit") &&
           lw_ok(w, hipdnnBackendSetAttribute(op, HIPDNN_ATTR_OPERATION_SLICE_STEP_EXT,
                                              HIPDNN_TYPE_INT64, r, step), "slice step") &&
           lw_op_done(w, op);
}

/* ---- Slice ---------------------------------------------------------------------------- */

typedef struct {
    const int64_t *starts, *ends, *axes, *steps;
    int64_t count;
} slice_lists;

/* Slice's starts, ends, axes and steps (attributes before opset 10, constant inputs
 * after), checked against rank r: axes in range and distinct, steps positive (hipdnn's
 * slice steps forward). */
static bool slice_lists_of(const ep_model* m, const ep_node* n, int r, slice_lists* l,
                           char* why, size_t why_len) {
    static const char* names[] = {"starts", "ends", "axes", "steps"};
    const int64_t* v[4];
    int64_t c[4];
    bool given[4];
    for (int k = 0; k < 4; ++k)
        if (!int_list(m, n, names[k], k == 3 ? 0 : 10, k + 1, &v[k], &c[k], &given[k], why,
                      why_len))
            return false;
    if (!given[0] || !given[1]) return WHY("starts and ends are needed");
    for (int k = 1; k < 4; ++k)
        if (given[k] && c[k] != c[0])
            return WHY("%s has %lld values, starts %lld", names[k], (long long)c[k],
                       (long long)c[0]);
    *l = (slice_lists){v[0], v[1], given[2] ? v[2] : NULL, given[3] ? v[3] : NULL, c[0]};
    bool seen[EP_MAX_RANK] = {false};
    for (int64_t k = 0; k < l->count; ++k) {
        int64_t ax = l->axes ? l->axes[k] : k;
        if (ax < 0) ax += r;
        if (ax < 0 || ax >= r || seen[ax])
            return WHY("axes[%lld] is out of range or repeated for rank %d", (long long)k, r);
        seen[ax] = true;
        if (l->steps && l->steps[k] < 1)
            return WHY("steps[%lld] is %lld; hipdnn-ep takes positive steps", (long long)k,
                       (long long)l->steps[k]);
    }
    return true;
}

/* ONNX's clamping of one axis: start and end made non-negative and at most dim. */
static int64_t clamp_index(int64_t i, int64_t dim) {
    if (i < 0) i += dim;
    return i < 0 ? 0 : i > dim ? dim : i;
}

/* Per dim of x: start, limit and step, and y's dims (0 where the range is empty). */
static void slice_ranges(const slice_lists* l, int r, const ep_shape* x, int64_t* start,
                         int64_t* limit, int64_t* step, ep_shape* y) {
    for (int i = 0; i < r; ++i) start[i] = 0, limit[i] = x->dims[i], step[i] = 1;
    for (int64_t k = 0; k < l->count; ++k) {
        int64_t ax = l->axes ? l->axes[k] : k;
        if (ax < 0) ax += r;
        start[ax] = clamp_index(l->starts[k], x->dims[ax]);
        limit[ax] = clamp_index(l->ends[k], x->dims[ax]);
        step[ax] = l->steps ? l->steps[k] : 1;
    }
    y->rank = r;
    for (int i = 0; i < r; ++i)
        y->dims[i] = limit[i] > start[i] ? (limit[i] - start[i] + step[i] - 1) / step[i] : 0;
}

bool ep_check_slice(const ep_model* m, const ep_node* n, char* why, size_t why_len) {
    slice_lists l;
    return ep_float_tensor(m, n->in[0], "data", why, why_len) &&
           slice_lists_of(m, n, m->values[n->in[0]].rank, &l, why, why_len);
}

bool ep_shape_slice(const ep_model* m, const ep_node* n, const ep_shape* const* in,
                    ep_shape* out, char* why, size_t why_len) {
    slice_lists l;
    int64_t start[EP_MAX_RANK], limit[EP_MAX_RANK], step[EP_MAX_RANK];
    if (!slice_lists_of(m, n, in[0]->rank, &l, why, why_len)) return false;
    slice_ranges(&l, in[0]->rank, in[0], start, limit, step, &out[0]);
    return true;
}

bool ep_emit_slice(lw* w, const ep_node* n, int arg) {
    (void)arg;
    slice_lists l;
    char why[200];
    const ep_shape* xs = &w->vals[n->in[0]].onnx;
    int64_t start[EP_MAX_RANK], limit[EP_MAX_RANK], step[EP_MAX_RANK];
    ep_shape ys;
    if (!slice_lists_of(w->m, n, xs->rank, &l, why, sizeof(why))) {
        lw_failf(w, "%s", why);
        return false;
    }
    slice_ranges(&l, xs->rank, xs, start, limit, step, &ys);
    return slice_op(w, NULL, n->in[0], start, limit, step, lw_make_out(w, n->out[0], &ys));
}

/* ---- Split ---------------------------------------------------------------------------- */

/* The size of each of Split's n_out parts along axis (of dim d): the constant `split`
 * (attribute before opset 13, input 1 after), else num_outputs parts of ceil(d / n), the
 * last smaller (opset 18), else equal parts. */
static bool split_sizes(const ep_model* m, const ep_node* n, int64_t d, int64_t* sizes,
                        char* why, size_t why_len) {
    const int64_t* v;
    int64_t c;
    bool given;
    if (!int_list(m, n, "split", 13, 1, &v, &c, &given, why, why_len)) return false;
    if (given) {
        if (c != n->n_out) return WHY("split has %lld values for %d outputs", (long long)c, n->n_out);
        int64_t total = 0;
        for (int k = 0; k < n->n_out; ++k) {
            if (v[k] < 0) return WHY("split[%d] is %lld", k, (long long)v[k]);
            total += sizes[k] = v[k];
        }
        return d < 0 || total == d ? true : WHY("split sums to %lld, the axis has %lld",
                                                (long long)total, (long long)d);
    }
    int64_t parts = ep_attr_int(n, "num_outputs", n->n_out);
    if (parts != n->n_out) return WHY("num_outputs is %lld for %d outputs", (long long)parts, n->n_out);
    if (d < 0) return true;
    bool uneven = ep_attr_get(n, "num_outputs") != NULL;
    int64_t chunk = uneven ? (d + parts - 1) / parts : d / parts;
    if (!uneven && d % parts)
        return WHY("an axis of %lld does not split into %lld equal parts", (long long)d,
                   (long long)parts);
    for (int k = 0; k < n->n_out; ++k) {
        int64_t left = d - chunk * k;
        sizes[k] = left < 0 ? 0 : left < chunk ? left : chunk;
    }
    return true;
}

static int split_axis(const ep_node* n, int rank) {
    int64_t axis = ep_attr_int(n, "axis", 0);
    return (int)(axis < 0 ? axis + rank : axis);
}

bool ep_check_split(const ep_model* m, const ep_node* n, char* why, size_t why_len) {
    if (!ep_float_tensor(m, n->in[0], "input", why, why_len)) return false;
    const ep_value* x = &m->values[n->in[0]];
    int axis = split_axis(n, x->rank);
    if (axis < 0 || axis >= x->rank)
        return WHY("axis %lld of rank %d", (long long)ep_attr_int(n, "axis", 0), x->rank);
    for (int k = 0; k < n->n_out; ++k)
        if (n->out[k] < 0) return WHY("output %d is absent", k);
    int64_t sizes[EP_MAX_IO];
    return split_sizes(m, n, x->dims[axis], sizes, why, why_len);
}

bool ep_shape_split(const ep_model* m, const ep_node* n, const ep_shape* const* in,
                    ep_shape* out, char* why, size_t why_len) {
    int axis = split_axis(n, in[0]->rank);
    int64_t sizes[EP_MAX_IO];
    if (axis < 0 || axis >= in[0]->rank) return WHY("axis out of range for rank %d", in[0]->rank);
    if (!split_sizes(m, n, in[0]->dims[axis], sizes, why, why_len)) return false;
    for (int k = 0; k < n->n_out; ++k) {
        out[k] = *in[0];
        out[k].dims[axis] = sizes[k];
    }
    return true;
}

/* Each part with elements that the fused node returns or a node reads: a slice along
 * the axis. */
bool ep_emit_split(lw* w, const ep_node* n, int arg) {
    (void)arg;
    const ep_shape* xs = &w->vals[n->in[0]].onnx;
    int axis = split_axis(n, xs->rank);
    int64_t start[EP_MAX_RANK], limit[EP_MAX_RANK], step[EP_MAX_RANK], at = 0;
    for (int i = 0; i < xs->rank; ++i) start[i] = 0, limit[i] = xs->dims[i], step[i] = 1;
    for (int k = 0; k < n->n_out && k < EP_MAX_IO; ++k) {
        int v = n->out[k];
        const ep_shape* ys = &w->vals[v].onnx;
        start[axis] = at;
        limit[axis] = at += ys->dims[axis];
        if (lw_no_elements(ys) ||
            (w->vals[v].bind_kind != EP_BIND_OUTPUT && !w->m->values[v].n_consumers))
            continue;
        char what[32];
        snprintf(what, sizeof(what), "part%d", k);
        if (!slice_op(w, what, n->in[0], start, limit, step, lw_make_out(w, v, ys))) return false;
    }
    return true;
}

/* ---- Squeeze, Unsqueeze ----------------------------------------------------------------- */

/* axes: attribute before opset 13, constant input 1 after (arg 1: Unsqueeze, which needs
 * them) */
bool ep_check_squeeze(const ep_model* m, const ep_node* n, char* why, size_t why_len) {
    const int64_t* v;
    int64_t c;
    bool given;
    if (!ep_float_tensor(m, n->in[0], "data", why, why_len) ||
        !int_list(m, n, "axes", 13, 1, &v, &c, &given, why, why_len))
        return false;
    if (!strcmp(n->op, "Unsqueeze") && !given) return WHY("no axes");
    return true;
}

/* Squeeze: the axes given, each of dim 1, dropped (every dim of 1 without axes). */
bool ep_shape_squeeze(const ep_model* m, const ep_node* n, const ep_shape* const* in,
                      ep_shape* out, char* why, size_t why_len) {
    const int64_t* v;
    int64_t c;
    bool given, drop[EP_MAX_RANK] = {false};
    const ep_shape* x = in[0];
    if (!int_list(m, n, "axes", 13, 1, &v, &c, &given, why, why_len)) return false;
    for (int i = 0; !given && i < x->rank; ++i) drop[i] = x->dims[i] == 1;
    for (int64_t k = 0; given && k < c; ++k) {
        int64_t ax = v[k] < 0 ? v[k] + x->rank : v[k];
        if (ax < 0 || ax >= x->rank) return WHY("axis %lld of rank %d", (long long)v[k], x->rank);
        if (x->dims[ax] != 1)
            return WHY("axis %lld has dim %lld, not 1", (long long)v[k], (long long)x->dims[ax]);
        drop[ax] = true;
    }
    out[0].rank = 0;
    for (int i = 0; i < x->rank; ++i)
        if (!drop[i]) out[0].dims[out[0].rank++] = x->dims[i];
    return true;
}

/* Unsqueeze: a 1 at each axis of the output (axes in the output's rank, distinct). */
bool ep_shape_unsqueeze(const ep_model* m, const ep_node* n, const ep_shape* const* in,
                        ep_shape* out, char* why, size_t why_len) {
    const int64_t* v;
    int64_t c;
    bool given, ones[EP_MAX_RANK] = {false};
    const ep_shape* x = in[0];
    if (!int_list(m, n, "axes", 13, 1, &v, &c, &given, why, why_len)) return false;
    int64_t r = x->rank + c;
    if (!given || r > EP_MAX_RANK) return WHY("output rank %lld", (long long)r);
    for (int64_t k = 0; k < c; ++k) {
        int64_t ax = v[k] < 0 ? v[k] + r : v[k];
        if (ax < 0 || ax >= r || ones[ax])
            return WHY("axis %lld is out of range or repeated for rank %lld", (long long)v[k],
                       (long long)r);
        ones[ax] = true;
    }
    out[0].rank = (int)r;
    for (int i = 0, j = 0; i < r; ++i) out[0].dims[i] = ones[i] ? 1 : x->dims[j++];
    return true;
}

/* ---- Expand ------------------------------------------------------------------------------ */

/* shape, a constant of 1 to 8 values */
static bool expand_shape(const ep_model* m, const ep_node* n, ep_shape* s, char* why,
                         size_t why_len) {
    const ep_value* v = n->n_in == 2 && n->in[1] >= 0 ? &m->values[n->in[1]] : NULL;
    if (!v || !v->is_const || !v->ivals || v->n_ivals < 1 || v->n_ivals > EP_MAX_RANK)
        return WHY("shape is not a constant int64 initializer of 1 to %d values", EP_MAX_RANK);
    s->rank = (int)v->n_ivals;
    for (int i = 0; i < s->rank; ++i) {
        if (v->ivals[i] < 0) return WHY("shape[%d] is %lld", i, (long long)v->ivals[i]);
        s->dims[i] = v->ivals[i];
    }
    return true;
}

bool ep_check_expand(const ep_model* m, const ep_node* n, char* why, size_t why_len) {
    ep_shape s;
    return ep_float_tensor(m, n->in[0], "input", why, why_len) &&
           expand_shape(m, n, &s, why, why_len);
}

/* ONNX's Expand broadcasts both ways: the output is the input and shape broadcast. */
bool ep_shape_expand(const ep_model* m, const ep_node* n, const ep_shape* const* in,
                     ep_shape* out, char* why, size_t why_len) {
    ep_shape s;
    char a[128], b[128];
    if (!expand_shape(m, n, &s, why, why_len)) return false;
    if (ep_broadcast(in[0], &s, &out[0])) return true;
    ep_shape_str(in[0], a, sizeof(a));
    ep_shape_str(&s, b, sizeof(b));
    return WHY("input %s does not broadcast to shape %s", a, b);
}

bool ep_emit_expand(lw* w, const ep_node* n, int arg) {
    (void)arg;
    const ep_shape* ys = &w->vals[n->out[0]].onnx;
    return lw_pointwise(w, "broadcast", HIPDNN_POINTWISE_IDENTITY,
                        lw_get_bcast(w, n->in[0], ys->rank), NULL, lw_make_out(w, n->out[0], ys));
}

/* ---- Where ------------------------------------------------------------------------------ */

bool ep_check_where(const ep_model* m, const ep_node* n, char* why, size_t why_len) {
    if (n->n_in != 3) return WHY("%d inputs", n->n_in);
    const ep_value* c = n->in[0] >= 0 ? &m->values[n->in[0]] : NULL;
    if (!c || c->elem_type != ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL || c->rank < 1)
        return WHY("condition is not a bool tensor of known rank");
    return ep_float_tensor(m, n->in[1], "X", why, why_len) &&
           ep_float_tensor(m, n->in[2], "Y", why, why_len);
}

bool ep_shape_where(const ep_model* m, const ep_node* n, const ep_shape* const* in,
                    ep_shape* out, char* why, size_t why_len) {
    (void)m, (void)n;
    ep_shape xy;
    char a[128], b[128], c[128];
    if (!in[1] || !in[2]) return WHY("X or Y is absent");
    if (ep_broadcast(in[1], in[2], &xy) && ep_broadcast(in[0], &xy, &out[0])) return true;
    ep_shape_str(in[0], a, sizeof(a));
    ep_shape_str(in[1], b, sizeof(b));
    ep_shape_str(in[2], c, sizeof(c));
    return WHY("condition %s, X %s and Y %s do not broadcast", a, b, c);
}

/* y = condition ? X : Y, each broadcast (BINARY_SELECT: y = t ? x : b). */
bool ep_emit_where(lw* w, const ep_node* n, int arg) {
    (void)arg;
    const ep_shape* ys = &w->vals[n->out[0]].onnx;
    hipdnnBackendDescriptor_t t = lw_get_bcast(w, n->in[0], ys->rank),
                              x = lw_get_bcast(w, n->in[1], ys->rank),
                              b = lw_get_bcast(w, n->in[2], ys->rank);
    hipdnnBackendDescriptor_t y = lw_make_out(w, n->out[0], ys);
    hipdnnPointwiseMode_t mode = HIPDNN_POINTWISE_BINARY_SELECT;
    hipdnnBackendDescriptor_t op = lw_op_new(w, HIPDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, NULL);
    return op &&
           lw_ok(w, hipdnnBackendSetAttribute(op, HIPDNN_ATTR_POINTWISE_MODE,
                                              HIPDNN_TYPE_POINTWISE_MODE_EXT, 1, &mode),
                 "pointwise mode") &&
           lw_set_t(w, op, HIPDNN_ATTR_OPERATION_POINTWISE_XDESC, x) &&
           lw_set_t(w, op, HIPDNN_ATTR_OPERATION_POINTWISE_BDESC, b) &&
           lw_set_t(w, op, HIPDNN_ATTR_OPERATION_POINTWISE_TDESC, t) &&
           lw_set_t(w, op, HIPDNN_ATTR_OPERATION_POINTWISE_YDESC, y) && lw_op_done(w, op);
}
