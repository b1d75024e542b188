/* hip_engine.h — what the files of the HIP engine share.
 *
 * The engine runs graphs of pointwise nodes (any DAG: every mode the backend has, NumPy
 * broadcasting, any strides) and batchnorm inference as one fused kernel per graph, reading
 * each input once and writing each output once, computing in fp32 over fp32 / fp16 / bf16
 * storage.  Graphs with reductions and norms run as a few stages (staged.h): row-wise
 * kernels (rw_program.h) for reductions, softmax and norms with their pointwise epilogues,
 * fused pointwise kernels for the rest.  What it cannot run it declines with a one-line
 * reason.
 *
 * The host code (plugin.c, program.c, rowwise_program.c, staged.c, error.c) is C11 and
 * vendor-neutral; it reaches the GPU only through the functions declared at the end, which
 * the device code (runtime.hip, pointwise.hip, rowwise.hip, jit.hip) implements in HIP,
 * compiled by hipcc for AMD GPUs or by nvcc through hip_compat.h for NVIDIA GPUs.  Both builds name their engine "hip"; on any
 * machine at most one finds its device, and the other declines at load with its reason.
 */
#ifndef HIPDNN_HIP_ENGINE_H
#define HIPDNN_HIP_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hipdnn/hipdnn_plugin.h"
#include "hipdnn/hipdnn_sdk.h"
#include "pw_program.h"
#include "rs_program.h"
#include "rw_program.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef HIPE_HOST_EMULATION /* the test plugin libhip_emulated.so (emulate.cpp) */
#define HIPE_ENGINE_NAME "hip_emulated"
#define HIPE_MEMORY_SPACE HIPDNN_MEMORY_HOST
#define HIPE_PRIORITY (-1) /* chosen only when asked for by name */
#else
#define HIPE_ENGINE_NAME "hip"
#define HIPE_MEMORY_SPACE HIPDNN_MEMORY_DEVICE
#define HIPE_PRIORITY 100 /* ahead of the CPU reference wherever it applies */
#endif
#define HIPE_PLUGIN_VERSION "0.1.0"
#define HIPE_MSG_LEN 640
/* Largest element count or span a tensor may have; keeps every index in int64. */
#define HIPE_MAX_ELEMENTS (INT64_C(1) << 48)

/* ---- diagnostics (error.c) -------------------------------------------------------- */

