/* Operations the engine runs as graphs of the ones it has kernels for: a rewrite of the
 * graph before it is cut into stages (staged.c).  This file holds the rewrite itself,
 * which finds each node's op in the op families' tables (each op with the check that says
 * a node of it is rewritten, and its lowering), and the builder the families write the
 * rewritten graph with (lower.h).  The families (each file's table names its ops):
 *
 *   lower_norm_backward.c  norm backward (layer, RMS, instance, batch, adaptive layer);
 *   lower_batchnorm.c      batchnorm training's running statistics, batchnorm training and
 *                          backward over few channels, per-channel statistics;
 *   lower_movement.c       data movement: identity copies through views.
 *
 * Every added tensor is float32 and virtual unless said otherwise, every added node
 * computes in float32, so the rewritten graph goes through the same checks, stage cutting
 * and kernels as one a user wrote. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"

static bool grow(void** p, int32_t* cap, int32_t need, size_t size) {
    if (need <= *cap) return true;
    int32_t cap2 = *cap ? *cap * 2 : 16;
    while (cap2 < need) cap2 *= 2;
    void* q = realloc(*p, (size_t)cap2 * size);
    if (!q) return false;
    *p = q;
    *cap = cap2;
    return true;
}

/* The tensor of uid in the rewritten graph (linear: graphs are small). */
hipdnnSdkTensor* lw_tensor(lowering* l, int64_t uid) {
    for (int32_t i = 0; i < l->g->num_tensors; ++i)
        if (l->g->tensors[i].uid == uid) return &l->g->tensors[i];
    return NULL;
}

static char* name_of(const char* base, const char* what) {
    size_t n = strlen(base) + strlen(what) + 2;
    char* s = malloc(n);
    if (s) hipdnnSdkFormat(s, n, "%s/%s", base, what);
    return s;
}

/* A new tensor; its uid, or HIPDNN_NO_TENSOR when out of memory.  strides NULL: packed. */
int64_t lw_add_tensor(lowering* l, const char* base, const char* what, hipdnnDataType_t dt,
                          int32_t ndim, const int64_t* dims, const int64_t* strides,
                          bool is_virtual) {
    if (l->oom || !grow((void**)&l->g->tensors, &l->tcap, l->g->num_tensors + 1,
                        sizeof(hipdnnSdkTensor))) {
        l->oom = true;
        return HIPDNN_NO_TENSOR;
    }
    hipdnnSdkTensor* t = &l->g->tensors[l->g->num_tensors];
    memset(t, 0, sizeof(*t));
    t->name = name_of(base, what);
    if (!t->name) {
        l->oom = true;
        return HIPDNN_NO_TENSOR;
    }
    l->g->num_tensors++;
    t->uid = l->next_uid++;
    t->data_type = dt;
    t->ndim = ndim;
    memcpy(t->dims, dims, (size_t)ndim * sizeof(int64_t));
    if (strides) memcpy(t->strides, strides, (size_t)ndim * sizeof(int64_t));
    else hipdnnSdkPackedStrides(ndim, t->dims, t->strides);
    t->is_virtual = is_virtual;
    return t->uid;
}

/* A float32 constant (a pass-by-value scalar). */
int64_t lw_add_const(lowering* l, const char* base, const char* what, double v) {
    const int64_t one = 1;
    int64_t uid = lw_add_tensor(l, base, what, HIPDNN_DATA_FLOAT, 1, &one, NULL, false);
    if (uid == HIPDNN_NO_TENSOR) return uid;
    hipdnnSdkTensor* t = lw_tensor(l, uid);
    t->is_by_value = true;
    t->has_value = true;
    const float f = (float)v; /* value is bytes, not aligned for a float */
    memcpy(t->value, &f, sizeof(f));
    return uid;
}

/* Appends node n (its name is taken over, or made from base/what). */
bool lw_push(lowering* l, hipdnnSdkNode* n, const char* base, const char* what) {
    if (what) n->name = name_of(base, what);
    if (l->oom || !n->name || !grow((void**)&l->g->nodes, &l->ncap, l->g->num_nodes + 1,
                                    sizeof(hipdnnSdkNode))) {
        if (what) free(n->name);
        l->oom = true;
        return false;
    }
    l->g->nodes[l->g->num_nodes++] = *n;
    return true;
}

