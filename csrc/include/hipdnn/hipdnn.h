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
 *     distinct handles.
 */
#ifndef HIPDNN_H
#define HIPDNN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define HIPDNN_EXPORT __declspec(dllexport)
#else
#define HIPDNN_EXPORT __attribute__((visibility("default")))
#endif

#define HIPDNN_VERSION_MAJOR 0
#define HIPDNN_VERSION_MINOR 1
#define HIPDNN_VERSION_PATCH 0

/* Largest tensor rank and largest number of spatial dims a graph may use. */
#define HIPDNN_MAX_DIMS 8
#define HIPDNN_MAX_SPATIAL 6

typedef enum {
    HIPDNN_STATUS_SUCCESS = 0,
    HIPDNN_STATUS_NOT_INITIALIZED = 1,
    HIPDNN_STATUS_BAD_PARAM = 2,
    HIPDNN_STATUS_BAD_PARAM_NULL_POINTER = 3,
    HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED = 4,
    HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND = 5,
    HIPDNN_STATUS_NOT_SUPPORTED = 6,
    HIPDNN_STATUS_INTERNAL_ERROR = 7,
    HIPDNN_STATUS_ALLOC_FAILED = 8,
    HIPDNN_STATUS_EXECUTION_FAILED = 9,
    HIPDNN_STATUS_PLUGIN_ERROR = 10,
} hipdnnStatus_t;

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
    HIPDNN_DATA_BOOLEAN = 11,
    HIPDNN_DATA_NOT_SET = 127,
} hipdnnDataType_t;

typedef enum {
    HIPDNN_POINTWISE_ADD = 0,
    HIPDNN_POINTWISE_SUB = 1,
    HIPDNN_POINTWISE_MUL = 2,
    HIPDNN_POINTWISE_DIV = 3,
    HIPDNN_POINTWISE_MAX = 4,
    HIPDNN_POINTWISE_MIN = 5,
    HIPDNN_POINTWISE_IDENTITY = 6,
    HIPDNN_POINTWISE_RELU_FWD = 7,
    HIPDNN_POINTWISE_SIGMOID_FWD = 8,
    HIPDNN_POINTWISE_TANH_FWD = 9,
    HIPDNN_POINTWISE_GELU_FWD = 10,
} hipdnnPointwiseMode_t;

typedef enum {
    HIPDNN_CROSS_CORRELATION = 0, /* what deep-learning frameworks call convolution */
    HIPDNN_CONVOLUTION = 1,       /* true convolution: the filter is flipped */
} hipdnnConvolutionMode_t;

typedef enum {
    HIPDNN_HEUR_MODE_A = 0,        /* fast: rank by each engine's declared priority */
    HIPDNN_HEUR_MODE_B = 1,        /* same candidates, device engines strictly first */
    HIPDNN_HEUR_MODE_FALLBACK = 2, /* only engines flagged as fallback (reference) */
} hipdnnBackendHeurMode_t;

typedef enum {
    HIPDNN_MEMORY_HOST = 0,
    HIPDNN_MEMORY_DEVICE = 1,
} hipdnnMemorySpace_t;

typedef enum {
    HIPDNN_BACKEND_TENSOR_DESCRIPTOR = 0,
    HIPDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR = 1,
    HIPDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR = 2,
    HIPDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR = 3,
    HIPDNN_BACKEND_OPERATION_BATCHNORM_INFERENCE_DESCRIPTOR = 4,
    HIPDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR = 32,
    HIPDNN_BACKEND_ENGINEHEUR_DESCRIPTOR = 33,
    HIPDNN_BACKEND_ENGINE_DESCRIPTOR = 34,
    HIPDNN_BACKEND_ENGINECFG_DESCRIPTOR = 35,
    HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR = 36,
    HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR = 37,
    HIPDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR = 38,
} hipdnnBackendDescriptorType_t;

