// rw_exec.h — what one thread of a row-wise kernel (rw_program.h) does between the points
// where the threads of a row combine their values: loads, per-thread partial results,
// and the writes once a row's statistics are known.
//
// Written once for the kernels (rw_kernels.h) and for the host emulation the tests run on
// machines without a GPU (emulate.cpp), as pw_exec.h is (included first, with the same
// macros from the includer).  The combining itself (warp shuffles and shared memory on a
// GPU, loops on the host) is the includer's: every function here is one thread's part
// of one phase, so that the emulation can run the threads of a row one after the other,
// phase by phase.
//
// A row of `cols` elements is cut into vectors of PW_VEC columns; thread t of a group of
// G threads takes vectors t, t + G, t + 2G, ... so that a warp's loads are consecutive.
// Tensors whose rows are 16-byte aligned runs of stride 1 (`reserved` set at enqueue) are
// read and written a vector at a time; others element by element through their strides.
#ifndef HIPDNN_HIP_RW_EXEC_H
#define HIPDNN_HIP_RW_EXEC_H

#include "pw_exec.h"
#include "rw_program.h"

#define RW_INF (__builtin_huge_valf())

// ---- addressing ------------------------------------------------------------------------

// The coordinates of row `row` over the row dims (innermost last).
PW_FN void rw_row_coords(const rw_program& p, int64_t row, uint32_t* coord) {
    uint32_t r = (uint32_t)row; // rows < 2^31 (rowwise_program.c declines more)
PW_UNROLL
    for (int d = RW_DIMS - 1; d >= 0; --d) {
        if (d >= p.nrd) {
            coord[d] = 0;
            continue;
        }
        const uint32_t dim = (uint32_t)p.rdims[d];
        const uint32_t q = div32(r, dim);
        coord[d] = r - q * dim;
        r = q;
    }
}

PW_FN int64_t rw_row_offset(const pw_tensor& t, const uint32_t* coord) {
    int64_t off = 0;
PW_UNROLL
    for (int d = 0; d < RW_DIMS; ++d) off += (int64_t)coord[d] * t.strides[d];
    return off;
}

// Offset of column c of tensor t (column dims `cdims`, ncd of them).
PW_FN int64_t rw_col_offset(const int64_t* cdims, int ncd, const pw_tensor& t, int64_t c) {
    if (ncd == 1) return c * t.strides[RW_DIMS];
    uint32_t r = (uint32_t)c; // columns < 2^31
    int64_t off = 0;
    for (int d = ncd - 1; d >= 1; --d) {
        const uint32_t dim = (uint32_t)cdims[d];
        const uint32_t q = div32(r, dim);
        off += (int64_t)(r - q * dim) * t.strides[RW_DIMS + d];
        r = q;
    }
    return off + (int64_t)r * t.strides[RW_DIMS];
}

// Columns c0 .. c0 + cnt - 1 (cnt <= PW_VEC, c0 a multiple of PW_VEC) of the row at
// offset roff: v[j], `fill` past cnt.
PW_FN void rw_load8(const int64_t* cdims, int ncd, const pw_tensor& t, int64_t roff, int64_t c0,
                    int cnt, float fill, float* v) {
    if (t.reserved && cnt == PW_VEC) {
        load_vec(t.ptr, t.dtype, roff + c0, v);
    } else if (t.contiguous) {
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) v[j] = j < cnt ? load_one(t.ptr, t.dtype, roff + c0 + j) : fill;
    } else {
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j)
            v[j] = j < cnt ? load_one(t.ptr, t.dtype, roff + rw_col_offset(cdims, ncd, t, c0 + j)) : fill;
    }
}

PW_FN void rw_store8(const int64_t* cdims, int ncd, const pw_tensor& t, int64_t roff, int64_t c0,
                     int cnt, const float* v) {
    if (t.reserved && cnt == PW_VEC) {
        store_vec(t.ptr, t.dtype, roff + c0, v);
    } else if (t.contiguous) {
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j)
            if (j < cnt) store_one(t.ptr, t.dtype, roff + c0 + j, v[j]);
    } else {
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j)
            if (j < cnt) store_one(t.ptr, t.dtype, roff + rw_col_offset(cdims, ncd, t, c0 + j), v[j]);
    }
}

// Columns of vector k (of PW_VEC) of a row of `cols`, 0 past the end.
PW_FN int rw_vec_count(int64_t cols, int64_t k) {
    const int64_t left = cols - k * PW_VEC;
    return left <= 0 ? 0 : left >= PW_VEC ? PW_VEC : (int)left;
}

// The fast way (DT >= 0: rw_program.fast_dt): every vector a thread touches in x and y is
// whole, 16-byte aligned and of storage DT, checked at enqueue (hipe_rw_set_vectors), so
// loads and stores are one instruction with the data type known to the compiler: no
// per-element branches, and far fewer registers (on sm_90 a row sum took 114 registers
// the general way, four 128-thread blocks an SM).  DT = -1: the general way.
template <int DT>
PW_FN void rw_ld(const rw_program& p, const pw_tensor& t, int64_t roff, int64_t c0, int cnt,
                 float fill, float* v) {
    if constexpr (DT >= 0) load_vec(t.ptr, DT, roff + c0, v);
    else rw_load8(p.cdims, p.ncd, t, roff, c0, cnt, fill, v);
}

template <int DT>
PW_FN void rw_st(const rw_program& p, const pw_tensor& t, int64_t roff, int64_t c0, int cnt,
                 const float* v) {
    if constexpr (DT >= 0) store_vec(t.ptr, DT, roff + c0, v);
    else rw_store8(p.cdims, p.ncd, t, roff, c0, cnt, v);
}

// A norm's scale or bias on the fast way: aligned whole vectors of its own type.
template <int DT>
PW_FN void rw_ld_param(const rw_program& p, const pw_tensor& t, int64_t roff, int64_t c0,
                       int cnt, float* v) {
    if constexpr (DT >= 0) load_vec(t.ptr, t.dtype, roff + c0, v);
    else rw_load8(p.cdims, p.ncd, t, roff, c0, cnt, 0.0f, v);
}

