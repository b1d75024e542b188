/* cudnn_api.h — the part of cuDNN's backend graph API (and of the CUDA driver API) the
 * cudnn engine calls, declared here so that the plugin builds without NVIDIA's headers and
 * opens the libraries at run time.  Types are the libraries' own, spelled our way; every
 * enum value is fixed by cuDNN's ABI (the backend API's numbers have not changed since
 * cuDNN 8.0; the library opened must be 9.0 or newer, see cudnn_load.c), so a value here
 * must never change.
 *
 * hipdnn's data types, pointwise modes and convolution modes have cuDNN's numbers by
 * design (hipdnn.h), so those are passed through unchanged and not repeated here. */
#ifndef HIPDNN_CUDNN_API_H
#define HIPDNN_CUDNN_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef int cd_status;                     /* cudnnStatus_t */
typedef struct cd_cudnn_context* cd_handle; /* cudnnHandle_t */
typedef struct cd_backend_desc* cd_desc;   /* cudnnBackendDescriptor_t */

enum { CD_STATUS_SUCCESS = 0 };

/* cudnnBackendDescriptorType_t */
enum {
    CD_POINTWISE_DESCRIPTOR = 0,
    CD_CONVOLUTION_DESCRIPTOR = 1,
    CD_ENGINE_DESCRIPTOR = 2,
    CD_ENGINECFG_DESCRIPTOR = 3,
    CD_ENGINEHEUR_DESCRIPTOR = 4,
    CD_EXECUTION_PLAN_DESCRIPTOR = 5,
    CD_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR = 10,
    CD_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR = 11,
    CD_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR = 12,
    CD_OPERATION_POINTWISE_DESCRIPTOR = 13,
    CD_OPERATIONGRAPH_DESCRIPTOR = 15,
    CD_VARIANT_PACK_DESCRIPTOR = 16,
    CD_TENSOR_DESCRIPTOR = 17,
    CD_MATMUL_DESCRIPTOR = 18,
    CD_OPERATION_MATMUL_DESCRIPTOR = 19,
    CD_REDUCTION_DESCRIPTOR = 21,
    CD_OPERATION_REDUCTION_DESCRIPTOR = 22,
    CD_OPERATION_NORM_FORWARD_DESCRIPTOR = 29,
    CD_OPERATION_NORM_BACKWARD_DESCRIPTOR = 30,
    CD_OPERATION_RESHAPE_DESCRIPTOR = 31,
};

/* cudnnBackendAttributeType_t */
enum {
    CD_TYPE_HANDLE = 0,
    CD_TYPE_DATA_TYPE = 1,
    CD_TYPE_BOOLEAN = 2, /* C bool */
    CD_TYPE_INT64 = 3,
    CD_TYPE_FLOAT = 4,
    CD_TYPE_DOUBLE = 5,
    CD_TYPE_VOID_PTR = 6,
    CD_TYPE_CONVOLUTION_MODE = 7,
    CD_TYPE_HEUR_MODE = 8,
    CD_TYPE_NUMERICAL_NOTE = 11,
    CD_TYPE_POINTWISE_MODE = 14,
    CD_TYPE_BACKEND_DESCRIPTOR = 15,
    CD_TYPE_REDUCTION_OPERATOR_TYPE = 18, /* hipdnn's reduction modes have cuDNN's numbers */
    CD_TYPE_NORM_MODE = 27,      /* hipdnn's norm modes have cuDNN's numbers */
    CD_TYPE_NORM_FWD_PHASE = 28, /* and its forward phases */
};

/* cudnnBackendAttributeName_t, by descriptor */
enum {
    CD_ATTR_POINTWISE_MODE = 0,
    CD_ATTR_POINTWISE_MATH_PREC = 1,
    CD_ATTR_POINTWISE_RELU_LOWER_CLIP = 3,
    CD_ATTR_POINTWISE_RELU_UPPER_CLIP = 4,
    CD_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE = 5,
    CD_ATTR_POINTWISE_ELU_ALPHA = 6,
    CD_ATTR_POINTWISE_SOFTPLUS_BETA = 7,
    CD_ATTR_POINTWISE_SWISH_BETA = 8,
    CD_ATTR_POINTWISE_AXIS = 9,

