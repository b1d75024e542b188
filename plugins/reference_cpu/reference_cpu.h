/* reference_cpu.h — what the files of the CPU reference engine share.
 *
 * The engine computes every value in float64 from inputs read in their own data type and
 * rounds once when it stores into a tensor of its own data type (virtual tensors too).
 * Tensors are read and written through their strides, so any layout works; the op kernels
 * themselves work on packed float64 scratch arrays (tensor_walk.c moves data in and out).
 */
#ifndef HIPDNN_REFERENCE_CPU_H
#define HIPDNN_REFERENCE_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hipdnn/hipdnn_plugin.h"
#include "hipdnn/hipdnn_sdk.h"
#include "hipdnn/hipdnn_sdk_plugin.h"

#define REF_ENGINE_NAME "reference_cpu"
/* The engine ships with the backend, so it carries hipdnn's version. */
#define REF_STR_(x) #x
#define REF_STR(x) REF_STR_(x)
#define REF_PLUGIN_VERSION                                                    \
    REF_STR(HIPDNN_VERSION_MAJOR) "." REF_STR(HIPDNN_VERSION_MINOR) "." REF_STR( \
        HIPDNN_VERSION_PATCH)
#define REF_MSG_LEN 512
/* Virtual tensors are placed in the workspace at offsets aligned to this. */
#define REF_WORKSPACE_ALIGN 256
/* Largest element count or span a tensor may have; keeps every index product in int64. */
#define REF_MAX_ELEMENTS (INT64_C(1) << 48)
/* Largest padding, stride or dilation a convolution may use (same reason). */
#define REF_MAX_CONV_PARAM (INT64_C(1) << 30)

/* ---- diagnostics: the SDK's, this plugin's own copy (hipdnn_sdk_plugin.h) ---------- */

/* Sets the calling thread's last-error message. */
#define ref_set_error hipdnnSdkPluginSetError
/* Forwards one line to the backend's logger, if one was given. */
#define ref_log hipdnnSdkPluginLog

/* ---- vector width (vector_level.c) ------------------------------------------------- */

/* Loop kernels are written once, always inlined, and compiled into one function per
 * vector width (baseline: SSE2 or NEON; on x86-64 also AVX2 and AVX-512), which the
 * caller picks by the CPU it runs on.  gcc and clang vectorize the loops by themselves. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(HIPDNN_REF_ONE_VARIANT) /* sanitized builds: the baseline only (CMakeLists.txt) */
#define REF_X86_VARIANTS 1
#define REF_TARGET_AVX2 __attribute__((target("avx2")))
#define REF_TARGET_AVX512 __attribute__((target("avx512f")))
#endif
typedef enum { REF_VECTOR_BASE, REF_VECTOR_AVX2, REF_VECTOR_AVX512 } ref_vector_width;
/* The widest vectors this CPU runs. */
ref_vector_width ref_vector_level(void);

/* ---- strided tensors (tensor_walk.c) ---------------------------------------------- */

/* A tensor in memory: element (i0, i1, ...) lives at data + sum(i_k * strides[k]) elements. */
typedef struct {
    void* data;
    hipdnnDataType_t dtype;
    int32_t ndim;
    int64_t dims[HIPDNN_MAX_DIMS];
    int64_t strides[HIPDNN_MAX_DIMS];
    /* sdpa's ragged tensors: sample b starts at element offsets[b] (int32 / int64), not at
     * b * strides[0]; offsets NULL until execute (sdpa_ragged.c) */
    bool ragged;
    const void* offsets;
    hipdnnDataType_t offsets_dtype;
} ref_view;

/* Storage types the kernels read and write: float32, float16, bfloat16, float64. */
bool ref_dtype_supported(hipdnnDataType_t t);
/* What pointwise nodes also read (and write where a mode's results are integers): BOOLEAN
 * (0 or 1; stored as v != 0), INT8, UINT8, INT32, INT64 (read as float64: exact below
 * 2^53). */
bool ref_dtype_storable(hipdnnDataType_t t);
/* A pseudo data type: element values are their offsets, so a view with stride 1 along one
 * axis and 0 elsewhere reads each element's coordinate on that axis (gen_index). */
