/* The source of a kernel specialised to one compiled graph, for the run-time compiler.
 *
 * The interpreter (pw_step in pw_exec.h) reads each instruction from the program and
 * dispatches on it; here each instruction becomes a call of the same per-instruction
 * function with constant arguments, so the compiler folds every switch away and keeps
 * only the values the graph needs in registers.  Same functions, same numerics: the
 * kernel differs from the interpreter only in what is known when it is compiled.
 *
 * The source includes "pw_exec.h" (and it "pw_program.h"), handed to the compiler as
 * headers (hipe_jit_headers); the prelude supplies what hip_compat.h gives the
 * precompiled kernel, without any header a run-time compiler may lack. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip_engine.h"
#include "hip_jit_sources.h" /* generated: the text of pw_program.h and pw_exec.h */

/* CUDA (NVRTC): conversions as PTX instructions (sm_80 and newer). */
static const char k_prelude_cuda[] =
    "typedef signed char int8_t;\n"
    "typedef unsigned char uint8_t;\n"
    "typedef short int16_t;\n"
    "typedef unsigned short uint16_t;\n"
    "typedef int int32_t;\n"
    "typedef unsigned int uint32_t;\n"
    "typedef long long int64_t;\n"
    "typedef unsigned long long uint64_t;\n"
    "#define PW_FN static __device__ __forceinline__\n"
    "#define PW_HOST_FN static __device__ __forceinline__\n"
    "#define PW_UNROLL _Pragma(\"unroll\")\n"
    "PW_FN float hd_half_to_float(unsigned short h) {\n"
    "    float f; asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h)); return f; }\n"
    "PW_FN unsigned short hd_float_to_half(float f) {\n"
    "    unsigned short h; asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f)); return h; }\n"
    "PW_FN unsigned short hd_float_to_bf16(float f) {\n"
    "    unsigned short h; asm(\"cvt.rn.bf16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f)); return h; }\n"
    "PW_FN float hd_bf16_to_float(unsigned short b) { return __uint_as_float((unsigned int)b << 16); }\n";

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

char* hipe_jit_source(const hipe_plan* plan, bool cuda) {
    const pw_program* p = &plan->prog;
    buf b = {0};
    put(&b, "%s", cuda ? k_prelude_cuda : "");
    put(&b, "#include \"pw_exec.h\"\n\n");
    put(&b, "/* %d inputs, %d outputs, %d instructions, %d slots */\n", p->nin, p->nout,
        p->ninstr, plan->slots);
    put(&b, "extern \"C\" __global__ void __launch_bounds__(PW_BLOCK) %s(const pw_program p) {\n",
        HIPE_JIT_KERNEL);
    put(&b, "    const int64_t groups = pw_groups(p);\n"
            "    const int64_t stride = (int64_t)gridDim.x * PW_BLOCK;\n"
            "    for (int64_t g = (int64_t)blockIdx.x * PW_BLOCK + threadIdx.x; g < groups; "
            "g += stride) {\n"
            "        const Pos pos = pw_position(p, g);\n"
            "        float r[PW_SLOTS][PW_VEC];\n"
            "        float acc[PW_VEC], o[PW_VEC];\n");
    for (int i = 0; i < p->nin; ++i)
        put(&b, "        load_input(p, p.in[%d], pos, r[%d]);\n", i, i);
    for (int k = 0; k < p->ninstr; ++k) {
        const pw_instr* in = &p->instr[k];
        put(&b, "        pw_instr_step<%d>(p, pw_instr{%u, %u, %u, %u, __uint_as_float(0x%08xu), "
                "__uint_as_float(0x%08xu), __uint_as_float(0x%08xu)}, pos, r, acc, o);\n",
            plan->slots, in->op, in->fn, in->a, in->flags, bits_of(in->p0), bits_of(in->p1),
            bits_of(in->p2));
    }
    put(&b, "    }\n}\n");
    if (b.failed) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

void hipe_jit_headers(const char* const** texts, const char* const** names, int* count) {
    static const char* const k_texts[2] = {hipe_src_pw_program_h, hipe_src_pw_exec_h};
    static const char* const k_names[2] = {"pw_program.h", "pw_exec.h"};
    *texts = k_texts;
    *names = k_names;
    *count = 2;
}
