/* The attention backward stage: an sdpa_bwd node compiled into an fa_program with its
 * backward fields (fa_program.h), its two kernels (fa_bwd_kernels.h) chosen, compiled at
 * plan time and launched in turn: dq (writing delta = rowsum(dO o) to the workspace), then
 * dk and dv, which read it.
 *
 * Tensor cores (FA_MMA) where q, k, v and dO are fp16 or bf16 alike, head dims multiples
 * of 16 up to 128, d contiguous and every other stride a multiple of 8 elements, H_k = H_v
 * (a block then owns one key and one value head), and the build is NVIDIA's; else the
 * general kernels, which read any strides, types, head dims up to 256 and head counts.
 * Pointers known only at enqueue: q, k, v or dO not 16-byte aligned run the general
 * kernels, compiled then.  Nothing is atomic: each gradient element is one thread's sum,
 * in a fixed order (deterministic). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rowwise.h" /* rwc_storage_of, rwc_find, rwc_tensor_ok */
#include "staged.h"

#define FAB_ROCM_SMEM 65536 /* bytes of LDS a block on gfx90a / gfx940 */

int hipe_fab_smem(const hipe_fa_kernel* k, const fa_program* p) {
    const int d = (int)p->d, dv = (int)p->dv;
    if (k->kind != FA_MMA) return FA_BWD_SIMT_SMEM(d, dv);
    return k->part == FA_PART_DQ ? FA_BWD_DQ_SMEM(d, dv, k->warps, k->bc)
                                 : FA_BWD_DKV_SMEM(d, dv, k->warps, k->bc);
}

static void choose_kernels(const fa_program* p, hipe_fa_kernel* dq, hipe_fa_kernel* dkv) {
    *dq = (hipe_fa_kernel){.kind = FA_SIMT, .part = FA_PART_DQ};
    *dkv = (hipe_fa_kernel){.kind = FA_SIMT, .part = FA_PART_DKV};
    if (strcmp(hipe_vendor(), "ROCm") == 0 || p->q_dt == PW_F32 || p->dropout || p->ragged ||
        p->q_dt != p->k_dt ||
        p->q_dt != p->v_dt || p->q_dt != p->do_dt || p->d % 16 != 0 || p->dv % 16 != 0 ||
        p->d > 128 || p->dv > 128 || p->hk != p->hv || p->q_s[3] != 1 || p->k_s[3] != 1 ||
        p->v_s[3] != 1 || p->do_s[3] != 1 || !hipe_fa_rows_aligned(p->q_s, p->b, p->hq, p->sq) ||
        !hipe_fa_rows_aligned(p->k_s, p->b, p->hk, p->skv) ||
        !hipe_fa_rows_aligned(p->v_s, p->b, p->hv, p->skv) ||
        !hipe_fa_rows_aligned(p->do_s, p->b, p->hq, p->sq))
        return;
    /* the other side's tile: 64 rows, 32 where wide heads would spill the accumulators */
    const int bc = p->d > 64 || p->dv > 64 ? 32 : 64;
    *dq = (hipe_fa_kernel){.kind = FA_MMA, .dt = p->q_dt, .warps = 4, .bc = bc, .part = FA_PART_DQ};
    *dkv = (hipe_fa_kernel){.kind = FA_MMA, .dt = p->q_dt, .warps = 4, .bc = bc, .part = FA_PART_DKV};
}

#define FA(field) offsetof(fa_program, field)

/* o, dO, stats and the three gradients: shapes, strides, types into p, bound; false with
 * the reason. */
