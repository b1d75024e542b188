/* What the cudnn engine claims, and how it says it to cuDNN: a hipdnn graph of
 * convolutions (fprop, dgrad, wgrad), matmuls and pointwise nodes becomes cuDNN backend
 * descriptors one for one, since the two graph models are the same by design: each
 * tensor a TENSOR descriptor with its uid, dims, strides, data type and its virtual /
 * by-value flags, each node an OPERATION descriptor naming its tensors, all of them one
 * OPERATIONGRAPH.  hipdnn's data types, pointwise modes and convolution modes have cuDNN's
 * numbers, so they pass through as they are.  An sdpa node is the exception: it becomes
 * the matmuls, pointwise and reduction operations cuDNN frontend builds for attention
 * (cudnn_sdpa.c; sdpa_backward in cudnn_sdpa_backward.c), with intermediates and
 * constants of uids past the graph's, and the backward's fp32 accumulators in the workspace.
 * A norm node (norm_forward, batchnorm_inference, norm_backward) alone in its graph becomes
 * one NORM_FORWARD / NORM_BACKWARD operation (cudnn_norm.c).
 *
 * Which of these graphs cuDNN runs (which epilogues it fuses after a convolution, which
 * layouts and types its engines take) is cuDNN's to say: this file declines only what it
 * does not translate, and the graph's finalization and cuDNN's heuristic (cudnn_plan.c)
 * decline the rest with cuDNN's own message.
 *
 * cuDNN's pointwise operands must have the output's rank (broadcasting over dims of 1),
 * and its matmul takes batched operands of rank 3 at least; hipdnn broadcasts NumPy-style,
 * aligned right.  So every tensor is given the graph's largest rank (at least 3 with a
 * matmul) by leading dims of 1, which is the same broadcast. */
#include <stdlib.h>
#include <string.h>

#include "cudnn.h"

#define decline(why, len, ...) hipdnnSdkDecline(why, len, CUDNN_ENGINE_NAME, __VA_ARGS__)

static const char* type_name(hipdnnDataType_t t) { return hipdnnSdkDataTypeName(t); }

bool cudnn_graph_desc(cd_graph* graph, int type, cd_desc* out, char* why, size_t len) {
    *out = NULL;
    if (graph->num_descs == graph->cap_descs) {
        const int cap = graph->cap_descs ? graph->cap_descs * 2 : 32;
        cd_desc* d = realloc(graph->descs, (size_t)cap * sizeof(*d));
        if (!d) return decline(why, len, "out of memory");
        graph->descs = d;
        graph->cap_descs = cap;
    }
    const cd_status st = g_cd.create_descriptor(type, out);
    if (st != CD_STATUS_SUCCESS) {
        char text[600];
        *out = NULL;
        return decline(why, len, "cudnnBackendCreateDescriptor(%d): %s", type,
                       cudnn_status_text(st, text, sizeof(text)));
    }
    graph->descs[graph->num_descs++] = *out;
    return true;
}

void cudnn_graph_free(cd_graph* graph) {
    for (int i = graph->num_descs - 1; i >= 0; --i) g_cd.destroy_descriptor(graph->descs[i]);
    free(graph->descs);
    free(graph->io);
    memset(graph, 0, sizeof(*graph));
}

/* One attribute; on failure the reason names `what` (a node or tensor) and the attribute. */
typedef struct {
    char* why;
    size_t len;
    const char* what;
    bool ok;
} setter;

static void set(setter* s, cd_desc d, int name, int type, int64_t count, const void* values,
                const char* attr) {
    if (!s->ok) return;
    const cd_status st = g_cd.set_attribute(d, name, type, count, values);
    if (st == CD_STATUS_SUCCESS) return;
    char text[600];
    s->ok = decline(s->why, s->len, "%s: cudnnBackendSetAttribute(%s): %s", s->what, attr,
                    cudnn_status_text(st, text, sizeof(text)));
}

static bool finalize(setter* s, cd_desc d, const char* kind) {
    if (!s->ok) return false;
    const cd_status st = g_cd.finalize(d);
    if (st == CD_STATUS_SUCCESS) return true;
    char text[600];
    return s->ok = decline(s->why, s->len, "%s: cuDNN rejects it: cudnnBackendFinalize(%s): %s",
                           s->what, kind, cudnn_status_text(st, text, sizeof(text)));
}

/* ---- tensors ----------------------------------------------------------------------------- */

typedef cd_builder builder;

static bool supported_type(hipdnnDataType_t t) {
    switch (t) {
    case HIPDNN_DATA_FLOAT: case HIPDNN_DATA_DOUBLE: case HIPDNN_DATA_HALF:
    case HIPDNN_DATA_INT8: case HIPDNN_DATA_INT32: case HIPDNN_DATA_UINT8:
    case HIPDNN_DATA_BFLOAT16: case HIPDNN_DATA_INT64: case HIPDNN_DATA_BOOLEAN:
    case HIPDNN_DATA_FP8_E4M3: case HIPDNN_DATA_FP8_E5M2:
        return true;
    default:
        return false;
    }
}

