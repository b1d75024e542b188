/* slice and concatenate: copies through views.  A slice reads x through a view whose
 * origin is `start` and whose strides are x's times `step`; concatenate writes each input
 * into the view of y that starts at its offset along the axis.  Values pass through
 * float64 unchanged (every storage type converts to it exactly), so y holds x's bits. */
#include "reference_cpu.h"

bool ref_slice_check(const hipdnnSdkNode* node, const ref_view* x, const ref_view* y,
                     char* why, size_t len) {
    const hipdnnSdkAttrValue* a = node->attrs;
    if (a[HIPDNN_SLICE_LIMIT].count != x->ndim || y->ndim != x->ndim) {
        hipdnnSdkFormat(why, len, "limit has %d values, x rank %d, y rank %d",
                        (int)a[HIPDNN_SLICE_LIMIT].count, x->ndim, y->ndim);
        return false;
    }
    for (int32_t i = 0; i < x->ndim; ++i) {
        int64_t start = a[HIPDNN_SLICE_START].count ? a[HIPDNN_SLICE_START].i[i] : 0;
        int64_t step = a[HIPDNN_SLICE_STEP].count ? a[HIPDNN_SLICE_STEP].i[i] : 1;
        int64_t limit = a[HIPDNN_SLICE_LIMIT].i[i];
        if (start < 0 || step < 1 || start >= limit || limit > x->dims[i] ||
            y->dims[i] != (limit - start + step - 1) / step) {
            hipdnnSdkFormat(why, len, "dim %d: start %lld, limit %lld, step %lld do not give "
                            "y's %lld of x's %lld", (int)i, (long long)start, (long long)limit,
                            (long long)step, (long long)y->dims[i], (long long)x->dims[i]);
            return false;
        }
    }
    return true;
}

hipdnnPluginStatus_t ref_slice(const hipdnnSdkNode* node, const ref_view* x, const ref_view* y) {
    char why[REF_MSG_LEN];
    if (!ref_slice_check(node, x, y, why, sizeof(why))) {
        ref_set_error(REF_ENGINE_NAME ": node '%s' (slice): %s", node->name, why);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    ref_view src = *x;
    int64_t offset = 0;
    for (int32_t i = 0; i < x->ndim; ++i) {
        const hipdnnSdkAttrValue* a = node->attrs;
        int64_t start = a[HIPDNN_SLICE_START].count ? a[HIPDNN_SLICE_START].i[i] : 0;
        int64_t step = a[HIPDNN_SLICE_STEP].count ? a[HIPDNN_SLICE_STEP].i[i] : 1;
        offset += start * x->strides[i];
        src.strides[i] = x->strides[i] * step;
        src.dims[i] = y->dims[i];
    }
    src.data = (uint8_t*)x->data + offset * (int64_t)hipdnnSdkDataTypeSize(x->dtype);
    ref_copy_view(y, &src);
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

bool ref_concat_check(const hipdnnSdkNode* node, const ref_view* in, int nin, const ref_view* y,
                      char* why, size_t len) {
    int64_t axis = node->attrs[HIPDNN_CONCAT_AXIS].i[0], total = 0;
    if (axis < 0 || axis >= y->ndim) {
        hipdnnSdkFormat(why, len, "axis %lld outside y's rank %d", (long long)axis, y->ndim);
        return false;
    }
    for (int k = 0; k < nin; ++k) {
        bool ok = in[k].ndim == y->ndim;
        for (int32_t i = 0; ok && i < y->ndim; ++i) ok = i == axis || in[k].dims[i] == y->dims[i];
        if (!ok) {
            hipdnnSdkFormat(why, len, "x%d's dims do not match y's off axis %lld", k,
                            (long long)axis);
            return false;
        }
        total += in[k].dims[axis];
    }
    if (total != y->dims[axis]) {
        hipdnnSdkFormat(why, len, "the inputs give %lld along axis %lld but y has %lld",
                        (long long)total, (long long)axis, (long long)y->dims[axis]);
        return false;
    }
    return true;
}

hipdnnPluginStatus_t ref_concat(const hipdnnSdkNode* node, const ref_view* in, int nin,
                                const ref_view* y) {
    char why[REF_MSG_LEN];
    if (!ref_concat_check(node, in, nin, y, why, sizeof(why))) {
        ref_set_error(REF_ENGINE_NAME ": node '%s' (concatenate): %s", node->name, why);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    int64_t axis = node->attrs[HIPDNN_CONCAT_AXIS].i[0], at = 0;
    size_t esize = hipdnnSdkDataTypeSize(y->dtype);
    for (int k = 0; k < nin; ++k) {
        ref_view dst = *y;
        dst.dims[axis] = in[k].dims[axis];
        dst.data = (uint8_t*)y->data + at * y->strides[axis] * (int64_t)esize;
        ref_copy_view(&dst, &in[k]);
        at += in[k].dims[axis];
    }
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}
