/* double -> binary16 / bfloat16 conversions: one correct rounding, never two.
 *
 * Every pair of neighbouring finite values of each format is visited: the midpoint (a tie,
 * exact in double) must go to the even neighbour, and the doubles just above and below it
 * to the upper and lower neighbour.  Just above a tie is where a detour through float
 * goes wrong: float rounds it onto the tie, and the second rounding picks the even side.
 * hipdnnSdkStoreFromDouble is checked on the same values, since the engine and tests
 * store through it.
 *
 * The reference engine converts with its own straight-line copies (plugins/reference_cpu/
 * fp16_bf16.h, so that its loops vectorize), and rounds fp16 / bf16 intermediates without
 * leaving float64; they must give the SDK's bits (a store, and a store then a load) on
 * every float16 and bfloat16 pattern, every tie and its neighbours, and a dense sample of
 * doubles, and so must their AVX2 / AVX-512 builds.  Built with the plugin's flags.
 */
#include <math.h>
#include <stdint.h>

#include "check.h"
#include "fp16_bf16.h"
#include "hipdnn/hipdnn_sdk.h"

typedef struct {
    const char* name;
    hipdnnDataType_t type;
    uint16_t (*from_double)(double);
    float (*to_float)(uint16_t);
    uint16_t inf; /* bits of +infinity; patterns below it are the finite non-negative ones */
} format;

static const format k_half = {"float16", HIPDNN_DATA_HALF, hipdnnSdkDoubleToHalf,
                              hipdnnSdkHalfToFloat, 0x7c00u};
static const format k_bf16 = {"bfloat16", HIPDNN_DATA_BFLOAT16, hipdnnSdkDoubleToBfloat16,
                              hipdnnSdkBfloat16ToFloat, 0x7f80u};

static uint16_t stored(const format* f, double v) {
    uint16_t out = 0;
    hipdnnSdkStoreFromDouble(&out, f->type, 0, v);
    return out;
}

/* Counts wrong results of both conversion paths for v (and -v, mirrored); reports the
 * first one. */
static int64_t check_one(const format* f, double v, uint16_t want, int64_t* bad) {
    for (int s = 0; s < 2; ++s) {
        double x = s ? -v : v;
        uint16_t w = (uint16_t)(want | (s ? 0x8000u : 0u));
        uint16_t direct = f->from_double(x), store = stored(f, x);
        if (direct != w || store != w) {
            if ((*bad)++ == 0)
                printf("    %s(%.17g): direct 0x%04x, store 0x%04x, want 0x%04x\n", f->name, x,
                       direct, store, w);
        }
    }
    return *bad;
}

static void check_every_tie(const format* f) {
    int64_t bad = 0;
    for (uint32_t p = 0; p + 1 < f->inf; ++p) {
        double lo = f->to_float((uint16_t)p), hi = f->to_float((uint16_t)(p + 1));
        double mid = 0.5 * (lo + hi); /* both have few bits: the sum is exact */
        check_one(f, mid, (uint16_t)((p & 1u) ? p + 1 : p), &bad);
        check_one(f, nextafter(mid, INFINITY), (uint16_t)(p + 1), &bad);
        check_one(f, nextafter(mid, 0.0), (uint16_t)p, &bad);
    }
    CHECK_MSG(bad == 0, "%s: %lld wrong roundings at or next to ties", f->name, (long long)bad);
}

static void test_half_ties_round_to_even_and_neighbours_round_once(void) {
    check_every_tie(&k_half);
}

static void test_bfloat16_ties_round_to_even_and_neighbours_round_once(void) {
    check_every_tie(&k_bf16);
}

static void check_exact_values_and_overflow(const format* f) {
    int64_t bad = 0;
    for (uint32_t p = 0; p <= f->inf; ++p) /* every finite value, and infinity */
        check_one(f, f->to_float((uint16_t)p), (uint16_t)p, &bad);
    CHECK_MSG(bad == 0, "%s: %lld representable values changed", f->name, (long long)bad);
    /* The tie between the largest finite value and the next power of two goes to the
     * even side, infinity; just below it stays finite. */
    double max = f->to_float((uint16_t)(f->inf - 1));
    double top = max + 0.5 * (max - f->to_float((uint16_t)(f->inf - 2)));
    bad = 0;
    check_one(f, top, f->inf, &bad);
    check_one(f, nextafter(top, 0.0), (uint16_t)(f->inf - 1), &bad);
    check_one(f, 1e300, f->inf, &bad);
    check_one(f, INFINITY, f->inf, &bad);
    CHECK_MSG(bad == 0, "%s: overflow", f->name);
}

