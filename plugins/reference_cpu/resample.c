/* resample_fwd and resample_bwd: max and average pooling over windows of the spatial
 * dims, any rank, padding and layout.
 *
 * Window o of a spatial dim starts at o*stride - pre (in x's coordinates) and spans
 * `window` positions; those past in + post (a ceil-mode window's overhang) do not exist.
 * Positions in [0, in) read x; the others are padding: 0 under ZERO_PAD, and never a
 * candidate under NEG_INF_PAD.  MAXPOOL takes the first maximum in row-major window order
 * (a NaN beats every number: NaN propagates, its first one wins); its index is that
 * position, row-major within the full window.  AVGPOOL_INCLUDE_PADDING divides the sum by
 * the window's existing positions, AVGPOOL_EXCLUDE_PADDING by those inside x.  The
 * backward passes are the exact adjoints: dy routed to each window's maximum (read from
 * idx or recomputed from x), or spread over its positions inside x with the forward's
 * weight.
 *
 * Work items are (n, c) planes over the cores; each worker gathers its plane's inputs into
 * packed float64, computes, and stores the plane rounded once.  Scratch, in doubles: per
 * worker, forward in + 2*out, backward 2*in + 2*out (plane sizes), workers = min(N*C,
 * ref_threads_for(N*C*out*taps window visits)). */
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "reference_cpu.h"

enum { POOL_MAX, POOL_AVG_INCLUDE, POOL_AVG_EXCLUDE };

/* The pooling kind from the resample mode, and whether the padding mode goes with it. */
static bool pool_kind(const hipdnnSdkAttrValue* a, ref_pool_geometry* g, char* why, size_t len) {
    int64_t mode = a[HIPDNN_RS_MODE].i[0], pad = a[HIPDNN_RS_PADDING_MODE].i[0];
    if (mode == HIPDNN_RESAMPLE_MAXPOOL) g->kind = POOL_MAX;
    else if (mode == HIPDNN_RESAMPLE_AVGPOOL_INCLUDE_PADDING) g->kind = POOL_AVG_INCLUDE;
    else if (mode == HIPDNN_RESAMPLE_AVGPOOL_EXCLUDE_PADDING) g->kind = POOL_AVG_EXCLUDE;
    else {
        hipdnnSdkFormat(why, len, "resample mode %s not supported (MAXPOOL, "
                        "AVGPOOL_INCLUDE_PADDING and AVGPOOL_EXCLUDE_PADDING only)",
                        mode == HIPDNN_RESAMPLE_NEAREST ? "NEAREST" : "BILINEAR");
        return false;
    }
    if (pad == HIPDNN_EDGE_VAL_PAD || (pad == HIPDNN_NEG_INF_PAD && g->kind == POOL_AVG_INCLUDE)) {
        hipdnnSdkFormat(why, len, "padding mode %s does not go with %s (MAXPOOL takes ZERO_PAD "
                        "or NEG_INF_PAD, AVGPOOL_INCLUDE_PADDING ZERO_PAD, "
                        "AVGPOOL_EXCLUDE_PADDING either)",
                        pad == HIPDNN_EDGE_VAL_PAD ? "EDGE_VAL_PAD" : "NEG_INF_PAD",
                        g->kind == POOL_MAX ? "MAXPOOL" : "AVGPOOL_INCLUDE_PADDING");
        return false;
    }
    g->zero_pad = pad == HIPDNN_ZERO_PAD;
    return true;
}

/* Spatial dim i: window, stride and paddings in range, and `out` the rounded-down or
 * rounded-up pooled size of `in`; fills g's lists and grows its sizes. */
