/* hipdnnAutotune_ext: times built plans of one graph on the caller's variant pack and keeps
 * the fastest (docs/engine_selection.md).  The graph's outputs are copied aside first and
 * put back at the end, so the caller's buffers read as before; inputs are only read.  Each
 * plan gets its warm-up runs, then timed runs until `repeat`, until the last three agree
 * within 2 %, or until its even share of the budget is spent (one timed run at least).
 * Device plans are timed with the runtime's events on the handle's stream, host plans with
 * the monotonic clock (host engines run synchronously). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "device.h"
#include "error.h"
#include "handle.h"
#include "log.h"
#include "plan.h"
#include "plan_cache.h"

#define STABLE_SPREAD 0.02

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* ---- the outputs, set aside ---------------------------------------------------------- */

typedef struct {
    void* ptr;   /* the caller's buffer */
    void* saved; /* its bytes, in the same memory space */
    size_t bytes;
    bool device;
} saved_output;

typedef struct {
    int32_t n;
    saved_output* v;
} saved_outputs;

/* Bytes from a tensor's first element to one past its last, as its strides reach. */
static size_t span_bytes(const hipdnnSdkTensor* t) {
    size_t last = 0;
    for (int32_t i = 0; i < t->ndim; ++i) {
        if (t->dims[i] <= 0) return 0;
        last += (size_t)(t->dims[i] - 1) * (size_t)(t->strides[i] < 0 ? 0 : t->strides[i]);
    }
    return (last + 1) * hipdnnSdkDataTypeSize(t->data_type);
}

static bool is_output(const hipdnnSdkGraph* g, int64_t uid) {
    for (int32_t n = 0; n < g->num_nodes; ++n)
        for (int p = 0; p < HIPDNN_MAX_PORTS; ++p)
            if (g->nodes[n].outputs[p] == uid) return true;
    return false;
}

static hipdnnStatus_t copy_bytes(void* dst, const void* src, size_t n, bool device, hipdnnStream_t s) {
    if (!device) {
        memcpy(dst, src, n);
        return HIPDNN_STATUS_SUCCESS;
    }
    return hipdnnDeviceRuntimeGet()->memcpy(dst, src, n, s, true);
}

static hipdnnStatus_t save_one(saved_output* o, void* ptr, size_t bytes, hipdnnStream_t stream) {
    const hipdnnDeviceRuntime* rt = hipdnnRegistryHasDeviceEngine() ? hipdnnDeviceRuntimeGet() : NULL;
    o->ptr = ptr;
    o->bytes = bytes;
    o->device = rt && hipdnnDevicePointerSpace(ptr) != HIPDNN_MEMORY_HOST;
    hipdnnStatus_t st = HIPDNN_STATUS_SUCCESS;
    if (o->device)
        st = rt->malloc(&o->saved, bytes);
    else if (!(o->saved = malloc(bytes)))
        st = hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "autotune: out of memory saving an output");
    if (st) {
        o->saved = NULL;
        return st;
    }
    return copy_bytes(o->saved, ptr, bytes, o->device, stream);
}

/* Copies every output of the graph the pack gives a pointer for. */
static hipdnnStatus_t save_outputs(const hipdnnSdkGraph* g, hipdnnBackendDescriptor_t vp,
                                   hipdnnStream_t stream, saved_outputs* out) {
    int64_t n = 0;
    hipdnnStatus_t st = hipdnnBackendGetAttribute(vp, HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
                                                  HIPDNN_TYPE_INT64, 0, &n, NULL);
    int64_t* uids = malloc((size_t)n * sizeof(int64_t) + 1);
    void** ptrs = malloc((size_t)n * sizeof(void*) + 1);
    out->v = calloc((size_t)n + 1, sizeof(saved_output));
    if (!st && (!uids || !ptrs || !out->v)) st = hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory");
    if (!st) st = hipdnnBackendGetAttribute(vp, HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, HIPDNN_TYPE_INT64,
                                            n, &n, uids);
    if (!st) st = hipdnnBackendGetAttribute(vp, HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                            HIPDNN_TYPE_VOID_PTR, n, &n, ptrs);
    for (int64_t i = 0; !st && i < n; ++i) {
        const hipdnnSdkTensor* t = NULL;
        for (int32_t k = 0; k < g->num_tensors; ++k)
            if (g->tensors[k].uid == uids[i]) t = &g->tensors[k];
        const size_t bytes = t && !t->is_virtual && ptrs[i] && is_output(g, uids[i]) ? span_bytes(t) : 0;
        if (bytes) st = save_one(&out->v[out->n++], ptrs[i], bytes, stream);
    }
    free(uids);
    free(ptrs);
    return st;
}

