/* Which kernel a matmul or convolution stage runs (gemm.h): tensor cores (GM_MMA) where a
 * and b are fp16 or bf16 alike, each has a contiguous dim (k, or m for a and n for b) that
 * is a multiple of 8 elements long, with its other strides multiples of 8, and the build
 * is NVIDIA's; the fp32 register-tiled kernel (GM_SGEMM, either vendor) where a and b are
 * fp32 and likewise in multiples of 4 (a forward convolution: x any layout, w dense); else
 * the general kernel (GM_SIMT), which reads any strides and computes exact fp32.  The ROCm
 * build runs fp16 / bf16 matmuls whose operands GM_MMA could read on AMD's matrix cores
 * (GM_MFMA, gm_mfma.h; compiled for gfx90a / gfx940 and checked by the host emulation's
 * model of the instruction, never yet run on an AMD GPU).  At plan time, on an sm_90 GPU, a tensor-core plan of at most 3 batch dims
 * gets the wgmma kernel (GM_WGMMA) in the tile a wave model picks for the device's
 * multiprocessors.  A config's KERNEL_CFG knob (hip_engine.h) names one of them instead,
 * and a product it cannot run is declined with the reason. */
#include <stdlib.h>
#include <string.h>

#include "gemm.h"

/* Whether an operand can be read in 16-byte chunks of `vec` elements (8: the tensor cores'
 * fp16 / bf16; 4: GM_SGEMM's fp32): *kc tells which dim is contiguous. */
static bool vec_operand(int64_t rows, int64_t ks, int64_t s_r, int64_t s_k, const int64_t* bs,
                        int nbatch, int vec, bool* kc) {
    for (int d = 0; d < nbatch; ++d)
        if (bs[d] % vec != 0) return false;
    if ((s_k == 1 || ks == 1) && ks % vec == 0 && s_r % vec == 0) {
        *kc = true;
        return true;
    }
    if ((s_r == 1 || rows == 1) && rows % vec == 0 && s_k % vec == 0) {
        *kc = false;
        return true;
    }
    return false;
}

/* Tile shapes of the tensor-core kernel: 4 warps each, and how well each keeps the tensor
 * cores fed against the largest (a guess to be replaced by measured knobs). */
static const struct {
    int bm, bn, wm, wn;
    double efficiency;
} k_tiles[] = {{128, 128, 2, 2, 1.0}, {128, 64, 2, 2, 0.85}, {64, 64, 2, 2, 0.7}};

/* GM_SGEMM's tiles (256 threads, 8 x 8, 8 x 4 or 4 x 4 outputs a thread), and how fast each
 * runs against 128 x 64: on an H200 (RESULTS.md, run M18) 128 x 64 beat 128 x 128 in every
 * product timed, 1024 rows by 768 to 3072 (1.27x at 1024 x 3072 x 768, one wave of 128 x
 * 128 against two of 128 x 64), so the model takes 128 x 128 only by the TILE_N knob; and
 * 64 x 64 lost to 128 x 64 split over k (0.087 against 0.066 ms at 1024 x 768 x 768, 0.270
 * against 0.175 at 1024 x 768 x 3072), so it wins only where it saves a wave. */
static const struct {
    int bm, bn;
    double efficiency;
} k_sg_tiles[] = {{128, 128, 0.79}, {128, 64, 1.0}, {64, 64, 0.45}};

/* Whether GM_SGEMM can read p's operands: fp32 a and b, each a matrix of 16-byte chunks
 * (vec_operand); a forward convolution's x any layout (gathered element by element, its
 * coordinates in 32 bits) and its w dense in the product's k. */
