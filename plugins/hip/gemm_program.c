/* The matmul stage: a matmul node and its pointwise epilogue compiled into a gm_program
 * (gm_program.h), the kernel that runs it chosen (gemm_choice.c), compiled at plan time,
 * and launched.  Pointers are known only at enqueue: a view not 16-byte aligned (or one
 * TMA refuses) runs the general kernel, compiled then; GM_WGMMA's tensor maps are encoded
 * then. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rowwise.h" /* rwc_storage_of, rwc_find: the float storage types, a tensor by uid */
#include "staged.h"

#define GM_ROWS_LIMIT (INT64_C(1) << 31) /* rows of the epilogue's space: 32-bit indices */

int hipe_gm_threads(const hipe_gm_kernel* k) {
    /* GM_WGMMA: the producer warpgroup and a consumer one each 64 rows (GM_WG_THREADS) */
    return k->kind == GM_WGMMA ? 128 + 2 * k->bm : k->kind == GM_MMA ? k->wm * k->wn * 32 : 256;
}

/* As GmSmem and GmWgSmem (gm_kernels.h, gm_wgmma.h) count: the pipeline's stages and the
 * fp32 tile, which reuses their buffers except in a persistent kernel. */
int hipe_gm_smem(const hipe_gm_kernel* k) {
    if (k->kind == GM_SIMT || k->kind == GM_SGEMM) return 0; /* static shared memory */
    if (k->kind == GM_MFMA) { /* GmMfSmem: two stages of rows of 40 elements, or the tile */
        const int pipe = 2 * (k->bm + k->bn) * 40 * 2, tile = k->bm * (k->bn + 4) * 4;
        return pipe > tile ? pipe : tile;
    }
    const int bk = k->kind == GM_WGMMA ? 64 : 32;
    const int pipe = k->stages * (k->bm + k->bn) * bk * 2;
    const int tile = k->bm * (k->bn + 4) * 4;
    if (k->persistent) return pipe + tile + 1024; /* the tile's own buffer */
    return (pipe > tile ? pipe : tile) + (k->kind == GM_WGMMA ? 1024 : 0);
}

static int tile_m(const hipe_gm_kernel* k) { return k->kind == GM_SIMT ? 64 : k->bm; }
static int tile_n(const hipe_gm_kernel* k) { return k->kind == GM_SIMT ? 64 : k->bn; }

/* The grid of kernel k over prog: tiles and their raster. */
static void set_grid(gm_program* p, const hipe_gm_kernel* k) {
    p->kernel = k->kind;
    p->tile_m = tile_m(k);
    p->tile_n = tile_n(k);
    p->tiles_m = (int32_t)((p->m + tile_m(k) - 1) / tile_m(k));
    p->tiles_n = (int32_t)((p->n + tile_n(k) - 1) / tile_n(k));
    p->group_m = p->tiles_m < 8 ? p->tiles_m : 8;
    if (p->group_m < 1) p->group_m = 1;
}

/* The epilogue of a matmul alone: the product stored to c. */
static void store_only(const hipdnnSdkTensor* c, hipe_gm* gm) {
    pw_program* e = &gm->prog.ep;
    memset(e, 0, sizeof(*e));
    e->ndim = c->ndim;
    e->n = 1;
    int64_t packed = 1;
    e->out[0].contiguous = 1;
    for (int d = PW_MAX_DIMS - 1; d >= 0; --d) {
        e->dims[d] = d < c->ndim ? c->dims[d] : 1;
        e->out[0].strides[d] = d < c->ndim && c->dims[d] > 1 ? c->strides[d] : 0;
        if (d < c->ndim && c->dims[d] > 1 && c->strides[d] != packed) e->out[0].contiguous = 0;
        packed *= e->dims[d];
    }
    e->n = packed;
    e->nin = 1;
    e->nout = 1;
    e->in[0].dtype = gm->prog.acc_round;
    e->in[0].contiguous = 1;
    e->out[0].dtype = rwc_storage_of(c->data_type);
    e->ninstr = 2;
    e->instr[0] = (pw_instr){PW_GET, 0, 0, 0, 0, 0, 0};
    e->instr[1] = (pw_instr){PW_STORE, (uint8_t)e->out[0].dtype, 0,
                             e->out[0].contiguous ? PW_CONTIG : 0, 0, 0, 0};
    gm->slots = 2;
}

/* The epilogue compiled from the nodes after the matmul (over its product's space, in
 * order), with a store of the product itself first when c is a graph output too. */
