// gm_kernels.h — the matmul kernels, compiled at plan time (NVRTC, hiprtc) with the
// plan's epilogue as a constant program type (jit_source.c writes the entry point).
//
// Each block computes one BM x BN tile of one batch's product in fp32, puts it in shared
// memory (rounded to the product's storage type), and runs the epilogue (gm_exec.h) over
// the tile's rows, PW_VEC columns a step, so that every output is written once, in
// vectors, whatever the epilogue.
//
//   gm_simt: any storage type, stride and alignment (scalar loads through shared memory,
//     fp32 fused multiply-adds): exact fp32, and the way for operands the fast kernels
//     cannot read.
//   gm_mma (NVIDIA sm_80 and newer): fp16 / bf16 on tensor cores, mma.sync m16n8k16 with
//     fp32 accumulators.  Operand tiles move with cp.async, 16 bytes a thread, STAGES deep;
//     ldmatrix reads them (.trans where the operand's contiguous dim is M or N), from rows
//     whose 16-byte chunks are XOR-swizzled so that the 8 rows one ldmatrix phase reads sit
//     in distinct banks.  Its operands are 16-byte aligned and their contiguous dim a
//     multiple of 8 elements (gemm_program.c checks), so a chunk is wholly inside a matrix
//     or wholly outside (zero-filled).
//   gm_wgmma_tile (NVIDIA sm_90, gm_wgmma.h): the same operands through wgmma and TMA.
//   gm_mfma (AMD gfx90a / gfx940, gm_mfma.h): the same operands of a matmul through MFMA.
#ifndef HIPDNN_HIP_GM_KERNELS_H
#define HIPDNN_HIP_GM_KERNELS_H

#include "gm_exec.h"

// Which tile of which batch block `bid` computes: tiles in groups of group_m tile rows,
// column by column inside a group, so that the blocks running together share b's columns
// and a's rows in L2.
PW_FN void gm_tile_of(const gm_program& g, int64_t bid, int64_t* batch, int* tm, int* tn) {
    const int64_t per = (int64_t)g.tiles_m * g.tiles_n;
    *batch = bid / per;
    const int t = (int)(bid - *batch * per);
    const int width = g.group_m * g.tiles_n;
    const int first = (t / width) * g.group_m;
    const int rows = g.tiles_m - first < g.group_m ? g.tiles_m - first : g.group_m;
    const int in = t - (t / width) * width;
    *tm = first + in % rows;
    *tn = in / rows;
}

// ---- split-k (gm_program.h) -------------------------------------------------------------

// What block `unit` of a launch computes: the tile (as gm_tile_of numbers them) and its k
// steps [kt0, kt1) of KT elements (all of them unless k is split).
struct GmUnit {
    int64_t tile;
    int kt0, kt1;
};

template <int KT>
PW_FN GmUnit gm_unit_of(const gm_program& g, int64_t unit) {
    GmUnit u;
    const int steps = (int)((g.k + KT - 1) / KT);
    u.tile = unit;
    u.kt0 = 0;
    u.kt1 = steps;
    if (g.splits > 1) {
        const int64_t tiles = g.batches * g.tiles_m * g.tiles_n;
        const int64_t range = unit / tiles;
        const int per = (int)(g.split_k / KT);
        u.tile = unit - range * tiles;
        u.kt0 = (int)range * per;
        u.kt1 = u.kt0 + per < steps ? u.kt0 + per : steps;
    }
    return u;
}

// The barrier among a tile's THREADS threads: the block's (BAR 0), or named barrier BAR
// (the sm_90 kernel's consumer warpgroups, its producer gone).
template <int BAR, int THREADS>
PW_FN void gm_bar() {
#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
    if (BAR) {
        asm volatile("bar.sync %0, %1;\n" ::"n"(BAR), "n"(THREADS) : "memory");
        return;
    }
#endif
    __syncthreads();
}

// unit's fp32 tile (shared memory, ld floats a row) to the workspace: its first `rows`
// rows, those of the product (the epilogue reads no other: a decode's 16 rows of 64 or 128).
template <int BM, int BN, int THREADS>
PW_FN void gm_store_partial(const gm_program& g, int64_t unit, const float* tile, int ld,
                            int rows, int tid) {
    float* dst = g.partial + unit * (BM * BN);
    for (int e = tid; e < rows * (BN / 4); e += THREADS) {
        const int r = e / (BN / 4), c = (e - r * (BN / 4)) * 4;
        *(float4*)(dst + r * BN + c) = *(const float4*)(tile + r * ld + c);
    }
}