/* The variant pack's entry of a tensor that is not virtual: one per uid. */
static bool add_io(builder* b, const cd_tensor_spec* s) {
    cd_graph* out = b->out;
    for (int i = 0; i < out->num_io; ++i)
        if (out->io[i].uid == s->uid) return true;
    if (out->num_io == out->cap_io) {
        const int cap = out->cap_io ? out->cap_io * 2 : 16;
        cd_io* io = realloc(out->io, (size_t)cap * sizeof(*io));
        if (!io) return decline(b->why, b->len, "out of memory");
        out->io = io;
        out->cap_io = cap;
    }
    cd_io* io = &out->io[out->num_io++];
    memset(io, 0, sizeof(*io));
    io->uid = s->uid;
    io->by_value = s->by_value;
    io->has_value = s->by_value && s->has_value;
    if (s->in_workspace) { /* packed: its dims' product of elements */
        size_t bytes = hipdnnSdkDataTypeSize(s->type);
        for (int d = 0; d < b->rank; ++d) bytes *= (size_t)s->dims[d];
        const size_t a = CUDNN_WORKSPACE_ALIGNMENT;
        io->in_workspace = true;
        io->offset = (out->workspace + a - 1) / a * a;
        out->workspace = io->offset + bytes;
    }
    memcpy(io->value, s->value, sizeof(io->value));
    hipdnnSdkFormat(io->name, sizeof(io->name), "%s", s->name ? s->name : "");
    return true;
}

cd_desc cudnn_new_tensor(builder* b, const cd_tensor_spec* spec, const char* label) {
    cd_tensor_spec s = *spec;
    if (s.uid == 0 && b->next_uid == 0) {
        decline(b->why, b->len, "%s: no uid is left past the graph's for its intermediates",
                label);
        return NULL;
    }
    if (s.uid == 0) s.uid = b->next_uid++;
    cd_desc d = NULL;
    if (!cudnn_graph_desc(b->out, CD_TENSOR_DESCRIPTOR, &d, b->why, b->len)) return NULL;
    char what[160];
    hipdnnSdkFormat(what, sizeof(what), "%s: tensor '%s' (uid %lld)", label,
                    s.name ? s.name : "", (long long)s.uid);
    setter st = {b->why, b->len, what, true};
    const int32_t type = (int32_t)s.type;
    const int64_t align = CUDNN_ALIGNMENT;
    set(&st, d, CD_ATTR_TENSOR_DATA_TYPE, CD_TYPE_DATA_TYPE, 1, &type, "TENSOR_DATA_TYPE");
    set(&st, d, CD_ATTR_TENSOR_DIMENSIONS, CD_TYPE_INT64, b->rank, s.dims, "TENSOR_DIMENSIONS");
    set(&st, d, CD_ATTR_TENSOR_STRIDES, CD_TYPE_INT64, b->rank, s.strides, "TENSOR_STRIDES");
    set(&st, d, CD_ATTR_TENSOR_UNIQUE_ID, CD_TYPE_INT64, 1, &s.uid, "TENSOR_UNIQUE_ID");
    set(&st, d, CD_ATTR_TENSOR_BYTE_ALIGNMENT, CD_TYPE_INT64, 1, &align, "TENSOR_BYTE_ALIGNMENT");
    set(&st, d, CD_ATTR_TENSOR_IS_VIRTUAL, CD_TYPE_BOOLEAN, 1, &s.is_virtual,
        "TENSOR_IS_VIRTUAL");
    if (s.by_value)
        set(&st, d, CD_ATTR_TENSOR_IS_BY_VALUE, CD_TYPE_BOOLEAN, 1, &s.by_value,
            "TENSOR_IS_BY_VALUE");
    if (!finalize(&st, d, "TENSOR")) return NULL;
    return s.is_virtual || add_io(b, &s) ? d : NULL;
}

int cudnn_tensor_slot(builder* b, int64_t uid, const char* label) {
    int i = 0;
    while (i < b->g->num_tensors && b->g->tensors[i].uid != uid) ++i;
    if (i < b->g->num_tensors) return i;
    decline(b->why, b->len, "%s: tensor uid %lld is not in the graph", label, (long long)uid);
    return -1;
}

cd_desc cudnn_tensor(builder* b, int64_t uid, const char* label) {
    const int i = cudnn_tensor_slot(b, uid, label);
    if (i < 0) return NULL;
    if (b->slots[i].desc) return b->slots[i].desc;
    const hipdnnSdkTensor* t = &b->g->tensors[i];
    if (!supported_type(t->data_type)) {
        decline(b->why, b->len, "%s: tensor '%s' is %s, which cuDNN does not store the way "
                "hipdnn does", label, t->name, type_name(t->data_type));
        return NULL;
    }
    cd_tensor_spec s = {.uid = t->uid, .type = t->data_type, .is_virtual = t->is_virtual,
                        .by_value = t->is_by_value, .has_value = t->has_value, .name = t->name};
    memcpy(s.value, t->value, sizeof(s.value));
    const int pad = b->rank - t->ndim;
    int64_t inner = 1;
    for (int d = 0; d < t->ndim; ++d) {
        s.dims[pad + d] = t->dims[d];
        s.strides[pad + d] = t->strides[d];
        const int64_t reach = t->dims[d] * t->strides[d];
        if (reach > inner) inner = reach;
    }
    for (int d = pad - 1; d >= 0; --d) s.dims[d] = 1, s.strides[d] = inner; /* leading 1s */
    return b->slots[i].desc = cudnn_new_tensor(b, &s, label);
}

