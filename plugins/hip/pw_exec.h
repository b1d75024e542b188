// pw_exec.h — what one thread of the fused pointwise kernel does: read the inputs, run the
// pw_program (pw_program.h) in fp32, write the outputs.
//
// Written once for the kernels (pointwise.hip, the generated kernels of jit_source.c: PW_FN
// = static __device__ __forceinline__) and for the host emulation the tests run on machines
// without a GPU (PW_FN = static inline), so that the program compiler and every indexing
// and numeric rule here are checked against the reference engine everywhere.  The includer
// provides PW_FN (device functions, also static members), PW_HOST_FN (functions the
// launcher calls too), PW_UNROLL (an unroll pragma), the fp16 / bf16 conversions
// hd_half_to_float, hd_float_to_half, hd_bf16_to_float, hd_float_to_bf16, the packing pairs
// hd_pack_half2 and hd_pack_bf16x2 (lo element in the low 16 bits), hd_rcp (a reciprocal
// within 1 ulp), float4 / uint4 and the math functions.
//
// What a thread runs is a "program" type (the interpreter's PwInterpreted below, or the
// struct a generated kernel defines with every instruction and tensor property a
// constant): the same per-thread functions serve both, so a generated kernel differs from
// the interpreter only in what is known when it is compiled.
//
// Two ways through the iteration space:
//   generic (pw_generic_thread): PW_VEC consecutive elements of one row at a time;
//     contiguous tensors are addressed by the linear index and, when aligned and the step
//     is whole, read and written with 16-byte vector accesses; other tensors (broadcast,
//     strided) through their strides.
//   fast (pw_fast_thread): every tensor contiguous and 16-byte aligned, so element e is at
//     offset e everywhere: a thread takes U whole vectors of PW_VEC elements a block-width
//     apart, issues every load of all U before computing any, and one thread does the last
//     n % PW_VEC elements.
// The accumulator and up to S slots of PW_VEC values live in registers; slot numbers are
// resolved by switches whose cases index the register arrays with constants, so nothing
// spills to local memory.
#ifndef HIPDNN_HIP_PW_EXEC_H
#define HIPDNN_HIP_PW_EXEC_H

#include "pw_program.h"

// A step of the generic way: PW_VEC elements (fewer at a row's end) of one row.
struct Pos {
    int64_t row; // row of the iteration space (all dims but the innermost)
    int64_t c0;  // first column of this step
    int64_t e;   // linear index of (row, c0)
    int cnt;     // elements in this step (PW_VEC but at a row's end)
    int nd;      // dims of the iteration space (a constant in generated kernels)
};

// A step of the fast way: the whole vector at element e, written only if `store` (a tile's
// vectors past the end recompute the last one and write nothing: no branch splits a tile,
// so all its loads are issued before the first result is needed).
struct FastVec {
    int64_t e;
    bool store;
};

// The fast way's tail: the last cnt (< PW_VEC) elements, from element e.
struct FastTail {
    int64_t e;
    int cnt;
};

// Rows and groups of a multi-dim space fit in 31 bits (program.c declines larger ones), so
// its index arithmetic divides in 32 bits: a 64-bit division costs many more registers.
PW_FN uint32_t div32(uint32_t a, uint32_t b) { return a / b; }

PW_FN float load_one(const void* base, int dtype, int64_t off) {
    switch (dtype) {
    case PW_F16: return hd_half_to_float(static_cast<const unsigned short*>(base)[off]);
    case PW_BF16: return hd_bf16_to_float(static_cast<const unsigned short*>(base)[off]);
    case PW_BOOL: return static_cast<const unsigned char*>(base)[off] != 0 ? 1.0f : 0.0f;
    case PW_INDEX: return (float)off; // no memory: a coordinate (program.c keeps it < 2^24)
    default: return static_cast<const float*>(base)[off];
    }
}

