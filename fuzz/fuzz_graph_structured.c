/* fuzz_graph_structured — the fuzzer's bytes drive a generator that builds a graph through
 * the descriptor API: ops from the op table (hipdnnGetOpInfo_ext), tensors whose dims
 * mostly fit the op (shapes chained from earlier nodes), random parameters, strides,
 * data types, scalars and virtual intermediates.
 *
 * A graph that finalizes must serialize to bytes that deserialize to the same bytes, and
 * the deserialized graph must run on the reference engine to exactly the outputs of the
 * built one, from the same inputs. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_support.h"

#define MAX_TENSORS 48
#define MAX_NODES 8

typedef struct {
    hipdnnBackendDescriptor_t d;
    int32_t ndim; /* 0: dims unknown to the generator */
    int64_t dims[HIPDNN_MAX_DIMS];
    hipdnnDataType_t dt;
} gen_tensor;

typedef struct {
    fz_reader r;
    gen_tensor t[MAX_TENSORS];
    int nt;
    hipdnnBackendDescriptor_t ops[MAX_NODES];
    int nops;
    hipdnnDataType_t io;
} gen;

static const hipdnnDataType_t k_types[] = {HIPDNN_DATA_FLOAT, HIPDNN_DATA_HALF,
                                           HIPDNN_DATA_BFLOAT16, HIPDNN_DATA_DOUBLE,
                                           HIPDNN_DATA_INT32, HIPDNN_DATA_INT8,
                                           HIPDNN_DATA_UINT8, HIPDNN_DATA_BOOLEAN,
                                           HIPDNN_DATA_INT64, (hipdnnDataType_t)5};
static const int64_t k_dims[] = {1, 2, 3, 4, 5, 7, 8, 16};

/* Every pointwise mode hipdnn.h names (most are refused or unsupported, cleanly). */
static const int32_t k_modes[] = {
    HIPDNN_POINTWISE_ADD, HIPDNN_POINTWISE_SUB, HIPDNN_POINTWISE_MUL, HIPDNN_POINTWISE_DIV,
    HIPDNN_POINTWISE_MAX, HIPDNN_POINTWISE_MIN, HIPDNN_POINTWISE_IDENTITY,
    HIPDNN_POINTWISE_RELU_FWD, HIPDNN_POINTWISE_SIGMOID_FWD, HIPDNN_POINTWISE_TANH_FWD,
    HIPDNN_POINTWISE_GELU_FWD, HIPDNN_POINTWISE_SQRT, HIPDNN_POINTWISE_POW,
    HIPDNN_POINTWISE_ELU_FWD, HIPDNN_POINTWISE_CMP_EQ, HIPDNN_POINTWISE_LOGICAL_NOT,
    HIPDNN_POINTWISE_BINARY_SELECT, HIPDNN_POINTWISE_GEN_INDEX, 1000, -1};

static hipdnnDataType_t pick_type(gen* g) {
    uint8_t k = fz_u8(&g->r);
    return k < 192 ? g->io : k_types[k % (sizeof(k_types) / sizeof(k_types[0]))];
}

static int64_t pick_dim(gen* g) { return k_dims[fz_u8(&g->r) % 8]; }

static bool set(hipdnnBackendDescriptor_t d, hipdnnBackendAttributeName_t a,
                hipdnnBackendAttributeType_t type, int64_t n, const void* v) {
    return hipdnnBackendSetAttribute(d, a, type, n, v) == HIPDNN_STATUS_SUCCESS;
}

