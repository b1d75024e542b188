/* The reference engine's ops, one row each: which ports may hold integers, the shape rule
 * support.c applies, the kernel executor.c runs and the scratch it takes.  A new op is a
 * new row here (and its kernel file); support.c and executor.c only look rows up. */
#include "reference_cpu.h"

/* ---- shape rules (support.c: views of the already checked tensors) --------------------- */

/* INT8 x INT8 with INT32 compute where the types ask for it (ref_int8_compute_uses),
 * else every tensor a float type (tensor_ok let integers through these ports). */
static bool int8_or_float(const hipdnnSdkNode* n, const char* ports, const hipdnnSdkTensor* a,
                          const hipdnnSdkTensor* b, const hipdnnSdkTensor* out, int64_t terms,
                          char* detail, size_t len) {
    if (!ref_int8_compute_uses(n, a->data_type, b->data_type, out->data_type)) return true;
    /* ports: "xwy" or "abc"; messages name each tensor too */
    char labels[3][96];
    const hipdnnSdkTensor* t[3] = {a, b, out};
    const char* names[3] = {labels[0], labels[1], labels[2]};
    for (int k = 0; k < 3; ++k)
        hipdnnSdkFormat(labels[k], sizeof(labels[k]), "%c '%s'", ports[k], t[k]->name);
    return ref_int8_compute_check(n, names, a->data_type, b->data_type, out->data_type, terms,
                                  detail, len);
}

static bool same_dims(const ref_view* a, const ref_view* b, const char* na, const char* nb,
                      char* detail, size_t len) {
    bool same = a->ndim == b->ndim;
    for (int32_t i = 0; same && i < a->ndim; ++i) same = a->dims[i] == b->dims[i];
    if (!same) hipdnnSdkFormat(detail, len, "%s and %s have different dims", na, nb);
    return same;
}

/* conv_fprop: its geometry, then INT8 compute (cg * taps products per output) or floats. */
static bool conv_fprop_ok(const ref_op_args* a, char* detail, size_t len) {
    ref_conv_geometry geo;
    int64_t taps = 1;
    bool ok = ref_conv_check(a->n, &a->v[HIPDNN_CONV_X], &a->v[HIPDNN_CONV_W], &a->o[0], &geo,
                             detail, len);
    for (int32_t i = 0; ok && i < geo.nsp; ++i) taps *= geo.ker[i];
    return ok && int8_or_float(a->n, "xwy", a->in[HIPDNN_CONV_X], a->in[HIPDNN_CONV_W],
                               a->out[0], geo.cg * taps, detail, len);
}

static bool matmul_ok(const ref_op_args* a, char* detail, size_t len) {
    const ref_view* va = &a->v[HIPDNN_MATMUL_A];
    return ref_matmul_check(va, &a->v[HIPDNN_MATMUL_B], &a->o[0], detail, len) &&
           int8_or_float(a->n, "abc", a->in[HIPDNN_MATMUL_A], a->in[HIPDNN_MATMUL_B], a->out[0],
                         va->dims[va->ndim - 1], detail, len);
}

/* Pointwise: operands in the mode's order; gen_index's are coordinates. */
static bool pointwise_ok(const ref_op_args* a, char* detail, size_t len) {
    const hipdnnSdkNode* n = a->n;
    hipdnnSdkPointwisePorts ports;
    const ref_view* ops[3] = {NULL, NULL, NULL};
    ref_view index;
    hipdnnSdkPointwisePortsOf(hipdnnSdkNodeMode(n), &ports);
    for (int k = 0; k < ports.arity; ++k)
        if (a->in[ports.inputs[k]]) ops[k] = &a->v[ports.inputs[k]];
    if (hipdnnSdkNodeMode(n) == HIPDNN_POINTWISE_GEN_INDEX) {
        ref_index_view(a->o[ports.output].ndim, a->o[ports.output].dims,
                       (int)n->attrs[HIPDNN_PW_AXIS].i[0], &index);
        ops[0] = &index;
    }
    return ref_pointwise_check(n, ops, &a->o[ports.output], detail, len);
}

static bool batchnorm_ok(const ref_op_args* a, char* detail, size_t len) {
    return ref_batchnorm_check(a->v, &a->o[0], detail, len);
}

