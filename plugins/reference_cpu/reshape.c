/* reshape: y, x's elements under other dims, copied bit for bit (any storage type).
 *
 * LOGICAL: element i of y in row-major logical order is element i of x in row-major
 * logical order, as NumPy's reshape, for any strides of x and y.  VIEW_ONLY: y's dims and
 * strides describe x's memory, so y's buffer gets x's bytes at y's offsets; the engine
 * runs it when x and y are each packed in some dim order (then it is one copy of the
 * buffer), which covers views that merge or split dims and transposes (permuted dims and
 * strides). */
#include <string.h>

#include "reference_cpu.h"

/* Whether t's elements fill [0, count) exactly: packed in some order of its dims. */
static bool dense(const ref_view* t) {
    int32_t order[HIPDNN_MAX_DIMS], n = 0;
    for (int32_t i = 0; i < t->ndim; ++i)
        if (t->dims[i] > 1) order[n++] = i;
    for (int32_t i = 1; i < n; ++i) /* insertion sort, ascending stride */
        for (int32_t k = i; k > 0 && t->strides[order[k]] < t->strides[order[k - 1]]; --k) {
            int32_t tmp = order[k];
            order[k] = order[k - 1];
            order[k - 1] = tmp;
        }
    int64_t want = 1;
    for (int32_t i = 0; i < n; ++i) {
        if (t->strides[order[i]] != want) return false;
        want *= t->dims[order[i]];
    }
    return true;
}

bool ref_reshape_check(const hipdnnSdkNode* node, const ref_view* x, const ref_view* y,
                       char* why, size_t len) {
    int64_t nx = ref_element_count(x->ndim, x->dims), ny = ref_element_count(y->ndim, y->dims);
    if (nx != ny) {
        hipdnnSdkFormat(why, len, "x has %lld elements but y %lld", (long long)nx, (long long)ny);
        return false;
    }
    if (x->dtype != y->dtype) {
        hipdnnSdkFormat(why, len, "x is %s but y is %s; reshape moves elements, it does not "
                        "convert them", hipdnnSdkDataTypeName(x->dtype),
                        hipdnnSdkDataTypeName(y->dtype));
        return false;
    }
    int64_t mode = node->attrs[HIPDNN_RESHAPE_MODE_SLOT].i[0];
    if (mode != HIPDNN_RESHAPE_VIEW_ONLY && mode != HIPDNN_RESHAPE_LOGICAL) {
        hipdnnSdkFormat(why, len, "reshape mode %lld not supported", (long long)mode);
        return false;
    }
    if (mode == HIPDNN_RESHAPE_VIEW_ONLY && (!dense(x) || !dense(y))) {
        hipdnnSdkFormat(why, len, "a VIEW_ONLY reshape reads y's strides as a view of x's "
                        "memory, so x and y must each be packed in some dim order; %s is not "
                        "(reshape_mode LOGICAL copies in row-major order instead)",
                        dense(x) ? "y" : "x");
        return false;
    }
    return true;
}

/* Row-major walk of a view: the element offset of each index in turn. */
typedef struct {
    const ref_view* v;
    int64_t idx[HIPDNN_MAX_DIMS];
    int64_t off;
} walk;

static void walk_next(walk* w) {
    const ref_view* v = w->v;
    for (int32_t d = v->ndim - 1; d >= 0; --d) {
        w->off += v->strides[d];
        if (++w->idx[d] < v->dims[d]) return;
        w->off -= v->strides[d] * v->dims[d];
        w->idx[d] = 0;
    }
}

hipdnnPluginStatus_t ref_reshape(const hipdnnSdkNode* node, const ref_view* x, const ref_view* y) {
    char why[REF_MSG_LEN];
    if (!ref_reshape_check(node, x, y, why, sizeof(why))) {
        ref_set_error(REF_ENGINE_NAME ": node '%s' (reshape): %s", node->name, why);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    size_t esize = hipdnnSdkDataTypeSize(x->dtype);
    int64_t n = ref_element_count(x->ndim, x->dims);
    if (node->attrs[HIPDNN_RESHAPE_MODE_SLOT].i[0] == HIPDNN_RESHAPE_VIEW_ONLY) {
        memcpy(y->data, x->data, (size_t)n * esize); /* both fill [0, n) */
        return HIPDNN_PLUGIN_STATUS_SUCCESS;
    }
    walk src = {x, {0}, 0}, dst = {y, {0}, 0};
    const uint8_t* from = x->data;
    uint8_t* to = y->data;
    for (int64_t i = 0; i < n; ++i) {
        memcpy(to + dst.off * (int64_t)esize, from + src.off * (int64_t)esize, esize);
        walk_next(&src);
        walk_next(&dst);
    }
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}
