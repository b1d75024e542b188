/* capability.c — which ONNX nodes hipdnn-ep runs, and how they are grouped into fused
 * nodes.  A node is claimed when its op and domain have a row in op_table.c and its
 * attributes and tensors are ones lower.c can express in hipdnn (float32 or float16
 * tensors, ranks known: the row's ep_check_* function says); everything else stays with
 * ORT with a reason.  Claimed nodes connected by values are fused in topological order: a
 * node joins (and so merges) the groups of its claimed producers, unless the set would
 * feed itself through a node outside it (the fused graph would be cyclic); then it joins
 * one it can, or starts its own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipdnn_ep.h"

#define WHY(...) (snprintf(why, why_len, __VA_ARGS__), false)

static bool onnx_domain(const ep_node* n) {
    return !n->domain[0] || !strcmp(n->domain, "ai.onnx");
}

/* Float32 or float16 (kept in memory as half, computed in float) with a known rank in
 * 1..8, or a constant scalar (a rank-0 initializer: model.c's rank 0 is also an unknown
 * rank, but an initializer's shape is always known), else why not. */
bool ep_float_tensor(const ep_model* m, int v, const char* port, char* why, size_t why_len) {
    if (v < 0) return WHY("%s is absent", port);
    const ep_value* t = &m->values[v];
    if (t->elem_type != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT &&
        t->elem_type != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16)
        return WHY("%s '%s' has element type %d; hipdnn-ep runs float32 and float16 only "
                   "(types 1 and 10)", port, t->name, (int)t->elem_type);
    if (t->rank < 1 && !(t->rank == 0 && t->is_const))
        return WHY("%s '%s' has %s", port, t->name,
                                t->rank == 0 ? "rank 0 (a scalar)" : "no known rank");
    return true;
}

static int rank_of(const ep_model* m, int v) { return v >= 0 ? m->values[v].rank : -1; }

/* Outputs other than the first must be absent (optional statistics hipdnn-ep does not
 * produce). */
static bool only_first_output(const ep_model* m, const ep_node* n, char* why, size_t why_len) {
    for (int k = 1; k < n->n_out && k < EP_MAX_IO; ++k)
        if (n->out[k] >= 0)
            return WHY("optional output %d '%s' is used; only Y is produced", k,
                       m->values[n->out[k]].name);
    return true;
}

static bool check_inputs(const ep_model* m, const ep_node* n, int first, int count, char* why,
                         size_t why_len) {
    static const char* names[] = {"input 0", "input 1", "input 2", "input 3", "input 4"};
    for (int k = first; k < first + count; ++k)
        if (!ep_float_tensor(m, n->in[k], names[k], why, why_len)) return false;
    return true;
}

#define ATTR_MAX EP_ATTR_MAX

/* Conv and ConvTranspose: X and W of rank 3 to 5 (1D, 2D, 3D), the list attributes one
 * value per spatial dim (pads two), each within 2^40. */