/* The operation list: op appended (it is finalized). */
static cd_desc add_op(builder* b, cd_desc op) {
    if (!op) return NULL;
    if (b->num_ops == b->cap_ops) {
        const int cap = b->cap_ops ? b->cap_ops * 2 : 16;
        cd_desc* ops = realloc(b->ops, (size_t)cap * sizeof(*ops));
        if (!ops) {
            decline(b->why, b->len, "out of memory");
            return NULL;
        }
        b->ops = ops;
        b->cap_ops = cap;
    }
    return b->ops[b->num_ops++] = op;
}

cd_desc cudnn_graph_add_op(builder* b, cd_desc op) { return add_op(b, op); }

/* ---- nodes ------------------------------------------------------------------------------- */

static int32_t compute_of(const hipdnnSdkNode* n) {
    return (int32_t)(n->compute_type == HIPDNN_DATA_NOT_SET ? HIPDNN_DATA_FLOAT : n->compute_type);
}

/* An int8 forward convolution with int32 compute (cuDNN's INT8x4 engines, which want
 * channels-last tensors and channels a multiple of 4: cuDNN's to say), giving int32 or
 * fp32. */
static bool int8_conv_types(const builder* b, const hipdnnSdkNode* n, const char* label) {
    const hipdnnSdkTensor* x = hipdnnSdkGraphFindTensor(b->g, n->inputs[HIPDNN_CONV_X]);
    const hipdnnSdkTensor* w = hipdnnSdkGraphFindTensor(b->g, n->inputs[HIPDNN_CONV_W]);
    const hipdnnSdkTensor* y = hipdnnSdkGraphFindTensor(b->g, n->outputs[HIPDNN_CONV_Y]);
    if (n->kind != HIPDNN_OP_CONV_FPROP || !x || !w || !y || x->data_type != HIPDNN_DATA_INT8 ||
        w->data_type != HIPDNN_DATA_INT8 ||
        (y->data_type != HIPDNN_DATA_INT32 && y->data_type != HIPDNN_DATA_FLOAT))
        return decline(b->why, b->len, "%s: compute type int32; cudnn translates it for a "
                       "forward convolution of int8 x and w giving int32 or fp32 only", label);
    return true;
}

/* Convolutions and matmuls: fp32 / fp16 / bf16 data with fp32 compute, or int8 forward
 * convolutions with int32 compute. */
static bool compute_node_types(builder* b, const hipdnnSdkNode* n, const char* label) {
    if (compute_of(n) == HIPDNN_DATA_INT32) return int8_conv_types(b, n, label);
    if (compute_of(n) != HIPDNN_DATA_FLOAT)
        return decline(b->why, b->len, "%s: compute type %s; cudnn translates fp32 compute, and "
                       "int32 for int8 convolutions", label, type_name(n->compute_type));
    const int64_t* ports[2] = {n->inputs, n->outputs};
    for (int k = 0; k < 2; ++k)
        for (int p = 0; p < HIPDNN_MAX_PORTS; ++p) {
            if (ports[k][p] == HIPDNN_NO_TENSOR) continue;
            const hipdnnSdkTensor* t = hipdnnSdkGraphFindTensor(b->g, ports[k][p]);
            if (t && k == 0 && t->data_type == HIPDNN_DATA_FLOAT) b->out->fp32_product = true;
            if (t && t->data_type != HIPDNN_DATA_FLOAT && t->data_type != HIPDNN_DATA_HALF &&
                t->data_type != HIPDNN_DATA_BFLOAT16)
                return decline(b->why, b->len, "%s: '%s' is %s; cudnn translates fp32, fp16 and "
                               "bf16 convolutions and matmuls", label, t->name,
                               type_name(t->data_type));
        }
    return true;
}

