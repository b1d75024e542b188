/* hipdnn.h — the backend C API.
 *
 * Descriptor based, as hipDNN and cuDNN's backend API are: a graph is built from
 * descriptors whose attributes are set one by one, then finalized.  New operations add
 * descriptor types and attributes, never new functions.
 *
 * Conventions for every function below:
 *   - it returns a hipdnnStatus_t; on any status other than HIPDNN_STATUS_SUCCESS the
 *     calling thread's last-error string (hipdnnGetLastErrorString) says what was wrong
 *     and where, e.g. "conv_fprop 'conv1': weight C=3 does not divide image C=8";
 *   - objects are opaque handles with one owner and one destroy function; destroying
 *     NULL is a no-op;
 *   - a descriptor may be used from one thread at a time; distinct descriptors and
 *     handles may be used concurrently.  hipdnnBackendExecute may run concurrently on
 *     distinct handles;
 *   - fork() is safe while other threads run hipdnn calls: it waits for plugin loading and
 *     calls in flight, and the child can use every handle, descriptor and plan it inherited
 *     and make new ones (host engines; a GPU runtime has rules of its own about fork);
 *   - linked through libhipdnn_dynamic.a (hipdnn::hipdnn_dynamic, docs/linking.md), the
 *     first call loads libhipdnn_backend.so, once per process.  When no compatible backend
 *     loads, every function returning a status gives HIPDNN_STATUS_NOT_INITIALIZED, the
 *     last-error functions name each path searched and what was found there,
 *     hipdnnGetErrorString still names statuses, and hipdnnVersionString_ext gives "". */
#ifndef HIPDNN_H
#define HIPDNN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Predefined empty by code that defines these functions without exporting them (the stubs
 * of libhipdnn_dynamic.a, docs/linking.md). */
#ifndef HIPDNN_EXPORT
#if defined(_WIN32)
#define HIPDNN_EXPORT __declspec(dllexport)
#else
#define HIPDNN_EXPORT __attribute__((visibility("default")))
#endif
#endif

/* The project's version (CMakeLists.txt and the reference engine take it from here;
 * pyproject.toml repeats it, tests/test_public_api.py checks). */
#define HIPDNN_VERSION_MAJOR 0
#define HIPDNN_VERSION_MINOR 2
#define HIPDNN_VERSION_PATCH 0

#define HIPDNN_MAX_DIMS 8    /* the largest tensor rank a graph may use */
#define HIPDNN_MAX_SPATIAL 6 /* ... and the most spatial dims */

/* Numbering.  Every enum below takes its values from AMD hipDNN's public backend headers
 * (hipdnn_backend.h and the headers it includes), which themselves follow cuDNN.  Where
 * hipDNN has no such name (per-operation descriptors and attributes, tensor attributes,
 * pointwise and convolution modes) the name is cuDNN's and the value is cuDNN's value plus
 * an offset that keeps it clear of hipDNN's ranges: descriptor types +100, attribute names
 * +10000.  hipdnn's own additions end in _EXT and are numbered from 20000 (attributes) or
 * 200 (descriptor types, attribute types), so no value ever changes meaning. */

typedef enum {
    HIPDNN_STATUS_SUCCESS = 0,
    HIPDNN_STATUS_NOT_INITIALIZED = 1,
    HIPDNN_STATUS_BAD_PARAM = 2,              /* class: a wrong value or argument */
    HIPDNN_STATUS_BAD_PARAM_NULL_POINTER = 3,
    HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED = 4,
    HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND = 5,
    HIPDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT = 6, /* a buffer or workspace is too small */
    HIPDNN_STATUS_BAD_PARAM_STREAM_MISMATCH = 7,   /* stream of another device or handle */
    HIPDNN_STATUS_NOT_SUPPORTED = 8,          /* class: valid, but nothing here runs it */
    HIPDNN_STATUS_INTERNAL_ERROR = 9,         /* class */
    HIPDNN_STATUS_ALLOC_FAILED = 10,
    HIPDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED = 11,
    HIPDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED = 12,
    HIPDNN_STATUS_EXECUTION_FAILED = 13,      /* class: an engine failed while running */
    HIPDNN_STATUS_PLUGIN_ERROR = 14,          /* an engine plugin failed or none loaded */
} hipdnnStatus_t;
#define HIPDNN_STATUS_PLUGIN_ERROR_EXT HIPDNN_STATUS_PLUGIN_ERROR /* its old name (then 200) */

/* Values follow cuDNN's cudnnDataType_t so that code and serialized numbers port. */
typedef enum {
    HIPDNN_DATA_FLOAT = 0,
    HIPDNN_DATA_DOUBLE = 1,
    HIPDNN_DATA_HALF = 2,
    HIPDNN_DATA_INT8 = 3,
    HIPDNN_DATA_INT32 = 4,
    HIPDNN_DATA_UINT8 = 6,
    HIPDNN_DATA_BFLOAT16 = 9,
    HIPDNN_DATA_INT64 = 10,
    HIPDNN_DATA_BOOLEAN = 11, /* one byte, 0 or 1 */
    HIPDNN_DATA_FP8_E4M3 = 12, /* the fp8 and fp4 types are named for code written for */
    HIPDNN_DATA_FP8_E5M2 = 13, /* cuDNN; no engine runs them yet (a graph using one is */
    HIPDNN_DATA_FP8_E8M0 = 15, /* declined with the reason) */
    HIPDNN_DATA_FP4_E2M1 = 16, /* a byte an element here; cuDNN packs two */
    HIPDNN_DATA_NOT_SET = 127,
} hipdnnDataType_t;

/* cuDNN's cudnnPointwiseMode_t values. */
typedef enum {
    HIPDNN_POINTWISE_ADD = 0,
    HIPDNN_POINTWISE_MUL = 1,
    HIPDNN_POINTWISE_MIN = 2,
    HIPDNN_POINTWISE_MAX = 3,
    HIPDNN_POINTWISE_SQRT = 4,
    HIPDNN_POINTWISE_ADD_SQUARE = 5,
    HIPDNN_POINTWISE_DIV = 6,
    HIPDNN_POINTWISE_MOD = 7,
    HIPDNN_POINTWISE_POW = 8,
    HIPDNN_POINTWISE_SUB = 9,
    HIPDNN_POINTWISE_ABS = 10,
    HIPDNN_POINTWISE_CEIL = 11,
    HIPDNN_POINTWISE_COS = 12,
    HIPDNN_POINTWISE_EXP = 13,
    HIPDNN_POINTWISE_FLOOR = 14,
    HIPDNN_POINTWISE_LOG = 15,
    HIPDNN_POINTWISE_NEG = 16,
    HIPDNN_POINTWISE_RSQRT = 17,
    HIPDNN_POINTWISE_SIN = 18,
    HIPDNN_POINTWISE_TAN = 19,
    HIPDNN_POINTWISE_ERF = 20,
    HIPDNN_POINTWISE_IDENTITY = 21,
    HIPDNN_POINTWISE_RECIPROCAL = 22,
    HIPDNN_POINTWISE_ATAN2 = 23,
    HIPDNN_POINTWISE_RELU_FWD = 100,
    HIPDNN_POINTWISE_TANH_FWD = 101,
    HIPDNN_POINTWISE_SIGMOID_FWD = 102,
    HIPDNN_POINTWISE_ELU_FWD = 103,
    HIPDNN_POINTWISE_GELU_FWD = 104,
    HIPDNN_POINTWISE_SOFTPLUS_FWD = 105,
    HIPDNN_POINTWISE_SWISH_FWD = 106,
    HIPDNN_POINTWISE_GELU_APPROX_TANH_FWD = 107,
    HIPDNN_POINTWISE_RELU_BWD = 200,
    HIPDNN_POINTWISE_TANH_BWD = 201,
    HIPDNN_POINTWISE_SIGMOID_BWD = 202,
    HIPDNN_POINTWISE_ELU_BWD = 203,
    HIPDNN_POINTWISE_GELU_BWD = 204,
    HIPDNN_POINTWISE_SOFTPLUS_BWD = 205,
    HIPDNN_POINTWISE_SWISH_BWD = 206,
    HIPDNN_POINTWISE_GELU_APPROX_TANH_BWD = 207,
    HIPDNN_POINTWISE_CMP_EQ = 300,
    HIPDNN_POINTWISE_CMP_NEQ = 301,
    HIPDNN_POINTWISE_CMP_GT = 302,
    HIPDNN_POINTWISE_CMP_GE = 303,
    HIPDNN_POINTWISE_CMP_LT = 304,
    HIPDNN_POINTWISE_CMP_LE = 305,
    HIPDNN_POINTWISE_LOGICAL_AND = 400,
    HIPDNN_POINTWISE_LOGICAL_OR = 401,
    HIPDNN_POINTWISE_LOGICAL_NOT = 402,
    HIPDNN_POINTWISE_GEN_INDEX = 501,
    HIPDNN_POINTWISE_BINARY_SELECT = 601,
} hipdnnPointwiseMode_t;

