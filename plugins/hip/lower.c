/* Operations the engine runs as graphs of the ones it has kernels for: a rewrite of the
 * graph before it is cut into stages (staged.c).
 *
 *   norm_backward (layer, RMS, instance, batch, adaptive layer), with the forward's
 *     statistics: xhat = (x - mean) * inv_variance, dxhat = dy * g, two averages over
 *     the normalized axes, dx = inv_variance * (dxhat - avg(dxhat) - xhat * avg(dxhat *
 *     xhat)), dscale = sum(dy * xhat) and dbias = sum(dy) over the axes scale broadcasts on;
 *   batchnorm training's running statistics: pointwise nodes after the norm (whose mean
 *     and inv_variance become outputs if they were not), next = running + momentum *
 *     (batch - running), the batch variance unbiased and recovered from inv_variance;
 *   batchnorm training and backward over few channels (FEW_ROWS): a plane ([n, c]) at a
 *     time where the spatial dims are innermost (the norm and norm-backward kernels over
 *     each plane, storing only statistics or sums, combined per channel, then one
 *     pointwise pass), else split reductions and pointwise stages;
 *   genstats: a sum and a 2-norm (squared) per channel;
 *   slice, concatenate and reshape: identity copies through views.  A view is a tensor of
 *     the rewritten graph with its own uid that names another tensor's memory at an
 *     offset (an alias, resolved at enqueue); a virtual tensor a view reads or writes is
 *     kept in the workspace, packed, like any tensor between stages.
 *
 * Every added tensor is float32 and virtual unless said otherwise, every added node
 * computes in float32, so the rewritten graph goes through the same checks, stage cutting
 * and kernels as one a user wrote. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "staged.h"

/* Statistics over so few rows (channels) that one group of threads a row would leave most of
 * the GPU idle: the norm is run as split reductions and pointwise stages instead, which
 * spread each row over many blocks (a batchnorm over [64, 128, 64, 64] took 1.4 ms as 128
 * rows of the row kernel on an H200, 0.31 ms in PyTorch). */
#define FEW_ROWS 1024

typedef struct {
    hipdnnSdkGraph* g; /* the rewritten graph: tensors grow, nodes are rebuilt */
    int32_t tcap, ncap;
    int64_t next_uid;
    hipe_alias* alias;
    int nalias, acap;
    int64_t* ws;
    int nws, wcap;
    bool oom;
    char* why;
    size_t len;
} lowering;

static bool grow(void** p, int32_t* cap, int32_t need, size_t size) {
    if (need <= *cap) return true;
    int32_t cap2 = *cap ? *cap * 2 : 16;
    while (cap2 < need) cap2 *= 2;
    void* q = realloc(*p, (size_t)cap2 * size);
    if (!q) return false;
    *p = q;
    *cap = cap2;
    return true;
}

/* The tensor of uid in the rewritten graph (linear: graphs are small). */
static hipdnnSdkTensor* tensor(lowering* l, int64_t uid) {
    for (int32_t i = 0; i < l->g->num_tensors; ++i)
        if (l->g->tensors[i].uid == uid) return &l->g->tensors[i];
    return NULL;
}

static char* name_of(const char* base, const char* what) {
    size_t n = strlen(base) + strlen(what) + 2;
    char* s = malloc(n);
    if (s) hipdnnSdkFormat(s, n, "%s/%s", base, what);
    return s;
}

/* A new tensor; its uid, or HIPDNN_NO_TENSOR when out of memory.  strides NULL: packed. */
static int64_t add_tensor(lowering* l, const char* base, const char* what, hipdnnDataType_t dt,
                          int32_t ndim, const int64_t* dims, const int64_t* strides,
                          bool is_virtual) {
    if (l->oom || !grow((void**)&l->g->tensors, &l->tcap, l->g->num_tensors + 1,
                        sizeof(hipdnnSdkTensor))) {
        l->oom = true;
        return HIPDNN_NO_TENSOR;
    }
    hipdnnSdkTensor* t = &l->g->tensors[l->g->num_tensors];
    memset(t, 0, sizeof(*t));
    t->name = name_of(base, what);
    if (!t->name) {
        l->oom = true;
        return HIPDNN_NO_TENSOR;
    }
    l->g->num_tensors++;
    t->uid = l->next_uid++;
    t->data_type = dt;
    t->ndim = ndim;
    memcpy(t->dims, dims, (size_t)ndim * sizeof(int64_t));
    if (strides) memcpy(t->strides, strides, (size_t)ndim * sizeof(int64_t));
    else hipdnnSdkPackedStrides(ndim, t->dims, t->strides);
    t->is_virtual = is_virtual;
    return t->uid;
}

/* A float32 constant (a pass-by-value scalar). */
static int64_t add_const(lowering* l, const char* base, const char* what, double v) {
    const int64_t one = 1;
    int64_t uid = add_tensor(l, base, what, HIPDNN_DATA_FLOAT, 1, &one, NULL, false);
    if (uid == HIPDNN_NO_TENSOR) return uid;
    hipdnnSdkTensor* t = tensor(l, uid);
    t->is_by_value = true;
    t->has_value = true;
    const float f = (float)v; /* value is bytes, not aligned for a float */
    memcpy(t->value, &f, sizeof(f));
    return uid;
}

/* Appends node n (its name is taken over, or made from base/what). */
static bool push(lowering* l, hipdnnSdkNode* n, const char* base, const char* what) {
    if (what) n->name = name_of(base, what);
    if (l->oom || !n->name || !grow((void**)&l->g->nodes, &l->ncap, l->g->num_nodes + 1,
                                    sizeof(hipdnnSdkNode))) {
        if (what) free(n->name);
        l->oom = true;
        return false;
    }
    l->g->nodes[l->g->num_nodes++] = *n;
    return true;
}

/* A pointwise node out = mode(a[, b]); out HIPDNN_NO_TENSOR: a new virtual tensor shaped as
 * `like`.  Its output uid. */
static int64_t pw(lowering* l, const char* base, const char* what, hipdnnPointwiseMode_t mode,
                  int64_t a, int64_t b, int64_t out, int64_t like) {
    if (out == HIPDNN_NO_TENSOR) {
        const hipdnnSdkTensor* t = tensor(l, like);
        if (!t) {
            l->oom = true;
            return HIPDNN_NO_TENSOR;
        }
        int64_t dims[HIPDNN_MAX_DIMS];
        int32_t nd = t->ndim;
        memcpy(dims, t->dims, sizeof(dims));
        out = add_tensor(l, base, what, HIPDNN_DATA_FLOAT, nd, dims, NULL, true);
        if (out == HIPDNN_NO_TENSOR) return out;
    }
    hipdnnSdkNode n;
    hipdnnSdkNodeInit(&n, HIPDNN_OP_POINTWISE);
    n.compute_type = HIPDNN_DATA_FLOAT;
    n.attrs[HIPDNN_PW_MODE].i[0] = mode;
    n.attrs[HIPDNN_PW_MODE].count = 1;
    n.inputs[HIPDNN_PW_X] = a;
    if (b != HIPDNN_NO_TENSOR) n.inputs[HIPDNN_PW_B] = b;
    n.outputs[HIPDNN_PW_Y] = out;
    return push(l, &n, base, what) ? out : HIPDNN_NO_TENSOR;
}

