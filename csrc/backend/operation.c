/* OPERATION_* descriptors.  All share one state (an SDK node plus the tensor
 * descriptors on its ports); a small table per op type maps attributes to ports. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "descriptor.h"
#include "error.h"

#define OP(d) ((hipdnnOperationState*)(d)->state)

typedef struct {
    hipdnnBackendAttributeName_t attr;
    const char* attr_name;
    bool is_output;
    int port;
} port_attr;

typedef struct {
    hipdnnOpKind_t kind;
    const char* desc_name;
    const port_attr* ports;
    int num_ports;
} op_table;

static const port_attr k_conv_ports[] = {
    {HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, "X", false, HIPDNN_CONV_X},
    {HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, "W", false, HIPDNN_CONV_W},
    {HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, "Y", true, HIPDNN_CONV_Y},
};
static const port_attr k_matmul_ports[] = {
    {HIPDNN_ATTR_OPERATION_MATMUL_ADESC, "ADESC", false, HIPDNN_MATMUL_A},
    {HIPDNN_ATTR_OPERATION_MATMUL_BDESC, "BDESC", false, HIPDNN_MATMUL_B},
    {HIPDNN_ATTR_OPERATION_MATMUL_CDESC, "CDESC", true, HIPDNN_MATMUL_C},
};
static const port_attr k_pointwise_ports[] = {
    {HIPDNN_ATTR_OPERATION_POINTWISE_XDESC, "XDESC", false, HIPDNN_PW_X},
    {HIPDNN_ATTR_OPERATION_POINTWISE_BDESC, "BDESC", false, HIPDNN_PW_B},
    {HIPDNN_ATTR_OPERATION_POINTWISE_YDESC, "YDESC", true, HIPDNN_PW_Y},
};
static const port_attr k_bn_ports[] = {
    {HIPDNN_ATTR_OPERATION_BN_INFERENCE_X, "X", false, HIPDNN_BN_X},
    {HIPDNN_ATTR_OPERATION_BN_INFERENCE_MEAN, "MEAN", false, HIPDNN_BN_MEAN},
    {HIPDNN_ATTR_OPERATION_BN_INFERENCE_INV_VARIANCE, "INV_VARIANCE", false,
     HIPDNN_BN_INV_VARIANCE},
    {HIPDNN_ATTR_OPERATION_BN_INFERENCE_SCALE, "SCALE", false, HIPDNN_BN_SCALE},
    {HIPDNN_ATTR_OPERATION_BN_INFERENCE_BIAS, "BIAS", false, HIPDNN_BN_BIAS},
    {HIPDNN_ATTR_OPERATION_BN_INFERENCE_Y, "Y", true, HIPDNN_BN_Y},
};

#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))
static const op_table k_conv = {HIPDNN_OP_CONV_FPROP, "OPERATION_CONVOLUTION_FORWARD",
                                k_conv_ports, N_OF(k_conv_ports)};
static const op_table k_matmul = {HIPDNN_OP_MATMUL, "OPERATION_MATMUL", k_matmul_ports,
                                  N_OF(k_matmul_ports)};
static const op_table k_pointwise = {HIPDNN_OP_POINTWISE, "OPERATION_POINTWISE",
                                     k_pointwise_ports, N_OF(k_pointwise_ports)};
static const op_table k_bn = {HIPDNN_OP_BATCHNORM_INFERENCE, "OPERATION_BATCHNORM_INFERENCE",
                              k_bn_ports, N_OF(k_bn_ports)};

static const op_table* table_of(hipdnnBackendDescriptor_t d) {
    switch (d->type) {
    case HIPDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR: return &k_conv;
    case HIPDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR: return &k_matmul;
    case HIPDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR: return &k_pointwise;
    default: return &k_bn;
    }
}

static void op_init(hipdnnBackendDescriptor_t d) {
    hipdnnSdkNodeInit(&OP(d)->node, table_of(d)->kind);
    OP(d)->node.mode = -1; /* pointwise: must be set */
}

static void op_destroy(hipdnnBackendDescriptor_t d) {
    hipdnnOperationState* s = OP(d);
    for (int i = 0; i < HIPDNN_MAX_PORTS; ++i) {
        hipdnnDescriptorRelease(s->in[i]);
        hipdnnDescriptorRelease(s->out[i]);
    }
    free(s->node.name);
}