/* cuDNN's cudnnReduceTensorOp_t values: what a reduction combines its values with. */
typedef enum {
    HIPDNN_REDUCE_TENSOR_ADD = 0,
    HIPDNN_REDUCE_TENSOR_MUL = 1,
    HIPDNN_REDUCE_TENSOR_MIN = 2,
    HIPDNN_REDUCE_TENSOR_MAX = 3,
    HIPDNN_REDUCE_TENSOR_AMAX = 4,         /* max of |x| */
    HIPDNN_REDUCE_TENSOR_AVG = 5,
    HIPDNN_REDUCE_TENSOR_NORM1 = 6,        /* sum of |x| */
    HIPDNN_REDUCE_TENSOR_NORM2 = 7,        /* sqrt of the sum of x^2 */
    HIPDNN_REDUCE_TENSOR_MUL_NO_ZEROS = 8, /* product of the nonzero values (1 if none) */
} hipdnnReduceTensorOp_t;

/* cuDNN's cudnnBackendNormMode_t values: which statistics a NORM_FORWARD takes. */
typedef enum {
    HIPDNN_LAYER_NORM = 0,     /* per sample, over the dims scale spans */
    HIPDNN_INSTANCE_NORM = 1,  /* per sample and channel, over the spatial dims */
    HIPDNN_BATCH_NORM = 2,     /* per channel, over batch and spatial dims */
    HIPDNN_GROUP_NORM = 3,     /* reserved: not run yet */
    HIPDNN_RMS_NORM = 4,       /* as LAYER_NORM without the mean */
    HIPDNN_ADA_LAYER_NORM = 5, /* LAYER_NORM with per-sample scale and bias */
} hipdnnBackendNormMode_t;

/* cuDNN's cudnnBackendNormFwdPhase_t values. */
typedef enum {
    HIPDNN_NORM_FWD_INFERENCE = 0, /* y only */
    HIPDNN_NORM_FWD_TRAINING = 1,  /* y plus the statistics (and running stats for BATCH) */
} hipdnnBackendNormFwdPhase_t;

/* Where the band of an attention mask is anchored (cuDNN frontend's DiagonalAlignment_t):
 * query row i sits at key column i (TOP_LEFT) or at i + S_kv - S_q (BOTTOM_RIGHT, the
 * lengths of each sample with a padding mask). */
typedef enum {
    HIPDNN_DIAGONAL_ALIGNMENT_TOP_LEFT = 0,
    HIPDNN_DIAGONAL_ALIGNMENT_BOTTOM_RIGHT = 1,
} hipdnnDiagonalAlignment_t;

/* cuDNN's cudnnGenStatsMode_t: what OPERATION_GEN_STATS computes. */
typedef enum {
    HIPDNN_GENSTATS_SUM_SQSUM = 0, /* per channel: sum of x and sum of x^2 */
} hipdnnGenStatsMode_t;

/* cuDNN's cudnnResampleMode_t values: what OPERATION_RESAMPLE_FWD / _BWD compute over each
 * window.  hipdnn runs the pooling modes; NEAREST and BILINEAR are declined. */
typedef enum {
    HIPDNN_RESAMPLE_NEAREST = 0,
    HIPDNN_RESAMPLE_BILINEAR = 1,
    HIPDNN_RESAMPLE_AVGPOOL = 2,                 /* the same as INCLUDE_PADDING */
    HIPDNN_RESAMPLE_AVGPOOL_INCLUDE_PADDING = 2, /* sum / window positions (padding counts) */
    HIPDNN_RESAMPLE_MAXPOOL = 3,
    HIPDNN_RESAMPLE_AVGPOOL_EXCLUDE_PADDING = 4, /* sum / the window's positions inside x */
} hipdnnResampleMode_t;

/* cuDNN's cudnnPaddingMode_t values: what a resample window reads in the padding. */
typedef enum {
    HIPDNN_ZERO_PAD = 0,     /* 0 */
    HIPDNN_NEG_INF_PAD = 1,  /* nothing: padding never wins a max */
    HIPDNN_EDGE_VAL_PAD = 2, /* the nearest edge value (for NEAREST / BILINEAR; declined) */
} hipdnnPaddingMode_t;

/* How OPERATION_RESHAPE maps x onto y (cuDNN 9.22's reshape modes; values hipdnn's). */
typedef enum {
    HIPDNN_RESHAPE_VIEW_ONLY = 0, /* y's dims and strides describe x's memory, unchanged */
    HIPDNN_RESHAPE_LOGICAL = 1,   /* y = x in row-major logical order, as NumPy's reshape */
} hipdnnReshapeMode_t;

typedef enum {
    HIPDNN_CONVOLUTION = 0,       /* true convolution: the filter is flipped (cuDNN's 0) */
    HIPDNN_CROSS_CORRELATION = 1, /* what deep-learning frameworks call convolution */
} hipdnnConvolutionMode_t;

typedef enum {
    HIPDNN_HEUR_MODE_FALLBACK = 0, /* only engines flagged as fallback (hipDNN's 0) */
    HIPDNN_HEUR_MODE_B = 1,        /* device engines strictly first, then as A (cuDNN's 1) */
    HIPDNN_HEUR_MODE_A = 3,        /* fast: rank by each engine's declared priority (cuDNN's 3) */
} hipdnnBackendHeurMode_t;

/* Where a buffer lives, as the caller knows it (buffer protocol: HOST; DLPack kDLCUDA or
 * kDLROCM, __cuda_array_interface__: DEVICE; kDLCUDAManaged: MANAGED). */
typedef enum {
    HIPDNN_MEMORY_HOST = 0,
    HIPDNN_MEMORY_DEVICE = 1,
    HIPDNN_MEMORY_MANAGED = 2, /* usable from host and device */
} hipdnnMemorySpace_t;

typedef enum {
    HIPDNN_INVALID_TYPE = 0,
    HIPDNN_BACKEND_ENGINE_DESCRIPTOR = 1,
    HIPDNN_BACKEND_ENGINECFG_DESCRIPTOR = 2,
    HIPDNN_BACKEND_ENGINEHEUR_DESCRIPTOR = 3,
    HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR = 4,
    HIPDNN_BACKEND_INTERMEDIATE_INFO_DESCRIPTOR = 5, /* reserved */
    HIPDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR = 6,
    HIPDNN_BACKEND_KNOB_INFO_DESCRIPTOR = 7,         /* reserved */
    HIPDNN_BACKEND_LAYOUT_INFO_DESCRIPTOR = 8,       /* reserved */
    HIPDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR = 9, /* hipDNN's number (cuDNN's is 14) */
    HIPDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR = 10,
    HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR = 11,
    /* cuDNN's value + 100 */
    HIPDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR = 110,
    HIPDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR = 111,
    HIPDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR = 112,
    HIPDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR = 113,
    HIPDNN_BACKEND_TENSOR_DESCRIPTOR = 117,
    HIPDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR = 119,
    HIPDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR = 122,
    HIPDNN_BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR = 125,
    HIPDNN_BACKEND_OPERATION_RESAMPLE_BWD_DESCRIPTOR = 126,
    HIPDNN_BACKEND_OPERATION_CONCAT_DESCRIPTOR = 127,
    HIPDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR = 129,
    HIPDNN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR = 130,
    HIPDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR = 131,
    /* hipdnn's own (hipDNN's graph has the node; cuDNN spells it as a NORM_FORWARD mode) */
    HIPDNN_BACKEND_OPERATION_BATCHNORM_INFERENCE_DESCRIPTOR_EXT = 200,
    /* cuDNN frontend's slice (its backend has no op: the frontend makes a view) */
    HIPDNN_BACKEND_OPERATION_SLICE_DESCRIPTOR_EXT = 201,
    /* scaled dot-product attention as one node (cuDNN's frontend lowers it to many) */
    HIPDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR_EXT = 210,
    HIPDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR_EXT = 211,
} hipdnnBackendDescriptorType_t;

/* The C type behind an attribute's values (hipDNN's numbering). */
typedef enum {
    HIPDNN_TYPE_HANDLE = 0,             /* hipdnnHandle_t */
    HIPDNN_TYPE_DATA_TYPE = 1,          /* hipdnnDataType_t */
    HIPDNN_TYPE_BOOLEAN = 2,            /* bool (one byte), as cuDNN; any nonzero byte is true */
    HIPDNN_TYPE_INT64 = 3,              /* int64_t */
    HIPDNN_TYPE_FLOAT = 4,              /* float */
    HIPDNN_TYPE_DOUBLE = 5,             /* double */
    HIPDNN_TYPE_VOID_PTR = 6,           /* void* */
    HIPDNN_TYPE_HEUR_MODE = 7,          /* hipdnnBackendHeurMode_t */
    HIPDNN_TYPE_BACKEND_DESCRIPTOR = 13, /* hipdnnBackendDescriptor_t */
    HIPDNN_TYPE_INT32 = 18,             /* int32_t */
    HIPDNN_TYPE_CHAR = 19,              /* char; count includes no terminator */
    HIPDNN_TYPE_POINTWISE_MODE_EXT = 200,    /* hipdnnPointwiseMode_t (cuDNN has one) */
    HIPDNN_TYPE_CONVOLUTION_MODE_EXT = 201,  /* hipdnnConvolutionMode_t (cuDNN has one) */
    HIPDNN_TYPE_UINT8_EXT = 202,             /* uint8_t, raw bytes */
    HIPDNN_TYPE_REDUCTION_OPERATOR_TYPE_EXT = 203, /* hipdnnReduceTensorOp_t (cuDNN has one) */
    HIPDNN_TYPE_NORM_MODE_EXT = 204,               /* hipdnnBackendNormMode_t (cuDNN has one) */
    HIPDNN_TYPE_NORM_FWD_PHASE_EXT = 205,          /* hipdnnBackendNormFwdPhase_t (cuDNN has one) */
    HIPDNN_TYPE_GENSTATS_MODE_EXT = 206,           /* hipdnnGenStatsMode_t (cuDNN has one) */
    HIPDNN_TYPE_RESAMPLE_MODE_EXT = 208,           /* hipdnnResampleMode_t (cuDNN has one) */
    HIPDNN_TYPE_PADDING_MODE_EXT = 209,            /* hipdnnPaddingMode_t (cuDNN has one) */
    HIPDNN_TYPE_RESHAPE_MODE_EXT = 210,            /* hipdnnReshapeMode_t */
    HIPDNN_TYPE_DIAGONAL_ALIGNMENT_EXT = 213,      /* hipdnnDiagonalAlignment_t */
} hipdnnBackendAttributeType_t;