/* A finalized TENSOR; dims given (ndim > 0) or left to inference.  -1 on failure. */
static int new_tensor(gen* g, int32_t ndim, const int64_t* dims, hipdnnDataType_t dt,
                      bool is_virtual, bool set_dims) {
    if (g->nt == MAX_TENSORS) return -1;
    hipdnnBackendDescriptor_t d = NULL;
    if (hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_TENSOR_DESCRIPTOR, &d)) return -1;
    int64_t uid = g->nt + 1;
    uint8_t style = fz_u8(&g->r);
    if (style == 255) uid = fz_int(&g->r); /* duplicate and odd uids, now and then */
    bool ok = set(d, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT64, 1, &uid) &&
              set(d, HIPDNN_ATTR_TENSOR_IS_VIRTUAL, HIPDNN_TYPE_BOOLEAN, 1, &is_virtual);
    char name[16] = {'t', (char)('a' + g->nt % 26), (char)('0' + g->nt / 26)};
    if (ok && (style & 1)) ok = set(d, HIPDNN_ATTR_TENSOR_NAME_EXT, HIPDNN_TYPE_CHAR, 3, name);
    if (ok && (!is_virtual || (style & 2)))
        ok = set(d, HIPDNN_ATTR_TENSOR_DATA_TYPE, HIPDNN_TYPE_DATA_TYPE, 1, &dt);
    if (ok && set_dims && ndim > 0) {
        ok = set(d, HIPDNN_ATTR_TENSOR_DIMENSIONS, HIPDNN_TYPE_INT64, ndim, dims);
        if (ok && (style & 12) == 12) {
            /* strides of a random permutation of the dims, sometimes with gaps */
            int order[HIPDNN_MAX_DIMS];
            for (int i = 0; i < ndim; ++i) order[i] = i;
            for (int i = ndim - 1; i > 0; --i) {
                int k = fz_u8(&g->r) % (i + 1), tmp = order[i];
                order[i] = order[k];
                order[k] = tmp;
            }
            int64_t strides[HIPDNN_MAX_DIMS], s = 1 + (fz_u8(&g->r) & 1);
            for (int i = ndim - 1; i >= 0; --i) {
                strides[order[i]] = s;
                s *= dims[order[i]] + (fz_u8(&g->r) > 240);
            }
            ok = set(d, HIPDNN_ATTR_TENSOR_STRIDES, HIPDNN_TYPE_INT64, ndim, strides);
        }
    }
    if (ok && hipdnnBackendFinalize(d) != HIPDNN_STATUS_SUCCESS) ok = false;
    if (!ok) {
        hipdnnBackendDestroyDescriptor(d);
        return -1;
    }
    gen_tensor* t = &g->t[g->nt];
    t->d = d;
    t->ndim = ndim;
    if (ndim > 0) memcpy(t->dims, dims, (size_t)ndim * sizeof(int64_t));
    t->dt = dt;
    return g->nt++;
}

/* A pass-by-value scalar: a constant in the graph, or a value given at execute time. */
static int new_scalar(gen* g, int32_t rank) {
    if (g->nt == MAX_TENSORS) return -1;
    hipdnnBackendDescriptor_t d = NULL;
    if (hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_TENSOR_DESCRIPTOR, &d)) return -1;
    int64_t uid = g->nt + 1, ones[HIPDNN_MAX_DIMS] = {1, 1, 1, 1, 1, 1, 1, 1};
    bool yes = true, constant = fz_u8(&g->r) & 1;
    hipdnnDataType_t dt = fz_u8(&g->r) < 200 ? HIPDNN_DATA_FLOAT : pick_type(g);
    if (rank < 1) rank = 1;
    bool ok = set(d, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT64, 1, &uid) &&
              set(d, HIPDNN_ATTR_TENSOR_IS_BY_VALUE, HIPDNN_TYPE_BOOLEAN, 1, &yes) &&
              set(d, HIPDNN_ATTR_TENSOR_DATA_TYPE, HIPDNN_TYPE_DATA_TYPE, 1, &dt) &&
              set(d, HIPDNN_ATTR_TENSOR_DIMENSIONS, HIPDNN_TYPE_INT64, rank, ones);
    if (ok && constant) {
        uint8_t value[8];
        for (int i = 0; i < 8; ++i) value[i] = fz_u8(&g->r);
        int64_t n = 1 + fz_u8(&g->r) % 8;
        ok = set(d, HIPDNN_ATTR_TENSOR_VALUE_EXT, HIPDNN_TYPE_UINT8_EXT, n, value);
    }
    if (ok && hipdnnBackendFinalize(d) != HIPDNN_STATUS_SUCCESS) ok = false;
    if (!ok) {
        hipdnnBackendDestroyDescriptor(d);
        return -1;
    }
    g->t[g->nt] = (gen_tensor){d, rank, {1, 1, 1, 1, 1, 1, 1, 1}, dt};
    return g->nt++;
}

