/* Data types: sizes, names, fp16/bf16 conversion and typed element access. */
#include <math.h>
#include <string.h>

#include "hipdnn/hipdnn_sdk.h"

/* Every data type's name and size, the one list of them (Python's _C reads it too). */
static const struct {
    hipdnnDataType_t type;
    const char* name;
    size_t size;
} k_types[] = {
    {HIPDNN_DATA_FLOAT, "float32", 4},  {HIPDNN_DATA_DOUBLE, "float64", 8},
    {HIPDNN_DATA_HALF, "float16", 2},   {HIPDNN_DATA_BFLOAT16, "bfloat16", 2},
    {HIPDNN_DATA_INT8, "int8", 1},      {HIPDNN_DATA_INT32, "int32", 4},
    {HIPDNN_DATA_INT64, "int64", 8},    {HIPDNN_DATA_UINT8, "uint8", 1},
    {HIPDNN_DATA_BOOLEAN, "bool", 1},   {HIPDNN_DATA_FP8_E4M3, "fp8_e4m3", 1},
    {HIPDNN_DATA_FP8_E5M2, "fp8_e5m2", 1}, {HIPDNN_DATA_FP8_E8M0, "fp8_e8m0", 1},
    {HIPDNN_DATA_FP4_E2M1, "fp4_e2m1", 1}, {HIPDNN_DATA_NOT_SET, "not_set", 0},
};

static int row_of(hipdnnDataType_t t) {
    for (int i = 0; i < (int)(sizeof(k_types) / sizeof(k_types[0])); ++i)
        if (k_types[i].type == t) return i;
    return -1;
}

size_t hipdnnSdkDataTypeSize(hipdnnDataType_t t) {
    int i = row_of(t);
    return i < 0 ? 0 : k_types[i].size;
}

const char* hipdnnSdkDataTypeName(hipdnnDataType_t t) {
    int i = row_of(t);
    return i < 0 ? "unknown" : k_types[i].name;
}

