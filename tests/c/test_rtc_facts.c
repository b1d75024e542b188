/* test_rtc_facts.c — the hip engine's remembered compiler facts (plugins/hip/rtc_facts.c):
 * what a process trusts instead of loading NVRTC.  Facts written for a library file read
 * back whole; they are refused once anything they depended on changes (the file's size or
 * time, the search variables), and when the file is garbage, truncated, or names a
 * library that is gone. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "../../plugins/hip/rtc_facts.c"

static char g_dir[256], g_lib[300], g_facts[300];

static void write_text(const char* path, const char* text) {
    FILE* f = fopen(path, "wb");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static hipe_rtc_facts sample(void) {
    hipe_rtc_facts f;
    memset(&f, 0, sizeof(f));
    snprintf(f.compiler, sizeof(f.compiler), "NVRTC 13.0");
    snprintf(f.library, sizeof(f.library), "%s", g_lib);
    const int archs[] = {75, 80, 86, 89, 90, 100, 120};
    f.narchs = (int)(sizeof(archs) / sizeof(archs[0]));
    memcpy(f.archs, archs, sizeof(archs));
    f.ptx = true;
    return f;
}

static void fresh(void) {
    write_text(g_lib, "not really a compiler");
    char why[256] = "";
    const hipe_rtc_facts f = sample();
    CHECK_MSG(hipe_rtc_facts_write(g_facts, &f, why, sizeof(why)), "%s", why);
}

static void test_round_trip(void) {
    fresh();
    hipe_rtc_facts got;
    const hipe_rtc_facts want = sample();
    REQUIRE(hipe_rtc_facts_read(g_facts, &got));
    CHECK(strcmp(got.compiler, want.compiler) == 0);
    CHECK(strcmp(got.library, want.library) == 0);
    CHECK_EQ_INT(got.narchs, want.narchs);
    CHECK(memcmp(got.archs, want.archs, sizeof(int) * (size_t)want.narchs) == 0);
    CHECK(got.ptx);
    /* no architectures known (hiprtc) reads back as none */
    hipe_rtc_facts none = want;
    none.narchs = 0;
    none.ptx = false;
    char why[256] = "";
    REQUIRE(hipe_rtc_facts_write(g_facts, &none, why, sizeof(why)));
    CHECK(hipe_rtc_facts_read(g_facts, &got) && got.narchs == 0 && !got.ptx);
}

static void test_library_changed(void) {
    fresh();
    hipe_rtc_facts got;
    write_text(g_lib, "a longer, newer compiler than before");
    CHECK(!hipe_rtc_facts_read(g_facts, &got));
    fresh();
    struct timespec times[2] = {{0, UTIME_OMIT}, {12345, 678}}; /* the time only */
    CHECK(utimensat(AT_FDCWD, g_lib, times, 0) == 0);
    CHECK(!hipe_rtc_facts_read(g_facts, &got));
    fresh();
    CHECK(unlink(g_lib) == 0);
    CHECK(!hipe_rtc_facts_read(g_facts, &got));
}

static void test_search_changed(void) {
    fresh();
    hipe_rtc_facts got;
    const char* old = getenv("LD_LIBRARY_PATH");
    char* saved = old ? strdup(old) : NULL;
    setenv("LD_LIBRARY_PATH", "/somewhere/else", 1);
    CHECK(!hipe_rtc_facts_read(g_facts, &got));
    if (saved) setenv("LD_LIBRARY_PATH", saved, 1);
    else unsetenv("LD_LIBRARY_PATH");
    free(saved);
    CHECK(hipe_rtc_facts_read(g_facts, &got));
    setenv("CUDA_HOME", "", 1); /* set but empty differs from unset */
    CHECK(!hipe_rtc_facts_read(g_facts, &got));
    unsetenv("CUDA_HOME");
}

static void test_bad_files(void) {
    fresh();
    hipe_rtc_facts got;
    FILE* f = fopen(g_facts, "rb");
    char text[4096];
    const size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
    if (f) fclose(f);
    text[n] = '\0';
    REQUIRE(n > 40);
    for (size_t cut = 0; cut < n; cut += 7) { /* every truncation */
        char part[4096];
        memcpy(part, text, cut);
        part[cut] = '\0';
        write_text(g_facts, part);
        CHECK_MSG(!hipe_rtc_facts_read(g_facts, &got), "truncated at %zu", cut);
    }
    char flipped[4096];
    memcpy(flipped, text, n + 1);
    flipped[n / 2] ^= 0x20; /* one bit */
    write_text(g_facts, flipped);
    CHECK(!hipe_rtc_facts_read(g_facts, &got));
    write_text(g_facts, "HIPDNN-RTC-FACTS 1\nlibrary /x\ncompiler NVRTC\nptx 2\narchs\nstate s\n");
    CHECK(!hipe_rtc_facts_read(g_facts, &got));
    char extra[4200];
    snprintf(extra, sizeof(extra), "%sand more\n", text);
    write_text(g_facts, extra);
    CHECK(!hipe_rtc_facts_read(g_facts, &got));
    CHECK(!hipe_rtc_facts_read("/nonexistent/compiler.facts", &got));
    char why[256] = "";
    hipe_rtc_facts gone = sample();
    snprintf(gone.library, sizeof(gone.library), "%s/missing.so", g_dir);
    CHECK(!hipe_rtc_facts_write(g_facts, &gone, why, sizeof(why)));
    CHECK_STR_CONTAINS(why, "missing.so");
}

int main(void) {
    snprintf(g_dir, sizeof(g_dir), "/tmp/hipdnn-rtc-facts-%ld", (long)getpid());
    snprintf(g_lib, sizeof(g_lib), "%s/libnvrtc.so.13", g_dir);
    snprintf(g_facts, sizeof(g_facts), "%s/kernels/compiler.facts", g_dir); /* made by write */
    mkdir(g_dir, 0700);
    unsetenv("CUDA_HOME");
    RUN_TEST(test_round_trip);
    RUN_TEST(test_library_changed);
    RUN_TEST(test_search_changed);
    RUN_TEST(test_bad_files);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", g_dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
    return check_finish();
}
