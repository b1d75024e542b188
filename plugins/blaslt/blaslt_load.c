/* Opening the libraries the blaslt engine runs on, once per process: NVIDIA's driver
 * (libcuda.so.1), for a device and its primary context, then cuBLASLt, found where
 * PyTorch, NVIDIA's Python wheels and the CUDA toolkit put it.  Both are opened at run time
 * (no DT_NEEDED), so the plugin loads anywhere and declines, saying what it looked for,
 * where either is missing.  The only dlopen calls of the plugin are here. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blaslt.h"

bl_lt_api g_lt;
bl_cu_api g_cu;

#define MAX_DEVICES 64

static struct {
    pthread_once_t once;
    bool ok;
    char why[BLASLT_MSG_LEN];
    char library[600];
    int devices;
    pthread_mutex_t lock;
    bl_cu_context primary[MAX_DEVICES]; /* retained on first use, kept for the process */
} g = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER};

typedef struct {
    void** slot;
    const char* name;
} symbol;

/* Every symbol of `syms` from lib; false naming the first missing one. */
static bool bind(void* lib, const symbol* syms, size_t n, const char* lib_name, char* why,
                 size_t len) {
    for (size_t i = 0; i < n; ++i) {
        *syms[i].slot = dlsym(lib, syms[i].name);
        if (!*syms[i].slot)
            return hipdnnSdkDecline(why, len, BLASLT_ENGINE_NAME, "%s has no %s (not the library "
                                    "it is named for?)", lib_name, syms[i].name);
    }
    return true;
}

static const char* cu_error(bl_cu_result r) {
    const char* name = NULL;
    if (!g_cu.error_name || g_cu.error_name(r, &name) != 0 || !name) return "a CUDA error";
    return name;
}

/* The driver and its device count. */
static bool load_driver(char* why, size_t len) {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return hipdnnSdkDecline(why, len, BLASLT_ENGINE_NAME, "no CUDA driver (%s)", dlerror());
    const symbol syms[] = {
        {(void**)&g_cu.init, "cuInit"},
        {(void**)&g_cu.device_count, "cuDeviceGetCount"},
        {(void**)&g_cu.device_get, "cuDeviceGet"},
        {(void**)&g_cu.primary_retain, "cuDevicePrimaryCtxRetain"},
        {(void**)&g_cu.ctx_get_current, "cuCtxGetCurrent"},
        {(void**)&g_cu.ctx_set_current, "cuCtxSetCurrent"},
    };
    if (!bind(lib, syms, sizeof(syms) / sizeof(syms[0]), "libcuda.so.1", why, len)) {
        dlclose(lib);
        return false;
    }
    g_cu.error_name = (bl_cu_result(*)(bl_cu_result, const char**))dlsym(lib, "cuGetErrorName");
    bl_cu_result r = g_cu.init(0);
    if (r != 0)
        return hipdnnSdkDecline(why, len, BLASLT_ENGINE_NAME, "no CUDA device: cuInit returned "
                                "%d (%s)", r, cu_error(r));
    r = g_cu.device_count(&g.devices);
    if (r != 0 || g.devices <= 0)
        return hipdnnSdkDecline(why, len, BLASLT_ENGINE_NAME, "no CUDA device: cuDeviceGetCount "
                                "%s", r ? cu_error(r) : "found none");
    return true; /* the driver stays open for the process */
}

/* The names the loader resolves, newest first: tried before any path. */
static const char* const k_sonames[] = {"libcublasLt.so.13", "libcublasLt.so.12",
                                        "libcublasLt.so.11"};
#define NUM_SONAMES 3

/* The folder that holds the hipdnn package (site-packages for a wheel), from where this
 * plugin lies: <site>/hipdnn/lib/hipdnn_plugins/engines/<plugin>.so.  "" if elsewhere. */
static void package_parent(char* out, size_t len) {
    Dl_info info;
    out[0] = '\0';
    if (!dladdr((void*)&package_parent, &info) || !info.dli_fname) return;
    static const char tail[] = "/hipdnn/lib/hipdnn_plugins/engines/";
    const char* at = strstr(info.dli_fname, tail);
    if (at && !strchr(at + sizeof(tail) - 1, '/'))
        hipdnnSdkFormat(out, len, "%.*s", (int)(at - info.dli_fname), info.dli_fname);
}

