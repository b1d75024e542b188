/* fake_cublaslt.c — a stand-in for NVIDIA's libcublasLt.so.13, for tests on machines
 * without a GPU: the calls the blaslt engine makes (plugins/blaslt), with the library's
 * semantics, over the "device" memory of the fake driver (tests/fake_cuda, host malloc).
 *
 * Matrices are column-major (rows, cols, ld), batched by a count and a stride in elements;
 * D = epilogue(alpha op(A) op(B) + beta C) with op N or T, the types and compute types of
 * cuBLASLt's table (fp32 / fp16 / bf16, COMPUTE_32F, COMPUTE_32F_FAST_TF32 which rounds the
 * inputs to TF32), and the epilogues DEFAULT, RELU, BIAS, RELU_BIAS, GELU, GELU_BIAS (GELU
 * being the tanh approximation), GELU_AUX(_BIAS) (the GELU's input, after the bias, written
 * to the aux matrix in D's type), DGELU (the product times the tanh GELU's derivative at
 * the aux matrix), DGELU_BGRAD (and D's row sums, one per row of D, to the bias pointer)
 * and BGRADA / BGRADB (op(A)'s sums over k per row of D, op(B)'s per column).  The aux
 * matrix is D's shape with its own ld (a multiple of 8, at least D's rows) and batch stride
 * (a multiple of 8).  The RELU bit-mask epilogues are not computed, so they are refused, as
 * is a bias gradient of a batched product (the fake has no bias batch stride).  Sums are
 * taken in double and rounded once to the stored type.
 * Everything a real call would refuse is refused: mismatched shapes, ld below rows, unequal
 * batch counts, a type combination the table lacks, a pointer that is not device memory
 * or not aligned as the algorithm needs, an extent past its allocation, too little
 * workspace, no current context.  The heuristic offers three algorithms: two that need
 * 16-byte aligned pointers (1 MiB and no workspace) and one that takes any (64 KiB).
 *
 * Built as build/tests/fake_cublaslt/libcublasLt.so.13; used when a test puts that folder
 * on LD_LIBRARY_PATH (with the fake driver's).  FAKE_CUBLASLT_OLD=1 reports version 10.2.1,
 * older than the engine takes; FAKE_CUBLASLT_CREATE_MS=<ms> makes cublasLtCreate take that
 * long. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../fake_cuda/fake_device.h"
#include "hipdnn/hipdnn_sdk.h"

#define EXPORT __attribute__((visibility("default")))

typedef int status;
enum { OK = 0, NOT_INITIALIZED = 1, ALLOC_FAILED = 3, INVALID_VALUE = 7,
       EXECUTION_FAILED = 13, NOT_SUPPORTED = 15 };
enum { R_32F = 0, R_16F = 2, R_16BF = 14 };
enum { COMPUTE_32F = 68, COMPUTE_32F_FAST_TF32 = 77 };
enum { EPI_DEFAULT = 1, EPI_RELU = 2, EPI_BIAS = 4, EPI_GELU = 32 };
/* the bias-gradient bit, the GELU gradient, the aux bit, the operand sums */
enum { EPI_BGRAD = 16, EPI_DGELU = 64, EPI_AUX = 128, EPI_BGRADA = 256, EPI_BGRADB = 512 };
#define MAGIC 0xB1A5u
#define ALGO_MAGIC 0xFA4EA160ull

typedef struct { unsigned magic; } context;
typedef struct {
    unsigned magic;
    int compute, scale, transa, transb;
    uint32_t epilogue;
    const void* bias;
    const void* aux; /* EPILOGUE_AUX_POINTER, _LD, _BATCH_STRIDE */
    int64_t aux_ld, aux_stride;
} desc;
typedef struct {
    unsigned magic;
    int type;
    uint64_t rows, cols;
    int64_t ld, stride;
    int32_t batch;
} layout;
typedef struct {
    unsigned magic;
    uint64_t max_ws;
    uint32_t align[4]; /* A, B, C, D */
} pref;
typedef struct { uint64_t data[8]; } algo;
typedef struct {
    algo a;
    size_t workspace;
    status state;
    float waves;
    int reserved[4];
} heuristic_result;

