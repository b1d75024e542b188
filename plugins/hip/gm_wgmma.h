// gm_wgmma.h — the matmul kernel for NVIDIA sm_90 (H100, H200): wgmma on the tensor cores,
// fed by the tensor memory accelerator (TMA) through an mbarrier pipeline, warp-specialised.
//
// A block of 128 + 2 BM threads computes one BM x BN tile of the product (BM 128, or 64 for
// a matmul of few rows, an LLM's decode: gemm_choice.c):
//   warpgroup 0, the producer: one thread issues each stage's TMA copies of a's and b's
//     tiles (BM x 64 and BN x 64), STAGES stages deep, each completing on the stage's
//     "full" mbarrier; the warpgroup gives most of its registers back (setmaxnreg).  For
//     a convolution the whole warpgroup gathers a's tile (implicit GEMM) with cp.async, b's
//     for a weight gradient;
//   warpgroups 1 .. BM / 64, the consumers: 64 rows x BN columns each, wgmma.m64nBNk16 reading
//     both operands from shared memory through descriptors, fp32 accumulators in
//     registers; a stage is handed back (its "empty" mbarrier) once the wgmmas that read it
//     are done.
// With 128 x 64, 128 x 128 and the 64-row tiles the grid is persistent (a block a multiprocessor, each
// walking tiles) and the product's tile has its own buffer, so one tile's epilogue
// overlaps the next one's loads; the 128 x 256 tile's fp32 product needs the pipeline's
// buffers, so there a block computes one tile.
// Tiles land in shared memory in the 128-byte-swizzled layout wgmma reads (the tensor maps'
// SWIZZLE_128B; each stage 1024-byte aligned): an operand whose contiguous dim is K is read
// K-major, one whose contiguous dim is M or N transposed (wgmma's tnsp flags), in boxes of
// 64 of its rows.  TMA fills what lies outside a matrix with zeros, so ragged M, N and K
// need no masks.  Then the consumers put the tile in shared memory (the pipeline's
// buffers, free by then) and run the epilogue over it as gm_mma does.
//
// With the product's k split (gm_program.h), blocks take (range, tile) units, each writing
// its partial tile to the workspace; a tile's last range to arrive sums them and runs the
// epilogue (gm_finish_tile), in the same launch.
// The tensor maps (gm_tma) are rank 5: the matrix's two dims, contiguous first, and up to
// three batch dims (size 1 where the operand is broadcast); gemm_program.c encodes them at
// enqueue.  Compiled for sm_90a only (jit.hip's target for compute capability 9.0).
// The 64-row tile: a's TMA box 64 rows, one consumer warpgroup, the stages' a halved (so
// more of them); matmuls of fp16 / bf16 only (a convolution's and TF32's gathering
// producers are laid out for 128 rows), and no setmaxnreg (one consumer: 256 threads at
// up to 255 registers fit the register file).
#ifndef HIPDNN_HIP_GM_WGMMA_H
#define HIPDNN_HIP_GM_WGMMA_H

#define GM_WG_BM 128 /* the tile's rows (gm_wgmma_tile's BM: 64 for the 64-row tile) */
#define GM_WG_BK 64 /* k of a stage: one 128-byte swizzle row of 16-bit elements */

// k of a stage of type DT: one 128-byte swizzle row, 64 16-bit elements or 32 fp32 ones
// (read as TF32); k of one wgmma: 16 or 8.  Either way a wgmma's k is 32 bytes of a row.
template <int DT> struct GmWgK {
    static constexpr int STEP = DT == PW_F32 ? 32 : GM_WG_BK;
    static constexpr int MMA = DT == PW_F32 ? 8 : 16;
};

// An element of type DT as the gathers copy it: its bits.
template <int DT> struct GmWgElem {
    typedef unsigned short T;
};
template <> struct GmWgElem<PW_F32> {
    typedef float T;
};
#define GM_WG_THREADS(BM) (128 + 2 * (BM)) /* the producer warpgroup, a consumer 64 rows */
#define GM_WG_BOX 8192 /* bytes of a 64-row box of a stage: 64 x 128 bytes */

template <int BN, int STAGES, bool PERSIST, int BM = GM_WG_BM>
struct GmWgSmem {
    static constexpr int A = BM * GM_WG_BK * 2, B = BN * GM_WG_BK * 2;
    static constexpr int STAGE = A + B;
    static constexpr int LD = BN + 4; // floats a row of the product's tile
    static constexpr int TILE = BM * LD * 4;
    static constexpr int PIPE = STAGES * STAGE;
    static constexpr int TILE_AT = PERSIST ? PIPE : 0; // its own buffer, or the pipeline's
    // + 1024: the dynamic buffer is aligned up to the swizzle's 1024-byte period
    static constexpr int BYTES = (PERSIST ? PIPE + TILE : PIPE > TILE ? PIPE : TILE) + 1024;
};

// ---- mbarriers and TMA ----------------------------------------------------------------------

PW_FN void gm_mbar_init(uint32_t bar, int count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
}

PW_FN void gm_mbar_wait(uint32_t bar, uint32_t parity) {
    asm volatile("{\n.reg .pred done;\nWAIT:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra WAIT;\n}\n" ::"r"(bar), "r"(parity) : "memory");
}

