/* fa_program.h — scaled dot-product attention forward (an sdpa_fwd node) as its kernels run
 * it: plain C data, built by the host code (attention_program.c) and passed by value to
 * the kernels (fa_kernels.h; fa_exec.h holds what they share with the host emulation).
 *
 * Per batch b and query head h (key head h / (hq / hk), value head h / (hq / hv)), row i
 * of the query sees key j when j < L_kv, i < L_q (the sample's lengths with a padding
 * mask, else skv and sq) and i + shift - left < j <= i + shift + right (each bound only
 * when set; shift = L_kv - L_q at BOTTOM_RIGHT, else 0), as the reference engine's sdpa.c
 * says.  Scores s = scale * q_i . k_j + bias[b, h, i, j] (+ slope_h (j - i) with ALiBi,
 * hipdnn.h's slopes); o_i = softmax(s) v over the keys
 * row i sees, stats_i their log-sum-exp (natural log); a row that sees none gives o_i = 0
 * and stats_i = -inf.  Every tensor is addressed through its element strides (BHSD, BSHD
 * and packed QKV are stride orders); bias strides are 0 along its broadcast dims.
 *
 * A block takes `rows` consecutive queries of one (b, h): block id = bh * q_blocks +
 * (q_blocks - 1 - tile), so the longest tiles of a causal mask start first. */
#ifndef HIPDNN_HIP_FA_PROGRAM_H
#define HIPDNN_HIP_FA_PROGRAM_H

#include "pw_program.h" /* storage types */

#define FA_MAX_D 256 /* head dims the kernels take (q / k's and v's) */

/* Kernels (attention_program.c picks one at plan time). */
enum {
    FA_SIMT = 0, /* any storage type, stride, alignment and head dim: fp32 on CUDA cores */
    FA_MMA = 1   /* fp16 / bf16 q, k, v on tensor cores (mma.sync, sm_80 and newer): head
                    dims multiples of 16, d contiguous, row strides multiples of 8 elements,
                    16-byte aligned pointers (checked at enqueue) */
};

/* The general kernel: 128 threads, FA_SIMT_ROWS queries a block, keys FA_SIMT_KEYS a step
 * (a key a lane). */
#define FA_SIMT_THREADS 128
#define FA_SIMT_ROWS 16
#define FA_SIMT_KEYS 32

/* Shared memory of fa_simt, in bytes: a key / value tile (rows padded to an odd count of
 * floats: lanes reading consecutive keys hit distinct banks) and the block's queries. */
#define FA_SIMT_LD(D, DV) (((D) > (DV) ? (D) : (DV)) + 1)
#define FA_SIMT_SMEM(D, DV) ((FA_SIMT_KEYS * FA_SIMT_LD(D, DV) + FA_SIMT_ROWS * (D)) * 4)

/* fa_mma's row pitches in 16-bit elements (16 bytes of padding) and its shared memory: the
 * block's queries and two buffers each of key and value tiles. */
#define FA_MMA_LD(D) ((D) + 8)
#define FA_MMA_SMEM(D, DV, WARPS, BC) \
    (2 * (16 * (WARPS) * FA_MMA_LD(D) + 2 * (BC) * FA_MMA_LD(D) + 2 * (BC) * FA_MMA_LD(DV)))

/* The backward (an sdpa_bwd node), two kernels in turn:
 *   dq: a block per `rows` queries of one (b, h), as the forward's, walking the keys they
 *     see: writes dq and delta = rowsum(dO o) of its rows (the workspace);
 *   dkv: a block per `keys` keys of one (b, owner head), walking the query heads that share
 *     the head and the queries that see its keys: writes dk and / or dv (`owner`); with
 *     H_k != H_v it runs twice, once over key heads (dk), once over value heads (dv).
 * Each output element is summed by one thread in a fixed order: deterministic. */
enum { FA_OWN_KV = 0, FA_OWN_K = 1, FA_OWN_V = 2 };
enum { FA_PART_FWD = 0, FA_PART_DQ = 1, FA_PART_DKV = 2, FA_PART_SPLIT = 3, FA_PART_COMBINE = 4 };

/* The general backward kernels: 128 threads; dq takes FA_SIMT_ROWS queries a block, dkv
 * FA_BWD_SIMT_KEYS keys (4 a warp), both FA_SIMT_KEYS rows of the other side a step (a
 * lane each).  Shared memory: that tile (fp32, pitch FA_SIMT_LD), the block's own 16 rows
 * of both operands, and the tile rows' log-sum-exp and delta (dkv). */
#define FA_BWD_SIMT_KEYS 16
#define FA_BWD_SIMT_SMEM(D, DV) \
    ((FA_SIMT_KEYS * FA_SIMT_LD(D, DV) + 16 * ((D) + (DV)) + 2 * FA_SIMT_KEYS) * 4)

/* The tensor-core backward kernels' shared memory (16-bit rows padded as FA_MMA_LD): dq
 * holds its BR = 16 WARPS queries and dO rows and two buffers of BC keys and values; dkv
 * its BK = 16 WARPS keys and values, two buffers of BR queries and dO rows and their fp32
 * log-sum-exp and delta. */
#define FA_BWD_DQ_SMEM(D, DV, WARPS, BC) \
    (2 * (FA_MMA_LD(D) + FA_MMA_LD(DV)) * (16 * (WARPS) + 2 * (BC)))
#define FA_BWD_DKV_SMEM(D, DV, WARPS, BR) \
    (2 * (FA_MMA_LD(D) + FA_MMA_LD(DV)) * (16 * (WARPS) + 2 * (BR)) + 16 * (BR))

