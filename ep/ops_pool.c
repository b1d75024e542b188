/* ops_pool.c — ONNX's pooling ops, each row's check, shape rule and lowering (op_table.c):
 * MaxPool and AveragePool as hipdnn's resample_fwd (MAXPOOL with padding that never wins;
 * AVGPOOL including or excluding the padding, as count_include_pad says), and
 * GlobalAveragePool / GlobalMaxPool as a reduction over the spatial dims.
 *
 * resample_fwd has no dilation and no index of ONNX's kind (MaxPool's Indices count over
 * the whole tensor, hipdnn's within the window), and takes padding below the window: a
 * node that needs any of these stays with ORT, saying so.  Output sizes are ONNX's
 * (ceil_mode rounds up, but a last window that would start past the input and its
 * leading padding is dropped), which resample_fwd takes as given. */
#include <stdio.h>
#include <string.h>

#include "lowering.h"

#define WHY(...) (snprintf(why, why_len, __VA_ARGS__), false)

static bool is_max(const ep_node* n) { return !strcmp(n->op, "MaxPool"); }

/* attribute `name`'s value i when it has `count` values, else dflt */
static int64_t ints_at(const ep_node* n, const char* name, int i, int count, int64_t dflt) {
    const ep_attr* a = ep_attr_get(n, name);
    return a && a->type == ORT_OP_ATTR_INTS && a->n_ints == (size_t)count ? a->ints[i] : dflt;
}

/* A list attribute, when present, has `count` values in [lo, EP_ATTR_MAX]. */
static bool list_ok(const ep_node* n, const char* name, int count, int64_t lo, char* why,
                    size_t why_len) {
    const ep_attr* a = ep_attr_get(n, name);
    if (!a) return true;
    if (a->type != ORT_OP_ATTR_INTS || a->n_ints != (size_t)count)
        return WHY("%s has %zu values; %d expected", name, a->n_ints, count);
    for (size_t k = 0; k < a->n_ints; ++k)
        if (a->ints[k] < lo || a->ints[k] > EP_ATTR_MAX)
            return WHY("%s[%zu] is %lld; hipdnn-ep takes %lld to 2^40", name, k,
                       (long long)a->ints[k], (long long)lo);
    return true;
}

/* Padding of spatial dim i (of sp) for input size `in`: pads[] for NOTSET, none for
 * VALID, ONNX's split of the total for the SAME modes (the odd unit at the end for
 * SAME_UPPER). */
static void pool_pads(const ep_node* n, int i, int sp, int64_t in, int64_t* pre, int64_t* post) {
    const char* mode = ep_attr_string(n, "auto_pad", "NOTSET");
    int64_t k = ints_at(n, "kernel_shape", i, sp, 1), s = ints_at(n, "strides", i, sp, 1);
    if (!strcmp(mode, "SAME_UPPER") || !strcmp(mode, "SAME_LOWER")) {
        int64_t total = ((in + s - 1) / s - 1) * s + k - in;
        if (total < 0) total = 0;
        *pre = !strcmp(mode, "SAME_UPPER") ? total / 2 : total - total / 2;
        *post = total - *pre;
        return;
    }
    bool notset = !strcmp(mode, "NOTSET");
    *pre = notset ? ints_at(n, "pads", i, 2 * sp, 0) : 0;
    *post = notset ? ints_at(n, "pads", i + sp, 2 * sp, 0) : 0;
}