    CD_ATTR_CONVOLUTION_COMP_TYPE = 100,
    CD_ATTR_CONVOLUTION_CONV_MODE = 101,
    CD_ATTR_CONVOLUTION_DILATIONS = 102,
    CD_ATTR_CONVOLUTION_FILTER_STRIDES = 103,
    CD_ATTR_CONVOLUTION_POST_PADDINGS = 104,
    CD_ATTR_CONVOLUTION_PRE_PADDINGS = 105,
    CD_ATTR_CONVOLUTION_SPATIAL_DIMS = 106,

    CD_ATTR_ENGINEHEUR_MODE = 200,
    CD_ATTR_ENGINEHEUR_OPERATION_GRAPH = 201,
    CD_ATTR_ENGINEHEUR_RESULTS = 202,

    CD_ATTR_ENGINECFG_ENGINE = 300,

    CD_ATTR_EXECUTION_PLAN_HANDLE = 400,
    CD_ATTR_EXECUTION_PLAN_ENGINE_CONFIG = 401,
    CD_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE = 402,

    CD_ATTR_CONV_FWD_ALPHA = 700,
    CD_ATTR_CONV_FWD_BETA = 701,
    CD_ATTR_CONV_FWD_CONV_DESC = 702,
    CD_ATTR_CONV_FWD_W = 703,
    CD_ATTR_CONV_FWD_X = 704,
    CD_ATTR_CONV_FWD_Y = 705,
    CD_ATTR_CONV_BWD_DATA_ALPHA = 706,
    CD_ATTR_CONV_BWD_DATA_BETA = 707,
    CD_ATTR_CONV_BWD_DATA_CONV_DESC = 708,
    CD_ATTR_CONV_BWD_DATA_W = 709,
    CD_ATTR_CONV_BWD_DATA_DX = 710,
    CD_ATTR_CONV_BWD_DATA_DY = 711,
    CD_ATTR_CONV_BWD_FILTER_ALPHA = 712,
    CD_ATTR_CONV_BWD_FILTER_BETA = 713,
    CD_ATTR_CONV_BWD_FILTER_CONV_DESC = 714,
    CD_ATTR_CONV_BWD_FILTER_DW = 715,
    CD_ATTR_CONV_BWD_FILTER_X = 716,
    CD_ATTR_CONV_BWD_FILTER_DY = 717,

    CD_ATTR_OP_POINTWISE_PW_DESCRIPTOR = 750,
    CD_ATTR_OP_POINTWISE_XDESC = 751,
    CD_ATTR_OP_POINTWISE_BDESC = 752,
    CD_ATTR_OP_POINTWISE_YDESC = 753,
    CD_ATTR_OP_POINTWISE_DXDESC = 756,
    CD_ATTR_OP_POINTWISE_DYDESC = 757,
    CD_ATTR_OP_POINTWISE_TDESC = 758,

    CD_ATTR_OPERATIONGRAPH_HANDLE = 800,
    CD_ATTR_OPERATIONGRAPH_OPS = 801,

    CD_ATTR_TENSOR_BYTE_ALIGNMENT = 900,
    CD_ATTR_TENSOR_DATA_TYPE = 901,
    CD_ATTR_TENSOR_DIMENSIONS = 902,
    CD_ATTR_TENSOR_STRIDES = 903,
    CD_ATTR_TENSOR_UNIQUE_ID = 906,
    CD_ATTR_TENSOR_IS_VIRTUAL = 907,
    CD_ATTR_TENSOR_IS_BY_VALUE = 908,

    CD_ATTR_VARIANT_PACK_UNIQUE_IDS = 1000,
    CD_ATTR_VARIANT_PACK_DATA_POINTERS = 1001,
    CD_ATTR_VARIANT_PACK_WORKSPACE = 1003,

    CD_ATTR_ENGINE_GLOBAL_INDEX = 1301,
    CD_ATTR_ENGINE_NUMERICAL_NOTE = 1303,

    CD_ATTR_MATMUL_COMP_TYPE = 1500,
    CD_ATTR_OP_MATMUL_ADESC = 1520,
    CD_ATTR_OP_MATMUL_BDESC = 1521,
    CD_ATTR_OP_MATMUL_CDESC = 1522,
    CD_ATTR_OP_MATMUL_DESC = 1523,

