// fa_exec.h — what the attention kernels (fa_kernels.h) share with the host emulation:
// loads and stores of any storage type, the sequence lengths, the keys a query row sees,
// the scale and the bias.  Scores are kept in base 2 (s * log2(e)), so that the softmax
// is exp2 of a difference and the log-sum-exp (m + log2(l)) * ln(2).
//
// The includer provides PW_FN and the conversions (hd_half_to_float, ...), as for
// pw_exec.h.
#ifndef HIPDNN_HIP_FA_EXEC_H
#define HIPDNN_HIP_FA_EXEC_H

#include "fa_program.h"
#include "philox.h" /* dropout's random numbers, the reference engine's too */

#define FA_LOG2E 1.4426950408889634f
#define FA_LN2 0.6931471805599453f

PW_FN float fa_load(int dt, const void* p, int64_t off) {
    if (dt == PW_F16) return hd_half_to_float(((const uint16_t*)p)[off]);
    if (dt == PW_BF16) return hd_bf16_to_float(((const uint16_t*)p)[off]);
    return ((const float*)p)[off];
}

PW_FN void fa_store(int dt, void* p, int64_t off, float x) {
    if (dt == PW_F16) ((uint16_t*)p)[off] = hd_float_to_half(x);
    else if (dt == PW_BF16) ((uint16_t*)p)[off] = hd_float_to_bf16(x);
    else ((float*)p)[off] = x;
}

// A sequence length of sample b clamped to [0, cap], as the reference clamps it.
PW_FN int64_t fa_length(const void* p, int dt, int64_t stride, int64_t b, int64_t cap) {
    const int64_t x = dt == PW_I64 ? ((const int64_t*)p)[b * stride]
                                   : (int64_t)((const int32_t*)p)[b * stride];
    return x < 0 ? 0 : x > cap ? cap : x;
}

// Sample b's lengths: L_q and L_kv.
PW_FN void fa_lengths(const fa_program& p, int64_t b, int64_t* lq, int64_t* lkv) {
    *lq = p.len_q ? fa_length(p.len_q, p.len_q_dt, p.len_q_s, b, p.sq) : p.sq;
    *lkv = p.len_kv ? fa_length(p.len_kv, p.len_kv_dt, p.len_kv_s, b, p.skv) : p.skv;
}

// The keys [*lo, *hi) row i may see by the window and L_kv alone (empty when lo >= hi);
// both grow with i, so the keys of rows i0..i1 lie in [lo(i0), hi(i1)).  Rows past L_q
// see none: the caller checks i < lq.
PW_FN void fa_bounds(const fa_program& p, int64_t lq, int64_t lkv, int64_t i, int64_t* lo,
                     int64_t* hi) {
    const int64_t shift = p.bottom_right ? lkv - lq : 0;
    int64_t a = 0, e = lkv;
    if (p.right >= 0 && i + shift + p.right + 1 < e) e = i + shift + p.right + 1;
    if (p.left > 0 && i + shift - p.left + 1 > a) a = i + shift - p.left + 1;
    *lo = a;
    *hi = e;
}

// attn_scale * log2(e): the tensor's where one is bound, else the by-value one.
PW_FN float fa_scale_log2(const fa_program& p) {
    return (p.scale_t ? fa_load(p.scale_dt, p.scale_t, 0) : p.scale) * FA_LOG2E;
}

// Where sample b of tensor t (FA_RAG_*) starts: its ragged offset, else b * stride 0.
PW_FN int64_t fa_sample(const fa_program& p, int t, int64_t b) {
    if (p.rag[t])
        return p.rag_dt[t] == PW_I64 ? ((const int64_t*)p.rag[t])[b]
                                     : (int64_t)((const int32_t*)p.rag[t])[b];
    const int64_t* s = t == FA_RAG_Q ? p.q_s : t == FA_RAG_K ? p.k_s : t == FA_RAG_V ? p.v_s
                     : t == FA_RAG_O ? p.o_s : t == FA_RAG_DO ? p.do_s : t == FA_RAG_DQ ? p.dq_s
                     : t == FA_RAG_DK ? p.dk_s : t == FA_RAG_DV ? p.dv_s
                     : t == FA_RAG_PK ? p.page_k_s : p.page_v_s;
    return b * s[0];
}

