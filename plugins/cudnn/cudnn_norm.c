/* cudnn_norm.c — hipdnn's norm nodes as cuDNN's NORM_FORWARD and NORM_BACKWARD operations,
 * one operation a node, as cuDNN frontend builds its layernorm, rmsnorm, instancenorm,
 * batchnorm and batchnorm_inference nodes and their backwards.
 *
 * The two models agree on the formulas (y = (x - mean) * inv_variance * scale + bias; RMS
 * without the mean), on inv_variance (1 / sqrt of the biased variance + epsilon), on
 * batchnorm's running statistics (next = (1 - momentum) * running + momentum * the batch's,
 * the variance unbiased), on the modes' and phases' numbers, on the backward (no
 * epsilon: the forward's statistics are given), and on the normalized axes: cuDNN's layer
 * and RMS norms take every axis where scale is not 1, hipdnn's the axes from 1 on where
 * scale spans x, and hipdnn's inference keeps a layer or RMS scale 1 on axis 0 (batch and
 * instance norms: per channel in both).  Where they differ the node is declined, named:
 *   - epsilon and momentum: cuDNN reads them by value (a graph constant, or a host scalar
 *     given at execute), never from device memory;
 *   - zero_centered_gamma (no cuDNN attribute), adaptive layer norm (not translated yet);
 *   - a layer, instance or batch norm without bias (cuDNN frontend always gives one);
 *   - a norm with other nodes in its graph (cuDNN's norm fusions are not translated yet).
 * Which layouts, types and sizes run is cuDNN's to say, as for the other graphs.
 *
 * The tensors are described as cuDNN frontend's samples describe them: a layer or RMS norm
 * over x's trailing axes as [rows, normalized dims..., 1...] (x [B, S, D] as [B * S, D, 1,
 * 1]) where every tensor of the node holds the leading axes as one stride; and since cuDNN's
 * norm engines take 4D and 5D tensors, trailing dims of 1 up to 4 (a batch or instance
 * norm's channel stays axis 1).  Every mode's axes keep their meaning. */
#include <string.h>

#include "cudnn.h"

#define decline(why, len, ...) hipdnnSdkDecline(why, len, CUDNN_ENGINE_NAME, __VA_ARGS__)

#define NORM_MIN_RANK 4

/* One tensor port of a norm operation: hipdnn's port, cuDNN's attribute, and its name. */
typedef struct {
    int port, attr;
    const char* name;
} norm_port;

static const norm_port k_fwd_in[] = {
    {HIPDNN_NORM_X, CD_ATTR_NORM_FWD_XDESC, "x"},
    {HIPDNN_NORM_SCALE, CD_ATTR_NORM_FWD_SCALE_DESC, "scale"},
    {HIPDNN_NORM_BIAS, CD_ATTR_NORM_FWD_BIAS_DESC, "bias"},
    {HIPDNN_NORM_EPSILON, CD_ATTR_NORM_FWD_EPSILON_DESC, "epsilon"},
    {HIPDNN_NORM_EXP_AVG_FACTOR, CD_ATTR_NORM_FWD_EXP_AVG_FACTOR_DESC, "exp_avg_factor"},
    {HIPDNN_NORM_IN_RUNNING_MEAN, CD_ATTR_NORM_FWD_INPUT_RUNNING_MEAN_DESC, "input_running_mean"},
    {HIPDNN_NORM_IN_RUNNING_VAR, CD_ATTR_NORM_FWD_INPUT_RUNNING_VAR_DESC, "input_running_var"}};
static const norm_port k_fwd_out[] = {
    {HIPDNN_NORM_Y, CD_ATTR_NORM_FWD_YDESC, "y"},
    {HIPDNN_NORM_MEAN, CD_ATTR_NORM_FWD_MEAN_DESC, "mean"},
    {HIPDNN_NORM_INV_VARIANCE, CD_ATTR_NORM_FWD_INV_VARIANCE_DESC, "inv_variance"},
    {HIPDNN_NORM_OUT_RUNNING_MEAN, CD_ATTR_NORM_FWD_OUTPUT_RUNNING_MEAN_DESC,
     "output_running_mean"},
    {HIPDNN_NORM_OUT_RUNNING_VAR, CD_ATTR_NORM_FWD_OUTPUT_RUNNING_VAR_DESC, "output_running_var"}};
