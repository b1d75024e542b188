/* test_loader_env.c — where plugins are looked for: $HIPDNN_PLUGIN_DIR replaces the default
 * folder; nonexistent folders and files, and files that are not plugins, give a logged
 * reason and no crash; relative paths resolve against the backend library's folder.
 * The registry loads once per process, so each configuration runs in a child process of
 * its own (check_run_in_child). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "hipdnn/hipdnn.h"
#include "loader_support.h"
#include "log_capture.h"

#define TP(name) HIPDNN_TEST_PLUGIN_DIR "/lib" name ".so"
#define NO_DIR "/nonexistent/hipdnn_env_dir"
#define NO_FILE "/nonexistent/libhipdnn_nothing.so"

static char g_not_a_plugin[64]; /* a file with a .so name and garbage inside */

static void test_env_dir_replaces_the_default_folder(void) {
    setenv("HIPDNN_PLUGIN_DIR", HIPDNN_TEST_PLUGIN_DIR, 1);
    REQUIRE_OK(log_capture_start(HIPDNN_LOG_WARN)); /* the bad test plugins' warnings */
    hipdnnHandle_t h = NULL;
    REQUIRE_OK(hipdnnCreate(&h));
    ls_list loaded;
    if (ls_loaded(&loaded)) {
        CHECK(ls_find(&loaded, TP("declines_all"), NULL) >= 0);
        CHECK(ls_find(&loaded, TP("no_reason"), NULL) >= 0);
        CHECK_MSG(ls_find(&loaded, HIPDNN_ENGINE_DIR, NULL) < 0,
                  "the default folder %s was searched although $HIPDNN_PLUGIN_DIR is set",
                  HIPDNN_ENGINE_DIR);
    }
    ls_list_free(&loaded);
    CHECK_EQ_INT(ls_fallback_engines(NULL), 0);
    CHECK_EQ_INT(ls_engines_named("declines_all", NULL), 1);
    CHECK_OK(hipdnnDestroy(h));
    log_capture_stop();
}

/* The env folder does not exist; the paths added are a missing file, a file that is not
 * a shared library, and the shipped engines by a relative path. */
static void test_missing_paths_are_logged_and_relative_paths_resolve(void) {
    setenv("HIPDNN_PLUGIN_DIR", NO_DIR, 1);
    REQUIRE_OK(log_capture_start(HIPDNN_LOG_WARN));
    const char* paths[3] = {NO_FILE, g_not_a_plugin, "hipdnn_plugins/engines"};
    REQUIRE_OK(hipdnnSetEnginePluginPaths_ext(3, paths, HIPDNN_PLUGIN_LOADING_ADDITIVE));
    hipdnnHandle_t h = NULL;
    if (!CHECK_OK(hipdnnCreate(&h))) {
        log_capture_dump("loading");
        return;
    }
    hipdnnEngineInfo_ext_t ref;
    memset(&ref, 0, sizeof(ref));
    CHECK_MSG(ls_fallback_engines(&ref) >= 1,
              "the relative path hipdnn_plugins/engines did not load the reference engine");
    CHECK_STR_CONTAINS(ref.plugin_path, HIPDNN_ENGINE_DIR "/");
    CHECK_EQ_INT(ls_engines_named("declines_all", NULL), 0);
    int before = check_failed;
    CHECK_MSG(log_capture_matches(NO_DIR, NULL, NULL) >= 1, "nothing logged about %s", NO_DIR);
    CHECK_MSG(log_capture_matches(NO_FILE, NULL, NULL) >= 1, "nothing logged about %s", NO_FILE);
    CHECK_MSG(log_capture_matches(g_not_a_plugin, NULL, NULL) >= 1, "nothing logged about %s",
              g_not_a_plugin);
    if (check_failed != before) log_capture_dump("missing paths");
    /* a file that is not a plugin is a skipped plugin, with the reason the file check
     * before dlopen gives */
    ls_list skipped;
    if (ls_skipped(&skipped)) {
        int at = ls_find(&skipped, g_not_a_plugin, NULL);
        if (CHECK_MSG(at >= 0, "%s is not among the skipped plugins", g_not_a_plugin))
            CHECK_STR_CONTAINS(skipped.items[at], "not an ELF file");
    }
    ls_list_free(&skipped);
    CHECK_OK(hipdnnDestroy(h));
    log_capture_stop();
}