// The rows of tensor t a sample may read or write: a ragged tensor's own (below its length
// n), else all s.
PW_FN int64_t fa_rows_end(const fa_program& p, int t, int64_t n, int64_t s) {
    return p.rag[t] ? n : s;
}

// Where row `row` of head h of a sample starting at element `at` starts in a [B, H, S, W]
// tensor of strides s, or in a paged cache (table non-NULL: the sample's entries from
// element tb, table strides ts, bs keys a block, nb blocks; an entry out of range reads
// block 0 or the last rather than memory past the cache).
PW_FN int64_t fa_row_at(const int64_t* s, const void* table, const int64_t* ts, int64_t bs,
                        int64_t nb, int64_t tb, int64_t at, int64_t h, int64_t row) {
    if (!table) return at + h * s[1] + row * s[2];
    int64_t blk = ((const int32_t*)table)[tb + (row / bs) * ts[1]];
    blk = blk < 0 ? 0 : blk >= nb ? nb - 1 : blk;
    return blk * s[0] + h * s[1] + (row % bs) * s[2];
}

// ALiBi's slope of query head h (hipdnn.h's rule; n = p.alibi_n).
PW_FN float fa_alibi_slope(int n, int64_t h) {
    return h < n ? exp2f(-8.0f * (float)(h + 1) / (float)n)
                 : exp2f(-4.0f * (float)(2 * (h - n) + 1) / (float)n);
}

// The additive terms of (b, h, i, j), bias and ALiBi, in base 2; 0 without them.
PW_FN float fa_bias_log2(const fa_program& p, int64_t b, int64_t h, int64_t i, int64_t j) {
    float x = p.alibi_n ? fa_alibi_slope(p.alibi_n, h) * (float)(j - i) : 0.0f;
    if (p.bias)
        x += fa_load(p.bias_dt, p.bias,
                     b * p.bias_s[0] + h * p.bias_s[1] + i * p.bias_s[2] + j * p.bias_s[3]);
    return x * FA_LOG2E;
}

// Dropout's seed or offset: the word in device memory where there, else the by-value one.
PW_FN uint64_t fa_word(const void* t, int dt, int64_t by_value) {
    if (!t) return (uint64_t)by_value;
    return dt == PW_I64 ? (uint64_t)((const int64_t*)t)[0] : (uint64_t)(int64_t)((const int32_t*)t)[0];
}

PW_FN uint64_t fa_seed(const fa_program& p) { return fa_word(p.seed_t, p.seed_dt, p.seed); }
PW_FN uint64_t fa_offset(const fa_program& p) { return fa_word(p.offset_t, p.offset_dt, p.offset); }

// z of (b, h, i, j): dropout's factor on p (fa_program.h), 1 without dropout.
PW_FN float fa_drop(const fa_program& p, uint64_t seed, uint64_t offset, int64_t b, int64_t h,
                    int64_t i, int64_t j) {
    if (!p.dropout) return 1.0f;
    return philox_keep(seed, offset, p.drop_threshold, b, h, i, j) ? p.drop_scale : 0.0f;
}

// Which (b, h, first query) block `bid` takes (fa_program.h: the last tile first).
PW_FN void fa_block_of(const fa_program& p, int64_t bid, int64_t* b, int64_t* h, int64_t* i0) {
    const int64_t bh = bid / p.q_blocks;
    const int64_t tile = p.q_blocks - 1 - (bid - bh * p.q_blocks);
    *b = bh / p.hq;
    *h = bh - *b * p.hq;
    *i0 = tile * p.rows;
}

// What a block knows of its queries: sample, heads, first query, the sample's lengths, the
// keys [klo, khi) any of its rows sees, and the scale in base 2.
struct FaBlock {
    int64_t b, h, hk, hv, i0, lq, lkv, klo, khi;
    float scale2;
    uint64_t seed, offset; // dropout's
};