void hipe_set_error(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
const char* hipe_last_error(void);
void hipe_set_log_callback(hipdnnPluginLoggingCallback_t cb);
void hipe_log(int level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- a graph compiled for the fused kernel (program.c) ---------------------------- */

typedef struct {
    hipdnnSdkGraph* graph;                /* owned */
    pw_program prog;                      /* pointers and runtime scalars unset */
    int slots;                            /* kernel variant: 2, 4 or PW_SLOTS slots */
    int fast;                             /* every tensor contiguous: the fast way applies
                                             whenever the pointers are 16-byte aligned */
    int fast_u;                           /* vectors a thread loads at once, fast way */
    int64_t in_uid[PW_MAX_INPUTS];        /* tensor of prog.in[i] */
    int64_t out_uid[PW_MAX_OUTPUTS];      /* tensor of prog.out[i] */
    int32_t nscalars;
    int64_t scalar_uid[PW_MAX_SCALARS];   /* runtime by-value tensor, or -1: a constant */
    int32_t scalar_dtype[PW_MAX_SCALARS]; /* hipdnnDataType_t of a runtime scalar */
    struct hipe_staged* staged;           /* owned: the stages of a graph with reductions or
                                             norms (staged.h); NULL for one fused kernel */
} hipe_plan;

/* Compiles a graph for the engine: one fused pointwise kernel, or stages when it holds
 * reductions or norms.  False, with one line in `why` ("hip: node 'r' (pointwise relu):
 * tensor 'x' (uid 1): data type float64 not supported ..."), when the engine cannot run
 * it: this is also the engine's support check, so that what it accepts it can always
 * build.  `plan` is filled (its graph pointer left to the caller); hipe_plan_free
 * releases what it holds, whether or not it compiled. */
bool hipe_compile(const hipdnnSdkGraph* g, hipe_plan* plan, char* why, size_t len);
/* The fused pointwise kernel alone (what hipe_compile does for graphs without row-wise
 * nodes, and for each pointwise stage of those with them). */
bool hipe_compile_pointwise(const hipdnnSdkGraph* g, hipe_plan* plan, char* why, size_t len);
void hipe_plan_free(hipe_plan* plan);

/* A short listing of the compiled program, for logs and tests ("3 in, 1 out, 6 instrs"). */
void hipe_describe(const hipe_plan* plan, char* buf, size_t len);

/* ---- the plan's own kernel, compiled at run time (jit_source.c, jit.hip) -------------- */

#define HIPE_JIT_KERNEL "hipdnn_pw_fused"     /* the generic way (pw_generic_thread) */
#define HIPE_JIT_FAST_KERNEL "hipdnn_pw_fast" /* the fast way (pw_fast_thread) */
/* The source of the kernels specialised to `plan` (malloc'd; NULL when out of memory): the
 * generic one always, the fast one too when `fast` (plan->fast must be set); with the
 * prelude of NVRTC (cuda) or of the precompiled build's compat header (otherwise). */
char* hipe_jit_source(const hipe_plan* plan, bool cuda, bool fast);
/* The headers that source includes: their texts and names, *count of them (static). */
void hipe_jit_headers(const char* const** texts, const char* const** names, int* count);

/* ---- the device (runtime.hip, pointwise.hip, jit.hip: C linkage) ----------------------- */

/* "CUDA" or "ROCm": the vendor this build is for. */
const char* hipe_vendor(void);
/* Whether this machine has a device for this build; if not, why ("no CUDA device:
 * cudaGetDeviceCount returned 35 (cudaErrorInsufficientDriver: ...)"). */
bool hipe_probe(int* device_count, char* why, size_t len);
/* The calling thread's current device, and setting it; false with `why` on failure. */
bool hipe_get_device(int* device, char* why, size_t len);
bool hipe_set_device(int device, char* why, size_t len);
/* Multiprocessors (CUs) of `device`, for grid sizes. */
bool hipe_sm_count(int device, int* count, char* why, size_t len);
/* Vectors a thread of the interpreting fast kernel loads at once, for S slots (fewer where
 * more slots take more registers).  One on AMD, where clang will not unroll two copies of
 * the interpreter with every pointwise mode in it. */
#if defined(__HIP_PLATFORM_AMD__)
#define HIPE_INTERP_FAST_U(S) 1
#else
#define HIPE_INTERP_FAST_U(S) ((S) <= 2 ? 2 : 1)
#endif
/* Launches the interpreting kernel on `stream`: `slots` picks the variant, `fast` the fast
 * way (prog->aligned and every tensor contiguous) or the generic one; the grid is capped at
 * grid_cap blocks (the kernel strides over the rest).  False with `why` when the launch
 * was refused. */
bool hipe_pointwise_launch(const pw_program* prog, int slots, bool fast, int64_t grid_cap,
                           void* stream, char* why, size_t len);
/* Threads a block and blocks a row-wise program's kernel takes (before any cap). */
void hipe_rowwise_grid(const rw_program* prog, int* threads, int64_t* blocks);
/* Launches the row-wise kernel of `prog` (pointers set) on `stream`, its grid capped at
 * grid_cap blocks.  False with `why` when the launch was refused. */
bool hipe_rowwise_launch(const rw_program* prog, int64_t grid_cap, void* stream, char* why,
                         size_t len);
/* Launches the resample (pooling) kernel of `prog` (pointers set) on `stream`, its grid
 * capped at grid_cap blocks.  False with `why` when the launch was refused. */
bool hipe_resample_launch(const rs_program* prog, int64_t grid_cap, void* stream, char* why,
                          size_t len);
/* Whether this build compiles kernels at run time (NVRTC found); if not, why. */
bool hipe_jit_available(char* why, size_t len);
/* A plan's compiled kernels: valid for the life of the process. */
typedef struct {
    void* generic;     /* HIPE_JIT_KERNEL */
    void* fast;        /* HIPE_JIT_FAST_KERNEL, NULL when the source has none */
    int fast_per_sm;   /* blocks of the fast kernel one multiprocessor holds (for the log) */
} hipe_jit_kernels;
/* Compiles and loads a kernel source (hipe_jit_source) for `device`, or finds it in the
 * process's cache.  False with `why`. */
bool hipe_jit_build(const char* source, int device, hipe_jit_kernels* kernels, char* why,
                    size_t len);
/* Launches a compiled kernel as hipe_pointwise_launch launches the interpreter: the fast
 * one with fast_u vectors a thread, or (fast_u 0) the generic one. */
bool hipe_jit_launch(void* kernel, const pw_program* prog, int fast_u, int64_t grid_cap,
                     void* stream, char* why, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* HIPDNN_HIP_ENGINE_H */
