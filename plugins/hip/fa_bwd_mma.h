// fa_bwd_mma.h — the attention backward on tensor cores (NVIDIA sm_80 and newer; included by
// fa_bwd_kernels.h under NVRTC / nvcc only).  Every product is mma.sync m16n8k16 with fp32
// accumulators, over fa_kernels.h's wrappers: fa_mma_scores (16 rows of A times a tile's
// rows, B not transposed) and fa_mma_pv (accumulators packed into A, times a tile read
// with ldmatrix .trans).
//   dq kernel, a warp owning 16 queries:  S = Q K^T, P; dP = dO V^T; dS; dQ += dS K.
//   dkv kernel, a warp owning 16 keys:    S^T = K Q^T, P^T; dV += P^T dO; dP^T = V dO^T;
//                                         dS^T; dK += dS^T Q.
#ifndef HIPDNN_HIP_FA_BWD_MMA_H
#define HIPDNN_HIP_FA_BWD_MMA_H

// This lane's ldmatrix byte offsets into a tile of pitch L (16-bit elements): of A (16 rows
// from r0, row-major), of B with its rows the n index (not transposed: K for S = Q K^T) and
// of B with its rows the k index (.trans: V for P V); the order of the four 8 x 8
// matrices gives mma.sync's register order (fa_mma's qa, ka and va).
PW_FN uint32_t fa_lane_a(int L, int r0) {
    const int lane = (int)threadIdx.x & 31;
    return (uint32_t)(((r0 + (lane & 7) + ((lane >> 3) & 1) * 8) * L + (lane >> 4) * 8) * 2);
}

PW_FN uint32_t fa_lane_bn(int L) {
    const int lane = (int)threadIdx.x & 31;
    return (uint32_t)((((lane & 7) + (lane >> 4) * 8) * L + ((lane >> 3) & 1) * 8) * 2);
}

PW_FN uint32_t fa_lane_bt(int L) {
    const int lane = (int)threadIdx.x & 31;
    return (uint32_t)((((lane & 7) + ((lane >> 3) & 1) * 8) * L + (lane >> 4) * 8) * 2);
}

// The accumulators s of a 16 x N tile (this thread's rows r0 and r0 + 8, x = 0, 1; columns
// c0 + n * 8 + 2 (lane % 4) + (c & 1)) become p = exp2(scale2 s + bias - lse), 0 outside
// row x's columns [rlo[x], rhi[x]).  KEYS: rows are keys, columns queries (lse of a column:
// lse_col[column - c0]); else rows are queries (lse_row[x]).  FULL: each of the warp's
// rows sees every column and there is no bias or ALiBi (the forward's unmasked tiles): no
// checks, one fused multiply-add and one ex2 an element.
template <int N, bool KEYS, bool FULL>
PW_FN void fa_bwd_mma_probs(const fa_program& p, int64_t b, int64_t h, float scale2, int64_t r0,
                            int64_t c0, const int64_t* rlo, const int64_t* rhi,
                            const float* lse_row, const float* lse_col, float (&s)[N / 8][4]) {
    const int t4 = (int)threadIdx.x & 3;
    if (FULL) {
PW_UNROLL
        for (int n = 0; n < N / 8; ++n)
PW_UNROLL
            for (int c = 0; c < 4; ++c)
                s[n][c] = fa_ex2(fmaf(s[n][c], scale2,
                                      -(KEYS ? lse_col[n * 8 + 2 * t4 + (c & 1)] : lse_row[c >> 1])));
        return;
    }
    int lo[2], hi[2]; // relative to the tile, clamped: 32-bit compares
PW_UNROLL
    for (int x = 0; x < 2; ++x) {
        const int64_t a = rlo[x] - c0, e = rhi[x] - c0;
        lo[x] = a < -1 ? -1 : a > N ? N : (int)a;
        hi[x] = e < -1 ? -1 : e > N ? N : (int)e;
    }
PW_UNROLL
    for (int n = 0; n < N / 8; ++n)
PW_UNROLL
        for (int c = 0; c < 4; ++c) {
            const int x = c >> 1, col = n * 8 + 2 * t4 + (c & 1);
            if (col >= lo[x] && col < hi[x]) {
                const int64_t row = r0 + 8 * x, other = c0 + col;
                const float bias = KEYS ? fa_bias_log2(p, b, h, other, row)
                                        : fa_bias_log2(p, b, h, row, other);
                const float e = fmaf(s[n][c], scale2, bias) - (KEYS ? lse_col[col] : lse_row[x]);
                s[n][c] = KEYS ? exp2f(e) : fa_ex2(e); // dkv (KEYS) spills with ex2's schedule
            } else {
                s[n][c] = 0.0f;
            }
        }
}

