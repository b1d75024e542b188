/* Outputs that share memory with inputs or with each other, at execute.
 *
 * An engine reads its inputs while it writes its outputs, in an order of its own (tiles,
 * rows, whole nodes one after another): an output over an input's bytes gives numbers
 * that depend on that order (issue 26: a 3x3 convolution written over its image, tanh
 * over its input shifted by one element).  So every input whose bytes overlap an output's
 * is copied first, into memory of the engine's kind, and the engine reads the copy: the
 * result is the out-of-place one, in place included (a rotary embedding written back into
 * the halves of q it reads).  Two outputs over the same bytes have no defined result and
 * are refused, naming both.  Overlap is of byte ranges [first element, last element]:
 * exact for the layouts hipdnn accepts (strides positive, outputs never self-overlapping)
 * and conservative for interleaved ones. */
#include <stdlib.h>
#include <string.h>

#include "aliasing.h"
#include "device.h"
#include "error.h"

typedef struct {
    uintptr_t lo, hi; /* bytes [lo, hi) */
    uint32_t buf;     /* index into the buffers */
    int output;       /* 1 written by a node, 0 not, -1 not asked yet (overlaps are rare) */
    const hipdnnSdkTensor* t;
} range;

static int by_start(const void* a, const void* b) {
    const range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo ? 1 : 0;
}

/* Whether range r's tensor is written by a node (asked once, only of ranges that overlap). */
static bool is_output(const hipdnnSdkGraph* g, range* r) {
    for (int32_t i = 0; r->output < 0 && i < g->num_nodes; ++i)
        for (int p = 0; p < HIPDNN_MAX_PORTS; ++p)
            if (g->nodes[i].outputs[p] == r->t->uid) r->output = 1;
    if (r->output < 0) r->output = 0;
    return r->output;
}

/* A copy of buffer b's `bytes`, in host memory or on the device (on the handle's stream),
 * recorded in *s so that hipdnnAliasRelease frees it. */
static hipdnnStatus_t stage(hipdnnAliasStaging* s, hipdnnPluginTensorBuffer_t* b, size_t bytes,
                            bool on_device, hipdnnStream_t stream) {
    void* copy = NULL;
    if (!on_device) {
        copy = malloc(bytes ? bytes : 1);
        if (!copy) return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory staging an input");
        memcpy(copy, b->ptr, bytes);
    } else {
        const hipdnnDeviceRuntime* rt = hipdnnDeviceRuntimeGet();
        hipdnnStatus_t st = rt ? rt->malloc(&copy, bytes)
                               : hipdnnFail(HIPDNN_STATUS_INTERNAL_ERROR, "no GPU runtime");
        if (!st) st = rt->memcpy(copy, b->ptr, bytes, stream, false);
        if (st) {
            if (copy) rt->free(copy);
            return st;
        }
        s->stream = stream;
    }
    s->copies[s->n] = copy;
    s->on_device[s->n++] = on_device;
    b->ptr = copy;
    return HIPDNN_STATUS_SUCCESS;
}

hipdnnStatus_t hipdnnAliasStage(const hipdnnSdkGraph* g, hipdnnPluginTensorBuffer_t* bufs,
                                uint32_t nb, bool device_engine, hipdnnStream_t stream,
                                hipdnnAliasStaging* s) {
    memset(s, 0, sizeof(*s));
    if (nb < 2) return HIPDNN_STATUS_SUCCESS;
    range* r = malloc(nb * sizeof(*r));
    bool* staged = calloc(nb, sizeof(bool));
    s->copies = malloc(nb * sizeof(void*));
    s->on_device = malloc(nb * sizeof(bool));
    hipdnnStatus_t st = HIPDNN_STATUS_SUCCESS;
    if (!r || !staged || !s->copies || !s->on_device)
        st = hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory checking outputs for overlap");
    uint32_t n = 0;
    int32_t k = 0; /* the buffers are in the graph's tensor order (execute.c) */
    for (uint32_t b = 0; !st && b < nb; ++b) {
        while (k < g->num_tensors && g->tensors[k].uid != bufs[b].uid) ++k;
        if (k == g->num_tensors) break;
        const hipdnnSdkTensor* t = &g->tensors[k];
        if (t->is_by_value) continue; /* a runtime scalar: read before anything runs */
        int64_t span, bytes;
        uintptr_t lo = (uintptr_t)bufs[b].ptr, hi;
        if (!hipdnnSdkSpanElements(t->ndim, t->dims, t->strides, &span) ||
            __builtin_mul_overflow(span, (int64_t)hipdnnSdkDataTypeSize(t->data_type), &bytes) ||
            __builtin_add_overflow(lo, (uintptr_t)bytes, &hi)) {
            st = hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "variant pack: tensor '%s' (uid %lld) "
                            "reaches past the address space", t->name, (long long)t->uid);
            break;
        }
        r[n] = (range){lo, hi, b, -1, t};
        ++n;
    }
    if (!st) qsort(r, n, sizeof(*r), by_start);
    for (uint32_t i = 0; !st && i < n; ++i)
        for (uint32_t j = i + 1; !st && j < n && r[j].lo < r[i].hi; ++j) {
            bool oi = is_output(g, &r[i]), oj = is_output(g, &r[j]);
            if (!oi && !oj) continue; /* inputs may share */
            if (oi && oj) {
                st = hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "variant pack: outputs '%s' (uid %lld) "
                                "and '%s' (uid %lld) share memory; each output needs its own",
                                r[i].t->name, (long long)r[i].t->uid, r[j].t->name,
                                (long long)r[j].t->uid);
                break;
            }
            const range* in = oi ? &r[j] : &r[i];
            if (staged[in->buf]) continue;
            staged[in->buf] = true;
            st = stage(s, &bufs[in->buf], in->hi - in->lo, device_engine, stream);
        }
    free(r);
    free(staged);
    if (st) hipdnnAliasRelease(s);
    return st;
}

void hipdnnAliasRelease(hipdnnAliasStaging* s) {
    /* the runtime only when a copy is on the device: a host run never loads it */
    const hipdnnDeviceRuntime* rt = NULL;
    for (uint32_t i = 0; i < s->n && !rt; ++i)
        if (s->on_device[i]) rt = hipdnnDeviceRuntimeGet();
    bool synced = false;
    for (uint32_t i = 0; i < s->n; ++i) {
        if (!s->on_device[i]) {
            free(s->copies[i]);
        } else if (rt) { /* the engine's work on the copy ends first */
            if (!synced) rt->stream_synchronize(s->stream);
            synced = true;
            rt->free(s->copies[i]);
        }
    }
    free(s->copies);
    free(s->on_device);
    memset(s, 0, sizeof(*s));
}
