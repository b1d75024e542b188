/* hipdnn's sdpa_fwd node as the graph of cuDNN backend operations that cuDNN frontend
 * builds for its SDPA node, which is the pattern cuDNN's fused-attention engines recognise
 * (cuDNN has no attention operation of its own before 9.13):
 *
 *   s = q k^T               matmul, fp32; k seen as k^T [B, H_k, D, S_kv] by swapping the
 *                           dims and strides of its last two dims (H_k < H_q: GQA / MQA)
 *   s = s * attn_scale      pointwise MUL (when the node has a scale)
 *   s = s + bias            pointwise ADD
 *   right bound (causal)    keep where row [+ S_kv - S_q] [+ right] >= col: GEN_INDEX of the
 *                           rows and columns (int32), ADD / SUB, CMP_GE, then BINARY_SELECT
 *                           of s or -inf
 *   left bound (window)     keep where col + left [- S_kv + S_q] > row (the bound a float,
 *                           as cuDNN frontend gives it), CMP_GT, BINARY_SELECT
 *   m = max(s), e = exp(s - m), l = sum(e)          REDUCTION MAX, SUB, EXP, REDUCTION ADD
 *   stats = m + log(l)      LOG, ADD (when the node makes stats)
 *   p = e / l               DIV, p in q's data type (bmm2 reads it so)
 *   o = p v                 matmul
 *
 * The order, the data types of the intermediates and the constants' types are cuDNN
 * frontend's, since its engines match on them.  What this pattern cannot say as hipdnn
 * defines sdpa is declined, naming the node: fp32 (cuDNN's attention engines take fp16 and
 * bf16), an o of another type than q, a padding mask (cuDNN leaves o and stats of query
 * rows past seq_len_q unspecified, where hipdnn gives o = 0 and stats = -inf), and a mask
 * that leaves a query row no key (the same).  Whether cuDNN runs the rest (head dims,
 * layouts, bias shapes) is its heuristic's to say, with its message. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "cudnn.h"

#define decline(why, len, ...) hipdnnSdkDecline(why, len, CUDNN_ENGINE_NAME, __VA_ARGS__)

typedef cd_builder builder;

typedef cd_attention attention;

static const hipdnnSdkTensor* port(const builder* b, int64_t uid) {
    return uid == HIPDNN_NO_TENSOR ? NULL : hipdnnSdkGraphFindTensor(b->g, uid);
}

/* ---- what is translated ---------------------------------------------------------------- */

/* The first query row that sees no key under the band, or -1: hipdnn gives such a row
 * o = 0 and stats = -inf, which cuDNN's engines are not asked to reproduce. */
static int64_t row_without_keys(const attention* a) {
    const int64_t sq = a->s_dims[2], skv = a->s_dims[3];
    const int64_t shift = a->bottom_right ? skv - sq : 0;
    for (int64_t i = 0; i < sq; ++i) {
        int64_t lo = a->left > 0 ? i + shift - a->left + 1 : 0;
        int64_t hi = a->right >= 0 ? i + shift + a->right : skv - 1;
        if (lo < 0) lo = 0;
        if (hi > skv - 1) hi = skv - 1;
        if (lo > hi) return i;
    }
    return -1;
}