static const port_attr* find_port(const op_table* t, hipdnnBackendAttributeName_t name) {
    for (int i = 0; i < t->num_ports; ++i)
        if (t->ports[i].attr == name) return &t->ports[i];
    return NULL;
}

/* Spatial arrays (conv): all four must agree in count when set. */
static hipdnnStatus_t set_spatial(hipdnnOperationState* s, const char* desc, const char* attr,
                                  int64_t* dst, hipdnnBackendAttributeType_t type, int64_t count,
                                  const void* v, int64_t min_value) {
    hipdnnStatus_t st =
        hipdnnAttrExpect(desc, attr, HIPDNN_TYPE_INT64, type, count, 1, HIPDNN_MAX_SPATIAL, v);
    if (st) return st;
    const int64_t* x = v;
    for (int64_t i = 0; i < count; ++i)
        if (x[i] < min_value)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                              "conv_fprop '%s': %s[%lld] = %lld; must be >= %lld", s->node.name ? s->node.name : "",
                              attr, (long long)i, (long long)x[i], (long long)min_value);
    if (s->node.num_spatial == 0) {
        /* First spatial attribute fixes the count; fill defaults for the others. */
        s->node.num_spatial = (int32_t)count;
        for (int64_t i = 0; i < count; ++i) {
            s->node.stride[i] = 1;
            s->node.dilation[i] = 1;
        }
    } else if (s->node.num_spatial != count) {
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                          "conv_fprop '%s': %s has %lld entries but another spatial attribute "
                          "has %d",
                          s->node.name ? s->node.name : "", attr, (long long)count,
                          (int)s->node.num_spatial);
    }
    memcpy(dst, x, (size_t)count * sizeof(int64_t));
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t set_double(const char* desc, const char* attr, double* dst,
                                 hipdnnBackendAttributeType_t type, int64_t count, const void* v) {
    hipdnnStatus_t st = hipdnnAttrExpect(desc, attr, HIPDNN_TYPE_DOUBLE, type, count, 1, 1, v);
    if (st) return st;
    double x = *(const double*)v;
    if (isnan(x)) return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s descriptor: %s is NaN", desc, attr);
    *dst = x;
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t op_set(hipdnnBackendDescriptor_t d, hipdnnBackendAttributeName_t name,
                             hipdnnBackendAttributeType_t type, int64_t count, const void* v) {
    hipdnnOperationState* s = OP(d);
    const op_table* t = table_of(d);
    const char* dn = t->desc_name;
    hipdnnStatus_t st;
    const port_attr* p = find_port(t, name);
    if (p)
        return hipdnnAttrSetDescriptor(dn, p->attr_name, HIPDNN_BACKEND_TENSOR_DESCRIPTOR, type,
                                       count, v, p->is_output ? &s->out[p->port] : &s->in[p->port]);
    switch (name) {
    case HIPDNN_ATTR_OPERATION_NAME_EXT:
        if ((st = hipdnnAttrExpect(dn, "NAME_EXT", HIPDNN_TYPE_CHAR, type, count, 0, INT32_MAX, v)))
            return st;
        return hipdnnAttrSetString(&s->node.name, count, v);
    case HIPDNN_ATTR_OPERATION_COMPUTE_TYPE_EXT: {
        if ((st = hipdnnAttrExpect(dn, "COMPUTE_TYPE_EXT", HIPDNN_TYPE_DATA_TYPE, type, count, 1, 1,
                                   v)))
            return st;
        hipdnnDataType_t ct = *(const hipdnnDataType_t*)v;
        if (ct != HIPDNN_DATA_NOT_SET && hipdnnSdkDataTypeSize(ct) == 0)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s descriptor: unknown compute type %d", dn,
                              (int)ct);
        s->node.compute_type = ct;
        return HIPDNN_STATUS_SUCCESS;
    }
    default: break;
    }
    if (t->kind == HIPDNN_OP_CONV_FPROP) {
        switch (name) {
        case HIPDNN_ATTR_CONVOLUTION_PRE_PADDINGS:
            return set_spatial(s, dn, "PRE_PADDINGS", s->node.pre_padding, type, count, v, 0);
        case HIPDNN_ATTR_CONVOLUTION_POST_PADDINGS:
            return set_spatial(s, dn, "POST_PADDINGS", s->node.post_padding, type, count, v, 0);
        case HIPDNN_ATTR_CONVOLUTION_FILTER_STRIDES:
            return set_spatial(s, dn, "FILTER_STRIDES", s->node.stride, type, count, v, 1);
        case HIPDNN_ATTR_CONVOLUTION_DILATIONS:
            return set_spatial(s, dn, "DILATIONS", s->node.dilation, type, count, v, 1);
        case HIPDNN_ATTR_CONVOLUTION_CONV_MODE: {
            if ((st = hipdnnAttrExpect(dn, "CONV_MODE", HIPDNN_TYPE_CONVOLUTION_MODE, type, count, 1,
                                       1, v)))
                return st;
            int m = *(const int*)v;
            if (m != HIPDNN_CROSS_CORRELATION && m != HIPDNN_CONVOLUTION)
                return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s descriptor: unknown CONV_MODE %d", dn,
                                  m);
            s->node.conv_mode = m;
            return HIPDNN_STATUS_SUCCESS;
        }
        default: break;
        }
    }
    if (t->kind == HIPDNN_OP_POINTWISE) {
        switch (name) {
        case HIPDNN_ATTR_POINTWISE_MODE: {
            if ((st = hipdnnAttrExpect(dn, "POINTWISE_MODE", HIPDNN_TYPE_POINTWISE_MODE, type, count,
                                       1, 1, v)))
                return st;
            int m = *(const int*)v;
            if (!hipdnnSdkPointwiseModeName((hipdnnPointwiseMode_t)m))
                return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s descriptor: unknown POINTWISE_MODE %d",
                                  dn, m);
            s->node.mode = m;
            return HIPDNN_STATUS_SUCCESS;
        }
        case HIPDNN_ATTR_POINTWISE_RELU_LOWER_CLIP:
            return set_double(dn, "RELU_LOWER_CLIP", &s->node.lower_clip, type, count, v);
        case HIPDNN_ATTR_POINTWISE_RELU_UPPER_CLIP:
            return set_double(dn, "RELU_UPPER_CLIP", &s->node.upper_clip, type, count, v);
        case HIPDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE:
            return set_double(dn, "RELU_LOWER_CLIP_SLOPE", &s->node.lower_clip_slope, type, count, v);
        default: break;
        }
    }
    return hipdnnAttrUnknown(dn, name);
}

