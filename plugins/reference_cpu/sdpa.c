/* sdpa_fwd and sdpa_bwd: scaled dot-product attention and its gradients.
 *
 * Per batch b and query head h (key head h / (H_q / H_k), value head h / (H_q / H_v)):
 *   s_ij = attn_scale * q_i . k_j + bias_ij [+ slope_h (j - i): ALiBi]  for the keys j
 *   row i may see,
 *   p_ij = exp(s_ij - stats_i), stats_i = log sum_j exp(s_ij)  (the log-sum-exp),
 *   o_i  = sum_j p_ij v_j.
 * Row i sees key j when j < L_kv, i < L_q (the sequence lengths of sample b with a padding
 * mask, else S_kv and S_q) and i + shift - left_bound < j <= i + shift + right_bound
 * (bounds left out when unset; shift = L_kv - L_q for BOTTOM_RIGHT alignment, else 0).
 * A row that sees no key gives o_i = 0 and stats_i = -inf, and no gradient.  Paged K / V
 * (the forward): k and v are caches [blocks, H, block_size, D], key j of sample b the row
 * j % block_size of block table[b, 0, j / block_size, 0], S_kv = max_seq_len_kv.
 * Dropout (probability > 0): o_i = sum_j p_ij keep_ij / (1 - probability) v_j, keep_ij from
 * philox.h (seed, offset; the same rule the hip kernels draw), stats left as they are;
 * rng_dump gets keep_ij as 1.0 / 0.0 at every (b, h, i, j) below [B, H_q, S_q, S_kv].
 * Ragged q, k, v, o, dO, dq, dk, dv (with a padding mask): sample b starts at its
 * offsets[b]; only its rows below its length are read or written (sdpa_ragged.c).
 *
 * The backward recomputes p from the forward's stats, with D_i = dO_i . o_i:
 *   dp_ij = dO_i . v_j z_ij,  ds_ij = p_ij (dp_ij - D_i),
 *   dq_i = attn_scale sum_j ds_ij k_j,  dk_j = attn_scale sum_i ds_ij q_i,
 *   dv_j = sum_i p_ij z_ij dO_i,  z_ij = keep_ij / (1 - probability) (1 without dropout),
 * dk and dv summed over the query heads of a key / value head.  dq is a pass over query
 * rows, dk and dv a pass over key rows each, so no two threads write one value.
 *
 * Every operand is first gathered into a packed float64 copy; all arithmetic is float64
 * and each result is rounded once when stored (p is not rounded to the storage type in
 * between, as fused attention kernels do: the float64 reference is the target). */
#include <math.h>
#include <string.h>

#include "reference_cpu.h"
/* Philox4x32-10 and the dropout rule: the one definition the hip engine's kernels use */
#include "../hip/philox.h"

/* ---- geometry ----------------------------------------------------------------------------- */

typedef struct {
    int64_t b, hq, hk, hv, sq, skv, d, dv;
    double scale;
    bool bottom_right, padding;
    int64_t left, right; /* 0 / -1: unset */
    const ref_view* bias; /* NULL: none */
    ref_view bias_b;      /* broadcast to [B, H_q, S_q, S_kv] */
    const int64_t* len_q; /* per sample (padding), else NULL */
    const int64_t* len_kv;
    int64_t alibi_n; /* ALiBi: the largest power of two <= H_q; 0: none */
    bool dropout;    /* probability > 0: keep (philox.h) scaled by drop_scale, else 0 */
    uint32_t drop_threshold;
    double drop_scale; /* 1 / (1 - probability) */
    uint64_t seed, offset;
} sd_geo;

static void geo_init(sd_geo* g, const hipdnnSdkNode* node, const ref_view* q, const ref_view* k,
                     const ref_view* v) {
    g->b = q->dims[0];
    g->hq = q->dims[1];
    g->sq = q->dims[2];
    g->d = q->dims[3];
    g->hk = k->dims[1];
    g->skv = node->attrs[HIPDNN_SDPA_MAX_SEQ_LEN_KV].i[0] > 0
                 ? node->attrs[HIPDNN_SDPA_MAX_SEQ_LEN_KV].i[0] : k->dims[2];
    g->hv = v->dims[1];
    g->dv = v->dims[3];
    g->scale = 1.0;
    g->bottom_right =
        node->attrs[HIPDNN_SDPA_ALIGNMENT].i[0] == HIPDNN_DIAGONAL_ALIGNMENT_BOTTOM_RIGHT;
    g->left = node->attrs[HIPDNN_SDPA_LEFT_BOUND].i[0];
    g->right = node->attrs[HIPDNN_SDPA_RIGHT_BOUND].i[0];
    g->padding = node->attrs[HIPDNN_SDPA_PADDING].i[0] != 0;
    g->bias = NULL;
    g->len_q = g->len_kv = NULL;
    g->alibi_n = 0;
    const double prob = node->attrs[HIPDNN_SDPA_DROPOUT].d;
    g->dropout = prob > 0.0;
    g->drop_threshold = philox_threshold(prob);
    g->drop_scale = 1.0 / (1.0 - prob);
    g->seed = g->offset = 0;
    if (node->attrs[HIPDNN_SDPA_ALIBI].i[0])
        for (g->alibi_n = 1; 2 * g->alibi_n <= g->hq;) g->alibi_n *= 2;
}