/* The fake's algorithms: the alignment (bytes) each needs and its workspace. */
static const struct { uint32_t align; size_t workspace; } k_algos[] = {
    {16, 1u << 20}, {16, 0}, {1, 64u << 10}};
#define NUM_ALGOS 3

/* ---- the fake driver, for "device" memory and the current context ---------------------- */

/* Whether [p, p + bytes) is device memory inside one allocation. */
static int device_range(const void* p, size_t bytes) { return fake_device_range(p, bytes) == 1; }

/* ---- version, status, handle ------------------------------------------------------------ */

EXPORT size_t cublasLtGetVersion(void) { return getenv("FAKE_CUBLASLT_OLD") ? 10201 : 130000; }

EXPORT const char* cublasLtGetStatusName(status s) {
    switch (s) {
    case OK: return "CUBLAS_STATUS_SUCCESS";
    case NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "CUBLAS_STATUS_UNKNOWN";
    }
}

/* Handles made and heuristic queries so far: the tests see that a build the plan cache
 * decides for another engine asks cuBLASLt nothing. */
static long g_handles_made, g_heuristic_queries;
EXPORT long fakeCublasLtHandlesCreated(void) { return g_handles_made; }
EXPORT long fakeCublasLtHeuristicQueries(void) { return g_heuristic_queries; }

EXPORT status cublasLtCreate(context** h) {
    if (!h) return INVALID_VALUE;
    if (!fake_context_current()) return NOT_INITIALIZED; /* the real one needs a device */
    fake_sleep_from("FAKE_CUBLASLT_CREATE_MS");
    *h = calloc(1, sizeof(**h));
    if (!*h) return ALLOC_FAILED;
    (*h)->magic = MAGIC;
    ++g_handles_made;
    return OK;
}

EXPORT status cublasLtDestroy(context* h) {
    if (!h || h->magic != MAGIC) return NOT_INITIALIZED;
    h->magic = 0;
    free(h);
    return OK;
}

/* ---- descriptors -------------------------------------------------------------------------- */

EXPORT status cublasLtMatmulDescCreate(desc** d, int compute, int scale) {
    if (!d || (compute != COMPUTE_32F && compute != COMPUTE_32F_FAST_TF32)) return INVALID_VALUE;
    *d = calloc(1, sizeof(**d));
    if (!*d) return ALLOC_FAILED;
    **d = (desc){MAGIC, compute, scale, 0, 0, EPI_DEFAULT, NULL, NULL, 0, 0};
    return OK;
}

EXPORT status cublasLtMatmulDescDestroy(desc* d) {
    if (!d || d->magic != MAGIC) return INVALID_VALUE;
    d->magic = 0;
    free(d);
    return OK;
}

/* Copies an attribute's value, which must be exactly `want` bytes. */
static status take(void* dst, const void* src, size_t size, size_t want) {
    if (!src || size != want) return INVALID_VALUE;
    memcpy(dst, src, want);
    return OK;
}

