/* Structural checks on a graph: tensor bounds, unique uids, ports against the op table,
 * producers, cycles and connectivity.  Sorts the nodes topologically, which plugins rely
 * on.  Linear in nodes + tensors: uids go through the SDK's hash map once, the sort is Kahn's
 * algorithm over a consumer list, connectivity a union-find. */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "graph_rules.h"

/* ---- checks ---------------------------------------------------------------------------- */

/* What every tensor must satisfy before any op reads its dims: given dims and strides are
 * positive (strides all unset or all set) and the element count stays within 2^40. */
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
        if (t->dims[k] > (INT64_C(1) << 40) / count ||
            (strides_set && t->strides[k] > (INT64_C(1) << 40)))
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "graph '%s': tensor '%s' (uid %lld) has "
                              "more than 2^40 elements or a stride over 2^40", g->name, t->name,
                              (long long)t->uid);
        count *= t->dims[k];
    }
    if (!hipdnnSdkEnumValid(HIPDNN_TYPE_DATA_TYPE, t->data_type))
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "graph '%s': tensor '%s' (uid %lld) has "
                          "unknown data type %d", g->name, t->name, (long long)t->uid,
                          (int)t->data_type);
    return HIPDNN_STATUS_SUCCESS;
}

/* Each parameter's count within its slot, each value in its range (enums known, booleans
 * 0 or 1, doubles not NaN). */
static hipdnnStatus_t check_params(const hipdnnSdkNode* n, const hipdnnSdkOpInfo* info,
                                   const char* label) {
    for (int a = 0; a < info->num_attrs; ++a) {
        const hipdnnOpAttrInfo_ext_t* ai = &info->attrs[a];
        const hipdnnSdkAttrValue* v = &n->attrs[a];
        if (v->count < 0 || v->count > ai->max_count)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: %s has %d values; at most %d", label,
                              ai->name, (int)v->count, (int)ai->max_count);
        for (int k = 0; k < v->count; ++k) {
            bool ok = true;
            switch (ai->kind) {
            case HIPDNN_OP_ATTR_DOUBLE: ok = v->d == v->d; break; /* not NaN */
            case HIPDNN_OP_ATTR_ENUM: ok = hipdnnSdkEnumValid(ai->type, v->i[k]); break;
            case HIPDNN_OP_ATTR_BOOLEAN: ok = v->i[k] == 0 || v->i[k] == 1; break;
            default: ok = v->i[k] >= ai->min_value && v->i[k] <= ai->max_value; break;
            }
            if (!ok && ai->kind == HIPDNN_OP_ATTR_DOUBLE)
                return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: %s is NaN", label, ai->name);
            if (!ok)
                return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: %s value %lld is out of range",
                                  label, ai->name, (long long)v->i[k]);
        }
    }
    return HIPDNN_STATUS_SUCCESS;
}

/* Required inputs set, no input on a port the op does not have, each a graph tensor. */
static hipdnnStatus_t check_inputs(const hipdnnSdkNode* n, const hipdnnSdkOpInfo* info,
                                   const hipdnnSdkUidMap* m, const char* label) {
    for (int p = 0; p < HIPDNN_MAX_PORTS; ++p) {
        int64_t uid = n->inputs[p];
        if (uid == HIPDNN_NO_TENSOR) {
            if (p < info->num_inputs && !info->inputs[p].is_optional)
                return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: input '%s' is not set", label,
                                  info->inputs[p].name);
            continue;
        }
        if (p >= info->num_inputs)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: input port %d is not used by this op",
                              label, p);
        if (hipdnnSdkUidMapFind(m, uid) < 0)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: input '%s' refers to uid %lld, "
                              "which is not a tensor of the graph", label, info->inputs[p].name,
                              (long long)uid);
    }
    return HIPDNN_STATUS_SUCCESS;
}

/* Outputs as inputs are, and each a tensor in memory that no other node produces;
 * records node i as its producer. */
