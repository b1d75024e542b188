/* Run-time resolution of the GPU runtime.  $HIPDNN_DEVICE_RUNTIME forces "hip" or "cuda". */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* secure_getenv: set[ug]id processes ignore our variables */
#endif
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "dl.h"
#include "log.h"

/* hipPointerAttribute_t and cudaPointerAttributes both start with an int memory type
 * (CUDA: 0 unregistered, 1 host, 2 device, 3 managed; HIP 5: 1 host, 2 device, 3 array,
 * 4 unified in field `type` after the first int on old versions).  We only read the
 * first field of a generously sized buffer. */
typedef int (*pointer_attributes_fn)(void* attrs, const void* ptr);
typedef int (*get_last_error_fn)(void);

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static pointer_attributes_fn g_attrs;
static get_last_error_fn g_clear;
static const char* g_name = "none";

static bool try_runtime(const char* const* libs, const char* attrs_sym, const char* err_sym,
                        const char* name) {
    for (int i = 0; libs[i]; ++i) {
        void* lib = hipdnnDlOpen(libs[i]);
        if (!lib) continue;
        *(void**)&g_attrs = hipdnnDlSymbol(lib, attrs_sym);
        *(void**)&g_clear = hipdnnDlSymbol(lib, err_sym);
        if (g_attrs) {
            g_name = name;
            hipdnnLog(HIPDNN_LOG_INFO, "device runtime: %s (%s)", name, libs[i]);
            return true;
        }
        hipdnnDlClose(lib);
    }
    return false;
}

static void resolve(void) {
    static const char* const hip[] = {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5", NULL};
    static const char* const cuda[] = {"libcudart.so", "libcudart.so.13", "libcudart.so.12", NULL};
    const char* force = secure_getenv("HIPDNN_DEVICE_RUNTIME");
    bool want_hip = !force || !*force || strcmp(force, "hip") == 0;
    bool want_cuda = !force || !*force || strcmp(force, "cuda") == 0;
    if (force && *force && !want_hip && !want_cuda)
        hipdnnLog(HIPDNN_LOG_WARN, "HIPDNN_DEVICE_RUNTIME='%s' is not hip or cuda; ignored", force);
    if (want_hip && try_runtime(hip, "hipPointerGetAttributes", "hipGetLastError", "hip")) return;
    if (want_cuda) try_runtime(cuda, "cudaPointerGetAttributes", "cudaGetLastError", "cuda");
}

const char* hipdnnDeviceRuntimeName(void) {
    pthread_once(&g_once, resolve);
    return g_name;
}

hipdnnMemorySpace_t hipdnnDevicePointerSpace(const void* ptr) {
    pthread_once(&g_once, resolve);
    if (!g_attrs || !ptr) return HIPDNN_MEMORY_HOST;
    int attrs[64] = {0};
    if (g_attrs(attrs, ptr) != 0) {
        if (g_clear) g_clear(); /* an unregistered host pointer is reported as an error */
        return HIPDNN_MEMORY_HOST;
    }
    /* CUDA >= 11: type 2 device, 3 managed (usable from both; count as device). */
    return attrs[0] >= 2 ? HIPDNN_MEMORY_DEVICE : HIPDNN_MEMORY_HOST;
}