static bool reduction_ok(const ref_op_args* a, char* detail, size_t len) {
    return ref_reduction_check(a->n, &a->v[HIPDNN_RED_X], &a->o[0], detail, len);
}

static bool norm_forward_ok(const ref_op_args* a, char* detail, size_t len) {
    return ref_norm_check(a->n, a->vp, a->op, detail, len);
}

static bool dgrad_ok(const ref_op_args* a, char* detail, size_t len) {
    return ref_conv_check(a->n, &a->o[0], &a->v[HIPDNN_DGRAD_W], &a->v[HIPDNN_DGRAD_DY], NULL,
                          detail, len);
}

static bool wgrad_ok(const ref_op_args* a, char* detail, size_t len) {
    return ref_conv_check(a->n, &a->v[HIPDNN_WGRAD_X], &a->o[0], &a->v[HIPDNN_WGRAD_DY], NULL,
                          detail, len);
}

static bool slice_ok(const ref_op_args* a, char* detail, size_t len) {
    return ref_slice_check(a->n, &a->v[0], &a->o[0], detail, len);
}

/* Concatenate: the set inputs, in port order. */
static bool concat_ok(const ref_op_args* a, char* detail, size_t len) {
    ref_view set[HIPDNN_MAX_PORTS];
    int nin = 0;
    for (int p = 0; p < HIPDNN_MAX_PORTS; ++p)
        if (a->in[p]) set[nin++] = a->v[p];
    return ref_concat_check(a->n, set, nin, &a->o[0], detail, len);
}

static bool norm_backward_ok(const ref_op_args* a, char* detail, size_t len) {
    return ref_norm_backward_check(a->n, a->vp, a->op, detail, len);
}

static bool sdpa_fwd_ok(const ref_op_args* a, char* detail, size_t len) {
    return ref_sdpa_fwd_check(a->n, a->vp, a->op, detail, len);
}

static bool sdpa_bwd_ok(const ref_op_args* a, char* detail, size_t len) {
    return ref_sdpa_bwd_check(a->n, a->vp, a->op, detail, len);
}

static bool genstats_ok(const ref_op_args* a, char* detail, size_t len) {
    return ref_genstats_check(a->n, &a->v[HIPDNN_GENSTATS_X], &a->o[HIPDNN_GENSTATS_SUM],
                              &a->o[HIPDNN_GENSTATS_SQSUM], detail, len);
}

static bool resample_fwd_ok(const ref_op_args* a, char* detail, size_t len) {
    return ref_resample_check(a->n, &a->v[HIPDNN_RSF_X], &a->o[0], a->op[HIPDNN_RSF_IDX], NULL,
                              detail, len);
}

/* resample_bwd: the forward's geometry from dx and dy; x shaped as dx and y as dy where
 * given; MAXPOOL finds each window's maximum from idx or x. */
static bool resample_bwd_ok(const ref_op_args* a, char* detail, size_t len) {
    const ref_view *v = a->v, *const *vp = a->vp, *y = &a->o[0];
    bool ok = ref_resample_check(a->n, y, &v[HIPDNN_RSB_DY], vp[HIPDNN_RSB_IDX], NULL, detail,
                                 len) &&
              (!vp[HIPDNN_RSB_X] || same_dims(&v[HIPDNN_RSB_X], y, "x", "dx", detail, len)) &&
              (!vp[HIPDNN_RSB_Y] ||
               same_dims(&v[HIPDNN_RSB_Y], &v[HIPDNN_RSB_DY], "y", "dy", detail, len));
    if (ok && a->n->attrs[HIPDNN_RS_MODE].i[0] == HIPDNN_RESAMPLE_MAXPOOL &&
        !vp[HIPDNN_RSB_IDX] && !vp[HIPDNN_RSB_X]) {
        hipdnnSdkFormat(detail, len, "MAXPOOL needs idx or x");
        ok = false;
    }
    return ok;
}

/* Reshape: of a tensor in memory (a by-value scalar has no layout to reshape). */
static bool reshape_ok(const ref_op_args* a, char* detail, size_t len) {
    if (a->in[HIPDNN_RESHAPE_X]->is_by_value) {
        hipdnnSdkFormat(detail, len, "x is a pass-by-value scalar; there is nothing to reshape");
        return false;
    }
    return ref_reshape_check(a->n, &a->v[HIPDNN_RESHAPE_X], &a->o[0], detail, len);
}

