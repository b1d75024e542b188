/* Running a graph cut into stages (staged.h): the kernel each row-wise or pooling stage
 * planned for, the others an enqueue's pointers may need, and enqueueing every stage in
 * order with its pointers and runtime scalars set. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "staged_graph.h"

/* ---- running --------------------------------------------------------------------------------- */

static const hipdnnPluginTensorBuffer_t* find_buffer(const hipdnnPluginTensorBuffer_t* b,
                                                     uint32_t n, int64_t uid) {
    for (uint32_t i = 0; i < n; ++i)
        if (b[i].uid == uid) return &b[i];
    return NULL;
}

static const char* tensor_name(const hipdnnSdkGraph* g, int64_t uid) {
    const hipdnnSdkTensor* t = hipdnnSdkGraphFindTensor(g, uid);
    return t ? t->name : "";
}

/* The memory of tensor uid: its base (a view's is another tensor) and the byte offset. */
static int64_t view_base(const struct hipe_staged* s, int64_t uid, int64_t* offset) {
    *offset = 0;
    for (int i = 0; i < s->nalias; ++i)
        if (s->alias[i].uid == uid) {
            *offset = s->alias[i].byte_offset;
            return s->alias[i].base;
        }
    return uid;
}

hipe_kernel_id hipe_stage_planned_kernel(const struct hipe_staged* s, const hipe_stage* st) {
    union {
        rw_program rw;
        rs_program rs;
    } prog;
    if (st->kind == HIPE_STAGE_RESAMPLE) prog.rs = st->rs;
    else if (st->kind == HIPE_STAGE_ROWWISE) prog.rw = st->rw;
    else return 0;
    for (int b = 0; b < st->nbind; ++b) { /* every pointer at the start of a 256-byte block */
        if (!hipe_bind_has_memory(&st->bind[b])) continue;
        int64_t offset;
        (void)view_base(s, st->bind[b].uid, &offset);
        void* ptr = (char*)(uintptr_t)4096 + offset;
        memcpy((char*)&prog + st->bind[b].offset, &ptr, sizeof(ptr));
    }
    if (st->kind == HIPE_STAGE_RESAMPLE) return hipe_rs_kernel(&prog.rs);
    hipe_rw_set_vectors(&prog.rw);
    return hipe_rw_kernel(&prog.rw);
}

/* A kernel other than the planned one, which this enqueue's pointers need (a view that is
 * not 16-byte aligned, say): from the stage's slots, else the caches or compiled now; the
 * first time, logged. */
static void* other_kernel(const hipdnnSdkGraph* g, struct hipe_staged* s, int k, hipe_kernel_id id,
                          int device, char* why, size_t len) {
    hipe_stage* st = &s->stages[k];
    for (int i = 0; i < HIPE_OTHER_KERNELS; ++i)
        if (atomic_load_explicit(&st->other[i].id, memory_order_acquire) == id) return st->other[i].kernel;
    char name[HIPE_KERNEL_NAME_LEN], planned[HIPE_KERNEL_NAME_LEN];
    if (!id) { /* no program gets here: kernel_names.c and rowwise_*.c disagree */
        if (st->kind == HIPE_STAGE_RESAMPLE)
            snprintf(why, len, "internal: no resample kernel for %d spatial dims", st->rs.nsp);
        else
            snprintf(why, len, "internal: no row-wise kernel for kind %d (op %d, pre %d, %d "
                     "vectors, flags 0x%x)", st->rw.kind, st->rw.op, st->rw.pre, st->rw.vecs,
                     st->rw.flags);
        return NULL;
    }
    void* kernel = NULL;
    if (!hipe_kernel_get(id, device, &kernel, why, len)) return NULL;
    const int i = atomic_fetch_add(&st->nother, 1);
    if (i < HIPE_OTHER_KERNELS) {
        st->other[i].kernel = kernel;
        atomic_store_explicit(&st->other[i].id, id, memory_order_release);
        hipe_kernel_name(id, name, sizeof(name));
        hipe_kernel_name(st->kernel_id, planned, sizeof(planned));
        hipe_log(HIPDNN_LOG_INFO, HIPE_ENGINE_NAME ": graph '%s': stage %d of %d (%s): these "
                 "pointers take kernel %s (planned for 16-byte aligned ones: %s)", g->name, k + 1,
                 s->nstages, st->what, name, planned);
    }
    return kernel;
}

/* Launches a row-wise or resample stage's kernel: the planned one, unless the pointers set
 * in `prog` need another. */
