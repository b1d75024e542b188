/* slice, concatenate and reshape rewritten as identity copies through views (lower.h): a
 * view is a tensor of the rewritten graph with its own uid that names another tensor's
 * memory at an offset (an alias, resolved at enqueue); a virtual tensor a view reads or
 * writes is kept in the workspace, packed, like any tensor between stages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"

/* The strides a tensor is read with after lw_keep_in_workspace would have run on it. */
static void strides_after_keep(const hipdnnSdkTensor* t, int64_t* st) {
    memcpy(st, t->strides, sizeof(int64_t) * (size_t)t->ndim);
    if (t->is_virtual && !lw_dense(t->ndim, t->dims, t->strides))
        hipdnnSdkPackedStrides(t->ndim, t->dims, st);
}

static bool lower_slice(lowering* l, const hipdnnSdkNode* n) {
    const char* nm = n->name;
    const hipdnnSdkTensor *tx = lw_tensor(l, n->inputs[0]), *ty = lw_tensor(l, n->outputs[0]);
    const hipdnnSdkAttrValue* a = n->attrs;
    if (!tx || !ty || tx->ndim != ty->ndim || a[HIPDNN_SLICE_LIMIT].count != tx->ndim)
        return decline(l->why, l->len, "node '%s' (slice): x, y or limit do not match", nm);
    int64_t st[HIPDNN_MAX_DIMS], xs[HIPDNN_MAX_DIMS], offset = 0, dims[HIPDNN_MAX_DIMS];
    strides_after_keep(tx, xs);
    const int32_t nd = tx->ndim;
    for (int32_t i = 0; i < nd; ++i) {
        int64_t start = a[HIPDNN_SLICE_START].count ? a[HIPDNN_SLICE_START].i[i] : 0;
        int64_t step = a[HIPDNN_SLICE_STEP].count ? a[HIPDNN_SLICE_STEP].i[i] : 1;
        int64_t limit = a[HIPDNN_SLICE_LIMIT].i[i];
        if (start < 0 || step < 1 || start >= limit || limit > tx->dims[i] ||
            ty->dims[i] != (limit - start + step - 1) / step)
            return decline(l->why, l->len, "node '%s' (slice): dim %d: start %lld, limit %lld, "
                           "step %lld do not give y's %lld of x's %lld", nm, (int)i,
                           (long long)start, (long long)limit, (long long)step,
                           (long long)ty->dims[i], (long long)tx->dims[i]);
        offset += start * xs[i];
        st[i] = xs[i] * step;
        dims[i] = ty->dims[i];
    }
    const int64_t y = ty->uid;
    int64_t v = lw_view(l, nm, "window", tx->uid, nd, dims, st, offset);
    return lw_pw(l, nm, "copy", HIPDNN_POINTWISE_IDENTITY, v, HIPDNN_NO_TENSOR, y, y) !=
           HIPDNN_NO_TENSOR;
}

static bool lower_concatenate(lowering* l, const hipdnnSdkNode* n) {
    const char* nm = n->name;
    const hipdnnSdkTensor* ty = lw_tensor(l, n->outputs[0]);
    const int64_t axis = n->attrs[HIPDNN_CONCAT_AXIS].i[0];
    if (!ty || axis < 0 || axis >= ty->ndim)
        return decline(l->why, l->len, "node '%s' (concatenate): y missing or axis %lld outside "
                       "its rank", nm, (long long)axis);
    const int64_t y = ty->uid;
    int64_t ys[HIPDNN_MAX_DIMS], at = 0, total = 0;
    strides_after_keep(ty, ys);
    const int32_t nd = ty->ndim;
    for (int k = 0; k < HIPDNN_MAX_PORTS; ++k) {
        if (n->inputs[k] == HIPDNN_NO_TENSOR) continue;
        const hipdnnSdkTensor* tx = lw_tensor(l, n->inputs[k]);
        bool ok = tx && tx->ndim == nd;
        for (int32_t i = 0; ok && i < nd; ++i) ok = i == axis || tx->dims[i] == ty->dims[i];
        if (!ok)
            return decline(l->why, l->len, "node '%s' (concatenate): x%d's dims do not match "
                           "y's off axis %lld", nm, k, (long long)axis);
        total += tx->dims[axis];
    }
    if (total != ty->dims[axis])
        return decline(l->why, l->len, "node '%s' (concatenate): the inputs give %lld along axis "
                       "%lld but y has %lld", nm, (long long)total, (long long)axis,
                       (long long)ty->dims[axis]);
    for (int k = 0; k < HIPDNN_MAX_PORTS; ++k) {
        if (n->inputs[k] == HIPDNN_NO_TENSOR) continue;
        const int64_t x = n->inputs[k];
        int64_t dims[HIPDNN_MAX_DIMS];
        memcpy(dims, lw_tensor(l, y)->dims, sizeof(dims));
        dims[axis] = lw_tensor(l, x)->dims[axis];
        char what[32];
        hipdnnSdkFormat(what, sizeof(what), "part%d", k);
        int64_t v = lw_view(l, nm, what, y, nd, dims, ys, at * ys[axis]);
        hipdnnSdkFormat(what, sizeof(what), "copy%d", k);
        if (lw_pw(l, nm, what, HIPDNN_POINTWISE_IDENTITY, x, HIPDNN_NO_TENSOR, v, v) == HIPDNN_NO_TENSOR)
            return false;
        at += dims[axis];
    }
    return true;
}