bool hipe_gm_sgemm_ok(const gm_program* p, bool* ak, bool* bk) {
    *ak = *bk = false;
    if (p->a_dtype != PW_F32 || p->b_dtype != PW_F32 ||
        (p->conv != GM_CONV_NONE && p->conv != GM_CONV_FPROP))
        return false;
    if (p->conv) {
        for (int d = 0; d < p->nsp; ++d)
            if (p->xsp[d] + p->pad[d] >= (INT64_C(1) << 30) ||
                (p->osp[d] + p->pad[d]) * p->stride[d] >= (INT64_C(1) << 30) ||
                p->ker[d] * p->dil[d] >= (INT64_C(1) << 30))
                return false;
        return p->b_sk == 1 && vec_operand(p->n, p->k, p->b_sn, p->b_sk, p->b_bs, p->nbatch, 4, bk) &&
               *bk;
    }
    return vec_operand(p->m, p->k, p->a_sm, p->a_sk, p->a_bs, p->nbatch, 4, ak) &&
           vec_operand(p->n, p->k, p->b_sn, p->b_sk, p->b_bs, p->nbatch, 4, bk);
}

/* Whether GM_MFMA can read p's operands: a matmul of fp16 or bf16 alike, each operand a
 * matrix of 16-byte chunks of 8 elements (vec_operand). */
bool hipe_gm_mfma_ok(const gm_program* p, bool* ak, bool* bk) {
    *ak = *bk = false;
    return p->conv == GM_CONV_NONE && p->a_dtype == p->b_dtype &&
           (p->a_dtype == PW_F16 || p->a_dtype == PW_BF16) &&
           vec_operand(p->m, p->k, p->a_sm, p->a_sk, p->a_bs, p->nbatch, 8, ak) &&
           vec_operand(p->n, p->k, p->b_sn, p->b_sk, p->b_bs, p->nbatch, 8, bk);
}

/* Whether this build has GM_MFMA: ROCm's (hiprtc), or the host emulation's model of it
 * (emulate_mfma.cpp), which runs it where KERNEL_CFG names it, or, with
 * $HIPDNN_HIP_EMULATE_MFMA=1, in place of the tensor-core kernel (the emulated tests). */
static bool mfma_build(bool* by_default) {
    const bool rocm = strcmp(hipe_vendor(), "ROCm") == 0;
    const bool emulated = strcmp(hipe_vendor(), "host emulation") == 0;
    const char* env = getenv("HIPDNN_HIP_EMULATE_MFMA");
    *by_default = rocm || (emulated && env && atoi(env) == 1);
    return rocm || emulated;
}

/* The tile that finishes soonest by whole waves of blocks over the multiprocessors (as
 * choose_kernel's model), or the TILE_N knob's width, else $HIPDNN_HIP_WGMMA_BN's (64:
 * 128 x 64, 128: 128 x 128); a convolution's 64 x 64. */
static void choose_sgemm(const gm_program* p, bool ak, bool bk, int tile_n, hipe_gm_kernel* k) {
    int best = 0;
    double best_cost = 0;
    for (int i = 0; i < (int)(sizeof(k_sg_tiles) / sizeof(k_sg_tiles[0])); ++i) {
        const int64_t tiles = p->batches * ((p->m + k_sg_tiles[i].bm - 1) / k_sg_tiles[i].bm) *
                              ((p->n + k_sg_tiles[i].bn - 1) / k_sg_tiles[i].bn);
        const int64_t waves = (tiles + GM_ASSUMED_SMS * GM_BLOCKS_PER_SM - 1) /
                              (GM_ASSUMED_SMS * GM_BLOCKS_PER_SM);
        const double cost = (double)waves * k_sg_tiles[i].bm * k_sg_tiles[i].bn / k_sg_tiles[i].efficiency;
        if (i == 0 || cost < best_cost) {
            best = i;
            best_cost = cost;
        }
    }
    const char* env = getenv("HIPDNN_HIP_WGMMA_BN"); /* benchmarks' --tiles */
    const int force = tile_n ? tile_n : env ? atoi(env) : 0;
    if (force == 128 || force == 64) best = force == 128 ? 0 : 1;
    if (p->conv) best = 2; /* 128 rows' gathers spill past 128 registers (104 bytes at 128 x 128) */
    *k = (hipe_gm_kernel){.kind = GM_SGEMM, .ak = ak, .bk = bk, .bm = k_sg_tiles[best].bm,
                          .bn = k_sg_tiles[best].bn};
}

