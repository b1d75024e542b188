/* Reductions, softmax and norms compiled into row-wise programs (rw_program.h), and with
 * them the engine's support checks for these nodes: whatever compiles, runs.
 *
 * Each node (or softmax pattern) names its row space by its reduced axes: a reduction's
 * are where y has 1 and x not, a softmax's those of its max, a norm's those
 * hipdnnSdkNormAxes gives.  The axes are ordered as x lies in memory and merged where every
 * tensor of the stage allows (space_lay_out); then the kernel's geometry is chosen from the
 * row length alone, so that a plan's kernel is fixed when it is built. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "staged.h"

static int storage_of(hipdnnDataType_t t) {
    switch (t) {
    case HIPDNN_DATA_FLOAT: return PW_F32;
    case HIPDNN_DATA_HALF: return PW_F16;
    case HIPDNN_DATA_BFLOAT16: return PW_BF16;
    default: return -1;
    }
}

static int storage_size(int s) { return s == PW_F32 ? 4 : 2; }

static const hipdnnSdkTensor* find(const hipdnnSdkGraph* g, int64_t uid) {
    return uid == HIPDNN_NO_TENSOR ? NULL : hipdnnSdkGraphFindTensor(g, uid);
}

static bool compute_ok(const hipdnnSdkNode* n, const char* label, char* why, size_t len) {
    hipdnnDataType_t ct = n->compute_type;
    if (ct == HIPDNN_DATA_NOT_SET || ct == HIPDNN_DATA_FLOAT || ct == HIPDNN_DATA_HALF ||
        ct == HIPDNN_DATA_BFLOAT16)
        return true;
    return decline(why, len, "%s: compute type %s not supported (fp32 compute)", label,
                   hipdnnSdkDataTypeName(ct));
}

/* A tensor the kernel reads or writes: stored as fp32 / fp16 / bf16, sane dims and
 * strides, and (outputs) no two elements at one address. */
static bool tensor_ok(const hipdnnSdkTensor* t, const char* label, const char* port, bool output,
                      char* why, size_t len) {
    if (storage_of(t->data_type) < 0)
        return decline(why, len, "%s: %s '%s' (uid %lld): data type %s not supported (float32, "
                       "float16, bfloat16 storage only)", label, port, t->name, (long long)t->uid,
                       hipdnnSdkDataTypeName(t->data_type));
    if (t->is_by_value)
        return decline(why, len, "%s: %s '%s' (uid %lld) is a pass-by-value scalar; it must be a "
                       "tensor in device memory", label, port, t->name, (long long)t->uid);
    int64_t span = 1;
    for (int32_t k = 0; k < t->ndim; ++k) {
        if (t->dims[k] < 1 || t->strides[k] < 0 || t->dims[k] > HIPE_MAX_ELEMENTS ||
            t->strides[k] > HIPE_MAX_ELEMENTS)
            span = -1;
        if (span > 0) span += (t->dims[k] - 1) * t->strides[k];
        if (span > HIPE_MAX_ELEMENTS) span = -1;
    }
    if (t->ndim < 1 || span < 0)
        return decline(why, len, "%s: %s '%s' (uid %lld): rank 0, dims below 1, negative "
                       "strides or over 2^48 elements", label, port, t->name, (long long)t->uid);
    if (output && !t->is_virtual && hipdnnSdkStridesOverlap(t->ndim, t->dims, t->strides))
        return decline(why, len, "%s: output %s '%s' (uid %lld): its strides make elements "
                       "overlap", label, port, t->name, (long long)t->uid);
    return true;
}

/* ---- the row space -------------------------------------------------------------------- */

#define SPACE_MAX 24 /* x, y, statistics, scale, bias, and an epilogue's tensors */

typedef struct {
    int R;                              /* x's rank */
    int64_t dims[HIPDNN_MAX_DIMS];      /* x's dims */
    bool col[HIPDNN_MAX_DIMS];          /* a reduced (normalized) axis */
    int n;
    int64_t st[SPACE_MAX][HIPDNN_MAX_DIMS]; /* strides of each tensor over x's axes */
    pw_tensor* dst[SPACE_MAX];
} space;

static void space_init(space* s, const hipdnnSdkTensor* x, const bool* col) {
    memset(s, 0, sizeof(*s));
    s->R = x->ndim;
    for (int i = 0; i < x->ndim; ++i) {
        s->dims[i] = x->dims[i];
        s->col[i] = col[i] && x->dims[i] > 1;
    }
}

/* Adds tensor t (NumPy broadcasting against x, right-aligned) whose row-space strides go
 * to *dst. */
