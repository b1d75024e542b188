/* A cuBLASLt plan for one bl_problem: the matmul descriptor (compute type, transposes,
 * epilogue), the three matrix layouts, and the algorithms cuBLASLt's heuristic offers for
 * them within BLASLT_MAX_WORKSPACE.
 *
 * The heuristic only offers algorithms that work with pointers as aligned as the
 * preference says (cuBLASLt assumes 256 bytes unless told), and the pointers are only known
 * when the plan runs.  So the plan asks twice: for 16-byte aligned pointers (any tensor
 * that starts its allocation; the ALGORITHM knob chooses among these) and for pointers
 * aligned only to their element (a view that starts inside one), and EnqueueOpGraph takes
 * whichever the pointers allow.  The bias and aux pointers count too: the heuristic reads
 * their values (never what they point to) for their alignment, so a placeholder with that
 * alignment stands in for each while asking. */
#include <string.h>

#include "blaslt.h"

#define decline(why, len, ...) hipdnnSdkDecline(why, len, BLASLT_ENGINE_NAME, __VA_ARGS__)

static bool lt_call(bl_status st, const char* call, char* why, size_t len) {
    if (st == BL_STATUS_SUCCESS) return true;
    char text[96];
    return decline(why, len, "%s: %s", call, blaslt_status_text(st, text, sizeof(text)));
}

static bool make_layout(const bl_matrix* m, int32_t batch, bl_layout* out, char* why,
                        size_t len) {
    if (!lt_call(g_lt.layout_create(out, m->type, m->rows, m->cols, m->ld),
                 "cublasLtMatrixLayoutCreate", why, len))
        return false;
    if (batch == 1) return true;
    return lt_call(g_lt.layout_set(*out, BL_LAYOUT_BATCH_COUNT, &batch, sizeof(batch)),
                   "cublasLtMatrixLayoutSetAttribute(BATCH_COUNT)", why, len) &&
           lt_call(g_lt.layout_set(*out, BL_LAYOUT_STRIDED_BATCH_OFFSET, &m->batch_stride,
                                   sizeof(m->batch_stride)),
                   "cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)", why, len);
}

/* The aux matrix's leading dimension and batch stride (its pointer is set per run). */
static bool aux_attrs(const bl_problem* p, bl_plan* plan, char* why, size_t len) {
    if (p->aux.uid == HIPDNN_NO_TENSOR) return true;
    return lt_call(g_lt.desc_set(plan->desc, BL_DESC_EPILOGUE_AUX_LD, &p->aux.ld,
                                 sizeof(p->aux.ld)),
                   "cublasLtMatmulDescSetAttribute(EPILOGUE_AUX_LD)", why, len) &&
           (p->batch == 1 ||
            lt_call(g_lt.desc_set(plan->desc, BL_DESC_EPILOGUE_AUX_BATCH_STRIDE,
                                  &p->aux.batch_stride, sizeof(p->aux.batch_stride)),
                    "cublasLtMatmulDescSetAttribute(EPILOGUE_AUX_BATCH_STRIDE)", why, len));
}

static bool make_desc(const bl_problem* p, bl_plan* plan, char* why, size_t len) {
    const int32_t ta = p->a.op, tb = p->b.op;
    const uint32_t epilogue = p->epilogue;
    return lt_call(g_lt.desc_create(&plan->desc, plan->compute, BL_R_32F),
                   "cublasLtMatmulDescCreate", why, len) &&
           lt_call(g_lt.desc_set(plan->desc, BL_DESC_TRANSA, &ta, sizeof(ta)),
                   "cublasLtMatmulDescSetAttribute(TRANSA)", why, len) &&
           lt_call(g_lt.desc_set(plan->desc, BL_DESC_TRANSB, &tb, sizeof(tb)),
                   "cublasLtMatmulDescSetAttribute(TRANSB)", why, len) &&
           lt_call(g_lt.desc_set(plan->desc, BL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)),
                   "cublasLtMatmulDescSetAttribute(EPILOGUE)", why, len) &&
           aux_attrs(p, plan, why, len);
}

/* The heuristic's algorithms for pointers aligned to in_align (A, B) and out_align (C, D,
 * bias) bytes; *n of them in res (0 when it offers none). */
