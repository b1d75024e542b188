/* Row-wise, pooling, matmul and attention kernels compiled at run time, and their caches
 * (and the images of the pointwise plans' own kernels, jit.hip: hipe_kernel_image).
 *
 * A kernel (kernel_names.c) is compiled alone, one template instantiation per compile, by
 * the vendor's run-time compiler (jit.hip: NVRTC, hiprtc) from its family's source
 * (jit_source.c) and the embedded kernel headers.  Compiled once, it is kept:
 *   - for the process, keyed by (where it loads, family, name): plans of the same shape
 *     find it at once;
 *   - on disk, keyed by a 128-bit hash of everything that makes the image (the source with
 *     every header's text, the name, the architecture, the compiler's version and the
 *     options), one file per kernel: later processes load it instead of compiling (a
 *     second or so a kernel).  Folder: $HIPDNN_KERNEL_CACHE_DIR ("off": no disk cache),
 *     else none with HIPDNN_CACHE=0, else $HIPDNN_CACHE_DIR/kernels, else
 *     $XDG_CACHE_HOME/hipdnn/kernels, else $HOME/.cache/hipdnn/kernels.  Files are
 *     written to a temporary name and renamed, so a reader never sees half a file; one
 *     that does not read back whole and as keyed (a hash of the image guards it) is
 *     ignored, compiled again and replaced.  A folder that cannot be written costs the
 *     disk cache only, said once in the log.
 * The log (info) says which of compiled (with the time), loaded from disk or found in the
 * process gave each plan's kernel. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hip_engine.h"

#define CACHE_MAGIC "HIPDNN-KERNEL 1\n"
#define CACHE_MAX_IMAGE (64u << 20) /* larger files are not ours */

/* ---- hashing: FNV-1a, 128 bits (the prime 2^88 + 2^8 + 0x3b), and 64 for the image ------ */

typedef unsigned __int128 u128;

static u128 fnv128_init(void) {
    return ((u128)UINT64_C(0x6c62272e07bb0142) << 64) | UINT64_C(0x62b821756295c58d);
}

static u128 fnv128(u128 h, const void* data, size_t n) {
    const u128 prime = ((u128)1 << 88) | ((u128)1 << 8) | 0x3b;
    const unsigned char* p = data;
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * prime;
    return h;
}

/* A string and its terminator, so that ("ab", "c") and ("a", "bc") differ. */
static u128 fnv128_str(u128 h, const char* s) { return fnv128(h, s, strlen(s) + 1); }

static uint64_t fnv64(const void* data, size_t n) {
    const unsigned char* p = data;
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * UINT64_C(0x100000001b3);
    return h;
}

/* The embedded headers' hash, taken once a process: they are the same for every kernel,
 * and hashing their ~300 KB a byte at a time cost more than the rest of a warm build. */
static u128 g_headers_hash;
static pthread_once_t g_headers_once = PTHREAD_ONCE_INIT;

static void hash_headers(void) {
    u128 h = fnv128_str(fnv128_init(), "hipdnn kernel cache 2");
    const char* const* texts;
    const char* const* names;
    int n;
    hipe_jit_headers(&texts, &names, &n);
    for (int i = 0; i < n; ++i) h = fnv128_str(fnv128_str(h, names[i]), texts[i]);
    g_headers_hash = h;
}

/* The disk key of a kernel, as 32 hex digits. */
static void disk_key(const hipe_rtc_target* t, const char* source, const char* name, char* key) {
    pthread_once(&g_headers_once, hash_headers);
    u128 h = fnv128_str(g_headers_hash, t->arch);
    h = fnv128_str(h, t->compiler);
    h = fnv128_str(h, t->options);
    h = fnv128_str(h, name);
    h = fnv128_str(h, source);
    snprintf(key, 33, "%016llx%016llx", (unsigned long long)(uint64_t)(h >> 64),
             (unsigned long long)(uint64_t)h);
}

/* ---- the folder --------------------------------------------------------------------------- */