static bool space_add(space* s, const hipdnnSdkTensor* t, pw_tensor* dst, const char* label,
                      const char* port, char* why, size_t len) {
    if (s->n == SPACE_MAX)
        return decline(why, len, "%s: more than %d tensors in one kernel", label, SPACE_MAX);
    if (t->ndim > s->R)
        return decline(why, len, "%s: %s '%s' (uid %lld) has rank %d, above x's %d", label, port,
                       t->name, (long long)t->uid, t->ndim, s->R);
    int64_t* st = s->st[s->n];
    for (int d = 0; d < HIPDNN_MAX_DIMS; ++d) st[d] = 0;
    for (int k = 0; k < t->ndim; ++k) {
        int d = s->R - t->ndim + k;
        if (t->dims[k] != 1 && t->dims[k] != s->dims[d])
            return decline(why, len, "%s: %s '%s' (uid %lld): dim %d is %lld where x's is %lld",
                           label, port, t->name, (long long)t->uid, k, (long long)t->dims[k],
                           (long long)s->dims[d]);
        st[d] = t->dims[k] == 1 ? 0 : t->strides[k];
    }
    memset(dst, 0, sizeof(*dst));
    dst->dtype = storage_of(t->data_type);
    s->dst[s->n++] = dst;
    return true;
}

/* Orders the axes as x lies in memory (largest stride first), merges neighbours that every
 * tensor walks as one, and writes the dims and each tensor's strides into p. */
static bool space_lay_out(space* s, rw_program* p, const char* label, char* why, size_t len) {
    int order[HIPDNN_MAX_DIMS], n = 0;
    for (int d = 0; d < s->R; ++d)
        if (s->dims[d] > 1) order[n++] = d;
    for (int i = 1; i < n; ++i) /* stable insertion sort by x's stride, largest first */
        for (int j = i; j > 0 && s->st[0][order[j]] > s->st[0][order[j - 1]]; --j) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    for (int cls = 0; cls < 2; ++cls) { /* rows, then columns */
        int64_t dims[HIPDNN_MAX_DIMS], ms[SPACE_MAX][HIPDNN_MAX_DIMS];
        int nd = 0;
        for (int i = 0; i < n; ++i) {
            int a = order[i];
            if (s->col[a] != (cls == 1)) continue;
            bool merge = nd > 0;
            for (int t = 0; t < s->n && merge; ++t) merge = ms[t][nd - 1] == s->st[t][a] * s->dims[a];
            if (merge) {
                dims[nd - 1] *= s->dims[a];
                for (int t = 0; t < s->n; ++t) ms[t][nd - 1] = s->st[t][a];
            } else {
                if (nd == RW_DIMS)
                    return decline(why, len, "%s: over %d %s dims that cannot be merged into "
                                   "one (strides that do not nest)", label, RW_DIMS,
                                   cls ? "reduced" : "kept");
                dims[nd] = s->dims[a];
                for (int t = 0; t < s->n; ++t) ms[t][nd] = s->st[t][a];
                ++nd;
            }
        }
        if (nd == 0) {
            dims[0] = 1;
            for (int t = 0; t < s->n; ++t) ms[t][0] = 1;
            nd = 1;
        }
        int64_t total = 1;
        for (int d = 0; d < nd; ++d) total *= dims[d];
        if (total >= (INT64_C(1) << 31))
            return decline(why, len, "%s: %lld %s (2^31 or more)", label, (long long)total,
                           cls ? "elements a row" : "rows");
        for (int d = 0; d < RW_DIMS; ++d) {
            int64_t dim = d < nd ? dims[d] : 1;
            if (cls) p->cdims[d] = dim;
            else p->rdims[d] = dim;
            for (int t = 0; t < s->n; ++t) s->dst[t]->strides[cls * RW_DIMS + d] = d < nd ? ms[t][d] : 0;
        }
        if (cls) {
            p->ncd = nd;
            p->cols = total;
        } else {
            p->nrd = nd;
            p->rows = total;
        }
    }
    for (int t = 0; t < s->n; ++t) {
        pw_tensor* pt = s->dst[t];
        pt->contiguous = p->ncd == 1 && (p->cols == 1 || pt->strides[RW_DIMS] == 1);
        pt->reserved = 0;
        pt->ptr = NULL;
    }
    return true;
}

/* ---- geometry ----------------------------------------------------------------------------- */

