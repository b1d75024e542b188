/* lower_ops.c — the ONNX ops' lowerings op_table.c names: each adds a node's hipdnn
 * operations to the graph lower.c is building, through lowering.h's helpers; and the
 * `empty` lowerings of a node whose input has no elements but whose output has some. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lowering.h"

/* lowering.h; NULL when it fails (the reason kept in w). */
hipdnnBackendDescriptor_t lw_norm_fwd_op(lw* w, hipdnnBackendNormMode_t mode,
                                         hipdnnBackendNormFwdPhase_t phase,
                                         hipdnnBackendDescriptor_t x,
                                         hipdnnBackendDescriptor_t scale,
                                         hipdnnBackendDescriptor_t bias, float eps, int rank) {
    hipdnnBackendDescriptor_t op = lw_op_new(w, HIPDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR, NULL);
    bool ok = op &&
              lw_ok(w, hipdnnBackendSetAttribute(op, HIPDNN_ATTR_OPERATION_NORM_FWD_MODE,
                                                 HIPDNN_TYPE_NORM_MODE_EXT, 1, &mode), "norm mode") &&
              lw_ok(w, hipdnnBackendSetAttribute(op, HIPDNN_ATTR_OPERATION_NORM_FWD_PHASE,
                                                 HIPDNN_TYPE_NORM_FWD_PHASE_EXT, 1, &phase),
                    "norm phase") &&
              lw_set_t(w, op, HIPDNN_ATTR_OPERATION_NORM_FWD_XDESC, x) &&
              lw_set_t(w, op, HIPDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC, scale) &&
              (!bias || lw_set_t(w, op, HIPDNN_ATTR_OPERATION_NORM_FWD_BIAS_DESC, bias)) &&
              lw_set_t(w, op, HIPDNN_ATTR_OPERATION_NORM_FWD_EPSILON_DESC,
                       lw_scalar(w, "epsilon", eps, rank));
    return ok ? op : NULL;
}

/* ---- ONNX ops: the lowerings op_table.c names --------------------------------------- */

/* Add, Sub, Mul, Div: arg is the pointwise mode */
bool ep_emit_binary(lw* w, const ep_node* n, int arg) {
    hipdnnPointwiseMode_t mode = (hipdnnPointwiseMode_t)arg;
    const ep_shape* y = &w->vals[n->out[0]].onnx;
    hipdnnBackendDescriptor_t ta = lw_get_bcast(w, n->in[0], y->rank),
                              tb = lw_get_bcast(w, n->in[1], y->rank);
    return lw_pointwise(w, NULL, mode, ta, tb, lw_make_out(w, n->out[0], y));
}

static bool unary(lw* w, const ep_node* n, hipdnnPointwiseMode_t mode) {
    hipdnnBackendDescriptor_t x = lw_get_onnx(w, n->in[0]);
    return lw_pointwise(w, NULL, mode, x, NULL, lw_make_out(w, n->out[0], &w->vals[n->out[0]].onnx));
}

/* Relu, Sigmoid, Tanh: arg is the pointwise mode */
bool ep_emit_unary(lw* w, const ep_node* n, int arg) {
    return unary(w, n, (hipdnnPointwiseMode_t)arg);
}

bool ep_emit_gelu(lw* w, const ep_node* n, int arg) {
    (void)arg;
    return unary(w, n, strcmp(ep_attr_string(n, "approximate", "none"), "tanh")
                           ? HIPDNN_POINTWISE_GELU_FWD
                           : HIPDNN_POINTWISE_GELU_APPROX_TANH_FWD);
}

static int64_t list_at(const ep_node* n, const char* name, int i, int count, int64_t dflt) {
    const ep_attr* a = ep_attr_get(n, name);
    return a && a->type == ORT_OP_ATTR_INTS && a->n_ints == (size_t)count ? a->ints[i] : dflt;
}

/* Conv as conv_fprop (X, W -> Y) and ConvTranspose as conv_dgrad (the data gradient DX = Y
 * of a convolution whose output gradient DY is X, over the same W), each with a bias add
 * after when there is one: arg is 1 for ConvTranspose. */
