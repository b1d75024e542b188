/* typed_rows.h — rows of a tensor's values moved to and from float64: n values at
 * elements off, off + s, ... of data in one of the storage types.
 *
 * Always inlined, so that each caller's variants (the block walker's, the reductions')
 * convert with their own vector width.  Each loop is written twice: unit stride, which
 * vectorizes, and any. */
#ifndef HIPDNN_REF_TYPED_ROWS_H
#define HIPDNN_REF_TYPED_ROWS_H

#include <math.h>
#include <stdint.h>

#include "fp16_bf16.h"
#include "hipdnn/hipdnn_sdk.h"
#include "reference_cpu.h" /* REF_DTYPE_INDEX */

#define REF_ROW_INLINE static inline __attribute__((always_inline))
#define REF_AS_DOUBLE(v) ((double)(v))
#define REF_AS_TRUTH(b) ((double)((b) != 0)) /* a BOOLEAN byte: any nonzero byte is true */
/* Integer results are exact integers where support.c lets a node write an integer type
 * (comparisons, logic, gen_index, pooling indices, reshape, INT8-compute conv and
 * matmul), but a store is defined for every double anyway, since a value that breaks
 * that rule must not become undefined behaviour: NaN stores 0, values past the type's
 * range saturate (INT8 compute's sums do exceed INT8), others truncate toward zero. */
#define REF_AS_BOOL(v) ((uint8_t)((v) != 0.0))
#define REF_SATURATE(type, lo, hi)                                                 \
    REF_ROW_INLINE type ref_sat_##type(double v) {                                 \
        return v != v ? (type)0 : v <= (lo) ? (type)(lo) : v >= (hi) ? (type)(hi) : (type)v; \
    }
REF_SATURATE(int8_t, -128.0, 127.0)
REF_SATURATE(uint8_t, 0.0, 255.0)
REF_SATURATE(int32_t, -2147483648.0, 2147483647.0)
/* 2^63 is a double; INT64_MAX is not (it rounds up to 2^63), hence the explicit bound */
REF_ROW_INLINE int64_t ref_sat_int64_t(double v) {
    if (v != v) return 0;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    if (v >= 9223372036854775808.0) return INT64_MAX;
    return (int64_t)v;
}
#define REF_AS_I8(v) ref_sat_int8_t(v)
#define REF_AS_U8(v) ref_sat_uint8_t(v)
#define REF_AS_I32(v) ref_sat_int32_t(v)
#define REF_AS_I64(v) ref_sat_int64_t(v)
#define REF_LOAD_ROW(type, convert)                                              \
    {                                                                            \
        const type* p = (const type*)base + off;                                 \
        if (s == 1)                                                              \
            for (int64_t i = 0; i < n; ++i) out[i] = convert(p[i]);              \
        else                                                                     \
            for (int64_t i = 0; i < n; ++i) out[i] = convert(p[i * s]);          \
        break;                                                                   \
    }
#define REF_STORE_ROW(type, convert)                                             \
    {                                                                            \
        type* p = (type*)base + off;                                             \
        if (s == 1)                                                              \
            for (int64_t i = 0; i < n; ++i) p[i] = convert(in[i]);               \
        else                                                                     \
            for (int64_t i = 0; i < n; ++i) p[i * s] = convert(in[i]);           \
        break;                                                                   \
    }

REF_ROW_INLINE void ref_row_load(const void* base, hipdnnDataType_t t, int64_t off, int64_t s,
                                 int64_t n, double* out) {
    if (t == REF_DTYPE_INDEX) { /* no data: each value is its offset */
        for (int64_t i = 0; i < n; ++i) out[i] = (double)(off + i * s);
        return;
    }
    if (s == 0) { /* a broadcast value: read once */
        double v = hipdnnSdkLoadAsDouble(base, t, off);
        for (int64_t i = 0; i < n; ++i) out[i] = v;
        return;
    }
    switch (t) {
    case HIPDNN_DATA_FLOAT: REF_LOAD_ROW(float, REF_AS_DOUBLE)
    case HIPDNN_DATA_DOUBLE: REF_LOAD_ROW(double, REF_AS_DOUBLE)
    case HIPDNN_DATA_HALF: REF_LOAD_ROW(uint16_t, ref_half_to_double)
    case HIPDNN_DATA_BFLOAT16: REF_LOAD_ROW(uint16_t, ref_bf16_to_double)
    case HIPDNN_DATA_BOOLEAN: REF_LOAD_ROW(uint8_t, REF_AS_TRUTH)
    case HIPDNN_DATA_INT8: REF_LOAD_ROW(int8_t, REF_AS_DOUBLE)
    case HIPDNN_DATA_UINT8: REF_LOAD_ROW(uint8_t, REF_AS_DOUBLE)
    case HIPDNN_DATA_INT32: REF_LOAD_ROW(int32_t, REF_AS_DOUBLE)
    case HIPDNN_DATA_INT64: REF_LOAD_ROW(int64_t, REF_AS_DOUBLE)
    default: /* support.c declines other types; never read garbage as numbers */
        for (int64_t i = 0; i < n; ++i) out[i] = NAN;
        break;
    }
}

REF_ROW_INLINE void ref_row_store(void* base, hipdnnDataType_t t, int64_t off, int64_t s,
                                  int64_t n, const double* in) {
    switch (t) {
    case HIPDNN_DATA_FLOAT: REF_STORE_ROW(float, (float))
    case HIPDNN_DATA_DOUBLE: REF_STORE_ROW(double, REF_AS_DOUBLE)
    case HIPDNN_DATA_HALF: REF_STORE_ROW(uint16_t, ref_double_to_half)
    case HIPDNN_DATA_BFLOAT16: REF_STORE_ROW(uint16_t, ref_double_to_bf16)
    case HIPDNN_DATA_BOOLEAN: REF_STORE_ROW(uint8_t, REF_AS_BOOL)
    case HIPDNN_DATA_INT8: REF_STORE_ROW(int8_t, REF_AS_I8)
    case HIPDNN_DATA_UINT8: REF_STORE_ROW(uint8_t, REF_AS_U8)
    case HIPDNN_DATA_INT32: REF_STORE_ROW(int32_t, REF_AS_I32)
    case HIPDNN_DATA_INT64: REF_STORE_ROW(int64_t, REF_AS_I64)
    default: break;
    }
}

#endif