static bool check_types(builder* b, const attention* a) {
    const hipdnnSdkTensor* qkv[3] = {a->q, a->k, a->v};
    for (int i = 0; i < 3; ++i)
        if ((qkv[i]->data_type != HIPDNN_DATA_HALF && qkv[i]->data_type != HIPDNN_DATA_BFLOAT16) ||
            qkv[i]->data_type != a->q->data_type)
            return decline(b->why, b->len, "%s: '%s' is %s; cuDNN's attention engines take fp16 "
                           "or bf16 q, k and v of one type (the hip engine runs the others)",
                           a->label, qkv[i]->name, hipdnnSdkDataTypeName(qkv[i]->data_type));
    if (a->o->is_virtual || a->o->data_type != a->q->data_type)
        return decline(b->why, b->len, "%s: o '%s' is %s%s; cuDNN's attention engines write o "
                       "to memory in q's data type (%s)", a->label, a->o->name,
                       a->o->is_virtual ? "virtual, " : "",
                       hipdnnSdkDataTypeName(a->o->data_type),
                       hipdnnSdkDataTypeName(a->q->data_type));
    if (a->stats && a->stats->is_virtual)
        return decline(b->why, b->len, "%s: stats '%s' is virtual; cuDNN's attention engines "
                       "write stats to memory", a->label, a->stats->name);
    const hipdnnSdkTensor* dense[4] = {a->q, a->k, a->v, a->o};
    for (int i = 0; i < 4; ++i)
        if (dense[i]->strides[3] != 1)
            return decline(b->why, b->len, "%s: '%s' has stride %lld along its head dim; "
                           "cuDNN's attention engines need it 1", a->label, dense[i]->name,
                           (long long)dense[i]->strides[3]);
    return true;
}

/* cuDNN frontend's support surface for fp16 / bf16 attention (its SDPA node's validation):
 * what it refuses, because cuDNN's engines do not run it right, is declined here, since the
 * backend API this plugin calls does not check it. */
static bool frontend_allows(builder* b, const attention* a, bool bias) {
    const size_t v = g_cd.get_version();
    const int64_t sq = a->s_dims[2], skv = a->s_dims[3];
    const int64_t d = a->q->dims[3], dv = a->v->dims[3];
    const bool right = a->right >= 0, left = a->left > 0, br = right && a->bottom_right;
    const char* why = NULL;
    if (v == 91000 || v == 91001)
        why = "cuDNN 9.10.0 and 9.10.1 have known bugs in attention forward";
    else if (d % 8 || dv % 8)
        why = "head dims that are not multiples of 8";
    else if (br && bias)
        why = "a bottom-right causal mask with a bias";
    else if (br && v < 90600 && (sq % 64 || skv % 64))
        why = "a bottom-right causal mask with s_q or s_kv not a multiple of 64 before cuDNN 9.6";
    else if (left && v < 91002 && (!right || bias))
        why = "a left bound without a right bound, or with a bias, before cuDNN 9.10.2";
    else if (left && br && sq != skv && v < 90600)
        why = "a left bound with a bottom-right causal mask and s_q != s_kv before cuDNN 9.6";
    else if (left && br && sq == skv && v <= 90900)
        why = "a left bound with a bottom-right causal mask and s_q == s_kv up to cuDNN 9.9 "
              "(on Hopper)";
    else if (v == 91400 && skv > 1024 && left && !right)
        why = "a left bound without a right bound and s_kv > 1024 on cuDNN 9.14.0 (a known bug)";
    else if (sq == 1 && right && v <= 90900)
        why = "decode (s_q 1) with a right bound up to cuDNN 9.9";
    if (!why) return true;
    return decline(b->why, b->len, "%s: %s; cuDNN frontend refuses it (cuDNN %zu.%zu.%zu "
                   "loaded; the hip engine runs it)", a->label, why, v / 10000, v / 100 % 100,
                   v % 100);
}