// dp becomes ds = p (dp - delta), delta a row's (dl_row[x]) or, KEYS, a column's.
template <int N, bool KEYS>
PW_FN void fa_bwd_mma_ds(const float (&s)[N / 8][4], float (&dp)[N / 8][4], const float* dl_row,
                         const float* dl_col) {
    const int t4 = (int)threadIdx.x & 3;
PW_UNROLL
    for (int n = 0; n < N / 8; ++n)
PW_UNROLL
        for (int c = 0; c < 4; ++c)
            dp[n][c] = s[n][c] * (dp[n][c] - (KEYS ? dl_col[n * 8 + 2 * t4 + (c & 1)] : dl_row[c >> 1]));
}

// Accumulators of W columns (rows row0, row0 + 8 of (b, h); those at or past `rows` not)
// times `scale` into a tensor of strides st.
template <int W>
PW_FN void fa_bwd_mma_store(void* ptr, int dt, const int64_t* st, int64_t b, int64_t h,
                            int64_t row0, int64_t rows, float scale, const float (&acc)[W / 8][4]) {
    const int t4 = (int)threadIdx.x & 3;
PW_UNROLL
    for (int x = 0; x < 2; ++x) {
        const int64_t i = row0 + 8 * x;
        if (i >= rows) continue;
        const int64_t at = b * st[0] + h * st[1] + i * st[2];
PW_UNROLL
        for (int e = 0; e < W / 8; ++e) {
            const int col = e * 8 + 2 * t4;
            fa_store(dt, ptr, at + col * st[3], acc[e][2 * x] * scale);
            fa_store(dt, ptr, at + (col + 1) * st[3], acc[e][2 * x + 1] * scale);
        }
    }
}

// ---- dq -------------------------------------------------------------------------------------