static bool pool_spatial_dim(const hipdnnSdkAttrValue* a, int32_t i, int64_t in, int64_t out,
                             ref_pool_geometry* g, char* why, size_t len) {
    /* Unset lists hold their defaults (stride 1, paddings 0). */
    int64_t w = a[HIPDNN_RS_WINDOW].i[i], s = a[HIPDNN_RS_STRIDE].i[i];
    int64_t pre = a[HIPDNN_RS_PRE_PADDING].i[i], post = a[HIPDNN_RS_POST_PADDING].i[i];
    if (w < 1 || s < 1 || pre < 0 || post < 0 || w > REF_MAX_CONV_PARAM ||
        s > REF_MAX_CONV_PARAM || pre >= w || post >= w) {
        hipdnnSdkFormat(why, len, "spatial dim %d: window %lld, stride %lld, padding "
                        "%lld/%lld; need window, stride >= 1 and 0 <= padding < window "
                        "(a window of padding alone has no value)", i, (long long)w,
                        (long long)s, (long long)pre, (long long)post);
        return false;
    }
    int64_t span = in + pre + post - w;
    int64_t lo = span < 0 ? -1 : span / s + 1, hi = span < 0 ? -1 : (span + s - 1) / s + 1;
    if (hi > 0 && (hi - 1) * s >= in + pre) hi = lo;
    if (out < 1 || (out != lo && out != hi)) {
        hipdnnSdkFormat(why, len, "spatial dim %d: %lld pooled (window %lld, stride "
                        "%lld, padding %lld/%lld) gives %lld (or %lld rounded up), not "
                        "%lld", i, (long long)in, (long long)w,
                        (long long)s, (long long)pre, (long long)post, (long long)lo,
                        (long long)hi, (long long)out);
        return false;
    }
    g->in[i] = in;
    g->out[i] = out;
    g->win[i] = w;
    g->stride[i] = s;
    g->pre[i] = pre;
    g->post[i] = post;
    /* Planes are at most 2^48 elements (tensor_ok); the window is at most its padded
     * dim, so these products stay far from overflow but are checked anyway. */
    if (__builtin_mul_overflow(g->in_size, in, &g->in_size) ||
        __builtin_mul_overflow(g->out_size, out, &g->out_size) ||
        __builtin_mul_overflow(g->taps, w, &g->taps) || g->taps > REF_MAX_ELEMENTS) {
        hipdnnSdkFormat(why, len, "the window has more than 2^48 positions");
        return false;
    }
    return true;
}

/* MAXPOOL's index: shaped as the pooled tensor, of an integer type that holds every
 * position of the window. */
static bool pool_index_ok(const ref_pool_geometry* g, const ref_view* pooled,
                          const ref_view* idx, char* why, size_t len) {
    if (g->kind != POOL_MAX) {
        hipdnnSdkFormat(why, len, "an index tensor is only for MAXPOOL");
        return false;
    }
    bool same = idx->ndim == pooled->ndim;
    for (int32_t i = 0; same && i < pooled->ndim; ++i) same = idx->dims[i] == pooled->dims[i];
    int64_t most = idx->dtype == HIPDNN_DATA_INT8    ? 128
                   : idx->dtype == HIPDNN_DATA_INT32 ? INT64_C(1) << 31
                   : idx->dtype == HIPDNN_DATA_INT64 ? REF_MAX_ELEMENTS
                                                     : 0;
    if (!same || most == 0) {
        hipdnnSdkFormat(why, len, "the index must be INT8, INT32 or INT64 shaped as the "
                        "pooled tensor; it is %s of rank %d",
                        hipdnnSdkDataTypeName(idx->dtype), idx->ndim);
        return false;
    }
    if (g->taps > most) {
        hipdnnSdkFormat(why, len, "the window has %lld positions; a %s index holds %lld "
                        "(use INT32)", (long long)g->taps, hipdnnSdkDataTypeName(idx->dtype),
                        (long long)most);
        return false;
    }
    return true;
}

bool ref_resample_check(const hipdnnSdkNode* node, const ref_view* image, const ref_view* pooled,
                        const ref_view* idx, ref_pool_geometry* geo, char* why, size_t len) {
    ref_pool_geometry g;
    memset(&g, 0, sizeof(g));
    const hipdnnSdkAttrValue* a = node->attrs;
    if (!pool_kind(a, &g, why, len)) return false;
    int32_t nd = image->ndim;
    if (nd < 3 || nd > 2 + HIPDNN_MAX_SPATIAL || pooled->ndim != nd) {
        hipdnnSdkFormat(why, len, "ranks %d and %d; resample needs one rank, 3 to %d", nd,
                        pooled->ndim, 2 + HIPDNN_MAX_SPATIAL);
        return false;
    }
    g.nsp = nd - 2;
    for (int k = HIPDNN_RS_WINDOW; k <= HIPDNN_RS_POST_PADDING; ++k)
        if (a[k].count != 0 && a[k].count != g.nsp) {
            hipdnnSdkFormat(why, len, "a spatial parameter has %d values for %d spatial dims",
                            (int)a[k].count, g.nsp);
            return false;
        }
    if (a[HIPDNN_RS_WINDOW].count != g.nsp) {
        hipdnnSdkFormat(why, len, "window is not set");
        return false;
    }
    g.n = image->dims[0];
    g.c = image->dims[1];
    if (pooled->dims[0] != g.n || pooled->dims[1] != g.c) {
        hipdnnSdkFormat(why, len, "N and C differ: [%lld, %lld, ...] and [%lld, %lld, ...]",
                        (long long)g.n, (long long)g.c, (long long)pooled->dims[0],
                        (long long)pooled->dims[1]);
        return false;
    }
    g.in_size = g.out_size = g.taps = 1;
    for (int32_t i = 0; i < g.nsp; ++i)
        if (!pool_spatial_dim(a, i, image->dims[2 + i], pooled->dims[2 + i], &g, why, len))
            return false;
    if (idx && !pool_index_ok(&g, pooled, idx, why, len)) return false;
    if (geo) *geo = g;
    return true;
}

