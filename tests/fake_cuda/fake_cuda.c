/* fake_cuda.c — a stand-in for NVIDIA's libcuda.so.1, for tests on machines without a GPU:
 * the driver API calls the backend's device runtime uses (csrc/backend/device_cuda.c),
 * over host memory.  "Device" memory is malloc'd and remembered, so pointer queries tell
 * it from host memory; work is done at once, so streams and events are only handles.
 *
 * Built as build/tests/fake_cuda/libcuda.so.1 and used only when a test puts that folder
 * on LD_LIBRARY_PATH with HIPDNN_DEVICE_RUNTIME=cuda.  FAKE_CUDA_NO_DEVICE=1 reports no
 * device; FAKE_CUDA_OOM=1 fails every allocation with CUDA_ERROR_OUT_OF_MEMORY.  Streams
 * capture into graphs (fake_graph.c).  The device is described as an H100 SXM would be
 * (132 SMs at 1.98 GHz, compute capability 9.0, HBM3 at 2.619 GHz on 5120 bits).  Every
 * entry point counts its calls (fake_calls.c).  What CUDA calls unsafe during a capture
 * (allocating, freeing, synchronizing) fails with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and
 * invalidates the captures whose mode forbids it to this thread (fake_graph.c). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_calls.h"
#include "fake_graph.h"

#define EXPORT __attribute__((visibility("default")))

typedef int CUresult;
enum { OK = 0, INVALID_VALUE = 1, OUT_OF_MEMORY = 2, NOT_INITIALIZED = 3, NO_DEVICE = 100,
       INVALID_HANDLE = 400 };

#define MAX_ALLOCS 65536
static struct {
    uintptr_t begin, end;
} g_allocs[MAX_ALLOCS];
static int g_num_allocs;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_initialized;
static _Thread_local void* t_context;
static int g_primary; /* the one context's identity */

static int find_alloc(uintptr_t p) {
    for (int i = 0; i < g_num_allocs; ++i)
        if (p >= g_allocs[i].begin && p < g_allocs[i].end) return i;
    return -1;
}

EXPORT CUresult cuInit(unsigned flags) {
    FAKE_CALLED();
    (void)flags;
    g_initialized = 1;
    return getenv("FAKE_CUDA_NO_DEVICE") ? NO_DEVICE : OK;
}
EXPORT CUresult cuDriverGetVersion(int* v) { FAKE_CALLED(); *v = 13000; return OK; }
EXPORT CUresult cuDeviceGetCount(int* n) {
    FAKE_CALLED();
    if (!g_initialized) return NOT_INITIALIZED;
    *n = getenv("FAKE_CUDA_NO_DEVICE") ? 0 : 1;
    return OK;
}
EXPORT CUresult cuDeviceGet(int* dev, int ordinal) {
    FAKE_CALLED();
    if (ordinal != 0) return INVALID_VALUE;
    *dev = 0;
    return OK;
}
EXPORT CUresult cuDevicePrimaryCtxRetain(void** ctx, int dev) {
    FAKE_CALLED();
    if (dev != 0) return INVALID_VALUE;
    *ctx = &g_primary;
    return OK;
}
EXPORT CUresult cuCtxGetCurrent(void** ctx) { FAKE_CALLED(); *ctx = t_context; return OK; }
EXPORT CUresult cuCtxSetCurrent(void* ctx) { FAKE_CALLED(); t_context = ctx; return OK; }
EXPORT CUresult cuCtxGetDevice(int* dev) {
    FAKE_CALLED();
    if (!t_context) return INVALID_HANDLE;
    *dev = 0;
    return OK;
}
EXPORT CUresult cuCtxSynchronize(void) {
    FAKE_CALLED();
    if (fake_capture_forbids(NULL)) return FAKE_CAPTURE_UNSUPPORTED;
    return t_context ? OK : INVALID_HANDLE;
}

EXPORT CUresult cuDeviceGetName(char* name, int len, int dev) {
    FAKE_CALLED();
    if (dev != 0 || len < 1) return INVALID_VALUE;
    strncpy(name, "Fake H100 (hipdnn tests)", (size_t)len - 1);
    name[len - 1] = '\0';
    return OK;
}
EXPORT CUresult cuDeviceTotalMem_v2(size_t* bytes, int dev) {
    FAKE_CALLED();
    if (dev != 0) return INVALID_VALUE;
    *bytes = (size_t)80 << 30;
    return OK;
}
/* The attributes the backend reads; FAKE_CUDA_NO_ATTRIBUTES=1 answers none of them. */
EXPORT CUresult cuDeviceGetAttribute(int* value, int attr, int dev) {
    FAKE_CALLED();
    if (dev != 0 || getenv("FAKE_CUDA_NO_ATTRIBUTES")) return INVALID_VALUE;
    switch (attr) {
    case 13: *value = 1980000; return OK; /* CLOCK_RATE, kHz */
    case 16: *value = 132; return OK;     /* MULTIPROCESSOR_COUNT */
    case 36: *value = 2619000; return OK; /* MEMORY_CLOCK_RATE, kHz */
    case 37: *value = 5120; return OK;    /* GLOBAL_MEMORY_BUS_WIDTH, bits */
    case 75: *value = 9; return OK;       /* COMPUTE_CAPABILITY_MAJOR */
    case 76: *value = 0; return OK;       /* COMPUTE_CAPABILITY_MINOR */
    default: return INVALID_VALUE;
    }
}

