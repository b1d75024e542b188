// gm_sgemm.h — the exact-fp32 matmul kernel for fp32 operands (GM_SGEMM, gemm_choice.c):
// fused multiply-adds on the CUDA cores (no TF32), every output's k summed in order as
// gm_simt and the host emulation sum it, in a register-blocked tile (included by
// gm_kernels.h, after its split-k and epilogue helpers; NVIDIA and HIP alike).
//
// A block of 256 threads computes a BM x BN tile (128 x 128, 128 x 64 or 64 x 64), each
// thread (BM / 16) x (BN / 16) outputs in 4 x 4 sub-tiles 64 rows / columns apart, so that
// a warp's 16-byte shared-memory reads of a row of b are consecutive (conflict-free) and
// of a are broadcasts.  k goes GM_SG_K at a time through two shared-memory stages, a and
// b both stored along k (a[k][m], b[k][n]): the next stage's global loads are issued into
// registers before this stage's multiply-adds and stored after them, one barrier a stage.
// An operand whose contiguous dim is k is loaded 16 bytes along k and stored transposed
// (rows padded by 4 floats: the two halves of a warp land in distinct banks); one whose
// contiguous dim is m (n) is copied 16 bytes as it is.  A forward convolution's x is
// gathered element by element (any layout: NCHW's rows are consecutive output positions,
// consecutive threads), each thread a fixed column of the stage and BM / 32 rows, whose
// receptive fields are worked out once; w is b, dense in the product's k (taps_inner for
// KCRS).  The product's fp32 tile goes through shared memory 64 rows at a time into the
// epilogue (gm_tile_epilogue), or straight to the split-k workspace (the tile's last range
// then sums the ranges from there).
#ifndef HIPDNN_HIP_GM_SGEMM_H
#define HIPDNN_HIP_GM_SGEMM_H

#define GM_SG_THREADS 256
#define GM_SG_K 8      /* k of a stage */
#define GM_SG_PIECE 64 /* rows of the tile in shared memory at a time */

// Shared memory: two stages of a (GM_SG_K rows of BM + 4 floats) and b, or a piece of the
// product's tile (GM_SG_PIECE rows of BN + 4).
template <int BM, int BN>
struct GmSgSmem {
    static constexpr int LA = BM + 4, LB = BN + 4, STAGE = GM_SG_K * (LA + LB);
    static constexpr int LD = BN + 4, PIECE = GM_SG_PIECE * LD;
    static constexpr int FLOATS = 2 * STAGE > PIECE ? 2 * STAGE : PIECE;
};

// One operand's stage, R rows (m or n) by GM_SG_K: 16-byte chunks, CHUNKS of them, Q a
// thread.
template <int R>
struct GmSgChunks {
    static constexpr int CHUNKS = R * GM_SG_K / 4;
    static constexpr int Q = (CHUNKS + GM_SG_THREADS - 1) / GM_SG_THREADS;
};

// Chunk c of the stage: row (m or n) and k, from r0 and k0; KC: k is the contiguous dim.
template <int R, bool KC>
PW_FN void gm_sg_chunk(int c, int* row, int* kk) {
    *row = KC ? c / (GM_SG_K / 4) : (c % (R / 4)) * 4;
    *kk = KC ? (c % (GM_SG_K / 4)) * 4 : c / (R / 4);
}

// The stage's chunks a thread loads (zeros outside the matrix: its contiguous dim is a
// multiple of 4 long, so a chunk is wholly inside or outside).
template <int R, bool KC>
PW_FN void gm_sg_fetch(const float* base, int64_t r0, int64_t k0, int64_t rows, int64_t ks,
                       int64_t s_r, int64_t s_k, int tid, float4 (&v)[GmSgChunks<R>::Q]) {
    typedef GmSgChunks<R> L;
PW_UNROLL
    for (int q = 0; q < L::Q; ++q) {
        const int c = tid + q * GM_SG_THREADS;
        int row, kk;
        gm_sg_chunk<R, KC>(c, &row, &kk);
        const int64_t r = r0 + row, k = k0 + kk;
        v[q] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if ((L::CHUNKS % GM_SG_THREADS == 0 || c < L::CHUNKS) && r < rows && k < ks)
            v[q] = *(const float4*)(base + r * s_r + k * s_k);
    }
}