typedef enum {
    /* ENGINEHEUR (hipDNN's numbers) */
    HIPDNN_ATTR_ENGINEHEUR_MODE = 100,            /* HEUR_MODE, 1 */
    HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH = 101, /* BACKEND_DESCRIPTOR (OPERATIONGRAPH) */
    /* get, after finalize: ranked ENGINECFG descriptors, new, destroyed by the caller */
    HIPDNN_ATTR_ENGINEHEUR_RESULTS = 102,

    /* ENGINECFG */
    HIPDNN_ATTR_ENGINECFG_ENGINE = 200,        /* BACKEND_DESCRIPTOR (ENGINE); get: new ref */
    HIPDNN_ATTR_ENGINECFG_KNOB_CHOICES = 202,  /* BACKEND_DESCRIPTOR (KNOB_CHOICE), n */

    /* EXECUTION_PLAN */
    HIPDNN_ATTR_EXECUTION_PLAN_HANDLE = 300,         /* HANDLE */
    HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG = 301,  /* BACKEND_DESCRIPTOR (ENGINECFG) */
    HIPDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE = 302, /* INT64, get */

    /* KNOB_CHOICE */
    HIPDNN_ATTR_KNOB_CHOICE_KNOB_TYPE = 500,  /* INT64: the engine's knob id */
    HIPDNN_ATTR_KNOB_CHOICE_KNOB_VALUE = 501, /* INT64 */

    /* OPERATIONGRAPH */
    HIPDNN_ATTR_OPERATIONGRAPH_HANDLE = 600,   /* HANDLE, 1; required: support checks run on it */
    /* BACKEND_DESCRIPTOR (OPERATION_*), n.  A deserialized graph gives new operation
     * descriptors, one per node, whose ports are TENSOR descriptors of its tensors. */
    HIPDNN_ATTR_OPERATIONGRAPH_OPS = 601,
    HIPDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT = 602, /* INT64, get: engines loaded */

    /* VARIANT_PACK */
    HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS = 700,    /* INT64, n */
    HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS = 701, /* VOID_PTR, n (same order as the ids) */
    HIPDNN_ATTR_VARIANT_PACK_WORKSPACE = 703,     /* VOID_PTR, 1 */

    /* ENGINE */
    HIPDNN_ATTR_ENGINE_OPERATION_GRAPH = 1000, /* BACKEND_DESCRIPTOR (OPERATIONGRAPH) */
    /* INT64: index into the loaded engines sorted by name, so it does not depend on the
     * order plugins were found in (stable while the same plugins load) */
    HIPDNN_ATTR_ENGINE_GLOBAL_INDEX = 1001,

    /* cuDNN's numbers + 10000 ------------------------------------------------------- */
    /* OPERATION_POINTWISE parameters (cuDNN keeps them on a POINTWISE descriptor; here they
     * are set on the operation itself) */
    HIPDNN_ATTR_POINTWISE_MODE = 10000,                /* POINTWISE_MODE_EXT, 1 */
    HIPDNN_ATTR_POINTWISE_RELU_LOWER_CLIP = 10003,     /* DOUBLE, 1; default 0 */
    HIPDNN_ATTR_POINTWISE_RELU_UPPER_CLIP = 10004,     /* DOUBLE, 1; default +inf */
    HIPDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE = 10005, /* DOUBLE, 1; default 0 (leaky) */
    HIPDNN_ATTR_POINTWISE_ELU_ALPHA = 10006,     /* DOUBLE, 1; default 1 (finite) */
    HIPDNN_ATTR_POINTWISE_SOFTPLUS_BETA = 10007, /* DOUBLE, 1; default 1 (finite, not 0) */
    HIPDNN_ATTR_POINTWISE_SWISH_BETA = 10008,    /* DOUBLE, 1; default 1 (finite) */
    HIPDNN_ATTR_POINTWISE_AXIS = 10009,          /* INT64, 1; default 0: GEN_INDEX's axis */
    /* OPERATION_CONVOLUTION_FORWARD parameters (likewise, cuDNN's CONVOLUTION descriptor) */
    HIPDNN_ATTR_CONVOLUTION_CONV_MODE = 10101,      /* CONVOLUTION_MODE_EXT, 1 */
    HIPDNN_ATTR_CONVOLUTION_DILATIONS = 10102,      /* INT64, spatial dims; default 1 */
    HIPDNN_ATTR_CONVOLUTION_FILTER_STRIDES = 10103, /* INT64, spatial dims; default 1 */
    HIPDNN_ATTR_CONVOLUTION_POST_PADDINGS = 10104,  /* INT64, spatial dims; default 0 */
    HIPDNN_ATTR_CONVOLUTION_PRE_PADDINGS = 10105,   /* INT64, spatial dims; default 0 */
    /* OPERATION_CONVOLUTION_FORWARD: y = conv(x, w) */
    HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W = 10703, /* BACKEND_DESCRIPTOR (TENSOR) */
    HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X = 10704, /* BACKEND_DESCRIPTOR (TENSOR) */
    HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y = 10705, /* BACKEND_DESCRIPTOR (TENSOR) */
    /* OPERATION_CONVOLUTION_BACKWARD_DATA: dx = the gradient of conv_fprop(x, w) = dy with
     * respect to x; OPERATION_CONVOLUTION_BACKWARD_FILTER: dw, with respect to w.  Both take
     * the CONVOLUTION_* parameters as conv_fprop does, and need their output's dims given
     * (stride and groups make them ambiguous otherwise), as cuDNN frontend does. */
    HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W = 10709,    /* BACKEND_DESCRIPTOR (TENSOR) */
    HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX = 10710,   /* BACKEND_DESCRIPTOR (TENSOR) */
    HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY = 10711,   /* BACKEND_DESCRIPTOR (TENSOR) */
    HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW = 10715, /* BACKEND_DESCRIPTOR (TENSOR) */
    HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X = 10716,  /* BACKEND_DESCRIPTOR (TENSOR) */
    HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY = 10717, /* BACKEND_DESCRIPTOR (TENSOR) */
    /* OPERATION_POINTWISE, with NumPy broadcasting of every input onto the output, as
     * cuDNN's backend lays out its ports: forward modes y = f(x [, b [, t]]) (BINARY_SELECT:
     * y = t ? x : b); the _BWD modes dx = dy * f'(x), no b, t or y.  Each mode's ports are
     * required, any other port set is an error. */
    HIPDNN_ATTR_OPERATION_POINTWISE_XDESC = 10751, /* BACKEND_DESCRIPTOR (TENSOR) */
    HIPDNN_ATTR_OPERATION_POINTWISE_BDESC = 10752, /* BACKEND_DESCRIPTOR (TENSOR), binary */
    HIPDNN_ATTR_OPERATION_POINTWISE_YDESC = 10753, /* BACKEND_DESCRIPTOR (TENSOR), forward */
    HIPDNN_ATTR_OPERATION_POINTWISE_DXDESC = 10756, /* BACKEND_DESCRIPTOR (TENSOR), _BWD out */
    HIPDNN_ATTR_OPERATION_POINTWISE_DYDESC = 10757, /* BACKEND_DESCRIPTOR (TENSOR), _BWD in */
    HIPDNN_ATTR_OPERATION_POINTWISE_TDESC = 10758,  /* BACKEND_DESCRIPTOR (TENSOR), the mask */
    /* TENSOR */
    HIPDNN_ATTR_TENSOR_BYTE_ALIGNMENT = 10900, /* INT64, 1; accepted for cuDNN parity */
    HIPDNN_ATTR_TENSOR_DATA_TYPE = 10901,      /* DATA_TYPE, 1; NOT_SET = infer */
    HIPDNN_ATTR_TENSOR_DIMENSIONS = 10902,     /* INT64, rank; unset = infer */
    HIPDNN_ATTR_TENSOR_STRIDES = 10903,        /* INT64, rank; unset = inferred (below) */
    HIPDNN_ATTR_TENSOR_UNIQUE_ID = 10906,      /* INT64, 1 */
    HIPDNN_ATTR_TENSOR_IS_VIRTUAL = 10907,     /* BOOLEAN, 1 */
    /* BOOLEAN, 1: a scalar; with TENSOR_VALUE_EXT a constant in the graph, else given at
     * execute time (the variant pack holds a host pointer to it, as in cuDNN). */
    HIPDNN_ATTR_TENSOR_IS_BY_VALUE = 10908,
    HIPDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC = 10913, /* BACKEND_DESCRIPTOR (TENSOR): sdpa's */
    /* Unset strides, as in cuDNN frontend: an op's output is packed in the dimension order
     * of its main input (conv x, pointwise x, batchnorm x) when the ranks match, so NHWC in
     * gives NHWC out; otherwise, and for graph inputs, packed row-major. */
    /* OPERATION_MATMUL: c = a @ b over the last two dims, batch dims broadcast */
    HIPDNN_ATTR_OPERATION_MATMUL_ADESC = 11520, /* BACKEND_DESCRIPTOR (TENSOR) */
    HIPDNN_ATTR_OPERATION_MATMUL_BDESC = 11521, /* BACKEND_DESCRIPTOR (TENSOR) */
    HIPDNN_ATTR_OPERATION_MATMUL_CDESC = 11522, /* BACKEND_DESCRIPTOR (TENSOR) */
    /* OPERATION_REDUCTION: y = x combined over every axis where y's dim is 1 and x's is
     * not (y's dims must be given).  cuDNN sets the operator on a REDUCTION descriptor;
     * here it is an attribute of the operation, as the pointwise mode is. */
    HIPDNN_ATTR_REDUCTION_OPERATOR = 11600,        /* REDUCTION_OPERATOR_TYPE_EXT, 1 */
    HIPDNN_ATTR_OPERATION_REDUCTION_XDESC = 11610, /* BACKEND_DESCRIPTOR (TENSOR) */
    HIPDNN_ATTR_OPERATION_REDUCTION_YDESC = 11611, /* BACKEND_DESCRIPTOR (TENSOR) */
    /* OPERATION_NORM_FORWARD: y = (x - mean) * inv_variance * scale + bias, the statistics
     * over the axes the mode names (docs/architecture.md, Normalization) */
    HIPDNN_ATTR_OPERATION_NORM_FWD_MODE = 12000,  /* NORM_MODE_EXT, 1 */
    HIPDNN_ATTR_OPERATION_NORM_FWD_PHASE = 12001, /* NORM_FWD_PHASE_EXT, 1 */
    HIPDNN_ATTR_OPERATION_NORM_FWD_XDESC = 12002,
    HIPDNN_ATTR_OPERATION_NORM_FWD_MEAN_DESC = 12003,         /* output (TRAINING) */
    HIPDNN_ATTR_OPERATION_NORM_FWD_INV_VARIANCE_DESC = 12004, /* output (TRAINING) */
    HIPDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC = 12005,
    HIPDNN_ATTR_OPERATION_NORM_FWD_BIAS_DESC = 12006,         /* optional */
    HIPDNN_ATTR_OPERATION_NORM_FWD_EPSILON_DESC = 12007,      /* one element */
    HIPDNN_ATTR_OPERATION_NORM_FWD_EXP_AVG_FACTOR_DESC = 12008,      /* BATCH: momentum */
    HIPDNN_ATTR_OPERATION_NORM_FWD_INPUT_RUNNING_MEAN_DESC = 12009,  /* BATCH */
    HIPDNN_ATTR_OPERATION_NORM_FWD_INPUT_RUNNING_VAR_DESC = 12010,   /* BATCH */
    HIPDNN_ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_MEAN_DESC = 12011, /* BATCH */
    HIPDNN_ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_VAR_DESC = 12012,  /* BATCH */
    HIPDNN_ATTR_OPERATION_NORM_FWD_YDESC = 12013,
    /* OPERATION_NORM_BACKWARD: dx, dscale and dbias of NORM_FORWARD's y from dy, x and the
     * forward's saved statistics (mean: not RMS; inv_variance); dscale and dbias are
     * dy (times x normalized, for dscale) summed over the dims scale broadcasts on.
     * No epsilon (the statistics are given) and no peer statistics. */
    HIPDNN_ATTR_OPERATION_NORM_BWD_MODE = 12100,              /* NORM_MODE_EXT, 1 */
    HIPDNN_ATTR_OPERATION_NORM_BWD_XDESC = 12101,
    HIPDNN_ATTR_OPERATION_NORM_BWD_MEAN_DESC = 12102,         /* not for RMS */
    HIPDNN_ATTR_OPERATION_NORM_BWD_INV_VARIANCE_DESC = 12103,
    HIPDNN_ATTR_OPERATION_NORM_BWD_DYDESC = 12104,
    HIPDNN_ATTR_OPERATION_NORM_BWD_SCALE_DESC = 12105,
    HIPDNN_ATTR_OPERATION_NORM_BWD_DSCALE_DESC = 12107,       /* optional output */
    HIPDNN_ATTR_OPERATION_NORM_BWD_DBIAS_DESC = 12108,        /* optional output */
    HIPDNN_ATTR_OPERATION_NORM_BWD_DXDESC = 12109,
    /* OPERATION_GEN_STATS: per-channel (dim 1) sum and sum of squares of x, each shaped
     * [1, C, 1, ...] */
    HIPDNN_ATTR_OPERATION_GENSTATS_MODE = 10770,      /* GENSTATS_MODE_EXT, 1; default SUM_SQSUM */
    HIPDNN_ATTR_OPERATION_GENSTATS_XDESC = 10772,
    HIPDNN_ATTR_OPERATION_GENSTATS_SUMDESC = 10773,
    HIPDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC = 10774,
    /* OPERATION_RESAMPLE_FWD parameters (cuDNN keeps them on a RESAMPLE descriptor, as
     * fractions; here they are set on the operation, as INT64 lists with one value per
     * spatial dim).  OPERATION_RESAMPLE_BWD takes the same ones, its forward's.  NaNs
     * always propagate (cuDNN's NAN_PROPAGATION is not taken). */
    HIPDNN_ATTR_RESAMPLE_MODE = 11700,          /* RESAMPLE_MODE_EXT, 1; required */
    HIPDNN_ATTR_RESAMPLE_POST_PADDINGS = 11703, /* INT64, spatial dims; default 0 */
    HIPDNN_ATTR_RESAMPLE_PRE_PADDINGS = 11704,  /* INT64, spatial dims; default 0 */
    HIPDNN_ATTR_RESAMPLE_STRIDES = 11705,       /* INT64, spatial dims; default 1 */
    HIPDNN_ATTR_RESAMPLE_WINDOW_DIMS = 11706,   /* INT64, spatial dims; required */
    HIPDNN_ATTR_RESAMPLE_PADDING_MODE = 11708,  /* PADDING_MODE_EXT, 1; required */
    /* OPERATION_RESAMPLE_FWD: y [N, C, out...] = each window of x [N, C, in...] pooled, out
     * = (in + pre + post - window) / stride + 1 rounded down (y's dims may be given rounded
     * up instead, as ceil-mode pooling: the last window then overhangs the padding and
     * reads only what lies inside it).  MAXPOOL may also write idx: the position of the
     * window's first maximum, row-major within the window (INT8 as cuDNN, or INT32 /
     * INT64). */
    HIPDNN_ATTR_OPERATION_RESAMPLE_FWD_XDESC = 11710,
    HIPDNN_ATTR_OPERATION_RESAMPLE_FWD_YDESC = 11711,
    HIPDNN_ATTR_OPERATION_RESAMPLE_FWD_IDXDESC = 11712, /* optional output, MAXPOOL */
    /* OPERATION_RESAMPLE_BWD: dx = the gradient of the forward's y with respect to x, from
     * dy: averaging modes spread dy over each window; MAXPOOL routes it to the window's
     * first maximum, read from idx or recomputed from x.  dx takes x's dims, or its own
     * given ones when x is not set.  y is accepted (cuDNN's port) and not read. */
    HIPDNN_ATTR_OPERATION_RESAMPLE_BWD_DXDESC = 11720,
    HIPDNN_ATTR_OPERATION_RESAMPLE_BWD_DYDESC = 11721,
    HIPDNN_ATTR_OPERATION_RESAMPLE_BWD_IDXDESC = 11722, /* optional, MAXPOOL */
    HIPDNN_ATTR_OPERATION_RESAMPLE_BWD_XDESC = 11726,   /* optional; MAXPOOL: idx or x */
    HIPDNN_ATTR_OPERATION_RESAMPLE_BWD_YDESC = 11727,   /* optional, not read */
    /* OPERATION_RESHAPE: y (its dims given, as many elements as x) = x re-described
     * (RESHAPE_MODE_EXT: VIEW_ONLY, the default, or LOGICAL).  A transpose is a VIEW_ONLY
     * reshape whose y has x's dims and strides permuted. */
    HIPDNN_ATTR_OPERATION_RESHAPE_XDESC = 12200,
    HIPDNN_ATTR_OPERATION_RESHAPE_YDESC = 12201,
    /* OPERATION_CONCAT: y = the inputs joined along `axis` (their other dims equal).  cuDNN
     * sets the inputs as one list attribute; here each is its own port
     * (OPERATION_CONCAT_INPUT_<i>_EXT, inputs 0 and 1 required, up to 8 in order). */
    HIPDNN_ATTR_OPERATION_CONCAT_AXIS = 11800,          /* INT64, 1 */
    HIPDNN_ATTR_OPERATION_CONCAT_INPLACE_INDEX = 11802, /* INT64, 1; default -1 (none) */
    HIPDNN_ATTR_OPERATION_CONCAT_OUTPUT_DESC = 11803,   /* BACKEND_DESCRIPTOR (TENSOR) */

    /* hipdnn's own ------------------------------------------------------------------- */
    HIPDNN_ATTR_TENSOR_VALUE_EXT = 20000,    /* UINT8_EXT, element size: a constant's bytes */
    HIPDNN_ATTR_TENSOR_NAME_EXT = 20001,     /* CHAR */
    /* Every OPERATION_* descriptor */
    HIPDNN_ATTR_OPERATION_NAME_EXT = 20100,         /* CHAR */
    HIPDNN_ATTR_OPERATION_COMPUTE_TYPE_EXT = 20101, /* DATA_TYPE, 1 */
    /* OPERATION_BATCHNORM_INFERENCE_EXT: y = (x - mean) * inv_variance * scale + bias, the
     * per-channel tensors shaped [1, C, 1, ...] */
    HIPDNN_ATTR_OPERATION_BN_INFERENCE_X_EXT = 20200,
    HIPDNN_ATTR_OPERATION_BN_INFERENCE_MEAN_EXT = 20201,
    HIPDNN_ATTR_OPERATION_BN_INFERENCE_INV_VARIANCE_EXT = 20202,
    HIPDNN_ATTR_OPERATION_BN_INFERENCE_SCALE_EXT = 20203,
    HIPDNN_ATTR_OPERATION_BN_INFERENCE_BIAS_EXT = 20204,
    HIPDNN_ATTR_OPERATION_BN_INFERENCE_Y_EXT = 20205,
    /* OPERATIONGRAPH */
    HIPDNN_ATTR_OPERATIONGRAPH_NAME_EXT = 20300, /* CHAR */
    /* get, after finalize: the graph's tensors as new, finalized TENSOR descriptors the
     * caller destroys, with dims/strides/data types inferred */
    HIPDNN_ATTR_OPERATIONGRAPH_TENSORS_EXT = 20301,
    HIPDNN_ATTR_OPERATIONGRAPH_DESCRIPTION_EXT = 20302, /* CHAR, get: a readable listing */
    /* INT64, get, after finalize: uids of the tensors the graph writes (non-virtual tensors
     * some node produces), in node order */
    HIPDNN_ATTR_OPERATIONGRAPH_OUTPUT_UIDS_EXT = 20303,
    /* ENGINEHEUR */
    HIPDNN_ATTR_ENGINEHEUR_PREFERRED_ENGINE_EXT = 20400,  /* CHAR: engine name ranked first */
    HIPDNN_ATTR_ENGINEHEUR_DESELECTED_ENGINES_EXT = 20401, /* INT64, n: engine ids left out */
    /* get, after finalize: a line per engine, "name\tid\tapplicable" or "name\tid\t<why not>" */
    HIPDNN_ATTR_ENGINEHEUR_SUPPORT_REPORT_EXT = 20402,
    /* ENGINE */
    HIPDNN_ATTR_ENGINE_ID_EXT = 20500,           /* INT64: FNV-1a of the name (int64 bits) */
    HIPDNN_ATTR_ENGINE_NAME_EXT = 20501,         /* CHAR, get */
    HIPDNN_ATTR_ENGINE_MEMORY_SPACE_EXT = 20502, /* INT64, get: hipdnnMemorySpace_t */
    HIPDNN_ATTR_ENGINE_FLAGS_EXT = 20503, /* INT64, get: HIPDNN_ENGINE_FLAG_* (hipdnn_plugin.h) */
    HIPDNN_ATTR_ENGINE_KNOB_INFO_EXT = 20504, /* INT64, 4n, get: id, min, max, default a knob */
    /* INT64, get: per knob (KNOB_INFO_EXT's order) stride, n, then its n only values (n 0: any) */
    HIPDNN_ATTR_ENGINE_KNOB_VALUES_EXT = 20505,
    /* EXECUTION_PLAN */
    HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_NAME_EXT = 20600,  /* CHAR, get */
    HIPDNN_ATTR_EXECUTION_PLAN_MEMORY_SPACE_EXT = 20601, /* INT64, get */
    /* VARIANT_PACK: INT64, n (same order as the ids): hipdnnMemorySpace_t of each pointer as
     * the caller knows it; unset = the backend probes each pointer */
    HIPDNN_ATTR_VARIANT_PACK_MEMORY_SPACES_EXT = 20700,
    /* OPERATION_NORM_FORWARD: scale is stored minus one (y uses scale + 1) */
    HIPDNN_ATTR_OPERATION_NORM_FWD_ZERO_CENTERED_GAMMA_EXT = 20800, /* BOOLEAN, 1; default 0 */
    /* OPERATION_SLICE_EXT: y[i...] = x[start + i * step ...], y's dims
     * ceil((limit - start) / step) per dim; the lists have one value per dim of x */
    HIPDNN_ATTR_OPERATION_SLICE_X_EXT = 20900,
    HIPDNN_ATTR_OPERATION_SLICE_Y_EXT = 20901,
    HIPDNN_ATTR_OPERATION_SLICE_START_EXT = 20902, /* INT64, rank; default 0 */
    HIPDNN_ATTR_OPERATION_SLICE_LIMIT_EXT = 20903, /* INT64, rank; required (exclusive end) */
    HIPDNN_ATTR_OPERATION_SLICE_STEP_EXT = 20904,  /* INT64, rank; default 1 */
    HIPDNN_ATTR_OPERATION_CONCAT_INPUT_0_EXT = 20910, /* BACKEND_DESCRIPTOR (TENSOR) */
    HIPDNN_ATTR_OPERATION_CONCAT_INPUT_1_EXT = 20911,
    HIPDNN_ATTR_OPERATION_CONCAT_INPUT_2_EXT = 20912,
    HIPDNN_ATTR_OPERATION_CONCAT_INPUT_3_EXT = 20913,
    HIPDNN_ATTR_OPERATION_CONCAT_INPUT_4_EXT = 20914,
    HIPDNN_ATTR_OPERATION_CONCAT_INPUT_5_EXT = 20915,
    HIPDNN_ATTR_OPERATION_CONCAT_INPUT_6_EXT = 20916,
    HIPDNN_ATTR_OPERATION_CONCAT_INPUT_7_EXT = 20917,
    /* OPERATION_NORM_BACKWARD: the forward's scale was stored minus one; dscale is with
     * respect to the stored value (the same numbers) */
    HIPDNN_ATTR_OPERATION_NORM_BWD_ZERO_CENTERED_GAMMA_EXT = 21200, /* BOOLEAN, 1; default 0 */
    /* OPERATION_RESHAPE: cuDNN 9.22's reshape mode (its number is not public here) */
    HIPDNN_ATTR_OPERATION_RESHAPE_MODE_EXT = 21100, /* RESHAPE_MODE_EXT, 1; default VIEW_ONLY */
    /* OPERATION_SDPA_FWD_EXT: o = softmax(q k^T * attn_scale + bias [+ ALiBi], masked) v;
     * q [B, H_q, S_q, D], k [B, H_k, S_kv, D], v [B, H_v, S_kv, D_v] (any strides, GQA), o
     * [B, H_q, S_q, D_v]; stats (optional, float32) [B, H_q, S_q, 1] the log-sum-exp.  Masks:
     * padding (seq_len_q / _kv), band i + shift - left < j <= i + shift + right (shift 0 or
     * S_kv - S_q); ALiBi: + slope_h (j - i) (docs/python_api.md); no key: o 0, stats -inf */
    HIPDNN_ATTR_OPERATION_SDPA_FWD_Q_EXT = 21000, HIPDNN_ATTR_OPERATION_SDPA_FWD_K_EXT = 21001,
    HIPDNN_ATTR_OPERATION_SDPA_FWD_V_EXT = 21002, HIPDNN_ATTR_OPERATION_SDPA_FWD_O_EXT = 21007,
    HIPDNN_ATTR_OPERATION_SDPA_FWD_ATTN_SCALE_EXT = 21003, /* one value; optional (1) */
    HIPDNN_ATTR_OPERATION_SDPA_FWD_BIAS_EXT = 21004,       /* optional, broadcast */
    HIPDNN_ATTR_OPERATION_SDPA_FWD_SEQ_LEN_Q_EXT = 21005,  /* optional, int32 / int64 */
    HIPDNN_ATTR_OPERATION_SDPA_FWD_SEQ_LEN_KV_EXT = 21006, /* ... [B, 1, 1, 1] */
    HIPDNN_ATTR_OPERATION_SDPA_FWD_STATS_EXT = 21008,      /* optional output */
    HIPDNN_ATTR_OPERATION_SDPA_DIAGONAL_ALIGNMENT_EXT = 21009, /* DIAGONAL_ALIGNMENT_EXT, 1 */
    HIPDNN_ATTR_OPERATION_SDPA_LEFT_BOUND_EXT = 21010,  /* INT64, 1; default 0: none */
    HIPDNN_ATTR_OPERATION_SDPA_RIGHT_BOUND_EXT = 21011, /* INT64, 1; default -1: none */
    HIPDNN_ATTR_OPERATION_SDPA_USE_PADDING_MASK_EXT = 21012, /* BOOLEAN, 1; default 0 */
    HIPDNN_ATTR_OPERATION_SDPA_USE_ALIBI_MASK_EXT = 21013,   /* BOOLEAN, 1; default 0 */
    HIPDNN_ATTR_OPERATION_SDPA_MAX_SEQ_LEN_KV_EXT = 21014, /* INT64; paged: S_kv (0: none) */
    HIPDNN_ATTR_OPERATION_SDPA_FWD_PAGE_TABLE_K_EXT = 21015, /* paged: int32 [B,1,blocks,1] */
    HIPDNN_ATTR_OPERATION_SDPA_FWD_PAGE_TABLE_V_EXT = 21016, /* k, v: [N, H, block, D] */
    HIPDNN_ATTR_OPERATION_SDPA_DROPOUT_PROBABILITY_EXT = 21017, /* DOUBLE [0, 1): p * keep / */
    HIPDNN_ATTR_OPERATION_SDPA_FWD_SEED_EXT = 21018,   /* (1 - prob), keep by Philox4x32-10 of */
    HIPDNN_ATTR_OPERATION_SDPA_FWD_OFFSET_EXT = 21019, /* seed, offset (one int32 / int64) */
    HIPDNN_ATTR_OPERATION_SDPA_FWD_RNG_DUMP_EXT = 21033, /* optional: keep 1.0 / 0.0, float32 */
    /* OPERATION_SDPA_BWD_EXT: dq, dk, dv of o from do, o, stats and the forward's inputs */
    HIPDNN_ATTR_OPERATION_SDPA_BWD_Q_EXT = 21020, HIPDNN_ATTR_OPERATION_SDPA_BWD_K_EXT = 21021,
    HIPDNN_ATTR_OPERATION_SDPA_BWD_V_EXT = 21022, HIPDNN_ATTR_OPERATION_SDPA_BWD_O_EXT = 21023,
    HIPDNN_ATTR_OPERATION_SDPA_BWD_DO_EXT = 21024, HIPDNN_ATTR_OPERATION_SDPA_BWD_STATS_EXT = 21025,
    HIPDNN_ATTR_OPERATION_SDPA_BWD_ATTN_SCALE_EXT = 21026,
    HIPDNN_ATTR_OPERATION_SDPA_BWD_BIAS_EXT = 21027,
    HIPDNN_ATTR_OPERATION_SDPA_BWD_SEQ_LEN_Q_EXT = 21028,
    HIPDNN_ATTR_OPERATION_SDPA_BWD_SEQ_LEN_KV_EXT = 21029,
    HIPDNN_ATTR_OPERATION_SDPA_BWD_DQ_EXT = 21030, HIPDNN_ATTR_OPERATION_SDPA_BWD_DK_EXT = 21031,
    HIPDNN_ATTR_OPERATION_SDPA_BWD_DV_EXT = 21032,
    HIPDNN_ATTR_OPERATION_SDPA_BWD_SEED_EXT = 21034, /* dropout: the forward's seed, offset */
    HIPDNN_ATTR_OPERATION_SDPA_BWD_OFFSET_EXT = 21035,
} hipdnnBackendAttributeName_t;