EXPORT CUresult cuMemAlloc_v2(unsigned long long* p, size_t size) {
    FAKE_CALLED();
    if (!t_context) return INVALID_HANDLE;
    if (fake_capture_forbids(NULL)) return FAKE_CAPTURE_UNSUPPORTED;
    if (getenv("FAKE_CUDA_OOM") || size == 0) return size ? OUT_OF_MEMORY : INVALID_VALUE;
    void* m = aligned_alloc(256, (size + 255) / 256 * 256);
    if (!m) return OUT_OF_MEMORY;
    memset(m, 0xCD, size); /* like fresh device memory: not zeros */
    pthread_mutex_lock(&g_lock);
    if (g_num_allocs == MAX_ALLOCS) {
        pthread_mutex_unlock(&g_lock);
        free(m);
        return OUT_OF_MEMORY;
    }
    g_allocs[g_num_allocs].begin = (uintptr_t)m;
    g_allocs[g_num_allocs].end = (uintptr_t)m + size;
    ++g_num_allocs;
    pthread_mutex_unlock(&g_lock);
    *p = (uintptr_t)m;
    return OK;
}

EXPORT CUresult cuMemFree_v2(unsigned long long p) {
    FAKE_CALLED();
    if (fake_capture_forbids(NULL)) return FAKE_CAPTURE_UNSUPPORTED;
    pthread_mutex_lock(&g_lock);
    int i = find_alloc((uintptr_t)p);
    if (i < 0 || g_allocs[i].begin != (uintptr_t)p) {
        pthread_mutex_unlock(&g_lock);
        return INVALID_VALUE;
    }
    g_allocs[i] = g_allocs[--g_num_allocs];
    pthread_mutex_unlock(&g_lock);
    free((void*)(uintptr_t)p);
    return OK;
}

/* Device memory must stay inside its allocation: a copy that runs past it is the error a
 * real driver would report (or the fault it would take). */
static int inside(uintptr_t p, size_t n) {
    pthread_mutex_lock(&g_lock);
    int i = find_alloc(p);
    int ok = i < 0 || p + n <= g_allocs[i].end;
    pthread_mutex_unlock(&g_lock);
    return ok;
}

EXPORT CUresult cuMemcpyAsync(unsigned long long dst, unsigned long long src, size_t n, void* s) {
    FAKE_CALLED();
    if (!t_context) return INVALID_HANDLE;
    if (!inside((uintptr_t)dst, n) || !inside((uintptr_t)src, n)) return INVALID_VALUE;
    if (fake_stream_capturing(s)) return fake_capture_copy(s, (uintptr_t)dst, (uintptr_t)src, n, 0, 0);
    memmove((void*)(uintptr_t)dst, (const void*)(uintptr_t)src, n);
    return OK;
}
EXPORT CUresult cuMemsetD8Async(unsigned long long dst, unsigned char v, size_t n, void* s) {
    FAKE_CALLED();
    if (!t_context) return INVALID_HANDLE;
    if (!inside((uintptr_t)dst, n)) return INVALID_VALUE;
    if (fake_stream_capturing(s)) return fake_capture_copy(s, (uintptr_t)dst, 0, n, 1, v);
    memset((void*)(uintptr_t)dst, v, n);
    return OK;
}

static int g_handles; /* streams and events are distinct non-NULL tokens */
EXPORT CUresult cuStreamCreate(void** s, unsigned flags) {
    FAKE_CALLED();
    (void)flags;
    *s = fake_stream_new();
    ++g_handles;
    return *s ? OK : OUT_OF_MEMORY;
}
EXPORT CUresult cuStreamDestroy_v2(void* s) { FAKE_CALLED(); fake_stream_free(s); return OK; }
EXPORT CUresult cuStreamSynchronize(void* s) {
    FAKE_CALLED();
    if (fake_capture_forbids(s)) return FAKE_CAPTURE_UNSUPPORTED;
    return t_context ? OK : INVALID_HANDLE;
}
typedef struct {
    struct timespec at;
    fake_capture_mark mark; /* recorded in a capture: a wait on it forks or joins */
} fake_event;

