/* fuse_attention.c — attention as exporters write it, found in a fused node's model and
 * lowered as one hipdnn sdpa operation instead of its five nodes:
 *
 *   S = MatMul(Q, Kt);  S = S * c  (Mul by, or Div by, a one-element constant; optional);
 *   S = S + mask (optional);  P = Softmax(S) over the last axis;  Y = MatMul(P, V)
 *
 * with Q, Kt, V of rank 3 or 4 (rank 3 read as [1, B*H, S, D]).  Kt is read as K through
 * strides (its last two dims swapped), and a Transpose that makes Q, Kt or V for the
 * pattern alone is read through strides too, never copied.  Each intermediate (S, the
 * scaled and masked S, P, and an absorbed Transpose's output) must be read by the next
 * node of the pattern only and not be an output of the fused node: otherwise the nodes
 * are lowered one by one, as they are when the shapes at run time do not fit one sdpa
 * (batch dims that broadcast, a mask that does not broadcast per dim, an empty tensor). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lowering.h"

enum { P_MM1, P_SCALE, P_ADD, P_SOFTMAX, P_MM2, P_TQ, P_TK, P_TV, P_NODES };

typedef struct {
    int node[P_NODES]; /* node indexes, -1 where the pattern has none */
    int q, kt, v, mask;
    float scale;
} pattern;

static bool is_op(const ep_node* n, const char* op) {
    return !strcmp(n->op, op) && (!n->domain[0] || !strcmp(n->domain, "ai.onnx"));
}

/* The node of m that makes value v, -1 for none (m may be a subset of the model the
 * values' `producer` indexes count in: engine_check.c). */
static int producer_in(const ep_model* m, int v) {
    for (int i = 0; v >= 0 && i < m->n_nodes; ++i)
        for (int k = 0; k < m->nodes[i].n_out && k < EP_MAX_IO; ++k)
            if (m->nodes[i].out[k] == v) return i;
    return -1;
}

/* Whether value v is read once, by a node of m, and leaves neither m nor the graph. */
static bool internal(const ep_model* m, int v) {
    if (v < 0 || m->values[v].n_consumers != 1 || m->values[v].is_graph_output) return false;
    for (int k = 0; k < m->n_outputs; ++k)
        if (m->outputs[k] == v) return false;
    int reads = 0;
    for (int i = 0; i < m->n_nodes; ++i)
        for (int k = 0; k < m->nodes[i].n_in; ++k) reads += ep_node_in(&m->nodes[i], k) == v;
    return reads == 1;
}

/* The node making internal value v when it is op `op`, else -1. */
static int made_by(const ep_model* m, int v, const char* op) {
    int p = internal(m, v) ? producer_in(m, v) : -1;
    return p >= 0 && is_op(&m->nodes[p], op) && m->nodes[p].n_out >= 1 && m->nodes[p].out[0] == v ? p : -1;
}

/* A Transpose making operand v for the pattern alone, of the same rank as its input. */
static int absorbed_transpose(const ep_model* m, int v) {
    int t = made_by(m, v, "Transpose");
    return t >= 0 && m->nodes[t].in[0] >= 0 && m->values[m->nodes[t].in[0]].rank == m->values[v].rank ? t : -1;
}

/* S (Softmax's input) back to the first MatMul: the optional Add of a mask, the optional
 * scale.  False when it is not the pattern. */