static hipdnnStatus_t check_outputs(const hipdnnSdkGraph* g, const hipdnnSdkUidMap* m,
                                    int32_t i, const hipdnnSdkOpInfo* info, const char* label,
                                    int32_t* producer) {
    const hipdnnSdkNode* n = &g->nodes[i];
    for (int p = 0; p < HIPDNN_MAX_PORTS; ++p) {
        int64_t uid = n->outputs[p];
        if (uid == HIPDNN_NO_TENSOR) {
            if (p < info->num_outputs && !info->outputs[p].is_optional)
                return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: output '%s' is not set", label,
                                  info->outputs[p].name);
            continue;
        }
        if (p >= info->num_outputs)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: output port %d is not used by this op",
                              label, p);
        int32_t t = hipdnnSdkUidMapFind(m, uid);
        if (t < 0)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: output '%s' refers to uid %lld, "
                              "which is not a tensor of the graph", label, info->outputs[p].name,
                              (long long)uid);
        if (g->tensors[t].is_by_value)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: output '%s' (tensor '%s') is "
                              "pass-by-value; only inputs can be", label, info->outputs[p].name,
                              g->tensors[t].name);
        if (producer[t] >= 0) {
            char other[160];
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                              "tensor '%s' (uid %lld) is produced by both %s and %s",
                              g->tensors[t].name, (long long)uid,
                              hipdnnSdkNodeLabel(&g->nodes[producer[t]], other, sizeof(other)),
                              label);
        }
        producer[t] = i;
    }
    return HIPDNN_STATUS_SUCCESS;
}

/* Each node's ports and parameters against its op's table entry; records producers. */
static hipdnnStatus_t check_node(const hipdnnSdkGraph* g, const hipdnnSdkUidMap* m, int32_t i,
                                 int32_t* producer) {
    const hipdnnSdkNode* n = &g->nodes[i];
    const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(n->kind);
    char label[160];
    if (!info)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "graph '%s': node %d ('%s') has unknown op "
                          "kind %d", g->name, (int)i, n->name, (int)n->kind);
    hipdnnSdkNodeLabel(n, label, sizeof(label));
    if (!hipdnnSdkEnumValid(HIPDNN_TYPE_DATA_TYPE, n->compute_type))
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: unknown compute type %d", label,
                          (int)n->compute_type);
    hipdnnStatus_t st = check_params(n, info, label);
    if (!st) st = check_inputs(n, info, m, label);
    if (!st) st = check_outputs(g, m, i, info, label, producer);
    return st;
}

/* Ragged offsets: only sdpa / sdpa_backward read them (cuDNN's THD layout), and only as a
 * graph input of this graph that carries no offsets itself; infer_attention checks the
 * dims and data type against the node. */
static hipdnnStatus_t check_ragged(const hipdnnSdkGraph* g, const hipdnnSdkUidMap* m,
                                   const int32_t* producer) {
    for (int32_t t = 0; t < g->num_tensors; ++t) {
        const hipdnnSdkTensor* tt = &g->tensors[t];
        if (!tt->has_ragged_offset) continue;
        int32_t r = hipdnnSdkUidMapFind(m, tt->ragged_offset);
        const char* why = r < 0 ? "is not a tensor of the graph"
                          : g->tensors[r].is_virtual || producer[r] >= 0
                              ? "must be a graph input (non-virtual, produced by no node)"
                          : g->tensors[r].has_ragged_offset ? "has a ragged offset itself"
                          : g->tensors[r].is_by_value ? "must be a tensor in memory, not by value"
                                                      : NULL;
        if (why)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "graph '%s': tensor '%s' (uid %lld): its "
                              "ragged offset (uid %lld) %s", g->name, tt->name,
                              (long long)tt->uid, (long long)tt->ragged_offset, why);
    }
    for (int32_t i = 0; i < g->num_nodes; ++i) {
        const hipdnnSdkNode* n = &g->nodes[i];
        if (n->kind == HIPDNN_OP_SDPA_FWD || n->kind == HIPDNN_OP_SDPA_BWD) continue;
        for (int p = 0; p < 2 * HIPDNN_MAX_PORTS; ++p) {
            int64_t uid = p < HIPDNN_MAX_PORTS ? n->inputs[p] : n->outputs[p - HIPDNN_MAX_PORTS];
            int32_t t = uid == HIPDNN_NO_TENSOR ? -1 : hipdnnSdkUidMapFind(m, uid);
            char label[160];
            if (t >= 0 && g->tensors[t].has_ragged_offset)
                return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: tensor '%s' (uid %lld) has a "
                                  "ragged offset; only sdpa and sdpa_backward read ragged "
                                  "tensors", hipdnnSdkNodeLabel(n, label, sizeof(label)),
                                  g->tensors[t].name, (long long)uid);
        }
    }
    return HIPDNN_STATUS_SUCCESS;
}

static int32_t find_root(int32_t* parent, int32_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
}

typedef struct {
    hipdnnSdkUidMap map;
    int32_t* producer;  /* per tensor: node index or -1 */
    int32_t* uses;      /* per tensor: input ports reading it */
    int32_t* first_use; /* CSR over tensors: consumers of tensor t are use_node[first_use[t] ..] */
    int32_t* use_node;
    int32_t* pending;   /* per node: inputs not yet produced */
    int32_t* order;     /* sorted node indices */
    int32_t* parent;    /* union-find over nodes */
} scratch;