/* The node's tensors and mask into a; false, naming the node, where it is not translated. */
static bool read_node(builder* b, const hipdnnSdkNode* n, const char* label, attention* a) {
    memset(a, 0, sizeof(*a));
    a->label = label;
    a->q = port(b, n->inputs[HIPDNN_SDPA_Q]);
    a->k = port(b, n->inputs[HIPDNN_SDPA_K]);
    a->v = port(b, n->inputs[HIPDNN_SDPA_V]);
    a->o = port(b, n->outputs[HIPDNN_SDPA_O]);
    a->stats = port(b, n->outputs[HIPDNN_SDPA_STATS]);
    if (!a->q || !a->k || !a->v || !a->o || a->q->ndim != 4 || a->k->ndim != 4 ||
        a->v->ndim != 4 || b->rank != 4)
        return decline(b->why, b->len, "%s: cudnn translates sdpa of rank-4 q, k, v and o in a "
                       "graph of rank-4 tensors (this one has rank %d)", label, b->rank);
    if (n->compute_type != HIPDNN_DATA_FLOAT && n->compute_type != HIPDNN_DATA_NOT_SET)
        return decline(b->why, b->len, "%s: compute type %s; cuDNN's attention computes fp32",
                       label, hipdnnSdkDataTypeName(n->compute_type));
    if (!check_types(b, a)) return false;
    const hipdnnSdkTensor* ragged[4] = {a->q, a->k, a->v, a->o};
    for (int i = 0; i < 4; ++i) /* cuDNN has them (RAGGED_OFFSET_DESC); not translated yet */
        if (ragged[i]->has_ragged_offset)
            return decline(b->why, b->len, "%s: '%s' is ragged (a ragged offset); cudnn does "
                           "not translate ragged tensors yet (the hip and reference_cpu "
                           "engines run them)", label, ragged[i]->name);
    /* cuDNN has both (an ALiBi mask, paged K/V); until they are translated, a graph with
     * either must not run here without it */
    if (n->attrs[HIPDNN_SDPA_ALIBI].i[0])
        return decline(b->why, b->len, "%s: an ALiBi mask; cudnn does not translate it yet "
                       "(the hip and reference_cpu engines run it)", label);
    if (n->attrs[HIPDNN_SDPA_MAX_SEQ_LEN_KV].i[0])
        return decline(b->why, b->len, "%s: paged K/V caches; cudnn does not translate them yet "
                       "(the hip and reference_cpu engines run them)", label);
    if (n->attrs[HIPDNN_SDPA_DROPOUT].d > 0.0 ||
        (n->kind == HIPDNN_OP_SDPA_FWD && n->outputs[HIPDNN_SDPA_RNG_DUMP] != HIPDNN_NO_TENSOR))
        return decline(b->why, b->len, "%s: dropout; cudnn does not translate it yet (cuDNN's "
                       "Philox mask differs from hipdnn's: the hip and reference_cpu engines "
                       "run it)", label);
    if (n->attrs[HIPDNN_SDPA_PADDING].i[0])
        return decline(b->why, b->len, "%s: a padding mask; cuDNN leaves o and stats of the "
                       "query rows past seq_len_q unspecified (cuDNN frontend's tests zero them "
                       "before comparing), where hipdnn's sdpa gives o = 0 and stats = -inf "
                       "(the hip engine runs it)", label);
    const int64_t row = cudnn_sdpa_shape(a, n), sq = a->s_dims[2], skv = a->s_dims[3];
    if (row >= 0)
        return decline(b->why, b->len, "%s: its mask leaves query row %lld no key (s_q %lld, "
                       "s_kv %lld); hipdnn gives such a row o = 0 and stats = -inf, which "
                       "cuDNN's attention does not (the hip engine runs it)", label,
                       (long long)row, (long long)sq, (long long)skv);
    return frontend_allows(b, a, n->inputs[HIPDNN_SDPA_BIAS] != HIPDNN_NO_TENSOR);
}

/* ---- the operations ------------------------------------------------------------------------ */

/* A virtual tensor of dims, packed. */
static cd_desc virt(builder* b, hipdnnDataType_t type, const int64_t dims[4], const char* name,
                    const char* label) {
    cd_tensor_spec s = {.type = type, .is_virtual = true, .name = name};
    int64_t stride = 1;
    for (int d = 3; d >= 0; --d) s.dims[d] = dims[d], s.strides[d] = stride, stride *= dims[d];
    return cudnn_new_tensor(b, &s, label);
}

