/* The AMD side of the device runtime: the HIP runtime (libamdhip64.so), resolved with
 * dlsym.  HIP's runtime API tracks the current device per thread itself. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "device.h"
#include "dl.h"
#include "error.h"
#include "log.h"

typedef int hipError_t;
enum { hipSuccess_ = 0, hipMemcpyDefault_ = 4 };

static struct {
    hipError_t (*init)(unsigned);
    hipError_t (*runtime_version)(int*);
    hipError_t (*device_count)(int*);
    hipError_t (*get_device)(int*);
    hipError_t (*set_device)(int);
    hipError_t (*malloc)(void**, size_t);
    hipError_t (*free)(void*);
    hipError_t (*memcpy_async)(void*, const void*, size_t, int, void*);
    hipError_t (*memset_async)(void*, int, size_t, void*);
    hipError_t (*stream_create)(void**);
    hipError_t (*stream_destroy)(void*);
    hipError_t (*stream_synchronize)(void*);
    hipError_t (*stream_wait_event)(void*, void*, unsigned);
    hipError_t (*device_synchronize)(void);
    hipError_t (*event_create)(void**);
    hipError_t (*event_destroy)(void*);
    hipError_t (*event_record)(void*, void*);
    hipError_t (*event_synchronize)(void*);
    hipError_t (*event_elapsed)(float*, void*, void*);
    hipError_t (*pointer_attributes)(void*, const void*);
    hipError_t (*address_range)(void**, size_t*, const void*); /* optional */
    hipError_t (*get_last_error)(void);
    const char* (*error_name)(hipError_t);
    const char* (*error_string)(hipError_t);
    /* optional: the device's identity (describe) */
    hipError_t (*device_name)(char*, int, int);
    hipError_t (*device_memory)(size_t*, int);
    /* optional: stream capture and graphs (all or none) */
    hipError_t (*capture_begin)(void*, int);
    hipError_t (*capture_end)(void*, void**);
    hipError_t (*capture_status)(void*, int*);
    hipError_t (*graph_nodes)(void*, void**, size_t*);
    hipError_t (*node_type)(void*, int*);
    hipError_t (*child_graph)(void*, void**);
    hipError_t (*add_child)(void**, void*, const void*, size_t, void*);
    /* optional: each node kind's parameters, get then set (graph_copy_params) */
    hipError_t (*param_get[4])(void*, void*);
    hipError_t (*param_set[4])(void*, const void*);
    hipError_t (*graph_destroy)(void*);
    hipError_t (*capture_mode)(int*); /* optional: hipThreadExchangeStreamCaptureMode */
    int count;
    bool hip5; /* HIP 5 numbers hipMemoryType differently (device.h) */
} hip;

static hipdnnStatus_t fail(hipdnnStatus_t st, hipError_t r, const char* call, const char* detail) {
    hip.get_last_error(); /* HIP keeps the error sticky for hipGetLastError: clear it */
    const char* name = hip.error_name ? hip.error_name(r) : NULL;
    const char* text = hip.error_string ? hip.error_string(r) : NULL;
    return hipdnnFail(st, "%s%s%s: %s (%d): %s", call, detail[0] ? " " : "", detail,
                      name ? name : "HIP error", (int)r, text ? text : "no description");
}

#define HIP_CALL(st, expr, call, ...)                               \
    do {                                                            \
        hipError_t r_ = (expr);                                     \
        if (r_ != hipSuccess_) {                                    \
            char d_[128];                                           \
            snprintf(d_, sizeof(d_), __VA_ARGS__);                  \
            return fail((st), r_, (call), d_);                      \
        }                                                           \
    } while (0)

#define EXEC HIPDNN_STATUS_EXECUTION_FAILED

