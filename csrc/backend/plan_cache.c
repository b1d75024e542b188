/* Plan cache entries: one small text file per (graph, device), named by a 128-bit FNV-1a
 * hash of the graph's canonical bytes (the FlatBuffers encoding every finalized graph
 * carries) and the device's identity.  The file says, one "field value" line each, what it
 * was made for (hipdnn's version, the device, every loaded plugin's name and version, the
 * graph's size and 64-bit hash) and what won (engine, knobs, time), and ends with a check
 * line, a hash of all the lines above it: a bit flip or a cut shows.  Whatever does not
 * match is ignored with one log line, never trusted; a damaged file is removed, and the
 * next autotune of the graph writes it again. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device.h"
#include "error.h"
#include "handle.h"
#include "log.h"
#include "plan_cache.h"

#define ENTRY_MAGIC "HIPDNN-PLAN 1\n"
#define ENTRY_MAX 16384 /* larger files are not ours */

typedef unsigned __int128 u128;

static u128 fnv128(u128 h, const void* data, size_t n) {
    const u128 prime = ((u128)1 << 88) | ((u128)1 << 8) | 0x3b;
    const unsigned char* p = data;
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * prime;
    return h;
}

static uint64_t fnv64(const void* data, size_t n) {
    const unsigned char* p = data;
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * UINT64_C(0x100000001b3);
    return h;
}

/* What an entry must have been made for: every line but the result's. */
typedef struct {
    char version[32];
    char device[320];
    char plugins[1024];
    char graph[64]; /* "<bytes> <fnv64 hex>" */
} entry_key;

static void make_key(const hipdnnGraphState* gs, entry_key* k) {
    snprintf(k->version, sizeof(k->version), "%d.%d.%d", HIPDNN_VERSION_MAJOR,
             HIPDNN_VERSION_MINOR, HIPDNN_VERSION_PATCH);
    /* A process without device engines never loads a GPU runtime for this. */
    if (hipdnnRegistryHasDeviceEngine())
        hipdnnDeviceIdentity(gs->handle ? gs->handle->device : 0, k->device, sizeof(k->device));
    else
        snprintf(k->device, sizeof(k->device), "host");
    for (char* c = k->device; *c; ++c)
        if (*c == '\n' || *c == '\r') *c = ' ';
    size_t off = 0;
    k->plugins[0] = '\0';
    for (int32_t i = 0; i < hipdnnRegistryPluginCount(); ++i) {
        const hipdnnPlugin* p = hipdnnRegistryPlugin(i);
        int w = snprintf(k->plugins + off, sizeof(k->plugins) - off, "%s%s %s", i ? ";" : "",
                         p->name, p->version ? p->version : "?");
        if (w > 0 && off + (size_t)w < sizeof(k->plugins)) off += (size_t)w;
    }
    snprintf(k->graph, sizeof(k->graph), "%zu %016" PRIx64, gs->num_bytes,
             fnv64(gs->bytes, gs->num_bytes));
}

/* <folder>/<32 hex digits>.plan: the graph's bytes and the device, hashed. */
static bool entry_path(const char* dir, const hipdnnGraphState* gs, const entry_key* k,
                       char* path, size_t len) {
    u128 h = ((u128)UINT64_C(0x6c62272e07bb0142) << 64) | UINT64_C(0x62b821756295c58d);
    h = fnv128(h, "hipdnn plan cache 1", 20);
    h = fnv128(h, k->device, strlen(k->device) + 1);
    h = fnv128(h, gs->bytes, gs->num_bytes);
    return snprintf(path, len, "%s/%016" PRIx64 "%016" PRIx64 ".plan", dir, (uint64_t)(h >> 64),
                    (uint64_t)h) < (int)len;
}

/* ---- the text ------------------------------------------------------------------------- */