EXPORT status cublasLtMatmulDescSetAttribute(desc* d, int attr, const void* v, size_t size) {
    if (!d || d->magic != MAGIC) return INVALID_VALUE;
    switch (attr) {
    case 0: return take(&d->compute, v, size, 4);
    case 1: return take(&d->scale, v, size, 4);
    case 3: return take(&d->transa, v, size, 4);
    case 4: return take(&d->transb, v, size, 4);
    case 7: {
        uint32_t e = 0;
        if (take(&e, v, size, 4) != OK) return INVALID_VALUE;
        const uint32_t known[] = {EPI_DEFAULT, EPI_RELU, EPI_BIAS, EPI_BIAS | EPI_RELU, EPI_GELU,
                                  EPI_BIAS | EPI_GELU, EPI_GELU | EPI_AUX,
                                  EPI_BIAS | EPI_GELU | EPI_AUX, EPI_DGELU | EPI_AUX,
                                  EPI_DGELU | EPI_AUX | EPI_BGRAD, EPI_BGRADA, EPI_BGRADB};
        for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); ++i)
            if (e == known[i]) return take(&d->epilogue, v, size, 4);
        return INVALID_VALUE;
    }
    case 8: return take(&d->bias, v, size, sizeof(void*));
    case 11: return take(&d->aux, v, size, sizeof(void*));
    case 12: return take(&d->aux_ld, v, size, 8);
    case 13: return take(&d->aux_stride, v, size, 8);
    default: return INVALID_VALUE; /* the engine sets no other */
    }
}

EXPORT status cublasLtMatrixLayoutCreate(layout** l, int type, uint64_t rows, uint64_t cols,
                                         int64_t ld) {
    if (!l || (type != R_32F && type != R_16F && type != R_16BF)) return INVALID_VALUE;
    *l = calloc(1, sizeof(**l));
    if (!*l) return ALLOC_FAILED;
    **l = (layout){MAGIC, type, rows, cols, ld, 0, 1};
    return OK;
}

EXPORT status cublasLtMatrixLayoutDestroy(layout* l) {
    if (!l || l->magic != MAGIC) return INVALID_VALUE;
    l->magic = 0;
    free(l);
    return OK;
}

EXPORT status cublasLtMatrixLayoutSetAttribute(layout* l, int attr, const void* v, size_t size) {
    if (!l || l->magic != MAGIC) return INVALID_VALUE;
    if (attr == 5) return take(&l->batch, v, size, 4);
    if (attr == 6) return take(&l->stride, v, size, 8);
    return INVALID_VALUE;
}

EXPORT status cublasLtMatmulPreferenceCreate(pref** p) {
    if (!p) return INVALID_VALUE;
    *p = calloc(1, sizeof(**p));
    if (!*p) return ALLOC_FAILED;
    **p = (pref){MAGIC, 0, {256, 256, 256, 256}}; /* the library's defaults */
    return OK;
}

EXPORT status cublasLtMatmulPreferenceDestroy(pref* p) {
    if (!p || p->magic != MAGIC) return INVALID_VALUE;
    p->magic = 0;
    free(p);
    return OK;
}

EXPORT status cublasLtMatmulPreferenceSetAttribute(pref* p, int attr, const void* v, size_t size) {
    if (!p || p->magic != MAGIC) return INVALID_VALUE;
    if (attr == 1) return take(&p->max_ws, v, size, 8);
    if (attr >= 5 && attr <= 8) return take(&p->align[attr - 5], v, size, 4);
    return INVALID_VALUE;
}

/* ---- the problem, checked as the library checks it ---------------------------------------- */

static size_t type_size(int t) { return t == R_32F ? 4 : 2; }

static int valid(const layout* l) {
    return l && l->magic == MAGIC && l->rows >= 1 && l->cols >= 1 && l->batch >= 1 &&
           l->ld >= (int64_t)l->rows && l->stride >= 0;
}

/* The epilogue's pointers: the bias pointer read (BIAS) or written (a bias gradient). */
static int uses_bias(uint32_t e) {
    return (e & (EPI_BIAS | EPI_BGRAD | EPI_BGRADA | EPI_BGRADB)) != 0;
}

/* The aux matrix's ld and batch stride as cuBLASLt documents them; no bias gradient of a
 * batch. */