#define REF_DTYPE_INDEX ((hipdnnDataType_t)1000)
/* Such a view over dims: no data. */
void ref_index_view(int32_t ndim, const int64_t* dims, int axis, ref_view* v);

/* A view of a graph tensor at `data`. */
void ref_view_from_tensor(const hipdnnSdkTensor* t, void* data, ref_view* v);
/* A packed row-major float64 view with the given dims. */
void ref_view_packed_double(double* data, int32_t ndim, const int64_t* dims, ref_view* v);

/* Elements one past the last one the tensor touches (1 + sum((d-1)*s)); -1 if a dim is
 * below 1, a stride is negative or the result exceeds REF_MAX_ELEMENTS. */
int64_t ref_span_elements(int32_t ndim, const int64_t* dims, const int64_t* strides);
/* Element count; -1 if above REF_MAX_ELEMENTS or a dim is below 1. */
int64_t ref_element_count(int32_t ndim, const int64_t* dims);
/* Advances a row-major multi-index over dims[0..ndim); false once it wraps to all zeros. */
bool ref_next_index(int32_t ndim, const int64_t* dims, int64_t* idx);

/* NumPy broadcasting of `in` onto out_dims (right-aligned): fills `bv` with out's rank and
 * dims and in's strides, 0 where in has size 1.  False if a dim is neither 1 nor equal,
 * or if `in` has extra leading dims that are not 1. */
bool ref_broadcast_view(const ref_view* in, int32_t out_ndim, const int64_t* out_dims,
                        ref_view* bv);

/* Values per block of the block walker: a block of each input, of the output and of a
 * kernel's temporaries (a few dozen KiB in all) stays in L1. */
#define REF_BLOCK 256
#define REF_MAP_MAX_INPUTS 6
/* Elements a thread should get before the block walker starts it (tens of us of work). */
#define REF_MIN_ELEMENTS_PER_THREAD 32768

/* Block kernel for ref_map_blocks: reads nin blocks of n float64 values (n <= REF_BLOCK)
 * and writes one; `tmp` is ntmp blocks of REF_BLOCK values of its own (per thread).  The
 * blocks never overlap.  Elementwise: a value's result may depend only on the values at
 * its position, since which positions share a block varies. */
typedef void (*ref_block_fn)(const double* const* in, double* out, int64_t n, const void* ctx,
                             double* tmp);

/* Float64 scratch values ref_map_blocks takes for an output of `elements` values with nin
 * inputs and ntmp temporary blocks: a set of blocks per thread it will start (the same at
 * plan time as at execution, on one machine). */
int64_t ref_map_scratch_doubles(int64_t elements, int nin, int ntmp);

/* Walks every element of `out` in blocks of REF_BLOCK values, in the order of out's
 * strides (outermost first, so as it lies in memory; fn must be elementwise), giving
 * `fn` the matching values of the inputs (each already shaped like out, e.g. by
 * ref_broadcast_view) as float64 and storing its results rounded to out's dtype.
 * Adjacent dims that are contiguous in every tensor are merged, and a block may span
 * rows, so short rows cost little.  Blocks are spread over up to ref_cpu_threads()
 * threads; `scratch` holds ref_map_scratch_doubles(...) values (64-byte aligned). */
void ref_map_blocks(const ref_view* out, int nin, const ref_view* ins, ref_block_fn fn,
                    const void* ctx, int ntmp, double* scratch);

/* Copies `src` into `dst` (same dims, any dtypes and strides; rounding to dst's dtype) on
 * the calling thread, with a block buffer on its stack. */
void ref_copy_view(const ref_view* dst, const ref_view* src);

/* n values of a tensor's data, elements off, off+s, ...: read as float64, or stored
 * rounded to the tensor's dtype (as ref_map_blocks does). */
void ref_load_row(const void* base, hipdnnDataType_t t, int64_t off, int64_t s, int64_t n,
                  double* out);
void ref_store_row(void* base, hipdnnDataType_t t, int64_t off, int64_t s, int64_t n,
                   const double* in);

