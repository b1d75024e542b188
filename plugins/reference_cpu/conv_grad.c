/* conv_dgrad and conv_wgrad: the gradients of conv_fprop (conv.c) with respect to its
 * image and its filter, written from the forward formula
 *
 *   y[n, k, o...] = sum_{c < C/G, q...} w[k, c, q...] * x[n, g*C/G + c, o*s + kp(q)*d - pre]
 *
 * (kp(q) = q, or ker-1-q for true convolution), as sums over the same terms:
 *
 *   dx[n, g*C/G + c, i] = sum_{k in group g, q} w[k, c, q] * dy[n, k, o]   (o*s = i + pre - kp(q)*d)
 *   dw[k, c, q]        = sum_{n, o} dy[n, k, o] * x[n, g*C/G + c, o*s + kp(q)*d - pre]
 *
 * Each output element is one float64 sum over its own terms (no scatter, so no races and
 * the same result on any number of threads), rows spread over the cores.  The operands
 * are gathered into packed float64 first; scratch, in doubles:
 *   dgrad: K*C/G*taps + N*K*out + N*C*in;  wgrad: N*C*in + N*K*out + K*C/G*taps. */
#include <string.h>

#include "reference_cpu.h"

typedef struct {
    const ref_conv_geometry* g;
    int64_t taps, in_size, out_size;
    const double *a, *b; /* dgrad: w, dy; wgrad: x, dy */
    double* out;         /* dgrad: dx [N, C, in]; wgrad: dw [K, C/G, taps] */
} grad_job;

static void sizes(const ref_conv_geometry* g, int64_t* taps, int64_t* in, int64_t* out) {
    *taps = *in = *out = 1;
    for (int32_t i = 0; i < g->nsp; ++i) {
        *taps *= g->ker[i];
        *in *= g->in[i];
        *out *= g->out[i];
    }
}

int64_t ref_conv_grad_scratch_doubles(const ref_conv_geometry* g) {
    int64_t taps, in, out;
    sizes(g, &taps, &in, &out);
    return ref_scratch_piece(g->k * g->cg * taps) + ref_scratch_piece(g->n * g->k * out) +
           ref_scratch_piece(g->n * g->c * in);
}

/* Input position of output position o (per dim) at tap q, as a flat index into the
 * image; -1 where it falls in the padding. */
static int64_t image_index(const ref_conv_geometry* g, const int64_t* o, const int64_t* q) {
    int64_t flat = 0;
    for (int32_t i = 0; i < g->nsp; ++i) {
        int64_t kp = g->flip ? g->ker[i] - 1 - q[i] : q[i];
        int64_t ip = o[i] * g->stride[i] + kp * g->dil[i] - g->pre[i];
        if (ip < 0 || ip >= g->in[i]) return -1;
        flat = flat * g->in[i] + ip;
    }
    return flat;
}

/* Rows (n, channel) of dx. */
static int dgrad_rows(void* p, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const grad_job* jb = p;
    const ref_conv_geometry* g = jb->g;
    for (int64_t row = begin; row < end; ++row) {
        int64_t n = row / g->c, c = row % g->c, grp = c / g->cg, cl = c % g->cg;
        double* dx = jb->out + row * jb->in_size;
        int64_t i[HIPDNN_MAX_SPATIAL] = {0};
        for (int64_t pos = 0; pos < jb->in_size; ++pos) {
            double acc = 0.0;
            int64_t q[HIPDNN_MAX_SPATIAL] = {0};
            for (int64_t t = 0; t < jb->taps; ++t, ref_next_index(g->nsp, g->ker, q)) {
                int64_t of = 0;
                bool hit = true;
                for (int32_t d = 0; hit && d < g->nsp; ++d) {
                    int64_t kp = g->flip ? g->ker[d] - 1 - q[d] : q[d];
                    int64_t num = i[d] + g->pre[d] - kp * g->dil[d];
                    hit = num >= 0 && num % g->stride[d] == 0 && num / g->stride[d] < g->out[d];
                    of = of * g->out[d] + (hit ? num / g->stride[d] : 0);
                }
                if (!hit) continue;
                for (int64_t kk = 0; kk < g->kg; ++kk) {
                    int64_t k = grp * g->kg + kk;
                    acc += jb->a[(k * g->cg + cl) * jb->taps + t] *
                           jb->b[(n * g->k + k) * jb->out_size + of];
                }
            }
            dx[pos] = acc;
            ref_next_index(g->nsp, g->in, i);
        }
    }
    return 0;
}