/* ---- the table of operations --------------------------------------------------------
 * One entry per operation (hipdnnGetOpInfo_ext): its descriptor type, its ports (TENSOR
 * attributes) and its parameters with types and defaults.  The backend, Python and the
 * plugins all read it, so adding an operation adds no code that walks ops by name. */

#define HIPDNN_MAX_PORTS 12      /* inputs, and separately outputs, of one operation */
#define HIPDNN_MAX_OP_ATTRS 12   /* parameters of one operation */
#define HIPDNN_MAX_ATTR_VALUES 8 /* values of one list parameter */

typedef struct {
    const char* name;                  /* "x": messages, serialized field */
    hipdnnBackendAttributeName_t attr; /* sets the port's TENSOR descriptor */
    int32_t is_optional;
    const char *frontend_name, *frontend_suffix; /* cuDNN frontend's: "image", "Y"; or NULL */
} hipdnnOpPortInfo_ext_t;

typedef enum {
    HIPDNN_OP_ATTR_INT64 = 0,      /* one int64_t */
    HIPDNN_OP_ATTR_INT64_LIST = 1, /* 1..max_count int64_t */
    HIPDNN_OP_ATTR_DOUBLE = 2,     /* one double (never NaN) */
    HIPDNN_OP_ATTR_ENUM = 3,       /* one enum value of `type` */
    HIPDNN_OP_ATTR_BOOLEAN = 4,    /* one bool */
} hipdnnOpAttrKind_ext_t;

