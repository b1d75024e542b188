/* Batchnorm training rewritten for the kernels the engine has (lower.h):
 *   - its running statistics: pointwise nodes after the norm (whose mean and inv_variance
 *     become outputs if they were not), next = running + momentum * (batch - running), the
 *     batch variance unbiased and recovered from inv_variance;
 *   - over few channels (FEW_ROWS), forward and backward: a plane ([n, c]) at a time where
 *     the spatial dims are innermost (the norm and norm-backward kernels over each plane,
 *     storing only statistics or sums, combined per channel, then one pointwise pass),
 *     else split reductions and pointwise stages;
 *   - genstats: a sum and a 2-norm (squared) per channel. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"

/* next_running = running + momentum * (stat - running) for the mean and the unbiased
 * variance (biased `var` times count / (count - 1)); `like` shapes the temporaries. */
static void running_updates(lowering* l, const hipdnnSdkNode* n, int64_t mean, int64_t var,
                            int64_t count, int64_t like) {
    const char* nm = n->name;
    const int64_t N = HIPDNN_NO_TENSOR, m = n->inputs[HIPDNN_NORM_EXP_AVG_FACTOR];
    int64_t uv = lw_pw(l, nm, "unbiased_variance", HIPDNN_POINTWISE_MUL, var,
                       lw_add_const(l, nm, "bessel", (double)count / (double)(count - 1)), N, like);
    const int64_t stat[2] = {mean, uv};
    const int64_t run[2] = {n->inputs[HIPDNN_NORM_IN_RUNNING_MEAN], n->inputs[HIPDNN_NORM_IN_RUNNING_VAR]};
    const int64_t out[2] = {n->outputs[HIPDNN_NORM_OUT_RUNNING_MEAN], n->outputs[HIPDNN_NORM_OUT_RUNNING_VAR]};
    static const char* const what[2][3] = {{"mean_step", "mean_step_scaled", "next_running_mean"},
                                            {"var_step", "var_step_scaled", "next_running_var"}};
    for (int k = 0; k < 2; ++k) {
        int64_t d = lw_pw(l, nm, what[k][0], HIPDNN_POINTWISE_SUB, stat[k], run[k], N, like);
        lw_pw(l, nm, what[k][2], HIPDNN_POINTWISE_ADD, run[k],
              lw_pw(l, nm, what[k][1], HIPDNN_POINTWISE_MUL, d, m, N, like), out[k], like);
    }
}

/* Batchnorm training with running statistics: the norm node itself (rowwise_norm.c
 * runs it), storing mean and inv_variance, then next = running + m * (stat - running). */
static bool lower_batchnorm_running(lowering* l, const hipdnnSdkNode* n) {
    hipdnnSdkNode norm = *n;
    const char* nm = n->name;
    const int64_t N = HIPDNN_NO_TENSOR;
    const hipdnnSdkTensor* tx = lw_tensor(l, n->inputs[HIPDNN_NORM_X]);
    const hipdnnSdkTensor* ts = lw_tensor(l, n->inputs[HIPDNN_NORM_SCALE]);
    if (!tx || !ts) return decline(l->why, l->len, "node '%s' (batchnorm): x or scale missing", nm);
    bool axes[HIPDNN_MAX_DIMS];
    hipdnnSdkNormAxes(n, tx, ts, axes);
    int64_t sd[HIPDNN_MAX_DIMS], count = 1;
    for (int i = 0; i < tx->ndim; ++i) {
        sd[i] = axes[i] ? 1 : tx->dims[i];
        count *= axes[i] ? tx->dims[i] : 1;
    }
    const int32_t nd = tx->ndim;
    char* name = strdup(nm);
    if (!name) return decline(l->why, l->len, "out of memory");
    norm.name = name;
    if (norm.outputs[HIPDNN_NORM_MEAN] == N)
        norm.outputs[HIPDNN_NORM_MEAN] = lw_add_tensor(l, nm, "mean", HIPDNN_DATA_FLOAT, nd, sd, NULL, true);
    if (norm.outputs[HIPDNN_NORM_INV_VARIANCE] == N)
        norm.outputs[HIPDNN_NORM_INV_VARIANCE] =
            lw_add_tensor(l, nm, "inv_variance", HIPDNN_DATA_FLOAT, nd, sd, NULL, true);
    const int64_t mean = norm.outputs[HIPDNN_NORM_MEAN], inv = norm.outputs[HIPDNN_NORM_INV_VARIANCE];
    for (int p = HIPDNN_NORM_EXP_AVG_FACTOR; p <= HIPDNN_NORM_IN_RUNNING_VAR; ++p)
        norm.inputs[p] = N;
    norm.outputs[HIPDNN_NORM_OUT_RUNNING_MEAN] = norm.outputs[HIPDNN_NORM_OUT_RUNNING_VAR] = N;
    if (!lw_push(l, &norm, NULL, NULL)) {
        free(name);
        return decline(l->why, l->len, "out of memory");
    }
    /* the biased variance is 1 / inv^2 - epsilon; unbiased times count / (count - 1) */
    const int64_t eps = n->inputs[HIPDNN_NORM_EPSILON];
    int64_t var = lw_pw(l, nm, "variance", HIPDNN_POINTWISE_SUB,
                        lw_pw(l, nm, "var_plus_eps", HIPDNN_POINTWISE_RECIPROCAL,
                              lw_pw(l, nm, "inv_sq", HIPDNN_POINTWISE_MUL, inv, inv, N, inv), N, N, inv),
                        eps, N, inv);
    running_updates(l, n, mean, var, count, inv);
    return !l->oom;
}

