/* matmul: c[..., M, N] = a[..., M, K] @ b[..., K, N], batch dims broadcast NumPy-style
 * (right-aligned; a size-1 or missing dim repeats).  a and b are gathered into packed
 * float64 arrays; each c row accumulates a[m, k] * b[k, :] over k, which keeps the inner
 * loop contiguous. */
#include <stdlib.h>
#include <string.h>

#include "reference_cpu.h"

/* Batch dims of t right-aligned into `rank` slots, 1 where t has none. */
static void aligned_batch(const ref_view* t, int32_t rank, int64_t* out) {
    int32_t tb = t->ndim - 2;
    for (int32_t i = 0; i < rank; ++i) {
        int32_t j = i - (rank - tb);
        out[i] = j >= 0 ? t->dims[j] : 1;
    }
}

bool ref_matmul_check(const ref_view* a, const ref_view* b, const ref_view* c, char* why,
                      size_t len) {
    if (a->ndim < 2 || b->ndim < 2 || c->ndim < 2) {
        hipdnnSdkFormat(why, len, "ranks a %d, b %d, c %d; each needs at least 2", a->ndim,
                        b->ndim, c->ndim);
        return false;
    }
    int64_t m = a->dims[a->ndim - 2], k = a->dims[a->ndim - 1];
    int64_t kb = b->dims[b->ndim - 2], n = b->dims[b->ndim - 1];
    if (k != kb) {
        hipdnnSdkFormat(why, len, "a is [..., %lld, %lld] but b is [..., %lld, %lld]; inner "
                        "dims must match",
                        (long long)m, (long long)k, (long long)kb, (long long)n);
        return false;
    }
    if (c->dims[c->ndim - 2] != m || c->dims[c->ndim - 1] != n) {
        hipdnnSdkFormat(why, len, "c is [..., %lld, %lld] but expected [..., %lld, %lld]",
                        (long long)c->dims[c->ndim - 2], (long long)c->dims[c->ndim - 1],
                        (long long)m, (long long)n);
        return false;
    }
    int32_t rank = a->ndim;
    if (b->ndim > rank) rank = b->ndim;
    if (c->ndim > rank) rank = c->ndim;
    rank -= 2;
    int64_t ab[HIPDNN_MAX_DIMS], bb[HIPDNN_MAX_DIMS], cb[HIPDNN_MAX_DIMS];
    aligned_batch(a, rank, ab);
    aligned_batch(b, rank, bb);
    aligned_batch(c, rank, cb);
    for (int32_t i = 0; i < rank; ++i) {
        bool a_ok = ab[i] == cb[i] || ab[i] == 1, b_ok = bb[i] == cb[i] || bb[i] == 1;
        bool c_ok = cb[i] == 1 || ab[i] == cb[i] || bb[i] == cb[i];
        if (!a_ok || !b_ok || !c_ok) {
            hipdnnSdkFormat(why, len,
                            "batch dim %d (right-aligned): a %lld and b %lld do not broadcast "
                            "to c %lld",
                            i, (long long)ab[i], (long long)bb[i], (long long)cb[i]);
            return false;
        }
    }
    return true;
}

/* Strides, in the packed float64 copy of t, of c's batch dims (0 where t broadcasts). */
static void batch_strides(const ref_view* t, const ref_view* c, int64_t* out) {
    ref_view packed, batch, bv;
    ref_view_packed_double(NULL, t->ndim, t->dims, &packed);
    batch = packed;
    batch.ndim = t->ndim - 2;
    if (!ref_broadcast_view(&batch, c->ndim - 2, c->dims, &bv)) { /* checked already */
        memset(out, 0, sizeof(int64_t) * HIPDNN_MAX_DIMS);
        return;
    }
    for (int32_t i = 0; i < c->ndim - 2; ++i) out[i] = bv.strides[i];
}

hipdnnPluginStatus_t ref_matmul(const hipdnnSdkNode* node, const ref_view* a,
                                const ref_view* b, const ref_view* c) {
    char why[REF_MSG_LEN];
    if (!ref_matmul_check(a, b, c, why, sizeof(why))) {
        ref_set_error(REF_ENGINE_NAME ": node '%s' (matmul): %s", node->name, why);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    int64_t m = a->dims[a->ndim - 2], k = a->dims[a->ndim - 1], n = b->dims[b->ndim - 1];
    int32_t nb = c->ndim - 2;
    int64_t sa[HIPDNN_MAX_DIMS] = {0}, sb[HIPDNN_MAX_DIMS] = {0};
    batch_strides(a, c, sa);
    batch_strides(b, c, sb);

    hipdnnPluginStatus_t st = HIPDNN_PLUGIN_STATUS_ALLOC_FAILED;
    double* as = ref_alloc_doubles(ref_element_count(a->ndim, a->dims), node);
    double* bs = ref_alloc_doubles(ref_element_count(b->ndim, b->dims), node);
    double* cs = ref_alloc_doubles(ref_element_count(c->ndim, c->dims), node);
    if (!as || !bs || !cs) goto done;
    if (ref_gather(a, as) != 0 || ref_gather(b, bs) != 0) goto oom;

    int64_t idx[HIPDNN_MAX_DIMS] = {0};
    double* cm = cs;
    for (;;) {
        int64_t oa = 0, ob = 0;
        for (int32_t i = 0; i < nb; ++i) {
            oa += idx[i] * sa[i];
            ob += idx[i] * sb[i];
        }
        const double* ap = as + oa;
        const double* bp = bs + ob;
        for (int64_t i = 0; i < m; ++i, cm += n) {
            for (int64_t j = 0; j < n; ++j) cm[j] = 0.0;
            for (int64_t p = 0; p < k; ++p) {
                double av = ap[i * k + p];
                const double* brow = bp + p * n;
                for (int64_t j = 0; j < n; ++j) cm[j] += av * brow[j];
            }
        }
        if (!ref_next_index(nb, c->dims, idx)) break;
    }
    if (ref_scatter(cs, c) != 0) goto oom;
    st = HIPDNN_PLUGIN_STATUS_SUCCESS;
    goto done;
oom:
    ref_set_error(REF_ENGINE_NAME ": node '%s' (matmul): out of memory for scratch rows",
                  node->name);
done:
    free(cs);
    free(bs);
    free(as);
    return st;
}
