/* The GPU runtime, resolved at run time so that the backend links no GPU library and runs
 * on machines without a GPU: AMD's HIP runtime (libamdhip64.so) or NVIDIA's CUDA driver
 * API (libcuda.so.1).  Nothing is loaded until a device engine, a device API call
 * (hipdnnDeviceMalloc_ext ...) or a pointer probe needs it.
 *
 * Why the CUDA driver API and not libcudart: libcuda.so.1 comes with every NVIDIA driver
 * and sits on the default loader path (also inside containers), its entry points are
 * versioned (_v2) and stable, and it works whatever CUDA toolkit, if any, is installed;
 * libcudart would have to be found on disk in one of several versions, each requiring a
 * minimum driver.  The driver API shares the device's primary context with cudart users
 * (our CUDA plugin, PyTorch, CuPy), so pointers, streams and events pass between them. */
#ifndef HIPDNN_BACKEND_DEVICE_H
#define HIPDNN_BACKEND_DEVICE_H

#include <stdbool.h>
#include <stddef.h>

#include "hipdnn/hipdnn.h"

/* What the heuristics read of a device (heuristic_plugins.c, device_facts.c): 0 where the
 * runtime does not say. */
typedef struct {
    int sm_count;       /* multiprocessors (CUDA) or compute units (HIP) */
    int clock_khz;      /* peak core clock */
    int mem_clock_khz;  /* peak memory clock */
    int bus_width_bits; /* global memory bus width */
} hipdnnDeviceFacts;

/* One runtime's entry points.  Each returns SUCCESS or a status with the thread's
 * message set, naming the runtime call and the vendor's error ("cuMemAlloc_v2 (4096
 * bytes): CUDA_ERROR_OUT_OF_MEMORY: out of memory"). */
typedef struct {
    const char* name;  /* "hip" or "cuda" */
    char library[256]; /* the file that was opened */
    int device_count;
    hipdnnStatus_t (*get_device)(int* device); /* the calling thread's current device */
    hipdnnStatus_t (*set_device)(int device);
    hipdnnStatus_t (*malloc)(void** ptr, size_t size);
    hipdnnStatus_t (*free)(void* ptr);
    /* stream NULL: the default stream; sync: also wait for the copy to finish */
    hipdnnStatus_t (*memcpy)(void* dst, const void* src, size_t size, hipdnnStream_t stream,
                             bool sync);
    hipdnnStatus_t (*memset)(void* ptr, int value, size_t size, hipdnnStream_t stream,
                             bool sync);
    hipdnnStatus_t (*stream_create)(hipdnnStream_t* stream);
    hipdnnStatus_t (*stream_destroy)(hipdnnStream_t stream);
    hipdnnStatus_t (*stream_synchronize)(hipdnnStream_t stream);
    hipdnnStatus_t (*stream_wait_event)(hipdnnStream_t stream, hipdnnEvent_t event);
    hipdnnStatus_t (*device_synchronize)(void);
    hipdnnStatus_t (*event_create)(hipdnnEvent_t* event);
    hipdnnStatus_t (*event_destroy)(hipdnnEvent_t event);
    hipdnnStatus_t (*event_record)(hipdnnEvent_t event, hipdnnStream_t stream);
    hipdnnStatus_t (*event_synchronize)(hipdnnEvent_t event);
    hipdnnStatus_t (*event_elapsed)(float* ms, hipdnnEvent_t start, hipdnnEvent_t end);
    /* Where ptr lives and on which device (-1 for host memory); never fails: memory the
     * runtime does not know is host memory. */
    hipdnnMemorySpace_t (*pointer_space)(const void* ptr, int* device);
    /* The mapped range of device or managed memory that ptr lies in; false for host
     * memory, or when the runtime cannot tell (then nothing is checked). */
    bool (*pointer_range)(const void* ptr, uintptr_t* base, size_t* size);
    /* Both answers in one query (execute asks both of every pointer on every call):
     * *space and *device as pointer_space gives them, and *size 0 where pointer_range
     * would be false.  NULL where the runtime has no such query. */
    void (*pointer_info)(const void* ptr, hipdnnMemorySpace_t* space, int* device,
                         uintptr_t* base, size_t* size);
    /* "<name> sm_90 140GiB driver 12040": what a tuned plan depends on (plan_cache.c);
     * fields the runtime cannot answer are left out. */
    void (*describe)(int device, char* buf, size_t len);
    /* The device's facts, each 0 where the runtime does not answer. */
    void (*facts)(int device, hipdnnDeviceFacts* f);
    /* Stream capture and graphs (graph_capture.c); capture_begin is NULL where the runtime
     * lacks them (then none is set).  Capture is thread-local: this thread's own
     * allocations and synchronizations are refused while it captures.  Status: 0 not
     * capturing, 1 capturing, 2 capture invalidated.  Node types are the vendors' common
     * numbering (0 kernel, 1 copy, 2 fill, 3 host, 4 child graph, 5 empty...). */
    hipdnnStatus_t (*capture_begin)(hipdnnStream_t stream);
    hipdnnStatus_t (*capture_end)(hipdnnStream_t stream, void** graph);
    hipdnnStatus_t (*capture_status)(hipdnnStream_t stream, int* status);
    hipdnnStatus_t (*graph_nodes)(void* graph, void** nodes, size_t* count); /* nodes NULL: count */
    hipdnnStatus_t (*graph_node_type)(void* node, int* type);
    hipdnnStatus_t (*graph_child)(void* node, void** graph); /* a child node's own graph */
    hipdnnStatus_t (*graph_add_child)(void* graph, void* child); /* a copy of child, no deps */
    /* dst, a node of kind `type` (0 to 3), takes src's parameters (a kernel's arguments, a
     * copy's pointers...): the node stays itself, which an exec update needs. */
    hipdnnStatus_t (*graph_copy_params)(void* dst, void* src, int type);
    hipdnnStatus_t (*graph_destroy)(void* graph);
    /* Optional (NULL where the runtime lacks it): swaps the calling thread's capture
     * interaction mode (0 global, 1 thread-local, 2 relaxed), as
     * cuThreadExchangeStreamCaptureMode: hipdnnDeviceRelaxCapture. */
    hipdnnStatus_t (*capture_mode)(int* mode);
} hipdnnDeviceRuntime;