/* Copies a tensor into a packed float64 array of its dims, and back (rounding). */
void ref_gather(const ref_view* v, double* packed);
void ref_scatter(const double* packed, const ref_view* v);
/* The same for sdpa's [B, H, S, D] tensors, ragged or not (sdpa_ragged.c): a ragged view's
 * rows from len[b] on are neither read (0 in the copy) nor written.  ref_ragged_check:
 * false (error set, naming node and port) where a sample's rows leave the tensor's span. */
void ref_ragged_gather(const ref_view* v, const int64_t* len, double* packed);
void ref_ragged_scatter(const double* packed, const ref_view* v, const int64_t* len);
bool ref_ragged_check(const ref_view* v, const int64_t* len, const char* node, const char* port);
/* Where sample b of v starts: its ragged offset, else b * strides[0]. */
int64_t ref_ragged_start(const ref_view* v, int64_t b);

/* Allocates n doubles; NULL (with the error set, naming the node) on failure. */
double* ref_alloc_doubles(int64_t n, const hipdnnSdkNode* node);

/* ---- threads (parallel.c) -------------------------------------------------------- */

#define REF_MAX_THREADS 256

/* Threads the kernels use: HIPDNN_CPU_THREADS when it is a positive integer, else the
 * online cores (sysconf); read once per process, at most REF_MAX_THREADS. */
int ref_cpu_threads(void);
/* Threads worth starting for `work` when each should get at least `min_per_thread` of
 * it (starting one costs tens of microseconds): 1 to ref_cpu_threads(). */
int ref_threads_for(double work, double min_per_thread);
/* Multiply-adds a thread should get before a kernel starts it (~50-100 us of work). */
#define REF_MIN_MACS_PER_THREAD 4e6

/* Handles work items [begin, end) on worker `worker` (0 .. threads-1, one per thread, so
 * it may index per-worker scratch); nonzero reports a failure.  Runs on other threads:
 * report errors by return value, not ref_set_error (its message is per thread). */
typedef int (*ref_range_fn)(void* ctx, int64_t begin, int64_t end, int worker);

/* Runs items [0, n) on up to `threads` threads (the calling one included), at least
 * `min_items` items per thread; threads claim runs of items as they go.  Which thread
 * runs an item varies, so an item must not depend on it.  A thread that cannot be
 * created leaves its share to the others.  0, or a failing call's value (after which
 * no new items start). */
int ref_parallel_for(int64_t n, int64_t min_items, int threads, ref_range_fn fn, void* ctx);

/* ---- per-call scratch (scratch.c) -------------------------------------------------- */

/* One block per kernel call, handed out in 64-byte aligned pieces. */
typedef struct {
    double* block; /* malloc'd, or NULL when the plan's workspace provides the room */
    double* next;
} ref_scratch;

/* Room the caller provides for a kernel's scratch: the plan's workspace, sized at plan
 * time from the kernels' formulas.  NULL, or too small, makes the kernel allocate. */
typedef struct {
    double* data;
    int64_t doubles;
} ref_region;

/* Doubles a piece of n values takes from the block (n rounded up to the alignment). */
int64_t ref_scratch_piece(int64_t n);
/* Opens a block for pieces totalling `total` doubles (sum of ref_scratch_piece);
 * false, with the error set naming the node, when it cannot be had. */
bool ref_scratch_open(ref_scratch* s, int64_t total, const ref_region* room,
                      const hipdnnSdkNode* node);
double* ref_scratch_take(ref_scratch* s, int64_t n);
void ref_scratch_close(ref_scratch* s);

/* ---- float64 matrix product (gemm.c) ----------------------------------------------- */

#define REF_GEMM_MAX_MR 8
#define REF_GEMM_MAX_NR 16

/* c[mr x nr] (row stride ldc) = (accumulate ? c : 0) + kc steps of a-panel x b-panel. */
typedef void (*ref_tile_fn)(int64_t kc, const double* a, const double* b, double* c,
                            int64_t ldc, bool accumulate);
typedef struct {
    ref_tile_fn tile;
    int64_t mr, nr; /* tile rows and columns: the A and B panel widths */
} ref_gemm_kernel;

