/* Inference rules of normalization (batchnorm inference, norm forward and backward,
 * genstats) and reduction. */
#include "hipdnn/hipdnn_sdk.h"
#include "infer_internal.h"

bool infer_batchnorm(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label) {
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
bool infer_reduction(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label) {
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

/* The mode and phase are set and supported, x has rank >= 2, epsilon holds one value. */
static bool check_norm_setup(err_t* e, const hipdnnSdkNode* n, const hipdnnSdkTensor* x,
                             const hipdnnSdkTensor* epsilon, const char* label) {
    int64_t mode = n->attrs[HIPDNN_NORM_MODE].i[0], phase = n->attrs[HIPDNN_NORM_PHASE].i[0];
    char a[200];
    if (n->attrs[HIPDNN_NORM_MODE].count == 0) return fail(e, "%s: norm mode is not set", label);
    if (n->attrs[HIPDNN_NORM_PHASE].count == 0)
        return fail(e, "%s: forward phase (training or inference) is not set", label);
    if (mode == HIPDNN_GROUP_NORM)
        return fail(e, "%s: group normalization is not in hipdnn yet", label);
    if (mode == HIPDNN_BATCH_NORM && phase != HIPDNN_NORM_FWD_TRAINING)
        return fail(e, "%s: batchnorm in the inference phase takes mean and inv_variance as "
                    "inputs: use batchnorm_inference", label);
    if (x->ndim < 2)
        return fail(e, "%s: x '%s' is %s; it needs rank >= 2", label, x->name,
                    shape_str(x, a, sizeof(a)));
    return !epsilon || check_one_value(e, label, "epsilon", epsilon);
}

/* Scale's shape, into want (bias must have it too): [1, C, 1, ...] for BATCH and
 * INSTANCE; for the layer norms, 1 or x's dim on each axis (axis 0 too for ADA_LAYER,
 * whose parameters are per sample).  `layer_why` names the layer norms' rule in the
 * message.  Norm forward and backward share it (mode is slot 0 of both). */
static bool check_norm_scale(err_t* e, const char* label, int64_t mode, const hipdnnSdkTensor* x,
                             const hipdnnSdkTensor* scale, const char* layer_why, int64_t* want) {
    char a[200];
    if (scale->ndim != x->ndim)
        return fail(e, "%s: scale '%s' is %s; it needs x's rank %d", label, scale->name,
                    shape_str(scale, a, sizeof(a)), (int)x->ndim);
    bool per_channel = mode == HIPDNN_BATCH_NORM || mode == HIPDNN_INSTANCE_NORM;
    for (int i = 0; i < x->ndim; ++i) {
        if (per_channel) want[i] = i == 1 ? x->dims[1] : 1;
        else if (i == 0 && mode != HIPDNN_ADA_LAYER_NORM) want[i] = 1;
        else want[i] = scale->dims[i] == x->dims[i] ? x->dims[i] : 1;
    }
    return check_shape(e, label, "scale", scale, x->ndim, want,
                       per_channel ? "a per-channel parameter" : layer_why);
}

/* The saved statistics' dims: x's, 1 on each normalized axis. */
static void norm_stats_dims(const hipdnnSdkNode* n, const hipdnnSdkTensor* x,
                            const hipdnnSdkTensor* scale, int64_t* stats) {
    bool axes[HIPDNN_MAX_DIMS];
    hipdnnSdkNormAxes(n, x, scale, axes); /* mode is slot 0 of both norm ops */
    for (int i = 0; i < x->ndim; ++i) stats[i] = axes[i] ? 1 : x->dims[i];
}

/* Which ports this mode and phase take; BATCH's running statistics are optional as a set
 * (momentum plus both of each), and *have_running says whether they are given. */
static bool check_norm_ports(err_t* e, const hipdnnSdkNode* n, hipdnnSdkTensor* const* in,
                             hipdnnSdkTensor* const* out, const char* label, bool* have_running) {
    const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(n->kind);
    int64_t mode = n->attrs[HIPDNN_NORM_MODE].i[0];
    bool training = n->attrs[HIPDNN_NORM_PHASE].i[0] == HIPDNN_NORM_FWD_TRAINING;
    bool running = mode == HIPDNN_BATCH_NORM;
    bool want_in[7] = {true, true, in[HIPDNN_NORM_BIAS] != NULL, true, running, running, running};
    bool want_out[5] = {true, training && mode != HIPDNN_RMS_NORM, training, running, running};
    const char* mname = hipdnnSdkNormModeName(mode);
    for (int p = 0; p < 7; ++p) {
        if (in[p] && !want_in[p])
            return fail(e, "%s: input '%s' (tensor '%s') is set but %s takes none", label,
                        info->inputs[p].name, in[p]->name, mname);
    }
    *have_running = in[HIPDNN_NORM_EXP_AVG_FACTOR] || in[HIPDNN_NORM_IN_RUNNING_MEAN] ||
                    in[HIPDNN_NORM_IN_RUNNING_VAR] || out[HIPDNN_NORM_OUT_RUNNING_MEAN] ||
                    out[HIPDNN_NORM_OUT_RUNNING_VAR];
    if (running && *have_running)
        for (int p = HIPDNN_NORM_EXP_AVG_FACTOR; p <= HIPDNN_NORM_IN_RUNNING_VAR; ++p)
            if (!in[p])
                return fail(e, "%s: input '%s' is not set; give momentum and both running "
                            "statistics (in and out), or none", label, info->inputs[p].name);
    for (int p = 1; p < 5; ++p) {
        bool wanted = want_out[p] && (p < HIPDNN_NORM_OUT_RUNNING_MEAN || *have_running);
        if (out[p] && !want_out[p])
            return fail(e, "%s: output '%s' (tensor '%s') is set but %s in the %s phase gives "
                        "none", label, info->outputs[p].name, out[p]->name, mname,
                        training ? "training" : "inference");
        if (!out[p] && wanted && p >= HIPDNN_NORM_OUT_RUNNING_MEAN)
            return fail(e, "%s: output '%s' is not set; give both running statistics (in and "
                        "out), or none", label, info->outputs[p].name);
    }
    return true;
}

/* BATCH's running statistics in: per channel; its momentum: one value. */
static bool check_running_stats(err_t* e, const hipdnnSdkNode* n, hipdnnSdkTensor* const* in,
                                const hipdnnSdkTensor* x, const char* label) {
    const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(n->kind);
    int64_t c[HIPDNN_MAX_DIMS];
    for (int i = 0; i < x->ndim; ++i) c[i] = i == 1 ? x->dims[1] : 1;
    for (int p = HIPDNN_NORM_IN_RUNNING_MEAN; p <= HIPDNN_NORM_IN_RUNNING_VAR; ++p)
        if (!check_shape(e, label, info->inputs[p].name, in[p], x->ndim, c,
                         "a per-channel statistic"))
            return false;
    return check_one_value(e, label, "exp_avg_factor", in[HIPDNN_NORM_EXP_AVG_FACTOR]);
}

/* y as x; the saved statistics float32 unless given otherwise (cuDNN frontend's
 * default); the running statistics out as they came in. */
static bool set_norm_outputs(err_t* e, hipdnnSdkNode* n, hipdnnSdkTensor* const* in,
                             hipdnnSdkTensor* const* out, const char* label) {
    const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(n->kind);
    hipdnnSdkTensor *x = in[HIPDNN_NORM_X], *y = out[HIPDNN_NORM_Y];
    int64_t stats[HIPDNN_MAX_DIMS];
    norm_stats_dims(n, x, in[HIPDNN_NORM_SCALE], stats);
    if (n->compute_type == HIPDNN_DATA_NOT_SET) n->compute_type = HIPDNN_DATA_FLOAT;
    if (!set_output(e, label, "y", y, x->ndim, x->dims, x,
                    y->is_virtual ? n->compute_type : x->data_type))
        return false;
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

bool infer_norm(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label) {
    hipdnnSdkTensor* in[7];
    hipdnnSdkTensor* out[5];
    for (int p = 0; p < 7; ++p) in[p] = tensor_of(e, g, n->inputs[p]);
    for (int p = 0; p < 5; ++p) out[p] = tensor_of(e, g, n->outputs[p]);
    hipdnnSdkTensor* x = in[HIPDNN_NORM_X];
    int64_t mode = n->attrs[HIPDNN_NORM_MODE].i[0];
    int64_t want[HIPDNN_MAX_DIMS];
    bool have_running = false;
    if (!check_norm_setup(e, n, x, in[HIPDNN_NORM_EPSILON], label) ||
        !check_norm_scale(e, label, mode, x, in[HIPDNN_NORM_SCALE],
                          "a parameter over x's normalized dims (1 or x's dim, 1 on axis 0)",
                          want))
        return false;
    if (in[HIPDNN_NORM_BIAS] &&
        !check_shape(e, label, "bias", in[HIPDNN_NORM_BIAS], x->ndim, want, "scale's shape"))
        return false;
    if (!check_norm_ports(e, n, in, out, label, &have_running)) return false;
    if (mode == HIPDNN_BATCH_NORM && have_running && !check_running_stats(e, n, in, x, label))
        return false;
    return set_norm_outputs(e, n, in, out, label);
}

/* The gradients of norm_forward's y: dx shaped as x (x's layout), dscale and dbias as
 * scale; the saved statistics as the forward writes them (x's dims, 1 on each
 * normalized axis). */
bool infer_norm_backward(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g,
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
    int64_t want[HIPDNN_MAX_DIMS], stats[HIPDNN_MAX_DIMS];
    if (!check_norm_scale(e, label, mode, x, scale,
                          "a parameter over x's normalized dims (1 or x's dim)", want))
        return false;
    norm_stats_dims(n, x, scale, stats);
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
bool infer_genstats(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label) {
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