bool hipe_kernel_cache_dir(char* dir, size_t len, char* why, size_t why_len) {
    const char* env = getenv("HIPDNN_KERNEL_CACHE_DIR");
    if (env && strcmp(env, "off") == 0) {
        snprintf(why, why_len, "HIPDNN_KERNEL_CACHE_DIR=off");
        return false;
    }
    if (env && *env) return snprintf(dir, len, "%s", env) < (int)len;
#ifdef HIPE_HOST_EMULATION
    /* The test plugin writes nothing under $HOME unless a test asks for the default. */
    const char* want = getenv("HIPDNN_EMULATED_KERNEL_CACHE");
    const char* all = getenv("HIPDNN_CACHE");
    if ((!all || strcmp(all, "0") != 0) && (!want || strcmp(want, "1") != 0)) {
        snprintf(why, why_len, "the emulation keeps no disk cache without HIPDNN_KERNEL_CACHE_DIR");
        return false;
    }
#endif
    /* hipdnn's cache, the backend's plan cache beside it (docs/engine_selection.md) */
    return hipdnnSdkCacheDir("kernels", dir, len, why, why_len);
}

/* ---- files ----------------------------------------------------------------------------- */

/* <template>-<key>.kernel: the template tells a person what the file is. */
static bool file_path(const char* dir, const char* name, const char* key, char* path, size_t len) {
    const size_t stem = strcspn(name, "<");
    return snprintf(path, len, "%s/%.*s-%s.kernel", dir, (int)stem, name, key) < (int)len;
}

/* One "field value\n" line of a file's head: the value, or NULL. */
static const char* field(const char** at, const char* end, const char* name, char* value, size_t len) {
    const size_t n = strlen(name);
    const char* s = *at;
    const char* nl = memchr(s, '\n', (size_t)(end - s));
    if (!nl || (size_t)(nl - s) < n + 1 || memcmp(s, name, n) != 0 || s[n] != ' ') return NULL;
    const size_t v = (size_t)(nl - s) - n - 1;
    if (v >= len) return NULL;
    memcpy(value, s + n + 1, v);
    value[v] = '\0';
    *at = nl + 1;
    return value;
}

/* A cached image read back: NULL with `why` when there is no file (why empty) or it is not
 * whole and ours (why says what). */
static void* read_cached(const char* path, const char* key, const char* name, size_t* size,
                         char** lowered, char* why, size_t len) {
    why[0] = '\0';
    FILE* f = fopen(path, "rb");
    if (!f) {
        if (errno != ENOENT) snprintf(why, len, "cannot open it: %s", strerror(errno));
        return NULL;
    }
    char* data = NULL;
    void* image = NULL;
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || st.st_size <= 0 || (uint64_t)st.st_size > CACHE_MAX_IMAGE + 4096) {
        snprintf(why, len, "unexpected size");
        goto done;
    }
    const size_t n = (size_t)st.st_size;
    data = malloc(n);
    if (!data || fread(data, 1, n, f) != n) {
        snprintf(why, len, data ? "short read" : "out of memory");
        goto done;
    }
    const char* at = data;
    const char* end = data + n;
    char v_key[40], v_name[HIPE_KERNEL_NAME_LEN], v_low[512], v_size[24], v_check[24];
    if (n < sizeof(CACHE_MAGIC) - 1 || memcmp(data, CACHE_MAGIC, sizeof(CACHE_MAGIC) - 1) != 0) {
        snprintf(why, len, "not a kernel cache file");
        goto done;
    }
    at += sizeof(CACHE_MAGIC) - 1;
    if (!field(&at, end, "key", v_key, sizeof(v_key)) ||
        !field(&at, end, "name", v_name, sizeof(v_name)) ||
        !field(&at, end, "lowered", v_low, sizeof(v_low)) ||
        !field(&at, end, "size", v_size, sizeof(v_size)) ||
        !field(&at, end, "check", v_check, sizeof(v_check)) || at >= end || *at++ != '\n') {
        snprintf(why, len, "its head is damaged");
        goto done;
    }
    if (strcmp(v_key, key) != 0 || strcmp(v_name, name) != 0) {
        snprintf(why, len, "it holds another kernel (%s)", v_name);
        goto done;
    }
    char* e = NULL;
    const unsigned long long bytes = strtoull(v_size, &e, 10);
    if (*e || bytes == 0 || bytes != (unsigned long long)(end - at)) {
        snprintf(why, len, "its image is %llu bytes, the file holds %llu", bytes,
                 (unsigned long long)(end - at));
        goto done;
    }
    char check[24];
    snprintf(check, sizeof(check), "%016llx", (unsigned long long)fnv64(at, (size_t)bytes));
    if (strcmp(check, v_check) != 0) {
        snprintf(why, len, "its image does not match its hash");
        goto done;
    }
    image = malloc((size_t)bytes);
    *lowered = strdup(v_low);
    if (!image || !*lowered) {
        free(image);
        free(*lowered);
        image = NULL;
        *lowered = NULL;
        snprintf(why, len, "out of memory");
        goto done;
    }
    memcpy(image, at, (size_t)bytes);
    *size = (size_t)bytes;