/* The candidate paths, in order, into names[] (storage in buf); returns their number.
 * $HIPDNN_BLASLT_LIBRARY, when set, is the only one.  Otherwise: the names the loader
 * finds (LD_LIBRARY_PATH, ld.so.cache, or a cuBLASLt PyTorch already loaded), NVIDIA's
 * wheels beside the hipdnn package, then the toolkit. */
static int candidates(const char** names, int max, char (*buf)[600], bool* pinned) {
    const char* pin = getenv("HIPDNN_BLASLT_LIBRARY");
    *pinned = pin && *pin;
    if (*pinned) {
        names[0] = pin;
        return 1;
    }
    static const char* const wheels[] = {"nvidia/cu13/lib/libcublasLt.so.13",
                                         "nvidia/cublas/lib/libcublasLt.so.13",
                                         "nvidia/cublas/lib/libcublasLt.so.12",
                                         "nvidia/cublas/lib/libcublasLt.so.11"};
    int n = 0;
    for (int i = 0; i < NUM_SONAMES && n < max; ++i) names[n++] = k_sonames[i];
    char site[512];
    package_parent(site, sizeof(site));
    for (size_t i = 0; site[0] && i < sizeof(wheels) / sizeof(wheels[0]) && n < max; ++i) {
        snprintf(buf[n], sizeof(buf[n]), "%s/%s", site, wheels[i]);
        names[n] = buf[n];
        ++n;
    }
    const char* home = getenv("CUDA_HOME");
    if (home && *home && n < max) {
        snprintf(buf[n], sizeof(buf[n]), "%s/lib64/libcublasLt.so", home);
        names[n] = buf[n];
        ++n;
    }
    if (n < max) names[n++] = "/usr/local/cuda/lib64/libcublasLt.so";
    return n;
}

static bool bind_lt(void* lib, const char* name, char* why, size_t len) {
    const symbol syms[] = {
        {(void**)&g_lt.get_version, "cublasLtGetVersion"},
        {(void**)&g_lt.create, "cublasLtCreate"},
        {(void**)&g_lt.destroy, "cublasLtDestroy"},
        {(void**)&g_lt.desc_create, "cublasLtMatmulDescCreate"},
        {(void**)&g_lt.desc_destroy, "cublasLtMatmulDescDestroy"},
        {(void**)&g_lt.desc_set, "cublasLtMatmulDescSetAttribute"},
        {(void**)&g_lt.layout_create, "cublasLtMatrixLayoutCreate"},
        {(void**)&g_lt.layout_destroy, "cublasLtMatrixLayoutDestroy"},
        {(void**)&g_lt.layout_set, "cublasLtMatrixLayoutSetAttribute"},
        {(void**)&g_lt.pref_create, "cublasLtMatmulPreferenceCreate"},
        {(void**)&g_lt.pref_destroy, "cublasLtMatmulPreferenceDestroy"},
        {(void**)&g_lt.pref_set, "cublasLtMatmulPreferenceSetAttribute"},
        {(void**)&g_lt.heuristic, "cublasLtMatmulAlgoGetHeuristic"},
        {(void**)&g_lt.matmul, "cublasLtMatmul"},
    };
    if (!bind(lib, syms, sizeof(syms) / sizeof(syms[0]), name, why, len)) return false;
    g_lt.get_status_name = (const char* (*)(bl_status))dlsym(lib, "cublasLtGetStatusName");
    /* cuBLAS numbered its versions major * 1000 + minor * 100 + patch until 11.x had minors
     * past 9, then major * 10000 + minor * 100 + patch. */
    const size_t v = g_lt.get_version();
    const size_t major = v >= 100000 ? v / 10000 : v / 1000;
    const size_t minor = v >= 100000 ? v / 100 % 100 : v / 100 % 10;
    if (major < BLASLT_MIN_MAJOR)
        return hipdnnSdkDecline(why, len, BLASLT_ENGINE_NAME, "%s is cuBLASLt %zu.%zu.%zu "
                                "(cublasLtGetVersion %zu); blaslt needs %d.0 or newer", name,
                                major, minor, v % 100, v, BLASLT_MIN_MAJOR);
    hipdnnSdkFormat(g.library, sizeof(g.library), "%s (cuBLASLt %zu.%zu.%zu)", name, major,
                    minor, v % 100);
    return true;
}

