/* Norms compiled into row-wise programs (rowwise.h): layer, RMS, instance, adaptive layer
 * and batch (training) norms forward, with the pointwise nodes after y as the kernel's
 * epilogue, and norm backward with the sums dscale and dbias come from (row sums, or
 * column sums of groups of rows: lower.c). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rowwise.h"

/* The tensors of a norm_forward node (bias, mean and inv_variance may be NULL). */
typedef struct {
    const hipdnnSdkTensor *x, *scale, *bias, *eps, *y, *mean, *inv;
} norm_tensors;

/* The modes and phase the kernel runs, and fp32 compute; 0 with the reason. */
static int norm_mode_ok(const hipdnnSdkNode* n, int64_t mode, const char* label, char* why, size_t len) {
    if (mode == HIPDNN_BATCH_NORM && n->attrs[HIPDNN_NORM_PHASE].i[0] != HIPDNN_NORM_FWD_TRAINING)
        return decline(why, len, "%s: batchnorm runs in the training phase (inference is the "
                       "batchnorm_inference operation)", label);
    if (mode == HIPDNN_BATCH_NORM && n->inputs[HIPDNN_NORM_IN_RUNNING_MEAN] != HIPDNN_NO_TENSOR)
        return decline(why, len, "%s: internal: running statistics reach the norm kernel", label);
    if (mode != HIPDNN_BATCH_NORM && mode != HIPDNN_LAYER_NORM && mode != HIPDNN_RMS_NORM && mode != HIPDNN_INSTANCE_NORM &&
        mode != HIPDNN_ADA_LAYER_NORM)
        return decline(why, len, "%s: norm mode %lld not supported", label, (long long)mode);
    return rwc_compute_ok(n, label, why, len);
}

/* The node's tensors, found and checked; 0 with the reason. */
static int norm_tensors_of(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, norm_tensors* t,
                           const char* label, char* why, size_t len) {
    t->x = rwc_find(g, n->inputs[HIPDNN_NORM_X]);
    t->scale = rwc_find(g, n->inputs[HIPDNN_NORM_SCALE]);
    t->bias = rwc_find(g, n->inputs[HIPDNN_NORM_BIAS]);
    t->eps = rwc_find(g, n->inputs[HIPDNN_NORM_EPSILON]);
    t->y = rwc_find(g, n->outputs[HIPDNN_NORM_Y]);
    t->mean = rwc_find(g, n->outputs[HIPDNN_NORM_MEAN]);
    t->inv = rwc_find(g, n->outputs[HIPDNN_NORM_INV_VARIANCE]);
    if (!t->x || !t->scale || !t->eps || !t->y)
        return decline(why, len, "%s: x, scale, epsilon or y is not in the graph", label);
    if (!rwc_tensor_ok(t->x, label, "x", false, why, len) ||
        !rwc_tensor_ok(t->scale, label, "scale", false, why, len) ||
        (t->bias && !rwc_tensor_ok(t->bias, label, "bias", false, why, len)) ||
        !rwc_tensor_ok(t->y, label, "y", true, why, len) ||
        (t->mean && !rwc_tensor_ok(t->mean, label, "mean", true, why, len)) ||
        (t->inv && !rwc_tensor_ok(t->inv, label, "inv_variance", true, why, len)))
        return 0;
    if (!t->eps->is_by_value || hipdnnSdkDataTypeSize(t->eps->data_type) == 0)
        return decline(why, len, "%s: epsilon '%s' (uid %lld) must be a pass-by-value scalar", label,
                       t->eps->name, (long long)t->eps->uid);
    return 1;
}

/* The epilogue's tensors join the row space: their strides replace the program's own (its
 * iteration space is the norm's; y: the norm's y or a backward's dx, in slot ep_y).  0
 * with the reason. */
static int epilogue_space_of(const hipdnnSdkGraph* g, const hipe_plan* ep, const hipdnnSdkTensor* x,
                             const hipdnnSdkTensor* y, space* s, rw_program* p, const char* label,
                             char* why, size_t len) {
    p->ep = ep->prog;
    p->ep_y = -1;
    for (int i = 0; i < ep->prog.nin; ++i) {
        const hipdnnSdkTensor* e = rwc_find(g, ep->in_uid[i]);
        if (!e) return decline(why, len, "%s: an epilogue input is not in the graph", label);
        if (e->uid == y->uid) p->ep_y = i;
        if (!rwc_space_add(s, e, &p->ep.in[i], label, "epilogue input", why, len)) return 0;
        p->ep.in[i].dtype = ep->prog.in[i].dtype;
    }
    for (int i = 0; i < ep->prog.nout; ++i) {
        const hipdnnSdkTensor* e = rwc_find(g, ep->out_uid[i]);
        if (!e) return decline(why, len, "%s: an epilogue output is not in the graph", label);
        bool same = e->ndim == x->ndim;
        for (int k = 0; same && k < x->ndim; ++k) same = e->dims[k] == x->dims[k];
        if (!same)
            return decline(why, len, "%s: epilogue output '%s' (uid %lld) is not shaped as x",
                           label, e->name, (long long)e->uid);
        if (!rwc_space_add(s, e, &p->ep.out[i], label, "epilogue output", why, len)) return 0;
        p->ep.out[i].dtype = ep->prog.out[i].dtype;
    }
    if (p->ep_y < 0) return decline(why, len, "%s: the epilogue does not read %s", label, y->name);
    return 1;
}