static bool dims4(const ref_view* v, int64_t a, int64_t b, int64_t c, int64_t d) {
    return v->ndim == 4 && v->dims[0] == a && v->dims[1] == b && v->dims[2] == c &&
           v->dims[3] == d;
}

/* The page tables (tables: the forward's, NULL for the backward): both or neither, int32
 * [B, 1, blocks, 1] covering max_seq_len_kv. */
static bool check_paged(const hipdnnSdkNode* node, const ref_view* const* in,
                        const ref_view* const* tables, char* why, size_t len) {
    const int64_t skv = node->attrs[HIPDNN_SDPA_MAX_SEQ_LEN_KV].i[0];
    const bool any = tables && (tables[0] || tables[1]);
    if (!any && skv == 0) return true;
    bool ok = any && tables[0] && tables[1] && skv > 0;
    for (int p = 0; ok && p < 2; ++p)
        ok = dims4(tables[p], in[0]->dims[0], 1, tables[p]->dims[2], 1) &&
             tables[p]->dtype == HIPDNN_DATA_INT32 && tables[p]->dims[2] * in[1 + p]->dims[2] >= skv;
    if (!ok)
        hipdnnSdkFormat(why, len, "paged attention needs page_table_k and page_table_v (int32 "
                        "[B, 1, blocks, 1], blocks * block_size >= max_seq_len_kv) and "
                        "max_seq_len_kv, in the forward only");
    return ok;
}

/* The checks both ops share: q, k, v and the optional ports (in: q, k, v, attn_scale,
 * bias, seq_len_q, seq_len_kv; tables as check_paged's). */
static bool check_common(const hipdnnSdkNode* node, const ref_view* const* in,
                         const ref_view* const* tables, char* why, size_t len) {
    const ref_view *q = in[0], *k = in[1], *v = in[2];
    if (!q || !k || !v) {
        hipdnnSdkFormat(why, len, "q, k and v must be set");
        return false;
    }
    const bool paged = tables && tables[0];
    if (q->ndim != 4 || k->ndim != 4 || v->ndim != 4 ||
        (!paged && (k->dims[0] != q->dims[0] || v->dims[0] != q->dims[0])) ||
        k->dims[3] != q->dims[3] || v->dims[2] != k->dims[2] ||
        q->dims[1] % k->dims[1] != 0 || q->dims[1] % v->dims[1] != 0) {
        hipdnnSdkFormat(why, len, "q, k, v must be [B, H_q, S_q, D], [B, H_k, S_kv, D], "
                        "[B, H_v, S_kv, D_v] with H_q a multiple of H_k and H_v");
        return false;
    }
    if (!check_paged(node, in, tables, why, len)) return false;
    if (in[3] && ref_element_count(in[3]->ndim, in[3]->dims) != 1) {
        hipdnnSdkFormat(why, len, "attn_scale must hold one value");
        return false;
    }
    ref_view bv;
    const int64_t skv = paged ? node->attrs[HIPDNN_SDPA_MAX_SEQ_LEN_KV].i[0] : k->dims[2];
    const int64_t full[4] = {q->dims[0], q->dims[1], q->dims[2], skv};
    if (in[4] && (in[4]->ndim != 4 || !ref_broadcast_view(in[4], 4, full, &bv))) {
        hipdnnSdkFormat(why, len, "bias does not broadcast to [B, H_q, S_q, S_kv]");
        return false;
    }
    bool padding = node->attrs[HIPDNN_SDPA_PADDING].i[0] != 0;
    for (int p = 5; p < 7; ++p) {
        if (!padding && in[p]) {
            hipdnnSdkFormat(why, len, "%s is set but use_padding_mask is not",
                            p == 5 ? "seq_len_q" : "seq_len_kv");
            return false;
        }
        if (padding && (!in[p] || !dims4(in[p], q->dims[0], 1, 1, 1) ||
                        (in[p]->dtype != HIPDNN_DATA_INT32 && in[p]->dtype != HIPDNN_DATA_INT64))) {
            hipdnnSdkFormat(why, len, "use_padding_mask needs %s as int32 or int64 [B, 1, 1, 1]",
                            p == 5 ? "seq_len_q" : "seq_len_kv");
            return false;
        }
    }
    if (node->attrs[HIPDNN_SDPA_LEFT_BOUND].i[0] < 0 ||
        node->attrs[HIPDNN_SDPA_RIGHT_BOUND].i[0] < -1) {
        hipdnnSdkFormat(why, len, "left_bound must be positive (0: none), right_bound at least "
                        "0 (-1: none)");
        return false;
    }
    return true;
}