PW_FN void gm_mbar_expect(uint32_t bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
                 : "memory");
}

PW_FN void gm_mbar_arrive(uint32_t bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// One box of a rank-5 tensor map to shared memory at dst, completing on bar.
PW_FN void gm_tma_load(uint32_t dst, const void* map, uint32_t bar, int c0, int c1, const int* cb) {
    asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes "
                 "[%0], [%1, {%2, %3, %4, %5, %6}], [%7];\n" ::"r"(dst),
                 "l"(map), "r"(c0), "r"(c1), "r"(cb[0]), "r"(cb[1]), "r"(cb[2]), "r"(bar)
                 : "memory");
}

// ---- wgmma ----------------------------------------------------------------------------------

// A shared-memory matrix descriptor, 128-byte swizzle: lbo / sbo the byte offsets between
// 64-element groups along M|N (transposed operands) and between 8-row groups.
PW_FN uint64_t gm_wg_desc(uint32_t addr, uint32_t lbo, uint32_t sbo) {
    return (uint64_t)((addr & 0x3FFFF) >> 4) | ((uint64_t)(lbo >> 4) << 16) |
           ((uint64_t)(sbo >> 4) << 32) | ((uint64_t)1 << 62);
}

#define GM_F8(d, i)                                                                            \
    "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
        "+f"(d[i + 6]), "+f"(d[i + 7])
#define GM_WG_D32                                                                              \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                   \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define GM_WG_D64                                                                              \
    GM_WG_D32 ", "                                                                             \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "         \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define GM_WG_D128                                                                             \
    GM_WG_D64 ", "                                                                             \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "         \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "         \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, "   \
    "%111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, "     \
    "%125, %126, %127"
#define GM_F32(d) GM_F8(d, 0), GM_F8(d, 8), GM_F8(d, 16), GM_F8(d, 24)
#define GM_F64(d) GM_F32(d), GM_F8(d, 32), GM_F8(d, 40), GM_F8(d, 48), GM_F8(d, 56)
#define GM_F128(d) GM_F64(d), GM_F8(d, 64), GM_F8(d, 72), GM_F8(d, 80), GM_F8(d, 88), \
    GM_F8(d, 96), GM_F8(d, 104), GM_F8(d, 112), GM_F8(d, 120)

// One wgmma of shape m64n<N>k8 on fp32 read as TF32 (the low 13 bits of each mantissa
// ignored): both operands K-major, so no transpose flags (the PTX ISA has them for 16-bit
// types only).
#define GM_WGMMA_TF32_ASM(N, LIST, ACC, DA, DB)                                                \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"                                   \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k8.f32.tf32.tf32 {" LIST               \
                 "}, %" #DA ", %" #DB ", p, 1, 1;\n}\n"                                         \
                 : ACC : "l"(da), "l"(db))

// One wgmma of shape m64n<N>k16 on type T: its N / 2 accumulators (LIST, ACC) are operands
// 0 .. N / 2 - 1, then the two descriptors and the two transpose flags (DA .. TB, their
// operand numbers).
#define GM_WGMMA_ASM(N, T, LIST, ACC, DA, DB, TA_, TB_)                                        \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"                                   \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." T "." T " {" LIST            \
                 "}, %" #DA ", %" #DB ", p, 1, 1, %" #TA_ ", %" #TB_ ";\n}\n"                  \
                 : ACC : "l"(da), "l"(db), "n"(TA), "n"(TB))

// d += a * b over one k16 step (scale-d 1: the accumulators keep what they hold); BN / 2
// accumulators a thread; TA / TB: that operand is transposed (M|N-major).
template <int BN, int DT, int TA, int TB>
PW_FN void gm_wgmma(float* d, uint64_t da, uint64_t db) {
    if (DT == PW_F32) { // k8, TF32 (TA = TB = 0: gemm_choice.c plans no other)
        if (BN == 64)
            GM_WGMMA_TF32_ASM(64, GM_WG_D32, GM_F32(d), 32, 33);
        else if (BN == 128)
            GM_WGMMA_TF32_ASM(128, GM_WG_D64, GM_F64(d), 64, 65);
        else
            GM_WGMMA_TF32_ASM(256, GM_WG_D128, GM_F128(d), 128, 129);
    } else if (BN == 64 && DT == PW_BF16)
        GM_WGMMA_ASM(64, "bf16", GM_WG_D32, GM_F32(d), 32, 33, 34, 35);
    else if (BN == 64)
        GM_WGMMA_ASM(64, "f16", GM_WG_D32, GM_F32(d), 32, 33, 34, 35);
    else if (BN == 128 && DT == PW_BF16)
        GM_WGMMA_ASM(128, "bf16", GM_WG_D64, GM_F64(d), 64, 65, 66, 67);
    else if (BN == 128)
        GM_WGMMA_ASM(128, "f16", GM_WG_D64, GM_F64(d), 64, 65, 66, 67);
    else if (DT == PW_BF16)
        GM_WGMMA_ASM(256, "bf16", GM_WG_D128, GM_F128(d), 128, 129, 130, 131);
    else
        GM_WGMMA_ASM(256, "f16", GM_WG_D128, GM_F128(d), 128, 129, 130, 131);
}

