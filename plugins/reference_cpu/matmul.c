/* matmul: c[..., M, N] = a[..., M, K] @ b[..., K, N], batch dims broadcast NumPy-style
 * (right-aligned; a size-1 or missing dim repeats).
 *
 * Each batch of a is packed (converted to float64 through its strides) into row panels
 * and each batch of b into column panels, once, whatever the broadcast; then the
 * (batch, row block, column block) items of c run over the cores through ref_gemm_packed, each storing
 * its block into c, rounded.  Scratch, in doubles (each term rounded up to 8, plus 8,
 * see scratch.c), with R x N' the item block (mm_layout: R <= min(M, 128), N' <= min(N,
 * 4096)):
 *
 *   A_batches * ceil(M / mr) * mr * K  +  B_batches * ceil(N / nr) * nr * K  +  T * R * N'
 *
 * with mr x nr the tile of ref_gemm_kernel_get() (8 x 16 with AVX-512, 4 x 8 with AVX2,
 * 4 x 4 otherwise), T = min(items, ref_threads_for(C_batches*M*N*K multiply-adds)).
 * (Packing a row-major a copies through a block buffer on the stack, ref_copy_view.) */
#include <string.h>

#include "reference_cpu.h"

#define MAX_COLS 4096 /* a multiple of every kernel's nr */

/* Batch dims of t right-aligned into `rank` slots, 1 where t has none. */
static void aligned_batch(const ref_view* t, int32_t rank, int64_t* out) {
    int32_t tb = t->ndim - 2;
    for (int32_t i = 0; i < rank; ++i) {
        int32_t j = i - (rank - tb);
        out[i] = j >= 0 ? t->dims[j] : 1;
    }
}

bool ref_matmul_check(const ref_view* a, const ref_view* b, const ref_view* c, char* why,
                      size_t len) {
    if (a->ndim < 2 || b->ndim < 2 || c->ndim < 2) {
        hipdnnSdkFormat(why, len, "ranks a %d, b %d, c %d; each needs at least 2", a->ndim,
                        b->ndim, c->ndim);
        return false;
    }
    int64_t m = a->dims[a->ndim - 2], k = a->dims[a->ndim - 1];
    int64_t kb = b->dims[b->ndim - 2], n = b->dims[b->ndim - 1];
    if (k != kb) {
        hipdnnSdkFormat(why, len, "a is [..., %lld, %lld] but b is [..., %lld, %lld]; inner "
                        "dims must match",
                        (long long)m, (long long)k, (long long)kb, (long long)n);
        return false;
    }
    if (c->dims[c->ndim - 2] != m || c->dims[c->ndim - 1] != n) {
        hipdnnSdkFormat(why, len, "c is [..., %lld, %lld] but expected [..., %lld, %lld]",
                        (long long)c->dims[c->ndim - 2], (long long)c->dims[c->ndim - 1],
                        (long long)m, (long long)n);
        return false;
    }
    int32_t rank = a->ndim;
    if (b->ndim > rank) rank = b->ndim;
    if (c->ndim > rank) rank = c->ndim;
    rank -= 2;
    int64_t ab[HIPDNN_MAX_DIMS], bb[HIPDNN_MAX_DIMS], cb[HIPDNN_MAX_DIMS];
    aligned_batch(a, rank, ab);
    aligned_batch(b, rank, bb);
    aligned_batch(c, rank, cb);
    for (int32_t i = 0; i < rank; ++i) {
        bool a_ok = ab[i] == cb[i] || ab[i] == 1, b_ok = bb[i] == cb[i] || bb[i] == 1;
        bool c_ok = cb[i] == 1 || ab[i] == cb[i] || bb[i] == cb[i];
        if (!a_ok || !b_ok || !c_ok) {
            hipdnnSdkFormat(why, len,
                            "batch dim %d (right-aligned): a %lld and b %lld do not broadcast "
                            "to c %lld",
                            i, (long long)ab[i], (long long)bb[i], (long long)cb[i]);
            return false;
        }
    }
    return true;
}

