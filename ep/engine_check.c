/* engine_check.c — GetCapability claims a node, or fuses a group, only when an engine for
 * the device's memory takes that graph: rather than a list of what the GPU engine runs
 * today, or of the parameters the reference engine takes, hipdnn is asked (ep_lower_check: the same lowering a fused node gets
 * at run time, then the heuristics, hipdnn's check_support).  The candidate graph's inputs
 * and outputs are the ones ORT would give the fused node: values its nodes read but do
 * not make, and values they make that a node outside reads or the graph returns.  Dims
 * the model leaves symbolic (or empty) are taken as 1, the size most shape rules accept,
 * then as 64 (a kernel wider than 1 needs room).  Where both guesses break ONNX's own
 * shape rules (a Reshape to [3, 4, 0] of [A, 3, 4]), the true shapes decide at run time:
 * on the GPU the group is declined, to be safe; in host memory the reference engine runs
 * every op, so it is taken. */
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
        for (int k = 0; !in_set[j] && k < m->nodes[j].n_in; ++k)
            if (ep_node_in(&m->nodes[j], k) >= 0) read_outside[ep_node_in(&m->nodes[j], k)] = 1;
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
    ep_model sub = *m;
    sub.nodes = nodes;
    sub.n_nodes = n_members;
    sub.inputs = inputs;
    sub.n_inputs = n_in;
    sub.outputs = outputs;
    sub.n_outputs = n_out;
    static const int64_t guesses[] = {1, 64}; /* 64: room for a kernel wider than 1 */
    bool guessed = false, in_shape_rules = false;
    for (size_t g = 0; g < sizeof(guesses) / sizeof(guesses[0]); ++g) {
        for (int i = 0; i < n_in; ++i) {
            const ep_value* v = &m->values[inputs[i]];
            shapes[i].rank = v->rank > 0 ? v->rank : 1;
            guessed = guessed || v->rank <= 0;
            for (int d = 0; d < shapes[i].rank; ++d) {
                bool known = v->rank > 0 && v->dims[d] > 0;
                shapes[i].dims[d] = known ? v->dims[d] : guesses[g];
                guessed = guessed || !known;
            }
        }
        ok = ep_lower_check(&sub, shapes, h, opt, space, "candidate", why, why_len,
                            &in_shape_rules);
        if (ok || !guessed || !in_shape_rules) break;
    }
    if (!ok && guessed && in_shape_rules && space == HIPDNN_MEMORY_HOST) ok = true;
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
