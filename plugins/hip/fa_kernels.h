// fa_kernels.h — the attention forward kernels, compiled at plan time (NVRTC, hiprtc) with
// the head dims and storage types as template arguments (jit_source.c writes the entry
// point).  Flash-attention style: a block holds its queries, walks the keys they may see
// in tiles, and keeps for each row the running maximum m, the running sum l of
// exp2(s - m) and the unnormalised output, rescaled by exp2(m_old - m_new) when the
// maximum grows; no S_q x S_kv matrix is ever stored.
//
//   fa_simt: any storage type, stride, alignment and head dim up to 256 (fp32 FMA): a
//     block of 4 warps takes FA_SIMT_ROWS queries (4 a warp, in fp32 in shared memory) and
//     a tile of 32 keys at a time, each lane one key's score, then the tile's values (in
//     the same shared buffer) into each lane's columns of o.  Any vendor; ROCm's kernel.
//   fa_mma (NVIDIA sm_80 and newer): fp16 / bf16 on tensor cores, mma.sync m16n8k16 with
//     fp32 accumulators: each warp owns 16 queries; S = Q K^T of a key tile stays in the
//     accumulators, is masked, exponentiated and packed into the A operand of P V.  Key
//     and value tiles move with cp.async, two buffers deep (the next tile loads while this
//     one is computed); ldmatrix (.trans for V) reads them from rows padded by 16 bytes,
//     so that the 8 rows of one ldmatrix phase fall in distinct banks.
#ifndef HIPDNN_HIP_FA_KERNELS_H
#define HIPDNN_HIP_FA_KERNELS_H

#include "fa_exec.h"

PW_FN float fa_warp_max(float x) {
    for (int m = 16; m > 0; m >>= 1) x = fmaxf(x, hd_shfl_xor(x, m));
    return x;
}

PW_FN float fa_warp_sum(float x) {
    for (int m = 16; m > 0; m >>= 1) x += hd_shfl_xor(x, m);
    return x;
}

// ---- the general kernel ------------------------------------------------------------------

// Rows [first, first + n) of a [B, H, S, W] tensor (the sample at element `at`, head h,
// strides s) into dst as fp32, pitch ld; rows at or past `end` are zeros.
template <int W, int DT>
PW_FN void fa_simt_load(const void* src, const int64_t* s, int64_t at, int64_t h, int64_t first,
                        int64_t end, int n, float* dst, int ld) {
    for (int e = (int)threadIdx.x; e < n * W; e += FA_SIMT_THREADS) {
        const int r = e / W, c = e - (e / W) * W;
        const int64_t row = first + r;
        dst[r * ld + c] = row < end ? fa_load(DT, src, at + h * s[1] + row * s[2] + c * s[3])
                                    : 0.0f;
    }
}

// Keys [first, first + n) of a key or value tensor as fa_simt_load, through the page
// table where the forward's K / V are paged (fa_row_at).
template <int W, int DT>
PW_FN void fa_simt_load_kv(const fa_program& p, bool values, int64_t b, int64_t h, int64_t first,
                           int64_t end, int n, float* dst, int ld) {
    const void* src = values ? p.v : p.k;
    const int64_t* s = values ? p.v_s : p.k_s;
    const int64_t at = fa_sample(p, values ? FA_RAG_V : FA_RAG_K, b);
    for (int e = (int)threadIdx.x; e < n * W; e += FA_SIMT_THREADS) {
        const int r = e / W, c = e - (e / W) * W;
        const int64_t row = first + r;
        dst[r * ld + c] =
            row < end ? fa_load(DT, src,
                                (values ? fa_row_at(s, p.page_v, p.page_v_s, p.block_v, p.blocks_v,
                                                    fa_sample(p, FA_RAG_PV, b), at, h, row)
                                        : fa_row_at(s, p.page_k, p.page_k_s, p.block_k, p.blocks_k,
                                                    fa_sample(p, FA_RAG_PK, b), at, h, row)) +
                                    c * s[3])
                      : 0.0f;
    }
}

