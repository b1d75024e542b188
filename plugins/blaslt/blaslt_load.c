/* Opening the libraries the blaslt engine runs on, once per process: NVIDIA's driver
 * (libcuda.so.1), for a device and its primary context, then cuBLASLt, found where
 * PyTorch, NVIDIA's Python wheels and the CUDA toolkit put it.  Both are opened at run time
 * by the SDK (hipdnn_sdk_vendor.h: no DT_NEEDED), so the plugin loads anywhere and
 * declines, saying what it looked for, where either is missing. */
#include <pthread.h>
#include <stdlib.h>

#include "blaslt.h"

bl_lt_api g_lt;

static struct {
    pthread_once_t once;
    bool ok;
    char why[BLASLT_MSG_LEN];
    char library[600];
} g = {.once = PTHREAD_ONCE_INIT};

static bool accept_lt(void* lib, const char* name, char* why, size_t len) {
    const hipdnnSdkVendorSymbol syms[] = {
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
    if (!hipdnnSdkVendorBind(lib, syms, sizeof(syms) / sizeof(syms[0]), name,
                             BLASLT_ENGINE_NAME, why, len))
        return false;
    g_lt.get_status_name =
        (const char* (*)(bl_status))hipdnnSdkVendorOptional(lib, "cublasLtGetStatusName");
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

static const char* const k_sonames[] = {"libcublasLt.so.13", "libcublasLt.so.12",
                                        "libcublasLt.so.11"};
static const char* const k_wheels[] = {"nvidia/cu13/lib/libcublasLt.so.13",
                                       "nvidia/cublas/lib/libcublasLt.so.13",
                                       "nvidia/cublas/lib/libcublasLt.so.12",
                                       "nvidia/cublas/lib/libcublasLt.so.11"};
static const char* const k_home[] = {"lib64/libcublasLt.so"};
static const char* const k_system[] = {"/usr/local/cuda/lib64/libcublasLt.so"};

static const hipdnnSdkVendorLibrary k_cublaslt = {
    .who = BLASLT_ENGINE_NAME,
    .what = "cuBLASLt",
    .pin_env = "HIPDNN_BLASLT_LIBRARY",
    .sonames = k_sonames,
    .num_sonames = HIPDNN_SDK_VENDOR_COUNT(k_sonames),
    .wheels = k_wheels,
    .num_wheels = HIPDNN_SDK_VENDOR_COUNT(k_wheels),
    .home = k_home,
    .num_home = HIPDNN_SDK_VENDOR_COUNT(k_home),
    .system = k_system,
    .num_system = HIPDNN_SDK_VENDOR_COUNT(k_system),
    .sonames_text = "libcublasLt.so.13/.12/.11",
    .wheels_text = "nvidia/{cu13,cublas}/lib",
    .home_text = "/lib64",
    .system_text = "/usr/local/cuda/lib64",
    .accept = accept_lt,
};

static void load_once(void) {
    g.ok = hipdnnSdkCudaLoad(BLASLT_ENGINE_NAME, g.why, sizeof(g.why)) &&
           hipdnnSdkVendorOpen(&k_cublaslt, getenv("HIPDNN_BLASLT_LIBRARY"), g.why,
                               sizeof(g.why));
}

bool blaslt_load(char* why, size_t len) {
    pthread_once(&g.once, load_once);
    if (!g.ok) hipdnnSdkFormat(why, len, "%s", g.why);
    return g.ok;
}

const char* blaslt_library(void) { return g.library; }

const char* blaslt_status_text(bl_status st, char* buf, size_t len) {
    const char* name = g_lt.get_status_name ? g_lt.get_status_name(st) : NULL;
    hipdnnSdkFormat(buf, len, "%s (%d)", name ? name : "cuBLASLt status", st);
    return buf;
}
