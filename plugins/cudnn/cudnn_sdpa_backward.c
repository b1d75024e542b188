/* hipdnn's sdpa_backward node as the graph of cuDNN backend operations that cuDNN
 * frontend builds for its sdpa_backward node (CompositeSDPABackwardNode), the pattern
 * cuDNN's fused attention-backward engines recognise.  With p = exp(s - stats), s the
 * scaled, biased and masked scores of the forward:
 *
 *   sum = rowsum(dO * o) * 1           MUL, REDUCTION ADD, MUL by a by-value 1: fp32, kept
 *                                      in the workspace (it is read across the graph)
 *   s = q k^T [* scale] [+ bias]       matmul (k seen as k^T), MUL, ADD: fp32
 *   s = s - stats, masked, p = exp(s)  SUB, the forward's band masks (cudnn_sdpa.c), EXP
 *   dV = p^T dO                        RESHAPE of p to p^T in q's type, matmul
 *   dP = dO v^T                        matmul (v seen as v^T)
 *   dS = (dP - sum) * p [* scale]      SUB, MUL, MUL: fp32
 *   dK = dS^T q                        RESHAPE of dS to dS^T in q's type, matmul
 *   dQ = dS k                          RESHAPE of k^T back to k (fp32), matmul into an fp32
 *                                      accumulator in the workspace, IDENTITY into dq
 *
 * GQA / MQA (fewer k or v heads than q's) compute dK and dV over q's heads into virtual
 * tensors in q's type, then a REDUCTION ADD over each group of heads, as cuDNN frontend
 * does.  The order, the types of the intermediates and which tensors are virtual are cuDNN
 * frontend's; the two workspace tensors take the first bytes of the workspace the plan asks
 * for (cuDNN frontend's "fe workspace"), which cuDNN zeroes itself from 9.6 on.
 *
 * Declined, naming the node, is what the forward declines (cudnn_sdpa.c: fp32, padding
 * masks, ALiBi, paged K/V, rows without keys), what cuDNN frontend's backward validation
 * refuses for the cuDNN loaded, cuDNN before 9.6 (its dQ accumulator must be zeroed by the
 * caller), s_kv not a multiple of 128 up to cuDNN 9.15 (cuDNN frontend then adds a padding
 * mask of the full lengths, kept in its workspace, which is not translated here), and any
 * parameter or port of sdpa_backward this file does not know (dropout among them). */
#include <string.h>

#include "cudnn.h"

#define decline(why, len, ...) hipdnnSdkDecline(why, len, CUDNN_ENGINE_NAME, __VA_ARGS__)

typedef cd_builder builder;

typedef struct {
    cd_attention a; /* q, k, v, o, stats, the score dims and the band */
    const hipdnnSdkTensor *d_o, *dq, *dk, *dv;
    int64_t scale, bias; /* uids, or HIPDNN_NO_TENSOR */
} backward;

static const hipdnnSdkTensor* port(const builder* b, int64_t uid) {
    return uid == HIPDNN_NO_TENSOR ? NULL : hipdnnSdkGraphFindTensor(b->g, uid);
}

/* ---- what is translated ---------------------------------------------------------------- */

/* Ports and parameters past those this file reads (a later sdpa_backward's: dropout's seed,
 * offset and probability, ...) are declined by the op table's names, so that a graph
 * asking for them never runs without them. */
