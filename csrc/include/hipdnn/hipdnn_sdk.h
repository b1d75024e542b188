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

/* ---- operations ------------------------------------------------------------------
 * One table (op_table.c) describes every operation: the public part is hipdnn.h's
 * hipdnnOpInfo_ext_t; the SDK adds each op's inference rule.  Op kinds are the numbers
 * serialized in graph bytes and the union tags of graph.fbs, in the same order. */

typedef enum {
    HIPDNN_OP_CONV_FPROP = 1,
    HIPDNN_OP_MATMUL = 2,
    HIPDNN_OP_POINTWISE = 3,
    HIPDNN_OP_BATCHNORM_INFERENCE = 4,
    HIPDNN_OP_REDUCTION = 5,
    HIPDNN_OP_NORM_FORWARD = 6,
    HIPDNN_OP_CONV_DGRAD = 7,
    HIPDNN_OP_CONV_WGRAD = 8,
    HIPDNN_OP_SLICE = 9,
    HIPDNN_OP_CONCATENATE = 10,
    HIPDNN_OP_NORM_BACKWARD = 11,
    HIPDNN_OP_GENSTATS = 12,
    HIPDNN_OP_RESAMPLE_FWD = 13,
    HIPDNN_OP_RESAMPLE_BWD = 14,
    HIPDNN_OP_RESHAPE = 15,
    HIPDNN_OP_SDPA_FWD = 16,
    HIPDNN_OP_SDPA_BWD = 17,
} hipdnnOpKind_t;

/* Port indices, per op: node->inputs[] / outputs[] hold tensor uids in table order. */
enum { HIPDNN_CONV_X = 0, HIPDNN_CONV_W = 1, HIPDNN_CONV_Y = 0 };
enum { HIPDNN_DGRAD_DY = 0, HIPDNN_DGRAD_W = 1, HIPDNN_DGRAD_DX = 0 };
enum { HIPDNN_WGRAD_X = 0, HIPDNN_WGRAD_DY = 1, HIPDNN_WGRAD_DW = 0 };
enum { HIPDNN_MATMUL_A = 0, HIPDNN_MATMUL_B = 1, HIPDNN_MATMUL_C = 0 };
/* Pointwise: which of these a mode uses, hipdnnSdkPointwisePortsOf says. */
enum { HIPDNN_PW_X = 0, HIPDNN_PW_B = 1, HIPDNN_PW_DY = 2, HIPDNN_PW_T = 3 };
enum { HIPDNN_PW_Y = 0, HIPDNN_PW_DX = 1 };
enum {
    HIPDNN_BN_X = 0,
    HIPDNN_BN_MEAN = 1,
    HIPDNN_BN_INV_VARIANCE = 2,
    HIPDNN_BN_SCALE = 3,
    HIPDNN_BN_BIAS = 4,
    HIPDNN_BN_Y = 0
};
enum { HIPDNN_RED_X = 0, HIPDNN_RED_Y = 0 };
enum {
    HIPDNN_NORM_X = 0,
    HIPDNN_NORM_SCALE = 1,
    HIPDNN_NORM_BIAS = 2,
    HIPDNN_NORM_EPSILON = 3,
    HIPDNN_NORM_EXP_AVG_FACTOR = 4,
    HIPDNN_NORM_IN_RUNNING_MEAN = 5,
    HIPDNN_NORM_IN_RUNNING_VAR = 6
};
enum {
    HIPDNN_NORM_Y = 0,
    HIPDNN_NORM_MEAN = 1,
    HIPDNN_NORM_INV_VARIANCE = 2,
    HIPDNN_NORM_OUT_RUNNING_MEAN = 3,
    HIPDNN_NORM_OUT_RUNNING_VAR = 4
};
/* Attribute slots, per op: node->attrs[] in table order (conv_dgrad and conv_wgrad have
 * conv_fprop's). */