/* ---- kernels (executor.c: views of the ports the node uses, with their data) ----------- */

/* A pointwise node: its operands in its mode's order; gen_index's are y's coordinates. */
static hipdnnPluginStatus_t pointwise_run(const ref_op_args* a) {
    const hipdnnSdkNode* n = a->n;
    hipdnnSdkPointwisePorts ports;
    ref_view in[3];
    hipdnnSdkPointwisePortsOf(hipdnnSdkNodeMode(n), &ports);
    const ref_view* y = &a->o[ports.output];
    if (hipdnnSdkNodeMode(n) == HIPDNN_POINTWISE_GEN_INDEX)
        ref_index_view(y->ndim, y->dims, (int)n->attrs[HIPDNN_PW_AXIS].i[0], &in[0]);
    else
        for (int k = 0; k < ports.arity && k < 3; ++k) in[k] = a->v[ports.inputs[k]];
    return ref_pointwise(n, in, y, a->scratch);
}

static hipdnnPluginStatus_t conv_fprop_run(const ref_op_args* a) {
    return ref_conv_fprop(a->n, &a->v[HIPDNN_CONV_X], &a->v[HIPDNN_CONV_W], &a->o[0], a->scratch);
}

static hipdnnPluginStatus_t matmul_run(const ref_op_args* a) {
    return ref_matmul(a->n, &a->v[HIPDNN_MATMUL_A], &a->v[HIPDNN_MATMUL_B], &a->o[0], a->scratch);
}

static hipdnnPluginStatus_t batchnorm_run(const ref_op_args* a) {
    return ref_batchnorm_inference(a->n, a->v, &a->o[0], a->scratch);
}

static hipdnnPluginStatus_t reduction_run(const ref_op_args* a) {
    return ref_reduction(a->n, &a->v[HIPDNN_RED_X], &a->o[0], a->scratch);
}

static hipdnnPluginStatus_t norm_forward_run(const ref_op_args* a) {
    return ref_norm_forward(a->n, a->vp, a->op, a->scratch);
}

static hipdnnPluginStatus_t dgrad_run(const ref_op_args* a) {
    return ref_conv_dgrad(a->n, &a->v[HIPDNN_DGRAD_DY], &a->v[HIPDNN_DGRAD_W], &a->o[0],
                          a->scratch);
}

static hipdnnPluginStatus_t wgrad_run(const ref_op_args* a) {
    return ref_conv_wgrad(a->n, &a->v[HIPDNN_WGRAD_X], &a->v[HIPDNN_WGRAD_DY], &a->o[0],
                          a->scratch);
}

static hipdnnPluginStatus_t slice_run(const ref_op_args* a) {
    return ref_slice(a->n, &a->v[0], &a->o[0]);
}

/* concatenate: x0, x1.. set in port order */
static hipdnnPluginStatus_t concat_run(const ref_op_args* a) {
    int set = 0;
    for (int p = 0; p < HIPDNN_MAX_PORTS; ++p) set += a->vp[p] != NULL;
    return ref_concat(a->n, a->v, set, &a->o[0]);
}

static hipdnnPluginStatus_t norm_backward_run(const ref_op_args* a) {
    return ref_norm_backward(a->n, a->vp, a->op, a->scratch);
}

static hipdnnPluginStatus_t sdpa_fwd_run(const ref_op_args* a) {
    return ref_sdpa_fwd(a->n, a->vp, a->op, a->scratch);
}

static hipdnnPluginStatus_t sdpa_bwd_run(const ref_op_args* a) {
    return ref_sdpa_bwd(a->n, a->vp, a->op, a->scratch);
}

static hipdnnPluginStatus_t genstats_run(const ref_op_args* a) {
    return ref_genstats(a->n, &a->v[HIPDNN_GENSTATS_X], &a->o[HIPDNN_GENSTATS_SUM],
                        &a->o[HIPDNN_GENSTATS_SQSUM], a->scratch);
}

static hipdnnPluginStatus_t resample_fwd_run(const ref_op_args* a) {
    return ref_resample_fwd(a->n, &a->v[HIPDNN_RSF_X], &a->o[0], a->op[HIPDNN_RSF_IDX],
                            a->scratch);
}

