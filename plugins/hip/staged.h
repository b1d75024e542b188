/* staged.h — graphs with reductions and norms: a plan of stages, each one kernel, run in
 * order on the handle's stream (C only: the host code).
 *
 * A graph holding reduction or norm_forward nodes is cut into stages (staged.c):
 *   - a softmax (reduction max, sub, exp, reduction add, div over the same rows) is one
 *     row-wise stage: one kernel, one pass over each row;
 *   - a layer / RMS / instance / adaptive layer norm is one row-wise stage, with the
 *     pointwise nodes that follow its y (and read nothing else but graph inputs) run by the
 *     same kernel as its epilogue;
 *   - any other reduction is one row-wise stage (two when its rows are cut into parts);
 *   - the remaining pointwise and batchnorm-inference nodes are fused into as few
 *     pointwise stages as their shapes allow, each the fused kernel of program.c.
 * Virtual tensors that one stage writes and a later one reads live in the workspace. */
#ifndef HIPDNN_HIP_STAGED_H
#define HIPDNN_HIP_STAGED_H

#include <stdatomic.h>

#include "attention.h"
#include "gemm.h"
#include "hip_engine.h"

#define HIPE_MAX_BINDS 40
#define HIPE_MAX_STAGES 64

/* Where one tensor's pointer (or a runtime scalar's value) goes in a stage's program:
 * the byte offset of a void* (dtype -1) or of a float read from the host scalar of that
 * hipdnnDataType_t (an int64_t where HIPE_BIND_I64 is or'ed in: attention dropout's seed
 * and offset, whole words). uid HIPDNN_NO_TENSOR is gen_index's coordinates, an input without
 * memory: its pointer is left as planned (hipe_bind_has_memory). */
typedef struct {
    int64_t uid;
    uint32_t offset;
    int32_t scalar_dtype;
} hipe_bind;

#define HIPE_BIND_I64 0x40000000

static inline bool hipe_bind_has_memory(const hipe_bind* b) {
    return b->scalar_dtype < 0 && b->uid != HIPDNN_NO_TENSOR;
}

enum { HIPE_STAGE_POINTWISE = 0, HIPE_STAGE_ROWWISE = 1, HIPE_STAGE_RESAMPLE = 2, HIPE_STAGE_GEMM = 3,
       HIPE_STAGE_ATTENTION = 4 };

/* Kernels a stage keeps besides its planned one: those other pointers needed. */
#define HIPE_OTHER_KERNELS 4

typedef struct hipe_stage {
    int kind;
    char what[160];                 /* for the log: "softmax 'sm' over rows of 4096 ..." */
    hipe_plan pw;                   /* pointwise: its program (graph NULL) */
    hipe_jit_kernels jit;           /* pointwise: its compiled kernels, if any */
    _Atomic(int) jit_ok;
    bool fast;                      /* pointwise: the fast way where pointers are aligned */
    rw_program rw;                  /* row-wise: its program */
    rs_program rs;                  /* resample: its program */
    hipe_gm gm;                     /* matmul: its program and kernels (gemm.h) */
    hipe_fa fa;                     /* attention: its program and kernels (attention.h) */
    hipe_kernel_id kernel_id;       /* row-wise, resample: the kernel for 16-byte aligned
                                       pointers, compiled at plan time (plugin.c) ... */
    void* kernel;
    struct {                        /* ... and others enqueues needed (a view not aligned):
                                       id 0 until kernel is set */
        _Atomic(hipe_kernel_id) id;
        void* kernel;
    } other[HIPE_OTHER_KERNELS];
    _Atomic(int) nother;            /* slots of `other` taken */
    int nbind;
    hipe_bind bind[HIPE_MAX_BINDS];
    _Atomic(int) ran;               /* the stage has run once (its first run is logged) */
    uint32_t nodes_at, num_nodes;   /* its nodes in the graph given (hipe_staged.nodes) */
} hipe_stage;

/* A workspace buffer: a virtual tensor between stages, or a reduction's parts. */
typedef struct {
    int64_t uid;
    size_t offset, bytes;
} hipe_buffer;

/* A view (lower.c): tensor uid of a rewritten graph is the memory of tensor `base` (a graph
 * tensor or a workspace buffer) from byte_offset on. */
typedef struct {
    int64_t uid, base, byte_offset;
} hipe_alias;

struct hipe_staged {
    int nstages;
    hipe_stage* stages;
    int nbuf;
    hipe_buffer* bufs;
    size_t workspace;
    int nalias;
    hipe_alias* alias;
    uint32_t* nodes; /* each stage's nodes, as indices into the graph given (not the
                        lowered one), ascending: the kernel-fusion report */
};

/* A graph rewritten in terms of the operations the engine has kernels for: the nodes
 * lower.c's table takes become pointwise and reduction nodes over views (each op family's
 * file, lower_*.c, says how).  `graph` NULL: nothing to rewrite. */
typedef struct {
    hipdnnSdkGraph* graph;
    int nalias;
    hipe_alias* alias;
    int nws;
    int64_t* ws; /* tensors made real that live in the workspace */
} hipe_lowered;

/* False with the reason when a node to rewrite is malformed or memory runs out. */
bool hipe_lower(const hipdnnSdkGraph* g, hipe_lowered* lw, char* why, size_t len);
void hipe_lowered_free(hipe_lowered* lw);

/* Compiles a graph holding row-wise nodes into stages (plan->staged); false with the
 * reason, as hipe_compile. */
bool hipe_staged_compile(const hipdnnSdkGraph* g, const hipe_knobs* knobs, hipe_plan* plan,
                         char* why, size_t len);