/* A constant of the graph: one by-value value of type, which the variant pack points at. */
static cd_desc constant(builder* b, hipdnnDataType_t type, double value, const char* name,
                        const char* label) {
    cd_tensor_spec s = {.type = type, .by_value = true, .has_value = true, .name = name};
    for (int d = 0; d < 4; ++d) s.dims[d] = 1, s.strides[d] = 1;
    hipdnnSdkStoreFromDouble(s.value, type, 0, value);
    return cudnn_new_tensor(b, &s, label);
}

/* y = mode(x, operand) into a new virtual tensor of `type`. */
static cd_desc binary(builder* b, int mode, hipdnnDataType_t prec, int64_t axis, cd_desc x,
                      cd_desc operand, hipdnnDataType_t type, const int64_t dims[4],
                      const char* name, const char* label) {
    cd_desc y = x && operand ? virt(b, type, dims, name, label) : NULL;
    return y && cudnn_pointwise(b, mode, (int32_t)prec, axis, x, operand, NULL, y, label) ? y
                                                                                         : NULL;
}

static cd_desc unary(builder* b, int mode, cd_desc x, const int64_t dims[4], const char* name,
                     const char* label) {
    cd_desc y = x ? virt(b, HIPDNN_DATA_FLOAT, dims, name, label) : NULL;
    return y && cudnn_pointwise(b, mode, HIPDNN_DATA_FLOAT, -1, x, NULL, NULL, y, label) ? y
                                                                                       : NULL;
}

/* The row (axis 2) or column (axis 3) index of each score, int32. */
static cd_desc index_of(builder* b, const attention* a, cd_desc s, int axis) {
    cd_desc idx = s ? virt(b, HIPDNN_DATA_INT32, a->s_dims, axis == 2 ? "row" : "col",
                           a->label) : NULL;
    return idx && cudnn_pointwise(b, HIPDNN_POINTWISE_GEN_INDEX, HIPDNN_DATA_FLOAT, axis, s, NULL,
                                  NULL, idx, a->label) ? idx : NULL;
}

/* s where keep, else the mask value (-inf; cuDNN before 9.10 wants the lowest float). */
static cd_desc mask_out(builder* b, const attention* a, cd_desc s, cd_desc keep) {
    const double masked = g_cd.get_version() < 91000 ? -FLT_MAX : -INFINITY;
    cd_desc value = keep ? constant(b, HIPDNN_DATA_FLOAT, masked, "masked", a->label) : NULL;
    cd_desc y = value ? virt(b, HIPDNN_DATA_FLOAT, a->s_dims, "s_masked", a->label) : NULL;
    return y && cudnn_pointwise(b, HIPDNN_POINTWISE_BINARY_SELECT, HIPDNN_DATA_FLOAT, -1, s,
                                value, keep, y, a->label) ? y : NULL;
}

static cd_desc i32(builder* b, const attention* a, int64_t v, const char* name) {
    return constant(b, HIPDNN_DATA_INT32, (double)v, name, a->label);
}

/* Keeps col <= row + shift + right. */
static cd_desc right_bound(builder* b, const attention* a, cd_desc s) {
    const hipdnnDataType_t I = HIPDNN_DATA_INT32;
    cd_desc row = index_of(b, a, s, 2), col = row ? index_of(b, a, s, 3) : NULL;
    if (a->bottom_right) {
        row = binary(b, HIPDNN_POINTWISE_ADD, I, 3, row, i32(b, a, a->s_dims[3], "s_kv"), I,
                     a->s_dims, "row+s_kv", a->label);
        row = binary(b, HIPDNN_POINTWISE_SUB, I, 3, row, row ? i32(b, a, a->s_dims[2], "s_q")
                     : NULL, I, a->s_dims, "row-s_q", a->label);
    }
    if (a->right != 0)
        row = binary(b, HIPDNN_POINTWISE_ADD, I, 3, row, row ? i32(b, a, a->right, "right")
                     : NULL, I, a->s_dims, "row+right", a->label);
    cd_desc keep = col ? binary(b, HIPDNN_POINTWISE_CMP_GE, HIPDNN_DATA_BOOLEAN, -1, row, col,
                                HIPDNN_DATA_BOOLEAN, a->s_dims, "keep_right", a->label) : NULL;
    return mask_out(b, a, s, keep);
}

