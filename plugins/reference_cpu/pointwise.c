/* pointwise: y = f(x) or y = f(x, b), x and b broadcast NumPy-style onto y.
 *
 * Definitions (float64 throughout):
 *   add/sub/mul/div  IEEE arithmetic (x / 0 gives inf or NaN, as NumPy does)
 *   max/min          NaN if either operand is NaN (NumPy's maximum/minimum)
 *   identity         y = x
 *   relu             cuDNN's RELU_FWD with lower_clip L, upper_clip U, lower_clip_slope S:
 *                      y = x > L ? min(x, U) : L + S * (x - L)
 *                    defaults L = 0, U = +inf, S = 0 give max(x, 0); S alone gives leaky
 *                    relu; U alone a clipped relu (continuous at L whatever S is)
 *   sigmoid          1 / (1 + exp(-x))
 *   tanh             tanh(x)
 *   gelu             exact: 0.5 * x * (1 + erf(x / sqrt(2)))
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

static double nan_max(double a, double b) {
    if (isnan(a) || isnan(b)) return NAN;
    return a > b ? a : b;
}

static double nan_min(double a, double b) {
    if (isnan(a) || isnan(b)) return NAN;
    return a < b ? a : b;
}

static void binary_row(const double* const* in, double* y, int64_t n, const void* ctx) {
    const hipdnnSdkNode* node = ctx;
    const double* a = in[0];
    const double* b = in[1];
    switch (hipdnnSdkNodeMode(node)) {
    case HIPDNN_POINTWISE_ADD: for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i]; break;
    case HIPDNN_POINTWISE_SUB: for (int64_t i = 0; i < n; ++i) y[i] = a[i] - b[i]; break;
    case HIPDNN_POINTWISE_MUL: for (int64_t i = 0; i < n; ++i) y[i] = a[i] * b[i]; break;
    case HIPDNN_POINTWISE_DIV: for (int64_t i = 0; i < n; ++i) y[i] = a[i] / b[i]; break;
    case HIPDNN_POINTWISE_MAX: for (int64_t i = 0; i < n; ++i) y[i] = nan_max(a[i], b[i]); break;
    case HIPDNN_POINTWISE_MIN: for (int64_t i = 0; i < n; ++i) y[i] = nan_min(a[i], b[i]); break;
    default: for (int64_t i = 0; i < n; ++i) y[i] = NAN; break;
    }
}

static void unary_row(const double* const* in, double* y, int64_t n, const void* ctx) {
    const hipdnnSdkNode* node = ctx;
    const double* x = in[0];
    switch (hipdnnSdkNodeMode(node)) {
    case HIPDNN_POINTWISE_IDENTITY: for (int64_t i = 0; i < n; ++i) y[i] = x[i]; break;
    case HIPDNN_POINTWISE_RELU_FWD: {
        double lo = node->attrs[HIPDNN_PW_RELU_LOWER_CLIP].d;
        double hi = node->attrs[HIPDNN_PW_RELU_UPPER_CLIP].d;
        double slope = node->attrs[HIPDNN_PW_RELU_LOWER_CLIP_SLOPE].d;
        for (int64_t i = 0; i < n; ++i)
            y[i] = x[i] > lo ? (x[i] < hi ? x[i] : hi) : lo + slope * (x[i] - lo);
        break;
    }
    case HIPDNN_POINTWISE_SIGMOID_FWD:
        for (int64_t i = 0; i < n; ++i) y[i] = 1.0 / (1.0 + exp(-x[i]));
        break;
    case HIPDNN_POINTWISE_TANH_FWD: for (int64_t i = 0; i < n; ++i) y[i] = tanh(x[i]); break;
    case HIPDNN_POINTWISE_GELU_FWD:
        for (int64_t i = 0; i < n; ++i) y[i] = 0.5 * x[i] * (1.0 + erf(x[i] * k_sqrt1_2));
        break;
    default: for (int64_t i = 0; i < n; ++i) y[i] = NAN; break;
    }
}

hipdnnPluginStatus_t ref_pointwise(const hipdnnSdkNode* node, const ref_view* x,
                                   const ref_view* b, const ref_view* y) {
    char why[REF_MSG_LEN];
    if (!ref_pointwise_check(node, x, b, y, why, sizeof(why))) {
        ref_set_error(REF_ENGINE_NAME ": node '%s' (pointwise): %s", node->name, why);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    bool binary = hipdnnSdkPointwiseArity(hipdnnSdkNodeMode(node)) == 2;
    ref_view in[2];
    ref_broadcast_view(x, y->ndim, y->dims, &in[0]);
    if (binary) ref_broadcast_view(b, y->ndim, y->dims, &in[1]);
    if (ref_map_rows(y, binary ? 2 : 1, in, binary ? binary_row : unary_row, node) != 0) {
        ref_set_error(REF_ENGINE_NAME ": node '%s' (pointwise): out of memory for scratch rows",
                      node->name);
        return HIPDNN_PLUGIN_STATUS_ALLOC_FAILED;
    }
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}