static bool only_known_features(builder* b, const hipdnnSdkNode* n, const char* label) {
    const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(HIPDNN_OP_SDPA_BWD);
    for (int i = HIPDNN_SDPA_MAX_SEQ_LEN_KV + 1; info && i < info->num_attrs; ++i) {
        const hipdnnOpAttrInfo_ext_t* at = &info->attrs[i];
        bool set = at->kind == HIPDNN_OP_ATTR_DOUBLE && n->attrs[i].d != at->default_value;
        for (int k = 0; at->kind != HIPDNN_OP_ATTR_DOUBLE && k < at->max_count; ++k)
            set = set || n->attrs[i].i[k] != (int64_t)at->default_value;
        if (set)
            return decline(b->why, b->len, "%s: %s is set; cudnn does not translate it yet (the "
                           "hip and reference_cpu engines run it)", label, at->name);
    }
    for (int p = HIPDNN_SDPA_BWD_SEQ_LEN_KV + 1; p < HIPDNN_MAX_PORTS; ++p)
        if (n->inputs[p] != HIPDNN_NO_TENSOR)
            return decline(b->why, b->len, "%s: its %s input; cudnn does not translate it yet",
                           label, info && p < info->num_inputs ? info->inputs[p].name : "extra");
    for (int p = HIPDNN_SDPA_BWD_DV + 1; p < HIPDNN_MAX_PORTS; ++p)
        if (n->outputs[p] != HIPDNN_NO_TENSOR)
            return decline(b->why, b->len, "%s: its %s output; cudnn does not translate it yet",
                           label, info && p < info->num_outputs ? info->outputs[p].name : "extra");
    return true;
}

/* fp16 / bf16 q, k, v, o, dO and dq, dk, dv of one type in memory, fp32 stats in memory,
 * every head dim contiguous (cuDNN frontend's validation). */
static bool check_types(builder* b, const backward* w) {
    const char* L = w->a.label;
    const hipdnnSdkTensor* same[8] = {w->a.q, w->a.k, w->a.v, w->a.o, w->d_o, w->dq, w->dk, w->dv};
    const hipdnnDataType_t t = w->a.q->data_type;
    if (t != HIPDNN_DATA_HALF && t != HIPDNN_DATA_BFLOAT16)
        return decline(b->why, b->len, "%s: 'q' is %s; cuDNN's attention engines take fp16 or "
                       "bf16 (the hip engine runs the others)", L, hipdnnSdkDataTypeName(t));
    for (int i = 0; i < 8; ++i) {
        if (same[i]->data_type != t || same[i]->is_virtual)
            return decline(b->why, b->len, "%s: '%s' is %s%s; cuDNN's attention backward takes "
                           "q, k, v, o, dO and writes dq, dk, dv in memory, all of q's type (%s)",
                           L, same[i]->name, same[i]->is_virtual ? "virtual, " : "",
                           hipdnnSdkDataTypeName(same[i]->data_type), hipdnnSdkDataTypeName(t));
        if (same[i]->strides[3] != 1)
            return decline(b->why, b->len, "%s: '%s' has stride %lld along its head dim; "
                           "cuDNN's attention engines need it 1", L, same[i]->name,
                           (long long)same[i]->strides[3]);
    }
    const hipdnnSdkTensor* st = w->a.stats;
    if (st->data_type != HIPDNN_DATA_FLOAT || st->is_virtual || st->strides[3] != 1)
        return decline(b->why, b->len, "%s: stats '%s' is %s%s with stride %lld along its last "
                       "dim; cuDNN's attention backward reads fp32 stats from memory, stride 1",
                       L, st->name, st->is_virtual ? "virtual, " : "",
                       hipdnnSdkDataTypeName(st->data_type), (long long)st->strides[3]);
    return true;
}

/* What cuDNN frontend's sdpa_backward validation refuses for the cuDNN loaded (whatever the
 * GPU where it asks the GPU: the stricter answer), and what this file does not build. */
