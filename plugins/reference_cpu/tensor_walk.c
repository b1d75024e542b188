/* Strided tensors: sizes, NumPy broadcasting, and the block walker that moves values
 * between tensors of any layout and data type and float64 block buffers, spreading the
 * blocks over threads. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference_cpu.h"
#include "typed_rows.h"

bool ref_dtype_supported(hipdnnDataType_t t) {
    return t == HIPDNN_DATA_FLOAT || t == HIPDNN_DATA_HALF || t == HIPDNN_DATA_BFLOAT16 ||
           t == HIPDNN_DATA_DOUBLE;
}

bool ref_dtype_storable(hipdnnDataType_t t) {
    return ref_dtype_supported(t) || t == HIPDNN_DATA_BOOLEAN || t == HIPDNN_DATA_INT8 ||
           t == HIPDNN_DATA_UINT8 || t == HIPDNN_DATA_INT32 || t == HIPDNN_DATA_INT64;
}

void ref_index_view(int32_t ndim, const int64_t* dims, int axis, ref_view* v) {
    memset(v, 0, sizeof(*v));
    v->dtype = REF_DTYPE_INDEX;
    v->ndim = ndim;
    for (int32_t i = 0; i < ndim; ++i) {
        v->dims[i] = dims[i];
        v->strides[i] = i == axis && dims[i] > 1 ? 1 : 0;
    }
}

void ref_view_from_tensor(const hipdnnSdkTensor* t, void* data, ref_view* v) {
    memset(v, 0, sizeof(*v));
    v->data = data;
    v->dtype = t->data_type;
    v->ndim = t->ndim < 0 ? 0 : (t->ndim > HIPDNN_MAX_DIMS ? HIPDNN_MAX_DIMS : t->ndim);
    for (int32_t i = 0; i < v->ndim; ++i) {
        v->dims[i] = t->dims[i];
        v->strides[i] = t->strides[i];
    }
    v->ragged = t->has_ragged_offset; /* the offsets' memory: the executor's view_of */
}

void ref_view_packed_double(double* data, int32_t ndim, const int64_t* dims, ref_view* v) {
    memset(v, 0, sizeof(*v));
    v->data = data;
    v->dtype = HIPDNN_DATA_DOUBLE;
    v->ndim = ndim;
    for (int32_t i = 0; i < ndim; ++i) v->dims[i] = dims[i];
    hipdnnSdkPackedStrides(ndim, v->dims, v->strides);
}

int64_t ref_element_count(int32_t ndim, const int64_t* dims) {
    int64_t n = 1;
    for (int32_t i = 0; i < ndim; ++i) {
        if (dims[i] < 1 || dims[i] > REF_MAX_ELEMENTS) return -1;
        if (__builtin_mul_overflow(n, dims[i], &n) || n > REF_MAX_ELEMENTS) return -1;
    }
    return n;
}

bool ref_next_index(int32_t ndim, const int64_t* dims, int64_t* idx) {
    for (int32_t d = ndim - 1; d >= 0; --d) {
        if (++idx[d] < dims[d]) return true;
        idx[d] = 0;
    }
    return false;
}

int64_t ref_span_elements(int32_t ndim, const int64_t* dims, const int64_t* strides) {
    int64_t span = 1;
    for (int32_t i = 0; i < ndim; ++i) {
        int64_t step;
        if (dims[i] < 1 || strides[i] < 0) return -1;
        if (__builtin_mul_overflow(dims[i] - 1, strides[i], &step) ||
            __builtin_add_overflow(span, step, &span) || span > REF_MAX_ELEMENTS)
            return -1;
    }
    return span;
}

bool ref_broadcast_view(const ref_view* in, int32_t out_ndim, const int64_t* out_dims,
                        ref_view* bv) {
    ref_view r;
    memset(&r, 0, sizeof(r));
    r.data = in->data;
    r.dtype = in->dtype;
    r.ndim = out_ndim;
    /* Leading dims of `in` beyond out's rank must be 1 (they select nothing). */
    for (int32_t i = 0; i < in->ndim - out_ndim; ++i)
        if (in->dims[i] != 1) return false;
    for (int32_t o = out_ndim - 1, i = in->ndim - 1; o >= 0; --o, --i) {
        r.dims[o] = out_dims[o];
        if (i < 0 || in->dims[i] == 1) {
            r.strides[o] = 0;
        } else if (in->dims[i] == out_dims[o]) {
            r.strides[o] = in->strides[i];
        } else {
            return false;
        }
    }
    *bv = r;
    return true;
}

#define WALK_INLINE static inline __attribute__((always_inline))

/* ---- the block walker ------------------------------------------------------------- */