/* An input: the last tensor (chaining nodes) or an earlier one, or a new one of `ndim`
 * dims shaped like `like` where given. */
static int input(gen* g, int32_t ndim, const int64_t* like) {
    uint8_t k = fz_u8(&g->r);
    if (g->nt > 0 && k < 96) return g->nt - 1;
    if (g->nt > 0 && k < 128) return fz_u8(&g->r) % g->nt;
    int64_t dims[HIPDNN_MAX_DIMS];
    for (int i = 0; i < ndim; ++i) dims[i] = like && fz_u8(&g->r) < 224 ? like[i] : pick_dim(g);
    return new_tensor(g, ndim, dims, pick_type(g), false, true);
}

/* Parameters from the op table: left at their defaults, or set to fitting values, or to
 * anything at all now and then. */
static bool set_params(gen* g, hipdnnBackendDescriptor_t op, const hipdnnOpInfo_ext_t* info,
                       int32_t spatial) {
    for (int32_t a = 0; a < info->num_attrs; ++a) {
        const hipdnnOpAttrInfo_ext_t* p = &info->attrs[a];
        uint8_t how = fz_u8(&g->r);
        if (how < 64 && p->default_value >= 0) continue; /* keep the default */
        bool wild = how > 247;
        int64_t v[HIPDNN_MAX_ATTR_VALUES];
        double dv;
        hipdnnBackendAttributeType_t type = wild && (how & 1) ? (hipdnnBackendAttributeType_t)
                                                                    fz_range(&g->r, 0, 210)
                                                              : p->type;
        int64_t count = 1;
        const void* values = v;
        switch (p->kind) {
        case HIPDNN_OP_ATTR_INT64_LIST:
            count = wild ? fz_range(&g->r, 0, p->max_count + 1) : spatial;
            for (int i = 0; i < HIPDNN_MAX_ATTR_VALUES; ++i)
                v[i] = wild ? fz_int(&g->r) : p->min_value + fz_u8(&g->r) % 3;
            break;
        case HIPDNN_OP_ATTR_DOUBLE:
            dv = fz_double(&g->r);
            values = &dv;
            break;
        case HIPDNN_OP_ATTR_ENUM: {
            int32_t e32 = p->type == HIPDNN_TYPE_POINTWISE_MODE_EXT
                              ? k_modes[fz_u8(&g->r) % (sizeof(k_modes) / sizeof(k_modes[0]))]
                              : (int32_t)fz_range(&g->r, p->min_value, p->max_value);
            if (wild) e32 = (int32_t)fz_int(&g->r);
            memcpy(v, &e32, sizeof(e32));
            break;
        }
        case HIPDNN_OP_ATTR_BOOLEAN: {
            bool b = fz_u8(&g->r) & 1;
            memcpy(v, &b, sizeof(b));
            break;
        }
        default: v[0] = wild ? fz_int(&g->r) : fz_range(&g->r, p->min_value, p->min_value + 3);
        }
        hipdnnStatus_t st = hipdnnBackendSetAttribute(op, p->attr, type, count, values);
        if (st != HIPDNN_STATUS_SUCCESS && !wild) {
            /* a fitting value may still be out of this op's range (a pointwise mode the
             * table does not know): a clean refusal ends this graph */
            return false;
        }
    }
    return true;
}

static int64_t broadcast_dim(int64_t a, int64_t b) { return a == 1 ? b : a; }

/* One node of op `info`: its inputs, shaped to fit where the generator knows how, and a new
 * output.  false when something was refused (the graph is dropped). */