done:
    free(data);
    fclose(f);
    return image;
}

/* Writes the file under a temporary name, then renames it: readers see all of it or none. */
static bool write_cached(const char* dir, const char* path, const char* key, const char* name,
                         const void* image, size_t size, const char* lowered, char* why, size_t len) {
    if (!hipdnnSdkMakeDirs(dir, why, len)) return false;
    static atomic_uint counter;
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s/.%s.%ld.%u.tmp", dir, key, (long)getpid(),
             atomic_fetch_add(&counter, 1));
    const int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    FILE* f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f) {
        hipdnnSdkFormat(why, len, "cannot create %s: %s", tmp, strerror(errno));
        if (fd >= 0) close(fd);
        return false;
    }
    bool ok = fprintf(f, "%skey %s\nname %s\nlowered %s\nsize %zu\ncheck %016llx\n\n", CACHE_MAGIC,
                      key, name, lowered, size, (unsigned long long)fnv64(image, size)) > 0 &&
              fwrite(image, 1, size, f) == size;
    ok = fclose(f) == 0 && ok;
    if (!ok) hipdnnSdkFormat(why, len, "writing %s: %s", tmp, strerror(errno));
    if (ok && rename(tmp, path) != 0) {
        hipdnnSdkFormat(why, len, "rename to %s: %s", path, strerror(errno));
        ok = false;
    }
    if (!ok) unlink(tmp);
    return ok;
}

/* ---- the process's cache ------------------------------------------------------------------ */

typedef struct entry {
    char* key; /* scope, family, name */
    void* kernel;
    struct entry* next;
} entry;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static entry* g_entries;

static void* find(const char* key) {
    void* k = NULL;
    pthread_mutex_lock(&g_lock);
    for (entry* e = g_entries; e && !k; e = e->next)
        if (strcmp(e->key, key) == 0) k = e->kernel;
    pthread_mutex_unlock(&g_lock);
    return k;
}

/* Kept for the process (two threads compiling the same kernel keep the first: the other's
 * module stays loaded, unused). */
static void* remember(const char* key, void* kernel) {
    entry* e = malloc(sizeof(*e));
    char* k = strdup(key);
    pthread_mutex_lock(&g_lock);
    for (entry* o = g_entries; o; o = o->next)
        if (strcmp(o->key, key) == 0) kernel = o->kernel;
    if (e && k) {
        e->key = k;
        e->kernel = kernel;
        e->next = g_entries;
        g_entries = e;
        e = NULL;
        k = NULL;
    }
    pthread_mutex_unlock(&g_lock);
    free(e);
    free(k);
    return kernel;
}

/* ---- getting a kernel ---------------------------------------------------------------------- */

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* One warning a process for a folder the disk cache cannot use. */
static void warn_unwritable(const char* dir, const char* why) {
    static atomic_int said;
    if (atomic_exchange(&said, 1)) return;
    hipe_log(HIPDNN_LOG_WARN, HIPE_ENGINE_NAME ": kernel cache: cannot write %s (%s); kernels are "
             "compiled again in each process (HIPDNN_KERNEL_CACHE_DIR names another folder, or "
             "'off')", dir, why);
}

/* The kernel `name` of `source` for target t: from the process's cache (key pkey), else
 * the disk cache, else compiled now (and saved). */
