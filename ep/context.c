/* context.c — EPContext models (docs/onnxruntime.md, "EPContext models").  With
 * ep.context_enable=1 a fused node is planned at Compile, for its inputs' shapes in the
 * model, and becomes an EPContext node (com.microsoft, source "hipdnn") whose payload holds
 * what rebuilds that plan: each part's hipdnn graph as hipdnn serializes it (FlatBuffers),
 * its engine by name and the engine config's knob choices, and how the graph's tensors bind
 * to the node's inputs and outputs.  Loading such a node deserializes the graphs and
 * builds the plans on those configs: no ONNX node is lowered.
 *
 * The payload (little-endian; a string is a u32 length and its bytes):
 *   "HIPDNNEP", u32 format, u64 size of the whole payload,
 *   string hipdnn-ep version, u32 hipdnn graph format, u32 device (0 CPU, 1 GPU),
 *   string runtime, string partition, u32 ONNX nodes, u32 sdpa operations,
 *   u32 inputs, each: string name, u32 rank, i64 dims; u32 outputs, likewise,
 *   u32 parts, each: string engine, u32 knobs, (i64 id, i64 value) each, u32 bindings,
 *     (i64 uid, u32 kind, u32 index) each, u64 graph size, the graph's bytes,
 *   u64 FNV-1a of every byte before it.
 * Every read is bounds-checked, so a damaged or hostile payload gives an error naming the
 * node and its file, never a fault; the checksum catches accidental damage. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hipdnn_ep.h"

#define CTX_MAGIC "HIPDNNEP"
#define CTX_FORMAT 1u
#define CTX_MAX_BYTES (UINT64_C(1) << 30) /* ORT's string attributes hold an int's worth */

/* ---- writing ------------------------------------------------------------------------ */

typedef struct {
    uint8_t* p;
    size_t n, cap;
    bool oom;
} wbuf;

static void put(wbuf* b, const void* data, size_t len) {
    if (b->oom) return;
    if (b->n + len > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->n + len) cap *= 2;
        uint8_t* p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    if (len) memcpy(b->p + b->n, data, len);
    b->n += len;
}

static void put_u32(wbuf* b, uint32_t v) {
    uint8_t x[4];
    for (int i = 0; i < 4; ++i) x[i] = (uint8_t)(v >> (8 * i));
    put(b, x, 4);
}

static void put_u64(wbuf* b, uint64_t v) {
    uint8_t x[8];
    for (int i = 0; i < 8; ++i) x[i] = (uint8_t)(v >> (8 * i));
    put(b, x, 8);
}

static void put_str(wbuf* b, const char* s) {
    put_u32(b, (uint32_t)strlen(s));
    put(b, s, strlen(s));
}

static void put_shape(wbuf* b, const char* name, const ep_shape* s) {
    put_str(b, name);
    put_u32(b, (uint32_t)s->rank);
    for (int d = 0; d < s->rank; ++d) put_u64(b, (uint64_t)s->dims[d]);
}

static uint64_t fnv1a(const uint8_t* p, size_t n) {
    uint64_t h = UINT64_C(14695981039346656037);
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * UINT64_C(1099511628211);
    return h;
}

/* One part: engine, knobs, bindings, the serialized graph; false with why. */
static bool put_part(wbuf* b, const ep_plan_part* part, char* why, size_t why_len) {
    size_t size = 0;
    hipdnnStatus_t hs = part->graph
        ? hipdnnBackendGetSerializedBinaryGraph_ext(part->graph, 0, &size, NULL)
        : HIPDNN_STATUS_BAD_PARAM;
    uint8_t* bytes = hs == HIPDNN_STATUS_SUCCESS ? malloc(size ? size : 1) : NULL;
    if (bytes) hs = hipdnnBackendGetSerializedBinaryGraph_ext(part->graph, size, &size, bytes);
    if (!bytes || hs != HIPDNN_STATUS_SUCCESS) {
        snprintf(why, why_len, "hipdnnBackendGetSerializedBinaryGraph_ext: %s",
                 part->graph ? hipdnnPeekLastErrorString_ext() : "the plan kept no graph");
        free(bytes);
        return false;
    }
    put_str(b, part->engine);
    put_u32(b, (uint32_t)part->n_knobs);
    for (int i = 0; i < part->n_knobs; ++i) {
        put_u64(b, (uint64_t)part->knobs[i][0]);
        put_u64(b, (uint64_t)part->knobs[i][1]);
    }
    put_u32(b, (uint32_t)part->n_bindings);
    for (int i = 0; i < part->n_bindings; ++i) {
        put_u64(b, (uint64_t)part->bindings[i].uid);
        put_u32(b, (uint32_t)part->bindings[i].kind);
        put_u32(b, (uint32_t)part->bindings[i].index);
    }
    put_u64(b, size);
    put(b, bytes, size);
    free(bytes);
    return true;
}