static bool lower_reshape(lowering* l, const hipdnnSdkNode* n) {
    const char* nm = n->name;
    const hipdnnSdkTensor *tx = lw_tensor(l, n->inputs[HIPDNN_RESHAPE_X]),
                          *ty = lw_tensor(l, n->outputs[HIPDNN_RESHAPE_Y]);
    if (!tx || !ty || hipdnnSdkElementCount(tx->ndim, tx->dims) != hipdnnSdkElementCount(ty->ndim, ty->dims))
        return decline(l->why, l->len, "node '%s' (reshape): x and y missing or of different "
                       "element counts", nm);
    const int64_t mode = n->attrs[HIPDNN_RESHAPE_MODE_SLOT].i[0];
    int64_t x = tx->uid, xs[HIPDNN_MAX_DIMS], ys[HIPDNN_MAX_DIMS], packed[HIPDNN_MAX_DIMS];
    const int64_t y = ty->uid;
    int32_t ynd = ty->ndim;
    int64_t ydims[HIPDNN_MAX_DIMS];
    memcpy(ydims, ty->dims, sizeof(ydims));
    strides_after_keep(tx, xs);
    if (mode == HIPDNN_RESHAPE_VIEW_ONLY) {
        /* y's strides describe x's memory, where both are dense (the reference's rule) */
        if (!lw_dense(tx->ndim, tx->dims, xs) ||
            !lw_dense(ty->ndim, ty->dims, ty->strides))
            return decline(l->why, l->len, "node '%s' (reshape view_only): x '%s' or y '%s' is "
                           "not dense (packed in some dim order)", nm, tx->name, ty->name);
        memcpy(ys, ty->strides, sizeof(ys));
    } else {
        /* y = x in row-major order: a packed x is read as y's dims; any other is first
           copied packed */
        hipdnnSdkPackedStrides(tx->ndim, tx->dims, packed);
        bool is_packed = true;
        for (int32_t i = 0; i < tx->ndim; ++i) is_packed = is_packed && (tx->dims[i] == 1 || xs[i] == packed[i]);
        if (!is_packed) {
            int64_t dims[HIPDNN_MAX_DIMS];
            memcpy(dims, tx->dims, sizeof(dims));
            int64_t t = lw_add_tensor(l, nm, "packed", tx->data_type, tx->ndim, dims, NULL, true);
            x = lw_pw(l, nm, "pack", HIPDNN_POINTWISE_IDENTITY, x, HIPDNN_NO_TENSOR, t, t);
        }
        hipdnnSdkPackedStrides(ynd, ydims, ys);
    }
    int64_t v = lw_view(l, nm, "as_y", x, ynd, ydims, ys, 0);
    return lw_pw(l, nm, "copy", HIPDNN_POINTWISE_IDENTITY, v, HIPDNN_NO_TENSOR, y, y) != HIPDNN_NO_TENSOR;
}

const lowered_op lower_movement_ops[] = {
    {HIPDNN_OP_SLICE, NULL, lower_slice},
    {HIPDNN_OP_CONCATENATE, NULL, lower_concatenate},
    {HIPDNN_OP_RESHAPE, NULL, lower_reshape},
    {0},
};
