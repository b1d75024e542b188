/* Graphs with reductions and norms: cutting them into stages (staged.h), the workspace
 * between stages, and running the stages in order.
 *
 * Grouping, in this order: softmax patterns; each norm with the pointwise nodes after it
 * that read only its y, each other and graph inputs (its epilogue); each remaining
 * reduction; then runs of pointwise nodes, as long as one fused kernel can take them.
 * Stages run in the order of their first node, which respects every dependency: a run of
 * pointwise nodes never spans another group's first node, and a group reads only
 * tensors written before its first node.  Each stage is compiled from a copy of the graph
 * holding its nodes only, where every virtual tensor it shares with another stage is made
 * real: it lives in the workspace, packed. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "staged.h"

/* ---- the engine's entry: one fused kernel, or stages ------------------------------------- */

bool hipe_compile(const hipdnnSdkGraph* g, hipe_plan* plan, char* why, size_t len) {
    for (int32_t i = 0; g && g->nodes && i < g->num_nodes; ++i)
        if (g->nodes[i].kind != HIPDNN_OP_POINTWISE &&
            g->nodes[i].kind != HIPDNN_OP_BATCHNORM_INFERENCE)
            return hipe_staged_compile(g, plan, why, len);
    return hipe_compile_pointwise(g, plan, why, len);
}

void hipe_plan_free(hipe_plan* plan) {
    if (!plan || !plan->staged) return;
    free(plan->staged->stages);
    free(plan->staged->bufs);
    free(plan->staged->alias);
    free(plan->staged->nodes);
    free(plan->staged);
    plan->staged = NULL;
}

/* ---- the graph's structure ------------------------------------------------------------------ */

enum { G_POINTWISE = 0, G_SOFTMAX, G_NORM, G_REDUCTION, G_RESAMPLE, G_NORM_BWD, G_GEMM };

typedef struct {
    const hipdnnSdkGraph* g;
    hipdnnSdkUidMap map;
    int32_t* producer; /* per tensor: the node writing it, -1 none */
    int32_t* readers;  /* per tensor: reads by nodes */
    int32_t* group;    /* per node: its group, -1 none yet */
    int32_t* gkind;    /* per group */
    int ngroups;
    const hipdnnSdkNode* softmax[HIPE_MAX_STAGES][5]; /* per softmax group, its nodes */
    int32_t* gsoftmax; /* per group: index into softmax, -1 */
    bool* in;          /* scratch: nodes of a candidate stage */
    char* why;
    size_t len;
} parts;

static int32_t tidx(const parts* s, int64_t uid) {
    return uid == HIPDNN_NO_TENSOR ? -1 : hipdnnSdkUidMapFind(&s->map, uid);
}

static int num_inputs(const hipdnnSdkNode* n) {
    const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(n->kind);
    return info ? info->num_inputs : 0;
}

static int num_outputs(const hipdnnSdkNode* n) {
    const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(n->kind);
    return info ? info->num_outputs : 0;
}

static const char* label(const hipdnnSdkNode* n, char* buf, size_t len) {
    const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(n->kind);
    hipdnnSdkFormat(buf, len, "node '%s' (%s)", n->name, info ? info->name : "unknown op");
    return buf;
}

static bool structure(parts* s) {
    const hipdnnSdkGraph* g = s->g;
    char nl[160];
    for (int32_t t = 0; t < g->num_tensors; ++t) s->producer[t] = -1;
    for (int32_t i = 0; i < g->num_nodes; ++i) {
        const hipdnnSdkNode* n = &g->nodes[i];
        if (n->kind != HIPDNN_OP_POINTWISE && n->kind != HIPDNN_OP_BATCHNORM_INFERENCE &&
            n->kind != HIPDNN_OP_REDUCTION && n->kind != HIPDNN_OP_NORM_FORWARD &&
            n->kind != HIPDNN_OP_RESAMPLE_FWD && n->kind != HIPDNN_OP_RESAMPLE_BWD &&
            n->kind != HIPDNN_OP_NORM_BACKWARD && n->kind != HIPDNN_OP_MATMUL &&
            n->kind != HIPDNN_OP_CONV_FPROP)
            return decline(s->why, s->len, "%s: operation not supported (this engine runs "
                           "pointwise, batchnorm_inference, matmul, conv_fprop, reduction, "
                           "norm_forward, "
                           "norm_backward, genstats, resample, slice, concatenate and "
                           "reshape nodes)",
                           label(n, nl, sizeof(nl)));
        for (int p = 0; p < num_inputs(n) && p < HIPDNN_MAX_PORTS; ++p) {
            if (n->inputs[p] == HIPDNN_NO_TENSOR) continue;
            int32_t t = tidx(s, n->inputs[p]);
            if (t < 0)
                return decline(s->why, s->len, "%s: input %d names uid %lld, which is not in the "
                               "graph", label(n, nl, sizeof(nl)), p, (long long)n->inputs[p]);
            if (s->producer[t] < 0 && g->tensors[t].is_virtual)
                return decline(s->why, s->len, "%s: virtual tensor '%s' (uid %lld) is read before "
                               "any node writes it", label(n, nl, sizeof(nl)), g->tensors[t].name,
                               (long long)g->tensors[t].uid);
            s->readers[t]++;
        }
        for (int p = 0; p < num_outputs(n) && p < HIPDNN_MAX_PORTS; ++p) {
            if (n->outputs[p] == HIPDNN_NO_TENSOR) continue;
            int32_t t = tidx(s, n->outputs[p]);
            if (t < 0)
                return decline(s->why, s->len, "%s: output %d names uid %lld, which is not in the "
                               "graph", label(n, nl, sizeof(nl)), p, (long long)n->outputs[p]);
            if (s->producer[t] >= 0 || s->readers[t] > 0)
                return decline(s->why, s->len, "%s: '%s' (uid %lld) is written twice or read before "
                               "written", label(n, nl, sizeof(nl)), g->tensors[t].name,
                               (long long)g->tensors[t].uid);
            s->producer[t] = i;
        }
    }
    return true;
}

