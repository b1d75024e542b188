/* Reducing a strided tensor over a set of axes into float64: the engine under the
 * reduction op and norm_forward's statistics.
 *
 * The values that share every kept index form a group; a group's values are combined in
 * float64 into acc[g], g the group's row-major index over the kept dims (so acc, read with
 * the output's dims, is the packed output).  Two ways through memory, chosen by x's
 * strides:
 *   inner: the innermost dim in memory is reduced (a layernorm's last axis, an NCHW
 *          batchnorm's H x W): a work item is one group, whose rows are read and folded
 *          into 8 running lanes (a fixed order the compiler can vectorize);
 *   outer: a kept dim is innermost (reducing over the first axis, NHWC statistics): a work
 *          item is a tile of up to TILE groups along that dim, and each reduced row
 *          is read as a vector and combined into the tile element by element.
 * When that gives too few items to share among threads (a reduction to a handful of
 * values), the reduced range is also cut into pieces, each combined on its own into
 * `partials` and the pieces then combined in order.  How many pieces, where each row and
 * lane starts: all follow from the shapes alone, so results do not depend on the thread
 * count, and fp16 / bf16 / fp32 sums of moderate length are exact in float64 anyway. */
#include <math.h>
#include <string.h>

#include "reference_cpu.h"
#include "typed_rows.h"

/* ---- the combining rules ------------------------------------------------------------- */

/* Always inlined into the item variants at the end of the file (one per vector width). */
#define RED_INLINE static inline __attribute__((always_inline))

/* IEEE 754-2019 maximum / minimum, as pointwise.c's max / min: NaN wins, -0 < +0 (for two
 * zeros a + b is the maximum and -(-a - b) the minimum).  Both are associative and
 * commutative, so lanes and pieces may combine in any fixed order. */
RED_INLINE double max2(double a, double b) {
    double m = a > b ? a : b;
    double z = a + b;
    m = a == 0.0 && b == 0.0 ? z : m;
    return isunordered(a, b) ? z : m;
}

RED_INLINE double min2(double a, double b) {
    double m = a < b ? a : b;
    double z = -(-a - b);
    m = a == 0.0 && b == 0.0 ? z : m;
    return isunordered(a, b) ? z : m;
}

/* What each op combines (with its value transform, below). */
typedef enum { COMBINE_ADD, COMBINE_MUL, COMBINE_MIN, COMBINE_MAX } combine_kind;

RED_INLINE combine_kind combine_of(ref_reduce_op op) {
    switch (op) {
    case REF_RED_PROD:
    case REF_RED_PROD_NONZERO: return COMBINE_MUL;
    case REF_RED_MIN: return COMBINE_MIN;
    case REF_RED_MAX:
    case REF_RED_AMAX: return COMBINE_MAX;
    default: return COMBINE_ADD;
    }
}

RED_INLINE double identity_of(ref_reduce_op op) {
    switch (combine_of(op)) {
    case COMBINE_MUL: return 1.0;
    case COMBINE_MIN: return INFINITY;
    case COMBINE_MAX: return -INFINITY;
    default: return 0.0;
    }
}

RED_INLINE double combine(combine_kind k, double a, double b) {
    switch (k) {
    case COMBINE_MUL: return a * b;
    case COMBINE_MIN: return min2(a, b);
    case COMBINE_MAX: return max2(a, b);
    default: return a + b;
    }
}

/* The value an element contributes: op's transform of x (shift: the group's mean, for
 * REF_RED_SUM_SQ_DEV).  mul_no_zeros counts a zero (of either sign) as 1. */
#define VALUE(op, x, shift)                                                            \
    ((op) == REF_RED_SUM_ABS || (op) == REF_RED_AMAX ? fabs(x)                         \
     : (op) == REF_RED_SUM_SQ                         ? (x) * (x)                      \
     : (op) == REF_RED_SUM_SQ_DEV                     ? ((x) - (shift)) * ((x) - (shift)) \
     : (op) == REF_RED_PROD_NONZERO                   ? ((x) == 0.0 ? 1.0 : (x))       \
                                                      : (x))

#define LANES 8

/* Folds n values into 8 lanes: value i goes to lane i % 8 of this call.  One loop per
 * op (the switch is outside), each simple enough to vectorize. */