static bool scores_of(const ep_model* m, int s, pattern* p) {
    int a = made_by(m, s, "Add");
    if (a >= 0) {
        const ep_node* n = &m->nodes[a];
        int side = -1;
        for (int k = 0; k < 2 && side < 0; ++k)
            if (made_by(m, n->in[k], "MatMul") >= 0 || made_by(m, n->in[k], "Mul") >= 0 ||
                made_by(m, n->in[k], "Div") >= 0)
                side = k;
        if (side < 0 || n->in[1 - side] < 0) return false;
        p->node[P_ADD] = a;
        p->mask = n->in[1 - side];
        s = n->in[side];
    }
    int c = made_by(m, s, "Mul") >= 0 ? made_by(m, s, "Mul") : made_by(m, s, "Div");
    if (c >= 0) {
        const ep_node* n = &m->nodes[c];
        bool div = is_op(n, "Div");
        int side = -1; /* the operand that is S */
        for (int k = 0; k < (div ? 1 : 2) && side < 0; ++k)
            if (n->in[1 - k] >= 0 && m->values[n->in[1 - k]].has_fval) side = k;
        if (side < 0) return false;
        float f = m->values[n->in[1 - side]].fval;
        if (f == 0.0f || f != f) return false;
        p->node[P_SCALE] = c;
        p->scale = div ? 1.0f / f : f;
        s = n->in[side];
    }
    p->node[P_MM1] = made_by(m, s, "MatMul");
    if (p->node[P_MM1] < 0) return false;
    p->q = m->nodes[p->node[P_MM1]].in[0];
    p->kt = m->nodes[p->node[P_MM1]].in[1];
    return true;
}

/* Whether MatMul node i ends the pattern; its parts into p. */
static bool match(const ep_model* m, int i, pattern* p) {
    const ep_node* mm2 = &m->nodes[i];
    for (int k = 0; k < P_NODES; ++k) p->node[k] = -1;
    p->mask = -1;
    p->scale = 1.0f;
    if (!is_op(mm2, "MatMul") || mm2->n_in != 2) return false;
    int sm = made_by(m, mm2->in[0], "Softmax");
    if (sm < 0) return false;
    int r = m->values[mm2->in[0]].rank;
    bool red[EP_MAX_RANK];
    char why[160];
    if ((r != 3 && r != 4) || !ep_softmax_axes(&m->nodes[sm], r, red, why, sizeof(why)) ||
        !red[r - 1] || red[r - 2])
        return false;
    p->node[P_SOFTMAX] = sm;
    p->node[P_MM2] = i;
    p->v = mm2->in[1];
    if (!scores_of(m, m->nodes[sm].in[0], p)) return false;
    const int ops[3] = {p->q, p->kt, p->v};
    for (int k = 0; k < 3; ++k)
        if (ops[k] < 0 || m->values[ops[k]].rank != r) return false;
    if (p->mask >= 0 && (m->values[p->mask].rank < 0 || m->values[p->mask].rank > r)) return false;
    p->node[P_TQ] = absorbed_transpose(m, p->q);
    p->node[P_TK] = absorbed_transpose(m, p->kt);
    p->node[P_TV] = absorbed_transpose(m, p->v);
    return true;
}

bool lw_find_attention(lw* w) {
    const ep_model* m = w->m;
    w->role = calloc((size_t)(m->n_nodes ? m->n_nodes : 1), sizeof(int));
    w->pats = malloc((size_t)(m->n_nodes ? m->n_nodes : 1) * sizeof(pattern));
    if (!w->role || !w->pats) return false;
    pattern* pats = w->pats;
    for (int i = 0; i < m->n_nodes; ++i) {
        pattern p;
        if (!match(m, i, &p)) continue;
        bool taken = false; /* a node already in another pattern */
        for (int k = 0; k < P_NODES; ++k) taken = taken || (p.node[k] >= 0 && w->role[p.node[k]]);
        if (taken) continue;
        pats[w->n_pats] = p;
        for (int k = 0; k < P_NODES; ++k)
            if (p.node[k] >= 0) w->role[p.node[k]] = 1;
        w->role[i] = 2 + w->n_pats++;
    }
    return true;
}

/* An operand as [B, H, S, X] dims and strides: through its absorbed Transpose t (if any),
 * rank 3 with a leading 1, the last two swapped for Kt.  *src: the value whose memory it
 * reads. */