/* The fastest kernel this CPU runs; all give bitwise the same results. */
const ref_gemm_kernel* ref_gemm_kernel_get(void);

/* Doubles that `rows` rows of length k take packed into panels of width mr (A side) or
 * nr (b_side): ceil(rows / w) * w * k. */
int64_t ref_gemm_panel_doubles(const ref_gemm_kernel* kr, int64_t rows, int64_t k, bool b_side);

/* Packs a 2-D view [rows, cols] (any dtype and strides) into panels of w rows: panel q
 * holds element (q*w + r, j) at q*w*cols + j*w + r; rows past the end are 0.  For B
 * pass the transposed view [n, k] and w = nr. */
void ref_pack_panels(const ref_view* src, int64_t w, double* dst);

/* c[m x n] (row stride ldc) = A x B over k, with A packed as panels of mr rows and B
 * as panels of nr columns (ref_pack_panels). */
void ref_gemm_packed(const ref_gemm_kernel* kr, int64_t m, int64_t n, int64_t k,
                     const double* ap, const double* bp, double* c, int64_t ldc);

/* ---- reductions over axes (reduce.c) ---------------------------------------------- */

/* What a reduction combines, each value transformed first. */
typedef enum {
    REF_RED_SUM,          /* x */
    REF_RED_SUM_ABS,      /* |x| */
    REF_RED_SUM_SQ,       /* x^2 */
    REF_RED_SUM_SQ_DEV,   /* (x - shift[g])^2, shift the group's mean */
    REF_RED_PROD,         /* x */
    REF_RED_PROD_NONZERO, /* x, 1 for a zero */
    REF_RED_MIN,          /* IEEE minimum: NaN wins, -0 < +0 */
    REF_RED_MAX,          /* IEEE maximum */
    REF_RED_AMAX,         /* maximum of |x| */
} ref_reduce_op;

/* How a reduction of x over some axes walks memory, from the shapes alone (so the same
 * at plan time as at execution).  Group g (one per kept index, row-major over the kept
 * dims) gets acc[g] = its `count` values combined in float64. */
typedef struct {
    bool inner;      /* a reduced dim is innermost in memory: one group per work item */
    int32_t nk, nr;  /* kept and reduced dims, size-1 dims dropped, contiguous ones merged */
    int64_t kdims[HIPDNN_MAX_DIMS], kx[HIPDNN_MAX_DIMS]; /* kept: dims, x strides, */
    int64_t ka[HIPDNN_MAX_DIMS];                        /* group-index strides */
    int64_t rdims[HIPDNN_MAX_DIMS], rx[HIPDNN_MAX_DIMS]; /* reduced, outermost first */
    int64_t groups, count;
    int64_t tiles, chunks;  /* work items per piece; outer way: REF_BLOCK tiles per row */
    int64_t pieces, piece;  /* the reduced range cut in `pieces` of `piece` values */
    int threads;
} ref_reduce_plan;

/* axes[d] true for each dim of x that is reduced. */
void ref_reduce_plan_init(ref_reduce_plan* p, const ref_view* x, const bool* axes);
/* Float64 scratch values a run takes: the pieces' partial results, and each worker's
 * row and tile buffers (64-byte aligned, from ref_scratch_take). */
int64_t ref_reduce_scratch_doubles(const ref_reduce_plan* p);
/* acc[0 .. groups) = each group's values combined (not divided or rooted: callers finish);
 * shift: per group, for REF_RED_SUM_SQ_DEV (else NULL).  Threads over work items. */
void ref_reduce_run(const ref_reduce_plan* p, const ref_view* x, ref_reduce_op op,
                    const double* shift, double* acc, double* scratch);

/* ---- operations: shape rules (detail for `why`) and kernels ------------------------- */

/* Convolution geometry derived from the node and the tensors' dims. */
typedef struct {
    int32_t nsp;                        /* spatial dims */
    int64_t n, c, k, groups, cg, kg;    /* cg = C per group, kg = K per group */
    int64_t in[HIPDNN_MAX_SPATIAL], ker[HIPDNN_MAX_SPATIAL], out[HIPDNN_MAX_SPATIAL];
    int64_t pre[HIPDNN_MAX_SPATIAL], stride[HIPDNN_MAX_SPATIAL], dil[HIPDNN_MAX_SPATIAL];
    bool flip;                          /* true convolution: kernel taps reversed */
} ref_conv_geometry;

