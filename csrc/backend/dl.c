/* dlopen and friends, in one small file (the backend and the dynamic stubs of
 * csrc/dynamic both link it). */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dl.h"

void* hipdnnDlOpen(const char* path) { return dlopen(path, RTLD_NOW | RTLD_LOCAL); }

void* hipdnnDlSymbol(void* lib, const char* name) { return lib ? dlsym(lib, name) : NULL; }

void hipdnnDlClose(void* lib) {
    if (lib) dlclose(lib);
}

const char* hipdnnDlError(void) {
    const char* e = dlerror();
    return e ? e : "unknown loader error";
}

void* hipdnnDlOpenFirst(const char* const* names, const char** opened, char* tried,
                        size_t len) {
    if (len) tried[0] = '\0';
    for (int i = 0; names[i]; ++i) {
        void* lib = hipdnnDlOpen(names[i]);
        if (lib) {
            *opened = names[i];
            return lib;
        }
        size_t used = strlen(tried);
        snprintf(tried + used, len - used, "%s%s: %s", used ? "; " : "", names[i],
                 hipdnnDlError());
    }
    return NULL;
}

static char g_self_dir[PATH_MAX];
static pthread_once_t g_dir_once = PTHREAD_ONCE_INIT;

static void find_self_dir(void) {
    Dl_info info;
    struct link_map* map = NULL;
    char resolved[PATH_MAX];
    const char* p = NULL;
    if (!dladdr1((void*)&hipdnnDlSelfDir, &info, (void**)&map, RTLD_DL_LINKMAP)) return;
    if (map && map->l_name[0] == '\0') {
        /* The main program: dladdr gives its argv[0], which may be relative to a folder
         * the process has since left. */
        ssize_t n = readlink("/proc/self/exe", resolved, sizeof(resolved) - 1);
        if (n <= 0) return;
        resolved[n] = '\0';
        p = resolved;
    } else if (info.dli_fname) {
        p = realpath(info.dli_fname, resolved) ? resolved : info.dli_fname;
    }
    const char* slash = p ? strrchr(p, '/') : NULL;
    if (slash) {
        size_t n = (size_t)(slash - p);
        if (n >= sizeof(g_self_dir)) n = sizeof(g_self_dir) - 1;
        memcpy(g_self_dir, p, n);
        g_self_dir[n] = '\0';
    }
}

const char* hipdnnDlSelfDir(void) {
    pthread_once(&g_dir_once, find_self_dir);
    return g_self_dir;
}
