/* fake_cudnn.c — a stand-in for NVIDIA's libcudnn.so.9, for tests on machines without a
 * GPU: the backend graph API calls the cudnn engine makes (plugins/cudnn), with the
 * library's semantics, over the "device" memory of the fake driver (tests/fake_cuda, host
 * malloc).
 *
 * Descriptors keep their attributes as set; finalizing checks what cuDNN checks (required
 * attributes, ranks, shapes of convolutions, matmuls and broadcast pointwise operands) and
 * refuses with a status and cudnnGetLastErrorString's message.  The heuristic offers four
 * engine configs for a graph of one convolution or matmul followed by pointwise nodes of
 * the modes computed here, or for attention as cuDNN frontend builds it (q k^T, pointwise
 * scale / bias / GEN_INDEX masks, max and sum reductions, p v: fp16 / bf16 in, p in v's
 * type; GQA's grouped batch dims), or for attention's backward as it builds that (five
 * matmuls, three reshapes that transpose, sum reductions, GQA's sums over groups of
 * heads), or for one NORM_FORWARD / NORM_BACKWARD (layer, instance, batch, RMS; 4D or
 * 5D; fp32 / fp16 / bf16 data, fp32 scale, bias and statistics, epsilon and momentum by
 * value): engines 7 (1 MiB of workspace), 3 (none), 11 (which
 * never builds a plan: a stand-in for an engine that refuses the graph) and 42 (64 KiB);
 * any other graph is NOT_SUPPORTED_GRAPH_PATTERN.  Execute checks the variant pack (every
 * non-virtual tensor present, device memory inside its allocation and as aligned as its
 * descriptor says, by-value scalars in host memory, enough workspace, which it scribbles
 * on) and computes the graph in float64, rounding each tensor once to its data type.
 *
 * Built as build/tests/fake_cudnn/libcudnn.so.9; used when a test names it
 * ($HIPDNN_CUDNN_LIBRARY) with the fake driver on LD_LIBRARY_PATH.  FAKE_CUDNN_OLD=1
 * reports version 8.9.7, older than the engine takes; FAKE_CUDNN_VERSION=<n> reports n;
 * FAKE_CUDNN_CREATE_MS=<ms> makes cudnnCreate take that long. */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fake_cuda/fake_device.h"
#include "hipdnn/hipdnn_sdk.h"

#define EXPORT __attribute__((visibility("default")))

typedef int status;
enum { OK = 0, NOT_INITIALIZED = 1001, BAD_PARAM = 2000, NULL_POINTER = 2002,
       MISALIGNED = 2003, NOT_FINALIZED = 2004, SIZE_INSUFFICIENT = 2006,
       SHAPE_MISMATCH = 2008, ATTRIBUTE_TYPE = 2010, DESCRIPTOR_TYPE = 2012,
       NOT_SUPPORTED = 3000, GRAPH_PATTERN = 3001, EXEC_FAILED = 5000 };
/* descriptor types */
enum { D_POINTWISE = 0, D_CONV = 1, D_ENGINE = 2, D_ENGINECFG = 3, D_ENGINEHEUR = 4, D_PLAN = 5,
       D_OP_FPROP = 10, D_OP_WGRAD = 11, D_OP_DGRAD = 12, D_OP_POINTWISE = 13,
       D_OPGRAPH = 15, D_VARIANT_PACK = 16, D_TENSOR = 17, D_MATMUL = 18, D_OP_MATMUL = 19,
       D_REDUCTION = 21, D_OP_REDUCTION = 22, D_OP_NORM_FWD = 29, D_OP_NORM_BWD = 30,
       D_OP_RESHAPE = 31 };
/* attribute types */
enum { T_HANDLE = 0, T_DATA_TYPE = 1, T_BOOLEAN = 2, T_INT64 = 3, T_FLOAT = 4, T_DOUBLE = 5,
       T_VOID_PTR = 6, T_CONV_MODE = 7, T_HEUR_MODE = 8, T_PW_MODE = 14, T_DESC = 15,
       T_REDUCTION_OP = 18, T_NORM_MODE = 27, T_NORM_PHASE = 28 };
#define MAGIC 0xCD9u
#define HANDLE_MAGIC 0xCD9Au
#define MAX_ATTRS 24
#define MAX_RANK 8
#define MAX_GRAPH 256 /* tensors and operations of one operation graph */

/* ---- the calling thread's last error --------------------------------------------------- */

static _Thread_local char t_error[512];

static status fail(status st, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t_error, sizeof(t_error), fmt, ap);
    va_end(ap);
    return st;
}

EXPORT void cudnnGetLastErrorString(char* message, size_t max_size) {
    if (!message || !max_size) return;
    snprintf(message, max_size, "%s", t_error);
    t_error[0] = '\0';
}

EXPORT const char* cudnnGetErrorString(status s) {
    switch (s) {
    case OK: return "CUDNN_STATUS_SUCCESS";
    case NOT_INITIALIZED: return "CUDNN_STATUS_NOT_INITIALIZED";
    case BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM";
    case NULL_POINTER: return "CUDNN_STATUS_BAD_PARAM_NULL_POINTER";
    case MISALIGNED: return "CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER";
    case NOT_FINALIZED: return "CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED";
    case SIZE_INSUFFICIENT: return "CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT";
    case SHAPE_MISMATCH: return "CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH";
    case ATTRIBUTE_TYPE: return "CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE";
    case DESCRIPTOR_TYPE: return "CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE";
    case NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED";
    case GRAPH_PATTERN: return "CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN";
    case EXEC_FAILED: return "CUDNN_STATUS_EXECUTION_FAILED";
    default: return "CUDNN_STATUS_UNKNOWN";
    }
}

/* Heuristic queries finalized and handles made so far: the tests see which builds asked
 * cuDNN again, and that a build the plan cache decides for another engine asks it nothing. */
static long g_heuristic_queries;
static long g_handles_made;
EXPORT long fakeCudnnHeuristicQueries(void) { return g_heuristic_queries; }
EXPORT long fakeCudnnHandlesCreated(void) { return g_handles_made; }

/* FAKE_CUDNN_VERSION=91400 plays another cuDNN 9 (the engine's version-dependent declines). */
EXPORT size_t cudnnGetVersion(void) {
    const char* v = getenv("FAKE_CUDNN_VERSION");
    return getenv("FAKE_CUDNN_OLD") ? 8907 : v && *v ? (size_t)strtoul(v, NULL, 10) : 91900;
}

/* ---- handles ------------------------------------------------------------------------------ */

typedef struct {
    unsigned magic;
    void* stream;
} handle;

EXPORT status cudnnCreate(handle** h) {
    if (!h) return fail(NULL_POINTER, "cudnnCreate: NULL handle pointer");
    if (!fake_context_current())
        return fail(NOT_INITIALIZED, "cudnnCreate: no current CUDA context");
    fake_sleep_from("FAKE_CUDNN_CREATE_MS");
    *h = calloc(1, sizeof(**h));
    if (!*h) return fail(NOT_INITIALIZED, "cudnnCreate: out of memory");
    (*h)->magic = HANDLE_MAGIC;
    ++g_handles_made;
    return OK;
}

EXPORT status cudnnDestroy(handle* h) {
    if (!h || h->magic != HANDLE_MAGIC) return fail(BAD_PARAM, "cudnnDestroy: not a handle");
    h->magic = 0;
    free(h);
    return OK;
}

EXPORT status cudnnSetStream(handle* h, void* stream) {
    if (!h || h->magic != HANDLE_MAGIC) return fail(BAD_PARAM, "cudnnSetStream: not a handle");
    h->stream = stream;
    return OK;
}

/* ---- descriptors -------------------------------------------------------------------------- */

typedef struct {
    int name, type;
    int64_t count;
    void* data;
} attr;

typedef struct desc {
    unsigned magic;
    int type;
    bool final;
    int n;
    attr a[MAX_ATTRS];
    int64_t engine, workspace; /* engine configs, engines and plans */
    struct desc* graph;        /* heuristics, configs and plans: their operation graph */
    int64_t results;           /* heuristics: configs offered */
} desc;

static size_t type_size(int type) {
    switch (type) {
    case T_BOOLEAN: return sizeof(bool);
    case T_DATA_TYPE: case T_FLOAT: case T_CONV_MODE: case T_HEUR_MODE: case T_PW_MODE:
    case T_REDUCTION_OP: case T_NORM_MODE: case T_NORM_PHASE: return 4;
    case T_INT64: case T_DOUBLE: return 8;
    case T_HANDLE: case T_VOID_PTR: case T_DESC: return sizeof(void*);
    default: return 0;
    }
}

static bool valid(const desc* d) { return d && d->magic == MAGIC; }

EXPORT status cudnnBackendCreateDescriptor(int type, desc** out) {
    if (!out) return fail(NULL_POINTER, "cudnnBackendCreateDescriptor: NULL output");
    *out = calloc(1, sizeof(**out));
    if (!*out) return fail(BAD_PARAM, "out of memory");
    (*out)->magic = MAGIC;
    (*out)->type = type;
    (*out)->engine = -1;
    return OK;
}

EXPORT status cudnnBackendDestroyDescriptor(desc* d) {
    if (!valid(d)) return fail(BAD_PARAM, "cudnnBackendDestroyDescriptor: not a descriptor");
    for (int i = 0; i < d->n; ++i) free(d->a[i].data);
    d->magic = 0;
    free(d);
    return OK;
}

