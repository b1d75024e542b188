/* hipdnn_sdk_plugin.h — what every engine plugin's entry points repeat, written once.
 *
 * Each plugin links its own copy of the SDK (statically, its symbols hidden), so the state
 * here, the calling thread's last error and the backend's log callback, is the plugin's
 * own.  HIPDNN_SDK_PLUGIN_BASE defines the six base entry points of hipdnn_plugin.h from
 * one line; the hipdnnSdkPlugin* checks below serve a plugin whose one engine has the
 * FNV-1a 64 hash of its name as id and no knobs.  HIPDNN_SDK_PLUGIN_HANDLE_BASE and
 * HIPDNN_SDK_PLUGIN_CONTEXT_BASE define the entry points that only touch a handle's stream
 * or a context's kernel list.  Every failure sets the last error to
 * "<who>: <fn>: <what>" and returns the status the ABI asks for.
 */
#ifndef HIPDNN_SDK_PLUGIN_H
#define HIPDNN_SDK_PLUGIN_H

#include <stdlib.h>

#include "hipdnn/hipdnn_plugin.h"
#include "hipdnn/hipdnn_sdk.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define HIPDNN_SDK_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define HIPDNN_SDK_PRINTF(f, a)
#endif

/* Longest last-error message or log line; longer ones are cut. */
#define HIPDNN_SDK_PLUGIN_MSG_LEN 1024

/* ---- diagnostics ------------------------------------------------------------------ */

/* Sets the calling thread's last error (GetLastErrorString's answer). */
void hipdnnSdkPluginSetError(const char* fmt, ...) HIPDNN_SDK_PRINTF(1, 2);
/* Sets the last error and returns status: `return hipdnnSdkPluginFail(st, "...")`. */
hipdnnPluginStatus_t hipdnnSdkPluginFail(hipdnnPluginStatus_t status, const char* fmt, ...)
    HIPDNN_SDK_PRINTF(2, 3);
const char* hipdnnSdkPluginLastError(void);
/* The backend's log callback, set once right after loading, and a line through it (none
 * before it is set). */
void hipdnnSdkPluginSetLogCallback(hipdnnPluginLoggingCallback_t callback);
void hipdnnSdkPluginLog(int level, const char* fmt, ...) HIPDNN_SDK_PRINTF(2, 3);

/* ---- the base entry points ------------------------------------------------------------ */

/* Their answers, an output pointer checked first ("<name>: <fn>: NULL output"). */
hipdnnPluginStatus_t hipdnnSdkPluginAnswerVersion(const char* name, uint32_t api_major,
                                                  uint32_t api_minor, uint32_t* major,
                                                  uint32_t* minor);
hipdnnPluginStatus_t hipdnnSdkPluginAnswerString(const char* name, const char* fn,
                                                 const char* value, const char** out);
hipdnnPluginStatus_t hipdnnSdkPluginAnswerType(const char* name, hipdnnPluginType_t* type);

/* Defines hipdnnPluginGetApiVersion, GetName, GetVersion, GetType, GetLastErrorString and
 * SetLoggingCallback for an engine plugin called `name`, of `version`, speaking the ABI
 * api_major.api_minor; its errors and log are the diagnostics above.  Once, at file scope. */
#define HIPDNN_SDK_PLUGIN_BASE(name, version, api_major, api_minor)                          \
    HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnPluginGetApiVersion(uint32_t* major,      \
                                                                        uint32_t* minor) {   \
        return hipdnnSdkPluginAnswerVersion(name, api_major, api_minor, major, minor);       \
    }                                                                                        \
    HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnPluginGetName(const char** out) {        \
        return hipdnnSdkPluginAnswerString(name, "GetName", name, out);                      \
    }                                                                                        \
    HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnPluginGetVersion(const char** out) {     \
        return hipdnnSdkPluginAnswerString(name, "GetVersion", version, out);                \
    }                                                                                        \
    HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnPluginGetType(hipdnnPluginType_t* type) { \
        return hipdnnSdkPluginAnswerType(name, type);                                        \
    }                                                                                        \
    HIPDNN_PLUGIN_EXPORT void hipdnnPluginGetLastErrorString(const char** message) {         \
        if (message) *message = hipdnnSdkPluginLastError();                                  \
    }                                                                                        \
    HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnPluginSetLoggingCallback(                \
        hipdnnPluginLoggingCallback_t callback) {                                            \
        hipdnnSdkPluginSetLogCallback(callback);                                             \
        return HIPDNN_PLUGIN_STATUS_SUCCESS;                                                 \
    }