#define FOLD_LOOP(op, comb)                                                             \
    for (int64_t i = 0; i + LANES <= n; i += LANES)                                     \
        for (int l = 0; l < LANES; ++l) lane[l] = comb(lane[l], VALUE(op, v[i + l], shift)); \
    for (int64_t i = n - n % LANES; i < n; ++i)                                         \
        lane[i % LANES] = comb(lane[i % LANES], VALUE(op, v[i], shift));

#define ADD2(a, b) ((a) + (b))
#define MUL2(a, b) ((a) * (b))

RED_INLINE void fold_lanes(ref_reduce_op op, const double* restrict v, int64_t n,
                           double shift, double* restrict lane) {
    switch (op) {
    case REF_RED_SUM: FOLD_LOOP(REF_RED_SUM, ADD2) break;
    case REF_RED_SUM_ABS: FOLD_LOOP(REF_RED_SUM_ABS, ADD2) break;
    case REF_RED_SUM_SQ: FOLD_LOOP(REF_RED_SUM_SQ, ADD2) break;
    case REF_RED_SUM_SQ_DEV: FOLD_LOOP(REF_RED_SUM_SQ_DEV, ADD2) break;
    case REF_RED_PROD: FOLD_LOOP(REF_RED_PROD, MUL2) break;
    case REF_RED_PROD_NONZERO: FOLD_LOOP(REF_RED_PROD_NONZERO, MUL2) break;
    case REF_RED_MIN: FOLD_LOOP(REF_RED_MIN, min2) break;
    case REF_RED_MAX: FOLD_LOOP(REF_RED_MAX, max2) break;
    case REF_RED_AMAX: FOLD_LOOP(REF_RED_AMAX, max2) break;
    }
}

/* tile[c] combined with the values of rows v[0][c], v[1][c], ... in that order, for a
 * tile of w groups: ROWS rows at a time, the running value in a register (one load and
 * store of the tile per ROWS rows), else one. */
#define ROWS 8
#define ROW_STEP(op, comb, r) t = comb(t, VALUE(op, v[r][c], sh[c]));
#define TILE_LOOP(op, comb)                                                                   \
    if (k == ROWS)                                                                            \
        for (int64_t c = 0; c < w; ++c) {                                                     \
            double t = tile[c];                                                               \
            ROW_STEP(op, comb, 0) ROW_STEP(op, comb, 1) ROW_STEP(op, comb, 2)                 \
            ROW_STEP(op, comb, 3) ROW_STEP(op, comb, 4) ROW_STEP(op, comb, 5)                 \
            ROW_STEP(op, comb, 6) ROW_STEP(op, comb, 7)                                       \
            tile[c] = t;                                                                      \
        }                                                                                     \
    else                                                                                      \
        for (int r = 0; r < k; ++r)                                                           \
            for (int64_t c = 0; c < w; ++c) tile[c] = comb(tile[c], VALUE(op, v[r][c], sh[c]));

RED_INLINE void fold_tile(ref_reduce_op op, const double* const* v, int k, int64_t w,
                          const double* restrict sh, double* restrict tile) {
    switch (op) {
    case REF_RED_SUM: TILE_LOOP(REF_RED_SUM, ADD2) break;
    case REF_RED_SUM_ABS: TILE_LOOP(REF_RED_SUM_ABS, ADD2) break;
    case REF_RED_SUM_SQ: TILE_LOOP(REF_RED_SUM_SQ, ADD2) break;
    case REF_RED_SUM_SQ_DEV: TILE_LOOP(REF_RED_SUM_SQ_DEV, ADD2) break;
    case REF_RED_PROD: TILE_LOOP(REF_RED_PROD, MUL2) break;
    case REF_RED_PROD_NONZERO: TILE_LOOP(REF_RED_PROD_NONZERO, MUL2) break;
    case REF_RED_MIN: TILE_LOOP(REF_RED_MIN, min2) break;
    case REF_RED_MAX: TILE_LOOP(REF_RED_MAX, max2) break;
    case REF_RED_AMAX: TILE_LOOP(REF_RED_AMAX, max2) break;
    }
}

