// fa_kernels_decode.h — the attention forward's decode path (fa_program.h): few query rows
// against many keys, as in token-by-token generation.  fa_mma would give each (b, query
// head) a block of 16-row tiles with one row used, and walk every key in it; here a block
// packs the rows of the query heads that share a key / value head into its tiles (K and V
// read once for the group) and takes one range of the keys, so that the grid fills the
// device; the combine kernel then sums the ranges' partial rows, weighted by their
// log-sum-exp, in range order.
//
//   fd_split_mma (NVIDIA sm_80 and newer): fa_mma's tensor-core tile loop (mma.sync,
//     cp.async two buffers deep) over the block's range, its query rows gathered from the
//     group's heads.
//   fd_combine: any vendor, a warp a row.
#ifndef HIPDNN_HIP_FA_KERNELS_DECODE_H
#define HIPDNN_HIP_FA_KERNELS_DECODE_H

#include "fa_exec_decode.h"
#include "fa_kernels.h"

// One row a warp: M and L over the ranges, then o = sum_s w_s o_s / L column by column,
// the ranges in order; the stats (M + log2 L) * ln 2.
template <int DV>
PW_FN void fd_combine(const fa_program& p) {
    constexpr int DC = (DV + 31) / 32;
    const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5;
    const int64_t row = (int64_t)blockIdx.x * FA_COMBINE_ROWS + warp;
    if (row >= fd_rows(p)) return;
    float m, l, acc[DC];
    fd_combine_ml(p, row, &m, &l);
PW_UNROLL
    for (int c = 0; c < DC; ++c) acc[c] = 0.0f;
    for (int64_t s = 0; m != -__builtin_huge_valf() && s < p.splits; ++s) {
        const float w = fd_weight(p, s, row, m);
        const float* po = fd_part_o(p, s, row);
PW_UNROLL
        for (int c = 0; c < DC; ++c)
            if (c * 32 + lane < DV) acc[c] = fmaf(w, po[c * 32 + lane], acc[c]);
    }
    int64_t b, h, i;
    fd_row_coords(p, row, &b, &h, &i);
    const float inv = l > 0.0f ? 1.0f / l : 0.0f;
    const int64_t at = fa_o_at(p, b, h, i);
PW_UNROLL
    for (int c = 0; c < DC; ++c)
        if (c * 32 + lane < DV) fa_store(p.o_dt, p.o, at + (c * 32 + lane) * p.o_s[3], acc[c] * inv);
    if (lane == 0) fa_store_stats(p, b, h, i, m, l);
}

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)

// The block's query rows into shared memory (pitch FA_MMA_LD(D)), 16 bytes a thread and
// step, gathered from the group's heads; rows at or past group * S_q are zeros.
template <int D, int T>
PW_FN void fd_load_q(const fa_program& p, const FdBlock& k, uint32_t dst, int n) {
    constexpr int C = D / 8;
    const int rows = p.group * (int)p.sq;
    const uint16_t* q = (const uint16_t*)p.q;
    for (int e = (int)threadIdx.x; e < n * C; e += T) {
        const int r = e / C, c = e - (e / C) * C;
        int64_t h = 0, i = 0;
        if (r < rows) fd_row_of(p, k, r, &h, &i);
        const uint16_t* src = q + k.b * p.q_s[0] + h * p.q_s[1] + i * p.q_s[2] + c * 8;
        tc_cp_async(dst + (uint32_t)((r * FA_MMA_LD(D) + c * 8) * 2), r < rows ? src : q, r < rows);
    }
}

// The thread's rows: o / l and the stats with one range, else the partial o, m and l.
template <int ET>
PW_FN void fd_store(const fa_program& p, const FdBlock& k, const bool* live, const int64_t* rh,
                    const int64_t* ri, float* m, float* l, const float (&o)[ET][4]) {
    const int t4 = (int)threadIdx.x & 3;
PW_UNROLL
    for (int x = 0; x < 2; ++x) {
        l[x] += hd_shfl_xor(l[x], 1);
        l[x] += hd_shfl_xor(l[x], 2);
        if (!live[x]) continue;
        const float inv = p.splits > 1 ? 1.0f : l[x] > 0.0f ? 1.0f / l[x] : 0.0f;
        const int64_t row = fd_row_id(p, k.b, rh[x], ri[x]), at = fa_o_at(p, k.b, rh[x], ri[x]);
        float* po = p.splits > 1 ? fd_part_o(p, k.s, row) : nullptr;
PW_UNROLL
        for (int e = 0; e < ET; ++e) {
            const int col = e * 8 + 2 * t4;
            if (po) {
                po[col] = o[e][2 * x];
                po[col + 1] = o[e][2 * x + 1];
            } else {
                fa_store(p.o_dt, p.o, at + col * p.o_s[3], o[e][2 * x] * inv);
                fa_store(p.o_dt, p.o, at + (col + 1) * p.o_s[3], o[e][2 * x + 1] * inv);
            }
        }
        if (t4 != 0) continue;
        if (!po) {
            fa_store_stats(p, k.b, rh[x], ri[x], m[x], l[x]);
            continue;
        }
        float* ml = fd_part_ml(p, k.s, row);
        ml[0] = m[x];
        ml[1] = l[x];
    }
}