bool ep_emit_conv(lw* w, const ep_node* n, int arg) {
    bool tr = arg != 0;
    const ep_shape* xs = &w->vals[n->in[0]].onnx;
    const ep_shape* ws = &w->vals[n->in[1]].onnx;
    const ep_shape* ys = &w->vals[n->out[0]].onnx;
    int sp = xs->rank - 2;
    int64_t pre[3], post[3], stride[3], dil[3];
    for (int i = 0; i < sp; ++i) {
        stride[i] = list_at(n, "strides", i, sp, 1);
        dil[i] = list_at(n, "dilations", i, sp, 1);
        if (tr)
            ep_conv_transpose_pads(n, i, sp, xs->dims[2 + i], ws->dims[2 + i], &pre[i], &post[i],
                                   NULL);
        else
            ep_conv_pads(n, i, sp, xs->dims[2 + i], ws->dims[2 + i], stride[i], dil[i], &pre[i],
                         &post[i]);
    }
    bool has_bias = n->n_in >= 3 && n->in[2] >= 0;
    hipdnnBackendDescriptor_t x = lw_get_onnx(w, n->in[0]), f = lw_get_onnx(w, n->in[1]);
    hipdnnBackendDescriptor_t y = has_bias ? lw_tmp(w, "conv", ys) : lw_make_out(w, n->out[0], ys);
    hipdnnBackendDescriptor_t op =
        lw_op_new(w, tr ? HIPDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR
                     : HIPDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
               has_bias ? "conv" : NULL);
    hipdnnConvolutionMode_t mode = HIPDNN_CROSS_CORRELATION;
    bool ports = tr ? lw_set_t(w, op, HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, x) &&
                          lw_set_t(w, op, HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, f) &&
                          lw_set_t(w, op, HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, y)
                    : lw_set_t(w, op, HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x) &&
                          lw_set_t(w, op, HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, f) &&
                          lw_set_t(w, op, HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, y);
    if (!op || !ports ||
        !lw_ok(w, hipdnnBackendSetAttribute(op, HIPDNN_ATTR_CONVOLUTION_PRE_PADDINGS, HIPDNN_TYPE_INT64,
                                         sp, pre), "pre paddings") ||
        !lw_ok(w, hipdnnBackendSetAttribute(op, HIPDNN_ATTR_CONVOLUTION_POST_PADDINGS,
                                         HIPDNN_TYPE_INT64, sp, post), "post paddings") ||
        !lw_ok(w, hipdnnBackendSetAttribute(op, HIPDNN_ATTR_CONVOLUTION_FILTER_STRIDES,
                                         HIPDNN_TYPE_INT64, sp, stride), "strides") ||
        !lw_ok(w, hipdnnBackendSetAttribute(op, HIPDNN_ATTR_CONVOLUTION_DILATIONS, HIPDNN_TYPE_INT64,
                                         sp, dil), "dilations") ||
        !lw_ok(w, hipdnnBackendSetAttribute(op, HIPDNN_ATTR_CONVOLUTION_CONV_MODE,
                                         HIPDNN_TYPE_CONVOLUTION_MODE_EXT, 1, &mode), "conv mode") ||
        !lw_op_done(w, op))
        return false;
    if (!has_bias) return true;
    ep_shape bs = {ys->rank, {0}};
    for (int i = 0; i < ys->rank; ++i) bs.dims[i] = i == 1 ? ys->dims[1] : 1;
    return lw_pointwise(w, "bias", HIPDNN_POINTWISE_ADD, y, lw_get(w, n->in[2], &bs),
                     lw_make_out(w, n->out[0], ys));
}

bool ep_emit_matmul(lw* w, const ep_node* n, int arg) {
    (void)arg;
    const ep_shape* y = &w->vals[n->out[0]].onnx;
    ep_shape a = lw_aligned(&w->vals[n->in[0]].onnx, y->rank);
    ep_shape b = lw_aligned(&w->vals[n->in[1]].onnx, y->rank);
    hipdnnBackendDescriptor_t ta = lw_get(w, n->in[0], &a), tb = lw_get(w, n->in[1], &b);
    hipdnnBackendDescriptor_t tc = lw_make_out(w, n->out[0], y);
    hipdnnBackendDescriptor_t op = lw_op_new(w, HIPDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, NULL);
    return op && lw_set_t(w, op, HIPDNN_ATTR_OPERATION_MATMUL_ADESC, ta) &&
           lw_set_t(w, op, HIPDNN_ATTR_OPERATION_MATMUL_BDESC, tb) &&
           lw_set_t(w, op, HIPDNN_ATTR_OPERATION_MATMUL_CDESC, tc) && lw_op_done(w, op);
}