/* The payload of plan p of fused node `name` (model m, planned for input shapes `in`). */
static bool encode(const ep_ctx_env* env, const ep_model* m, const char* name, const ep_shape* in,
                   const ep_plan* p, wbuf* b, char* why, size_t why_len) {
    put(b, CTX_MAGIC, 8);
    put_u32(b, CTX_FORMAT);
    put_u64(b, 0); /* the size, set below */
    put_str(b, HIPDNN_EP_VERSION);
    put_u32(b, HIPDNN_GRAPH_FORMAT_VERSION);
    put_u32(b, (uint32_t)env->device);
    put_str(b, env->device == EP_DEVICE_GPU ? env->runtime : "");
    put_str(b, name);
    put_u32(b, (uint32_t)m->n_nodes);
    put_u32(b, (uint32_t)p->n_sdpa);
    put_u32(b, (uint32_t)m->n_inputs);
    for (int k = 0; k < m->n_inputs; ++k) put_shape(b, m->values[m->inputs[k]].name, &in[k]);
    put_u32(b, (uint32_t)m->n_outputs);
    for (int k = 0; k < m->n_outputs; ++k)
        put_shape(b, m->values[m->outputs[k]].name, &p->out_shapes[k]);
    put_u32(b, (uint32_t)p->n_parts);
    for (int j = 0; j < p->n_parts; ++j)
        if (!put_part(b, &p->parts[j], why, why_len)) return false;
    if (b->oom) {
        snprintf(why, why_len, "out of memory");
        return false;
    }
    uint64_t total = b->n + 8;
    for (int i = 0; i < 8; ++i) b->p[12 + i] = (uint8_t)(total >> (8 * i));
    put_u64(b, fnv1a(b->p, b->n));
    return !b->oom;
}

/* ---- reading ------------------------------------------------------------------------ */

typedef struct {
    const uint8_t* p;
    size_t n, at;
    char err[256]; /* the first read past the end, or a value out of range */
} rbuf;

static bool take(rbuf* r, size_t len, const char* what) {
    if (r->err[0]) return false;
    if (len > r->n - r->at) {
        snprintf(r->err, sizeof(r->err), "it ends at byte %zu, inside %s (%zu more bytes needed)",
                 r->n, what, len - (r->n - r->at));
        return false;
    }
    return true;
}

static uint32_t get_u32(rbuf* r, const char* what) {
    if (!take(r, 4, what)) return 0;
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= (uint32_t)r->p[r->at + i] << (8 * i);
    r->at += 4;
    return v;
}

static uint64_t get_u64(rbuf* r, const char* what) {
    if (!take(r, 8, what)) return 0;
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= (uint64_t)r->p[r->at + i] << (8 * i);
    r->at += 8;
    return v;
}

/* A string into out[cap] (longer ones are an error). */
static void get_str(rbuf* r, char* out, size_t cap, const char* what) {
    uint32_t len = get_u32(r, what);
    out[0] = '\0';
    if (r->err[0]) return;
    if (len >= cap) {
        snprintf(r->err, sizeof(r->err), "%s of %u bytes (at most %zu)", what, len, cap - 1);
        return;
    }
    if (!take(r, len, what)) return;
    memcpy(out, r->p + r->at, len);
    out[len] = '\0';
    r->at += len;
}

static void get_shape(rbuf* r, char* name, size_t cap, ep_shape* s, const char* what) {
    get_str(r, name, cap, what);
    uint32_t rank = get_u32(r, what);
    if (!r->err[0] && rank > EP_MAX_RANK)
        snprintf(r->err, sizeof(r->err), "%s of rank %u (at most %d)", what, rank, EP_MAX_RANK);
    s->rank = r->err[0] ? 0 : (int)rank;
    for (int d = 0; d < s->rank; ++d) {
        s->dims[d] = (int64_t)get_u64(r, what);
        if (!r->err[0] && (s->dims[d] < 0 || s->dims[d] > EP_ATTR_MAX))
            snprintf(r->err, sizeof(r->err), "%s with dim %lld", what, (long long)s->dims[d]);
    }
}

/* ---- restoring a plan ----------------------------------------------------------------- */

/* The index of the loaded engine named `name`, -1 with why when none is or it runs in
 * another memory space than `space`. */
static int64_t find_engine(const char* name, hipdnnMemorySpace_t space, char* why, size_t why_len) {
    int64_t count = 0;
    char loaded[384] = "";
    size_t used = 0;
    hipdnnGetEngineCount_ext(&count);
    for (int64_t i = 0; i < count; ++i) {
        hipdnnEngineInfo_ext_t info;
        if (hipdnnGetEngineInfo_ext(i, &info) != HIPDNN_STATUS_SUCCESS) continue;
        if (!strcmp(info.name, name)) {
            if (info.memory_space == space) return i;
            snprintf(why, why_len, "its engine '%s' runs in %s memory, and this session's "
                     "hipdnn-ep device in %s memory", name,
                     info.memory_space == HIPDNN_MEMORY_HOST ? "host" : "device",
                     space == HIPDNN_MEMORY_HOST ? "host" : "device");
            return -1;
        }
        if (used < sizeof(loaded)) {
            int w = snprintf(loaded + used, sizeof(loaded) - used, "%s%s", used ? ", " : "", info.name);
            used = w < 0 ? sizeof(loaded) : used + (size_t)w;
        }
    }
    snprintf(why, why_len, "its engine '%s' is not loaded (loaded: %s)", name, used ? loaded : "none");
    return -1;
}

