/* Test heuristic plugins, one source built once per fault (CMakeLists.txt, -DHEUR_<fault>):
 *   BY_NAME        a good plugin "by_name": ranks engines by name, last name first (so
 *                  reference_cpu goes last, and tune_b before tune_a, against their
 *                  priorities), each explained as "by_name rank k"
 *   BAD_VERSION    reports heuristic API 2.0
 *   MISSING_SYMBOL exports no hipdnnHeuristicPluginRank
 *   RANK_FAILS     Rank returns INTERNAL_ERROR with a message
 *   OUT_OF_RANGE   Rank gives an index past the candidates
 *   DUPLICATES     Rank gives candidate 0 for every place */
#include <stdio.h>
#include <string.h>

#include "hipdnn/hipdnn_heuristic_plugin.h"

static _Thread_local const char* t_error = "";

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnHeuristicPluginGetApiVersion(uint32_t* major,
                                                                             uint32_t* minor) {
#ifdef HEUR_BAD_VERSION
    *major = 2;
#else
    *major = HIPDNN_HEURISTIC_API_MAJOR;
#endif
    *minor = 0;
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnHeuristicPluginGetName(const char** name) {
    *name = HEUR_NAME;
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

HIPDNN_PLUGIN_EXPORT void hipdnnHeuristicPluginGetLastErrorString(const char** message) {
    *message = t_error;
}

#ifndef HEUR_MISSING_SYMBOL
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnHeuristicPluginRank(
    const uint8_t* graph, size_t graph_size, const hipdnnHeuristicDeviceInfo_t* device,
    const hipdnnHeuristicCandidate_t* cand, uint32_t n, uint32_t* order, double* score,
    char* explanations) {
    (void)graph, (void)graph_size, (void)device;
#ifdef HEUR_RANK_FAILS
    t_error = "rank_fails: refuses on purpose";
    return HIPDNN_PLUGIN_STATUS_INTERNAL_ERROR;
#endif
    for (uint32_t i = 0; i < n; ++i) order[i] = i;
    for (uint32_t i = 1; i < n; ++i) /* by name, descending */
        for (uint32_t k = i; k > 0 && strcmp(cand[order[k - 1]].engine_name,
                                             cand[order[k]].engine_name) < 0; --k) {
            uint32_t t = order[k];
            order[k] = order[k - 1];
            order[k - 1] = t;
        }
    for (uint32_t k = 0; k < n; ++k) {
        score[order[k]] = k;
        snprintf(explanations + (size_t)order[k] * HIPDNN_HEURISTIC_EXPLANATION_LEN,
                 HIPDNN_HEURISTIC_EXPLANATION_LEN, "by_name rank %u\nof %u", k, n);
    }
#ifdef HEUR_OUT_OF_RANGE
    order[0] = n;
#endif
#ifdef HEUR_DUPLICATES
    for (uint32_t k = 0; k < n; ++k) order[k] = 0;
#endif
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}
#endif
