/* shape.c — ONNX's shape rules for the ops hipdnn-ep claims, run on concrete input shapes
 * each time a fused node meets new ones (lower.c), so that every tensor of the hipdnn
 * graph is given its dims and the broadcasting ranks can be lined up.  Each op's rule is
 * named by its row in op_table.c. */
#include <stdio.h>
#include <string.h>

#include "hipdnn_ep.h"

#define WHY(...) (snprintf(why, why_len, __VA_ARGS__), false)

bool ep_broadcast(const ep_shape* a, const ep_shape* b, ep_shape* out) {
    int r = a->rank > b->rank ? a->rank : b->rank;
    for (int i = 0; i < r; ++i) {
        int ia = a->rank - r + i, ib = b->rank - r + i;
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da != db && da != 1 && db != 1) return false;
        out->dims[i] = da == 1 ? db : da;
    }
    out->rank = r;
    return true;
}

void ep_shape_str(const ep_shape* s, char* buf, size_t len) {
    int n = snprintf(buf, len, "[");
    for (int i = 0; i < s->rank && n < (int)len; ++i)
        n += snprintf(buf + n, len - (size_t)n, "%s%lld", i ? ", " : "", (long long)s->dims[i]);
    if (n < (int)len) snprintf(buf + n, len - (size_t)n, "]");
}

bool ep_conv_pads(const ep_node* n, int axis, int spatial, int64_t in, int64_t k,
                  int64_t stride, int64_t dilation, int64_t* pre, int64_t* post) {
    const char* mode = ep_attr_string(n, "auto_pad", "NOTSET");
    if (!strcmp(mode, "NOTSET")) {
        const ep_attr* pads = ep_attr_get(n, "pads");
        bool have = pads && pads->type == ORT_OP_ATTR_INTS && pads->n_ints == (size_t)(2 * spatial);
        *pre = have ? pads->ints[axis] : 0;
        *post = have ? pads->ints[axis + spatial] : 0;
        return true;
    }
    if (!strcmp(mode, "VALID")) {
        *pre = *post = 0;
        return true;
    }
    bool upper = !strcmp(mode, "SAME_UPPER");
    if (!upper && strcmp(mode, "SAME_LOWER")) return false;
    int64_t out = (in + stride - 1) / stride;
    int64_t total = (out - 1) * stride + (k - 1) * dilation + 1 - in;
    if (total < 0) total = 0;
    /* SAME_UPPER puts the odd padding at the end, SAME_LOWER at the beginning. */
    *pre = upper ? total / 2 : total - total / 2;
    *post = total - *pre;
    return true;
}

static int64_t list_at(const ep_node* n, const char* name, int i, int count, int64_t dflt) {
    const ep_attr* a = ep_attr_get(n, name);
    if (!a || a->type != ORT_OP_ATTR_INTS || a->n_ints != (size_t)count) return dflt;
    return a->ints[i];
}

bool ep_conv_transpose_pads(const ep_node* n, int axis, int spatial, int64_t in, int64_t k,
                            int64_t* pre, int64_t* post, int64_t* total) {
    int64_t s = list_at(n, "strides", axis, spatial, 1), d = list_at(n, "dilations", axis, spatial, 1);
    int64_t adj = list_at(n, "output_padding", axis, spatial, 0);
    int64_t b = 0, e = 0;
    const ep_attr* os = ep_attr_get(n, "output_shape");
    bool ok = true;
    if (os && os->type == ORT_OP_ATTR_INTS && os->n_ints == (size_t)spatial) {
        int64_t t = s * (in - 1) + adj + (k - 1) * d + 1 - os->ints[axis];
        ok = t >= 0;
        if (t < 0) t = 0;
        /* ONNX: the odd unit at the start for NOTSET / VALID (capability.c takes an even
         * total only, where ORT agrees) */
        b = t - t / 2;
        e = t / 2;
    } else if (!strcmp(ep_attr_string(n, "auto_pad", "NOTSET"), "NOTSET")) {
        b = list_at(n, "pads", axis, 2 * spatial, 0);
        e = list_at(n, "pads", axis + spatial, 2 * spatial, 0);
    }
    if (pre) *pre = b;
    if (post) *post = e;
    if (total) *total = b + e;
    return ok;
}

