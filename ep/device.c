/* device.c — the GPU behind hipdnn-ep's GPU device: what hipdnn's device runtime reports
 * (the backend opens AMD's HIP runtime or NVIDIA's driver itself, so hipdnn-ep links
 * neither), and the calling thread's device set before each runtime call ORT makes from a
 * thread of its own. */
#include <stdio.h>
#include <string.h>

#include "hipdnn_ep.h"

void ep_gpu_probe(ep_gpu* out) {
    memset(out, 0, sizeof(*out));
    const char* name = NULL;
    int count = 0;
    hipdnnStatus_t st = hipdnnGetDeviceRuntime_ext(&name, &count);
    if (st != HIPDNN_STATUS_SUCCESS || !name || count < 1) {
        snprintf(out->reason, sizeof(out->reason), "hipdnn's device runtime has no device: %s",
                 st != HIPDNN_STATUS_SUCCESS ? hipdnnPeekLastErrorString_ext() : "0 devices");
        return;
    }
    if (!strcmp(name, "cuda")) out->vendor_id = EP_VENDOR_NVIDIA;
    else if (!strcmp(name, "hip")) out->vendor_id = EP_VENDOR_AMD;
    else {
        snprintf(out->reason, sizeof(out->reason), "device runtime '%s' is not one hipdnn-ep "
                 "knows (cuda, hip)", name);
        return;
    }
    int ordinal = 0;
    st = hipdnnDeviceGet_ext(&ordinal);
    if (st != HIPDNN_STATUS_SUCCESS) {
        snprintf(out->reason, sizeof(out->reason), "hipdnnDeviceGet_ext: %s: %s",
                 hipdnnGetErrorString(st), hipdnnPeekLastErrorString_ext());
        return;
    }
    snprintf(out->runtime, sizeof(out->runtime), "%s", name);
    out->ordinal = ordinal;
    out->count = count;
    out->present = true;
}

OrtStatus* ep_gpu_enter(int ordinal, const char* what) {
    int current = -1;
    hipdnnStatus_t st = hipdnnDeviceGet_ext(&current);
    if (st == HIPDNN_STATUS_SUCCESS && current == ordinal) return NULL;
    if (st == HIPDNN_STATUS_SUCCESS) st = hipdnnDeviceSet_ext(ordinal);
    if (st == HIPDNN_STATUS_SUCCESS) return NULL;
    return ep_status(ORT_FAIL, "%s: making GPU %d current: %s: %s", what, ordinal,
                     hipdnnGetErrorString(st), hipdnnPeekLastErrorString_ext());
}
