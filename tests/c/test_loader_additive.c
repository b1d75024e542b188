/* test_loader_additive.c — the plugin loader with the test-plugin folder added to the
 * default one (ADDITIVE).  Every loader rule has a test plugin that breaks it
 * (tests/plugins/): the good ones load beside reference_cpu, each bad one is skipped or
 * loses its engine with its own reason, logged once with its path (docs/architecture.md,
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

typedef struct {
    const char* path;
    const char* reason[3]; /* every piece the skip reason must hold */
} bad_plugin;

static const bad_plugin k_bad[] = {
    {TP("bad_abi_version"), {"API 2.0", "host speaks 1.", NULL}},
    {TP("missing_symbol"), {"missing symbol", "hipdnnEnginePluginExecuteOpGraph", NULL}},
    {TP("init_fails"), {"init failed", "init_fails: no device found", NULL}},
    {TP("duplicate_id"), {"engine id clash with", TP("declines_all"), NULL}},
    {TP("bad_hash"), {"bad_hash", NULL, NULL}},
    {TP("bad_knobs"), {"engine 'bad_knobs' dropped: knob 9", "default 5 is not within 0 to 4", NULL}},
};
#define NUM_BAD (sizeof(k_bad) / sizeof(k_bad[0]))

static int holds_all(const char* s, const char* const* pieces) {
    for (int i = 0; i < 3 && pieces[i]; ++i)
        if (!strstr(s, pieces[i])) return 0;
    return 1;
}

static void test_good_plugins_load_beside_the_default_folder(void) {
    int before = check_failed;
    ls_list loaded;
    if (!ls_loaded(&loaded)) goto done;
    CHECK_MSG(ls_find(&loaded, HIPDNN_ENGINE_DIR "/", "reference_cpu") >= 0,
              "reference_cpu from %s is not loaded", HIPDNN_ENGINE_DIR);
    CHECK(ls_find(&loaded, TP("declines_all"), NULL) >= 0);
    CHECK(ls_find(&loaded, TP("no_reason"), NULL) >= 0);
    for (size_t i = 0; i < NUM_BAD; ++i)
        CHECK_MSG(ls_find(&loaded, k_bad[i].path, NULL) < 0, "%s is listed as loaded",
                  k_bad[i].path);
    CHECK_EQ_INT(loaded.n, 3);
done:
    if (check_failed != before) ls_print(&loaded, "loaded");
    ls_list_free(&loaded);
}

static void test_each_bad_plugin_is_skipped_with_its_reason(void) {
    ls_list skipped;
    if (!ls_skipped(&skipped)) goto done;
    int before = check_failed;
    for (size_t i = 0; i < NUM_BAD; ++i) {
        int at = ls_find(&skipped, k_bad[i].path, NULL);
        if (!CHECK_MSG(at >= 0, "%s is not among the skipped plugins", k_bad[i].path)) continue;
        const char* entry = skipped.items[at];
        /* "path: reason" */
        CHECK_MSG(strncmp(entry, k_bad[i].path, strlen(k_bad[i].path)) == 0 &&
                      strncmp(entry + strlen(k_bad[i].path), ": ", 2) == 0,
                  "entry \"%s\" is not \"<path>: <reason>\"", entry);
        const char* reason = entry + strlen(k_bad[i].path);
        CHECK_MSG(holds_all(reason, k_bad[i].reason), "reason for %s: \"%s\"", k_bad[i].path,
                  reason);
    }
    /* the id of bad_hash is not the hash of its name: the reason says so */
    int at = ls_find(&skipped, TP("bad_hash"), NULL);
    if (at >= 0) {
        char low[1024];
        ls_lower(skipped.items[at] + strlen(TP("bad_hash")), low, sizeof(low));
        CHECK_MSG(strstr(low, "fnv") || strstr(low, "hash"),
                  "bad_hash's reason does not mention the hash: \"%s\"", skipped.items[at]);
    }
    /* the good plugins are not skipped (the clash entry names declines_all as the owner) */
    for (size_t i = 0; i < skipped.n; ++i) {
        CHECK_MSG(strncmp(skipped.items[i], TP("declines_all") ":", strlen(TP("declines_all")) + 1),
                  "declines_all is skipped: \"%s\"", skipped.items[i]);
        CHECK_MSG(strncmp(skipped.items[i], TP("no_reason") ":", strlen(TP("no_reason")) + 1),
                  "no_reason is skipped: \"%s\"", skipped.items[i]);
    }
    /* one entry per skipped test plugin (the default folder may add device plugins that
     * decline on a machine without their GPU) */
    size_t from_tests = 0;
    for (size_t i = 0; i < skipped.n; ++i)
        if (strncmp(skipped.items[i], HIPDNN_TEST_PLUGIN_DIR "/", strlen(HIPDNN_TEST_PLUGIN_DIR) + 1) == 0)
            ++from_tests;
    CHECK_EQ_INT(from_tests, NUM_BAD);
    if (check_failed != before) ls_print(&skipped, "skipped");
done:
    ls_list_free(&skipped);
}

