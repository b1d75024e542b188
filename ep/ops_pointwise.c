/* ops_pointwise.c — the elementwise ONNX ops past Add / Mul / Relu (op_table.c's rows name
 * these checks, shape rules and lowerings): the variadic Min / Max / Sum / Mean as a chain
 * of binary pointwise ops, Clip as max then min (its bounds tensors of X's type, or the
 * attributes before opset 11), LeakyRelu as RELU_FWD's lower-clip slope, HardSigmoid and
 * HardSwish from multiply, add, max and min, Cast between float32 and float16 as an
 * identity.  Single-mode unary and binary ops (Erf, Sqrt, Pow, ...) reuse lower_ops.c's. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lowering.h"

#define WHY(...) (snprintf(why, why_len, __VA_ARGS__), false)

/* Min, Max, Sum, Mean: 1 to 8 float inputs, broadcast together */
bool ep_check_variadic(const ep_model* m, const ep_node* n, char* why, size_t why_len) {
    if (n->n_in < 1) return WHY("no inputs");
    for (int k = 0; k < n->n_in; ++k)
        if (!ep_float_tensor(m, n->in[k], "an input", why, why_len)) return false;
    return true;
}

bool ep_shape_variadic(const ep_model* m, const ep_node* n, const ep_shape* const* in,
                       ep_shape* out, char* why, size_t why_len) {
    (void)m;
    out[0] = *in[0];
    for (int k = 1; k < n->n_in; ++k) {
        ep_shape acc = out[0];
        char a[128], b[128];
        if (!in[k]) return WHY("input %d is absent", k);
        if (!ep_broadcast(&acc, in[k], &out[0])) {
            ep_shape_str(&acc, a, sizeof(a));
            ep_shape_str(in[k], b, sizeof(b));
            return WHY("%s and input %d %s do not broadcast", a, k, b);
        }
    }
    return true;
}

/* arg: the pointwise mode combining them (MIN, MAX, ADD; Mean is ADD, then times 1/n, its
 * row's arg being -1) */
bool ep_emit_variadic(lw* w, const ep_node* n, int arg) {
    bool mean = arg < 0;
    hipdnnPointwiseMode_t mode = mean ? HIPDNN_POINTWISE_ADD : (hipdnnPointwiseMode_t)arg;
    const ep_shape* y = &w->vals[n->out[0]].onnx;
    ep_shape s0 = lw_aligned(&w->vals[n->in[0]].onnx, y->rank), acc_s = s0;
    hipdnnBackendDescriptor_t acc = lw_get_bcast(w, n->in[0], y->rank);
    if (n->n_in == 1 && !mean)
        return lw_pointwise(w, NULL, HIPDNN_POINTWISE_IDENTITY, acc, NULL,
                            lw_make_out(w, n->out[0], y));
    for (int k = 1; k < n->n_in; ++k) {
        ep_shape sk = lw_aligned(&w->vals[n->in[k]].onnx, y->rank), next;
        ep_broadcast(&acc_s, &sk, &next);
        bool last = k == n->n_in - 1 && !mean;
        hipdnnBackendDescriptor_t t = last ? lw_make_out(w, n->out[0], y) : lw_tmp(w, "acc", &next);
        if (!lw_pointwise(w, NULL, mode, acc, lw_get_bcast(w, n->in[k], y->rank), t))
            return false;
        acc = t;
        acc_s = next;
    }
    if (!mean) return true;
    return lw_pointwise(w, "mean", HIPDNN_POINTWISE_MUL, acc,
                        lw_scalar(w, "1/n", 1.0f / (float)n->n_in, y->rank),
                        lw_make_out(w, n->out[0], y));
}

/* Clip: X, then min and max (opset 11 on), each absent or a one-element tensor of X's
 * type; before opset 11, the min and max attributes */
bool ep_check_clip(const ep_model* m, const ep_node* n, char* why, size_t why_len) {
    if (!ep_float_tensor(m, n->in[0], "input", why, why_len)) return false;
    static const char* names[] = {"", "min", "max"};
    for (int k = 1; k < n->n_in && k < 3; ++k) {
        int v = n->in[k];
        if (v < 0) continue;
        const ep_value* t = &m->values[v];
        if (t->elem_type != m->values[n->in[0]].elem_type)
            return WHY("%s '%s' has element type %d, not the input's", names[k], t->name,
                       (int)t->elem_type);
        for (int i = 0; i < t->rank; ++i)
            if (t->dims[i] != 1) return WHY("%s '%s' is not one value", names[k], t->name);
        if (t->rank < 0) return WHY("%s '%s' has no known rank", names[k], t->name);
    }
    return n->n_in <= 3 ? true : WHY("%d inputs", n->n_in);
}

bool ep_emit_clip(lw* w, const ep_node* n, int arg) {
    (void)arg;
    const ep_shape* y = &w->vals[n->out[0]].onnx;
    ep_shape ones = lw_aligned(&(ep_shape){0, {0}}, y->rank);
    hipdnnBackendDescriptor_t acc = lw_get_onnx(w, n->in[0]), bound[2] = {NULL, NULL};
    static const char* names[] = {"min", "max"};
    for (int k = 0; k < 2; ++k) {
        if (n->since_version >= 11 && n->n_in > k + 1 && n->in[k + 1] >= 0)
            bound[k] = lw_get(w, n->in[k + 1], &ones);
        else if (n->since_version < 11 && ep_attr_get(n, names[k]))
            bound[k] = lw_scalar(w, names[k], ep_attr_float(n, names[k], 0.0f), y->rank);
    }
    if (!bound[0] && !bound[1])
        return lw_pointwise(w, NULL, HIPDNN_POINTWISE_IDENTITY, acc, NULL,
                            lw_make_out(w, n->out[0], y));
    if (bound[0]) {
        hipdnnBackendDescriptor_t t = bound[1] ? lw_tmp(w, "min", y) : lw_make_out(w, n->out[0], y);
        if (!lw_pointwise(w, "min", HIPDNN_POINTWISE_MAX, acc, bound[0], t)) return false;
        acc = t;
    }
    return !bound[1] ||
           lw_pointwise(w, "max", HIPDNN_POINTWISE_MIN, acc, bound[1], lw_make_out(w, n->out[0], y));
}

