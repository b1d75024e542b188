/* fake_graph.c — stream capture and graphs for the fake driver (fake_cuda.c), so that the
 * backend's graph capture (csrc/backend/graph_capture.c) is tested without a GPU.
 *
 * A stream that captures records what is enqueued on it instead of doing it: copies,
 * fills, and the emulated kernels of the hip engine's host emulation, which enqueue
 * through fakeCudaLaunch (a test-only entry point: a host function with its arguments
 * copied, as a real launch copies kernel parameters).  Graphs are lists run in order
 * (a single stream's capture is a chain); a child-graph node owns a copy of its graph.
 * What a real driver refuses during a capture, this one refuses too, with the same
 * errors: allocating, freeing or synchronizing while a capture forbids it (CUDA's global,
 * thread-local and relaxed modes, below) invalidates the capture; an event recorded in a
 * capture forks the stream that waits on it into the capture, which must be joined back. */
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

/* ---- capture ------------------------------------------------------------------------
 * A capture sequence belongs to the stream that began it (its origin) and to every stream
 * that joined it by waiting on an event recorded in it (a fork); each of those must be
 * joined back (the origin waiting on an event recorded on it after its last work) before
 * the origin ends the capture, else CUDA_ERROR_STREAM_CAPTURE_UNJOINED.  What CUDA calls
 * "potentially unsafe" (allocating, freeing, synchronizing) is refused, and invalidates:
 *  - the capture of the stream it names, if that one captures (any mode);
 *  - unless the calling thread's interaction mode is relaxed (cuThreadExchangeStreamCaptureMode):
 *    the calling thread's own captures not begun relaxed, and, in the thread's default
 *    global mode, every capture begun global by another thread. */

enum { MODE_GLOBAL = 0, MODE_THREAD_LOCAL = 1, MODE_RELAXED = 2 };

typedef struct fake_capture {
    int state; /* CAPTURE_ACTIVE or CAPTURE_INVALIDATED */
    int mode;
    unsigned long seq; /* identity, for events that outlive it */
    pthread_t owner;   /* the thread that began it */
    fake_stream* origin;
    fake_graph* graph;
    fake_stream* forks[16]; /* the streams that joined it by an event */
    int nforks;
} fake_capture;

struct fake_stream {
    fake_capture* cap; /* the capture it belongs to, or NULL */
    long ops, joined;  /* a forked stream: work recorded on it; the count joined back (-1: none) */
};

/* Every capture in progress, in any thread (a real driver's process-wide view). */
#define MAX_CAPTURES 64
static fake_capture* g_caps[MAX_CAPTURES];
static int g_num_caps;
static pthread_mutex_t g_cap_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local int t_mode; /* this thread's interaction mode: global by default */

int fake_stream_capturing(fake_stream* s) {
    s = fake_stream_real(s);
    return s && s->cap;
}

static void invalidate(fake_capture* c) {
    if (c && c->state == CAPTURE_ACTIVE) c->state = CAPTURE_INVALIDATED;
}

/* Whether capture c forbids the calling thread's unsafe calls (the lock held). */
static int forbids_here(const fake_capture* c) {
    if (t_mode == MODE_RELAXED || c->mode == MODE_RELAXED) return 0;
    if (pthread_equal(c->owner, pthread_self())) return 1;
    return t_mode == MODE_GLOBAL && c->mode == MODE_GLOBAL;
}

int fake_capture_forbids(fake_stream* s) {
    s = fake_stream_real(s);
    pthread_mutex_lock(&g_cap_lock);
    int forbidden = 0;
    if (fake_stream_capturing(s)) {
        invalidate(s->cap);
        forbidden = 1;
    }
    for (int i = 0; i < g_num_caps; ++i)
        if (forbids_here(g_caps[i])) {
            invalidate(g_caps[i]);
            forbidden = 1;
        }
    pthread_mutex_unlock(&g_cap_lock);
    return forbidden;
}

/* A node of `type` recorded on capturing stream s (NULL with *err set). */
static fake_node* capture_append(fake_stream* s, int type, int* err) {
    pthread_mutex_lock(&g_cap_lock);
    fake_node* n = NULL;
    *err = s->cap->state == CAPTURE_INVALIDATED ? FAKE_CAPTURE_INVALIDATED : 0;
    if (!*err && !(n = graph_append(s->cap->graph, type))) *err = FAKE_OUT_OF_MEMORY;
    if (n) ++s->ops;
    pthread_mutex_unlock(&g_cap_lock);
    return n;
}

