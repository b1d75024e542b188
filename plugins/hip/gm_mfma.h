// gm_mfma.h — the matmul kernel on AMD's matrix cores (GM_MFMA, gemm_choice.c): fp16 or
// bf16 a and b alike, fp32 accumulators, through v_mfma_f32_32x32x8f16 and
// v_mfma_f32_32x32x8bf16_1k (gfx90a, gfx940 and their kin: wave64).  Included by
// gm_kernels.h for hiprtc, and by the host emulation (emulate_mfma.cpp), which supplies
// its own model of the instruction (GM_MFMA_HOST_MODEL) and runs this code on host threads.
// Checked only by compiling for gfx90a / gfx940 and by that host model: never run on an
// AMD GPU (docs/gpu.md).
//
// A block of 4 wavefronts (256 threads) computes a BM x BN tile (64 x 128), the waves 2 x 2,
// each (BM / 2) x (BN / 2) of it in 32 x 32 blocks, one instruction a block per 8 of k.
// k goes GM_MF_K at a time through two stages in LDS, a and b both stored k-contiguous
// (a[m][k], b[n][k], rows padded to 80 bytes), so that a lane's 4 operand elements are one
// 8-byte read: the next stage's 16-byte global loads are issued into registers before this
// stage's instructions and stored after them, one barrier a stage.  An operand whose
// contiguous dim is k is stored as loaded; one whose contiguous dim is m (n) is stored
// transposed, 8 elements one by one.  Operands are 16-byte aligned with their contiguous
// dim a multiple of 8 (gemm_choice.c, hipe_gm_mfma_ok; the pointers at enqueue), so a
// chunk lies wholly inside the matrix or wholly outside (zero-filled).  Matmuls only (a
// convolution takes the general kernel on ROCm).  The fp32 tile then goes through LDS to
// the shared epilogue and split-k (gm_finish_tile).
//
// The instruction's lanes (AMD's matrix instruction calculator, 32x32x8, one block): lane
// l holds a[i = l % 32][k = 4 (l / 32) + e] and b[k = 4 (l / 32) + e][j = l % 32] as
// elements e = 0..3 of its operands; its 16 results d[v] are c[8 (v / 4) + 4 (l / 32) +
// v % 4][l % 32].
#ifndef HIPDNN_HIP_GM_MFMA_H
#define HIPDNN_HIP_GM_MFMA_H

#define GM_MF_THREADS 256
#define GM_MF_K 32   /* k of a stage: four instructions */
#define GM_MF_LDK 40 /* elements a row of a stage in LDS (80 bytes: 16-byte chunks stay aligned) */

#ifndef GM_MFMA_HOST_MODEL
typedef float gm_mf_acc __attribute__((ext_vector_type(16)));
typedef _Float16 gm_mf_h4 __attribute__((ext_vector_type(4)));
typedef short gm_mf_s4 __attribute__((ext_vector_type(4)));

// acc += a b over one 32 x 32 x 8 block (operands as 4 16-bit elements in 2 words).
template <int DT>
PW_FN void gm_mf_op(gm_mf_acc& acc, uint32_t a0, uint32_t a1, uint32_t b0, uint32_t b1) {
    const unsigned long long a = a0 | (unsigned long long)a1 << 32;
    const unsigned long long b = b0 | (unsigned long long)b1 << 32;
    if (DT == PW_BF16)
        acc = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(__builtin_bit_cast(gm_mf_s4, a),
                                                        __builtin_bit_cast(gm_mf_s4, b), acc, 0,
                                                        0, 0);
    else
        acc = __builtin_amdgcn_mfma_f32_32x32x8f16(__builtin_bit_cast(gm_mf_h4, a),
                                                    __builtin_bit_cast(gm_mf_h4, b), acc, 0, 0, 0);
}
#endif

