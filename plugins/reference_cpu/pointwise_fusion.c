/* Fused pointwise runs: consecutive pointwise nodes whose intermediate tensors are virtual,
 * shaped like the run's last output and read by no node outside the run are evaluated in
 * one pass over blocks of the output (pointwise.c's program kernel, ref_map_blocks).
 * Each intermediate is rounded to its own data type in its block, so a run gives exactly
 * what the nodes one by one give, without writing the intermediates out or walking the
 * tensors once per node. */
#include <stdlib.h>
#include <string.h>

#include "reference_cpu.h"

static bool same_dims(const hipdnnSdkTensor* a, const hipdnnSdkTensor* b) {
    return a->ndim == b->ndim && memcmp(a->dims, b->dims, (size_t)a->ndim * sizeof(int64_t)) == 0;
}

static int arity(const hipdnnSdkNode* n) { return hipdnnSdkPointwiseArity(hipdnnSdkNodeMode(n)); }

static int64_t result_of(const hipdnnSdkNode* n) { return hipdnnSdkPointwiseOutput(n); }

/* Reads of each tensor (by index) across the graph's input ports. */
static int32_t* count_reads(const hipdnnSdkGraph* g, const hipdnnSdkUidMap* map) {
    int32_t* reads = calloc((size_t)g->num_tensors + 1, sizeof(int32_t));
    if (!reads) return NULL;
    for (int32_t i = 0; i < g->num_nodes; ++i)
        for (int p = 0; p < HIPDNN_MAX_PORTS; ++p) {
            int32_t t = g->nodes[i].inputs[p] == HIPDNN_NO_TENSOR
                            ? -1
                            : hipdnnSdkUidMapFind(map, g->nodes[i].inputs[p]);
            if (t >= 0) ++reads[t];
        }
    return reads;
}

/* The tensor a node's port names (supported graphs only: it exists). */
static const hipdnnSdkTensor* tensor(const hipdnnSdkGraph* g, const hipdnnSdkUidMap* map,
                                     int64_t uid) {
    return &g->tensors[hipdnnSdkUidMapFind(map, uid)];
}

/* Operand `uid` of member k: the result of an earlier member, or an input slot (added if
 * new); with axis >= 0, the slot of coordinates on that axis of tensor `uid` (gen_index).
 * -128 when the run has no slot left. */
static int8_t operand(const hipdnnSdkGraph* g, ref_fused* r, int k, int64_t uid, int axis) {
    for (int m = 0; m < k && axis < 0; ++m)
        if (result_of(&g->nodes[r->first + m]) == uid) return (int8_t)-(m + 1);
    for (int s = 0; s < r->nin; ++s)
        if (r->inputs[s] == uid && r->index_axis[s] == axis) return (int8_t)s;
    if (r->nin == REF_MAP_MAX_INPUTS) return -128;
    r->inputs[r->nin] = uid;
    r->index_axis[r->nin] = (int8_t)axis;
    return (int8_t)r->nin++;
}

/* Tries to append node j to run r; false (r unchanged) if it does not fit. */
static bool append(const hipdnnSdkGraph* g, const hipdnnSdkUidMap* map, ref_fused* r,
                   int32_t j) {
    const hipdnnSdkNode* n = &g->nodes[j];
    if (n->kind != HIPDNN_OP_POINTWISE || r->count == REF_FUSE_MAX) return false;
    ref_fused saved = *r;
    int k = r->count;
    int na = arity(n);
    bool index = hipdnnSdkNodeMode(n) == HIPDNN_POINTWISE_GEN_INDEX;
    for (int op = 0; op < 3; ++op) {
        int8_t s = 0;
        if (op < na && index) /* its own output's coordinates: x gives only the shape */
            s = operand(g, r, k, result_of(n), (int)n->attrs[HIPDNN_PW_AXIS].i[0]);
        else if (op < na)
            s = operand(g, r, k, hipdnnSdkPointwiseOperand(n, op), -1);
        if (s == -128) {
            *r = saved;
            return false;
        }
        r->src[k][op] = s;
    }
    r->round_to[k] = tensor(g, map, result_of(n))->data_type;
    ref_pw_params_of(n, &r->params[k]);
    r->count = k + 1;
    return true;
}