/* Puts every saved output back and frees the copies; the first failure is returned. */
static hipdnnStatus_t restore_outputs(saved_outputs* s, hipdnnStream_t stream) {
    hipdnnStatus_t first = HIPDNN_STATUS_SUCCESS;
    for (int32_t i = 0; s->v && i < s->n; ++i) {
        saved_output* o = &s->v[i];
        if (!o->saved) continue;
        hipdnnStatus_t st = copy_bytes(o->ptr, o->saved, o->bytes, o->device, stream);
        if (st && !first) first = st;
        if (o->device)
            hipdnnDeviceRuntimeGet()->free(o->saved);
        else
            free(o->saved);
    }
    free(s->v);
    s->v = NULL;
    return first;
}

/* ---- timing ---------------------------------------------------------------------------- */

typedef struct {
    const hipdnnDeviceRuntime* rt; /* NULL: a host plan */
    hipdnnStream_t stream;
    hipdnnEvent_t start, end; /* NULL: the runtime had none to give; synchronize + clock */
} plan_timer;

static void timer_open(plan_timer* t, hipdnnHandle_t h, bool device) {
    memset(t, 0, sizeof(*t));
    t->stream = h->stream;
    t->rt = device ? hipdnnDeviceRuntimeGet() : NULL;
    if (t->rt && (t->rt->event_create(&t->start) || t->rt->event_create(&t->end))) {
        if (t->start) t->rt->event_destroy(t->start);
        t->start = t->end = NULL;
        hipdnnClearError();
    }
}

static void timer_close(plan_timer* t) {
    if (t->start) t->rt->event_destroy(t->start);
    if (t->end) t->rt->event_destroy(t->end);
}

/* One run of the plan, and its time in ms. */
static hipdnnStatus_t run_once(hipdnnHandle_t h, hipdnnBackendDescriptor_t plan,
                               hipdnnBackendDescriptor_t vp, plan_timer* t, double* ms) {
    hipdnnStatus_t st;
    if (t->start) {
        float f = 0;
        if ((st = t->rt->event_record(t->start, t->stream))) return st;
        if ((st = hipdnnBackendExecute(h, plan, vp))) return st;
        if ((st = t->rt->event_record(t->end, t->stream)) || (st = t->rt->event_synchronize(t->end)) ||
            (st = t->rt->event_elapsed(&f, t->start, t->end)))
            return st;
        *ms = f;
        return HIPDNN_STATUS_SUCCESS;
    }
    const double t0 = now_ms();
    st = hipdnnBackendExecute(h, plan, vp);
    if (!st && t->rt) st = t->rt->stream_synchronize(t->stream);
    *ms = now_ms() - t0;
    return st;
}

static int by_value(const void* a, const void* b) {
    const double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

/* Whether the last three of n times agree within STABLE_SPREAD of their smallest. */
static bool stable(const double* v, int32_t n) {
    if (n < 3) return false;
    double lo = v[n - 1], hi = v[n - 1];
    for (int32_t i = n - 3; i < n; ++i) {
        lo = fmin(lo, v[i]);
        hi = fmax(hi, v[i]);
    }
    return hi - lo <= STABLE_SPREAD * lo;
}

/* Warm-up, then timed runs of one plan into r; share_ms: its part of the budget. */
static void time_plan(hipdnnHandle_t h, hipdnnBackendDescriptor_t plan, hipdnnBackendDescriptor_t vp,
                      const hipdnnAutotuneOptions_ext_t* o, double share_ms, double* times,
                      hipdnnAutotuneResult_ext_t* r) {
    const hipdnnPlanState* ps = plan->state;
    const bool device = hipdnnRegistryEngine(ps->engine)->memory_space != HIPDNN_MEMORY_HOST;
    plan_timer t;
    timer_open(&t, h, device);
    r->timer = t.start ? HIPDNN_AUTOTUNE_TIMER_EVENTS_EXT : HIPDNN_AUTOTUNE_TIMER_HOST_CLOCK_EXT;
    const double t0 = now_ms();
    double ms = 0;
    hipdnnStatus_t st = HIPDNN_STATUS_SUCCESS;
    for (int32_t i = 0; !st && i < o->warmup; ++i) st = run_once(h, plan, vp, &t, &ms);
    while (!st && r->runs < o->repeat) {
        if ((st = run_once(h, plan, vp, &t, &ms))) break;
        times[r->runs++] = ms;
        if (stable(times, r->runs) || now_ms() - t0 >= share_ms) break;
    }
    timer_close(&t);
    r->status = st;
    if (st) {
        snprintf(r->message, sizeof(r->message), "%s", hipdnnErrorMessage());
        r->runs = 0;
        return;
    }
    qsort(times, (size_t)r->runs, sizeof(double), by_value);
    r->min_ms = times[0];
    r->median_ms = r->runs % 2 ? times[r->runs / 2]
                               : 0.5 * (times[r->runs / 2 - 1] + times[r->runs / 2]);
}

/* ---- the call ----------------------------------------------------------------------------- */

static hipdnnStatus_t check_plans(int64_t n, const hipdnnBackendDescriptor_t* plans) {
    const hipdnnGraphState* g0 = NULL;
    for (int64_t i = 0; i < n; ++i) {
        hipdnnStatus_t st = hipdnnDescriptorCheck(plans[i], HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR,
                                                  "hipdnnAutotune_ext plans");
        if (st) return st;
        if (!plans[i]->finalized)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED, "hipdnnAutotune_ext: plan %lld "
                              "is not finalized", (long long)i);
        const hipdnnGraphState* g = ((const hipdnnPlanState*)plans[i]->state)->graph->state;
        if (!g0) g0 = g;
        if (g->num_bytes != g0->num_bytes || memcmp(g->bytes, g0->bytes, g->num_bytes) != 0)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "hipdnnAutotune_ext: plan %lld is for another "
                              "graph than plan 0; autotune compares plans of one graph", (long long)i);
    }
    return HIPDNN_STATUS_SUCCESS;
}

