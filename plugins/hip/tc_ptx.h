/* tc_ptx.h — the PTX of NVIDIA's sm_80 tensor-core pipelines that the matmul kernels
 * (gm_kernels.h, gm_wgmma.h) and the attention kernels (fa_*.h) share: shared-space
 * addresses, cp.async and ldmatrix.  Included after pw_exec.h (PW_FN); NVIDIA only. */
#ifndef HIPDNN_HIP_TC_PTX_H
#define HIPDNN_HIP_TC_PTX_H

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)

PW_FN uint32_t tc_smem_addr(const void* ptr) {
    uint32_t a;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(ptr));
    return a;
}

// 16 bytes from global memory, or zeros where !valid (src is then only a valid address).
PW_FN void tc_cp_async(uint32_t dst, const void* src, bool valid) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(valid ? 16 : 0));
}

PW_FN void tc_cp_commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int N> PW_FN void tc_cp_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

template <bool TRANS> PW_FN void tc_ldmatrix4(uint32_t addr, uint32_t* r) {
    if (TRANS)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
    else
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

#endif

#endif
