/* What the run-time compiler is, remembered on disk.
 *
 * A warm process finds every kernel in the disk cache (kernel_cache.c), but the cache's
 * key holds the compiler's version and the architectures it knows, and learning those
 * meant loading it: NVRTC is a 100 MB library, ~8 ms to map from the page cache and
 * ~200 ms cold, most of a warm-cache build.  So the process that loads it writes what it
 * learned beside the kernels (jit.hip), with what that depended on: the variables that
 * steer the library search, the loader's cache and the library file itself (device,
 * inode, size, modification time).  A later process trusts the file only while all of
 * them are unchanged, and loads the compiler only to compile.  A file that does not parse
 * or describes another state, or whose last line (a hash of the rest) does not match, is
 * not trusted; the next load rewrites it.  Trusting a stale
 * file could at worst key kernels by a compiler no longer installed: the code is still
 * the device's, made from the same source. */
#include "rtc_facts.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hipdnn/hipdnn_sdk.h"

#define FACTS_MAGIC "HIPDNN-RTC-FACTS 1"

static uint64_t fnv64_str(uint64_t h, const char* s) {
    for (const unsigned char* p = (const unsigned char*)(s ? s : ""); *p; ++p)
        h = (h ^ *p) * UINT64_C(0x100000001b3);
    return (h ^ (s ? 0xffu : 0xfeu)) * UINT64_C(0x100000001b3); /* unset differs from "" */
}

static uint64_t fnv64_mem(const char* p, size_t n) {
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < n; ++i) h = (h ^ (unsigned char)p[i]) * UINT64_C(0x100000001b3);
    return h;
}

static long long mtime_ns(const struct stat* st) {
    return (long long)st->st_mtim.tv_sec * 1000000000LL + (long long)st->st_mtim.tv_nsec;
}

/* What the facts about `library` depend on, as one line; false when it cannot be stat'ed. */
static bool state_of(const char* library, char* out, size_t len) {
    struct stat lib, ld;
    if (stat(library, &lib) != 0) return false;
    const char* const vars[] = {"LD_LIBRARY_PATH", "CUDA_HOME", "ROCM_PATH", "HIP_PATH"};
    uint64_t env = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); ++i) env = fnv64_str(env, getenv(vars[i]));
    if (stat("/etc/ld.so.cache", &ld) != 0) memset(&ld, 0, sizeof(ld));
    return snprintf(out, len, "env %016llx ldcache %llu %lld %lld lib %llu %llu %lld %lld",
                    (unsigned long long)env, (unsigned long long)ld.st_ino, (long long)ld.st_size,
                    mtime_ns(&ld), (unsigned long long)lib.st_dev, (unsigned long long)lib.st_ino,
                    (long long)lib.st_size, mtime_ns(&lib)) < (int)len;
}

/* The value of line "name value" at *at (moved past it), or false. */
static bool take_line(char** at, const char* name, char** value) {
    const size_t n = strlen(name);
    char* line = *at;
    char* end = strchr(line, '\n');
    if (!end || strncmp(line, name, n) != 0 || (line[n] != ' ' && line + n != end)) return false;
    *value = line + n + (line + n != end); /* "archs" alone: none known */
    *end = '\0';
    *at = end + 1;
    return true;
}

bool hipe_rtc_facts_read(const char* path, hipe_rtc_facts* f) {
    memset(f, 0, sizeof(*f));
    char text[4096];
    FILE* in = fopen(path, "rb");
    if (!in) return false;
    const size_t n = fread(text, 1, sizeof(text) - 1, in);
    const bool whole = feof(in) && !ferror(in);
    fclose(in);
    if (!whole) return false;
    text[n] = '\0';
    /* the last line, "check <hash of everything before it>", guards the rest */
    if (n < 2 || text[n - 1] != '\n') return false;
    text[n - 1] = '\0';
    char* last = strrchr(text, '\n');
    if (!last) return false;
    char want[40];
    snprintf(want, sizeof(want), "check %016llx",
             (unsigned long long)fnv64_mem(text, (size_t)(last + 1 - text)));
    if (strcmp(last + 1, want) != 0) return false;
    last[1] = '\0';
    char* nl = strchr(text, '\n');
    if (!nl) return false;
    *nl = '\0';
    char *at = nl + 1, *library, *compiler, *ptx, *archs, *state;
    if (strcmp(text, FACTS_MAGIC) != 0 || !take_line(&at, "library", &library) ||
        !take_line(&at, "compiler", &compiler) || !take_line(&at, "ptx", &ptx) ||
        !take_line(&at, "archs", &archs) || !take_line(&at, "state", &state) || *at != '\0')
        return false;
    if (strlen(library) >= sizeof(f->library) || !*compiler ||
        strlen(compiler) >= sizeof(f->compiler) || (strcmp(ptx, "0") != 0 && strcmp(ptx, "1") != 0))
        return false;
    char now[256];
    if (!state_of(library, now, sizeof(now)) || strcmp(now, state) != 0) return false;
    char* p = archs;
    for (;;) {
        while (*p == ' ') ++p;
        if (!*p) break;
        char* end;
        const long a = strtol(p, &end, 10);
        if (end == p || a <= 0 || a > 10000 || f->narchs == HIPE_RTC_MAX_ARCHS) return false;
        f->archs[f->narchs++] = (int)a;
        p = end;
    }
    snprintf(f->library, sizeof(f->library), "%s", library);
    snprintf(f->compiler, sizeof(f->compiler), "%s", compiler);
    f->ptx = ptx[0] == '1';
    return true;
}

bool hipe_rtc_facts_write(const char* path, const hipe_rtc_facts* f, char* why, size_t len) {
    char state[256], dir[4096];
    if (strchr(f->library, '\n') || strchr(f->compiler, '\n') ||
        !state_of(f->library, state, sizeof(state))) {
        snprintf(why, len, "cannot describe the compiler library %s", f->library);
        return false;
    }
    const char* slash = strrchr(path, '/');
    if (slash && slash != path) {
        snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
        if (!hipdnnSdkMakeDirs(dir, why, len)) return false;
    }
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
    char text[4096];
    int n = snprintf(text, sizeof(text), FACTS_MAGIC "\nlibrary %s\ncompiler %s\nptx %d\narchs",
                     f->library, f->compiler, f->ptx ? 1 : 0);
    for (int i = 0; i < f->narchs && i < HIPE_RTC_MAX_ARCHS && n > 0 && n < (int)sizeof(text); ++i)
        n += snprintf(text + n, sizeof(text) - (size_t)n, " %d", f->archs[i]);
    if (n > 0 && n < (int)sizeof(text))
        n += snprintf(text + n, sizeof(text) - (size_t)n, "\nstate %s\n", state);
    if (n <= 0 || n + 24 >= (int)sizeof(text)) {
        snprintf(why, len, "the facts of %s do not fit", f->library);
        return false;
    }
    snprintf(text + n, sizeof(text) - (size_t)n, "check %016llx\n",
             (unsigned long long)fnv64_mem(text, (size_t)n));
    FILE* out = fopen(tmp, "wb");
    if (!out) {
        snprintf(why, len, "cannot write %s", tmp);
        return false;
    }
    fputs(text, out);
    const bool ok = fflush(out) == 0 && !ferror(out);
    if (fclose(out) != 0 || !ok || rename(tmp, path) != 0) {
        unlink(tmp);
        snprintf(why, len, "cannot write %s", path);
        return false;
    }
    return true;
}