/* MaxPool, AveragePool */
bool ep_check_pool(const ep_model* m, const ep_node* n, char* why, size_t why_len) {
    if (!ep_float_tensor(m, n->in[0], "X", why, why_len)) return false;
    if (is_max(n) && n->n_out > 1 && n->out[1] >= 0)
        return WHY("output Indices is used; hipdnn's pooling index counts within the window, "
                   "ONNX's over the tensor");
    int r = m->values[n->in[0]].rank;
    if (r < 3 || r > 2 + HIPDNN_MAX_SPATIAL)
        return WHY("X has rank %d; hipdnn pools ranks 3 to %d", r, 2 + HIPDNN_MAX_SPATIAL);
    int sp = r - 2;
    const ep_attr* ks = ep_attr_get(n, "kernel_shape");
    if (!ks) return WHY("no kernel_shape");
    if (!list_ok(n, "kernel_shape", sp, 1, why, why_len) ||
        !list_ok(n, "strides", sp, 1, why, why_len) ||
        !list_ok(n, "dilations", sp, 1, why, why_len) || !list_ok(n, "pads", 2 * sp, 0, why, why_len))
        return false;
    const char* pad = ep_attr_string(n, "auto_pad", "NOTSET");
    bool same = !strcmp(pad, "SAME_UPPER") || !strcmp(pad, "SAME_LOWER");
    if (!same && strcmp(pad, "NOTSET") && strcmp(pad, "VALID"))
        return WHY("auto_pad '%s' is not an ONNX value", pad);
    int64_t ceil_mode = ep_attr_int(n, "ceil_mode", 0), incl = ep_attr_int(n, "count_include_pad", 0);
    if (ceil_mode != 0 && ceil_mode != 1) return WHY("ceil_mode is %lld", (long long)ceil_mode);
    if (incl != 0 && incl != 1) return WHY("count_include_pad is %lld", (long long)incl);
    for (int i = 0; i < sp; ++i) {
        int64_t k = ks->ints[i], s = ints_at(n, "strides", i, sp, 1);
        if (ints_at(n, "dilations", i, sp, 1) != 1)
            return WHY("dilations[%d] is %lld; hipdnn's pooling has no dilation", i,
                       (long long)ints_at(n, "dilations", i, sp, 1));
        if (same && s > k)
            return WHY("auto_pad %s with stride %lld past the window %lld", pad, (long long)s,
                       (long long)k);
        int64_t pre = ints_at(n, "pads", i, 2 * sp, 0), post = ints_at(n, "pads", i + sp, 2 * sp, 0);
        if (!strcmp(pad, "NOTSET") && (pre >= k || post >= k))
            return WHY("pads %lld/%lld of spatial dim %d reach the window %lld; hipdnn pools "
                       "padding below the window", (long long)pre, (long long)post, i,
                       (long long)k);
    }
    return true;
}

bool ep_shape_pool(const ep_model* m, const ep_node* n, const ep_shape* const* in,
                   ep_shape* out, char* why, size_t why_len) {
    (void)m;
    const ep_shape* x = in[0];
    int sp = x->rank - 2;
    if (sp < 1 || sp > HIPDNN_MAX_SPATIAL || !ep_attr_get(n, "kernel_shape") ||
        ep_attr_get(n, "kernel_shape")->n_ints != (size_t)sp)
        return WHY("X has rank %d, kernel_shape another", x->rank);
    bool ceil_mode = ep_attr_int(n, "ceil_mode", 0) != 0;
    out[0] = *x;
    for (int i = 0; i < sp; ++i) {
        int64_t k = ints_at(n, "kernel_shape", i, sp, 1), s = ints_at(n, "strides", i, sp, 1);
        int64_t pre, post, in_i = x->dims[2 + i];
        pool_pads(n, i, sp, in_i, &pre, &post);
        int64_t span = in_i + pre + post - k;
        if (span < 0)
            return WHY("spatial dim %d: %lld with padding %lld/%lld is smaller than the window "
                       "%lld", i, (long long)in_i, (long long)pre, (long long)post, (long long)k);
        int64_t o = span / s + 1;
        if (ceil_mode && span % s && (o * s) < in_i + pre) ++o;
        out[0].dims[2 + i] = o;
    }
    return true;
}

static bool set_i64s(lw* w, hipdnnBackendDescriptor_t op, hipdnnBackendAttributeName_t a,
                     int count, const int64_t* v, const char* what) {
    return lw_ok(w, hipdnnBackendSetAttribute(op, a, HIPDNN_TYPE_INT64, count, v), what);
}

