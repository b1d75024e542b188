// gm_exec.h — what every matmul kernel shares with the host emulation: where a batch's
// operands start, and the epilogue run on a vector of a product's row.
//
// The epilogue is the pointwise kernel's own code (pw_exec.h) at a new kind of position,
// GemmAt: the product's input reads the tile the kernel holds on the chip, every other
// input and every output goes through the pointwise kernel's loads and stores.  So any
// program the pointwise compiler makes runs here, with the same numerics; a generated
// kernel passes its constant program type (jit_source.c) and the switches fold away.
//
// The includer provides what pw_exec.h needs (PW_FN, PW_UNROLL, the conversions).
#ifndef HIPDNN_HIP_GM_EXEC_H
#define HIPDNN_HIP_GM_EXEC_H

#include "gm_program.h"
#include "pw_exec.h"

// GM_GROUPED 0: the kernel's program has one group (jit_source.c defines it so), and the
// grouped convolution's arithmetic compiles away from the hot loops; 1 (the default, the
// emulation's): a group count read from the program.
#ifndef GM_GROUPED
#define GM_GROUPED 1
#endif

// PW_VEC elements of one row of the product's space, their values at v (on the chip).
struct GemmAt {
    Pos pos;
    const float* v;
    int acc_in;
};

PW_FN void pw_load(const pw_program& p, int i, int dtype, bool contiguous, const GemmAt& at,
                   float* v) {
    if (i == at.acc_in) {
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) v[j] = at.v[j];
        return;
    }
    load_input(p, p.in[i], dtype, contiguous, at.pos, v);
}

PW_FN void pw_store(const pw_program& p, const pw_instr& ins, const GemmAt& at, const float* v) {
    store_output(p, p.out[ins.a], ins.fn, ins.flags & PW_CONTIG, at.pos, v);
}

// The product's value as the epilogue reads it: rounded to its storage type.
PW_FN float gm_round(int storage, float x) {
    if (storage == PW_F16) return hd_half_to_float(hd_float_to_half(x));
    if (storage == PW_BF16) return hd_bf16_to_float(hd_float_to_bf16(x));
    return x;
}

// Element offsets of batch `batch` (linear over bdims) in a and b.
PW_FN void gm_batch_offsets(const gm_program& g, int64_t batch, int64_t* a_off, int64_t* b_off) {
    int64_t oa = 0, ob = 0;
    for (int d = g.nbatch - 1; d >= 0; --d) {
        const int64_t q = batch / g.bdims[d];
        const int64_t c = batch - q * g.bdims[d];
        oa += c * g.a_bs[d];
        ob += c * g.b_bs[d];
        batch = q;
    }
    *a_off = oa;
    *b_off = ob;
}

// ---- convolution: where a's and b's elements are ----------------------------------------

// Taps of the filter.
PW_FN uint32_t gm_conv_taps(const gm_program& g) {
    uint32_t t = 1;
PW_UNROLL
    for (int d = 0; d < GM_MAX_SPATIAL; ++d)
        if (d < g.nsp) t *= (uint32_t)g.ker[d];
    return t;
}

// Field element `field` as its channel *c and filter tap *f (linear, innermost dim last):
// (f, c) with the channel innermost, or (c, f) (taps_inner, gm_program.h).
PW_FN void gm_conv_field(const gm_program& g, int64_t field, uint32_t* c, uint32_t* f) {
    if (g.taps_inner) {
        const uint32_t taps = gm_conv_taps(g);
        *c = (uint32_t)(field / taps);
        *f = (uint32_t)(field - (int64_t)*c * taps);
    } else {
        *c = (uint32_t)(field % g.cin);
        *f = (uint32_t)(field / g.cin);
    }
}

// Offset in x of output position `at`'s receptive-field element `field` (filter tap and
// channel, gm_conv_field), false in the padding; for a data gradient, in dy of
// dx's position `at` (gm_program.h).  Both under 2^31 (gemm_program.c checks).
PW_FN bool gm_conv_gather(const gm_program& g, int64_t at, int64_t field, int64_t* off) {
    uint32_t c, f;
    gm_conv_field(g, field, &c, &f);
    uint32_t pos = (uint32_t)at;
    int64_t o = (int64_t)c * g.x_sc;
PW_UNROLL
    for (int d = GM_MAX_SPATIAL - 1; d >= 0; --d) {
        if (d >= g.nsp) continue;
        const uint32_t kd = (uint32_t)g.ker[d], od = (uint32_t)g.osp[d];
        uint32_t fd = f % kd;
        f /= kd;
        const uint32_t op = pos % od;
        pos /= od;
        if (g.flip) fd = kd - 1 - fd;
        int64_t i;
        if (g.conv == GM_CONV_DGRAD) { // dx at op gathers dy at (op + pad - fd * dil) / stride
            const int64_t at = (int64_t)op + g.pad[d] - (int64_t)fd * g.dil[d];
            if (at < 0 || at % g.stride[d] != 0) return false;
            i = at / g.stride[d];
        } else {
            i = (int64_t)op * g.stride[d] - g.pad[d] + (int64_t)fd * g.dil[d];
        }
        if (i < 0 || i >= g.xsp[d]) return false;
        o += i * g.x_ssp[d];
    }
    *off = o + (int64_t)pos * g.x_sn; // pos: the image
    return true;
}

// A convolution's a[m, k] (output position m, field element k) as gm_conv_gather; false
// past the matrix too (m >= M or k >= K read as 0).
PW_FN bool gm_conv_a_offset(const gm_program& g, int64_t m, int64_t k, int64_t* off) {
    return m < g.m && k < g.k && gm_conv_gather(g, m, k, off);
}