// Each of the warp's RW rows: the score of key kt + lane in base 2, -inf where unseen.
template <int D, int RW, int LD>
PW_FN void fa_simt_scores(const fa_program& p, const FaBlock& k, const float* qs, const float* ks,
                          int64_t kt, const int64_t* lo, const int64_t* hi, float* s) {
    const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5;
    const int64_t key = kt + lane;
PW_UNROLL
    for (int rr = 0; rr < RW; ++rr) {
        const int r = warp * RW + rr;
        float acc = 0.0f;
        for (int c = 0; c < D; ++c) acc = fmaf(qs[r * D + c], ks[lane * LD + c], acc);
        s[rr] = key >= lo[rr] && key < hi[rr]
                    ? fmaf(acc, k.scale2, fa_bias_log2(p, k.b, k.h, k.i0 + r, key))
                    : -__builtin_huge_valf();
    }
}

// The online softmax of a tile: the rows' maxima and sums updated, o rescaled, and the
// tile's values (vs) weighted by p added, the lanes' p broadcast in turn.
template <int DV, int RW, int DC, int LD>
PW_FN void fa_simt_accumulate(const float* vs, const float* s, const float* z, float* m, float* l,
                              float (&o)[RW][DC]) {
    const int lane = (int)threadIdx.x & 31;
PW_UNROLL
    for (int rr = 0; rr < RW; ++rr) {
        const float mx = fmaxf(m[rr], fa_warp_max(s[rr]));
        if (mx == -__builtin_huge_valf()) continue; // nothing seen yet: p = 0
        const float alpha = exp2f(m[rr] - mx);      // 0 while m was -inf
        const float pr = exp2f(s[rr] - mx);
        l[rr] = l[rr] * alpha + fa_warp_sum(pr); // the softmax's sum: before dropout
        m[rr] = mx;
        const float pz = pr * z[rr];              // o takes the dropped p
PW_UNROLL
        for (int c = 0; c < DC; ++c) o[rr][c] *= alpha;
        for (int j = 0; j < FA_SIMT_KEYS; ++j) {
            const float pj = hd_shfl(pz, j);
PW_UNROLL
            for (int c = 0; c < DC; ++c)
                if (c * 32 + lane < DV) o[rr][c] = fmaf(pj, vs[j * LD + c * 32 + lane], o[rr][c]);
        }
    }
}

template <int DV, int RW, int DC>
PW_FN void fa_simt_store(const fa_program& p, const FaBlock& k, const float* m, const float* l,
                         float (&o)[RW][DC]) {
    const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5;
PW_UNROLL
    for (int rr = 0; rr < RW; ++rr) {
        const int64_t i = k.i0 + warp * RW + rr;
        if (i >= p.sq) continue;
        const float inv = l[rr] > 0.0f ? 1.0f / l[rr] : 0.0f;
        const int64_t at = fa_o_at(p, k.b, k.h, i);
        const bool own = i < fa_rows_end(p, FA_RAG_O, k.lq, p.sq); // else the next sample's
PW_UNROLL
        for (int c = 0; c < DC; ++c)
            if (own && c * 32 + lane < DV)
                fa_store(p.o_dt, p.o, at + (c * 32 + lane) * p.o_s[3], o[rr][c] * inv);
        if (lane == 0) fa_store_stats(p, k.b, k.h, i, m[rr], l[rr]);
    }
}

template <int D, int DV, int QDT, int KDT, int VDT>
PW_FN void fa_simt(const fa_program& p, float* smem) {
    constexpr int LD = FA_SIMT_LD(D, DV), RW = FA_SIMT_ROWS / 4, DC = (DV + 31) / 32;
    float* kv = smem;                     // [FA_SIMT_KEYS][LD]: a key tile, then its values
    float* qs = smem + FA_SIMT_KEYS * LD; // [FA_SIMT_ROWS][D]
    const int warp = (int)threadIdx.x >> 5;
    const FaBlock k = fa_block(p, (int64_t)blockIdx.x);
    fa_simt_load<D, QDT>(p.q, p.q_s, fa_sample(p, FA_RAG_Q, k.b), k.h, k.i0,
                         fa_rows_end(p, FA_RAG_Q, k.lq, p.sq), FA_SIMT_ROWS, qs, D);
    float o[RW][DC], m[RW], l[RW], s[RW], z[RW];
    int64_t lo[RW], hi[RW];
PW_UNROLL
    for (int rr = 0; rr < RW; ++rr) {
        m[rr] = -__builtin_huge_valf();
        l[rr] = 0.0f;
PW_UNROLL
        for (int c = 0; c < DC; ++c) o[rr][c] = 0.0f;
        fa_row_keys(p, k, k.i0 + warp * RW + rr, &lo[rr], &hi[rr]);
    }
    for (int64_t kt = k.klo; kt < k.khi; kt += FA_SIMT_KEYS) {
        __syncthreads(); // the buffer's last values are read
        fa_simt_load_kv<D, KDT>(p, false, k.b, k.hk, kt, k.khi, FA_SIMT_KEYS, kv, LD);
        __syncthreads();
        fa_simt_scores<D, RW, LD>(p, k, qs, kv, kt, lo, hi, s);
PW_UNROLL
        for (int rr = 0; rr < RW; ++rr)
            z[rr] = fa_drop(p, k.seed, k.offset, k.b, k.h, k.i0 + warp * RW + rr,
                            kt + ((int)threadIdx.x & 31));
        __syncthreads();
        fa_simt_load_kv<DV, VDT>(p, true, k.b, k.hv, kt, k.khi, FA_SIMT_KEYS, kv, LD);
        __syncthreads();
        fa_simt_accumulate<DV, RW, DC, LD>(kv, s, z, m, l, o);
    }
    fa_simt_store<DV, RW, DC>(p, k, m, l, o);
    if (p.rng_dump) fa_dump_rows(p, k, (int64_t)threadIdx.x, FA_SIMT_THREADS);
}

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
// ---- tensor cores (NVIDIA) ----------------------------------------------------------------