/* The first candidate that opens is the one: whole and new enough, or the reason.  A
 * cuBLASLt already in the process (PyTorch's) goes first, so that one copy serves both. */
static bool load_cublaslt(char* why, size_t len) {
    const char* names[12];
    char buf[12][600];
    bool pinned = false;
    const int n = candidates(names, 12, buf, &pinned);
    for (int i = 0; !pinned && i < NUM_SONAMES && i < n; ++i) {
        void* lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
        if (!lib) continue;
        dlclose(lib);
        names[i] = names[0];
        names[0] = k_sonames[i];
        break;
    }
    for (int i = 0; i < n; ++i) {
        void* lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            if (pinned)
                return hipdnnSdkDecline(why, len, BLASLT_ENGINE_NAME, "no cuBLASLt: "
                                        "$HIPDNN_BLASLT_LIBRARY: %s", dlerror());
            continue;
        }
        if (bind_lt(lib, names[i], why, len)) return true;
        dlclose(lib);
        return false;
    }
    char site[512];
    package_parent(site, sizeof(site));
    const char* home = getenv("CUDA_HOME");
    return hipdnnSdkDecline(why, len, BLASLT_ENGINE_NAME, "no cuBLASLt found (looked for "
                            "libcublasLt.so.13/.12/.11 on the loader path, in NVIDIA's wheels "
                            "under %s/nvidia/{cu13,cublas}/lib, in %s%s/usr/local/cuda/lib64; "
                            "$HIPDNN_BLASLT_LIBRARY names one)", site[0] ? site : "(no site)",
                            home && *home ? home : "", home && *home ? "/lib64 and " : "");
}

static void load_once(void) {
    g.ok = load_driver(g.why, sizeof(g.why)) && load_cublaslt(g.why, sizeof(g.why));
}

bool blaslt_load(char* why, size_t len) {
    pthread_once(&g.once, load_once);
    if (!g.ok) hipdnnSdkFormat(why, len, "%s", g.why);
    return g.ok;
}

int blaslt_device_count(void) { return g.devices; }

const char* blaslt_library(void) { return g.library; }

bool blaslt_enter(int device, bl_cu_context* saved, char* why, size_t len) {
    *saved = NULL;
    if (device < 0 || device >= g.devices || device >= MAX_DEVICES)
        return hipdnnSdkDecline(why, len, BLASLT_ENGINE_NAME, "device %d does not exist (%d "
                                "CUDA device%s)", device, g.devices, g.devices == 1 ? "" : "s");
    bl_cu_result r = 0;
    pthread_mutex_lock(&g.lock);
    if (!g.primary[device]) {
        int dev = 0;
        bl_cu_context c = NULL;
        r = g_cu.device_get(&dev, device);
        if (r == 0) r = g_cu.primary_retain(&c, dev);
        if (r == 0) g.primary[device] = c;
    }
    bl_cu_context want = g.primary[device];
    pthread_mutex_unlock(&g.lock);
    bl_cu_context current = NULL;
    if (r == 0) r = g_cu.ctx_get_current(&current);
    if (r == 0 && current != want) r = g_cu.ctx_set_current(want);
    if (r != 0)
        return hipdnnSdkDecline(why, len, BLASLT_ENGINE_NAME, "device %d: its primary context: "
                                "%d (%s)", device, r, cu_error(r));
    if (current != want) *saved = current; /* NULL: none was current; ours may stay */
    return true;
}

void blaslt_leave(bl_cu_context saved) {
    if (saved) g_cu.ctx_set_current(saved);
}

const char* blaslt_status_text(bl_status st, char* buf, size_t len) {
    const char* name = g_lt.get_status_name ? g_lt.get_status_name(st) : NULL;
    hipdnnSdkFormat(buf, len, "%s (%d)", name ? name : "cuBLASLt status", st);
    return buf;
}