// ---- reductions ----------------------------------------------------------------------------

// The accumulator of a reduction: fp32, but fp64 for products, whose fp32 rounding errors
// do not cancel when many factors near 1 are multiplied as a tree (a product of 70000
// values in [0.999, 1.001] was 5e-5 low in fp32, 100 times its sequential error).
template <int OP>
struct RdAcc {
    typedef float T;
};
template <>
struct RdAcc<RW_OP_MUL> {
    typedef double T;
};

template <int OP>
PW_FN typename RdAcc<OP>::T rd_identity() {
    if constexpr (OP == RW_OP_ADD) return 0.0f;
    else if constexpr (OP == RW_OP_MUL) return 1.0;
    else if constexpr (OP == RW_OP_MAX) return -RW_INF;
    else return RW_INF;
}

// max and min as the pointwise ops: IEEE 754-2019 maximum / minimum (NaN wins, -0 < +0).
template <int OP, class T>
PW_FN T rd_op(T a, T b) {
    if constexpr (OP == RW_OP_ADD) return a + b;
    else if constexpr (OP == RW_OP_MUL) return a * b;
    else if constexpr (OP == RW_OP_MAX) return maximum(a, b);
    else return minimum(a, b);
}

template <int PRE>
PW_FN float rd_pre(float x) {
    return PRE == RW_PRE_ABS ? fabsf(x) : PRE == RW_PRE_SQUARE ? x * x
                                        : PRE == RW_PRE_NONZERO ? (x == 0.0f ? 1.0f : x) : x;
}

template <class T>
PW_FN float rd_post(const rw_program& p, T v) {
    const float f = (float)v;
    return p.post == RW_POST_MEAN ? f / p.count : p.post == RW_POST_SQRT ? sqrtf(f) : f;
}

// Row `row` of a split reduction is part (row % splits) of row (row / splits): its
// columns, and its row in x.
PW_FN void rd_part(const rw_program& p, int64_t row, int64_t* xrow, int64_t* c_begin,
                   int64_t* c_end) {
    if (p.splits == 1) {
        *xrow = row;
        *c_begin = 0;
        *c_end = p.cols;
        return;
    }
    const uint32_t s = (uint32_t)p.splits;
    const uint32_t q = div32((uint32_t)row, s);
    *xrow = q;
    *c_begin = (int64_t)((uint32_t)row - q * s) * p.chunk;
    *c_end = *c_begin + p.chunk < p.cols ? *c_begin + p.chunk : p.cols;
}

// Thread t's part of a row (group of G): its vectors, RW_UNROLL loaded before any is
// combined, each column into its own accumulator (shorter dependency chains).
template <int OP, int PRE, int DT = -1>
PW_FN typename RdAcc<OP>::T rd_row_partial(const rw_program& p, int64_t roff, int64_t c_begin,
                                           int64_t c_end, int t, int G) {
    typedef typename RdAcc<OP>::T T;
    T acc[PW_VEC];
PW_UNROLL
    for (int j = 0; j < PW_VEC; ++j) acc[j] = rd_identity<OP>();
    const int64_t n = c_end - c_begin;
    const int64_t nv = (n + PW_VEC - 1) / PW_VEC;
    for (int64_t v0 = t; v0 < nv; v0 += (int64_t)G * RW_UNROLL) {
        float r[RW_UNROLL][PW_VEC];
        int cnt[RW_UNROLL];
PW_UNROLL
        for (int u = 0; u < RW_UNROLL; ++u) { // vectors past the end read v0's again
            const int64_t v = v0 + (int64_t)u * G;
            const int64_t k = v < nv ? v : v0;
            cnt[u] = v < nv ? rw_vec_count(n, k) : 0;
            rw_ld<DT>(p, p.x, roff, c_begin + k * PW_VEC, rw_vec_count(n, k), 0.0f, r[u]);
        }
PW_UNROLL
        for (int u = 0; u < RW_UNROLL; ++u)
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j)
                if (j < cnt[u]) acc[j] = rd_op<OP>(acc[j], (T)rd_pre<PRE>(r[u][j]));
    }
    T a = acc[0];
PW_UNROLL
    for (int j = 1; j < PW_VEC; ++j) a = rd_op<OP>(a, acc[j]);
    return a;
}

// The row's result, once combined, from its group's first thread.  A part of a split
// row goes to the parts' buffer (fp32, row-major [rows][splits]): at its own index.
template <class T>
PW_FN void rd_row_store(const rw_program& p, int64_t row, T v) {
    if (p.splits > 1) {
        static_cast<float*>(p.y.ptr)[row] = (float)v;
        return;
    }
    uint32_t coord[RW_DIMS];
    rw_row_coords(p, row, coord);
    store_one(p.y.ptr, p.y.dtype, rw_row_offset(p.y, coord), rd_post(p, v));
}