/* Rows (k, channel within the group) of dw. */
static int wgrad_rows(void* p, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const grad_job* jb = p;
    const ref_conv_geometry* g = jb->g;
    for (int64_t row = begin; row < end; ++row) {
        int64_t k = row / g->cg, cl = row % g->cg, c = (k / g->kg) * g->cg + cl;
        int64_t q[HIPDNN_MAX_SPATIAL] = {0};
        for (int64_t t = 0; t < jb->taps; ++t, ref_next_index(g->nsp, g->ker, q)) {
            double acc = 0.0;
            for (int64_t n = 0; n < g->n; ++n) {
                const double* dy = jb->b + (n * g->k + k) * jb->out_size;
                const double* x = jb->a + (n * g->c + c) * jb->in_size;
                int64_t o[HIPDNN_MAX_SPATIAL] = {0};
                for (int64_t of = 0; of < jb->out_size; ++of, ref_next_index(g->nsp, g->out, o)) {
                    int64_t xi = image_index(g, o, q);
                    if (xi >= 0) acc += dy[of] * x[xi];
                }
            }
            jb->out[row * jb->taps + t] = acc;
        }
    }
    return 0;
}

static hipdnnPluginStatus_t run(const hipdnnSdkNode* node, const char* op, const ref_view* x,
                                const ref_view* w, const ref_view* dy, bool data,
                                const ref_region* scratch) {
    ref_conv_geometry g;
    char why[REF_MSG_LEN];
    if (!ref_conv_check(node, x, w, dy, &g, why, sizeof(why))) {
        ref_set_error(REF_ENGINE_NAME ": node '%s' (%s): %s", node->name, op, why);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    grad_job jb = {&g, 0, 0, 0, NULL, NULL, NULL};
    sizes(&g, &jb.taps, &jb.in_size, &jb.out_size);
    ref_scratch s;
    if (!ref_scratch_open(&s, ref_conv_grad_scratch_doubles(&g), scratch, node))
        return HIPDNN_PLUGIN_STATUS_ALLOC_FAILED;
    double* wp = ref_scratch_take(&s, g.k * g.cg * jb.taps);
    double* dyp = ref_scratch_take(&s, g.n * g.k * jb.out_size);
    double* xp = ref_scratch_take(&s, g.n * g.c * jb.in_size);
    ref_gather(dy, dyp);
    jb.b = dyp;
    double macs = (double)g.n * (double)g.k * (double)jb.out_size * (double)g.cg * (double)jb.taps;
    int threads = ref_threads_for(macs, REF_MIN_MACS_PER_THREAD);
    if (data) {
        ref_gather(w, wp);
        jb.a = wp;
        jb.out = xp;
        (void)ref_parallel_for(g.n * g.c, 1, threads, dgrad_rows, &jb); /* cannot fail */
        ref_scatter(xp, x);
    } else {
        ref_gather(x, xp);
        jb.a = xp;
        jb.out = wp;
        (void)ref_parallel_for(g.k * g.cg, 1, threads, wgrad_rows, &jb);
        ref_scatter(wp, w);
    }
    ref_scratch_close(&s);
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

hipdnnPluginStatus_t ref_conv_dgrad(const hipdnnSdkNode* node, const ref_view* dy,
                                    const ref_view* w, const ref_view* dx,
                                    const ref_region* scratch) {
    return run(node, "conv_dgrad", dx, w, dy, true, scratch);
}

hipdnnPluginStatus_t ref_conv_wgrad(const hipdnnSdkNode* node, const ref_view* x,
                                    const ref_view* dy, const ref_view* dw,
                                    const ref_region* scratch) {
    return run(node, "conv_wgrad", x, dw, dy, false, scratch);
}
