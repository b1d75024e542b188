/* Grouping the nodes of a graph cut into stages (staged_graph.h), and compiling each group
 * into its stage(s).  Grouping, in this order: softmax patterns; each norm with the
 * pointwise nodes after it that read only its y, each other and graph inputs (its
 * epilogue); each norm backward (after dx), matmul and convolution with its epilogue
 * likewise; each remaining reduction, pooling and attention; then runs of pointwise
 * nodes, as long as one fused kernel can take them. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "staged_graph.h"

/* The only node reading tensor uid (which has `count` readers), after node `from`. */
static int32_t reader(const parts* s, int64_t uid, int32_t from, int nth) {
    for (int32_t i = from + 1; i < s->g->num_nodes; ++i)
        if (stg_reads(&s->g->nodes[i], uid) && nth-- == 0) return i;
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
    int32_t t = stg_tidx(s, uid);
    return t >= 0 && s->g->tensors[t].is_virtual && s->readers[t] == count;
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
    const hipdnnSdkTensor *tm = &g->tensors[stg_tidx(s, m)], *ts = &g->tensors[stg_tidx(s, sum)];
    const hipdnnSdkTensor *tx = &g->tensors[stg_tidx(s, x)], *ty = &g->tensors[stg_tidx(s, D->outputs[0])];
    if (!stg_same_dims(tm, ts) || !stg_same_dims(tx, ty)) return false;
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

static bool pointwise_compiles(parts* s, const bool* in, hipe_plan* plan, char* why, size_t len) {
    hipdnnSdkGraph* sub = stg_subgraph(s, in);
    if (!sub) return decline(why, len, "out of memory while compiling graph '%s'", s->g->name);
    bool ok = hipe_compile_pointwise(sub, plan, why, len);
    hipdnnSdkGraphFree(sub);
    return ok;
}

/* ---- grouping -------------------------------------------------------------------------------- */

/* A node the matmul stage runs (gemm.h): a matrix product, explicit or implicit. */
static bool is_product(int kind) {
    return kind == HIPDNN_OP_MATMUL || kind == HIPDNN_OP_CONV_FPROP ||
           kind == HIPDNN_OP_CONV_DGRAD || kind == HIPDNN_OP_CONV_WGRAD;
}

static int new_group(parts* s, int kind) {
    s->gkind[s->ngroups] = kind;
    s->gsoftmax[s->ngroups] = -1;
    return s->ngroups++;
}

/* The tensor a candidate epilogue node writes: y, or dx of the pointwise _BWD modes (their
 * own port, as cuDNN's). */
static int32_t member_output(const parts* s, const hipdnnSdkNode* n) {
    return stg_tidx(s, n->kind == HIPDNN_OP_POINTWISE ? hipdnnSdkPointwiseOutput(n) : n->outputs[0]);
}

/* Why node n, which reads a value of the epilogue being formed, cannot join it; NULL if it
 * can.  (A value another stage makes would have to be in memory before this kernel runs.) */
static const char* epilogue_misfit(const parts* s, const hipdnnSdkNode* n, int grp, int32_t x,
                                   const bool* have) {
    for (int p = 0; p < stg_num_inputs(n) && p < HIPDNN_MAX_PORTS; ++p) {
        int32_t t = stg_tidx(s, n->inputs[p]);
        if (t >= 0 && !have[t] && s->producer[t] >= 0) return "it reads a value another stage makes";
    }
    int32_t out = member_output(s, n);
    if (out < 0) return "it has no output";
    if (!stg_same_dims(&s->g->tensors[out], &s->g->tensors[x]))
        return "its output is not shaped as the product";
    if (stg_reads_aliased(s, n, grp)) return "it reads a view of memory the stage writes";
    return NULL;
}

/* A declined fusion says why, at info level: which node and the reason. */
static void log_unfused(const parts* s, int32_t ni, const hipdnnSdkNode* n, const char* why) {
    char main[160], nl[160];
    hipe_log(HIPDNN_LOG_INFO, HIPE_ENGINE_NAME ": graph '%s': %s is not fused into the epilogue "
             "of %s: %s", s->g->name, n ? stg_label(n, nl, sizeof(nl)) : "its epilogue",
             stg_label(&s->g->nodes[ni], main, sizeof(main)), why);
}

/* A norm's or a matmul's epilogue: pointwise nodes after node ni reading its result y (or
 * one another's results), shaped as tensor x (the norm's input, the product), every other
 * input a graph input or a by-value scalar; they join its group if its kernel can take
 * them all. */
static void take_epilogue(parts* s, int32_t ni, int grp, int64_t y_uid, int64_t x_uid) {
    const hipdnnSdkGraph* g = s->g;
    bool* have = calloc((size_t)g->num_tensors, sizeof(bool)); /* values the group makes */
    hipe_stage* trial = malloc(2 * sizeof(hipe_stage));
    int32_t y = stg_tidx(s, y_uid);
    int32_t x = stg_tidx(s, x_uid);
    if (!have || !trial || y < 0 || x < 0) goto done;
    have[y] = true;
    int count = 0;
    for (int32_t i = ni + 1; i < g->num_nodes; ++i) {
        const hipdnnSdkNode* n = &g->nodes[i];
        /* a batchnorm inference after a matmul or convolution is pointwise too (ResNet) */
        const bool member = n->kind == HIPDNN_OP_POINTWISE ||
                            (n->kind == HIPDNN_OP_BATCHNORM_INFERENCE && s->gkind[grp] == G_GEMM);
        if (!member || s->group[i] >= 0) continue;
        bool touches = false;
        for (int p = 0; p < stg_num_inputs(n) && p < HIPDNN_MAX_PORTS; ++p) {
            int32_t t = stg_tidx(s, n->inputs[p]);
            touches = touches || (t >= 0 && have[t]);
        }
        if (!touches) continue;
        const char* misfit = epilogue_misfit(s, n, grp, x, have);
        if (misfit) {
            log_unfused(s, ni, n, misfit);
            continue;
        }
        s->group[i] = grp;
        have[member_output(s, n)] = true;
        ++count;
    }
    if (count > 0) {
        char why[HIPE_MSG_LEN];
        parts trial_parts = *s; /* the trial's reason is logged, not returned */
        trial_parts.why = why;
        trial_parts.len = sizeof(why);
        size_t parts_bytes = 0;
        if (stg_compile_group(&trial_parts, grp, trial, &parts_bytes, 0) == 0) {
            log_unfused(s, ni, NULL, why);
            for (int32_t i = ni + 1; i < g->num_nodes; ++i)
                if (s->group[i] == grp) s->group[i] = -1;
        }
    }
done:
    free(have);
    free(trial);
}

bool stg_form_groups(parts* s) {
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
        if (g->nodes[i].kind == HIPDNN_OP_NORM_BACKWARD) { /* dx's epilogue (a residual add) */
            int grp = new_group(s, G_NORM_BWD);
            s->group[i] = grp;
            take_epilogue(s, i, grp, g->nodes[i].outputs[HIPDNN_NBWD_DX],
                          g->nodes[i].inputs[HIPDNN_NBWD_X]);
        }
    for (int32_t i = 0; i < g->num_nodes; ++i)
        if (is_product(g->nodes[i].kind)) {
            int grp = new_group(s, G_GEMM);
            s->group[i] = grp; /* the product: matmul's c, the convolution's y, dgrad's dx,
                                  wgrad's dw (port 0 each) */
            take_epilogue(s, i, grp, g->nodes[i].outputs[0], g->nodes[i].outputs[0]);
        }
    for (int32_t i = 0; i < g->num_nodes; ++i)
        if (g->nodes[i].kind == HIPDNN_OP_REDUCTION && s->group[i] < 0)
            s->group[i] = new_group(s, G_REDUCTION);
        else if (g->nodes[i].kind == HIPDNN_OP_RESAMPLE_FWD || g->nodes[i].kind == HIPDNN_OP_RESAMPLE_BWD)
            s->group[i] = new_group(s, G_RESAMPLE);
        else if (g->nodes[i].kind == HIPDNN_OP_SDPA_FWD || g->nodes[i].kind == HIPDNN_OP_SDPA_BWD)
            s->group[i] = new_group(s, G_ATTENTION);
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
        if (run >= 0 && !stg_reads_aliased(s, &g->nodes[i], run)) { /* try the run with it */
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

/* The epilogue of a group's main node (a norm, a matmul): its other nodes, compiled as one
 * pointwise program (in order: a matmul's), malloc'd; NULL with the reason. */
static hipe_plan* compile_epilogue(const hipdnnSdkGraph* sub, const hipdnnSdkNode* main,
                                   bool in_order, char* why, size_t len) {
    const bool conv = is_product(main->kind) && main->kind != HIPDNN_OP_MATMUL;
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
        ok = sp.producer && sp.readers && stg_structure(&sp);
        if (!ok) decline(why, len, "out of memory while compiling graph '%s'", sub->name);
        for (int32_t i = 0; ok && i < sub->num_nodes; ++i) ein[i] = &sub->nodes[i] != main;
        ok = ok && (eg = stg_subgraph(&sp, ein)) != NULL;
        if (!eg) decline(why, len, "out of memory while compiling graph '%s'", sub->name);
        ok = ok && (!conv || (y && hipe_gm_permute_channels_last(eg, y->ndim, why, len)));
        ok = ok && (main->kind != HIPDNN_OP_CONV_WGRAD ||
                    hipe_gm_merge_field(eg, y->ndim, why, len));
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

/* ---- each kind of group --------------------------------------------------------------------- */

/* One group being compiled: its nodes (`in`, of the graph) are those of `sub`; a reduction
 * cut into parts needs *parts_bytes of workspace under uid parts_uid. */
typedef struct {
    int grp;
    const hipdnnSdkGraph* sub;
    const bool* in;
    size_t* parts_bytes;
    int64_t parts_uid;
} group_job;

/* Compiles a group into st: how many stages, 0 with the reason. */
typedef int (*group_compiler)(parts* s, const group_job* j, hipe_stage* st);

static int compile_pointwise_group(parts* s, const group_job* j, hipe_stage* st) {
    memset(st, 0, sizeof(*st));
    st->kind = HIPE_STAGE_POINTWISE;
    if (!hipe_compile_pointwise(j->sub, &st->pw, s->why, s->len)) return 0;
    bind_pw(st);
    hipdnnSdkFormat(st->what, sizeof(st->what), "%d pointwise node%s fused", j->sub->num_nodes,
                    j->sub->num_nodes == 1 ? "" : "s");
    return 1;
}

static int compile_softmax_group(parts* s, const group_job* j, hipe_stage* st) {
    const hipdnnSdkGraph* g = s->g;
    const hipdnnSdkNode* nodes[5];
    for (int k = 0; k < 5; ++k) /* the same nodes in the sub-graph, by position */
        for (int32_t i = 0, at = 0; i < g->num_nodes; ++i)
            if (j->in[i]) {
                if (&g->nodes[i] == s->softmax[s->gsoftmax[j->grp]][k]) nodes[k] = &j->sub->nodes[at];
                ++at;
            }
    return hipe_rw_softmax(j->sub, nodes, st, s->why, s->len);
}

/* The sub-graph's node that is_main picks, NULL for none (the last, where several). */
static const hipdnnSdkNode* main_node(const hipdnnSdkGraph* sub, bool (*is_main)(int kind)) {
    const hipdnnSdkNode* main = NULL;
    for (int32_t i = 0; i < sub->num_nodes; ++i)
        if (is_main(sub->nodes[i].kind)) main = &sub->nodes[i];
    return main;
}

static bool is_norm(int kind) { return kind == HIPDNN_OP_NORM_FORWARD; }

static int compile_norm_group(parts* s, const group_job* j, hipe_stage* st) {
    const hipdnnSdkNode* norm = main_node(j->sub, is_norm);
    hipe_plan* ep = NULL;
    if (norm && j->sub->num_nodes > 1 && !(ep = compile_epilogue(j->sub, norm, false, s->why, s->len)))
        return 0;
    int made = norm ? hipe_rw_norm(j->sub, norm, ep, st, s->why, s->len)
                    : decline(s->why, s->len, "internal: norm group without its norm");
    free(ep);
    return made;
}

static int compile_gemm_group(parts* s, const group_job* j, hipe_stage* st) {
    const hipdnnSdkNode* mm = main_node(j->sub, is_product);
    hipe_plan* ep = NULL;
    if (mm && j->sub->num_nodes > 1 && !(ep = compile_epilogue(j->sub, mm, true, s->why, s->len)))
        return 0;
    int made = mm ? hipe_gm_compile(j->sub, mm, ep, s->knobs, j->parts_uid, j->parts_bytes, st,
                                    s->why, s->len)
                  : decline(s->why, s->len, "internal: matmul group without its matmul");
    free(ep);
    return made;
}

static int compile_reduction_group(parts* s, const group_job* j, hipe_stage* st) {
    return hipe_rw_reduction(j->sub, &j->sub->nodes[0], j->parts_uid, j->parts_bytes, st, s->why,
                             s->len);
}

static int compile_resample_group(parts* s, const group_job* j, hipe_stage* st) {
    return hipe_rs_compile(j->sub, &j->sub->nodes[0], st, s->why, s->len);
}

static bool is_norm_bwd(int kind) { return kind == HIPDNN_OP_NORM_BACKWARD; }

static int compile_norm_bwd_group(parts* s, const group_job* j, hipe_stage* st) {
    const hipdnnSdkNode* nb = main_node(j->sub, is_norm_bwd);
    hipe_plan* ep = NULL;
    if (nb && j->sub->num_nodes > 1 && !(ep = compile_epilogue(j->sub, nb, false, s->why, s->len)))
        return 0;
    int made = nb ? hipe_rw_norm_backward(j->sub, nb, ep, st, s->why, s->len)
                  : decline(s->why, s->len, "internal: norm backward group without its node");
    free(ep);
    return made;
}

static int compile_attention_group(parts* s, const group_job* j, hipe_stage* st) {
    const hipdnnSdkNode* n = &j->sub->nodes[0];
    if (n->kind == HIPDNN_OP_SDPA_BWD)
        return hipe_fab_compile(j->sub, n, j->parts_uid, j->parts_bytes, st, s->why, s->len);
    return hipe_fa_compile(j->sub, n, j->parts_uid, j->parts_bytes, st, s->why, s->len);
}

/* Each kind of group: the family of kernels it runs (for messages) and its compiler. */
static const struct {
    const char* kernels;
    group_compiler compile;
} k_groups[G_KINDS] = {
    [G_POINTWISE] = {"pointwise", compile_pointwise_group},
    [G_SOFTMAX] = {"row-wise", compile_softmax_group},
    [G_NORM] = {"row-wise", compile_norm_group},
    [G_REDUCTION] = {"row-wise", compile_reduction_group},
    [G_RESAMPLE] = {"pooling", compile_resample_group},
    [G_NORM_BWD] = {"row-wise", compile_norm_bwd_group},
    [G_GEMM] = {"matmul", compile_gemm_group},
    [G_ATTENTION] = {"attention", compile_attention_group},
};

/* ---- compiling a group ------------------------------------------------------------------------ */

/* Every kernel but the pointwise ones is compiled at run time: with no compiler there is
 * none precompiled, and another engine takes the graph.  False with the reason. */
static bool run_time_compiler_ok(parts* s, int grp) {
    const hipdnnSdkGraph* g = s->g;
    char rtc[HIPE_MSG_LEN], nl[160];
    if (s->gkind[grp] == G_POINTWISE || hipe_rtc_available(rtc, sizeof(rtc))) return true;
    int32_t first = 0;
    while (first < g->num_nodes - 1 && s->group[first] != grp) ++first;
    return decline(s->why, s->len, "%s: %s kernels are compiled at run time and %s",
                   stg_label(&g->nodes[first], nl, sizeof(nl)), k_groups[s->gkind[grp]].kernels, rtc);
}

int stg_compile_group(parts* s, int grp, hipe_stage* st, size_t* parts_bytes, int64_t parts_uid) {
    const hipdnnSdkGraph* g = s->g;
    if (!run_time_compiler_ok(s, grp)) return 0;
    bool* in = calloc((size_t)g->num_nodes, sizeof(bool));
    if (!in) return decline(s->why, s->len, "out of memory while compiling graph '%s'", g->name);
    for (int32_t k = 0; k < g->num_nodes; ++k) in[k] = s->group[k] == grp;
    hipdnnSdkGraph* sub = stg_subgraph(s, in);
    if (!sub) {
        free(in);
        return decline(s->why, s->len, "out of memory while compiling graph '%s'", g->name);
    }
    const group_job job = {.grp = grp, .sub = sub, .in = in, .parts_bytes = parts_bytes,
                           .parts_uid = parts_uid};
    const int made = k_groups[s->gkind[grp]].compile(s, &job, st);
    hipdnnSdkGraphFree(sub);
    free(in);
    return made;
}