enum {
    HIPDNN_CONV_PRE_PADDING = 0,
    HIPDNN_CONV_POST_PADDING = 1,
    HIPDNN_CONV_STRIDE = 2,
    HIPDNN_CONV_DILATION = 3,
    HIPDNN_CONV_MODE = 4
};
enum {
    HIPDNN_PW_MODE = 0,
    HIPDNN_PW_RELU_LOWER_CLIP = 1,
    HIPDNN_PW_RELU_UPPER_CLIP = 2,
    HIPDNN_PW_RELU_LOWER_CLIP_SLOPE = 3,
    HIPDNN_PW_ELU_ALPHA = 4,
    HIPDNN_PW_SOFTPLUS_BETA = 5,
    HIPDNN_PW_SWISH_BETA = 6,
    HIPDNN_PW_AXIS = 7
};
enum { HIPDNN_RED_MODE = 0 };
enum { HIPDNN_SLICE_START = 0, HIPDNN_SLICE_LIMIT = 1, HIPDNN_SLICE_STEP = 2 };
enum { HIPDNN_CONCAT_AXIS = 0, HIPDNN_CONCAT_INPLACE_INDEX = 1 };
enum { HIPDNN_NORM_MODE = 0, HIPDNN_NORM_PHASE = 1, HIPDNN_NORM_ZERO_CENTERED_GAMMA = 2 };
/* norm_backward: ports, then attribute slots. */
enum {
    HIPDNN_NBWD_X = 0,
    HIPDNN_NBWD_DY = 1,
    HIPDNN_NBWD_SCALE = 2,
    HIPDNN_NBWD_MEAN = 3,
    HIPDNN_NBWD_INV_VARIANCE = 4
};
enum { HIPDNN_NBWD_DX = 0, HIPDNN_NBWD_DSCALE = 1, HIPDNN_NBWD_DBIAS = 2 };
enum { HIPDNN_NBWD_MODE = 0, HIPDNN_NBWD_ZERO_CENTERED_GAMMA = 1 };
/* genstats */
enum { HIPDNN_GENSTATS_X = 0, HIPDNN_GENSTATS_SUM = 0, HIPDNN_GENSTATS_SQSUM = 1 };
enum { HIPDNN_GENSTATS_MODE_SLOT = 0 };
/* resample_fwd and resample_bwd: ports, then the attribute slots they share. */
enum { HIPDNN_RSF_X = 0, HIPDNN_RSF_Y = 0, HIPDNN_RSF_IDX = 1 };
enum { HIPDNN_RSB_DY = 0, HIPDNN_RSB_X = 1, HIPDNN_RSB_Y = 2, HIPDNN_RSB_IDX = 3 };
enum { HIPDNN_RSB_DX = 0 };
enum {
    HIPDNN_RS_MODE = 0,
    HIPDNN_RS_PADDING_MODE = 1,
    HIPDNN_RS_WINDOW = 2,
    HIPDNN_RS_STRIDE = 3,
    HIPDNN_RS_PRE_PADDING = 4,
    HIPDNN_RS_POST_PADDING = 5
};
/* reshape */
enum { HIPDNN_RESHAPE_X = 0, HIPDNN_RESHAPE_Y = 0, HIPDNN_RESHAPE_MODE_SLOT = 0 };
/* sdpa_fwd and sdpa_bwd: ports, then the attribute slots both have. */
enum {
    HIPDNN_SDPA_Q = 0,
    HIPDNN_SDPA_K = 1,
    HIPDNN_SDPA_V = 2,
    HIPDNN_SDPA_ATTN_SCALE = 3,
    HIPDNN_SDPA_BIAS = 4,
    HIPDNN_SDPA_SEQ_LEN_Q = 5,
    HIPDNN_SDPA_SEQ_LEN_KV = 6,
    HIPDNN_SDPA_PAGE_TABLE_K = 7, /* added after format 2: after the parameters in graph.fbs */
    HIPDNN_SDPA_PAGE_TABLE_V = 8,
    HIPDNN_SDPA_SEED = 9,
    HIPDNN_SDPA_OFFSET = 10
};
enum { HIPDNN_SDPA_O = 0, HIPDNN_SDPA_STATS = 1, HIPDNN_SDPA_RNG_DUMP = 2 /* added after 2 */ };
enum {
    HIPDNN_SDPA_BWD_Q = 0,
    HIPDNN_SDPA_BWD_K = 1,
    HIPDNN_SDPA_BWD_V = 2,
    HIPDNN_SDPA_BWD_O = 3,
    HIPDNN_SDPA_BWD_DO = 4,
    HIPDNN_SDPA_BWD_STATS = 5,
    HIPDNN_SDPA_BWD_ATTN_SCALE = 6,
    HIPDNN_SDPA_BWD_BIAS = 7,
    HIPDNN_SDPA_BWD_SEQ_LEN_Q = 8,
    HIPDNN_SDPA_BWD_SEQ_LEN_KV = 9,
    HIPDNN_SDPA_BWD_SEED = 10, /* added after format 2 */
    HIPDNN_SDPA_BWD_OFFSET = 11
};
enum { HIPDNN_SDPA_BWD_DQ = 0, HIPDNN_SDPA_BWD_DK = 1, HIPDNN_SDPA_BWD_DV = 2 };
enum {
    HIPDNN_SDPA_ALIGNMENT = 0,
    HIPDNN_SDPA_LEFT_BOUND = 1,
    HIPDNN_SDPA_RIGHT_BOUND = 2,
    HIPDNN_SDPA_PADDING = 3,
    HIPDNN_SDPA_ALIBI = 4,
    HIPDNN_SDPA_MAX_SEQ_LEN_KV = 5,
    HIPDNN_SDPA_DROPOUT = 6 /* DOUBLE: the dropout probability */
};

