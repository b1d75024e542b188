/* The inference rules of the op table: per-op checks and the dims, strides and data
 * types of each op's outputs.  The backend runs them node by node in topological order;
 * messages give expected and actual values.  Arithmetic on user values is checked: every
 * given value is bounded (dims by 2^40 elements, parameters by 2^40), and products that
 * could still overflow go through __builtin_*_overflow. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hipdnn/hipdnn_sdk.h"

/* What every rule gets besides its node: where its message goes, and the uid map. */
typedef struct {
    char* buf;
    size_t len;
    const hipdnnSdkUidMap* map;
} err_t;

static bool fail(err_t* e, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(err_t* e, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (e->len) vsnprintf(e->buf, e->len, fmt, ap);
    va_end(ap);
    return false;
}

static hipdnnSdkTensor* tensor_of(err_t* e, hipdnnSdkGraph* g, int64_t uid) {
    int32_t t = uid == HIPDNN_NO_TENSOR ? -1 : hipdnnSdkUidMapFind(e->map, uid);
    return t < 0 ? NULL : &g->tensors[t];
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
static bool set_output(err_t* e, const char* label, const char* port, hipdnnSdkTensor* out,
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

static bool infer_conv(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label) {
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
static bool infer_conv_grad(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label) {
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

static bool infer_matmul(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label) {
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

/* Parameters a mode reads must be usable: finite, and softplus's beta not 0 (it divides). */
static bool pointwise_params_ok(err_t* e, const hipdnnSdkNode* n, const char* label) {
    hipdnnPointwiseMode_t m = hipdnnSdkNodeMode(n);
    int slot = -1;
    if (m == HIPDNN_POINTWISE_ELU_FWD || m == HIPDNN_POINTWISE_ELU_BWD) slot = HIPDNN_PW_ELU_ALPHA;
    if (m == HIPDNN_POINTWISE_SOFTPLUS_FWD || m == HIPDNN_POINTWISE_SOFTPLUS_BWD)
        slot = HIPDNN_PW_SOFTPLUS_BETA;
    if (m == HIPDNN_POINTWISE_SWISH_FWD || m == HIPDNN_POINTWISE_SWISH_BWD)
        slot = HIPDNN_PW_SWISH_BETA;
    if (slot < 0) return true;
    double v = n->attrs[slot].d;
    const char* name = hipdnnSdkOpInfoGet(n->kind)->attrs[slot].name;
    if (v - v != 0.0) return fail(e, "%s: %s is %g; it must be finite", label, name, v);
    if (slot == HIPDNN_PW_SOFTPLUS_BETA && v == 0.0)
        return fail(e, "%s: %s is 0; softplus divides by it", label, name);
    return true;
}

static bool infer_pointwise(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label) {
    const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(n->kind);
    hipdnnPointwiseMode_t mode = hipdnnSdkNodeMode(n);
    unsigned in_set = 0, out_set = 0;
    for (int p = 0; p < HIPDNN_MAX_PORTS; ++p) {
        if (n->inputs[p] != HIPDNN_NO_TENSOR) in_set |= 1u << p;
        if (n->outputs[p] != HIPDNN_NO_TENSOR) out_set |= 1u << p;
    }
    if (!hipdnnSdkPointwiseCheckPorts(mode, in_set, out_set, label, e->buf, e->len)) return false;
    if (!pointwise_params_ok(e, n, label)) return false;
    hipdnnSdkPointwisePorts ports;
    hipdnnSdkPointwisePortsOf(mode, &ports);
    hipdnnSdkTensor* in[3] = {NULL, NULL, NULL};
    for (int k = 0; k < ports.arity; ++k) in[k] = tensor_of(e, g, n->inputs[ports.inputs[k]]);
    hipdnnSdkTensor* y = tensor_of(e, g, n->outputs[ports.output]);
    const char* yport = info->outputs[ports.output].name;
    char a[200], b[200];
    /* Every operand broadcasts onto the output, NumPy-style. */
    hipdnnSdkTensor shape = *in[0];
    for (int k = 1; k < ports.arity; ++k) {
        hipdnnSdkTensor next = shape;
        if (!broadcast(&shape, in[k], 0, &next.ndim, next.dims)) {
            const char* p0 = info->inputs[ports.inputs[0]].name;
            const char* pk = info->inputs[ports.inputs[k]].name;
            if (k == 1)
                return fail(e, "%s: %s '%s' %s and %s '%s' %s do not broadcast", label, p0,
                            in[0]->name, shape_str(in[0], a, sizeof(a)), pk, in[k]->name,
                            shape_str(in[k], b, sizeof(b)));
            return fail(e, "%s: the other inputs broadcast to %s but %s '%s' %s does not "
                        "broadcast with them", label, shape_str(&shape, a, sizeof(a)), pk,
                        in[k]->name, shape_str(in[k], b, sizeof(b)));
        }
        shape = next;
    }
    int32_t r = shape.ndim;
    int64_t dims[HIPDNN_MAX_DIMS];
    memcpy(dims, shape.dims, sizeof(dims));
    if (y->ndim != 0) {
        /* A given output shape may be larger than the inputs; they broadcast into it. */
        int32_t rr = 0;
        int64_t d2[HIPDNN_MAX_DIMS];
        if (broadcast(y, &shape, 0, &rr, d2) && rr == y->ndim &&
            memcmp(d2, y->dims, (size_t)rr * sizeof(int64_t)) == 0) {
            r = y->ndim;
            memcpy(dims, y->dims, sizeof(dims));
        }
    }
    if (mode == HIPDNN_POINTWISE_GEN_INDEX && n->attrs[HIPDNN_PW_AXIS].i[0] >= r)
        return fail(e, "%s: axis %lld is out of range for the output's rank %d", label,
                    (long long)n->attrs[HIPDNN_PW_AXIS].i[0], (int)r);
    if (n->compute_type == HIPDNN_DATA_NOT_SET) n->compute_type = HIPDNN_DATA_FLOAT;
    /* Comparisons and logic give BOOLEAN; otherwise a virtual output takes the compute
     * type and a graph output its first operand's type (cuDNN frontend's defaults). */
    hipdnnDataType_t dtype = y->is_virtual ? n->compute_type : in[0]->data_type;
    if (hipdnnSdkPointwiseIsLogical(mode)) dtype = HIPDNN_DATA_BOOLEAN;
    const hipdnnSdkTensor* like = NULL; /* the first operand shaped as the output */
    for (int k = 0; k < ports.arity && !like; ++k)
        if (in[k]->ndim == r && memcmp(in[k]->dims, dims, (size_t)r * sizeof(int64_t)) == 0)
            like = in[k];
    bool strides_given = y->strides[0] != 0;
    if (!set_output(e, label, yport, y, r, dims, like == in[0] ? in[0] : NULL, dtype))
        return false;
    /* cuDNN frontend's rule: an output shaped as an input takes that input's strides, so
     * a strided view in gives a like view out; unless they would overlap (an aliasing
     * input).  Virtual tensors stay packed: their layout is the engine's business. */
    if (!strides_given && !y->is_virtual && like &&
        !hipdnnSdkStridesOverlap(like->ndim, like->dims, like->strides))
        memcpy(y->strides, like->strides, (size_t)r * sizeof(int64_t));
    return true;
}

static bool infer_batchnorm(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label) {
    hipdnnSdkTensor* x = tensor_of(e, g, n->inputs[HIPDNN_BN_X]);
    hipdnnSdkTensor* y = tensor_of(e, g, n->outputs[HIPDNN_BN_Y]);
    char a[200];
    if (x->ndim < 2)
        return fail(e, "%s: x '%s' is %s; it needs rank >= 2 ([N, C, ...])",
                          label, x->name, shape_str(x, a, sizeof(a)));
    static const char* names[] = {"x", "mean", "inv_variance", "scale", "bias"};
    for (int p = HIPDNN_BN_MEAN; p <= HIPDNN_BN_BIAS; ++p) {
        hipdnnSdkTensor* t = tensor_of(e, g, n->inputs[p]);
        bool ok = t->ndim == x->ndim;
        for (int i = 0; ok && i < t->ndim; ++i) ok = t->dims[i] == (i == 1 ? x->dims[1] : 1);
        if (!ok) {
            char want[200];
            hipdnnSdkTensor tmp = *x;
            for (int i = 0; i < tmp.ndim; ++i) tmp.dims[i] = i == 1 ? x->dims[1] : 1;
            return fail(e, "%s: %s '%s' is %s but x C=%lld needs %s",
                              label, names[p], t->name, shape_str(t, a, sizeof(a)),
                              (long long)x->dims[1], shape_str(&tmp, want, sizeof(want)));
        }
    }
    if (n->compute_type == HIPDNN_DATA_NOT_SET) n->compute_type = HIPDNN_DATA_FLOAT;
    return set_output(e, label, "y", y, x->ndim, x->dims, x,
                      y->is_virtual ? n->compute_type : x->data_type);
}

/* y's dims are the user's (cuDNN frontend asks for them too): the same rank as x, each
 * dim x's or 1; the axes where y has 1 and x not are reduced. */
static bool infer_reduction(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label) {
    hipdnnSdkTensor* x = tensor_of(e, g, n->inputs[HIPDNN_RED_X]);
    hipdnnSdkTensor* y = tensor_of(e, g, n->outputs[HIPDNN_RED_Y]);
    char a[200], b[200];
    if (n->attrs[HIPDNN_RED_MODE].count == 0)
        return fail(e, "%s: reduction mode is not set", label);
    if (y->ndim == 0)
        return fail(e, "%s: output 'y' (tensor '%s') has no dims; give them (x's dims with 1 on "
                    "each reduced axis), x '%s' is %s", label, y->name, x->name,
                    shape_str(x, a, sizeof(a)));
    bool ok = y->ndim == x->ndim;
    for (int i = 0; ok && i < x->ndim; ++i) ok = y->dims[i] == 1 || y->dims[i] == x->dims[i];
    if (!ok)
        return fail(e, "%s: output 'y' (tensor '%s') is %s but x '%s' is %s; y needs x's rank "
                    "with each dim x's or 1", label, y->name, shape_str(y, a, sizeof(a)), x->name,
                    shape_str(x, b, sizeof(b)));
    if (n->compute_type == HIPDNN_DATA_NOT_SET) n->compute_type = HIPDNN_DATA_FLOAT;
    return set_output(e, label, "y", y, y->ndim, y->dims, x,
                      y->is_virtual ? n->compute_type : x->data_type);
}

int hipdnnSdkNormAxes(const hipdnnSdkNode* n, const hipdnnSdkTensor* x,
                      const hipdnnSdkTensor* scale, bool* axes) {
    int64_t mode = n->attrs[HIPDNN_NORM_MODE].i[0];
    int count = 0;
    for (int i = 0; i < x->ndim; ++i) {
        if (mode == HIPDNN_BATCH_NORM) axes[i] = i != 1;
        else if (mode == HIPDNN_INSTANCE_NORM) axes[i] = i >= 2;
        else axes[i] = i >= 1 && scale && scale->ndim == x->ndim && scale->dims[i] == x->dims[i];
        count += axes[i];
    }
    return count;
}

/* Checks a per-channel or per-feature tensor against the shape it must have. */
static bool check_shape(err_t* e, const char* label, const char* port, const hipdnnSdkTensor* t,
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

static bool infer_norm(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label) {
    hipdnnSdkTensor* in[7];
    hipdnnSdkTensor* out[5];
    for (int p = 0; p < 7; ++p) in[p] = tensor_of(e, g, n->inputs[p]);
    for (int p = 0; p < 5; ++p) out[p] = tensor_of(e, g, n->outputs[p]);
    const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(n->kind);
    hipdnnSdkTensor *x = in[HIPDNN_NORM_X], *scale = in[HIPDNN_NORM_SCALE];
    int64_t mode = n->attrs[HIPDNN_NORM_MODE].i[0], phase = n->attrs[HIPDNN_NORM_PHASE].i[0];
    bool training = phase == HIPDNN_NORM_FWD_TRAINING;
    char a[200];
    if (n->attrs[HIPDNN_NORM_MODE].count == 0) return fail(e, "%s: norm mode is not set", label);
    if (n->attrs[HIPDNN_NORM_PHASE].count == 0)
        return fail(e, "%s: forward phase (training or inference) is not set", label);
    if (mode == HIPDNN_GROUP_NORM)
        return fail(e, "%s: group normalization is not in hipdnn yet", label);
    if (mode == HIPDNN_BATCH_NORM && !training)
        return fail(e, "%s: batchnorm in the inference phase takes mean and inv_variance as "
                    "inputs: use batchnorm_inference", label);
    if (x->ndim < 2)
        return fail(e, "%s: x '%s' is %s; it needs rank >= 2", label, x->name,
                    shape_str(x, a, sizeof(a)));
    if (in[HIPDNN_NORM_EPSILON]) {
        int64_t count = 1;
        for (int i = 0; i < in[HIPDNN_NORM_EPSILON]->ndim; ++i)
            count *= in[HIPDNN_NORM_EPSILON]->dims[i];
        if (count != 1)
            return fail(e, "%s: epsilon '%s' is %s; it must hold one value", label,
                        in[HIPDNN_NORM_EPSILON]->name,
                        shape_str(in[HIPDNN_NORM_EPSILON], a, sizeof(a)));
    }
    /* Parameter shape: [1, C, 1, ...] for BATCH and INSTANCE; for the layer norms, 1 or
     * x's dim on each axis (axis 0 too for ADA_LAYER, whose parameters are per sample). */
    int64_t want[HIPDNN_MAX_DIMS];
    bool per_channel = mode == HIPDNN_BATCH_NORM || mode == HIPDNN_INSTANCE_NORM;
    if (scale->ndim != x->ndim)
        return fail(e, "%s: scale '%s' is %s; it needs x's rank %d", label, scale->name,
                    shape_str(scale, a, sizeof(a)), (int)x->ndim);
    for (int i = 0; i < x->ndim; ++i) {
        if (per_channel) want[i] = i == 1 ? x->dims[1] : 1;
        else if (i == 0 && mode != HIPDNN_ADA_LAYER_NORM) want[i] = 1;
        else want[i] = scale->dims[i] == x->dims[i] ? x->dims[i] : 1;
    }
    const char* what = per_channel ? "a per-channel parameter" :
                       "a parameter over x's normalized dims (1 or x's dim, 1 on axis 0)";
    if (!check_shape(e, label, "scale", scale, x->ndim, want, what)) return false;
    if (in[HIPDNN_NORM_BIAS] &&
        !check_shape(e, label, "bias", in[HIPDNN_NORM_BIAS], x->ndim, want, "scale's shape"))
        return false;
    bool axes[HIPDNN_MAX_DIMS];
    hipdnnSdkNormAxes(n, x, scale, axes);
    int64_t stats[HIPDNN_MAX_DIMS];
    for (int i = 0; i < x->ndim; ++i) stats[i] = axes[i] ? 1 : x->dims[i];
    /* Which ports this mode and phase take. */
    bool running = mode == HIPDNN_BATCH_NORM;
    bool want_in[7] = {true, true, in[HIPDNN_NORM_BIAS] != NULL, true, running, running, running};
    bool want_out[5] = {true, training && mode != HIPDNN_RMS_NORM, training, running, running};
    const char* mname = hipdnnSdkNormModeName(mode);
    for (int p = 0; p < 7; ++p) {
        if (in[p] && !want_in[p])
            return fail(e, "%s: input '%s' (tensor '%s') is set but %s takes none", label,
                        info->inputs[p].name, in[p]->name, mname);
    }
    /* BATCH: running statistics are optional as a set (momentum plus both of each). */
    bool have_running = in[HIPDNN_NORM_EXP_AVG_FACTOR] || in[HIPDNN_NORM_IN_RUNNING_MEAN] ||
                        in[HIPDNN_NORM_IN_RUNNING_VAR] || out[HIPDNN_NORM_OUT_RUNNING_MEAN] ||
                        out[HIPDNN_NORM_OUT_RUNNING_VAR];
    if (running && have_running)
        for (int p = HIPDNN_NORM_EXP_AVG_FACTOR; p <= HIPDNN_NORM_IN_RUNNING_VAR; ++p)
            if (!in[p])
                return fail(e, "%s: input '%s' is not set; give momentum and both running "
                            "statistics (in and out), or none", label, info->inputs[p].name);
    for (int p = 1; p < 5; ++p) {
        bool wanted = want_out[p] && (p < HIPDNN_NORM_OUT_RUNNING_MEAN || have_running);
        if (out[p] && !want_out[p])
            return fail(e, "%s: output '%s' (tensor '%s') is set but %s in the %s phase gives "
                        "none", label, info->outputs[p].name, out[p]->name, mname,
                        training ? "training" : "inference");
        if (!out[p] && wanted && p >= HIPDNN_NORM_OUT_RUNNING_MEAN)
            return fail(e, "%s: output '%s' is not set; give both running statistics (in and "
                        "out), or none", label, info->outputs[p].name);
    }
    if (running && have_running) {
        int64_t c[HIPDNN_MAX_DIMS];
        for (int i = 0; i < x->ndim; ++i) c[i] = i == 1 ? x->dims[1] : 1;
        for (int p = HIPDNN_NORM_IN_RUNNING_MEAN; p <= HIPDNN_NORM_IN_RUNNING_VAR; ++p)
            if (!check_shape(e, label, info->inputs[p].name, in[p], x->ndim, c,
                             "a per-channel statistic"))
                return false;
        hipdnnSdkTensor* m = in[HIPDNN_NORM_EXP_AVG_FACTOR];
        int64_t count = 1;
        for (int i = 0; i < m->ndim; ++i) count *= m->dims[i];
        if (count != 1)
            return fail(e, "%s: exp_avg_factor '%s' is %s; it must hold one value", label,
                        m->name, shape_str(m, a, sizeof(a)));
    }
    if (n->compute_type == HIPDNN_DATA_NOT_SET) n->compute_type = HIPDNN_DATA_FLOAT;
    hipdnnSdkTensor* y = out[HIPDNN_NORM_Y];
    if (!set_output(e, label, "y", y, x->ndim, x->dims, x,
                    y->is_virtual ? n->compute_type : x->data_type))
        return false;
    /* Statistics are float32 unless given otherwise (cuDNN frontend's default). */
    for (int p = HIPDNN_NORM_MEAN; p <= HIPDNN_NORM_INV_VARIANCE; ++p)
        if (out[p] && !set_output(e, label, info->outputs[p].name, out[p], x->ndim, stats, x,
                                  n->compute_type))
            return false;
    for (int p = HIPDNN_NORM_OUT_RUNNING_MEAN; p <= HIPDNN_NORM_OUT_RUNNING_VAR; ++p)
        if (out[p]) {
            const hipdnnSdkTensor* src = in[p - HIPDNN_NORM_OUT_RUNNING_MEAN +
                                            HIPDNN_NORM_IN_RUNNING_MEAN];
            if (!set_output(e, label, info->outputs[p].name, out[p], src->ndim, src->dims, src,
                            src->data_type))
                return false;
        }
    return true;
}

/* The gradients of norm_forward's y: dx shaped as x (x's layout), dscale and dbias as
 * scale; the saved statistics as the forward writes them (x's dims, 1 on each
 * normalized axis). */
static bool infer_norm_backward(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g,
                                const char* label) {
    hipdnnSdkTensor* in[5];
    hipdnnSdkTensor* out[3];
    for (int p = 0; p < 5; ++p) in[p] = tensor_of(e, g, n->inputs[p]);
    for (int p = 0; p < 3; ++p) out[p] = tensor_of(e, g, n->outputs[p]);
    hipdnnSdkTensor *x = in[HIPDNN_NBWD_X], *dy = in[HIPDNN_NBWD_DY];
    hipdnnSdkTensor* scale = in[HIPDNN_NBWD_SCALE];
    int64_t mode = n->attrs[HIPDNN_NBWD_MODE].i[0];
    char a[200];
    if (n->attrs[HIPDNN_NBWD_MODE].count == 0) return fail(e, "%s: norm mode is not set", label);
    if (mode == HIPDNN_GROUP_NORM)
        return fail(e, "%s: group normalization is not in hipdnn yet", label);
    if (x->ndim < 2)
        return fail(e, "%s: x '%s' is %s; it needs rank >= 2", label, x->name,
                    shape_str(x, a, sizeof(a)));
    if (!check_shape(e, label, "dy", dy, x->ndim, x->dims, "x's shape")) return false;
    if (scale->ndim != x->ndim)
        return fail(e, "%s: scale '%s' is %s; it needs x's rank %d", label, scale->name,
                    shape_str(scale, a, sizeof(a)), (int)x->ndim);
    int64_t want[HIPDNN_MAX_DIMS];
    bool per_channel = mode == HIPDNN_BATCH_NORM || mode == HIPDNN_INSTANCE_NORM;
    for (int i = 0; i < x->ndim; ++i) {
        if (per_channel) want[i] = i == 1 ? x->dims[1] : 1;
        else if (i == 0 && mode != HIPDNN_ADA_LAYER_NORM) want[i] = 1;
        else want[i] = scale->dims[i] == x->dims[i] ? x->dims[i] : 1;
    }
    if (!check_shape(e, label, "scale", scale, x->ndim, want,
                     per_channel ? "a per-channel parameter"
                                 : "a parameter over x's normalized dims (1 or x's dim)"))
        return false;
    bool axes[HIPDNN_MAX_DIMS];
    hipdnnSdkNormAxes(n, x, scale, axes); /* mode is slot 0 of both norm ops */
    int64_t stats[HIPDNN_MAX_DIMS];
    for (int i = 0; i < x->ndim; ++i) stats[i] = axes[i] ? 1 : x->dims[i];
    bool rms = mode == HIPDNN_RMS_NORM;
    if (rms && in[HIPDNN_NBWD_MEAN])
        return fail(e, "%s: input 'mean' (tensor '%s') is set but rmsnorm has no mean", label,
                    in[HIPDNN_NBWD_MEAN]->name);
    if (!rms && !in[HIPDNN_NBWD_MEAN])
        return fail(e, "%s: input 'mean' is not set (the forward's saved mean)", label);
    static const char* const names[5] = {"x", "dy", "scale", "mean", "inv_variance"};
    for (int p = HIPDNN_NBWD_MEAN; p <= HIPDNN_NBWD_INV_VARIANCE; ++p)
        if (in[p] && !check_shape(e, label, names[p], in[p], x->ndim, stats,
                                  "a saved statistic (x's dims, 1 on each normalized axis)"))
            return false;
    if (n->compute_type == HIPDNN_DATA_NOT_SET) n->compute_type = HIPDNN_DATA_FLOAT;
    hipdnnSdkTensor* dx = out[HIPDNN_NBWD_DX];
    if (!set_output(e, label, "dx", dx, x->ndim, x->dims, x,
                    dx->is_virtual ? n->compute_type : x->data_type))
        return false;
    static const char* const onames[3] = {"dx", "dscale", "dbias"};
    for (int p = HIPDNN_NBWD_DSCALE; p <= HIPDNN_NBWD_DBIAS; ++p)
        if (out[p] && !set_output(e, label, onames[p], out[p], scale->ndim, scale->dims, scale,
                                  out[p]->is_virtual ? n->compute_type : scale->data_type))
            return false;
    return true;
}

/* sum and sq_sum: [1, C, 1, ...] over x [N, C, ...], float32 unless given. */
static bool infer_genstats(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label) {
    hipdnnSdkTensor* x = tensor_of(e, g, n->inputs[HIPDNN_GENSTATS_X]);
    char a[200];
    if (x->ndim < 2)
        return fail(e, "%s: x '%s' is %s; it needs rank >= 2 ([N, C, ...])", label, x->name,
                    shape_str(x, a, sizeof(a)));
    int64_t dims[HIPDNN_MAX_DIMS];
    for (int i = 0; i < x->ndim; ++i) dims[i] = i == 1 ? x->dims[1] : 1;
    if (n->compute_type == HIPDNN_DATA_NOT_SET) n->compute_type = HIPDNN_DATA_FLOAT;
    static const char* const names[2] = {"sum", "sq_sum"};
    for (int p = 0; p < 2; ++p)
        if (!set_output(e, label, names[p], tensor_of(e, g, n->outputs[p]), x->ndim, dims, x,
                        n->compute_type))
            return false;
    return true;
}

/* Attention: the shapes of q, k, v and of the optional ports, for sdpa_fwd and
 * sdpa_bwd (whose ports are given by index in `in`: q, k, v, attn_scale, bias,
 * seq_len_q, seq_len_kv). */
static bool check_sdpa_inputs(err_t* e, hipdnnSdkNode* n, hipdnnSdkTensor* const* in,
                              const char* label) {
    static const char* const names[7] = {"q", "k", "v", "attn_scale", "bias", "seq_len_q",
                                         "seq_len_kv"};
    hipdnnSdkTensor *q = in[0], *k = in[1], *v = in[2];
    char a[200], b[200], c[200];
    for (int p = 0; p < 3; ++p)
        if (in[p]->ndim != 4)
            return fail(e, "%s: %s '%s' is %s; it needs rank 4 ([B, H, S, D])", label, names[p],
                        in[p]->name, shape_str(in[p], a, sizeof(a)));
    if (k->dims[0] != q->dims[0] || v->dims[0] != q->dims[0] || k->dims[3] != q->dims[3] ||
        v->dims[2] != k->dims[2])
        return fail(e, "%s: q '%s' %s, k '%s' %s and v '%s' %s do not fit: q [B, H_q, S_q, D], "
                    "k [B, H_k, S_kv, D], v [B, H_v, S_kv, D_v]", label, q->name,
                    shape_str(q, a, sizeof(a)), k->name, shape_str(k, b, sizeof(b)), v->name,
                    shape_str(v, c, sizeof(c)));
    for (int p = 1; p < 3; ++p)
        if (q->dims[1] % in[p]->dims[1] != 0)
            return fail(e, "%s: %s '%s' has %lld heads but q '%s' %lld: the query heads must be "
                        "a multiple (GQA, MQA)", label, names[p], in[p]->name,
                        (long long)in[p]->dims[1], q->name, (long long)q->dims[1]);
    if (in[3]) {
        int64_t count = 1;
        for (int i = 0; i < in[3]->ndim; ++i) count *= in[3]->dims[i];
        if (count != 1)
            return fail(e, "%s: attn_scale '%s' is %s; it must hold one value", label,
                        in[3]->name, shape_str(in[3], a, sizeof(a)));
    }
    if (in[4]) {
        const int64_t want[4] = {q->dims[0], q->dims[1], q->dims[2], k->dims[2]};
        bool ok = in[4]->ndim == 4;
        for (int i = 0; ok && i < 4; ++i) ok = in[4]->dims[i] == 1 || in[4]->dims[i] == want[i];
        if (!ok)
            return fail(e, "%s: bias '%s' is %s; it must broadcast to [B, H_q, S_q, S_kv] = "
                        "[%lld, %lld, %lld, %lld] (each dim that or 1)", label, in[4]->name,
                        shape_str(in[4], a, sizeof(a)), (long long)want[0], (long long)want[1],
                        (long long)want[2], (long long)want[3]);
    }
    bool padding = n->attrs[HIPDNN_SDPA_PADDING].i[0] != 0;
    for (int p = 5; p < 7; ++p) {
        if (!padding) {
            if (in[p])
                return fail(e, "%s: %s '%s' is set but use_padding_mask is not", label,
                            names[p], in[p]->name);
            continue;
        }
        if (!in[p])
            return fail(e, "%s: use_padding_mask needs %s ([B, 1, 1, 1] of int32)", label,
                        names[p]);
        const int64_t want[4] = {q->dims[0], 1, 1, 1};
        if (!check_shape(e, label, names[p], in[p], 4, want, "a length per sample"))
            return false;
        if (in[p]->data_type != HIPDNN_DATA_INT32 && in[p]->data_type != HIPDNN_DATA_INT64)
            return fail(e, "%s: %s '%s' is %s; sequence lengths are int32 or int64", label,
                        names[p], in[p]->name, hipdnnSdkDataTypeName(in[p]->data_type));
    }
    if (n->compute_type == HIPDNN_DATA_NOT_SET) n->compute_type = HIPDNN_DATA_FLOAT;
    return true;
}

static bool infer_sdpa_fwd(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label) {
    hipdnnSdkTensor* in[7];
    for (int p = 0; p < 7; ++p) in[p] = tensor_of(e, g, n->inputs[p]);
    if (!check_sdpa_inputs(e, n, in, label)) return false;
    hipdnnSdkTensor *q = in[HIPDNN_SDPA_Q], *v = in[HIPDNN_SDPA_V];
    hipdnnSdkTensor* o = tensor_of(e, g, n->outputs[HIPDNN_SDPA_O]);
    hipdnnSdkTensor* stats = tensor_of(e, g, n->outputs[HIPDNN_SDPA_STATS]);
    const int64_t od[4] = {q->dims[0], q->dims[1], q->dims[2], v->dims[3]};
    const int64_t sd[4] = {q->dims[0], q->dims[1], q->dims[2], 1};
    if (!set_output(e, label, "o", o, 4, od, q, o->is_virtual ? n->compute_type : q->data_type))
        return false;
    return !stats || set_output(e, label, "stats", stats, 4, sd, NULL, HIPDNN_DATA_FLOAT);
}

static bool infer_sdpa_bwd(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label) {
    hipdnnSdkTensor* all[10];
    for (int p = 0; p < 10; ++p) all[p] = tensor_of(e, g, n->inputs[p]);
    hipdnnSdkTensor* in[7] = {all[HIPDNN_SDPA_BWD_Q], all[HIPDNN_SDPA_BWD_K],
                              all[HIPDNN_SDPA_BWD_V], all[HIPDNN_SDPA_BWD_ATTN_SCALE],
                              all[HIPDNN_SDPA_BWD_BIAS], all[HIPDNN_SDPA_BWD_SEQ_LEN_Q],
                              all[HIPDNN_SDPA_BWD_SEQ_LEN_KV]};
    if (!check_sdpa_inputs(e, n, in, label)) return false;
    hipdnnSdkTensor *q = in[0], *v = in[2];
    const int64_t od[4] = {q->dims[0], q->dims[1], q->dims[2], v->dims[3]};
    const int64_t sd[4] = {q->dims[0], q->dims[1], q->dims[2], 1};
    if (!check_shape(e, label, "o", all[HIPDNN_SDPA_BWD_O], 4, od, "the forward's output") ||
        !check_shape(e, label, "dO", all[HIPDNN_SDPA_BWD_DO], 4, od, "o's shape") ||
        !check_shape(e, label, "stats", all[HIPDNN_SDPA_BWD_STATS], 4, sd,
                     "a log-sum-exp per query row"))
        return false;
    static const char* const onames[3] = {"dq", "dk", "dv"};
    for (int p = 0; p < 3; ++p) {
        hipdnnSdkTensor* out = tensor_of(e, g, n->outputs[p]);
        if (!set_output(e, label, onames[p], out, 4, in[p]->dims, in[p],
                        out->is_virtual ? n->compute_type : in[p]->data_type))
            return false;
    }
    return true;
}

/* y = x[start : limit : step] per dim; the lists have one value per dim of x. */
static bool infer_slice(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label) {
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
static bool infer_concat(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label) {
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
static bool infer_resample(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label) {
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
static bool infer_resample_backward(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g,
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
static bool infer_reshape(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label) {
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

typedef bool (*infer_fn)(err_t*, hipdnnSdkNode*, hipdnnSdkGraph*, const char*);

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
