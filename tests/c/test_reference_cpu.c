/* test_reference_cpu — the CPU reference engine plugin, loaded directly with dlopen.
 *
 * Each test builds a small graph with the SDK model, encodes it, asks the plugin whether it
 * applies, plans and runs it on random inputs (outputs poisoned with NaN first), checks the
 * inputs are unchanged, and compares every output element with a plain float64 loop written
 * here.  Tolerances (atol = rtol) follow
 * docs/architecture.md, "Tolerances". */
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hipdnn/hipdnn_plugin.h"
#include "hipdnn/hipdnn_sdk.h"

#ifndef HIPDNN_ENGINE_DIR
#error "HIPDNN_ENGINE_DIR must name the folder holding libhipdnn_reference_cpu.so"
#endif

/* ---- the plugin's entry points ---------------------------------------------------- */

static struct {
    void* lib;
    hipdnnPluginStatus_t (*GetApiVersion)(uint32_t*, uint32_t*);
    hipdnnPluginStatus_t (*GetName)(const char**);
    hipdnnPluginStatus_t (*GetVersion)(const char**);
    hipdnnPluginStatus_t (*GetType)(hipdnnPluginType_t*);
    void (*GetLastErrorString)(const char**);
    hipdnnPluginStatus_t (*SetLoggingCallback)(hipdnnPluginLoggingCallback_t);
    hipdnnPluginStatus_t (*GetAllEngineIds)(uint64_t*, uint32_t, uint32_t*);
    hipdnnPluginStatus_t (*Create)(hipdnnEnginePluginHandle_t*);
    hipdnnPluginStatus_t (*Destroy)(hipdnnEnginePluginHandle_t);
    hipdnnPluginStatus_t (*SetStream)(hipdnnEnginePluginHandle_t, hipdnnStream_t);
    hipdnnPluginStatus_t (*GetApplicableEngineIds)(hipdnnEnginePluginHandle_t, const uint8_t*,
                                                   size_t, uint64_t*, uint32_t, uint32_t*);
    hipdnnPluginStatus_t (*GetEngineDetails)(hipdnnEnginePluginHandle_t, uint64_t,
                                             const hipdnnPluginEngineDetails_t**);
    hipdnnPluginStatus_t (*DestroyEngineDetails)(hipdnnEnginePluginHandle_t,
                                                 const hipdnnPluginEngineDetails_t*);
    hipdnnPluginStatus_t (*GetWorkspaceSize)(hipdnnEnginePluginHandle_t, const uint8_t*, size_t,
                                             const uint8_t*, size_t, size_t*);
    hipdnnPluginStatus_t (*CreateExecutionContext)(hipdnnEnginePluginHandle_t, const uint8_t*,
                                                   size_t, const uint8_t*, size_t,
                                                   hipdnnEnginePluginExecutionContext_t*);
    hipdnnPluginStatus_t (*DestroyExecutionContext)(hipdnnEnginePluginHandle_t,
                                                    hipdnnEnginePluginExecutionContext_t);
    hipdnnPluginStatus_t (*ExecuteOpGraph)(hipdnnEnginePluginHandle_t,
                                           hipdnnEnginePluginExecutionContext_t, void*,
                                           const hipdnnPluginDeviceBuffer_t*, uint32_t);
    hipdnnPluginStatus_t (*GetNotApplicableReason)(hipdnnEnginePluginHandle_t, uint64_t,
                                                   const uint8_t*, size_t, const char**);
    hipdnnEnginePluginHandle_t h;
} P;

static int load_plugin(void) {
    const char* path = HIPDNN_ENGINE_DIR "/libhipdnn_reference_cpu.so";
    P.lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!P.lib) {
        printf("cannot open %s: %s\n", path, dlerror());
        return -1;
    }
#define SYM(field, name)                                                   \
    do {                                                                   \
        *(void**)(&P.field) = dlsym(P.lib, name);                          \
        if (!P.field) {                                                    \
            printf("%s: missing symbol %s\n", path, name);                 \
            return -1;                                                     \
        }                                                                  \
    } while (0)
    SYM(GetApiVersion, "hipdnnPluginGetApiVersion");
    SYM(GetName, "hipdnnPluginGetName");
    SYM(GetVersion, "hipdnnPluginGetVersion");
    SYM(GetType, "hipdnnPluginGetType");
    SYM(GetLastErrorString, "hipdnnPluginGetLastErrorString");
    SYM(SetLoggingCallback, "hipdnnPluginSetLoggingCallback");
    SYM(GetAllEngineIds, "hipdnnEnginePluginGetAllEngineIds");
    SYM(Create, "hipdnnEnginePluginCreate");
    SYM(Destroy, "hipdnnEnginePluginDestroy");
    SYM(SetStream, "hipdnnEnginePluginSetStream");
    SYM(GetApplicableEngineIds, "hipdnnEnginePluginGetApplicableEngineIds");
    SYM(GetEngineDetails, "hipdnnEnginePluginGetEngineDetails");
    SYM(DestroyEngineDetails, "hipdnnEnginePluginDestroyEngineDetails");
    SYM(GetWorkspaceSize, "hipdnnEnginePluginGetWorkspaceSize");
    SYM(CreateExecutionContext, "hipdnnEnginePluginCreateExecutionContext");
    SYM(DestroyExecutionContext, "hipdnnEnginePluginDestroyExecutionContext");
    SYM(ExecuteOpGraph, "hipdnnEnginePluginExecuteOpGraph");
    SYM(GetNotApplicableReason, "hipdnnEnginePluginGetNotApplicableReason");
#undef SYM
    return P.Create(&P.h) == HIPDNN_PLUGIN_STATUS_SUCCESS ? 0 : -1;
}

static const char* last_error(void) {
    const char* m = NULL;
    P.GetLastErrorString(&m);
    return m ? m : "(null)";
}

/* ---- checks ------------------------------------------------------------------------- */

#define CHECK(cond, ...)                                        \
    do {                                                        \
        if (!(cond)) {                                          \
            printf("    line %d: check failed: %s\n    ", __LINE__, #cond); \
            printf(__VA_ARGS__);                                \
            printf("\n");                                       \
            return 0;                                           \
        }                                                       \
    } while (0)

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static double rnd(double lo, double hi) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return lo + (hi - lo) * (double)(g_rng >> 11) / 9007199254740992.0;
}

/* ---- a graph under test, with its buffers -------------------------------------------- */

#define MAXT 12
#define MAXN 6

typedef struct {
    hipdnnSdkTensor t[MAXT];
    int nt;
    hipdnnSdkNode n[MAXN];
    int nn;
    double lo[MAXT], hi[MAXT]; /* random fill range of inputs */
    void* data[MAXT];
    void* orig[MAXT];
    size_t bytes[MAXT];
    size_t workspace; /* reported by the plugin */
} G;

static void g_init(G* g) { memset(g, 0, sizeof(*g)); }

static void g_free(G* g) {
    for (int i = 0; i < g->nt; ++i) {
        free(g->data[i]);
        free(g->orig[i]);
    }
}

static int idx_of(const G* g, int64_t uid) {
    for (int i = 0; i < g->nt; ++i)
        if (g->t[i].uid == uid) return i;
    return -1;
}

static const hipdnnSdkTensor* T(const G* g, int64_t uid) { return &g->t[idx_of(g, uid)]; }

/* A tensor laid out by `order` (dims listed outermost first in memory; NULL = packed). */
static int64_t add_tensor(G* g, const char* name, hipdnnDataType_t dt, int nd,
                          const int64_t* dims, const int* order) {
    hipdnnSdkTensor* t = &g->t[g->nt];
    memset(t, 0, sizeof(*t));
    t->uid = 100 + g->nt;
    t->name = (char*)name;
    t->data_type = dt;
    t->ndim = nd;
    for (int i = 0; i < nd; ++i) t->dims[i] = dims[i];
    int64_t s = 1;
    for (int i = nd - 1; i >= 0; --i) {
        int d = order ? order[i] : i;
        t->strides[d] = s;
        s *= dims[d];
    }
    g->lo[g->nt] = -1.0;
    g->hi[g->nt] = 1.0;
    g->nt++;
    return t->uid;
}

static int64_t add_virtual(G* g, const char* name, hipdnnDataType_t dt, int nd,
                           const int64_t* dims) {
    int64_t uid = add_tensor(g, name, dt, nd, dims, NULL);
    g->t[g->nt - 1].is_virtual = true;
    return uid;
}