static hipdnnStatus_t return_desc(const char* dn, const char* an,
                                  hipdnnBackendAttributeType_t type, int64_t req, int64_t* count,
                                  void* v, hipdnnBackendDescriptor_t td) {
    if (type != HIPDNN_TYPE_BACKEND_DESCRIPTOR)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                          "%s descriptor: %s has type BACKEND_DESCRIPTOR", dn, an);
    *count = td ? 1 : 0;
    if (req > 0 && td) {
        /* The caller gets its own reference, released with DestroyDescriptor. */
        hipdnnDescriptorRetain(td);
        *(hipdnnBackendDescriptor_t*)v = td;
    }
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t op_get(hipdnnBackendDescriptor_t d, hipdnnBackendAttributeName_t name,
                             hipdnnBackendAttributeType_t type, int64_t req, int64_t* count,
                             void* v) {
    hipdnnOperationState* s = OP(d);
    const op_table* t = table_of(d);
    const char* dn = t->desc_name;
    const port_attr* p = find_port(t, name);
    if (p)
        return return_desc(dn, p->attr_name, type, req, count, v,
                           p->is_output ? s->out[p->port] : s->in[p->port]);
    int64_t ns = s->node.num_spatial;
    switch (name) {
    case HIPDNN_ATTR_OPERATION_NAME_EXT:
        return hipdnnAttrReturnString(dn, "NAME_EXT", type, req, count, v, s->node.name);
    case HIPDNN_ATTR_OPERATION_COMPUTE_TYPE_EXT:
        return hipdnnAttrReturn(dn, "COMPUTE_TYPE_EXT", HIPDNN_TYPE_DATA_TYPE, type, req, count, v,
                                &s->node.compute_type, 1, sizeof(hipdnnDataType_t));
    default: break;
    }
    if (t->kind == HIPDNN_OP_CONV_FPROP) {
        switch (name) {
        case HIPDNN_ATTR_CONVOLUTION_PRE_PADDINGS:
            return hipdnnAttrReturn(dn, "PRE_PADDINGS", HIPDNN_TYPE_INT64, type, req, count, v,
                                    s->node.pre_padding, ns, sizeof(int64_t));
        case HIPDNN_ATTR_CONVOLUTION_POST_PADDINGS:
            return hipdnnAttrReturn(dn, "POST_PADDINGS", HIPDNN_TYPE_INT64, type, req, count, v,
                                    s->node.post_padding, ns, sizeof(int64_t));
        case HIPDNN_ATTR_CONVOLUTION_FILTER_STRIDES:
            return hipdnnAttrReturn(dn, "FILTER_STRIDES", HIPDNN_TYPE_INT64, type, req, count, v,
                                    s->node.stride, ns, sizeof(int64_t));
        case HIPDNN_ATTR_CONVOLUTION_DILATIONS:
            return hipdnnAttrReturn(dn, "DILATIONS", HIPDNN_TYPE_INT64, type, req, count, v,
                                    s->node.dilation, ns, sizeof(int64_t));
        case HIPDNN_ATTR_CONVOLUTION_CONV_MODE:
            return hipdnnAttrReturn(dn, "CONV_MODE", HIPDNN_TYPE_CONVOLUTION_MODE, type, req, count,
                                    v, &s->node.conv_mode, 1, sizeof(int32_t));
        default: break;
        }
    }
    if (t->kind == HIPDNN_OP_POINTWISE) {
        switch (name) {
        case HIPDNN_ATTR_POINTWISE_MODE:
            return hipdnnAttrReturn(dn, "POINTWISE_MODE", HIPDNN_TYPE_POINTWISE_MODE, type, req,
                                    count, v, &s->node.mode, s->node.mode >= 0 ? 1 : 0,
                                    sizeof(int32_t));
        case HIPDNN_ATTR_POINTWISE_RELU_LOWER_CLIP:
            return hipdnnAttrReturn(dn, "RELU_LOWER_CLIP", HIPDNN_TYPE_DOUBLE, type, req, count, v,
                                    &s->node.lower_clip, 1, sizeof(double));
        case HIPDNN_ATTR_POINTWISE_RELU_UPPER_CLIP:
            return hipdnnAttrReturn(dn, "RELU_UPPER_CLIP", HIPDNN_TYPE_DOUBLE, type, req, count, v,
                                    &s->node.upper_clip, 1, sizeof(double));
        case HIPDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE:
            return hipdnnAttrReturn(dn, "RELU_LOWER_CLIP_SLOPE", HIPDNN_TYPE_DOUBLE, type, req,
                                    count, v, &s->node.lower_clip_slope, 1, sizeof(double));
        default: break;
        }
    }
    return hipdnnAttrUnknown(dn, name);
}

