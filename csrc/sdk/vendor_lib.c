/* NVIDIA's driver and a vendor's library opened at run time, for the engine plugins that
 * run on cuBLASLt or cuDNN (hipdnn_sdk_vendor.h): every dlopen of those plugins is here. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipdnn/hipdnn_sdk.h"
#include "hipdnn/hipdnn_sdk_plugin.h"
#include "hipdnn/hipdnn_sdk_vendor.h"

#define MAX_DEVICES 64
#define MAX_CANDIDATES 16
#define PATH_LEN 600

typedef int cu_result; /* CUresult */
typedef void* cu_context;

static struct {
    cu_result (*init)(unsigned);
    cu_result (*device_count)(int*);
    cu_result (*device_get)(int*, int);
    cu_result (*primary_retain)(cu_context*, int);
    cu_result (*ctx_get_current)(cu_context*);
    cu_result (*ctx_set_current)(cu_context);
    cu_result (*error_name)(cu_result, const char**); /* optional */
    int devices;
    pthread_mutex_t lock;
    cu_context primary[MAX_DEVICES]; /* retained on first use, kept for the process */
} g_cu = {.lock = PTHREAD_MUTEX_INITIALIZER};

bool hipdnnSdkVendorBind(void* lib, const hipdnnSdkVendorSymbol* syms, size_t n,
                         const char* lib_name, const char* who, char* why, size_t len) {
    for (size_t i = 0; i < n; ++i) {
        *syms[i].slot = dlsym(lib, syms[i].name);
        if (!*syms[i].slot)
            return hipdnnSdkDecline(why, len, who, "%s has no %s (not the library it is named "
                                    "for?)", lib_name, syms[i].name);
    }
    return true;
}

void* hipdnnSdkVendorOptional(void* lib, const char* name) { return dlsym(lib, name); }

/* ---- the driver ------------------------------------------------------------------- */

static const char* cu_error(cu_result r) {
    const char* name = NULL;
    if (!g_cu.error_name || g_cu.error_name(r, &name) != 0 || !name) return "a CUDA error";
    return name;
}

bool hipdnnSdkCudaLoad(const char* who, char* why, size_t len) {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return hipdnnSdkDecline(why, len, who, "no CUDA driver (%s)", dlerror());
    const hipdnnSdkVendorSymbol syms[] = {
        {(void**)&g_cu.init, "cuInit"},
        {(void**)&g_cu.device_count, "cuDeviceGetCount"},
        {(void**)&g_cu.device_get, "cuDeviceGet"},
        {(void**)&g_cu.primary_retain, "cuDevicePrimaryCtxRetain"},
        {(void**)&g_cu.ctx_get_current, "cuCtxGetCurrent"},
        {(void**)&g_cu.ctx_set_current, "cuCtxSetCurrent"},
    };
    if (!hipdnnSdkVendorBind(lib, syms, sizeof(syms) / sizeof(syms[0]), "libcuda.so.1", who,
                             why, len)) {
        dlclose(lib);
        return false;
    }
    g_cu.error_name = (cu_result(*)(cu_result, const char**))dlsym(lib, "cuGetErrorName");
    cu_result r = g_cu.init(0);
    if (r != 0)
        return hipdnnSdkDecline(why, len, who, "no CUDA device: cuInit returned %d (%s)", r,
                                cu_error(r));
    r = g_cu.device_count(&g_cu.devices);
    if (r != 0 || g_cu.devices <= 0)
        return hipdnnSdkDecline(why, len, who, "no CUDA device: cuDeviceGetCount %s",
                                r ? cu_error(r) : "found none");
    return true;
}

int hipdnnSdkCudaDeviceCount(void) { return g_cu.devices; }

bool hipdnnSdkCudaEnter(const char* who, int device, void** saved, char* why, size_t len) {
    *saved = NULL;
    const int n = g_cu.devices;
    if (device < 0 || device >= n || device >= MAX_DEVICES)
        return hipdnnSdkDecline(why, len, who, "device %d does not exist (%d CUDA device%s)",
                                device, n, n == 1 ? "" : "s");
    cu_result r = 0;
    pthread_mutex_lock(&g_cu.lock);
    if (!g_cu.primary[device]) {
        int dev = 0;
        cu_context c = NULL;
        r = g_cu.device_get(&dev, device);
        if (r == 0) r = g_cu.primary_retain(&c, dev);
        if (r == 0) g_cu.primary[device] = c;
    }
    cu_context want = g_cu.primary[device];
    pthread_mutex_unlock(&g_cu.lock);
    cu_context current = NULL;
    if (r == 0) r = g_cu.ctx_get_current(&current);
    if (r == 0 && current != want) r = g_cu.ctx_set_current(want);
    if (r != 0)
        return hipdnnSdkDecline(why, len, who, "device %d: its primary context: %d (%s)",
                                device, r, cu_error(r));
    if (current != want) *saved = current; /* NULL: none was current; ours may stay */
    return true;
}