/* A walk: out and the inputs over the same merged dims (tensor 0 is out). */
typedef struct {
    const ref_view* views[REF_MAP_MAX_INPUTS + 1];
    int nt, nd;
    int64_t dims[HIPDNN_MAX_DIMS];
    int64_t st[REF_MAP_MAX_INPUTS + 1][HIPDNN_MAX_DIMS];
    int64_t total;
    ref_block_fn fn;
    const void* ctx;
    int ntmp;
    double* scratch; /* per worker: nt - 1 input blocks, the output block, ntmp blocks */
} walk;

/* Where a block starts: the outer index, the column in the innermost dim, and each
 * tensor's offset of the row's first element. */
typedef struct {
    int64_t idx[HIPDNN_MAX_DIMS];
    int64_t col;
    int64_t off[REF_MAP_MAX_INPUTS + 1];
} walk_pos;

static void walk_init(walk* w, const ref_view* out, int nin, const ref_view* ins) {
    memset(w, 0, sizeof(*w));
    w->nt = nin + 1;
    w->views[0] = out;
    for (int t = 0; t < nin; ++t) w->views[t + 1] = &ins[t];
    /* Out's dims from outermost to innermost in memory (a stable sort by falling stride):
     * an NHWC output is walked as it lies, not with a stride of C.  Block kernels are
     * elementwise, so the order of the walk changes no value. */
    int32_t order[HIPDNN_MAX_DIMS];
    for (int32_t i = 0; i < out->ndim; ++i) order[i] = i;
    for (int32_t i = 1; i < out->ndim; ++i)
        for (int32_t k = i; k > 0 && out->strides[order[k]] > out->strides[order[k - 1]]; --k) {
            int32_t tmp = order[k];
            order[k] = order[k - 1];
            order[k - 1] = tmp;
        }
    /* Drop size-1 dims, then merge a dim into the previous one when every tensor steps
     * through both as through one (stride[prev] == stride[d] * dims[d]). */
    int nd = 0;
    for (int32_t k = 0; k < out->ndim; ++k) {
        int32_t d = order[k];
        if (out->dims[d] == 1) continue;
        bool merge = nd > 0;
        for (int t = 0; merge && t < w->nt; ++t)
            if (w->st[t][nd - 1] != w->views[t]->strides[d] * out->dims[d]) merge = false;
        if (merge) {
            w->dims[nd - 1] *= out->dims[d];
            for (int t = 0; t < w->nt; ++t) w->st[t][nd - 1] = w->views[t]->strides[d];
        } else {
            w->dims[nd] = out->dims[d];
            for (int t = 0; t < w->nt; ++t) w->st[t][nd] = w->views[t]->strides[d];
            ++nd;
        }
    }
    if (nd == 0) { /* one element */
        w->dims[0] = 1;
        nd = 1;
    }
    w->nd = nd;
    w->total = 1;
    for (int d = 0; d < nd; ++d) w->total *= w->dims[d];
}

static void pos_offsets(const walk* w, walk_pos* p) {
    for (int t = 0; t < w->nt; ++t) {
        p->off[t] = 0;
        for (int d = 0; d < w->nd - 1; ++d) p->off[t] += p->idx[d] * w->st[t][d];
    }
}

/* The position of element e in row-major order. */
static void pos_at(const walk* w, int64_t e, walk_pos* p) {
    int64_t len = w->dims[w->nd - 1];
    p->col = e % len;
    e /= len;
    for (int d = w->nd - 2; d >= 0; --d) {
        p->idx[d] = e % w->dims[d];
        e /= w->dims[d];
    }
    pos_offsets(w, p);
}

/* Moves on by m elements, m <= what is left of the row. */
static void pos_step(const walk* w, walk_pos* p, int64_t m) {
    p->col += m;
    if (p->col < w->dims[w->nd - 1]) return;
    p->col = 0;
    ref_next_index(w->nd - 1, w->dims, p->idx);
    pos_offsets(w, p);
}

/* Reads n elements from position *p of each input into its block (ins[t - 1]), or
 * stores out's block there, and moves *p on past them: row by row, so a block may cover
 * several short rows. */
WALK_INLINE void walk_io(const walk* w, walk_pos* p, int64_t n, double* const* ins,
                         const double* out) {
    int last = w->nd - 1;
    int64_t len = w->dims[last];
    for (int64_t done = 0; done < n;) {
        int64_t m = len - p->col < n - done ? len - p->col : n - done;
        if (out) {
            const ref_view* v = w->views[0];
            ref_row_store(v->data, v->dtype, p->off[0] + p->col * w->st[0][last],
                          w->st[0][last], m, out + done);
        } else {
            for (int t = 1; t < w->nt; ++t) {
                const ref_view* v = w->views[t];
                ref_row_load(v->data, v->dtype, p->off[t] + p->col * w->st[t][last],
                             w->st[t][last], m, ins[t - 1] + done);
            }
        }
        done += m;
        pos_step(w, p, m);
    }
}