static int64_t add_scalar(G* g, const char* name, hipdnnDataType_t dt, double v) {
    int64_t one = 1;
    int64_t uid = add_tensor(g, name, dt, 1, &one, NULL);
    double tmp[1];
    hipdnnSdkStoreFromDouble(tmp, dt, 0, v);
    memcpy(g->t[g->nt - 1].value, tmp, hipdnnSdkDataTypeSize(dt));
    g->t[g->nt - 1].is_by_value = true;
    g->t[g->nt - 1].has_value = true;
    return uid;
}

static hipdnnSdkNode* add_node(G* g, hipdnnOpKind_t kind, const char* name) {
    hipdnnSdkNode* n = &g->n[g->nn++];
    hipdnnSdkNodeInit(n, kind);
    n->name = (char*)name;
    n->compute_type = HIPDNN_DATA_FLOAT;
    return n;
}

static hipdnnSdkNode* add_conv(G* g, const char* name, int64_t x, int64_t w, int64_t y,
                               int nsp, const int64_t* pre, const int64_t* post,
                               const int64_t* stride, const int64_t* dil) {
    hipdnnSdkNode* n = add_node(g, HIPDNN_OP_CONV_FPROP, name);
    n->inputs[HIPDNN_CONV_X] = x;
    n->inputs[HIPDNN_CONV_W] = w;
    n->outputs[HIPDNN_CONV_Y] = y;
    for (int k = HIPDNN_CONV_PRE_PADDING; k <= HIPDNN_CONV_DILATION; ++k) n->attrs[k].count = nsp;
    for (int i = 0; i < nsp; ++i) {
        n->attrs[HIPDNN_CONV_PRE_PADDING].i[i] = pre[i];
        n->attrs[HIPDNN_CONV_POST_PADDING].i[i] = post[i];
        n->attrs[HIPDNN_CONV_STRIDE].i[i] = stride[i];
        n->attrs[HIPDNN_CONV_DILATION].i[i] = dil[i];
    }
    return n;
}

static hipdnnSdkNode* add_pw(G* g, const char* name, hipdnnPointwiseMode_t mode, int64_t x,
                             int64_t b, int64_t y) {
    hipdnnSdkNode* n = add_node(g, HIPDNN_OP_POINTWISE, name);
    n->attrs[HIPDNN_PW_MODE].i[0] = mode;
    n->attrs[HIPDNN_PW_MODE].count = 1;
    n->inputs[HIPDNN_PW_X] = x;
    if (b >= 0) n->inputs[HIPDNN_PW_B] = b;
    n->outputs[HIPDNN_PW_Y] = y;
    return n;
}

static bool is_output(const G* g, int64_t uid) {
    for (int i = 0; i < g->nn; ++i)
        for (int p = 0; p < HIPDNN_MAX_PORTS; ++p)
            if (g->n[i].outputs[p] == uid) return true;
    return false;
}

static void encode(const G* g, uint8_t** bytes, size_t* size) {
    hipdnnSdkGraph sg = {(char*)"test", g->nt, (hipdnnSdkTensor*)g->t, g->nn,
                         (hipdnnSdkNode*)g->n};
    if (hipdnnSdkGraphEncode(&sg, bytes, size) != 0) {
        printf("graph encode failed\n");
        exit(2);
    }
}

static void encode_config(uint64_t id, int nknobs, uint8_t** bytes, size_t* size) {
    hipdnnSdkKnobChoice knob = {7, 1};
    hipdnnSdkEngineConfig cfg = {id, nknobs, nknobs ? &knob : NULL};
    if (hipdnnSdkEngineConfigEncode(&cfg, bytes, size) != 0) exit(2);
}

static int64_t span(const hipdnnSdkTensor* t) {
    int64_t s = 1;
    for (int i = 0; i < t->ndim; ++i) s += (t->dims[i] - 1) * t->strides[i];
    return s;
}

/* Random inputs, NaN-poisoned outputs; keeps a copy of the inputs. */
static void alloc_buffers(G* g) {
    for (int i = 0; i < g->nt; ++i) {
        const hipdnnSdkTensor* t = &g->t[i];
        if (t->is_virtual || t->is_by_value) continue;
        int64_t n = span(t);
        g->bytes[i] = (size_t)n * hipdnnSdkDataTypeSize(t->data_type);
        g->data[i] = malloc(g->bytes[i]);
        bool out = is_output(g, t->uid);
        for (int64_t e = 0; e < n; ++e)
            hipdnnSdkStoreFromDouble(g->data[i], t->data_type, e,
                                     out ? NAN : rnd(g->lo[i], g->hi[i]));
        g->orig[i] = malloc(g->bytes[i]);
        memcpy(g->orig[i], g->data[i], g->bytes[i]);
    }
}

static double el(const G* g, int64_t uid, const int64_t* idx) {
    int i = idx_of(g, uid);
    const hipdnnSdkTensor* t = &g->t[i];
    if (t->is_by_value) {
        double tmp[1];
        memcpy(tmp, t->value, sizeof(t->value));
        return hipdnnSdkLoadAsDouble(tmp, t->data_type, 0);
    }
    int64_t off = 0;
    for (int d = 0; d < t->ndim; ++d) off += idx[d] * t->strides[d];
    return hipdnnSdkLoadAsDouble(g->data[i], t->data_type, off);
}

static bool next_index(int nd, const int64_t* dims, int64_t* idx) {
    for (int d = nd - 1; d >= 0; --d) {
        if (++idx[d] < dims[d]) return true;
        idx[d] = 0;
    }
    return false;
}

/* Plans and runs the graph; returns the execute status (or the first failing one). */
static hipdnnPluginStatus_t run_ex(G* g, bool give_workspace, int drop_uid) {
    uint8_t *gb = NULL, *cb = NULL;
    size_t gs = 0, cs = 0;
    encode(g, &gb, &gs);
    encode_config(hipdnnSdkFnv1a64("reference_cpu"), 0, &cb, &cs);
    hipdnnPluginStatus_t st = P.GetWorkspaceSize(P.h, cb, cs, gb, gs, &g->workspace);
    hipdnnEnginePluginExecutionContext_t ctx = NULL;
    if (st == HIPDNN_PLUGIN_STATUS_SUCCESS)
        st = P.CreateExecutionContext(P.h, cb, cs, gb, gs, &ctx);
    if (st == HIPDNN_PLUGIN_STATUS_SUCCESS) {
        hipdnnPluginDeviceBuffer_t bufs[MAXT];
        uint32_t nb = 0;
        for (int i = 0; i < g->nt; ++i)
            if (g->data[i] && g->t[i].uid != drop_uid)
                bufs[nb++] = (hipdnnPluginDeviceBuffer_t){g->t[i].uid, g->data[i]};
        void* ws = NULL;
        if (give_workspace && g->workspace > 0) {
            ws = malloc(g->workspace);
            memset(ws, 0xff, g->workspace); /* NaN in every float type */
        }
        st = P.ExecuteOpGraph(P.h, ctx, ws, bufs, nb);
        free(ws);
    }
    P.DestroyExecutionContext(P.h, ctx);
    free(gb);
    free(cb);
    return st;
}

static hipdnnPluginStatus_t run(G* g) { return run_ex(g, true, -1); }

static bool inputs_unchanged(const G* g) {
    for (int i = 0; i < g->nt; ++i)
        if (g->data[i] && !is_output(g, g->t[i].uid) &&
            memcmp(g->data[i], g->orig[i], g->bytes[i]) != 0)
            return false;
    return true;
}

/* Every element of y against `ref` (packed in y's dims): |got - ref| <= tol * (1 + |ref|). */
static int compare(const G* g, int64_t y, const double* ref, double tol) {
    const hipdnnSdkTensor* t = T(g, y);
    int64_t idx[HIPDNN_MAX_DIMS] = {0};
    int64_t e = 0, bad = 0;
    do {
        double got = el(g, y, idx), want = ref[e++];
        double err = fabs(got - want);
        if (!(err <= tol * (1.0 + fabs(want))) && bad++ < 3)
            printf("    y[%lld]: got %.9g want %.9g\n", (long long)(e - 1), got, want);
    } while (next_index(t->ndim, t->dims, idx));
    if (bad) printf("    %lld of %lld elements out of tolerance %g\n", (long long)bad,
                    (long long)e, tol);
    return bad == 0;
}

static int64_t count(const hipdnnSdkTensor* t) { return hipdnnSdkElementCount(t->ndim, t->dims); }

/* ---- float64 references, written plainly ---------------------------------------------- */

/* v correctly rounded to float16 (nearest, ties to even), by picking the nearest of the
 * neighbours of a first guess. */
