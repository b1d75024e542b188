/* hipdnn_ep.h — the parts of hipdnn-ep, ONNX Runtime's plugin execution provider over
 * hipdnn, and what each file gives the others.  Internal: nothing here is exported but
 * CreateEpFactories and ReleaseEpFactory (factory.c), ORT's plugin-EP entry points.
 *
 *   factory.c     OrtEpFactory: the devices offered, CreateEp / ReleaseEp
 *   ort_version.c the OrtApi version used in the ORT that loads the library (1.24 on)
 *   device.c      the GPU hipdnn's device runtime reports, and its OrtMemoryInfo
 *   allocator.c   OrtAllocator over hipdnnDeviceMalloc_ext / Free_ext
 *   transfer.c    OrtDataTransferImpl: host <-> device <-> device through hipdnn's memcpy
 *   stream.c      OrtSyncStreamImpl and OrtSyncNotificationImpl over hipdnn streams, events
 *   memcpy.c      the GPU device's MemcpyFromHost / MemcpyToHost kernels (a kernel registry)
 *   options.c     the ep.hipdnn.* session options, read once in CreateEp
 *   log.c         messages through ORT's logger, filtered by ep.hipdnn.log_level
 *   model.c       ONNX nodes and values read out of an OrtGraph into plain C
 *   capability.c  which nodes hipdnn runs, and their grouping into fused nodes
 *   engine_check.c  on the GPU: which candidate fused graphs an engine for the device takes
 *   op_table.c    the ONNX ops claimed, one row each: check, shape rule, lowering
 *   shape.c       ONNX shape rules for the ops hipdnn-ep claims
 *   lower.c       a model (one fused node) lowered to a hipdnn operation graph
 *   lower_ops.c   each ONNX op's lowering (op_table.c names them; lowering.h is shared)
 *   ops_pool.c    the pooling ops' checks, shape rules and lowerings
 *   ops_pointwise.c  the variadic, clipping and hard-activation ops', likewise
 *   ops_movement.c  Transpose, Concat, Slice, Split, Squeeze, Unsqueeze, Expand, Where, likewise
 *   ops_attention.c  Attention (opset 23) as hipdnn's sdpa, likewise
 *   ops_norm.c    InstanceNormalization, likewise
 *   fuse_attention.c  MatMul -> scale -> (mask) -> Softmax -> MatMul lowered as one sdpa
 *   plan.c        the engine chosen for that graph, and its plan
 *   kernel.c      per fused node: plans cached by input shapes, execution per run
 *   context.c     EPContext nodes: a fused node's plan saved as hipdnn's serialized graph
 *                 and engine config, and restored from one without lowering
 *   ep.c          OrtEp: GetCapability, Compile and the compute functions
 *
 * Every ORT status this library returns is made by ep_status() and names the node and op
 * it is about. */
#ifndef HIPDNN_EP_H
#define HIPDNN_EP_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hipdnn/hipdnn.h"
#include "onnxruntime_c_api.h" /* includes onnxruntime_ep_c_api.h */

#define EP_NAME "hipdnn"
#define EP_VENDOR "hipdnn"
#define EP_OPTION_PREFIX "ep." EP_NAME "."
#define EP_MAX_RANK 8 /* HIPDNN_MAX_DIMS */
#define EP_STR_(x) #x
#define EP_STR(x) EP_STR_(x)
/* hipdnn-ep is versioned with hipdnn (semantic versioning, as ORT asks). */
#define HIPDNN_EP_VERSION \
    EP_STR(HIPDNN_VERSION_MAJOR) "." EP_STR(HIPDNN_VERSION_MINOR) "." EP_STR(HIPDNN_VERSION_PATCH)

/* The ORT API tables, set once by CreateEpFactories. */
extern const OrtApi* g_ort;
extern const OrtEpApi* g_ep_api;

/* ---- ort_version.c ------------------------------------------------------------------- */

/* The oldest OrtApi version (= ORT minor version) hipdnn-ep runs on: ORT 1.24. */
#define EP_ORT_API_MIN 24

