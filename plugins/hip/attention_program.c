/* The attention stage: an sdpa_fwd node compiled into an fa_program (fa_program.h), the
 * kernel that runs it chosen, compiled at plan time, and launched.
 *
 * The kernel: tensor cores (FA_MMA) where q, k and v are fp16 or bf16 alike, their head
 * dims multiples of 16, d contiguous and every other stride a multiple of 8 elements, and
 * the build is NVIDIA's; else the general kernel (FA_SIMT), which reads any strides and
 * types.  Pointers are known only at enqueue: q, k or v not 16-byte aligned run the
 * general kernel, compiled then.  What neither kernel runs is declined naming the node. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rowwise.h" /* rwc_storage_of, rwc_find, rwc_tensor_ok */
#include "staged.h"
#include "philox.h" /* philox_threshold (after staged.h: it brings <stdint.h>) */

#define FA_ASSUMED_SMS 132 /* H100 / H200: 8 warps a block where the grid still fills them */

int hipe_fa_threads(const hipe_fa_kernel* k) {
    return k->kind == FA_MMA ? 32 * k->warps : FA_SIMT_THREADS;
}

int hipe_fa_smem(const hipe_fa_kernel* k, const fa_program* p) {
    const int d = (int)p->d, dv = (int)p->dv;
    return k->kind == FA_MMA ? FA_MMA_SMEM(d, dv, k->warps, k->bc) : FA_SIMT_SMEM(d, dv);
}

static int rows_of(const hipe_fa_kernel* k) { return k->kind == FA_MMA ? 16 * k->warps : FA_SIMT_ROWS; }

static void set_grid(fa_program* p, const hipe_fa_kernel* k) {
    p->rows = rows_of(k);
    p->q_blocks = (p->sq + p->rows - 1) / p->rows;
}

bool hipe_fa_rows_aligned(const int64_t* s, int64_t b, int64_t h, int64_t n) {
    return (b == 1 || s[0] % 8 == 0) && (h == 1 || s[1] % 8 == 0) && (n == 1 || s[2] % 8 == 0);
}

static void choose_kernel(const fa_program* p, hipe_fa_kernel* k) {
    memset(k, 0, sizeof(*k));
    k->kind = FA_SIMT; /* paged caches, dropout, ragged: the general kernel alone takes them */
    if (strcmp(hipe_vendor(), "ROCm") == 0 || p->q_dt == PW_F32 || p->block_k > 0 || p->dropout ||
        p->ragged ||
        p->q_dt != p->k_dt ||
        p->q_dt != p->v_dt || p->d % 16 != 0 || p->dv % 16 != 0 || p->q_s[3] != 1 ||
        p->k_s[3] != 1 || p->v_s[3] != 1 || !hipe_fa_rows_aligned(p->q_s, p->b, p->hq, p->sq) ||
        !hipe_fa_rows_aligned(p->k_s, p->b, p->hk, p->skv) ||
        !hipe_fa_rows_aligned(p->v_s, p->b, p->hv, p->skv))
        return;
    const bool wide = p->d > 128 || p->dv > 128;
    const int64_t big_blocks = p->b * p->hq * ((p->sq + 127) / 128);
    *k = (hipe_fa_kernel){.kind = FA_MMA, .dt = p->q_dt, .bc = wide ? 32 : 64,
                          .warps = !wide && big_blocks >= 2 * FA_ASSUMED_SMS ? 8 : 4};
}

/* ---- the node ------------------------------------------------------------------------- */

void hipe_fa_bind(hipe_stage* st, int64_t uid, size_t offset, int32_t scalar_dtype) {
    hipe_bind* b = &st->bind[st->nbind++];
    b->uid = uid;
    b->offset = (uint32_t)offset;
    b->scalar_dtype = scalar_dtype;
}

#define FA(field) offsetof(fa_program, field)

bool hipe_fa_dims4(const hipdnnSdkTensor* t, int64_t a, int64_t b, int64_t c, int64_t d) {
    return t->ndim == 4 && t->dims[0] == a && t->dims[1] == b && t->dims[2] == c && t->dims[3] == d;
}

void hipe_fa_strides4(const hipdnnSdkTensor* t, int64_t* s) {
    for (int i = 0; i < 4; ++i) s[i] = t->dims[i] > 1 ? t->strides[i] : 0;
}

/* q, k and v (ports qp, kp, vp of n): types, shapes and strides into p; false with the
 * reason. */