bool ref_conv_check(const hipdnnSdkNode* node, const ref_view* x, const ref_view* w,
                    const ref_view* y, ref_conv_geometry* geo, char* why, size_t len);
hipdnnPluginStatus_t ref_conv_fprop(const hipdnnSdkNode* node, const ref_view* x,
                                    const ref_view* w, const ref_view* y,
                                    const ref_region* scratch);
/* Float64 scratch values ref_conv_fprop takes for one call (formula in conv.c); the
 * same at plan time as at execution, on one machine. */
int64_t ref_conv_scratch_doubles(const ref_conv_geometry* g);
/* conv_dgrad (dy, w -> dx) and conv_wgrad (x, dy -> dw), conv_grad.c: the geometry is
 * ref_conv_check's with (dx or x, w or dw, dy) as (x, w, y). */
hipdnnPluginStatus_t ref_conv_dgrad(const hipdnnSdkNode* node, const ref_view* dy,
                                    const ref_view* w, const ref_view* dx,
                                    const ref_region* scratch);
hipdnnPluginStatus_t ref_conv_wgrad(const hipdnnSdkNode* node, const ref_view* x,
                                    const ref_view* dy, const ref_view* dw,
                                    const ref_region* scratch);
int64_t ref_conv_grad_scratch_doubles(const ref_conv_geometry* g);

/* slice and concatenate (data_movement.c): no scratch.  concatenate's `in` holds its nin
 * set inputs in port order. */
bool ref_slice_check(const hipdnnSdkNode* node, const ref_view* x, const ref_view* y,
                     char* why, size_t len);
hipdnnPluginStatus_t ref_slice(const hipdnnSdkNode* node, const ref_view* x, const ref_view* y);
bool ref_concat_check(const hipdnnSdkNode* node, const ref_view* in, int nin, const ref_view* y,
                      char* why, size_t len);
hipdnnPluginStatus_t ref_concat(const hipdnnSdkNode* node, const ref_view* in, int nin,
                                const ref_view* y);

bool ref_matmul_check(const ref_view* a, const ref_view* b, const ref_view* c, char* why,
                      size_t len);
hipdnnPluginStatus_t ref_matmul(const hipdnnSdkNode* node, const ref_view* a,
                                const ref_view* b, const ref_view* c,
                                const ref_region* scratch);
/* Float64 scratch values ref_matmul takes for one call (formula in matmul.c); the views
 * must pass ref_matmul_check.  Only dims are read, so plan-time views may have no data. */
int64_t ref_matmul_scratch_doubles(const ref_view* a, const ref_view* b, const ref_view* c);

/* A pointwise node's parameters, read once: the block kernels see only these. */
typedef struct {
    hipdnnPointwiseMode_t mode;
    double lower_clip, upper_clip, lower_clip_slope;
    double elu_alpha, softplus_beta, swish_beta;
} ref_pw_params;
void ref_pw_params_of(const hipdnnSdkNode* node, ref_pw_params* p);

/* ins[k]: the node's operands in the order its mode takes them (hipdnnSdkPointwisePorts:
 * x, then b or dy, then t; gen_index's x is ref_index_view of y's dims). */
bool ref_pointwise_check(const hipdnnSdkNode* node, const ref_view* const* ins,
                         const ref_view* y, char* why, size_t len);
/* One pointwise node; scratch: ref_pointwise_scratch_doubles(y elements) values. */
hipdnnPluginStatus_t ref_pointwise(const hipdnnSdkNode* node, const ref_view* ins,
                                   const ref_view* y, const ref_region* scratch);
int64_t ref_pointwise_scratch_doubles(int64_t elements);
/* The data types a pointwise node may write to its output: float32, float16, bfloat16
 * and float64 always; BOOLEAN and the integer types for comparisons and logic (0 or 1);
 * INT32 and INT64 for gen_index. */