/* ---- one plane ------------------------------------------------------------------- */

/* The window of output position o (multi-index) per spatial dim: its start, the end of
 * its existing positions and the part inside x. */
typedef struct {
    int64_t start[HIPDNN_MAX_SPATIAL], end[HIPDNN_MAX_SPATIAL];
    int64_t lo[HIPDNN_MAX_SPATIAL], hi[HIPDNN_MAX_SPATIAL];
} window;

static void window_of(const ref_pool_geometry* g, const int64_t* o, window* w) {
    for (int32_t i = 0; i < g->nsp; ++i) {
        int64_t s = o[i] * g->stride[i] - g->pre[i];
        int64_t e = s + g->win[i], limit = g->in[i] + g->post[i];
        w->start[i] = s;
        w->end[i] = e < limit ? e : limit;
        w->lo[i] = s > 0 ? s : 0;
        w->hi[i] = e < g->in[i] ? e : g->in[i];
    }
}

/* The weight of each x position of the window in an average: 1 / positions counted. */
static double avg_weight(const ref_pool_geometry* g, const window* w) {
    double count = 1;
    for (int32_t i = 0; i < g->nsp; ++i)
        count *= (double)(g->kind == POOL_AVG_INCLUDE ? w->end[i] - w->start[i]
                                                       : w->hi[i] - w->lo[i]);
    return 1.0 / count;
}

/* Advances p over the box [lo, hi) row-major; false once done. */
static bool next_in_box(int32_t nsp, const int64_t* lo, const int64_t* hi, int64_t* p) {
    for (int32_t i = nsp - 1; i >= 0; --i) {
        if (++p[i] < hi[i]) return true;
        p[i] = lo[i];
    }
    return false;
}

/* Packed offset of spatial position p in a plane of dims `dims`. */
static int64_t plane_offset(int32_t nsp, const int64_t* dims, const int64_t* p) {
    int64_t off = 0;
    for (int32_t i = 0; i < nsp; ++i) off = off * dims[i] + p[i];
    return off;
}

/* The window's first maximum: its value and its row-major position in the window (-1 if
 * no position is a candidate, which ref_resample_check rules out). */
static double window_max(const ref_pool_geometry* g, const window* w, const double* plane,
                         int64_t* at) {
    const int64_t* lo = g->zero_pad ? w->start : w->lo;
    const int64_t* hi = g->zero_pad ? w->end : w->hi;
    int64_t p[HIPDNN_MAX_SPATIAL];
    double best = -INFINITY;
    *at = -1;
    for (int32_t i = 0; i < g->nsp; ++i) {
        if (lo[i] >= hi[i]) return best;
        p[i] = lo[i];
    }
    do {
        bool inside = true;
        for (int32_t i = 0; i < g->nsp; ++i) inside = inside && p[i] >= 0 && p[i] < g->in[i];
        double v = inside ? plane[plane_offset(g->nsp, g->in, p)] : 0.0;
        if (*at < 0 || (v > best) || (isnan(v) && !isnan(best))) {
            int64_t k = 0;
            for (int32_t i = 0; i < g->nsp; ++i) k = k * g->win[i] + (p[i] - w->start[i]);
            best = v;
            *at = k;
        }
    } while (next_in_box(g->nsp, lo, hi, p));
    return best;
}

static double window_sum(const ref_pool_geometry* g, const window* w, const double* plane) {
    int64_t p[HIPDNN_MAX_SPATIAL];
    for (int32_t i = 0; i < g->nsp; ++i) p[i] = w->lo[i];
    double sum = 0;
    do sum += plane[plane_offset(g->nsp, g->in, p)];
    while (next_in_box(g->nsp, w->lo, w->hi, p));
    return sum;
}

/* Adds v to every x position of the window. */
static void window_spread(const ref_pool_geometry* g, const window* w, double v, double* plane) {
    int64_t p[HIPDNN_MAX_SPATIAL];
    for (int32_t i = 0; i < g->nsp; ++i) p[i] = w->lo[i];
    do plane[plane_offset(g->nsp, g->in, p)] += v;
    while (next_in_box(g->nsp, w->lo, w->hi, p));
}