/* acc[g] combined with row[g], for n groups (one loop per rule, so each vectorizes). */
static void combine_rows(combine_kind k, double* restrict acc, const double* restrict row,
                         int64_t n) {
    switch (k) {
    case COMBINE_MUL: for (int64_t g = 0; g < n; ++g) acc[g] *= row[g]; break;
    case COMBINE_MIN: for (int64_t g = 0; g < n; ++g) acc[g] = min2(acc[g], row[g]); break;
    case COMBINE_MAX: for (int64_t g = 0; g < n; ++g) acc[g] = max2(acc[g], row[g]); break;
    default: for (int64_t g = 0; g < n; ++g) acc[g] += row[g]; break;
    }
}

/* ---- the plan ------------------------------------------------------------------------ */

/* Values a piece should hold at least, and work items a reduction aims for. */
#define MIN_PIECE 4096
#define TARGET_ITEMS 256
/* Groups in a tile of the outer way: wide, so that each reduced row is read in long runs
 * (the worker's tile, shifts and ROWS row blocks, 48 KiB, stay in L2). */
#define TILE 2048

/* Kept dims in x's order with their group-index strides (row-major over the kept dims),
 * merged where x steps through two as through one; reduced dims in x's order.  Size-1
 * dims are dropped.  Sets groups and count, p->nk, and *nr the reduced dims found. */
static void split_dims(ref_reduce_plan* p, const ref_view* x, const bool* axes, int32_t* nr) {
    int64_t ka[HIPDNN_MAX_DIMS], acc = 1;
    for (int32_t d = x->ndim - 1; d >= 0; --d) {
        ka[d] = acc;
        if (!axes[d]) acc *= x->dims[d];
    }
    p->groups = acc;
    p->count = 1;
    int32_t nk = 0;
    *nr = 0;
    for (int32_t d = 0; d < x->ndim; ++d) {
        if (x->dims[d] == 1) continue;
        if (axes[d]) {
            p->rdims[*nr] = x->dims[d];
            p->rx[(*nr)++] = x->strides[d];
            p->count *= x->dims[d];
        } else if (nk > 0 && p->kx[nk - 1] == x->strides[d] * x->dims[d]) {
            p->kdims[nk - 1] *= x->dims[d];
            p->kx[nk - 1] = x->strides[d];
            p->ka[nk - 1] = ka[d];
        } else {
            p->kdims[nk] = x->dims[d];
            p->kx[nk] = x->strides[d];
            p->ka[nk++] = ka[d];
        }
    }
    p->nk = nk;
}

/* The nr reduced dims outermost in memory first (a stable sort by falling stride), merged
 * where contiguous; the last one is the row.  Sets p->nr (at least 1: with nothing
 * reduced, one value per group). */
static void order_reduced(ref_reduce_plan* p, int32_t nr) {
    for (int32_t i = 1; i < nr; ++i)
        for (int32_t k = i; k > 0 && p->rx[k] > p->rx[k - 1]; --k) {
            int64_t t = p->rx[k], u = p->rdims[k];
            p->rx[k] = p->rx[k - 1];
            p->rdims[k] = p->rdims[k - 1];
            p->rx[k - 1] = t;
            p->rdims[k - 1] = u;
        }
    int32_t m = 0;
    for (int32_t i = 0; i < nr; ++i) {
        if (m > 0 && p->rx[m - 1] == p->rx[i] * p->rdims[i]) {
            p->rdims[m - 1] *= p->rdims[i];
            p->rx[m - 1] = p->rx[i];
        } else {
            p->rdims[m] = p->rdims[i];
            p->rx[m++] = p->rx[i];
        }
    }
    if (m == 0) {
        p->rdims[0] = 1;
        p->rx[0] = 0;
        m = 1;
    }
    p->nr = m;
}

/* Inner when a reduced dim is innermost in memory (or nothing is kept); else the outer
 * way, which walks the kept innermost dim as rows (moved last) in tiles.  Sets the work
 * items (tiles, and chunks per row for the outer way). */
