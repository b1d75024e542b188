/* pointwise: y = f(x) or y = f(x, b), x and b broadcast NumPy-style onto y.
 *
 * Definitions (float64 throughout, one rounding when y is stored):
 *   add/sub/mul/div  IEEE arithmetic (x / 0 gives inf or NaN, as NumPy does)
 *   max/min          IEEE 754-2019 maximum / minimum: NaN if either operand is NaN (as
 *                    NumPy's maximum / minimum), and -0 < +0, so max(-0, +0) = +0 and
 *                    min(-0, +0) = -0 whichever operand comes first (NumPy instead returns
 *                    one operand or the other for equal zeros)
 *   identity         y = x
 *   relu             cuDNN's RELU_FWD with lower_clip L, upper_clip U, lower_clip_slope S:
 *                      y = x <= L ? L + S * (x - L) : (x >= U ? U : x)
 *                    where S = 0 means exactly L below L, so relu(-inf) = L (not
 *                    0 * -inf = NaN); with S > 0, relu(-inf) = -inf.  Defaults L = 0,
 *                    U = +inf, S = 0 give max(x, 0) with relu(-0) = +0 (IEEE maximum
 *                    again); S alone gives leaky relu; U alone a clipped relu (continuous
 *                    at L whatever S is)
 *   sigmoid          1 / (1 + exp(-x)): sigmoid(-inf) = 0, sigmoid(+inf) = 1
 *   tanh             tanh(x): tanh(+-inf) = +-1, tanh(-0) = -0
 *   gelu             exact: x * P(x), P(x) = erfc(-x / sqrt(2)) / 2 = (1 + erf(x / sqrt(2))) / 2;
 *                    erfc keeps P accurate in the far negative tail, where 1 + erf cancels.
 *                    Where P underflows to 0 (x below about -38.5, and -inf) y = -0, the
 *                    sign of x * P for finite x; gelu(+inf) = +inf, gelu(-0) = -0
 * Every mode gives NaN for a NaN input.  exp and tanh are vmath.h's (within a few
 * float64 ulps of the true value, as libm's are); erfc is libm's.
 */
#include <math.h>
#include <string.h>

#include "fp16_bf16.h"
#include "reference_cpu.h"
#include "vmath.h"

static const double k_sqrt1_2 = 0.70710678118654752440; /* 1 / sqrt(2) */

bool ref_pointwise_check(const hipdnnSdkNode* node, const ref_view* x, const ref_view* b,
                         const ref_view* y, char* why, size_t len) {
    hipdnnPointwiseMode_t mode = hipdnnSdkNodeMode(node);
    int arity = hipdnnSdkPointwiseArity(mode);
    ref_view bv;
    if (arity == 0) {
        hipdnnSdkFormat(why, len, "pointwise mode %d not supported", (int)mode);
        return false;
    }
    if (!ref_broadcast_view(x, y->ndim, y->dims, &bv)) {
        hipdnnSdkFormat(why, len, "x (rank %d) does not broadcast to y (rank %d)", x->ndim,
                        y->ndim);
        return false;
    }
    if (arity == 2) {
        if (!b) {
            hipdnnSdkFormat(why, len, "mode %s needs input b", hipdnnSdkPointwiseModeName(mode));
            return false;
        }
        if (!ref_broadcast_view(b, y->ndim, y->dims, &bv)) {
            hipdnnSdkFormat(why, len, "b (rank %d) does not broadcast to y (rank %d)", b->ndim,
                            y->ndim);
            return false;
        }
    }
    return true;
}

void ref_pw_params_of(const hipdnnSdkNode* node, ref_pw_params* p) {
    p->mode = hipdnnSdkNodeMode(node);
    p->lower_clip = node->attrs[HIPDNN_PW_RELU_LOWER_CLIP].d;
    p->upper_clip = node->attrs[HIPDNN_PW_RELU_UPPER_CLIP].d;
    p->lower_clip_slope = node->attrs[HIPDNN_PW_RELU_LOWER_CLIP_SLOPE].d;
}

/* ---- one mode over a block ----------------------------------------------------------
 * Each loop below is branch-free and call-free except gelu's erfc, so it vectorizes; the
 * functions are always inlined, so a loop takes the vector width of the program variant
 * (end of file) it lands in.  Operands and result never overlap.  With f32 set, each
 * result is rounded to float32 as it is stored (a float32 intermediate), in the same pass. */