// Integer results are exact (comparisons, logic, indices below 2^24: program.c).
PW_FN void store_one(void* base, int dtype, int64_t off, float v) {
    switch (dtype) {
    case PW_F16: static_cast<unsigned short*>(base)[off] = hd_float_to_half(v); break;
    case PW_BF16: static_cast<unsigned short*>(base)[off] = hd_float_to_bf16(v); break;
    case PW_BOOL: static_cast<unsigned char*>(base)[off] = v != 0.0f ? 1 : 0; break;
    case PW_I32: static_cast<int32_t*>(base)[off] = (int32_t)v; break;
    case PW_I64: static_cast<int64_t*>(base)[off] = (int64_t)v; break;
    default: static_cast<float*>(base)[off] = v; break;
    }
}

PW_FN float from16(int dtype, unsigned int bits) {
    return dtype == PW_F16 ? hd_half_to_float((unsigned short)bits)
                           : hd_bf16_to_float((unsigned short)bits);
}

// Two 16-bit results in one word, lo in the low half: one conversion instruction for both
// where the hardware packs (sm_80 and newer), the same roundings as to16 element by element.
PW_FN unsigned int pack16(int dtype, float lo, float hi) {
    return dtype == PW_F16 ? hd_pack_half2(lo, hi) : hd_pack_bf16x2(lo, hi);
}

// PW_VEC values at element e (16-byte aligned): one 16-byte load of 16-bit data, two of fp32.
PW_FN void load_vec(const void* base, int dtype, int64_t e, float* v) {
    if (dtype != PW_F32 && dtype != PW_F16 && dtype != PW_BF16) { // bytes, coordinates
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) v[j] = load_one(base, dtype, e + j);
    } else if (dtype == PW_F32) {
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
    if (dtype != PW_F32 && dtype != PW_F16 && dtype != PW_BF16) { // bytes, integers
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) store_one(base, dtype, e + j, v[j]);
    } else if (dtype == PW_F32) {
        float4* p = reinterpret_cast<float4*>(static_cast<float*>(base) + e);
        p[0] = make_float4(v[0], v[1], v[2], v[3]);
        p[1] = make_float4(v[4], v[5], v[6], v[7]);
    } else {
        unsigned int w[4];
PW_UNROLL
        for (int k = 0; k < 4; ++k) w[k] = pack16(dtype, v[2 * k], v[2 * k + 1]);
        *reinterpret_cast<uint4*>(static_cast<unsigned short*>(base) + e) =
            make_uint4(w[0], w[1], w[2], w[3]);
    }
}

// Offset of (row, column 0) in a strided tensor; *written = false where an output
// broadcast along an outer dim is not at coordinate 0 there.
PW_FN int64_t row_offset(const pw_program& p, int nd, const pw_tensor& t, int64_t row64,
                         bool* written) {
    int64_t off = 0;
    uint32_t row = (uint32_t)row64;
    for (int d = nd - 2; d >= 0; --d) {
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

// Input t of `dtype`, contiguous or not (the program's constants in generated kernels).
PW_FN void load_input(const pw_program& p, const pw_tensor& t, int dtype, bool contiguous,
                      const Pos& pos, float* v) {
    if (contiguous) {
        if (whole_vec(p, pos)) {
            load_vec(t.ptr, dtype, pos.e, v);
        } else {
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j)
                v[j] = j < pos.cnt ? load_one(t.ptr, dtype, pos.e + j) : 0.0f;
        }
        return;
    }
    bool unused = true;
    const int64_t s = t.strides[pos.nd - 1];
    const int64_t off = row_offset(p, pos.nd, t, pos.row, &unused) + pos.c0 * s;
    if (s == 0) { // one value a row (a per-channel parameter): one load, not PW_VEC
        const float one = load_one(t.ptr, dtype, off);
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) v[j] = j < pos.cnt ? one : 0.0f;
        return;
    }
PW_UNROLL
    for (int j = 0; j < PW_VEC; ++j) v[j] = j < pos.cnt ? load_one(t.ptr, dtype, off + j * s) : 0.0f;
}

PW_FN void store_output(const pw_program& p, const pw_tensor& t, int dtype, bool contiguous,
                        const Pos& pos, const float* v) {
    if (contiguous) {
        if (whole_vec(p, pos)) {
            store_vec(t.ptr, dtype, pos.e, v);
        } else {
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j)
                if (j < pos.cnt) store_one(t.ptr, dtype, pos.e + j, v[j]);
        }
        return;
    }
    bool written = true;
    const int64_t s = t.strides[pos.nd - 1];
    const int64_t off = row_offset(p, pos.nd, t, pos.row, &written) + pos.c0 * s;
    if (!written) return;
    const bool bcast_last = (t.bcast_mask >> (pos.nd - 1)) & 1u;