// Column reductions: thread (tx, ty) of a block takes the W (PW_VEC or 1) neighbouring
// outputs from `out0` (x.contiguous: the innermost row dim holds whole runs of PW_VEC)
// and the reduced positions ty, ty + RW_COL_Y, ... of its part; acc[j] per output.
template <int OP, int PRE>
PW_FN void rd_col_partial(const rw_program& p, int64_t out0, int ty, typename RdAcc<OP>::T* acc) {
    typedef typename RdAcc<OP>::T T;
    const int W = p.x.contiguous ? PW_VEC : 1;
    int64_t xrow = out0, k_begin = 0, k_end = p.cols;
    if (p.splits > 1) { // out0 counts outputs of every part: part-major
        const int64_t part = out0 / (p.rows);
        xrow = out0 - part * p.rows;
        k_begin = part * p.chunk;
        k_end = k_begin + p.chunk < p.cols ? k_begin + p.chunk : p.cols;
    }
    uint32_t coord[RW_DIMS];
    rw_row_coords(p, xrow, coord);
    const int64_t roff = rw_row_offset(p.x, coord);
    const int64_t inner = p.x.strides[p.nrd - 1];
PW_UNROLL
    for (int j = 0; j < PW_VEC; ++j) acc[j] = rd_identity<OP>();
    for (int64_t k0 = k_begin + ty; k0 < k_end; k0 += (int64_t)RW_COL_Y * RW_UNROLL) {
        float r[RW_UNROLL][PW_VEC];
PW_UNROLL
        for (int u = 0; u < RW_UNROLL; ++u) {
            const int64_t k = k0 + (int64_t)u * RW_COL_Y < k_end ? k0 + (int64_t)u * RW_COL_Y : k0;
            const int64_t off = roff + rw_col_offset(p.cdims, p.ncd, p.x, k);
            if (p.x.reserved) {
                load_vec(p.x.ptr, p.x.dtype, off, r[u]);
            } else {
PW_UNROLL
                for (int j = 0; j < PW_VEC; ++j)
                    r[u][j] = j < W ? load_one(p.x.ptr, p.x.dtype, off + j * inner) : 0.0f;
            }
        }
PW_UNROLL
        for (int u = 0; u < RW_UNROLL; ++u)
            if (k0 + (int64_t)u * RW_COL_Y < k_end)
PW_UNROLL
                for (int j = 0; j < PW_VEC; ++j) acc[j] = rd_op<OP>(acc[j], (T)rd_pre<PRE>(r[u][j]));
    }
}

// The W outputs from out0, combined.  Parts of a split reduction go to the parts' buffer
// (fp32, part-major [splits][rows]: a block's outputs stay side by side).
template <class T>
PW_FN void rd_col_store(const rw_program& p, int64_t out0, const T* v) {
    const int W = p.x.contiguous ? PW_VEC : 1;
    if (p.splits > 1) {
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j)
            if (j < W) static_cast<float*>(p.y.ptr)[out0 + j] = (float)v[j];
        return;
    }
    uint32_t coord[RW_DIMS];
    rw_row_coords(p, out0, coord);
    const int64_t off = rw_row_offset(p.y, coord);
    const int64_t inner = p.y.strides[p.nrd - 1];
PW_UNROLL
    for (int j = 0; j < PW_VEC; ++j)
        if (j < W) store_one(p.y.ptr, p.y.dtype, off + j * inner, rd_post(p, v[j]));
}

// ---- softmax ---------------------------------------------------------------------------------

PW_FN float rw_round(int dtype, float v) {
    return dtype == PW_F16 ? hd_half_to_float(hd_float_to_half(v))
           : dtype == PW_BF16 ? hd_bf16_to_float(hd_float_to_bf16(v)) : v;
}

// Registers of one thread: V vectors of its row (V = 0: none, the row is read again).
template <int V>
struct RwRow {
    float v[V > 0 ? V : 1][PW_VEC];
};

// Row offsets a thread needs, found once per row.
struct RwRowAt {
    int64_t row;
    int64_t x, y, mean, inv_var, scale, bias;
    int64_t dy, sum_dyx, sum_dy; // norm backward
};

PW_FN RwRowAt rw_row_at(const rw_program& p, int64_t row) {
    uint32_t coord[RW_DIMS];
    rw_row_coords(p, row, coord);
    RwRowAt at;
    at.row = row;
    at.x = rw_row_offset(p.x, coord);
    at.y = rw_row_offset(p.y, coord);
    at.mean = rw_row_offset(p.mean, coord);
    at.inv_var = rw_row_offset(p.inv_var, coord);
    at.scale = rw_row_offset(p.scale, coord);
    at.bias = rw_row_offset(p.bias, coord);
    at.dy = rw_row_offset(p.dy, coord);
    at.sum_dyx = rw_row_offset(p.sum_dyx, coord);
    at.sum_dy = rw_row_offset(p.sum_dy, coord);
    return at;
}

// The same where the rows are one dim (nrd == 1: every row dim merged, the usual case):
// one multiply an offset instead of a walk over RW_DIMS coordinates with a division each,
// which took a hundred instructions a row of the packed norm kernel (RESULTS.md,
// fourteenth run).
template <bool ONE_DIM>
PW_FN RwRowAt rw_row_at_t(const rw_program& p, int64_t row) {
    if constexpr (!ONE_DIM) {
        return rw_row_at(p, row);
    } else {
        RwRowAt at;
        at.row = row;
        at.x = row * p.x.strides[0];
        at.y = row * p.y.strides[0];
        at.mean = row * p.mean.strides[0];
        at.inv_var = row * p.inv_var.strides[0];
        at.scale = row * p.scale.strides[0];
        at.bias = row * p.bias.strides[0];
        at.dy = row * p.dy.strides[0];
        at.sum_dyx = row * p.sum_dyx.strides[0];
        at.sum_dy = row * p.sum_dy.strides[0];
        return at;
    }
}

// Phase 1: load the row (V > 0) and the thread's max.
template <int V, int DT = -1>
PW_FN float sm_max(const rw_program& p, const RwRowAt& at, int t, int G, RwRow<V>& r) {
    float m = -RW_INF;
    if (V > 0) {
PW_UNROLL
        for (int v = 0; v < (V > 0 ? V : 1); ++v) {
            const int64_t k = t + (int64_t)v * G;
            const int cnt = rw_vec_count(p.cols, k);
            if (cnt > 0) rw_ld<DT>(p, p.x, at.x, k * PW_VEC, cnt, -RW_INF, r.v[v]);
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j)
                if (j < cnt) m = maximum(m, r.v[v][j]);
        }
    } else {
        float x[PW_VEC];
        for (int64_t k = t; k * PW_VEC < p.cols; k += G) {
            const int cnt = rw_vec_count(p.cols, k);
            rw_ld<DT>(p, p.x, at.x, k * PW_VEC, cnt, -RW_INF, x);
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j)
                if (j < cnt) m = maximum(m, x[j]);
        }
    }
    return m;
}