/* Gemm operand k, transposed when its trans attribute says so: [rows, cols] of the
 * stored [cols, rows], read through strides (capability.c claims this only for memory
 * given to the fused node). */
static hipdnnBackendDescriptor_t gemm_operand(lw* w, const ep_node* n, int k, bool trans) {
    int v = n->in[k];
    const ep_shape* s = &w->vals[v].onnx;
    if (!trans) return lw_get(w, v, s);
    if (w->vals[v].bind_kind != EP_BIND_INPUT) {
        lw_failf(w, "trans%c on '%s', which the fused graph computes", k ? 'B' : 'A',
              w->m->values[v].name);
        return NULL;
    }
    ep_shape t = {2, {s->dims[1], s->dims[0]}};
    int64_t strides[2] = {1, s->dims[1]};
    return lw_bound(w, v, &t, strides);
}

bool ep_emit_gemm(lw* w, const ep_node* n, int arg) {
    (void)arg;
    const ep_shape* y = &w->vals[n->out[0]].onnx;
    float alpha = ep_attr_float(n, "alpha", 1.0f), beta = ep_attr_float(n, "beta", 1.0f);
    bool has_c = n->n_in >= 3 && n->in[2] >= 0 && beta != 0.0f;
    bool direct = !has_c && alpha == 1.0f;
    hipdnnBackendDescriptor_t a = gemm_operand(w, n, 0, ep_attr_int(n, "transA", 0) != 0);
    hipdnnBackendDescriptor_t b = gemm_operand(w, n, 1, ep_attr_int(n, "transB", 0) != 0);
    hipdnnBackendDescriptor_t mm = direct ? lw_make_out(w, n->out[0], y) : lw_tmp(w, "matmul", y);
    hipdnnBackendDescriptor_t op = lw_op_new(w, HIPDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR,
                                          direct ? NULL : "matmul");
    if (!op || !lw_set_t(w, op, HIPDNN_ATTR_OPERATION_MATMUL_ADESC, a) ||
        !lw_set_t(w, op, HIPDNN_ATTR_OPERATION_MATMUL_BDESC, b) ||
        !lw_set_t(w, op, HIPDNN_ATTR_OPERATION_MATMUL_CDESC, mm) || !lw_op_done(w, op))
        return false;
    if (direct) return true;
    hipdnnBackendDescriptor_t acc = mm;
    if (alpha != 1.0f) {
        hipdnnBackendDescriptor_t scaled = has_c ? lw_tmp(w, "alpha", y) : lw_make_out(w, n->out[0], y);
        if (!lw_pointwise(w, "alpha", HIPDNN_POINTWISE_MUL, mm, lw_scalar(w, "alpha", alpha, 2), scaled))
            return false;
        acc = scaled;
    }
    if (!has_c) return true;
    ep_shape cs = lw_aligned(&w->vals[n->in[2]].onnx, 2);
    hipdnnBackendDescriptor_t c = lw_get(w, n->in[2], &cs);
    if (beta != 1.0f) {
        hipdnnBackendDescriptor_t cb = lw_tmp(w, "beta", &cs);
        if (!lw_pointwise(w, "beta", HIPDNN_POINTWISE_MUL, c, lw_scalar(w, "beta", beta, 2), cb))
            return false;
        c = cb;
    }
    return lw_pointwise(w, "c", HIPDNN_POINTWISE_ADD, acc, c, lw_make_out(w, n->out[0], y));
}

/* Softmax over its axes (shape.c's ep_softmax_axes): y = exp(x - max) / sum(exp(x - max));
 * LogSoftmax (arg 1): y = (x - max) - log(sum(exp(x - max))). */