static bool take_epilogue(const hipdnnSdkTensor* c, const hipe_plan* ep, hipe_gm* gm,
                          int64_t* out_uid, const char* label, char* why, size_t len) {
    const pw_program* p = &ep->prog;
    gm->prog.ep = *p;
    gm->slots = ep->slots;
    gm->prog.acc_in = -1;
    for (int i = 0; i < p->nin; ++i)
        if (ep->in_uid[i] == c->uid) gm->prog.acc_in = i;
    if (gm->prog.acc_in < 0)
        return decline(why, len, "%s: its epilogue does not read the product '%s'",
                                label, c->name);
    /* a grouped forward's or data gradient's rows hold every group's columns */
    const bool cols = gm->prog.groups > 1 && (gm->prog.conv == GM_CONV_FPROP ||
                                              gm->prog.conv == GM_CONV_DGRAD);
    if (p->n != hipdnnSdkElementCount(c->ndim, c->dims) ||
        p->dims[p->ndim - 1] != gm->prog.n * (cols ? gm->prog.groups : 1))
        return decline(why, len, "%s: its epilogue's space is not the product's", label);
    if (c->is_virtual) return true;
    pw_program* e = &gm->prog.ep;
    if (e->nout == PW_MAX_OUTPUTS || e->ninstr + 2 > PW_MAX_INSTRS)
        return decline(why, len, "%s: no room in its epilogue to store the product", label);
    /* the product's strides over the space (right-aligned, 0 where it has size 1) */
    pw_tensor* t = &e->out[e->nout];
    memset(t, 0, sizeof(*t));
    t->dtype = rwc_storage_of(c->data_type);
    t->contiguous = 1;
    int64_t packed = 1;
    for (int d = e->ndim - 1; d >= 0; --d) {
        const int k = c->ndim - (e->ndim - d);
        const bool real = k >= 0 && c->dims[k] > 1;
        t->strides[d] = real ? c->strides[k] : 0;
        if (real && c->strides[k] != packed) t->contiguous = 0;
        packed *= e->dims[d];
    }
    out_uid[e->nout] = c->uid;
    memmove(&e->instr[2], &e->instr[0], (size_t)e->ninstr * sizeof(pw_instr));
    e->instr[0] = (pw_instr){PW_GET, 0, (uint8_t)gm->prog.acc_in, 0, 0, 0, 0};
    e->instr[1] = (pw_instr){PW_STORE, (uint8_t)t->dtype, (uint8_t)e->nout,
                             t->contiguous ? PW_CONTIG : 0, 0, 0, 0};
    e->ninstr += 2;
    e->nout += 1;
    return true;
}

/* a, b and the batch: strides in elements, broadcast batch dims as stride 0. */
static bool operands(const hipdnnSdkTensor* a, const hipdnnSdkTensor* b,
                     const hipdnnSdkTensor* c, gm_program* p, const char* label, char* why,
                     size_t len) {
    p->m = c->dims[c->ndim - 2];
    p->n = c->dims[c->ndim - 1];
    p->k = a->dims[a->ndim - 1];
    p->a_sm = a->strides[a->ndim - 2];
    p->a_sk = a->strides[a->ndim - 1];
    p->b_sk = b->strides[b->ndim - 2];
    p->b_sn = b->strides[b->ndim - 1];
    p->nbatch = c->ndim - 2;
    p->groups = 1;
    if (p->nbatch > GM_MAX_BATCH)
        return decline(why, len, "%s: %d batch dims; the hip engine takes at most %d",
                                label, p->nbatch, GM_MAX_BATCH);
    p->batches = 1;
    for (int d = 0; d < p->nbatch; ++d) {
        const int ka = a->ndim - 2 - (p->nbatch - d), kb = b->ndim - 2 - (p->nbatch - d);
        p->bdims[d] = c->dims[d];
        p->a_bs[d] = ka >= 0 && a->dims[ka] > 1 ? a->strides[ka] : 0;
        p->b_bs[d] = kb >= 0 && b->dims[kb] > 1 ? b->strides[kb] : 0;
        if ((ka >= 0 && a->dims[ka] != 1 && a->dims[ka] != c->dims[d]) ||
            (kb >= 0 && b->dims[kb] != 1 && b->dims[kb] != c->dims[d]))
            return decline(why, len, "%s: batch dims of a and b do not broadcast to "
                                    "c's", label);
        p->batches *= c->dims[d];
    }
    if (a->dims[a->ndim - 2] != p->m || b->dims[b->ndim - 2] != p->k || b->dims[b->ndim - 1] != p->n)
        return decline(why, len, "%s: a, b and c do not make a matrix product", label);
    if (p->m * p->batches >= GM_ROWS_LIMIT)
        return decline(why, len, "%s: %lld rows of products; the hip engine takes fewer "
                                "than 2^31", label, (long long)(p->m * p->batches));
    return true;
}

static void bind(hipe_stage* st, int64_t uid, size_t offset, int32_t scalar_dtype) {
    hipe_bind* b = &st->bind[st->nbind++];
    b->uid = uid;
    b->offset = (uint32_t)offset;
    b->scalar_dtype = scalar_dtype;
}

#define EP(field) (offsetof(gm_program, ep) + offsetof(pw_program, field))

/* y with its channels moved last ([N, O..., K], strides alike): the product's layout as the
 * epilogue sees a convolution's (gm_program.h). */
static void channels_last(const hipdnnSdkTensor* y, hipdnnSdkTensor* out) {
    *out = *y;
    const int nd = y->ndim;
    for (int d = 1; d < nd - 1; ++d) {
        out->dims[d] = y->dims[d + 1];
        out->strides[d] = y->strides[d + 1];
    }
    out->dims[nd - 1] = y->dims[1];
    out->strides[nd - 1] = y->strides[1];
}

bool hipe_gm_permute_channels_last(hipdnnSdkGraph* eg, int32_t ndim, char* why, size_t len) {
    for (int32_t t = 0; t < eg->num_tensors; ++t) {
        hipdnnSdkTensor* tt = &eg->tensors[t];
        if (tt->ndim == ndim) {
            hipdnnSdkTensor moved;
            channels_last(tt, &moved);
            *tt = moved;
            continue;
        }
        for (int32_t d = 0; d < tt->ndim; ++d)
            if (tt->dims[d] != 1)
                return decline(why, len, "epilogue tensor '%s' (uid %lld) has rank %d, not the "
                               "convolution's %d", tt->name, (long long)tt->uid, tt->ndim, ndim);
    }
    return true;
}

/* t ([K, F..., C], channels last) as [K, F... x C] where it is dense in (F..., C) or
 * broadcast over all of them; a virtual tensor, never stored, in whichever layout. */
