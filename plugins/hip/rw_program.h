/* rw_program.h — a row-wise operation as its kernel runs it: reductions, softmax and the
 * layer / RMS / instance norms, each over a "row space".
 *
 * The axes of the operation's main input x are split in two: the reduced (normalized)
 * axes are the columns, every other axis makes rows.  A row is the set of elements one
 * output value (reduction), one softmax or one normalization combines.  Axes of each kind
 * are ordered as x lies in memory, outermost first, and merged wherever every tensor
 * walks them as one; at most RW_DIMS of each remain.  Each tensor the kernel touches is a
 * pw_tensor (pw_program.h) whose strides[0..RW_DIMS) step over the row dims and
 * strides[RW_DIMS..2 RW_DIMS) over the column dims (0 where it is broadcast); its
 * `contiguous` says a row of it is one run of stride 1 (a single column dim), and
 * `reserved` (set at enqueue) that such a run may be read with 16-byte vectors: the base
 * and every row start 16-byte aligned.
 *
 * Plain C data, built by the host code (rowwise_program.c) and passed by value to the
 * kernels (rw_kernels.h; rw_exec.h holds what each thread does), so this header is read by
 * both compilers. */
#ifndef HIPDNN_HIP_RW_PROGRAM_H
#define HIPDNN_HIP_RW_PROGRAM_H

#include "pw_program.h"

#define RW_DIMS 4          /* row dims and column dims, each, after merging */
#define RW_BLOCK 128       /* threads a block of row groups smaller than a warp */
#define RW_MAX_GROUP 512   /* threads one row may take (one block) */
#define RW_UNROLL 4        /* vectors a thread of a reduction loads before combining any */
#define RW_COL_X 32        /* column reductions: threads along the outputs ... */
#define RW_COL_Y 8         /* ... and along the reduced axis, a block */
/* Norm backward of 16-bit rows (rw_kernels.h's rw_norm_bwd_packed): where a thread keeps
 * its column parts, and the threads a block may have with them in shared memory, V vectors
 * a thread, so that the block's parts stay under 48 KiB (V = 2: rows up to 4096 16-bit
 * elements); the kernel choice (kernel_names.c) keeps longer rows' parts in registers. */
enum { NB_PARTS_NONE = 0, NB_PARTS_REGS = 1, NB_PARTS_SHARED = 2 };
#define NB_SHARED_THREADS(V) ((V) == 1 ? 512 : 256)

/* Kinds. */
enum {
    RW_REDUCE = 0,      /* one output per row; a group of threads walks each row */
    RW_REDUCE_COLS = 1, /* one output per row, the rows side by side in memory: each thread
                           walks the reduced axis for PW_VEC neighbouring outputs */
    RW_SOFTMAX = 2,     /* y = exp(x - max) / sum(exp(x - max)) over each row */
    RW_NORM = 3,        /* y = (x - mean) * inv_variance * scale + bias over each row */
    RW_NORM_BWD = 4     /* y = dx = inv_variance * (g - avg(g) - xhat * avg(g * xhat)) over
                           each row, g = dy * gamma, xhat = (x - mean) * inv_variance */
};

/* Reductions: a transform of each element, a combining operation, a final step. */
enum { RW_OP_ADD = 0, RW_OP_MUL = 1, RW_OP_MAX = 2, RW_OP_MIN = 3 };
enum { RW_PRE_NONE = 0, RW_PRE_ABS = 1, RW_PRE_SQUARE = 2, RW_PRE_NONZERO = 3 };
enum { RW_POST_NONE = 0, RW_POST_MEAN = 1, RW_POST_SQRT = 2 };

/* Norms. */
enum { RW_LAYER = 0, RW_RMS = 1 };

/* Flags. */
#define RW_F_STORE_Y 1u   /* softmax / norm: y goes to memory (else only the epilogue reads it);
                             norm backward: dx does (else only the rows' sums are wanted) */
#define RW_F_MEAN 2u      /* norm: the mean of each row is stored */
#define RW_F_INV_VAR 4u   /* norm: the inverse standard deviation of each row is stored */
#define RW_F_BIAS 8u      /* norm: y adds bias */
#define RW_F_GAMMA1 16u   /* norm: zero-centered gamma, y uses scale + 1 */
#define RW_F_EPILOGUE 32u /* norm: pointwise nodes after y run in the kernel (ep) */
#define RW_F_PACKED 64u   /* norm of 16-bit x: the row held in its storage type by its
                             group (32, 64 or 128 threads), vecs (2 or 4) vectors a
                             thread; the fast way only, else read again (vecs 0) */
#define RW_F_ROW_SUMS 128u /* norm backward: each row's sums of dy * xhat and of dy are
                              stored (sum_dyx, sum_dy: strided as the statistics) */
#define RW_F_COL_PARTS 256u /* norm backward: each group's column sums of dy * xhat and of
                               dy over the rows it took are stored (sum_dyx, sum_dy: fp32
                               [part_sets * part_groups, cols] packed) */
#define RW_F_ROW_PARAMS 512u /* packed norm, 16-bit norm backward: scale and bias are one value
                                a row (no column strides: an instance norm's per-channel
                                scale), read once a vector and broadcast; else a contiguous row */

typedef struct {
    int32_t kind, mode; /* RW_*; the norm's RW_LAYER / RW_RMS */
    int32_t nrd, ncd;   /* row dims, column dims (>= 1 each) */
    int32_t group;      /* threads a row takes (a power of two, 1..RW_MAX_GROUP) */
    int32_t vecs;       /* softmax / norm: vectors a thread holds in registers (1, 2, 4, 8),
                           or 0: rows too long for that, read again from memory */
    uint32_t flags;
    int32_t op, pre, post; /* reductions */
    int32_t splits;     /* reductions: parts each row is cut into, each its own output
                           (combined by a second pass over them); 1: whole rows */
    int32_t round[4];   /* softmax: storage type its max, x - max, exp and sum are rounded
                           to (PW_F16, PW_BF16), or -1: kept in fp32 */
    float count;        /* reductions: the elements an average divides by */
    float eps;          /* norms: epsilon (by value: a constant, or read at enqueue) */
    int64_t rdims[RW_DIMS], cdims[RW_DIMS];
    int64_t rows, cols; /* products of rdims and cdims */
    int64_t chunk;      /* reductions: columns of each split (a multiple of PW_VEC) */
    pw_tensor x, y;     /* y of a reduction: column strides 0 (one value per row) */
    pw_tensor mean, inv_var, scale, bias; /* norms (backward: mean, inv_var read) */
    pw_tensor dy, sum_dyx, sum_dy; /* norm backward: dy, and the sums (flags) */
    int64_t part_groups; /* norm backward with RW_F_COL_PARTS: groups of rows a set has */
    int64_t part_sets;   /* ... sets of rows with their own scale (an adaptive layer norm's
                            samples; else 1), each of set_rows consecutive rows: group g of
                            set s takes rows s * set_rows + g, + part_groups, ... and its
                            parts are row s * part_groups + g of [sets * groups, cols] */
    int64_t set_rows;
    int32_t ep_y;       /* epilogue: the input slot that holds the norm's y */
    int32_t fast_dt;    /* set at enqueue: x's (and y's) storage type where every vector a
                           thread touches is whole and 16-byte aligned (rw_exec.h's fast
                           way), else -1 */
    pw_program ep;      /* epilogue: a pointwise program over the norm's row space; its
                           tensors' strides are row and column strides as above, its
                           dims the column dims (ndim = ncd) */
} rw_program;

#endif