static cd_desc conv_desc(builder* b, const hipdnnSdkNode* n, const char* label, int nsp) {
    cd_desc d = NULL;
    if (!cudnn_graph_desc(b->out, CD_CONVOLUTION_DESCRIPTOR, &d, b->why, b->len)) return NULL;
    setter s = {b->why, b->len, label, true};
    int64_t pre[HIPDNN_MAX_DIMS], post[HIPDNN_MAX_DIMS], stride[HIPDNN_MAX_DIMS],
        dil[HIPDNN_MAX_DIMS];
    for (int i = 0; i < nsp; ++i) {
        pre[i] = n->attrs[HIPDNN_CONV_PRE_PADDING].i[i];
        post[i] = n->attrs[HIPDNN_CONV_POST_PADDING].i[i];
        stride[i] = n->attrs[HIPDNN_CONV_STRIDE].i[i];
        dil[i] = n->attrs[HIPDNN_CONV_DILATION].i[i];
    }
    const int32_t comp = compute_of(n), mode = (int32_t)n->attrs[HIPDNN_CONV_MODE].i[0];
    const int64_t spatial = nsp;
    set(&s, d, CD_ATTR_CONVOLUTION_SPATIAL_DIMS, CD_TYPE_INT64, 1, &spatial, "SPATIAL_DIMS");
    set(&s, d, CD_ATTR_CONVOLUTION_COMP_TYPE, CD_TYPE_DATA_TYPE, 1, &comp, "COMP_TYPE");
    set(&s, d, CD_ATTR_CONVOLUTION_CONV_MODE, CD_TYPE_CONVOLUTION_MODE, 1, &mode, "CONV_MODE");
    set(&s, d, CD_ATTR_CONVOLUTION_PRE_PADDINGS, CD_TYPE_INT64, nsp, pre, "PRE_PADDINGS");
    set(&s, d, CD_ATTR_CONVOLUTION_POST_PADDINGS, CD_TYPE_INT64, nsp, post, "POST_PADDINGS");
    set(&s, d, CD_ATTR_CONVOLUTION_FILTER_STRIDES, CD_TYPE_INT64, nsp, stride, "FILTER_STRIDES");
    set(&s, d, CD_ATTR_CONVOLUTION_DILATIONS, CD_TYPE_INT64, nsp, dil, "DILATIONS");
    return finalize(&s, d, "CONVOLUTION") ? d : NULL;
}

/* The three conv ops differ only in their descriptor type and attribute numbers. */
typedef struct {
    int type;
    const char* kind;
    int alpha, beta, conv, port_attr[3]; /* the attributes of inputs[0], inputs[1], outputs[0] */
} conv_op;

static const conv_op k_fprop = {CD_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
                                "OPERATION_CONVOLUTION_FORWARD", CD_ATTR_CONV_FWD_ALPHA,
                                CD_ATTR_CONV_FWD_BETA, CD_ATTR_CONV_FWD_CONV_DESC,
                                {CD_ATTR_CONV_FWD_X, CD_ATTR_CONV_FWD_W, CD_ATTR_CONV_FWD_Y}};
static const conv_op k_dgrad = {
    CD_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR, "OPERATION_CONVOLUTION_BACKWARD_DATA",
    CD_ATTR_CONV_BWD_DATA_ALPHA, CD_ATTR_CONV_BWD_DATA_BETA, CD_ATTR_CONV_BWD_DATA_CONV_DESC,
    {CD_ATTR_CONV_BWD_DATA_DY, CD_ATTR_CONV_BWD_DATA_W, CD_ATTR_CONV_BWD_DATA_DX}};
static const conv_op k_wgrad = {
    CD_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
    "OPERATION_CONVOLUTION_BACKWARD_FILTER", CD_ATTR_CONV_BWD_FILTER_ALPHA,
    CD_ATTR_CONV_BWD_FILTER_BETA, CD_ATTR_CONV_BWD_FILTER_CONV_DESC,
    {CD_ATTR_CONV_BWD_FILTER_X, CD_ATTR_CONV_BWD_FILTER_DY, CD_ATTR_CONV_BWD_FILTER_DW}};

static cd_desc conv_node(builder* b, const hipdnnSdkNode* n, const char* label,
                         const conv_op* op) {
    const hipdnnSdkTensor* first = hipdnnSdkGraphFindTensor(b->g, n->inputs[0]);
    if (!first || first->ndim < 3 || first->ndim != b->rank) {
        decline(b->why, b->len, "%s: its tensors have rank %d, the graph's others %d; cuDNN "
                "convolves tensors of one rank", label, first ? first->ndim : 0, b->rank);
        return NULL;
    }
    if (!compute_node_types(b, n, label)) return NULL;
    cd_desc conv = conv_desc(b, n, label, first->ndim - 2);
    cd_desc in0 = conv ? cudnn_tensor(b, n->inputs[0], label) : NULL;
    cd_desc in1 = in0 ? cudnn_tensor(b, n->inputs[1], label) : NULL;
    cd_desc out = in1 ? cudnn_tensor(b, n->outputs[0], label) : NULL;
    cd_desc d = NULL;
    if (!out || !cudnn_graph_desc(b->out, op->type, &d, b->why, b->len)) return NULL;
    setter s = {b->why, b->len, label, true};
    const float alpha = 1.0f, beta = 0.0f; /* beta 0: the output is written, not read */
    set(&s, d, op->alpha, CD_TYPE_FLOAT, 1, &alpha, "ALPHA");
    set(&s, d, op->beta, CD_TYPE_FLOAT, 1, &beta, "BETA");
    set(&s, d, op->conv, CD_TYPE_BACKEND_DESCRIPTOR, 1, &conv, "CONV_DESC");
    const cd_desc ports[3] = {in0, in1, out};
    for (int i = 0; i < 3; ++i)
        set(&s, d, op->port_attr[i], CD_TYPE_BACKEND_DESCRIPTOR, 1, &ports[i], "a tensor");
    return finalize(&s, d, op->kind) ? add_op(b, d) : NULL;
}