/* The entry's text, check line included; its length, or 0 if it does not fit. */
static size_t format_entry(const entry_key* k, const hipdnnPlanCacheEntry* e, char* buf,
                           size_t len) {
    char knobs[512] = "";
    size_t kn = 0;
    for (int32_t i = 0; i < e->num_knobs; ++i) {
        int w = snprintf(knobs + kn, sizeof(knobs) - kn, "%s%" PRId64 "=%" PRId64, i ? "," : "",
                         e->knobs[i][0], e->knobs[i][1]);
        if (w > 0 && kn + (size_t)w < sizeof(knobs)) kn += (size_t)w;
    }
    int n = snprintf(buf, len, ENTRY_MAGIC "hipdnn %s\ndevice %s\nplugins %s\ngraph %s\n"
                     "engine %s\nknobs %s\ntime_ms %.6g\n", k->version, k->device, k->plugins,
                     k->graph, e->engine, knobs, e->ms);
    if (n <= 0 || (size_t)n >= len) return 0;
    int c = snprintf(buf + n, len - (size_t)n, "check %016" PRIx64 "\n", fnv64(buf, (size_t)n));
    return c > 0 && (size_t)(n + c) < len ? (size_t)(n + c) : 0;
}

/* One "name value\n" line at *at: the value (NUL-terminated in place), or NULL. */
static char* take_line(char** at, const char* name) {
    char* nl = strchr(*at, '\n');
    const size_t n = strlen(name);
    if (!nl || strncmp(*at, name, n) != 0 || (*at)[n] != ' ') return NULL;
    *nl = '\0';
    char* v = *at + n + 1;
    *at = nl + 1;
    return v;
}

static bool parse_knobs(const char* s, hipdnnPlanCacheEntry* e) {
    e->num_knobs = 0;
    while (*s) {
        char* end = NULL;
        if (e->num_knobs == HIPDNN_ENGINE_MAX_KNOBS) return false;
        e->knobs[e->num_knobs][0] = strtoll(s, &end, 10);
        if (end == s || *end != '=') return false;
        s = end + 1;
        e->knobs[e->num_knobs][1] = strtoll(s, &end, 10);
        if (end == s || (*end && *end != ',')) return false;
        ++e->num_knobs;
        s = *end ? end + 1 : end;
    }
    return true;
}

/* Checks the text (NUL-terminated, n bytes) against the key: true with *e, or false with
 * `why` saying what does not match. */
static bool parse_entry(char* text, size_t n, const entry_key* k, hipdnnPlanCacheEntry* e,
                        char* why, size_t len) {
    char* check = n > 24 ? strstr(text, "\ncheck ") : NULL;
    if (strncmp(text, ENTRY_MAGIC, sizeof(ENTRY_MAGIC) - 1) != 0 || !check ||
        strtoull(check + 7, NULL, 16) != fnv64(text, (size_t)(check - text) + 1) ||
        text + n != check + 24) {
        snprintf(why, len, "damaged or cut short");
        return false;
    }
    check[1] = '\0';
    char* at = text + sizeof(ENTRY_MAGIC) - 1;
    const char *version = take_line(&at, "hipdnn"), *device = take_line(&at, "device");
    const char *plugins = take_line(&at, "plugins"), *graph = take_line(&at, "graph");
    const char *engine = take_line(&at, "engine"), *knobs = take_line(&at, "knobs");
    const char* ms = take_line(&at, "time_ms");
    if (!ms || !version || !device || !plugins || !graph || !engine || !knobs)
        snprintf(why, len, "damaged (a field is missing)");
    else if (strcmp(version, k->version) != 0)
        snprintf(why, len, "written by hipdnn %s, this is %s", version, k->version);
    else if (strcmp(device, k->device) != 0)
        snprintf(why, len, "tuned on device '%s', this is '%s'", device, k->device);
    else if (strcmp(plugins, k->plugins) != 0)
        snprintf(why, len, "tuned with plugins '%s', loaded are '%s'", plugins, k->plugins);
    else if (strcmp(graph, k->graph) != 0)
        snprintf(why, len, "made for another graph");
    else if (!parse_knobs(knobs, e) || strlen(engine) >= sizeof(e->engine))
        snprintf(why, len, "damaged (engine or knobs)");
    else {
        snprintf(e->engine, sizeof(e->engine), "%s", engine);
        e->ms = strtod(ms, NULL);
        return true;
    }
    return false;
}

