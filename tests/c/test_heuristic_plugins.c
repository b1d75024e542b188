/* test_heuristic_plugins.c — heuristic plugins from C: with tests/tune_engine's tune_a
 * (priority 50) and tune_b (40) loaded and $HIPDNN_HEURISTIC_PLUGIN_PATH naming the test
 * plugin by_name (ranks by name, last first) and one of another major version, mode A's
 * RESULTS come as by_name orders them (tune_b first), HEURISTIC_REPORT_EXT holds its lines,
 * hipdnnGetHeuristicPlugins_ext lists both (two-call pattern, its errors), and
 * HIPDNN_HEURISTIC=builtin or mode FALLBACK give the built-in ranking and an empty report.
 * In a child process: plugins load once per process. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "graph_builder.h"
#include "hipdnn/hipdnn.h"
#include "log_capture.h"

/* The engine names of heur's RESULTS, comma-separated, into out. */
static int result_names(hipdnnBackendDescriptor_t heur, char* out, size_t len) {
    hipdnnBackendDescriptor_t cfgs[4] = {NULL};
    int64_t n = 0;
    out[0] = '\0';
    if (!CHECK_OK(hipdnnBackendGetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_RESULTS,
                                            HIPDNN_TYPE_BACKEND_DESCRIPTOR, 4, &n, cfgs)))
        return 0;
    int ok = 1;
    for (int64_t i = 0; i < n && i < 4; ++i) {
        hipdnnBackendDescriptor_t e = NULL;
        int64_t got = 0, index = -1;
        hipdnnEngineInfo_ext_t info;
        ok = ok && CHECK_OK(hipdnnBackendGetAttribute(cfgs[i], HIPDNN_ATTR_ENGINECFG_ENGINE,
                                                      HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got, &e)) &&
             CHECK_OK(hipdnnBackendGetAttribute(e, HIPDNN_ATTR_ENGINE_GLOBAL_INDEX,
                                                HIPDNN_TYPE_INT64, 1, &got, &index)) &&
             CHECK_OK(hipdnnGetEngineInfo_ext(index, &info));
        if (ok) snprintf(out + strlen(out), len - strlen(out), "%s%s", i ? "," : "", info.name);
        gb_destroy(&e);
        gb_destroy(&cfgs[i]);
    }
    return ok;
}

