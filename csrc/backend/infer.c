/* Inference over a validated graph: each node's rule from the op table, in topological
 * order, then the limits every tensor must meet once complete. */
#include "error.h"
#include "graph_rules.h"

/* Elements a tensor may hold; inferred tensors included, so serialize() never writes a
 * graph deserialize() refuses. */
#define MAX_ELEMENTS (INT64_C(1) << 40)

hipdnnStatus_t hipdnnInferGraph(hipdnnSdkGraph* g) {
    char err[1024];
    hipdnnSdkUidMap map;
    if (!hipdnnSdkUidMapBuild(&map, g))
        return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory inferring graph '%s'", g->name);
    for (int32_t i = 0; i < g->num_nodes; ++i)
        if (!hipdnnSdkInferNode(g, &map, &g->nodes[i], err, sizeof(err))) {
            hipdnnSdkUidMapFree(&map);
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s", err);
        }
    hipdnnSdkUidMapFree(&map);
    for (int32_t i = 0; i < g->num_tensors; ++i) {
        hipdnnSdkTensor* t = &g->tensors[i];
        if (t->data_type == HIPDNN_DATA_NOT_SET || hipdnnSdkDataTypeSize(t->data_type) == 0)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "tensor '%s' (uid %lld) has no valid data "
                              "type", t->name, (long long)t->uid);
        int64_t count = 1;
        for (int k = 0; k < t->ndim; ++k) {
            if (t->dims[k] <= 0 || t->strides[k] <= 0)
                return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "tensor '%s' (uid %lld): dim %d is "
                                  "%lld with stride %lld; both must be positive", t->name,
                                  (long long)t->uid, k, (long long)t->dims[k],
                                  (long long)t->strides[k]);
            if (t->dims[k] > MAX_ELEMENTS / count)
                return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "tensor '%s' (uid %lld) would have "
                                  "more than 2^40 elements", t->name, (long long)t->uid);
            count *= t->dims[k];
        }
        if (t->is_by_value && count != 1)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "tensor '%s' (uid %lld) is pass-by-value "
                              "but has %lld elements; it must be a scalar", t->name,
                              (long long)t->uid, (long long)count);
    }
    return HIPDNN_STATUS_SUCCESS;
}