PW_UNROLL
    for (int j = 0; j < PW_VEC; ++j)
        if (j < pos.cnt && (!bcast_last || pos.c0 + j == 0)) store_one(t.ptr, dtype, off + j * s, v[j]);
}

// Input i and output ins.a of either way (overloaded on where the step is).
PW_FN void pw_load(const pw_program& p, int i, int dtype, bool contiguous, const Pos& pos,
                   float* v) {
    load_input(p, p.in[i], dtype, contiguous, pos, v);
}

PW_FN void pw_load(const pw_program& p, int i, int dtype, bool contiguous, const FastVec& at,
                   float* v) {
    (void)contiguous; // always, on the fast way
    load_vec(p.in[i].ptr, dtype, at.e, v);
}

PW_FN void pw_load(const pw_program& p, int i, int dtype, bool contiguous, const FastTail& at,
                   float* v) {
    (void)contiguous;
PW_UNROLL
    for (int j = 0; j < PW_VEC; ++j)
        v[j] = j < at.cnt ? load_one(p.in[i].ptr, dtype, at.e + j) : 0.0f;
}

// STORE carries its output's storage type in fn and PW_CONTIG in flags (program.c).
PW_FN void pw_store(const pw_program& p, const pw_instr& ins, const Pos& pos, const float* v) {
    store_output(p, p.out[ins.a], ins.fn, ins.flags & PW_CONTIG, pos, v);
}

PW_FN void pw_store(const pw_program& p, const pw_instr& ins, const FastVec& at, const float* v) {
    if (at.store) store_vec(p.out[ins.a].ptr, ins.fn, at.e, v);
}