static bool add_node(gen* g, const hipdnnOpInfo_ext_t* info, bool last) {
    hipdnnBackendDescriptor_t op = NULL;
    if (g->nops == MAX_NODES ||
        hipdnnBackendCreateDescriptor(info->descriptor_type, &op) != HIPDNN_STATUS_SUCCESS)
        return false;
    int in[HIPDNN_MAX_PORTS];
    int32_t spatial = 2, out_ndim = 0;
    int64_t out_dims[HIPDNN_MAX_DIMS] = {0};
    bool ok = true;
    int x = -1;
    if (!strcmp(info->name, "conv_fprop")) {
        int32_t rank = 3 + fz_u8(&g->r) % 3;
        x = input(g, rank, NULL);
        if (x < 0) ok = false;
        if (ok && g->t[x].ndim >= 3) {
            const gen_tensor* xt = &g->t[x];
            rank = xt->ndim;
            int64_t groups = xt->dims[1] % 2 == 0 && (fz_u8(&g->r) & 1) ? 2 : 1;
            int64_t w[HIPDNN_MAX_DIMS] = {pick_dim(g) * groups, xt->dims[1] / groups};
            for (int i = 2; i < rank; ++i) w[i] = 1 + fz_u8(&g->r) % 3;
            in[1] = new_tensor(g, rank, w, pick_type(g), false, true);
            spatial = rank - 2;
            out_ndim = rank;
            out_dims[0] = xt->dims[0];
            out_dims[1] = w[0];
            for (int i = 2; i < rank; ++i) {
                out_dims[i] = xt->dims[i] - w[i] + 1; /* default padding, stride, dilation */
                if (out_dims[i] < 1) out_ndim = 0;
            }
        } else {
            in[1] = input(g, rank, NULL);
        }
    } else if (!strcmp(info->name, "matmul")) {
        int32_t rank = 2 + fz_u8(&g->r) % 3;
        x = input(g, rank, NULL);
        if (x >= 0 && g->t[x].ndim >= 2) {
            const gen_tensor* a = &g->t[x];
            int64_t b[HIPDNN_MAX_DIMS];
            for (int i = 0; i < a->ndim; ++i) b[i] = fz_u8(&g->r) < 200 ? a->dims[i] : 1;
            b[a->ndim - 2] = a->dims[a->ndim - 1];
            b[a->ndim - 1] = pick_dim(g);
            in[1] = new_tensor(g, a->ndim, b, pick_type(g), false, true);
            out_ndim = a->ndim;
            for (int i = 0; i < a->ndim - 2; ++i) out_dims[i] = broadcast_dim(a->dims[i], b[i]);
            out_dims[a->ndim - 2] = a->dims[a->ndim - 2];
            out_dims[a->ndim - 1] = b[a->ndim - 1];
        } else {
            in[1] = input(g, rank, NULL);
        }
    } else {
        /* pointwise, batchnorm and any op added later: the first input sets the shape,
         * the others match it, broadcast it (some dims 1) or are per-channel */
        int32_t rank = 1 + fz_u8(&g->r) % 4;
        x = input(g, rank, NULL);
        if (x >= 0 && g->t[x].ndim > 0) {
            const gen_tensor* xt = &g->t[x];
            out_ndim = xt->ndim;
            memcpy(out_dims, xt->dims, sizeof(out_dims));
        }
        for (int32_t p = 1; p < info->num_inputs && x >= 0; ++p) {
            uint8_t k = fz_u8(&g->r);
            if (info->inputs[p].is_optional && k < 64) {
                in[p] = -2; /* left unset */
                continue;
            }
            if (k > 224) {
                in[p] = new_scalar(g, g->t[x].ndim);
                continue;
            }
            int64_t d[HIPDNN_MAX_DIMS];
            const gen_tensor* xt = &g->t[x];
            bool per_channel = !strcmp(info->name, "batchnorm_inference");
            for (int i = 0; i < xt->ndim; ++i)
                d[i] = per_channel ? (i == 1 ? xt->dims[1] : 1)
                                   : (fz_u8(&g->r) < 64 ? 1 : xt->dims[i]);
            in[p] = xt->ndim > 0 ? new_tensor(g, xt->ndim, d, pick_type(g), false, true)
                                 : input(g, rank, NULL);
        }
    }
    in[0] = x;
    for (int32_t p = 0; p < info->num_inputs && ok; ++p) {
        if (in[p] == -2) continue;
        if (in[p] < 0) {
            ok = false;
            break;
        }
        ok = set(op, info->inputs[p].attr, HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g->t[in[p]].d);
    }
    for (int32_t p = 0; p < info->num_outputs && ok; ++p) {
        bool is_virtual = !last && (fz_u8(&g->r) & 1);
        uint8_t k = fz_u8(&g->r);
        int o = new_tensor(g, out_ndim, out_dims, is_virtual ? pick_type(g) : g->io, is_virtual,
                           k < 64);
        if (o < 0) {
            ok = false;
            break;
        }
        ok = set(op, info->outputs[p].attr, HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g->t[o].d);
    }
    hipdnnDataType_t ct = fz_u8(&g->r) < 224 ? HIPDNN_DATA_FLOAT : pick_type(g);
    if (ok) ok = set(op, HIPDNN_ATTR_OPERATION_COMPUTE_TYPE_EXT, HIPDNN_TYPE_DATA_TYPE, 1, &ct);
    if (ok) ok = set_params(g, op, info, spatial);
    if (ok && hipdnnBackendFinalize(op) != HIPDNN_STATUS_SUCCESS) ok = false;
    if (!ok) {
        hipdnnBackendDestroyDescriptor(op);
        return false;
    }
    g->ops[g->nops++] = op;
    return true;
}