bool ep_check_conv(const ep_model* m, const ep_node* n, char* why, size_t why_len) {
    if (n->n_in < 2 || n->n_in > 3) return WHY("%d inputs", n->n_in);
    if (!check_inputs(m, n, 0, 2, why, why_len)) return false;
    if (n->n_in == 3 && n->in[2] >= 0 && !ep_float_tensor(m, n->in[2], "bias", why, why_len))
        return false;
    int r = rank_of(m, n->in[0]);
    if (r < 3 || r > 5 || rank_of(m, n->in[1]) != r)
        return WHY("X has rank %d and W rank %d; hipdnn-ep runs 1D, 2D and 3D convolutions "
                   "(X and W both of rank 3, 4 or 5)", r, rank_of(m, n->in[1]));
    int sp = r - 2;
    const char* pad = ep_attr_string(n, "auto_pad", "NOTSET");
    if (strcmp(pad, "NOTSET") && strcmp(pad, "VALID") && strcmp(pad, "SAME_UPPER") &&
        strcmp(pad, "SAME_LOWER"))
        return WHY("auto_pad '%s' is not an ONNX value", pad);
    static const char* lists[] = {"strides", "dilations", "kernel_shape"};
    for (int i = 0; i < 3; ++i) {
        const ep_attr* a = ep_attr_get(n, lists[i]);
        if (a && (a->type != ORT_OP_ATTR_INTS || a->n_ints != (size_t)sp))
            return WHY("%s has %zu values for a %dD convolution", lists[i], a->n_ints, sp);
        for (size_t k = 0; a && k < a->n_ints; ++k)
            if (a->ints[k] < 1 || a->ints[k] > ATTR_MAX)
                return WHY("%s[%zu] is %lld; hipdnn takes 1 to 2^40", lists[i], k,
                           (long long)a->ints[k]);
    }
    const ep_attr* ks = ep_attr_get(n, "kernel_shape");
    const ep_value* wv = &m->values[n->in[1]];
    for (int k = 0; ks && k < sp; ++k)
        if (wv->dims[2 + k] >= 0 && wv->dims[2 + k] != ks->ints[k])
            return WHY("kernel_shape[%d] is %lld but W '%s' has %lld there", k,
                       (long long)ks->ints[k], wv->name, (long long)wv->dims[2 + k]);
    const ep_attr* pads = ep_attr_get(n, "pads");
    if (pads && (pads->type != ORT_OP_ATTR_INTS || pads->n_ints != (size_t)(2 * sp)))
        return WHY("pads has %zu values for a %dD convolution", pads->n_ints, sp);
    for (size_t k = 0; pads && k < pads->n_ints; ++k)
        if (pads->ints[k] < 0 || pads->ints[k] > ATTR_MAX)
            return WHY("pads[%zu] is %lld; hipdnn takes 0 to 2^40", k, (long long)pads->ints[k]);
    int64_t group = ep_attr_int(n, "group", 1);
    if (group < 1 || group > ATTR_MAX)
        return WHY("group is %lld; hipdnn takes 1 to 2^40", (long long)group);
    return true;
}

/* ConvTranspose runs as conv_dgrad: Y is the data gradient of a convolution of Y's shape
 * with X as its output gradient.  That convolution must give back X's dims, so
 * output_padding stays below the stride; output_shape is taken where it fixes the pads
 * as ONNX defines them (total padding even: ONNX and ORT split an odd total differently),
 * and the SAME modes are left to ORT. */
bool ep_check_conv_transpose(const ep_model* m, const ep_node* n, char* why, size_t why_len) {
    if (!ep_check_conv(m, n, why, why_len)) return false;
    int sp = rank_of(m, n->in[0]) - 2;
    const char* pad = ep_attr_string(n, "auto_pad", "NOTSET");
    if (!strcmp(pad, "SAME_UPPER") || !strcmp(pad, "SAME_LOWER"))
        return WHY("auto_pad %s on ConvTranspose is left to ORT (ONNX and ORT place the odd "
                   "padding differently)", pad);
    const ep_attr* op = ep_attr_get(n, "output_padding");
    if (op && (op->type != ORT_OP_ATTR_INTS || op->n_ints != (size_t)sp))
        return WHY("output_padding has %zu values for a %dD convolution", op->n_ints, sp);
    for (int k = 0; op && k < sp; ++k) {
        const ep_attr* st = ep_attr_get(n, "strides");
        int64_t s = st ? st->ints[k] : 1;
        if (op->ints[k] < 0 || op->ints[k] >= s)
            return WHY("output_padding[%d] is %lld with stride %lld; hipdnn-ep needs 0 <= "
                       "output_padding < stride", k, (long long)op->ints[k], (long long)s);
    }
    const ep_attr* os = ep_attr_get(n, "output_shape");
    if (os) {
        if (os->type != ORT_OP_ATTR_INTS || os->n_ints != (size_t)sp)
            return WHY("output_shape has %zu values; hipdnn-ep takes one per spatial dim (%d)",
                       os->n_ints, sp);
        const ep_value* xv = &m->values[n->in[0]];
        const ep_value* wv = &m->values[n->in[1]];
        for (int k = 0; k < sp; ++k) {
            if (os->ints[k] < 1 || os->ints[k] > ATTR_MAX)
                return WHY("output_shape[%d] is %lld; hipdnn takes 1 to 2^40", k,
                           (long long)os->ints[k]);
            if (xv->dims[2 + k] < 0 || wv->dims[2 + k] < 0)
                return WHY("output_shape with spatial dim %d of X or W not known ahead", k);
            int64_t total;
            if (!ep_conv_transpose_pads(n, k, sp, xv->dims[2 + k], wv->dims[2 + k], NULL, NULL,
                                        &total))
                return WHY("output_shape[%d]=%lld is larger than ConvTranspose gives with no "
                           "padding", k, (long long)os->ints[k]);
            if (total % 2)
                return WHY("output_shape[%d]=%lld leaves an odd total padding (%lld), which "
                           "ONNX and ORT split differently", k, (long long)os->ints[k],
                           (long long)total);
        }
    }
    return true;
}