static void choose_way(ref_reduce_plan* p) {
    int32_t nk = p->nk, row = -1;
    for (int32_t i = 0; i < nk; ++i)
        if (row < 0 || p->kx[i] <= p->kx[row]) row = i;
    p->inner = nk == 0 || (p->count > 1 && p->rx[p->nr - 1] < p->kx[row]);
    if (!p->inner && row != nk - 1) {
        int64_t d = p->kdims[row], s = p->kx[row], a = p->ka[row];
        for (int32_t i = row; i < nk - 1; ++i) {
            p->kdims[i] = p->kdims[i + 1];
            p->kx[i] = p->kx[i + 1];
            p->ka[i] = p->ka[i + 1];
        }
        p->kdims[nk - 1] = d;
        p->kx[nk - 1] = s;
        p->ka[nk - 1] = a;
    }
    if (p->inner) {
        p->tiles = p->groups;
    } else {
        int64_t len = p->kdims[nk - 1];
        p->chunks = (len + TILE - 1) / TILE;
        p->tiles = p->groups / len * p->chunks;
    }
}

/* Pieces: only when the items are too few to share out, and never below MIN_PIECE
 * values each.  Shapes alone decide (the thread count only how many workers run). */
static void cut_pieces(ref_reduce_plan* p) {
    int64_t total = p->groups * p->count;
    int64_t want = total / REF_MIN_ELEMENTS_PER_THREAD;
    if (want > TARGET_ITEMS) want = TARGET_ITEMS;
    int64_t pieces = 1;
    if (p->tiles < want) {
        pieces = (want + p->tiles - 1) / p->tiles;
        /* a reduced step reads one value (inner way) or a tile's row (outer way) */
        int64_t step = p->inner ? 1 : (p->kdims[p->nk - 1] < TILE ? p->kdims[p->nk - 1] : TILE);
        int64_t most = p->count * step / MIN_PIECE;
        if (pieces > most) pieces = most;
        if (pieces < 1) pieces = 1;
    }
    p->piece = (p->count + pieces - 1) / pieces;
    p->pieces = (p->count + p->piece - 1) / p->piece;
    p->threads = ref_threads_for((double)total, REF_MIN_ELEMENTS_PER_THREAD);
}

void ref_reduce_plan_init(ref_reduce_plan* p, const ref_view* x, const bool* axes) {
    memset(p, 0, sizeof(*p));
    int32_t nr;
    split_dims(p, x, axes, &nr);
    order_reduced(p, nr);
    choose_way(p);
    cut_pieces(p);
}

/* Float64 buffers a worker takes: a row block (inner way), or a tile, its shifts and
 * ROWS row blocks (outer way). */
static int64_t worker_doubles(const ref_reduce_plan* p) {
    return ref_scratch_piece(p->inner ? REF_BLOCK : 2 * TILE + ROWS * REF_BLOCK);
}

int64_t ref_reduce_scratch_doubles(const ref_reduce_plan* p) {
    int64_t partials = p->pieces > 1 ? ref_scratch_piece(p->pieces * p->groups) : 0;
    return partials + p->threads * worker_doubles(p);
}

/* ---- running it ---------------------------------------------------------------------- */

typedef struct {
    const ref_reduce_plan* p;
    const ref_view* x;
    ref_reduce_op op;
    const double* shift;
    double* dst;     /* acc, or the partials (piece-major) */
    double* buffers; /* worker_doubles() per worker */
} job;

/* Offset in x of the reduced element with flat index r (row-major over rdims). */
static int64_t reduced_offset(const ref_reduce_plan* p, int64_t r, int64_t* idx) {
    int64_t off = 0;
    for (int32_t d = p->nr - 1; d >= 0; --d) {
        idx[d] = r % p->rdims[d];
        r /= p->rdims[d];
        off += idx[d] * p->rx[d];
    }
    return off;
}

/* Moves idx on by one row (all but the last reduced dim); the new row's offset. */
static int64_t next_row(const ref_reduce_plan* p, int64_t* idx) {
    ref_next_index(p->nr - 1, p->rdims, idx);
    int64_t off = 0;
    for (int32_t d = 0; d < p->nr - 1; ++d) off += idx[d] * p->rx[d];
    return off;
}