/* Strides over c's batch dims, in units of t's batches (0 where t broadcasts). */
static void batch_strides(const ref_view* t, const ref_view* c, int64_t* out) {
    ref_view batches, bv;
    ref_view_packed_double(NULL, t->ndim - 2, t->dims, &batches);
    memset(out, 0, sizeof(int64_t) * HIPDNN_MAX_DIMS);
    if (!ref_broadcast_view(&batches, c->ndim - 2, c->dims, &bv)) return; /* checked already */
    for (int32_t i = 0; i < c->ndim - 2; ++i) out[i] = bv.strides[i];
}

/* The 2-D view of batch `flat` (row-major over t's batch dims) of t; transposed for b,
 * whose panels hold columns. */
static void batch_matrix(const ref_view* t, int64_t flat, bool transpose, ref_view* out) {
    int32_t nb = t->ndim - 2;
    int64_t off = 0;
    for (int32_t i = nb - 1; i >= 0; --i) {
        off += flat % t->dims[i] * t->strides[i];
        flat /= t->dims[i];
    }
    *out = *t;
    out->data = (char*)t->data + off * (int64_t)hipdnnSdkDataTypeSize(t->dtype);
    out->ndim = 2;
    for (int j = 0; j < 2; ++j) {
        int32_t src = nb + (transpose ? 1 - j : j);
        out->dims[j] = t->dims[src];
        out->strides[j] = t->strides[src];
    }
}

typedef struct {
    const ref_gemm_kernel* kr;
    const ref_view *a, *b, *c;
    int64_t m, n, k;
    int64_t a_batches, b_batches;
    int64_t a_panels, b_panels; /* doubles per packed batch */
    int64_t sa[HIPDNN_MAX_DIMS], sb[HIPDNN_MAX_DIMS];
    int64_t rows, row_blocks, cols, col_blocks; /* one gemm item's block and the counts */
    int64_t items, workers;
    int threads, pack_threads; /* worth starting for the product and for the packing */
    double *ap, *bp, *work;    /* work: an R x N' block per worker */
} mm_job;

static int64_t batch_count(const ref_view* t) { return ref_element_count(t->ndim - 2, t->dims); }

static void mm_layout(mm_job* j, const ref_view* a, const ref_view* b, const ref_view* c) {
    memset(j, 0, sizeof(*j));
    j->kr = ref_gemm_kernel_get();
    j->a = a;
    j->b = b;
    j->c = c;
    j->m = a->dims[a->ndim - 2];
    j->k = a->dims[a->ndim - 1];
    j->n = b->dims[b->ndim - 1];
    j->a_batches = batch_count(a);
    j->b_batches = batch_count(b);
    j->a_panels = ref_gemm_panel_doubles(j->kr, j->m, j->k, false);
    j->b_panels = ref_gemm_panel_doubles(j->kr, j->n, j->k, true);
    int64_t nc = batch_count(c);
    int threads = ref_threads_for((double)nc * (double)j->m * (double)j->k * (double)j->n,
                                  REF_MIN_MACS_PER_THREAD);
    j->threads = threads;
    /* Packing is a copy: worth a thread from ~256K values (some 100 us). */
    j->pack_threads = ref_threads_for((double)j->a_batches * (double)j->a_panels +
                                      (double)j->b_batches * (double)j->b_panels, 262144.0);
    /* Items are blocks of at most 128 rows, whose A slice (128 x KC) stays in L2, and
     * MAX_COLS columns, which bound a worker's output buffer.  Smaller row blocks, then
     * column blocks, spread small products over the threads.  Starts are multiples of
     * the panel widths; blocking never changes a sum. */
    int64_t mr = j->kr->mr, nr = j->kr->nr;
    int64_t split = (4 * (int64_t)threads + nc - 1) / nc; /* row blocks per batch wanted */
    j->rows = ((j->m + split - 1) / split + mr - 1) / mr * mr;
    if (j->rows > 128 / mr * mr) j->rows = 128 / mr * mr;
    if (j->rows > j->m) j->rows = j->m;
    j->row_blocks = (j->m + j->rows - 1) / j->rows;
    j->cols = j->n < MAX_COLS ? j->n : MAX_COLS;
    if (nc * j->row_blocks < threads) {
        int64_t cb = (threads + nc * j->row_blocks - 1) / (nc * j->row_blocks);
        int64_t cols = ((j->n + cb - 1) / cb + nr - 1) / nr * nr;
        if (cols < j->cols) j->cols = cols;
    }
    j->col_blocks = (j->n + j->cols - 1) / j->cols;
    j->items = nc * j->row_blocks * j->col_blocks;
    j->workers = threads < j->items ? threads : j->items;
}

