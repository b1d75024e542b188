/* Structural checks on a graph: ports, uids, producers, cycles, connectivity.  Sorts the
 * nodes topologically, which plugins rely on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "graph_rules.h"

const char* hipdnnNodeLabel(const hipdnnSdkNode* n, char* buf, size_t len) {
    const char* op = NULL;
    if (n->kind == HIPDNN_OP_POINTWISE) op = hipdnnSdkPointwiseModeName((hipdnnPointwiseMode_t)n->mode);
    if (!op) {
        const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(n->kind);
        op = info ? info->name : "unknown-op";
    }
    snprintf(buf, len, "%s '%s'", op, n->name ? n->name : "");
    return buf;
}

static int32_t index_of(const hipdnnSdkGraph* g, int64_t uid) {
    for (int32_t i = 0; i < g->num_tensors; ++i)
        if (g->tensors[i].uid == uid) return i;
    return -1;
}

static int32_t find_root(int32_t* parent, int32_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
}

/* Checks each node's ports against its op's table. */
static hipdnnStatus_t check_ports(const hipdnnSdkGraph* g, int32_t* producer) {
    char label[160];
    for (int32_t i = 0; i < g->num_nodes; ++i) {
        const hipdnnSdkNode* n = &g->nodes[i];
        const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(n->kind);
        if (!info)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "graph '%s': node %d ('%s') has unknown op "
                              "kind %d", g->name, (int)i, n->name, (int)n->kind);
        hipdnnNodeLabel(n, label, sizeof(label));
        int need = info->min_inputs;
        if (n->kind == HIPDNN_OP_POINTWISE) {
            need = hipdnnSdkPointwiseArity((hipdnnPointwiseMode_t)n->mode);
            if (need == 0)
                return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "pointwise '%s': unknown mode %d",
                                  n->name, (int)n->mode);
        }
        for (int p = 0; p < HIPDNN_MAX_PORTS; ++p) {
            int64_t uid = n->inputs[p];
            bool defined = p < info->num_inputs;
            bool allowed = defined && (n->kind != HIPDNN_OP_POINTWISE || p < need);
            if (uid == HIPDNN_NO_TENSOR) {
                if (p < need)
                    return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: input '%s' is not set", label,
                                      info->input_names[p]);
                continue;
            }
            if (!allowed)
                return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: input port %d is not used by this op",
                                  label, p);
            if (index_of(g, uid) < 0)
                return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: input '%s' refers to uid %lld, "
                                  "which is not a tensor of the graph", label,
                                  info->input_names[p], (long long)uid);
        }
        for (int p = 0; p < HIPDNN_MAX_PORTS; ++p) {
            int64_t uid = n->outputs[p];
            if (uid == HIPDNN_NO_TENSOR) {
                if (p < info->num_outputs)
                    return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: output '%s' is not set", label,
                                      info->output_names[p]);
                continue;
            }
            if (p >= info->num_outputs)
                return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: output port %d is not used by this op",
                                  label, p);
            int32_t t = index_of(g, uid);
            if (t < 0)
                return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: output '%s' refers to uid %lld, "
                                  "which is not a tensor of the graph", label,
                                  info->output_names[p], (long long)uid);
            if (g->tensors[t].is_by_value)
                return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: output '%s' (tensor '%s') is "
                                  "pass-by-value; only inputs can be", label,
                                  info->output_names[p], g->tensors[t].name);
            if (producer[t] >= 0) {
                char other[160];
                return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                                  "tensor '%s' (uid %lld) is produced by both %s and %s",
                                  g->tensors[t].name, (long long)uid,
                                  hipdnnNodeLabel(&g->nodes[producer[t]], other, sizeof(other)),
                                  label);
            }
            producer[t] = i;
        }
    }
    return HIPDNN_STATUS_SUCCESS;
}