/* One group's values [b, e) of the reduced range, combined. */
RED_INLINE double inner_item(const job* j, int64_t g, int64_t b, int64_t e, double* buf) {
    const ref_reduce_plan* p = j->p;
    int64_t base = 0; /* the group's kept index as an offset in x */
    for (int32_t d = 0; d < p->nk; ++d) base += g / p->ka[d] % p->kdims[d] * p->kx[d];
    double shift = j->shift ? j->shift[g] : 0.0;
    double lane[LANES];
    for (int l = 0; l < LANES; ++l) lane[l] = identity_of(j->op);
    int64_t len = p->rdims[p->nr - 1], s = p->rx[p->nr - 1];
    int64_t idx[HIPDNN_MAX_DIMS];
    int64_t off = reduced_offset(p, b - b % len, idx); /* the row's start */
    int64_t col = b % len;
    while (b < e) {
        int64_t n = len - col < e - b ? len - col : e - b;
        for (int64_t done = 0; done < n;) {
            int64_t m = n - done < REF_BLOCK ? n - done : REF_BLOCK;
            ref_row_load(j->x->data, j->x->dtype, base + off + (col + done) * s, s, m, buf);
            fold_lanes(j->op, buf, m, shift, lane);
            done += m;
        }
        b += n;
        col = 0;
        if (b < e) off = next_row(p, idx);
    }
    combine_kind k = combine_of(j->op);
    double r = lane[0];
    for (int l = 1; l < LANES; ++l) r = combine(k, r, lane[l]);
    return r;
}

/* Tile t (an outer kept index and a chunk of the row dim): values [b, e) of the reduced
 * range combined into each of its groups, stored at dst[g]. */
RED_INLINE void outer_item(const job* j, int64_t t, int64_t b, int64_t e, double* dst,
                           double* buf) {
    const ref_reduce_plan* p = j->p;
    int32_t last = p->nk - 1;
    int64_t len = p->kdims[last], chunk = t % p->chunks, o = t / p->chunks;
    int64_t c0 = chunk * TILE, w = len - c0 < TILE ? len - c0 : TILE;
    int64_t xoff = c0 * p->kx[last], g0 = c0 * p->ka[last];
    for (int32_t d = last - 1; d >= 0; --d) {
        int64_t i = o % p->kdims[d];
        o /= p->kdims[d];
        xoff += i * p->kx[d];
        g0 += i * p->ka[d];
    }
    double *tile = buf, *sh = buf + TILE;
    double* rows[ROWS];
    const double* v[ROWS];
    for (int r = 0; r < ROWS; ++r) v[r] = rows[r] = buf + 2 * TILE + r * REF_BLOCK;
    double id = identity_of(j->op);
    for (int64_t c = 0; c < w; ++c) tile[c] = id;
    if (j->shift) /* only REF_RED_SUM_SQ_DEV reads sh */
        for (int64_t c = 0; c < w; ++c) sh[c] = j->shift[g0 + c * p->ka[last]];
    int64_t idx[HIPDNN_MAX_DIMS], roff[ROWS], s = p->kx[last];
    roff[0] = reduced_offset(p, b, idx);
    int32_t rl = p->nr - 1;
    if (s == 1 && w == len && w <= REF_BLOCK && p->rx[rl] == w) {
        /* Short rows back to back in memory (NHWC statistics): many rows per load, in
         * the same order.  rows[] are one run of ROWS * REF_BLOCK values here. */
        int64_t cap = ROWS * REF_BLOCK / w;
        for (int64_t r = b; r < e;) {
            int64_t k = e - r < cap ? e - r : cap;
            if (k > p->rdims[rl] - idx[rl]) k = p->rdims[rl] - idx[rl];
            ref_row_load(j->x->data, j->x->dtype, xoff + roff[0], 1, k * w, rows[0]);
            for (int64_t q = 0; q < k; q += ROWS) {
                int n = k - q < ROWS ? (int)(k - q) : ROWS;
                for (int i = 0; i < n; ++i) v[i] = rows[0] + (q + i) * w;
                fold_tile(j->op, v, n, w, sh, tile);
            }
            r += k;
            idx[rl] += k;
            if (idx[rl] == p->rdims[rl]) { /* on to the next run */
                idx[rl] = 0;
                ref_next_index(rl, p->rdims, idx);
            }
            roff[0] = 0;
            for (int32_t d = 0; d < p->nr; ++d) roff[0] += idx[d] * p->rx[d];
        }
        for (int64_t c = 0; c < w; ++c) dst[g0 + c * p->ka[last]] = tile[c];
        return;
    }
    for (int64_t r = b; r < e; r += ROWS) { /* ROWS reduced rows at a time, in order */
        int k = e - r < ROWS ? (int)(e - r) : ROWS;
        for (int q = 1; q < k; ++q) {
            ref_next_index(p->nr, p->rdims, idx);
            roff[q] = 0;
            for (int32_t d = 0; d < p->nr; ++d) roff[q] += idx[d] * p->rx[d];
        }
        for (int64_t c = 0; c < w; c += REF_BLOCK) { /* the rows' blocks stay in L1 */
            int64_t m = w - c < REF_BLOCK ? w - c : REF_BLOCK;
            for (int q = 0; q < k; ++q)
                ref_row_load(j->x->data, j->x->dtype, xoff + roff[q] + c * s, s, m, rows[q]);
            fold_tile(j->op, v, k, m, sh + c, tile + c);
        }
        if (r + k < e) {
            ref_next_index(p->nr, p->rdims, idx);
            roff[0] = 0;
            for (int32_t d = 0; d < p->nr; ++d) roff[0] += idx[d] * p->rx[d];
        }
    }
    for (int64_t c = 0; c < w; ++c) dst[g0 + c * p->ka[last]] = tile[c];
}

