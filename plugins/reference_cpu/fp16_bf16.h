/* fp16_bf16.h — float16 and bfloat16 to and from float64 in straight-line code, so that
 * the block walker's loops over them vectorize (the SDK's conversions are calls with
 * branches).  Bit for bit the SDK's: loads are exact; stores round once, to nearest with
 * ties to even, straight from the double (never through float), overflow to infinity,
 * keep the sign of zeros, and turn a NaN into a quiet NaN with its sign and the top of
 * its payload (hipdnnSdkDoubleToHalf / hipdnnSdkDoubleToBfloat16; tests/c/
 * test_fp16_bf16_rounding.c compares the two).
 *
 * Rounding uses the double adder: for |d| in [2^e, 2^(e+1)), c = 2^(e + 52 - f) (f the
 * format's fraction bits) makes |d| + c land in c's binade, whose spacing is 2^(e - f),
 * the format's spacing at |d|; the addition rounds |d| to it, to nearest even, and the
 * low bits of (|d| + c) - c in the bit pattern are the format's significand.  Below the
 * format's smallest normal, e is held there, which gives its subnormal spacing.
 * Needs round-to-nearest and no -ffast-math (the plugin's build).
 */
#ifndef HIPDNN_REF_FP16_BF16_H
#define HIPDNN_REF_FP16_BF16_H

#include <stdint.h>

#include "vmath.h"

/* A format: fraction bits, normal exponents, and |d| from which it is +inf (the tie
 * between the largest finite value and the next power of two goes up, to inf). */
#define REF_F16_FRAC 10
#define REF_F16_EMIN (-14)
#define REF_F16_EMAX 15
#define REF_F16_INF_FROM 65520.0
#define REF_BF16_FRAC 7
#define REF_BF16_EMIN (-126)
#define REF_BF16_EMAX 127
#define REF_BF16_INF_FROM 0x1.ffp127

/* |d| (not NaN) rounded into a format, as its bits without the sign; see above. */
REF_VM_INLINE uint64_t ref_round_bits(double a, int frac, int emin, int emax, double inf_from,
                                      uint64_t inf_bits) {
    /* e held inside [emin, emax + 1]: c stays a finite double, and anything larger is
     * infinity anyway. */
    double lo = __builtin_ldexp(1.0, emin), hi = __builtin_ldexp(1.0, emax + 1);
    double held = a < lo ? lo : a;
    held = held > hi ? hi : held;
    uint64_t eb = ref_vm_bits(held) & (UINT64_C(0x7ff) << 52);
    double c = ref_vm_double(eb + ((uint64_t)(52 - frac) << 52));
    double s = a + c; /* the one rounding */
    /* significand (with its leading 1, 2^frac, in the normal range) plus the exponent
     * field below it: the leading 1 adds the 1 that a biased exponent starts at, and a
     * carry out of the significand moves into the exponent, up to infinity */
    uint64_t biased = (eb >> 52) - 1023 - (uint64_t)(int64_t)emin; /* e - emin */
    uint64_t r = (biased << frac) + (ref_vm_bits(s) - ref_vm_bits(c));
    return a >= inf_from ? inf_bits : r;
}

REF_VM_INLINE uint16_t ref_double_to_half(double d) {
    uint64_t u = ref_vm_bits(d);
    uint16_t sign = (uint16_t)((u >> 48) & 0x8000u);
    double a = __builtin_fabs(d);
    uint64_t r = ref_round_bits(a, REF_F16_FRAC, REF_F16_EMIN, REF_F16_EMAX, REF_F16_INF_FROM,
                                0x7c00u);
    uint64_t nan = 0x7e00u | ((u >> 42) & 0x3ffu); /* quiet, top of the payload kept */
    return (uint16_t)(sign | (d != d ? nan : r));
}

REF_VM_INLINE uint16_t ref_double_to_bf16(double d) {
    uint64_t u = ref_vm_bits(d);
    uint16_t sign = (uint16_t)((u >> 48) & 0x8000u);
    double a = __builtin_fabs(d);
    uint64_t r = ref_round_bits(a, REF_BF16_FRAC, REF_BF16_EMIN, REF_BF16_EMAX,
                                REF_BF16_INF_FROM, 0x7f80u);
    uint64_t nan = 0x7fc0u | ((u >> 45) & 0x7fu);
    return (uint16_t)(sign | (d != d ? nan : r));
}

/* What storing d in a format and loading it back gives, without leaving float64 (a
 * float16 or bfloat16 intermediate): the rounded magnitude is (|d| + c) - c, exactly; a
 * NaN keeps its sign and the top of its payload, made quiet, as the store and load do. */
REF_VM_INLINE double ref_round_to(double d, int frac, int emin, int emax, double inf_from) {
    uint64_t u = ref_vm_bits(d);
    uint64_t sign = u & (UINT64_C(1) << 63);
    double a = __builtin_fabs(d);
    double lo = __builtin_ldexp(1.0, emin), hi = __builtin_ldexp(1.0, emax + 1);
    double held = a < lo ? lo : a;
    held = held > hi ? hi : held;
    double c = ref_vm_double((ref_vm_bits(held) & (UINT64_C(0x7ff) << 52)) +
                             ((uint64_t)(52 - frac) << 52));
    double r = (a + c) - c;
    r = a >= inf_from ? __builtin_inf() : r;
    uint64_t keep = (UINT64_C(0xfff) << 52) | (((UINT64_C(1) << frac) - 1) << (52 - frac));
    uint64_t nan = (u & keep) | (UINT64_C(1) << 51);
    return ref_vm_double(d != d ? nan : sign | ref_vm_bits(r));
}

REF_VM_INLINE double ref_round_half(double d) {
    return ref_round_to(d, REF_F16_FRAC, REF_F16_EMIN, REF_F16_EMAX, REF_F16_INF_FROM);
}

REF_VM_INLINE double ref_round_bf16(double d) {
    return ref_round_to(d, REF_BF16_FRAC, REF_BF16_EMIN, REF_BF16_EMAX, REF_BF16_INF_FROM);
}

/* Exact.  The exponent and fraction go into a double's low exponent bits as they are: a
 * normal half becomes 2^(E-1023) (1.f) and a subnormal a double denormal, both 2^1008
 * away from the value, so one exact multiplication fixes them; inf and NaN (exponent 31)
 * keep their fraction, a NaN made quiet (as going through float gives it). */
REF_VM_INLINE double ref_half_to_double(uint16_t h) {
    uint64_t sign = (uint64_t)(h & 0x8000u) << 48;
    uint64_t mag = h & 0x7fffu;
    double v = ref_vm_double(mag << 42) * 0x1p1008;
    uint64_t quiet = mag > 0x7c00u ? UINT64_C(1) << 51 : 0;
    double special = ref_vm_double((UINT64_C(0x7ff) << 52) | quiet | ((mag & 0x3ffu) << 42));
    return ref_vm_double(sign | ref_vm_bits(mag >= 0x7c00u ? special : v));
}

REF_VM_INLINE double ref_bf16_to_double(uint16_t b) {
    uint32_t w = (uint32_t)b << 16;
    float f;
    __builtin_memcpy(&f, &w, sizeof(f));
    return (double)f;
}

#endif
