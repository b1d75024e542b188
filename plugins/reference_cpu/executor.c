/* Plans and execution: where each tensor lives (user buffer, workspace slot for virtual
 * tensors, plan-owned float64 for pass-by-value scalars), then the nodes in order. */
#include <stdlib.h>
#include <string.h>

#include "reference_cpu.h"

static size_t align_up(size_t v) {
    return (v + (REF_WORKSPACE_ALIGN - 1)) & ~(size_t)(REF_WORKSPACE_ALIGN - 1);
}

/* Bytes of a virtual tensor's slot: its span (the packed size when packed) in its own
 * dtype, rounded up to the alignment. */
static size_t slot_bytes(const hipdnnSdkTensor* t) {
    int64_t span = ref_span_elements(t->ndim, t->dims, t->strides);
    if (span < 0) return 0; /* unsupported graphs never get here */
    return align_up((size_t)span * hipdnnSdkDataTypeSize(t->data_type));
}

static bool in_workspace(const hipdnnSdkTensor* t) { return t->is_virtual && !t->is_by_value; }

/* Elements of the tensor `uid` of a supported graph. */
static int64_t elements_of(const hipdnnSdkGraph* g, int64_t uid) {
    const hipdnnSdkTensor* t = hipdnnSdkGraphFindTensor(g, uid);
    return ref_element_count(t->ndim, t->dims);
}

/* Input ports a node may read (a pointwise mode's are among its op's; unset ports are
 * HIPDNN_NO_TENSOR). */
static int inputs_of(const hipdnnSdkNode* n) {
    const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(n->kind);
    int k = info ? info->num_inputs : 0;
    return k < HIPDNN_MAX_PORTS ? k : HIPDNN_MAX_PORTS;
}

static int outputs_of(const hipdnnSdkNode* n) {
    const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(n->kind);
    int k = info ? info->num_outputs : 0;
    return k < HIPDNN_MAX_PORTS ? k : HIPDNN_MAX_PORTS;
}

/* The view of tensor `uid`: with its data where `ptrs` is given (a by-value scalar is then
 * the plan's float64 copy, read at every index), else its shape alone. */
static void view_of(const hipdnnSdkGraph* g, void* const* ptrs, int64_t uid, ref_view* v) {
    const hipdnnSdkTensor* t = hipdnnSdkGraphFindTensor(g, uid);
    ref_view_from_tensor(t, ptrs ? ptrs[t - g->tensors] : NULL, v);
    if (ptrs && t->is_by_value) {
        v->dtype = HIPDNN_DATA_DOUBLE;
        for (int32_t i = 0; i < v->ndim; ++i) v->strides[i] = 0;
    }
    const hipdnnSdkTensor* r =
        t->has_ragged_offset ? hipdnnSdkGraphFindTensor(g, t->ragged_offset) : NULL;
    if (r) { /* sdpa's ragged offsets, a graph input */
        v->offsets = ptrs ? ptrs[r - g->tensors] : NULL;
        v->offsets_dtype = r->data_type;
    }
}

/* Views of the set ports node n uses (every port of its op; a pointwise mode's own
 * operands and output), by port; ins[p] / outs[p] NULL for the others. */
static void node_views(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, void* const* ptrs,
                       ref_view* in, const ref_view** ins, ref_view* out,
                       const ref_view** outs) {
    bool reads[HIPDNN_MAX_PORTS], writes[HIPDNN_MAX_PORTS];
    for (int p = 0; p < HIPDNN_MAX_PORTS; ++p) {
        reads[p] = p < inputs_of(n);
        writes[p] = p < outputs_of(n);
    }
    hipdnnSdkPointwisePorts ports;
    if (n->kind == HIPDNN_OP_POINTWISE && hipdnnSdkPointwisePortsOf(hipdnnSdkNodeMode(n), &ports)) {
        /* its other ports may name anything: support never looked at them */
        for (int p = 0; p < HIPDNN_MAX_PORTS; ++p) reads[p] = writes[p] = false;
        for (int k = 0; k < ports.arity; ++k) reads[ports.inputs[k]] = true;
        writes[ports.output] = true;
    }
    for (int p = 0; p < HIPDNN_MAX_PORTS; ++p) {
        ins[p] = outs[p] = NULL;
        if (reads[p] && n->inputs[p] != HIPDNN_NO_TENSOR) {
            view_of(g, ptrs, n->inputs[p], &in[p]);
            ins[p] = &in[p];
        }
        if (writes[p] && n->outputs[p] != HIPDNN_NO_TENSOR) {
            view_of(g, ptrs, n->outputs[p], &out[p]);
            outs[p] = &out[p];
        }
    }
}