int fake_capture_copy(fake_stream* s, uintptr_t dst, uintptr_t src, size_t bytes, int fill,
                      unsigned char value) {
    s = fake_stream_real(s);
    int err;
    fake_node* n = capture_append(s, fill ? NODE_MEMSET : NODE_MEMCPY, &err);
    if (!n) return err;
    n->dst = dst;
    n->src = src;
    n->bytes = bytes;
    n->value = value;
    return 0;
}

/* The capture in progress with identity seq, or NULL (the lock held). */
static fake_capture* capture_of(unsigned long seq) {
    for (int i = 0; seq && i < g_num_caps; ++i)
        if (g_caps[i]->seq == seq) return g_caps[i];
    return NULL;
}

void fake_capture_mark_on(fake_stream* s, fake_capture_mark* m) {
    s = fake_stream_real(s);
    pthread_mutex_lock(&g_cap_lock);
    *m = (fake_capture_mark){0, NULL, 0};
    if (fake_stream_capturing(s)) *m = (fake_capture_mark){s->cap->seq, s, s->ops};
    pthread_mutex_unlock(&g_cap_lock);
}

int fake_capture_marked(const fake_capture_mark* m) {
    pthread_mutex_lock(&g_cap_lock);
    int live = capture_of(m->seq) != NULL;
    pthread_mutex_unlock(&g_cap_lock);
    return live;
}

int fake_capture_wait(fake_stream* s, const fake_capture_mark* m) {
    s = fake_stream_real(s);
    pthread_mutex_lock(&g_cap_lock);
    fake_capture* c = capture_of(m->seq);
    int r = 0;
    if (!c) {
        /* an event from outside any capture in progress: an ordinary wait */
    } else if (!s) {
        r = FAKE_CAPTURE_IMPLICIT; /* the legacy stream cannot join a capture */
    } else if (!s->cap) { /* a fork: s joins the capture, its work recorded there */
        if (c->nforks == (int)(sizeof(c->forks) / sizeof(c->forks[0]))) {
            pthread_mutex_unlock(&g_cap_lock);
            return FAKE_OUT_OF_MEMORY;
        }
        c->forks[c->nforks++] = s;
        s->cap = c;
        s->ops = 0;
        s->joined = -1;
    } else if (s->cap != c) {
        r = FAKE_CAPTURE_MERGE;
    } else if (m->stream != s && m->stream->joined < m->ops) {
        m->stream->joined = m->ops; /* a join: that stream's work up to the mark */
    }
    pthread_mutex_unlock(&g_cap_lock);
    return r;
}

/* The streams cuStreamCreate made and cuStreamDestroy has not taken back. */
#define MAX_STREAMS 4096
static fake_stream* g_streams[MAX_STREAMS];
static int g_num_streams;
static pthread_mutex_t g_stream_lock = PTHREAD_MUTEX_INITIALIZER;

fake_stream* fake_stream_real(fake_stream* s) {
    if ((uintptr_t)s <= 2) return NULL;
    pthread_mutex_lock(&g_stream_lock);
    int i = 0;
    while (i < g_num_streams && g_streams[i] != s) ++i;
    const int known = i < g_num_streams;
    pthread_mutex_unlock(&g_stream_lock);
    return known ? s : NULL;
}

fake_stream* fake_stream_new(void) {
    fake_stream* s = calloc(1, sizeof(fake_stream));
    pthread_mutex_lock(&g_stream_lock);
    if (s && g_num_streams < MAX_STREAMS) g_streams[g_num_streams++] = s;
    else if (s) free(s), s = NULL;
    pthread_mutex_unlock(&g_stream_lock);
    return s;
}

/* Takes s out of the live streams (s is one). */
static void stream_forget(fake_stream* s) {
    pthread_mutex_lock(&g_stream_lock);
    for (int i = 0; i < g_num_streams; ++i)
        if (g_streams[i] == s) {
            g_streams[i] = g_streams[--g_num_streams];
            break;
        }
    pthread_mutex_unlock(&g_stream_lock);
}

/* Takes capture c out of the process (the lock held): its streams leave it; c is freed,
 * its graph returned. */
static fake_graph* capture_drop(fake_capture* c) {
    for (int i = 0; i < c->nforks; ++i) c->forks[i]->cap = NULL;
    for (int i = 0; i < g_num_caps; ++i)
        if (g_caps[i] == c) g_caps[i] = g_caps[--g_num_caps];
    c->origin->cap = NULL;
    fake_graph* g = c->graph;
    free(c);
    return g;
}

