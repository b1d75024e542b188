/* What the inference rules share (infer.c) and the rules themselves, one file per op
 * family: infer_conv_matmul.c, infer_pointwise.c, infer_norm_reduction.c,
 * infer_attention.c, infer_data_movement.c.  Not installed: the SDK is a static library
 * whose symbols stay hidden (-Wl,--exclude-libs), so these plain names reach no user. */
#ifndef HIPDNN_SDK_INFER_INTERNAL_H
#define HIPDNN_SDK_INFER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hipdnn/hipdnn_sdk.h"

/* What every rule gets besides its node: where its message goes, and the uid map. */
typedef struct {
    char* buf;
    size_t len;
    const hipdnnSdkUidMap* map;
} err_t;

/* Writes the message and returns false, so a rule can `return fail(...)`. */
bool fail(err_t* e, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
/* The tensor of a port's uid, or NULL for an unset port. */
hipdnnSdkTensor* tensor_of(err_t* e, hipdnnSdkGraph* g, int64_t uid);
/* "[2, 3, 4]" into buf; returns buf. */
const char* shape_str(const hipdnnSdkTensor* t, char* buf, size_t len);
/* Sets an output's dims (or checks them if given) and fills strides (laid out like
 * `layout` where given) and the data type. */
bool set_output(err_t* e, const char* label, const char* port, hipdnnSdkTensor* out,
                int32_t ndim, const int64_t* dims, const hipdnnSdkTensor* layout,
                hipdnnDataType_t dtype);
/* NumPy broadcasting of the dims of a and b (right-aligned), leaving out skip_tail dims. */
bool broadcast(const hipdnnSdkTensor* a, const hipdnnSdkTensor* b, int32_t skip_tail,
               int32_t* ndim, int64_t* dims);
/* Checks a per-channel or per-feature tensor against the shape it must have. */
bool check_shape(err_t* e, const char* label, const char* port, const hipdnnSdkTensor* t,
                 int32_t ndim, const int64_t* dims, const char* why);
/* A tensor that must hold one value (epsilon, a momentum, a scale). */
bool check_one_value(err_t* e, const char* label, const char* port, const hipdnnSdkTensor* t);

/* The rules, by op family; hipdnnSdkInferNode runs them by op kind. */
typedef bool (*infer_fn)(err_t*, hipdnnSdkNode*, hipdnnSdkGraph*, const char*);

bool infer_conv(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label);
bool infer_conv_grad(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label);
bool infer_matmul(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label);

bool infer_pointwise(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label);

bool infer_batchnorm(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label);
bool infer_reduction(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label);
bool infer_norm(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label);
bool infer_norm_backward(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label);
bool infer_genstats(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label);

bool infer_sdpa_fwd(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label);
bool infer_sdpa_bwd(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label);

bool infer_slice(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label);
bool infer_concat(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label);
bool infer_resample(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label);
bool infer_resample_backward(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label);
bool infer_reshape(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label);

#endif
