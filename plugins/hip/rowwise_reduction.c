/* Reductions compiled into row-wise programs (rowwise.h): a group of threads a row, or,
 * where the rows lie side by side in memory, a thread walking the reduced axis for
 * neighbouring outputs; rows too few to fill the device are cut into parts, combined by a
 * second, small pass. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rowwise.h"

/* Rows a reduction takes at once should fill the device: at least this many threads,
 * or the rows are cut into parts (then combined by a second, small pass). */
#define RW_WANT_THREADS (INT64_C(1) << 17)
/* ... unless there is so little to read that a second launch costs more than it saves (an
 * instance norm's dscale, [64, 128] summed over 64: two 5 us passes, RESULTS.md's
 * nineteenth run). */
#define RW_SPLIT_MIN_ELEMENTS (INT64_C(1) << 16)

static void reduction_steps(int64_t mode, rw_program* p) {
    static const int8_t steps[9][3] = {
        {RW_OP_ADD, RW_PRE_NONE, RW_POST_NONE},    /* add */
        {RW_OP_MUL, RW_PRE_NONE, RW_POST_NONE},    /* mul */
        {RW_OP_MIN, RW_PRE_NONE, RW_POST_NONE},    /* min */
        {RW_OP_MAX, RW_PRE_NONE, RW_POST_NONE},    /* max */
        {RW_OP_MAX, RW_PRE_ABS, RW_POST_NONE},     /* amax */
        {RW_OP_ADD, RW_PRE_NONE, RW_POST_MEAN},    /* avg */
        {RW_OP_ADD, RW_PRE_ABS, RW_POST_NONE},     /* norm1 */
        {RW_OP_ADD, RW_PRE_SQUARE, RW_POST_SQRT},  /* norm2 */
        {RW_OP_MUL, RW_PRE_NONZERO, RW_POST_NONE}, /* mul_no_zeros */
    };
    p->op = steps[mode][0];
    p->pre = steps[mode][1];
    p->post = steps[mode][2];
}

/* The kernel's geometry: where the rows lie side by side in x (the innermost kept dim has
 * x's smaller stride), each thread walks the reduced axis for neighbouring outputs
 * (RW_REDUCE_COLS); else a group of threads a row (RW_REDUCE).  Either way rows too few to
 * fill the device are cut into p->splits parts of p->chunk columns.  Whether the rows lie
 * side by side. */
static bool reduction_geometry(rw_program* p) {
    const int64_t inner_row = p->x.strides[p->nrd - 1], inner_col = p->x.strides[RW_DIMS + p->ncd - 1];
    const bool cols_path = p->rows > 1 && p->cols > 1 && inner_row < inner_col;
    const bool tiny = p->rows * p->cols < RW_SPLIT_MIN_ELEMENTS;
    int64_t threads;
    if (cols_path) {
        p->kind = RW_REDUCE_COLS;
        p->x.contiguous = p->rdims[p->nrd - 1] % PW_VEC == 0; /* PW_VEC outputs a thread */
        const int64_t blocks = ceil_div(p->rows, RW_COL_X * (p->x.contiguous ? PW_VEC : 1));
        threads = blocks * RW_COL_X * RW_COL_Y;
        const int64_t steps = ceil_div(p->cols, RW_COL_Y * RW_UNROLL);
        if (threads < RW_WANT_THREADS && steps > 1 && !tiny) {
            int64_t parts = ceil_div(RW_WANT_THREADS, threads);
            if (parts > steps) parts = steps;
            p->chunk = ceil_div(p->cols, parts);
            p->splits = (int32_t)ceil_div(p->cols, p->chunk);
        }
    } else {
        p->kind = RW_REDUCE;
        const int64_t nvec = ceil_div(p->cols, PW_VEC);
        int64_t gsize = pow2_at_least(ceil_div(nvec, RW_UNROLL));
        if (gsize > RW_MAX_GROUP) gsize = RW_MAX_GROUP;
        /* Rows enough to fill the device a warp each: a warp a row, looping over it, no
         * barriers (on an H100 four 128-thread blocks of one load each were 40% of copy). */
        if (gsize > 32 && p->rows * 32 >= RW_WANT_THREADS) gsize = 32;
        p->group = (int32_t)gsize;
        threads = p->rows * gsize;
        const int64_t steps = ceil_div(nvec, gsize * RW_UNROLL);
        if (threads < RW_WANT_THREADS && steps > 1 && !tiny) {
            int64_t parts = ceil_div(RW_WANT_THREADS, threads);
            if (parts > steps) parts = steps;
            p->chunk = ceil_div(nvec, parts) * PW_VEC;
            p->splits = (int32_t)ceil_div(p->cols, p->chunk);
        }
    }
    return cols_path;
}

/* A reduction cut into parts (st's x bound): pass 1 (st) writes each part's result (fp32,
 * before the final step) to the parts' buffer; pass 2 (st + 1) reduces those as rows of
 * `splits` into y. */