/* ---- lookup and store ------------------------------------------------------------------ */

/* The file's bytes (NUL-terminated, at most ENTRY_MAX): malloc'd, or NULL (no file: why
 * stays empty). */
static char* read_file(const char* path, size_t* n, char* why, size_t len) {
    why[0] = '\0';
    FILE* f = fopen(path, "rb");
    if (!f) {
        if (errno != ENOENT) snprintf(why, len, "cannot open it: %s", strerror(errno));
        return NULL;
    }
    char* buf = malloc(ENTRY_MAX + 1);
    *n = buf ? fread(buf, 1, ENTRY_MAX + 1, f) : 0;
    fclose(f);
    if (!buf || *n > ENTRY_MAX) {
        snprintf(why, len, buf ? "larger than any entry" : "out of memory");
        free(buf);
        return NULL;
    }
    buf[*n] = '\0';
    return buf;
}

/* Removes a damaged file, under the lock and only if it still holds what was read (another
 * process may have renamed a good entry over it since). */
static void remove_damaged(const char* dir, const char* path, const char* seen, size_t n) {
    char why[256];
    int fd = hipdnnPlanCacheLock(dir, why, sizeof(why));
    if (fd < 0) return;
    size_t m = 0;
    char* now = read_file(path, &m, why, sizeof(why));
    if (now && m == n && memcmp(now, seen, n) == 0) unlink(path);
    free(now);
    hipdnnPlanCacheUnlock(fd);
}

bool hipdnnPlanCacheLookup(const hipdnnGraphState* gs, hipdnnPlanCacheEntry* out, char* path,
                           size_t path_len) {
    char dir[4096], why[2600];
    entry_key k;
    if (!gs->bytes || !hipdnnPlanCacheDir(dir, sizeof(dir), why, sizeof(why))) return false;
    make_key(gs, &k);
    if (!entry_path(dir, gs, &k, path, path_len)) return false;
    size_t n = 0;
    char* text = read_file(path, &n, why, sizeof(why));
    bool hit = false;
    bool ranked = false; /* hipdnnPlanCacheRemember's: replaced, not warned of */
    if (text) {
        ranked = strstr(text, "\ntime_ms -1\n") != NULL;
        char* copy = malloc(n + 1);
        if (copy) memcpy(copy, text, n + 1);
        hit = copy && parse_entry(copy, n, &k, out, why, sizeof(why));
        const bool damaged = !hit && strncmp(why, "damaged", 7) == 0;
        free(copy);
        if (damaged) remove_damaged(dir, path, text, n);
        free(text);
    }
    if (hit)
        utimensat(AT_FDCWD, path, NULL, 0); /* most recently used, for eviction */
    else if (why[0] && ranked)
        hipdnnLog(HIPDNN_LOG_INFO, "plan cache: the ranking remembered in %s does not apply: %s; "
                  "every engine is asked", path, why);
    else if (why[0])
        hipdnnLog(HIPDNN_LOG_WARN, "plan cache: ignored %s: %s%s", path, why,
                  strncmp(why, "damaged", 7) == 0 ? " (removed)"
                                                  : " (this process's ranking or autotune replaces it)");
    return hit;
}

/* Writes text to a temporary file of the folder and renames it to path. */
static hipdnnStatus_t write_atomic(const char* dir, const char* path, const char* text, size_t n) {
    char tmp[4200];
    static _Atomic unsigned counter;
    snprintf(tmp, sizeof(tmp), "%s/.tmp-%ld-%u", dir, (long)getpid(), counter++);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return hipdnnFail(HIPDNN_STATUS_INTERNAL_ERROR, "plan cache: open %s: %s", tmp, strerror(errno));
    const bool ok = write(fd, text, n) == (ssize_t)n;
    const int err = errno;
    if (close(fd) != 0 || !ok || rename(tmp, path) != 0) {
        const int e = ok ? errno : err;
        unlink(tmp);
        return hipdnnFail(HIPDNN_STATUS_INTERNAL_ERROR, "plan cache: writing %s: %s", path, strerror(e));
    }
    return HIPDNN_STATUS_SUCCESS;
}

