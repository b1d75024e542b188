/* Heuristic plugins: loading, choosing the active one, and checking what it answers.
 *
 * Loaded like engine plugins (the file checked before dlopen, the version first, then
 * every symbol), from $HIPDNN_HEURISTIC_PLUGIN_PATH (':'-separated files and folders) or
 * hipdnn_plugins/heuristics beside the backend.  A plugin that fails any step is skipped
 * with one log line, "heuristic plugin skipped: <path>: <reason>", kept for listing.  A
 * Rank answer that is not a permutation of the candidates is refused with one log line
 * (the first per plugin) and the built-in order stands for that query. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* secure_getenv */
#endif
#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "device.h"
#include "dl.h"
#include "elf_check.h"
#include "error.h"
#include "device_facts.h"
#include "heuristic_plugins.h"
#include "hipdnn/hipdnn.h"
#include "log.h"
#include "registry.h"

#define MAX_HEUR 16
#define MAX_SKIPPED 32

typedef struct {
    char* path;
    const char* name;
    void* lib;
    void (*last_error)(const char**);
    hipdnnPluginStatus_t (*rank)(const uint8_t*, size_t, const hipdnnHeuristicDeviceInfo_t*,
                                 const hipdnnHeuristicCandidate_t*, uint32_t, uint32_t*, double*,
                                 char*);
    atomic_bool warned; /* a refused answer was logged */
} heur_plugin;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static bool g_loaded;
static heur_plugin g_plugins[MAX_HEUR];
static int32_t g_num;
static char* g_skipped[MAX_SKIPPED]; /* "path: reason" */
static int32_t g_num_skipped;
static atomic_bool g_warned_env;

static void skip(const char* path, const char* reason) {
    hipdnnLog(HIPDNN_LOG_WARN, "heuristic plugin skipped: %s: %s", path, reason);
    char line[1400];
    snprintf(line, sizeof(line), "%.600s: %.700s", path, reason);
    if (g_num_skipped < MAX_SKIPPED && (g_skipped[g_num_skipped] = strdup(line))) ++g_num_skipped;
}

/* Resolves the ABI's symbols into p; the reason into why when one is missing or wrong. */
static bool resolve(heur_plugin* p, void* lib, char* why, size_t len) {
    hipdnnPluginStatus_t (*version)(uint32_t*, uint32_t*);
    hipdnnPluginStatus_t (*get_name)(const char**);
    *(void**)&version = hipdnnDlSymbol(lib, "hipdnnHeuristicPluginGetApiVersion");
    uint32_t major = 0, minor = 0;
    if (!version) {
        snprintf(why, len, "missing symbol hipdnnHeuristicPluginGetApiVersion (not a heuristic "
                 "plugin?)");
        return false;
    }
    if (version(&major, &minor) != HIPDNN_PLUGIN_STATUS_SUCCESS || major != HIPDNN_HEURISTIC_API_MAJOR) {
        snprintf(why, len, "heuristic API %u.%u but host speaks %d.x", major, minor,
                 HIPDNN_HEURISTIC_API_MAJOR);
        return false;
    }
    const char* syms[] = {"hipdnnHeuristicPluginGetName", "hipdnnHeuristicPluginGetLastErrorString",
                          "hipdnnHeuristicPluginRank"};
    void* fns[3];
    for (int i = 0; i < 3; ++i)
        if (!(fns[i] = hipdnnDlSymbol(lib, syms[i]))) {
            snprintf(why, len, "missing symbol %s", syms[i]);
            return false;
        }
    *(void**)&get_name = fns[0];
    *(void**)&p->last_error = fns[1];
    *(void**)&p->rank = fns[2];
    if (get_name(&p->name) != HIPDNN_PLUGIN_STATUS_SUCCESS || !p->name || !*p->name ||
        strlen(p->name) > 63) {
        snprintf(why, len, "hipdnnHeuristicPluginGetName gave no name (1 to 63 characters)");
        return false;
    }
    for (int32_t i = 0; i < g_num; ++i)
        if (strcmp(g_plugins[i].name, p->name) == 0) {
            snprintf(why, len, "name '%s' clashes with %s", p->name, g_plugins[i].path);
            return false;
        }
    return true;
}

static void load_one(const char* path) {
    for (int32_t i = 0; i < g_num; ++i)
        if (strcmp(g_plugins[i].path, path) == 0) return;
    char why[600];
    struct stat st;
    if (g_num >= MAX_HEUR) {
        skip(path, "too many heuristic plugins (limit 16)");
        return;
    }
    if (hipdnnElfCheck(path, &st, why, sizeof(why)) != 0) {
        skip(path, why);
        return;
    }
    void* lib = hipdnnDlOpen(path);
    if (!lib) {
        snprintf(why, sizeof(why), "could not open: %s", hipdnnDlError());
        skip(path, why);
        return;
    }
    heur_plugin* p = &g_plugins[g_num];
    memset(p, 0, sizeof(*p));
    if (!resolve(p, lib, why, sizeof(why)) || !(p->path = strdup(path))) {
        skip(path, why);
        memset(p, 0, sizeof(*p));
        hipdnnDlClose(lib);
        return;
    }
    p->lib = lib;
    ++g_num;
    hipdnnLog(HIPDNN_LOG_INFO, "loaded heuristic plugin %s (%s)", path, p->name);
}

