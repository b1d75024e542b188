/* sdpa's ragged tensors (cuDNN's THD layout): element (b, h, s, d) of a [B, H, S, D] view
 * with offsets lives at offsets[b] + h s1 + s s2 + d s3.  Only a sample's rows below its
 * sequence length are its own (the rows past it are the next sample's), so these copies
 * read and write those rows alone; the packed copy holds 0 past them. */
#include "reference_cpu.h"

int64_t ref_ragged_start(const ref_view* v, int64_t b) {
    if (!v->ragged) return b * v->strides[0];
    return v->offsets_dtype == HIPDNN_DATA_INT64 ? ((const int64_t*)v->offsets)[b]
                                                 : ((const int32_t*)v->offsets)[b];
}

bool ref_ragged_check(const ref_view* v, const int64_t* len, const char* node, const char* port) {
    if (!v || !v->ragged) return true;
    if (!v->offsets) {
        ref_set_error(REF_ENGINE_NAME ": node '%s': %s's ragged offsets have no memory", node,
                      port);
        return false;
    }
    const int64_t span = ref_span_elements(v->ndim, v->dims, v->strides);
    for (int64_t b = 0; b < v->dims[0]; ++b) {
        const int64_t at = ref_ragged_start(v, b), rows = len[b] < v->dims[2] ? len[b] : v->dims[2];
        const int64_t last = at + (v->dims[1] - 1) * v->strides[1] + (rows - 1) * v->strides[2] +
                             (v->dims[3] - 1) * v->strides[3];
        if (rows > 0 && (at < 0 || last >= span)) {
            ref_set_error(REF_ENGINE_NAME ": node '%s': %s's ragged offset[%lld] = %lld puts "
                          "its %lld rows outside the tensor's %lld elements", node, port,
                          (long long)b, (long long)at, (long long)rows, (long long)span);
            return false;
        }
    }
    return true;
}

/* Visits (b, h, s, d) for s below len[b] (every s where len is NULL): the packed index
 * and the view's element. */
#define RAGGED_FOR(v, len, body)                                                             \
    for (int64_t b = 0; b < (v)->dims[0]; ++b)                                              \
        for (int64_t h = 0; h < (v)->dims[1]; ++h)                                          \
            for (int64_t s = 0; s < (v)->dims[2]; ++s)                                      \
                for (int64_t d = 0; d < (v)->dims[3]; ++d) {                                \
                    const int64_t k = ((b * (v)->dims[1] + h) * (v)->dims[2] + s) *         \
                                          (v)->dims[3] + d;                                 \
                    const int64_t at = ref_ragged_start(v, b) + h * (v)->strides[1] +           \
                                       s * (v)->strides[2] + d * (v)->strides[3];           \
                    const bool own = !(len) || s < (len)[b];                                \
                    body;                                                                   \
                }

void ref_ragged_gather(const ref_view* v, const int64_t* len, double* packed) {
    if (!v->ragged) {
        ref_gather(v, packed);
        return;
    }
    RAGGED_FOR(v, len, packed[k] = own ? hipdnnSdkLoadAsDouble(v->data, v->dtype, at) : 0.0)
}

void ref_ragged_scatter(const double* packed, const ref_view* v, const int64_t* len) {
    if (!v->ragged) {
        ref_scatter(packed, v);
        return;
    }
    RAGGED_FOR(v, len, if (own) hipdnnSdkStoreFromDouble(v->data, v->dtype, at, packed[k]))
}