bool hipe_fa_qkv(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, const int* ports, fa_program* p,
                 const char* label, char* why, size_t len) {
    const hipdnnSdkTensor* q = rwc_find(g, n->inputs[ports[0]]);
    const hipdnnSdkTensor* k = rwc_find(g, n->inputs[ports[1]]);
    const hipdnnSdkTensor* v = rwc_find(g, n->inputs[ports[2]]);
    if (!q || !k || !v) return decline(why, len, "%s: q, k and v must be set", label);
    if (!rwc_tensor_ok(q, label, "q", false, why, len) || !rwc_tensor_ok(k, label, "k", false, why, len) ||
        !rwc_tensor_ok(v, label, "v", false, why, len))
        return false;
    const int64_t paged = n->kind == HIPDNN_OP_SDPA_FWD ? n->attrs[HIPDNN_SDPA_MAX_SEQ_LEN_KV].i[0] : 0;
    if (q->ndim != 4 || k->ndim != 4 || v->ndim != 4 ||
        (!paged && (k->dims[0] != q->dims[0] || v->dims[0] != q->dims[0])) ||
        k->dims[3] != q->dims[3] || v->dims[2] != k->dims[2] ||
        q->dims[1] % k->dims[1] != 0 || q->dims[1] % v->dims[1] != 0)
        return decline(why, len, "%s: q, k, v must be [B, H_q, S_q, D], [B, H_k, S_kv, D], "
                       "[B, H_v, S_kv, D_v] with H_q a multiple of H_k and H_v", label);
    p->b = q->dims[0];
    p->hq = q->dims[1];
    p->sq = q->dims[2];
    p->d = q->dims[3];
    p->hk = k->dims[1];
    p->skv = paged ? paged : k->dims[2];
    p->hv = v->dims[1];
    p->dv = v->dims[3];
    if (p->d > FA_MAX_D || p->dv > FA_MAX_D)
        return decline(why, len, "%s: head dims %lld (q, k) and %lld (v): the hip engine's "
                       "attention kernels take head dims up to %d", label, (long long)p->d,
                       (long long)p->dv, FA_MAX_D);
    if (p->b * p->hq * p->sq > (INT64_C(1) << 31))
        return decline(why, len, "%s: %lld query rows: the hip engine's attention kernels take "
                       "up to 2^31", label, (long long)(p->b * p->hq * p->sq));
    hipe_fa_strides4(q, p->q_s);
    hipe_fa_strides4(k, p->k_s);
    hipe_fa_strides4(v, p->v_s);
    p->q_dt = rwc_storage_of(q->data_type);
    p->k_dt = rwc_storage_of(k->data_type);
    p->v_dt = rwc_storage_of(v->data_type);
    return true;
}

bool hipe_fa_ragged(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, fa_program* p,
                    hipe_stage* st, const char* label, char* why, size_t len) {
    /* port, output?, FA_RAG_* (infer_attention.c allows ragged tensors there alone) */
    static const int fwd[6][3] = {{HIPDNN_SDPA_Q, 0, FA_RAG_Q},
                                  {HIPDNN_SDPA_K, 0, FA_RAG_K},
                                  {HIPDNN_SDPA_V, 0, FA_RAG_V},
                                  {HIPDNN_SDPA_O, 1, FA_RAG_O},
                                  {HIPDNN_SDPA_PAGE_TABLE_K, 0, FA_RAG_PK},
                                  {HIPDNN_SDPA_PAGE_TABLE_V, 0, FA_RAG_PV}};
    static const int bwd[8][3] = {
        {HIPDNN_SDPA_BWD_Q, 0, FA_RAG_Q},   {HIPDNN_SDPA_BWD_K, 0, FA_RAG_K},
        {HIPDNN_SDPA_BWD_V, 0, FA_RAG_V},   {HIPDNN_SDPA_BWD_O, 0, FA_RAG_O},
        {HIPDNN_SDPA_BWD_DO, 0, FA_RAG_DO}, {HIPDNN_SDPA_BWD_DQ, 1, FA_RAG_DQ},
        {HIPDNN_SDPA_BWD_DK, 1, FA_RAG_DK}, {HIPDNN_SDPA_BWD_DV, 1, FA_RAG_DV}};
    const bool backward = n->kind == HIPDNN_OP_SDPA_BWD;
    const int(*map)[3] = backward ? bwd : fwd;
    for (int i = 0; i < (backward ? 8 : 6); ++i) {
        const int64_t uid = map[i][1] ? n->outputs[map[i][0]] : n->inputs[map[i][0]];
        const hipdnnSdkTensor* t = uid == HIPDNN_NO_TENSOR ? NULL : rwc_find(g, uid);
        if (!t || !t->has_ragged_offset) continue;
        const hipdnnSdkTensor* r = rwc_find(g, t->ragged_offset);
        if (!r || r->is_by_value ||
            (r->data_type != HIPDNN_DATA_INT32 && r->data_type != HIPDNN_DATA_INT64))
            return decline(why, len, "%s: '%s' is ragged: its offsets must be int32 or int64 in "
                           "device memory", label, t->name);
        const int k = map[i][2];
        p->rag_dt[k] = r->data_type == HIPDNN_DATA_INT64 ? PW_I64 : PW_I32;
        p->ragged = 1;
        hipe_fa_bind(st, r->uid, FA(rag) + (size_t)k * sizeof(p->rag[0]), -1);
    }
    return true;
}