/* The epilogue's program over the norm's columns, and its pointers and runtime scalars but
 * y (which the kernel hands it in registers). */
static void epilogue_bind(hipe_stage* st, const hipe_plan* ep) {
    rw_program* p = &st->rw;
    p->flags |= RW_F_EPILOGUE;
    p->ep.ndim = p->ncd;
    p->ep.n = p->rows * p->cols;
    for (int d = 0; d < PW_MAX_DIMS; ++d) p->ep.dims[d] = d < RW_DIMS ? p->cdims[d] : 1;
    for (int i = 0; i < ep->prog.nin; ++i)
        if (i != p->ep_y) rwc_bind(st, ep->in_uid[i], offsetof(rw_program, ep.in) + i * sizeof(pw_tensor), -1);
    for (int i = 0; i < ep->prog.nout; ++i)
        rwc_bind(st, ep->out_uid[i], offsetof(rw_program, ep.out) + i * sizeof(pw_tensor), -1);
    for (int i = 0; i < ep->nscalars; ++i)
        if (ep->scalar_uid[i] >= 0)
            rwc_bind(st, ep->scalar_uid[i], offsetof(rw_program, ep.scalar) + i * sizeof(float),
                     ep->scalar_dtype[i]);
}

/* The norm's pointers, and epsilon: a constant in the program, or a runtime scalar. */
static void norm_bind(hipe_stage* st, const norm_tensors* t) {
    rw_program* p = &st->rw;
    rwc_bind(st, t->x->uid, PTR(x), -1);
    rwc_bind(st, t->scale->uid, PTR(scale), -1);
    if (t->bias) rwc_bind(st, t->bias->uid, PTR(bias), -1);
    if (p->flags & RW_F_STORE_Y) rwc_bind(st, t->y->uid, PTR(y), -1);
    if (p->flags & RW_F_MEAN) rwc_bind(st, t->mean->uid, PTR(mean), -1);
    if (p->flags & RW_F_INV_VAR) rwc_bind(st, t->inv->uid, PTR(inv_var), -1);
    if (t->eps->has_value)
        p->eps = (float)hipdnnSdkLoadAsDouble(t->eps->value, t->eps->data_type, 0);
    else
        rwc_bind(st, t->eps->uid, offsetof(rw_program, eps), t->eps->data_type);
}

/* The stage's line in the log. */
static void norm_describe(hipe_stage* st, const char* mname, const char* name, bool ep) {
    const rw_program* p = &st->rw;
    char shape[96];
    if (p->flags & RW_F_PACKED)
        hipdnnSdkFormat(shape, sizeof(shape), "each held as loaded by %d threads (%d vectors a "
                        "thread)", p->group, p->vecs);
    else if (p->vecs)
        hipdnnSdkFormat(shape, sizeof(shape), "each in the registers of %d threads (%d vectors a "
                        "thread)", p->group, p->vecs);
    else
        hipdnnSdkFormat(shape, sizeof(shape), "%d threads a row, read again (too long for "
                        "registers)", p->group);
    hipdnnSdkFormat(st->what, sizeof(st->what), "%s '%s': %lld rows of %lld, %s%s", mname, name,
                    (long long)p->rows, (long long)p->cols, shape,
                    ep ? ", with its pointwise epilogue" : "");
}

