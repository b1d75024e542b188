/* dynamic_backend.c - every function of hipdnn.h as a stub that loads
 * libhipdnn_backend.so on first use and forwards to it (libhipdnn_dynamic.a, CMake target
 * hipdnn::hipdnn_dynamic; docs/linking.md).
 *
 * A consumer linked with this archive has no DT_NEEDED on the backend and no undefined
 * hipdnn symbol, so it starts, and reports a status, on a machine without hipdnn.  The
 * stubs are hidden (HIPDNN_EXPORT empty): a library that links them does not re-export
 * the API, and cannot interpose on the backend's own calls to itself. */
#define HIPDNN_EXPORT
#include "hipdnn/hipdnn.h"

#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../backend/dl.h"
#include "entry_points.h"

#define DYN_STR2(x) #x
#define DYN_STR(x) DYN_STR2(x)
#define BACKEND_NAME "libhipdnn_backend.so"
#define HEADER_VERSION                                                                   \
    DYN_STR(HIPDNN_VERSION_MAJOR) "." DYN_STR(HIPDNN_VERSION_MINOR) "." DYN_STR(             \
        HIPDNN_VERSION_PATCH)

/* ---- the loader's state: written once, under the once flag, read-only after ---------- */

typedef struct {
#define REPORT_FIELD(ret, name, params, args) ret(*name) params;
#define STATUS_FIELD(name, params, args) hipdnnStatus_t(*name) params;
    HIPDNN_REPORT_ENTRY_POINTS(REPORT_FIELD)
    HIPDNN_STATUS_ENTRY_POINTS(STATUS_FIELD)
#undef REPORT_FIELD
#undef STATUS_FIELD
} entry_table;

static struct {
    pthread_once_t once;
    int loaded;
    entry_table fn;
    char searched[3072]; /* "path: what was found; ..." when nothing usable loaded */
} g_backend = {.once = PTHREAD_ONCE_INIT};

/* The stubs' own last error, for when there is no backend to keep one. */
static _Thread_local char t_message[4096];

/* ---- the search --------------------------------------------------------------------- */

static void note(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char* fmt, ...) {
    size_t used = strlen(g_backend.searched);
    if (used + 1 >= sizeof(g_backend.searched)) return;
    if (used) {
        snprintf(g_backend.searched + used, sizeof(g_backend.searched) - used, "; ");
        used = strlen(g_backend.searched);
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_backend.searched + used, sizeof(g_backend.searched) - used, fmt, ap);
    va_end(ap);
}

/* Before 1.0 a minor release may change the API (find_package's SameMinorVersion says the
 * same); from 1.0 a backend of our major and at least our minor has every function. */
static int version_compatible(int major, int minor) {
    if (major != HIPDNN_VERSION_MAJOR) return 0;
    return HIPDNN_VERSION_MAJOR == 0 ? minor == HIPDNN_VERSION_MINOR
                                     : minor >= HIPDNN_VERSION_MINOR;
}

/* The version first, as the plugin loader reads a plugin's API version first: an old or
 * foreign library is refused by its version, not by whichever symbol it happens to lack. */
static int check_version(void* lib, const char* path) {
    const char* (*version)(void) = NULL;
    void* sym = hipdnnDlSymbol(lib, "hipdnnVersionString_ext");
    memcpy(&version, &sym, sizeof(version)); /* POSIX: object and function pointers agree */
    if (!version) {
        note("%s: missing symbol hipdnnVersionString_ext (not a hipdnn backend)", path);
        return 0;
    }
    const char* v = version();
    int major = -1, minor = -1, patch = -1;
    char tail = 0;
    if (!v || sscanf(v, "%d.%d.%d%c", &major, &minor, &patch, &tail) != 3) {
        note("%s: version \"%s\" is not MAJOR.MINOR.PATCH", path, v ? v : "(null)");
        return 0;
    }
    if (!version_compatible(major, minor)) {
        note("%s: version %d.%d.%d, incompatible with hipdnn.h %s (needs %d.%d%s)", path,
             major, minor, patch, HEADER_VERSION, HIPDNN_VERSION_MAJOR, HIPDNN_VERSION_MINOR,
             HIPDNN_VERSION_MAJOR == 0 ? ".x" : ".x or a later minor");
        return 0;
    }
    return 1;
}

