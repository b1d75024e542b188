// pw_exec.h — what one thread of the fused pointwise kernel does, for PW_VEC elements of
// one row: read the inputs, run the pw_program (pw_program.h) in fp32, write the outputs.
//
// Written once for the kernel (pointwise.hip, PW_FN = __device__ __forceinline__) and for
// the host emulation the tests run on machines without a GPU (PW_FN = static inline), so
// that the program compiler and every indexing and numeric rule here are checked against
// the reference engine everywhere.  The includer provides PW_FN (device functions),
// PW_HOST_FN (functions the launcher calls too), PW_UNROLL (an unroll pragma), the fp16 / bf16
// conversions hd_half_to_float, hd_float_to_half, hd_bf16_to_float, hd_float_to_bf16,
// float4 / uint4 and the math functions.
//
// Contiguous tensors are addressed by the linear index and, when aligned and the step is
// whole, read and written with 16-byte vector accesses; other tensors (broadcast,
// strided) through their strides.  The accumulator and up to S slots of PW_VEC values live
// in registers; slot numbers are resolved by switches whose cases index the register
// arrays with constants, so nothing spills to local memory.
#ifndef HIPDNN_HIP_PW_EXEC_H
#define HIPDNN_HIP_PW_EXEC_H

#include "pw_program.h"


struct Pos {
    int64_t row; // row of the iteration space (all dims but the innermost)
    int64_t c0;  // first column of this step
    int64_t e;   // linear index of (row, c0)
    int cnt;     // elements in this step (PW_VEC but at a row's end)
};

// Rows and groups of a multi-dim space fit in 31 bits (program.c declines larger ones), so
// its index arithmetic divides in 32 bits: a 64-bit division costs many more registers.
PW_FN uint32_t div32(uint32_t a, uint32_t b) { return a / b; }

PW_FN float load_one(const void* base, int dtype, int64_t off) {
    switch (dtype) {
    case PW_F16: return hd_half_to_float(static_cast<const unsigned short*>(base)[off]);
    case PW_BF16: return hd_bf16_to_float(static_cast<const unsigned short*>(base)[off]);
    default: return static_cast<const float*>(base)[off];
    }
}

PW_FN void store_one(void* base, int dtype, int64_t off, float v) {
    switch (dtype) {
    case PW_F16: static_cast<unsigned short*>(base)[off] = hd_float_to_half(v); break;
    case PW_BF16: static_cast<unsigned short*>(base)[off] = hd_float_to_bf16(v); break;
    default: static_cast<float*>(base)[off] = v; break;
    }
}

PW_FN float from16(int dtype, unsigned int bits) {
    return dtype == PW_F16 ? hd_half_to_float((unsigned short)bits)
                           : hd_bf16_to_float((unsigned short)bits);
}

PW_FN unsigned int to16(int dtype, float v) {
    return dtype == PW_F16 ? hd_float_to_half(v) : hd_float_to_bf16(v);
}

// PW_VEC values at element e (16-byte aligned): one 16-byte load of 16-bit data, two of fp32.
PW_FN void load_vec(const void* base, int dtype, int64_t e, float* v) {
    if (dtype == PW_F32) {
        const float4* p = reinterpret_cast<const float4*>(static_cast<const float*>(base) + e);
        const float4 a = p[0], b = p[1];
        v[0] = a.x; v[1] = a.y; v[2] = a.z; v[3] = a.w;
        v[4] = b.x; v[5] = b.y; v[6] = b.z; v[7] = b.w;
    } else {
        const uint4 q = *reinterpret_cast<const uint4*>(static_cast<const unsigned short*>(base) + e);
        const unsigned int w[4] = {q.x, q.y, q.z, q.w};
PW_UNROLL
        for (int k = 0; k < 4; ++k) {
            v[2 * k] = from16(dtype, w[k] & 0xffffu);
            v[2 * k + 1] = from16(dtype, w[k] >> 16);
        }
    }
}

PW_FN void store_vec(void* base, int dtype, int64_t e, const float* v) {
    if (dtype == PW_F32) {
        float4* p = reinterpret_cast<float4*>(static_cast<float*>(base) + e);
        p[0] = make_float4(v[0], v[1], v[2], v[3]);
        p[1] = make_float4(v[4], v[5], v[6], v[7]);
    } else {
        unsigned int w[4];
PW_UNROLL
        for (int k = 0; k < 4; ++k) w[k] = to16(dtype, v[2 * k]) | (to16(dtype, v[2 * k + 1]) << 16);
        *reinterpret_cast<uint4*>(static_cast<unsigned short*>(base) + e) =
            make_uint4(w[0], w[1], w[2], w[3]);
    }
}

