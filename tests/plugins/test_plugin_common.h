/* test_plugin_common.h — one engine plugin that declines every graph, shaped by macros so
 * that each test plugin differs from a good one in exactly the way its loader rule needs.
 *
 * A test plugin defines, then includes this header:
 *   TP_PLUGIN_NAME   plugin name (string)
 *   TP_ENGINE_NAME   its single engine's name (string)
 * and optionally:
 *   TP_ENGINE_ID     the id it reports (default: FNV-1a 64 of TP_ENGINE_NAME)
 *   TP_API_MAJOR     the ABI major it claims (default: HIPDNN_PLUGIN_API_MAJOR)
 *   TP_API_MINOR     (default: 0; these plugins are ABI 1.0 ones, which must keep loading:
 *                    reference_cpu is the ABI 1.1 example)
 *   TP_REASON        the one-line reason it declines with (exports GetNotApplicableReason)
 *   TP_CREATE_FAILS  a message: hipdnnEnginePluginCreate fails with it
 *   TP_OMIT_EXECUTE  leave hipdnnEnginePluginExecuteOpGraph out
 *   TP_KNOBS         an initializer of the hipdnnPluginKnobInfo_t table it offers
 *
 * Every graph it is offered is decoded through the SDK first, so a plugin never declines
 * bytes it could not read without saying so (BAD_PARAM + message).
 */
#ifndef HIPDNN_TEST_PLUGIN_COMMON_H
#define HIPDNN_TEST_PLUGIN_COMMON_H

#include <stdlib.h>
#include <string.h>

#include "hipdnn/hipdnn_plugin.h"
#include "hipdnn/hipdnn_sdk.h"
#include "hipdnn/hipdnn_sdk_plugin.h"

#ifndef TP_PLUGIN_NAME
#error "define TP_PLUGIN_NAME before including test_plugin_common.h"
#endif
#ifndef TP_ENGINE_NAME
#error "define TP_ENGINE_NAME before including test_plugin_common.h"
#endif
#ifndef TP_ENGINE_ID
#define TP_ENGINE_ID hipdnnSdkFnv1a64(TP_ENGINE_NAME)
#endif
#ifndef TP_API_MAJOR
#define TP_API_MAJOR HIPDNN_PLUGIN_API_MAJOR
#endif
#ifndef TP_API_MINOR
#define TP_API_MINOR 0
#endif

struct hipdnnEnginePluginHandle {
    hipdnnStream_t stream;
};

static hipdnnPluginStatus_t tp_fail(hipdnnPluginStatus_t status, const char* message) {
    return hipdnnSdkPluginFail(status, "%s", message);
}

static int tp_is_mine(uint64_t engine_id) { return engine_id == (uint64_t)(TP_ENGINE_ID); }

/* The base entry points (the SDK's); TP_API_MAJOR / TP_API_MINOR are what it claims. */
HIPDNN_SDK_PLUGIN_BASE(TP_PLUGIN_NAME, "0.0.1-test", TP_API_MAJOR, TP_API_MINOR)

/* ---- engine ------------------------------------------------------------------------------ */

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetAllEngineIds(uint64_t* ids,
                                                                            uint32_t max,
                                                                            uint32_t* num) {
    if (!num) return tp_fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "GetAllEngineIds: num is NULL");
    *num = 1;
    if (ids && max >= 1) ids[0] = (uint64_t)(TP_ENGINE_ID);
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t
hipdnnEnginePluginCreate(hipdnnEnginePluginHandle_t* handle) {
    if (!handle) return tp_fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "Create: handle is NULL");
#ifdef TP_CREATE_FAILS
    *handle = NULL;
    return tp_fail(HIPDNN_PLUGIN_STATUS_INTERNAL_ERROR, TP_CREATE_FAILS);
#else
    *handle = calloc(1, sizeof(**handle));
    if (!*handle) return tp_fail(HIPDNN_PLUGIN_STATUS_ALLOC_FAILED, TP_PLUGIN_NAME ": out of memory");
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
#endif
}