template <int DT, int D, int DV, int WARPS, int BC>
PW_FN void fa_bwd_dq_mma(const fa_program& p, unsigned char* smem) {
    constexpr int T = 32 * WARPS, BR = 16 * WARPS, LQ = FA_MMA_LD(D), LV = FA_MMA_LD(DV);
    constexpr bool QREG = D <= 64 && DV <= 64; // Q's and dO's fragments stay in registers
    const uint32_t q_sm = tc_smem_addr(smem);
    const uint32_t do_sm = q_sm + BR * LQ * 2;
    const uint32_t k_sm = do_sm + BR * LV * 2;    // two buffers of BC x LQ
    const uint32_t v_sm = k_sm + 2 * BC * LQ * 2; // two buffers of BC x LV
    const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5;
    const FaBlock k = fa_block(p, (int64_t)blockIdx.x);
    const int64_t wi0 = k.i0 + warp * 16, row0 = wi0 + (lane >> 2);
    int64_t wlo, whi, clo, chi, rlo[2], rhi[2]; // clo, chi: keys all the warp's rows see
    fa_rows_keys(p, k, wi0, 16, &wlo, &whi);
    fa_rows_common(p, k, wi0, 16, &clo, &chi);
    if (p.bias || p.alibi_n) chi = clo;
    fa_row_keys(p, k, row0, &rlo[0], &rhi[0]);
    fa_row_keys(p, k, row0 + 8, &rlo[1], &rhi[1]);
    const int ntiles = k.khi > k.klo ? (int)((k.khi - k.klo + BC - 1) / BC) : 0;
    const int nq = p.sq - k.i0 < BR ? (int)(p.sq - k.i0) : BR;
    fa_load_tile<D, T>(q_sm, (const uint16_t*)p.q + k.b * p.q_s[0] + k.h * p.q_s[1] + k.i0 * p.q_s[2],
                       p.q_s[2], BR, nq);
    fa_load_tile<DV, T>(do_sm, (const uint16_t*)p.d_o + k.b * p.do_s[0] + k.h * p.do_s[1] +
                        k.i0 * p.do_s[2], p.do_s[2], BR, nq);
    if (ntiles > 0) fa_mma_load_kv<D, DV, T, BC>(p, k, 0, k_sm, v_sm);
    tc_cp_commit();
    float lse[2], dl[2] = {0.0f, 0.0f};
PW_UNROLL
    for (int x = 0; x < 2; ++x)
        lse[x] = row0 + 8 * x < p.sq ? fa_lse_log2(p, k.b, k.h, row0 + 8 * x) : __builtin_huge_valf();
    for (int r = 0; r < 16; ++r) { // the warp's rows' delta, while the tiles load
        const float d = fa_bwd_delta_row(p, k.b, k.h, wi0 + r, k.lq);
        if (r == (lane >> 2)) dl[0] = d;
        if (r == (lane >> 2) + 8) dl[1] = d;
    }
    const uint32_t qa = q_sm + fa_lane_a(LQ, warp * 16), da = do_sm + fa_lane_a(LV, warp * 16);
    const uint32_t kb = fa_lane_bn(LQ), vb = fa_lane_bn(LV), kt_b = fa_lane_bt(LQ);
    uint32_t qf[QREG ? D / 16 : 1][4], df[QREG ? DV / 16 : 1][4];
    float dq[D / 8][4];
PW_UNROLL
    for (int e = 0; e < D / 8; ++e) dq[e][0] = dq[e][1] = dq[e][2] = dq[e][3] = 0.0f;
    for (int t = 0; t < ntiles; ++t) {
        if (t + 1 < ntiles) { // the next tile into the other buffer while this one computes
            fa_mma_load_kv<D, DV, T, BC>(p, k, t + 1, k_sm, v_sm);
            tc_cp_commit();
            tc_cp_wait<1>();
        } else {
            tc_cp_wait<0>();
        }
        __syncthreads();
        if (QREG && t == 0) {
PW_UNROLL
            for (int kk = 0; kk < D / 16; ++kk) tc_ldmatrix4<false>(qa + kk * 32, qf[QREG ? kk : 0]);
PW_UNROLL
            for (int kk = 0; kk < DV / 16; ++kk) tc_ldmatrix4<false>(da + kk * 32, df[QREG ? kk : 0]);
        }
        const int64_t kt = k.klo + (int64_t)t * BC;
        const uint32_t kbuf = k_sm + (t & 1) * BC * LQ * 2, vbuf = v_sm + (t & 1) * BC * LV * 2;
        if (kt < whi && kt + BC > wlo) {
            float s[BC / 8][4], dp[BC / 8][4];
            fa_mma_scores<DT, D, BC, QREG>(s, qf, qa, kbuf + kb);
            if (kt >= clo && kt + BC <= chi)
                fa_bwd_mma_probs<BC, false, true>(p, k.b, k.h, k.scale2, row0, kt, rlo, rhi, lse, lse, s);
            else
                fa_bwd_mma_probs<BC, false, false>(p, k.b, k.h, k.scale2, row0, kt, rlo, rhi, lse, lse, s);
            fa_mma_scores<DT, DV, BC, QREG>(dp, df, da, vbuf + vb);
            fa_bwd_mma_ds<BC, false>(s, dp, dl, dl);
            fa_mma_pv<DT, D, BC>(dp, dq, kbuf + kt_b);
        }
        __syncthreads(); // every warp is done with this buffer before it is refilled
    }
    tc_cp_wait<0>(); // nothing left in flight (no key tile: Q's and dO's copies alone)
    fa_bwd_mma_store<D>(p.grad_q, p.dq_dt, p.dq_s, k.b, k.h, row0, p.sq, fa_scale(p), dq);
}

