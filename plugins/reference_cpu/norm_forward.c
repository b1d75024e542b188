/* norm_forward: layer, RMS, instance, batch (training) and adaptive layer normalization.
 *
 *   mean = sum(x) / R and var = sum((x - mean)^2) / R over the axes the mode names
 *   (hipdnnSdkNormAxes; R values per statistic), inv_variance = 1 / sqrt(var + epsilon);
 *   y = (x - mean) * inv_variance * scale + bias   (RMS: x * inv_variance * scale + bias,
 *   with var = sum(x^2) / R; scale + 1 with zero_centered_gamma; bias optional).
 * Statistics are two passes in float64 over x (reduce.c), so they are the float64
 * reference's to rounding; y is a third pass (the block walker), rounded once to y's type.
 * The TRAINING phase also stores mean and inv_variance (any data type, float32 by
 * default), and batchnorm given running statistics stores
 *   next = (1 - momentum) * running + momentum * batch statistic,
 * the variance there unbiased (divided by R - 1), as cuDNN and PyTorch do. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "reference_cpu.h"

static const char* const k_in_names[7] = {"x", "scale", "bias", "epsilon", "exp_avg_factor",
                                          "input_running_mean", "input_running_var"};
static const char* const k_out_names[5] = {"y", "mean", "inv_variance", "output_running_mean",
                                           "output_running_var"};

static bool fail(char* why, size_t len, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool fail(char* why, size_t len, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return false;
}

/* hipdnnSdkNormAxes on views (it reads ranks and dims only). */
static void norm_axes(const hipdnnSdkNode* node, const ref_view* x, const ref_view* scale,
                      bool* axes) {
    hipdnnSdkTensor tx, ts;
    memset(&tx, 0, sizeof(tx));
    memset(&ts, 0, sizeof(ts));
    tx.ndim = x->ndim;
    ts.ndim = scale->ndim;
    memcpy(tx.dims, x->dims, sizeof(tx.dims));
    memcpy(ts.dims, scale->dims, sizeof(ts.dims));
    hipdnnSdkNormAxes(node, &tx, &ts, axes);
}

static bool has_dims(const ref_view* v, int32_t ndim, const int64_t* dims) {
    bool same = v->ndim == ndim;
    for (int32_t i = 0; same && i < ndim; ++i) same = v->dims[i] == dims[i];
    return same;
}

static bool broadcasts(const ref_view* v, const ref_view* x) {
    ref_view bv;
    return ref_broadcast_view(v, x->ndim, x->dims, &bv);
}

static bool running_given(const ref_view* const* in, const ref_view* const* out) {
    return in[HIPDNN_NORM_EXP_AVG_FACTOR] || in[HIPDNN_NORM_IN_RUNNING_MEAN] ||
           in[HIPDNN_NORM_IN_RUNNING_VAR] || out[HIPDNN_NORM_OUT_RUNNING_MEAN] ||
           out[HIPDNN_NORM_OUT_RUNNING_VAR];
}

