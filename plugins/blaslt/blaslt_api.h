/* blaslt_api.h — the part of the cuBLASLt API (and of the CUDA driver API) the blaslt engine
 * calls, declared here so that the plugin builds without NVIDIA's headers and opens the
 * libraries at run time.  Types are the libraries' own, spelled our way; every enum value
 * and struct layout is fixed by their ABI (cuBLASLt 11.0 and later, the driver's since
 * CUDA 4), so a value here must never change.
 *
 * hipBLASLt has the same calls under hipblasLt* names, but not the same numbers: its
 * hipblasOperation_t starts at 111 and its compute types are its own enum, so a ROCm build
 * needs a second table of values, not just a second set of names.  That build is not made
 * yet (docs/gpu.md, "The blaslt engine"). */
#ifndef HIPDNN_BLASLT_API_H
#define HIPDNN_BLASLT_API_H

#include <stddef.h>
#include <stdint.h>

/* ---- cuBLASLt ------------------------------------------------------------------------- */

typedef int bl_status;                    /* cublasStatus_t */
typedef struct bl_lt_context* bl_lt;      /* cublasLtHandle_t */
typedef struct bl_lt_desc* bl_desc;       /* cublasLtMatmulDesc_t */
typedef struct bl_lt_layout* bl_layout;   /* cublasLtMatrixLayout_t */
typedef struct bl_lt_pref* bl_pref;       /* cublasLtMatmulPreference_t */

enum { BL_STATUS_SUCCESS = 0, BL_STATUS_NOT_SUPPORTED = 15 };

/* cudaDataType_t */
enum { BL_R_32F = 0, BL_R_64F = 1, BL_R_16F = 2, BL_R_16BF = 14 };

/* cublasComputeType_t: fp32 accumulation, exact, or with inputs rounded to TF32 */
enum { BL_COMPUTE_32F = 68, BL_COMPUTE_32F_FAST_TF32 = 77 };

/* cublasOperation_t */
enum { BL_OP_N = 0, BL_OP_T = 1 };

/* cublasLtMatmulDescAttributes_t, with the C type each takes */
enum {
    BL_DESC_TRANSA = 3,       /* int32_t */
    BL_DESC_TRANSB = 4,       /* int32_t */
    BL_DESC_EPILOGUE = 7,     /* uint32_t */
    BL_DESC_BIAS_POINTER = 8, /* const void* (a bias), void* (a bias gradient) */
    BL_DESC_EPILOGUE_AUX_POINTER = 11,      /* void* (GELU_AUX), const void* (DGELU) */
    BL_DESC_EPILOGUE_AUX_LD = 12,           /* int64_t, elements: a multiple of 8 */
    BL_DESC_EPILOGUE_AUX_BATCH_STRIDE = 13, /* int64_t, elements: a multiple of 8 */
};

/* cublasLtMatrixLayoutAttribute_t */
enum {
    BL_LAYOUT_BATCH_COUNT = 5,          /* int32_t */
    BL_LAYOUT_STRIDED_BATCH_OFFSET = 6, /* int64_t, in elements */
};

/* cublasLtMatmulPreferenceAttributes_t */
enum {
    BL_PREF_MAX_WORKSPACE_BYTES = 1, /* uint64_t */
    BL_PREF_MIN_ALIGNMENT_A = 5,     /* uint32_t, bytes (default 256) */
    BL_PREF_MIN_ALIGNMENT_B = 6,
    BL_PREF_MIN_ALIGNMENT_C = 7,
    BL_PREF_MIN_ALIGNMENT_D = 8,
};

/* cublasLtEpilogue_t: bits the library combines (BIAS | RELU, BIAS | GELU | AUX,
 * DGELU | BGRAD).  AUX: a second matrix, the GELU's input (RELU | AUX would store a bit
 * mask, which no graph asks for).  DGELU (64 | 128) multiplies the product by the tanh
 * gelu's derivative at that matrix; BGRAD sums D's rows into the bias pointer; BGRADA /
 * BGRADB sum op(A) / op(B) over k into it. */
enum {
    BL_EPILOGUE_DEFAULT = 1,
    BL_EPILOGUE_RELU = 2,
    BL_EPILOGUE_BIAS = 4,
    BL_EPILOGUE_BGRAD = 16,
    BL_EPILOGUE_GELU = 32, /* the tanh approximation: see blaslt_epilogue.c */
    BL_EPILOGUE_AUX = 128,
    BL_EPILOGUE_DGELU = 192,
    BL_EPILOGUE_BGRADA = 256,
    BL_EPILOGUE_BGRADB = 512,
};

/* cublasLtMatmulAlgo_t: opaque to us, copied by value */
typedef struct {
    uint64_t data[8];
} bl_algo;

/* cublasLtMatmulHeuristicResult_t */
typedef struct {
    bl_algo algo;
    size_t workspace_size;
    bl_status state;
    float waves_count;
    int reserved[4];
} bl_heuristic;

/* The functions, resolved by name from the library (blaslt_load.c).  get_status_name is
 * optional (cuBLASLt 11.4 added it): NULL where the library lacks it. */
typedef struct {
    size_t (*get_version)(void);
    const char* (*get_status_name)(bl_status);
    bl_status (*create)(bl_lt*);
    bl_status (*destroy)(bl_lt);
    bl_status (*desc_create)(bl_desc*, int32_t compute_type, int32_t scale_type);
    bl_status (*desc_destroy)(bl_desc);
    bl_status (*desc_set)(bl_desc, int attr, const void* value, size_t size);
    bl_status (*layout_create)(bl_layout*, int32_t type, uint64_t rows, uint64_t cols,
                               int64_t ld);
    bl_status (*layout_destroy)(bl_layout);
    bl_status (*layout_set)(bl_layout, int attr, const void* value, size_t size);
    bl_status (*pref_create)(bl_pref*);
    bl_status (*pref_destroy)(bl_pref);
    bl_status (*pref_set)(bl_pref, int attr, const void* value, size_t size);
    bl_status (*heuristic)(bl_lt, bl_desc, bl_layout a, bl_layout b, bl_layout c, bl_layout d,
                           bl_pref, int requested, bl_heuristic* results, int* returned);
    bl_status (*matmul)(bl_lt, bl_desc, const void* alpha, const void* a, bl_layout a_layout,
                        const void* b, bl_layout b_layout, const void* beta, const void* c,
                        bl_layout c_layout, void* d, bl_layout d_layout, const bl_algo* algo,
                        void* workspace, size_t workspace_size, void* stream);
} bl_lt_api;

/* ---- the CUDA driver: a device, and its primary context made current --------------------- */

typedef void* bl_cu_context; /* CUcontext (the SDK opens the driver: hipdnn_sdk_vendor.h) */

#endif
