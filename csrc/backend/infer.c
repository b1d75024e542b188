/* Per-op rules and inference of output dims, strides and data types, node by node in
 * topological order.  Messages give expected and actual values. */
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "graph_rules.h"

static hipdnnSdkTensor* tensor_of(hipdnnSdkGraph* g, int64_t uid) {
    return uid == HIPDNN_NO_TENSOR ? NULL : (hipdnnSdkTensor*)hipdnnSdkGraphFindTensor(g, uid);
}

static const char* shape_str(const hipdnnSdkTensor* t, char* buf, size_t len) {
    size_t off = 0;
    off += (size_t)snprintf(buf, len, "[");
    for (int i = 0; i < t->ndim && off < len; ++i)
        off += (size_t)snprintf(buf + off, len - off, "%s%lld", i ? ", " : "", (long long)t->dims[i]);
    if (off < len) snprintf(buf + off, len - off, "]");
    return buf;
}

/* Strides for `t` packed in the dimension order of `ref` (same rank), else row-major.
 * This keeps NHWC inputs giving NHWC outputs. */
static void layout_like(hipdnnSdkTensor* t, const hipdnnSdkTensor* ref) {
    if (!ref || ref->ndim != t->ndim || ref->strides[0] == 0) {
        hipdnnSdkPackedStrides(t->ndim, t->dims, t->strides);
        return;
    }
    int order[HIPDNN_MAX_DIMS]; /* dims from outermost (largest stride) to innermost */
    for (int i = 0; i < t->ndim; ++i) order[i] = i;
    for (int i = 1; i < t->ndim; ++i) /* stable insertion sort, descending stride */
        for (int k = i; k > 0 && ref->strides[order[k]] > ref->strides[order[k - 1]]; --k) {
            int tmp = order[k];
            order[k] = order[k - 1];
            order[k - 1] = tmp;
        }
    int64_t s = 1;
    for (int i = t->ndim - 1; i >= 0; --i) {
        t->strides[order[i]] = s;
        s *= t->dims[order[i]];
    }
}

/* Sets an output's dims (or checks them if given) and fills strides/data type. */
static hipdnnStatus_t set_output(const char* label, const char* port, hipdnnSdkTensor* out,
                                 int32_t ndim, const int64_t* dims, const hipdnnSdkTensor* layout,
                                 hipdnnDataType_t dtype) {
    if (out->ndim == 0) {
        /* Strides may have been given without dims (cuDNN frontend's set_stride on an
         * output); they must fit the inferred rank. */
        int32_t given = 0;
        while (given < HIPDNN_MAX_DIMS && out->strides[given] != 0) ++given;
        if (given != 0 && given != ndim)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                              "%s: output '%s' (tensor '%s') has %d strides but the op gives "
                              "rank %d", label, port, out->name, (int)given, (int)ndim);
        out->ndim = ndim;
        memcpy(out->dims, dims, (size_t)ndim * sizeof(int64_t));
    } else {
        bool same = out->ndim == ndim;
        for (int i = 0; same && i < ndim; ++i) same = out->dims[i] == dims[i];
        if (!same) {
            char want[200], got[200];
            hipdnnSdkTensor tmp = *out;
            tmp.ndim = ndim;
            memcpy(tmp.dims, dims, (size_t)ndim * sizeof(int64_t));
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                              "%s: output '%s' (tensor '%s') is %s but the op gives %s", label,
                              port, out->name, shape_str(out, got, sizeof(got)),
                              shape_str(&tmp, want, sizeof(want)));
        }
    }
    if (out->strides[0] == 0) layout_like(out, layout);
    if (out->data_type == HIPDNN_DATA_NOT_SET) out->data_type = dtype;
    return HIPDNN_STATUS_SUCCESS;
}

