/* genstats: per-channel (dim 1) sum and sum of squares of x, in float64 through reduce.c,
 * each rounded once to its output's type ([1, C, 1, ...]).  cuDNN fuses it after a
 * convolution to feed a batchnorm; here it runs as its own node on the conv's output. */
#include "reference_cpu.h"

static bool channel_dims(const ref_view* x, const ref_view* v) {
    bool ok = v->ndim == x->ndim;
    for (int32_t i = 0; ok && i < x->ndim; ++i) ok = v->dims[i] == (i == 1 ? x->dims[1] : 1);
    return ok;
}

bool ref_genstats_check(const hipdnnSdkNode* node, const ref_view* x, const ref_view* sum,
                        const ref_view* sq_sum, char* why, size_t len) {
    if (node->attrs[HIPDNN_GENSTATS_MODE_SLOT].i[0] != HIPDNN_GENSTATS_SUM_SQSUM) {
        hipdnnSdkFormat(why, len, "genstats mode %lld not supported",
                        (long long)node->attrs[HIPDNN_GENSTATS_MODE_SLOT].i[0]);
        return false;
    }
    if (x->ndim < 2) {
        hipdnnSdkFormat(why, len, "x has rank %d; it needs at least 2 ([N, C, ...])", x->ndim);
        return false;
    }
    if (!channel_dims(x, sum) || !channel_dims(x, sq_sum)) {
        hipdnnSdkFormat(why, len, "sum and sq_sum must be [1, C, 1, ...] for x's C = %lld",
                        (long long)x->dims[1]);
        return false;
    }
    return true;
}

static void x_axes(const ref_view* x, bool* axes) {
    for (int32_t i = 0; i < x->ndim; ++i) axes[i] = i != 1;
}

int64_t ref_genstats_scratch_doubles(const ref_view* x) {
    bool axes[HIPDNN_MAX_DIMS];
    ref_reduce_plan p;
    x_axes(x, axes);
    ref_reduce_plan_init(&p, x, axes);
    return ref_scratch_piece(p.groups) + ref_scratch_piece(ref_reduce_scratch_doubles(&p));
}

hipdnnPluginStatus_t ref_genstats(const hipdnnSdkNode* node, const ref_view* x,
                                  const ref_view* sum, const ref_view* sq_sum,
                                  const ref_region* scratch) {
    char why[REF_MSG_LEN];
    if (!ref_genstats_check(node, x, sum, sq_sum, why, sizeof(why))) {
        ref_set_error(REF_ENGINE_NAME ": node '%s' (genstats): %s", node->name, why);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    bool axes[HIPDNN_MAX_DIMS];
    ref_reduce_plan p;
    x_axes(x, axes);
    ref_reduce_plan_init(&p, x, axes);
    ref_scratch s;
    if (!ref_scratch_open(&s, ref_genstats_scratch_doubles(x), scratch, node))
        return HIPDNN_PLUGIN_STATUS_ALLOC_FAILED;
    double* acc = ref_scratch_take(&s, p.groups);
    double* work = ref_scratch_take(&s, ref_reduce_scratch_doubles(&p));
    /* groups are the channels, in order: acc is a packed [C] array */
    ref_reduce_run(&p, x, REF_RED_SUM, NULL, acc, work);
    ref_store_row(sum->data, sum->dtype, 0, sum->strides[1], x->dims[1], acc);
    ref_reduce_run(&p, x, REF_RED_SUM_SQ, NULL, acc, work);
    ref_store_row(sq_sum->data, sq_sum->dtype, 0, sq_sum->strides[1], x->dims[1], acc);
    ref_scratch_close(&s);
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}
