/* transfer.c — ORT's data transfer for hipdnn-ep's device memory: host to device, device
 * to host and device to device, through hipdnn's memcpy.  ORT copies graph inputs and
 * initializers to the GPU with it, results of the GPU device's fused nodes back to the
 * host (for the CPU EP's nodes and for the session's outputs), and, for a stream-aware
 * EP, may name a sync stream per copy: then the copy is enqueued on that stream, and a
 * copy touching host memory also waits for it, so that the host buffer is ready (or free
 * to reuse) when CopyTensors returns.  Without a stream the copy is synchronous and, on
 * the runtime's default stream, ordered after the work of hipdnn-ep's streams (which are
 * blocking streams, hipdnnStreamCreate_ext). */
#include <stdio.h>
#include <stdlib.h>

#include "hipdnn_ep.h"

typedef struct {
    OrtDataTransferImpl base; /* first: ORT hands back OrtDataTransferImpl* */
    ep_factory* f;
} ep_transfer;

static const ep_transfer* self(const OrtDataTransferImpl* t) { return (const ep_transfer*)t; }

/* Host memory: the CPU's, or memory of another device that the host can address. */
static bool is_host(const OrtMemoryDevice* d) {
    return g_ep_api->MemoryDevice_GetDeviceType(d) == OrtMemoryInfoDeviceType_CPU ||
           g_ep_api->MemoryDevice_GetMemoryType(d) == OrtDeviceMemoryType_HOST_ACCESSIBLE;
}

static bool is_ours(const ep_factory* f, const OrtMemoryDevice* d) {
    return f->gpu_memory_device && g_ep_api->MemoryDevice_AreEqual(d, f->gpu_memory_device);
}

static bool can_copy(const ep_factory* f, const OrtMemoryDevice* src, const OrtMemoryDevice* dst) {
    if (!src || !dst) return false;
    return (is_ours(f, src) && (is_ours(f, dst) || is_host(dst))) ||
           (is_host(src) && is_ours(f, dst));
}

static bool ORT_API_CALL t_can_copy(const OrtDataTransferImpl* t, const OrtMemoryDevice* src,
                                    const OrtMemoryDevice* dst) {
    return can_copy(self(t)->f, src, dst);
}

static const char* where(const ep_factory* f, const OrtMemoryDevice* d, char* buf, size_t len) {
    if (is_ours(f, d)) snprintf(buf, len, "GPU %d", f->gpu.ordinal);
    else snprintf(buf, len, "host");
    return buf;
}

static OrtStatus* copy_one(ep_factory* f, size_t i, const OrtValue* src, OrtValue* dst,
                           OrtSyncStream* stream) {
    const OrtMemoryDevice* sd = g_ep_api->Value_GetMemoryDevice(src);
    const OrtMemoryDevice* dd = g_ep_api->Value_GetMemoryDevice(dst);
    char from[32], to[32];
    if (!can_copy(f, sd, dd))
        return ep_status(ORT_INVALID_ARGUMENT, "data transfer: tensor %zu: no copy from %s to "
                         "%s memory (hipdnn-ep copies between the host and its GPU %d)", i,
                         sd ? where(f, sd, from, sizeof(from)) : "a non-tensor",
                         dd ? where(f, dd, to, sizeof(to)) : "a non-tensor", f->gpu.ordinal);
    where(f, sd, from, sizeof(from));
    where(f, dd, to, sizeof(to));
    size_t bytes = 0, dst_bytes = 0;
    OrtStatus* st = g_ort->GetTensorSizeInBytes(src, &bytes);
    if (!st) st = g_ort->GetTensorSizeInBytes(dst, &dst_bytes);
    if (st) return st;
    if (bytes != dst_bytes)
        return ep_status(ORT_INVALID_ARGUMENT, "data transfer: tensor %zu: %zu bytes (%s) into "
                         "%zu bytes (%s)", i, bytes, from, dst_bytes, to);
    if (bytes == 0) return NULL;
    const void* s = NULL;
    void* d = NULL;
    if ((st = g_ort->GetTensorData(src, &s)) || (st = g_ort->GetTensorMutableData(dst, &d)))
        return st;
    if ((st = ep_gpu_enter(f->gpu.ordinal, "data transfer"))) return st;
    hipdnnStream_t h = stream ? (hipdnnStream_t)g_ort->SyncStream_GetHandle(stream) : NULL;
    bool host = is_host(sd) || is_host(dd);
    hipdnnStatus_t hs;
    const char* call = "hipdnnDeviceMemcpy_ext";
    if (h) {
        call = "hipdnnDeviceMemcpyAsync_ext";
        hs = hipdnnDeviceMemcpyAsync_ext(d, s, bytes, h);
        if (hs == HIPDNN_STATUS_SUCCESS && host) {
            call = "hipdnnStreamSynchronize_ext";
            hs = hipdnnStreamSynchronize_ext(h);
        }
    } else {
        hs = hipdnnDeviceMemcpy_ext(d, s, bytes);
    }
    if (hs != HIPDNN_STATUS_SUCCESS)
        return ep_status(ORT_FAIL, "data transfer: tensor %zu, %zu bytes %s -> %s: %s: %s: %s", i,
                         bytes, from, to, call, hipdnnGetErrorString(hs),
                         hipdnnPeekLastErrorString_ext());
    char how[48] = "synchronous";
    if (h) snprintf(how, sizeof(how), "on stream %p", (void*)h);
    ep_log(f->logger, ORT_LOGGING_LEVEL_VERBOSE, ORT_LOGGING_LEVEL_VERBOSE,
           "data transfer: %zu bytes %s -> %s (%s)", bytes, from, to, how);
    return NULL;
}

static OrtStatus* ORT_API_CALL t_copy(OrtDataTransferImpl* t, const OrtValue** src,
                                      OrtValue** dst, OrtSyncStream** streams, size_t n) {
    ep_factory* f = self(t)->f;
    for (size_t i = 0; i < n; ++i) {
        OrtStatus* st = copy_one(f, i, src[i], dst[i], streams ? streams[i] : NULL);
        if (st) return st;
    }
    return NULL;
}

static void ORT_API_CALL t_release(OrtDataTransferImpl* t) { free((ep_transfer*)t); }

OrtStatus* ep_transfer_create(ep_factory* f, OrtDataTransferImpl** out) {
    *out = NULL;
    if (!f->gpu_memory) return NULL; /* host only: ORT copies host memory itself */
    ep_transfer* t = calloc(1, sizeof(*t));
    if (!t) return ep_status(ORT_FAIL, "CreateDataTransfer: out of memory");
    t->f = f;
    t->base.ort_version_supported = ORT_API_VERSION;
    t->base.Release = t_release;
    t->base.CanCopy = t_can_copy;
    t->base.CopyTensors = t_copy;
    *out = &t->base;
    return NULL;
}