// Offset of (row, column 0) in a strided tensor; *written = false where an output
// broadcast along an outer dim is not at coordinate 0 there.
PW_FN int64_t row_offset(const pw_program& p, const pw_tensor& t,
                                              int64_t row64, bool* written) {
    int64_t off = 0;
    uint32_t row = (uint32_t)row64;
    for (int d = p.ndim - 2; d >= 0; --d) {
        const uint32_t dim = (uint32_t)p.dims[d];
        const uint32_t q = div32(row, dim);
        const uint32_t c = row - q * dim;
        off += (int64_t)c * t.strides[d];
        if (c != 0 && ((t.bcast_mask >> d) & 1u)) *written = false;
        row = q;
    }
    return off;
}

PW_FN bool whole_vec(const pw_program& p, const Pos& pos) {
    return p.aligned && pos.cnt == PW_VEC && (pos.e & (PW_VEC - 1)) == 0;
}

PW_FN void load_input(const pw_program& p, const pw_tensor& t, const Pos& pos,
                                           float* v) {
    if (t.contiguous) {
        if (whole_vec(p, pos)) {
            load_vec(t.ptr, t.dtype, pos.e, v);
        } else {
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j)
                v[j] = j < pos.cnt ? load_one(t.ptr, t.dtype, pos.e + j) : 0.0f;
        }
        return;
    }
    bool unused = true;
    const int64_t s = t.strides[p.ndim - 1];
    const int64_t off = row_offset(p, t, pos.row, &unused) + pos.c0 * s;
PW_UNROLL
    for (int j = 0; j < PW_VEC; ++j) v[j] = j < pos.cnt ? load_one(t.ptr, t.dtype, off + j * s) : 0.0f;
}

PW_FN void store_output(const pw_program& p, const pw_tensor& t,
                                             const Pos& pos, const float* v) {
    if (t.contiguous) {
        if (whole_vec(p, pos)) {
            store_vec(t.ptr, t.dtype, pos.e, v);
        } else {
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j)
                if (j < pos.cnt) store_one(t.ptr, t.dtype, pos.e + j, v[j]);
        }
        return;
    }
    bool written = true;
    const int64_t s = t.strides[p.ndim - 1];
    const int64_t off = row_offset(p, t, pos.row, &written) + pos.c0 * s;
    if (!written) return;
    const bool bcast_last = (t.bcast_mask >> (p.ndim - 1)) & 1u;
PW_UNROLL
    for (int j = 0; j < PW_VEC; ++j)
        if (j < pos.cnt && (!bcast_last || pos.c0 + j == 0)) store_one(t.ptr, t.dtype, off + j * s, v[j]);
}

// ---- the functions (definitions as the reference engine's, in fp32) -----------------------

// IEEE 754-2019 maximum / minimum: NaN if either is NaN, and -0 < +0 (for two zeros, a + b
// is +0 unless both are -0; -(-a - b) is -0 unless both are +0).
PW_FN float maximum(float a, float b) {
    float m = a > b ? a : b;
    const float z = a + b;
    m = (a == 0.0f && b == 0.0f) ? z : m;
    return (a != a || b != b) ? z : m;
}

PW_FN float minimum(float a, float b) {
    float m = a < b ? a : b;
    const float z = -(-a - b);
    m = (a == 0.0f && b == 0.0f) ? z : m;
    return (a != a || b != b) ? z : m;
}

PW_FN void binary(int fn, bool rev, float* acc, const float* o) {
    switch (fn) {
    case PW_ADD:
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) acc[j] = acc[j] + o[j];
        break;
    case PW_SUB:
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) acc[j] = rev ? o[j] - acc[j] : acc[j] - o[j];
        break;
    case PW_MUL:
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) acc[j] = acc[j] * o[j];
        break;
    case PW_DIV:
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) acc[j] = rev ? o[j] / acc[j] : acc[j] / o[j];
        break;
    case PW_MAX:
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) acc[j] = maximum(acc[j], o[j]);
        break;
    case PW_MIN:
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) acc[j] = minimum(acc[j], o[j]);
        break;
    default: break;
    }
}

// relu: x <= L ? L + S (x - L) : min-ish(x, U); S == 0 gives exactly L (relu(-inf) = L);
// NaN fails both comparisons and passes through.
PW_FN float relu(float x, float lo, float hi, float slope) {
    const float v = x >= hi ? hi : x;
    const float below = slope == 0.0f ? lo : lo + slope * (x - lo);
    return x <= lo ? below : v;
}

// exact gelu x * P(x), P from erfc (accurate in the negative tail); where P underflows to
// 0 the result is -0, the sign of x * P for finite x (and -inf * 0 is not NaN).
PW_FN float gelu(float x) {
    const float cdf = 0.5f * erfcf(-x * 0.70710678118654752440f);
    return cdf == 0.0f ? -0.0f : x * cdf;
}

PW_FN void unary(const pw_instr& ins, float* acc) {
    switch (ins.fn) {
    case PW_RELU:
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) acc[j] = relu(acc[j], ins.p0, ins.p1, ins.p2);
        break;
    case PW_SIGMOID:
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) acc[j] = 1.0f / (1.0f + expf(-acc[j]));
        break;
    case PW_TANH:
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) acc[j] = tanhf(acc[j]);
        break;
    case PW_GELU:
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) acc[j] = gelu(acc[j]);
        break;
    default: break; // identity
    }
}

