/* hip_engine.h — what the files of the HIP engine share.
 *
 * The engine runs graphs of pointwise nodes (any DAG: every mode the backend has, NumPy
 * broadcasting, any strides) and batchnorm inference as one fused kernel per graph, reading
 * each input once and writing each output once, computing in fp32 over fp32 / fp16 / bf16
 * storage.  Graphs with reductions and norms run as a few stages (staged.h): row-wise
 * kernels (rw_program.h) for reductions, softmax and norms with their pointwise epilogues,
 * fused pointwise kernels for the rest; a matmul or a forward convolution with the
 * pointwise nodes after it is one stage too (gemm.h: gm_kernels.h's kernels, the epilogue
 * in registers).  What it cannot run it declines with a one-line reason.
 *
 * The host code is C11 and vendor-neutral: plugin.c (the entry points); program*.c (a
 * pointwise graph compiled into one program, program.h); staged*.c (graphs cut into stages,
 * staged.h, staged_graph.h); lower*.c (ops rewritten into those with kernels, one file an
 * op family, lower.h); rowwise*.c (row-wise programs, one file an op family, rowwise.h);
 * resample_program.c; gemm_program.c (matmul and convolution stages, gemm.h);
 * kernel_names.c, kernel_cache.c, jit_source.c.
 * It reaches the GPU only through the functions declared at the end, which the
 * device code (runtime.hip, pointwise.hip, jit.hip) implements in HIP, compiled by hipcc
 * for AMD GPUs or by nvcc through hip_compat.h for NVIDIA GPUs.  The row-wise and pooling
 * kernels (rw_kernels.h over rw_exec*.h, rs_kernels.h) and the matmul kernels
 * (gm_kernels.h over gm_exec.h) are not compiled with the plugin: each plan compiles the
 * one it runs at plan time (NVRTC, hiprtc) and caches it on disk
 * (kernel_cache.c).  Both builds name their engine "hip"; on any machine at most one finds
 * its device, and the other declines at load with its reason.
 */
#ifndef HIPDNN_HIP_ENGINE_H
#define HIPDNN_HIP_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hipdnn/hipdnn_plugin.h"
#include "hipdnn/hipdnn_sdk.h"
#include "hipdnn/hipdnn_sdk_plugin.h"
#include "fa_program.h"
#include "gm_program.h"
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

/* ---- diagnostics: the SDK's, this plugin's own copy (hipdnn_sdk_plugin.h) ---------- */

#define hipe_set_error hipdnnSdkPluginSetError
#define hipe_log hipdnnSdkPluginLog

/* A reason to decline, "hip: ..." on one line (hipdnnSdkDecline); false.  A macro so that
 * the engine's name is stamped on every reason without each call site spelling it. */
#define decline(why, len, ...) hipdnnSdkDecline(why, len, HIPE_ENGINE_NAME, __VA_ARGS__)

/* ---- knobs ------------------------------------------------------------------------ */

/* The engine's knobs, as ids of cuDNN frontend's knob types; 0 leaves each to the engine.
 * SPLIT_K_SLC: the k ranges of a matmul or convolution (split-k).  KERNEL_CFG: the kernel a
 * matmul or convolution runs (HIPE_KERNEL_*; a plan whose product that kernel cannot run is
 * declined with the reason).  TILE_M: the rows of the sm_90 tensor-core kernel's tile, 64
 * (fp16 / bf16 matmuls; a convolution's or TF32's plan is declined) or 128 (other kernels
 * ignore it; 0: 64 for a matmul of at most 64 rows).  TILE_N: the width of the sm_90
 * tensor-core kernel's tile, 64, 128 or 256 (128 rows only), and of the fp32 kernel's
 * (GM_SGEMM), 64 or 128 (other kernels ignore it).
 * TF32 (hipdnn's own id, as the blaslt engine's): 1 lets an fp32 matmul read its inputs as
 * TF32 on the sm_90 kernel's tensor cores (gemm_choice.c); 0, the default, keeps fp32 exact. */