static bool frontend_allows(builder* b, const backward* w) {
    const size_t v = g_cd.get_version();
    const cd_attention* a = &w->a;
    const int64_t sq = a->s_dims[2], skv = a->s_dims[3];
    const int64_t d = a->q->dims[3], dv = a->v->dims[3];
    const bool right = a->right >= 0, left = a->left > 0, br = right && a->bottom_right;
    const bool bias = w->bias != HIPDNN_NO_TENSOR;
    const char* why = NULL;
    if (v < 90600)
        return decline(b->why, b->len, "%s: cuDNN %zu.%zu.%zu loaded; before 9.6 cuDNN's "
                       "attention backward wants its dQ accumulator zeroed by the caller, which "
                       "cudnn does not do (the hip engine runs it)", a->label, v / 10000,
                       v / 100 % 100, v % 100);
    if (v == 91000 || v == 91001)
        why = "cuDNN 9.10.0 and 9.10.1 have known bugs in attention backward";
    else if (sq == 1 && skv == 1)
        why = "s_q = s_kv = 1";
    else if (d % 8 || dv % 8 || d > 256 || dv > 256)
        why = "head dims that are not multiples of 8 or are above 256";
    else if (v >= 91100 && v < 91300 && d > 128 && d <= 192 && dv > 64 && dv <= 128 &&
             dv != 128 && d != 192)
        why = "a head dim in (128, 192] with d_v in (64, 128) other than 192 / 128 on cuDNN "
              "9.11 and 9.12 (on Hopper)";
    else if (v == 91400 && skv > 1024 && left && !right)
        why = "a left bound without a right bound and s_kv > 1024 on cuDNN 9.14.0 (a known bug)";
    else if (br && sq > skv)
        why = "a bottom-right causal mask with s_q > s_kv";
    else if (br && bias)
        why = "a bottom-right causal mask with a bias";
    else if (left && sq > skv)
        why = "a left bound with s_q > s_kv";
    else if (left && br && sq == skv && v <= 90900)
        why = "a left bound with a bottom-right causal mask and s_q == s_kv up to cuDNN 9.9 "
              "(on Hopper)";
    else if (left && v < 91002 && (!right || bias))
        why = "a left bound without a right bound, or with a bias, before cuDNN 9.10.2";
    if (why)
        return decline(b->why, b->len, "%s: %s; cuDNN frontend refuses it (cuDNN %zu.%zu.%zu "
                       "loaded; the hip engine runs it)", a->label, why, v / 10000,
                       v / 100 % 100, v % 100);
    if (v <= 91500 && skv % 128)
        return decline(b->why, b->len, "%s: s_kv %lld is not a multiple of 128; up to cuDNN "
                       "9.15 cuDNN frontend then adds a padding mask of the full lengths, which "
                       "cudnn does not translate (cuDNN %zu.%zu.%zu loaded; the hip engine runs "
                       "it)", a->label, (long long)skv, v / 10000, v / 100 % 100, v % 100);
    return true;
}

/* The node's tensors and band into w; false, naming the node, where it is not translated. */
static bool read_node(builder* b, const hipdnnSdkNode* n, const char* label, backward* w) {
    memset(w, 0, sizeof(*w));
    cd_attention* a = &w->a;
    a->label = label;
    a->q = port(b, n->inputs[HIPDNN_SDPA_BWD_Q]);
    a->k = port(b, n->inputs[HIPDNN_SDPA_BWD_K]);
    a->v = port(b, n->inputs[HIPDNN_SDPA_BWD_V]);
    a->o = port(b, n->inputs[HIPDNN_SDPA_BWD_O]);
    a->stats = port(b, n->inputs[HIPDNN_SDPA_BWD_STATS]);
    w->d_o = port(b, n->inputs[HIPDNN_SDPA_BWD_DO]);
    w->dq = port(b, n->outputs[HIPDNN_SDPA_BWD_DQ]);
    w->dk = port(b, n->outputs[HIPDNN_SDPA_BWD_DK]);
    w->dv = port(b, n->outputs[HIPDNN_SDPA_BWD_DV]);
    w->scale = n->inputs[HIPDNN_SDPA_BWD_ATTN_SCALE];
    w->bias = n->inputs[HIPDNN_SDPA_BWD_BIAS];
    const hipdnnSdkTensor* all[9] = {a->q, a->k, a->v, a->o, a->stats, w->d_o, w->dq, w->dk, w->dv};
    bool rank4 = b->rank == 4;
    for (int i = 0; i < 9; ++i) rank4 = rank4 && all[i] && all[i]->ndim == 4;
    if (!rank4)
        return decline(b->why, b->len, "%s: cudnn translates sdpa_backward of rank-4 tensors in "
                       "a graph of rank-4 tensors (this one has rank %d)", label, b->rank);
    for (int i = 0; i < 9; ++i) /* cuDNN has them (RAGGED_OFFSET_DESC); not translated yet */
        if (all[i]->has_ragged_offset)
            return decline(b->why, b->len, "%s: '%s' is ragged (a ragged offset); cudnn does "
                           "not translate ragged tensors yet (the hip and reference_cpu "
                           "engines run them)", label, all[i]->name);
    if (n->compute_type != HIPDNN_DATA_FLOAT && n->compute_type != HIPDNN_DATA_NOT_SET)
        return decline(b->why, b->len, "%s: compute type %s; cuDNN's attention computes fp32",
                       label, hipdnnSdkDataTypeName(n->compute_type));
    if (!only_known_features(b, n, label) || !check_types(b, w)) return false;
    if (n->attrs[HIPDNN_SDPA_ALIBI].i[0])
        return decline(b->why, b->len, "%s: an ALiBi mask; cudnn does not translate it yet "
                       "(the hip and reference_cpu engines run it)", label);
    if (n->attrs[HIPDNN_SDPA_MAX_SEQ_LEN_KV].i[0])
        return decline(b->why, b->len, "%s: paged K/V caches; cudnn does not translate them",
                       label);
    if (n->attrs[HIPDNN_SDPA_PADDING].i[0])
        return decline(b->why, b->len, "%s: a padding mask; cudnn does not translate it for "
                       "sdpa_backward (cuDNN leaves the padded rows of the forward "
                       "unspecified; the hip engine runs it)", label);
    const int64_t row = cudnn_sdpa_shape(a, n), sq = a->s_dims[2], skv = a->s_dims[3];
    if (row >= 0)
        return decline(b->why, b->len, "%s: its mask leaves query row %lld no key (s_q %lld, "
                       "s_kv %lld); hipdnn's gradients of such a row are 0, which cuDNN's "
                       "attention does not promise (the hip engine runs it)", label,
                       (long long)row, (long long)sq, (long long)skv);
    return frontend_allows(b, w);
}

