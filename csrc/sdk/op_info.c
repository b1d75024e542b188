/* The table of operations: port names and counts, used for validation messages,
 * serialization and by plugins. */
#include <stddef.h>

#include "hipdnn/hipdnn_sdk.h"

static const hipdnnSdkOpInfo k_ops[] = {
    {HIPDNN_OP_CONV_FPROP, "conv_fprop", 2, 1, 2, {"x", "w"}, {"y"}},
    {HIPDNN_OP_MATMUL, "matmul", 2, 1, 2, {"a", "b"}, {"c"}},
    {HIPDNN_OP_POINTWISE, "pointwise", 2, 1, 1, {"x", "b"}, {"y"}},
    {HIPDNN_OP_BATCHNORM_INFERENCE,
     "batchnorm_inference",
     5,
     1,
     5,
     {"x", "mean", "inv_variance", "scale", "bias"},
     {"y"}},
};

const hipdnnSdkOpInfo* hipdnnSdkOpInfoGet(hipdnnOpKind_t kind) {
    for (size_t i = 0; i < sizeof(k_ops) / sizeof(k_ops[0]); ++i)
        if (k_ops[i].kind == kind) return &k_ops[i];
    return NULL;
}

static const struct {
    hipdnnPointwiseMode_t mode;
    const char* name;
    int arity;
} k_pointwise[] = {
    {HIPDNN_POINTWISE_ADD, "add", 2},         {HIPDNN_POINTWISE_SUB, "sub", 2},
    {HIPDNN_POINTWISE_MUL, "mul", 2},         {HIPDNN_POINTWISE_DIV, "div", 2},
    {HIPDNN_POINTWISE_MAX, "max", 2},         {HIPDNN_POINTWISE_MIN, "min", 2},
    {HIPDNN_POINTWISE_IDENTITY, "identity", 1}, {HIPDNN_POINTWISE_RELU_FWD, "relu", 1},
    {HIPDNN_POINTWISE_SIGMOID_FWD, "sigmoid", 1}, {HIPDNN_POINTWISE_TANH_FWD, "tanh", 1},
    {HIPDNN_POINTWISE_GELU_FWD, "gelu", 1},
};

const char* hipdnnSdkPointwiseModeName(hipdnnPointwiseMode_t mode) {
    for (size_t i = 0; i < sizeof(k_pointwise) / sizeof(k_pointwise[0]); ++i)
        if (k_pointwise[i].mode == mode) return k_pointwise[i].name;
    return NULL;
}

int hipdnnSdkPointwiseArity(hipdnnPointwiseMode_t mode) {
    for (size_t i = 0; i < sizeof(k_pointwise) / sizeof(k_pointwise[0]); ++i)
        if (k_pointwise[i].mode == mode) return k_pointwise[i].arity;
    return 0;
}