bool ref_pointwise_output_ok(hipdnnPointwiseMode_t mode, hipdnnDataType_t t);

/* in[]: x, mean, inv_variance, scale, bias (HIPDNN_BN_* order). */
bool ref_batchnorm_check(const ref_view* in, const ref_view* y, char* why, size_t len);
hipdnnPluginStatus_t ref_batchnorm_inference(const hipdnnSdkNode* node, const ref_view* in,
                                             const ref_view* y, const ref_region* scratch);
/* Float64 scratch values ref_batchnorm_inference takes for y of `elements` values. */
int64_t ref_batchnorm_scratch_doubles(int64_t elements);

/* reduction: y = x reduced over every axis where y's dim is 1 and x's is not. */
bool ref_reduction_check(const hipdnnSdkNode* node, const ref_view* x, const ref_view* y,
                         char* why, size_t len);
hipdnnPluginStatus_t ref_reduction(const hipdnnSdkNode* node, const ref_view* x,
                                   const ref_view* y, const ref_region* scratch);
/* Float64 scratch values ref_reduction takes (views may have no data). */
int64_t ref_reduction_scratch_doubles(const ref_view* x, const ref_view* y);

/* norm_forward: in[HIPDNN_NORM_*] and out[HIPDNN_NORM_*] point at the views of the ports
 * that are set, NULL for the others. */
bool ref_norm_check(const hipdnnSdkNode* node, const ref_view* const* in,
                    const ref_view* const* out, char* why, size_t len);
hipdnnPluginStatus_t ref_norm_forward(const hipdnnSdkNode* node, const ref_view* const* in,
                                      const ref_view* const* out, const ref_region* scratch);
/* Float64 scratch values ref_norm_forward takes (views may have no data). */
int64_t ref_norm_scratch_doubles(const hipdnnSdkNode* node, const ref_view* const* in);

/* norm_backward (norm_backward.c): in[HIPDNN_NBWD_*] / out[HIPDNN_NBWD_*] as above. */
bool ref_norm_backward_check(const hipdnnSdkNode* node, const ref_view* const* in,
                             const ref_view* const* out, char* why, size_t len);
hipdnnPluginStatus_t ref_norm_backward(const hipdnnSdkNode* node, const ref_view* const* in,
                                       const ref_view* const* out, const ref_region* scratch);
int64_t ref_norm_backward_scratch_doubles(const hipdnnSdkNode* node, const ref_view* const* in);

/* genstats (genstats.c): per-channel sum and sum of squares. */
bool ref_genstats_check(const hipdnnSdkNode* node, const ref_view* x, const ref_view* sum,
                        const ref_view* sq_sum, char* why, size_t len);
hipdnnPluginStatus_t ref_genstats(const hipdnnSdkNode* node, const ref_view* x,
                                  const ref_view* sum, const ref_view* sq_sum,
                                  const ref_region* scratch);
int64_t ref_genstats_scratch_doubles(const ref_view* x);

/* resample_fwd and resample_bwd (resample.c): pooling geometry from the image (x, or
 * dx) and the pooled tensor (y, or dy) and the node; idx may be NULL. */
typedef struct {
    int32_t nsp, kind; /* kind: max, average including or excluding padding */
    bool zero_pad;     /* padding reads 0 (else it is never a candidate) */
    int64_t n, c, in_size, out_size, taps;
    int64_t in[HIPDNN_MAX_SPATIAL], out[HIPDNN_MAX_SPATIAL], win[HIPDNN_MAX_SPATIAL];
    int64_t stride[HIPDNN_MAX_SPATIAL], pre[HIPDNN_MAX_SPATIAL], post[HIPDNN_MAX_SPATIAL];
} ref_pool_geometry;
bool ref_resample_check(const hipdnnSdkNode* node, const ref_view* image, const ref_view* pooled,
                        const ref_view* idx, ref_pool_geometry* geo, char* why, size_t len);
hipdnnPluginStatus_t ref_resample_fwd(const hipdnnSdkNode* node, const ref_view* x,
                                      const ref_view* y, const ref_view* idx,
                                      const ref_region* scratch);