/* One warn (or error) line per skipped plugin: it names the path and says why.  Lines at
 * info level (progress) may name the path too. */
static void test_each_skip_was_logged_once_naming_the_path(void) {
    int before = check_failed;
    for (size_t b = 0; b < NUM_BAD; ++b) {
        int lines = 0;
        pthread_mutex_lock(&g_log.lock);
        for (int i = 0; i < g_log.count; ++i) {
            const char* s = g_log.lines[i];
            if (g_log.levels[i] > HIPDNN_LOG_WARN || !strstr(s, k_bad[b].path)) continue;
            /* a build made under umask 002 with a shared group: warned about, not skipped */
            if (strstr(s, "(plugins are trusted code)")) continue;
            /* the clash line names declines_all's path as the other owner; it is
             * duplicate_id's line, not declines_all's */
            ++lines;
            CHECK_MSG(holds_all(strstr(s, k_bad[b].path) + strlen(k_bad[b].path), k_bad[b].reason),
                      "log line for %s: \"%s\"", k_bad[b].path, s);
        }
        pthread_mutex_unlock(&g_log.lock);
        CHECK_MSG(lines == 1, "%d warn/error log lines name %s", lines, k_bad[b].path);
    }
    if (check_failed != before) log_capture_dump("skips");
}

static void test_engines_of_the_good_plugins_only(void) {
    hipdnnEngineInfo_ext_t e;
    memset(&e, 0, sizeof(e));
    CHECK_EQ_INT(ls_engines_named("declines_all", &e), 1);
    /* the clash kept the first owner */
    CHECK_STR_CONTAINS(e.plugin_path, TP("declines_all"));
    CHECK(e.memory_space == HIPDNN_MEMORY_HOST && !e.is_fallback);
    CHECK_EQ_INT(ls_engines_named("no_reason", &e), 1);
    CHECK_STR_CONTAINS(e.plugin_path, TP("no_reason"));
    CHECK_EQ_INT(ls_engines_named("bad_hash", NULL), 0);
    CHECK_EQ_INT(ls_engines_named("missing_symbol", NULL), 0);
    CHECK_EQ_INT(ls_engines_named("bad_abi_version", NULL), 0);
    CHECK_EQ_INT(ls_engines_named("init_fails", NULL), 0);
    CHECK_MSG(ls_fallback_engines(&e) >= 1, "no fallback (reference) engine loaded");
    CHECK_STR_CONTAINS(e.plugin_path, HIPDNN_ENGINE_DIR);
    int64_t count = 0;
    CHECK_OK(hipdnnGetEngineCount_ext(&count));
    CHECK(count >= 3);
    ls_check_engine_infos();
}

/* The support report lists every loaded engine with its verdict. */
static void test_support_report_gives_each_engine_its_reason(void) {
    car_graph g;
    hipdnnBackendDescriptor_t heur = NULL;
    char* report = NULL;
    if (!CHECK(car_build(&g, g_handle, 1))) goto done;
    heur = gb_heur(g.graph, HIPDNN_HEUR_MODE_A);
    if (!heur) goto done;
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
    hipdnnEngineInfo_ext_t ref;
    if (ls_fallback_engines(&ref) >= 1 &&
        CHECK_MSG(gb_report_reason(report, ref.name, ref.engine_id, why, sizeof(why)),
                  "no line for %s in:\n%s", ref.name, report))
        CHECK_MSG(strcmp(why, "applicable") == 0, "%s: \"%s\"", ref.name, why);
    /* one line per loaded engine */
    int64_t engines = 0, lines = 0;
    CHECK_OK(hipdnnGetEngineCount_ext(&engines));
    for (const char* p = report; *p; ++p)
        if (*p == '\n') ++lines;
    if (report[0] && report[strlen(report) - 1] != '\n') ++lines;
    CHECK_EQ_INT(lines, engines);

    /* the ranked configs hold no declining engine */
    int64_t n = 0;
    CHECK_OK(hipdnnBackendGetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_RESULTS,
                                       HIPDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n, NULL));
    CHECK(n >= 1);
    hipdnnBackendDescriptor_t cfgs[16] = {0};
    int64_t got = 0;
    if (n > 16) n = 16;
    CHECK_OK(hipdnnBackendGetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_RESULTS,
                                       HIPDNN_TYPE_BACKEND_DESCRIPTOR, n, &got, cfgs));
    for (int64_t i = 0; i < n; ++i) {
        hipdnnBackendDescriptor_t eng = NULL;
        int64_t c = 0;
        if (cfgs[i] && CHECK_OK(hipdnnBackendGetAttribute(cfgs[i], HIPDNN_ATTR_ENGINECFG_ENGINE,
                                                          HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c,
                                                          &eng))) {
            char* name = gb_get_string(eng, HIPDNN_ATTR_ENGINE_NAME_EXT);
            CHECK_MSG(name && strcmp(name, "declines_all") && strcmp(name, "no_reason"),
                      "a declining engine '%s' is among the results", name ? name : "(NULL)");
            free(name);
            gb_destroy(&eng);
        }
        gb_destroy(&cfgs[i]);
    }
    /* the plugin's own log line came through the backend's callback */
    CHECK_MSG(log_capture_matches("declines_all: declining graph 'conv_add_relu'", NULL, NULL) >= 1,
              "declines_all's plugin log line did not reach the user callback");
