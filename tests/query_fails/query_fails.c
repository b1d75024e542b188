/* An ABI 1.1 engine plugin, engine "query_fails", whose applicability query fails with a
 * plugin error (or, with HIPDNN_QUERY_FAILS_AT=create, whose CreateForDevice does): the
 * backend asks ABI 1.1 plugins on worker threads (csrc/backend/engine_query.c), and must
 * read the plugin's thread-local message on the thread that made the call.  Each query logs
 * "query_fails: asked on thread <tid>", so a test sees which thread asked and that a
 * worker's log lines reach the user (tests/test_engine_queries.py). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* syscall */
#endif
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hipdnn/hipdnn_plugin.h"
#include "hipdnn/hipdnn_sdk.h"
#include "hipdnn/hipdnn_sdk_plugin.h"

#define NAME "query_fails"

struct hipdnnEnginePluginHandle {
    hipdnnStream_t stream;
};

HIPDNN_SDK_PLUGIN_BASE(NAME, "0.0.1-test", HIPDNN_PLUGIN_API_MAJOR, 1)
HIPDNN_SDK_PLUGIN_HANDLE_BASE(NAME)

static bool fails_at(const char* step) {
    const char* at = getenv("HIPDNN_QUERY_FAILS_AT");
    return strcmp(at && *at ? at : "query", step) == 0;
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetAllEngineIds(uint64_t* ids,
                                                                            uint32_t max,
                                                                            uint32_t* num) {
    if (!num) return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, NAME ": NULL count");
    *num = 1;
    if (ids && max >= 1) ids[0] = hipdnnSdkFnv1a64(NAME);
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginCreateForDevice(
    hipdnnEnginePluginHandle_t* handle, const hipdnnPluginHandleInfo_t* info) {
    if (!handle || !info) return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, NAME ": NULL");
    *handle = NULL;
    if (fails_at("create"))
        return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_INTERNAL_ERROR, NAME ": CreateForDevice "
                                   "failed on thread %ld (told to)", (long)syscall(SYS_gettid));
    *handle = calloc(1, sizeof(**handle));
    return *handle ? HIPDNN_PLUGIN_STATUS_SUCCESS : HIPDNN_PLUGIN_STATUS_ALLOC_FAILED;
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginCreate(hipdnnEnginePluginHandle_t* h) {
    const hipdnnPluginHandleInfo_t info = {(uint32_t)sizeof(info), 0};
    return hipdnnEnginePluginCreateForDevice(h, &info);
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetApplicableEngineIds(
    hipdnnEnginePluginHandle_t handle, const uint8_t* graph, size_t size, uint64_t* ids,
    uint32_t max, uint32_t* num) {
    (void)graph, (void)size, (void)ids, (void)max;
    if (!handle || !num) return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, NAME ": NULL");
    *num = 0;
    const long tid = (long)syscall(SYS_gettid);
    hipdnnSdkPluginLog(HIPDNN_LOG_INFO, NAME ": asked on thread %ld", tid);
    return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_INTERNAL_ERROR, NAME ": cannot check the "
                               "graph on thread %ld (told to)", tid);
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetEngineDetails(
    hipdnnEnginePluginHandle_t handle, uint64_t id, const hipdnnPluginEngineDetails_t** details) {
    (void)handle;
    static hipdnnPluginEngineDetails_t d;
    if (!details) return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, NAME ": NULL");
    hipdnnPluginStatus_t st = hipdnnSdkPluginCheckEngine(NAME, id, "GetEngineDetails");
    if (st != HIPDNN_PLUGIN_STATUS_SUCCESS) return st;
    d = (hipdnnPluginEngineDetails_t){.struct_size = sizeof(d), .engine_id = id, .name = NAME,
                                      .memory_space = HIPDNN_MEMORY_HOST, .priority = 0,
                                      .notes = "test engine: its query fails"};
    *details = &d;
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginDestroyEngineDetails(
    hipdnnEnginePluginHandle_t handle, const hipdnnPluginEngineDetails_t* details) {
    (void)handle, (void)details; /* static */
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

/* The engine never takes a graph, so the backend never gets further. */
static hipdnnPluginStatus_t never(const char* fn) {
    return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_NOT_SUPPORTED, NAME ": %s: it runs no graph",
                               fn);
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetWorkspaceSize(
    hipdnnEnginePluginHandle_t handle, const uint8_t* cfg, size_t cfg_size, const uint8_t* graph,
    size_t graph_size, size_t* size) {
    (void)handle, (void)cfg, (void)cfg_size, (void)graph, (void)graph_size, (void)size;
    return never("GetWorkspaceSize");
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginCreateExecutionContext(
    hipdnnEnginePluginHandle_t handle, const uint8_t* cfg, size_t cfg_size, const uint8_t* graph,
    size_t graph_size, hipdnnEnginePluginExecutionContext_t* ctx) {
    (void)handle, (void)cfg, (void)cfg_size, (void)graph, (void)graph_size;
    if (ctx) *ctx = NULL;
    return never("CreateExecutionContext");
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginDestroyExecutionContext(
    hipdnnEnginePluginHandle_t handle, hipdnnEnginePluginExecutionContext_t ctx) {
    (void)handle, (void)ctx; /* never made */
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginExecuteOpGraph(
    hipdnnEnginePluginHandle_t handle, hipdnnEnginePluginExecutionContext_t ctx, void* workspace,
    const hipdnnPluginDeviceBuffer_t* buffers, uint32_t num_buffers) {
    (void)handle, (void)ctx, (void)workspace, (void)buffers, (void)num_buffers;
    return never("ExecuteOpGraph");
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetWorkspaceSizeFromExecutionContext(
    hipdnnEnginePluginHandle_t handle, hipdnnEnginePluginExecutionContext_t ctx, size_t* size) {
    (void)handle, (void)ctx, (void)size;
    return never("GetWorkspaceSizeFromExecutionContext");
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginEnqueueOpGraph(
    hipdnnEnginePluginHandle_t handle, hipdnnEnginePluginExecutionContext_t ctx, void* workspace,
    size_t workspace_size, const hipdnnPluginTensorBuffer_t* buffers, uint32_t num_buffers) {
    (void)handle, (void)ctx, (void)workspace, (void)workspace_size, (void)buffers,
        (void)num_buffers;
    return never("EnqueueOpGraph");
}