void hipdnnPlanCacheRemember(const hipdnnGraphState* gs, const char* engine) {
    char dir[4096], path[4200], why[512] = "", text[ENTRY_MAX];
    entry_key k;
    hipdnnPlanCacheEntry e = {.ms = -1};
    if (!gs->bytes || !hipdnnPlanCacheDir(dir, sizeof(dir), why, sizeof(why))) return;
    snprintf(e.engine, sizeof(e.engine), "%s", engine);
    make_key(gs, &k);
    const size_t n = format_entry(&k, &e, text, sizeof(text));
    if (!entry_path(dir, gs, &k, path, sizeof(path)) || n == 0) return;
    int fd = hipdnnPlanCacheLock(dir, why, sizeof(why));
    if (fd < 0) {
        hipdnnLog(HIPDNN_LOG_INFO, "plan cache: not remembering graph '%s': %s",
                  gs->name ? gs->name : "", why);
        return;
    }
    /* An entry valid here stays (tuned, perhaps, by another process); one for another
     * hipdnn, plugin set or graph, or damaged, is replaced. */
    size_t old_n = 0;
    char* old = read_file(path, &old_n, why, sizeof(why));
    hipdnnPlanCacheEntry seen;
    const bool valid = old && parse_entry(old, old_n, &k, &seen, why, sizeof(why));
    free(old);
    if (!valid) {
        char keep[1024]; /* write_atomic's failure is not the caller's error */
        snprintf(keep, sizeof(keep), "%s", hipdnnErrorMessage());
        if (write_atomic(dir, path, text, n) == HIPDNN_STATUS_SUCCESS) {
            if (fnv64(k.graph, strlen(k.graph)) % 32 == 0) hipdnnPlanCacheEvict(dir);
            hipdnnLog(HIPDNN_LOG_INFO, "plan cache: remembered %s (engine %s, ranked first)", path,
                      engine);
        } else {
            hipdnnLog(HIPDNN_LOG_INFO, "plan cache: not remembering graph '%s': %s",
                      gs->name ? gs->name : "", hipdnnErrorMessage());
        }
        hipdnnFail(HIPDNN_STATUS_SUCCESS, "%s", keep);
    }
    hipdnnPlanCacheUnlock(fd);
}

hipdnnStatus_t hipdnnPlanCacheStore(const hipdnnGraphState* gs, const hipdnnPlanCacheEntry* e) {
    char dir[4096], path[4200], why[512] = "", text[ENTRY_MAX];
    entry_key k;
    if (!gs->bytes) return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "plan cache: the graph is not finalized");
    if (!hipdnnPlanCacheDir(dir, sizeof(dir), why, sizeof(why)))
        return hipdnnFail(HIPDNN_STATUS_NOT_SUPPORTED, "plan cache off: %s", why[0] ? why : "path too long");
    make_key(gs, &k);
    const size_t n = format_entry(&k, e, text, sizeof(text));
    if (!entry_path(dir, gs, &k, path, sizeof(path)) || n == 0)
        return hipdnnFail(HIPDNN_STATUS_INTERNAL_ERROR, "plan cache: entry or path too long");
    int fd = hipdnnPlanCacheLock(dir, why, sizeof(why));
    if (fd < 0) return hipdnnFail(HIPDNN_STATUS_INTERNAL_ERROR, "plan cache: %s", why);
    hipdnnStatus_t st = write_atomic(dir, path, text, n);
    if (!st) hipdnnPlanCacheEvict(dir);
    hipdnnPlanCacheUnlock(fd);
    if (!st) hipdnnLog(HIPDNN_LOG_INFO, "plan cache: stored %s (engine %s, %.4g ms)", path,
                       e->engine, e->ms);
    return st;
}