/* The forward's o and stats: types, shapes and strides into p; false with the reason. */
static bool outputs(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, fa_program* p,
                    const char* label, char* why, size_t len) {
    const hipdnnSdkTensor* o = rwc_find(g, n->outputs[HIPDNN_SDPA_O]);
    const hipdnnSdkTensor* st = rwc_find(g, n->outputs[HIPDNN_SDPA_STATS]);
    if (!o) return decline(why, len, "%s: o must be set", label);
    if (!rwc_tensor_ok(o, label, "o", true, why, len) ||
        (st && !rwc_tensor_ok(st, label, "stats", true, why, len)))
        return false;
    if (!hipe_fa_dims4(o, p->b, p->hq, p->sq, p->dv))
        return decline(why, len, "%s: o must be [B, H_q, S_q, D_v]", label);
    if (st && !hipe_fa_dims4(st, p->b, p->hq, p->sq, 1))
        return decline(why, len, "%s: stats must be [B, H_q, S_q, 1]", label);
    hipe_fa_strides4(o, p->o_s);
    p->o_dt = rwc_storage_of(o->data_type);
    if (st) hipe_fa_stats(st, p);
    return true;
}

void hipe_fa_stats(const hipdnnSdkTensor* st, fa_program* p) {
    int64_t s4[4];
    hipe_fa_strides4(st, s4);
    memcpy(p->stats_s, s4, sizeof(p->stats_s));
    p->stats_dt = rwc_storage_of(st->data_type);
}

