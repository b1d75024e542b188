/* norm_backward rewritten for the kernels the engine has (lower.h): the row kernel's norm
 * backward computing the sums of dy * xhat and dy beside dx, where they fit (row sums, or
 * column sums of groups of rows); for few rows with scale one value a row, split
 * reductions and two pointwise stages; else pointwise and reduction nodes: xhat = (x -
 * mean) * inv_variance, dxhat = dy * g, two averages over the normalized axes, dx =
 * inv_variance * (dxhat - avg(dxhat) - xhat * avg(dxhat * xhat)), dscale = sum(dy * xhat)
 * and dbias = sum(dy) over the axes scale broadcasts on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"

/* A norm backward whose scale is one value a row, over few rows: with gamma constant in a
 * row, dx = inv * gamma * (dy - avg(dy) - xhat * avg(dy * xhat)), so two split reductions
 * (of dy, and of dy * xhat through the workspace) and two pointwise stages that each read x
 * and dy once. */
static bool lower_norm_backward_per_row(lowering* l, const hipdnnSdkNode* n, const bool* axes) {
    const char* nm = n->name;
    const int64_t N = HIPDNN_NO_TENSOR;
    const bool rms = n->attrs[HIPDNN_NBWD_MODE].i[0] == HIPDNN_RMS_NORM;
    const int64_t x = n->inputs[HIPDNN_NBWD_X], dy = n->inputs[HIPDNN_NBWD_DY];
    const int64_t scale = n->inputs[HIPDNN_NBWD_SCALE], mean = n->inputs[HIPDNN_NBWD_MEAN];
    const int64_t inv = n->inputs[HIPDNN_NBWD_INV_VARIANCE];
    const hipdnnSdkTensor* tx = lw_tensor(l, x);
    const int32_t nd = tx->ndim;
    int64_t sd[HIPDNN_MAX_DIMS], count = 1;
    for (int32_t i = 0; i < nd; ++i) {
        sd[i] = axes[i] ? 1 : tx->dims[i];
        count *= axes[i] ? tx->dims[i] : 1;
    }
    int64_t xhat = rms ? lw_pw(l, nm, "xhat", HIPDNN_POINTWISE_MUL, x, inv, N, x)
                       : lw_pw(l, nm, "xhat", HIPDNN_POINTWISE_MUL,
                               lw_pw(l, nm, "centered", HIPDNN_POINTWISE_SUB, x, mean, N, x), inv, N, x);
    int64_t sum_dyx = lw_reduce(l, nm, "sum_dy_xhat", HIPDNN_REDUCE_TENSOR_ADD,
                                lw_pw(l, nm, "dy_xhat", HIPDNN_POINTWISE_MUL, dy, xhat, N, x), sd, N);
    int64_t sum_dy = rms && n->outputs[HIPDNN_NBWD_DBIAS] == N
                         ? N : lw_reduce(l, nm, "sum_dy", HIPDNN_REDUCE_TENSOR_ADD, dy, sd, N);
    const int64_t ports[2] = {HIPDNN_NBWD_DSCALE, HIPDNN_NBWD_DBIAS}, sums[2] = {sum_dyx, sum_dy};
    for (int k = 0; k < 2; ++k) {
        const int64_t out = n->outputs[ports[k]];
        if (out == N) continue;
        const hipdnnSdkTensor* to = lw_tensor(l, out);
        bool same = to && to->ndim == nd;
        for (int32_t i = 0; same && i < nd; ++i) same = to->dims[i] == sd[i];
        if (same) {
            lw_pw(l, nm, k ? "dbias" : "dscale", HIPDNN_POINTWISE_IDENTITY, sums[k], N, out, out);
        } else {
            int64_t dims[HIPDNN_MAX_DIMS];
            memcpy(dims, to->dims, sizeof(dims));
            lw_reduce(l, nm, k ? "dbias" : "dscale", HIPDNN_REDUCE_TENSOR_ADD, sums[k], dims, out);
        }
    }
    const int64_t per = lw_add_const(l, nm, "one_over_count", 1.0 / (double)count);
    int64_t gamma = scale;
    if (n->attrs[HIPDNN_NBWD_ZERO_CENTERED_GAMMA].i[0])
        gamma = lw_pw(l, nm, "gamma", HIPDNN_POINTWISE_ADD, scale, lw_add_const(l, nm, "one", 1.0), N, scale);
    int64_t b = lw_pw(l, nm, "avg_dy_xhat", HIPDNN_POINTWISE_MUL, sum_dyx, per, N, sum_dyx);
    int64_t a = rms ? N : lw_pw(l, nm, "avg_dy", HIPDNN_POINTWISE_MUL, sum_dy, per, N, sum_dyx);
    int64_t gi = lw_pw(l, nm, "gamma_inv", HIPDNN_POINTWISE_MUL, inv, gamma, N, sum_dyx);
    /* dx's stage recomputes xhat from x: nothing of x's size but dy * xhat is stored */
    int64_t xh2 = rms ? lw_pw(l, nm, "xhat_again", HIPDNN_POINTWISE_MUL, x, inv, N, x)
                      : lw_pw(l, nm, "xhat_again", HIPDNN_POINTWISE_MUL,
                              lw_pw(l, nm, "centered_again", HIPDNN_POINTWISE_SUB, x, mean, N, x), inv, N, x);
    int64_t t = lw_pw(l, nm, "dy_minus", HIPDNN_POINTWISE_SUB, dy,
                      lw_pw(l, nm, "xhat_times_avg", HIPDNN_POINTWISE_MUL, xh2, b, N, x), N, x);
    if (!rms) t = lw_pw(l, nm, "dy_minus_avg", HIPDNN_POINTWISE_SUB, t, a, N, x);
    lw_pw(l, nm, "dx", HIPDNN_POINTWISE_MUL, t, gi, n->outputs[HIPDNN_NBWD_DX], x);
    return !l->oom;
}


