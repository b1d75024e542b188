/* A pointwise graph's nodes as the fused kernel runs them (each mode's function and
 * parameters, each node's ports and storage types) and the checks of every node and tensor
 * (program.h): whatever passes, the program compiler can compile and the kernel run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program.h"

static const char* node_label(const hipdnnSdkNode* n, char* buf, size_t len) {
    const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(n->kind);
    if (n->kind == HIPDNN_OP_POINTWISE) {
        const char* mode = hipdnnSdkPointwiseModeName(hipdnnSdkNodeMode(n));
        hipdnnSdkFormat(buf, len, "node '%s' (pointwise %s)", n->name, mode ? mode : "?");
    } else {
        hipdnnSdkFormat(buf, len, "node '%s' (%s)", n->name, info ? info->name : "unknown op");
    }
    return buf;
}

/* ---- modes --------------------------------------------------------------------- */

int pwc_fn_of(hipdnnPointwiseMode_t m) {
    switch (m) {
    case HIPDNN_POINTWISE_ADD: return PW_ADD;
    case HIPDNN_POINTWISE_SUB: return PW_SUB;
    case HIPDNN_POINTWISE_MUL: return PW_MUL;
    case HIPDNN_POINTWISE_DIV: return PW_DIV;
    case HIPDNN_POINTWISE_MAX: return PW_MAX;
    case HIPDNN_POINTWISE_MIN: return PW_MIN;
    case HIPDNN_POINTWISE_ADD_SQUARE: return PW_ADD_SQUARE;
    case HIPDNN_POINTWISE_MOD: return PW_MOD;
    case HIPDNN_POINTWISE_POW: return PW_POW;
    case HIPDNN_POINTWISE_CMP_EQ: return PW_CMP_EQ;
    case HIPDNN_POINTWISE_CMP_NEQ: return PW_CMP_NEQ;
    case HIPDNN_POINTWISE_CMP_GT: return PW_CMP_GT;
    case HIPDNN_POINTWISE_CMP_GE: return PW_CMP_GE;
    case HIPDNN_POINTWISE_CMP_LT: return PW_CMP_LT;
    case HIPDNN_POINTWISE_CMP_LE: return PW_CMP_LE;
    case HIPDNN_POINTWISE_LOGICAL_AND: return PW_AND;
    case HIPDNN_POINTWISE_LOGICAL_OR: return PW_OR;
    case HIPDNN_POINTWISE_RELU_BWD: return PW_RELU_BWD;
    case HIPDNN_POINTWISE_TANH_BWD: return PW_TANH_BWD;
    case HIPDNN_POINTWISE_SIGMOID_BWD: return PW_SIGMOID_BWD;
    case HIPDNN_POINTWISE_ELU_BWD: return PW_ELU_BWD;
    case HIPDNN_POINTWISE_GELU_BWD: return PW_GELU_BWD;
    case HIPDNN_POINTWISE_SOFTPLUS_BWD: return PW_SOFTPLUS_BWD;
    case HIPDNN_POINTWISE_SWISH_BWD: return PW_SWISH_BWD;
    case HIPDNN_POINTWISE_GELU_APPROX_TANH_BWD: return PW_GELU_TANH_BWD;
    case HIPDNN_POINTWISE_IDENTITY: return PW_IDENTITY;
    case HIPDNN_POINTWISE_GEN_INDEX: return PW_IDENTITY; /* of its coordinate input */
    case HIPDNN_POINTWISE_RELU_FWD: return PW_RELU;
    case HIPDNN_POINTWISE_SIGMOID_FWD: return PW_SIGMOID;
    case HIPDNN_POINTWISE_TANH_FWD: return PW_TANH;
    case HIPDNN_POINTWISE_GELU_FWD: return PW_GELU;
    case HIPDNN_POINTWISE_EXP: return PW_EXP;
    case HIPDNN_POINTWISE_SQRT: return PW_SQRT;
    case HIPDNN_POINTWISE_RSQRT: return PW_RSQRT;
    case HIPDNN_POINTWISE_RECIPROCAL: return PW_RECIPROCAL;
    case HIPDNN_POINTWISE_ABS: return PW_ABS;
    case HIPDNN_POINTWISE_NEG: return PW_NEG;
    case HIPDNN_POINTWISE_CEIL: return PW_CEIL;
    case HIPDNN_POINTWISE_FLOOR: return PW_FLOOR;
    case HIPDNN_POINTWISE_LOG: return PW_LOG;
    case HIPDNN_POINTWISE_SIN: return PW_SIN;
    case HIPDNN_POINTWISE_COS: return PW_COS;
    case HIPDNN_POINTWISE_TAN: return PW_TAN;
    case HIPDNN_POINTWISE_ERF: return PW_ERF;
    case HIPDNN_POINTWISE_ELU_FWD: return PW_ELU;
    case HIPDNN_POINTWISE_SOFTPLUS_FWD: return PW_SOFTPLUS;
    case HIPDNN_POINTWISE_SWISH_FWD: return PW_SWISH;
    case HIPDNN_POINTWISE_GELU_APPROX_TANH_FWD: return PW_GELU_TANH;
    case HIPDNN_POINTWISE_LOGICAL_NOT: return PW_NOT;
    case HIPDNN_POINTWISE_BINARY_SELECT: return 0; /* its own opcode, SELECT */
    default: return -1;
    }
}

