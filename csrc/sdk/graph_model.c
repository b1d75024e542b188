/* The plain-C graph model: defaults, lookup, copy and free. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hipdnn/hipdnn_sdk.h"

void hipdnnSdkNodeInit(hipdnnSdkNode* node, hipdnnOpKind_t kind) {
    memset(node, 0, sizeof(*node));
    node->kind = kind;
    node->compute_type = HIPDNN_DATA_NOT_SET;
    for (int i = 0; i < HIPDNN_MAX_PORTS; ++i) {
        node->inputs[i] = HIPDNN_NO_TENSOR;
        node->outputs[i] = HIPDNN_NO_TENSOR;
    }
    const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(kind);
    for (int32_t a = 0; info && a < info->num_attrs; ++a) {
        const hipdnnOpAttrInfo_ext_t* ai = &info->attrs[a];
        if (ai->kind == HIPDNN_OP_ATTR_DOUBLE) node->attrs[a].d = ai->default_value;
        else
            for (int k = 0; k < HIPDNN_MAX_ATTR_VALUES; ++k)
                node->attrs[a].i[k] = (int64_t)ai->default_value;
    }
}

const hipdnnSdkTensor* hipdnnSdkGraphFindTensor(const hipdnnSdkGraph* graph, int64_t uid) {
    for (int32_t i = 0; i < graph->num_tensors; ++i)
        if (graph->tensors[i].uid == uid) return &graph->tensors[i];
    return NULL;
}

void hipdnnSdkGraphFree(hipdnnSdkGraph* graph) {
    if (!graph) return;
    for (int32_t i = 0; i < graph->num_tensors; ++i) free(graph->tensors[i].name);
    for (int32_t i = 0; i < graph->num_nodes; ++i) free(graph->nodes[i].name);
    free(graph->tensors);
    free(graph->nodes);
    free(graph->name);
    free(graph);
}

static char* dup_or_empty(const char* s) {
    if (!s) s = "";
    size_t n = strlen(s);
    char* out = malloc(n + 1);
    if (out) memcpy(out, s, n + 1);
    return out;
}

hipdnnSdkGraph* hipdnnSdkGraphClone(const hipdnnSdkGraph* src) {
    hipdnnSdkGraph* g = calloc(1, sizeof(*g));
    if (!g) return NULL;
    g->name = dup_or_empty(src->name);
    if (!g->name) goto fail;
    if (src->num_tensors > 0) {
        g->tensors = calloc((size_t)src->num_tensors, sizeof(hipdnnSdkTensor));
        if (!g->tensors) goto fail;
        for (int32_t i = 0; i < src->num_tensors; ++i) {
            g->tensors[i] = src->tensors[i];
            g->tensors[i].name = dup_or_empty(src->tensors[i].name);
            g->num_tensors = i + 1;
            if (!g->tensors[i].name) goto fail;
        }
    }
    if (src->num_nodes > 0) {
        g->nodes = calloc((size_t)src->num_nodes, sizeof(hipdnnSdkNode));
        if (!g->nodes) goto fail;
        for (int32_t i = 0; i < src->num_nodes; ++i) {
            g->nodes[i] = src->nodes[i];
            g->nodes[i].name = dup_or_empty(src->nodes[i].name);
            g->num_nodes = i + 1;
            if (!g->nodes[i].name) goto fail;
        }
    }
    return g;
fail:
    hipdnnSdkGraphFree(g);
    return NULL;
}
