/* lower.h — the graph rewrite (lower.c) as its op families' files see it: the state of one
 * rewrite, the builder that adds tensors and nodes to the rewritten graph (lower.c), and
 * each family's table of ops (lower_norm_backward.c, lower_batchnorm.c, lower_movement.c).
 *
 * A builder function that runs out of memory sets l->oom and returns HIPDNN_NO_TENSOR (or
 * false); once l->oom is set every later one fails too, so a family's lowering chains
 * calls and checks l->oom once at the end. */
#ifndef HIPDNN_HIP_LOWER_H
#define HIPDNN_HIP_LOWER_H

#include "staged.h"

/* Statistics over so few rows (channels) that one group of threads a row would leave most of
 * the GPU idle: the norm is run as split reductions and pointwise stages instead, which
 * spread each row over many blocks (a batchnorm over [64, 128, 64, 64] took 1.4 ms as 128
 * rows of the row kernel on an H200, 0.31 ms in PyTorch). */
#define FEW_ROWS 1024

typedef struct {
    const hipdnnSdkGraph* orig; /* the graph given */
    hipdnnSdkGraph* g; /* the rewritten graph: tensors grow, nodes are rebuilt */
    int32_t tcap, ncap;
    int64_t next_uid;
    hipe_alias* alias;
    int nalias, acap;
    int64_t* ws;
    int nws, wcap;
    bool oom;
    char* why;
    size_t len;
} lowering;

/* ---- the builder (lower.c) ------------------------------------------------------------ */

/* The tensor of uid in the rewritten graph (linear: graphs are small).  Adding a tensor
 * may move every tensor: a pointer is good until the next lw_add_tensor. */
hipdnnSdkTensor* lw_tensor(lowering* l, int64_t uid);
/* A new tensor named base/what; its uid.  strides NULL: packed. */
int64_t lw_add_tensor(lowering* l, const char* base, const char* what, hipdnnDataType_t dt,
                      int32_t ndim, const int64_t* dims, const int64_t* strides, bool is_virtual);
/* A float32 constant (a pass-by-value scalar). */
int64_t lw_add_const(lowering* l, const char* base, const char* what, double v);
/* Appends node n (its name is taken over, or made from base/what). */
bool lw_push(lowering* l, hipdnnSdkNode* n, const char* base, const char* what);
/* A pointwise node out = mode(a[, b]); out HIPDNN_NO_TENSOR: a new virtual tensor shaped as
 * `like`.  Its output uid. */
int64_t lw_pw(lowering* l, const char* base, const char* what, hipdnnPointwiseMode_t mode,
              int64_t a, int64_t b, int64_t out, int64_t like);
/* A reduction of x to `dims` (x's rank, 1 on the reduced axes); out HIPDNN_NO_TENSOR: a new
 * virtual tensor. */
int64_t lw_reduce(lowering* l, const char* base, const char* what, int64_t mode, int64_t x,
                  const int64_t* dims, int64_t out);
/* Whether the elements fill [0, count) exactly: packed in some order of the dims. */
bool lw_dense(int32_t nd, const int64_t* dims, const int64_t* strides);
/* Keeps virtual tensor uid in the workspace: real for every stage, packed unless its
 * strides already are dense. */
bool lw_keep_in_workspace(lowering* l, int64_t uid);
/* A view of tensor `base`'s memory (kept in the workspace if virtual): dims and strides
 * in elements, from `offset` elements on.  Its uid. */
int64_t lw_view(lowering* l, const char* name, const char* what, int64_t base, int32_t ndim,
                const int64_t* dims, const int64_t* strides, int64_t offset);

/* ---- the op families ------------------------------------------------------------------ */

/* An op the rewrite takes: its kind, the check that says a node of it is rewritten (NULL:
 * every one) and its lowering, which rewrites node n into l (false with l->why set, or
 * l->oom). */
typedef struct {
    hipdnnOpKind_t kind;
    bool (*needs)(const hipdnnSdkGraph* g, const hipdnnSdkNode* n);
    bool (*lower)(lowering* l, const hipdnnSdkNode* n);
} lowered_op;

/* Each family's ops (lower_norm_backward.c, lower_batchnorm.c, lower_movement.c), ended by
 * a row without a lowering: a new op of a family is a row of its table. */
extern const lowered_op lower_norm_backward_ops[];
extern const lowered_op lower_batchnorm_ops[];
extern const lowered_op lower_movement_ops[];

/* lower_batchnorm.c, for norm backward: a batchnorm backward a plane at a time, and
 * whether a batchnorm over x can take its statistics so. */
bool lower_batchnorm_backward_planes(lowering* l, const hipdnnSdkNode* n);
bool lower_planes_inner(const hipdnnSdkTensor* x);

#endif /* HIPDNN_HIP_LOWER_H */