/* x may be NULL when idx is given (and for the averaging modes). */
hipdnnPluginStatus_t ref_resample_bwd(const hipdnnSdkNode* node, const ref_view* dy,
                                      const ref_view* x, const ref_view* idx, const ref_view* dx,
                                      const ref_region* scratch);
int64_t ref_resample_scratch_doubles(const ref_pool_geometry* g, bool backward);

/* INT8 conv_fprop and matmul (int8_compute.c): whether a node's data types ask for
 * integer compute (an INT8 operand, an integer output or an INT32 compute type), and
 * whether that combination runs: both operands INT8, compute INT32, the output INT32,
 * INT8 or a float type, and at most `terms` products per output that an INT32
 * accumulator holds exactly.  names: how messages call the two operands and the output
 * ("x 'img'"). */
bool ref_int8_compute_uses(const hipdnnSdkNode* node, hipdnnDataType_t a, hipdnnDataType_t b,
                           hipdnnDataType_t out);
bool ref_int8_compute_check(const hipdnnSdkNode* node, const char* const* names,
                            hipdnnDataType_t a, hipdnnDataType_t b, hipdnnDataType_t out,
                            int64_t terms, char* why, size_t len);

/* reshape (reshape.c): no scratch; any storage type, x's and y's the same. */
bool ref_reshape_check(const hipdnnSdkNode* node, const ref_view* x, const ref_view* y,
                       char* why, size_t len);
hipdnnPluginStatus_t ref_reshape(const hipdnnSdkNode* node, const ref_view* x, const ref_view* y);

/* sdpa_fwd and sdpa_bwd (sdpa.c): in / out indexed by HIPDNN_SDPA_* / HIPDNN_SDPA_BWD_*. */
bool ref_sdpa_fwd_check(const hipdnnSdkNode* node, const ref_view* const* in,
                        const ref_view* const* out, char* why, size_t len);
hipdnnPluginStatus_t ref_sdpa_fwd(const hipdnnSdkNode* node, const ref_view* const* in,
                                  const ref_view* const* out, const ref_region* scratch);
int64_t ref_sdpa_fwd_scratch_doubles(const hipdnnSdkNode* node, const ref_view* const* in);
bool ref_sdpa_bwd_check(const hipdnnSdkNode* node, const ref_view* const* in,
                        const ref_view* const* out, char* why, size_t len);
hipdnnPluginStatus_t ref_sdpa_bwd(const hipdnnSdkNode* node, const ref_view* const* in,
                                  const ref_view* const* out, const ref_region* scratch);
int64_t ref_sdpa_bwd_scratch_doubles(const hipdnnSdkNode* node, const ref_view* const* in);

/* ---- the ops (op_table.c) -------------------------------------------------------------- */

/* One node's ports as views (ref_view_from_tensor), by port: v / o hold the set ones,
 * vp[p] / op[p] point at them (NULL where unset or unused).  in / out are the tensors at
 * support time, NULL at run time; scratch is NULL at support and plan time. */
typedef struct {
    const hipdnnSdkNode* n;
    const hipdnnSdkTensor* const* in;
    const hipdnnSdkTensor* const* out;
    const ref_view* v;
    const ref_view* o;
    const ref_view* const* vp;
    const ref_view* const* op;
    const ref_region* scratch;
} ref_op_args;

/* One op of the engine: a new op is one row of op_table.c's table. */
typedef struct {
    hipdnnOpKind_t kind;
    /* its shape rules, on views of its checked tensors; false with `detail` if not met */
    bool (*check)(const ref_op_args* a, char* detail, size_t len);
    hipdnnPluginStatus_t (*run)(const ref_op_args* a);
    /* float64 scratch values its kernel takes (NULL: none) */
    int64_t (*scratch)(const ref_op_args* a);
    unsigned int_in, int_out; /* bit p: port p may hold integer or BOOLEAN tensors */
    bool int32_compute;       /* INT8 x INT8 with INT32 compute (ref_int8_compute_uses) */
} ref_op;

/* The row of `kind`, NULL if the engine has none. */
const ref_op* ref_op_get(hipdnnOpKind_t kind);

/* ---- support (support.c) ----------------------------------------------------------- */