/* Adds v at window position k (row-major in the full window) when it lies inside x. */
static void window_route(const ref_pool_geometry* g, const window* w, int64_t k, double v,
                         double* plane) {
    int64_t p[HIPDNN_MAX_SPATIAL];
    for (int32_t i = g->nsp - 1; i >= 0; --i) {
        p[i] = w->start[i] + k % g->win[i];
        k /= g->win[i];
        if (p[i] < 0 || p[i] >= g->in[i]) return; /* padding: no x to receive it */
    }
    plane[plane_offset(g->nsp, g->in, p)] += v;
}

/* The (n, c) plane of a tensor as a view of its spatial dims. */
static void plane_view(const ref_view* t, int64_t n, int64_t c, ref_view* v) {
    memset(v, 0, sizeof(*v));
    v->dtype = t->dtype;
    v->ndim = t->ndim - 2;
    for (int32_t i = 0; i < v->ndim; ++i) {
        v->dims[i] = t->dims[2 + i];
        v->strides[i] = t->strides[2 + i];
    }
    int64_t off = n * t->strides[0] + c * t->strides[1];
    v->data = (uint8_t*)t->data + off * (int64_t)hipdnnSdkDataTypeSize(t->dtype);
}

/* ---- the passes ------------------------------------------------------------------ */

typedef struct {
    const ref_pool_geometry* g;
    const ref_view *x, *y, *idx, *dy; /* forward: x, y, idx; backward: x (dx), dy, idx */
    const ref_view* dx;
    double* work;
    int64_t per_worker;
    _Atomic(int64_t)* bad_index; /* backward: index values outside the window */
} pool_job;

static int64_t workers_for(const ref_pool_geometry* g, int* threads) {
    double visits = (double)g->n * (double)g->c * (double)g->out_size * (double)g->taps;
    *threads = ref_threads_for(visits, REF_MIN_MACS_PER_THREAD);
    int64_t planes = g->n * g->c;
    return *threads < planes ? *threads : planes;
}

/* Per worker: the x (and dx) planes, then the y (or dy) and index planes. */
static int64_t per_worker(const ref_pool_geometry* g, bool backward) {
    return ref_scratch_piece((backward ? 2 : 1) * ref_scratch_piece(g->in_size) +
                             2 * g->out_size);
}

int64_t ref_resample_scratch_doubles(const ref_pool_geometry* g, bool backward) {
    int threads;
    return ref_scratch_piece(workers_for(g, &threads) * per_worker(g, backward));
}

static void unravel_out(const ref_pool_geometry* g, int64_t flat, int64_t* o) {
    for (int32_t i = g->nsp - 1; i >= 0; --i) {
        o[i] = flat % g->out[i];
        flat /= g->out[i];
    }
}

static int forward_planes(void* p, int64_t begin, int64_t end, int worker) {
    const pool_job* jb = p;
    const ref_pool_geometry* g = jb->g;
    double* xp = jb->work + worker * jb->per_worker;
    double* yp = xp + ref_scratch_piece(g->in_size);
    double* ip = yp + g->out_size;
    for (int64_t it = begin; it < end; ++it) {
        int64_t n = it / g->c, c = it % g->c;
        ref_view v;
        plane_view(jb->x, n, c, &v);
        ref_gather(&v, xp);
        int64_t o[HIPDNN_MAX_SPATIAL];
        window w;
        for (int64_t q = 0; q < g->out_size; ++q) {
            unravel_out(g, q, o);
            window_of(g, o, &w);
            if (g->kind == POOL_MAX) {
                int64_t at;
                yp[q] = window_max(g, &w, xp, &at);
                ip[q] = (double)(at < 0 ? 0 : at);
            } else {
                yp[q] = window_sum(g, &w, xp) * avg_weight(g, &w);
            }
        }
        plane_view(jb->y, n, c, &v);
        ref_scatter(yp, &v);
        if (jb->idx) {
            plane_view(jb->idx, n, c, &v);
            ref_scatter(ip, &v);
        }
    }
    return 0;
}

/* An index value outside the window (not the forward's index) routes nothing: that
 * window's gradient is dropped and counted, so dx is still fully written. */