/* The C type behind an attribute's values. */
typedef enum {
    HIPDNN_TYPE_INT64 = 0,              /* int64_t */
    HIPDNN_TYPE_DOUBLE = 1,             /* double */
    HIPDNN_TYPE_FLOAT = 2,              /* float */
    HIPDNN_TYPE_BOOLEAN = 3,            /* int32_t, 0 or 1 */
    HIPDNN_TYPE_CHAR = 4,               /* char; count includes no terminator */
    HIPDNN_TYPE_DATA_TYPE = 5,          /* hipdnnDataType_t */
    HIPDNN_TYPE_BACKEND_DESCRIPTOR = 6, /* hipdnnBackendDescriptor_t */
    HIPDNN_TYPE_VOID_PTR = 7,           /* void* */
    HIPDNN_TYPE_HANDLE = 8,             /* hipdnnHandle_t */
    HIPDNN_TYPE_POINTWISE_MODE = 9,     /* hipdnnPointwiseMode_t */
    HIPDNN_TYPE_CONVOLUTION_MODE = 10,  /* hipdnnConvolutionMode_t */
    HIPDNN_TYPE_HEUR_MODE = 11,         /* hipdnnBackendHeurMode_t */
    HIPDNN_TYPE_UINT8 = 12,             /* uint8_t, raw bytes */
} hipdnnBackendAttributeType_t;

