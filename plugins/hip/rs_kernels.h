// rs_kernels.h — the pooling kernels (forward and backward) as templates, compiled at run
// time like rw_kernels.h (one instantiation per program, named by kernel_names.c: e.g.
// "rs_forward_kernel<2>").  A thread per output element, striding over the rest; what each
// thread does is in rs_exec.h, shared with the host emulation.  One kernel per spatial
// rank, so that the window loops unroll and the indices stay in registers.  Device code
// only; the includer supplies what pw_exec.h needs (jit_source.c's prelude).
#ifndef HIPDNN_HIP_RS_KERNELS_H
#define HIPDNN_HIP_RS_KERNELS_H

#include "pw_exec.h"
#include "rs_exec.h"

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

#endif // HIPDNN_HIP_RS_KERNELS_H
