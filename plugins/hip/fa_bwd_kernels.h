// fa_bwd_kernels.h — the attention backward kernels (fa_program.h: dq, then dkv), compiled
// at plan time like the forward's (jit_source.c writes the entry point).  FlashAttention-2's
// recomputation: no S_q x S_kv matrix is stored; each kernel recomputes the scores of the
// pairs it walks, p = exp2(s - lse) from the forward's stats, dp = dO v, and
// ds = p (dp - delta), delta = rowsum(dO o) (the dq kernel's, kept in the workspace for dkv):
//   dq = scale ds k (dq kernel), dv = p^T dO, dk = scale ds^T q (dkv kernel).
//
//   fa_bwd_dq_simt / fa_bwd_dkv_simt: any storage type, stride and head dim up to 256 (fp32
//     FMA), the forward's general kernel with the roles of queries and keys swapped for dkv:
//     a lane takes one pair's p and ds, then each lane its columns of the sums.
//   fa_bwd_dq_mma / fa_bwd_dkv_mma (NVIDIA sm_80 and newer): fp16 / bf16 on tensor cores,
//     every product mma.sync m16n8k16 (fa_kernels.h's wrappers): a warp owns 16 queries
//     (dq) or 16 keys (dkv); p and ds go from the accumulators into the A operand of the
//     next product as the forward's p does; the other side's tiles stream through shared
//     memory with cp.async, two buffers deep.
#ifndef HIPDNN_HIP_FA_BWD_KERNELS_H
#define HIPDNN_HIP_FA_BWD_KERNELS_H

#include "fa_bwd_exec.h"
#include "fa_kernels.h"

// delta of row i (the warp's lanes over its columns, then summed across them): written to
// the workspace by lane 0; every lane gets it; 0 past S_q, and past L_q (lq) where o or
// dO is ragged (those rows are the next sample's).
PW_FN float fa_bwd_delta_row(const fa_program& p, int64_t b, int64_t h, int64_t i, int64_t lq) {
    const int lane = (int)threadIdx.x & 31;
    float acc = 0.0f;
    if (i < p.sq && (!(p.rag[FA_RAG_O] || p.rag[FA_RAG_DO]) || i < lq)) {
        const int64_t o_at = fa_o_at(p, b, h, i);
        const int64_t do_at = fa_sample(p, FA_RAG_DO, b) + h * p.do_s[1] + i * p.do_s[2];
        for (int64_t c = lane; c < p.dv; c += 32)
            acc = fmaf(fa_load(p.do_dt, p.d_o, do_at + c * p.do_s[3]),
                       fa_load(p.o_dt, p.o, o_at + c * p.o_s[3]), acc);
    }
    acc = fa_warp_sum(acc);
    if (lane == 0 && i < p.sq) p.delta[fa_delta_at(p, b, h, i)] = acc;
    return acc;
}

// Row r (a lane's) of smem rows a (pitch LA) dotted with row `at` of rows b (pitch LB).
template <int W, int LA, int LB>
PW_FN float fa_bwd_dot(const float* a, int r, const float* bm, int at) {
    float acc = 0.0f;
    for (int c = 0; c < W; ++c) acc = fmaf(a[r * LA + c], bm[at * LB + c], acc);
    return acc;
}

// acc[c] += sum over the 32 lanes j of x_j * rows[j][c * 32 + lane] (rows pitch LD).
template <int W, int CW, int LD>
PW_FN void fa_bwd_spread(float x, const float* rows, float (&acc)[CW]) {
    const int lane = (int)threadIdx.x & 31;
    for (int j = 0; j < FA_SIMT_KEYS; ++j) {
        const float xj = hd_shfl(x, j);
PW_UNROLL
        for (int c = 0; c < CW; ++c)
            if (c * 32 + lane < W) acc[c] = fmaf(xj, rows[j * LD + c * 32 + lane], acc[c]);
    }
}

// ---- the general kernels -----------------------------------------------------------------