#define HIPE_KNOB_SPLIT_K 9
#define HIPE_KNOB_KERNEL_CFG 12
#define HIPE_KNOB_TILE_M 26
#define HIPE_KNOB_TILE_N 27
#define HIPE_KNOB_TF32 20000
enum {
    HIPE_KERNEL_ANY = 0,     /* the engine's choice */
    HIPE_KERNEL_GENERAL = 1, /* the general kernel (fp32 FMA), on any GPU */
    HIPE_KERNEL_MMA = 2,     /* tensor cores through mma.sync (NVIDIA sm_80+) */
    HIPE_KERNEL_WGMMA = 3,   /* tensor cores through wgmma and TMA (sm_90) */
    HIPE_KERNEL_SGEMM = 4,   /* exact fp32 in register-blocked tiles (fp32 operands) */
    HIPE_KERNEL_MFMA = 5,    /* AMD matrix cores through MFMA (ROCm, gfx90a / gfx940) */
    HIPE_KERNEL_CFGS = 6
};
typedef struct {
    int split_k;
    int kernel_cfg;
    int tile_m;
    int tile_n;
    int tf32;
} hipe_knobs;

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
 * build.  `knobs`: the config's (NULL: the engine's choices).  `plan` is filled (its
 * graph pointer left to the caller); hipe_plan_free
 * releases what it holds, whether or not it compiled. */
bool hipe_compile(const hipdnnSdkGraph* g, const hipe_knobs* knobs, hipe_plan* plan, char* why,
                  size_t len);
/* The fused pointwise kernel alone (what hipe_compile does for graphs without row-wise
 * nodes, and for each pointwise stage of those with them). */
bool hipe_compile_pointwise(const hipdnnSdkGraph* g, hipe_plan* plan, char* why, size_t len);
/* The same over the graph's broadcast shape as it is, every dim kept in order (a matmul's
 * epilogue: its rows are the product's, gm_program.h). */
bool hipe_compile_pointwise_in_order(const hipdnnSdkGraph* g, hipe_plan* plan, char* why,
                                     size_t len);
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
/* With $HIPDNN_HIP_JIT_DUMP set (tests), writes a generated source into that folder as
 * hipdnn_<kind>_<n>.<suffix>, with the headers it includes (plugin.c). */
void hipe_dump_source(const char* kind, const char* suffix, const char* src);
/* The headers the run-time compiled sources include (the kernel headers' text, embedded at
 * build time): their texts and names, *count of them (static). */
void hipe_jit_headers(const char* const** texts, const char* const** names, int* count);

/* ---- row-wise and pooling kernels, compiled at run time (kernel_names.c, kernel_cache.c) -- */

/* Kernel families: one source each (hipe_family_source), a kernel is one instantiation of
 * one of its templates. */
enum { HIPE_FAMILY_ROWWISE = 0, HIPE_FAMILY_RESAMPLE = 1, HIPE_FAMILIES = 2 };
/* The templates of rw_kernels.h and rs_kernels.h. */
enum {
    HIPE_K_NONE = 0,
    HIPE_K_REDUCE_ROWS,     /* rw_reduce_rows<OP, PRE, DT> */
    HIPE_K_REDUCE_COLS,     /* rw_reduce_cols<OP, PRE> */
    HIPE_K_SOFTMAX,         /* rw_softmax<V, DT> */
    HIPE_K_NORM,            /* rw_norm<V, S, DT> */
    HIPE_K_NORM_BWD,        /* rw_norm_bwd<V, DT> */
    HIPE_K_NORM_BWD_PACKED, /* rw_norm_bwd_packed<V, DT, ONE, PT, PARTS> */
    HIPE_K_NORM_PACKED,     /* rw_norm_packed<NV, DT, L, ONE, PT> */
    HIPE_K_RS_FORWARD,      /* rs_forward_kernel<NSP> */
    HIPE_K_RS_BACKWARD,     /* rs_backward_kernel<NSP> */
    HIPE_K_TEMPLATES
};
#define HIPE_K_MAX_ARGS 5
#define HIPE_KERNEL_NAME_LEN 96 /* the longest name with its terminator, and more */
/* A template and its arguments, packed (kernel_names.c); 0: no kernel. */
typedef uint64_t hipe_kernel_id;

