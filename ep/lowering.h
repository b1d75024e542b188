/* lowering.h — lower.c's state while one model is lowered, and the helpers lower_ops.c's
 * ONNX op lowerings build their hipdnn tensors and operations with (private to the two). */
#ifndef HIPDNN_EP_LOWERING_H
#define HIPDNN_EP_LOWERING_H

#include "hipdnn_ep.h"

typedef struct {
    hipdnnBackendDescriptor_t desc; /* NULL until the value is made */
    ep_shape hs;                    /* desc's dims */
    ep_shape onnx;                  /* the ONNX shape */
    int bind_kind;                  /* -1: virtual; else ep_bind_kind */
    int bind_index;
    bool shaped;                    /* onnx is known: a fused input, or a node's output */
} lval;

struct ep_lowering {
    const ep_model* m;
    hipdnnHandle_t h;
    lval* vals;
    hipdnnBackendDescriptor_t* descs;
    int n_descs, cap_descs;
    hipdnnBackendDescriptor_t* ops;
    int n_ops, cap_ops;
    ep_binding* binds;
    hipdnnBackendDescriptor_t* bind_t; /* binds[i]'s tensor */
    int n_binds, cap_binds, cap_bind_t;
    /* every tensor set on an operation, with that operation's index in ops (-1 until it
     * is finalized): which operations share tensors, for graph_parts */
    struct port {
        hipdnnBackendDescriptor_t op, t;
        int index;
    } * ports;
    int n_ports, cap_ports, ports_pending;
    bool emptied; /* a node computed nothing, or its output from what was not empty */
    int64_t next_uid;
    const char* label; /* the node being lowered */
    char err[1536];
    bool failed;
    bool shape_failed; /* failed in ONNX's shape rules (ep_shape_infer), not in hipdnn */
    int n_sdpa;        /* sdpa operations made (Attention nodes and fused patterns) */
    /* fuse_attention.c's attention patterns: per node 0 (none), 1 (lowered with the
     * pattern) or 2 + the index of the pattern lowered at that node, its last */
    int* role;
    void* pats;
    int n_pats;
};
typedef ep_lowering lw;

void lw_failf(lw* w, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
bool lw_ok(lw* w, hipdnnStatus_t st, const char* what);
void lw_bind(lw* w, hipdnnBackendDescriptor_t t, int64_t uid, int kind, int index);
ep_shape lw_aligned(const ep_shape* s, int r);
hipdnnBackendDescriptor_t lw_tensor(lw* w, const char* name, const ep_shape* s,
                                        const int64_t* strides, hipdnnDataType_t dt,
                                        const float* value, int64_t* uid_out);
hipdnnBackendDescriptor_t lw_virtual(lw* w, const char* name, const ep_shape* s,
                                     const int64_t* strides);
hipdnnBackendDescriptor_t lw_tmp(lw* w, const char* what, const ep_shape* s);
hipdnnBackendDescriptor_t lw_scalar(lw* w, const char* what, float v, int r);
hipdnnBackendDescriptor_t lw_bound(lw* w, int v, const ep_shape* s, const int64_t* strides);
hipdnnBackendDescriptor_t lw_op_new(lw* w, hipdnnBackendDescriptorType_t type,
                                        const char* what);
bool lw_set_t(lw* w, hipdnnBackendDescriptor_t op, hipdnnBackendAttributeName_t attr,
                  hipdnnBackendDescriptor_t t);
bool lw_op_done(lw* w, hipdnnBackendDescriptor_t op);
bool lw_pointwise(lw* w, const char* what, hipdnnPointwiseMode_t mode,
                      hipdnnBackendDescriptor_t x, hipdnnBackendDescriptor_t b,
                      hipdnnBackendDescriptor_t y);
bool lw_reduction(lw* w, const char* what, hipdnnReduceTensorOp_t mode,
                      hipdnnBackendDescriptor_t x, hipdnnBackendDescriptor_t y);
bool lw_reshape(lw* w, hipdnnBackendDescriptor_t x, hipdnnBackendDescriptor_t y);
bool lw_reshape_mode(lw* w, hipdnnBackendDescriptor_t x, hipdnnBackendDescriptor_t y,
                     hipdnnReshapeMode_t mode);
bool lw_no_elements(const ep_shape* s);
hipdnnBackendDescriptor_t lw_get(lw* w, int v, const ep_shape* want);
hipdnnBackendDescriptor_t lw_get_onnx(lw* w, int v);
hipdnnBackendDescriptor_t lw_get_bcast(lw* w, int v, int r);
hipdnnBackendDescriptor_t lw_make_out(lw* w, int v, const ep_shape* hs);
/* lower_ops.c: a norm_forward operation with mode, phase, X, scale, bias (NULL: none) and
 * epsilon set; the caller sets Y (and statistics) and finishes it with lw_op_done. */
hipdnnBackendDescriptor_t lw_norm_fwd_op(lw* w, hipdnnBackendNormMode_t mode,
                                         hipdnnBackendNormFwdPhase_t phase,
                                         hipdnnBackendDescriptor_t x,
                                         hipdnnBackendDescriptor_t scale,
                                         hipdnnBackendDescriptor_t bias, float eps, int rank);
/* ops_attention.c: value v's memory read as dims / strides (a VIEW_ONLY reshape of a value
 * computed in the graph), and one sdpa operation (scale by value, bias optional, causal:
 * the top-left band). */
hipdnnBackendDescriptor_t lw_strided(lw* w, int v, const ep_shape* dims, const int64_t* strides,
                                     const char* what);
/* fuse_attention.c: finds the patterns of w->m (false: out of memory), and lowers pattern
 * `index` as one sdpa, or its nodes one by one through lower_one where the shapes do
 * not fit one. */
typedef bool lw_node_fn(lw* w, const ep_node* n);
bool lw_find_attention(lw* w);
bool lw_emit_attention_pattern(lw* w, int index, lw_node_fn* lower_one);
hipdnnBackendDescriptor_t lw_sdpa_out(lw* w, int y, const ep_shape* s);
bool lw_sdpa(lw* w, hipdnnBackendDescriptor_t q, hipdnnBackendDescriptor_t k,
             hipdnnBackendDescriptor_t v, hipdnnBackendDescriptor_t bias, float scale,
             bool causal, hipdnnBackendDescriptor_t o);

#endif