bool ep_check_gemm(const ep_model* m, const ep_node* n, char* why, size_t why_len) {
    if (n->n_in < 2 || n->n_in > 3) return WHY("%d inputs", n->n_in);
    if (!check_inputs(m, n, 0, 2, why, why_len)) return false;
    /* C may be a scalar (rank 0, which model.c also gives for an unknown rank): the shape
     * rule checks that what arrives broadcasts to [M, N] */
    const ep_value* c = n->n_in == 3 && n->in[2] >= 0 ? &m->values[n->in[2]] : NULL;
    if (c && c->elem_type != m->values[n->in[0]].elem_type)
        return WHY("C '%s' has element type %d, not A's", c->name, (int)c->elem_type);
    if (c && c->rank > 2) return WHY("C '%s' has rank %d", c->name, c->rank);
    if (rank_of(m, n->in[0]) != 2 || rank_of(m, n->in[1]) != 2) return WHY("A and B need rank 2");
    /* A transposed operand is read through strides, which only memory given to the fused
     * node has (a value made inside the hipdnn graph is virtual, laid out by the engine). */
    static const char* attr[] = {"transA", "transB"};
    for (int k = 0; k < 2; ++k)
        if (ep_attr_int(n, attr[k], 0) && m->values[n->in[k]].producer >= 0)
            return WHY("%s=1 on '%s', which a node computes; hipdnn-ep transposes only graph "
                       "inputs and initializers", attr[k], m->values[n->in[k]].name);
    return true;
}

bool ep_check_reduce(const ep_model* m, const ep_node* n, char* why, size_t why_len) {
    if (!check_inputs(m, n, 0, 1, why, why_len)) return false;
    int64_t keep = ep_attr_int(n, "keepdims", 1); /* ONNX and ORT keep only for 1 */
    if (keep != 0 && keep != 1) return WHY("keepdims is %lld; ONNX takes 0 or 1", (long long)keep);
    /* ONNX's shape inference takes any nonzero value for 1 (Y is X, unreduced, when there
     * are no axes) and ORT's kernel only 1 (it reduces every axis): the model's shapes then
     * say one thing and the run does the other */
    int64_t noop = ep_attr_int(n, "noop_with_empty_axes", 0);
    if (noop != 0 && noop != 1)
        return WHY("noop_with_empty_axes is %lld; ONNX takes 0 or 1", (long long)noop);
    bool red[EP_MAX_RANK];
    return ep_reduce_axes(m, n, rank_of(m, n->in[0]), red, why, why_len);
}

/* Softmax, LogSoftmax: any axis (before opset 13, X flattened to 2-D there: the axes from
 * it on) */
bool ep_check_softmax(const ep_model* m, const ep_node* n, char* why, size_t why_len) {
    if (!check_inputs(m, n, 0, 1, why, why_len)) return false;
    int r = rank_of(m, n->in[0]);
    int64_t axis = ep_attr_int(n, "axis", n->since_version < 13 ? 1 : -1);
    if (axis < -r || axis >= r) return WHY("axis %lld of rank %d", (long long)axis, r);
    return true;
}

