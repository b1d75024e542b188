/* The structure of a graph cut into stages (staged_graph.h): which node writes each tensor
 * and how many read it, checked as it is found; and sub-graphs of a set of nodes, the
 * virtual tensors crossing their boundary made real. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "staged_graph.h"

int32_t stg_tidx(const parts* s, int64_t uid) {
    return uid == HIPDNN_NO_TENSOR ? -1 : hipdnnSdkUidMapFind(&s->map, uid);
}

int stg_num_inputs(const hipdnnSdkNode* n) {
    const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(n->kind);
    return info ? info->num_inputs : 0;
}

static int num_outputs(const hipdnnSdkNode* n) {
    const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(n->kind);
    return info ? info->num_outputs : 0;
}

const char* stg_label(const hipdnnSdkNode* n, char* buf, size_t len) {
    const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(n->kind);
    hipdnnSdkFormat(buf, len, "node '%s' (%s)", n->name, info ? info->name : "unknown op");
    return buf;
}

bool stg_structure(parts* s) {
    const hipdnnSdkGraph* g = s->g;
    char nl[160];
    for (int32_t t = 0; t < g->num_tensors; ++t) s->producer[t] = -1;
    for (int32_t i = 0; i < g->num_nodes; ++i) {
        const hipdnnSdkNode* n = &g->nodes[i];
        if (n->kind != HIPDNN_OP_POINTWISE && n->kind != HIPDNN_OP_BATCHNORM_INFERENCE &&
            n->kind != HIPDNN_OP_REDUCTION && n->kind != HIPDNN_OP_NORM_FORWARD &&
            n->kind != HIPDNN_OP_RESAMPLE_FWD && n->kind != HIPDNN_OP_RESAMPLE_BWD &&
            n->kind != HIPDNN_OP_NORM_BACKWARD && n->kind != HIPDNN_OP_MATMUL &&
            n->kind != HIPDNN_OP_CONV_FPROP && n->kind != HIPDNN_OP_CONV_DGRAD &&
            n->kind != HIPDNN_OP_CONV_WGRAD && n->kind != HIPDNN_OP_SDPA_FWD &&
            n->kind != HIPDNN_OP_SDPA_BWD)
            return decline(s->why, s->len, "%s: operation not supported (this engine runs "
                           "pointwise, batchnorm_inference, matmul, conv_fprop, conv_dgrad, "
                           "conv_wgrad, reduction, "
                           "norm_forward, "
                           "norm_backward, genstats, resample, slice, concatenate, "
                           "reshape, sdpa and sdpa_backward nodes)",
                           stg_label(n, nl, sizeof(nl)));
        for (int p = 0; p < stg_num_inputs(n) && p < HIPDNN_MAX_PORTS; ++p) {
            if (n->inputs[p] == HIPDNN_NO_TENSOR) continue;
            int32_t t = stg_tidx(s, n->inputs[p]);
            if (t < 0)
                return decline(s->why, s->len, "%s: input %d names uid %lld, which is not in the "
                               "graph", stg_label(n, nl, sizeof(nl)), p, (long long)n->inputs[p]);
            if (s->producer[t] < 0 && g->tensors[t].is_virtual)
                return decline(s->why, s->len, "%s: virtual tensor '%s' (uid %lld) is read before "
                               "any node writes it", stg_label(n, nl, sizeof(nl)), g->tensors[t].name,
                               (long long)g->tensors[t].uid);
            s->readers[t]++;
        }
        for (int p = 0; p < num_outputs(n) && p < HIPDNN_MAX_PORTS; ++p) {
            if (n->outputs[p] == HIPDNN_NO_TENSOR) continue;
            int32_t t = stg_tidx(s, n->outputs[p]);
            if (t < 0)
                return decline(s->why, s->len, "%s: output %d names uid %lld, which is not in the "
                               "graph", stg_label(n, nl, sizeof(nl)), p, (long long)n->outputs[p]);
            if (s->producer[t] >= 0 || s->readers[t] > 0)
                return decline(s->why, s->len, "%s: '%s' (uid %lld) is written twice or read before "
                               "written", stg_label(n, nl, sizeof(nl)), g->tensors[t].name,
                               (long long)g->tensors[t].uid);
            s->producer[t] = i;
        }
    }
    return true;
}

/* The tensor whose memory uid names: a view's base, else uid itself. */
static int64_t memory_of(const parts* s, int64_t uid) {
    for (int a = 0; a < s->nalias; ++a)
        if (s->alias[a].uid == uid) return s->alias[a].base;
    return uid;
}

