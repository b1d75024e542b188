/* hipdnn_sdk_vendor.h — for engine plugins that run on a vendor's library (cuBLASLt,
 * cuDNN): NVIDIA's driver and the library opened at run time (no DT_NEEDED), so that the
 * plugin loads anywhere and declines, saying what it looked for, where either is missing.
 * csrc/sdk/vendor_lib.c holds every dlopen of these plugins.
 *
 * The state (the driver's functions, device count and retained primary contexts) is the
 * plugin's own, as each links its own copy of the SDK; call hipdnnSdkCudaLoad once, from
 * the plugin's pthread_once, before the rest.  Failures write one line "<who>: ..." into
 * `why` (hipdnnSdkDecline) and return false.
 */
#ifndef HIPDNN_SDK_VENDOR_H
#define HIPDNN_SDK_VENDOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hipdnn/hipdnn_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- NVIDIA's driver (libcuda.so.1) ------------------------------------------------ */

/* Opens the driver, cuInit(0) and counts the devices: false with "no CUDA driver (...)" or
 * "no CUDA device: ...".  The driver stays open for the process. */
bool hipdnnSdkCudaLoad(const char* who, char* why, size_t len);
int hipdnnSdkCudaDeviceCount(void);
/* Makes `device`'s primary context (retained on first use, kept for the process) current
 * on this thread; *saved is the context to give back to hipdnnSdkCudaLeave (NULL where
 * none was current or it was ours).  Thread-safe. */
bool hipdnnSdkCudaEnter(const char* who, int device, void** saved, char* why, size_t len);
void hipdnnSdkCudaLeave(void* saved);

/* ---- the vendor's library --------------------------------------------------------- */

/* A function the plugin needs: where its address goes and its name. */
typedef struct {
    void** slot;
    const char* name;
} hipdnnSdkVendorSymbol;

/* Every symbol of syms[n] from lib (a dlopen handle): false with "<lib_name> has no <name>
 * (not the library it is named for?)" for the first missing one. */
bool hipdnnSdkVendorBind(void* lib, const hipdnnSdkVendorSymbol* syms, size_t n,
                         const char* lib_name, const char* who, char* why, size_t len);
/* An optional symbol of lib: its address or NULL. */
void* hipdnnSdkVendorOptional(void* lib, const char* name);

/* The number of entries of a static array of paths, for hipdnnSdkVendorLibrary's counts. */
#define HIPDNN_SDK_VENDOR_COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Where a library is looked for, in order: the pinned path alone when given (the value of
 * $pin_env, read by the plugin); else the sonames the
 * loader resolves (one already in the process, PyTorch's, first), the wheels' paths below
 * the folder that holds the hipdnn package (site-packages), the paths below $CUDA_HOME,
 * then the absolute ones.  The first that opens is the one: `accept` binds and checks it
 * (true, or false with the reason, which ends the search).  The *_text fields make the
 * message that lists where it looked when none opens. */
typedef struct {
    const char* who;  /* the engine, for messages */
    const char* what; /* "cuBLASLt" */
    const char* pin_env;
    const char* const* sonames;
    int num_sonames;
    const char* const* wheels;
    int num_wheels;
    const char* const* home;
    int num_home;
    const char* const* system;
    int num_system;
    const char* sonames_text; /* "libcublasLt.so.13/.12/.11" */
    const char* wheels_text;  /* "nvidia/{cu13,cublas}/lib" */
    const char* home_text;    /* "/lib64" */
    const char* system_text;  /* "/usr/local/cuda/lib64" */
    bool (*accept)(void* lib, const char* name, char* why, size_t len);
} hipdnnSdkVendorLibrary;

/* Opens the library as `lib` says (`pin`: $pin_env's value, NULL or "" when unset); false
 * with the reason (nothing opened, the pinned one missing, or accept's). */
bool hipdnnSdkVendorOpen(const hipdnnSdkVendorLibrary* lib, const char* pin, char* why,
                         size_t len);

/* ---- the entry points of a plugin on a vendor library ------------------------------- */

/* GetAllEngineIds of a plugin of one engine `who` (id hipdnnSdkFnv1a64(who)): load(why,
 * len) opens its libraries, or the plugin declines to load (NOT_SUPPORTED with the
 * reason); the first time, the log (info) says `library()` and the device count. */
hipdnnPluginStatus_t hipdnnSdkVendorEngineIds(const char* who, bool (*load)(char*, size_t),
                                              const char* (*library)(void), uint64_t* ids,
                                              uint32_t max, uint32_t* num);
/* CreateForDevice's first steps: the libraries loaded (NOT_SUPPORTED), *device from info (0
 * for an ABI 1.0 info) and its primary context made current (INVALID_VALUE), *saved the
 * one to give back; SUCCESS, else the status with the last error set. */
hipdnnPluginStatus_t hipdnnSdkVendorEnterDevice(const char* who, bool (*load)(char*, size_t),
                                                const hipdnnPluginHandleInfo_t* info,
                                                int* device, void** saved);

#ifdef __cplusplus
}
#endif

#endif /* HIPDNN_SDK_VENDOR_H */
