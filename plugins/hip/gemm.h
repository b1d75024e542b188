/* gemm.h — the matmul stage of the HIP engine (C only: the host code).
 *
 * A matmul node and the pointwise nodes after it that read its product (staged.c gathers
 * them) run as one kernel (gm_kernels.h): the product stays on the chip and the epilogue,
 * the pointwise program those nodes compile to, writes each output once.  The kernel is
 * written for the plan (jit_source.c: its tile, layouts, storage types and epilogue as
 * constants), compiled at plan time by the run-time compiler and kept in the kernel cache
 * (kernel_cache.c), like the row-wise kernels. */
#ifndef HIPDNN_HIP_GEMM_H
#define HIPDNN_HIP_GEMM_H

#include <stdatomic.h>

#include "gm_program.h"
#include "hip_engine.h"

/* A kernel: which one and its shape. */
typedef struct {
    int kind;                  /* GM_SIMT, GM_MMA, GM_WGMMA, GM_SGEMM or GM_MFMA */
    int dt;                    /* GM_MMA, GM_MFMA: PW_F16 or PW_BF16 (a and b alike) */
    bool ak, bk;               /* all but GM_SIMT: k is a's / b's contiguous dim (else m / n) */
    int bm, bn, wm, wn, stages; /* GM_MMA: tile, warps along m and n, pipeline depth; GM_SGEMM,
                                   GM_MFMA: its tile */
    bool persistent;           /* GM_WGMMA: a block a multiprocessor, walking tiles */
    int grid;                  /* ... the multiprocessors */
} hipe_gm_kernel;

typedef struct {
    gm_program prog;     /* pointers unset */
    int slots;           /* the epilogue's (2, 4 or PW_SLOTS) */
    hipe_gm_kernel main; /* the kernel planned for 16-byte aligned operands */
    void* fn;            /* ... compiled at plan time (hipe_gm_prepare) */
    _Atomic(void*) simt; /* GM_SIMT for operands not aligned, compiled when first needed */
    bool wgrad_tc;       /* a weight gradient the sm_90 kernel runs on tensor cores */
    bool tf32;           /* fp32 a and b the sm_90 kernel reads as TF32 (knob TF32) */
    bool tf32_ak;        /* ... a convolution's x gathered 16 bytes at a time (NHWC) */
    bool tf32_bk;        /* ... b with k contiguous (TMA); else n, copied transposed */
    int max_splits;      /* split-k ranges the plan's workspace holds (1: none) */
    hipe_knobs knobs;    /* the engine config's (0: the engine's choice) */
    char label[64];      /* the planned kernel and the general one, for the log */
    char simt_label[64];
} hipe_gm;

#define GM_ASSUMED_SMS 132 /* H100 / H200; where the device's count is not known yet */
#define GM_BLOCKS_PER_SM 2 /* GM_MMA, at about 250 registers a thread */

/* The kernel a product runs (gemm_choice.c).  hipe_gm_choose: gm->main and gm->wgrad_tc
 * for gm->prog, the model's choice or the config's KERNEL_CFG (`mma`: NVIDIA's tensor cores
 * may read these operands; `wgrad_tc`: a weight gradient the sm_90 kernel can run); 1, or 0
 * with the reason where the kernel the knob names cannot run it.  hipe_gm_sgemm_ok:
 * whether the fp32 register-tiled kernel can read p's operands (*ak, *bk: which dim of each
 * is contiguous); hipe_gm_mfma_ok likewise, AMD's matrix-core kernel.  The sm_90 kernel in tile
 * `tile` (0 to GM_WG_TILES - 1: 128 x 256, 128 x 128, 128 x 64, then the 64-row tiles 64 x
 * 128 and 64 x 64); whether it can run what was planned (at most 3 batch dims), and in
 * tile `tile` (the 64-row tiles: fp16 / bf16 matmuls only); and, at plan time, its tile for
 * `device`, false where it does not apply (not an sm_90a target, or a KERNEL_CFG of
 * another kernel).  With knob TF32 an fp32 matmul whose
 * a has k contiguous and b k or n (gm->tf32) runs on it as TF32, else on the exact kernels;
 * other fp32 layouts are declined with the reason.  hipe_gm_cfg_name: a KERNEL_CFG
 * value's words, for messages. */