// After a unit's THREADS threads (tid 0 among them) wrote its partial: whether it is the
// last of tile `tile`'s ranges to arrive (the one that sums them).  Release: every thread's
// writes, then the barrier, then thread 0's fence and arrival; acquire: the last range's
// fence after it saw every other arrival, before its threads read their partials.
template <int THREADS, int BAR>
PW_FN bool gm_split_last(const gm_program& g, int64_t tile, int tid) {
    __shared__ int last;
    gm_bar<BAR, THREADS>(); // the partial is written (and the tile in shared memory read)
    if (tid == 0) {
        __threadfence();
        last = gm_arrive((unsigned long long*)g.arrive + tile, (unsigned long long)g.nonce,
                         g.splits);
    }
    gm_bar<BAR, THREADS>();
    if (!last) return false;
    __threadfence();
    return true;
}

// The last range, `own`, its partial still in `out` (ld floats a row): tile `tile`'s
// ranges summed in order 0 .. splits - 1 (the others' from the workspace) into `out`,
// rounded to the product's type as a whole product would be; its first `rows` rows
// (gm_store_partial).  Each thread reads and writes only its own elements of `out`.
template <int BM, int BN, int THREADS>
PW_FN void gm_sum_partials(const gm_program& g, int64_t tile, int own, float* out, int ld,
                           int rows, int tid) {
    const int64_t tiles = g.batches * g.tiles_m * g.tiles_n;
    for (int e = tid; e < rows * (BN / 4); e += THREADS) {
        const int r = e / (BN / 4), c = (e - r * (BN / 4)) * 4;
        float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        for (int sp = 0; sp < g.splits; ++sp) {
            const float4 v =
                sp == own ? *(const float4*)(out + r * ld + c)
                          : *(const float4*)(g.partial + (sp * tiles + tile) * (BM * BN) + r * BN + c);
            sum.x += v.x;
            sum.y += v.y;
            sum.z += v.z;
            sum.w += v.w;
        }
        float* o = out + r * ld + c;
        o[0] = gm_round(g.acc_round, sum.x);
        o[1] = gm_round(g.acc_round, sum.y);
        o[2] = gm_round(g.acc_round, sum.z);
        o[3] = gm_round(g.acc_round, sum.w);
    }
}

// The type a kernel rounds its fp32 tile to: none for a partial product.
PW_FN int gm_tile_round(const gm_program& g) {
    return g.splits > 1 ? PW_F32 : g.acc_round;
}

// The epilogue over a tile of the product in shared memory (ld floats a row), by THREADS
// threads.
template <int BM, int BN, int THREADS, int S, class Prog>
PW_FN void gm_tile_epilogue(const gm_program& g, const float* tile, int ld, int64_t batch,
                            int64_t m0, int64_t n0, int tid) {
    constexpr int VECS = BN / PW_VEC;
    for (int s = tid; s < BM * VECS; s += THREADS) {
        const int r = s / VECS, v = s - (s / VECS) * VECS;
        const int64_t m = m0 + r, c0 = n0 + (int64_t)v * PW_VEC;
        if (m < g.m && c0 < g.n)
            gm_epilogue_step<S, Prog>(g, batch, m, c0, tile + r * ld + v * PW_VEC);
    }
}

// The end of unit `unit` (of tile `tile`), its product in `tile_smem`: through the
// epilogue, or where k is split to the workspace, and the tile's last range on through the
// sum and the epilogue (the others are done).  BAR as gm_bar.
template <int BM, int BN, int THREADS, int S, class Prog, int BAR = 0>
PW_FN void gm_finish_tile(const gm_program& g, int64_t unit, int64_t tile, float* tile_smem,
                          int ld, int64_t batch, int64_t m0, int64_t n0, int tid) {
    if (g.splits > 1) {
        const int rows = g.m - m0 < BM ? (int)(g.m - m0) : BM; // >= 1: m0 is a row
        gm_store_partial<BM, BN, THREADS>(g, unit, tile_smem, ld, rows, tid);
        if (!gm_split_last<THREADS, BAR>(g, tile, tid)) return;
        const int64_t tiles = g.batches * g.tiles_m * g.tiles_n;
        gm_sum_partials<BM, BN, THREADS>(g, tile, (int)(unit / tiles), tile_smem, ld, rows,
                                         tid);
        gm_bar<BAR, THREADS>();
    }
    gm_tile_epilogue<BM, BN, THREADS, S, Prog>(g, tile_smem, ld, batch, m0, n0, tid);
}

