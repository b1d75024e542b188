/* test_autotune_cache.c — autotuning from C (hipdnnAutotune_ext) and the plan cache
 * across processes, over tests/tune_engine only: two host engines running a float32 relu,
 * tune_a ranked first by priority; every execute sleeps 2 ms * |knob 1000 - 1|, plus 6 ms
 * for the engine $HIPDNN_TUNE_SLOW names.  With tune_a slow, the fastest of the plans
 * timed is tune_b with knob 1000 = 1, though heuristics rank tune_a first.
 *
 * Each step runs in a child process of its own (check_run_in_child), with the cache folder
 * of this run: the first autotunes and stores the winner, the second (a fresh backend load
 * and handle) asks heuristics mode A and must get that config first, with "plan cache hit"
 * in the log, and run it; the third does so with HIPDNN_CACHE=0 and must not. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "graph_builder.h"
#include "hipdnn/hipdnn.h"
#include "log_capture.h"

#define KNOB_DELAY 1000
#define N 32 /* elements of x and y, [4, 8] */
enum { UID_X = 1, UID_Y = 2 };

static char g_cache[128]; /* this run's HIPDNN_CACHE_DIR */

typedef struct {
    hipdnnHandle_t h;
    hipdnnBackendDescriptor_t x, y, op, graph;
    float xs[N], ys[N];
} relu_graph;

/* Loads only tune_engine, with the log captured at info, and builds the relu graph. */
static int relu_setup(relu_graph* g) {
    memset(g, 0, sizeof(*g));
    setenv("HIPDNN_CACHE_DIR", g_cache, 1);
    const char* paths[1] = {HIPDNN_TUNE_ENGINE};
    if (!CHECK_OK(log_capture_start(HIPDNN_LOG_INFO)) ||
        !CHECK_OK(hipdnnSetEnginePluginPaths_ext(1, paths, HIPDNN_PLUGIN_LOADING_ABSOLUTE)) ||
        !CHECK_OK(hipdnnCreate(&g->h)))
        return 0;
    int64_t dims[2] = {4, 8};
    g->x = gb_tensor(UID_X, "x", HIPDNN_DATA_FLOAT, 2, dims, NULL, 0);
    g->y = gb_tensor(UID_Y, "y", HIPDNN_DATA_FLOAT, 2, dims, NULL, 0);
    if (!g->x || !g->y) return 0;
    g->op = gb_pointwise("act", HIPDNN_POINTWISE_RELU_FWD, g->x, NULL, g->y);
    if (!g->op) return 0;
    g->graph = gb_graph(g->h, "tune", 1, &g->op);
    if (!g->graph || !CHECK_OK(hipdnnBackendFinalize(g->graph))) return 0;
    for (int i = 0; i < N; ++i) g->xs[i] = (float)(i % 7) - 3.0f + 0.25f;
    return 1;
}

static void relu_free(relu_graph* g) {
    hipdnnBackendDescriptor_t* all[] = {&g->graph, &g->op, &g->x, &g->y};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); ++i) gb_destroy(all[i]);
    if (g->h) CHECK_OK(hipdnnDestroy(g->h));
    log_capture_stop();
}

/* The engine's global index by name, or -1. */
static int64_t engine_index(const char* name) {
    int64_t count = 0;
    hipdnnEngineInfo_ext_t info;
    if (!CHECK_OK(hipdnnGetEngineCount_ext(&count))) return -1;
    for (int64_t i = 0; i < count; ++i)
        if (hipdnnGetEngineInfo_ext(i, &info) == HIPDNN_STATUS_SUCCESS && !strcmp(info.name, name))
            return i;
    return -1;
}