EXPORT status cudnnBackendSetAttribute(desc* d, int name, int type, int64_t count,
                                       const void* values) {
    if (!valid(d)) return fail(BAD_PARAM, "cudnnBackendSetAttribute: not a descriptor");
    if (d->final) return fail(BAD_PARAM, "attribute %d set on a finalized descriptor", name);
    const size_t size = type_size(type);
    if (!size) return fail(ATTRIBUTE_TYPE, "attribute %d: unknown attribute type %d", name, type);
    if (count < 0 || (count > 0 && !values))
        return fail(NULL_POINTER, "attribute %d: NULL values", name);
    if (type == T_DESC)
        for (int64_t i = 0; i < count; ++i) {
            desc* child = ((desc* const*)values)[i];
            if (!valid(child) || !child->final)
                return fail(NOT_FINALIZED, "attribute %d: element %lld is not a finalized "
                            "descriptor", name, (long long)i);
        }
    int at = 0;
    while (at < d->n && d->a[at].name != name) ++at;
    if (at == MAX_ATTRS) return fail(BAD_PARAM, "too many attributes");
    void* copy = malloc(size * (size_t)(count ? count : 1));
    if (!copy) return fail(BAD_PARAM, "out of memory");
    if (count) memcpy(copy, values, size * (size_t)count);
    if (at < d->n) free(d->a[at].data);
    else ++d->n;
    d->a[at] = (attr){name, type, count, copy};
    return OK;
}

static const attr* find(const desc* d, int name) {
    for (int i = 0; i < d->n; ++i)
        if (d->a[i].name == name) return &d->a[i];
    return NULL;
}

static int64_t i64(const desc* d, int name, int64_t k, int64_t dflt) {
    const attr* a = find(d, name);
    if (!a || k >= a->count) return dflt;
    switch (a->type) {
    case T_INT64: return ((const int64_t*)a->data)[k];
    case T_BOOLEAN: return ((const bool*)a->data)[k];
    default: return ((const int32_t*)a->data)[k];
    }
}

static double f64(const desc* d, int name, double dflt) {
    const attr* a = find(d, name);
    if (!a || a->count < 1) return dflt;
    return a->type == T_FLOAT ? ((const float*)a->data)[0] : ((const double*)a->data)[0];
}

static desc* child(const desc* d, int name, int64_t k) {
    const attr* a = find(d, name);
    if (!a || a->type != T_DESC || k >= a->count) return NULL;
    return ((desc* const*)a->data)[k];
}

static int64_t count_of(const desc* d, int name) {
    const attr* a = find(d, name);
    return a ? a->count : 0;
}

/* ---- tensors ------------------------------------------------------------------------------ */

enum { A_DT = 901, A_DIMS = 902, A_STRIDES = 903, A_UID = 906, A_VIRTUAL = 907, A_BYVAL = 908,
       A_ALIGN = 900 };

static int rank(const desc* t) { return (int)count_of(t, A_DIMS); }
static int64_t dim(const desc* t, int k) { return i64(t, A_DIMS, k, 0); }
static int64_t uid(const desc* t) { return i64(t, A_UID, 0, -1); }
static bool is_virtual(const desc* t) { return i64(t, A_VIRTUAL, 0, 0) != 0; }
static bool by_value(const desc* t) { return i64(t, A_BYVAL, 0, 0) != 0; }
static int64_t elements(const desc* t) {
    int64_t n = 1;
    for (int k = 0; k < rank(t); ++k) n *= dim(t, k);
    return n;
}

static status finalize_tensor(desc* t) {
    const int r = rank(t);
    if (!find(t, A_DT) || !find(t, A_UID) || !find(t, A_ALIGN) || r < 1 ||
        count_of(t, A_STRIDES) != r || r > MAX_RANK)
        return fail(BAD_PARAM, "tensor: data type, unique id, byte alignment and as many "
                    "strides as dims (1 to 8) are required");
    for (int k = 0; k < r; ++k)
        if (dim(t, k) < 1 || i64(t, A_STRIDES, k, 0) < 1)
            return fail(BAD_PARAM, "tensor %lld: dims and strides must be positive",
                        (long long)uid(t));
    if (by_value(t) && (is_virtual(t) || elements(t) != 1))
        return fail(BAD_PARAM, "tensor %lld: a by-value tensor holds one value and is not "
                    "virtual", (long long)uid(t));
    return OK;
}

/* ---- operations ---------------------------------------------------------------------------- */

/* The ports of each op: the attributes of its inputs and outputs. */
typedef struct {
    int in[3], out;
} ports;

static ports op_ports(const desc* op) {
    switch (op->type) {
    case D_OP_FPROP: return (ports){{704, 703, -1}, 705};  /* x, w -> y */
    case D_OP_DGRAD: return (ports){{711, 709, -1}, 710};  /* dy, w -> dx */
    case D_OP_WGRAD: return (ports){{716, 717, -1}, 715};  /* x, dy -> dw */
    case D_OP_MATMUL: return (ports){{1520, 1521, -1}, 1522};
    case D_OP_REDUCTION: return (ports){{1610, -1, -1}, 1611};
    case D_OP_RESHAPE: return (ports){{2200, -1, -1}, 2201};
    default: { /* pointwise: x, b or dy, t -> y or dx */
        const bool bwd = find(op, 757) != NULL;
        return (ports){{751, bwd ? 757 : 752, 758}, bwd ? 756 : 753};
    }
    }
}

static int pw_arity(int mode) {
    if (mode == HIPDNN_POINTWISE_BINARY_SELECT) return 3;
    if (mode < 100) {
        switch (mode) {
        case HIPDNN_POINTWISE_ADD: case HIPDNN_POINTWISE_MUL: case HIPDNN_POINTWISE_MIN:
        case HIPDNN_POINTWISE_MAX: case HIPDNN_POINTWISE_DIV: case HIPDNN_POINTWISE_SUB:
        case HIPDNN_POINTWISE_ADD_SQUARE: case HIPDNN_POINTWISE_POW: case HIPDNN_POINTWISE_MOD:
            return 2;
        default: return 1;
        }
    }
    if (mode >= 200 && mode < 300) return 2; /* x, dy */
    if (mode >= 300 && mode < 400) return 2;
    if (mode == HIPDNN_POINTWISE_LOGICAL_AND || mode == HIPDNN_POINTWISE_LOGICAL_OR) return 2;
    return 1;
}

/* Whether this fake computes the mode (the rest it refuses as an engine would). */
static bool pw_computed(int mode) {
    switch (mode) {
    case HIPDNN_POINTWISE_ADD: case HIPDNN_POINTWISE_SUB: case HIPDNN_POINTWISE_MUL:
    case HIPDNN_POINTWISE_DIV: case HIPDNN_POINTWISE_MAX: case HIPDNN_POINTWISE_MIN:
    case HIPDNN_POINTWISE_IDENTITY: case HIPDNN_POINTWISE_NEG: case HIPDNN_POINTWISE_ABS:
    case HIPDNN_POINTWISE_EXP: case HIPDNN_POINTWISE_RELU_FWD: case HIPDNN_POINTWISE_TANH_FWD:
    case HIPDNN_POINTWISE_SIGMOID_FWD: case HIPDNN_POINTWISE_ELU_FWD:
    case HIPDNN_POINTWISE_GELU_FWD: case HIPDNN_POINTWISE_GELU_APPROX_TANH_FWD:
    case HIPDNN_POINTWISE_SWISH_FWD: case HIPDNN_POINTWISE_SOFTPLUS_FWD:
    case HIPDNN_POINTWISE_LOG: case HIPDNN_POINTWISE_GEN_INDEX: case HIPDNN_POINTWISE_CMP_GT:
    case HIPDNN_POINTWISE_CMP_GE: case HIPDNN_POINTWISE_CMP_LT:
    case HIPDNN_POINTWISE_BINARY_SELECT:
        return true;
    default:
        return false;
    }
}

static status check_tensor_port(const desc* op, int attr, const char* what, desc** out) {
    *out = child(op, attr, 0);
    if (!*out || (*out)->type != D_TENSOR)
        return fail(BAD_PARAM, "%s: no %s tensor (attribute %d)", what, what, attr);
    return OK;
}

static int64_t out_size(int64_t in, int64_t f, int64_t pre, int64_t post, int64_t s, int64_t d) {
    return (in + pre + post - d * (f - 1) - 1) / s + 1;
}