PW_FN void pw_store(const pw_program& p, const pw_instr& ins, const FastTail& at, const float* v) {
PW_UNROLL
    for (int j = 0; j < PW_VEC; ++j)
        if (j < at.cnt) store_one(p.out[ins.a].ptr, ins.fn, at.e + j, v[j]);
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

// The largest finite float: "x > it" is "x is +inf" without INFINITY, which run-time
// compilers' preludes lack.
#define PW_FLT_MAX 3.40282347e+38f

// A product or sum rounded on its own, never fused by the compiler into an fma with what
// uses it: error-free transformations (two-sum, a product's error through fma) need the
// rounded value they correct.  Device compilers contract by default; the host's (the
// emulation) does not without -mfma.
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define PW_MUL_RN(a, b) __fmul_rn(a, b)
#define PW_ADD_RN(a, b) __fadd_rn(a, b)
#else
#define PW_MUL_RN(a, b) ((a) * (b))
#define PW_ADD_RN(a, b) ((a) + (b))
#endif

// x / d for d = 1 + exp(...) >= 1: a zero of x's sign where d overflowed (x * 0).
PW_FN float over_one_plus(float x, float d) { return d > PW_FLT_MAX ? copysignf(0.0f, x) : x / d; }

// e / (1 + e)^2: sigmoid' with e = exp(-|x|), tanh' / 4 with e = exp(-2|x|).
PW_FN float bell(float e) { return e / ((1.0f + e) * (1.0f + e)); }

// exp(-(hi + lo)), |lo| tiny next to |hi|: lo as a first-order correction, so that an
// argument rounded into hi costs the result no accuracy however large |hi| is (exp
// multiplies a relative error by |hi|).  A non-finite lo, or an infinite result, is left.
PW_FN float exp_neg(float hi, float lo) {
    const float e = expf(-hi);
    const float l = fabsf(lo) <= PW_FLT_MAX ? lo : 0.0f; // NaN fails the test too
    return e > PW_FLT_MAX ? e : fmaf(e, -l, e);
}

// beta * x as hi + lo: lo the product's rounding error, exact through fma (0 where the
// product is not finite).
PW_FN float times_lo(float beta, float x, float hi) {
    const float lo = fmaf(beta, x, -hi);
    return fabsf(lo) <= PW_FLT_MAX ? lo : 0.0f;
}

// gelu's tanh form's 2u = 2 sqrt(2/pi) (x + 0.044715 x^3) = x (A + B x^2) as hi + *lo, with
// A and B as float pairs and every product and the sum carried exactly (fma, two-sum):
// |2u| reaches 90 before the result underflows, where a 1-ulp argument costs 5e-6.
PW_FN float gelu_tanh_2u(float x, float* lo) {
    const float a = 0x1.988454p+0f, a_lo = -0x1.857936p-25f; // 2 sqrt(2/pi)
    const float b = 0x1.2444f2p-4f, b_lo = 0x1.49b16ap-29f;  // 2 sqrt(2/pi) 0.044715
    const float s = x * x, s_lo = fmaf(x, x, -s);
    const float p = PW_MUL_RN(b, s), p_lo = fmaf(b, s, -p);
    const float q = PW_ADD_RN(a, p), t = q - a; // on an H100, q = fma(b, s, a) cost 37 ulp
    const float q_lo = ((a - (q - t)) + (p - t)) + (fmaf(b, s_lo, p_lo) + fmaf(b_lo, s, a_lo));
    const float u = x * q;
    *lo = fmaf(x, q, -u) + x * q_lo;
    return u;
}

// The _BWD modes: dx = dy * f'(x), in forms that do not cancel (the reference engine's).
PW_FN float relu_bwd(float x, float dy, float lo, float hi, float slope) {
    const float v = (x >= hi && hi <= PW_FLT_MAX) ? 0.0f : dy; // an upper clip of +inf: none
    const float below = slope == 0.0f ? 0.0f : slope * dy;     // flat: exactly 0
    const float r = x <= lo ? below : v;
    return x != x ? x : r;
}

PW_FN float swish_bwd(float x, float dy, float beta) {
    const float z = beta * x, z_lo = times_lo(beta, x, z);
    const float e = exp_neg(fabsf(z), z >= 0.0f ? z_lo : -z_lo);
    const float p = 1.0f / (1.0f + e), m = e * p; // sigmoid(|z|), sigmoid(-|z|)
    const float s = z >= 0.0f ? p : m, q = z >= 0.0f ? m : p;
    const float zq = q == 0.0f ? 0.0f : z * q;
    return dy * (s == 0.0f ? 0.0f : s * (1.0f + zq));
}

PW_FN float gelu_tanh_bwd(float x, float dy) {
    float lo;
    const float u2 = gelu_tanh_2u(x, &lo);
    const float sig = 1.0f / (1.0f + exp_neg(u2, lo));
    const float e = exp_neg(fabsf(u2), u2 >= 0.0f ? lo : -lo);
    const float slope = x * fmaf(0.1070322243f, x * x, 0.7978845608f); // d(2u)/dx / 2
    const float t = e == 0.0f ? 0.0f : slope * (2.0f * bell(e));
    return dy * (sig + t);
}

PW_FN float gelu_bwd(float x, float dy);

// The functions added after the first twelve, one value at a time: out of line in the
// interpreting kernels (the includer's PW_EXT_FN, __noinline__ in pointwise.hip), whose
// registers and unrolled loops the common functions need; generated kernels, where fn is
// a constant, inline them (PW_EXT_FN defaults to PW_FN).
#ifndef PW_EXT_FN
#define PW_EXT_FN PW_FN
#endif

PW_FN float softplus(float x, float beta);
PW_FN float gelu(float x);

PW_EXT_FN float binary_ext(int fn, float a, float b, float p0, float p1, float p2) {
    switch (fn) {
    case PW_ADD_SQUARE: return fmaf(b, b, a); // one rounding, as the reference's
    case PW_MOD: return fmodf(a, b);
    case PW_POW: return powf(a, b);
    case PW_CMP_EQ: return a == b ? 1.0f : 0.0f;
    case PW_CMP_NEQ: return a != b ? 1.0f : 0.0f;
    case PW_CMP_GT: return a > b ? 1.0f : 0.0f;
    case PW_CMP_GE: return a >= b ? 1.0f : 0.0f;
    case PW_CMP_LT: return a < b ? 1.0f : 0.0f;
    case PW_CMP_LE: return a <= b ? 1.0f : 0.0f;
    case PW_AND: return (a != 0.0f && b != 0.0f) ? 1.0f : 0.0f;
    case PW_OR: return (a != 0.0f || b != 0.0f) ? 1.0f : 0.0f;
    case PW_RELU_BWD: return relu_bwd(a, b, p0, p1, p2);
    case PW_TANH_BWD: return b * (4.0f * bell(expf(-2.0f * fabsf(a))));
    case PW_SIGMOID_BWD: return b * bell(expf(-fabsf(a)));
    case PW_ELU_BWD: return a > 0.0f ? b : b * (p0 * expf(a));
    case PW_GELU_BWD: return gelu_bwd(a, b);
    case PW_SOFTPLUS_BWD: {
        const float z = p0 * a;
        return b / (1.0f + exp_neg(z, times_lo(p0, a, z)));
    }
    case PW_SWISH_BWD: return swish_bwd(a, b, p0);
    case PW_GELU_TANH_BWD: return gelu_tanh_bwd(a, b);
    default: return a;
    }
}

PW_EXT_FN float unary_ext(int fn, float x, float p0) {
    switch (fn) {
    case PW_SQRT: return sqrtf(x);
    case PW_RSQRT: return 1.0f / sqrtf(x);
    case PW_RECIPROCAL: return 1.0f / x;
    case PW_ABS: return fabsf(x);
    case PW_NEG: return -x;
    case PW_CEIL: return ceilf(x);
    case PW_FLOOR: return floorf(x);
    case PW_LOG: return logf(x);
    case PW_SIN: return sinf(x);
    case PW_COS: return cosf(x);
    case PW_TAN: return tanf(x);
    case PW_ERF: return erff(x);
    case PW_ELU: return x > 0.0f ? x : p0 * expm1f(x);
    case PW_SOFTPLUS: return softplus(x, p0);
    case PW_SWISH: {
        const float z = p0 * x;
        return over_one_plus(x, 1.0f + exp_neg(z, times_lo(p0, x, z)));
    }
    case PW_GELU_TANH: {
        float lo;
        const float u2 = gelu_tanh_2u(x, &lo);
        return over_one_plus(x, 1.0f + exp_neg(u2, lo));
    }
    case PW_NOT: return x == 0.0f ? 1.0f : 0.0f;
    default: return x; // identity, gen_index (its input is the coordinate)
    }
}

// f(a, b) over the step, a the first operand (x), b the second; REVERSED when the
// accumulator holds b.  Switches outside the loops: each case is one tight loop.
#define PW_BIN(fn_, expr)                                        \
    case fn_:                                                    \
        PW_UNROLL                                                \
        for (int j = 0; j < PW_VEC; ++j) {                       \
            const float a = rev ? o[j] : acc[j];                 \
            const float b = rev ? acc[j] : o[j];                 \
            acc[j] = (expr);                                     \
        }                                                        \
        break;

PW_FN void binary(const pw_instr& ins, bool rev, float* acc, const float* o) {
    switch (ins.fn) {
        PW_BIN(PW_ADD, a + b)
        PW_BIN(PW_SUB, a - b)
        PW_BIN(PW_MUL, a * b)
        PW_BIN(PW_DIV, a / b)
        PW_BIN(PW_MAX, maximum(a, b))
        PW_BIN(PW_MIN, minimum(a, b))
    default:
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) {
            const float a = rev ? o[j] : acc[j];
            const float b = rev ? acc[j] : o[j];
            acc[j] = binary_ext(ins.fn, a, b, ins.p0, ins.p1, ins.p2);
        }
        break;
    }
}
#undef PW_BIN

