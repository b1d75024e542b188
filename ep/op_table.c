/* op_table.c — the ONNX ops hipdnn-ep claims, one row each: the check that claims a node
 * (capability.c), the shape rule of its outputs (shape.c) and its lowering to hipdnn
 * operations (lower.c), with the constant that lowering takes; ops whose output can have
 * elements when an input has none (contractions, reductions) name a fourth function, their
 * lowering for that case.  Adding an ONNX op is one row here plus its functions (or
 * existing ones reused). */
#include <string.h>

#include "hipdnn_ep.h"

#define PW(mode) ((int)HIPDNN_POINTWISE_##mode)
#define RED(op) ((int)HIPDNN_REDUCE_TENSOR_##op)

static const ep_op_def ops[] = {
    /* op, domain, since, check, shape, lower, empty, arg */
    {"Conv", "", 0, ep_check_conv, ep_shape_conv, ep_emit_conv, ep_empty_conv, 0},
    {"ConvTranspose", "", 0, ep_check_conv_transpose, ep_shape_conv_transpose, ep_emit_conv, ep_empty_conv, 1},
    {"Gemm", "", 0, ep_check_gemm, ep_shape_gemm, ep_emit_gemm, ep_empty_gemm, 0},
    {"MatMul", "", 0, ep_check_matmul, ep_shape_matmul, ep_emit_matmul, ep_empty_matmul, 0},
    {"Add", "", 0, ep_check_binary, ep_shape_broadcast, ep_emit_binary, NULL, PW(ADD)},
    {"Sub", "", 0, ep_check_binary, ep_shape_broadcast, ep_emit_binary, NULL, PW(SUB)},
    {"Mul", "", 0, ep_check_binary, ep_shape_broadcast, ep_emit_binary, NULL, PW(MUL)},
    {"Div", "", 0, ep_check_binary, ep_shape_broadcast, ep_emit_binary, NULL, PW(DIV)},
    {"Relu", "", 0, ep_check_unary, ep_shape_same, ep_emit_unary, NULL, PW(RELU_FWD)},
    {"Sigmoid", "", 0, ep_check_unary, ep_shape_same, ep_emit_unary, NULL, PW(SIGMOID_FWD)},
    {"Tanh", "", 0, ep_check_unary, ep_shape_same, ep_emit_unary, NULL, PW(TANH_FWD)},
    {"Gelu", "", 20, ep_check_gelu, ep_shape_same, ep_emit_gelu, NULL, 0},
    {"Gelu", "com.microsoft", 0, ep_check_gelu, ep_shape_same, ep_emit_gelu, NULL, 0},
    {"Softmax", "", 0, ep_check_softmax, ep_shape_softmax, ep_emit_softmax, NULL, 0},
    {"LogSoftmax", "", 0, ep_check_softmax, ep_shape_softmax, ep_emit_softmax, NULL, 1},
    {"Reshape", "", 0, ep_check_reshape, ep_shape_reshape, ep_emit_reshape, NULL, 0},
    {"Flatten", "", 0, ep_check_unary, ep_shape_flatten, ep_emit_reshape, NULL, 0},
    {"BatchNormalization", "", 0, ep_check_batchnorm, ep_shape_batchnorm, ep_emit_batchnorm, NULL, 0},
    {"LayerNormalization", "", 0, ep_check_layernorm, ep_shape_layernorm, ep_emit_layernorm, NULL, 0},
    {"RMSNormalization", "", 23, ep_check_layernorm, ep_shape_layernorm, ep_emit_layernorm, NULL, 1},
    {"InstanceNormalization", "", 0, ep_check_instancenorm, ep_shape_instancenorm, ep_emit_instancenorm, NULL, 0},
    {"ReduceSum", "", 0, ep_check_reduce, ep_shape_reduce, ep_emit_reduce, ep_empty_reduce, RED(ADD)},
    {"ReduceMean", "", 0, ep_check_reduce, ep_shape_reduce, ep_emit_reduce, ep_empty_reduce, RED(AVG)},
    {"ReduceMax", "", 0, ep_check_reduce, ep_shape_reduce, ep_emit_reduce, ep_empty_reduce, RED(MAX)},
    {"ReduceMin", "", 0, ep_check_reduce, ep_shape_reduce, ep_emit_reduce, ep_empty_reduce, RED(MIN)},
    {"ReduceProd", "", 0, ep_check_reduce, ep_shape_reduce, ep_emit_reduce, ep_empty_reduce, RED(MUL)},
    {"ReduceL1", "", 0, ep_check_reduce, ep_shape_reduce, ep_emit_reduce, ep_empty_reduce, RED(NORM1)},
    {"ReduceL2", "", 0, ep_check_reduce, ep_shape_reduce, ep_emit_reduce, ep_empty_reduce, RED(NORM2)},
    {"Erf", "", 0, ep_check_unary, ep_shape_same, ep_emit_unary, NULL, PW(ERF)},
    {"Sqrt", "", 0, ep_check_unary, ep_shape_same, ep_emit_unary, NULL, PW(SQRT)},
    {"Exp", "", 0, ep_check_unary, ep_shape_same, ep_emit_unary, NULL, PW(EXP)},
    {"Log", "", 0, ep_check_unary, ep_shape_same, ep_emit_unary, NULL, PW(LOG)},
    {"Neg", "", 0, ep_check_unary, ep_shape_same, ep_emit_unary, NULL, PW(NEG)},
    {"Abs", "", 0, ep_check_unary, ep_shape_same, ep_emit_unary, NULL, PW(ABS)},
    {"Reciprocal", "", 0, ep_check_unary, ep_shape_same, ep_emit_unary, NULL, PW(RECIPROCAL)},
    {"Floor", "", 0, ep_check_unary, ep_shape_same, ep_emit_unary, NULL, PW(FLOOR)},
    {"Ceil", "", 0, ep_check_unary, ep_shape_same, ep_emit_unary, NULL, PW(CEIL)},
    {"Sin", "", 0, ep_check_unary, ep_shape_same, ep_emit_unary, NULL, PW(SIN)},
    {"Cos", "", 0, ep_check_unary, ep_shape_same, ep_emit_unary, NULL, PW(COS)},
    {"Identity", "", 0, ep_check_unary, ep_shape_same, ep_emit_unary, NULL, PW(IDENTITY)},
    {"Cast", "", 0, ep_check_cast, ep_shape_same, ep_emit_cast, NULL, 0},
    {"Pow", "", 0, ep_check_binary, ep_shape_broadcast, ep_emit_binary, NULL, PW(POW)},
    {"Min", "", 0, ep_check_variadic, ep_shape_variadic, ep_emit_variadic, NULL, PW(MIN)},
    {"Max", "", 0, ep_check_variadic, ep_shape_variadic, ep_emit_variadic, NULL, PW(MAX)},
    {"Sum", "", 0, ep_check_variadic, ep_shape_variadic, ep_emit_variadic, NULL, PW(ADD)},
    {"Mean", "", 0, ep_check_variadic, ep_shape_variadic, ep_emit_variadic, NULL, -1},
    {"Clip", "", 0, ep_check_clip, ep_shape_same, ep_emit_clip, NULL, 0},
    {"LeakyRelu", "", 0, ep_check_leaky_relu, ep_shape_same, ep_emit_leaky_relu, NULL, 0},
    {"HardSigmoid", "", 0, ep_check_unary, ep_shape_same, ep_emit_hard_sigmoid, NULL, 0},
    {"HardSwish", "", 0, ep_check_unary, ep_shape_same, ep_emit_hard_sigmoid, NULL, 1},
    {"MaxPool", "", 0, ep_check_pool, ep_shape_pool, ep_emit_pool, NULL, 0},
    {"AveragePool", "", 0, ep_check_pool, ep_shape_pool, ep_emit_pool, NULL, 0},
    {"GlobalAveragePool", "", 0, ep_check_global_pool, ep_shape_global_pool, ep_emit_global_pool, NULL, RED(AVG)},
    {"GlobalMaxPool", "", 0, ep_check_global_pool, ep_shape_global_pool, ep_emit_global_pool, NULL, RED(MAX)},
    {"Transpose", "", 0, ep_check_transpose, ep_shape_transpose, ep_emit_transpose, NULL, 0},
    {"Concat", "", 0, ep_check_concat, ep_shape_concat, ep_emit_concat, ep_emit_concat, 0},
    {"Slice", "", 0, ep_check_slice, ep_shape_slice, ep_emit_slice, NULL, 0},
    {"Split", "", 0, ep_check_split, ep_shape_split, ep_emit_split, NULL, 0},
    {"Squeeze", "", 0, ep_check_squeeze, ep_shape_squeeze, ep_emit_reshape, NULL, 0},
    {"Unsqueeze", "", 0, ep_check_squeeze, ep_shape_unsqueeze, ep_emit_reshape, NULL, 0},
    {"Expand", "", 0, ep_check_expand, ep_shape_expand, ep_emit_expand, NULL, 0},
    {"Where", "", 0, ep_check_where, ep_shape_where, ep_emit_where, NULL, 0},
    {"Attention", "", 23, ep_check_attention, ep_shape_attention, ep_emit_attention, NULL, 0},
};

static bool same_domain(const char* row, const char* node) {
    if (!row[0]) return !node[0] || !strcmp(node, "ai.onnx");
    return !strcmp(row, node);
}

const ep_op_def* ep_op_find(const ep_node* n) {
    const ep_op_def* older = NULL; /* a row the node's opset predates */
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); ++i) {
        const ep_op_def* d = &ops[i];
        if (strcmp(d->op, n->op) || !same_domain(d->domain, n->domain)) continue;
        if (n->since_version >= d->since) return d;
        if (!older) older = d;
    }
    return older;
}