/* Checks that the ports an op needs are set; the graph does the rest. */
static hipdnnStatus_t op_finalize(hipdnnBackendDescriptor_t d) {
    hipdnnOperationState* s = OP(d);
    const op_table* t = table_of(d);
    const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(t->kind);
    const char* nm = s->node.name ? s->node.name : "";
    int need_in = info->min_inputs;
    if (t->kind == HIPDNN_OP_POINTWISE) {
        if (s->node.mode < 0)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "pointwise '%s': POINTWISE_MODE is not set",
                              nm);
        need_in = hipdnnSdkPointwiseArity((hipdnnPointwiseMode_t)s->node.mode);
        if (need_in == 1 && s->in[HIPDNN_PW_B])
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                              "%s '%s': takes one input but BDESC is set",
                              hipdnnSdkPointwiseModeName((hipdnnPointwiseMode_t)s->node.mode), nm);
    }
    for (int i = 0; i < need_in; ++i)
        if (!s->in[i])
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s '%s': input '%s' is not set", info->name,
                              nm, info->input_names[i]);
    for (int i = 0; i < info->num_outputs; ++i)
        if (!s->out[i])
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s '%s': output '%s' is not set",
                              info->name, nm, info->output_names[i]);
    return HIPDNN_STATUS_SUCCESS;
}

#define OP_CLASS(var, name)                                                                    \
    const hipdnnDescriptorClass var = {name,    sizeof(hipdnnOperationState), op_init, op_destroy, \
                                       op_set,  op_get,                       op_finalize}
OP_CLASS(hipdnnConvFpropClass, "OPERATION_CONVOLUTION_FORWARD");
OP_CLASS(hipdnnMatmulClass, "OPERATION_MATMUL");
OP_CLASS(hipdnnPointwiseClass, "OPERATION_POINTWISE");
OP_CLASS(hipdnnBatchnormInferenceClass, "OPERATION_BATCHNORM_INFERENCE");