static bool merge_field(hipdnnSdkTensor* t) {
    const int nd = t->ndim;
    int64_t size = 1;
    bool dense = true, broadcast = true;
    for (int d = nd - 1; d >= 1; --d) {
        dense = dense && (t->dims[d] == 1 || t->strides[d] == t->strides[nd - 1] * size);
        broadcast = broadcast && t->dims[d] == 1;
        size *= t->dims[d];
    }
    if (t->is_virtual) {
        t->strides[0] = size;
        t->strides[nd - 1] = 1;
    } else if (!dense && !broadcast) {
        return false;
    }
    t->strides[1] = t->strides[nd - 1];
    t->dims[1] = size;
    t->ndim = 2;
    return true;
}

bool hipe_gm_merge_field(hipdnnSdkGraph* eg, int32_t ndim, char* why, size_t len) {
    for (int32_t t = 0; t < eg->num_tensors; ++t)
        if (eg->tensors[t].ndim == ndim && !merge_field(&eg->tensors[t]))
            return decline(why, len, "epilogue tensor '%s' (uid %lld) of a weight gradient is "
                           "not dense in (filter taps, channels); the hip engine needs dw's "
                           "layout there", eg->tensors[t].name, (long long)eg->tensors[t].uid);
    return true;
}

/* What every convolution product shares (gm_program.h): its node's geometry, x the
 * operand gathered, o the tensor whose spatial dims are the positions (osp), f the one
 * shaped as the filter (ker), s the one whose spatial strides are w_ssp; `names` and t[3]
 * for the rank message.  False with the reason on a rank or mode the engine does not take. */
static bool conv_geometry(const hipdnnSdkNode* n, const hipdnnSdkTensor* x,
                          const hipdnnSdkTensor* o, const hipdnnSdkTensor* f,
                          const hipdnnSdkTensor* s, const char* names,
                          const hipdnnSdkTensor* const* t, gm_program* p, const char* label,
                          char* why, size_t len) {
    const int nd = x->ndim;
    if (nd < 3 || nd > 2 + GM_MAX_SPATIAL || t[1]->ndim != nd || t[2]->ndim != nd)
        return decline(why, len, "%s: %s of rank %d, %d and %d; the hip engine takes 1 to %d "
                       "spatial dims", label, names, t[0]->ndim, t[1]->ndim, t[2]->ndim,
                       GM_MAX_SPATIAL);
    const int64_t mode = n->attrs[HIPDNN_CONV_MODE].i[0];
    if (mode != HIPDNN_CROSS_CORRELATION && mode != HIPDNN_CONVOLUTION)
        return decline(why, len, "%s: convolution mode %lld", label, (long long)mode);
    p->nsp = nd - 2;
    p->flip = mode == HIPDNN_CONVOLUTION;
    p->cin = x->dims[1];
    p->x_sn = x->strides[0];
    p->x_sc = x->strides[1];
    for (int d = 0; d < GM_MAX_SPATIAL; ++d) {
        const bool real = d < p->nsp;
        p->xsp[d] = real ? x->dims[2 + d] : 1;
        p->osp[d] = real ? o->dims[2 + d] : 1;
        p->ker[d] = real ? f->dims[2 + d] : 1;
        p->stride[d] = real ? n->attrs[HIPDNN_CONV_STRIDE].i[d] : 1;
        p->pad[d] = real ? n->attrs[HIPDNN_CONV_PRE_PADDING].i[d] : 0;
        p->dil[d] = real ? n->attrs[HIPDNN_CONV_DILATION].i[d] : 1;
        p->x_ssp[d] = real ? x->strides[2 + d] : 0;
        p->w_ssp[d] = real ? s->strides[2 + d] : 0;
    }
    p->batches = 1;
    p->nbatch = 0;
    p->groups = 1;
    return true;
}

/* A grouped convolution's groups (gm_program.h): `channels` (the image's) in runs of
 * `per_group` (w's dim 1), `filters` (w's dim 0) as many runs; false with the reason where
 * they do not split so. */
static bool groups_of(int64_t channels, int64_t per_group, int64_t filters, int64_t* groups,
                      const char* label, char* why, size_t len) {
    if (per_group < 1 || channels < per_group || channels % per_group != 0 ||
        channels / per_group > INT32_MAX ||
        filters % (channels / per_group) != 0)
        return decline(why, len, "%s: w has %lld channels a filter and %lld filters, which do "
                       "not split %lld image channels into groups", label, (long long)per_group,
                       (long long)filters, (long long)channels);
    *groups = channels / per_group;
    return true;
}

/* A group as the product's one batch dim: a_step and b_step elements from one group's
 * a and b to the next's. */
static void set_groups(gm_program* p, int64_t groups, int64_t a_step, int64_t b_step) {
    p->groups = (int32_t)groups;
    if (groups < 2) return;
    p->nbatch = 1;
    p->bdims[0] = groups;
    p->batches = groups;
    p->a_bs[0] = a_step;
    p->b_bs[0] = b_step;
}

/* Positions (osp) and filter taps (ker) of a convolution product, multiplied out. */
static int64_t positions_of(const gm_program* p) {
    int64_t v = 1;
    for (int d = 0; d < p->nsp; ++d) v *= p->osp[d];
    return v;
}

static int64_t taps_of(const gm_program* p) {
    int64_t v = 1;
    for (int d = 0; d < p->nsp; ++d) v *= p->ker[d];
    return v;
}

/* A forward convolution (x, w, y) or a data gradient (dgrad: dy, w, dx) as an implicit
 * matrix product (gm_program.h): x is the operand gathered, y the one written; *cl gets y
 * with its channels last, the product's layout. */