/* An input must be fully known by the time its consumer is reached. */
static hipdnnStatus_t need_input(const char* label, const char* port, hipdnnSdkTensor* t) {
    if (t->ndim == 0)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: input '%s' (tensor '%s', uid %lld) has no "
                          "dims", label, port, t->name, (long long)t->uid);
    if (t->data_type == HIPDNN_DATA_NOT_SET)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: input '%s' (tensor '%s', uid %lld) has no "
                          "data type", label, port, t->name, (long long)t->uid);
    if (t->strides[0] == 0) hipdnnSdkPackedStrides(t->ndim, t->dims, t->strides);
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t infer_conv(hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label) {
    hipdnnSdkTensor* x = tensor_of(g, n->inputs[HIPDNN_CONV_X]);
    hipdnnSdkTensor* w = tensor_of(g, n->inputs[HIPDNN_CONV_W]);
    hipdnnSdkTensor* y = tensor_of(g, n->outputs[HIPDNN_CONV_Y]);
    char a[200], b[200];
    if (x->ndim < 3 || x->ndim > 2 + HIPDNN_MAX_SPATIAL)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: image '%s' is %s; it needs rank 3 to %d "
                          "([N, C, spatial...])", label, x->name, shape_str(x, a, sizeof(a)),
                          2 + HIPDNN_MAX_SPATIAL);
    if (w->ndim != x->ndim)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: weight '%s' is %s but image '%s' is %s; "
                          "ranks must match", label, w->name, shape_str(w, a, sizeof(a)), x->name,
                          shape_str(x, b, sizeof(b)));
    int ns = x->ndim - 2;
    if (n->num_spatial == 0) {
        n->num_spatial = ns;
        for (int i = 0; i < ns; ++i) {
            n->pre_padding[i] = n->post_padding[i] = 0;
            n->stride[i] = n->dilation[i] = 1;
        }
    } else if (n->num_spatial != ns) {
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: %d padding/stride/dilation values for a "
                          "%dD convolution (image rank %d)", label, (int)n->num_spatial, ns,
                          (int)x->ndim);
    }
    int64_t C = x->dims[1], wc = w->dims[1], K = w->dims[0];
    if (C % wc != 0)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: weight C=%lld does not divide image C=%lld",
                          label, (long long)wc, (long long)C);
    int64_t groups = C / wc;
    if (K % groups != 0)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: weight K=%lld is not a multiple of the %lld "
                          "groups (image C=%lld / weight C=%lld)", label, (long long)K,
                          (long long)groups, (long long)C, (long long)wc);
    int64_t dims[HIPDNN_MAX_DIMS] = {x->dims[0], K};
    for (int i = 0; i < ns; ++i) {
        if (n->stride[i] < 1 || n->dilation[i] < 1 || n->pre_padding[i] < 0 || n->post_padding[i] < 0)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: spatial dim %d has stride %lld, "
                              "dilation %lld, padding %lld/%lld; need stride, dilation >= 1 and "
                              "padding >= 0", label, i, (long long)n->stride[i],
                              (long long)n->dilation[i], (long long)n->pre_padding[i],
                              (long long)n->post_padding[i]);
        int64_t span = n->dilation[i] * (w->dims[2 + i] - 1) + 1;
        int64_t in = x->dims[2 + i] + n->pre_padding[i] + n->post_padding[i];
        if (in < span)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: spatial dim %d: padded image size %lld "
                              "is smaller than the dilated filter %lld", label, i, (long long)in,
                              (long long)span);
        dims[2 + i] = (in - span) / n->stride[i] + 1;
    }
    if (n->compute_type == HIPDNN_DATA_NOT_SET) n->compute_type = HIPDNN_DATA_FLOAT;
    return set_output(label, "y", y, x->ndim, dims, x,
                      y->is_virtual ? n->compute_type : x->data_type);
}

/* NumPy broadcasting of the dims of a and b (right-aligned). */
static bool broadcast(const hipdnnSdkTensor* a, const hipdnnSdkTensor* b, int32_t skip_tail,
                      int32_t* ndim, int64_t* dims) {
    int32_t ra = a->ndim - skip_tail, rb = b->ndim - skip_tail;
    int32_t r = ra > rb ? ra : rb;
    for (int32_t i = 0; i < r; ++i) {
        int32_t ia = ra - r + i, ib = rb - r + i;
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da != db && da != 1 && db != 1) return false;
        dims[i] = da == 1 ? db : da;
    }
    *ndim = r;
    return true;
}