/* A port with no tensor. */
#define HIPDNN_NO_TENSOR INT64_MIN

typedef hipdnnOpInfo_ext_t hipdnnSdkOpInfo;

/* NULL for an unknown kind. */
const hipdnnSdkOpInfo* hipdnnSdkOpInfoGet(hipdnnOpKind_t kind);
/* The table: *count entries. */
const hipdnnSdkOpInfo* hipdnnSdkOpTable(int32_t* count);
/* The op whose descriptor type this is; NULL if none. */
const hipdnnSdkOpInfo* hipdnnSdkOpInfoForDescriptor(hipdnnBackendDescriptorType_t type);
/* "relu", "add", ...; NULL for an unknown mode. */
const char* hipdnnSdkPointwiseModeName(hipdnnPointwiseMode_t mode);
/* "add", ..., "mul_no_zeros" for a reduction mode; "layernorm", "rmsnorm", ... for a
 * norm_forward mode (messages call the node by it); NULL when unknown. */
const char* hipdnnSdkReductionModeName(int64_t mode);
const char* hipdnnSdkNormModeName(int64_t mode);
/* "layernorm_backward", ... for a norm_backward mode. */
const char* hipdnnSdkNormBackwardName(int64_t mode);
/* 1, 2 or 3 inputs; 0 for an unknown mode. */
int hipdnnSdkPointwiseArity(hipdnnPointwiseMode_t mode);
/* The _BWD modes: dx = dy * f'(x). */
bool hipdnnSdkPointwiseIsBackward(hipdnnPointwiseMode_t mode);
/* CMP_* and LOGICAL_*: results are 0 or 1, BOOLEAN unless the output says otherwise. */
bool hipdnnSdkPointwiseIsLogical(hipdnnPointwiseMode_t mode);

/* The ports a pointwise mode uses, as cuDNN's backend lays them out: its operands in the
 * order its function takes them (x; then b, or dy for the _BWD modes; then t) as input
 * port indices, -1 past the arity, and its output port (y, or dx for the _BWD modes). */
typedef struct {
    int arity;
    int inputs[3];
    int output;
} hipdnnSdkPointwisePorts;
/* False (arity 0) for an unknown mode. */
bool hipdnnSdkPointwisePortsOf(hipdnnPointwiseMode_t mode, hipdnnSdkPointwisePorts* ports);
/* The uid of operand k (0 <= k < arity) of a pointwise node, and of its output;
 * HIPDNN_NO_TENSOR for an unknown mode or k past the arity. */
