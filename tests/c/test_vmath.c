/* vmath.h — the reference engine's vectorizable exp, tanh and sigmoid — against the true
 * values (long double, where it is wider than double) and libm.
 *
 * Every float16 and every bfloat16 value is an input, plus a dense sample of float32 bit
 * patterns: the float16, bfloat16 and float32 roundings of each result must equal those
 * of the reference rounded to double (the engine's contract: the low-precision output is
 * the round-to-nearest-even of a float64 result), and each result must be within a few
 * double ulps of the reference (see truth()).  The loops are also compiled for AVX2 and AVX-512 where
 * the CPU has them, as the plugin compiles them; vectorized or not, every result must be
 * the same bits.  Special values (NaN, infinities, zeros, denormals) give what libm gives.
 * Built with the plugin's -ffp-contract=off -fno-trapping-math.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "hipdnn/hipdnn_sdk.h"
#include "vmath.h"

enum { F_EXP, F_TANH, F_SIGMOID, F_COUNT };
static const char* const k_names[F_COUNT] = {"exp", "tanh", "sigmoid"};
/* Worst error allowed against the reference, in double ulps (measured: 1.0, 2.4, 2.0). */
static const double k_max_ulps[F_COUNT] = {1.5, 3.0, 2.5};

#define VM_LOOPS(suffix, attr)                                                              \
    attr static void run_##suffix(int f, const double* restrict x, double* restrict y,      \
                                  int64_t n) {                                              \
        if (f == F_EXP)                                                                     \
            for (int64_t i = 0; i < n; ++i) y[i] = ref_vm_exp(x[i]);                        \
        else if (f == F_TANH)                                                               \
            for (int64_t i = 0; i < n; ++i) y[i] = ref_vm_tanh(x[i]);                       \
        else                                                                                \
            for (int64_t i = 0; i < n; ++i) y[i] = ref_vm_sigmoid(x[i]);                    \
    }
VM_LOOPS(base, )
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
VM_LOOPS(avx2, __attribute__((target("avx2"))))
VM_LOOPS(avx512, __attribute__((target("avx512f"))))
#endif

/* The reference: exp and tanh themselves; sigmoid as the engine defines it, 1 / (1 + e)
 * in float64 with e = exp(-x) correctly rounded (so below x = -709.78, where e overflows,
 * it is 0, and near x = 0 it is the float64 formula's value, not the true one). */
#if LDBL_MANT_DIG > DBL_MANT_DIG
typedef long double wide;
static wide truth(int f, wide x) {
    return f == F_EXP ? expl(x) : f == F_TANH ? tanhl(x) : 1.0 / (1.0 + (double)expl(-x));
}
#else /* no wider type: libm is the reference, which is itself a few ulps off */
typedef double wide;
static wide truth(int f, wide x) {
    return f == F_EXP ? exp(x) : f == F_TANH ? tanh(x) : 1.0 / (1.0 + exp(-x));
}
#endif

static double libm(int f, double x) {
    return f == F_EXP ? exp(x) : f == F_TANH ? tanh(x) : 1.0 / (1.0 + exp(-x));
}

/* |got - want| in units of the double ulp at want (the subnormal spacing below). */
static double ulps(double got, wide want) {
    if (isnan(got) || isnan((double)want)) return isnan(got) && isnan((double)want) ? 0 : 1e9;
    if (isinf((double)want) || isinf(got)) return got == (double)want ? 0 : 1e9;
    int e;
    frexp((double)want, &e);
    double u = ldexp(1.0, (e - 53 < -1074 ? -1074 : e - 53));
    return (double)fabsl((long double)got - (long double)want) / u;
}

typedef struct {
    int64_t n, wrong_fp16, wrong_bf16, wrong_fp32, over, variants, vs_libm;
    double worst;
    double worst_x;
} tally;