/* The optional ports: attn_scale, bias, the lengths; the bounds.  False with the reason. */
bool hipe_fa_options(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, const hipe_fa_ports* ports,
                     fa_program* p, hipe_stage* st, const char* label, char* why, size_t len) {
    const hipdnnSdkTensor* sc = rwc_find(g, n->inputs[ports->scale]);
    p->scale = 1.0f;
    if (sc && (hipdnnSdkElementCount(sc->ndim, sc->dims) != 1 ||
               (!sc->is_by_value && rwc_storage_of(sc->data_type) < 0) ||
               (sc->is_by_value && hipdnnSdkDataTypeSize(sc->data_type) == 0)))
        return decline(why, len, "%s: attn_scale '%s' (uid %lld) must be one value, stored as "
                       "float32, float16 or bfloat16 in device memory or passed by value", label,
                       sc->name, (long long)sc->uid);
    if (sc && sc->is_by_value && sc->has_value)
        p->scale = (float)hipdnnSdkLoadAsDouble(sc->value, sc->data_type, 0);
    else if (sc && sc->is_by_value)
        hipe_fa_bind(st, sc->uid, FA(scale), (int32_t)sc->data_type);
    else if (sc) {
        p->scale_dt = rwc_storage_of(sc->data_type);
        hipe_fa_bind(st, sc->uid, FA(scale_t), -1);
    }
    const hipdnnSdkTensor* bias = rwc_find(g, n->inputs[ports->bias]);
    if (bias) {
        if (!rwc_tensor_ok(bias, label, "bias", false, why, len)) return false;
        const int64_t full[4] = {p->b, p->hq, p->sq, p->skv};
        for (int i = 0; i < 4; ++i)
            if (bias->ndim != 4 || (bias->dims[i] != full[i] && bias->dims[i] != 1))
                return decline(why, len, "%s: bias '%s' does not broadcast to [B, H_q, S_q, S_kv]",
                               label, bias->name);
        hipe_fa_strides4(bias, p->bias_s);
        p->bias_dt = rwc_storage_of(bias->data_type);
        hipe_fa_bind(st, bias->uid, FA(bias), -1);
    }
    const bool padding = n->attrs[HIPDNN_SDPA_PADDING].i[0] != 0;
    for (int port = ports->len_q; port <= ports->len_kv; ++port) {
        const char* name = port == ports->len_q ? "seq_len_q" : "seq_len_kv";
        const hipdnnSdkTensor* t = rwc_find(g, n->inputs[port]);
        if (!padding && t) return decline(why, len, "%s: %s is set but use_padding_mask is not", label, name);
        if (!padding) continue;
        if (!t || !hipe_fa_dims4(t, p->b, 1, 1, 1) || t->is_by_value ||
            (t->data_type != HIPDNN_DATA_INT32 && t->data_type != HIPDNN_DATA_INT64))
            return decline(why, len, "%s: use_padding_mask needs %s as int32 or int64 [B, 1, 1, 1] "
                           "in device memory", label, name);
        const bool q = port == ports->len_q;
        *(q ? &p->len_q_s : &p->len_kv_s) = t->strides[0];
        *(q ? &p->len_q_dt : &p->len_kv_dt) = t->data_type == HIPDNN_DATA_INT64 ? PW_I64 : PW_I32;
        hipe_fa_bind(st, t->uid, q ? FA(len_q) : FA(len_kv), -1);
    }
    p->bottom_right = n->attrs[HIPDNN_SDPA_ALIGNMENT].i[0] == HIPDNN_DIAGONAL_ALIGNMENT_BOTTOM_RIGHT;
    if (n->attrs[HIPDNN_SDPA_ALIBI].i[0])
        for (p->alibi_n = 1; 2 * (int64_t)p->alibi_n <= p->hq;) p->alibi_n *= 2;
    p->left = n->attrs[HIPDNN_SDPA_LEFT_BOUND].i[0];
    p->right = n->attrs[HIPDNN_SDPA_RIGHT_BOUND].i[0];
    if (p->left < 0 || p->right < -1)
        return decline(why, len, "%s: left_bound must be positive (0: none), right_bound at "
                       "least 0 (-1: none)", label);
    return true;
}

bool hipe_fa_dropout(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, int seed, int offset,
                     int dump, fa_program* p, hipe_stage* st, const char* label, char* why,
                     size_t len) {
    const double prob = n->attrs[HIPDNN_SDPA_DROPOUT].d;
    const hipdnnSdkTensor* d = dump >= 0 ? rwc_find(g, n->outputs[dump]) : NULL;
    if (!(prob > 0.0) && !d) return true;
    if (!(prob < 1.0))
        return decline(why, len, "%s: dropout probability %g: it must be in [0, 1)", label, prob);
    p->dropout = prob > 0.0;
    p->drop_threshold = philox_threshold(prob);
    p->drop_scale = (float)(1.0 / (1.0 - prob));
    for (int w = 0; w < 2; ++w) {
        const char* name = w ? "offset" : "seed";
        const hipdnnSdkTensor* t = rwc_find(g, n->inputs[w ? offset : seed]);
        if (!t || hipdnnSdkElementCount(t->ndim, t->dims) != 1 ||
            (t->data_type != HIPDNN_DATA_INT32 && t->data_type != HIPDNN_DATA_INT64))
            return decline(why, len, "%s: dropout needs %s as one int32 or int64 value, by value "
                           "or in device memory", label, name);
        int64_t* value = w ? &p->offset : &p->seed;
        if (t->is_by_value && t->has_value) {
            uint8_t bytes[8];
            memcpy(bytes, t->value, sizeof(bytes));
            int32_t i32;
            memcpy(&i32, bytes, sizeof(i32));
            if (t->data_type == HIPDNN_DATA_INT64) memcpy(value, bytes, sizeof(*value));
            else *value = i32;
        } else if (t->is_by_value) {
            hipe_fa_bind(st, t->uid, w ? FA(offset) : FA(seed), (int32_t)t->data_type | HIPE_BIND_I64);
        } else {
            *(w ? &p->offset_dt : &p->seed_dt) = t->data_type == HIPDNN_DATA_INT64 ? PW_I64 : PW_I32;
            hipe_fa_bind(st, t->uid, w ? FA(offset_t) : FA(seed_t), -1);
        }
    }
    if (!d) return true;
    if (d->data_type != HIPDNN_DATA_FLOAT || !hipe_fa_dims4(d, p->b, p->hq, p->sq, p->skv) ||
        !rwc_tensor_ok(d, label, "rng_dump", true, why, len))
        return decline(why, len, "%s: rng_dump '%s' must be float32 [B, H_q, S_q, S_kv]", label,
                       d->name);
    hipe_fa_strides4(d, p->rng_s);
    hipe_fa_bind(st, d->uid, FA(rng_dump), -1);
    return true;
}

