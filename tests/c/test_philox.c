/* philox.h — attention dropout's Philox4x32-10, shared by the reference engine and the hip
 * kernels — against the known-answer vectors of Random123 (kat_vectors: philox4x32 10), and
 * the dropout rule built on it: lanes, counters, the threshold and its edges. */
#include <stdint.h>

#include "check.h"
#include "../../plugins/hip/philox.h"

static void kat(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0, uint32_t k1,
                const uint32_t* want) {
    uint32_t c[4] = {c0, c1, c2, c3};
    philox4x32_10(c, k0, k1);
    for (int i = 0; i < 4; ++i)
        CHECK_MSG(c[i] == want[i], "ctr %08x.. key %08x %08x: word %d is %08x, want %08x", c0, k0,
                  k1, i, c[i], want[i]);
}

static void test_known_answers(void) {
    const uint32_t zero[4] = {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u};
    const uint32_t ones[4] = {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu};
    const uint32_t pi[4] = {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u};
    kat(0, 0, 0, 0, 0, 0, zero);
    kat(~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ones);
    kat(0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u, 0xa4093822u, 0x299f31d0u, pi);
}

static void test_an_element_is_its_lane_of_its_counter(void) {
    /* seed 0x1234_00000005, offset 7: counter (j / 4, i, h, b + 7), key (5, 0x1234) */
    const uint64_t seed = (UINT64_C(0x1234) << 32) | 5u, offset = 7;
    for (int64_t j = 0; j < 12; ++j) {
        uint32_t c[4] = {(uint32_t)(j / 4), 3u, 2u, 1u + 7u};
        philox4x32_10(c, 5u, 0x1234u);
        CHECK_EQ_INT(philox_dropout_bits(seed, offset, 1, 2, 3, j), c[j % 4]);
    }
    /* the offset's high word goes to the key's */
    uint32_t c[4] = {0, 0, 0, 0};
    philox4x32_10(c, 0u, 1u);
    CHECK_EQ_INT(philox_dropout_bits(0, UINT64_C(1) << 32, 0, 0, 0, 0), c[0]);
}

static void test_the_threshold_keeps_its_share(void) {
    CHECK_EQ_INT(philox_threshold(0.0), 0);
    CHECK_EQ_INT(philox_threshold(0.5), UINT32_C(0x80000000));
    CHECK_EQ_INT(philox_threshold(0.25), UINT32_C(0x40000000));
    CHECK(philox_threshold(0.9999999999) <= UINT32_C(0xffffffff));
    int64_t kept = 0, n = 0;
    const uint32_t t = philox_threshold(0.1);
    for (int64_t i = 0; i < 64; ++i)
        for (int64_t j = 0; j < 256; ++j, ++n)
            kept += philox_keep(123456, 789, t, 1, 3, i, j);
    /* 16384 Bernoulli(0.9) draws: within 6 standard deviations (38) of 14745.6 */
    CHECK_MSG(kept > 14745 - 230 && kept < 14745 + 230, "kept %lld of %lld at 0.1",
              (long long)kept, (long long)n);
    for (int64_t j = 0; j < 64; ++j) CHECK(philox_keep(1, 2, 0, 0, 0, 0, j));
}

int main(void) {
    RUN_TEST(test_known_answers);
    RUN_TEST(test_an_element_is_its_lane_of_its_counter);
    RUN_TEST(test_the_threshold_keeps_its_share);
    return check_finish();
}
