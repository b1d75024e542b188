// fa_bwd_exec.h — what the attention backward kernels (fa_bwd_kernels.h) share with the
// host emulation: the forward's log-sum-exp read back, delta's place in the workspace, the
// query rows that see a key, and which keys a block of the dK / dV kernel owns.
//
// As in fa_exec.h, scores are in base 2: p = exp2(s * log2(e) - stats * log2(e)).
#ifndef HIPDNN_HIP_FA_BWD_EXEC_H
#define HIPDNN_HIP_FA_BWD_EXEC_H

#include "fa_exec.h"

// attn_scale itself: dq = scale ds k, dk = scale ds^T q.
PW_FN float fa_scale(const fa_program& p) {
    return p.scale_t ? fa_load(p.scale_dt, p.scale_t, 0) : p.scale;
}

// Row i's log-sum-exp in base 2, +inf where it is not finite (a row that saw no key, as
// the forward leaves it: -inf): exp2(s - lse) is then 0, no gradient, as the reference.
PW_FN float fa_lse_log2(const fa_program& p, int64_t b, int64_t h, int64_t i) {
    const float x =
        fa_load(p.stats_dt, p.stats, b * p.stats_s[0] + h * p.stats_s[1] + i * p.stats_s[2]);
    return x - x == 0.0f ? x * FA_LOG2E : __builtin_huge_valf();
}

// Row i of (b, h) in the delta workspace ([B, H_q, S_q], fp32).
PW_FN int64_t fa_delta_at(const fa_program& p, int64_t b, int64_t h, int64_t i) {
    return (b * p.hq + h) * p.sq + i;
}

// The query rows [*lo, *hi) that see key j (fa_bounds solved for i), both within [0, L_q];
// empty (hi == lo) at or past L_kv.  Both grow with j, so the rows keys j0..j1 see lie in
// [lo(j0), hi(j1)) while j1 < L_kv.  lo is clamped to L_q: a key no row sees (a top-left
// causal mask's keys past S_q) would else give an empty range past L_q, and a block's
// range [lo(j0), hi(j1)) would then run past S_q, the dK / dV kernels reading q, dO, stats
// and delta outside their tensors (0 times those values: NaN where they are not finite).
PW_FN void fa_key_rows(const fa_program& p, int64_t lq, int64_t lkv, int64_t j, int64_t* lo,
                       int64_t* hi) {
    const int64_t shift = p.bottom_right ? lkv - lq : 0;
    int64_t a = 0, e = lq;
    if (p.right >= 0 && j - shift - p.right > a) a = j - shift - p.right;
    if (a > lq) a = lq;
    if (p.left > 0 && j - shift + p.left < e) e = j - shift + p.left;
    if (j >= lkv || e < a) e = a;
    *lo = a;
    *hi = e;
}

// The rows keys [j0, j0 + n) see between them: [*lo, *hi), both 0 when none is below L_kv.
PW_FN void fa_keys_rows(const fa_program& p, int64_t lq, int64_t lkv, int64_t j0, int n,
                        int64_t* lo, int64_t* hi) {
    const int64_t last = (j0 + n < lkv ? j0 + n : lkv) - 1;
    int64_t unused;
    *lo = *hi = 0;
    if (last < j0) return;
    fa_key_rows(p, lq, lkv, j0, lo, &unused);
    fa_key_rows(p, lq, lkv, last, &unused, hi);
}

// What a block of the dK / dV kernel knows: sample, owner head (a key head, a value head,
// or both where H_k = H_v: p.owner), its first key, the sample's lengths, the query heads
// [h0, h0 + nh) that read the owner, the rows [ilo, ihi) its keys see, the scales.
struct FaKeyBlock {
    int64_t b, g, j0, lq, lkv, h0, nh, ilo, ihi;
    float scale2, scale;
    uint64_t seed, offset; // dropout's
};

// Block `bid`: key tiles of one (b, g) in order (a top-left causal mask's first keys are
// seen by the most rows: the longest blocks start first).
PW_FN FaKeyBlock fa_key_block(const fa_program& p, int64_t bid) {
    FaKeyBlock k;
    const int64_t heads = p.owner == FA_OWN_V ? p.hv : p.hk;
    const int64_t bg = bid / p.k_blocks;
    k.b = bg / heads;
    k.g = bg - k.b * heads;
    k.j0 = (bid - bg * p.k_blocks) * p.keys;
    fa_lengths(p, k.b, &k.lq, &k.lkv);
    k.nh = p.hq / heads;
    k.h0 = k.g * k.nh;
    k.scale = fa_scale(p);
    k.scale2 = k.scale * FA_LOG2E;
    k.seed = p.dropout ? fa_seed(p) : 0;
    k.offset = p.dropout ? fa_offset(p) : 0;
    fa_keys_rows(p, k.lq, k.lkv, k.j0, p.keys, &k.ilo, &k.ihi);
    return k;
}

#endif