static double round_half(double v) {
    uint16_t guess = hipdnnSdkFloatToHalf((float)v);
    double best = hipdnnSdkHalfToFloat(guess);
    for (int d = -1; d <= 1; d += 2) {
        uint16_t c = (uint16_t)(guess + d);
        double cv = hipdnnSdkHalfToFloat(c);
        if (isnan(cv) || signbit(cv) != signbit(best)) continue;
        double e1 = fabs(cv - v), e0 = fabs(best - v);
        if (e1 < e0 || (e1 == e0 && (c & 1u) == 0)) {
            best = cv;
        }
    }
    return best;
}

/* Convolution up to 3 spatial dims; the missing ones act as size 1. */
static double* conv_ref(const G* g, const hipdnnSdkNode* n) {
    const hipdnnSdkTensor *x = T(g, n->inputs[0]), *w = T(g, n->inputs[1]),
                          *y = T(g, n->outputs[0]);
    int nsp = x->ndim - 2;
    int64_t in[3] = {1, 1, 1}, ker[3] = {1, 1, 1}, out[3] = {1, 1, 1};
    int64_t pre[3] = {0, 0, 0}, st[3] = {1, 1, 1}, dil[3] = {1, 1, 1};
    for (int i = 0; i < nsp; ++i) {
        in[i] = x->dims[2 + i];
        ker[i] = w->dims[2 + i];
        out[i] = y->dims[2 + i];
        if (n->attrs[HIPDNN_CONV_STRIDE].count) {
            pre[i] = n->attrs[HIPDNN_CONV_PRE_PADDING].i[i];
            st[i] = n->attrs[HIPDNN_CONV_STRIDE].i[i];
            dil[i] = n->attrs[HIPDNN_CONV_DILATION].i[i];
        }
    }
    int64_t N = x->dims[0], C = x->dims[1], K = w->dims[0], Cw = w->dims[1];
    int64_t Kg = K / (C / Cw);
    bool flip = n->attrs[HIPDNN_CONV_MODE].i[0] == HIPDNN_CONVOLUTION;
    double* r = malloc((size_t)count(y) * sizeof(double));
    int64_t e = 0;
    for (int64_t b = 0; b < N; ++b)
        for (int64_t k = 0; k < K; ++k)
            for (int64_t o0 = 0; o0 < out[0]; ++o0)
                for (int64_t o1 = 0; o1 < out[1]; ++o1)
                    for (int64_t o2 = 0; o2 < out[2]; ++o2) {
                        double acc = 0;
                        int64_t grp = k / Kg;
                        for (int64_t c = 0; c < Cw; ++c)
                            for (int64_t q0 = 0; q0 < ker[0]; ++q0)
                                for (int64_t q1 = 0; q1 < ker[1]; ++q1)
                                    for (int64_t q2 = 0; q2 < ker[2]; ++q2) {
                                        int64_t o[3] = {o0, o1, o2}, q[3] = {q0, q1, q2};
                                        int64_t xi[5] = {b, grp * Cw + c}, wi[5] = {k, c};
                                        bool inside = true;
                                        for (int i = 0; i < nsp; ++i) {
                                            int64_t kp = flip ? ker[i] - 1 - q[i] : q[i];
                                            int64_t ip = o[i] * st[i] - pre[i] + kp * dil[i];
                                            if (ip < 0 || ip >= in[i]) inside = false;
                                            xi[2 + i] = ip;
                                            wi[2 + i] = q[i];
                                        }
                                        if (inside)
                                            acc += el(g, w->uid, wi) * el(g, x->uid, xi);
                                    }
                        r[e++] = acc;
                    }
    return r;
}

/* Index into `t` of the element that broadcasting maps to out index `idx` (rank ond). */
static void bcast_index(const hipdnnSdkTensor* t, int ond, const int64_t* idx, int64_t* ti) {
    for (int d = 0; d < t->ndim; ++d) {
        int od = d + (ond - t->ndim);
        ti[d] = (od < 0 || t->dims[d] == 1) ? 0 : idx[od];
    }
}

static double* matmul_ref(const G* g, int64_t a, int64_t b, int64_t c) {
    const hipdnnSdkTensor *ta = T(g, a), *tb = T(g, b), *tc = T(g, c);
    double* r = malloc((size_t)count(tc) * sizeof(double));
    int64_t idx[HIPDNN_MAX_DIMS] = {0}, e = 0;
    int64_t K = ta->dims[ta->ndim - 1];
    do {
        double acc = 0;
        for (int64_t p = 0; p < K; ++p) {
            int64_t ai[HIPDNN_MAX_DIMS], bi[HIPDNN_MAX_DIMS];
            /* batch dims broadcast; the last two are (m, p) and (p, n) */
            bcast_index(ta, tc->ndim, idx, ai);
            bcast_index(tb, tc->ndim, idx, bi);
            ai[ta->ndim - 2] = idx[tc->ndim - 2];
            ai[ta->ndim - 1] = p;
            bi[tb->ndim - 2] = p;
            bi[tb->ndim - 1] = idx[tc->ndim - 1];
            acc += el(g, a, ai) * el(g, b, bi);
        }
        r[e++] = acc;
    } while (next_index(tc->ndim, tc->dims, idx));
    return r;
}

static double pw_apply(const hipdnnSdkNode* n, double x, double b) {
    switch (hipdnnSdkNodeMode(n)) {
    case HIPDNN_POINTWISE_ADD: return x + b;
    case HIPDNN_POINTWISE_SUB: return x - b;
    case HIPDNN_POINTWISE_MUL: return x * b;
    case HIPDNN_POINTWISE_DIV: return x / b;
    case HIPDNN_POINTWISE_MAX: return x > b ? x : b;
    case HIPDNN_POINTWISE_MIN: return x < b ? x : b;
    case HIPDNN_POINTWISE_IDENTITY: return x;
    case HIPDNN_POINTWISE_RELU_FWD:
        if (x > n->attrs[HIPDNN_PW_RELU_LOWER_CLIP].d) return x < n->attrs[HIPDNN_PW_RELU_UPPER_CLIP].d ? x : n->attrs[HIPDNN_PW_RELU_UPPER_CLIP].d;
        return n->attrs[HIPDNN_PW_RELU_LOWER_CLIP].d + n->attrs[HIPDNN_PW_RELU_LOWER_CLIP_SLOPE].d * (x - n->attrs[HIPDNN_PW_RELU_LOWER_CLIP].d);
    case HIPDNN_POINTWISE_SIGMOID_FWD: return 1.0 / (1.0 + exp(-x));
    case HIPDNN_POINTWISE_TANH_FWD: return tanh(x);
    case HIPDNN_POINTWISE_GELU_FWD: return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    default: return NAN;
    }
}

static double* pointwise_ref(const G* g, const hipdnnSdkNode* n) {
    const hipdnnSdkTensor *tx = T(g, n->inputs[0]), *ty = T(g, n->outputs[0]);
    bool binary = n->inputs[1] != HIPDNN_NO_TENSOR;
    double* r = malloc((size_t)count(ty) * sizeof(double));
    int64_t idx[HIPDNN_MAX_DIMS] = {0}, xi[HIPDNN_MAX_DIMS], bi[HIPDNN_MAX_DIMS], e = 0;
    do {
        bcast_index(tx, ty->ndim, idx, xi);
        double b = 0;
        if (binary) {
            bcast_index(T(g, n->inputs[1]), ty->ndim, idx, bi);
            b = el(g, n->inputs[1], bi);
        }
        r[e++] = pw_apply(n, el(g, tx->uid, xi), b);
    } while (next_index(ty->ndim, ty->dims, idx));
    return r;
}

/* ---- tests: identity and declining ---------------------------------------------------- */