static bool conv_operands(const hipdnnSdkNode* n, bool dgrad, const hipdnnSdkTensor* x,
                          const hipdnnSdkTensor* w, const hipdnnSdkTensor* y, gm_program* p,
                          hipdnnSdkTensor* cl, const char* label, char* why, size_t len) {
    const hipdnnSdkTensor* const t[3] = {x, w, y};
    if (!conv_geometry(n, x, y, w, w, dgrad ? "dy, w and dx" : "x, w and y", t, p, label, why,
                       len))
        return false;
    const int64_t image_c = dgrad ? y->dims[1] : x->dims[1]; /* the image's channels */
    int64_t groups = 1;
    if (!groups_of(image_c, w->dims[1], w->dims[0], &groups, label, why, len)) return false;
    if (dgrad && x->dims[1] != w->dims[0])
        return decline(why, len, "%s: dy has %lld channels, w %lld filters", label,
                       (long long)x->dims[1], (long long)w->dims[0]);
    p->conv = dgrad ? GM_CONV_DGRAD : GM_CONV_FPROP;
    p->w_sk = w->strides[dgrad ? 1 : 0]; /* along the product's columns */
    p->w_sc = w->strides[dgrad ? 0 : 1]; /* along the gathered channels */
    p->cin /= groups; /* a group's: C/g (a data gradient's dy: K/g) */
    p->m = y->dims[0] * positions_of(p);
    p->k = p->cin * taps_of(p);
    p->n = dgrad ? w->dims[1] : w->dims[0] / groups;
    /* the next group: cin channels on in x (dy), and K/g filters on in w (a forward's
       n, a data gradient's cin) */
    set_groups(p, groups, p->cin * p->x_sc, (dgrad ? p->cin * p->w_sc : p->n * p->w_sk));
    /* b as a matrix where w is dense in (f..., c) (KRSC): k contiguous, rows w_sk apart.
       A data gradient's b is a matrix a filter tap at a time: [k_out, c], strides w_sc
       and w_sk (the tensor-core kernels step through the taps, gm_conv_b_offset) */
    bool dense = !dgrad && p->w_sc == 1;
    int64_t inner = p->cin;
    for (int d = p->nsp - 1; d >= 0 && dense; --d) {
        dense = p->ker[d] == 1 || p->w_ssp[d] == inner;
        inner *= p->ker[d];
    }
    /* else, where w is dense in (c, f...) (KCRS), the fp32 kernel's k can be that order
       (taps_inner; hipe_gm_compile keeps it only for that kernel) */
    bool kcrs = !dgrad && !dense;
    inner = 1;
    for (int d = p->nsp - 1; d >= 0 && kcrs; --d) {
        kcrs = p->ker[d] == 1 || p->w_ssp[d] == inner;
        inner *= p->ker[d];
    }
    kcrs = kcrs && (p->cin == 1 || p->w_sc == inner);
    p->taps_inner = kcrs;
    p->b_sk = dgrad ? p->w_sc : dense || kcrs ? 1 : 0;
    p->b_sn = dgrad ? p->w_sk : dense || kcrs ? p->w_sk : 0;
    if (p->m >= GM_ROWS_LIMIT || p->k >= GM_ROWS_LIMIT)
        return decline(why, len, "%s: %lld output positions and a field of %lld; the hip "
                       "engine takes fewer than 2^31 each", label, (long long)p->m, (long long)p->k);
    channels_last(y, cl);
    return true;
}

/* A weight gradient (x, dy, dw) as an implicit matrix product (gm_program.h): dy is a, x
 * is gathered as b; *cl gets dw with its channels last, the product's layout. */
static bool wgrad_operands(const hipdnnSdkNode* n, const hipdnnSdkTensor* dy,
                           const hipdnnSdkTensor* x, const hipdnnSdkTensor* dw, gm_program* p,
                           hipdnnSdkTensor* cl, const char* label, char* why, size_t len) {
    const hipdnnSdkTensor* const t[3] = {x, dy, dw};
    if (!conv_geometry(n, x, dy, dw, dy, "x, dy and dw", t, p, label, why, len)) return false;
    int64_t groups = 1;
    if (!groups_of(x->dims[1], dw->dims[1], dw->dims[0], &groups, label, why, len)) return false;
    if (dw->dims[0] != dy->dims[1] || dy->dims[0] != x->dims[0])
        return decline(why, len, "%s: dy [%lld, %lld, ...] does not match x's images and dw's "
                       "filters", label, (long long)dy->dims[0], (long long)dy->dims[1]);
    p->conv = GM_CONV_WGRAD;
    p->w_sk = dy->strides[1]; /* dy along the product's rows (k_out) */
    p->w_sc = dy->strides[0]; /* ... and along its images */
    p->cin /= groups; /* a group's channels of x */
    p->m = dw->dims[0] / groups;
    set_groups(p, groups, p->m * p->w_sk, p->cin * p->x_sc);
    p->n = p->cin * taps_of(p);
    p->k = dy->dims[0] * positions_of(p);
    p->b_sk = p->b_sn = 0; /* x is gathered */
    /* a as the matrix [k_out, positions] where dy is channels-last and dense over its
       positions (packed NHWC): k_out contiguous, positions k_out apart (all the groups'
       filters: the sm_90 kernel's tensor map); else read through gm_wgrad_a_offset only */
    bool dense = p->w_sk == 1;
    int64_t inner = dw->dims[0];
    for (int d = p->nsp - 1; d >= 0 && dense; --d) {
        dense = p->osp[d] == 1 || p->w_ssp[d] == inner;
        inner *= p->osp[d];
    }
    dense = dense && (dy->dims[0] == 1 || p->w_sc == inner);
    p->a_sm = dense ? 1 : 0;
    p->a_sk = dense ? dw->dims[0] : 0;
    if (p->n >= GM_ROWS_LIMIT || p->k >= GM_ROWS_LIMIT)
        return decline(why, len, "%s: a field of %lld and %lld output positions; the hip "
                       "engine takes fewer than 2^31 each", label, (long long)p->n,
                       (long long)p->k);
    channels_last(dw, cl);
    if (!merge_field(cl))
        return decline(why, len, "%s: dw '%s' is not dense in (filter taps, channels) (KRSC); "
                       "the hip engine writes a weight gradient's columns as one dim", label,
                       dw->name);
    return true;
}

