/* conv_fprop: N-d grouped convolution (cross-correlation or true convolution) with
 * pre/post padding, stride and dilation.
 *
 *   y[n, k, o...] = sum_{c < C/G, p...} w[k, c, p'...] * x[n, g*C/G + c, o*s - pre + p*d ...]
 *
 * with g = k / (K/G), p' = p (cross-correlation) or ker-1-p (convolution), and x read as 0
 * in the padding.
 *
 * Each group's filters are packed into A panels (float64).  The work items, (n, group,
 * block of output positions), run over the cores: each copies the receptive fields of
 * its positions from x, through x's strides and dtype, into B panels (im2col, field x
 * block), multiplies them with the group's filters (ref_gemm_packed) and stores the
 * block into y, rounded.  Only the geometry (ref_conv_check) is read from the node.
 * Scratch, in doubles (each term rounded up to 8, plus 8, see scratch.c):
 *
 *   K*field + G*ceil(K/G / mr)*mr*field + T * (field + K/G) * P
 *
 * with field = C/G * prod(ker), mr x nr the tile of ref_gemm_kernel_get(), P positions
 * per item = min(ceil(prod(out) / nr) * nr, max(nr, floor(32768 / field / nr) * nr)),
 * T = min(N*G*ceil(prod(out) / P), ref_threads_for(N*K*prod(out)*field multiply-adds)).
 * (ref_gather and the panel packing copy through a block buffer on the stack.) */
#include <string.h>

#include "reference_cpu.h"

static bool param_ok(int64_t v, int64_t lo) { return v >= lo && v <= REF_MAX_CONV_PARAM; }

/* The node's parameters, read here only (the kernels use the geometry): one value per
 * spatial dim in each list that is set, and a supported mode. */
static bool conv_params(const hipdnnSdkAttrValue* a, ref_conv_geometry* g, char* why,
                        size_t len) {
    int32_t nparam = a[HIPDNN_CONV_PRE_PADDING].count;
    for (int k = HIPDNN_CONV_PRE_PADDING; k <= HIPDNN_CONV_DILATION; ++k)
        if (a[k].count != 0 && a[k].count != g->nsp) nparam = a[k].count;
    if (nparam != 0 && nparam != g->nsp) {
        hipdnnSdkFormat(why, len, "%d spatial parameters for %d spatial dims", nparam, g->nsp);
        return false;
    }
    int64_t conv_mode = a[HIPDNN_CONV_MODE].i[0];
    if (conv_mode != HIPDNN_CROSS_CORRELATION && conv_mode != HIPDNN_CONVOLUTION) {
        hipdnnSdkFormat(why, len, "convolution mode %lld not supported", (long long)conv_mode);
        return false;
    }
    g->flip = conv_mode == HIPDNN_CONVOLUTION;
    return true;
}

/* N, C, K and the groups: w's C divides x's, K is a multiple of the groups, y is
 * [N, K, ...]. */
static bool conv_channels(const ref_view* x, const ref_view* w, const ref_view* y,
                          ref_conv_geometry* g, char* why, size_t len) {
    g->n = x->dims[0];
    g->c = x->dims[1];
    g->k = w->dims[0];
    g->cg = w->dims[1];
    if (g->c % g->cg != 0) {
        hipdnnSdkFormat(why, len, "w C=%lld does not divide x C=%lld", (long long)g->cg,
                        (long long)g->c);
        return false;
    }
    g->groups = g->c / g->cg;
    if (g->k % g->groups != 0) {
        hipdnnSdkFormat(why, len, "w K=%lld is not a multiple of the %lld groups",
                        (long long)g->k, (long long)g->groups);
        return false;
    }
    g->kg = g->k / g->groups;
    if (y->dims[0] != g->n || y->dims[1] != g->k) {
        hipdnnSdkFormat(why, len, "y is [%lld, %lld, ...] but expected [N=%lld, K=%lld, ...]",
                        (long long)y->dims[0], (long long)y->dims[1], (long long)g->n,
                        (long long)g->k);
        return false;
    }
    return true;
}

/* Spatial dim i: parameters in range, the dilated kernel inside the padded input, and y's
 * size the convolution's. */
