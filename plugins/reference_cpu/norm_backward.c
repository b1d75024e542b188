/* norm_backward: the gradients of norm_forward's y = xhat * g + bias, where
 * xhat = (x - mean) * inv_variance (RMS: x * inv_variance) over the normalized axes
 * (hipdnnSdkNormAxes, R values per statistic) and g = scale (scale + 1 with
 * zero_centered_gamma).  With the forward's saved statistics and dxhat = dy * g:
 *
 *   dx     = inv_variance * (dxhat - mean_R(dxhat) - xhat * mean_R(dxhat * xhat))
 *            (RMS: without the mean_R(dxhat) term, since no mean was taken)
 *   dscale = sum of dy * xhat    over the dims scale broadcasts on (1 in scale, not in x)
 *   dbias  = sum of dy           over the same dims
 *
 * The statistics are trusted as given (they are the forward's, as in cuDNN).  Everything
 * is float64: xhat and dxhat are packed float64 arrays of x's shape in the scratch, the
 * sums go through reduce.c, and each output is rounded once when stored. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "reference_cpu.h"

static bool fail(char* why, size_t len, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool fail(char* why, size_t len, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return false;
}

static bool has_dims(const ref_view* v, int32_t ndim, const int64_t* dims) {
    bool same = v->ndim == ndim;
    for (int32_t i = 0; same && i < ndim; ++i) same = v->dims[i] == dims[i];
    return same;
}

/* The normalized axes (statistics have 1 there) and the axes dscale and dbias sum over
 * (scale has 1 there), from the dims alone. */
static void axes_of(const hipdnnSdkNode* node, const ref_view* x, const ref_view* scale,
                    bool* norm, bool* param) {
    hipdnnSdkTensor tx, ts;
    memset(&tx, 0, sizeof(tx));
    memset(&ts, 0, sizeof(ts));
    tx.ndim = x->ndim;
    ts.ndim = scale->ndim;
    memcpy(tx.dims, x->dims, sizeof(tx.dims));
    memcpy(ts.dims, scale->dims, sizeof(ts.dims));
    hipdnnSdkNormAxes(node, &tx, &ts, norm);
    for (int32_t i = 0; i < x->ndim; ++i) param[i] = scale->dims[i] == 1;
}

bool ref_norm_backward_check(const hipdnnSdkNode* node, const ref_view* const* in,
                             const ref_view* const* out, char* why, size_t len) {
    int64_t mode = node->attrs[HIPDNN_NBWD_MODE].i[0];
    if (node->attrs[HIPDNN_NBWD_MODE].count != 1 || !hipdnnSdkNormModeName(mode))
        return fail(why, len, "norm mode %lld not supported", (long long)mode);
    if (mode == HIPDNN_GROUP_NORM) return fail(why, len, "group normalization not supported");
    static const char* const names[5] = {"x", "dy", "scale", "mean", "inv_variance"};
    bool rms = mode == HIPDNN_RMS_NORM;
    for (int p = 0; p < 5; ++p) {
        if (p == HIPDNN_NBWD_MEAN) {
            if (rms && in[p]) return fail(why, len, "input mean is set but rmsnorm has none");
            if (rms) continue;
        }
        if (!in[p]) return fail(why, len, "input %s not set", names[p]);
    }
    if (!out[HIPDNN_NBWD_DX]) return fail(why, len, "output dx not set");
    const ref_view *x = in[HIPDNN_NBWD_X], *scale = in[HIPDNN_NBWD_SCALE];
    if (x->ndim < 2) return fail(why, len, "x has rank %d; it needs at least 2", x->ndim);
    if (!has_dims(in[HIPDNN_NBWD_DY], x->ndim, x->dims))
        return fail(why, len, "dy dims differ from x dims");
    if (!has_dims(out[HIPDNN_NBWD_DX], x->ndim, x->dims))
        return fail(why, len, "dx dims differ from x dims");
    ref_view bv;
    if (scale->ndim != x->ndim || !ref_broadcast_view(scale, x->ndim, x->dims, &bv))
        return fail(why, len, "scale (rank %d) does not broadcast to x (rank %d) dim by dim",
                    scale->ndim, x->ndim);
    bool norm[HIPDNN_MAX_DIMS], param[HIPDNN_MAX_DIMS];
    axes_of(node, x, scale, norm, param);
    int64_t sd[HIPDNN_MAX_DIMS];
    for (int32_t i = 0; i < x->ndim; ++i) sd[i] = norm[i] ? 1 : x->dims[i];
    for (int p = HIPDNN_NBWD_MEAN; p <= HIPDNN_NBWD_INV_VARIANCE; ++p)
        if (in[p] && !has_dims(in[p], x->ndim, sd))
            return fail(why, len, "%s dims are not x's with 1 on each normalized axis",
                        names[p]);
    for (int p = HIPDNN_NBWD_DSCALE; p <= HIPDNN_NBWD_DBIAS; ++p)
        if (out[p] && !has_dims(out[p], scale->ndim, scale->dims))
            return fail(why, len, "%s dims differ from scale dims",
                        p == HIPDNN_NBWD_DSCALE ? "dscale" : "dbias");
    return true;
}