static void operand_layout(lw* w, int v, int t, bool swap, int* src, ep_shape* d, int64_t* st) {
    int x = t >= 0 ? w->m->nodes[t].in[0] : v;
    const ep_shape* xs = &w->vals[x].onnx;
    int r = xs->rank, perm[EP_MAX_RANK];
    const ep_attr* pa = t >= 0 ? ep_attr_get(&w->m->nodes[t], "perm") : NULL;
    for (int i = 0; i < r; ++i)
        perm[i] = t < 0 ? i : pa && pa->n_ints == (size_t)r ? (int)pa->ints[i] : r - 1 - i;
    int64_t xst[EP_MAX_RANK], acc = 1;
    for (int i = r - 1; i >= 0; --i) xst[i] = acc, acc *= xs->dims[i];
    int off = 4 - r;
    d->rank = 4;
    d->dims[0] = 1;
    st[0] = acc;
    for (int i = 0; i < r; ++i) {
        d->dims[off + i] = xs->dims[perm[i]];
        st[off + i] = xst[perm[i]];
    }
    if (swap) {
        int64_t a = d->dims[2], b = st[2];
        d->dims[2] = d->dims[3], st[2] = st[3];
        d->dims[3] = a, st[3] = b;
    }
    *src = x;
}

static hipdnnBackendDescriptor_t operand(lw* w, int v, int t, bool swap, const char* what) {
    int src;
    ep_shape d;
    int64_t st[4];
    operand_layout(w, v, t, swap, &src, &d, st);
    if (t < 0 && !swap && w->vals[v].onnx.rank == 4) return lw_get_onnx(w, v);
    return lw_strided(w, src, &d, st, what);
}

/* Whether the shapes at run time fit one sdpa: q [B, H, Sq, D], k [B, H, Skv, D],
 * v [B, H, Skv, Dv], the mask broadcasting per dim, no tensor empty. */
static bool fits(lw* w, const pattern* p) {
    int src;
    ep_shape q, k, v;
    int64_t st[4];
    operand_layout(w, p->q, p->node[P_TQ], false, &src, &q, st);
    operand_layout(w, p->kt, p->node[P_TK], true, &src, &k, st);
    operand_layout(w, p->v, p->node[P_TV], false, &src, &v, st);
    if (lw_no_elements(&q) || lw_no_elements(&k) || lw_no_elements(&v)) return false;
    for (int i = 0; i < 2; ++i)
        if (k.dims[i] != q.dims[i] || v.dims[i] != q.dims[i]) return false;
    if (k.dims[3] != q.dims[3] || v.dims[2] != k.dims[2]) return false;
    if (p->mask < 0) return true;
    const ep_shape* ms = &w->vals[p->mask].onnx;
    if (ms->rank > w->vals[p->q].onnx.rank || lw_no_elements(ms)) return false;
    ep_shape a = lw_aligned(ms, 4);
    const int64_t full[4] = {q.dims[0], q.dims[1], q.dims[2], k.dims[2]};
    for (int i = 0; i < 4; ++i)
        if (a.dims[i] != 1 && a.dims[i] != full[i]) return false;
    return true;
}

bool lw_emit_attention_pattern(lw* w, int index, lw_node_fn* lower_one) {
    const pattern* p = &((const pattern*)w->pats)[index];
    const ep_model* m = w->m;
    if (!fits(w, p)) { /* each node as written, in the model's order */
        const char* label = w->label;
        for (int i = 0; i < m->n_nodes && !w->failed; ++i)
            for (int k = 0; k < P_NODES; ++k)
                if (p->node[k] == i) {
                    char nl[200];
                    w->label = ep_node_label(&m->nodes[i], nl, sizeof(nl));
                    lower_one(w, &m->nodes[i]);
                    w->label = label;
                }
        return !w->failed;
    }
    hipdnnBackendDescriptor_t q = operand(w, p->q, p->node[P_TQ], false, "q"),
                              k = operand(w, p->kt, p->node[P_TK], true, "k"),
                              v = operand(w, p->v, p->node[P_TV], false, "v"), bias = NULL;
    if (p->mask >= 0) {
        ep_shape a = lw_aligned(&w->vals[p->mask].onnx, 4);
        bias = lw_get(w, p->mask, &a);
    }
    int y = m->nodes[p->node[P_MM2]].out[0];
    const ep_shape* ys = &w->vals[y].onnx;
    ep_shape os = lw_aligned(ys, 4);
    return q && k && v && (p->mask < 0 || bias) &&
           lw_sdpa(w, q, k, v, bias, p->scale, false, lw_sdpa_out(w, y, ys->rank == 4 ? ys : &os));
}
