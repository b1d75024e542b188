/* The sources handed to the run-time compiler: the kernels specialised to one compiled
 * graph (hipe_jit_source), and the row-wise and pooling families (hipe_family_source).
 *
 * The interpreter (PwInterpreted in pw_exec.h) reads each instruction and tensor property
 * from the program; the source written here defines a program type with the same members
 * returning constants: each instruction becomes a call of the same per-instruction
 * function with constant arguments, the inputs' storage types and layouts are literals,
 * so the compiler folds every switch away and keeps only the values the graph needs in
 * registers.  Its kernels call the same per-thread functions as the interpreter's
 * (pw_generic_thread, pw_fast_thread): same code, same numerics; they differ only in what
 * is known when they are compiled.
 *
 * The source includes "pw_exec.h" (and it "pw_program.h"), handed to the compiler as
 * headers (hipe_jit_headers); the prelude supplies what hip_compat.h gives the
 * precompiled kernel, without any header a run-time compiler may lack.
 *
 * A family's source is a prelude and one #include of its kernel templates (rw_kernels.h,
 * rs_kernels.h); the run-time compiler instantiates the one kernel a plan names
 * (kernel_names.c).  The preludes give the same conversions as hip_compat.h, instruction
 * for instruction, so that the kernels compute what the precompiled ones did. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "gemm.h"
#include "hip_engine.h"
#include "hip_jit_sources.h" /* generated: the text of the kernel headers */

/* CUDA (NVRTC): conversions as PTX instructions (sm_80 and newer). */
#define PRELUDE_CUDA \
    "typedef signed char int8_t;\n" \
    "typedef unsigned char uint8_t;\n" \
    "typedef short int16_t;\n" \
    "typedef unsigned short uint16_t;\n" \
    "typedef int int32_t;\n" \
    "typedef unsigned int uint32_t;\n" \
    "typedef long long int64_t;\n" \
    "typedef unsigned long long uint64_t;\n" \
    "#define PW_FN static __device__ __forceinline__\n" \
    "#define PW_HOST_FN static __device__ __forceinline__\n" \
    "#define PW_UNROLL _Pragma(\"unroll\")\n" \
    "PW_FN float hd_half_to_float(unsigned short h) {\n" \
    "    float f; asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h)); return f; }\n" \
    "PW_FN unsigned short hd_float_to_half(float f) {\n" \
    "    unsigned short h; asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f)); return h; }\n" \
    "PW_FN unsigned short hd_float_to_bf16(float f) {\n" \
    "    unsigned short h; asm(\"cvt.rn.bf16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f)); return h; }\n" \
    "PW_FN float hd_bf16_to_float(unsigned short b) { return __uint_as_float((unsigned int)b << 16); }\n" \
    "PW_FN unsigned int hd_pack_half2(float lo, float hi) {\n" \
    "    unsigned int r; asm(\"cvt.rn.f16x2.f32 %0, %1, %2;\" : \"=r\"(r) : \"f\"(hi), \"f\"(lo)); return r; }\n" \
    "PW_FN unsigned int hd_pack_bf16x2(float lo, float hi) {\n" \
    "    unsigned int r; asm(\"cvt.rn.bf16x2.f32 %0, %1, %2;\" : \"=r\"(r) : \"f\"(hi), \"f\"(lo)); return r; }\n" \
    "PW_FN float hd_rcp(float d) { float r; asm(\"rcp.approx.ftz.f32 %0, %1;\" : \"=f\"(r) : \"f\"(d)); return r; }\n"

/* ... and what the row-wise kernels add: the warp shuffle, and gcc's +inf builtin the
 * headers use, which NVRTC lacks. */
#define ROWS_CUDA \
    "template <class T> PW_FN T hd_shfl_xor(T v, int mask) {\n" \
    "    return __shfl_xor_sync(0xffffffffu, v, mask, 32); }\n" \
    "#define __builtin_huge_valf() __int_as_float(0x7f800000)\n"

/* HIP (hiprtc, which brings the HIP device functions): fp16 through _Float16 as hip_fp16.h
 * converts, bf16 by integer rounding as hip_compat.h does. */