typedef struct {
    const char* name;                  /* "pre_padding" */
    hipdnnBackendAttributeName_t attr;
    hipdnnBackendAttributeType_t type; /* what SetAttribute/GetAttribute take */
    hipdnnOpAttrKind_ext_t kind;
    int32_t max_count;                 /* 1 for scalars */
    int64_t min_value, max_value;      /* inclusive, for integer kinds */
    double default_value;              /* each value's default (lists: per element) */
} hipdnnOpAttrInfo_ext_t;

typedef struct {
    int32_t kind;                          /* serialized op number, 1.. */
    const char* name;                      /* "conv_fprop" */
    hipdnnBackendDescriptorType_t descriptor_type;
    const char* descriptor_name;           /* "OPERATION_CONVOLUTION_FORWARD" */
    int32_t num_inputs, num_outputs;
    hipdnnOpPortInfo_ext_t inputs[HIPDNN_MAX_PORTS];
    hipdnnOpPortInfo_ext_t outputs[HIPDNN_MAX_PORTS];
    int32_t num_attrs;
    hipdnnOpAttrInfo_ext_t attrs[HIPDNN_MAX_OP_ATTRS];
} hipdnnOpInfo_ext_t;

typedef struct hipdnnHandle* hipdnnHandle_t;
typedef struct hipdnnBackendDescriptor* hipdnnBackendDescriptor_t;
typedef void* hipdnnStream_t; /* a hipStream_t or cudaStream_t; NULL = default stream */
typedef void* hipdnnEvent_t;  /* a hipEvent_t or cudaEvent_t (CUevent) */