bool ref_norm_check(const hipdnnSdkNode* node, const ref_view* const* in,
                    const ref_view* const* out, char* why, size_t len) {
    int64_t mode = node->attrs[HIPDNN_NORM_MODE].i[0];
    int64_t phase = node->attrs[HIPDNN_NORM_PHASE].i[0];
    const char* name = hipdnnSdkNormModeName(mode);
    if (node->attrs[HIPDNN_NORM_MODE].count != 1 || !name)
        return fail(why, len, "norm mode %lld not supported", (long long)mode);
    if (mode == HIPDNN_GROUP_NORM)
        return fail(why, len, "group normalization not supported");
    if (node->attrs[HIPDNN_NORM_PHASE].count != 1 ||
        (phase != HIPDNN_NORM_FWD_TRAINING && phase != HIPDNN_NORM_FWD_INFERENCE))
        return fail(why, len, "forward phase %lld not supported", (long long)phase);
    bool training = phase == HIPDNN_NORM_FWD_TRAINING;
    if (mode == HIPDNN_BATCH_NORM && !training)
        return fail(why, len, "batchnorm runs in the training phase here (inference is "
                    "batchnorm_inference)");
    static const int required_in[3] = {HIPDNN_NORM_X, HIPDNN_NORM_SCALE, HIPDNN_NORM_EPSILON};
    for (int k = 0; k < 3; ++k)
        if (!in[required_in[k]])
            return fail(why, len, "input %s not set", k_in_names[required_in[k]]);
    if (!out[HIPDNN_NORM_Y]) return fail(why, len, "output y not set");
    const ref_view* x = in[HIPDNN_NORM_X];
    if (x->ndim < 2) return fail(why, len, "x has rank %d; %s needs at least 2", x->ndim, name);
    if (!has_dims(out[HIPDNN_NORM_Y], x->ndim, x->dims))
        return fail(why, len, "y dims differ from x dims");
    const ref_view* scale = in[HIPDNN_NORM_SCALE];
    if (scale->ndim != x->ndim || !broadcasts(scale, x))
        return fail(why, len, "scale (rank %d) does not broadcast to x (rank %d) dim by dim",
                    scale->ndim, x->ndim);
    if (in[HIPDNN_NORM_BIAS] && !broadcasts(in[HIPDNN_NORM_BIAS], x))
        return fail(why, len, "bias (rank %d) does not broadcast to x (rank %d)",
                    in[HIPDNN_NORM_BIAS]->ndim, x->ndim);
    if (ref_element_count(in[HIPDNN_NORM_EPSILON]->ndim, in[HIPDNN_NORM_EPSILON]->dims) != 1)
        return fail(why, len, "epsilon must hold one value");
    bool axes[HIPDNN_MAX_DIMS];
    int64_t sd[HIPDNN_MAX_DIMS], count = 1;
    norm_axes(node, x, scale, axes);
    for (int32_t i = 0; i < x->ndim; ++i) {
        sd[i] = axes[i] ? 1 : x->dims[i];
        count *= axes[i] ? x->dims[i] : 1;
    }
    for (int p = HIPDNN_NORM_MEAN; p <= HIPDNN_NORM_INV_VARIANCE; ++p) {
        if (!out[p]) continue;
        if (!training)
            return fail(why, len, "output %s is set but the inference phase gives no "
                        "statistics", k_out_names[p]);
        if (p == HIPDNN_NORM_MEAN && mode == HIPDNN_RMS_NORM)
            return fail(why, len, "output mean is set but rmsnorm gives none");
        if (!has_dims(out[p], x->ndim, sd))
            return fail(why, len, "output %s dims are not x's with 1 on each normalized axis",
                        k_out_names[p]);
    }
    if (running_given(in, out)) {
        if (mode != HIPDNN_BATCH_NORM)
            return fail(why, len, "running statistics are given but only batchnorm keeps them");
        static const int ports[5] = {HIPDNN_NORM_EXP_AVG_FACTOR, HIPDNN_NORM_IN_RUNNING_MEAN,
                                     HIPDNN_NORM_IN_RUNNING_VAR, HIPDNN_NORM_OUT_RUNNING_MEAN,
                                     HIPDNN_NORM_OUT_RUNNING_VAR};
        for (int k = 0; k < 5; ++k) {
            const ref_view* v = k < 3 ? in[ports[k]] : out[ports[k]];
            const char* port = k < 3 ? k_in_names[ports[k]] : k_out_names[ports[k]];
            if (!v)
                return fail(why, len, "%s not set: give momentum and both running statistics "
                            "(in and out), or none", port);
            if (k == 0 && ref_element_count(v->ndim, v->dims) != 1)
                return fail(why, len, "exp_avg_factor (momentum) must hold one value");
            if (k > 0 && !has_dims(v, x->ndim, sd))
                return fail(why, len, "%s dims are not [1, C, 1, ...] for x's C", port);
        }
        if (count < 2)
            return fail(why, len, "the running variance (unbiased) needs more than one value "
                        "per channel, x gives %lld", (long long)count);
    }
    return true;
}

static double scalar_of(const ref_view* v) {
    return hipdnnSdkLoadAsDouble(v->data, v->dtype, 0);
}

/* ---- block kernels ---------------------------------------------------------------------- */

typedef struct {
    bool rms, zero_centered, bias;
} y_ctx;

/* in: x, mean (not for RMS), inv_variance, scale, bias (if given).  Always inlined into
 * one function per vector width (below): compiled for the walker's width it also reads
 * the blocks as the walker wrote them, which more than halved the time of y. */