/* A pointwise node out = mode(a[, b]); out HIPDNN_NO_TENSOR: a new virtual tensor shaped as
 * `like`.  Its output uid. */
int64_t lw_pw(lowering* l, const char* base, const char* what, hipdnnPointwiseMode_t mode,
                  int64_t a, int64_t b, int64_t out, int64_t like) {
    if (out == HIPDNN_NO_TENSOR) {
        const hipdnnSdkTensor* t = lw_tensor(l, like);
        if (!t) {
            l->oom = true;
            return HIPDNN_NO_TENSOR;
        }
        int64_t dims[HIPDNN_MAX_DIMS];
        int32_t nd = t->ndim;
        memcpy(dims, t->dims, sizeof(dims));
        out = lw_add_tensor(l, base, what, HIPDNN_DATA_FLOAT, nd, dims, NULL, true);
        if (out == HIPDNN_NO_TENSOR) return out;
    }
    hipdnnSdkNode n;
    hipdnnSdkNodeInit(&n, HIPDNN_OP_POINTWISE);
    n.compute_type = HIPDNN_DATA_FLOAT;
    n.attrs[HIPDNN_PW_MODE].i[0] = mode;
    n.attrs[HIPDNN_PW_MODE].count = 1;
    n.inputs[HIPDNN_PW_X] = a;
    if (b != HIPDNN_NO_TENSOR) n.inputs[HIPDNN_PW_B] = b;
    n.outputs[HIPDNN_PW_Y] = out;
    return lw_push(l, &n, base, what) ? out : HIPDNN_NO_TENSOR;
}

/* A reduction of x to `dims` (x's rank, 1 on the reduced axes); out HIPDNN_NO_TENSOR: a new
 * virtual tensor. */
int64_t lw_reduce(lowering* l, const char* base, const char* what, int64_t mode, int64_t x,
                      const int64_t* dims, int64_t out) {
    const hipdnnSdkTensor* tx = lw_tensor(l, x);
    if (!tx) {
        l->oom = true;
        return HIPDNN_NO_TENSOR;
    }
    if (out == HIPDNN_NO_TENSOR) {
        out = lw_add_tensor(l, base, what, HIPDNN_DATA_FLOAT, lw_tensor(l, x)->ndim, dims, NULL, true);
        if (out == HIPDNN_NO_TENSOR) return out;
    }
    hipdnnSdkNode n;
    hipdnnSdkNodeInit(&n, HIPDNN_OP_REDUCTION);
    n.compute_type = HIPDNN_DATA_FLOAT;
    n.attrs[HIPDNN_RED_MODE].i[0] = mode;
    n.attrs[HIPDNN_RED_MODE].count = 1;
    n.inputs[HIPDNN_RED_X] = x;
    n.outputs[HIPDNN_RED_Y] = out;
    return lw_push(l, &n, base, what) ? out : HIPDNN_NO_TENSOR;
}

/* Whether the elements fill [0, count) exactly: packed in some order of the dims. */
bool lw_dense(int32_t nd, const int64_t* dims, const int64_t* strides) {
    int32_t order[HIPDNN_MAX_DIMS], n = 0;
    for (int32_t i = 0; i < nd; ++i)
        if (dims[i] > 1) order[n++] = i;
    for (int32_t i = 1; i < n; ++i) /* insertion sort, ascending stride */
        for (int32_t k = i; k > 0 && strides[order[k]] < strides[order[k - 1]]; --k) {
            int32_t t = order[k];
            order[k] = order[k - 1];
            order[k - 1] = t;
        }
    int64_t want = 1;
    for (int32_t i = 0; i < n; ++i) {
        if (strides[order[i]] != want) return false;
        want *= dims[order[i]];
    }
    return true;
}

/* Keeps virtual tensor uid in the workspace: real for every stage, packed unless its strides
 * already are dense (a view may describe them). */
bool lw_keep_in_workspace(lowering* l, int64_t uid) {
    hipdnnSdkTensor* t = lw_tensor(l, uid);
    if (!t) return false;
    if (!t->is_virtual) return true;
    for (int i = 0; i < l->nws; ++i)
        if (l->ws[i] == uid) return true;
    if (!grow((void**)&l->ws, &l->wcap, l->nws + 1, sizeof(int64_t))) {
        l->oom = true;
        return false;
    }
    t->is_virtual = false;
    if (!lw_dense(t->ndim, t->dims, t->strides))
        hipdnnSdkPackedStrides(t->ndim, t->dims, t->strides);
    l->ws[l->nws++] = uid;
    return true;
}