template <int D, int DV, int QDT, int KDT, int VDT, int ODT>
PW_FN void fa_bwd_dq_simt(const fa_program& p, float* smem) {
    constexpr int LD = FA_SIMT_LD(D, DV), RW = FA_SIMT_ROWS / 4, DC = (D + 31) / 32;
    float* kv = smem;                      // [FA_SIMT_KEYS][LD]: keys, their values, the keys
    float* qs = smem + FA_SIMT_KEYS * LD;  // [FA_SIMT_ROWS][D]
    float* dos = qs + FA_SIMT_ROWS * D;    // [FA_SIMT_ROWS][DV]
    const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5;
    const FaBlock k = fa_block(p, (int64_t)blockIdx.x);
    fa_simt_load<D, QDT>(p.q, p.q_s, fa_sample(p, FA_RAG_Q, k.b), k.h, k.i0,
                         fa_rows_end(p, FA_RAG_Q, k.lq, p.sq), FA_SIMT_ROWS, qs, D);
    fa_simt_load<DV, ODT>(p.d_o, p.do_s, fa_sample(p, FA_RAG_DO, k.b), k.h, k.i0,
                          fa_rows_end(p, FA_RAG_DO, k.lq, p.sq), FA_SIMT_ROWS, dos, DV);
    float dq[RW][DC], lse[RW], dl[RW], s[RW];
    int64_t lo[RW], hi[RW];
PW_UNROLL
    for (int rr = 0; rr < RW; ++rr) {
        const int64_t i = k.i0 + warp * RW + rr;
        dl[rr] = fa_bwd_delta_row(p, k.b, k.h, i, k.lq);
        lse[rr] = i < p.sq ? fa_lse_log2(p, k.b, k.h, i) : __builtin_huge_valf();
        fa_row_keys(p, k, i, &lo[rr], &hi[rr]);
PW_UNROLL
        for (int c = 0; c < DC; ++c) dq[rr][c] = 0.0f;
    }
    for (int64_t kt = k.klo; kt < k.khi; kt += FA_SIMT_KEYS) {
        __syncthreads(); // the buffer's last rows are read (and the block's own are in)
        fa_simt_load<D, KDT>(p.k, p.k_s, fa_sample(p, FA_RAG_K, k.b), k.hk, kt, k.khi,
                             FA_SIMT_KEYS, kv, LD);
        __syncthreads();
        fa_simt_scores<D, RW, LD>(p, k, qs, kv, kt, lo, hi, s);
        __syncthreads();
        fa_simt_load<DV, VDT>(p.v, p.v_s, fa_sample(p, FA_RAG_V, k.b), k.hv, kt, k.khi,
                              FA_SIMT_KEYS, kv, LD);
        __syncthreads();
PW_UNROLL
        for (int rr = 0; rr < RW; ++rr) { // s becomes ds of (row, key kt + lane)
            const float pr = exp2f(s[rr] - lse[rr]); // 0 where unseen (-inf) or lse not finite
            const float dp = fa_bwd_dot<DV, DV, LD>(dos, warp * RW + rr, kv, lane) *
                             fa_drop(p, k.seed, k.offset, k.b, k.h, k.i0 + warp * RW + rr,
                                     kt + lane);
            s[rr] = pr * (dp - dl[rr]);
        }
        __syncthreads();
        fa_simt_load<D, KDT>(p.k, p.k_s, fa_sample(p, FA_RAG_K, k.b), k.hk, kt, k.khi,
                             FA_SIMT_KEYS, kv, LD);
        __syncthreads();
PW_UNROLL
        for (int rr = 0; rr < RW; ++rr) fa_bwd_spread<D, DC, LD>(s[rr], kv, dq[rr]);
    }
    const float scale = fa_scale(p);
PW_UNROLL
    for (int rr = 0; rr < RW; ++rr) {
        const int64_t i = k.i0 + warp * RW + rr;
        if (i >= fa_rows_end(p, FA_RAG_DQ, k.lq, p.sq)) continue; // ragged: the next sample's
        const int64_t at = fa_sample(p, FA_RAG_DQ, k.b) + k.h * p.dq_s[1] + i * p.dq_s[2];
PW_UNROLL
        for (int c = 0; c < DC; ++c)
            if (c * 32 + lane < D)
                fa_store(p.dq_dt, p.grad_q, at + (c * 32 + lane) * p.dq_s[3], dq[rr][c] * scale);
    }
}

