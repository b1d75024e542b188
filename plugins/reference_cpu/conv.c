/* conv_fprop: N-d grouped convolution (cross-correlation or true convolution) with
 * pre/post padding, stride and dilation.
 *
 *   y[n, k, o...] = sum_{c < C/G, p...} w[k, c, p'...] * x[n, g*C/G + c, o*s - pre + p*d ...]
 *
 * with g = k / (K/G), p' = p (cross-correlation) or ker-1-p (convolution), and x read as 0
 * in the padding.  The kernel gathers x, w into packed float64 arrays, then for every
 * output position copies the receptive field of one group into a column (im2col, one
 * position at a time) and takes a dot product with each filter of the group. */
#include <stdlib.h>
#include <string.h>

#include "reference_cpu.h"

static bool param_ok(int64_t v, int64_t lo) { return v >= lo && v <= REF_MAX_CONV_PARAM; }

bool ref_conv_check(const hipdnnSdkNode* node, const ref_view* x, const ref_view* w,
                    const ref_view* y, ref_conv_geometry* geo, char* why, size_t len) {
    ref_conv_geometry g;
    memset(&g, 0, sizeof(g));
    int32_t nd = x->ndim;
    if (nd < 3 || nd > 2 + HIPDNN_MAX_SPATIAL) {
        hipdnnSdkFormat(why, len, "x has rank %d; convolution needs rank 3 to %d", nd,
                        2 + HIPDNN_MAX_SPATIAL);
        return false;
    }
    if (w->ndim != nd || y->ndim != nd) {
        hipdnnSdkFormat(why, len, "ranks differ: x %d, w %d, y %d", nd, w->ndim, y->ndim);
        return false;
    }
    g.nsp = nd - 2;
    /* The node's parameters, read here only (the kernels use the geometry). */
    const hipdnnSdkAttrValue* a = node->attrs;
    int32_t nparam = a[HIPDNN_CONV_PRE_PADDING].count;
    for (int k = HIPDNN_CONV_PRE_PADDING; k <= HIPDNN_CONV_DILATION; ++k)
        if (a[k].count != 0 && a[k].count != g.nsp) nparam = a[k].count;
    if (nparam != 0 && nparam != g.nsp) {
        hipdnnSdkFormat(why, len, "%d spatial parameters for %d spatial dims", nparam, g.nsp);
        return false;
    }
    int64_t conv_mode = a[HIPDNN_CONV_MODE].i[0];
    if (conv_mode != HIPDNN_CROSS_CORRELATION && conv_mode != HIPDNN_CONVOLUTION) {
        hipdnnSdkFormat(why, len, "convolution mode %lld not supported", (long long)conv_mode);
        return false;
    }
    g.flip = conv_mode == HIPDNN_CONVOLUTION;
    g.n = x->dims[0];
    g.c = x->dims[1];
    g.k = w->dims[0];
    g.cg = w->dims[1];
    if (g.c % g.cg != 0) {
        hipdnnSdkFormat(why, len, "w C=%lld does not divide x C=%lld", (long long)g.cg,
                        (long long)g.c);
        return false;
    }
    g.groups = g.c / g.cg;
    if (g.k % g.groups != 0) {
        hipdnnSdkFormat(why, len, "w K=%lld is not a multiple of the %lld groups",
                        (long long)g.k, (long long)g.groups);
        return false;
    }
    g.kg = g.k / g.groups;
    if (y->dims[0] != g.n || y->dims[1] != g.k) {
        hipdnnSdkFormat(why, len, "y is [%lld, %lld, ...] but expected [N=%lld, K=%lld, ...]",
                        (long long)y->dims[0], (long long)y->dims[1], (long long)g.n,
                        (long long)g.k);
        return false;
    }
    for (int32_t i = 0; i < g.nsp; ++i) {
        /* Unset values hold their defaults (0, 0, 1, 1). */
        int64_t pre = a[HIPDNN_CONV_PRE_PADDING].i[i];
        int64_t post = a[HIPDNN_CONV_POST_PADDING].i[i];
        int64_t s = a[HIPDNN_CONV_STRIDE].i[i];
        int64_t d = a[HIPDNN_CONV_DILATION].i[i];
        if (!param_ok(pre, 0) || !param_ok(post, 0) || !param_ok(s, 1) || !param_ok(d, 1)) {
            hipdnnSdkFormat(why, len,
                            "spatial dim %d: padding %lld/%lld, stride %lld, dilation %lld "
                            "out of range",
                            i, (long long)pre, (long long)post, (long long)s, (long long)d);
            return false;
        }
        g.in[i] = x->dims[2 + i];
        g.ker[i] = w->dims[2 + i];
        g.pre[i] = pre;
        g.stride[i] = s;
        g.dil[i] = d;
        /* Dims are at most 2^48 and parameters at most 2^30: these products fit. */
        int64_t extent = (g.ker[i] - 1) * d + 1;
        int64_t padded = g.in[i] + pre + post;
        if (extent > padded) {
            hipdnnSdkFormat(why, len,
                            "spatial dim %d: dilated kernel %lld exceeds padded input %lld", i,
                            (long long)extent, (long long)padded);
            return false;
        }
        g.out[i] = (padded - extent) / s + 1;
        if (y->dims[2 + i] != g.out[i]) {
            hipdnnSdkFormat(why, len, "spatial dim %d: y has %lld but the convolution gives %lld",
                            i, (long long)y->dims[2 + i], (long long)g.out[i]);
            return false;
        }
    }
    if (geo) *geo = g;
    return true;
}

