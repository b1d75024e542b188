/* What the blaslt engine claims, and why it declines the rest: one matmul, optionally
 * followed by the bias add and the activation that cuBLASLt's epilogues compute, read off
 * the graph and put in cuBLASLt's terms.
 *
 * cuBLASLt is column-major: a matrix is (rows, cols, ld) with element (i, j) at i + j * ld,
 * and D = op(A) op(B) with op N or T.  A row-major product C = A B (C[m][n] at
 * m * ldc + n) is the same memory as the column-major N x M matrix C^T, and
 * C^T = B^T A^T; a row-major B [K, N] is, unchanged, the column-major N x K matrix B^T.
 * So for a C whose rows are contiguous we hand cuBLASLt D = C^T, A = B^T and B = A^T, each
 * operand with op N if its memory already is that column-major matrix and op T if it is
 * the other one (a transpose by strides).  This is also the way the bias fits: cuBLASLt
 * adds a bias value per row of D, which is per column n of C, the [..., 1, N] bias of a
 * linear layer.  A C whose columns are contiguous is D = C, A = A, B = B (no bias then). */
#include <math.h>
#include <string.h>

#include "blaslt.h"

#define decline(why, len, ...) hipdnnSdkDecline(why, len, BLASLT_ENGINE_NAME, __VA_ARGS__)

/* A logical r x c matrix: element (i, j) at i * rs + j * cs. */
typedef struct {
    int64_t r, c, rs, cs;
} view2;

static view2 transposed(view2 v) { return (view2){v.c, v.r, v.cs, v.rs}; }

/* v as op(X) with X stored column-major: op N where v already is (rows contiguous down a
 * column), op T where its transpose is.  A dim of 1 leaves its stride free. */
static bool as_operand(view2 v, bl_matrix* m) {
    if ((v.rs == 1 || v.r == 1) && (v.c == 1 || v.cs >= v.r)) {
        m->op = BL_OP_N;
        m->rows = (uint64_t)v.r;
        m->cols = (uint64_t)v.c;
        m->ld = v.c == 1 ? v.r : v.cs;
        return true;
    }
    if ((v.cs == 1 || v.c == 1) && (v.r == 1 || v.rs >= v.c)) {
        m->op = BL_OP_T;
        m->rows = (uint64_t)v.c;
        m->cols = (uint64_t)v.r;
        m->ld = v.r == 1 ? v.c : v.rs;
        return true;
    }
    return false;
}

/* cuBLASLt writes D untransposed: v must be column-major itself. */
static bool as_output(view2 v, bl_matrix* m) { return as_operand(v, m) && m->op == BL_OP_N; }

/* The one batch stride of t's matrices over out's batch dims (NumPy broadcast, t's dims
 * aligned right): the stride of the flattened batch index, 0 when t is broadcast over all
 * of them.  False when t's batch dims do not collapse into one stride. */
static bool batch_stride(const hipdnnSdkTensor* t, const hipdnnSdkTensor* out, int64_t* stride) {
    const int nb = out->ndim - 2, tb = t->ndim - 2;
    int64_t s = 0, mult = 1;
    bool first = true;
    for (int j = nb - 1; j >= 0; --j) {
        if (out->dims[j] == 1) continue;
        const int ti = j - (nb - tb);
        const int64_t e = ti < 0 || t->dims[ti] == 1 ? 0 : t->strides[ti];
        int64_t want = 0;
        if (first) {
            s = e;
            first = false;
        } else if (__builtin_mul_overflow(s, mult, &want) || e != want) {
            return false;
        }
        if (__builtin_mul_overflow(mult, out->dims[j], &mult)) return false;
    }
    *stride = s;
    return true;
}

static int32_t lt_type(hipdnnDataType_t t) {
    switch (t) {
    case HIPDNN_DATA_FLOAT: return BL_R_32F;
    case HIPDNN_DATA_HALF: return BL_R_16F;
    case HIPDNN_DATA_BFLOAT16: return BL_R_16BF;
    default: return -1;
    }
}

static const char* type_name(hipdnnDataType_t t) { return hipdnnSdkDataTypeName(t); }

/* The nodes after the matmul, each reading the one before: a bias add, then relu or the
 * tanh gelu. */
typedef struct {
    int64_t bias; /* uid, HIPDNN_NO_TENSOR if none */
    uint32_t activation; /* 0, BL_EPILOGUE_RELU or BL_EPILOGUE_GELU */
    int64_t out;  /* the last node's output: cuBLASLt's D */
} chain;

static bool plain_relu(const hipdnnSdkNode* n) {
    return n->attrs[HIPDNN_PW_RELU_LOWER_CLIP].d == 0.0 &&
           isinf(n->attrs[HIPDNN_PW_RELU_UPPER_CLIP].d) &&
           n->attrs[HIPDNN_PW_RELU_UPPER_CLIP].d > 0 &&
           n->attrs[HIPDNN_PW_RELU_LOWER_CLIP_SLOPE].d == 0.0;
}