/* ---- errors ----------------------------------------------------------------------
 * Every function that returns a status first clears the calling thread's message and,
 * on failure, sets it.  Thread rules: none of these take locks. */

/* Static string naming the status ("HIPDNN_STATUS_BAD_PARAM"); never NULL. */
HIPDNN_EXPORT const char* hipdnnGetErrorString(hipdnnStatus_t status);

/* Copies the calling thread's message for its last failing call into `message` (at most
 * max_size bytes with the terminator; "" if none) and clears it, as hipDNN's function of
 * this name does.  NULL or max_size 0 only clears. */
HIPDNN_EXPORT void hipdnnGetLastErrorString(char* message, size_t max_size);

/* The calling thread's message without clearing it ("" if none).  Valid until the next
 * hipdnn call on this thread. */
HIPDNN_EXPORT const char* hipdnnPeekLastErrorString_ext(void);

/* "0.2.0": HIPDNN_VERSION_MAJOR.MINOR.PATCH as a string. */
HIPDNN_EXPORT const char* hipdnnVersionString_ext(void);

/* ---- operations ------------------------------------------------------------------- */

/* Number of operations in the table.  Never fails (count NULL: NULL_POINTER). */
HIPDNN_EXPORT hipdnnStatus_t hipdnnGetOpCount_ext(int64_t* count);
/* Entry `index` (0 <= index < count); *info points into static storage, valid for the
 * life of the process.  Errors: NULL_POINTER, OUT_OF_BOUND.  Any thread. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnGetOpInfo_ext(int64_t index, const hipdnnOpInfo_ext_t** info);

/* ---- handle ----------------------------------------------------------------------
 * A handle may be used from one thread at a time, except hipdnnBackendExecute, which
 * serializes itself per handle. */

/* Creates a handle.  The first handle loads the engine plugins (see below); after that
 * the plugin paths are fixed for the life of the process.  The handle records the GPU
 * device current on the calling thread (0 without a GPU runtime, which is not loaded
 * while only host engines are present) and hands it to each plugin when that plugin's
 * own handle is created, lazily, on first use.
 * Errors: BAD_PARAM_NULL_POINTER, ALLOC_FAILED, PLUGIN_ERROR (no plugin could be
 * loaded at all: the message names each path and why). */
HIPDNN_EXPORT hipdnnStatus_t hipdnnCreate(hipdnnHandle_t* handle);
/* Drops the user's reference; plans built on it keep it alive until they are destroyed.
 * NULL is a no-op.  Errors: BAD_PARAM (not a live handle). */
HIPDNN_EXPORT hipdnnStatus_t hipdnnDestroy(hipdnnHandle_t handle);
/* The stream every engine enqueues on; plugins see it through their SetStream.
 * Errors: BAD_PARAM (not a live handle), PLUGIN_ERROR (a plugin refused the stream;
 * the handle keeps the stream it had). */
