/* hipdnn_plugin.h — the engine plugin ABI, version 1.1 (1.0 plugins keep loading).
 *
 * A plugin is a shared library, built with hidden visibility, that exports the C
 * functions below (HIPDNN_PLUGIN_EXPORT).  The backend loads it with
 * dlopen(RTLD_NOW | RTLD_LOCAL), reads hipdnnPluginGetApiVersion first and refuses a
 * different major version, then resolves every required symbol; a plugin lacking one is
 * skipped with a logged reason and the others keep working.
 *
 * Every function returns a hipdnnPluginStatus_t; on failure the plugin's thread-local
 * message is read with hipdnnPluginGetLastErrorString.  Graphs arrive as FlatBuffers
 * bytes (csrc/schema/graph.fbs); the SDK (hipdnn_sdk.h) decodes them into a plain-C view.
 * Engine configurations arrive the same way (engine.fbs).
 *
 * Threading: the backend calls a plugin handle from one thread at a time; distinct
 * handles may be used concurrently (a full ranking asks the plugins at once, below).
 *
 * fork(): the backend's fork handler waits until no plugin function is running under a
 * hipdnn handle and no plugin is loading, so a plugin whose state lives in its handles
 * needs nothing more.  A plugin that keeps threads or locks beyond a call (a pool) must
 * make them work again in a forked child itself (pthread_atfork).
 *
 * Before dlopen the backend checks the file (a regular, readable shared library for this
 * machine whose segments lie inside it) and skips it with the reason otherwise.
 *
 * What 1.1 adds (a plugin reporting minor >= 1 must export all of it):
 *   - handles are created lazily, per hipdnn handle, by CreateForDevice with the device
 *     that hipdnn handle was created on; the loader creates none, so a plugin touches its
 *     GPU runtime only when first used (or, to decline loading where its GPU is absent,
 *     in GetAllEngineIds).  GetAllEngineIds, GetEngineDetails (handle NULL) and
 *     DestroyEngineDetails (handle NULL) must work without a handle;
 *   - any thread: a handle may be created and asked (GetApplicableEngineIds,
 *     GetNotApplicableReason) on a backend worker thread, each plugin's beside the
 *     others', and used later on the application's threads, so a plugin must not rely on
 *     the calling thread's current device or context (it has CreateForDevice's device)
 *     nor on what an earlier call left on the thread;
 *   - GetWorkspaceSizeFromExecutionContext: an engine that compiles at plan time does so
 *     once, in CreateExecutionContext, and reports the workspace of what it built;
 *   - EnqueueOpGraph: each buffer says which memory space it is in (as the frontend knows
 *     it), the workspace comes with its size, and runtime by-value scalars come as host
 *     pointers.  The work is enqueued on the handle's stream and may still be pending on
 *     return; the caller keeps every buffer alive and unchanged until that stream has
 *     synchronized.  Runtime scalars are read before EnqueueOpGraph returns.  The plugin
 *     allocates no memory inside it: scratch comes from the workspace it asked for.
 * An execution context belongs to the plugin, not to the handle it was made on: the
 * backend may run it through any handle of that plugin on the same device.
 * A 1.0 plugin is driven as before: a probe handle at load, GetWorkspaceSize before the
 * context, ExecuteOpGraph with host memory only.
 *
 * Optional symbols (any minor; a plugin without them loads, and the backend's default
 * answers): GetNotApplicableReason ("declined, no reason given") and GetKernelInfo (which
 * nodes each kernel of a plan runs; without it the plan's kernels are not reported).
 */
#ifndef HIPDNN_PLUGIN_H
#define HIPDNN_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "hipdnn/hipdnn.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HIPDNN_PLUGIN_API_MAJOR 1
#define HIPDNN_PLUGIN_API_MINOR 1

#define HIPDNN_PLUGIN_EXPORT __attribute__((visibility("default")))

typedef enum {
    HIPDNN_PLUGIN_STATUS_SUCCESS = 0,
    HIPDNN_PLUGIN_STATUS_BAD_PARAM = 1,
    HIPDNN_PLUGIN_STATUS_INVALID_VALUE = 2,
    HIPDNN_PLUGIN_STATUS_ALLOC_FAILED = 3,
    HIPDNN_PLUGIN_STATUS_NOT_SUPPORTED = 4,
    HIPDNN_PLUGIN_STATUS_INTERNAL_ERROR = 5,
    HIPDNN_PLUGIN_STATUS_EXECUTION_FAILED = 6,
} hipdnnPluginStatus_t;

typedef enum {
    HIPDNN_PLUGIN_TYPE_ENGINE = 0,
    HIPDNN_PLUGIN_TYPE_HEURISTIC = 1, /* reserved */
    HIPDNN_PLUGIN_TYPE_BENCHMARK = 2, /* reserved */
} hipdnnPluginType_t;

typedef struct hipdnnEnginePluginHandle* hipdnnEnginePluginHandle_t;
typedef struct hipdnnEnginePluginExecutionContext* hipdnnEnginePluginExecutionContext_t;