/* The model's kernel for aligned operands: tensor cores where they apply, in the tile that
 * finishes soonest by a model of whole waves of blocks over the multiprocessors (a small
 * product in large tiles leaves them idle; a narrow one wastes a wide tile's columns). */
static void choose_kernel(const gm_program* p, bool mma_allowed, hipe_gm_kernel* k) {
    memset(k, 0, sizeof(*k));
    k->kind = GM_SIMT;
    bool ak = false, bk = false;
    if (p->conv) ak = true; /* gathered, k contiguous: conv_mma_ok checked x */
    if (!mma_allowed || p->a_dtype != p->b_dtype || p->a_dtype == PW_F32 ||
        (!p->conv && !vec_operand(p->m, p->k, p->a_sm, p->a_sk, p->a_bs, p->nbatch, 8, &ak)) ||
        !vec_operand(p->n, p->k, p->b_sn, p->b_sk, p->b_bs, p->nbatch, 8, &bk))
        return;
    int best = 0;
    double best_cost = 0;
    for (int i = 0; i < (int)(sizeof(k_tiles) / sizeof(k_tiles[0])); ++i) {
        const int64_t tiles = p->batches * ((p->m + k_tiles[i].bm - 1) / k_tiles[i].bm) *
                              ((p->n + k_tiles[i].bn - 1) / k_tiles[i].bn);
        const int64_t waves = (tiles + GM_ASSUMED_SMS * GM_BLOCKS_PER_SM - 1) /
                              (GM_ASSUMED_SMS * GM_BLOCKS_PER_SM);
        const double cost = (double)waves * k_tiles[i].bm * k_tiles[i].bn / k_tiles[i].efficiency;
        if (i == 0 || cost < best_cost) {
            best = i;
            best_cost = cost;
        }
    }
    *k = (hipe_gm_kernel){.kind = GM_MMA, .dt = p->a_dtype, .ak = ak, .bk = bk,
                          .bm = k_tiles[best].bm, .bn = k_tiles[best].bn, .wm = k_tiles[best].wm,
                          .wn = k_tiles[best].wn, .stages = 4};
}

/* The sm_90 kernel's tiles (bm x bn), pipeline depths (stages of 48, 32, 24, 24 and 16 KB)
 * and grids: persistent where the fp32 tile fits beside the pipeline (under the 227 KB a
 * block may have).  The 64-row tiles are for matmuls of few rows (an LLM's decode, m 1 to
 * 64), which stream b from memory: 128 rows would leave most of each block's tensor-core
 * work and stage on rows of zeros (16 x 4096 x 4096 bf16 ran at a third of the memory's
 * bandwidth, issue 24); 64 rows halve a's stage, so more stages of b are in flight (6 x 16
 * KB, 8 x 8 KB against 6 x 8 KB). */
static const struct {
    int bm, bn, stages;
    bool persistent;
    double efficiency;
} k_wg_tiles[GM_WG_TILES] = {{128, 256, 4, false, 1.0}, {128, 128, 4, true, 0.9},
                             {128, 64, 6, true, 0.75},  {64, 128, 6, true, 1.0},
                             {64, 64, 8, true, 0.9}};

/* A weight gradient on the sm_90 kernel reads both operands transposed (a: dy's k_out
 * contiguous; b: x's channels, gathered). */