/* The decode path (fa_kernels_decode.h), for few query rows (S_q <= FA_DECODE_MAX_SQ) with
 * H_k = H_v: a block packs the `group` = H_q / H_k query heads that share a key / value
 * head, all their rows (row r: head g * group + r / S_q, query r % S_q; at most
 * FA_DECODE_MAX_ROWS, 16 a warp), and takes one of `splits` ranges of `split_keys` keys;
 * block id = (b * H_k + g) * splits + range.  With one range it writes o and the stats
 * itself; else each row's unnormalised o and its m (base 2) and l go to the workspace
 * `part` (o of range s and row (b, h, i) at ((s * B * H_q + b * H_q + h) * S_q + i) * D_v,
 * then m, l pairs in the same order) and the combine kernel (FA_COMBINE_ROWS rows a block,
 * a warp each) sums the ranges in order into o and the stats: deterministic. */
#define FA_DECODE_MAX_SQ 16
#define FA_DECODE_MAX_ROWS 64
#define FA_COMBINE_ROWS 4

typedef struct {
    const void* q; /* set at enqueue */
    const void* k;
    const void* v;
    void* o;
    void* stats;         /* NULL: not asked for */
    const void* bias;    /* NULL: none */
    const void* len_q;   /* padding mask: the lengths, else NULL */
    const void* len_kv;
    const void* scale_t; /* attn_scale as a tensor in device memory, else NULL */
    int64_t b, hq, hk, hv, sq, skv, d, dv;
    int64_t q_s[4], k_s[4], v_s[4], o_s[4]; /* element strides along [B, H, S, D] */
    int64_t stats_s[3];                     /* ... along [B, H, S] */
    int64_t bias_s[4];                      /* ... along [B, H, S_q, S_kv], 0: broadcast */
    int64_t len_q_s, len_kv_s;              /* along B */
    int64_t left, right;                    /* 0 / -1: unset */
    float scale;                            /* by value (bound at enqueue), or 1 */
    int32_t q_dt, k_dt, v_dt, o_dt, stats_dt, bias_dt, scale_dt; /* PW_F32 / F16 / BF16 */
    int32_t len_q_dt, len_kv_dt;            /* PW_I32 or PW_I64 */
    int32_t bottom_right;
    int32_t alibi_n;                        /* ALiBi: largest power of 2 <= hq; 0: none */
    /* paged K / V (the forward, general kernel): k and v are caches [blocks, H, block, D],
     * key j of sample b row j % block of block table[b, 0, j / block, 0]; NULL: not paged */
    const void* page_k;                     /* int32 tables, set at enqueue */
    const void* page_v;
    int64_t page_k_s[2], page_v_s[2];       /* the tables' strides along B and blocks */
    int64_t block_k, block_v, blocks_k, blocks_v; /* keys a block, the caches' blocks */
    /* dropout (the general kernels): o = sum_j p_ij z_ij v_j, z_ij = drop_scale where
     * philox.h keeps (b, h, i, j), else 0; dropout 0: z = 1.  The backward draws the same. */
    int32_t dropout;
    uint32_t drop_threshold;                /* philox_threshold(probability) */
    float drop_scale;                       /* 1 / (1 - probability) */
    const void* seed_t;                     /* seed / offset in device memory (PW_I32 or */
    const void* offset_t;                   /* PW_I64), else NULL: the by-value words */
    int32_t seed_dt, offset_dt;
    int64_t seed, offset;
    void* rng_dump;                         /* forward: keep as 1.0 / 0.0, float32 */
    int64_t rng_s[4];                       /* [B, H_q, S_q, S_kv] strides; NULL: none */
    int32_t rows;                           /* queries a block */
    int64_t q_blocks;                       /* blocks along S_q: ceil(sq / rows) */
    /* the backward (an sdpa_bwd node: fa_bwd.h); o and stats are then read */
    const void* d_o;                        /* set at enqueue */
    void* grad_q;                           /* dq, dk, dv */
    void* grad_k;
    void* grad_v;
    float* delta;                           /* workspace: rowsum(dO o), [B, H_q, S_q] */
    int64_t do_s[4], dq_s[4], dk_s[4], dv_s[4];
    int32_t do_dt, dq_dt, dk_dt, dv_dt;
    int32_t owner;                          /* FA_OWN_*: what a key block writes */
    int32_t keys;                           /* keys a block of the dK / dV kernel */
    int64_t k_blocks;                       /* its blocks along S_kv: ceil(skv / keys) */
    /* the decode path */
    int32_t group;                          /* query heads a block packs: H_q / H_k */
    int32_t splits;                         /* key ranges; 1: no combine */
    int64_t split_keys;                     /* keys a range, a multiple of 16 */
    float* part;                            /* workspace: the ranges' partial rows */
    /* ragged tensors (cuDNN's THD layouts and packed page tables; the general kernels):
     * sample b of tensor t (FA_RAG_*) starts at element rag[t][b] (PW_I32 / PW_I64 in device
     * memory, set at enqueue) instead of b * stride 0; its rows past the sample's length
     * are the next sample's: read as 0, never written.  NULL: not ragged. */
    const void* rag[10];
    int32_t rag_dt[10];
    int32_t ragged;                         /* any rag[t] bound */
} fa_program;

enum { FA_RAG_Q, FA_RAG_K, FA_RAG_V, FA_RAG_O, FA_RAG_DO, FA_RAG_DQ, FA_RAG_DK, FA_RAG_DV,
       FA_RAG_PK, FA_RAG_PV /* the forward's page tables */ };

#endif
