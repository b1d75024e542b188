/* Plugin loading.  The registry is the one process-wide state besides the logger: the
 * search paths are fixed before the first load, and the lists are immutable after it.
 *
 * Each rejected plugin gets one log line naming its path and the reason, told apart:
 * what the file check before dlopen found (elf_check.c: "not a regular file", "truncated:
 * ...", "ELF for machine X, this is Y"), "could not open", "missing symbol X", "API 2.0
 * but host speaks 1.x", "init failed: <plugin's message>", "engine id clash with <other
 * plugin>", "name does not hash", "declined to load: <plugin's reason>" (a device plugin
 * on a machine without its GPU; logged as info, as is a plugin whose GPU runtime library
 * is missing).  Plugin folders and files that others may write are loaded, with a
 * warning: plugins are trusted code.
 *
 * Messages logged while loading are delivered after the lock is released (log.h), so a
 * log callback may itself create a handle. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* secure_getenv: set[ug]id processes ignore our variables */
#endif
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dl.h"
#include "elf_check.h"
#include "hipdnn/hipdnn_sdk.h"
#include "error.h"
#include "log.h"
#include "registry.h"

#define MAX_PLUGINS 64
#define MAX_ENGINES 256
#define MAX_PATHS 64

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static bool g_loaded;
static int g_mode = HIPDNN_PLUGIN_LOADING_ADDITIVE;
static char* g_user_paths[MAX_PATHS];
static size_t g_num_user_paths;

static hipdnnPlugin g_plugins[MAX_PLUGINS];
static int32_t g_num_plugins;
static hipdnnEngineEntry g_engines[MAX_ENGINES];
static int32_t g_num_engines;
static char** g_skipped; /* "path: reason", one per skip; grows */
static int32_t g_num_skipped;
static int32_t g_cap_skipped;
static char** g_warned; /* paths warned about as writable by others, to warn once */
static size_t g_num_warned;
static char g_searched[2048]; /* the paths searched, for "no engine loaded" messages */

int32_t hipdnnRegistryPluginCount(void) { return g_num_plugins; }

void hipdnnRegistryWhyNoEngine(char* buf, size_t len) {
    size_t off = (size_t)snprintf(buf, len, "no engine plugin loaded (searched: %s)",
                                  g_searched[0] ? g_searched : "nothing");
    for (int32_t i = 0; i < g_num_skipped && off < len; ++i)
        off += (size_t)snprintf(buf + off, len - off, "; %s", g_skipped[i]);
}
hipdnnPlugin* hipdnnRegistryPlugin(int32_t i) { return &g_plugins[i]; }
int32_t hipdnnRegistryEngineCount(void) { return g_num_engines; }
const hipdnnEngineEntry* hipdnnRegistryEngine(int32_t i) { return &g_engines[i]; }

int32_t hipdnnRegistryFindEngine(uint64_t id) {
    for (int32_t i = 0; i < g_num_engines; ++i)
        if (g_engines[i].id == id) return i;
    return -1;
}

int32_t hipdnnRegistryFindEngineByName(const char* name) {
    for (int32_t i = 0; i < g_num_engines; ++i)
        if (strcmp(g_engines[i].name, name) == 0) return i;
    return -1;
}

const char* hipdnnPluginLastError(const hipdnnPlugin* p) {
    const char* msg = NULL;
    if (p->last_error) p->last_error(&msg);
    return msg ? msg : "";
}

/* A skipped plugin is a warning, except where it only says that what it needs is not
 * on this machine (a device plugin without its GPU or runtime): that is logged as info. */