static bool hip_ok(hipdnnStatus_t hs, const char* what, char* why, size_t why_len) {
    if (hs == HIPDNN_STATUS_SUCCESS) return true;
    snprintf(why, why_len, "%s: %s: %s", what, hipdnnGetErrorString(hs),
             hipdnnPeekLastErrorString_ext());
    return false;
}

/* What a part's graph is checked against (context_check.c): the recorded shapes in
 * fused-node order, the bindings of each output so far, the part's number. */
typedef struct {
    const ep_model* m;
    const ep_shape *in, *out;
    int* out_bound;
    int part;
} part_limits;

/* Part `out`'s plan from its serialized graph and engine config (no heuristics, no
 * lowering), once the graph is held to `lim`; false with why. */
static bool rebuild_part(const ep_ctx_env* env, const uint8_t* bytes, size_t size,
                         int n_knobs, int64_t (*knobs)[2], const part_limits* lim,
                         ep_plan_part* out, char* why, size_t why_len) {
    int64_t index = find_engine(out->engine, env->x->space, why, why_len);
    if (index < 0) return false;
    hipdnnHandle_t h = env->x->h;
    hipdnnBackendDescriptor_t g = NULL, cfg = NULL, plan = NULL;
    bool ok = hip_ok(hipdnnBackendCreateAndDeserializeGraph_ext(&g, bytes, size),
                     "its hipdnn graph", why, why_len) &&
              ep_context_check_part(lim->m, g, lim->part, out->bindings, out->n_bindings,
                                    lim->in, lim->out, lim->out_bound, why, why_len) &&
              hip_ok(hipdnnBackendSetAttribute(g, HIPDNN_ATTR_OPERATIONGRAPH_HANDLE,
                                               HIPDNN_TYPE_HANDLE, 1, &h), "graph handle", why,
                     why_len) &&
              (cfg = ep_make_config(g, index, n_knobs, knobs, why, why_len)) != NULL &&
              hip_ok(hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan),
                     "plan", why, why_len) &&
              hip_ok(hipdnnBackendSetAttribute(plan, HIPDNN_ATTR_EXECUTION_PLAN_HANDLE,
                                               HIPDNN_TYPE_HANDLE, 1, &h), "plan handle", why,
                     why_len) &&
              hip_ok(hipdnnBackendSetAttribute(plan, HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                               HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg),
                     "plan config", why, why_len) &&
              hip_ok(hipdnnBackendFinalize(plan), "plan finalize", why, why_len);
    int64_t n = 0;
    ok = ok && hip_ok(hipdnnBackendGetAttribute(plan, HIPDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                                HIPDNN_TYPE_INT64, 1, &n, &out->workspace),
                      "plan workspace", why, why_len);
    hipdnnBackendDestroyDescriptor(cfg);
    if (!ok) {
        hipdnnBackendDestroyDescriptor(plan);
        hipdnnBackendDestroyDescriptor(g);
        return false;
    }
    out->plan = plan;
    out->graph = g;
    out->n_knobs = n_knobs;
    memcpy(out->knobs, knobs, (size_t)n_knobs * sizeof(knobs[0]));
    return true;
}

/* ---- the payload read back ------------------------------------------------------------ */

/* The header: the payload's frame (magic, format, size, checksum), then whether this
 * hipdnn-ep on this device can use it.  False with why. */
