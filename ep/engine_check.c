/* engine_check.c — on the GPU device, GetCapability claims a node, or fuses a group, only
 * when an engine for device memory takes that graph: rather than a list of what the GPU
 * engine runs today, hipdnn is asked (ep_lower_check: the same lowering a fused node gets
 * at run time, then the heuristics, hipdnn's check_support).  The candidate graph's inputs
 * and outputs are the ones ORT would give the fused node: values its nodes read but do
 * not make, and values they make that a node outside reads or the graph returns.  Dims
 * the model leaves symbolic are taken as 1, the size every shape rule accepts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipdnn_ep.h"

static bool add_once(int* list, int* n, int v) {
    for (int i = 0; i < *n; ++i)
        if (list[i] == v) return false;
    list[(*n)++] = v;
    return true;
}

bool ep_engine_takes(const ep_model* m, const int* members, int n_members, hipdnnHandle_t h,
                     const ep_options* opt, hipdnnMemorySpace_t space, char* why,
                     size_t why_len) {
    size_t nv = (size_t)(m->n_values ? m->n_values : 1);
    unsigned char* in_set = calloc((size_t)(m->n_nodes ? m->n_nodes : 1), 1);
    unsigned char* read_outside = calloc(nv, 1);
    int* inputs = calloc(nv, sizeof(int));
    int* outputs = calloc(nv, sizeof(int));
    ep_node* nodes = calloc((size_t)(n_members ? n_members : 1), sizeof(ep_node));
    ep_shape* shapes = calloc(nv, sizeof(ep_shape));
    bool ok = false;
    if (!in_set || !read_outside || !inputs || !outputs || !nodes || !shapes) {
        snprintf(why, why_len, "out of memory");
        goto done;
    }
    for (int i = 0; i < n_members; ++i) in_set[members[i]] = 1;
    for (int j = 0; j < m->n_nodes; ++j)
        for (int k = 0; !in_set[j] && k < m->nodes[j].n_in && k < EP_MAX_IO; ++k)
            if (m->nodes[j].in[k] >= 0) read_outside[m->nodes[j].in[k]] = 1;
    int n_in = 0, n_out = 0;
    for (int i = 0; i < n_members; ++i) {
        const ep_node* nd = &m->nodes[members[i]];
        nodes[i] = *nd; /* shallow: the model keeps owning names and attributes */
        for (int k = 0; k < nd->n_in && k < EP_MAX_IO; ++k) {
            int v = nd->in[k], p = v >= 0 ? m->values[v].producer : -1;
            if (v >= 0 && (p < 0 || !in_set[p])) add_once(inputs, &n_in, v);
        }
        for (int k = 0; k < nd->n_out && k < EP_MAX_IO; ++k) {
            int v = nd->out[k];
            if (v >= 0 && (m->values[v].is_graph_output || read_outside[v]))
                add_once(outputs, &n_out, v);
        }
    }
    for (int i = 0; i < n_in; ++i) {
        const ep_value* v = &m->values[inputs[i]];
        shapes[i].rank = v->rank > 0 ? v->rank : 1;
        for (int d = 0; d < shapes[i].rank; ++d)
            shapes[i].dims[d] = v->rank > 0 && v->dims[d] > 0 ? v->dims[d] : 1;
    }
    ep_model sub = *m;
    sub.nodes = nodes;
    sub.n_nodes = n_members;
    sub.inputs = inputs;
    sub.n_inputs = n_in;
    sub.outputs = outputs;
    sub.n_outputs = n_out;
    ok = ep_lower_check(&sub, shapes, h, opt, space, "candidate", why, why_len);
    /* a reason about the whole graph comes as "candidate: ...": the caller names it */
    if (!ok && !strncmp(why, "candidate: ", 11)) memmove(why, why + 11, strlen(why + 11) + 1);
done:
    free(in_set);
    free(read_outside);
    free(inputs);
    free(outputs);
    free(nodes);
    free(shapes);
    return ok;
}