/* A reduction of x to `dims` (x's rank, 1 on the reduced axes); out HIPDNN_NO_TENSOR: a new
 * virtual tensor. */
static int64_t reduce(lowering* l, const char* base, const char* what, int64_t mode, int64_t x,
                      const int64_t* dims, int64_t out) {
    const hipdnnSdkTensor* tx = tensor(l, x);
    if (!tx) {
        l->oom = true;
        return HIPDNN_NO_TENSOR;
    }
    if (out == HIPDNN_NO_TENSOR) {
        out = add_tensor(l, base, what, HIPDNN_DATA_FLOAT, tensor(l, x)->ndim, dims, NULL, true);
        if (out == HIPDNN_NO_TENSOR) return out;
    }
    hipdnnSdkNode n;
    hipdnnSdkNodeInit(&n, HIPDNN_OP_REDUCTION);
    n.compute_type = HIPDNN_DATA_FLOAT;
    n.attrs[HIPDNN_RED_MODE].i[0] = mode;
    n.attrs[HIPDNN_RED_MODE].count = 1;
    n.inputs[HIPDNN_RED_X] = x;
    n.outputs[HIPDNN_RED_Y] = out;
    return push(l, &n, base, what) ? out : HIPDNN_NO_TENSOR;
}

/* Whether the elements fill [0, count) exactly: packed in some order of the dims. */
static bool dense(int32_t nd, const int64_t* dims, const int64_t* strides) {
    int32_t order[HIPDNN_MAX_DIMS], n = 0;
    for (int32_t i = 0; i < nd; ++i)
        if (dims[i] > 1) order[n++] = i;
    for (int32_t i = 1; i < n; ++i) /* insertion sort, ascending stride */
        for (int32_t k = i; k > 0 && strides[order[k]] < strides[order[k - 1]]; --k) {
            int32_t t = order[k];
            order[k] = order[k - 1];
            order[k - 1] = t;
        }
    int64_t want = 1;
    for (int32_t i = 0; i < n; ++i) {
        if (strides[order[i]] != want) return false;
        want *= dims[order[i]];
    }
    return true;
}

/* Keeps virtual tensor uid in the workspace: real for every stage, packed unless its strides
 * already are dense (a view may describe them). */
static bool keep_in_workspace(lowering* l, int64_t uid) {
    hipdnnSdkTensor* t = tensor(l, uid);
    if (!t) return false;
    if (!t->is_virtual) return true;
    for (int i = 0; i < l->nws; ++i)
        if (l->ws[i] == uid) return true;
    if (!grow((void**)&l->ws, &l->wcap, l->nws + 1, sizeof(int64_t))) {
        l->oom = true;
        return false;
    }
    t->is_virtual = false;
    if (!dense(t->ndim, t->dims, t->strides))
        hipdnnSdkPackedStrides(t->ndim, t->dims, t->strides);
    l->ws[l->nws++] = uid;
    return true;
}

/* A view of tensor `base`'s memory (kept in the workspace if virtual): dims and strides
 * in elements, from `offset` elements on.  Its uid. */
static int64_t view(lowering* l, const char* name, const char* what, int64_t base, int32_t ndim,
                    const int64_t* dims, const int64_t* strides, int64_t offset) {
    if (!keep_in_workspace(l, base) ||
        !grow((void**)&l->alias, &l->acap, l->nalias + 1, sizeof(hipe_alias))) {
        l->oom = true;
        return HIPDNN_NO_TENSOR;
    }
    const hipdnnSdkTensor* b = tensor(l, base);
    int64_t uid = add_tensor(l, name, what, b->data_type, ndim, dims, strides, false);
    if (uid == HIPDNN_NO_TENSOR) return uid;
    hipe_alias* a = &l->alias[l->nalias++];
    a->uid = uid;
    a->base = base;
    a->byte_offset = offset * (int64_t)hipdnnSdkDataTypeSize(tensor(l, base)->data_type);
    return uid;
}

/* The strides a tensor is read with after keep_in_workspace would have run on it. */
static void strides_after_keep(const hipdnnSdkTensor* t, int64_t* st) {
    memcpy(st, t->strides, sizeof(int64_t) * (size_t)t->ndim);
    if (t->is_virtual && !dense(t->ndim, t->dims, t->strides))
        hipdnnSdkPackedStrides(t->ndim, t->dims, st);
}

