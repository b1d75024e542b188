/* pointwise: every mode of hipdnnPointwiseMode_t but ATAN2, its operands broadcast
 * NumPy-style onto the output: y = f(x [, b [, t]]), and for the _BWD modes dx = dy * f'(x).
 *
 * Definitions (float64 throughout, one rounding when the output is stored):
 *   add/sub/mul/div  IEEE arithmetic (x / 0 gives inf or NaN, as NumPy does)
 *   add_square       x + b * b
 *   mod              fmod(x, b): the remainder with the sign of x (C's fmod, NumPy's fmod)
 *   pow              pow(x, b), C99's special cases (pow(x, 0) = 1, pow(1, NaN) = 1, ...)
 *   max/min          IEEE 754-2019 maximum / minimum: NaN if either operand is NaN (as
 *                    NumPy's maximum / minimum), and -0 < +0, so max(-0, +0) = +0 and
 *                    min(-0, +0) = -0 whichever operand comes first (NumPy instead returns
 *                    one operand or the other for equal zeros)
 *   identity, neg, abs, ceil, floor, sqrt, exp, log, sin, cos, tan, erf
 *                    the C functions (exp: vmath.h's), reciprocal 1 / x, rsqrt 1 / sqrt(x)
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
 *   gelu_approx_tanh x (1 + tanh(u)) / 2, u = sqrt(2/pi) (x + 0.044715 x^3), computed as
 *                    x / (1 + exp(-2u)), which does not cancel for negative x; -0 where
 *                    exp(-2u) overflows (gelu_approx_tanh(-inf) = -0)
 *   elu              x > 0 ? x : alpha * expm1(x) (elu_alpha, default 1)
 *   softplus         log(1 + exp(beta x)) / beta (softplus_beta, default 1), as
 *                    (z > 0 ? z + log1p(exp(-z)) : log1p(exp(z))) / beta with z = beta x
 *   swish            x * sigmoid(beta x) = x / (1 + exp(-beta x)) (swish_beta, default 1);
 *                    a zero of x's sign where exp overflows (swish(-inf) = -0)
 *   cmp_*            1 where x == b (!=, >, >=, <, <=) holds, else 0: NaN compares unequal
 *                    to everything (cmp_neq gives 1, the others 0)
 *   logical_*        x != 0 and / or b != 0, not: x == 0 (NaN counts as true, as in NumPy)
 *   binary_select    t != 0 ? x : b
 *   gen_index        the output element's coordinate on `axis` (its operand is
 *                    ref_index_view of the output's dims: x is read for its shape only)
 * The _BWD modes give dx = dy * f'(x) with f' in forms that do not cancel:
 *   relu             x <= L ? S dy : (x >= U ? 0 : dy), exactly 0 on the flat parts (also
 *                    for an infinite dy), NaN for a NaN x; U = +inf (the default) clips
 *                    nothing, so relu'(+inf) = 1
 *   tanh             dy 4e / (1 + e)^2 with e = exp(-2|x|)  (= 1 - tanh^2 x)
 *   sigmoid          dy e / (1 + e)^2 with e = exp(-|x|)    (= sigmoid (1 - sigmoid))
 *   elu              x > 0 ? dy : dy (alpha exp(x))
 *   gelu             dy (P(x) + x phi(x)), phi the normal density (x phi = 0 where phi is)
 *   softplus         dy / (1 + exp(-beta x))
 *   swish            dy s (1 + z q), z = beta x, s = sigmoid(z), q = 1 - s = sigmoid(-z)
 *                    (each from exp(-|z|); the z q term is 0 where q is)
 *   gelu_approx_tanh dy (sigmoid(2u) + x sqrt(2/pi) (1 + 3 * 0.044715 x^2) 2e / (1 + e)^2),
 *                    e = exp(-2|u|) (the second term 0 where e is)
 * Every arithmetic mode gives NaN for a NaN operand; comparisons, logic, binary_select's
 * mask and gen_index give numbers as said above.  exp, tanh and sigmoid are vmath.h's
 * (within a few float64 ulps of the true value, as libm's are); the rest are libm's.
 */
#include <math.h>
#include <string.h>

#include "fp16_bf16.h"
#include "reference_cpu.h"
#include "vmath.h"

static const double k_sqrt1_2 = 0.70710678118654752440;    /* 1 / sqrt(2) */
static const double k_inv_sqrt2pi = 0.39894228040143267794; /* 1 / sqrt(2 pi) */
static const double k_sqrt2_pi = 0.79788456080286535588;    /* sqrt(2 / pi) */
static const double k_gelu_c = 0.044715;                    /* the tanh form's cubic term */