EXPORT CUresult cuStreamWaitEvent(void* s, void* e, unsigned f) {
    FAKE_CALLED();
    (void)f;
    return e ? fake_capture_wait(s, &((fake_event*)e)->mark) : INVALID_HANDLE;
}

EXPORT CUresult cuEventCreate(void** e, unsigned flags) {
    FAKE_CALLED();
    (void)flags;
    *e = calloc(1, sizeof(fake_event));
    return *e ? OK : OUT_OF_MEMORY;
}
EXPORT CUresult cuEventDestroy_v2(void* e) { FAKE_CALLED(); free(e); return OK; }
EXPORT CUresult cuEventRecord(void* e, void* s) {
    FAKE_CALLED();
    if (!e) return INVALID_HANDLE;
    clock_gettime(CLOCK_MONOTONIC, &((fake_event*)e)->at);
    fake_capture_mark_on(s, &((fake_event*)e)->mark);
    return OK;
}
EXPORT CUresult cuEventSynchronize(void* e) {
    FAKE_CALLED();
    if (e && fake_capture_marked(&((fake_event*)e)->mark)) return FAKE_CAPTURED_EVENT;
    if (fake_capture_forbids(NULL)) return FAKE_CAPTURE_UNSUPPORTED;
    return e ? OK : INVALID_HANDLE;
}
EXPORT CUresult cuEventElapsedTime_v2(float* ms, void* a, void* b) {
    FAKE_CALLED();
    if (!a || !b) return INVALID_HANDLE;
    const struct timespec *x = &((fake_event*)a)->at, *y = &((fake_event*)b)->at;
    *ms = (float)((y->tv_sec - x->tv_sec) * 1e3 + (y->tv_nsec - x->tv_nsec) / 1e6);
    return OK;
}
EXPORT CUresult cuEventElapsedTime(float* ms, void* a, void* b) { return cuEventElapsedTime_v2(ms, a, b); }

/* MEMORY_TYPE (2): 2 for our allocations, else 0; IS_MANAGED (8): 0; DEVICE_ORDINAL (9). */
EXPORT CUresult cuPointerGetAttributes(unsigned n, int* attrs, void** data, unsigned long long p) {
    FAKE_CALLED();
    pthread_mutex_lock(&g_lock);
    int a = find_alloc((uintptr_t)p), dev = a >= 0;
    uintptr_t begin = dev ? g_allocs[a].begin : 0, end = dev ? g_allocs[a].end : 0;
    pthread_mutex_unlock(&g_lock);
    for (unsigned i = 0; i < n; ++i) {
        switch (attrs[i]) {
        case 2: *(unsigned*)data[i] = dev ? 2u : 0u; break;
        case 8: *(unsigned*)data[i] = 0; break;
        case 9: *(int*)data[i] = dev ? 0 : -2; break;
        case 11: *(unsigned long long*)data[i] = begin; break; /* the allocation's range */
        case 12: *(size_t*)data[i] = end - begin; break;
        default: return INVALID_VALUE;
        }
    }
    return OK;
}

static const char* name_of(CUresult r) {
    switch (r) {
    case OK: return "CUDA_SUCCESS";
    case INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
    case OUT_OF_MEMORY: return "CUDA_ERROR_OUT_OF_MEMORY";
    case NOT_INITIALIZED: return "CUDA_ERROR_NOT_INITIALIZED";
    case NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
    case INVALID_HANDLE: return "CUDA_ERROR_INVALID_HANDLE";
    case FAKE_ILLEGAL_STATE: return "CUDA_ERROR_ILLEGAL_STATE";
    case FAKE_CAPTURE_UNSUPPORTED: return "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED";
    case FAKE_CAPTURE_INVALIDATED: return "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED";
    case FAKE_CAPTURE_MERGE: return "CUDA_ERROR_STREAM_CAPTURE_MERGE";
    case FAKE_CAPTURE_UNJOINED: return "CUDA_ERROR_STREAM_CAPTURE_UNJOINED";
    case FAKE_CAPTURE_IMPLICIT: return "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT";
    case FAKE_CAPTURED_EVENT: return "CUDA_ERROR_CAPTURED_EVENT";
    case FAKE_CAPTURE_WRONG_THREAD: return "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD";
    default: return NULL;
    }
}
EXPORT CUresult cuGetErrorName(CUresult r, const char** s) {
    FAKE_CALLED();
    *s = name_of(r);
    return *s ? OK : INVALID_VALUE;
}
EXPORT CUresult cuGetErrorString(CUresult r, const char** s) {
    FAKE_CALLED();
    *s = r == OUT_OF_MEMORY ? "out of memory (fake driver)" : name_of(r) ? "fake driver error" : NULL;
    return *s ? OK : INVALID_VALUE;
}
