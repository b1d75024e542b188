/* test_loader_hostile.c — plugin folders as deployments leave them: a copy cut short, a
 * FIFO or a directory named *.so, a library for another machine, empty and unreadable
 * files, hundreds of files in one folder, folders and files that others may write.  Each
 * bad file is skipped with one log line naming its path and its reason and the good
 * plugins beside it still load; nothing hangs (a FIFO), nothing dies of SIGBUS (a
 * truncated library).  The registry loads once per process, so each case runs in a child
 * of its own, which SIGALRM ends if it hangs. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stddef.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define CHECK_CHILD_TIMEOUT_S 60
#include "check.h"
#include "hipdnn/hipdnn.h"
#include "loader_support.h"
#include "log_capture.h"

#define GOOD_SRC HIPDNN_TEST_PLUGIN_DIR "/libno_reason.so"   /* engine "no_reason" */
#define GOOD2_SRC HIPDNN_TEST_PLUGIN_DIR "/libdeclines_all.so" /* engine "declines_all" */

static char g_root[4096]; /* this run's scratch folder, under the working directory */

/* ---- making hostile files ------------------------------------------------------------- */

static int make_dir(char* out, size_t len, const char* name, mode_t mode) {
    snprintf(out, len, "%s/%s", g_root, name);
    if (!CHECK_MSG(mkdir(out, 0700) == 0, "mkdir %s: %s", out, strerror(errno))) return 0;
    return CHECK_MSG(chmod(out, mode) == 0, "chmod %s: %s", out, strerror(errno));
}

/* Copies src to dst, keeping the first `keep` bytes (all if keep < 0); then chmod. */
static int copy_file(const char* src, const char* dst, long keep, mode_t mode) {
    FILE* in = fopen(src, "rb");
    FILE* out = fopen(dst, "wb");
    int ok = CHECK_MSG(in && out, "copy %s -> %s: %s", src, dst, strerror(errno));
    long done = 0;
    char buf[8192];
    size_t n;
    while (ok && (keep < 0 || done < keep) && (n = fread(buf, 1, sizeof(buf), in)) > 0) {
        if (keep >= 0 && done + (long)n > keep) n = (size_t)(keep - done);
        ok = CHECK(fwrite(buf, 1, n, out) == n);
        done += (long)n;
    }
    if (in) fclose(in);
    if (out) fclose(out);
    return ok && CHECK_MSG(chmod(dst, mode) == 0, "chmod %s: %s", dst, strerror(errno));
}

static int write_file(const char* path, const void* data, size_t n, mode_t mode) {
    FILE* f = fopen(path, "wb");
    if (!CHECK_MSG(f != NULL, "create %s: %s", path, strerror(errno))) return 0;
    int ok = CHECK(n == 0 || fwrite(data, 1, n, f) == n);
    fclose(f);
    return ok && CHECK(chmod(path, mode) == 0);
}

/* Where the last segment with file bytes ends: cutting the file before it is what an
 * interrupted copy does. */
static long segments_end(const char* path) {
    long end = -1;
    FILE* f = fopen(path, "rb");
    if (!CHECK(f != NULL)) return -1;
    ElfW(Ehdr) eh;
    if (CHECK(fread(&eh, sizeof(eh), 1, f) == 1) && CHECK(fseek(f, (long)eh.e_phoff, SEEK_SET) == 0)) {
        for (unsigned i = 0; i < eh.e_phnum; ++i) {
            ElfW(Phdr) ph;
            if (!CHECK(fread(&ph, sizeof(ph), 1, f) == 1)) break;
            if ((long)(ph.p_offset + ph.p_filesz) > end) end = (long)(ph.p_offset + ph.p_filesz);
        }
    }
    fclose(f);
    return end;
}