hipe_gm_kernel hipe_gm_wgmma_of(const hipe_gm* gm, int tile) {
    return (hipe_gm_kernel){.kind = GM_WGMMA,
                            .dt = gm->wgrad_tc ? gm->prog.a_dtype : gm->tf32 ? PW_F32 : gm->main.dt,
                            .ak = gm->tf32 ? gm->tf32_ak : !gm->wgrad_tc && gm->main.ak,
                            .bk = gm->tf32 ? gm->tf32_bk : !gm->wgrad_tc && gm->main.bk,
                            .bm = k_wg_tiles[tile].bm, .bn = k_wg_tiles[tile].bn,
                            .stages = k_wg_tiles[tile].stages,
                            .persistent = k_wg_tiles[tile].persistent};
}

bool hipe_gm_wgmma_applies(const hipe_gm* gm) {
    return (gm->main.kind == GM_MMA || gm->wgrad_tc || gm->tf32) && gm->prog.nbatch <= 3;
}

/* The 64-row tiles: fp16 / bf16 matmuls (a convolution's and TF32's producers gather for
 * 128 rows, gm_wgmma.h). */
static bool rows64_ok(const hipe_gm* gm) {
    return gm->main.kind == GM_MMA && gm->prog.conv == GM_CONV_NONE && !gm->wgrad_tc && !gm->tf32;
}

bool hipe_gm_wgmma_tile_ok(const hipe_gm* gm, int tile) {
    return k_wg_tiles[tile].bm == 128 || rows64_ok(gm);
}

/* The tile's rows asked for: the TILE_M knob, else $HIPDNN_HIP_WGMMA_BM (benchmarks: 64 or
 * 128; other values ignored); 0 where neither says. */
static int forced_rows(const hipe_gm* gm) {
    const char* env = getenv("HIPDNN_HIP_WGMMA_BM");
    const int v = gm->knobs.tile_m ? gm->knobs.tile_m : env ? atoi(env) : 0;
    return v == 64 || v == 128 ? v : 0;
}

/* The sm_90 kernel's tile: for an fp16 / bf16 matmul of at most 64 rows (or by TILE_M 64)
 * 64 x 128 or 64 x 64, whichever the split-k model (hipe_gm_rows64_cost, a block a
 * multiprocessor walking (range, tile) units) says streams b soonest, b's stage of 64
 * columns counted a tenth slower (half the bytes a barrier); else 128 x 256, 128 x 128 or
 * 128 x 64, whichever finishes soonest in whole waves of one block a multiprocessor (the
 * wider tile feeds the tensor cores better, a narrow product wastes its columns; guesses
 * to be replaced by measured knobs).  TILE_N (or $HIPDNN_HIP_WGMMA_BN) forces the width:
 * 256 takes 128 rows. */
bool hipe_gm_wgmma_kernel(const hipe_gm* gm, int device, hipe_gm_kernel* k) {
    const gm_program* p = &gm->prog;
    hipe_rtc_target t;
    char why[HIPE_MSG_LEN];
    int sms = 0;
    if (gm->knobs.kernel_cfg == HIPE_KERNEL_GENERAL || gm->knobs.kernel_cfg == HIPE_KERNEL_MMA ||
        gm->knobs.kernel_cfg == HIPE_KERNEL_MFMA || !hipe_gm_wgmma_applies(gm) || !hipe_rtc_target_of(device, &t, why, sizeof(why)) ||
        strcmp(t.arch, "sm_90a") != 0 || !hipe_sm_count(device, &sms, why, sizeof(why)) || sms < 1)
        return false;
    int best = -1;
    double best_cost = 0;
    /* the TILE_N knob, else $HIPDNN_HIP_WGMMA_BN (benchmarks): 64, 128 or 256 */
    const char* env = getenv("HIPDNN_HIP_WGMMA_BN");
    const int force = gm->knobs.tile_n ? gm->knobs.tile_n : env ? atoi(env) : 0;
    const bool forced_bn = force == 64 || force == 128 || force == 256; /* else ignored */
    const int rows = forced_rows(gm);
    const bool rows64 = rows64_ok(gm) && force != 256 && (rows == 64 || (!rows && p->m <= 64));
    const int bm = rows64 ? 64 : 128;
    for (int i = 0; i < GM_WG_TILES; ++i) {
        const int bn = k_wg_tiles[i].bn;
        if (k_wg_tiles[i].bm != bm || (forced_bn && force != bn)) continue;
        const int64_t n = p->batches * ((p->m + bm - 1) / bm) * ((p->n + bn - 1) / bn);
        int splits;
        const double cost =
            bm == 64 ? hipe_gm_rows64_cost(p, n, sms, gm->knobs.split_k, &splits) * bn /
                           k_wg_tiles[i].efficiency
                     : (double)((n + sms - 1) / sms) * bn / k_wg_tiles[i].efficiency;
        if (best < 0 || cost < best_cost) {
            best = i;
            best_cost = cost;
        }
    }
    *k = hipe_gm_wgmma_of(gm, best);
    k->grid = sms;
    return true;
}