static bool conv_spatial_dim(const hipdnnSdkAttrValue* a, int32_t i, const ref_view* x,
                             const ref_view* w, const ref_view* y, ref_conv_geometry* g,
                             char* why, size_t len) {
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
    g->in[i] = x->dims[2 + i];
    g->ker[i] = w->dims[2 + i];
    g->pre[i] = pre;
    g->stride[i] = s;
    g->dil[i] = d;
    /* Dims are at most 2^48 and parameters at most 2^30: these products fit. */
    int64_t extent = (g->ker[i] - 1) * d + 1;
    int64_t padded = g->in[i] + pre + post;
    if (extent > padded) {
        hipdnnSdkFormat(why, len,
                        "spatial dim %d: dilated kernel %lld exceeds padded input %lld", i,
                        (long long)extent, (long long)padded);
        return false;
    }
    g->out[i] = (padded - extent) / s + 1;
    if (y->dims[2 + i] != g->out[i]) {
        hipdnnSdkFormat(why, len, "spatial dim %d: y has %lld but the convolution gives %lld",
                        i, (long long)y->dims[2 + i], (long long)g->out[i]);
        return false;
    }
    return true;
}

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
    if (!conv_params(node->attrs, &g, why, len) || !conv_channels(x, w, y, &g, why, len))
        return false;
    for (int32_t i = 0; i < g.nsp; ++i)
        if (!conv_spatial_dim(node->attrs, i, x, w, y, &g, why, len)) return false;
    if (geo) *geo = g;
    return true;
}

/* Sizes the kernels derive from the geometry. */
typedef struct {
    const ref_gemm_kernel* kr;
    int64_t taps, out_size, field;
    int64_t block, blocks; /* output positions per item, items per (n, group) */
    int64_t w_panels;      /* doubles of one group's packed filters */
    int64_t items;
    int threads; /* worth starting for this size (ref_threads_for); workers <= threads */
    int64_t workers;
} conv_plan;

/* Positions per item: a multiple of nr whose im2col block (field x P) stays near 256 KiB,
 * so it is still in L2 when the product reads it. */
static int64_t conv_block(int64_t field, int64_t out_size, int64_t nr) {
    int64_t p = 32768 / field / nr * nr;
    int64_t all = (out_size + nr - 1) / nr * nr;
    if (p < nr) p = nr;
    return p < all ? p : all;
}

static void conv_layout(const ref_conv_geometry* g, conv_plan* cp) {
    memset(cp, 0, sizeof(*cp));
    cp->kr = ref_gemm_kernel_get();
    cp->taps = cp->out_size = 1;
    for (int32_t i = 0; i < g->nsp; ++i) {
        cp->taps *= g->ker[i];
        cp->out_size *= g->out[i];
    }
    cp->field = g->cg * cp->taps;
    cp->block = conv_block(cp->field, cp->out_size, cp->kr->nr);
    cp->blocks = (cp->out_size + cp->block - 1) / cp->block;
    cp->w_panels = ref_gemm_panel_doubles(cp->kr, g->kg, cp->field, false);
    cp->items = g->n * g->groups * cp->blocks;
    double macs = (double)g->n * (double)g->k * (double)cp->out_size * (double)cp->field;
    cp->threads = ref_threads_for(macs, REF_MIN_MACS_PER_THREAD);
    cp->workers = cp->threads < cp->items ? cp->threads : cp->items;
}

/* Per worker: the im2col block, then the output block. */
static int64_t worker_doubles(const ref_conv_geometry* g, const conv_plan* cp) {
    return (cp->field + g->kg) * cp->block;
}

int64_t ref_conv_scratch_doubles(const ref_conv_geometry* g) {
    conv_plan cp;
    conv_layout(g, &cp);
    return ref_scratch_piece(g->k * cp.field) + ref_scratch_piece(g->groups * cp.w_panels) +
           ref_scratch_piece(cp.workers * worker_doubles(g, &cp));
}

typedef struct {
    const ref_conv_geometry* g;
    const conv_plan* cp;
    const ref_view *x, *y;
    const double* wp;
    double* work;
} conv_job;

/* Fills block columns j0 .. j0+len of B row r, splitting at panel boundaries: value q is
 * x element idx + q*s for q in [lo, hi), and 0 (padding) elsewhere. */
