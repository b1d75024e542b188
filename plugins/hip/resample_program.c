/* A resample_fwd or resample_bwd node compiled into its stage (rs_program.h): the pooling
 * geometry, checked as the reference engine checks it, and each tensor's strides over
 * [N, C, spatial...]. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "staged.h"

static const hipdnnSdkTensor* find(const hipdnnSdkGraph* g, int64_t uid) {
    return uid == HIPDNN_NO_TENSOR ? NULL : hipdnnSdkGraphFindTensor(g, uid);
}

/* A floating-point operand of rank 2 + nsp: its storage type and strides into t. */
static bool operand(const hipdnnSdkTensor* t, int32_t rank, bool output, const char* label,
                    const char* port, pw_tensor* dst, char* why, size_t len) {
    int dt = t->data_type == HIPDNN_DATA_FLOAT      ? PW_F32
             : t->data_type == HIPDNN_DATA_HALF     ? PW_F16
             : t->data_type == HIPDNN_DATA_BFLOAT16 ? PW_BF16
                                                    : -1;
    if (dt < 0)
        return decline(why, len, "%s: %s '%s' (uid %lld): data type %s not supported (float32, "
                       "float16, bfloat16)", label, port, t->name, (long long)t->uid,
                       hipdnnSdkDataTypeName(t->data_type));
    if (t->ndim != rank || t->is_by_value)
        return decline(why, len, "%s: %s '%s' (uid %lld) has rank %d; it needs %d in device "
                       "memory", label, port, t->name, (long long)t->uid, t->ndim, rank);
    for (int32_t k = 0; k < rank; ++k)
        if (t->dims[k] < 1 || t->strides[k] < 0)
            return decline(why, len, "%s: %s '%s' (uid %lld): dims below 1 or negative strides",
                           label, port, t->name, (long long)t->uid);
    if (output && hipdnnSdkStridesOverlap(t->ndim, t->dims, t->strides))
        return decline(why, len, "%s: output %s '%s' (uid %lld): its strides make elements "
                       "overlap", label, port, t->name, (long long)t->uid);
    memset(dst, 0, sizeof(*dst));
    dst->dtype = dt;
    memcpy(dst->strides, t->strides, (size_t)rank * sizeof(int64_t));
    return true;
}

static void bind(hipe_stage* st, int64_t uid, size_t offset) {
    hipe_bind* b = &st->bind[st->nbind++];
    b->uid = uid;
    b->offset = (uint32_t)offset;
    b->scalar_dtype = -1;
}

/* The pooling mode and padding mode into p; 0 with the reason. */
static int pooling_mode(rs_program* p, int64_t mode, int64_t pad, const char* label, char* why,
                        size_t len) {
    if (mode == HIPDNN_RESAMPLE_MAXPOOL) p->kind = RS_MAX;
    else if (mode == HIPDNN_RESAMPLE_AVGPOOL_INCLUDE_PADDING) p->kind = RS_AVG_INCLUDE;
    else if (mode == HIPDNN_RESAMPLE_AVGPOOL_EXCLUDE_PADDING) p->kind = RS_AVG_EXCLUDE;
    else return decline(why, len, "%s: resample mode %lld not supported (max and average pooling)",
                        label, (long long)mode);
    if (pad == HIPDNN_EDGE_VAL_PAD || (pad == HIPDNN_NEG_INF_PAD && p->kind == RS_AVG_INCLUDE))
        return decline(why, len, "%s: padding mode %lld does not go with this pooling mode",
                       label, (long long)pad);
    p->zero_pad = pad == HIPDNN_ZERO_PAD;
    return 1;
}

/* Each spatial dim's sizes, window, stride and padding into p (nsp set), and the elements
 * to compute; 0 with the reason. */
static int window_geometry(rs_program* p, const hipdnnSdkAttrValue* a, const hipdnnSdkTensor* image,
                           const hipdnnSdkTensor* pooled, bool bwd, const char* label, char* why,
                           size_t len) {
    const int32_t nsp = p->nsp;
    p->taps = 1;
    int64_t in_size = 1, out_size = 1;
    for (int32_t i = 0; i < nsp; ++i) {
        const int64_t w = a[HIPDNN_RS_WINDOW].i[i], s = a[HIPDNN_RS_STRIDE].i[i];
        const int64_t pre = a[HIPDNN_RS_PRE_PADDING].i[i], post = a[HIPDNN_RS_POST_PADDING].i[i];
        if (a[HIPDNN_RS_WINDOW].count != nsp || w < 1 || s < 1 || pre < 0 || post < 0 ||
            pre >= w || post >= w || w > (INT64_C(1) << 20) || s > (INT64_C(1) << 20))
            return decline(why, len, "%s: spatial dim %d: window %lld, stride %lld, padding "
                           "%lld/%lld not supported", label, (int)i, (long long)w, (long long)s,
                           (long long)pre, (long long)post);
        p->in[i] = image->dims[2 + i];
        p->out[i] = pooled->dims[2 + i];
        p->win[i] = w;
        p->stride[i] = s;
        p->pre[i] = pre;
        p->post[i] = post;
        p->taps *= w;
        in_size *= p->in[i];
        out_size *= p->out[i];
        if (p->taps > (INT64_C(1) << 40) || in_size > (INT64_C(1) << 48) || out_size > (INT64_C(1) << 48))
            return decline(why, len, "%s: over 2^40 window positions or 2^48 elements a plane", label);
    }
    p->total = p->n * p->c * (bwd ? in_size : out_size);
    if (p->total >= (INT64_C(1) << 31))
        return decline(why, len, "%s: %lld elements to compute (2^31 or more)", label,
                       (long long)p->total);
    return 1;
}