bool ep_reduce_axes(const ep_model* m, const ep_node* n, int rank, bool* reduced, char* why,
                    size_t why_len) {
    const int64_t* axes = NULL;
    int64_t count = 0;
    const ep_attr* a = ep_attr_get(n, "axes");
    if (a && a->type == ORT_OP_ATTR_INTS) {
        axes = a->ints;
        count = (int64_t)a->n_ints;
    } else if (n->n_in >= 2 && n->in[1] >= 0) {
        const ep_value* v = &m->values[n->in[1]];
        if (!v->is_const || !v->ivals)
            return WHY("axes '%s' is not a constant int64 initializer", v->name);
        axes = v->ivals;
        count = v->n_ivals;
    }
    for (int i = 0; i < rank; ++i) reduced[i] = count == 0;
    if (count == 0 && ep_attr_int(n, "noop_with_empty_axes", 0))
        return WHY("noop_with_empty_axes=1 with no axes (an identity) is left to ORT");
    for (int64_t k = 0; k < count; ++k) {
        int64_t ax = axes[k] < 0 ? axes[k] + rank : axes[k];
        if (ax < 0 || ax >= rank) return WHY("axis %lld is out of range for rank %d",
                                             (long long)axes[k], rank);
        reduced[ax] = true;
    }
    return true;
}

/* Add, Sub, Mul, Div: NumPy broadcasting */
bool ep_shape_broadcast(const ep_model* m, const ep_node* n, const ep_shape* const* in,
                        ep_shape* out, char* why, size_t why_len) {
    (void)m, (void)n;
    char a[128], b[128];
    if (!in[1]) return WHY("input 1 is absent");
    if (ep_broadcast(in[0], in[1], &out[0])) return true;
    ep_shape_str(in[0], a, sizeof(a));
    ep_shape_str(in[1], b, sizeof(b));
    return WHY("A %s and B %s do not broadcast", a, b);
}

/* Y has X's shape: the pointwise activations */
bool ep_shape_same(const ep_model* m, const ep_node* n, const ep_shape* const* in,
                   ep_shape* out, char* why, size_t why_len) {
    (void)m, (void)n, (void)why, (void)why_len;
    out[0] = *in[0];
    return true;
}

/* Softmax, LayerNormalization and BatchNormalization keep X's shape, but GetCapability
 * judged their axes and parameters by the ranks the model declares; a value can arrive in
 * another rank (a scalar from a reduction ORT's kernel and ONNX's shape inference disagree
 * on), so the same rules are checked again on the shapes that arrive. */

bool ep_softmax_axes(const ep_node* n, int rank, bool* reduced, char* why, size_t why_len) {
    int64_t axis = ep_attr_int(n, "axis", n->since_version < 13 ? 1 : -1);
    if (rank < 1) return WHY("input has rank 0; %s needs an axis", n->op);
    if (axis < -rank || axis >= rank)
        return WHY("axis %lld is out of range for the input, of rank %d", (long long)axis, rank);
    if (axis < 0) axis += rank;
    for (int i = 0; i < rank; ++i)
        reduced[i] = n->since_version < 13 ? i >= axis : i == axis;
    return true;
}

bool ep_shape_softmax(const ep_model* m, const ep_node* n, const ep_shape* const* in,
                      ep_shape* out, char* why, size_t why_len) {
    (void)m;
    bool red[EP_MAX_RANK];
    if (!ep_softmax_axes(n, in[0]->rank, red, why, why_len)) return false;
    out[0] = *in[0];
    return true;
}

