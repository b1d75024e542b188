/* cudnn.h — what the cudnn engine's files share: the libraries it opens (cudnn_load.c),
 * the graph it translates into cuDNN's backend descriptors (cudnn_graph.c) and the
 * execution plan it builds from cuDNN's heuristics (cudnn_plan.c); cudnn.c holds the
 * plugin ABI's entry points. */
#ifndef HIPDNN_CUDNN_H
#define HIPDNN_CUDNN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cudnn_api.h"
#include "hipdnn/hipdnn_sdk.h"
#include "hipdnn/hipdnn_sdk_plugin.h"
#include "hipdnn/hipdnn_sdk_vendor.h"

#define CUDNN_ENGINE_NAME "cudnn"
#define CUDNN_PLUGIN_VERSION "0.1.0"
/* Below the hip engine's 100 (hipdnn's own kernels stay the default where both run a
 * graph, until engines are ranked by measured speed, issue 29) and below blaslt's 50 (a
 * plain matmul goes to the engine made for it); above reference_cpu's 0.  Chosen by name
 * with set_preferred_engine("cudnn"), left out with deselect_engines. */
#define CUDNN_PRIORITY 40
#define CUDNN_MSG_LEN HIPDNN_SDK_PLUGIN_MSG_LEN
/* cuDNN 9.0, the first with cudnnGetLastErrorString and the backend API in libcudnn.so.9. */
#define CUDNN_MIN_VERSION 90000
/* How many of the heuristic's engine configs the ENGINE_CONFIG knob chooses among. */
#define CUDNN_MAX_CONFIGS 16
/* The knob: cuDNN frontend's KnobType_t KERNEL_CFG (hipdnn.knob_type.KERNEL_CFG), as the
 * blaslt engine numbers its algorithm knob. */
#define CUDNN_KNOB_ENGINE_CONFIG 12
/* The byte alignment the plan is built for: every tensor pointer must have it at execute. */
#define CUDNN_ALIGNMENT 16

/* ---- the libraries (cudnn_load.c) ------------------------------------------------------ */

extern cd_api g_cd; /* filled once, by cudnn_load */

/* Once per process: the CUDA driver with a device, then cuDNN (the first candidate that
 * opens, whole and new enough).  False with one line saying what was looked for and what
 * went wrong, "cudnn: ..." (GetAllEngineIds declines loading with it). */
bool cudnn_load(char* why, size_t len);
/* "libcudnn.so.9 (cuDNN 9.19.0)": what cudnn_load opened, for the log. */
const char* cudnn_library(void);
/* Makes `device`'s primary context current on this thread, *saved the one that was
 * (hipdnnSdkCudaEnter); cudnn_leave gives it back. */
static inline bool cudnn_enter(int device, cd_cu_context* saved, char* why, size_t len) {
    return hipdnnSdkCudaEnter(CUDNN_ENGINE_NAME, device, saved, why, len);
}
#define cudnn_leave hipdnnSdkCudaLeave
/* "CUDNN_STATUS_NOT_SUPPORTED (3000): <cuDNN's last error message>" into buf: call right
 * after the failing call, on its thread. */
const char* cudnn_status_text(cd_status st, char* buf, size_t len);

/* ---- the graph, as cuDNN backend descriptors (cudnn_graph.c) ----------------------------- */

/* A tensor the variant pack carries: a graph tensor that is not virtual, or one the
 * translation keeps in the workspace. */
typedef struct {
    int64_t uid;
    bool by_value;     /* a host pointer to its value */
    bool has_value;    /* a constant of the graph: `value` is what the pack points at */
    bool in_workspace; /* at workspace + offset (cudnn_sdpa_backward.c's accumulators) */
    size_t offset;
    uint8_t value[8];
    char name[64];
} cd_io;

/* Workspace tensors are aligned so, whatever the type before them. */
#define CUDNN_WORKSPACE_ALIGNMENT 256