static int test_identity(void) {
    uint32_t major = 0, minor = 9;
    const char *name = NULL, *version = NULL;
    hipdnnPluginType_t type = HIPDNN_PLUGIN_TYPE_BENCHMARK;
    CHECK(P.GetApiVersion(&major, &minor) == 0 && major == 1 && minor == 1, "api %u.%u", major,
          minor);
    CHECK(P.GetName(&name) == 0 && strcmp(name, "reference_cpu") == 0, "name %s", name);
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", HIPDNN_VERSION_MAJOR, HIPDNN_VERSION_MINOR,
             HIPDNN_VERSION_PATCH);
    CHECK(P.GetVersion(&version) == 0 && strcmp(version, want) == 0, "version %s", version);
    CHECK(P.GetType(&type) == 0 && type == HIPDNN_PLUGIN_TYPE_ENGINE, "type %d", (int)type);
    uint32_t num = 0;
    uint64_t ids[4] = {0};
    CHECK(P.GetAllEngineIds(NULL, 0, &num) == 0 && num == 1, "count %u", num);
    CHECK(P.GetAllEngineIds(ids, 4, &num) == 0 && num == 1 &&
              ids[0] == hipdnnSdkFnv1a64("reference_cpu"),
          "id %llx", (unsigned long long)ids[0]);
    const hipdnnPluginEngineDetails_t* d = NULL;
    CHECK(P.GetEngineDetails(P.h, ids[0], &d) == 0 && d, "details: %s", last_error());
    CHECK(d->struct_size == sizeof(*d) && d->engine_id == ids[0] &&
              strcmp(d->name, "reference_cpu") == 0 && d->memory_space == HIPDNN_MEMORY_HOST &&
              d->priority == 0 && d->num_knobs == 0 &&
              d->flags == (HIPDNN_ENGINE_FLAG_FALLBACK | HIPDNN_ENGINE_FLAG_DETERMINISTIC) &&
              d->notes && !strchr(d->notes, '\n'),
          "details fields");
    CHECK(P.DestroyEngineDetails(P.h, d) == 0, "destroy details");
    CHECK(P.GetEngineDetails(P.h, ids[0] + 1, &d) == HIPDNN_PLUGIN_STATUS_BAD_PARAM &&
              strstr(last_error(), "unknown engine id"),
          "unknown id: %s", last_error());
    CHECK(P.SetStream(P.h, NULL) == 0, "set stream");
    return 1;
}

/* A 2D conv graph for declining tests: x [1, 4, 5, 5] (dtype dt), w [2, 4, 3, 3] -> y. */
static void small_conv(G* g, hipdnnDataType_t dt, int64_t yh) {
    int64_t xd[4] = {1, 4, 5, 5}, wd[4] = {2, 4, 3, 3}, yd[4] = {1, 2, yh, 3};
    int64_t z[2] = {0, 0}, one[2] = {1, 1};
    int64_t x = add_tensor(g, "img", dt, 4, xd, NULL);
    int64_t w = add_tensor(g, "filt", HIPDNN_DATA_FLOAT, 4, wd, NULL);
    int64_t y = add_tensor(g, "out", HIPDNN_DATA_FLOAT, 4, yd, NULL);
    add_conv(g, "c1", x, w, y, 2, z, z, one, one);
}

static int applicable(const G* g, const char** reason) {
    uint8_t* b;
    size_t s;
    uint32_t num = 7;
    uint64_t id = 0;
    encode(g, &b, &s);
    hipdnnPluginStatus_t st = P.GetApplicableEngineIds(P.h, b, s, &id, 1, &num);
    if (reason) P.GetNotApplicableReason(P.h, hipdnnSdkFnv1a64("reference_cpu"), b, s, reason);
    free(b);
    return st != 0 ? -1 : (int)num;
}

static int test_declines_int8_with_reason(void) {
    G g;
    g_init(&g);
    small_conv(&g, HIPDNN_DATA_INT8, 3);
    const char* why = NULL;
    CHECK(applicable(&g, &why) == 0, "int8 graph should be declined");
    CHECK(why && strstr(why, "reference_cpu: node 'c1' (conv_fprop)") && strstr(why, "int8") &&
              strstr(why, "'img'") && !strchr(why, '\n'),
          "reason: %s", why ? why : "(null)");
    uint8_t *gb, *cb;
    size_t gs, cs, ws = 0;
    encode(&g, &gb, &gs);
    encode_config(hipdnnSdkFnv1a64("reference_cpu"), 0, &cb, &cs);
    CHECK(P.GetWorkspaceSize(P.h, cb, cs, gb, gs, &ws) == HIPDNN_PLUGIN_STATUS_NOT_SUPPORTED &&
              strstr(last_error(), "int8"),
          "workspace on a declined graph: %s", last_error());
    free(gb);
    free(cb);
    return 1;
}

static int test_declines_bad_shapes(void) {
    G g;
    g_init(&g);
    small_conv(&g, HIPDNN_DATA_FLOAT, 4); /* the conv gives 3 rows, not 4 */
    const char* why = NULL;
    CHECK(applicable(&g, &why) == 0 && strstr(why, "spatial dim 0"), "reason: %s", why);

    g_init(&g);
    int64_t ad[2] = {3, 4}, bd[2] = {5, 6}, cd[2] = {3, 6};
    int64_t a = add_tensor(&g, "a", HIPDNN_DATA_FLOAT, 2, ad, NULL);
    int64_t b = add_tensor(&g, "b", HIPDNN_DATA_FLOAT, 2, bd, NULL);
    int64_t c = add_tensor(&g, "c", HIPDNN_DATA_FLOAT, 2, cd, NULL);
    hipdnnSdkNode* n = add_node(&g, HIPDNN_OP_MATMUL, "mm");
    n->inputs[0] = a;
    n->inputs[1] = b;
    n->outputs[0] = c;
    CHECK(applicable(&g, &why) == 0 && strstr(why, "inner dims"), "reason: %s", why);

    /* a virtual input nobody writes */
    g_init(&g);
    int64_t d[2] = {2, 2};
    int64_t v = add_virtual(&g, "ghost", HIPDNN_DATA_FLOAT, 2, d);
    int64_t y = add_tensor(&g, "y", HIPDNN_DATA_FLOAT, 2, d, NULL);
    add_pw(&g, "r", HIPDNN_POINTWISE_RELU_FWD, v, -1, y);
    CHECK(applicable(&g, &why) == 0 && strstr(why, "read before"), "reason: %s", why);
    return 1;
}

static int test_rejects_bad_bytes_and_configs(void) {
    uint8_t junk[64];
    for (int i = 0; i < 64; ++i) junk[i] = (uint8_t)(rnd(0, 256));
    uint32_t num = 5;
    uint64_t id;
    CHECK(P.GetApplicableEngineIds(P.h, junk, sizeof(junk), &id, 1, &num) != 0 && num == 0 &&
              strstr(last_error(), "verification"),
          "junk: %s", last_error());
    const char* why = NULL;
    CHECK(P.GetNotApplicableReason(P.h, hipdnnSdkFnv1a64("reference_cpu"), junk, sizeof(junk),
                                   &why) == 0 && why && strstr(why, "reference_cpu"),
          "junk reason");
    G g;
    g_init(&g);
    small_conv(&g, HIPDNN_DATA_FLOAT, 3);
    uint8_t *gb, *cb;
    size_t gs, cs, ws;
    encode(&g, &gb, &gs);
    encode_config(hipdnnSdkFnv1a64("other_engine"), 0, &cb, &cs);
    CHECK(P.GetWorkspaceSize(P.h, cb, cs, gb, gs, &ws) == HIPDNN_PLUGIN_STATUS_BAD_PARAM &&
              strstr(last_error(), "unknown engine id"),
          "foreign config: %s", last_error());
    free(cb);
    encode_config(hipdnnSdkFnv1a64("reference_cpu"), 1, &cb, &cs);
    CHECK(P.GetWorkspaceSize(P.h, cb, cs, gb, gs, &ws) == HIPDNN_PLUGIN_STATUS_BAD_PARAM &&
              strstr(last_error(), "no knobs"),
          "knob config: %s", last_error());
    free(cb);
    free(gb);
    return 1;
}

/* ---- tests: convolution ----------------------------------------------------------------- */

static int run_and_check(G* g, int64_t y, double* ref, double tol) {
    hipdnnPluginStatus_t st = run(g);
    int ok = st == HIPDNN_PLUGIN_STATUS_SUCCESS;
    if (!ok) printf("    run failed (%d): %s\n", (int)st, last_error());
    if (ok && !inputs_unchanged(g)) {
        printf("    inputs changed\n");
        ok = 0;
    }
    if (ok) ok = compare(g, y, ref, tol);
    return ok;
}

static int conv_case(hipdnnDataType_t dt, int nd, const int64_t* xd, const int64_t* wd,
                     const int64_t* yd, const int* layout, const int64_t* pre,
                     const int64_t* post, const int64_t* st, const int64_t* dil, int mode,
                     double tol) {
    G g;
    g_init(&g);
    int64_t x = add_tensor(&g, "x", dt, nd, xd, layout);
    int64_t w = add_tensor(&g, "w", dt, nd, wd, layout);
    int64_t y = add_tensor(&g, "y", dt, nd, yd, layout);
    hipdnnSdkNode* n = add_conv(&g, "conv", x, w, y, pre ? nd - 2 : 0, pre, post, st, dil);
    n->attrs[HIPDNN_CONV_MODE].i[0] = mode;
    CHECK(applicable(&g, NULL) == 1, "conv should be applicable: %s", last_error());
    alloc_buffers(&g);
    hipdnnPluginStatus_t s = run(&g);
    CHECK(s == 0, "run: %s", last_error());
    /* no virtual tensor: the workspace is the conv kernel's scratch, 256-byte aligned */
    CHECK(g.workspace > 0 && g.workspace % 256 == 0, "conv scratch workspace %zu", g.workspace);
    CHECK(inputs_unchanged(&g), "inputs changed");
    double* ref = conv_ref(&g, n);
    int ok = compare(&g, y, ref, tol);
    free(ref);
    g_free(&g);
    return ok;
}