bool ep_emit_softmax(lw* w, const ep_node* n, int arg) {
    const ep_shape* s = &w->vals[n->out[0]].onnx;
    ep_shape red = *s;
    bool axes[EP_MAX_RANK];
    char why[256];
    if (!ep_softmax_axes(n, s->rank, axes, why, sizeof(why))) {
        lw_failf(w, "%s", why);
        return false;
    }
    for (int i = 0; i < s->rank; ++i)
        if (axes[i]) red.dims[i] = 1;
    hipdnnBackendDescriptor_t x = lw_get_onnx(w, n->in[0]);
    hipdnnBackendDescriptor_t mx = lw_tmp(w, "max", &red), d = lw_tmp(w, "shifted", s),
                              e = lw_tmp(w, "exp", s), z = lw_tmp(w, "sum", &red);
    if (!lw_reduction(w, "max", HIPDNN_REDUCE_TENSOR_MAX, x, mx) ||
        !lw_pointwise(w, "shift", HIPDNN_POINTWISE_SUB, x, mx, d) ||
        !lw_pointwise(w, "exp", HIPDNN_POINTWISE_EXP, d, NULL, e) ||
        !lw_reduction(w, "sum", HIPDNN_REDUCE_TENSOR_ADD, e, z))
        return false;
    if (!arg)
        return lw_pointwise(w, "normalize", HIPDNN_POINTWISE_DIV, e, z,
                            lw_make_out(w, n->out[0], s));
    hipdnnBackendDescriptor_t lz = lw_tmp(w, "log_sum", &red);
    return lw_pointwise(w, "log", HIPDNN_POINTWISE_LOG, z, NULL, lz) &&
           lw_pointwise(w, "normalize", HIPDNN_POINTWISE_SUB, d, lz, lw_make_out(w, n->out[0], s));
}

/* out = running * momentum + batch * (1 - momentum), ONNX's running statistic. */
static bool running_stat(lw* w, const char* what, hipdnnBackendDescriptor_t running,
                         hipdnnBackendDescriptor_t batch, float mom, const ep_shape* ps,
                         hipdnnBackendDescriptor_t out) {
    char nm[2][64];
    snprintf(nm[0], sizeof(nm[0]), "%s_kept", what);
    snprintf(nm[1], sizeof(nm[1]), "%s_step", what);
    hipdnnBackendDescriptor_t kept = lw_tmp(w, nm[0], ps), step = lw_tmp(w, nm[1], ps);
    return lw_pointwise(w, nm[0], HIPDNN_POINTWISE_MUL, running,
                        lw_scalar(w, "momentum", mom, ps->rank), kept) &&
           lw_pointwise(w, nm[1], HIPDNN_POINTWISE_MUL, batch,
                        lw_scalar(w, "one_minus_momentum", 1.0f - mom, ps->rank), step) &&
           lw_pointwise(w, what, HIPDNN_POINTWISE_ADD, kept, step, out);
}

/* BatchNormalization's training mode (opset 14+) as norm_forward's BATCH_NORM in the
 * training phase.  ONNX: running = running * momentum + batch * (1 - momentum), the batch
 * variance biased; hipdnn: next = (1 - f) * running + f * batch, the variance unbiased
 * (count / (count - 1) times the biased one).  So f = 1 - momentum, and running_var goes
 * in times count / (count - 1) and comes out times (count - 1) / count.  Over one value
 * per channel hipdnn keeps no running statistics (no unbiased variance); there they are
 * pointwise nodes on the norm's mean and the one value's (x - mean)^2.  Both running outputs are
 * used (capability.c): a virtual tensor nothing reads is refused. */