HIPDNN_EXPORT hipdnnStatus_t hipdnnSetStream(hipdnnHandle_t handle, hipdnnStream_t stream);
/* Errors: BAD_PARAM, BAD_PARAM_NULL_POINTER. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnGetStream(hipdnnHandle_t handle, hipdnnStream_t* stream);
/* The device the handle was created on.  Errors: BAD_PARAM, BAD_PARAM_NULL_POINTER. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnGetDevice_ext(hipdnnHandle_t handle, int* device);

/* ---- device runtime ---------------------------------------------------------------
 * The GPU runtime the backend resolves at run time: AMD's HIP runtime (libamdhip64.so)
 * or NVIDIA's CUDA driver API (libcuda.so.1), whichever loads and reports a device (HIP
 * first); $HIPDNN_DEVICE_RUNTIME=hip|cuda allows only that one (ignored in set-uid
 * processes).  The backend links neither.  These calls let C and Python users allocate,
 * copy and synchronize device memory without linking a GPU runtime of their own; every
 * pointer, stream and event is the vendor's own (a hipStream_t / cudaStream_t, ...), so
 * they mix freely with the vendor runtime, PyTorch and CuPy.  The runtime is loaded on
 * the first call; any thread.
 *
 * Every call below fails with NOT_SUPPORTED when no runtime with a device was found (the
 * message lists each library tried and its answer), and otherwise returns what the runtime
 * said: a failing call gives EXECUTION_FAILED (malloc: INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED)
 * with a message naming the call and the vendor's error, e.g. "cuMemAlloc_v2 (4096 bytes):
 * CUDA_ERROR_OUT_OF_MEMORY: out of memory".  A NULL stream is the device's default stream. */

/* *name = "hip", "cuda", or "none" (then NOT_SUPPORTED, with the reason), *device_count
 * the devices it reports (0 with none).  Either output may be NULL. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnGetDeviceRuntime_ext(const char** name, int* device_count);
/* The calling thread's current device, and setting it (BAD_PARAM_OUT_OF_BOUND for a
 * device the runtime does not have). */
HIPDNN_EXPORT hipdnnStatus_t hipdnnDeviceGet_ext(int* device);
HIPDNN_EXPORT hipdnnStatus_t hipdnnDeviceSet_ext(int device);
/* size bytes of device memory on the current device; size 0 gives NULL.  Errors:
 * BAD_PARAM_NULL_POINTER, INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnDeviceMalloc_ext(void** ptr, size_t size);
/* NULL is a no-op.  Waits for work using the memory as the runtime's free does. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnDeviceFree_ext(void* ptr);
/* Copies size bytes between any two of host and device memory (unified addressing).
 * Memcpy returns when the copy is done and is ordered after earlier work on the default
 * stream; MemcpyAsync is enqueued on `stream` (host memory must then stay valid until
 * the stream reaches it). */
HIPDNN_EXPORT hipdnnStatus_t hipdnnDeviceMemcpy_ext(void* dst, const void* src, size_t size);
HIPDNN_EXPORT hipdnnStatus_t hipdnnDeviceMemcpyAsync_ext(void* dst, const void* src, size_t size,
                                                         hipdnnStream_t stream);
/* Sets size bytes of device memory to (unsigned char)value, as Memcpy / MemcpyAsync. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnDeviceMemset_ext(void* ptr, int value, size_t size);
HIPDNN_EXPORT hipdnnStatus_t hipdnnDeviceMemsetAsync_ext(void* ptr, int value, size_t size,
                                                         hipdnnStream_t stream);
/* Waits for all work on the current device. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnDeviceSynchronize_ext(void);
/* A new stream on the current device (blocking, like the runtime's default), destroyed
 * with StreamDestroy (NULL is a no-op). */
HIPDNN_EXPORT hipdnnStatus_t hipdnnStreamCreate_ext(hipdnnStream_t* stream);
HIPDNN_EXPORT hipdnnStatus_t hipdnnStreamDestroy_ext(hipdnnStream_t stream);
HIPDNN_EXPORT hipdnnStatus_t hipdnnStreamSynchronize_ext(hipdnnStream_t stream);
/* Makes later work on `stream` wait for `event` (recorded on another stream). */
HIPDNN_EXPORT hipdnnStatus_t hipdnnStreamWaitEvent_ext(hipdnnStream_t stream, hipdnnEvent_t event);
/* Timing events: record on a stream, wait on the host, milliseconds between two. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnEventCreate_ext(hipdnnEvent_t* event);
HIPDNN_EXPORT hipdnnStatus_t hipdnnEventDestroy_ext(hipdnnEvent_t event);
HIPDNN_EXPORT hipdnnStatus_t hipdnnEventRecord_ext(hipdnnEvent_t event, hipdnnStream_t stream);
HIPDNN_EXPORT hipdnnStatus_t hipdnnEventSynchronize_ext(hipdnnEvent_t event);
HIPDNN_EXPORT hipdnnStatus_t hipdnnEventElapsedTime_ext(float* ms, hipdnnEvent_t start,
                                                        hipdnnEvent_t end);
/* Where `ptr` lives (HOST for memory the runtime does not know) and on which device (-1
 * for host memory); either output may be NULL.  GetExtent, execute's check of a device
 * tensor: *inside = bytes when the `bytes` bytes from ptr lie in device allocations, else
 * the bytes to its allocation's end.  Without a runtime: HOST, -1, bytes and SUCCESS. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnPointerGetMemorySpace_ext(const void* ptr,
                                                             hipdnnMemorySpace_t* space,
                                                             int* device);
HIPDNN_EXPORT hipdnnStatus_t hipdnnPointerGetExtent_ext(const void* ptr, uint64_t bytes,
                                                        uint64_t* inside);

/* ---- descriptors -----------------------------------------------------------------
 * A descriptor may be used from one thread at a time; distinct descriptors may be used
 * concurrently even when they reference the same tensors. */

/* Errors: BAD_PARAM_NULL_POINTER, BAD_PARAM (unknown or reserved type), ALLOC_FAILED. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnBackendCreateDescriptor(hipdnnBackendDescriptorType_t type,
                                                           hipdnnBackendDescriptor_t* desc);
/* Drops the caller's reference.  Descriptors referenced by others (a tensor held by an
 * operation) live until their last user is destroyed.  NULL is a no-op.
 * Errors: BAD_PARAM (not a live descriptor). */
HIPDNN_EXPORT hipdnnStatus_t hipdnnBackendDestroyDescriptor(hipdnnBackendDescriptor_t desc);

/* The type a descriptor was created with (for descriptors returned by the backend, such
 * as the OPS of a deserialized graph).  Errors: BAD_PARAM, BAD_PARAM_NULL_POINTER. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnBackendGetDescriptorType_ext(hipdnnBackendDescriptor_t desc,
                                                                hipdnnBackendDescriptorType_t* type);

/* Sets `count` values of `type` for attribute `name`.  Descriptors passed as values are
 * referenced, not copied.  Errors: BAD_PARAM_NULL_POINTER (desc or values NULL with
 * count > 0), BAD_PARAM (attribute not of this descriptor type, wrong type, bad value,
 * not a live descriptor), BAD_PARAM_OUT_OF_BOUND (count or value out of range),
 * NOT_INITIALIZED (already finalized), ALLOC_FAILED. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnBackendSetAttribute(hipdnnBackendDescriptor_t desc,
                                                       hipdnnBackendAttributeName_t name,
                                                       hipdnnBackendAttributeType_t type,
                                                       int64_t count, const void* values);

/* Reads up to `requested` values into `values` and the number available into `*count`;
 * requested = 0 asks only for the count.  CHAR attributes are written with a NUL
 * terminator when room allows (`*count` excludes it).  Ownership, one rule for every
 * descriptor-valued attribute: each descriptor written to `values` is a reference the
 * caller owns and drops with hipdnnBackendDestroyDescriptor (an existing descriptor
 * retained, or a new one).  Values read back are what the user set: a finalized graph
 * keeps what it inferred in itself (OPERATIONGRAPH TENSORS_EXT shows it), never in the
 * user's TENSOR descriptors.  Errors: BAD_PARAM_NULL_POINTER, BAD_PARAM (attribute not
 * of this type, wrong type), BAD_PARAM_NOT_FINALIZED (the attribute exists only after
 * finalize), ALLOC_FAILED. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnBackendGetAttribute(hipdnnBackendDescriptor_t desc,
                                                       hipdnnBackendAttributeName_t name,
                                                       hipdnnBackendAttributeType_t type,
                                                       int64_t requested, int64_t* count,
                                                       void* values);

/* Checks the descriptor and makes it immutable.  For an OPERATIONGRAPH this validates the
 * whole graph and infers every unset dim, stride and data type (kept in the graph); for
 * an ENGINEHEUR it asks every engine, on the graph's handle; for an EXECUTION_PLAN it
 * creates the engine's execution context (compiling what it compiles, once).
 * Errors: BAD_PARAM (invalid graph or attributes; the message names node and tensor),
 * BAD_PARAM_NOT_FINALIZED (a referenced descriptor is not finalized), NOT_INITIALIZED
 * (already finalized), NOT_SUPPORTED, PLUGIN_ERROR (the engine failed to build a
 * plan; its message follows), ALLOC_FAILED. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnBackendFinalize(hipdnnBackendDescriptor_t desc);

/* Enqueues a finalized plan with a finalized variant pack on the handle's stream; with a
 * device engine it may still be running on return, and the caller keeps every buffer
 * (workspace included) alive and unchanged until the stream is synchronized.  A host
 * engine has finished on return.  Every non-virtual tensor of the graph needs a pointer
 * (a runtime by-value scalar: a host pointer to its value), and each pointer must be in
 * the memory space the engine runs in, as declared in MEMORY_SPACES_EXT or else probed.
 * The plan may run on any handle of the device it was built on; calls on one handle are
 * serialized, calls on distinct handles run concurrently.
 * Errors: BAD_PARAM (missing or unknown uid, wrong memory space; the message names the
 * tensor), BAD_PARAM_NOT_FINALIZED, BAD_PARAM_SIZE_INSUFFICIENT (no workspace but the plan
 * needs one), BAD_PARAM_STREAM_MISMATCH (handle of another device), EXECUTION_FAILED (the
 * engine's message follows). */
