/* Inference rules of scaled dot-product attention, forward and backward. */
#include "hipdnn/hipdnn_sdk.h"
#include "infer_internal.h"

/* Paged K / V (sdpa_fwd): k and v are caches [blocks, H, block_size, D] read through the
 * page tables (int32 [B, 1, blocks a sequence, 1]), S_kv = max_seq_len_kv. */
static bool check_paged(err_t* e, hipdnnSdkNode* n, hipdnnSdkTensor* const* in,
                        hipdnnSdkTensor* const* tables, const char* label) {
    static const char* const names[2] = {"page_table_k", "page_table_v"};
    const int64_t skv = n->attrs[HIPDNN_SDPA_MAX_SEQ_LEN_KV].i[0];
    char a[200];
    if (!tables || (!tables[0] && !tables[1])) {
        if (skv != 0)
            return fail(e, "%s: max_seq_len_kv is set without page tables (paged attention "
                        "is forward only, with page_table_k and page_table_v)", label);
        return true;
    }
    if (!tables[0] || !tables[1])
        return fail(e, "%s: paged attention needs both page_table_k and page_table_v", label);
    if (skv <= 0)
        return fail(e, "%s: paged attention needs max_seq_len_kv (the keys a sequence may "
                    "hold)", label);
    for (int p = 0; p < 2; ++p) {
        const hipdnnSdkTensor *t = tables[p], *cache = in[1 + p];
        if (t->ndim != 4 || t->dims[0] != in[0]->dims[0] || t->dims[1] != 1 || t->dims[3] != 1 ||
            t->data_type != HIPDNN_DATA_INT32)
            return fail(e, "%s: %s '%s' is %s of %s; a page table is int32 [B, 1, blocks, 1] "
                        "(B = %lld)", label, names[p], t->name, shape_str(t, a, sizeof(a)),
                        hipdnnSdkDataTypeName(t->data_type), (long long)in[0]->dims[0]);
        if (t->dims[2] * cache->dims[2] < skv)
            return fail(e, "%s: %s '%s' holds %lld blocks of %lld keys, fewer than "
                        "max_seq_len_kv %lld", label, names[p], t->name, (long long)t->dims[2],
                        (long long)cache->dims[2], (long long)skv);
    }
    return true;
}

/* Dropout (both ops): the probability in [0, 1), and seed and offset (one int32 / int64
 * value each) both set where it is above 0 or rng_dump is asked for. */
static bool check_dropout(err_t* e, const hipdnnSdkNode* n, const hipdnnSdkTensor* seed,
                          const hipdnnSdkTensor* offset, bool dump, const char* label) {
    const double prob = n->attrs[HIPDNN_SDPA_DROPOUT].d;
    if (!(prob >= 0.0 && prob < 1.0))
        return fail(e, "%s: dropout_probability is %g; it must be in [0, 1)", label, prob);
    if ((prob > 0.0 || dump) && (!seed || !offset))
        return fail(e, "%s: dropout%s needs both seed and offset (one int32 or int64 value "
                    "each)", label, dump ? "'s rng_dump" : "");
    const hipdnnSdkTensor* t[2] = {seed, offset};
    static const char* const names[2] = {"seed", "offset"};
    for (int i = 0; i < 2; ++i) {
        if (!t[i]) continue;
        if (!check_one_value(e, label, names[i], t[i])) return false;
        if (t[i]->data_type != HIPDNN_DATA_INT32 && t[i]->data_type != HIPDNN_DATA_INT64)
            return fail(e, "%s: dropout %s '%s' is %s; it must be int32 or int64", label,
                        names[i], t[i]->name, hipdnnSdkDataTypeName(t[i]->data_type));
    }
    return true;
}

/* Ragged (cuDNN's THD layout): a port's tensor with a ragged offset starts sample b at
 * element offset[b] (int32 / int64 [B + 1, 1, 1, 1], a graph input) instead of at
 * b * strides[0].  Only the token tensors may be ragged (the forward's q, k, v, o; the
 * backward's q, k, v, o, dO, dq, dk, dv: ports below `ins` / `outs`) and the forward's
 * page tables (packed tables: sample b's entries from offset[b]), in memory, with a
 * padding mask (rows past each sample's length belong to the next sample). */
