/* Outputs that share memory with inputs or with each other, at execute.
 *
 * An engine reads its inputs while it writes its outputs, in an order of its own (tiles,
 * rows, whole nodes one after another): an output over an input's bytes gives numbers
 * that depend on that order (issue 26: a 3x3 convolution written over its image, tanh
 * over its input shifted by one element).  So every input whose bytes overlap an output's
 * is copied first, into memory of the engine's kind, and the engine reads the copy: the
 * result is the out-of-place one, in place included (a rotary embedding written back into
 * the halves of q it reads).  Two outputs over the same bytes have no defined result and
 * are refused, naming both.  Two tensors whose byte ranges [first element, last element]
 * overlap are then asked whether any element of one shares a byte with an element of the
 * other (views_share_bytes), so views that interleave without touching (the two halves of
 * each row that a rotary embedding writes in place) are neither refused nor copied. */
#include <stdlib.h>
#include <string.h>

#include "aliasing.h"
#include "device.h"
#include "error.h"

typedef struct {
    uintptr_t lo, hi; /* bytes [lo, hi) */
    uint32_t buf;     /* index into the buffers */
    int output;       /* 1 written by a node, 0 not, -1 not asked yet (overlaps are rare) */
    bool staged;      /* its buffer now points at a copy */
    const hipdnnSdkTensor* t;
} range;

static int by_start(const void* a, const void* b) {
    const range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo ? 1 : 0;
}

/* By start: in place for the few tensors of most graphs (qsort allocated and cost more
 * than the rest of the check), qsort for many. */
static void sort_ranges(range* r, uint32_t n) {
    if (n > 32) {
        qsort(r, n, sizeof(*r), by_start);
        return;
    }
    for (uint32_t i = 1; i < n; ++i) {
        range x = r[i];
        uint32_t j = i;
        for (; j > 0 && r[j - 1].lo > x.lo; --j) r[j] = r[j - 1];
        r[j] = x;
    }
}

/* Whether range r's tensor is written by a node (asked once, only of ranges that overlap). */
static bool is_output(const hipdnnSdkGraph* g, range* r) {
    for (int32_t i = 0; r->output < 0 && i < g->num_nodes; ++i)
        for (int p = 0; p < HIPDNN_MAX_PORTS; ++p)
            if (g->nodes[i].outputs[p] == r->t->uid) r->output = 1;
    if (r->output < 0) r->output = 0;
    return r->output;
}

/* One term of the address difference: stride * c for an integer c in [lo, hi]. */
typedef struct {
    int64_t stride, lo, hi;
} term;

static int by_stride_desc(const void* a, const void* b) {
    const term *x = a, *y = b;
    return x->stride < y->stride ? 1 : x->stride > y->stride ? -1 : 0;
}

static int64_t floor_div(int64_t a, int64_t b) { /* b > 0 */
    return a / b - (a % b != 0 && a < 0);
}

/* Whether sum(stride_k * c_k) over terms k.. can land in [lo, hi] given the partial sum;
 * min_rest/max_rest[k] bound what terms k.. add.  Largest stride first, each c_k only where
 * the terms after it can still reach the window; *work caps the search. */
static bool reach(const term* t, int n, int k, const int64_t* min_rest, const int64_t* max_rest,
                  int64_t sum, int64_t lo, int64_t hi, int* work) {
    if (--*work < 0) return true; /* too hard to tell: say they share */
    if (k == n) return sum >= lo && sum <= hi;
    int64_t c_lo = -floor_div(-(lo - sum - max_rest[k + 1]), t[k].stride); /* ceil */
    int64_t c_hi = floor_div(hi - sum - min_rest[k + 1], t[k].stride);
    if (c_lo < t[k].lo) c_lo = t[k].lo;
    if (c_hi > t[k].hi) c_hi = t[k].hi;
    for (int64_t c = c_lo; c <= c_hi; ++c)
        if (reach(t, n, k + 1, min_rest, max_rest, sum + c * t[k].stride, lo, hi, work))
            return true;
    return false;
}

/* Whether an element of tensor a at pa and one of tensor b at pb share a byte: some index
 * of each with pa - pb + a's offset - b's offset in (-size_b, size_a).  Dims of one stride
 * in both fold into one term (the same layout at another offset is then a few steps). */
