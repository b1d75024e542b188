// rw_kernels.h — the row-wise kernels (reductions, softmax, norms, norm backward) as
// templates, compiled at run time: one instantiation per program at plan time (NVRTC on
// NVIDIA, hiprtc on AMD), named by the host code's selection (kernel_names.c: e.g.
// "rw_norm_packed<4, 2, 32, true, 0>") and cached (kernel_cache.c).  Device code only: the
// host emulation runs the same per-thread code (rw_exec.h) with its own combining loops.
//
// What each thread does between two combining steps is in rw_exec.h; here are the
// combining steps (warp shuffles, then shared memory across the warps of a row) and the
// loops over rows.  The includer (jit_source.c's prelude) supplies PW_FN, PW_HOST_FN,
// PW_UNROLL, the fp16 / bf16 conversions of pw_exec.h and hd_shfl_xor; the loops depend on
// the data only through the program's sizes, which every thread reads from the argument.
#ifndef HIPDNN_HIP_RW_KERNELS_H
#define HIPDNN_HIP_RW_KERNELS_H

#include "rw_exec.h"

// Shared memory of the combining steps: two halves of a warp result each (exact for fp32
// too), used in turn, so that one barrier a combine is enough: a thread writes a half again
// only after the next combine's barrier, which every thread reaches after reading it.
struct Combine {
    double (*smem)[32]; // [2][32], shared
    int turn;           // the thread's own: every thread takes the same turns
};

// v combined over the G threads of a row (all of them get the result).  Up to 32 lanes:
// an xor butterfly; a row of several warps (then the whole block) also folds the warps'
// results from shared memory, in order, every thread alike.
template <int OP, class T>
__device__ __forceinline__ T group_combine(T v, int G, Combine& c) {
    const int lanes = G < 32 ? G : 32;
    for (int off = lanes >> 1; off > 0; off >>= 1) v = rd_op<OP>(v, hd_shfl_xor(v, off));
    if (G > 32) {
        double* half = c.smem[c.turn];
        c.turn ^= 1;
        if ((threadIdx.x & 31) == 0) half[threadIdx.x >> 5] = v;
        __syncthreads();
        v = (T)half[0];
        for (int w = 1; w < (G >> 5); ++w) v = rd_op<OP>(v, (T)half[w]);
    }
    return v;
}

// N values combined over the G threads of a row at once: the same steps, in the same order,
// as N group_combine calls (so the same results), with one barrier instead of N.  A row
// has at most 16 warps (RW_MAX_GROUP): N <= 4 floats of each fill a half.
template <int OP, int N>
__device__ __forceinline__ void group_combine_n(float* v, int G, Combine& c) {
    static_assert(N * (RW_MAX_GROUP / 32) <= 64, "a half holds 64 floats");
    const int lanes = G < 32 ? G : 32;
    for (int off = lanes >> 1; off > 0; off >>= 1)
#pragma unroll
        for (int i = 0; i < N; ++i) v[i] = rd_op<OP>(v[i], hd_shfl_xor(v[i], off));
    if (G > 32) {
        float* half = reinterpret_cast<float*>(c.smem[c.turn]);
        c.turn ^= 1;
        if ((threadIdx.x & 31) == 0)
#pragma unroll
            for (int i = 0; i < N; ++i) half[(threadIdx.x >> 5) * N + i] = v[i];
        __syncthreads();
#pragma unroll
        for (int i = 0; i < N; ++i) {
            float r = half[i];
            for (int w = 1; w < (G >> 5); ++w) r = rd_op<OP>(r, half[w * N + i]);
            v[i] = r;
        }
    }
}

// The rows of a block: G threads a row, blockDim.x / G rows at a time; every thread runs
// the same number of iterations (a row past the end redoes the last row and stores
// nothing), so that shuffles and barriers always find every thread.
struct RowSlot {
    int t;          // thread within the row's group
    int gi, gpb;    // group within the block, groups a block
};

__device__ __forceinline__ RowSlot row_slot(int G) {
    return RowSlot{(int)(threadIdx.x & (G - 1)), (int)(threadIdx.x / G), (int)(blockDim.x / G)};
}