/* Whether a convolution's x can be gathered 16 bytes at a time: channels contiguous, a
 * multiple of 8 of them, every other stride a multiple of 8 elements; and w is dense.  A
 * data gradient's dy likewise, with a multiple of 64 channels (a k step within one filter
 * tap: gm_wg_conv_b), and w read [k_out, c] a tap at a time, c contiguous and every other
 * stride a multiple of 8. */
static bool conv_mma_ok(const gm_program* p) {
    const bool dgrad = p->conv == GM_CONV_DGRAD;
    bool ok = p->x_sc == 1 && p->cin % (dgrad ? 64 : 8) == 0 && p->x_sn % 8 == 0 && !p->taps_inner &&
              (dgrad ? p->b_sn == 1 && p->b_sk % 8 == 0 : p->conv == GM_CONV_FPROP && p->b_sk == 1);
    for (int d = 0; d < p->nsp; ++d) /* 32-bit input coordinates and filter taps */
        ok = ok && p->x_ssp[d] % 8 == 0 && (!dgrad || p->w_ssp[d] % 8 == 0) &&
             p->xsp[d] + p->pad[d] < (INT64_C(1) << 30) &&
             (p->osp[d] + p->pad[d]) * p->stride[d] < (INT64_C(1) << 30) &&
             p->ker[d] * p->dil[d] < (INT64_C(1) << 30);
    return ok;
}

/* Whether the sm_90 kernel can run a weight gradient on tensor cores (gm_wg_wgrad): fp16 or
 * bf16 alike, dy a dense channels-last matrix with k_out a multiple of 8, x gathered 16
 * bytes at a time (channels contiguous, a multiple of 8 of them, other strides multiples
 * of 8), 32-bit coordinates. */
static bool wgrad_tc_ok(const gm_program* p) {
    bool ok = p->conv == GM_CONV_WGRAD && p->a_dtype == p->b_dtype && p->a_dtype != PW_F32 &&
              p->a_sk != 0 && p->m % 8 == 0 && p->x_sc == 1 && p->cin % 8 == 0 &&
              p->x_sn % 8 == 0;
    for (int d = 0; d < p->nsp; ++d)
        ok = ok && p->x_ssp[d] % 8 == 0 && p->xsp[d] + p->pad[d] < (INT64_C(1) << 30) &&
             p->osp[d] * p->stride[d] < (INT64_C(1) << 30) &&
             p->ker[d] * p->dil[d] < (INT64_C(1) << 30);
    return ok;
}

/* The planned kernel in the stage's words. */
static const char* planned_words(const hipe_gm* gm) {
    return gm->main.kind == GM_MMA    ? "on tensor cores"
           : gm->main.kind == GM_MFMA ? "on matrix cores (MFMA)"
           : gm->tf32                 ? "TF32 on tensor cores on sm_90, else exact fp32 FMA"
           : gm->main.kind == GM_SGEMM ? "fp32 FMA, register-tiled"
           : gm->wgrad_tc ? "on tensor cores on sm_90, else general (fp32 FMA)"
                          : "general (fp32 FMA)";
}

