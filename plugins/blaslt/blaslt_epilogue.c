/* Which cuBLASLt epilogue the nodes around a graph's matmul are, and why the engine
 * declines the ones no epilogue computes.
 *
 * Forward: a bias add, then relu or the tanh gelu (RELU, GELU, with BIAS).  A gelu whose
 * input is also a graph output (the pre-activation a training graph keeps for backward)
 * is GELU_AUX: cuBLASLt writes the GELU's input, after the bias, as a second matrix.  Its
 * RELU_AUX writes a bit mask of which values were positive instead, which is not the relu's
 * input a graph asks for, so that one is declined.
 *
 * Backward: gelu_approx_tanh_backward(dy = the product, x = a graph input) is DGELU
 * (cuBLASLt multiplies the product by the tanh gelu's derivative at the aux matrix), and a
 * sum of its result over one axis beside it DGELU_BGRAD (the bias gradient of the layer
 * the gelu followed).  A sum over k of one of the matmul's operands, as the weight
 * gradient's graph takes the bias gradient, is BGRADA / BGRADB.  The erf gelu's derivative
 * and relu's (DRELU reads RELU_AUX's bit mask) are declined. */
#include <math.h>

#include "blaslt.h"

#define decline(why, len, ...) hipdnnSdkDecline(why, len, BLASLT_ENGINE_NAME, __VA_ARGS__)

static bool plain_relu(const hipdnnSdkNode* n) {
    return n->attrs[HIPDNN_PW_RELU_LOWER_CLIP].d == 0.0 &&
           isinf(n->attrs[HIPDNN_PW_RELU_UPPER_CLIP].d) &&
           n->attrs[HIPDNN_PW_RELU_UPPER_CLIP].d > 0 &&
           n->attrs[HIPDNN_PW_RELU_LOWER_CLIP_SLOPE].d == 0.0;
}