static int64_t rows_of(const hipdnnSdkTensor* x, const bool* axes) {
    int64_t rows = 1;
    for (int32_t i = 0; i < x->ndim; ++i) rows *= axes[i] ? 1 : x->dims[i];
    return rows;
}

/* Batchnorm training over few channels: mean = avg(x), var = avg((x - mean)^2) (two split
 * reductions; the squares pass through the workspace), inv_variance = rsqrt(var + eps),
 * y = (x - mean) * inv_variance * gamma + bias, and the running statistics from var. */
static bool lower_batchnorm_split(lowering* l, const hipdnnSdkNode* n, const bool* axes) {
    const char* nm = n->name;
    const int64_t N = HIPDNN_NO_TENSOR;
    const int64_t x = n->inputs[HIPDNN_NORM_X], scale = n->inputs[HIPDNN_NORM_SCALE];
    const int64_t bias = n->inputs[HIPDNN_NORM_BIAS], eps = n->inputs[HIPDNN_NORM_EPSILON];
    const hipdnnSdkTensor* tx = lw_tensor(l, x);
    const int32_t nd = tx->ndim;
    int64_t sd[HIPDNN_MAX_DIMS], count = 1;
    for (int32_t i = 0; i < nd; ++i) {
        sd[i] = axes[i] ? 1 : tx->dims[i];
        count *= axes[i] ? tx->dims[i] : 1;
    }
    int64_t mean = n->outputs[HIPDNN_NORM_MEAN];
    mean = lw_reduce(l, nm, "mean", HIPDNN_REDUCE_TENSOR_AVG, x, sd, mean);
    int64_t d = lw_pw(l, nm, "centered", HIPDNN_POINTWISE_SUB, x, mean, N, x);
    int64_t var = lw_reduce(l, nm, "variance", HIPDNN_REDUCE_TENSOR_AVG,
                            lw_pw(l, nm, "squares", HIPDNN_POINTWISE_MUL, d, d, N, x), sd, N);
    int64_t inv = lw_pw(l, nm, "inv_variance", HIPDNN_POINTWISE_RSQRT,
                        lw_pw(l, nm, "var_plus_eps", HIPDNN_POINTWISE_ADD, var, eps, N, var), N,
                        n->outputs[HIPDNN_NORM_INV_VARIANCE], var);
    int64_t gamma = scale;
    if (n->attrs[HIPDNN_NORM_ZERO_CENTERED_GAMMA].i[0])
        gamma = lw_pw(l, nm, "gamma", HIPDNN_POINTWISE_ADD, scale, lw_add_const(l, nm, "one", 1.0), N, scale);
    /* y recomputes x - mean in its own stage, so the centred values never reach memory */
    int64_t v = lw_pw(l, nm, "normalized", HIPDNN_POINTWISE_MUL,
                      lw_pw(l, nm, "centered_again", HIPDNN_POINTWISE_SUB, x, mean, N, x), inv, N, x);
    const int64_t y = n->outputs[HIPDNN_NORM_Y];
    if (bias != N) v = lw_pw(l, nm, "scaled", HIPDNN_POINTWISE_MUL, v, gamma, N, x);
    lw_pw(l, nm, bias != N ? "y" : "scaled", bias != N ? HIPDNN_POINTWISE_ADD : HIPDNN_POINTWISE_MUL, v,
          bias != N ? bias : gamma, y, x);
    if (n->outputs[HIPDNN_NORM_OUT_RUNNING_MEAN] != N) running_updates(l, n, mean, var, count, var);
    return !l->oom;
}

