/* Inference rules of convolution (forward, dgrad, wgrad) and matmul. */
#include <string.h>

#include "hipdnn/hipdnn_sdk.h"
#include "infer_internal.h"

/* The forward convolution's output dims for image x and filter w (either may be the
 * op's output for dgrad/wgrad; the caller checks that they have dims): fills the four
 * spatial lists' defaults, checks them and the groups, and writes rank x->ndim dims. */
static bool conv_dims(err_t* e, hipdnnSdkNode* n, const hipdnnSdkTensor* x,
                      const hipdnnSdkTensor* w, const char* label, int64_t* dims) {
    char a[200], b[200];
    if (x->ndim < 3 || x->ndim > 2 + HIPDNN_MAX_SPATIAL)
        return fail(e, "%s: image '%s' is %s; it needs rank 3 to %d "
                          "([N, C, spatial...])", label, x->name, shape_str(x, a, sizeof(a)),
                          2 + HIPDNN_MAX_SPATIAL);
    if (w->ndim != x->ndim)
        return fail(e, "%s: weight '%s' is %s but image '%s' is %s; "
                          "ranks must match", label, w->name, shape_str(w, a, sizeof(a)), x->name,
                          shape_str(x, b, sizeof(b)));
    int ns = x->ndim - 2;
    /* The four spatial lists: each unset one takes its default for every spatial dim;
     * set ones must have one value per spatial dim. */
    static const int lists[] = {HIPDNN_CONV_PRE_PADDING, HIPDNN_CONV_POST_PADDING,
                                HIPDNN_CONV_STRIDE, HIPDNN_CONV_DILATION};
    const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(n->kind);
    for (int k = 0; k < 4; ++k) {
        hipdnnSdkAttrValue* v = &n->attrs[lists[k]];
        if (v->count == 0) {
            for (int i = 0; i < ns; ++i) v->i[i] = (int64_t)info->attrs[lists[k]].default_value;
            v->count = ns;
        } else if (v->count != ns) {
            return fail(e, "%s: %s has %d values for a %dD convolution (image rank %d)", label,
                        info->attrs[lists[k]].name, (int)v->count, ns, (int)x->ndim);
        }
    }
    const int64_t* pre = n->attrs[HIPDNN_CONV_PRE_PADDING].i;
    const int64_t* post = n->attrs[HIPDNN_CONV_POST_PADDING].i;
    const int64_t* stride = n->attrs[HIPDNN_CONV_STRIDE].i;
    const int64_t* dil = n->attrs[HIPDNN_CONV_DILATION].i;
    int64_t C = x->dims[1], wc = w->dims[1], K = w->dims[0];
    if (C % wc != 0)
        return fail(e, "%s: weight C=%lld does not divide image C=%lld",
                          label, (long long)wc, (long long)C);
    int64_t groups = C / wc;
    if (K % groups != 0)
        return fail(e, "%s: weight K=%lld is not a multiple of the %lld "
                          "groups (image C=%lld / weight C=%lld)", label, (long long)K,
                          (long long)groups, (long long)C, (long long)wc);
    dims[0] = x->dims[0];
    dims[1] = K;
    for (int i = 0; i < ns; ++i) {
        if (stride[i] < 1 || dil[i] < 1 || pre[i] < 0 || post[i] < 0)
            return fail(e, "%s: spatial dim %d has stride %lld, "
                              "dilation %lld, padding %lld/%lld; need stride, dilation >= 1 and "
                              "padding >= 0", label, i, (long long)stride[i],
                              (long long)dil[i], (long long)pre[i], (long long)post[i]);
        int64_t span, in;
        if (__builtin_mul_overflow(dil[i], w->dims[2 + i] - 1, &span) ||
            __builtin_add_overflow(span, 1, &span) ||
            __builtin_add_overflow(x->dims[2 + i], pre[i], &in) ||
            __builtin_add_overflow(in, post[i], &in))
            return fail(e, "%s: spatial dim %d: dilation %lld, padding %lld/%lld and sizes "
                        "overflow 64-bit arithmetic", label, i, (long long)dil[i],
                        (long long)pre[i], (long long)post[i]);
        if (in < span)
            return fail(e, "%s: spatial dim %d: padded image size %lld "
                              "is smaller than the dilated filter %lld", label, i, (long long)in,
                              (long long)span);
        dims[2 + i] = (in - span) / stride[i] + 1;
    }
    return true;
}