void fake_stream_free(fake_stream* s) {
    s = fake_stream_real(s);
    if (!s) return;
    pthread_mutex_lock(&g_cap_lock);
    fake_capture* c = s->cap;
    fake_graph* g = NULL;
    if (c && c->origin == s) { /* its capture ends with it */
        g = capture_drop(c);
    } else if (c) { /* a forked stream leaves, its capture invalidated */
        for (int i = 0; i < c->nforks; ++i)
            if (c->forks[i] == s) c->forks[i] = c->forks[--c->nforks];
        invalidate(c);
    }
    pthread_mutex_unlock(&g_cap_lock);
    graph_free(g);
    stream_forget(s);
    free(s);
}

EXPORT int cuThreadExchangeStreamCaptureMode(int* mode) {
    FAKE_CALLED();
    if (!mode || *mode < MODE_GLOBAL || *mode > MODE_RELAXED) return FAKE_INVALID_VALUE;
    const int old = t_mode;
    t_mode = *mode;
    *mode = old;
    return 0;
}

EXPORT int cuStreamBeginCapture_v2(fake_stream* s, int mode) {
    s = fake_stream_real(s);
    FAKE_CALLED();
    if (!s) return FAKE_CAPTURE_UNSUPPORTED; /* the legacy default stream cannot capture */
    if (mode < MODE_GLOBAL || mode > MODE_RELAXED) return FAKE_INVALID_VALUE;
    static unsigned long seqs;
    pthread_mutex_lock(&g_cap_lock);
    int r = s->cap || g_num_caps == MAX_CAPTURES ? FAKE_INVALID_VALUE : 0;
    fake_capture* c = r ? NULL : calloc(1, sizeof(*c));
    fake_graph* g = c ? graph_new() : NULL;
    if (!r && !g) {
        free(c);
        r = FAKE_OUT_OF_MEMORY;
    }
    if (!r) {
        *c = (fake_capture){.state = CAPTURE_ACTIVE, .mode = mode, .seq = ++seqs,
                            .owner = pthread_self(), .origin = s, .graph = g};
        s->cap = c;
        g_caps[g_num_caps++] = c;
    }
    pthread_mutex_unlock(&g_cap_lock);
    return r;
}

EXPORT int cuStreamEndCapture(fake_stream* s, fake_graph** graph) {
    s = fake_stream_real(s);
    FAKE_CALLED();
    *graph = NULL;
    pthread_mutex_lock(&g_cap_lock);
    fake_capture* c = s ? s->cap : NULL;
    if (!c || c->origin != s) {
        pthread_mutex_unlock(&g_cap_lock);
        return FAKE_ILLEGAL_STATE;
    }
    if (c->mode != MODE_RELAXED && !pthread_equal(c->owner, pthread_self())) {
        invalidate(c); /* ended from another thread than began it */
        pthread_mutex_unlock(&g_cap_lock);
        return FAKE_CAPTURE_WRONG_THREAD;
    }
    int r = c->state == CAPTURE_ACTIVE ? 0 : FAKE_CAPTURE_INVALIDATED;
    for (int i = 0; i < c->nforks; ++i)
        if (!r && c->forks[i]->joined < c->forks[i]->ops) r = FAKE_CAPTURE_UNJOINED;
    fake_graph* g = capture_drop(c);
    pthread_mutex_unlock(&g_cap_lock);
    if (r) graph_free(g);
    else *graph = g;
    return r;
}

EXPORT int cuStreamIsCapturing(fake_stream* s, int* status) {
    s = fake_stream_real(s);
    FAKE_CALLED();
    pthread_mutex_lock(&g_cap_lock);
    *status = s && s->cap ? s->cap->state : CAPTURE_NONE;
    pthread_mutex_unlock(&g_cap_lock);
    return 0;
}

/* Test-only: the emulation's kernel launch.  Capturing: recorded with a copy of its
 * arguments; else run now (the fake driver does work at once). */
EXPORT int fakeCudaLaunch(fake_stream* s, void (*fn)(const void*), const void* args,
                          size_t size) {
    s = fake_stream_real(s);
    FAKE_CALLED();
    if (!fake_stream_capturing(s)) {
        fn(args);
        return 0;
    }
    void* copy = malloc(size ? size : 1);
    if (!copy) return FAKE_OUT_OF_MEMORY;
    memcpy(copy, args, size);
    int err;
    fake_node* n = capture_append(s, NODE_KERNEL, &err);
    if (!n) {
        free(copy);
        return err;
    }
    n->fn = fn;
    n->size = size;
    n->args = copy;
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
    s = fake_stream_real(s);
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
