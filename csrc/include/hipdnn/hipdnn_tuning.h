/* hipdnn_tuning.h - engine selection: autotuning, the plan cache and heuristic plugins
 * (docs/engine_selection.md).
 *
 * Part of hipdnn.h's API, which includes it at its end (include either): a header of its
 * own so that hipdnn.h stays within its size budget (docs/architecture.md, "Size budgets").
 * The rules of hipdnn.h hold here too: statuses with the thread's last error beside them. */
#ifndef HIPDNN_TUNING_H
#define HIPDNN_TUNING_H

#include "hipdnn/hipdnn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- autotuning and the plan cache (docs/engine_selection.md) --------------------- */

/* How a plan was timed (hipdnnAutotuneResult_ext_t.timer). */
#define HIPDNN_AUTOTUNE_TIMER_HOST_CLOCK_EXT 0 /* host plans; device plans without events */
#define HIPDNN_AUTOTUNE_TIMER_EVENTS_EXT 1     /* the device runtime's events on the stream */

typedef struct {
    int32_t warmup;   /* untimed runs of each plan first (default 1) */
    int32_t repeat;   /* at most this many timed runs of each plan (default 10) */
    double budget_ms; /* the call's time, shared evenly among the plans (default 1000); a
                       * plan whose share is spent stops after its first timed run */
    int32_t store;    /* nonzero (default): the winner goes into the plan cache */
} hipdnnAutotuneOptions_ext_t;

typedef struct {
    hipdnnStatus_t status; /* SUCCESS, or why the plan did not run (message says more) */
    int32_t runs;          /* timed runs */
    double median_ms;
    double min_ms;
    int32_t timer; /* HIPDNN_AUTOTUNE_TIMER_* */
    char message[256];
} hipdnnAutotuneResult_ext_t;

/* Times each of num_plans finalized EXECUTION_PLANs, all built from one graph (equal
 * graph bytes), on variant_pack (the caller's real buffers; the workspace must suit every
 * plan) and gives each plan's result in results[num_plans] and the fastest's index (by
 * median) in *best.  The graph's outputs are copied aside first and put back at the end:
 * the buffers hold what they held before the call; inputs are only read.  Each plan: warm-up
 * runs, then timed runs until `repeat`, until the last three agree within 2 %, or until its
 * share of the budget is spent.  Device plans are timed with the runtime's events on the
 * handle's stream (the call waits for them), host plans with the monotonic clock.  A plan
 * that fails to run is reported in its result and skipped.  With options->store the winner's
 * engine and knobs are written to the plan cache, where heuristics modes A and B of later
 * processes find them first (a failure to write is logged, not returned).  options NULL:
 * the defaults.  Errors: BAD_PARAM_NULL_POINTER, BAD_PARAM (no plans, plans of different
 * graphs, not a handle / plan / variant pack), BAD_PARAM_NOT_FINALIZED, ALLOC_FAILED,
 * EXECUTION_FAILED (no plan ran; the message gives plan 0's reason), or a device copy's
 * failure while saving or restoring the outputs. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnAutotune_ext(hipdnnHandle_t handle, int64_t num_plans,
                                                const hipdnnBackendDescriptor_t* plans,
                                                hipdnnBackendDescriptor_t variant_pack,
                                                const hipdnnAutotuneOptions_ext_t* options,
                                                hipdnnAutotuneResult_ext_t* results, int64_t* best);

/* The plan cache's folder (into dir[dir_len]: $HIPDNN_CACHE_DIR/plans, else
 * $XDG_CACHE_HOME/hipdnn/plans, else $HOME/.cache/hipdnn/plans), its entries and their
 * bytes.  Errors: BAD_PARAM_NULL_POINTER, NOT_SUPPORTED (HIPDNN_CACHE=0, or no folder). */
HIPDNN_EXPORT hipdnnStatus_t hipdnnPlanCacheInfo_ext(char* dir, size_t dir_len, int64_t* entries,
                                                     int64_t* bytes);
/* Removes every entry of the plan cache (under its lock); *removed (may be NULL) counts
 * them.  Errors: NOT_SUPPORTED (HIPDNN_CACHE=0, or no folder), INTERNAL_ERROR. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnPlanCacheClear_ext(int64_t* removed);

/* ---- heuristic plugins (hipdnn_heuristic_plugin.h, docs/engine_selection.md) ------- */

/* ENGINEHEUR attribute (CHAR, finalized descriptor): one line per engine the active
 * heuristic plugin ranked, best first: "plugin\tengine\tscore\texplanation"; "" when the
 * built-in ranking ordered the engines (no plugin, HIPDNN_HEURISTIC=builtin, mode
 * FALLBACK, or the plugin's answer was refused). */