static const char* const k_cfg_names[HIPE_KERNEL_CFGS] = {
    "the engine's choice", "the general kernel", "tensor cores through mma.sync",
    "tensor cores through wgmma (sm_90)", "the fp32 register-tiled kernel",
    "AMD matrix cores through MFMA (gfx90a / gfx940)"};

/* Whether TMA can bring an fp32 operand K-major: k contiguous, its other strides 16 bytes'
 * multiples (TMA zero-fills ragged edges: m, n and k take any size). */
static bool tf32_operand(int64_t s_r, int64_t s_k, const int64_t* bs, int nbatch) {
    for (int d = 0; d < nbatch; ++d)
        if (bs[d] % 4 != 0) return false;
    return s_k == 1 && s_r % 4 == 0;
}

/* Whether the sm_90 kernel can read a forward convolution as TF32: w by TMA (dense in the
 * product's k, KRSC or KCRS (taps_inner), each filter's start a multiple of 4 elements),
 * 32-bit coordinates (*what: the reason where not); *chunks: x gathered 16 bytes (4
 * channels) at a time (channels-last, a multiple of 4 of them, other strides multiples of
 * 4, KRSC), else an element at a time (gm_wg_tf32_conv: NCHW, KCRS), its offsets from a
 * row's first input to its image's start and to its receptive field's elements in 32 bits. */
static bool conv_tf32_ok(const gm_program* p, bool* chunks, const char** what) {
    bool ok = true, vec = p->x_sc == 1 && p->cin % 4 == 0 && p->x_sn % 4 == 0 && !p->taps_inner;
    double span = (double)(p->cin - 1) * (double)llabs(p->x_sc); /* elements, bounded */
    for (int d = 0; d < p->nsp; ++d) {
        ok = ok && p->xsp[d] + p->pad[d] < (INT64_C(1) << 30) &&
             (p->osp[d] + p->pad[d]) * p->stride[d] < (INT64_C(1) << 30) &&
             p->ker[d] * p->dil[d] < (INT64_C(1) << 30);
        vec = vec && p->x_ssp[d] % 4 == 0;
        span += ((double)(p->osp[d] + p->pad[d]) * (double)p->stride[d] +
                 (double)p->ker[d] * (double)p->dil[d]) * (double)llabs(p->x_ssp[d]);
    }
    *chunks = vec;
    const bool near = vec || span < 2147483648.0;
    *what = !ok     ? "input coordinates under 2^30"
            : !near ? "an image of fewer than 2^31 elements where x is gathered an element "
                      "at a time (not channels-last)"
                    : "w dense in the product's k (KRSC or KCRS) and each filter's start a "
                      "multiple of 4 elements (TMA's 16 bytes; not with 3 channels and a 3x3 "
                      "or 7x7 filter)";
    return ok && near && tf32_operand(p->b_sn, p->b_sk, p->b_bs, p->nbatch);
}