/* ---- handles and execution contexts -------------------------------------------------- */

/* Defines hipdnnEnginePluginDestroy (free) and hipdnnEnginePluginSetStream for a plugin
 * whose struct hipdnnEnginePluginHandle is allocated with malloc and has a `stream`. */
#define HIPDNN_SDK_PLUGIN_HANDLE_BASE(name)                                                  \
    HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginDestroy(                     \
        hipdnnEnginePluginHandle_t handle) {                                                 \
        free(handle);                                                                        \
        return HIPDNN_PLUGIN_STATUS_SUCCESS;                                                 \
    }                                                                                        \
    HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginSetStream(                   \
        hipdnnEnginePluginHandle_t handle, hipdnnStream_t stream) {                          \
        if (!handle)                                                                         \
            return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_BAD_PARAM,                       \
                                       "%s: SetStream: NULL handle", name);                  \
        handle->stream = stream;                                                             \
        return HIPDNN_PLUGIN_STATUS_SUCCESS;                                                 \
    }

/* Defines hipdnnEnginePluginDestroyExecutionContext (destroy(ctx) for a context) and
 * hipdnnEnginePluginGetKernelInfo (answered from the context's `kernels` and
 * `num_kernels`) for a plugin whose struct hipdnnEnginePluginExecutionContext has them. */
#define HIPDNN_SDK_PLUGIN_CONTEXT_BASE(name, destroy)                                        \
    HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginDestroyExecutionContext(     \
        hipdnnEnginePluginHandle_t handle, hipdnnEnginePluginExecutionContext_t ctx) {       \
        (void)handle;                                                                        \
        if (ctx) destroy(ctx);                                                               \
        return HIPDNN_PLUGIN_STATUS_SUCCESS;                                                 \
    }                                                                                        \
    HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetKernelInfo(               \
        hipdnnEnginePluginHandle_t handle, hipdnnEnginePluginExecutionContext_t ctx,         \
        const hipdnnPluginKernelInfo_t** kernels, uint32_t* num_kernels) {                   \
        (void)handle; /* answered from the context */                                        \
        if (!ctx || !kernels || !num_kernels)                                                \
            return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_BAD_PARAM,                       \
                                       "%s: GetKernelInfo: NULL context or output", name);   \
        *kernels = ctx->kernels;                                                             \
        *num_kernels = ctx->num_kernels;                                                     \
        return HIPDNN_PLUGIN_STATUS_SUCCESS;                                                 \
    }

/* ---- one engine: its id, configs and graphs ------------------------------------------ */

/* SUCCESS if id is engine's (hipdnnSdkFnv1a64 of the name); else BAD_PARAM. */
hipdnnPluginStatus_t hipdnnSdkPluginCheckEngine(const char* engine, uint64_t id,
                                                const char* fn);
/* An engine config's bytes for `engine`, which has no knobs: SUCCESS, else BAD_PARAM. */
hipdnnPluginStatus_t hipdnnSdkPluginCheckConfig(const char* engine, const uint8_t* config,
                                                size_t size, const char* fn);
/* An engine config's bytes for `engine`, whose knobs are `knobs[n]`: SUCCESS with
 * values[i] the value chosen for knobs[i] (its default when not chosen), else BAD_PARAM
 * naming the knob not offered, chosen twice, or out of its range. */