static bool emit_batchnorm_training(lw* w, const ep_node* n, hipdnnBackendDescriptor_t x,
                                    const ep_shape* xs, const ep_shape* ps, float eps) {
    float mom = ep_attr_float(n, "momentum", 0.9f);
    int64_t count = 1;
    for (int i = 0; i < xs->rank; ++i) count *= i == 1 ? 1 : xs->dims[i];
    hipdnnBackendDescriptor_t scale = lw_get(w, n->in[1], ps), bias = lw_get(w, n->in[2], ps),
                              rm = lw_get(w, n->in[3], ps), rv = lw_get(w, n->in[4], ps);
    hipdnnBackendDescriptor_t mean = lw_tmp(w, "mean", ps);
    hipdnnBackendDescriptor_t op = lw_norm_fwd_op(w, HIPDNN_BATCH_NORM, HIPDNN_NORM_FWD_TRAINING,
                                                  x, scale, bias, eps, ps->rank);
    if (!op || !lw_set_t(w, op, HIPDNN_ATTR_OPERATION_NORM_FWD_YDESC, lw_make_out(w, n->out[0], xs)))
        return false;
    if (count < 2) {
        hipdnnBackendDescriptor_t d = lw_tmp(w, "centered", ps), var = lw_tmp(w, "variance", ps);
        return lw_set_t(w, op, HIPDNN_ATTR_OPERATION_NORM_FWD_MEAN_DESC, mean) &&
               lw_op_done(w, op) &&
               lw_pointwise(w, "centered", HIPDNN_POINTWISE_SUB, x, mean, d) &&
               lw_pointwise(w, "variance", HIPDNN_POINTWISE_MUL, d, d, var) &&
               running_stat(w, "running_mean", rm, mean, mom, ps, lw_make_out(w, n->out[1], ps)) &&
               running_stat(w, "running_var", rv, var, mom, ps, lw_make_out(w, n->out[2], ps));
    }
    double c = (double)count;
    hipdnnBackendDescriptor_t rv_in = lw_tmp(w, "running_var_unbiased", ps),
                              rv_next = lw_tmp(w, "next_running_var_unbiased", ps);
    return lw_pointwise(w, "running_var_unbiased", HIPDNN_POINTWISE_MUL, rv,
                        lw_scalar(w, "bessel", (float)(c / (c - 1.0)), ps->rank), rv_in) &&
           lw_set_t(w, op, HIPDNN_ATTR_OPERATION_NORM_FWD_EXP_AVG_FACTOR_DESC,
                    lw_scalar(w, "exp_avg_factor", 1.0f - mom, ps->rank)) &&
           lw_set_t(w, op, HIPDNN_ATTR_OPERATION_NORM_FWD_INPUT_RUNNING_MEAN_DESC, rm) &&
           lw_set_t(w, op, HIPDNN_ATTR_OPERATION_NORM_FWD_INPUT_RUNNING_VAR_DESC, rv_in) &&
           lw_set_t(w, op, HIPDNN_ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_MEAN_DESC,
                    lw_make_out(w, n->out[1], ps)) &&
           lw_set_t(w, op, HIPDNN_ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_VAR_DESC, rv_next) &&
           lw_op_done(w, op) &&
           lw_pointwise(w, "running_var", HIPDNN_POINTWISE_MUL, rv_next,
                        lw_scalar(w, "unbessel", (float)((c - 1.0) / c), ps->rank),
                        lw_make_out(w, n->out[2], ps));
}

bool ep_emit_batchnorm(lw* w, const ep_node* n, int arg) {
    (void)arg;
    const ep_shape* xs = &w->vals[n->in[0]].onnx;
    ep_shape ps = {xs->rank, {0}};
    for (int i = 0; i < xs->rank; ++i) ps.dims[i] = i == 1 ? xs->dims[1] : 1;
    float eps = ep_attr_float(n, "epsilon", 1e-5f);
    if (n->since_version >= 14 && ep_attr_int(n, "training_mode", 0))
        return emit_batchnorm_training(w, n, lw_get_onnx(w, n->in[0]), xs, &ps, eps);
    hipdnnBackendDescriptor_t x = lw_get_onnx(w, n->in[0]);
    hipdnnBackendDescriptor_t scale = lw_get(w, n->in[1], &ps), bias = lw_get(w, n->in[2], &ps),
                              mean = lw_get(w, n->in[3], &ps), var = lw_get(w, n->in[4], &ps);
    hipdnnBackendDescriptor_t ve = lw_tmp(w, "var_eps", &ps), inv = lw_tmp(w, "inv_std", &ps);
    if (!lw_pointwise(w, "var_eps", HIPDNN_POINTWISE_ADD, var, lw_scalar(w, "epsilon", eps, ps.rank), ve) ||
        !lw_pointwise(w, "inv_std", HIPDNN_POINTWISE_RSQRT, ve, NULL, inv))
        return false;
    hipdnnBackendDescriptor_t op =
        lw_op_new(w, HIPDNN_BACKEND_OPERATION_BATCHNORM_INFERENCE_DESCRIPTOR_EXT, NULL);
    return op && lw_set_t(w, op, HIPDNN_ATTR_OPERATION_BN_INFERENCE_X_EXT, x) &&
           lw_set_t(w, op, HIPDNN_ATTR_OPERATION_BN_INFERENCE_MEAN_EXT, mean) &&
           lw_set_t(w, op, HIPDNN_ATTR_OPERATION_BN_INFERENCE_INV_VARIANCE_EXT, inv) &&
           lw_set_t(w, op, HIPDNN_ATTR_OPERATION_BN_INFERENCE_SCALE_EXT, scale) &&
           lw_set_t(w, op, HIPDNN_ATTR_OPERATION_BN_INFERENCE_BIAS_EXT, bias) &&
           lw_set_t(w, op, HIPDNN_ATTR_OPERATION_BN_INFERENCE_Y_EXT, lw_make_out(w, n->out[0], xs)) &&
           lw_op_done(w, op);
}