/* The key range [*lo, *hi) row i of sample b sees; false if none. */
static bool key_range(const sd_geo* g, int64_t b, int64_t i, int64_t* lo, int64_t* hi) {
    int64_t lq = g->len_q ? g->len_q[b] : g->sq;
    int64_t lk = g->len_kv ? g->len_kv[b] : g->skv;
    if (i >= lq || lk <= 0) return false;
    int64_t shift = g->bottom_right ? lk - lq : 0;
    int64_t a = 0, e = lk;
    if (g->right >= 0 && i + shift + g->right + 1 < e) e = i + shift + g->right + 1;
    if (g->left > 0 && i + shift - g->left + 1 > a) a = i + shift - g->left + 1;
    *lo = a;
    *hi = e;
    return a < e;
}

/* ALiBi's slope of query head h (hipdnn.h): the first n heads take 2^(-8 / n) to the
 * powers 1..n, the rest the odd powers of 2^(-4 / n). */
static double alibi_slope(int64_t n, int64_t h) {
    return h < n ? exp2(-8.0 * (double)(h + 1) / (double)n)
                 : exp2(-4.0 * (double)(2 * (h - n) + 1) / (double)n);
}

/* The additive terms of score (b, h, i, j): the bias and ALiBi's. */
static double bias_at(const sd_geo* g, int64_t b, int64_t h, int64_t i, int64_t j) {
    double x = g->alibi_n ? alibi_slope(g->alibi_n, h) * (double)(j - i) : 0.0;
    if (!g->bias) return x;
    const ref_view* v = &g->bias_b;
    int64_t off = b * v->strides[0] + h * v->strides[1] + i * v->strides[2] + j * v->strides[3];
    return x + hipdnnSdkLoadAsDouble(v->data, v->dtype, off);
}

/* z_ij: dropout's factor of score (b, h, i, j), 1 without dropout. */
static double drop_at(const sd_geo* g, int64_t b, int64_t h, int64_t i, int64_t j) {
    if (!g->dropout) return 1.0;
    return philox_keep(g->seed, g->offset, g->drop_threshold, b, h, i, j) ? g->drop_scale : 0.0;
}

/* Dropout's seed or offset: one int32 / int64 value, read whole from memory (not through
 * a double); a by-value one is the executor's float64 copy (exact below 2^53). */
static uint64_t load_word(const ref_view* v) {
    if (!v) return 0;
    if (v->dtype == HIPDNN_DATA_DOUBLE) return (uint64_t)(int64_t)((const double*)v->data)[0];
    return v->dtype == HIPDNN_DATA_INT64 ? (uint64_t)((const int64_t*)v->data)[0]
                                         : (uint64_t)(int64_t)((const int32_t*)v->data)[0];
}

/* Dropout's ports (seed, offset; both ops): set where the probability is above 0 or an
 * rng_dump is asked for, one int32 / int64 value each. */
static bool check_dropout(const hipdnnSdkNode* node, const ref_view* seed, const ref_view* offset,
                          bool dump, char* why, size_t len) {
    const double prob = node->attrs[HIPDNN_SDPA_DROPOUT].d;
    bool ok = prob >= 0.0 && prob < 1.0 && ((prob == 0.0 && !dump) || (seed && offset));
    const ref_view* t[2] = {seed, offset};
    for (int i = 0; ok && i < 2; ++i)
        ok = !t[i] || (ref_element_count(t[i]->ndim, t[i]->dims) == 1 &&
                       (t[i]->dtype == HIPDNN_DATA_INT32 || t[i]->dtype == HIPDNN_DATA_INT64 ||
                        t[i]->dtype == HIPDNN_DATA_DOUBLE /* by value, at execute */));
    if (!ok)
        hipdnnSdkFormat(why, len, "dropout needs a probability in [0, 1) and seed and offset "
                        "(one int32 or int64 value each)");
    return ok;
}

/* Packed [B, H, S, D] float64 copies: element (b, h, s, d) at ((b H + h) S + s) D + d. */
static const double* row_of(const double* t, int64_t h_count, int64_t s_count, int64_t d,
                            int64_t b, int64_t h, int64_t s) {
    return t + ((b * h_count + h) * s_count + s) * d;
}

static double dot(const double* a, const double* b, int64_t n) {
    double s = 0.0;
    for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
    return s;
}

/* Sequence lengths clamped to [0, S]. */
static void load_lengths(const ref_view* v, int64_t n, int64_t cap, int64_t* out) {
    for (int64_t b = 0; b < n; ++b) {
        double x = hipdnnSdkLoadAsDouble(v->data, v->dtype, b * v->strides[0]);
        out[b] = x < 0 ? 0 : x > (double)cap ? cap : (int64_t)x;
    }
}

static double scale_of(const ref_view* v) {
    return v ? hipdnnSdkLoadAsDouble(v->data, v->dtype, 0) : 1.0;
}

/* ---- forward -------------------------------------------------------------------------------- */