/* True if the engine can run the graph; otherwise one line (no newline) in `why`,
 * "reference_cpu: node 'c1' (conv_fprop): tensor 'x' (uid 1): data type int8 not
 * supported". */
bool ref_graph_supported(const hipdnnSdkGraph* g, char* why, size_t len);

/* ---- pointwise programs (pointwise_fusion.c; evaluated by pointwise.c) ---------------- */

#define REF_FUSE_MAX 8 /* nodes in one fused run */

/* A pointwise program: one node, or a run of pointwise nodes evaluated in one pass over
 * blocks of its last output.  The virtual tensors between a run's nodes are never
 * materialized, but each is still rounded to its own data type, so results equal the
 * node-by-node evaluation. */
typedef struct {
    int32_t first, count;                 /* nodes [first, first + count) in graph order */
    int nin;                              /* external inputs, block-walker slots 0..nin-1 */
    int64_t inputs[REF_MAP_MAX_INPUTS];   /* their uids */
    int8_t index_axis[REF_MAP_MAX_INPUTS]; /* -1: the tensor; else a gen_index member's
                                              coordinates on this axis of inputs[s] (its
                                              output, ref_index_view) */
    int8_t src[REF_FUSE_MAX][3];          /* per node and operand: slot >= 0, or -(k+1) for
                                             the result of member k; past the arity 0 */
    hipdnnDataType_t round_to[REF_FUSE_MAX];
    ref_pw_params params[REF_FUSE_MAX];
} ref_fused;

/* Finds the fused runs of a supported graph (each of 2 nodes or more); *runs is malloc'd
 * (NULL when there are none).  -1 on allocation failure. */
int ref_fuse_find(const hipdnnSdkGraph* g, ref_fused** runs, int32_t* num_runs);
/* Float64 values of workspace a program takes for an output of `elements` values. */
int64_t ref_fused_scratch_doubles(const ref_fused* run, int64_t elements);
/* Runs a program: `ins` are its inputs' views, `y` its last output; `node` (its first)
 * names it in errors. */
hipdnnPluginStatus_t ref_fused_run(const hipdnnSdkNode* node, const ref_fused* run,
                                   const ref_view* ins, const ref_view* y,
                                   const ref_region* scratch);
/* The block kernel that evaluates a program (ctx: the ref_fused), compiled for the
 * widest vectors this CPU has (AVX-512, AVX2, or the baseline: SSE2, NEON). */
ref_block_fn ref_fused_block_fn(void);

/* ---- plans and execution (executor.c) --------------------------------------------- */

typedef struct {
    hipdnnSdkGraph* graph;  /* owned */
    size_t workspace_size;  /* virtual tensors' slots, the tensor table, the kernels' scratch */
    size_t state_offset;    /* where in the workspace an execution's tensor table starts */
    size_t scratch_offset;  /* where in the workspace the scratch starts (256-byte aligned) */
    ref_fused* runs;        /* fused pointwise runs, by first node */
    int32_t num_runs;
    int64_t scratch_doubles; /* the largest scratch one node or fused run takes */
    size_t* ws_offset;      /* per tensor index: workspace offset of a virtual tensor */
    double* scalar;         /* per tensor index: value of a by-value tensor */
    bool* used;             /* per tensor index: read or written by some node */
} ref_plan;

/* Workspace bytes for a supported graph: each virtual tensor's span, the tensor table and
 * the kernels' scratch, each 256-byte aligned. */
size_t ref_workspace_size(const hipdnnSdkGraph* g);
/* Takes ownership of `g` (freed on failure too).  The graph must be supported. */
hipdnnPluginStatus_t ref_plan_create(hipdnnSdkGraph* g, ref_plan** plan);
void ref_plan_destroy(ref_plan* plan);
/* Runs the plan.  buffers: every non-virtual tensor; runtime by-value scalars point at
 * their value (host memory), read here. */
hipdnnPluginStatus_t ref_plan_run(const ref_plan* plan, void* workspace,
                                  const hipdnnPluginTensorBuffer_t* buffers,
                                  uint32_t num_buffers);

#endif /* HIPDNN_REFERENCE_CPU_H */
