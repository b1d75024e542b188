/* options.c — the ep.hipdnn.* session options.  ORT hands the options given to
 * SessionOptionsAppendExecutionProvider_V2 to CreateEp as session config entries with the
 * "ep.hipdnn." prefix; they are read once there. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipdnn_ep.h"

static void copy_bounded(char* dst, size_t cap, const char* src, const OrtLogger* logger,
                         const char* key) {
    size_t n = strlen(src);
    if (n >= cap) {
        ep_log(logger, ORT_LOGGING_LEVEL_VERBOSE, ORT_LOGGING_LEVEL_WARNING,
               "option %s: value of %zu characters is too long (at most %zu); ignored", key, n,
               cap - 1);
        return;
    }
    memcpy(dst, src, n + 1);
}

static bool parse_heur(const char* v, hipdnnBackendHeurMode_t* out) {
    if (!strcmp(v, "a") || !strcmp(v, "A")) *out = HIPDNN_HEUR_MODE_A;
    else if (!strcmp(v, "b") || !strcmp(v, "B")) *out = HIPDNN_HEUR_MODE_B;
    else if (!strcmp(v, "fallback")) *out = HIPDNN_HEUR_MODE_FALLBACK;
    else return false;
    return true;
}

static bool parse_level(const char* v, OrtLoggingLevel* out) {
    static const struct {
        const char* name;
        OrtLoggingLevel level;
    } k[] = {{"verbose", ORT_LOGGING_LEVEL_VERBOSE}, {"info", ORT_LOGGING_LEVEL_INFO},
             {"warning", ORT_LOGGING_LEVEL_WARNING}, {"error", ORT_LOGGING_LEVEL_ERROR},
             {"fatal", ORT_LOGGING_LEVEL_FATAL}};
    for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); ++i)
        if (!strcmp(v, k[i].name)) {
            *out = k[i].level;
            return true;
        }
    return false;
}

OrtStatus* ep_options_read(const OrtSessionOptions* so, const OrtLogger* logger,
                           ep_options* out) {
    memset(out, 0, sizeof(*out));
    out->heur = HIPDNN_HEUR_MODE_A;
    out->log_level = ORT_LOGGING_LEVEL_VERBOSE; /* everything goes to ORT, which filters */
    out->autotune_budget_ms = 1000.0;
    if (!so) return NULL;
    OrtKeyValuePairs* kv = NULL;
    OrtStatus* st = g_ort->GetSessionOptionsConfigEntries(so, &kv);
    if (st) return st;
    const char* const* keys = NULL;
    const char* const* values = NULL;
    size_t n = 0;
    g_ort->GetKeyValuePairs(kv, &keys, &values, &n);
    const size_t plen = strlen(EP_OPTION_PREFIX);
    for (size_t i = 0; i < n; ++i) {
        const char* cv = values[i] ? values[i] : "";
        /* ORT's own EPContext entries (onnxruntime_session_options_config_keys.h) */
        if (!strcmp(keys[i], "ep.context_enable")) out->ctx_enable = !strcmp(cv, "1");
        else if (!strcmp(keys[i], "ep.context_embed_mode")) out->ctx_embed = !strcmp(cv, "1");
        else if (!strcmp(keys[i], "ep.context_file_path"))
            copy_bounded(out->ctx_path, sizeof(out->ctx_path), cv, logger, keys[i]);
        else if (!strcmp(keys[i], "ep.context_node_name_prefix"))
            copy_bounded(out->ctx_prefix, sizeof(out->ctx_prefix), cv, logger, keys[i]);
        if (strncmp(keys[i], EP_OPTION_PREFIX, plen) != 0) continue;
        const char* key = keys[i] + plen;
        const char* v = values[i] ? values[i] : "";
        if (!strcmp(key, "engine")) {
            copy_bounded(out->engine, sizeof(out->engine), v, logger, keys[i]);
        } else if (!strcmp(key, "heuristic_mode")) {
            if (!parse_heur(v, &out->heur))
                ep_log(logger, ORT_LOGGING_LEVEL_VERBOSE, ORT_LOGGING_LEVEL_WARNING,
                       "option %s: '%s' is not a heuristic mode (a, b, fallback); using a",
                       keys[i], v);
        } else if (!strcmp(key, "plugin_path")) {
            copy_bounded(out->plugin_path, sizeof(out->plugin_path), v, logger, keys[i]);
        } else if (!strcmp(key, "log_level")) {
            if (parse_level(v, &out->log_level))
                out->log_level_given = true;
            else
                ep_log(logger, ORT_LOGGING_LEVEL_VERBOSE, ORT_LOGGING_LEVEL_WARNING,
                       "option %s: '%s' is not a level (verbose, info, warning, error, "
                       "fatal); ignored", keys[i], v);
        } else if (!strcmp(key, "autotune")) {
            if (!strcmp(v, "0") || !strcmp(v, "1")) out->autotune = v[0] == '1';
            else
                ep_log(logger, ORT_LOGGING_LEVEL_VERBOSE, ORT_LOGGING_LEVEL_WARNING,
                       "option %s: '%s' is neither 0 nor 1; ignored", keys[i], v);
        } else if (!strcmp(key, "use_tf32")) {
            if (!strcmp(v, "0") || !strcmp(v, "1")) out->use_tf32 = v[0] == '1';
            else
                ep_log(logger, ORT_LOGGING_LEVEL_VERBOSE, ORT_LOGGING_LEVEL_WARNING,
                       "option %s: '%s' is neither 0 nor 1; ignored (fp32 stays exact)",
                       keys[i], v);
        } else if (!strcmp(key, "autotune_budget_ms")) {
            char* end = NULL;
            double ms = strtod(v, &end);
            if (end != v && !*end && ms > 0 && ms <= 3600e3) out->autotune_budget_ms = ms;
            else
                ep_log(logger, ORT_LOGGING_LEVEL_VERBOSE, ORT_LOGGING_LEVEL_WARNING,
                       "option %s: '%s' is not a time in ms (0 to 3600000); using %g",
                       keys[i], v, out->autotune_budget_ms);
        } else {
            ep_log(logger, ORT_LOGGING_LEVEL_VERBOSE, ORT_LOGGING_LEVEL_WARNING,
                   "unknown option %s='%s' ignored (known: engine, heuristic_mode, "
                   "plugin_path, log_level, autotune, autotune_budget_ms, use_tf32)", keys[i],
                   v);
        }
    }
    g_ort->ReleaseKeyValuePairs(kv);
    return NULL;
}
