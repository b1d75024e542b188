/* Which GPU runtime the backend uses, chosen once per process, and the public device API
 * (hipdnn.h's "device runtime" section) over it.  $HIPDNN_DEVICE_RUNTIME forces "hip" or
 * "cuda"; set[ug]id processes ignore it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* secure_getenv */
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "error.h"
#include "log.h"

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static hipdnnDeviceRuntime g_rt;
static bool g_have;
static char g_why[1536]; /* every runtime tried and its answer, when none is usable */

/* The vendor's free, after which g_rt.free drops the kept pointer ranges (after: a range
 * asked about meanwhile is dropped too). */
static hipdnnStatus_t (*g_vendor_free)(void* ptr);

static hipdnnStatus_t free_and_forget(void* ptr) {
    hipdnnStatus_t st = g_vendor_free(ptr);
    hipdnnPointerCacheDrop();
    return st;
}

static void append(const char* line) {
    size_t used = strlen(g_why);
    snprintf(g_why + used, sizeof(g_why) - used, "%s%s", used ? "; " : "", line);
}

static void resolve_once(void) {
    const char* force = secure_getenv("HIPDNN_DEVICE_RUNTIME");
    bool forced = force && *force;
    bool want_hip = !forced || strcmp(force, "hip") == 0;
    bool want_cuda = !forced || strcmp(force, "cuda") == 0;
    char why[700];
    if (forced && !want_hip && !want_cuda) {
        hipdnnLog(HIPDNN_LOG_WARN, "HIPDNN_DEVICE_RUNTIME='%s' is not hip or cuda; trying both",
                  force);
        want_hip = want_cuda = true;
    } else if (forced) {
        snprintf(why, sizeof(why), "HIPDNN_DEVICE_RUNTIME=%s allows only that runtime", force);
        append(why);
    }
    why[0] = '\0';
    if (want_hip && hipdnnDeviceLoadHip(&g_rt, why, sizeof(why))) {
        g_have = true;
    } else {
        if (want_hip) append(why);
        why[0] = '\0';
        if (want_cuda && hipdnnDeviceLoadCuda(&g_rt, why, sizeof(why))) g_have = true;
        else if (want_cuda) append(why);
    }
    if (g_have) {
        g_vendor_free = g_rt.free;
        g_rt.free = free_and_forget;
        g_why[0] = '\0';
        hipdnnLog(HIPDNN_LOG_INFO, "device runtime: %s (%s), %d device%s", g_rt.name,
                  g_rt.library, g_rt.device_count, g_rt.device_count == 1 ? "" : "s");
    } else {
        hipdnnLog(HIPDNN_LOG_INFO, "no device runtime: %s", g_why);
    }
}

/* pthread_once is not reentrant: its messages wait until it returns (log.h), so that a
 * log callback that creates a handle does not call back into it.  g_resolved spares every
 * later call (execute asks for the runtime several times a call) the deferral. */
static atomic_bool g_resolved;

static void resolve(void) {
    if (atomic_load_explicit(&g_resolved, memory_order_acquire)) return;
    hipdnnLogDeferBegin();
    pthread_once(&g_once, resolve_once);
    hipdnnLogDeferEnd();
    atomic_store_explicit(&g_resolved, true, memory_order_release);
}

const hipdnnDeviceRuntime* hipdnnDeviceRuntimeGet(void) {
    resolve();
    return g_have ? &g_rt : NULL;
}

const char* hipdnnDeviceRuntimeWhyNone(void) {
    resolve();
    return g_have ? "" : g_why;
}

const char* hipdnnDeviceRuntimeName(void) {
    const hipdnnDeviceRuntime* rt = hipdnnDeviceRuntimeGet();
    return rt ? rt->name : "none";
}

void hipdnnDeviceIdentity(int device, char* buf, size_t len) {
    const hipdnnDeviceRuntime* rt = hipdnnDeviceRuntimeGet();
    if (!rt) {
        snprintf(buf, len, "host");
        return;
    }
    char what[256] = "";
    rt->describe(device, what, sizeof(what));
    snprintf(buf, len, "%s:%d:%s", rt->name, device, what);
}