static bool same_dims(const hipdnnSdkTensor* a, const hipdnnSdkTensor* b) {
    if (a->ndim != b->ndim) return false;
    for (int i = 0; i < a->ndim; ++i)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

/* A bias cuBLASLt can add: in memory, one value per column n of the product. */
static bool bias_ok(const hipdnnSdkTensor* bias, const hipdnnSdkTensor* c, const char* label,
                    char* why, size_t len) {
    if (bias->is_virtual || bias->is_by_value)
        return decline(why, len, "%s: bias '%s' is %s: cuBLASLt reads its bias vector from "
                       "memory", label, bias->name, bias->is_virtual ? "computed in the graph"
                                                                    : "a by-value scalar");
    const int64_t n = c->dims[c->ndim - 1];
    bool ok = bias->ndim >= 1 && bias->ndim <= c->ndim && bias->dims[bias->ndim - 1] == n &&
              (n == 1 || bias->strides[bias->ndim - 1] == 1);
    for (int i = 0; ok && i < bias->ndim - 1; ++i) ok = bias->dims[i] == 1;
    if (!ok)
        return decline(why, len, "%s: bias '%s' is not one packed value per column of the "
                       "product ([..., 1, %lld]): cuBLASLt adds a bias vector along the rows",
                       label, bias->name, (long long)n);
    return true;
}

/* gelu_approx_tanh_backward(dy, x) after the product: DGELU, x the aux matrix it reads. */
static bool dgelu(const hipdnnSdkGraph* g, const char* label, const hipdnnSdkTensor* c,
                  int64_t cur, int64_t x, int64_t dy, bl_chain* ch, char* why, size_t len) {
    if (dy != cur)
        return decline(why, len, "%s: cuBLASLt's DGELU epilogue takes the product as the "
                       "gradient (dy) and the gelu's input (x) from memory", label);
    if (ch->activation || ch->bias != HIPDNN_NO_TENSOR)
        return decline(why, len, "%s: cuBLASLt's DGELU epilogue runs on the product itself",
                       label);
    const hipdnnSdkTensor* t = hipdnnSdkGraphFindTensor(g, x);
    if (!t || t->is_virtual || t->is_by_value || !same_dims(t, c))
        return decline(why, len, "%s: its x must be a tensor in memory of the product's shape "
                       "(cuBLASLt reads it as the DGELU epilogue's aux matrix)", label);
    /* On an H200 (CUDA 13's cuBLASLt, 2026-11-30) fp32 DGELU was off by up to 2.3e-5 of
     * |x|-sized values, past fp32's tolerance (tests/tolerances.py): its tanh is
     * approximate.  16-bit outputs hide it; fp32 ones go to an exact engine. */
    if (t->data_type == HIPDNN_DATA_FLOAT) /* an fp32 graph's x (16-bit graphs' are 16-bit) */
        return decline(why, len, "%s: fp32 gelu_approx_tanh_backward: cuBLASLt's DGELU "
                       "epilogue measured up to 2.3e-5 off in fp32 (above fp32's tolerance); "
                       "the exact engines run it", label);
    ch->activation = BL_EPILOGUE_DGELU;
    ch->aux = x;
    return true;
}

/* An activation; its input `kept` a graph output too: GELU_AUX keeps the gelu's input. */
static bool activation(const hipdnnSdkNode* n, const char* label, bool kept,
                       const hipdnnSdkTensor* in, bl_chain* ch, char* why, size_t len) {
    const hipdnnPointwiseMode_t mode = hipdnnSdkNodeMode(n);
    if (mode == HIPDNN_POINTWISE_RELU_FWD && !plain_relu(n))
        return decline(why, len, "%s: cuBLASLt's RELU epilogue is max(x, 0): no clip or slope",
                       label);
    if (ch->activation) return decline(why, len, "%s: cuBLASLt applies one activation", label);
    if (kept && mode == HIPDNN_POINTWISE_RELU_FWD)
        return decline(why, len, "%s: its input '%s' is a graph output; cuBLASLt's RELU_AUX "
                       "epilogue keeps a bit mask of which values were positive, not the "
                       "relu's input", label, in->name);
    if (mode == HIPDNN_POINTWISE_RELU_FWD) {
        ch->activation = BL_EPILOGUE_RELU;
    } else {
        ch->activation = BL_EPILOGUE_GELU | (kept ? BL_EPILOGUE_AUX : 0);
        if (kept) ch->aux = in->uid;
    }
    return true;
}

/* One pointwise node of the chain, reading `cur`: what it adds to the epilogue. */
static bool pointwise(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, const char* label,
                      const hipdnnSdkTensor* c, int64_t cur, bl_chain* ch, char* why,
                      size_t len) {
    const hipdnnPointwiseMode_t mode = hipdnnSdkNodeMode(n);
    const int64_t x = hipdnnSdkPointwiseOperand(n, 0), out = hipdnnSdkPointwiseOutput(n);
    const int64_t b = hipdnnSdkPointwiseArity(mode) > 1 ? hipdnnSdkPointwiseOperand(n, 1)
                                                         : HIPDNN_NO_TENSOR;
    if (x != cur && b != cur)
        return decline(why, len, "%s does not read the result of the node before it: blaslt "
                       "runs a matmul and a chain of epilogue nodes after it", label);
    const hipdnnSdkTensor* y = hipdnnSdkGraphFindTensor(g, out);
    if (!y || !same_dims(y, c))
        return decline(why, len, "%s: its output is not the product's shape", label);
    if (ch->bias_kind == BL_BIAS_GRAD)
        return decline(why, len, "%s: cuBLASLt's bias gradient (DGELU_BGRAD) sums its final "
                       "output, which this node would change", label);
    const hipdnnSdkTensor* in = hipdnnSdkGraphFindTensor(g, cur);
    const bool kept = in && !in->is_virtual; /* the value it reads is a graph output too */
    const bool gelu_tanh = mode == HIPDNN_POINTWISE_GELU_APPROX_TANH_FWD;
    if (kept && !gelu_tanh && mode != HIPDNN_POINTWISE_RELU_FWD)
        return decline(why, len, "'%s' is a graph output read by another node: cuBLASLt "
                       "writes a second matrix only as its GELU_AUX epilogue (the input of a "
                       "gelu_approx_tanh)", in->name);
    switch (mode) {
    case HIPDNN_POINTWISE_ADD: {
        const int64_t other = x == cur ? b : x;
        const hipdnnSdkTensor* bias = hipdnnSdkGraphFindTensor(g, other);
        if (ch->activation || ch->bias != HIPDNN_NO_TENSOR || other == cur || !bias)
            return decline(why, len, "%s: cuBLASLt adds one bias, before its activation",
                           label);
        if (!bias_ok(bias, c, label, why, len)) return false;
        ch->bias = other;
        ch->bias_kind = BL_BIAS_ADD;
        return true;
    }
    case HIPDNN_POINTWISE_RELU_FWD:
    case HIPDNN_POINTWISE_GELU_APPROX_TANH_FWD:
        return activation(n, label, kept, in, ch, why, len);
    case HIPDNN_POINTWISE_GELU_APPROX_TANH_BWD:
        return dgelu(g, label, c, cur, x, b, ch, why, len);
    case HIPDNN_POINTWISE_GELU_FWD:
        /* cuBLASLt's GELU epilogue is the tanh approximation (PyTorch, whose addmm fused
         * with gelu uses it, approximates with tanh on every GPU path for that reason:
         * pytorch/pytorch#104061), so only gelu_approx_tanh maps onto it. */
        return decline(why, len, "%s: this gelu is the erf form; cuBLASLt's GELU epilogue "
                       "computes the tanh approximation (gelu_approx_tanh)", label);
    case HIPDNN_POINTWISE_GELU_BWD:
        return decline(why, len, "%s: this is the erf gelu's derivative; cuBLASLt's DGELU "
                       "epilogue computes the tanh approximation's "
                       "(gelu_approx_tanh_backward)", label);
    case HIPDNN_POINTWISE_RELU_BWD:
        return decline(why, len, "%s: cuBLASLt's DRELU epilogue reads the bit mask its "
                       "RELU_AUX epilogue wrote, not the relu's input", label);
    default:
        return decline(why, len, "%s: no cuBLASLt epilogue computes %s (blaslt maps a bias "
                       "add, relu, gelu_approx_tanh and gelu_approx_tanh_backward)", label,
                       hipdnnSdkPointwiseModeName(mode) ? hipdnnSdkPointwiseModeName(mode) : "it");
    }
}

/* The axis (0: rows, 1: columns of the last two) a reduction of x into y sums over; -1
 * when it sums over anything else. */
static int summed_axis(const hipdnnSdkTensor* x, const hipdnnSdkTensor* y) {
    if (x->ndim != y->ndim || x->ndim < 2) return -1;
    int axis = -1;
    for (int i = 0; i < x->ndim; ++i) {
        if (x->dims[i] == y->dims[i]) continue;
        if (y->dims[i] != 1 || i < x->ndim - 2 || axis >= 0) return -1;
        axis = i - (x->ndim - 2);
    }
    return axis;
}

/* A sum beside the chain: the bias gradient of DGELU_BGRAD (of the chain's result) or of
 * BGRADA / BGRADB (of an operand). */
static bool reduction(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, const char* label,
                      const hipdnnSdkNode* mm, int64_t cur, bl_chain* ch, char* why,
                      size_t len) {
    const int64_t mode = n->attrs[HIPDNN_RED_MODE].i[0];
    if (mode != HIPDNN_REDUCE_TENSOR_ADD)
        return decline(why, len, "%s: cuBLASLt's bias-gradient epilogues sum; this reduction "
                       "is %s", label, hipdnnSdkReductionModeName(mode)
                                           ? hipdnnSdkReductionModeName(mode) : "another");
    if (ch->bias_kind != BL_BIAS_NONE)
        return decline(why, len, "%s: cuBLASLt takes one bias or bias gradient", label);
    const int64_t in = n->inputs[HIPDNN_RED_X];
    const hipdnnSdkTensor* x = hipdnnSdkGraphFindTensor(g, in);
    const hipdnnSdkTensor* y = hipdnnSdkGraphFindTensor(g, n->outputs[HIPDNN_RED_Y]);
    if (!x || !y) return decline(why, len, "%s: its tensors are not set", label);
    if (y->is_virtual)
        return decline(why, len, "%s: its sum is computed in the graph; cuBLASLt writes a bias "
                       "gradient to memory", label);
    const int axis = summed_axis(x, y);
    if (axis < 0)
        return decline(why, len, "%s: it does not sum over exactly one of the last two axes; "
                       "cuBLASLt's bias gradient is one matrix's row or column sums", label);
    if (in == cur && ch->activation == BL_EPILOGUE_DGELU) {
        ch->bias_kind = BL_BIAS_GRAD;
    } else if (in == mm->inputs[HIPDNN_MATMUL_A] || in == mm->inputs[HIPDNN_MATMUL_B]) {
        const bool a = in == mm->inputs[HIPDNN_MATMUL_A];
        if (axis != (a ? 1 : 0))
            return decline(why, len, "%s: it sums '%s' over its %s; cuBLASLt's BGRADA / BGRADB "
                           "epilogues sum an operand over the product's k", label, x->name,
                           axis ? "columns" : "rows");
        ch->bias_kind = a ? BL_BIAS_GRAD_A : BL_BIAS_GRAD_B;
    } else {
        return decline(why, len, "%s: cuBLASLt sums an operand of the product (BGRADA / "
                       "BGRADB) or its result after the DGELU epilogue (DGELU_BGRAD), not '%s'",
                       label, x->name);
    }
    ch->bias = y->uid;
    ch->bias_axis = axis;
    return true;
}

/* Checks the chain as a whole once read: the operand sums run alone. */
static bool whole(const hipdnnSdkGraph* g, const bl_chain* ch, char* why, size_t len) {
    const bool operand = ch->bias_kind == BL_BIAS_GRAD_A || ch->bias_kind == BL_BIAS_GRAD_B;
    const hipdnnSdkTensor* d = hipdnnSdkGraphFindTensor(g, ch->out);
    if (operand && ch->activation)
        return decline(why, len, "cuBLASLt's BGRADA / BGRADB epilogues sum an operand with no "
                       "activation after the product");
    if (!d || d->is_virtual)
        return decline(why, len, "the graph's last node writes no output%s",
                       ch->bias_kind == BL_BIAS_GRAD ? " (DGELU_BGRAD writes the gradient "
                                                       "and its sum both)" : "");
    return true;
}

bool blaslt_chain(const hipdnnSdkGraph* g, const hipdnnSdkNode* mm, bl_chain* ch, char* why,
                  size_t len) {
    *ch = (bl_chain){HIPDNN_NO_TENSOR, BL_BIAS_NONE, 0, HIPDNN_NO_TENSOR, 0, HIPDNN_NO_TENSOR};
    const hipdnnSdkTensor* c = hipdnnSdkGraphFindTensor(g, mm->outputs[HIPDNN_MATMUL_C]);
    int64_t cur = c->uid;
    for (int32_t i = 0; i < g->num_nodes; ++i) {
        const hipdnnSdkNode* n = &g->nodes[i];
        if (n == mm) continue;
        char label[160];
        hipdnnSdkNodeLabel(n, label, sizeof(label));
        bool ok;
        if (n->kind == HIPDNN_OP_MATMUL)
            ok = decline(why, len, "%s: one matmul a graph: cuBLASLt runs one product and "
                         "its epilogue (a backward step's dx, dw and db are a graph each)",
                         label);
        else if (n->kind == HIPDNN_OP_REDUCTION)
            ok = reduction(g, n, label, mm, cur, ch, why, len);
        else if (n->kind == HIPDNN_OP_POINTWISE)
            ok = pointwise(g, n, label, c, cur, ch, why, len);
        else
            ok = decline(why, len, "%s: no cuBLASLt epilogue runs it with a matmul", label);
        if (!ok) return false;
        if (n->kind == HIPDNN_OP_POINTWISE) cur = hipdnnSdkPointwiseOutput(n);
    }
    ch->out = cur;
    return whole(g, ch, why, len);
}

const char* blaslt_epilogue_name(uint32_t e) {
    switch (e) {
    case BL_EPILOGUE_BIAS: return "bias";
    case BL_EPILOGUE_RELU: return "relu";
    case BL_EPILOGUE_BIAS | BL_EPILOGUE_RELU: return "bias+relu";
    case BL_EPILOGUE_GELU: return "gelu_tanh";
    case BL_EPILOGUE_BIAS | BL_EPILOGUE_GELU: return "bias+gelu_tanh";
    case BL_EPILOGUE_GELU | BL_EPILOGUE_AUX: return "gelu_tanh_aux";
    case BL_EPILOGUE_BIAS | BL_EPILOGUE_GELU | BL_EPILOGUE_AUX: return "bias+gelu_tanh_aux";
    case BL_EPILOGUE_DGELU: return "dgelu";
    case BL_EPILOGUE_DGELU | BL_EPILOGUE_BGRAD: return "dgelu+bgrad";
    case BL_EPILOGUE_BGRADA: return "bgrada";
    case BL_EPILOGUE_BGRADB: return "bgradb";
    default: return "none";
    }
}
