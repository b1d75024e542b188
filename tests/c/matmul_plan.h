/* matmul_plan.h — a matmul C = A @ B (float, [1, m, k] x [1, k, n]) built through the
 * public API, planned on a handle with the first engine heuristics mode A ranks, run, and
 * compared with a float64 reference: real work for the tests that need plans in flight
 * (fork, log callbacks).
 *
 * mm_build and mm_free use CHECK (main thread only); mm_run and mm_bad touch no test
 * counters, so worker threads and forked children may call them. */
#ifndef HIPDNN_TEST_MATMUL_PLAN_H
#define HIPDNN_TEST_MATMUL_PLAN_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "graph_builder.h"
#include "hipdnn/hipdnn.h"

enum { MM_A = 1, MM_B = 2, MM_C = 3 };

typedef struct {
    int64_t m, k, n;
    hipdnnBackendDescriptor_t ta, tb, tc, op, graph, plan;
    int64_t ws_size;
    float *a, *b;   /* inputs, random in [-1, 1) */
    float *a0, *b0; /* copies: a run must leave the inputs unchanged */
    double* ref;    /* float64 reference of C */
} mm_plan;

static inline float mm_random(uint64_t* s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(*s >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static inline void mm_free(mm_plan* p) {
    hipdnnBackendDescriptor_t* all[] = {&p->plan, &p->graph, &p->op, &p->ta, &p->tb, &p->tc};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); ++i) gb_destroy(all[i]);
    free(p->a), free(p->b), free(p->a0), free(p->b0), free(p->ref);
    memset(p, 0, sizeof(*p));
}

/* The first engine config heuristics mode A ranks for a finalized graph (the caller
 * destroys it), or NULL. */
static inline hipdnnBackendDescriptor_t mm_first_config(hipdnnBackendDescriptor_t graph) {
    hipdnnBackendDescriptor_t heur = gb_heur(graph, HIPDNN_HEUR_MODE_A);
    if (!heur) return NULL;
    hipdnnBackendDescriptor_t cfg = NULL;
    int64_t got = 0;
    if (!CHECK_OK(hipdnnBackendGetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_RESULTS,
                                            HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got, &cfg)) ||
        !CHECK(got == 1 && cfg))
        cfg = NULL;
    gb_destroy(&heur);
    return cfg;
}

/* A finalized plan of cfg on h, made without CHECK (any thread); the status. */
static inline hipdnnStatus_t mm_plan_on(hipdnnHandle_t h, hipdnnBackendDescriptor_t cfg,
                                        hipdnnBackendDescriptor_t* plan) {
    hipdnnStatus_t st = hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, plan);
    if (!st) st = hipdnnBackendSetAttribute(*plan, HIPDNN_ATTR_EXECUTION_PLAN_HANDLE,
                                            HIPDNN_TYPE_HANDLE, 1, &h);
    if (!st) st = hipdnnBackendSetAttribute(*plan, HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                            HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg);
    if (!st) st = hipdnnBackendFinalize(*plan);
    if (st && *plan) {
        hipdnnBackendDestroyDescriptor(*plan);
        *plan = NULL;
    }
    return st;
}

static inline hipdnnBackendDescriptor_t mm_make_plan(hipdnnHandle_t h,
                                                     hipdnnBackendDescriptor_t graph) {
    hipdnnBackendDescriptor_t cfg = mm_first_config(graph), plan = NULL;
    if (cfg) CHECK_OK(mm_plan_on(h, cfg, &plan));
    if (cfg) gb_destroy(&cfg);
    return plan;
}