/* Parameter p is read in X's dims from axis on, without broadcasting (ORT broadcasts
 * LayerNormalization's): each dim known and X's, never a 1 that may stand for more. */
static bool param_dims(const ep_model* m, int x, int axis, int p, char* why, size_t why_len) {
    const ep_value *xv = &m->values[x], *pv = &m->values[p];
    for (int i = 0; i < pv->rank; ++i) {
        int64_t want = xv->dims[axis + i], have = pv->dims[i];
        if (have < 0 || (want >= 0 ? have != want : have == 1))
            return WHY("'%s' has dim %lld where X '%s' has %lld; hipdnn-ep reads it in X's "
                       "dims, unbroadcast", pv->name, (long long)have, xv->name, (long long)want);
    }
    return true;
}

bool ep_check_batchnorm(const ep_model* m, const ep_node* n, char* why, size_t why_len) {
    if (n->n_in != 5) return WHY("%d inputs", n->n_in);
    if (!check_inputs(m, n, 0, 5, why, why_len)) return false;
    if (ep_attr_int(n, "training_mode", 0)) {
        /* opset 14+: Y, running_mean and running_var from the batch's statistics */
        if (n->n_out != 3 || n->out[1] < 0 || n->out[2] < 0)
            return WHY("training mode without both running_mean and running_var outputs");
        if (!ep_float_tensor(m, n->out[1], "running_mean", why, why_len) ||
            !ep_float_tensor(m, n->out[2], "running_var", why, why_len))
            return false;
    } else if (!only_first_output(m, n, why, why_len)) {
        return false;
    }
    if (rank_of(m, n->in[0]) < 2) return WHY("X needs rank >= 2");
    for (int k = 1; k < 5; ++k)
        if (rank_of(m, n->in[k]) != 1) return WHY("input %d is not 1-D", k);
        else if (!param_dims(m, n->in[0], 1, n->in[k], why, why_len)) return false;
    return true;
}

/* Y, with Mean and InvStdDev when used (float32: stash_type 1, ONNX's default); any axis
 * (axis 0 runs as axis 1 of X viewed as [1, ...]). */
bool ep_check_layernorm(const ep_model* m, const ep_node* n, char* why, size_t why_len) {
    if (n->n_in < 2 || n->n_in > 3) return WHY("%d inputs", n->n_in);
    if (!check_inputs(m, n, 0, 2, why, why_len)) return false;
    if (n->n_in == 3 && n->in[2] >= 0 && !ep_float_tensor(m, n->in[2], "B", why, why_len))
        return false;
    static const char* stats[] = {"Mean", "InvStdDev"};
    for (int k = 1; k < n->n_out && k < 3; ++k)
        if (n->out[k] >= 0 && m->values[n->out[k]].elem_type != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT)
            return WHY("output %s is not float32 (stash_type %lld)", stats[k - 1],
                       (long long)ep_attr_int(n, "stash_type", 1));
    if (n->n_out > 3) return WHY("%d outputs", n->n_out);
    int r = rank_of(m, n->in[0]);
    int64_t axis = ep_attr_int(n, "axis", -1);
    if (axis < 0) axis += r;
    if (axis < 0 || axis >= r) return WHY("axis %lld of rank %d", (long long)axis, r);
    if (rank_of(m, n->in[1]) != r - axis) return WHY("Scale's rank is not %lld (X's dims from "
                                                     "axis on)", (long long)(r - axis));
    if (n->n_in == 3 && n->in[2] >= 0 && rank_of(m, n->in[2]) != r - axis)
        return WHY("B's rank is not Scale's");
    bool b = n->n_in == 3 && n->in[2] >= 0;
    return param_dims(m, n->in[0], (int)axis, n->in[1], why, why_len) &&
           (!b || param_dims(m, n->in[0], (int)axis, n->in[2], why, why_len));
}