/* Knob TF32 on a product of fp32 a and b: gm->tf32 where the sm_90 kernel can read them
 * as TF32 (a matmul or a forward convolution (conv_tf32_ok), at most 3 batch dims; wgmma takes TF32 K-major only, the PTX ISA's
 * transpose flags being for 16-bit types: a with k contiguous, brought by TMA; b with k
 * contiguous likewise, or with n contiguous, copied transposed by the producer warpgroup,
 * gm->tf32_bk false); 0 with the reason where it cannot, or where KERNEL_CFG names an exact
 * kernel.  Other types ignore it. */
static int choose_tf32(hipe_gm* gm, const hipe_knobs* knobs, const char* label, char* why,
                       size_t len) {
    const gm_program* p = &gm->prog;
    gm->tf32 = gm->tf32_ak = gm->tf32_bk = false;
    if (!knobs->tf32 || p->a_dtype != PW_F32 || p->b_dtype != PW_F32) return 1;
    const int cfg = knobs->kernel_cfg;
    if (cfg != HIPE_KERNEL_ANY && cfg != HIPE_KERNEL_WGMMA)
        return decline(why, len, "%s: knob TF32 = 1 reads fp32 as TF32 on the sm_90 kernel, "
                       "and knob KERNEL_CFG = %d names %s, which computes exact fp32", label, cfg,
                       k_cfg_names[cfg]);
    if (strcmp(hipe_vendor(), "ROCm") == 0)
        return decline(why, len, "%s: knob TF32 = 1: the ROCm build has no TF32 kernel", label);
    const char* what = "";
    bool chunks = false;
    if (p->conv == GM_CONV_FPROP && !conv_tf32_ok(p, &chunks, &what))
        return decline(why, len, "%s: knob TF32 = 1: the sm_90 kernel reads a convolution "
                       "as TF32 with %s", label, what);
    if (p->conv == GM_CONV_FPROP && p->nbatch <= 3) {
        gm->tf32 = gm->tf32_bk = true;
        gm->tf32_ak = chunks;
        return 1;
    }
    if (p->conv != GM_CONV_NONE)
        return decline(why, len, "%s: knob TF32 = 1: TF32 runs matmuls and forward "
                       "convolutions only (a gradient computes exact fp32)", label);
    const bool ak = tf32_operand(p->a_sm, p->a_sk, p->a_bs, p->nbatch);
    const bool bk = tf32_operand(p->b_sn, p->b_sk, p->b_bs, p->nbatch);
    if (!ak || (!bk && p->b_sn != 1 && p->n != 1))
        return decline(why, len, "%s: knob TF32 = 1: wgmma reads TF32 operands K-major only "
                       "(the PTX ISA's transpose is for 16-bit types): a [.., M, K] must have "
                       "k contiguous and its other strides multiples of 4 elements (TMA's 16 "
                       "bytes), b [.., K, N] k or n contiguous; %s is not", label,
                       !ak ? "a" : "b");
    if (p->nbatch > 3)
        return decline(why, len, "%s: knob TF32 = 1: the sm_90 kernel takes at most 3 batch "
                       "dims, this product has %d", label, p->nbatch);
    gm->tf32 = gm->tf32_ak = true;
    gm->tf32_bk = bk;
    return 1;
}