static void test_half_keeps_representable_values_and_overflows_to_inf(void) {
    check_exact_values_and_overflow(&k_half);
}

static void test_bfloat16_keeps_representable_values_and_overflows_to_inf(void) {
    check_exact_values_and_overflow(&k_bf16);
}

static void check_underflow_keeps_the_sign(const format* f) {
    double tiny = f->to_float(1); /* smallest subnormal */
    int64_t bad = 0;
    check_one(f, 0.5 * tiny, 0, &bad); /* tie: to even, zero */
    check_one(f, nextafter(0.5 * tiny, 1.0), 1, &bad);
    check_one(f, 0.25 * tiny, 0, &bad);
    check_one(f, 1e-300, 0, &bad);
    check_one(f, 4.9406564584124654e-324, 0, &bad); /* smallest double subnormal */
    check_one(f, 0.0, 0, &bad);                     /* and -0.0 -> 0x8000 */
    CHECK_MSG(bad == 0, "%s: underflow", f->name);
}

static void test_half_underflow_gives_signed_zero(void) {
    check_underflow_keeps_the_sign(&k_half);
}

static void test_bfloat16_underflow_gives_signed_zero(void) {
    check_underflow_keeps_the_sign(&k_bf16);
}

static void check_nan_stays_nan_with_its_sign(const format* f) {
    const double nans[2] = {NAN, -NAN};
    for (int i = 0; i < 2; ++i) {
        uint16_t d = f->from_double(nans[i]), s = stored(f, nans[i]);
        CHECK_MSG(isnan(f->to_float(d)) && isnan(f->to_float(s)), "%s: NaN gave 0x%04x / 0x%04x",
                  f->name, d, s);
        int want_sign = signbit(nans[i]) ? 1 : 0;
        CHECK_MSG((d >> 15) == want_sign && (s >> 15) == want_sign,
                  "%s: NaN sign lost (0x%04x / 0x%04x)", f->name, d, s);
    }
}

static void test_half_nan_stays_nan_with_its_sign(void) {
    check_nan_stays_nan_with_its_sign(&k_half);
}

static void test_bfloat16_nan_stays_nan_with_its_sign(void) {
    check_nan_stays_nan_with_its_sign(&k_bf16);
}

/* From float the old single-step conversions must agree with the double ones (a float is
 * a double exactly); a sweep over float bit patterns. */
static void test_float_and_double_paths_agree_on_floats(void) {
    int64_t bad = 0;
    for (uint64_t u = 0; u < (UINT64_C(1) << 32); u += 997) {
        uint32_t b = (uint32_t)u;
        float x;
        memcpy(&x, &b, 4);
        if (isnan(x)) continue;
        if (hipdnnSdkFloatToBfloat16(x) != hipdnnSdkDoubleToBfloat16(x) ||
            hipdnnSdkFloatToHalf(x) != hipdnnSdkDoubleToHalf(x)) {
            if (bad++ == 0)
                printf("    %.9g: bf16 0x%04x / 0x%04x, half 0x%04x / 0x%04x\n", (double)x,
                       hipdnnSdkFloatToBfloat16(x), hipdnnSdkDoubleToBfloat16(x),
                       hipdnnSdkFloatToHalf(x), hipdnnSdkDoubleToHalf(x));
        }
    }
    CHECK_MSG(bad == 0, "%lld floats convert differently", (long long)bad);
}

/* ---- the reference engine's vectorizable copies ------------------------------------- */