    CD_ATTR_REDUCTION_OPERATOR = 1600,
    CD_ATTR_REDUCTION_COMP_TYPE = 1601,
    CD_ATTR_OP_REDUCTION_XDESC = 1610,
    CD_ATTR_OP_REDUCTION_YDESC = 1611,
    CD_ATTR_OP_REDUCTION_DESC = 1612,

    CD_ATTR_NORM_FWD_MODE = 2000,
    CD_ATTR_NORM_FWD_PHASE = 2001,
    CD_ATTR_NORM_FWD_XDESC = 2002,
    CD_ATTR_NORM_FWD_MEAN_DESC = 2003,
    CD_ATTR_NORM_FWD_INV_VARIANCE_DESC = 2004,
    CD_ATTR_NORM_FWD_SCALE_DESC = 2005,
    CD_ATTR_NORM_FWD_BIAS_DESC = 2006,
    CD_ATTR_NORM_FWD_EPSILON_DESC = 2007,
    CD_ATTR_NORM_FWD_EXP_AVG_FACTOR_DESC = 2008,
    CD_ATTR_NORM_FWD_INPUT_RUNNING_MEAN_DESC = 2009,
    CD_ATTR_NORM_FWD_INPUT_RUNNING_VAR_DESC = 2010,
    CD_ATTR_NORM_FWD_OUTPUT_RUNNING_MEAN_DESC = 2011,
    CD_ATTR_NORM_FWD_OUTPUT_RUNNING_VAR_DESC = 2012,
    CD_ATTR_NORM_FWD_YDESC = 2013,
    CD_ATTR_NORM_BWD_MODE = 2100,
    CD_ATTR_NORM_BWD_XDESC = 2101,
    CD_ATTR_NORM_BWD_MEAN_DESC = 2102,
    CD_ATTR_NORM_BWD_INV_VARIANCE_DESC = 2103,
    CD_ATTR_NORM_BWD_DYDESC = 2104,
    CD_ATTR_NORM_BWD_SCALE_DESC = 2105,
    CD_ATTR_NORM_BWD_DSCALE_DESC = 2107,
    CD_ATTR_NORM_BWD_DBIAS_DESC = 2108,
    CD_ATTR_NORM_BWD_DXDESC = 2109,

    CD_ATTR_OP_RESHAPE_XDESC = 2200,
    CD_ATTR_OP_RESHAPE_YDESC = 2201,
};

/* cudnnBackendHeurMode_t: A is the one cuDNN frontend uses by default, FALLBACK its
 * second list */
enum { CD_HEUR_MODE_FALLBACK = 2, CD_HEUR_MODE_A = 3 };
/* cudnnBackendNumericalNote_t: the notes of an engine that reads fp32 as TF32 or fp16 */
enum { CD_NUMERICAL_NOTE_TENSOR_CORE = 0, CD_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS = 1 };

/* The functions, resolved by name from libcudnn.so.9 (cudnn_load.c).  get_last_error is
 * cuDNN 9's cudnnGetLastErrorString: the calling thread's message for its last failure. */
typedef struct {
    size_t (*get_version)(void);
    const char* (*get_error_string)(cd_status);
    void (*get_last_error)(char* message, size_t max_size);
    cd_status (*create)(cd_handle*);
    cd_status (*destroy)(cd_handle);
    cd_status (*set_stream)(cd_handle, void* stream);
    cd_status (*create_descriptor)(int type, cd_desc*);
    cd_status (*destroy_descriptor)(cd_desc);
    cd_status (*finalize)(cd_desc);
    cd_status (*set_attribute)(cd_desc, int name, int type, int64_t count, const void* values);
    cd_status (*get_attribute)(cd_desc, int name, int type, int64_t requested, int64_t* count,
                               void* values);
    cd_status (*execute)(cd_handle, cd_desc plan, cd_desc variant_pack);
} cd_api;

/* ---- the CUDA driver: a device, and its primary context made current --------------------- */

typedef void* cd_cu_context; /* CUcontext (the SDK opens the driver: hipdnn_sdk_vendor.h) */

#endif