/* Keeps col > row + shift - left. */
static cd_desc left_bound(builder* b, const attention* a, cd_desc s) {
    const double shifted =
        (double)(a->bottom_right ? a->left - a->s_dims[3] + a->s_dims[2] : a->left);
    cd_desc row = index_of(b, a, s, 2), col = row ? index_of(b, a, s, 3) : NULL;
    cd_desc bound = col ? constant(b, HIPDNN_DATA_FLOAT, shifted, "left", a->label) : NULL;
    col = binary(b, HIPDNN_POINTWISE_ADD, HIPDNN_DATA_FLOAT, 3, col, bound, HIPDNN_DATA_FLOAT,
                 a->s_dims, "col+left", a->label);
    cd_desc keep = binary(b, HIPDNN_POINTWISE_CMP_GT, HIPDNN_DATA_BOOLEAN, -1, col, row,
                          HIPDNN_DATA_BOOLEAN, a->s_dims, "keep_left", a->label);
    return mask_out(b, a, s, keep);
}

/* p = softmax(s) in q's type, and stats = max + log(sum): the node's, or a virtual tensor
 * when it makes none (cuDNN frontend's softmax does the same: cuDNN's attention engines
 * recognise the pattern with its LOG and ADD, and found no engine without them on an H200). */
static cd_desc softmax(builder* b, const attention* a, cd_desc s) {
    const char* L = a->label;
    cd_desc m = s ? virt(b, HIPDNN_DATA_FLOAT, a->row_dims, "max", L) : NULL;
    if (!m || !cudnn_reduction(b, HIPDNN_REDUCE_TENSOR_MAX, s, m, L)) return NULL;
    cd_desc sub = binary(b, HIPDNN_POINTWISE_SUB, HIPDNN_DATA_FLOAT, -1, s, m, HIPDNN_DATA_FLOAT,
                         a->s_dims, "s-max", L);
    cd_desc e = unary(b, HIPDNN_POINTWISE_EXP, sub, a->s_dims, "exp", L);
    cd_desc l = e ? virt(b, HIPDNN_DATA_FLOAT, a->row_dims, "sum", L) : NULL;
    if (!l || !cudnn_reduction(b, HIPDNN_REDUCE_TENSOR_ADD, e, l, L)) return NULL;
    cd_desc lg = unary(b, HIPDNN_POINTWISE_LOG, l, a->row_dims, "log_sum", L);
    cd_desc st = !lg      ? NULL
                 : a->stats ? cudnn_tensor(b, a->stats->uid, L)
                            : virt(b, HIPDNN_DATA_FLOAT, a->row_dims, "stats", L);
    if (!st || !cudnn_pointwise(b, HIPDNN_POINTWISE_ADD, HIPDNN_DATA_FLOAT, -1, m, lg, NULL, st, L))
        return NULL;
    return binary(b, HIPDNN_POINTWISE_DIV, HIPDNN_DATA_FLOAT, -1, e, l, a->q->data_type,
                  a->s_dims, "p", L);
}

/* k as k^T: its last two dims and their strides swapped, the same memory and uid. */
static cd_desc k_transposed(builder* b, const attention* a) {
    cd_tensor_spec s = {.uid = a->k->uid, .type = a->k->data_type, .name = a->k->name};
    for (int d = 0; d < 4; ++d) s.dims[d] = a->k->dims[d], s.strides[d] = a->k->strides[d];
    s.dims[2] = a->k->dims[3], s.strides[2] = a->k->strides[3];
    s.dims[3] = a->k->dims[2], s.strides[3] = a->k->strides[2];
    return cudnn_new_tensor(b, &s, a->label);
}