HIPDNN_EXPORT hipdnnStatus_t hipdnnBackendExecute(hipdnnHandle_t handle,
                                                  hipdnnBackendDescriptor_t plan,
                                                  hipdnnBackendDescriptor_t variant_pack);

/* ---- what a plan runs ------------------------------------------------------------ */

/* One kernel of a finalized execution plan: one launch (GPU) or one pass over the data
 * (host) running the nodes listed, whose intermediates between them never reach memory. */
typedef struct {
    const char* name;     /* the engine's short name: "pointwise", "row-wise", "conv_fprop" */
    const char* detail;   /* one line on what it does ("3 pointwise nodes fused"); "" if none */
    int64_t num_nodes;
    const int64_t* nodes; /* indices into the plan's graph's OPS, as OPERATIONGRAPH OPS gives
                           * them back (the order they were set in), ascending */
} hipdnnKernelInfo_ext_t;

/* Which nodes the plan's engine runs in which kernel, in launch order: the kernel-fusion
 * report.  Every node is in at least one kernel; a node in several is cut into passes (a
 * long reduction).  *kernels points into the plan (strings included): valid until the plan
 * is destroyed; the first call asks the engine, later ones return the same array.  The
 * plan may be used from one thread at a time, as every descriptor.
 * Errors: BAD_PARAM_NULL_POINTER, BAD_PARAM (not an EXECUTION_PLAN),
 * BAD_PARAM_NOT_FINALIZED, NOT_SUPPORTED (the engine's plugin does not describe its kernels:
 * an optional plugin function, hipdnn_plugin.h), PLUGIN_ERROR (the plugin failed, named
 * a node the graph does not have or left one out; the message says which), ALLOC_FAILED. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnGetPlanKernels_ext(hipdnnBackendDescriptor_t plan,
                                                      int64_t* num_kernels,
                                                      const hipdnnKernelInfo_ext_t** kernels);

/* ---- serialization -------------------------------------------------------------
 * Bytes carry a format version: 2, or 3 where attention features added since (ALiBi,
 * paged K/V) are used, refused by name by a reader of 2 alone (docs/c_api.md). */

#define HIPDNN_GRAPH_FORMAT_VERSION 2
#define HIPDNN_GRAPH_FORMAT_VERSION_ATTENTION_EXT 3

/* The finalized graph as FlatBuffers bytes (schema csrc/schema/graph.fbs).  Two-call
 * pattern: with data = NULL, *size receives the size.  Errors: BAD_PARAM_NULL_POINTER,
 * BAD_PARAM (not an OPERATIONGRAPH), BAD_PARAM_NOT_FINALIZED,
 * BAD_PARAM_SIZE_INSUFFICIENT (capacity below the size). */
HIPDNN_EXPORT hipdnnStatus_t hipdnnBackendGetSerializedBinaryGraph_ext(
    hipdnnBackendDescriptor_t graph, size_t capacity, size_t* size, uint8_t* data);

/* Creates a finalized OPERATIONGRAPH from bytes, which may start at any address.  The bytes
 * are verified first: truncated or corrupted input gives BAD_PARAM, never a crash (the fuzz
 * targets of fuzz/ hold the library to that); then the same validation
 * and inference as a built graph.  The graph has no handle yet: set
 * OPERATIONGRAPH_HANDLE on it (allowed once on a finalized graph that has none) before
 * asking for heuristics.  Errors: BAD_PARAM_NULL_POINTER, BAD_PARAM (the message says what
 * is wrong and where, or names both format versions), ALLOC_FAILED. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnBackendCreateAndDeserializeGraph_ext(
    hipdnnBackendDescriptor_t* graph, const uint8_t* data, size_t size);

/* ---- plugins --------------------------------------------------------------------- */

typedef enum {
    HIPDNN_PLUGIN_LOADING_ADDITIVE = 0, /* search these as well as the default folder */
    HIPDNN_PLUGIN_LOADING_ABSOLUTE = 1, /* search only these */
} hipdnnPluginLoadingMode_t;

/* Sets where engine plugins are searched for.  Each path is a plugin file or a folder
 * whose *.so files are all tried, however many, in name order; relative paths resolve
 * against the folder of libhipdnn_backend.so.  Must be called before the first
 * hipdnnCreate (else NOT_SUPPORTED).  The default folder is hipdnn_plugins/engines/
 * beside the backend library, or $HIPDNN_PLUGIN_DIR when set (ignored by set-user-ID and
 * set-group-ID programs).
 *
 * Plugins are trusted code: loading one runs its code in this process, with its rights.
 * Before dlopen each file must be a readable regular file holding a shared library for
 * this machine whose segments lie inside the file; others (a FIFO, a directory, a copy
 * cut short, a library for another machine) are skipped with their reason.  A folder or
 * file that users other than this one and root may write (others, a shared group, another
 * owner) is loaded with a warning. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnSetEnginePluginPaths_ext(size_t num_paths,
                                                            const char* const* paths,
                                                            hipdnnPluginLoadingMode_t mode);

/* Paths of the plugins that loaded, two-call pattern: with paths = NULL, *num_paths gets
 * the count and *max_len the longest path's length plus one; otherwise `paths` holds
 * num_paths buffers of max_len chars each.  Loads the plugins if not yet loaded. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnGetLoadedEnginePluginPaths_ext(size_t* num_paths, char** paths,
                                                                  size_t* max_len);

/* Engines of all loaded plugins (loads them).  Errors: BAD_PARAM_NULL_POINTER.  Any thread. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnGetEngineCount_ext(int64_t* count);

typedef struct {
    uint64_t engine_id;
    char name[64];
    char plugin_path[512];
    hipdnnMemorySpace_t memory_space;
    int32_t priority; /* higher ranks first under heur mode A */
    int32_t is_fallback;
} hipdnnEngineInfo_ext_t;

/* Engine `index` in the stable order of ENGINE_GLOBAL_INDEX (sorted by name).
 * Errors: BAD_PARAM_NULL_POINTER, BAD_PARAM_OUT_OF_BOUND.  Any thread. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnGetEngineInfo_ext(int64_t index, hipdnnEngineInfo_ext_t* info);

/* Plugins the loader skipped, two-call pattern as for loaded paths; "path: reason" each. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnGetSkippedEnginePlugins_ext(size_t* num, char** entries,
                                                               size_t* max_len);

/* ---- logging ----------------------------------------------------------------------- */
typedef enum {
    HIPDNN_LOG_OFF = 0,
    HIPDNN_LOG_ERROR = 1,
    HIPDNN_LOG_WARN = 2,
    HIPDNN_LOG_INFO = 3,
} hipdnnLogLevel_t;

/* Called for each message at or below the current level, from the thread that logged it
 * (a plugin's own worker threads included), possibly on several threads at once: it must
 * be thread-safe.  It is never called while hipdnn holds a lock, so it may call any
 * hipdnn function, hipdnnCreate and the logging functions included; messages logged
 * inside it reach it nested. */
typedef void (*hipdnnLogCallback_t)(hipdnnLogLevel_t level, const char* message,
                                    void* user_data);

/* Replaces the user callback (NULL removes it; then messages go to $HIPDNN_LOG_FILE or
 * stderr).  Returns once no thread is inside the callback it replaced, so its user_data
 * may be freed; called from inside a callback it cannot wait and returns at once. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnSetUserLogCallback_ext(hipdnnLogCallback_t callback,
                                                          void* user_data);
/* Overrides $HIPDNN_LOG_LEVEL (off, error, warn, info; default warn). */
HIPDNN_EXPORT hipdnnStatus_t hipdnnSetLogLevel_ext(hipdnnLogLevel_t level);
/* Logs a caller's message (a frontend's, an execution provider's) as hipdnn logs its own. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnLogMessage_ext(hipdnnLogLevel_t level, const char* message);
#ifdef __cplusplus
}
#endif
#include "hipdnn/hipdnn_tuning.h" /* autotuning and the plan cache, in a header of their own */
#endif /* HIPDNN_H */
