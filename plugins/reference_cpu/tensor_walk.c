/* Strided tensors: sizes, NumPy broadcasting, and the row walker that moves values
 * between tensors of any layout and data type and float64 row buffers. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference_cpu.h"

bool ref_dtype_supported(hipdnnDataType_t t) {
    return t == HIPDNN_DATA_FLOAT || t == HIPDNN_DATA_HALF || t == HIPDNN_DATA_BFLOAT16 ||
           t == HIPDNN_DATA_DOUBLE;
}

void ref_view_from_tensor(const hipdnnSdkTensor* t, void* data, ref_view* v) {
    memset(v, 0, sizeof(*v));
    v->data = data;
    v->dtype = t->data_type;
    v->ndim = t->ndim < 0 ? 0 : (t->ndim > HIPDNN_MAX_DIMS ? HIPDNN_MAX_DIMS : t->ndim);
    for (int32_t i = 0; i < v->ndim; ++i) {
        v->dims[i] = t->dims[i];
        v->strides[i] = t->strides[i];
    }
}

void ref_view_packed_double(double* data, int32_t ndim, const int64_t* dims, ref_view* v) {
    memset(v, 0, sizeof(*v));
    v->data = data;
    v->dtype = HIPDNN_DATA_DOUBLE;
    v->ndim = ndim;
    for (int32_t i = 0; i < ndim; ++i) v->dims[i] = dims[i];
    hipdnnSdkPackedStrides(ndim, v->dims, v->strides);
}

int64_t ref_element_count(int32_t ndim, const int64_t* dims) {
    int64_t n = 1;
    for (int32_t i = 0; i < ndim; ++i) {
        if (dims[i] < 1 || dims[i] > REF_MAX_ELEMENTS) return -1;
        if (__builtin_mul_overflow(n, dims[i], &n) || n > REF_MAX_ELEMENTS) return -1;
    }
    return n;
}

bool ref_next_index(int32_t ndim, const int64_t* dims, int64_t* idx) {
    for (int32_t d = ndim - 1; d >= 0; --d) {
        if (++idx[d] < dims[d]) return true;
        idx[d] = 0;
    }
    return false;
}

int64_t ref_span_elements(int32_t ndim, const int64_t* dims, const int64_t* strides) {
    int64_t span = 1;
    for (int32_t i = 0; i < ndim; ++i) {
        int64_t step;
        if (dims[i] < 1 || strides[i] < 0) return -1;
        if (__builtin_mul_overflow(dims[i] - 1, strides[i], &step) ||
            __builtin_add_overflow(span, step, &span) || span > REF_MAX_ELEMENTS)
            return -1;
    }
    return span;
}

bool ref_broadcast_view(const ref_view* in, int32_t out_ndim, const int64_t* out_dims,
                        ref_view* bv) {
    ref_view r;
    memset(&r, 0, sizeof(r));
    r.data = in->data;
    r.dtype = in->dtype;
    r.ndim = out_ndim;
    /* Leading dims of `in` beyond out's rank must be 1 (they select nothing). */
    for (int32_t i = 0; i < in->ndim - out_ndim; ++i)
        if (in->dims[i] != 1) return false;
    for (int32_t o = out_ndim - 1, i = in->ndim - 1; o >= 0; --o, --i) {
        r.dims[o] = out_dims[o];
        if (i < 0 || in->dims[i] == 1) {
            r.strides[o] = 0;
        } else if (in->dims[i] == out_dims[o]) {
            r.strides[o] = in->strides[i];
        } else {
            return false;
        }
    }
    *bv = r;
    return true;
}

/* ---- typed rows ------------------------------------------------------------------- */

/* Rounds to float with round-to-odd: a later round-to-nearest-even to float16/bfloat16
 * (11 or 8 bits, at least 2 fewer than float's 24) then equals a direct correct rounding
 * of the double, avoiding double-rounding errors. */
static float round_to_odd_float(double d) {
    float f = (float)d;
    if (isnan(d) || (double)f == d) return f;
    if (fabs((double)f) > fabs(d)) f = nextafterf(f, 0.0f); /* truncate toward zero */
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    u |= 1u; /* inexact: mark with an odd last bit */
    memcpy(&f, &u, sizeof(f));
    return f;
}

static void load_row(const void* base, hipdnnDataType_t t, int64_t off, int64_t s, int64_t n,
                     double* out) {
    switch (t) {
    case HIPDNN_DATA_FLOAT: {
        const float* p = (const float*)base + off;
        if (s == 1)
            for (int64_t i = 0; i < n; ++i) out[i] = p[i];
        else
            for (int64_t i = 0; i < n; ++i) out[i] = p[i * s];
        break;
    }
    case HIPDNN_DATA_DOUBLE: {
        const double* p = (const double*)base + off;
        for (int64_t i = 0; i < n; ++i) out[i] = p[i * s];
        break;
    }
    case HIPDNN_DATA_HALF: {
        const uint16_t* p = (const uint16_t*)base + off;
        for (int64_t i = 0; i < n; ++i) out[i] = hipdnnSdkHalfToFloat(p[i * s]);
        break;
    }
    case HIPDNN_DATA_BFLOAT16: {
        const uint16_t* p = (const uint16_t*)base + off;
        for (int64_t i = 0; i < n; ++i) out[i] = hipdnnSdkBfloat16ToFloat(p[i * s]);
        break;
    }
    default: /* support.c declines other types; never read garbage as numbers */
        for (int64_t i = 0; i < n; ++i) out[i] = NAN;
        break;
    }
}