typedef enum {
    /* TENSOR */
    HIPDNN_ATTR_TENSOR_UNIQUE_ID = 100,      /* INT64, 1 */
    HIPDNN_ATTR_TENSOR_DATA_TYPE = 101,      /* DATA_TYPE, 1; NOT_SET = infer */
    HIPDNN_ATTR_TENSOR_DIMENSIONS = 102,     /* INT64, rank; unset = infer */
    HIPDNN_ATTR_TENSOR_STRIDES = 103,        /* INT64, rank; unset = inferred (see below) */
    HIPDNN_ATTR_TENSOR_IS_VIRTUAL = 104,     /* BOOLEAN, 1 */
    HIPDNN_ATTR_TENSOR_IS_BY_VALUE = 105,    /* BOOLEAN, 1; a scalar carried in the graph */
    HIPDNN_ATTR_TENSOR_VALUE = 106,          /* UINT8, element size; the scalar's bytes */
    HIPDNN_ATTR_TENSOR_NAME_EXT = 107,       /* CHAR */
    HIPDNN_ATTR_TENSOR_BYTE_ALIGNMENT = 108, /* INT64, 1; accepted for cuDNN parity */
    /* Unset strides, as in cuDNN frontend: an op's output is packed in the dimension order
     * of its main input (conv x, pointwise x, batchnorm x) when the ranks match, so NHWC in
     * gives NHWC out; otherwise, and for graph inputs, packed row-major. */

    /* Every OPERATION_* descriptor */
    HIPDNN_ATTR_OPERATION_NAME_EXT = 200,         /* CHAR */
    HIPDNN_ATTR_OPERATION_COMPUTE_TYPE_EXT = 201, /* DATA_TYPE, 1 */

    /* OPERATION_CONVOLUTION_FORWARD: y = conv(x, w) */
    HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X = 210,  /* BACKEND_DESCRIPTOR (TENSOR) */
    HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W = 211,  /* BACKEND_DESCRIPTOR (TENSOR) */
    HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y = 212,  /* BACKEND_DESCRIPTOR (TENSOR) */
    HIPDNN_ATTR_CONVOLUTION_PRE_PADDINGS = 213,         /* INT64, spatial dims */
    HIPDNN_ATTR_CONVOLUTION_POST_PADDINGS = 214,        /* INT64, spatial dims */
    HIPDNN_ATTR_CONVOLUTION_FILTER_STRIDES = 215,       /* INT64, spatial dims */
    HIPDNN_ATTR_CONVOLUTION_DILATIONS = 216,            /* INT64, spatial dims */
    HIPDNN_ATTR_CONVOLUTION_CONV_MODE = 217,            /* CONVOLUTION_MODE, 1 */

    /* OPERATION_MATMUL: c = a @ b over the last two dims, batch dims broadcast */
    HIPDNN_ATTR_OPERATION_MATMUL_ADESC = 220, /* BACKEND_DESCRIPTOR (TENSOR) */
    HIPDNN_ATTR_OPERATION_MATMUL_BDESC = 221, /* BACKEND_DESCRIPTOR (TENSOR) */
    HIPDNN_ATTR_OPERATION_MATMUL_CDESC = 222, /* BACKEND_DESCRIPTOR (TENSOR) */

    /* OPERATION_POINTWISE: y = f(x [, b]) with NumPy broadcasting */
    HIPDNN_ATTR_POINTWISE_MODE = 230,                /* POINTWISE_MODE, 1 */
    HIPDNN_ATTR_OPERATION_POINTWISE_XDESC = 231,     /* BACKEND_DESCRIPTOR (TENSOR) */
    HIPDNN_ATTR_OPERATION_POINTWISE_BDESC = 232,     /* BACKEND_DESCRIPTOR (TENSOR), binary modes */
    HIPDNN_ATTR_OPERATION_POINTWISE_YDESC = 233,     /* BACKEND_DESCRIPTOR (TENSOR) */
    HIPDNN_ATTR_POINTWISE_RELU_LOWER_CLIP = 234,     /* DOUBLE, 1; default 0 */
    HIPDNN_ATTR_POINTWISE_RELU_UPPER_CLIP = 235,     /* DOUBLE, 1; default +inf */
    HIPDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE = 236, /* DOUBLE, 1; default 0 (leaky relu) */

    /* OPERATION_BATCHNORM_INFERENCE: y = (x - mean) * inv_variance * scale + bias,
     * the per-channel tensors shaped [1, C, 1, ...] */
    HIPDNN_ATTR_OPERATION_BN_INFERENCE_X = 240,
    HIPDNN_ATTR_OPERATION_BN_INFERENCE_MEAN = 241,
    HIPDNN_ATTR_OPERATION_BN_INFERENCE_INV_VARIANCE = 242,
    HIPDNN_ATTR_OPERATION_BN_INFERENCE_SCALE = 243,
    HIPDNN_ATTR_OPERATION_BN_INFERENCE_BIAS = 244,
    HIPDNN_ATTR_OPERATION_BN_INFERENCE_Y = 245,

    /* OPERATIONGRAPH */
    HIPDNN_ATTR_OPERATIONGRAPH_HANDLE = 300,          /* HANDLE, 1 */
    HIPDNN_ATTR_OPERATIONGRAPH_OPS = 301,             /* BACKEND_DESCRIPTOR (OPERATION_*), n */
    HIPDNN_ATTR_OPERATIONGRAPH_NAME_EXT = 302,        /* CHAR */
    HIPDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT = 303, /* INT64, get: engines loaded */
    /* get, after finalize: the graph's tensors as new TENSOR descriptors the caller
     * destroys, dims/strides/data types inferred */
    HIPDNN_ATTR_OPERATIONGRAPH_TENSORS_EXT = 304,
    HIPDNN_ATTR_OPERATIONGRAPH_DESCRIPTION_EXT = 305, /* CHAR, get: a readable listing */
    /* INT64, get, after finalize: uids of the tensors the graph writes (non-virtual tensors
     * some node produces), in node order */
    HIPDNN_ATTR_OPERATIONGRAPH_OUTPUT_UIDS_EXT = 306,

    /* ENGINEHEUR */
    HIPDNN_ATTR_ENGINEHEUR_MODE = 400,            /* HEUR_MODE, 1 */
    HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH = 401,  /* BACKEND_DESCRIPTOR (OPERATIONGRAPH) */
    /* get, after finalize: ranked ENGINECFG descriptors, new, destroyed by the caller */
    HIPDNN_ATTR_ENGINEHEUR_RESULTS = 402,
    HIPDNN_ATTR_ENGINEHEUR_PREFERRED_ENGINE_EXT = 403,  /* CHAR: engine name ranked first */
    HIPDNN_ATTR_ENGINEHEUR_DESELECTED_ENGINES_EXT = 404, /* INT64, n: engine ids left out */
    /* get, after finalize: one line per loaded engine, "name\tid\tapplicable" or
     * "name\tid\t<reason it declined>" */
    HIPDNN_ATTR_ENGINEHEUR_SUPPORT_REPORT_EXT = 405,

    /* ENGINE */
    HIPDNN_ATTR_ENGINE_OPERATION_GRAPH = 500, /* BACKEND_DESCRIPTOR (OPERATIONGRAPH) */
    HIPDNN_ATTR_ENGINE_GLOBAL_INDEX = 501,    /* INT64: index in the loaded-engine list */
    HIPDNN_ATTR_ENGINE_ID_EXT = 502,          /* INT64: FNV-1a of the name (as int64 bits) */
    HIPDNN_ATTR_ENGINE_NAME_EXT = 503,        /* CHAR, get */
    HIPDNN_ATTR_ENGINE_MEMORY_SPACE_EXT = 504, /* INT64, get: hipdnnMemorySpace_t */

    /* ENGINECFG */
    HIPDNN_ATTR_ENGINECFG_ENGINE = 600,        /* BACKEND_DESCRIPTOR (ENGINE); get returns a new one */
    HIPDNN_ATTR_ENGINECFG_KNOB_CHOICES = 601,  /* BACKEND_DESCRIPTOR (KNOB_CHOICE), n */

    /* KNOB_CHOICE */
    HIPDNN_ATTR_KNOB_CHOICE_KNOB_TYPE = 700,  /* INT64: the engine's knob id */
    HIPDNN_ATTR_KNOB_CHOICE_KNOB_VALUE = 701, /* INT64 */

    /* EXECUTION_PLAN */
    HIPDNN_ATTR_EXECUTION_PLAN_HANDLE = 800,         /* HANDLE */
    HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG = 801,  /* BACKEND_DESCRIPTOR (ENGINECFG) */
    HIPDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE = 802, /* INT64, get */
    HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_NAME_EXT = 803, /* CHAR, get */
    HIPDNN_ATTR_EXECUTION_PLAN_MEMORY_SPACE_EXT = 804, /* INT64, get */

    /* VARIANT_PACK */
    HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS = 900,    /* INT64, n */
    HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS = 901, /* VOID_PTR, n (same order as the ids) */
    HIPDNN_ATTR_VARIANT_PACK_WORKSPACE = 902,     /* VOID_PTR, 1 */
} hipdnnBackendAttributeName_t;

