/* Opening the libraries the cudnn engine runs on, once per process: NVIDIA's driver
 * (libcuda.so.1), for a device and its primary context, then cuDNN 9, found where PyTorch,
 * NVIDIA's Python wheels and the CUDA toolkit put it.  Both are opened at run time (no
 * DT_NEEDED), so the plugin loads anywhere and declines, saying what it looked for, where
 * either is missing.  The only dlopen calls of the plugin are here.
 *
 * cuDNN 9 splits itself into sub-libraries (libcudnn_graph.so.9 holds the backend API,
 * libcudnn_cnn.so.9 and the engines' libraries the kernels); libcudnn.so.9 exports the
 * whole backend API and opens the sub-libraries beside itself on demand, so it is the one
 * library opened here. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudnn.h"

cd_api g_cd;
cd_cu_api g_cu;

#define MAX_DEVICES 64

static struct {
    pthread_once_t once;
    bool ok;
    char why[CUDNN_MSG_LEN];
    char library[600];
    int devices;
    pthread_mutex_t lock;
    cd_cu_context primary[MAX_DEVICES]; /* retained on first use, kept for the process */
} g = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER};

typedef struct {
    void** slot;
    const char* name;
} symbol;

static bool bind(void* lib, const symbol* syms, size_t n, const char* lib_name, char* why,
                 size_t len) {
    for (size_t i = 0; i < n; ++i) {
        *syms[i].slot = dlsym(lib, syms[i].name);
        if (!*syms[i].slot)
            return hipdnnSdkDecline(why, len, CUDNN_ENGINE_NAME, "%s has no %s (not the library "
                                    "it is named for?)", lib_name, syms[i].name);
    }
    return true;
}

static const char* cu_error(cd_cu_result r) {
    const char* name = NULL;
    if (!g_cu.error_name || g_cu.error_name(r, &name) != 0 || !name) return "a CUDA error";
    return name;
}

static bool load_driver(char* why, size_t len) {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return hipdnnSdkDecline(why, len, CUDNN_ENGINE_NAME, "no CUDA driver (%s)", dlerror());
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
    g_cu.error_name = (cd_cu_result(*)(cd_cu_result, const char**))dlsym(lib, "cuGetErrorName");
    cd_cu_result r = g_cu.init(0);
    if (r != 0)
        return hipdnnSdkDecline(why, len, CUDNN_ENGINE_NAME, "no CUDA device: cuInit returned "
                                "%d (%s)", r, cu_error(r));
    r = g_cu.device_count(&g.devices);
    if (r != 0 || g.devices <= 0)
        return hipdnnSdkDecline(why, len, CUDNN_ENGINE_NAME, "no CUDA device: cuDeviceGetCount "
                                "%s", r ? cu_error(r) : "found none");
    return true; /* the driver stays open for the process */
}

#define SONAME "libcudnn.so.9"

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
 * $HIPDNN_CUDNN_LIBRARY, when set, is the only one.  Otherwise: the name the loader finds
 * (LD_LIBRARY_PATH, ld.so.cache, or a cuDNN PyTorch already loaded), NVIDIA's wheels
 * beside the hipdnn package (nvidia-cudnn-cu12 / -cu13 put it in nvidia/cudnn/lib), then
 * the toolkit's lib64 and lib. */
static int candidates(const char** names, int max, char (*buf)[600], bool* pinned) {
    const char* pin = getenv("HIPDNN_CUDNN_LIBRARY");
    *pinned = pin && *pin;
    if (*pinned) {
        names[0] = pin;
        return 1;
    }
    static const char* const wheels[] = {"nvidia/cudnn/lib/" SONAME, "nvidia/cu13/lib/" SONAME};
    int n = 0;
    names[n++] = SONAME;
    char site[512];
    package_parent(site, sizeof(site));
    for (size_t i = 0; site[0] && i < sizeof(wheels) / sizeof(wheels[0]) && n < max; ++i) {
        snprintf(buf[n], sizeof(buf[n]), "%s/%s", site, wheels[i]);
        names[n] = buf[n];
        ++n;
    }
    const char* home = getenv("CUDA_HOME");
    static const char* const subdirs[] = {"lib64", "lib"};
    for (size_t i = 0; home && *home && i < 2 && n < max; ++i) {
        snprintf(buf[n], sizeof(buf[n]), "%s/%s/" SONAME, home, subdirs[i]);
        names[n] = buf[n];
        ++n;
    }
    if (n < max) names[n++] = "/usr/local/cuda/lib64/" SONAME;
    if (n < max) names[n++] = "/usr/local/cuda/lib/" SONAME;
    return n;
}