static bool check_header(const ep_ctx_env* env, rbuf* r, uint32_t* n_nodes, uint32_t* n_sdpa,
                         char* why, size_t why_len) {
    if (r->n < 28 || memcmp(r->p, CTX_MAGIC, 8))
        return snprintf(why, why_len, "it is not a hipdnn-ep EPContext payload (%zu bytes%s)",
                        r->n, r->n < 8 ? "" : ", not starting with \"" CTX_MAGIC "\""), false;
    r->at = 8;
    uint32_t format = get_u32(r, "the format");
    uint64_t size = get_u64(r, "the size");
    if (format != CTX_FORMAT)
        return snprintf(why, why_len, "it has payload format %u; this hipdnn-ep reads format %u "
                        "(compile the model again)", format, CTX_FORMAT), false;
    if (size != r->n)
        return snprintf(why, why_len, "%s: %zu bytes where it says %llu",
                        size > r->n ? "it is truncated" : "it has bytes past its end", r->n,
                        (unsigned long long)size), false;
    uint64_t sum = 0;
    for (int i = 0; i < 8; ++i) sum |= (uint64_t)r->p[r->n - 8 + i] << (8 * i);
    if (sum != fnv1a(r->p, r->n - 8))
        return snprintf(why, why_len, "its checksum does not match: the payload is damaged"), false;
    r->n -= 8;
    char version[64], runtime[16], partition[256];
    get_str(r, version, sizeof(version), "the hipdnn-ep version");
    uint32_t graph_format = get_u32(r, "the graph format");
    uint32_t device = get_u32(r, "the device");
    get_str(r, runtime, sizeof(runtime), "the runtime");
    get_str(r, partition, sizeof(partition), "the partition name");
    *n_nodes = get_u32(r, "the node count");
    *n_sdpa = get_u32(r, "the sdpa count");
    if (r->err[0]) return snprintf(why, why_len, "%s", r->err), false;
    if (strcmp(version, HIPDNN_EP_VERSION))
        return snprintf(why, why_len, "it was written by hipdnn-ep %s; this is hipdnn-ep "
                        HIPDNN_EP_VERSION " (compile the model again)", version), false;
    if (graph_format != HIPDNN_GRAPH_FORMAT_VERSION)
        return snprintf(why, why_len, "its graphs have hipdnn's graph format %u; this hipdnn "
                        "reads %d (compile the model again)", graph_format,
                        HIPDNN_GRAPH_FORMAT_VERSION), false;
    if (device != (uint32_t)env->device ||
        (device == EP_DEVICE_GPU && strcmp(runtime, env->runtime)))
        return snprintf(why, why_len, "it was compiled for hipdnn-ep's %s%s%s%s; this session "
                        "uses its %s%s%s%s", device == EP_DEVICE_GPU ? "GPU" : "CPU",
                        runtime[0] ? " (" : "", runtime, runtime[0] ? ")" : "",
                        env->device == EP_DEVICE_GPU ? "GPU (" : "CPU",
                        env->device == EP_DEVICE_GPU ? env->runtime : "",
                        env->device == EP_DEVICE_GPU ? ")" : "", ""), false;
    return true;
}

/* Whether recorded shape s agrees with what the model knows of value v's (its rank when
 * known, each dim that is not symbolic). */
static bool agrees(const ep_shape* s, const ep_value* v) {
    if (v->rank < 0) return true;
    if (v->rank != s->rank) return false;
    for (int d = 0; d < s->rank; ++d)
        if (v->dims[d] >= 0 && v->dims[d] != s->dims[d]) return false;
    return true;
}

/* The payload's inputs (or outputs), each matched by name to the fused node's: shapes[j]
 * and map[k] = j for payload entry k and fused node entry j.  False with why. */
static bool read_io(rbuf* r, const ep_model* m, bool outputs, ep_shape* shapes, int* map,
                    char* why, size_t why_len) {
    const char* what = outputs ? "output" : "input";
    const int* list = outputs ? m->outputs : m->inputs;
    int n = outputs ? m->n_outputs : m->n_inputs;
    uint32_t count = get_u32(r, what);
    if (!r->err[0] && count != (uint32_t)n)
        return snprintf(why, why_len, "it has %u %ss for a node with %d", count, what, n), false;
    for (int k = 0; k < n; ++k) map[k] = -1;
    for (uint32_t k = 0; k < count && !r->err[0]; ++k) {
        char name[512];
        ep_shape s;
        get_shape(r, name, sizeof(name), &s, what);
        int j = 0;
        while (j < n && strcmp(m->values[list[j]].name, name)) ++j;
        if (r->err[0]) break;
        if (j == n || shapes[j].rank >= 0)
            return snprintf(why, why_len, "its %s '%s' is %s of the node's", what, name,
                            j == n ? "none" : "given twice as one"), false;
        if (!agrees(&s, &m->values[list[j]])) {
            char a[160], b[160];
            ep_shape model = {m->values[list[j]].rank, {0}};
            memcpy(model.dims, m->values[list[j]].dims, sizeof(model.dims));
            ep_shape_str(&s, a, sizeof(a));
            ep_shape_str(&model, b, sizeof(b));
            return snprintf(why, why_len, "its %s '%s' has shape %s, and the EPContext node's "
                            "%s in the model %s (-1: symbolic)", what, name, a, what, b), false;
        }
        shapes[j] = s;
        map[k] = j;
    }
    if (r->err[0]) return snprintf(why, why_len, "%s", r->err), false;
    return true;
}

