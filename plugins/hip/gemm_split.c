/* Split-k (gm_program.h): how many k ranges a product runs in, and the workspace for their
 * partial products and the tiles' arrival words.  One launch: each (range, tile) block
 * writes its partial, and a tile's last range to arrive sums them and runs the epilogue
 * (gm_kernels.h, gm_finish_tile); an earlier design's second, summing launch cost about
 * 12 us on an H200 however small the product (issue 24: mostly launch and ramp).  At
 * compile time (no device yet) the plan reserves room for the most ranges any kernel may
 * take; at plan time the kernel chosen takes as many as a model of whole waves over the
 * device's multiprocessors says, within that room. */
#include <stdlib.h>

#include "gemm.h"

#define GM_SPLIT_STEP 64   /* k of a split-k step: a range is a multiple of every kernel's k */
#define GM_MAX_SPLITS 64
#define GM_PARTIAL_BYTES_MAX (INT64_C(64) << 20) /* of workspace for the partial products */

/* The ranges forced: the SPLIT_K_SLC knob's `want`, else $HIPDNN_HIP_SPLIT_K (tests,
 * benchmarks); 0 where neither says. */
static int forced_splits(int want) {
    const char* s = getenv("HIPDNN_HIP_SPLIT_K");
    const int v = want > 0 ? want : s ? atoi(s) : 0;
    return v > 0 ? (v < GM_MAX_SPLITS ? v : GM_MAX_SPLITS) : 0;
}

static int64_t split_steps(const gm_program* p) { return (p->k + GM_SPLIT_STEP - 1) / GM_SPLIT_STEP; }

/* Into how many k ranges a product of `tiles` tiles goes on `slots` concurrent blocks: the
 * fewest whole waves by a model in k steps, a block costing its steps plus `fill` (3: its
 * pipeline's fill, its tile's store; 1 for the sm_90 kernel's 64-row tile, whose
 * persistent blocks load a unit's stages during the last one's epilogue); split, each
 * block 1 more (its partial's store and its arrival), and the tiles' last ranges a quarter
 * step for each other range's partial they read (and the epilogue, which the whole product
 * has too); each range at least 4 steps (a guess to be replaced by measured knobs).
 * *cost: the model's, for the ranges returned. */
static double split_cost(const gm_program* p, int64_t tiles, int slots, int s, int fill) {
    const int64_t steps = split_steps(p), waves = (tiles * s + slots - 1) / slots;
    return (double)waves * (double)((steps + s - 1) / s + fill) + (s > 1 ? 1 + (s - 1) / 4.0 : 0);
}

static int split_count(const gm_program* p, int64_t tiles, int slots, int want, int fill,
                       double* cost) {
    const int64_t steps = split_steps(p);
    const int forced = forced_splits(want);
    int best = forced ? (int)(forced < steps ? forced : steps > 0 ? steps : 1) : 1;
    double best_cost = split_cost(p, tiles, slots, best, fill);
    for (int s = 2; !forced && s <= GM_MAX_SPLITS && steps >= 4 * s; ++s) {
        const double c = split_cost(p, tiles, slots, s, fill);
        if (c < best_cost) {
            best = s;
            best_cost = c;
        }
    }
    if (cost) *cost = best_cost;
    return best;
}

/* The sm_90 kernel's 64-row tile over a product of `tiles` tiles (persistent: a block a
 * multiprocessor): the model's cost in k steps, *splits the ranges it takes. */
double hipe_gm_rows64_cost(const gm_program* p, int64_t tiles, int sms, int want, int* splits) {
    double cost = 0;
    *splits = split_count(p, tiles, sms, want, 1, &cost);
    return cost;
}

/* Whether p is a product the 64-row tile may run (gemm_choice.c: fp16 / bf16 matmuls of at
 * most 64 rows), for the workspace: the ranges it may take. */
static bool rows64_shape(const gm_program* p) {
    return p->conv == GM_CONV_NONE && p->a_dtype == p->b_dtype &&
           (p->a_dtype == PW_F16 || p->a_dtype == PW_BF16) && p->m <= 64;
}