bool ref_sdpa_fwd_check(const hipdnnSdkNode* node, const ref_view* const* in,
                        const ref_view* const* out, char* why, size_t len) {
    if (!check_common(node, in, in + HIPDNN_SDPA_PAGE_TABLE_K, why, len)) return false;
    const ref_view *q = in[HIPDNN_SDPA_Q], *v = in[HIPDNN_SDPA_V];
    if (!out[HIPDNN_SDPA_O] || !dims4(out[HIPDNN_SDPA_O], q->dims[0], q->dims[1], q->dims[2],
                                      v->dims[3])) {
        hipdnnSdkFormat(why, len, "o must be [B, H_q, S_q, D_v]");
        return false;
    }
    if (out[HIPDNN_SDPA_STATS] &&
        !dims4(out[HIPDNN_SDPA_STATS], q->dims[0], q->dims[1], q->dims[2], 1)) {
        hipdnnSdkFormat(why, len, "stats must be [B, H_q, S_q, 1]");
        return false;
    }
    const ref_view* dump = out[HIPDNN_SDPA_RNG_DUMP];
    const int64_t skv = node->attrs[HIPDNN_SDPA_MAX_SEQ_LEN_KV].i[0] > 0
                            ? node->attrs[HIPDNN_SDPA_MAX_SEQ_LEN_KV].i[0] : in[HIPDNN_SDPA_K]->dims[2];
    if (dump && !dims4(dump, q->dims[0], q->dims[1], q->dims[2], skv)) {
        hipdnnSdkFormat(why, len, "rng_dump must be [B, H_q, S_q, S_kv]");
        return false;
    }
    return check_dropout(node, in[HIPDNN_SDPA_SEED], in[HIPDNN_SDPA_OFFSET], dump != NULL, why,
                         len);
}

/* Scratch: packed q, k, v, o, stats, the lengths, and a row of scores per thread. */
static int64_t fwd_scratch(const sd_geo* g, int threads) {
    return ref_scratch_piece(g->b * g->hq * g->sq * g->d) +
           ref_scratch_piece(g->b * g->hk * g->skv * g->d) +
           ref_scratch_piece(g->b * g->hv * g->skv * g->dv) +
           ref_scratch_piece(g->b * g->hq * g->sq * g->dv) +
           ref_scratch_piece(g->b * g->hq * g->sq) +
           2 * ref_scratch_piece(g->b) + threads * ref_scratch_piece(g->skv);
}

static int scratch_threads(void) { return ref_cpu_threads(); }

int64_t ref_sdpa_fwd_scratch_doubles(const hipdnnSdkNode* node, const ref_view* const* in) {
    sd_geo g;
    geo_init(&g, node, in[HIPDNN_SDPA_Q], in[HIPDNN_SDPA_K], in[HIPDNN_SDPA_V]);
    return fwd_scratch(&g, scratch_threads());
}

typedef struct {
    const sd_geo* g;
    const double *q, *k, *v;
    double *o, *stats, *rows; /* rows: S_kv scores per worker */
    const double* dO;         /* backward: dO, and D per query row */
    const double* delta;
    double *dq, *dk, *dv;
} sd_ctx;

static int fwd_rows(void* vctx, int64_t begin, int64_t end, int worker) {
    sd_ctx* c = vctx;
    const sd_geo* g = c->g;
    double* s = c->rows + worker * ref_scratch_piece(g->skv);
    for (int64_t r = begin; r < end; ++r) {
        int64_t i = r % g->sq, h = (r / g->sq) % g->hq, b = r / (g->sq * g->hq);
        int64_t hk = h / (g->hq / g->hk), hv = h / (g->hq / g->hv);
        double* o = c->o + r * g->dv;
        for (int64_t e = 0; e < g->dv; ++e) o[e] = 0.0;
        int64_t lo, hi;
        if (!key_range(g, b, i, &lo, &hi)) {
            c->stats[r] = -INFINITY;
            continue;
        }
        const double* qi = c->q + r * g->d;
        double m = -INFINITY;
        for (int64_t j = lo; j < hi; ++j) {
            s[j] = g->scale * dot(qi, row_of(c->k, g->hk, g->skv, g->d, b, hk, j), g->d) +
                   bias_at(g, b, h, i, j);
            if (s[j] > m) m = s[j];
        }
        double l = 0.0;
        for (int64_t j = lo; j < hi; ++j) {
            double p = exp(s[j] - m);
            l += p;
            const double* vj = row_of(c->v, g->hv, g->skv, g->dv, b, hv, j);
            const double pz = p * drop_at(g, b, h, i, j);
            for (int64_t e = 0; e < g->dv; ++e) o[e] += pz * vj[e];
        }
        for (int64_t e = 0; e < g->dv; ++e) o[e] /= l;
        c->stats[r] = m + log(l);
    }
    return 0;
}

/* A paged cache's keys (rows) through its table into packed [B, H, S_kv, D], the rows a
 * sample sees (below L_kv) only, the rest 0; false naming the table where an entry read is
 * not a block of the cache. */
