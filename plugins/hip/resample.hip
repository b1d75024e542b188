// resample.hip — the pooling kernels (forward and backward) and their launcher: a thread per
// output element, striding over the rest; what each thread does is in rs_exec.h, shared
// with the host emulation.
#include "hip_compat.h"
#include "hip_engine.h"

#include <stdio.h>

#define PW_FN static __device__ __forceinline__
#define PW_HOST_FN static __host__ __device__ inline
#define PW_UNROLL _Pragma("unroll")
#include "pw_exec.h"
#include "rs_exec.h"

namespace {

template <int NSP>
__global__ void __launch_bounds__(RS_BLOCK) rs_forward_kernel(const rs_program p) {
    for (int64_t e = (int64_t)blockIdx.x * RS_BLOCK + threadIdx.x; e < p.total;
         e += (int64_t)gridDim.x * RS_BLOCK)
        rs_forward<NSP>(p, e);
}

template <int NSP>
__global__ void __launch_bounds__(RS_BLOCK) rs_backward_kernel(const rs_program p) {
    for (int64_t e = (int64_t)blockIdx.x * RS_BLOCK + threadIdx.x; e < p.total;
         e += (int64_t)gridDim.x * RS_BLOCK)
        rs_backward<NSP>(p, e);
}

typedef void (*rs_kernel)(const rs_program);

// One kernel per spatial rank, so that the window loops unroll and the indices stay in
// registers.
rs_kernel kernel_of(const rs_program& p) {
    switch (p.nsp) {
    case 1: return p.backward ? rs_backward_kernel<1> : rs_forward_kernel<1>;
    case 2: return p.backward ? rs_backward_kernel<2> : rs_forward_kernel<2>;
    case 3: return p.backward ? rs_backward_kernel<3> : rs_forward_kernel<3>;
    default: return nullptr;
    }
}

} // namespace

extern "C" bool hipe_resample_launch(const rs_program* prog, int64_t grid_cap, void* stream,
                                     char* why, size_t len) {
    int64_t blocks = (prog->total + RS_BLOCK - 1) / RS_BLOCK;
    if (blocks > grid_cap) blocks = grid_cap;
    if (blocks < 1) blocks = 1;
    hipStream_t s = static_cast<hipStream_t>(stream);
    (void)hipGetLastError(); // an earlier, unrelated failure must not be reported as ours
    const rs_kernel k = kernel_of(*prog);
    if (!k) {
        snprintf(why, len, "internal: no resample kernel for %d spatial dims", prog->nsp);
        return false;
    }
    k<<<dim3((unsigned)blocks), dim3(RS_BLOCK), 0, s>>>(*prog);
    const hipError_t err = hipGetLastError();
    if (err != hipSuccess) {
        snprintf(why, len, "resample %s kernel launch (%lld blocks of %d threads) failed: %s: %s",
                 prog->backward ? "backward" : "forward", (long long)blocks, RS_BLOCK,
                 hipGetErrorName(err), hipGetErrorString(err));
        return false;
    }
    return true;
}
