// emulate.cpp — the device side of the HIP engine run on the host, for tests on machines
// without a GPU: built with the engine's host code (-DHIPE_HOST_EMULATION) into the test
// plugin libhip_emulated.so, engine "hip_emulated", host memory.  It runs pw_exec.h, the
// code each GPU thread runs, over every step of the iteration space, so the program
// compiler, the indexing and the numerics of the kernel are checked against the
// reference engine wherever the tests run.  Not a product: never installed.
#include <math.h>
#include <stdio.h>
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

} // namespace

// A slot is read only after its input was loaded or a PUT wrote it (program.c emits them
// so), which gcc cannot see through the program's switches.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define PW_FN static inline
#define PW_HOST_FN static inline
#define PW_UNROLL _Pragma("GCC unroll 8")
#include "pw_exec.h"

extern "C" const char* hipe_vendor(void) { return "host emulation"; }

extern "C" bool hipe_probe(int* device_count, char* why, size_t len) {
    (void)why;
    (void)len;
    *device_count = 1;
    return true;
}

extern "C" bool hipe_get_device(int* device, char* why, size_t len) {
    (void)why;
    (void)len;
    *device = 0;
    return true;
}

extern "C" bool hipe_set_device(int device, char* why, size_t len) {
    if (device == 0) return true;
    snprintf(why, len, "emulation has only device 0, not %d", device);
    return false;
}

extern "C" bool hipe_sm_count(int device, int* count, char* why, size_t len) {
    (void)device;
    (void)why;
    (void)len;
    *count = 1;
    return true;
}

// Runs every thread of the grid in order, each as the kernel's thread does: the same
// per-thread function (pw_exec.h) with the interpreter's program.
template <int S>
static void run_grid(const pw_program& p, bool fast, int64_t blocks) {
    for (int64_t b = 0; b < blocks; ++b)
        for (int t = 0; t < PW_BLOCK; ++t) {
            if (fast)
                pw_fast_thread<S, HIPE_INTERP_FAST_U(S), PwInterpreted>(p, b, t, blocks);
            else
                pw_generic_thread<S, PwInterpreted>(p, b, t, blocks);
        }
}

extern "C" bool hipe_pointwise_launch(const pw_program* prog, int slots, bool fast,
                                      int64_t grid_cap, void* stream, char* why, size_t len) {
    (void)stream;
    (void)why;
    (void)len;
    const int S = slots <= 2 ? 2 : slots <= 4 ? 4 : PW_SLOTS;
    int64_t blocks = fast ? pw_fast_blocks(*prog, HIPE_INTERP_FAST_U(S))
                          : (pw_groups(*prog) + PW_BLOCK - 1) / PW_BLOCK;
    if (blocks > grid_cap) blocks = grid_cap;
    if (blocks < 1) blocks = 1;
    if (S == 2) run_grid<2>(*prog, fast, blocks);
    else if (S == 4) run_grid<4>(*prog, fast, blocks);
    else run_grid<PW_SLOTS>(*prog, fast, blocks);
    return true;
}

// Emulation runs the interpreter; the generated source is still written by plugin.c for
// HIPDNN_HIP_JIT_DUMP, which the tests compile with NVRTC where it is installed.
extern "C" bool hipe_jit_available(char* why, size_t len) {
    snprintf(why, len, "host emulation interprets");
    return false;
}

extern "C" bool hipe_jit_build(const char* source, int device, hipe_jit_kernels* kernels,
                               char* why, size_t len) {
    (void)source;
    (void)device;
    memset(kernels, 0, sizeof(*kernels));
    return hipe_jit_available(why, len);
}

extern "C" bool hipe_jit_launch(void* kernel, const pw_program* prog, int fast_u,
                                int64_t grid_cap, void* stream, char* why, size_t len) {
    (void)kernel;
    (void)prog;
    (void)fast_u;
    (void)grid_cap;
    (void)stream;
    snprintf(why, len, "host emulation interprets");
    return false;
}