#include "tc_ptx.h"

// d += a b: a 16 x 16 (row), b 16 x 8 (col), fp32 accumulators.
template <int DT> PW_FN void fa_mma16816(float* d, const uint32_t* a, uint32_t b0, uint32_t b1) {
    if (DT == PW_BF16)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

template <int DT> PW_FN uint32_t fa_pack(float lo, float hi) {
    return DT == PW_BF16 ? hd_pack_bf16x2(lo, hi) : hd_pack_half2(lo, hi);
}

// 2^x in one MUFU.EX2 (exp2f adds a subnormal fix-up around it): p below 2^-126 of the
// row's maximum is 0, ex2(-inf) too.
PW_FN float fa_ex2(float x) {
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}

// Rows [0, n) of a tile of W 16-bit columns into shared memory at dst (pitch FA_MMA_LD(W)),
// 16 bytes a thread and step; rows at or past `valid` are zero-filled.  Row r starts at
// src + r * rs elements (columns contiguous).
template <int W, int T>
PW_FN void fa_load_tile(uint32_t dst, const uint16_t* src, int64_t rs, int n, int valid) {
    constexpr int C = W / 8;
    for (int e = (int)threadIdx.x; e < n * C; e += T) {
        const int r = e / C, c = e - (e / C) * C;
        const bool ok = r < valid;
        tc_cp_async(dst + (uint32_t)((r * FA_MMA_LD(W) + c * 8) * 2),
                    ok ? src + r * rs + c * 8 : src, ok);
    }
}

// Where a thread's 16-byte piece of a tile of W columns and rows rs elements apart starts
// (row threadIdx / (W / 8)): its offset from the tile's first element, computed once.
template <int W> PW_FN int64_t fa_piece(int64_t rs) {
    const int r = (int)threadIdx.x / (W / 8);
    return r * rs + ((int)threadIdx.x - r * (W / 8)) * 8;
}

// fa_load_tile of N rows all valid, where the T / (W / 8) rows a pass divide N
// (FA_EVEN): no bounds checks, src + off the thread's first piece (fa_piece), the next
// passes that many rows on.
#define FA_EVEN(W, T, N) ((T) % ((W) / 8) == 0 && (N) % ((T) / ((W) / 8)) == 0)
template <int W, int T, int N>
PW_FN void fa_load_full(uint32_t dst, const uint16_t* src, int64_t off, int64_t rs) {
    constexpr int C = W / 8, R = T / C;
    const int r = (int)threadIdx.x / C;
    dst += (uint32_t)((r * FA_MMA_LD(W) + ((int)threadIdx.x - r * C) * 8) * 2);
    src += off;
PW_UNROLL
    for (int i = 0; i < N / R; ++i)
        tc_cp_async(dst + (uint32_t)(i * R * FA_MMA_LD(W) * 2), src + i * R * rs, true);
}

// S = Q K^T of the warp's 16 queries and a tile of BC keys, in mma.sync's accumulator
// layout: s[n] holds keys n * 8 + 2 * (lane % 4) (+1) of rows lane / 4 (c 0, 1) and + 8
// (c 2, 3).  qa: this lane's ldmatrix address of Q's first k-step; kb: of the key tile.
template <int DT, int D, int BC, bool QREG, int QF>
PW_FN void fa_mma_scores(float (&s)[BC / 8][4], const uint32_t (&qf)[QF][4], uint32_t qa,
                         uint32_t kb) {
    constexpr int LQ = FA_MMA_LD(D);
PW_UNROLL
    for (int n = 0; n < BC / 8; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
PW_UNROLL
    for (int kk = 0; kk < D / 16; ++kk) {
        uint32_t qx[4];
        if (!QREG) tc_ldmatrix4<false>(qa + kk * 32, qx);
        const uint32_t* a = QREG ? qf[QREG ? kk : 0] : qx;
PW_UNROLL
        for (int np = 0; np < BC / 16; ++np) { // two key octets an ldmatrix
            uint32_t r[4];
            tc_ldmatrix4<false>(kb + (uint32_t)((np * 16 * LQ + kk * 16) * 2), r);
            fa_mma16816<DT>(s[2 * np], a, r[0], r[1]);
            fa_mma16816<DT>(s[2 * np + 1], a, r[2], r[3]);
        }
    }
}

// o of the thread's two rows times their alpha (the maxima moved); skipped where no row of
// the warp moved its maximum (alpha 1: most tiles once a row has seen a few).
template <int ET> PW_FN void fa_mma_rescale(float (&o)[ET][4], const float* alpha) {
    if (!__any_sync(0xffffffffu, alpha[0] != 1.0f || alpha[1] != 1.0f)) return;
PW_UNROLL
    for (int e = 0; e < ET; ++e) {
        o[e][0] *= alpha[0];
        o[e][1] *= alpha[0];
        o[e][2] *= alpha[1];
        o[e][3] *= alpha[1];
    }
}

// The thread's two rows (x = 0: lane / 4, x = 1: + 8; query head rh[x], query ri[x]) of
// one tile at key kt: scale, bias and mask (rlo, rhi: each row's keys), then the online
// softmax: s becomes p, the rows' maxima m and partial sums l move on and o is rescaled.
template <int BC, int ET>
PW_FN void fa_mma_softmax(const fa_program& p, int64_t b, float scale2, const int64_t* rh,
                          const int64_t* ri, int64_t kt, const int64_t* rlo, const int64_t* rhi,
                          float (&s)[BC / 8][4], float* m, float* l, float (&o)[ET][4]) {
    const int t4 = (int)threadIdx.x & 3;
    int lo[2], hi[2]; // the rows' keys relative to the tile, clamped: 32-bit compares
    float mx[2] = {-__builtin_huge_valf(), -__builtin_huge_valf()}, alpha[2], rs[2] = {0, 0};
PW_UNROLL
    for (int x = 0; x < 2; ++x) {
        const int64_t a = rlo[x] - kt, e = rhi[x] - kt;
        lo[x] = a < -1 ? -1 : a > BC ? BC : (int)a;
        hi[x] = e < -1 ? -1 : e > BC ? BC : (int)e;
    }
PW_UNROLL
    for (int n = 0; n < BC / 8; ++n)
PW_UNROLL
        for (int c = 0; c < 4; ++c) {
            const int x = c >> 1, j = n * 8 + 2 * t4 + (c & 1);
            s[n][c] = j >= lo[x] && j < hi[x]
                          ? fmaf(s[n][c], scale2, fa_bias_log2(p, b, rh[x], ri[x], kt + j))
                          : -__builtin_huge_valf();
            mx[x] = fmaxf(mx[x], s[n][c]);
        }
PW_UNROLL
    for (int x = 0; x < 2; ++x) { // a row's maximum over the quad that holds it
        mx[x] = fmaxf(mx[x], hd_shfl_xor(mx[x], 1));
        mx[x] = fmaxf(mx[x], hd_shfl_xor(mx[x], 2));
        const float mn = fmaxf(m[x], mx[x]);
        // mn -inf: the row has seen nothing yet; its p are 0 and o, l stay 0
        alpha[x] = mn == -__builtin_huge_valf() ? 1.0f : fa_ex2(m[x] - mn);
        m[x] = mn;
    }
PW_UNROLL
    for (int n = 0; n < BC / 8; ++n)
PW_UNROLL
        for (int c = 0; c < 4; ++c) {
            const int x = c >> 1;
            s[n][c] = m[x] == -__builtin_huge_valf() ? 0.0f : fa_ex2(s[n][c] - m[x]);
            rs[x] += s[n][c];
        }
PW_UNROLL
    for (int x = 0; x < 2; ++x) l[x] = fmaf(l[x], alpha[x], rs[x]);
    fa_mma_rescale<ET>(o, alpha);
}

// fa_mma_softmax of a tile that each of the warp's rows sees whole, without bias or ALiBi
// and with scale2 > 0 (FA2's unmasked tiles): no mask, the maximum taken over the raw
// scores (a positive scale keeps their order), p = 2^(s scale2 - m) one fused
// multiply-add and one ex2; maxima and sums two chains a row, for latency.
template <int BC, int ET>
PW_FN void fa_mma_softmax_full(float scale2, float (&s)[BC / 8][4], float* m, float* l,
                               float (&o)[ET][4]) {
    float mx[4] = {s[0][0], s[0][1], s[0][2], s[0][3]}, rs[4] = {0, 0, 0, 0}, alpha[2], nm[2];
PW_UNROLL
    for (int n = 1; n < BC / 8; ++n)
PW_UNROLL
        for (int c = 0; c < 4; ++c) mx[c] = fmaxf(mx[c], s[n][c]);
PW_UNROLL
    for (int x = 0; x < 2; ++x) {
        float r = fmaxf(mx[2 * x], mx[2 * x + 1]);
        r = fmaxf(r, hd_shfl_xor(r, 1));
        r = fmaxf(r, hd_shfl_xor(r, 2));
        const float mn = fmaxf(m[x], r * scale2);
        alpha[x] = fa_ex2(m[x] - mn); // 0 while m was -inf
        m[x] = mn;
        nm[x] = -mn;
    }
PW_UNROLL
    for (int n = 0; n < BC / 8; ++n)
PW_UNROLL
        for (int c = 0; c < 4; ++c) {
            s[n][c] = fa_ex2(fmaf(s[n][c], scale2, nm[c >> 1]));
            rs[c] += s[n][c];
        }
PW_UNROLL
    for (int x = 0; x < 2; ++x) l[x] = fmaf(l[x], alpha[x], rs[2 * x] + rs[2 * x + 1]);
    fa_mma_rescale<ET>(o, alpha);
}

// O += P V: the accumulators of two key octets are the A fragment of one k-step; vb is
// this lane's ldmatrix (.trans) address of the value tile.
template <int DT, int DV, int BC>
PW_FN void fa_mma_pv(const float (&s)[BC / 8][4], float (&o)[DV / 8][4], uint32_t vb) {
    constexpr int LV = FA_MMA_LD(DV);
PW_UNROLL
    for (int kk = 0; kk < BC / 16; ++kk) {
        uint32_t a[4];
        a[0] = fa_pack<DT>(s[2 * kk][0], s[2 * kk][1]);
        a[1] = fa_pack<DT>(s[2 * kk][2], s[2 * kk][3]);
        a[2] = fa_pack<DT>(s[2 * kk + 1][0], s[2 * kk + 1][1]);
        a[3] = fa_pack<DT>(s[2 * kk + 1][2], s[2 * kk + 1][3]);
PW_UNROLL
        for (int ep = 0; ep < DV / 16; ++ep) {
            uint32_t r[4];
            tc_ldmatrix4<true>(vb + (uint32_t)((kk * 16 * LV + ep * 16) * 2), r);
            fa_mma16816<DT>(o[2 * ep], a, r[0], r[1]);
            fa_mma16816<DT>(o[2 * ep + 1], a, r[2], r[3]);
        }
    }
}

// l summed over the quad; o / l and the stats of the thread's rows below S_q.
template <int ET>
PW_FN void fa_mma_store(const fa_program& p, const FaBlock& k, int64_t row0, float* m, float* l,
                        const float (&o)[ET][4]) {
    const int t4 = (int)threadIdx.x & 3;
PW_UNROLL
    for (int x = 0; x < 2; ++x) {
        l[x] += hd_shfl_xor(l[x], 1);
        l[x] += hd_shfl_xor(l[x], 2);
        const int64_t i = row0 + 8 * x;
        if (i >= p.sq) continue;
        const float inv = l[x] > 0.0f ? hd_rcp(l[x]) : 0.0f;
        const int64_t at = fa_o_at(p, k.b, k.h, i);
        // 16-bit o, d contiguous, the row on 4 bytes: a column pair a 32-bit store
        const bool pair = (p.o_dt == PW_F16 || p.o_dt == PW_BF16) && p.o_s[3] == 1 &&
                          ((uint64_t)p.o & 3) == 0 && (at & 1) == 0;
PW_UNROLL
        for (int e = 0; e < ET; ++e) {
            const int col = e * 8 + 2 * t4;
            const float a = o[e][2 * x] * inv, b = o[e][2 * x + 1] * inv;
            if (pair) {
                ((uint32_t*)p.o)[(at + col) >> 1] = p.o_dt == PW_BF16 ? hd_pack_bf16x2(a, b)
                                                                      : hd_pack_half2(a, b);
            } else {
                fa_store(p.o_dt, p.o, at + col * p.o_s[3], a);
                fa_store(p.o_dt, p.o, at + (col + 1) * p.o_s[3], b);
            }
        }
        if (t4 == 0) fa_store_stats(p, k.b, k.h, i, m[x], l[x]);
    }
}

// Key tile t (keys klo + t * BC on, those at or past khi zeros) into buffer t % 2: kg, vg
// the head's key 0 (computed once), off this thread's pieces (fa_piece) of both; a whole
// tile without bounds checks (fa_load_full).
template <int D, int DV, int T, int BC>
PW_FN void fa_mma_load_kv(const fa_program& p, const FaBlock& k, int t, const uint16_t* kg,
                          const uint16_t* vg, const int64_t* off, uint32_t k_sm, uint32_t v_sm) {
    const int64_t kt = k.klo + (int64_t)t * BC;
    const int n = k.khi - kt < BC ? (int)(k.khi - kt) : BC;
    k_sm += (t & 1) * BC * FA_MMA_LD(D) * 2;
    v_sm += (t & 1) * BC * FA_MMA_LD(DV) * 2;
    kg += kt * p.k_s[2];
    vg += kt * p.v_s[2];
    if (FA_EVEN(D, T, BC) && n == BC) fa_load_full<D, T, BC>(k_sm, kg, off[0], p.k_s[2]);
    else fa_load_tile<D, T>(k_sm, kg, p.k_s[2], BC, n);
    if (FA_EVEN(DV, T, BC) && n == BC) fa_load_full<DV, T, BC>(v_sm, vg, off[1], p.v_s[2]);
    else fa_load_tile<DV, T>(v_sm, vg, p.v_s[2], BC, n);
}

// The same, the head's rows and the thread's pieces worked out here (the backward's dq and
// the decode path's calls).
template <int D, int DV, int T, int BC>
PW_FN void fa_mma_load_kv(const fa_program& p, const FaBlock& k, int t, uint32_t k_sm,
                          uint32_t v_sm) {
    const int64_t off[2] = {fa_piece<D>(p.k_s[2]), fa_piece<DV>(p.v_s[2])};
    fa_mma_load_kv<D, DV, T, BC>(p, k, t, (const uint16_t*)p.k + k.b * p.k_s[0] + k.hk * p.k_s[1],
                                 (const uint16_t*)p.v + k.b * p.v_s[0] + k.hv * p.v_s[1], off,
                                 k_sm, v_sm);
}

// FAST: tiles that each of a warp's rows sees whole take fa_mma_softmax_full (FA2's
// unmasked tiles; 0 sends every tile through the masked fa_mma_softmax, for comparisons).
template <int DT, int D, int DV, int WARPS, int BC, bool FAST>
PW_FN void fa_mma(const fa_program& p, unsigned char* smem) {
    constexpr int T = 32 * WARPS, BR = 16 * WARPS, LQ = FA_MMA_LD(D), LV = FA_MMA_LD(DV);
    constexpr bool QREG = D <= 128 && DV <= 128; // Q's fragments stay in registers
    const uint32_t q_sm = tc_smem_addr(smem);
    const uint32_t k_sm = q_sm + BR * LQ * 2;     // two buffers of BC x LQ
    const uint32_t v_sm = k_sm + 2 * BC * LQ * 2; // two buffers of BC x LV
    const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5;
    const FaBlock k = fa_block(p, (int64_t)blockIdx.x);
    const int64_t wi0 = k.i0 + warp * 16, row0 = wi0 + (lane >> 2);
    // the warp's keys (it skips tiles it does not see), those all its rows see (no mask
    // there), the rows'
    int64_t wlo, whi, clo, chi, rlo[2], rhi[2];
    const int64_t rh[2] = {k.h, k.h}, ri[2] = {row0, row0 + 8};
    fa_rows_keys(p, k, wi0, 16, &wlo, &whi);
    fa_rows_common(p, k, wi0, 16, &clo, &chi);
    if (!FAST || p.bias || p.alibi_n || !(k.scale2 > 0.0f)) chi = clo;
    fa_row_keys(p, k, row0, &rlo[0], &rhi[0]);
    fa_row_keys(p, k, row0 + 8, &rlo[1], &rhi[1]);
    float o[DV / 8][4], m[2] = {-__builtin_huge_valf(), -__builtin_huge_valf()}, l[2] = {0, 0};
PW_UNROLL
    for (int e = 0; e < DV / 8; ++e) o[e][0] = o[e][1] = o[e][2] = o[e][3] = 0.0f;
    const int ntiles = k.khi > k.klo ? (int)((k.khi - k.klo + BC - 1) / BC) : 0;
    const uint16_t* qg = (const uint16_t*)p.q + k.b * p.q_s[0] + k.h * p.q_s[1] + k.i0 * p.q_s[2];
    const uint16_t* kg = (const uint16_t*)p.k + k.b * p.k_s[0] + k.hk * p.k_s[1];
    const uint16_t* vg = (const uint16_t*)p.v + k.b * p.v_s[0] + k.hv * p.v_s[1];
    const int64_t off[2] = {fa_piece<D>(p.k_s[2]), fa_piece<DV>(p.v_s[2])};
    fa_load_tile<D, T>(q_sm, qg, p.q_s[2], BR, p.sq - k.i0 < BR ? (int)(p.sq - k.i0) : BR);
    if (ntiles > 0) fa_mma_load_kv<D, DV, T, BC>(p, k, 0, kg, vg, off, k_sm, v_sm);
    tc_cp_commit();
    // ldmatrix addresses: Q (A, 16 x 16 row-major), K (B of S: rows are keys), V (B of PV,
    // .trans); the order of the four matrices gives mma.sync's register order
    const uint32_t qa = q_sm + (uint32_t)(((warp * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * LQ +
                                           (lane >> 4) * 8) * 2);
    const uint32_t ka = (uint32_t)((((lane & 7) + (lane >> 4) * 8) * LQ + ((lane >> 3) & 1) * 8) * 2);
    const uint32_t va = (uint32_t)((((lane & 7) + ((lane >> 3) & 1) * 8) * LV + (lane >> 4) * 8) * 2);
    uint32_t qf[QREG ? D / 16 : 1][4];
    for (int t = 0; t < ntiles; ++t) {
        if (t + 1 < ntiles) { // the next tile into the other buffer while this one computes
            fa_mma_load_kv<D, DV, T, BC>(p, k, t + 1, kg, vg, off, k_sm, v_sm);
            tc_cp_commit();
            tc_cp_wait<1>();
        } else {
            tc_cp_wait<0>();
        }
        __syncthreads();
        if (QREG && t == 0)
PW_UNROLL
            for (int kk = 0; kk < D / 16; ++kk) tc_ldmatrix4<false>(qa + kk * 32, qf[QREG ? kk : 0]);
        const int64_t kt = k.klo + (int64_t)t * BC;
        if (kt < whi && kt + BC > wlo) {
            float s[BC / 8][4];
            fa_mma_scores<DT, D, BC, QREG>(s, qf, qa, k_sm + (t & 1) * BC * LQ * 2 + ka);
            if (FAST && kt >= clo && kt + BC <= chi)
                fa_mma_softmax_full<BC, DV / 8>(k.scale2, s, m, l, o);
            else
                fa_mma_softmax<BC, DV / 8>(p, k.b, k.scale2, rh, ri, kt, rlo, rhi, s, m, l, o);
            fa_mma_pv<DT, DV, BC>(s, o, v_sm + (t & 1) * BC * LV * 2 + va);
        }
        __syncthreads(); // every warp is done with this buffer before it is refilled
    }
    tc_cp_wait<0>(); // nothing left in flight (no key tile: Q's copy alone)
    fa_mma_store<DV / 8>(p, k, row0, m, l, o);
}
#endif

#endif