static bool reads(const hipdnnSdkNode* n, int64_t uid) {
    for (int p = 0; p < num_inputs(n) && p < HIPDNN_MAX_PORTS; ++p)
        if (n->inputs[p] == uid) return true;
    return false;
}

/* The only node reading tensor uid (which has `count` readers), after node `from`. */
static int32_t reader(const parts* s, int64_t uid, int32_t from, int nth) {
    for (int32_t i = from + 1; i < s->g->num_nodes; ++i)
        if (reads(&s->g->nodes[i], uid) && nth-- == 0) return i;
    return -1;
}

static bool is_pw(const hipdnnSdkNode* n, hipdnnPointwiseMode_t mode) {
    return n->kind == HIPDNN_OP_POINTWISE && hipdnnSdkNodeMode(n) == mode;
}

static bool is_red(const hipdnnSdkNode* n, int64_t mode) {
    return n->kind == HIPDNN_OP_REDUCTION && n->attrs[HIPDNN_RED_MODE].i[0] == mode;
}

/* A virtual tensor read by `count` nodes. */
static bool inner(const parts* s, int64_t uid, int count) {
    int32_t t = tidx(s, uid);
    return t >= 0 && s->g->tensors[t].is_virtual && s->readers[t] == count;
}

static bool same_dims(const hipdnnSdkTensor* a, const hipdnnSdkTensor* b) {
    if (a->ndim != b->ndim) return false;
    for (int i = 0; i < a->ndim; ++i)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

/* reduction max -> sub(x, max) -> exp -> reduction add -> div(e, sum), every value between
 * them virtual and read only by the pattern: the nodes, or false. */
static bool match_softmax(const parts* s, int32_t r1, const hipdnnSdkNode** out) {
    const hipdnnSdkGraph* g = s->g;
    const hipdnnSdkNode* R1 = &g->nodes[r1];
    if (!is_red(R1, HIPDNN_REDUCE_TENSOR_MAX)) return false;
    const int64_t x = R1->inputs[HIPDNN_RED_X], m = R1->outputs[HIPDNN_RED_Y];
    if (!inner(s, m, 1)) return false;
    int32_t i_sub = reader(s, m, r1, 0);
    if (i_sub < 0) return false;
    const hipdnnSdkNode* S = &g->nodes[i_sub];
    if (!is_pw(S, HIPDNN_POINTWISE_SUB) || S->inputs[HIPDNN_PW_X] != x || S->inputs[HIPDNN_PW_B] != m)
        return false;
    const int64_t t = S->outputs[HIPDNN_PW_Y];
    if (!inner(s, t, 1)) return false;
    int32_t i_exp = reader(s, t, i_sub, 0);
    if (i_exp < 0 || !is_pw(&g->nodes[i_exp], HIPDNN_POINTWISE_EXP)) return false;
    const int64_t e = g->nodes[i_exp].outputs[HIPDNN_PW_Y];
    if (!inner(s, e, 2)) return false;
    int32_t a = reader(s, e, i_exp, 0), b = reader(s, e, i_exp, 1);
    if (a < 0 || b < 0) return false;
    if (!is_red(&g->nodes[a], HIPDNN_REDUCE_TENSOR_ADD)) {
        int32_t tmp = a;
        a = b;
        b = tmp;
    }
    const hipdnnSdkNode *R2 = &g->nodes[a], *D = &g->nodes[b];
    if (!is_red(R2, HIPDNN_REDUCE_TENSOR_ADD) || R2->inputs[HIPDNN_RED_X] != e) return false;
    const int64_t sum = R2->outputs[HIPDNN_RED_Y];
    if (!inner(s, sum, 1) || !is_pw(D, HIPDNN_POINTWISE_DIV) || D->inputs[HIPDNN_PW_X] != e ||
        D->inputs[HIPDNN_PW_B] != sum)
        return false;
    const hipdnnSdkTensor *tm = &g->tensors[tidx(s, m)], *ts = &g->tensors[tidx(s, sum)];
    const hipdnnSdkTensor *tx = &g->tensors[tidx(s, x)], *ty = &g->tensors[tidx(s, D->outputs[0])];
    if (!same_dims(tm, ts) || !same_dims(tx, ty)) return false;
    const int32_t idx[5] = {r1, i_sub, i_exp, a, b};
    for (int k = 0; k < 5; ++k)
        if (s->group[idx[k]] >= 0) return false;
    out[0] = R1;
    out[1] = S;
    out[2] = &g->nodes[i_exp];
    out[3] = R2;
    out[4] = D;
    return true;
}

/* ---- sub-graphs ---------------------------------------------------------------------------- */

/* Whether virtual tensor t crosses the boundary of the node set `in` (written on one side,
 * read on the other). */
static bool crosses(const parts* s, const bool* in, int32_t t) {
    const hipdnnSdkGraph* g = s->g;
    if (!g->tensors[t].is_virtual || s->producer[t] < 0) return false;
    const bool made_in = in[s->producer[t]];
    for (int32_t i = 0; i < g->num_nodes; ++i)
        if (in[i] != made_in && reads(&g->nodes[i], g->tensors[t].uid)) return true;
    return false;
}

/* A copy of the graph with the nodes of `in` only, every virtual tensor crossing into or
 * out of them made real and packed; NULL when out of memory. */
static hipdnnSdkGraph* subgraph(const parts* s, const bool* in) {
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
        if (crosses(s, in, t)) {
            hipdnnSdkTensor* tt = &sub->tensors[t];
            tt->is_virtual = false;
            hipdnnSdkPackedStrides(tt->ndim, tt->dims, tt->strides);
        }
    return sub;
}

static bool pointwise_compiles(parts* s, const bool* in, hipe_plan* plan, char* why, size_t len) {
    hipdnnSdkGraph* sub = subgraph(s, in);
    if (!sub) return decline(why, len, "out of memory while compiling graph '%s'", s->g->name);
    bool ok = hipe_compile_pointwise(sub, plan, why, len);
    hipdnnSdkGraphFree(sub);
    return ok;
}

/* ---- grouping -------------------------------------------------------------------------------- */

static int new_group(parts* s, int kind) {
    s->gkind[s->ngroups] = kind;
    s->gsoftmax[s->ngroups] = -1;
    return s->ngroups++;
}

static int compile_group(parts* s, int grp, hipe_stage* st, size_t* parts_bytes,
                         int64_t parts_uid);

/* A norm's or a matmul's epilogue: pointwise nodes after node ni reading its result y (or
 * one another's results), shaped as tensor x (the norm's input, the product), every other
 * input a graph input or a by-value scalar; they join its group if its kernel can take
 * them all. */
static void take_epilogue(parts* s, int32_t ni, int grp, int64_t y_uid, int64_t x_uid) {
    const hipdnnSdkGraph* g = s->g;
    bool* have = calloc((size_t)g->num_tensors, sizeof(bool)); /* values the group makes */
    hipe_stage* trial = malloc(2 * sizeof(hipe_stage));
    int32_t y = tidx(s, y_uid);
    int32_t x = tidx(s, x_uid);
    if (!have || !trial || y < 0 || x < 0) goto done;
    have[y] = true;
    int count = 0;
    for (int32_t i = ni + 1; i < g->num_nodes; ++i) {
        const hipdnnSdkNode* n = &g->nodes[i];
        if (n->kind != HIPDNN_OP_POINTWISE || s->group[i] >= 0) continue;
        bool touches = false, ok = true;
        for (int p = 0; p < num_inputs(n) && p < HIPDNN_MAX_PORTS; ++p) {
            int32_t t = tidx(s, n->inputs[p]);
            if (t < 0) continue;
            if (have[t]) touches = true;
            else if (s->producer[t] >= 0) ok = false;
        }
        int32_t out = tidx(s, n->outputs[HIPDNN_PW_Y]);
        if (!touches || !ok || out < 0 || !same_dims(&g->tensors[out], &g->tensors[x])) continue;
        s->group[i] = grp;
        have[out] = true;
        ++count;
    }
    if (count > 0) {
        char why[HIPE_MSG_LEN];
        parts trial_parts = *s; /* the trial's reason goes nowhere */
        trial_parts.why = why;
        trial_parts.len = sizeof(why);
        size_t parts_bytes = 0;
        if (compile_group(&trial_parts, grp, trial, &parts_bytes, 0) == 0)
            for (int32_t i = ni + 1; i < g->num_nodes; ++i)
                if (s->group[i] == grp) s->group[i] = -1;
    }
done:
    free(have);
    free(trial);
}

static bool form_groups(parts* s) {
    const hipdnnSdkGraph* g = s->g;
    for (int32_t i = 0; i < g->num_nodes; ++i) s->group[i] = -1;
    s->ngroups = 0;
    int nsoft = 0;
    for (int32_t i = 0; i < g->num_nodes; ++i) {
        const hipdnnSdkNode** m = s->softmax[nsoft];
        if (nsoft < HIPE_MAX_STAGES && match_softmax(s, i, m)) {
            int grp = new_group(s, G_SOFTMAX);
            s->gsoftmax[grp] = nsoft++;
            for (int k = 0; k < 5; ++k) s->group[m[k] - g->nodes] = grp;
        }
    }
    for (int32_t i = 0; i < g->num_nodes; ++i)
        if (g->nodes[i].kind == HIPDNN_OP_NORM_FORWARD) {
            int grp = new_group(s, G_NORM);
            s->group[i] = grp;
            take_epilogue(s, i, grp, g->nodes[i].outputs[HIPDNN_NORM_Y],
                          g->nodes[i].inputs[HIPDNN_NORM_X]);
        }
    for (int32_t i = 0; i < g->num_nodes; ++i)
        if (g->nodes[i].kind == HIPDNN_OP_MATMUL || g->nodes[i].kind == HIPDNN_OP_CONV_FPROP) {
            int grp = new_group(s, G_GEMM);
            s->group[i] = grp; /* the product: matmul's c, the convolution's y (port 0 both) */
            take_epilogue(s, i, grp, g->nodes[i].outputs[0], g->nodes[i].outputs[0]);
        }
    for (int32_t i = 0; i < g->num_nodes; ++i)
        if (g->nodes[i].kind == HIPDNN_OP_REDUCTION && s->group[i] < 0)
            s->group[i] = new_group(s, G_REDUCTION);
        else if (g->nodes[i].kind == HIPDNN_OP_RESAMPLE_FWD || g->nodes[i].kind == HIPDNN_OP_RESAMPLE_BWD)
            s->group[i] = new_group(s, G_RESAMPLE);
        else if (g->nodes[i].kind == HIPDNN_OP_NORM_BACKWARD)
            s->group[i] = new_group(s, G_NORM_BWD);
    /* Runs of pointwise nodes between the others, each as long as it compiles as one. */
    hipe_plan* plan = malloc(sizeof(*plan));
    if (!plan) return decline(s->why, s->len, "out of memory while compiling graph '%s'", g->name);
    int run = -1;
    bool ok = true;
    for (int32_t i = 0; i < g->num_nodes && ok; ++i) {
        if (s->group[i] >= 0 && s->gkind[s->group[i]] != G_POINTWISE) {
            run = -1;
            continue;
        }
        if (s->group[i] >= 0) continue;
        if (run >= 0) { /* try the run with this node too */
            for (int32_t k = 0; k < g->num_nodes; ++k) s->in[k] = s->group[k] == run || k == i;
            char why[HIPE_MSG_LEN];
            if (pointwise_compiles(s, s->in, plan, why, sizeof(why))) {
                hipe_plan_free(plan);
                s->group[i] = run;
                continue;
            }
        }
        for (int32_t k = 0; k < g->num_nodes; ++k) s->in[k] = k == i;
        ok = pointwise_compiles(s, s->in, plan, s->why, s->len);
        hipe_plan_free(plan);
        if (ok) {
            if (s->ngroups == HIPE_MAX_STAGES)
                ok = decline(s->why, s->len, "graph '%s' needs more than %d kernels", g->name,
                             HIPE_MAX_STAGES);
            else
                s->group[i] = run = new_group(s, G_POINTWISE);
        }
    }
    free(plan);
    if (ok && s->ngroups > HIPE_MAX_STAGES)
        ok = decline(s->why, s->len, "graph '%s' needs more than %d kernels", g->name, HIPE_MAX_STAGES);
    return ok;
}

/* ---- stages ---------------------------------------------------------------------------------- */

static void bind_pw(hipe_stage* st) {
    const hipe_plan* pw = &st->pw;
    st->nbind = 0;
    for (int i = 0; i < pw->prog.nin; ++i) {
        hipe_bind* b = &st->bind[st->nbind++];
        b->uid = pw->in_uid[i];
        b->offset = (uint32_t)(offsetof(pw_program, in) + (size_t)i * sizeof(pw_tensor) +
                               offsetof(pw_tensor, ptr));
        b->scalar_dtype = -1;
    }
    for (int i = 0; i < pw->prog.nout; ++i) {
        hipe_bind* b = &st->bind[st->nbind++];
        b->uid = pw->out_uid[i];
        b->offset = (uint32_t)(offsetof(pw_program, out) + (size_t)i * sizeof(pw_tensor) +
                               offsetof(pw_tensor, ptr));
        b->scalar_dtype = -1;
    }
    for (int i = 0; i < pw->nscalars; ++i) {
        if (pw->scalar_uid[i] < 0) continue;
        hipe_bind* b = &st->bind[st->nbind++];
        b->uid = pw->scalar_uid[i];
        b->offset = (uint32_t)(offsetof(pw_program, scalar) + (size_t)i * sizeof(float));
        b->scalar_dtype = pw->scalar_dtype[i];
    }
}

/* A uid for the parts' buffer of a split reduction: one no tensor of the graph has, and
 * after `last` (the previous one), so that each buffer has its own. */
static int64_t free_uid(const parts* s, int64_t last) {
    int64_t uid = last + 1;
    while (hipdnnSdkUidMapFind(&s->map, uid) >= 0) ++uid;
    return uid;
}

/* The epilogue of a group's main node (a norm, a matmul): its other nodes, compiled as one
 * pointwise program (in order: a matmul's), malloc'd; NULL with the reason. */
static hipe_plan* compile_epilogue(const hipdnnSdkGraph* sub, const hipdnnSdkNode* main,
                                   bool in_order, char* why, size_t len) {
    const bool conv = main->kind == HIPDNN_OP_CONV_FPROP;
    const hipdnnSdkTensor* y = conv ? hipdnnSdkGraphFindTensor(sub, main->outputs[0]) : NULL;
    bool* ein = calloc((size_t)sub->num_nodes, sizeof(bool));
    hipe_plan* ep = malloc(sizeof(*ep));
    hipdnnSdkGraph* eg = NULL;
    parts sp = {.g = sub};
    bool ok = ein && ep && hipdnnSdkUidMapBuild(&sp.map, sub);
    if (!ok) decline(why, len, "out of memory while compiling graph '%s'", sub->name);
    if (ok) {
        sp.producer = calloc((size_t)sub->num_tensors, sizeof(int32_t));
        sp.readers = calloc((size_t)sub->num_tensors, sizeof(int32_t));
        char no[HIPE_MSG_LEN]; /* the sub-graph's structure was checked with the graph's */
        sp.why = no;
        sp.len = sizeof(no);
        ok = sp.producer && sp.readers && structure(&sp);
        if (!ok) decline(why, len, "out of memory while compiling graph '%s'", sub->name);
        for (int32_t i = 0; ok && i < sub->num_nodes; ++i) ein[i] = &sub->nodes[i] != main;
        ok = ok && (eg = subgraph(&sp, ein)) != NULL;
        if (!eg) decline(why, len, "out of memory while compiling graph '%s'", sub->name);
        ok = ok && (!conv || (y && hipe_gm_permute_channels_last(eg, y->ndim, why, len)));
        ok = ok && (in_order ? hipe_compile_pointwise_in_order(eg, ep, why, len)
                             : hipe_compile_pointwise(eg, ep, why, len));
        free(sp.producer);
        free(sp.readers);
    }
    hipdnnSdkUidMapFree(&sp.map);
    hipdnnSdkGraphFree(eg);
    free(ein);
    if (!ok) {
        free(ep);
        return NULL;
    }
    return ep;
}

/* The stage(s) of group grp into st (room for two); how many, 0 with the reason. */
static int compile_group(parts* s, int grp, hipe_stage* st, size_t* parts_bytes,
                         int64_t parts_uid) {
    const hipdnnSdkGraph* g = s->g;
    char rtc[HIPE_MSG_LEN], nl[160];
    if (s->gkind[grp] != G_POINTWISE && !hipe_rtc_available(rtc, sizeof(rtc))) {
        /* no precompiled row-wise or pooling kernels: another engine takes the graph */
        int32_t first = 0;
        while (first < g->num_nodes - 1 && s->group[first] != grp) ++first;
        return decline(s->why, s->len, "%s: %s kernels are compiled at run time and %s",
                       label(&g->nodes[first], nl, sizeof(nl)),
                       s->gkind[grp] == G_RESAMPLE ? "pooling"
                       : s->gkind[grp] == G_GEMM   ? "matmul"
                                                   : "row-wise", rtc);
    }
    bool* in = calloc((size_t)g->num_nodes, sizeof(bool));
    if (!in) return decline(s->why, s->len, "out of memory while compiling graph '%s'", g->name);
    for (int32_t k = 0; k < g->num_nodes; ++k) in[k] = s->group[k] == grp;
    hipdnnSdkGraph* sub = subgraph(s, in);
    if (!sub) {
        free(in);
        return decline(s->why, s->len, "out of memory while compiling graph '%s'", g->name);
    }
    int made = 0;
    switch (s->gkind[grp]) {
    case G_POINTWISE:
        memset(st, 0, sizeof(*st));
        st->kind = HIPE_STAGE_POINTWISE;
        if (hipe_compile_pointwise(sub, &st->pw, s->why, s->len)) {
            made = 1;
            bind_pw(st);
            hipdnnSdkFormat(st->what, sizeof(st->what), "%d pointwise node%s fused", sub->num_nodes,
                            sub->num_nodes == 1 ? "" : "s");
        }
        break;
    case G_SOFTMAX: {
        const hipdnnSdkNode* nodes[5];
        for (int k = 0; k < 5; ++k) /* the same nodes in the sub-graph, by position */
            for (int32_t i = 0, j = 0; i < g->num_nodes; ++i)
                if (in[i]) {
                    if (&g->nodes[i] == s->softmax[s->gsoftmax[grp]][k]) nodes[k] = &sub->nodes[j];
                    ++j;
                }
        made = hipe_rw_softmax(sub, nodes, st, s->why, s->len);
        break;
    }
    case G_NORM: {
        const hipdnnSdkNode* norm = NULL;
        for (int32_t i = 0; i < sub->num_nodes; ++i)
            if (sub->nodes[i].kind == HIPDNN_OP_NORM_FORWARD) norm = &sub->nodes[i];
        hipe_plan* ep = NULL;
        if (norm && sub->num_nodes > 1 && !(ep = compile_epilogue(sub, norm, false, s->why, s->len))) {
            hipdnnSdkGraphFree(sub);
            free(in);
            return 0;
        }
        made = norm ? hipe_rw_norm(sub, norm, ep, st, s->why, s->len)
                    : decline(s->why, s->len, "internal: norm group without its norm");
        free(ep);
        break;
    }
    case G_GEMM: {
        const hipdnnSdkNode* mm = NULL;
        for (int32_t i = 0; i < sub->num_nodes; ++i)
            if (sub->nodes[i].kind == HIPDNN_OP_MATMUL || sub->nodes[i].kind == HIPDNN_OP_CONV_FPROP)
                mm = &sub->nodes[i];
        hipe_plan* ep = NULL;
        if (mm && sub->num_nodes > 1 && !(ep = compile_epilogue(sub, mm, true, s->why, s->len))) {
            hipdnnSdkGraphFree(sub);
            free(in);
            return 0;
        }
        made = mm ? hipe_gm_compile(sub, mm, ep, st, s->why, s->len)
                  : decline(s->why, s->len, "internal: matmul group without its matmul");
        free(ep);
        break;
    }
    case G_REDUCTION:
        made = hipe_rw_reduction(sub, &sub->nodes[0], parts_uid, parts_bytes, st, s->why, s->len);
        break;
    case G_RESAMPLE:
        made = hipe_rs_compile(sub, &sub->nodes[0], st, s->why, s->len);
        break;
    case G_NORM_BWD:
        made = hipe_rw_norm_backward(sub, &sub->nodes[0], st, s->why, s->len);
        break;
    default: break;
    }
    hipdnnSdkGraphFree(sub);
    free(in);
    return made;
}

static size_t align_up(size_t v) { return (v + 255) & ~(size_t)255; }

/* ---- which nodes each stage runs ----------------------------------------------------------- */

/* For each node of the lowered graph, the node of the graph given that it comes from.
 * lower.c names what it makes "<node>" or "<node>/<what>" and is deterministic, so the
 * lowering is run again on a copy whose nodes are named by their index ("7"): names read
 * back exactly, where the graph's own names need not be unique.  false when out of
 * memory; -1 for a node not traced (it never is: both lowerings match node for node). */
static bool trace_origins(const hipdnnSdkGraph* orig, const hipdnnSdkGraph* lowered,
                          int32_t* origin) {
    for (int32_t i = 0; i < lowered->num_nodes; ++i) origin[i] = -1;
    hipdnnSdkGraph* named = hipdnnSdkGraphClone(orig);
    if (!named) return false;
    bool ok = true;
    for (int32_t i = 0; i < named->num_nodes && ok; ++i) {
        free(named->nodes[i].name);
        named->nodes[i].name = malloc(16);
        if (named->nodes[i].name) hipdnnSdkFormat(named->nodes[i].name, 16, "%d", (int)i);
        else ok = false;
    }
    hipe_lowered lw = {0};
    char why[HIPE_MSG_LEN];
    ok = ok && hipe_lower(named, &lw, why, sizeof(why));
    if (ok && lw.graph && lw.graph->num_nodes == lowered->num_nodes)
        for (int32_t i = 0; i < lowered->num_nodes; ++i) {
            char* end = NULL;
            long k = strtol(lw.graph->nodes[i].name, &end, 10);
            if (end != lw.graph->nodes[i].name && (*end == '\0' || *end == '/') && k >= 0 &&
                k < orig->num_nodes)
                origin[i] = (int32_t)k;
        }
    hipe_lowered_free(&lw);
    hipdnnSdkGraphFree(named);
    return ok;
}

/* Each stage's nodes of the graph given: stage k came from group stage_group[k]. */
static bool list_stage_nodes(const parts* s, const hipdnnSdkGraph* orig, bool lowered,
                             struct hipe_staged* out, const int* stage_group) {
    const hipdnnSdkGraph* g = s->g;
    int32_t* origin = malloc((size_t)(g->num_nodes > 0 ? g->num_nodes : 1) * sizeof(int32_t));
    bool* in = calloc((size_t)(orig->num_nodes > 0 ? orig->num_nodes : 1), sizeof(bool));
    /* each lowered node is in one group, and a group makes at most two stages */
    out->nodes = malloc((2 * (size_t)g->num_nodes + 1) * sizeof(uint32_t));
    bool ok = origin && in && out->nodes;
    if (ok && lowered) ok = trace_origins(orig, g, origin);
    else if (ok)
        for (int32_t i = 0; i < g->num_nodes; ++i) origin[i] = i;
    uint32_t at = 0;
    for (int k = 0; ok && k < out->nstages; ++k) {
        memset(in, 0, (size_t)orig->num_nodes * sizeof(bool));
        for (int32_t i = 0; i < g->num_nodes; ++i)
            if (s->group[i] == stage_group[k] && origin[i] >= 0) in[origin[i]] = true;
        out->stages[k].nodes_at = at;
        for (int32_t i = 0; i < orig->num_nodes; ++i)
            if (in[i]) out->nodes[at++] = (uint32_t)i;
        out->stages[k].num_nodes = at - out->stages[k].nodes_at;
    }
    free(origin);
    free(in);
    return ok;
}

bool hipe_staged_compile(const hipdnnSdkGraph* orig, hipe_plan* plan, char* why, size_t len) {
    memset(plan, 0, sizeof(*plan));
    if (!orig || orig->num_nodes < 1 || !orig->nodes)
        return decline(why, len, "graph '%s' has no operations", orig && orig->name ? orig->name : "");
    hipe_lowered lw;
    if (!hipe_lower(orig, &lw, why, len)) return false;
    const hipdnnSdkGraph* g = lw.graph ? lw.graph : orig;
    parts s = {.g = g, .why = why, .len = len};
    const size_t nt = (size_t)(g->num_tensors > 0 ? g->num_tensors : 1);
    const size_t nn = (size_t)g->num_nodes;
    s.producer = calloc(nt, sizeof(int32_t));
    s.readers = calloc(nt, sizeof(int32_t));
    s.group = calloc(nn, sizeof(int32_t));
    s.gkind = calloc(nn, sizeof(int32_t));
    s.gsoftmax = calloc(nn, sizeof(int32_t));
    s.in = calloc(nn, sizeof(bool));
    struct hipe_staged* out = calloc(1, sizeof(*out));
    hipe_stage* stages = calloc(2 * nn, sizeof(hipe_stage)); /* a reduction may take two */
    hipe_buffer* bufs = calloc(nt + nn, sizeof(hipe_buffer));
    bool ok = s.producer && s.readers && s.group && s.gkind && s.gsoftmax && s.in && out &&
              stages && bufs && hipdnnSdkUidMapInit(&s.map, g);
    if (!ok) decline(why, len, "out of memory while compiling graph '%s'", g->name);
    for (int32_t i = 0; ok && i < g->num_tensors; ++i) {
        int32_t other = hipdnnSdkUidMapInsert(&s.map, i);
        if (other >= 0)
            ok = decline(why, len, "tensors '%s' and '%s' share uid %lld", g->tensors[other].name,
                         g->tensors[i].name, (long long)g->tensors[i].uid);
    }
    ok = ok && structure(&s) && form_groups(&s);
    if (ok) {
        out->stages = stages;
        out->bufs = bufs;
        stages = NULL;
        bufs = NULL;
        /* stages in the order of each group's first node */
        bool* done = calloc((size_t)s.ngroups + 1, sizeof(bool));
        ok = done != NULL;
        if (!ok) decline(why, len, "out of memory while compiling graph '%s'", g->name);
        int* stage_group = calloc(2 * nn + 1, sizeof(int));
        ok = ok && stage_group != NULL;
        if (!ok) decline(why, len, "out of memory while compiling graph '%s'", g->name);
        int64_t parts_uid = HIPDNN_NO_TENSOR;
        for (int32_t i = 0; ok && i < g->num_nodes; ++i) {
            int grp = s.group[i];
            if (grp < 0 || done[grp]) continue;
            done[grp] = true;
            size_t parts_bytes = 0;
            parts_uid = free_uid(&s, parts_uid);
            int made = compile_group(&s, grp, &out->stages[out->nstages], &parts_bytes, parts_uid);
            for (int k = 0; k < made; ++k) stage_group[out->nstages + k] = grp;
            out->nstages += made;
            ok = made > 0;
            if (ok && parts_bytes) {
                hipe_buffer* b = &out->bufs[out->nbuf++];
                b->uid = parts_uid;
                b->bytes = parts_bytes;
            }
        }
        free(done);
        if (ok && !list_stage_nodes(&s, orig, lw.graph != NULL, out, stage_group))
            ok = decline(why, len, "out of memory while compiling graph '%s'", g->name);
        free(stage_group);
        /* virtual tensors shared by two stages: the workspace */
        for (int32_t t = 0; ok && t < g->num_tensors; ++t) {
            const hipdnnSdkTensor* tt = &g->tensors[t];
            if (!tt->is_virtual || s.producer[t] < 0) continue;
            for (int32_t k = 0; k < g->num_nodes; ++k) s.in[k] = s.group[k] == s.group[s.producer[t]];
            if (!crosses(&s, s.in, t)) continue;
            hipe_buffer* b = &out->bufs[out->nbuf++];
            b->uid = tt->uid;
            b->bytes = (size_t)hipdnnSdkElementCount(tt->ndim, tt->dims) *
                       hipdnnSdkDataTypeSize(tt->data_type);
        }
        for (int i = 0; ok && i < lw.nws; ++i) { /* tensors a view reads or writes */
            const hipdnnSdkTensor* tt = hipdnnSdkGraphFindTensor(g, lw.ws[i]);
            hipe_buffer* b = &out->bufs[out->nbuf++];
            b->uid = tt->uid;
            b->bytes = (size_t)hipdnnSdkElementCount(tt->ndim, tt->dims) *
                       hipdnnSdkDataTypeSize(tt->data_type);
        }
        out->alias = lw.alias;
        out->nalias = lw.nalias;
        lw.alias = NULL;
        size_t at = 0;
        for (int i = 0; i < out->nbuf; ++i) {
            out->bufs[i].offset = at;
            at = align_up(at + out->bufs[i].bytes);
        }
        out->workspace = at;
    }
    hipdnnSdkUidMapFree(&s.map);
    free(s.producer);
    free(s.readers);
    free(s.group);
    free(s.gkind);
    free(s.gsoftmax);
    free(s.in);
    free(stages);
    free(bufs);
    hipe_lowered_free(&lw);
    plan->staged = out;
    if (!ok) hipe_plan_free(plan);
    return ok;
}

/* ---- running --------------------------------------------------------------------------------- */

static const hipdnnPluginTensorBuffer_t* find_buffer(const hipdnnPluginTensorBuffer_t* b,
                                                     uint32_t n, int64_t uid) {
    for (uint32_t i = 0; i < n; ++i)
        if (b[i].uid == uid) return &b[i];
    return NULL;
}

static const char* tensor_name(const hipdnnSdkGraph* g, int64_t uid) {
    const hipdnnSdkTensor* t = hipdnnSdkGraphFindTensor(g, uid);
    return t ? t->name : "";
}

/* The memory of tensor uid: its base (a view's is another tensor) and the byte offset. */
static int64_t view_base(const struct hipe_staged* s, int64_t uid, int64_t* offset) {
    *offset = 0;
    for (int i = 0; i < s->nalias; ++i)
        if (s->alias[i].uid == uid) {
            *offset = s->alias[i].byte_offset;
            return s->alias[i].base;
        }
    return uid;
}

hipe_kernel_id hipe_stage_planned_kernel(const struct hipe_staged* s, const hipe_stage* st) {
    union {
        rw_program rw;
        rs_program rs;
    } prog;
    if (st->kind == HIPE_STAGE_RESAMPLE) prog.rs = st->rs;
    else if (st->kind == HIPE_STAGE_ROWWISE) prog.rw = st->rw;
    else return 0;
    for (int b = 0; b < st->nbind; ++b) { /* every pointer at the start of a 256-byte block */
        if (st->bind[b].scalar_dtype >= 0) continue;
        int64_t offset;
        (void)view_base(s, st->bind[b].uid, &offset);
        void* ptr = (char*)(uintptr_t)4096 + offset;
        memcpy((char*)&prog + st->bind[b].offset, &ptr, sizeof(ptr));
    }
    if (st->kind == HIPE_STAGE_RESAMPLE) return hipe_rs_kernel(&prog.rs);
    hipe_rw_set_vectors(&prog.rw);
    return hipe_rw_kernel(&prog.rw);
}

/* A kernel other than the planned one, which this enqueue's pointers need (a view that is
 * not 16-byte aligned, say): from the stage's slots, else the caches or compiled now; the
 * first time, logged. */
static void* other_kernel(const hipdnnSdkGraph* g, struct hipe_staged* s, int k, hipe_kernel_id id,
                          int device, char* why, size_t len) {
    hipe_stage* st = &s->stages[k];
    for (int i = 0; i < HIPE_OTHER_KERNELS; ++i)
        if (atomic_load_explicit(&st->other[i].id, memory_order_acquire) == id) return st->other[i].kernel;
    char name[HIPE_KERNEL_NAME_LEN], planned[HIPE_KERNEL_NAME_LEN];
    if (!id) { /* no program gets here: kernel_names.c and rowwise_program.c disagree */
        if (st->kind == HIPE_STAGE_RESAMPLE)
            snprintf(why, len, "internal: no resample kernel for %d spatial dims", st->rs.nsp);
        else
            snprintf(why, len, "internal: no row-wise kernel for kind %d (op %d, pre %d, %d "
                     "vectors, flags 0x%x)", st->rw.kind, st->rw.op, st->rw.pre, st->rw.vecs,
                     st->rw.flags);
        return NULL;
    }
    void* kernel = NULL;
    if (!hipe_kernel_get(id, device, &kernel, why, len)) return NULL;
    const int i = atomic_fetch_add(&st->nother, 1);
    if (i < HIPE_OTHER_KERNELS) {
        st->other[i].kernel = kernel;
        atomic_store_explicit(&st->other[i].id, id, memory_order_release);
        hipe_kernel_name(id, name, sizeof(name));
        hipe_kernel_name(st->kernel_id, planned, sizeof(planned));
        hipe_log(HIPDNN_LOG_INFO, HIPE_ENGINE_NAME ": graph '%s': stage %d of %d (%s): these "
                 "pointers take kernel %s (planned for 16-byte aligned ones: %s)", g->name, k + 1,
                 s->nstages, st->what, name, planned);
    }
    return kernel;
}

/* Launches a row-wise or resample stage's kernel: the planned one, unless the pointers set
 * in `prog` need another. */
static bool launch_compiled(const hipdnnSdkGraph* g, struct hipe_staged* s, int k, void* prog,
                            int device, int sm_count, void* stream, char* why, size_t len) {
    hipe_stage* st = &s->stages[k];
    hipe_kernel_id id;
    int threads;
    int64_t blocks, cap;
    if (st->kind == HIPE_STAGE_RESAMPLE) {
        const rs_program* rs = prog;
        id = hipe_rs_kernel(rs);
        threads = RS_BLOCK;
        blocks = (rs->total + RS_BLOCK - 1) / RS_BLOCK;
        if (blocks < 1) blocks = 1;
        cap = (int64_t)sm_count * 32;
    } else {
        rw_program* rw = prog;
        hipe_rw_set_vectors(rw);
        id = hipe_rw_kernel(rw);
        hipe_rowwise_grid(rw, &threads, &blocks);
        cap = (int64_t)sm_count * 1024;
    }
    if (blocks > cap) blocks = cap;
    void* kernel = id && id == st->kernel_id ? st->kernel : other_kernel(g, s, k, id, device, why, len);
    if (!kernel) return false;
    if (hipe_rtc_launch(kernel, blocks, threads, prog, stream, why, len)) return true;
    char name[HIPE_KERNEL_NAME_LEN], launch[HIPE_MSG_LEN];
    hipe_kernel_name(id, name, sizeof(name));
    snprintf(launch, sizeof(launch), "%s", why);
    hipdnnSdkFormat(why, len, "%s: %s", name, launch);
    return false;
}

hipdnnPluginStatus_t hipe_staged_enqueue(const hipdnnSdkGraph* g, struct hipe_staged* s,
                                         hipe_pointer_fn resolve, void* ctx, void* workspace,
                                         size_t workspace_size,
                                         const hipdnnPluginTensorBuffer_t* buffers,
                                         uint32_t num_buffers, int device, int sm_count,
                                         void* stream) {
    if (s->workspace > 0 && (!workspace || workspace_size < s->workspace)) {
        hipe_set_error(HIPE_ENGINE_NAME ": EnqueueOpGraph: graph '%s' needs %zu bytes of workspace, "
                       "got %zu", g->name, s->workspace, workspace ? workspace_size : (size_t)0);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    for (int k = 0; k < s->nstages; ++k) {
        hipe_stage* st = &s->stages[k];
        union {
            pw_program pw;
            rw_program rw;
            rs_program rs;
            gm_program gm;
        } prog; /* a copy on the stack: passed by value to the kernel */
        if (st->kind == HIPE_STAGE_POINTWISE) prog.pw = st->pw.prog;
        else if (st->kind == HIPE_STAGE_GEMM) prog.gm = st->gm.prog;
        else if (st->kind == HIPE_STAGE_RESAMPLE) prog.rs = st->rs;
        else prog.rw = st->rw;
        char* base = (char*)&prog;
        for (int b = 0; b < st->nbind; ++b) {
            const hipe_bind* bd = &st->bind[b];
            if (bd->scalar_dtype >= 0) { /* a runtime by-value scalar: a host pointer */
                const hipdnnPluginTensorBuffer_t* buf = find_buffer(buffers, num_buffers, bd->uid);
                if (!buf || !buf->ptr) {
                    hipe_set_error(HIPE_ENGINE_NAME ": EnqueueOpGraph: by-value scalar '%s' (uid "
                                   "%lld) has no pointer", tensor_name(g, bd->uid), (long long)bd->uid);
                    return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
                }
                float v = (float)hipdnnSdkLoadAsDouble(buf->ptr, (hipdnnDataType_t)bd->scalar_dtype, 0);
                memcpy(base + bd->offset, &v, sizeof(v));
                continue;
            }
            void* ptr = NULL;
            int64_t offset;
            const int64_t uid = view_base(s, bd->uid, &offset);
            for (int i = 0; i < s->nbuf && !ptr; ++i)
                if (s->bufs[i].uid == uid) ptr = (char*)workspace + s->bufs[i].offset;
            if (!ptr) {
                hipdnnPluginStatus_t r = resolve(ctx, uid, &ptr);
                if (r != HIPDNN_PLUGIN_STATUS_SUCCESS) return r;
            }
            ptr = (char*)ptr + offset;
            memcpy(base + bd->offset, &ptr, sizeof(ptr));
        }
        char why[HIPE_MSG_LEN];
        bool ok;
        unsigned path = 0;
        const char* gm_kernel = "";
        if (st->kind == HIPE_STAGE_POINTWISE) {
            ok = hipe_pointwise_run(&st->pw, &prog.pw, &st->jit, &st->jit_ok, st->fast, sm_count,
                                    stream, &path, why, sizeof(why));
        } else if (st->kind == HIPE_STAGE_GEMM) {
            ok = hipe_gm_enqueue(&st->gm, &prog.gm, device, stream, &gm_kernel, why, sizeof(why));
        } else {
            ok = launch_compiled(g, s, k, &prog, device, sm_count, stream, why, sizeof(why));
        }
        if (!ok) {
            hipe_set_error(HIPE_ENGINE_NAME ": graph '%s': stage %d of %d (%s): %s", g->name, k + 1,
                           s->nstages, st->what, why);
            return HIPDNN_PLUGIN_STATUS_EXECUTION_FAILED;
        }
        if (!atomic_load_explicit(&st->ran, memory_order_relaxed) && !atomic_exchange(&st->ran, 1)) {
            const char* kernel = st->kind == HIPE_STAGE_ROWWISE ? "row-wise"
                                 : st->kind == HIPE_STAGE_GEMM ? gm_kernel
                                 : st->kind == HIPE_STAGE_RESAMPLE ? "resample"
                                 : path & RAN_JIT_FAST  ? "compiled fast"
                                 : path & RAN_JIT_GENERIC ? "compiled generic"
                                 : path & RAN_FAST      ? "interpreting fast" : "interpreting generic";
            const bool rw = st->kind == HIPE_STAGE_ROWWISE;
            char name[HIPE_KERNEL_NAME_LEN + 1] = "";
            if (st->kind != HIPE_STAGE_POINTWISE && st->kind != HIPE_STAGE_GEMM) {
                name[0] = ' ';
                hipe_kernel_name(rw ? hipe_rw_kernel(&prog.rw) : hipe_rs_kernel(&prog.rs), name + 1,
                                 sizeof(name) - 1);
            }
            hipe_log(HIPDNN_LOG_INFO, HIPE_ENGINE_NAME ": graph '%s': stage %d of %d (%s): first run "
                     "of the %s kernel%s%s", g->name, k + 1, s->nstages, st->what, kernel, name,
                     !rw ? "" : prog.rw.fast_dt < 0 ? " (general way)"
                     : prog.rw.flags & RW_F_ROW_PARAMS ? " (fast way, parameters one value a row)"
                                                       : " (fast way)");
        }
    }
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}