/* Whether a batchnorm's statistics can be taken a plane at a time: x is [N, C, spatial...]
 * with the spatial dims innermost and packed (a virtual x is packed), and planes long enough
 * that a row of the norm kernel is worth a launch's share of the GPU. */
#define PLANE_MIN 256
bool lower_planes_inner(const hipdnnSdkTensor* x) {
    if (x->ndim < 3) return false;
    int64_t st[HIPDNN_MAX_DIMS], at = 1;
    memcpy(st, x->strides, sizeof(st));
    if (x->is_virtual) hipdnnSdkPackedStrides(x->ndim, x->dims, st);
    for (int32_t i = x->ndim - 1; i >= 2; --i) {
        if (x->dims[i] > 1 && st[i] != at) return false;
        at *= x->dims[i];
    }
    return at >= PLANE_MIN && (x->dims[1] == 1 || st[1] >= at) && (x->dims[0] == 1 || st[0] >= at);
}

/* The shapes a plane-at-a-time rewrite of x [N, C, spatial...] makes: x's own (copied:
 * adding tensors may move x), [N, C, 1...] per plane, [1, C, 1...] per channel, and the
 * values one channel's statistics cover. */
typedef struct {
    int32_t nd;
    int64_t x[HIPDNN_MAX_DIMS], plane[HIPDNN_MAX_DIMS], channel[HIPDNN_MAX_DIMS];
    int64_t count;
} planes;

static void planes_of(const hipdnnSdkTensor* x, planes* p) {
    p->nd = x->ndim;
    p->count = 1;
    memcpy(p->x, x->dims, sizeof(p->x));
    for (int32_t i = 0; i < x->ndim; ++i) {
        p->plane[i] = i < 2 ? x->dims[i] : 1;
        p->channel[i] = i == 1 ? x->dims[i] : 1;
        p->count *= i == 1 ? 1 : x->dims[i];
    }
}

/* Batchnorm training over few channels, a plane (one n, one c) at a time: the norm kernel's
 * statistics of each plane in one pass over x (an instance norm whose y is not stored, with
 * epsilon 0 so that 1 / inv^2 is the plane's variance), combined exactly per channel
 * (equal counts: mean = avg(mean_p), var = avg(var_p + (mean_p - mean)^2)), then
 * y = x * a + b with a = inv_variance * gamma and b = bias - mean * a.  x is read twice and y
 * written once (the split reductions read x three times and moved its squares through the
 * workspace). */
