/* Inference over a validated graph: each node's rule from the op table, in topological
 * order, then the limits every tensor must meet once complete. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "graph_rules.h"

/* Elements a tensor may hold; inferred tensors included, so serialize() never writes a
 * graph deserialize() refuses. */
#define MAX_ELEMENTS (INT64_C(1) << 40)

/* "[2, 3]" */
static void format_ints(const int64_t* v, int32_t n, char* buf, size_t len) {
    size_t used = (size_t)snprintf(buf, len, "[");
    for (int32_t i = 0; i < n && used < len; ++i)
        used += (size_t)snprintf(buf + used, len - used, "%s%lld", i ? ", " : "", (long long)v[i]);
    if (used < len) snprintf(buf + used, len - used, "]");
}

/* Inputs may alias (a broadcast read), but an output written through overlapping strides
 * would race with itself and end in no defined state: every element of a non-virtual
 * output needs its own address (hipdnnSdkStridesOverlap, which also refuses interleaved
 * layouts).  Checked once dims and strides are all known. */
static hipdnnStatus_t check_outputs_own_memory(const hipdnnSdkGraph* g,
                                               const hipdnnSdkUidMap* map) {
    for (int32_t i = 0; i < g->num_nodes; ++i)
        for (int p = 0; p < HIPDNN_MAX_PORTS; ++p) {
            int64_t uid = g->nodes[i].outputs[p];
            int32_t k = uid == HIPDNN_NO_TENSOR ? -1 : hipdnnSdkUidMapFind(map, uid);
            if (k < 0) continue;
            const hipdnnSdkTensor* t = &g->tensors[k];
            if (t->is_virtual || !hipdnnSdkStridesOverlap(t->ndim, t->dims, t->strides))
                continue;
            char label[160], dims[200], strides[200];
            hipdnnSdkNodeLabel(&g->nodes[i], label, sizeof(label));
            format_ints(t->dims, t->ndim, dims, sizeof(dims));
            format_ints(t->strides, t->ndim, strides, sizeof(strides));
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                              "tensor '%s' (uid %lld), output of %s: strides %s for dims %s "
                              "overlap or interleave; an output needs each stride to step past "
                              "all that the smaller strides reach", t->name, (long long)t->uid,
                              label, strides, dims);
        }
    return HIPDNN_STATUS_SUCCESS;
}

/* The index of the tensor with this uid, or -1 for none. */
static int32_t tensor_at(const hipdnnSdkUidMap* map, int64_t uid) {
    return uid == HIPDNN_NO_TENSOR ? -1 : hipdnnSdkUidMapFind(map, uid);
}

/* cuDNN frontend gives a pointwise output, virtual or not, the strides of its first input
 * shaped like it, so a graph output at the end of a chain of virtual tensors takes the
 * strides of the graph tensor at its head: a strided view in (rotary embeddings' halves of
 * q), a like view out.  The SDK keeps virtual tensors packed, engines lay them out; here
 * src[t] is the non-virtual tensor whose strides virtual t carries in cuDNN's rule, and a
 * graph output whose strides were not given and whose like input is virtual takes them.
 * One pass over the nodes, in their topological order. */
static void carry_view_strides(hipdnnSdkGraph* g, const hipdnnSdkUidMap* map, const bool* given,
                               int32_t* src) {
    for (int32_t t = 0; t < g->num_tensors; ++t) src[t] = -1;
    for (int32_t i = 0; i < g->num_nodes; ++i) {
        const hipdnnSdkNode* n = &g->nodes[i];
        if (n->kind != HIPDNN_OP_POINTWISE) continue;
        hipdnnSdkPointwisePorts ports;
        hipdnnSdkPointwisePortsOf(hipdnnSdkNodeMode(n), &ports);
        int32_t y = tensor_at(map, n->outputs[ports.output]), like = -1;
        if (y < 0) continue;
        const hipdnnSdkTensor* ty = &g->tensors[y];
        for (int k = 0; k < ports.arity && like < 0; ++k) {
            int32_t x = tensor_at(map, n->inputs[ports.inputs[k]]);
            if (x >= 0 && g->tensors[x].ndim == ty->ndim &&
                memcmp(g->tensors[x].dims, ty->dims, (size_t)ty->ndim * sizeof(int64_t)) == 0)
                like = x;
        }
        if (like < 0) continue;
        bool via_virtual = g->tensors[like].is_virtual;
        int32_t s = via_virtual ? src[like] : like;
        if (ty->is_virtual) {
            src[y] = s;
        } else if (via_virtual && s >= 0 && !given[y] &&
                   !hipdnnSdkStridesOverlap(ty->ndim, ty->dims, g->tensors[s].strides)) {
            memcpy(g->tensors[y].strides, g->tensors[s].strides, sizeof(ty->strides));
        }
    }
}

hipdnnStatus_t hipdnnInferGraph(hipdnnSdkGraph* g) {
    char err[1024];
    hipdnnSdkUidMap map;
    if (!hipdnnSdkUidMapBuild(&map, g))
        return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory inferring graph '%s'", g->name);
    /* given[t]: the user set t's strides; src: carry_view_strides's table */
    bool* given = malloc((size_t)(g->num_tensors ? g->num_tensors : 1) * sizeof(bool));
    int32_t* src = malloc((size_t)(g->num_tensors ? g->num_tensors : 1) * sizeof(int32_t));
    if (!given || !src) {
        free(given);
        free(src);
        hipdnnSdkUidMapFree(&map);
        return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory inferring graph '%s'",
                          g->name);
    }
    for (int32_t t = 0; t < g->num_tensors; ++t) given[t] = g->tensors[t].strides[0] != 0;
    for (int32_t t = 0; t < g->num_tensors; ++t) { /* sdpa's ragged offsets: no node's port */
        int32_t r = g->tensors[t].has_ragged_offset
                        ? hipdnnSdkUidMapFind(&map, g->tensors[t].ragged_offset) : -1;
        hipdnnSdkTensor* o = r >= 0 ? &g->tensors[r] : NULL;
        int64_t step = 1; /* unset strides: packed row-major, as graph inputs' */
        for (int32_t k = o && o->strides[0] == 0 ? o->ndim - 1 : -1; k >= 0; --k) {
            o->strides[k] = step;
            step *= o->dims[k];
        }
    }
    for (int32_t i = 0; i < g->num_nodes; ++i)
        if (!hipdnnSdkInferNode(g, &map, &g->nodes[i], err, sizeof(err))) {
            free(given);
            free(src);
            hipdnnSdkUidMapFree(&map);
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s", err);
        }
    carry_view_strides(g, &map, given, src);
    free(given);
    free(src);
    hipdnnStatus_t st = check_outputs_own_memory(g, &map);
    hipdnnSdkUidMapFree(&map);
    if (st) return st;
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
        /* An engine lays out a virtual tensor in its workspace: its strides may not ask for
         * more room than 2^40 elements (one flipped stride byte asked for 5.5 TB). */
        int64_t span;
        if (t->is_virtual && (!hipdnnSdkSpanElements(t->ndim, t->dims, t->strides, &span) ||
                              span > MAX_ELEMENTS))
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "virtual tensor '%s' (uid %lld): "
                                  "its strides reach past 2^40 elements", t->name,
                                  (long long)t->uid);
    }
    return HIPDNN_STATUS_SUCCESS;
}