/* Parameter k of n, present, is X's dims from axis on (no broadcasting: capability.c). */
static bool param_is(const ep_model* m, const ep_node* n, const ep_shape* const* in, int k,
                     int axis, char* why, size_t why_len) {
    char a[128], b[128];
    const ep_shape *x = in[0], *p = in[k];
    bool same = p && p->rank == x->rank - axis;
    for (int i = 0; same && i < p->rank; ++i) same = p->dims[i] == x->dims[axis + i];
    if (same) return true;
    if (!p) return WHY("input %d is absent", k);
    ep_shape_str(x, a, sizeof(a));
    ep_shape_str(p, b, sizeof(b));
    return WHY("'%s' is %s, not X's dims from axis %d of %s", m->values[n->in[k]].name, b,
               axis, a);
}

/* Y is X; Mean and InvStdDev are X's dims with 1 from axis on. */
bool ep_shape_layernorm(const ep_model* m, const ep_node* n, const ep_shape* const* in,
                        ep_shape* out, char* why, size_t why_len) {
    int r = in[0]->rank;
    int64_t axis = ep_attr_int(n, "axis", -1);
    if (axis < 0) axis += r;
    if (axis < 0 || axis >= r)
        return WHY("axis %lld of an input of rank %d", (long long)ep_attr_int(n, "axis", -1), r);
    if (!param_is(m, n, in, 1, (int)axis, why, why_len) ||
        (n->n_in >= 3 && n->in[2] >= 0 && !param_is(m, n, in, 2, (int)axis, why, why_len)))
        return false;
    out[0] = out[1] = out[2] = *in[0];
    for (int i = (int)axis; i < r; ++i) out[1].dims[i] = out[2].dims[i] = 1;
    return true;
}

bool ep_shape_batchnorm(const ep_model* m, const ep_node* n, const ep_shape* const* in,
                        ep_shape* out, char* why, size_t why_len) {
    if (in[0]->rank < 2) return WHY("input has rank %d; BatchNormalization needs 2 or more",
                                    in[0]->rank);
    ep_shape c = {2, {1, in[0]->dims[1]}}; /* [C], as the parameters of [1, C] from axis 1 */
    const ep_shape* ins[5] = {&c, in[1], in[2], in[3], in[4]};
    for (int k = 1; k < 5 && k < n->n_in; ++k)
        if (!param_is(m, n, ins, k, 1, why, why_len)) return false;
    out[0] = *in[0];
    if (n->n_in >= 5) { /* training mode's running_mean and running_var: [C] */
        out[1] = *in[3];
        out[2] = *in[4];
    }
    return true;
}

bool ep_shape_matmul(const ep_model* m, const ep_node* n, const ep_shape* const* in,
                     ep_shape* out, char* why, size_t why_len) {
    (void)m, (void)n;
    char a[128], b[128];
    const ep_shape *x = in[0], *w = in[1];
    if (!w || x->rank < 2 || w->rank < 2) return WHY("MatMul needs two inputs of rank >= 2");
    if (x->dims[x->rank - 1] != w->dims[w->rank - 2]) {
        ep_shape_str(x, a, sizeof(a));
        ep_shape_str(w, b, sizeof(b));
        return WHY("A %s and B %s: inner dims differ", a, b);
    }
    ep_shape xb = *x, wb = *w;
    xb.rank -= 2;
    wb.rank -= 2;
    if (!ep_broadcast(&xb, &wb, &out[0])) {
        ep_shape_str(x, a, sizeof(a));
        ep_shape_str(w, b, sizeof(b));
        return WHY("batch dims of A %s and B %s do not broadcast", a, b);
    }
    out[0].dims[out[0].rank++] = x->dims[x->rank - 2];
    out[0].dims[out[0].rank++] = w->dims[w->rank - 1];
    return true;
}