static uint32_t float_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float bits_float(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* |v| (bits `abs` of a finite, non-negative double) rounded to nearest, ties to even, in a
 * binary format with `frac` fraction bits and normal exponents emin..emax; the result's
 * bits without the sign.  Rounding from the double's own bits is what keeps it single: a
 * detour through float would round twice.  Too large gives infinity (all-ones exponent,
 * zero fraction), carries from rounding move into the exponent, and below half the
 * smallest subnormal gives zero; double subnormals are far below it. */
static uint16_t round_double_bits(uint64_t abs, int frac, int emin, int emax) {
    int e = (int)(abs >> 52) - 1023;
    if (e > emax) return (uint16_t)((emax - emin + 2) << frac);
    if (e < emin - frac - 1) return 0;
    uint64_t m = (abs & ((UINT64_C(1) << 52) - 1)) | (UINT64_C(1) << 52);
    int shift = 52 - frac + (e < emin ? emin - e : 0); /* at most 53 */
    /* The implicit bit in m >> shift adds the 1 that turns e - emin into a biased exponent;
     * a subnormal has no exponent part, its implicit bit lands inside the fraction. */
    uint32_t r = (e < emin ? 0u : (uint32_t)(e - emin) << frac) + (uint32_t)(m >> shift);
    uint64_t rest = m & ((UINT64_C(1) << shift) - 1), half = UINT64_C(1) << (shift - 1);
    if (rest > half || (rest == half && (r & 1u))) ++r;
    return (uint16_t)r;
}

static uint64_t double_bits(double d) {
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

uint16_t hipdnnSdkDoubleToHalf(double d) {
    uint64_t x = double_bits(d);
    uint16_t sign = (uint16_t)((x >> 48) & 0x8000u);
    uint64_t abs = x & ~(UINT64_C(1) << 63);
    if (abs > UINT64_C(0x7ff0000000000000)) /* NaN: quiet, top of the payload kept */
        return (uint16_t)(sign | 0x7e00u | ((abs >> 42) & 0x3ffu));
    return (uint16_t)(sign | round_double_bits(abs, 10, -14, 15));
}

uint16_t hipdnnSdkDoubleToBfloat16(double d) {
    uint64_t x = double_bits(d);
    uint16_t sign = (uint16_t)((x >> 48) & 0x8000u);
    uint64_t abs = x & ~(UINT64_C(1) << 63);
    if (abs > UINT64_C(0x7ff0000000000000)) /* NaN: quiet, top of the payload kept */
        return (uint16_t)(sign | 0x7fc0u | ((abs >> 45) & 0x7fu));
    return (uint16_t)(sign | round_double_bits(abs, 7, -126, 127));
}

/* A float is exactly a double, so one rounding serves both. */
uint16_t hipdnnSdkFloatToHalf(float f) { return hipdnnSdkDoubleToHalf(f); }

float hipdnnSdkHalfToFloat(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0) {
        float v = (float)mant / 16777216.0f;
        return sign ? -v : v;
    }
    if (exp == 31) return bits_float(sign | 0x7f800000u | (mant << 13));
    return bits_float(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

uint16_t hipdnnSdkFloatToBfloat16(float f) {
    uint32_t x = float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* quiet NaN */
    uint32_t lsb = (x >> 16) & 1u;
    x += 0x7fffu + lsb;
    return (uint16_t)(x >> 16);
}

float hipdnnSdkBfloat16ToFloat(uint16_t b) { return bits_float((uint32_t)b << 16); }

/* Element i of type T at ptr, read with memcpy: callers hand in by-value tensors' bytes,
 * which sit in byte arrays with no alignment promised. */
#define LOAD(T) (memcpy(&v.T##_, (const char*)ptr + i * (int64_t)sizeof(v.T##_), sizeof(v.T##_)), v.T##_)

double hipdnnSdkLoadAsDouble(const void* ptr, hipdnnDataType_t t, int64_t i) {
    union {
        float f_;
        double d_;
        uint16_t u16_;
        int8_t i8_;
        uint8_t u8_;
        int32_t i32_;
        int64_t i64_;
    } v;
    switch (t) {
    case HIPDNN_DATA_FLOAT: return LOAD(f);
    case HIPDNN_DATA_DOUBLE: return LOAD(d);
    case HIPDNN_DATA_HALF: return hipdnnSdkHalfToFloat(LOAD(u16));
    case HIPDNN_DATA_BFLOAT16: return hipdnnSdkBfloat16ToFloat(LOAD(u16));
    case HIPDNN_DATA_INT8: return LOAD(i8);
    case HIPDNN_DATA_UINT8: return LOAD(u8);
    case HIPDNN_DATA_BOOLEAN: return LOAD(u8) != 0;
    case HIPDNN_DATA_INT32: return LOAD(i32);
    case HIPDNN_DATA_INT64: return (double)LOAD(i64);
    default: return NAN;
    }
}
#undef LOAD

static double clamp(double v, double lo, double hi) {
    if (isnan(v)) return 0;
    return v < lo ? lo : (v > hi ? hi : v);
}

void hipdnnSdkStoreFromDouble(void* ptr, hipdnnDataType_t t, int64_t i, double v) {
    switch (t) {
    case HIPDNN_DATA_FLOAT: ((float*)ptr)[i] = (float)v; break;
    case HIPDNN_DATA_DOUBLE: ((double*)ptr)[i] = v; break;
    case HIPDNN_DATA_HALF: ((uint16_t*)ptr)[i] = hipdnnSdkDoubleToHalf(v); break;
    case HIPDNN_DATA_BFLOAT16: ((uint16_t*)ptr)[i] = hipdnnSdkDoubleToBfloat16(v); break;
    case HIPDNN_DATA_INT8: ((int8_t*)ptr)[i] = (int8_t)clamp(nearbyint(v), -128, 127); break;
    case HIPDNN_DATA_UINT8: ((uint8_t*)ptr)[i] = (uint8_t)clamp(nearbyint(v), 0, 255); break;
    case HIPDNN_DATA_BOOLEAN: ((uint8_t*)ptr)[i] = v != 0; break;
    case HIPDNN_DATA_INT32:
        ((int32_t*)ptr)[i] = (int32_t)clamp(nearbyint(v), -2147483648.0, 2147483647.0);
        break;
    case HIPDNN_DATA_INT64:
        ((int64_t*)ptr)[i] = (int64_t)clamp(nearbyint(v), -9.2233720368547758e18, 9.2233720368547748e18);
        break;
    default: break;
    }
}

void hipdnnSdkPackedStrides(int32_t ndim, const int64_t* dims, int64_t* strides) {
    int64_t s = 1;
    for (int32_t i = ndim - 1; i >= 0; --i) {
        strides[i] = s;
        s *= dims[i] > 0 ? dims[i] : 1;
    }
}

bool hipdnnSdkStridesOverlap(int32_t ndim, const int64_t* dims, const int64_t* strides) {
    /* Dims larger than 1 by increasing stride: each stride must step past everything the
     * smaller ones reach.  Sufficient for no overlap; interleaved layouts that happen not
     * to collide are refused too, which no frontend produces. */
    int32_t order[HIPDNN_MAX_DIMS], n = 0;
    for (int32_t i = 0; i < ndim && i < HIPDNN_MAX_DIMS; ++i) {
        if (dims[i] <= 1) continue;
        int32_t k = n++;
        for (; k > 0 && strides[order[k - 1]] > strides[i]; --k) order[k] = order[k - 1];
        order[k] = i;
    }
    int64_t reach = 0; /* the largest offset the dims so far address */
    for (int32_t k = 0; k < n; ++k) {
        int32_t i = order[k];
        if (strides[i] <= reach) return true;
        /* A span past int64 cannot be addressed: call it overlapping, which refuses it. */
        int64_t step;
        if (__builtin_mul_overflow(dims[i] - 1, strides[i], &step) ||
            __builtin_add_overflow(reach, step, &reach))
            return true;
    }
    return false;
}

bool hipdnnSdkSpanElements(int32_t ndim, const int64_t* dims, const int64_t* strides,
                           int64_t* span) {
    int64_t last = 0, step;
    *span = 0;
    for (int32_t i = 0; i < ndim; ++i) {
        if (dims[i] < 0 || strides[i] < 0) return false;
        if (dims[i] == 0) return true;
    }
    for (int32_t i = 0; i < ndim; ++i)
        if (__builtin_mul_overflow(dims[i] - 1, strides[i], &step) ||
            __builtin_add_overflow(last, step, &last) || last == INT64_MAX)
            return false;
    *span = last + 1;
    return true;
}

int64_t hipdnnSdkElementCount(int32_t ndim, const int64_t* dims) {
    int64_t n = 1;
    for (int32_t i = 0; i < ndim; ++i) n *= dims[i];
    return n;
}