static bool ask(bl_lt lt, const bl_problem* p, bl_plan* plan, uint32_t in_align,
                uint32_t out_align, bl_heuristic* res, int* n, char* why, size_t len) {
    *n = 0;
    bl_pref pref = NULL;
    const uint64_t max_ws = BLASLT_MAX_WORKSPACE;
    bool ok = lt_call(g_lt.pref_create(&pref), "cublasLtMatmulPreferenceCreate", why, len);
    const struct {
        int attr;
        uint32_t value;
    } align[] = {{BL_PREF_MIN_ALIGNMENT_A, in_align}, {BL_PREF_MIN_ALIGNMENT_B, in_align},
                 {BL_PREF_MIN_ALIGNMENT_C, out_align}, {BL_PREF_MIN_ALIGNMENT_D, out_align}};
    ok = ok && lt_call(g_lt.pref_set(pref, BL_PREF_MAX_WORKSPACE_BYTES, &max_ws, sizeof(max_ws)),
                       "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)", why, len);
    for (size_t i = 0; ok && i < sizeof(align) / sizeof(align[0]); ++i)
        ok = lt_call(g_lt.pref_set(pref, align[i].attr, &align[i].value, sizeof(uint32_t)),
                     "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT)", why, len);
    const void* placeholder = (const void*)(uintptr_t)out_align;
    if (ok && p->bias_uid != HIPDNN_NO_TENSOR)
        ok = lt_call(g_lt.desc_set(plan->desc, BL_DESC_BIAS_POINTER, &placeholder,
                                   sizeof(placeholder)),
                     "cublasLtMatmulDescSetAttribute(BIAS_POINTER)", why, len);
    if (ok && p->aux.uid != HIPDNN_NO_TENSOR)
        ok = lt_call(g_lt.desc_set(plan->desc, BL_DESC_EPILOGUE_AUX_POINTER, &placeholder,
                                   sizeof(placeholder)),
                     "cublasLtMatmulDescSetAttribute(EPILOGUE_AUX_POINTER)", why, len);
    if (ok) {
        const bl_status st = g_lt.heuristic(lt, plan->desc, plan->a, plan->b, plan->d, plan->d,
                                            pref, BLASLT_MAX_ALGOS, res, n);
        if (st != BL_STATUS_SUCCESS) *n = 0; /* NOT_SUPPORTED: no algorithm at all */
        int kept = 0;
        for (int i = 0; i < *n && i < BLASLT_MAX_ALGOS; ++i)
            if (res[i].state == BL_STATUS_SUCCESS) res[kept++] = res[i];
        *n = kept;
    }
    if (pref) g_lt.pref_destroy(pref);
    return ok;
}

bool blaslt_plan_make(bl_lt lt, const bl_problem* p, int index, bool tf32, bl_plan* plan,
                      char* why, size_t len) {
    memset(plan, 0, sizeof(*plan));
    plan->compute = tf32 && p->fp32_inputs ? BL_COMPUTE_32F_FAST_TF32 : BL_COMPUTE_32F;
    if (!make_desc(p, plan, why, len) || !make_layout(&p->a, p->batch, &plan->a, why, len) ||
        !make_layout(&p->b, p->batch, &plan->b, why, len) ||
        !make_layout(&p->d, p->batch, &plan->d, why, len))
        return false;
    bl_heuristic res[BLASLT_MAX_ALGOS];
    int n = 0;
    if (!ask(lt, p, plan, 16, 16, res, &n, why, len)) return false;
    if (n == 0)
        return decline(why, len, "cuBLASLt's heuristic offers no algorithm for %s within %u "
                       "MiB of workspace", p->what, BLASLT_MAX_WORKSPACE >> 20);
    if (index >= n)
        return decline(why, len, "knob %d (algorithm) = %d, but cuBLASLt's heuristic offers %d "
                       "algorithm%s for %s (0 to %d)", BLASLT_KNOB_ALGORITHM, index, n,
                       n == 1 ? "" : "s", p->what, n - 1);
    plan->offered = n;
    plan->algo[0] = res[index].algo;
    plan->have[0] = true;
    plan->workspace = res[index].workspace_size;
    if (!ask(lt, p, plan, (uint32_t)p->in_size, (uint32_t)p->out_size, res, &n, why, len))
        return false;
    if (n > 0) { /* its best: the knob chooses among the aligned ones */
        plan->algo[1] = res[0].algo;
        plan->have[1] = true;
        if (res[0].workspace_size > plan->workspace) plan->workspace = res[0].workspace_size;
    }
    return true;
}

void blaslt_plan_free(bl_plan* plan) {
    if (plan->a) g_lt.layout_destroy(plan->a);
    if (plan->b) g_lt.layout_destroy(plan->b);
    if (plan->d) g_lt.layout_destroy(plan->d);
    if (plan->desc) g_lt.desc_destroy(plan->desc);
    memset(plan, 0, sizeof(*plan));
}
