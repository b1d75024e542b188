/* ops_attention.c — ONNX's Attention (opset 23) as hipdnn's sdpa node, and the sdpa
 * operation the decomposed pattern (fuse_attention.c) lowers to as well.
 *
 * q, k, v of rank 4 ([B, H, S, D]) are read as they are; of rank 3 ([B, S, H * D], with
 * q_num_heads / kv_num_heads) through strides that make them [B, H, S, D] views, and Y is
 * written the same way, so no copy moves heads.  attn_mask is sdpa's bias: a float mask
 * added as it is, a bool one (true: attend) made 0 / the lowest float first.  is_causal
 * is the top-left causal band (ONNX's reference: np.tril over [S_q, S_kv]).  What sdpa
 * has no form of stays with ORT, saying so: past_key / past_value and the present_*
 * outputs (a KV cache), softcap, qk_matmul_output, softmax_precision double. */
#include <float.h>
#include <stdio.h>
#include <string.h>

#include "lowering.h"

#define WHY(...) (snprintf(why, why_len, __VA_ARGS__), false)

static const char* const port_names[] = {"Q", "K", "V", "attn_mask", "past_key", "past_value",
                                         "nonpad_kv_seqlen"};

static bool present(const ep_node* n, int k) { return k < n->n_in && n->in[k] >= 0; }

bool ep_check_attention(const ep_model* m, const ep_node* n, char* why, size_t why_len) {
    if (n->n_in < 3 || n->n_in > 7) return WHY("%d inputs", n->n_in);
    for (int k = 4; k < n->n_in; ++k)
        if (present(n, k))
            return WHY("input %s is given; hipdnn's sdpa has no KV cache or padding lengths "
                       "of ONNX's form", port_names[k]);
    static const char* const outs[] = {"Y", "present_key", "present_value", "qk_matmul_output"};
    for (int k = 1; k < n->n_out && k < 4; ++k)
        if (n->out[k] >= 0)
            return WHY("output %s is used; hipdnn's sdpa gives Y alone", outs[k]);
    if (ep_attr_float(n, "softcap", 0.0f) != 0.0f)
        return WHY("softcap %g: hipdnn's sdpa has no soft cap", (double)ep_attr_float(n, "softcap", 0));
    int64_t sp = ep_attr_int(n, "softmax_precision", 0);
    if (sp != 0 && sp != 1 && sp != 10 && sp != 16)
        return WHY("softmax_precision %lld: hipdnn's sdpa computes its softmax in float32",
                   (long long)sp);
    int64_t causal = ep_attr_int(n, "is_causal", 0);
    if (causal != 0 && causal != 1) return WHY("is_causal is %lld", (long long)causal);
    int r = -1;
    for (int k = 0; k < 3; ++k) {
        if (!ep_float_tensor(m, n->in[k], port_names[k], why, why_len)) return false;
        int rk = m->values[n->in[k]].rank;
        if (rk != 3 && rk != 4) return WHY("%s has rank %d; Attention takes 3 or 4", port_names[k], rk);
        if (r >= 0 && rk != r) return WHY("Q, K and V have ranks %d and %d", r, rk);
        if (m->values[n->in[k]].elem_type != m->values[n->in[0]].elem_type)
            return WHY("%s's element type is not Q's", port_names[k]);
        r = rk;
    }
    if (r == 3 && (ep_attr_int(n, "q_num_heads", 0) < 1 || ep_attr_int(n, "kv_num_heads", 0) < 1 ||
                   ep_attr_int(n, "q_num_heads", 0) > EP_ATTR_MAX ||
                   ep_attr_int(n, "kv_num_heads", 0) > EP_ATTR_MAX))
        return WHY("3-D inputs without q_num_heads and kv_num_heads in 1 to 2^40");
    if (present(n, 3)) {
        const ep_value* mk = &m->values[n->in[3]];
        if (mk->elem_type == ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL) {
            if (mk->rank < 1 || mk->rank > 4) return WHY("attn_mask has rank %d", mk->rank);
        } else if (!ep_float_tensor(m, n->in[3], "attn_mask", why, why_len)) {
            return false;
        } else if (mk->rank > 4) {
            return WHY("attn_mask has rank %d", mk->rank);
        }
    }
    return true;
}