static bool lower_batchnorm_planes(lowering* l, const hipdnnSdkNode* n) {
    const char* nm = n->name;
    const int64_t N = HIPDNN_NO_TENSOR;
    const int64_t x = n->inputs[HIPDNN_NORM_X], scale = n->inputs[HIPDNN_NORM_SCALE];
    const int64_t bias = n->inputs[HIPDNN_NORM_BIAS], eps = n->inputs[HIPDNN_NORM_EPSILON];
    planes pl;
    planes_of(lw_tensor(l, x), &pl);
    const int32_t nd = pl.nd;
    hipdnnSdkNode st = *n;
    st.attrs[HIPDNN_NORM_MODE].i[0] = HIPDNN_INSTANCE_NORM;
    for (int p = 0; p < HIPDNN_MAX_PORTS; ++p) st.inputs[p] = st.outputs[p] = N;
    st.inputs[HIPDNN_NORM_X] = x;
    st.inputs[HIPDNN_NORM_SCALE] = scale; /* not read: no y */
    st.inputs[HIPDNN_NORM_EPSILON] = lw_add_const(l, nm, "zero", 0.0);
    st.outputs[HIPDNN_NORM_Y] = lw_add_tensor(l, nm, "plane_y", HIPDNN_DATA_FLOAT, nd, pl.x, NULL, true);
    const int64_t mp = lw_add_tensor(l, nm, "plane_mean", HIPDNN_DATA_FLOAT, nd, pl.plane, NULL, true);
    const int64_t ip = lw_add_tensor(l, nm, "plane_inv", HIPDNN_DATA_FLOAT, nd, pl.plane, NULL, true);
    st.outputs[HIPDNN_NORM_MEAN] = mp;
    st.outputs[HIPDNN_NORM_INV_VARIANCE] = ip;
    if (!lw_push(l, &st, nm, "plane_statistics")) return false;
    const int64_t mean = lw_reduce(l, nm, "mean", HIPDNN_REDUCE_TENSOR_AVG, mp, pl.channel,
                                   n->outputs[HIPDNN_NORM_MEAN]);
    int64_t vp = lw_pw(l, nm, "plane_var", HIPDNN_POINTWISE_RECIPROCAL,
                       lw_pw(l, nm, "plane_inv_sq", HIPDNN_POINTWISE_MUL, ip, ip, N, mp), N, N, mp);
    int64_t dm = lw_pw(l, nm, "plane_shift", HIPDNN_POINTWISE_SUB, mp, mean, N, mp);
    int64_t m2 = lw_pw(l, nm, "plane_m2", HIPDNN_POINTWISE_ADD, vp,
                       lw_pw(l, nm, "plane_shift_sq", HIPDNN_POINTWISE_MUL, dm, dm, N, mp), N, mp);
    const int64_t var = lw_reduce(l, nm, "variance", HIPDNN_REDUCE_TENSOR_AVG, m2, pl.channel, N);
    const int64_t inv = lw_pw(l, nm, "inv_variance", HIPDNN_POINTWISE_RSQRT,
                              lw_pw(l, nm, "var_plus_eps", HIPDNN_POINTWISE_ADD, var, eps, N, var), N,
                              n->outputs[HIPDNN_NORM_INV_VARIANCE], var);
    int64_t gamma = scale;
    if (n->attrs[HIPDNN_NORM_ZERO_CENTERED_GAMMA].i[0])
        gamma = lw_pw(l, nm, "gamma", HIPDNN_POINTWISE_ADD, scale, lw_add_const(l, nm, "one", 1.0), N, var);
    const int64_t a = lw_pw(l, nm, "channel_scale", HIPDNN_POINTWISE_MUL, inv, gamma, N, var);
    const int64_t ma = lw_pw(l, nm, "mean_scaled", HIPDNN_POINTWISE_MUL, mean, a, N, var);
    const int64_t b = bias != N ? lw_pw(l, nm, "channel_shift", HIPDNN_POINTWISE_SUB, bias, ma, N, var)
                                : lw_pw(l, nm, "channel_shift", HIPDNN_POINTWISE_NEG, ma, N, N, var);
    lw_pw(l, nm, "y", HIPDNN_POINTWISE_ADD, lw_pw(l, nm, "x_scaled", HIPDNN_POINTWISE_MUL, x, a, N, x), b,
          n->outputs[HIPDNN_NORM_Y], x);
    if (n->outputs[HIPDNN_NORM_OUT_RUNNING_MEAN] != N) running_updates(l, n, mean, var, pl.count, var);
    return !l->oom;
}

/* Batchnorm backward over few channels, a plane at a time: the row kernel's norm backward
 * over each plane, given the channel's mean and inv_variance, stores the plane's sums of
 * dy * xhat and of dy and no dx; the sums per channel are dscale and dbias, and
 * dx = k * dy - k * avg(dy) - (x - mean) * k * inv_variance * avg(dy * xhat), k =
 * inv_variance * gamma, in one pass over x and dy. */