static void store_row(void* base, hipdnnDataType_t t, int64_t off, int64_t s, int64_t n,
                      const double* in) {
    switch (t) {
    case HIPDNN_DATA_FLOAT: {
        float* p = (float*)base + off;
        if (s == 1)
            for (int64_t i = 0; i < n; ++i) p[i] = (float)in[i];
        else
            for (int64_t i = 0; i < n; ++i) p[i * s] = (float)in[i];
        break;
    }
    case HIPDNN_DATA_DOUBLE: {
        double* p = (double*)base + off;
        for (int64_t i = 0; i < n; ++i) p[i * s] = in[i];
        break;
    }
    case HIPDNN_DATA_HALF: {
        uint16_t* p = (uint16_t*)base + off;
        for (int64_t i = 0; i < n; ++i) p[i * s] = hipdnnSdkFloatToHalf(round_to_odd_float(in[i]));
        break;
    }
    case HIPDNN_DATA_BFLOAT16: {
        uint16_t* p = (uint16_t*)base + off;
        for (int64_t i = 0; i < n; ++i)
            p[i * s] = hipdnnSdkFloatToBfloat16(round_to_odd_float(in[i]));
        break;
    }
    default: break;
    }
}

/* ---- the row walker --------------------------------------------------------------- */


int ref_map_rows(const ref_view* out, int nin, const ref_view* ins, ref_row_fn fn,
                 const void* ctx) {
    int nt = nin + 1; /* tensor 0 is out */
    if (nin < 0 || nin > REF_MAP_MAX_INPUTS) return -1;
    const ref_view* views[REF_MAP_MAX_INPUTS + 1];
    views[0] = out;
    for (int t = 0; t < nin; ++t) views[t + 1] = &ins[t];

    /* Drop size-1 dims, then merge a dim into the previous one when every tensor steps
     * through both as through one (stride[prev] == stride[d] * dims[d]). */
    int64_t dims[HIPDNN_MAX_DIMS];
    int64_t st[REF_MAP_MAX_INPUTS + 1][HIPDNN_MAX_DIMS];
    int nd = 0;
    for (int32_t d = 0; d < out->ndim; ++d) {
        if (out->dims[d] == 1) continue;
        bool merge = nd > 0;
        for (int t = 0; merge && t < nt; ++t)
            if (st[t][nd - 1] != views[t]->strides[d] * out->dims[d]) merge = false;
        if (merge) {
            dims[nd - 1] *= out->dims[d];
            for (int t = 0; t < nt; ++t) st[t][nd - 1] = views[t]->strides[d];
        } else {
            dims[nd] = out->dims[d];
            for (int t = 0; t < nt; ++t) st[t][nd] = views[t]->strides[d];
            ++nd;
        }
    }
    if (nd == 0) {
        dims[0] = 1;
        for (int t = 0; t < nt; ++t) st[t][0] = 0;
        nd = 1;
    }

    int64_t len = dims[nd - 1];
    int64_t chunk = len < REF_ROW_CHUNK ? len : REF_ROW_CHUNK;
    double* buf = malloc((size_t)nt * (size_t)chunk * sizeof(double));
    if (!buf) return -1;
    const double* rows_in[REF_MAP_MAX_INPUTS];
    for (int t = 0; t < nin; ++t) rows_in[t] = buf + (size_t)(t + 1) * (size_t)chunk;
    double* row_out = buf;

    int64_t idx[HIPDNN_MAX_DIMS] = {0};
    for (;;) {
        int64_t off[REF_MAP_MAX_INPUTS + 1];
        for (int t = 0; t < nt; ++t) {
            off[t] = 0;
            for (int d = 0; d < nd - 1; ++d) off[t] += idx[d] * st[t][d];
        }
        for (int64_t c0 = 0; c0 < len; c0 += chunk) {
            int64_t n = len - c0 < chunk ? len - c0 : chunk;
            for (int t = 1; t < nt; ++t)
                load_row(views[t]->data, views[t]->dtype, off[t] + c0 * st[t][nd - 1],
                         st[t][nd - 1], n, (double*)rows_in[t - 1]);
            fn(rows_in, row_out, n, ctx);
            store_row(out->data, out->dtype, off[0] + c0 * st[0][nd - 1], st[0][nd - 1], n,
                      row_out);
        }
        if (!ref_next_index(nd - 1, dims, idx)) break; /* every dim but the innermost */
    }
    free(buf);
    return 0;
}

static void copy_row(const double* const* in, double* out, int64_t n, const void* ctx) {
    (void)ctx;
    memcpy(out, in[0], (size_t)n * sizeof(double));
}

int ref_gather(const ref_view* v, double* packed) {
    ref_view dst;
    ref_view_packed_double(packed, v->ndim, v->dims, &dst);
    return ref_map_rows(&dst, 1, v, copy_row, NULL);
}

int ref_scatter(const double* packed, const ref_view* v) {
    ref_view src;
    ref_view_packed_double((double*)packed, v->ndim, v->dims, &src);
    return ref_map_rows(v, 1, &src, copy_row, NULL);
}

double* ref_alloc_doubles(int64_t n, const hipdnnSdkNode* node) {
    double* p = NULL;
    if (n >= 0 && (uint64_t)n <= SIZE_MAX / sizeof(double))
        p = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    if (!p) {
        const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(node->kind);
        ref_set_error(REF_ENGINE_NAME ": node '%s' (%s): out of memory for %lld float64 "
                      "scratch values",
                      node->name, info ? info->name : "?", (long long)n);
    }
    return p;
}

void ref_load_row(const void* base, hipdnnDataType_t t, int64_t off, int64_t s, int64_t n,
                  double* out) {
    load_row(base, t, off, s, n, out);
}

void ref_store_row(void* base, hipdnnDataType_t t, int64_t off, int64_t s, int64_t n,
                   const double* in) {
    store_row(base, t, off, s, n, in);
}