bool infer_conv(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label) {
    hipdnnSdkTensor* x = tensor_of(e, g, n->inputs[HIPDNN_CONV_X]);
    hipdnnSdkTensor* w = tensor_of(e, g, n->inputs[HIPDNN_CONV_W]);
    hipdnnSdkTensor* y = tensor_of(e, g, n->outputs[HIPDNN_CONV_Y]);
    int64_t dims[HIPDNN_MAX_DIMS];
    if (!conv_dims(e, n, x, w, label, dims)) return false;
    if (n->compute_type == HIPDNN_DATA_NOT_SET) n->compute_type = HIPDNN_DATA_FLOAT;
    return set_output(e, label, "y", y, x->ndim, dims, x,
                      y->is_virtual ? n->compute_type : x->data_type);
}

/* conv_dgrad (dy, w -> dx) and conv_wgrad (x, dy -> dw): the output's dims are given; the
 * forward convolution of x (or dx) with w (or dw) must give dy's dims. */
bool infer_conv_grad(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label) {
    bool data = n->kind == HIPDNN_OP_CONV_DGRAD;
    hipdnnSdkTensor* dy = tensor_of(e, g, n->inputs[data ? HIPDNN_DGRAD_DY : HIPDNN_WGRAD_DY]);
    hipdnnSdkTensor* other = tensor_of(e, g, n->inputs[data ? HIPDNN_DGRAD_W : HIPDNN_WGRAD_X]);
    hipdnnSdkTensor* out = tensor_of(e, g, n->outputs[0]);
    const char* port = data ? "dx" : "dw";
    char a[200], b[200];
    if (out->ndim == 0)
        return fail(e, "%s: output '%s' (tensor '%s') has no dims; give them (%s), as cuDNN "
                    "frontend asks: stride and groups leave them ambiguous", label, port,
                    out->name, data ? "the forward image's [N, C, spatial...]"
                                    : "the filter's [K, C/groups, spatial...]");
    int64_t dims[HIPDNN_MAX_DIMS];
    if (!conv_dims(e, n, data ? out : other, data ? other : out, label, dims)) return false;
    hipdnnSdkTensor fwd = *dy;
    fwd.ndim = out->ndim;
    memcpy(fwd.dims, dims, sizeof(dims));
    bool same = dy->ndim == fwd.ndim;
    for (int i = 0; same && i < fwd.ndim; ++i) same = dy->dims[i] == fwd.dims[i];
    if (!same)
        return fail(e, "%s: dy '%s' is %s but the forward convolution of these shapes gives %s",
                    label, dy->name, shape_str(dy, a, sizeof(a)), shape_str(&fwd, b, sizeof(b)));
    if (n->compute_type == HIPDNN_DATA_NOT_SET) n->compute_type = HIPDNN_DATA_FLOAT;
    return set_output(e, label, port, out, out->ndim, out->dims, data ? dy : other,
                      out->is_virtual ? n->compute_type : dy->data_type);
}

bool infer_matmul(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label) {
    hipdnnSdkTensor* A = tensor_of(e, g, n->inputs[HIPDNN_MATMUL_A]);
    hipdnnSdkTensor* B = tensor_of(e, g, n->inputs[HIPDNN_MATMUL_B]);
    hipdnnSdkTensor* C = tensor_of(e, g, n->outputs[HIPDNN_MATMUL_C]);
    char a[200], b[200];
    if (A->ndim < 2 || B->ndim < 2)
        return fail(e, "%s: A is %s and B is %s; both need rank >= 2",
                          label, shape_str(A, a, sizeof(a)), shape_str(B, b, sizeof(b)));
    int64_t M = A->dims[A->ndim - 2], K = A->dims[A->ndim - 1];
    int64_t K2 = B->dims[B->ndim - 2], N = B->dims[B->ndim - 1];
    if (K != K2)
        return fail(e, "%s: A is %s but B is %s; inner dims must match",
                          label, shape_str(A, a, sizeof(a)), shape_str(B, b, sizeof(b)));
    int32_t r = 0;
    int64_t dims[HIPDNN_MAX_DIMS];
    if (!broadcast(A, B, 2, &r, dims))
        return fail(e, "%s: batch dims of A %s and B %s do not "
                          "broadcast", label, shape_str(A, a, sizeof(a)), shape_str(B, b, sizeof(b)));
    dims[r] = M;
    dims[r + 1] = N;
    if (n->compute_type == HIPDNN_DATA_NOT_SET) n->compute_type = HIPDNN_DATA_FLOAT;
    return set_output(e, label, "c", C, r + 2, dims, NULL,
                      C->is_virtual ? n->compute_type : A->data_type);
}
