// emulate_attention.cpp — the attention kernels (fa_kernels.h, fa_bwd_kernels.h) run on the
// host for the emulated engine: each row (forward, dq) or key (dk, dv) of each block in the
// kernels' block order, in fp32, through the same helpers the kernels use (fa_exec.h,
// fa_bwd_exec.h: the keys a row sees, the rows a key is seen by, the blocks' ranges), so
// the emulated tests check the plan, the grids, the indexing and the masks.  A launch whose
// block would miss a pair one of its rows (keys) sees fails, as the kernels walk only their
// block's range.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "emulate.h"

#include "fa_bwd_exec.h"
#include "fa_exec_decode.h"

namespace {

// Forward: keys [lo, hi) of row i of head h a tile at a time, scores in base 2 (fp32 fused
// multiply-adds over d in order), the running maximum m and sum l rescaled by each tile;
// acc gets the unnormalised o (all 0, m -inf and l 0 where no key is seen).
void fa_row_walk(const fa_program& p, int64_t b, int64_t h, int64_t i, int64_t lo, int64_t hi,
                 float scale2, float* acc, float* m_out, float* l_out) {
    const int64_t hk = h / (p.hq / p.hk), hv = h / (p.hq / p.hv);
    const int64_t qa = fa_sample(p, FA_RAG_Q, b) + h * p.q_s[1] + i * p.q_s[2];
    const uint64_t seed = p.dropout ? fa_seed(p) : 0, offset = p.dropout ? fa_offset(p) : 0;
    float m = -__builtin_huge_valf(), l = 0.0f, s[FA_SIMT_KEYS];
    for (int64_t e = 0; e < p.dv; ++e) acc[e] = 0.0f;
    for (int64_t kt = lo; kt < hi; kt += FA_SIMT_KEYS) {
        const int n = hi - kt < FA_SIMT_KEYS ? (int)(hi - kt) : FA_SIMT_KEYS;
        float mx = m;
        for (int j = 0; j < n; ++j) {
            const int64_t ka =
                fa_row_at(p.k_s, p.page_k, p.page_k_s, p.block_k, p.blocks_k,
                          fa_sample(p, FA_RAG_PK, b), fa_sample(p, FA_RAG_K, b), hk, kt + j);
            float dot = 0.0f;
            for (int64_t c = 0; c < p.d; ++c)
                dot = fmaf(fa_load(p.q_dt, p.q, qa + c * p.q_s[3]),
                           fa_load(p.k_dt, p.k, ka + c * p.k_s[3]), dot);
            s[j] = fmaf(dot, scale2, fa_bias_log2(p, b, h, i, kt + j));
            mx = fmaxf(mx, s[j]);
        }
        if (mx == -__builtin_huge_valf()) continue; // only -inf scores so far: p = 0
        const float alpha = exp2f(m - mx);
        l *= alpha;
        for (int64_t e = 0; e < p.dv; ++e) acc[e] *= alpha;
        for (int j = 0; j < n; ++j) {
            const float pj = exp2f(s[j] - mx);
            const int64_t va =
                fa_row_at(p.v_s, p.page_v, p.page_v_s, p.block_v, p.blocks_v,
                          fa_sample(p, FA_RAG_PV, b), fa_sample(p, FA_RAG_V, b), hv, kt + j);
            l += pj; // the softmax's sum: before dropout; o takes the dropped p
            const float pz = pj * fa_drop(p, seed, offset, b, h, i, kt + j);
            for (int64_t e = 0; e < p.dv; ++e)
                acc[e] = fmaf(pz, fa_load(p.v_dt, p.v, va + e * p.v_s[3]), acc[e]);
        }
        m = mx;
    }
    *m_out = m;
    *l_out = l;
}

// Row i of head h: o = acc / l (0 where l is 0; not past L_q = lq where o is ragged: the
// next sample's row) and its log-sum-exp.
void fa_row_store(const fa_program& p, int64_t b, int64_t h, int64_t i, int64_t lq,
                  const float* acc, float m, float l) {
    const float inv = l > 0.0f ? 1.0f / l : 0.0f;
    const int64_t at = fa_o_at(p, b, h, i);
    for (int64_t e = 0; i < fa_rows_end(p, FA_RAG_O, lq, p.sq) && e < p.dv; ++e)
        fa_store(p.o_dt, p.o, at + e * p.o_s[3], acc[e] * inv);
    fa_store_stats(p, b, h, i, m, l);
}

// Forward: the keys the row sees, o and the stats; false where the row sees keys outside
// its block's range.
bool fa_row(const fa_program& p, const FaBlock& blk, int64_t i, float* acc) {
    int64_t lo, hi;
    fa_row_keys(p, blk, i, &lo, &hi);
    if (lo < hi && (lo < blk.klo || hi > blk.khi)) return false;
    float m, l;
    fa_row_walk(p, blk.b, blk.h, i, lo, hi, blk.scale2, acc, &m, &l);
    fa_row_store(p, blk.b, blk.h, i, blk.lq, acc, m, l);
    return true;
}

// fa_mma's unmasked tiles: the keys fa_rows_common gives each 16 rows of the block (a
// warp's) must be seen by every one of them; false where a row misses one.
bool common_keys_ok(const fa_program& p, const FaBlock& blk) {
    for (int64_t w0 = blk.i0; w0 < blk.i0 + p.rows; w0 += 16) {
        int64_t clo, chi, lo, hi;
        fa_rows_common(p, blk, w0, 16, &clo, &chi);
        for (int64_t i = w0; clo < chi && i < w0 + 16; ++i) {
            fa_row_keys(p, blk, i, &lo, &hi);
            if (clo < lo || chi > hi || clo < blk.klo || chi > blk.khi) return false;
        }
    }
    return true;
}

// The dot product of row a (n values, stride sa) of one tensor with row b of another.
float dot_rows(int n, int adt, const void* a, int64_t aa, int64_t sa, int bdt, const void* bp,
               int64_t ba, int64_t sb) {
    float acc = 0.0f;
    for (int c = 0; c < n; ++c) acc = fmaf(fa_load(adt, a, aa + c * sa), fa_load(bdt, bp, ba + c * sb), acc);
    return acc;
}

// p = exp2(s - lse) of row i of head h and key j (seen: the caller checks).
float bwd_prob(const fa_program& p, int64_t b, int64_t h, int64_t i, int64_t j, float scale2) {
    const int64_t hk = h / (p.hq / p.hk);
    const float dot = dot_rows((int)p.d, p.q_dt, p.q,
                               fa_sample(p, FA_RAG_Q, b) + h * p.q_s[1] + i * p.q_s[2], p.q_s[3],
                               p.k_dt, p.k, fa_sample(p, FA_RAG_K, b) + hk * p.k_s[1] + j * p.k_s[2],
                               p.k_s[3]);
    return exp2f(fmaf(dot, scale2, fa_bias_log2(p, b, h, i, j)) - fa_lse_log2(p, b, h, i));
}

// dp = dO_i . v_j of row i of head h.
float bwd_dp(const fa_program& p, int64_t b, int64_t h, int64_t i, int64_t j) {
    const int64_t hv = h / (p.hq / p.hv);
    return dot_rows((int)p.dv, p.do_dt, p.d_o,
                    fa_sample(p, FA_RAG_DO, b) + h * p.do_s[1] + i * p.do_s[2], p.do_s[3], p.v_dt,
                    p.v, fa_sample(p, FA_RAG_V, b) + hv * p.v_s[1] + j * p.v_s[2], p.v_s[3]);
}

// dq: row i's delta (fp32 over the columns in order) into the workspace, then
// dq = scale sum_j p (dp - delta) k_j over the keys it sees.
bool fab_dq_row(const fa_program& p, const FaBlock& blk, int64_t i, std::vector<float>& acc) {
    int64_t lo, hi;
    fa_row_keys(p, blk, i, &lo, &hi);
    if (lo < hi && (lo < blk.klo || hi > blk.khi)) return false;
    const int64_t b = blk.b, h = blk.h;
    const bool next = (p.rag[FA_RAG_O] || p.rag[FA_RAG_DO]) && i >= blk.lq; // next sample's
    const float delta = next ? 0.0f
                             : dot_rows((int)p.dv, p.do_dt, p.d_o,
                                        fa_sample(p, FA_RAG_DO, b) + h * p.do_s[1] + i * p.do_s[2],
                                        p.do_s[3], p.o_dt, p.o, fa_o_at(p, b, h, i), p.o_s[3]);
    p.delta[fa_delta_at(p, b, h, i)] = delta;
    for (float& x : acc) x = 0.0f;
    for (int64_t j = lo; j < hi; ++j) {
        const float z = fa_drop(p, blk.seed, blk.offset, b, h, i, j);
        const float ds = bwd_prob(p, b, h, i, j, blk.scale2) * (bwd_dp(p, b, h, i, j) * z - delta);
        const int64_t ka = fa_sample(p, FA_RAG_K, b) + blk.hk * p.k_s[1] + j * p.k_s[2];
        for (int64_t c = 0; c < p.d; ++c) acc[c] = fmaf(ds, fa_load(p.k_dt, p.k, ka + c * p.k_s[3]), acc[c]);
    }
    const float scale = fa_scale(p);
    const int64_t at = fa_sample(p, FA_RAG_DQ, b) + h * p.dq_s[1] + i * p.dq_s[2];
    for (int64_t c = 0; i < fa_rows_end(p, FA_RAG_DQ, blk.lq, p.sq) && c < p.d; ++c)
        fa_store(p.dq_dt, p.grad_q, at + c * p.dq_s[3], acc[c] * scale);
    return true;
}

// dk and / or dv (p.owner) of key j: sums over the query heads that share the owner and
// the rows that see the key, dk scaled.
bool fab_dkv_key(const fa_program& p, const FaKeyBlock& kb, int64_t j, std::vector<float>& dk,
                 std::vector<float>& dv) {
    int64_t lo, hi;
    fa_key_rows(p, kb.lq, kb.lkv, j, &lo, &hi);
    if (lo < hi && (lo < kb.ilo || hi > kb.ihi)) return false;
    const bool wk = p.owner != FA_OWN_V, wv = p.owner != FA_OWN_K;
    const int64_t b = kb.b;
    for (float& x : dk) x = 0.0f;
    for (float& x : dv) x = 0.0f;
    for (int64_t h = kb.h0; h < kb.h0 + kb.nh; ++h)
        for (int64_t i = lo; i < hi; ++i) {
            const float pr = bwd_prob(p, b, h, i, j, kb.scale2);
            const float z = fa_drop(p, kb.seed, kb.offset, b, h, i, j);
            const int64_t qa = fa_sample(p, FA_RAG_Q, b) + h * p.q_s[1] + i * p.q_s[2];
            const int64_t da = fa_sample(p, FA_RAG_DO, b) + h * p.do_s[1] + i * p.do_s[2];
            for (int64_t c = 0; wv && c < p.dv; ++c)
                dv[c] = fmaf(pr * z, fa_load(p.do_dt, p.d_o, da + c * p.do_s[3]), dv[c]);
            if (!wk) continue;
            const float ds = pr * (bwd_dp(p, b, h, i, j) * z - p.delta[fa_delta_at(p, b, h, i)]);
            for (int64_t c = 0; c < p.d; ++c) dk[c] = fmaf(ds, fa_load(p.q_dt, p.q, qa + c * p.q_s[3]), dk[c]);
        }
    const int64_t ka = fa_sample(p, FA_RAG_DK, b) + kb.g * p.dk_s[1] + j * p.dk_s[2];
    const int64_t va = fa_sample(p, FA_RAG_DV, b) + kb.g * p.dv_s[1] + j * p.dv_s[2];
    const bool ok = j < fa_rows_end(p, FA_RAG_DK, kb.lkv, p.skv); // ragged: past L_kv the
    const bool ov = j < fa_rows_end(p, FA_RAG_DV, kb.lkv, p.skv); // next sample's rows
    for (int64_t c = 0; wk && ok && c < p.d; ++c)
        fa_store(p.dk_dt, p.grad_k, ka + c * p.dk_s[3], dk[c] * kb.scale);
    for (int64_t c = 0; wv && ov && c < p.dv; ++c)
        fa_store(p.dv_dt, p.grad_v, va + c * p.dv_s[3], dv[c]);
    return true;
}

// The forward's and dq's grids: a block per `rows` queries of each (b, h).
bool query_grid_ok(const fa_program* p, int64_t blocks) {
    return p->rows >= 1 && p->q_blocks == (p->sq + p->rows - 1) / p->rows &&
           blocks == p->b * p->hq * p->q_blocks;
}

// dkv's: a block per `keys` keys of each (b, owner head); both sides owned only where
// H_k = H_v.
bool key_grid_ok(const fa_program* p, int64_t blocks) {
    const int64_t heads = p->owner == FA_OWN_V ? p->hv : p->hk;
    return p->keys >= 1 && p->k_blocks == (p->skv + p->keys - 1) / p->keys &&
           blocks == p->b * heads * p->k_blocks && p->delta &&
           (p->owner == FA_OWN_K || p->owner == FA_OWN_V || (p->owner == FA_OWN_KV && p->hk == p->hv));
}

// The workspace's delta before the dq kernel runs: a NaN no arithmetic makes (a quiet NaN
// keeps its payload through fp32 operations on the host, which make only the default one).
constexpr uint32_t DELTA_POISON = 0x7fc0dea1u;

bool is_poison(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof(u));
    return u == DELTA_POISON;
}

