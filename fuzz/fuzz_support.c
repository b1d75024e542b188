/* What the fuzz targets share; see fuzz_support.h. */
#include "fuzz_support.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipdnn/hipdnn_sdk.h"

/* ---- failing and checking ----------------------------------------------------------- */

void fz_fail(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fuzz invariant: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n  last hipdnn message: %s\n", hipdnnPeekLastErrorString_ext());
    va_end(ap);
    fflush(stderr);
    abort();
}

/* Every failing call must say why (the API's promise); returns st. */
static hipdnnStatus_t fz_said(hipdnnStatus_t st, const char* call) {
    if (st != HIPDNN_STATUS_SUCCESS && hipdnnPeekLastErrorString_ext()[0] == '\0')
        fz_fail("%s failed with %s but left no message", call, hipdnnGetErrorString(st));
    return st;
}

hipdnnHandle_t fz_handle(void) {
    static hipdnnHandle_t handle;
    if (!handle) {
        if (!getenv("HIPDNN_FUZZ_VERBOSE")) hipdnnSetLogLevel_ext(HIPDNN_LOG_OFF);
        if (hipdnnCreate(&handle) != HIPDNN_STATUS_SUCCESS)
            fz_fail("hipdnnCreate failed: is the reference engine built?");
    }
    return handle;
}

/* ---- the byte reader ---------------------------------------------------------------- */

uint8_t fz_u8(fz_reader* r) {
    if (r->n == 0) return 0;
    r->n--;
    return *r->p++;
}

uint16_t fz_u16(fz_reader* r) { return (uint16_t)(fz_u8(r) | (uint16_t)fz_u8(r) << 8); }
uint32_t fz_u32(fz_reader* r) { return fz_u16(r) | (uint32_t)fz_u16(r) << 16; }
uint64_t fz_u64(fz_reader* r) { return fz_u32(r) | (uint64_t)fz_u32(r) << 32; }

int64_t fz_range(fz_reader* r, int64_t lo, int64_t hi) {
    uint64_t span = (uint64_t)hi - (uint64_t)lo;
    uint64_t v = span < 0x100 ? fz_u8(r) : span < 0x10000 ? fz_u16(r)
                                         : span < 0x100000000u ? fz_u32(r) : fz_u64(r);
    return (int64_t)((uint64_t)lo + (span == UINT64_MAX ? v : v % (span + 1)));
}

int64_t fz_int(fz_reader* r) {
    static const int64_t extremes[] = {0, -1, 1, INT64_MAX, INT64_MIN, INT32_MAX, INT32_MIN,
                                       INT64_C(1) << 40, (INT64_C(1) << 40) + 1,
                                       INT64_C(1) << 62, UINT32_MAX, 65536};
    uint8_t k = fz_u8(r);
    if (k < 200) return k % 9; /* mostly small, valid-looking sizes */
    if (k < 240) return (int64_t)fz_u16(r) - 16;
    if (k < 252) return extremes[k % (sizeof(extremes) / sizeof(extremes[0]))];
    return (int64_t)fz_u64(r);
}

double fz_double(fz_reader* r) {
    static const double specials[] = {0.0, -0.0, 1.0, -1.0, INFINITY, -INFINITY, NAN, -NAN,
                                      4.9e-324, -2.2e-308, 65504.0, 1e300, -3.5, 0.5};
    uint8_t k = fz_u8(r);
    if (k < 128) return ((int)fz_u8(r) - 128) / 16.0;
    if (k < 240) return specials[k % (sizeof(specials) / sizeof(specials[0]))];
    uint64_t bits = fz_u64(r);
    double d;
    memcpy(&d, &bits, sizeof(d));
    return d;
}

/* ---- reading a finalized graph ------------------------------------------------------ */

typedef struct {
    int64_t uid;
    hipdnnDataType_t dt;
    int64_t ndim, dims[HIPDNN_MAX_DIMS], strides[HIPDNN_MAX_DIMS];
    bool is_virtual, is_by_value, is_constant, is_output;
    size_t bytes;   /* what a buffer for it needs; 0 when it takes none */
    uint8_t* data;  /* exact-size allocation, so ASan sees any access outside it */
    uint8_t* saved; /* inputs: a copy, to see that the engine left them alone */
} fz_tensor;