/* Checks y = f(x) for n inputs against the truth; counts into t. */
static void check_values(int f, const double* x, const double* y, int64_t n, tally* t) {
    for (int64_t i = 0; i < n; ++i) {
        wide w = truth(f, (wide)x[i]);
        double r = (double)w; /* the float64 reference, correctly rounded */
        if (isnan(y[i]) || isnan(r)) { /* NaN payloads may differ; NaN-ness may not */
            if (!(isnan(y[i]) && isnan(r))) ++t->over;
            ++t->n;
            continue;
        }
        if (hipdnnSdkDoubleToHalf(y[i]) != hipdnnSdkDoubleToHalf(r)) ++t->wrong_fp16;
        if (hipdnnSdkDoubleToBfloat16(y[i]) != hipdnnSdkDoubleToBfloat16(r)) ++t->wrong_bf16;
        float a = (float)y[i], b = (float)r;
        if (memcmp(&a, &b, sizeof(a)) != 0 && !(isnan(a) && isnan(b))) ++t->wrong_fp32;
        double u = ulps(y[i], w);
        if (u > k_max_ulps[f]) ++t->over;
        if (u > t->worst) {
            t->worst = u;
            t->worst_x = x[i];
        }
        if (hipdnnSdkDoubleToBfloat16(libm(f, x[i])) != hipdnnSdkDoubleToBfloat16(y[i]) ||
            hipdnnSdkDoubleToHalf(libm(f, x[i])) != hipdnnSdkDoubleToHalf(y[i]))
            ++t->vs_libm;
        ++t->n;
    }
}

/* y for x through every compiled variant; counts variants that differ from the base. */
static void run_all(int f, const double* x, double* y, double* y2, int64_t n, tally* t) {
    run_base(f, x, y, n);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) {
        run_avx2(f, x, y2, n);
        if (memcmp(y, y2, (size_t)n * sizeof(double)) != 0) ++t->variants;
    }
    if (__builtin_cpu_supports("avx512f")) {
        run_avx512(f, x, y2, n);
        if (memcmp(y, y2, (size_t)n * sizeof(double)) != 0) ++t->variants;
    }
#else
    (void)y2;
#endif
}

static void report(int f, const char* inputs, const tally* t) {
    CHECK_MSG(t->wrong_fp16 == 0 && t->wrong_bf16 == 0 && t->wrong_fp32 == 0,
              "%s over %s: %lld fp16, %lld bf16, %lld fp32 roundings differ from the true "
              "value's", k_names[f], inputs, (long long)t->wrong_fp16,
              (long long)t->wrong_bf16, (long long)t->wrong_fp32);
    CHECK_MSG(t->over == 0, "%s over %s: %lld results beyond %.1f ulps (worst %.3f at %a)",
              k_names[f], inputs, (long long)t->over, k_max_ulps[f], t->worst, t->worst_x);
    CHECK_MSG(t->variants == 0, "%s over %s: a vectorized variant gave other bits", k_names[f],
              inputs);
    printf("    %-7s %-9s %9lld inputs: worst %.3f ulp at %a; fp16/bf16 roundings unlike "
           "libm's: %lld\n", k_names[f], inputs, (long long)t->n, t->worst, t->worst_x,
           (long long)t->vs_libm);
}

/* Every pattern of a 16-bit format (NaNs included) as an input. */
static void sweep_16(float (*to_float)(uint16_t), const char* name) {
    static double x[65536], y[65536], y2[65536];
    for (uint32_t p = 0; p < 65536; ++p) x[p] = to_float((uint16_t)p);
    for (int f = 0; f < F_COUNT; ++f) {
        tally t = {0};
        run_all(f, x, y, y2, 65536, &t);
        check_values(f, x, y, 65536, &t);
        report(f, name, &t);
    }
}

static void test_every_float16_input_rounds_as_the_true_value(void) {
    sweep_16(hipdnnSdkHalfToFloat, "float16");
}

static void test_every_bfloat16_input_rounds_as_the_true_value(void) {
    sweep_16(hipdnnSdkBfloat16ToFloat, "bfloat16");
}

