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
 * fewest whole waves by a model in k steps, a block costing its steps plus 3 (its
 * pipeline's fill, its tile's store); split, each block 1 more (its partial's store and its
 * arrival), and the tiles' last ranges a quarter step for each other range's partial they
 * read (and the epilogue, which the whole product has too); each range at least 4 steps (a
 * guess to be replaced by measured knobs). */
static int split_count(const gm_program* p, int64_t tiles, int slots, int want) {
    const int64_t steps = split_steps(p);
    const int forced = forced_splits(want);
    if (forced) return (int)(forced < steps ? forced : steps > 0 ? steps : 1);
    int best = 1;
    double best_cost = 0;
    for (int s = 1; s <= GM_MAX_SPLITS && (s == 1 || steps >= 4 * s); ++s) {
        const int64_t waves = (tiles * s + slots - 1) / slots;
        const double cost = (double)waves * (double)((steps + s - 1) / s + 3) +
                            (s > 1 ? 1 + (s - 1) / 4.0 : 0);
        if (s == 1 || cost < best_cost) {
            best = s;
            best_cost = cost;
        }
    }
    return best;
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
 * counted against the sm_90 kernel's widest tile on GM_ASSUMED_SMS multiprocessors and
 * kept under GM_PARTIAL_BYTES_MAX. */
int hipe_gm_reserve_splits(const gm_program* p, int want) {
    int s = split_count(p, p->batches * ((p->m + 127) / 128) * ((p->n + 255) / 256), GM_ASSUMED_SMS,
                        want);
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
    int s = split_count(p, p->batches * p->tiles_m * p->tiles_n, sms * per_sm, gm->knobs.split_k);
    hipe_gm_set_splits(p, s < gm->max_splits ? s : gm->max_splits);
}
