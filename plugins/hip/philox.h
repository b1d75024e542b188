/* philox.h — attention dropout's random numbers: Philox4x32-10 (Salmon et al., "Parallel
 * random numbers: as easy as 1, 2, 3", SC 2011) and the keep / drop rule, one definition for
 * the reference engine (plugins/reference_cpu/sdpa.c, C), the hip engine's kernels (embedded
 * for the run-time compiler: fa_exec.h) and their host emulation, so that every engine
 * draws the same mask and rng_dump, the forward and the backward agree.
 *
 * Element (b, h, i, j) of the [B, H_q, S_q, S_kv] scores: counter (j / 4, i, h, b + offset
 * low word), key (seed low word, seed high word + offset high word); lane j % 4 of the four
 * words is its number u, kept when u >= threshold = floor(probability * 2^32).
 *
 * The includer may define PW_FN (the kernels: device functions); else static inline. */
#ifndef HIPDNN_PHILOX_H
#define HIPDNN_PHILOX_H

#ifdef PW_FN
#define PHILOX_FN PW_FN
#else
#define PHILOX_FN static inline
#endif

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

/* Philox4x32 with 10 rounds: ctr (4 words) becomes the 4 random words. */
PHILOX_FN void philox4x32_10(uint32_t* ctr, uint32_t k0, uint32_t k1) {
    for (int r = 0; r < 10; ++r) {
        const uint64_t p0 = (uint64_t)PHILOX_M0 * ctr[0], p1 = (uint64_t)PHILOX_M1 * ctr[2];
        const uint32_t c1 = ctr[1], c3 = ctr[3];
        ctr[0] = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
        ctr[1] = (uint32_t)p1;
        ctr[2] = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        ctr[3] = (uint32_t)p0;
        k0 += PHILOX_W0;
        k1 += PHILOX_W1;
    }
}

/* The number u of score (b, h, i, j) (the rule above). */
PHILOX_FN uint32_t philox_dropout_bits(uint64_t seed, uint64_t offset, int64_t b, int64_t h,
                                       int64_t i, int64_t j) {
    uint32_t c[4];
    c[0] = (uint32_t)((uint64_t)j >> 2);
    c[1] = (uint32_t)i;
    c[2] = (uint32_t)h;
    c[3] = (uint32_t)b + (uint32_t)offset;
    philox4x32_10(c, (uint32_t)seed, (uint32_t)(seed >> 32) + (uint32_t)(offset >> 32));
    return c[j & 3];
}

/* floor(probability * 2^32) for a probability in [0, 1) (host code). */
PHILOX_FN uint32_t philox_threshold(double probability) {
    const double t = probability * 4294967296.0;
    return t <= 0.0 ? 0u : t >= 4294967295.0 ? 4294967295u : (uint32_t)t;
}

/* Whether score (b, h, i, j) is kept. */
PHILOX_FN int philox_keep(uint64_t seed, uint64_t offset, uint32_t threshold, int64_t b,
                          int64_t h, int64_t i, int64_t j) {
    return philox_dropout_bits(seed, offset, b, h, i, j) >= threshold;
}

#endif
