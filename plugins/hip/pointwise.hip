// pointwise.hip — the interpreting kernels and their launcher: one kernel per slot count
// and way (generic, fast) runs any plan's program.  What each thread does is in
// pw_exec.h, shared with the generated kernels and with the host emulation the tests run
// without a GPU.
#include "hip_compat.h"
#include "hip_engine.h"

#include <stdio.h>

#define PW_FN static __device__ __forceinline__
// The functions past the first twelve are calls here, so that the common ones keep the
// registers and unrolling measured below; the generated kernels inline them all.
#define PW_EXT_FN static __device__ __noinline__
#define PW_HOST_FN static __host__ __device__ inline
#define PW_UNROLL _Pragma("unroll")
#include "pw_exec.h"

namespace {

// Blocks per SM the register budget allows for S slots (ptxas, sm_90: 91, 118, 164
// registers generic; 96, 111, 156 fast, no spills), given to the compiler so that it does
// not take more.  Six blocks of the 2-slot kernels (80 registers) spilled once every mode
// was in the interpreter.
#define PW_MIN_BLOCKS(S) ((S) == 2 ? 5 : (S) == 4 ? 4 : 3)

template <int S>
__global__ void __launch_bounds__(PW_BLOCK, PW_MIN_BLOCKS(S)) pw_kernel(const pw_program p) {
    pw_generic_thread<S, PwInterpreted>(p, blockIdx.x, threadIdx.x, gridDim.x);
}

template <int S>
__global__ void __launch_bounds__(PW_BLOCK, PW_MIN_BLOCKS(S)) pw_fast_kernel(const pw_program p) {
    pw_fast_thread<S, HIPE_INTERP_FAST_U(S), PwInterpreted>(p, blockIdx.x, threadIdx.x, gridDim.x);
}

template <int S>
void launch(bool fast, int64_t blocks, hipStream_t s, const pw_program& p) {
    if (fast)
        pw_fast_kernel<S><<<dim3((unsigned)blocks), dim3(PW_BLOCK), 0, s>>>(p);
    else
        pw_kernel<S><<<dim3((unsigned)blocks), dim3(PW_BLOCK), 0, s>>>(p);
}

} // namespace

extern "C" bool hipe_pointwise_launch(const pw_program* prog, int slots, bool fast,
                                      int64_t grid_cap, void* stream, char* why, size_t len) {
    const int S = slots <= 2 ? 2 : slots <= 4 ? 4 : PW_SLOTS;
    int64_t blocks = fast ? pw_fast_blocks(*prog, HIPE_INTERP_FAST_U(S))
                          : (pw_groups(*prog) + PW_BLOCK - 1) / PW_BLOCK;
    if (blocks > grid_cap) blocks = grid_cap;
    if (blocks < 1) blocks = 1;
    hipStream_t s = static_cast<hipStream_t>(stream);
    (void)hipGetLastError(); // an earlier, unrelated failure must not be reported as ours
    if (S == 2)
        launch<2>(fast, blocks, s, *prog);
    else if (S == 4)
        launch<4>(fast, blocks, s, *prog);
    else
        launch<PW_SLOTS>(fast, blocks, s, *prog);
    const hipError_t err = hipGetLastError();
    if (err != hipSuccess) {
        snprintf(why, len, "%s interpreting kernel launch (%lld blocks of %d threads, %d slots) "
                 "failed: %s: %s", fast ? "fast" : "generic", (long long)blocks, PW_BLOCK, slots,
                 hipGetErrorName(err), hipGetErrorString(err));
        return false;
    }
    return true;
}