/* The winner's engine and knobs into the plan cache (a failure is logged, not returned). */
static void store_winner(hipdnnBackendDescriptor_t plan, double ms) {
    const hipdnnPlanState* ps = plan->state;
    const hipdnnEngineCfgState* cs = ps->config->state;
    hipdnnPlanCacheEntry e = {.ms = ms};
    snprintf(e.engine, sizeof(e.engine), "%s", hipdnnRegistryEngine(ps->engine)->name);
    for (int64_t i = 0; i < cs->num_knobs && e.num_knobs < HIPDNN_ENGINE_MAX_KNOBS; ++i) {
        const hipdnnKnobChoiceState* k = cs->knobs[i]->state;
        e.knobs[e.num_knobs][0] = k->knob_id;
        e.knobs[e.num_knobs++][1] = k->value;
    }
    if (hipdnnPlanCacheStore(ps->graph->state, &e))
        hipdnnLog(HIPDNN_LOG_WARN, "autotune: the winner was not cached: %s", hipdnnErrorMessage());
    hipdnnClearError();
}

static hipdnnStatus_t check_args(hipdnnHandle_t handle, int64_t num_plans,
                                 const hipdnnBackendDescriptor_t* plans,
                                 hipdnnBackendDescriptor_t vp, hipdnnAutotuneResult_ext_t* results,
                                 int64_t* best) {
    if (!plans || !results || !best)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NULL_POINTER, "hipdnnAutotune_ext: NULL argument");
    if (num_plans < 1)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "hipdnnAutotune_ext: no plans to time");
    hipdnnStatus_t st = hipdnnHandleCheck(handle, "hipdnnAutotune_ext handle");
    if (!st) st = hipdnnDescriptorCheck(vp, HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR,
                                        "hipdnnAutotune_ext variant pack");
    return st ? st : check_plans(num_plans, plans);
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnAutotune_ext(hipdnnHandle_t handle, int64_t num_plans,
                                                const hipdnnBackendDescriptor_t* plans,
                                                hipdnnBackendDescriptor_t variant_pack,
                                                const hipdnnAutotuneOptions_ext_t* options,
                                                hipdnnAutotuneResult_ext_t* results, int64_t* best) {
    hipdnnClearError();
    hipdnnStatus_t st = check_args(handle, num_plans, plans, variant_pack, results, best);
    if (st) return st;
    hipdnnAutotuneOptions_ext_t o = options ? *options : (hipdnnAutotuneOptions_ext_t){1, 10, 1000.0, 1};
    o.warmup = o.warmup < 0 ? 0 : o.warmup;
    o.repeat = o.repeat < 1 ? 1 : o.repeat > 10000 ? 10000 : o.repeat;
    double* times = malloc((size_t)o.repeat * sizeof(double));
    if (!times) return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory");
    const hipdnnGraphState* gs = ((const hipdnnPlanState*)plans[0]->state)->graph->state;
    saved_outputs saved = {0};
    st = save_outputs(gs->graph, variant_pack, handle->stream, &saved);
    *best = -1;
    for (int64_t i = 0; !st && i < num_plans; ++i) {
        memset(&results[i], 0, sizeof(results[i]));
        time_plan(handle, plans[i], variant_pack, &o, o.budget_ms / (double)num_plans, times, &results[i]);
        if (!results[i].status && (*best < 0 || results[i].median_ms < results[*best].median_ms))
            *best = i;
    }
    hipdnnStatus_t back = restore_outputs(&saved, handle->stream);
    free(times);
    if (!st) st = back;
    if (!st && *best < 0)
        st = hipdnnFail(HIPDNN_STATUS_EXECUTION_FAILED, "hipdnnAutotune_ext: no plan ran; plan 0: %s",
                        results[0].message);
    if (!st && o.store) store_winner(plans[*best], results[*best].median_ms);
    return st;
}