bool lower_batchnorm_backward_planes(lowering* l, const hipdnnSdkNode* n) {
    const char* nm = n->name;
    const int64_t N = HIPDNN_NO_TENSOR;
    const int64_t x = n->inputs[HIPDNN_NBWD_X], dy = n->inputs[HIPDNN_NBWD_DY];
    const int64_t scale = n->inputs[HIPDNN_NBWD_SCALE], mean = n->inputs[HIPDNN_NBWD_MEAN];
    const int64_t inv = n->inputs[HIPDNN_NBWD_INV_VARIANCE];
    planes pl;
    planes_of(lw_tensor(l, x), &pl);
    const int32_t nd = pl.nd;
    hipdnnSdkNode sums = *n;
    sums.attrs[HIPDNN_NBWD_MODE].i[0] = HIPDNN_INSTANCE_NORM;
    sums.attrs[HIPE_NBWD_SUMS].i[0] = HIPE_NBWD_ROW_SUMS;
    sums.attrs[HIPE_NBWD_SUMS].i[1] = 1;
    sums.attrs[HIPE_NBWD_SUMS].count = 2;
    const int64_t sdyx = lw_add_tensor(l, nm, "plane_sum_dy_xhat", HIPDNN_DATA_FLOAT, nd, pl.plane, NULL, true);
    const int64_t sdy = lw_add_tensor(l, nm, "plane_sum_dy", HIPDNN_DATA_FLOAT, nd, pl.plane, NULL, true);
    sums.outputs[HIPDNN_NBWD_DX] = lw_add_tensor(l, nm, "plane_dx", HIPDNN_DATA_FLOAT, nd, pl.x, NULL, true);
    sums.outputs[HIPDNN_NBWD_DSCALE] = sdyx;
    sums.outputs[HIPDNN_NBWD_DBIAS] = sdy;
    if (!lw_push(l, &sums, nm, "plane_sums")) return false;
    const int64_t s_dyx = lw_reduce(l, nm, "dscale", HIPDNN_REDUCE_TENSOR_ADD, sdyx, pl.channel,
                                    n->outputs[HIPDNN_NBWD_DSCALE]);
    const int64_t s_dy = lw_reduce(l, nm, "dbias", HIPDNN_REDUCE_TENSOR_ADD, sdy, pl.channel,
                                   n->outputs[HIPDNN_NBWD_DBIAS]);
    const int64_t per = lw_add_const(l, nm, "one_over_count", 1.0 / (double)pl.count);
    int64_t gamma = scale;
    if (n->attrs[HIPDNN_NBWD_ZERO_CENTERED_GAMMA].i[0])
        gamma = lw_pw(l, nm, "gamma", HIPDNN_POINTWISE_ADD, scale, lw_add_const(l, nm, "one", 1.0), N, s_dy);
    const int64_t k = lw_pw(l, nm, "gamma_inv", HIPDNN_POINTWISE_MUL, inv, gamma, N, s_dy);
    const int64_t a = lw_pw(l, nm, "k_avg_dy", HIPDNN_POINTWISE_MUL, k,
                            lw_pw(l, nm, "avg_dy", HIPDNN_POINTWISE_MUL, s_dy, per, N, s_dy), N, s_dy);
    const int64_t c = lw_pw(l, nm, "k_inv_avg_dy_xhat", HIPDNN_POINTWISE_MUL,
                            lw_pw(l, nm, "k_inv", HIPDNN_POINTWISE_MUL, k, inv, N, s_dy),
                            lw_pw(l, nm, "avg_dy_xhat", HIPDNN_POINTWISE_MUL, s_dyx, per, N, s_dy), N, s_dy);
    int64_t t = lw_pw(l, nm, "dy_scaled", HIPDNN_POINTWISE_MUL, dy, k, N, x);
    t = lw_pw(l, nm, "dy_minus_avg", HIPDNN_POINTWISE_SUB, t, a, N, x);
    const int64_t xc = lw_pw(l, nm, "centered", HIPDNN_POINTWISE_SUB, x, mean, N, x);
    lw_pw(l, nm, "dx", HIPDNN_POINTWISE_SUB, t, lw_pw(l, nm, "centered_scaled", HIPDNN_POINTWISE_MUL, xc, c, N, x),
          n->outputs[HIPDNN_NBWD_DX], x);
    return !l->oom;
}

