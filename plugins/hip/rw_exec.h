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
//
// This file holds what every kind of row shares (addressing, a row's registers and
// offsets); each kind's steps are in a header of its own, included at the end
// (rw_exec_reduce.h, rw_exec_softmax.h, rw_exec_norm.h, rw_exec_norm_bwd.h).  The run-time
// compiler finds them all among the embedded headers (jit_source.c's hipe_jit_headers).
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

// ---- rows a thread holds ---------------------------------------------------------------------

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


// The families' steps, each in its own header (included here only: each uses what the ones
// before it define).
#include "rw_exec_reduce.h"
#include "rw_exec_softmax.h"
#include "rw_exec_norm.h"
#include "rw_exec_norm_bwd.h"

#endif /* HIPDNN_HIP_RW_EXEC_H */
