/* hip_compat.h — the one vendor header of the HIP engine's device code.
 *
 * Kernels and runtime calls are written once, in HIP spelling.  Built with hipcc this is
 * plain HIP.  Built with nvcc (HIPDNN_HIP_CUDA defined by the build), the few HIP names
 * the plugin uses are mapped onto CUDA's runtime here, and nowhere else: Debian's HIP
 * NVIDIA headers do not compile with CUDA 13, and we need only this much of them. */
#ifndef HIPDNN_HIP_COMPAT_H
#define HIPDNN_HIP_COMPAT_H

#if defined(HIPDNN_HIP_CUDA)

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#define HD_VENDOR "CUDA"
#define HD_API "cuda" /* prefix of the runtime's calls, for messages */

typedef cudaError_t hipError_t;
typedef cudaStream_t hipStream_t;
#define hipSuccess cudaSuccess
#define hipErrorNoDevice cudaErrorNoDevice
#define hipGetDeviceCount cudaGetDeviceCount
#define hipGetDevice cudaGetDevice
#define hipSetDevice cudaSetDevice
#define hipGetLastError cudaGetLastError
#define hipGetErrorName cudaGetErrorName
#define hipGetErrorString cudaGetErrorString
#define hipDriverGetVersion cudaDriverGetVersion
#define hipRuntimeGetVersion cudaRuntimeGetVersion
#define hipDeviceGetAttribute cudaDeviceGetAttribute
#define hipDeviceAttributeMultiprocessorCount cudaDevAttrMultiProcessorCount

/* fp32 <-> 16-bit bit patterns, rounding to nearest even. */
static __device__ __forceinline__ float hd_half_to_float(unsigned short h) {
    return __half2float(__ushort_as_half(h));
}
static __device__ __forceinline__ unsigned short hd_float_to_half(float f) {
    return __half_as_ushort(__float2half_rn(f));
}
static __device__ __forceinline__ unsigned short hd_float_to_bf16(float f) {
    return __bfloat16_as_ushort(__float2bfloat16_rn(f));
}
/* Two at once (lo in the low half): one F2FP instruction on sm_80 and newer. */
static __device__ __forceinline__ unsigned int hd_pack_half2(float lo, float hi) {
    const __half2 h = __floats2half2_rn(lo, hi);
    return (unsigned int)__half_as_ushort(__low2half(h)) |
           ((unsigned int)__half_as_ushort(__high2half(h)) << 16);
}
static __device__ __forceinline__ unsigned int hd_pack_bf16x2(float lo, float hi) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return (unsigned int)__bfloat16_as_ushort(__low2bfloat16(h)) |
           ((unsigned int)__bfloat16_as_ushort(__high2bfloat16(h)) << 16);
}
/* 1/d within 1 ulp: one MUFU.RCP, where a division costs a Newton step and a slow path. */
static __device__ __forceinline__ float hd_rcp(float d) {
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(d));
    return r;
}

#else /* HIP */

#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>

#define HD_VENDOR "ROCm"
#define HD_API "hip"

static __device__ __forceinline__ float hd_half_to_float(unsigned short h) {
    return __half2float(__ushort_as_half(h));
}
static __device__ __forceinline__ unsigned short hd_float_to_half(float f) {
    return __half_as_ushort(__float2half_rn(f));
}
/* Round to nearest even by integer arithmetic; NaN stays a quiet NaN of its sign. */
static __device__ __forceinline__ unsigned short hd_float_to_bf16(float f) {
    unsigned int u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x0040u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (unsigned short)(u >> 16);
}
static __device__ __forceinline__ unsigned int hd_pack_half2(float lo, float hi) {
    return (unsigned int)hd_float_to_half(lo) | ((unsigned int)hd_float_to_half(hi) << 16);
}
static __device__ __forceinline__ unsigned int hd_pack_bf16x2(float lo, float hi) {
    return (unsigned int)hd_float_to_bf16(lo) | ((unsigned int)hd_float_to_bf16(hi) << 16);
}
static __device__ __forceinline__ float hd_rcp(float d) { return __frcp_rn(d); }

#endif

static __device__ __forceinline__ float hd_bf16_to_float(unsigned short b) {
    return __uint_as_float((unsigned int)b << 16);
}

/* v of the lane `mask` away (xor) within 32 lanes: the row-wise kernels combine over
 * groups of at most 32 lanes this way, on 32-wide warps and 64-wide wavefronts alike. */
template <class T>
static __device__ __forceinline__ T hd_shfl_xor(T v, int mask) {
#if defined(HIPDNN_HIP_CUDA)
    return __shfl_xor_sync(0xffffffffu, v, mask, 32);
#else
    return __shfl_xor(v, mask, 32);
#endif
}

#endif /* HIPDNN_HIP_COMPAT_H */