template <int DT, int D, int DV, int WARPS, int BC>
PW_FN void fd_split_mma(const fa_program& p, unsigned char* smem) {
    constexpr int T = 32 * WARPS, BR = 16 * WARPS, LQ = FA_MMA_LD(D), LV = FA_MMA_LD(DV);
    constexpr bool QREG = D <= 128 && DV <= 128; // Q's fragments stay in registers
    const uint32_t q_sm = tc_smem_addr(smem);
    const uint32_t k_sm = q_sm + BR * LQ * 2;     // two buffers of BC x LQ
    const uint32_t v_sm = k_sm + 2 * BC * LQ * 2; // two buffers of BC x LV
    const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5;
    const FdBlock k = fd_block(p, (int64_t)blockIdx.x);
    FaBlock kv; // what fa_mma_load_kv reads: the heads and the block's keys
    kv.b = k.b;
    kv.hk = kv.hv = k.g;
    kv.klo = k.klo;
    kv.khi = k.khi;
    const int rows = p.group * (int)p.sq;
    int64_t rh[2], ri[2], rlo[2], rhi[2];
    bool live[2];
PW_UNROLL
    for (int x = 0; x < 2; ++x) {
        const int r = warp * 16 + (lane >> 2) + 8 * x;
        live[x] = r < rows;
        rh[x] = ri[x] = rlo[x] = rhi[x] = 0;
        if (live[x]) {
            fd_row_of(p, k, r, &rh[x], &ri[x]);
            fd_row_keys(p, k, ri[x], &rlo[x], &rhi[x]);
        }
    }
    float o[DV / 8][4], m[2] = {-__builtin_huge_valf(), -__builtin_huge_valf()}, l[2] = {0, 0};
PW_UNROLL
    for (int e = 0; e < DV / 8; ++e) o[e][0] = o[e][1] = o[e][2] = o[e][3] = 0.0f;
    const int ntiles = k.khi > k.klo ? (int)((k.khi - k.klo + BC - 1) / BC) : 0;
    fd_load_q<D, T>(p, k, q_sm, BR);
    if (ntiles > 0) fa_mma_load_kv<D, DV, T, BC>(p, kv, 0, k_sm, v_sm);
    tc_cp_commit();
    const uint32_t qa = q_sm + (uint32_t)(((warp * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * LQ +
                                           (lane >> 4) * 8) * 2);
    const uint32_t ka = (uint32_t)((((lane & 7) + (lane >> 4) * 8) * LQ + ((lane >> 3) & 1) * 8) * 2);
    const uint32_t va = (uint32_t)((((lane & 7) + ((lane >> 3) & 1) * 8) * LV + (lane >> 4) * 8) * 2);
    const bool busy = warp * 16 < rows; // a warp whose rows are all padding only loads
    uint32_t qf[QREG ? D / 16 : 1][4];
    for (int t = 0; t < ntiles; ++t) {
        if (t + 1 < ntiles) {
            fa_mma_load_kv<D, DV, T, BC>(p, kv, t + 1, k_sm, v_sm);
            tc_cp_commit();
            tc_cp_wait<1>();
        } else {
            tc_cp_wait<0>();
        }
        __syncthreads();
        if (QREG && t == 0)
PW_UNROLL
            for (int kk = 0; kk < D / 16; ++kk) tc_ldmatrix4<false>(qa + kk * 32, qf[QREG ? kk : 0]);
        if (busy) {
            const int64_t kt = k.klo + (int64_t)t * BC;
            float s[BC / 8][4];
            fa_mma_scores<DT, D, BC, QREG>(s, qf, qa, k_sm + (t & 1) * BC * LQ * 2 + ka);
            fa_mma_softmax<BC, DV / 8>(p, k.b, k.scale2, rh, ri, kt, rlo, rhi, s, m, l, o);
            fa_mma_pv<DT, DV, BC>(s, o, v_sm + (t & 1) * BC * LV * 2 + va);
        }
        __syncthreads();
    }
    tc_cp_wait<0>();
    fd_store<DV / 8>(p, k, live, rh, ri, m, l, o);
}
#endif

#endif