static void get_attr(hipdnnBackendDescriptor_t d, hipdnnBackendAttributeName_t a,
                     hipdnnBackendAttributeType_t type, int64_t req, int64_t* count, void* v,
                     const char* what) {
    hipdnnStatus_t st = hipdnnBackendGetAttribute(d, a, type, req, count, v);
    if (st != HIPDNN_STATUS_SUCCESS)
        fz_fail("get %s of a finalized graph's tensor: %s", what, hipdnnGetErrorString(st));
}

static void read_tensor(hipdnnBackendDescriptor_t td, fz_tensor* t) {
    int64_t n = 0, strides_n = 0, value_n = 0;
    bool flag = false;
    get_attr(td, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT64, 1, &n, &t->uid, "uid");
    get_attr(td, HIPDNN_ATTR_TENSOR_DATA_TYPE, HIPDNN_TYPE_DATA_TYPE, 1, &n, &t->dt, "data type");
    get_attr(td, HIPDNN_ATTR_TENSOR_DIMENSIONS, HIPDNN_TYPE_INT64, HIPDNN_MAX_DIMS, &t->ndim,
             t->dims, "dims");
    get_attr(td, HIPDNN_ATTR_TENSOR_STRIDES, HIPDNN_TYPE_INT64, HIPDNN_MAX_DIMS, &strides_n,
             t->strides, "strides");
    get_attr(td, HIPDNN_ATTR_TENSOR_IS_VIRTUAL, HIPDNN_TYPE_BOOLEAN, 1, &n, &flag, "is_virtual");
    t->is_virtual = flag;
    get_attr(td, HIPDNN_ATTR_TENSOR_IS_BY_VALUE, HIPDNN_TYPE_BOOLEAN, 1, &n, &flag, "by_value");
    t->is_by_value = flag;
    uint8_t value[8];
    get_attr(td, HIPDNN_ATTR_TENSOR_VALUE_EXT, HIPDNN_TYPE_UINT8_EXT, 8, &value_n, value, "value");
    t->is_constant = t->is_by_value && value_n > 0;
    if (t->ndim < 0 || t->ndim > HIPDNN_MAX_DIMS || strides_n != t->ndim)
        fz_fail("finalized tensor uid %lld has %lld dims and %lld strides", (long long)t->uid,
                (long long)t->ndim, (long long)strides_n);
    if (hipdnnSdkDataTypeSize(t->dt) == 0)
        fz_fail("finalized tensor uid %lld has data type %d", (long long)t->uid, (int)t->dt);
    for (int64_t k = 0; k < t->ndim; ++k)
        if (t->dims[k] <= 0 || t->strides[k] <= 0)
            fz_fail("finalized tensor uid %lld: dim %lld is %lld, stride %lld",
                    (long long)t->uid, (long long)k, (long long)t->dims[k],
                    (long long)t->strides[k]);
}

static double elements(const fz_tensor* t) {
    double n = 1;
    for (int64_t k = 0; k < t->ndim; ++k) n *= (double)t->dims[k];
    return n;
}

/* Bytes from element 0 to the last element the strides reach, or SIZE_MAX if too many. */
static size_t extent_bytes(const fz_tensor* t) {
    double last = 0;
    for (int64_t k = 0; k < t->ndim; ++k) last += (double)(t->dims[k] - 1) * (double)t->strides[k];
    double bytes = (last + 1) * (double)hipdnnSdkDataTypeSize(t->dt);
    return bytes > (double)FZ_MAX_RUN_BYTES ? SIZE_MAX : (size_t)bytes;
}

static fz_tensor* find(fz_tensor* ts, int64_t n, int64_t uid) {
    for (int64_t i = 0; i < n; ++i)
        if (ts[i].uid == uid) return &ts[i];
    return NULL;
}