template <int OP, int PRE, int DT>
__global__ void __launch_bounds__(RW_MAX_GROUP) rw_reduce_rows(const rw_program p) {
    __shared__ double halves[2][32];
    Combine smem{halves, 0};
    const int G = p.group;
    const RowSlot s = row_slot(G);
    const int64_t nrows = p.rows * p.splits;
    for (int64_t base = (int64_t)blockIdx.x * s.gpb; base < nrows; base += (int64_t)gridDim.x * s.gpb) {
        const bool valid = base + s.gi < nrows;
        const int64_t row = valid ? base + s.gi : nrows - 1;
        int64_t xrow, c0, c1;
        rd_part(p, row, &xrow, &c0, &c1);
        uint32_t coord[RW_DIMS];
        rw_row_coords(p, xrow, coord);
        typename RdAcc<OP>::T v =
            rd_row_partial<OP, PRE, DT>(p, rw_row_offset(p.x, coord), c0, c1, s.t, G);
        v = group_combine<OP>(v, G, smem);
        if (valid && s.t == 0) rd_row_store(p, row, v);
    }
}

template <int OP, int PRE>
__global__ void __launch_bounds__(RW_COL_X * RW_COL_Y) rw_reduce_cols(const rw_program p) {
    typedef typename RdAcc<OP>::T T;
    __shared__ T part[RW_COL_Y][RW_COL_X][PW_VEC + 1];
    const int tx = threadIdx.x % RW_COL_X, ty = threadIdx.x / RW_COL_X;
    const int W = p.x.contiguous ? PW_VEC : 1;
    const int64_t nout = p.rows * p.splits;
    const int64_t step = (int64_t)RW_COL_X * W;
    for (int64_t base = (int64_t)blockIdx.x * step; base < nout; base += (int64_t)gridDim.x * step) {
        const int64_t o = base + (int64_t)tx * W;
        T acc[PW_VEC];
        rd_col_partial<OP, PRE>(p, o < nout ? o : base, ty, acc);
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) part[ty][tx][j] = acc[j];
        __syncthreads();
        if (ty == 0 && o < nout) {
PW_UNROLL
            for (int y = 1; y < RW_COL_Y; ++y)
PW_UNROLL
                for (int j = 0; j < PW_VEC; ++j) acc[j] = rd_op<OP>(acc[j], part[y][tx][j]);
            rd_col_store(p, o, acc);
        }
        __syncthreads();
    }
}

template <int V, int DT>
__global__ void __launch_bounds__(RW_MAX_GROUP) rw_softmax(const rw_program p) {
    __shared__ double halves[2][32];
    Combine smem{halves, 0};
    const int G = p.group;
    const RowSlot s = row_slot(G);
    for (int64_t base = (int64_t)blockIdx.x * s.gpb; base < p.rows; base += (int64_t)gridDim.x * s.gpb) {
        const bool valid = base + s.gi < p.rows;
        const RwRowAt at = rw_row_at(p, valid ? base + s.gi : p.rows - 1);
        RwRow<V> r;
        float m = group_combine<RW_OP_MAX>(sm_max<V, DT>(p, at, s.t, G, r), G, smem);
        m = rw_round(p.round[0], m);
        float sum = group_combine<RW_OP_ADD>(sm_sum<V, DT>(p, at, s.t, G, m, r), G, smem);
        sum = rw_round(p.round[3], sum);
        if (valid) sm_store<V, DT>(p, at, s.t, G, m, sum, r);
    }
}

template <int V, int S, int DT>
__global__ void __launch_bounds__(RW_MAX_GROUP) rw_norm(const rw_program p) {
    __shared__ double halves[2][32];
    Combine smem{halves, 0};
    const int G = p.group;
    const RowSlot s = row_slot(G);
    for (int64_t base = (int64_t)blockIdx.x * s.gpb; base < p.rows; base += (int64_t)gridDim.x * s.gpb) {
        const bool valid = base + s.gi < p.rows;
        const RwRowAt at = rw_row_at(p, valid ? base + s.gi : p.rows - 1);
        RwRow<V> r;
        const float sum = group_combine<RW_OP_ADD>(nm_sum<V, DT>(p, at, s.t, G, r), G, smem);
        const float mean = nm_mean(p, sum);
        const float sq = p.mode == RW_RMS
                             ? sum
                             : group_combine<RW_OP_ADD>(nm_var<V, DT>(p, at, s.t, G, mean, r), G, smem);
        const float inv = nm_inv(p, sq);
        if (valid && s.t == 0) nm_store_stats(p, at, mean, inv);
        if (valid && (p.flags & (RW_F_STORE_Y | RW_F_EPILOGUE))) nm_store<V, S, DT>(p, at, s.t, G, mean, inv, r);
    }
}