/* The function's one parameter (elu's alpha, softplus's and swish's beta) or relu's three. */
void pwc_params_of(const hipdnnSdkNode* n, float* p) {
    hipdnnPointwiseMode_t m = hipdnnSdkNodeMode(n);
    p[0] = p[1] = p[2] = 0.0f;
    if (m == HIPDNN_POINTWISE_RELU_FWD || m == HIPDNN_POINTWISE_RELU_BWD) {
        p[0] = (float)n->attrs[HIPDNN_PW_RELU_LOWER_CLIP].d;
        p[1] = (float)n->attrs[HIPDNN_PW_RELU_UPPER_CLIP].d;
        p[2] = (float)n->attrs[HIPDNN_PW_RELU_LOWER_CLIP_SLOPE].d;
    } else if (m == HIPDNN_POINTWISE_ELU_FWD || m == HIPDNN_POINTWISE_ELU_BWD) {
        p[0] = (float)n->attrs[HIPDNN_PW_ELU_ALPHA].d;
    } else if (m == HIPDNN_POINTWISE_SOFTPLUS_FWD || m == HIPDNN_POINTWISE_SOFTPLUS_BWD) {
        p[0] = (float)n->attrs[HIPDNN_PW_SOFTPLUS_BETA].d;
    } else if (m == HIPDNN_POINTWISE_SWISH_FWD || m == HIPDNN_POINTWISE_SWISH_BWD) {
        p[0] = (float)n->attrs[HIPDNN_PW_SWISH_BETA].d;
    }
}

int pwc_storage_of(hipdnnDataType_t t) {
    switch (t) {
    case HIPDNN_DATA_FLOAT: return PW_F32;
    case HIPDNN_DATA_HALF: return PW_F16;
    case HIPDNN_DATA_BFLOAT16: return PW_BF16;
    case HIPDNN_DATA_BOOLEAN: return PW_BOOL;
    case HIPDNN_DATA_INT32: return PW_I32;
    case HIPDNN_DATA_INT64: return PW_I64;
    default: return -1;
    }
}

/* Bytes of one element of a storage type (0: no memory). */
int pwc_storage_bytes(int storage) {
    switch (storage) {
    case PW_F32: case PW_I32: return 4;
    case PW_F16: case PW_BF16: return 2;
    case PW_BOOL: return 1;
    case PW_I64: return 8;
    default: return 0;
    }
}

bool pwc_is_gen_index(const hipdnnSdkNode* n) {
    return n->kind == HIPDNN_OP_POINTWISE && hipdnnSdkNodeMode(n) == HIPDNN_POINTWISE_GEN_INDEX;
}

