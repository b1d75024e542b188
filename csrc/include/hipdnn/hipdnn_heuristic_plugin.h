/* hipdnn_heuristic_plugin.h — the heuristic plugin ABI, version 1.0 (docs/plugin_abi.md).
 *
 * A heuristic plugin ranks engine configs; it runs no graph.  It is a shared library in
 * hipdnn_plugins/heuristics/ (beside engines/; $HIPDNN_HEURISTIC_PLUGIN_PATH replaces the
 * folder with a ':'-separated list of files and folders), built with hidden visibility,
 * exporting the four functions below.  The backend loads every one it finds, in file
 * name order, checks GetApiVersion first (another major version is skipped) and resolves
 * the rest; a plugin missing one is skipped with one log line naming its path and why.
 * The first that loads is used by heuristics modes A and B, unless HIPDNN_HEURISTIC names
 * another (or "builtin": none).
 *
 * Rank is called on every ENGINEHEUR finalize of mode A or B, with the engines that said
 * they run the graph, in the built-in order.  What it returns is checked: a failing
 * status, an index out of range or given twice, or a candidate left out makes the backend
 * log one line (the plugin's path and what was wrong) and keep the built-in order for that
 * query.  The engines the user asked for (preferred engine, HIPDNN_ENGINE) and the plan
 * cache's tuned config still go first: a heuristic orders only what is left.
 *
 * Threading: Rank may be called from several threads at once (one per query); keep no
 * unguarded state.  Strings the plugin returns are static or thread-local. */
#ifndef HIPDNN_HEURISTIC_PLUGIN_H
#define HIPDNN_HEURISTIC_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "hipdnn/hipdnn_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HIPDNN_HEURISTIC_API_MAJOR 1
#define HIPDNN_HEURISTIC_API_MINOR 0

/* Bytes of each candidate's explanation (NUL included); longer text is cut. */
#define HIPDNN_HEURISTIC_EXPLANATION_LEN 256

/* What the graph would run on.  Extensible: read only what struct_size covers.  Numbers
 * the backend does not know are 0 (then a plugin uses its own table or estimate). */
typedef struct {
    uint32_t struct_size;             /* sizeof(hipdnnHeuristicDeviceInfo_t) as the backend knows it */
    hipdnnMemorySpace_t memory_space; /* where the graph's tensors are expected: DEVICE when a
                                       * GPU runtime with a device and a device engine are
                                       * present, else HOST */
    int32_t device;                   /* the handle's GPU device; -1 without one */
    char device_name[128];            /* "cuda:NVIDIA H200 sm_90 140GiB driver 12040", or "host" */
    char arch[32];                    /* "sm_90", "gfx942", or "" */
    int32_t sm_count;                 /* multiprocessors / compute units, 0 unknown */
    double peak_bytes_per_s;          /* memory bandwidth, 0 unknown */
    double peak_flops;                /* dense peak of the graph's compute type, 0 unknown */
} hipdnnHeuristicDeviceInfo_t;

/* One engine config to rank: an engine (as its details describe it) with knob values. */
typedef struct {
    uint64_t engine_id;
    const char* engine_name;
    hipdnnMemorySpace_t memory_space;
    int32_t priority;     /* the engine's declared priority */
    uint32_t flags;       /* HIPDNN_ENGINE_FLAG_* */
    int32_t num_knobs;
    const int64_t* knobs; /* num_knobs (knob id, value) pairs: 2 * num_knobs values */
} hipdnnHeuristicCandidate_t;

/* Checked first, before any other symbol is resolved: major must be
 * HIPDNN_HEURISTIC_API_MAJOR. */
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnHeuristicPluginGetApiVersion(uint32_t* major,
                                                                             uint32_t* minor);
/* A static name, what HIPDNN_HEURISTIC selects it by ("cost_model"). */
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnHeuristicPluginGetName(const char** name);
/* The calling thread's message for the plugin's last failure. */
HIPDNN_PLUGIN_EXPORT void hipdnnHeuristicPluginGetLastErrorString(const char** message);
/* Ranks num_candidates configs for the graph (graph bytes, as engines receive them):
 * order[0..num_candidates) is every candidate index once, best first; score[i] is the
 * plugin's figure for candidate i (lower is better, e.g. estimated ms; what it means is
 * the plugin's to say in the explanation); explanations holds num_candidates strings of
 * HIPDNN_HEURISTIC_EXPLANATION_LEN bytes, candidate i's at i * that, each one line. */
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnHeuristicPluginRank(
    const uint8_t* graph, size_t graph_size, const hipdnnHeuristicDeviceInfo_t* device,
    const hipdnnHeuristicCandidate_t* candidates, uint32_t num_candidates, uint32_t* order,
    double* score, char* explanations);

#ifdef __cplusplus
}
#endif

#endif /* HIPDNN_HEURISTIC_PLUGIN_H */