/* The largest scratch (float64 values) one node of the graph takes: each op's row's
 * formula (op_table.c), from the tensors' shapes alone. */
static int64_t scratch_doubles(const hipdnnSdkGraph* g) {
    int64_t most = 0;
    for (int32_t i = 0; i < g->num_nodes; ++i) {
        const hipdnnSdkNode* n = &g->nodes[i];
        const ref_op* row = ref_op_get(n->kind);
        if (!row || !row->scratch) continue;
        ref_view in[HIPDNN_MAX_PORTS], out[HIPDNN_MAX_PORTS];
        const ref_view *ins[HIPDNN_MAX_PORTS], *outs[HIPDNN_MAX_PORTS];
        node_views(g, n, NULL, in, ins, out, outs);
        const ref_op_args args = {n, NULL, NULL, in, out, ins, outs, NULL};
        int64_t need = row->scratch(&args);
        if (need > most) most = need;
    }
    return most;
}

/* Bytes of one execution's tensor table: a pointer per tensor, then a float64 per
 * tensor for runtime scalars. */
static size_t state_bytes(const hipdnnSdkGraph* g) {
    size_t nt = (size_t)(g->num_tensors > 0 ? g->num_tensors : 1);
    return align_up(nt * sizeof(void*)) + align_up(nt * sizeof(double));
}

/* Virtual tensors' slots, the tensor table, then (aligned) the kernels' scratch plus its
 * alignment slack: the most any node or fused run takes (they run one after another). */
static size_t layout_workspace(const hipdnnSdkGraph* g, const ref_fused* runs,
                               int32_t num_runs, size_t* state_offset, size_t* scratch_offset,
                               int64_t* scratch) {
    size_t total = 0;
    for (int32_t i = 0; i < g->num_tensors; ++i)
        if (in_workspace(&g->tensors[i])) total += slot_bytes(&g->tensors[i]);
    *state_offset = total;
    total += state_bytes(g);
    *scratch = scratch_doubles(g);
    for (int32_t r = 0; r < num_runs; ++r) {
        int64_t y = hipdnnSdkPointwiseOutput(&g->nodes[runs[r].first + runs[r].count - 1]);
        int64_t need = ref_fused_scratch_doubles(&runs[r], elements_of(g, y));
        if (need > *scratch) *scratch = need;
    }
    *scratch_offset = total;
    if (*scratch > 0) total += align_up((size_t)(*scratch + 8) * sizeof(double));
    return total;
}

size_t ref_workspace_size(const hipdnnSdkGraph* g) {
    size_t state = 0, offset = 0;
    int64_t scratch = 0;
    ref_fused* runs = NULL;
    int32_t num_runs = 0;
    if (ref_fuse_find(g, &runs, &num_runs) != 0) num_runs = 0; /* then unfused: less room */
    size_t total = layout_workspace(g, runs, num_runs, &state, &offset, &scratch);
    free(runs);
    return total;
}

void ref_plan_destroy(ref_plan* p) {
    if (!p) return;
    hipdnnSdkGraphFree(p->graph);
    free(p->ws_offset);
    free(p->scalar);
    free(p->used);
    free(p->runs);
    free(p);
}

static void mark_used(ref_plan* p, int64_t uid) {
    if (uid == HIPDNN_NO_TENSOR) return;
    const hipdnnSdkTensor* t = hipdnnSdkGraphFindTensor(p->graph, uid);
    if (t) p->used[t - p->graph->tensors] = true;
}