/* Every entry point, into `t`; names each one missing. */
static int resolve_all(void* lib, const char* path, entry_table* t) {
    char missing[1024] = "";
    int n_missing = 0;
    void* sym;
#define RESOLVE(name)                                                                     \
    sym = hipdnnDlSymbol(lib, #name);                                                     \
    memcpy(&t->name, &sym, sizeof(t->name));                                              \
    if (!sym) {                                                                           \
        size_t used = strlen(missing);                                                    \
        snprintf(missing + used, sizeof(missing) - used, "%s%s", n_missing ? ", " : "",   \
                 #name);                                                                  \
        ++n_missing;                                                                      \
    }
#define RESOLVE_REPORT(ret, name, params, args) RESOLVE(name)
#define RESOLVE_STATUS(name, params, args) RESOLVE(name)
    HIPDNN_REPORT_ENTRY_POINTS(RESOLVE_REPORT)
    HIPDNN_STATUS_ENTRY_POINTS(RESOLVE_STATUS)
#undef RESOLVE_REPORT
#undef RESOLVE_STATUS
#undef RESOLVE
    if (n_missing) note("%s: missing symbol%s %s", path, n_missing > 1 ? "s" : "", missing);
    return n_missing == 0;
}

/* `path` holds a slash: a file we can look at before dlopen, so that "absent" is told
 * apart from a library that fails to load.  Without one it goes to the loader's search
 * path, whose own message says what it tried. */
static int try_backend(const char* path, const char* where) {
    struct stat st;
    if (strchr(path, '/') && stat(path, &st) != 0) {
        note("%s (%s): absent", path, where);
        return 0;
    }
    void* lib = hipdnnDlOpen(path);
    if (!lib) {
        note("%s (%s): dlopen failed: %s", path, where, hipdnnDlError());
        return 0;
    }
    char label[PATH_MAX + 64];
    snprintf(label, sizeof(label), "%s (%s)", path, where);
    entry_table t;
    memset(&t, 0, sizeof(t));
    if (!check_version(lib, label) || !resolve_all(lib, label, &t)) {
        hipdnnDlClose(lib);
        return 0;
    }
    /* Never closed: descriptors, op-table entries and log callbacks live in it. */
    g_backend.fn = t;
    g_backend.loaded = 1;
    return 1;
}

static int try_in_folder(const char* dir, const char* where) {
    char path[PATH_MAX];
    if (snprintf(path, sizeof(path), "%s/" BACKEND_NAME, dir) >= (int)sizeof(path)) {
        note("%s (%s): path too long", dir, where);
        return 0;
    }
    return try_backend(path, where);
}

/* $HIPDNN_BACKEND_PATH, then beside the consumer and its lib/, then the loader's search
 * path (LD_LIBRARY_PATH, the consumer's RUNPATH, ld.so.cache).  Each candidate that fails
 * is noted and the search goes on. */
static void load_backend(void) {
    /* Ignored by set-user-ID programs, as $HIPDNN_PLUGIN_DIR is. */
    const char* env = secure_getenv("HIPDNN_BACKEND_PATH");
    if (env && *env) {
        struct stat st;
        if (stat(env, &st) == 0 && S_ISDIR(st.st_mode)) {
            if (try_in_folder(env, "$HIPDNN_BACKEND_PATH")) return;
        } else if (try_backend(env, "$HIPDNN_BACKEND_PATH")) {
            return;
        }
    }
    const char* self = hipdnnDlSelfDir();
    if (*self) {
        char lib_dir[PATH_MAX];
        if (try_in_folder(self, "beside the consumer")) return;
        snprintf(lib_dir, sizeof(lib_dir), "%s/lib", self);
        if (try_in_folder(lib_dir, "beside the consumer")) return;
    } else {
        note("the consumer's folder: unknown (dladdr failed)");
    }
    if (try_backend(BACKEND_NAME "." DYN_STR(HIPDNN_VERSION_MAJOR), "loader search path"))
        return;
    try_backend(BACKEND_NAME, "loader search path");
}

static int backend_loaded(void) {
    pthread_once(&g_backend.once, load_backend);
    return g_backend.loaded;
}

static hipdnnStatus_t not_loaded(const char* function) {
    snprintf(t_message, sizeof(t_message),
             "%s: no compatible hipdnn backend could be loaded (hipdnn.h %s); searched: %s",
             function, HEADER_VERSION, g_backend.searched);
    return HIPDNN_STATUS_NOT_INITIALIZED;
}

/* ---- the stubs -------------------------------------------------------------------- */

#define STATUS_STUB(name, params, args)                                                   \
    hipdnnStatus_t name params {                                                          \
        if (!backend_loaded()) return not_loaded(#name);                                  \
        return g_backend.fn.name args;                                                    \
    }
HIPDNN_STATUS_ENTRY_POINTS(STATUS_STUB)
#undef STATUS_STUB

/* Status names need no backend: a program that failed to load one still prints them. */
const char* hipdnnGetErrorString(hipdnnStatus_t status) {
    if (backend_loaded()) return g_backend.fn.hipdnnGetErrorString(status);
#define NAME(s)                                                                           \
    case s: return #s
    switch (status) {
        NAME(HIPDNN_STATUS_SUCCESS);
        NAME(HIPDNN_STATUS_NOT_INITIALIZED);
        NAME(HIPDNN_STATUS_BAD_PARAM);
        NAME(HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
        NAME(HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED);
        NAME(HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND);
        NAME(HIPDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT);
        NAME(HIPDNN_STATUS_BAD_PARAM_STREAM_MISMATCH);
        NAME(HIPDNN_STATUS_NOT_SUPPORTED);
        NAME(HIPDNN_STATUS_INTERNAL_ERROR);
        NAME(HIPDNN_STATUS_ALLOC_FAILED);
        NAME(HIPDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED);
        NAME(HIPDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED);
        NAME(HIPDNN_STATUS_EXECUTION_FAILED);
        NAME(HIPDNN_STATUS_PLUGIN_ERROR);
    }
#undef NAME
    return "HIPDNN_STATUS_UNKNOWN";
}

void hipdnnGetLastErrorString(char* message, size_t max_size) {
    if (backend_loaded()) {
        g_backend.fn.hipdnnGetLastErrorString(message, max_size);
        return;
    }
    if (message && max_size > 0) snprintf(message, max_size, "%s", t_message);
    t_message[0] = '\0';
}

const char* hipdnnPeekLastErrorString_ext(void) {
    if (backend_loaded()) return g_backend.fn.hipdnnPeekLastErrorString_ext();
    return t_message;
}

/* "" without a backend: the header's version is not the library's, and there is none. */
const char* hipdnnVersionString_ext(void) {
    if (backend_loaded()) return g_backend.fn.hipdnnVersionString_ext();
    not_loaded("hipdnnVersionString_ext");
    return "";
}