static int test_conv2d_nchw_asymmetric_padding_stride(void) {
    int64_t xd[4] = {2, 3, 7, 6}, wd[4] = {4, 3, 3, 2}, yd[4] = {2, 4, 4, 8};
    int64_t pre[2] = {1, 0}, post[2] = {1, 3}, st[2] = {2, 1}, dil[2] = {1, 1};
    return conv_case(HIPDNN_DATA_FLOAT, 4, xd, wd, yd, NULL, pre, post, st, dil,
                     HIPDNN_CROSS_CORRELATION, 1e-5);
}

static int test_conv2d_nhwc_dilation(void) {
    static const int nhwc[4] = {0, 2, 3, 1};
    /* H: (9 + 2 + 2 - 5) / 1 + 1 = 9; W: (8 + 1 + 0 - 5) / 2 + 1 = 3 */
    int64_t xd[4] = {2, 5, 9, 8}, wd[4] = {3, 5, 3, 3}, yd[4] = {2, 3, 9, 3};
    int64_t pre[2] = {2, 1}, post[2] = {2, 0}, st[2] = {1, 2}, dil[2] = {2, 2};
    return conv_case(HIPDNN_DATA_FLOAT, 4, xd, wd, yd, nhwc, pre, post, st, dil,
                     HIPDNN_CROSS_CORRELATION, 1e-5);
}

static int test_conv2d_groups_odd_layout(void) {
    static const int chwn[4] = {1, 2, 3, 0}; /* N innermost */
    int64_t xd[4] = {2, 6, 5, 5}, wd[4] = {9, 2, 3, 3}, yd[4] = {2, 9, 5, 5};
    int64_t pre[2] = {1, 1}, post[2] = {1, 1}, st[2] = {1, 1}, dil[2] = {1, 1};
    return conv_case(HIPDNN_DATA_FLOAT, 4, xd, wd, yd, chwn, pre, post, st, dil,
                     HIPDNN_CROSS_CORRELATION, 1e-5);
}

static int test_conv3d(void) {
    /* D: (5+2-3)/1+1 = 5; H: (6+2-3)/2+1 = 3; W: (4+0-2)/1+1 = 3 */
    int64_t xd[5] = {2, 3, 5, 6, 4}, wd[5] = {4, 3, 3, 3, 2}, yd[5] = {2, 4, 5, 3, 3};
    int64_t pre[3] = {1, 1, 0}, post[3] = {1, 1, 0}, st[3] = {1, 2, 1}, dil[3] = {1, 1, 1};
    static const int ndhwc[5] = {0, 2, 3, 4, 1};
    return conv_case(HIPDNN_DATA_FLOAT, 5, xd, wd, yd, NULL, pre, post, st, dil,
                     HIPDNN_CROSS_CORRELATION, 1e-5) &&
           conv_case(HIPDNN_DATA_FLOAT, 5, xd, wd, yd, ndhwc, pre, post, st, dil,
                     HIPDNN_CROSS_CORRELATION, 1e-5);
}

static int test_conv1d_true_convolution(void) {
    /* the dilated kernel spans 7: (11 + 1 + 2 - 7) / 2 + 1 = 4 */
    int64_t xd[3] = {3, 2, 11}, wd[3] = {3, 2, 4}, yd[3] = {3, 3, 4};
    int64_t pre[1] = {1}, post[1] = {2}, st[1] = {2}, dil[1] = {2};
    return conv_case(HIPDNN_DATA_FLOAT, 3, xd, wd, yd, NULL, pre, post, st, dil,
                     HIPDNN_CONVOLUTION, 1e-5);
}

static int test_conv_default_parameters(void) {
    int64_t xd[4] = {1, 2, 6, 5}, wd[4] = {3, 2, 2, 2}, yd[4] = {1, 3, 5, 4};
    return conv_case(HIPDNN_DATA_FLOAT, 4, xd, wd, yd, NULL, NULL, NULL, NULL, NULL,
                     HIPDNN_CROSS_CORRELATION, 1e-5);
}

static int test_conv_fp16_nhwc(void) {
    static const int nhwc[4] = {0, 2, 3, 1};
    int64_t xd[4] = {2, 8, 6, 6}, wd[4] = {4, 8, 3, 3}, yd[4] = {2, 4, 6, 6};
    int64_t p[2] = {1, 1}, s[2] = {1, 1};
    return conv_case(HIPDNN_DATA_HALF, 4, xd, wd, yd, nhwc, p, p, s, s,
                     HIPDNN_CROSS_CORRELATION, 1e-2);
}

static int test_conv_bf16(void) {
    int64_t xd[4] = {2, 8, 6, 6}, wd[4] = {4, 8, 3, 3}, yd[4] = {2, 4, 3, 3};
    int64_t p[2] = {1, 1}, s[2] = {2, 2}, d[2] = {1, 1};
    return conv_case(HIPDNN_DATA_BFLOAT16, 4, xd, wd, yd, NULL, p, p, s, d,
                     HIPDNN_CROSS_CORRELATION, 5e-2);
}

