// runtime.hip — the few runtime calls the engine's host code needs, behind C functions so
// that the host code stays vendor-neutral C.  Every failure is one line naming the call
// and the runtime's own error.
#include "hip_compat.h"
#include "hip_engine.h"

#include <stdio.h>

static void say(char* why, size_t len, const char* call, hipError_t e) {
    snprintf(why, len, "%s returned %d (%s: %s)", call, (int)e, hipGetErrorName(e),
             hipGetErrorString(e));
}

extern "C" const char* hipe_vendor(void) { return HD_VENDOR; }

extern "C" bool hipe_probe(int* device_count, char* why, size_t len) {
    int n = 0;
    const hipError_t e = hipGetDeviceCount(&n);
    *device_count = 0;
    if (e != hipSuccess) {
        (void)hipGetLastError();
        char call[160];
        say(call, sizeof(call), HD_API "GetDeviceCount", e);
        snprintf(why, len, "no " HD_VENDOR " device: %s", call);
        return false;
    }
    if (n < 1) {
        snprintf(why, len, "no " HD_VENDOR " device (" HD_API "GetDeviceCount found none)");
        return false;
    }
    *device_count = n;
    return true;
}

extern "C" bool hipe_get_device(int* device, char* why, size_t len) {
    const hipError_t e = hipGetDevice(device);
    if (e == hipSuccess) return true;
    (void)hipGetLastError();
    say(why, len, HD_API "GetDevice", e);
    return false;
}

extern "C" bool hipe_set_device(int device, char* why, size_t len) {
    const hipError_t e = hipSetDevice(device);
    if (e == hipSuccess) return true;
    (void)hipGetLastError();
    char call[64];
    snprintf(call, sizeof(call), HD_API "SetDevice(%d)", device);
    say(why, len, call, e);
    return false;
}

extern "C" bool hipe_sm_count(int device, int* count, char* why, size_t len) {
    const hipError_t e = hipDeviceGetAttribute(count, hipDeviceAttributeMultiprocessorCount, device);
    if (e == hipSuccess) return true;
    (void)hipGetLastError();
    char call[96];
    snprintf(call, sizeof(call), HD_API "DeviceGetAttribute(multiprocessor count, %d)", device);
    say(why, len, call, e);
    return false;
}