static int compare_names(const void* a, const void* b) {
    return strcmp(*(char* const*)a, *(char* const*)b);
}

/* A folder's *.so files in name order, or one file. */
static void load_path(const char* given, bool is_default) {
    char path[PATH_MAX];
    if (given[0] == '/') snprintf(path, sizeof(path), "%s", given);
    else snprintf(path, sizeof(path), "%s/%s", hipdnnDlSelfDir(), given);
    struct stat st;
    if (stat(path, &st) != 0) {
        if (!is_default) skip(path, "could not open: no such file or folder");
        return;
    }
    if (!S_ISDIR(st.st_mode)) {
        load_one(path);
        return;
    }
    DIR* d = opendir(path);
    if (!d) {
        skip(path, "could not open the folder");
        return;
    }
    char* names[64];
    size_t n = 0;
    for (struct dirent* e; (e = readdir(d)) && n < 64;) {
        size_t len = strlen(e->d_name);
        if (len > 3 && strcmp(e->d_name + len - 3, ".so") == 0 && (names[n] = strdup(e->d_name))) ++n;
    }
    closedir(d);
    qsort(names, n, sizeof(names[0]), compare_names);
    for (size_t i = 0; i < n; ++i) {
        char file[PATH_MAX];
        if (snprintf(file, sizeof(file), "%s/%s", path, names[i]) < (int)sizeof(file)) load_one(file);
        free(names[i]);
    }
}

static void ensure_loaded(void) {
    hipdnnLogDeferBegin();
    pthread_mutex_lock(&g_lock);
    if (!g_loaded) {
        g_loaded = true;
        const char* env = secure_getenv("HIPDNN_HEURISTIC_PLUGIN_PATH");
        if (env && *env) {
            char list[4096];
            snprintf(list, sizeof(list), "%s", env);
            for (char *save = NULL, *t = strtok_r(list, ":", &save); t; t = strtok_r(NULL, ":", &save))
                load_path(t, false);
        } else {
            load_path("hipdnn_plugins/heuristics", true);
        }
    }
    pthread_mutex_unlock(&g_lock);
    hipdnnLogDeferEnd();
}

void hipdnnHeuristicForkPrepare(void) { pthread_mutex_lock(&g_lock); }
void hipdnnHeuristicForkParent(void) { pthread_mutex_unlock(&g_lock); }
void hipdnnHeuristicForkChild(void) { pthread_mutex_init(&g_lock, NULL); }

/* The plugin ranking now: HIPDNN_HEURISTIC's ("builtin": none), else the first loaded. */
static const heur_plugin* active(void) {
    ensure_loaded();
    const char* want = getenv("HIPDNN_HEURISTIC");
    if (!want || !*want) return g_num ? &g_plugins[0] : NULL;
    if (strcmp(want, "builtin") == 0) return NULL;
    for (int32_t i = 0; i < g_num; ++i)
        if (strcmp(g_plugins[i].name, want) == 0) return &g_plugins[i];
    if (!atomic_exchange(&g_warned_env, true))
        hipdnnLog(HIPDNN_LOG_WARN, "HIPDNN_HEURISTIC names '%s', which is not a loaded heuristic "
                  "plugin (see `python -m hipdnn info`): the built-in ranking is used", want);
    return NULL;
}

/* "sm_90" or "gfx942" from the runtime's description of the device. */
static void arch_of(const char* desc, char* arch, size_t len) {
    for (const char* t = desc; *t; ++t)
        if ((t == desc || t[-1] == ' ' || t[-1] == ':') &&
            (strncmp(t, "sm_", 3) == 0 || strncmp(t, "gfx", 3) == 0)) {
            size_t k = strcspn(t, " ");
            snprintf(arch, len, "%.*s", (int)(k < len ? k : len - 1), t);
            return;
        }
}

static void device_info(int device, bool narrow, hipdnnHeuristicDeviceInfo_t* info) {
    memset(info, 0, sizeof(*info));
    info->struct_size = sizeof(*info);
    info->memory_space = HIPDNN_MEMORY_HOST;
    info->device = -1;
    snprintf(info->device_name, sizeof(info->device_name), "host");
    const hipdnnDeviceRuntime* rt = hipdnnRegistryHasDeviceEngine() ? hipdnnDeviceRuntimeGet() : NULL;
    if (!rt || rt->device_count < 1) return;
    info->memory_space = HIPDNN_MEMORY_DEVICE;
    info->device = device;
    hipdnnDeviceIdentity(device, info->device_name, sizeof(info->device_name));
    arch_of(info->device_name, info->arch, sizeof(info->arch));
    hipdnnDevicePeaks(device, info->arch, narrow, &info->sm_count, &info->peak_bytes_per_s,
                      &info->peak_flops);
}

