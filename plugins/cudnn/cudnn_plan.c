/* An execution plan for a translated graph: cuDNN's heuristic (mode A, as cuDNN frontend
 * uses by default) ranks the engine configs that may run the operation graph; where none
 * of them builds a plan (mode A offers nothing for a convolution followed by a relu alone,
 * for one), the fallback heuristic's list is used instead, as cuDNN frontend's
 * create_execution_plans([A, FALLBACK]) would.  The plan is made of the config the
 * ENGINE_CONFIG knob names.  A config offered may still fail to build a plan (an engine
 * that refuses the shapes, or cannot compile), so the knob counts the configs that do
 * build, in the heuristic's order: knob 0 is the best config that runs, as cuDNN
 * frontend's build_plans(HEURISTICS_CHOICE) takes it.
 *
 * hipdnn's fp32 is IEEE fp32 on every engine (architecture.md, "Tolerances"), while cuDNN's
 * tensor-core engines read fp32 operands as TF32; so configs whose engine carries the
 * TENSOR_CORE or DOWN_CONVERT_INPUTS numerical note are left out of a graph whose
 * convolution or matmul reads fp32. */
#include <string.h>

#include "cudnn.h"

#define decline(why, len, ...) hipdnnSdkDecline(why, len, CUDNN_ENGINE_NAME, __VA_ARGS__)

/* cfg's ENGINE descriptor (owned by the graph), NULL where it cannot be read. */
static cd_desc config_engine(cd_graph* graph, cd_desc cfg) {
    char why[CUDNN_MSG_LEN];
    cd_desc engine = NULL;
    int64_t n = 0;
    if (!cudnn_graph_desc(graph, CD_ENGINE_DESCRIPTOR, &engine, why, sizeof(why))) return NULL;
    if (g_cd.get_attribute(cfg, CD_ATTR_ENGINECFG_ENGINE, CD_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                           &engine) != CD_STATUS_SUCCESS || n != 1)
        return NULL;
    return engine;
}

/* True where cfg's engine reads fp32 as something narrower (TF32, or fp16). */
static bool narrows_fp32(cd_graph* graph, cd_desc cfg) {
    cd_desc engine = config_engine(graph, cfg);
    if (!engine) return false;
    int32_t notes[16];
    int64_t n = 0;
    if (g_cd.get_attribute(engine, CD_ATTR_ENGINE_NUMERICAL_NOTE, CD_TYPE_NUMERICAL_NOTE, 16,
                           &n, notes) != CD_STATUS_SUCCESS)
        return false; /* notes unknown: kept; the GPU tests hold fp32 to its tolerance */
    for (int64_t i = 0; i < n && i < 16; ++i)
        if (notes[i] == CD_NUMERICAL_NOTE_TENSOR_CORE ||
            notes[i] == CD_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS)
            return true;
    return false;
}

static const char* mode_name(int32_t mode) { return mode == CD_HEUR_MODE_A ? "A" : "fallback"; }

/* The engine configs of heuristic `mode` (at most CUDNN_MAX_CONFIGS) into cfgs, those that
 * narrow fp32 left out of an fp32 product; *count may be 0 (true: cuDNN answered). */
static bool heuristic(cd_graph* graph, int32_t mode, cd_desc* cfgs, int* count, char* why,
                      size_t len) {
    *count = 0;
    cd_desc heur = NULL;
    if (!cudnn_graph_desc(graph, CD_ENGINEHEUR_DESCRIPTOR, &heur, why, len)) return false;
    char text[600];
    const char* call = "cudnnBackendSetAttribute(ENGINEHEUR_OPERATION_GRAPH)";
    cd_status st = g_cd.set_attribute(heur, CD_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                                      CD_TYPE_BACKEND_DESCRIPTOR, 1, &graph->op_graph);
    if (st == CD_STATUS_SUCCESS) {
        call = "cudnnBackendSetAttribute(ENGINEHEUR_MODE)";
        st = g_cd.set_attribute(heur, CD_ATTR_ENGINEHEUR_MODE, CD_TYPE_HEUR_MODE, 1, &mode);
    }
    if (st == CD_STATUS_SUCCESS) {
        call = "cudnnBackendFinalize(ENGINEHEUR)";
        st = g_cd.finalize(heur);
    }
    int64_t offered = 0;
    if (st == CD_STATUS_SUCCESS) {
        call = "cudnnBackendGetAttribute(ENGINEHEUR_RESULTS)";
        st = g_cd.get_attribute(heur, CD_ATTR_ENGINEHEUR_RESULTS, CD_TYPE_BACKEND_DESCRIPTOR, 0,
                                &offered, NULL);
    }
    if (st == CD_STATUS_SUCCESS && offered > 0) {
        const int want = offered < CUDNN_MAX_CONFIGS ? (int)offered : CUDNN_MAX_CONFIGS;
        for (int i = 0; i < want; ++i)
            if (!cudnn_graph_desc(graph, CD_ENGINECFG_DESCRIPTOR, &cfgs[i], why, len))
                return false;
        int64_t got = 0;
        st = g_cd.get_attribute(heur, CD_ATTR_ENGINEHEUR_RESULTS, CD_TYPE_BACKEND_DESCRIPTOR,
                                want, &got, cfgs);
        for (int i = 0; st == CD_STATUS_SUCCESS && i < (got < want ? (int)got : want); ++i)
            if (!graph->fp32_product || !narrows_fp32(graph, cfgs[i])) cfgs[(*count)++] = cfgs[i];
    }
    if (st != CD_STATUS_SUCCESS)
        return decline(why, len, "graph of %s: cuDNN's heuristic (mode %s): %s: %s",
                       graph->what, mode_name(mode), call,
                       cudnn_status_text(st, text, sizeof(text)));
    return true;
}