typedef struct {
    cd_desc* descs; /* every descriptor made, destroyed in reverse */
    int num_descs, cap_descs;
    cd_desc op_graph; /* finalized */
    cd_io* io;
    int num_io, cap_io;
    size_t workspace; /* bytes of the workspace tensors, before the plan's own workspace */
    char what[300];   /* "conv_fprop 'conv' + add 'bias' + relu 'act'" */
    bool fp32_product; /* a convolution or matmul reads fp32: no TF32 engine config */
} cd_graph;

/* The cuDNN handle of a plugin handle (`owner`), made on first need; NULL with `why`. */
typedef cd_handle (*cd_handle_fn)(void* owner, char* why, size_t len);
/* Translates g into cuDNN's backend descriptors (the device current) and finalizes its
 * operation graph on handle(owner), asked for only once every node translated; false with
 * the reason ("cudnn: node 'x' (kind): ..." or cuDNN's own message). */
bool cudnn_graph_make(cd_handle_fn handle, void* owner, const hipdnnSdkGraph* g, cd_graph* out,
                      char* why, size_t len);
void cudnn_graph_free(cd_graph* graph);
/* A descriptor of `type` owned by graph (destroyed with it); false with the reason. */
bool cudnn_graph_desc(cd_graph* graph, int type, cd_desc* out, char* why, size_t len);

/* ---- the translation's building blocks (cudnn_graph.c), for a node that becomes several
 * cuDNN operations (cudnn_sdpa.c) ---------------------------------------------------------- */

typedef struct {
    const hipdnnSdkTensor* t;
    cd_desc desc;
} cd_tensor_slot;

typedef struct {
    const hipdnnSdkGraph* g;
    cd_graph* out;
    int rank;              /* every tensor's, padded by leading dims of 1 */
    cd_tensor_slot* slots; /* one per graph tensor, made when first used */
    cd_desc* ops;          /* the operations, in the order made */
    int num_ops, cap_ops;
    int64_t next_uid;      /* for tensors the translation adds: past every graph uid */
    char* why;
    size_t len;
} cd_builder;

/* A tensor the translation makes: a virtual intermediate, a by-value constant, or a graph
 * tensor seen with other dims and strides (k as k^T); rank b->rank. */
typedef struct {
    int64_t uid; /* 0: a new uid */
    hipdnnDataType_t type;
    int64_t dims[HIPDNN_MAX_DIMS], strides[HIPDNN_MAX_DIMS];
    bool is_virtual, by_value, has_value;
    bool in_workspace; /* not virtual, in the workspace the plan asks for (packed dims) */
    uint8_t value[8]; /* a constant's, for the variant pack */
    const char* name;
} cd_tensor_spec;

/* The index of graph tensor uid in b's slots (its descriptor, once made), or -1 having
 * declined saying it is not in the graph. */
int cudnn_tensor_slot(cd_builder* b, int64_t uid, const char* label);
/* The TENSOR descriptor of graph tensor uid (made once), or NULL with the reason. */
cd_desc cudnn_tensor(cd_builder* b, int64_t uid, const char* label);
cd_desc cudnn_new_tensor(cd_builder* b, const cd_tensor_spec* spec, const char* label);
/* Operations, appended to b->ops: NULL with the reason.  axis < 0: none (GEN_INDEX's). */
cd_desc cudnn_pointwise(cd_builder* b, int mode, int32_t prec, int64_t axis, cd_desc x,
                        cd_desc bb, cd_desc t, cd_desc y, const char* label);
cd_desc cudnn_matmul(cd_builder* b, cd_desc a, cd_desc bb, cd_desc c, const char* label);
cd_desc cudnn_reduction(cd_builder* b, int mode, cd_desc x, cd_desc y, const char* label);
/* y = x described by y's dims and strides (a transpose, as cuDNN frontend's reshape). */
cd_desc cudnn_reshape(cd_builder* b, cd_desc x, cd_desc y, const char* label);