// The kernels walk every row of their block's range [ilo, ihi), for each query head of the
// group: q, dO, stats and delta are read for each (their pairs masked out are multiplied
// by 0, which keeps a NaN or an infinity), so the range must lie within [0, L_q] and each
// row's delta must have been written by the dq kernel.
bool key_block_walk_ok(const fa_program& p, const FaKeyBlock& kb, int64_t bid, char* why,
                       size_t len) {
    if (kb.ilo >= kb.ihi) return true;
    if (kb.ilo < 0 || kb.ihi > kb.lq || kb.h0 < 0 || kb.h0 + kb.nh > p.hq) {
        snprintf(why, len, "internal: attention key block %lld walks rows [%lld, %lld) of query "
                 "heads [%lld, %lld), outside the sample's %lld rows and %lld heads", (long long)bid,
                 (long long)kb.ilo, (long long)kb.ihi, (long long)kb.h0, (long long)(kb.h0 + kb.nh),
                 (long long)kb.lq, (long long)p.hq);
        return false;
    }
    for (int64_t h = kb.h0; h < kb.h0 + kb.nh; ++h)
        for (int64_t i = kb.ilo; i < kb.ihi; ++i)
            if (is_poison(p.delta[fa_delta_at(p, kb.b, h, i)])) {
                snprintf(why, len, "internal: attention key block %lld reads delta of row %lld "
                         "of (%lld, %lld), which the dq kernel did not write", (long long)bid,
                         (long long)i, (long long)kb.b, (long long)h);
                return false;
            }
    return true;
}