HIPDNN_SDK_PLUGIN_HANDLE_BASE(TP_PLUGIN_NAME)

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetApplicableEngineIds(
    hipdnnEnginePluginHandle_t handle, const uint8_t* graph, size_t graph_size,
    uint64_t* ids, uint32_t max, uint32_t* num) {
    (void)ids;
    (void)max;
    if (!handle || !graph || !num)
        return tp_fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "GetApplicableEngineIds: NULL argument");
    hipdnnSdkGraph* g =
        hipdnnSdkPluginDecodeGraph(TP_PLUGIN_NAME, graph, graph_size, "GetApplicableEngineIds");
    if (!g) return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    hipdnnSdkPluginLog(HIPDNN_LOG_INFO, TP_PLUGIN_NAME ": declining graph '%s' (%d nodes)",
                       g->name, (int)g->num_nodes);
    hipdnnSdkGraphFree(g);
    *num = 0;
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

static const hipdnnPluginEngineDetails_t* tp_details(void) {
    static hipdnnPluginEngineDetails_t d;
    d.struct_size = sizeof(d);
    d.engine_id = (uint64_t)(TP_ENGINE_ID);
    d.name = TP_ENGINE_NAME;
    d.memory_space = HIPDNN_MEMORY_HOST;
    d.priority = 0;
    d.flags = 0;
#ifdef TP_KNOBS
    static const hipdnnPluginKnobInfo_t knobs[] = TP_KNOBS;
    d.num_knobs = (int32_t)(sizeof(knobs) / sizeof(knobs[0]));
    d.knobs = knobs;
#else
    d.num_knobs = 0;
    d.knobs = NULL;
#endif
    d.notes = "test engine: declines every graph";
    return &d;
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetEngineDetails(
    hipdnnEnginePluginHandle_t handle, uint64_t engine_id,
    const hipdnnPluginEngineDetails_t** details) {
    if (!handle || !details)
        return tp_fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "GetEngineDetails: NULL argument");
    if (!tp_is_mine(engine_id))
        return tp_fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, TP_PLUGIN_NAME ": unknown engine id");
    *details = tp_details();
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginDestroyEngineDetails(
    hipdnnEnginePluginHandle_t handle, const hipdnnPluginEngineDetails_t* details) {
    (void)handle;
    (void)details; /* static */
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

/* The engine never accepts a graph, so the backend must never get this far. */
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetWorkspaceSize(
    hipdnnEnginePluginHandle_t handle, const uint8_t* engine_config, size_t config_size,
    const uint8_t* graph, size_t graph_size, size_t* workspace_size) {
    (void)handle, (void)engine_config, (void)config_size, (void)graph, (void)graph_size;
    if (workspace_size) *workspace_size = 0;
    return tp_fail(HIPDNN_PLUGIN_STATUS_NOT_SUPPORTED,
                   TP_PLUGIN_NAME ": GetWorkspaceSize on a graph the engine declined");
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginCreateExecutionContext(
    hipdnnEnginePluginHandle_t handle, const uint8_t* engine_config, size_t config_size,
    const uint8_t* graph, size_t graph_size, hipdnnEnginePluginExecutionContext_t* ctx) {
    (void)handle, (void)engine_config, (void)config_size, (void)graph, (void)graph_size;
    if (ctx) *ctx = NULL;
    return tp_fail(HIPDNN_PLUGIN_STATUS_NOT_SUPPORTED,
                   TP_PLUGIN_NAME ": CreateExecutionContext on a graph the engine declined");
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginDestroyExecutionContext(
    hipdnnEnginePluginHandle_t handle, hipdnnEnginePluginExecutionContext_t ctx) {
    (void)handle;
    (void)ctx; /* never created */
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

#ifndef TP_OMIT_EXECUTE
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginExecuteOpGraph(
    hipdnnEnginePluginHandle_t handle, hipdnnEnginePluginExecutionContext_t ctx,
    void* workspace, const hipdnnPluginDeviceBuffer_t* buffers, uint32_t num_buffers) {
    (void)handle, (void)ctx, (void)workspace, (void)buffers, (void)num_buffers;
    return tp_fail(HIPDNN_PLUGIN_STATUS_NOT_SUPPORTED,
                   TP_PLUGIN_NAME ": ExecuteOpGraph on a graph the engine declined");
}
#endif

#ifdef TP_REASON
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetNotApplicableReason(
    hipdnnEnginePluginHandle_t handle, uint64_t engine_id, const uint8_t* graph,
    size_t graph_size, const char** reason) {
    (void)graph;
    (void)graph_size;
    if (!handle || !reason)
        return tp_fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "GetNotApplicableReason: NULL argument");
    if (!tp_is_mine(engine_id))
        return tp_fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, TP_PLUGIN_NAME ": unknown engine id");
    *reason = TP_REASON;
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}
#endif

#endif /* HIPDNN_TEST_PLUGIN_COMMON_H */
