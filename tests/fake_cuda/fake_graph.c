/* fake_graph.c — stream capture and graphs for the fake driver (fake_cuda.c), so that the
 * backend's graph capture (csrc/backend/graph_capture.c) is tested without a GPU.
 *
 * A stream that captures records what is enqueued on it instead of doing it: copies,
 * fills, and the emulated kernels of the hip engine's host emulation, which enqueue
 * through fakeCudaLaunch (a test-only entry point: a host function with its arguments
 * copied, as a real launch copies kernel parameters).  Graphs are lists run in order
 * (a single stream's capture is a chain); a child-graph node owns a copy of its graph.
 * What a real driver refuses during a capture, this one refuses too, with the same
 * errors: allocating, freeing or synchronizing from the capturing thread (the capture
 * mode is taken as thread-local or stricter) invalidates the capture. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fake_calls.h"
#include "fake_graph.h"

#define EXPORT __attribute__((visibility("default")))

enum { NODE_KERNEL = 0, NODE_MEMCPY = 1, NODE_MEMSET = 2, NODE_GRAPH = 4 };
enum { CAPTURE_NONE = 0, CAPTURE_ACTIVE = 1, CAPTURE_INVALIDATED = 2 };

typedef struct fake_graph fake_graph;
typedef struct fake_node {
    int type;
    unsigned long serial;           /* the node's identity: its copies (clones) keep it */
    fake_graph* owner;
    const struct fake_node* origin; /* in an instantiated graph: the node it copies */
    void (*fn)(const void*);        /* KERNEL: the emulated kernel and its arguments */
    void* args;
    size_t size;
    uintptr_t dst, src; /* MEMCPY, MEMSET */
    size_t bytes;
    unsigned char value;
    fake_graph* child; /* GRAPH: owned */
} fake_node;

struct fake_graph {
    int n, cap;
    fake_node** nodes;
};

struct fake_stream {
    int capture;
    fake_graph* graph;
};

/* The streams this thread is capturing on (thread-local mode). */
#define MAX_CAPTURES 16
static _Thread_local fake_stream* t_capturing[MAX_CAPTURES];
static _Thread_local int t_num_capturing;

static fake_graph* graph_new(void) { return calloc(1, sizeof(fake_graph)); }

static void node_free(fake_node* n);

static void graph_free(fake_graph* g) {
    if (!g) return;
    for (int i = 0; i < g->n; ++i) node_free(g->nodes[i]);
    free(g->nodes);
    free(g);
}

static void node_free(fake_node* n) {
    free(n->args);
    graph_free(n->child);
    free(n);
}

static fake_node* graph_append(fake_graph* g, int type) {
    if (g->n == g->cap) {
        int cap = g->cap ? 2 * g->cap : 8;
        fake_node** v = realloc(g->nodes, (size_t)cap * sizeof(*v));
        if (!v) return NULL;
        g->nodes = v;
        g->cap = cap;
    }
    fake_node* n = calloc(1, sizeof(*n));
    if (!n) return NULL;
    static unsigned long serials;
    n->type = type;
    n->serial = __atomic_add_fetch(&serials, 1, __ATOMIC_RELAXED);
    n->owner = g;
    g->nodes[g->n++] = n;
    return n;
}

static fake_graph* graph_clone(const fake_graph* g, int keep_origin) {
    fake_graph* c = graph_new();
    for (int i = 0; c && i < g->n; ++i) {
        const fake_node* s = g->nodes[i];
        fake_node* d = graph_append(c, s->type);
        if (!d) {
            graph_free(c);
            return NULL;
        }
        fake_graph* owner = d->owner;
        *d = *s;
        d->owner = owner;
        d->origin = keep_origin ? s : NULL;
        d->args = s->size ? malloc(s->size) : NULL;
        if (d->args) memcpy(d->args, s->args, s->size);
        d->child = s->child ? graph_clone(s->child, 0) : NULL;
    }
    return c;
}