static bool get_kernel(const hipe_rtc_target* tp, const char* source, const char* name,
                       const char* pkey, int device, void** kernel, char* why, size_t len) {
    const hipe_rtc_target t = *tp;
    char err[HIPE_MSG_LEN];
    if ((*kernel = find(pkey)) != NULL) {
        hipe_log(HIPDNN_LOG_INFO, HIPE_ENGINE_NAME ": kernel %s (%s): from the process's cache",
                 name, t.arch);
        return true;
    }
    char dir[4096], path[4400], key[40], no_dir[HIPE_MSG_LEN];
    const bool disk = hipe_kernel_cache_dir(dir, sizeof(dir), no_dir, sizeof(no_dir));
    disk_key(&t, source, name, key);
    const bool named = disk && file_path(dir, name, key, path, sizeof(path));
    void* image = NULL;
    size_t size = 0;
    char* lowered = NULL;
    if (named) {
        image = read_cached(path, key, name, &size, &lowered, err, sizeof(err));
        if (!image && err[0])
            hipe_log(HIPDNN_LOG_INFO, HIPE_ENGINE_NAME ": kernel cache: ignoring %s (%s); "
                     "compiling again", path, err);
    }
    bool compiled = image == NULL;
    double ms = 0;
    char saved[HIPE_MSG_LEN + 64] = "";
    if (compiled) {
        const double t0 = now_ms();
        if (!hipe_rtc_compile(&t, source, name, &image, &size, &lowered, err, sizeof(err))) {
            snprintf(why, len, "kernel %s (%s): %s", name, t.arch, err);
            return false;
        }
        ms = now_ms() - t0;
        char werr[HIPE_MSG_LEN];
        if (!disk) {
            snprintf(saved, sizeof(saved), "no disk cache: %s", no_dir);
        } else if (!named) {
            snprintf(saved, sizeof(saved), "no disk cache: the folder's path is too long");
        } else if (write_cached(dir, path, key, name, image, size, lowered, werr, sizeof(werr))) {
            hipdnnSdkFormat(saved, sizeof(saved), "saved as %s", path);
        } else {
            snprintf(saved, sizeof(saved), "not saved: %s", werr);
            warn_unwritable(dir, werr);
        }
    }
    bool ok = hipe_rtc_load(&t, device, image, size, lowered, kernel, err, sizeof(err));
    free(image);
    free(lowered);
    if (!ok && !compiled) { /* a file the runtime will not load (a driver update?): again */
        hipe_log(HIPDNN_LOG_INFO, HIPE_ENGINE_NAME ": kernel cache: ignoring %s (%s); compiling "
                 "again", path, err);
        ms = now_ms();
        ok = hipe_rtc_compile(&t, source, name, &image, &size, &lowered, err, sizeof(err)) &&
             hipe_rtc_load(&t, device, image, size, lowered, kernel, err, sizeof(err));
        ms = now_ms() - ms;
        if (ok) {
            char werr[HIPE_MSG_LEN];
            if (write_cached(dir, path, key, name, image, size, lowered, werr, sizeof(werr)))
                hipdnnSdkFormat(saved, sizeof(saved), "saved as %s", path);
            else
                snprintf(saved, sizeof(saved), "not saved: %s", werr);
        }
        free(image);
        free(lowered);
        compiled = true;
    }
    if (!ok) {
        snprintf(why, len, "kernel %s (%s): %s", name, t.arch, err);
        *kernel = NULL;
        return false;
    }
    *kernel = remember(pkey, *kernel);
    if (compiled)
        hipe_log(HIPDNN_LOG_INFO, HIPE_ENGINE_NAME ": kernel %s (%s): compiled in %.0f ms by %s (%s)",
                 name, t.arch, ms, t.compiler, saved);
    else
        hipe_log(HIPDNN_LOG_INFO, HIPE_ENGINE_NAME ": kernel %s (%s): loaded from the disk cache "
                 "(%s)", name, t.arch, path);
    return true;
}