static bool launch_compiled(const hipdnnSdkGraph* g, struct hipe_staged* s, int k, void* prog,
                            int device, int sm_count, void* stream, char* why, size_t len) {
    hipe_stage* st = &s->stages[k];
    hipe_kernel_id id;
    int threads;
    int64_t blocks, cap;
    if (st->kind == HIPE_STAGE_RESAMPLE) {
        const rs_program* rs = prog;
        id = hipe_rs_kernel(rs);
        threads = RS_BLOCK;
        blocks = (rs->total + RS_BLOCK - 1) / RS_BLOCK;
        if (blocks < 1) blocks = 1;
        cap = (int64_t)sm_count * 32;
    } else {
        rw_program* rw = prog;
        hipe_rw_set_vectors(rw);
        id = hipe_rw_kernel(rw);
        hipe_rowwise_grid(rw, &threads, &blocks);
        cap = (int64_t)sm_count * 1024;
    }
    if (blocks > cap) blocks = cap;
    void* kernel = id && id == st->kernel_id ? st->kernel : other_kernel(g, s, k, id, device, why, len);
    if (!kernel) return false;
    if (hipe_rtc_launch(kernel, blocks, threads, prog, stream, why, len)) return true;
    char name[HIPE_KERNEL_NAME_LEN], launch[HIPE_MSG_LEN];
    hipe_kernel_name(id, name, sizeof(name));
    snprintf(launch, sizeof(launch), "%s", why);
    hipdnnSdkFormat(why, len, "%s: %s", name, launch);
    return false;
}

/* A stage's program, copied on the stack at each enqueue: passed by value to the kernel. */
typedef union {
    pw_program pw;
    rw_program rw;
    rs_program rs;
    gm_program gm;
    fa_program fa;
} stage_program;

/* The enqueue's pointers and runtime scalars into the program's copy: a view's memory is
 * its base's at its offset, a workspace buffer's the workspace's, any other resolved. */