// A query block reads the keys and values [klo, khi): within [0, L_kv].
bool query_block_ok(const FaBlock& blk, int64_t bid, char* why, size_t len) {
    if (blk.klo >= blk.khi || (blk.klo >= 0 && blk.khi <= blk.lkv)) return true;
    snprintf(why, len, "internal: attention query block %lld walks keys [%lld, %lld), outside "
             "the sample's %lld", (long long)bid, (long long)blk.klo, (long long)blk.khi,
             (long long)blk.lkv);
    return false;
}

// ---- the decode path ------------------------------------------------------------------------

// The split kernel's grid: a block per (b, key head, range) of `threads` / 32 warps, 16
// packed rows each; ranges of whole steps of 16 keys that cover S_kv, none past it.
bool split_grid_ok(const fa_program* p, int64_t blocks, int threads) {
    return p->hk == p->hv && p->group == p->hq / p->hk && p->splits >= 1 &&
           p->split_keys >= 16 && p->split_keys % 16 == 0 &&
           p->splits * p->split_keys >= p->skv && (p->splits - 1) * p->split_keys < p->skv &&
           p->group * p->sq <= threads / 32 * 16 && blocks == p->b * p->hk * p->splits &&
           (p->splits == 1 || p->part);
}

bool combine_grid_ok(const fa_program* p, int64_t blocks, int threads) {
    return p->splits > 1 && p->part && threads == 32 * FA_COMBINE_ROWS &&
           blocks == (fd_rows(*p) + FA_COMBINE_ROWS - 1) / FA_COMBINE_ROWS;
}