/* The uid of port `attr` of op descriptor `op`, or INT64_MIN when unset. */
static int64_t port_uid(hipdnnBackendDescriptor_t op, hipdnnBackendAttributeName_t attr) {
    hipdnnBackendDescriptor_t t = NULL;
    int64_t n = 0, uid = INT64_MIN;
    if (hipdnnBackendGetAttribute(op, attr, HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &t) !=
        HIPDNN_STATUS_SUCCESS)
        fz_fail("get port %d of a finalized op", (int)attr);
    if (n == 1 && t) {
        get_attr(t, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT64, 1, &n, &uid, "port uid");
        hipdnnBackendDestroyDescriptor(t);
    }
    return uid;
}

static const hipdnnOpInfo_ext_t* op_info(hipdnnBackendDescriptorType_t type) {
    int64_t count = 0;
    hipdnnGetOpCount_ext(&count);
    for (int64_t i = 0; i < count; ++i) {
        const hipdnnOpInfo_ext_t* info = NULL;
        if (hipdnnGetOpInfo_ext(i, &info) == HIPDNN_STATUS_SUCCESS &&
            info->descriptor_type == type)
            return info;
    }
    return NULL;
}

/* Multiply-adds a run would take, roughly: what keeps a fuzzed conv from taking minutes. */
static double work_of(hipdnnBackendDescriptor_t op, fz_tensor* ts, int64_t nt) {
    hipdnnBackendDescriptorType_t type;
    if (hipdnnBackendGetDescriptorType_ext(op, &type) != HIPDNN_STATUS_SUCCESS)
        fz_fail("type of a graph's op");
    const hipdnnOpInfo_ext_t* info = op_info(type);
    if (!info) fz_fail("a graph's op of descriptor type %d is not in the op table", (int)type);
    fz_tensor* in[HIPDNN_MAX_PORTS] = {0};
    fz_tensor* out0 = NULL;
    double most = 1;
    for (int32_t p = 0; p < info->num_inputs; ++p) {
        in[p] = find(ts, nt, port_uid(op, info->inputs[p].attr));
        if (in[p] && elements(in[p]) > most) most = elements(in[p]);
    }
    if (info->num_outputs > 0) out0 = find(ts, nt, port_uid(op, info->outputs[0].attr));
    if (!out0) return most;
    if (!strcmp(info->name, "conv_fprop") && in[1] && in[1]->ndim > 0)
        return elements(out0) * elements(in[1]) / (double)in[1]->dims[0] + most;
    if (!strcmp(info->name, "matmul") && in[0] && in[0]->ndim > 0)
        return elements(out0) * (double)in[0]->dims[in[0]->ndim - 1] + most;
    return elements(out0) > most ? elements(out0) : most;
}

/* ---- running ------------------------------------------------------------------------ */

static uint64_t next_random(uint64_t* s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Mostly ordinary values, one in sixteen special. */
static double random_value(uint64_t* s) {
    static const double specials[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, 4.9e-324, 1e-40,
                                      65504.0, 1e30, -1e30, 3.0e38, -70000.0};
    uint64_t r = next_random(s);
    if ((r & 15) == 0) return specials[(r >> 4) % (sizeof(specials) / sizeof(specials[0]))];
    return (double)((int64_t)(r >> 40) % 4096) / 1024.0;
}

static void fill(fz_tensor* t, uint64_t* s) {
    size_t esize = hipdnnSdkDataTypeSize(t->dt);
    for (size_t i = 0; i < t->bytes / esize; ++i)
        hipdnnSdkStoreFromDouble(t->data, t->dt, (int64_t)i, random_value(s));
}

static void free_buffers(fz_tensor* ts, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        free(ts[i].data);
        free(ts[i].saved);
        ts[i].data = ts[i].saved = NULL;
    }
}