typedef struct hipdnnHandle* hipdnnHandle_t;
typedef struct hipdnnBackendDescriptor* hipdnnBackendDescriptor_t;
typedef void* hipdnnStream_t; /* a hipStream_t or cudaStream_t; NULL = default stream */

/* ---- errors ---------------------------------------------------------------------- */

/* Static string naming the status ("HIPDNN_STATUS_BAD_PARAM"); never NULL. */
HIPDNN_EXPORT const char* hipdnnGetErrorString(hipdnnStatus_t status);

/* The calling thread's message for the last failing call ("" if none).  Valid until
 * the next hipdnn call on this thread. */
HIPDNN_EXPORT const char* hipdnnGetLastErrorString(void);

/* "0.1.0" */
HIPDNN_EXPORT const char* hipdnnVersionString_ext(void);

/* ---- handle ---------------------------------------------------------------------- */

/* Creates a handle.  The first handle loads the engine plugins (see below); after that
 * the plugin paths are fixed for the life of the process.  Errors: NULL_POINTER,
 * ALLOC_FAILED, PLUGIN_ERROR (no plugin could be loaded at all: the message names each
 * path and why). */
HIPDNN_EXPORT hipdnnStatus_t hipdnnCreate(hipdnnHandle_t* handle);
HIPDNN_EXPORT hipdnnStatus_t hipdnnDestroy(hipdnnHandle_t handle);
/* The stream given to every engine; plugins see it through their SetStream. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnSetStream(hipdnnHandle_t handle, hipdnnStream_t stream);
HIPDNN_EXPORT hipdnnStatus_t hipdnnGetStream(hipdnnHandle_t handle, hipdnnStream_t* stream);

/* ---- descriptors ----------------------------------------------------------------- */

HIPDNN_EXPORT hipdnnStatus_t hipdnnBackendCreateDescriptor(hipdnnBackendDescriptorType_t type,
                                                           hipdnnBackendDescriptor_t* desc);
/* Drops the caller's reference.  Descriptors referenced by others (a tensor held by an
 * operation) live until their last user is destroyed. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnBackendDestroyDescriptor(hipdnnBackendDescriptor_t desc);

/* Sets `count` values of `type` for attribute `name`.  Errors: BAD_PARAM (attribute does
 * not belong to this descriptor type, wrong type, wrong count, bad value), BAD_PARAM
 * (descriptor already finalized), NULL_POINTER.  Descriptors passed as values are
 * referenced, not copied. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnBackendSetAttribute(hipdnnBackendDescriptor_t desc,
                                                       hipdnnBackendAttributeName_t name,
                                                       hipdnnBackendAttributeType_t type,
                                                       int64_t count, const void* values);

/* Reads up to `requested` values into `values` and the number available into `*count`;
 * requested = 0 asks only for the count.  CHAR attributes are written with a NUL
 * terminator when room allows (`*count` excludes it).  Attributes that return
 * descriptors create new ones owned by the caller. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnBackendGetAttribute(hipdnnBackendDescriptor_t desc,
                                                       hipdnnBackendAttributeName_t name,
                                                       hipdnnBackendAttributeType_t type,
                                                       int64_t requested, int64_t* count,
                                                       void* values);

/* Checks the descriptor and makes it immutable.  For an OPERATIONGRAPH this validates the
 * whole graph and infers every unset dim, stride and data type (writing them back into
 * the tensor descriptors); for an ENGINEHEUR it queries every engine; for an
 * EXECUTION_PLAN it creates the engine's execution context. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnBackendFinalize(hipdnnBackendDescriptor_t desc);

/* Runs a finalized plan with a finalized variant pack on the handle's stream.  Every
 * non-virtual, non-by-value tensor of the graph needs a pointer, and each pointer must be
 * in the memory space the engine runs in.  Errors: BAD_PARAM (missing/unknown uid,
 * wrong memory space), EXECUTION_FAILED (the engine's message follows). */
