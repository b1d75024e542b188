/* The attention forward's decode path (fa_program.h, fa_kernels_decode.h): for few query
 * rows against many keys.  fa_mma's grid is a block per (b, query head) there, each with
 * one row of its 16-row tiles used and walking every key alone: a few hundred blocks that
 * read K and V once per query head.  The decode path packs the query heads that share a
 * key / value head into one block's tiles and splits the keys into ranges, so that the
 * grid fills the device, and a second kernel sums the ranges (fa_program.h).
 *
 * It takes tensor-core plans (fa_mma's conditions) with H_k = H_v, S_q <= 16 and at most
 * 64 packed rows (4 warps); q, k or v not 16-byte aligned at enqueue run the general
 * kernel, as fa_mma's plans do.  The ranges: at compile time the most any device may
 * take are reserved in the workspace; at plan time the count that fills the device's
 * multiprocessors in whole waves (two at least) is chosen. */
#include <stdio.h>
#include <stdlib.h>

#include "staged.h"

#define FA(field) offsetof(fa_program, field)
#define FD_ASSUMED_SMS 132               /* H100 / H200 */
#define FD_SMEM_PER_SM (227 * 1024)      /* sm_90's shared memory a multiprocessor */
#define FD_MAX_SPLITS 256
#define FD_PART_BYTES_MAX (INT64_C(1) << 28)
#define FD_KEY_STEP 16                   /* ranges are multiples of 16 keys */

/* Blocks of the split kernel a multiprocessor holds at once: by shared memory, and by
 * registers (ptxas gives its threads 160 to 240 of the 64 K). */
static int occupancy(const hipe_fa* fa) {
    const int smem = hipe_fa_smem(&fa->main, &fa->prog) + 1024; /* the driver's 1 KB a block */
    int n = FD_SMEM_PER_SM / smem;
    if (n > 8 / fa->main.warps) n = 8 / fa->main.warps;
    return n < 1 ? 1 : n;
}

/* The most ranges worth taking: two key tiles a range at least. */
static int64_t most_splits(const hipe_fa* fa) {
    const int64_t tiles = (fa->prog.skv + fa->main.bc - 1) / fa->main.bc;
    const int64_t most = (tiles + 1) / 2;
    return most < 1 ? 1 : most > FD_MAX_SPLITS ? FD_MAX_SPLITS : most;
}

/* The fewest ranges that make two waves of blocks on `sms` multiprocessors. */
static int64_t two_waves(const hipe_fa* fa, int sms) {
    const int64_t slots = (int64_t)sms * occupancy(fa), base = fa->prog.b * fa->prog.hk;
    const int64_t s = (2 * slots + base - 1) / base;
    return s < 1 ? 1 : s;
}

/* From two waves to twice that, the count that finishes soonest by a model of whole waves,
 * each as long as a range's tiles and its partial row's write (a guess to be replaced by
 * measured knobs). */
static int64_t choose_splits(const hipe_fa* fa, int sms) {
    const int64_t s0 = two_waves(fa, sms), most = most_splits(fa);
    const int64_t slots = (int64_t)sms * occupancy(fa), base = fa->prog.b * fa->prog.hk;
    const int64_t units = (fa->prog.skv + FD_KEY_STEP - 1) / FD_KEY_STEP;
    int64_t best = s0 < most ? s0 : most, best_cost = -1;
    for (int64_t s = s0; s <= 2 * s0 && s <= most; ++s) {
        const int64_t keys = (units + s - 1) / s * FD_KEY_STEP;
        const int64_t cost = ((base * s + slots - 1) / slots) *
                             ((keys + fa->main.bc - 1) / fa->main.bc + 1);
        if (best_cost < 0 || cost < best_cost) {
            best = s;
            best_cost = cost;
        }
    }
    return best;
}

/* $HIPDNN_HIP_FA_SPLITS: a count of ranges asked for (tests, benchmarks), else 0. */
static int64_t forced_splits(void) {
    const char* env = getenv("HIPDNN_HIP_FA_SPLITS");
    const long long n = env ? atoll(env) : 0;
    return n > 0 ? (n > FD_MAX_SPLITS ? FD_MAX_SPLITS : n) : 0;
}