// ... and into the stage's rows along k (LS floats a row).
template <int R, bool KC, int LS>
PW_FN void gm_sg_put(float* s, int tid, const float4 (&v)[GmSgChunks<R>::Q]) {
    typedef GmSgChunks<R> L;
PW_UNROLL
    for (int q = 0; q < L::Q; ++q) {
        const int c = tid + q * GM_SG_THREADS;
        if (L::CHUNKS % GM_SG_THREADS != 0 && c >= L::CHUNKS) break;
        int row, kk;
        gm_sg_chunk<R, KC>(c, &row, &kk);
        if (KC) {
            s[(kk + 0) * LS + row] = v[q].x;
            s[(kk + 1) * LS + row] = v[q].y;
            s[(kk + 2) * LS + row] = v[q].z;
            s[(kk + 3) * LS + row] = v[q].w;
        } else {
            *(float4*)(s + kk * LS + row) = v[q];
        }
    }
}

// A forward convolution's column of the stage, taps innermost (taps_inner): stepped
// GM_SG_K at a time by mixed-radix addition from the innermost tap.
PW_FN void gm_sg_col_next_taps(const gm_program& g, GmConvCol& col) {
    col.k += GM_SG_K;
    int32_t carry = GM_SG_K;
PW_UNROLL
    for (int d = GM_MAX_SPATIAL - 1; d >= 0; --d) {
        if (d >= g.nsp) continue;
        col.fd[d] += carry;
        carry = 0;
        while (col.fd[d] >= (int32_t)g.ker[d]) {
            col.fd[d] -= (int32_t)g.ker[d];
            ++carry;
        }
    }
    col.c += carry;
}

// A forward convolution's a: the thread's BM / 32 elements of its column `col`, rows
// (tid % 32) + 32 q (entries of `rows`), from x at the batch's offset.
template <int E>
PW_FN void gm_sg_gather(const gm_program& g, const float* x, const GmConvRows<E>& rows,
                        const GmConvCol& col, float (&v)[E]) {
    const bool k_ok = col.k < (uint32_t)g.k;
    int32_t tap[GM_MAX_SPATIAL];
    int64_t toff = (int64_t)col.c * g.x_sc;
PW_UNROLL
    for (int d = 0; d < GM_MAX_SPATIAL; ++d) {
        tap[d] = gm_conv_tap(g, col, d);
        if (d < g.nsp) toff += (int64_t)tap[d] * g.x_ssp[d];
    }
PW_UNROLL
    for (int q = 0; q < E; ++q) {
        bool valid = k_ok && rows.row_ok[q];
PW_UNROLL
        for (int d = 0; d < GM_MAX_SPATIAL; ++d)
            if (d < g.nsp) valid = valid && (uint32_t)(rows.first[q][d] + tap[d]) < (uint32_t)g.xsp[d];
        v[q] = valid ? x[rows.base[q] + toff] : 0.0f;
    }
}

// The last range's piece p: its rows of the tile's ranges summed in order (as
// gm_sum_partials) into `cs`, rounded to the product's type.
template <int BM, int BN>
PW_FN void gm_sg_sum_piece(const gm_program& g, int64_t tile, int p, float* cs, int tid) {
    typedef GmSgSmem<BM, BN> L;
    const int64_t tiles = g.batches * g.tiles_m * g.tiles_n;
    for (int e = tid; e < GM_SG_PIECE * BN / 4; e += GM_SG_THREADS) {
        const int r = e / (BN / 4), c = (e - r * (BN / 4)) * 4;
        float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        for (int sp = 0; sp < g.splits; ++sp) {
            const float4 v = *(const float4*)(g.partial + (sp * tiles + tile) * (BM * BN) +
                                              (p * GM_SG_PIECE + r) * BN + c);
            sum.x += v.x;
            sum.y += v.y;
            sum.z += v.z;
            sum.w += v.w;
        }
        float* o = cs + r * L::LD + c;
        o[0] = gm_round(g.acc_round, sum.x);
        o[1] = gm_round(g.acc_round, sum.y);
        o[2] = gm_round(g.acc_round, sum.z);
        o[3] = gm_round(g.acc_round, sum.w);
    }
}

