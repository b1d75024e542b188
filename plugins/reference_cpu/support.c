/* Support: can the engine run this graph?  If not, one line saying why.
 *
 * The backend validates graphs before plugins see them, but these bytes are re-checked
 * here anyway: everything the kernels index with (ranks, dims, strides, ports, uids) is
 * proven sane first, so no graph makes the engine read out of bounds. */
#include <stdlib.h>
#include <string.h>

#include "reference_cpu.h"

static const char* op_label(const hipdnnSdkNode* n, char* buf, size_t len) {
    const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(n->kind);
    if (!info) return "unknown op";
    if (n->kind == HIPDNN_OP_POINTWISE) {
        const char* mode = hipdnnSdkPointwiseModeName(hipdnnSdkNodeMode(n));
        hipdnnSdkFormat(buf, len, "pointwise %s", mode ? mode : "?");
        return buf;
    }
    if (n->kind == HIPDNN_OP_REDUCTION) {
        const char* mode = hipdnnSdkReductionModeName(n->attrs[HIPDNN_RED_MODE].i[0]);
        hipdnnSdkFormat(buf, len, "reduction %s", mode ? mode : "?");
        return buf;
    }
    if (n->kind == HIPDNN_OP_NORM_FORWARD) { /* "layernorm", as users call it */
        const char* mode = hipdnnSdkNormModeName(n->attrs[HIPDNN_NORM_MODE].i[0]);
        return mode ? mode : info->name;
    }
    if (n->kind == HIPDNN_OP_NORM_BACKWARD) {
        const char* mode = hipdnnSdkNormBackwardName(n->attrs[HIPDNN_NBWD_MODE].i[0]);
        return mode ? mode : info->name;
    }
    return info->name;
}

/* "reference_cpu: node 'n' (op)": what a reason about node n starts with. */
static const char* node_who(const hipdnnSdkNode* n, char* buf, size_t len) {
    char label[64];
    hipdnnSdkFormat(buf, len, REF_ENGINE_NAME ": node '%s' (%s)", n->name,
                    op_label(n, label, sizeof(label)));
    return buf;
}

static bool compute_type_ok(hipdnnDataType_t t) {
    return t == HIPDNN_DATA_NOT_SET || ref_dtype_supported(t);
}

/* Ports that may hold integer (or BOOLEAN) tensors: the op's row says (op_table.c). */
static bool int_port(const ref_op* op, int port, bool is_output) {
    unsigned mask = op ? (is_output ? op->int_out : op->int_in) : 0u;
    return (mask >> port) & 1u;
}

/* Dtype, rank, dims and strides of one tensor a node uses.  `wide` ports (int_port) also
 * take BOOLEAN and integer tensors (ref_dtype_storable); which ones, the op's rule says
 * (ref_pointwise_check, ref_resample_check, ref_int8_compute_check, ref_reshape_check). */
static bool tensor_ok(const char* node, const char* port, const hipdnnSdkTensor* t,
                      bool is_output, bool wide, char* why, size_t len) {
    char who[REF_MSG_LEN]; /* "<node>: x 'name' (uid 3)" */
    hipdnnSdkFormat(who, sizeof(who), "%s: %s '%s' (uid %lld)", node, port, t->name,
                    (long long)t->uid);
    const char* dt = hipdnnSdkDataTypeName(t->data_type);
    if (t->ndim < 1 || t->ndim > HIPDNN_MAX_DIMS)
        return hipdnnSdkDecline(why, len, who, "rank %d (dims not set or over %d)", t->ndim,
                                HIPDNN_MAX_DIMS);
    if (t->is_by_value) {
        if (is_output)
            return hipdnnSdkDecline(why, len, who, "a pass-by-value tensor cannot be an output");
        if (hipdnnSdkDataTypeSize(t->data_type) == 0)
            return hipdnnSdkDecline(why, len, who, "scalar data type %s not supported", dt);
        if (ref_element_count(t->ndim, t->dims) != 1)
            return hipdnnSdkDecline(why, len, who,
                                    "a pass-by-value tensor must hold exactly one element");
        return true;
    }
    if (wide && !ref_dtype_storable(t->data_type))
        return hipdnnSdkDecline(why, len, who, "data type %s not supported (float32, float16, "
                                "bfloat16, float64, boolean, int8, uint8, int32, int64 only)", dt);
    if (!wide && !ref_dtype_supported(t->data_type))
        return hipdnnSdkDecline(why, len, who, "data type %s not supported (float32, float16, "
                                "bfloat16, float64 only)", dt);
    if (ref_span_elements(t->ndim, t->dims, t->strides) < 0 ||
        ref_element_count(t->ndim, t->dims) < 0)
        return hipdnnSdkDecline(why, len, who,
                                "dims below 1, negative strides or over 2^48 elements");
    return true;
}

