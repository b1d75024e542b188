/* vmath.h — float64 exp, tanh and sigmoid that a compiler can vectorize.
 *
 * libm's functions are calls with branches inside, so a loop over them runs one value at
 * a time.  These are straight-line code (selects, no branches, no calls, no tables), so
 * gcc and clang vectorize a loop that calls them at -O3, at whatever vector width the
 * loop's function is compiled for.  Accuracy is within a few double ulps of the true
 * value (tests/c/test_vmath.c measures it against long double and libm, and checks that
 * every float16 and bfloat16 input rounds to the same fp16/bf16/fp32 result as libm
 * gives), and special values follow libm: NaN in, NaN out; exp(+inf) = +inf,
 * exp(-inf) = 0, tanh(+-inf) = +-1, tanh(-0) = -0, tanh of a denormal is itself.
 *
 * The plugin is built with -ffp-contract=off and without -ffast-math: every operation
 * below rounds as written, which the error analysis relies on.
 */
#ifndef HIPDNN_REF_VMATH_H
#define HIPDNN_REF_VMATH_H

#include <stdint.h>

#define REF_VM_INLINE static inline __attribute__((always_inline))

REF_VM_INLINE uint64_t ref_vm_bits(double d) {
    uint64_t u;
    __builtin_memcpy(&u, &d, sizeof(u));
    return u;
}

REF_VM_INLINE double ref_vm_double(uint64_t u) {
    double d;
    __builtin_memcpy(&d, &u, sizeof(d));
    return d;
}

/* ln 2 = LN2_HI + LN2_LO, LN2_HI with 42 significant bits so that k * LN2_HI is exact for
 * |k| < 2^11; 1/ln 2 rounded; 1.5 * 2^52, whose ulp is 1, rounds to an integer when added. */
#define REF_VM_LN2_HI 0x1.62e42fefa3800p-1
#define REF_VM_LN2_LO 0x1.ef35793c76730p-45
#define REF_VM_INV_LN2 0x1.71547652b82fep+0
#define REF_VM_SHIFT 0x1.8p52

/* expm1(r) - r for |r| <= ~0.35: Taylor terms r^2/2! .. r^13/13!; the first term left out
 * is below 2^-56 of expm1(r).  Reciprocals of exact factorials, rounded at compile time.
 * Estrin's scheme (pairs, then pairs of pairs) rather than Horner's: the loops are bound
 * by this chain's latency, which it cuts from 12 steps to 5. */
REF_VM_INLINE double ref_vm_expm1_tail(double r) {
    double r2 = r * r, r4 = r2 * r2;
    double p2 = 1.0 / 2 + r * (1.0 / 6);
    double p4 = 1.0 / 24 + r * (1.0 / 120);
    double p6 = 1.0 / 720 + r * (1.0 / 5040);
    double p8 = 1.0 / 40320 + r * (1.0 / 362880);
    double p10 = 1.0 / 3628800 + r * (1.0 / 39916800);
    double p12 = 1.0 / 479001600 + r * (1.0 / 6227020800.0);
    double q2 = p2 + r2 * p4, q6 = p6 + r2 * p8, q10 = p10 + r2 * p12;
    return r2 * (q2 + r4 * (q6 + r4 * q10));
}

/* x = k ln2 + r with k an integer (returned as a double and in *ki) and |r| <= ~ln2/2.
 * Needs |x| < 2^10 ln 2 or so (callers clamp); a NaN x gives a NaN r. */
REF_VM_INLINE double ref_vm_reduce(double x, double* k, int64_t* ki) {
    double kd = x * REF_VM_INV_LN2 + REF_VM_SHIFT;
    *k = kd - REF_VM_SHIFT;
    /* The low bits of kd's pattern hold k: kd and SHIFT share a binade. */
    *ki = (int64_t)(ref_vm_bits(kd) - ref_vm_bits(REF_VM_SHIFT));
    double t = x - *k * REF_VM_LN2_HI; /* exact: k * LN2_HI is exact and close to x */
    return t - *k * REF_VM_LN2_LO;
}

/* 2^k for -1022 <= k <= 1023. */
REF_VM_INLINE double ref_vm_pow2(int64_t k) { return ref_vm_double(((uint64_t)k + 1023u) << 52); }

/* e^x.  Beyond [-746, 710] the result is 0 or +inf anyway, so x is clamped to it (a NaN
 * passes the comparisons unchanged).  2^k is applied in two halves so that results in
 * the denormal range and overflow round once, as a single scaling would. */
REF_VM_INLINE double ref_vm_exp(double x) {
    x = x > 710.0 ? 710.0 : x;
    x = x < -746.0 ? -746.0 : x;
    double k;
    int64_t ki;
    double r = ref_vm_reduce(x, &k, &ki);
    /* k1 = about k / 2, through the same rounding trick: vectors of 64-bit integers have
     * no arithmetic shift or division before AVX-512. */
    int64_t k1 = (int64_t)(ref_vm_bits(k * 0.5 + REF_VM_SHIFT) - ref_vm_bits(REF_VM_SHIFT));
    double e = 1.0 + (r + ref_vm_expm1_tail(r));
    return (e * ref_vm_pow2(k1)) * ref_vm_pow2(ki - k1);
}

/* tanh(x) = sign(x) e / (e + 2) with e = expm1(2|x|).  From |x| = 20 on, tanh rounds to
 * 1, so |x| is clamped there (2|x| then needs 2^k only up to 2^58); for k = 0, r = 2|x|
 * exactly.  Below |x| = 2^-14, where rounding e + 2 would cost an ulp on a result that
 * lies within a few ulps of |x| (and so possibly of a bfloat16 tie), the Taylor series
 * |x| - |x|^3/3 is used instead: the next term is below 2^-58 |x|.  A denormal x gives
 * itself. */
REF_VM_INLINE double ref_vm_tanh(double x) {
    double a = __builtin_fabs(x);
    a = a > 20.0 ? 20.0 : a;
    double k;
    int64_t ki;
    double r = ref_vm_reduce(a + a, &k, &ki);
    double s = ref_vm_pow2(ki);
    double em1 = r + ref_vm_expm1_tail(r);
    double e = s * em1 + (s - 1.0); /* expm1(2|x|) = 2^k expm1(r) + 2^k - 1 */
    double small = a + a * ((a * a) * (-1.0 / 3));
    double t = a < 0x1p-14 ? small : e / (e + 2.0);
    return __builtin_copysign(t, x);
}

/* 1 / (1 + e^-x): sigmoid(-inf) = 0, sigmoid(+inf) = 1. */
REF_VM_INLINE double ref_vm_sigmoid(double x) { return 1.0 / (1.0 + ref_vm_exp(-x)); }

#endif