/* op appended to b->ops (a finalized operation descriptor of b->out); NULL with the reason. */
cd_desc cudnn_graph_add_op(cd_builder* b, cd_desc op);

/* norm_forward, batchnorm_inference and norm_backward as one cuDNN NORM_FORWARD /
 * NORM_BACKWARD operation (cudnn_norm.c); false with the reason naming the node. */
bool cudnn_norm_fwd(cd_builder* b, const hipdnnSdkNode* n, const char* label);
bool cudnn_batchnorm_inference(cd_builder* b, const hipdnnSdkNode* n, const char* label);
bool cudnn_norm_bwd(cd_builder* b, const hipdnnSdkNode* n, const char* label);

/* sdpa_fwd as cuDNN frontend builds its attention node from backend operations
 * (cudnn_sdpa.c); false with the reason naming the node. */
bool cudnn_sdpa_fwd(cd_builder* b, const hipdnnSdkNode* n, const char* label);
/* sdpa_bwd likewise, as cuDNN frontend builds its sdpa_backward node
 * (cudnn_sdpa_backward.c). */
bool cudnn_sdpa_bwd(cd_builder* b, const hipdnnSdkNode* n, const char* label);

/* ---- what both directions of attention share (cudnn_sdpa.c) ------------------------------ */

typedef struct {
    const hipdnnSdkTensor *q, *k, *v, *o, *stats;
    int64_t s_dims[4];   /* [B, H_q, S_q, S_kv] */
    int64_t row_dims[4]; /* [B, H_q, S_q, 1] */
    bool bottom_right;
    int64_t left, right; /* hipdnn's bounds: left 0 and right -1 are none */
    const char* label;
} cd_attention;

/* A packed virtual tensor of dims; a by-value constant (the variant pack points at it). */
cd_desc cudnn_sdpa_virtual(cd_builder* b, hipdnnDataType_t type, const int64_t dims[4],
                           const char* name, const char* label);
cd_desc cudnn_sdpa_constant(cd_builder* b, hipdnnDataType_t type, double value,
                            const char* name, const char* label);
/* y = mode(x, operand) into a new virtual tensor of type and dims (NULL operands: NULL). */
cd_desc cudnn_sdpa_binary(cd_builder* b, int mode, cd_desc x, cd_desc operand,
                          hipdnnDataType_t type, const int64_t dims[4], const char* name,
                          const char* label);
/* s masked (-inf) outside a's band: its right bound, then its left, as cuDNN frontend's
 * sliding_window_mask; s itself without bounds. */
cd_desc cudnn_sdpa_band(cd_builder* b, const cd_attention* a, cd_desc s);
/* a's score and row dims ([B, H_q, S_q, S_kv], [B, H_q, S_q, 1]) and node n's band (its
 * alignment; bounds past both lengths clamped); the first query row the band leaves no
 * key, or -1. */
int64_t cudnn_sdpa_shape(cd_attention* a, const hipdnnSdkNode* n);

/* ---- heuristics and the plan (cudnn_plan.c) ---------------------------------------------- */

typedef struct {
    cd_desc plan;        /* finalized; owned by the graph's descriptor list */
    int offered;         /* engine configs cuDNN's heuristic offered */
    int tried;           /* configs tried before the chosen one built */
    int64_t engine;      /* the config's engine global index, -1 if unknown */
    size_t workspace;
} cd_plan;

/* How many engine configs cuDNN's heuristics offer for the graph (mode A's, then the
 * fallback list's, TF32 ones left out of fp32 products); false with cuDNN's message when
 * they offer none. */
bool cudnn_heuristic_count(cd_graph* graph, int* count, char* why, size_t len);
/* The plan of the index-th heuristic engine config that builds one (the ENGINE_CONFIG
 * knob); false with cuDNN's message of the last failure, or naming the knob. */
bool cudnn_plan_make(cd_handle h, cd_graph* graph, int index, cd_plan* plan, char* why,
                     size_t len);

#endif