static bool check_ragged(err_t* e, hipdnnSdkGraph* g, const hipdnnSdkNode* n, int ins, int outs,
                         int64_t batch, const char* label) {
    const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(n->kind);
    char a[200];
    for (int p = 0; p < 2 * HIPDNN_MAX_PORTS; ++p) {
        const bool in = p < HIPDNN_MAX_PORTS;
        const int k = in ? p : p - HIPDNN_MAX_PORTS;
        const hipdnnSdkTensor* t = tensor_of(e, g, in ? n->inputs[k] : n->outputs[k]);
        if (!t || !t->has_ragged_offset) continue;
        const char* port = in ? info->inputs[k].name : info->outputs[k].name;
        const bool table = n->kind == HIPDNN_OP_SDPA_FWD && in &&
                           (k == HIPDNN_SDPA_PAGE_TABLE_K || k == HIPDNN_SDPA_PAGE_TABLE_V);
        if (k >= (in ? ins : outs) && !table)
            return fail(e, "%s: %s '%s' has a ragged offset; only the token tensors (q, k, v, "
                        "o%s) may be ragged", label, port, t->name,
                        n->kind == HIPDNN_OP_SDPA_BWD ? ", dO, dq, dk, dv" : ", page tables");
        if (n->attrs[HIPDNN_SDPA_PADDING].i[0] == 0)
            return fail(e, "%s: %s '%s' is ragged but use_padding_mask is not set (ragged "
                        "samples end at seq_len_q / seq_len_kv)", label, port, t->name);
        if (t->is_virtual)
            return fail(e, "%s: %s '%s' is ragged and virtual; a ragged tensor is in memory",
                        label, port, t->name);
        const hipdnnSdkTensor* r = tensor_of(e, g, t->ragged_offset);
        const int64_t want[4] = {batch + 1, 1, 1, 1};
        bool ok = r->ndim == 4 && (r->data_type == HIPDNN_DATA_INT32 ||
                                   r->data_type == HIPDNN_DATA_INT64);
        for (int i = 0; ok && i < 4; ++i) ok = r->dims[i] == want[i];
        if (!ok)
            return fail(e, "%s: %s '%s' has ragged offset '%s' %s of %s; it must be int32 or "
                        "int64 [B + 1, 1, 1, 1] = [%lld, 1, 1, 1]", label, port, t->name,
                        r->name, shape_str(r, a, sizeof(a)),
                        hipdnnSdkDataTypeName(r->data_type), (long long)(batch + 1));
    }
    return true;
}

/* Attention: the shapes of q, k, v and of the optional ports, for sdpa_fwd and
 * sdpa_bwd (whose ports are given by index in `in`: q, k, v, attn_scale, bias,
 * seq_len_q, seq_len_kv; tables: the forward's page tables, NULL for the backward). */