// The partial rows before the split kernel runs: the poison, which the combine must not
// read.
void poison_parts(const fa_program& p) {
    float poison;
    memcpy(&poison, &DELTA_POISON, sizeof(poison));
    const int64_t n = p.splits * fd_rows(p) * (p.dv + 2);
    for (int64_t e = 0; e < n; ++e) p.part[e] = poison;
}

// A split block: its keys within the sample's and its range's; each of its packed rows
// walks the keys it sees in the range (within the block's), then writes o and the stats
// (one range) or its partial row.
bool split_block(const fa_program& p, int64_t bid, std::vector<float>& acc, char* why, size_t len) {
    const FdBlock k = fd_block(p, bid);
    int64_t ra, re;
    fd_range(p, k.s, &ra, &re);
    if (k.klo < k.khi && (k.klo < ra || k.khi > re || k.klo < 0 || k.khi > k.lkv)) {
        snprintf(why, len, "internal: attention split block %lld walks keys [%lld, %lld), outside "
                 "its range [%lld, %lld) or the sample's %lld", (long long)bid, (long long)k.klo,
                 (long long)k.khi, (long long)ra, (long long)re, (long long)k.lkv);
        return false;
    }
    for (int64_t r = 0; r < p.group * p.sq; ++r) {
        int64_t h, i, lo, hi;
        fd_row_of(p, k, r, &h, &i);
        fd_row_keys(p, k, i, &lo, &hi);
        if (lo < hi && (lo < k.klo || hi > k.khi)) {
            snprintf(why, len, "internal: attention row %lld of split block %lld sees keys "
                     "[%lld, %lld), outside the block's [%lld, %lld)", (long long)r, (long long)bid,
                     (long long)lo, (long long)hi, (long long)k.klo, (long long)k.khi);
            return false;
        }
        float m, l;
        fa_row_walk(p, k.b, h, i, lo, hi, k.scale2, acc.data(), &m, &l);
        if (p.splits == 1) {
            fa_row_store(p, k.b, h, i, p.sq, acc.data(), m, l); // never ragged
            continue;
        }
        const int64_t row = fd_row_id(p, k.b, h, i);
        float* po = fd_part_o(p, k.s, row);
        for (int64_t e = 0; e < p.dv; ++e) po[e] = acc[e];
        fd_part_ml(p, k.s, row)[0] = m;
        fd_part_ml(p, k.s, row)[1] = l;
    }
    return true;
}