static hipdnnPluginStatus_t bind_pointers(const hipdnnSdkGraph* g, const struct hipe_staged* s,
                                          const hipe_stage* st, stage_program* prog,
                                          hipe_pointer_fn resolve, void* ctx, void* workspace,
                                          const hipdnnPluginTensorBuffer_t* buffers,
                                          uint32_t num_buffers) {
    char* base = (char*)prog;
    for (int b = 0; b < st->nbind; ++b) {
        const hipe_bind* bd = &st->bind[b];
        if (bd->scalar_dtype >= 0) { /* a runtime by-value scalar: a host pointer */
            const hipdnnPluginTensorBuffer_t* buf = find_buffer(buffers, num_buffers, bd->uid);
            if (!buf || !buf->ptr) {
                hipe_set_error(HIPE_ENGINE_NAME ": EnqueueOpGraph: by-value scalar '%s' (uid "
                               "%lld) has no pointer", tensor_name(g, bd->uid), (long long)bd->uid);
                return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
            }
            if (bd->scalar_dtype & HIPE_BIND_I64) { /* a word, read whole */
                const int32_t t = bd->scalar_dtype & ~HIPE_BIND_I64;
                const int64_t w = t == HIPDNN_DATA_INT64 ? *(const int64_t*)buf->ptr
                                  : t == HIPDNN_DATA_INT32
                                      ? *(const int32_t*)buf->ptr
                                      : (int64_t)hipdnnSdkLoadAsDouble(buf->ptr, (hipdnnDataType_t)t, 0);
                memcpy(base + bd->offset, &w, sizeof(w));
                continue;
            }
            float v = (float)hipdnnSdkLoadAsDouble(buf->ptr, (hipdnnDataType_t)bd->scalar_dtype, 0);
            memcpy(base + bd->offset, &v, sizeof(v));
            continue;
        }
        if (!hipe_bind_has_memory(bd)) continue;
        void* ptr = NULL;
        int64_t offset;
        const int64_t uid = view_base(s, bd->uid, &offset);
        for (int i = 0; i < s->nbuf && !ptr; ++i)
            if (s->bufs[i].uid == uid) ptr = (char*)workspace + s->bufs[i].offset;
        if (!ptr) {
            hipdnnPluginStatus_t r = resolve(ctx, uid, &ptr);
            if (r != HIPDNN_PLUGIN_STATUS_SUCCESS) return r;
        }
        ptr = (char*)ptr + offset;
        memcpy(base + bd->offset, &ptr, sizeof(ptr));
    }
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

/* The log's line for stage k's first run: which kernel ran, and which way. */
static void log_first_run(const hipdnnSdkGraph* g, const struct hipe_staged* s, int k,
                          const stage_program* prog, unsigned path, const char* gm_kernel) {
    const hipe_stage* st = &s->stages[k];
    const char* kernel = st->kind == HIPE_STAGE_ROWWISE ? "row-wise"
                         : st->kind == HIPE_STAGE_GEMM || st->kind == HIPE_STAGE_ATTENTION
                             ? gm_kernel
                         : st->kind == HIPE_STAGE_RESAMPLE ? "resample"
                         : path & RAN_JIT_FAST  ? "compiled fast"
                         : path & RAN_JIT_GENERIC ? "compiled generic"
                         : path & RAN_FAST      ? "interpreting fast" : "interpreting generic";
    const bool rw = st->kind == HIPE_STAGE_ROWWISE;
    char name[HIPE_KERNEL_NAME_LEN + 1] = "";
    if (st->kind != HIPE_STAGE_POINTWISE && st->kind != HIPE_STAGE_GEMM &&
        st->kind != HIPE_STAGE_ATTENTION) {
        name[0] = ' ';
        hipe_kernel_name(rw ? hipe_rw_kernel(&prog->rw) : hipe_rs_kernel(&prog->rs), name + 1,
                         sizeof(name) - 1);
    }
    hipe_log(HIPDNN_LOG_INFO, HIPE_ENGINE_NAME ": graph '%s': stage %d of %d (%s): first run "
             "of the %s kernel%s%s", g->name, k + 1, s->nstages, st->what, kernel, name,
             !rw ? "" : prog->rw.fast_dt < 0 ? " (general way)"
             : prog->rw.flags & RW_F_ROW_PARAMS ? " (fast way, parameters one value a row)"
                                                : " (fast way)");
}

hipdnnPluginStatus_t hipe_staged_enqueue(const hipdnnSdkGraph* g, struct hipe_staged* s,
                                         hipe_pointer_fn resolve, void* ctx, void* workspace,
                                         size_t workspace_size,
                                         const hipdnnPluginTensorBuffer_t* buffers,
                                         uint32_t num_buffers, int device, int sm_count,
                                         void* stream) {
    if (s->workspace > 0 && (!workspace || workspace_size < s->workspace)) {
        hipe_set_error(HIPE_ENGINE_NAME ": EnqueueOpGraph: graph '%s' needs %zu bytes of workspace, "
                       "got %zu", g->name, s->workspace, workspace ? workspace_size : (size_t)0);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    for (int k = 0; k < s->nstages; ++k) {
        hipe_stage* st = &s->stages[k];
        stage_program prog;
        if (st->kind == HIPE_STAGE_POINTWISE) prog.pw = st->pw.prog;
        else if (st->kind == HIPE_STAGE_GEMM) prog.gm = st->gm.prog;
        else if (st->kind == HIPE_STAGE_ATTENTION) prog.fa = st->fa.prog;
        else if (st->kind == HIPE_STAGE_RESAMPLE) prog.rs = st->rs;
        else prog.rw = st->rw;
        hipdnnPluginStatus_t r = bind_pointers(g, s, st, &prog, resolve, ctx, workspace, buffers,
                                               num_buffers);
        if (r != HIPDNN_PLUGIN_STATUS_SUCCESS) return r;
        char why[HIPE_MSG_LEN];
        bool ok;
        unsigned path = 0;
        const char* gm_kernel = "";
        if (st->kind == HIPE_STAGE_POINTWISE) {
            ok = hipe_pointwise_run(&st->pw, &prog.pw, &st->jit, &st->jit_ok, st->fast, sm_count,
                                    stream, &path, why, sizeof(why));
        } else if (st->kind == HIPE_STAGE_GEMM) {
            ok = hipe_gm_enqueue(&st->gm, &prog.gm, device, stream, &gm_kernel, why, sizeof(why));
        } else if (st->kind == HIPE_STAGE_ATTENTION) {
            ok = hipe_fa_enqueue(&st->fa, &prog.fa, device, stream, &gm_kernel, why, sizeof(why));
        } else {
            ok = launch_compiled(g, s, k, &prog, device, sm_count, stream, why, sizeof(why));
        }
        if (!ok) {
            hipe_set_error(HIPE_ENGINE_NAME ": graph '%s': stage %d of %d (%s): %s", g->name, k + 1,
                           s->nstages, st->what, why);
            return HIPDNN_PLUGIN_STATUS_EXECUTION_FAILED;
        }
        if (!atomic_load_explicit(&st->ran, memory_order_relaxed) && !atomic_exchange(&st->ran, 1))
            log_first_run(g, s, k, &prog, path, gm_kernel);
    }
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}