static status check_epilogue(const desc* d, const layout* dl) {
    if (d->epilogue & EPI_AUX) {
        if (d->aux_ld < (int64_t)dl->rows || d->aux_ld % 8) return INVALID_VALUE;
        if (dl->batch > 1 && (d->aux_stride <= 0 || d->aux_stride % 8)) return INVALID_VALUE;
    }
    if ((d->epilogue & (EPI_BGRAD | EPI_BGRADA | EPI_BGRADB)) && dl->batch > 1)
        return NOT_SUPPORTED;
    return OK;
}

/* Shapes, batches and types of D = op(A) op(B) (+ C, which must be laid out as D). */
static status check(const desc* d, const layout* a, const layout* b, const layout* c,
                    const layout* dl) {
    if (!d || d->magic != MAGIC || !valid(a) || !valid(b) || !valid(c) || !valid(dl))
        return INVALID_VALUE;
    const uint64_t m = d->transa ? a->cols : a->rows, k = d->transa ? a->rows : a->cols;
    const uint64_t kb = d->transb ? b->cols : b->rows, n = d->transb ? b->rows : b->cols;
    if (k != kb || m != dl->rows || n != dl->cols || (d->transa | d->transb) > 1)
        return INVALID_VALUE;
    if (c->type != dl->type || c->rows != dl->rows || c->cols != dl->cols || c->ld != dl->ld ||
        c->batch != dl->batch || c->stride != dl->stride)
        return INVALID_VALUE;
    if (a->batch != dl->batch || b->batch != dl->batch) return INVALID_VALUE;
    const status epi = check_epilogue(d, dl);
    if (epi != OK) return epi;
    if (a->type != b->type || d->scale != R_32F) return NOT_SUPPORTED;
    if (d->compute == COMPUTE_32F_FAST_TF32 && a->type != R_32F) return NOT_SUPPORTED;
    if (dl->type != a->type && dl->type != R_32F) return NOT_SUPPORTED;
    return OK;
}

static uint32_t min_align(const pref* p) {
    uint32_t m = p->align[0];
    for (int i = 1; i < 4; ++i) m = p->align[i] < m ? p->align[i] : m;
    return m;
}

EXPORT status cublasLtMatmulAlgoGetHeuristic(context* h, desc* d, layout* a, layout* b,
                                             layout* c, layout* dl, pref* p, int requested,
                                             heuristic_result* out, int* returned) {
    if (!h || h->magic != MAGIC) return NOT_INITIALIZED;
    ++g_heuristic_queries;
    if (!p || p->magic != MAGIC || !out || !returned || requested < 1) return INVALID_VALUE;
    *returned = 0;
    status st = check(d, a, b, c, dl);
    if (st != OK) return st;
    const uint32_t align = min_align(p);
    const uintptr_t bias = (uintptr_t)d->bias;
    for (int i = 0; i < NUM_ALGOS && *returned < requested; ++i) {
        if (k_algos[i].align > align || k_algos[i].workspace > p->max_ws) continue;
        if (uses_bias(d->epilogue) && bias % k_algos[i].align) continue;
        if ((d->epilogue & EPI_AUX) && (uintptr_t)d->aux % k_algos[i].align) continue;
        heuristic_result* r = &out[(*returned)++];
        memset(r, 0, sizeof(*r));
        r->a.data[0] = ALGO_MAGIC;
        r->a.data[1] = (uint64_t)i;
        r->workspace = k_algos[i].workspace;
        r->state = OK;
        r->waves = 1.0f;
    }
    return *returned ? OK : NOT_SUPPORTED;
}

/* ---- the product ---------------------------------------------------------------------------- */

static double load(const void* base, int type, int64_t i) {
    if (type == R_32F) return ((const float*)base)[i];
    const uint16_t v = ((const uint16_t*)base)[i];
    return type == R_16F ? hipdnnSdkHalfToFloat(v) : hipdnnSdkBfloat16ToFloat(v);
}

static void store(void* base, int type, int64_t i, double v) {
    if (type == R_32F) ((float*)base)[i] = (float)v;
    else if (type == R_16F) ((uint16_t*)base)[i] = hipdnnSdkDoubleToHalf(v);
    else ((uint16_t*)base)[i] = hipdnnSdkDoubleToBfloat16(v);
}