/* Nothing at all can be loaded: hipdnnCreate says so, naming the path. */
static void test_no_plugin_at_all_is_a_plugin_error(void) {
    setenv("HIPDNN_PLUGIN_DIR", NO_DIR, 1);
    REQUIRE_OK(log_capture_start(HIPDNN_LOG_WARN));
    hipdnnHandle_t h = NULL;
    CHECK_STATUS(hipdnnCreate(&h), HIPDNN_STATUS_PLUGIN_ERROR_EXT);
    CHECK_ERR_CONTAINS(NO_DIR);
    CHECK(h == NULL);
    if (h) hipdnnDestroy(h);
    int64_t count = -1;
    hipdnnStatus_t st = hipdnnGetEngineCount_ext(&count);
    CHECK_MSG(st != HIPDNN_STATUS_SUCCESS || count == 0, "engine count %lld with no plugin",
              (long long)count);
    log_capture_stop();
}

/* ABSOLUTE ignores the default folder, $HIPDNN_PLUGIN_DIR included; a path may name a
 * plugin file instead of a folder. */
static void test_absolute_relative_folder_and_single_file(void) {
    setenv("HIPDNN_PLUGIN_DIR", HIPDNN_TEST_PLUGIN_DIR, 1);
    REQUIRE_OK(log_capture_start(HIPDNN_LOG_WARN));
    const char* paths[2] = {"hipdnn_plugins/engines", TP("no_reason")};
    REQUIRE_OK(hipdnnSetEnginePluginPaths_ext(2, paths, HIPDNN_PLUGIN_LOADING_ABSOLUTE));
    hipdnnHandle_t h = NULL;
    REQUIRE_OK(hipdnnCreate(&h));
    CHECK(ls_fallback_engines(NULL) >= 1);
    CHECK_EQ_INT(ls_engines_named("no_reason", NULL), 1);
    CHECK_EQ_INT(ls_engines_named("declines_all", NULL), 0);
    ls_list loaded, skipped;
    if (ls_loaded(&loaded)) {
        CHECK(ls_find(&loaded, TP("no_reason"), NULL) >= 0);
        CHECK(ls_find(&loaded, HIPDNN_TEST_PLUGIN_DIR "/libdeclines_all", NULL) < 0);
    }
    /* the bad test plugins were never looked at */
    if (ls_skipped(&skipped)) CHECK_EQ_INT(skipped.n, 0);
    ls_list_free(&loaded);
    ls_list_free(&skipped);
    CHECK_OK(hipdnnDestroy(h));
    /* nothing went wrong, nothing to warn about; but a build tree made under umask 002 is
     * group-writable, and the loader rightly says so */
    CHECK_EQ_INT(log_capture_count() - log_capture_matches("(plugins are trusted code)", NULL, NULL),
                 0);
    log_capture_stop();
}

int main(void) {
    snprintf(g_not_a_plugin, sizeof(g_not_a_plugin), "/tmp/hipdnn_not_a_plugin_%d.so",
             (int)getpid());
    FILE* f = fopen(g_not_a_plugin, "w");
    if (!CHECK(f != NULL)) return check_finish();
    fputs("this is not an ELF file\n", f);
    fclose(f);
    check_run_in_child("env_dir_replaces_the_default_folder", test_env_dir_replaces_the_default_folder);
    check_run_in_child("missing_paths_are_logged_and_relative_paths_resolve",
                       test_missing_paths_are_logged_and_relative_paths_resolve);
    check_run_in_child("no_plugin_at_all_is_a_plugin_error", test_no_plugin_at_all_is_a_plugin_error);
    check_run_in_child("absolute_relative_folder_and_single_file",
                       test_absolute_relative_folder_and_single_file);
    unlink(g_not_a_plugin);
    return check_finish();
}
