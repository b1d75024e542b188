/* graph_builder.h — building graphs through the public descriptor API for the C tests:
 * one helper per descriptor kind (each call checked, so a failure names the file:line of
 * the helper and the backend's message), the conv -> add -> relu graph the tests share,
 * and the engine-heuristics queries (results, support report).
 *
 * Helpers return NULL (or 0) after a failed check; the hipdnn calls that follow then see
 * NULL descriptors, which the API must reject without crashing. */
#ifndef HIPDNN_TEST_GRAPH_BUILDER_H
#define HIPDNN_TEST_GRAPH_BUILDER_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hipdnn/hipdnn.h"

static inline void gb_destroy(hipdnnBackendDescriptor_t* d) {
    if (*d) CHECK_OK(hipdnnBackendDestroyDescriptor(*d));
    *d = NULL;
}

static inline hipdnnBackendDescriptor_t gb_new(hipdnnBackendDescriptorType_t type) {
    hipdnnBackendDescriptor_t d = NULL;
    if (!CHECK_OK(hipdnnBackendCreateDescriptor(type, &d))) return NULL;
    return d;
}

static inline int gb_set_name(hipdnnBackendDescriptor_t d, hipdnnBackendAttributeName_t attr,
                       const char* name) {
    return CHECK_OK(hipdnnBackendSetAttribute(d, attr, HIPDNN_TYPE_CHAR, (int64_t)strlen(name),
                                              name));
}

/* A finalized tensor.  ndim = 0 leaves dims (and strides) to inference; strides = NULL
 * leaves them packed. */
static inline hipdnnBackendDescriptor_t gb_tensor(int64_t uid, const char* name, hipdnnDataType_t dt,
                                           int ndim, const int64_t* dims, const int64_t* strides,
                                           int is_virtual) {
    hipdnnBackendDescriptor_t t = gb_new(HIPDNN_BACKEND_TENSOR_DESCRIPTOR);
    if (!t) return NULL;
    bool virt = is_virtual != 0;
    int ok = CHECK_OK(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT64,
                                                1, &uid)) &&
             gb_set_name(t, HIPDNN_ATTR_TENSOR_NAME_EXT, name) &&
             CHECK_OK(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_DATA_TYPE,
                                                HIPDNN_TYPE_DATA_TYPE, 1, &dt)) &&
             CHECK_OK(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_IS_VIRTUAL,
                                                HIPDNN_TYPE_BOOLEAN, 1, &virt));
    if (ok && ndim > 0)
        ok = CHECK_OK(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_DIMENSIONS,
                                                HIPDNN_TYPE_INT64, ndim, dims));
    if (ok && ndim > 0 && strides)
        ok = CHECK_OK(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_STRIDES, HIPDNN_TYPE_INT64,
                                                ndim, strides));
    if (ok) ok = CHECK_OK(hipdnnBackendFinalize(t));
    if (!ok) gb_destroy(&t);
    return t;
}

static inline int gb_set_desc(hipdnnBackendDescriptor_t op, hipdnnBackendAttributeName_t attr,
                       hipdnnBackendDescriptor_t value) {
    return CHECK_OK(hipdnnBackendSetAttribute(op, attr, HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &value));
}

static inline int gb_op_common(hipdnnBackendDescriptor_t op, const char* name) {
    hipdnnDataType_t ct = HIPDNN_DATA_FLOAT;
    return gb_set_name(op, HIPDNN_ATTR_OPERATION_NAME_EXT, name) &&
           CHECK_OK(hipdnnBackendSetAttribute(op, HIPDNN_ATTR_OPERATION_COMPUTE_TYPE_EXT,
                                              HIPDNN_TYPE_DATA_TYPE, 1, &ct));
}

static inline hipdnnBackendDescriptor_t gb_finish_op(hipdnnBackendDescriptor_t op, int ok) {
    if (ok) ok = CHECK_OK(hipdnnBackendFinalize(op));
    if (!ok) gb_destroy(&op);
    return op;
}