HIPDNN_EXPORT hipdnnStatus_t hipdnnBackendExecute(hipdnnHandle_t handle,
                                                  hipdnnBackendDescriptor_t plan,
                                                  hipdnnBackendDescriptor_t variant_pack);

/* ---- serialization ------------------------------------------------------------- */

/* The finalized graph as FlatBuffers bytes (schema csrc/schema/graph.fbs).  Two-call
 * pattern: with data = NULL, *size receives the size. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnBackendGetSerializedBinaryGraph_ext(
    hipdnnBackendDescriptor_t graph, size_t capacity, size_t* size, uint8_t* data);

/* Creates a finalized OPERATIONGRAPH from bytes.  The bytes are verified first:
 * truncated or corrupted input gives BAD_PARAM, never a crash. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnBackendCreateAndDeserializeGraph_ext(
    hipdnnBackendDescriptor_t* graph, const uint8_t* data, size_t size);

/* ---- plugins --------------------------------------------------------------------- */

typedef enum {
    HIPDNN_PLUGIN_LOADING_ADDITIVE = 0, /* search these as well as the default folder */
    HIPDNN_PLUGIN_LOADING_ABSOLUTE = 1, /* search only these */
} hipdnnPluginLoadingMode_t;

/* Sets where engine plugins are searched for.  Each path is a plugin file or a folder
 * whose *.so files are all tried; relative paths resolve against the folder of
 * libhipdnn_backend.so.  Must be called before the first hipdnnCreate (else
 * NOT_SUPPORTED).  The default folder is hipdnn_plugins/engines/ beside the backend
 * library, or $HIPDNN_PLUGIN_DIR when set. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnSetEnginePluginPaths_ext(size_t num_paths,
                                                            const char* const* paths,
                                                            hipdnnPluginLoadingMode_t mode);

/* Paths of the plugins that loaded, two-call pattern: with paths = NULL, *num_paths gets
 * the count and *max_len the longest path's length plus one; otherwise `paths` holds
 * num_paths buffers of max_len chars each.  Loads the plugins if not yet loaded. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnGetLoadedEnginePluginPaths_ext(size_t* num_paths,
                                                                  char** paths,
                                                                  size_t* max_len);

/* Number of engines across all loaded plugins. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnGetEngineCount_ext(int64_t* count);

typedef struct {
    uint64_t engine_id;
    char name[64];
    char plugin_path[512];
    hipdnnMemorySpace_t memory_space;
    int32_t priority; /* higher ranks first under heur mode A */
    int32_t is_fallback;
} hipdnnEngineInfo_ext_t;

HIPDNN_EXPORT hipdnnStatus_t hipdnnGetEngineInfo_ext(int64_t index,
                                                     hipdnnEngineInfo_ext_t* info);

/* Plugins the loader skipped, two-call pattern as for loaded paths; each entry is
 * "path: reason". */
HIPDNN_EXPORT hipdnnStatus_t hipdnnGetSkippedEnginePlugins_ext(size_t* num, char** entries,
                                                               size_t* max_len);

/* ---- logging ----------------------------------------------------------------------- */

typedef enum {
    HIPDNN_LOG_OFF = 0,
    HIPDNN_LOG_ERROR = 1,
    HIPDNN_LOG_WARN = 2,
    HIPDNN_LOG_INFO = 3,
} hipdnnLogLevel_t;

/* Called for each message at or below the current level, possibly from any thread. */
typedef void (*hipdnnLogCallback_t)(hipdnnLogLevel_t level, const char* message,
                                    void* user_data);

/* Replaces the user callback (NULL removes it).  Messages still go to $HIPDNN_LOG_FILE
 * or stderr only when no callback is set. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnSetUserLogCallback_ext(hipdnnLogCallback_t callback,
                                                          void* user_data);
/* Overrides $HIPDNN_LOG_LEVEL (off, error, warn, info; default warn). */
HIPDNN_EXPORT hipdnnStatus_t hipdnnSetLogLevel_ext(hipdnnLogLevel_t level);

#ifdef __cplusplus
}
#endif

#endif /* HIPDNN_H */