static status finalize_conv_op(desc* op) {
    static const char* names[] = {"convolution forward", "convolution backward filter",
                                  "convolution backward data"};
    const char* what = names[op->type - D_OP_FPROP];
    const ports p = op_ports(op);
    desc *a, *b, *c;
    status st = check_tensor_port(op, p.in[0], what, &a);
    if (st == OK) st = check_tensor_port(op, p.in[1], what, &b);
    if (st == OK) st = check_tensor_port(op, p.out, what, &c);
    if (st != OK) return st;
    desc* conv = child(op, op->type == D_OP_FPROP ? 702 : op->type == D_OP_DGRAD ? 708 : 714, 0);
    if (!conv || conv->type != D_CONV) return fail(BAD_PARAM, "%s: no convolution descriptor", what);
    /* x, w, y whatever the direction */
    const desc* x = op->type == D_OP_DGRAD ? c : a;
    const desc* w = op->type == D_OP_FPROP ? b : op->type == D_OP_DGRAD ? b : c;
    const desc* y = op->type == D_OP_FPROP ? c : op->type == D_OP_DGRAD ? a : b;
    const int nsp = (int)i64(conv, 106, 0, 0);
    if (rank(x) != nsp + 2 || rank(w) != nsp + 2 || rank(y) != nsp + 2)
        return fail(SHAPE_MISMATCH, "%s: x, w and y must have rank %d (spatial dims + 2)", what,
                    nsp + 2);
    const int64_t groups = dim(w, 1) > 0 ? dim(x, 1) / dim(w, 1) : 0;
    if (groups < 1 || dim(x, 1) != groups * dim(w, 1) || dim(w, 0) % groups ||
        dim(y, 0) != dim(x, 0) || dim(y, 1) != dim(w, 0))
        return fail(SHAPE_MISMATCH, "%s: channels do not match (x C %lld, w [%lld, %lld], "
                    "y C %lld)", what, (long long)dim(x, 1), (long long)dim(w, 0),
                    (long long)dim(w, 1), (long long)dim(y, 1));
    for (int k = 0; k < nsp; ++k) {
        const int64_t want = out_size(dim(x, k + 2), dim(w, k + 2), i64(conv, 105, k, 0),
                                      i64(conv, 104, k, 0), i64(conv, 103, k, 1),
                                      i64(conv, 102, k, 1));
        if (want != dim(y, k + 2))
            return fail(SHAPE_MISMATCH, "%s: spatial dim %d of y is %lld, the geometry gives "
                        "%lld", what, k, (long long)dim(y, k + 2), (long long)want);
    }
    return OK;
}

static bool broadcasts(const desc* in, const desc* out) {
    if (rank(in) != rank(out)) return false;
    for (int k = 0; k < rank(out); ++k)
        if (dim(in, k) != dim(out, k) && dim(in, k) != 1) return false;
    return true;
}

static status finalize_pointwise_op(desc* op) {
    desc* pw = child(op, 750, 0);
    if (!pw || pw->type != D_POINTWISE) return fail(BAD_PARAM, "pointwise: no pointwise descriptor");
    const int mode = (int)i64(pw, 0, 0, -1);
    const ports p = op_ports(op);
    desc* out = NULL;
    status st = check_tensor_port(op, p.out, "pointwise", &out);
    if (st == OK && mode == HIPDNN_POINTWISE_GEN_INDEX &&
        (i64(pw, 9, 0, -1) < 0 || i64(pw, 9, 0, -1) >= rank(out)))
        return fail(BAD_PARAM, "pointwise GEN_INDEX: an axis among the output's %d dims",
                    rank(out));
    for (int k = 0; st == OK && k < pw_arity(mode); ++k) {
        desc* in = NULL;
        st = check_tensor_port(op, p.in[k], "pointwise", &in);
        if (st == OK && !broadcasts(in, out))
            return fail(SHAPE_MISMATCH, "pointwise mode %d: operand %lld does not broadcast to "
                        "output %lld", mode, (long long)uid(in), (long long)uid(out));
    }
    return st;
}

static status finalize_matmul_op(desc* op) {
    desc *a, *b, *c;
    status st = check_tensor_port(op, 1520, "matmul", &a);
    if (st == OK) st = check_tensor_port(op, 1521, "matmul", &b);
    if (st == OK) st = check_tensor_port(op, 1522, "matmul", &c);
    if (st != OK) return st;
    if (!child(op, 1523, 0)) return fail(BAD_PARAM, "matmul: no matmul descriptor");
    const int r = rank(c);
    if (r < 3 || rank(a) != r || rank(b) != r)
        return fail(SHAPE_MISMATCH, "matmul: a, b and c must have one rank, 3 or more");
    if (dim(a, r - 1) != dim(b, r - 2) || dim(c, r - 2) != dim(a, r - 2) ||
        dim(c, r - 1) != dim(b, r - 1))
        return fail(SHAPE_MISMATCH, "matmul: [.., M, K] x [.., K, N] -> [.., M, N] does not hold");
    for (int k = 0; k < r - 2; ++k) /* a batch dim of 1, or one c's is a multiple of (GQA) */
        if (dim(c, k) % dim(a, k) || dim(c, k) % dim(b, k))
            return fail(SHAPE_MISMATCH, "matmul: batch dim %d does not broadcast", k);
    return OK;
}

/* A reduction's y: each dim x's, 1, or a divisor of x's (GQA's sum over groups of heads,
 * consecutive heads a group). */
static bool reduces_to(const desc* y, const desc* x) {
    if (rank(y) != rank(x)) return false;
    for (int k = 0; k < rank(x); ++k)
        if (dim(x, k) % dim(y, k)) return false;
    return true;
}

static status finalize_reduction_op(desc* op) {
    desc *x, *y;
    status st = check_tensor_port(op, 1610, "reduction", &x);
    if (st == OK) st = check_tensor_port(op, 1611, "reduction", &y);
    if (st != OK) return st;
    const desc* r = child(op, 1612, 0);
    if (!r || r->type != D_REDUCTION) return fail(BAD_PARAM, "reduction: no reduction descriptor");
    if (!reduces_to(y, x))
        return fail(SHAPE_MISMATCH, "reduction: y %lld must have x's dims, 1s or their divisors",
                    (long long)uid(y));
    return OK;
}

/* A reshape describes x's elements anew: y has as many (the transposes attention's backward
 * makes: p^T, dS^T, k^T back to k). */
static status finalize_reshape_op(desc* op) {
    desc *x, *y;
    status st = check_tensor_port(op, 2200, "reshape", &x);
    if (st == OK) st = check_tensor_port(op, 2201, "reshape", &y);
    if (st == OK && elements(x) != elements(y))
        return fail(SHAPE_MISMATCH, "reshape: x %lld has %lld elements, y %lld %lld",
                    (long long)uid(x), (long long)elements(x), (long long)uid(y),
                    (long long)elements(y));
    return st;
}

/* ---- normalization: NORM_FORWARD and NORM_BACKWARD (cuDNN's rules) ------------------------ */

enum { N_LAYER = 0, N_INSTANCE = 1, N_BATCH = 2, N_RMS = 4, N_INFERENCE = 0, N_TRAINING = 1 };
/* forward: mode, phase, x, mean, inv_variance, scale, bias, epsilon, exp_avg_factor, the
 * running statistics in and out, y; backward: mode, x, mean, inv_variance, dy, scale,
 * (epsilon), dscale, dbias, dx */
enum { F_MODE = 2000, F_PHASE, F_X, F_MEAN, F_INV, F_SCALE, F_BIAS, F_EPS, F_MOMENTUM, F_IN_RM,
       F_IN_RV, F_OUT_RM, F_OUT_RV, F_Y };
enum { B_MODE = 2100, B_X, B_MEAN, B_INV, B_DY, B_SCALE, B_EPS, B_DSCALE, B_DBIAS, B_DX };

static bool is_norm(const desc* op) {
    return op->type == D_OP_NORM_FWD || op->type == D_OP_NORM_BWD;
}
static int64_t norm_mode(const desc* op) {
    return i64(op, op->type == D_OP_NORM_FWD ? F_MODE : B_MODE, 0, -1);
}
static const desc* port(const desc* op, int attr) { return child(op, attr, 0); }

/* Which of a norm op's tensor attributes it writes: the forward's y, mean and inv_variance
 * in training, running statistics out; the backward's dx, dscale, dbias. */
static bool norm_writes_attr(const desc* op, int attr) {
    if (op->type == D_OP_NORM_BWD) return attr == B_DSCALE || attr == B_DBIAS || attr == B_DX;
    if (attr == F_MEAN || attr == F_INV) return i64(op, F_PHASE, 0, -1) == N_TRAINING;
    return attr == F_Y || attr == F_OUT_RM || attr == F_OUT_RV;
}

/* Its tensor attributes, in order; their number. */
static int norm_attrs(const desc* op, int* attrs) {
    const int first = op->type == D_OP_NORM_FWD ? F_X : B_X;
    const int last = op->type == D_OP_NORM_FWD ? F_Y : B_DX;
    int n = 0;
    for (int a = first; a <= last; ++a)
        if (port(op, a)) attrs[n++] = a;
    return n;
}

/* The normalized axes of x: cuDNN's layer and RMS norms every axis where scale is not 1,
 * instance norm the spatial axes, batch norm every axis but the channel. */
static void norm_axes(const desc* op, const desc* x, const desc* scale, bool* axes) {
    const int64_t mode = norm_mode(op);
    for (int k = 0; k < rank(x); ++k)
        axes[k] = mode == N_BATCH ? k != 1 : mode == N_INSTANCE ? k >= 2 : dim(scale, k) != 1;
}

static bool same_dims(const desc* a, const desc* b) {
    return broadcasts(a, b) && elements(a) == elements(b);
}

/* t has x's dims with 1 on each normalized axis. */
static bool stats_shaped(const desc* t, const desc* x, const bool* axes) {
    if (rank(t) != rank(x)) return false;
    for (int k = 0; k < rank(x); ++k)
        if (dim(t, k) != (axes[k] ? 1 : dim(x, k))) return false;
    return true;
}