static hipdnnPluginStatus_t resample_bwd_run(const ref_op_args* a) {
    return ref_resample_bwd(a->n, &a->v[HIPDNN_RSB_DY], a->vp[HIPDNN_RSB_X],
                            a->vp[HIPDNN_RSB_IDX], &a->o[0], a->scratch);
}

static hipdnnPluginStatus_t reshape_run(const ref_op_args* a) {
    return ref_reshape(a->n, &a->v[HIPDNN_RESHAPE_X], &a->o[0]);
}

/* ---- scratch (executor.c: the kernels' own formulas, from shapes alone) ---------------- */

static int64_t pointwise_scratch(const ref_op_args* a) {
    hipdnnSdkPointwisePorts ports;
    hipdnnSdkPointwisePortsOf(hipdnnSdkNodeMode(a->n), &ports);
    const ref_view* y = &a->o[ports.output];
    return ref_pointwise_scratch_doubles(ref_element_count(y->ndim, y->dims));
}

/* conv_fprop, dgrad and wgrad: x, w and dy as ref_conv_check sees them */
static int64_t conv_scratch(const ref_op_args* a, const ref_view* x, const ref_view* w,
                            const ref_view* dy, bool grad) {
    ref_conv_geometry geo;
    char why[REF_MSG_LEN];
    if (!ref_conv_check(a->n, x, w, dy, &geo, why, sizeof(why))) return 0;
    return grad ? ref_conv_grad_scratch_doubles(&geo) : ref_conv_scratch_doubles(&geo);
}

static int64_t conv_fprop_scratch(const ref_op_args* a) {
    return conv_scratch(a, &a->v[HIPDNN_CONV_X], &a->v[HIPDNN_CONV_W], &a->o[0], false);
}

static int64_t dgrad_scratch(const ref_op_args* a) {
    return conv_scratch(a, &a->o[0], &a->v[HIPDNN_DGRAD_W], &a->v[HIPDNN_DGRAD_DY], true);
}

static int64_t wgrad_scratch(const ref_op_args* a) {
    return conv_scratch(a, &a->v[HIPDNN_WGRAD_X], &a->o[0], &a->v[HIPDNN_WGRAD_DY], true);
}

static int64_t matmul_scratch(const ref_op_args* a) {
    return ref_matmul_scratch_doubles(&a->v[HIPDNN_MATMUL_A], &a->v[HIPDNN_MATMUL_B], &a->o[0]);
}

static int64_t batchnorm_scratch(const ref_op_args* a) {
    return ref_batchnorm_scratch_doubles(ref_element_count(a->o[0].ndim, a->o[0].dims));
}

static int64_t reduction_scratch(const ref_op_args* a) {
    return ref_reduction_scratch_doubles(a->vp[HIPDNN_RED_X], a->op[HIPDNN_RED_Y]);
}

static int64_t norm_forward_scratch(const ref_op_args* a) {
    return ref_norm_scratch_doubles(a->n, a->vp);
}

static int64_t norm_backward_scratch(const ref_op_args* a) {
    return ref_norm_backward_scratch_doubles(a->n, a->vp);
}

static int64_t sdpa_fwd_scratch(const ref_op_args* a) {
    return ref_sdpa_fwd_scratch_doubles(a->n, a->vp);
}

static int64_t sdpa_bwd_scratch(const ref_op_args* a) {
    return ref_sdpa_bwd_scratch_doubles(a->n, a->vp);
}

static int64_t genstats_scratch(const ref_op_args* a) {
    return ref_genstats_scratch_doubles(a->vp[HIPDNN_GENSTATS_X]);
}

/* resample: (x or dx, y or dy) as ref_resample_check sees them */
static int64_t resample_scratch(const ref_op_args* a, const ref_view* image,
                                const ref_view* pooled, bool bwd) {
    ref_pool_geometry geo;
    char why[REF_MSG_LEN];
    if (!ref_resample_check(a->n, image, pooled, NULL, &geo, why, sizeof(why))) return 0;
    return ref_resample_scratch_doubles(&geo, bwd);
}