/* Runs plan `plan` once on fresh buffers; 1 if it ran. */
static int run_plan(hipdnnBackendDescriptor_t plan, fz_tensor* ts, int64_t nt, uint64_t seed,
                    fz_outputs* out) {
    int64_t ws_size = 0, n = 0;
    if (hipdnnBackendGetAttribute(plan, HIPDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                  HIPDNN_TYPE_INT64, 1, &n, &ws_size) != HIPDNN_STATUS_SUCCESS ||
        ws_size < 0)
        fz_fail("workspace size of a finalized plan");
    if (ws_size > FZ_MAX_WORKSPACE) return 0;
    int64_t* uids = calloc((size_t)nt + 1, sizeof(int64_t));
    void** ptrs = calloc((size_t)nt + 1, sizeof(void*));
    uint8_t* workspace = malloc((size_t)ws_size + 1);
    if (!uids || !ptrs || !workspace) fz_fail("out of memory");
    memset(workspace, 0xA5, (size_t)ws_size); /* garbage, as a caller's would be */
    uint64_t s = seed | 1;
    int64_t np = 0;
    for (int64_t i = 0; i < nt; ++i) {
        fz_tensor* t = &ts[i];
        if (!t->bytes) continue;
        t->data = malloc(t->bytes);
        if (!t->data) fz_fail("out of memory");
        if (t->is_output) {
            memset(t->data, 0xFF, t->bytes); /* NaN poison */
        } else {
            fill(t, &s);
            t->saved = malloc(t->bytes);
            if (!t->saved) fz_fail("out of memory");
            memcpy(t->saved, t->data, t->bytes);
        }
        uids[np] = t->uid;
        ptrs[np++] = t->data;
    }
    hipdnnBackendDescriptor_t pack = NULL;
    if (hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack) ||
        hipdnnBackendSetAttribute(pack, HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, HIPDNN_TYPE_INT64,
                                  np, uids) ||
        hipdnnBackendSetAttribute(pack, HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                  HIPDNN_TYPE_VOID_PTR, np, ptrs) ||
        hipdnnBackendSetAttribute(pack, HIPDNN_ATTR_VARIANT_PACK_WORKSPACE, HIPDNN_TYPE_VOID_PTR,
                                  1, &workspace) ||
        hipdnnBackendFinalize(pack))
        fz_fail("a variant pack of every tensor's buffer was refused");
    hipdnnStatus_t st = fz_said(hipdnnBackendExecute(fz_handle(), plan, pack), "execute");
    /* A plan that built must run on buffers of exactly its tensors' sizes. */
    if (st != HIPDNN_STATUS_SUCCESS) fz_fail("execute failed: %s", hipdnnGetErrorString(st));
    for (int64_t i = 0; i < nt; ++i)
        if (ts[i].saved && memcmp(ts[i].saved, ts[i].data, ts[i].bytes) != 0)
            fz_fail("execute wrote into input tensor uid %lld", (long long)ts[i].uid);
    if (out && !out->ran) {
        size_t total = 0;
        for (int64_t i = 0; i < nt; ++i)
            if (ts[i].is_output) total += ts[i].bytes;
        out->bytes = malloc(total + 1);
        if (!out->bytes) fz_fail("out of memory");
        for (int64_t i = 0; i < nt; ++i)
            if (ts[i].is_output) {
                memcpy(out->bytes + out->size, ts[i].data, ts[i].bytes);
                out->size += ts[i].bytes;
            }
        out->ran = 1;
    }
    hipdnnBackendDestroyDescriptor(pack);
    free_buffers(ts, nt);
    free(uids);
    free(ptrs);
    free(workspace);
    return 1;
}

static void run_engines(hipdnnBackendDescriptor_t graph, fz_tensor* ts, int64_t nt,
                        uint64_t seed, fz_outputs* out) {
    hipdnnBackendDescriptor_t heur = NULL;
    hipdnnBackendHeurMode_t mode = HIPDNN_HEUR_MODE_A;
    if (hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur) ||
        hipdnnBackendSetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_MODE, HIPDNN_TYPE_HEUR_MODE, 1,
                                  &mode) ||
        hipdnnBackendSetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                                  HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph))
        fz_fail("setting up heuristics");
    if (fz_said(hipdnnBackendFinalize(heur), "heuristics finalize") != HIPDNN_STATUS_SUCCESS) {
        hipdnnBackendDestroyDescriptor(heur);
        return; /* no engine runs it: a clean "not supported" */
    }
    hipdnnBackendDescriptor_t cfgs[2] = {NULL, NULL};
    int64_t ncfg = 0;
    if (hipdnnBackendGetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_RESULTS,
                                  HIPDNN_TYPE_BACKEND_DESCRIPTOR, 2, &ncfg, cfgs))
        fz_fail("heuristics results");
    for (int64_t c = 0; c < ncfg && c < 2; ++c) {
        hipdnnBackendDescriptor_t plan = NULL;
        hipdnnHandle_t h = fz_handle();
        if (hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan) ||
            hipdnnBackendSetAttribute(plan, HIPDNN_ATTR_EXECUTION_PLAN_HANDLE, HIPDNN_TYPE_HANDLE,
                                      1, &h) ||
            hipdnnBackendSetAttribute(plan, HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                      HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfgs[c]))
            fz_fail("setting up a plan");
        if (fz_said(hipdnnBackendFinalize(plan), "plan finalize") == HIPDNN_STATUS_SUCCESS)
            run_plan(plan, ts, nt, seed, out);
        hipdnnBackendDestroyDescriptor(plan);
    }
    for (int64_t c = 0; c < ncfg && c < 2; ++c) hipdnnBackendDestroyDescriptor(cfgs[c]);
    hipdnnBackendDestroyDescriptor(heur);
}