/* batchnorm_inference: NORM_FORWARD's BATCH mode in the INFERENCE phase, the statistics in */
static const norm_port k_bn_in[] = {
    {HIPDNN_BN_X, CD_ATTR_NORM_FWD_XDESC, "x"},
    {HIPDNN_BN_MEAN, CD_ATTR_NORM_FWD_MEAN_DESC, "mean"},
    {HIPDNN_BN_INV_VARIANCE, CD_ATTR_NORM_FWD_INV_VARIANCE_DESC, "inv_variance"},
    {HIPDNN_BN_SCALE, CD_ATTR_NORM_FWD_SCALE_DESC, "scale"},
    {HIPDNN_BN_BIAS, CD_ATTR_NORM_FWD_BIAS_DESC, "bias"}};
static const norm_port k_bn_out[] = {{HIPDNN_BN_Y, CD_ATTR_NORM_FWD_YDESC, "y"}};
static const norm_port k_bwd_in[] = {
    {HIPDNN_NBWD_X, CD_ATTR_NORM_BWD_XDESC, "x"},
    {HIPDNN_NBWD_DY, CD_ATTR_NORM_BWD_DYDESC, "dy"},
    {HIPDNN_NBWD_SCALE, CD_ATTR_NORM_BWD_SCALE_DESC, "scale"},
    {HIPDNN_NBWD_MEAN, CD_ATTR_NORM_BWD_MEAN_DESC, "mean"},
    {HIPDNN_NBWD_INV_VARIANCE, CD_ATTR_NORM_BWD_INV_VARIANCE_DESC, "inv_variance"}};
static const norm_port k_bwd_out[] = {
    {HIPDNN_NBWD_DX, CD_ATTR_NORM_BWD_DXDESC, "dx"},
    {HIPDNN_NBWD_DSCALE, CD_ATTR_NORM_BWD_DSCALE_DESC, "dscale"},
    {HIPDNN_NBWD_DBIAS, CD_ATTR_NORM_BWD_DBIAS_DESC, "dbias"}};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* t's dims and strides with its first `merge` axes as one (their product, the innermost
 * one's stride: norm_rows checked that they nest), then trailing dims of 1 up to `rank`;
 * a scalar all 1s.  A new dim of 1 takes the stride cuDNN frontend's samples give it: the
 * channel count where the channel (axis 1) is innermost, as PyTorch's channels_last
 * strides a [N, C, 1, 1] tensor, else 1. */
static void norm_dims(const hipdnnSdkTensor* t, int merge, int rank, int64_t* dims,
                      int64_t* strides) {
    int64_t count = 1;
    for (int d = 0; d < t->ndim; ++d) count *= t->dims[d];
    int n = 0;
    if (count > 1) {
        const int m = merge < t->ndim ? merge : 1;
        dims[0] = 1;
        strides[0] = t->strides[m - 1];
        for (int d = 0; d < m; ++d) {
            dims[0] *= t->dims[d];
            if (t->dims[d] != 1) strides[0] = t->strides[d];
        }
        for (n = 1; n + m - 1 < t->ndim; ++n) {
            dims[n] = t->dims[n + m - 1];
            strides[n] = t->strides[n + m - 1];
        }
    }
    const int64_t pad = n >= 2 && strides[1] == 1 ? dims[1] : 1;
    for (; n < rank; ++n) dims[n] = 1, strides[n] = pad;
}

/* The TENSOR descriptor of graph tensor uid as norm_dims describes it (cudnn_tensor pads
 * leading dims of 1, which would move a norm's channel). */