static hipdnnStatus_t infer_matmul(hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label) {
    hipdnnSdkTensor* A = tensor_of(g, n->inputs[HIPDNN_MATMUL_A]);
    hipdnnSdkTensor* B = tensor_of(g, n->inputs[HIPDNN_MATMUL_B]);
    hipdnnSdkTensor* C = tensor_of(g, n->outputs[HIPDNN_MATMUL_C]);
    char a[200], b[200];
    if (A->ndim < 2 || B->ndim < 2)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: A is %s and B is %s; both need rank >= 2",
                          label, shape_str(A, a, sizeof(a)), shape_str(B, b, sizeof(b)));
    int64_t M = A->dims[A->ndim - 2], K = A->dims[A->ndim - 1];
    int64_t K2 = B->dims[B->ndim - 2], N = B->dims[B->ndim - 1];
    if (K != K2)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: A is %s but B is %s; inner dims must match",
                          label, shape_str(A, a, sizeof(a)), shape_str(B, b, sizeof(b)));
    int32_t r = 0;
    int64_t dims[HIPDNN_MAX_DIMS];
    if (!broadcast(A, B, 2, &r, dims))
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: batch dims of A %s and B %s do not "
                          "broadcast", label, shape_str(A, a, sizeof(a)), shape_str(B, b, sizeof(b)));
    dims[r] = M;
    dims[r + 1] = N;
    if (n->compute_type == HIPDNN_DATA_NOT_SET) n->compute_type = HIPDNN_DATA_FLOAT;
    return set_output(label, "c", C, r + 2, dims, NULL,
                      C->is_virtual ? n->compute_type : A->data_type);
}

static hipdnnStatus_t infer_pointwise(hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label) {
    hipdnnSdkTensor* x = tensor_of(g, n->inputs[HIPDNN_PW_X]);
    hipdnnSdkTensor* bt = tensor_of(g, n->inputs[HIPDNN_PW_B]);
    hipdnnSdkTensor* y = tensor_of(g, n->outputs[HIPDNN_PW_Y]);
    char a[200], b[200];
    int32_t r = x->ndim;
    int64_t dims[HIPDNN_MAX_DIMS];
    memcpy(dims, x->dims, sizeof(dims));
    if (bt && !broadcast(x, bt, 0, &r, dims))
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: x '%s' %s and b '%s' %s do not broadcast",
                          label, x->name, shape_str(x, a, sizeof(a)), bt->name,
                          shape_str(bt, b, sizeof(b)));
    if (y->ndim != 0) {
        /* A given output shape may be larger than the inputs; they broadcast into it. */
        int32_t rr = 0;
        int64_t d2[HIPDNN_MAX_DIMS];
        hipdnnSdkTensor tmp = *y;
        tmp.ndim = r;
        memcpy(tmp.dims, dims, sizeof(dims));
        if (broadcast(y, &tmp, 0, &rr, d2) && rr == y->ndim &&
            memcmp(d2, y->dims, (size_t)rr * sizeof(int64_t)) == 0) {
            r = y->ndim;
            memcpy(dims, y->dims, sizeof(dims));
        }
    }
    if (n->compute_type == HIPDNN_DATA_NOT_SET) n->compute_type = HIPDNN_DATA_FLOAT;
    bool x_full = x->ndim == r && memcmp(x->dims, dims, (size_t)r * sizeof(int64_t)) == 0;
    return set_output(label, "y", y, r, dims, x_full ? x : NULL,
                      y->is_virtual ? n->compute_type : x->data_type);
}