bool ep_check_matmul(const ep_model* m, const ep_node* n, char* why, size_t why_len) {
    if (!check_inputs(m, n, 0, 2, why, why_len)) return false;
    if (rank_of(m, n->in[0]) < 2 || rank_of(m, n->in[1]) < 2)
        return WHY("1-D operands are not claimed in this slice (A rank %d, B rank %d)",
                   rank_of(m, n->in[0]), rank_of(m, n->in[1]));
    return true;
}

/* Add, Sub, Mul, Div */
bool ep_check_binary(const ep_model* m, const ep_node* n, char* why, size_t why_len) {
    if (n->n_in != 2) return WHY("%d inputs", n->n_in);
    return check_inputs(m, n, 0, 2, why, why_len);
}

/* One float input: Relu, Sigmoid, Tanh, Flatten */
bool ep_check_unary(const ep_model* m, const ep_node* n, char* why, size_t why_len) {
    return check_inputs(m, n, 0, 1, why, why_len);
}

/* ONNX's Gelu (opset 20, the table says) and com.microsoft's */
bool ep_check_gelu(const ep_model* m, const ep_node* n, char* why, size_t why_len) {
    const char* approx = ep_attr_string(n, "approximate", "none");
    if (strcmp(approx, "none") && strcmp(approx, "tanh")) return WHY("approximate='%s'", approx);
    return check_inputs(m, n, 0, 1, why, why_len);
}

bool ep_check_reshape(const ep_model* m, const ep_node* n, char* why, size_t why_len) {
    if (n->n_in != 2) return WHY("%d inputs", n->n_in);
    if (!check_inputs(m, n, 0, 1, why, why_len)) return false;
    const ep_value* shape = n->in[1] >= 0 ? &m->values[n->in[1]] : NULL;
    if (!shape || !shape->is_const || !shape->ivals)
        return WHY("shape is not a constant int64 initializer of at most 64 values");
    if (shape->n_ivals < 1 || shape->n_ivals > EP_MAX_RANK)
        return WHY("shape has %lld values", (long long)shape->n_ivals);
    return true;
}

/* What every node needs, then its op's row (op_table.c) and that row's check. */
bool ep_node_supported(const ep_model* m, const ep_node* n, char* why, size_t why_len) {
    const ep_op_def* d = ep_op_find(n);
    if (!d && !onnx_domain(n)) return WHY("domain '%s' is not claimed", n->domain);
    if (n->n_in > EP_MAX_IO || n->n_out > EP_MAX_IO) return WHY("too many inputs or outputs");
    if (n->n_out < 1 || n->out[0] < 0) return WHY("no output");
    if (!ep_float_tensor(m, n->out[0], "output 0", why, why_len)) return false;
    if (!d) return WHY("op %s is not in hipdnn-ep's set", n->op);
    if (n->since_version < d->since) return WHY("%s before opset %d", n->op, d->since);
    return d->check(m, n, why, why_len);
}

static bool in_groups(int g, const int* gs, int n) {
    for (int i = 0; i < n; ++i)
        if (gs[i] == g) return true;
    return false;
}

/* ---- grouping --------------------------------------------------------------------------- */

typedef struct {
    const ep_model* m;
    int* group;     /* per node, -1: not claimed */
    int* succ;      /* edges producer -> consumer, CSR */
    int* succ_at;   /* succ_at[i] .. succ_at[i + 1] */
    int* queue;
    unsigned char* seen;
} grouping;

/* True when the nodes of groups `gs` plus node n would form a set that feeds itself
 * through a node outside it: a path leaves the set and comes back. */
static bool makes_cycle(grouping* g, const int* gs, int ngs, int n) {
    const ep_model* m = g->m;
    int head = 0, tail = 0;
    memset(g->seen, 0, (size_t)m->n_nodes);
#define IN_SET(i) ((i) == n || in_groups(g->group[i], gs, ngs))
    for (int i = 0; i < m->n_nodes; ++i) {
        if (!IN_SET(i)) continue;
        for (int e = g->succ_at[i]; e < g->succ_at[i + 1]; ++e) {
            int c = g->succ[e];
            if (!IN_SET(c) && !g->seen[c]) {
                g->seen[c] = 1;
                g->queue[tail++] = c;
            }
        }
    }
    while (head < tail) {
        int q = g->queue[head++];
        for (int e = g->succ_at[q]; e < g->succ_at[q + 1]; ++e) {
            int c = g->succ[e];
            if (IN_SET(c)) return true;
            if (!g->seen[c]) {
                g->seen[c] = 1;
                g->queue[tail++] = c;
            }
        }
    }
#undef IN_SET
    return false;
}