static void check_listing(void) {
    size_t num = 0, max_len = 0;
    CHECK_STATUS(hipdnnGetHeuristicPlugins_ext(NULL, NULL, &max_len), HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    if (!CHECK_OK(hipdnnGetHeuristicPlugins_ext(&num, NULL, &max_len)) || !CHECK_EQ_INT(num, 2))
        return;
    char a[1024], b[1024];
    char* entries[2] = {a, b};
    size_t small = 4, two = 2;
    CHECK_STATUS(hipdnnGetHeuristicPlugins_ext(&two, entries, &small),
                 HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND);
    size_t room = sizeof(a);
    if (!CHECK_OK(hipdnnGetHeuristicPlugins_ext(&two, entries, &room))) return;
    CHECK_MSG(strcmp(a, HIPDNN_TEST_HEURISTIC_DIR "/libheur_by_name.so\tby_name\tactive") == 0,
              "%s", a);
    CHECK_MSG(strcmp(b, HIPDNN_TEST_HEURISTIC_DIR "/libheur_bad_version.so\t\tskipped: "
                        "heuristic API 2.0 but host speaks 1.x") == 0, "%s", b);
}

static void test_a_plugin_ranks_and_explains(void) {
    setenv("HIPDNN_HEURISTIC_PLUGIN_PATH", HIPDNN_TEST_HEURISTIC_DIR "/libheur_by_name.so:"
           HIPDNN_TEST_HEURISTIC_DIR "/libheur_bad_version.so", 1);
    setenv("HIPDNN_CACHE", "0", 1);
    unsetenv("HIPDNN_HEURISTIC");
    const char* paths[1] = {HIPDNN_TUNE_ENGINE};
    hipdnnHandle_t h = NULL;
    REQUIRE_OK(log_capture_start(HIPDNN_LOG_WARN));
    REQUIRE_OK(hipdnnSetEnginePluginPaths_ext(1, paths, HIPDNN_PLUGIN_LOADING_ABSOLUTE));
    REQUIRE_OK(hipdnnCreate(&h));
    int64_t dims[2] = {4, 8};
    hipdnnBackendDescriptor_t x = gb_tensor(1, "x", HIPDNN_DATA_FLOAT, 2, dims, NULL, 0);
    hipdnnBackendDescriptor_t y = gb_tensor(2, "y", HIPDNN_DATA_FLOAT, 2, dims, NULL, 0);
    hipdnnBackendDescriptor_t op = x && y ? gb_pointwise("act", HIPDNN_POINTWISE_RELU_FWD, x, NULL, y) : NULL;
    hipdnnBackendDescriptor_t graph = op ? gb_graph(h, "relu", 1, &op) : NULL;
    REQUIRE(graph && CHECK_OK(hipdnnBackendFinalize(graph)));

    hipdnnBackendDescriptor_t unfinalized = gb_new(HIPDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    int64_t n = 0;
    CHECK_STATUS(hipdnnBackendGetAttribute(unfinalized, HIPDNN_ATTR_ENGINEHEUR_HEURISTIC_REPORT_EXT,
                                           HIPDNN_TYPE_CHAR, 0, &n, NULL),
                 HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED);
    gb_destroy(&unfinalized);

    char names[256];
    hipdnnBackendDescriptor_t heur = gb_heur(graph, HIPDNN_HEUR_MODE_A);
    char* report = heur ? gb_get_string(heur, HIPDNN_ATTR_ENGINEHEUR_HEURISTIC_REPORT_EXT) : NULL;
    if (CHECK(heur && result_names(heur, names, sizeof(names))))
        CHECK_MSG(strcmp(names, "tune_b,tune_a") == 0, "mode A with by_name: %s", names);
    CHECK_MSG(report && strcmp(report, "by_name\ttune_b\t0\tby_name rank 0 of 2\n"
                                       "by_name\ttune_a\t1\tby_name rank 1 of 2\n") == 0,
              "%s", report ? report : "(none)");
    free(report);
    gb_destroy(&heur);
    check_listing();

    setenv("HIPDNN_HEURISTIC", "builtin", 1);
    heur = gb_heur(graph, HIPDNN_HEUR_MODE_A);
    report = heur ? gb_get_string(heur, HIPDNN_ATTR_ENGINEHEUR_HEURISTIC_REPORT_EXT) : NULL;
    if (CHECK(heur && result_names(heur, names, sizeof(names))))
        CHECK_MSG(strcmp(names, "tune_a,tune_b") == 0, "HIPDNN_HEURISTIC=builtin: %s", names);
    CHECK_MSG(report && !report[0], "%s", report ? report : "(none)");
    free(report);
    gb_destroy(&heur);
    unsetenv("HIPDNN_HEURISTIC");

    heur = gb_heur(graph, HIPDNN_HEUR_MODE_FALLBACK); /* tune engines are no fallback */
    report = heur ? gb_get_string(heur, HIPDNN_ATTR_ENGINEHEUR_HEURISTIC_REPORT_EXT) : NULL;
    if (CHECK(heur && result_names(heur, names, sizeof(names))))
        CHECK_MSG(!names[0], "FALLBACK: %s", names);
    CHECK_MSG(report && !report[0], "%s", report ? report : "(none)");
    free(report);
    gb_destroy(&heur);
    CHECK_EQ_INT(log_capture_matches("heuristic plugin skipped: ", "libheur_bad_version.so: ",
                                     "heuristic API 2.0 but host speaks 1.x"), 1);

    hipdnnBackendDescriptor_t* all[] = {&graph, &op, &x, &y};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); ++i) gb_destroy(all[i]);
    CHECK_OK(hipdnnDestroy(h));
    log_capture_stop();
}

int main(void) {
    check_run_in_child("a_plugin_ranks_and_explains", test_a_plugin_ranks_and_explains);
    return check_finish();
}
