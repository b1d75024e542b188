/* rs_program.h — a resample (pooling) node as its kernel runs it: max or average pooling
 * over windows of up to RS_MAX_SP spatial dims, forward (a thread per pooled element) or
 * backward (a thread per dx element, gathering from every window that covers it: no
 * atomics, each dx element written once).  Plain C data, built by resample_program.c and
 * passed by value to the kernels (rs_kernels.h; rs_exec.h holds what each thread does), so
 * this header is read by both compilers.  The geometry is the reference engine's
 * (plugins/reference_cpu/resample.c). */
#ifndef HIPDNN_HIP_RS_PROGRAM_H
#define HIPDNN_HIP_RS_PROGRAM_H

#include "pw_program.h"

#define RS_MAX_SP 3 /* spatial dims (1D to 3D pooling) */
#define RS_BLOCK 256

enum { RS_MAX = 0, RS_AVG_INCLUDE = 1, RS_AVG_EXCLUDE = 2 };

typedef struct {
    int32_t kind;      /* RS_MAX ... */
    int32_t backward;  /* 0: x -> y (and idx); 1: dy (and idx or x) -> dx */
    int32_t zero_pad;  /* max: padding positions are candidates of value 0 */
    int32_t nsp;       /* spatial dims */
    int32_t idx_bytes; /* the index's integer size (1, 4, 8), 0 without one */
    int32_t reserved;
    int64_t n, c;
    int64_t in[RS_MAX_SP], out[RS_MAX_SP], win[RS_MAX_SP], stride[RS_MAX_SP], pre[RS_MAX_SP],
        post[RS_MAX_SP];
    int64_t taps;      /* positions of a full window */
    int64_t total;     /* threads' elements: pooled (forward) or dx (backward) */
    /* Element strides over [N, C, spatial...] (dtype: PW_F32, PW_F16, PW_BF16).  Forward:
       image x, pooled y; backward: image x (max without idx) and dx, pooled dy. */
    pw_tensor image, pooled, idx, grad_image, grad_pooled; /* idx: dtype unused (idx_bytes) */
} rs_program;

#endif