// ---- gm_simt ---------------------------------------------------------------------------

#define GM_SIMT_THREADS 256
#define GM_SIMT_TILE 64
#define GM_SIMT_K 16

// One 64 x 64 tile, 256 threads, each 4 x 4 outputs strided 16 apart (conflict-free reads).
template <int ADT, int BDT, int S, class Prog>
PW_FN void gm_simt(const gm_program& g) {
    constexpr int T = GM_SIMT_TILE, KS = GM_SIMT_K, LD = T + 4;
    __shared__ float as[KS][T];
    __shared__ float bs[KS][T];
    __shared__ __attribute__((aligned(16))) float cs[T * LD];
    const GmUnit u = gm_unit_of<KS>(g, blockIdx.x);
    int64_t batch;
    int tm, tn;
    gm_tile_of(g, u.tile, &batch, &tm, &tn);
    const int64_t m0 = (int64_t)tm * T, n0 = (int64_t)tn * T;
    const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    int64_t a_off, b_off;
    gm_batch_offsets(g, batch, &a_off, &b_off);
    float acc[4][4];
PW_UNROLL
    for (int i = 0; i < 4; ++i)
PW_UNROLL
        for (int j = 0; j < 4; ++j) acc[i][j] = 0.0f;
    for (int64_t k0 = (int64_t)u.kt0 * KS; k0 < (int64_t)u.kt1 * KS; k0 += KS) {
        for (int e = tid; e < T * KS; e += GM_SIMT_THREADS) {
            const int kk = e / T, mm = e - kk * T; // consecutive threads: consecutive m / n
            as[kk][mm] = gm_a_at(g, ADT, a_off, m0 + mm, k0 + kk);
            bs[kk][mm] = gm_b_at(g, BDT, b_off, k0 + kk, n0 + mm);
        }
        __syncthreads();
PW_UNROLL
        for (int kk = 0; kk < KS; ++kk) {
            float av[4], bv[4];
PW_UNROLL
            for (int i = 0; i < 4; ++i) av[i] = as[kk][ty + 16 * i];
PW_UNROLL
            for (int j = 0; j < 4; ++j) bv[j] = bs[kk][tx + 16 * j];
PW_UNROLL
            for (int i = 0; i < 4; ++i)
PW_UNROLL
                for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
        }
        __syncthreads();
    }
PW_UNROLL
    for (int i = 0; i < 4; ++i)
PW_UNROLL
        for (int j = 0; j < 4; ++j) cs[(ty + 16 * i) * LD + tx + 16 * j] = gm_round(gm_tile_round(g), acc[i][j]);
    __syncthreads();
    gm_finish_tile<T, T, GM_SIMT_THREADS, S, Prog>(g, blockIdx.x, u.tile, cs, LD, batch, m0, n0, tid);
}

// ---- a forward convolution's gathered rows and columns (gm_mma, gm_sgemm) ------------------

#define GM_KT 32 /* k of gm_mma's pipeline stage: two mma k-steps */

// A convolution's a rows, fixed for a thread over the whole k loop (gm_load_conv_a): for
// each chunk q it copies, each spatial dim's first input coordinate (o * stride - pad; a
// data gradient's o + pad, the stride applied per tap), the offset in x of that corner of
// the receptive field (base: image and first coordinates; may lie outside x) and of its
// image alone, or row_ok false past the last output position.
template <int Q>
struct GmConvRows {
    int64_t base[Q], image[Q];
    int32_t first[Q][GM_MAX_SPATIAL];
    bool row_ok[Q];
};

// E: x's element type, 16-bit (8 to a 16-byte chunk) or fp32 (4: the sm_90 kernel's TF32)
template <int BM, int THREADS, int KT = GM_KT, class E = unsigned short>
struct GmConvA {
    static constexpr int V = 16 / (int)sizeof(E); // elements a chunk
    static constexpr int C = KT / V, CHUNKS = BM * C, Q = (CHUNKS + THREADS - 1) / THREADS;
};

