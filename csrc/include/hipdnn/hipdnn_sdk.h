/* hipdnn_sdk.h — what the backend and plugins share: the plain-C graph model, its
 * FlatBuffers encoding (plugins never touch FlatBuffers code), dtype helpers, fp16/bf16
 * conversion and engine-id hashing.  Linked statically (libhipdnn_sdk.a) into the
 * backend and into each plugin; nothing here is exported from a shared library.
 *
 * The graph model is read-only for plugins: hipdnnSdkGraphDecode gives a plugin a
 * graph it owns and frees with hipdnnSdkGraphFree.
 */
#ifndef HIPDNN_SDK_H
#define HIPDNN_SDK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hipdnn/hipdnn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- operations ----------------------------------------------------------------- */

typedef enum {
    HIPDNN_OP_CONV_FPROP = 1,
    HIPDNN_OP_MATMUL = 2,
    HIPDNN_OP_POINTWISE = 3,
    HIPDNN_OP_BATCHNORM_INFERENCE = 4,
} hipdnnOpKind_t;

#define HIPDNN_MAX_PORTS 8

/* Port indices, per op.  A node's inputs[]/outputs[] hold tensor uids by port. */
enum { HIPDNN_CONV_X = 0, HIPDNN_CONV_W = 1, HIPDNN_CONV_Y = 0 };
enum { HIPDNN_MATMUL_A = 0, HIPDNN_MATMUL_B = 1, HIPDNN_MATMUL_C = 0 };
enum { HIPDNN_PW_X = 0, HIPDNN_PW_B = 1, HIPDNN_PW_Y = 0 };
enum {
    HIPDNN_BN_X = 0,
    HIPDNN_BN_MEAN = 1,
    HIPDNN_BN_INV_VARIANCE = 2,
    HIPDNN_BN_SCALE = 3,
    HIPDNN_BN_BIAS = 4,
    HIPDNN_BN_Y = 0
};

/* A port with no tensor. */
#define HIPDNN_NO_TENSOR INT64_MIN

typedef struct {
    hipdnnOpKind_t kind;
    const char* name;                         /* "conv_fprop" */
    int32_t num_inputs, num_outputs;          /* ports defined */
    int32_t min_inputs;                       /* ports that must be set */
    const char* input_names[HIPDNN_MAX_PORTS]; /* "x", "w" */
    const char* output_names[HIPDNN_MAX_PORTS];
} hipdnnSdkOpInfo;

/* NULL for an unknown kind. */
const hipdnnSdkOpInfo* hipdnnSdkOpInfoGet(hipdnnOpKind_t kind);
/* "relu", "add", ...; NULL for an unknown mode. */
const char* hipdnnSdkPointwiseModeName(hipdnnPointwiseMode_t mode);
/* 1 or 2 inputs; 0 for an unknown mode. */
int hipdnnSdkPointwiseArity(hipdnnPointwiseMode_t mode);

/* ---- graph model -------------------------------------------------------------------- */

typedef struct {
    int64_t uid;
    char* name; /* never NULL; "" if unnamed */
    hipdnnDataType_t data_type;
    int32_t ndim; /* 0 = dims not known yet (only before inference) */
    int64_t dims[HIPDNN_MAX_DIMS];
    int64_t strides[HIPDNN_MAX_DIMS]; /* in elements */
    bool is_virtual;
    bool is_by_value;
    uint8_t value[8]; /* the scalar when is_by_value, in data_type's encoding */
} hipdnnSdkTensor;

typedef struct {
    hipdnnOpKind_t kind;
    char* name; /* never NULL */
    hipdnnDataType_t compute_type;
    int64_t inputs[HIPDNN_MAX_PORTS];  /* uids, HIPDNN_NO_TENSOR where unset */
    int64_t outputs[HIPDNN_MAX_PORTS];
    /* Parameters; each op reads those it has. */
    int32_t mode;           /* pointwise: hipdnnPointwiseMode_t */
    int32_t conv_mode;      /* conv: hipdnnConvolutionMode_t */
    int32_t num_spatial;    /* conv: entries in the four arrays below */
    int64_t pre_padding[HIPDNN_MAX_SPATIAL];
    int64_t post_padding[HIPDNN_MAX_SPATIAL];
    int64_t stride[HIPDNN_MAX_SPATIAL];
    int64_t dilation[HIPDNN_MAX_SPATIAL];
    double lower_clip;       /* relu: default 0 */
    double upper_clip;       /* relu: default +inf */
    double lower_clip_slope; /* relu: default 0 */
} hipdnnSdkNode;