static void scratch_free(scratch* s) {
    hipdnnSdkUidMapFree(&s->map);
    free(s->producer);
    free(s->uses);
    free(s->first_use);
    free(s->use_node);
    free(s->pending);
    free(s->order);
    free(s->parent);
}

static hipdnnStatus_t scratch_alloc(scratch* s, const hipdnnSdkGraph* g) {
    size_t nt = (size_t)g->num_tensors + 1, nn = (size_t)g->num_nodes + 1;
    size_t nports = nn * HIPDNN_MAX_PORTS;
    bool mapped = hipdnnSdkUidMapInit(&s->map, g);
    s->producer = malloc(nt * sizeof(int32_t));
    s->uses = calloc(nt, sizeof(int32_t));
    s->first_use = calloc(nt + 1, sizeof(int32_t));
    s->use_node = malloc(nports * sizeof(int32_t));
    s->pending = calloc(nn, sizeof(int32_t));
    s->order = malloc(nn * sizeof(int32_t));
    s->parent = malloc(nn * sizeof(int32_t));
    if (!mapped || !s->producer || !s->uses || !s->first_use || !s->use_node ||
        !s->pending || !s->order || !s->parent)
        return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory validating graph '%s'",
                          g->name);
    return HIPDNN_STATUS_SUCCESS;
}