/* The kernel that runs `p` (its pointers, and with them fast_dt, set: hipe_rw_set_vectors),
 * 0 for a combination no program has. */
hipe_kernel_id hipe_rw_kernel(const rw_program* p);
hipe_kernel_id hipe_rs_kernel(const rs_program* p);
/* A kernel's template (HIPE_K_NONE for 0 or garbage) and its HIPE_K_MAX_ARGS arguments. */
int hipe_kernel_template(hipe_kernel_id k, int* args);
/* HIPE_FAMILY_*, -1 for none. */
int hipe_kernel_family(hipe_kernel_id k);
/* The name expression the run-time compiler instantiates: "rw_norm_packed<4, 2, 32, true,
 * 0>".  False (and "(no kernel)") for 0 or when len is too short. */
bool hipe_kernel_name(hipe_kernel_id k, char* buf, size_t len);
/* The inverse of hipe_kernel_name (exactly its spelling); 0 for anything else. */
hipe_kernel_id hipe_kernel_parse(const char* name);
/* Every kernel hipe_rw_kernel or hipe_rs_kernel can return, found by running them over
 * every value of the fields they read: how many (out gets them, ascending, if they fit in
 * max), -1 when out of memory. */
int hipe_kernel_enumerate(hipe_kernel_id* out, int max);

/* The source of a family for the run-time compiler of `dialect` (static): its prelude (what
 * hip_compat.h gives the precompiled kernels) and #include "rw_kernels.h" or
 * "rs_kernels.h" (hipe_jit_headers has them). */
enum { HIPE_RTC_CUDA = 0, HIPE_RTC_HIP = 1 };
const char* hipe_family_source(int family, int dialect);

/* A compiled and loaded kernel for `device`, valid for the life of the process: from the
 * process's cache, else the disk cache, else compiled now (and saved); the log (info) says
 * which.  False with `why` naming the kernel and what failed.  Thread-safe; plan time. */
bool hipe_kernel_get(hipe_kernel_id k, int device, void** kernel, char* why, size_t len);
/* The same for kernel `name` of a source written for one plan (a matmul's, jit_source.c),
 * for the dialect of `device`'s target; cached under a hash of the source. */
bool hipe_kernel_get_source(const char* source, const char* name, int device, void** kernel,
                            char* why, size_t len);
/* The disk cache's folder: $HIPDNN_KERNEL_CACHE_DIR, else $XDG_CACHE_HOME/hipdnn/kernels,
 * else $HOME/.cache/hipdnn/kernels.  False with the reason when there is none ("off"). */
bool hipe_kernel_cache_dir(char* dir, size_t len, char* why, size_t why_len);

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
/* Whether this build compiles the pointwise plans' own kernels at run time (NVRTC found,
 * HIPDNN_HIP_JIT not 0); if not, why. */
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

/* ---- the run-time compiler (jit.hip: NVRTC, hiprtc; emulate.cpp: none needed) ---------- */

/* What kernels are compiled for on one device, and how: the disk cache's key holds it. */
typedef struct {
    int dialect;       /* HIPE_RTC_CUDA or HIPE_RTC_HIP: the sources' prelude */
    char arch[32];     /* "sm_90", "gfx90a" */
    char compiler[96]; /* "NVRTC 13.0", "hiprtc 9.0" */
    char options[160]; /* every compile's options, one string */
    char scope[48];    /* where a loaded kernel is valid: the arch (a CUDA library loads in
                          every context), the device too (a ROCm module) */
} hipe_rtc_target;
/* Whether kernels can be compiled at run time here: the compiler was found and
 * HIPDNN_HIP_JIT is not 0.  If not, `why` ends a sentence ("... and no NVRTC was found
 * (...)"). */