static hipdnnStatus_t hip_get_device(int* device) {
    HIP_CALL(EXEC, hip.get_device(device), "hipGetDevice", "%s", "");
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t hip_set_device(int device) {
    if (device < 0 || device >= hip.count)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND,
                          "hip: device %d does not exist (%d device%s)", device, hip.count,
                          hip.count == 1 ? "" : "s");
    HIP_CALL(EXEC, hip.set_device(device), "hipSetDevice", "(%d)", device);
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t hip_malloc(void** ptr, size_t size) {
    HIP_CALL(HIPDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED, hip.malloc(ptr, size),
             "hipMalloc", "(%zu bytes)", size);
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t hip_free(void* ptr) {
    HIP_CALL(EXEC, hip.free(ptr), "hipFree", "(%p)", ptr);
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t hip_stream_synchronize(hipdnnStream_t stream) {
    HIP_CALL(EXEC, hip.stream_synchronize(stream), "hipStreamSynchronize", "(stream %p)", stream);
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t hip_memcpy(void* dst, const void* src, size_t size, hipdnnStream_t stream,
                                 bool sync) {
    HIP_CALL(EXEC, hip.memcpy_async(dst, src, size, hipMemcpyDefault_, stream), "hipMemcpyAsync",
             "(%zu bytes, %p -> %p)", size, src, dst);
    return sync ? hip_stream_synchronize(stream) : HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t hip_memset(void* ptr, int value, size_t size, hipdnnStream_t stream,
                                 bool sync) {
    HIP_CALL(EXEC, hip.memset_async(ptr, value, size, stream), "hipMemsetAsync",
             "(%zu bytes at %p)", size, ptr);
    return sync ? hip_stream_synchronize(stream) : HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t hip_stream_create(hipdnnStream_t* stream) {
    HIP_CALL(EXEC, hip.stream_create(stream), "hipStreamCreate", "%s", "");
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t hip_stream_destroy(hipdnnStream_t stream) {
    HIP_CALL(EXEC, hip.stream_destroy(stream), "hipStreamDestroy", "(stream %p)", stream);
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t hip_stream_wait_event(hipdnnStream_t stream, hipdnnEvent_t event) {
    HIP_CALL(EXEC, hip.stream_wait_event(stream, event, 0), "hipStreamWaitEvent",
             "(stream %p, event %p)", stream, event);
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t hip_device_synchronize(void) {
    HIP_CALL(EXEC, hip.device_synchronize(), "hipDeviceSynchronize", "%s", "");
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t hip_event_create(hipdnnEvent_t* event) {
    HIP_CALL(EXEC, hip.event_create(event), "hipEventCreate", "%s", "");
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t hip_event_destroy(hipdnnEvent_t event) {
    HIP_CALL(EXEC, hip.event_destroy(event), "hipEventDestroy", "(event %p)", event);
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t hip_event_record(hipdnnEvent_t event, hipdnnStream_t stream) {
    HIP_CALL(EXEC, hip.event_record(event, stream), "hipEventRecord", "(event %p, stream %p)",
             event, stream);
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t hip_event_synchronize(hipdnnEvent_t event) {
    HIP_CALL(EXEC, hip.event_synchronize(event), "hipEventSynchronize", "(event %p)", event);
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t hip_event_elapsed(float* ms, hipdnnEvent_t start, hipdnnEvent_t end) {
    HIP_CALL(EXEC, hip.event_elapsed(ms, start, end), "hipEventElapsedTime", "%s", "");
    return HIPDNN_STATUS_SUCCESS;
}

hipdnnMemorySpace_t hipdnnDeviceSpaceFromType(int type, bool hip5) {
    if (hip5) {
        switch (type) {
        case 1: case 2: return HIPDNN_MEMORY_DEVICE; /* device, array */
        case 3: return HIPDNN_MEMORY_MANAGED;         /* unified */
        default: return HIPDNN_MEMORY_HOST;
        }
    }
    switch (type) {
    case 2: return HIPDNN_MEMORY_DEVICE;
    case 3: return HIPDNN_MEMORY_MANAGED;
    default: return HIPDNN_MEMORY_HOST; /* unregistered or pinned host */
    }
}

/* hipPointerAttribute_t, read through ints of a generously sized buffer: both HIP 5 and
 * HIP 6 start with {memory type, device}, then two pointers, then isManaged. */
static hipdnnMemorySpace_t hip_pointer_space(const void* ptr, int* device) {
    int attrs[64] = {0};
    *device = -1;
    if (hip.pointer_attributes(attrs, ptr) != hipSuccess_) {
        hip.get_last_error(); /* HIP 5 reports unknown host memory as an error */
        return HIPDNN_MEMORY_HOST;
    }
    hipdnnMemorySpace_t space = attrs[6] ? HIPDNN_MEMORY_MANAGED
                                         : hipdnnDeviceSpaceFromType(attrs[0], hip.hip5);
    if (space != HIPDNN_MEMORY_HOST) *device = attrs[1];
    return space;
}

static bool hip_pointer_range(const void* ptr, uintptr_t* base, size_t* size) {
    int device;
    void* start = NULL;
    *size = 0;
    if (!hip.address_range || hip_pointer_space(ptr, &device) == HIPDNN_MEMORY_HOST)
        return false;
    if (hip.address_range(&start, size, ptr) != hipSuccess_) {
        hip.get_last_error();
        return false;
    }
    *base = (uintptr_t)start;
    return *size != 0;
}

static void resolve_hip_graphs(void* lib);

#define SYM(field, name)                                         \
    do {                                                         \
        *(void**)&hip.field = hipdnnDlSymbol(lib, name);         \
        if (!hip.field) {                                        \
            snprintf(why, len, "hip: %s lacks %s", path, name);  \
            goto fail;                                           \
        }                                                        \
    } while (0)

/* The runtime's entry points into hip; false, with why, at the first one missing. */
static bool resolve_hip_runtime(void* lib, const char* path, char* why, size_t len) {
    SYM(init, "hipInit");
    SYM(runtime_version, "hipRuntimeGetVersion");
    SYM(device_count, "hipGetDeviceCount");
    SYM(get_device, "hipGetDevice");
    SYM(set_device, "hipSetDevice");
    SYM(malloc, "hipMalloc");
    SYM(free, "hipFree");
    SYM(memcpy_async, "hipMemcpyAsync");
    SYM(memset_async, "hipMemsetAsync");
    SYM(stream_create, "hipStreamCreate");
    SYM(stream_destroy, "hipStreamDestroy");
    SYM(stream_synchronize, "hipStreamSynchronize");
    SYM(stream_wait_event, "hipStreamWaitEvent");
    SYM(device_synchronize, "hipDeviceSynchronize");
    SYM(event_create, "hipEventCreate");
    SYM(event_destroy, "hipEventDestroy");
    SYM(event_record, "hipEventRecord");
    SYM(event_synchronize, "hipEventSynchronize");
    SYM(event_elapsed, "hipEventElapsedTime");
    SYM(pointer_attributes, "hipPointerGetAttributes");
    SYM(get_last_error, "hipGetLastError");
    *(void**)&hip.address_range = hipdnnDlSymbol(lib, "hipMemGetAddressRange");
    SYM(error_name, "hipGetErrorName");
    SYM(error_string, "hipGetErrorString");
    *(void**)&hip.device_name = hipdnnDlSymbol(lib, "hipDeviceGetName");
    *(void**)&hip.device_memory = hipdnnDlSymbol(lib, "hipDeviceTotalMem");
    resolve_hip_graphs(lib);
    return true;
fail:
    return false;
}

/* At least one AMD GPU (hip.count); else why, with hipGetDeviceCount's error. */
static bool hip_devices_present(const char* path, char* why, size_t len) {
    hip.init(0); /* its failure repeats, more tellingly, as hipGetDeviceCount's */
    hipError_t r = hip.device_count(&hip.count);
    if (r != hipSuccess_ || hip.count < 1) {
        const char* name = r != hipSuccess_ ? hip.error_name(r) : NULL;
        hip.get_last_error();
        if (r != hipSuccess_)
            snprintf(why, len, "hip: %s: hipGetDeviceCount returned %d (%s)", path, (int)r,
                     name ? name : "?");
        else
            snprintf(why, len, "hip: %s: no AMD GPU", path);
        return false;
    }
    return true;
}

/* Name, memory and runtime version, each where the runtime answers. */
static void hip_describe(int device, char* buf, size_t len) {
    char name[128] = "?";
    size_t mem = 0;
    int version = 0;
    buf[0] = '\0';
    if (device < 0 || device >= hip.count) return;
    if (hip.device_name && hip.device_name(name, (int)sizeof(name), device) != hipSuccess_)
        snprintf(name, sizeof(name), "?");
    if (hip.device_memory && hip.device_memory(&mem, device) != hipSuccess_) mem = 0;
    if (hip.runtime_version(&version) != hipSuccess_) version = 0;
    hip.get_last_error();
    snprintf(buf, len, "%s %zuMiB runtime %d", name, mem >> 20, version);
}

/* ---- stream capture and graphs (hipStreamCaptureModeThreadLocal is 1, as CUDA's) ---- */

static hipdnnStatus_t hip_capture_begin(hipdnnStream_t s) {
    HIP_CALL(EXEC, hip.capture_begin(s, 1), "hipStreamBeginCapture", "(stream %p)", s);
    return HIPDNN_STATUS_SUCCESS;
}
static hipdnnStatus_t hip_capture_end(hipdnnStream_t s, void** graph) {
    HIP_CALL(EXEC, hip.capture_end(s, graph), "hipStreamEndCapture", "(stream %p)", s);
    return HIPDNN_STATUS_SUCCESS;
}
static hipdnnStatus_t hip_capture_status(hipdnnStream_t s, int* status) {
    HIP_CALL(EXEC, hip.capture_status(s, status), "hipStreamIsCapturing", "(stream %p)", s);
    return HIPDNN_STATUS_SUCCESS;
}
static hipdnnStatus_t hip_graph_nodes(void* g, void** nodes, size_t* n) {
    HIP_CALL(EXEC, hip.graph_nodes(g, nodes, n), "hipGraphGetNodes", "(graph %p)", g);
    return HIPDNN_STATUS_SUCCESS;
}
static hipdnnStatus_t hip_node_type(void* node, int* type) {
    HIP_CALL(EXEC, hip.node_type(node, type), "hipGraphNodeGetType", "(node %p)", node);
    return HIPDNN_STATUS_SUCCESS;
}
static hipdnnStatus_t hip_graph_child(void* node, void** g) {
    HIP_CALL(EXEC, hip.child_graph(node, g), "hipGraphChildGraphNodeGetGraph", "(node %p)", node);
    return HIPDNN_STATUS_SUCCESS;
}
static hipdnnStatus_t hip_add_child(void* g, void* child) {
    void* node = NULL;
    HIP_CALL(EXEC, hip.add_child(&node, g, NULL, 0, child), "hipGraphAddChildGraphNode",
             "(graph %p)", g);
    return HIPDNN_STATUS_SUCCESS;
}

/* Each kind's get and set, in the runtime's node numbering (kernel, copy, fill, host).  The
 * parameter structures are the vendor's; only the runtime reads them, so they travel as
 * bytes, in a buffer larger than any of them. */
static const char* const k_param_get[4] = {
    "hipGraphKernelNodeGetParams",
    "hipGraphMemcpyNodeGetParams",
    "hipGraphMemsetNodeGetParams",
    "hipGraphHostNodeGetParams"};
static const char* const k_param_set[4] = {
    "hipGraphKernelNodeSetParams",
    "hipGraphMemcpyNodeSetParams",
    "hipGraphMemsetNodeSetParams",
    "hipGraphHostNodeSetParams"};

static hipdnnStatus_t hip_copy_params(void* dst, void* src, int type) {
    if (type < 0 || type > 3 || !hip.param_get[type] || !hip.param_set[type])
        return hipdnnFail(HIPDNN_STATUS_NOT_SUPPORTED, "a recorded graph node of kind %d: its "
                          "parameters cannot be updated here%s", type,
                          type >= 0 && type <= 3 ? " (the driver lacks the entry points)" : "");
    _Alignas(16) unsigned char params[512];
    memset(params, 0, sizeof(params));
    HIP_CALL(EXEC, hip.param_get[type](src, params), k_param_get[type], "(node %p)", src);
    HIP_CALL(EXEC, hip.param_set[type](dst, params), k_param_set[type], "(node %p)", dst);
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t hip_capture_mode(int* mode) {
    HIP_CALL(EXEC, hip.capture_mode(mode), "hipThreadExchangeStreamCaptureMode", "(mode %d)", *mode);
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t hip_graph_destroy(void* g) {
    HIP_CALL(EXEC, hip.graph_destroy(g), "hipGraphDestroy", "(graph %p)", g);
    return HIPDNN_STATUS_SUCCESS;
}

static void resolve_hip_graphs(void* lib) {
    static const char* const names[] = {
        "hipStreamBeginCapture", "hipStreamEndCapture", "hipStreamIsCapturing",
        "hipGraphGetNodes", "hipGraphNodeGetType", "hipGraphChildGraphNodeGetGraph",
        "hipGraphAddChildGraphNode", "hipGraphDestroy"};
    void** fields[] = {(void**)&hip.capture_begin, (void**)&hip.capture_end,
                       (void**)&hip.capture_status, (void**)&hip.graph_nodes,
                       (void**)&hip.node_type, (void**)&hip.child_graph, (void**)&hip.add_child,
                       (void**)&hip.graph_destroy};
    for (int i = 0; i < 8; ++i)
        if (!(*fields[i] = hipdnnDlSymbol(lib, names[i]))) {
            hip.capture_begin = NULL;
            return;
        }
    for (int k = 0; k < 4; ++k) {
        *(void**)&hip.param_get[k] = hipdnnDlSymbol(lib, k_param_get[k]);
        *(void**)&hip.param_set[k] = hipdnnDlSymbol(lib, k_param_set[k]);
    }
    *(void**)&hip.capture_mode = hipdnnDlSymbol(lib, "hipThreadExchangeStreamCaptureMode");
}

static void hip_fill_graphs(hipdnnDeviceRuntime* rt) {
    if (!hip.capture_begin) return;
    rt->capture_begin = hip_capture_begin;
    rt->capture_end = hip_capture_end;
    rt->capture_status = hip_capture_status;
    rt->graph_nodes = hip_graph_nodes;
    rt->graph_node_type = hip_node_type;
    rt->graph_child = hip_graph_child;
    rt->graph_add_child = hip_add_child;
    rt->graph_copy_params = hip_copy_params;
    rt->graph_destroy = hip_graph_destroy;
    if (hip.capture_mode) rt->capture_mode = hip_capture_mode;
}

static void hip_fill_runtime(hipdnnDeviceRuntime* rt, const char* path) {
    rt->name = "hip";
    snprintf(rt->library, sizeof(rt->library), "%s", path);
    rt->device_count = hip.count;
    rt->get_device = hip_get_device;
    rt->set_device = hip_set_device;
    rt->malloc = hip_malloc;
    rt->free = hip_free;
    rt->memcpy = hip_memcpy;
    rt->memset = hip_memset;
    rt->stream_create = hip_stream_create;
    rt->stream_destroy = hip_stream_destroy;
    rt->stream_synchronize = hip_stream_synchronize;
    rt->stream_wait_event = hip_stream_wait_event;
    rt->device_synchronize = hip_device_synchronize;
    rt->event_create = hip_event_create;
    rt->event_destroy = hip_event_destroy;
    rt->event_record = hip_event_record;
    rt->event_synchronize = hip_event_synchronize;
    rt->event_elapsed = hip_event_elapsed;
    rt->pointer_space = hip_pointer_space;
    rt->pointer_range = hip_pointer_range;
    rt->describe = hip_describe;
    hip_fill_graphs(rt); /* facts: not yet read on HIP (left 0: the plugins' tables) */
}

bool hipdnnDeviceLoadHip(hipdnnDeviceRuntime* rt, char* why, size_t len) {
    static const char* const libs[] = {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5",
                                       "/opt/rocm/lib/libamdhip64.so", NULL};
    const char* path = NULL;
    char tried[768];
    void* lib = hipdnnDlOpenFirst(libs, &path, tried, sizeof(tried));
    if (!lib) {
        snprintf(why, len, "hip: no HIP runtime (%s)", tried);
        return false;
    }
    if (!resolve_hip_runtime(lib, path, why, len) || !hip_devices_present(path, why, len)) {
        hipdnnDlClose(lib);
        return false;
    }
    int v = 0;
    /* HIP encodes major * 10000000 + minor * 100000 + patch */
    hip.hip5 = hip.runtime_version(&v) == hipSuccess_ && v < 60000000;
    hip_fill_runtime(rt, path);
    if (hip.hip5) hipdnnLog(HIPDNN_LOG_INFO, "device runtime: HIP %d (HIP 5 pointer types)", v);
    return true;
}