// Entry q of `rows` for row m of a (row_ok: m is a row and the entry is used).
template <int CONV, int Q>
PW_FN void gm_conv_row(const gm_program& g, int64_t m, bool ok, int q, GmConvRows<Q>& rows) {
    rows.row_ok[q] = ok && m < g.m;
    uint32_t pos = (uint32_t)(rows.row_ok[q] ? m : 0);
    int64_t base = 0;
PW_UNROLL
    for (int d = GM_MAX_SPATIAL - 1; d >= 0; --d) {
        const uint32_t od = d < g.nsp ? (uint32_t)g.osp[d] : 1u;
        const uint32_t o = pos % od;
        pos /= od;
        rows.first[q][d] = (int32_t)(CONV == GM_CONV_DGRAD ? (int64_t)o + g.pad[d]
                                                             : (int64_t)o * g.stride[d] - g.pad[d]);
        if (d < g.nsp) base += (int64_t)rows.first[q][d] * g.x_ssp[d];
    }
    rows.image[q] = (int64_t)pos * g.x_sn;
    rows.base[q] = rows.image[q] + base;
}

template <int CONV, int BM, int THREADS, int KT = GM_KT, class E = unsigned short>
PW_FN void gm_conv_rows(const gm_program& g, int64_t m0, int tid,
                        GmConvRows<GmConvA<BM, THREADS, KT, E>::Q>& rows) {
    typedef GmConvA<BM, THREADS, KT, E> L;
PW_UNROLL
    for (int q = 0; q < L::Q; ++q)
        gm_conv_row<CONV>(g, m0 + (tid + q * THREADS) / L::C, tid + q * THREADS < L::CHUNKS, q,
                          rows);
}

// A thread's column of a convolution's a tile (gm_load_conv_a): its field element k, as a
// filter tap (fd..., innermost last) and a channel c, stepped KT at a time by mixed-radix
// addition (no division in the k loop).
struct GmConvCol {
    uint32_t k;
    int32_t c;
    int32_t fd[GM_MAX_SPATIAL];
};

PW_FN void gm_conv_col_init(const gm_program& g, uint32_t k, GmConvCol& col) {
    col.k = k;
    uint32_t c, f;
    gm_conv_field(g, k, &c, &f);
    col.c = (int32_t)c;
PW_UNROLL
    for (int d = GM_MAX_SPATIAL - 1; d >= 0; --d) {
        const uint32_t kd = d < g.nsp ? (uint32_t)g.ker[d] : 1u;
        col.fd[d] = (int32_t)(f % kd);
        f /= kd;
    }
}

// Filter index fd's offset along dim d, dilated (reversed for a true convolution).
PW_FN int32_t gm_conv_tap_at(const gm_program& g, int d, int32_t fd) {
    const int32_t kd = d < g.nsp ? (int32_t)g.ker[d] : 1;
    return (g.flip ? kd - 1 - fd : fd) * (int32_t)g.dil[d];
}

// Field element col's filter offset along dim d.
PW_FN int32_t gm_conv_tap(const gm_program& g, const GmConvCol& col, int d) {
    return gm_conv_tap_at(g, d, col.fd[d]);
}

template <int KT>
PW_FN void gm_conv_col_next(const gm_program& g, GmConvCol& col) {
    col.k += KT;
    col.c += KT;
    while (col.c >= (int32_t)g.cin) { // past the last channel: the next tap
        col.c -= (int32_t)g.cin;
PW_UNROLL
        for (int d = GM_MAX_SPATIAL - 1; d >= 0; --d) {
            if (d >= g.nsp) continue;
            if (++col.fd[d] < (int32_t)g.ker[d]) break;
            col.fd[d] = 0; // past the filter's last tap: k is past the end, col.k says so
        }
    }
}

// col + step, both field elements as GmConvCol holds them (step's digits under their radix
// but the outermost): mixed-radix addition from the innermost digit, one carry a digit.
// Past the field's end the digits wrap; col.k says so.
PW_FN void gm_conv_col_add(const gm_program& g, GmConvCol& col, const GmConvCol& step) {
    col.k += step.k;
    int32_t carry = 0;
    if (!g.taps_inner) { // (f..., c): the channel innermost
        col.c += step.c;
        carry = col.c >= (int32_t)g.cin;
        if (carry) col.c -= (int32_t)g.cin;
    }
PW_UNROLL
    for (int d = GM_MAX_SPATIAL - 1; d >= 0; --d) {
        if (d >= g.nsp) continue;
        col.fd[d] += step.fd[d] + carry;
        carry = col.fd[d] >= (int32_t)g.ker[d];
        if (carry) col.fd[d] -= (int32_t)g.ker[d];
    }
    if (g.taps_inner) col.c += step.c + carry;
}