/* cuDNN's matmul computes as many batches as A and B both have (a batch dim of 1 is not
 * broadcast: a GPU run left C's other batches unwritten), so operands whose batch dims
 * differ from C's are declined; hipdnn's own engines broadcast them. */
static bool same_batch(const builder* b, const hipdnnSdkNode* n, const char* label) {
    const hipdnnSdkTensor* c = hipdnnSdkGraphFindTensor(b->g, n->outputs[HIPDNN_MATMUL_C]);
    const int ports[2] = {HIPDNN_MATMUL_A, HIPDNN_MATMUL_B};
    for (int k = 0; c && k < 2; ++k) {
        const hipdnnSdkTensor* t = hipdnnSdkGraphFindTensor(b->g, n->inputs[ports[k]]);
        if (!t) continue;
        int64_t tb = 1, cb = 1;
        for (int d = 0; d + 2 < t->ndim; ++d) tb *= t->dims[d];
        for (int d = 0; d + 2 < c->ndim; ++d) cb *= c->dims[d];
        if (tb != cb)
            return decline(b->why, b->len, "%s: '%s' has %lld batch%s, the product %lld; "
                           "cuDNN's matmul does not broadcast batch dims", label, t->name,
                           (long long)tb, tb == 1 ? "" : "es", (long long)cb);
    }
    return true;
}

cd_desc cudnn_matmul(builder* b, cd_desc a, cd_desc bb, cd_desc c, const char* label) {
    cd_desc desc = NULL, d = NULL;
    if (!cudnn_graph_desc(b->out, CD_MATMUL_DESCRIPTOR, &desc, b->why, b->len)) return NULL;
    setter s = {b->why, b->len, label, true};
    const int32_t comp = HIPDNN_DATA_FLOAT;
    set(&s, desc, CD_ATTR_MATMUL_COMP_TYPE, CD_TYPE_DATA_TYPE, 1, &comp, "MATMUL_COMP_TYPE");
    if (!finalize(&s, desc, "MATMUL") ||
        !cudnn_graph_desc(b->out, CD_OPERATION_MATMUL_DESCRIPTOR, &d, b->why, b->len))
        return NULL;
    set(&s, d, CD_ATTR_OP_MATMUL_ADESC, CD_TYPE_BACKEND_DESCRIPTOR, 1, &a, "MATMUL_ADESC");
    set(&s, d, CD_ATTR_OP_MATMUL_BDESC, CD_TYPE_BACKEND_DESCRIPTOR, 1, &bb, "MATMUL_BDESC");
    set(&s, d, CD_ATTR_OP_MATMUL_CDESC, CD_TYPE_BACKEND_DESCRIPTOR, 1, &c, "MATMUL_CDESC");
    set(&s, d, CD_ATTR_OP_MATMUL_DESC, CD_TYPE_BACKEND_DESCRIPTOR, 1, &desc, "MATMUL_DESC");
    return finalize(&s, d, "OPERATION_MATMUL") ? add_op(b, d) : NULL;
}

static cd_desc matmul_node(builder* b, const hipdnnSdkNode* n, const char* label) {
    if (!compute_node_types(b, n, label) || !same_batch(b, n, label)) return NULL;
    if (b->out->fp32_product) {
        /* an H200 run (cuDNN 9.14): its matmul engines read fp32 as TF32 (errors of 1e-3)
         * with neither the TENSOR_CORE nor the DOWN_CONVERT_INPUTS note, so the notes
         * cudnn_plan.c filters on cannot keep fp32 exact here */
        decline(b->why, b->len, "%s: fp32 operands; cuDNN's matmul engines compute them as "
                "TF32, and hipdnn's fp32 is IEEE fp32 (the blaslt and hip engines run it)",
                label);
        return NULL;
    }
    cd_desc a = cudnn_tensor(b, n->inputs[HIPDNN_MATMUL_A], label);
    cd_desc bb = a ? cudnn_tensor(b, n->inputs[HIPDNN_MATMUL_B], label) : NULL;
    cd_desc c = bb ? cudnn_tensor(b, n->outputs[HIPDNN_MATMUL_C], label) : NULL;
    return c ? cudnn_matmul(b, a, bb, c, label) : NULL;
}

cd_desc cudnn_reduction(builder* b, int mode, cd_desc x, cd_desc y, const char* label) {
    cd_desc desc = NULL, d = NULL;
    if (!cudnn_graph_desc(b->out, CD_REDUCTION_DESCRIPTOR, &desc, b->why, b->len)) return NULL;
    setter s = {b->why, b->len, label, true};
    const int32_t comp = HIPDNN_DATA_FLOAT, op = mode;
    set(&s, desc, CD_ATTR_REDUCTION_OPERATOR, CD_TYPE_REDUCTION_OPERATOR_TYPE, 1, &op,
        "REDUCTION_OPERATOR");
    set(&s, desc, CD_ATTR_REDUCTION_COMP_TYPE, CD_TYPE_DATA_TYPE, 1, &comp, "REDUCTION_COMP_TYPE");
    if (!finalize(&s, desc, "REDUCTION") ||
        !cudnn_graph_desc(b->out, CD_OPERATION_REDUCTION_DESCRIPTOR, &d, b->why, b->len))
        return NULL;
    set(&s, d, CD_ATTR_OP_REDUCTION_XDESC, CD_TYPE_BACKEND_DESCRIPTOR, 1, &x, "REDUCTION_XDESC");
    set(&s, d, CD_ATTR_OP_REDUCTION_YDESC, CD_TYPE_BACKEND_DESCRIPTOR, 1, &y, "REDUCTION_YDESC");
    set(&s, d, CD_ATTR_OP_REDUCTION_DESC, CD_TYPE_BACKEND_DESCRIPTOR, 1, &desc, "REDUCTION_DESC");
    return finalize(&s, d, "OPERATION_REDUCTION") ? add_op(b, d) : NULL;
}

