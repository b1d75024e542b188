/* double -> binary16 / bfloat16 conversions: one correct rounding, never two.
 *
 * Every pair of neighbouring finite values of each format is visited: the midpoint (a tie,
 * exact in double) must go to the even neighbour, and the doubles just above and below it
 * to the upper and lower neighbour.  Just above a tie is where a detour through float
 * goes wrong: float rounds it onto the tie, and the second rounding picks the even side.
 * hipdnnSdkStoreFromDouble is checked on the same values, since the engine and tests
 * store through it.
 */
#include <math.h>
#include <stdint.h>

#include "check.h"
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

int main(void) {
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
