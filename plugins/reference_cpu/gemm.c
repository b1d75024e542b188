/* The float64 matrix product under conv and matmul: operands packed into panels, and a
 * register-tiled kernel chosen for the CPU at run time (AVX-512, AVX2, or portable
 * vectors).
 *
 * Every kernel sums each element's products in the order p = 0, 1, ..., k-1, starting
 * from 0.0, with one multiply and one add per step (never a fused multiply-add: the
 * plugin is built with -ffp-contract=off).  That is the order of the plain loop
 * c += a[i][p] * b[p][j], so results are bitwise the same whichever kernel, tile shape,
 * blocking or thread count computed them. */
#include <string.h>

#include "reference_cpu.h"

/* Depth of one pass over the panels: a kc x nr slice of a B panel (32 KiB at nr = 16)
 * stays in L1 while the A panels of a row block stream from L2. */
#define KC 256

/* A kernel: c[MR x NR] (row stride ldc) = (accumulate ? c : 0) + a-panel x b-panel over
 * kc steps; a holds MR values per step, b holds NR.  acc[][] lives in registers once the
 * constant loops are unrolled. */
#define REF_DEFINE_TILE(name, attr, W, MR, NV)                                               \
    attr static void name(int64_t kc, const double* a, const double* b, double* c,          \
                          int64_t ldc, bool accumulate) {                                    \
        typedef double vec __attribute__((vector_size((W) * sizeof(double))));               \
        vec acc[MR][NV];                                                                     \
        _Pragma("GCC unroll 16") for (int i = 0; i < (MR); ++i)                              \
            _Pragma("GCC unroll 16") for (int v = 0; v < (NV); ++v) {                        \
                if (accumulate)                                                              \
                    __builtin_memcpy(&acc[i][v], c + i * ldc + v * (W), sizeof(vec));        \
                else                                                                         \
                    acc[i][v] = (vec){0};                                                    \
            }                                                                                \
        for (int64_t p = 0; p < kc; ++p, a += (MR), b += (W) * (NV)) {                       \
            vec bv[NV];                                                                      \
            _Pragma("GCC unroll 16") for (int v = 0; v < (NV); ++v)                          \
                __builtin_memcpy(&bv[v], b + v * (W), sizeof(vec));                          \
            _Pragma("GCC unroll 16") for (int i = 0; i < (MR); ++i) {                        \
                double av = a[i];                                                            \
                _Pragma("GCC unroll 16") for (int v = 0; v < (NV); ++v)                      \
                    acc[i][v] = acc[i][v] + bv[v] * av;                                      \
            }                                                                                \
        }                                                                                    \
        _Pragma("GCC unroll 16") for (int i = 0; i < (MR); ++i)                              \
            _Pragma("GCC unroll 16") for (int v = 0; v < (NV); ++v)                          \
                __builtin_memcpy(c + i * ldc + v * (W), &acc[i][v], sizeof(vec));            \
    }

/* Portable: 2-wide vectors (SSE2 on x86-64, NEON on arm64), 8 accumulators. */
REF_DEFINE_TILE(tile_generic, , 2, 4, 2)
static const ref_gemm_kernel k_generic = {tile_generic, 4, 4};

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* 16 ymm registers: 8 accumulators, 2 of B, 1 broadcast, the rest for products. */
REF_DEFINE_TILE(tile_avx2, __attribute__((target("avx2"))), 4, 4, 2)
/* 32 zmm registers: 16 accumulators. */
REF_DEFINE_TILE(tile_avx512, __attribute__((target("avx512f"))), 8, 8, 2)
static const ref_gemm_kernel k_avx2 = {tile_avx2, 4, 8};
static const ref_gemm_kernel k_avx512 = {tile_avx512, 8, 16};
#endif

const ref_gemm_kernel* ref_gemm_kernel_get(void) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return &k_avx512;
    if (__builtin_cpu_supports("avx2")) return &k_avx2;
#endif
    return &k_generic;
}

int64_t ref_gemm_panel_doubles(const ref_gemm_kernel* kr, int64_t rows, int64_t k, bool b_side) {
    int64_t w = b_side ? kr->nr : kr->mr;
    return (rows + w - 1) / w * w * k;
}

/* A partial tile runs the full kernel on a local copy, so the kernel has no edge cases;
 * the panels' zero padding fills the rows and columns past the edge. */
