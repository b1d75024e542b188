/* Inference rules of scaled dot-product attention, forward and backward. */
#include "hipdnn/hipdnn_sdk.h"
#include "infer_internal.h"

/* Attention: the shapes of q, k, v and of the optional ports, for sdpa_fwd and
 * sdpa_bwd (whose ports are given by index in `in`: q, k, v, attn_scale, bias,
 * seq_len_q, seq_len_kv). */
static bool check_sdpa_inputs(err_t* e, hipdnnSdkNode* n, hipdnnSdkTensor* const* in,
                              const char* label) {
    static const char* const names[7] = {"q", "k", "v", "attn_scale", "bias", "seq_len_q",
                                         "seq_len_kv"};
    hipdnnSdkTensor *q = in[0], *k = in[1], *v = in[2];
    char a[200], b[200], c[200];
    for (int p = 0; p < 3; ++p)
        if (in[p]->ndim != 4)
            return fail(e, "%s: %s '%s' is %s; it needs rank 4 ([B, H, S, D])", label, names[p],
                        in[p]->name, shape_str(in[p], a, sizeof(a)));
    if (k->dims[0] != q->dims[0] || v->dims[0] != q->dims[0] || k->dims[3] != q->dims[3] ||
        v->dims[2] != k->dims[2])
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
        const int64_t want[4] = {q->dims[0], q->dims[1], q->dims[2], k->dims[2]};
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
    if (!check_sdpa_inputs(e, n, in, label)) return false;
    hipdnnSdkTensor *q = in[HIPDNN_SDPA_Q], *v = in[HIPDNN_SDPA_V];
    hipdnnSdkTensor* o = tensor_of(e, g, n->outputs[HIPDNN_SDPA_O]);
    hipdnnSdkTensor* stats = tensor_of(e, g, n->outputs[HIPDNN_SDPA_STATS]);
    const int64_t od[4] = {q->dims[0], q->dims[1], q->dims[2], v->dims[3]};
    const int64_t sd[4] = {q->dims[0], q->dims[1], q->dims[2], 1};
    if (!set_output(e, label, "o", o, 4, od, q, o->is_virtual ? n->compute_type : q->data_type))
        return false;
    return !stats || set_output(e, label, "stats", stats, 4, sd, NULL, HIPDNN_DATA_FLOAT);
}

bool infer_sdpa_bwd(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label) {
    hipdnnSdkTensor* all[10];
    for (int p = 0; p < 10; ++p) all[p] = tensor_of(e, g, n->inputs[p]);
    hipdnnSdkTensor* in[7] = {all[HIPDNN_SDPA_BWD_Q], all[HIPDNN_SDPA_BWD_K],
                              all[HIPDNN_SDPA_BWD_V], all[HIPDNN_SDPA_BWD_ATTN_SCALE],
                              all[HIPDNN_SDPA_BWD_BIAS], all[HIPDNN_SDPA_BWD_SEQ_LEN_Q],
                              all[HIPDNN_SDPA_BWD_SEQ_LEN_KV]};
    if (!check_sdpa_inputs(e, n, in, label)) return false;
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
    return true;
}
