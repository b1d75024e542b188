/* Inference rules of the ops that move data: slice, concat, resample (pooling) forward
 * and backward, reshape. */
#include <string.h>

#include "hipdnn/hipdnn_sdk.h"
#include "infer_internal.h"

/* y = x[start : limit : step] per dim; the lists have one value per dim of x. */
bool infer_slice(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label) {
    hipdnnSdkTensor* x = tensor_of(e, g, n->inputs[0]);
    hipdnnSdkTensor* y = tensor_of(e, g, n->outputs[0]);
    hipdnnSdkAttrValue* start = &n->attrs[HIPDNN_SLICE_START];
    hipdnnSdkAttrValue* limit = &n->attrs[HIPDNN_SLICE_LIMIT];
    hipdnnSdkAttrValue* step = &n->attrs[HIPDNN_SLICE_STEP];
    char a[200];
    if (limit->count != x->ndim)
        return fail(e, "%s: limit has %d values but x '%s' is %s; give one per dim", label,
                    (int)limit->count, x->name, shape_str(x, a, sizeof(a)));
    for (int32_t i = 0; i < x->ndim; ++i) {
        if (start->count == 0) start->i[i] = 0;
        if (step->count == 0) step->i[i] = 1;
    }
    start->count = step->count = x->ndim;
    int64_t dims[HIPDNN_MAX_DIMS];
    for (int32_t i = 0; i < x->ndim; ++i) {
        if (start->i[i] >= limit->i[i] || limit->i[i] > x->dims[i])
            return fail(e, "%s: dim %d: start %lld, limit %lld; need start < limit <= %lld "
                        "(x '%s' is %s)", label, (int)i, (long long)start->i[i],
                        (long long)limit->i[i], (long long)x->dims[i], x->name,
                        shape_str(x, a, sizeof(a)));
        dims[i] = (limit->i[i] - start->i[i] + step->i[i] - 1) / step->i[i];
    }
    if (n->compute_type == HIPDNN_DATA_NOT_SET) n->compute_type = HIPDNN_DATA_FLOAT;
    return set_output(e, label, "y", y, x->ndim, dims, x, x->data_type);
}

/* y = the set inputs (x0, x1, then any of x2.. in order) joined along axis. */
bool infer_concat(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label) {
    hipdnnSdkTensor* y = tensor_of(e, g, n->outputs[0]);
    hipdnnSdkTensor* first = tensor_of(e, g, n->inputs[0]);
    int64_t axis = n->attrs[HIPDNN_CONCAT_AXIS].i[0];
    char a[200], b[200];
    if (axis >= first->ndim)
        return fail(e, "%s: axis %lld but x0 '%s' is %s", label, (long long)axis, first->name,
                    shape_str(first, a, sizeof(a)));
    int64_t dims[HIPDNN_MAX_DIMS];
    memcpy(dims, first->dims, sizeof(dims));
    dims[axis] = 0;
    bool gap = false;
    for (int p = 0; p < HIPDNN_MAX_PORTS; ++p) {
        hipdnnSdkTensor* t = tensor_of(e, g, n->inputs[p]);
        if (!t) {
            gap = true;
            continue;
        }
        if (gap)
            return fail(e, "%s: input x%d is set after an unset one; set the inputs in order",
                        label, p);
        bool ok = t->ndim == first->ndim;
        for (int i = 0; ok && i < t->ndim; ++i) ok = i == axis || t->dims[i] == first->dims[i];
        if (!ok)
            return fail(e, "%s: x%d '%s' is %s but x0 '%s' is %s; all dims but axis %lld must "
                        "match", label, p, t->name, shape_str(t, a, sizeof(a)), first->name,
                        shape_str(first, b, sizeof(b)), (long long)axis);
        if (t->data_type != first->data_type)
            return fail(e, "%s: x%d '%s' is %s but x0 '%s' is %s; the inputs share one data "
                        "type", label, p, t->name, hipdnnSdkDataTypeName(t->data_type),
                        first->name, hipdnnSdkDataTypeName(first->data_type));
        dims[axis] += t->dims[axis];
    }
    if (n->compute_type == HIPDNN_DATA_NOT_SET) n->compute_type = HIPDNN_DATA_FLOAT;
    return set_output(e, label, "y", y, first->ndim, dims, first, first->data_type);
}