/* A finalized plan of engine `name` with knob 1000 = delay (delay < 0: no knob chosen). */
static hipdnnBackendDescriptor_t make_plan(relu_graph* g, const char* name, int64_t delay) {
    hipdnnBackendDescriptor_t e = gb_new(HIPDNN_BACKEND_ENGINE_DESCRIPTOR);
    hipdnnBackendDescriptor_t cfg = gb_new(HIPDNN_BACKEND_ENGINECFG_DESCRIPTOR), knob = NULL;
    hipdnnBackendDescriptor_t plan = gb_new(HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    int64_t index = engine_index(name), id = KNOB_DELAY;
    int ok = e && cfg && plan && CHECK_MSG(index >= 0, "engine %s is not loaded", name) &&
             gb_set_desc(e, HIPDNN_ATTR_ENGINE_OPERATION_GRAPH, g->graph) &&
             CHECK_OK(hipdnnBackendSetAttribute(e, HIPDNN_ATTR_ENGINE_GLOBAL_INDEX,
                                                HIPDNN_TYPE_INT64, 1, &index)) &&
             CHECK_OK(hipdnnBackendFinalize(e)) &&
             CHECK_OK(hipdnnBackendSetAttribute(cfg, HIPDNN_ATTR_ENGINECFG_ENGINE,
                                                HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &e));
    if (ok && delay >= 0) {
        knob = gb_new(HIPDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR);
        ok = knob && CHECK_OK(hipdnnBackendSetAttribute(knob, HIPDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
                                                        HIPDNN_TYPE_INT64, 1, &id)) &&
             CHECK_OK(hipdnnBackendSetAttribute(knob, HIPDNN_ATTR_KNOB_CHOICE_KNOB_VALUE,
                                                HIPDNN_TYPE_INT64, 1, &delay)) &&
             CHECK_OK(hipdnnBackendFinalize(knob)) &&
             CHECK_OK(hipdnnBackendSetAttribute(cfg, HIPDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                                                HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &knob));
    }
    ok = ok && CHECK_OK(hipdnnBackendFinalize(cfg)) &&
         CHECK_OK(hipdnnBackendSetAttribute(plan, HIPDNN_ATTR_EXECUTION_PLAN_HANDLE,
                                            HIPDNN_TYPE_HANDLE, 1, &g->h)) &&
         CHECK_OK(hipdnnBackendSetAttribute(plan, HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                            HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg)) &&
         CHECK_OK(hipdnnBackendFinalize(plan));
    gb_destroy(&knob), gb_destroy(&cfg), gb_destroy(&e);
    if (!ok) gb_destroy(&plan);
    return plan;
}

static hipdnnBackendDescriptor_t variant_pack(relu_graph* g) {
    int64_t uids[2] = {UID_X, UID_Y};
    void* ptrs[2] = {g->xs, g->ys};
    void* ws = NULL;
    hipdnnBackendDescriptor_t vp = gb_new(HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    if (vp && CHECK_OK(hipdnnBackendSetAttribute(vp, HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
                                                 HIPDNN_TYPE_INT64, 2, uids)) &&
        CHECK_OK(hipdnnBackendSetAttribute(vp, HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                           HIPDNN_TYPE_VOID_PTR, 2, ptrs)) &&
        CHECK_OK(hipdnnBackendSetAttribute(vp, HIPDNN_ATTR_VARIANT_PACK_WORKSPACE,
                                           HIPDNN_TYPE_VOID_PTR, 1, &ws)) &&
        CHECK_OK(hipdnnBackendFinalize(vp)))
        return vp;
    gb_destroy(&vp);
    return NULL;
}

/* y is relu(x) exactly; x is what relu_setup wrote. */
static int relu_right(const relu_graph* g) {
    for (int i = 0; i < N; ++i) {
        const float x = (float)(i % 7) - 3.0f + 0.25f;
        if (g->xs[i] != x || g->ys[i] != (x > 0.0f ? x : 0.0f)) return 0;
    }
    return 1;
}

/* Plans tune_a, tune_a k=1, tune_b, tune_b k=1 and tune_b k=2, tuned with tune_a slow:
 * tune_b k=1 (index 3) wins and is stored; y holds afterwards the NaNs it held before. */
static void test_autotune_picks_the_fastest_and_stores_it(void) {
    relu_graph g;
    setenv("HIPDNN_TUNE_SLOW", "tune_a", 1);
    if (relu_setup(&g)) {
        const char* names[5] = {"tune_a", "tune_a", "tune_b", "tune_b", "tune_b"};
        const int64_t delays[5] = {-1, 1, -1, 1, 2};
        hipdnnBackendDescriptor_t plans[5] = {0}, vp = variant_pack(&g);
        int made = vp != NULL;
        for (int i = 0; i < 5; ++i) made = (plans[i] = make_plan(&g, names[i], delays[i])) && made;
        for (int i = 0; i < N; ++i) g.ys[i] = NAN;
        hipdnnAutotuneOptions_ext_t opt = {1, 5, 2000.0, 1};
        hipdnnAutotuneResult_ext_t res[5];
        int64_t best = -1;
        if (made && CHECK_OK(hipdnnAutotune_ext(g.h, 5, plans, vp, &opt, res, &best))) {
            CHECK_EQ_INT(best, 3);
            for (int i = 0; i < 5; ++i) {
                CHECK_MSG(res[i].status == HIPDNN_STATUS_SUCCESS && res[i].runs >= 1 &&
                          res[i].timer == HIPDNN_AUTOTUNE_TIMER_HOST_CLOCK_EXT &&
                          res[i].min_ms <= res[i].median_ms, "plan %d: %s", i, res[i].message);
                CHECK_MSG(i == 3 || res[i].median_ms >= res[3].median_ms,
                          "plan %d took %.3f ms, the winner %.3f", i, res[i].median_ms,
                          res[3].median_ms);
            }
            CHECK_MSG(res[0].median_ms >= 7.5, "tune_a's default took %.3f ms", res[0].median_ms);
            int kept = 1;
            for (int i = 0; i < N; ++i) kept = kept && g.ys[i] != g.ys[i]; /* still NaN */
            CHECK_MSG(kept, "autotune left its output in y");
            CHECK_OK(hipdnnBackendExecute(g.h, plans[3], vp));
            CHECK_MSG(relu_right(&g), "the winner's run is wrong or changed x");
        }
        for (int i = 0; i < 5; ++i) gb_destroy(&plans[i]);
        gb_destroy(&vp);
        int64_t entries = 0, bytes = 0;
        char dir[512];
        CHECK_OK(hipdnnPlanCacheInfo_ext(dir, sizeof(dir), &entries, &bytes));
        CHECK_EQ_INT(entries, 1);
        CHECK_STR_CONTAINS(dir, g_cache);
    }
    relu_free(&g);
}

/* The first config heuristics mode A ranks: its engine's name and knob 1000 (-1: none). */
static int first_config(relu_graph* g, char* engine, size_t len, int64_t* delay) {
    hipdnnBackendDescriptor_t heur = gb_heur(g->graph, HIPDNN_HEUR_MODE_A), cfg = NULL, e = NULL;
    hipdnnBackendDescriptor_t knobs[4] = {0};
    int64_t got = 0, nk = 0, index = -1;
    int ok = heur &&
             CHECK_OK(hipdnnBackendGetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_RESULTS,
                                                HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got, &cfg)) &&
             CHECK(got >= 1 && cfg) &&
             CHECK_OK(hipdnnBackendGetAttribute(cfg, HIPDNN_ATTR_ENGINECFG_ENGINE,
                                                HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got, &e)) &&
             CHECK_OK(hipdnnBackendGetAttribute(e, HIPDNN_ATTR_ENGINE_GLOBAL_INDEX,
                                                HIPDNN_TYPE_INT64, 1, &got, &index)) &&
             CHECK_OK(hipdnnBackendGetAttribute(cfg, HIPDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                                                HIPDNN_TYPE_BACKEND_DESCRIPTOR, 4, &nk, knobs));
    hipdnnEngineInfo_ext_t info;
    ok = ok && CHECK_OK(hipdnnGetEngineInfo_ext(index, &info));
    if (ok) snprintf(engine, len, "%s", info.name);
    *delay = -1;
    for (int64_t i = 0; ok && i < nk && i < 4; ++i) {
        int64_t id = 0, v = 0;
        ok = CHECK_OK(hipdnnBackendGetAttribute(knobs[i], HIPDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
                                                HIPDNN_TYPE_INT64, 1, &got, &id)) &&
             CHECK_OK(hipdnnBackendGetAttribute(knobs[i], HIPDNN_ATTR_KNOB_CHOICE_KNOB_VALUE,
                                                HIPDNN_TYPE_INT64, 1, &got, &v));
        if (ok && id == KNOB_DELAY) *delay = v;
    }
    for (int i = 0; i < 4; ++i) gb_destroy(&knobs[i]);
    gb_destroy(&e), gb_destroy(&cfg), gb_destroy(&heur);
    return ok;
}

/* A later process: heuristics rank the stored config (tune_b, knob 1000 = 1) first and say
 * so in the log; the plan built from it runs the relu right. */
static void test_a_later_process_gets_the_tuned_config_first(void) {
    relu_graph g;
    unsetenv("HIPDNN_TUNE_SLOW");
    char engine[64] = "";
    int64_t delay = -1;
    if (relu_setup(&g) && first_config(&g, engine, sizeof(engine), &delay)) {
        CHECK_MSG(!strcmp(engine, "tune_b") && delay == 1, "first config: %s, knob %lld", engine,
                  (long long)delay);
        if (!CHECK_MSG(log_capture_matches("plan cache hit: graph 'tune' runs on tune_b with "
                                           "knobs k1000=1", NULL, NULL) == 1,
                       "no (or more than one) plan cache hit logged"))
            log_capture_dump("second process");
        hipdnnBackendDescriptor_t plan = make_plan(&g, engine, delay), vp = variant_pack(&g);
        for (int i = 0; i < N; ++i) g.ys[i] = NAN;
        if (plan && vp && CHECK_OK(hipdnnBackendExecute(g.h, plan, vp)))
            CHECK_MSG(relu_right(&g), "the cached config's run is wrong or changed x");
        gb_destroy(&plan), gb_destroy(&vp);
    }
    relu_free(&g);
}

/* HIPDNN_CACHE=0: the stored entry is not read; heuristics rank by priority (tune_a). */
static void test_the_cache_off_ranks_by_priority(void) {
    relu_graph g;
    setenv("HIPDNN_CACHE", "0", 1);
    char engine[64] = "";
    int64_t delay = -1;
    if (relu_setup(&g) && first_config(&g, engine, sizeof(engine), &delay)) {
        CHECK_MSG(!strcmp(engine, "tune_a") && delay == -1, "first config: %s, knob %lld",
                  engine, (long long)delay);
        CHECK_EQ_INT(log_capture_matches("plan cache hit", NULL, NULL), 0);
    }
    relu_free(&g);
}

int main(void) {
    snprintf(g_cache, sizeof(g_cache), "/tmp/hipdnn_autotune_cache_XXXXXX");
    if (!CHECK(mkdtemp(g_cache) != NULL)) return check_finish();
    check_run_in_child("autotune_picks_the_fastest_and_stores_it",
                       test_autotune_picks_the_fastest_and_stores_it);
    check_run_in_child("a_later_process_gets_the_tuned_config_first",
                       test_a_later_process_gets_the_tuned_config_first);
    check_run_in_child("the_cache_off_ranks_by_priority", test_the_cache_off_ranks_by_priority);
    int64_t removed = 0;
    setenv("HIPDNN_CACHE_DIR", g_cache, 1);
    CHECK_OK(hipdnnPlanCacheClear_ext(&removed));
    CHECK_EQ_INT(removed, 1);
    char path[200];
    snprintf(path, sizeof(path), "%s/plans/.lock", g_cache);
    unlink(path);
    snprintf(path, sizeof(path), "%s/plans", g_cache);
    rmdir(path);
    rmdir(g_cache);
    return check_finish();
}