void hipdnnDeviceCurrent(int* device) {
    const hipdnnDeviceRuntime* rt = hipdnnDeviceRuntimeGet();
    *device = 0;
    if (rt && rt->get_device(device) != HIPDNN_STATUS_SUCCESS) {
        *device = 0;
        hipdnnClearError();
    }
}

hipdnnMemorySpace_t hipdnnDevicePointerSpace(const void* ptr) {
    const hipdnnDeviceRuntime* rt = hipdnnDeviceRuntimeGet();
    int device;
    if (!rt || !ptr) return HIPDNN_MEMORY_HOST;
    return rt->pointer_space(ptr, &device);
}

/* Past this many pieces a buffer is taken as mapped: the walk stays cheap. */
#define MAX_RANGES 4096

bool hipdnnDeviceExtentBeyond(const void* ptr, uint64_t bytes, uint64_t* inside) {
    const hipdnnDeviceRuntime* rt = hipdnnDeviceRuntimeGet();
    uintptr_t base;
    size_t size;
    if (!rt || !rt->pointer_range || !bytes || !rt->pointer_range(ptr, &base, &size))
        return false;
    return hipdnnDeviceExtentBeyondFrom(ptr, bytes, base, size, inside);
}

bool hipdnnDeviceExtentBeyondFrom(const void* ptr, uint64_t bytes, uintptr_t base, size_t size,
                                  uint64_t* inside) {
    const hipdnnDeviceRuntime* rt = hipdnnDeviceRuntimeGet();
    uintptr_t p = (uintptr_t)ptr, want, end;
    if (!rt || !rt->pointer_range || !bytes || !size || p < base) return false;
    if (__builtin_add_overflow(p, (uintptr_t)bytes, &want)) want = UINTPTR_MAX;
    if (__builtin_add_overflow(base, (uintptr_t)size, &end)) return false;
    for (int i = 0; end < want; ++i) {
        if (i == MAX_RANGES) return false;
        if (!rt->pointer_range((const void*)end, &base, &size) || base != end ||
            __builtin_add_overflow(base, (uintptr_t)size, &end) || !size)
            break;
    }
    if (end >= want) return false;
    *inside = (uint64_t)(end - p);
    return true;
}

/* A copy or fill through the public API stays inside the device allocations it names. */
static hipdnnStatus_t check_extent(const char* fn, const char* what, const void* ptr,
                                   size_t size) {
    uint64_t inside;
    if (!hipdnnDeviceExtentBeyond(ptr, size, &inside)) return HIPDNN_STATUS_SUCCESS;
    return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND, "%s: %s %p is given %zu bytes but "
                      "its device allocation ends %llu bytes after it", fn, what, ptr, size,
                      (unsigned long long)inside);
}

/* ---- public API ------------------------------------------------------------------- */

/* The runtime, or NOT_SUPPORTED naming what was tried; every entry point starts here. */
static hipdnnStatus_t need(const char* fn, const hipdnnDeviceRuntime** rt) {
    hipdnnClearError();
    *rt = hipdnnDeviceRuntimeGet();
    if (*rt) return HIPDNN_STATUS_SUCCESS;
    return hipdnnFail(HIPDNN_STATUS_NOT_SUPPORTED, "%s: no GPU runtime with a device: %s", fn,
                      hipdnnDeviceRuntimeWhyNone());
}

#define NEED(fn)                                   \
    const hipdnnDeviceRuntime* rt;                 \
    do {                                           \
        hipdnnStatus_t s_ = need((fn), &rt);       \
        if (s_) return s_;                         \
    } while (0)

#define NOT_NULL(p, fn, what)                                                              \
    do {                                                                                   \
        if (!(p)) return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NULL_POINTER, "%s: %s is NULL", \
                                    (fn), (what));                                         \
    } while (0)