// relu: x <= L ? L + S (x - L) : min-ish(x, U); S == 0 gives exactly L (relu(-inf) = L);
// NaN fails both comparisons and passes through.
PW_FN float relu(float x, float lo, float hi, float slope) {
    const float v = x >= hi ? hi : x;
    const float below = slope == 0.0f ? lo : lo + slope * (x - lo);
    return x <= lo ? below : v;
}

// Exact gelu x * P(x), P(x) = erfc(-x / sqrt 2) / 2, within about 10 ulp (7 measured on
// the host; a GPU test holds it to 16), in about 33 instructions where erfcf alone costs
// about 50.  With t = |x|, the upper tail Q(t) = P(-t) is exp(-t^2 / 2) R(t), R smooth and
// between 0.5 and 0.03 for t < 16, fitted as a degree-9 polynomial in s = 1 / (1 + 0.26 t)
// (relative error 1.3e-8; 3e-7 evaluated in fp32).  t^2 is carried as hi + lo (fma), so
// the tail keeps its relative accuracy where erfc(-x * 0.7071f) loses up to 1e-5 to the
// rounding of its argument.  P = Q for x < 0, else 1 - Q.
//   - the coefficients make the polynomial exactly 0.5 at s = 1, so P is exactly 1/2 for
//     |x| below 2^-25 and gelu of a subnormal x is exactly x / 2, rounded;
//   - t is capped at 16, where Q is 0 in fp32: infinities and NaN never meet inf - inf;
//   - x < 0 multiplies x P before exp(-t^2 / 2), one rounding into the subnormal range,
//     and -0 where that underflows; x = -inf uses -16 (gelu(-inf) = -0); NaN and +inf
//     take the x (1 - Q) side: NaN, +inf.
PW_FN float gelu_tail(float x, float* gauss) {
    const float t = fminf(fabsf(x), 16.0f);
    const float hi = t * t;
    const float lo = fmaf(t, t, -hi); // t^2 = hi + lo exactly
    const float s = hd_rcp(fmaf(0.26f, t, 1.0f));
    float r = 0x1.1380a6p-5f;
    r = fmaf(r, s, -0x1.5a2178p-3f);
    r = fmaf(r, s, 0x1.268dd6p-2f);
    r = fmaf(r, s, -0x1.92bce8p-3f);
    r = fmaf(r, s, 0x1.93365ap-3f);
    r = fmaf(r, s, 0x1.0cf0f2p-5f);
    r = fmaf(r, s, 0x1.be4b1ep-4f);
    r = fmaf(r, s, 0x1.a10e0ep-4f);
    r = fmaf(r, s, 0x1.a98da8p-4f);
    r = fmaf(r, s, -0x1.bb0bc2p-18f); // coefficients nudged so that r(1) is 0.5 exactly
    float g = expf(-0.5f * hi);
    *gauss = fmaf(g, -0.5f * lo, g); // exp(-(hi + lo) / 2)
    return r;
}