hipdnnPluginStatus_t ref_plan_create(hipdnnSdkGraph* g, ref_plan** out) {
    *out = NULL;
    ref_plan* p = calloc(1, sizeof(*p));
    size_t n = (size_t)(g->num_tensors > 0 ? g->num_tensors : 1);
    if (p) {
        p->graph = g;
        p->ws_offset = calloc(n, sizeof(size_t));
        p->scalar = calloc(n, sizeof(double));
        p->used = calloc(n, sizeof(bool));
    }
    if (!p || !p->ws_offset || !p->scalar || !p->used) {
        if (p) ref_plan_destroy(p);
        else hipdnnSdkGraphFree(g);
        ref_set_error(REF_ENGINE_NAME ": out of memory creating an execution context");
        return HIPDNN_PLUGIN_STATUS_ALLOC_FAILED;
    }
    size_t off = 0;
    for (int32_t i = 0; i < g->num_tensors; ++i) {
        const hipdnnSdkTensor* t = &g->tensors[i];
        if (t->is_by_value && t->has_value) {
            /* Copy out first: the value bytes are not aligned for their type. */
            union { uint8_t bytes[8]; double d; int64_t i; } v;
            memcpy(v.bytes, t->value, sizeof(v.bytes));
            p->scalar[i] = hipdnnSdkLoadAsDouble(v.bytes, t->data_type, 0);
        } else if (t->is_virtual) {
            p->ws_offset[i] = off;
            off += slot_bytes(t);
        }
    }
    if (ref_fuse_find(g, &p->runs, &p->num_runs) != 0) {
        ref_plan_destroy(p);
        ref_set_error(REF_ENGINE_NAME ": out of memory creating an execution context");
        return HIPDNN_PLUGIN_STATUS_ALLOC_FAILED;
    }
    p->workspace_size = layout_workspace(g, p->runs, p->num_runs, &p->state_offset,
                                         &p->scratch_offset, &p->scratch_doubles);
    for (int32_t i = 0; i < g->num_nodes; ++i) { /* unset ports are HIPDNN_NO_TENSOR */
        for (int k = 0; k < inputs_of(&g->nodes[i]); ++k) mark_used(p, g->nodes[i].inputs[k]);
        for (int k = 0; k < outputs_of(&g->nodes[i]); ++k) mark_used(p, g->nodes[i].outputs[k]);
    }
    for (int32_t i = 0; i < g->num_tensors; ++i) /* sdpa reads a ragged tensor's offsets */
        if (p->used[i] && g->tensors[i].has_ragged_offset)
            mark_used(p, g->tensors[i].ragged_offset);
    *out = p;
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

/* Where every used tensor's element 0 is. */
static hipdnnPluginStatus_t resolve(const ref_plan* p, void* workspace,
                                    const hipdnnPluginTensorBuffer_t* buffers, uint32_t nbuf,
                                    void** ptrs, double* runtime) {
    const hipdnnSdkGraph* g = p->graph;
    for (int32_t i = 0; i < g->num_tensors; ++i) {
        const hipdnnSdkTensor* t = &g->tensors[i];
        ptrs[i] = NULL;
        if (!p->used[i]) continue;
        if (t->is_by_value && t->has_value) {
            ptrs[i] = &p->scalar[i];
            continue;
        }
        if (t->is_virtual) {
            ptrs[i] = (uint8_t*)workspace + p->ws_offset[i];
            continue;
        }
        for (uint32_t b = 0; b < nbuf && buffers; ++b)
            if (buffers[b].uid == t->uid) {
                ptrs[i] = buffers[b].ptr;
                break;
            }
        if (!ptrs[i]) {
            ref_set_error(REF_ENGINE_NAME ": execute: no buffer for tensor '%s' (uid %lld)",
                          t->name, (long long)t->uid);
            return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
        }
        if (t->is_by_value) { /* a runtime scalar: read now, as float64 like constants */
            runtime[i] = hipdnnSdkLoadAsDouble(ptrs[i], t->data_type, 0);
            ptrs[i] = &runtime[i];
            continue;
        }
        size_t esize = hipdnnSdkDataTypeSize(t->data_type);
        if (esize > 1 && (uintptr_t)ptrs[i] % esize != 0) {
            ref_set_error(REF_ENGINE_NAME ": execute: buffer %p of tensor '%s' (uid %lld) is not "
                          "aligned to its %zu-byte elements", ptrs[i], t->name,
                          (long long)t->uid, esize);
            return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
        }
    }
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

/* The coordinates on `axis` of tensor `uid` (gen_index's operand; ref_index_view). */
static void index_view_of(const ref_plan* p, int64_t uid, int axis, ref_view* v) {
    const hipdnnSdkTensor* t = hipdnnSdkGraphFindTensor(p->graph, uid);
    ref_index_view(t->ndim, t->dims, axis, v);
}

/* One node: its row's kernel (op_table.c) on views of the ports it uses. */
static hipdnnPluginStatus_t run_node(const ref_plan* p, const hipdnnSdkNode* n,
                                     void* const* ptrs, const ref_region* scratch) {
    const ref_op* row = ref_op_get(n->kind);
    if (!row) {
        ref_set_error(REF_ENGINE_NAME ": node '%s': operation kind %d not supported", n->name,
                      (int)n->kind);
        return HIPDNN_PLUGIN_STATUS_NOT_SUPPORTED;
    }
    ref_view in[HIPDNN_MAX_PORTS], out[HIPDNN_MAX_PORTS];
    const ref_view *ins[HIPDNN_MAX_PORTS], *outs[HIPDNN_MAX_PORTS];
    node_views(p->graph, n, ptrs, in, ins, out, outs);
    const ref_op_args args = {n, NULL, NULL, in, out, ins, outs, scratch};
    return row->run(&args);
}

hipdnnPluginStatus_t ref_plan_run(const ref_plan* p, void* workspace,
                                  const hipdnnPluginTensorBuffer_t* buffers,
                                  uint32_t num_buffers) {
    const hipdnnSdkGraph* g = p->graph;
    if (!workspace) {
        ref_set_error(REF_ENGINE_NAME ": execute: graph '%s' needs a workspace of %zu bytes, "
                      "got NULL", g->name, p->workspace_size);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    if ((uintptr_t)workspace % sizeof(double) != 0) {
        ref_set_error(REF_ENGINE_NAME ": execute: workspace %p is not 8-byte aligned", workspace);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    /* This execution's tensor table lives in the workspace: nothing is allocated here,
     * and executions with their own workspaces may run at once. */
    uint8_t* state = (uint8_t*)workspace + p->state_offset;
    size_t nt = (size_t)(g->num_tensors > 0 ? g->num_tensors : 1);
    void** ptrs = (void**)(void*)state;
    double* runtime = (double*)(void*)(state + align_up(nt * sizeof(void*)));
    hipdnnPluginStatus_t st = resolve(p, workspace, buffers, num_buffers, ptrs, runtime);
    /* The kernels' scratch: the tail of the workspace, sized at plan time. */
    ref_region scratch = {NULL, 0};
    if (p->scratch_doubles > 0) {
        scratch.data = (double*)(void*)((uint8_t*)workspace + p->scratch_offset);
        scratch.doubles = p->scratch_doubles + 8;
    }
    int32_t next_run = 0; /* runs are in node order */
    for (int32_t i = 0; st == HIPDNN_PLUGIN_STATUS_SUCCESS && i < g->num_nodes;) {
        if (next_run < p->num_runs && p->runs[next_run].first == i) {
            const ref_fused* r = &p->runs[next_run++];
            ref_view ins[REF_MAP_MAX_INPUTS], y;
            for (int k = 0; k < r->nin; ++k) {
                if (r->index_axis[k] >= 0) index_view_of(p, r->inputs[k], r->index_axis[k], &ins[k]);
                else view_of(g, ptrs, r->inputs[k], &ins[k]);
            }
            view_of(g, ptrs, hipdnnSdkPointwiseOutput(&g->nodes[i + r->count - 1]), &y);
            st = ref_fused_run(&g->nodes[i], r, ins, &y, &scratch);
            i += r->count;
        } else {
            st = run_node(p, &g->nodes[i], ptrs, &scratch);
            ++i;
        }
    }
    return st;
}