HIPDNN_EXPORT hipdnnStatus_t hipdnnGetDeviceRuntime_ext(const char** name, int* device_count) {
    hipdnnClearError();
    const hipdnnDeviceRuntime* rt = hipdnnDeviceRuntimeGet();
    if (name) *name = rt ? rt->name : "none";
    if (device_count) *device_count = rt ? rt->device_count : 0;
    if (rt) return HIPDNN_STATUS_SUCCESS;
    return hipdnnFail(HIPDNN_STATUS_NOT_SUPPORTED, "no GPU runtime with a device: %s",
                      hipdnnDeviceRuntimeWhyNone());
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnDeviceGet_ext(int* device) {
    NEED("hipdnnDeviceGet_ext");
    NOT_NULL(device, "hipdnnDeviceGet_ext", "device");
    return rt->get_device(device);
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnDeviceSet_ext(int device) {
    NEED("hipdnnDeviceSet_ext");
    if (device < 0 || device >= rt->device_count)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND,
                          "hipdnnDeviceSet_ext: device %d does not exist (%s has %d)", device,
                          rt->name, rt->device_count);
    return rt->set_device(device);
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnDeviceMalloc_ext(void** ptr, size_t size) {
    NEED("hipdnnDeviceMalloc_ext");
    NOT_NULL(ptr, "hipdnnDeviceMalloc_ext", "ptr");
    *ptr = NULL;
    return size ? rt->malloc(ptr, size) : HIPDNN_STATUS_SUCCESS;
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnDeviceFree_ext(void* ptr) {
    if (!ptr) {
        hipdnnClearError();
        return HIPDNN_STATUS_SUCCESS;
    }
    NEED("hipdnnDeviceFree_ext");
    return rt->free(ptr);
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnDeviceMemcpy_ext(void* dst, const void* src, size_t size) {
    NEED("hipdnnDeviceMemcpy_ext");
    if (!size) return HIPDNN_STATUS_SUCCESS;
    NOT_NULL(dst, "hipdnnDeviceMemcpy_ext", "dst");
    NOT_NULL(src, "hipdnnDeviceMemcpy_ext", "src");
    hipdnnStatus_t st = check_extent("hipdnnDeviceMemcpy_ext", "dst", dst, size);
    if (!st) st = check_extent("hipdnnDeviceMemcpy_ext", "src", src, size);
    return st ? st : rt->memcpy(dst, src, size, NULL, true);
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnDeviceMemcpyAsync_ext(void* dst, const void* src, size_t size,
                                                         hipdnnStream_t stream) {
    NEED("hipdnnDeviceMemcpyAsync_ext");
    if (!size) return HIPDNN_STATUS_SUCCESS;
    NOT_NULL(dst, "hipdnnDeviceMemcpyAsync_ext", "dst");
    NOT_NULL(src, "hipdnnDeviceMemcpyAsync_ext", "src");
    hipdnnStatus_t st = check_extent("hipdnnDeviceMemcpyAsync_ext", "dst", dst, size);
    if (!st) st = check_extent("hipdnnDeviceMemcpyAsync_ext", "src", src, size);
    return st ? st : rt->memcpy(dst, src, size, stream, false);
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnDeviceMemset_ext(void* ptr, int value, size_t size) {
    NEED("hipdnnDeviceMemset_ext");
    if (!size) return HIPDNN_STATUS_SUCCESS;
    NOT_NULL(ptr, "hipdnnDeviceMemset_ext", "ptr");
    hipdnnStatus_t st = check_extent("hipdnnDeviceMemset_ext", "ptr", ptr, size);
    return st ? st : rt->memset(ptr, value, size, NULL, true);
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnDeviceMemsetAsync_ext(void* ptr, int value, size_t size,
                                                         hipdnnStream_t stream) {
    NEED("hipdnnDeviceMemsetAsync_ext");
    if (!size) return HIPDNN_STATUS_SUCCESS;
    NOT_NULL(ptr, "hipdnnDeviceMemsetAsync_ext", "ptr");
    hipdnnStatus_t st = check_extent("hipdnnDeviceMemsetAsync_ext", "ptr", ptr, size);
    return st ? st : rt->memset(ptr, value, size, stream, false);
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnDeviceSynchronize_ext(void) {
    NEED("hipdnnDeviceSynchronize_ext");
    return rt->device_synchronize();
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnStreamCreate_ext(hipdnnStream_t* stream) {
    NEED("hipdnnStreamCreate_ext");
    NOT_NULL(stream, "hipdnnStreamCreate_ext", "stream");
    *stream = NULL;
    return rt->stream_create(stream);
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnStreamDestroy_ext(hipdnnStream_t stream) {
    if (!stream) {
        hipdnnClearError();
        return HIPDNN_STATUS_SUCCESS;
    }
    NEED("hipdnnStreamDestroy_ext");
    return rt->stream_destroy(stream);
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnStreamSynchronize_ext(hipdnnStream_t stream) {
    NEED("hipdnnStreamSynchronize_ext");
    return rt->stream_synchronize(stream);
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnStreamWaitEvent_ext(hipdnnStream_t stream, hipdnnEvent_t event) {
    NEED("hipdnnStreamWaitEvent_ext");
    NOT_NULL(event, "hipdnnStreamWaitEvent_ext", "event");
    return rt->stream_wait_event(stream, event);
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnEventCreate_ext(hipdnnEvent_t* event) {
    NEED("hipdnnEventCreate_ext");
    NOT_NULL(event, "hipdnnEventCreate_ext", "event");
    *event = NULL;
    return rt->event_create(event);
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnEventDestroy_ext(hipdnnEvent_t event) {
    if (!event) {
        hipdnnClearError();
        return HIPDNN_STATUS_SUCCESS;
    }
    NEED("hipdnnEventDestroy_ext");
    return rt->event_destroy(event);
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnEventRecord_ext(hipdnnEvent_t event, hipdnnStream_t stream) {
    NEED("hipdnnEventRecord_ext");
    NOT_NULL(event, "hipdnnEventRecord_ext", "event");
    return rt->event_record(event, stream);
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnEventSynchronize_ext(hipdnnEvent_t event) {
    NEED("hipdnnEventSynchronize_ext");
    NOT_NULL(event, "hipdnnEventSynchronize_ext", "event");
    return rt->event_synchronize(event);
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnEventElapsedTime_ext(float* ms, hipdnnEvent_t start,
                                                        hipdnnEvent_t end) {
    NEED("hipdnnEventElapsedTime_ext");
    NOT_NULL(ms, "hipdnnEventElapsedTime_ext", "ms");
    NOT_NULL(start, "hipdnnEventElapsedTime_ext", "start");
    NOT_NULL(end, "hipdnnEventElapsedTime_ext", "end");
    return rt->event_elapsed(ms, start, end);
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnPointerGetMemorySpace_ext(const void* ptr,
                                                             hipdnnMemorySpace_t* space,
                                                             int* device) {
    hipdnnClearError();
    const hipdnnDeviceRuntime* rt = hipdnnDeviceRuntimeGet();
    int dev = -1;
    hipdnnMemorySpace_t s = rt && ptr ? rt->pointer_space(ptr, &dev) : HIPDNN_MEMORY_HOST;
    if (space) *space = s;
    if (device) *device = dev;
    return HIPDNN_STATUS_SUCCESS;
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnPointerGetExtent_ext(const void* ptr, uint64_t bytes,
                                                        uint64_t* inside) {
    hipdnnClearError();
    NOT_NULL(inside, "hipdnnPointerGetExtent_ext", "inside");
    if (!ptr || !hipdnnDeviceExtentBeyond(ptr, bytes, inside)) *inside = bytes;
    return HIPDNN_STATUS_SUCCESS;
}