static bool views_share_bytes(const range* ra, const range* rb) {
    const hipdnnSdkTensor *a = ra->t, *b = rb->t;
    const uintptr_t big = (uintptr_t)1 << 60; /* sums below stay far from int64's end */
    if (ra->hi - ra->lo >= big || rb->hi - rb->lo >= big ||
        (ra->lo > rb->lo ? ra->lo - rb->lo : rb->lo - ra->lo) >= big)
        return true;
    term t[2 * HIPDNN_MAX_DIMS];
    int n = 0;
    for (int side = 0; side < 2; ++side) {
        const hipdnnSdkTensor* x = side ? b : a;
        int64_t size = (int64_t)hipdnnSdkDataTypeSize(x->data_type);
        if (size <= 0) return true; /* sub-byte types: by their ranges */
        for (int32_t d = 0; d < x->ndim; ++d) {
            if (x->dims[d] <= 0) return false; /* no elements */
            if (x->strides[d] < 0) return true;
            if (x->dims[d] == 1 || x->strides[d] == 0) continue;
            int64_t stride = x->strides[d] * size, reach_ = x->dims[d] - 1;
            int m = 0;
            while (m < n && t[m].stride != stride) ++m;
            if (m == n) t[n++] = (term){stride, 0, 0};
            if (side) t[m].lo -= reach_; else t[m].hi += reach_;
        }
    }
    qsort(t, (size_t)n, sizeof(term), by_stride_desc);
    int64_t min_rest[2 * HIPDNN_MAX_DIMS + 1], max_rest[2 * HIPDNN_MAX_DIMS + 1];
    min_rest[n] = max_rest[n] = 0;
    for (int k = n - 1; k >= 0; --k) {
        min_rest[k] = min_rest[k + 1] + t[k].stride * t[k].lo;
        max_rest[k] = max_rest[k + 1] + t[k].stride * t[k].hi;
    }
    /* The spans fit the address space (checked by the caller), so these sums do too. */
    int64_t base = (int64_t)(ra->lo - rb->lo);
    int64_t size_a = (int64_t)hipdnnSdkDataTypeSize(a->data_type);
    int64_t size_b = (int64_t)hipdnnSdkDataTypeSize(b->data_type);
    int work = 1 << 16;
    return reach(t, n, 0, min_rest, max_rest, base, -size_b + 1, size_a - 1, &work);
}

/* A copy of buffer b's `bytes`, in host memory or on the device (on the handle's stream),
 * recorded in *s so that hipdnnAliasRelease frees it.  The device copy is allocated, and
 * later synchronized on and freed, in relaxed capture interaction when the stream is not
 * capturing: another stream's capture is left alone (hipdnnDeviceRelaxCapture). */
static hipdnnStatus_t stage(hipdnnAliasStaging* s, hipdnnPluginTensorBuffer_t* b, size_t bytes,
                            bool on_device, hipdnnStream_t stream, uint32_t nb) {
    if (!s->copies) { /* room for every buffer, made on the first copy */
        s->copies = malloc(nb * sizeof(void*));
        s->on_device = malloc(nb * sizeof(bool));
        if (!s->copies || !s->on_device)
            return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory staging an input");
    }
    void* copy = NULL;
    if (!on_device) {
        copy = malloc(bytes ? bytes : 1);
        if (!copy) return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory staging an input");
        memcpy(copy, b->ptr, bytes);
    } else {
        const hipdnnDeviceRuntime* rt = hipdnnDeviceRuntimeGet();
        if (!rt) return hipdnnFail(HIPDNN_STATUS_INTERNAL_ERROR, "no GPU runtime");
        const int saved = hipdnnDeviceRelaxCapture(rt, stream);
        hipdnnStatus_t st = rt->malloc(&copy, bytes);
        if (!st) st = rt->memcpy(copy, b->ptr, bytes, stream, false);
        if (st && copy) rt->free(copy);
        hipdnnDeviceRestoreCapture(rt, saved);
        if (st) return st;
        s->stream = stream;
    }
    s->copies[s->n] = copy;
    s->on_device[s->n++] = on_device;
    b->ptr = copy;
    return HIPDNN_STATUS_SUCCESS;
}