// ---- dk, dv ---------------------------------------------------------------------------------

// Step t of a dkv block's walk (query head h0 + t / nt, rows ilo + (t % nt) BR on; rows at
// or past ihi zeros) into buffer t % 2: queries and dO rows by cp.async, the rows'
// log-sum-exp and delta by plain stores (seen after the barrier that follows the wait).
template <int D, int DV, int T, int BR>
PW_FN void fa_bwd_load_rows(const fa_program& p, const FaKeyBlock& k, int t, int nt,
                            uint32_t q_sm, uint32_t do_sm, float* rows) {
    const int64_t h = k.h0 + t / nt, it = k.ilo + (int64_t)(t % nt) * BR;
    const int n = k.ihi - it < BR ? (int)(k.ihi - it) : BR;
    const uint16_t* qg = (const uint16_t*)p.q + k.b * p.q_s[0] + h * p.q_s[1] + it * p.q_s[2];
    const uint16_t* dg = (const uint16_t*)p.d_o + k.b * p.do_s[0] + h * p.do_s[1] + it * p.do_s[2];
    fa_load_tile<D, T>(q_sm + (t & 1) * BR * FA_MMA_LD(D) * 2, qg, p.q_s[2], BR, n);
    fa_load_tile<DV, T>(do_sm + (t & 1) * BR * FA_MMA_LD(DV) * 2, dg, p.do_s[2], BR, n);
    float* r = rows + (t & 1) * 2 * BR;
    for (int e = (int)threadIdx.x; e < BR; e += T) {
        r[e] = e < n ? fa_lse_log2(p, k.b, h, it + e) : __builtin_huge_valf();
        r[BR + e] = e < n ? p.delta[fa_delta_at(p, k.b, h, it + e)] : 0.0f;
    }
}