// Rows [it, it + FA_SIMT_KEYS) of query head h: their log-sum-exp and delta into rl, rd
// (rows at or past `end`: +inf, 0).
PW_FN void fa_bwd_simt_rows(const fa_program& p, const FaKeyBlock& k, int64_t h, int64_t it,
                            int64_t end, float* rl, float* rd) {
    const int r = (int)threadIdx.x;
    if (r >= FA_SIMT_KEYS) return;
    const bool in = it + r < end;
    rl[r] = in ? fa_lse_log2(p, k.b, h, it + r) : __builtin_huge_valf();
    rd[r] = in ? p.delta[fa_delta_at(p, k.b, h, it + r)] : 0.0f;
}

// p of the warp's RK keys and a lane's query row it + lane of head h (0 where the row does
// not see the key); qd: that row's query in shared memory.
template <int D, int RK>
PW_FN void fa_bwd_simt_probs(const fa_program& p, const FaKeyBlock& k, int64_t h, int64_t it,
                             const float* qd, const float* ks, const float* rl,
                             const int64_t* lo, const int64_t* hi, float* pr) {
    const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5;
    const int64_t i = it + lane;
PW_UNROLL
    for (int rr = 0; rr < RK; ++rr) {
        const int64_t j = k.j0 + warp * RK + rr;
        pr[rr] = 0.0f;
        if (i >= lo[rr] && i < hi[rr]) {
            float acc = 0.0f;
            for (int c = 0; c < D; ++c) acc = fmaf(qd[c], ks[(warp * RK + rr) * D + c], acc);
            pr[rr] = exp2f(fmaf(acc, k.scale2, fa_bias_log2(p, k.b, h, i, j)) - rl[lane]);
        }
    }
}

// K (and V where dk is asked for) rows of the block's keys for query head h, when they
// are not those loaded already (*cur_k, *cur_v: the heads in shared memory).
template <int D, int DV, int KDT, int VDT>
PW_FN void fa_bwd_simt_own(const fa_program& p, const FaKeyBlock& k, int64_t h, bool wk,
                           int64_t* cur_k, int64_t* cur_v, float* ks, float* vs) {
    const int64_t hk = h / (p.hq / p.hk), hv = h / (p.hq / p.hv);
    __syncthreads(); // every warp is done with the last head's rows
    if (hk != *cur_k)
        fa_simt_load<D, KDT>(p.k, p.k_s, fa_sample(p, FA_RAG_K, k.b), hk, k.j0,
                             fa_rows_end(p, FA_RAG_K, k.lkv, p.skv), FA_BWD_SIMT_KEYS, ks, D);
    if (wk && hv != *cur_v)
        fa_simt_load<DV, VDT>(p.v, p.v_s, fa_sample(p, FA_RAG_V, k.b), hv, k.j0,
                              fa_rows_end(p, FA_RAG_V, k.lkv, p.skv), FA_BWD_SIMT_KEYS, vs, DV);
    *cur_k = hk;
    *cur_v = hv;
}

