/* INT8 conv_fprop and matmul with INT32 compute: which combinations run.
 *
 * Products of int8 values are at most 2^14 in magnitude, so the float64 kernels sum them
 * exactly (in any order) as long as the total stays below 2^53; the INT32 accumulator
 * cuDNN describes is honoured by declining reductions long enough to overflow it
 * (2^31 - 1 / 2^14 products), so every sum the engine gives is the exact integer.  It is
 * stored as INT32, as a float type rounded once, or as INT8 saturated to [-128, 127]. */
#include "reference_cpu.h"

bool ref_int8_compute_uses(const hipdnnSdkNode* node, hipdnnDataType_t a, hipdnnDataType_t b,
                           hipdnnDataType_t out) {
    return a == HIPDNN_DATA_INT8 || b == HIPDNN_DATA_INT8 || out == HIPDNN_DATA_INT8 ||
           out == HIPDNN_DATA_INT32 || node->compute_type == HIPDNN_DATA_INT32;
}

/* Longest reduction whose every sum of int8 products fits an INT32 accumulator. */
#define MAX_INT8_TERMS (INT64_C(2147483647) / (128 * 128))

bool ref_int8_compute_check(const hipdnnSdkNode* node, const char* const* names,
                            hipdnnDataType_t a, hipdnnDataType_t b, hipdnnDataType_t out,
                            int64_t terms, char* why, size_t len) {
    const char *na = names[0], *nb = names[1], *nout = names[2];
    if (a != HIPDNN_DATA_INT8 || b != HIPDNN_DATA_INT8) {
        hipdnnSdkFormat(why, len, "%s is %s and %s is %s: integer compute needs both INT8 "
                        "(mixed int8 and float inputs are not supported)", na,
                        hipdnnSdkDataTypeName(a), nb, hipdnnSdkDataTypeName(b));
        return false;
    }
    if (node->compute_type != HIPDNN_DATA_INT32) {
        hipdnnSdkFormat(why, len, "INT8 inputs need compute type INT32, not %s",
                        hipdnnSdkDataTypeName(node->compute_type));
        return false;
    }
    if (out != HIPDNN_DATA_INT32 && out != HIPDNN_DATA_INT8 && !ref_dtype_supported(out)) {
        hipdnnSdkFormat(why, len, "%s is %s; INT32 compute writes INT32, INT8 (saturated) or a "
                        "float type", nout, hipdnnSdkDataTypeName(out));
        return false;
    }
    if (terms > MAX_INT8_TERMS) {
        hipdnnSdkFormat(why, len, "each output sums %lld int8 products, which can overflow the "
                        "INT32 accumulator (at most %lld)", (long long)terms,
                        (long long)MAX_INT8_TERMS);
        return false;
    }
    return true;
}