/* Whether a node of group grp writes tensor uid. */
static bool written_in(const parts* s, int64_t uid, int grp) {
    const int32_t t = stg_tidx(s, uid);
    return t >= 0 && s->producer[t] >= 0 && s->group[s->producer[t]] == grp;
}

bool stg_reads_aliased(const parts* s, const hipdnnSdkNode* n, int grp) {
    for (int p = 0; p < stg_num_inputs(n) && p < HIPDNN_MAX_PORTS; ++p) {
        const int64_t u = n->inputs[p], m = memory_of(s, u);
        if (u == HIPDNN_NO_TENSOR) continue;
        if (m != u && written_in(s, m, grp)) return true;
        for (int a = 0; a < s->nalias; ++a)
            if (s->alias[a].uid != u && s->alias[a].base == m && written_in(s, s->alias[a].uid, grp))
                return true;
    }
    return false;
}

bool stg_reads(const hipdnnSdkNode* n, int64_t uid) {
    for (int p = 0; p < stg_num_inputs(n) && p < HIPDNN_MAX_PORTS; ++p)
        if (n->inputs[p] == uid) return true;
    return false;
}

bool stg_same_dims(const hipdnnSdkTensor* a, const hipdnnSdkTensor* b) {
    if (a->ndim != b->ndim) return false;
    for (int i = 0; i < a->ndim; ++i)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

/* Whether virtual tensor t crosses the boundary of the node set `in` (written on one side,
 * read on the other). */
bool stg_crosses(const parts* s, const bool* in, int32_t t) {
    const hipdnnSdkGraph* g = s->g;
    if (!g->tensors[t].is_virtual || s->producer[t] < 0) return false;
    const bool made_in = in[s->producer[t]];
    for (int32_t i = 0; i < g->num_nodes; ++i)
        if (in[i] != made_in && stg_reads(&g->nodes[i], g->tensors[t].uid)) return true;
    return false;
}

/* A copy of the graph with the nodes of `in` only, every virtual tensor crossing into or
 * out of them made real and packed (a weight gradient's dw channels-last, KRSC: the one
 * layout the matmul stage writes it in); NULL when out of memory. */
hipdnnSdkGraph* stg_subgraph(const parts* s, const bool* in) {
    hipdnnSdkGraph* sub = hipdnnSdkGraphClone(s->g);
    if (!sub) return NULL;
    int32_t kept = 0;
    for (int32_t i = 0; i < sub->num_nodes; ++i) {
        if (in[i]) {
            sub->nodes[kept++] = sub->nodes[i];
        } else {
            free(sub->nodes[i].name);
        }
    }
    sub->num_nodes = kept;
    for (int32_t t = 0; t < sub->num_tensors; ++t)
        if (stg_crosses(s, in, t)) {
            hipdnnSdkTensor* tt = &sub->tensors[t];
            tt->is_virtual = false;
            hipdnnSdkPackedStrides(tt->ndim, tt->dims, tt->strides);
            if (s->producer[t] >= 0 && s->g->nodes[s->producer[t]].kind == HIPDNN_OP_CONV_WGRAD &&
                tt->ndim >= 3) {
                int64_t size = tt->dims[1];
                tt->strides[1] = 1;
                for (int d = tt->ndim - 1; d >= 2; --d) {
                    tt->strides[d] = size;
                    size *= tt->dims[d];
                }
                tt->strides[0] = size;
            }
        }
    return sub;
}