static bool bind_cudnn(void* lib, const char* name, char* why, size_t len) {
    const symbol syms[] = {
        {(void**)&g_cd.get_version, "cudnnGetVersion"},
        {(void**)&g_cd.get_error_string, "cudnnGetErrorString"},
        {(void**)&g_cd.create, "cudnnCreate"},
        {(void**)&g_cd.destroy, "cudnnDestroy"},
        {(void**)&g_cd.set_stream, "cudnnSetStream"},
        {(void**)&g_cd.create_descriptor, "cudnnBackendCreateDescriptor"},
        {(void**)&g_cd.destroy_descriptor, "cudnnBackendDestroyDescriptor"},
        {(void**)&g_cd.finalize, "cudnnBackendFinalize"},
        {(void**)&g_cd.set_attribute, "cudnnBackendSetAttribute"},
        {(void**)&g_cd.get_attribute, "cudnnBackendGetAttribute"},
        {(void**)&g_cd.execute, "cudnnBackendExecute"},
    };
    if (!bind(lib, syms, sizeof(syms) / sizeof(syms[0]), name, why, len)) return false;
    /* cuDNN numbers its versions major * 1000 + minor * 100 + patch up to 8.x and
     * major * 10000 + minor * 100 + patch from 9.0. */
    const size_t v = g_cd.get_version();
    const size_t major = v >= 90000 ? v / 10000 : v / 1000;
    const size_t minor = v >= 90000 ? v / 100 % 100 : v / 100 % 10;
    if (v < CUDNN_MIN_VERSION)
        return hipdnnSdkDecline(why, len, CUDNN_ENGINE_NAME, "%s is cuDNN %zu.%zu.%zu "
                                "(cudnnGetVersion %zu); cudnn needs 9.0 or newer", name, major,
                                minor, v % 100, v);
    g_cd.get_last_error = (void (*)(char*, size_t))dlsym(lib, "cudnnGetLastErrorString");
    if (!g_cd.get_last_error)
        return hipdnnSdkDecline(why, len, CUDNN_ENGINE_NAME, "%s has no "
                                "cudnnGetLastErrorString (not the library it is named for?)",
                                name);
    hipdnnSdkFormat(g.library, sizeof(g.library), "%s (cuDNN %zu.%zu.%zu)", name, major, minor,
                    v % 100);
    return true;
}

/* The first candidate that opens is the one: whole and new enough, or the reason.  A
 * cuDNN already in the process (PyTorch's) is what the soname finds first. */
static bool load_cudnn(char* why, size_t len) {
    const char* names[8];
    char buf[8][600];
    bool pinned = false;
    const int n = candidates(names, 8, buf, &pinned);
    for (int i = 0; i < n; ++i) {
        void* lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            if (pinned)
                return hipdnnSdkDecline(why, len, CUDNN_ENGINE_NAME, "no cuDNN: "
                                        "$HIPDNN_CUDNN_LIBRARY: %s", dlerror());
            continue;
        }
        if (bind_cudnn(lib, names[i], why, len)) return true;
        dlclose(lib);
        return false;
    }
    char site[512];
    package_parent(site, sizeof(site));
    const char* home = getenv("CUDA_HOME");
    return hipdnnSdkDecline(why, len, CUDNN_ENGINE_NAME, "no cuDNN found (looked for "
                            SONAME " on the loader path, in NVIDIA's wheels under "
                            "%s/nvidia/{cudnn,cu13}/lib, in %s%s/usr/local/cuda/lib64 and "
                            "/usr/local/cuda/lib; $HIPDNN_CUDNN_LIBRARY names one)",
                            site[0] ? site : "(no site)", home && *home ? home : "",
                            home && *home ? "/lib64, lib and " : "");
}

static void load_once(void) {
    g.ok = load_driver(g.why, sizeof(g.why)) && load_cudnn(g.why, sizeof(g.why));
}

bool cudnn_load(char* why, size_t len) {
    pthread_once(&g.once, load_once);
    if (!g.ok) hipdnnSdkFormat(why, len, "%s", g.why);
    return g.ok;
}

int cudnn_device_count(void) { return g.devices; }

const char* cudnn_library(void) { return g.library; }

bool cudnn_enter(int device, cd_cu_context* saved, char* why, size_t len) {
    *saved = NULL;
    if (device < 0 || device >= g.devices || device >= MAX_DEVICES)
        return hipdnnSdkDecline(why, len, CUDNN_ENGINE_NAME, "device %d does not exist (%d "
                                "CUDA device%s)", device, g.devices, g.devices == 1 ? "" : "s");
    cd_cu_result r = 0;
    pthread_mutex_lock(&g.lock);
    if (!g.primary[device]) {
        int dev = 0;
        cd_cu_context c = NULL;
        r = g_cu.device_get(&dev, device);
        if (r == 0) r = g_cu.primary_retain(&c, dev);
        if (r == 0) g.primary[device] = c;
    }
    cd_cu_context want = g.primary[device];
    pthread_mutex_unlock(&g.lock);
    cd_cu_context current = NULL;
    if (r == 0) r = g_cu.ctx_get_current(&current);
    if (r == 0 && current != want) r = g_cu.ctx_set_current(want);
    if (r != 0)
        return hipdnnSdkDecline(why, len, CUDNN_ENGINE_NAME, "device %d: its primary context: "
                                "%d (%s)", device, r, cu_error(r));
    if (current != want) *saved = current; /* NULL: none was current; ours may stay */
    return true;
}

void cudnn_leave(cd_cu_context saved) {
    if (saved) g_cu.ctx_set_current(saved);
}

const char* cudnn_status_text(cd_status st, char* buf, size_t len) {
    char last[512];
    last[0] = '\0';
    g_cd.get_last_error(last, sizeof(last));
    const char* name = g_cd.get_error_string(st);
    hipdnnSdkFormat(buf, len, "%s (%d)%s%s", name ? name : "cuDNN status", st,
                    last[0] ? ": " : "", last);
    return buf;
}