static bool check_sdpa_inputs(err_t* e, hipdnnSdkNode* n, hipdnnSdkTensor* const* in,
                              hipdnnSdkTensor* const* tables, const char* label) {
    static const char* const names[7] = {"q", "k", "v", "attn_scale", "bias", "seq_len_q",
                                         "seq_len_kv"};
    hipdnnSdkTensor *q = in[0], *k = in[1], *v = in[2];
    char a[200], b[200], c[200];
    for (int p = 0; p < 3; ++p)
        if (in[p]->ndim != 4)
            return fail(e, "%s: %s '%s' is %s; it needs rank 4 ([B, H, S, D])", label, names[p],
                        in[p]->name, shape_str(in[p], a, sizeof(a)));
    if (!check_paged(e, n, in, tables, label)) return false;
    const bool paged = tables && tables[0];
    const int64_t skv = paged ? n->attrs[HIPDNN_SDPA_MAX_SEQ_LEN_KV].i[0] : k->dims[2];
    if ((!paged && (k->dims[0] != q->dims[0] || v->dims[0] != q->dims[0])) ||
        k->dims[3] != q->dims[3] || v->dims[2] != k->dims[2])
        return fail(e, "%s: q '%s' %s, k '%s' %s and v '%s' %s do not fit: q [B, H_q, S_q, D], "
                    "k [B, H_k, S_kv, D], v [B, H_v, S_kv, D_v]", label, q->name,
                    shape_str(q, a, sizeof(a)), k->name, shape_str(k, b, sizeof(b)), v->name,
                    shape_str(v, c, sizeof(c)));
    for (int p = 1; p < 3; ++p)
        if (q->dims[1] % in[p]->dims[1] != 0)
            return fail(e, "%s: %s '%s' has %lld heads but q '%s' %lld: the query heads must be "
                        "a multiple (GQA, MQA)", label, names[p], in[p]->name,
                        (long long)in[p]->dims[1], q->name, (long long)q->dims[1]);
    if (in[3] && !check_one_value(e, label, "attn_scale", in[3])) return false;
    if (in[4]) {
        const int64_t want[4] = {q->dims[0], q->dims[1], q->dims[2], skv};
        bool ok = in[4]->ndim == 4;
        for (int i = 0; ok && i < 4; ++i) ok = in[4]->dims[i] == 1 || in[4]->dims[i] == want[i];
        if (!ok)
            return fail(e, "%s: bias '%s' is %s; it must broadcast to [B, H_q, S_q, S_kv] = "
                        "[%lld, %lld, %lld, %lld] (each dim that or 1)", label, in[4]->name,
                        shape_str(in[4], a, sizeof(a)), (long long)want[0], (long long)want[1],
                        (long long)want[2], (long long)want[3]);
    }
    bool padding = n->attrs[HIPDNN_SDPA_PADDING].i[0] != 0;
    for (int p = 5; p < 7; ++p) {
        if (!padding) {
            if (in[p])
                return fail(e, "%s: %s '%s' is set but use_padding_mask is not", label,
                            names[p], in[p]->name);
            continue;
        }
        if (!in[p])
            return fail(e, "%s: use_padding_mask needs %s ([B, 1, 1, 1] of int32)", label,
                        names[p]);
        const int64_t want[4] = {q->dims[0], 1, 1, 1};
        if (!check_shape(e, label, names[p], in[p], 4, want, "a length per sample"))
            return false;
        if (in[p]->data_type != HIPDNN_DATA_INT32 && in[p]->data_type != HIPDNN_DATA_INT64)
            return fail(e, "%s: %s '%s' is %s; sequence lengths are int32 or int64", label,
                        names[p], in[p]->name, hipdnnSdkDataTypeName(in[p]->data_type));
    }
    if (n->compute_type == HIPDNN_DATA_NOT_SET) n->compute_type = HIPDNN_DATA_FLOAT;
    return true;
}