static bool gather_paged(const sd_geo* g, const ref_view* cache, const ref_view* table,
                         const char* node, const char* name, double* out) {
    const int64_t h_count = cache->dims[1], d = cache->dims[3], bs = cache->dims[2];
    const int64_t span = ref_span_elements(table->ndim, table->dims, table->strides);
    for (int64_t b = 0; table->ragged && b < g->b; ++b) { /* a packed table: its entries */
        const int64_t lk = g->len_kv ? g->len_kv[b] : g->skv, used = (lk + bs - 1) / bs;
        const int64_t at = ref_ragged_start(table, b);
        if (used > 0 && (at < 0 || at + (used - 1) * table->strides[2] >= span)) {
            ref_set_error(REF_ENGINE_NAME ": node '%s': %s's ragged offset[%lld] = %lld puts its "
                          "%lld entries outside the table's %lld", node, name, (long long)b,
                          (long long)at, (long long)used, (long long)span);
            return false;
        }
    }
    for (int64_t b = 0; b < g->b; ++b) {
        const int64_t lk = g->len_kv ? g->len_kv[b] : g->skv;
        for (int64_t j = 0; j < g->skv; ++j) {
            int64_t blk = 0;
            if (j < lk) {
                blk = (int64_t)hipdnnSdkLoadAsDouble(table->data, table->dtype,
                                                     ref_ragged_start(table, b) +
                                                         (j / bs) * table->strides[2]);
                if (blk < 0 || blk >= cache->dims[0]) {
                    ref_set_error(REF_ENGINE_NAME ": %s[%lld, 0, %lld, 0] is %lld, not a block of "
                                  "the cache's %lld", name, (long long)b, (long long)(j / bs),
                                  (long long)blk, (long long)cache->dims[0]);
                    return false;
                }
            }
            for (int64_t h = 0; h < h_count; ++h) {
                double* row = out + ((b * h_count + h) * g->skv + j) * d;
                int64_t at = blk * cache->strides[0] + h * cache->strides[1] +
                             (j % bs) * cache->strides[2];
                for (int64_t e = 0; e < d; ++e)
                    row[e] = j < lk ? hipdnnSdkLoadAsDouble(cache->data, cache->dtype,
                                                            at + e * cache->strides[3])
                                    : 0.0;
            }
        }
    }
    return true;
}

/* Gathers q, k, v (and the lengths, bias, scale) into the scratch and the geometry; k and
 * v through the page tables where given (tables NULL or both set); false where a table
 * entry is bad. */
static bool load_common(sd_geo* g, ref_scratch* s, const char* node, const ref_view* q,
                        const ref_view* k, const ref_view* v, const ref_view* scale,
                        const ref_view* bias, const ref_view* len_q, const ref_view* len_kv,
                        const ref_view* const* tables, double** qp, double** kp, double** vp) {
    *qp = ref_scratch_take(s, g->b * g->hq * g->sq * g->d);
    *kp = ref_scratch_take(s, g->b * g->hk * g->skv * g->d);
    *vp = ref_scratch_take(s, g->b * g->hv * g->skv * g->dv);
    g->scale = scale_of(scale);
    if (bias) {
        const int64_t full[4] = {g->b, g->hq, g->sq, g->skv};
        ref_broadcast_view(bias, 4, full, &g->bias_b);
        g->bias = bias;
    }
    /* lengths stored as doubles' bits in the scratch, as int64 */
    int64_t* lq = (int64_t*)ref_scratch_take(s, g->b);
    int64_t* lk = (int64_t*)ref_scratch_take(s, g->b);
    if (g->padding) {
        load_lengths(len_q, g->b, g->sq, lq);
        load_lengths(len_kv, g->b, g->skv, lk);
        g->len_q = lq;
        g->len_kv = lk;
    }
    /* ragged q, k, v (a padding mask with them): each sample's rows below its length */
    if (!ref_ragged_check(q, g->len_q, node, "q") || !ref_ragged_check(k, g->len_kv, node, "k") ||
        !ref_ragged_check(v, g->len_kv, node, "v"))
        return false;
    ref_ragged_gather(q, g->len_q, *qp);
    if (tables && tables[0])
        return gather_paged(g, k, tables[0], node, "page_table_k", *kp) &&
               gather_paged(g, v, tables[1], node, "page_table_v", *vp);
    ref_ragged_gather(k, g->len_kv, *kp);
    ref_ragged_gather(v, g->len_kv, *vp);
    return true;
}

static int threads_for(const sd_geo* g, int64_t items) {
    double work = (double)items * (double)g->skv * (double)(g->d + g->dv);
    int t = ref_threads_for(work, REF_MIN_MACS_PER_THREAD);
    return t < scratch_threads() ? t : scratch_threads();
}

/* rng_dump: keep_ij as 1.0 / 0.0 at every (b, h, i, j), masked or not. */
static void write_rng_dump(const sd_geo* g, const ref_view* dump) {
    for (int64_t b = 0; b < g->b; ++b)
        for (int64_t h = 0; h < g->hq; ++h)
            for (int64_t i = 0; i < g->sq; ++i)
                for (int64_t j = 0; j < g->skv; ++j) {
                    const int64_t at = b * dump->strides[0] + h * dump->strides[1] +
                                       i * dump->strides[2] + j * dump->strides[3];
                    const bool keep =
                        philox_keep(g->seed, g->offset, g->drop_threshold, b, h, i, j);
                    hipdnnSdkStoreFromDouble(dump->data, dump->dtype, at, keep ? 1.0 : 0.0);
                }
}