/* How many tensors a node reads: a pointwise mode's arity (gen_index none: it reads
 * coordinates, not x), or batchnorm's five (x, mean, inv_variance, scale, bias); 0 for
 * what this engine does not run. */
int pwc_node_inputs(const hipdnnSdkNode* n) {
    if (n->kind == HIPDNN_OP_BATCHNORM_INFERENCE) return 5;
    if (n->kind != HIPDNN_OP_POINTWISE || pwc_is_gen_index(n)) return 0;
    hipdnnPointwiseMode_t mode = hipdnnSdkNodeMode(n);
    return pwc_fn_of(mode) >= 0 ? hipdnnSdkPointwiseArity(mode) : 0;
}

/* Whether this engine runs the node's op and mode. */
static bool node_supported(const hipdnnSdkNode* n) {
    return n->kind == HIPDNN_OP_BATCHNORM_INFERENCE ||
           (n->kind == HIPDNN_OP_POINTWISE && pwc_fn_of(hipdnnSdkNodeMode(n)) >= 0);
}

/* Input k of a node, and its output (pointwise modes name their own ports). */
int64_t pwc_node_input(const hipdnnSdkNode* n, int k) {
    return n->kind == HIPDNN_OP_POINTWISE ? hipdnnSdkPointwiseOperand(n, k) : n->inputs[k];
}

int64_t pwc_node_output(const hipdnnSdkNode* n) {
    return n->kind == HIPDNN_OP_POINTWISE ? hipdnnSdkPointwiseOutput(n) : n->outputs[0];
}

/* Port names for messages. */
static const char* input_port(const hipdnnSdkNode* n, int k) {
    const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(n->kind);
    if (n->kind == HIPDNN_OP_POINTWISE) {
        hipdnnSdkPointwisePorts ports;
        hipdnnSdkPointwisePortsOf(hipdnnSdkNodeMode(n), &ports);
        return k < ports.arity ? info->inputs[ports.inputs[k]].name : "?";
    }
    return info && k < info->num_inputs ? info->inputs[k].name : "?";
}

static const char* output_port(const hipdnnSdkNode* n) {
    if (n->kind == HIPDNN_OP_POINTWISE && hipdnnSdkPointwiseIsBackward(hipdnnSdkNodeMode(n)))
        return "dx";
    return "y";
}

/* Output storage a node may write: fp32 / fp16 / bf16 always; BOOLEAN for comparisons
 * and logic; INT32 / INT64 for those and gen_index (their values are exact in fp32). */
static bool output_storage_ok(const hipdnnSdkNode* n, int storage) {
    if (storage == PW_F32 || storage == PW_F16 || storage == PW_BF16) return true;
    if (n->kind != HIPDNN_OP_POINTWISE) return false;
    bool logical = hipdnnSdkPointwiseIsLogical(hipdnnSdkNodeMode(n));
    if (storage == PW_BOOL) return logical;
    return (storage == PW_I32 || storage == PW_I64) && (logical || pwc_is_gen_index(n));
}

/* ---- the checks ------------------------------------------------------------------- */

static const hipdnnSdkTensor* tensor_at(const compiler* c, int64_t uid, int32_t* at) {
    *at = hipdnnSdkUidMapFind(&c->map, uid);
    return *at >= 0 ? &c->g->tensors[*at] : NULL;
}

static int64_t span_of(const hipdnnSdkTensor* t) {
    int64_t span = 1;
    for (int32_t k = 0; k < t->ndim; ++k) {
        if (t->dims[k] < 1 || t->strides[k] < 0) return -1;
        if (t->strides[k] > HIPE_MAX_ELEMENTS || t->dims[k] > HIPE_MAX_ELEMENTS) return -1;
        span += (t->dims[k] - 1) * t->strides[k];
        if (span > HIPE_MAX_ELEMENTS) return -1;
    }
    return span;
}

