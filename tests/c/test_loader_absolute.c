/* test_loader_absolute.c — ABSOLUTE plugin paths: only the test-plugin folder is searched,
 * so the shipped reference engine is absent, only declining engines remain, and a valid
 * graph has no engine: the support report gives each engine's reason (docs/architecture.md,
 * "Loading plugins").  The registry loads once per process, so this configuration has an
 * executable of its own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "graph_builder.h"
#include "hipdnn/hipdnn.h"
#include "hipdnn/hipdnn_sdk.h"
#include "loader_support.h"
#include "log_capture.h"

#define TP(name) HIPDNN_TEST_PLUGIN_DIR "/lib" name ".so"

static hipdnnHandle_t g_handle;

static void test_only_the_given_folder_is_searched(void) {
    ls_list loaded;
    if (ls_loaded(&loaded)) {
        CHECK_EQ_INT(loaded.n, 2);
        CHECK(ls_find(&loaded, TP("declines_all"), NULL) >= 0);
        CHECK(ls_find(&loaded, TP("no_reason"), NULL) >= 0);
        CHECK_MSG(ls_find(&loaded, HIPDNN_ENGINE_DIR, NULL) < 0,
                  "a plugin from the default folder %s was loaded", HIPDNN_ENGINE_DIR);
        for (size_t i = 0; i < loaded.n; ++i)
            CHECK_STR_CONTAINS(loaded.items[i], HIPDNN_TEST_PLUGIN_DIR);
    }
    ls_list_free(&loaded);
    CHECK_EQ_INT(ls_fallback_engines(NULL), 0);
    CHECK_EQ_INT(ls_engines_named("declines_all", NULL), 1);
    CHECK_EQ_INT(ls_engines_named("no_reason", NULL), 1);
    int64_t count = 0;
    CHECK_OK(hipdnnGetEngineCount_ext(&count));
    CHECK_EQ_INT(count, 2);
    ls_check_engine_infos();
}

/* A valid graph that no engine takes: heuristics give no config, and the support report
 * (or, where the backend refuses at finalize, its message) names each reason. */
static void test_unsupported_graph_reports_every_reason(void) {
    car_graph g;
    hipdnnBackendDescriptor_t heur = NULL;
    char* report = NULL;
    if (!CHECK(car_build(&g, g_handle, 1))) goto done; /* validation needs no engine */
    heur = gb_new(HIPDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    if (!heur) goto done;
    hipdnnBackendHeurMode_t mode = HIPDNN_HEUR_MODE_A;
    CHECK_OK(hipdnnBackendSetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_MODE, HIPDNN_TYPE_HEUR_MODE, 1,
                                       &mode));
    CHECK(gb_set_desc(heur, HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, g.graph));
    /* Declining is not an error: finalize succeeds with no results. */
    if (!CHECK_OK(hipdnnBackendFinalize(heur))) goto done;
    int64_t n = -1;
    CHECK_OK(hipdnnBackendGetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_RESULTS,
                                       HIPDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n, NULL));
    CHECK_EQ_INT(n, 0);
    report = gb_get_string(heur, HIPDNN_ATTR_ENGINEHEUR_SUPPORT_REPORT_EXT);
    if (!CHECK(report != NULL)) goto done;
    char why[512];
    if (CHECK_MSG(gb_report_reason(report, "declines_all", hipdnnSdkFnv1a64("declines_all"), why,
                                   sizeof(why)),
                  "no line for declines_all in:\n%s", report))
        CHECK_MSG(strcmp(why, "declines_all: this test engine declines every graph") == 0,
                  "declines_all: \"%s\"", why);
    if (CHECK_MSG(gb_report_reason(report, "no_reason", hipdnnSdkFnv1a64("no_reason"), why,
                                   sizeof(why)),
                  "no line for no_reason in:\n%s", report))
        CHECK_MSG(strcmp(why, "declined, no reason given") == 0, "no_reason: \"%s\"", why);
    CHECK_MSG(strstr(report, "\tapplicable") == NULL, "an engine claims the graph:\n%s", report);
done:
    free(report);
    gb_destroy(&heur);
    car_destroy(&g);
}

/* Forcing a declining engine through a hand-built config: the plan cannot be made, and
 * the message carries the engine's own words. */
static void test_plan_on_a_declining_engine_fails_with_its_message(void) {
    car_graph g;
    hipdnnBackendDescriptor_t eng = NULL, cfg = NULL, plan = NULL;
    if (!CHECK(car_build(&g, g_handle, 1))) goto done;
    int64_t count = 0, index = -1;
    CHECK_OK(hipdnnGetEngineCount_ext(&count));
    for (int64_t i = 0; i < count; ++i) {
        hipdnnEngineInfo_ext_t e;
        if (CHECK_OK(hipdnnGetEngineInfo_ext(i, &e)) && strcmp(e.name, "declines_all") == 0)
            index = i;
    }
    if (!CHECK(index >= 0)) goto done;
    eng = gb_new(HIPDNN_BACKEND_ENGINE_DESCRIPTOR);
    cfg = gb_new(HIPDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    plan = gb_new(HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    if (!eng || !cfg || !plan) goto done;
    hipdnnStatus_t st = HIPDNN_STATUS_SUCCESS;
    if (gb_set_desc(eng, HIPDNN_ATTR_ENGINE_OPERATION_GRAPH, g.graph) &&
        CHECK_OK(hipdnnBackendSetAttribute(eng, HIPDNN_ATTR_ENGINE_GLOBAL_INDEX, HIPDNN_TYPE_INT64,
                                           1, &index))) {
        /* the backend may refuse as early as the engine or config; else at the plan */
        st = hipdnnBackendFinalize(eng);
        if (st == HIPDNN_STATUS_SUCCESS) {
            gb_set_desc(cfg, HIPDNN_ATTR_ENGINECFG_ENGINE, eng);
            st = hipdnnBackendFinalize(cfg);
        }
        if (st == HIPDNN_STATUS_SUCCESS) {
            CHECK_OK(hipdnnBackendSetAttribute(plan, HIPDNN_ATTR_EXECUTION_PLAN_HANDLE,
                                               HIPDNN_TYPE_HANDLE, 1, &g_handle));
            gb_set_desc(plan, HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfg);
            st = hipdnnBackendFinalize(plan);
        }
        check_note_call(st);
        CHECK_MSG(st == HIPDNN_STATUS_NOT_SUPPORTED || st == HIPDNN_STATUS_PLUGIN_ERROR,
                  "a plan on declines_all gave %s", hipdnnGetErrorString(st));
        CHECK_ERR_CONTAINS("declines_all");
    }
done:
    gb_destroy(&plan);
    gb_destroy(&cfg);
    gb_destroy(&eng);
    car_destroy(&g);
}

int main(void) {
    unsetenv("HIPDNN_PLUGIN_DIR");
    if (!CHECK_OK(log_capture_start(HIPDNN_LOG_WARN))) return check_finish();
    const char* dirs[1] = {HIPDNN_TEST_PLUGIN_DIR};
    if (!CHECK_OK(hipdnnSetEnginePluginPaths_ext(1, dirs, HIPDNN_PLUGIN_LOADING_ABSOLUTE)) ||
        !CHECK_OK(hipdnnCreate(&g_handle))) {
        log_capture_dump("loading");
        return check_finish();
    }
    RUN_TEST(test_only_the_given_folder_is_searched);
    RUN_TEST(test_unsupported_graph_reports_every_reason);
    RUN_TEST(test_plan_on_a_declining_engine_fails_with_its_message);
    CHECK_OK(hipdnnDestroy(g_handle));
    log_capture_stop();
    return check_finish();
}