static int64_t pow2_at_least(int64_t n) {
    int64_t p = 1;
    while (p < n) p <<= 1;
    return p;
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* $HIPDNN_HIP_ROW_VECTORS (1, 2, 4 or 8): vectors of PW_VEC a thread of a softmax or norm
 * aims to hold (for comparing geometries).  Default: the fastest measured on an H100 over
 * rows of 4096 bf16 (benchmarks/RESULTS.md, sixth run): two for a softmax (0.43 ms against
 * 0.58 with four: its exp and sums take registers), four for a norm (0.34 against 0.50);
 * half as many for fp32. */
static int target_vectors(int esize, bool softmax) {
    const char* v = getenv("HIPDNN_HIP_ROW_VECTORS");
    if (v && (!strcmp(v, "1") || !strcmp(v, "2") || !strcmp(v, "4") || !strcmp(v, "8"))) return atoi(v);
    const int vecs = softmax ? 2 : 4;
    return esize == 4 ? vecs / 2 : vecs;
}

/* Softmax and norms: a row in the registers of its group when it fits, G threads of V
 * vectors each; longer rows read again from memory (vecs 0).  A norm with an epilogue
 * holds one vector a thread at most: each vector runs the epilogue's program, and
 * several copies of that per thread would make the kernel too large to compile well. */
static void register_geometry(rw_program* p, int esize, bool epilogue, bool softmax) {
    const int64_t nvec = ceil_div(p->cols, PW_VEC);
    if (nvec <= 32) {
        p->group = (int32_t)pow2_at_least(nvec);
        p->vecs = 1;
        return;
    }
    if (epilogue) {
        p->group = (int32_t)(nvec <= RW_MAX_GROUP ? (nvec < 32 ? 32 : pow2_at_least(nvec)) : RW_MAX_GROUP);
        p->vecs = nvec <= RW_MAX_GROUP ? 1 : 0;
        return;
    }
    if (!softmax && esize == 2 && nvec <= 32 * 16 && !getenv("HIPDNN_HIP_ROW_VECTORS")) {
        /* A norm: the row packed in its storage type, at most 4 vectors a thread: a warp a
         * row up to 128 vectors, else 64 or 128 threads a row.  A warp holding a row of
         * 4096 (16 vectors a lane) took 128 registers, a quarter of an SM's threads; this
         * takes 48 in the kernel's lean variant (RESULTS.md, fourteenth run: 1.46x
         * PyTorch's layernorm on an H200).  Not a softmax: unpacking and exp twice an
         * element made it 0.637 ms against 0.396 (eighth run). */
        p->group = nvec <= 128 ? 32 : (int32_t)pow2_at_least(ceil_div(nvec, 4));
        p->vecs = (int32_t)pow2_at_least(ceil_div(nvec, p->group));
        p->flags |= RW_F_PACKED;
        return;
    }
    int64_t g = pow2_at_least(ceil_div(nvec, target_vectors(esize, softmax)));
    if (g < 32) g = 32;
    if (g > RW_MAX_GROUP) g = RW_MAX_GROUP;
    int64_t v = pow2_at_least(ceil_div(nvec, g));
    p->group = (int32_t)g;
    p->vecs = v <= 8 ? (int32_t)v : 0;
}

/* Rows a reduction takes at once should fill the device: at least this many threads,
 * or the rows are cut into parts (then combined by a second, small pass). */
#define RW_WANT_THREADS (INT64_C(1) << 17)
/* ... unless there is so little to read that a second launch costs more than it saves (an
 * instance norm's dscale, [64, 128] summed over 64: two 5 us passes, RESULTS.md's
 * nineteenth run). */
#define RW_SPLIT_MIN_ELEMENTS (INT64_C(1) << 16)

void hipe_rowwise_grid(const rw_program* p, int* threads, int64_t* blocks) {
    if (p->kind == RW_REDUCE_COLS) {
        const int64_t step = (int64_t)RW_COL_X * (p->x.contiguous ? PW_VEC : 1);
        *threads = RW_COL_X * RW_COL_Y;
        *blocks = ceil_div(p->rows * p->splits, step);
        return;
    }
    const int G = p->group;
    *threads = G > 32 ? G : RW_BLOCK;
    int64_t rows = p->kind == RW_REDUCE ? p->rows * p->splits : p->rows;
    if (p->kind == RW_NORM_BWD && (p->flags & RW_F_COL_PARTS)) rows = p->part_sets * p->part_groups;
    *blocks = ceil_div(rows, *threads / G);
    if (*blocks < 1) *blocks = 1;
}

/* A norm parameter with one value a row: present, no column strides. */
static bool one_a_row(const rw_program* p, const pw_tensor* t) {
    bool ok = t->ptr != NULL;
    for (int d = 0; d < p->ncd; ++d) ok = ok && t->strides[RW_DIMS + d] == 0;
    return ok;
}

void hipe_rw_set_vectors(rw_program* p) {
    pw_tensor* ts[7 + PW_MAX_INPUTS + PW_MAX_OUTPUTS];
    int n = 0;
    ts[n++] = &p->x;
    ts[n++] = &p->y;
    ts[n++] = &p->mean;
    ts[n++] = &p->inv_var;
    ts[n++] = &p->scale;
    ts[n++] = &p->bias;
    ts[n++] = &p->dy;
    if (p->flags & RW_F_EPILOGUE) {
        for (int i = 0; i < p->ep.nin; ++i) ts[n++] = &p->ep.in[i];
        for (int i = 0; i < p->ep.nout; ++i) ts[n++] = &p->ep.out[i];
    }
    for (int i = 0; i < n; ++i) {
        pw_tensor* t = ts[i];
        const int64_t unit = 16 / storage_size(t->dtype); /* elements of 16 bytes */
        bool ok = t->ptr && ((uintptr_t)t->ptr & 15u) == 0;
        if (p->kind == RW_REDUCE_COLS && t == &p->x) {
            /* vectors of PW_VEC outputs side by side: the innermost kept dim */
            ok = ok && t->contiguous && t->strides[p->nrd - 1] == 1;
            for (int d = 0; d < p->nrd - 1; ++d) ok = ok && t->strides[d] % unit == 0;
            for (int d = 0; d < p->ncd; ++d) ok = ok && t->strides[RW_DIMS + d] % unit == 0;
        } else {
            ok = ok && t->contiguous;
            for (int d = 0; d < p->nrd; ++d) ok = ok && t->strides[d] % unit == 0;
        }
        t->reserved = ok;
    }
    /* The fast way: x (and y) read and written in whole aligned vectors of one type. */
    const bool whole = p->cols % PW_VEC == 0 && p->x.reserved &&
                       (p->x.dtype == PW_F32 || p->x.dtype == PW_F16 || p->x.dtype == PW_BF16);
    bool fast = false;
    /* a norm that stores only its statistics (lower.c's per-plane batchnorm) computes no y,
       so neither y nor its scale and bias are read or written */
    const bool stats_only = p->kind == RW_NORM && !(p->flags & (RW_F_STORE_Y | RW_F_EPILOGUE));
    const bool y_ok = stats_only || (p->y.reserved && p->y.dtype == p->x.dtype);
    const bool params_ok = p->scale.reserved && (!(p->flags & RW_F_BIAS) || p->bias.reserved);
    /* or, for the 16-bit kernels (packed norm, norm backward), scale and bias one value a row */
    const bool row_params = p->x.dtype != PW_F32 && one_a_row(p, &p->scale) &&
                            (!(p->flags & RW_F_BIAS) || one_a_row(p, &p->bias));
    p->flags &= ~RW_F_ROW_PARAMS;
    if (p->kind == RW_REDUCE) {
        fast = whole;
    } else if (p->kind == RW_SOFTMAX || p->kind == RW_NORM) {
        fast = whole && p->vecs > 0 && y_ok;
        if (p->kind == RW_NORM)
            fast = fast && !(p->flags & RW_F_EPILOGUE) && (stats_only || params_ok) && p->vecs <= 4;
        else
            fast = fast && p->vecs <= 4;
    } else if (p->kind == RW_NORM_BWD) {
        /* dx as x (when stored), dy as x, scale a contiguous row (read only for dx) */
        const bool dx = (p->flags & RW_F_STORE_Y) != 0;
        fast = whole && (p->vecs == 1 || p->vecs == 2) && p->dy.reserved && p->dy.dtype == p->x.dtype &&
               (!dx || (p->y.reserved && p->y.dtype == p->x.dtype && (p->scale.reserved || row_params)));
        if (fast && dx && !p->scale.reserved) p->flags |= RW_F_ROW_PARAMS;
    }
    p->fast_dt = fast ? p->x.dtype : -1;
    if (p->flags & RW_F_PACKED) { /* packed rows exist only the fast way */
        fast = whole && y_ok && p->x.dtype != PW_F32 && (stats_only || params_ok || row_params);
        p->fast_dt = fast ? p->x.dtype : -1;
        if (fast && !stats_only && !params_ok) p->flags |= RW_F_ROW_PARAMS;
        if (!fast) {
            p->flags &= ~RW_F_PACKED;
            p->vecs = 0;
        }
    }
}

/* ---- reductions ---------------------------------------------------------------------------- */

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

static void bind(hipe_stage* st, int64_t uid, size_t offset, int32_t scalar_dtype) {
    hipe_bind* b = &st->bind[st->nbind++];
    b->uid = uid;
    b->offset = (uint32_t)offset;
    b->scalar_dtype = scalar_dtype;
}

#define PTR(field) offsetof(rw_program, field.ptr)

int hipe_rw_reduction(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, int64_t parts_uid,
                      size_t* parts_bytes, hipe_stage* st, char* why, size_t len) {
    char label[200];
    const int64_t mode = n->attrs[HIPDNN_RED_MODE].i[0];
    const char* mname = hipdnnSdkReductionModeName(mode);
    hipdnnSdkFormat(label, sizeof(label), "node '%s' (reduction %s)", n->name, mname ? mname : "?");
    if (!mname) return decline(why, len, "%s: reduction mode %lld not supported", label, (long long)mode);
    const hipdnnSdkTensor* x = find(g, n->inputs[HIPDNN_RED_X]);
    const hipdnnSdkTensor* y = find(g, n->outputs[HIPDNN_RED_Y]);
    if (!x || !y) return decline(why, len, "%s: x or y is not in the graph", label);
    if (!compute_ok(n, label, why, len) || !tensor_ok(x, label, "x", false, why, len) ||
        !tensor_ok(y, label, "y", true, why, len))
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
    space_init(&s, x, col);
    if (!space_add(&s, x, &p->x, label, "x", why, len) ||
        !space_add(&s, y, &p->y, label, "y", why, len) || !space_lay_out(&s, p, label, why, len))
        return 0;
    reduction_steps(mode, p);
    p->count = (float)p->cols;
    p->splits = 1;
    p->chunk = p->cols;
    /* Rows side by side in x (the innermost kept dim has x's smaller stride): each thread
     * walks the reduced axis for neighbouring outputs; else a group of threads a row. */
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
    st->nbind = 0;
    bind(st, x->uid, PTR(x), -1);
    hipdnnSdkFormat(st->what, sizeof(st->what), "reduction %s '%s': %lld rows of %lld (%s)", mname,
                    n->name, (long long)p->rows, (long long)p->cols,
                    cols_path ? "rows side by side: a thread walks the reduced axis"
                              : "a group of threads a row");
    if (p->splits == 1) {
        bind(st, y->uid, PTR(y), -1);
        return 1;
    }
    /* Cut into parts: pass 1 writes each part's result (fp32, before the final step)
     * to the parts' buffer; pass 2 reduces those as rows of `splits`. */
    const int32_t splits = p->splits;
    *parts_bytes = (size_t)(p->rows * splits) * sizeof(float);
    hipe_stage* fin = st + 1;
    *fin = *st;
    p->post = RW_POST_NONE;
    p->y.dtype = PW_F32;
    bind(st, parts_uid, PTR(y), -1);
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
    bind(fin, parts_uid, PTR(x), -1);
    bind(fin, y->uid, PTR(y), -1);
    hipdnnSdkFormat(fin->what, sizeof(fin->what), "reduction %s '%s': its %d parts combined",
                    mname, n->name, splits);
    return 2;
}

/* ---- softmax -------------------------------------------------------------------------------- */

/* How a virtual tensor between the softmax's steps rounds its value. */
static bool rounding(const hipdnnSdkTensor* t, int32_t* r, const char* label, char* why, size_t len) {
    switch (t->data_type) {
    case HIPDNN_DATA_FLOAT: *r = -1; return true;
    case HIPDNN_DATA_HALF: *r = PW_F16; return true;
    case HIPDNN_DATA_BFLOAT16: *r = PW_BF16; return true;
    default:
        return decline(why, len, "%s: '%s' (uid %lld): data type %s not supported (float32, "
                       "float16, bfloat16)", label, t->name, (long long)t->uid,
                       hipdnnSdkDataTypeName(t->data_type));
    }
}

int hipe_rw_softmax(const hipdnnSdkGraph* g, const hipdnnSdkNode* const* nodes, hipe_stage* st,
                    char* why, size_t len) {
    char label[200];
    hipdnnSdkFormat(label, sizeof(label), "softmax of nodes '%s' .. '%s'", nodes[0]->name,
                    nodes[4]->name);
    const hipdnnSdkTensor* x = find(g, nodes[0]->inputs[HIPDNN_RED_X]);
    const hipdnnSdkTensor* y = find(g, nodes[4]->outputs[HIPDNN_PW_Y]);
    const hipdnnSdkTensor* steps[4] = {find(g, nodes[0]->outputs[0]), find(g, nodes[1]->outputs[0]),
                                       find(g, nodes[2]->outputs[0]), find(g, nodes[3]->outputs[0])};
    if (!x || !y || !steps[0] || !steps[1] || !steps[2] || !steps[3])
        return decline(why, len, "%s: a tensor is not in the graph", label);
    for (int i = 0; i < 5; ++i)
        if (!compute_ok(nodes[i], label, why, len)) return 0;
    if (!tensor_ok(x, label, "x", false, why, len) || !tensor_ok(y, label, "y", true, why, len))
        return 0;
    memset(st, 0, sizeof(*st));
    st->kind = HIPE_STAGE_ROWWISE;
    rw_program* p = &st->rw;
    for (int i = 0; i < 4; ++i)
        if (!rounding(steps[i], &p->round[i], label, why, len)) return 0;
    bool col[HIPDNN_MAX_DIMS];
    for (int i = 0; i < x->ndim; ++i) col[i] = steps[0]->dims[i] == 1 && x->dims[i] != 1;
    space s;
    space_init(&s, x, col);
    if (!space_add(&s, x, &p->x, label, "x", why, len) ||
        !space_add(&s, y, &p->y, label, "y", why, len) || !space_lay_out(&s, p, label, why, len))
        return 0;
    p->kind = RW_SOFTMAX;
    p->flags = RW_F_STORE_Y;
    p->splits = 1;
    register_geometry(p, storage_size(p->x.dtype), false, true);
    bind(st, x->uid, PTR(x), -1);
    bind(st, y->uid, PTR(y), -1);
    if (p->vecs)
        hipdnnSdkFormat(st->what, sizeof(st->what), "softmax '%s': %lld rows of %lld, each in the "
                        "registers of %d threads (%d vectors a thread): one pass", nodes[4]->name,
                        (long long)p->rows, (long long)p->cols, p->group, p->vecs);
    else
        hipdnnSdkFormat(st->what, sizeof(st->what), "softmax '%s': %lld rows of %lld, %d threads "
                        "a row, read three times (too long for registers)", nodes[4]->name,
                        (long long)p->rows, (long long)p->cols, p->group);
    return 1;
}

/* ---- norms -------------------------------------------------------------------------------- */

int hipe_rw_norm(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, const hipe_plan* ep,
                 hipe_stage* st, char* why, size_t len) {
    char label[200];
    const int64_t mode = n->attrs[HIPDNN_NORM_MODE].i[0];
    const char* mname = hipdnnSdkNormModeName(mode);
    hipdnnSdkFormat(label, sizeof(label), "node '%s' (norm_forward %s)", n->name, mname ? mname : "?");
    if (mode == HIPDNN_BATCH_NORM && n->attrs[HIPDNN_NORM_PHASE].i[0] != HIPDNN_NORM_FWD_TRAINING)
        return decline(why, len, "%s: batchnorm runs in the training phase (inference is the "
                       "batchnorm_inference operation)", label);
    if (mode == HIPDNN_BATCH_NORM && n->inputs[HIPDNN_NORM_IN_RUNNING_MEAN] != HIPDNN_NO_TENSOR)
        return decline(why, len, "%s: internal: running statistics reach the norm kernel", label);
    if (mode != HIPDNN_BATCH_NORM && mode != HIPDNN_LAYER_NORM && mode != HIPDNN_RMS_NORM && mode != HIPDNN_INSTANCE_NORM &&
        mode != HIPDNN_ADA_LAYER_NORM)
        return decline(why, len, "%s: norm mode %lld not supported", label, (long long)mode);
    if (!compute_ok(n, label, why, len)) return 0;
    const hipdnnSdkTensor* x = find(g, n->inputs[HIPDNN_NORM_X]);
    const hipdnnSdkTensor* scale = find(g, n->inputs[HIPDNN_NORM_SCALE]);
    const hipdnnSdkTensor* bias = find(g, n->inputs[HIPDNN_NORM_BIAS]);
    const hipdnnSdkTensor* eps = find(g, n->inputs[HIPDNN_NORM_EPSILON]);
    const hipdnnSdkTensor* y = find(g, n->outputs[HIPDNN_NORM_Y]);
    const hipdnnSdkTensor* mean = find(g, n->outputs[HIPDNN_NORM_MEAN]);
    const hipdnnSdkTensor* inv = find(g, n->outputs[HIPDNN_NORM_INV_VARIANCE]);
    if (!x || !scale || !eps || !y)
        return decline(why, len, "%s: x, scale, epsilon or y is not in the graph", label);
    if (!tensor_ok(x, label, "x", false, why, len) || !tensor_ok(scale, label, "scale", false, why, len) ||
        (bias && !tensor_ok(bias, label, "bias", false, why, len)) ||
        !tensor_ok(y, label, "y", true, why, len) ||
        (mean && !tensor_ok(mean, label, "mean", true, why, len)) ||
        (inv && !tensor_ok(inv, label, "inv_variance", true, why, len)))
        return 0;
    if (!eps->is_by_value || hipdnnSdkDataTypeSize(eps->data_type) == 0)
        return decline(why, len, "%s: epsilon '%s' (uid %lld) must be a pass-by-value scalar", label,
                       eps->name, (long long)eps->uid);
    memset(st, 0, sizeof(*st));
    st->kind = HIPE_STAGE_ROWWISE;
    rw_program* p = &st->rw;
    p->kind = RW_NORM;
    p->mode = mode == HIPDNN_RMS_NORM ? RW_RMS : RW_LAYER;
    p->splits = 1;
    bool col[HIPDNN_MAX_DIMS];
    hipdnnSdkNormAxes(n, x, scale, col);
    space s;
    space_init(&s, x, col);
    bool ok = space_add(&s, x, &p->x, label, "x", why, len) &&
              space_add(&s, y, &p->y, label, "y", why, len) &&
              space_add(&s, scale, &p->scale, label, "scale", why, len) &&
              (!bias || space_add(&s, bias, &p->bias, label, "bias", why, len)) &&
              (!mean || space_add(&s, mean, &p->mean, label, "mean", why, len)) &&
              (!inv || space_add(&s, inv, &p->inv_var, label, "inv_variance", why, len));
    if (!ok) return 0;
    if (ep) { /* the epilogue's tensors join the row space: their strides replace the
                 program's own (its iteration space is the norm's) */
        p->ep = ep->prog;
        p->ep_y = -1;
        for (int i = 0; i < ep->prog.nin; ++i) {
            const hipdnnSdkTensor* t = find(g, ep->in_uid[i]);
            if (!t) return decline(why, len, "%s: an epilogue input is not in the graph", label);
            if (t->uid == y->uid) p->ep_y = i;
            if (!space_add(&s, t, &p->ep.in[i], label, "epilogue input", why, len)) return 0;
            p->ep.in[i].dtype = ep->prog.in[i].dtype;
        }
        for (int i = 0; i < ep->prog.nout; ++i) {
            const hipdnnSdkTensor* t = find(g, ep->out_uid[i]);
            if (!t) return decline(why, len, "%s: an epilogue output is not in the graph", label);
            bool same = t->ndim == x->ndim;
            for (int k = 0; same && k < x->ndim; ++k) same = t->dims[k] == x->dims[k];
            if (!same)
                return decline(why, len, "%s: epilogue output '%s' (uid %lld) is not shaped as x",
                               label, t->name, (long long)t->uid);
            if (!space_add(&s, t, &p->ep.out[i], label, "epilogue output", why, len)) return 0;
            p->ep.out[i].dtype = ep->prog.out[i].dtype;
        }
        if (p->ep_y < 0) return decline(why, len, "%s: the epilogue does not read y", label);
    }
    if (!space_lay_out(&s, p, label, why, len)) return 0;
    p->flags = (y->is_virtual ? 0u : RW_F_STORE_Y) | (bias ? RW_F_BIAS : 0u) |
               (mean && !mean->is_virtual ? RW_F_MEAN : 0u) |
               (inv && !inv->is_virtual ? RW_F_INV_VAR : 0u) |
               (n->attrs[HIPDNN_NORM_ZERO_CENTERED_GAMMA].i[0] ? RW_F_GAMMA1 : 0u);
    register_geometry(p, storage_size(p->x.dtype), ep != NULL, false);
    bind(st, x->uid, PTR(x), -1);
    bind(st, scale->uid, PTR(scale), -1);
    if (bias) bind(st, bias->uid, PTR(bias), -1);
    if (p->flags & RW_F_STORE_Y) bind(st, y->uid, PTR(y), -1);
    if (p->flags & RW_F_MEAN) bind(st, mean->uid, PTR(mean), -1);
    if (p->flags & RW_F_INV_VAR) bind(st, inv->uid, PTR(inv_var), -1);
    if (eps->has_value)
        p->eps = (float)hipdnnSdkLoadAsDouble(eps->value, eps->data_type, 0);
    else
        bind(st, eps->uid, offsetof(rw_program, eps), eps->data_type);
    if (ep) {
        p->flags |= RW_F_EPILOGUE;
        p->ep.ndim = p->ncd;
        p->ep.n = p->rows * p->cols;
        for (int d = 0; d < PW_MAX_DIMS; ++d) p->ep.dims[d] = d < RW_DIMS ? p->cdims[d] : 1;
        for (int i = 0; i < ep->prog.nin; ++i)
            if (i != p->ep_y) bind(st, ep->in_uid[i], offsetof(rw_program, ep.in) + i * sizeof(pw_tensor), -1);
        for (int i = 0; i < ep->prog.nout; ++i)
            bind(st, ep->out_uid[i], offsetof(rw_program, ep.out) + i * sizeof(pw_tensor), -1);
        for (int i = 0; i < ep->nscalars; ++i)
            if (ep->scalar_uid[i] >= 0)
                bind(st, ep->scalar_uid[i], offsetof(rw_program, ep.scalar) + i * sizeof(float),
                     ep->scalar_dtype[i]);
    }
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
    hipdnnSdkFormat(st->what, sizeof(st->what), "%s '%s': %lld rows of %lld, %s%s", mname, n->name,
                    (long long)p->rows, (long long)p->cols, shape,
                    ep ? ", with its pointwise epilogue" : "");
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

int hipe_rw_norm_backward(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, hipe_stage* st,
                          char* why, size_t len) {
    char label[200];
    const int64_t mode = n->attrs[HIPDNN_NBWD_MODE].i[0];
    const char* mname = hipdnnSdkNormBackwardName(mode);
    hipdnnSdkFormat(label, sizeof(label), "node '%s' (%s)", n->name, mname ? mname : "norm_backward");
    const int64_t sums = n->attrs[HIPE_NBWD_SUMS].i[0];
    if (!mname || mode == HIPDNN_GROUP_NORM || (sums != HIPE_NBWD_ROW_SUMS && sums != HIPE_NBWD_COL_PARTS))
        return decline(why, len, "%s: internal: not a norm backward this kernel takes", label);
    if (!compute_ok(n, label, why, len)) return 0;
    const bool rms = mode == HIPDNN_RMS_NORM;
    const hipdnnSdkTensor* x = find(g, n->inputs[HIPDNN_NBWD_X]);
    const hipdnnSdkTensor* dy = find(g, n->inputs[HIPDNN_NBWD_DY]);
    const hipdnnSdkTensor* scale = find(g, n->inputs[HIPDNN_NBWD_SCALE]);
    const hipdnnSdkTensor* mean = find(g, n->inputs[HIPDNN_NBWD_MEAN]);
    const hipdnnSdkTensor* inv = find(g, n->inputs[HIPDNN_NBWD_INV_VARIANCE]);
    const hipdnnSdkTensor* dx = find(g, n->outputs[HIPDNN_NBWD_DX]);
    const hipdnnSdkTensor* sdyx = find(g, n->outputs[HIPDNN_NBWD_DSCALE]);
    const hipdnnSdkTensor* sdy = find(g, n->outputs[HIPDNN_NBWD_DBIAS]);
    if (!x || !dy || !scale || !inv || !dx || (!rms && !mean))
        return decline(why, len, "%s: x, dy, scale, statistics or dx is not in the graph", label);
    if (!tensor_ok(x, label, "x", false, why, len) || !tensor_ok(dy, label, "dy", false, why, len) ||
        !tensor_ok(scale, label, "scale", false, why, len) ||
        !tensor_ok(inv, label, "inv_variance", false, why, len) ||
        (!rms && !tensor_ok(mean, label, "mean", false, why, len)) ||
        !tensor_ok(dx, label, "dx", true, why, len))
        return 0;
    memset(st, 0, sizeof(*st));
    st->kind = HIPE_STAGE_ROWWISE;
    rw_program* p = &st->rw;
    p->kind = RW_NORM_BWD;
    p->mode = rms ? RW_RMS : RW_LAYER;
    p->splits = 1;
    bool col[HIPDNN_MAX_DIMS];
    hipdnnSdkNormAxes(n, x, scale, col);
    space s;
    space_init(&s, x, col);
    bool ok = space_add(&s, x, &p->x, label, "x", why, len) &&
              space_add(&s, dx, &p->y, label, "dx", why, len) &&
              space_add(&s, dy, &p->dy, label, "dy", why, len) &&
              space_add(&s, scale, &p->scale, label, "scale", why, len) &&
              space_add(&s, inv, &p->inv_var, label, "inv_variance", why, len) &&
              (rms || space_add(&s, mean, &p->mean, label, "mean", why, len));
    if (ok && sums == HIPE_NBWD_ROW_SUMS) {
        ok = (!sdyx || (tensor_ok(sdyx, label, "dscale", true, why, len) &&
                        space_add(&s, sdyx, &p->sum_dyx, label, "dscale", why, len))) &&
             (!sdy || (tensor_ok(sdy, label, "dbias", true, why, len) &&
                       space_add(&s, sdy, &p->sum_dy, label, "dbias", why, len)));
    }
    if (!ok || !space_lay_out(&s, p, label, why, len)) return 0;
    bwd_geometry(p);
    /* a virtual dx here is read by no other stage: only the sums are wanted (lower.c) */
    p->flags = (n->attrs[HIPDNN_NBWD_ZERO_CENTERED_GAMMA].i[0] ? RW_F_GAMMA1 : 0u) |
               (dx->is_virtual ? 0u : RW_F_STORE_Y);
    if (sums == HIPE_NBWD_ROW_SUMS) {
        p->flags |= RW_F_ROW_SUMS;
    } else {
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
        const hipdnnSdkTensor* outs[2] = {sdyx, sdy};
        for (int i = 0; i < 2; ++i) {
            const hipdnnSdkTensor* t = outs[i];
            if (t && (t->data_type != HIPDNN_DATA_FLOAT ||
                      hipdnnSdkElementCount(t->ndim, t->dims) != p->part_sets * p->part_groups * p->cols))
                return decline(why, len, "%s: internal: column parts '%s' are not fp32 [%lld, %lld]",
                               label, t->name, (long long)(p->part_sets * p->part_groups),
                               (long long)p->cols);
        }
    }
    bind(st, x->uid, PTR(x), -1);
    bind(st, dy->uid, PTR(dy), -1);
    bind(st, scale->uid, PTR(scale), -1);
    bind(st, inv->uid, PTR(inv_var), -1);
    if (!rms) bind(st, mean->uid, PTR(mean), -1);
    if (p->flags & RW_F_STORE_Y) bind(st, dx->uid, PTR(y), -1);
    if (sdyx) bind(st, sdyx->uid, PTR(sum_dyx), -1);
    if (sdy) bind(st, sdy->uid, PTR(sum_dy), -1);
    char sets[64] = "";
    if (sums == HIPE_NBWD_COL_PARTS && p->part_sets > 1)
        hipdnnSdkFormat(sets, sizeof(sets), " in %lld sets of %lld rows (a scale row each)",
                        (long long)p->part_sets, (long long)p->set_rows);
    hipdnnSdkFormat(st->what, sizeof(st->what), "%s '%s': %lld rows of %lld, %d threads a row%s%s%s%s",
                    mname, n->name, (long long)p->rows, (long long)p->cols, p->group,
                    p->vecs ? "" : ", read twice (too long for registers)",
                    p->flags & RW_F_STORE_Y ? "" : ", no dx",
                    sums == HIPE_NBWD_ROW_SUMS ? ", with the rows' sums"
                                               : ", with column sums per group", sets);
    return 1;
}
