/* Heuristic plugins (hipdnn_heuristic_plugin.h): loaded once per process, on the first
 * ranking or listing; read-only after that. */
#ifndef HIPDNN_BACKEND_HEURISTIC_PLUGINS_H
#define HIPDNN_BACKEND_HEURISTIC_PLUGINS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hipdnn/hipdnn_heuristic_plugin.h"

/* One ranked engine's line from the plugin that ranked it. */
typedef struct {
    double score;
    char text[HIPDNN_HEURISTIC_EXPLANATION_LEN];
} hipdnnHeuristicExplanation;

/* Orders engines[0..n) (registry indices, in the built-in order) of a graph (its bytes,
 * whether its heavy nodes read 16-bit inputs (device_facts.h), the handle's device) by
 * the active heuristic plugin, and fills why[k] for engines[k] as reordered; the
 * plugin's name into used.
 * False (and engines untouched) when no plugin is active or its answer was refused (one
 * log line says why). */
bool hipdnnHeuristicRank(const uint8_t* graph, size_t graph_size, bool narrow, int device,
                         int32_t* engines, int32_t n, hipdnnHeuristicExplanation* why, char* used, size_t used_len);

/* fork.c: the loader's lock around fork() (taken after the registry's, before handles'). */
void hipdnnHeuristicForkPrepare(void);
void hipdnnHeuristicForkParent(void);
void hipdnnHeuristicForkChild(void);

#endif