/* ---- resample (pooling) and reshape ----------------------------------------------- */

/* Fills the unset spatial lists of a resample node with their defaults (stride 1,
 * paddings 0) and checks mode, padding mode, window and the lists' lengths for a rank
 * `ndim` image. */
static bool resample_params(err_t* e, hipdnnSdkNode* n, int32_t ndim, const char* label) {
    if (n->attrs[HIPDNN_RS_MODE].count == 0) return fail(e, "%s: resample mode is not set", label);
    if (n->attrs[HIPDNN_RS_PADDING_MODE].count == 0)
        return fail(e, "%s: padding mode is not set", label);
    int ns = ndim - 2;
    hipdnnSdkAttrValue* window = &n->attrs[HIPDNN_RS_WINDOW];
    if (window->count != ns)
        return fail(e, "%s: window has %d values for %d spatial dims (image rank %d)", label,
                    (int)window->count, ns, (int)ndim);
    static const int lists[] = {HIPDNN_RS_STRIDE, HIPDNN_RS_PRE_PADDING, HIPDNN_RS_POST_PADDING};
    const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(n->kind);
    for (int k = 0; k < 3; ++k) {
        hipdnnSdkAttrValue* v = &n->attrs[lists[k]];
        if (v->count == 0) {
            for (int i = 0; i < ns; ++i) v->i[i] = (int64_t)info->attrs[lists[k]].default_value;
            v->count = ns;
        } else if (v->count != ns) {
            return fail(e, "%s: %s has %d values for %d spatial dims (image rank %d)", label,
                        info->attrs[lists[k]].name, (int)v->count, ns, (int)ndim);
        }
    }
    return true;
}

/* The output size of one spatial dim: rounded down, and rounded up (ceil mode: only
 * while the last window still starts inside x or its pre padding, as PyTorch's);
 * false if the padded size is smaller than the window.  Values are at most 2^40. */
static bool resample_out(int64_t in, int64_t window, int64_t stride, int64_t pre, int64_t post,
                         int64_t* floor_out, int64_t* ceil_out) {
    int64_t span = in + pre + post - window;
    if (span < 0) return false;
    *floor_out = span / stride + 1;
    *ceil_out = (span + stride - 1) / stride + 1;
    if ((*ceil_out - 1) * stride >= in + pre) *ceil_out = *floor_out;
    return true;
}

/* The forward's output dims for image `x` (rank checked by the caller) into dims; with
 * `given` (rank x's), each spatial dim of it must be the rounded-down or the rounded-up
 * size, and is taken. */
static bool resample_dims(err_t* e, const hipdnnSdkNode* n, const hipdnnSdkTensor* x,
                          const hipdnnSdkTensor* given, const char* what, const char* label,
                          int64_t* dims) {
    char a[200], b[200], c[200];
    const int64_t* window = n->attrs[HIPDNN_RS_WINDOW].i;
    const int64_t* stride = n->attrs[HIPDNN_RS_STRIDE].i;
    const int64_t* pre = n->attrs[HIPDNN_RS_PRE_PADDING].i;
    const int64_t* post = n->attrs[HIPDNN_RS_POST_PADDING].i;
    dims[0] = x->dims[0];
    dims[1] = x->dims[1];
    for (int i = 0; i < x->ndim - 2; ++i) {
        int64_t lo, hi;
        if (!resample_out(x->dims[2 + i], window[i], stride[i], pre[i], post[i], &lo, &hi))
            return fail(e, "%s: spatial dim %d: window %lld is larger than the padded input "
                        "%lld + %lld + %lld", label, i, (long long)window[i],
                        (long long)x->dims[2 + i], (long long)pre[i], (long long)post[i]);
        dims[2 + i] = lo;
        if (given && (given->dims[2 + i] == lo || given->dims[2 + i] == hi))
            dims[2 + i] = given->dims[2 + i];
    }
    if (given) {
        bool same = given->ndim == x->ndim;
        for (int i = 0; same && i < x->ndim; ++i) same = given->dims[i] == dims[i];
        if (!same) {
            hipdnnSdkTensor tmp = *x;
            memcpy(tmp.dims, dims, sizeof(tmp.dims));
            return fail(e, "%s: %s '%s' is %s but x %s pooled gives %s (rounded down; up is "
                        "allowed where a window still starts inside)", label, what,
                        given->name, shape_str(given, a, sizeof(a)), shape_str(x, b, sizeof(b)),
                        shape_str(&tmp, c, sizeof(c)));
        }
    }
    return true;
}