/* ---- block kernels ---------------------------------------------------------------------- */

typedef struct {
    bool rms, zero_centered;
    double inv_count; /* 1 / R */
} nb_ctx;

/* in: x, mean (not for RMS), inv_variance -> xhat */
static void xhat_block(const double* const* in, double* out, int64_t n, const void* ctx,
                       double* tmp) {
    (void)tmp;
    const nb_ctx* c = ctx;
    const double* x = in[0];
    const double* inv = in[c->rms ? 1 : 2];
    for (int64_t i = 0; i < n; ++i) out[i] = (c->rms ? x[i] : x[i] - in[1][i]) * inv[i];
}

/* in: dy, scale -> dxhat = dy * g */
static void dxhat_block(const double* const* in, double* out, int64_t n, const void* ctx,
                        double* tmp) {
    (void)tmp;
    const nb_ctx* c = ctx;
    double one = c->zero_centered ? 1.0 : 0.0;
    for (int64_t i = 0; i < n; ++i) out[i] = in[0][i] * (in[1][i] + one);
}

static void mul_block(const double* const* in, double* out, int64_t n, const void* ctx,
                      double* tmp) {
    (void)ctx;
    (void)tmp;
    for (int64_t i = 0; i < n; ++i) out[i] = in[0][i] * in[1][i];
}

/* in: dxhat, xhat, sum(dxhat), sum(dxhat * xhat), inv_variance -> dx */
static void dx_block(const double* const* in, double* out, int64_t n, const void* ctx,
                     double* tmp) {
    (void)tmp;
    const nb_ctx* c = ctx;
    const double *g = in[0], *xh = in[1], *s1 = in[2], *s2 = in[3], *inv = in[4];
    for (int64_t i = 0; i < n; ++i) {
        double v = g[i] - xh[i] * (s2[i] * c->inv_count);
        if (!c->rms) v -= s1[i] * c->inv_count;
        out[i] = inv[i] * v;
    }
}

static void copy_block(const double* const* in, double* out, int64_t n, const void* ctx,
                       double* tmp) {
    (void)ctx;
    (void)tmp;
    memcpy(out, in[0], (size_t)n * sizeof(double));
}

/* ---- running it ------------------------------------------------------------------------- */

/* Every walk and reduction the kernel makes, planned from the shapes alone. */
typedef struct {
    int32_t ndim;
    int64_t elements, groups, params;
    int64_t sd[HIPDNN_MAX_DIMS]; /* statistics' dims */
    ref_reduce_plan norm;        /* over a packed float64 array of x's dims */
    ref_reduce_plan param;       /* the same, over the dims scale broadcasts on */
    ref_reduce_plan bias;        /* dy itself over those dims */
} nb_plan;

static void plan_init(nb_plan* p, const hipdnnSdkNode* node, const ref_view* const* in) {
    const ref_view *x = in[HIPDNN_NBWD_X], *scale = in[HIPDNN_NBWD_SCALE];
    bool norm[HIPDNN_MAX_DIMS], param[HIPDNN_MAX_DIMS];
    axes_of(node, x, scale, norm, param);
    ref_view packed;
    ref_view_packed_double(NULL, x->ndim, x->dims, &packed);
    ref_reduce_plan_init(&p->norm, &packed, norm);
    ref_reduce_plan_init(&p->param, &packed, param);
    ref_reduce_plan_init(&p->bias, in[HIPDNN_NBWD_DY], param);
    p->ndim = x->ndim;
    p->elements = ref_element_count(x->ndim, x->dims);
    p->groups = p->norm.groups;
    p->params = p->param.groups;
    for (int32_t i = 0; i < x->ndim; ++i) p->sd[i] = norm[i] ? 1 : x->dims[i];
}

static int64_t max3(int64_t a, int64_t b, int64_t c) {
    int64_t m = a > b ? a : b;
    return m > c ? m : c;
}

static int64_t plan_scratch(const nb_plan* p) {
    int64_t reduce = max3(ref_reduce_scratch_doubles(&p->norm),
                          ref_reduce_scratch_doubles(&p->param),
                          ref_reduce_scratch_doubles(&p->bias));
    return 3 * ref_scratch_piece(p->elements) + 2 * ref_scratch_piece(p->groups) +
           ref_scratch_piece(p->params) + ref_scratch_piece(reduce) +
           ref_scratch_piece(ref_map_scratch_doubles(p->elements, 5, 0));
}

int64_t ref_norm_backward_scratch_doubles(const hipdnnSdkNode* node, const ref_view* const* in) {
    nb_plan p;
    plan_init(&p, node, in);
    return plan_scratch(&p);
}

/* dst (scale's dims) = the packed float64 values acc, rounded to dst's type. */
static void store_packed(const ref_view* dst, double* acc, double* blocks) {
    ref_view src;
    ref_view_packed_double(acc, dst->ndim, dst->dims, &src);
    ref_map_blocks(dst, 1, &src, copy_block, NULL, 0, blocks);
}