/* One tensor a node reads or writes. */
static bool tensor_ok(compiler* c, const hipdnnSdkNode* n, const char* port,
                      const hipdnnSdkTensor* t, bool is_output) {
    char nl[160];
    node_label(n, nl, sizeof(nl));
    const char* dt = hipdnnSdkDataTypeName(t->data_type);
    if (t->ndim < 1 || t->ndim > HIPDNN_MAX_DIMS)
        return decline(c->why, c->len, "%s: %s '%s' (uid %lld): rank %d (1 to %d)", nl, port,
                       t->name, (long long)t->uid, t->ndim, HIPDNN_MAX_DIMS);
    if (t->is_by_value) {
        if (is_output)
            return decline(c->why, c->len, "%s: %s '%s' (uid %lld): a pass-by-value tensor "
                           "cannot be an output", nl, port, t->name, (long long)t->uid);
        if (hipdnnSdkDataTypeSize(t->data_type) == 0)
            return decline(c->why, c->len, "%s: %s '%s' (uid %lld): scalar data type %s not "
                           "supported", nl, port, t->name, (long long)t->uid, dt);
        if (hipdnnSdkElementCount(t->ndim, t->dims) != 1)
            return decline(c->why, c->len, "%s: %s '%s' (uid %lld): a pass-by-value tensor "
                           "must hold exactly one element", nl, port, t->name, (long long)t->uid);
        return true;
    }
    int storage = pwc_storage_of(t->data_type);
    if (!is_output && (storage < 0 || storage == PW_I32 || storage == PW_I64))
        return decline(c->why, c->len, "%s: %s '%s' (uid %lld): data type %s not supported "
                       "(float32, float16, bfloat16, boolean inputs: fp32 compute)", nl, port,
                       t->name, (long long)t->uid, dt);
    if (is_output && (storage < 0 || !output_storage_ok(n, storage)))
        return decline(c->why, c->len, "%s: %s '%s' (uid %lld): data type %s not supported "
                       "for this output (float32, float16, bfloat16; boolean for comparisons "
                       "and logic; int32, int64 for those and gen_index)", nl, port, t->name,
                       (long long)t->uid, dt);
    if (span_of(t) < 0)
        return decline(c->why, c->len, "%s: %s '%s' (uid %lld): dims below 1, negative strides "
                       "or over 2^48 elements", nl, port, t->name, (long long)t->uid);
    return true;
}

/* gen_index's coordinates must be exact in fp32: its axis at most 2^24 long. */
static bool gen_index_ok(compiler* c, const hipdnnSdkNode* n, const hipdnnSdkTensor* out,
                         const char* nl) {
    int64_t axis = n->attrs[HIPDNN_PW_AXIS].i[0];
    if (axis < 0 || axis >= out->ndim)
        return decline(c->why, c->len, "%s: axis %lld is out of range for rank %d", nl,
                       (long long)axis, out->ndim);
    if (out->dims[axis] > (INT64_C(1) << 24))
        return decline(c->why, c->len, "%s: axis %lld has %lld indices; fp32 compute holds "
                       "them exactly up to 2^24", nl, (long long)axis,
                       (long long)out->dims[axis]);
    /* The coordinate input: y's dims, stride 1 along the axis (program.c's pseudo tensor). */
    hipdnnSdkTensor* t = &c->coords[n - c->g->nodes];
    memset(t, 0, sizeof(*t));
    t->uid = HIPDNN_NO_TENSOR;
    t->name = (char*)"(coordinates)";
    t->ndim = out->ndim;
    for (int32_t k = 0; k < out->ndim; ++k) {
        t->dims[k] = out->dims[k];
        t->strides[k] = k == axis ? 1 : 0;
    }
    int32_t at = c->g->num_tensors + (int32_t)(n - c->g->nodes);
    c->kind[at] = KIND_INPUT;
    c->uses[at] = 1;
    return true;
}