static void edge_tile(const ref_gemm_kernel* kr, int64_t kc, const double* a, const double* b,
                      double* c, int64_t ldc, bool accumulate, int64_t mv, int64_t nv) {
    double t[REF_GEMM_MAX_MR * REF_GEMM_MAX_NR];
    memset(t, 0, sizeof(t));
    if (accumulate)
        for (int64_t i = 0; i < mv; ++i) memcpy(t + i * kr->nr, c + i * ldc, (size_t)nv * sizeof(double));
    kr->tile(kc, a, b, t, kr->nr, accumulate);
    for (int64_t i = 0; i < mv; ++i) memcpy(c + i * ldc, t + i * kr->nr, (size_t)nv * sizeof(double));
}

void ref_gemm_packed(const ref_gemm_kernel* kr, int64_t m, int64_t n, int64_t k,
                     const double* ap, const double* bp, double* c, int64_t ldc) {
    int64_t mr = kr->mr, nr = kr->nr;
    if (k <= 0) {
        for (int64_t i = 0; i < m; ++i) memset(c + i * ldc, 0, (size_t)n * sizeof(double));
        return;
    }
    for (int64_t p0 = 0; p0 < k; p0 += KC) {
        int64_t kc = k - p0 < KC ? k - p0 : KC;
        bool acc = p0 > 0;
        for (int64_t j0 = 0; j0 < n; j0 += nr) {
            const double* b = bp + j0 * k + p0 * nr; /* panel j0/nr starts at j0*k */
            int64_t nv = n - j0 < nr ? n - j0 : nr;
            for (int64_t i0 = 0; i0 < m; i0 += mr) {
                const double* a = ap + i0 * k + p0 * mr;
                int64_t mv = m - i0 < mr ? m - i0 : mr;
                double* cc = c + i0 * ldc + j0;
                if (mv == mr && nv == nr) kr->tile(kc, a, b, cc, ldc, acc);
                else edge_tile(kr, kc, a, b, cc, ldc, acc, mv, nv);
            }
        }
    }
}

/* Panels read down their columns: right when the rows are the contiguous dim (b seen
 * as [n, k]), where the block walker would read across them with a stride. */
static void pack_by_columns(const ref_view* src, int64_t w, double* dst) {
    int64_t rows = src->dims[0], cols = src->dims[1];
    for (int64_t r0 = 0; r0 < rows; r0 += w) {
        int64_t h = rows - r0 < w ? rows - r0 : w;
        for (int64_t j = 0; j < cols; ++j, dst += w) {
            ref_load_row(src->data, src->dtype, r0 * src->strides[0] + j * src->strides[1],
                         src->strides[0], h, dst);
            for (int64_t r = h; r < w; ++r) dst[r] = 0.0;
        }
    }
}

void ref_pack_panels(const ref_view* src, int64_t w, double* dst) {
    int64_t rows = src->dims[0], cols = src->dims[1];
    if (src->strides[0] < src->strides[1]) {
        pack_by_columns(src, w, dst);
        return;
    }
    int64_t full = rows / w, rem = rows % w;
    ref_view s = *src, d;
    ref_view_packed_double(dst, 3, (int64_t[]){full, w, cols}, &d);
    if (full > 0) {
        /* rows -> (panel, row in panel); a panel is cols x w, column-major */
        s.ndim = d.ndim = 3;
        s.dims[0] = full;
        s.dims[1] = w;
        s.dims[2] = cols;
        s.strides[0] = w * src->strides[0];
        s.strides[1] = src->strides[0];
        s.strides[2] = src->strides[1];
        d.strides[0] = cols * w;
        d.strides[1] = 1;
        d.strides[2] = w;
        ref_copy_view(&d, &s);
    }
    if (rem > 0) {
        double* last = dst + full * w * cols;
        memset(last, 0, (size_t)(w * cols) * sizeof(double));
        s = *src;
        s.data = (char*)src->data +
                 full * w * src->strides[0] * (int64_t)hipdnnSdkDataTypeSize(src->dtype);
        s.dims[0] = rem;
        ref_view_packed_double(last, 2, s.dims, &d);
        d.strides[0] = 1;
        d.strides[1] = w;
        ref_copy_view(&d, &s);
    }
}