int hipe_gm_compile(const hipdnnSdkGraph* g, const hipdnnSdkNode* mm, const hipe_plan* ep,
                    const hipe_knobs* knobs, int64_t parts_uid, size_t* parts_bytes,
                    hipe_stage* st, char* why, size_t len) {
    const bool dgrad = mm->kind == HIPDNN_OP_CONV_DGRAD, wgrad = mm->kind == HIPDNN_OP_CONV_WGRAD;
    const bool conv = mm->kind == HIPDNN_OP_CONV_FPROP || dgrad || wgrad;
    const char* op = wgrad ? "conv_wgrad" : dgrad ? "conv_dgrad" : conv ? "conv_fprop" : "matmul";
    char label[200];
    hipdnnSdkFormat(label, sizeof(label), "node '%s' (%s)", mm->name ? mm->name : "", op);
    /* a, b, c: x, w, y of a convolution, dy, w, dx of a data gradient (the same ports'
       numbers), dy, x, dw of a weight gradient (its ports the other way round) */
    const hipdnnSdkTensor* a = rwc_find(g, mm->inputs[wgrad ? HIPDNN_WGRAD_DY : 0]);
    const hipdnnSdkTensor* b = rwc_find(g, mm->inputs[wgrad ? HIPDNN_WGRAD_X : 1]);
    const hipdnnSdkTensor* c = rwc_find(g, mm->outputs[conv ? HIPDNN_CONV_Y : HIPDNN_MATMUL_C]);
    if (!a || !b || !c || a->ndim < 2 || b->ndim < 2 || c->ndim < 2)
        return decline(why, len, "%s: its inputs and output must be set, each of rank 2 or "
                       "more", label);
    const hipdnnSdkTensor* ts[3] = {a, b, c};
    for (int i = 0; i < 3; ++i)
        if (rwc_storage_of(ts[i]->data_type) < 0)
            return decline(why, len, "%s: tensor '%s' (uid %lld) is %s; the hip engine takes "
                           "float, half and bfloat16 here", label, ts[i]->name,
                           (long long)ts[i]->uid, hipdnnSdkDataTypeName(ts[i]->data_type));
    memset(st, 0, sizeof(*st));
    st->kind = HIPE_STAGE_GEMM;
    hipe_gm* gm = &st->gm;
    gm_program* p = &gm->prog;
    hipdnnSdkTensor cl; /* a convolution's y, channels last */
    if (wgrad ? !wgrad_operands(mm, a, b, c, p, &cl, label, why, len)
        : conv ? !conv_operands(mm, dgrad, a, b, c, p, &cl, label, why, len)
               : !operands(a, b, c, p, label, why, len))
        return 0;
    if (conv) c = &cl;
    p->a_dtype = rwc_storage_of(a->data_type);
    p->b_dtype = rwc_storage_of(b->data_type);
    p->acc_round = rwc_storage_of(c->data_type);
    int64_t out_uid[PW_MAX_OUTPUTS];
    if (ep) {
        memcpy(out_uid, ep->out_uid, sizeof(out_uid));
        if (!take_epilogue(c, ep, gm, out_uid, label, why, len)) return 0;
    } else {
        store_only(c, gm);
        p->acc_in = 0;
        out_uid[0] = c->uid;
    }
    const bool nvidia = strcmp(hipe_vendor(), "ROCm") != 0;
    if (!hipe_gm_choose(gm, nvidia && (!conv || conv_mma_ok(p)), nvidia && wgrad_tc_ok(p),
                        knobs, label, why, len))
        return 0;
    set_grid(p, &gm->main);
    gm->max_splits = hipe_gm_reserve_splits(p, knobs->split_k);
    hipe_gm_set_splits(p, 1); /* until plan time (hipe_gm_plan_splits) */
    if (gm->max_splits > 1) {
        *parts_bytes = (size_t)hipe_gm_split_bytes(p, gm->max_splits);
        bind(st, parts_uid, offsetof(gm_program, partial), -1);
    }
    bind(st, a->uid, offsetof(gm_program, a), -1);
    bind(st, b->uid, offsetof(gm_program, b), -1);
    for (int i = 0; i < p->ep.nin; ++i)
        if (i != p->acc_in) bind(st, ep->in_uid[i], EP(in) + i * sizeof(pw_tensor), -1);
    for (int i = 0; i < p->ep.nout; ++i)
        bind(st, out_uid[i], EP(out) + i * sizeof(pw_tensor), -1);
    for (int i = 0; ep && i < ep->nscalars; ++i)
        if (ep->scalar_uid[i] >= 0)
            bind(st, ep->scalar_uid[i], EP(scalar) + i * sizeof(float), ep->scalar_dtype[i]);
    char batch[48] = "";
    if (conv && p->groups > 1)
        hipdnnSdkFormat(batch, sizeof(batch), "%d groups of ", p->groups);
    else if (p->batches > 1)
        hipdnnSdkFormat(batch, sizeof(batch), "%lld x ", (long long)p->batches);
    hipdnnSdkFormat(st->what, sizeof(st->what), "%s '%s' %s%lldx%lldx%lld %s%s",
                    op, mm->name ? mm->name : "", batch,
                    (long long)p->m, (long long)p->n, (long long)p->k,
                    planned_words(gm), ep ? ", with its pointwise epilogue" : "");
    return 1;
}

/* ---- kernels -------------------------------------------------------------------------- */

static bool build(const hipe_gm* gm, const hipe_gm_kernel* k, int device, void** fn, char* why,
                  size_t len) {
    hipe_rtc_target t;
    if (!hipe_rtc_target_of(device, &t, why, len)) return false;
    /* MFMA: hiprtc's (the emulation runs it by its own code, whatever its target) */
    char* source = hipe_gm_source(gm, k, k->kind == GM_MFMA ? HIPE_RTC_HIP : t.dialect);
    if (!source) return decline(why, len, "out of memory");
    if (getenv("HIPDNN_HIP_JIT_DUMP")) { /* tests compile both vendors' sources */
        const hipe_gm_kernel simt = {.kind = GM_SIMT};
        char* other = hipe_gm_source(gm, &simt, HIPE_RTC_HIP);
        hipe_dump_source(k->kind == GM_MMA     ? "gm_mma"
                         : k->kind == GM_SGEMM ? "gm_sgemm"
                         : k->kind == GM_MFMA  ? "gm_mfma"
                                               : "gm_simt",
                         k->kind == GM_MFMA ? "hip" : "cu", source);
        hipe_dump_source("gm_simt", "hip", other);
        free(other);
        if (k->kind == GM_SGEMM) { /* and the fp32 kernel as hiprtc would compile it */
            other = hipe_gm_source(gm, k, HIPE_RTC_HIP);
            hipe_dump_source("gm_sgemm", "hip", other);
            free(other);
        }
        bool mak, mbk; /* and AMD's matrix-core kernel, where it applies */
        if (k->kind != GM_MFMA && hipe_gm_mfma_ok(&gm->prog, &mak, &mbk)) {
            const hipe_gm_kernel mf = {.kind = GM_MFMA, .dt = gm->prog.a_dtype, .ak = mak,
                                       .bk = mbk, .bm = 64, .bn = 128};
            other = hipe_gm_source(gm, &mf, HIPE_RTC_HIP);
            hipe_dump_source("gm_mfma", "hip", other);
            free(other);
        }
        for (int i = 0; k->kind != GM_WGMMA && hipe_gm_wgmma_applies(gm) && i < GM_WG_TILES;
             ++i) {
            /* as an sm_90 GPU would compile them, in each tile that may run the product */
            if (!hipe_gm_wgmma_tile_ok(gm, i)) continue;
            const hipe_gm_kernel wg = hipe_gm_wgmma_of(gm, i);
            other = hipe_gm_source(gm, &wg, HIPE_RTC_CUDA);
            hipe_dump_source("gm_wgmma", "cu", other);
            free(other);
        }
    }
    const bool ok = hipe_kernel_get_source(source, HIPE_GEMM_KERNEL, device, fn, why, len);
    free(source);
    return ok;
}