/* ---- the operations ------------------------------------------------------------------------ */

/* A tensor of the translation's own: dims and strides given. */
static cd_desc made(builder* b, hipdnnDataType_t type, const int64_t dims[4],
                    const int64_t strides[4], bool in_workspace, const char* name,
                    const char* label) {
    cd_tensor_spec s = {.type = type, .is_virtual = !in_workspace, .in_workspace = in_workspace,
                        .name = name};
    memcpy(s.dims, dims, 4 * sizeof(int64_t));
    memcpy(s.strides, strides, 4 * sizeof(int64_t));
    return cudnn_new_tensor(b, &s, label);
}

static void packed(const int64_t dims[4], int64_t strides[4]) {
    int64_t stride = 1;
    for (int d = 3; d >= 0; --d) strides[d] = stride, stride *= dims[d];
}

/* Graph tensor t seen with its last two dims (and their strides) swapped: k^T, v^T. */
static cd_desc transposed(builder* b, const hipdnnSdkTensor* t, const char* label) {
    cd_tensor_spec s = {.uid = t->uid, .type = t->data_type, .name = t->name};
    for (int d = 0; d < 4; ++d) s.dims[d] = t->dims[d], s.strides[d] = t->strides[d];
    s.dims[2] = t->dims[3], s.strides[2] = t->strides[3];
    s.dims[3] = t->dims[2], s.strides[3] = t->strides[2];
    return cudnn_new_tensor(b, &s, label);
}

/* x [B, H_q, S_q, S_kv] as its transpose [B, H_q, S_kv, S_q] in q's type (p^T, dS^T). */
static cd_desc transpose_scores(builder* b, const backward* w, cd_desc x, const char* name) {
    const int64_t* s = w->a.s_dims;
    const int64_t dims[4] = {s[0], s[1], s[3], s[2]};
    const int64_t strides[4] = {s[1] * s[2] * s[3], s[2] * s[3], 1, s[3]};
    cd_desc y = x ? made(b, w->a.q->data_type, dims, strides, false, name, w->a.label) : NULL;
    return y && cudnn_reshape(b, x, y, w->a.label) ? y : NULL;
}

/* grad = a bb into out; for fewer heads than q's (GQA / MQA), over q's heads into a virtual
 * tensor in q's type, then summed over each group of heads. */