/* Paged K / V: the page tables (int32 [B, 1, blocks, 1] in device memory, covering S_kv)
 * into p, bound; the general kernel reads them (choose_kernel).  False with the reason. */
static bool pages(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, fa_program* p, hipe_stage* st,
                  const char* label, char* why, size_t len) {
    if (n->attrs[HIPDNN_SDPA_MAX_SEQ_LEN_KV].i[0] <= 0) return true;
    for (int t = 0; t < 2; ++t) {
        const hipdnnSdkTensor* table = rwc_find(g, n->inputs[HIPDNN_SDPA_PAGE_TABLE_K + t]);
        const hipdnnSdkTensor* cache = rwc_find(g, n->inputs[t ? HIPDNN_SDPA_V : HIPDNN_SDPA_K]);
        const char* name = t ? "page_table_v" : "page_table_k";
        if (!table || table->is_by_value || table->data_type != HIPDNN_DATA_INT32 ||
            !hipe_fa_dims4(table, p->b, 1, table->ndim == 4 ? table->dims[2] : 0, 1) ||
            table->dims[2] * cache->dims[2] < p->skv)
            return decline(why, len, "%s: paged attention needs %s as int32 [B, 1, blocks, 1] "
                           "in device memory covering max_seq_len_kv", label, name);
        int64_t* s = t ? p->page_v_s : p->page_k_s;
        s[0] = table->strides[0];
        s[1] = table->strides[2];
        *(t ? &p->block_v : &p->block_k) = cache->dims[2];
        *(t ? &p->blocks_v : &p->blocks_k) = cache->dims[0];
        hipe_fa_bind(st, table->uid, t ? FA(page_v) : FA(page_k), -1);
    }
    return true;
}

int hipe_fa_compile(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, int64_t parts_uid,
                    size_t* parts_bytes, hipe_stage* st, char* why, size_t len) {
    char label[160];
    hipdnnSdkFormat(label, sizeof(label), "node '%s' (sdpa)", n->name ? n->name : "");
    if (!rwc_compute_ok(n, label, why, len)) return 0;
    memset(st, 0, sizeof(*st));
    st->kind = HIPE_STAGE_ATTENTION;
    hipe_fa* fa = &st->fa;
    fa_program* p = &fa->prog;
    static const hipe_fa_ports ports = {HIPDNN_SDPA_ATTN_SCALE, HIPDNN_SDPA_BIAS,
                                        HIPDNN_SDPA_SEQ_LEN_Q, HIPDNN_SDPA_SEQ_LEN_KV};
    static const int qkv[3] = {HIPDNN_SDPA_Q, HIPDNN_SDPA_K, HIPDNN_SDPA_V};
    if (!hipe_fa_qkv(g, n, qkv, p, label, why, len) || !outputs(g, n, p, label, why, len) ||
        !hipe_fa_options(g, n, &ports, p, st, label, why, len) ||
        !pages(g, n, p, st, label, why, len) || !hipe_fa_ragged(g, n, p, st, label, why, len) ||
        !hipe_fa_dropout(g, n, HIPDNN_SDPA_SEED, HIPDNN_SDPA_OFFSET, HIPDNN_SDPA_RNG_DUMP, p, st,
                         label, why, len))
        return 0;
    choose_kernel(p, &fa->main);
    set_grid(p, &fa->main);
    const bool decode = fa->main.kind == FA_MMA && hipe_fd_choose(fa, st, parts_uid, parts_bytes);
    hipe_fa_bind(st, n->inputs[HIPDNN_SDPA_Q], FA(q), -1);
    hipe_fa_bind(st, n->inputs[HIPDNN_SDPA_K], FA(k), -1);
    hipe_fa_bind(st, n->inputs[HIPDNN_SDPA_V], FA(v), -1);
    hipe_fa_bind(st, n->outputs[HIPDNN_SDPA_O], FA(o), -1);
    if (n->outputs[HIPDNN_SDPA_STATS] != HIPDNN_NO_TENSOR)
        hipe_fa_bind(st, n->outputs[HIPDNN_SDPA_STATS], FA(stats), -1);
    char heads[48] = "";
    if (p->hk != p->hq || p->hv != p->hq)
        hipdnnSdkFormat(heads, sizeof(heads), " (keys %lld, values %lld)", (long long)p->hk,
                        (long long)p->hv);
    hipdnnSdkFormat(st->what, sizeof(st->what), "sdpa '%s' %lld x %lld heads%s, %lld queries x "
                    "%lld keys, head dim %lld %s", n->name ? n->name : "", (long long)p->b,
                    (long long)p->hq, heads, (long long)p->sq, (long long)p->skv, (long long)p->d,
                    fa->main.kind != FA_MMA ? "general (fp32 FMA)"
                    : decode ? "on tensor cores, decode path (query heads of a key head packed, "
                               "keys split)"
                             : "on tensor cores");
    return 1;
}