bool hipe_rtc_available(char* why, size_t len);
/* The target of `device`. */
bool hipe_rtc_target_of(int device, hipe_rtc_target* t, char* why, size_t len);
/* Compiles `source` (headers: hipe_jit_headers), instantiating the name expression `name`:
 * the image (cubin, code object; malloc'd, *size bytes) and the kernel's lowered (mangled)
 * name (malloc'd).  False with `why` (the compiler's log, on one line). */
bool hipe_rtc_compile(const hipe_rtc_target* t, const char* source, const char* name,
                      void** image, size_t* size, char** lowered, char* why, size_t len);
/* (kernel_cache.c) The image of `source` compiled whole for target t (its kernels found by their extern "C"
 * names: jit.hip's pointwise plan kernels), from the disk cache, or compiled now and saved
 * (always, with `recompile`: the cached one would not load).  `label` names its file.  The
 * log says which. */
bool hipe_kernel_image(const hipe_rtc_target* t, const char* source, const char* label,
                       bool recompile, void** image, size_t* size, char* why, size_t len);
/* Loads an image for `device` and finds its kernel `lowered`: valid for the life of the
 * process. */
bool hipe_rtc_load(const hipe_rtc_target* t, int device, const void* image, size_t size,
                   const char* lowered, void** kernel, char* why, size_t len);
/* Launches a loaded kernel whose one argument is the program at `arg`, on `stream`.  False
 * with `why` when the launch was refused. */
bool hipe_rtc_launch(void* kernel, int64_t blocks, int threads, const void* arg, void* stream,
                     char* why, size_t len);
#define HIPE_GEMM_KERNEL "hipdnn_gemm" /* a matmul source's entry point (jit_source.c) */
/* Launches a compiled matmul kernel (gemm_program.c) on `stream` with `smem` bytes of
 * dynamic shared memory a block; `tma` is GM_WGMMA's second argument (NULL for the
 * others). */
bool hipe_gm_launch(void* kernel, const gm_program* prog, const gm_tma* tma, int64_t blocks,
                    int threads, int smem, void* stream, char* why, size_t len);
#define HIPE_ATTN_KERNEL "hipdnn_attention" /* an attention source's entry point */
#define HIPE_ATTN_DQ_KERNEL "hipdnn_attention_dq"   /* ... the backward's dq kernel's */
#define HIPE_ATTN_DKV_KERNEL "hipdnn_attention_dkv" /* ... and its dk / dv kernel's */
#define HIPE_ATTN_SPLIT_KERNEL "hipdnn_attention_split" /* the decode path's key ranges */
#define HIPE_ATTN_COMBINE_KERNEL "hipdnn_attention_combine" /* ... and their sum */
/* Launches a compiled attention kernel (attention_program.c) on `stream` with `smem` bytes
 * of dynamic shared memory a block. */
bool hipe_fa_launch(void* kernel, const fa_program* prog, int64_t blocks, int threads, int smem,
                    void* stream, char* why, size_t len);
/* Encodes a TMA tensor map (CUtensorMap) into map[128]: a rank-5 tensor of `dtype`
 * (PW_F16, PW_BF16; PW_F32, copied as it is, for TF32 reads) at `base`, dims[0]
 * contiguous, strides[] the byte strides of dims 1..4, copied in boxes of box[] elements
 * into 128-byte-swizzled shared memory, zeros outside.  False with `why` where the driver
 * has no TMA or refuses the shape. */
bool hipe_gm_tensor_map(unsigned char* map, int dtype, const void* base, const uint64_t* dims,
                        const uint64_t* strides, const uint32_t* box, char* why, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* HIPDNN_HIP_ENGINE_H */