// A norm backward row's sums of g and g * xhat, and with RW_F_ROW_SUMS of dy * xhat and dy,
// combined over its group at once: with a barrier each, a bf16 layernorm backward over rows
// of 4096 (256 threads a row) took 0.455 ms, with one 0.426 (RESULTS.md, twenty-fourth run).
__device__ __forceinline__ void nb_combine(const rw_program& p, float* sums, int G, Combine& c) {
    if (p.flags & RW_F_ROW_SUMS) group_combine_n<RW_OP_ADD, 4>(sums, G, c);
    else group_combine_n<RW_OP_ADD, 2>(sums, G, c);
}

// Norm backward: dx of each row, with its sums (RW_F_ROW_SUMS) or the group's column parts
// (RW_F_COL_PARTS: the grid has exactly part_sets * part_groups groups, nb_walk's rows each).
// S: the epilogue's slots (rw_exec_norm_bwd.h's nb_store), 0 without one.
template <int V, int DT, int S>
__global__ void __launch_bounds__(RW_MAX_GROUP) rw_norm_bwd(const rw_program p) {
    __shared__ double halves[2][32];
    Combine smem{halves, 0};
    const int G = p.group;
    const RowSlot s = row_slot(G);
    const bool parts = (p.flags & RW_F_COL_PARTS) != 0;
    float cp1[V > 0 ? V : 1][PW_VEC], cp2[V > 0 ? V : 1][PW_VEC];
    nb_zero_parts<V>(cp1, cp2);
    const int64_t q = (int64_t)blockIdx.x * s.gpb + s.gi;
    const NbWalk w = nb_walk(p, q, (int64_t)gridDim.x * s.gpb);
    for (int64_t i0 = 0; i0 < w.n; i0 += w.step) {
        bool valid;
        const RwRowAt at = rw_row_at(p, nb_walk_row(p, w, i0, &valid));
        float mean, inv, sums[4];
        nb_stats(p, at, &mean, &inv);
        RwRow<V> xh, g;
        nb_load<V, DT>(p, at, s.t, G, mean, inv, xh, g, sums, cp1, cp2, parts && valid);
        nb_combine(p, sums, G, smem);
        const float s_g = sums[0], s_gx = sums[1];
        if ((p.flags & RW_F_ROW_SUMS) && valid && s.t == 0) nb_store_sums(p, at, sums[2], sums[3]);
        if (valid && (p.flags & (RW_F_STORE_Y | RW_F_EPILOGUE)))
            nb_store<V, DT, S>(p, at, s.t, G, s_g, s_gx, mean, inv, xh, g);
    }
    if (parts && w.group_valid) nb_store_parts<V>(p, q, s.t, G, cp1, cp2);
}

// Norm backward of 16-bit rows held packed (the fast way): as rw_norm_bwd, x and dy held as
// loaded (rw_exec_norm_bwd.h's nbp_*), ONE and PT as rw_norm_packed's.  PARTS: where a thread keeps
// its column parts (NB_PARTS_*).  Without parts in registers nvcc holds the kernel to 64
// registers (two blocks of 512 threads an SM, four of 256): with 128 an instance norm
// backward ran two blocks an SM, 0.81x PyTorch's, with 64 (a few bytes spilled) 1.11x,
// while parts kept in registers under that bound spilled 450 bytes and lost a third
// (RESULTS.md, twenty-second run); kept in shared memory, a layernorm backward went from
// 0.476 to 0.455 ms (twenty-third).  The next row's x and dy are loaded while the group
// combines this one's sums: a block takes its rows one after the other (its threads keep
// the column sums of its rows), so without that an SM had only as many rows in flight as
// blocks, two, and DRAM was a quarter busy (RESULTS.md, fifteenth run).  The PARTS values
// (NB_PARTS_*) are in rw_program.h: the host code names the kernels by them.

// Floats of shared memory a thread's column parts take (odd: thread t's start is bank t,
// no conflicts); NB_SHARED_THREADS (rw_program.h), the threads a block may have with them
// there, keeps the block's parts under 48 KiB.
#define NB_SHARED_STRIDE(V) (2 * (V) * PW_VEC + 1)