RED_INLINE int run_items(void* ctx, int64_t begin, int64_t end, int worker) {
    const job* j = ctx;
    const ref_reduce_plan* p = j->p;
    double* buf = j->buffers + worker * worker_doubles(p);
    for (int64_t i = begin; i < end; ++i) {
        int64_t s = i / p->tiles, t = i % p->tiles;
        int64_t b = s * p->piece, e = b + p->piece < p->count ? b + p->piece : p->count;
        double* dst = j->dst + (p->pieces > 1 ? s * p->groups : 0);
        if (p->inner) dst[t] = inner_item(j, t, b, e, buf);
        else outer_item(j, t, b, e, dst, buf);
    }
    return 0;
}

/* The items compiled for each vector width (conversions and folds), as the walker is. */
#define ITEMS_VARIANT(name, attr)                                                 \
    attr static int name(void* ctx, int64_t begin, int64_t end, int worker) {     \
        return run_items(ctx, begin, end, worker);                                \
    }
ITEMS_VARIANT(items_generic, )
#ifdef REF_X86_VARIANTS
ITEMS_VARIANT(items_avx2, REF_TARGET_AVX2)
ITEMS_VARIANT(items_avx512, REF_TARGET_AVX512)
#endif

static ref_range_fn items_variant(void) {
    switch (ref_vector_level()) {
#ifdef REF_X86_VARIANTS
    case REF_VECTOR_AVX512: return items_avx512;
    case REF_VECTOR_AVX2: return items_avx2;
#endif
    default: return items_generic;
    }
}

void ref_reduce_run(const ref_reduce_plan* p, const ref_view* x, ref_reduce_op op,
                    const double* shift, double* acc, double* scratch) {
    double* partials = scratch;
    double* buffers = scratch + (p->pieces > 1 ? ref_scratch_piece(p->pieces * p->groups) : 0);
    job j = {p, x, op, shift, p->pieces > 1 ? partials : acc, buffers};
    int64_t items = p->pieces * p->tiles;
    int64_t total = p->groups * p->count;
    /* each thread at least REF_MIN_ELEMENTS_PER_THREAD values */
    int64_t min_items = total > 0 ? items * REF_MIN_ELEMENTS_PER_THREAD / total : 1;
    (void)ref_parallel_for(items, min_items < 1 ? 1 : min_items, p->threads, items_variant(), &j);
    if (p->pieces > 1) { /* each group's pieces, in order: a piece at a time, contiguous */
        memcpy(acc, partials, (size_t)p->groups * sizeof(double));
        for (int64_t s = 1; s < p->pieces; ++s)
            combine_rows(combine_of(op), acc, partials + s * p->groups, p->groups);
    }
}