#define HIPDNN_ATTR_ENGINEHEUR_HEURISTIC_REPORT_EXT 20403

/* ENGINEHEUR attribute (INT64, get, finalized descriptor): the index in RESULTS of the plan
 * cache's tuned config for the graph (its engine with the stored knobs), -1 when the cache
 * had none for it here (no entry, cache off, mode FALLBACK, engine not applicable): a
 * caller that tunes on first use (hipdnn-ep's autotune option) skips what was tuned. */
#define HIPDNN_ATTR_ENGINEHEUR_PLAN_CACHE_INDEX_EXT 20404

/* ENGINEHEUR attribute (INT64, get, finalized descriptor): how many RESULTS are ranked
 * without every engine having been asked, 0 once every engine was.  When the preferred
 * engine, HIPDNN_ENGINE or the plan cache decides the first config, finalize asks only
 * their engines and ranks that one (1); getting RESULTS' count (requested count 0) or more
 * configs than are ranked, SUPPORT_REPORT_EXT or HEURISTIC_REPORT_EXT asks the others and
 * ranks them all, the first config staying first (docs/engine_selection.md). */
#define HIPDNN_ATTR_ENGINEHEUR_PARTIAL_COUNT_EXT 20405

/* The heuristic plugins, two-call pattern (entries NULL: *num and *max_len are set): one
 * "path\tname\tstate" line each, state "active" (the one ranking), "loaded" or "skipped:
 * <reason>" (name empty).  Loads them if not done yet.  Errors: BAD_PARAM_NULL_POINTER,
 * BAD_PARAM_OUT_OF_BOUND (too little room), ALLOC_FAILED. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnGetHeuristicPlugins_ext(size_t* num, char** entries,
                                                           size_t* max_len);

/* ---- graph capture (docs/engine_selection.md#graph-capture) ------------------------ */

typedef void* hipdnnGraph_t; /* a hipGraph_t or cudaGraph_t (CUgraph) */

/* cuDNN's cudnnBackendPopulateCudaGraph: records the plan's run on variant_pack (its
 * pointers, workspace and runtime scalars as they are now) into `graph`, which must be
 * empty (made by cudaGraphCreate / hipGraphCreate; the caller owns it).  The plan's
 * execute is captured on a stream of hipdnn's own (thread-local capture mode) into a
 * graph that becomes graph's one node, a child-graph node; the caller then adds `graph`
 * to its own graph as a child or instantiates it.  Nothing runs now.  A plan whose engine
 * runs on the host cannot be recorded (NOT_SUPPORTED naming the engine), nor one whose
 * engine synchronizes or allocates while it enqueues (EXECUTION_FAILED with the runtime's
 * capture error), nor an in-place run that needs a staged copy of an input (BAD_PARAM).
 * Errors as hipdnnBackendExecute's, and NOT_SUPPORTED without a device runtime that
 * captures, BAD_PARAM for a graph that is not empty. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnBackendPopulateDeviceGraph_ext(hipdnnHandle_t handle,
                                                                  hipdnnBackendDescriptor_t plan,
                                                                  hipdnnBackendDescriptor_t variant_pack,
                                                                  hipdnnGraph_t graph);
/* cuDNN's cudnnBackendUpdateCudaGraph: `graph` was filled by populate for this plan (or is
 * a copy of it, as cudaGraphChildGraphNodeGetGraph gives from the caller's graph); its
 * child-graph node is replaced by a new recording of the plan on variant_pack's pointers,
 * with the same shape (node kinds in order), so that cudaGraphExecChildGraphNodeSetParams
 * (or cudaGraphExecUpdate) carries the new pointers into an instantiated graph without a
 * new instantiation.  BAD_PARAM when graph is not one populate filled, or when the new
 * recording has another shape (the engine took another path for these buffers, e.g. their
 * alignment): populate a new graph then. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnBackendUpdateDeviceGraph_ext(hipdnnHandle_t handle,
                                                                hipdnnBackendDescriptor_t plan,
                                                                hipdnnBackendDescriptor_t variant_pack,
                                                                hipdnnGraph_t graph);
/* *capturing: 1 while `stream` captures a graph (2: its capture was invalidated), else 0;
 * 0 without a device runtime or one that cannot capture. */
HIPDNN_EXPORT hipdnnStatus_t hipdnnStreamIsCapturing_ext(hipdnnStream_t stream, int* capturing);

#ifdef __cplusplus
}
#endif

#endif /* HIPDNN_TUNING_H */