// H_k = H_v (owner FA_OWN_KV): a block's keys are one key and one value head's.
template <int DT, int D, int DV, int WARPS, int BR>
PW_FN void fa_bwd_dkv_mma(const fa_program& p, unsigned char* smem) {
    constexpr int T = 32 * WARPS, BK = 16 * WARPS, LQ = FA_MMA_LD(D), LV = FA_MMA_LD(DV);
    constexpr bool KREG = D <= 64 && DV <= 64; // K's and V's fragments stay in registers
    const uint32_t k_sm = tc_smem_addr(smem);
    const uint32_t v_sm = k_sm + BK * LQ * 2;
    const uint32_t q_sm = v_sm + BK * LV * 2;      // two buffers of BR x LQ
    const uint32_t do_sm = q_sm + 2 * BR * LQ * 2; // two buffers of BR x LV
    float* rows = (float*)(smem + 2 * (LQ + LV) * (BK + 2 * BR)); // two of [lse BR][delta BR]
    const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5;
    const FaKeyBlock k = fa_key_block(p, (int64_t)blockIdx.x);
    const int64_t wj0 = k.j0 + warp * 16, j0r = wj0 + (lane >> 2);
    int64_t wlo, whi, rlo[2], rhi[2];
    fa_keys_rows(p, k.lq, k.lkv, wj0, 16, &wlo, &whi);
    fa_key_rows(p, k.lq, k.lkv, j0r, &rlo[0], &rhi[0]);
    fa_key_rows(p, k.lq, k.lkv, j0r + 8, &rlo[1], &rhi[1]);
    const int nk = p.skv - k.j0 < BK ? (int)(p.skv - k.j0) : BK;
    fa_load_tile<D, T>(k_sm, (const uint16_t*)p.k + k.b * p.k_s[0] + k.g * p.k_s[1] + k.j0 * p.k_s[2],
                       p.k_s[2], BK, nk);
    fa_load_tile<DV, T>(v_sm, (const uint16_t*)p.v + k.b * p.v_s[0] + k.g * p.v_s[1] +
                        k.j0 * p.v_s[2], p.v_s[2], BK, nk);
    const int nt = k.ihi > k.ilo ? (int)((k.ihi - k.ilo + BR - 1) / BR) : 0;
    const int total = nt * (int)k.nh;
    if (total > 0) fa_bwd_load_rows<D, DV, T, BR>(p, k, 0, nt, q_sm, do_sm, rows);
    tc_cp_commit();
    const uint32_t ka = k_sm + fa_lane_a(LQ, warp * 16), va = v_sm + fa_lane_a(LV, warp * 16);
    const uint32_t qb = fa_lane_bn(LQ), db = fa_lane_bn(LV), qt = fa_lane_bt(LQ), dt = fa_lane_bt(LV);
    uint32_t kf[KREG ? D / 16 : 1][4], vf[KREG ? DV / 16 : 1][4];
    float dk[D / 8][4], dv[DV / 8][4];
PW_UNROLL
    for (int e = 0; e < D / 8; ++e) dk[e][0] = dk[e][1] = dk[e][2] = dk[e][3] = 0.0f;
PW_UNROLL
    for (int e = 0; e < DV / 8; ++e) dv[e][0] = dv[e][1] = dv[e][2] = dv[e][3] = 0.0f;
    for (int t = 0; t < total; ++t) {
        if (t + 1 < total) {
            fa_bwd_load_rows<D, DV, T, BR>(p, k, t + 1, nt, q_sm, do_sm, rows);
            tc_cp_commit();
            tc_cp_wait<1>();
        } else {
            tc_cp_wait<0>();
        }
        __syncthreads();
        if (KREG && t == 0) {
PW_UNROLL
            for (int kk = 0; kk < D / 16; ++kk) tc_ldmatrix4<false>(ka + kk * 32, kf[KREG ? kk : 0]);
PW_UNROLL
            for (int kk = 0; kk < DV / 16; ++kk) tc_ldmatrix4<false>(va + kk * 32, vf[KREG ? kk : 0]);
        }
        const int64_t h = k.h0 + t / nt, it = k.ilo + (int64_t)(t % nt) * BR;
        const uint32_t qbuf = q_sm + (t & 1) * BR * LQ * 2, dbuf = do_sm + (t & 1) * BR * LV * 2;
        const float* rl = rows + (t & 1) * 2 * BR;
        if (it < whi && it + BR > wlo) {
            float s[BR / 8][4], dp[BR / 8][4];
            fa_mma_scores<DT, D, BR, KREG>(s, kf, ka, qbuf + qb);
            // masked always: an unmasked body (as dq's) spills at its 252 to 255 registers
            fa_bwd_mma_probs<BR, true, false>(p, k.b, h, k.scale2, j0r, it, rlo, rhi, rl, rl, s);
            fa_mma_pv<DT, DV, BR>(s, dv, dbuf + dt);
            fa_mma_scores<DT, DV, BR, KREG>(dp, vf, va, dbuf + db);
            fa_bwd_mma_ds<BR, true>(s, dp, rl + BR, rl + BR);
            fa_mma_pv<DT, D, BR>(dp, dk, qbuf + qt);
        }
        __syncthreads(); // every warp is done with this buffer before it is refilled
    }
    tc_cp_wait<0>(); // nothing left in flight (no query tile: K's and V's copies alone)
    fa_bwd_mma_store<D>(p.grad_k, p.dk_dt, p.dk_s, k.b, k.g, j0r, p.skv, k.scale, dk);
    fa_bwd_mma_store<DV>(p.grad_v, p.dv_dt, p.dv_s, k.b, k.g, j0r, p.skv, 1.0f, dv);
}

#endif