cd_desc cudnn_reshape(builder* b, cd_desc x, cd_desc y, const char* label) {
    cd_desc d = NULL;
    if (!cudnn_graph_desc(b->out, CD_OPERATION_RESHAPE_DESCRIPTOR, &d, b->why, b->len))
        return NULL;
    setter s = {b->why, b->len, label, true};
    set(&s, d, CD_ATTR_OP_RESHAPE_XDESC, CD_TYPE_BACKEND_DESCRIPTOR, 1, &x, "RESHAPE_XDESC");
    set(&s, d, CD_ATTR_OP_RESHAPE_YDESC, CD_TYPE_BACKEND_DESCRIPTOR, 1, &y, "RESHAPE_YDESC");
    return finalize(&s, d, "OPERATION_RESHAPE") ? add_op(b, d) : NULL;
}

/* A pointwise operation of mode on given operands (x, b, t in; y out; b and t may be NULL),
 * for the operations a node becomes. */
cd_desc cudnn_pointwise(builder* b, int mode, int32_t prec, int64_t axis, cd_desc x,
                        cd_desc bb, cd_desc t, cd_desc y, const char* label) {
    cd_desc pw = NULL, d = NULL;
    if (!cudnn_graph_desc(b->out, CD_POINTWISE_DESCRIPTOR, &pw, b->why, b->len)) return NULL;
    setter s = {b->why, b->len, label, true};
    const int32_t m = mode;
    set(&s, pw, CD_ATTR_POINTWISE_MODE, CD_TYPE_POINTWISE_MODE, 1, &m, "POINTWISE_MODE");
    set(&s, pw, CD_ATTR_POINTWISE_MATH_PREC, CD_TYPE_DATA_TYPE, 1, &prec, "POINTWISE_MATH_PREC");
    if (axis >= 0) set(&s, pw, CD_ATTR_POINTWISE_AXIS, CD_TYPE_INT64, 1, &axis, "POINTWISE_AXIS");
    if (!finalize(&s, pw, "POINTWISE") ||
        !cudnn_graph_desc(b->out, CD_OPERATION_POINTWISE_DESCRIPTOR, &d, b->why, b->len))
        return NULL;
    set(&s, d, CD_ATTR_OP_POINTWISE_PW_DESCRIPTOR, CD_TYPE_BACKEND_DESCRIPTOR, 1, &pw,
        "PW_DESCRIPTOR");
    set(&s, d, CD_ATTR_OP_POINTWISE_XDESC, CD_TYPE_BACKEND_DESCRIPTOR, 1, &x, "XDESC");
    if (bb) set(&s, d, CD_ATTR_OP_POINTWISE_BDESC, CD_TYPE_BACKEND_DESCRIPTOR, 1, &bb, "BDESC");
    if (t) set(&s, d, CD_ATTR_OP_POINTWISE_TDESC, CD_TYPE_BACKEND_DESCRIPTOR, 1, &t, "TDESC");
    set(&s, d, CD_ATTR_OP_POINTWISE_YDESC, CD_TYPE_BACKEND_DESCRIPTOR, 1, &y, "YDESC");
    return finalize(&s, d, "OPERATION_POINTWISE") ? add_op(b, d) : NULL;
}