struct hipdnnSdkNode_s;
int64_t hipdnnSdkPointwiseOperand(const struct hipdnnSdkNode_s* n, int k);
int64_t hipdnnSdkPointwiseOutput(const struct hipdnnSdkNode_s* n);
/* Checks which ports of a pointwise node are set (bit p of in_set / out_set for port p)
 * against what its mode uses: each used port set, no other.  False with "<label>: input
 * 'b' is not set (add takes 2 inputs)" or the like in err. */
bool hipdnnSdkPointwiseCheckPorts(hipdnnPointwiseMode_t mode, unsigned in_set, unsigned out_set,
                                  const char* label, char* err, size_t len);

/* graph.fbs field index of an op's input port, output port or parameter `index`
 * (inputs, outputs and parameters as format 2 first numbered them; ports added since
 * after the parameters: the schema is append-only). */
typedef enum { HIPDNN_SDK_FIELD_INPUT, HIPDNN_SDK_FIELD_OUTPUT, HIPDNN_SDK_FIELD_PARAM }
    hipdnnSdkFieldKind;
int hipdnnSdkOpFieldIndex(const hipdnnSdkOpInfo* info, hipdnnSdkFieldKind what, int index);
/* Whether `v` is a defined value of an enum attribute type (DATA_TYPE, HEUR_MODE and the
 * _EXT mode types). */
bool hipdnnSdkEnumValid(hipdnnBackendAttributeType_t type, int64_t v);

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
    bool has_value;   /* by-value: a constant in the graph; else given at execute time */
    uint8_t value[8]; /* the constant when has_value, in data_type's encoding */
    /* Ragged (sdpa only): the uid of an int32 / int64 [B + 1, 1, 1, 1] tensor; sample b
     * starts at element offset[b], which replaces b * strides[0]. */
    bool has_ragged_offset;
    int64_t ragged_offset;
} hipdnnSdkTensor;

/* One parameter of a node.  Integer kinds (INT64, INT64_LIST, ENUM, BOOLEAN) use i[],
 * DOUBLE uses d.  count is how many values were set (0: unset, the defaults stand);
 * hipdnnSdkNodeInit fills every value with its default, so readers need not look. */
typedef struct {
    int32_t count;
    int64_t i[HIPDNN_MAX_ATTR_VALUES];
    double d;
} hipdnnSdkAttrValue;

typedef struct hipdnnSdkNode_s {
    hipdnnOpKind_t kind;
    char* name; /* never NULL */
    hipdnnDataType_t compute_type;
    int64_t inputs[HIPDNN_MAX_PORTS];  /* uids, HIPDNN_NO_TENSOR where unset */
    int64_t outputs[HIPDNN_MAX_PORTS];
    hipdnnSdkAttrValue attrs[HIPDNN_MAX_OP_ATTRS]; /* by the op's attribute slots */
} hipdnnSdkNode;

typedef struct {
    char* name;
    int32_t num_tensors;
    hipdnnSdkTensor* tensors;
    int32_t num_nodes;
    hipdnnSdkNode* nodes; /* in topological order once validated */
} hipdnnSdkGraph;

/* The pointwise mode of a pointwise node (for readability at call sites). */
static inline hipdnnPointwiseMode_t hipdnnSdkNodeMode(const hipdnnSdkNode* n) {
    return (hipdnnPointwiseMode_t)n->attrs[HIPDNN_PW_MODE].i[0];
}

/* Inference rule of the node's op: checks the node's tensors and fills its outputs' dims,
 * strides and data types.  Inputs are complete when it runs (topological order).  On
 * failure writes "<label>: <what is wrong, expected and actual>" into err.  `map` indexes
 * g's tensors (hipdnnSdkUidMapBuild). */
struct hipdnnSdkUidMap; /* below, with the graph model */
bool hipdnnSdkInferNode(hipdnnSdkGraph* g, const struct hipdnnSdkUidMap* map, hipdnnSdkNode* n,
                        char* err, size_t err_len);
/* The axes a norm_forward or norm_backward node normalizes over (its statistics have size 1 there), from
 * its mode and the dims of x and scale: LAYER, RMS and ADA_LAYER the axes from 1 on where
 * scale spans x; INSTANCE the axes from 2 on; BATCH every axis but 1.  axes[i] is set for
 * i < x->ndim; returns how many are set.  Only for nodes that passed inference. */