// ---- the sm_90 TF32 kernel's element gather (gm_wg_tf32_conv) -----------------------------
// Element (m, k) of a is x at row m's corner (GmConvRows) plus field element k's offset,
// inside x where every dim's coordinate first + tap is.  A stage's 32 field elements are
// the same for every row, so they are worked out once a stage into a table (GmTapEntry:
// the offset and the taps); the row side (corner, and which taps fall inside x) once a
// tile.  Where the filter's sizes add up to at most 31, a row's taps inside x are a mask
// (dim d's taps as ker[d] bits from at[d] on), each element's taps one bit a dim, and an
// element is read where it has no bit outside its row's mask: one AND.

// Each dim's first bit in the masks; false where the filter's sizes add up to over 31 (bit
// 31 marks a field element past the end).
PW_FN bool gm_conv_tap_bits(const gm_program& g, uint32_t* at) {
    uint32_t n = 0;
PW_UNROLL
    for (int d = 0; d < GM_MAX_SPATIAL; ++d) {
        at[d] = n;
        if (d < g.nsp) n += (uint32_t)g.ker[d];
    }
    return n <= 31;
}

// The bits of taps outside x for the row (rows' entry 0): all where it is past the last.
PW_FN uint32_t gm_conv_row_bad(const gm_program& g, const GmConvRows<1>& rows, const uint32_t* at) {
    uint32_t in = 0;
PW_UNROLL
    for (int d = 0; d < GM_MAX_SPATIAL; ++d) {
        if (d >= g.nsp) continue;
        for (int32_t j = 0; j < (int32_t)g.ker[d]; ++j)
            if ((uint32_t)(rows.first[0][d] + gm_conv_tap_at(g, d, j)) < (uint32_t)g.xsp[d])
                in |= 1u << (at[d] + (uint32_t)j);
    }
    return rows.row_ok[0] ? ~in : ~0u;
}

// Field element col as a stage's table holds it: off, its offset in x from a row's corner
// (under 2^31: gemm_choice.c checks); MASK: tap, its bits (gm_conv_tap_bits), bit 31 past
// the field's end; else tap[d] its offset along dim d (gm_conv_tap), tap[0] -2^30 past the
// end (so that first + tap < 0: gemm_choice.c keeps |first| and taps under 2^30).
struct GmTapEntry {
    int32_t off;
    int32_t tap[GM_MAX_SPATIAL];
};

template <bool MASK>
PW_FN void gm_conv_tap_entry(const gm_program& g, const GmConvCol& col, const uint32_t* at,
                             GmTapEntry& e) {
    const bool past = col.k >= (uint32_t)g.k;
    int64_t off = (int64_t)col.c * g.x_sc;
    uint32_t bits = 0;
PW_UNROLL
    for (int d = 0; d < GM_MAX_SPATIAL; ++d) {
        e.tap[d] = 0;
        if (d >= g.nsp || past) continue;
        const int32_t tap = gm_conv_tap(g, col, d);
        off += (int64_t)tap * g.x_ssp[d];
        if (MASK) bits |= 1u << (at[d] + (uint32_t)col.fd[d]);
        else e.tap[d] = tap;
    }
    e.off = (int32_t)off;
    if (MASK) e.tap[0] = (int32_t)(past ? 1u << 31 : bits);
    else if (past) e.tap[0] = -(1 << 30);
}

// Whether the row (rows' entry 0; bad: gm_conv_row_bad's, MASK) reads field element e.
template <bool MASK>
PW_FN bool gm_conv_tap_ok(const gm_program& g, const GmConvRows<1>& rows, uint32_t bad,
                          const GmTapEntry& e) {
    if (MASK) return ((uint32_t)e.tap[0] & bad) == 0;
    bool ok = rows.row_ok[0];
PW_UNROLL
    for (int d = 0; d < GM_MAX_SPATIAL; ++d)
        if (d < g.nsp) ok = ok && (uint32_t)(rows.first[0][d] + e.tap[d]) < (uint32_t)g.xsp[d];
    return ok;
}

#include "gm_sgemm.h" /* exact fp32, register-blocked */

// ---- gm_mma (NVIDIA, sm_80 and newer) -------------------------------------------------------

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)

#include "tc_ptx.h"

