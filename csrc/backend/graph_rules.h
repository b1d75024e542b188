/* The checks a graph passes at finalize: structure (validate.c) then per-op rules with
 * shape, stride and data-type inference (infer.c).  Both name the node or tensor at fault
 * in the thread's error message. */
#ifndef HIPDNN_BACKEND_GRAPH_RULES_H
#define HIPDNN_BACKEND_GRAPH_RULES_H

#include "hipdnn/hipdnn.h"
#include "hipdnn/hipdnn_sdk.h"

/* In the graph model before inference, a tensor's unset parts are marked by
 * ndim = 0 (dims), strides[0] = 0 (strides) and HIPDNN_DATA_NOT_SET (data type). */

/* Unique uids, every port tensor known, each tensor produced at most once, inputs that
 * nobody produces are not virtual, no cycle, one connected component, virtual tensors
 * consumed.  Reorders g->nodes topologically. */
hipdnnStatus_t hipdnnValidateGraph(hipdnnSdkGraph* g);

/* Walks the nodes in order, checks each op's rules (ranks, channels, inner dims,
 * broadcasting, data types) and fills every unset dim, stride and data type. */
hipdnnStatus_t hipdnnInferGraph(hipdnnSdkGraph* g);

/* "conv_fprop 'conv1'" or "relu 'r'" for messages. */
const char* hipdnnNodeLabel(const hipdnnSdkNode* n, char* buf, size_t len);

#endif
