/* gm_program.h — a matmul and its pointwise epilogue as the kernel runs them.
 *
 * c[batch..., M, N] = a[batch..., M, K] @ b[batch..., K, N], batch dims broadcast
 * NumPy-style (a stride of 0 repeats an operand), accumulated in fp32; then the epilogue,
 * a pw_program (pw_program.h) over the product's iteration space [batch..., M, N], runs on
 * each element of the product while it is still on the chip: the product is its input
 * `acc_in`, every other input and every output is read or written where the epilogue's
 * strides say.  A matmul with no pointwise node after it has the one-instruction epilogue
 * that stores the product.
 *
 * The epilogue's space keeps N as its innermost dim and the rest in order (program.c,
 * hipe_compile_pointwise_in_order), so row r of the space is (batch, m) = (r / M, r % M)
 * and a thread can address a vector of a tile's row as the pointwise kernel does.
 *
 * A forward convolution is the same product, implicitly (conv = GM_CONV_FPROP): row m of a
 * is output position (n, o...) of y, its columns the receptive field, k = (f..., c) with
 * the channel innermost (or (c, f...) with taps_inner, where the fp32 kernel reads a KCRS
 * w as a matrix), each element read from x (0 in the padding); b is w, row n its output
 * channel n, k as a's.  The epilogue's space is y's dims with the channels moved
 * last ([N, O..., K]: gemm_program.c permutes the epilogue's tensors so), so that row m is
 * again one output position.
 *
 * A convolution's data gradient (conv = GM_CONV_DGRAD) is the product the other way round:
 * row m is a position (n, i...) of dx, k = (f..., k_out), a gathers dy where
 * i + pad - f * dil is a multiple of the stride (o = that / stride, 0 elsewhere), b is w
 * read as [k, c], column n the channel c of dx (the tensor-core kernels read it as the
 * matrix [k_out, c] of one filter tap a k step, strides b_sk and b_sn).  The fields keep their names: "x" is dy
 * (cin its channels, xsp its spatial dims), osp are dx's, w_sk is w's stride along c and
 * w_sc along k_out.
 *
 * A weight gradient (conv = GM_CONV_WGRAD): row m is dw's output channel k_out, column n
 * its (f..., c), k = (n, o...) the positions of dy; a is dy (strides w_sk along k_out, w_sc
 * along n, w_ssp spatial: w itself is the output), b gathers x (x's fields as in a forward
 * convolution; osp are dy's dims).  dw's epilogue space is [K, F..., C].
 *
 * A grouped convolution (groups > 1: x's channels in `groups` runs of C/g, w's filters and
 * y's channels in runs of K/g, each run its own product) is a product of one group, the
 * group its one batch dim (nbatch 1, bdims[0] = groups; a_bs[0] and b_bs[0] step a and b to
 * the group's first channel and filter), its fields counting one group's channels: cin is
 * C/g (a data gradient's: K/g, dy's), n a forward's K/g, a data gradient's C/g, m a weight
 * gradient's K/g.  The epilogue's space is the whole output's: a forward's and a data
 * gradient's group `batch` writes row m's columns from batch * n on (gm_grouped_cols), a
 * weight gradient's rows batch * m + m as a batched product's.  The sm_90 kernel's tensor
 * maps: a forward's w [group, K/g, k], a data gradient's w over all K filters (the group's
 * k_out from batch * cin), a weight gradient's dy over all K (its rows from batch * m; a
 * tile's rows past m read the next group's and are not written).
 *
 * Plain C data, built by the host code (gemm_program.c) and passed by value to the kernels
 * (gm_kernels.h; gm_exec.h holds what every kernel shares), so both compilers read it. */
#ifndef HIPDNN_HIP_GM_PROGRAM_H
#define HIPDNN_HIP_GM_PROGRAM_H

#include "pw_program.h"

#define GM_MAX_BATCH 6 /* batch dims of the product, after merging */
#define GM_MAX_SPATIAL 3

enum { GM_CONV_NONE = 0, GM_CONV_FPROP = 1, GM_CONV_DGRAD = 2, GM_CONV_WGRAD = 3 };