/* Shape rules of the node's op (its row's check), on views of its (already checked)
 * tensors; in[p] / out[p] NULL for unset ports. */
static bool op_ok(const char* who, const hipdnnSdkNode* n, const hipdnnSdkTensor* const* in,
                  const hipdnnSdkTensor* const* out, char* why, size_t len) {
    ref_view v[HIPDNN_MAX_PORTS], o[HIPDNN_MAX_PORTS];
    const ref_view *vp[HIPDNN_MAX_PORTS] = {0}, *op[HIPDNN_MAX_PORTS] = {0};
    char detail[REF_MSG_LEN];
    for (int p = 0; p < HIPDNN_MAX_PORTS; ++p) {
        if (in[p]) ref_view_from_tensor(in[p], NULL, &v[p]), vp[p] = &v[p];
        if (out[p]) ref_view_from_tensor(out[p], NULL, &o[p]), op[p] = &o[p];
    }
    const ref_op* row = ref_op_get(n->kind);
    const ref_op_args args = {n, in, out, v, o, vp, op, NULL};
    bool ok = false;
    if (row) ok = row->check(&args, detail, sizeof(detail));
    else hipdnnSdkFormat(detail, sizeof(detail), "operation not supported");
    return ok ? true : hipdnnSdkDecline(why, len, who, "%s", detail);
}

/* The output ports node n writes (an op's, or its pointwise mode's own, oport_index): set,
 * in the graph, sane, and none written before, also an input or written twice. */
static bool outputs_ok(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, int oport_index,
                       const char* who, const hipdnnSdkTensor* const* in,
                       const hipdnnSdkTensor** out, const bool* written, char* why, size_t len) {
    const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(n->kind);
    const ref_op* row = ref_op_get(n->kind);
    const bool pw = n->kind == HIPDNN_OP_POINTWISE;
    for (int p = 0; p < info->num_outputs && p < HIPDNN_MAX_PORTS; ++p) {
        const char* oport = info->outputs[p].name;
        if (pw && p != oport_index) continue; /* y or dx: the mode's own */
        if (n->outputs[p] == HIPDNN_NO_TENSOR) {
            if (pw) return hipdnnSdkDecline(why, len, who, "output %s not set", oport);
            if (p > 0 && info->outputs[p].is_optional) continue;
            return hipdnnSdkDecline(why, len, who, "output %s not set", oport);
        }
        out[p] = hipdnnSdkGraphFindTensor(g, n->outputs[p]);
        if (!out[p])
            return hipdnnSdkDecline(why, len, who, "output %s names uid %lld, which is not in "
                                    "the graph", oport, (long long)n->outputs[p]);
        if (!tensor_ok(who, oport, out[p], true, int_port(row, p, true), why, len))
            return false;
        if (written[out[p] - g->tensors])
            return hipdnnSdkDecline(why, len, who, "%s '%s' (uid %lld) is written by an earlier "
                                    "node", oport, out[p]->name, (long long)out[p]->uid);
        for (int q = 0; q < HIPDNN_MAX_PORTS; ++q)
            if (in[q] == out[p])
                return hipdnnSdkDecline(why, len, who, "%s '%s' (uid %lld) is both input and "
                                        "output", oport, out[p]->name, (long long)out[p]->uid);
        for (int q = 0; q < p; ++q)
            if (out[q] == out[p])
                return hipdnnSdkDecline(why, len, who, "'%s' (uid %lld) is both output %s and "
                                        "output %s", out[p]->name, (long long)out[p]->uid,
                                        info->outputs[q].name, oport);
    }
    return true;
}