static status norm_scalar(const desc* op, int attr, const char* what) {
    const desc* t = port(op, attr);
    if (t && (!by_value(t) || elements(t) != 1))
        return fail(BAD_PARAM, "norm forward: %s %lld must be a by-value scalar", what,
                    (long long)uid(t));
    return OK;
}

/* Which ports the forward's mode and phase take, present or absent. */
static status norm_fwd_ports(const desc* op, int64_t mode, bool training) {
    const bool batch_inference = mode == N_BATCH && !training;
    if (!port(op, F_X) || !port(op, F_SCALE) || !port(op, F_Y) ||
        (!port(op, F_EPS) && !batch_inference))
        return fail(BAD_PARAM, "norm forward: x, scale, y and epsilon are required");
    if ((training || batch_inference) && !port(op, F_INV))
        return fail(BAD_PARAM, "norm forward: inv_variance is required (training, or batch "
                    "norm's inference)");
    if ((training || batch_inference) != (port(op, F_MEAN) != NULL) && mode != N_RMS)
        return fail(BAD_PARAM, "norm forward: mean goes with inv_variance");
    if (mode == N_RMS && port(op, F_MEAN))
        return fail(BAD_PARAM, "norm forward: RMS norm has no mean");
    if (!training && !batch_inference && port(op, F_INV))
        return fail(BAD_PARAM, "norm forward: the inference phase gives no statistics");
    const int running = (port(op, F_MOMENTUM) != NULL) + (port(op, F_IN_RM) != NULL) +
                        (port(op, F_IN_RV) != NULL) + (port(op, F_OUT_RM) != NULL) +
                        (port(op, F_OUT_RV) != NULL);
    if (running && (running != 5 || mode != N_BATCH || !training))
        return fail(BAD_PARAM, "norm forward: batch norm's training takes momentum and both "
                    "running statistics in and out, or none");
    status st = norm_scalar(op, F_EPS, "epsilon");
    return st == OK ? norm_scalar(op, F_MOMENTUM, "exp_avg_factor") : st;
}

/* The dims and strides of the x of the norm op finalized last, for the tests that check how
 * the engine describes a norm's tensors (its rank; 0 before any). */
static int64_t g_norm_x[2][MAX_RANK];
static int g_norm_rank;
EXPORT int fakeCudnnLastNormX(int64_t* dims, int64_t* strides) {
    for (int k = 0; k < g_norm_rank; ++k) dims[k] = g_norm_x[0][k], strides[k] = g_norm_x[1][k];
    return g_norm_rank;
}

static void keep_norm_x(const desc* x) {
    g_norm_rank = rank(x);
    for (int k = 0; k < rank(x); ++k)
        g_norm_x[0][k] = dim(x, k), g_norm_x[1][k] = i64(x, A_STRIDES, k, 0);
}

static status finalize_norm_fwd(desc* op) {
    const int64_t mode = i64(op, F_MODE, 0, -1), phase = i64(op, F_PHASE, 0, -1);
    if (mode < N_LAYER || mode > N_RMS || mode == 3 ||
        (phase != N_INFERENCE && phase != N_TRAINING))
        return fail(BAD_PARAM, "norm forward: a mode (layer, instance, batch, RMS) and a phase");
    status st = norm_fwd_ports(op, mode, phase == N_TRAINING);
    if (st != OK) return st;
    const desc *x = port(op, F_X), *scale = port(op, F_SCALE);
    bool axes[MAX_RANK];
    norm_axes(op, x, scale, axes);
    keep_norm_x(x);
    if (!same_dims(port(op, F_Y), x) || !broadcasts(scale, x) ||
        (port(op, F_BIAS) && !broadcasts(port(op, F_BIAS), x)))
        return fail(SHAPE_MISMATCH, "norm forward: y must have x's dims, scale and bias "
                    "broadcast to x");
    static const int stats[6] = {F_MEAN, F_INV, F_IN_RM, F_IN_RV, F_OUT_RM, F_OUT_RV};
    for (int k = 0; k < 6; ++k)
        if (port(op, stats[k]) && !stats_shaped(port(op, stats[k]), x, axes))
            return fail(SHAPE_MISMATCH, "norm forward: statistic %lld must have x's dims with 1 "
                        "on each normalized axis", (long long)uid(port(op, stats[k])));
    return OK;
}

static status finalize_norm_bwd(desc* op) {
    const int64_t mode = i64(op, B_MODE, 0, -1);
    if (mode < N_LAYER || mode > N_RMS || mode == 3)
        return fail(BAD_PARAM, "norm backward: a mode (layer, instance, batch, RMS)");
    const desc *x = port(op, B_X), *scale = port(op, B_SCALE);
    if (!x || !port(op, B_DY) || !scale || !port(op, B_INV) || !port(op, B_DX) ||
        (mode == N_RMS) != !port(op, B_MEAN))
        return fail(BAD_PARAM, "norm backward: x, dy, scale, inv_variance, dx, and mean but "
                    "for RMS norm");
    bool axes[MAX_RANK];
    norm_axes(op, x, scale, axes);
    keep_norm_x(x);
    const int same[2] = {B_DY, B_DX}, stats[2] = {B_MEAN, B_INV}, params[2] = {B_DSCALE, B_DBIAS};
    for (int k = 0; k < 2; ++k) {
        const desc *s = port(op, stats[k]), *p = port(op, params[k]);
        if (!same_dims(port(op, same[k]), x) || (s && !stats_shaped(s, x, axes)) ||
            !broadcasts(scale, x) || (p && !same_dims(p, scale)))
            return fail(SHAPE_MISMATCH, "norm backward: dy and dx with x's dims, statistics "
                        "with 1 on each normalized axis, dscale and dbias with scale's");
    }
    return OK;
}

/* One norm op, fp32 / fp16 / bf16 data and fp32 scale, bias and statistics (as cuDNN's norm
 * engines take them), 4D or 5D; the graph holds nothing else (its fusions are not faked). */
static status norm_supported(const desc* graph) {
    if (count_of(graph, 801) != 1)
        return fail(GRAPH_PATTERN, "fake cuDNN: no engine fuses a norm with other operations");
    const desc* op = child(graph, 801, 0);
    int attrs[16];
    const int n = norm_attrs(op, attrs);
    const int r = rank(port(op, op->type == D_OP_NORM_FWD ? F_X : B_X));
    if (r < 4 || r > 5)
        return fail(NOT_SUPPORTED, "fake cuDNN: norm engines take 4D and 5D tensors, not %dD", r);
    for (int k = 0; k < n; ++k) {
        const int a = attrs[k], dt = (int)i64(port(op, a), A_DT, 0, -1);
        const bool data = a == F_X || a == F_Y || a == B_X || a == B_DY || a == B_DX;
        const bool half = dt == HIPDNN_DATA_HALF || dt == HIPDNN_DATA_BFLOAT16;
        if (a == F_EPS || a == F_MOMENTUM) continue;
        if (dt != HIPDNN_DATA_FLOAT && (!data || !half))
            return fail(NOT_SUPPORTED, "fake cuDNN: norm engines take fp32 / fp16 / bf16 data "
                        "and fp32 scale, bias and statistics (tensor %lld is type %d)",
                        (long long)uid(port(op, a)), dt);
    }
    return OK;
}

/* ---- the operation graph and what the fake's engines run ------------------------------- */

static bool is_compute(const desc* op) {
    return op->type == D_OP_FPROP || op->type == D_OP_DGRAD || op->type == D_OP_WGRAD ||
           op->type == D_OP_MATMUL;
}

static int dtype_of(const desc* op, int port) {
    return (int)i64(child(op, port, 0), A_DT, 0, -1);
}

static bool half_type(int dt) { return dt == HIPDNN_DATA_HALF || dt == HIPDNN_DATA_BFLOAT16; }

/* The fused attention engine's pattern, as cuDNN frontend builds it: q k^T (fp16 / bf16 in,
 * fp32 out), then pointwise nodes, one max and one sum reduction, and p v with p in v's
 * type; the graph's two matmuls in that order. */
static status attention_supported(const desc* graph) {
    int matmuls = 0, reductions = 0;
    for (int64_t i = 0; i < count_of(graph, 801); ++i) {
        const desc* op = child(graph, 801, i);
        if (op->type == D_OP_MATMUL) {
            const int a = dtype_of(op, 1520), b = dtype_of(op, 1521), c = dtype_of(op, 1522);
            if (!half_type(a) || a != b || (matmuls == 0 && c != HIPDNN_DATA_FLOAT))
                return fail(NOT_SUPPORTED, "fake cuDNN: attention's matmul %d reads %d and %d "
                            "into %d (bmm1 fp16 / bf16 into fp32, bmm2 p in v's type)",
                            matmuls + 1, a, b, c);
            ++matmuls;
        } else if (op->type == D_OP_REDUCTION) {
            const int mode = (int)i64(child(op, 1612, 0), 1600, 0, -1);
            if (mode != (reductions == 0 ? HIPDNN_REDUCE_TENSOR_MAX : HIPDNN_REDUCE_TENSOR_ADD))
                return fail(GRAPH_PATTERN, "fake cuDNN: attention's softmax is a max, then a "
                            "sum reduction (reduction %d is mode %d)", reductions + 1, mode);
            ++reductions;
        } else if (op->type != D_OP_POINTWISE ||
                   !pw_computed((int)i64(child(op, 750, 0), 0, 0, -1))) {
            return fail(GRAPH_PATTERN, "fake cuDNN: no attention engine takes operation type %d",
                        op->type);
        }
    }
    if (matmuls != 2 || reductions != 2)
        return fail(GRAPH_PATTERN, "fake cuDNN: attention is two matmuls around a softmax of "
                    "two reductions (%d and %d here)", matmuls, reductions);
    return OK;
}

