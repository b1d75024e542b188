/* blaslt.h — what the blaslt engine's files share: the libraries it opens
 * (blaslt_load.c), the matmul it reads off a graph (blaslt_graph.c) and the cuBLASLt plan
 * it makes of that matmul (blaslt_plan.c); blaslt.c holds the plugin ABI's entry points. */
#ifndef HIPDNN_BLASLT_H
#define HIPDNN_BLASLT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blaslt_api.h"
#include "hipdnn/hipdnn_sdk.h"
#include "hipdnn/hipdnn_sdk_plugin.h"
#include "hipdnn/hipdnn_sdk_vendor.h"

#define BLASLT_ENGINE_NAME "blaslt"
#define BLASLT_PLUGIN_VERSION "0.1.0"
/* Below the hip engine's 100: where both run a matmul, hip stays the default until
 * engines are ranked by measured speed (issue 29); above reference_cpu's 0.  Chosen by
 * name with set_preferred_engine("blaslt") or deselected with deselect_engines. */
#define BLASLT_PRIORITY 50
#define BLASLT_MSG_LEN HIPDNN_SDK_PLUGIN_MSG_LEN
/* cuBLASLt 11.0, the oldest with every call and epilogue this engine uses. */
#define BLASLT_MIN_MAJOR 11
/* The most workspace a plan may ask for; the heuristic only offers algorithms within it. */
#define BLASLT_MAX_WORKSPACE (32u << 20)
/* How many of the heuristic's algorithms the ALGORITHM knob can choose among. */
#define BLASLT_MAX_ALGOS 8

/* Knob ids.  ALGORITHM is cuDNN's KERNEL_CFG (which kernel configuration); TF32 is ours,
 * numbered past cuDNN's KnobType_t as hipdnn's own ids are (hipdnn.h, from 20000). */
#define BLASLT_KNOB_ALGORITHM 12
#define BLASLT_KNOB_TF32 20000

/* ---- the libraries (blaslt_load.c) ----------------------------------------------------- */

extern bl_lt_api g_lt; /* filled once, by blaslt_load */

/* Once per process: the CUDA driver with a device, then cuBLASLt (the first candidate that
 * opens, whole and new enough).  False with one line saying what was looked for and what
 * went wrong, "blaslt: ..." (GetAllEngineIds declines loading with it). */
bool blaslt_load(char* why, size_t len);
/* "libcublasLt.so.13 (cuBLASLt 13.0.2)": what blaslt_load opened, for the log. */
const char* blaslt_library(void);
/* Makes `device`'s primary context current on this thread, *saved the one that was
 * (hipdnnSdkCudaEnter); blaslt_leave gives it back. */
static inline bool blaslt_enter(int device, bl_cu_context* saved, char* why, size_t len) {
    return hipdnnSdkCudaEnter(BLASLT_ENGINE_NAME, device, saved, why, len);
}
#define blaslt_leave hipdnnSdkCudaLeave
/* "CUBLAS_STATUS_NOT_SUPPORTED (15)" into buf. */
const char* blaslt_status_text(bl_status st, char* buf, size_t len);

/* ---- the graph's matmul, in cuBLASLt's terms (blaslt_graph.c) ---------------------------- */

/* One of cuBLASLt's A, B, D: a column-major stored matrix, used as op(X). */
typedef struct {
    int64_t uid;          /* the graph tensor it reads or writes */
    int32_t op;           /* BL_OP_N or BL_OP_T */
    uint64_t rows, cols;  /* of the stored matrix */
    int64_t ld;
    int64_t batch_stride; /* elements; 0: the same matrix for every batch */
    int32_t type;         /* cudaDataType_t */
} bl_matrix;

typedef struct {
    bl_matrix a, b, d;
    /* The bias vector read (BIAS) or the bias gradient written (BGRAD, BGRADA, BGRADB);
     * HIPDNN_NO_TENSOR without one. */
    int64_t bias_uid;
    /* The gelu's input, written (GELU_AUX) or read (DGELU): laid out as d, its own ld and
     * batch stride; uid HIPDNN_NO_TENSOR without one. */
    bl_matrix aux;
    int32_t batch;
    uint32_t epilogue;  /* BL_EPILOGUE_* */
    bool fp32_inputs;   /* the TF32 knob applies */
    int in_size, out_size; /* bytes of an input and of an output element */
    char what[200];     /* "[2 x] 64x48x40 fp16 -> fp16, row-major, epilogue bias+gelu_tanh" */
} bl_problem;

/* Reads the graph as one matmul and its epilogue; false with the reason to decline
 * ("blaslt: node 'g' (gelu): ..."). */
bool blaslt_problem(const hipdnnSdkGraph* g, bl_problem* p, char* why, size_t len);

/* ---- the nodes around the matmul, as an epilogue (blaslt_epilogue.c) ---------------------- */

/* What a bias tensor is to the epilogue. */
typedef enum {
    BL_BIAS_NONE,
    BL_BIAS_ADD,    /* added to the product (BIAS) */
    BL_BIAS_GRAD,   /* the sum of D over one axis, after DGELU (DGELU_BGRAD) */
    BL_BIAS_GRAD_A, /* the sum of the matmul's a over k (BGRADA or BGRADB) */
    BL_BIAS_GRAD_B, /* the sum of its b over k */
} bl_bias_kind;

typedef struct {
    int64_t bias;         /* the bias tensor, HIPDNN_NO_TENSOR if none */
    bl_bias_kind bias_kind;
    int bias_axis;        /* a gradient's summed axis of its input: 0 the rows, 1 the columns */
    int64_t aux;          /* the gelu's input, a graph output (GELU_AUX) or input (DGELU) */
    uint32_t activation;  /* 0, BL_EPILOGUE_RELU, _GELU, _GELU | _AUX or _DGELU */
    int64_t out;          /* the last node's output: cuBLASLt's D */
} bl_chain;

/* The epilogue of g's matmul (node mm): its other nodes, read in order, as one chain after
 * the product, a bias-gradient reduction beside it; false with the reason to decline. */
bool blaslt_chain(const hipdnnSdkGraph* g, const hipdnnSdkNode* mm, bl_chain* ch, char* why,
                  size_t len);
/* "bias+gelu_tanh_aux", "dgelu+bgrad", ... for messages; "none" for DEFAULT. */
const char* blaslt_epilogue_name(uint32_t epilogue);

/* ---- the plan (blaslt_plan.c) ------------------------------------------------------------- */

typedef struct {
    bl_desc desc;
    bl_layout a, b, d;
    /* [0]: for pointers 16-byte aligned (the knob's choice); [1]: for any pointers */
    bl_algo algo[2];
    bool have[2];
    int offered;      /* algorithms the heuristic offered for aligned pointers */
    size_t workspace; /* the larger of the two */
    int32_t compute;  /* BL_COMPUTE_* */
} bl_plan;

/* Descriptors and the heuristic's algorithms for p, on the current device; false with the
 * reason ("blaslt: ...").  index: which of the aligned algorithms (the ALGORITHM knob). */
bool blaslt_plan_make(bl_lt lt, const bl_problem* p, int index, bool tf32, bl_plan* plan,
                      char* why, size_t len);
void blaslt_plan_free(bl_plan* plan);

#endif
