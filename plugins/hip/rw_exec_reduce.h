// rw_exec_reduce.h — one thread's steps of a reduction (RW_REDUCE, RW_REDUCE_COLS): its
// partial result over its part of a row, or of PW_VEC rows side by side, and the store once
// the group has combined them.  Included by rw_exec.h only.
#ifndef HIPDNN_HIP_RW_EXEC_REDUCE_H
#define HIPDNN_HIP_RW_EXEC_REDUCE_H

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

#endif /* HIPDNN_HIP_RW_EXEC_REDUCE_H */