/* Attention backward's pattern, as cuDNN frontend builds it: five matmuls (q k^T, p^T dO,
 * dO v^T, dS^T q in fp16 / bf16; dS k in fp32 into an fp32 accumulator kept in memory),
 * three reshapes, sum reductions only, and pointwise nodes computed here. */
static status attention_backward_supported(const desc* graph) {
    int matmuls = 0, reshapes = 0;
    for (int64_t i = 0; i < count_of(graph, 801); ++i) {
        const desc* op = child(graph, 801, i);
        if (op->type == D_OP_MATMUL) {
            const int a = dtype_of(op, 1520), b = dtype_of(op, 1521), c = dtype_of(op, 1522);
            const bool dq = a == HIPDNN_DATA_FLOAT && b == a && c == a &&
                            !is_virtual(child(op, 1522, 0));
            if ((!half_type(a) && !dq) || a != b)
                return fail(NOT_SUPPORTED, "fake cuDNN: attention backward's matmul %d reads %d "
                            "and %d (fp16 / bf16, or fp32 into dq's fp32 accumulator)",
                            matmuls + 1, a, b);
            ++matmuls;
        } else if (op->type == D_OP_RESHAPE) {
            ++reshapes;
        } else if (op->type == D_OP_REDUCTION) {
            if (i64(child(op, 1612, 0), 1600, 0, -1) != HIPDNN_REDUCE_TENSOR_ADD)
                return fail(GRAPH_PATTERN, "fake cuDNN: attention backward's reductions are sums");
        } else if (op->type != D_OP_POINTWISE ||
                   !pw_computed((int)i64(child(op, 750, 0), 0, 0, -1))) {
            return fail(GRAPH_PATTERN, "fake cuDNN: no attention backward engine takes "
                        "operation type %d", op->type);
        }
    }
    if (matmuls != 5 || reshapes != 3)
        return fail(GRAPH_PATTERN, "fake cuDNN: attention backward is five matmuls and three "
                    "reshapes (%d and %d here)", matmuls, reshapes);
    return OK;
}

/* One convolution or matmul, fp32 / fp16 / bf16 (int8 in, int32 out: an int8
 * convolution), and pointwise modes computed here; or attention, either way. */
static status engines_support(const desc* graph) {
    int compute = 0, matmuls = 0, reductions = 0, reshapes = 0, norms = 0;
    const int64_t n = count_of(graph, 801);
    for (int64_t i = 0; i < n; ++i) {
        const desc* op = child(graph, 801, i);
        norms += is_norm(op);
        matmuls += op->type == D_OP_MATMUL;
        reductions += op->type == D_OP_REDUCTION;
        reshapes += op->type == D_OP_RESHAPE;
    }
    if (norms > 0) return norm_supported(graph);
    if (reshapes > 0) return attention_backward_supported(graph);
    if (reductions > 0 || matmuls == 2) return attention_supported(graph);
    for (int64_t i = 0; i < n; ++i) {
        const desc* op = child(graph, 801, i);
        if (is_compute(op)) {
            ++compute;
            const ports p = op_ports(op);
            const int at[3] = {p.in[0], p.in[1], p.out};
            for (int k = 0; k < 3; ++k) {
                const int dt = dtype_of(op, at[k]);
                if (dt != HIPDNN_DATA_FLOAT && dt != HIPDNN_DATA_HALF &&
                    dt != HIPDNN_DATA_BFLOAT16 && dt != HIPDNN_DATA_INT8 && dt != HIPDNN_DATA_INT32)
                    return fail(NOT_SUPPORTED, "fake cuDNN: no engine takes data type %d", dt);
            }
        } else if (op->type == D_OP_POINTWISE) {
            const int mode = (int)i64(child(op, 750, 0), 0, 0, -1);
            if (!pw_computed(mode))
                return fail(GRAPH_PATTERN, "fake cuDNN: no engine fuses pointwise mode %d", mode);
        }
    }
    if (compute != 1)
        return fail(GRAPH_PATTERN, "fake cuDNN: no engine runs a graph of %d convolutions and "
                    "matmuls (its engines run one, with a pointwise epilogue)", compute);
    return OK;
}

typedef struct {
    int64_t engine, workspace;
    bool builds;
} engine_info;
static const engine_info k_engines[] = {{7, 1 << 20, true}, {3, 0, true}, {11, 0, false},
                                        {42, 64 << 10, true}};
#define NUM_ENGINES 4

EXPORT status cudnnBackendFinalize(desc* d) {
    if (!valid(d)) return fail(BAD_PARAM, "cudnnBackendFinalize: not a descriptor");
    if (d->final) return fail(BAD_PARAM, "finalized twice");
    status st = OK;
    switch (d->type) {
    case D_TENSOR: st = finalize_tensor(d); break;
    case D_POINTWISE:
        if (!find(d, 0) || !find(d, 1)) st = fail(BAD_PARAM, "pointwise: mode and math precision");
        break;
    case D_CONV: {
        const int64_t nsp = i64(d, 106, 0, 0);
        if (!find(d, 100) || !find(d, 101) || nsp < 1 || nsp > 3 || count_of(d, 102) != nsp ||
            count_of(d, 103) != nsp || count_of(d, 104) != nsp || count_of(d, 105) != nsp)
            st = fail(BAD_PARAM, "convolution: comp type, mode, and 1 to 3 spatial dims of "
                      "paddings, strides and dilations");
        break;
    }
    case D_MATMUL:
        if (!find(d, 1500)) st = fail(BAD_PARAM, "matmul: comp type");
        break;
    case D_REDUCTION:
        if (!find(d, 1600) || !find(d, 1601)) st = fail(BAD_PARAM, "reduction: operator, comp type");
        break;
    case D_OP_REDUCTION: st = finalize_reduction_op(d); break;
    case D_OP_FPROP: case D_OP_DGRAD: case D_OP_WGRAD: st = finalize_conv_op(d); break;
    case D_OP_POINTWISE: st = finalize_pointwise_op(d); break;
    case D_OP_MATMUL: st = finalize_matmul_op(d); break;
    case D_OP_RESHAPE: st = finalize_reshape_op(d); break;
    case D_OP_NORM_FWD: st = finalize_norm_fwd(d); break;
    case D_OP_NORM_BWD: st = finalize_norm_bwd(d); break;
    case D_OPGRAPH: {
        const attr* h = find(d, 800);
        if (!h || !*(handle**)h->data || (*(handle**)h->data)->magic != HANDLE_MAGIC ||
            count_of(d, 801) < 1)
            st = fail(BAD_PARAM, "operation graph: a handle and operations");
        break;
    }
    case D_ENGINEHEUR: {
        ++g_heuristic_queries;
        d->graph = child(d, 201, 0);
        if (!d->graph || d->graph->type != D_OPGRAPH || !find(d, 200))
            st = fail(BAD_PARAM, "engine heuristic: an operation graph and a mode");
        else if ((st = engines_support(d->graph)) == OK)
            d->results = NUM_ENGINES;
        break;
    }
    case D_PLAN: {
        const desc* cfg = child(d, 401, 0);
        const attr* h = find(d, 400);
        if (!cfg || cfg->type != D_ENGINECFG || !h) {
            st = fail(BAD_PARAM, "execution plan: a handle and an engine config");
            break;
        }
        const engine_info* e = NULL;
        for (int i = 0; i < NUM_ENGINES; ++i)
            if (k_engines[i].engine == cfg->engine) e = &k_engines[i];
        if (!e) st = fail(BAD_PARAM, "execution plan: an engine config not from the heuristic");
        else if (!e->builds)
            st = fail(NOT_SUPPORTED, "fake cuDNN: engine %lld refuses the graph (no kernel for "
                      "it)", (long long)e->engine);
        else {
            d->engine = e->engine;
            d->workspace = e->workspace;
            d->graph = cfg->graph;
        }
        break;
    }
    case D_VARIANT_PACK:
        if (!find(d, 1000) || count_of(d, 1000) != count_of(d, 1001) || !find(d, 1003))
            st = fail(BAD_PARAM, "variant pack: as many pointers as unique ids, and a workspace");
        break;
    default: st = fail(NOT_SUPPORTED, "fake cuDNN: descriptor type %d is not faked", d->type);
    }
    if (st == OK) d->final = true;
    return st;
}