static size_t part_bytes(const fa_program* p, int64_t splits) {
    return (size_t)(splits * p->b * p->hq * p->sq * (p->dv + 2)) * sizeof(float);
}

/* splits ranges of whole steps of 16 keys, none empty, into p. */
static void set_splits(fa_program* p, int64_t splits) {
    const int64_t units = (p->skv + FD_KEY_STEP - 1) / FD_KEY_STEP;
    if (splits > units) splits = units;
    if (splits < 1) splits = 1;
    p->split_keys = (units + splits - 1) / splits * FD_KEY_STEP;
    p->splits = (int32_t)((p->skv + p->split_keys - 1) / p->split_keys);
}

bool hipe_fd_choose(hipe_fa* fa, hipe_stage* st, int64_t parts_uid, size_t* parts_bytes) {
    fa_program* p = &fa->prog;
    const int64_t rows = p->hk > 0 ? p->sq * (p->hq / p->hk) : 0;
    if (p->hk != p->hv || p->sq > FA_DECODE_MAX_SQ || rows > FA_DECODE_MAX_ROWS) return false;
    fa->decode = true;
    p->group = (int32_t)(p->hq / p->hk);
    fa->main.part = FA_PART_SPLIT;
    fa->main.warps = (int)((rows + 15) / 16);
    fa->main.bc = p->d > 128 || p->dv > 128 ? 32 : 64;
    fa->combine = (hipe_fa_kernel){.kind = FA_SIMT, .part = FA_PART_COMBINE};
    /* the most any device takes: twice the multiprocessors assumed (choose_splits never
       takes more than twice two_waves, which grows with them), or what the knob asks */
    int64_t reserve = 2 * two_waves(fa, 2 * FD_ASSUMED_SMS);
    const int64_t most = most_splits(fa), forced = forced_splits();
    if (reserve > most) reserve = most;
    if (forced > reserve) reserve = forced;
    while (reserve > 1 && (int64_t)part_bytes(p, reserve) > FD_PART_BYTES_MAX) --reserve;
    fa->max_splits = (int)reserve;
    set_splits(p, 1); /* until plan time */
    if (reserve > 1) {
        *parts_bytes = part_bytes(p, reserve);
        hipe_fa_bind(st, parts_uid, FA(part), -1);
    }
    return true;
}

bool hipe_fd_prepare(hipe_fa* fa, int device, char* why, size_t len) {
    if (!hipe_fa_build(fa, &fa->main, device, &fa->fn, why, len)) return false;
    int sms = 0;
    char ignored[HIPE_MSG_LEN];
    if (!hipe_sm_count(device, &sms, ignored, sizeof(ignored)) || sms < 1) sms = FD_ASSUMED_SMS;
    const int64_t forced = forced_splits();
    int64_t s = forced ? forced : choose_splits(fa, sms);
    if (s > fa->max_splits) s = fa->max_splits;
    set_splits(&fa->prog, s);
    return fa->prog.splits == 1 || hipe_fa_build(fa, &fa->combine, device, &fa->fn_combine, why, len);
}

bool hipe_fd_enqueue(hipe_fa* fa, fa_program* prog, void* stream, const char** kernel, char* why,
                     size_t len) {
    *kernel = prog->splits > 1 ? "tensor-core split-key decode attention"
                               : "tensor-core decode attention";
    if (!hipe_fa_launch(fa->fn, prog, prog->b * prog->hk * prog->splits,
                        hipe_fa_threads(&fa->main), hipe_fa_smem(&fa->main, prog), stream, why,
                        len))
        return false;
    if (prog->splits == 1) return true;
    const int64_t rows = prog->b * prog->hq * prog->sq;
    return hipe_fa_launch(fa->fn_combine, prog, (rows + FA_COMBINE_ROWS - 1) / FA_COMBINE_ROWS,
                          32 * FA_COMBINE_ROWS, 0, stream, why, len);
}