// exp(x - m), each step rounded as the graph's tensors are.
PW_FN float sm_exp(const rw_program& p, float x, float m) {
    return rw_round(p.round[2], expf(rw_round(p.round[1], x - m)));
}

// Phase 2: e = exp(x - m) in place of x (V > 0) and the thread's sum of e.
template <int V, int DT = -1>
PW_FN float sm_sum(const rw_program& p, const RwRowAt& at, int t, int G, float m, RwRow<V>& r) {
    float s[PW_VEC];
PW_UNROLL
    for (int j = 0; j < PW_VEC; ++j) s[j] = 0.0f;
    if (V > 0) {
PW_UNROLL
        for (int v = 0; v < (V > 0 ? V : 1); ++v) {
            const int cnt = rw_vec_count(p.cols, t + (int64_t)v * G);
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j)
                if (j < cnt) {
                    r.v[v][j] = sm_exp(p, r.v[v][j], m);
                    s[j] += r.v[v][j];
                }
        }
    } else {
        float x[PW_VEC];
        for (int64_t k = t; k * PW_VEC < p.cols; k += G) {
            const int cnt = rw_vec_count(p.cols, k);
            rw_ld<DT>(p, p.x, at.x, k * PW_VEC, cnt, 0.0f, x);
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j)
                if (j < cnt) s[j] += sm_exp(p, x[j], m);
        }
    }
    float a = s[0];
PW_UNROLL
    for (int j = 1; j < PW_VEC; ++j) a += s[j];
    return a;
}

// Phase 3: y = e / s, as e times 1 / s (within an ulp of the division, which costs a
// dozen instructions an element on a GPU).
template <int V, int DT = -1>
PW_FN void sm_store(const rw_program& p, const RwRowAt& at, int t, int G, float m, float s,
                    RwRow<V>& r) {
    const float inv = 1.0f / s;
    if (V > 0) {
PW_UNROLL
        for (int v = 0; v < (V > 0 ? V : 1); ++v) {
            const int64_t k = t + (int64_t)v * G;
            const int cnt = rw_vec_count(p.cols, k);
            if (cnt == 0) continue;
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j) r.v[v][j] = r.v[v][j] * inv;
            rw_st<DT>(p, p.y, at.y, k * PW_VEC, cnt, r.v[v]);
        }
    } else {
        float x[PW_VEC];
        for (int64_t k = t; k * PW_VEC < p.cols; k += G) {
            const int cnt = rw_vec_count(p.cols, k);
            rw_ld<DT>(p, p.x, at.x, k * PW_VEC, cnt, 0.0f, x);
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j) x[j] = sm_exp(p, x[j], m) * inv;
            rw_st<DT>(p, p.y, at.y, k * PW_VEC, cnt, x);
        }
    }
}

// ---- norms -------------------------------------------------------------------------------------

// Phase 1: load the row (V > 0); the thread's sum of x (layer) or of x^2 (RMS).
template <int V, int DT = -1>
PW_FN float nm_sum(const rw_program& p, const RwRowAt& at, int t, int G, RwRow<V>& r) {
    float s[PW_VEC];
PW_UNROLL
    for (int j = 0; j < PW_VEC; ++j) s[j] = 0.0f;
    const bool rms = p.mode == RW_RMS;
    if (V > 0) {
PW_UNROLL
        for (int v = 0; v < (V > 0 ? V : 1); ++v) {
            const int64_t k = t + (int64_t)v * G;
            const int cnt = rw_vec_count(p.cols, k);
            if (cnt > 0) rw_ld<DT>(p, p.x, at.x, k * PW_VEC, cnt, 0.0f, r.v[v]);
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j)
                if (j < cnt) s[j] += rms ? r.v[v][j] * r.v[v][j] : r.v[v][j];
        }
    } else {
        float x[PW_VEC];
        for (int64_t k = t; k * PW_VEC < p.cols; k += G) {
            const int cnt = rw_vec_count(p.cols, k);
            rw_ld<DT>(p, p.x, at.x, k * PW_VEC, cnt, 0.0f, x);
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j)
                if (j < cnt) s[j] += rms ? x[j] * x[j] : x[j];
        }
    }
    float a = s[0];
PW_UNROLL
    for (int j = 1; j < PW_VEC; ++j) a += s[j];
    return a;
}

// Phase 2 (mean-centred norms): the thread's sum of (x - mean)^2, from its registers or
// from memory again.
template <int V, int DT = -1>
PW_FN float nm_var(const rw_program& p, const RwRowAt& at, int t, int G, float mean,
                   const RwRow<V>& r) {
    float s[PW_VEC];
PW_UNROLL
    for (int j = 0; j < PW_VEC; ++j) s[j] = 0.0f;
    if (V > 0) {
PW_UNROLL
        for (int v = 0; v < (V > 0 ? V : 1); ++v) {
            const int cnt = rw_vec_count(p.cols, t + (int64_t)v * G);
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j)
                if (j < cnt) {
                    const float d = r.v[v][j] - mean;
                    s[j] += d * d;
                }
        }
    } else {
        float x[PW_VEC];
        for (int64_t k = t; k * PW_VEC < p.cols; k += G) {
            const int cnt = rw_vec_count(p.cols, k);
            rw_ld<DT>(p, p.x, at.x, k * PW_VEC, cnt, 0.0f, x);
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j)
                if (j < cnt) {
                    const float d = x[j] - mean;
                    s[j] += d * d;
                }
        }
    }
    float a = s[0];
PW_UNROLL
    for (int j = 1; j < PW_VEC; ++j) a += s[j];
    return a;
}