/* ---- the operations ---------------------------------------------------------------------- */

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
    const hipdnnSdkTensor* tx = tensor(l, x);
    const int32_t nd = tx->ndim;
    int64_t sd[HIPDNN_MAX_DIMS], count = 1;
    for (int32_t i = 0; i < nd; ++i) {
        sd[i] = axes[i] ? 1 : tx->dims[i];
        count *= axes[i] ? tx->dims[i] : 1;
    }
    int64_t xhat = rms ? pw(l, nm, "xhat", HIPDNN_POINTWISE_MUL, x, inv, N, x)
                       : pw(l, nm, "xhat", HIPDNN_POINTWISE_MUL,
                            pw(l, nm, "centered", HIPDNN_POINTWISE_SUB, x, mean, N, x), inv, N, x);
    int64_t sum_dyx = reduce(l, nm, "sum_dy_xhat", HIPDNN_REDUCE_TENSOR_ADD,
                             pw(l, nm, "dy_xhat", HIPDNN_POINTWISE_MUL, dy, xhat, N, x), sd, N);
    int64_t sum_dy = rms && n->outputs[HIPDNN_NBWD_DBIAS] == N
                         ? N : reduce(l, nm, "sum_dy", HIPDNN_REDUCE_TENSOR_ADD, dy, sd, N);
    const int64_t ports[2] = {HIPDNN_NBWD_DSCALE, HIPDNN_NBWD_DBIAS}, sums[2] = {sum_dyx, sum_dy};
    for (int k = 0; k < 2; ++k) {
        const int64_t out = n->outputs[ports[k]];
        if (out == N) continue;
        const hipdnnSdkTensor* to = tensor(l, out);
        bool same = to && to->ndim == nd;
        for (int32_t i = 0; same && i < nd; ++i) same = to->dims[i] == sd[i];
        if (same) {
            pw(l, nm, k ? "dbias" : "dscale", HIPDNN_POINTWISE_IDENTITY, sums[k], N, out, out);
        } else {
            int64_t dims[HIPDNN_MAX_DIMS];
            memcpy(dims, to->dims, sizeof(dims));
            reduce(l, nm, k ? "dbias" : "dscale", HIPDNN_REDUCE_TENSOR_ADD, sums[k], dims, out);
        }
    }
    const int64_t per = add_const(l, nm, "one_over_count", 1.0 / (double)count);
    int64_t gamma = scale;
    if (n->attrs[HIPDNN_NBWD_ZERO_CENTERED_GAMMA].i[0])
        gamma = pw(l, nm, "gamma", HIPDNN_POINTWISE_ADD, scale, add_const(l, nm, "one", 1.0), N, scale);
    int64_t b = pw(l, nm, "avg_dy_xhat", HIPDNN_POINTWISE_MUL, sum_dyx, per, N, sum_dyx);
    int64_t a = rms ? N : pw(l, nm, "avg_dy", HIPDNN_POINTWISE_MUL, sum_dy, per, N, sum_dyx);
    int64_t gi = pw(l, nm, "gamma_inv", HIPDNN_POINTWISE_MUL, inv, gamma, N, sum_dyx);
    /* dx's stage recomputes xhat from x: nothing of x's size but dy * xhat is stored */
    int64_t xh2 = rms ? pw(l, nm, "xhat_again", HIPDNN_POINTWISE_MUL, x, inv, N, x)
                      : pw(l, nm, "xhat_again", HIPDNN_POINTWISE_MUL,
                           pw(l, nm, "centered_again", HIPDNN_POINTWISE_SUB, x, mean, N, x), inv, N, x);
    int64_t t = pw(l, nm, "dy_minus", HIPDNN_POINTWISE_SUB, dy,
                   pw(l, nm, "xhat_times_avg", HIPDNN_POINTWISE_MUL, xh2, b, N, x), N, x);
    if (!rms) t = pw(l, nm, "dy_minus_avg", HIPDNN_POINTWISE_SUB, t, a, N, x);
    pw(l, nm, "dx", HIPDNN_POINTWISE_MUL, t, gi, n->outputs[HIPDNN_NBWD_DX], x);
    return !l->oom;
}

static bool planes_inner(const hipdnnSdkTensor* x);
static bool lower_batchnorm_backward_planes(lowering* l, const hipdnnSdkNode* n);

/* The kept (row) dims of x of more than one element, in the row kernel's order: x's memory
 * order, largest stride first (rowwise_program.c's space_lay_out); their count. */
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

/* The row kernel's norm backward (rowwise_program.c), where its sums fit: batch and
 * instance norms (scale one value a row) store each row's sums of dy * xhat and dy, which
 * are dscale and dbias or reduce to them; layer and RMS norms (scale one value a column)
 * store the column sums of each group of rows, reduced to dscale and dbias after.  An
 * adaptive layer norm's scale is a row of them for each sample (a set of rows): each
 * group of rows then lies in one set, and its column sums go to that set's parts.  1
 * done, 0 failed (out of memory), -1 not this way (the caller rewrites it into pointwise
 * and reduction nodes). */