/* Same node types in the same order, children alike, and the same nodes: a node destroyed
 * and another added in its place is another node to CUDA's exec update, which then fails
 * (CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, seen on an H200 with CUDA 13). */
static int same_shape(const fake_graph* a, const fake_graph* b) {
    if (a->n != b->n) return 0;
    for (int i = 0; i < a->n; ++i)
        if (a->nodes[i]->type != b->nodes[i]->type ||
            a->nodes[i]->serial != b->nodes[i]->serial ||
            (a->nodes[i]->child && !same_shape(a->nodes[i]->child, b->nodes[i]->child)))
            return 0;
    return 1;
}

static void graph_run(const fake_graph* g) {
    for (int i = 0; i < g->n; ++i) {
        const fake_node* n = g->nodes[i];
        switch (n->type) {
        case NODE_KERNEL: n->fn(n->args); break;
        case NODE_MEMCPY: memmove((void*)n->dst, (const void*)n->src, n->bytes); break;
        case NODE_MEMSET: memset((void*)n->dst, n->value, n->bytes); break;
        case NODE_GRAPH: graph_run(n->child); break;
        default: break;
        }
    }
}

/* ---- capture ------------------------------------------------------------------------ */

int fake_stream_capturing(fake_stream* s) { return s && s->capture != CAPTURE_NONE; }

static void invalidate(fake_stream* s) {
    if (s && s->capture == CAPTURE_ACTIVE) s->capture = CAPTURE_INVALIDATED;
}

int fake_capture_forbids(fake_stream* s) {
    if (fake_stream_capturing(s)) {
        invalidate(s);
        return 1;
    }
    if (!t_num_capturing) return 0;
    for (int i = 0; i < t_num_capturing; ++i) invalidate(t_capturing[i]);
    return 1;
}

int fake_capture_copy(fake_stream* s, uintptr_t dst, uintptr_t src, size_t bytes, int fill,
                      unsigned char value) {
    if (s->capture == CAPTURE_INVALIDATED) return FAKE_CAPTURE_INVALIDATED;
    fake_node* n = graph_append(s->graph, fill ? NODE_MEMSET : NODE_MEMCPY);
    if (!n) return FAKE_OUT_OF_MEMORY;
    n->dst = dst;
    n->src = src;
    n->bytes = bytes;
    n->value = value;
    return 0;
}

fake_stream* fake_stream_new(void) { return calloc(1, sizeof(fake_stream)); }

void fake_stream_free(fake_stream* s) {
    if (!s) return;
    graph_free(s->graph);
    free(s);
}

EXPORT int cuStreamBeginCapture_v2(fake_stream* s, int mode) {
    FAKE_CALLED();
    (void)mode;
    if (!s) return FAKE_CAPTURE_UNSUPPORTED; /* the legacy default stream cannot capture */
    if (s->capture != CAPTURE_NONE || t_num_capturing == MAX_CAPTURES) return FAKE_INVALID_VALUE;
    s->graph = graph_new();
    if (!s->graph) return FAKE_OUT_OF_MEMORY;
    s->capture = CAPTURE_ACTIVE;
    t_capturing[t_num_capturing++] = s;
    return 0;
}

EXPORT int cuStreamEndCapture(fake_stream* s, fake_graph** graph) {
    FAKE_CALLED();
    *graph = NULL;
    if (!s || s->capture == CAPTURE_NONE) return FAKE_ILLEGAL_STATE;
    for (int i = 0; i < t_num_capturing; ++i)
        if (t_capturing[i] == s) t_capturing[i] = t_capturing[--t_num_capturing];
    int ok = s->capture == CAPTURE_ACTIVE;
    s->capture = CAPTURE_NONE;
    if (ok) *graph = s->graph;
    else graph_free(s->graph);
    s->graph = NULL;
    return ok ? 0 : FAKE_CAPTURE_INVALIDATED;
}

EXPORT int cuStreamIsCapturing(fake_stream* s, int* status) {
    FAKE_CALLED();
    *status = s ? s->capture : CAPTURE_NONE;
    return 0;
}