bool ep_shape_gemm(const ep_model* m, const ep_node* n, const ep_shape* const* in,
                   ep_shape* out, char* why, size_t why_len) {
    (void)m;
    char a[128];
    const ep_shape *x = in[0], *w = in[1];
    if (!w || x->rank != 2 || w->rank != 2) return WHY("Gemm needs A and B of rank 2");
    bool ta = ep_attr_int(n, "transA", 0) != 0, tb = ep_attr_int(n, "transB", 0) != 0;
    int64_t M = ta ? x->dims[1] : x->dims[0], K = ta ? x->dims[0] : x->dims[1];
    int64_t K2 = tb ? w->dims[1] : w->dims[0], N = tb ? w->dims[0] : w->dims[1];
    if (K != K2) return WHY("A's K=%lld but B's K=%lld", (long long)K, (long long)K2);
    out[0].rank = 2;
    out[0].dims[0] = M;
    out[0].dims[1] = N;
    if (n->n_in >= 3 && in[2]) {
        ep_shape t;
        if (!ep_broadcast(in[2], &out[0], &t) || t.rank != 2 || t.dims[0] != M || t.dims[1] != N) {
            ep_shape_str(in[2], a, sizeof(a));
            return WHY("C %s does not broadcast to [%lld, %lld]", a, (long long)M, (long long)N);
        }
    }
    return true;
}

/* Spatial dim i of Conv's (tr false) or ConvTranspose's output, into *o. */
static bool conv_spatial(const ep_node* n, bool tr, const ep_shape* x, const ep_shape* w, int i,
                         int64_t* o, char* why, size_t why_len) {
    int sp = x->rank - 2;
    int64_t s = list_at(n, "strides", i, sp, 1), d = list_at(n, "dilations", i, sp, 1);
    int64_t pre, post, span = d * (w->dims[2 + i] - 1) + 1;
    if (tr) {
        if (!ep_conv_transpose_pads(n, i, sp, x->dims[2 + i], w->dims[2 + i], &pre, &post, NULL))
            return WHY("output_shape[%d] is larger than ConvTranspose gives", i);
        *o = s * (x->dims[2 + i] - 1) + list_at(n, "output_padding", i, sp, 0) + span - pre -
             post;
        if (*o < 1) return WHY("spatial dim %d of the output would be %lld", i, (long long)*o);
        return true;
    }
    if (!ep_conv_pads(n, i, sp, x->dims[2 + i], w->dims[2 + i], s, d, &pre, &post))
        return WHY("auto_pad '%s' is not an ONNX value", ep_attr_string(n, "auto_pad", ""));
    if (x->dims[2 + i] + pre + post < span)
        return WHY("the filter is larger than the padded image");
    *o = (x->dims[2 + i] + pre + post - span) / s + 1;
    return true;
}

/* Conv (tr false) and ConvTranspose */
static bool conv_shape(const ep_node* n, bool tr, const ep_shape* const* in, ep_shape* out,
                       char* why, size_t why_len) {
    const ep_shape *x = in[0], *w = in[1];
    if (!w || x->rank < 3 || x->rank > 5 || w->rank != x->rank)
        return WHY("%s needs X and W of one rank, 3 to 5", n->op);
    int64_t group = ep_attr_int(n, "group", 1);
    /* Conv: W [K, C/group, k...]; ConvTranspose: W [C, K/group, k...] */
    int64_t c_in = tr ? w->dims[0] : w->dims[1] * group;
    int64_t k_out = tr ? w->dims[1] * group : w->dims[0];
    if (group < 1 || x->dims[1] != c_in || w->dims[0] % group)
        return WHY("X has C=%lld, W is [%lld, %lld, ...] with group=%lld", (long long)x->dims[1],
                   (long long)w->dims[0], (long long)w->dims[1], (long long)group);
    out[0].rank = x->rank;
    out[0].dims[0] = x->dims[0];
    out[0].dims[1] = k_out;
    for (int i = 0; i < x->rank - 2; ++i)
        if (!conv_spatial(n, tr, x, w, i, &out[0].dims[2 + i], why, why_len)) return false;
    if (n->n_in >= 3 && in[2] && (in[2]->rank != 1 || in[2]->dims[0] != k_out))
        return WHY("bias is not [%lld]", (long long)k_out);
    return true;
}

bool ep_shape_conv(const ep_model* m, const ep_node* n, const ep_shape* const* in,
                   ep_shape* out, char* why, size_t why_len) {
    (void)m;
    return conv_shape(n, false, in, out, why, why_len);
}

bool ep_shape_conv_transpose(const ep_model* m, const ep_node* n, const ep_shape* const* in,
                             ep_shape* out, char* why, size_t why_len) {
    (void)m;
    return conv_shape(n, true, in, out, why, why_len);
}