/* The POINTWISE descriptor: the mode, its math precision, and the parameters of its mode. */
static cd_desc pointwise_desc(builder* b, const hipdnnSdkNode* n, const char* label) {
    cd_desc d = NULL;
    if (!cudnn_graph_desc(b->out, CD_POINTWISE_DESCRIPTOR, &d, b->why, b->len)) return NULL;
    setter s = {b->why, b->len, label, true};
    const hipdnnPointwiseMode_t mode = hipdnnSdkNodeMode(n);
    const int32_t m = (int32_t)mode, prec = compute_of(n);
    set(&s, d, CD_ATTR_POINTWISE_MODE, CD_TYPE_POINTWISE_MODE, 1, &m, "POINTWISE_MODE");
    set(&s, d, CD_ATTR_POINTWISE_MATH_PREC, CD_TYPE_DATA_TYPE, 1, &prec, "POINTWISE_MATH_PREC");
    if (mode == HIPDNN_POINTWISE_RELU_FWD || mode == HIPDNN_POINTWISE_RELU_BWD) {
        const double lo = n->attrs[HIPDNN_PW_RELU_LOWER_CLIP].d;
        const double hi = n->attrs[HIPDNN_PW_RELU_UPPER_CLIP].d;
        const double slope = n->attrs[HIPDNN_PW_RELU_LOWER_CLIP_SLOPE].d;
        set(&s, d, CD_ATTR_POINTWISE_RELU_LOWER_CLIP, CD_TYPE_DOUBLE, 1, &lo, "RELU_LOWER_CLIP");
        set(&s, d, CD_ATTR_POINTWISE_RELU_UPPER_CLIP, CD_TYPE_DOUBLE, 1, &hi, "RELU_UPPER_CLIP");
        set(&s, d, CD_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE, CD_TYPE_DOUBLE, 1, &slope,
            "RELU_LOWER_CLIP_SLOPE");
    } else if (mode == HIPDNN_POINTWISE_ELU_FWD || mode == HIPDNN_POINTWISE_ELU_BWD) {
        const double alpha = n->attrs[HIPDNN_PW_ELU_ALPHA].d;
        set(&s, d, CD_ATTR_POINTWISE_ELU_ALPHA, CD_TYPE_DOUBLE, 1, &alpha, "ELU_ALPHA");
    } else if (mode == HIPDNN_POINTWISE_SOFTPLUS_FWD || mode == HIPDNN_POINTWISE_SOFTPLUS_BWD) {
        const double beta = n->attrs[HIPDNN_PW_SOFTPLUS_BETA].d;
        set(&s, d, CD_ATTR_POINTWISE_SOFTPLUS_BETA, CD_TYPE_DOUBLE, 1, &beta, "SOFTPLUS_BETA");
    } else if (mode == HIPDNN_POINTWISE_SWISH_FWD || mode == HIPDNN_POINTWISE_SWISH_BWD) {
        const double beta = n->attrs[HIPDNN_PW_SWISH_BETA].d;
        set(&s, d, CD_ATTR_POINTWISE_SWISH_BETA, CD_TYPE_DOUBLE, 1, &beta, "SWISH_BETA");
    } else if (mode == HIPDNN_POINTWISE_GEN_INDEX) {
        /* hipdnn's axis counts the tensor's own dims; cuDNN's the padded rank */
        const hipdnnSdkTensor* x = hipdnnSdkGraphFindTensor(b->g, n->inputs[HIPDNN_PW_X]);
        const int64_t axis = n->attrs[HIPDNN_PW_AXIS].i[0] + (x ? b->rank - x->ndim : 0);
        set(&s, d, CD_ATTR_POINTWISE_AXIS, CD_TYPE_INT64, 1, &axis, "POINTWISE_AXIS");
    }
    return finalize(&s, d, "POINTWISE") ? d : NULL;
}

static cd_desc pointwise_node(builder* b, const hipdnnSdkNode* n, const char* label) {
    hipdnnSdkPointwisePorts ports;
    if (!hipdnnSdkPointwisePortsOf(hipdnnSdkNodeMode(n), &ports)) {
        decline(b->why, b->len, "%s: pointwise mode %d is not one cuDNN has", label,
                (int)hipdnnSdkNodeMode(n));
        return NULL;
    }
    cd_desc pw = pointwise_desc(b, n, label);
    if (!pw) return NULL;
    /* hipdnn's port numbers are cuDNN's operand descriptors: x, b, dy, t in; y, dx out */
    static const int in_attr[4] = {CD_ATTR_OP_POINTWISE_XDESC, CD_ATTR_OP_POINTWISE_BDESC,
                                   CD_ATTR_OP_POINTWISE_DYDESC, CD_ATTR_OP_POINTWISE_TDESC};
    static const int out_attr[2] = {CD_ATTR_OP_POINTWISE_YDESC, CD_ATTR_OP_POINTWISE_DXDESC};
    cd_desc in[4] = {NULL, NULL, NULL, NULL};
    for (int k = 0; k < ports.arity; ++k) {
        const int p = ports.inputs[k];
        if (p < 0 || p >= 4 || !(in[p] = cudnn_tensor(b, n->inputs[p], label))) {
            if (p < 0 || p >= 4) decline(b->why, b->len, "%s: an operand port %d", label, p);
            return NULL;
        }
    }
    if (ports.output < 0 || ports.output > 1) {
        decline(b->why, b->len, "%s: an output port %d", label, ports.output);
        return NULL;
    }
    cd_desc out = cudnn_tensor(b, n->outputs[ports.output], label);
    cd_desc d = NULL;
    if (!out || !cudnn_graph_desc(b->out, CD_OPERATION_POINTWISE_DESCRIPTOR, &d, b->why, b->len))
        return NULL;
    setter s = {b->why, b->len, label, true};
    set(&s, d, CD_ATTR_OP_POINTWISE_PW_DESCRIPTOR, CD_TYPE_BACKEND_DESCRIPTOR, 1, &pw,
        "PW_DESCRIPTOR");
    for (int p = 0; p < 4; ++p)
        if (in[p]) set(&s, d, in_attr[p], CD_TYPE_BACKEND_DESCRIPTOR, 1, &in[p], "an operand");
    set(&s, d, out_attr[ports.output], CD_TYPE_BACKEND_DESCRIPTOR, 1, &out, "its output");
    return finalize(&s, d, "OPERATION_POINTWISE") ? add_op(b, d) : NULL;
}