/* One part: read, its bindings mapped to the fused node's order, and its plan rebuilt. */
static bool read_part(const ep_ctx_env* env, rbuf* r, const part_limits* lim, const int* map_in,
                      const int* map_out, ep_plan_part* out, char* why, size_t why_len) {
    const ep_model* m = lim->m;
    int64_t knobs[16][2];
    get_str(r, out->engine, sizeof(out->engine), "an engine name");
    uint32_t n_knobs = get_u32(r, "the knob count");
    if (!r->err[0] && n_knobs > 16) snprintf(r->err, sizeof(r->err), "%u knob choices", n_knobs);
    for (uint32_t i = 0; i < n_knobs && !r->err[0]; ++i) {
        knobs[i][0] = (int64_t)get_u64(r, "a knob id");
        knobs[i][1] = (int64_t)get_u64(r, "a knob value");
    }
    uint32_t nb = get_u32(r, "the binding count");
    if (!r->err[0] && nb > (r->n - r->at) / 16) snprintf(r->err, sizeof(r->err), "%u bindings", nb);
    if (!r->err[0] && !(out->bindings = calloc(nb ? nb : 1, sizeof(ep_binding))))
        return snprintf(why, why_len, "out of memory"), false;
    for (uint32_t i = 0; i < nb && !r->err[0]; ++i) {
        ep_binding* b = &out->bindings[out->n_bindings++];
        b->uid = (int64_t)get_u64(r, "a binding");
        uint32_t kind = get_u32(r, "a binding"), index = get_u32(r, "a binding");
        b->kind = (ep_bind_kind)kind;
        bool in = kind == EP_BIND_INPUT && index < (uint32_t)m->n_inputs;
        bool o = kind == EP_BIND_OUTPUT && index < (uint32_t)m->n_outputs;
        if (!r->err[0] && !in && !o && !(kind == EP_BIND_ZERO && index == 0))
            snprintf(r->err, sizeof(r->err), "a binding of kind %u, index %u", kind, index);
        b->index = in ? map_in[index] : o ? map_out[index] : 0;
    }
    uint64_t size = get_u64(r, "the graph size");
    if (!take(r, size, "a graph")) return snprintf(why, why_len, "%s", r->err), false;
    const uint8_t* bytes = r->p + r->at;
    r->at += size;
    return rebuild_part(env, bytes, size, (int)n_knobs, knobs, lim, out, why, why_len);
}

/* The whole payload into in[] (fused-node input order) and plan; false with why. */
static bool decode(const ep_ctx_env* env, const uint8_t* p, size_t n, const ep_model* m,
                   ep_shape* in, ep_plan* plan, int* n_nodes, char* why, size_t why_len) {
    rbuf r = {p, n, 0, ""};
    uint32_t nodes = 0, sdpa = 0;
    memset(plan, 0, sizeof(*plan));
    if (!check_header(env, &r, &nodes, &sdpa, why, why_len)) return false;
    *n_nodes = (int)nodes;
    plan->n_sdpa = (int)sdpa;
    int* map_in = calloc((size_t)m->n_inputs + 1, sizeof(int));
    int* map_out = calloc((size_t)m->n_outputs + 1, sizeof(int));
    int* out_bound = calloc((size_t)m->n_outputs + 1, sizeof(int));
    plan->out_shapes = calloc((size_t)m->n_outputs + 1, sizeof(ep_shape));
    bool ok = map_in && map_out && out_bound && plan->out_shapes;
    if (!ok) snprintf(why, why_len, "out of memory");
    for (int k = 0; k < m->n_inputs; ++k) in[k].rank = -1;
    for (int k = 0; k < m->n_outputs && ok; ++k) plan->out_shapes[k].rank = -1;
    ok = ok && read_io(&r, m, false, in, map_in, why, why_len) &&
         read_io(&r, m, true, plan->out_shapes, map_out, why, why_len);
    uint32_t parts = ok ? get_u32(&r, "the part count") : 0;
    if (ok && (r.err[0] || parts > 64)) {
        snprintf(why, why_len, "%s", r.err[0] ? r.err : "over 64 parts");
        ok = false;
    }
    if (ok && parts && !(plan->parts = calloc(parts, sizeof(ep_plan_part)))) {
        snprintf(why, why_len, "out of memory");
        ok = false;
    }
    for (uint32_t j = 0; ok && j < parts; ++j) {
        part_limits lim = {m, in, plan->out_shapes, out_bound, (int)j};
        plan->n_parts = (int)j + 1;
        ok = read_part(env, &r, &lim, map_in, map_out, &plan->parts[j], why, why_len);
    }
    /* an output with elements that no part writes would reach ORT unwritten */
    for (int k = 0; ok && k < m->n_outputs; ++k) {
        int64_t count = 1;
        for (int d = 0; d < plan->out_shapes[k].rank; ++d) count *= plan->out_shapes[k].dims[d];
        if (count && !out_bound[k]) {
            snprintf(why, why_len, "no tensor of its graphs is bound to output %d '%s'", k,
                     m->values[m->outputs[k]].name);
            ok = false;
        }
    }
    if (ok && r.at != r.n) {
        snprintf(why, why_len, "%zu bytes follow its last part", r.n - r.at);
        ok = false;
    }
    free(map_in);
    free(map_out);
    free(out_bound);
    if (!ok) ep_plan_free(plan);
    return ok;
}