static void skip_at(hipdnnLogLevel_t level, const char* path, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define skip(...) skip_at(HIPDNN_LOG_WARN, __VA_ARGS__)
static void skip_at(hipdnnLogLevel_t level, const char* path, const char* fmt, ...) {
    char reason[768], line[1400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    /* a path too long for the line is shortened in its middle: the reason must survive */
    size_t n = strlen(path);
    if (n > 600) snprintf(line, sizeof(line), "%.290s...%s: %s", path, path + n - 290, reason);
    else snprintf(line, sizeof(line), "%s: %s", path, reason);
    hipdnnLog(level, "plugin skipped: %s", line);
    if (g_num_skipped == g_cap_skipped) {
        int32_t cap = g_cap_skipped ? 2 * g_cap_skipped : 16;
        char** grown = realloc(g_skipped, (size_t)cap * sizeof(*grown));
        if (!grown) return; /* the log line above still says it */
        g_skipped = grown;
        g_cap_skipped = cap;
    }
    char* copy = strdup(line);
    if (copy) g_skipped[g_num_skipped++] = copy;
}

/* Whoever can write a plugin folder or file runs code in this process: say so, once per
 * path, when that is anyone but this user or root.  A group-writable path whose group is
 * this user's private group (the user-private-group scheme of umask 002: group id = user
 * id = the process's group id) is left alone, or every such build would warn. */
static void warn_if_others_can_write(const char* what, const char* path, const struct stat* st) {
    char why[256] = "";
    size_t off = 0;
    uid_t me = geteuid();
    bool private_group = st->st_gid == getegid() && (uid_t)st->st_gid == me;
    if (st->st_mode & S_IWOTH)
        off += (size_t)snprintf(why + off, sizeof(why) - off, "world-writable (mode %04o)",
                                (unsigned)(st->st_mode & 07777));
    else if ((st->st_mode & S_IWGRP) && !private_group)
        off += (size_t)snprintf(why + off, sizeof(why) - off, "writable by group %u (mode %04o)",
                                (unsigned)st->st_gid, (unsigned)(st->st_mode & 07777));
    if (st->st_uid != 0 && st->st_uid != me && off < sizeof(why))
        snprintf(why + off, sizeof(why) - off, "%sowned by uid %u, neither this user (uid %u) "
                 "nor root", off ? " and " : "", (unsigned)st->st_uid, (unsigned)me);
    if (!why[0]) return;
    for (size_t i = 0; i < g_num_warned; ++i)
        if (strcmp(g_warned[i], path) == 0) return;
    char** grown = realloc(g_warned, (g_num_warned + 1) * sizeof(*grown));
    if (grown) {
        g_warned = grown;
        if ((g_warned[g_num_warned] = strdup(path))) ++g_num_warned;
    }
    hipdnnLog(HIPDNN_LOG_WARN, "%s %s is %s: whoever can write it can run code in this "
              "process (plugins are trusted code)", what, path, why);
}

/* A required entry point into `fn`, or "missing symbol X" and out (resolve_entry_points). */
#define RESOLVE_INTO(fn, sym)                                                    \
    do {                                                                         \
        *(void**)&(fn) = hipdnnDlSymbol(lib, sym);                               \
        if (!(fn)) {                                                             \
            skip(path, "missing symbol %s", sym);                                \
            goto reject;                                                         \
        }                                                                        \
    } while (0)
#define RESOLVE(field, sym) RESOLVE_INTO(p->field, sym)

static bool already_loaded(const char* path) {
    for (int32_t i = 0; i < g_num_plugins; ++i)
        if (strcmp(g_plugins[i].path, path) == 0) return true;
    return false;
}

/* Looks at the file, then opens it; NULL (with the reason logged) if either fails.
 * dlopen would hang on a FIFO and die of SIGBUS on a truncated file: look first. */
static void* open_plugin_file(const char* path) {
    struct stat st;
    char why[512];
    if (hipdnnElfCheck(path, &st, why, sizeof(why)) != 0) {
        skip(path, "%s", why);
        return NULL;
    }
    warn_if_others_can_write("plugin file", path, &st);
    void* lib = hipdnnDlOpen(path);
    if (!lib) {
        /* dlerror names the file it could not load: when that is not the plugin itself,
         * the plugin needs a library this machine lacks (a GPU runtime), which is info. */
        const char* err = hipdnnDlError();
        bool missing_dependency = strncmp(err, path, strlen(path)) != 0 &&
                                  strstr(err, "cannot open shared object file") != NULL;
        skip_at(missing_dependency ? HIPDNN_LOG_INFO : HIPDNN_LOG_WARN, path,
                "could not open: %s", err);
    }
    return lib;
}

/* Version first, checked before anything else is touched: the ABI minor the plugin is
 * driven as (0 or 1), or -1 (logged) when it is no hipdnn plugin or speaks another
 * major version. */
static int plugin_api_minor(void* lib, const char* path) {
    hipdnnPluginStatus_t (*get_version)(uint32_t*, uint32_t*);
    *(void**)&get_version = hipdnnDlSymbol(lib, "hipdnnPluginGetApiVersion");
    if (!get_version) {
        skip(path, "missing symbol hipdnnPluginGetApiVersion (not a hipdnn plugin?)");
        return -1;
    }
    uint32_t major = 0, minor = 0;
    if (get_version(&major, &minor) != HIPDNN_PLUGIN_STATUS_SUCCESS) {
        skip(path, "hipdnnPluginGetApiVersion failed");
        return -1;
    }
    if (major != HIPDNN_PLUGIN_API_MAJOR) {
        skip(path, "API %u.%u but host speaks %d.x", major, minor, HIPDNN_PLUGIN_API_MAJOR);
        return -1;
    }
    return minor >= 1 ? 1 : 0;
}

/* The plugin-wide entry points, used only while loading. */
typedef struct {
    hipdnnPluginStatus_t (*get_name)(const char**);
    hipdnnPluginStatus_t (*get_type)(hipdnnPluginType_t*);
    hipdnnPluginStatus_t (*get_plugin_version)(const char**);
    hipdnnPluginStatus_t (*set_logging)(hipdnnPluginLoggingCallback_t);
} plugin_info_fns;

/* Resolves every entry point the plugin's ABI version requires into p (the optional
 * ones may stay NULL) and the plugin-wide ones into f; false (logged) at the first
 * one missing. */
static bool resolve_entry_points(hipdnnPlugin* p, void* lib, const char* path,
                                 plugin_info_fns* f) {
    RESOLVE(last_error, "hipdnnPluginGetLastErrorString");
    RESOLVE_INTO(f->get_name, "hipdnnPluginGetName");
    RESOLVE_INTO(f->get_type, "hipdnnPluginGetType");
    RESOLVE_INTO(f->get_plugin_version, "hipdnnPluginGetVersion");
    RESOLVE_INTO(f->set_logging, "hipdnnPluginSetLoggingCallback");
    RESOLVE(get_all_ids, "hipdnnEnginePluginGetAllEngineIds");
    RESOLVE(create, "hipdnnEnginePluginCreate");
    RESOLVE(destroy, "hipdnnEnginePluginDestroy");
    RESOLVE(set_stream, "hipdnnEnginePluginSetStream");
    RESOLVE(get_applicable, "hipdnnEnginePluginGetApplicableEngineIds");
    RESOLVE(get_details, "hipdnnEnginePluginGetEngineDetails");
    RESOLVE(destroy_details, "hipdnnEnginePluginDestroyEngineDetails");
    RESOLVE(get_workspace, "hipdnnEnginePluginGetWorkspaceSize");
    RESOLVE(create_context, "hipdnnEnginePluginCreateExecutionContext");
    RESOLVE(destroy_context, "hipdnnEnginePluginDestroyExecutionContext");
    RESOLVE(execute, "hipdnnEnginePluginExecuteOpGraph");
    *(void**)&p->get_reason = hipdnnDlSymbol(lib, "hipdnnEnginePluginGetNotApplicableReason");
    *(void**)&p->get_kernels = hipdnnDlSymbol(lib, "hipdnnEnginePluginGetKernelInfo");
    if (p->api_minor >= 1) {
        RESOLVE(create_for_device, "hipdnnEnginePluginCreateForDevice");
        RESOLVE(workspace_from_context, "hipdnnEnginePluginGetWorkspaceSizeFromExecutionContext");
        RESOLVE(enqueue, "hipdnnEnginePluginEnqueueOpGraph");
    }
    return true;
reject:
    return false;
}

/* An engine plugin gets its name read and our logger; anything else is refused. */
static bool identify_plugin(const plugin_info_fns* f, const char* path, const char** name,
                            const char** version) {
    hipdnnPluginType_t type;
    if (f->get_type(&type) != HIPDNN_PLUGIN_STATUS_SUCCESS || type != HIPDNN_PLUGIN_TYPE_ENGINE) {
        skip(path, "not an engine plugin (type %d)", (int)type);
        return false;
    }
    if (f->get_name(name) != HIPDNN_PLUGIN_STATUS_SUCCESS || !*name) *name = "unnamed";
    if (f->get_plugin_version(version) != HIPDNN_PLUGIN_STATUS_SUCCESS || !*version) *version = "?";
    f->set_logging(hipdnnLogMessage);
    return true;
}

/* The ids of the plugin's engines.  A 1.0 plugin needs a handle to describe its engines:
 * a probe handle, made here into *probe for the caller to drop once the engines are
 * described.  A 1.1 plugin answers without one, and gets handles only when used.  False
 * (logged, no probe left) when the plugin fails or declines. */
static bool list_engine_ids(hipdnnPlugin* p, const char* path,
                            hipdnnEnginePluginHandle_t* probe, uint64_t* ids,
                            uint32_t* num_ids) {
    if (p->api_minor == 0 && p->create(probe) != HIPDNN_PLUGIN_STATUS_SUCCESS) {
        const char* msg = NULL;
        p->last_error(&msg);
        skip(path, "init failed: %s", msg && *msg ? msg : "(no message)");
        return false;
    }
    hipdnnPluginStatus_t ids_status = p->get_all_ids(NULL, 0, num_ids);
    if (ids_status == HIPDNN_PLUGIN_STATUS_NOT_SUPPORTED) {
        /* The ABI's way to decline loading on this machine (a device plugin without its
         * device): expected, so info, and the plugin's own reason. */
        skip_at(HIPDNN_LOG_INFO, path, "declined to load: %s", hipdnnPluginLastError(p));
        if (*probe) p->destroy(*probe);
        return false;
    }
    if (ids_status != HIPDNN_PLUGIN_STATUS_SUCCESS || *num_ids > MAX_ENGINES ||
        (*num_ids && p->get_all_ids(ids, *num_ids, num_ids) != HIPDNN_PLUGIN_STATUS_SUCCESS)) {
        skip(path, "hipdnnEnginePluginGetAllEngineIds failed: %s", hipdnnPluginLastError(p));
        if (*probe) p->destroy(*probe);
        return false;
    }
    return true;
}

/* The engine's hipdnnPluginKnobValues_t, or NULL when its details predate them. */
static const hipdnnPluginKnobValues_t* knob_values(const hipdnnPluginEngineDetails_t* det) {
    const size_t end = offsetof(hipdnnPluginEngineDetails_t, knob_values) +
                       sizeof(det->knob_values);
    return det->struct_size >= end ? det->knob_values : NULL;
}

/* Whether value v is one knob k takes: in range, on the stride, among the listed values. */
static bool knob_takes(const hipdnnPluginKnobInfo_t* k, const hipdnnPluginKnobValues_t* kv,
                       int64_t v) {
    if (v < k->min_value || v > k->max_value) return false;
    if (!kv) return true;
    if (kv->stride > 1 && (v - k->min_value) % kv->stride != 0) return false;
    bool listed = kv->num_values == 0;
    for (int32_t i = 0; i < kv->num_values; ++i) listed = listed || kv->values[i] == v;
    return listed;
}

/* Why knob i's valid values are malformed (into why), or "" when they are not. */
static void knob_values_reason(const hipdnnPluginEngineDetails_t* det, int32_t i, char* why,
                               size_t len) {
    const hipdnnPluginKnobValues_t* kv = knob_values(det) ? &knob_values(det)[i] : NULL;
    const hipdnnPluginKnobInfo_t* k = &det->knobs[i];
    bool bad = kv && (kv->stride < 0 || kv->num_values < 0 ||
                      kv->num_values > HIPDNN_KNOB_MAX_VALUES || (kv->num_values && !kv->values));
    for (int32_t j = 0; !bad && kv && j < kv->num_values; ++j)
        bad = !knob_takes(k, kv, kv->values[j]);
    if (bad || !knob_takes(k, kv, k->default_value))
        snprintf(why, len, "engine '%s' dropped: knob %lld's valid values are malformed (a "
                 "stride >= 0, at most %d listed values on it within %lld to %lld, the default "
                 "%lld among them)", det->name, (long long)k->knob_id, HIPDNN_KNOB_MAX_VALUES,
                 (long long)k->min_value, (long long)k->max_value,
                 (long long)k->default_value);
}

/* Why engine `id` cannot be registered (into why), or "" when it can: its name must
 * hash to its id, the id must be new, and there must be room. */
static void engine_drop_reason(const hipdnnPluginEngineDetails_t* det, uint64_t id, char* why,
                               size_t len) {
    uint64_t want = hipdnnSdkFnv1a64(det->name);
    int32_t clash = hipdnnRegistryFindEngine(id);
    if (want != id || det->engine_id != id)
        snprintf(why, len, "engine '%s' dropped: id %llu is not the FNV-1a hash "
                 "of its name (%llu)", det->name, (unsigned long long)id,
                 (unsigned long long)want);
    else if (clash >= 0)
        snprintf(why, len, "engine '%s' dropped: engine id clash with %s",
                 det->name, g_plugins[g_engines[clash].plugin].path);
    else if (g_num_engines >= MAX_ENGINES)
        snprintf(why, len, "engine '%s' dropped: too many engines (limit %d)",
                 det->name, MAX_ENGINES);
    else if (det->num_knobs < 0 || det->num_knobs > HIPDNN_ENGINE_MAX_KNOBS ||
             (det->num_knobs > 0 && !det->knobs))
        snprintf(why, len, "engine '%s' dropped: %d knobs (at most %d, and a table for them)",
                 det->name, (int)det->num_knobs, HIPDNN_ENGINE_MAX_KNOBS);
    for (int32_t i = 0; !why[0] && i < det->num_knobs; ++i) {
        const hipdnnPluginKnobInfo_t* k = &det->knobs[i];
        bool twice = false;
        for (int32_t j = 0; j < i; ++j) twice = twice || det->knobs[j].knob_id == k->knob_id;
        if (twice || k->min_value > k->max_value || k->default_value < k->min_value ||
            k->default_value > k->max_value)
            snprintf(why, len, "engine '%s' dropped: knob %lld is given twice or its default "
                     "%lld is not within %lld to %lld", det->name, (long long)k->knob_id,
                     (long long)k->default_value, (long long)k->min_value,
                     (long long)k->max_value);
        else
            knob_values_reason(det, i, why, len);
    }
}

/* Registers engine details' knobs into e (checked by engine_drop_reason). */
static void copy_knobs(hipdnnEngineEntry* e, const hipdnnPluginEngineDetails_t* det) {
    const hipdnnPluginKnobValues_t* kv = knob_values(det);
    e->num_knobs = det->num_knobs;
    for (int32_t i = 0; i < det->num_knobs; ++i) {
        e->knobs[i].id = det->knobs[i].knob_id;
        e->knobs[i].min = det->knobs[i].min_value;
        e->knobs[i].max = det->knobs[i].max_value;
        e->knobs[i].def = det->knobs[i].default_value;
        e->knobs[i].stride = kv && kv[i].stride > 1 ? kv[i].stride : 1;
        e->knobs[i].num_values = kv ? kv[i].num_values : 0;
        for (int32_t j = 0; j < e->knobs[i].num_values; ++j)
            e->knobs[i].values[j] = kv[i].values[j];
    }
}

/* Registers each engine the plugin describes as the next plugin's; why others were
 * dropped goes into `dropped` ("; "-separated).  Returns how many were added. */
static int32_t add_engines(hipdnnPlugin* p, hipdnnEnginePluginHandle_t probe,
                           const uint64_t* ids, uint32_t num_ids, char* dropped, size_t len) {
    int32_t added = 0;
    for (uint32_t k = 0; k < num_ids; ++k) {
        const hipdnnPluginEngineDetails_t* det = NULL;
        char why[700] = "";
        if (p->get_details(probe, ids[k], &det) != HIPDNN_PLUGIN_STATUS_SUCCESS || !det ||
            !det->name) {
            snprintf(why, sizeof(why), "engine %llu dropped: no details: %s",
                     (unsigned long long)ids[k], hipdnnPluginLastError(p));
            det = NULL;
        } else {
            engine_drop_reason(det, ids[k], why, sizeof(why));
        }
        if (why[0]) {
            size_t used = strlen(dropped);
            snprintf(dropped + used, len - used, "%s%s", used ? "; " : "", why);
        } else {
            hipdnnEngineEntry* e = &g_engines[g_num_engines++];
            e->id = ids[k];
            snprintf(e->name, sizeof(e->name), "%s", det->name);
            e->memory_space = det->memory_space;
            e->priority = det->priority;
            e->flags = det->flags;
            e->plugin = g_num_plugins;
            copy_knobs(e, det);
            ++added;
        }
        if (det) p->destroy_details(probe, det);
    }
    return added;
}

/* Loads one plugin file; on any problem logs why and leaves no trace. */
static void load_plugin(const char* path) {
    if (already_loaded(path)) return;
    if (g_num_plugins >= MAX_PLUGINS) {
        skip(path, "too many plugins (limit %d)", MAX_PLUGINS);
        return;
    }
    void* lib = open_plugin_file(path);
    if (!lib) return;
    hipdnnPlugin* p = &g_plugins[g_num_plugins];
    memset(p, 0, sizeof(*p));
    int minor = plugin_api_minor(lib, path);
    if (minor < 0) goto reject;
    p->api_minor = (uint32_t)minor;
    plugin_info_fns f;
    const char* name = NULL;
    const char* version = NULL;
    hipdnnEnginePluginHandle_t probe = NULL;
    uint64_t ids[MAX_ENGINES];
    uint32_t num_ids = 0;
    if (!resolve_entry_points(p, lib, path, &f) || !identify_plugin(&f, path, &name, &version) ||
        !list_engine_ids(p, path, &probe, ids, &num_ids))
        goto reject;
    char dropped[1024] = ""; /* why engines were dropped, for the one skip line */
    int32_t added = add_engines(p, probe, ids, num_ids, dropped, sizeof(dropped));
    if (probe) p->destroy(probe);
    if (added == 0) {
        skip(path, "%s", dropped[0] ? dropped : "it offers no engine");
        goto reject;
    }
    if (dropped[0]) skip(path, "loaded, but %s", dropped);
    p->path = strdup(path);
    p->name = name;
    p->version = version;
    p->lib = lib;
    ++g_num_plugins;
    hipdnnLog(HIPDNN_LOG_INFO, "loaded plugin %s (%s, %d engine%s)", path, name, added,
              added == 1 ? "" : "s");
    return;
reject:
    memset(p, 0, sizeof(*p));
    hipdnnDlClose(lib);
}

static int compare_engines(const void* a, const void* b) {
    return strcmp(((const hipdnnEngineEntry*)a)->name, ((const hipdnnEngineEntry*)b)->name);
}

/* Set once loading is done: execute asks per pointer. */
static bool g_has_device_engine;

bool hipdnnRegistryHasDeviceEngine(void) { return g_has_device_engine; }

static int compare_names(const void* a, const void* b) {
    return strcmp(*(char* const*)a, *(char* const*)b);
}

/* A folder: every *.so in it, however many, in sorted name order (so loading is
 * reproducible).  Each is checked and loaded or skipped with its reason. */
static void load_folder(const char* dir) {
    DIR* d = opendir(dir);
    if (!d) {
        hipdnnLog(HIPDNN_LOG_WARN, "plugin folder %s: could not open: %s", dir, strerror(errno));
        return;
    }
    char** names = NULL;
    size_t n = 0, cap = 0, lost = 0;
    struct dirent* e;
    errno = 0;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len <= 3 || strcmp(e->d_name + len - 3, ".so") != 0) continue;
        if (n == cap) {
            size_t c = cap ? 2 * cap : 64;
            char** grown = realloc(names, c * sizeof(*grown));
            if (!grown) {
                ++lost;
                continue;
            }
            names = grown;
            cap = c;
        }
        if ((names[n] = strdup(e->d_name))) ++n;
        else ++lost;
    }
    if (errno)
        hipdnnLog(HIPDNN_LOG_WARN, "plugin folder %s: listing stopped early: %s", dir,
                  strerror(errno));
    closedir(d);
    if (lost)
        hipdnnLog(HIPDNN_LOG_WARN, "plugin folder %s: out of memory: %zu *.so file%s not "
                  "looked at", dir, lost, lost == 1 ? "" : "s");
    if (n) qsort(names, n, sizeof(names[0]), compare_names);
    for (size_t i = 0; i < n; ++i) {
        char path[PATH_MAX];
        if (snprintf(path, sizeof(path), "%s/%s", dir, names[i]) >= (int)sizeof(path))
            skip(names[i], "path too long in folder %s", dir);
        else
            load_plugin(path);
        free(names[i]);
    }
    free(names);
}

