/* batchnorm_inference: y = (x - mean) * inv_variance * scale + bias.
 * The four statistics/parameter tensors are per channel ([1, C, 1, ...]) and broadcast
 * NumPy-style over x; any shape that broadcasts to x is accepted.
 * Evaluated left to right in float64, the order of the float64 NumPy reference, so the
 * value stored is that reference rounded once (tests compare fp16/bf16 bit for bit).  A
 * NaN in x, or in a channel's parameter, gives NaN in exactly the outputs it feeds. */
#include "reference_cpu.h"

static const char* const k_names[5] = {"x", "mean", "inv_variance", "scale", "bias"};

bool ref_batchnorm_check(const ref_view* in, const ref_view* y, char* why, size_t len) {
    const ref_view* x = &in[HIPDNN_BN_X];
    if (x->ndim < 2) {
        hipdnnSdkFormat(why, len, "x has rank %d; batchnorm needs at least 2 (N, C, ...)",
                        x->ndim);
        return false;
    }
    bool same = x->ndim == y->ndim;
    for (int32_t i = 0; same && i < x->ndim; ++i) same = x->dims[i] == y->dims[i];
    if (!same) {
        hipdnnSdkFormat(why, len, "y dims differ from x dims");
        return false;
    }
    for (int p = 1; p < 5; ++p) {
        ref_view bv;
        if (!ref_broadcast_view(&in[p], y->ndim, y->dims, &bv)) {
            hipdnnSdkFormat(why, len, "%s (rank %d) does not broadcast to x (rank %d)",
                            k_names[p], in[p].ndim, x->ndim);
            return false;
        }
    }
    return true;
}

static void bn_block(const double* const* in, double* y, int64_t n, const void* ctx,
                     double* tmp) {
    (void)ctx;
    (void)tmp;
    const double *x = in[0], *mean = in[1], *inv_var = in[2], *scale = in[3], *bias = in[4];
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean[i]) * inv_var[i] * scale[i] + bias[i];
}

int64_t ref_batchnorm_scratch_doubles(int64_t elements) {
    return ref_scratch_piece(ref_map_scratch_doubles(elements, 5, 0));
}

hipdnnPluginStatus_t ref_batchnorm_inference(const hipdnnSdkNode* node, const ref_view* in,
                                             const ref_view* y, const ref_region* scratch) {
    char why[REF_MSG_LEN];
    if (!ref_batchnorm_check(in, y, why, sizeof(why))) {
        ref_set_error(REF_ENGINE_NAME ": node '%s' (batchnorm_inference): %s", node->name, why);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    ref_view bv[5];
    for (int p = 0; p < 5; ++p) ref_broadcast_view(&in[p], y->ndim, y->dims, &bv[p]);
    int64_t elements = ref_element_count(y->ndim, y->dims);
    ref_scratch s;
    if (!ref_scratch_open(&s, ref_batchnorm_scratch_doubles(elements), scratch, node))
        return HIPDNN_PLUGIN_STATUS_ALLOC_FAILED;
    ref_map_blocks(y, 5, bv, bn_block, NULL, 0, ref_scratch_take(&s, ref_map_scratch_doubles(elements, 5, 0)));
    ref_scratch_close(&s);
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}