static int backward_planes(void* p, int64_t begin, int64_t end, int worker) {
    const pool_job* jb = p;
    const ref_pool_geometry* g = jb->g;
    double* dxp = jb->work + worker * jb->per_worker;
    double* xp = dxp + ref_scratch_piece(g->in_size);
    double* dyp = xp + ref_scratch_piece(g->in_size);
    double* ip = dyp + g->out_size;
    for (int64_t it = begin; it < end; ++it) {
        int64_t n = it / g->c, c = it % g->c;
        ref_view v;
        memset(dxp, 0, (size_t)g->in_size * sizeof(double));
        plane_view(jb->dy, n, c, &v);
        ref_gather(&v, dyp);
        bool from_idx = g->kind == POOL_MAX && jb->idx;
        if (from_idx) {
            plane_view(jb->idx, n, c, &v);
            ref_gather(&v, ip);
        } else if (g->kind == POOL_MAX) {
            plane_view(jb->x, n, c, &v);
            ref_gather(&v, xp);
        }
        int64_t o[HIPDNN_MAX_SPATIAL];
        window w;
        for (int64_t q = 0; q < g->out_size; ++q) {
            unravel_out(g, q, o);
            window_of(g, o, &w);
            if (g->kind != POOL_MAX) {
                window_spread(g, &w, dyp[q] * avg_weight(g, &w), dxp);
                continue;
            }
            int64_t at;
            if (from_idx) {
                if (!(ip[q] >= 0 && ip[q] < (double)g->taps)) {
                    atomic_fetch_add(jb->bad_index, 1);
                    continue;
                }
                at = (int64_t)ip[q];
            } else {
                (void)window_max(g, &w, xp, &at);
            }
            if (at >= 0) window_route(g, &w, at, dyp[q], dxp);
        }
        plane_view(jb->dx, n, c, &v);
        ref_scatter(dxp, &v);
    }
    return 0;
}

static hipdnnPluginStatus_t run(const hipdnnSdkNode* node, const ref_pool_geometry* g,
                                pool_job* jb, bool backward, const ref_region* scratch) {
    int threads;
    int64_t workers = workers_for(g, &threads);
    ref_scratch s;
    if (!ref_scratch_open(&s, ref_resample_scratch_doubles(g, backward), scratch, node))
        return HIPDNN_PLUGIN_STATUS_ALLOC_FAILED;
    jb->per_worker = per_worker(g, backward);
    jb->work = ref_scratch_take(&s, workers * jb->per_worker);
    _Atomic(int64_t) bad_index;
    atomic_init(&bad_index, 0);
    jb->bad_index = &bad_index;
    ref_parallel_for(g->n * g->c, 1, threads, backward ? backward_planes : forward_planes, jb);
    ref_scratch_close(&s);
    int64_t bad = atomic_load(&bad_index);
    if (bad > 0) /* the data, not the graph: the run completes, the log says why */
        ref_log(HIPDNN_LOG_WARN,
                REF_ENGINE_NAME ": node '%s' (resample_bwd): idx holds %lld value(s) outside "
                "0 .. %lld, the window's positions (is it the forward's index?); their "
                "windows' gradients were dropped", node->name, (long long)bad,
                (long long)(g->taps - 1));
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

hipdnnPluginStatus_t ref_resample_fwd(const hipdnnSdkNode* node, const ref_view* x,
                                      const ref_view* y, const ref_view* idx,
                                      const ref_region* scratch) {
    ref_pool_geometry g;
    char why[REF_MSG_LEN];
    if (!ref_resample_check(node, x, y, idx, &g, why, sizeof(why))) {
        ref_set_error(REF_ENGINE_NAME ": node '%s' (resample_fwd): %s", node->name, why);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    pool_job jb = {&g, x, y, idx, NULL, NULL, NULL, 0, NULL};
    return run(node, &g, &jb, false, scratch);
}

hipdnnPluginStatus_t ref_resample_bwd(const hipdnnSdkNode* node, const ref_view* dy,
                                      const ref_view* x, const ref_view* idx, const ref_view* dx,
                                      const ref_region* scratch) {
    ref_pool_geometry g;
    char why[REF_MSG_LEN];
    if (!ref_resample_check(node, dx, dy, idx, &g, why, sizeof(why))) {
        ref_set_error(REF_ENGINE_NAME ": node '%s' (resample_bwd): %s", node->name, why);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    if (g.kind == POOL_MAX && !idx && !x) {
        ref_set_error(REF_ENGINE_NAME ": node '%s' (resample_bwd): MAXPOOL needs idx or x",
                      node->name);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    pool_job jb = {&g, x, NULL, idx, dy, dx, NULL, 0, NULL};
    return run(node, &g, &jb, true, scratch);
}