bool infer_sdpa_fwd(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label) {
    hipdnnSdkTensor* in[7];
    for (int p = 0; p < 7; ++p) in[p] = tensor_of(e, g, n->inputs[p]);
    hipdnnSdkTensor* tables[2] = {tensor_of(e, g, n->inputs[HIPDNN_SDPA_PAGE_TABLE_K]),
                                  tensor_of(e, g, n->inputs[HIPDNN_SDPA_PAGE_TABLE_V])};
    if (!check_sdpa_inputs(e, n, in, tables, label)) return false;
    hipdnnSdkTensor *q = in[HIPDNN_SDPA_Q], *v = in[HIPDNN_SDPA_V];
    hipdnnSdkTensor* o = tensor_of(e, g, n->outputs[HIPDNN_SDPA_O]);
    hipdnnSdkTensor* stats = tensor_of(e, g, n->outputs[HIPDNN_SDPA_STATS]);
    const int64_t od[4] = {q->dims[0], q->dims[1], q->dims[2], v->dims[3]};
    const int64_t sd[4] = {q->dims[0], q->dims[1], q->dims[2], 1};
    hipdnnSdkTensor* dump = tensor_of(e, g, n->outputs[HIPDNN_SDPA_RNG_DUMP]);
    if (!check_dropout(e, n, tensor_of(e, g, n->inputs[HIPDNN_SDPA_SEED]),
                       tensor_of(e, g, n->inputs[HIPDNN_SDPA_OFFSET]), dump != NULL, label))
        return false;
    if (!set_output(e, label, "o", o, 4, od, q, o->is_virtual ? n->compute_type : q->data_type))
        return false;
    if (stats && !set_output(e, label, "stats", stats, 4, sd, NULL, HIPDNN_DATA_FLOAT))
        return false;
    if (!check_ragged(e, g, n, 3, 1, q->dims[0], label)) return false;
    if ((in[HIPDNN_SDPA_K]->has_ragged_offset || in[HIPDNN_SDPA_V]->has_ragged_offset) &&
        tables[0])
        return fail(e, "%s: k and v are paged caches: ragged offsets go on their page tables "
                    "(packed tables), not on the caches", label);
    const int64_t skv = n->attrs[HIPDNN_SDPA_MAX_SEQ_LEN_KV].i[0] > 0
                            ? n->attrs[HIPDNN_SDPA_MAX_SEQ_LEN_KV].i[0] : in[HIPDNN_SDPA_K]->dims[2];
    const int64_t dd[4] = {q->dims[0], q->dims[1], q->dims[2], skv};
    if (!dump) return true;
    if (!set_output(e, label, "rng_dump", dump, 4, dd, NULL, HIPDNN_DATA_FLOAT)) return false;
    if (dump->data_type != HIPDNN_DATA_FLOAT)
        return fail(e, "%s: rng_dump '%s' is %s; the dropout mask is float32", label, dump->name,
                    hipdnnSdkDataTypeName(dump->data_type));
    return true;
}

bool infer_sdpa_bwd(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label) {
    hipdnnSdkTensor* all[10];
    for (int p = 0; p < 10; ++p) all[p] = tensor_of(e, g, n->inputs[p]);
    hipdnnSdkTensor* in[7] = {all[HIPDNN_SDPA_BWD_Q], all[HIPDNN_SDPA_BWD_K],
                              all[HIPDNN_SDPA_BWD_V], all[HIPDNN_SDPA_BWD_ATTN_SCALE],
                              all[HIPDNN_SDPA_BWD_BIAS], all[HIPDNN_SDPA_BWD_SEQ_LEN_Q],
                              all[HIPDNN_SDPA_BWD_SEQ_LEN_KV]};
    if (!check_sdpa_inputs(e, n, in, NULL, label) ||
        !check_dropout(e, n, tensor_of(e, g, n->inputs[HIPDNN_SDPA_BWD_SEED]),
                       tensor_of(e, g, n->inputs[HIPDNN_SDPA_BWD_OFFSET]), false, label))
        return false;
    hipdnnSdkTensor *q = in[0], *v = in[2];
    const int64_t od[4] = {q->dims[0], q->dims[1], q->dims[2], v->dims[3]};
    const int64_t sd[4] = {q->dims[0], q->dims[1], q->dims[2], 1};
    if (!check_shape(e, label, "o", all[HIPDNN_SDPA_BWD_O], 4, od, "the forward's output") ||
        !check_shape(e, label, "dO", all[HIPDNN_SDPA_BWD_DO], 4, od, "o's shape") ||
        !check_shape(e, label, "stats", all[HIPDNN_SDPA_BWD_STATS], 4, sd,
                     "a log-sum-exp per query row"))
        return false;
    static const char* const onames[3] = {"dq", "dk", "dv"};
    for (int p = 0; p < 3; ++p) {
        hipdnnSdkTensor* out = tensor_of(e, g, n->outputs[p]);
        if (!set_output(e, label, onames[p], out, 4, in[p]->dims, in[p],
                        out->is_virtual ? n->compute_type : in[p]->data_type))
            return false;
    }
    return check_ragged(e, g, n, HIPDNN_SDPA_BWD_STATS, 3, q->dims[0], label);
}
