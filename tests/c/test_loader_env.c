/* test_loader_env.c — where plugins are looked for: $HIPDNN_PLUGIN_DIR replaces the default
 * folder; nonexistent folders and files, and files that are not plugins, give a logged
 * reason and no crash; relative paths resolve against the backend library's folder.
 * The registry loads once per process, so each configuration runs in a child process of
 * its own (check_run_in_child).  A set-user-ID run ignores $HIPDNN_PLUGIN_DIR and
 * $HIPDNN_LOG_FILE (secure_getenv): this executable re-runs itself that way, as root. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/wait.h>
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
    CHECK_STATUS(hipdnnCreate(&h), HIPDNN_STATUS_PLUGIN_ERROR);
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
    /* the bad test plugins were never looked at (device plugins of the default folder
     * may decline on a machine without their GPU) */
    if (ls_skipped(&skipped))
        for (size_t i = 0; i < skipped.n; ++i)
            CHECK_MSG(strstr(skipped.items[i], HIPDNN_TEST_PLUGIN_DIR) == NULL,
                      "a test plugin was looked at: %s", skipped.items[i]);
    ls_list_free(&loaded);
    ls_list_free(&skipped);
    CHECK_OK(hipdnnDestroy(h));
    /* nothing went wrong, nothing to warn about; but a build tree made under umask 002 is
     * group-writable, and the loader rightly says so */
    CHECK_EQ_INT(log_capture_count() - log_capture_matches("(plugins are trusted code)", NULL, NULL),
                 0);
    log_capture_stop();
}

/* ---- set-user-ID ----------------------------------------------------------------------- */

#define SECURE_ARG "--secure-child"

/* In the set-user-ID copy: the default folder was searched, not $HIPDNN_PLUGIN_DIR (the
 * test plugins).  The exit status says what went wrong; 3: not a secure run after all. */
static int secure_child(void) {
    if (getauxval(AT_SECURE) == 0) return 3;
    hipdnnHandle_t h = NULL;
    if (hipdnnCreate(&h) != HIPDNN_STATUS_SUCCESS) return 4;
    int ok = ls_fallback_engines(NULL) >= 1 && ls_engines_named("declines_all", NULL) == 0;
    hipdnnDestroy(h);
    return ok ? 0 : 5;
}

/* A root-owned set-user-ID copy of this program, run by nobody with the variables set. */
static void test_setuid_run_ignores_the_plugin_dir_and_log_file(void) {
    if (geteuid() != 0) {
        printf("   not root: no set-user-ID copy can be made; not exercised\n");
        return;
    }
    char dir[2200], exe[2300], logf[2300], self[2048];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    REQUIRE(n > 0);
    self[n] = '\0';
    REQUIRE(getcwd(dir, sizeof(dir) - 32) != NULL);
    strcat(dir, "/setuid_XXXXXX");
    REQUIRE(mkdtemp(dir) != NULL && chmod(dir, 0777) == 0);
    snprintf(exe, sizeof(exe), "%s/test_loader_env", dir);
    snprintf(logf, sizeof(logf), "%s/log.txt", dir);
    FILE* in = fopen(self, "rb");
    FILE* out = fopen(exe, "wb");
    char buf[65536];
    size_t got;
    while (in && out && (got = fread(buf, 1, sizeof(buf), in)) > 0) fwrite(buf, 1, got, out);
    if (in) fclose(in);
    if (out) fclose(out);
    REQUIRE(in && out && chmod(exe, 04755) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("HIPDNN_PLUGIN_DIR", HIPDNN_TEST_PLUGIN_DIR, 1);
        setenv("HIPDNN_LOG_FILE", logf, 1);
        setenv("HIPDNN_LOG_LEVEL", "info", 1); /* "loaded plugin" lines: the file would open */
        if (setgid(65534) != 0 || setuid(65534) != 0) _exit(125);
        execl(exe, exe, SECURE_ARG, (char*)NULL);
        _exit(126);
    }
    int ws = 0;
    REQUIRE(pid > 0 && waitpid(pid, &ws, 0) == pid);
    int rc = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    struct stat st;
    if (rc == 3 || rc == 126) /* a nosuid mount, or nobody may not reach the build tree */
        printf("   the set-user-ID copy %s (status %d); not exercised\n",
               rc == 3 ? "did not run set-user-ID" : "could not be run by nobody", rc);
    else
        CHECK_MSG(rc == 0, "the set-user-ID run gave status %d (4: no handle, 5: it loaded "
                  "from $HIPDNN_PLUGIN_DIR)", rc);
    CHECK_MSG(stat(logf, &st) != 0, "the set-user-ID run opened $HIPDNN_LOG_FILE %s", logf);
    unlink(logf);
    unlink(exe);
    rmdir(dir);
}

int main(int argc, char** argv) {
    if (argc == 2 && strcmp(argv[1], SECURE_ARG) == 0) return secure_child();
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
    check_run_in_child("setuid_run_ignores_the_plugin_dir_and_log_file",
                       test_setuid_run_ignores_the_plugin_dir_and_log_file);
    unlink(g_not_a_plugin);
    return check_finish();
}