static void put_run(const ref_view* x, double* bp, int64_t nr, int64_t field, int64_t r,
                    int64_t j0, int64_t len, int64_t idx, int64_t s, int64_t lo, int64_t hi) {
    for (int64_t q = 0; q < len;) {
        int64_t j = j0 + q, jj = j % nr;
        int64_t cnt = nr - jj < len - q ? nr - jj : len - q;
        double* dst = bp + (j / nr) * field * nr + r * nr + jj;
        int64_t a = lo - q, b = hi - q;
        a = a < 0 ? 0 : (a > cnt ? cnt : a);
        b = b < a ? a : (b > cnt ? cnt : b);
        for (int64_t e = 0; e < a; ++e) dst[e] = 0.0;
        if (b > a) ref_load_row(x->data, x->dtype, idx + (q + a) * s, s, b - a, dst + a);
        for (int64_t e = b; e < cnt; ++e) dst[e] = 0.0;
        q += cnt;
    }
}

/* Smallest o >= 0 with o*s + off >= bound (s >= 1). */
static int64_t first_at_least(int64_t bound, int64_t off, int64_t s) {
    int64_t need = bound - off;
    return need <= 0 ? 0 : (need + s - 1) / s;
}

static void unravel(const ref_conv_geometry* g, int64_t flat, int64_t* o) {
    for (int32_t i = g->nsp - 1; i >= 0; --i) {
        o[i] = flat % g->out[i];
        flat /= g->out[i];
    }
}

/* Moves a multi-index over the output positions `len` steps along the last dim, which
 * must not pass its end. */
static void advance(const ref_conv_geometry* g, int64_t* o, int64_t len) {
    int32_t last = g->nsp - 1;
    o[last] += len;
    for (int32_t i = last; i > 0 && o[i] == g->out[i]; --i) {
        o[i] = 0;
        ++o[i - 1];
    }
}

/* B panels (field x np, nr columns per panel, zero past np) holding the receptive fields,
 * in image n and channels c0.., of output positions [pos0, pos0 + np). */
static void im2col(const conv_job* jb, int64_t n, int64_t c0, int64_t pos0, int64_t np,
                   double* bp) {
    const ref_conv_geometry* g = jb->g;
    const conv_plan* cp = jb->cp;
    const int64_t* xst = jb->x->strides;
    int64_t nr = cp->kr->nr, field = cp->field;
    int32_t last = g->nsp - 1;
    int64_t npad = (np + nr - 1) / nr * nr;
    if (npad > np) memset(bp + (npad / nr - 1) * field * nr, 0, (size_t)(field * nr) * sizeof(double));

    int64_t o0[HIPDNN_MAX_SPATIAL];
    unravel(g, pos0, o0);
    int64_t kpos[HIPDNN_MAX_SPATIAL] = {0};
    for (int64_t t = 0; t < cp->taps; ++t) {
        int64_t off[HIPDNN_MAX_SPATIAL]; /* input index = o * stride + off, per dim */
        for (int32_t i = 0; i <= last; ++i) {
            int64_t kp = g->flip ? g->ker[i] - 1 - kpos[i] : kpos[i];
            off[i] = kp * g->dil[i] - g->pre[i];
        }
        /* Outputs whose input along the last dim is inside: lo <= o < hi. */
        int64_t lo = first_at_least(0, off[last], g->stride[last]);
        int64_t hi = first_at_least(g->in[last], off[last], g->stride[last]);
        int64_t step = g->stride[last] * xst[2 + last]; /* x elements per output step */
        for (int64_t c = 0; c < g->cg; ++c) {
            int64_t chan = n * xst[0] + (c0 + c) * xst[1];
            int64_t r = c * cp->taps + t;
            int64_t o[HIPDNN_MAX_SPATIAL];
            memcpy(o, o0, sizeof(int64_t) * (size_t)g->nsp);
            for (int64_t j = 0; j < np;) {
                /* A run: consecutive positions along the last dim. */
                int64_t len = g->out[last] - o[last];
                if (len > np - j) len = np - j;
                int64_t idx = chan;
                bool inside = true;
                for (int32_t i = 0; i < last; ++i) {
                    int64_t ip = o[i] * g->stride[i] + off[i];
                    inside = inside && ip >= 0 && ip < g->in[i];
                    idx += ip * xst[2 + i];
                }
                idx += (o[last] * g->stride[last] + off[last]) * xst[2 + last];
                int64_t q_lo = inside ? lo - o[last] : 0, q_hi = inside ? hi - o[last] : 0;
                put_run(jb->x, bp, nr, field, r, j, len, idx, step, q_lo, q_hi);
                j += len;
                advance(g, o, len);
            }
        }
        ref_next_index(g->nsp, g->ker, kpos);
    }
}