static void load_path(const char* given) {
    char path[PATH_MAX];
    int len = given[0] == '/' ? snprintf(path, sizeof(path), "%s", given)
                              : snprintf(path, sizeof(path), "%s/%s", hipdnnDlSelfDir(), given);
    if (len < 0 || len >= (int)sizeof(path)) {
        skip(given, "the path is longer than PATH_MAX (%d bytes)", PATH_MAX);
        return;
    }
    size_t used = strlen(g_searched);
    if (snprintf(g_searched + used, sizeof(g_searched) - used, "%s%s", used ? ", " : "", path) < 0)
        g_searched[used] = '\0';
    struct stat st;
    if (stat(path, &st) != 0) {
        skip(path, "could not open: %s", strerror(errno));
        return;
    }
    if (S_ISDIR(st.st_mode)) {
        warn_if_others_can_write("plugin folder", path, &st);
        load_folder(path);
    } else {
        load_plugin(path);
    }
}

hipdnnStatus_t hipdnnRegistryEnsureLoaded(void) {
    hipdnnLogDeferBegin();
    pthread_mutex_lock(&g_lock);
    if (!g_loaded) {
        g_loaded = true;
        if (g_mode == HIPDNN_PLUGIN_LOADING_ADDITIVE) {
            const char* env = secure_getenv("HIPDNN_PLUGIN_DIR");
            if (env && *env) load_path(env);
            else load_path("hipdnn_plugins/engines");
        }
        for (size_t i = 0; i < g_num_user_paths; ++i) load_path(g_user_paths[i]);
        if (g_num_engines == 0)
            hipdnnLog(HIPDNN_LOG_WARN, "no engine plugin loaded; every graph will be "
                      "unsupported (see `python -m hipdnn info`)");
        qsort(g_engines, (size_t)g_num_engines, sizeof(g_engines[0]), compare_engines);
        for (int32_t i = 0; i < g_num_engines; ++i)
            if (g_engines[i].memory_space != HIPDNN_MEMORY_HOST) g_has_device_engine = true;
    }
    pthread_mutex_unlock(&g_lock);
    hipdnnLogDeferEnd();
    return HIPDNN_STATUS_SUCCESS;
}