static void random_perm(int nd, int* perm) {
    for (int i = 0; i < nd; ++i) perm[i] = i;
    for (int i = nd - 1; i > 0; --i) {
        int j = (int)rnd(0, i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

/* Random rank, groups, padding, stride, dilation, mode, dtype, and a random memory order for
 * each of x, w, y. */
static int test_conv_random_configs(void) {
    static const hipdnnDataType_t dts[4] = {HIPDNN_DATA_FLOAT, HIPDNN_DATA_HALF,
                                            HIPDNN_DATA_BFLOAT16, HIPDNN_DATA_DOUBLE};
    static const double tols[4] = {1e-5, 1e-2, 5e-2, 1e-9};
    for (int it = 0; it < 40; ++it) {
        int nsp = 1 + (int)rnd(0, 3), nd = nsp + 2, dti = (int)rnd(0, 4);
        int64_t groups = 1 + (int64_t)rnd(0, 3), cg = 1 + (int64_t)rnd(0, 3);
        int64_t kg = 1 + (int64_t)rnd(0, 3);
        int64_t xd[5] = {1 + (int64_t)rnd(0, 2), groups * cg}, wd[5] = {groups * kg, cg};
        int64_t yd[5] = {xd[0], groups * kg};
        int64_t pre[3], post[3], st[3], dil[3];
        for (int i = 0; i < nsp; ++i) {
            xd[2 + i] = 1 + (int64_t)rnd(0, 7);
            wd[2 + i] = 1 + (int64_t)rnd(0, 3);
            pre[i] = (int64_t)rnd(0, 3);
            post[i] = (int64_t)rnd(0, 3);
            st[i] = 1 + (int64_t)rnd(0, 3);
            dil[i] = 1 + (int64_t)rnd(0, 2);
            int64_t extent = (wd[2 + i] - 1) * dil[i] + 1, padded = xd[2 + i] + pre[i] + post[i];
            if (extent > padded) dil[i] = 1, wd[2 + i] = 1, extent = 1;
            yd[2 + i] = (padded - extent) / st[i] + 1;
        }
        int px[5], pw[5], py[5];
        random_perm(nd, px);
        random_perm(nd, pw);
        random_perm(nd, py);
        G g;
        g_init(&g);
        int64_t x = add_tensor(&g, "x", dts[dti], nd, xd, px);
        int64_t w = add_tensor(&g, "w", dts[dti], nd, wd, pw);
        int64_t y = add_tensor(&g, "y", dts[dti], nd, yd, py);
        hipdnnSdkNode* n = add_conv(&g, "conv", x, w, y, nsp, pre, post, st, dil);
        n->attrs[HIPDNN_CONV_MODE].i[0] = rnd(0, 1) < 0.5 ? HIPDNN_CROSS_CORRELATION : HIPDNN_CONVOLUTION;
        alloc_buffers(&g);
        double* ref = conv_ref(&g, n);
        int ok = run_and_check(&g, y, ref, tols[dti]);
        if (!ok)
            printf("    config %d: rank %d, %s, groups %lld, mode %d\n", it, nd,
                   hipdnnSdkDataTypeName(dts[dti]), (long long)groups,
                   (int)n->attrs[HIPDNN_CONV_MODE].i[0]);
        free(ref);
        g_free(&g);
        if (!ok) return 0;
    }
    return 1;
}

/* ---- tests: matmul, pointwise, batchnorm ------------------------------------------------ */

static int test_matmul_batch_broadcast(void) {
    G g;
    g_init(&g);
    int64_t ad[4] = {2, 1, 3, 4}, bd[3] = {3, 4, 5}, cd[4] = {2, 3, 3, 5};
    static const int b_col_major[3] = {0, 2, 1}; /* each [K, N] matrix stored N-major */
    int64_t a = add_tensor(&g, "a", HIPDNN_DATA_FLOAT, 4, ad, NULL);
    int64_t b = add_tensor(&g, "b", HIPDNN_DATA_FLOAT, 3, bd, b_col_major);
    int64_t c = add_tensor(&g, "c", HIPDNN_DATA_FLOAT, 4, cd, NULL);
    hipdnnSdkNode* n = add_node(&g, HIPDNN_OP_MATMUL, "mm");
    n->inputs[HIPDNN_MATMUL_A] = a;
    n->inputs[HIPDNN_MATMUL_B] = b;
    n->outputs[HIPDNN_MATMUL_C] = c;
    alloc_buffers(&g);
    double* ref = matmul_ref(&g, a, b, c);
    int ok = run_and_check(&g, c, ref, 1e-5);
    free(ref);
    g_free(&g);
    return ok;
}

static int test_matmul_bf16_in_fp32_out(void) {
    G g;
    g_init(&g);
    int64_t ad[2] = {5, 17}, bd[2] = {17, 3}, cd[2] = {5, 3};
    int64_t a = add_tensor(&g, "a", HIPDNN_DATA_BFLOAT16, 2, ad, NULL);
    int64_t b = add_tensor(&g, "b", HIPDNN_DATA_BFLOAT16, 2, bd, NULL);
    int64_t c = add_tensor(&g, "c", HIPDNN_DATA_FLOAT, 2, cd, NULL);
    hipdnnSdkNode* n = add_node(&g, HIPDNN_OP_MATMUL, "mm");
    n->inputs[0] = a;
    n->inputs[1] = b;
    n->outputs[0] = c;
    alloc_buffers(&g);
    double* ref = matmul_ref(&g, a, b, c);
    /* inputs are exact bf16 values and c is fp32: only fp32 rounding remains */
    int ok = run_and_check(&g, c, ref, 1e-5);
    free(ref);
    g_free(&g);
    return ok;
}

static int pointwise_case(hipdnnDataType_t dt, hipdnnPointwiseMode_t mode, int nx,
                          const int64_t* xd, const int* xlayout, int nb, const int64_t* bd,
                          int ny, const int64_t* yd, double lo_clip, double hi_clip,
                          double slope, double tol) {
    G g;
    g_init(&g);
    int64_t x = add_tensor(&g, "x", dt, nx, xd, xlayout);
    int64_t b = nb ? add_tensor(&g, "b", dt, nb, bd, NULL) : -1;
    if (mode == HIPDNN_POINTWISE_DIV) {
        g.lo[1] = 0.5; /* keep divisors away from 0 */
        g.hi[1] = 1.5;
    }
    int64_t y = add_tensor(&g, "y", dt, ny, yd, NULL);
    hipdnnSdkNode* n = add_pw(&g, "pw", mode, x, b, y);
    n->attrs[HIPDNN_PW_RELU_LOWER_CLIP].d = lo_clip;
    n->attrs[HIPDNN_PW_RELU_UPPER_CLIP].d = hi_clip;
    n->attrs[HIPDNN_PW_RELU_LOWER_CLIP_SLOPE].d = slope;
    alloc_buffers(&g);
    double* ref = pointwise_ref(&g, n);
    int ok = run_and_check(&g, y, ref, tol);
    if (!ok) printf("    mode %s\n", hipdnnSdkPointwiseModeName(mode));
    free(ref);
    g_free(&g);
    return ok;
}

static int test_pointwise_binary_broadcast(void) {
    static const hipdnnPointwiseMode_t modes[] = {
        HIPDNN_POINTWISE_ADD, HIPDNN_POINTWISE_SUB, HIPDNN_POINTWISE_MUL,
        HIPDNN_POINTWISE_DIV, HIPDNN_POINTWISE_MAX, HIPDNN_POINTWISE_MIN};
    static const int nhwc[4] = {0, 2, 3, 1};
    int64_t xd[4] = {2, 3, 4, 5}, bd[2] = {4, 1}, yd[4] = {2, 3, 4, 5};
    int64_t x3[3] = {3, 1, 5}, b4[4] = {2, 1, 4, 1};
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); ++i) {
        /* b of lower rank broadcast against x; then both sides broadcast */
        if (!pointwise_case(HIPDNN_DATA_FLOAT, modes[i], 4, xd, nhwc, 2, bd, 4, yd, 0, INFINITY,
                            0, 1e-5) ||
            !pointwise_case(HIPDNN_DATA_FLOAT, modes[i], 3, x3, NULL, 4, b4, 4, yd, 0, INFINITY,
                            0, 1e-5))
            return 0;
    }
    return 1;
}

static int test_pointwise_unary_and_relu_clips(void) {
    int64_t d[3] = {3, 4, 7};
    static const int perm[3] = {2, 0, 1};
    static const hipdnnPointwiseMode_t modes[] = {
        HIPDNN_POINTWISE_IDENTITY, HIPDNN_POINTWISE_RELU_FWD, HIPDNN_POINTWISE_SIGMOID_FWD,
        HIPDNN_POINTWISE_TANH_FWD, HIPDNN_POINTWISE_GELU_FWD};
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); ++i)
        if (!pointwise_case(HIPDNN_DATA_FLOAT, modes[i], 3, d, perm, 0, NULL, 3, d, 0, INFINITY,
                            0, 1e-5))
            return 0;
    /* clipped and leaky relu: lower 0.25 (slope 0.1 below it), upper 0.5 */
    return pointwise_case(HIPDNN_DATA_FLOAT, HIPDNN_POINTWISE_RELU_FWD, 3, d, NULL, 0, NULL, 3,
                          d, -0.25, 0.5, 0.1, 1e-5) &&
           pointwise_case(HIPDNN_DATA_FLOAT, HIPDNN_POINTWISE_RELU_FWD, 3, d, NULL, 0, NULL, 3,
                          d, 0, INFINITY, 0.2, 1e-5);
}

static int test_pointwise_fp16_bf16(void) {
    int64_t xd[3] = {2, 5, 6}, bd[1] = {6};
    return pointwise_case(HIPDNN_DATA_HALF, HIPDNN_POINTWISE_ADD, 3, xd, NULL, 1, bd, 3, xd, 0,
                          INFINITY, 0, 1e-3) &&
           pointwise_case(HIPDNN_DATA_HALF, HIPDNN_POINTWISE_GELU_FWD, 3, xd, NULL, 0, NULL, 3,
                          xd, 0, INFINITY, 0, 1e-3) &&
           pointwise_case(HIPDNN_DATA_BFLOAT16, HIPDNN_POINTWISE_MUL, 3, xd, NULL, 1, bd, 3, xd,
                          0, INFINITY, 0, 1e-2) &&
           pointwise_case(HIPDNN_DATA_BFLOAT16, HIPDNN_POINTWISE_SIGMOID_FWD, 3, xd, NULL, 0,
                          NULL, 3, xd, 0, INFINITY, 0, 1e-2);
}

static int test_pointwise_by_value_scalar(void) {
    G g;
    g_init(&g);
    int64_t d[2] = {4, 6};
    int64_t x = add_tensor(&g, "x", HIPDNN_DATA_FLOAT, 2, d, NULL);
    int64_t s = add_scalar(&g, "alpha", HIPDNN_DATA_FLOAT, -2.5);
    int64_t y = add_tensor(&g, "y", HIPDNN_DATA_FLOAT, 2, d, NULL);
    hipdnnSdkNode* n = add_pw(&g, "scale", HIPDNN_POINTWISE_MUL, x, s, y);
    alloc_buffers(&g);
    double* ref = pointwise_ref(&g, n);
    int ok = run_and_check(&g, y, ref, 1e-5);
    free(ref);
    g_free(&g);
    return ok;
}