static cd_desc norm_tensor(cd_builder* b, int64_t uid, int merge, const char* label) {
    const int i = cudnn_tensor_slot(b, uid, label);
    if (i < 0) return NULL;
    if (b->slots[i].desc) return b->slots[i].desc;
    const hipdnnSdkTensor* t = &b->g->tensors[i];
    cd_tensor_spec s = {.uid = t->uid, .type = t->data_type, .is_virtual = t->is_virtual,
                        .by_value = t->is_by_value, .has_value = t->has_value, .name = t->name};
    memcpy(s.value, t->value, sizeof(s.value));
    norm_dims(t, merge, b->rank, s.dims, s.strides);
    return b->slots[i].desc = cudnn_new_tensor(b, &s, label);
}

/* Whether t holds its first `merge` axes as one stride (the dims of 1 aside). */
static bool nests(const hipdnnSdkTensor* t, int merge) {
    int inner = -1;
    for (int d = merge - 1; d >= 0; --d) {
        if (t->dims[d] == 1) continue;
        if (inner >= 0 && t->strides[d] != t->strides[inner] * t->dims[inner]) return false;
        inner = d;
    }
    return true;
}

/* How many leading axes of x the node's tensors merge into one: a layer or RMS norm over
 * x's axes k.. (k > 1) is described as cuDNN frontend's samples describe one,
 * [rows, normalized dims..., 1...], where every tensor of the node nests those axes; else
 * 1 (none merged, the axes as hipdnn has them). */
static int norm_rows(const cd_builder* b, const hipdnnSdkNode* n, int64_t mode, int x_port,
                     int scale_port) {
    const hipdnnSdkTensor* x = hipdnnSdkGraphFindTensor(b->g, n->inputs[x_port]);
    const hipdnnSdkTensor* s = hipdnnSdkGraphFindTensor(b->g, n->inputs[scale_port]);
    if ((mode != HIPDNN_LAYER_NORM && mode != HIPDNN_RMS_NORM) || !x || !s || s->ndim != x->ndim)
        return 1;
    bool axes[HIPDNN_MAX_DIMS];
    hipdnnSdkNormAxes(n, x, s, axes);
    int k = 1;
    while (k < x->ndim && !axes[k]) ++k;
    for (int d = k; d < x->ndim; ++d)
        if (!axes[d]) return 1; /* not a suffix: as hipdnn has them */
    const int64_t* ports[2] = {n->inputs, n->outputs};
    for (int j = 0; j < 2; ++j)
        for (int p = 0; p < HIPDNN_MAX_PORTS; ++p) {
            const hipdnnSdkTensor* t = hipdnnSdkGraphFindTensor(b->g, ports[j][p]);
            if (t && t->ndim == x->ndim && !nests(t, k)) return 1;
        }
    return k;
}

/* epsilon and momentum, which cuDNN reads by value */
static bool scalar_port(const norm_port* p) {
    return p->attr == CD_ATTR_NORM_FWD_EPSILON_DESC ||
           p->attr == CD_ATTR_NORM_FWD_EXP_AVG_FACTOR_DESC;
}

static bool storable(hipdnnDataType_t t) {
    return t == HIPDNN_DATA_FLOAT || t == HIPDNN_DATA_HALF || t == HIPDNN_DATA_BFLOAT16;
}

/* What every norm node needs here: alone in its graph, fp32 compute, fp32 / fp16 / bf16
 * tensors, its scalars by value.  The builder's rank becomes x's less the axes merged, 4 at
 * least (no tensor is made yet). */