static void free_gen(gen* g) {
    for (int i = 0; i < g->nops; ++i) hipdnnBackendDestroyDescriptor(g->ops[i]);
    for (int i = 0; i < g->nt; ++i) hipdnnBackendDestroyDescriptor(g->t[i].d);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    hipdnnHandle_t h = fz_handle();
    gen g;
    memset(&g, 0, sizeof(g));
    g.r = (fz_reader){data, size};
    g.io = k_types[fz_u8(&g.r) % 4];
    int64_t nops_table = 0;
    hipdnnGetOpCount_ext(&nops_table);
    int nodes = 1 + fz_u8(&g.r) % MAX_NODES;
    bool ok = true;
    for (int i = 0; i < nodes && ok; ++i) {
        const hipdnnOpInfo_ext_t* info = NULL;
        if (hipdnnGetOpInfo_ext(fz_range(&g.r, 0, nops_table - 1), &info))
            fz_fail("op table entry");
        ok = add_node(&g, info, i == nodes - 1);
    }
    hipdnnBackendDescriptor_t graph = NULL;
    if (ok && g.nops > 0 &&
        hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &graph) ==
            HIPDNN_STATUS_SUCCESS) {
        if (set(graph, HIPDNN_ATTR_OPERATIONGRAPH_HANDLE, HIPDNN_TYPE_HANDLE, 1, &h) &&
            set(graph, HIPDNN_ATTR_OPERATIONGRAPH_OPS, HIPDNN_TYPE_BACKEND_DESCRIPTOR, g.nops,
                g.ops) &&
            hipdnnBackendFinalize(graph) == HIPDNN_STATUS_SUCCESS) {
            size_t n1 = 0, n2 = 0;
            uint8_t* b1 = fz_serialize(graph, &n1);
            hipdnnBackendDescriptor_t copy = NULL;
            if (hipdnnBackendCreateAndDeserializeGraph_ext(&copy, b1, n1))
                fz_fail("a built graph's bytes (%zu) do not deserialize", n1);
            uint8_t* b2 = fz_serialize(copy, &n2);
            if (n1 != n2 || memcmp(b1, b2, n1))
                fz_fail("a deserialized graph serializes differently from the one built");
            uint64_t seed = size * 2654435761u + 1;
            fz_outputs o1 = {0}, o2 = {0};
            fz_run_graph(graph, seed, &o1);
            fz_run_graph(copy, seed, &o2);
            if (o1.ran != o2.ran || o1.size != o2.size ||
                (o1.size && memcmp(o1.bytes, o2.bytes, o1.size)))
                fz_fail("the deserialized graph ran to other outputs (ran %d/%d, %zu/%zu bytes)",
                        o1.ran, o2.ran, o1.size, o2.size);
            fz_outputs_free(&o1);
            fz_outputs_free(&o2);
            hipdnnBackendDestroyDescriptor(copy);
            free(b1);
            free(b2);
        }
        hipdnnBackendDestroyDescriptor(graph);
    }
    free_gen(&g);
    return 0;
}