/* The kernel's name in the log: which, and its k ranges. */
static void kernel_label(const gm_program* p, const hipe_gm_kernel* k, char* out, size_t len) {
    const char* kind = k->kind == GM_WGMMA && k->dt == PW_F32 ? "tensor-core (wgmma), TF32"
                       : k->kind == GM_WGMMA && k->bm == 64 ? "tensor-core (wgmma), 64-row tile"
                       : k->kind == GM_WGMMA ? "tensor-core (wgmma)"
                       : k->kind == GM_MMA   ? "tensor-core"
                       : k->kind == GM_MFMA  ? "matrix-core (MFMA)"
                       : k->kind == GM_SGEMM ? "fp32 register-tiled"
                                             : "general";
    if (p->splits > 1)
        hipdnnSdkFormat(out, len, "%s, k split %d ways,", kind, p->splits);
    else
        hipdnnSdkFormat(out, len, "%s", kind);
}

bool hipe_gm_prepare(hipe_gm* gm, int device, char* why, size_t len) {
    hipe_gm_kernel wg;
    bool ok = false;
    const bool forced = gm->knobs.kernel_cfg == HIPE_KERNEL_WGMMA;
    char no[HIPE_MSG_LEN] = "this GPU is not an sm_90 (its target is not sm_90a)";
    if (hipe_gm_wgmma_kernel(gm, device, &wg)) {
        ok = build(gm, &wg, device, &gm->fn, no, sizeof(no));
        if (ok) {
            gm->main = wg;
            set_grid(&gm->prog, &wg);
        } else if (!forced) {
            hipe_log(HIPDNN_LOG_WARN, HIPE_ENGINE_NAME ": the sm_90 matmul kernel did not "
                     "compile (%s); mma.sync's runs", no);
        }
    }
    if (!ok && forced) {
        hipdnnSdkFormat(why, len, "knob KERNEL_CFG = %d asks for %s: %s", HIPE_KERNEL_WGMMA,
                        hipe_gm_cfg_name(HIPE_KERNEL_WGMMA), no);
        return false;
    }
    if (!ok && !build(gm, &gm->main, device, &gm->fn, why, len)) return false;
    hipe_gm_plan_splits(gm, device);
    const hipe_gm_kernel simt = {.kind = GM_SIMT};
    kernel_label(&gm->prog, &gm->main, gm->label, sizeof(gm->label));
    kernel_label(&gm->prog, &simt, gm->simt_label, sizeof(gm->simt_label));
    return true;
}

/* GM_WGMMA's tensor map of one operand (rows: m or n; kc: k is its contiguous dim): the
 * matrix, contiguous dim first, and its batch dims innermost first, size 1 where it is
 * broadcast (gm_wg_batch gives coordinate 0 there). */
static bool tma_operand(const gm_program* p, const void* base, int dtype, bool kc, int64_t rows,
                        int64_t s_r, int64_t s_k, const int64_t* bs, int box_rows,
                        unsigned char* map, char* why, size_t len) {
    uint64_t dims[5], strides[4];
    const uint64_t es = dtype == PW_F32 ? 4 : 2; /* fp32 read as TF32, K-major only */
    uint32_t box[5] = {(uint32_t)(128 / es), kc ? (uint32_t)box_rows : 64, 1, 1, 1};
    dims[0] = (uint64_t)(kc ? p->k : rows);
    dims[1] = (uint64_t)(kc ? rows : p->k);
    strides[0] = (uint64_t)(kc ? s_r : s_k) * es;
    for (int j = 0; j < 3; ++j) {
        const int d = p->nbatch - 1 - j;
        const bool along = d >= 0 && bs[d] != 0;
        dims[2 + j] = along ? (uint64_t)p->bdims[d] : 1;
        strides[1 + j] = along ? (uint64_t)bs[d] * es : strides[j] * dims[1 + j];
    }
    return hipe_gm_tensor_map(map, dtype, base, dims, strides, box, why, len);
}

/* A data gradient's w for GM_WGMMA: dims (c, k_out, its filter taps innermost first), boxes
 * of 64 x 64 x 1 x 1 x 1 (gm_wg_conv_b); k_out over every group's filters, c a group's. */
static bool tma_dgrad_filter(const gm_program* p, const void* base, int dtype, unsigned char* map,
                             char* why, size_t len) {
    uint64_t dims[5] = {(uint64_t)p->n, (uint64_t)(p->cin * p->groups), 1, 1, 1}, strides[4];
    const uint32_t box[5] = {64, 64, 1, 1, 1};
    strides[0] = (uint64_t)p->b_sk * 2;
    for (int j = 0; j < 3; ++j) {
        const int d = p->nsp - 1 - j;
        dims[2 + j] = d >= 0 ? (uint64_t)p->ker[d] : 1;
        strides[1 + j] = d >= 0 ? (uint64_t)p->w_ssp[d] * 2 : strides[j] * dims[1 + j];
    }
    return hipe_gm_tensor_map(map, dtype, base, dims, strides, box, why, len);
}