/* fp32 rounded to TF32's 10 mantissa bits, to nearest even (COMPUTE_32F_FAST_TF32). */
static double tf32(double v) {
    float f = (float)v;
    uint32_t bits;
    memcpy(&bits, &f, 4);
    bits = (bits + 0xFFFu + ((bits >> 13) & 1u)) & ~0x1FFFu;
    memcpy(&f, &bits, 4);
    return f;
}

static double epilogue(uint32_t e, double v) {
    if (e & EPI_RELU) return v > 0 ? v : 0.0;
    if (e & EPI_GELU) return 0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
    return v;
}

/* Bytes a batched matrix spans from its pointer. */
static size_t extent(const layout* l) {
    const int64_t span = (int64_t)(l->batch - 1) * l->stride + (int64_t)(l->cols - 1) * l->ld +
                         (int64_t)l->rows;
    return (size_t)span * type_size(l->type);
}

static int aligned(const void* p, uint32_t align) { return (uintptr_t)p % align == 0; }

/* Every pointer device memory, inside its allocation and as aligned as the algorithm needs. */
static status check_memory(const desc* d, const void* A, const layout* a, const void* B,
                           const layout* b, const void* D, const layout* dl, uint32_t align) {
    if (!device_range(A, extent(a)) || !device_range(B, extent(b)) || !device_range(D, extent(dl)))
        return INVALID_VALUE;
    if (!aligned(A, align) || !aligned(B, align) || !aligned(D, align)) return INVALID_VALUE;
    if (uses_bias(d->epilogue)) {
        const uint64_t n = d->epilogue == EPI_BGRADB ? dl->cols : dl->rows;
        if (!d->bias || !aligned(d->bias, align) || !device_range(d->bias, n * type_size(dl->type)))
            return INVALID_VALUE;
    }
    if (d->epilogue & EPI_AUX) {
        const layout aux = {MAGIC, dl->type, dl->rows, dl->cols, d->aux_ld, d->aux_stride,
                            dl->batch};
        if (!d->aux || !aligned(d->aux, align) || !device_range(d->aux, extent(&aux)))
            return INVALID_VALUE;
    }
    return OK;
}

/* The tanh GELU's derivative (DGELU). */
static double gelu_tanh_slope(double x) {
    const double k = 0.7978845608028654, c = 0.044715, t = tanh(k * (x + c * x * x * x));
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k * (1.0 + 3.0 * c * x * x);
}

/* The aux matrix at D's (i, j) of batch bt: GELU_AUX writes v there, DGELU scales v by the
 * GELU's slope at what is there. */
static double with_aux(const desc* d, const layout* dl, int32_t bt, int64_t i, int64_t j,
                       double v) {
    if (!(d->epilogue & EPI_AUX)) return v;
    const int64_t at = bt * d->aux_stride + i + j * d->aux_ld;
    if (d->epilogue & EPI_DGELU) return v * gelu_tanh_slope(load(d->aux, dl->type, at));
    store((void*)d->aux, dl->type, at, v);
    return v;
}

/* BGRADA / BGRADB: op(A)'s sums over k for each row of D, op(B)'s for each column (batch 1). */
static void operand_sums(const desc* d, const void* A, const layout* a, const void* B,
                         const layout* b, const layout* dl) {
    const int is_a = d->epilogue == EPI_BGRADA;
    const layout* x = is_a ? a : b;
    const int trans = is_a ? d->transa : d->transb;
    const int64_t n = (int64_t)(is_a ? dl->rows : dl->cols);
    const int64_t k_len = (int64_t)(trans ? (is_a ? x->rows : x->cols)
                                          : (is_a ? x->cols : x->rows));
    for (int64_t i = 0; i < n; ++i) {
        double s = 0.0;
        for (int64_t k = 0; k < k_len; ++k) {
            /* op(A)[i][k] or op(B)[k][i] */
            const int64_t at = is_a ? (trans ? k + i * x->ld : i + k * x->ld)
                                    : (trans ? i + k * x->ld : k + i * x->ld);
            s += load(is_a ? A : B, x->type, at);
        }
        store((void*)d->bias, dl->type, i, s);
    }
}