/* The row-wise stage(s) of one node or pattern (rowwise_reduction.c, rowwise_softmax.c,
 * rowwise_norm.c).  Each fills `st` (kind, what, rw, binds) and returns how many stages
 * it made (1, or 2 for a reduction cut into parts, whose parts buffer then needs
 * `*parts_bytes` of workspace under uid `parts_uid`), 0 with the reason when it cannot. */
int hipe_rw_reduction(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, int64_t parts_uid,
                      size_t* parts_bytes, hipe_stage* st, char* why, size_t len);
/* nodes: the reduction max, sub, exp, reduction add and div of a softmax, in that order. */
int hipe_rw_softmax(const hipdnnSdkGraph* g, const hipdnnSdkNode* const* nodes, hipe_stage* st,
                    char* why, size_t len);
/* ep: the pointwise epilogue compiled from the nodes after the norm (its inputs include
 * the norm's y), or NULL. */
int hipe_rw_norm(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, const hipe_plan* ep,
                 hipe_stage* st, char* why, size_t len);
/* A norm_backward node as lower.c leaves it for the row kernel: attribute slot
 * HIPE_NBWD_SUMS (one norm_backward does not use) says what its dscale and dbias ports
 * hold: each row's sums of dy * xhat and dy (ROW_SUMS: batch and instance norms, whose
 * scale is one value a row), or fp32 [groups, cols] column sums of each group of rows
 * (COL_PARTS, i[1] groups: layer and RMS norms), summed by reductions after it. */
#define HIPE_NBWD_SUMS 2
#define HIPE_NBWD_ROW_SUMS 1
#define HIPE_NBWD_COL_PARTS 2
#define HIPE_NBWD_PARTS 1024 /* groups of rows with column sums, at most */
/* ep: the pointwise epilogue after dx (its inputs include dx), or NULL. */
int hipe_rw_norm_backward(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, const hipe_plan* ep,
                          hipe_stage* st, char* why, size_t len);
/* Whether rows of `cols` fit the column sums' geometry (a row in registers). */
bool hipe_rw_norm_bwd_parts_fit(int64_t cols);

/* The stage of a resample_fwd or resample_bwd node (resample_program.c): 1, or 0 with the
 * reason. */
int hipe_rs_compile(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, hipe_stage* st, char* why,
                    size_t len);
/* The stage of a matmul node (gemm_program.c), with `ep` (or NULL) the pointwise epilogue
 * compiled in order (hipe_compile_pointwise_in_order) from the nodes after it that read
 * its product: 1, or 0 with the reason.  A product that may split its k asks for
 * *parts_bytes of workspace under uid parts_uid (its partial products). */
int hipe_gm_compile(const hipdnnSdkGraph* g, const hipdnnSdkNode* mm, const hipe_plan* ep,
                    const hipe_knobs* knobs, int64_t parts_uid, size_t* parts_bytes,
                    hipe_stage* st, char* why, size_t len);
/* The stage of an sdpa_fwd node (attention_program.c): 1, or 0 with the reason; its decode
 * path's partial rows need *parts_bytes of workspace under uid parts_uid. */
int hipe_fa_compile(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, int64_t parts_uid,
                    size_t* parts_bytes, hipe_stage* st, char* why, size_t len);
/* The stage of an sdpa_bwd node (attention_backward.c): 1, or 0 with the reason; its
 * delta rows need *parts_bytes of workspace under uid parts_uid. */
int hipe_fab_compile(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, int64_t parts_uid,
                     size_t* parts_bytes, hipe_stage* st, char* why, size_t len);
/* Sets each tensor's `reserved` (16-byte vectors allowed) from its pointer, at enqueue. */
void hipe_rw_set_vectors(rw_program* p);
/* The kernel a row-wise or resample stage runs when every pointer it binds is 16-byte
 * aligned (views: as aligned as their offset allows): the one compiled at plan time. */
hipe_kernel_id hipe_stage_planned_kernel(const struct hipe_staged* s, const hipe_stage* st);

/* Resolves a tensor's device pointer at enqueue (plugin.c: buffers, memory-space check). */
typedef hipdnnPluginStatus_t (*hipe_pointer_fn)(void* ctx, int64_t uid, void** ptr);

/* Enqueues every stage in order on `device` (current); the error is set (hipe_set_error)
 * on failure.  A row-wise or resample stage launches its planned kernel, or one its
 * pointers need instead (compiled then if need be, logged once). */
hipdnnPluginStatus_t hipe_staged_enqueue(const hipdnnSdkGraph* g, struct hipe_staged* s,
                                         hipe_pointer_fn resolve, void* ctx, void* workspace,
                                         size_t workspace_size,
                                         const hipdnnPluginTensorBuffer_t* buffers,
                                         uint32_t num_buffers, int device, int sm_count,
                                         void* stream);

/* The pointwise kernel that ran (hipe_pointwise_run's *path), one bit each. */
enum { RAN_JIT_FAST = 1u, RAN_JIT_GENERIC = 2u, RAN_FAST = 4u, RAN_GENERIC = 8u };

/* Runs a pointwise program whose pointers and scalars are set (plugin.c): the compiled
 * kernel when jit_ok, fast where allowed and aligned, else the interpreter.  *path gets
 * the kernel that ran (RAN_* bits), for the log. */
bool hipe_pointwise_run(const hipe_plan* plan, pw_program* prog, const hipe_jit_kernels* jit,
                        _Atomic(int)* jit_ok, bool fast, int sm_count, void* stream,
                        unsigned* path, char* why, size_t len);

#endif /* HIPDNN_HIP_STAGED_H */