// A combined row: every range's partial must be the split kernel's; summed in range order.
bool combine_row(const fa_program& p, int64_t row, std::vector<float>& acc, char* why, size_t len) {
    for (int64_t s = 0; s < p.splits; ++s) {
        bool written = !is_poison(fd_part_ml(p, s, row)[0]) && !is_poison(fd_part_ml(p, s, row)[1]);
        for (int64_t e = 0; e < p.dv; ++e) written = written && !is_poison(fd_part_o(p, s, row)[e]);
        if (!written) {
            snprintf(why, len, "internal: the attention combine reads range %lld of row %lld, "
                     "which the split kernel did not write", (long long)s, (long long)row);
            return false;
        }
    }
    float m, l;
    fd_combine_ml(p, row, &m, &l);
    for (int64_t e = 0; e < p.dv; ++e) acc[e] = 0.0f;
    for (int64_t s = 0; m != -__builtin_huge_valf() && s < p.splits; ++s) {
        const float w = fd_weight(p, s, row, m);
        for (int64_t e = 0; e < p.dv; ++e) acc[e] = fmaf(w, fd_part_o(p, s, row)[e], acc[e]);
    }
    int64_t b, h, i;
    fd_row_coords(p, row, &b, &h, &i);
    fa_row_store(p, b, h, i, p.sq, acc.data(), m, l); // decode: never ragged
    return true;
}

bool run_decode(int part, const fa_program* p, int64_t blocks, char* why, size_t len) {
    std::vector<float> acc((size_t)p->dv);
    if (part == EMU_ATTN_COMBINE) {
        for (int64_t row = 0; row < fd_rows(*p); ++row)
            if (!combine_row(*p, row, acc, why, len)) return false;
        return true;
    }
    if (p->splits > 1) poison_parts(*p);
    for (int64_t bid = 0; bid < blocks; ++bid)
        if (!split_block(*p, bid, acc, why, len)) return false;
    return true;
}