static int lower_norm_backward_fused(lowering* l, const hipdnnSdkNode* n, const bool* axes) {
    const hipdnnSdkTensor *tx = tensor(l, n->inputs[HIPDNN_NBWD_X]), *ts = tensor(l, n->inputs[HIPDNN_NBWD_SCALE]);
    const int32_t nd = tx->ndim;
    bool per_row = true;
    int64_t rows = 1, cols = 1, sets = 1, sd[HIPDNN_MAX_DIMS], pdims[HIPDNN_MAX_DIMS], pst[HIPDNN_MAX_DIMS];
    int a1 = -1, a1_any = -1; /* the parts' axis: the first kept dim scale does not vary on */
    for (int32_t i = 0; i < nd; ++i) {
        if (axes[i]) per_row = per_row && ts->dims[i] == 1;
        else sets *= ts->dims[i];
        if (axes[i]) cols *= tx->dims[i];
        else rows *= tx->dims[i];
        if (!axes[i] && ts->dims[i] == 1 && tx->dims[i] > 1 && a1 < 0) a1 = i;
        if (!axes[i] && ts->dims[i] == 1 && a1_any < 0) a1_any = i;
        sd[i] = axes[i] ? 1 : tx->dims[i];
    }
    if (a1 < 0) a1 = a1_any; /* one row a set: parts of one group */
    /* sets of rows: the kept dims scale varies on come before the others in the kernel's
       row order, so each set's rows are consecutive */
    int order[HIPDNN_MAX_DIMS];
    const int m = row_order(tx, axes, order);
    bool sets_outer = true, seen_unit = false;
    for (int i = 0; i < m; ++i) {
        if (ts->dims[order[i]] == 1) seen_unit = true;
        else sets_outer = sets_outer && !seen_unit;
    }
    const int64_t ports[2] = {HIPDNN_NBWD_DSCALE, HIPDNN_NBWD_DBIAS};
    const bool want = n->outputs[ports[0]] != HIPDNN_NO_TENSOR || n->outputs[ports[1]] != HIPDNN_NO_TENSOR;
    if (per_row && rows < FEW_ROWS) {
        if (n->attrs[HIPDNN_NBWD_MODE].i[0] == HIPDNN_BATCH_NORM && planes_inner(tx))
            return lower_batchnorm_backward_planes(l, n) ? 1 : 0;
        return lower_norm_backward_per_row(l, n, axes) ? 1 : 0;
    }
    int kind = !want || per_row ? HIPE_NBWD_ROW_SUMS
               : sets_outer && a1 >= 0 && hipe_rw_norm_bwd_parts_fit(cols) ? HIPE_NBWD_COL_PARTS : 0;
    if (!kind) return -1;
    /* groups of rows a set: together about HIPE_NBWD_PARTS, at most the set's rows */
    const int64_t set_rows = rows / sets, per_set = HIPE_NBWD_PARTS / sets > 1 ? HIPE_NBWD_PARTS / sets : 1;
    const int64_t P = kind == HIPE_NBWD_ROW_SUMS ? (rows < HIPE_NBWD_PARTS ? rows : HIPE_NBWD_PARTS)
                                                 : set_rows < per_set ? set_rows : per_set;
    if (kind == HIPE_NBWD_COL_PARTS) {
        /* parts [sets, P, cols] packed, as the kernel numbers them: P on axis a1, each set's
           dims outside it in the kernel's row order, the normalized axes inside it in x's
           memory order (a virtual x is packed between stages) */
        bool not_axes[HIPDNN_MAX_DIMS] = {false};
        for (int32_t i = 0; i < nd; ++i) not_axes[i] = !axes[i];
        int corder[HIPDNN_MAX_DIMS];
        const int mc = row_order(tx, not_axes, corder); /* the normalized axes, x's order */
        for (int32_t i = 0; i < nd; ++i) {
            pdims[i] = axes[i] || ts->dims[i] > 1 ? tx->dims[i] : i == a1 ? P : 1;
            pst[i] = cols;
        }
        int64_t at = 1;
        for (int i = mc - 1; i >= 0; --i) {
            pst[corder[i]] = at;
            at *= tx->dims[corder[i]];
        }
        at = P * cols;
        for (int i = m - 1; i >= 0; --i)
            if (ts->dims[order[i]] > 1) {
                pst[order[i]] = at;
                at *= tx->dims[order[i]];
            }
    }
    hipdnnSdkNode node = *n;
    node.name = strdup(n->name);
    if (!node.name) {
        l->oom = true;
        return 0;
    }
    node.attrs[HIPE_NBWD_SUMS].i[0] = kind;
    node.attrs[HIPE_NBWD_SUMS].i[1] = P;
    node.attrs[HIPE_NBWD_SUMS].i[2] = kind == HIPE_NBWD_COL_PARTS ? sets : 1;
    node.attrs[HIPE_NBWD_SUMS].count = 3;
    int64_t via[2] = {HIPDNN_NO_TENSOR, HIPDNN_NO_TENSOR};
    static const char* const what[2] = {"sum_dy_xhat", "sum_dy"};
    for (int k = 0; k < 2; ++k) {
        const int64_t out = n->outputs[ports[k]];
        if (out == HIPDNN_NO_TENSOR) continue;
        const hipdnnSdkTensor* to = tensor(l, out);
        bool same = kind == HIPE_NBWD_ROW_SUMS && to && to->ndim == nd;
        for (int32_t i = 0; same && i < nd; ++i) same = to->dims[i] == sd[i];
        if (same) continue; /* the row sums are the output itself */
        via[k] = kind == HIPE_NBWD_ROW_SUMS
                     ? add_tensor(l, n->name, what[k], HIPDNN_DATA_FLOAT, nd, sd, NULL, true)
                     : add_tensor(l, n->name, what[k], HIPDNN_DATA_FLOAT, nd, pdims, pst, true);
        if (via[k] == HIPDNN_NO_TENSOR ||
            (kind == HIPE_NBWD_COL_PARTS && !keep_in_workspace(l, via[k]))) {
            free(node.name);
            return 0;
        }
        node.outputs[ports[k]] = via[k];
    }
    if (!push(l, &node, NULL, NULL)) {
        free(node.name);
        return 0;
    }
    for (int k = 0; k < 2; ++k) {
        if (via[k] == HIPDNN_NO_TENSOR) continue;
        int64_t dims[HIPDNN_MAX_DIMS];
        memcpy(dims, tensor(l, n->outputs[ports[k]])->dims, sizeof(dims));
        reduce(l, n->name, k ? "dbias" : "dscale", HIPDNN_REDUCE_TENSOR_ADD, via[k], dims,
               n->outputs[ports[k]]);
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
    const hipdnnSdkTensor *tx = tensor(l, x), *ts = tensor(l, scale);
    if (mode == HIPDNN_GROUP_NORM || !hipdnnSdkNormBackwardName(mode))
        return decline(l->why, l->len, "node '%s' (norm_backward): norm mode %lld not supported",
                       nm, (long long)mode);
    if (!tx || !ts || !tensor(l, dy) || !tensor(l, inv) || (!rms && !tensor(l, mean)) ||
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
    int64_t xhat = rms ? pw(l, nm, "xhat", HIPDNN_POINTWISE_MUL, x, inv, N, x)
                       : pw(l, nm, "xhat", HIPDNN_POINTWISE_MUL,
                            pw(l, nm, "centered", HIPDNN_POINTWISE_SUB, x, mean, N, x), inv, N, x);
    int64_t gamma = scale;
    if (n->attrs[HIPDNN_NBWD_ZERO_CENTERED_GAMMA].i[0])
        gamma = pw(l, nm, "gamma", HIPDNN_POINTWISE_ADD, scale, add_const(l, nm, "one", 1.0), N,
                   scale);
    int64_t dxhat = pw(l, nm, "dxhat", HIPDNN_POINTWISE_MUL, dy, gamma, N, x);
    int64_t prod = pw(l, nm, "dxhat_xhat", HIPDNN_POINTWISE_MUL, dxhat, xhat, N, x);
    int64_t dyx = n->outputs[HIPDNN_NBWD_DSCALE] != N
                      ? pw(l, nm, "dy_xhat", HIPDNN_POINTWISE_MUL, dy, xhat, N, x) : N;
    int64_t b = reduce(l, nm, "avg_dxhat_xhat", HIPDNN_REDUCE_TENSOR_AVG, prod, sd, N);
    int64_t a = rms ? N : reduce(l, nm, "avg_dxhat", HIPDNN_REDUCE_TENSOR_AVG, dxhat, sd, N);
    if (dyx != N) reduce(l, nm, "dscale", HIPDNN_REDUCE_TENSOR_ADD, dyx, pd, n->outputs[HIPDNN_NBWD_DSCALE]);
    if (n->outputs[HIPDNN_NBWD_DBIAS] != N)
        reduce(l, nm, "dbias", HIPDNN_REDUCE_TENSOR_ADD, dy, pd, n->outputs[HIPDNN_NBWD_DBIAS]);
    int64_t v = pw(l, nm, "dxhat_minus", HIPDNN_POINTWISE_SUB, dxhat,
                   pw(l, nm, "xhat_times_avg", HIPDNN_POINTWISE_MUL, xhat, b, N, x), N, x);
    if (!rms) v = pw(l, nm, "dxhat_minus_avg", HIPDNN_POINTWISE_SUB, v, a, N, x);
    pw(l, nm, "dx", HIPDNN_POINTWISE_MUL, v, inv, n->outputs[HIPDNN_NBWD_DX], x);
    return !l->oom;
}

/* next_running = running + momentum * (stat - running) for the mean and the unbiased
 * variance (biased `var` times count / (count - 1)); `like` shapes the temporaries. */
static void running_updates(lowering* l, const hipdnnSdkNode* n, int64_t mean, int64_t var,
                            int64_t count, int64_t like) {
    const char* nm = n->name;
    const int64_t N = HIPDNN_NO_TENSOR, m = n->inputs[HIPDNN_NORM_EXP_AVG_FACTOR];
    int64_t uv = pw(l, nm, "unbiased_variance", HIPDNN_POINTWISE_MUL, var,
                    add_const(l, nm, "bessel", (double)count / (double)(count - 1)), N, like);
    const int64_t stat[2] = {mean, uv};
    const int64_t run[2] = {n->inputs[HIPDNN_NORM_IN_RUNNING_MEAN], n->inputs[HIPDNN_NORM_IN_RUNNING_VAR]};
    const int64_t out[2] = {n->outputs[HIPDNN_NORM_OUT_RUNNING_MEAN], n->outputs[HIPDNN_NORM_OUT_RUNNING_VAR]};
    static const char* const what[2][3] = {{"mean_step", "mean_step_scaled", "next_running_mean"},
                                            {"var_step", "var_step_scaled", "next_running_var"}};
    for (int k = 0; k < 2; ++k) {
        int64_t d = pw(l, nm, what[k][0], HIPDNN_POINTWISE_SUB, stat[k], run[k], N, like);
        pw(l, nm, what[k][2], HIPDNN_POINTWISE_ADD, run[k],
           pw(l, nm, what[k][1], HIPDNN_POINTWISE_MUL, d, m, N, like), out[k], like);
    }
}

/* Batchnorm training with running statistics: the norm node itself (rowwise_program.c
 * runs it), storing mean and inv_variance, then next = running + m * (stat - running). */
static bool lower_batchnorm_running(lowering* l, const hipdnnSdkNode* n) {
    hipdnnSdkNode norm = *n;
    const char* nm = n->name;
    const int64_t N = HIPDNN_NO_TENSOR;
    const hipdnnSdkTensor* tx = tensor(l, n->inputs[HIPDNN_NORM_X]);
    const hipdnnSdkTensor* ts = tensor(l, n->inputs[HIPDNN_NORM_SCALE]);
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
        norm.outputs[HIPDNN_NORM_MEAN] = add_tensor(l, nm, "mean", HIPDNN_DATA_FLOAT, nd, sd, NULL, true);
    if (norm.outputs[HIPDNN_NORM_INV_VARIANCE] == N)
        norm.outputs[HIPDNN_NORM_INV_VARIANCE] =
            add_tensor(l, nm, "inv_variance", HIPDNN_DATA_FLOAT, nd, sd, NULL, true);
    const int64_t mean = norm.outputs[HIPDNN_NORM_MEAN], inv = norm.outputs[HIPDNN_NORM_INV_VARIANCE];
    for (int p = HIPDNN_NORM_EXP_AVG_FACTOR; p <= HIPDNN_NORM_IN_RUNNING_VAR; ++p)
        norm.inputs[p] = N;
    norm.outputs[HIPDNN_NORM_OUT_RUNNING_MEAN] = norm.outputs[HIPDNN_NORM_OUT_RUNNING_VAR] = N;
    if (!push(l, &norm, NULL, NULL)) {
        free(name);
        return decline(l->why, l->len, "out of memory");
    }
    /* the biased variance is 1 / inv^2 - epsilon; unbiased times count / (count - 1) */
    const int64_t eps = n->inputs[HIPDNN_NORM_EPSILON];
    int64_t var = pw(l, nm, "variance", HIPDNN_POINTWISE_SUB,
                     pw(l, nm, "var_plus_eps", HIPDNN_POINTWISE_RECIPROCAL,
                        pw(l, nm, "inv_sq", HIPDNN_POINTWISE_MUL, inv, inv, N, inv), N, N, inv),
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
    const hipdnnSdkTensor* tx = tensor(l, x);
    const int32_t nd = tx->ndim;
    int64_t sd[HIPDNN_MAX_DIMS], count = 1;
    for (int32_t i = 0; i < nd; ++i) {
        sd[i] = axes[i] ? 1 : tx->dims[i];
        count *= axes[i] ? tx->dims[i] : 1;
    }
    int64_t mean = n->outputs[HIPDNN_NORM_MEAN];
    mean = reduce(l, nm, "mean", HIPDNN_REDUCE_TENSOR_AVG, x, sd, mean);
    int64_t d = pw(l, nm, "centered", HIPDNN_POINTWISE_SUB, x, mean, N, x);
    int64_t var = reduce(l, nm, "variance", HIPDNN_REDUCE_TENSOR_AVG,
                         pw(l, nm, "squares", HIPDNN_POINTWISE_MUL, d, d, N, x), sd, N);
    int64_t inv = pw(l, nm, "inv_variance", HIPDNN_POINTWISE_RSQRT,
                     pw(l, nm, "var_plus_eps", HIPDNN_POINTWISE_ADD, var, eps, N, var), N,
                     n->outputs[HIPDNN_NORM_INV_VARIANCE], var);
    int64_t gamma = scale;
    if (n->attrs[HIPDNN_NORM_ZERO_CENTERED_GAMMA].i[0])
        gamma = pw(l, nm, "gamma", HIPDNN_POINTWISE_ADD, scale, add_const(l, nm, "one", 1.0), N, scale);
    /* y recomputes x - mean in its own stage, so the centred values never reach memory */
    int64_t v = pw(l, nm, "normalized", HIPDNN_POINTWISE_MUL,
                   pw(l, nm, "centered_again", HIPDNN_POINTWISE_SUB, x, mean, N, x), inv, N, x);
    const int64_t y = n->outputs[HIPDNN_NORM_Y];
    if (bias != N) v = pw(l, nm, "scaled", HIPDNN_POINTWISE_MUL, v, gamma, N, x);
    pw(l, nm, bias != N ? "y" : "scaled", bias != N ? HIPDNN_POINTWISE_ADD : HIPDNN_POINTWISE_MUL, v,
       bias != N ? bias : gamma, y, x);
    if (n->outputs[HIPDNN_NORM_OUT_RUNNING_MEAN] != N) running_updates(l, n, mean, var, count, var);
    return !l->oom;
}

/* Whether a batchnorm's statistics can be taken a plane at a time: x is [N, C, spatial...]
 * with the spatial dims innermost and packed (a virtual x is packed), and planes long enough
 * that a row of the norm kernel is worth a launch's share of the GPU. */
#define PLANE_MIN 256
static bool planes_inner(const hipdnnSdkTensor* x) {
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
    planes_of(tensor(l, x), &pl);
    const int32_t nd = pl.nd;
    hipdnnSdkNode st = *n;
    st.attrs[HIPDNN_NORM_MODE].i[0] = HIPDNN_INSTANCE_NORM;
    for (int p = 0; p < HIPDNN_MAX_PORTS; ++p) st.inputs[p] = st.outputs[p] = N;
    st.inputs[HIPDNN_NORM_X] = x;
    st.inputs[HIPDNN_NORM_SCALE] = scale; /* not read: no y */
    st.inputs[HIPDNN_NORM_EPSILON] = add_const(l, nm, "zero", 0.0);
    st.outputs[HIPDNN_NORM_Y] = add_tensor(l, nm, "plane_y", HIPDNN_DATA_FLOAT, nd, pl.x, NULL, true);
    const int64_t mp = add_tensor(l, nm, "plane_mean", HIPDNN_DATA_FLOAT, nd, pl.plane, NULL, true);
    const int64_t ip = add_tensor(l, nm, "plane_inv", HIPDNN_DATA_FLOAT, nd, pl.plane, NULL, true);
    st.outputs[HIPDNN_NORM_MEAN] = mp;
    st.outputs[HIPDNN_NORM_INV_VARIANCE] = ip;
    if (!push(l, &st, nm, "plane_statistics")) return false;
    const int64_t mean = reduce(l, nm, "mean", HIPDNN_REDUCE_TENSOR_AVG, mp, pl.channel,
                                n->outputs[HIPDNN_NORM_MEAN]);
    int64_t vp = pw(l, nm, "plane_var", HIPDNN_POINTWISE_RECIPROCAL,
                    pw(l, nm, "plane_inv_sq", HIPDNN_POINTWISE_MUL, ip, ip, N, mp), N, N, mp);
    int64_t dm = pw(l, nm, "plane_shift", HIPDNN_POINTWISE_SUB, mp, mean, N, mp);
    int64_t m2 = pw(l, nm, "plane_m2", HIPDNN_POINTWISE_ADD, vp,
                    pw(l, nm, "plane_shift_sq", HIPDNN_POINTWISE_MUL, dm, dm, N, mp), N, mp);
    const int64_t var = reduce(l, nm, "variance", HIPDNN_REDUCE_TENSOR_AVG, m2, pl.channel, N);
    const int64_t inv = pw(l, nm, "inv_variance", HIPDNN_POINTWISE_RSQRT,
                           pw(l, nm, "var_plus_eps", HIPDNN_POINTWISE_ADD, var, eps, N, var), N,
                           n->outputs[HIPDNN_NORM_INV_VARIANCE], var);
    int64_t gamma = scale;
    if (n->attrs[HIPDNN_NORM_ZERO_CENTERED_GAMMA].i[0])
        gamma = pw(l, nm, "gamma", HIPDNN_POINTWISE_ADD, scale, add_const(l, nm, "one", 1.0), N, var);
    const int64_t a = pw(l, nm, "channel_scale", HIPDNN_POINTWISE_MUL, inv, gamma, N, var);
    const int64_t ma = pw(l, nm, "mean_scaled", HIPDNN_POINTWISE_MUL, mean, a, N, var);
    const int64_t b = bias != N ? pw(l, nm, "channel_shift", HIPDNN_POINTWISE_SUB, bias, ma, N, var)
                                : pw(l, nm, "channel_shift", HIPDNN_POINTWISE_NEG, ma, N, N, var);
    pw(l, nm, "y", HIPDNN_POINTWISE_ADD, pw(l, nm, "x_scaled", HIPDNN_POINTWISE_MUL, x, a, N, x), b,
       n->outputs[HIPDNN_NORM_Y], x);
    if (n->outputs[HIPDNN_NORM_OUT_RUNNING_MEAN] != N) running_updates(l, n, mean, var, pl.count, var);
    return !l->oom;
}

/* Batchnorm backward over few channels, a plane at a time: the row kernel's norm backward
 * over each plane, given the channel's mean and inv_variance, stores the plane's sums of
 * dy * xhat and of dy and no dx; the sums per channel are dscale and dbias, and
 * dx = k * dy - k * avg(dy) - (x - mean) * k * inv_variance * avg(dy * xhat), k =
 * inv_variance * gamma, in one pass over x and dy. */
static bool lower_batchnorm_backward_planes(lowering* l, const hipdnnSdkNode* n) {
    const char* nm = n->name;
    const int64_t N = HIPDNN_NO_TENSOR;
    const int64_t x = n->inputs[HIPDNN_NBWD_X], dy = n->inputs[HIPDNN_NBWD_DY];
    const int64_t scale = n->inputs[HIPDNN_NBWD_SCALE], mean = n->inputs[HIPDNN_NBWD_MEAN];
    const int64_t inv = n->inputs[HIPDNN_NBWD_INV_VARIANCE];
    planes pl;
    planes_of(tensor(l, x), &pl);
    const int32_t nd = pl.nd;
    hipdnnSdkNode sums = *n;
    sums.attrs[HIPDNN_NBWD_MODE].i[0] = HIPDNN_INSTANCE_NORM;
    sums.attrs[HIPE_NBWD_SUMS].i[0] = HIPE_NBWD_ROW_SUMS;
    sums.attrs[HIPE_NBWD_SUMS].i[1] = 1;
    sums.attrs[HIPE_NBWD_SUMS].count = 2;
    const int64_t sdyx = add_tensor(l, nm, "plane_sum_dy_xhat", HIPDNN_DATA_FLOAT, nd, pl.plane, NULL, true);
    const int64_t sdy = add_tensor(l, nm, "plane_sum_dy", HIPDNN_DATA_FLOAT, nd, pl.plane, NULL, true);
    sums.outputs[HIPDNN_NBWD_DX] = add_tensor(l, nm, "plane_dx", HIPDNN_DATA_FLOAT, nd, pl.x, NULL, true);
    sums.outputs[HIPDNN_NBWD_DSCALE] = sdyx;
    sums.outputs[HIPDNN_NBWD_DBIAS] = sdy;
    if (!push(l, &sums, nm, "plane_sums")) return false;
    const int64_t s_dyx = reduce(l, nm, "dscale", HIPDNN_REDUCE_TENSOR_ADD, sdyx, pl.channel,
                                 n->outputs[HIPDNN_NBWD_DSCALE]);
    const int64_t s_dy = reduce(l, nm, "dbias", HIPDNN_REDUCE_TENSOR_ADD, sdy, pl.channel,
                                n->outputs[HIPDNN_NBWD_DBIAS]);
    const int64_t per = add_const(l, nm, "one_over_count", 1.0 / (double)pl.count);
    int64_t gamma = scale;
    if (n->attrs[HIPDNN_NBWD_ZERO_CENTERED_GAMMA].i[0])
        gamma = pw(l, nm, "gamma", HIPDNN_POINTWISE_ADD, scale, add_const(l, nm, "one", 1.0), N, s_dy);
    const int64_t k = pw(l, nm, "gamma_inv", HIPDNN_POINTWISE_MUL, inv, gamma, N, s_dy);
    const int64_t a = pw(l, nm, "k_avg_dy", HIPDNN_POINTWISE_MUL, k,
                         pw(l, nm, "avg_dy", HIPDNN_POINTWISE_MUL, s_dy, per, N, s_dy), N, s_dy);
    const int64_t c = pw(l, nm, "k_inv_avg_dy_xhat", HIPDNN_POINTWISE_MUL,
                         pw(l, nm, "k_inv", HIPDNN_POINTWISE_MUL, k, inv, N, s_dy),
                         pw(l, nm, "avg_dy_xhat", HIPDNN_POINTWISE_MUL, s_dyx, per, N, s_dy), N, s_dy);
    int64_t t = pw(l, nm, "dy_scaled", HIPDNN_POINTWISE_MUL, dy, k, N, x);
    t = pw(l, nm, "dy_minus_avg", HIPDNN_POINTWISE_SUB, t, a, N, x);
    const int64_t xc = pw(l, nm, "centered", HIPDNN_POINTWISE_SUB, x, mean, N, x);
    pw(l, nm, "dx", HIPDNN_POINTWISE_SUB, t, pw(l, nm, "centered_scaled", HIPDNN_POINTWISE_MUL, xc, c, N, x),
       n->outputs[HIPDNN_NBWD_DX], x);
    return !l->oom;
}

static bool lower_genstats(lowering* l, const hipdnnSdkNode* n) {
    const char* nm = n->name;
    const int64_t x = n->inputs[HIPDNN_GENSTATS_X];
    const hipdnnSdkTensor* tx = tensor(l, x);
    if (!tx || tx->ndim < 2)
        return decline(l->why, l->len, "node '%s' (genstats): x missing or of rank below 2", nm);
    int64_t cd[HIPDNN_MAX_DIMS];
    for (int i = 0; i < tx->ndim; ++i) cd[i] = i == 1 ? tx->dims[1] : 1;
    if (n->outputs[HIPDNN_GENSTATS_SUM] != HIPDNN_NO_TENSOR)
        reduce(l, nm, "sum", HIPDNN_REDUCE_TENSOR_ADD, x, cd, n->outputs[HIPDNN_GENSTATS_SUM]);
    if (n->outputs[HIPDNN_GENSTATS_SQSUM] != HIPDNN_NO_TENSOR) {
        /* the sum of squares as a squared 2-norm: one pass over x, nothing of x's size
           written */
        int64_t n2 = reduce(l, nm, "norm2", HIPDNN_REDUCE_TENSOR_NORM2, x, cd, HIPDNN_NO_TENSOR);
        pw(l, nm, "sq_sum", HIPDNN_POINTWISE_MUL, n2, n2, n->outputs[HIPDNN_GENSTATS_SQSUM], n2);
    }
    return !l->oom;
}

static bool lower_slice(lowering* l, const hipdnnSdkNode* n) {
    const char* nm = n->name;
    const hipdnnSdkTensor *tx = tensor(l, n->inputs[0]), *ty = tensor(l, n->outputs[0]);
    const hipdnnSdkAttrValue* a = n->attrs;
    if (!tx || !ty || tx->ndim != ty->ndim || a[HIPDNN_SLICE_LIMIT].count != tx->ndim)
        return decline(l->why, l->len, "node '%s' (slice): x, y or limit do not match", nm);
    int64_t st[HIPDNN_MAX_DIMS], xs[HIPDNN_MAX_DIMS], offset = 0, dims[HIPDNN_MAX_DIMS];
    strides_after_keep(tx, xs);
    const int32_t nd = tx->ndim;
    for (int32_t i = 0; i < nd; ++i) {
        int64_t start = a[HIPDNN_SLICE_START].count ? a[HIPDNN_SLICE_START].i[i] : 0;
        int64_t step = a[HIPDNN_SLICE_STEP].count ? a[HIPDNN_SLICE_STEP].i[i] : 1;
        int64_t limit = a[HIPDNN_SLICE_LIMIT].i[i];
        if (start < 0 || step < 1 || start >= limit || limit > tx->dims[i] ||
            ty->dims[i] != (limit - start + step - 1) / step)
            return decline(l->why, l->len, "node '%s' (slice): dim %d: start %lld, limit %lld, "
                           "step %lld do not give y's %lld of x's %lld", nm, (int)i,
                           (long long)start, (long long)limit, (long long)step,
                           (long long)ty->dims[i], (long long)tx->dims[i]);
        offset += start * xs[i];
        st[i] = xs[i] * step;
        dims[i] = ty->dims[i];
    }
    const int64_t y = ty->uid;
    int64_t v = view(l, nm, "window", tx->uid, nd, dims, st, offset);
    return pw(l, nm, "copy", HIPDNN_POINTWISE_IDENTITY, v, HIPDNN_NO_TENSOR, y, y) !=
           HIPDNN_NO_TENSOR;
}

static bool lower_concatenate(lowering* l, const hipdnnSdkNode* n) {
    const char* nm = n->name;
    const hipdnnSdkTensor* ty = tensor(l, n->outputs[0]);
    const int64_t axis = n->attrs[HIPDNN_CONCAT_AXIS].i[0];
    if (!ty || axis < 0 || axis >= ty->ndim)
        return decline(l->why, l->len, "node '%s' (concatenate): y missing or axis %lld outside "
                       "its rank", nm, (long long)axis);
    const int64_t y = ty->uid;
    int64_t ys[HIPDNN_MAX_DIMS], at = 0, total = 0;
    strides_after_keep(ty, ys);
    const int32_t nd = ty->ndim;
    for (int k = 0; k < HIPDNN_MAX_PORTS; ++k) {
        if (n->inputs[k] == HIPDNN_NO_TENSOR) continue;
        const hipdnnSdkTensor* tx = tensor(l, n->inputs[k]);
        bool ok = tx && tx->ndim == nd;
        for (int32_t i = 0; ok && i < nd; ++i) ok = i == axis || tx->dims[i] == ty->dims[i];
        if (!ok)
            return decline(l->why, l->len, "node '%s' (concatenate): x%d's dims do not match "
                           "y's off axis %lld", nm, k, (long long)axis);
        total += tx->dims[axis];
    }
    if (total != ty->dims[axis])
        return decline(l->why, l->len, "node '%s' (concatenate): the inputs give %lld along axis "
                       "%lld but y has %lld", nm, (long long)total, (long long)axis,
                       (long long)ty->dims[axis]);
    for (int k = 0; k < HIPDNN_MAX_PORTS; ++k) {
        if (n->inputs[k] == HIPDNN_NO_TENSOR) continue;
        const int64_t x = n->inputs[k];
        int64_t dims[HIPDNN_MAX_DIMS];
        memcpy(dims, tensor(l, y)->dims, sizeof(dims));
        dims[axis] = tensor(l, x)->dims[axis];
        char what[32];
        hipdnnSdkFormat(what, sizeof(what), "part%d", k);
        int64_t v = view(l, nm, what, y, nd, dims, ys, at * ys[axis]);
        hipdnnSdkFormat(what, sizeof(what), "copy%d", k);
        if (pw(l, nm, what, HIPDNN_POINTWISE_IDENTITY, x, HIPDNN_NO_TENSOR, v, v) == HIPDNN_NO_TENSOR)
            return false;
        at += dims[axis];
    }
    return true;
}

static bool lower_reshape(lowering* l, const hipdnnSdkNode* n) {
    const char* nm = n->name;
    const hipdnnSdkTensor *tx = tensor(l, n->inputs[HIPDNN_RESHAPE_X]),
                          *ty = tensor(l, n->outputs[HIPDNN_RESHAPE_Y]);
    if (!tx || !ty || hipdnnSdkElementCount(tx->ndim, tx->dims) != hipdnnSdkElementCount(ty->ndim, ty->dims))
        return decline(l->why, l->len, "node '%s' (reshape): x and y missing or of different "
                       "element counts", nm);
    const int64_t mode = n->attrs[HIPDNN_RESHAPE_MODE_SLOT].i[0];
    int64_t x = tx->uid, xs[HIPDNN_MAX_DIMS], ys[HIPDNN_MAX_DIMS], packed[HIPDNN_MAX_DIMS];
    const int64_t y = ty->uid;
    int32_t ynd = ty->ndim;
    int64_t ydims[HIPDNN_MAX_DIMS];
    memcpy(ydims, ty->dims, sizeof(ydims));
    strides_after_keep(tx, xs);
    if (mode == HIPDNN_RESHAPE_VIEW_ONLY) {
        /* y's strides describe x's memory, where both are dense (the reference's rule) */
        if (!dense(tx->ndim, tx->dims, xs) ||
            !dense(ty->ndim, ty->dims, ty->strides))
            return decline(l->why, l->len, "node '%s' (reshape view_only): x '%s' or y '%s' is "
                           "not dense (packed in some dim order)", nm, tx->name, ty->name);
        memcpy(ys, ty->strides, sizeof(ys));
    } else {
        /* y = x in row-major order: a packed x is read as y's dims; any other is first
           copied packed */
        hipdnnSdkPackedStrides(tx->ndim, tx->dims, packed);
        bool is_packed = true;
        for (int32_t i = 0; i < tx->ndim; ++i) is_packed = is_packed && (tx->dims[i] == 1 || xs[i] == packed[i]);
        if (!is_packed) {
            int64_t dims[HIPDNN_MAX_DIMS];
            memcpy(dims, tx->dims, sizeof(dims));
            int64_t t = add_tensor(l, nm, "packed", tx->data_type, tx->ndim, dims, NULL, true);
            x = pw(l, nm, "pack", HIPDNN_POINTWISE_IDENTITY, x, HIPDNN_NO_TENSOR, t, t);
        }
        hipdnnSdkPackedStrides(ynd, ydims, ys);
    }
    int64_t v = view(l, nm, "as_y", x, ynd, ydims, ys, 0);
    return pw(l, nm, "copy", HIPDNN_POINTWISE_IDENTITY, v, HIPDNN_NO_TENSOR, y, y) != HIPDNN_NO_TENSOR;
}

/* ---- the rewrite ----------------------------------------------------------------------- */

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

static bool lowers(const hipdnnSdkGraph* g, const hipdnnSdkNode* n) {
    switch (n->kind) {
    case HIPDNN_OP_NORM_BACKWARD:
    case HIPDNN_OP_GENSTATS:
    case HIPDNN_OP_SLICE:
    case HIPDNN_OP_CONCATENATE:
    case HIPDNN_OP_RESHAPE: return true;
    default: return has_running_stats(n) || few_channel_batchnorm(g, n);
    }
}

void hipe_lowered_free(hipe_lowered* lw) {
    hipdnnSdkGraphFree(lw->graph);
    free(lw->alias);
    free(lw->ws);
    memset(lw, 0, sizeof(*lw));
}

bool hipe_lower(const hipdnnSdkGraph* g, hipe_lowered* lw, char* why, size_t len) {
    memset(lw, 0, sizeof(*lw));
    bool any = false;
    for (int32_t i = 0; i < g->num_nodes; ++i) any = any || lowers(g, &g->nodes[i]);
    if (!any) return true;
    lowering l = {.why = why, .len = len};
    l.g = hipdnnSdkGraphClone(g);
    if (!l.g) return decline(why, len, "out of memory while compiling graph '%s'", g->name);
    l.tcap = l.g->num_tensors;
    for (int32_t i = 0; i < g->num_tensors; ++i)
        if (g->tensors[i].uid >= l.next_uid) l.next_uid = g->tensors[i].uid + 1;
    if (l.next_uid < 1) l.next_uid = 1;
    hipdnnSdkNode* old = l.g->nodes; /* the clone's nodes; their names move or are freed */
    const int32_t nold = l.g->num_nodes;
    l.g->nodes = NULL;
    l.g->num_nodes = 0;
    bool ok = true;
    int32_t i = 0;
    for (; i < nold && ok; ++i) {
        hipdnnSdkNode* n = &old[i];
        switch (lowers(g, n) ? (int)n->kind : -1) {
        case HIPDNN_OP_NORM_BACKWARD: ok = lower_norm_backward(&l, n); break;
        case HIPDNN_OP_NORM_FORWARD:
            if (few_channel_batchnorm(g, n)) {
                bool axes[HIPDNN_MAX_DIMS];
                hipdnnSdkNormAxes(n, tensor(&l, n->inputs[HIPDNN_NORM_X]),
                                  tensor(&l, n->inputs[HIPDNN_NORM_SCALE]), axes);
                ok = planes_inner(tensor(&l, n->inputs[HIPDNN_NORM_X])) ? lower_batchnorm_planes(&l, n)
                                                                        : lower_batchnorm_split(&l, n, axes);
            } else {
                ok = lower_batchnorm_running(&l, n);
            }
            break;
        case HIPDNN_OP_GENSTATS: ok = lower_genstats(&l, n); break;
        case HIPDNN_OP_SLICE: ok = lower_slice(&l, n); break;
        case HIPDNN_OP_CONCATENATE: ok = lower_concatenate(&l, n); break;
        case HIPDNN_OP_RESHAPE: ok = lower_reshape(&l, n); break;
        default:
            ok = push(&l, n, NULL, NULL);
            if (ok) n->name = NULL; /* moved */
            break;
        }
        if (l.oom && ok) ok = false;
        if (l.oom) decline(why, len, "out of memory while compiling graph '%s'", g->name);
    }
    for (int32_t k = 0; k < nold; ++k) free(old[k].name);
    free(old);
    if (!ok) {
        hipdnnSdkGraphFree(l.g);
        free(l.alias);
        free(l.ws);
        return false;
    }
    lw->graph = l.g;
    lw->alias = l.alias;
    lw->nalias = l.nalias;
    lw->ws = l.ws;
    lw->nws = l.nws;
    return true;
}