/* Kahn's algorithm; on success g->nodes is in execution order. */
static hipdnnStatus_t sort_nodes(hipdnnSdkGraph* g, const int32_t* producer) {
    int32_t nn = g->num_nodes;
    bool* done = calloc((size_t)nn + 1, sizeof(bool));
    bool* ready = calloc((size_t)g->num_tensors + 1, sizeof(bool));
    hipdnnSdkNode* sorted = calloc((size_t)nn + 1, sizeof(hipdnnSdkNode));
    if (!done || !ready || !sorted) {
        free(done);
        free(ready);
        free(sorted);
        return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory sorting the graph");
    }
    for (int32_t t = 0; t < g->num_tensors; ++t) ready[t] = producer[t] < 0;
    int32_t count = 0;
    bool progress = true;
    while (count < nn && progress) {
        progress = false;
        for (int32_t i = 0; i < nn; ++i) {
            if (done[i]) continue;
            const hipdnnSdkNode* n = &g->nodes[i];
            bool ok = true;
            for (int p = 0; p < HIPDNN_MAX_PORTS && ok; ++p)
                if (n->inputs[p] != HIPDNN_NO_TENSOR && !ready[index_of(g, n->inputs[p])]) ok = false;
            if (!ok) continue;
            done[i] = true;
            sorted[count++] = *n;
            for (int p = 0; p < HIPDNN_MAX_PORTS; ++p)
                if (n->outputs[p] != HIPDNN_NO_TENSOR) ready[index_of(g, n->outputs[p])] = true;
            progress = true;
        }
    }
    hipdnnStatus_t st = HIPDNN_STATUS_SUCCESS;
    if (count < nn) {
        int32_t stuck = 0;
        while (done[stuck]) ++stuck;
        char label[160];
        st = hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                        "graph '%s': cycle: %s depends (through its inputs) on its own output",
                        g->name, hipdnnNodeLabel(&g->nodes[stuck], label, sizeof(label)));
    } else {
        memcpy(g->nodes, sorted, (size_t)nn * sizeof(hipdnnSdkNode));
    }
    free(done);
    free(ready);
    free(sorted);
    return st;
}

static hipdnnStatus_t check_connected(const hipdnnSdkGraph* g) {
    int32_t nn = g->num_nodes;
    int32_t* parent = malloc((size_t)nn * sizeof(int32_t) + 1);
    int32_t* owner = malloc((size_t)g->num_tensors * sizeof(int32_t) + 1);
    if (!parent || !owner) {
        free(parent);
        free(owner);
        return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory");
    }
    for (int32_t i = 0; i < nn; ++i) parent[i] = i;
    for (int32_t t = 0; t < g->num_tensors; ++t) owner[t] = -1;
    for (int32_t i = 0; i < nn; ++i) {
        const hipdnnSdkNode* n = &g->nodes[i];
        for (int p = 0; p < 2 * HIPDNN_MAX_PORTS; ++p) {
            int64_t uid = p < HIPDNN_MAX_PORTS ? n->inputs[p] : n->outputs[p - HIPDNN_MAX_PORTS];
            if (uid == HIPDNN_NO_TENSOR) continue;
            int32_t t = index_of(g, uid);
            if (owner[t] < 0) owner[t] = i;
            else parent[find_root(parent, i)] = find_root(parent, owner[t]);
        }
    }
    hipdnnStatus_t st = HIPDNN_STATUS_SUCCESS;
    for (int32_t i = 1; i < nn; ++i) {
        if (find_root(parent, i) != find_root(parent, 0)) {
            char a[160], b[160];
            st = hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                            "graph '%s': not connected: %s and %s share no path of tensors; "
                            "build separate graphs",
                            g->name, hipdnnNodeLabel(&g->nodes[0], a, sizeof(a)),
                            hipdnnNodeLabel(&g->nodes[i], b, sizeof(b)));
            break;
        }
    }
    /* A tensor that no node touches (possible in deserialized bytes) is an error too. */
    for (int32_t t = 0; !st && t < g->num_tensors; ++t)
        if (owner[t] < 0)
            st = hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "graph '%s': tensor '%s' (uid %lld) is not "
                            "used by any node", g->name, g->tensors[t].name,
                            (long long)g->tensors[t].uid);
    free(parent);
    free(owner);
    return st;
}

/* What every tensor must satisfy before any op reads its dims: given dims and strides are
 * positive (strides all unset or all set) and the element count cannot overflow. */