/* LeakyRelu: alpha >= 0 (RELU_FWD's slope below 0) */
bool ep_check_leaky_relu(const ep_model* m, const ep_node* n, char* why, size_t why_len) {
    float alpha = ep_attr_float(n, "alpha", 0.01f);
    if (!(alpha >= 0.0f) || isinf(alpha))
        return WHY("alpha is %g; hipdnn's relu slope is finite and not negative", (double)alpha);
    return ep_float_tensor(m, n->in[0], "X", why, why_len);
}

bool ep_emit_leaky_relu(lw* w, const ep_node* n, int arg) {
    (void)arg;
    double slope = ep_attr_float(n, "alpha", 0.01f);
    hipdnnPointwiseMode_t mode = HIPDNN_POINTWISE_RELU_FWD;
    hipdnnBackendDescriptor_t x = lw_get_onnx(w, n->in[0]);
    hipdnnBackendDescriptor_t y = lw_make_out(w, n->out[0], &w->vals[n->out[0]].onnx);
    hipdnnBackendDescriptor_t op = lw_op_new(w, HIPDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, NULL);
    return op &&
           lw_ok(w, hipdnnBackendSetAttribute(op, HIPDNN_ATTR_POINTWISE_MODE,
                                              HIPDNN_TYPE_POINTWISE_MODE_EXT, 1, &mode),
                 "pointwise mode") &&
           lw_ok(w, hipdnnBackendSetAttribute(op, HIPDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE,
                                              HIPDNN_TYPE_DOUBLE, 1, &slope),
                 "relu slope") &&
           lw_set_t(w, op, HIPDNN_ATTR_OPERATION_POINTWISE_XDESC, x) &&
           lw_set_t(w, op, HIPDNN_ATTR_OPERATION_POINTWISE_YDESC, y) && lw_op_done(w, op);
}

/* HardSigmoid (arg 0): max(0, min(1, alpha * x + beta)); HardSwish (arg 1): x times that
 * with alpha 1/6, beta 1/2. */
bool ep_emit_hard_sigmoid(lw* w, const ep_node* n, int arg) {
    const ep_shape* s = &w->vals[n->out[0]].onnx;
    float alpha = arg ? 1.0f / 6.0f : ep_attr_float(n, "alpha", 0.2f);
    float beta = arg ? 0.5f : ep_attr_float(n, "beta", 0.5f);
    hipdnnBackendDescriptor_t x = lw_get_onnx(w, n->in[0]);
    hipdnnBackendDescriptor_t ax = lw_tmp(w, "ax", s), axb = lw_tmp(w, "axb", s),
                              lo = lw_tmp(w, "lo", s);
    hipdnnBackendDescriptor_t hs = arg ? lw_tmp(w, "hard_sigmoid", s) : lw_make_out(w, n->out[0], s);
    return lw_pointwise(w, "alpha", HIPDNN_POINTWISE_MUL, x, lw_scalar(w, "alpha", alpha, s->rank), ax) &&
           lw_pointwise(w, "beta", HIPDNN_POINTWISE_ADD, ax, lw_scalar(w, "beta", beta, s->rank), axb) &&
           lw_pointwise(w, "lo", HIPDNN_POINTWISE_MAX, axb, lw_scalar(w, "zero", 0.0f, s->rank), lo) &&
           lw_pointwise(w, "hi", HIPDNN_POINTWISE_MIN, lo, lw_scalar(w, "one", 1.0f, s->rank), hs) &&
           (!arg || lw_pointwise(w, "swish", HIPDNN_POINTWISE_MUL, x, hs, lw_make_out(w, n->out[0], s)));
}

/* Cast from float32 or float16 to either (the output's type is checked for every node) */
bool ep_check_cast(const ep_model* m, const ep_node* n, char* why, size_t why_len) {
    return ep_float_tensor(m, n->in[0], "input", why, why_len);
}

/* Cast: an identity whose output keeps the output's type inside the graph too, so that a
 * cast to float16 rounds there as it does in ORT. */
bool ep_emit_cast(lw* w, const ep_node* n, int arg) {
    (void)arg;
    int v = n->out[0];
    lval* lv = &w->vals[v];
    hipdnnBackendDescriptor_t x = lw_get_onnx(w, n->in[0]);
    if (lv->bind_kind == EP_BIND_OUTPUT)
        return lw_pointwise(w, NULL, HIPDNN_POINTWISE_IDENTITY, x, NULL, lw_make_out(w, v, &lv->onnx));
    bool half = w->m->values[v].elem_type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16;
    lv->desc = lw_tensor(w, w->m->values[v].name, &lv->onnx, NULL,
                         half ? HIPDNN_DATA_HALF : HIPDNN_DATA_FLOAT, NULL, NULL);
    lv->hs = lv->onnx;
    return lw_pointwise(w, NULL, HIPDNN_POINTWISE_IDENTITY, x, NULL, lv->desc);
}