int hipdnnSdkNormAxes(const hipdnnSdkNode* n, const hipdnnSdkTensor* x,
                      const hipdnnSdkTensor* scale, bool* axes);

/* "conv_fprop 'conv1'" or "relu 'r'" for messages. */
const char* hipdnnSdkNodeLabel(const hipdnnSdkNode* n, char* buf, size_t len);

/* Fills a node with its op's defaults: every port HIPDNN_NO_TENSOR, every parameter value
 * its default with count 0, compute type NOT_SET, name NULL. */
void hipdnnSdkNodeInit(hipdnnSdkNode* node, hipdnnOpKind_t kind);

/* Lookup by uid; NULL if absent.  Linear: callers that look up often build a map. */
const hipdnnSdkTensor* hipdnnSdkGraphFindTensor(const hipdnnSdkGraph* graph, int64_t uid);

/* uid -> tensor index in constant time, for code that looks up every port of every node.
 * The map points into the graph, which must outlive it and keep its tensors. */
typedef struct hipdnnSdkUidMap {
    int32_t cap;    /* slots, a power of two, at least twice the tensor count */
    int32_t* slot;  /* tensor index, -1 empty */
    const hipdnnSdkGraph* g;
    uint64_t seed;  /* keys the hash (chosen uids must not collide) */
} hipdnnSdkUidMap;
/* An empty map sized for g; false on allocation failure. */
bool hipdnnSdkUidMapInit(hipdnnSdkUidMap* m, const hipdnnSdkGraph* g);
/* Adds tensor `index`; returns -1, or the index already holding its uid (then nothing is
 * added). */
int32_t hipdnnSdkUidMapInsert(hipdnnSdkUidMap* m, int32_t index);
/* Init plus every tensor (the first of duplicate uids wins); false on allocation failure. */
bool hipdnnSdkUidMapBuild(hipdnnSdkUidMap* m, const hipdnnSdkGraph* g);
/* The tensor index of `uid`; -1 if absent. */
int32_t hipdnnSdkUidMapFind(const hipdnnSdkUidMap* m, int64_t uid);
void hipdnnSdkUidMapFree(hipdnnSdkUidMap* m);

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
/* Whether two elements may share an address: true unless, taking the dims larger than 1
 * by increasing stride, each stride steps past all the smaller dims reach. */
bool hipdnnSdkStridesOverlap(int32_t ndim, const int64_t* dims, const int64_t* strides);
/* The elements a tensor's strides reach, 1 + sum((dims[i] - 1) * strides[i]), into *span
 * (0 when a dim is 0); false when a dim or stride is negative or the sum passes int64. */
bool hipdnnSdkSpanElements(int32_t ndim, const int64_t* dims, const int64_t* strides,
                           int64_t* span);
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

/* An engine's reason to decline, "who: <fmt...>", into why: truncated to len, always
 * terminated, newlines and tabs folded to spaces (names may hold them; a reason is one
 * line).  who may be NULL (no prefix).  Returns false: `return hipdnnSdkDecline(...)`. */
bool hipdnnSdkDecline(char* why, size_t len, const char* who, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* ---- cache folders ------------------------------------------------------------------ */

/* hipdnn's cache folder for one kind of entry (sub: "plans", "kernels", ...) into dir:
 * $HIPDNN_CACHE_DIR/sub, else $XDG_CACHE_HOME/hipdnn/sub, else $HOME/.cache/hipdnn/sub.
 * False, with the reason in why, when HIPDNN_CACHE=0, none of those is set, or the path
 * does not fit.  Nothing is created. */
bool hipdnnSdkCacheDir(const char* sub, char* dir, size_t len, char* why, size_t why_len);

/* mkdir -p dir, each new folder private to the user (caches hold code a process runs);
 * false with the reason in why when a part cannot be made or dir is not a folder. */
bool hipdnnSdkMakeDirs(const char* dir, char* why, size_t why_len);

#ifdef __cplusplus
}
#endif

#endif /* HIPDNN_SDK_H */