template <int V, int DT, bool ONE, int PT, int PARTS>
__global__ void __launch_bounds__(RW_MAX_GROUP, PARTS == NB_PARTS_REGS ? 1 : 2)
rw_norm_bwd_packed(const rw_program p) {
    __shared__ double halves[2][32];
    __shared__ float shared_parts[PARTS == NB_PARTS_SHARED ? NB_SHARED_THREADS(V) * NB_SHARED_STRIDE(V) : 1];
    Combine smem{halves, 0};
    const int G = p.group;
    const RowSlot s = row_slot(G);
    const bool parts = PARTS != NB_PARTS_NONE && (p.flags & RW_F_COL_PARTS) != 0;
    float rp1[PARTS == NB_PARTS_REGS ? V : 1][PW_VEC], rp2[PARTS == NB_PARTS_REGS ? V : 1][PW_VEC];
    float(*cp1)[PW_VEC] = rp1;
    float(*cp2)[PW_VEC] = rp2;
    if constexpr (PARTS == NB_PARTS_SHARED) {
        cp1 = reinterpret_cast<float(*)[PW_VEC]>(&shared_parts[threadIdx.x * NB_SHARED_STRIDE(V)]);
        cp2 = cp1 + V;
    }
    if (PARTS != NB_PARTS_NONE) nb_zero_parts<V>(cp1, cp2);
    const int64_t q = (int64_t)blockIdx.x * s.gpb + s.gi;
    const NbWalk w = nb_walk(p, q, (int64_t)gridDim.x * s.gpb);
    bool valid;
    NbPacked<V> r;
    nbp_fetch<V>(p, rw_row_at_t<ONE>(p, nb_walk_row(p, w, 0, &valid)), s.t, G, r);
    for (int64_t i0 = 0; i0 < w.n; i0 += w.step) {
        const RwRowAt at = rw_row_at_t<ONE>(p, nb_walk_row(p, w, i0, &valid));
        float mean, inv, sums[4];
        nb_stats(p, at, &mean, &inv);
        nbp_sums<V, DT, PT>(p, at, s.t, G, mean, inv, r, sums, cp1, cp2, parts && valid);
        NbPacked<V> next = r;
        if (i0 + w.step < w.n) {
            bool next_valid;
            nbp_fetch<V>(p, rw_row_at_t<ONE>(p, nb_walk_row(p, w, i0 + w.step, &next_valid)), s.t, G, next);
        }
        nb_combine(p, sums, G, smem);
        const float s_g = sums[0], s_gx = sums[1];
        if ((p.flags & RW_F_ROW_SUMS) && valid && s.t == 0) nb_store_sums(p, at, sums[2], sums[3]);
        if (valid && (p.flags & RW_F_STORE_Y)) nbp_store<V, DT, PT>(p, at, s.t, G, s_g, s_gx, mean, inv, r);
        r = next;
    }
    if (parts && w.group_valid) nb_store_parts<V>(p, q, s.t, G, cp1, cp2);
}

// Norms of 16-bit rows held packed (RW_F_PACKED): L threads a row (a warp: no barriers;
// more: one row a block), NV vectors a thread.  Few vectors a thread keep the registers
// low enough for a full GPU: a warp a row holding 16 vectors a lane took 128 registers,
// a quarter of the threads an SM can run, and 0.68x of PyTorch's layernorm (RESULTS.md,
// eleventh run).  ONE: the rows are one dim; PT: scale's and bias's type, or -1
// (rw_exec.h's rw_row_at_t, kernel_names.c's param_type: the usual case, with no general
// addressing and no type switches, takes about half the instructions).
template <int NV, int DT, int L, bool ONE, int PT>
__global__ void __launch_bounds__(RW_BLOCK) rw_norm_packed(const rw_program p) {
    __shared__ double halves[2][32];
    Combine smem{halves, 0};
    const RowSlot s = row_slot(L);
    const bool rms = p.mode == RW_RMS;
    for (int64_t base = (int64_t)blockIdx.x * s.gpb; base < p.rows; base += (int64_t)gridDim.x * s.gpb) {
        const bool valid = base + s.gi < p.rows;
        const RwRowAt at = rw_row_at_t<ONE>(p, valid ? base + s.gi : p.rows - 1);
        RwPacked<NV> r;
        const float sum = group_combine<RW_OP_ADD>(
            rms ? wp_load<NV, DT, WP_SUM_SQ, L>(p, at, s.t, r) : wp_load<NV, DT, WP_SUM, L>(p, at, s.t, r),
            L, smem);
        const float mean = nm_mean(p, sum);
        const float sq = rms ? sum : group_combine<RW_OP_ADD>(wp_var<NV, DT, L>(p, s.t, mean, r), L, smem);
        const float inv = nm_inv(p, sq);
        if (valid && s.t == 0) nm_store_stats(p, at, mean, inv);
        if (valid && (p.flags & RW_F_STORE_Y)) wp_norm_store<NV, DT, L, PT>(p, at, s.t, mean, inv, r);
    }
}

#endif // HIPDNN_HIP_RW_KERNELS_H
