// emulate.h — what the host emulation's files (emulate.cpp, emulate_attention.cpp) share:
// the conversions and macros the kernel headers expect of their includer (hip_compat.h's
// and the run-time compiler's preludes give the device's), and the "compiled" kernel.
#ifndef HIPDNN_HIP_EMULATE_H
#define HIPDNN_HIP_EMULATE_H

#include <math.h>
#include <string.h>

#include "hip_engine.h"

namespace {

struct float4 { float x, y, z, w; };
struct uint4 { unsigned int x, y, z, w; };
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }

inline float hd_half_to_float(unsigned short h) { return hipdnnSdkHalfToFloat(h); }
inline unsigned short hd_float_to_half(float f) { return hipdnnSdkFloatToHalf(f); }
inline float hd_bf16_to_float(unsigned short b) { return hipdnnSdkBfloat16ToFloat(b); }
inline unsigned short hd_float_to_bf16(float f) { return hipdnnSdkFloatToBfloat16(f); }
inline unsigned int hd_pack_half2(float lo, float hi) {
    return (unsigned int)hd_float_to_half(lo) | ((unsigned int)hd_float_to_half(hi) << 16);
}
inline unsigned int hd_pack_bf16x2(float lo, float hi) {
    return (unsigned int)hd_float_to_bf16(lo) | ((unsigned int)hd_float_to_bf16(hi) << 16);
}
inline float hd_rcp(float d) { return 1.0f / d; } // the kernels' is within 1 ulp of this

// The device atomics and fence the matmul kernels' split-k arrival uses (gm_exec.h,
// gm_arrive), on host threads.
inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) {
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
inline unsigned long long atomicCAS(unsigned long long* p, unsigned long long want,
                                    unsigned long long v) {
    __atomic_compare_exchange_n(p, &want, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    return want; // the value seen: `want` where the swap was made
}
inline unsigned long long atomicExch(unsigned long long* p, unsigned long long v) {
    return __atomic_exchange_n(p, v, __ATOMIC_RELAXED);
}
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

} // namespace

// A slot is read only after its input was loaded or a PUT wrote it (program.c emits them
// so), which gcc cannot see through the program's switches.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define PW_FN static inline
#define PW_HOST_FN static inline
#define PW_UNROLL _Pragma("GCC unroll 8")

// The attention sources, told apart by their entry points (hipe_fa_entry).
enum {
    EMU_NOT_ATTENTION = 0,
    EMU_ATTN_FWD = 1,
    EMU_ATTN_DQ = 2,
    EMU_ATTN_DKV = 3,
    EMU_ATTN_SPLIT = 4,
    EMU_ATTN_COMBINE = 5
};

static inline int emulated_attention_of(const char* name) {
    return strcmp(name, HIPE_ATTN_KERNEL) == 0          ? EMU_ATTN_FWD
           : strcmp(name, HIPE_ATTN_DQ_KERNEL) == 0      ? EMU_ATTN_DQ
           : strcmp(name, HIPE_ATTN_DKV_KERNEL) == 0     ? EMU_ATTN_DKV
           : strcmp(name, HIPE_ATTN_SPLIT_KERNEL) == 0   ? EMU_ATTN_SPLIT
           : strcmp(name, HIPE_ATTN_COMBINE_KERNEL) == 0 ? EMU_ATTN_COMBINE
                                                         : EMU_NOT_ATTENTION;
}

// A loaded kernel: the row-wise or pooling kernel's id, or 0 for a matmul's or an
// attention's source (`attention` says which of these).
struct emulated_kernel {
    hipe_kernel_id id;
    int attention;
};

// Graph capture over the fake driver (tests/fake_cuda/fake_graph.c): while `stream`
// captures, a launch is recorded (its arguments copied, as a kernel's parameters are) and
// run when the graph is launched, instead of run now.  Without the fake driver in the
// process nothing captures.  emu_record: false with `why` when the driver refused.
bool emu_capturing(void* stream);
// Runs g's launch of the fp32 register-tiled kernel (GM_SGEMM) by its own code
// (emulate_sgemm.cpp); false where the emulation has no such instantiation.
bool emu_sgemm(const gm_program* g);
// ... and AMD's matrix-core kernel (GM_MFMA), with a model of its instruction
// (emulate_mfma.cpp).
bool emu_mfma(const gm_program* g);
// The i-th of n blocks (or split-k units) a launch's emulation runs: all of them, in a
// scrambled order (emulate.cpp).
int64_t emu_unit(int64_t i, int64_t n);
bool emu_record(void* stream, void (*run)(const void*), const void* args, size_t size, char* why,
                size_t len);

#endif
