// pointwise.hip — the fused pointwise kernel and its launcher.  What each thread does is in
// pw_exec.h, shared with the host emulation the tests run without a GPU.
#include "hip_compat.h"
#include "hip_engine.h"

#include <stdio.h>

#define PW_FN static __device__ __forceinline__
#define PW_HOST_FN static __host__ __device__ inline
#define PW_UNROLL _Pragma("unroll")
#include "pw_exec.h"

namespace {

// Blocks per SM the register budget allows for S slots (ptxas: 72, 112, 156 registers on
// sm_90), given to the compiler so that it does not take more.
#define PW_MIN_BLOCKS(S) ((S) == 2 ? 7 : (S) == 4 ? 4 : 3)

template <int S>
__global__ void __launch_bounds__(PW_BLOCK, PW_MIN_BLOCKS(S)) pw_kernel(const pw_program p) {
    const int64_t groups = pw_groups(p);
    const int64_t stride = (int64_t)gridDim.x * PW_BLOCK;
    for (int64_t g = (int64_t)blockIdx.x * PW_BLOCK + threadIdx.x; g < groups; g += stride)
        pw_step<S>(p, g);
}

} // namespace

extern "C" bool hipe_pointwise_launch(const pw_program* prog, int slots, int64_t grid_cap,
                                      void* stream, char* why, size_t len) {
    const int64_t groups = pw_groups(*prog);
    int64_t blocks = (groups + PW_BLOCK - 1) / PW_BLOCK;
    if (blocks > grid_cap) blocks = grid_cap;
    if (blocks < 1) blocks = 1;
    hipStream_t s = static_cast<hipStream_t>(stream);
    (void)hipGetLastError(); // an earlier, unrelated failure must not be reported as ours
    if (slots <= 2)
        pw_kernel<2><<<dim3((unsigned)blocks), dim3(PW_BLOCK), 0, s>>>(*prog);
    else if (slots <= 4)
        pw_kernel<4><<<dim3((unsigned)blocks), dim3(PW_BLOCK), 0, s>>>(*prog);
    else
        pw_kernel<PW_SLOTS><<<dim3((unsigned)blocks), dim3(PW_BLOCK), 0, s>>>(*prog);
    const hipError_t err = hipGetLastError();
    if (err != hipSuccess) {
        snprintf(why, len, "fused pointwise kernel launch (%lld blocks of %d threads, %d slots) "
                 "failed: %s: %s", (long long)blocks, PW_BLOCK, slots, hipGetErrorName(err),
                 hipGetErrorString(err));
        return false;
    }
    return true;
}