/* The graph's tensors with what a run needs (sizes, which are outputs); NULL when the graph
 * is over the bounds of a quick run. */
static fz_tensor* collect(hipdnnBackendDescriptor_t graph, int64_t* count) {
    int64_t n = 0, nops = 0, nt = 0, nout = 0;
    if (hipdnnBackendGetAttribute(graph, HIPDNN_ATTR_OPERATIONGRAPH_OPS,
                                  HIPDNN_TYPE_BACKEND_DESCRIPTOR, 0, &nops, NULL) ||
        hipdnnBackendGetAttribute(graph, HIPDNN_ATTR_OPERATIONGRAPH_TENSORS_EXT,
                                  HIPDNN_TYPE_BACKEND_DESCRIPTOR, 0, &nt, NULL))
        fz_fail("count a finalized graph's ops and tensors");
    if (nops > FZ_MAX_RUN_NODES) return NULL;
    hipdnnBackendDescriptor_t* tds = calloc((size_t)nt + 1, sizeof(*tds));
    hipdnnBackendDescriptor_t* ops = calloc((size_t)nops + 1, sizeof(*ops));
    fz_tensor* ts = calloc((size_t)nt + 1, sizeof(*ts));
    int64_t* outs = calloc((size_t)nops * HIPDNN_MAX_PORTS + 1, sizeof(int64_t));
    if (!tds || !ops || !ts || !outs) fz_fail("out of memory");
    if (hipdnnBackendGetAttribute(graph, HIPDNN_ATTR_OPERATIONGRAPH_TENSORS_EXT,
                                  HIPDNN_TYPE_BACKEND_DESCRIPTOR, nt, &n, tds) || n != nt)
        fz_fail("get a finalized graph's tensors");
    for (int64_t i = 0; i < nt; ++i) {
        read_tensor(tds[i], &ts[i]);
        hipdnnBackendDestroyDescriptor(tds[i]);
    }
    if (hipdnnBackendGetAttribute(graph, HIPDNN_ATTR_OPERATIONGRAPH_OUTPUT_UIDS_EXT,
                                  HIPDNN_TYPE_INT64, nops * HIPDNN_MAX_PORTS, &nout, outs) ||
        nout > nops * HIPDNN_MAX_PORTS)
        fz_fail("get a finalized graph's output uids");
    for (int64_t i = 0; i < nout; ++i) {
        fz_tensor* t = find(ts, nt, outs[i]);
        if (!t || t->is_virtual) fz_fail("output uid %lld is no real tensor", (long long)outs[i]);
        t->is_output = true;
    }
    double work = 0, bytes = 0;
    if (hipdnnBackendGetAttribute(graph, HIPDNN_ATTR_OPERATIONGRAPH_OPS,
                                  HIPDNN_TYPE_BACKEND_DESCRIPTOR, nops, &n, ops) || n != nops)
        fz_fail("get a finalized graph's ops");
    for (int64_t i = 0; i < nops; ++i) {
        work += work_of(ops[i], ts, nt);
        hipdnnBackendDestroyDescriptor(ops[i]);
    }
    for (int64_t i = 0; i < nt; ++i) {
        fz_tensor* t = &ts[i];
        if (t->is_virtual || t->is_constant) continue;
        t->bytes = t->is_by_value ? hipdnnSdkDataTypeSize(t->dt) : extent_bytes(t);
        bytes += (double)t->bytes;
    }
    free(tds);
    free(ops);
    free(outs);
    if (work > (double)FZ_MAX_RUN_WORK || bytes > (double)FZ_MAX_RUN_BYTES) {
        free(ts);
        return NULL;
    }
    *count = nt;
    return ts;
}