/* Q, K, V as [B, H, S, D] from the inputs' shapes (3-D split by the head counts). */
static bool heads_of(const ep_node* n, const ep_shape* s, bool is_q, ep_shape* o, char* why,
                     size_t why_len) {
    if (s->rank == 4) {
        *o = *s;
        return true;
    }
    int64_t h = ep_attr_int(n, is_q ? "q_num_heads" : "kv_num_heads", 0);
    if (s->rank != 3 || h < 1 || s->dims[2] % h)
        return WHY("an input's last dim %lld is not a multiple of its head count %lld",
                   (long long)s->dims[s->rank - 1], (long long)h);
    *o = (ep_shape){4, {s->dims[0], h, s->dims[1], s->dims[2] / h}};
    return true;
}

bool ep_shape_attention(const ep_model* m, const ep_node* n, const ep_shape* const* in,
                        ep_shape* out, char* why, size_t why_len) {
    (void)m;
    ep_shape q, k, v;
    if (!in[1] || !in[2] || in[0]->rank != in[1]->rank || in[0]->rank != in[2]->rank)
        return WHY("Q, K and V need one rank, 3 or 4");
    if (!heads_of(n, in[0], true, &q, why, why_len) || !heads_of(n, in[1], false, &k, why, why_len) ||
        !heads_of(n, in[2], false, &v, why, why_len))
        return false;
    if (k.dims[0] != q.dims[0] || v.dims[0] != q.dims[0] || k.dims[3] != q.dims[3] ||
        v.dims[2] != k.dims[2] || v.dims[1] != k.dims[1] || q.dims[1] % k.dims[1])
        return WHY("Q [%lld, %lld, %lld, %lld], K [%lld, %lld, %lld, %lld] and V [%lld, %lld, "
                   "%lld, %lld] (as [B, H, S, D]) do not fit one attention",
                   (long long)q.dims[0], (long long)q.dims[1], (long long)q.dims[2],
                   (long long)q.dims[3], (long long)k.dims[0], (long long)k.dims[1],
                   (long long)k.dims[2], (long long)k.dims[3], (long long)v.dims[0],
                   (long long)v.dims[1], (long long)v.dims[2], (long long)v.dims[3]);
    if (n->n_in > 3 && in[3]) {
        const int64_t full[4] = {q.dims[0], q.dims[1], q.dims[2], k.dims[2]};
        ep_shape a = lw_aligned(in[3], 4);
        for (int i = 0; i < 4; ++i)
            if (in[3]->rank > 4 || (a.dims[i] != 1 && a.dims[i] != full[i]))
                return WHY("attn_mask does not broadcast to [B, H_q, S_q, S_kv] = [%lld, %lld, "
                           "%lld, %lld]", (long long)full[0], (long long)full[1],
                           (long long)full[2], (long long)full[3]);
    }
    out[0] = in[0]->rank == 4
                 ? (ep_shape){4, {q.dims[0], q.dims[1], q.dims[2], v.dims[3]}}
                 : (ep_shape){3, {q.dims[0], q.dims[2], q.dims[1] * v.dims[3]}};
    return true;
}

/* Value v's memory read as `dims` with `strides`: a second description of fused-node
 * memory, else a VIEW_ONLY reshape of the (packed) value computed in the graph. */
hipdnnBackendDescriptor_t lw_strided(lw* w, int v, const ep_shape* dims, const int64_t* strides,
                                     const char* what) {
    if (w->vals[v].bind_kind == EP_BIND_INPUT) return lw_bound(w, v, dims, strides);
    hipdnnBackendDescriptor_t x = lw_get_onnx(w, v);
    char nm[200];
    snprintf(nm, sizeof(nm), "%s/%s", w->label, what);
    hipdnnBackendDescriptor_t view = lw_virtual(w, nm, dims, strides);
    return x && view && lw_reshape_mode(w, x, view, HIPDNN_RESHAPE_VIEW_ONLY) ? view : NULL;
}