bool run_blocks(int part, const fa_program* p, int64_t blocks, char* why, size_t len) {
    std::vector<float> a((size_t)(p->d > p->dv ? p->d : p->dv)), c(a.size());
    if (part == EMU_ATTN_DQ) { // every row's delta must be the dq kernel's
        float poison;
        memcpy(&poison, &DELTA_POISON, sizeof(poison));
        for (int64_t e = 0; e < p->b * p->hq * p->sq; ++e) p->delta[e] = poison;
    }
    for (int64_t bid = 0; bid < blocks; ++bid) {
        if (part == EMU_ATTN_DKV) {
            const FaKeyBlock kb = fa_key_block(*p, bid);
            if (!key_block_walk_ok(*p, kb, bid, why, len)) return false;
            for (int64_t j = kb.j0; j < kb.j0 + p->keys && j < p->skv; ++j)
                if (!fab_dkv_key(*p, kb, j, a, c)) {
                    snprintf(why, len, "internal: attention key %lld of block %lld is seen by rows "
                             "outside the block's [%lld, %lld)", (long long)j, (long long)bid,
                             (long long)kb.ilo, (long long)kb.ihi);
                    return false;
                }
            continue;
        }
        const FaBlock blk = fa_block(*p, bid);
        if (!query_block_ok(blk, bid, why, len)) return false;
        if (part == EMU_ATTN_FWD && p->rng_dump) fa_dump_rows(*p, blk, 0, 1);
        if (!common_keys_ok(*p, blk)) { // the forward's and dq's
            snprintf(why, len, "internal: attention block %lld: a row misses a key its warp's "
                     "unmasked range holds", (long long)bid);
            return false;
        }
        for (int64_t i = blk.i0; i < blk.i0 + p->rows && i < p->sq; ++i)
            if (!(part == EMU_ATTN_FWD ? fa_row(*p, blk, i, a.data()) : fab_dq_row(*p, blk, i, a))) {
                snprintf(why, len, "internal: attention row %lld of block %lld sees keys outside "
                         "the block's [%lld, %lld)", (long long)i, (long long)bid,
                         (long long)blk.klo, (long long)blk.khi);
                return false;
            }
    }
    return true;
}

struct fa_launch {
    fa_program p;
    int part;
    int64_t blocks;
};

// A recorded launch, run when its graph is: checked when it was recorded.
void run_recorded(const void* arg) {
    const fa_launch& l = *static_cast<const fa_launch*>(arg);
    char why[256];
    if (l.part == EMU_ATTN_SPLIT || l.part == EMU_ATTN_COMBINE)
        (void)run_decode(l.part, &l.p, l.blocks, why, sizeof(why));
    else
        (void)run_blocks(l.part, &l.p, l.blocks, why, sizeof(why));
}

} // namespace

extern "C" bool hipe_fa_launch(void* kernel, const fa_program* p, int64_t blocks, int threads,
                               int smem, void* stream, char* why, size_t len) {
    const int part = kernel ? static_cast<const emulated_kernel*>(kernel)->attention : 0;
    if (!part) {
        snprintf(why, len, "internal: an attention launched with another kernel");
        return false;
    }
    const bool grid = part == EMU_ATTN_DKV       ? key_grid_ok(p, blocks)
                      : part == EMU_ATTN_SPLIT   ? split_grid_ok(p, blocks, threads)
                      : part == EMU_ATTN_COMBINE ? combine_grid_ok(p, blocks, threads)
                                                 : query_grid_ok(p, blocks);
    if (!grid || threads < 32 || threads % 32 != 0 || smem < 0 || smem > 227 * 1024 ||
        (part == EMU_ATTN_DQ && !p->delta)) {
        snprintf(why, len, "internal: an attention grid (kernel %d) of %lld blocks of %d threads "
                 "(%d bytes of shared memory) for %lld x %lld heads of %lld queries, %d a block, "
                 "%lld keys, %d a block (decode: %d ranges of %lld)", part, (long long)blocks,
                 threads, smem, (long long)p->b, (long long)p->hq, (long long)p->sq, p->rows,
                 (long long)p->skv, p->keys, p->splits, (long long)p->split_keys);
        return false;
    }
    if (emu_capturing(stream)) {
        const fa_launch l = {*p, part, blocks};
        return emu_record(stream, run_recorded, &l, sizeof(l), why, len);
    }
    if (part == EMU_ATTN_SPLIT || part == EMU_ATTN_COMBINE) return run_decode(part, p, blocks, why, len);
    return run_blocks(part, p, blocks, why, len);
}