#define PRELUDE_HIP \
    "typedef signed char int8_t;\n" \
    "typedef unsigned char uint8_t;\n" \
    "typedef short int16_t;\n" \
    "typedef unsigned short uint16_t;\n" \
    "typedef int int32_t;\n" \
    "typedef unsigned int uint32_t;\n" \
    "typedef long long int64_t;\n" \
    "typedef unsigned long long uint64_t;\n" \
    "#define PW_FN static __device__ __forceinline__\n" \
    "#define PW_HOST_FN static __device__ __forceinline__\n" \
    "#define PW_UNROLL _Pragma(\"unroll\")\n" \
    "PW_FN float hd_half_to_float(unsigned short h) { return (float)__builtin_bit_cast(_Float16, h); }\n" \
    "PW_FN unsigned short hd_float_to_half(float f) {\n" \
    "    return __builtin_bit_cast(unsigned short, (_Float16)f); }\n" \
    "PW_FN unsigned short hd_float_to_bf16(float f) {\n" \
    "    unsigned int u = __float_as_uint(f);\n" \
    "    if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x0040u);\n" \
    "    u += 0x7fffu + ((u >> 16) & 1u);\n" \
    "    return (unsigned short)(u >> 16); }\n" \
    "PW_FN float hd_bf16_to_float(unsigned short b) { return __uint_as_float((unsigned int)b << 16); }\n" \
    "PW_FN unsigned int hd_pack_half2(float lo, float hi) {\n" \
    "    return (unsigned int)hd_float_to_half(lo) | ((unsigned int)hd_float_to_half(hi) << 16); }\n" \
    "PW_FN unsigned int hd_pack_bf16x2(float lo, float hi) {\n" \
    "    return (unsigned int)hd_float_to_bf16(lo) | ((unsigned int)hd_float_to_bf16(hi) << 16); }\n" \
    "PW_FN float hd_rcp(float d) { return __frcp_rn(d); }\n" \
    "template <class T> PW_FN T hd_shfl_xor(T v, int mask) { return __shfl_xor(v, mask, 32); }\n"

typedef struct {
    char* s;
    size_t len, cap;
    bool failed;
} buf;