/* *api = the runtime's OrtApi of the lower of its version and ORT_API_VERSION; a status
 * naming both versions (from OrtApi 1) when the runtime is older than EP_ORT_API_MIN. */
OrtStatus* ep_ort_negotiate(const OrtApiBase* base, const OrtApi** api);
/* The OrtApi version in use: a member added after EP_ORT_API_MIN is called only when this
 * is at least the version that added it. */
uint32_t ep_ort_api_version(void);
/* The runtime's version string, and whether it is an ORT whose fused nodes from a second
 * GetCapability call of a session would take the names of the first's (1.24): there only
 * one call per session may fuse nodes. */
const char* ep_ort_runtime(void);
bool ep_ort_fuses_once(void);

/* ---- log.c --------------------------------------------------------------------------- */

/* A new ORT status with the printf-formatted message, prefixed "hipdnn-ep: ". */
OrtStatus* ep_status(OrtErrorCode code, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Logs through `logger` (may be NULL: dropped) when level >= threshold. */
void ep_log(const OrtLogger* logger, OrtLoggingLevel threshold, OrtLoggingLevel level,
            const char* fmt, ...) __attribute__((format(printf, 4, 5)));

/* ---- device.c ------------------------------------------------------------------------ */

#define EP_VENDOR_NVIDIA 0x10deu
#define EP_VENDOR_AMD 0x1002u

/* The GPU hipdnn's device runtime reports, as hipdnn-ep offers it to ORT. */
typedef struct {
    bool present;        /* the runtime has a device; else `reason` says why not */
    char runtime[16];    /* "cuda" or "hip" */
    uint32_t vendor_id;  /* PCI vendor of that runtime's GPUs */
    int ordinal;         /* hipdnn's device: the one current when the factory asked */
    int count;           /* devices the runtime reports */
    char reason[512];
} ep_gpu;

/* Asks hipdnn's device runtime (loading it: libcuda.so.1 or libamdhip64.so) for a device. */
void ep_gpu_probe(ep_gpu* out);

/* Makes `ordinal` the calling thread's device (ORT calls from threads of its own, where
 * the runtime's current device is 0); NULL on success, else a status naming `what`. */
OrtStatus* ep_gpu_enter(int ordinal, const char* what);

/* ---- factory.c ----------------------------------------------------------------------- */

/* hipdnn-ep's OrtEpFactory.  The device-memory OrtMemoryInfo is made when the factory is,
 * if the runtime has a device, and lives as long as the factory (ORT keeps pointers to it
 * in the OrtEpDevice and in every allocator). */
typedef struct ep_factory {
    OrtEpFactory base; /* first: ORT hands back OrtEpFactory* */
    char registered_name[128];
    const OrtLogger* logger; /* ORT's default logger: allocator, transfers, streams */
    ep_gpu gpu;
    OrtMemoryInfo* gpu_memory;               /* GPU, DEFAULT memory, vendor, ordinal */
    const OrtMemoryDevice* gpu_memory_device; /* its OrtMemoryDevice */
    OrtHardwareDevice* virtual_gpu;          /* made when ORT lists no GPU of that vendor */
    pthread_mutex_t lock;                    /* guards the allocation table below */
    struct ep_alloc_table* allocations;      /* allocator.c */
} ep_factory;

/* ---- allocator.c --------------------------------------------------------------------- */

/* A new OrtAllocator for the factory's device memory; `info` must be that memory. */
OrtStatus* ep_allocator_create(ep_factory* f, const OrtMemoryInfo* info, OrtAllocator** out);
void ep_allocator_release(ep_factory* f, OrtAllocator* a);
/* Device memory for hipdnn-ep's own use (plan workspaces), counted with the allocator's. */
OrtStatus* ep_device_alloc(ep_factory* f, size_t bytes, const char* what, void** out);
void ep_device_free(ep_factory* f, void* p);
/* The allocation table, freed with the factory (after ORT released every allocator). */
void ep_allocations_free(ep_factory* f);

/* ---- transfer.c ---------------------------------------------------------------------- */

OrtStatus* ep_transfer_create(ep_factory* f, OrtDataTransferImpl** out);

/* ---- stream.c ------------------------------------------------------------------------ */

/* An OrtSyncStreamImpl over a new hipdnn stream on the factory's GPU, for `device`
 * (DEFAULT memory of the GPU; *out NULL for other memory, which needs no stream). */
OrtStatus* ep_stream_create(ep_factory* f, const OrtMemoryDevice* device, OrtSyncStreamImpl** out);

/* ---- memcpy.c ------------------------------------------------------------------------ */

/* A kernel registry holding MemcpyFromHost and MemcpyToHost for hipdnn-ep's GPU, which
 * ORT puts between a fused node on the GPU and a node of its CPU EP. */
OrtStatus* ep_memcpy_registry(ep_factory* f, OrtKernelRegistry** out);

/* ---- options.c ----------------------------------------------------------------------- */

typedef struct {
    char engine[64];               /* ep.hipdnn.engine: engine name ranked first ("" none) */
    hipdnnBackendHeurMode_t heur;  /* ep.hipdnn.heuristic_mode: a | b | fallback */
    char plugin_path[1024];        /* ep.hipdnn.plugin_path: extra plugin file or folder */
    OrtLoggingLevel log_level;     /* ep.hipdnn.log_level: verbose | info | warning | error */
    bool log_level_given;          /* then hipdnn's own log level follows it */
    bool autotune;                 /* ep.hipdnn.autotune=1: time each plan's configs on its
                                    * first run, keep the fastest, store it (kernel.c) */
    double autotune_budget_ms;     /* ep.hipdnn.autotune_budget_ms (default 1000) */
    bool use_tf32;                 /* ep.hipdnn.use_tf32=1: engines with a "tf32" knob may
                                    * read fp32 as TF32 (plan.c); 0, the default: exact */
    /* ORT's EPContext session entries (context.c) */
    bool ctx_enable;               /* ep.context_enable=1: Compile returns EPContext nodes */
    bool ctx_embed;                /* ep.context_embed_mode (0, the default: a side file) */
    char ctx_path[1024];           /* ep.context_file_path: the context model ("" unset) */
    char ctx_prefix[128];          /* ep.context_node_name_prefix */
} ep_options;

/* Reads every "ep.hipdnn." entry of the session options; an unknown key or a bad value is
 * logged as a warning and otherwise ignored (defaults stay). */
OrtStatus* ep_options_read(const OrtSessionOptions* so, const OrtLogger* logger,
                           ep_options* out);

/* ---- model.c ------------------------------------------------------------------------- */

typedef struct {
    char* name;
    int32_t elem_type;        /* ONNXTensorElementDataType; 0 when not a tensor */
    int rank;                 /* -1 when unknown */
    int64_t dims[EP_MAX_RANK]; /* -1 where symbolic */
    bool is_const;            /* a constant initializer */
    bool is_graph_output;     /* an output of the graph the model was read from */
    int64_t* ivals;           /* a constant int64 initializer's values (axes), else NULL */
    int64_t n_ivals;
    float fval;               /* a one-element float constant initializer's value */
    bool has_fval;
    int producer;             /* node index, -1 for graph inputs and initializers */
    int n_consumers;          /* nodes of the model that read it */
} ep_value;

typedef struct {
    char* name;
    OrtOpAttrType type;
    int64_t i;
    float f;
    int64_t* ints;
    size_t n_ints;
    char* s;
    size_t n_s; /* bytes of s (a string attribute may hold binary data: EPContext) */
} ep_attr;

#define EP_MAX_IO 8

typedef struct {
    char* name; /* "" when the model gave none */
    char* op;
    char* domain;
    int since_version;
    int n_in, n_out;
    int in[EP_MAX_IO];  /* value index, -1 for an absent optional input */
    int out[EP_MAX_IO]; /* value index, -1 for an absent optional output */
    int* in_more;       /* inputs from EP_MAX_IO on (n_in - EP_MAX_IO); NULL for fewer */
    ep_attr* attrs;
    int n_attrs;
    const OrtNode* ort; /* valid only while the OrtGraph it came from is */
} ep_node;

/* Input k < n_in of node n, past EP_MAX_IO too: a node no engine claims (a Concat of ten)
 * still links its producers to its consumers, so grouping and a fused node's outputs see
 * every edge. */
static inline int ep_node_in(const ep_node* n, int k) {
    return k < EP_MAX_IO ? n->in[k] : n->in_more[k - EP_MAX_IO];
}

typedef struct {
    ep_value* values;
    int n_values, cap_values;
    int* slots; /* open-addressing index of values by name: value index + 1, 0 empty */
    int n_slots;
    ep_node* nodes;
    int n_nodes;
    int* inputs; /* the fused node's inputs (value indexes), in the kernel context's order */
    int n_inputs;
    int* outputs; /* the fused node's outputs, likewise */
    int n_outputs;
} ep_model;

/* Reads the nodes of `graph` (in its topological order) and every value they touch. */
OrtStatus* ep_model_read(const OrtGraph* graph, ep_model* m);
/* Sets m->inputs / m->outputs from the fused node's inputs and outputs (by name). */
OrtStatus* ep_model_bind_fused(ep_model* m, const OrtNode* fused);
void ep_model_free(ep_model* m);
int ep_model_find(const ep_model* m, const char* name);

const ep_attr* ep_attr_get(const ep_node* n, const char* name);
int64_t ep_attr_int(const ep_node* n, const char* name, int64_t dflt);
float ep_attr_float(const ep_node* n, const char* name, float dflt);
const char* ep_attr_string(const ep_node* n, const char* name, const char* dflt);
/* The node's label for messages: "Conv 'conv1'" (or "Conv #3" without a name). */
const char* ep_node_label(const ep_node* n, char* buf, size_t len);

/* ---- shape.c ------------------------------------------------------------------------- */

typedef struct {
    int rank;
    int64_t dims[EP_MAX_RANK];
} ep_shape;

/* Output shapes of node `n` from its input shapes (in[k] NULL for an absent input); a
 * failure fills `why` with what is wrong. */
bool ep_shape_infer(const ep_model* m, const ep_node* n, const ep_shape* const* in,
                    ep_shape* out, char* why, size_t why_len);

/* Conv's padding for one spatial dim: auto_pad NOTSET takes pads[], the SAME modes split
 * the total as ONNX says.  Returns false for an auto_pad value ONNX does not have. */
bool ep_conv_pads(const ep_node* n, int axis, int spatial, int64_t in, int64_t k,
                  int64_t stride, int64_t dilation, int64_t* pre, int64_t* post);

/* ConvTranspose's padding for one spatial dim (its output is the data gradient of a
 * convolution with these pads): output_shape fixes the total as ONNX says (split evenly;
 * `total` gets it), else pads[] (auto_pad NOTSET) or none (VALID).  pre / post may be
 * NULL.  False when output_shape asks for more than no padding gives. */
bool ep_conv_transpose_pads(const ep_node* n, int axis, int spatial, int64_t in, int64_t k,
                            int64_t* pre, int64_t* post, int64_t* total);

/* Normalized axes of a reduction (attribute or constant input; empty = all): the flags of
 * reduced axes in `reduced`.  False (with why) for what cannot be known. */
bool ep_reduce_axes(const ep_model* m, const ep_node* n, int rank, bool* reduced, char* why,
                    size_t why_len);

/* NumPy broadcasting of a and b into out; false when they do not broadcast. */
bool ep_broadcast(const ep_shape* a, const ep_shape* b, ep_shape* out);
/* "[2, 3, 4]" into buf. */
void ep_shape_str(const ep_shape* s, char* buf, size_t len);

/* Softmax's and LogSoftmax's axes: `axis` alone (opset 13 on), or every axis from it on
 * (before, where X is flattened to 2-D there).  False (with why) for a rank it does not fit. */
bool ep_softmax_axes(const ep_node* n, int rank, bool* reduced, char* why, size_t why_len);

/* ---- capability.c -------------------------------------------------------------------- */

/* Attribute values above this are declined before any shape arithmetic: what the backend
 * takes (dims and parameters within 2^40), and products of two stay inside int64. */
#define EP_ATTR_MAX (INT64_C(1) << 40)

/* Whether value v (named `port` in the reason) is a float32 or float16 tensor of known
 * rank 1..8; when not, `why` says why. */
bool ep_float_tensor(const ep_model* m, int v, const char* port, char* why, size_t why_len);

/* Whether hipdnn-ep runs node `n`; when not, `why` says why. */
bool ep_node_supported(const ep_model* m, const ep_node* n, char* why, size_t why_len);

/* Groups supported nodes into fusable sets: group[i] is the set of node i (-1: not
 * claimed), sets numbered from 0; no set depends on itself through a node outside it.
 * Returns the count. */
int ep_group_nodes(const ep_model* m, const bool* supported, int* group);

/* ---- lower.c ------------------------------------------------------------------------- */

/* Where a hipdnn graph tensor's memory comes from at execute time: a fused-node input or
 * output, or one float 0 the kernel keeps in the device's memory, which the outputs of
 * nodes over empty inputs are filled from (lower.c). */
typedef enum { EP_BIND_INPUT, EP_BIND_OUTPUT, EP_BIND_ZERO } ep_bind_kind;

typedef struct {
    int64_t uid;
    ep_bind_kind kind;
    int index; /* fused node input / output index (0 for EP_BIND_ZERO) */
} ep_binding;

/* One connected piece of a fused node's hipdnn graph, planned on one engine. */
typedef struct {
    hipdnnBackendDescriptor_t plan;
    int64_t workspace;
    ep_binding* bindings;
    int n_bindings;
    char engine[64];
    /* what rebuilds the plan (an EPContext payload, context.c): the finalized graph and
     * the engine config's knob choices (id, value) */
    hipdnnBackendDescriptor_t graph;
    int n_knobs;
    int64_t knobs[16][2];
    bool from_cache; /* its config is the plan cache's tuned one: autotune leaves it */
} ep_plan_part;

/* What a fused node runs for one set of input shapes: one part, the whole graph, unless
 * values with no elements cut it into pieces that share no tensor (hipdnn plans a
 * connected graph), each then planned alone; no part when every output is empty. */
typedef struct {
    ep_plan_part* parts;
    int n_parts;
    ep_shape* out_shapes; /* one per fused-node output */
    int n_sdpa;           /* attentions run as one sdpa operation each (for the log) */
} ep_plan;

/* Builds and finalizes the hipdnn graph of model `m` for these input shapes (in_shapes[k]
 * for the fused node's input k), and plans it (ep_plan_choose).  Values with no elements
 * (an empty input, and what ONNX's shape rules make of it) get no hipdnn tensor: their
 * nodes compute nothing, or their output from what is left (the row's `empty`). */
OrtStatus* ep_lower(const ep_model* m, const ep_shape* in_shapes, hipdnnHandle_t h,
                    const ep_options* opt, hipdnnMemorySpace_t space, const char* graph_name,
                    ep_plan* out);
void ep_plan_free(ep_plan* p);

/* The same graph finalized and only asked about: whether an engine that runs in `space`
 * takes it (ep_plan_check; no plan is built, nothing compiled).  False with `why`, and
 * *in_shapes_rules (if given) true when the shapes themselves failed ONNX's rules, before
 * any engine was asked. */
bool ep_lower_check(const ep_model* m, const ep_shape* in_shapes, hipdnnHandle_t h,
                    const ep_options* opt, hipdnnMemorySpace_t space, const char* graph_name,
                    char* why, size_t why_len, bool* in_shape_rules);

/* ---- op_table.c ---------------------------------------------------------------------- */

/* The ONNX ops hipdnn-ep claims: one row per op (and domain, and lowest opset where it
 * matters), naming the three functions an op needs.  capability.c, shape.c and lower.c
 * find a node's row with ep_op_find; adding an ONNX op is one row plus its functions. */

typedef struct ep_lowering ep_lowering; /* lower.c's state while one model is lowered */

/* Whether node `n` can be claimed, past the checks every node gets (domain, opset, output
 * 0 a float tensor); when not, `why` says why. */
typedef bool ep_op_check(const ep_model* m, const ep_node* n, char* why, size_t why_len);
/* The output shapes of `n` from its input shapes (in[0] present, in[k] NULL for an absent
 * input); when they cannot be, `why` says why. */
typedef bool ep_op_shape(const ep_model* m, const ep_node* n, const ep_shape* const* in,
                         ep_shape* out, char* why, size_t why_len);
/* Adds the hipdnn operations of `n` (its output shapes known) to the graph being lowered;
 * `arg` is the row's constant.  False when it fails, the reason kept in `w`. */
typedef bool ep_op_lower(ep_lowering* w, const ep_node* n, int arg);

typedef struct {
    const char* op;
    const char* domain; /* "": ONNX's own ("" or "ai.onnx") */
    int since;          /* the lowest opset claimed, 0 any; an older node is told so */
    ep_op_check* check;
    ep_op_shape* shape;
    ep_op_lower* lower;
    /* The lowering of a node with an input of no elements whose output has some (a sum
     * over an axis of 0, a MatMul over K = 0): its output made without that input, which
     * it never reads.  NULL where an empty input always gives an empty output. */
    ep_op_lower* empty;
    int arg; /* for `lower` and `empty`: a pointwise mode, a reduction operator, 1 for
              * ConvTranspose and LogSoftmax */
} ep_op_def;

/* The row of node `n`'s op and domain (one whose opset the node predates when that is
 * the only one), or NULL when hipdnn-ep has none. */
const ep_op_def* ep_op_find(const ep_node* n);

/* The functions rows name: capability.c */
ep_op_check ep_check_conv, ep_check_conv_transpose, ep_check_gemm, ep_check_matmul,
    ep_check_binary, ep_check_unary, ep_check_gelu, ep_check_softmax, ep_check_reshape,
    ep_check_batchnorm, ep_check_layernorm, ep_check_reduce;
/* shape.c */
ep_op_shape ep_shape_broadcast, ep_shape_same, ep_shape_matmul, ep_shape_gemm, ep_shape_conv,
    ep_shape_conv_transpose, ep_shape_reshape, ep_shape_flatten, ep_shape_reduce,
    ep_shape_softmax, ep_shape_layernorm, ep_shape_batchnorm;
/* lower_ops.c */
ep_op_lower ep_emit_binary, ep_emit_unary, ep_emit_gelu, ep_emit_conv, ep_emit_matmul,
    ep_emit_gemm, ep_emit_softmax, ep_emit_batchnorm, ep_emit_layernorm, ep_emit_reduce,
    ep_emit_reshape;
ep_op_lower ep_empty_conv, ep_empty_matmul, ep_empty_gemm, ep_empty_reduce;
/* ops_pool.c: MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool */
ep_op_check ep_check_pool, ep_check_global_pool;
ep_op_shape ep_shape_pool, ep_shape_global_pool;
ep_op_lower ep_emit_pool, ep_emit_global_pool;
/* ops_pointwise.c: Min, Max, Sum, Mean, Clip, LeakyRelu, HardSigmoid, HardSwish, Cast */
ep_op_check ep_check_variadic, ep_check_clip, ep_check_leaky_relu, ep_check_cast;
ep_op_shape ep_shape_variadic;
ep_op_lower ep_emit_variadic, ep_emit_clip, ep_emit_leaky_relu, ep_emit_hard_sigmoid,
    ep_emit_cast;

/* ops_movement.c: Transpose, Concat, Slice, Split, Squeeze, Unsqueeze, Expand, Where */
ep_op_check ep_check_transpose, ep_check_concat, ep_check_slice, ep_check_split,
    ep_check_squeeze, ep_check_expand, ep_check_where;
ep_op_shape ep_shape_transpose, ep_shape_concat, ep_shape_slice, ep_shape_split,
    ep_shape_squeeze, ep_shape_unsqueeze, ep_shape_expand, ep_shape_where;
ep_op_lower ep_emit_transpose, ep_emit_concat, ep_emit_slice, ep_emit_split, ep_emit_expand,
    ep_emit_where;

/* ops_norm.c: InstanceNormalization */
ep_op_check ep_check_instancenorm;
ep_op_shape ep_shape_instancenorm;
ep_op_lower ep_emit_instancenorm;

/* ops_attention.c: Attention (opset 23) */
ep_op_check ep_check_attention;
ep_op_shape ep_shape_attention;
ep_op_lower ep_emit_attention;

/* ---- plan.c -------------------------------------------------------------------------- */

/* Ranks engines for the finalized graph and plans it on the first one that runs in
 * `space`: sets out->plan, workspace and engine.  False with `err` saying why not. */
bool ep_plan_choose(hipdnnHandle_t h, hipdnnBackendDescriptor_t graph, const ep_options* opt,
                    hipdnnMemorySpace_t space, ep_plan_part* out, char* err, size_t err_len);

/* Whether the heuristics rank an engine that runs in `space` for the finalized graph:
 * hipdnn's check_support, restricted to one memory space.  False with `why` listing what
 * each engine of that space said (or that none is loaded). */
bool ep_plan_check(hipdnnHandle_t h, hipdnnBackendDescriptor_t graph, const ep_options* opt,
                   hipdnnMemorySpace_t space, char* why, size_t why_len);

/* Engine `index`'s config for finalized graph g with these knob choices (id, value); NULL
 * with why.  The caller destroys it. */
hipdnnBackendDescriptor_t ep_make_config(hipdnnBackendDescriptor_t g, int64_t index, int n_knobs,
                                         int64_t (*knobs)[2], char* why, size_t why_len);

/* Autotuning's candidates for finalized graph g: plans of the heuristics' configs whose
 * engine runs in `space`, then each of those engines' knob variants (one knob changed at
 * a time, the values the engine lists, else on its stride, at most 8 a knob), at most
 * `max` in all, into out (plan, engine, knobs, workspace set; the caller frees each plan).
 * Returns how many; those that do not build are left out. */
int ep_plan_candidates(hipdnnHandle_t h, hipdnnBackendDescriptor_t g, const ep_options* opt,
                       hipdnnMemorySpace_t space, ep_plan_part* out, int max);

/* ---- engine_check.c ------------------------------------------------------------------ */

/* Whether an engine for `space` runs nodes `members` (indexes into m, in m's order) as one
 * fused graph, asked as ep_lower_check with the inputs and outputs ORT would give such a
 * fused node; dims the model leaves unknown are taken as 1.  False with `why`. */
bool ep_engine_takes(const ep_model* m, const int* members, int n_members, hipdnnHandle_t h,
                     const ep_options* opt, hipdnnMemorySpace_t space, char* why,
                     size_t why_len);

/* ---- kernel.c ------------------------------------------------------------------------ */

typedef struct ep_kernel ep_kernel;

/* What the kernels of one OrtEp run with; owned by the OrtEp, which outlives them. */
typedef struct {
    hipdnnHandle_t h;
    hipdnnMemorySpace_t space; /* HOST for the CPU device, DEVICE for the GPU */
    ep_factory* factory;       /* GPU: device memory for workspaces */
    int ordinal;               /* GPU: hipdnn's device */
    pthread_mutex_t lock;      /* the handle's user: plans built; GPU: stream set + execute */
} ep_exec;

/* Takes ownership of `m`. */
ep_kernel* ep_kernel_create(ep_model* m, const char* name, ep_exec* x, const ep_options* opt,
                            const OrtLogger* logger);
/* Gives the kernel plan `p` (taken over) for input shapes `in` (one per fused-node input),
 * made before any run (context.c); `fixed`: the only plan it may run (restored from an
 * EPContext node, with no ONNX nodes to lower for other shapes).  `how` is logged. */
OrtStatus* ep_kernel_seed(ep_kernel* k, const ep_shape* in, ep_plan* p, bool fixed,
                          const char* how);
OrtStatus* ep_kernel_compute(ep_kernel* k, OrtKernelContext* ctx);
/* The fused node's model the kernel took over. */
const ep_model* ep_kernel_model(const ep_kernel* k);
void ep_kernel_destroy(ep_kernel* k);

/* ---- autotune.c ---------------------------------------------------------------------- */

#define EP_TUNE_MAX 32       /* candidate configs timed per plan part */
#define EP_TUNE_BINDINGS 512 /* parts with more bindings are not tuned */

/* Times the n candidate plans (ep_plan_candidates) on variant pack `pack` with
 * hipdnnAutotune_ext (budget_ms shared among them; outputs put back, inputs only read; the
 * winner stored in the plan cache), logs one line per candidate and the winner at info,
 * and gives the fastest's index in *best.  False with why when none ran.  Under the
 * handle's lock (ep_exec.lock), with the stream set on the GPU. */
bool ep_autotune_run(hipdnnHandle_t h, const char* name, const ep_plan_part* cand, int n,
                     hipdnnBackendDescriptor_t pack, double budget_ms, const OrtLogger* logger,
                     OrtLoggingLevel level, int64_t* best, char* why, size_t why_len);

/* ---- ep.c ---------------------------------------------------------------------------- */

/* Which kind of device an OrtEp runs on.  CPU: the host engines (reference_cpu) on host
 * tensors, ORT's own CPU allocator.  GPU: tensors in device memory from the factory's
 * allocator (ORT copies through transfer.c), plans for device engines only, each run
 * enqueued on ORT's sync stream (stream.c); GetCapability claims only what a device
 * engine takes (engine_check.c). */
typedef enum { EP_DEVICE_CPU = 0, EP_DEVICE_GPU = 1 } ep_device_kind;

/* ---- context.c ----------------------------------------------------------------------- */

/* What the EPContext functions need of the OrtEp. */
typedef struct {
    ep_exec* x;
    const ep_options* opt;
    ep_device_kind device;
    const char* runtime; /* GPU: "cuda" or "hip" */
    const OrtLogger* logger;
} ep_ctx_env;

/* Whether node n is an EPContext node (com.microsoft) whose source is hipdnn-ep. */
bool ep_context_is_mine(const ep_node* n);
/* ep.context_enable: plans fused node `fused` (model m, read from `graph` and bound) now,
 * for its inputs' shapes in the model, hands the plan to kernel k and makes its EPContext
 * node (embedded payload or a side file, by the session's options). */
OrtStatus* ep_context_compile(const ep_ctx_env* env, const OrtGraph* graph, const OrtNode* fused,
                              const ep_model* m, ep_kernel* k, OrtNode** node);
/* A fused node made of one of hipdnn-ep's EPContext nodes (m read from `graph`, bound to
 * `fused`, taken over): its kernel, with the payload's plan restored (no lowering).  A
 * payload that cannot be used gives ORT_INVALID_GRAPH naming the node and its file. */
OrtStatus* ep_context_load(const ep_ctx_env* env, const OrtGraph* graph, ep_model* m,
                           const char* name, ep_kernel** out);

/* context_check.c: whether part `part` of a payload, its graph g (deserialized, finalized)
 * and bindings, touches only what ORT's buffers hold for the recorded shapes in[] / out[]
 * (fused-node order) and the node's element types; out_bound[k] counts output k's
 * bindings over the parts.  False with why naming the part and tensor. */
bool ep_context_check_part(const ep_model* m, hipdnnBackendDescriptor_t g, int part,
                           const ep_binding* bind, int n_bind, const ep_shape* in,
                           const ep_shape* out, int* out_bound, char* why, size_t why_len);

OrtStatus* ep_create(ep_factory* f, const OrtSessionOptions* so, const OrtLogger* logger,
                     ep_device_kind device, OrtEp** out);
void ep_destroy(OrtEp* ep);

#endif /* HIPDNN_EP_H */