static int64_t resample_fwd_scratch(const ref_op_args* a) {
    return resample_scratch(a, &a->v[0], &a->o[0], false);
}

static int64_t resample_bwd_scratch(const ref_op_args* a) {
    return resample_scratch(a, &a->o[0], &a->v[0], true);
}

/* ---- the table ------------------------------------------------------------------------- */

#define ALL_PORTS (~0u)
#define PORT(p) (1u << (p))

/* int_in / int_out: ports that may hold integer (or BOOLEAN) tensors: every pointwise
 * port, a pooling index, reshape's (it copies bits), conv_fprop's and matmul's for INT8
 * compute, and attention's sequence lengths, page tables and dropout seed and offset. */
static const ref_op k_ops[] = {
    {HIPDNN_OP_POINTWISE, pointwise_ok, pointwise_run, pointwise_scratch, ALL_PORTS,
     ALL_PORTS, false},
    {HIPDNN_OP_CONV_FPROP, conv_fprop_ok, conv_fprop_run, conv_fprop_scratch, ALL_PORTS,
     ALL_PORTS, true},
    {HIPDNN_OP_MATMUL, matmul_ok, matmul_run, matmul_scratch, ALL_PORTS, ALL_PORTS, true},
    {HIPDNN_OP_BATCHNORM_INFERENCE, batchnorm_ok, batchnorm_run, batchnorm_scratch, 0, 0,
     false},
    {HIPDNN_OP_REDUCTION, reduction_ok, reduction_run, reduction_scratch, 0, 0, false},
    {HIPDNN_OP_NORM_FORWARD, norm_forward_ok, norm_forward_run, norm_forward_scratch, 0, 0,
     false},
    {HIPDNN_OP_CONV_DGRAD, dgrad_ok, dgrad_run, dgrad_scratch, 0, 0, false},
    {HIPDNN_OP_CONV_WGRAD, wgrad_ok, wgrad_run, wgrad_scratch, 0, 0, false},
    {HIPDNN_OP_SLICE, slice_ok, slice_run, NULL, 0, 0, false},
    {HIPDNN_OP_CONCATENATE, concat_ok, concat_run, NULL, 0, 0, false},
    {HIPDNN_OP_NORM_BACKWARD, norm_backward_ok, norm_backward_run, norm_backward_scratch, 0, 0,
     false},
    {HIPDNN_OP_SDPA_FWD, sdpa_fwd_ok, sdpa_fwd_run, sdpa_fwd_scratch,
     PORT(HIPDNN_SDPA_SEQ_LEN_Q) | PORT(HIPDNN_SDPA_SEQ_LEN_KV) | PORT(HIPDNN_SDPA_PAGE_TABLE_K) |
         PORT(HIPDNN_SDPA_PAGE_TABLE_V) | PORT(HIPDNN_SDPA_SEED) | PORT(HIPDNN_SDPA_OFFSET),
     0, false},
    {HIPDNN_OP_SDPA_BWD, sdpa_bwd_ok, sdpa_bwd_run, sdpa_bwd_scratch,
     PORT(HIPDNN_SDPA_BWD_SEQ_LEN_Q) | PORT(HIPDNN_SDPA_BWD_SEQ_LEN_KV) | PORT(HIPDNN_SDPA_BWD_SEED) |
         PORT(HIPDNN_SDPA_BWD_OFFSET),
     0, false},
    {HIPDNN_OP_GENSTATS, genstats_ok, genstats_run, genstats_scratch, 0, 0, false},
    {HIPDNN_OP_RESAMPLE_FWD, resample_fwd_ok, resample_fwd_run, resample_fwd_scratch, 0,
     PORT(HIPDNN_RSF_IDX), false},
    {HIPDNN_OP_RESAMPLE_BWD, resample_bwd_ok, resample_bwd_run, resample_bwd_scratch,
     PORT(HIPDNN_RSB_IDX), 0, false},
    {HIPDNN_OP_RESHAPE, reshape_ok, reshape_run, NULL, ALL_PORTS, ALL_PORTS, false},
};

const ref_op* ref_op_get(hipdnnOpKind_t kind) {
    for (size_t i = 0; i < sizeof(k_ops) / sizeof(k_ops[0]); ++i)
        if (k_ops[i].kind == kind) return &k_ops[i];
    return NULL;
}