/* LAYER_NORM (arg 1: RMSNormalization's RMS_NORM) over X's dims from axis on (axis 0: X
 * viewed as [1, ...], axis 1), in the training phase when Mean or InvStdDev is used. */
bool ep_emit_layernorm(lw* w, const ep_node* n, int arg) {
    ep_shape xs = w->vals[n->in[0]].onnx;
    int64_t axis = ep_attr_int(n, "axis", -1);
    if (axis < 0) axis += xs.rank;
    if (axis == 0) {
        xs = lw_aligned(&xs, xs.rank + 1);
        axis = 1;
    }
    ep_shape ps = xs, ss = xs; /* parameters: 1 before axis; statistics: 1 from axis on */
    for (int i = 0; i < xs.rank; ++i) {
        if (i < axis) ps.dims[i] = 1;
        else ss.dims[i] = 1;
    }
    bool stats = (n->n_out > 1 && n->out[1] >= 0) || (n->n_out > 2 && n->out[2] >= 0);
    float eps = ep_attr_float(n, "epsilon", 1e-5f);
    hipdnnBackendDescriptor_t x = lw_get(w, n->in[0], &xs), scale = lw_get(w, n->in[1], &ps);
    hipdnnBackendDescriptor_t bias = n->n_in >= 3 && n->in[2] >= 0 ? lw_get(w, n->in[2], &ps) : NULL;
    hipdnnBackendDescriptor_t op =
        lw_norm_fwd_op(w, arg ? HIPDNN_RMS_NORM : HIPDNN_LAYER_NORM,
                       stats ? HIPDNN_NORM_FWD_TRAINING : HIPDNN_NORM_FWD_INFERENCE, x, scale,
                       bias, eps, xs.rank);
    bool ok = op &&
              lw_set_t(w, op, HIPDNN_ATTR_OPERATION_NORM_FWD_YDESC, lw_make_out(w, n->out[0], &xs));
    static const hipdnnBackendAttributeName_t stat_port[2] = {
        HIPDNN_ATTR_OPERATION_NORM_FWD_MEAN_DESC, HIPDNN_ATTR_OPERATION_NORM_FWD_INV_VARIANCE_DESC};
    for (int k = 1; ok && k < 3 && k < n->n_out; ++k)
        if (n->out[k] >= 0) ok = lw_set_t(w, op, stat_port[k - 1], lw_make_out(w, n->out[k], &ss));
    return ok && lw_op_done(w, op);
}

/* ReduceSum, ReduceMean, ReduceMax, ReduceMin: arg is the reduction operator */
bool ep_emit_reduce(lw* w, const ep_node* n, int arg) {
    const ep_shape* xs = &w->vals[n->in[0]].onnx;
    bool red[EP_MAX_RANK];
    char why[256];
    if (!ep_reduce_axes(w->m, n, xs->rank, red, why, sizeof(why))) {
        lw_failf(w, "%s", why);
        return false;
    }
    ep_shape ks = *xs; /* kept dims; keepdims=0's output is the same memory */
    for (int i = 0; i < xs->rank; ++i)
        if (red[i]) ks.dims[i] = 1;
    hipdnnReduceTensorOp_t mode = (hipdnnReduceTensorOp_t)arg;
    return lw_reduction(w, NULL, mode, lw_get_onnx(w, n->in[0]), lw_make_out(w, n->out[0], &ks));
}