static int test_batchnorm_inference_nhwc(void) {
    G g;
    g_init(&g);
    static const int nhwc[4] = {0, 2, 3, 1};
    int64_t xd[4] = {2, 3, 4, 5}, pd[4] = {1, 3, 1, 1};
    int64_t x = add_tensor(&g, "x", HIPDNN_DATA_FLOAT, 4, xd, nhwc);
    int64_t p[4];
    const char* names[4] = {"mean", "inv_var", "scale", "bias"};
    for (int i = 0; i < 4; ++i) p[i] = add_tensor(&g, names[i], HIPDNN_DATA_FLOAT, 4, pd, NULL);
    g.lo[2] = 0.5; /* inv_variance is positive */
    g.hi[2] = 2.0;
    int64_t y = add_tensor(&g, "y", HIPDNN_DATA_FLOAT, 4, xd, nhwc);
    hipdnnSdkNode* n = add_node(&g, HIPDNN_OP_BATCHNORM_INFERENCE, "bn");
    n->inputs[HIPDNN_BN_X] = x;
    n->inputs[HIPDNN_BN_MEAN] = p[0];
    n->inputs[HIPDNN_BN_INV_VARIANCE] = p[1];
    n->inputs[HIPDNN_BN_SCALE] = p[2];
    n->inputs[HIPDNN_BN_BIAS] = p[3];
    n->outputs[HIPDNN_BN_Y] = y;
    alloc_buffers(&g);
    double* ref = malloc(120 * sizeof(double));
    int64_t idx[4] = {0}, e = 0;
    do {
        int64_t ci[4] = {0, idx[1], 0, 0};
        ref[e++] = (el(&g, x, idx) - el(&g, p[0], ci)) * el(&g, p[1], ci) * el(&g, p[2], ci) +
                   el(&g, p[3], ci);
    } while (next_index(4, xd, idx));
    int ok = run_and_check(&g, y, ref, 2e-4);
    free(ref);
    g_free(&g);
    return ok;
}

/* ---- tests: reduction and norm_forward ------------------------------------------------------ */

/* x [2, 5, 4, 3] in NHWC order, norm2 over axes 0 and 2: y [1, 5, 1, 3]. */
static int test_reduction_norm2_over_two_axes_nhwc(void) {
    G g;
    g_init(&g);
    static const int nhwc[4] = {0, 2, 3, 1};
    int64_t xd[4] = {2, 5, 4, 3}, yd[4] = {1, 5, 1, 3};
    int64_t x = add_tensor(&g, "x", HIPDNN_DATA_FLOAT, 4, xd, nhwc);
    int64_t y = add_tensor(&g, "y", HIPDNN_DATA_FLOAT, 4, yd, NULL);
    hipdnnSdkNode* n = add_node(&g, HIPDNN_OP_REDUCTION, "red");
    n->attrs[HIPDNN_RED_MODE].i[0] = HIPDNN_REDUCE_TENSOR_NORM2;
    n->attrs[HIPDNN_RED_MODE].count = 1;
    n->inputs[HIPDNN_RED_X] = x;
    n->outputs[HIPDNN_RED_Y] = y;
    alloc_buffers(&g);
    double ref[15];
    for (int64_t c = 0; c < 5; ++c)
        for (int64_t w = 0; w < 3; ++w) {
            double acc = 0;
            for (int64_t b = 0; b < 2; ++b)
                for (int64_t h = 0; h < 4; ++h) {
                    int64_t xi[4] = {b, c, h, w};
                    acc += el(&g, x, xi) * el(&g, x, xi);
                }
            ref[c * 3 + w] = sqrt(acc);
        }
    int ok = run_and_check(&g, y, ref, 1e-5);
    /* y must keep x's rank: declined, with the node named */
    g.t[1].ndim = 3;
    const char* why = NULL;
    CHECK(applicable(&g, &why) == 0 && strstr(why, "node 'red' (reduction norm2)") &&
              strstr(why, "rank"),
          "reason: %s", why ? why : "(null)");
    g_free(&g);
    return ok;
}

/* x [512, 2048] summed over rows (a tile per 2048 columns, the rows cut in pieces) and
 * its maximum over everything: enough values for several threads (TSan runs this too). */
static int test_reductions_on_threads(void) {
    G g;
    g_init(&g);
    int64_t xd[2] = {512, 2048}, cd[2] = {1, 2048}, ad[2] = {1, 1};
    int64_t x = add_tensor(&g, "x", HIPDNN_DATA_FLOAT, 2, xd, NULL);
    int64_t cols = add_tensor(&g, "cols", HIPDNN_DATA_FLOAT, 2, cd, NULL);
    int64_t all = add_tensor(&g, "all", HIPDNN_DATA_FLOAT, 2, ad, NULL);
    hipdnnSdkNode* n = add_node(&g, HIPDNN_OP_REDUCTION, "sum_rows");
    n->attrs[HIPDNN_RED_MODE].i[0] = HIPDNN_REDUCE_TENSOR_ADD;
    n->attrs[HIPDNN_RED_MODE].count = 1;
    n->inputs[HIPDNN_RED_X] = x;
    n->outputs[HIPDNN_RED_Y] = cols;
    n = add_node(&g, HIPDNN_OP_REDUCTION, "max_all");
    n->attrs[HIPDNN_RED_MODE].i[0] = HIPDNN_REDUCE_TENSOR_MAX;
    n->attrs[HIPDNN_RED_MODE].count = 1;
    n->inputs[HIPDNN_RED_X] = x;
    n->outputs[HIPDNN_RED_Y] = all;
    alloc_buffers(&g);
    double* ref = calloc(2048, sizeof(double));
    double most = -INFINITY;
    for (int64_t r = 0; r < 512; ++r)
        for (int64_t c = 0; c < 2048; ++c) {
            int64_t xi[2] = {r, c};
            double v = el(&g, x, xi);
            ref[c] += v;
            most = v > most ? v : most;
        }
    int ok = run_and_check(&g, cols, ref, 1e-5) && compare(&g, all, &most, 0);
    free(ref);
    g_free(&g);
    return ok;
}

/* layernorm, training: x [3, 4, 10], scale and bias [1, 1, 10], epsilon a constant;
 * y [3, 4, 10], mean and inv_variance [3, 4, 1]. */
static int test_layernorm_training(void) {
    G g;
    g_init(&g);
    int64_t xd[3] = {3, 4, 10}, pd[3] = {1, 1, 10}, sd[3] = {3, 4, 1};
    int64_t x = add_tensor(&g, "x", HIPDNN_DATA_FLOAT, 3, xd, NULL);
    int64_t sc = add_tensor(&g, "scale", HIPDNN_DATA_FLOAT, 3, pd, NULL);
    int64_t bi = add_tensor(&g, "bias", HIPDNN_DATA_FLOAT, 3, pd, NULL);
    int64_t eps = add_scalar(&g, "eps", HIPDNN_DATA_FLOAT, 1e-3);
    int64_t y = add_tensor(&g, "y", HIPDNN_DATA_FLOAT, 3, xd, NULL);
    int64_t mean = add_tensor(&g, "mean", HIPDNN_DATA_FLOAT, 3, sd, NULL);
    int64_t inv = add_tensor(&g, "inv_variance", HIPDNN_DATA_FLOAT, 3, sd, NULL);
    g.lo[0] = 1.0; /* a mean away from zero */
    g.hi[0] = 3.0;
    hipdnnSdkNode* n = add_node(&g, HIPDNN_OP_NORM_FORWARD, "ln");
    n->attrs[HIPDNN_NORM_MODE].i[0] = HIPDNN_LAYER_NORM;
    n->attrs[HIPDNN_NORM_MODE].count = 1;
    n->attrs[HIPDNN_NORM_PHASE].i[0] = HIPDNN_NORM_FWD_TRAINING;
    n->attrs[HIPDNN_NORM_PHASE].count = 1;
    n->inputs[HIPDNN_NORM_X] = x;
    n->inputs[HIPDNN_NORM_SCALE] = sc;
    n->inputs[HIPDNN_NORM_BIAS] = bi;
    n->inputs[HIPDNN_NORM_EPSILON] = eps;
    n->outputs[HIPDNN_NORM_Y] = y;
    n->outputs[HIPDNN_NORM_MEAN] = mean;
    n->outputs[HIPDNN_NORM_INV_VARIANCE] = inv;
    alloc_buffers(&g);
    double ry[120], rm[12], ri[12];
    for (int64_t r = 0; r < 12; ++r) {
        double sum = 0, sq = 0;
        for (int64_t k = 0; k < 10; ++k) {
            int64_t xi[3] = {r / 4, r % 4, k};
            sum += el(&g, x, xi);
        }
        rm[r] = sum / 10;
        for (int64_t k = 0; k < 10; ++k) {
            int64_t xi[3] = {r / 4, r % 4, k};
            sq += (el(&g, x, xi) - rm[r]) * (el(&g, x, xi) - rm[r]);
        }
        ri[r] = 1.0 / sqrt(sq / 10 + (double)1e-3f);
        for (int64_t k = 0; k < 10; ++k) {
            int64_t xi[3] = {r / 4, r % 4, k}, pi[3] = {0, 0, k};
            ry[r * 10 + k] = (el(&g, x, xi) - rm[r]) * ri[r] * el(&g, sc, pi) + el(&g, bi, pi);
        }
    }
    int ok = run_and_check(&g, y, ry, 1e-4) && compare(&g, mean, rm, 1e-4) &&
             compare(&g, inv, ri, 1e-4);
    /* statistics of the wrong shape: declined, naming the port */
    g.t[5].dims[2] = 10;
    const char* why = NULL;
    CHECK(applicable(&g, &why) == 0 && strstr(why, "node 'ln' (layernorm)") &&
              strstr(why, "output mean dims"),
          "reason: %s", why ? why : "(null)");
    g_free(&g);
    return ok;
}