int hipe_rw_norm(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, const hipe_plan* ep,
                 hipe_stage* st, char* why, size_t len) {
    char label[200];
    const int64_t mode = n->attrs[HIPDNN_NORM_MODE].i[0];
    const char* mname = hipdnnSdkNormModeName(mode);
    hipdnnSdkFormat(label, sizeof(label), "node '%s' (norm_forward %s)", n->name, mname ? mname : "?");
    norm_tensors t;
    if (!norm_mode_ok(n, mode, label, why, len) || !norm_tensors_of(g, n, &t, label, why, len))
        return 0;
    memset(st, 0, sizeof(*st));
    st->kind = HIPE_STAGE_ROWWISE;
    rw_program* p = &st->rw;
    p->kind = RW_NORM;
    p->mode = mode == HIPDNN_RMS_NORM ? RW_RMS : RW_LAYER;
    p->splits = 1;
    bool col[HIPDNN_MAX_DIMS];
    hipdnnSdkNormAxes(n, t.x, t.scale, col);
    space s;
    rwc_space_init(&s, t.x, col);
    bool ok = rwc_space_add(&s, t.x, &p->x, label, "x", why, len) &&
              rwc_space_add(&s, t.y, &p->y, label, "y", why, len) &&
              rwc_space_add(&s, t.scale, &p->scale, label, "scale", why, len) &&
              (!t.bias || rwc_space_add(&s, t.bias, &p->bias, label, "bias", why, len)) &&
              (!t.mean || rwc_space_add(&s, t.mean, &p->mean, label, "mean", why, len)) &&
              (!t.inv || rwc_space_add(&s, t.inv, &p->inv_var, label, "inv_variance", why, len));
    if (!ok || (ep && !epilogue_space_of(g, ep, t.x, t.y, &s, p, label, why, len)) ||
        !rwc_space_lay_out(&s, p, label, why, len))
        return 0;
    p->flags = (t.y->is_virtual ? 0u : RW_F_STORE_Y) | (t.bias ? RW_F_BIAS : 0u) |
               (t.mean && !t.mean->is_virtual ? RW_F_MEAN : 0u) |
               (t.inv && !t.inv->is_virtual ? RW_F_INV_VAR : 0u) |
               (n->attrs[HIPDNN_NORM_ZERO_CENTERED_GAMMA].i[0] ? RW_F_GAMMA1 : 0u);
    rwc_register_geometry(p, rwc_storage_size(p->x.dtype), ep != NULL, false);
    norm_bind(st, &t);
    if (ep) epilogue_bind(st, ep);
    norm_describe(st, mname, n->name, ep != NULL);
    return 1;
}

/* ---- norm backward ------------------------------------------------------------------------ */

/* A row in the registers of its group: up to two vectors a thread (xhat and g of each are
 * kept, and with column parts two sums a column more): rows up to 8192 elements; longer
 * ones are read again (vecs 0). */
static void bwd_geometry(rw_program* p) {
    const int64_t nvec = ceil_div(p->cols, PW_VEC);
    if (nvec <= 32) {
        p->group = (int32_t)pow2_at_least(nvec);
        p->vecs = 1;
        return;
    }
    /* HIPDNN_HIP_ROW_VECTORS 1 or 2 sets the vectors a thread holds, as for the norms */
    const char* want = getenv("HIPDNN_HIP_ROW_VECTORS");
    int64_t g = pow2_at_least(ceil_div(nvec, want && !strcmp(want, "1") ? 1 : 2));
    if (g > RW_MAX_GROUP) g = RW_MAX_GROUP;
    const int64_t v = pow2_at_least(ceil_div(nvec, g));
    p->group = (int32_t)g;
    p->vecs = v <= 2 ? (int32_t)v : 0; /* more kernel variants cost minutes of nvcc and hipcc */
}

bool hipe_rw_norm_bwd_parts_fit(int64_t cols) {
    rw_program p;
    memset(&p, 0, sizeof(p));
    p.cols = cols;
    bwd_geometry(&p);
    return cols < (INT64_C(1) << 31) && (p.vecs == 1 || p.vecs == 2);
}

/* Column parts over part_sets sets of rows (lower.c): the rows of a set must be consecutive
 * in the kernel's row order, with one row of scale each, so the outer row dims are the
 * sets' and scale does not move over the inner ones, whose rows make a set.  The rows a
 * set has, or false. */
static bool sets_of_rows(const rw_program* p, int64_t* set_rows) {
    if (p->part_sets < 1 || p->rows % p->part_sets) return false;
    *set_rows = p->rows / p->part_sets;
    int64_t inner = 1;
    for (int d = p->nrd - 1; d >= 0 && inner < *set_rows; --d) {
        if (p->scale.strides[d] != 0) return false;
        inner *= p->rdims[d];
    }
    return inner == *set_rows;
}

/* The tensors of a norm_backward node (mean NULL for RMS; dscale and dbias may be). */
typedef struct {
    const hipdnnSdkTensor *x, *dy, *scale, *mean, *inv, *dx, *sdyx, *sdy;
} nbwd_tensors;

/* The node's tensors, found and checked (dscale and dbias where the caller adds them to the
 * row space); 0 with the reason. */
