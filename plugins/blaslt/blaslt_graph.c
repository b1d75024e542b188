/* What the blaslt engine claims, and why it declines the rest: one matmul with the nodes
 * around it that a cuBLASLt epilogue computes (which those are: blaslt_epilogue.c), read
 * off the graph and put in cuBLASLt's terms.
 *
 * cuBLASLt is column-major: a matrix is (rows, cols, ld) with element (i, j) at i + j * ld,
 * and D = op(A) op(B) with op N or T.  A row-major product C = A B (C[m][n] at
 * m * ldc + n) is the same memory as the column-major N x M matrix C^T, and
 * C^T = B^T A^T; a row-major B [K, N] is, unchanged, the column-major N x K matrix B^T.
 * So for a C whose rows are contiguous we hand cuBLASLt D = C^T, A = B^T and B = A^T, each
 * operand with op N if its memory already is that column-major matrix and op T if it is
 * the other one (a transpose by strides).  This is also the way the bias fits: cuBLASLt
 * adds a bias value per row of D, which is per column n of C, the [..., 1, N] bias of a
 * linear layer.  A C whose columns are contiguous is D = C, A = A, B = B (no bias then).
 * An aux matrix is laid out as D; a bias gradient is a vector along D's rows (DGELU_BGRAD,
 * BGRADA: the sums of D's rows or of op(A) over k) or its columns (BGRADB), so which of the
 * graph's operands cuBLASLt's A is decides between BGRADA and BGRADB. */
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

/* Storage and compute types, as cuBLASLt's table of matmul types has them; a bias (or bias
 * gradient) and an aux matrix take the output's type. */