static bool none_offered(cd_graph* graph, char* why, size_t len) {
    return decline(why, len, "graph of %s: cuDNN's heuristics (mode A and fallback) offer no "
                   "engine config for it%s", graph->what,
                   graph->fp32_product ? " that computes fp32 without TF32" : "");
}

bool cudnn_heuristic_count(cd_graph* graph, int* count, char* why, size_t len) {
    cd_desc cfgs[CUDNN_MAX_CONFIGS];
    if (!heuristic(graph, CD_HEUR_MODE_A, cfgs, count, why, len)) return false;
    if (*count == 0 && !heuristic(graph, CD_HEUR_MODE_FALLBACK, cfgs, count, why, len))
        return false;
    return *count > 0 || none_offered(graph, why, len);
}

/* The engine's global index of a config, for the log; -1 where it cannot be read. */
static int64_t engine_index(cd_graph* graph, cd_desc cfg) {
    cd_desc engine = config_engine(graph, cfg);
    int64_t n = 0, index = -1;
    if (!engine ||
        g_cd.get_attribute(engine, CD_ATTR_ENGINE_GLOBAL_INDEX, CD_TYPE_INT64, 1, &n, &index) !=
        CD_STATUS_SUCCESS || n != 1)
        return -1;
    return index;
}

/* A plan of cfg, or NULL with cuDNN's message in why. */
static cd_desc try_plan(cd_handle h, cd_graph* graph, cd_desc cfg, int64_t* workspace,
                        char* why, size_t len) {
    cd_desc plan = NULL;
    if (!cudnn_graph_desc(graph, CD_EXECUTION_PLAN_DESCRIPTOR, &plan, why, len)) return NULL;
    char text[600];
    const char* call = "cudnnBackendSetAttribute(EXECUTION_PLAN_HANDLE)";
    cd_status st = g_cd.set_attribute(plan, CD_ATTR_EXECUTION_PLAN_HANDLE, CD_TYPE_HANDLE, 1, &h);
    if (st == CD_STATUS_SUCCESS) {
        call = "cudnnBackendSetAttribute(EXECUTION_PLAN_ENGINE_CONFIG)";
        st = g_cd.set_attribute(plan, CD_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                CD_TYPE_BACKEND_DESCRIPTOR, 1, &cfg);
    }
    if (st == CD_STATUS_SUCCESS) {
        call = "cudnnBackendFinalize(EXECUTION_PLAN)";
        st = g_cd.finalize(plan);
    }
    int64_t n = 0;
    if (st == CD_STATUS_SUCCESS) {
        call = "cudnnBackendGetAttribute(EXECUTION_PLAN_WORKSPACE_SIZE)";
        st = g_cd.get_attribute(plan, CD_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CD_TYPE_INT64, 1, &n,
                                workspace);
    }
    if (st != CD_STATUS_SUCCESS) {
        decline(why, len, "graph of %s: %s: %s", graph->what, call,
                cudnn_status_text(st, text, sizeof(text)));
        return NULL;
    }
    if (*workspace < 0) {
        decline(why, len, "graph of %s: cuDNN asks for %lld bytes of workspace", graph->what,
                (long long)*workspace);
        return NULL;
    }
    return plan;
}

/* The index-th config of this list that builds a plan into out; *built counts those that
 * do, last holds the last failure. */
static bool plan_from(cd_handle h, cd_graph* graph, cd_desc* cfgs, int count, int index,
                      cd_plan* out, int* built, char* last, size_t len) {
    for (int i = 0; i < count; ++i) {
        int64_t workspace = 0;
        cd_desc plan = try_plan(h, graph, cfgs[i], &workspace, last, len);
        if (!plan) continue;
        if ((*built)++ < index) continue;
        out->plan = plan;
        out->tried = i + 1;
        out->offered = count;
        out->workspace = (size_t)workspace + graph->workspace; /* the graph's tensors first */
        out->engine = engine_index(graph, cfgs[i]);
        return true;
    }
    return false;
}

bool cudnn_plan_make(cd_handle h, cd_graph* graph, int index, cd_plan* out, char* why,
                     size_t len) {
    memset(out, 0, sizeof(*out));
    out->engine = -1;
    cd_desc cfgs[CUDNN_MAX_CONFIGS];
    char last[CUDNN_MSG_LEN];
    last[0] = '\0';
    int count = 0, built = 0, offered = 0;
    const int32_t modes[2] = {CD_HEUR_MODE_A, CD_HEUR_MODE_FALLBACK};
    for (int m = 0; m < 2 && built == 0; ++m) {
        if (!heuristic(graph, modes[m], cfgs, &count, why, len)) return false;
        offered += count;
        if (plan_from(h, graph, cfgs, count, index, out, &built, last, sizeof(last)))
            return true;
    }
    if (offered == 0) return none_offered(graph, why, len);
    if (built == 0)
        return hipdnnSdkDecline(why, len, NULL, "%s (none of the %d engine config%s cuDNN's "
                                "heuristics offer builds a plan; this was the last)", last,
                                offered, offered == 1 ? "" : "s");
    return decline(why, len, "knob %d (engine config) = %d, but %d of the %d engine config%s "
                   "cuDNN's heuristic offers for %s build a plan (0 to %d)",
                   CUDNN_KNOB_ENGINE_CONFIG, index, built, count, count == 1 ? "" : "s",
                   graph->what, built - 1);
}