/* A bias cuBLASLt can add: in memory, one value per column n of the product. */
static bool bias_ok(const hipdnnSdkTensor* bias, const hipdnnSdkTensor* c, const char* label,
                    char* why, size_t len) {
    if (bias->is_virtual || bias->is_by_value)
        return decline(why, len, "%s: bias '%s' is %s: cuBLASLt reads its bias vector from "
                       "memory", label, bias->name, bias->is_virtual ? "computed in the graph"
                                                                    : "a by-value scalar");
    const int64_t n = c->dims[c->ndim - 1];
    bool ok = bias->ndim >= 1 && bias->ndim <= c->ndim && bias->dims[bias->ndim - 1] == n &&
              (n == 1 || bias->strides[bias->ndim - 1] == 1);
    for (int i = 0; ok && i < bias->ndim - 1; ++i) ok = bias->dims[i] == 1;
    if (!ok)
        return decline(why, len, "%s: bias '%s' is not one packed value per column of the "
                       "product ([..., 1, %lld]): cuBLASLt adds a bias vector along the rows",
                       label, bias->name, (long long)n);
    return true;
}

static bool same_dims(const hipdnnSdkTensor* a, const hipdnnSdkTensor* b) {
    if (a->ndim != b->ndim) return false;
    for (int i = 0; i < a->ndim; ++i)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

/* One node after the matmul, reading `cur`: what it adds to the epilogue. */
static bool epilogue_node(const hipdnnSdkGraph* g, const hipdnnSdkNode* n,
                          const hipdnnSdkTensor* c, int64_t cur, chain* ch, char* why,
                          size_t len) {
    char label[160];
    hipdnnSdkNodeLabel(n, label, sizeof(label));
    if (n->kind == HIPDNN_OP_MATMUL)
        return decline(why, len, "%s: one matmul a graph (cuBLASLt runs one product and its "
                       "epilogue)", label);
    if (n->kind != HIPDNN_OP_POINTWISE)
        return decline(why, len, "%s: no cuBLASLt epilogue runs it after a matmul", label);
    const hipdnnPointwiseMode_t mode = hipdnnSdkNodeMode(n);
    const int64_t x = hipdnnSdkPointwiseOperand(n, 0), out = hipdnnSdkPointwiseOutput(n);
    const int64_t b = hipdnnSdkPointwiseArity(mode) > 1 ? hipdnnSdkPointwiseOperand(n, 1)
                                                         : HIPDNN_NO_TENSOR;
    if (x != cur && b != cur)
        return decline(why, len, "%s does not read the result of the node before it: blaslt "
                       "runs a matmul and a chain of epilogue nodes after it", label);
    const hipdnnSdkTensor* y = hipdnnSdkGraphFindTensor(g, out);
    if (!y || !same_dims(y, c))
        return decline(why, len, "%s: its output is not the product's shape", label);
    switch (mode) {
    case HIPDNN_POINTWISE_ADD: {
        const int64_t other = x == cur ? b : x;
        const hipdnnSdkTensor* bias = hipdnnSdkGraphFindTensor(g, other);
        if (ch->activation || ch->bias != HIPDNN_NO_TENSOR || other == cur || !bias)
            return decline(why, len, "%s: cuBLASLt adds one bias, before its activation",
                           label);
        if (!bias_ok(bias, c, label, why, len)) return false;
        ch->bias = other;
        break;
    }
    case HIPDNN_POINTWISE_RELU_FWD:
        if (!plain_relu(n))
            return decline(why, len, "%s: cuBLASLt's RELU epilogue is max(x, 0): no clip or "
                           "slope", label);
        /* fall through */
    case HIPDNN_POINTWISE_GELU_APPROX_TANH_FWD:
        if (ch->activation)
            return decline(why, len, "%s: cuBLASLt applies one activation", label);
        ch->activation = mode == HIPDNN_POINTWISE_RELU_FWD ? BL_EPILOGUE_RELU : BL_EPILOGUE_GELU;
        break;
    case HIPDNN_POINTWISE_GELU_FWD:
        /* cuBLASLt's GELU epilogue is the tanh approximation (PyTorch, whose addmm fused
         * with gelu uses it, approximates with tanh on every GPU path for that reason:
         * pytorch/pytorch#104061), so only gelu_approx_tanh maps onto it. */
        return decline(why, len, "%s: this gelu is the erf form; cuBLASLt's GELU epilogue "
                       "computes the tanh approximation (gelu_approx_tanh)", label);
    default:
        return decline(why, len, "%s: no cuBLASLt epilogue computes %s (blaslt maps a bias "
                       "add, relu and gelu_approx_tanh)", label,
                       hipdnnSdkPointwiseModeName(mode) ? hipdnnSdkPointwiseModeName(mode) : "it");
    }
    return true;
}

static bool read_chain(const hipdnnSdkGraph* g, const hipdnnSdkTensor* c, chain* ch, char* why,
                       size_t len) {
    ch->bias = HIPDNN_NO_TENSOR;
    ch->activation = 0;
    ch->out = HIPDNN_NO_TENSOR;
    int64_t cur = c->uid;
    for (int32_t i = 1; i < g->num_nodes; ++i) {
        const hipdnnSdkTensor* t = hipdnnSdkGraphFindTensor(g, cur);
        if (t && !t->is_virtual)
            return decline(why, len, "'%s' is a graph output read by another node: cuBLASLt "
                           "writes one matrix (its aux epilogues, which write a second, are "
                           "not used yet)", t->name);
        if (!epilogue_node(g, &g->nodes[i], c, cur, ch, why, len)) return false;
        cur = hipdnnSdkPointwiseOutput(&g->nodes[i]);
    }
    ch->out = cur;
    return true;
}

/* Storage and compute types, as cuBLASLt's table of matmul types has them. */
static bool types(const hipdnnSdkNode* mm, const char* label, const hipdnnSdkTensor* A,
                  const hipdnnSdkTensor* B, const hipdnnSdkTensor* D,
                  const hipdnnSdkTensor* bias, bl_problem* p, char* why, size_t len) {
    const int32_t ta = lt_type(A->data_type), td = lt_type(D->data_type);
    if (A->data_type != B->data_type || ta < 0)
        return decline(why, len, "%s: a is %s and b %s; blaslt multiplies fp32, fp16 or bf16 "
                       "matrices of one type (fp8 is not claimed yet)", label,
                       type_name(A->data_type), type_name(B->data_type));
    if (mm->compute_type != HIPDNN_DATA_FLOAT)
        return decline(why, len, "%s: compute type %s; blaslt accumulates in fp32", label,
                       type_name(mm->compute_type));
    if (td < 0 || (td != ta && td != BL_R_32F))
        return decline(why, len, "%s: %s inputs give %s or %s with cuBLASLt, not %s ('%s')",
                       label, type_name(A->data_type), type_name(A->data_type),
                       type_name(HIPDNN_DATA_FLOAT), type_name(D->data_type), D->name);
    if (bias && bias->data_type != D->data_type)
        return decline(why, len, "%s: bias '%s' is %s; cuBLASLt reads a bias of the output's "
                       "type (%s)", label, bias->name, type_name(bias->data_type),
                       type_name(D->data_type));
    p->a.type = p->b.type = ta;
    p->d.type = td;
    p->fp32_inputs = ta == BL_R_32F;
    p->in_size = (int)hipdnnSdkDataTypeSize(A->data_type);
    p->out_size = (int)hipdnnSdkDataTypeSize(D->data_type);
    return true;
}

static bool not_a_matrix(const char* label, const char* port, const hipdnnSdkTensor* t,
                         char* why, size_t len) {
    const int r = t->ndim;
    return decline(why, len, "%s: %s '%s' ([.., %lld, %lld], strides [.., %lld, %lld]) is not "
                   "a matrix cuBLASLt reads: one of its last two dims must be contiguous and "
                   "the other a leading dimension", label, port, t->name,
                   (long long)t->dims[r - 2], (long long)t->dims[r - 1],
                   (long long)t->strides[r - 2], (long long)t->strides[r - 1]);
}

static view2 last_two(const hipdnnSdkTensor* t) {
    const int r = t->ndim;
    return (view2){t->dims[r - 2], t->dims[r - 1], t->strides[r - 2], t->strides[r - 1]};
}

/* The three matrices and the batch: D = C^T (rows of C contiguous) or D = C. */
static bool layouts(const char* label, const hipdnnSdkTensor* A, const hipdnnSdkTensor* B,
                    const hipdnnSdkTensor* D, bool bias, bl_problem* p, char* why, size_t len) {
    const view2 av = last_two(A), bv = last_two(B), dv = last_two(D);
    const int64_t lim = INT32_MAX;
    if (av.r < 1 || av.c < 1 || bv.c < 1 || av.r > lim || av.c > lim || bv.c > lim)
        return decline(why, len, "%s: M, N and K must be 1 to 2^31 - 1 (cuBLASLt's sizes)",
                       label);
    int64_t batch = 1;
    for (int i = 0; i < D->ndim - 2; ++i) batch *= D->dims[i];
    if (batch > lim) return decline(why, len, "%s: more than 2^31 - 1 matrices", label);
    p->batch = (int32_t)batch;
    const bool swap = as_output(transposed(dv), &p->d);
    if (!swap && (bias || !as_output(dv, &p->d)))
        return decline(why, len, "%s: output '%s' needs contiguous rows%s (cuBLASLt writes a "
                       "column-major matrix with a leading dimension)", label, D->name,
                       bias ? " for the bias epilogue" : " or columns");
    const hipdnnSdkTensor* first = swap ? B : A;
    const hipdnnSdkTensor* second = swap ? A : B;
    if (!as_operand(swap ? transposed(bv) : av, &p->a))
        return not_a_matrix(label, swap ? "b" : "a", first, why, len);
    if (!as_operand(swap ? transposed(av) : bv, &p->b))
        return not_a_matrix(label, swap ? "a" : "b", second, why, len);
    p->a.uid = first->uid;
    p->b.uid = second->uid;
    p->d.uid = D->uid;
    const hipdnnSdkTensor* t[3] = {first, second, D};
    bl_matrix* m[3] = {&p->a, &p->b, &p->d};
    for (int i = 0; i < 3; ++i) {
        if (m[i]->ld > lim)
            return decline(why, len, "%s: '%s' has a leading dimension past 2^31 - 1", label,
                           t[i]->name);
        if (!batch_stride(t[i], D, &m[i]->batch_stride) || (i == 2 && batch > 1 &&
                                                            m[i]->batch_stride == 0))
            return decline(why, len, "%s: the batch dims of '%s' do not collapse into one "
                           "stride (cuBLASLt takes one batch stride a matrix)", label,
                           t[i]->name);
    }
    return true;
}

static const char* epilogue_name(uint32_t e) {
    switch (e) {
    case BL_EPILOGUE_BIAS: return "bias";
    case BL_EPILOGUE_RELU: return "relu";
    case BL_EPILOGUE_BIAS | BL_EPILOGUE_RELU: return "bias+relu";
    case BL_EPILOGUE_GELU: return "gelu_tanh";
    case BL_EPILOGUE_BIAS | BL_EPILOGUE_GELU: return "bias+gelu_tanh";
    default: return "none";
    }
}

bool blaslt_problem(const hipdnnSdkGraph* g, bl_problem* p, char* why, size_t len) {
    memset(p, 0, sizeof(*p));
    p->bias_uid = HIPDNN_NO_TENSOR;
    if (g->num_nodes < 1) return decline(why, len, "an empty graph");
    const hipdnnSdkNode* mm = &g->nodes[0];
    char label[160];
    hipdnnSdkNodeLabel(mm, label, sizeof(label));
    if (mm->kind != HIPDNN_OP_MATMUL)
        return decline(why, len, "%s: blaslt runs a matmul and its epilogue; the graph starts "
                       "with this node", label);
    const hipdnnSdkTensor* A = hipdnnSdkGraphFindTensor(g, mm->inputs[HIPDNN_MATMUL_A]);
    const hipdnnSdkTensor* B = hipdnnSdkGraphFindTensor(g, mm->inputs[HIPDNN_MATMUL_B]);
    const hipdnnSdkTensor* C = hipdnnSdkGraphFindTensor(g, mm->outputs[HIPDNN_MATMUL_C]);
    if (!A || !B || !C || A->ndim < 2 || B->ndim < 2 || C->ndim < 2)
        return decline(why, len, "%s: its tensors are not set", label);
    chain ch = {HIPDNN_NO_TENSOR, 0, HIPDNN_NO_TENSOR};
    if (!read_chain(g, C, &ch, why, len)) return false;
    const hipdnnSdkTensor* D = hipdnnSdkGraphFindTensor(g, ch.out);
    const hipdnnSdkTensor* bias =
        ch.bias == HIPDNN_NO_TENSOR ? NULL : hipdnnSdkGraphFindTensor(g, ch.bias);
    if (!D || D->is_virtual)
        return decline(why, len, "%s: the graph's last node writes no output", label);
    if (!types(mm, label, A, B, D, bias, p, why, len) ||
        !layouts(label, A, B, D, bias != NULL, p, why, len))
        return false;
    p->bias_uid = ch.bias;
    p->epilogue = (bias ? BL_EPILOGUE_BIAS : 0) | ch.activation;
    if (!p->epilogue) p->epilogue = BL_EPILOGUE_DEFAULT;
    const int r = A->ndim;
    hipdnnSdkFormat(p->what, sizeof(p->what), "%d x %lldx%lld @ %lldx%lld, %s -> %s, %s, "
                    "epilogue %s", (int)p->batch, (long long)A->dims[r - 2],
                    (long long)A->dims[r - 1], (long long)A->dims[r - 1],
                    (long long)B->dims[B->ndim - 1], type_name(A->data_type),
                    type_name(D->data_type), p->a.uid == B->uid ? "D = C^T" : "D = C",
                    epilogue_name(p->epilogue));
    return true;
}