/* ---- files and nodes -------------------------------------------------------------------- */

bool ep_context_is_mine(const ep_node* n) {
    const char* source = ep_attr_string(n, "source", "");
    return !strcmp(n->op, "EPContext") && !strcmp(n->domain, "com.microsoft") &&
           !strcmp(source, EP_NAME);
}

/* The folder of path p into dir ("." when it names none). */
static void folder_of(const char* p, char* dir, size_t len) {
    const char* slash = strrchr(p, '/');
    if (!slash) snprintf(dir, len, ".");
    else snprintf(dir, len, "%.*s", (int)(slash == p ? 1 : slash - p), p);
}

/* The context model's path: ep.context_file_path, else the model's with "_ctx.onnx" for
 * ".onnx" (ORT's default); false when neither is known (a model from memory). */
static bool context_model_path(const ep_options* opt, const OrtGraph* graph, char* out,
                               size_t len) {
    const ORTCHAR_T* mp = NULL;
    if (opt->ctx_path[0]) return snprintf(out, len, "%s", opt->ctx_path), true;
    OrtStatus* st = g_ort->Graph_GetModelPath(graph, &mp);
    if (st) g_ort->ReleaseStatus(st);
    if (st || !mp || !mp[0]) return false;
    size_t n = strlen(mp);
    if (n > 5 && !strcmp(mp + n - 5, ".onnx")) n -= 5;
    snprintf(out, len, "%.*s_ctx.onnx", (int)n, mp);
    return true;
}

/* Writes the payload beside the context model, as <its name>_hipdnn_<fused node>.bin;
 * the file's name (relative to the model's folder) into rel. */
static OrtStatus* write_side_file(const ep_options* opt, const OrtGraph* graph, const char* name,
                                  const wbuf* b, char* rel, size_t rel_len) {
    char model[1024], dir[1024], path[2300];
    if (!context_model_path(opt, graph, model, sizeof(model)))
        return ep_status(ORT_INVALID_ARGUMENT, "fused node '%s': ep.context_embed_mode 0 writes "
                         "the payload beside the context model, whose path is unknown (the "
                         "model came from memory): set ep.context_file_path", name);
    folder_of(model, dir, sizeof(dir));
    const char* base = strrchr(model, '/') ? strrchr(model, '/') + 1 : model;
    size_t stem = strlen(base);
    if (stem > 5 && !strcmp(base + stem - 5, ".onnx")) stem -= 5;
    int n = snprintf(rel, rel_len, "%.*s_hipdnn_", (int)stem, base);
    for (const char* c = name; *c && n > 0 && (size_t)n + 5 < rel_len; ++c)
        rel[n++] = (strchr("-_.", *c) || (*c >= '0' && *c <= '9') || ((*c | 32) >= 'a' && (*c | 32) <= 'z')) ? *c : '_';
    snprintf(rel + n, rel_len - (size_t)n, ".bin");
    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    FILE* f = fopen(path, "wb");
    bool ok = f && fwrite(b->p, 1, b->n, f) == b->n;
    int err = errno;
    if (f && fclose(f)) ok = false;
    if (!ok)
        return ep_status(ORT_FAIL, "fused node '%s': cannot write its EPContext payload to '%s': "
                         "%s", name, path, strerror(err));
    return NULL;
}

/* The EPContext node for fused node `name` of model m (its inputs and outputs in the fused
 * node's order); `cache` holds `cache_len` bytes: the payload or the side file's name. */