static bool operands(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, fa_program* p,
                     hipe_stage* st, const char* label, char* why, size_t len) {
    static const char* const in_name[] = {"o", "dO", "stats"}, *const out_name[] = {"dq", "dk", "dv"};
    static const int in_port[] = {HIPDNN_SDPA_BWD_O, HIPDNN_SDPA_BWD_DO, HIPDNN_SDPA_BWD_STATS};
    static const size_t in_at[] = {FA(o), FA(d_o), FA(stats)}, out_at[] = {FA(grad_q), FA(grad_k), FA(grad_v)};
    const int64_t in_dims[3][4] = {{p->b, p->hq, p->sq, p->dv}, {p->b, p->hq, p->sq, p->dv},
                                   {p->b, p->hq, p->sq, 1}};
    const int64_t out_dims[3][4] = {{p->b, p->hq, p->sq, p->d}, {p->b, p->hk, p->skv, p->d},
                                    {p->b, p->hv, p->skv, p->dv}};
    int64_t* const out_s[] = {p->dq_s, p->dk_s, p->dv_s};
    int32_t* const out_dt[] = {&p->dq_dt, &p->dk_dt, &p->dv_dt};
    const hipdnnSdkTensor* t[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 6; ++i) {
        const bool in = i < 3;
        const int64_t* dm = in ? in_dims[i] : out_dims[i - 3];
        const char* name = in ? in_name[i] : out_name[i - 3];
        const hipdnnSdkTensor* x = rwc_find(g, in ? n->inputs[in_port[i]] : n->outputs[i - 3]);
        if (!x) return decline(why, len, "%s: %s must be set", label, name);
        if (!rwc_tensor_ok(x, label, name, !in, why, len)) return false;
        if (!hipe_fa_dims4(x, dm[0], dm[1], dm[2], dm[3]))
            return decline(why, len, "%s: %s '%s' must be [%lld, %lld, %lld, %lld]", label, name,
                           x->name, (long long)dm[0], (long long)dm[1], (long long)dm[2],
                           (long long)dm[3]);
        hipe_fa_bind(st, x->uid, in ? in_at[i] : out_at[i - 3], -1);
        if (in) t[i] = x;
        else {
            hipe_fa_strides4(x, out_s[i - 3]);
            *out_dt[i - 3] = rwc_storage_of(x->data_type);
        }
    }
    hipe_fa_strides4(t[0], p->o_s);
    p->o_dt = rwc_storage_of(t[0]->data_type);
    hipe_fa_strides4(t[1], p->do_s);
    p->do_dt = rwc_storage_of(t[1]->data_type);
    hipe_fa_stats(t[2], p);
    return true;
}

int hipe_fab_compile(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, int64_t parts_uid,
                     size_t* parts_bytes, hipe_stage* st, char* why, size_t len) {
    char label[160];
    hipdnnSdkFormat(label, sizeof(label), "node '%s' (sdpa_backward)", n->name ? n->name : "");
    if (!rwc_compute_ok(n, label, why, len)) return 0;
    memset(st, 0, sizeof(*st));
    st->kind = HIPE_STAGE_ATTENTION;
    hipe_fa* fa = &st->fa;
    fa_program* p = &fa->prog;
    fa->backward = true;
    static const int qkv[3] = {HIPDNN_SDPA_BWD_Q, HIPDNN_SDPA_BWD_K, HIPDNN_SDPA_BWD_V};
    static const hipe_fa_ports ports = {HIPDNN_SDPA_BWD_ATTN_SCALE, HIPDNN_SDPA_BWD_BIAS,
                                        HIPDNN_SDPA_BWD_SEQ_LEN_Q, HIPDNN_SDPA_BWD_SEQ_LEN_KV};
    if (!hipe_fa_qkv(g, n, qkv, p, label, why, len) || !operands(g, n, p, st, label, why, len) ||
        !hipe_fa_options(g, n, &ports, p, st, label, why, len) ||
        !hipe_fa_ragged(g, n, p, st, label, why, len) ||
        !hipe_fa_dropout(g, n, HIPDNN_SDPA_BWD_SEED, HIPDNN_SDPA_BWD_OFFSET, -1, p, st, label, why,
                         len))
        return 0;
    hipe_fa_bind(st, n->inputs[HIPDNN_SDPA_BWD_Q], FA(q), -1);
    hipe_fa_bind(st, n->inputs[HIPDNN_SDPA_BWD_K], FA(k), -1);
    hipe_fa_bind(st, n->inputs[HIPDNN_SDPA_BWD_V], FA(v), -1);
    hipe_fa_bind(st, parts_uid, FA(delta), -1);
    *parts_bytes = (size_t)(p->b * p->hq * p->sq) * sizeof(float);
    choose_kernels(p, &fa->main, &fa->dkv);
    const int smem = hipe_fab_smem(&fa->main, p);
    if (strcmp(hipe_vendor(), "ROCm") == 0 && smem > FAB_ROCM_SMEM)
        return decline(why, len, "%s: head dims %lld and %lld: the general backward kernels need "
                       "%d bytes of shared memory a block, over ROCm's %d", label, (long long)p->d,
                       (long long)p->dv, smem, FAB_ROCM_SMEM);
    char heads[48] = "";
    if (p->hk != p->hq || p->hv != p->hq)
        hipdnnSdkFormat(heads, sizeof(heads), " (keys %lld, values %lld)", (long long)p->hk,
                        (long long)p->hv);
    hipdnnSdkFormat(st->what, sizeof(st->what), "sdpa_backward '%s' %lld x %lld heads%s, %lld "
                    "queries x %lld keys, head dim %lld %s", n->name ? n->name : "",
                    (long long)p->b, (long long)p->hq, heads, (long long)p->sq, (long long)p->skv,
                    (long long)p->d, fa->main.kind == FA_MMA ? "on tensor cores" : "general (fp32 FMA)");
    return 1;
}