/* Max pooling's index (written forward, read backward): its bytes and strides into p; 0
 * with the reason. */
static int index_operand(rs_program* p, const hipdnnSdkTensor* idx, int32_t rank, bool bwd,
                         const char* label, char* why, size_t len) {
    if (p->kind != RS_MAX) return decline(why, len, "%s: an index is only for max pooling", label);
    p->idx_bytes = idx->data_type == HIPDNN_DATA_INT8    ? 1
                   : idx->data_type == HIPDNN_DATA_INT32 ? 4
                   : idx->data_type == HIPDNN_DATA_INT64 ? 8
                                                         : 0;
    if (!p->idx_bytes || idx->ndim != rank || idx->is_by_value)
        return decline(why, len, "%s: index '%s' must be INT8, INT32 or INT64 of rank %d",
                       label, idx->name, rank);
    if (!bwd && hipdnnSdkStridesOverlap(idx->ndim, idx->dims, idx->strides))
        return decline(why, len, "%s: output index '%s': its strides make elements overlap",
                       label, idx->name);
    memcpy(p->idx.strides, idx->strides, (size_t)rank * sizeof(int64_t));
    return 1;
}

#define PTR(field) offsetof(rs_program, field.ptr)

static void bind_pooling(hipe_stage* st, const hipdnnSdkTensor* image, const hipdnnSdkTensor* pooled,
                         const hipdnnSdkTensor* idx, const hipdnnSdkTensor* x, bool bwd) {
    if (bwd) {
        bind(st, pooled->uid, PTR(grad_pooled));
        bind(st, image->uid, PTR(grad_image));
        if (idx) bind(st, idx->uid, PTR(idx));
        else if (st->rs.kind == RS_MAX) bind(st, x->uid, PTR(image));
    } else {
        bind(st, image->uid, PTR(image));
        bind(st, pooled->uid, PTR(pooled));
        if (idx) bind(st, idx->uid, PTR(idx));
    }
}

#undef PTR

int hipe_rs_compile(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, hipe_stage* st, char* why,
                    size_t len) {
    const bool bwd = n->kind == HIPDNN_OP_RESAMPLE_BWD;
    char label[200];
    hipdnnSdkFormat(label, sizeof(label), "node '%s' (%s)", n->name, bwd ? "resample_bwd" : "resample_fwd");
    const hipdnnSdkAttrValue* a = n->attrs;
    memset(st, 0, sizeof(*st));
    st->kind = HIPE_STAGE_RESAMPLE;
    rs_program* p = &st->rs;
    p->backward = bwd;
    if (!pooling_mode(p, a[HIPDNN_RS_MODE].i[0], a[HIPDNN_RS_PADDING_MODE].i[0], label, why, len))
        return 0;
    const hipdnnSdkTensor *image, *pooled, *idx;
    if (bwd) {
        image = find(g, n->outputs[HIPDNN_RSB_DX]);
        pooled = find(g, n->inputs[HIPDNN_RSB_DY]);
        idx = find(g, n->inputs[HIPDNN_RSB_IDX]);
    } else {
        image = find(g, n->inputs[HIPDNN_RSF_X]);
        pooled = find(g, n->outputs[HIPDNN_RSF_Y]);
        idx = find(g, n->outputs[HIPDNN_RSF_IDX]);
    }
    const hipdnnSdkTensor* x = bwd ? find(g, n->inputs[HIPDNN_RSB_X]) : NULL;
    if (!image || !pooled)
        return decline(why, len, "%s: %s missing", label, bwd ? "dy or dx" : "x or y");
    const int32_t rank = image->ndim, nsp = rank - 2;
    if (nsp < 1 || nsp > RS_MAX_SP || pooled->ndim != rank)
        return decline(why, len, "%s: %d spatial dims; this engine pools 1 to %d", label, nsp,
                       RS_MAX_SP);
    p->nsp = nsp;
    p->n = image->dims[0];
    p->c = image->dims[1];
    if (pooled->dims[0] != p->n || pooled->dims[1] != p->c)
        return decline(why, len, "%s: N and C of the image and the pooled tensor differ", label);
    if (!window_geometry(p, a, image, pooled, bwd, label, why, len) ||
        !operand(image, rank, bwd, label, bwd ? "dx" : "x", bwd ? &p->grad_image : &p->image, why, len) ||
        !operand(pooled, rank, !bwd, label, bwd ? "dy" : "y", bwd ? &p->grad_pooled : &p->pooled, why, len) ||
        (idx && !index_operand(p, idx, rank, bwd, label, why, len)))
        return 0;
    if (bwd && p->kind == RS_MAX && !idx) {
        if (!x) return decline(why, len, "%s: max pooling's backward needs idx or x", label);
        if (!operand(x, rank, false, label, "x", &p->image, why, len)) return 0;
        for (int32_t k = 0; k < rank; ++k)
            if (x->dims[k] != image->dims[k])
                return decline(why, len, "%s: x and dx dims differ", label);
    }
    bind_pooling(st, image, pooled, idx, x, bwd);
    static const char* const kinds[3] = {"max", "average (padding included)", "average (padding excluded)"};
    hipdnnSdkFormat(st->what, sizeof(st->what), "%s pooling %s '%s': %lld elements, %lld-position "
                    "window", kinds[p->kind], bwd ? "backward" : "forward", n->name,
                    (long long)p->total, (long long)p->taps);
    return 1;
}