static bool types(const hipdnnSdkNode* mm, const char* label, const hipdnnSdkTensor* A,
                  const hipdnnSdkTensor* B, const hipdnnSdkTensor* D,
                  const hipdnnSdkTensor* bias, const hipdnnSdkTensor* aux, bl_problem* p,
                  char* why, size_t len) {
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
    const hipdnnSdkTensor* other[2] = {bias, aux};
    for (int i = 0; i < 2; ++i)
        if (other[i] && other[i]->data_type != D->data_type)
            return decline(why, len, "%s: %s '%s' is %s; cuBLASLt keeps it in the output's "
                           "type (%s)", label, i ? "aux" : "bias", other[i]->name,
                           type_name(other[i]->data_type), type_name(D->data_type));
    p->a.type = p->b.type = ta;
    p->d.type = p->aux.type = td;
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
                    const hipdnnSdkTensor* D, bool bias, bl_problem* p, bool* swapped,
                    char* why, size_t len) {
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
    *swapped = swap;
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

/* The aux matrix (GELU_AUX's output, DGELU's input): laid out as D, its ld and batch stride
 * multiples of 8 elements as cuBLASLt asks. */
static bool aux_layout(const char* label, const hipdnnSdkTensor* X, const hipdnnSdkTensor* D,
                       bool swap, bl_problem* p, char* why, size_t len) {
    const view2 xv = last_two(X);
    if (!as_output(swap ? transposed(xv) : xv, &p->aux))
        return decline(why, len, "%s: aux '%s' is not laid out as the output '%s' is (cuBLASLt "
                       "reads and writes its aux matrix with the output's orientation)", label,
                       X->name, D->name);
    if (p->aux.ld % 8 || p->aux.ld > INT32_MAX)
        return decline(why, len, "%s: aux '%s' has a leading dimension of %lld elements; "
                       "cuBLASLt's aux matrix needs a multiple of 8", label, X->name,
                       (long long)p->aux.ld);
    if (!batch_stride(X, D, &p->aux.batch_stride) ||
        (p->batch > 1 && (p->aux.batch_stride == 0 || p->aux.batch_stride % 8)))
        return decline(why, len, "%s: aux '%s': its batch dims do not collapse into one stride "
                       "that is a multiple of 8 elements (cuBLASLt's aux batch stride)", label,
                       X->name);
    p->aux.uid = X->uid;
    return true;
}

/* A bias gradient: one packed vector of the length cuBLASLt writes, and the epilogue that
 * writes it (rows of D for DGELU_BGRAD and BGRADA, columns for BGRADB). */
static bool bias_gradient(const char* label, const bl_chain* ch, const hipdnnSdkTensor* Y,
                          bool swap, bl_problem* p, char* why, size_t len) {
    if (p->batch > 1)
        return decline(why, len, "%s: '%s' is a bias gradient of a batched product, which "
                       "blaslt does not ask of cuBLASLt", label, Y->name);
    const int kept = Y->ndim - 2 + (1 - ch->bias_axis);
    if (Y->dims[kept] != 1 && Y->strides[kept] != 1)
        return decline(why, len, "%s: bias gradient '%s' is not packed (cuBLASLt writes a "
                       "packed vector)", label, Y->name);
    if (ch->bias_kind == BL_BIAS_GRAD) {
        if (ch->bias_axis != (swap ? 0 : 1))
            return decline(why, len, "%s: bias gradient '%s' sums the output over its %s; "
                           "cuBLASLt's DGELU_BGRAD sums it over its %s here", label, Y->name,
                           ch->bias_axis ? "columns" : "rows", swap ? "rows" : "columns");
        p->epilogue = BL_EPILOGUE_DGELU | BL_EPILOGUE_BGRAD;
    } else {
        /* cuBLASLt's A is the graph's b when D = C^T */
        const bool lt_a = (ch->bias_kind == BL_BIAS_GRAD_A) != swap;
        p->epilogue = lt_a ? BL_EPILOGUE_BGRADA : BL_EPILOGUE_BGRADB;
    }
    return true;
}

/* The graph's one matmul: the rest is its epilogue. */
static const hipdnnSdkNode* the_matmul(const hipdnnSdkGraph* g, char* why, size_t len) {
    const hipdnnSdkNode* mm = NULL;
    for (int32_t i = 0; i < g->num_nodes && !mm; ++i)
        if (g->nodes[i].kind == HIPDNN_OP_MATMUL) mm = &g->nodes[i];
    if (!mm) {
        char label[160];
        hipdnnSdkNodeLabel(&g->nodes[0], label, sizeof(label));
        decline(why, len, "%s: blaslt runs a matmul and its epilogue; the graph has no matmul",
                label);
    }
    return mm;
}

bool blaslt_problem(const hipdnnSdkGraph* g, bl_problem* p, char* why, size_t len) {
    memset(p, 0, sizeof(*p));
    p->bias_uid = p->aux.uid = HIPDNN_NO_TENSOR;
    if (g->num_nodes < 1) return decline(why, len, "an empty graph");
    const hipdnnSdkNode* mm = the_matmul(g, why, len);
    if (!mm) return false;
    char label[160];
    hipdnnSdkNodeLabel(mm, label, sizeof(label));
    const hipdnnSdkTensor* A = hipdnnSdkGraphFindTensor(g, mm->inputs[HIPDNN_MATMUL_A]);
    const hipdnnSdkTensor* B = hipdnnSdkGraphFindTensor(g, mm->inputs[HIPDNN_MATMUL_B]);
    const hipdnnSdkTensor* C = hipdnnSdkGraphFindTensor(g, mm->outputs[HIPDNN_MATMUL_C]);
    if (!A || !B || !C || A->ndim < 2 || B->ndim < 2 || C->ndim < 2)
        return decline(why, len, "%s: its tensors are not set", label);
    bl_chain ch;
    if (!blaslt_chain(g, mm, &ch, why, len)) return false;
    const hipdnnSdkTensor* D = hipdnnSdkGraphFindTensor(g, ch.out);
    const hipdnnSdkTensor* bias =
        ch.bias == HIPDNN_NO_TENSOR ? NULL : hipdnnSdkGraphFindTensor(g, ch.bias);
    const hipdnnSdkTensor* aux =
        ch.aux == HIPDNN_NO_TENSOR ? NULL : hipdnnSdkGraphFindTensor(g, ch.aux);
    bool swap = false;
    if (!types(mm, label, A, B, D, bias, aux, p, why, len) ||
        !layouts(label, A, B, D, ch.bias_kind == BL_BIAS_ADD, p, &swap, why, len) ||
        (aux && !aux_layout(label, aux, D, swap, p, why, len)))
        return false;
    p->bias_uid = ch.bias;
    if (ch.bias_kind == BL_BIAS_ADD || ch.bias_kind == BL_BIAS_NONE)
        p->epilogue = (bias ? BL_EPILOGUE_BIAS : 0) | ch.activation;
    else if (!bias_gradient(label, &ch, bias, swap, p, why, len))
        return false;
    if (!p->epilogue) p->epilogue = BL_EPILOGUE_DEFAULT;
    const int r = A->ndim;
    hipdnnSdkFormat(p->what, sizeof(p->what), "%d x %lldx%lld @ %lldx%lld, %s -> %s, %s, "
                    "epilogue %s", (int)p->batch, (long long)A->dims[r - 2],
                    (long long)A->dims[r - 1], (long long)A->dims[r - 1],
                    (long long)B->dims[B->ndim - 1], type_name(A->data_type),
                    type_name(D->data_type), swap ? "D = C^T" : "D = C",
                    blaslt_epilogue_name(p->epilogue));
    return true;
}