void fz_run_graph(hipdnnBackendDescriptor_t graph, uint64_t seed, fz_outputs* out) {
    int64_t n = 0, nt = 0;
    hipdnnHandle_t h = NULL;
    if (hipdnnBackendGetAttribute(graph, HIPDNN_ATTR_OPERATIONGRAPH_HANDLE, HIPDNN_TYPE_HANDLE, 1,
                                  &n, &h))
        fz_fail("get the graph's handle");
    if (n == 0) {
        h = fz_handle();
        if (hipdnnBackendSetAttribute(graph, HIPDNN_ATTR_OPERATIONGRAPH_HANDLE, HIPDNN_TYPE_HANDLE,
                                      1, &h))
            fz_fail("a finalized graph without a handle refused one");
    }
    fz_tensor* ts = collect(graph, &nt);
    if (!ts) return;
    run_engines(graph, ts, nt, seed, out);
    free(ts);
}

/* A descriptor-valued attribute's one value (a new reference), or NULL. */
static hipdnnBackendDescriptor_t get_one(hipdnnBackendDescriptor_t d,
                                         hipdnnBackendAttributeName_t a) {
    hipdnnBackendDescriptor_t v = NULL;
    int64_t n = 0;
    if (hipdnnBackendGetAttribute(d, a, HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &v) ||
        n != 1)
        return NULL;
    return v;
}

void fz_run_plan(hipdnnBackendDescriptor_t plan, uint64_t seed) {
    hipdnnBackendDescriptor_t cfg = get_one(plan, HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG);
    hipdnnBackendDescriptor_t engine = cfg ? get_one(cfg, HIPDNN_ATTR_ENGINECFG_ENGINE) : NULL;
    hipdnnBackendDescriptor_t graph =
        engine ? get_one(engine, HIPDNN_ATTR_ENGINE_OPERATION_GRAPH) : NULL;
    if (!graph) fz_fail("a finalized plan does not lead to its graph");
    int64_t nt = 0;
    fz_tensor* ts = collect(graph, &nt);
    if (ts) run_plan(plan, ts, nt, seed, NULL);
    free(ts);
    hipdnnBackendDestroyDescriptor(graph);
    hipdnnBackendDestroyDescriptor(engine);
    hipdnnBackendDestroyDescriptor(cfg);
}

void fz_outputs_free(fz_outputs* o) {
    free(o->bytes);
    memset(o, 0, sizeof(*o));
}

/* ---- serialization ------------------------------------------------------------------ */

uint8_t* fz_serialize(hipdnnBackendDescriptor_t graph, size_t* size) {
    *size = 0;
    if (hipdnnBackendGetSerializedBinaryGraph_ext(graph, 0, size, NULL) || *size == 0)
        fz_fail("serialize (size) of a finalized graph");
    uint8_t* data = malloc(*size);
    size_t got = 0;
    if (!data || hipdnnBackendGetSerializedBinaryGraph_ext(graph, *size, &got, data) ||
        got != *size)
        fz_fail("serialize of a finalized graph");
    return data;
}

void fz_check_round_trip(hipdnnBackendDescriptor_t graph) {
    size_t n1 = 0, n2 = 0;
    uint8_t* b1 = fz_serialize(graph, &n1);
    hipdnnBackendDescriptor_t g2 = NULL;
    if (hipdnnBackendCreateAndDeserializeGraph_ext(&g2, b1, n1) != HIPDNN_STATUS_SUCCESS)
        fz_fail("bytes serialize() wrote (%zu) do not deserialize", n1);
    uint8_t* b2 = fz_serialize(g2, &n2);
    if (n1 != n2 || memcmp(b1, b2, n1) != 0)
        fz_fail("serialize(deserialize(bytes)) differs from bytes (%zu vs %zu bytes)", n1, n2);
    hipdnnBackendDestroyDescriptor(g2);
    free(b1);
    free(b2);
}