/* Reshape and Flatten: the same elements in other dims, row-major. */
bool ep_emit_reshape(lw* w, const ep_node* n, int arg) {
    (void)arg;
    hipdnnBackendDescriptor_t x = lw_get_onnx(w, n->in[0]);
    return lw_reshape(w, x, lw_make_out(w, n->out[0], &w->vals[n->out[0]].onnx));
}

/* ---- an input with no elements, an output with some: the rows' `empty` lowerings ------- */

/* Output 0 of n with every element v: the kernel's float 0 in memory (EP_BIND_ZERO) plus
 * v, both broadcast.  A pointwise op of by-value scalars alone would do on the host, but a
 * GPU kernel reads at least one tensor from memory. */
static bool fill_output(lw* w, const ep_node* n, float v) {
    const ep_shape* y = &w->vals[n->out[0]].onnx;
    ep_shape ones = {y->rank, {0}};
    int64_t strides[EP_MAX_RANK], uid = 0;
    for (int i = 0; i < y->rank; ++i) ones.dims[i] = strides[i] = 1;
    char nm[160];
    snprintf(nm, sizeof(nm), "%s/zero", w->label);
    hipdnnBackendDescriptor_t zero = lw_tensor(w, nm, &ones, strides, HIPDNN_DATA_FLOAT, NULL, &uid);
    if (zero) lw_bind(w, zero, uid, EP_BIND_ZERO, 0);
    return lw_pointwise(w, "fill", HIPDNN_POINTWISE_ADD, zero, lw_scalar(w, "value", v, y->rank),
                     lw_make_out(w, n->out[0], y));
}

/* A sum over no elements: 0; ONNX's identity of the reduction, -inf for the max, +inf
 * for the min, 1 for the product, 0 for the L1 and L2 norms.  ONNX leaves the mean of nothing undefined; ORT's CPU EP gives 0, as here. */
bool ep_empty_reduce(lw* w, const ep_node* n, int arg) {
    hipdnnReduceTensorOp_t mode = (hipdnnReduceTensorOp_t)arg;
    return fill_output(w, n, mode == HIPDNN_REDUCE_TENSOR_MAX   ? -INFINITY
                             : mode == HIPDNN_REDUCE_TENSOR_MIN ? INFINITY
                             : mode == HIPDNN_REDUCE_TENSOR_MUL ? 1.0f
                                                                : 0.0f);
}

/* MatMul over K = 0 (or a batch dim of 0 broadcast away): zeros. */
bool ep_empty_matmul(lw* w, const ep_node* n, int arg) {
    (void)arg;
    return fill_output(w, n, 0.0f);
}

/* Gemm over K = 0: alpha times a product of no terms, zero (whatever alpha, as ORT's CPU
 * EP), plus beta * C. */
bool ep_empty_gemm(lw* w, const ep_node* n, int arg) {
    (void)arg;
    float beta = ep_attr_float(n, "beta", 1.0f);
    if (n->n_in < 3 || n->in[2] < 0 || beta == 0.0f) return fill_output(w, n, 0.0f);
    ep_shape cs = lw_aligned(&w->vals[n->in[2]].onnx, 2);
    return lw_pointwise(w, "beta", HIPDNN_POINTWISE_MUL, lw_get(w, n->in[2], &cs),
                     lw_scalar(w, "beta", beta, 2), lw_make_out(w, n->out[0], &w->vals[n->out[0]].onnx));
}

/* Conv and ConvTranspose over no input channels (or an image of no pixels, padded): the
 * bias on every pixel, or zeros. */
bool ep_empty_conv(lw* w, const ep_node* n, int arg) {
    (void)arg;
    if (n->n_in < 3 || n->in[2] < 0) return fill_output(w, n, 0.0f);
    const ep_shape* ys = &w->vals[n->out[0]].onnx;
    ep_shape bs = {ys->rank, {0}};
    for (int i = 0; i < ys->rank; ++i) bs.dims[i] = i == 1 ? ys->dims[1] : 1;
    return lw_pointwise(w, "bias", HIPDNN_POINTWISE_IDENTITY, lw_get(w, n->in[2], &bs), NULL,
                     lw_make_out(w, n->out[0], ys));
}
