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
 * Every mode gives NaN for a NaN input.  The row loops select with comparisons, not
 * branches, so gcc can vectorize the ones without libm calls.
 */
#include <math.h>

#include "reference_cpu.h"

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

typedef ref_pw_params pw_params;

void ref_pw_params_of(const hipdnnSdkNode* node, ref_pw_params* p) {
    p->mode = hipdnnSdkNodeMode(node);
    p->lower_clip = node->attrs[HIPDNN_PW_RELU_LOWER_CLIP].d;
    p->upper_clip = node->attrs[HIPDNN_PW_RELU_UPPER_CLIP].d;
    p->lower_clip_slope = node->attrs[HIPDNN_PW_RELU_LOWER_CLIP_SLOPE].d;
}

/* IEEE maximum / minimum as selects, so the loops vectorize.  Two zeros compare equal, so
 * their order comes from arithmetic instead: for zeros, a + b is +0 unless both are -0
 * (the maximum), and -(-a - b) is -0 unless both are +0 (the minimum). */
static void maximum_row(const double* restrict a, const double* restrict b, double* restrict y,
                        int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        double ai = a[i], bi = b[i];
        double m = ai > bi ? ai : bi;
        double z = ai + bi; /* NaN if either is NaN */
        m = ai == 0.0 && bi == 0.0 ? z : m;
        y[i] = isunordered(ai, bi) ? z : m;
    }
}

static void minimum_row(const double* restrict a, const double* restrict b, double* restrict y,
                        int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        double ai = a[i], bi = b[i];
        double m = ai < bi ? ai : bi;
        double z = -(-ai - bi); /* NaN if either is NaN */
        m = ai == 0.0 && bi == 0.0 ? z : m;
        y[i] = isunordered(ai, bi) ? z : m;
    }
}

/* The rows never overlap: ref_map_rows gives each its own scratch buffer. */
static void binary_row(const double* const* in, double* out, int64_t n, const void* ctx) {
    const pw_params* p = ctx;
    const double* restrict a = in[0];
    const double* restrict b = in[1];
    double* restrict y = out;
    switch (p->mode) {
    case HIPDNN_POINTWISE_ADD: for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i]; break;
    case HIPDNN_POINTWISE_SUB: for (int64_t i = 0; i < n; ++i) y[i] = a[i] - b[i]; break;
    case HIPDNN_POINTWISE_MUL: for (int64_t i = 0; i < n; ++i) y[i] = a[i] * b[i]; break;
    case HIPDNN_POINTWISE_DIV: for (int64_t i = 0; i < n; ++i) y[i] = a[i] / b[i]; break;
    case HIPDNN_POINTWISE_MAX: maximum_row(a, b, y, n); break;
    case HIPDNN_POINTWISE_MIN: minimum_row(a, b, y, n); break;
    default: for (int64_t i = 0; i < n; ++i) y[i] = NAN; break;
    }
}

/* NaN fails both comparisons and passes through as x. */
static void relu_row(const double* restrict x, double* restrict y, int64_t n,
                     const pw_params* p) {
    const double lo = p->lower_clip, hi = p->upper_clip, slope = p->lower_clip_slope;
    if (slope == 0.0) { /* the flat part is exactly lo, even at x = -inf */
        for (int64_t i = 0; i < n; ++i) {
            double v = x[i] >= hi ? hi : x[i];
            y[i] = x[i] <= lo ? lo : v;
        }
    } else {
        /* The sloped line everywhere first, then the selects: in one loop gcc sinks the
         * arithmetic into a branch (it may trap) and the loop no longer vectorizes. */
        for (int64_t i = 0; i < n; ++i) y[i] = lo + slope * (x[i] - lo);
        for (int64_t i = 0; i < n; ++i) {
            double v = x[i] >= hi ? hi : x[i];
            y[i] = x[i] <= lo ? y[i] : v;
        }
    }
}

static void gelu_row(const double* restrict x, double* restrict y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        double cdf = 0.5 * erfc(-x[i] * k_sqrt1_2);
        y[i] = cdf == 0.0 ? -0.0 : x[i] * cdf; /* -inf * 0 would be NaN */
    }
}

static void unary_row(const double* const* in, double* out, int64_t n, const void* ctx) {
    const pw_params* p = ctx;
    const double* restrict x = in[0];
    double* restrict y = out;
    switch (p->mode) {
    case HIPDNN_POINTWISE_IDENTITY: for (int64_t i = 0; i < n; ++i) y[i] = x[i]; break;
    case HIPDNN_POINTWISE_RELU_FWD: relu_row(x, y, n, p); break;
    case HIPDNN_POINTWISE_SIGMOID_FWD:
        for (int64_t i = 0; i < n; ++i) y[i] = 1.0 / (1.0 + exp(-x[i]));
        break;
    case HIPDNN_POINTWISE_TANH_FWD: for (int64_t i = 0; i < n; ++i) y[i] = tanh(x[i]); break;
    case HIPDNN_POINTWISE_GELU_FWD: gelu_row(x, y, n); break;
    default: for (int64_t i = 0; i < n; ++i) y[i] = NAN; break;
    }
}

void ref_pw_row(const ref_pw_params* p, const double* a, const double* b, double* y,
                int64_t n) {
    const double* in[2] = {a, b};
    if (hipdnnSdkPointwiseArity(p->mode) == 2) binary_row(in, y, n, p);
    else unary_row(in, y, n, p);
}

hipdnnPluginStatus_t ref_pointwise(const hipdnnSdkNode* node, const ref_view* x,
                                   const ref_view* b, const ref_view* y) {
    pw_params params;
    ref_pw_params_of(node, &params);
    char why[REF_MSG_LEN];
    if (!ref_pointwise_check(node, x, b, y, why, sizeof(why))) {
        ref_set_error(REF_ENGINE_NAME ": node '%s' (pointwise): %s", node->name, why);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    bool binary = hipdnnSdkPointwiseArity(params.mode) == 2;
    ref_view in[2];
    ref_broadcast_view(x, y->ndim, y->dims, &in[0]);
    if (binary) ref_broadcast_view(b, y->ndim, y->dims, &in[1]);
    if (ref_map_rows(y, binary ? 2 : 1, in, binary ? binary_row : unary_row, &params) != 0) {
        ref_set_error(REF_ENGINE_NAME ": node '%s' (pointwise): out of memory for scratch rows",
                      node->name);
        return HIPDNN_PLUGIN_STATUS_ALLOC_FAILED;
    }
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}
