/* Which vector width the CPU runs: picks among the kernels' compiled variants. */
#include "reference_cpu.h"

ref_vector_width ref_vector_level(void) {
#ifdef REF_X86_VARIANTS
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return REF_VECTOR_AVX512;
    if (__builtin_cpu_supports("avx2")) return REF_VECTOR_AVX2;
#endif
    return REF_VECTOR_BASE;
}