EXPORT status cudnnBackendGetAttribute(const desc* d, int name, int type, int64_t requested,
                                       int64_t* count, void* values) {
    if (!valid(d)) return fail(BAD_PARAM, "cudnnBackendGetAttribute: not a descriptor");
    if (!d->final) return fail(NOT_FINALIZED, "attribute %d of a descriptor not finalized", name);
    if (d->type == D_ENGINEHEUR && name == 202 && type == T_DESC) {
        if (count) *count = d->results;
        const int64_t n = requested < d->results ? requested : d->results;
        for (int64_t i = 0; i < n; ++i) {
            desc* cfg = ((desc**)values)[i];
            if (!valid(cfg) || cfg->type != D_ENGINECFG)
                return fail(BAD_PARAM, "heuristic results: element %lld is not an engine config",
                            (long long)i);
            cfg->engine = k_engines[i].engine;
            cfg->workspace = k_engines[i].workspace;
            cfg->graph = d->graph;
            cfg->final = true;
        }
        return OK;
    }
    if (d->type == D_ENGINECFG && name == 300 && type == T_DESC && requested >= 1) {
        desc* engine = ((desc**)values)[0];
        if (!valid(engine) || engine->type != D_ENGINE)
            return fail(BAD_PARAM, "engine config's engine: not an engine descriptor");
        engine->engine = d->engine;
        engine->final = true;
        if (count) *count = 1;
        return OK;
    }
    if ((d->type == D_ENGINE && name == 1301) || (d->type == D_PLAN && name == 402)) {
        if (type != T_INT64 || requested < 1 || !values)
            return fail(ATTRIBUTE_TYPE, "attribute %d is one INT64", name);
        *(int64_t*)values = d->type == D_ENGINE ? d->engine : d->workspace;
        if (count) *count = 1;
        return OK;
    }
    return fail(NOT_SUPPORTED, "fake cuDNN: attribute %d of descriptor type %d is not faked",
                name, d->type);
}

/* ---- execution: the graph in float64 -------------------------------------------------------- */

typedef struct {
    const desc* t;
    double* v; /* dense, row-major over its dims; NULL until computed or loaded */
} value;

typedef struct {
    value* vals;
    int n;
} values;

static value* lookup(values* vs, const desc* t) {
    for (int i = 0; i < vs->n; ++i)
        if (uid(vs->vals[i].t) == uid(t)) return &vs->vals[i];
    vs->vals[vs->n] = (value){t, NULL};
    return &vs->vals[vs->n++];
}

static double round_to(int dt, double v) {
    uint8_t buf[8];
    hipdnnSdkStoreFromDouble(buf, (hipdnnDataType_t)dt, 0, v);
    return hipdnnSdkLoadAsDouble(buf, (hipdnnDataType_t)dt, 0);
}

/* Element offset (in elements) of dense index i of t, from its strides. */
static int64_t offset(const desc* t, int64_t i) {
    int64_t off = 0;
    for (int k = rank(t) - 1; k >= 0; --k) {
        off += (i % dim(t, k)) * i64(t, A_STRIDES, k, 0);
        i /= dim(t, k);
    }
    return off;
}

static void load(value* v, const void* ptr) {
    const int64_t n = elements(v->t);
    const int dt = (int)i64(v->t, A_DT, 0, 0);
    v->v = malloc((size_t)n * sizeof(double));
    for (int64_t i = 0; v->v && i < n; ++i)
        v->v[i] = hipdnnSdkLoadAsDouble(ptr, (hipdnnDataType_t)dt, by_value(v->t) ? 0 : offset(v->t, i));
}

/* The index into operand `in` of output element i: broadcast over dims of 1, and over
 * groups of consecutive indices where in's dim divides out's (GQA's heads). */
static int64_t bcast(const desc* in, const desc* out, int64_t i) {
    int64_t idx = 0, mult = 1;
    for (int k = rank(out) - 1; k >= 0; --k) {
        const int64_t c = i % dim(out, k);
        i /= dim(out, k);
        idx += c / (dim(out, k) / dim(in, k)) * mult;
        mult *= dim(in, k);
    }
    return idx;
}

/* y = x re-described: y's element j is x's element at the offset y's strides give j
 * (NaN where x has none), virtual tensors laid out by their strides too. */
static void reshape(const desc* xt, const desc* yt, const double* x, double* y) {
    int64_t span = 1;
    for (int k = 0; k < rank(xt); ++k) span += (dim(xt, k) - 1) * i64(xt, A_STRIDES, k, 0);
    int64_t* at = malloc((size_t)span * sizeof(int64_t));
    if (!at) return;
    for (int64_t o = 0; o < span; ++o) at[o] = -1;
    for (int64_t i = 0; i < elements(xt); ++i) at[offset(xt, i)] = i;
    for (int64_t j = 0; j < elements(yt); ++j) {
        const int64_t o = offset(yt, j);
        y[j] = o < span && at[o] >= 0 ? x[at[o]] : NAN;
    }
    free(at);
}

static double pointwise(const desc* pw, double x, double b, double t) {
    switch ((int)i64(pw, 0, 0, -1)) {
    case HIPDNN_POINTWISE_ADD: return x + b;
    case HIPDNN_POINTWISE_SUB: return x - b;
    case HIPDNN_POINTWISE_MUL: return x * b;
    case HIPDNN_POINTWISE_DIV: return x / b;
    case HIPDNN_POINTWISE_MAX: return fmax(x, b);
    case HIPDNN_POINTWISE_MIN: return fmin(x, b);
    case HIPDNN_POINTWISE_IDENTITY: return x;
    case HIPDNN_POINTWISE_NEG: return -x;
    case HIPDNN_POINTWISE_ABS: return fabs(x);
    case HIPDNN_POINTWISE_EXP: return exp(x);
    case HIPDNN_POINTWISE_LOG: return log(x);
    case HIPDNN_POINTWISE_CMP_GT: return x > b;
    case HIPDNN_POINTWISE_CMP_GE: return x >= b;
    case HIPDNN_POINTWISE_CMP_LT: return x < b;
    case HIPDNN_POINTWISE_BINARY_SELECT: return t != 0.0 ? x : b;
    case HIPDNN_POINTWISE_RELU_FWD: {
        const double lo = f64(pw, 3, 0.0), hi = f64(pw, 4, INFINITY), s = f64(pw, 5, 0.0);
        if (x <= lo) return s == 0.0 ? lo : lo + s * (x - lo);
        return x >= hi ? hi : x;
    }
    case HIPDNN_POINTWISE_TANH_FWD: return tanh(x);
    case HIPDNN_POINTWISE_SIGMOID_FWD: return 1.0 / (1.0 + exp(-x));
    case HIPDNN_POINTWISE_ELU_FWD: return x > 0 ? x : f64(pw, 6, 1.0) * expm1(x);
    case HIPDNN_POINTWISE_GELU_FWD: return 0.5 * x * erfc(-x / sqrt(2.0));
    case HIPDNN_POINTWISE_GELU_APPROX_TANH_FWD:
        return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    case HIPDNN_POINTWISE_SWISH_FWD: return x / (1.0 + exp(-f64(pw, 8, 1.0) * x));
    case HIPDNN_POINTWISE_SOFTPLUS_FWD: {
        const double beta = f64(pw, 7, 1.0), z = beta * x;
        return (z > 0 ? z + log1p(exp(-z)) : log1p(exp(z))) / beta;
    }
    default: return NAN;
    }
}

/* x [N, C, D, H, W], w [K, C/G, T, R, S], y [N, K, P, Q, O] (spatial dims padded to 3):
 * fprop y += x w, dgrad dx += dy w, wgrad dw += x dy over every tap in range. */
static void convolve(int type, const desc* conv, const desc* xt, const desc* wt, const desc* yt,
                     double* x, double* w, double* y) {
    const int nsp = rank(xt) - 2;
    int64_t xs[3] = {1, 1, 1}, fs[3] = {1, 1, 1}, ys[3] = {1, 1, 1}, pre[3] = {0, 0, 0},
            st[3] = {1, 1, 1}, dl[3] = {1, 1, 1};
    for (int k = 0; k < nsp; ++k) {
        xs[k] = dim(xt, k + 2), fs[k] = dim(wt, k + 2), ys[k] = dim(yt, k + 2);
        pre[k] = i64(conv, 105, k, 0), st[k] = i64(conv, 103, k, 1), dl[k] = i64(conv, 102, k, 1);
    }
    const bool flip = i64(conv, 101, 0, 1) == HIPDNN_CONVOLUTION;
    const int64_t N = dim(xt, 0), C = dim(xt, 1), K = dim(wt, 0), Cg = dim(wt, 1);
    const int64_t Kg = K / (C / Cg);
    for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k)
    for (int64_t c = 0; c < Cg; ++c)
    for (int64_t o0 = 0; o0 < ys[0]; ++o0) for (int64_t o1 = 0; o1 < ys[1]; ++o1)
    for (int64_t o2 = 0; o2 < ys[2]; ++o2)
    for (int64_t f0 = 0; f0 < fs[0]; ++f0) for (int64_t f1 = 0; f1 < fs[1]; ++f1)
    for (int64_t f2 = 0; f2 < fs[2]; ++f2) {
        const int64_t i0 = o0 * st[0] - pre[0] + f0 * dl[0], i1 = o1 * st[1] - pre[1] + f1 * dl[1],
                      i2 = o2 * st[2] - pre[2] + f2 * dl[2];
        if (i0 < 0 || i0 >= xs[0] || i1 < 0 || i1 >= xs[1] || i2 < 0 || i2 >= xs[2]) continue;
        const int64_t g0 = flip ? fs[0] - 1 - f0 : f0, g1 = flip ? fs[1] - 1 - f1 : f1,
                      g2 = flip ? fs[2] - 1 - f2 : f2;
        const int64_t xc = (k / Kg) * Cg + c;
        const int64_t xi = (((n * C + xc) * xs[0] + i0) * xs[1] + i1) * xs[2] + i2;
        const int64_t wi = (((k * Cg + c) * fs[0] + g0) * fs[1] + g1) * fs[2] + g2;
        const int64_t yi = (((n * K + k) * ys[0] + o0) * ys[1] + o1) * ys[2] + o2;
        if (type == D_OP_FPROP) y[yi] += x[xi] * w[wi];
        else if (type == D_OP_DGRAD) x[xi] += y[yi] * w[wi];
        else w[wi] += x[xi] * y[yi];
    }
}