#define PW_INLINE static inline __attribute__((always_inline))
#define PW_OUT(v) (f32 ? (double)(float)(v) : (v))

/* IEEE maximum / minimum as selects.  Two zeros compare equal, so their order comes from
 * arithmetic instead: for zeros, a + b is +0 unless both are -0 (the maximum), and
 * -(-a - b) is -0 unless both are +0 (the minimum). */
PW_INLINE void maximum_row(const double* restrict a, const double* restrict b,
                           double* restrict y, int64_t n, bool f32) {
    for (int64_t i = 0; i < n; ++i) {
        double ai = a[i], bi = b[i];
        double m = ai > bi ? ai : bi;
        double z = ai + bi; /* NaN if either is NaN */
        m = ai == 0.0 && bi == 0.0 ? z : m;
        y[i] = PW_OUT(isunordered(ai, bi) ? z : m);
    }
}

PW_INLINE void minimum_row(const double* restrict a, const double* restrict b,
                           double* restrict y, int64_t n, bool f32) {
    for (int64_t i = 0; i < n; ++i) {
        double ai = a[i], bi = b[i];
        double m = ai < bi ? ai : bi;
        double z = -(-ai - bi); /* NaN if either is NaN */
        m = ai == 0.0 && bi == 0.0 ? z : m;
        y[i] = PW_OUT(isunordered(ai, bi) ? z : m);
    }
}

PW_INLINE void binary_row(const ref_pw_params* p, const double* restrict a,
                          const double* restrict b, double* restrict y, int64_t n, bool f32) {
    switch (p->mode) {
    case HIPDNN_POINTWISE_ADD: for (int64_t i = 0; i < n; ++i) y[i] = PW_OUT(a[i] + b[i]); break;
    case HIPDNN_POINTWISE_SUB: for (int64_t i = 0; i < n; ++i) y[i] = PW_OUT(a[i] - b[i]); break;
    case HIPDNN_POINTWISE_MUL: for (int64_t i = 0; i < n; ++i) y[i] = PW_OUT(a[i] * b[i]); break;
    case HIPDNN_POINTWISE_DIV: for (int64_t i = 0; i < n; ++i) y[i] = PW_OUT(a[i] / b[i]); break;
    case HIPDNN_POINTWISE_MAX: maximum_row(a, b, y, n, f32); break;
    case HIPDNN_POINTWISE_MIN: minimum_row(a, b, y, n, f32); break;
    default: for (int64_t i = 0; i < n; ++i) y[i] = NAN; break;
    }
}

/* NaN fails both comparisons and passes through as x. */
PW_INLINE void relu_row(const ref_pw_params* p, const double* restrict x, double* restrict y,
                        int64_t n, bool f32) {
    const double lo = p->lower_clip, hi = p->upper_clip, slope = p->lower_clip_slope;
    if (slope == 0.0) { /* the flat part is exactly lo, even at x = -inf */
        for (int64_t i = 0; i < n; ++i) {
            double v = x[i] >= hi ? hi : x[i];
            y[i] = PW_OUT(x[i] <= lo ? lo : v);
        }
    } else {
        for (int64_t i = 0; i < n; ++i) {
            double v = x[i] >= hi ? hi : x[i];
            y[i] = PW_OUT(x[i] <= lo ? lo + slope * (x[i] - lo) : v);
        }
    }
}

/* libm's erfc: the one call left in a loop (see docs/architecture.md). */
PW_INLINE void gelu_row(const double* restrict x, double* restrict y, int64_t n, bool f32) {
    for (int64_t i = 0; i < n; ++i) {
        double cdf = 0.5 * erfc(-x[i] * k_sqrt1_2);
        y[i] = PW_OUT(cdf == 0.0 ? -0.0 : x[i] * cdf); /* -inf * 0 would be NaN */
    }
}

PW_INLINE void unary_row(const ref_pw_params* p, const double* restrict x, double* restrict y,
                         int64_t n, bool f32) {
    switch (p->mode) {
    case HIPDNN_POINTWISE_IDENTITY: for (int64_t i = 0; i < n; ++i) y[i] = PW_OUT(x[i]); break;
    case HIPDNN_POINTWISE_RELU_FWD: relu_row(p, x, y, n, f32); break;
    case HIPDNN_POINTWISE_SIGMOID_FWD:
        for (int64_t i = 0; i < n; ++i) y[i] = PW_OUT(ref_vm_sigmoid(x[i]));
        break;
    case HIPDNN_POINTWISE_TANH_FWD:
        for (int64_t i = 0; i < n; ++i) y[i] = PW_OUT(ref_vm_tanh(x[i]));
        break;
    case HIPDNN_POINTWISE_GELU_FWD: gelu_row(x, y, n, f32); break;
    case HIPDNN_POINTWISE_EXP:
        for (int64_t i = 0; i < n; ++i) y[i] = PW_OUT(ref_vm_exp(x[i]));
        break;
    default: for (int64_t i = 0; i < n; ++i) y[i] = NAN; break;
    }
}

