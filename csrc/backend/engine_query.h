/* Asking engine plugins whether their engines run a graph (for heuristics.c's rankings). */
#ifndef HIPDNN_BACKEND_ENGINE_QUERY_H
#define HIPDNN_BACKEND_ENGINE_QUERY_H

#include <stdbool.h>
#include <stdint.h>

#include "descriptor.h"

/* Asks the n plugins listed (registry indices, each once) which of their engines run the
 * graph of gs, on gs's handle: ok[e] for those that do, why[e] (allocated) for those that
 * do not, every engine e < ne indexed as in the registry.  Several plugins are asked at
 * once, on worker threads, with HIPDNN_PARALLEL_QUERIES=1; the answers are the same.
 * Takes the handle's lock (the caller holds none) and logs one timing line for several. */
void hipdnnAskPlugins(hipdnnGraphState* gs, const int32_t* plugins, int32_t n, int32_t ne,
                      bool* ok, char** why);

#endif