static OrtStatus* make_node(const ep_ctx_env* env, const ep_model* m, const char* name,
                            const void* cache, size_t cache_len, const char* notes,
                            OrtNode** node) {
    const OrtModelEditorApi* ed = g_ort->GetModelEditorApi();
    if (!ed) return ep_status(ORT_NOT_IMPLEMENTED, "this ONNX Runtime has no model editor API "
                              "(a minimal build): no EPContext node can be made");
    const char** ins = calloc((size_t)m->n_inputs + 1, sizeof(char*));
    const char** outs = calloc((size_t)m->n_outputs + 1, sizeof(char*));
    if (!ins || !outs || cache_len > INT32_MAX) {
        free(ins);
        free(outs);
        return ep_status(ORT_FAIL, "fused node '%s': %s", name,
                         cache_len > INT32_MAX ? "payload over 2 GiB" : "out of memory");
    }
    for (int k = 0; k < m->n_inputs; ++k) ins[k] = m->values[m->inputs[k]].name;
    for (int k = 0; k < m->n_outputs; ++k) outs[k] = m->values[m->outputs[k]].name;
    int64_t main_context = 1, embed = env->opt->ctx_embed ? 1 : 0;
    char node_name[512];
    snprintf(node_name, sizeof(node_name), "%s%s", env->opt->ctx_prefix, name);
    OrtOpAttr* a[7] = {0};
    OrtStatus* st = NULL;
    const char* version = HIPDNN_EP_VERSION;
    if (!st) st = g_ort->CreateOpAttr("main_context", &main_context, 1, ORT_OP_ATTR_INT, &a[0]);
    if (!st) st = g_ort->CreateOpAttr("ep_cache_context", cache, (int)cache_len, ORT_OP_ATTR_STRING, &a[1]);
    if (!st) st = g_ort->CreateOpAttr("embed_mode", &embed, 1, ORT_OP_ATTR_INT, &a[2]);
    if (!st) st = g_ort->CreateOpAttr("source", EP_NAME, (int)strlen(EP_NAME), ORT_OP_ATTR_STRING, &a[3]);
    if (!st) st = g_ort->CreateOpAttr("ep_sdk_version", version, (int)strlen(version), ORT_OP_ATTR_STRING, &a[4]);
    if (!st) st = g_ort->CreateOpAttr("partition_name", node_name, (int)strlen(node_name), ORT_OP_ATTR_STRING, &a[5]);
    if (!st) st = g_ort->CreateOpAttr("notes", notes, (int)strlen(notes), ORT_OP_ATTR_STRING, &a[6]);
    if (!st)
        st = ed->CreateNode("EPContext", "com.microsoft", node_name, ins, (size_t)m->n_inputs, outs,
                            (size_t)m->n_outputs, a, 7, node);
    for (int i = 0; i < 7; ++i)
        if (a[i]) g_ort->ReleaseOpAttr(a[i]);
    free(ins);
    free(outs);
    return st;
}

OrtStatus* ep_context_compile(const ep_ctx_env* env, const OrtGraph* graph, const OrtNode* fused,
                              const ep_model* m, ep_kernel* k, OrtNode** node) {
    (void)fused;
    const char* name = NULL;
    OrtStatus* st = g_ort->Node_GetName(fused, &name);
    if (st) return st;
    ep_shape* in = calloc((size_t)m->n_inputs + 1, sizeof(ep_shape));
    if (!in) return ep_status(ORT_FAIL, "out of memory");
    for (int j = 0; j < m->n_inputs && !st; ++j) {
        const ep_value* v = &m->values[m->inputs[j]];
        bool known = v->rank >= 0;
        for (int d = 0; known && d < v->rank; ++d) known = v->dims[d] >= 0;
        if (!known)
            st = ep_status(ORT_INVALID_ARGUMENT, "fused node '%s': its EPContext node holds a "
                           "plan for fixed input shapes, and input %d '%s' has %s in the model "
                           "(give it fixed dims, e.g. with a free-dimension override)", name, j,
                           v->name, v->rank < 0 ? "no known rank" : "a symbolic dim");
        in[j].rank = v->rank;
        for (int d = 0; d < v->rank; ++d) in[j].dims[d] = v->dims[d];
    }
    ep_plan plan;
    memset(&plan, 0, sizeof(plan));
    if (!st) {
        pthread_mutex_lock(&env->x->lock);
        if (env->x->space != HIPDNN_MEMORY_HOST) st = ep_gpu_enter(env->x->ordinal, name);
        if (!st) st = ep_lower(m, in, env->x->h, env->opt, env->x->space, name, &plan);
        pthread_mutex_unlock(&env->x->lock);
    }
    wbuf b = {0};
    char why[1024], rel[1024], notes[512];
    if (!st && !encode(env, m, name, in, &plan, &b, why, sizeof(why)))
        st = ep_status(ORT_FAIL, "fused node '%s': its EPContext payload: %s", name, why);
    snprintf(notes, sizeof(notes), "hipdnn-ep " HIPDNN_EP_VERSION " plan of %d ONNX nodes in %d "
             "part(s), engine %s, %zu bytes", m->n_nodes, plan.n_parts,
             plan.n_parts ? plan.parts[0].engine : "none", b.n);
    if (!st && !env->opt->ctx_embed)
        st = write_side_file(env->opt, graph, name, &b, rel, sizeof(rel));
    if (!st)
        st = env->opt->ctx_embed ? make_node(env, m, name, b.p, b.n, notes, node)
                                 : make_node(env, m, name, rel, strlen(rel), notes, node);
    free(b.p);
    if (!st) st = ep_kernel_seed(k, in, &plan, false, "built at compile time for its EPContext node");
    else ep_plan_free(&plan);
    free(in);
    return st;
}

/* The side file `rel` (relative to the context model's folder, which it may not leave)
 * read into *data; `where` gets its full path.  NULL or a reason for the caller's error. */