// LDS: two stages of a (BM rows) and b (BN rows), or the fp32 tile (BM rows of BN + 4).
template <int BM, int BN>
struct GmMfSmem {
    static constexpr int A = BM * GM_MF_LDK * 2, B = BN * GM_MF_LDK * 2; // bytes a stage
    static constexpr int PIPE = 2 * (A + B);
    static constexpr int LD = BN + 4;
    static constexpr int TILE = BM * LD * 4;
    static constexpr int BYTES = PIPE > TILE ? PIPE : TILE;
};

// One operand's stage, R rows (m or n) by GM_MF_K, in 16-byte chunks, Q a thread.
template <int R>
struct GmMfChunks {
    static constexpr int CHUNKS = R * GM_MF_K / 8, Q = (CHUNKS + GM_MF_THREADS - 1) / GM_MF_THREADS;
};

// A thread's chunks of one operand's stage from global memory into registers (zeros
// outside the matrix): KC, rows of R along k; else rows of GM_MF_K along the operand's
// contiguous dim.
template <int R, bool KC>
PW_FN void gm_mf_load(uint4 (&v)[GmMfChunks<R>::Q], const unsigned short* base, int64_t r0,
                      int64_t k0, int64_t rows, int64_t ks, int64_t s_r, int64_t s_k, int tid) {
    constexpr int C = KC ? GM_MF_K / 8 : R / 8; // chunks a row
PW_UNROLL
    for (int q = 0; q < GmMfChunks<R>::Q; ++q) {
        const int c = tid + q * GM_MF_THREADS;
        const int row = c / C, col = c - (c / C) * C;
        const int64_t r = KC ? r0 + row : r0 + (int64_t)col * 8;
        const int64_t k = KC ? k0 + (int64_t)col * 8 : k0 + row;
        v[q] = make_uint4(0u, 0u, 0u, 0u);
        if (c < GmMfChunks<R>::CHUNKS && r < rows && k < ks)
            v[q] = *(const uint4*)(base + r * s_r + k * s_k);
    }
}

// ... and from registers into the stage at `dst` (R rows of GM_MF_LDK elements, k
// contiguous).
template <int R, bool KC>
PW_FN void gm_mf_store(unsigned short* dst, const uint4 (&v)[GmMfChunks<R>::Q], int tid) {
    constexpr int C = KC ? GM_MF_K / 8 : R / 8;
PW_UNROLL
    for (int q = 0; q < GmMfChunks<R>::Q; ++q) {
        const int c = tid + q * GM_MF_THREADS;
        if (c >= GmMfChunks<R>::CHUNKS) break;
        const int row = c / C, col = c - (c / C) * C;
        if (KC) {
            *(uint4*)(dst + row * GM_MF_LDK + col * 8) = v[q];
        } else { // 8 rows of the tile at one k
            const uint32_t w[4] = {v[q].x, v[q].y, v[q].z, v[q].w};
PW_UNROLL
            for (int e = 0; e < 8; ++e)
                dst[(col * 8 + e) * GM_MF_LDK + row] = (unsigned short)(w[e / 2] >> (16 * (e % 2)));
        }
    }
}

// A lane's operand for the 32-row block at `rows` of a stage (a's m or b's n), k-step kk:
// row l % 32, elements 4 (l / 32) .. + 3 of the step's 8.
PW_FN void gm_mf_frag(const unsigned short* rows, int kk, int lane, uint32_t* w) {
    const uint32_t* p = (const uint32_t*)(rows + (lane % 32) * GM_MF_LDK + kk + 4 * (lane / 32));
    w[0] = p[0];
    w[1] = p[1];
}