/* The byte range of every buffer but runtime scalars into r, *n of them; BAD_PARAM for one
 * past the address space. */
static hipdnnStatus_t ranges_of(const hipdnnSdkGraph* g, const int64_t* span_bytes,
                                const hipdnnPluginTensorBuffer_t* bufs, uint32_t nb, range* r,
                                uint32_t* n) {
    int32_t k = 0; /* the buffers are in the graph's tensor order (execute.c) */
    for (uint32_t b = 0; b < nb; ++b) {
        while (k < g->num_tensors && g->tensors[k].uid != bufs[b].uid) ++k;
        if (k == g->num_tensors) break;
        const hipdnnSdkTensor* t = &g->tensors[k];
        if (t->is_by_value) continue; /* a runtime scalar: read before anything runs */
        if (span_bytes[k] == HIPDNN_SPAN_RAGGED) continue; /* its reach is device data */
        uintptr_t lo = (uintptr_t)bufs[b].ptr, hi;
        if (span_bytes[k] < 0 || __builtin_add_overflow(lo, (uintptr_t)span_bytes[k], &hi))
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "variant pack: tensor '%s' (uid %lld) "
                              "reaches past the address space", t->name, (long long)t->uid);
        r[(*n)++] = (range){lo, hi, b, -1, false, t};
    }
    return HIPDNN_STATUS_SUCCESS;
}

hipdnnStatus_t hipdnnAliasStage(const hipdnnSdkGraph* g, const int64_t* span_bytes,
                                hipdnnPluginTensorBuffer_t* bufs,
                                uint32_t nb, bool device_engine, hipdnnStream_t stream,
                                hipdnnAliasStaging* s) {
    memset(s, 0, sizeof(*s));
    if (nb < 2) return HIPDNN_STATUS_SUCCESS;
    range local[32]; /* no allocation for most graphs: this runs on every execute */
    range* r = nb <= 32 ? local : malloc(nb * sizeof(*r));
    if (!r)
        return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory checking outputs for overlap");
    uint32_t n = 0;
    hipdnnStatus_t st = ranges_of(g, span_bytes, bufs, nb, r, &n);
    if (!st) sort_ranges(r, n);
    for (uint32_t i = 0; !st && i < n; ++i)
        for (uint32_t j = i + 1; !st && j < n && r[j].lo < r[i].hi; ++j) {
            bool oi = is_output(g, &r[i]), oj = is_output(g, &r[j]);
            if (!oi && !oj) continue; /* inputs may share */
            if (!views_share_bytes(&r[i], &r[j])) continue;
            if (oi && oj) {
                st = hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "variant pack: outputs '%s' (uid %lld) "
                                "and '%s' (uid %lld) share memory; each output needs its own",
                                r[i].t->name, (long long)r[i].t->uid, r[j].t->name,
                                (long long)r[j].t->uid);
                break;
            }
            range* in = oi ? &r[j] : &r[i];
            if (in->staged) continue;
            in->staged = true;
            st = stage(s, &bufs[in->buf], in->hi - in->lo, device_engine, stream, nb);
        }
    if (r != local) free(r);
    if (st) hipdnnAliasRelease(s);
    return st;
}

void hipdnnAliasRelease(hipdnnAliasStaging* s) {
    /* the runtime only when a copy is on the device: a host run never loads it */
    const hipdnnDeviceRuntime* rt = NULL;
    for (uint32_t i = 0; i < s->n && !rt; ++i)
        if (s->on_device[i]) rt = hipdnnDeviceRuntimeGet();
    bool synced = false;
    const int saved = rt ? hipdnnDeviceRelaxCapture(rt, s->stream) : -1;
    for (uint32_t i = 0; i < s->n; ++i) {
        if (!s->on_device[i]) {
            free(s->copies[i]);
        } else if (rt) { /* the engine's work on the copy ends first */
            if (!synced) rt->stream_synchronize(s->stream);
            synced = true;
            rt->free(s->copies[i]);
        }
    }
    if (rt) hipdnnDeviceRestoreCapture(rt, saved);
    free(s->copies);
    free(s->on_device);
    memset(s, 0, sizeof(*s));
}