/* Stores rows k0.. (kg of them, row stride ld) of the output block of positions
 * [pos0, pos0 + np) into y, run by run along the last dim. */
static void store_block(const conv_job* jb, int64_t n, int64_t k0, int64_t pos0, int64_t np,
                        const double* yb, int64_t ld) {
    const ref_conv_geometry* g = jb->g;
    const ref_view* y = jb->y;
    int32_t last = g->nsp - 1;
    int64_t o[HIPDNN_MAX_SPATIAL];
    unravel(g, pos0, o);
    for (int64_t j = 0; j < np;) {
        int64_t len = g->out[last] - o[last];
        if (len > np - j) len = np - j;
        int64_t off = n * y->strides[0] + k0 * y->strides[1];
        for (int32_t i = 0; i <= last; ++i) off += o[i] * y->strides[2 + i];
        for (int64_t kk = 0; kk < g->kg; ++kk)
            ref_store_row(y->data, y->dtype, off + kk * y->strides[1], y->strides[2 + last], len,
                          yb + kk * ld + j);
        j += len;
        advance(g, o, len);
    }
}

static int conv_items(void* p, int64_t begin, int64_t end, int worker) {
    const conv_job* jb = p;
    const ref_conv_geometry* g = jb->g;
    const conv_plan* cp = jb->cp;
    double* cols = jb->work + worker * worker_doubles(g, cp);
    double* yb = cols + cp->field * cp->block;
    for (int64_t it = begin; it < end; ++it) {
        int64_t blk = it % cp->blocks, rest = it / cp->blocks;
        int64_t grp = rest % g->groups, n = rest / g->groups;
        int64_t pos0 = blk * cp->block;
        int64_t np = cp->out_size - pos0 < cp->block ? cp->out_size - pos0 : cp->block;
        im2col(jb, n, grp * g->cg, pos0, np, cols);
        ref_gemm_packed(cp->kr, g->kg, np, cp->field, jb->wp + grp * cp->w_panels, cols, yb, np);
        store_block(jb, n, grp * g->kg, pos0, np, yb, np);
    }
    return 0;
}

hipdnnPluginStatus_t ref_conv_fprop(const hipdnnSdkNode* node, const ref_view* x,
                                    const ref_view* w, const ref_view* y,
                                    const ref_region* scratch) {
    ref_conv_geometry g;
    char why[REF_MSG_LEN];
    if (!ref_conv_check(node, x, w, y, &g, why, sizeof(why))) {
        ref_set_error(REF_ENGINE_NAME ": node '%s' (conv_fprop): %s", node->name, why);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    conv_plan cp;
    conv_layout(&g, &cp);

    ref_scratch s;
    if (!ref_scratch_open(&s, ref_conv_scratch_doubles(&g), scratch, node))
        return HIPDNN_PLUGIN_STATUS_ALLOC_FAILED;
    double* ws = ref_scratch_take(&s, g.k * cp.field);
    double* wp = ref_scratch_take(&s, g.groups * cp.w_panels);
    double* work = ref_scratch_take(&s, cp.workers * worker_doubles(&g, &cp));
    conv_job jb = {&g, &cp, x, y, wp, work};

    ref_gather(w, ws);
    for (int64_t grp = 0; grp < g.groups; ++grp) {
        /* The group's filters as a [K/G, field] matrix of the gathered weights. */
        ref_view v;
        int64_t dims[2] = {g.kg, cp.field};
        ref_view_packed_double(ws + grp * g.kg * cp.field, 2, dims, &v);
        ref_pack_panels(&v, cp.kr->mr, wp + grp * cp.w_panels);
    }
    (void)ref_parallel_for(cp.items, 1, cp.threads, conv_items, &jb); /* items cannot fail */
    ref_scratch_close(&s);
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}