// Keeps the compiler from moving the accumulators while wgmmas in flight own them.
template <int N> PW_FN void gm_wg_fence_acc(float* d) {
PW_UNROLL
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// The batch coordinates of `batch` in each operand's tensor map (innermost batch dim
// first; 0 along a dim the operand is broadcast over).
PW_FN void gm_wg_batch(const gm_program& g, int64_t batch, int* ca, int* cb) {
PW_UNROLL
    for (int j = 0; j < 3; ++j) {
        const int d = g.nbatch - 1 - j;
        ca[j] = cb[j] = 0;
        if (d < 0) continue;
        const int64_t q = batch / g.bdims[d];
        const int idx = (int)(batch - q * g.bdims[d]);
        batch = q;
        ca[j] = g.a_bs[d] ? idx : 0;
        cb[j] = g.b_bs[d] ? idx : 0;
    }
}

// What a block's threads share: its pipeline's buffers and barriers, and the walk.
struct GmWgBlock {
    uint32_t base;  // the stages' buffers (1024-byte aligned, shared-space address)
    uint32_t full;  // the stages' full barriers, 8 bytes each, then their empty ones
    uint32_t empty;
    int64_t units;  // of the launch (gm_units); a block takes blockIdx.x, + gridDim.x, ...
};

// What a block's unit `unit` is: its k steps (u), batch and tile coordinates.
struct GmWgAt {
    GmUnit u;
    int64_t batch;
    int tm, tn;
};

template <int KT = GM_WG_BK>
PW_FN GmWgAt gm_wg_at(const gm_program& g, int64_t unit) {
    GmWgAt w;
    w.u = gm_unit_of<KT>(g, unit);
    gm_tile_of(g, w.u.tile, &w.batch, &w.tm, &w.tn);
    return w;
}

// The producer's side of k step `it` (counted across a block's tiles) of a tile at
// (m0, n0): wait until the consumers have handed the stage back (its use `it / STAGES`
// before this one), then have TMA copy a's and b's tiles into it.
template <bool AK, bool BK, int BN, int STAGES, int BM>
PW_FN void gm_wg_produce(const gm_tma& t, const GmWgBlock& blk, int it, int m0, int n0, int k0,
                         const int* ca, const int* cb) {
    typedef GmWgSmem<BN, STAGES, false, BM> L;
    const int s = it % STAGES;
    if (it >= STAGES) gm_mbar_wait(blk.empty + 8 * s, (uint32_t)((it / STAGES - 1) & 1));
    const uint32_t as = blk.base + s * L::STAGE, bs = as + L::A, bar = blk.full + 8 * s;
    gm_mbar_expect(bar, L::STAGE);
    if (AK)
        gm_tma_load(as, &t.a, bar, k0, m0, ca);
    else
PW_UNROLL
        for (int j = 0; j < BM / 64; ++j)
            gm_tma_load(as + j * GM_WG_BOX, &t.a, bar, m0 + 64 * j, k0, ca);
    if (BK)
        gm_tma_load(bs, &t.b, bar, k0, n0, cb);
    else
PW_UNROLL
        for (int j = 0; j < BN / 64; ++j)
            gm_tma_load(bs + j * GM_WG_BOX, &t.b, bar, n0 + 64 * j, k0, cb);
}

// The producer of a matmul: one thread issues every copy of the block's tiles, k steps of
// KT elements (GmWgK).
template <int KT, bool AK, bool BK, int BN, int STAGES, int BM>
PW_FN void gm_wg_load(const gm_program& g, const gm_tma& t, const GmWgBlock& blk) {
    int it = 0;
    for (int64_t unit = blockIdx.x; unit < blk.units; unit += gridDim.x) {
        const GmWgAt w = gm_wg_at<KT>(g, unit);
        int ca[3], cb[3];
        gm_wg_batch(g, w.batch, ca, cb);
        for (int kt = w.u.kt0; kt < w.u.kt1; ++kt, ++it)
            gm_wg_produce<AK, BK, BN, STAGES, BM>(t, blk, it, w.tm * BM, w.tn * BN, kt * KT,
                                                  ca, cb);
    }
}

// b's tile of k step k0 of a convolution by TMA: w's [n, k] rows (BK: KRSC, k contiguous;
// a grouped one's map has the group as its batch dim); a data gradient's w [k_out, c] of
// the step's one filter tap (GM_WG_BK divides the channels k_out, gemm_program.c checks),
// through a map of dims (c, k_out, taps innermost first) in boxes of 64 c, k_out over all
// the filters (a group's from batch * cin: a box never crosses into the next group's).
template <bool BK, int BN>
PW_FN void gm_wg_conv_b(const gm_program& g, const gm_tma& t, uint32_t bs, uint32_t bar, int k0,
                        int n0, int64_t batch) {
    int cb[3] = {0, 0, 0};
    if (BK) {
        int ca[3];
        if (GM_GROUPED) gm_wg_batch(g, batch, ca, cb);
        gm_tma_load(bs, &t.b, bar, k0, n0, cb);
        return;
    }
    uint32_t f = (uint32_t)k0 / (uint32_t)g.cin;
    const int kc = k0 - (int)(f * (uint32_t)g.cin) + (GM_GROUPED ? (int)batch * (int)g.cin : 0);
PW_UNROLL
    for (int j = 0; j < GM_MAX_SPATIAL; ++j) {
        const int d = g.nsp - 1 - j;
        if (d < 0) continue;
        cb[j] = (int)(f % (uint32_t)g.ker[d]);
        f /= (uint32_t)g.ker[d];
    }
PW_UNROLL
    for (int j = 0; j < BN / 64; ++j) gm_tma_load(bs + j * GM_WG_BOX, &t.b, bar, n0 + 64 * j, kc, cb);
}

// The producer of a convolution, thread `tid` of its warpgroup: each gathers its chunks of
// a's tile (gm_load_conv_a; a group's channels from its batch offset; fp32 x for TF32, DT)
// and has their completion arrive on the stage's full barrier; thread 0 has TMA bring b's.
template <int DT, int CONV, bool BK, int BN, int STAGES>
PW_FN void gm_wg_gather(const gm_program& g, const gm_tma& t, const GmWgBlock& blk, int tid) {
    typedef GmWgSmem<BN, STAGES, false> L;
    typedef typename GmWgElem<DT>::T E;
    constexpr int KT = GmWgK<DT>::STEP;
    typedef GmConvA<GM_WG_BM, 128, KT, E> A;
    int it = 0;
    for (int64_t unit = blockIdx.x; unit < blk.units; unit += gridDim.x) {
        const GmWgAt w = gm_wg_at<KT>(g, unit);
        int64_t a_off = 0, b_off = 0;
        if (GM_GROUPED) gm_batch_offsets(g, w.batch, &a_off, &b_off);
        const E* x = (const E*)g.a + a_off;
        GmConvRows<A::Q> rows;
        gm_conv_rows<CONV, GM_WG_BM, 128, KT, E>(g, (int64_t)w.tm * GM_WG_BM, tid, rows);
        GmConvCol col;
        gm_conv_col_init(g, (uint32_t)(w.u.kt0 * KT + (tid % A::C) * A::V), col);
        for (int kt = w.u.kt0; kt < w.u.kt1; ++kt, ++it) {
            const int s = it % STAGES, k0 = kt * KT;
            if (it >= STAGES) gm_mbar_wait(blk.empty + 8 * s, (uint32_t)((it / STAGES - 1) & 1));
            const uint32_t as = blk.base + s * L::STAGE, bs = as + L::A, bar = blk.full + 8 * s;
            if (tid == 0) {
                gm_mbar_expect(bar, L::B);
                gm_wg_conv_b<BK, BN>(g, t, bs, bar, k0, w.tn * BN, w.batch);
            }
            gm_load_conv_a<CONV, GM_WG_BM, 128, KT, E>(as, g, x, rows, col, tid);
            gm_conv_col_next<KT>(g, col);
            asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar)
                         : "memory");
        }
    }
}