static bool norm_common(cd_builder* b, const hipdnnSdkNode* n, const char* label,
                        const norm_port* in, int nin, int merge) {
    if (b->g->num_nodes != 1)
        return decline(b->why, b->len, "%s: a norm with other nodes in its graph; cudnn "
                       "translates a norm node on its own (cuDNN's norm fusions are not "
                       "translated yet)", label);
    if (n->compute_type != HIPDNN_DATA_NOT_SET && n->compute_type != HIPDNN_DATA_FLOAT)
        return decline(b->why, b->len, "%s: compute type %s; cudnn translates fp32 compute",
                       label, hipdnnSdkDataTypeName(n->compute_type));
    for (int k = 0; k < nin; ++k) {
        const hipdnnSdkTensor* t = hipdnnSdkGraphFindTensor(b->g, n->inputs[in[k].port]);
        if (!t) continue;
        if (!scalar_port(&in[k]) && !storable(t->data_type))
            return decline(b->why, b->len, "%s: %s '%s' is %s; cudnn translates fp32, fp16 and "
                           "bf16 norms", label, in[k].name, t->name,
                           hipdnnSdkDataTypeName(t->data_type));
        if (scalar_port(&in[k]) && !t->is_by_value)
            return decline(b->why, b->len, "%s: %s '%s' is a tensor in device memory; cuDNN's "
                           "norms read it by value (a float, or a pass-by-value tensor)",
                           label, in[k].name, t->name);
    }
    for (int p = 0; p < HIPDNN_MAX_PORTS; ++p) {
        const hipdnnSdkTensor* t = hipdnnSdkGraphFindTensor(b->g, n->outputs[p]);
        if (t && !storable(t->data_type))
            return decline(b->why, b->len, "%s: output '%s' is %s; cudnn translates fp32, fp16 "
                           "and bf16 norms", label, t->name, hipdnnSdkDataTypeName(t->data_type));
    }
    const hipdnnSdkTensor* x = hipdnnSdkGraphFindTensor(b->g, n->inputs[in[0].port]);
    b->rank = (x ? x->ndim : b->rank) - merge + 1;
    if (b->rank < NORM_MIN_RANK) b->rank = NORM_MIN_RANK;
    return true;
}

static bool mode_translated(cd_builder* b, int64_t mode, bool zero_centered, const char* label) {
    if (mode == HIPDNN_ADA_LAYER_NORM || mode == HIPDNN_GROUP_NORM)
        return decline(b->why, b->len, "%s: cudnn does not translate %s yet", label,
                       mode == HIPDNN_GROUP_NORM ? "group norm" : "adaptive layer norm");
    if (mode < HIPDNN_LAYER_NORM || mode > HIPDNN_RMS_NORM)
        return decline(b->why, b->len, "%s: norm mode %lld is not one cuDNN has", label,
                       (long long)mode);
    if (zero_centered)
        return decline(b->why, b->len, "%s: zero_centered_gamma; cuDNN's norms have no such "
                       "attribute (scale + 1 would be a node of its own)", label);
    return true;
}

/* Sets one attribute; false with the reason naming the node and the attribute. */
static bool set_attr(cd_builder* b, cd_desc d, int name, int type, const void* value,
                     const char* attr, const char* label) {
    const cd_status st = g_cd.set_attribute(d, name, type, 1, value);
    if (st == CD_STATUS_SUCCESS) return true;
    char text[600];
    return decline(b->why, b->len, "%s: cudnnBackendSetAttribute(%s): %s", label, attr,
                   cudnn_status_text(st, text, sizeof(text)));
}

/* Every tensor port the node has, as the operation's attribute. */
static bool set_ports(cd_builder* b, cd_desc op, const int64_t* uids, const norm_port* ports,
                      int count, int merge, const char* label) {
    for (int k = 0; k < count; ++k) {
        if (uids[ports[k].port] == HIPDNN_NO_TENSOR) continue;
        cd_desc t = norm_tensor(b, uids[ports[k].port], merge, label);
        if (!t || !set_attr(b, op, ports[k].attr, CD_TYPE_BACKEND_DESCRIPTOR, &t, ports[k].name,
                            label))
            return false;
    }
    return true;
}

/* The operation of `type` with its mode (and phase, for a forward) and ports, its tensors'
 * first `merge` axes as one, finalized and appended. */