void hipdnnRegistryForkPrepare(void) { pthread_mutex_lock(&g_lock); }
void hipdnnRegistryForkParent(void) { pthread_mutex_unlock(&g_lock); }
void hipdnnRegistryForkChild(void) { pthread_mutex_init(&g_lock, NULL); }

HIPDNN_EXPORT hipdnnStatus_t hipdnnSetEnginePluginPaths_ext(size_t num_paths,
                                                            const char* const* paths,
                                                            hipdnnPluginLoadingMode_t mode) {
    hipdnnClearError();
    if (num_paths > 0 && !paths)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NULL_POINTER,
                          "hipdnnSetEnginePluginPaths_ext: paths is NULL");
    if (num_paths > MAX_PATHS)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND,
                          "hipdnnSetEnginePluginPaths_ext: %zu paths, at most %d", num_paths,
                          MAX_PATHS);
    if (mode != HIPDNN_PLUGIN_LOADING_ADDITIVE && mode != HIPDNN_PLUGIN_LOADING_ABSOLUTE)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "hipdnnSetEnginePluginPaths_ext: unknown mode %d",
                          (int)mode);
    for (size_t i = 0; i < num_paths; ++i)
        if (!paths[i])
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NULL_POINTER,
                              "hipdnnSetEnginePluginPaths_ext: paths[%zu] is NULL", i);
    pthread_mutex_lock(&g_lock);
    hipdnnStatus_t st = HIPDNN_STATUS_SUCCESS;
    if (g_loaded) {
        st = hipdnnFail(HIPDNN_STATUS_NOT_SUPPORTED,
                        "hipdnnSetEnginePluginPaths_ext: plugins are already loaded (the first "
                        "handle or engine query loads them); set paths before that");
    } else {
        for (size_t i = 0; i < g_num_user_paths; ++i) free(g_user_paths[i]);
        g_num_user_paths = 0;
        for (size_t i = 0; i < num_paths; ++i) {
            g_user_paths[i] = strdup(paths[i]);
            if (!g_user_paths[i]) {
                st = hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory");
                break;
            }
            g_num_user_paths = i + 1;
        }
        g_mode = mode;
    }
    pthread_mutex_unlock(&g_lock);
    return st;
}

