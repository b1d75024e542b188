/* Run-time resolution of the GPU runtime (libamdhip64.so or libcudart.so), so that the
 * backend links none and runs on machines without a GPU.  Nothing here is loaded until a
 * device engine or a pointer probe needs it.  $HIPDNN_DEVICE_RUNTIME forces "hip" or
 * "cuda"; set[ug]id processes ignore it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* secure_getenv: set[ug]id processes ignore our variables */
#endif
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "dl.h"
#include "log.h"

/* Pointer attributes, read through the first int of a generously sized buffer (both
 * runtimes' structs start with the memory type).  What that int means differs:
 *   CUDA (cudaMemoryType):          0 unregistered, 1 host, 2 device, 3 managed
 *   HIP >= 6 (hipMemoryType):       0 unregistered, 1 host, 2 device, 3 managed, ...
 *   HIP 5 (hipMemoryType):          0 host, 1 device, 2 array, 3 unified, ...
 * so HIP's version decides the table (today's HIP 5 device pointers otherwise read as
 * host).  HIP 5 also has an isManaged field, which we do not need: unified reads as
 * managed. */
typedef int (*pointer_attributes_fn)(void* attrs, const void* ptr);
typedef int (*int_out_fn)(int* out);
typedef int (*void_fn)(void);

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static pointer_attributes_fn g_attrs;
static void_fn g_clear;
static int_out_fn g_get_device;
static bool g_hip5;
static const char* g_name = "none";

static bool try_runtime(const char* const* libs, const char* prefix, const char* name) {
    char sym[64];
    for (int i = 0; libs[i]; ++i) {
        void* lib = hipdnnDlOpen(libs[i]);
        if (!lib) continue;
        snprintf(sym, sizeof(sym), "%sPointerGetAttributes", prefix);
        *(void**)&g_attrs = hipdnnDlSymbol(lib, sym);
        snprintf(sym, sizeof(sym), "%sGetLastError", prefix);
        *(void**)&g_clear = hipdnnDlSymbol(lib, sym);
        snprintf(sym, sizeof(sym), "%sGetDevice", prefix);
        *(void**)&g_get_device = hipdnnDlSymbol(lib, sym);
        if (g_attrs) {
            g_name = name;
            if (strcmp(name, "hip") == 0) {
                int_out_fn version = NULL;
                int v = 0;
                *(void**)&version = hipdnnDlSymbol(lib, "hipRuntimeGetVersion");
                /* HIP encodes major * 10000000 + minor * 100000 + patch */
                g_hip5 = version && version(&v) == 0 && v < 60000000;
            }
            hipdnnLog(HIPDNN_LOG_INFO, "device runtime: %s (%s)%s", name, libs[i],
                      g_hip5 ? ", HIP 5 pointer types" : "");
            return true;
        }
        g_get_device = NULL;
        hipdnnDlClose(lib);
    }
    return false;
}

static void resolve_once(void) {
    static const char* const hip[] = {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5", NULL};
    static const char* const cuda[] = {"libcudart.so", "libcudart.so.13", "libcudart.so.12", NULL};
    const char* force = secure_getenv("HIPDNN_DEVICE_RUNTIME");
    bool want_hip = !force || !*force || strcmp(force, "hip") == 0;
    bool want_cuda = !force || !*force || strcmp(force, "cuda") == 0;
    if (force && *force && !want_hip && !want_cuda)
        hipdnnLog(HIPDNN_LOG_WARN, "HIPDNN_DEVICE_RUNTIME='%s' is not hip or cuda; ignored", force);
    if (want_hip && try_runtime(hip, "hip", "hip")) return;
    if (want_cuda) try_runtime(cuda, "cuda", "cuda");
}

/* pthread_once is not reentrant: its messages wait until it returns (log.h), so that a
 * log callback that creates a handle does not call back into it. */
static void resolve(void) {
    hipdnnLogDeferBegin();
    pthread_once(&g_once, resolve_once);
    hipdnnLogDeferEnd();
}

const char* hipdnnDeviceRuntimeName(void) {
    resolve();
    return g_name;
}

void hipdnnDeviceCurrent(int* device) {
    resolve();
    *device = 0;
    if (g_get_device && g_get_device(device) != 0) {
        *device = 0;
        if (g_clear) g_clear();
    }
}

hipdnnMemorySpace_t hipdnnDeviceSpaceFromType(int type, bool hip5) {
    if (hip5) {
        switch (type) {
        case 1: case 2: return HIPDNN_MEMORY_DEVICE; /* device, array */
        case 3: return HIPDNN_MEMORY_MANAGED;         /* unified */
        default: return HIPDNN_MEMORY_HOST;
        }
    }
    switch (type) {
    case 2: return HIPDNN_MEMORY_DEVICE;
    case 3: return HIPDNN_MEMORY_MANAGED;
    default: return HIPDNN_MEMORY_HOST; /* unregistered or pinned host */
    }
}

hipdnnMemorySpace_t hipdnnDevicePointerSpace(const void* ptr) {
    resolve();
    if (!g_attrs || !ptr) return HIPDNN_MEMORY_HOST;
    int attrs[64] = {0};
    if (g_attrs(attrs, ptr) != 0) {
        if (g_clear) g_clear(); /* an unregistered host pointer is reported as an error */
        return HIPDNN_MEMORY_HOST;
    }
    return hipdnnDeviceSpaceFromType(attrs[0], g_hip5);
}