template <int D, int DV, int QDT, int KDT, int VDT, int ODT>
PW_FN void fa_bwd_dkv_simt(const fa_program& p, float* smem) {
    constexpr int LD = FA_SIMT_LD(D, DV), RK = FA_BWD_SIMT_KEYS / 4, DC = (D + 31) / 32,
                  VC = (DV + 31) / 32, T = FA_SIMT_KEYS;
    float* qd = smem;                  // [T][LD]: a tile's queries, its dO rows, its queries
    float* ks = smem + T * LD;         // [FA_BWD_SIMT_KEYS][D]
    float* vs = ks + FA_BWD_SIMT_KEYS * D; // [FA_BWD_SIMT_KEYS][DV]
    float* rl = vs + FA_BWD_SIMT_KEYS * DV; // [T]: the tile rows' log-sum-exp (base 2)
    float* rd = rl + T;                // [T]: their delta
    const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5;
    const FaKeyBlock k = fa_key_block(p, (int64_t)blockIdx.x);
    const bool wk = p.owner != FA_OWN_V, wv = p.owner != FA_OWN_K;
    float dk[RK][DC], dv[RK][VC], pr[RK], ds[RK];
    int64_t lo[RK], hi[RK], cur_k = -1, cur_v = -1;
PW_UNROLL
    for (int rr = 0; rr < RK; ++rr) {
        fa_key_rows(p, k.lq, k.lkv, k.j0 + warp * RK + rr, &lo[rr], &hi[rr]);
PW_UNROLL
        for (int c = 0; c < DC; ++c) dk[rr][c] = 0.0f;
PW_UNROLL
        for (int c = 0; c < VC; ++c) dv[rr][c] = 0.0f;
    }
    for (int64_t h = k.h0; h < k.h0 + k.nh && k.ilo < k.ihi; ++h) {
        fa_bwd_simt_own<D, DV, KDT, VDT>(p, k, h, wk, &cur_k, &cur_v, ks, vs);
        for (int64_t it = k.ilo; it < k.ihi; it += T) {
            __syncthreads();
            fa_simt_load<D, QDT>(p.q, p.q_s, fa_sample(p, FA_RAG_Q, k.b), h, it, k.ihi, T, qd, LD);
            fa_bwd_simt_rows(p, k, h, it, k.ihi, rl, rd);
            __syncthreads();
            fa_bwd_simt_probs<D, RK>(p, k, h, it, qd + lane * LD, ks, rl, lo, hi, pr);
            __syncthreads();
            fa_simt_load<DV, ODT>(p.d_o, p.do_s, fa_sample(p, FA_RAG_DO, k.b), h, it, k.ihi, T, qd,
                                  LD);
            __syncthreads();
PW_UNROLL
            for (int rr = 0; rr < RK; ++rr) {
                const float z = fa_drop(p, k.seed, k.offset, k.b, h, it + lane,
                                        k.j0 + warp * RK + rr);
                if (wv) fa_bwd_spread<DV, VC, LD>(pr[rr] * z, qd, dv[rr]);
                ds[rr] = wk ? pr[rr] * (fa_bwd_dot<DV, LD, DV>(qd, lane, vs, warp * RK + rr) * z -
                                        rd[lane])
                            : 0.0f;
            }
            if (!wk) continue;
            __syncthreads();
            fa_simt_load<D, QDT>(p.q, p.q_s, fa_sample(p, FA_RAG_Q, k.b), h, it, k.ihi, T, qd, LD);
            __syncthreads();
PW_UNROLL
            for (int rr = 0; rr < RK; ++rr) fa_bwd_spread<D, DC, LD>(ds[rr], qd, dk[rr]);
        }
    }
PW_UNROLL
    for (int rr = 0; rr < RK; ++rr) {
        const int64_t j = k.j0 + warp * RK + rr;
        if (j >= p.skv) continue;
        const int64_t hk = k.g, hv = k.g; // the owner's head, of whichever side is written
        const int64_t ka = fa_sample(p, FA_RAG_DK, k.b) + hk * p.dk_s[1] + j * p.dk_s[2];
        const int64_t va = fa_sample(p, FA_RAG_DV, k.b) + hv * p.dv_s[1] + j * p.dv_s[2];
        const bool ok = j < fa_rows_end(p, FA_RAG_DK, k.lkv, p.skv); // ragged: the next
        const bool ov = j < fa_rows_end(p, FA_RAG_DV, k.lkv, p.skv); // sample's rows
PW_UNROLL
        for (int c = 0; c < DC; ++c)
            if (wk && ok && c * 32 + lane < D)
                fa_store(p.dk_dt, p.grad_k, ka + (c * 32 + lane) * p.dk_s[3], dk[rr][c] * k.scale);
PW_UNROLL
        for (int c = 0; c < VC; ++c)
            if (wv && ov && c * 32 + lane < DV)
                fa_store(p.dv_dt, p.grad_v, va + (c * 32 + lane) * p.dv_s[3], dv[rr][c]);
    }
}

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
#include "fa_bwd_mma.h"
#endif

#endif