hipdnnPluginStatus_t ref_sdpa_fwd(const hipdnnSdkNode* node, const ref_view* const* in,
                                  const ref_view* const* out, const ref_region* scratch) {
    char why[REF_MSG_LEN];
    if (!ref_sdpa_fwd_check(node, in, out, why, sizeof(why))) {
        ref_set_error(REF_ENGINE_NAME ": node '%s' (sdpa): %s", node->name, why);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    sd_geo g;
    geo_init(&g, node, in[HIPDNN_SDPA_Q], in[HIPDNN_SDPA_K], in[HIPDNN_SDPA_V]);
    ref_scratch s;
    if (!ref_scratch_open(&s, fwd_scratch(&g, scratch_threads()), scratch, node))
        return HIPDNN_PLUGIN_STATUS_ALLOC_FAILED;
    sd_ctx c;
    memset(&c, 0, sizeof(c));
    double *qp, *kp, *vp; /* the order of takes follows fwd_scratch */
    if (!load_common(&g, &s, node->name, in[HIPDNN_SDPA_Q], in[HIPDNN_SDPA_K],
                     in[HIPDNN_SDPA_V], in[HIPDNN_SDPA_ATTN_SCALE], in[HIPDNN_SDPA_BIAS],
                     in[HIPDNN_SDPA_SEQ_LEN_Q], in[HIPDNN_SDPA_SEQ_LEN_KV],
                     in + HIPDNN_SDPA_PAGE_TABLE_K, &qp, &kp, &vp) ||
        !ref_ragged_check(out[HIPDNN_SDPA_O], g.len_q, node->name, "o")) {
        ref_scratch_close(&s);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    g.seed = load_word(in[HIPDNN_SDPA_SEED]);
    g.offset = load_word(in[HIPDNN_SDPA_OFFSET]);
    c.g = &g;
    c.q = qp;
    c.k = kp;
    c.v = vp;
    c.o = ref_scratch_take(&s, g.b * g.hq * g.sq * g.dv);
    c.stats = ref_scratch_take(&s, g.b * g.hq * g.sq);
    c.rows = ref_scratch_take(&s, scratch_threads() * ref_scratch_piece(g.skv));
    int64_t rows = g.b * g.hq * g.sq;
    ref_parallel_for(rows, 1, threads_for(&g, rows), fwd_rows, &c);
    ref_ragged_scatter(c.o, out[HIPDNN_SDPA_O], g.len_q);
    if (out[HIPDNN_SDPA_STATS]) ref_scatter(c.stats, out[HIPDNN_SDPA_STATS]);
    if (out[HIPDNN_SDPA_RNG_DUMP]) write_rng_dump(&g, out[HIPDNN_SDPA_RNG_DUMP]);
    ref_scratch_close(&s);
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

/* ---- backward ------------------------------------------------------------------------------- */

/* The backward's ports in the forward's order (q, k, v, attn_scale, bias, seq_len_q,
 * seq_len_kv). */
static void bwd_common(const ref_view* const* in, const ref_view** c) {
    c[0] = in[HIPDNN_SDPA_BWD_Q];
    c[1] = in[HIPDNN_SDPA_BWD_K];
    c[2] = in[HIPDNN_SDPA_BWD_V];
    c[3] = in[HIPDNN_SDPA_BWD_ATTN_SCALE];
    c[4] = in[HIPDNN_SDPA_BWD_BIAS];
    c[5] = in[HIPDNN_SDPA_BWD_SEQ_LEN_Q];
    c[6] = in[HIPDNN_SDPA_BWD_SEQ_LEN_KV];
}

bool ref_sdpa_bwd_check(const hipdnnSdkNode* node, const ref_view* const* in,
                        const ref_view* const* out, char* why, size_t len) {
    const ref_view* c[7];
    bwd_common(in, c);
    if (!check_common(node, c, NULL, why, len) ||
        !check_dropout(node, in[HIPDNN_SDPA_BWD_SEED], in[HIPDNN_SDPA_BWD_OFFSET], false, why, len))
        return false;
    const ref_view *q = c[0], *v = c[2];
    for (int p = HIPDNN_SDPA_BWD_O; p <= HIPDNN_SDPA_BWD_STATS; ++p) {
        int64_t last = p == HIPDNN_SDPA_BWD_STATS ? 1 : v->dims[3];
        if (!in[p] || !dims4(in[p], q->dims[0], q->dims[1], q->dims[2], last)) {
            hipdnnSdkFormat(why, len, "%s must be [B, H_q, S_q, %s]",
                            p == HIPDNN_SDPA_BWD_O ? "o" : p == HIPDNN_SDPA_BWD_DO ? "dO" : "stats",
                            p == HIPDNN_SDPA_BWD_STATS ? "1" : "D_v");
            return false;
        }
    }
    static const char* const grads[3] = {"dq", "dk", "dv"}, *const of[3] = {"q", "k", "v"};
    for (int p = 0; p < 3; ++p) {
        const int64_t* d = c[p]->dims;
        if (!out[p] || !dims4(out[p], d[0], d[1], d[2], d[3])) {
            hipdnnSdkFormat(why, len, "%s must have %s's dims", grads[p], of[p]);
            return false;
        }
    }
    return true;
}

static int64_t bwd_scratch(const sd_geo* g) {
    int64_t qn = g->b * g->hq * g->sq;
    return ref_scratch_piece(qn * g->d) + ref_scratch_piece(g->b * g->hk * g->skv * g->d) +
           ref_scratch_piece(g->b * g->hv * g->skv * g->dv) + 2 * ref_scratch_piece(g->b) +
           2 * ref_scratch_piece(qn * g->dv) /* o (then dq), dO */ + 2 * ref_scratch_piece(qn) +
           ref_scratch_piece(qn * g->d) /* dq */ + ref_scratch_piece(g->b * g->hk * g->skv * g->d) +
           ref_scratch_piece(g->b * g->hv * g->skv * g->dv);
}

int64_t ref_sdpa_bwd_scratch_doubles(const hipdnnSdkNode* node, const ref_view* const* in) {
    sd_geo g;
    geo_init(&g, node, in[HIPDNN_SDPA_BWD_Q], in[HIPDNN_SDPA_BWD_K], in[HIPDNN_SDPA_BWD_V]);
    return bwd_scratch(&g);
}

/* p_ij from the forward's stats (0 where j is masked), for row r = (b, h, i). */
static double p_of(const sd_ctx* c, int64_t b, int64_t h, int64_t i, int64_t j, int64_t r) {
    const sd_geo* g = c->g;
    int64_t hk = h / (g->hq / g->hk);
    double s = g->scale * dot(c->q + r * g->d, row_of(c->k, g->hk, g->skv, g->d, b, hk, j), g->d) +
               bias_at(g, b, h, i, j);
    return exp(s - c->stats[r]);
}

/* dq and D over query rows. */
static int bwd_query_rows(void* vctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    sd_ctx* c = vctx;
    const sd_geo* g = c->g;
    for (int64_t r = begin; r < end; ++r) {
        int64_t i = r % g->sq, h = (r / g->sq) % g->hq, b = r / (g->sq * g->hq);
        int64_t hk = h / (g->hq / g->hk), hv = h / (g->hq / g->hv);
        double* dq = c->dq + r * g->d;
        for (int64_t e = 0; e < g->d; ++e) dq[e] = 0.0;
        int64_t lo, hi;
        if (!key_range(g, b, i, &lo, &hi) || !isfinite(c->stats[r])) continue;
        const double* dOi = c->dO + r * g->dv;
        double delta = c->delta[r];
        for (int64_t j = lo; j < hi; ++j) {
            double p = p_of(c, b, h, i, j, r);
            double dp = dot(dOi, row_of(c->v, g->hv, g->skv, g->dv, b, hv, j), g->dv) *
                        drop_at(g, b, h, i, j);
            double ds = p * (dp - delta) * g->scale;
            const double* kj = row_of(c->k, g->hk, g->skv, g->d, b, hk, j);
            for (int64_t e = 0; e < g->d; ++e) dq[e] += ds * kj[e];
        }
    }
    return 0;
}

/* dk over key rows (b, hk, j): every query head of the group, every row that sees j. */
static int bwd_key_rows(void* vctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    sd_ctx* c = vctx;
    const sd_geo* g = c->g;
    int64_t group = g->hq / g->hk;
    for (int64_t t = begin; t < end; ++t) {
        int64_t j = t % g->skv, hk = (t / g->skv) % g->hk, b = t / (g->skv * g->hk);
        double* dk = c->dk + t * g->d;
        for (int64_t e = 0; e < g->d; ++e) dk[e] = 0.0;
        for (int64_t h = hk * group; h < (hk + 1) * group; ++h) {
            int64_t hv = h / (g->hq / g->hv);
            const double* vj = row_of(c->v, g->hv, g->skv, g->dv, b, hv, j);
            for (int64_t i = 0; i < g->sq; ++i) {
                int64_t lo, hi, r = (b * g->hq + h) * g->sq + i;
                if (!key_range(g, b, i, &lo, &hi) || j < lo || j >= hi || !isfinite(c->stats[r]))
                    continue;
                double p = p_of(c, b, h, i, j, r);
                double dp = dot(c->dO + r * g->dv, vj, g->dv) * drop_at(g, b, h, i, j);
                double ds = p * (dp - c->delta[r]) * g->scale;
                const double* qi = c->q + r * g->d;
                for (int64_t e = 0; e < g->d; ++e) dk[e] += ds * qi[e];
            }
        }
    }
    return 0;
}

/* dv over value rows (b, hv, j). */
static int bwd_value_rows(void* vctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    sd_ctx* c = vctx;
    const sd_geo* g = c->g;
    int64_t group = g->hq / g->hv;
    for (int64_t t = begin; t < end; ++t) {
        int64_t j = t % g->skv, hv = (t / g->skv) % g->hv, b = t / (g->skv * g->hv);
        double* dv = c->dv + t * g->dv;
        for (int64_t e = 0; e < g->dv; ++e) dv[e] = 0.0;
        for (int64_t h = hv * group; h < (hv + 1) * group; ++h)
            for (int64_t i = 0; i < g->sq; ++i) {
                int64_t lo, hi, r = (b * g->hq + h) * g->sq + i;
                if (!key_range(g, b, i, &lo, &hi) || j < lo || j >= hi || !isfinite(c->stats[r]))
                    continue;
                double p = p_of(c, b, h, i, j, r) * drop_at(g, b, h, i, j);
                const double* dOi = c->dO + r * g->dv;
                for (int64_t e = 0; e < g->dv; ++e) dv[e] += p * dOi[e];
            }
    }
    return 0;
}

hipdnnPluginStatus_t ref_sdpa_bwd(const hipdnnSdkNode* node, const ref_view* const* in,
                                  const ref_view* const* out, const ref_region* scratch) {
    char why[REF_MSG_LEN];
    if (!ref_sdpa_bwd_check(node, in, out, why, sizeof(why))) {
        ref_set_error(REF_ENGINE_NAME ": node '%s' (sdpa_backward): %s", node->name, why);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    const ref_view* cv[7];
    bwd_common(in, cv);
    sd_geo g;
    geo_init(&g, node, cv[0], cv[1], cv[2]);
    ref_scratch s;
    if (!ref_scratch_open(&s, bwd_scratch(&g), scratch, node))
        return HIPDNN_PLUGIN_STATUS_ALLOC_FAILED;
    sd_ctx c;
    memset(&c, 0, sizeof(c));
    double *qp, *kp, *vp;
    static const char* const names[5] = {"o", "dO", "dq", "dk", "dv"};
    const ref_view* rv[5] = {in[HIPDNN_SDPA_BWD_O], in[HIPDNN_SDPA_BWD_DO],
                             out[HIPDNN_SDPA_BWD_DQ], out[HIPDNN_SDPA_BWD_DK],
                             out[HIPDNN_SDPA_BWD_DV]};
    bool ok = load_common(&g, &s, node->name, cv[0], cv[1], cv[2], cv[3], cv[4], cv[5], cv[6],
                          NULL, &qp, &kp, &vp);
    for (int p = 0; ok && p < 5; ++p)
        ok = ref_ragged_check(rv[p], p < 3 ? g.len_q : g.len_kv, node->name, names[p]);
    if (!ok) {
        ref_scratch_close(&s);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    int64_t qn = g.b * g.hq * g.sq;
    double* o = ref_scratch_take(&s, qn * g.dv);
    double* dO = ref_scratch_take(&s, qn * g.dv);
    double* stats = ref_scratch_take(&s, qn);
    double* delta = ref_scratch_take(&s, qn);
    ref_ragged_gather(in[HIPDNN_SDPA_BWD_O], g.len_q, o);
    ref_ragged_gather(in[HIPDNN_SDPA_BWD_DO], g.len_q, dO);
    ref_gather(in[HIPDNN_SDPA_BWD_STATS], stats);
    for (int64_t r = 0; r < qn; ++r) delta[r] = dot(dO + r * g.dv, o + r * g.dv, g.dv);
    g.seed = load_word(in[HIPDNN_SDPA_BWD_SEED]);
    g.offset = load_word(in[HIPDNN_SDPA_BWD_OFFSET]);
    c.g = &g;
    c.q = qp;
    c.k = kp;
    c.v = vp;
    c.dO = dO;
    c.stats = stats;
    c.delta = delta;
    c.dq = ref_scratch_take(&s, qn * g.d);
    c.dk = ref_scratch_take(&s, g.b * g.hk * g.skv * g.d);
    c.dv = ref_scratch_take(&s, g.b * g.hv * g.skv * g.dv);
    ref_parallel_for(qn, 1, threads_for(&g, qn), bwd_query_rows, &c);
    int64_t kn = g.b * g.hk * g.skv, vn = g.b * g.hv * g.skv;
    ref_parallel_for(kn, 1, threads_for(&g, kn * (g.hq / g.hk) * g.sq / (g.skv ? g.skv : 1)),
                     bwd_key_rows, &c);
    ref_parallel_for(vn, 1, threads_for(&g, vn * (g.hq / g.hv) * g.sq / (g.skv ? g.skv : 1)),
                     bwd_value_rows, &c);
    ref_ragged_scatter(c.dq, out[HIPDNN_SDPA_BWD_DQ], g.len_q);
    ref_ragged_scatter(c.dk, out[HIPDNN_SDPA_BWD_DK], g.len_kv);
    ref_ragged_scatter(c.dv, out[HIPDNN_SDPA_BWD_DV], g.len_kv);
    ref_scratch_close(&s);
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}