static int nbwd_tensors_of(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, bool rms, nbwd_tensors* t,
                           const char* label, char* why, size_t len) {
    t->x = rwc_find(g, n->inputs[HIPDNN_NBWD_X]);
    t->dy = rwc_find(g, n->inputs[HIPDNN_NBWD_DY]);
    t->scale = rwc_find(g, n->inputs[HIPDNN_NBWD_SCALE]);
    t->mean = rwc_find(g, n->inputs[HIPDNN_NBWD_MEAN]);
    t->inv = rwc_find(g, n->inputs[HIPDNN_NBWD_INV_VARIANCE]);
    t->dx = rwc_find(g, n->outputs[HIPDNN_NBWD_DX]);
    t->sdyx = rwc_find(g, n->outputs[HIPDNN_NBWD_DSCALE]);
    t->sdy = rwc_find(g, n->outputs[HIPDNN_NBWD_DBIAS]);
    if (!t->x || !t->dy || !t->scale || !t->inv || !t->dx || (!rms && !t->mean))
        return decline(why, len, "%s: x, dy, scale, statistics or dx is not in the graph", label);
    if (!rwc_tensor_ok(t->x, label, "x", false, why, len) || !rwc_tensor_ok(t->dy, label, "dy", false, why, len) ||
        !rwc_tensor_ok(t->scale, label, "scale", false, why, len) ||
        !rwc_tensor_ok(t->inv, label, "inv_variance", false, why, len) ||
        (!rms && !rwc_tensor_ok(t->mean, label, "mean", false, why, len)) ||
        !rwc_tensor_ok(t->dx, label, "dx", true, why, len))
        return 0;
    return 1;
}

/* Column sums of part_groups groups of rows in each of part_sets sets (attribute slot
 * HIPE_NBWD_SUMS): the rows must fit the registers, the sets be whole, and dscale and
 * dbias be the fp32 parts.  0 with the reason. */
static int col_parts(rw_program* p, const hipdnnSdkNode* n, const nbwd_tensors* t, const char* label,
                     char* why, size_t len) {
    p->part_groups = n->attrs[HIPE_NBWD_SUMS].i[1];
    p->part_sets = n->attrs[HIPE_NBWD_SUMS].count > 2 ? n->attrs[HIPE_NBWD_SUMS].i[2] : 1;
    if (p->vecs != 1 && p->vecs != 2)
        return decline(why, len, "%s: rows of %lld: too long for column sums in registers",
                       label, (long long)p->cols);
    if (!sets_of_rows(p, &p->set_rows) || p->part_groups < 1 || p->part_groups > p->set_rows ||
        p->part_sets * p->part_groups > HIPE_NBWD_PARTS + p->part_sets)
        return decline(why, len, "%s: internal: %lld column parts for %lld sets of rows (%lld "
                       "rows, scale not one row a set)", label, (long long)p->part_groups,
                       (long long)p->part_sets, (long long)p->rows);
    p->flags |= RW_F_COL_PARTS;
    p->sum_dyx.dtype = p->sum_dy.dtype = PW_F32;
    const hipdnnSdkTensor* outs[2] = {t->sdyx, t->sdy};
    for (int i = 0; i < 2; ++i) {
        const hipdnnSdkTensor* o = outs[i];
        if (o && (o->data_type != HIPDNN_DATA_FLOAT ||
                  hipdnnSdkElementCount(o->ndim, o->dims) != p->part_sets * p->part_groups * p->cols))
            return decline(why, len, "%s: internal: column parts '%s' are not fp32 [%lld, %lld]",
                           label, o->name, (long long)(p->part_sets * p->part_groups),
                           (long long)p->cols);
    }
    return 1;
}

static void nbwd_bind(hipe_stage* st, const nbwd_tensors* t, bool rms) {
    rwc_bind(st, t->x->uid, PTR(x), -1);
    rwc_bind(st, t->dy->uid, PTR(dy), -1);
    rwc_bind(st, t->scale->uid, PTR(scale), -1);
    rwc_bind(st, t->inv->uid, PTR(inv_var), -1);
    if (!rms) rwc_bind(st, t->mean->uid, PTR(mean), -1);
    if (st->rw.flags & RW_F_STORE_Y) rwc_bind(st, t->dx->uid, PTR(y), -1);
    if (t->sdyx) rwc_bind(st, t->sdyx->uid, PTR(sum_dyx), -1);
    if (t->sdy) rwc_bind(st, t->sdy->uid, PTR(sum_dy), -1);
}