// The producer of a TF32 matmul whose b has n contiguous (wgmma reads TF32 K-major only),
// thread `tid` of its warpgroup: thread 0 has TMA bring a's tile (K-major), and every thread
// copies its share of b's BN x 32 tile one fp32 element at a time with cp.async (4 bytes,
// zeros outside the matrix), transposed into the K-major 128-byte-swizzled layout TMA would
// give (row n: 128 bytes of k, 16-byte chunk c at c ^ (n % 8)); consecutive threads read
// consecutive n (coalesced).  The copies complete on the stage's full barrier.
template <int BN, int STAGES>
PW_FN void gm_wg_tf32_bt(const gm_program& g, const gm_tma& t, const GmWgBlock& blk, int tid) {
    typedef GmWgSmem<BN, STAGES, false> L;
    constexpr int KT = GmWgK<PW_F32>::STEP;
    int it = 0;
    for (int64_t unit = blockIdx.x; unit < blk.units; unit += gridDim.x) {
        const GmWgAt w = gm_wg_at<KT>(g, unit);
        int ca[3], cb[3];
        gm_wg_batch(g, w.batch, ca, cb);
        int64_t a_off = 0, b_off = 0;
        gm_batch_offsets(g, w.batch, &a_off, &b_off);
        const float* b = (const float*)g.b + b_off;
        const int m0 = w.tm * GM_WG_BM, n0 = w.tn * BN;
        for (int kt = w.u.kt0; kt < w.u.kt1; ++kt, ++it) {
            const int s = it % STAGES, k0 = kt * KT;
            if (it >= STAGES) gm_mbar_wait(blk.empty + 8 * s, (uint32_t)((it / STAGES - 1) & 1));
            const uint32_t as = blk.base + s * L::STAGE, bs = as + L::A, bar = blk.full + 8 * s;
            if (tid == 0) {
                gm_mbar_expect(bar, L::A);
                gm_tma_load(as, &t.a, bar, k0, m0, ca);
            }
#pragma unroll 4
            for (int e = tid; e < BN * KT; e += 128) {
                const int nn = e % BN, kk = e / BN;
                const bool valid = n0 + nn < g.n && k0 + kk < g.k;
                const float* src = valid ? b + (int64_t)(k0 + kk) * g.b_sk + (n0 + nn) : b;
                asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(
                                 bs + gm_swz<8>(nn, kk >> 2) + (kk & 3) * 4),
                             "l"(src), "r"(valid ? 4 : 0));
            }
            asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar)
                         : "memory");
        }
    }
}

