/* Opening the libraries the cudnn engine runs on, once per process: NVIDIA's driver
 * (libcuda.so.1), for a device and its primary context, then cuDNN 9, found where PyTorch,
 * NVIDIA's Python wheels and the CUDA toolkit put it.  Both are opened at run time by the
 * SDK (hipdnn_sdk_vendor.h: no DT_NEEDED), so the plugin loads anywhere and declines,
 * saying what it looked for, where either is missing.
 *
 * cuDNN 9 splits itself into sub-libraries (libcudnn_graph.so.9 holds the backend API,
 * libcudnn_cnn.so.9 and the engines' libraries the kernels); libcudnn.so.9 exports the
 * whole backend API and opens the sub-libraries beside itself on demand, so it is the one
 * library opened here. */
#include <pthread.h>
#include <stdlib.h>

#include "cudnn.h"

cd_api g_cd;

static struct {
    pthread_once_t once;
    bool ok;
    char why[CUDNN_MSG_LEN];
    char library[600];
} g = {.once = PTHREAD_ONCE_INIT};

static bool accept_cudnn(void* lib, const char* name, char* why, size_t len) {
    const hipdnnSdkVendorSymbol syms[] = {
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
    if (!hipdnnSdkVendorBind(lib, syms, sizeof(syms) / sizeof(syms[0]), name,
                             CUDNN_ENGINE_NAME, why, len))
        return false;
    /* cuDNN numbers its versions major * 1000 + minor * 100 + patch up to 8.x and
     * major * 10000 + minor * 100 + patch from 9.0. */
    const size_t v = g_cd.get_version();
    const size_t major = v >= 90000 ? v / 10000 : v / 1000;
    const size_t minor = v >= 90000 ? v / 100 % 100 : v / 100 % 10;
    if (v < CUDNN_MIN_VERSION)
        return hipdnnSdkDecline(why, len, CUDNN_ENGINE_NAME, "%s is cuDNN %zu.%zu.%zu "
                                "(cudnnGetVersion %zu); cudnn needs 9.0 or newer", name, major,
                                minor, v % 100, v);
    const hipdnnSdkVendorSymbol last[] = {
        {(void**)&g_cd.get_last_error, "cudnnGetLastErrorString"}};
    if (!hipdnnSdkVendorBind(lib, last, 1, name, CUDNN_ENGINE_NAME, why, len)) return false;
    hipdnnSdkFormat(g.library, sizeof(g.library), "%s (cuDNN %zu.%zu.%zu)", name, major, minor,
                    v % 100);
    return true;
}

#define SONAME "libcudnn.so.9"
static const char* const k_sonames[] = {SONAME};
/* nvidia-cudnn-cu12 / -cu13 put it in nvidia/cudnn/lib */
static const char* const k_wheels[] = {"nvidia/cudnn/lib/" SONAME, "nvidia/cu13/lib/" SONAME};
static const char* const k_home[] = {"lib64/" SONAME, "lib/" SONAME};
static const char* const k_system[] = {"/usr/local/cuda/lib64/" SONAME,
                                       "/usr/local/cuda/lib/" SONAME};

static const hipdnnSdkVendorLibrary k_cudnn = {
    .who = CUDNN_ENGINE_NAME,
    .what = "cuDNN",
    .pin_env = "HIPDNN_CUDNN_LIBRARY",
    .sonames = k_sonames,
    .num_sonames = HIPDNN_SDK_VENDOR_COUNT(k_sonames),
    .wheels = k_wheels,
    .num_wheels = HIPDNN_SDK_VENDOR_COUNT(k_wheels),
    .home = k_home,
    .num_home = HIPDNN_SDK_VENDOR_COUNT(k_home),
    .system = k_system,
    .num_system = HIPDNN_SDK_VENDOR_COUNT(k_system),
    .sonames_text = SONAME,
    .wheels_text = "nvidia/{cudnn,cu13}/lib",
    .home_text = "/lib64, lib",
    .system_text = "/usr/local/cuda/lib64 and /usr/local/cuda/lib",
    .accept = accept_cudnn,
};

static void load_once(void) {
    g.ok = hipdnnSdkCudaLoad(CUDNN_ENGINE_NAME, g.why, sizeof(g.why)) &&
           hipdnnSdkVendorOpen(&k_cudnn, getenv("HIPDNN_CUDNN_LIBRARY"), g.why,
                               sizeof(g.why));
}

bool cudnn_load(char* why, size_t len) {
    pthread_once(&g.once, load_once);
    if (!g.ok) hipdnnSdkFormat(why, len, "%s", g.why);
    return g.ok;
}

const char* cudnn_library(void) { return g.library; }

const char* cudnn_status_text(cd_status st, char* buf, size_t len) {
    char last[512];
    last[0] = '\0';
    g_cd.get_last_error(last, sizeof(last));
    const char* name = g_cd.get_error_string(st);
    hipdnnSdkFormat(buf, len, "%s (%d)%s%s", name ? name : "cuDNN status", st,
                    last[0] ? ": " : "", last);
    return buf;
}
