/* Reductions, softmax and norms compiled into row-wise programs (rw_program.h), and with
 * them the engine's support checks for these nodes: whatever compiles, runs.  This file
 * holds what every family shares (rowwise.h); each family has its own file
 * (rowwise_reduction.c, rowwise_softmax.c, rowwise_norm.c).
 *
 * Each node (or softmax pattern) names its row space by its reduced axes: a reduction's
 * are where y has 1 and x not, a softmax's those of its max, a norm's those
 * hipdnnSdkNormAxes gives.  The axes are ordered as x lies in memory and merged where every
 * tensor of the stage allows (rwc_space_lay_out); then the kernel's geometry is chosen from the
 * row length alone, so that a plan's kernel is fixed when it is built. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rowwise.h"

int rwc_storage_of(hipdnnDataType_t t) {
    switch (t) {
    case HIPDNN_DATA_FLOAT: return PW_F32;
    case HIPDNN_DATA_HALF: return PW_F16;
    case HIPDNN_DATA_BFLOAT16: return PW_BF16;
    default: return -1;
    }
}

int rwc_storage_size(int s) { return s == PW_F32 ? 4 : 2; }

const hipdnnSdkTensor* rwc_find(const hipdnnSdkGraph* g, int64_t uid) {
    return uid == HIPDNN_NO_TENSOR ? NULL : hipdnnSdkGraphFindTensor(g, uid);
}

bool rwc_compute_ok(const hipdnnSdkNode* n, const char* label, char* why, size_t len) {
    hipdnnDataType_t ct = n->compute_type;
    if (ct == HIPDNN_DATA_NOT_SET || ct == HIPDNN_DATA_FLOAT || ct == HIPDNN_DATA_HALF ||
        ct == HIPDNN_DATA_BFLOAT16)
        return true;
    return decline(why, len, "%s: compute type %s not supported (fp32 compute)", label,
                   hipdnnSdkDataTypeName(ct));
}

/* A tensor the kernel reads or writes: stored as fp32 / fp16 / bf16, sane dims and
 * strides, and (outputs) no two elements at one address. */
bool rwc_tensor_ok(const hipdnnSdkTensor* t, const char* label, const char* port, bool output,
                      char* why, size_t len) {
    if (rwc_storage_of(t->data_type) < 0)
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


void rwc_space_init(space* s, const hipdnnSdkTensor* x, const bool* col) {
    memset(s, 0, sizeof(*s));
    s->R = x->ndim;
    for (int i = 0; i < x->ndim; ++i) {
        s->dims[i] = x->dims[i];
        s->col[i] = col[i] && x->dims[i] > 1;
    }
}

/* Adds tensor t (NumPy broadcasting against x, right-aligned) whose row-space strides go
 * to *dst. */
bool rwc_space_add(space* s, const hipdnnSdkTensor* t, pw_tensor* dst, const char* label,
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
    dst->dtype = rwc_storage_of(t->data_type);
    s->dst[s->n++] = dst;
    return true;
}

/* Orders the axes as x lies in memory (largest stride first), merges neighbours that every
 * tensor walks as one, and writes the dims and each tensor's strides into p. */
bool rwc_space_lay_out(space* s, rw_program* p, const char* label, char* why, size_t len) {
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
void rwc_register_geometry(rw_program* p, int esize, bool epilogue, bool softmax) {
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
        const int64_t unit = 16 / rwc_storage_size(t->dtype); /* elements of 16 bytes */
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
        fast = whole && !(p->flags & RW_F_EPILOGUE) && (p->vecs == 1 || p->vecs == 2) && p->dy.reserved && p->dy.dtype == p->x.dtype &&
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

/* ---- binding ------------------------------------------------------------------------------ */

void rwc_bind(hipe_stage* st, int64_t uid, size_t offset, int32_t scalar_dtype) {
    hipe_bind* b = &st->bind[st->nbind++];
    b->uid = uid;
    b->offset = (uint32_t)offset;
    b->scalar_dtype = scalar_dtype;
}