bool cudnn_sdpa_fwd(builder* b, const hipdnnSdkNode* n, const char* label) {
    attention a;
    if (!read_node(b, n, label, &a)) return false;
    cd_desc q = cudnn_tensor(b, a.q->uid, label);
    cd_desc kt = q ? k_transposed(b, &a) : NULL;
    cd_desc s = kt ? virt(b, HIPDNN_DATA_FLOAT, a.s_dims, "s", label) : NULL;
    if (!s || !cudnn_matmul(b, q, kt, s, label)) return false;
    const int ports[2] = {HIPDNN_SDPA_ATTN_SCALE, HIPDNN_SDPA_BIAS};
    const int modes[2] = {HIPDNN_POINTWISE_MUL, HIPDNN_POINTWISE_ADD};
    const char* names[2] = {"s*scale", "s+bias"};
    for (int i = 0; i < 2 && s; ++i) {
        if (n->inputs[ports[i]] == HIPDNN_NO_TENSOR) continue;
        cd_desc t = cudnn_tensor(b, n->inputs[ports[i]], label);
        s = binary(b, modes[i], HIPDNN_DATA_FLOAT, -1, s, t, HIPDNN_DATA_FLOAT, a.s_dims,
                   names[i], label);
    }
    if (s && a.right >= 0) s = right_bound(b, &a, s);
    if (s && a.left > 0) s = left_bound(b, &a, s);
    cd_desc p = softmax(b, &a, s);
    cd_desc v = p ? cudnn_tensor(b, a.v->uid, label) : NULL;
    cd_desc o = v ? cudnn_tensor(b, a.o->uid, label) : NULL;
    return o && cudnn_matmul(b, p, v, o, label);
}

/* ---- for sdpa_backward (cudnn_sdpa_backward.c) ------------------------------------------- */

cd_desc cudnn_sdpa_virtual(builder* b, hipdnnDataType_t type, const int64_t dims[4],
                           const char* name, const char* label) {
    return virt(b, type, dims, name, label);
}

cd_desc cudnn_sdpa_constant(builder* b, hipdnnDataType_t type, double value, const char* name,
                            const char* label) {
    return constant(b, type, value, name, label);
}

cd_desc cudnn_sdpa_binary(builder* b, int mode, cd_desc x, cd_desc operand,
                          hipdnnDataType_t type, const int64_t dims[4], const char* name,
                          const char* label) {
    return binary(b, mode, HIPDNN_DATA_FLOAT, -1, x, operand, type, dims, name, label);
}

cd_desc cudnn_sdpa_band(builder* b, const attention* a, cd_desc s) {
    if (s && a->right >= 0) s = right_bound(b, a, s);
    if (s && a->left > 0) s = left_bound(b, a, s);
    return s;
}

int64_t cudnn_sdpa_shape(attention* a, const hipdnnSdkNode* n) {
    const int64_t bsz = a->q->dims[0], hq = a->q->dims[1], sq = a->q->dims[2];
    const int64_t skv = a->k->dims[2];
    const int64_t s[4] = {bsz, hq, sq, skv}, r[4] = {bsz, hq, sq, 1};
    memcpy(a->s_dims, s, sizeof(s));
    memcpy(a->row_dims, r, sizeof(r));
    a->bottom_right = n->attrs[HIPDNN_SDPA_ALIGNMENT].i[0] == HIPDNN_DIAGONAL_ALIGNMENT_BOTTOM_RIGHT;
    /* bounds past both lengths mask nothing more: clamped, so that they fit cuDNN's int32 */
    const int64_t reach = sq + skv;
    a->left = n->attrs[HIPDNN_SDPA_LEFT_BOUND].i[0];
    a->right = n->attrs[HIPDNN_SDPA_RIGHT_BOUND].i[0];
    if (a->left > reach) a->left = reach;
    if (a->right > reach) a->right = reach;
    return row_without_keys(a);
}
