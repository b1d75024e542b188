/* Graph-level rules: structure (validate.c) and inference (infer.c, which runs each op's
 * rule from the SDK's op table). */
#ifndef HIPDNN_BACKEND_GRAPH_RULES_H
#define HIPDNN_BACKEND_GRAPH_RULES_H

#include "hipdnn/hipdnn.h"
#include "hipdnn/hipdnn_sdk.h"

/* Checks ports, uids, producers, acyclicity, connectivity and tensor bounds; sorts the
 * nodes topologically.  Linear in nodes + tensors (a uid map, Kahn's algorithm). */
hipdnnStatus_t hipdnnValidateGraph(hipdnnSdkGraph* g);
/* Runs every node's inference rule in order, then holds every tensor (inferred ones too)
 * to the limits given tensors obey. */
hipdnnStatus_t hipdnnInferGraph(hipdnnSdkGraph* g);

#endif