template <int DT> PW_FN void gm_mma16816(float* d, const uint32_t* a, const uint32_t* b) {
    if (DT == PW_BF16)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Byte offset of 16-byte chunk c of row r in a tile of C chunks a row: swizzled so that
// eight consecutive rows at one chunk column fall in eight distinct 16-byte bank groups.
template <int C> PW_FN uint32_t gm_swz(int r, int c) {
    return (uint32_t)(r * C * 16 + ((C == 4 ? (c ^ ((r >> 1) & 3)) : (c ^ (r & 7))) * 16));
}

// One operand's tile of a stage: R x GM_KT when K is its contiguous dim (KC), else
// GM_KT x R (rows along k).  Copies it from global memory, zero-filling what lies outside.
template <int R, bool KC, int THREADS>
PW_FN void gm_load_tile(uint32_t dst, const unsigned short* base, int64_t r0, int64_t k0,
                        int64_t rows, int64_t ks, int64_t s_r, int64_t s_k, int tid) {
    constexpr int C = KC ? GM_KT / 8 : R / 8; // chunks a smem row
    constexpr int CHUNKS = (KC ? R : GM_KT) * C;
PW_UNROLL
    for (int q = 0; q < (CHUNKS + THREADS - 1) / THREADS; ++q) {
        const int c = tid + q * THREADS;
        if (CHUNKS % THREADS != 0 && c >= CHUNKS) break;
        const int row = c / C, col = c - (c / C) * C;
        const int64_t r = KC ? r0 + row : r0 + (int64_t)col * 8;
        const int64_t k = KC ? k0 + (int64_t)col * 8 : k0 + row;
        const bool valid = r < rows && k < ks;
        const unsigned short* src = valid ? base + r * s_r + k * s_k : base;
        tc_cp_async(dst + gm_swz<C>(row, col), src, valid);
    }
}

// A convolution's a tile (BM x KT, k contiguous): each 16-byte chunk is 8 channels (4 of
// fp32, E) of one x element's neighbourhood (gemm_program.c requires x's channels
// contiguous, C a multiple of 8 (4) and every index under 2^31), or zeros in the padding.  A data gradient's
// chunk is 8 channels of dy at (o + pad - tap) / stride, zeros where that is not whole
// (gm_conv_gather).  A thread's chunks share one column (CHUNKS a row divides THREADS),
// `col`, so the tap's offset is worked out once and each chunk's address is its row's base
// plus it.  Rows of KT / 8 chunks, swizzled as gm_swz says (at KT 64, the 128-byte swizzle
// wgmma reads).  x: g.a at the batch's offset (a group's first channel).
template <int CONV, int BM, int THREADS, int KT = GM_KT, class E = unsigned short>
PW_FN void gm_load_conv_a(uint32_t dst, const gm_program& g, const E* x,
                          const GmConvRows<GmConvA<BM, THREADS, KT, E>::Q>& rows,
                          const GmConvCol& col, int tid) {
    typedef GmConvA<BM, THREADS, KT, E> L;
    static_assert(THREADS % L::C == 0, "a thread's chunks share a column");
    const int cc = tid % L::C;
    const bool k_ok = col.k < (uint32_t)g.k;
    int32_t tap[GM_MAX_SPATIAL]; // filter offset of each dim, dilated
    int64_t toff = col.c;        // ... and in x (x_sc is 1)
    bool strided = false;        // a data gradient's stride: each chunk divides
PW_UNROLL
    for (int d = GM_MAX_SPATIAL - 1; d >= 0; --d) {
        tap[d] = CONV == GM_CONV_DGRAD ? -gm_conv_tap(g, col, d) : gm_conv_tap(g, col, d);
        if (d < g.nsp) toff += (int64_t)tap[d] * g.x_ssp[d];
        if (CONV == GM_CONV_DGRAD && d < g.nsp) strided = strided || g.stride[d] != 1;
    }
PW_UNROLL
    for (int q = 0; q < L::Q; ++q) {
        bool valid = k_ok && rows.row_ok[q];
        int64_t off = rows.base[q] + toff;
        if (CONV == GM_CONV_DGRAD && strided) { // dy at (first + tap) / stride, where whole
            off = rows.image[q] + col.c;
PW_UNROLL
            for (int d = 0; d < GM_MAX_SPATIAL; ++d) {
                if (d >= g.nsp) continue;
                const int32_t st = (int32_t)g.stride[d], at = rows.first[q][d] + tap[d];
                valid = valid && at >= 0 && at % st == 0 && at / st < (int32_t)g.xsp[d];
                off += (int64_t)(at / st) * g.x_ssp[d];
            }
        } else {
PW_UNROLL
            for (int d = 0; d < GM_MAX_SPATIAL; ++d)
                if (d < g.nsp)
                    valid = valid && (uint32_t)(rows.first[q][d] + tap[d]) < (uint32_t)g.xsp[d];
        }
        const int row = (tid + q * THREADS) / L::C;
        tc_cp_async(dst + gm_swz<L::C>(row, cc), valid ? x + off : x, valid);
    }
}

template <int BM, int BN, int STAGES>
struct GmSmem {
    static constexpr int A = BM * GM_KT * 2, B = BN * GM_KT * 2; // bytes a stage
    static constexpr int PIPE = STAGES * (A + B);
    static constexpr int LD = BN + 4; // floats a row of the product's tile
    static constexpr int TILE = BM * LD * 4;
    static constexpr int BYTES = PIPE > TILE ? PIPE : TILE;
};

// A's fragments of the warp's MT m16 tiles at k-step kk of the stage at `as`.
template <int BM, bool AK, int MT>
PW_FN void gm_frag_a(uint32_t as, int wm0, int kk, int lane, uint32_t (&a)[MT][4]) {
PW_UNROLL
    for (int mt = 0; mt < MT; ++mt) {
        const int m = wm0 + mt * 16;
        if (AK) { // rows m, 4 chunks of k
            const int r = m + (lane & 7) + ((lane >> 3) & 1) * 8;
            tc_ldmatrix4<false>(as + gm_swz<GM_KT / 8>(r, kk / 8 + (lane >> 4)), a[mt]);
        } else { // rows k, BM / 8 chunks of m
            const int r = kk + (lane & 7) + (lane >> 4) * 8;
            tc_ldmatrix4<true>(as + gm_swz<BM / 8>(r, m / 8 + ((lane >> 3) & 1)), a[mt]);
        }
    }
}

// B's fragments of the warp's NT n8 tiles (two an ldmatrix).
template <int BN, bool BK, int NT>
PW_FN void gm_frag_b(uint32_t bs, int wn0, int kk, int lane, uint32_t (&b)[NT][2]) {
PW_UNROLL
    for (int np = 0; np < NT / 2; ++np) {
        const int n = wn0 + np * 16;
        uint32_t r4[4];
        if (BK) { // rows n, 4 chunks of k
            const int r = n + (lane & 7) + (lane >> 4) * 8;
            tc_ldmatrix4<false>(bs + gm_swz<GM_KT / 8>(r, kk / 8 + ((lane >> 3) & 1)), r4);
        } else { // rows k, BN / 8 chunks of n
            const int r = kk + (lane & 7) + ((lane >> 3) & 1) * 8;
            tc_ldmatrix4<true>(bs + gm_swz<BN / 8>(r, n / 8 + (lane >> 4)), r4);
        }
        b[2 * np][0] = r4[0];
        b[2 * np][1] = r4[1];
        b[2 * np + 1][0] = r4[2];
        b[2 * np + 1][1] = r4[3];
    }
}

// A warp's accumulators (mma.sync's layout: rows lane / 4 (+ 8), column pairs) into the fp32
// tile (LD floats a row) at its corner (wm0, wn0), rounded as gm_tile_round says.
template <int MT, int NT, int LD>
PW_FN void gm_mma_put_tile(const gm_program& g, const float (*acc)[NT][4], float* tile, int wm0,
                           int wn0, int lane) {
    const int gr = lane >> 2, gc = (lane & 3) * 2, rnd = gm_tile_round(g);
PW_UNROLL
    for (int i = 0; i < MT; ++i)
PW_UNROLL
        for (int j = 0; j < NT; ++j) {
            const int r = wm0 + i * 16 + gr, c = wn0 + j * 8 + gc;
            tile[r * LD + c] = gm_round(rnd, acc[i][j][0]);
            tile[r * LD + c + 1] = gm_round(rnd, acc[i][j][1]);
            tile[(r + 8) * LD + c] = gm_round(rnd, acc[i][j][2]);
            tile[(r + 8) * LD + c + 1] = gm_round(rnd, acc[i][j][3]);
        }
}

// One BM x BN tile: WM x WN warps, each (BM / WM) x (BN / WN) of the product; CONV
// (GM_CONV_FPROP or GM_CONV_DGRAD, a constant so the gather's branches fold): a is
// a convolution's x (gm_load_conv_a).
template <int DT, bool AK, bool BK, int BM, int BN, int WM, int WN, int STAGES, int CONV, int S,
          class Prog>
PW_FN void gm_mma(const gm_program& g, unsigned char* smem) {
    constexpr int THREADS = WM * WN * 32, MT = BM / WM / 16, NT = BN / WN / 8;
    typedef GmSmem<BM, BN, STAGES> L;
    const GmUnit u = gm_unit_of<GM_KT>(g, blockIdx.x);
    int64_t batch;
    int tm, tn;
    gm_tile_of(g, u.tile, &batch, &tm, &tn);
    const int64_t m0 = (int64_t)tm * BM, n0 = (int64_t)tn * BN;
    int64_t a_off, b_off;
    gm_batch_offsets(g, batch, &a_off, &b_off);
    const unsigned short* a = (const unsigned short*)g.a + a_off;
    const unsigned short* b = (const unsigned short*)g.b + b_off;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm0 = (warp / WN) * (BM / WM), wn0 = (warp % WN) * (BN / WN);
    const uint32_t base = tc_smem_addr(smem);
    const int kt_count = u.kt1 - u.kt0; // this block's k steps, from u.kt0

    GmConvRows<GmConvA<BM, THREADS>::Q> conv_rows;
    GmConvCol conv_col; // loads come k step by k step, from u.kt0
    if (CONV) {
        gm_conv_rows<CONV, BM, THREADS>(g, m0, tid, conv_rows);
        gm_conv_col_init(g, (uint32_t)(u.kt0 * GM_KT + (tid % (GM_KT / 8)) * 8), conv_col);
    }
    // a's rows are m (stride a_sm), b's are n (stride b_sn); each with its k stride
    auto load_stage = [&](int slot, int kt) {
        const uint32_t as = base + slot * (L::A + L::B), bs = as + L::A;
        const int64_t k0 = (int64_t)(u.kt0 + kt) * GM_KT;
        if (CONV) {
            gm_load_conv_a<CONV, BM, THREADS>(as, g, a, conv_rows, conv_col, tid);
            gm_conv_col_next<GM_KT>(g, conv_col);
        } else
            gm_load_tile<BM, AK, THREADS>(as, a, m0, k0, g.m, g.k, g.a_sm, g.a_sk, tid);
        if (CONV == GM_CONV_DGRAD) // w's [k_out, c] matrix of the step's one tap
            gm_load_tile<BN, BK, THREADS>(bs, b + gm_conv_b_offset(g, k0, 0), n0, 0, g.n,
                                          g.cin - k0 % g.cin, g.b_sn, g.b_sk, tid);
        else
            gm_load_tile<BN, BK, THREADS>(bs, b, n0, k0, g.n, g.k, g.b_sn, g.b_sk, tid);
    };

    float acc[MT][NT][4];
PW_UNROLL
    for (int i = 0; i < MT * NT * 4; ++i) acc[i / (NT * 4)][i / 4 % NT][i % 4] = 0.0f;

PW_UNROLL
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < kt_count) load_stage(s, s);
        tc_cp_commit();
    }
    for (int kt = 0; kt < kt_count; ++kt) {
        tc_cp_wait<STAGES - 2>();
        __syncthreads();
        const int next = kt + STAGES - 1;
        if (next < kt_count) load_stage(next % STAGES, next);
        tc_cp_commit();
        const uint32_t as = base + (kt % STAGES) * (L::A + L::B), bs = as + L::A;
PW_UNROLL
        for (int kk = 0; kk < GM_KT; kk += 16) {
            uint32_t fa[MT][4], fb[NT][2];
            gm_frag_a<BM, AK, MT>(as, wm0, kk, lane, fa);
            gm_frag_b<BN, BK, NT>(bs, wn0, kk, lane, fb);
PW_UNROLL
            for (int i = 0; i < MT; ++i)
PW_UNROLL
                for (int j = 0; j < NT; ++j) gm_mma16816<DT>(acc[i][j], fa[i], fb[j]);
        }
    }
    tc_cp_wait<0>();
    __syncthreads(); // every warp is done with the pipeline's buffers: the tile reuses them

    float* tile = (float*)smem;
    gm_mma_put_tile<MT, NT, L::LD>(g, acc, tile, wm0, wn0, lane);
    __syncthreads();
    gm_finish_tile<BM, BN, THREADS, S, Prog>(g, blockIdx.x, u.tile, tile, L::LD, batch, m0, n0,
                                             tid);
}

#include "gm_wgmma.h" /* sm_90 */

#elif defined(__HIPCC_RTC__) || defined(__HIP_DEVICE_COMPILE__) || defined(GM_MFMA_HOST_MODEL)

#include "gm_mfma.h" /* AMD matrix cores (and the host emulation's model of them) */

#endif /* CUDA, HIP */

#endif
