/* What every engine plugin's entry points repeat (hipdnn_sdk_plugin.h): its diagnostics,
 * the base answers and the checks of a one-engine plugin.  Only plugins call these, so
 * the backend, which links the SDK too, pulls nothing of this file in. */
#include <stdarg.h>
#include <stdio.h>

#include "hipdnn/hipdnn_sdk_plugin.h"

static _Thread_local char t_error[HIPDNN_SDK_PLUGIN_MSG_LEN];

/* Set once by the backend right after loading, before any handle exists. */
static hipdnnPluginLoggingCallback_t g_log;

/* ---- diagnostics ------------------------------------------------------------------ */

void hipdnnSdkPluginSetError(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t_error, sizeof(t_error), fmt, ap);
    va_end(ap);
}

hipdnnPluginStatus_t hipdnnSdkPluginFail(hipdnnPluginStatus_t status, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t_error, sizeof(t_error), fmt, ap);
    va_end(ap);
    return status;
}

const char* hipdnnSdkPluginLastError(void) { return t_error; }

void hipdnnSdkPluginSetLogCallback(hipdnnPluginLoggingCallback_t callback) { g_log = callback; }

void hipdnnSdkPluginLog(int level, const char* fmt, ...) {
    hipdnnPluginLoggingCallback_t cb = g_log;
    if (!cb) return;
    char line[HIPDNN_SDK_PLUGIN_MSG_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    cb(level, line);
}

/* ---- the base entry points ------------------------------------------------------------ */

hipdnnPluginStatus_t hipdnnSdkPluginAnswerVersion(const char* name, uint32_t api_major,
                                                  uint32_t api_minor, uint32_t* major,
                                                  uint32_t* minor) {
    if (!major || !minor)
        return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "%s: GetApiVersion: NULL output",
                                   name);
    *major = api_major;
    *minor = api_minor;
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

hipdnnPluginStatus_t hipdnnSdkPluginAnswerString(const char* name, const char* fn,
                                                 const char* value, const char** out) {
    if (!out)
        return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "%s: %s: NULL output", name, fn);
    *out = value;
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

hipdnnPluginStatus_t hipdnnSdkPluginAnswerType(const char* name, hipdnnPluginType_t* type) {
    if (!type)
        return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "%s: GetType: NULL output",
                                   name);
    *type = HIPDNN_PLUGIN_TYPE_ENGINE;
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

/* ---- one engine: its id, configs and graphs ------------------------------------------ */

hipdnnPluginStatus_t hipdnnSdkPluginCheckEngine(const char* engine, uint64_t id,
                                                const char* fn) {
    const uint64_t mine = hipdnnSdkFnv1a64(engine);
    if (id == mine) return HIPDNN_PLUGIN_STATUS_SUCCESS;
    return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_BAD_PARAM,
                               "%s: %s: unknown engine id 0x%016llx (this plugin has only '%s', "
                               "0x%016llx)", engine, fn, (unsigned long long)id, engine,
                               (unsigned long long)mine);
}

hipdnnPluginStatus_t hipdnnSdkPluginCheckConfig(const char* engine, const uint8_t* config,
                                                size_t size, const char* fn) {
    return hipdnnSdkPluginConfigKnobs(engine, config, size, fn, NULL, 0, NULL);
}

/* The knob choices against the table; -1 when one fails, with the error set. */
static int knob_values(const char* engine, const char* fn, const hipdnnSdkEngineConfig* cfg,
                       const hipdnnPluginKnobInfo_t* knobs, int32_t n, int64_t* values) {
    for (int32_t i = 0; i < n; ++i) values[i] = knobs[i].default_value;
    for (int32_t c = 0; c < cfg->num_knobs; ++c) {
        const hipdnnSdkKnobChoice* k = &cfg->knobs[c];
        int32_t at = -1;
        for (int32_t i = 0; i < n && at < 0; ++i)
            if (knobs[i].knob_id == k->knob_id) at = i;
        bool twice = false;
        for (int32_t d = 0; d < c; ++d) twice = twice || cfg->knobs[d].knob_id == k->knob_id;
        if (at < 0 || twice || k->value < knobs[at].min_value || k->value > knobs[at].max_value) {
            hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "%s: %s: knob %lld = %lld: %s",
                                engine, fn, (long long)k->knob_id, (long long)k->value,
                                at < 0 ? (n ? "the engine has no such knob" : "the engine has no knobs")
                                : twice ? "chosen twice" : "out of the knob's range");
            return -1;
        }
        values[at] = k->value;
    }
    return 0;
}

hipdnnPluginStatus_t hipdnnSdkPluginConfigKnobs(const char* engine, const uint8_t* config,
                                                size_t size, const char* fn,
                                                const hipdnnPluginKnobInfo_t* knobs, int32_t n,
                                                int64_t* values) {
    char err[HIPDNN_SDK_PLUGIN_MSG_LEN];
    hipdnnSdkEngineConfig* cfg = hipdnnSdkEngineConfigDecode(config, size, err, sizeof(err));
    if (!cfg)
        return hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "%s: %s: %s", engine, fn, err);
    hipdnnPluginStatus_t st = hipdnnSdkPluginCheckEngine(engine, cfg->engine_id, fn);
    if (st == HIPDNN_PLUGIN_STATUS_SUCCESS && knob_values(engine, fn, cfg, knobs, n, values) < 0)
        st = HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    hipdnnSdkEngineConfigFree(cfg);
    return st;
}

hipdnnSdkGraph* hipdnnSdkPluginDecodeGraph(const char* who, const uint8_t* graph, size_t size,
                                           const char* fn) {
    char err[HIPDNN_SDK_PLUGIN_MSG_LEN];
    hipdnnSdkGraph* g = hipdnnSdkGraphDecode(graph, size, err, sizeof(err));
    if (!g) hipdnnSdkPluginSetError("%s: %s: %s", who, fn, err);
    return g;
}

hipdnnPluginStatus_t hipdnnSdkPluginApplicable(const char* engine, const uint8_t* graph,
                                               size_t size, hipdnnSdkPluginSupportFn supported,
                                               void* ctx, bool* applicable) {
    *applicable = false;
    hipdnnSdkGraph* g = hipdnnSdkPluginDecodeGraph(engine, graph, size, "GetApplicableEngineIds");
    if (!g) return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    char why[HIPDNN_SDK_PLUGIN_MSG_LEN];
    *applicable = supported(ctx, g, why, sizeof(why));
    hipdnnSdkGraphFree(g);
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

void hipdnnSdkPluginReason(const char* engine, const uint8_t* graph, size_t size,
                           hipdnnSdkPluginSupportFn supported, void* ctx, char* reason,
                           size_t len) {
    char err[HIPDNN_SDK_PLUGIN_MSG_LEN];
    hipdnnSdkGraph* g = hipdnnSdkGraphDecode(graph, size, err, sizeof(err));
    if (!g)
        hipdnnSdkDecline(reason, len, engine, "%s", err);
    else if (supported(ctx, g, reason, len))
        hipdnnSdkFormat(reason, len, "%s: applicable (no reason to decline)", engine);
    hipdnnSdkGraphFree(g);
}