#define CONVERT_LOOPS(suffix, attr)                                                        \
    attr static void stores_##suffix(const double* restrict x, uint16_t* restrict h,       \
                                     uint16_t* restrict b, int64_t n) {                    \
        for (int64_t i = 0; i < n; ++i) h[i] = ref_double_to_half(x[i]);                   \
        for (int64_t i = 0; i < n; ++i) b[i] = ref_double_to_bf16(x[i]);                   \
    }                                                                                      \
    attr static void rounds_##suffix(const double* restrict x, double* restrict h,         \
                                     double* restrict b, int64_t n) {                      \
        for (int64_t i = 0; i < n; ++i) h[i] = ref_round_half(x[i]);                       \
        for (int64_t i = 0; i < n; ++i) b[i] = ref_round_bf16(x[i]);                       \
    }                                                                                      \
    attr static void loads_##suffix(const uint16_t* restrict p, double* restrict h,        \
                                    double* restrict b, int64_t n) {                       \
        for (int64_t i = 0; i < n; ++i) h[i] = ref_half_to_double(p[i]);                   \
        for (int64_t i = 0; i < n; ++i) b[i] = ref_bf16_to_double(p[i]);                   \
    }
CONVERT_LOOPS(base, )
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
CONVERT_LOOPS(avx2, __attribute__((target("avx2"))))
CONVERT_LOOPS(avx512, __attribute__((target("avx512f"))))
#endif

typedef void (*stores_fn)(const double*, uint16_t*, uint16_t*, int64_t);
typedef void (*rounds_fn)(const double*, double*, double*, int64_t);
typedef void (*loads_fn)(const uint16_t*, double*, double*, int64_t);

/* The variants this CPU runs: base always, then AVX2 and AVX-512 if present. */
static int variants(stores_fn* st, rounds_fn* ro, loads_fn* ld) {
    int n = 0;
    st[n] = stores_base;
    ro[n] = rounds_base;
    ld[n++] = loads_base;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) {
        st[n] = stores_avx2;
        ro[n] = rounds_avx2;
        ld[n++] = loads_avx2;
    }
    if (__builtin_cpu_supports("avx512f")) {
        st[n] = stores_avx512;
        ro[n] = rounds_avx512;
        ld[n++] = loads_avx512;
    }
#endif
    return n;
}

/* Counts values whose engine store differs from the SDK's, or whose in-register rounding
 * differs from the SDK's store and load, in any variant. */
static int64_t stores_differ(const double* x, int64_t n) {
    enum { CHUNK = 1024 };
    uint16_t h[CHUNK], b[CHUNK];
    double rh[CHUNK], rb[CHUNK];
    stores_fn st[3];
    rounds_fn ro[3];
    loads_fn ld[3];
    int nv = variants(st, ro, ld);
    int64_t bad = 0;
    for (int64_t i0 = 0; i0 < n; i0 += CHUNK) {
        int64_t m = n - i0 < CHUNK ? n - i0 : CHUNK;
        for (int v = 0; v < nv; ++v) {
            st[v](x + i0, h, b, m);
            ro[v](x + i0, rh, rb, m);
            for (int64_t i = 0; i < m; ++i) {
                uint16_t wh = hipdnnSdkDoubleToHalf(x[i0 + i]);
                uint16_t wb = hipdnnSdkDoubleToBfloat16(x[i0 + i]);
                double lh = hipdnnSdkHalfToFloat(wh), lb = hipdnnSdkBfloat16ToFloat(wb);
                if (h[i] != wh || b[i] != wb || memcmp(&rh[i], &lh, 8) != 0 ||
                    memcmp(&rb[i], &lb, 8) != 0) {
                    if (bad++ == 0)
                        printf("    %a (variant %d): half 0x%04x want 0x%04x, bf16 0x%04x want "
                               "0x%04x; rounded %a / %a, want %a / %a\n", x[i0 + i], v, h[i],
                               wh, b[i], wb, rh[i], rb[i], lh, lb);
                }
            }
        }
    }
    return bad;
}

static void test_engine_loads_every_pattern_as_the_sdk(void) {
    static uint16_t p[65536];
    static double h[65536], b[65536];
    for (uint32_t i = 0; i < 65536; ++i) p[i] = (uint16_t)i;
    stores_fn st[3];
    rounds_fn ro[3];
    loads_fn ld[3];
    int nv = variants(st, ro, ld);
    int64_t bad = 0;
    for (int v = 0; v < nv; ++v) {
        ld[v](p, h, b, 65536);
        for (uint32_t i = 0; i < 65536; ++i) {
            double wh = hipdnnSdkHalfToFloat((uint16_t)i), wb = hipdnnSdkBfloat16ToFloat((uint16_t)i);
            if (memcmp(&h[i], &wh, 8) != 0 || memcmp(&b[i], &wb, 8) != 0) {
                if (bad++ == 0)
                    printf("    0x%04x (variant %d): half %a want %a, bf16 %a want %a\n", i, v,
                           h[i], wh, b[i], wb);
            }
        }
    }
    CHECK_MSG(bad == 0, "%lld loads differ from the SDK's", (long long)bad);
}