PW_FN float gelu(float x) {
    float g;
    const float r = gelu_tail(x, &g);
    const float neg = (fmaxf(x, -16.0f) * r) * g;
    return x < 0.0f ? neg : x * (1.0f - r * g);
}

// gelu'(x) = P(x) + x phi(x): P from the same tail Q = R g, phi = g / sqrt(2 pi); x phi is
// 0 where phi underflows (x = +-inf), and a NaN x stays NaN.
PW_FN float gelu_bwd(float x, float dy) {
    float g;
    const float q = gelu_tail(x, &g) * g;
    const float cdf = x < 0.0f ? q : 1.0f - q;
    const float pdf = g * 0.3989422804f;
    const float t = pdf == 0.0f ? (x != x ? x : 0.0f) : x * pdf;
    return dy * (cdf + t);
}

PW_FN float softplus(float x, float beta) {
    const float z = beta * x, z_lo = times_lo(beta, x, z);
    const float r = z > 0.0f ? z + (log1pf(exp_neg(z, z_lo)) + z_lo)
                             : log1pf(exp_neg(-z, -z_lo));
    return r / beta;
}

#define PW_UN(fn_, expr)                                         \
    case fn_:                                                    \
        PW_UNROLL                                                \
        for (int j = 0; j < PW_VEC; ++j) {                       \
            const float x = acc[j];                              \
            acc[j] = (expr);                                     \
        }                                                        \
        break;

PW_FN void unary(const pw_instr& ins, float* acc) {
    switch (ins.fn) {
        PW_UN(PW_IDENTITY, x)
        PW_UN(PW_RELU, relu(x, ins.p0, ins.p1, ins.p2))
        PW_UN(PW_SIGMOID, 1.0f / (1.0f + expf(-x)))
        PW_UN(PW_TANH, tanhf(x))
        PW_UN(PW_GELU, gelu(x))
        PW_UN(PW_EXP, expf(x))
    default:
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) acc[j] = unary_ext(ins.fn, acc[j], ins.p0);
        break;
    }
}
#undef PW_UN

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
PW_FN void binary_slot(const pw_instr& ins, bool rev, int a, float (&r)[PW_SLOTS][PW_VEC],
                       float* acc) {
    switch (a) {
#define X(k)                                    \
    case k:                                     \
        if (k < S) binary(ins, rev, acc, r[k]); \
        break;
        SLOT_CASES(X)
#undef X
    default: break;
    }
}