bool ep_shape_reshape(const ep_model* m, const ep_node* n, const ep_shape* const* in,
                      ep_shape* out, char* why, size_t why_len) {
    char a[128], b[128];
    const ep_shape* x = in[0];
    const ep_value* sv = n->in[1] >= 0 ? &m->values[n->in[1]] : NULL;
    if (!sv || !sv->ivals || sv->n_ivals < 1 || sv->n_ivals > EP_MAX_RANK)
        return WHY("shape is not a constant of 1 to %d values", EP_MAX_RANK);
    bool allowzero = ep_attr_int(n, "allowzero", 0) != 0;
    int64_t total = 1, known = 1;
    int infer = -1;
    for (int i = 0; i < x->rank; ++i) total *= x->dims[i];
    out[0].rank = (int)sv->n_ivals;
    for (int i = 0; i < out[0].rank; ++i) {
        int64_t d = sv->ivals[i];
        /* ONNX: without allowzero a 0 copies the input's dim, which may itself be 0 (an
         * empty input: the output is empty too); with it, a 0 is a 0 */
        if (d == 0 && !allowzero) {
            if (i >= x->rank) return WHY("shape[%d] is 0 but the input has rank %d", i, x->rank);
            d = x->dims[i];
        } else if (d == -1) {
            if (infer >= 0) return WHY("shape has two -1 entries");
            infer = i;
            continue;
        } else if (d < 0) {
            return WHY("shape[%d] is %lld", i, (long long)d);
        }
        out[0].dims[i] = d;
        known *= d;
    }
    if (infer >= 0) {
        /* as ORT: the -1 is not inferred from a product of 0 (a 0 given or copied) */
        if (known == 0) return WHY("shape has a 0 dim and a -1: the -1 cannot be inferred");
        if (total % known) return WHY("%lld elements do not fill the -1 dim", (long long)total);
        out[0].dims[infer] = total / known;
        known = total;
    }
    if (known != total) {
        ep_shape_str(x, a, sizeof(a));
        ep_shape_str(&out[0], b, sizeof(b));
        return WHY("input %s and shape %s differ in element count", a, b);
    }
    return true;
}

bool ep_shape_flatten(const ep_model* m, const ep_node* n, const ep_shape* const* in,
                      ep_shape* out, char* why, size_t why_len) {
    (void)m;
    const ep_shape* x = in[0];
    int64_t axis = ep_attr_int(n, "axis", 1);
    if (axis < 0) axis += x->rank;
    if (axis < 0 || axis > x->rank) return WHY("axis %lld is out of range", (long long)axis);
    out[0].rank = 2;
    out[0].dims[0] = out[0].dims[1] = 1;
    for (int i = 0; i < x->rank; ++i) out[0].dims[i < axis ? 0 : 1] *= x->dims[i];
    return true;
}

/* ReduceSum, ReduceMean, ReduceMax, ReduceMin */
bool ep_shape_reduce(const ep_model* m, const ep_node* n, const ep_shape* const* in,
                     ep_shape* out, char* why, size_t why_len) {
    const ep_shape* x = in[0];
    bool red[EP_MAX_RANK];
    if (!ep_reduce_axes(m, n, x->rank, red, why, why_len)) return false;
    bool keep = ep_attr_int(n, "keepdims", 1) != 0;
    out[0].rank = 0;
    for (int i = 0; i < x->rank; ++i) {
        if (!red[i]) out[0].dims[out[0].rank++] = x->dims[i];
        else if (keep) out[0].dims[out[0].rank++] = 1;
    }
    return true;
}

/* Input 0 first (every rule reads it), then the op's rule from its row (op_table.c). */
bool ep_shape_infer(const ep_model* m, const ep_node* n, const ep_shape* const* in,
                    ep_shape* out, char* why, size_t why_len) {
    if (!in[0]) return WHY("input 0 is absent");
    const ep_op_def* d = ep_op_find(n);
    if (!d) return WHY("no shape rule for %s", n->op);
    return d->shape(m, n, in, out, why, why_len);
}