// The producer of a TF32 forward convolution whose x cannot be gathered 16 bytes at a time
// (NCHW; or w KCRS, its k (channel, taps) with the taps innermost), thread `tid` of its
// warpgroup: thread tid gathers row tid of a's tile (an output position: consecutive
// threads read consecutive positions, consecutive addresses in NCHW at stride 1), each of
// the stage's 32 elements with a 4-byte cp.async (zeros in the padding and past the
// matrix) into the K-major 128-byte-swizzled layout, by additions only (gm_kernels.h's
// element gather): its row's corner and the taps inside x once a tile; the stage's field
// elements once a stage, lane j of each warp stepping element j by 32 (gm_conv_col_add)
// into the warp's table `tab` (16-byte entries, or two to 16 bytes with MASK), which the
// warp's threads then read at one address (a broadcast).  Thread 0 has TMA bring b's tile
// (w, k contiguous).
template <bool MASK, int BN, int STAGES>
PW_FN void gm_wg_tf32_gather(const gm_program& g, const gm_tma& t, const GmWgBlock& blk, int tid,
                             int4* tab) {
    typedef GmWgSmem<BN, STAGES, false> L;
    constexpr int KT = GmWgK<PW_F32>::STEP, P = MASK ? 2 : 1; // table entries an int4
    const int lane = tid % 32;
    uint32_t at[GM_MAX_SPATIAL];
    gm_conv_tap_bits(g, at);
    GmConvCol step; // KT field elements in k's radix
    gm_conv_col_init(g, KT, step);
    uint32_t swz[KT / 4]; // row tid's 16-byte chunks in the stage's swizzled layout
PW_UNROLL
    for (int j = 0; j < KT / 4; ++j) swz[j] = gm_swz<8>(tid, j);
    int it = 0;
    for (int64_t unit = blockIdx.x; unit < blk.units; unit += gridDim.x) {
        const GmWgAt w = gm_wg_at<KT>(g, unit);
        int64_t a_off = 0, b_off = 0;
        if (GM_GROUPED) gm_batch_offsets(g, w.batch, &a_off, &b_off);
        const float* x = (const float*)g.a + a_off;
        GmConvRows<1> row;
        gm_conv_row<GM_CONV_FPROP>(g, (int64_t)w.tm * GM_WG_BM + tid, true, 0, row);
        // the row's corner in x (where it lies outside, never read) and the offset back to
        // its image's start (32 bits: gemm_choice.c keeps an image under 2^31 elements), an
        // address to name where nothing is read; opaque, so that the compiler does not fold
        // the corner's offset into each element's 64-bit arithmetic: an element's address
        // is one 32 x 32 + 64 multiply-add
        const float* corner;
        asm("mov.b64 %0, %1;\n" : "=l"(corner) : "l"(x + row.base[0]));
        const int32_t to_img = (int32_t)(row.image[0] - row.base[0]);
        const uint32_t bad = MASK ? gm_conv_row_bad(g, row, at) : 0u;
        GmConvCol col; // the lane's field element of each stage
        gm_conv_col_init(g, (uint32_t)(w.u.kt0 * KT + lane), col);
        for (int kt = w.u.kt0; kt < w.u.kt1; ++kt, ++it) {
            const int s = it % STAGES, k0 = kt * KT;
            if (it >= STAGES) gm_mbar_wait(blk.empty + 8 * s, (uint32_t)((it / STAGES - 1) & 1));
            const uint32_t as = blk.base + s * L::STAGE, bs = as + L::A, bar = blk.full + 8 * s;
            if (tid == 0) {
                gm_mbar_expect(bar, L::B);
                gm_wg_conv_b<true, BN>(g, t, bs, bar, k0, w.tn * BN, w.batch);
            }
            GmTapEntry e;
            gm_conv_tap_entry<MASK>(g, col, at, e);
            gm_conv_col_add(g, col, step);
            __syncwarp(); // the warp has read the last stage's table
            int32_t* mine = (int32_t*)tab + lane * (4 / P);
            mine[0] = e.off;
PW_UNROLL
            for (int i = 1; i < 4 / P; ++i) mine[i] = e.tap[i - 1];
            __syncwarp();
PW_UNROLL
            for (int q = 0; q < KT / P; ++q) {
                const int4 v = tab[q];
PW_UNROLL
                for (int h = 0; h < P; ++h) {
                    const int kk = q * P + h;
                    GmTapEntry ek;
                    ek.off = h ? v.z : v.x;
                    ek.tap[0] = h ? v.w : v.y;
                    ek.tap[1] = MASK ? 0 : v.z;
                    ek.tap[2] = MASK ? 0 : v.w;
                    const bool ok = gm_conv_tap_ok<MASK>(g, row, bad, ek);
                    // zeros where !ok (ignore-src), naming the image's start
                    asm volatile("{\n.reg .pred p;\nsetp.eq.u32 p, %2, 0;\n"
                                 "cp.async.ca.shared.global [%0], [%1], 4, p;\n}\n" ::"r"(
                                     as + swz[kk >> 2] + (kk & 3) * 4),
                                 "l"(corner + (ok ? ek.off : to_img)), "r"((uint32_t)ok));
                }
            }
            asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar)
                         : "memory");
        }
    }
}