/* Bytes of the partial products of `splits` ranges in any kernel's tiles (at most 128 x
 * 256; whole tiles of any size cover no more); then the arrival words, one a tile of the
 * smallest (64 x 64, so as many as any kernel has): the workspace the plan asks for. */
int64_t hipe_gm_partial_bytes(const gm_program* p, int splits) {
    if (splits < 2) return 0;
    return (int64_t)splits * p->batches * ((p->m + 127) / 128 * 128) * ((p->n + 255) / 256 * 256) *
           (int64_t)sizeof(float);
}

int64_t hipe_gm_split_bytes(const gm_program* p, int splits) {
    if (splits < 2) return 0;
    return hipe_gm_partial_bytes(p, splits) +
           p->batches * ((p->m + 63) / 64) * ((p->n + 63) / 64) * (int64_t)sizeof(uint64_t);
}

/* p's ranges: `want` at most, each a whole number of GM_SPLIT_STEP steps, none empty. */
void hipe_gm_set_splits(gm_program* p, int want) {
    const int64_t steps = split_steps(p);
    p->splits = 1;
    p->split_k = 0;
    if (want < 2 || steps < 2) return;
    const int64_t per = (steps + want - 1) / want;
    p->splits = (int32_t)((steps + per - 1) / per);
    p->split_k = per * GM_SPLIT_STEP;
    if (p->splits < 2) p->splits = 1, p->split_k = 0;
}

/* At compile time (no device yet): the most ranges any kernel may take, for the workspace,
 * counted against the sm_90 kernel's widest tile on GM_ASSUMED_SMS multiprocessors (and
 * its 64-row tiles, where they may run) and kept under GM_PARTIAL_BYTES_MAX. */
int hipe_gm_reserve_splits(const gm_program* p, int want) {
    int s = split_count(p, p->batches * ((p->m + 127) / 128) * ((p->n + 255) / 256), GM_ASSUMED_SMS,
                        want, 3, NULL);
    for (int bn = 64; rows64_shape(p) && bn <= 128; bn *= 2) {
        const int r = split_count(p, p->batches * ((p->n + bn - 1) / bn), GM_ASSUMED_SMS, want,
                                  1, NULL);
        if (r > s) s = r;
    }
    while (s > 1 && hipe_gm_split_bytes(p, s) > GM_PARTIAL_BYTES_MAX) --s;
    return s;
}

/* At plan time, for the kernel chosen and the device's multiprocessors. */
void hipe_gm_plan_splits(hipe_gm* gm, int device) {
    gm_program* p = &gm->prog;
    int sms = 0;
    char why[HIPE_MSG_LEN];
    if (!hipe_sm_count(device, &sms, why, sizeof(why)) || sms < 1) sms = GM_ASSUMED_SMS;
    const int per_sm = gm->main.kind == GM_WGMMA ? 1 : GM_BLOCKS_PER_SM;
    const bool rows64 = gm->main.kind == GM_WGMMA && gm->main.bm == 64;
    /* The sm_90 kernel's forward convolutions and data gradients are bound by the producer
     * warpgroup's gather, not by idle multiprocessors: on an H200 (2026-11-29) every split
     * of them was slower than none (ResNet-50's 256x14x14 3x3: 0.0565 ms whole, 0.0855 in
     * 2 ranges, 0.0990 in 4; its data gradient 0.0835 / 0.1103 / 0.1146; 512x7x7 0.0855
     * whole, 0.0960 in 5), where weight gradients and matmuls gained.  They split only
     * when asked (the knob, HIPDNN_HIP_SPLIT_K). */
    const bool gathered = gm->main.kind == GM_WGMMA &&
                          (p->conv == GM_CONV_FPROP || p->conv == GM_CONV_DGRAD);
    int s = gathered && !forced_splits(gm->knobs.split_k)
                ? 1
                : split_count(p, p->batches * p->tiles_m * p->tiles_n, sms * per_sm,
                              gm->knobs.split_k, rows64 ? 1 : 3, NULL);
    hipe_gm_set_splits(p, s < gm->max_splits ? s : gm->max_splits);
}