/* The kept (row) dims of x of more than one element, in the row kernel's order: x's memory
 * order, largest stride first (rowwise_program.c's rwc_space_lay_out); their count. */
static int row_order(const hipdnnSdkTensor* tx, const bool* axes, int* order) {
    int64_t xs[HIPDNN_MAX_DIMS];
    memcpy(xs, tx->strides, sizeof(xs));
    if (tx->is_virtual) hipdnnSdkPackedStrides(tx->ndim, tx->dims, xs); /* packed between stages */
    int m = 0;
    for (int32_t i = 0; i < tx->ndim; ++i)
        if (!axes[i] && tx->dims[i] > 1) order[m++] = i;
    for (int i = 1; i < m; ++i) /* stable, largest x stride first */
        for (int j = i; j > 0 && xs[order[j]] > xs[order[j - 1]]; --j) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    return m;
}

/* What the row kernel's way needs of x's and scale's shapes. */
typedef struct {
    int32_t nd;
    bool per_row;                  /* scale one value a row */
    bool sets_outer;               /* the kept dims scale varies on come before the others
                                      in the kernel's row order: each set's rows consecutive */
    int64_t rows, cols, sets;      /* sets of rows: one row of scale each */
    int a1;                        /* the parts' axis: the first kept dim scale does not vary on */
    int m, order[HIPDNN_MAX_DIMS]; /* the kept dims, in the kernel's row order */
    int64_t sd[HIPDNN_MAX_DIMS];   /* the row sums' dims */
} nbwd_shape;

static void nbwd_shape_of(const hipdnnSdkTensor* tx, const hipdnnSdkTensor* ts, const bool* axes,
                          nbwd_shape* sh) {
    sh->nd = tx->ndim;
    sh->per_row = true;
    sh->rows = sh->cols = sh->sets = 1;
    int a1 = -1, a1_any = -1;
    for (int32_t i = 0; i < sh->nd; ++i) {
        if (axes[i]) sh->per_row = sh->per_row && ts->dims[i] == 1;
        else sh->sets *= ts->dims[i];
        if (axes[i]) sh->cols *= tx->dims[i];
        else sh->rows *= tx->dims[i];
        if (!axes[i] && ts->dims[i] == 1 && tx->dims[i] > 1 && a1 < 0) a1 = i;
        if (!axes[i] && ts->dims[i] == 1 && a1_any < 0) a1_any = i;
        sh->sd[i] = axes[i] ? 1 : tx->dims[i];
    }
    sh->a1 = a1 < 0 ? a1_any : a1; /* one row a set: parts of one group */
    sh->m = row_order(tx, axes, sh->order);
    bool seen_unit = false;
    sh->sets_outer = true;
    for (int i = 0; i < sh->m; ++i) {
        if (ts->dims[sh->order[i]] == 1) seen_unit = true;
        else sh->sets_outer = sh->sets_outer && !seen_unit;
    }
}