/* ---- kernels -------------------------------------------------------------------------- */

bool hipe_fa_build(const hipe_fa* fa, const hipe_fa_kernel* k, int device, void** fn, char* why,
                   size_t len) {
    hipe_rtc_target t;
    if (!hipe_rtc_target_of(device, &t, why, len)) return false;
    char* source = hipe_fa_source(fa, k, t.dialect);
    if (!source) return decline(why, len, "out of memory");
    if (getenv("HIPDNN_HIP_JIT_DUMP")) { /* tests compile both vendors' sources */
        static const char* const part[] = {"fa", "fab_dq", "fab_dkv", "fd_split", "fd_combine"};
        const bool decode = k->part == FA_PART_SPLIT || k->part == FA_PART_COMBINE;
        char name[32];
        snprintf(name, sizeof(name), "%s%s", part[k->part],
                 k->part == FA_PART_COMBINE ? "" : k->kind == FA_MMA ? "_mma" : "_simt");
        hipe_dump_source(name, "cu", source);
        if (!decode) { /* the decode path is NVIDIA's alone */
            const hipe_fa_kernel simt = {.kind = FA_SIMT, .part = k->part};
            char* other = hipe_fa_source(fa, &simt, HIPE_RTC_HIP);
            snprintf(name, sizeof(name), "%s_simt", part[k->part]);
            hipe_dump_source(name, "hip", other);
            free(other);
        }
    }
    const bool ok = hipe_kernel_get_source(source, hipe_fa_entry(k->part), device, fn, why, len);
    free(source);
    return ok;
}

bool hipe_fa_prepare(hipe_fa* fa, int device, char* why, size_t len) {
    if (fa->backward) return hipe_fab_prepare(fa, device, why, len);
    if (fa->decode) return hipe_fd_prepare(fa, device, why, len);
    return hipe_fa_build(fa, &fa->main, device, &fa->fn, why, len);
}

static bool aligned16(const void* p) { return ((uintptr_t)p & 15u) == 0; }

bool hipe_fa_enqueue(hipe_fa* fa, fa_program* prog, int device, void* stream,
                     const char** kernel, char* why, size_t len) {
    if (fa->backward) return hipe_fab_enqueue(fa, prog, device, stream, kernel, why, len);
    hipe_fa_kernel k = fa->main;
    void* fn = fa->fn;
    const bool aligned = aligned16(prog->q) && aligned16(prog->k) && aligned16(prog->v);
    if (fa->decode && aligned) return hipe_fd_enqueue(fa, prog, stream, kernel, why, len);
    if (k.kind == FA_MMA && !aligned) {
        k = (hipe_fa_kernel){.kind = FA_SIMT};
        fn = atomic_load(&fa->simt);
        if (!fn) {
            if (!hipe_fa_build(fa, &k, device, &fn, why, len)) return false;
            atomic_store(&fa->simt, fn);
        }
    }
    set_grid(prog, &k);
    *kernel = k.kind == FA_MMA ? "tensor-core attention" : "general attention";
    return hipe_fa_launch(fn, prog, prog->b * prog->hq * prog->q_blocks, hipe_fa_threads(&k),
                          hipe_fa_smem(&k, prog), stream, why, len);
}