/* Knob a plugin's engine offers (id unique within the engine). */
typedef struct {
    int64_t knob_id;
    const char* name;
    int64_t min_value, max_value, default_value;
} hipdnnPluginKnobInfo_t;

/* Which values of a knob's range build a plan (optional; autotuning sweeps only these and
 * the backend refuses others when an engine config is finalized): min_value + k * stride
 * (stride 0 or 1: every value), and when num_values > 0 only values[0..num_values), each
 * in range and on the stride, the default among them (at most 16). */
typedef struct {
    int64_t stride;
    int32_t num_values;
    const int64_t* values;
} hipdnnPluginKnobValues_t;

/* Behaviour flags of an engine. */
#define HIPDNN_ENGINE_FLAG_FALLBACK 1u      /* a reference: slow, covers much, exact */
#define HIPDNN_ENGINE_FLAG_DETERMINISTIC 2u /* bitwise reproducible runs */
/* Its plans compile kernels when built (cuDNN's behaviour note RUNTIME_COMPILATION). */
#define HIPDNN_ENGINE_FLAG_RUNTIME_COMPILATION 4u

/* What an engine is.  Filled by the plugin, owned by it until DestroyEngineDetails. */
typedef struct {
    uint32_t struct_size; /* sizeof(hipdnnPluginEngineDetails_t) as the plugin knows it */
    uint64_t engine_id;   /* FNV-1a 64 of name */
    const char* name;
    hipdnnMemorySpace_t memory_space; /* where every tensor pointer must live */
    int32_t priority;                 /* higher ranks first under heur mode A */
    uint32_t flags;                   /* HIPDNN_ENGINE_FLAG_* */
    int32_t num_knobs;
    const hipdnnPluginKnobInfo_t* knobs;
    const char* notes; /* one line on numerics/behaviour, may be NULL */
    /* num_knobs entries beside knobs, or NULL: every value of each range.  Read only when
     * struct_size covers it (older plugins' details end at notes). */
    const hipdnnPluginKnobValues_t* knob_values;
} hipdnnPluginEngineDetails_t;

/* One tensor of a variant pack. */
typedef struct {
    int64_t uid;
    void* ptr;
} hipdnnPluginDeviceBuffer_t;

/* One tensor of a variant pack, ABI 1.1. */
typedef struct {
    int64_t uid;
    void* ptr;
    hipdnnMemorySpace_t memory_space; /* as the frontend declared it (or as probed) */
} hipdnnPluginTensorBuffer_t;

/* What a plugin handle is created for, ABI 1.1.  Extensible: read only what struct_size
 * covers. */
typedef struct {
    uint32_t struct_size; /* sizeof(hipdnnPluginHandleInfo_t) as the backend knows it */
    int32_t device;       /* GPU device of the hipdnn handle; 0 on machines without one */
} hipdnnPluginHandleInfo_t;

/* Log callback the backend gives each plugin; levels are hipdnnLogLevel_t.  Any thread.
 * What a call logs on the thread that called it reaches the user once the call returns
 * (outside the backend's locks); what other threads log, at once. */
typedef void (*hipdnnPluginLoggingCallback_t)(int level, const char* message);

/* ---- base (required) ------------------------------------------------------------------ */

/* Checked first, before any other symbol is resolved. */
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnPluginGetApiVersion(uint32_t* major,
                                                                    uint32_t* minor);
/* Static strings owned by the plugin. */
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnPluginGetName(const char** name);
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnPluginGetVersion(const char** version);
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnPluginGetType(hipdnnPluginType_t* type);
/* The calling thread's message for the plugin's last failure. */
HIPDNN_PLUGIN_EXPORT void hipdnnPluginGetLastErrorString(const char** message);
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t
hipdnnPluginSetLoggingCallback(hipdnnPluginLoggingCallback_t callback);

/* ---- engine (required) ---------------------------------------------------------------- */

/* Two-call pattern: with ids = NULL, *num gets the count.  Called at load; returning
 * NOT_SUPPORTED (with the message set) declines loading on this machine, e.g. a device
 * plugin that finds no device or too old a driver: the loader skips the plugin, logging
 * "declined to load: <message>" as info, so that builds of one engine for several vendors
 * can sit in one folder and the one whose GPU is present registers the engine. */
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetAllEngineIds(uint64_t* ids,
                                                                            uint32_t max,
                                                                            uint32_t* num);
/* Creates the plugin's state (device context, caches).  A failure here makes the
 * backend skip the plugin and log the message. */
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t
hipdnnEnginePluginCreate(hipdnnEnginePluginHandle_t* handle);
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t
hipdnnEnginePluginDestroy(hipdnnEnginePluginHandle_t handle);
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t
hipdnnEnginePluginSetStream(hipdnnEnginePluginHandle_t handle, hipdnnStream_t stream);