/* Why the plugin's order is no permutation of n candidates, or NULL. */
static const char* bad_order(const uint32_t* order, int32_t n, char* why, size_t len) {
    bool seen[256] = {false};
    for (int32_t k = 0; k < n; ++k) {
        if (order[k] >= (uint32_t)n) {
            snprintf(why, len, "order[%d] = %u is out of range (%d candidates)", k, order[k], n);
            return why;
        }
        if (seen[order[k]]) {
            snprintf(why, len, "order[%d] = %u is given twice", k, order[k]);
            return why;
        }
        seen[order[k]] = true;
    }
    return NULL;
}

static void refuse(const heur_plugin* p, const char* why) {
    if (!atomic_exchange(&((heur_plugin*)p)->warned, true))
        hipdnnLog(HIPDNN_LOG_WARN, "heuristic plugin %s (%s): %s; the built-in ranking is used "
                  "(later refusals of it are not logged)", p->path, p->name, why);
}

bool hipdnnHeuristicRank(const uint8_t* graph, size_t graph_size, bool narrow, int device,
                         int32_t* engines, int32_t n, hipdnnHeuristicExplanation* why, char* used, size_t used_len) {
    const heur_plugin* p = active();
    if (!p || n <= 0 || n > 256) return false;
    hipdnnHeuristicDeviceInfo_t info;
    device_info(device, narrow, &info);
    hipdnnHeuristicCandidate_t cand[256];
    /* on the heap: 64 KiB is much for a thread's stack (hipdnn-ep runs in ORT's threads) */
    int64_t(*knobs)[2 * HIPDNN_ENGINE_MAX_KNOBS] = calloc((size_t)n, sizeof(*knobs));
    char* text = calloc((size_t)n, HIPDNN_HEURISTIC_EXPLANATION_LEN);
    if (!knobs || !text) {
        free(knobs);
        free(text);
        return false;
    }
    for (int32_t k = 0; k < n; ++k) {
        const hipdnnEngineEntry* e = hipdnnRegistryEngine(engines[k]);
        for (int32_t i = 0; i < e->num_knobs; ++i) {
            knobs[k][2 * i] = e->knobs[i].id;
            knobs[k][2 * i + 1] = e->knobs[i].def;
        }
        cand[k] = (hipdnnHeuristicCandidate_t){e->id, e->name, e->memory_space, e->priority,
                                               e->flags, e->num_knobs, knobs[k]};
    }
    uint32_t order[256];
    double score[256];
    char msg[300];
    memset(order, 0xff, sizeof(order));
    hipdnnPluginStatus_t st = p->rank(graph, graph_size, &info, cand, (uint32_t)n, order, score, text);
    const char* err = NULL;
    if (st != HIPDNN_PLUGIN_STATUS_SUCCESS) {
        const char* m = NULL;
        p->last_error(&m);
        snprintf(msg, sizeof(msg), "Rank failed (status %d): %s", (int)st, m && *m ? m : "no message");
        err = msg;
    } else {
        err = bad_order(order, n, msg, sizeof(msg));
    }
    free(knobs);
    if (err) {
        refuse(p, err);
        free(text);
        return false;
    }
    int32_t ranked[256];
    for (int32_t k = 0; k < n; ++k) {
        ranked[k] = engines[order[k]];
        why[k].score = score[order[k]];
        char* t = text + (size_t)order[k] * HIPDNN_HEURISTIC_EXPLANATION_LEN;
        t[HIPDNN_HEURISTIC_EXPLANATION_LEN - 1] = '\0';
        for (char* c = t; *c; ++c)
            if (*c == '\n' || *c == '\t' || *c == '\r') *c = ' ';
        snprintf(why[k].text, sizeof(why[k].text), "%s", t);
    }
    memcpy(engines, ranked, (size_t)n * sizeof(int32_t));
    snprintf(used, used_len, "%s", p->name);
    free(text);
    return true;
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnGetHeuristicPlugins_ext(size_t* num, char** entries,
                                                           size_t* max_len) {
    hipdnnClearError();
    const heur_plugin* a = active();
    char* list[MAX_HEUR + MAX_SKIPPED];
    size_t n = 0;
    hipdnnStatus_t st = HIPDNN_STATUS_SUCCESS;
    for (int32_t i = 0; i < g_num; ++i) {
        char line[PATH_MAX + 96];
        snprintf(line, sizeof(line), "%s\t%s\t%s", g_plugins[i].path, g_plugins[i].name,
                 a == &g_plugins[i] ? "active" : "loaded");
        if (!(list[n++] = strdup(line))) st = hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory");
    }
    for (int32_t i = 0; i < g_num_skipped; ++i) {
        char* sep = strstr(g_skipped[i], ": ");
        size_t at = sep ? (size_t)(sep - g_skipped[i]) : strlen(g_skipped[i]);
        char line[1300];
        snprintf(line, sizeof(line), "%.*s\t\tskipped: %s", (int)at, g_skipped[i], sep ? sep + 2 : "");
        if (!(list[n++] = strdup(line))) st = hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory");
    }
    if (!st) st = hipdnnReturnStrings("hipdnnGetHeuristicPlugins_ext", list, n, num, entries, max_len);
    for (size_t i = 0; i < n; ++i) free(list[i]);
    return st;
}