/* Ports, tensors and op rules of node `n`; marks its outputs written. */
static bool node_ok(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, bool* written, char* why,
                    size_t len) {
    char who[REF_MSG_LEN];
    node_who(n, who, sizeof(who));
    const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(n->kind);
    if (!info)
        return hipdnnSdkDecline(why, len, who, "operation kind %d not supported", (int)n->kind);
    /* Everything is computed in float64; an integer compute type (cuDNN frontend gives
     * gen_index INT32) is honoured only where the results are integers anyway. */
    bool pw = n->kind == HIPDNN_OP_POINTWISE;
    bool int_results = pw && (hipdnnSdkNodeMode(n) == HIPDNN_POINTWISE_GEN_INDEX ||
                              hipdnnSdkPointwiseIsLogical(hipdnnSdkNodeMode(n)));
    const ref_op* row = ref_op_get(n->kind);
    bool int8_op = row && row->int32_compute;
    if (!compute_type_ok(n->compute_type) &&
        !(int_results && ref_dtype_storable(n->compute_type)) &&
        !(int8_op && n->compute_type == HIPDNN_DATA_INT32))
        return hipdnnSdkDecline(why, len, who, "compute type %s not supported",
                                hipdnnSdkDataTypeName(n->compute_type));
    /* The ports the node reads and the one it writes: all of an op's, or a pointwise
     * mode's own (x, b, dy, t; y or dx). */
    bool reads[HIPDNN_MAX_PORTS] = {false};
    int oport_index = 0;
    for (int p = 0; p < info->num_inputs && p < HIPDNN_MAX_PORTS; ++p) reads[p] = true;
    if (n->kind == HIPDNN_OP_POINTWISE) {
        hipdnnSdkPointwisePorts ports;
        if (!hipdnnSdkPointwisePortsOf(hipdnnSdkNodeMode(n), &ports))
            return hipdnnSdkDecline(why, len, who, "pointwise mode %d not supported",
                                    (int)hipdnnSdkNodeMode(n));
        for (int p = 0; p < HIPDNN_MAX_PORTS; ++p) reads[p] = false;
        for (int k = 0; k < ports.arity; ++k) reads[ports.inputs[k]] = true;
        oport_index = ports.output;
    }
    const hipdnnSdkTensor* in[HIPDNN_MAX_PORTS] = {0};
    for (int p = 0; p < info->num_inputs && p < HIPDNN_MAX_PORTS; ++p) {
        const char* port = info->inputs[p].name;
        if (!reads[p]) continue; /* e.g. b of a unary pointwise: not used */
        if (n->inputs[p] == HIPDNN_NO_TENSOR) {
            /* a pointwise mode needs each of the operands it reads */
            if (info->inputs[p].is_optional && n->kind != HIPDNN_OP_POINTWISE) continue;
            return hipdnnSdkDecline(why, len, who, "input %s not set", port);
        }
        in[p] = hipdnnSdkGraphFindTensor(g, n->inputs[p]);
        if (!in[p])
            return hipdnnSdkDecline(why, len, who, "input %s names uid %lld, which is not in "
                                    "the graph", port, (long long)n->inputs[p]);
        if (!tensor_ok(who, port, in[p], false, int_port(row, p, false), why, len)) return false;
        if (in[p]->is_virtual && !in[p]->is_by_value && !written[in[p] - g->tensors])
            return hipdnnSdkDecline(why, len, who, "virtual %s '%s' (uid %lld) is read before "
                                    "any node writes it", port, in[p]->name, (long long)in[p]->uid);
    }
    const hipdnnSdkTensor* out[HIPDNN_MAX_PORTS] = {0};
    if (!outputs_ok(g, n, oport_index, who, in, out, written, why, len)) return false;
    if (!op_ok(who, n, in, out, why, len)) return false;
    for (int p = 0; p < HIPDNN_MAX_PORTS; ++p)
        if (out[p]) written[out[p] - g->tensors] = true;
    return true;
}

bool ref_graph_supported(const hipdnnSdkGraph* g, char* why, size_t len) {
    if (!g || g->num_nodes < 1 || !g->nodes)
        return hipdnnSdkDecline(why, len, REF_ENGINE_NAME, "graph '%s' has no operations",
                                g && g->name ? g->name : "");
    for (int32_t i = 0; i < g->num_tensors; ++i)
        for (int32_t j = 0; j < i; ++j)
            if (g->tensors[i].uid == g->tensors[j].uid)
                return hipdnnSdkDecline(why, len, REF_ENGINE_NAME,
                                        "tensors '%s' and '%s' share uid %lld", g->tensors[j].name,
                                        g->tensors[i].name, (long long)g->tensors[i].uid);
    bool* written = calloc((size_t)(g->num_tensors > 0 ? g->num_tensors : 1), sizeof(bool));
    if (!written)
        return hipdnnSdkDecline(why, len, REF_ENGINE_NAME,
                                "out of memory while checking the graph");
    bool ok = true;
    for (int32_t i = 0; ok && i < g->num_nodes; ++i)
        ok = node_ok(g, &g->nodes[i], written, why, len);
    free(written);
    return ok;
}