/* A view of tensor `base`'s memory (kept in the workspace if virtual): dims and strides
 * in elements, from `offset` elements on.  Its uid. */
int64_t lw_view(lowering* l, const char* name, const char* what, int64_t base, int32_t ndim,
                    const int64_t* dims, const int64_t* strides, int64_t offset) {
    if (!lw_keep_in_workspace(l, base) ||
        !grow((void**)&l->alias, &l->acap, l->nalias + 1, sizeof(hipe_alias))) {
        l->oom = true;
        return HIPDNN_NO_TENSOR;
    }
    const hipdnnSdkTensor* b = lw_tensor(l, base);
    int64_t uid = lw_add_tensor(l, name, what, b->data_type, ndim, dims, strides, false);
    if (uid == HIPDNN_NO_TENSOR) return uid;
    hipe_alias* a = &l->alias[l->nalias++];
    a->uid = uid;
    a->base = base;
    a->byte_offset = offset * (int64_t)hipdnnSdkDataTypeSize(lw_tensor(l, base)->data_type);
    return uid;
}


/* ---- the rewrite ----------------------------------------------------------------------- */

/* Each family's ops, with the check that says a node of one is rewritten and its
 * lowering (lower.h). */
static const lowered_op* const k_families[] = {lower_norm_backward_ops, lower_batchnorm_ops,
                                               lower_movement_ops};

/* How node n of graph g is rewritten; NULL: it is kept. */
static const lowered_op* lowering_of(const hipdnnSdkGraph* g, const hipdnnSdkNode* n) {
    for (size_t f = 0; f < sizeof(k_families) / sizeof(k_families[0]); ++f)
        for (const lowered_op* op = k_families[f]; op->lower; ++op)
            if (op->kind == n->kind) return !op->needs || op->needs(g, n) ? op : NULL;
    return NULL;
}

void hipe_lowered_free(hipe_lowered* lw) {
    hipdnnSdkGraphFree(lw->graph);
    free(lw->alias);
    free(lw->ws);
    memset(lw, 0, sizeof(*lw));
}

bool hipe_lower(const hipdnnSdkGraph* g, hipe_lowered* lw, char* why, size_t len) {
    memset(lw, 0, sizeof(*lw));
    bool any = false;
    for (int32_t i = 0; i < g->num_nodes; ++i) any = any || lowering_of(g, &g->nodes[i]);
    if (!any) return true;
    lowering l = {.orig = g, .why = why, .len = len};
    l.g = hipdnnSdkGraphClone(g);
    if (!l.g) return decline(why, len, "out of memory while compiling graph '%s'", g->name);
    l.tcap = l.g->num_tensors;
    for (int32_t i = 0; i < g->num_tensors; ++i)
        if (g->tensors[i].uid >= l.next_uid) l.next_uid = g->tensors[i].uid + 1;
    if (l.next_uid < 1) l.next_uid = 1;
    hipdnnSdkNode* old = l.g->nodes; /* the clone's nodes; their names move or are freed */
    const int32_t nold = l.g->num_nodes;
    l.g->nodes = NULL;
    l.g->num_nodes = 0;
    bool ok = true;
    for (int32_t i = 0; i < nold && ok; ++i) {
        hipdnnSdkNode* n = &old[i];
        const lowered_op* op = lowering_of(g, n);
        if (op) {
            ok = op->lower(&l, n);
        } else {
            ok = lw_push(&l, n, NULL, NULL);
            if (ok) n->name = NULL; /* moved */
        }
        if (l.oom && ok) ok = false;
        if (l.oom) decline(why, len, "out of memory while compiling graph '%s'", g->name);
    }
    for (int32_t k = 0; k < nold; ++k) free(old[k].name);
    free(old);
    if (!ok) {
        hipdnnSdkGraphFree(l.g);
        free(l.alias);
        free(l.ws);
        return false;
    }
    lw->graph = l.g;
    lw->alias = l.alias;
    lw->nalias = l.nalias;
    lw->ws = l.ws;
    lw->nws = l.nws;
    return true;
}
