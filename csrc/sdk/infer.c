/* The inference rules of the op table: per-op checks and the dims, strides and data
 * types of each op's outputs.  The backend runs them node by node in topological order;
 * messages give expected and actual values.  Arithmetic on user values is checked: every
 * given value is bounded (dims by 2^40 elements, parameters by 2^40), and products that
 * could still overflow go through __builtin_*_overflow.
 *
 * This file holds what the rules share and the dispatch by op kind; the rules live one
 * op family per file (infer_internal.h lists them). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hipdnn/hipdnn_sdk.h"
#include "infer_internal.h"

bool fail(err_t* e, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (e->len) vsnprintf(e->buf, e->len, fmt, ap);
    va_end(ap);
    return false;
}

hipdnnSdkTensor* tensor_of(err_t* e, hipdnnSdkGraph* g, int64_t uid) {
    int32_t t = uid == HIPDNN_NO_TENSOR ? -1 : hipdnnSdkUidMapFind(e->map, uid);
    return t < 0 ? NULL : &g->tensors[t];
}

const char* shape_str(const hipdnnSdkTensor* t, char* buf, size_t len) {
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
bool set_output(err_t* e, const char* label, const char* port, hipdnnSdkTensor* out,
                int32_t ndim, const int64_t* dims, const hipdnnSdkTensor* layout,
                hipdnnDataType_t dtype) {
    if (out->ndim == 0) {
        /* Strides may have been given without dims (cuDNN frontend's set_stride on an
         * output); they must fit the inferred rank. */
        int32_t given = 0;
        while (given < HIPDNN_MAX_DIMS && out->strides[given] != 0) ++given;
        if (given != 0 && given != ndim)
            return fail(e, "%s: output '%s' (tensor '%s') has %d strides but the op gives "
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
            return fail(e, "%s: output '%s' (tensor '%s') is %s but the op gives %s", label,
                              port, out->name, shape_str(out, got, sizeof(got)),
                              shape_str(&tmp, want, sizeof(want)));
        }
    }
    /* Bounded here, before strides are computed from the dims and before the next node
     * reads them: products of dims over 2^40 elements could overflow 64 bits. */
    int64_t count = 1;
    for (int i = 0; i < out->ndim; ++i) {
        if (out->dims[i] <= 0 || out->dims[i] > (INT64_C(1) << 40) / count) {
            char got[200];
            return fail(e, "%s: output '%s' (tensor '%s', uid %lld) would be %s: more than "
                           "2^40 elements", label, port, out->name, (long long)out->uid,
                        shape_str(out, got, sizeof(got)));
        }
        count *= out->dims[i];
    }
    if (out->strides[0] == 0) layout_like(out, layout);
    if (out->data_type == HIPDNN_DATA_NOT_SET) out->data_type = dtype;
    return true;
}

/* An input must be fully known by the time its consumer is reached. */
static bool need_input(err_t* e, const char* label, const char* port, hipdnnSdkTensor* t) {
    if (t->ndim == 0)
        return fail(e, "%s: input '%s' (tensor '%s', uid %lld) has no "
                          "dims", label, port, t->name, (long long)t->uid);
    if (t->data_type == HIPDNN_DATA_NOT_SET)
        return fail(e, "%s: input '%s' (tensor '%s', uid %lld) has no "
                          "data type", label, port, t->name, (long long)t->uid);
    if (t->strides[0] == 0) hipdnnSdkPackedStrides(t->ndim, t->dims, t->strides);
    return true;
}

/* NumPy broadcasting of the dims of a and b (right-aligned). */
bool broadcast(const hipdnnSdkTensor* a, const hipdnnSdkTensor* b, int32_t skip_tail,
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

/* Checks a per-channel or per-feature tensor against the shape it must have. */
bool check_shape(err_t* e, const char* label, const char* port, const hipdnnSdkTensor* t,
                 int32_t ndim, const int64_t* dims, const char* why) {
    bool ok = t->ndim == ndim;
    for (int i = 0; ok && i < ndim; ++i) ok = t->dims[i] == dims[i];
    if (ok) return true;
    char a[200], b[200];
    hipdnnSdkTensor tmp = *t;
    tmp.ndim = ndim;
    memcpy(tmp.dims, dims, (size_t)ndim * sizeof(int64_t));
    return fail(e, "%s: %s '%s' is %s but %s needs %s", label, port, t->name,
                shape_str(t, a, sizeof(a)), why, shape_str(&tmp, b, sizeof(b)));
}

bool check_one_value(err_t* e, const char* label, const char* port, const hipdnnSdkTensor* t) {
    int64_t count = 1;
    for (int i = 0; i < t->ndim; ++i) count *= t->dims[i];
    if (count == 1) return true;
    char a[200];
    return fail(e, "%s: %s '%s' is %s; it must hold one value", label, port, t->name,
                shape_str(t, a, sizeof(a)));
}

/* By op kind, as the op table orders them. */
static const infer_fn k_rules[] = {NULL,           infer_conv,      infer_matmul,
                                   infer_pointwise, infer_batchnorm, infer_reduction,
                                   infer_norm,      infer_conv_grad, infer_conv_grad,
                                   infer_slice,     infer_concat,    infer_norm_backward,
                                   infer_genstats,  infer_resample,  infer_resample_backward,
                                   infer_reshape,   infer_sdpa_fwd,  infer_sdpa_bwd};

bool hipdnnSdkInferNode(hipdnnSdkGraph* g, const hipdnnSdkUidMap* map, hipdnnSdkNode* n,
                        char* err, size_t err_len) {
    err_t e = {err, err_len, map};
    char label[160];
    const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(n->kind);
    hipdnnSdkNodeLabel(n, label, sizeof(label));
    if (!info || (size_t)n->kind >= sizeof(k_rules) / sizeof(k_rules[0]) || !k_rules[n->kind])
        return fail(&e, "%s: unknown op kind %d", label, (int)n->kind);
    for (int p = 0; p < info->num_inputs; ++p) {
        hipdnnSdkTensor* t = tensor_of(&e, g, n->inputs[p]);
        /* Which data types run is each engine's call (see check_support()). */
        if (t && !need_input(&e, label, info->inputs[p].name, t)) return false;
    }
    return k_rules[n->kind](&e, n, g, label);
}
