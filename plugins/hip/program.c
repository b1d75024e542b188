/* Compiling a graph of pointwise nodes into one pw_program (pw_program.h), and with it the
 * engine's support check: whatever compiles, runs.
 *
 * Steps: check every node and tensor (the bytes are re-checked here even though the
 * backend validated them, since the kernel indexes with them); find the iteration space
 * (the NumPy broadcast of every tensor); order its dims as the first full-size output
 * lies in memory and merge dims that every tensor walks contiguously; then emit the
 * accumulator program, parking in slots only values that are read again later. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip_engine.h"

/* ---- declining ------------------------------------------------------------------ */

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

static int fn_of(hipdnnPointwiseMode_t m) {
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
static void params_of(const hipdnnSdkNode* n, float* p) {
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

static int storage_of(hipdnnDataType_t t) {
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
static int storage_bytes(int storage) {
    switch (storage) {
    case PW_F32: case PW_I32: return 4;
    case PW_F16: case PW_BF16: return 2;
    case PW_BOOL: return 1;
    case PW_I64: return 8;
    default: return 0;
    }
}

static bool is_gen_index(const hipdnnSdkNode* n) {
    return n->kind == HIPDNN_OP_POINTWISE && hipdnnSdkNodeMode(n) == HIPDNN_POINTWISE_GEN_INDEX;
}

/* How many tensors a node reads: a pointwise mode's arity (gen_index none: it reads
 * coordinates, not x), or batchnorm's five (x, mean, inv_variance, scale, bias); 0 for
 * what this engine does not run. */
static int node_inputs(const hipdnnSdkNode* n) {
    if (n->kind == HIPDNN_OP_BATCHNORM_INFERENCE) return 5;
    if (n->kind != HIPDNN_OP_POINTWISE || is_gen_index(n)) return 0;
    hipdnnPointwiseMode_t mode = hipdnnSdkNodeMode(n);
    return fn_of(mode) >= 0 ? hipdnnSdkPointwiseArity(mode) : 0;
}

/* Whether this engine runs the node's op and mode. */
static bool node_supported(const hipdnnSdkNode* n) {
    return n->kind == HIPDNN_OP_BATCHNORM_INFERENCE ||
           (n->kind == HIPDNN_OP_POINTWISE && fn_of(hipdnnSdkNodeMode(n)) >= 0);
}

/* Input k of a node, and its output (pointwise modes name their own ports). */
static int64_t node_input(const hipdnnSdkNode* n, int k) {
    return n->kind == HIPDNN_OP_POINTWISE ? hipdnnSdkPointwiseOperand(n, k) : n->inputs[k];
}

static int64_t node_output(const hipdnnSdkNode* n) {
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
    return (storage == PW_I32 || storage == PW_I64) && (logical || is_gen_index(n));
}

/* ---- per-graph working state -------------------------------------------------------- */

enum { KIND_UNUSED = 0, KIND_INPUT, KIND_SCALAR, KIND_NODE };

typedef struct {
    const hipdnnSdkGraph* g;
    hipdnnSdkUidMap map;
    int32_t* kind;     /* per tensor index: KIND_* */
    int32_t* index;    /* per tensor index: input / scalar / output number (-1 none) */
    int32_t* uses;     /* per tensor index: reads by nodes not yet emitted */
    int32_t* slot;     /* per tensor index: slot holding the value, -1 none */
    bool* written;
    hipdnnSdkTensor* coords; /* per node: gen_index's coordinate input (a pseudo tensor
                                whose index is num_tensors + node) */
    int32_t in_index[PW_MAX_INPUTS]; /* tensor (or pseudo tensor) index of input i */
    int32_t R;         /* rank of the iteration space before merging */
    int64_t S[PW_MAX_DIMS];
    char* why;
    size_t len;
    bool in_order; /* the space's dims as they are: neither reordered nor merged */
} compiler;

static void compiler_free(compiler* c) {
    hipdnnSdkUidMapFree(&c->map);
    free(c->kind);
    free(c->index);
    free(c->uses);
    free(c->slot);
    free(c->written);
    free(c->coords);
}

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
    int storage = storage_of(t->data_type);
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
static bool check_nodes(compiler* c) {
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
        int arity = node_inputs(n);
        hipdnnDataType_t ct = n->compute_type;
        /* fp32 compute throughout; an integer compute type (cuDNN frontend gives gen_index
         * INT32) only where the results are integers anyway */
        bool int_results = n->kind == HIPDNN_OP_POINTWISE &&
                           (is_gen_index(n) || hipdnnSdkPointwiseIsLogical(hipdnnSdkNodeMode(n)));
        bool int_ct = ct == HIPDNN_DATA_INT32 || ct == HIPDNN_DATA_INT64 || ct == HIPDNN_DATA_BOOLEAN;
        if (ct != HIPDNN_DATA_NOT_SET && ct != HIPDNN_DATA_FLOAT && ct != HIPDNN_DATA_HALF &&
            ct != HIPDNN_DATA_BFLOAT16 && !(int_results && int_ct))
            return decline(c->why, c->len, "%s: compute type %s not supported (fp32 compute)", nl,
                           hipdnnSdkDataTypeName(ct));
        const hipdnnSdkTensor* in[HIPDNN_MAX_PORTS] = {NULL};
        for (int p = 0; p < arity; ++p) {
            const char* port = input_port(n, p);
            int32_t at;
            int64_t uid = node_input(n, p);
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
        int64_t ouid = node_output(n);
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
        if (is_gen_index(n) && !gen_index_ok(c, n, out, nl)) return false;
        c->written[at] = true;
        c->kind[at] = KIND_NODE;
    }
    return true;
}

/* ---- the iteration space ------------------------------------------------------------ */

static void format_dims(const int64_t* d, int n, char* buf, size_t len) {
    size_t used = (size_t)snprintf(buf, len, "[");
    for (int i = 0; i < n && used < len; ++i)
        used += (size_t)snprintf(buf + used, len - used, "%s%lld", i ? ", " : "", (long long)d[i]);
    if (used < len) snprintf(buf + used, len - used, "]");
}

/* S: the broadcast of every data tensor's dims, right-aligned. */
static bool find_space(compiler* c) {
    const hipdnnSdkGraph* g = c->g;
    c->R = 1;
    for (int32_t i = 0; i < g->num_tensors; ++i)
        if (c->kind[i] == KIND_INPUT || c->kind[i] == KIND_NODE)
            if (g->tensors[i].ndim > c->R) c->R = g->tensors[i].ndim;
    for (int d = 0; d < PW_MAX_DIMS; ++d) c->S[d] = 1;
    for (int pass = 0; pass < 2; ++pass) /* fill, then check */
        for (int32_t i = 0; i < g->num_tensors; ++i) {
            if (c->kind[i] != KIND_INPUT && c->kind[i] != KIND_NODE) continue;
            const hipdnnSdkTensor* t = &g->tensors[i];
            for (int32_t k = 0; k < t->ndim; ++k) {
                int d = c->R - t->ndim + k;
                if (t->dims[k] == 1) continue;
                if (pass == 0 && c->S[d] == 1) c->S[d] = t->dims[k];
                if (c->S[d] != t->dims[k]) {
                    char td[160], sd[160];
                    format_dims(t->dims, t->ndim, td, sizeof(td));
                    format_dims(c->S, c->R, sd, sizeof(sd));
                    return decline(c->why, c->len, "tensor '%s' (uid %lld) %s does not broadcast "
                                   "to the graph's shape %s", t->name, (long long)t->uid, td, sd);
                }
            }
        }
    if (hipdnnSdkElementCount(c->R, c->S) > HIPE_MAX_ELEMENTS)
        return decline(c->why, c->len, "the graph's shape has over 2^48 elements");
    return true;
}

/* A tensor's strides over the R dims of S: 0 where it is broadcast. */
static void space_strides(const compiler* c, const hipdnnSdkTensor* t, int64_t* st) {
    for (int d = 0; d < PW_MAX_DIMS; ++d) st[d] = 0;
    for (int32_t k = 0; k < t->ndim; ++k) {
        int d = c->R - t->ndim + k;
        st[d] = t->dims[k] == 1 ? 0 : t->strides[k];
    }
}

/* Two elements of an output at one address would race: refuse such strides. */
static bool output_overlaps(const compiler* c, const hipdnnSdkTensor* t) {
    int64_t st[PW_MAX_DIMS], stride[PW_MAX_DIMS], dim[PW_MAX_DIMS];
    int n = 0;
    space_strides(c, t, st);
    for (int32_t k = 0; k < t->ndim; ++k) {
        if (t->dims[k] == 1) continue;
        if (t->strides[k] == 0) return true;
        stride[n] = t->strides[k];
        dim[n++] = t->dims[k];
    }
    for (int i = 1; i < n; ++i) /* insertion sort by stride */
        for (int j = i; j > 0 && stride[j] < stride[j - 1]; --j) {
            int64_t s = stride[j], d = dim[j];
            stride[j] = stride[j - 1];
            dim[j] = dim[j - 1];
            stride[j - 1] = s;
            dim[j - 1] = d;
        }
    for (int i = 1; i < n; ++i)
        if (stride[i] < stride[i - 1] * dim[i - 1]) return true;
    return false;
}

/* Orders and merges the dims of S for every program tensor (inputs then outputs, in
 * prog->in / prog->out order, given as their graph tensors `ts`). */
static void lay_out(const compiler* c, const hipdnnSdkTensor* const* ts, int nt, int ref,
                    pw_program* prog) {
    int64_t st[PW_MAX_INPUTS + PW_MAX_OUTPUTS][PW_MAX_DIMS];
    for (int t = 0; t < nt; ++t) space_strides(c, ts[t], st[t]);
    /* Outermost first: by the reference tensor's strides, largest first (stable). */
    int perm[PW_MAX_DIMS];
    for (int d = 0; d < c->R; ++d) perm[d] = d;
    if (ref >= 0 && !c->in_order)
        for (int i = 1; i < c->R; ++i)
            for (int j = i; j > 0 && st[ref][perm[j]] > st[ref][perm[j - 1]]; --j) {
                int tmp = perm[j];
                perm[j] = perm[j - 1];
                perm[j - 1] = tmp;
            }
    int nd = 0;
    int64_t dims[PW_MAX_DIMS];
    int64_t ms[PW_MAX_INPUTS + PW_MAX_OUTPUTS][PW_MAX_DIMS];
    for (int i = 0; i < c->R; ++i) {
        int d = perm[i];
        if (c->S[d] == 1 && !c->in_order) continue;
        bool merge = nd > 0 && !c->in_order;
        for (int t = 0; t < nt && merge; ++t) merge = ms[t][nd - 1] == st[t][d] * c->S[d];
        if (merge) {
            dims[nd - 1] *= c->S[d];
            for (int t = 0; t < nt; ++t) ms[t][nd - 1] = st[t][d];
        } else {
            dims[nd] = c->S[d];
            for (int t = 0; t < nt; ++t) ms[t][nd] = st[t][d];
            ++nd;
        }
    }
    if (nd == 0) { /* a single element */
        dims[0] = 1;
        for (int t = 0; t < nt; ++t) ms[t][0] = 0;
        nd = 1;
    }
    prog->ndim = nd;
    prog->n = 1;
    for (int d = 0; d < PW_MAX_DIMS; ++d) prog->dims[d] = d < nd ? dims[d] : 1;
    for (int d = 0; d < nd; ++d) prog->n *= dims[d];
    for (int t = 0; t < nt; ++t) {
        pw_tensor* pt = t < prog->nin ? &prog->in[t] : &prog->out[t - prog->nin];
        int64_t packed = 1;
        pt->contiguous = 1;
        pt->bcast_mask = 0;
        for (int d = PW_MAX_DIMS - 1; d >= 0; --d) {
            pt->strides[d] = d < nd ? ms[t][d] : 0;
            if (d >= nd) continue;
            if (dims[d] > 1 && pt->strides[d] != packed) pt->contiguous = 0;
            if (dims[d] > 1 && pt->strides[d] == 0) pt->bcast_mask |= 1u << d;
            packed *= dims[d];
        }
    }
}

/* ---- the program ---------------------------------------------------------------- */

typedef struct {
    compiler* c;
    pw_program* prog;
    int32_t acc;       /* tensor index the accumulator holds, -1 none */
    bool busy[PW_SLOTS];
    int max_slot;      /* highest slot used + 1 */
} emitter;

static bool emit(emitter* e, int op, int fn, int a, unsigned flags, const float* p) {
    pw_program* prog = e->prog;
    if (prog->ninstr >= PW_MAX_INSTRS)
        return decline(e->c->why, e->c->len, "graph '%s' needs more than %d instructions for "
                       "one fused kernel", e->c->g->name, PW_MAX_INSTRS);
    pw_instr* in = &prog->instr[prog->ninstr++];
    memset(in, 0, sizeof(*in));
    in->op = (uint8_t)op;
    in->fn = (uint8_t)fn;
    in->a = (uint8_t)a;
    in->flags = (uint8_t)flags;
    if (p) {
        in->p0 = p[0];
        in->p1 = p[1];
        in->p2 = p[2];
    }
    return true;
}

static int take_slot(emitter* e) {
    for (int s = 0; s < PW_SLOTS; ++s)
        if (!e->busy[s]) {
            e->busy[s] = true;
            if (s + 1 > e->max_slot) e->max_slot = s + 1;
            return s;
        }
    return -1;
}

/* Where a value is read from: flags and index of an operand that is not the accumulator. */
static bool operand(emitter* e, int32_t t, int* a, unsigned* flags) {
    compiler* c = e->c;
    if (c->kind[t] == KIND_SCALAR) {
        *a = c->index[t];
        *flags = PW_SCALAR;
        return true;
    }
    *a = c->slot[t];
    *flags = 0;
    return *a >= 0;
}

/* Parks the accumulator's value in a slot if it is still needed and held nowhere else. */
static bool spill(emitter* e) {
    compiler* c = e->c;
    int32_t t = e->acc;
    if (t < 0 || c->kind[t] == KIND_SCALAR || c->uses[t] == 0 || c->slot[t] >= 0) return true;
    int s = take_slot(e);
    if (s < 0)
        return decline(c->why, c->len, "graph '%s' needs more than %d values live at once for "
                       "one fused kernel", c->g->name, PW_SLOTS);
    c->slot[t] = s;
    return emit(e, PW_PUT, 0, s, 0, NULL);
}

/* The accumulator takes the value of tensor t. */
static bool get(emitter* e, int32_t t) {
    if (e->acc == t) return true;
    if (!spill(e)) return false;
    int a;
    unsigned flags;
    if (!operand(e, t, &a, &flags))
        return decline(e->c->why, e->c->len, "internal: value of tensor index %d is held nowhere",
                       (int)t);
    e->acc = t;
    return emit(e, PW_GET, 0, a, flags, NULL);
}

/* A read of t is done: frees its slot after its last use. */
static void release(emitter* e, int32_t t) {
    compiler* c = e->c;
    if (c->kind[t] == KIND_SCALAR) return;
    if (--c->uses[t] == 0 && c->slot[t] >= 0) {
        e->busy[c->slot[t]] = false;
        c->slot[t] = -1;
    }
}

static bool finish_node(emitter* e, int32_t y);

/* y = (x - mean) * inv_variance * scale + bias, as four binary steps on the accumulator
 * (the reference engine's order of operations). */
static bool emit_batchnorm(emitter* e, const hipdnnSdkNode* n) {
    compiler* c = e->c;
    static const int fns[4] = {PW_SUB, PW_MUL, PW_MUL, PW_ADD};
    int32_t t[5];
    for (int p = 0; p < 5; ++p) t[p] = hipdnnSdkUidMapFind(&c->map, n->inputs[p]);
    if (!get(e, t[HIPDNN_BN_X])) return false;
    for (int p = 1; p < 5; ++p) /* x read again as a statistic: it must sit in a slot too */
        if (t[p] == t[HIPDNN_BN_X] && !spill(e)) return false;
    for (int p = 1; p < 5; ++p) {
        int a;
        unsigned flags;
        if (!operand(e, t[p], &a, &flags))
            return decline(c->why, c->len, "internal: operand of node '%s' is held nowhere",
                           n->name);
        if (!emit(e, PW_BINARY, fns[p - 1], a, flags, NULL)) return false;
    }
    for (int p = 0; p < 5; ++p) release(e, t[p]);
    return true;
}

/* binary_select: the mask t in the accumulator, x and b from slots or scalars. */
static bool emit_select(emitter* e, const hipdnnSdkNode* n) {
    compiler* c = e->c;
    int32_t x = hipdnnSdkUidMapFind(&c->map, node_input(n, 0));
    int32_t b = hipdnnSdkUidMapFind(&c->map, node_input(n, 1));
    int32_t t = hipdnnSdkUidMapFind(&c->map, node_input(n, 2));
    if (!get(e, t)) return false;
    if ((x == t || b == t) && !spill(e)) return false; /* the mask read as a value too */
    int ax, ab;
    unsigned fx, fb;
    if (!operand(e, x, &ax, &fx) || !operand(e, b, &ab, &fb))
        return decline(c->why, c->len, "internal: operand of node '%s' is held nowhere",
                       n->name);
    if (!emit(e, PW_SELECT, ab, ax, fx | (fb & PW_SCALAR ? PW_SCALAR_B : 0u), NULL)) return false;
    release(e, x);
    release(e, b);
    release(e, t);
    return true;
}

static bool emit_node(emitter* e, const hipdnnSdkNode* n) {
    compiler* c = e->c;
    int32_t y = hipdnnSdkUidMapFind(&c->map, node_output(n));
    if (n->kind == HIPDNN_OP_BATCHNORM_INFERENCE) {
        if (!emit_batchnorm(e, n)) return false;
        e->acc = y;
        return finish_node(e, y);
    }
    hipdnnPointwiseMode_t mode = hipdnnSdkNodeMode(n);
    int fn = fn_of(mode);
    int arity = hipdnnSdkPointwiseArity(mode);
    float p[3];
    params_of(n, p);
    if (is_gen_index(n)) { /* the coordinates are its input */
        int32_t coords = c->g->num_tensors + (int32_t)(n - c->g->nodes);
        if (!get(e, coords)) return false;
        release(e, coords);
    } else if (mode == HIPDNN_POINTWISE_BINARY_SELECT) {
        if (!emit_select(e, n)) return false;
    } else if (arity == 1) {
        int32_t x = hipdnnSdkUidMapFind(&c->map, node_input(n, 0));
        if (!get(e, x) || !emit(e, PW_UNARY, fn, 0, 0, p)) return false;
        release(e, x);
    } else {
        /* acc = f(main, other), or f(other, main) reversed when acc already holds the
         * second operand (b, or dy of the _BWD modes) */
        int32_t x = hipdnnSdkUidMapFind(&c->map, node_input(n, 0));
        int32_t b = hipdnnSdkUidMapFind(&c->map, node_input(n, 1));
        int32_t main = x, other = b;
        unsigned rev = 0;
        if (e->acc == b && e->acc != x) {
            main = b;
            other = x;
            rev = PW_REVERSED;
        }
        if (!get(e, main)) return false;
        if (other == main && !spill(e)) return false; /* f(t, t): t must also sit in a slot */
        int a;
        unsigned flags;
        if (!operand(e, other, &a, &flags))
            return decline(c->why, c->len, "internal: operand of node '%s' is held nowhere",
                           n->name);
        if (!emit(e, PW_BINARY, fn, a, flags | rev, p)) return false;
        release(e, x);
        release(e, b);
    }
    e->acc = y;
    return finish_node(e, y);
}

/* The node's result y is in the accumulator: rounded if a later node reads it, stored if
 * it is an output. */
static bool finish_node(emitter* e, int32_t y) {
    compiler* c = e->c;
    const hipdnnSdkTensor* yt = &c->g->tensors[y];
    int storage = storage_of(yt->data_type);
    /* Later nodes read the value as stored; STORE itself rounds what only it reads.  BOOLEAN
     * and integer values are exact 0 / 1 or integers already. */
    bool round = storage == PW_F16 || storage == PW_BF16;
    if (round && c->uses[y] > 0 && !emit(e, PW_ROUND, 0, storage, 0, NULL)) return false;
    if (!yt->is_virtual) {
        const pw_tensor* out = &e->prog->out[c->index[y]];
        if (!emit(e, PW_STORE, storage, c->index[y], out->contiguous ? PW_CONTIG : 0, NULL))
            return false;
    }
    return true;
}

/* Numbers the inputs, scalars and outputs, and records what enqueue must fill in. */
static bool number_tensors(compiler* c, hipe_plan* plan, const hipdnnSdkTensor** ts) {
    const hipdnnSdkGraph* g = c->g;
    pw_program* prog = &plan->prog;
    int nin = 0, nout = 0, nsc = 0;
    const hipdnnSdkTensor* outs[PW_MAX_OUTPUTS];
    for (int32_t i = 0; i < g->num_nodes; ++i) { /* in order of first use */
        const hipdnnSdkNode* n = &g->nodes[i];
        int nports = node_inputs(n);
        if (is_gen_index(n)) { /* its coordinates: an input without memory */
            if (nin == PW_MAX_INPUTS)
                return decline(c->why, c->len, "graph '%s' has more than %d input tensors "
                               "for one fused kernel", g->name, PW_MAX_INPUTS);
            int32_t t = g->num_tensors + i;
            plan->in_uid[nin] = HIPDNN_NO_TENSOR;
            prog->in[nin].dtype = PW_INDEX;
            ts[nin] = &c->coords[i];
            c->in_index[nin] = t;
            c->index[t] = nin++;
        }
        for (int p = 0; p <= nports; ++p) { /* the inputs, then the output */
            int64_t uid = p < nports ? node_input(n, p) : node_output(n);
            int32_t t = uid == HIPDNN_NO_TENSOR ? -1 : hipdnnSdkUidMapFind(&c->map, uid);
            if (t < 0 || c->index[t] >= 0) continue;
            const hipdnnSdkTensor* tt = &g->tensors[t];
            if (c->kind[t] == KIND_INPUT) {
                if (nin == PW_MAX_INPUTS)
                    return decline(c->why, c->len, "graph '%s' has more than %d input tensors "
                                   "for one fused kernel", g->name, PW_MAX_INPUTS);
                plan->in_uid[nin] = tt->uid;
                prog->in[nin].dtype = storage_of(tt->data_type);
                ts[nin] = tt;
                c->in_index[nin] = t;
                c->index[t] = nin++;
            } else if (c->kind[t] == KIND_SCALAR) {
                if (nsc == PW_MAX_SCALARS)
                    return decline(c->why, c->len, "graph '%s' has more than %d pass-by-value "
                                   "tensors for one fused kernel", g->name, PW_MAX_SCALARS);
                plan->scalar_uid[nsc] = tt->has_value ? -1 : tt->uid;
                plan->scalar_dtype[nsc] = tt->data_type;
                prog->scalar[nsc] =
                    tt->has_value ? (float)hipdnnSdkLoadAsDouble(tt->value, tt->data_type, 0) : 0.0f;
                c->index[t] = nsc++;
            } else if (c->kind[t] == KIND_NODE && !tt->is_virtual) {
                if (nout == PW_MAX_OUTPUTS)
                    return decline(c->why, c->len, "graph '%s' has more than %d output tensors "
                                   "for one fused kernel", g->name, PW_MAX_OUTPUTS);
                if (output_overlaps(c, tt)) {
                    char sd[160];
                    format_dims(tt->strides, tt->ndim, sd, sizeof(sd));
                    return decline(c->why, c->len, "output '%s' (uid %lld): strides %s make "
                                   "elements overlap", tt->name, (long long)tt->uid, sd);
                }
                plan->out_uid[nout] = tt->uid;
                prog->out[nout].dtype = storage_of(tt->data_type);
                outs[nout] = tt;
                c->index[t] = nout++;
            }
        }
    }
    if (nin == 0)
        return decline(c->why, c->len, "graph '%s' reads no tensor from memory and makes no "
                       "indices", g->name);
    if (nout == 0)
        return decline(c->why, c->len, "graph '%s' writes no tensor (mark an output)", g->name);
    for (int o = 0; o < nout; ++o) ts[nin + o] = outs[o];
    prog->nin = nin;
    prog->nout = nout;
    plan->nscalars = nsc;
    return true;
}

/* The first full-size output, else input: its memory order becomes the iteration order. */
static int reference_tensor(const compiler* c, const hipdnnSdkTensor* const* ts, int nin, int nt) {
    for (int pass = 0; pass < 2; ++pass)
        for (int t = pass == 0 ? nin : 0; t < (pass == 0 ? nt : nin); ++t) {
            int64_t st[PW_MAX_DIMS];
            space_strides(c, ts[t], st);
            bool full = true;
            for (int d = 0; d < c->R && full; ++d) full = c->S[d] == 1 || st[d] != 0;
            if (full) return t;
        }
    return -1;
}

/* The fast way needs every tensor contiguous (element e at offset e everywhere).  A thread
 * then loads U vectors of PW_VEC elements of every input before computing any: U = 4 up
 * to 256 bytes in flight a thread (two fp32 inputs), fewer vectors for more inputs, so
 * that the raw data takes at most 64 registers.  Measured on an H100 for two inputs:
 * fp32 ran at 94-99.6% of copy bandwidth with U = 4 (and with U = 1) but 87-90% with
 * U = 2; bf16 at 99-100% with any of them. */
static void choose_fast_way(hipe_plan* plan) {
    const pw_program* p = &plan->prog;
    int bytes = 0;
    plan->fast = 1;
    for (int i = 0; i < p->nin; ++i) {
        plan->fast &= p->in[i].contiguous != 0;
        bytes += PW_VEC * storage_bytes(p->in[i].dtype);
    }
    for (int i = 0; i < p->nout; ++i) plan->fast &= p->out[i].contiguous != 0;
    plan->fast_u = bytes <= 64 ? 4 : bytes <= 128 ? 2 : 1;
}

static bool compile_pointwise(const hipdnnSdkGraph* g, hipe_plan* plan, bool in_order, char* why,
                              size_t len) {
    memset(plan, 0, sizeof(*plan));
    if (!g || g->num_nodes < 1 || !g->nodes)
        return decline(why, len, "graph '%s' has no operations", g && g->name ? g->name : "");
    compiler c = {.g = g, .why = why, .len = len, .in_order = in_order};
    /* per tensor, then per node (gen_index's coordinates: index num_tensors + node) */
    size_t n = (size_t)(g->num_tensors > 0 ? g->num_tensors : 0) + (size_t)g->num_nodes;
    c.kind = calloc(n, sizeof(int32_t));
    c.index = malloc(n * sizeof(int32_t));
    c.uses = calloc(n, sizeof(int32_t));
    c.slot = malloc(n * sizeof(int32_t));
    c.written = calloc(n, sizeof(bool));
    c.coords = calloc((size_t)g->num_nodes, sizeof(hipdnnSdkTensor));
    bool ok = c.kind && c.index && c.uses && c.slot && c.written && c.coords &&
              hipdnnSdkUidMapInit(&c.map, g);
    if (!ok) {
        compiler_free(&c);
        return decline(why, len, "out of memory while compiling graph '%s'", g->name);
    }
    for (size_t i = 0; i < n; ++i) c.index[i] = c.slot[i] = -1;
    for (int32_t i = 0; i < g->num_tensors && ok; ++i) {
        int32_t other = hipdnnSdkUidMapInsert(&c.map, i);
        if (other >= 0)
            ok = decline(why, len, "tensors '%s' and '%s' share uid %lld", g->tensors[other].name,
                         g->tensors[i].name, (long long)g->tensors[i].uid);
    }
    const hipdnnSdkTensor* ts[PW_MAX_INPUTS + PW_MAX_OUTPUTS];
    ok = ok && check_nodes(&c) && find_space(&c) && number_tensors(&c, plan, ts);
    if (ok) {
        int nt = plan->prog.nin + plan->prog.nout;
        lay_out(&c, ts, nt, reference_tensor(&c, ts, plan->prog.nin, nt), &plan->prog);
        emitter e = {.c = &c, .prog = &plan->prog, .acc = -1};
        for (int i = 0; i < plan->prog.nin; ++i) /* inputs sit in slots 0..nin-1 */
            c.slot[c.in_index[i]] = take_slot(&e);
        for (int32_t i = 0; i < g->num_nodes && ok; ++i) ok = emit_node(&e, &g->nodes[i]);
        plan->slots = e.max_slot <= 2 ? 2 : e.max_slot <= 4 ? 4 : PW_SLOTS;
        choose_fast_way(plan);
        const pw_program* p = &plan->prog;
        int64_t last = p->dims[p->ndim - 1];
        if (ok && p->ndim > 1 && (p->n / last) * ((last + PW_VEC - 1) / PW_VEC) >= (INT64_C(1) << 31))
            ok = decline(why, len, "graph '%s': a broadcast or strided iteration space of %lld "
                         "elements in %d dims needs over 2^31 steps (dense ones have no limit)",
                         g->name, (long long)p->n, p->ndim);
    }
    compiler_free(&c);
    return ok;
}

bool hipe_compile_pointwise(const hipdnnSdkGraph* g, hipe_plan* plan, char* why, size_t len) {
    return compile_pointwise(g, plan, false, why, len);
}

bool hipe_compile_pointwise_in_order(const hipdnnSdkGraph* g, hipe_plan* plan, char* why,
                                     size_t len) {
    return compile_pointwise(g, plan, true, why, len);
}

void hipe_describe(const hipe_plan* plan, char* buf, size_t len) {
    static const char* const ops[] = {"get", "put", "binary", "unary", "round", "store",
                                      "select"};
    const pw_program* p = &plan->prog;
    char dims[160];
    format_dims(p->dims, p->ndim, dims, sizeof(dims));
    size_t used = (size_t)snprintf(buf, len, "%d in, %d out, %d scalars, space %s, %d slots%s:",
                                   p->nin, p->nout, plan->nscalars, dims, plan->slots,
                                   plan->fast ? ", contiguous" : "");
    for (int i = 0; i < p->ninstr && used < len; ++i)
        used += (size_t)snprintf(buf + used, len - used, " %s%s%d",
                                 ops[p->instr[i].op < 7 ? p->instr[i].op : 0],
                                 p->instr[i].flags & PW_SCALAR ? " s" : " ", p->instr[i].a);
}