typedef struct {
    char* name;
    int32_t num_tensors;
    hipdnnSdkTensor* tensors;
    int32_t num_nodes;
    hipdnnSdkNode* nodes; /* in topological order once validated */
} hipdnnSdkGraph;

/* Fills a node with defaults: every port HIPDNN_NO_TENSOR, clips 0/+inf/0, name "". */
void hipdnnSdkNodeInit(hipdnnSdkNode* node, hipdnnOpKind_t kind);

/* Lookup by uid; NULL if absent. */
const hipdnnSdkTensor* hipdnnSdkGraphFindTensor(const hipdnnSdkGraph* graph, int64_t uid);

/* Frees everything a graph owns, and the graph itself.  NULL is a no-op. */
void hipdnnSdkGraphFree(hipdnnSdkGraph* graph);

/* Deep copy; NULL on allocation failure. */
hipdnnSdkGraph* hipdnnSdkGraphClone(const hipdnnSdkGraph* graph);

/* Encodes a graph as FlatBuffers bytes (deterministic: the same graph gives the same
 * bytes).  *data is malloc'd, freed by the caller with free().  0 on success, -1 on
 * allocation failure. */
int hipdnnSdkGraphEncode(const hipdnnSdkGraph* graph, uint8_t** data, size_t* size);

/* Verifies then decodes bytes.  On failure returns NULL and writes a one-line reason
 * into err (if err_len > 0). */
hipdnnSdkGraph* hipdnnSdkGraphDecode(const uint8_t* data, size_t size, char* err,
                                     size_t err_len);

/* ---- engine configs (engine id + knob values) ------------------------------------ */

typedef struct {
    int64_t knob_id;
    int64_t value;
} hipdnnSdkKnobChoice;

typedef struct {
    uint64_t engine_id;
    int32_t num_knobs;
    hipdnnSdkKnobChoice* knobs;
} hipdnnSdkEngineConfig;

int hipdnnSdkEngineConfigEncode(const hipdnnSdkEngineConfig* cfg, uint8_t** data,
                                size_t* size);
/* Caller frees with hipdnnSdkEngineConfigFree. */
hipdnnSdkEngineConfig* hipdnnSdkEngineConfigDecode(const uint8_t* data, size_t size,
                                                   char* err, size_t err_len);
void hipdnnSdkEngineConfigFree(hipdnnSdkEngineConfig* cfg);

/* ---- data types ------------------------------------------------------------------ */

/* Bytes per element; 0 for NOT_SET or unknown. */
size_t hipdnnSdkDataTypeSize(hipdnnDataType_t t);
/* "float32", "float16", "bfloat16", ...; "unknown" otherwise. */
const char* hipdnnSdkDataTypeName(hipdnnDataType_t t);

/* IEEE binary16 and bfloat16, round to nearest even; NaN stays NaN. */
uint16_t hipdnnSdkFloatToHalf(float f);
float hipdnnSdkHalfToFloat(uint16_t h);
uint16_t hipdnnSdkFloatToBfloat16(float f);
float hipdnnSdkBfloat16ToFloat(uint16_t b);
/* A double correctly rounded to binary16 / bfloat16 in one step (nearest, ties to even),
 * not through float, whose own rounding could land on a tie and round a second time.
 * Overflow gives infinity, below half the smallest subnormal gives zero, the sign of zero
 * is kept, and NaN gives a quiet NaN of the same sign. */
uint16_t hipdnnSdkDoubleToHalf(double d);
uint16_t hipdnnSdkDoubleToBfloat16(double d);

/* Reads element `index` (in elements from ptr) of a float/half/bf16/double/int tensor as
 * double, and writes one; for the reference engine and tests. */
double hipdnnSdkLoadAsDouble(const void* ptr, hipdnnDataType_t t, int64_t index);
void hipdnnSdkStoreFromDouble(void* ptr, hipdnnDataType_t t, int64_t index, double v);

/* Packed row-major strides for dims (strides[i] = product of dims[i+1..]). */
void hipdnnSdkPackedStrides(int32_t ndim, const int64_t* dims, int64_t* strides);
/* Number of elements; 1 for ndim 0. */
int64_t hipdnnSdkElementCount(int32_t ndim, const int64_t* dims);

/* ---- engine ids --------------------------------------------------------------------- */

/* 64-bit FNV-1a of a NUL-terminated string; engine ids are this hash of the name. */
uint64_t hipdnnSdkFnv1a64(const char* s);

/* snprintf into a fixed buffer, never overflowing, always terminated. */
void hipdnnSdkFormat(char* buf, size_t len, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#ifdef __cplusplus
}
#endif

#endif /* HIPDNN_SDK_H */