/* A finalized 2-D cross-correlation y = conv(x, w). */
static inline hipdnnBackendDescriptor_t gb_conv(const char* name, hipdnnBackendDescriptor_t x,
                                         hipdnnBackendDescriptor_t w, hipdnnBackendDescriptor_t y,
                                         const int64_t pad[2], const int64_t stride[2],
                                         const int64_t dilation[2]) {
    hipdnnBackendDescriptor_t op = gb_new(HIPDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    if (!op) return NULL;
    hipdnnConvolutionMode_t mode = HIPDNN_CROSS_CORRELATION;
    int ok = gb_op_common(op, name) &&
             gb_set_desc(op, HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x) &&
             gb_set_desc(op, HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w) &&
             gb_set_desc(op, HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, y) &&
             CHECK_OK(hipdnnBackendSetAttribute(op, HIPDNN_ATTR_CONVOLUTION_PRE_PADDINGS,
                                                HIPDNN_TYPE_INT64, 2, pad)) &&
             CHECK_OK(hipdnnBackendSetAttribute(op, HIPDNN_ATTR_CONVOLUTION_POST_PADDINGS,
                                                HIPDNN_TYPE_INT64, 2, pad)) &&
             CHECK_OK(hipdnnBackendSetAttribute(op, HIPDNN_ATTR_CONVOLUTION_FILTER_STRIDES,
                                                HIPDNN_TYPE_INT64, 2, stride)) &&
             CHECK_OK(hipdnnBackendSetAttribute(op, HIPDNN_ATTR_CONVOLUTION_DILATIONS,
                                                HIPDNN_TYPE_INT64, 2, dilation)) &&
             CHECK_OK(hipdnnBackendSetAttribute(op, HIPDNN_ATTR_CONVOLUTION_CONV_MODE,
                                                HIPDNN_TYPE_CONVOLUTION_MODE_EXT, 1, &mode));
    return gb_finish_op(op, ok);
}

/* A finalized pointwise op; b = NULL for unary modes. */
static inline hipdnnBackendDescriptor_t gb_pointwise(const char* name, hipdnnPointwiseMode_t mode,
                                              hipdnnBackendDescriptor_t x,
                                              hipdnnBackendDescriptor_t b,
                                              hipdnnBackendDescriptor_t y) {
    hipdnnBackendDescriptor_t op = gb_new(HIPDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    if (!op) return NULL;
    int ok = gb_op_common(op, name) &&
             CHECK_OK(hipdnnBackendSetAttribute(op, HIPDNN_ATTR_POINTWISE_MODE,
                                                HIPDNN_TYPE_POINTWISE_MODE_EXT, 1, &mode)) &&
             gb_set_desc(op, HIPDNN_ATTR_OPERATION_POINTWISE_XDESC, x) &&
             (!b || gb_set_desc(op, HIPDNN_ATTR_OPERATION_POINTWISE_BDESC, b)) &&
             gb_set_desc(op, HIPDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
    return gb_finish_op(op, ok);
}

/* A finalized matmul c = a @ b. */
static inline hipdnnBackendDescriptor_t gb_matmul(const char* name, hipdnnBackendDescriptor_t a,
                                           hipdnnBackendDescriptor_t b,
                                           hipdnnBackendDescriptor_t c) {
    hipdnnBackendDescriptor_t op = gb_new(HIPDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    if (!op) return NULL;
    int ok = gb_op_common(op, name) && gb_set_desc(op, HIPDNN_ATTR_OPERATION_MATMUL_ADESC, a) &&
             gb_set_desc(op, HIPDNN_ATTR_OPERATION_MATMUL_BDESC, b) &&
             gb_set_desc(op, HIPDNN_ATTR_OPERATION_MATMUL_CDESC, c);
    return gb_finish_op(op, ok);
}

/* An OPERATIONGRAPH holding `ops`, NOT finalized (tests finalize it and look at the
 * status). */
static inline hipdnnBackendDescriptor_t gb_graph(hipdnnHandle_t h, const char* name, int n,
                                          hipdnnBackendDescriptor_t* ops) {
    hipdnnBackendDescriptor_t g = gb_new(HIPDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    if (!g) return NULL;
    int ok = CHECK_OK(hipdnnBackendSetAttribute(g, HIPDNN_ATTR_OPERATIONGRAPH_HANDLE,
                                                HIPDNN_TYPE_HANDLE, 1, &h)) &&
             gb_set_name(g, HIPDNN_ATTR_OPERATIONGRAPH_NAME_EXT, name) &&
             CHECK_OK(hipdnnBackendSetAttribute(g, HIPDNN_ATTR_OPERATIONGRAPH_OPS,
                                                HIPDNN_TYPE_BACKEND_DESCRIPTOR, n, ops));
    if (!ok) gb_destroy(&g);
    return g;
}

/* ---- the conv -> add(bias) -> relu graph ---------------------------------------------- */

enum { CAR_X = 1, CAR_W = 2, CAR_CONV = 3, CAR_BIAS = 4, CAR_ADD = 5, CAR_Y = 6 };

typedef struct {
    /* shapes: x [n, c, h, w] channels-last in memory, w [k, c / groups, r, s] packed,
     * bias [1, k, 1, 1], y [n, k, ho, wo] with strides inferred (channels-last, like x) */
    int64_t n, c, h, w, k, wc, r, s, ho, wo;
    int64_t pad[2], stride[2], dilation[2];
    int64_t x_dims[4], x_strides[4], w_dims[4], b_dims[4], y_dims[4];
    int64_t y_strides[4]; /* as finalize left them (given none: x's layout) */
    hipdnnBackendDescriptor_t x, wt, conv_out, bias, add_out, y;
    hipdnnBackendDescriptor_t conv, add, relu;
    hipdnnBackendDescriptor_t graph; /* finalized on success */
} car_graph;

static inline void car_destroy(car_graph* g) {
    hipdnnBackendDescriptor_t* all[] = {&g->graph, &g->conv,    &g->add,  &g->relu, &g->x,
                                        &g->wt,    &g->conv_out, &g->bias, &g->add_out, &g->y};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); ++i) gb_destroy(all[i]);
}

/* Builds and finalizes it; 1 on success.  The conv and add outputs are virtual with
 * dims and data type left for inference. */
/* The strides a finalized graph inferred for tensor `uid` (from TENSORS_EXT: the user's
 * TENSOR descriptors keep what was set); the rank, or -1. */
static inline int gb_inferred_strides(hipdnnBackendDescriptor_t graph, int64_t uid,
                                      int64_t* strides) {
    hipdnnBackendDescriptor_t ts[64];
    int64_t n = 0, count = 0;
    int rank = -1;
    if (!CHECK_OK(hipdnnBackendGetAttribute(graph, HIPDNN_ATTR_OPERATIONGRAPH_TENSORS_EXT,
                                            HIPDNN_TYPE_BACKEND_DESCRIPTOR, 64, &n, ts)))
        return -1;
    for (int64_t i = 0; i < n && i < 64; ++i) {
        int64_t u = -1;
        hipdnnBackendGetAttribute(ts[i], HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT64, 1,
                                  &count, &u);
        if (u == uid &&
            hipdnnBackendGetAttribute(ts[i], HIPDNN_ATTR_TENSOR_STRIDES, HIPDNN_TYPE_INT64,
                                      HIPDNN_MAX_DIMS, &count, strides) == HIPDNN_STATUS_SUCCESS)
            rank = (int)count;
        hipdnnBackendDestroyDescriptor(ts[i]);
    }
    return rank;
}

static inline int car_build(car_graph* g, hipdnnHandle_t h, int64_t groups) {
    memset(g, 0, sizeof(*g));
    g->n = 2, g->c = 4, g->h = 7, g->w = 7, g->k = 6, g->r = 3, g->s = 3;
    g->wc = g->c / groups;
    g->pad[0] = 1, g->pad[1] = 1;
    g->stride[0] = 2, g->stride[1] = 1;
    g->dilation[0] = 1, g->dilation[1] = 2;
    g->ho = (g->h + 2 * g->pad[0] - g->dilation[0] * (g->r - 1) - 1) / g->stride[0] + 1;
    g->wo = (g->w + 2 * g->pad[1] - g->dilation[1] * (g->s - 1) - 1) / g->stride[1] + 1;
    int64_t xd[4] = {g->n, g->c, g->h, g->w};
    int64_t xs[4] = {g->h * g->w * g->c, 1, g->w * g->c, g->c}; /* NHWC in memory */
    int64_t wd[4] = {g->k, g->wc, g->r, g->s};
    int64_t bd[4] = {1, g->k, 1, 1};
    int64_t yd[4] = {g->n, g->k, g->ho, g->wo};
    memcpy(g->x_dims, xd, sizeof(xd));
    memcpy(g->x_strides, xs, sizeof(xs));
    memcpy(g->w_dims, wd, sizeof(wd));
    memcpy(g->b_dims, bd, sizeof(bd));
    memcpy(g->y_dims, yd, sizeof(yd));

    g->x = gb_tensor(CAR_X, "x", HIPDNN_DATA_FLOAT, 4, xd, xs, 0);
    g->wt = gb_tensor(CAR_W, "w", HIPDNN_DATA_FLOAT, 4, wd, NULL, 0);
    g->conv_out = gb_tensor(CAR_CONV, "conv_out", HIPDNN_DATA_NOT_SET, 0, NULL, NULL, 1);
    g->bias = gb_tensor(CAR_BIAS, "bias", HIPDNN_DATA_FLOAT, 4, bd, NULL, 0);
    g->add_out = gb_tensor(CAR_ADD, "add_out", HIPDNN_DATA_NOT_SET, 0, NULL, NULL, 1);
    g->y = gb_tensor(CAR_Y, "y", HIPDNN_DATA_FLOAT, 4, yd, NULL, 0);
    if (!g->x || !g->wt || !g->conv_out || !g->bias || !g->add_out || !g->y) return 0;
    g->conv = gb_conv("conv1", g->x, g->wt, g->conv_out, g->pad, g->stride, g->dilation);
    g->add = gb_pointwise("bias_add", HIPDNN_POINTWISE_ADD, g->conv_out, g->bias, g->add_out);
    g->relu = gb_pointwise("relu1", HIPDNN_POINTWISE_RELU_FWD, g->add_out, NULL, g->y);
    if (!g->conv || !g->add || !g->relu) return 0;
    hipdnnBackendDescriptor_t ops[3] = {g->conv, g->add, g->relu};
    g->graph = gb_graph(h, "conv_add_relu", 3, ops);
    if (!g->graph || !CHECK_OK(hipdnnBackendFinalize(g->graph))) return 0;
    return gb_inferred_strides(g->graph, CAR_Y, g->y_strides) == 4;
}

/* ---- engine heuristics ------------------------------------------------------------------ */

/* A finalized ENGINEHEUR for a finalized graph, or NULL. */
static inline hipdnnBackendDescriptor_t gb_heur(hipdnnBackendDescriptor_t graph,
                                         hipdnnBackendHeurMode_t mode) {
    hipdnnBackendDescriptor_t heur = gb_new(HIPDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    if (!heur) return NULL;
    int ok = CHECK_OK(hipdnnBackendSetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_MODE,
                                                HIPDNN_TYPE_HEUR_MODE, 1, &mode)) &&
             gb_set_desc(heur, HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph) &&
             CHECK_OK(hipdnnBackendFinalize(heur));
    if (!ok) gb_destroy(&heur);
    return heur;
}

/* A CHAR attribute as a malloc'd string (count query first, then the read). */
static inline char* gb_get_string(hipdnnBackendDescriptor_t d, hipdnnBackendAttributeName_t attr) {
    int64_t n = -1;
    if (!CHECK_OK(hipdnnBackendGetAttribute(d, attr, HIPDNN_TYPE_CHAR, 0, &n, NULL))) return NULL;
    if (!CHECK(n >= 0)) return NULL;
    char* s = malloc((size_t)n + 1);
    if (!s) return NULL;
    memset(s, 'X', (size_t)n + 1);
    int64_t got = -1;
    if (!CHECK_OK(hipdnnBackendGetAttribute(d, attr, HIPDNN_TYPE_CHAR, n + 1, &got, s)) ||
        !CHECK_EQ_INT(got, n) || !CHECK(s[n] == '\0')) {
        free(s);
        return NULL;
    }
    return s;
}

/* The support report line of engine `name`: its third field (after "name\tid\t"), copied
 * into out; 1 if the engine has a line.  Also checks that the id field is the engine's
 * FNV-1a id, written in decimal or hex. */
static inline int gb_report_reason(const char* report, const char* name, uint64_t id, char* out,
                            size_t out_len) {
    const char* line = report;
    size_t name_len = strlen(name);
    while (line && *line) {
        const char* end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (len > name_len && strncmp(line, name, name_len) == 0 && line[name_len] == '\t') {
            const char* idf = line + name_len + 1;
            const char* tab = memchr(idf, '\t', len - name_len - 1);
            if (!tab) {
                CHECK_MSG(0, "report line for %s has no reason field", name);
                return 0;
            }
            char idbuf[64] = {0};
            size_t idlen = (size_t)(tab - idf) < sizeof(idbuf) - 1 ? (size_t)(tab - idf)
                                                                   : sizeof(idbuf) - 1;
            memcpy(idbuf, idf, idlen);
            uint64_t dec = strtoull(idbuf, NULL, 10), hex = strtoull(idbuf, NULL, 16);
            CHECK_MSG(dec == id || hex == id || (uint64_t)strtoll(idbuf, NULL, 10) == id,
                      "report id field '%s' for %s is not %" PRIu64 " (0x%" PRIx64 ")", idbuf,
                      name, id, id);
            size_t rlen = len - (size_t)(tab + 1 - line);
            if (rlen >= out_len) rlen = out_len - 1;
            memcpy(out, tab + 1, rlen);
            out[rlen] = '\0';
            return 1;
        }
        line = end ? end + 1 : NULL;
    }
    return 0;
}

#endif /* HIPDNN_TEST_GRAPH_BUILDER_H */