/* ---- kernels -------------------------------------------------------------------------- */

bool hipe_fab_prepare(hipe_fa* fa, int device, char* why, size_t len) {
    return hipe_fa_build(fa, &fa->main, device, &fa->fn, why, len) &&
           hipe_fa_build(fa, &fa->dkv, device, &fa->fn_dkv, why, len);
}

static bool aligned16(const void* p) { return ((uintptr_t)p & 15u) == 0; }

/* The general kernel of part k->part: from its slot, else compiled now. */
static void* simt_kernel(hipe_fa* fa, _Atomic(void*)* slot, const hipe_fa_kernel* k, int device,
                         char* why, size_t len) {
    void* fn = atomic_load(slot);
    if (!fn && hipe_fa_build(fa, k, device, &fn, why, len)) atomic_store(slot, fn);
    return fn;
}

bool hipe_fab_enqueue(hipe_fa* fa, fa_program* prog, int device, void* stream,
                      const char** kernel, char* why, size_t len) {
    hipe_fa_kernel dq = fa->main, dkv = fa->dkv;
    void *f_dq = fa->fn, *f_dkv = fa->fn_dkv;
    if (dq.kind == FA_MMA && !(aligned16(prog->q) && aligned16(prog->k) && aligned16(prog->v) &&
                               aligned16(prog->d_o))) {
        dq = (hipe_fa_kernel){.kind = FA_SIMT, .part = FA_PART_DQ};
        dkv = (hipe_fa_kernel){.kind = FA_SIMT, .part = FA_PART_DKV};
        if (!(f_dq = simt_kernel(fa, &fa->simt, &dq, device, why, len)) ||
            !(f_dkv = simt_kernel(fa, &fa->simt_dkv, &dkv, device, why, len)))
            return false;
    }
    const bool mma = dq.kind == FA_MMA;
    prog->rows = mma ? 16 * dq.warps : FA_SIMT_ROWS;
    prog->q_blocks = (prog->sq + prog->rows - 1) / prog->rows;
    prog->keys = mma ? 16 * dkv.warps : FA_BWD_SIMT_KEYS;
    prog->k_blocks = (prog->skv + prog->keys - 1) / prog->keys;
    prog->owner = FA_OWN_KV;
    *kernel = mma ? "tensor-core attention backward" : "general attention backward";
    if (!hipe_fa_launch(f_dq, prog, prog->b * prog->hq * prog->q_blocks, hipe_fa_threads(&dq),
                        hipe_fab_smem(&dq, prog), stream, why, len))
        return false;
    /* H_k = H_v: one walk writes both; else one over key heads, one over value heads */
    const int owners[2] = {prog->hk == prog->hv ? FA_OWN_KV : FA_OWN_K, FA_OWN_V};
    for (int i = 0; i < (prog->hk == prog->hv ? 1 : 2); ++i) {
        prog->owner = owners[i];
        const int64_t heads = owners[i] == FA_OWN_V ? prog->hv : prog->hk;
        if (!hipe_fa_launch(f_dkv, prog, prog->b * heads * prog->k_blocks, hipe_fa_threads(&dkv),
                            hipe_fab_smem(&dkv, prog), stream, why, len))
            return false;
    }
    return true;
}