hipdnnPluginStatus_t hipdnnSdkPluginConfigKnobs(const char* engine, const uint8_t* config,
                                                size_t size, const char* fn,
                                                const hipdnnPluginKnobInfo_t* knobs, int32_t n,
                                                int64_t* values);
/* The graph the bytes hold (freed with hipdnnSdkGraphFree), or NULL with the error set. */
hipdnnSdkGraph* hipdnnSdkPluginDecodeGraph(const char* who, const uint8_t* graph, size_t size,
                                           const char* fn);

/* Whether the engine runs g (ctx: what the caller passed, e.g. its plugin handle); if not,
 * one line in why saying so (hipdnnSdkDecline). */
typedef bool (*hipdnnSdkPluginSupportFn)(void* ctx, const hipdnnSdkGraph* g, char* why,
                                         size_t len);

/* GetApplicableEngineIds' question: *applicable, or BAD_PARAM for bytes that are no graph
 * (declining is not an error). */
hipdnnPluginStatus_t hipdnnSdkPluginApplicable(const char* engine, const uint8_t* graph,
                                               size_t size, hipdnnSdkPluginSupportFn supported,
                                               void* ctx, bool* applicable);
/* GetNotApplicableReason's answer, into reason: why the bytes are no graph, the engine's
 * reason, or "<engine>: applicable (no reason to decline)". */
void hipdnnSdkPluginReason(const char* engine, const uint8_t* graph, size_t size,
                           hipdnnSdkPluginSupportFn supported, void* ctx, char* reason,
                           size_t len);

/* Defines hipdnnEnginePluginGetApplicableEngineIds and GetNotApplicableReason for a plugin
 * of one engine, `name`, whose struct hipdnnEnginePluginHandle has `char reason[]` (the
 * reason's storage until the next call): supported(handle, g, why, len) answers both. */
#define HIPDNN_SDK_PLUGIN_APPLICABILITY_BASE(name, supported)                               \
    HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetApplicableEngineIds(     \
        hipdnnEnginePluginHandle_t handle, const uint8_t* graph, size_t graph_size,         \
        uint64_t* ids, uint32_t max, uint32_t* num) {                                       \
        if (!handle || !num)                                                                \
            return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_BAD_PARAM,                      \
                                       "%s: GetApplicableEngineIds: NULL handle or count",  \
                                       name);                                               \
        *num = 0;                                                                           \
        bool ok = false;                                                                    \
        hipdnnPluginStatus_t st =                                                           \
            hipdnnSdkPluginApplicable(name, graph, graph_size, supported, handle, &ok);     \
        if (st != HIPDNN_PLUGIN_STATUS_SUCCESS || !ok) return st; /* declining: no error */ \
        *num = 1;                                                                           \
        if (ids && max >= 1) ids[0] = hipdnnSdkFnv1a64(name);                              \
        return HIPDNN_PLUGIN_STATUS_SUCCESS;                                                \
    }                                                                                       \
    HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetNotApplicableReason(     \
        hipdnnEnginePluginHandle_t handle, uint64_t id, const uint8_t* graph,               \
        size_t graph_size, const char** reason) {                                           \
        if (!handle || !reason)                                                             \
            return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_BAD_PARAM,                      \
                                       "%s: GetNotApplicableReason: NULL handle or output", \
                                       name);                                               \
        hipdnnPluginStatus_t st =                                                           \
            hipdnnSdkPluginCheckEngine(name, id, "GetNotApplicableReason");                 \
        if (st != HIPDNN_PLUGIN_STATUS_SUCCESS) return st;                                  \
        hipdnnSdkPluginReason(name, graph, graph_size, supported, handle, handle->reason,   \
                              sizeof(handle->reason));                                      \
        *reason = handle->reason;                                                           \
        return HIPDNN_PLUGIN_STATUS_SUCCESS;                                                \
    }

#ifdef __cplusplus
}
#endif

#endif /* HIPDNN_SDK_PLUGIN_H */