static inline __attribute__((always_inline)) void y_rows(const double* const* in,
                                                          double* out, int64_t n,
                                                          const void* ctx) {
    const y_ctx* c = ctx;
    int k = 1;
    const double* x = in[0];
    const double* mean = c->rms ? in[0] : in[k++]; /* unread for RMS */
    const double* inv = in[k++];
    const double* scale = in[k++];
    const double* bias = c->bias ? in[k++] : in[0];
    for (int64_t i = 0; i < n; ++i) {
        double d = c->rms ? x[i] : x[i] - mean[i];
        double g = c->zero_centered ? scale[i] + 1.0 : scale[i];
        double v = d * inv[i] * g;
        out[i] = c->bias ? v + bias[i] : v;
    }
}

#define Y_VARIANT(name, attr)                                                              \
    attr static void name(const double* const* in, double* out, int64_t n, const void* ctx, \
                          double* tmp) {                                                   \
        (void)tmp;                                                                         \
        y_rows(in, out, n, ctx);                                                           \
    }
Y_VARIANT(y_generic, )
#ifdef REF_X86_VARIANTS
Y_VARIANT(y_avx2, REF_TARGET_AVX2)
Y_VARIANT(y_avx512, REF_TARGET_AVX512)
#endif

static ref_block_fn y_block(void) {
    switch (ref_vector_level()) {
#ifdef REF_X86_VARIANTS
    case REF_VECTOR_AVX512: return y_avx512;
    case REF_VECTOR_AVX2: return y_avx2;
#endif
    default: return y_generic;
    }
}

static void copy_block(const double* const* in, double* out, int64_t n, const void* ctx,
                       double* tmp) {
    (void)ctx;
    (void)tmp;
    memcpy(out, in[0], (size_t)n * sizeof(double));
}

/* in: running statistic, this batch's sum (divided by *ctx), momentum. */
static void running_block(const double* const* in, double* out, int64_t n, const void* ctx,
                          double* tmp) {
    (void)tmp;
    double denom = *(const double*)ctx;
    const double *r = in[0], *s = in[1], *m = in[2];
    for (int64_t i = 0; i < n; ++i) out[i] = (1.0 - m[i]) * r[i] + m[i] * (s[i] / denom);
}

/* ---- running it ------------------------------------------------------------------------- */

/* The walker's blocks for y (up to 5 inputs over x's elements) or for a statistic (3). */
static int64_t walk_doubles(const ref_reduce_plan* p) {
    int64_t y_walk = ref_map_scratch_doubles(p->groups * p->count, 5, 0);
    int64_t stat_walk = ref_map_scratch_doubles(p->groups, 3, 0);
    return y_walk > stat_walk ? y_walk : stat_walk;
}

int64_t ref_norm_scratch_doubles(const hipdnnSdkNode* node, const ref_view* const* in) {
    bool axes[HIPDNN_MAX_DIMS];
    ref_reduce_plan p;
    norm_axes(node, in[HIPDNN_NORM_X], in[HIPDNN_NORM_SCALE], axes);
    ref_reduce_plan_init(&p, in[HIPDNN_NORM_X], axes);
    return 2 * ref_scratch_piece(p.groups) + ref_reduce_scratch_doubles(&p) +
           ref_scratch_piece(walk_doubles(&p));
}

/* Stores a per-statistic float64 array (packed in dims sd) through the walker. */
static void store_stat(const ref_view* dst, int nin, const ref_view* ins, ref_block_fn fn,
                       const void* ctx, double* blocks) {
    ref_view b[3];
    for (int k = 0; k < nin; ++k) ref_broadcast_view(&ins[k], dst->ndim, dst->dims, &b[k]);
    ref_map_blocks(dst, nin, b, fn, ctx, 0, blocks);
}