static bool node(builder* b, const hipdnnSdkNode* n) {
    char label[160];
    hipdnnSdkNodeLabel(n, label, sizeof(label));
    switch (n->kind) {
    case HIPDNN_OP_CONV_FPROP: return conv_node(b, n, label, &k_fprop) != NULL;
    case HIPDNN_OP_CONV_DGRAD: return conv_node(b, n, label, &k_dgrad) != NULL;
    case HIPDNN_OP_CONV_WGRAD: return conv_node(b, n, label, &k_wgrad) != NULL;
    case HIPDNN_OP_MATMUL: return matmul_node(b, n, label) != NULL;
    case HIPDNN_OP_POINTWISE: return pointwise_node(b, n, label) != NULL;
    case HIPDNN_OP_SDPA_FWD: return cudnn_sdpa_fwd(b, n, label);
    case HIPDNN_OP_SDPA_BWD: return cudnn_sdpa_bwd(b, n, label);
    case HIPDNN_OP_NORM_FORWARD: return cudnn_norm_fwd(b, n, label);
    case HIPDNN_OP_BATCHNORM_INFERENCE: return cudnn_batchnorm_inference(b, n, label);
    case HIPDNN_OP_NORM_BACKWARD: return cudnn_norm_bwd(b, n, label);
    default:
        return decline(b->why, b->len, "%s: not translated to cuDNN yet (cudnn translates "
                       "conv_fprop, conv_dgrad, conv_wgrad, matmul, pointwise, sdpa and norm "
                       "nodes)", label);
    }
}

/* The graph's rank for cuDNN: its largest tensor rank, at least 3 with a matmul. */
static int graph_rank(const hipdnnSdkGraph* g) {
    int rank = 0;
    for (int32_t i = 0; i < g->num_tensors; ++i)
        if (g->tensors[i].ndim > rank) rank = g->tensors[i].ndim;
    for (int32_t i = 0; i < g->num_nodes; ++i)
        if (g->nodes[i].kind == HIPDNN_OP_MATMUL && rank < 3) rank = 3;
    return rank;
}

static void describe(const hipdnnSdkGraph* g, cd_graph* out) {
    size_t at = 0;
    for (int32_t i = 0; i < g->num_nodes && at + 1 < sizeof(out->what); ++i) {
        char label[160];
        hipdnnSdkNodeLabel(&g->nodes[i], label, sizeof(label));
        hipdnnSdkFormat(out->what + at, sizeof(out->what) - at, "%s%s", i ? " + " : "", label);
        at = strlen(out->what);
    }
}

/* The first uid past every graph tensor's, for the tensors the translation adds; 0 when
 * the graph's uids reach so high that none is left (cudnn_new_tensor declines). */
static int64_t first_free_uid(const hipdnnSdkGraph* g) {
    int64_t top = 0;
    for (int32_t i = 0; i < g->num_tensors; ++i)
        if (g->tensors[i].uid > top) top = g->tensors[i].uid;
    return top < INT64_MAX - 4096 ? top + 1 : 0;
}

bool cudnn_graph_make(cd_handle_fn handle, void* owner, const hipdnnSdkGraph* g, cd_graph* out,
                      char* why, size_t len) {
    memset(out, 0, sizeof(*out));
    if (g->num_nodes < 1) return decline(why, len, "an empty graph");
    describe(g, out);
    const int rank = graph_rank(g);
    if (rank > HIPDNN_MAX_DIMS) return decline(why, len, "tensors of rank %d", rank);
    builder b = {.g = g, .out = out, .rank = rank, .why = why, .len = len,
                 .slots = calloc((size_t)g->num_tensors + 1, sizeof(cd_tensor_slot)),
                 .next_uid = first_free_uid(g)};
    bool ok = b.slots != NULL;
    if (!ok) decline(why, len, "out of memory");
    for (int32_t i = 0; ok && i < g->num_nodes; ++i) ok = node(&b, &g->nodes[i]);
    if (ok) ok = cudnn_graph_desc(out, CD_OPERATIONGRAPH_DESCRIPTOR, &out->op_graph, why, len);
    /* the library handle only now, for a graph every node of which translated */
    cd_handle h = ok ? handle(owner, why, len) : NULL;
    ok = ok && h;
    if (ok) {
        char what[400];
        hipdnnSdkFormat(what, sizeof(what), "graph '%s' (%s)", g->name, out->what);
        setter s = {why, len, what, true};
        set(&s, out->op_graph, CD_ATTR_OPERATIONGRAPH_HANDLE, CD_TYPE_HANDLE, 1, &h,
            "OPERATIONGRAPH_HANDLE");
        set(&s, out->op_graph, CD_ATTR_OPERATIONGRAPH_OPS, CD_TYPE_BACKEND_DESCRIPTOR,
            b.num_ops, b.ops, "OPERATIONGRAPH_OPS");
        ok = finalize(&s, out->op_graph, "OPERATIONGRAPH");
    }
    free(b.slots);
    free(b.ops);
    if (!ok) cudnn_graph_free(out);
    return ok;
}