#define GM_WG_TILES 5
int hipe_gm_choose(hipe_gm* gm, bool mma, bool wgrad_tc, const hipe_knobs* knobs,
                   const char* label, char* why, size_t len);
bool hipe_gm_sgemm_ok(const gm_program* p, bool* ak, bool* bk);
bool hipe_gm_mfma_ok(const gm_program* p, bool* ak, bool* bk);
hipe_gm_kernel hipe_gm_wgmma_of(const hipe_gm* gm, int tile);
bool hipe_gm_wgmma_applies(const hipe_gm* gm);
bool hipe_gm_wgmma_tile_ok(const hipe_gm* gm, int tile);
bool hipe_gm_wgmma_kernel(const hipe_gm* gm, int device, hipe_gm_kernel* k);
const char* hipe_gm_cfg_name(int cfg);

/* Split-k (gemm_split.c): the ranges the plan's workspace is sized for, at compile time;
 * the bytes of that many ranges' partial products, and of those and the tiles' arrival
 * words after them (the workspace); p's ranges set to `want` at most (1: none); and, at
 * plan time, the ranges for gm's kernel on `device`. */
int hipe_gm_reserve_splits(const gm_program* p, int want);
int64_t hipe_gm_partial_bytes(const gm_program* p, int splits);
int64_t hipe_gm_split_bytes(const gm_program* p, int splits);
void hipe_gm_set_splits(gm_program* p, int want);
void hipe_gm_plan_splits(hipe_gm* gm, int device);
/* The model's cost (in k steps) of the sm_90 kernel's 64-row tile over `tiles` tiles of p on
 * `sms` multiprocessors, and the ranges it would take (*splits; `want`: the SPLIT_K_SLC
 * knob's, 0 for the model's). */
double hipe_gm_rows64_cost(const gm_program* p, int64_t tiles, int sms, int want, int* splits);

/* Moves dim 1 of every tensor of rank ndim of a convolution's epilogue graph last (its
 * strides too), as the product's rows are output positions; false with the reason when a
 * tensor of another rank is not a single value. */
bool hipe_gm_permute_channels_last(hipdnnSdkGraph* eg, int32_t ndim, char* why, size_t len);

/* A weight gradient's epilogue graph, its tensors channels last ([K, F..., C]): every
 * tensor of rank ndim as [K, F... x C] (the product's columns are one dim of the space);
 * false with the reason when one is not dense in (F..., C). */
bool hipe_gm_merge_field(hipdnnSdkGraph* eg, int32_t ndim, char* why, size_t len);

/* Bytes of shared memory and threads of a kernel, and its grid for `g`. */
int hipe_gm_threads(const hipe_gm_kernel* k);
int hipe_gm_smem(const hipe_gm_kernel* k);

/* The source of kernel `k` for `gm`'s epilogue and storage types, in `dialect`
 * (HIPE_RTC_CUDA or HIPE_RTC_HIP); malloc'd, NULL when out of memory (jit_source.c). */
char* hipe_gm_source(const hipe_gm* gm, const hipe_gm_kernel* k, int dialect);

/* Compiles (or finds in the caches) the planned kernel for `device`: false with `why`. */
bool hipe_gm_prepare(hipe_gm* gm, int device, char* why, size_t len);

/* Launches the matmul of `prog` (gm->prog with its pointers set) on `stream`: the planned
 * kernel where a and b are 16-byte aligned, else the general one (compiled now if need
 * be); one launch, its k split or not.  *kernel gets which ran (gm->label or simt_label), for
 * the log. */
bool hipe_gm_enqueue(hipe_gm* gm, gm_program* prog, int device, void* stream,
                     const char** kernel, char* why, size_t len);

#endif