bool ep_emit_pool(lw* w, const ep_node* n, int arg) {
    (void)arg;
    const ep_shape* xs = &w->vals[n->in[0]].onnx;
    int sp = xs->rank - 2;
    int64_t win[HIPDNN_MAX_SPATIAL], stride[HIPDNN_MAX_SPATIAL], pre[HIPDNN_MAX_SPATIAL],
        post[HIPDNN_MAX_SPATIAL];
    for (int i = 0; i < sp; ++i) {
        win[i] = ints_at(n, "kernel_shape", i, sp, 1);
        stride[i] = ints_at(n, "strides", i, sp, 1);
        pool_pads(n, i, sp, xs->dims[2 + i], &pre[i], &post[i]);
    }
    hipdnnResampleMode_t mode = is_max(n) ? HIPDNN_RESAMPLE_MAXPOOL
                                : ep_attr_int(n, "count_include_pad", 0)
                                    ? HIPDNN_RESAMPLE_AVGPOOL_INCLUDE_PADDING
                                    : HIPDNN_RESAMPLE_AVGPOOL_EXCLUDE_PADDING;
    hipdnnPaddingMode_t pad = is_max(n) ? HIPDNN_NEG_INF_PAD : HIPDNN_ZERO_PAD;
    hipdnnBackendDescriptor_t x = lw_get_onnx(w, n->in[0]);
    hipdnnBackendDescriptor_t y = lw_make_out(w, n->out[0], &w->vals[n->out[0]].onnx);
    hipdnnBackendDescriptor_t op = lw_op_new(w, HIPDNN_BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR, NULL);
    return op &&
           lw_ok(w, hipdnnBackendSetAttribute(op, HIPDNN_ATTR_RESAMPLE_MODE,
                                              HIPDNN_TYPE_RESAMPLE_MODE_EXT, 1, &mode),
                 "resample mode") &&
           lw_ok(w, hipdnnBackendSetAttribute(op, HIPDNN_ATTR_RESAMPLE_PADDING_MODE,
                                              HIPDNN_TYPE_PADDING_MODE_EXT, 1, &pad),
                 "padding mode") &&
           set_i64s(w, op, HIPDNN_ATTR_RESAMPLE_WINDOW_DIMS, sp, win, "window") &&
           set_i64s(w, op, HIPDNN_ATTR_RESAMPLE_STRIDES, sp, stride, "strides") &&
           set_i64s(w, op, HIPDNN_ATTR_RESAMPLE_PRE_PADDINGS, sp, pre, "pre paddings") &&
           set_i64s(w, op, HIPDNN_ATTR_RESAMPLE_POST_PADDINGS, sp, post, "post paddings") &&
           lw_set_t(w, op, HIPDNN_ATTR_OPERATION_RESAMPLE_FWD_XDESC, x) &&
           lw_set_t(w, op, HIPDNN_ATTR_OPERATION_RESAMPLE_FWD_YDESC, y) && lw_op_done(w, op);
}

/* GlobalAveragePool, GlobalMaxPool: X of rank 3 or more, reduced over its spatial dims */
bool ep_check_global_pool(const ep_model* m, const ep_node* n, char* why, size_t why_len) {
    if (!ep_float_tensor(m, n->in[0], "X", why, why_len)) return false;
    if (m->values[n->in[0]].rank < 3)
        return WHY("X has rank %d; a global pool needs [N, C, spatial...]",
                   m->values[n->in[0]].rank);
    return true;
}

bool ep_shape_global_pool(const ep_model* m, const ep_node* n, const ep_shape* const* in,
                          ep_shape* out, char* why, size_t why_len) {
    (void)m, (void)n;
    if (in[0]->rank < 3) return WHY("X has rank %d; a global pool needs 3 or more", in[0]->rank);
    out[0] = *in[0];
    for (int i = 2; i < out[0].rank; ++i) out[0].dims[i] = 1;
    return true;
}

/* arg: the reduction operator (AVG, MAX) */
bool ep_emit_global_pool(lw* w, const ep_node* n, int arg) {
    return lw_reduction(w, NULL, (hipdnnReduceTensorOp_t)arg, lw_get_onnx(w, n->in[0]),
                        lw_make_out(w, n->out[0], &w->vals[n->out[0]].onnx));
}