// SELECT: acc = acc != 0 ? x : slot b (x already in o).
template <int S>
PW_FN void select_slot(int b, float (&r)[PW_SLOTS][PW_VEC], float* acc, const float* o) {
    switch (b) {
#define X(k)                                                                      \
    case k:                                                                       \
        if (k < S)                                                                \
            for (int j = 0; j < PW_VEC; ++j) acc[j] = acc[j] != 0.0f ? o[j] : r[k][j]; \
        break;
        SLOT_CASES(X)
#undef X
    default: break;
    }
}

// One instruction at `at` (a Pos, FastVec or FastTail).  The interpreter passes
// instructions read from the program; generated kernels pass constants, and every switch
// here folds away.
template <int S, class At>
PW_FN void pw_instr_step(const pw_program& p, const pw_instr& ins, const At& at,
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
            binary(ins, ins.flags & PW_REVERSED, acc, o);
        } else {
            binary_slot<S>(ins, ins.flags & PW_REVERSED, ins.a, r, acc);
        }
        break;
    case PW_UNARY: unary(ins, acc); break;
    case PW_SELECT: // the mask in acc; x into o, then b from its slot or scalar
        if (scalar) {
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j) o[j] = p.scalar[ins.a];
        } else {
            get_slot<S>(ins.a, r, o);
        }
        if (ins.flags & PW_SCALAR_B) {
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j) acc[j] = acc[j] != 0.0f ? o[j] : p.scalar[ins.fn];
        } else {
            select_slot<S>(ins.fn, r, acc, o);
        }
        break;
    case PW_ROUND: round_to(ins.a, acc); break;
    case PW_STORE: pw_store(p, ins, at, acc); break;
    default: break;
    }
}

// The interpreter's program: everything read from the pw_program at run time.  A generated
// kernel defines a struct with the same members returning constants (jit_source.c).
struct PwInterpreted {
    PW_FN int ndim(const pw_program& p) { return p.ndim; }
    PW_FN int nin(const pw_program& p) { return p.nin; }
    PW_FN int in_dtype(const pw_program& p, int i) { return p.in[i].dtype; }
    PW_FN bool in_contiguous(const pw_program& p, int i) { return p.in[i].contiguous; }
    template <int S, class At>
    PW_FN void run(const pw_program& p, const At& at, float (&r)[PW_SLOTS][PW_VEC], float* acc,
                   float* o) {
        for (int k = 0; k < p.ninstr; ++k) pw_instr_step<S>(p, p.instr[k], at, r, acc, o);
    }
};

// The inputs of one step, into slots 0..nin-1.
template <int S, class Prog, class At>
PW_FN void pw_load_inputs(const pw_program& p, const At& at, float (&r)[PW_SLOTS][PW_VEC]) {
PW_UNROLL
    for (int i = 0; i < S; ++i)
        if (i < Prog::nin(p))
            pw_load(p, i, Prog::in_dtype(p, i), Prog::in_contiguous(p, i), at, r[i]);
}

// One step's program, once its inputs are in slots (a GET comes first: acc starts at 0
// only so that no compiler sees it read unset).
template <int S, class Prog, class At>
PW_FN void pw_run(const pw_program& p, const At& at, float (&r)[PW_SLOTS][PW_VEC]) {
    float acc[PW_VEC], o[PW_VEC];
PW_UNROLL
    for (int j = 0; j < PW_VEC; ++j) acc[j] = 0.0f;
    Prog::template run<S>(p, at, r, acc, o);
}

// ---- the generic way -------------------------------------------------------------------