static bool build_edges(grouping* g) {
    const ep_model* m = g->m;
    int n = m->n_nodes, edges = 0;
    g->succ_at = calloc((size_t)n + 1, sizeof(int));
    if (!g->succ_at) return false;
    for (int i = 0; i < n; ++i)
        for (int k = 0; k < m->nodes[i].n_in; ++k) {
            int v = ep_node_in(&m->nodes[i], k);
            if (v >= 0 && m->values[v].producer >= 0) ++g->succ_at[m->values[v].producer + 1], ++edges;
        }
    for (int i = 0; i < n; ++i) g->succ_at[i + 1] += g->succ_at[i];
    g->succ = calloc((size_t)(edges ? edges : 1), sizeof(int));
    int* fill = calloc((size_t)(n ? n : 1), sizeof(int));
    if (!g->succ || !fill) {
        free(fill);
        return false;
    }
    for (int i = 0; i < n; ++i)
        for (int k = 0; k < m->nodes[i].n_in; ++k) {
            int v = ep_node_in(&m->nodes[i], k);
            int p = v >= 0 ? m->values[v].producer : -1;
            if (p >= 0) g->succ[g->succ_at[p] + fill[p]++] = i;
        }
    free(fill);
    return true;
}

int ep_group_nodes(const ep_model* m, const bool* supported, int* group) {
    int n = m->n_nodes, next = 0;
    for (int i = 0; i < n; ++i) group[i] = -1;
    grouping g = {m, group, NULL, NULL, NULL, NULL};
    g.queue = calloc((size_t)(n ? n : 1), sizeof(int));
    g.seen = calloc((size_t)(n ? n : 1), 1);
    int* cand = calloc((size_t)(EP_MAX_IO), sizeof(int));
    if (!g.queue || !g.seen || !cand || !build_edges(&g)) {
        free(g.queue), free(g.seen), free(cand), free(g.succ), free(g.succ_at);
        return 0;
    }
    for (int i = 0; i < n; ++i) {
        if (!supported[i]) continue;
        const ep_node* nd = &m->nodes[i];
        /* the groups of its claimed producers */
        int nc = 0;
        for (int k = 0; k < nd->n_in && k < EP_MAX_IO; ++k) {
            int v = nd->in[k];
            int p = v >= 0 ? m->values[v].producer : -1;
            if (p >= 0 && group[p] >= 0 && !in_groups(group[p], cand, nc)) cand[nc++] = group[p];
        }
        /* all of them merged through this node, else the first one it can join alone,
         * else a group of its own */
        int target = -1;
        if (nc > 0 && !makes_cycle(&g, cand, nc, i)) {
            target = cand[0];
            for (int j = 0; j < i; ++j)
                if (in_groups(group[j], cand, nc)) group[j] = target;
        }
        for (int c = 0; target < 0 && nc > 1 && c < nc; ++c)
            if (!makes_cycle(&g, &cand[c], 1, i)) target = cand[c];
        group[i] = target >= 0 ? target : next++;
    }
    /* numbered 0.. in order of first appearance */
    int* renum = malloc((size_t)(next ? next : 1) * sizeof(int));
    int groups = 0;
    bool numbered = renum != NULL;
    if (numbered) {
        for (int j = 0; j < next; ++j) renum[j] = -1;
        for (int i = 0; i < n; ++i)
            if (group[i] >= 0) {
                if (renum[group[i]] < 0) renum[group[i]] = groups++;
                group[i] = renum[group[i]];
            }
    }
    free(renum), free(g.queue), free(g.seen), free(cand), free(g.succ), free(g.succ_at);
    return numbered ? groups : 0;
}