/* Float32 bit patterns p = k * step (odd step: every exponent and low mantissa bits). */
static void test_a_dense_float32_sample_rounds_as_the_true_value(void) {
    enum { CHUNK = 4096 };
    static double x[CHUNK], y[CHUNK], y2[CHUNK];
    const uint64_t step = LDBL_MANT_DIG > 64 ? 65521 : 2053; /* quad long double is slow */
    for (int f = 0; f < F_COUNT; ++f) {
        tally t = {0};
        uint64_t p = 0;
        while (p < (UINT64_C(1) << 32)) {
            int64_t n = 0;
            for (; n < CHUNK && p < (UINT64_C(1) << 32); p += step) {
                uint32_t b = (uint32_t)p;
                float v;
                memcpy(&v, &b, sizeof(v));
                x[n++] = v;
            }
            run_all(f, x, y, y2, n, &t);
            check_values(f, x, y, n, &t);
        }
        report(f, "float32", &t);
    }
}

/* Inputs where a formula's pieces meet: reduction boundaries, the clamps, the Taylor
 * switch of tanh, overflow and underflow of exp. */
static void test_edges_of_the_formulas(void) {
    static const double xs[] = {0x1p-14,   0x1.fffffffffffffp-15, 0x1.0000000000001p-14,
                                0.1732868, 0.34657359, 0.3465736, 1.0397208, 20.0,
                                19.999999, 19.06,      709.78,    709.79,    -708.39,
                                -708.4,    -744.44,    -745.13,   -745.14,   -746.0,
                                2.0794415, 1e-300,     -1e-300,   0x1p-1022, 0x1p-1074};
    enum { N = sizeof(xs) / sizeof(xs[0]) };
    double x[2 * N], y[2 * N], y2[2 * N];
    for (int i = 0; i < N; ++i) {
        x[2 * i] = xs[i];
        x[2 * i + 1] = -xs[i];
    }
    for (int f = 0; f < F_COUNT; ++f) {
        tally t = {0};
        run_all(f, x, y, y2, 2 * N, &t);
        check_values(f, x, y, 2 * N, &t);
        report(f, "edges", &t);
    }
}

/* NaN stays NaN; exp(+-inf) = inf / 0; tanh(+-inf) = +-1, tanh(-0) = -0 and a denormal
 * is its own tanh; sigmoid(+-inf) = 1 / 0, sigmoid(+-0) = 1/2 — as libm gives them. */
static void test_special_values_are_what_libm_gives(void) {
    static const double xs[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0, 0x1p-1074,
                                -0x1p-1074, 0x1.8p-1030, -0x1.8p-1030, 1e308, -1e308};
    enum { N = sizeof(xs) / sizeof(xs[0]) };
    double y[N], y2[N];
    for (int f = 0; f < F_COUNT; ++f) {
        tally t = {0};
        run_all(f, xs, y, y2, N, &t);
        CHECK_MSG(t.variants == 0, "%s: variants differ on special values", k_names[f]);
        for (int i = 0; i < N; ++i) {
            double want = libm(f, xs[i]);
            int same = isnan(want) ? isnan(y[i]) : (y[i] == want && !signbit(y[i]) == !signbit(want));
            CHECK_MSG(same, "%s(%a) = %a, libm gives %a", k_names[f], xs[i], y[i], want);
        }
    }
}

int main(void) {
#if LDBL_MANT_DIG <= DBL_MANT_DIG
    printf("    (long double is double here: libm is the reference)\n");
#endif
    RUN_TEST(test_special_values_are_what_libm_gives);
    RUN_TEST(test_edges_of_the_formulas);
    RUN_TEST(test_every_float16_input_rounds_as_the_true_value);
    RUN_TEST(test_every_bfloat16_input_rounds_as_the_true_value);
    RUN_TEST(test_a_dense_float32_sample_rounds_as_the_true_value);
    return check_finish();
}