/* The column parts' layout: [sets, P, cols] packed, as the kernel numbers them: P on axis
 * a1, each set's dims outside it in the kernel's row order, the normalized axes inside it
 * in x's memory order (a virtual x is packed between stages). */
static void col_parts_layout(const hipdnnSdkTensor* tx, const hipdnnSdkTensor* ts, const bool* axes,
                             const nbwd_shape* sh, int64_t P, int64_t* pdims, int64_t* pst) {
    const int32_t nd = sh->nd;
    bool not_axes[HIPDNN_MAX_DIMS] = {false};
    for (int32_t i = 0; i < nd; ++i) not_axes[i] = !axes[i];
    int corder[HIPDNN_MAX_DIMS];
    const int mc = row_order(tx, not_axes, corder); /* the normalized axes, x's order */
    for (int32_t i = 0; i < nd; ++i) {
        pdims[i] = axes[i] || ts->dims[i] > 1 ? tx->dims[i] : i == sh->a1 ? P : 1;
        pst[i] = sh->cols;
    }
    int64_t at = 1;
    for (int i = mc - 1; i >= 0; --i) {
        pst[corder[i]] = at;
        at *= tx->dims[corder[i]];
    }
    at = P * sh->cols;
    for (int i = sh->m - 1; i >= 0; --i)
        if (ts->dims[sh->order[i]] > 1) {
            pst[sh->order[i]] = at;
            at *= tx->dims[sh->order[i]];
        }
}

static const int64_t k_sum_ports[2] = {HIPDNN_NBWD_DSCALE, HIPDNN_NBWD_DBIAS};

/* The row kernel's node: n computing sums of `kind` in P groups of rows a set, its dscale
 * and dbias sent through new tensors (via[k]) where the sums are not the outputs
 * themselves (parts: dims pdims, strides pst).  False when out of memory. */
static bool push_sums_node(lowering* l, const hipdnnSdkNode* n, int kind, int64_t P,
                           const nbwd_shape* sh, const int64_t* pdims, const int64_t* pst,
                           int64_t* via) {
    const int32_t nd = sh->nd;
    hipdnnSdkNode node = *n;
    node.name = strdup(n->name);
    if (!node.name) {
        l->oom = true;
        return false;
    }
    node.attrs[HIPE_NBWD_SUMS].i[0] = kind;
    node.attrs[HIPE_NBWD_SUMS].i[1] = P;
    node.attrs[HIPE_NBWD_SUMS].i[2] = kind == HIPE_NBWD_COL_PARTS ? sh->sets : 1;
    node.attrs[HIPE_NBWD_SUMS].count = 3;
    static const char* const what[2] = {"sum_dy_xhat", "sum_dy"};
    for (int k = 0; k < 2; ++k) {
        const int64_t out = n->outputs[k_sum_ports[k]];
        if (out == HIPDNN_NO_TENSOR) continue;
        const hipdnnSdkTensor* to = lw_tensor(l, out);
        bool same = kind == HIPE_NBWD_ROW_SUMS && to && to->ndim == nd;
        for (int32_t i = 0; same && i < nd; ++i) same = to->dims[i] == sh->sd[i];
        if (same) continue; /* the row sums are the output itself */
        via[k] = kind == HIPE_NBWD_ROW_SUMS
                     ? lw_add_tensor(l, n->name, what[k], HIPDNN_DATA_FLOAT, nd, sh->sd, NULL, true)
                     : lw_add_tensor(l, n->name, what[k], HIPDNN_DATA_FLOAT, nd, pdims, pst, true);
        if (via[k] == HIPDNN_NO_TENSOR ||
            (kind == HIPE_NBWD_COL_PARTS && !lw_keep_in_workspace(l, via[k]))) {
            free(node.name);
            return false;
        }
        node.outputs[k_sum_ports[k]] = via[k];
    }
    if (!lw_push(l, &node, NULL, NULL)) {
        free(node.name);
        return false;
    }
    return true;
}