/* The tensor sdpa writes value y to in dims s: packed, as the nodes reading y take it
 * (hipdnn would lay a virtual one out like q, whose strides may be a view's). */
hipdnnBackendDescriptor_t lw_sdpa_out(lw* w, int y, const ep_shape* s) {
    lval* lv = &w->vals[y];
    if (lv->bind_kind == EP_BIND_OUTPUT) return lw_make_out(w, y, s);
    lv->desc = lw_virtual(w, w->m->values[y].name, s, NULL);
    lv->hs = *s;
    return lv->desc;
}

bool lw_sdpa(lw* w, hipdnnBackendDescriptor_t q, hipdnnBackendDescriptor_t k,
             hipdnnBackendDescriptor_t v, hipdnnBackendDescriptor_t bias, float scale,
             bool causal, hipdnnBackendDescriptor_t o) {
    hipdnnBackendDescriptor_t sc = lw_scalar(w, "attn_scale", scale, 4);
    hipdnnBackendDescriptor_t op = lw_op_new(w, HIPDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR_EXT, "sdpa");
    int64_t right = causal ? 0 : -1;
    return op && sc &&
           lw_ok(w, hipdnnBackendSetAttribute(op, HIPDNN_ATTR_OPERATION_SDPA_RIGHT_BOUND_EXT,
                                              HIPDNN_TYPE_INT64, 1, &right), "sdpa right bound") &&
           lw_set_t(w, op, HIPDNN_ATTR_OPERATION_SDPA_FWD_Q_EXT, q) &&
           lw_set_t(w, op, HIPDNN_ATTR_OPERATION_SDPA_FWD_K_EXT, k) &&
           lw_set_t(w, op, HIPDNN_ATTR_OPERATION_SDPA_FWD_V_EXT, v) &&
           lw_set_t(w, op, HIPDNN_ATTR_OPERATION_SDPA_FWD_ATTN_SCALE_EXT, sc) &&
           (!bias || lw_set_t(w, op, HIPDNN_ATTR_OPERATION_SDPA_FWD_BIAS_EXT, bias)) &&
           lw_set_t(w, op, HIPDNN_ATTR_OPERATION_SDPA_FWD_O_EXT, o) && lw_op_done(w, op) &&
           (++w->n_sdpa, true);
}

/* Input k of n as [B, H, S, D]: itself (rank 4), or its [B, S, H * D] memory viewed so. */
static hipdnnBackendDescriptor_t heads_view(lw* w, const ep_node* n, int k, const char* what) {
    const ep_shape* s = &w->vals[n->in[k]].onnx;
    ep_shape h;
    char why[200];
    if (!heads_of(n, s, k == 0, &h, why, sizeof(why))) {
        lw_failf(w, "%s", why);
        return NULL;
    }
    if (s->rank == 4) return lw_get_onnx(w, n->in[k]);
    const int64_t st[4] = {h.dims[2] * s->dims[2], h.dims[3], s->dims[2], 1};
    return lw_strided(w, n->in[k], &h, st, what);
}

/* attn_mask as sdpa's bias, in 4 dims: a float mask as it is, a bool one selected into
 * 0 (attend) or the lowest float. */
static hipdnnBackendDescriptor_t mask_bias(lw* w, const ep_node* n) {
    if (!present(n, 3)) return NULL;
    int v = n->in[3];
    ep_shape a = lw_aligned(&w->vals[v].onnx, 4);
    hipdnnBackendDescriptor_t t = lw_get(w, v, &a);
    if (w->m->values[v].elem_type != ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL) return t;
    hipdnnBackendDescriptor_t y = lw_tmp(w, "mask_bias", &a);
    hipdnnBackendDescriptor_t zero = lw_scalar(w, "attend", 0.0f, 4),
                              low = lw_scalar(w, "masked", -FLT_MAX, 4);
    hipdnnPointwiseMode_t mode = HIPDNN_POINTWISE_BINARY_SELECT;
    hipdnnBackendDescriptor_t op = lw_op_new(w, HIPDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, "mask");
    bool ok = op && t &&
              lw_ok(w, hipdnnBackendSetAttribute(op, HIPDNN_ATTR_POINTWISE_MODE,
                                                 HIPDNN_TYPE_POINTWISE_MODE_EXT, 1, &mode),
                    "pointwise mode") &&
              lw_set_t(w, op, HIPDNN_ATTR_OPERATION_POINTWISE_XDESC, zero) &&
              lw_set_t(w, op, HIPDNN_ATTR_OPERATION_POINTWISE_BDESC, low) &&
              lw_set_t(w, op, HIPDNN_ATTR_OPERATION_POINTWISE_TDESC, t) &&
              lw_set_t(w, op, HIPDNN_ATTR_OPERATION_POINTWISE_YDESC, y) && lw_op_done(w, op);
    return ok ? y : NULL;
}