hipdnnStatus_t hipdnnReturnStrings(const char* fn, char** list, size_t n, size_t* num,
                                   char** out, size_t* max_len) {
    if (!num || !max_len)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NULL_POINTER, "%s: num or max_len is NULL", fn);
    size_t longest = 1;
    for (size_t i = 0; i < n; ++i)
        if (strlen(list[i]) + 1 > longest) longest = strlen(list[i]) + 1;
    if (!out) {
        *num = n;
        *max_len = longest;
        return HIPDNN_STATUS_SUCCESS;
    }
    if (*num < n || *max_len < longest)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND,
                          "%s: room for %zu entries of %zu chars, need %zu of %zu", fn, *num,
                          *max_len, n, longest);
    for (size_t i = 0; i < n; ++i) {
        if (!out[i]) return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NULL_POINTER, "%s: entry %zu is NULL", fn, i);
        snprintf(out[i], *max_len, "%s", list[i]);
    }
    *num = n;
    return HIPDNN_STATUS_SUCCESS;
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnGetLoadedEnginePluginPaths_ext(size_t* num_paths, char** paths,
                                                                  size_t* max_len) {
    hipdnnClearError();
    hipdnnRegistryEnsureLoaded();
    char* list[MAX_PLUGINS];
    for (int32_t i = 0; i < g_num_plugins; ++i) list[i] = g_plugins[i].path;
    return hipdnnReturnStrings("hipdnnGetLoadedEnginePluginPaths_ext", list,
                               (size_t)g_num_plugins, num_paths, paths, max_len);
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnGetSkippedEnginePlugins_ext(size_t* num, char** entries,
                                                               size_t* max_len) {
    hipdnnClearError();
    hipdnnRegistryEnsureLoaded();
    return hipdnnReturnStrings("hipdnnGetSkippedEnginePlugins_ext", g_skipped,
                               (size_t)g_num_skipped, num, entries, max_len);
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnGetEngineCount_ext(int64_t* count) {
    hipdnnClearError();
    if (!count)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NULL_POINTER, "hipdnnGetEngineCount_ext: count is NULL");
    hipdnnRegistryEnsureLoaded();
    *count = g_num_engines;
    return HIPDNN_STATUS_SUCCESS;
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnGetEngineInfo_ext(int64_t index, hipdnnEngineInfo_ext_t* info) {
    hipdnnClearError();
    if (!info)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NULL_POINTER, "hipdnnGetEngineInfo_ext: info is NULL");
    hipdnnRegistryEnsureLoaded();
    if (index < 0 || index >= g_num_engines)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND,
                          "hipdnnGetEngineInfo_ext: index %lld, %d engines loaded", (long long)index,
                          (int)g_num_engines);
    const hipdnnEngineEntry* e = &g_engines[index];
    memset(info, 0, sizeof(*info));
    info->engine_id = e->id;
    snprintf(info->name, sizeof(info->name), "%s", e->name);
    snprintf(info->plugin_path, sizeof(info->plugin_path), "%s", g_plugins[e->plugin].path);
    info->memory_space = e->memory_space;
    info->priority = e->priority;
    info->is_fallback = (e->flags & HIPDNN_ENGINE_FLAG_FALLBACK) != 0;
    return HIPDNN_STATUS_SUCCESS;
}