/* A copy of src for another machine: e_machine patched, the rest intact. */
static int copy_for_other_machine(const char* src, const char* dst, const char** machine) {
    if (!copy_file(src, dst, -1, 0644)) return 0;
#if defined(__aarch64__)
    uint16_t m = EM_X86_64;
    *machine = "x86-64";
#else
    uint16_t m = EM_AARCH64;
    *machine = "AArch64";
#endif
    int fd = open(dst, O_WRONLY);
    int ok = CHECK(fd >= 0) &&
             CHECK(pwrite(fd, &m, sizeof(m), offsetof(ElfW(Ehdr), e_machine)) == sizeof(m));
    if (fd >= 0) close(fd);
    return ok;
}

static int remove_entry(const char* path, const struct stat* st, int flag, struct FTW* ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* ---- what the loader must have said --------------------------------------------------- */

/* The skip entry of `path` ("path: reason") holds `reason`, and exactly one warn line
 * was logged for it, naming the path and holding the reason. */
static void expect_skipped(const ls_list* skipped, const char* path, const char* reason) {
    char prefix[4200];
    snprintf(prefix, sizeof(prefix), "%s: ", path);
    int entries = 0;
    for (size_t i = 0; i < skipped->n; ++i) {
        if (strncmp(skipped->items[i], prefix, strlen(prefix)) != 0) continue;
        ++entries;
        CHECK_MSG(strstr(skipped->items[i] + strlen(prefix), reason) != NULL,
                  "skip reason for %s: \"%s\", expected it to say \"%s\"", path,
                  skipped->items[i], reason);
    }
    CHECK_MSG(entries == 1, "%d skip entries for %s", entries, path);
    int lines = 0;
    pthread_mutex_lock(&g_log.lock);
    for (int i = 0; i < g_log.count; ++i)
        if (g_log.levels[i] == HIPDNN_LOG_WARN && strstr(g_log.lines[i], prefix) &&
            strstr(g_log.lines[i], reason))
            ++lines;
    pthread_mutex_unlock(&g_log.lock);
    CHECK_MSG(lines == 1, "%d warn lines name %s with \"%s\"", lines, path, reason);
}

static void load_only(const char* folder) {
    const char* paths[1] = {folder};
    CHECK_OK(hipdnnSetEnginePluginPaths_ext(1, paths, HIPDNN_PLUGIN_LOADING_ABSOLUTE));
}

/* ---- the cases ------------------------------------------------------------------------ */

static void test_each_hostile_file_is_skipped_with_its_reason(void) {
    char dir[4200], p[16][4400];
    if (!make_dir(dir, sizeof(dir), "hostile", 0755)) return;
    const char* names[] = {"a_cut_half.so", "b_cut_one_byte.so", "c_empty.so", "d_fifo.so",
                           "e_dir.so",      "f_other_machine.so", "g_tiny_elf.so", "h_text.so",
                           "z_good.so"};
    enum { N = sizeof(names) / sizeof(names[0]) };
    for (int i = 0; i < N; ++i) snprintf(p[i], sizeof(p[i]), "%s/%s", dir, names[i]);
    long end = segments_end(GOOD_SRC);
    REQUIRE(end > 4096);
    const char* machine = "";
    REQUIRE(copy_file(GOOD_SRC, p[0], end / 2, 0755));
    REQUIRE(copy_file(GOOD_SRC, p[1], end - 1, 0755));
    REQUIRE(write_file(p[2], "", 0, 0644));
    REQUIRE(CHECK_MSG(mkfifo(p[3], 0644) == 0, "mkfifo: %s", strerror(errno)));
    REQUIRE(CHECK(mkdir(p[4], 0755) == 0));
    REQUIRE(copy_for_other_machine(GOOD_SRC, p[5], &machine));
    REQUIRE(write_file(p[6], "\177ELF\2\1\1\0\0\0\0\0\0\0", 14, 0644));
    REQUIRE(write_file(p[7], "hello, I am not a library\n", 26, 0644));
    REQUIRE(copy_file(GOOD_SRC, p[8], -1, 0755));

    REQUIRE_OK(log_capture_start(HIPDNN_LOG_WARN));
    load_only(dir);
    hipdnnHandle_t h = NULL;
    if (!CHECK_OK(hipdnnCreate(&h))) {
        log_capture_dump("loading");
        return;
    }
    int before = check_failed;
    ls_list loaded, skipped;
    if (ls_loaded(&loaded)) {
        CHECK_EQ_INT(loaded.n, 1);
        CHECK(ls_find(&loaded, p[8], NULL) >= 0);
    }
    CHECK_EQ_INT(ls_engines_named("no_reason", NULL), 1);
    char other[64];
    snprintf(other, sizeof(other), "ELF for machine %s, this is ", machine);
    char cut[96];
    snprintf(cut, sizeof(cut), "ends at byte %ld but the file has %ld", end, end - 1);
    if (ls_skipped(&skipped)) {
        CHECK_EQ_INT(skipped.n, N - 1);
        expect_skipped(&skipped, p[0], "truncated: ");
        expect_skipped(&skipped, p[1], "truncated: segment ");
        expect_skipped(&skipped, p[1], cut);
        expect_skipped(&skipped, p[2], "empty file");
        expect_skipped(&skipped, p[3], "not a regular file (a FIFO)");
        expect_skipped(&skipped, p[4], "not a regular file (a directory)");
        expect_skipped(&skipped, p[5], other);
        expect_skipped(&skipped, p[6], "truncated: 14 bytes, shorter than an ELF header");
        expect_skipped(&skipped, p[7], "not an ELF file");
    }
    if (check_failed != before) {
        ls_print(&loaded, "loaded");
        ls_print(&skipped, "skipped");
        log_capture_dump("hostile files");
    }
    ls_list_free(&loaded);
    ls_list_free(&skipped);
    CHECK_OK(hipdnnDestroy(h));
    log_capture_stop();
}

/* Unreadable for this user: root reads anything, so as root the case drops to nobody. */
static void test_unreadable_file_is_skipped(void) {
    char dir[4200], bad[4400], good[4400];
    if (!make_dir(dir, sizeof(dir), "unreadable", 0755)) return;
    snprintf(bad, sizeof(bad), "%s/a_unreadable.so", dir);
    snprintf(good, sizeof(good), "%s/b_good.so", dir);
    REQUIRE(copy_file(GOOD2_SRC, bad, -1, 0000));
    REQUIRE(copy_file(GOOD_SRC, good, -1, 0755));
    if (geteuid() == 0)
        REQUIRE(CHECK_MSG(setgid(65534) == 0 && setuid(65534) == 0,
                          "root could not become nobody: %s", strerror(errno)));
    REQUIRE_OK(log_capture_start(HIPDNN_LOG_WARN));
    load_only(dir);
    hipdnnHandle_t h = NULL;
    REQUIRE_OK(hipdnnCreate(&h));
    CHECK_EQ_INT(ls_engines_named("no_reason", NULL), 1);
    CHECK_EQ_INT(ls_engines_named("declines_all", NULL), 0);
    ls_list skipped;
    if (ls_skipped(&skipped)) {
        CHECK_EQ_INT(skipped.n, 1);
        expect_skipped(&skipped, bad, "not readable: ");
    }
    ls_list_free(&skipped);
    CHECK_OK(hipdnnDestroy(h));
    log_capture_stop();
}

/* Counts warn lines, past log_capture's cap: 600 skips. */
static int g_skip_lines;
static void count_skip_lines(hipdnnLogLevel_t level, const char* message, void* user_data) {
    if (level == HIPDNN_LOG_WARN && strstr(message, "plugin skipped: ") &&
        strstr(message, (const char*)user_data))
        ++g_skip_lines;
}

static int compare_strings(const void* a, const void* b) {
    return strcmp(*(char* const*)a, *(char* const*)b);
}

/* More files than the old fixed table (512): the good plugin sorts after all of them and
 * still loads; each of the 600 others is skipped, listed and logged, none left out. */
static void test_a_folder_of_600_files_is_read_whole(void) {
    enum { BAD = 600 };
    char dir[4200], path[4400];
    if (!make_dir(dir, sizeof(dir), "many", 0755)) return;
    long end = segments_end(GOOD_SRC);
    REQUIRE(end > 0);
    char** want = calloc(BAD, sizeof(char*));
    REQUIRE(want != NULL);
    int ok = 1;
    for (int i = 0; i < BAD && ok; ++i) {
        snprintf(path, sizeof(path), "%s/f%04d.so", dir, i);
        want[i] = strdup(path);
        switch (i % 3) { /* an empty file, a text file, a library cut short */
        case 0: ok = write_file(path, "", 0, 0644); break;
        case 1: ok = write_file(path, "not a library", 13, 0644); break;
        default: ok = copy_file(GOOD_SRC, path, end / 2, 0755); break;
        }
    }
    snprintf(path, sizeof(path), "%s/zzz_good.so", dir);
    if (ok) ok = copy_file(GOOD_SRC, path, -1, 0755);
    if (ok) {
        char needle[4300];
        snprintf(needle, sizeof(needle), "%s/", dir);
        CHECK_OK(hipdnnSetLogLevel_ext(HIPDNN_LOG_WARN));
        CHECK_OK(hipdnnSetUserLogCallback_ext(count_skip_lines, needle));
        load_only(dir);
        hipdnnHandle_t h = NULL;
        if (CHECK_OK(hipdnnCreate(&h))) {
            ls_list loaded, skipped;
            if (ls_loaded(&loaded)) {
                CHECK_EQ_INT(loaded.n, 1);
                CHECK(ls_find(&loaded, path, NULL) >= 0);
            }
            CHECK_EQ_INT(ls_engines_named("no_reason", NULL), 1);
            if (ls_skipped(&skipped) && CHECK_EQ_INT(skipped.n, BAD)) {
                /* "<path>: <reason>", in name order: cut at ": " and compare */
                for (size_t i = 0; i < skipped.n; ++i) {
                    char* colon = strstr(skipped.items[i], ".so: ");
                    if (CHECK_MSG(colon != NULL, "entry \"%s\"", skipped.items[i])) colon[3] = '\0';
                }
                qsort(skipped.items, skipped.n, sizeof(char*), compare_strings);
                int diff = 0;
                for (int i = 0; i < BAD; ++i) diff += strcmp(skipped.items[i], want[i]) != 0;
                CHECK_MSG(diff == 0, "%d of %d files are not in the skipped list as themselves",
                          diff, BAD);
            }
            CHECK_EQ_INT(g_skip_lines, BAD);
            ls_list_free(&loaded);
            ls_list_free(&skipped);
            CHECK_OK(hipdnnDestroy(h));
        }
        CHECK_OK(hipdnnSetUserLogCallback_ext(NULL, NULL));
    }
    for (int i = 0; i < BAD; ++i) free(want[i]);
    free(want);
}

/* Lines at warn level naming `path` and holding `text`. */
static int warn_lines(const char* path, const char* text) {
    int n = 0;
    pthread_mutex_lock(&g_log.lock);
    for (int i = 0; i < g_log.count; ++i) {
        const char* at = strstr(g_log.lines[i], path);
        /* the path itself, not a longer one it is a prefix of */
        if (g_log.levels[i] == HIPDNN_LOG_WARN && at && at[strlen(path)] == ' ' &&
            strstr(g_log.lines[i], text))
            ++n;
    }
    pthread_mutex_unlock(&g_log.lock);
    return n;
}

/* Plugins are trusted code: folders and files others may write load, with one warning per
 * path (a folder listed twice is still warned about once). */
static void test_writable_folders_and_files_are_warned_about_once(void) {
    char world[4200], group[4200], tidy[4200], mine[4200], f1[4400], f2[4400], f3[4400];
    if (!make_dir(world, sizeof(world), "world", 0777) ||
        !make_dir(group, sizeof(group), "group", 0775) ||
        !make_dir(tidy, sizeof(tidy), "tidy", 0755) ||
        !make_dir(mine, sizeof(mine), "mine", 0775)) /* group: as made, this user's own */
        return;
    snprintf(f1, sizeof(f1), "%s/libgood.so", world);
    snprintf(f2, sizeof(f2), "%s/libgood2.so", group);
    snprintf(f3, sizeof(f3), "%s/libnot_a_plugin.so", tidy);
    REQUIRE(copy_file(GOOD_SRC, f1, -1, 0666));
    REQUIRE(copy_file(GOOD2_SRC, f2, -1, 0755));
    REQUIRE(write_file(f3, "text", 4, 0644));
    int chowned = 0;
    if (geteuid() == 0) { /* owned by another, non-root user: only root can set that up */
        chowned = CHECK_MSG(chown(f2, 12345, 12345) == 0, "chown: %s", strerror(errno));
        /* root's group is its private group (gid = uid = 0): another group for `group` */
        CHECK_MSG(chown(group, 0, 12345) == 0, "chown: %s", strerror(errno));
    } else {
        printf("   not root: the 'owned by another user' warning is not exercised\n");
    }
    /* a group-writable folder of this user's private group (gid = uid: umask 002 under
     * user private groups) is not warned about; one of a shared group is */
    struct stat gs, ms;
    REQUIRE(stat(group, &gs) == 0 && stat(mine, &ms) == 0);
    int group_warned = !(gs.st_gid == getegid() && gs.st_gid == geteuid());
    int mine_warned = !(ms.st_gid == getegid() && ms.st_gid == geteuid());
    if (geteuid() == 0) CHECK(group_warned && !mine_warned);

    REQUIRE_OK(log_capture_start(HIPDNN_LOG_WARN));
    const char* paths[5] = {world, group, world, tidy, mine};
    REQUIRE_OK(hipdnnSetEnginePluginPaths_ext(5, paths, HIPDNN_PLUGIN_LOADING_ABSOLUTE));
    hipdnnHandle_t h = NULL;
    REQUIRE_OK(hipdnnCreate(&h));
    int before = check_failed;
    CHECK_EQ_INT(ls_engines_named("no_reason", NULL), 1);
    CHECK_EQ_INT(ls_engines_named("declines_all", NULL), 1);
    CHECK_EQ_INT(warn_lines(world, "plugin folder"), 1);
    CHECK_EQ_INT(warn_lines(world, "world-writable (mode 0777)"), 1);
    CHECK_EQ_INT(warn_lines(f1, "plugin file"), 1);
    CHECK_EQ_INT(warn_lines(f1, "world-writable (mode 0666)"), 1);
    CHECK_EQ_INT(warn_lines(group, "writable by group"), group_warned);
    CHECK_EQ_INT(warn_lines(f2, "writable by group"), 0);
    if (chowned) CHECK_EQ_INT(warn_lines(f2, "owned by uid 12345"), 1);
    CHECK_EQ_INT(warn_lines(tidy, "writable"), 0);
    CHECK_EQ_INT(warn_lines(mine, "writable by group"), mine_warned);
    CHECK_EQ_INT(log_capture_matches(tidy, "writable", NULL), 0);
    CHECK_EQ_INT(log_capture_matches("trusted code", NULL, NULL),
                 2 + group_warned + mine_warned + chowned);
    if (check_failed != before) log_capture_dump("writable");
    CHECK_OK(hipdnnDestroy(h));
    log_capture_stop();
}

int main(void) {
    char cwd[2048];
    if (!CHECK(getcwd(cwd, sizeof(cwd)) != NULL)) return check_finish();
    snprintf(g_root, sizeof(g_root), "%s/hostile_plugins_XXXXXX", cwd);
    if (!CHECK_MSG(mkdtemp(g_root) != NULL, "mkdtemp: %s", strerror(errno))) return check_finish();
    /* others must reach the folders inside (the unreadable case runs as nobody) */
    CHECK(chmod(g_root, 0755) == 0);
    check_run_in_child("each_hostile_file_is_skipped_with_its_reason",
                       test_each_hostile_file_is_skipped_with_its_reason);
    check_run_in_child("unreadable_file_is_skipped", test_unreadable_file_is_skipped);
    check_run_in_child("a_folder_of_600_files_is_read_whole", test_a_folder_of_600_files_is_read_whole);
    check_run_in_child("writable_folders_and_files_are_warned_about_once",
                       test_writable_folders_and_files_are_warned_about_once);
    nftw(g_root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    return check_finish();
}