// The statistics of a row, from its group's first thread.
PW_FN void nm_store_stats(const rw_program& p, const RwRowAt& at, float mean, float inv) {
    if (p.flags & RW_F_MEAN) store_one(p.mean.ptr, p.mean.dtype, at.mean, mean);
    if (p.flags & RW_F_INV_VAR) store_one(p.inv_var.ptr, p.inv_var.dtype, at.inv_var, inv);
}

// A vector of a row, for the epilogue's loads and stores (pw_exec.h's pw_store finds the
// overload below through the argument's type).
struct RwVec {
    const int64_t* in_off;  // row offsets of the epilogue's inputs
    const int64_t* out_off; // and outputs
    int64_t c0;
    int cnt;
};

PW_FN void pw_store(const pw_program& p, const pw_instr& ins, const RwVec& at, const float* v) {
    rw_store8(p.dims, p.ndim, p.out[ins.a], at.out_off[ins.a], at.c0, at.cnt, v);
}

// The epilogue's inputs but the norm's y (already in slot p.ep_y), for vector `at`.
template <int S>
PW_FN void nm_epilogue_loads(const rw_program& p, const RwVec& at, float (&r)[PW_SLOTS][PW_VEC]) {
PW_UNROLL
    for (int i = 0; i < S; ++i)
        if (i < p.ep.nin && i != p.ep_y)
            rw_load8(p.ep.dims, p.ep.ndim, p.ep.in[i], at.in_off[i], at.c0, at.cnt, 0.0f, r[i]);
}

// y of one vector from x (v in place), then its store and the epilogue.
template <int S, int DT = -1>
PW_FN void nm_finish_vec(const rw_program& p, const RwRowAt& at, const int64_t* in_off,
                         const int64_t* out_off, int64_t k, int cnt, float mean, float inv,
                         float* v) {
    float sc[PW_VEC], b[PW_VEC];
    rw_ld_param<DT>(p, p.scale, at.scale, k * PW_VEC, cnt, sc);
    if (p.flags & RW_F_BIAS) {
        rw_ld_param<DT>(p, p.bias, at.bias, k * PW_VEC, cnt, b);
    } else {
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) b[j] = 0.0f;
    }
    const float g1 = (p.flags & RW_F_GAMMA1) ? 1.0f : 0.0f;
    // an epilogue reads y as stored (rounded to y's type); the store rounds it anyway
    const bool round = S > 0 && (p.flags & RW_F_EPILOGUE);
PW_UNROLL
    for (int j = 0; j < PW_VEC; ++j) {
        const float y = (v[j] - mean) * inv * (sc[j] + g1) + b[j];
        v[j] = round ? rw_round(p.y.dtype, y) : y;
    }
    if (p.flags & RW_F_STORE_Y) rw_st<DT>(p, p.y, at.y, k * PW_VEC, cnt, v);
    if (S > 0 && (p.flags & RW_F_EPILOGUE)) {
        float r[PW_SLOTS][PW_VEC];
        const RwVec rv{in_off, out_off, k * PW_VEC, cnt};
        put_slot<S>(p.ep_y, r, v);
        nm_epilogue_loads<S>(p, rv, r);
        float acc[PW_VEC], o[PW_VEC];
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) acc[j] = 0.0f;
        PwInterpreted::run<S>(p.ep, rv, r, acc, o);
    }
}

// The epilogue's row offsets of row `row`.
PW_FN void nm_epilogue_rows(const rw_program& p, int64_t row, int64_t* in_off, int64_t* out_off) {
    uint32_t coord[RW_DIMS];
    rw_row_coords(p, row, coord);
    for (int i = 0; i < PW_MAX_INPUTS; ++i)
        in_off[i] = i < p.ep.nin ? rw_row_offset(p.ep.in[i], coord) : 0;
    for (int i = 0; i < PW_MAX_OUTPUTS; ++i)
        out_off[i] = i < p.ep.nout ? rw_row_offset(p.ep.out[i], coord) : 0;
}

// Phase 3: y for each of the thread's vectors (S: the epilogue's slots, 0 without one).
// mean is 0 for RMS norms.
template <int V, int S, int DT = -1>
PW_FN void nm_store(const rw_program& p, const RwRowAt& at, int t, int G, float mean, float inv,
                    RwRow<V>& r) {
    int64_t in_off[PW_MAX_INPUTS], out_off[PW_MAX_OUTPUTS];
    if (S > 0 && (p.flags & RW_F_EPILOGUE)) nm_epilogue_rows(p, at.row, in_off, out_off);
    if (V > 0) {
PW_UNROLL
        for (int v = 0; v < (V > 0 ? V : 1); ++v) {
            const int64_t k = t + (int64_t)v * G;
            const int cnt = rw_vec_count(p.cols, k);
            if (cnt > 0) nm_finish_vec<S, DT>(p, at, in_off, out_off, k, cnt, mean, inv, r.v[v]);
        }
    } else {
        float x[PW_VEC];
        for (int64_t k = t; k * PW_VEC < p.cols; k += G) {
            const int cnt = rw_vec_count(p.cols, k);
            rw_ld<DT>(p, p.x, at.x, k * PW_VEC, cnt, 0.0f, x);
            nm_finish_vec<S, DT>(p, at, in_off, out_off, k, cnt, mean, inv, x);
        }
    }
}

// The statistics from the combined sums: mean (0 for RMS) and 1 / sqrt(var + eps).
PW_FN float nm_mean(const rw_program& p, float sum) {
    return p.mode == RW_RMS ? 0.0f : sum / (float)p.cols;
}

PW_FN float nm_inv(const rw_program& p, float sum_sq) {
    return 1.0f / sqrtf(sum_sq / (float)p.cols + p.eps);
}

// ---- norm backward (RW_NORM_BWD) ------------------------------------------------------------
// A row is one statistic's elements.  Phase 1 computes xhat and g = dy * gamma of the
// thread's vectors (kept in registers when V > 0) and its partial sums; the group combines
// them; phase 2 writes dx.  Column parts (RW_F_COL_PARTS, V of 1 or 2) accumulate dy * xhat
// and dy per column over every row the group takes, in the thread's registers, and are
// stored once at the end: the dscale and dbias of a layer / RMS norm without a second pass
// over x and dy.