static void cut_into_parts(hipe_stage* st, int64_t parts_uid, size_t* parts_bytes, int64_t y_uid,
                           bool cols_path, const char* mname, const char* name) {
    rw_program* p = &st->rw;
    const int32_t splits = p->splits;
    *parts_bytes = (size_t)(p->rows * splits) * sizeof(float);
    hipe_stage* fin = st + 1;
    *fin = *st;
    p->post = RW_POST_NONE;
    p->y.dtype = PW_F32;
    rwc_bind(st, parts_uid, PTR(y), -1);
    char part[64];
    hipdnnSdkFormat(part, sizeof(part), ", in %d parts", splits);
    strncat(st->what, part, sizeof(st->what) - strlen(st->what) - 1);
    rw_program* q = &fin->rw;
    q->pre = RW_PRE_NONE;
    q->splits = 1;
    q->ncd = 1;
    q->cdims[0] = splits;
    for (int d = 1; d < RW_DIMS; ++d) q->cdims[d] = 1;
    q->cols = splits;
    q->chunk = splits;
    q->x.dtype = PW_F32;
    int64_t packed = cols_path ? 1 : splits; /* [rows][splits] or [splits][rows] */
    for (int d = RW_DIMS - 1; d >= 0; --d) {
        q->x.strides[d] = d < q->nrd ? packed : 0;
        if (d < q->nrd) packed *= q->rdims[d];
        q->x.strides[RW_DIMS + d] = 0;
    }
    q->x.strides[RW_DIMS] = cols_path ? q->rows : 1;
    if (!cols_path) {
        q->x.contiguous = 1;
        q->group = (int32_t)pow2_at_least(ceil_div(ceil_div(splits, PW_VEC), RW_UNROLL));
    }
    fin->nbind = 0;
    rwc_bind(fin, parts_uid, PTR(x), -1);
    rwc_bind(fin, y_uid, PTR(y), -1);
    hipdnnSdkFormat(fin->what, sizeof(fin->what), "reduction %s '%s': its %d parts combined",
                    mname, name, splits);
}

int hipe_rw_reduction(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, int64_t parts_uid,
                      size_t* parts_bytes, hipe_stage* st, char* why, size_t len) {
    char label[200];
    const int64_t mode = n->attrs[HIPDNN_RED_MODE].i[0];
    const char* mname = hipdnnSdkReductionModeName(mode);
    hipdnnSdkFormat(label, sizeof(label), "node '%s' (reduction %s)", n->name, mname ? mname : "?");
    if (!mname) return decline(why, len, "%s: reduction mode %lld not supported", label, (long long)mode);
    const hipdnnSdkTensor* x = rwc_find(g, n->inputs[HIPDNN_RED_X]);
    const hipdnnSdkTensor* y = rwc_find(g, n->outputs[HIPDNN_RED_Y]);
    if (!x || !y) return decline(why, len, "%s: x or y is not in the graph", label);
    if (!rwc_compute_ok(n, label, why, len) || !rwc_tensor_ok(x, label, "x", false, why, len) ||
        !rwc_tensor_ok(y, label, "y", true, why, len))
        return 0;
    if (y->ndim != x->ndim)
        return decline(why, len, "%s: y '%s' has rank %d but x '%s' %d", label, y->name, y->ndim,
                       x->name, x->ndim);
    bool col[HIPDNN_MAX_DIMS];
    for (int i = 0; i < x->ndim; ++i) col[i] = y->dims[i] == 1 && x->dims[i] != 1;
    memset(st, 0, sizeof(*st));
    st->kind = HIPE_STAGE_ROWWISE;
    rw_program* p = &st->rw;
    space s;
    rwc_space_init(&s, x, col);
    if (!rwc_space_add(&s, x, &p->x, label, "x", why, len) ||
        !rwc_space_add(&s, y, &p->y, label, "y", why, len) || !rwc_space_lay_out(&s, p, label, why, len))
        return 0;
    reduction_steps(mode, p);
    p->count = (float)p->cols;
    p->splits = 1;
    p->chunk = p->cols;
    const bool cols_path = reduction_geometry(p);
    st->nbind = 0;
    rwc_bind(st, x->uid, PTR(x), -1);
    hipdnnSdkFormat(st->what, sizeof(st->what), "reduction %s '%s': %lld rows of %lld (%s)", mname,
                    n->name, (long long)p->rows, (long long)p->cols,
                    cols_path ? "rows side by side: a thread walks the reduced axis"
                              : "a group of threads a row");
    if (p->splits == 1) {
        rwc_bind(st, y->uid, PTR(y), -1);
        return 1;
    }
    cut_into_parts(st, parts_uid, parts_bytes, y->uid, cols_path, mname, n->name);
    return 2;
}