/* Relaxed capture interaction (CUDA's cudaStreamCaptureModeRelaxed) for this thread, for
 * work on `stream` that never reaches a graph: allocating, synchronizing and freeing the
 * copies an execute makes (aliasing.c) while the application captures a graph on another
 * stream, in global mode (torch.cuda.graph around an execute on a handle of its own stream,
 * issue 25), which would otherwise fail them and invalidate that capture.  Nothing is
 * relaxed when `stream` itself captures (what it forbids must still fail) or the runtime
 * cannot say: returns the mode to restore, or -1. */
int hipdnnDeviceRelaxCapture(const hipdnnDeviceRuntime* rt, hipdnnStream_t stream);
void hipdnnDeviceRestoreCapture(const hipdnnDeviceRuntime* rt, int saved);

/* The vendors' loaders (device_hip.c, device_cuda.c): true with *rt filled when the
 * library opened and reports at least one device; otherwise false with one line in `why`
 * saying what was tried and what it answered. */
bool hipdnnDeviceLoadHip(hipdnnDeviceRuntime* rt, char* why, size_t len);
bool hipdnnDeviceLoadCuda(hipdnnDeviceRuntime* rt, char* why, size_t len);

/* The runtime in use, loaded on the first call (thread-safe); NULL without one. */
const hipdnnDeviceRuntime* hipdnnDeviceRuntimeGet(void);
/* Why there is none: every library tried and its answer ("" when there is one). */
const char* hipdnnDeviceRuntimeWhyNone(void);

/* Where `ptr` lives.  Without a GPU runtime every pointer is host memory. */
hipdnnMemorySpace_t hipdnnDevicePointerSpace(const void* ptr);
/* Whether the runtime knows ptr as device (or managed) memory whose mapping stops before
 * ptr + bytes, with *inside the bytes from ptr to where it stops: a tensor whose dims or
 * strides overstate its allocation.  Ranges that follow each other count as one, since
 * VMM allocators (PyTorch's expandable segments) map one buffer in pieces; so a tensor
 * running on into an allocation that starts exactly where its own ends is not caught. */
bool hipdnnDeviceExtentBeyond(const void* ptr, uint64_t bytes, uint64_t* inside);
/* The same from the range ptr lies in, already asked (size 0: unknown, nothing caught). */
bool hipdnnDeviceExtentBeyondFrom(const void* ptr, uint64_t bytes, uintptr_t base, size_t size,
                                  uint64_t* inside);
/* What rt says of ptr, as pointer_info gives it (*size 0: no range known), from this
 * thread's kept device ranges when ptr lies in one and !fresh (pointer_cache.c): what
 * execute asks of every pointer on every call.  True when the answer was a kept one (a
 * refusal made from it is asked again, fresh). */
bool hipdnnDevicePointerFacts(const hipdnnDeviceRuntime* rt, const void* ptr,
                              hipdnnMemorySpace_t* space, int* device, uintptr_t* base,
                              size_t* size, bool fresh);
/* Forgets every thread's kept ranges: called by every free of device memory hipdnn makes. */
void hipdnnPointerCacheDrop(void);
/* The memory type a HIP runtime's pointer attributes report, as a space (hip5: HIP 5's
 * numbering, else HIP 6's, which is CUDA's). */
hipdnnMemorySpace_t hipdnnDeviceSpaceFromType(int type, bool hip5);
/* The calling thread's current device; 0 without a GPU runtime. */
void hipdnnDeviceCurrent(int* device);
/* The device's identity for the plan cache: "<runtime>:<describe>", or "host" without a
 * GPU runtime. */
void hipdnnDeviceIdentity(int device, char* buf, size_t len);
/* "hip", "cuda" or "none". */
const char* hipdnnDeviceRuntimeName(void);

#endif