hipdnnPluginStatus_t ref_norm_backward(const hipdnnSdkNode* node, const ref_view* const* in,
                                       const ref_view* const* out, const ref_region* scratch) {
    char why[REF_MSG_LEN];
    int64_t mode = node->attrs[HIPDNN_NBWD_MODE].i[0];
    if (!ref_norm_backward_check(node, in, out, why, sizeof(why))) {
        const char* name = hipdnnSdkNormBackwardName(mode);
        ref_set_error(REF_ENGINE_NAME ": node '%s' (%s): %s", node->name,
                      name ? name : "norm_backward", why);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    nb_plan p;
    plan_init(&p, node, in);
    ref_scratch s;
    if (!ref_scratch_open(&s, plan_scratch(&p), scratch, node))
        return HIPDNN_PLUGIN_STATUS_ALLOC_FAILED;
    double* xhat = ref_scratch_take(&s, p.elements);
    double* dxhat = ref_scratch_take(&s, p.elements);
    double* prod = ref_scratch_take(&s, p.elements);
    double* s1 = ref_scratch_take(&s, p.groups);
    double* s2 = ref_scratch_take(&s, p.groups);
    double* pacc = ref_scratch_take(&s, p.params);
    int64_t reduce = max3(ref_reduce_scratch_doubles(&p.norm),
                          ref_reduce_scratch_doubles(&p.param),
                          ref_reduce_scratch_doubles(&p.bias));
    double* work = ref_scratch_take(&s, reduce);
    double* blocks = ref_scratch_take(&s, ref_map_scratch_doubles(p.elements, 5, 0));

    const ref_view* x = in[HIPDNN_NBWD_X];
    const int64_t* dims = x->dims;
    nb_ctx c = {mode == HIPDNN_RMS_NORM, node->attrs[HIPDNN_NBWD_ZERO_CENTERED_GAMMA].i[0] != 0,
                1.0 / (double)p.norm.count};
    ref_view xhat_v, dxhat_v, prod_v, s1_v, s2_v, b[5];
    ref_view_packed_double(xhat, p.ndim, dims, &xhat_v);
    ref_view_packed_double(dxhat, p.ndim, dims, &dxhat_v);
    ref_view_packed_double(prod, p.ndim, dims, &prod_v);
    ref_view_packed_double(s1, p.ndim, p.sd, &s1_v);
    ref_view_packed_double(s2, p.ndim, p.sd, &s2_v);

    /* xhat from x and the saved statistics */
    int nin = 0;
    b[nin++] = *x;
    if (!c.rms) ref_broadcast_view(in[HIPDNN_NBWD_MEAN], p.ndim, dims, &b[nin++]);
    ref_broadcast_view(in[HIPDNN_NBWD_INV_VARIANCE], p.ndim, dims, &b[nin++]);
    ref_map_blocks(&xhat_v, nin, b, xhat_block, &c, 0, blocks);
    /* dxhat = dy * g, and its two sums over the normalized axes */
    b[0] = *in[HIPDNN_NBWD_DY];
    ref_broadcast_view(in[HIPDNN_NBWD_SCALE], p.ndim, dims, &b[1]);
    ref_map_blocks(&dxhat_v, 2, b, dxhat_block, &c, 0, blocks);
    if (!c.rms) ref_reduce_run(&p.norm, &dxhat_v, REF_RED_SUM, NULL, s1, work);
    b[0] = dxhat_v;
    b[1] = xhat_v;
    ref_map_blocks(&prod_v, 2, b, mul_block, NULL, 0, blocks);
    ref_reduce_run(&p.norm, &prod_v, REF_RED_SUM, NULL, s2, work);
    /* dx */
    b[0] = dxhat_v;
    b[1] = xhat_v;
    ref_broadcast_view(&s1_v, p.ndim, dims, &b[2]);
    ref_broadcast_view(&s2_v, p.ndim, dims, &b[3]);
    ref_broadcast_view(in[HIPDNN_NBWD_INV_VARIANCE], p.ndim, dims, &b[4]);
    if (c.rms) b[2] = b[3]; /* unread */
    ref_map_blocks(out[HIPDNN_NBWD_DX], 5, b, dx_block, &c, 0, blocks);
    /* dscale = sum of dy * xhat, dbias = sum of dy, over the dims scale broadcasts on */
    if (out[HIPDNN_NBWD_DSCALE]) {
        b[0] = *in[HIPDNN_NBWD_DY];
        b[1] = xhat_v;
        ref_map_blocks(&prod_v, 2, b, mul_block, NULL, 0, blocks);
        ref_reduce_run(&p.param, &prod_v, REF_RED_SUM, NULL, pacc, work);
        store_packed(out[HIPDNN_NBWD_DSCALE], pacc, blocks);
    }
    if (out[HIPDNN_NBWD_DBIAS]) {
        ref_reduce_run(&p.bias, in[HIPDNN_NBWD_DY], REF_RED_SUM, NULL, pacc, work);
        store_packed(out[HIPDNN_NBWD_DBIAS], pacc, blocks);
    }
    ref_scratch_close(&s);
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}
