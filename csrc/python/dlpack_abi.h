/* dlpack_abi.h — the DLPack ABI (https://dmlc.github.io/dlpack/latest/c_api.html), written
 * from its specification for what we export and import: DLManagedTensorVersioned (1.x,
 * capsule "dltensor_versioned") and the older DLManagedTensor (capsule "dltensor").
 * Strides are in elements; NULL strides mean compact row-major.  A consumer that takes
 * ownership renames the capsule to "used_dltensor[_versioned]" and calls the deleter
 * when done; a capsule destroyed unconsumed calls the deleter itself. */
#ifndef HIPDNN_PY_DLPACK_ABI_H
#define HIPDNN_PY_DLPACK_ABI_H

#include <stdint.h>

enum { /* DLDeviceType */
    HD_DL_CPU = 1,
    HD_DL_CUDA = 2,
    HD_DL_CUDA_HOST = 3, /* pinned host memory */
    HD_DL_ROCM = 10,
    HD_DL_ROCM_HOST = 11,
    HD_DL_CUDA_MANAGED = 13,
};

enum { /* DLDataTypeCode */
    HD_DL_INT = 0,
    HD_DL_UINT = 1,
    HD_DL_FLOAT = 2,
    HD_DL_BFLOAT = 4,
    HD_DL_BOOL = 6,
    HD_DL_FLOAT8_E4M3FN = 10, /* DLPack 1.1: OCP fp8, torch.float8_e4m3fn */
    HD_DL_FLOAT8_E5M2 = 12,   /* torch.float8_e5m2 */
};

#define HD_DL_FLAG_READ_ONLY (UINT64_C(1) << 0)
#define HD_DL_FLAG_IS_COPIED (UINT64_C(1) << 1)
#define HD_DL_MAJOR 1
#define HD_DL_MINOR 0

typedef struct {
    int32_t device_type;
    int32_t device_id;
} hd_DLDevice;

typedef struct {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} hd_DLDataType;

typedef struct {
    void* data;
    hd_DLDevice device;
    int32_t ndim;
    hd_DLDataType dtype;
    int64_t* shape;
    int64_t* strides; /* elements; NULL: compact row-major */
    uint64_t byte_offset;
} hd_DLTensor;

typedef struct hd_DLManagedTensor {
    hd_DLTensor dl_tensor;
    void* manager_ctx;
    void (*deleter)(struct hd_DLManagedTensor* self);
} hd_DLManagedTensor;

typedef struct {
    uint32_t major;
    uint32_t minor;
} hd_DLPackVersion;

typedef struct hd_DLManagedTensorVersioned {
    hd_DLPackVersion version;
    void* manager_ctx;
    void (*deleter)(struct hd_DLManagedTensorVersioned* self);
    uint64_t flags;
    hd_DLTensor dl_tensor;
} hd_DLManagedTensorVersioned;

#endif