static bool gradient(builder* b, const backward* w, cd_desc a, cd_desc bb,
                     const hipdnnSdkTensor* out, const char* name) {
    const char* L = w->a.label;
    cd_desc o = cudnn_tensor(b, out->uid, L);
    if (!o) return false;
    if (out->dims[1] == w->a.q->dims[1]) return cudnn_matmul(b, a, bb, o, L) != NULL;
    const int64_t dims[4] = {out->dims[0], w->a.q->dims[1], out->dims[2], out->dims[3]};
    int64_t strides[4];
    packed(dims, strides);
    cd_desc full = made(b, w->a.q->data_type, dims, strides, false, name, L);
    return full && cudnn_matmul(b, a, bb, full, L) &&
           cudnn_reduction(b, HIPDNN_REDUCE_TENSOR_ADD, full, o, L);
}

/* sum = rowsum(dO * o) * 1, fp32 in the workspace. */
static cd_desc softmax_sum(builder* b, const backward* w, cd_desc d_o) {
    const char* L = w->a.label;
    const int64_t *s = w->a.s_dims, dv = w->a.v->dims[3];
    const int64_t dims[4] = {s[0], s[1], s[2], dv};
    const int64_t strides[4] = {s[1] * s[2] * dv, s[2] * dv, s[1] * dv, 1}; /* cuDNN FE's */
    cd_desc o = d_o ? cudnn_tensor(b, w->a.o->uid, L) : NULL;
    cd_desc prod = o ? made(b, HIPDNN_DATA_FLOAT, dims, strides, false, "dO*o", L) : NULL;
    if (!prod || !cudnn_pointwise(b, HIPDNN_POINTWISE_MUL, HIPDNN_DATA_FLOAT, -1, d_o, o, NULL,
                                  prod, L))
        return NULL;
    cd_desc row = cudnn_sdpa_virtual(b, HIPDNN_DATA_FLOAT, w->a.row_dims, "rowsum", L);
    if (!row || !cudnn_reduction(b, HIPDNN_REDUCE_TENSOR_ADD, prod, row, L)) return NULL;
    cd_desc one = cudnn_sdpa_constant(b, HIPDNN_DATA_FLOAT, 1.0, "one", L);
    int64_t row_strides[4];
    packed(w->a.row_dims, row_strides);
    cd_desc sum = one ? made(b, HIPDNN_DATA_FLOAT, w->a.row_dims, row_strides, true,
                             "softmax_sum", L) : NULL;
    return sum && cudnn_pointwise(b, HIPDNN_POINTWISE_MUL, HIPDNN_DATA_FLOAT, -1, row, one, NULL,
                                  sum, L) ? sum : NULL;
}

/* p = exp(q k^T [* scale] [+ bias] - stats), masked. */
static cd_desc probabilities(builder* b, const backward* w, cd_desc q, cd_desc kt) {
    const char* L = w->a.label;
    const int64_t* sd = w->a.s_dims;
    cd_desc s = q && kt ? cudnn_sdpa_virtual(b, HIPDNN_DATA_FLOAT, sd, "s", L) : NULL;
    if (!s || !cudnn_matmul(b, q, kt, s, L)) return NULL;
    if (w->scale != HIPDNN_NO_TENSOR)
        s = cudnn_sdpa_binary(b, HIPDNN_POINTWISE_MUL, s, cudnn_tensor(b, w->scale, L),
                              HIPDNN_DATA_FLOAT, sd, "s*scale", L);
    if (s && w->bias != HIPDNN_NO_TENSOR)
        s = cudnn_sdpa_binary(b, HIPDNN_POINTWISE_ADD, s, cudnn_tensor(b, w->bias, L),
                              HIPDNN_DATA_FLOAT, sd, "s+bias", L);
    if (s)
        s = cudnn_sdpa_binary(b, HIPDNN_POINTWISE_SUB, s, cudnn_tensor(b, w->a.stats->uid, L),
                              HIPDNN_DATA_FLOAT, sd, "s-stats", L);
    s = cudnn_sdpa_band(b, &w->a, s);
    cd_desc p = s ? cudnn_sdpa_virtual(b, HIPDNN_DATA_FLOAT, sd, "p", L) : NULL;
    return p && cudnn_pointwise(b, HIPDNN_POINTWISE_EXP, HIPDNN_DATA_FLOAT, -1, s, NULL, NULL, p,
                                L) ? p : NULL;
}

