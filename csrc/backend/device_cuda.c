/* The CUDA side of the device runtime: NVIDIA's driver API (libcuda.so.1), resolved with
 * dlsym.  device.h says why the driver API rather than libcudart.
 *
 * The driver API needs a current context on the calling thread.  Like cudart, we use the
 * device's primary context (retained once, kept for the life of the process), so memory
 * and streams are shared with cudart users; a thread that has a context current keeps
 * it.  The types below are the driver's own, declared here so the backend builds without
 * cuda.h; their values are fixed by the driver's ABI. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "device.h"
#include "dl.h"
#include "error.h"

typedef int CUresult;
typedef int CUdevice;
typedef void* CUcontext;
typedef unsigned long long CUdeviceptr;

enum {
    CUDA_SUCCESS_ = 0,
    CU_POINTER_ATTRIBUTE_MEMORY_TYPE_ = 2,
    CU_POINTER_ATTRIBUTE_IS_MANAGED_ = 8,
    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL_ = 9,
    CU_POINTER_ATTRIBUTE_RANGE_START_ADDR_ = 11,
    CU_POINTER_ATTRIBUTE_RANGE_SIZE_ = 12,
    CU_MEMORYTYPE_DEVICE_ = 2,
    CU_MEMORYTYPE_ARRAY_ = 3,
    CU_MEMORYTYPE_UNIFIED_ = 4,
};

#define MAX_DEVICES 64

static struct {
    CUresult (*init)(unsigned);
    CUresult (*driver_version)(int*);
    CUresult (*device_count)(int*);
    CUresult (*device_get)(CUdevice*, int);
    CUresult (*primary_retain)(CUcontext*, CUdevice);
    CUresult (*ctx_get_current)(CUcontext*);
    CUresult (*ctx_set_current)(CUcontext);
    CUresult (*ctx_get_device)(CUdevice*);
    CUresult (*ctx_synchronize)(void);
    CUresult (*mem_alloc)(CUdeviceptr*, size_t);
    CUresult (*mem_free)(CUdeviceptr);
    CUresult (*memcpy_async)(CUdeviceptr, CUdeviceptr, size_t, void*);
    CUresult (*memset_async)(CUdeviceptr, unsigned char, size_t, void*);
    CUresult (*stream_create)(void**, unsigned);
    CUresult (*stream_destroy)(void*);
    CUresult (*stream_synchronize)(void*);
    CUresult (*stream_wait_event)(void*, void*, unsigned);
    CUresult (*event_create)(void**, unsigned);
    CUresult (*event_destroy)(void*);
    CUresult (*event_record)(void*, void*);
    CUresult (*event_synchronize)(void*);
    CUresult (*event_elapsed)(float*, void*, void*);
    CUresult (*pointer_attributes)(unsigned, int*, void**, CUdeviceptr);
    CUresult (*error_name)(CUresult, const char**);
    CUresult (*error_string)(CUresult, const char**);
    /* optional: the device's identity (describe) */
    CUresult (*device_name)(char*, int, CUdevice);
    CUresult (*device_memory)(size_t*, CUdevice);
    CUresult (*device_attribute)(int*, int, CUdevice);
    /* optional: this thread's capture interaction mode */
    CUresult (*capture_mode)(int*);
    /* optional: stream capture and graphs (all or none) */
    CUresult (*capture_begin)(void*, int);
    CUresult (*capture_end)(void*, void**);
    CUresult (*capture_status)(void*, int*);
    CUresult (*graph_nodes)(void*, void**, size_t*);
    CUresult (*node_type)(void*, int*);
    CUresult (*child_graph)(void*, void**);
    CUresult (*add_child)(void**, void*, const void*, size_t, void*);
    /* optional: each node kind's parameters, get then set (graph_copy_params) */
    CUresult (*param_get[4])(void*, void*);
    CUresult (*param_set[4])(void*, const void*);
    CUresult (*graph_destroy)(void*);
    int count;
    pthread_mutex_t lock;
    CUcontext primary[MAX_DEVICES]; /* retained on first use, under lock */
} cu = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The device a thread without a current context works on (cudart's default is 0). */
static _Thread_local int t_device;

static hipdnnStatus_t fail(hipdnnStatus_t st, CUresult r, const char* call, const char* detail) {
    const char* name = NULL;
    const char* text = NULL;
    if (!cu.error_name || cu.error_name(r, &name) != CUDA_SUCCESS_) name = NULL;
    if (!cu.error_string || cu.error_string(r, &text) != CUDA_SUCCESS_) text = NULL;
    return hipdnnFail(st, "%s%s%s: %s (%d): %s", call, detail[0] ? " " : "", detail,
                      name ? name : "CUDA error", (int)r, text ? text : "no description");
}

#define CU_CALL(st, expr, call, ...)                                \
    do {                                                            \
        CUresult r_ = (expr);                                       \
        if (r_ != CUDA_SUCCESS_) {                                  \
            char d_[128];                                           \
            snprintf(d_, sizeof(d_), __VA_ARGS__);                  \
            return fail((st), r_, (call), d_);                      \
        }                                                           \
    } while (0)

#define EXEC HIPDNN_STATUS_EXECUTION_FAILED

/* The primary context of `device`, retained once. */
static hipdnnStatus_t primary_context(int device, CUcontext* ctx) {
    if (device < 0 || device >= cu.count || device >= MAX_DEVICES)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND,
                          "cuda: device %d does not exist (%d device%s)", device, cu.count,
                          cu.count == 1 ? "" : "s");
    hipdnnStatus_t st = HIPDNN_STATUS_SUCCESS;
    pthread_mutex_lock(&cu.lock);
    if (!cu.primary[device]) {
        CUdevice dev = 0;
        CUcontext c = NULL;
        CUresult r = cu.device_get(&dev, device);
        if (r == CUDA_SUCCESS_) r = cu.primary_retain(&c, dev);
        if (r != CUDA_SUCCESS_) {
            char d[64];
            snprintf(d, sizeof(d), "(device %d)", device);
            st = fail(EXEC, r, "cuDevicePrimaryCtxRetain", d);
        } else {
            cu.primary[device] = c;
        }
    }
    *ctx = cu.primary[device];
    pthread_mutex_unlock(&cu.lock);
    return st;
}