static bool resample_rank(err_t* e, const hipdnnSdkTensor* x, const char* what,
                          const char* label) {
    char a[200];
    if (x->ndim < 3 || x->ndim > 2 + HIPDNN_MAX_SPATIAL)
        return fail(e, "%s: %s '%s' is %s; it needs rank 3 to %d ([N, C, spatial...])", label,
                    what, x->name, shape_str(x, a, sizeof(a)), 2 + HIPDNN_MAX_SPATIAL);
    return true;
}

/* y [N, C, out...] from x; idx (MAXPOOL only) shaped and laid out as y, INT8 unless
 * given (cuDNN's index type). */
bool infer_resample(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label) {
    hipdnnSdkTensor* x = tensor_of(e, g, n->inputs[HIPDNN_RSF_X]);
    hipdnnSdkTensor* y = tensor_of(e, g, n->outputs[HIPDNN_RSF_Y]);
    hipdnnSdkTensor* idx = tensor_of(e, g, n->outputs[HIPDNN_RSF_IDX]);
    int64_t dims[HIPDNN_MAX_DIMS];
    if (!resample_rank(e, x, "x", label) || !resample_params(e, n, x->ndim, label) ||
        !resample_dims(e, n, x, y->ndim ? y : NULL, "y", label, dims))
        return false;
    if (idx && n->attrs[HIPDNN_RS_MODE].i[0] != HIPDNN_RESAMPLE_MAXPOOL)
        return fail(e, "%s: output 'idx' (tensor '%s') is set but only MAXPOOL writes an index",
                    label, idx->name);
    if (n->compute_type == HIPDNN_DATA_NOT_SET) n->compute_type = HIPDNN_DATA_FLOAT;
    if (!set_output(e, label, "y", y, x->ndim, dims, x,
                    y->is_virtual ? n->compute_type : x->data_type))
        return false;
    return !idx || set_output(e, label, "idx", idx, x->ndim, dims, y, HIPDNN_DATA_INT8);
}

/* dx: x's dims when x is set, else its given ones; the forward of dx's dims must give
 * dy's.  MAXPOOL needs idx or x. */