/* A batchnorm in the training phase over fewer channels than FEW_ROWS. */
static bool few_channel_batchnorm(const hipdnnSdkGraph* g, const hipdnnSdkNode* n) {
    if (n->kind != HIPDNN_OP_NORM_FORWARD || n->attrs[HIPDNN_NORM_MODE].i[0] != HIPDNN_BATCH_NORM ||
        n->attrs[HIPDNN_NORM_PHASE].i[0] != HIPDNN_NORM_FWD_TRAINING)
        return false;
    const hipdnnSdkTensor* x = hipdnnSdkGraphFindTensor(g, n->inputs[HIPDNN_NORM_X]);
    const hipdnnSdkTensor* sc = hipdnnSdkGraphFindTensor(g, n->inputs[HIPDNN_NORM_SCALE]);
    if (!x || !sc || x->ndim < 2) return false;
    bool axes[HIPDNN_MAX_DIMS];
    hipdnnSdkNormAxes(n, x, sc, axes);
    return rows_of(x, axes) < FEW_ROWS;
}

static bool has_running_stats(const hipdnnSdkNode* n) {
    return n->kind == HIPDNN_OP_NORM_FORWARD && n->attrs[HIPDNN_NORM_MODE].i[0] == HIPDNN_BATCH_NORM &&
           n->outputs[HIPDNN_NORM_OUT_RUNNING_MEAN] != HIPDNN_NO_TENSOR;
}

/* Rewritten: a batchnorm with running statistics, or in training over few channels. */
static bool lower_batchnorm_needs(const hipdnnSdkGraph* g, const hipdnnSdkNode* n) {
    return has_running_stats(n) || few_channel_batchnorm(g, n);
}

/* Over few channels a plane at a time where it can, else split; with many, the norm kernel
 * and the running statistics after it.  The channels are counted in the graph given, as
 * lower_batchnorm_needs counted them. */
static bool lower_batchnorm(lowering* l, const hipdnnSdkNode* n) {
    if (!few_channel_batchnorm(l->orig, n)) return lower_batchnorm_running(l, n);
    bool axes[HIPDNN_MAX_DIMS];
    hipdnnSdkNormAxes(n, lw_tensor(l, n->inputs[HIPDNN_NORM_X]), lw_tensor(l, n->inputs[HIPDNN_NORM_SCALE]),
                      axes);
    return lower_planes_inner(lw_tensor(l, n->inputs[HIPDNN_NORM_X])) ? lower_batchnorm_planes(l, n)
                                                                      : lower_batchnorm_split(l, n, axes);
}

static bool lower_genstats(lowering* l, const hipdnnSdkNode* n) {
    const char* nm = n->name;
    const int64_t x = n->inputs[HIPDNN_GENSTATS_X];
    const hipdnnSdkTensor* tx = lw_tensor(l, x);
    if (!tx || tx->ndim < 2)
        return decline(l->why, l->len, "node '%s' (genstats): x missing or of rank below 2", nm);
    int64_t cd[HIPDNN_MAX_DIMS];
    for (int i = 0; i < tx->ndim; ++i) cd[i] = i == 1 ? tx->dims[1] : 1;
    if (n->outputs[HIPDNN_GENSTATS_SUM] != HIPDNN_NO_TENSOR)
        lw_reduce(l, nm, "sum", HIPDNN_REDUCE_TENSOR_ADD, x, cd, n->outputs[HIPDNN_GENSTATS_SUM]);
    if (n->outputs[HIPDNN_GENSTATS_SQSUM] != HIPDNN_NO_TENSOR) {
        /* the sum of squares as a squared 2-norm: one pass over x, nothing of x's size
           written */
        int64_t n2 = lw_reduce(l, nm, "norm2", HIPDNN_REDUCE_TENSOR_NORM2, x, cd, HIPDNN_NO_TENSOR);
        lw_pw(l, nm, "sq_sum", HIPDNN_POINTWISE_MUL, n2, n2, n->outputs[HIPDNN_GENSTATS_SQSUM], n2);
    }
    return !l->oom;
}

const lowered_op lower_batchnorm_ops[] = {
    {HIPDNN_OP_NORM_FORWARD, lower_batchnorm_needs, lower_batchnorm},
    {HIPDNN_OP_GENSTATS, NULL, lower_genstats},
    {0},
};