static bool norm_op(cd_builder* b, const hipdnnSdkNode* n, int type, int32_t mode,
                    int32_t phase, const norm_port* in, int nin, const norm_port* out, int nout,
                    int merge, const char* label) {
    cd_desc op = NULL;
    if (!cudnn_graph_desc(b->out, type, &op, b->why, b->len)) return false;
    const bool fwd = type == CD_OPERATION_NORM_FORWARD_DESCRIPTOR;
    if (!set_attr(b, op, fwd ? CD_ATTR_NORM_FWD_MODE : CD_ATTR_NORM_BWD_MODE, CD_TYPE_NORM_MODE,
                  &mode, "NORM_MODE", label) ||
        (fwd && !set_attr(b, op, CD_ATTR_NORM_FWD_PHASE, CD_TYPE_NORM_FWD_PHASE, &phase,
                          "NORM_FWD_PHASE", label)) ||
        !set_ports(b, op, n->inputs, in, nin, merge, label) ||
        !set_ports(b, op, n->outputs, out, nout, merge, label))
        return false;
    const cd_status st = g_cd.finalize(op);
    if (st != CD_STATUS_SUCCESS) {
        char text[600];
        return decline(b->why, b->len, "%s: cuDNN rejects it: cudnnBackendFinalize(%s): %s",
                       label, fwd ? "OPERATION_NORM_FORWARD" : "OPERATION_NORM_BACKWARD",
                       cudnn_status_text(st, text, sizeof(text)));
    }
    return cudnn_graph_add_op(b, op) != NULL;
}

bool cudnn_norm_fwd(cd_builder* b, const hipdnnSdkNode* n, const char* label) {
    const int64_t mode = n->attrs[HIPDNN_NORM_MODE].i[0];
    const int64_t phase = n->attrs[HIPDNN_NORM_PHASE].i[0];
    const int merge = norm_rows(b, n, mode, HIPDNN_NORM_X, HIPDNN_NORM_SCALE);
    if (!mode_translated(b, mode, n->attrs[HIPDNN_NORM_ZERO_CENTERED_GAMMA].i[0] != 0, label) ||
        !norm_common(b, n, label, k_fwd_in, COUNT(k_fwd_in), merge))
        return false;
    if (mode != HIPDNN_RMS_NORM && n->inputs[HIPDNN_NORM_BIAS] == HIPDNN_NO_TENSOR)
        return decline(b->why, b->len, "%s: no bias; cuDNN frontend gives its %s one always "
                       "(cudnn translates it with a bias)", label, hipdnnSdkNormModeName(mode));
    return norm_op(b, n, CD_OPERATION_NORM_FORWARD_DESCRIPTOR, (int32_t)mode, (int32_t)phase,
                   k_fwd_in, COUNT(k_fwd_in), k_fwd_out, COUNT(k_fwd_out), merge, label);
}

bool cudnn_batchnorm_inference(cd_builder* b, const hipdnnSdkNode* n, const char* label) {
    if (!norm_common(b, n, label, k_bn_in, COUNT(k_bn_in), 1)) return false;
    return norm_op(b, n, CD_OPERATION_NORM_FORWARD_DESCRIPTOR, HIPDNN_BATCH_NORM,
                   HIPDNN_NORM_FWD_INFERENCE, k_bn_in, COUNT(k_bn_in), k_bn_out,
                   COUNT(k_bn_out), 1, label);
}

bool cudnn_norm_bwd(cd_builder* b, const hipdnnSdkNode* n, const char* label) {
    const int64_t mode = n->attrs[HIPDNN_NBWD_MODE].i[0];
    const int merge = norm_rows(b, n, mode, HIPDNN_NBWD_X, HIPDNN_NBWD_SCALE);
    if (!mode_translated(b, mode, n->attrs[HIPDNN_NBWD_ZERO_CENTERED_GAMMA].i[0] != 0, label) ||
        !norm_common(b, n, label, k_bwd_in, COUNT(k_bwd_in), merge))
        return false;
    return norm_op(b, n, CD_OPERATION_NORM_BACKWARD_DESCRIPTOR, (int32_t)mode, -1, k_bwd_in,
                   COUNT(k_bwd_in), k_bwd_out, COUNT(k_bwd_out), merge, label);
}