// Where step g of the iteration space (nd dims) is: PW_VEC elements of one row.
PW_FN Pos pw_position(const pw_program& p, int nd, int64_t g) {
    const int64_t dlast = p.dims[nd - 1];
    const int64_t chunks = (dlast + PW_VEC - 1) / PW_VEC;
    Pos pos;
    if (nd == 1) {
        pos.row = 0;
        pos.c0 = g * PW_VEC;
    } else {
        const uint32_t row = div32((uint32_t)g, (uint32_t)chunks);
        pos.row = row;
        pos.c0 = (int64_t)((uint32_t)g - row * (uint32_t)chunks) * PW_VEC;
    }
    pos.cnt = dlast - pos.c0 < PW_VEC ? (int)(dlast - pos.c0) : PW_VEC;
    pos.e = pos.row * dlast + pos.c0;
    pos.nd = nd;
    return pos;
}

// Steps (PW_VEC-element groups) in the iteration space.
PW_HOST_FN int64_t pw_groups(const pw_program& p) {
    const int64_t dlast = p.dims[p.ndim - 1];
    return (p.n / dlast) * ((dlast + PW_VEC - 1) / PW_VEC);
}

// Thread `tid` of block `block` of `blocks`: every step it owns, grid-stride.
template <int S, class Prog>
PW_FN void pw_generic_thread(const pw_program& p, int64_t block, int tid, int64_t blocks) {
    const int64_t groups = pw_groups(p);
    for (int64_t g = block * PW_BLOCK + tid; g < groups; g += blocks * PW_BLOCK) {
        const Pos pos = pw_position(p, Prog::ndim(p), g);
        float r[PW_SLOTS][PW_VEC];
        pw_load_inputs<S, Prog>(p, pos, r);
        pw_run<S, Prog>(p, pos, r);
    }
}

// ---- the fast way ------------------------------------------------------------------------

// Whole vectors of PW_VEC elements; the last n % PW_VEC elements are the tail.
PW_HOST_FN int64_t pw_fast_vectors(const pw_program& p) { return p.n / PW_VEC; }

// The U vectors v, v + PW_BLOCK, ... (v < nvec) of one thread: every load first, so that
// U * nin 16-byte loads are in flight at once, then each vector's program.  A vector past
// the end reads the last one again (in bounds) and writes nothing.
template <int S, int U, class Prog>
PW_FN void pw_fast_tile(const pw_program& p, int64_t v, int64_t nvec) {
    float r[U][PW_SLOTS][PW_VEC];
PW_UNROLL
    for (int u = 0; u < U; ++u) {
        const int64_t w = v + u * PW_BLOCK < nvec ? v + u * PW_BLOCK : nvec - 1;
        pw_load_inputs<S, Prog>(p, FastVec{w * PW_VEC, true}, r[u]);
    }
PW_UNROLL
    for (int u = 0; u < U; ++u)
        pw_run<S, Prog>(p, FastVec{(v + u * PW_BLOCK) * PW_VEC, v + u * PW_BLOCK < nvec}, r[u]);
}

// Thread `tid` of block `block` of `blocks`: its tiles of U vectors, grid-stride; thread 0
// of block 0 also does the tail.
template <int S, int U, class Prog>
PW_FN void pw_fast_thread(const pw_program& p, int64_t block, int tid, int64_t blocks) {
    const int64_t nvec = pw_fast_vectors(p);
    for (int64_t v = block * (PW_BLOCK * U) + tid; v < nvec; v += blocks * (PW_BLOCK * U))
        pw_fast_tile<S, U, Prog>(p, v, nvec);
    const FastTail tail{nvec * PW_VEC, (int)(p.n - nvec * PW_VEC)};
    if (block == 0 && tid == 0 && tail.cnt > 0) {
        float r[PW_SLOTS][PW_VEC];
        pw_load_inputs<S, Prog>(p, tail, r);
        pw_run<S, Prog>(p, tail, r);
    }
}

// Blocks a launch of the fast way needs for U vectors a thread (at least 1).
PW_HOST_FN int64_t pw_fast_blocks(const pw_program& p, int u) {
    const int64_t tile = (int64_t)PW_BLOCK * u;
    const int64_t tiles = (pw_fast_vectors(p) + tile - 1) / tile;
    return tiles > 0 ? tiles : 1;
}

#endif /* HIPDNN_HIP_PW_EXEC_H */