/* The stage's line in the log. */
static void nbwd_describe(hipe_stage* st, const char* mname, const char* name, int64_t sums) {
    const rw_program* p = &st->rw;
    char sets[64] = "";
    if (sums == HIPE_NBWD_COL_PARTS && p->part_sets > 1)
        hipdnnSdkFormat(sets, sizeof(sets), " in %lld sets of %lld rows (a scale row each)",
                        (long long)p->part_sets, (long long)p->set_rows);
    hipdnnSdkFormat(st->what, sizeof(st->what), "%s '%s': %lld rows of %lld, %d threads a row%s%s%s%s%s",
                    mname, name, (long long)p->rows, (long long)p->cols, p->group,
                    p->vecs ? "" : ", read twice (too long for registers)",
                    p->flags & (RW_F_STORE_Y | RW_F_EPILOGUE) ? "" : ", no dx",
                    sums == HIPE_NBWD_ROW_SUMS ? ", with the rows' sums"
                                               : ", with column sums per group", sets,
                    p->flags & RW_F_EPILOGUE ? ", with its pointwise epilogue" : "");
}

int hipe_rw_norm_backward(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, const hipe_plan* ep,
                          hipe_stage* st, char* why, size_t len) {
    char label[200];
    const int64_t mode = n->attrs[HIPDNN_NBWD_MODE].i[0];
    const char* mname = hipdnnSdkNormBackwardName(mode);
    hipdnnSdkFormat(label, sizeof(label), "node '%s' (%s)", n->name, mname ? mname : "norm_backward");
    const int64_t sums = n->attrs[HIPE_NBWD_SUMS].i[0];
    if (!mname || mode == HIPDNN_GROUP_NORM || (sums != HIPE_NBWD_ROW_SUMS && sums != HIPE_NBWD_COL_PARTS))
        return decline(why, len, "%s: internal: not a norm backward this kernel takes", label);
    if (!rwc_compute_ok(n, label, why, len)) return 0;
    const bool rms = mode == HIPDNN_RMS_NORM;
    nbwd_tensors t;
    if (!nbwd_tensors_of(g, n, rms, &t, label, why, len)) return 0;
    memset(st, 0, sizeof(*st));
    st->kind = HIPE_STAGE_ROWWISE;
    rw_program* p = &st->rw;
    p->kind = RW_NORM_BWD;
    p->mode = rms ? RW_RMS : RW_LAYER;
    p->splits = 1;
    bool col[HIPDNN_MAX_DIMS];
    hipdnnSdkNormAxes(n, t.x, t.scale, col);
    space s;
    rwc_space_init(&s, t.x, col);
    bool ok = rwc_space_add(&s, t.x, &p->x, label, "x", why, len) &&
              rwc_space_add(&s, t.dx, &p->y, label, "dx", why, len) &&
              rwc_space_add(&s, t.dy, &p->dy, label, "dy", why, len) &&
              rwc_space_add(&s, t.scale, &p->scale, label, "scale", why, len) &&
              rwc_space_add(&s, t.inv, &p->inv_var, label, "inv_variance", why, len) &&
              (rms || rwc_space_add(&s, t.mean, &p->mean, label, "mean", why, len));
    if (ok && sums == HIPE_NBWD_ROW_SUMS) {
        ok = (!t.sdyx || (rwc_tensor_ok(t.sdyx, label, "dscale", true, why, len) &&
                          rwc_space_add(&s, t.sdyx, &p->sum_dyx, label, "dscale", why, len))) &&
             (!t.sdy || (rwc_tensor_ok(t.sdy, label, "dbias", true, why, len) &&
                         rwc_space_add(&s, t.sdy, &p->sum_dy, label, "dbias", why, len)));
    }
    if (!ok || (ep && !epilogue_space_of(g, ep, t.x, t.dx, &s, p, label, why, len)) ||
        !rwc_space_lay_out(&s, p, label, why, len))
        return 0;
    bwd_geometry(p);
    /* a virtual dx here is read by no other stage: only the sums are wanted (lower.c) */
    p->flags = (n->attrs[HIPDNN_NBWD_ZERO_CENTERED_GAMMA].i[0] ? RW_F_GAMMA1 : 0u) |
               (t.dx->is_virtual ? 0u : RW_F_STORE_Y) | (ep ? RW_F_EPILOGUE : 0u);
    if (sums == HIPE_NBWD_ROW_SUMS) p->flags |= RW_F_ROW_SUMS;
    else if (!col_parts(p, n, &t, label, why, len)) return 0;
    nbwd_bind(st, &t, rms);
    if (ep) epilogue_bind(st, ep);
    nbwd_describe(st, mname, n->name, sums);
    return 1;
}
