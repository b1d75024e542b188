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
    int warps; /* FA_MMA: 4 or 8 (16 queries, or keys for dkv, each) */
    int bc;    /* FA_MMA: the other side's rows a tile (keys; queries for dkv) */
    int part;  /* FA_PART_FWD, or the backward's FA_PART_DQ / FA_PART_DKV */
} hipe_fa_kernel;

typedef struct {
    fa_program prog;      /* pointers unset */
    hipe_fa_kernel main;  /* the kernel planned for 16-byte aligned q, k and v (and dO)... */
    void* fn;             /* ... compiled at plan time (hipe_fa_prepare) */
    _Atomic(void*) simt;  /* FA_SIMT for pointers not aligned, compiled when first needed */
    bool backward;        /* sdpa_bwd: main is the dq kernel, dkv its second */
    hipe_fa_kernel dkv;
    void* fn_dkv;
    _Atomic(void*) simt_dkv;
    bool decode;             /* the decode path: main is its split kernel, combine its second */
    hipe_fa_kernel combine;
    void* fn_combine;
    int max_splits;          /* key ranges the plan's workspace holds */
} hipe_fa;

/* What the forward and backward nodes share (attention_program.c): the optional ports'
 * indices, read into p with their bindings; false with the reason. */
typedef struct {
    int scale, bias, len_q, len_kv;
} hipe_fa_ports;
struct hipe_stage;
bool hipe_fa_options(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, const hipe_fa_ports* ports,
                     fa_program* p, struct hipe_stage* st, const char* label, char* why,
                     size_t len);
/* Dropout: the probability, seed and offset (ports seed, offset of n; by value or in
 * device memory, int32 / int64) and the forward's rng_dump (output port dump, -1: none)
 * into p, bound; false with the reason. */
bool hipe_fa_dropout(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, int seed, int offset,
                     int dump, fa_program* p, struct hipe_stage* st, const char* label, char* why,
                     size_t len);
/* Ragged tensors of n (the forward's q, k, v, o and page tables; the backward's q, k, v,
 * o, dO, dq, dk, dv): their offsets (int32 / int64, device memory) bound to p->rag
 * (fa_program.h); the general kernels alone read them.  False with the reason. */
bool hipe_fa_ragged(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, fa_program* p,
                    struct hipe_stage* st, const char* label, char* why, size_t len);
/* q, k, v at ports[0..2] of n into p (shapes, strides, types); false with the reason. */
bool hipe_fa_qkv(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, const int* ports, fa_program* p,
                 const char* label, char* why, size_t len);
/* The stats tensor's strides and type into p (its shape checked by the caller). */
void hipe_fa_stats(const hipdnnSdkTensor* st, fa_program* p);
void hipe_fa_bind(struct hipe_stage* st, int64_t uid, size_t offset, int32_t scalar_dtype);
/* A tensor's element strides along its 4 dims, 0 along those of size 1. */
void hipe_fa_strides4(const hipdnnSdkTensor* t, int64_t* s);
bool hipe_fa_dims4(const hipdnnSdkTensor* t, int64_t a, int64_t b, int64_t c, int64_t d);
/* Strides of the dims that are walked (longer than 1) all multiples of 8. */
bool hipe_fa_rows_aligned(const int64_t* s, int64_t b, int64_t h, int64_t n);
/* Compiles kernel k of fa for `device` (hipe_kernel_get_source): false with `why`. */
bool hipe_fa_build(const hipe_fa* fa, const hipe_fa_kernel* k, int device, void** fn, char* why,
                   size_t len);

/* The entry point of a kernel's source: one name a part (the emulation tells them apart). */
static inline const char* hipe_fa_entry(int part) {
    return part == FA_PART_DQ        ? HIPE_ATTN_DQ_KERNEL
           : part == FA_PART_DKV     ? HIPE_ATTN_DKV_KERNEL
           : part == FA_PART_SPLIT   ? HIPE_ATTN_SPLIT_KERNEL
           : part == FA_PART_COMBINE ? HIPE_ATTN_COMBINE_KERNEL
                                     : HIPE_ATTN_KERNEL;
}

/* The backward (attention_backward.c): its kernels, and their launches. */
int hipe_fab_smem(const hipe_fa_kernel* k, const fa_program* p);
bool hipe_fab_prepare(hipe_fa* fa, int device, char* why, size_t len);
bool hipe_fab_enqueue(hipe_fa* fa, fa_program* prog, int device, void* stream,
                      const char** kernel, char* why, size_t len);

/* The decode path (attention_decode.c): whether p takes it (main, a tensor-core plan, then
 * becomes its split kernel) and the workspace it reserves under parts_uid; its kernels
 * compiled and its ranges chosen for the device; its launches. */
bool hipe_fd_choose(hipe_fa* fa, struct hipe_stage* st, int64_t parts_uid, size_t* parts_bytes);
bool hipe_fd_prepare(hipe_fa* fa, int device, char* why, size_t len);
bool hipe_fd_enqueue(hipe_fa* fa, fa_program* prog, void* stream, const char** kernel, char* why,
                     size_t len);

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