// The row's mean (0 for RMS) and inv_variance, as given.
PW_FN void nb_stats(const rw_program& p, const RwRowAt& at, float* mean, float* inv) {
    *mean = p.mode == RW_RMS ? 0.0f : load_one(p.mean.ptr, p.mean.dtype, at.mean);
    *inv = load_one(p.inv_var.ptr, p.inv_var.dtype, at.inv_var);
}

// xhat = (x - mean) * inv in x's place and g = dy * (scale + g1) of one vector, its x, dy
// and scale loaded (scale zeros where dx is not written): the arithmetic both backward
// kernels share, the fp32-holding one (nb_vec) and the 16-bit one (nbp_vec).
PW_FN void nb_xhat_g(const rw_program& p, float mean, float inv, const float* sc, float* xh,
                     const float* dyv, float* g) {
    const float g1 = (p.flags & RW_F_GAMMA1) ? 1.0f : 0.0f;
PW_UNROLL
    for (int j = 0; j < PW_VEC; ++j) {
        xh[j] = (xh[j] - mean) * inv;
        g[j] = dyv[j] * (sc[j] + g1);
    }
}

// xhat and g of vector k (cnt columns), and the four sums: g, g * xhat, dy * xhat, dy.
// DT >= 0: the fast way (x, dy and dx whole aligned vectors of that type, scale a
// contiguous row).  Without dx (no RW_F_STORE_Y) scale is not read: g's sums are dx's.
template <int DT = -1>
PW_FN void nb_vec(const rw_program& p, const RwRowAt& at, int64_t k, int cnt, float mean,
                  float inv, float* xh, float* g, float* dyv, float* sums) {
    float sc[PW_VEC];
    rw_ld<DT>(p, p.x, at.x, k * PW_VEC, cnt, 0.0f, xh);
    rw_ld<DT>(p, p.dy, at.dy, k * PW_VEC, cnt, 0.0f, dyv);
    if (p.flags & RW_F_STORE_Y) {
        rw_ld_param<DT>(p, p.scale, at.scale, k * PW_VEC, cnt, sc);
    } else {
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) sc[j] = 0.0f;
    }
    nb_xhat_g(p, mean, inv, sc, xh, dyv, g);
PW_UNROLL
    for (int j = 0; j < PW_VEC; ++j)
        if (j < cnt) {
            sums[0] += g[j];
            sums[1] += g[j] * xh[j];
            sums[2] += dyv[j] * xh[j];
            sums[3] += dyv[j];
        }
}

// Phase 1.  cp1 / cp2: the thread's column parts (V vectors), added to when `parts`.
template <int V, int DT = -1>
PW_FN void nb_load(const rw_program& p, const RwRowAt& at, int t, int G, float mean, float inv,
                   RwRow<V>& xh, RwRow<V>& g, float* sums, float (*cp1)[PW_VEC],
                   float (*cp2)[PW_VEC], bool parts) {
PW_UNROLL
    for (int i = 0; i < 4; ++i) sums[i] = 0.0f;
    if (V > 0) {
PW_UNROLL
        for (int v = 0; v < (V > 0 ? V : 1); ++v) {
            const int64_t k = t + (int64_t)v * G;
            const int cnt = rw_vec_count(p.cols, k);
            if (cnt == 0) continue;
            float dyv[PW_VEC];
            nb_vec<DT>(p, at, k, cnt, mean, inv, xh.v[v], g.v[v], dyv, sums);
            if (parts)
PW_UNROLL
                for (int j = 0; j < PW_VEC; ++j) {
                    cp1[v][j] += dyv[j] * xh.v[v][j];
                    cp2[v][j] += dyv[j];
                }
        }
    } else {
        float x[PW_VEC], gg[PW_VEC], dyv[PW_VEC];
        for (int64_t k = t; k * PW_VEC < p.cols; k += G)
            nb_vec<DT>(p, at, k, rw_vec_count(p.cols, k), mean, inv, x, gg, dyv, sums);
    }
}

// Phase 2: dx = inv * (g - s_g / n - xhat * s_gx / n), without the s_g term for RMS (no
// mean was taken).
template <int V, int DT = -1>
PW_FN void nb_store(const rw_program& p, const RwRowAt& at, int t, int G, float s_g, float s_gx,
                    float mean, float inv, RwRow<V>& xh, RwRow<V>& g) {
    const float a = p.mode == RW_RMS ? 0.0f : s_g / (float)p.cols, b = s_gx / (float)p.cols;
    float dx[PW_VEC];
    if (V > 0) {
PW_UNROLL
        for (int v = 0; v < (V > 0 ? V : 1); ++v) {
            const int64_t k = t + (int64_t)v * G;
            const int cnt = rw_vec_count(p.cols, k);
            if (cnt == 0) continue;
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j) dx[j] = inv * (g.v[v][j] - a - xh.v[v][j] * b);
            rw_st<DT>(p, p.y, at.y, k * PW_VEC, cnt, dx);
        }
    } else {
        float x[PW_VEC], gg[PW_VEC], dyv[PW_VEC], unused[4];
        for (int64_t k = t; k * PW_VEC < p.cols; k += G) {
            const int cnt = rw_vec_count(p.cols, k);
            nb_vec<DT>(p, at, k, cnt, mean, inv, x, gg, dyv, unused);
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j) dx[j] = inv * (gg[j] - a - x[j] * b);
            rw_st<DT>(p, p.y, at.y, k * PW_VEC, cnt, dx);
        }
    }
}

// A row's sums of dy * xhat and dy (RW_F_ROW_SUMS), from its group's first thread.
PW_FN void nb_store_sums(const rw_program& p, const RwRowAt& at, float dyx, float dy) {
    if (p.sum_dyx.ptr) store_one(p.sum_dyx.ptr, p.sum_dyx.dtype, at.sum_dyx, dyx);
    if (p.sum_dy.ptr) store_one(p.sum_dy.ptr, p.sum_dy.dtype, at.sum_dy, dy);
}

