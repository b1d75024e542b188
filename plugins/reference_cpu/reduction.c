/* reduction: y = x combined over every axis where y's dim is 1 and x's is not, with one
 * of cuDNN's nine operators (add, mul, min, max, amax = max |x|, avg, norm1 = sum |x|,
 * norm2 = sqrt(sum x^2), mul_no_zeros = product of the nonzero values, 1 if none).
 * The values are combined in float64 (reduce.c), finished (avg's division, norm2's root)
 * and stored rounded once to y's data type; min / max / amax propagate NaN, as NumPy's. */
#include <math.h>

#include "reference_cpu.h"

bool ref_reduction_check(const hipdnnSdkNode* node, const ref_view* x, const ref_view* y,
                         char* why, size_t len) {
    int64_t mode = node->attrs[HIPDNN_RED_MODE].i[0];
    if (node->attrs[HIPDNN_RED_MODE].count != 1 || !hipdnnSdkReductionModeName(mode)) {
        hipdnnSdkFormat(why, len, "reduction mode %lld not supported (add, mul, min, max, "
                        "amax, avg, norm1, norm2, mul_no_zeros)", (long long)mode);
        return false;
    }
    bool ok = x->ndim == y->ndim;
    for (int32_t i = 0; ok && i < x->ndim; ++i) ok = y->dims[i] == 1 || y->dims[i] == x->dims[i];
    if (!ok) {
        hipdnnSdkFormat(why, len, "y (rank %d) must have x's rank %d with each dim x's or 1",
                        y->ndim, x->ndim);
        return false;
    }
    return true;
}

static void axes_of(const ref_view* x, const ref_view* y, bool* axes) {
    for (int32_t i = 0; i < x->ndim; ++i) axes[i] = y->dims[i] == 1 && x->dims[i] != 1;
}

static ref_reduce_op op_of(int64_t mode) {
    switch (mode) {
    case HIPDNN_REDUCE_TENSOR_MUL: return REF_RED_PROD;
    case HIPDNN_REDUCE_TENSOR_MIN: return REF_RED_MIN;
    case HIPDNN_REDUCE_TENSOR_MAX: return REF_RED_MAX;
    case HIPDNN_REDUCE_TENSOR_AMAX: return REF_RED_AMAX;
    case HIPDNN_REDUCE_TENSOR_NORM1: return REF_RED_SUM_ABS;
    case HIPDNN_REDUCE_TENSOR_NORM2: return REF_RED_SUM_SQ;
    case HIPDNN_REDUCE_TENSOR_MUL_NO_ZEROS: return REF_RED_PROD_NONZERO;
    default: return REF_RED_SUM; /* add, avg */
    }
}

typedef struct {
    int64_t mode;
    double count;
} finish_ctx;

/* The combined values finished as the mode says; the walker stores them rounded. */
static void finish_block(const double* const* in, double* out, int64_t n, const void* ctx,
                         double* tmp) {
    (void)tmp;
    const finish_ctx* f = ctx;
    const double* a = in[0];
    if (f->mode == HIPDNN_REDUCE_TENSOR_AVG)
        for (int64_t i = 0; i < n; ++i) out[i] = a[i] / f->count;
    else if (f->mode == HIPDNN_REDUCE_TENSOR_NORM2)
        for (int64_t i = 0; i < n; ++i) out[i] = sqrt(a[i]);
    else
        for (int64_t i = 0; i < n; ++i) out[i] = a[i];
}

int64_t ref_reduction_scratch_doubles(const ref_view* x, const ref_view* y) {
    bool axes[HIPDNN_MAX_DIMS];
    ref_reduce_plan p;
    axes_of(x, y, axes);
    ref_reduce_plan_init(&p, x, axes);
    return ref_scratch_piece(p.groups) + ref_reduce_scratch_doubles(&p) +
           ref_scratch_piece(ref_map_scratch_doubles(p.groups, 1, 0));
}

hipdnnPluginStatus_t ref_reduction(const hipdnnSdkNode* node, const ref_view* x,
                                   const ref_view* y, const ref_region* scratch) {
    char why[REF_MSG_LEN];
    if (!ref_reduction_check(node, x, y, why, sizeof(why))) {
        ref_set_error(REF_ENGINE_NAME ": node '%s' (reduction): %s", node->name, why);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    bool axes[HIPDNN_MAX_DIMS];
    ref_reduce_plan p;
    axes_of(x, y, axes);
    ref_reduce_plan_init(&p, x, axes);
    ref_scratch s;
    if (!ref_scratch_open(&s, ref_reduction_scratch_doubles(x, y), scratch, node))
        return HIPDNN_PLUGIN_STATUS_ALLOC_FAILED;
    double* acc = ref_scratch_take(&s, p.groups);
    double* work = ref_scratch_take(&s, ref_reduce_scratch_doubles(&p)); /* reduce.c's */
    double* blocks = ref_scratch_take(&s, ref_map_scratch_doubles(p.groups, 1, 0));
    int64_t mode = node->attrs[HIPDNN_RED_MODE].i[0];
    ref_reduce_run(&p, x, op_of(mode), NULL, acc, work);
    /* acc is y packed: the kept dims in order, 1 on every reduced one */
    ref_view packed;
    ref_view_packed_double(acc, y->ndim, y->dims, &packed);
    finish_ctx f = {mode, (double)p.count};
    ref_map_blocks(y, 1, &packed, finish_block, &f, 0, blocks);
    ref_scratch_close(&s);
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}