static inline int mm_build(mm_plan* p, hipdnnHandle_t h, int64_t m, int64_t k, int64_t n,
                           uint64_t seed) {
    memset(p, 0, sizeof(*p));
    p->m = m, p->k = k, p->n = n;
    int64_t ad[3] = {1, m, k}, bd[3] = {1, k, n}, cd[3] = {1, m, n};
    p->ta = gb_tensor(MM_A, "a", HIPDNN_DATA_FLOAT, 3, ad, NULL, 0);
    p->tb = gb_tensor(MM_B, "b", HIPDNN_DATA_FLOAT, 3, bd, NULL, 0);
    p->tc = gb_tensor(MM_C, "c", HIPDNN_DATA_FLOAT, 3, cd, NULL, 0);
    if (!p->ta || !p->tb || !p->tc) return 0;
    p->op = gb_matmul("mm", p->ta, p->tb, p->tc);
    if (!p->op) return 0;
    p->graph = gb_graph(h, "matmul", 1, &p->op);
    if (!p->graph || !CHECK_OK(hipdnnBackendFinalize(p->graph))) return 0;
    p->plan = mm_make_plan(h, p->graph);
    int64_t count = 0;
    if (!p->plan ||
        !CHECK_OK(hipdnnBackendGetAttribute(p->plan, HIPDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                            HIPDNN_TYPE_INT64, 1, &count, &p->ws_size)))
        return 0;
    p->a = malloc((size_t)(m * k) * sizeof(float));
    p->b = malloc((size_t)(k * n) * sizeof(float));
    p->a0 = malloc((size_t)(m * k) * sizeof(float));
    p->b0 = malloc((size_t)(k * n) * sizeof(float));
    p->ref = malloc((size_t)(m * n) * sizeof(double));
    if (!CHECK(p->a && p->b && p->a0 && p->b0 && p->ref)) return 0;
    for (int64_t i = 0; i < m * k; ++i) p->a[i] = mm_random(&seed);
    for (int64_t i = 0; i < k * n; ++i) p->b[i] = mm_random(&seed);
    memcpy(p->a0, p->a, (size_t)(m * k) * sizeof(float));
    memcpy(p->b0, p->b, (size_t)(k * n) * sizeof(float));
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            double acc = 0.0;
            for (int64_t q = 0; q < k; ++q) acc += (double)p->a[i * k + q] * (double)p->b[q * n + j];
            p->ref[i * n + j] = acc;
        }
    return 1;
}

/* Runs the plan through handle h into c (poisoned first); the status. */
static inline hipdnnStatus_t mm_run(const mm_plan* p, hipdnnHandle_t h, float* c) {
    for (int64_t i = 0; i < p->m * p->n; ++i) c[i] = NAN;
    void* ws = p->ws_size > 0 ? malloc((size_t)p->ws_size) : NULL;
    if (p->ws_size > 0 && !ws) return HIPDNN_STATUS_ALLOC_FAILED;
    int64_t uids[3] = {MM_A, MM_B, MM_C};
    void* ptrs[3] = {p->a, p->b, c};
    hipdnnBackendDescriptor_t vp = NULL;
    hipdnnStatus_t st = hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &vp);
    if (!st) st = hipdnnBackendSetAttribute(vp, HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
                                            HIPDNN_TYPE_INT64, 3, uids);
    if (!st) st = hipdnnBackendSetAttribute(vp, HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                            HIPDNN_TYPE_VOID_PTR, 3, ptrs);
    if (!st) st = hipdnnBackendSetAttribute(vp, HIPDNN_ATTR_VARIANT_PACK_WORKSPACE,
                                            HIPDNN_TYPE_VOID_PTR, 1, &ws);
    if (!st) st = hipdnnBackendFinalize(vp);
    if (!st) st = hipdnnBackendExecute(h, p->plan, vp);
    if (vp) hipdnnBackendDestroyDescriptor(vp);
    free(ws);
    return st;
}

/* Elements of c off the reference by more than the fp32 tolerance (1e-5 relative and
 * absolute), plus one if an input changed; 0 when the run was right. */
static inline int64_t mm_bad(const mm_plan* p, const float* c) {
    const double tol = 1e-5;
    int64_t bad = 0;
    for (int64_t i = 0; i < p->m * p->n; ++i) {
        double err = fabs((double)c[i] - p->ref[i]);
        if (!(err <= tol + tol * fabs(p->ref[i]))) ++bad;
    }
    if (memcmp(p->a, p->a0, (size_t)(p->m * p->k) * sizeof(float)) ||
        memcmp(p->b, p->b0, (size_t)(p->k * p->n) * sizeof(float)))
        ++bad;
    return bad;
}

#endif /* HIPDNN_TEST_MATMUL_PLAN_H */