// The keys row i sees: [*lo, *hi), empty (lo == hi) past L_q.
PW_FN void fa_row_keys(const fa_program& p, const FaBlock& k, int64_t i, int64_t* lo, int64_t* hi) {
    fa_bounds(p, k.lq, k.lkv, i, lo, hi);
    if (i >= k.lq) *hi = *lo;
}

// The keys rows [i0, i0 + n) see between them: [*lo, *hi), both 0 when none is below L_q.
PW_FN void fa_rows_keys(const fa_program& p, const FaBlock& k, int64_t i0, int n, int64_t* lo,
                        int64_t* hi) {
    const int64_t last = (i0 + n < k.lq ? i0 + n : k.lq) - 1;
    int64_t unused;
    *lo = *hi = 0;
    if (last < i0) return;
    fa_bounds(p, k.lq, k.lkv, i0, lo, &unused);
    fa_bounds(p, k.lq, k.lkv, last, &unused, hi);
}

// The keys [*lo, *hi) that every one of rows [i0, i0 + n) sees (empty: lo >= hi): the last
// row's lower bound to the first row's upper, as both grow with i; none where a row is at
// or past L_q.  fa_mma's tiles inside it need no mask.
PW_FN void fa_rows_common(const fa_program& p, const FaBlock& k, int64_t i0, int n, int64_t* lo,
                          int64_t* hi) {
    int64_t unused;
    *lo = *hi = 0;
    if (i0 + n > k.lq) return;
    fa_bounds(p, k.lq, k.lkv, i0 + n - 1, lo, &unused);
    fa_bounds(p, k.lq, k.lkv, i0, &unused, hi);
}

PW_FN FaBlock fa_block(const fa_program& p, int64_t bid) {
    FaBlock k;
    fa_block_of(p, bid, &k.b, &k.h, &k.i0);
    fa_lengths(p, k.b, &k.lq, &k.lkv);
    k.hk = k.h / (p.hq / p.hk);
    k.hv = k.h / (p.hq / p.hv);
    k.scale2 = fa_scale_log2(p);
    k.seed = p.dropout ? fa_seed(p) : 0;
    k.offset = p.dropout ? fa_offset(p) : 0;
    fa_rows_keys(p, k, k.i0, p.rows, &k.klo, &k.khi);
    return k;
}

// rng_dump of the block's rows (below S_q), every key: element e of rows x S_kv per thread t
// of nt, so that the writes of a warp are consecutive keys.
PW_FN void fa_dump_rows(const fa_program& p, const FaBlock& k, int64_t t, int64_t nt) {
    const int64_t n = (int64_t)p.rows * p.skv;
    for (int64_t e = t; e < n; e += nt) {
        const int64_t i = k.i0 + e / p.skv, j = e - (e / p.skv) * p.skv;
        if (i >= p.sq) break;
        const bool keep = philox_keep(k.seed, k.offset, p.drop_threshold, k.b, k.h, i, j);
        ((float*)p.rng_dump)[k.b * p.rng_s[0] + k.h * p.rng_s[1] + i * p.rng_s[2] +
                             j * p.rng_s[3]] = keep ? 1.0f : 0.0f;
    }
}

// Writes row i of (b, h): o (acc / l, or 0 where l is 0: no key seen) and its stats.
PW_FN int64_t fa_o_at(const fa_program& p, int64_t b, int64_t h, int64_t i) {
    return fa_sample(p, FA_RAG_O, b) + h * p.o_s[1] + i * p.o_s[2];
}

PW_FN void fa_store_stats(const fa_program& p, int64_t b, int64_t h, int64_t i, float m2, float l) {
    if (!p.stats) return;
    const float lse = l > 0.0f ? (m2 + log2f(l)) * FA_LN2 : -__builtin_huge_valf();
    fa_store(p.stats_dt, p.stats, b * p.stats_s[0] + h * p.stats_s[1] + i * p.stats_s[2], lse);
}

#endif