template <int V>
PW_FN void nb_zero_parts(float (*cp1)[PW_VEC], float (*cp2)[PW_VEC]) {
PW_UNROLL
    for (int v = 0; v < (V > 0 ? V : 1); ++v)
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) cp1[v][j] = cp2[v][j] = 0.0f;
}

// The rows group q of a norm backward takes: lo + i for i = g, g + step, ... below n.  With
// column parts (RW_F_COL_PARTS) a group takes rows of one set only (rw_program.part_sets),
// else the grid strides over every row.  Every group of the grid loops ceil(n / step)
// times (a row past the end redoes the last row and stores nothing).
struct NbWalk {
    int64_t lo, g, step, n;
    bool group_valid; // a group past the grid's parts takes no row
};

PW_FN NbWalk nb_walk(const rw_program& p, int64_t q, int64_t grid_groups) {
    if (!(p.flags & RW_F_COL_PARTS)) return NbWalk{0, q, grid_groups, p.rows, true};
    const int64_t set = q / p.part_groups;
    return NbWalk{set * p.set_rows, q - set * p.part_groups, p.part_groups, p.set_rows,
                  set < p.part_sets};
}

// Row i0 + g of the walk, or the last row where that is past the end (valid false).
PW_FN int64_t nb_walk_row(const rw_program& p, const NbWalk& w, int64_t i0, bool* valid) {
    *valid = w.group_valid && i0 + w.g < w.n;
    return *valid ? w.lo + i0 + w.g : p.rows - 1;
}

// The column parts of group `grp` (fp32, [part_sets * part_groups, cols] packed).
template <int V>
PW_FN void nb_store_parts(const rw_program& p, int64_t grp, int t, int G, float (*cp1)[PW_VEC],
                          float (*cp2)[PW_VEC]) {
    if (grp >= p.part_groups * p.part_sets) return;
PW_UNROLL
    for (int v = 0; v < (V > 0 ? V : 1); ++v) {
        const int64_t k = t + (int64_t)v * G;
        const int cnt = rw_vec_count(p.cols, k);
        const int64_t at = grp * p.cols + k * PW_VEC;
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j)
            if (j < cnt) {
                if (p.sum_dyx.ptr) static_cast<float*>(p.sum_dyx.ptr)[at + j] = cp1[v][j];
                if (p.sum_dy.ptr) static_cast<float*>(p.sum_dy.ptr)[at + j] = cp2[v][j];
            }
    }
}

// ---- norm rows held packed (RW_F_PACKED, the fast way of 16-bit storage) ------------------
// Thread t of the row's L threads holds vectors t, t + L, ... of x as loaded (a 16-byte
// vector is 4 registers of 8 values) and unpacks them in each pass.  Every vector is whole
// and aligned (fast_dt), vectors past the row's end are skipped.

template <int NV>
struct RwPacked {
    uint4 q[NV];
};

template <int DT>
PW_FN void rw_unpack(const uint4& q, float* v) {
    const unsigned int w[4] = {q.x, q.y, q.z, q.w};
PW_UNROLL
    for (int k = 0; k < 4; ++k) {
        v[2 * k] = from16(DT, w[k] & 0xffffu);
        v[2 * k + 1] = from16(DT, w[k] >> 16);
    }
}

enum { WP_SUM = 1, WP_SUM_SQ = 2 };

// Phase 1: load the lane's vectors; their sum or sum of squares.
template <int NV, int DT, int WHAT, int L>
PW_FN float wp_load(const rw_program& p, const RwRowAt& at, int lane, RwPacked<NV>& r) {
    const int64_t nvec = p.cols / PW_VEC;
    float acc = 0.0f;
PW_UNROLL
    for (int i = 0; i < NV; ++i) {
        const int64_t k = lane + (int64_t)i * L;
        if (k >= nvec) continue;
        r.q[i] = *reinterpret_cast<const uint4*>(static_cast<const unsigned short*>(p.x.ptr) +
                                                 at.x + k * PW_VEC);
    }
PW_UNROLL
    for (int i = 0; i < NV; ++i) {
        if (lane + (int64_t)i * L >= nvec) continue;
        float v[PW_VEC];
        rw_unpack<DT>(r.q[i], v);
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j)
            acc = WHAT == WP_SUM ? acc + v[j] : fmaf(v[j], v[j], acc);
    }
    return acc;
}

// Norm phase 2 (mean-centred norms): the lane's sum of (x - mean)^2.
template <int NV, int DT, int L>
PW_FN float wp_var(const rw_program& p, int lane, float mean, const RwPacked<NV>& r) {
    const int64_t nvec = p.cols / PW_VEC;
    float acc = 0.0f;
PW_UNROLL
    for (int i = 0; i < NV; ++i) {
        if (lane + (int64_t)i * L >= nvec) continue;
        float v[PW_VEC];
        rw_unpack<DT>(r.q[i], v);
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) {
            const float d = v[j] - mean;
            acc = fmaf(d, d, acc);
        }
    }
    return acc;
}

// Vector k of a packed norm's scale or bias (storage type PT, or t's where -1) at the row's
// offset `at`: PW_VEC columns of a contiguous row, or the row's one value (RW_F_ROW_PARAMS).
template <int PT>
PW_FN void wp_param(const rw_program& p, const pw_tensor& t, int64_t at, int64_t k, float* v) {
    const int dt = PT >= 0 ? PT : t.dtype;
    if (p.flags & RW_F_ROW_PARAMS) {
        const float one = load_one(t.ptr, dt, at);
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) v[j] = one;
    } else {
        load_vec(t.ptr, dt, at + k * PW_VEC, v);
    }
}