void hipdnnSdkCudaLeave(void* saved) {
    if (saved) g_cu.ctx_set_current(saved);
}

/* ---- the vendor's library ----------------------------------------------------------- */

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

/* `count` paths, each `prefix`/path (or the path alone without a prefix), into names[]. */
static int add_paths(const char** names, int n, char (*buf)[PATH_LEN], const char* prefix,
                     const char* const* paths, int count) {
    for (int i = 0; i < count && n < MAX_CANDIDATES; ++i) {
        if (prefix) {
            snprintf(buf[n], sizeof(buf[n]), "%s/%s", prefix, paths[i]);
            names[n] = buf[n];
        } else {
            names[n] = paths[i];
        }
        ++n;
    }
    return n;
}

/* The candidates, in order (lib's comment in the header); their number. */
static int candidates(const hipdnnSdkVendorLibrary* lib, const char** names,
                      char (*buf)[PATH_LEN]) {
    int n = add_paths(names, 0, buf, NULL, lib->sonames, lib->num_sonames);
    for (int i = 0; i < lib->num_sonames && i < n; ++i) { /* one already loaded goes first */
        void* h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
        if (!h) continue;
        dlclose(h);
        names[i] = names[0];
        names[0] = lib->sonames[i];
        break;
    }
    char site[512];
    package_parent(site, sizeof(site));
    if (site[0]) n = add_paths(names, n, buf, site, lib->wheels, lib->num_wheels);
    const char* home = getenv("CUDA_HOME");
    if (home && *home) n = add_paths(names, n, buf, home, lib->home, lib->num_home);
    return add_paths(names, n, buf, NULL, lib->system, lib->num_system);
}

bool hipdnnSdkVendorOpen(const hipdnnSdkVendorLibrary* lib, const char* pin, char* why,
                         size_t len) {
    if (pin && *pin) {
        void* h = dlopen(pin, RTLD_NOW | RTLD_LOCAL);
        if (!h)
            return hipdnnSdkDecline(why, len, lib->who, "no %s: $%s: %s", lib->what,
                                    lib->pin_env, dlerror());
        if (lib->accept(h, pin, why, len)) return true;
        dlclose(h);
        return false;
    }
    const char* names[MAX_CANDIDATES];
    char(*buf)[PATH_LEN] = malloc(MAX_CANDIDATES * sizeof(*buf));
    if (!buf) return hipdnnSdkDecline(why, len, lib->who, "out of memory");
    const int n = candidates(lib, names, buf);
    for (int i = 0; i < n; ++i) {
        void* h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!h) continue;
        const bool ok = lib->accept(h, names[i], why, len);
        if (!ok) dlclose(h);
        free(buf);
        return ok;
    }
    free(buf);
    char site[512];
    package_parent(site, sizeof(site));
    const char* home = getenv("CUDA_HOME");
    const bool has_home = home && *home;
    return hipdnnSdkDecline(why, len, lib->who, "no %s found (looked for %s on the loader path, "
                            "in NVIDIA's wheels under %s/%s, in %s%s%s%s; $%s names one)",
                            lib->what, lib->sonames_text, site[0] ? site : "(no site)",
                            lib->wheels_text, has_home ? home : "",
                            has_home ? lib->home_text : "", has_home ? " and " : "",
                            lib->system_text, lib->pin_env);
}

/* ---- entry points ----------------------------------------------------------------- */

hipdnnPluginStatus_t hipdnnSdkVendorEngineIds(const char* who, bool (*load)(char*, size_t),
                                              const char* (*library)(void), uint64_t* ids,
                                              uint32_t max, uint32_t* num) {
    if (!num)
        return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "%s: GetAllEngineIds: NULL "
                                   "count", who);
    *num = 0;
    char why[HIPDNN_SDK_PLUGIN_MSG_LEN];
    if (!load(why, sizeof(why)))
        return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_NOT_SUPPORTED, "%s", why);
    static atomic_flag said = ATOMIC_FLAG_INIT;
    const int n = hipdnnSdkCudaDeviceCount();
    if (!atomic_flag_test_and_set(&said))
        hipdnnSdkPluginLog(HIPDNN_LOG_INFO, "%s: %s, %d CUDA device%s", who, library(), n,
                           n == 1 ? "" : "s");
    *num = 1;
    if (ids && max >= 1) ids[0] = hipdnnSdkFnv1a64(who);
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

hipdnnPluginStatus_t hipdnnSdkVendorEnterDevice(const char* who, bool (*load)(char*, size_t),
                                                const hipdnnPluginHandleInfo_t* info,
                                                int* device, void** saved) {
    char why[HIPDNN_SDK_PLUGIN_MSG_LEN];
    if (!load(why, sizeof(why)))
        return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_NOT_SUPPORTED, "%s", why);
    *device = info->struct_size >= sizeof(uint32_t) + sizeof(int32_t) ? info->device : 0;
    if (!hipdnnSdkCudaEnter(who, *device, saved, why, sizeof(why)))
        return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_INVALID_VALUE, "%s", why);
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}