/* A context current on this thread: the one already there, else the primary context of
 * the thread's device. */
static hipdnnStatus_t ensure_context(void) {
    CUcontext c = NULL;
    CU_CALL(EXEC, cu.ctx_get_current(&c), "cuCtxGetCurrent", "%s", "");
    if (c) return HIPDNN_STATUS_SUCCESS;
    hipdnnStatus_t st = primary_context(t_device, &c);
    if (st) return st;
    CU_CALL(EXEC, cu.ctx_set_current(c), "cuCtxSetCurrent", "(device %d)", t_device);
    return HIPDNN_STATUS_SUCCESS;
}

#define NEED_CONTEXT()                           \
    do {                                         \
        hipdnnStatus_t s_ = ensure_context();    \
        if (s_) return s_;                       \
    } while (0)

static hipdnnStatus_t cuda_get_device(int* device) {
    CUcontext c = NULL;
    CU_CALL(EXEC, cu.ctx_get_current(&c), "cuCtxGetCurrent", "%s", "");
    if (!c) {
        *device = t_device;
        return HIPDNN_STATUS_SUCCESS;
    }
    CUdevice d = 0;
    CU_CALL(EXEC, cu.ctx_get_device(&d), "cuCtxGetDevice", "%s", "");
    *device = (int)d;
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t cuda_set_device(int device) {
    CUcontext c = NULL;
    hipdnnStatus_t st = primary_context(device, &c);
    if (st) return st;
    CU_CALL(EXEC, cu.ctx_set_current(c), "cuCtxSetCurrent", "(device %d)", device);
    t_device = device;
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t cuda_malloc(void** ptr, size_t size) {
    NEED_CONTEXT();
    CUdeviceptr p = 0;
    CU_CALL(HIPDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED, cu.mem_alloc(&p, size),
            "cuMemAlloc_v2", "(%zu bytes)", size);
    *ptr = (void*)(uintptr_t)p;
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t cuda_free(void* ptr) {
    NEED_CONTEXT();
    CU_CALL(EXEC, cu.mem_free((CUdeviceptr)(uintptr_t)ptr), "cuMemFree_v2", "(%p)", ptr);
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t cuda_stream_synchronize(hipdnnStream_t stream) {
    NEED_CONTEXT();
    CU_CALL(EXEC, cu.stream_synchronize(stream), "cuStreamSynchronize", "(stream %p)", stream);
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t cuda_memcpy(void* dst, const void* src, size_t size, hipdnnStream_t stream,
                                  bool sync) {
    NEED_CONTEXT();
    CU_CALL(EXEC, cu.memcpy_async((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, size,
                                  stream),
            "cuMemcpyAsync", "(%zu bytes, %p -> %p)", size, src, dst);
    return sync ? cuda_stream_synchronize(stream) : HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t cuda_memset(void* ptr, int value, size_t size, hipdnnStream_t stream,
                                  bool sync) {
    NEED_CONTEXT();
    CU_CALL(EXEC, cu.memset_async((CUdeviceptr)(uintptr_t)ptr, (unsigned char)value, size, stream),
            "cuMemsetD8Async", "(%zu bytes at %p)", size, ptr);
    return sync ? cuda_stream_synchronize(stream) : HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t cuda_stream_create(hipdnnStream_t* stream) {
    NEED_CONTEXT();
    CU_CALL(EXEC, cu.stream_create(stream, 0), "cuStreamCreate", "%s", "");
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t cuda_stream_destroy(hipdnnStream_t stream) {
    NEED_CONTEXT();
    CU_CALL(EXEC, cu.stream_destroy(stream), "cuStreamDestroy_v2", "(stream %p)", stream);
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t cuda_stream_wait_event(hipdnnStream_t stream, hipdnnEvent_t event) {
    NEED_CONTEXT();
    CU_CALL(EXEC, cu.stream_wait_event(stream, event, 0), "cuStreamWaitEvent",
            "(stream %p, event %p)", stream, event);
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t cuda_device_synchronize(void) {
    NEED_CONTEXT();
    CU_CALL(EXEC, cu.ctx_synchronize(), "cuCtxSynchronize", "%s", "");
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t cuda_event_create(hipdnnEvent_t* event) {
    NEED_CONTEXT();
    CU_CALL(EXEC, cu.event_create(event, 0), "cuEventCreate", "%s", "");
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t cuda_event_destroy(hipdnnEvent_t event) {
    NEED_CONTEXT();
    CU_CALL(EXEC, cu.event_destroy(event), "cuEventDestroy_v2", "(event %p)", event);
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t cuda_event_record(hipdnnEvent_t event, hipdnnStream_t stream) {
    NEED_CONTEXT();
    CU_CALL(EXEC, cu.event_record(event, stream), "cuEventRecord", "(event %p, stream %p)", event,
            stream);
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t cuda_event_synchronize(hipdnnEvent_t event) {
    NEED_CONTEXT();
    CU_CALL(EXEC, cu.event_synchronize(event), "cuEventSynchronize", "(event %p)", event);
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t cuda_event_elapsed(float* ms, hipdnnEvent_t start, hipdnnEvent_t end) {
    NEED_CONTEXT();
    CU_CALL(EXEC, cu.event_elapsed(ms, start, end), "cuEventElapsedTime", "%s", "");
    return HIPDNN_STATUS_SUCCESS;
}

/* Unlike cuPointerGetAttribute, the plural form answers for memory the driver does not
 * know (memory type 0) instead of failing. */
static hipdnnMemorySpace_t cuda_pointer_space(const void* ptr, int* device) {
    unsigned type = 0;
    int managed = 0, ordinal = -1;
    int attrs[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE_, CU_POINTER_ATTRIBUTE_IS_MANAGED_,
                    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL_};
    void* data[3] = {&type, &managed, &ordinal};
    *device = -1;
    if (ensure_context() != HIPDNN_STATUS_SUCCESS) {
        hipdnnClearError();
        return HIPDNN_MEMORY_HOST;
    }
    if (cu.pointer_attributes(3, attrs, data, (CUdeviceptr)(uintptr_t)ptr) != CUDA_SUCCESS_)
        return HIPDNN_MEMORY_HOST;
    if (managed) {
        *device = ordinal;
        return HIPDNN_MEMORY_MANAGED;
    }
    if (type == CU_MEMORYTYPE_DEVICE_ || type == CU_MEMORYTYPE_ARRAY_ ||
        type == CU_MEMORYTYPE_UNIFIED_) {
        *device = ordinal;
        return HIPDNN_MEMORY_DEVICE;
    }
    return HIPDNN_MEMORY_HOST; /* unregistered or pinned host memory */
}

/* The range attributes give the allocation (for VMM, the one mapped piece) ptr is in. */
static bool cuda_pointer_range(const void* ptr, uintptr_t* base, size_t* size) {
    unsigned type = 0;
    int managed = 0;
    CUdeviceptr start = 0;
    size_t bytes = 0;
    int attrs[4] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE_, CU_POINTER_ATTRIBUTE_IS_MANAGED_,
                    CU_POINTER_ATTRIBUTE_RANGE_START_ADDR_, CU_POINTER_ATTRIBUTE_RANGE_SIZE_};
    void* data[4] = {&type, &managed, &start, &bytes};
    if (ensure_context() != HIPDNN_STATUS_SUCCESS) {
        hipdnnClearError();
        return false;
    }
    if (cu.pointer_attributes(4, attrs, data, (CUdeviceptr)(uintptr_t)ptr) != CUDA_SUCCESS_ ||
        !bytes || !(managed || type == CU_MEMORYTYPE_DEVICE_ || type == CU_MEMORYTYPE_UNIFIED_))
        return false;
    *base = (uintptr_t)start;
    *size = bytes;
    return true;
}

/* cuda_pointer_space and cuda_pointer_range in one cuPointerGetAttributes. */
static void cuda_pointer_info(const void* ptr, hipdnnMemorySpace_t* space, int* device,
                              uintptr_t* base, size_t* size) {
    unsigned type = 0;
    int managed = 0, ordinal = -1;
    CUdeviceptr start = 0;
    size_t bytes = 0;
    int attrs[5] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE_, CU_POINTER_ATTRIBUTE_IS_MANAGED_,
                    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL_, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR_,
                    CU_POINTER_ATTRIBUTE_RANGE_SIZE_};
    void* data[5] = {&type, &managed, &ordinal, &start, &bytes};
    *size = 0;
    if (ensure_context() != HIPDNN_STATUS_SUCCESS) {
        hipdnnClearError();
        *space = cuda_pointer_space(ptr, device); /* as it answers without a context */
        return;
    }
    if (cu.pointer_attributes(5, attrs, data, (CUdeviceptr)(uintptr_t)ptr) != CUDA_SUCCESS_) {
        /* the range may be what the driver refused: ask as two queries do */
        *space = cuda_pointer_space(ptr, device);
        if (*space != HIPDNN_MEMORY_HOST && !cuda_pointer_range(ptr, base, size)) *size = 0;
        return;
    }
    *device = -1;
    *space = HIPDNN_MEMORY_HOST; /* unregistered or pinned host memory */
    if (managed) *space = HIPDNN_MEMORY_MANAGED;
    else if (type == CU_MEMORYTYPE_DEVICE_ || type == CU_MEMORYTYPE_ARRAY_ ||
             type == CU_MEMORYTYPE_UNIFIED_)
        *space = HIPDNN_MEMORY_DEVICE;
    if (*space != HIPDNN_MEMORY_HOST) *device = ordinal;
    if (bytes && (managed || type == CU_MEMORYTYPE_DEVICE_ || type == CU_MEMORYTYPE_UNIFIED_)) {
        *base = (uintptr_t)start;
        *size = bytes;
    }
}

static void resolve_cuda_graphs(void* lib);

#define SYM(field, name)                                                          \
    do {                                                                          \
        *(void**)&cu.field = hipdnnDlSymbol(lib, name);                           \
        if (!cu.field) {                                                          \
            snprintf(why, len, "cuda: %s lacks %s (driver too old?)", path, name); \
            goto fail;                                                            \
        }                                                                         \
    } while (0)

/* The driver's entry points into cu; false, with why, at the first one missing. */
static bool resolve_cuda_driver(void* lib, const char* path, char* why, size_t len) {
    SYM(init, "cuInit");
    SYM(driver_version, "cuDriverGetVersion");
    SYM(device_count, "cuDeviceGetCount");
    SYM(device_get, "cuDeviceGet");
    SYM(primary_retain, "cuDevicePrimaryCtxRetain");
    SYM(ctx_get_current, "cuCtxGetCurrent");
    SYM(ctx_set_current, "cuCtxSetCurrent");
    SYM(ctx_get_device, "cuCtxGetDevice");
    SYM(ctx_synchronize, "cuCtxSynchronize");
    SYM(mem_alloc, "cuMemAlloc_v2");
    SYM(mem_free, "cuMemFree_v2");
    SYM(memcpy_async, "cuMemcpyAsync");
    SYM(memset_async, "cuMemsetD8Async");
    SYM(stream_create, "cuStreamCreate");
    SYM(stream_destroy, "cuStreamDestroy_v2");
    SYM(stream_synchronize, "cuStreamSynchronize");
    SYM(stream_wait_event, "cuStreamWaitEvent");
    SYM(event_create, "cuEventCreate");
    SYM(event_destroy, "cuEventDestroy_v2");
    SYM(event_record, "cuEventRecord");
    SYM(event_synchronize, "cuEventSynchronize");
    SYM(pointer_attributes, "cuPointerGetAttributes");
    SYM(error_name, "cuGetErrorName");
    SYM(error_string, "cuGetErrorString");
    /* CUDA 12.8 added a _v2 (same signature, fixed edge cases); older drivers lack it. */
    *(void**)&cu.event_elapsed = hipdnnDlSymbol(lib, "cuEventElapsedTime_v2");
    if (!cu.event_elapsed) SYM(event_elapsed, "cuEventElapsedTime");
    *(void**)&cu.device_name = hipdnnDlSymbol(lib, "cuDeviceGetName");
    *(void**)&cu.device_memory = hipdnnDlSymbol(lib, "cuDeviceTotalMem_v2");
    *(void**)&cu.device_attribute = hipdnnDlSymbol(lib, "cuDeviceGetAttribute");
    resolve_cuda_graphs(lib);
    return true;
fail:
    return false;
}

/* cuInit, and at least one device (cu.count, at most MAX_DEVICES); else why, with the
 * driver's error and version. */
static bool cuda_devices_present(const char* path, char* why, size_t len) {
    CUresult r = cu.init(0);
    int version = 0;
    const char* name = NULL;
    if (r == CUDA_SUCCESS_) r = cu.device_count(&cu.count);
    if (r != CUDA_SUCCESS_ || cu.count < 1) {
        cu.driver_version(&version);
        if (r != CUDA_SUCCESS_ && cu.error_name(r, &name) != CUDA_SUCCESS_) name = NULL;
        if (r != CUDA_SUCCESS_)
            snprintf(why, len, "cuda: %s: cuInit/cuDeviceGetCount returned %d (%s), driver "
                     "version %d", path, (int)r, name ? name : "?", version);
        else
            snprintf(why, len, "cuda: %s: no CUDA device (driver version %d)", path, version);
        return false;
    }
    if (cu.count > MAX_DEVICES) cu.count = MAX_DEVICES;
    return true;
}

/* Name, compute capability, memory and driver version, each where the driver answers. */
static void cuda_describe(int device, char* buf, size_t len) {
    CUdevice d = 0;
    char name[128] = "?";
    int major = 0, minor = 0, version = 0;
    size_t mem = 0;
    buf[0] = '\0';
    if (device < 0 || device >= cu.count || cu.device_get(&d, device) != CUDA_SUCCESS_) return;
    if (cu.device_name && cu.device_name(name, (int)sizeof(name), d) != CUDA_SUCCESS_)
        snprintf(name, sizeof(name), "?");
    if (cu.device_attribute) { /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR / _MINOR */
        if (cu.device_attribute(&major, 75, d) != CUDA_SUCCESS_) major = 0;
        if (cu.device_attribute(&minor, 76, d) != CUDA_SUCCESS_) minor = 0;
    }
    if (cu.device_memory && cu.device_memory(&mem, d) != CUDA_SUCCESS_) mem = 0;
    cu.driver_version(&version);
    snprintf(buf, len, "%s sm_%d%d %zuMiB driver %d", name, major, minor, mem >> 20, version);
}

/* CU_DEVICE_ATTRIBUTE_ MULTIPROCESSOR_COUNT 16, CLOCK_RATE 13, MEMORY_CLOCK_RATE 36 and
 * GLOBAL_MEMORY_BUS_WIDTH 37: the driver API still answers them in CUDA 13, where the
 * runtime's cudaDeviceProp lost the clock fields. */
static void cuda_facts(int device, hipdnnDeviceFacts* f) {
    CUdevice d = 0;
    memset(f, 0, sizeof(*f));
    if (!cu.device_attribute || device < 0 || device >= cu.count ||
        cu.device_get(&d, device) != CUDA_SUCCESS_)
        return;
    int* out[4] = {&f->sm_count, &f->clock_khz, &f->mem_clock_khz, &f->bus_width_bits};
    const int attr[4] = {16, 13, 36, 37};
    for (int i = 0; i < 4; ++i)
        if (cu.device_attribute(out[i], attr[i], d) != CUDA_SUCCESS_ || *out[i] < 0) *out[i] = 0;
}

/* ---- stream capture and graphs ---------------------------------------------------- */

enum { CU_STREAM_CAPTURE_MODE_THREAD_LOCAL_ = 1 };

static hipdnnStatus_t cuda_capture_begin(hipdnnStream_t s) {
    NEED_CONTEXT();
    CU_CALL(EXEC, cu.capture_begin(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL_),
            "cuStreamBeginCapture_v2", "(stream %p)", s);
    return HIPDNN_STATUS_SUCCESS;
}
static hipdnnStatus_t cuda_capture_end(hipdnnStream_t s, void** graph) {
    NEED_CONTEXT();
    CU_CALL(EXEC, cu.capture_end(s, graph), "cuStreamEndCapture", "(stream %p)", s);
    return HIPDNN_STATUS_SUCCESS;
}
static hipdnnStatus_t cuda_capture_status(hipdnnStream_t s, int* status) {
    NEED_CONTEXT();
    CU_CALL(EXEC, cu.capture_status(s, status), "cuStreamIsCapturing", "(stream %p)", s);
    return HIPDNN_STATUS_SUCCESS;
}
static hipdnnStatus_t cuda_graph_nodes(void* g, void** nodes, size_t* n) {
    CU_CALL(EXEC, cu.graph_nodes(g, nodes, n), "cuGraphGetNodes", "(graph %p)", g);
    return HIPDNN_STATUS_SUCCESS;
}
static hipdnnStatus_t cuda_node_type(void* node, int* type) {
    CU_CALL(EXEC, cu.node_type(node, type), "cuGraphNodeGetType", "(node %p)", node);
    return HIPDNN_STATUS_SUCCESS;
}
static hipdnnStatus_t cuda_graph_child(void* node, void** g) {
    CU_CALL(EXEC, cu.child_graph(node, g), "cuGraphChildGraphNodeGetGraph", "(node %p)", node);
    return HIPDNN_STATUS_SUCCESS;
}
static hipdnnStatus_t cuda_add_child(void* g, void* child) {
    void* node = NULL;
    CU_CALL(EXEC, cu.add_child(&node, g, NULL, 0, child), "cuGraphAddChildGraphNode",
            "(graph %p)", g);
    return HIPDNN_STATUS_SUCCESS;
}

/* Each kind's get and set, in the runtime's node numbering (kernel, copy, fill, host).  The
 * parameter structures are the vendor's; only the runtime reads them, so they travel as
 * bytes, in a buffer larger than any of them. */
static const char* const k_param_get[4] = {
    "cuGraphKernelNodeGetParams_v2",
    "cuGraphMemcpyNodeGetParams",
    "cuGraphMemsetNodeGetParams",
    "cuGraphHostNodeGetParams"};
static const char* const k_param_set[4] = {
    "cuGraphKernelNodeSetParams_v2",
    "cuGraphMemcpyNodeSetParams",
    "cuGraphMemsetNodeSetParams",
    "cuGraphHostNodeSetParams"};

static hipdnnStatus_t cuda_copy_params(void* dst, void* src, int type) {
    if (type < 0 || type > 3 || !cu.param_get[type] || !cu.param_set[type])
        return hipdnnFail(HIPDNN_STATUS_NOT_SUPPORTED, "a recorded graph node of kind %d: its "
                          "parameters cannot be updated here%s", type,
                          type >= 0 && type <= 3 ? " (the driver lacks the entry points)" : "");
    _Alignas(16) unsigned char params[512];
    memset(params, 0, sizeof(params));
    CU_CALL(EXEC, cu.param_get[type](src, params), k_param_get[type], "(node %p)", src);
    CU_CALL(EXEC, cu.param_set[type](dst, params), k_param_set[type], "(node %p)", dst);
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t cuda_capture_mode(int* mode) {
    CU_CALL(EXEC, cu.capture_mode(mode), "cuThreadExchangeStreamCaptureMode", "(mode %d)", *mode);
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t cuda_graph_destroy(void* g) {
    CU_CALL(EXEC, cu.graph_destroy(g), "cuGraphDestroy", "(graph %p)", g);
    return HIPDNN_STATUS_SUCCESS;
}

/* The graph entry points, all or none (cuStreamBeginCapture_v2 has the mode: CUDA 10.1). */
static void resolve_cuda_graphs(void* lib) {
    static const char* const names[] = {
        "cuStreamBeginCapture_v2", "cuStreamEndCapture", "cuStreamIsCapturing",
        "cuGraphGetNodes", "cuGraphNodeGetType", "cuGraphChildGraphNodeGetGraph",
        "cuGraphAddChildGraphNode", "cuGraphDestroy"};
    void** fields[] = {(void**)&cu.capture_begin, (void**)&cu.capture_end,
                       (void**)&cu.capture_status, (void**)&cu.graph_nodes, (void**)&cu.node_type,
                       (void**)&cu.child_graph, (void**)&cu.add_child,
                       (void**)&cu.graph_destroy};
    for (int i = 0; i < 8; ++i)
        if (!(*fields[i] = hipdnnDlSymbol(lib, names[i]))) {
            cu.capture_begin = NULL;
            return;
        }
    for (int k = 0; k < 4; ++k) {
        *(void**)&cu.param_get[k] = hipdnnDlSymbol(lib, k_param_get[k]);
        *(void**)&cu.param_set[k] = hipdnnDlSymbol(lib, k_param_set[k]);
    }
    *(void**)&cu.capture_mode = hipdnnDlSymbol(lib, "cuThreadExchangeStreamCaptureMode");
}

static void cuda_fill_graphs(hipdnnDeviceRuntime* rt) {
    if (!cu.capture_begin) return;
    rt->capture_begin = cuda_capture_begin;
    rt->capture_end = cuda_capture_end;
    rt->capture_status = cuda_capture_status;
    rt->graph_nodes = cuda_graph_nodes;
    rt->graph_node_type = cuda_node_type;
    rt->graph_child = cuda_graph_child;
    rt->graph_add_child = cuda_add_child;
    rt->graph_copy_params = cuda_copy_params;
    rt->graph_destroy = cuda_graph_destroy;
    if (cu.capture_mode) rt->capture_mode = cuda_capture_mode;
}

static void cuda_fill_runtime(hipdnnDeviceRuntime* rt, const char* path) {
    rt->name = "cuda";
    snprintf(rt->library, sizeof(rt->library), "%s", path);
    rt->device_count = cu.count;
    rt->get_device = cuda_get_device;
    rt->set_device = cuda_set_device;
    rt->malloc = cuda_malloc;
    rt->free = cuda_free;
    rt->memcpy = cuda_memcpy;
    rt->memset = cuda_memset;
    rt->stream_create = cuda_stream_create;
    rt->stream_destroy = cuda_stream_destroy;
    rt->stream_synchronize = cuda_stream_synchronize;
    rt->stream_wait_event = cuda_stream_wait_event;
    rt->device_synchronize = cuda_device_synchronize;
    rt->event_create = cuda_event_create;
    rt->event_destroy = cuda_event_destroy;
    rt->event_record = cuda_event_record;
    rt->event_synchronize = cuda_event_synchronize;
    rt->event_elapsed = cuda_event_elapsed;
    rt->pointer_space = cuda_pointer_space;
    rt->pointer_range = cuda_pointer_range;
    rt->pointer_info = cuda_pointer_info;
    rt->describe = cuda_describe;
    rt->facts = cuda_facts;
    cuda_fill_graphs(rt);
}

bool hipdnnDeviceLoadCuda(hipdnnDeviceRuntime* rt, char* why, size_t len) {
    static const char* const libs[] = {"libcuda.so.1", "libcuda.so", NULL};
    const char* path = NULL;
    char tried[512];
    void* lib = hipdnnDlOpenFirst(libs, &path, tried, sizeof(tried));
    if (!lib) {
        snprintf(why, len, "cuda: no NVIDIA driver library (%s)", tried);
        return false;
    }
    if (!resolve_cuda_driver(lib, path, why, len) || !cuda_devices_present(path, why, len)) {
        hipdnnDlClose(lib);
        return false;
    }
    cuda_fill_runtime(rt, path);
    return true; /* the library stays loaded for the life of the process */
}