static bool aligned16(const void* p) { return ((uintptr_t)p & 15u) == 0; }

/* A split product's nonce (gm_program.h): another for each launch in the process, and in
 * another process (seeded by the clock and the process), under 2^56 and never 0, mixed
 * (splitmix64) so that no two launches' are near each other. */
static uint64_t split_nonce(void) {
    static _Atomic uint64_t count;
    static _Atomic uint64_t seed;
    uint64_t s = atomic_load(&seed);
    if (!s) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t fresh = ((uint64_t)ts.tv_sec << 30) ^ (uint64_t)ts.tv_nsec ^
                         ((uint64_t)getpid() << 40) ^ (uint64_t)(uintptr_t)&count;
        fresh |= 1;
        if (!atomic_compare_exchange_strong(&seed, &s, fresh)) fresh = s;
        s = fresh;
    }
    for (;;) {
        uint64_t z = s + (atomic_fetch_add(&count, 1) + 1) * UINT64_C(0x9E3779B97F4A7C15);
        z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
        z = (z ^ (z >> 31)) >> 8;
        if (z) return z;
    }
}

bool hipe_gm_enqueue(hipe_gm* gm, gm_program* prog, int device, void* stream,
                     const char** kernel, char* why, size_t len) {
    /* the epilogue's contiguous tensors: 16-byte vectors where every one is aligned */
    pw_program* e = &prog->ep;
    e->aligned = 1;
    for (int i = 0; i < e->nin; ++i)
        if (i != prog->acc_in && e->in[i].contiguous && !aligned16(e->in[i].ptr)) e->aligned = 0;
    for (int i = 0; i < e->nout; ++i)
        if (e->out[i].contiguous && !aligned16(e->out[i].ptr)) e->aligned = 0;
    hipe_gm_kernel k = gm->main;
    void* fn = gm->fn;
    gm_tma tma;
    memset(&tma, 0, sizeof(tma));
    /* GM_SGEMM gathers a convolution's x element by element, as GM_WGMMA's TF32 forward
       convolution does where x is not in 16-byte chunks (gm_wg_tf32_conv): only w need be
       aligned */
    const bool by_element = (k.kind == GM_SGEMM && prog->conv) ||
                            (k.kind == GM_WGMMA && k.dt == PW_F32 && !k.ak &&
                             prog->conv == GM_CONV_FPROP);
    bool fast = (aligned16(prog->a) || by_element) && aligned16(prog->b);
    if (fast && k.kind == GM_WGMMA) {
        char no[HIPE_MSG_LEN];
        /* a convolution's x (a data gradient's dy) is gathered, not copied by TMA, as is a
           weight gradient's b (x) */
        const bool a_gathered = prog->conv == GM_CONV_FPROP || prog->conv == GM_CONV_DGRAD;
        /* a grouped weight gradient's dy: one matrix of all the filters (gm_wg_wgrad) */
        static const int64_t no_batch[GM_MAX_BATCH] = {0};
        const bool all_filters = prog->conv == GM_CONV_WGRAD && prog->groups > 1;
        const int64_t a_rows = all_filters ? prog->m * prog->groups : prog->m;
        fast = (a_gathered ||
                tma_operand(prog, prog->a, k.dt, k.ak, a_rows, prog->a_sm, prog->a_sk,
                            all_filters ? no_batch : prog->a_bs, k.bm, tma.a, no, sizeof(no))) &&
               (prog->conv == GM_CONV_WGRAD || (k.dt == PW_F32 && !k.bk) || /* copied */
                (prog->conv == GM_CONV_DGRAD
                     ? tma_dgrad_filter(prog, prog->b, k.dt, tma.b, no, sizeof(no))
                     : tma_operand(prog, prog->b, k.dt, k.bk, prog->n, prog->b_sn, prog->b_sk,
                                   prog->b_bs, k.bn, tma.b, no, sizeof(no))));
        if (!fast)
            hipe_log(HIPDNN_LOG_WARN, HIPE_ENGINE_NAME ": matmul %lldx%lldx%lld: %s; the "
                     "general kernel runs", (long long)prog->m, (long long)prog->n,
                     (long long)prog->k, no);
    }
    if (k.kind != GM_SIMT && !fast) {
        k = (hipe_gm_kernel){.kind = GM_SIMT};
        fn = atomic_load(&gm->simt);
        if (!fn) {
            if (!build(gm, &k, device, &fn, why, len)) return false;
            atomic_store(&gm->simt, fn);
        }
        set_grid(prog, &k);
    }
    *kernel = k.kind == gm->main.kind ? gm->label : gm->simt_label;
    const int64_t tiles = prog->batches * prog->tiles_m * prog->tiles_n;
    if (tiles < 1) return true; /* an empty product: nothing to write */
    /* split-k: a block a (range, tile), the tiles' arrival words after the partials and
       this launch's nonce (gm_program.h) */
    int64_t blocks = tiles;
    if (prog->splits > 1) {
        blocks = tiles * prog->splits;
        prog->arrive = (uint64_t*)((char*)prog->partial + hipe_gm_partial_bytes(prog, gm->max_splits));
        prog->nonce = split_nonce();
    }
    if (k.persistent && blocks > k.grid) blocks = k.grid;
    return hipe_gm_launch(fn, prog, k.kind == GM_WGMMA ? &tma : NULL, blocks, hipe_gm_threads(&k),
                          hipe_gm_smem(&k), stream, why, len);
}