bool infer_resample_backward(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g,
                             const char* label) {
    hipdnnSdkTensor* dy = tensor_of(e, g, n->inputs[HIPDNN_RSB_DY]);
    hipdnnSdkTensor* x = tensor_of(e, g, n->inputs[HIPDNN_RSB_X]);
    hipdnnSdkTensor* y = tensor_of(e, g, n->inputs[HIPDNN_RSB_Y]);
    hipdnnSdkTensor* idx = tensor_of(e, g, n->inputs[HIPDNN_RSB_IDX]);
    hipdnnSdkTensor* dx = tensor_of(e, g, n->outputs[HIPDNN_RSB_DX]);
    if (!x && dx->ndim == 0)
        return fail(e, "%s: output 'dx' (tensor '%s') has no dims; give them, or give x", label,
                    dx->name);
    const hipdnnSdkTensor* image = x ? x : dx;
    int64_t dims[HIPDNN_MAX_DIMS];
    if (!resample_rank(e, image, x ? "x" : "dx", label) ||
        !resample_params(e, n, image->ndim, label) ||
        !resample_dims(e, n, image, dy, "dy", label, dims))
        return false;
    bool max = n->attrs[HIPDNN_RS_MODE].i[0] == HIPDNN_RESAMPLE_MAXPOOL;
    if (max && !idx && !x)
        return fail(e, "%s: MAXPOOL needs input 'idx' (the forward's index) or 'x' to find "
                    "each window's maximum", label);
    if (!max && idx)
        return fail(e, "%s: input 'idx' (tensor '%s') is set but only MAXPOOL reads an index",
                    label, idx->name);
    static const char* const names[] = {"y", "idx"};
    const hipdnnSdkTensor* like[] = {y, idx};
    char a[200], b[200];
    for (int k = 0; k < 2; ++k) {
        const hipdnnSdkTensor* t = like[k];
        if (!t) continue;
        bool ok = t->ndim == dy->ndim;
        for (int i = 0; ok && i < dy->ndim; ++i) ok = t->dims[i] == dy->dims[i];
        if (!ok)
            return fail(e, "%s: %s '%s' is %s but dy '%s' is %s; they must match", label,
                        names[k], t->name, shape_str(t, a, sizeof(a)), dy->name,
                        shape_str(dy, b, sizeof(b)));
    }
    if (n->compute_type == HIPDNN_DATA_NOT_SET) n->compute_type = HIPDNN_DATA_FLOAT;
    return set_output(e, label, "dx", dx, image->ndim, image->dims, x ? x : dy,
                      dx->is_virtual ? n->compute_type : (x ? x : dy)->data_type);
}

/* y's dims are the user's (as cuDNN frontend asks), with x's element count; its data
 * type x's unless given (LOGICAL: it must be x's). */
bool infer_reshape(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label) {
    hipdnnSdkTensor* x = tensor_of(e, g, n->inputs[HIPDNN_RESHAPE_X]);
    hipdnnSdkTensor* y = tensor_of(e, g, n->outputs[HIPDNN_RESHAPE_Y]);
    char a[200], b[200];
    if (y->ndim == 0)
        return fail(e, "%s: output 'y' (tensor '%s') has no dims; give them (as many elements "
                    "as x '%s' %s)", label, y->name, x->name, shape_str(x, a, sizeof(a)));
    int64_t nx = 1, ny = 1;
    for (int i = 0; i < x->ndim; ++i) nx *= x->dims[i];
    for (int i = 0; i < y->ndim; ++i) {
        if (y->dims[i] <= 0 || y->dims[i] > (INT64_C(1) << 40) / ny)
            return fail(e, "%s: output 'y' (tensor '%s') is %s: dims must be positive, 2^40 "
                        "elements at most", label, y->name, shape_str(y, a, sizeof(a)));
        ny *= y->dims[i];
    }
    if (nx != ny)
        return fail(e, "%s: y '%s' %s has %lld elements but x '%s' %s has %lld", label, y->name,
                    shape_str(y, a, sizeof(a)), (long long)ny, x->name, shape_str(x, b, sizeof(b)),
                    (long long)nx);
    if (n->attrs[HIPDNN_RESHAPE_MODE_SLOT].i[0] == HIPDNN_RESHAPE_LOGICAL &&
        y->data_type != HIPDNN_DATA_NOT_SET && y->data_type != x->data_type)
        return fail(e, "%s: y '%s' is %s but x '%s' is %s; a LOGICAL reshape keeps the data "
                    "type", label, y->name, hipdnnSdkDataTypeName(y->data_type), x->name,
                    hipdnnSdkDataTypeName(x->data_type));
    if (n->compute_type == HIPDNN_DATA_NOT_SET) n->compute_type = HIPDNN_DATA_FLOAT;
    return set_output(e, label, "y", y, y->ndim, y->dims, x, x->data_type);
}