// ... with the taps' validity as masks where the filter's sizes allow (gm_conv_tap_bits);
// each producer warp's table of a stage's field elements in static shared memory.
template <int BN, int STAGES>
PW_FN void gm_wg_tf32_conv(const gm_program& g, const gm_tma& t, const GmWgBlock& blk, int tid) {
    __shared__ int4 tables[4][GmWgK<PW_F32>::STEP];
    uint32_t at[GM_MAX_SPATIAL];
    if (gm_conv_tap_bits(g, at))
        gm_wg_tf32_gather<true, BN, STAGES>(g, t, blk, tid, tables[tid / 32]);
    else
        gm_wg_tf32_gather<false, BN, STAGES>(g, t, blk, tid, tables[tid / 32]);
}

// A weight gradient's column n of b (a receptive-field element): its channel, returned, and
// its filter tap's offset from o * stride in each dim, padding included.
PW_FN int64_t gm_wgrad_column(const gm_program& g, uint32_t n, int32_t* tap) {
    GmConvCol col; // the forward gather's decomposition of a field element
    gm_conv_col_init(g, n, col);
PW_UNROLL
    for (int d = 0; d < GM_MAX_SPATIAL; ++d) tap[d] = gm_conv_tap(g, col, d) - (int32_t)g.pad[d];
    return col.c; // x_sc is 1
}

// The producer of a weight gradient (gm_program.h), thread `tid` of its warpgroup: thread 0
// has TMA bring a's tile (dy as the matrix [k_out, positions], k_out contiguous: read
// transposed); every thread gathers its chunks of b's (x at a position's receptive-field
// element) with cp.async, in the layout TMA would give b read transposed (boxes of 64
// columns, rows of k, 128-byte swizzle).  A thread keeps one 8-channel column chunk for a
// whole tile (its filter tap worked out once) and Q rows RSTEP apart, whose positions
// (image, o...) it steps 64 at a time by mixed-radix addition, not division.  A group's x
// from its batch offset; its dy rows from batch * m in a map over all the filters (a
// tile's rows past m are the next group's, computed and not written).
template <int BN, int STAGES>
PW_FN void gm_wg_wgrad(const gm_program& g, const gm_tma& t, const GmWgBlock& blk, int tid) {
    typedef GmWgSmem<BN, STAGES, false> L;
    constexpr int CC = BN / 8, RSTEP = 128 / CC, Q = GM_WG_BK / RSTEP;
    const int cc = tid % CC, r0 = tid / CC;
    const int none[3] = {0, 0, 0};
    int32_t step[GM_MAX_SPATIAL]; // GM_WG_BK positions in the radix (o...) of dy's dims
    uint32_t step_img = GM_WG_BK;
PW_UNROLL
    for (int d = GM_MAX_SPATIAL - 1; d >= 0; --d) {
        const uint32_t od = d < g.nsp ? (uint32_t)g.osp[d] : 1u;
        step[d] = (int32_t)(step_img % od);
        step_img /= od;
    }
    int it = 0;
    for (int64_t unit = blockIdx.x; unit < blk.units; unit += gridDim.x) {
        const GmWgAt w = gm_wg_at(g, unit);
        int64_t a_off = 0, b_off = 0;
        if (GM_GROUPED) gm_batch_offsets(g, w.batch, &a_off, &b_off);
        const unsigned short* x = (const unsigned short*)g.b + b_off;
        const int m0 = w.tm * GM_WG_BM + (GM_GROUPED ? (int)w.batch * (int)g.m : 0);
        const uint32_t n = (uint32_t)(w.tn * BN + cc * 8);
        const bool n_ok = n < (uint32_t)g.n;
        int32_t tap[GM_MAX_SPATIAL];
        const int64_t c = gm_wgrad_column(g, n, tap);
        // each row's position at the unit's first k step, as (image, o...)
        uint32_t pos[Q], img[Q];
        int32_t o[Q][GM_MAX_SPATIAL];
PW_UNROLL
        for (int q = 0; q < Q; ++q) {
            pos[q] = (uint32_t)(w.u.kt0 * GM_WG_BK + r0 + q * RSTEP);
            uint32_t v = pos[q];
PW_UNROLL
            for (int d = GM_MAX_SPATIAL - 1; d >= 0; --d) {
                const uint32_t od = d < g.nsp ? (uint32_t)g.osp[d] : 1u;
                o[q][d] = (int32_t)(v % od);
                v /= od;
            }
            img[q] = v;
        }
        const uint32_t dst0 = (uint32_t)((cc / 8) * GM_WG_BOX);
        for (int kt = w.u.kt0; kt < w.u.kt1; ++kt, ++it) {
            const int s = it % STAGES, k0 = kt * GM_WG_BK;
            if (it >= STAGES) gm_mbar_wait(blk.empty + 8 * s, (uint32_t)((it / STAGES - 1) & 1));
            const uint32_t as = blk.base + s * L::STAGE, bs = as + L::A, bar = blk.full + 8 * s;
            if (tid == 0) {
                gm_mbar_expect(bar, L::A);
PW_UNROLL
                for (int j = 0; j < GM_WG_BM / 64; ++j)
                    gm_tma_load(as + j * GM_WG_BOX, &t.a, bar, m0 + 64 * j, k0, none);
            }
PW_UNROLL
            for (int q = 0; q < Q; ++q) {
                bool valid = n_ok && pos[q] < (uint32_t)g.k;
                int64_t off = c + (int64_t)img[q] * g.x_sn;
                int carry = 0;
PW_UNROLL
                for (int d = GM_MAX_SPATIAL - 1; d >= 0; --d) {
                    if (d >= g.nsp) continue;
                    const int32_t i = o[q][d] * (int32_t)g.stride[d] + tap[d];
                    valid = valid && i >= 0 && i < (int32_t)g.xsp[d];
                    off += (int64_t)i * g.x_ssp[d];
                    // the next step's position: + step, innermost digit first
                    o[q][d] += step[d] + carry;
                    carry = o[q][d] >= (int32_t)g.osp[d];
                    if (carry) o[q][d] -= (int32_t)g.osp[d];
                }
                img[q] += step_img + (uint32_t)carry;
                pos[q] += GM_WG_BK;
                tc_cp_async(bs + dst0 + gm_swz<8>(r0 + q * RSTEP, cc % 8), valid ? x + off : x,
                            valid);
            }
            asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar)
                         : "memory");
        }
    }
}

