/* dlopen and friends, in one small file. */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

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

static char g_backend_dir[PATH_MAX];
static pthread_once_t g_dir_once = PTHREAD_ONCE_INIT;

static void find_backend_dir(void) {
    Dl_info info;
    if (dladdr((void*)&hipdnnDlBackendDir, &info) && info.dli_fname) {
        char resolved[PATH_MAX];
        const char* p = realpath(info.dli_fname, resolved) ? resolved : info.dli_fname;
        const char* slash = strrchr(p, '/');
        if (slash) {
            size_t n = (size_t)(slash - p);
            if (n >= sizeof(g_backend_dir)) n = sizeof(g_backend_dir) - 1;
            memcpy(g_backend_dir, p, n);
            g_backend_dir[n] = '\0';
        }
    }
}

const char* hipdnnDlBackendDir(void) {
    pthread_once(&g_dir_once, find_backend_dir);
    return g_backend_dir;
}