PW_FN void round_to(int dtype, float* acc) {
PW_UNROLL
    for (int j = 0; j < PW_VEC; ++j)
        acc[j] = dtype == PW_F16 ? hd_half_to_float(hd_float_to_half(acc[j]))
                                 : hd_bf16_to_float(hd_float_to_bf16(acc[j]));
}

// Slot k of S: cases beyond S are dead code, so their registers never exist.
#define SLOT_CASES(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)

template <int S>
PW_FN void get_slot(int a, float (&r)[PW_SLOTS][PW_VEC], float* acc) {
    switch (a) {
#define X(k)                                                  \
    case k:                                                   \
        if (k < S)                                            \
            for (int j = 0; j < PW_VEC; ++j) acc[j] = r[k][j]; \
        break;
        SLOT_CASES(X)
#undef X
    default: break;
    }
}

template <int S>
PW_FN void put_slot(int a, float (&r)[PW_SLOTS][PW_VEC], const float* acc) {
    switch (a) {
#define X(k)                                                  \
    case k:                                                   \
        if (k < S)                                            \
            for (int j = 0; j < PW_VEC; ++j) r[k][j] = acc[j]; \
        break;
        SLOT_CASES(X)
#undef X
    default: break;
    }
}

template <int S>
PW_FN void binary_slot(int fn, bool rev, int a, float (&r)[PW_SLOTS][PW_VEC],
                                            float* acc) {
    switch (a) {
#define X(k)                                   \
    case k:                                    \
        if (k < S) binary(fn, rev, acc, r[k]); \
        break;
        SLOT_CASES(X)
#undef X
    default: break;
    }
}

// Where step g of the iteration space is: PW_VEC elements of one row.
PW_FN Pos pw_position(const pw_program& p, int64_t g) {
    const int64_t dlast = p.dims[p.ndim - 1];
    const int64_t chunks = (dlast + PW_VEC - 1) / PW_VEC;
    Pos pos;
    if (p.ndim == 1) {
        pos.row = 0;
        pos.c0 = g * PW_VEC;
    } else {
        const uint32_t row = div32((uint32_t)g, (uint32_t)chunks);
        pos.row = row;
        pos.c0 = (int64_t)((uint32_t)g - row * (uint32_t)chunks) * PW_VEC;
    }
    pos.cnt = dlast - pos.c0 < PW_VEC ? (int)(dlast - pos.c0) : PW_VEC;
    pos.e = pos.row * dlast + pos.c0;
    return pos;
}

// The inputs, into slots 0..nin-1.
template <int S>
PW_FN void pw_load_inputs(const pw_program& p, const Pos& pos, float (&r)[PW_SLOTS][PW_VEC]) {
PW_UNROLL
    for (int i = 0; i < S; ++i)
        if (i < p.nin) load_input(p, p.in[i], pos, r[i]);
}

// One instruction.  The interpreter passes instructions read from the program; generated
// kernels (jit_source.c) pass constants, and every switch here folds away.
template <int S>
PW_FN void pw_instr_step(const pw_program& p, const pw_instr& ins, const Pos& pos,
                         float (&r)[PW_SLOTS][PW_VEC], float* acc, float* o) {
    const bool scalar = ins.flags & PW_SCALAR;
    switch (ins.op) {
    case PW_GET:
        if (scalar) {
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j) acc[j] = p.scalar[ins.a];
        } else {
            get_slot<S>(ins.a, r, acc);
        }
        break;
    case PW_PUT: put_slot<S>(ins.a, r, acc); break;
    case PW_BINARY:
        if (scalar) {
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j) o[j] = p.scalar[ins.a];
            binary(ins.fn, ins.flags & PW_REVERSED, acc, o);
        } else {
            binary_slot<S>(ins.fn, ins.flags & PW_REVERSED, ins.a, r, acc);
        }
        break;
    case PW_UNARY: unary(ins, acc); break;
    case PW_ROUND: round_to(ins.a, acc); break;
    case PW_STORE: store_output(p, p.out[ins.a], pos, acc); break;
    default: break;
    }
}

// One step of one thread, interpreting the program.
template <int S>
PW_FN void pw_step(const pw_program& p, int64_t g) {
    const Pos pos = pw_position(p, g);
    float r[PW_SLOTS][PW_VEC];
    pw_load_inputs<S>(p, pos, r);
    float acc[PW_VEC];
PW_UNROLL
    for (int j = 0; j < PW_VEC; ++j) acc[j] = 0.0f;
    float o[PW_VEC];
    for (int k = 0; k < p.ninstr; ++k) pw_instr_step<S>(p, p.instr[k], pos, r, acc, o);
}

// Steps (PW_VEC-element groups) in the iteration space.
PW_HOST_FN int64_t pw_groups(const pw_program& p) {
    const int64_t dlast = p.dims[p.ndim - 1];
    return (p.n / dlast) * ((dlast + PW_VEC - 1) / PW_VEC);
}

#endif /* HIPDNN_HIP_PW_EXEC_H */