/* Every node: its op, mode, compute type, ports and tensors; classifies the tensors. */
bool pwc_check_nodes(compiler* c) {
    const hipdnnSdkGraph* g = c->g;
    char nl[160];
    for (int32_t i = 0; i < g->num_nodes; ++i) {
        const hipdnnSdkNode* n = &g->nodes[i];
        node_label(n, nl, sizeof(nl));
        if (n->kind != HIPDNN_OP_POINTWISE && n->kind != HIPDNN_OP_BATCHNORM_INFERENCE)
            return decline(c->why, c->len, "%s: operation not supported (this engine runs "
                           "graphs of pointwise operations and batchnorm inference)", nl);
        if (!node_supported(n))
            return decline(c->why, c->len, "%s: pointwise mode %d not supported", nl,
                           (int)hipdnnSdkNodeMode(n));
        int arity = pwc_node_inputs(n);
        hipdnnDataType_t ct = n->compute_type;
        /* fp32 compute throughout; an integer compute type (cuDNN frontend gives gen_index
         * INT32) only where the results are integers anyway */
        bool int_results = n->kind == HIPDNN_OP_POINTWISE &&
                           (pwc_is_gen_index(n) || hipdnnSdkPointwiseIsLogical(hipdnnSdkNodeMode(n)));
        bool int_ct = ct == HIPDNN_DATA_INT32 || ct == HIPDNN_DATA_INT64 || ct == HIPDNN_DATA_BOOLEAN;
        if (ct != HIPDNN_DATA_NOT_SET && ct != HIPDNN_DATA_FLOAT && ct != HIPDNN_DATA_HALF &&
            ct != HIPDNN_DATA_BFLOAT16 && !(int_results && int_ct))
            return decline(c->why, c->len, "%s: compute type %s not supported (fp32 compute)", nl,
                           hipdnnSdkDataTypeName(ct));
        const hipdnnSdkTensor* in[HIPDNN_MAX_PORTS] = {NULL};
        for (int p = 0; p < arity; ++p) {
            const char* port = input_port(n, p);
            int32_t at;
            int64_t uid = pwc_node_input(n, p);
            if (uid == HIPDNN_NO_TENSOR)
                return decline(c->why, c->len, "%s: input %s not set", nl, port);
            in[p] = tensor_at(c, uid, &at);
            if (!in[p])
                return decline(c->why, c->len, "%s: input %s names uid %lld, which is not in "
                               "the graph", nl, port, (long long)uid);
            if (!tensor_ok(c, n, port, in[p], false)) return false;
            if (in[p]->is_by_value) {
                c->kind[at] = KIND_SCALAR;
            } else if (!c->written[at]) {
                if (in[p]->is_virtual)
                    return decline(c->why, c->len, "%s: virtual %s '%s' (uid %lld) is read "
                                   "before any node writes it", nl, port, in[p]->name,
                                   (long long)in[p]->uid);
                c->kind[at] = KIND_INPUT;
            }
            c->uses[at]++;
        }
        int32_t at;
        const char* oport = output_port(n);
        int64_t ouid = pwc_node_output(n);
        if (ouid == HIPDNN_NO_TENSOR)
            return decline(c->why, c->len, "%s: output %s not set", nl, oport);
        const hipdnnSdkTensor* out = tensor_at(c, ouid, &at);
        if (!out)
            return decline(c->why, c->len, "%s: output %s names uid %lld, which is not in the "
                           "graph", nl, oport, (long long)ouid);
        if (!tensor_ok(c, n, oport, out, true)) return false;
        if (c->written[at] || c->kind[at] == KIND_INPUT)
            return decline(c->why, c->len, "%s: %s '%s' (uid %lld) is %s", nl, oport, out->name,
                           (long long)out->uid, c->written[at] ? "written by an earlier node"
                                                               : "read before this node writes it");
        for (int p = 0; p < arity; ++p)
            if (in[p] == out)
                return decline(c->why, c->len, "%s: %s '%s' (uid %lld) is both input and "
                               "output", nl, oport, out->name, (long long)out->uid);
        if (pwc_is_gen_index(n) && !gen_index_ok(c, n, out, nl)) return false;
        c->written[at] = true;
        c->kind[at] = KIND_NODE;
    }
    return true;
}