bool ref_pointwise_output_ok(hipdnnPointwiseMode_t mode, hipdnnDataType_t t) {
    if (ref_dtype_supported(t)) return true;
    if (hipdnnSdkPointwiseIsLogical(mode)) return ref_dtype_storable(t);
    if (mode == HIPDNN_POINTWISE_GEN_INDEX)
        return t == HIPDNN_DATA_INT32 || t == HIPDNN_DATA_INT64;
    return false;
}

bool ref_pointwise_check(const hipdnnSdkNode* node, const ref_view* const* ins,
                         const ref_view* y, char* why, size_t len) {
    hipdnnPointwiseMode_t mode = hipdnnSdkNodeMode(node);
    hipdnnSdkPointwisePorts ports;
    if (!hipdnnSdkPointwisePortsOf(mode, &ports)) {
        hipdnnSdkFormat(why, len, "pointwise mode %d not supported", (int)mode);
        return false;
    }
    const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(HIPDNN_OP_POINTWISE);
    const char* out = info->outputs[ports.output].name;
    for (int k = 0; k < ports.arity; ++k) {
        ref_view bv;
        const char* port = info->inputs[ports.inputs[k]].name;
        if (!ins[k]) {
            hipdnnSdkFormat(why, len, "mode %s needs input %s", hipdnnSdkPointwiseModeName(mode),
                            port);
            return false;
        }
        if (!ref_broadcast_view(ins[k], y->ndim, y->dims, &bv)) {
            hipdnnSdkFormat(why, len, "%s (rank %d) does not broadcast to %s (rank %d)", port,
                            ins[k]->ndim, out, y->ndim);
            return false;
        }
    }
    if (!ref_pointwise_output_ok(mode, y->dtype)) {
        hipdnnSdkFormat(why, len, "%s: data type %s not supported for %s (float32, float16, "
                        "bfloat16, float64%s)", out, hipdnnSdkDataTypeName(y->dtype),
                        hipdnnSdkPointwiseModeName(mode),
                        mode == HIPDNN_POINTWISE_GEN_INDEX ? ", int32, int64" : "");
        return false;
    }
    if (mode == HIPDNN_POINTWISE_GEN_INDEX && y->dtype == HIPDNN_DATA_INT32) {
        int64_t axis = node->attrs[HIPDNN_PW_AXIS].i[0];
        if (axis >= 0 && axis < y->ndim && y->dims[axis] > INT64_C(0x80000000)) {
            hipdnnSdkFormat(why, len, "%s: int32 cannot hold the indices of an axis of %lld",
                            out, (long long)y->dims[axis]);
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
    p->elu_alpha = node->attrs[HIPDNN_PW_ELU_ALPHA].d;
    p->softplus_beta = node->attrs[HIPDNN_PW_SOFTPLUS_BETA].d;
    p->swish_beta = node->attrs[HIPDNN_PW_SWISH_BETA].d;
}

/* ---- one mode over a block ----------------------------------------------------------
 * Each loop below is branch-free (selects, not branches) and, but for the libm calls
 * (log, sin, cos, tan, erf, erfc, expm1, log1p, pow, fmod), call-free, so it vectorizes;
 * the functions are always inlined, so a loop takes the vector width of the program
 * variant (end of file) it lands in.  Operands and result never overlap.  With f32 set,
 * each result is rounded to float32 as it is stored (a float32 intermediate), in the same
 * pass. */
#define PW_INLINE static inline __attribute__((always_inline))
#define PW_OUT(v) (f32 ? (double)(float)(v) : (v))
#define PW_LOOP(expr)                                                              \
    for (int64_t i = 0; i < n; ++i) y[i] = PW_OUT(expr);                           \
    break

/* IEEE maximum / minimum as selects.  Two zeros compare equal, so their order comes from
 * arithmetic instead: for zeros, a + b is +0 unless both are -0 (the maximum), and
 * -(-a - b) is -0 unless both are +0 (the minimum). */
PW_INLINE double maximum(double a, double b) {
    double m = a > b ? a : b;
    double z = a + b; /* NaN if either is NaN */
    m = a == 0.0 && b == 0.0 ? z : m;
    return isunordered(a, b) ? z : m;
}

PW_INLINE double minimum(double a, double b) {
    double m = a < b ? a : b;
    double z = -(-a - b); /* NaN if either is NaN */
    m = a == 0.0 && b == 0.0 ? z : m;
    return isunordered(a, b) ? z : m;
}

/* x / d with d = 1 + exp(...) >= 1: a zero of x's sign where d overflowed (x * 0). */
PW_INLINE double over_one_plus(double x, double d) {
    return d == INFINITY ? copysign(0.0, x) : x / d;
}

/* e / (1 + e)^2, the derivative's shape shared by sigmoid and tanh. */
PW_INLINE double bell(double e) { return e / ((1.0 + e) * (1.0 + e)); }

/* 2 sqrt(2/pi) (x + 0.044715 x^3): the tanh form's 2u. */
PW_INLINE double gelu_tanh_2u(double x) { return 2.0 * (k_sqrt2_pi * (x + k_gelu_c * (x * x * x))); }

PW_INLINE double gelu_exact(double x) {
    double cdf = 0.5 * erfc(-x * k_sqrt1_2);
    return cdf == 0.0 ? -0.0 : x * cdf; /* -inf * 0 would be NaN */
}

PW_INLINE double relu_bwd(const ref_pw_params* p, double x, double dy) {
    /* an upper clip of +inf is none: relu'(+inf) is 1 */
    double v = x >= p->upper_clip && p->upper_clip != INFINITY ? 0.0 : dy;
    double below = p->lower_clip_slope == 0.0 ? 0.0 : p->lower_clip_slope * dy;
    double r = x <= p->lower_clip ? below : v;
    return x != x ? x : r;
}

PW_INLINE double gelu_bwd(double x, double dy) {
    double cdf = 0.5 * erfc(-x * k_sqrt1_2);
    double pdf = ref_vm_exp(-0.5 * (x * x)) * k_inv_sqrt2pi;
    double t = pdf == 0.0 ? 0.0 : x * pdf; /* +-inf * 0 would be NaN */
    return dy * (cdf + t);
}

PW_INLINE double swish_bwd(double beta, double x, double dy) {
    double z = beta * x;
    double e = ref_vm_exp(-fabs(z));
    double p = 1.0 / (1.0 + e), m = e * p; /* sigmoid(|z|), sigmoid(-|z|) */
    double s = z >= 0.0 ? p : m, q = z >= 0.0 ? m : p;
    double zq = q == 0.0 ? 0.0 : z * q;
    double d = s == 0.0 ? 0.0 : s * (1.0 + zq);
    return dy * d;
}

PW_INLINE double gelu_tanh_bwd(double x, double dy) {
    double u2 = gelu_tanh_2u(x);
    double sig = 1.0 / (1.0 + ref_vm_exp(-u2));
    double e = ref_vm_exp(-fabs(u2));
    double slope = x * (k_sqrt2_pi * (1.0 + 3.0 * k_gelu_c * (x * x)));
    double t = e == 0.0 ? 0.0 : slope * (2.0 * bell(e));
    return dy * (sig + t);
}

PW_INLINE void binary_row(const ref_pw_params* p, const double* restrict a,
                          const double* restrict b, double* restrict y, int64_t n, bool f32) {
    switch (p->mode) {
    case HIPDNN_POINTWISE_ADD: PW_LOOP(a[i] + b[i]);
    case HIPDNN_POINTWISE_SUB: PW_LOOP(a[i] - b[i]);
    case HIPDNN_POINTWISE_MUL: PW_LOOP(a[i] * b[i]);
    case HIPDNN_POINTWISE_DIV: PW_LOOP(a[i] / b[i]);
    case HIPDNN_POINTWISE_MAX: PW_LOOP(maximum(a[i], b[i]));
    case HIPDNN_POINTWISE_MIN: PW_LOOP(minimum(a[i], b[i]));
    case HIPDNN_POINTWISE_ADD_SQUARE: PW_LOOP(a[i] + b[i] * b[i]);
    case HIPDNN_POINTWISE_MOD: PW_LOOP(fmod(a[i], b[i]));
    case HIPDNN_POINTWISE_POW: PW_LOOP(pow(a[i], b[i]));
    case HIPDNN_POINTWISE_CMP_EQ: PW_LOOP(a[i] == b[i] ? 1.0 : 0.0);
    case HIPDNN_POINTWISE_CMP_NEQ: PW_LOOP(a[i] != b[i] ? 1.0 : 0.0);
    case HIPDNN_POINTWISE_CMP_GT: PW_LOOP(a[i] > b[i] ? 1.0 : 0.0);
    case HIPDNN_POINTWISE_CMP_GE: PW_LOOP(a[i] >= b[i] ? 1.0 : 0.0);
    case HIPDNN_POINTWISE_CMP_LT: PW_LOOP(a[i] < b[i] ? 1.0 : 0.0);
    case HIPDNN_POINTWISE_CMP_LE: PW_LOOP(a[i] <= b[i] ? 1.0 : 0.0);
    case HIPDNN_POINTWISE_LOGICAL_AND: PW_LOOP(a[i] != 0.0 && b[i] != 0.0 ? 1.0 : 0.0);
    case HIPDNN_POINTWISE_LOGICAL_OR: PW_LOOP(a[i] != 0.0 || b[i] != 0.0 ? 1.0 : 0.0);
    /* the _BWD modes: a is x, b is dy */
    case HIPDNN_POINTWISE_RELU_BWD: PW_LOOP(relu_bwd(p, a[i], b[i]));
    case HIPDNN_POINTWISE_TANH_BWD: PW_LOOP(b[i] * (4.0 * bell(ref_vm_exp(-2.0 * fabs(a[i])))));
    case HIPDNN_POINTWISE_SIGMOID_BWD: PW_LOOP(b[i] * bell(ref_vm_exp(-fabs(a[i]))));
    case HIPDNN_POINTWISE_ELU_BWD: PW_LOOP(a[i] > 0.0 ? b[i] : b[i] * (p->elu_alpha * ref_vm_exp(a[i])));
    case HIPDNN_POINTWISE_GELU_BWD: PW_LOOP(gelu_bwd(a[i], b[i]));
    case HIPDNN_POINTWISE_SOFTPLUS_BWD:
        PW_LOOP(b[i] / (1.0 + ref_vm_exp(-(p->softplus_beta * a[i]))));
    case HIPDNN_POINTWISE_SWISH_BWD: PW_LOOP(swish_bwd(p->swish_beta, a[i], b[i]));
    case HIPDNN_POINTWISE_GELU_APPROX_TANH_BWD: PW_LOOP(gelu_tanh_bwd(a[i], b[i]));
    default: PW_LOOP(NAN);
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

PW_INLINE double softplus(double beta, double x) {
    double z = beta * x;
    double r = z > 0.0 ? z + log1p(ref_vm_exp(-z)) : log1p(ref_vm_exp(z));
    return r / beta;
}

PW_INLINE void unary_row(const ref_pw_params* p, const double* restrict x, double* restrict y,
                         int64_t n, bool f32) {
    switch (p->mode) {
    case HIPDNN_POINTWISE_IDENTITY:
    case HIPDNN_POINTWISE_GEN_INDEX: PW_LOOP(x[i]);
    case HIPDNN_POINTWISE_RELU_FWD: relu_row(p, x, y, n, f32); break;
    case HIPDNN_POINTWISE_SIGMOID_FWD: PW_LOOP(ref_vm_sigmoid(x[i]));
    case HIPDNN_POINTWISE_TANH_FWD: PW_LOOP(ref_vm_tanh(x[i]));
    case HIPDNN_POINTWISE_GELU_FWD: PW_LOOP(gelu_exact(x[i]));
    case HIPDNN_POINTWISE_EXP: PW_LOOP(ref_vm_exp(x[i]));
    case HIPDNN_POINTWISE_SQRT: PW_LOOP(sqrt(x[i]));
    case HIPDNN_POINTWISE_RSQRT: PW_LOOP(1.0 / sqrt(x[i]));
    case HIPDNN_POINTWISE_RECIPROCAL: PW_LOOP(1.0 / x[i]);
    case HIPDNN_POINTWISE_ABS: PW_LOOP(fabs(x[i]));
    case HIPDNN_POINTWISE_NEG: PW_LOOP(-x[i]);
    case HIPDNN_POINTWISE_CEIL: PW_LOOP(ceil(x[i]));
    case HIPDNN_POINTWISE_FLOOR: PW_LOOP(floor(x[i]));
    case HIPDNN_POINTWISE_LOG: PW_LOOP(log(x[i]));
    case HIPDNN_POINTWISE_SIN: PW_LOOP(sin(x[i]));
    case HIPDNN_POINTWISE_COS: PW_LOOP(cos(x[i]));
    case HIPDNN_POINTWISE_TAN: PW_LOOP(tan(x[i]));
    case HIPDNN_POINTWISE_ERF: PW_LOOP(erf(x[i]));
    case HIPDNN_POINTWISE_ELU_FWD: PW_LOOP(x[i] > 0.0 ? x[i] : p->elu_alpha * expm1(x[i]));
    case HIPDNN_POINTWISE_SOFTPLUS_FWD: PW_LOOP(softplus(p->softplus_beta, x[i]));
    case HIPDNN_POINTWISE_SWISH_FWD:
        PW_LOOP(over_one_plus(x[i], 1.0 + ref_vm_exp(-(p->swish_beta * x[i]))));
    case HIPDNN_POINTWISE_GELU_APPROX_TANH_FWD:
        PW_LOOP(over_one_plus(x[i], 1.0 + ref_vm_exp(-gelu_tanh_2u(x[i]))));
    case HIPDNN_POINTWISE_LOGICAL_NOT: PW_LOOP(x[i] == 0.0 ? 1.0 : 0.0);
    default: PW_LOOP(NAN);
    }
}

/* binary_select, the one mode of three operands: t != 0 ? x : b. */
PW_INLINE void ternary_row(const double* restrict x, const double* restrict b,
                           const double* restrict t, double* restrict y, int64_t n, bool f32) {
    for (int64_t i = 0; i < n; ++i) y[i] = PW_OUT(t[i] != 0.0 ? x[i] : b[i]);
}

/* ---- a program over a block -------------------------------------------------------- */

/* Member k reads input blocks or earlier members' blocks (tmp, one per member but the
 * last) and writes its own block, or `out` for the last member.  Intermediates are
 * rounded to their data type as storing and reloading the virtual tensor would (BOOLEAN
 * and integer ones hold exact 0 / 1 or indices already). */
PW_INLINE void run_program(const ref_fused* r, const double* const* in, double* out, int64_t n,
                           double* tmp) {
    for (int k = 0; k < r->count; ++k) {
        const double* ops[3];
        for (int op = 0; op < 3; ++op) {
            int8_t s = r->src[k][op];
            ops[op] = s >= 0 ? in[s] : tmp + (int64_t)(-s - 1) * REF_BLOCK;
        }
        bool last = k == r->count - 1;
        double* y = last ? out : tmp + (int64_t)k * REF_BLOCK;
        hipdnnDataType_t t = last ? HIPDNN_DATA_DOUBLE : r->round_to[k]; /* out: the walker */
        bool f32 = t == HIPDNN_DATA_FLOAT; /* the common case, rounded in the op's loop */
        int arity = hipdnnSdkPointwiseArity(r->params[k].mode);
        /* constant f32 in each call: every loop is compiled both ways */
        if (arity == 3 && f32) ternary_row(ops[0], ops[1], ops[2], y, n, true);
        else if (arity == 3) ternary_row(ops[0], ops[1], ops[2], y, n, false);
        else if (arity == 2 && f32) binary_row(&r->params[k], ops[0], ops[1], y, n, true);
        else if (arity == 2) binary_row(&r->params[k], ops[0], ops[1], y, n, false);
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

hipdnnPluginStatus_t ref_pointwise(const hipdnnSdkNode* node, const ref_view* ins,
                                   const ref_view* y, const ref_region* scratch) {
    char why[REF_MSG_LEN];
    int arity = hipdnnSdkPointwiseArity(hipdnnSdkNodeMode(node));
    const ref_view* in[3] = {NULL, NULL, NULL};
    for (int k = 0; k < arity && k < 3; ++k) in[k] = &ins[k];
    if (!ref_pointwise_check(node, in, y, why, sizeof(why))) {
        ref_set_error(REF_ENGINE_NAME ": node '%s' (pointwise): %s", node->name, why);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    /* A program of one member: its operands in slots 0 .. arity - 1. */
    ref_fused one;
    memset(&one, 0, sizeof(one));
    one.count = 1;
    ref_pw_params_of(node, &one.params[0]);
    one.nin = arity;
    for (int k = 0; k < arity; ++k) {
        one.src[0][k] = (int8_t)k;
        one.index_axis[k] = -1;
    }
    one.round_to[0] = y->dtype;
    return ref_fused_run(node, &one, ins, y, scratch);
}

int64_t ref_pointwise_scratch_doubles(int64_t elements) {
    return ref_scratch_piece(ref_map_scratch_doubles(elements, 3, 0));
}