int hipe_gm_choose(hipe_gm* gm, bool mma, bool wgrad_tc, const hipe_knobs* knobs,
                   const char* label, char* why, size_t len) {
    const int cfg = knobs->kernel_cfg;
    choose_kernel(&gm->prog, mma, &gm->main);
    bool ak, bk;
    const bool sgemm = hipe_gm_sgemm_ok(&gm->prog, &ak, &bk);
    if (sgemm && gm->main.kind == GM_SIMT && cfg != HIPE_KERNEL_GENERAL)
        choose_sgemm(&gm->prog, ak, bk, knobs->tile_n, &gm->main);
    gm->wgrad_tc = wgrad_tc && cfg != HIPE_KERNEL_GENERAL && cfg != HIPE_KERNEL_MMA &&
                   cfg != HIPE_KERNEL_SGEMM && cfg != HIPE_KERNEL_MFMA;
    bool mak, mbk, by_default;
    if (mfma_build(&by_default) && hipe_gm_mfma_ok(&gm->prog, &mak, &mbk) &&
        (cfg == HIPE_KERNEL_MFMA || (cfg == HIPE_KERNEL_ANY && by_default)))
        gm->main = (hipe_gm_kernel){.kind = GM_MFMA, .dt = gm->prog.a_dtype, .ak = mak, .bk = mbk,
                                    .bm = 64, .bn = 128};
    gm->knobs = *knobs;
    if (cfg == HIPE_KERNEL_GENERAL) gm->main = (hipe_gm_kernel){.kind = GM_SIMT};
    if (gm->prog.taps_inner && gm->main.kind != GM_SGEMM) { /* w read element by element */
        gm->prog.taps_inner = 0;
        gm->prog.b_sk = gm->prog.b_sn = 0;
    }
    if (!choose_tf32(gm, knobs, label, why, len)) return 0;
    if (knobs->tile_m == 64 && hipe_gm_wgmma_applies(gm) && !rows64_ok(gm))
        return decline(why, len, "%s: knob TILE_M = 64 asks for the sm_90 kernel's 64-row "
                       "tile, which runs fp16 / bf16 matmuls only (%s keeps 128 rows: its "
                       "producers gather for them)", label,
                       gm->tf32 && !gm->prog.conv ? "a TF32 matmul" : "a convolution");
    if (knobs->tile_m == 64 && knobs->tile_n == 256 && hipe_gm_wgmma_applies(gm))
        return decline(why, len, "%s: knob TILE_M = 64 with TILE_N = 256: the sm_90 kernel's "
                       "64-row tile is 64 or 128 wide", label);
    const bool runs = cfg == HIPE_KERNEL_MMA     ? gm->main.kind == GM_MMA
                      : cfg == HIPE_KERNEL_WGMMA ? hipe_gm_wgmma_applies(gm)
                      : cfg == HIPE_KERNEL_SGEMM ? gm->main.kind == GM_SGEMM
                      : cfg == HIPE_KERNEL_MFMA  ? gm->main.kind == GM_MFMA
                                                 : true;
    if (runs) return 1;
    const bool rocm = strcmp(hipe_vendor(), "ROCm") == 0;
    return decline(why, len, "%s: knob KERNEL_CFG = %d asks for %s, which %s", label, cfg,
                   k_cfg_names[cfg],
                   cfg == HIPE_KERNEL_SGEMM
                       ? "these operands cannot feed (fp32 a and b, a contiguous dim and other "
                         "strides multiples of 4; a convolution's forward pass with w dense)"
                   : cfg == HIPE_KERNEL_MFMA && !rocm && strcmp(hipe_vendor(), "host emulation") != 0
                       ? "the NVIDIA build does not have"
                   : cfg == HIPE_KERNEL_MFMA
                       ? "these operands cannot feed (a matmul, not a convolution, of fp16 or "
                         "bf16 alike, a contiguous dim and other strides multiples of 8)"
                   : rocm ? "the ROCm build does not have"
                   : cfg == HIPE_KERNEL_WGMMA && gm->main.kind == GM_MMA
                       ? "takes at most 3 batch dims"
                   : cfg == HIPE_KERNEL_MMA && gm->prog.conv == GM_CONV_WGRAD
                       ? "runs no weight gradient (the wgmma kernel does)"
                       : "these operands cannot feed (fp16 or bf16 alike, a contiguous dim "
                         "and other strides multiples of 8)");
}

const char* hipe_gm_cfg_name(int cfg) {
    return cfg >= 0 && cfg < HIPE_KERNEL_CFGS ? k_cfg_names[cfg] : "?";
}