static hipdnnStatus_t check_tensor(const hipdnnSdkGraph* g, const hipdnnSdkTensor* t) {
    if (t->ndim < 0 || t->ndim > HIPDNN_MAX_DIMS)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "graph '%s': tensor '%s' (uid %lld) has rank "
                          "%d; at most %d", g->name, t->name, (long long)t->uid, (int)t->ndim,
                          HIPDNN_MAX_DIMS);
    bool strides_set = t->ndim > 0 && t->strides[0] != 0;
    int64_t count = 1;
    for (int32_t k = 0; k < t->ndim; ++k) {
        if (t->dims[k] <= 0 || (strides_set ? t->strides[k] <= 0 : t->strides[k] != 0))
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "graph '%s': tensor '%s' (uid %lld): dim "
                              "%d is %lld with stride %lld; dims must be positive and strides "
                              "positive (or all unset)", g->name, t->name, (long long)t->uid,
                              (int)k, (long long)t->dims[k], (long long)t->strides[k]);
        if (t->dims[k] > (INT64_C(1) << 40) / count)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "graph '%s': tensor '%s' (uid %lld) has "
                              "more than 2^40 elements", g->name, t->name, (long long)t->uid);
        count *= t->dims[k];
    }
    if (t->data_type != HIPDNN_DATA_NOT_SET && hipdnnSdkDataTypeSize(t->data_type) == 0)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "graph '%s': tensor '%s' (uid %lld) has "
                          "unknown data type %d", g->name, t->name, (long long)t->uid,
                          (int)t->data_type);
    return HIPDNN_STATUS_SUCCESS;
}

hipdnnStatus_t hipdnnValidateGraph(hipdnnSdkGraph* g) {
    if (g->num_nodes == 0)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "graph '%s' has no nodes", g->name);
    for (int32_t i = 0; i < g->num_tensors; ++i) {
        hipdnnStatus_t st = check_tensor(g, &g->tensors[i]);
        if (st) return st;
    }
    for (int32_t i = 0; i < g->num_tensors; ++i)
        for (int32_t k = 0; k < i; ++k)
            if (g->tensors[k].uid == g->tensors[i].uid)
                return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                                  "graph '%s': tensors '%s' and '%s' share uid %lld; uids must be "
                                  "unique",
                                  g->name, g->tensors[k].name, g->tensors[i].name,
                                  (long long)g->tensors[i].uid);
    int32_t* producer = malloc((size_t)g->num_tensors * sizeof(int32_t) + 1);
    if (!producer) return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory");
    for (int32_t t = 0; t < g->num_tensors; ++t) producer[t] = -1;
    hipdnnStatus_t st = check_ports(g, producer);
    if (!st) {
        for (int32_t t = 0; t < g->num_tensors && !st; ++t) {
            const hipdnnSdkTensor* tt = &g->tensors[t];
            if (producer[t] < 0 && tt->is_virtual)
                st = hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                                "tensor '%s' (uid %lld) is virtual but no node produces it; an "
                                "input must be supplied (non-virtual)",
                                tt->name, (long long)tt->uid);
        }
    }
    if (!st) {
        /* A virtual output nobody reads would be computed and thrown away. */
        for (int32_t t = 0; t < g->num_tensors && !st; ++t) {
            const hipdnnSdkTensor* tt = &g->tensors[t];
            if (!tt->is_virtual || producer[t] < 0) continue;
            bool used = false;
            for (int32_t i = 0; i < g->num_nodes && !used; ++i)
                for (int p = 0; p < HIPDNN_MAX_PORTS; ++p)
                    if (g->nodes[i].inputs[p] == tt->uid) used = true;
            if (!used) {
                char label[160];
                st = hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                                "tensor '%s' (uid %lld), output of %s, is virtual and never used; "
                                "mark it as an output (non-virtual)",
                                tt->name, (long long)tt->uid,
                                hipdnnNodeLabel(&g->nodes[producer[t]], label, sizeof(label)));
            }
        }
    }
    if (!st) st = sort_nodes(g, producer);
    if (!st) st = check_connected(g);
    free(producer);
    return st;
}