// Offset in w of b[k, n] (field element k, output channel n).
PW_FN int64_t gm_conv_b_offset(const gm_program& g, int64_t k, int64_t n) {
    uint32_t c, f;
    gm_conv_field(g, k, &c, &f);
    int64_t o = n * g.w_sk + (int64_t)c * g.w_sc;
PW_UNROLL
    for (int d = GM_MAX_SPATIAL - 1; d >= 0; --d) {
        if (d >= g.nsp) continue;
        const uint32_t kd = (uint32_t)g.ker[d];
        o += (int64_t)(f % kd) * g.w_ssp[d];
        f /= kd;
    }
    return o;
}

// A weight gradient's a[m, k] (gm_program.h): dy at output channel m, position k =
// (n, o...).
PW_FN int64_t gm_wgrad_a_offset(const gm_program& g, int64_t m, int64_t k) {
    int64_t pos = k, off = m * g.w_sk;
PW_UNROLL
    for (int d = GM_MAX_SPATIAL - 1; d >= 0; --d) {
        if (d >= g.nsp) continue;
        off += (pos % g.osp[d]) * g.w_ssp[d];
        pos /= g.osp[d];
    }
    return off + pos * g.w_sc;
}

// a[m, k] and b[k, n] of batch offsets a_off and b_off (a convolution's group's: its
// first channel and filter), in fp32 (0 outside), any layout.
PW_FN float gm_a_at(const gm_program& g, int adt, int64_t a_off, int64_t m, int64_t k) {
    if (g.conv == GM_CONV_WGRAD)
        return m < g.m && k < g.k ? load_one(g.a, adt, a_off + gm_wgrad_a_offset(g, m, k)) : 0.0f;
    if (g.conv) {
        int64_t off;
        return gm_conv_a_offset(g, m, k, &off) ? load_one(g.a, adt, a_off + off) : 0.0f;
    }
    return m < g.m && k < g.k ? load_one(g.a, adt, a_off + m * g.a_sm + k * g.a_sk) : 0.0f;
}

PW_FN float gm_b_at(const gm_program& g, int bdt, int64_t b_off, int64_t k, int64_t n) {
    if (k >= g.k || n >= g.n) return 0.0f;
    if (g.conv == GM_CONV_WGRAD) {
        int64_t off; // its b: x at position k's receptive-field element n
        return gm_conv_gather(g, k, n, &off) ? load_one(g.b, bdt, b_off + off) : 0.0f;
    }
    const int64_t at = g.conv ? gm_conv_b_offset(g, k, n) : k * g.b_sk + n * g.b_sn;
    return load_one(g.b, bdt, b_off + at);
}

// Whether a batch is a group of a forward convolution or a data gradient, whose product's
// columns are that group's run of the output's channels (gm_program.h).
PW_FN bool gm_grouped_cols(const gm_program& g) {
    return GM_GROUPED && g.groups > 1 && (g.conv == GM_CONV_FPROP || g.conv == GM_CONV_DGRAD);
}

// The epilogue on columns c0 .. c0 + PW_VEC (fewer at the product's row's end) of row m of
// batch `batch`'s product, the product's values at v (PW_VEC readable floats): row
// batch * M + m of the space, or, for a group's product (gm_grouped_cols), row m from
// column batch * N on (the space's rows are groups x N long).
template <int S, class Prog>
PW_FN void gm_epilogue_step(const gm_program& g, int64_t batch, int64_t m, int64_t c0,
                            const float* v) {
    const bool cols = gm_grouped_cols(g);
    const int64_t row = cols ? m : batch * g.m + m, first = cols ? batch * g.n : 0;
    GemmAt at;
    at.pos.row = row;
    at.pos.c0 = first + c0;
    at.pos.cnt = g.n - c0 < PW_VEC ? (int)(g.n - c0) : PW_VEC;
    at.pos.e = row * (cols ? g.n * g.groups : g.n) + first + c0;
    at.pos.nd = Prog::ndim(g.ep);
    at.v = v;
    at.acc_in = g.acc_in;
    float r[PW_SLOTS][PW_VEC];
    pw_load_inputs<S, Prog>(g.ep, at, r);
    pw_run<S, Prog>(g.ep, at, r);
}

// ---- split-k: which range of a tile arrives last (gm_program.h) ------------------------

// Blocks of a launch (units: gm_kernels.h, gm_unit_of): (range, tile) units where k is
// split, tiles otherwise.
PW_FN int64_t gm_units(const gm_program& g) {
    const int64_t tiles = g.batches * g.tiles_m * g.tiles_n;
    return g.splits > 1 ? tiles * g.splits : tiles;
}

// One range's arrival at its tile's word (W: unsigned long long), by one thread of its
// block, after its partial is written and fenced: true for the tile's last range, which
// sets the word back to 0.  A word that carries another nonce (0, or whatever the
// workspace held) is claimed by compare-and-swap; one that carries this launch's only
// ever grows until the last range arrives, so it is counted by an add: at most one
// failed swap a range, however many arrive at once.  W a template parameter so the host
// emulation (its own atomics) and the kernels share this code.
template <class W>
PW_FN bool gm_arrive(W* word, W nonce, int splits) {
    const W tag = nonce << 8;
    W cur = *(volatile W*)word, now;
    for (;;) {
        if ((cur & ~(W)0xff) == tag) {
            now = atomicAdd(word, (W)1) + 1;
            break;
        }
        const W seen = atomicCAS(word, cur, tag | 1);
        if (seen == cur) {
            now = tag | 1;
            break;
        }
        cur = seen;
    }
    if ((int)(now & 0xff) < splits) return false;
    atomicExch(word, (W)0);
    return true;
}

#endif