/* The row kernel's norm backward (rowwise_norm.c), where its sums fit: batch and
 * instance norms (scale one value a row) store each row's sums of dy * xhat and dy, which
 * are dscale and dbias or reduce to them; layer and RMS norms (scale one value a column)
 * store the column sums of each group of rows, reduced to dscale and dbias after.  An
 * adaptive layer norm's scale is a row of them for each sample (a set of rows): each
 * group of rows then lies in one set, and its column sums go to that set's parts.  1
 * done, 0 failed (out of memory), -1 not this way (the caller rewrites it into pointwise
 * and reduction nodes). */
static int lower_norm_backward_fused(lowering* l, const hipdnnSdkNode* n, const bool* axes) {
    const hipdnnSdkTensor *tx = lw_tensor(l, n->inputs[HIPDNN_NBWD_X]), *ts = lw_tensor(l, n->inputs[HIPDNN_NBWD_SCALE]);
    nbwd_shape sh;
    nbwd_shape_of(tx, ts, axes, &sh);
    const bool want = n->outputs[k_sum_ports[0]] != HIPDNN_NO_TENSOR ||
                      n->outputs[k_sum_ports[1]] != HIPDNN_NO_TENSOR;
    if (sh.per_row && sh.rows < FEW_ROWS) {
        if (n->attrs[HIPDNN_NBWD_MODE].i[0] == HIPDNN_BATCH_NORM && lower_planes_inner(tx))
            return lower_batchnorm_backward_planes(l, n) ? 1 : 0;
        return lower_norm_backward_per_row(l, n, axes) ? 1 : 0;
    }
    int kind = !want || sh.per_row ? HIPE_NBWD_ROW_SUMS
               : sh.sets_outer && sh.a1 >= 0 && hipe_rw_norm_bwd_parts_fit(sh.cols) ? HIPE_NBWD_COL_PARTS : 0;
    if (!kind) return -1;
    /* groups of rows a set: together about HIPE_NBWD_PARTS, at most the set's rows */
    const int64_t set_rows = sh.rows / sh.sets;
    const int64_t per_set = HIPE_NBWD_PARTS / sh.sets > 1 ? HIPE_NBWD_PARTS / sh.sets : 1;
    const int64_t P = kind == HIPE_NBWD_ROW_SUMS ? (sh.rows < HIPE_NBWD_PARTS ? sh.rows : HIPE_NBWD_PARTS)
                                                 : set_rows < per_set ? set_rows : per_set;
    int64_t pdims[HIPDNN_MAX_DIMS] = {0}, pst[HIPDNN_MAX_DIMS] = {0};
    if (kind == HIPE_NBWD_COL_PARTS) col_parts_layout(tx, ts, axes, &sh, P, pdims, pst);
    int64_t via[2] = {HIPDNN_NO_TENSOR, HIPDNN_NO_TENSOR};
    if (!push_sums_node(l, n, kind, P, &sh, pdims, pst, via)) return 0;
    for (int k = 0; k < 2; ++k) {
        if (via[k] == HIPDNN_NO_TENSOR) continue;
        int64_t dims[HIPDNN_MAX_DIMS];
        memcpy(dims, lw_tensor(l, n->outputs[k_sum_ports[k]])->dims, sizeof(dims));
        lw_reduce(l, n->name, k ? "dbias" : "dscale", HIPDNN_REDUCE_TENSOR_ADD, via[k], dims,
                  n->outputs[k_sum_ports[k]]);
    }
    return l->oom ? 0 : 1;
}