/* Kernels (gemm_program.c picks one, kernel_names-style, at plan time). */
enum {
    GM_SIMT = 0, /* any storage type, stride and alignment; fp32 exact: the fallback */
    GM_MMA = 1,  /* fp16 / bf16 on tensor cores (mma.sync, sm_80 and newer): 16-byte
                    aligned operands whose contiguous dim is a multiple of 8 */
    GM_WGMMA = 2, /* the same operands on sm_90 (wgmma fed by TMA, gm_wgmma.h), at most 3
                     batch dims */
    GM_SGEMM = 3, /* fp32 a and b, exact fp32 in 128 x 128 (or smaller) register-blocked tiles:
                     16-byte aligned operands whose contiguous dim is a multiple of 4; a
                     forward convolution's x gathered element by element, w dense in the
                     product's k (gemm_choice.c) */
    GM_MFMA = 4   /* fp16 / bf16 matmuls on AMD matrix cores (gfx90a, gfx940: gm_mfma.h), the
                     operands as GM_MMA's */
};

#if defined(__cplusplus)
#define GM_ALIGN64 alignas(64)
#else
#define GM_ALIGN64 _Alignas(64)
#endif

/* GM_WGMMA's second parameter: the TMA tensor maps of a and b (CUtensorMap, opaque),
 * encoded on the host at enqueue (jit.hip, hipe_gm_tensor_map). */
typedef struct {
    GM_ALIGN64 unsigned char a[128];
    GM_ALIGN64 unsigned char b[128];
} gm_tma;

typedef struct {
    const void* a; /* set at enqueue */
    const void* b;
    int64_t m, n, k;
    int64_t a_sm, a_sk; /* element strides of a along M and K */
    int64_t b_sk, b_sn; /* ... and of b along K and N */
    int64_t batches;    /* product of bdims */
    int64_t bdims[GM_MAX_BATCH];
    int64_t a_bs[GM_MAX_BATCH], b_bs[GM_MAX_BATCH]; /* batch strides, 0: broadcast */
    int32_t nbatch;     /* dims in bdims (0: one matrix) */
    int32_t a_dtype, b_dtype; /* PW_F32, PW_F16, PW_BF16 */
    int32_t acc_in;     /* the epilogue's input that is the product */
    int32_t acc_round;  /* the product's storage type (PW_F32, or rounded to PW_F16 /
                           PW_BF16 before the epilogue reads it, as a tensor of that type) */
    int32_t tiles_m, tiles_n; /* of the kernel's tile, for its grid */
    int32_t tile_m, tile_n;   /* the kernel's tile (BM x BN) */
    int32_t group_m;    /* tile rows walked together (L2 reuse of b's columns) */
    int32_t kernel;     /* the kernel launched (GM_SIMT, ...): the emulation runs GM_SGEMM's
                           own code */
    /* split-k: the product's k in `splits` ranges of split_k elements (a multiple of 64),
       one launch of a block a (range, tile) "unit" (unit = range * tiles + tile); each
       writes its fp32 tile unrounded to partial[unit * tile_m * tile_n ...] (row-major,
       tile_n floats a row) and then counts itself in at arrive[tile]; the tile's last
       range to arrive sums the ranges in order 0 .. splits - 1 (deterministic, whichever
       came last) and runs the epilogue.  An arrival word is nonce << 8 | ranges arrived:
       the workspace is the caller's and may hold anything, so a word that does not carry
       this launch's nonce counts as none arrived; the last range sets it back to 0, so a
       graph's replay (the same nonce) starts clean too.  splits 1: no workspace. */
    int32_t splits;
    int64_t split_k;
    float* partial;     /* the workspace's, set at enqueue */
    uint64_t* arrive;   /* ... after the partials: a word a tile (gemm_split.c) */
    uint64_t nonce;     /* set at enqueue, under 2^56 and not 0 */
    /* convolution forward (conv != GM_CONV_NONE): a is x, b is w; spatial dims past nsp
       have size 1 */
    int32_t conv, nsp;
    int32_t flip;       /* true convolution: the filter read reversed */
    int32_t groups;     /* 1, or a grouped convolution's (nbatch 1, bdims[0] = groups) */
    int32_t taps_inner; /* a forward convolution's k as (c, f...), the taps innermost, where
                           w is dense so (KCRS: GM_SGEMM reads it as a matrix); else (f..., c) */
    int64_t cin;        /* channels of x in a group (= w's) */
    int64_t xsp[GM_MAX_SPATIAL], osp[GM_MAX_SPATIAL], ker[GM_MAX_SPATIAL];
    int64_t stride[GM_MAX_SPATIAL], pad[GM_MAX_SPATIAL], dil[GM_MAX_SPATIAL];
    int64_t x_sn, x_sc, x_ssp[GM_MAX_SPATIAL]; /* x's strides */
    int64_t w_sk, w_sc, w_ssp[GM_MAX_SPATIAL]; /* w's */
    pw_program ep;      /* the epilogue; its pointers set at enqueue */
} gm_program;

#endif