static const char* read_side_file(const ep_options* opt, const OrtGraph* graph, const ep_attr* a,
                                  uint8_t** data, size_t* len, char* where, size_t where_len,
                                  char* why, size_t why_len) {
    const ORTCHAR_T* mp = NULL;
    char dir[1024];
    const char* rel = a->s;
    OrtStatus* st = g_ort->Graph_GetModelPath(graph, &mp);
    if (st) g_ort->ReleaseStatus(st);
    if (!st && mp && mp[0]) folder_of(mp, dir, sizeof(dir));
    else if (opt->ctx_path[0]) folder_of(opt->ctx_path, dir, sizeof(dir));
    else return "the model came from memory, so its folder is unknown: set ep.context_file_path";
    snprintf(where, where_len, "%s/%s", dir, rel);
    if (!rel[0] || strlen(rel) != a->n_s || rel[0] == '/' || !strcmp(rel, "..") ||
        !strncmp(rel, "../", 3) || strstr(rel, "/../") ||
        (strlen(rel) >= 3 && !strcmp(rel + strlen(rel) - 3, "/..")))
        return "ep_cache_context must name a file inside the model's folder, by a relative path";
    FILE* f = fopen(where, "rb");
    struct stat sb;
    if (!f || fstat(fileno(f), &sb) || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_size > CTX_MAX_BYTES) {
        snprintf(why, why_len, "%s", !f ? strerror(errno) : "not a regular file of at most 1 GiB");
        if (f) fclose(f);
        return why;
    }
    *len = (size_t)sb.st_size;
    *data = malloc(*len ? *len : 1);
    bool ok = *data && fread(*data, 1, *len, f) == *len;
    fclose(f);
    if (!ok) {
        free(*data);
        *data = NULL;
        return "cannot read it";
    }
    return NULL;
}

OrtStatus* ep_context_load(const ep_ctx_env* env, const OrtGraph* graph, ep_model* m,
                           const char* name, ep_kernel** out) {
    *out = NULL;
    ep_node* n = &m->nodes[0];
    const ORTCHAR_T* mp = NULL;
    OrtStatus* st = g_ort->Graph_GetModelPath(graph, &mp);
    if (st) g_ort->ReleaseStatus(st);
    char where[1600], why[1024] = "";
    snprintf(where, sizeof(where), "EPContext node '%s' (payload in the model%s%s)", n->name,
             !st && mp && mp[0] ? " " : "", !st && mp ? mp : "");
    if (env->opt->ctx_enable)
        return ep_status(ORT_INVALID_ARGUMENT, "%s: ep.context_enable=1, but the model is compiled "
                         "already (compile the original model instead)", where);
    int64_t embed = ep_attr_int(n, "embed_mode", 1), main_context = ep_attr_int(n, "main_context", 1);
    const ep_attr* a = ep_attr_get(n, "ep_cache_context");
    const char* fail = NULL;
    uint8_t* file = NULL;
    size_t len = 0;
    if (main_context != 1) fail = "main_context is not 1 (hipdnn-ep writes every node's plan into it)";
    else if (!a || a->type != ORT_OP_ATTR_STRING) fail = "it has no string ep_cache_context";
    else if (embed == 0) {
        char path[1400];
        fail = read_side_file(env->opt, graph, a, &file, &len, path, sizeof(path), why, sizeof(why));
        snprintf(where, sizeof(where), "EPContext node '%s' (file '%s')", n->name, path);
    } else if (embed != 1) fail = "embed_mode is neither 0 nor 1";
    if (fail) return ep_status(ORT_INVALID_GRAPH, "%s: %s", where, fail);
    ep_shape* in = calloc((size_t)m->n_inputs + 1, sizeof(ep_shape));
    ep_plan plan;
    int n_nodes = 0;
    pthread_mutex_lock(&env->x->lock);
    if (in && env->x->space != HIPDNN_MEMORY_HOST) st = ep_gpu_enter(env->x->ordinal, name);
    bool ok = in && !st &&
              decode(env, file ? file : (const uint8_t*)a->s, file ? len : a->n_s, m, in, &plan,
                     &n_nodes, why, sizeof(why));
    pthread_mutex_unlock(&env->x->lock);
    free(file);
    if (!st && !ok)
        st = ep_status(ORT_INVALID_GRAPH, "%s: cannot use its payload: %s", where,
                       in ? why : "out of memory");
    if (st) {
        free(in);
        return st;
    }
    free(n->attrs[a - n->attrs].s); /* the payload is not needed any more */
    n->attrs[a - n->attrs].s = NULL;
    ep_kernel* k = ep_kernel_create(m, name, env->x, env->opt, env->logger);
    char how[1700];
    snprintf(how, sizeof(how), "restored from %s, none of its %d ONNX nodes lowered", where,
             n_nodes);
    st = k ? ep_kernel_seed(k, in, &plan, true, how) : ep_status(ORT_FAIL, "out of memory");
    if (!k) ep_plan_free(&plan);
    free(in);
    if (st) ep_kernel_destroy(k);
    else *out = k;
    return st;
}