/* ---- tests: a multi-node graph, workspace and buffers ------------------------------------ */

static void conv_add_relu(G* g, int64_t* y_out, hipdnnSdkNode** conv) {
    int64_t xd[4] = {2, 3, 6, 6}, wd[4] = {4, 3, 3, 3}, yd[4] = {2, 4, 6, 6}, bd[4] = {1, 4, 1, 1};
    int64_t p[2] = {1, 1}, s[2] = {1, 1};
    int64_t x = add_tensor(g, "x", HIPDNN_DATA_FLOAT, 4, xd, NULL);
    int64_t w = add_tensor(g, "w", HIPDNN_DATA_FLOAT, 4, wd, NULL);
    int64_t t1 = add_virtual(g, "conv_out", HIPDNN_DATA_FLOAT, 4, yd);
    int64_t bias = add_tensor(g, "bias", HIPDNN_DATA_FLOAT, 4, bd, NULL);
    int64_t t2 = add_virtual(g, "biased", HIPDNN_DATA_HALF, 4, yd);
    int64_t y = add_tensor(g, "y", HIPDNN_DATA_FLOAT, 4, yd, NULL);
    *conv = add_conv(g, "conv", x, w, t1, 2, p, p, s, s);
    add_pw(g, "add", HIPDNN_POINTWISE_ADD, t1, bias, t2);
    add_pw(g, "relu", HIPDNN_POINTWISE_RELU_FWD, t2, -1, y);
    *y_out = y;
}

static int test_conv_add_relu_graph(void) {
    G g;
    g_init(&g);
    int64_t y;
    hipdnnSdkNode* conv;
    conv_add_relu(&g, &y, &conv);
    alloc_buffers(&g);
    CHECK(applicable(&g, NULL) == 1, "chain should be applicable");
    CHECK(run_ex(&g, false, -1) == HIPDNN_PLUGIN_STATUS_BAD_PARAM &&
              strstr(last_error(), "workspace"),
          "NULL workspace: %s", last_error());
    /* fp32 [2,4,6,6] = 1152 B -> 1280; fp16 = 576 B -> 768; then the conv's scratch */
    CHECK(g.workspace > 1280 + 768 && (g.workspace - 1280 - 768) % 256 == 0, "workspace %zu",
          g.workspace);
    CHECK(run(&g) == 0, "run: %s", last_error());
    CHECK(inputs_unchanged(&g), "inputs changed");
    /* reference: conv in float64, stored as fp32; + bias, stored as fp16; relu */
    double* r = conv_ref(&g, conv);
    int64_t idx[4] = {0}, dims[4] = {2, 4, 6, 6}, e = 0;
    do {
        int64_t bi[4] = {0, idx[1], 0, 0};
        double v = (double)(float)r[e] + el(&g, g.t[3].uid, bi);
        v = round_half(v);
        r[e++] = v > 0 ? v : 0;
    } while (next_index(4, dims, idx));
    int ok = compare(&g, y, r, 1e-5);
    free(r);
    g_free(&g);
    return ok;
}

static int test_missing_buffer_named(void) {
    G g;
    g_init(&g);
    small_conv(&g, HIPDNN_DATA_FLOAT, 3);
    alloc_buffers(&g);
    hipdnnPluginStatus_t st = run_ex(&g, true, g.t[1].uid);
    CHECK(st == HIPDNN_PLUGIN_STATUS_BAD_PARAM && strstr(last_error(), "'filt'") &&
              strstr(last_error(), "uid 101"),
          "status %d: %s", (int)st, last_error());
    g_free(&g);
    return 1;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* 8x64x28x28 * 64x64x3x3 (231M multiply-adds): fast enough, and right at sampled points. */
static int test_conv_speed(void) {
    G g;
    g_init(&g);
    int64_t xd[4] = {8, 64, 28, 28}, wd[4] = {64, 64, 3, 3};
    int64_t p[2] = {1, 1}, s[2] = {1, 1};
    int64_t x = add_tensor(&g, "x", HIPDNN_DATA_FLOAT, 4, xd, NULL);
    int64_t w = add_tensor(&g, "w", HIPDNN_DATA_FLOAT, 4, wd, NULL);
    int64_t y = add_tensor(&g, "y", HIPDNN_DATA_FLOAT, 4, xd, NULL);
    add_conv(&g, "big", x, w, y, 2, p, p, s, s);
    alloc_buffers(&g);
    double t0 = now();
    CHECK(run(&g) == 0, "run: %s", last_error());
    double dt = now() - t0;
    printf("    conv 8x64x28x28 (*) 64x64x3x3: %.3f s\n", dt);
    CHECK(dt < 5.0, "too slow: %.3f s", dt);
    for (int k = 0; k < 64; ++k) {
        int64_t o[4] = {(int64_t)rnd(0, 8), (int64_t)rnd(0, 64), (int64_t)rnd(0, 28),
                        (int64_t)rnd(0, 28)};
        if (k < 4) { /* corners exercise the padding */
            o[2] = k & 1 ? 27 : 0;
            o[3] = k & 2 ? 27 : 0;
        }
        double acc = 0;
        for (int64_t c = 0; c < 64; ++c)
            for (int64_t i = 0; i < 3; ++i)
                for (int64_t j = 0; j < 3; ++j) {
                    int64_t h = o[2] - 1 + i, v = o[3] - 1 + j;
                    if (h < 0 || h >= 28 || v < 0 || v >= 28) continue;
                    int64_t xi[4] = {o[0], c, h, v}, wi[4] = {o[1], c, i, j};
                    acc += el(&g, x, xi) * el(&g, w, wi);
                }
        double got = el(&g, y, o);
        CHECK(fabs(got - acc) <= 1e-5 * (1 + fabs(acc)), "y at (%lld,%lld,%lld,%lld): %g vs %g",
              (long long)o[0], (long long)o[1], (long long)o[2], (long long)o[3], got, acc);
    }
    g_free(&g);
    return 1;
}

/* ---- runner ------------------------------------------------------------------------------ */

static int g_passed, g_failed;

static void run_test(const char* name, int (*fn)(void)) {
    int ok = fn();
    printf("%s %s\n", ok ? "PASS" : "FAIL", name);
    if (ok) g_passed++;
    else g_failed++;
}

#define RUN(fn) run_test(#fn, fn)

int main(void) {
    if (load_plugin() != 0) {
        printf("0 passed, 1 failed\n");
        return 1;
    }
    RUN(test_identity);
    RUN(test_declines_int8_with_reason);
    RUN(test_declines_bad_shapes);
    RUN(test_rejects_bad_bytes_and_configs);
    RUN(test_conv2d_nchw_asymmetric_padding_stride);
    RUN(test_conv2d_nhwc_dilation);
    RUN(test_conv2d_groups_odd_layout);
    RUN(test_conv3d);
    RUN(test_conv1d_true_convolution);
    RUN(test_conv_default_parameters);
    RUN(test_conv_fp16_nhwc);
    RUN(test_conv_bf16);
    RUN(test_conv_random_configs);
    RUN(test_matmul_batch_broadcast);
    RUN(test_matmul_bf16_in_fp32_out);
    RUN(test_pointwise_binary_broadcast);
    RUN(test_pointwise_unary_and_relu_clips);
    RUN(test_pointwise_fp16_bf16);
    RUN(test_pointwise_by_value_scalar);
    RUN(test_batchnorm_inference_nhwc);
    RUN(test_reduction_norm2_over_two_axes_nhwc);
    RUN(test_layernorm_training);
    RUN(test_reductions_on_threads);
    RUN(test_conv_add_relu_graph);
    RUN(test_missing_buffer_named);
    RUN(test_conv_speed);
    P.Destroy(P.h);
    dlclose(P.lib);
    printf("%d passed, %d failed\n", g_passed, g_failed);
    return g_failed == 0 ? 0 : 1;
}