/* Every finite value of both formats, the ties between neighbours and the doubles next to
 * them, with both signs; overflow, underflow, zeros, infinities and NaNs. */
static void test_engine_stores_ties_and_neighbours_as_the_sdk(void) {
    enum { MAX = 6 * 2 * 65536 + 64 };
    static double x[MAX];
    int64_t n = 0;
    const format* fs[2] = {&k_half, &k_bf16};
    for (int k = 0; k < 2; ++k)
        for (uint32_t p = 0; p < fs[k]->inf; ++p) {
            double lo = fs[k]->to_float((uint16_t)p), hi = fs[k]->to_float((uint16_t)(p + 1));
            double mid = 0.5 * (lo + hi);
            double v[3] = {mid, nextafter(mid, INFINITY), nextafter(mid, 0.0)};
            for (int j = 0; j < 3; ++j) {
                x[n++] = v[j];
                x[n++] = -v[j];
            }
        }
    const double extra[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, 1e300, -1e300,
                            1e-300, 4.9406564584124654e-324, 2.2250738585072014e-308,
                            65504.0, 65519.999999999993, 65520.0, 0x1.fep127, 0x1.ff7ffffffffffp127,
                            0x1.ff8p127, 0x1.ffp127, 0x1.fefffffffffffp127, 0x1p128, 0x1p-24, 0x1p-25, 0x1.0000000000001p-25,
                            0x1p-133, 0x1p-134, 0x1.0000000000001p-134, 0x1p-149};
    for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); ++i) x[n++] = extra[i];
    uint64_t payload = UINT64_C(0x7ff0000000000000) | UINT64_C(0x0005555555555555);
    memcpy(&x[n++], &payload, 8); /* a signalling NaN with a payload */
    int64_t bad = stores_differ(x, n);
    CHECK_MSG(bad == 0, "%lld of %lld stores differ from the SDK's", (long long)bad, (long long)n);
}

/* Float32 patterns (a stride through all 2^32) and random doubles of every exponent. */
static void test_engine_stores_a_dense_sample_as_the_sdk(void) {
    enum { N = 1 << 20 };
    static double x[N];
    int64_t n = 0;
    for (uint64_t u = 0; u < (UINT64_C(1) << 32) && n < N / 2; u += 8191) {
        uint32_t b = (uint32_t)u;
        float f;
        memcpy(&f, &b, 4);
        x[n++] = f;
    }
    uint64_t s = UINT64_C(0x9E3779B97F4A7C15);
    while (n < N) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        memcpy(&x[n++], &s, 8);
    }
    int64_t bad = stores_differ(x, n);
    CHECK_MSG(bad == 0, "%lld of %lld stores differ from the SDK's", (long long)bad, (long long)n);
}

int main(void) {
    RUN_TEST(test_engine_loads_every_pattern_as_the_sdk);
    RUN_TEST(test_engine_stores_ties_and_neighbours_as_the_sdk);
    RUN_TEST(test_engine_stores_a_dense_sample_as_the_sdk);
    RUN_TEST(test_half_ties_round_to_even_and_neighbours_round_once);
    RUN_TEST(test_bfloat16_ties_round_to_even_and_neighbours_round_once);
    RUN_TEST(test_half_keeps_representable_values_and_overflows_to_inf);
    RUN_TEST(test_bfloat16_keeps_representable_values_and_overflows_to_inf);
    RUN_TEST(test_half_underflow_gives_signed_zero);
    RUN_TEST(test_bfloat16_underflow_gives_signed_zero);
    RUN_TEST(test_half_nan_stays_nan_with_its_sign);
    RUN_TEST(test_bfloat16_nan_stays_nan_with_its_sign);
    RUN_TEST(test_float_and_double_paths_agree_on_floats);
    return check_finish();
}