// The end of the tile: each piece of 64 rows (sub-tile row i of every thread) goes into
// shared memory, rounded, and through the epilogue.  Where k is split the thread's outputs
// go to the workspace unrounded (gm_store_partial's layout) instead, and the tile's last
// range (gm_split_last) sums the ranges' pieces from there.
template <int BM, int BN, int S, class Prog>
PW_FN void gm_sg_finish(const gm_program& g, int64_t tile, const float (&acc)[BM / 16][BN / 16],
                        float* cs, int64_t batch, int64_t m0, int64_t n0, int tid) {
    typedef GmSgSmem<BM, BN> L;
    constexpr int TM = BM / 16, TN = BN / 16;
    const int tx = tid % 16, ty = tid / 16;
    const bool split = g.splits > 1;
    if (split) {
        float* dst = g.partial + (int64_t)blockIdx.x * (BM * BN);
PW_UNROLL
        for (int i = 0; i < TM; ++i)
PW_UNROLL
            for (int j = 0; j < TN / 4; ++j)
                *(float4*)(dst + ((i / 4) * 64 + ty * 4 + i % 4) * BN + j * 64 + tx * 4) =
                    make_float4(acc[i][4 * j], acc[i][4 * j + 1], acc[i][4 * j + 2],
                                acc[i][4 * j + 3]);
        if (!gm_split_last<GM_SG_THREADS, 0>(g, tile, tid)) return;
    }
PW_UNROLL
    for (int p = 0; p < BM / GM_SG_PIECE; ++p) {
        __syncthreads(); // the stages (or the last piece) are read: cs reuses them
        if (split) {
            gm_sg_sum_piece<BM, BN>(g, tile, p, cs, tid);
        } else {
PW_UNROLL
            for (int r = 0; r < 4; ++r)
PW_UNROLL
                for (int j = 0; j < TN / 4; ++j) {
                    const float* a = acc[p * 4 + r] + 4 * j;
                    *(float4*)(cs + (ty * 4 + r) * L::LD + j * 64 + tx * 4) =
                        make_float4(gm_round(g.acc_round, a[0]), gm_round(g.acc_round, a[1]),
                                    gm_round(g.acc_round, a[2]), gm_round(g.acc_round, a[3]));
                }
        }
        __syncthreads();
        gm_tile_epilogue<GM_SG_PIECE, BN, GM_SG_THREADS, S, Prog>(
            g, cs, L::LD, batch, m0 + p * GM_SG_PIECE, n0, tid);
    }
}