/* Whether member k's output may stay in rows: virtual, shaped like the run's output, and
 * read only by the members after it. */
static bool internal(const hipdnnSdkGraph* g, const hipdnnSdkUidMap* map, const ref_fused* r,
                     int k, int last, const int32_t* reads) {
    const hipdnnSdkTensor* t = tensor(g, map, result_of(&g->nodes[r->first + k]));
    const hipdnnSdkTensor* y = tensor(g, map, result_of(&g->nodes[r->first + last]));
    if (!t->is_virtual || !same_dims(t, y)) return false;
    int32_t inside = 0;
    for (int m = k + 1; m <= last; ++m)
        for (int op = 0; op < arity(&g->nodes[r->first + m]); ++op)
            if (hipdnnSdkPointwiseOperand(&g->nodes[r->first + m], op) == t->uid) ++inside;
    return inside == reads[t - g->tensors];
}

int ref_fuse_find(const hipdnnSdkGraph* g, ref_fused** runs, int32_t* num_runs) {
    *runs = NULL;
    *num_runs = 0;
    hipdnnSdkUidMap map;
    if (!hipdnnSdkUidMapBuild(&map, g)) return -1;
    int32_t* reads = count_reads(g, &map);
    ref_fused* out = malloc(((size_t)g->num_nodes / 2 + 1) * sizeof(ref_fused));
    if (!reads || !out) {
        hipdnnSdkUidMapFree(&map);
        free(reads);
        free(out);
        return -1;
    }
    int32_t n = 0;
    for (int32_t i = 0; i < g->num_nodes;) {
        ref_fused r;
        memset(&r, 0, sizeof(r));
        r.first = i;
        if (!append(g, &map, &r, i)) {
            ++i;
            continue;
        }
        while (i + r.count < g->num_nodes && append(g, &map, &r, i + r.count)) {
        }
        /* The longest prefix whose intermediates all stay in rows. */
        int good = 1;
        for (int last = r.count - 1; last >= 1 && good == 1; --last) {
            bool ok = true;
            for (int k = 0; k < last && ok; ++k) ok = internal(g, &map, &r, k, last, reads);
            if (ok) good = last + 1;
        }
        if (good >= 2) {
            ref_fused trimmed;
            memset(&trimmed, 0, sizeof(trimmed));
            trimmed.first = i;
            for (int k = 0; k < good; ++k) append(g, &map, &trimmed, i + k);
            out[n++] = trimmed;
            i += good;
        } else {
            ++i;
        }
    }
    free(reads);
    hipdnnSdkUidMapFree(&map);
    if (n == 0) {
        free(out);
        return 0;
    }
    *runs = out;
    *num_runs = n;
    return 0;
}

int64_t ref_fused_scratch_doubles(const ref_fused* r, int64_t elements) {
    /* per thread: a block per input and for the output, one per member but the last */
    return ref_scratch_piece(ref_map_scratch_doubles(elements, r->nin, r->count - 1));
}

hipdnnPluginStatus_t ref_fused_run(const hipdnnSdkNode* node, const ref_fused* r,
                                   const ref_view* ins, const ref_view* y,
                                   const ref_region* scratch) {
    ref_view b[REF_MAP_MAX_INPUTS];
    for (int s = 0; s < r->nin; ++s) ref_broadcast_view(&ins[s], y->ndim, y->dims, &b[s]);
    int64_t elements = ref_element_count(y->ndim, y->dims);
    ref_scratch s;
    if (!ref_scratch_open(&s, ref_fused_scratch_doubles(r, elements), scratch, node))
        return HIPDNN_PLUGIN_STATUS_ALLOC_FAILED;
    double* blocks = ref_scratch_take(&s, ref_map_scratch_doubles(elements, r->nin, r->count - 1));
    ref_map_blocks(y, r->nin, b, ref_fused_block_fn(), r, r->count - 1, blocks);
    ref_scratch_close(&s);
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}