/* Engines of this plugin that can run the graph; declining is not an error. */
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetApplicableEngineIds(
    hipdnnEnginePluginHandle_t handle, const uint8_t* graph, size_t graph_size,
    uint64_t* ids, uint32_t max, uint32_t* num);

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetEngineDetails(
    hipdnnEnginePluginHandle_t handle, uint64_t engine_id,
    const hipdnnPluginEngineDetails_t** details);
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginDestroyEngineDetails(
    hipdnnEnginePluginHandle_t handle, const hipdnnPluginEngineDetails_t* details);

/* Workspace bytes a config needs for a graph. */
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetWorkspaceSize(
    hipdnnEnginePluginHandle_t handle, const uint8_t* engine_config, size_t config_size,
    const uint8_t* graph, size_t graph_size, size_t* workspace_size);

/* Prepares to run (engine config, graph); the context owns copies of what it needs. */
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginCreateExecutionContext(
    hipdnnEnginePluginHandle_t handle, const uint8_t* engine_config, size_t config_size,
    const uint8_t* graph, size_t graph_size, hipdnnEnginePluginExecutionContext_t* ctx);
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginDestroyExecutionContext(
    hipdnnEnginePluginHandle_t handle, hipdnnEnginePluginExecutionContext_t ctx);

/* Runs.  `buffers` holds a pointer for each non-virtual tensor but by-value constants (a
 * runtime by-value scalar: a host pointer to its value); the backend has checked that all
 * are present and in host memory. */
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginExecuteOpGraph(
    hipdnnEnginePluginHandle_t handle, hipdnnEnginePluginExecutionContext_t ctx,
    void* workspace, const hipdnnPluginDeviceBuffer_t* buffers, uint32_t num_buffers);

/* ---- engine, ABI 1.1 (required when the plugin reports minor >= 1) -------------------- */

/* A plugin handle for one hipdnn handle on `info->device`, created on first use.  A failure
 * (no device, driver too old) makes that plugin's engines decline with this message. */
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginCreateForDevice(
    hipdnnEnginePluginHandle_t* handle, const hipdnnPluginHandleInfo_t* info);

/* Workspace bytes the context needs, as built (asked after CreateExecutionContext). */
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetWorkspaceSizeFromExecutionContext(
    hipdnnEnginePluginHandle_t handle, hipdnnEnginePluginExecutionContext_t ctx,
    size_t* workspace_size);

/* Enqueues the context's graph on the handle's stream (see the top of this file).
 * `buffers` holds every non-virtual tensor: data tensors in the engine's memory space (or
 * managed memory), runtime by-value scalars as host pointers.  workspace_size is at least
 * what the context asked for. */
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginEnqueueOpGraph(
    hipdnnEnginePluginHandle_t handle, hipdnnEnginePluginExecutionContext_t ctx,
    void* workspace, size_t workspace_size, const hipdnnPluginTensorBuffer_t* buffers,
    uint32_t num_buffers);

/* One kernel of an execution context: one launch (GPU) or one pass over the data (host)
 * that runs the graph nodes listed, whose intermediates between them never reach memory
 * the caller sees.  Filled by the plugin; see GetKernelInfo. */
typedef struct {
    uint32_t struct_size; /* sizeof(hipdnnPluginKernelInfo_t) as the plugin knows it: the
                           * distance between entries of the array, and what they hold */
    const char* name;     /* the engine's short name for the kernel: "pointwise",
                           * "row-wise", "conv_fprop" ... */
    const char* detail;   /* one line on what it does ("3 pointwise nodes fused"), or NULL */
    uint32_t num_nodes;
    const uint32_t* nodes; /* the nodes it runs: indices into the graph's nodes, in the order
                            * of the graph bytes the context was created from, ascending */
} hipdnnPluginKernelInfo_t;

/* ---- engine (optional) ---------------------------------------------------------------- */

/* One line saying why engine_id declines the graph; a static or handle-owned string
 * valid until the next call on the handle.  Without it the backend reports "declined,
 * no reason given". */
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetNotApplicableReason(
    hipdnnEnginePluginHandle_t handle, uint64_t engine_id, const uint8_t* graph,
    size_t graph_size, const char** reason);

/* The kernels an execution context runs, in launch order (optional, any minor: a plugin
 * without it keeps loading; the backend then answers hipdnnGetPlanKernels_ext with
 * NOT_SUPPORTED, "the engine does not describe its kernels").  Every node of the graph is
 * in at least one kernel; a node may be in several (a reduction cut into two passes).
 * *kernels is an array of *num_kernels entries, struct_size bytes apart, owned by the
 * context and valid, unchanged, until it is destroyed.  Answered from what the context
 * built: no compilation, no device work.  Called as the other context functions are (one
 * thread at a time per plugin handle). */
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetKernelInfo(
    hipdnnEnginePluginHandle_t handle, hipdnnEnginePluginExecutionContext_t ctx,
    const hipdnnPluginKernelInfo_t** kernels, uint32_t* num_kernels);

#ifdef __cplusplus
}
#endif

#endif /* HIPDNN_PLUGIN_H */