/* Test-only: the emulation's kernel launch.  Capturing: recorded with a copy of its
 * arguments; else run now (the fake driver does work at once). */
EXPORT int fakeCudaLaunch(fake_stream* s, void (*fn)(const void*), const void* args,
                          size_t size) {
    FAKE_CALLED();
    if (!fake_stream_capturing(s)) {
        fn(args);
        return 0;
    }
    if (s->capture == CAPTURE_INVALIDATED) return FAKE_CAPTURE_INVALIDATED;
    fake_node* n = graph_append(s->graph, NODE_KERNEL);
    if (!n) return FAKE_OUT_OF_MEMORY;
    n->fn = fn;
    n->size = size;
    n->args = malloc(size ? size : 1);
    if (!n->args) return FAKE_OUT_OF_MEMORY;
    memcpy(n->args, args, size);
    return 0;
}

/* ---- graphs ------------------------------------------------------------------------- */

EXPORT int cuGraphCreate(fake_graph** g, unsigned flags) {
    FAKE_CALLED();
    (void)flags;
    *g = graph_new();
    return *g ? 0 : FAKE_OUT_OF_MEMORY;
}

EXPORT int cuGraphDestroy(fake_graph* g) {
    FAKE_CALLED();
    graph_free(g);
    return 0;
}

static int owns(const fake_graph* g, const fake_node* n) {
    for (int i = 0; i < g->n; ++i)
        if (g->nodes[i] == n) return 1;
    return 0;
}

EXPORT int cuGraphAddChildGraphNode(fake_node** node, fake_graph* g, fake_node* const* deps,
                                    size_t ndeps, const fake_graph* child) {
    FAKE_CALLED();
    if (!g || !child) return FAKE_INVALID_VALUE;
    for (size_t i = 0; i < ndeps; ++i)
        if (!owns(g, deps[i])) return FAKE_INVALID_VALUE;
    fake_graph* copy = graph_clone(child, 0);
    fake_node* n = copy ? graph_append(g, NODE_GRAPH) : NULL;
    if (!n) {
        graph_free(copy);
        return FAKE_OUT_OF_MEMORY;
    }
    n->child = copy;
    *node = n;
    return 0;
}

EXPORT int cuGraphGetNodes(const fake_graph* g, fake_node** nodes, size_t* num) {
    FAKE_CALLED();
    if (!g || !num) return FAKE_INVALID_VALUE;
    if (nodes) {
        size_t k = 0;
        for (; k < *num && k < (size_t)g->n; ++k) nodes[k] = g->nodes[k];
        for (size_t i = k; i < *num; ++i) nodes[i] = NULL;
        *num = k;
    } else {
        *num = (size_t)g->n;
    }
    return 0;
}

EXPORT int cuGraphNodeGetType(const fake_node* n, int* type) {
    FAKE_CALLED();
    if (!n) return FAKE_INVALID_VALUE;
    *type = n->type;
    return 0;
}

EXPORT int cuGraphChildGraphNodeGetGraph(const fake_node* n, fake_graph** g) {
    FAKE_CALLED();
    if (!n || n->type != NODE_GRAPH) return FAKE_INVALID_VALUE;
    *g = n->child;
    return 0;
}

EXPORT int cuGraphDestroyNode(fake_node* n) {
    FAKE_CALLED();
    if (!n) return FAKE_INVALID_VALUE;
    fake_graph* g = n->owner;
    int at = 0;
    while (at < g->n && g->nodes[at] != n) ++at;
    if (at == g->n) return FAKE_INVALID_VALUE;
    memmove(&g->nodes[at], &g->nodes[at + 1], (size_t)(g->n - at - 1) * sizeof(*g->nodes));
    --g->n;
    node_free(n);
    return 0;
}

/* An instantiated graph is a copy whose nodes remember the node each copies. */
EXPORT int cuGraphInstantiateWithFlags(fake_graph** exec, const fake_graph* g,
                                       unsigned long long flags) {
    FAKE_CALLED();
    (void)flags;
    *exec = g ? graph_clone(g, 1) : NULL;
    return *exec ? 0 : FAKE_INVALID_VALUE;
}