// Consumer warpgroup c's main loop over one tile's `steps` k steps: acc (64 rows x BN) +=
// a @ b, each stage handed back (one arrive by the warpgroup's `lead` thread) once its
// wgmmas are done.
template <int DT, bool AK, bool BK, int BN, int STAGES, bool GATHER, int BM>
PW_FN void gm_wg_mainloop(const GmWgBlock& blk, int steps, int c, bool lead, int& it, float* acc) {
    typedef GmWgSmem<BN, STAGES, false, BM> L;
    for (int kt = 0; kt < steps; ++kt, ++it) {
        const int s = it % STAGES;
        gm_mbar_wait(blk.full + 8 * s, (uint32_t)((it / STAGES) & 1));
        // a gathered tile was written by cp.async, the generic proxy: wgmma reads through
        // the async one
        if (GATHER) asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        const uint32_t as = blk.base + s * L::STAGE + c * GM_WG_BOX;
        const uint32_t bs = blk.base + s * L::STAGE + L::A;
        gm_wg_fence_acc<BN / 2>(acc);
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
        // a's and b's k step kk (16 elements, 8 of TF32): 32 bytes along a K-major row, two
        // 8-row groups (2048 bytes) down a transposed box
PW_UNROLL
        for (int kk = 0; kk < GmWgK<DT>::STEP / GmWgK<DT>::MMA; ++kk) {
            // TF32's a and b are K-major in shared memory whatever their layouts
            // (gm_wg_tf32_bt, gm_wg_tf32_conv)
            const uint64_t da = AK || DT == PW_F32 ? gm_wg_desc(as + kk * 32, 16, 1024)
                                                   : gm_wg_desc(as + kk * 2048, GM_WG_BOX, 1024);
            const uint64_t db = BK || DT == PW_F32 ? gm_wg_desc(bs + kk * 32, 16, 1024)
                                                   : gm_wg_desc(bs + kk * 2048, GM_WG_BOX, 1024);
            gm_wgmma<BN, DT, AK ? 0 : 1, BK ? 0 : 1>(acc, da, db);
        }
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        // at most this step's group in flight: the previous step's stage is read
        asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
        gm_wg_fence_acc<BN / 2>(acc);
        if (kt > 0 && lead) gm_mbar_arrive(blk.empty + 8 * ((it - 1) % STAGES));
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    gm_wg_fence_acc<BN / 2>(acc);
    if (steps > 0 && lead) gm_mbar_arrive(blk.empty + 8 * ((it - 1) % STAGES));
}

// Consumer thread ct's accumulators into the fp32 tile (ld floats a row), rounded as
// gm_tile_round says: wgmma's layout, rows warp * 16 + lane / 4 (+ 8), column pairs.
template <int BN>
PW_FN void gm_wg_put_tile(const gm_program& g, const float* acc, float* out, int ld, int ct) {
    const int c = ct / 128, lane = ct & 31, warp = (ct >> 5) & 3, rnd = gm_tile_round(g);
    const int r = c * 64 + warp * 16 + (lane >> 2), col = (lane & 3) * 2;
PW_UNROLL
    for (int j = 0; j < BN / 8; ++j) {
        float* p0 = out + r * ld + j * 8 + col;
        float* p1 = p0 + 8 * ld;
        p0[0] = gm_round(rnd, acc[4 * j]);
        p0[1] = gm_round(rnd, acc[4 * j + 1]);
        p1[0] = gm_round(rnd, acc[4 * j + 2]);
        p1[1] = gm_round(rnd, acc[4 * j + 3]);
    }
}

// AK / BK: k is a's / b's contiguous dim (else m / n: read transposed).  CONV
// (GM_CONV_FPROP, GM_CONV_DGRAD; 0 for a matmul): a is a convolution's x (a data
// gradient's dy), gathered by the whole producer warpgroup with cp.async (gm_load_conv_a:
// the swizzle is TMA's), each thread's copies completing on the stage's full barrier;
// GM_CONV_WGRAD: b is gathered so (gm_wg_wgrad).
// PERSIST: the block walks tiles blockIdx.x, + gridDim.x, ... with the product's tile in
// its own buffer, so the producer fills the next tile's stages while the consumers run the
// epilogue; else the grid has a block a tile and the tile reuses the pipeline's buffers.
// The stages' barriers count k steps across a block's tiles (`it`).
// BM: the tile's rows, 128 or 64 (a matmul of fp16 / bf16 only), BM / 64 consumer warpgroups.
template <int DT, bool AK, bool BK, int BN, int STAGES, bool PERSIST, int CONV, int BM, int S,
          class Prog>
PW_FN void gm_wgmma_tile(const gm_program& g, const gm_tma& t, unsigned char* smem_raw) {
    static_assert(BM == 128 || (BM == 64 && !CONV && DT != PW_F32),
                  "the 64-row tile runs fp16 / bf16 matmuls only");
    typedef GmWgSmem<BN, STAGES, PERSIST, BM> L;
    constexpr int CONSUMERS = BM / 64, CT = 128 * CONSUMERS; // warpgroups, their threads
    // the producer warpgroup copies with cp.async: a convolution's gathers, TF32's b with
    // n contiguous (gm_wg_tf32_bt)
    constexpr bool GATHER = CONV || (DT == PW_F32 && !BK);
    __shared__ __attribute__((aligned(8))) uint64_t bars[2 * STAGES]; // full, then empty
    const uint32_t raw = tc_smem_addr(smem_raw);
    GmWgBlock blk;
    blk.base = (raw + 1023u) & ~1023u;
    blk.full = tc_smem_addr(bars);
    blk.empty = blk.full + 8 * STAGES;
    blk.units = gm_units(g);
    const int tid = threadIdx.x, wg = tid / 128;
    if (tid == 0) {
PW_UNROLL
        for (int s = 0; s < STAGES; ++s) {
            // the producer's arrive with the bytes expected, and a convolution's gatherers'
            gm_mbar_init(blk.full + 8 * s, GATHER ? 1 + 128 : 1);
            gm_mbar_init(blk.empty + 8 * s, CONSUMERS); // one arrive a consumer warpgroup
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    if (GATHER && wg == 0) { // registers as the consumers': 384 x 168 fit in the file
        if (!CONV)
            gm_wg_tf32_bt<BN, STAGES>(g, t, blk, tid);
        else if (DT == PW_F32 && !AK) // TF32 of an x not in 16-byte chunks (AK false)
            gm_wg_tf32_conv<BN, STAGES>(g, t, blk, tid);
        else if (CONV == GM_CONV_WGRAD)
            gm_wg_wgrad<BN, STAGES>(g, t, blk, tid);
        else
            gm_wg_gather<DT, CONV, BK, BN, STAGES>(g, t, blk, tid);
        return;
    }
    if (wg == 0) {
        // 128 x 40 + 256 x 232 = 384 x 168, the block's registers at launch: setmaxnreg
        // moves them between warpgroups, it cannot add any (64 rows: none needed)
        if (BM == 128) asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
        if (tid == 0)
            gm_wg_load<GmWgK<DT>::STEP, AK, BK, BN, STAGES, BM>(g, t, blk);
        return;
    }
    if (!GATHER && BM == 128) asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    const int ct = tid - 128; // the consumers
    float* out = (float*)(smem_raw + (blk.base - raw) + L::TILE_AT);
    int it = 0;
    for (int64_t unit = blockIdx.x; unit < blk.units; unit += gridDim.x) {
        const GmWgAt w = gm_wg_at<GmWgK<DT>::STEP>(g, unit);
        float acc[BN / 2];
PW_UNROLL
        for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
        gm_wg_mainloop<DT, AK, BK, BN, STAGES, GATHER, BM>(blk, w.u.kt1 - w.u.kt0, wg - 1,
                                                         ct % 128 == 0, it, acc);
        // every consumer is past the last tile's epilogue (PERSIST) or done with the
        // pipeline's buffers (else): the tile may be written
        gm_bar<1, CT>();
        gm_wg_put_tile<BN>(g, acc, out, L::LD, ct);
        gm_bar<1, CT>();
        // split: the tile's last range sums the partials into `out`, its barriers named
        // barrier 1's
        gm_finish_tile<BM, BN, CT, S, Prog, 1>(g, unit, w.u.tile, out, L::LD, w.batch,
                                               (int64_t)w.tm * BM, (int64_t)w.tn * BN, ct);
    }
}

#endif