// A stage's multiply-adds: the thread's rows of a and columns of b at each k, 16 bytes a
// read, into its outputs (k in order).
template <int BM, int BN>
PW_FN void gm_sg_stage(const float* as, const float* bs, int tid,
                       float (&acc)[BM / 16][BN / 16]) {
    typedef GmSgSmem<BM, BN> L;
    constexpr int TM = BM / 16, TN = BN / 16;
    const int tx = tid % 16, ty = tid / 16;
PW_UNROLL
    for (int kk = 0; kk < GM_SG_K; ++kk) {
        float av[TM], bv[TN];
PW_UNROLL
        for (int i = 0; i < TM / 4; ++i) {
            const float4 v = *(const float4*)(as + kk * L::LA + i * 64 + ty * 4);
            av[4 * i] = v.x;
            av[4 * i + 1] = v.y;
            av[4 * i + 2] = v.z;
            av[4 * i + 3] = v.w;
        }
PW_UNROLL
        for (int j = 0; j < TN / 4; ++j) {
            const float4 v = *(const float4*)(bs + kk * L::LB + j * 64 + tx * 4);
            bv[4 * j] = v.x;
            bv[4 * j + 1] = v.y;
            bv[4 * j + 2] = v.z;
            bv[4 * j + 3] = v.w;
        }
PW_UNROLL
        for (int i = 0; i < TM; ++i)
PW_UNROLL
            for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
}

// One BM x BN tile (or, where k is split, one of its k ranges).  AK / BK: k is a's /
// b's contiguous dim (else m / n); CONV: GM_CONV_FPROP, a gathered from x (AK unused).
template <int BM, int BN, bool AK, bool BK, int CONV, int S, class Prog>
PW_FN void gm_sgemm(const gm_program& g) {
    typedef GmSgSmem<BM, BN> L;
    constexpr int TM = BM / 16, TN = BN / 16, E = BM / 32;
    static_assert(BM % 64 == 0 && BN % 64 == 0 && BM <= 128 && BN <= 128, "64 or 128");
    __shared__ __attribute__((aligned(16))) float smem[L::FLOATS];
    const GmUnit u = gm_unit_of<GM_SG_K>(g, blockIdx.x);
    int64_t batch;
    int tm, tn;
    gm_tile_of(g, u.tile, &batch, &tm, &tn);
    const int64_t m0 = (int64_t)tm * BM, n0 = (int64_t)tn * BN;
    const int tid = threadIdx.x;
    float acc[TM][TN];
PW_UNROLL
    for (int i = 0; i < TM; ++i)
PW_UNROLL
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
    int64_t a_off, b_off;
    gm_batch_offsets(g, batch, &a_off, &b_off);
    const float* a = (const float*)g.a + a_off;
    const float* b = (const float*)g.b + b_off;

    GmConvRows<E> rows; // a convolution's: the thread's rows and column of a
    GmConvCol col;
    if (CONV) {
PW_UNROLL
        for (int q = 0; q < E; ++q) gm_conv_row<CONV>(g, m0 + tid % 32 + 32 * q, true, q, rows);
        gm_conv_col_init(g, (uint32_t)(u.kt0 * GM_SG_K + tid / 32), col);
    }
    float4 ra[GmSgChunks<BM>::Q], rb[GmSgChunks<BN>::Q];
    float rc[E];
    auto fetch = [&](int kt) { // stage kt's global loads into registers
        const int64_t k0 = (int64_t)kt * GM_SG_K;
        if (CONV) {
            gm_sg_gather<E>(g, a, rows, col, rc);
            if (g.taps_inner) gm_sg_col_next_taps(g, col);
            else gm_conv_col_next<GM_SG_K>(g, col);
        } else {
            gm_sg_fetch<BM, AK>(a, m0, k0, g.m, g.k, g.a_sm, g.a_sk, tid, ra);
        }
        gm_sg_fetch<BN, BK>(b, n0, k0, g.n, g.k, g.b_sn, g.b_sk, tid, rb);
    };
    auto put = [&](float* st) { // ... into a stage's buffers
        if (CONV) {
PW_UNROLL
            for (int q = 0; q < E; ++q) st[(tid / 32) * L::LA + tid % 32 + 32 * q] = rc[q];
        } else {
            gm_sg_put<BM, AK, L::LA>(st, tid, ra);
        }
        gm_sg_put<BN, BK, L::LB>(st + GM_SG_K * L::LA, tid, rb);
    };

    const int kt_count = u.kt1 - u.kt0;
    if (kt_count > 0) {
        fetch(u.kt0);
        put(smem);
    }
    __syncthreads();
    for (int kt = 0; kt < kt_count; ++kt) {
        const float* as = smem + (kt & 1) * L::STAGE;
        const float* bs = as + GM_SG_K * L::LA;
        const bool more = kt + 1 < kt_count;
        if (more) fetch(u.kt0 + kt + 1);
        gm_sg_stage<BM, BN>(as, bs, tid, acc);
        if (more) put(smem + ((kt + 1) & 1) * L::STAGE);
        __syncthreads();
    }
    gm_sg_finish<BM, BN, S, Prog>(g, u.tile, acc, smem, batch, m0, n0, tid);
}

#endif