/* Y of a 3-D Attention: sdpa's o [B, H, S_q, D_v] written through the strides of
 * [B, S_q, H * D_v], then that memory described packed for the nodes that read Y. */
static hipdnnBackendDescriptor_t out_3d(lw* w, int y, const ep_shape* o, const ep_shape* ys,
                                        hipdnnBackendDescriptor_t* yt) {
    const int64_t st[4] = {o->dims[2] * ys->dims[2], o->dims[3], ys->dims[2], 1};
    lval* lv = &w->vals[y];
    bool read = false; /* by a node of this graph: then a packed view of the memory */
    for (int i = 0; i < w->m->n_nodes; ++i)
        for (int k = 0; k < w->m->nodes[i].n_in; ++k)
            read = read || ep_node_in(&w->m->nodes[i], k) == y;
    char nm[200];
    snprintf(nm, sizeof(nm), "%s/o", w->label);
    hipdnnBackendDescriptor_t t = lv->bind_kind == EP_BIND_OUTPUT ? lw_bound(w, y, o, st)
                                                                  : lw_virtual(w, nm, o, st);
    *yt = read ? lw_virtual(w, w->m->values[y].name, ys, NULL) : t;
    lv->desc = *yt;
    lv->hs = read ? *ys : *o;
    return t;
}

/* 1 / sqrt(d) by Newton's iteration (hipdnn-ep links no libm). */
static float inv_sqrt(int64_t d) {
    double x = d > 1 ? (double)d / 2 : 1.0;
    for (int i = 0; i < 64; ++i) x = 0.5 * (x + (double)d / x);
    return (float)(1.0 / x);
}

bool ep_emit_attention(lw* w, const ep_node* n, int arg) {
    (void)arg;
    const ep_shape* ys = &w->vals[n->out[0]].onnx;
    const ep_shape* qs = &w->vals[n->in[0]].onnx;
    ep_shape qh;
    char why[200];
    if (!heads_of(n, qs, true, &qh, why, sizeof(why))) {
        lw_failf(w, "%s", why);
        return false;
    }
    float scale = ep_attr_float(n, "scale", 0.0f);
    if (!ep_attr_get(n, "scale")) scale = inv_sqrt(qh.dims[3]);
    hipdnnBackendDescriptor_t q = heads_view(w, n, 0, "q"), k = heads_view(w, n, 1, "k"),
                              v = heads_view(w, n, 2, "v"), bias = mask_bias(w, n);
    if (!q || !k || !v || (present(n, 3) && !bias)) return false;
    bool causal = ep_attr_int(n, "is_causal", 0) != 0;
    if (ys->rank == 4)
        return lw_sdpa(w, q, k, v, bias, scale, causal, lw_sdpa_out(w, n->out[0], ys));
    ep_shape os = {4, {qh.dims[0], qh.dims[1], qh.dims[2], ys->dims[2] / qh.dims[1]}};
    hipdnnBackendDescriptor_t yt = NULL, o = out_3d(w, n->out[0], &os, ys, &yt);
    return lw_sdpa(w, q, k, v, bias, scale, causal, o) &&
           (yt == o || lw_reshape_mode(w, o, yt, HIPDNN_RESHAPE_VIEW_ONLY));
}