static status multiply(const desc* d, double alpha, const void* A, const layout* a, const void* B,
                     const layout* b, double beta, const void* C, void* D, const layout* dl) {
    const int64_t k_len = (int64_t)(d->transa ? a->rows : a->cols);
    double* sums = (d->epilogue & EPI_BGRAD) ? calloc(dl->rows, sizeof(double)) : NULL;
    if ((d->epilogue & EPI_BGRAD) && !sums) return ALLOC_FAILED;
    for (int32_t bt = 0; bt < dl->batch; ++bt) {
        const int64_t oa = bt * a->stride, ob = bt * b->stride, od = bt * dl->stride;
        for (int64_t j = 0; j < (int64_t)dl->cols; ++j) {
            for (int64_t i = 0; i < (int64_t)dl->rows; ++i) {
                double s = 0.0;
                for (int64_t k = 0; k < k_len; ++k) {
                    double x = load(A, a->type, oa + (d->transa ? k + i * a->ld : i + k * a->ld));
                    double y = load(B, b->type, ob + (d->transb ? j + k * b->ld : k + j * b->ld));
                    if (d->compute == COMPUTE_32F_FAST_TF32) x = tf32(x), y = tf32(y);
                    s += x * y;
                }
                double v = alpha * s;
                if (beta != 0.0) v += beta * load(C, dl->type, od + i + j * dl->ld);
                if (d->epilogue & EPI_BIAS) v += load(d->bias, dl->type, i);
                v = with_aux(d, dl, bt, i, j, v);
                store(D, dl->type, od + i + j * dl->ld, epilogue(d->epilogue, v));
                if (d->epilogue & EPI_BGRAD) sums[i] += v; /* batch 1 */
            }
        }
    }
    for (int64_t i = 0; (d->epilogue & EPI_BGRAD) && i < (int64_t)dl->rows; ++i)
        store((void*)d->bias, dl->type, i, sums[i]);
    free(sums);
    if (d->epilogue & (EPI_BGRADA | EPI_BGRADB)) operand_sums(d, A, a, B, b, dl);
    return OK;
}

EXPORT status cublasLtMatmul(context* h, desc* d, const void* alpha, const void* A, layout* a,
                             const void* B, layout* b, const void* beta, const void* C, layout* c,
                             void* D, layout* dl, const algo* al, void* workspace,
                             size_t workspace_size, void* stream) {
    (void)stream; /* work is done at once, as the fake driver's is */
    if (!h || h->magic != MAGIC || !fake_context_current()) return NOT_INITIALIZED;
    if (!alpha || !beta || !al || al->data[0] != ALGO_MAGIC || al->data[1] >= NUM_ALGOS)
        return INVALID_VALUE;
    status st = check(d, a, b, c, dl);
    if (st != OK) return st;
    const uint32_t i = (uint32_t)al->data[1];
    st = check_memory(d, A, a, B, b, D, dl, k_algos[i].align);
    if (st != OK) return st;
    const float fa = *(const float*)alpha, fb = *(const float*)beta;
    if (fb != 0.0f && (C != D && !device_range(C, extent(c)))) return INVALID_VALUE;
    if (workspace_size < k_algos[i].workspace ||
        (k_algos[i].workspace && !device_range(workspace, k_algos[i].workspace)))
        return INVALID_VALUE;
    if (k_algos[i].workspace) memset(workspace, 0x5A, k_algos[i].workspace); /* it is scratch */
    return multiply(d, fa, A, a, B, b, fb, C, D, dl);
}