static void put(buf* b, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(buf* b, const char* fmt, ...) {
    if (b->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = true;
            return;
        }
        if (b->s && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = (b->cap ? b->cap * 2 : 4096) + (size_t)n;
        char* s = realloc(b->s, cap);
        if (!s) {
            b->failed = true;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
}

/* A float as its exact bit pattern (infinities included). */
static unsigned bits_of(float f) {
    unsigned u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

/* `name(i)`: a chain of conditionals over the inputs' values, constant once i is. */
static void put_table(buf* b, const char* type, const char* name, const int* v, int n) {
    put(b, "    PW_FN %s %s(const pw_program&, int i) { return ", type, name);
    for (int i = 0; i < n; ++i) put(b, "i == %d ? %d : ", i, v[i]);
    put(b, "0; }\n");
}

/* `struct hipdnn_program`: program p's constants, as PwInterpreted reads them (pw_exec.h). */
static void put_program(buf* b, const pw_program* p, int slots) {
    int dtype[PW_MAX_INPUTS], contiguous[PW_MAX_INPUTS];
    for (int i = 0; i < p->nin; ++i) {
        dtype[i] = p->in[i].dtype;
        contiguous[i] = p->in[i].contiguous != 0;
    }
    put(b, "/* %d inputs, %d outputs, %d instructions, %d slots, %d dims */\n", p->nin, p->nout,
        p->ninstr, slots, p->ndim);
    put(b, "struct hipdnn_program {\n");
    put(b, "    PW_FN int ndim(const pw_program&) { return %d; }\n", p->ndim);
    put(b, "    PW_FN int nin(const pw_program&) { return %d; }\n", p->nin);
    put_table(b, "int", "in_dtype", dtype, p->nin);
    put_table(b, "bool", "in_contiguous", contiguous, p->nin);
    put(b, "    template <int S, class At>\n"
           "    PW_FN void run(const pw_program& p, const At& at, float (&r)[PW_SLOTS][PW_VEC], "
           "float* acc, float* o) {\n");
    for (int k = 0; k < p->ninstr; ++k) {
        const pw_instr* in = &p->instr[k];
        put(b, "        pw_instr_step<S>(p, pw_instr{%u, %u, %u, %u, __uint_as_float(0x%08xu), "
               "__uint_as_float(0x%08xu), __uint_as_float(0x%08xu)}, at, r, acc, o);\n",
            in->op, in->fn, in->a, in->flags, bits_of(in->p0), bits_of(in->p1), bits_of(in->p2));
    }
    put(b, "    }\n};\n\n");
}

static char* finish(buf* b) {
    if (!b->failed) return b->s;
    free(b->s);
    return NULL;
}

char* hipe_jit_source(const hipe_plan* plan, bool cuda, bool fast) {
    buf b = {0};
    put(&b, "%s", cuda ? PRELUDE_CUDA : "");
    put(&b, "#include \"pw_exec.h\"\n\n");
    put_program(&b, &plan->prog, plan->slots);
    put(&b, "extern \"C\" __global__ void __launch_bounds__(PW_BLOCK) %s(const pw_program p) {\n"
            "    pw_generic_thread<%d, hipdnn_program>(p, blockIdx.x, threadIdx.x, gridDim.x);\n}\n",
        HIPE_JIT_KERNEL, plan->slots);
    if (fast)
        put(&b, "\nextern \"C\" __global__ void __launch_bounds__(PW_BLOCK) %s(const pw_program p) {\n"
                "    pw_fast_thread<%d, %d, hipdnn_program>(p, blockIdx.x, threadIdx.x, gridDim.x);\n}\n",
            HIPE_JIT_FAST_KERNEL, plan->slots, plan->fast_u);
    return finish(&b);
}

/* A matmul kernel (gm_kernels.h) with its epilogue's program: one entry point, named
 * HIPE_GEMM_KERNEL, whose template arguments are the plan's kernel choice. */
char* hipe_gm_source(const hipe_gm* gm, const hipe_gm_kernel* k, int dialect) {
    buf b = {0};
    put(&b, "%s", dialect == HIPE_RTC_CUDA ? PRELUDE_CUDA : PRELUDE_HIP);
    /* one group: the kernels' group arithmetic folds away (gm_exec.h) */
    put(&b, "#define GM_GROUPED %d\n#include \"gm_kernels.h\"\n\n", gm->prog.groups > 1);
    put_program(&b, &gm->prog.ep, gm->slots);
    if (k->kind == GM_WGMMA) /* the tensor maps must stay in parameter space: __grid_constant__ */
        put(&b, "__global__ void __launch_bounds__(GM_WG_THREADS(%d), 1) %s(const __grid_constant__ "
                "gm_program g, const __grid_constant__ gm_tma t) {\n"
                "    extern __shared__ __attribute__((aligned(16))) unsigned char smem[];\n"
                "    gm_wgmma_tile<%d, %s, %s, %d, %d, %s, %d, %d, %d, hipdnn_program>(g, t, smem);\n}\n",
            k->bm, HIPE_GEMM_KERNEL, k->dt, k->ak ? "true" : "false", k->bk ? "true" : "false",
            k->bn, k->stages, k->persistent ? "true" : "false", (int)gm->prog.conv, k->bm,
            gm->slots);
    else if (k->kind == GM_MMA) /* min blocks 1: else ptxas caps sm_90's registers, spilling */
        put(&b, "__global__ void __launch_bounds__(%d, 1) %s(const gm_program g) {\n"
                "    extern __shared__ __attribute__((aligned(16))) unsigned char smem[];\n"
                "    gm_mma<%d, %s, %s, %d, %d, %d, %d, %d, %d, %d, hipdnn_program>(g, smem);\n}\n",
            hipe_gm_threads(k), HIPE_GEMM_KERNEL, k->dt, k->ak ? "true" : "false",
            k->bk ? "true" : "false", k->bm, k->bn, k->wm, k->wn, k->stages,
            (int)gm->prog.conv, gm->slots);
    else if (k->kind == GM_MFMA) /* AMD matrix cores (gm_mfma.h): hiprtc only */
        put(&b, "__global__ void __launch_bounds__(GM_MF_THREADS) %s(const gm_program g) {\n"
                "    extern __shared__ __attribute__((aligned(16))) unsigned char smem[];\n"
                "    gm_mfma<%d, %s, %s, %d, %d, %d, hipdnn_program>(g, smem);\n}\n",
            HIPE_GEMM_KERNEL, k->dt, k->ak ? "true" : "false", k->bk ? "true" : "false", k->bm,
            k->bn, gm->slots);
    else if (k->kind == GM_SGEMM) /* two blocks a multiprocessor: at most 128 registers */
        put(&b, "__global__ void __launch_bounds__(GM_SG_THREADS, 2) %s(const gm_program g) {\n"
                "    gm_sgemm<%d, %d, %s, %s, %d, %d, hipdnn_program>(g);\n}\n",
            HIPE_GEMM_KERNEL, k->bm, k->bn, k->ak ? "true" : "false", k->bk ? "true" : "false",
            (int)gm->prog.conv, gm->slots);
    else
        put(&b, "__global__ void __launch_bounds__(GM_SIMT_THREADS) %s(const gm_program g) {\n"
                "    gm_simt<%d, %d, %d, hipdnn_program>(g);\n}\n",
            HIPE_GEMM_KERNEL, gm->prog.a_dtype, gm->prog.b_dtype, gm->slots);
    return finish(&b);
}

/* A backward kernel (fa_bwd_kernels.h), entry point hipe_fa_entry(k->part). */
static void put_backward(buf* b, const fa_program* p, const hipe_fa_kernel* k) {
    const char* part = k->part == FA_PART_DQ ? "dq" : "dkv";
    put(b, "#include \"fa_bwd_kernels.h\"\n\n");
    if (k->kind == FA_MMA)
        put(b, "__global__ void __launch_bounds__(%d, 1) %s(const fa_program p) {\n"
               "    extern __shared__ __attribute__((aligned(16))) unsigned char smem[];\n"
               "    fa_bwd_%s_mma<%d, %d, %d, %d, %d>(p, smem);\n}\n",
            32 * k->warps, hipe_fa_entry(k->part), part, k->dt, (int)p->d, (int)p->dv, k->warps,
            k->bc);
    else
        put(b, "__global__ void __launch_bounds__(FA_SIMT_THREADS) %s(const fa_program p) {\n"
               "    extern __shared__ float smem[];\n"
               "    fa_bwd_%s_simt<%d, %d, %d, %d, %d, %d>(p, smem);\n}\n",
            hipe_fa_entry(k->part), part, (int)p->d, (int)p->dv, p->q_dt, p->k_dt, p->v_dt,
            p->do_dt);
}

/* A decode path's kernel (fa_kernels_decode.h): the split kernel (tensor cores) or the
 * combine kernel. */
static void put_decode(buf* b, const fa_program* p, const hipe_fa_kernel* k) {
    put(b, "#include \"fa_kernels_decode.h\"\n\n");
    if (k->part == FA_PART_SPLIT)
        put(b, "__global__ void __launch_bounds__(%d, 1) %s(const fa_program p) {\n"
               "    extern __shared__ __attribute__((aligned(16))) unsigned char smem[];\n"
               "    fd_split_mma<%d, %d, %d, %d, %d>(p, smem);\n}\n",
            32 * k->warps, hipe_fa_entry(k->part), k->dt, (int)p->d, (int)p->dv, k->warps, k->bc);
    else
        put(b, "__global__ void __launch_bounds__(%d) %s(const fa_program p) {\n"
               "    fd_combine<%d>(p);\n}\n",
            32 * FA_COMBINE_ROWS, hipe_fa_entry(k->part), (int)p->dv);
}

/* An attention kernel (fa_kernels.h, fa_bwd_kernels.h): one entry point
 * (hipe_fa_entry), the head dims and storage types its template arguments; the lane
 * broadcast its general kernels add. */
char* hipe_fa_source(const hipe_fa* fa, const hipe_fa_kernel* k, int dialect) {
    const fa_program* p = &fa->prog;
    buf b = {0};
    if (dialect == HIPE_RTC_CUDA)
        put(&b, "%s%stemplate <class T> PW_FN T hd_shfl(T v, int lane) {\n"
                "    return __shfl_sync(0xffffffffu, v, lane, 32); }\n", PRELUDE_CUDA, ROWS_CUDA);
    else
        put(&b, "%stemplate <class T> PW_FN T hd_shfl(T v, int lane) { return __shfl(v, lane, 32); }\n",
            PRELUDE_HIP);
    if (k->part == FA_PART_SPLIT || k->part == FA_PART_COMBINE) {
        put_decode(&b, p, k);
        return finish(&b);
    }
    if (k->part != FA_PART_FWD) {
        put_backward(&b, p, k);
        return finish(&b);
    }
    put(&b, "#include \"fa_kernels.h\"\n\n");
    /* HIPDNN_HIP_FA_FAST=0: every key tile through the masked softmax (comparisons) */
    const char* fast = getenv("HIPDNN_HIP_FA_FAST");
    if (k->kind == FA_MMA) /* min blocks 1: else ptxas caps the registers, spilling */
        put(&b, "__global__ void __launch_bounds__(%d, 1) %s(const fa_program p) {\n"
                "    extern __shared__ __attribute__((aligned(16))) unsigned char smem[];\n"
                "    fa_mma<%d, %d, %d, %d, %d, %s>(p, smem);\n}\n",
            32 * k->warps, HIPE_ATTN_KERNEL, k->dt, (int)p->d, (int)p->dv, k->warps, k->bc,
            fast && strcmp(fast, "0") == 0 ? "false" : "true");
    else
        put(&b, "__global__ void __launch_bounds__(FA_SIMT_THREADS) %s(const fa_program p) {\n"
                "    extern __shared__ float smem[];\n"
                "    fa_simt<%d, %d, %d, %d, %d>(p, smem);\n}\n",
            HIPE_ATTN_KERNEL, (int)p->d, (int)p->dv, p->q_dt, p->k_dt, p->v_dt);
    return finish(&b);
}

void hipe_jit_headers(const char* const** texts, const char* const** names, int* count) {
    /* every header a kernel source includes, directly or through another (CMakeLists.txt
       embeds the same list) */
    static const char* const k_texts[] = {
        hipe_src_pw_program_h, hipe_src_pw_exec_h, hipe_src_rw_program_h, hipe_src_rw_exec_h,
        hipe_src_rw_exec_reduce_h, hipe_src_rw_exec_softmax_h, hipe_src_rw_exec_norm_h,
        hipe_src_rw_exec_norm_bwd_h, hipe_src_rw_kernels_h, hipe_src_rs_program_h,
        hipe_src_rs_exec_h, hipe_src_rs_kernels_h, hipe_src_gm_program_h, hipe_src_gm_exec_h,
        hipe_src_gm_kernels_h, hipe_src_gm_sgemm_h, hipe_src_gm_wgmma_h, hipe_src_gm_mfma_h,
        hipe_src_fa_program_h,
        hipe_src_fa_exec_h, hipe_src_fa_kernels_h, hipe_src_fa_bwd_exec_h,
        hipe_src_fa_bwd_kernels_h, hipe_src_fa_bwd_mma_h, hipe_src_fa_exec_decode_h,
        hipe_src_fa_kernels_decode_h, hipe_src_tc_ptx_h, hipe_src_philox_h};
    static const char* const k_names[] = {
        "pw_program.h", "pw_exec.h", "rw_program.h", "rw_exec.h", "rw_exec_reduce.h",
        "rw_exec_softmax.h", "rw_exec_norm.h", "rw_exec_norm_bwd.h", "rw_kernels.h",
        "rs_program.h", "rs_exec.h", "rs_kernels.h", "gm_program.h", "gm_exec.h",
        "gm_kernels.h", "gm_sgemm.h", "gm_wgmma.h", "gm_mfma.h", "fa_program.h", "fa_exec.h",
        "fa_kernels.h", "fa_bwd_exec.h", "fa_bwd_kernels.h", "fa_bwd_mma.h",
        "fa_exec_decode.h", "fa_kernels_decode.h", "tc_ptx.h", "philox.h"};
    _Static_assert(sizeof(k_texts) == sizeof(k_names), "a text for each name");
    *texts = k_texts;
    *names = k_names;
    *count = (int)(sizeof(k_names) / sizeof(k_names[0]));
}

static const char* const k_family[HIPE_FAMILIES][2] = {
    [HIPE_FAMILY_ROWWISE] = {PRELUDE_CUDA ROWS_CUDA "#include \"rw_kernels.h\"\n",
                             PRELUDE_HIP "#include \"rw_kernels.h\"\n"},
    [HIPE_FAMILY_RESAMPLE] = {PRELUDE_CUDA ROWS_CUDA "#include \"rs_kernels.h\"\n",
                              PRELUDE_HIP "#include \"rs_kernels.h\"\n"},
};

const char* hipe_family_source(int family, int dialect) {
    if (family < 0 || family >= HIPE_FAMILIES || (dialect != HIPE_RTC_CUDA && dialect != HIPE_RTC_HIP))
        return NULL;
    return k_family[family][dialect];
}