static bool lower_norm_backward(lowering* l, const hipdnnSdkNode* n) {
    const int64_t mode = n->attrs[HIPDNN_NBWD_MODE].i[0];
    const bool rms = mode == HIPDNN_RMS_NORM;
    const char* nm = n->name;
    const int64_t x = n->inputs[HIPDNN_NBWD_X], dy = n->inputs[HIPDNN_NBWD_DY];
    const int64_t scale = n->inputs[HIPDNN_NBWD_SCALE], mean = n->inputs[HIPDNN_NBWD_MEAN];
    const int64_t inv = n->inputs[HIPDNN_NBWD_INV_VARIANCE];
    const hipdnnSdkTensor *tx = lw_tensor(l, x), *ts = lw_tensor(l, scale);
    if (mode == HIPDNN_GROUP_NORM || !hipdnnSdkNormBackwardName(mode))
        return decline(l->why, l->len, "node '%s' (norm_backward): norm mode %lld not supported",
                       nm, (long long)mode);
    if (!tx || !ts || !lw_tensor(l, dy) || !lw_tensor(l, inv) || (!rms && !lw_tensor(l, mean)) ||
        ts->ndim != tx->ndim)
        return decline(l->why, l->len, "node '%s' (%s): x, dy, scale, %sinv_variance missing or "
                       "scale not of x's rank", nm, hipdnnSdkNormBackwardName(mode),
                       rms ? "" : "mean, ");
    bool axes[HIPDNN_MAX_DIMS];
    hipdnnSdkNormAxes(n, tx, ts, axes);
    int64_t sd[HIPDNN_MAX_DIMS], pd[HIPDNN_MAX_DIMS];
    for (int i = 0; i < tx->ndim; ++i) {
        sd[i] = axes[i] ? 1 : tx->dims[i];
        pd[i] = ts->dims[i];
    }
    int r = lower_norm_backward_fused(l, n, axes);
    if (r >= 0) return r == 1;
    const int64_t N = HIPDNN_NO_TENSOR;
    int64_t xhat = rms ? lw_pw(l, nm, "xhat", HIPDNN_POINTWISE_MUL, x, inv, N, x)
                       : lw_pw(l, nm, "xhat", HIPDNN_POINTWISE_MUL,
                               lw_pw(l, nm, "centered", HIPDNN_POINTWISE_SUB, x, mean, N, x), inv, N, x);
    int64_t gamma = scale;
    if (n->attrs[HIPDNN_NBWD_ZERO_CENTERED_GAMMA].i[0])
        gamma = lw_pw(l, nm, "gamma", HIPDNN_POINTWISE_ADD, scale, lw_add_const(l, nm, "one", 1.0), N,
                      scale);
    int64_t dxhat = lw_pw(l, nm, "dxhat", HIPDNN_POINTWISE_MUL, dy, gamma, N, x);
    int64_t prod = lw_pw(l, nm, "dxhat_xhat", HIPDNN_POINTWISE_MUL, dxhat, xhat, N, x);
    int64_t dyx = n->outputs[HIPDNN_NBWD_DSCALE] != N
                      ? lw_pw(l, nm, "dy_xhat", HIPDNN_POINTWISE_MUL, dy, xhat, N, x) : N;
    int64_t b = lw_reduce(l, nm, "avg_dxhat_xhat", HIPDNN_REDUCE_TENSOR_AVG, prod, sd, N);
    int64_t a = rms ? N : lw_reduce(l, nm, "avg_dxhat", HIPDNN_REDUCE_TENSOR_AVG, dxhat, sd, N);
    if (dyx != N) lw_reduce(l, nm, "dscale", HIPDNN_REDUCE_TENSOR_ADD, dyx, pd, n->outputs[HIPDNN_NBWD_DSCALE]);
    if (n->outputs[HIPDNN_NBWD_DBIAS] != N)
        lw_reduce(l, nm, "dbias", HIPDNN_REDUCE_TENSOR_ADD, dy, pd, n->outputs[HIPDNN_NBWD_DBIAS]);
    int64_t v = lw_pw(l, nm, "dxhat_minus", HIPDNN_POINTWISE_SUB, dxhat,
                      lw_pw(l, nm, "xhat_times_avg", HIPDNN_POINTWISE_MUL, xhat, b, N, x), N, x);
    if (!rms) v = lw_pw(l, nm, "dxhat_minus_avg", HIPDNN_POINTWISE_SUB, v, a, N, x);
    lw_pw(l, nm, "dx", HIPDNN_POINTWISE_MUL, v, inv, n->outputs[HIPDNN_NBWD_DX], x);
    return !l->oom;
}

const lowered_op lower_norm_backward_ops[] = {
    {HIPDNN_OP_NORM_BACKWARD, NULL, lower_norm_backward},
    {0},
};