/* ---- a program over a block -------------------------------------------------------- */

/* Member k reads input blocks or earlier members' blocks (tmp, one per member but the
 * last) and writes its own block, or `out` for the last member.  Intermediates are
 * rounded to their data type as storing and reloading the virtual tensor would. */
PW_INLINE void run_program(const ref_fused* r, const double* const* in, double* out, int64_t n,
                           double* tmp) {
    for (int k = 0; k < r->count; ++k) {
        const double* ops[2];
        for (int op = 0; op < 2; ++op) {
            int8_t s = r->src[k][op];
            ops[op] = s >= 0 ? in[s] : tmp + (int64_t)(-s - 1) * REF_BLOCK;
        }
        bool last = k == r->count - 1;
        double* y = last ? out : tmp + (int64_t)k * REF_BLOCK;
        hipdnnDataType_t t = last ? HIPDNN_DATA_DOUBLE : r->round_to[k]; /* out: the walker */
        bool f32 = t == HIPDNN_DATA_FLOAT; /* the common case, rounded in the op's loop */
        bool two = hipdnnSdkPointwiseArity(r->params[k].mode) == 2;
        /* constant f32 in each call: every loop is compiled both ways */
        if (two && f32) binary_row(&r->params[k], ops[0], ops[1], y, n, true);
        else if (two) binary_row(&r->params[k], ops[0], ops[1], y, n, false);
        else if (f32) unary_row(&r->params[k], ops[0], y, n, true);
        else unary_row(&r->params[k], ops[0], y, n, false);
        if (t == HIPDNN_DATA_HALF)
            for (int64_t i = 0; i < n; ++i) y[i] = ref_round_half(y[i]);
        else if (t == HIPDNN_DATA_BFLOAT16)
            for (int64_t i = 0; i < n; ++i) y[i] = ref_round_bf16(y[i]);
    }
}

/* The program compiled for each vector width; ref_fused_block_fn picks by CPU. */
#define PW_PROGRAM_VARIANT(name, attr)                                                      \
    attr static void name(const double* const* in, double* out, int64_t n, const void* ctx, \
                          double* tmp) {                                                    \
        run_program(ctx, in, out, n, tmp);                                                  \
    }

PW_PROGRAM_VARIANT(program_generic, )
#ifdef REF_X86_VARIANTS
PW_PROGRAM_VARIANT(program_avx2, REF_TARGET_AVX2)
PW_PROGRAM_VARIANT(program_avx512, REF_TARGET_AVX512)
#endif

ref_block_fn ref_fused_block_fn(void) {
    switch (ref_vector_level()) {
#ifdef REF_X86_VARIANTS
    case REF_VECTOR_AVX512: return program_avx512;
    case REF_VECTOR_AVX2: return program_avx2;
#endif
    default: return program_generic;
    }
}

hipdnnPluginStatus_t ref_pointwise(const hipdnnSdkNode* node, const ref_view* x,
                                   const ref_view* b, const ref_view* y,
                                   const ref_region* scratch) {
    char why[REF_MSG_LEN];
    if (!ref_pointwise_check(node, x, b, y, why, sizeof(why))) {
        ref_set_error(REF_ENGINE_NAME ": node '%s' (pointwise): %s", node->name, why);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    /* A program of one member: inputs x (slot 0) and b (slot 1). */
    ref_fused one;
    memset(&one, 0, sizeof(one));
    one.count = 1;
    ref_pw_params_of(node, &one.params[0]);
    one.nin = hipdnnSdkPointwiseArity(one.params[0].mode);
    one.src[0][1] = (int8_t)(one.nin - 1);
    one.round_to[0] = y->dtype;
    ref_view ins[2] = {*x, one.nin == 2 ? *b : *x};
    return ref_fused_run(node, &one, ins, y, scratch);
}

int64_t ref_pointwise_scratch_doubles(int64_t elements) {
    return ref_scratch_piece(ref_map_scratch_doubles(elements, 2, 0));
}