int64_t ref_matmul_scratch_doubles(const ref_view* a, const ref_view* b, const ref_view* c) {
    mm_job j;
    mm_layout(&j, a, b, c);
    return ref_scratch_piece(j.a_batches * j.a_panels) +
           ref_scratch_piece(j.b_batches * j.b_panels) +
           ref_scratch_piece(j.workers * j.rows * j.cols);
}

static int pack_items(void* p, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const mm_job* j = p;
    for (int64_t i = begin; i < end; ++i) {
        ref_view v;
        bool is_a = i < j->a_batches;
        int64_t bi = is_a ? i : i - j->a_batches;
        batch_matrix(is_a ? j->a : j->b, bi, !is_a, &v);
        double* dst = is_a ? j->ap + bi * j->a_panels : j->bp + bi * j->b_panels;
        ref_pack_panels(&v, is_a ? j->kr->mr : j->kr->nr, dst);
    }
    return 0;
}

static int gemm_items(void* p, int64_t begin, int64_t end, int worker) {
    const mm_job* j = p;
    const ref_view* c = j->c;
    int32_t nb = c->ndim - 2;
    double* block = j->work + worker * j->rows * j->cols;
    for (int64_t it = begin; it < end; ++it) {
        int64_t cb = it % j->col_blocks, rest = it / j->col_blocks;
        int64_t rb = rest % j->row_blocks, ci = rest / j->row_blocks;
        int64_t ab = 0, bb = 0, coff = 0, flat = ci;
        for (int32_t d = nb - 1; d >= 0; --d) {
            int64_t idx = flat % c->dims[d];
            flat /= c->dims[d];
            ab += idx * j->sa[d];
            bb += idx * j->sb[d];
            coff += idx * c->strides[d];
        }
        int64_t r0 = rb * j->rows, c0 = cb * j->cols;
        int64_t rows = j->m - r0 < j->rows ? j->m - r0 : j->rows;
        int64_t cols = j->n - c0 < j->cols ? j->n - c0 : j->cols;
        /* r0 and c0 are panel-aligned: panel r0/mr of A starts at r0 * k. */
        ref_gemm_packed(j->kr, rows, cols, j->k, j->ap + ab * j->a_panels + r0 * j->k,
                        j->bp + bb * j->b_panels + c0 * j->k, block, cols);
        int64_t sm = c->strides[nb], sn = c->strides[nb + 1];
        coff += r0 * sm + c0 * sn;
        for (int64_t i = 0; i < rows; ++i)
            ref_store_row(c->data, c->dtype, coff + i * sm, sn, cols, block + i * cols);
    }
    return 0;
}

hipdnnPluginStatus_t ref_matmul(const hipdnnSdkNode* node, const ref_view* a,
                                const ref_view* b, const ref_view* c,
                                const ref_region* scratch) {
    char why[REF_MSG_LEN];
    if (!ref_matmul_check(a, b, c, why, sizeof(why))) {
        ref_set_error(REF_ENGINE_NAME ": node '%s' (matmul): %s", node->name, why);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    mm_job j;
    mm_layout(&j, a, b, c);
    batch_strides(a, c, j.sa);
    batch_strides(b, c, j.sb);

    ref_scratch s;
    if (!ref_scratch_open(&s, ref_matmul_scratch_doubles(a, b, c), scratch, node))
        return HIPDNN_PLUGIN_STATUS_ALLOC_FAILED;
    j.ap = ref_scratch_take(&s, j.a_batches * j.a_panels);
    j.bp = ref_scratch_take(&s, j.b_batches * j.b_panels);
    j.work = ref_scratch_take(&s, j.workers * j.rows * j.cols);

    /* the items cannot fail */
    (void)ref_parallel_for(j.a_batches + j.b_batches, 1, j.pack_threads, pack_items, &j);
    (void)ref_parallel_for(j.items, 1, j.threads, gemm_items, &j);
    ref_scratch_close(&s);
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}