/* dS = (dO v^T - sum) * p [* scale], fp32. */
static cd_desc score_gradient(builder* b, const backward* w, cd_desc d_o, cd_desc sum,
                              cd_desc p) {
    const char* L = w->a.label;
    const int64_t* sd = w->a.s_dims;
    cd_desc vt = transposed(b, w->a.v, L);
    cd_desc dp = vt ? cudnn_sdpa_virtual(b, HIPDNN_DATA_FLOAT, sd, "dP", L) : NULL;
    if (!dp || !cudnn_matmul(b, d_o, vt, dp, L)) return NULL;
    cd_desc ds = cudnn_sdpa_binary(b, HIPDNN_POINTWISE_SUB, dp, sum, HIPDNN_DATA_FLOAT, sd,
                                   "dP-sum", L);
    ds = cudnn_sdpa_binary(b, HIPDNN_POINTWISE_MUL, ds, p, HIPDNN_DATA_FLOAT, sd, "dS", L);
    if (ds && w->scale != HIPDNN_NO_TENSOR)
        ds = cudnn_sdpa_binary(b, HIPDNN_POINTWISE_MUL, ds, cudnn_tensor(b, w->scale, L),
                               HIPDNN_DATA_FLOAT, sd, "dS*scale", L);
    return ds;
}

/* dq = dS k, through k^T's reshape back to k (fp32, as cuDNN frontend's reshape infers it)
 * and an fp32 accumulator in the workspace. */
static bool query_gradient(builder* b, const backward* w, cd_desc ds, cd_desc kt) {
    const char* L = w->a.label;
    const hipdnnSdkTensor* k = w->a.k;
    const int64_t kdims[4] = {k->dims[0], k->dims[1], k->dims[2], k->dims[3]};
    const int64_t kstrides[4] = {k->strides[0], k->strides[1], k->strides[2], k->strides[3]};
    cd_desc kv = made(b, HIPDNN_DATA_FLOAT, kdims, kstrides, false, "k", L);
    if (!kv || !cudnn_reshape(b, kt, kv, L)) return false;
    const int64_t dims[4] = {w->a.q->dims[0], w->a.q->dims[1], w->a.q->dims[2], w->a.q->dims[3]};
    int64_t strides[4];
    packed(dims, strides);
    cd_desc acc = made(b, HIPDNN_DATA_FLOAT, dims, strides, true, "dQ_accum", L);
    cd_desc dq = acc ? cudnn_tensor(b, w->dq->uid, L) : NULL;
    return dq && cudnn_matmul(b, ds, kv, acc, L) &&
           cudnn_pointwise(b, HIPDNN_POINTWISE_IDENTITY, HIPDNN_DATA_FLOAT, -1, acc, NULL, NULL,
                           dq, L);
}

bool cudnn_sdpa_bwd(builder* b, const hipdnnSdkNode* n, const char* label) {
    backward w;
    if (!read_node(b, n, label, &w)) return false;
    cd_desc d_o = cudnn_tensor(b, w.d_o->uid, label);
    cd_desc sum = d_o ? softmax_sum(b, &w, d_o) : NULL;
    cd_desc q = sum ? cudnn_tensor(b, w.a.q->uid, label) : NULL;
    cd_desc kt = q ? transposed(b, w.a.k, label) : NULL; /* k's one descriptor, as k^T */
    cd_desc p = kt ? probabilities(b, &w, q, kt) : NULL;
    cd_desc pt = transpose_scores(b, &w, p, "p^T");
    if (!pt || !gradient(b, &w, pt, d_o, w.dv, "dV_fullhead")) return false;
    cd_desc ds = score_gradient(b, &w, d_o, sum, p);
    cd_desc dst = transpose_scores(b, &w, ds, "dS^T");
    return dst && gradient(b, &w, dst, q, w.dk, "dK_fullhead") &&
           query_gradient(b, &w, ds, kt);
}
