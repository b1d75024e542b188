/* The iteration space of a pointwise graph (program.h): the NumPy broadcast of every
 * tensor's dims, ordered as the reference tensor (the first full-size output) lies in
 * memory and merged wherever every tensor walks two dims as one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program.h"

void pwc_format_dims(const int64_t* d, int n, char* buf, size_t len) {
    size_t used = (size_t)snprintf(buf, len, "[");
    for (int i = 0; i < n && used < len; ++i)
        used += (size_t)snprintf(buf + used, len - used, "%s%lld", i ? ", " : "", (long long)d[i]);
    if (used < len) snprintf(buf + used, len - used, "]");
}

/* S: the broadcast of every data tensor's dims, right-aligned. */
bool pwc_find_space(compiler* c) {
    const hipdnnSdkGraph* g = c->g;
    c->R = 1;
    for (int32_t i = 0; i < g->num_tensors; ++i)
        if (c->kind[i] == KIND_INPUT || c->kind[i] == KIND_NODE)
            if (g->tensors[i].ndim > c->R) c->R = g->tensors[i].ndim;
    for (int d = 0; d < PW_MAX_DIMS; ++d) c->S[d] = 1;
    for (int pass = 0; pass < 2; ++pass) /* fill, then check */
        for (int32_t i = 0; i < g->num_tensors; ++i) {
            if (c->kind[i] != KIND_INPUT && c->kind[i] != KIND_NODE) continue;
            const hipdnnSdkTensor* t = &g->tensors[i];
            for (int32_t k = 0; k < t->ndim; ++k) {
                int d = c->R - t->ndim + k;
                if (t->dims[k] == 1) continue;
                if (pass == 0 && c->S[d] == 1) c->S[d] = t->dims[k];
                if (c->S[d] != t->dims[k]) {
                    char td[160], sd[160];
                    pwc_format_dims(t->dims, t->ndim, td, sizeof(td));
                    pwc_format_dims(c->S, c->R, sd, sizeof(sd));
                    return decline(c->why, c->len, "tensor '%s' (uid %lld) %s does not broadcast "
                                   "to the graph's shape %s", t->name, (long long)t->uid, td, sd);
                }
            }
        }
    if (hipdnnSdkElementCount(c->R, c->S) > HIPE_MAX_ELEMENTS)
        return decline(c->why, c->len, "the graph's shape has over 2^48 elements");
    return true;
}

/* A tensor's strides over the R dims of S: 0 where it is broadcast. */
static void space_strides(const compiler* c, const hipdnnSdkTensor* t, int64_t* st) {
    for (int d = 0; d < PW_MAX_DIMS; ++d) st[d] = 0;
    for (int32_t k = 0; k < t->ndim; ++k) {
        int d = c->R - t->ndim + k;
        st[d] = t->dims[k] == 1 ? 0 : t->strides[k];
    }
}

/* Two elements of an output at one address would race: refuse such strides. */
bool pwc_output_overlaps(const compiler* c, const hipdnnSdkTensor* t) {
    int64_t st[PW_MAX_DIMS], stride[PW_MAX_DIMS], dim[PW_MAX_DIMS];
    int n = 0;
    space_strides(c, t, st);
    for (int32_t k = 0; k < t->ndim; ++k) {
        if (t->dims[k] == 1) continue;
        if (t->strides[k] == 0) return true;
        stride[n] = t->strides[k];
        dim[n++] = t->dims[k];
    }
    for (int i = 1; i < n; ++i) /* insertion sort by stride */
        for (int j = i; j > 0 && stride[j] < stride[j - 1]; --j) {
            int64_t s = stride[j], d = dim[j];
            stride[j] = stride[j - 1];
            dim[j] = dim[j - 1];
            stride[j - 1] = s;
            dim[j - 1] = d;
        }
    for (int i = 1; i < n; ++i)
        if (stride[i] < stride[i - 1] * dim[i - 1]) return true;
    return false;
}

/* Orders and merges the dims of S for every program tensor (inputs then outputs, in
 * prog->in / prog->out order, given as their graph tensors `ts`). */
void pwc_lay_out(const compiler* c, const hipdnnSdkTensor* const* ts, int nt, int ref,
                    pw_program* prog) {
    int64_t st[PW_MAX_INPUTS + PW_MAX_OUTPUTS][PW_MAX_DIMS];
    for (int t = 0; t < nt; ++t) space_strides(c, ts[t], st[t]);
    /* Outermost first: by the reference tensor's strides, largest first (stable). */
    int perm[PW_MAX_DIMS];
    for (int d = 0; d < c->R; ++d) perm[d] = d;
    if (ref >= 0 && !c->in_order)
        for (int i = 1; i < c->R; ++i)
            for (int j = i; j > 0 && st[ref][perm[j]] > st[ref][perm[j - 1]]; --j) {
                int tmp = perm[j];
                perm[j] = perm[j - 1];
                perm[j - 1] = tmp;
            }
    int nd = 0;
    int64_t dims[PW_MAX_DIMS];
    int64_t ms[PW_MAX_INPUTS + PW_MAX_OUTPUTS][PW_MAX_DIMS];
    for (int i = 0; i < c->R; ++i) {
        int d = perm[i];
        if (c->S[d] == 1 && !c->in_order) continue;
        bool merge = nd > 0 && !c->in_order;
        for (int t = 0; t < nt && merge; ++t) merge = ms[t][nd - 1] == st[t][d] * c->S[d];
        if (merge) {
            dims[nd - 1] *= c->S[d];
            for (int t = 0; t < nt; ++t) ms[t][nd - 1] = st[t][d];
        } else {
            dims[nd] = c->S[d];
            for (int t = 0; t < nt; ++t) ms[t][nd] = st[t][d];
            ++nd;
        }
    }
    if (nd == 0) { /* a single element */
        dims[0] = 1;
        for (int t = 0; t < nt; ++t) ms[t][0] = 0;
        nd = 1;
    }
    prog->ndim = nd;
    prog->n = 1;
    for (int d = 0; d < PW_MAX_DIMS; ++d) prog->dims[d] = d < nd ? dims[d] : 1;
    for (int d = 0; d < nd; ++d) prog->n *= dims[d];
    for (int t = 0; t < nt; ++t) {
        pw_tensor* pt = t < prog->nin ? &prog->in[t] : &prog->out[t - prog->nin];
        int64_t packed = 1;
        pt->contiguous = 1;
        pt->bcast_mask = 0;
        for (int d = PW_MAX_DIMS - 1; d >= 0; --d) {
            pt->strides[d] = d < nd ? ms[t][d] : 0;
            if (d >= nd) continue;
            if (dims[d] > 1 && pt->strides[d] != packed) pt->contiguous = 0;
            if (dims[d] > 1 && pt->strides[d] == 0) pt->bcast_mask |= 1u << d;
            packed *= dims[d];
        }
    }
}

/* The first full-size output, else input: its memory order becomes the iteration order. */
int pwc_reference_tensor(const compiler* c, const hipdnnSdkTensor* const* ts, int nin, int nt) {
    for (int pass = 0; pass < 2; ++pass)
        for (int t = pass == 0 ? nin : 0; t < (pass == 0 ? nt : nin); ++t) {
            int64_t st[PW_MAX_DIMS];
            space_strides(c, ts[t], st);
            bool full = true;
            for (int d = 0; d < c->R && full; ++d) full = c->S[d] == 1 || st[d] != 0;
            if (full) return t;
        }
    return -1;
}
