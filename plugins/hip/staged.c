/* Graphs with reductions and norms: cutting them into stages (staged.h), the workspace
 * between stages, and which nodes of the graph given each stage runs.  The graph's
 * structure, the grouping of its nodes and the running of the stages have files of their
 * own (staged_graph.h lists them).
 *
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

#include "staged_graph.h"

/* ---- the engine's entry: one fused kernel, or stages ------------------------------------- */

bool hipe_compile(const hipdnnSdkGraph* g, const hipe_knobs* knobs, hipe_plan* plan, char* why,
                  size_t len) {
    for (int32_t i = 0; g && g->nodes && i < g->num_nodes; ++i)
        if (g->nodes[i].kind != HIPDNN_OP_POINTWISE &&
            g->nodes[i].kind != HIPDNN_OP_BATCHNORM_INFERENCE)
            return hipe_staged_compile(g, knobs, plan, why, len);
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

/* A uid for the parts' buffer of a split reduction: one no tensor of the graph has, and
 * after `last` (the previous one), so that each buffer has its own. */
static int64_t free_uid(const parts* s, int64_t last) {
    int64_t uid = last + 1;
    while (hipdnnSdkUidMapFind(&s->map, uid) >= 0) ++uid;
    return uid;
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

/* ---- the stages ---------------------------------------------------------------------------- */

/* The working state of one compile, with the uid map checked (no uid twice); false with
 * the reason. */
static bool parts_init(parts* s) {
    const hipdnnSdkGraph* g = s->g;
    const size_t nt = (size_t)(g->num_tensors > 0 ? g->num_tensors : 1);
    const size_t nn = (size_t)g->num_nodes;
    s->producer = calloc(nt, sizeof(int32_t));
    s->readers = calloc(nt, sizeof(int32_t));
    s->group = calloc(nn, sizeof(int32_t));
    s->gkind = calloc(nn, sizeof(int32_t));
    s->gsoftmax = calloc(nn, sizeof(int32_t));
    s->in = calloc(nn, sizeof(bool));
    if (!s->producer || !s->readers || !s->group || !s->gkind || !s->gsoftmax || !s->in ||
        !hipdnnSdkUidMapInit(&s->map, g))
        return decline(s->why, s->len, "out of memory while compiling graph '%s'", g->name);
    for (int32_t i = 0; i < g->num_tensors; ++i) {
        int32_t other = hipdnnSdkUidMapInsert(&s->map, i);
        if (other >= 0)
            return decline(s->why, s->len, "tensors '%s' and '%s' share uid %lld",
                           g->tensors[other].name, g->tensors[i].name, (long long)g->tensors[i].uid);
    }
    return true;
}

static void parts_free(parts* s) {
    hipdnnSdkUidMapFree(&s->map);
    free(s->producer);
    free(s->readers);
    free(s->group);
    free(s->gkind);
    free(s->gsoftmax);
    free(s->in);
}

/* Each group's stage(s), in the order of the group's first node: stage k comes from group
 * stage_group[k]; the parts of a reduction cut into them get a workspace buffer.  False
 * with the reason. */
static bool compile_stages(parts* s, struct hipe_staged* out, int* stage_group) {
    const hipdnnSdkGraph* g = s->g;
    bool* done = calloc((size_t)s->ngroups + 1, sizeof(bool));
    if (!done) return decline(s->why, s->len, "out of memory while compiling graph '%s'", g->name);
    int64_t parts_uid = HIPDNN_NO_TENSOR;
    bool ok = true;
    for (int32_t i = 0; ok && i < g->num_nodes; ++i) {
        int grp = s->group[i];
        if (grp < 0 || done[grp]) continue;
        done[grp] = true;
        size_t parts_bytes = 0;
        parts_uid = free_uid(s, parts_uid);
        int made = stg_compile_group(s, grp, &out->stages[out->nstages], &parts_bytes, parts_uid);
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
    return ok;
}

static void add_buffer(struct hipe_staged* out, const hipdnnSdkTensor* t) {
    hipe_buffer* b = &out->bufs[out->nbuf++];
    b->uid = t->uid;
    b->bytes = (size_t)hipdnnSdkElementCount(t->ndim, t->dims) * hipdnnSdkDataTypeSize(t->data_type);
}

/* The workspace: after the parts' buffers, the virtual tensors two stages share and the
 * tensors a view reads or writes (lw->ws), each at a 256-byte boundary. */
static void lay_out_workspace(parts* s, struct hipe_staged* out, const hipe_lowered* lw) {
    const hipdnnSdkGraph* g = s->g;
    for (int32_t t = 0; t < g->num_tensors; ++t) {
        const hipdnnSdkTensor* tt = &g->tensors[t];
        if (!tt->is_virtual || s->producer[t] < 0) continue;
        for (int32_t k = 0; k < g->num_nodes; ++k) s->in[k] = s->group[k] == s->group[s->producer[t]];
        if (stg_crosses(s, s->in, t)) add_buffer(out, tt);
    }
    for (int i = 0; i < lw->nws; ++i) add_buffer(out, hipdnnSdkGraphFindTensor(g, lw->ws[i]));
    size_t at = 0;
    for (int i = 0; i < out->nbuf; ++i) {
        out->bufs[i].offset = at;
        at = align_up(at + out->bufs[i].bytes);
    }
    out->workspace = at;
}

bool hipe_staged_compile(const hipdnnSdkGraph* orig, const hipe_knobs* knobs, hipe_plan* plan,
                         char* why, size_t len) {
    memset(plan, 0, sizeof(*plan));
    if (!orig || orig->num_nodes < 1 || !orig->nodes)
        return decline(why, len, "graph '%s' has no operations", orig && orig->name ? orig->name : "");
    hipe_lowered lw;
    if (!hipe_lower(orig, &lw, why, len)) return false;
    const hipdnnSdkGraph* g = lw.graph ? lw.graph : orig;
    const hipe_knobs none = {0};
    parts s = {.g = g, .knobs = knobs ? knobs : &none, .alias = lw.alias, .nalias = lw.nalias,
               .why = why, .len = len};
    const size_t nt = (size_t)(g->num_tensors > 0 ? g->num_tensors : 1);
    const size_t nn = (size_t)g->num_nodes;
    struct hipe_staged* out = calloc(1, sizeof(*out));
    if (out) {
        out->stages = calloc(2 * nn, sizeof(hipe_stage)); /* a reduction may take two */
        out->bufs = calloc(nt + nn, sizeof(hipe_buffer));
    }
    bool ok = parts_init(&s);
    if (ok && (!out || !out->stages || !out->bufs))
        ok = decline(why, len, "out of memory while compiling graph '%s'", g->name);
    ok = ok && stg_structure(&s) && stg_form_groups(&s);
    int* stage_group = ok ? calloc(2 * nn + 1, sizeof(int)) : NULL;
    if (ok && !stage_group) ok = decline(why, len, "out of memory while compiling graph '%s'", g->name);
    ok = ok && compile_stages(&s, out, stage_group);
    if (ok && !list_stage_nodes(&s, orig, lw.graph != NULL, out, stage_group))
        ok = decline(why, len, "out of memory while compiling graph '%s'", g->name);
    free(stage_group);
    if (ok) {
        lay_out_workspace(&s, out, &lw);
        out->alias = lw.alias;
        out->nalias = lw.nalias;
        lw.alias = NULL;
    }
    parts_free(&s);
    hipe_lowered_free(&lw);
    plan->staged = out;
    if (!ok) hipe_plan_free(plan);
    return ok;
}