/* Blocks [begin, end) on one thread, with that worker's buffers. */
WALK_INLINE int walk_blocks(void* ctx, int64_t begin, int64_t end, int worker) {
    const walk* w = ctx;
    double* buf = w->scratch + (int64_t)worker * (w->nt + w->ntmp) * REF_BLOCK;
    double* ins[REF_MAP_MAX_INPUTS];
    for (int t = 0; t < w->nt - 1; ++t) ins[t] = buf + (int64_t)t * REF_BLOCK;
    double* out = buf + (int64_t)(w->nt - 1) * REF_BLOCK;
    double* tmp = out + REF_BLOCK;
    int64_t e = begin * REF_BLOCK;
    int64_t stop = end * REF_BLOCK < w->total ? end * REF_BLOCK : w->total;
    walk_pos at_in, at_out; /* where the next block is read from and stored to */
    pos_at(w, e, &at_in);
    at_out = at_in;
    for (; e < stop; e += REF_BLOCK) {
        int64_t n = stop - e < REF_BLOCK ? stop - e : REF_BLOCK;
        walk_io(w, &at_in, n, ins, NULL);
        w->fn((const double* const*)ins, out, n, w->ctx, tmp);
        walk_io(w, &at_out, n, NULL, out);
    }
    return 0;
}

/* The walker compiled for each vector width (the conversions to and from float64). */
#define WALK_VARIANT(name, attr)                                                  \
    attr static int name(void* ctx, int64_t begin, int64_t end, int worker) {     \
        return walk_blocks(ctx, begin, end, worker);                              \
    }
WALK_VARIANT(walk_generic, )
#ifdef REF_X86_VARIANTS
WALK_VARIANT(walk_avx2, REF_TARGET_AVX2)
WALK_VARIANT(walk_avx512, REF_TARGET_AVX512)
#endif

static ref_range_fn walk_variant(void) {
    switch (ref_vector_level()) {
#ifdef REF_X86_VARIANTS
    case REF_VECTOR_AVX512: return walk_avx512;
    case REF_VECTOR_AVX2: return walk_avx2;
#endif
    default: return walk_generic;
    }
}

/* Threads worth starting for a walk of `elements` values. */
static int walk_threads(int64_t elements) {
    return ref_threads_for((double)elements, REF_MIN_ELEMENTS_PER_THREAD);
}

int64_t ref_map_scratch_doubles(int64_t elements, int nin, int ntmp) {
    return (int64_t)walk_threads(elements) * (nin + 1 + ntmp) * REF_BLOCK;
}

void ref_map_blocks(const ref_view* out, int nin, const ref_view* ins, ref_block_fn fn,
                    const void* ctx, int ntmp, double* scratch) {
    walk w;
    walk_init(&w, out, nin, ins);
    w.fn = fn;
    w.ctx = ctx;
    w.ntmp = ntmp;
    w.scratch = scratch;
    int64_t blocks = (w.total + REF_BLOCK - 1) / REF_BLOCK;
    /* walk_blocks cannot fail */
    (void)ref_parallel_for(blocks, REF_MIN_ELEMENTS_PER_THREAD / REF_BLOCK,
                           walk_threads(w.total), walk_variant(), &w);
}

static void copy_block(const double* const* in, double* out, int64_t n, const void* ctx,
                       double* tmp) {
    (void)ctx;
    (void)tmp;
    memcpy(out, in[0], (size_t)n * sizeof(double));
}

void ref_copy_view(const ref_view* dst, const ref_view* src) {
    double buf[2 * REF_BLOCK];
    walk w;
    walk_init(&w, dst, 1, src);
    w.fn = copy_block;
    w.scratch = buf;
    walk_variant()(&w, 0, (w.total + REF_BLOCK - 1) / REF_BLOCK, 0);
}

void ref_gather(const ref_view* v, double* packed) {
    ref_view dst;
    ref_view_packed_double(packed, v->ndim, v->dims, &dst);
    ref_copy_view(&dst, v);
}

void ref_scatter(const double* packed, const ref_view* v) {
    ref_view src;
    ref_view_packed_double((double*)packed, v->ndim, v->dims, &src);
    ref_copy_view(v, &src);
}

double* ref_alloc_doubles(int64_t n, const hipdnnSdkNode* node) {
    double* p = NULL;
    if (n >= 0 && (uint64_t)n <= SIZE_MAX / sizeof(double))
        p = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    if (!p) {
        const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(node->kind);
        ref_set_error(REF_ENGINE_NAME ": node '%s' (%s): out of memory for %lld float64 "
                      "scratch values",
                      node->name, info ? info->name : "?", (long long)n);
    }
    return p;
}

void ref_load_row(const void* base, hipdnnDataType_t t, int64_t off, int64_t s, int64_t n,
                  double* out) {
    ref_row_load(base, t, off, s, n, out);
}

void ref_store_row(void* base, hipdnnDataType_t t, int64_t off, int64_t s, int64_t n,
                   const double* in) {
    ref_row_store(base, t, off, s, n, in);
}