hipdnnPluginStatus_t ref_norm_forward(const hipdnnSdkNode* node, const ref_view* const* in,
                                      const ref_view* const* out, const ref_region* scratch) {
    char why[REF_MSG_LEN];
    int64_t mode = node->attrs[HIPDNN_NORM_MODE].i[0];
    if (!ref_norm_check(node, in, out, why, sizeof(why))) {
        const char* name = hipdnnSdkNormModeName(mode);
        ref_set_error(REF_ENGINE_NAME ": node '%s' (%s): %s", node->name,
                      name ? name : "norm_forward", why);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    const ref_view* x = in[HIPDNN_NORM_X];
    bool rms = mode == HIPDNN_RMS_NORM;
    bool axes[HIPDNN_MAX_DIMS];
    ref_reduce_plan p;
    norm_axes(node, x, in[HIPDNN_NORM_SCALE], axes);
    ref_reduce_plan_init(&p, x, axes);
    int64_t sd[HIPDNN_MAX_DIMS];
    for (int32_t i = 0; i < x->ndim; ++i) sd[i] = axes[i] ? 1 : x->dims[i];
    ref_scratch s;
    if (!ref_scratch_open(&s, ref_norm_scratch_doubles(node, in), scratch, node))
        return HIPDNN_PLUGIN_STATUS_ALLOC_FAILED;
    double* mean = ref_scratch_take(&s, p.groups);
    double* m2 = ref_scratch_take(&s, p.groups); /* sum of squares, then inv_variance */
    double* work = ref_scratch_take(&s, ref_reduce_scratch_doubles(&p)); /* reduce.c's */
    double* blocks = ref_scratch_take(&s, walk_doubles(&p));
    double count = (double)p.count;

    if (rms) {
        ref_reduce_run(&p, x, REF_RED_SUM_SQ, NULL, m2, work);
    } else {
        ref_reduce_run(&p, x, REF_RED_SUM, NULL, mean, work);
        for (int64_t g = 0; g < p.groups; ++g) mean[g] /= count;
        ref_reduce_run(&p, x, REF_RED_SUM_SQ_DEV, mean, m2, work);
    }
    ref_view mean_v, m2_v, ins[3];
    ref_view_packed_double(mean, x->ndim, sd, &mean_v);
    ref_view_packed_double(m2, x->ndim, sd, &m2_v);
    if (out[HIPDNN_NORM_OUT_RUNNING_MEAN]) { /* support.c: all five ports, or none */
        double one = 1.0, unbiased = count - 1.0;
        ins[1] = mean_v;
        ins[2] = *in[HIPDNN_NORM_EXP_AVG_FACTOR];
        ins[0] = *in[HIPDNN_NORM_IN_RUNNING_MEAN];
        store_stat(out[HIPDNN_NORM_OUT_RUNNING_MEAN], 3, ins, running_block, &one, blocks);
        ins[0] = *in[HIPDNN_NORM_IN_RUNNING_VAR];
        ins[1] = m2_v;
        store_stat(out[HIPDNN_NORM_OUT_RUNNING_VAR], 3, ins, running_block, &unbiased, blocks);
    }
    double eps = scalar_of(in[HIPDNN_NORM_EPSILON]);
    for (int64_t g = 0; g < p.groups; ++g) m2[g] = 1.0 / sqrt(m2[g] / count + eps);
    if (out[HIPDNN_NORM_MEAN])
        store_stat(out[HIPDNN_NORM_MEAN], 1, &mean_v, copy_block, NULL, blocks);
    if (out[HIPDNN_NORM_INV_VARIANCE])
        store_stat(out[HIPDNN_NORM_INV_VARIANCE], 1, &m2_v, copy_block, NULL, blocks);

    /* y over x's shape: every operand broadcast to it */
    const ref_view* y = out[HIPDNN_NORM_Y];
    y_ctx c = {rms, node->attrs[HIPDNN_NORM_ZERO_CENTERED_GAMMA].i[0] != 0,
               in[HIPDNN_NORM_BIAS] != NULL};
    ref_view src[5], b[5];
    int nin = 0;
    src[nin++] = *x;
    if (!rms) src[nin++] = mean_v;
    src[nin++] = m2_v;
    src[nin++] = *in[HIPDNN_NORM_SCALE];
    if (c.bias) src[nin++] = *in[HIPDNN_NORM_BIAS];
    for (int k = 0; k < nin; ++k) ref_broadcast_view(&src[k], y->ndim, y->dims, &b[k]);
    ref_map_blocks(y, nin, b, y_block(), &c, 0, blocks);
    ref_scratch_close(&s);
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}