static void matmul(const desc* at, const desc* bt, const desc* ct, const double* a,
                   const double* b, double* c) {
    const int r = rank(ct);
    const int64_t M = dim(ct, r - 2), N = dim(ct, r - 1), K = dim(at, r - 1);
    const int64_t batches = elements(ct) / (M * N);
    for (int64_t bi = 0; bi < batches; ++bi) {
        int64_t ao = 0, bo = 0, am = 1, bm = 1, rest = bi;
        for (int k = r - 3; k >= 0; --k) {
            const int64_t idx = rest % dim(ct, k);
            rest /= dim(ct, k);
            ao += idx / (dim(ct, k) / dim(at, k)) * am; /* a dim of 1, or grouped (GQA) */
            bo += idx / (dim(ct, k) / dim(bt, k)) * bm;
            am *= dim(at, k), bm *= dim(bt, k);
        }
        for (int64_t m = 0; m < M; ++m)
            for (int64_t n = 0; n < N; ++n) {
                double s = 0.0;
                for (int64_t k = 0; k < K; ++k)
                    s += a[ao * M * K + m * K + k] * b[bo * K * N + k * N + n];
                c[bi * M * N + m * N + n] = s;
            }
    }
}

/* ---- normalization in float64 ------------------------------------------------------------ */

/* The packed index of x's element i among the statistics (x's dims, 1 on normalized axes). */
static int64_t stat_index(const desc* x, const bool* axes, int64_t i) {
    int64_t idx = 0, mult = 1;
    for (int k = rank(x) - 1; k >= 0; --k) {
        const int64_t c = i % dim(x, k);
        i /= dim(x, k);
        if (!axes[k]) idx += c * mult, mult *= dim(x, k);
    }
    return idx;
}

/* v of attr's tensor, or NULL where the op has none; out: made (zeros) for an output. */
static double* norm_value(const desc* op, int attr, values* vs, bool out) {
    const desc* t = port(op, attr);
    if (!t) return NULL;
    value* v = lookup(vs, t);
    if (out && !v->v) v->v = calloc((size_t)elements(t), sizeof(double));
    return v->v;
}

/* Per statistic: mean and biased variance of x (RMS: 0 and the mean square), and R. */
static void norm_moments(const desc* x, const double* xv, const bool* axes, bool rms,
                         int64_t groups, double* mean, double* var, int64_t* count) {
    const int64_t n = elements(x);
    *count = n / groups;
    for (int64_t i = 0; i < n; ++i) mean[stat_index(x, axes, i)] += rms ? 0.0 : xv[i];
    for (int64_t g = 0; g < groups; ++g) mean[g] /= (double)*count;
    for (int64_t i = 0; i < n; ++i) {
        const double d = xv[i] - mean[stat_index(x, axes, i)];
        var[stat_index(x, axes, i)] += d * d;
    }
    for (int64_t g = 0; g < groups; ++g) var[g] /= (double)*count;
}

static void run_norm_fwd(const desc* op, values* vs, const bool* axes, int64_t groups,
                         double* mean, double* inv) {
    const desc *x = port(op, F_X), *scale = port(op, F_SCALE), *bias = port(op, F_BIAS);
    const double* xv = norm_value(op, F_X, vs, false);
    const bool given = i64(op, F_PHASE, 0, -1) == N_INFERENCE && norm_mode(op) == N_BATCH;
    const bool rms = norm_mode(op) == N_RMS;
    if (given) { /* batch norm's inference: the statistics are inputs */
        memcpy(mean, norm_value(op, F_MEAN, vs, false), (size_t)groups * sizeof(double));
        memcpy(inv, norm_value(op, F_INV, vs, false), (size_t)groups * sizeof(double));
    } else {
        double* var = calloc((size_t)groups, sizeof(double));
        int64_t count = 1;
        if (!var) return;
        norm_moments(x, xv, axes, rms, groups, mean, var, &count);
        const double eps = norm_value(op, F_EPS, vs, false)[0];
        for (int64_t g = 0; g < groups; ++g) inv[g] = 1.0 / sqrt(var[g] + eps);
        double *rm = norm_value(op, F_IN_RM, vs, false), *rv = norm_value(op, F_IN_RV, vs, false);
        double *om = norm_value(op, F_OUT_RM, vs, true), *ov = norm_value(op, F_OUT_RV, vs, true);
        if (rm && rv && om && ov) { /* running statistics: momentum, the variance unbiased */
            const double f = norm_value(op, F_MOMENTUM, vs, false)[0];
            for (int64_t g = 0; g < groups; ++g) {
                om[g] = (1.0 - f) * rm[g] + f * mean[g];
                ov[g] = (1.0 - f) * rv[g] + f * var[g] * (double)count / (double)(count - 1);
            }
        }
        double *mo = norm_value(op, F_MEAN, vs, true), *io = norm_value(op, F_INV, vs, true);
        if (mo) memcpy(mo, mean, (size_t)groups * sizeof(double));
        if (io) memcpy(io, inv, (size_t)groups * sizeof(double));
        free(var);
    }
    const double *sv = norm_value(op, F_SCALE, vs, false), *bv = norm_value(op, F_BIAS, vs, false);
    double* y = norm_value(op, F_Y, vs, true);
    for (int64_t i = 0; y && i < elements(x); ++i) {
        const int64_t g = stat_index(x, axes, i);
        y[i] = (xv[i] - mean[g]) * inv[g] * sv[bcast(scale, x, i)] +
               (bias ? bv[bcast(bias, x, i)] : 0.0);
    }
}

static void run_norm_bwd(const desc* op, values* vs, const bool* axes, int64_t groups,
                         double* s1, double* s2) {
    const desc *x = port(op, B_X), *scale = port(op, B_SCALE);
    const double *xv = norm_value(op, B_X, vs, false), *dy = norm_value(op, B_DY, vs, false);
    const double *mv = norm_value(op, B_MEAN, vs, false), *iv = norm_value(op, B_INV, vs, false);
    const double* sv = norm_value(op, B_SCALE, vs, false);
    double *dx = norm_value(op, B_DX, vs, true), *ds = norm_value(op, B_DSCALE, vs, true),
           *db = norm_value(op, B_DBIAS, vs, true);
    const int64_t n = elements(x), count = n / groups;
    double* xhat = malloc((size_t)n * sizeof(double));
    if (!xhat || !dx) {
        free(xhat);
        return;
    }
    for (int64_t i = 0; i < n; ++i) {
        const int64_t g = stat_index(x, axes, i);
        xhat[i] = (xv[i] - (mv ? mv[g] : 0.0)) * iv[g];
        const double dxhat = dy[i] * sv[bcast(scale, x, i)];
        s1[g] += dxhat;
        s2[g] += dxhat * xhat[i];
        if (ds) ds[bcast(scale, x, i)] += dy[i] * xhat[i];
        if (db) db[bcast(scale, x, i)] += dy[i];
    }
    for (int64_t i = 0; i < n; ++i) {
        const int64_t g = stat_index(x, axes, i);
        const double dxhat = dy[i] * sv[bcast(scale, x, i)];
        dx[i] = iv[g] * (dxhat - (mv ? s1[g] : 0.0) / (double)count -
                         xhat[i] * s2[g] / (double)count);
    }
    free(xhat);
}

/* Runs a norm op (its inputs are the graph's, loaded), each output rounded to its type. */
static bool run_norm(const desc* op, values* vs) {
    const bool fwd = op->type == D_OP_NORM_FWD;
    const desc *x = port(op, fwd ? F_X : B_X), *scale = port(op, fwd ? F_SCALE : B_SCALE);
    bool axes[MAX_RANK];
    norm_axes(op, x, scale, axes);
    int64_t groups = 1;
    for (int k = 0; k < rank(x); ++k) groups *= axes[k] ? 1 : dim(x, k);
    double* a = calloc((size_t)groups, sizeof(double));
    double* b = calloc((size_t)groups, sizeof(double));
    if (a && b && fwd) run_norm_fwd(op, vs, axes, groups, a, b);
    else if (a && b) run_norm_bwd(op, vs, axes, groups, a, b);
    free(a);
    free(b);
    int attrs[16];
    const int n = norm_attrs(op, attrs);
    for (int k = 0; k < n; ++k) {
        if (!norm_writes_attr(op, attrs[k])) continue;
        value* v = lookup(vs, port(op, attrs[k]));
        const int dt = (int)i64(v->t, A_DT, 0, 0);
        for (int64_t i = 0; v->v && i < elements(v->t); ++i) v->v[i] = round_to(dt, v->v[i]);
    }
    return true;
}

