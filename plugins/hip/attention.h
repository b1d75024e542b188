/* attention.h — the attention stage of the HIP engine (C only: the host code).
 *
 * An sdpa_fwd node runs as one kernel (fa_kernels.h): flash-attention style, its scores
 * never leave the chip.  The kernel is written for the plan (jit_source.c: head dims,
 * storage types and tile as constants), compiled at plan time by the run-time compiler
 * and kept in the kernel cache (kernel_cache.c), like the matmul kernels. */
#ifndef HIPDNN_HIP_ATTENTION_H
#define HIPDNN_HIP_ATTENTION_H

#include <stdatomic.h>

#include "fa_program.h"
#include "hip_engine.h"

/* A kernel: which one and its shape. */
typedef struct {
    int kind;  /* FA_SIMT or FA_MMA */
    int dt;    /* FA_MMA: PW_F16 or PW_BF16 (q, k and v alike) */
    int warps; /* FA_MMA: 4 or 8 (16 queries each) */
    int bc;    /* FA_MMA: keys a tile (64, or 32 for head dims over 128) */
} hipe_fa_kernel;

typedef struct {
    fa_program prog;      /* pointers unset */
    hipe_fa_kernel main;  /* the kernel planned for 16-byte aligned q, k and v */
    void* fn;             /* ... compiled at plan time (hipe_fa_prepare) */
    _Atomic(void*) simt;  /* FA_SIMT for pointers not aligned, compiled when first needed */
} hipe_fa;

/* Threads and bytes of dynamic shared memory a block of kernel k takes for p. */
int hipe_fa_threads(const hipe_fa_kernel* k);
int hipe_fa_smem(const hipe_fa_kernel* k, const fa_program* p);

/* The source of kernel `k` for `fa`'s head dims and storage types, in `dialect`
 * (HIPE_RTC_CUDA or HIPE_RTC_HIP); malloc'd, NULL when out of memory (jit_source.c). */
char* hipe_fa_source(const hipe_fa* fa, const hipe_fa_kernel* k, int dialect);

/* Compiles (or finds in the caches) the planned kernel for `device`: false with `why`. */
bool hipe_fa_prepare(hipe_fa* fa, int device, char* why, size_t len);

/* Launches the attention of `prog` (fa->prog with its pointers set) on `stream`: the
 * planned kernel where q, k and v are 16-byte aligned, else the general one (compiled now
 * if need be).  *kernel gets which ran, for the log. */
bool hipe_fa_enqueue(hipe_fa* fa, fa_program* prog, int device, void* stream,
                     const char** kernel, char* why, size_t len);

#endif