// One BM x BN tile, 4 waves of 64 lanes (64 x 128: 128 x 128's fp32 tile would pass the
// 64 KB of LDS a block has).
template <int DT, bool AK, bool BK, int BM, int BN, int S, class Prog>
PW_FN void gm_mfma(const gm_program& g, unsigned char* smem) {
    constexpr int MT = BM / 2 / 32, NT = BN / 2 / 32; // 32 x 32 blocks of a wave
    typedef GmMfSmem<BM, BN> L;
    static_assert(L::BYTES + 64 <= 65536, "the stages or the tile fit in LDS");
    const GmUnit u = gm_unit_of<GM_MF_K>(g, blockIdx.x);
    int64_t batch;
    int tm, tn;
    gm_tile_of(g, u.tile, &batch, &tm, &tn);
    const int64_t m0 = (int64_t)tm * BM, n0 = (int64_t)tn * BN;
    int64_t a_off, b_off;
    gm_batch_offsets(g, batch, &a_off, &b_off);
    const unsigned short* a = (const unsigned short*)g.a + a_off;
    const unsigned short* b = (const unsigned short*)g.b + b_off;
    const int tid = threadIdx.x, lane = tid % 64, wave = tid / 64;
    const int wm0 = (wave / 2) * (BM / 2), wn0 = (wave % 2) * (BN / 2);
    unsigned short* stage = (unsigned short*)smem;
    uint4 ra[GmMfChunks<BM>::Q], rb[GmMfChunks<BN>::Q];
    auto load = [&](int kt) {
        const int64_t k0 = (int64_t)kt * GM_MF_K;
        gm_mf_load<BM, AK>(ra, a, m0, k0, g.m, g.k, g.a_sm, g.a_sk, tid);
        gm_mf_load<BN, BK>(rb, b, n0, k0, g.n, g.k, g.b_sn, g.b_sk, tid);
    };
    auto store = [&](int slot) {
        unsigned short* as = stage + slot * (L::A + L::B) / 2;
        gm_mf_store<BM, AK>(as, ra, tid);
        gm_mf_store<BN, BK>(as + L::A / 2, rb, tid);
    };

    gm_mf_acc acc[MT][NT];
PW_UNROLL
    for (int i = 0; i < MT; ++i)
PW_UNROLL
        for (int j = 0; j < NT; ++j)
PW_UNROLL
            for (int v = 0; v < 16; ++v) acc[i][j][v] = 0.0f;
    if (u.kt0 < u.kt1) {
        load(u.kt0);
        store(0);
    }
    __syncthreads();
    for (int kt = u.kt0; kt < u.kt1; ++kt) {
        const int slot = (kt - u.kt0) & 1;
        const bool more = kt + 1 < u.kt1;
        if (more) load(kt + 1); // in flight during this stage's instructions
        const unsigned short* as = stage + slot * (L::A + L::B) / 2;
        const unsigned short* bs = as + L::A / 2;
PW_UNROLL
        for (int kk = 0; kk < GM_MF_K; kk += 8) {
            uint32_t fa[MT][2], fb[NT][2];
PW_UNROLL
            for (int i = 0; i < MT; ++i) gm_mf_frag(as + (wm0 + 32 * i) * GM_MF_LDK, kk, lane, fa[i]);
PW_UNROLL
            for (int j = 0; j < NT; ++j) gm_mf_frag(bs + (wn0 + 32 * j) * GM_MF_LDK, kk, lane, fb[j]);
PW_UNROLL
            for (int i = 0; i < MT; ++i)
PW_UNROLL
                for (int j = 0; j < NT; ++j)
                    gm_mf_op<DT>(acc[i][j], fa[i][0], fa[i][1], fb[j][0], fb[j][1]);
        }
        if (more) store(slot ^ 1); // its readers finished at the last barrier
        __syncthreads();
    }

    float* tile = (float*)smem; // every wave is past the last stage's reads
    const int rnd = gm_tile_round(g);
PW_UNROLL
    for (int i = 0; i < MT; ++i)
PW_UNROLL
        for (int j = 0; j < NT; ++j)
PW_UNROLL
            for (int v = 0; v < 16; ++v) {
                const int r = wm0 + 32 * i + 8 * (v / 4) + 4 * (lane / 32) + v % 4;
                tile[r * L::LD + wn0 + 32 * j + lane % 32] = gm_round(rnd, acc[i][j][v]);
            }
    __syncthreads();
    gm_finish_tile<BM, BN, GM_MF_THREADS, S, Prog>(g, blockIdx.x, u.tile, tile, L::LD, batch, m0,
                                                   n0, tid);
}

#endif