/* The run-time compiler's target for `device`; false with why naming kernel `name`. */
static bool target_for(const char* name, int device, hipe_rtc_target* t, char* why, size_t len) {
    char err[HIPE_MSG_LEN];
    if (!hipe_rtc_available(err, sizeof(err))) {
        snprintf(why, len, "kernel %s: kernels are compiled at run time and %s", name, err);
        return false;
    }
    if (!hipe_rtc_target_of(device, t, err, sizeof(err))) {
        snprintf(why, len, "kernel %s: %s", name, err);
        return false;
    }
    return true;
}

bool hipe_kernel_get(hipe_kernel_id k, int device, void** kernel, char* why, size_t len) {
    *kernel = NULL;
    char name[HIPE_KERNEL_NAME_LEN];
    const int family = hipe_kernel_family(k);
    if (family < 0 || !hipe_kernel_name(k, name, sizeof(name))) {
        snprintf(why, len, "internal: no kernel (id 0x%016llx)", (unsigned long long)k);
        return false;
    }
    hipe_rtc_target t;
    if (!target_for(name, device, &t, why, len)) return false;
    const char* source = hipe_family_source(family, t.dialect);
    if (!source) {
        snprintf(why, len, "kernel %s: internal: no source for dialect %d", name, t.dialect);
        return false;
    }
    char pkey[HIPE_KERNEL_NAME_LEN + 64];
    snprintf(pkey, sizeof(pkey), "%s/%d/%s", t.scope, family, name);
    return get_kernel(&t, source, name, pkey, device, kernel, why, len);
}

bool hipe_kernel_get_source(const char* source, const char* name, int device, void** kernel,
                            char* why, size_t len) {
    *kernel = NULL;
    hipe_rtc_target t;
    if (!target_for(name, device, &t, why, len)) return false;
    char key[40], pkey[sizeof(t.scope) + 40];
    disk_key(&t, source, name, key); /* the source differs, the name may not */
    snprintf(pkey, sizeof(pkey), "%s/%s", t.scope, key);
    return get_kernel(&t, source, name, pkey, device, kernel, why, len);
}

bool hipe_kernel_image(const hipe_rtc_target* t, const char* source, const char* label,
                       bool recompile, void** image, size_t* size, char* why, size_t len) {
    *image = NULL;
    char dir[4096], path[4400], key[40], no_dir[HIPE_MSG_LEN], err[HIPE_MSG_LEN];
    const bool disk = hipe_kernel_cache_dir(dir, sizeof(dir), no_dir, sizeof(no_dir));
    disk_key(t, source, label, key);
    const bool named = disk && file_path(dir, label, key, path, sizeof(path));
    char* lowered = NULL; /* "-": the kernels go by their own names */
    if (named && !recompile) {
        *image = read_cached(path, key, label, size, &lowered, err, sizeof(err));
        free(lowered);
        if (*image) {
            hipe_log(HIPDNN_LOG_INFO, HIPE_ENGINE_NAME ": kernel %s (%s): loaded from the disk "
                     "cache (%s)", label, t->arch, path);
            return true;
        }
        if (err[0])
            hipe_log(HIPDNN_LOG_INFO, HIPE_ENGINE_NAME ": kernel cache: ignoring %s (%s); "
                     "compiling again", path, err);
    }
    const double t0 = now_ms();
    if (!hipe_rtc_compile(t, source, NULL, image, size, &lowered, err, sizeof(err))) {
        snprintf(why, len, "kernel %s (%s): %s", label, t->arch, err);
        return false;
    }
    free(lowered);
    const double ms = now_ms() - t0;
    char saved[HIPE_MSG_LEN + 64];
    if (!disk)
        snprintf(saved, sizeof(saved), "no disk cache: %s", no_dir);
    else if (!named)
        snprintf(saved, sizeof(saved), "no disk cache: the folder's path is too long");
    else if (write_cached(dir, path, key, label, *image, *size, "-", err, sizeof(err)))
        hipdnnSdkFormat(saved, sizeof(saved), "saved as %s", path);
    else {
        snprintf(saved, sizeof(saved), "not saved: %s", err);
        warn_unwritable(dir, err);
    }
    hipe_log(HIPDNN_LOG_INFO, HIPE_ENGINE_NAME ": kernel %s (%s): compiled in %.0f ms by %s (%s)",
             label, t->arch, ms, t->compiler, saved);
    return true;
}