static hipdnnStatus_t infer_batchnorm(hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label) {
    hipdnnSdkTensor* x = tensor_of(g, n->inputs[HIPDNN_BN_X]);
    hipdnnSdkTensor* y = tensor_of(g, n->outputs[HIPDNN_BN_Y]);
    char a[200];
    if (x->ndim < 2)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: x '%s' is %s; it needs rank >= 2 ([N, C, ...])",
                          label, x->name, shape_str(x, a, sizeof(a)));
    static const char* names[] = {"x", "mean", "inv_variance", "scale", "bias"};
    for (int p = HIPDNN_BN_MEAN; p <= HIPDNN_BN_BIAS; ++p) {
        hipdnnSdkTensor* t = tensor_of(g, n->inputs[p]);
        bool ok = t->ndim == x->ndim;
        for (int i = 0; ok && i < t->ndim; ++i) ok = t->dims[i] == (i == 1 ? x->dims[1] : 1);
        if (!ok) {
            char want[200];
            hipdnnSdkTensor tmp = *x;
            for (int i = 0; i < tmp.ndim; ++i) tmp.dims[i] = i == 1 ? x->dims[1] : 1;
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: %s '%s' is %s but x C=%lld needs %s",
                              label, names[p], t->name, shape_str(t, a, sizeof(a)),
                              (long long)x->dims[1], shape_str(&tmp, want, sizeof(want)));
        }
    }
    if (n->compute_type == HIPDNN_DATA_NOT_SET) n->compute_type = HIPDNN_DATA_FLOAT;
    return set_output(label, "y", y, x->ndim, x->dims, x,
                      y->is_virtual ? n->compute_type : x->data_type);
}

hipdnnStatus_t hipdnnInferGraph(hipdnnSdkGraph* g) {
    char label[160];
    for (int32_t i = 0; i < g->num_nodes; ++i) {
        hipdnnSdkNode* n = &g->nodes[i];
        const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(n->kind);
        hipdnnNodeLabel(n, label, sizeof(label));
        for (int p = 0; p < info->num_inputs; ++p) {
            hipdnnSdkTensor* t = tensor_of(g, n->inputs[p]);
            hipdnnStatus_t st = t ? need_input(label, info->input_names[p], t) : HIPDNN_STATUS_SUCCESS;
            /* Which data types run is each engine's call (see check_support()). */
            if (st) return st;
        }
        hipdnnStatus_t st;
        switch (n->kind) {
        case HIPDNN_OP_CONV_FPROP: st = infer_conv(n, g, label); break;
        case HIPDNN_OP_MATMUL: st = infer_matmul(n, g, label); break;
        case HIPDNN_OP_POINTWISE: st = infer_pointwise(n, g, label); break;
        case HIPDNN_OP_BATCHNORM_INFERENCE: st = infer_batchnorm(n, g, label); break;
        default: st = hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: unknown op", label);
        }
        if (st) return st;
    }
    /* Every tensor now has dims, strides and a data type; check what users gave. */
    for (int32_t i = 0; i < g->num_tensors; ++i) {
        hipdnnSdkTensor* t = &g->tensors[i];
        if (t->data_type == HIPDNN_DATA_NOT_SET || hipdnnSdkDataTypeSize(t->data_type) == 0)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "tensor '%s' (uid %lld) has no valid data "
                              "type", t->name, (long long)t->uid);
        for (int k = 0; k < t->ndim; ++k)
            if (t->dims[k] <= 0 || t->strides[k] <= 0)
                return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "tensor '%s' (uid %lld): dim %d is %lld "
                                  "with stride %lld; both must be positive", t->name,
                                  (long long)t->uid, k, (long long)t->dims[k],
                                  (long long)t->strides[k]);
        if (t->is_by_value && hipdnnSdkElementCount(t->ndim, t->dims) != 1)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "tensor '%s' (uid %lld) is pass-by-value but "
                              "has %lld elements; it must be a scalar", t->name, (long long)t->uid,
                              (long long)hipdnnSdkElementCount(t->ndim, t->dims));
    }
    return HIPDNN_STATUS_SUCCESS;
}