/* Whether op writes tensor t. */
static bool op_writes(const desc* op, const desc* t) {
    if (!is_norm(op)) return uid(child(op, op_ports(op).out, 0)) == uid(t);
    int attrs[16];
    const int n = norm_attrs(op, attrs);
    for (int k = 0; k < n; ++k)
        if (norm_writes_attr(op, attrs[k]) && uid(port(op, attrs[k])) == uid(t)) return true;
    return false;
}

/* Runs op once its inputs have values; false if one has none yet. */
static bool run_op(const desc* op, values* vs) {
    if (is_norm(op)) return run_norm(op, vs);
    const ports p = op_ports(op);
    int arity = 2;
    const desc* pw = NULL;
    if (op->type == D_OP_POINTWISE) pw = child(op, 750, 0), arity = pw_arity((int)i64(pw, 0, 0, 0));
    if (op->type == D_OP_REDUCTION || op->type == D_OP_RESHAPE) arity = 1;
    value* in[3] = {NULL, NULL, NULL};
    for (int k = 0; k < arity; ++k) {
        in[k] = lookup(vs, child(op, p.in[k], 0));
        if (!in[k]->v) return false;
    }
    value* out = lookup(vs, child(op, p.out, 0));
    const int64_t n = elements(out->t);
    out->v = calloc((size_t)n, sizeof(double));
    if (!out->v) return true;
    if (op->type == D_OP_POINTWISE && i64(pw, 0, 0, -1) == HIPDNN_POINTWISE_GEN_INDEX) {
        const int axis = (int)i64(pw, 9, 0, 0);
        for (int64_t i = 0; i < n; ++i) {
            int64_t rest = i;
            for (int k = rank(out->t) - 1; k > axis; --k) rest /= dim(out->t, k);
            out->v[i] = (double)(rest % dim(out->t, axis));
        }
    } else if (op->type == D_OP_POINTWISE) {
        for (int64_t i = 0; i < n; ++i) {
            double a[3] = {0, 0, 0};
            for (int k = 0; k < arity; ++k) a[k] = in[k]->v[bcast(in[k]->t, out->t, i)];
            out->v[i] = pointwise(pw, a[0], a[1], a[2]);
        }
    } else if (op->type == D_OP_REDUCTION) {
        const bool max = i64(child(op, 1612, 0), 1600, 0, -1) == HIPDNN_REDUCE_TENSOR_MAX;
        for (int64_t i = 0; i < n; ++i) out->v[i] = max ? -INFINITY : 0.0;
        for (int64_t i = 0; i < elements(in[0]->t); ++i) {
            double* y = &out->v[bcast(out->t, in[0]->t, i)];
            *y = max ? fmax(*y, in[0]->v[i]) : *y + in[0]->v[i];
        }
    } else if (op->type == D_OP_MATMUL) {
        matmul(in[0]->t, in[1]->t, out->t, in[0]->v, in[1]->v, out->v);
    } else if (op->type == D_OP_RESHAPE) {
        reshape(in[0]->t, out->t, in[0]->v, out->v);
    } else {
        const desc* conv = child(op, op->type == D_OP_FPROP ? 702 : op->type == D_OP_DGRAD ? 708 : 714, 0);
        if (op->type == D_OP_FPROP)
            convolve(op->type, conv, in[0]->t, in[1]->t, out->t, in[0]->v, in[1]->v, out->v);
        else if (op->type == D_OP_DGRAD)
            convolve(op->type, conv, out->t, in[1]->t, in[0]->t, out->v, in[1]->v, in[0]->v);
        else
            convolve(op->type, conv, in[0]->t, out->t, in[1]->t, in[0]->v, out->v, in[1]->v);
    }
    const int dt = (int)i64(out->t, A_DT, 0, 0);
    for (int64_t i = 0; i < n; ++i) out->v[i] = round_to(dt, out->v[i]);
    return true;
}

/* Every tensor of the graph's ops, once: into ts; their number. */
static int graph_tensors(const desc* graph, const desc** ts, int max) {
    int n = 0;
    for (int64_t i = 0; i < count_of(graph, 801); ++i) {
        const desc* op = child(graph, 801, i);
        const ports p = op_ports(op);
        int at[16] = {p.in[0], p.in[1], p.in[2], p.out};
        const int count = is_norm(op) ? norm_attrs(op, at) : 4;
        for (int k = 0; k < count; ++k) {
            const desc* t = at[k] >= 0 ? child(op, at[k], 0) : NULL;
            bool seen = !t;
            for (int j = 0; !seen && j < n; ++j) seen = uid(ts[j]) == uid(t);
            if (!seen && n < max) ts[n++] = t;
        }
    }
    return n;
}

/* The pointer the variant pack gives uid, or NULL. */
static void* pack_pointer(const desc* vp, int64_t id) {
    for (int64_t i = 0; i < count_of(vp, 1000); ++i)
        if (i64(vp, 1000, i, -1) == id) return ((void* const*)find(vp, 1001)->data)[i];
    return NULL;
}

static int64_t span_bytes(const desc* t) {
    int64_t span = 1;
    for (int k = 0; k < rank(t); ++k) span += (dim(t, k) - 1) * i64(t, A_STRIDES, k, 0);
    return span * (int64_t)hipdnnSdkDataTypeSize((hipdnnDataType_t)i64(t, A_DT, 0, 0));
}

EXPORT status cudnnBackendExecute(handle* h, const desc* plan, const desc* vp) {
    if (!h || h->magic != HANDLE_MAGIC) return fail(BAD_PARAM, "cudnnBackendExecute: not a handle");
    if (!fake_context_current())
        return fail(NOT_INITIALIZED, "cudnnBackendExecute: no current context");
    if (!valid(plan) || plan->type != D_PLAN || !plan->final || !valid(vp) ||
        vp->type != D_VARIANT_PACK || !vp->final)
        return fail(BAD_PARAM, "cudnnBackendExecute: a finalized plan and variant pack");
    const desc* ts[MAX_GRAPH];
    const int nt = graph_tensors(plan->graph, ts, MAX_GRAPH);
    values vs = {calloc(MAX_GRAPH, sizeof(value)), 0};
    status st = vs.vals ? OK : fail(EXEC_FAILED, "out of memory");
    for (int i = 0; st == OK && i < nt; ++i) {
        const desc* t = ts[i];
        if (is_virtual(t)) continue;
        void* ptr = pack_pointer(vp, uid(t));
        const int where = ptr ? fake_device_range(ptr, (size_t)span_bytes(t)) : 0;
        if (!ptr) st = fail(BAD_PARAM, "variant pack: no pointer for tensor %lld", (long long)uid(t));
        else if (by_value(t) && where != 0)
            st = fail(BAD_PARAM, "variant pack: by-value tensor %lld must point to host memory",
                      (long long)uid(t));
        else if (!by_value(t) && where != 1)
            st = fail(BAD_PARAM, "variant pack: tensor %lld is %s", (long long)uid(t),
                      where < 0 ? "device memory past its allocation" : "not device memory");
        else if (!by_value(t) && (uintptr_t)ptr % (uintptr_t)i64(t, A_ALIGN, 0, 1))
            st = fail(MISALIGNED, "variant pack: tensor %lld is not %lld-byte aligned",
                      (long long)uid(t), (long long)i64(t, A_ALIGN, 0, 1));
    }
    void* ws = *(void* const*)find(vp, 1003)->data;
    if (st == OK && plan->workspace &&
        (!ws || fake_device_range(ws, (size_t)plan->workspace) != 1))
        st = fail(BAD_PARAM, "variant pack: the plan needs %lld bytes of device workspace",
                  (long long)plan->workspace);
    if (st == OK && plan->workspace) memset(ws, 0x5A, (size_t)plan->workspace); /* scratch */
    /* inputs: every non-virtual tensor no op writes */
    for (int i = 0; st == OK && i < nt; ++i) {
        bool written = false;
        for (int64_t j = 0; j < count_of(plan->graph, 801); ++j) {
            const desc* op = child(plan->graph, 801, j);
            written = written || op_writes(op, ts[i]);
        }
        if (!written && !is_virtual(ts[i])) load(lookup(&vs, ts[i]), pack_pointer(vp, uid(ts[i])));
    }
    const int64_t nops = count_of(plan->graph, 801);
    bool done[MAX_GRAPH] = {false};
    for (int64_t left = nops, pass = 0; st == OK && left > 0 && pass <= nops; ++pass)
        for (int64_t j = 0; j < nops && j < MAX_GRAPH; ++j)
            if (!done[j] && run_op(child(plan->graph, 801, j), &vs)) done[j] = true, --left;
    for (int i = 0; st == OK && i < vs.n; ++i) { /* the outputs, into their memory */
        const desc* t = vs.vals[i].t;
        if (is_virtual(t) || !vs.vals[i].v) continue;
        bool written = false;
        for (int64_t j = 0; j < nops; ++j) {
            const desc* op = child(plan->graph, 801, j);
            written = written || op_writes(op, t);
        }
        if (!written) continue;
        void* ptr = pack_pointer(vp, uid(t));
        const int dt = (int)i64(t, A_DT, 0, 0);
        for (int64_t e = 0; e < elements(t); ++e)
            hipdnnSdkStoreFromDouble(ptr, (hipdnnDataType_t)dt, offset(t, e), vs.vals[i].v[e]);
    }
    for (int i = 0; vs.vals && i < vs.n; ++i) free(vs.vals[i].v);
    free(vs.vals);
    return st;
}