// Norm phase 3: y for each of the lane's vectors (mean 0 for RMS norms).  PT: scale's and
// bias's storage type where the kernel knows it (kernel_names.c's param_type), -1 where it
// reads it from the tensors.
template <int NV, int DT, int L, int PT = -1>
PW_FN void wp_norm_store(const rw_program& p, const RwRowAt& at, int lane, float mean, float inv,
                         const RwPacked<NV>& r) {
    const int64_t nvec = p.cols / PW_VEC;
    const bool bias = (p.flags & RW_F_BIAS) != 0;
    const float g1 = (p.flags & RW_F_GAMMA1) ? 1.0f : 0.0f;
PW_UNROLL
    for (int i = 0; i < NV; ++i) {
        const int64_t k = lane + (int64_t)i * L;
        if (k >= nvec) continue;
        float v[PW_VEC], sc[PW_VEC], b[PW_VEC];
        wp_param<PT>(p, p.scale, at.scale, k, sc);
        if (bias) {
            wp_param<PT>(p, p.bias, at.bias, k, b);
        } else {
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j) b[j] = 0.0f;
        }
        rw_unpack<DT>(r.q[i], v);
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) v[j] = (v[j] - mean) * inv * (sc[j] + g1) + b[j];
        store_vec(p.y.ptr, DT, at.y + k * PW_VEC, v);
    }
}

// ---- norm backward of 16-bit rows held packed (the fast way, V of 1 or 2) -------------------
// x and dy held as loaded (4 registers a vector each, where xhat and g in fp32 took 16), with
// xhat and g computed again for dx; rows one dim and the scale's type known where ONE and PT
// say so, as the packed norm's.  The fp32-holding kernel took 123 registers, two blocks of 256
// threads an SM, and 0.84x PyTorch's layernorm backward (RESULTS.md, fourteenth run).  Same
// arithmetic as nb_vec / nb_store, element for element.

template <int V>
struct NbPacked {
    uint4 x[V], dy[V];
};

// Phase 1a: load the thread's vectors of x and dy (the kernel does so for the next row
// while the group combines this one's sums).
template <int V>
PW_FN void nbp_fetch(const rw_program& p, const RwRowAt& at, int t, int G, NbPacked<V>& r) {
    const int64_t nvec = p.cols / PW_VEC;
PW_UNROLL
    for (int v = 0; v < V; ++v) {
        const int64_t k = t + (int64_t)v * G;
        if (k >= nvec) continue;
        r.x[v] = *reinterpret_cast<const uint4*>(static_cast<const unsigned short*>(p.x.ptr) +
                                                 at.x + k * PW_VEC);
        r.dy[v] = *reinterpret_cast<const uint4*>(static_cast<const unsigned short*>(p.dy.ptr) +
                                                  at.dy + k * PW_VEC);
    }
}

// Vector v of the thread's held x and dy, unpacked to xhat and dy (in x's and dy's place)
// and g = dy * (scale + g1) of it (scale read only when `scaled`: without dx it is not).
template <int V, int DT, int PT>
PW_FN void nbp_vec(const rw_program& p, const RwRowAt& at, const NbPacked<V>& r, int v, int64_t k,
                   float mean, float inv, bool scaled, float* xh, float* dyv, float* g) {
    float sc[PW_VEC];
    rw_unpack<DT>(r.x[v], xh);
    rw_unpack<DT>(r.dy[v], dyv);
    if (scaled) {
        wp_param<PT>(p, p.scale, at.scale, k, sc);
    } else {
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) sc[j] = 0.0f;
    }
    nb_xhat_g(p, mean, inv, sc, xh, dyv, g);
}

// Phase 1b: the four sums and the column parts of the vectors held.
template <int V, int DT, int PT>
PW_FN void nbp_sums(const rw_program& p, const RwRowAt& at, int t, int G, float mean, float inv,
                    const NbPacked<V>& r, float* sums, float (*cp1)[PW_VEC],
                    float (*cp2)[PW_VEC], bool parts) {
    const int64_t nvec = p.cols / PW_VEC;
    const bool dx = (p.flags & RW_F_STORE_Y) != 0; // without dx, scale is not read
PW_UNROLL
    for (int i = 0; i < 4; ++i) sums[i] = 0.0f;
PW_UNROLL
    for (int v = 0; v < V; ++v) {
        const int64_t k = t + (int64_t)v * G;
        if (k >= nvec) continue;
        float xh[PW_VEC], dyv[PW_VEC], g[PW_VEC];
        nbp_vec<V, DT, PT>(p, at, r, v, k, mean, inv, dx, xh, dyv, g);
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) {
            sums[0] += g[j];
            sums[1] += g[j] * xh[j];
            sums[2] += dyv[j] * xh[j];
            sums[3] += dyv[j];
            if (parts) {
                cp1[v][j] += dyv[j] * xh[j];
                cp2[v][j] += dyv[j];
            }
        }
    }
}

// Phase 2: dx = inv * (g - s_g / n - xhat * s_gx / n), as nb_store.
template <int V, int DT, int PT>
PW_FN void nbp_store(const rw_program& p, const RwRowAt& at, int t, int G, float s_g, float s_gx,
                     float mean, float inv, const NbPacked<V>& r) {
    const int64_t nvec = p.cols / PW_VEC;
    const float a = p.mode == RW_RMS ? 0.0f : s_g / (float)p.cols, b = s_gx / (float)p.cols;
PW_UNROLL
    for (int v = 0; v < V; ++v) {
        const int64_t k = t + (int64_t)v * G;
        if (k >= nvec) continue;
        float xh[PW_VEC], dyv[PW_VEC], g[PW_VEC];
        nbp_vec<V, DT, PT>(p, at, r, v, k, mean, inv, true, xh, dyv, g);
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) xh[j] = inv * (g[j] - a - xh[j] * b);
        store_vec(p.y.ptr, DT, at.y + k * PW_VEC, xh);
    }
}

#endif /* HIPDNN_HIP_RW_EXEC_H */