done:
    free(report);
    gb_destroy(&heur);
    car_destroy(&g);
}

/* FALLBACK mode ranks only the reference engines. */
static void test_fallback_mode_gives_only_fallback_engines(void) {
    car_graph g;
    hipdnnBackendDescriptor_t heur = NULL, cfg = NULL, eng = NULL;
    if (!CHECK(car_build(&g, g_handle, 1))) goto done;
    heur = gb_heur(g.graph, HIPDNN_HEUR_MODE_FALLBACK);
    if (!heur) goto done;
    int64_t n = 0, c = 0;
    CHECK_OK(hipdnnBackendGetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_RESULTS,
                                       HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &cfg));
    if (!CHECK(n >= 1 && cfg)) goto done;
    if (!CHECK_OK(hipdnnBackendGetAttribute(cfg, HIPDNN_ATTR_ENGINECFG_ENGINE,
                                            HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c, &eng)))
        goto done;
    int64_t index = -1;
    CHECK_OK(hipdnnBackendGetAttribute(eng, HIPDNN_ATTR_ENGINE_GLOBAL_INDEX, HIPDNN_TYPE_INT64, 1,
                                       &c, &index));
    hipdnnEngineInfo_ext_t info;
    memset(&info, 0, sizeof(info));
    CHECK_OK(hipdnnGetEngineInfo_ext(index, &info));
    CHECK_MSG(info.is_fallback, "FALLBACK mode ranked '%s' first", info.name);
done:
    gb_destroy(&eng);
    gb_destroy(&cfg);
    gb_destroy(&heur);
    car_destroy(&g);
}

static void test_paths_are_fixed_once_loaded(void) {
    const char* p[1] = {HIPDNN_ENGINE_DIR};
    CHECK_STATUS(hipdnnSetEnginePluginPaths_ext(1, p, HIPDNN_PLUGIN_LOADING_ABSOLUTE),
                 HIPDNN_STATUS_NOT_SUPPORTED);
    CHECK_ERR_NONEMPTY();
    /* a second handle does not reload */
    int64_t before = 0, after = 0;
    hipdnnHandle_t h2 = NULL;
    CHECK_OK(hipdnnGetEngineCount_ext(&before));
    CHECK_OK(hipdnnCreate(&h2));
    CHECK_OK(hipdnnGetEngineCount_ext(&after));
    CHECK_EQ_INT(after, before);
    CHECK_OK(hipdnnDestroy(h2));
}

int main(void) {
    unsetenv("HIPDNN_PLUGIN_DIR");
    if (!CHECK_OK(log_capture_start(HIPDNN_LOG_INFO))) return check_finish();
    /* bad arguments change nothing */
    const char* dirs[1] = {HIPDNN_TEST_PLUGIN_DIR};
    CHECK_STATUS(hipdnnSetEnginePluginPaths_ext(1, NULL, HIPDNN_PLUGIN_LOADING_ADDITIVE),
                 HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    const char* with_null[2] = {HIPDNN_TEST_PLUGIN_DIR, NULL};
    CHECK_STATUS(hipdnnSetEnginePluginPaths_ext(2, with_null, HIPDNN_PLUGIN_LOADING_ADDITIVE),
                 HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    CHECK_STATUS(hipdnnSetEnginePluginPaths_ext(1, dirs, (hipdnnPluginLoadingMode_t)7),
                 HIPDNN_STATUS_BAD_PARAM);
    if (!CHECK_OK(hipdnnSetEnginePluginPaths_ext(1, dirs, HIPDNN_PLUGIN_LOADING_ADDITIVE)) ||
        !CHECK_OK(hipdnnCreate(&g_handle))) {
        log_capture_dump("loading");
        return check_finish();
    }
    RUN_TEST(test_good_plugins_load_beside_the_default_folder);
    RUN_TEST(test_each_bad_plugin_is_skipped_with_its_reason);
    RUN_TEST(test_each_skip_was_logged_once_naming_the_path);
    RUN_TEST(test_engines_of_the_good_plugins_only);
    RUN_TEST(test_support_report_gives_each_engine_its_reason);
    RUN_TEST(test_fallback_mode_gives_only_fallback_engines);
    RUN_TEST(test_paths_are_fixed_once_loaded);
    CHECK_OK(hipdnnDestroy(g_handle));
    log_capture_stop();
    return check_finish();
}