EXPORT int cuGraphExecDestroy(fake_graph* exec) {
    FAKE_CALLED();
    graph_free(exec);
    return 0;
}

EXPORT int cuGraphLaunch(const fake_graph* exec, fake_stream* s) {
    FAKE_CALLED();
    if (!exec) return FAKE_INVALID_VALUE;
    if (fake_stream_capturing(s)) return FAKE_CAPTURE_UNSUPPORTED; /* not emulated */
    graph_run(exec);
    return 0;
}

/* As cuGraphExecUpdate requires: the new child graph has the shape of the one the
 * instantiated node holds; its parameters (kernel arguments, pointers) are taken. */
EXPORT int cuGraphExecChildGraphNodeSetParams(fake_graph* exec, const fake_node* node,
                                              const fake_graph* child) {
    FAKE_CALLED();
    if (!exec || !node || !child) return FAKE_INVALID_VALUE;
    for (int i = 0; i < exec->n; ++i) {
        fake_node* n = exec->nodes[i];
        if (n->origin != node) continue;
        if (n->type != NODE_GRAPH) return FAKE_INVALID_VALUE;
        if (!same_shape(n->child, child)) return FAKE_GRAPH_EXEC_UPDATE_FAILURE;
        fake_graph* copy = graph_clone(child, 0);
        if (!copy) return FAKE_OUT_OF_MEMORY;
        graph_free(n->child);
        n->child = copy;
        return 0;
    }
    return FAKE_INVALID_VALUE;
}

/* ---- node parameters (the driver's structures, here the fake's own) ------------------ */

typedef struct {
    void (*fn)(const void*);
    const void* args;
    size_t size;
    uintptr_t dst, src;
    size_t bytes;
    unsigned char value;
} fake_params;

static int params_get(const fake_node* n, int type, fake_params* p) {
    if (!n || !p || n->type != type) return FAKE_INVALID_VALUE;
    *p = (fake_params){n->fn, n->args, n->size, n->dst, n->src, n->bytes, n->value};
    return 0;
}

static int params_set(fake_node* n, int type, const fake_params* p) {
    if (!n || !p || n->type != type) return FAKE_INVALID_VALUE;
    if (type == NODE_KERNEL) {
        void* args = malloc(p->size ? p->size : 1);
        if (!args) return FAKE_OUT_OF_MEMORY;
        memcpy(args, p->args, p->size);
        free(n->args);
        n->args = args;
        n->fn = p->fn;
        n->size = p->size;
    } else {
        n->dst = p->dst;
        n->src = p->src;
        n->bytes = p->bytes;
        n->value = p->value;
    }
    return 0;
}

EXPORT int cuGraphKernelNodeGetParams_v2(const fake_node* n, fake_params* p) {
    FAKE_CALLED();
    return params_get(n, NODE_KERNEL, p);
}
EXPORT int cuGraphKernelNodeSetParams_v2(fake_node* n, const fake_params* p) {
    FAKE_CALLED();
    return params_set(n, NODE_KERNEL, p);
}
EXPORT int cuGraphMemcpyNodeGetParams(const fake_node* n, fake_params* p) {
    FAKE_CALLED();
    return params_get(n, NODE_MEMCPY, p);
}
EXPORT int cuGraphMemcpyNodeSetParams(fake_node* n, const fake_params* p) {
    FAKE_CALLED();
    return params_set(n, NODE_MEMCPY, p);
}
EXPORT int cuGraphMemsetNodeGetParams(const fake_node* n, fake_params* p) {
    FAKE_CALLED();
    return params_get(n, NODE_MEMSET, p);
}
EXPORT int cuGraphMemsetNodeSetParams(fake_node* n, const fake_params* p) {
    FAKE_CALLED();
    return params_set(n, NODE_MEMSET, p);
}