/* Four accumulators break the add dependency chain; the order is fixed, so results are
 * still bitwise reproducible. */
static double dot(const double* a, const double* b, int64_t n) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += a[i] * b[i];
        s1 += a[i + 1] * b[i + 1];
        s2 += a[i + 2] * b[i + 2];
        s3 += a[i + 3] * b[i + 3];
    }
    for (; i < n; ++i) s0 += a[i] * b[i];
    return (s0 + s1) + (s2 + s3);
}

/* Flat offsets (within one x channel) of every kernel tap for output position `opos`, or
 * -1 where the tap falls in the padding. */
static void tap_offsets(const ref_conv_geometry* g, const int64_t* opos, int64_t taps,
                        const int64_t* in_stride, int64_t* offs) {
    int64_t kpos[HIPDNN_MAX_SPATIAL] = {0};
    for (int64_t t = 0; t < taps; ++t) {
        int64_t off = 0;
        for (int32_t i = 0; i < g->nsp && off >= 0; ++i) {
            int64_t kp = g->flip ? g->ker[i] - 1 - kpos[i] : kpos[i];
            int64_t ip = opos[i] * g->stride[i] - g->pre[i] + kp * g->dil[i];
            off = (ip < 0 || ip >= g->in[i]) ? -1 : off + ip * in_stride[i];
        }
        offs[t] = off;
        for (int32_t i = g->nsp - 1; i >= 0; --i) {
            if (++kpos[i] < g->ker[i]) break;
            kpos[i] = 0;
        }
    }
}

hipdnnPluginStatus_t ref_conv_fprop(const hipdnnSdkNode* node, const ref_view* x,
                                    const ref_view* w, const ref_view* y) {
    ref_conv_geometry g;
    char why[REF_MSG_LEN];
    if (!ref_conv_check(node, x, w, y, &g, why, sizeof(why))) {
        ref_set_error(REF_ENGINE_NAME ": node '%s' (conv_fprop): %s", node->name, why);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    int64_t in_size = 1, taps = 1, out_size = 1;
    int64_t in_stride[HIPDNN_MAX_SPATIAL];
    for (int32_t i = g.nsp - 1; i >= 0; --i) {
        in_stride[i] = in_size;
        in_size *= g.in[i];
        taps *= g.ker[i];
        out_size *= g.out[i];
    }
    int64_t field = g.cg * taps; /* one filter's length = one column's length */

    hipdnnPluginStatus_t st = HIPDNN_PLUGIN_STATUS_ALLOC_FAILED;
    double* xs = ref_alloc_doubles(g.n * g.c * in_size, node);
    double* ws = ref_alloc_doubles(g.k * field, node);
    double* ys = ref_alloc_doubles(g.n * g.k * out_size, node);
    double* col = ref_alloc_doubles(field, node);
    int64_t* offs = malloc((size_t)taps * sizeof(int64_t));
    if (!xs || !ws || !ys || !col) goto done;
    if (!offs || ref_gather(x, xs) != 0 || ref_gather(w, ws) != 0) goto oom;

    int64_t opos[HIPDNN_MAX_SPATIAL] = {0};
    for (int64_t o = 0; o < out_size; ++o) {
        tap_offsets(&g, opos, taps, in_stride, offs);
        for (int64_t n = 0; n < g.n; ++n) {
            for (int64_t grp = 0; grp < g.groups; ++grp) {
                const double* xg = xs + (n * g.c + grp * g.cg) * in_size;
                for (int64_t c = 0; c < g.cg; ++c) {
                    const double* xc = xg + c * in_size;
                    double* cc = col + c * taps;
                    for (int64_t t = 0; t < taps; ++t) cc[t] = offs[t] < 0 ? 0.0 : xc[offs[t]];
                }
                for (int64_t kk = grp * g.kg; kk < (grp + 1) * g.kg; ++kk)
                    ys[(n * g.k + kk) * out_size + o] = dot(ws + kk * field, col, field);
            }
        }
        ref_next_index(g.nsp, g.out, opos);
    }
    if (ref_scatter(ys, y) != 0) goto oom;
    st = HIPDNN_PLUGIN_STATUS_SUCCESS;
    goto done;
oom:
    ref_set_error(REF_ENGINE_NAME ": node '%s' (conv_fprop): out of memory for scratch rows",
                  node->name);
done:
    free(offs);
    free(col);
    free(ys);
    free(ws);
    free(xs);
    return st;
}