/* Kahn's algorithm over producer -> consumer edges; on success g->nodes is in order. */
static hipdnnStatus_t sort_nodes(hipdnnSdkGraph* g, scratch* s) {
    int32_t nn = g->num_nodes, nt = g->num_tensors;
    /* Consumers per tensor (CSR), and per node the inputs some node produces. */
    for (int32_t i = 0; i < nn; ++i)
        for (int p = 0; p < HIPDNN_MAX_PORTS; ++p)
            if (g->nodes[i].inputs[p] != HIPDNN_NO_TENSOR)
                ++s->uses[hipdnnSdkUidMapFind(&s->map, g->nodes[i].inputs[p])];
    for (int32_t t = 0; t < nt; ++t) s->first_use[t + 1] = s->first_use[t] + s->uses[t];
    int32_t* cursor = malloc(((size_t)nt + 1) * sizeof(int32_t));
    if (!cursor) return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory sorting the graph");
    memcpy(cursor, s->first_use, ((size_t)nt + 1) * sizeof(int32_t));
    for (int32_t i = 0; i < nn; ++i)
        for (int p = 0; p < HIPDNN_MAX_PORTS; ++p) {
            if (g->nodes[i].inputs[p] == HIPDNN_NO_TENSOR) continue;
            int32_t t = hipdnnSdkUidMapFind(&s->map, g->nodes[i].inputs[p]);
            s->use_node[cursor[t]++] = i;
            if (s->producer[t] >= 0) ++s->pending[i];
        }
    free(cursor);
    int32_t head = 0, tail = 0;
    for (int32_t i = 0; i < nn; ++i)
        if (s->pending[i] == 0) s->order[tail++] = i;
    while (head < tail) {
        const hipdnnSdkNode* n = &g->nodes[s->order[head++]];
        for (int p = 0; p < HIPDNN_MAX_PORTS; ++p) {
            if (n->outputs[p] == HIPDNN_NO_TENSOR) continue;
            int32_t t = hipdnnSdkUidMapFind(&s->map, n->outputs[p]);
            for (int32_t u = s->first_use[t]; u < s->first_use[t + 1]; ++u)
                if (--s->pending[s->use_node[u]] == 0) s->order[tail++] = s->use_node[u];
        }
    }
    if (tail < nn) {
        int32_t stuck = 0;
        while (s->pending[stuck] == 0) ++stuck;
        char label[160];
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                          "graph '%s': cycle: %s depends (through its inputs) on its own output",
                          g->name, hipdnnSdkNodeLabel(&g->nodes[stuck], label, sizeof(label)));
    }
    hipdnnSdkNode* sorted = malloc((size_t)nn * sizeof(hipdnnSdkNode));
    if (!sorted) return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory sorting the graph");
    for (int32_t i = 0; i < nn; ++i) sorted[i] = g->nodes[s->order[i]];
    memcpy(g->nodes, sorted, (size_t)nn * sizeof(hipdnnSdkNode));
    free(sorted);
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t check_connected(const hipdnnSdkGraph* g, scratch* s) {
    int32_t nn = g->num_nodes;
    int32_t* owner = s->producer; /* reused: first node touching each tensor */
    for (int32_t i = 0; i < nn; ++i) s->parent[i] = i;
    for (int32_t t = 0; t < g->num_tensors; ++t) owner[t] = -1;
    for (int32_t i = 0; i < nn; ++i) {
        const hipdnnSdkNode* n = &g->nodes[i];
        for (int p = 0; p < 2 * HIPDNN_MAX_PORTS; ++p) {
            int64_t uid = p < HIPDNN_MAX_PORTS ? n->inputs[p] : n->outputs[p - HIPDNN_MAX_PORTS];
            if (uid == HIPDNN_NO_TENSOR) continue;
            int32_t t = hipdnnSdkUidMapFind(&s->map, uid);
            if (owner[t] < 0) owner[t] = i;
            else s->parent[find_root(s->parent, i)] = find_root(s->parent, owner[t]);
            if (g->tensors[t].has_ragged_offset) { /* the node reads the offsets too */
                int32_t r = hipdnnSdkUidMapFind(&s->map, g->tensors[t].ragged_offset);
                if (owner[r] < 0) owner[r] = i;
                else s->parent[find_root(s->parent, i)] = find_root(s->parent, owner[r]);
            }
        }
    }
    for (int32_t i = 1; i < nn; ++i)
        if (find_root(s->parent, i) != find_root(s->parent, 0)) {
            char a[160], b[160];
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                              "graph '%s': not connected: %s and %s share no path of tensors; "
                              "build separate graphs",
                              g->name, hipdnnSdkNodeLabel(&g->nodes[0], a, sizeof(a)),
                              hipdnnSdkNodeLabel(&g->nodes[i], b, sizeof(b)));
        }
    /* A tensor that no node touches (possible in deserialized bytes) is an error too. */
    for (int32_t t = 0; t < g->num_tensors; ++t)
        if (owner[t] < 0)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "graph '%s': tensor '%s' (uid %lld) is "
                              "not used by any node", g->name, g->tensors[t].name,
                              (long long)g->tensors[t].uid);
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t validate(hipdnnSdkGraph* g, scratch* s) {
    hipdnnStatus_t st;
    for (int32_t i = 0; i < g->num_tensors; ++i) {
        if ((st = check_tensor(g, &g->tensors[i]))) return st;
        int32_t other = hipdnnSdkUidMapInsert(&s->map, i);
        if (other >= 0)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                              "graph '%s': tensors '%s' and '%s' share uid %lld; uids must be "
                              "unique", g->name, g->tensors[other].name, g->tensors[i].name,
                              (long long)g->tensors[i].uid);
        s->producer[i] = -1;
    }
    for (int32_t i = 0; i < g->num_nodes; ++i)
        if ((st = check_node(g, &s->map, i, s->producer))) return st;
    if ((st = check_ragged(g, &s->map, s->producer))) return st;
    for (int32_t t = 0; t < g->num_tensors; ++t) {
        const hipdnnSdkTensor* tt = &g->tensors[t];
        if (s->producer[t] < 0 && tt->is_virtual)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                              "tensor '%s' (uid %lld) is virtual but no node produces it; an "
                              "input must be supplied (non-virtual)", tt->name, (long long)tt->uid);
    }
    if ((st = sort_nodes(g, s))) return st;
    /* A virtual output nobody reads would be computed and thrown away. */
    for (int32_t t = 0; t < g->num_tensors; ++t) {
        const hipdnnSdkTensor* tt = &g->tensors[t];
        if (tt->is_virtual && s->uses[t] == 0) {
            char label[160] = "?";
            for (int32_t i = 0; i < g->num_nodes; ++i)
                for (int p = 0; p < HIPDNN_MAX_PORTS; ++p)
                    if (g->nodes[i].outputs[p] == tt->uid)
                        hipdnnSdkNodeLabel(&g->nodes[i], label, sizeof(label));
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                              "tensor '%s' (uid %lld), output of %s, is virtual and never used; "
                              "mark it as an output (non-virtual)", tt->name, (long long)tt->uid,
                              label);
        }
    }
    return check_connected(g, s);
}

hipdnnStatus_t hipdnnValidateGraph(hipdnnSdkGraph* g) {
    if (g->num_nodes == 0)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "graph '%s' has no nodes", g->name);
    scratch s;
    memset(&s, 0, sizeof(s));
    hipdnnStatus_t st = scratch_alloc(&s, g);
    if (!st) st = validate(g, &s);
    scratch_free(&s);
    return st;
}
