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

// The epilogue on columns c0 .. c0 + PW_VEC (fewer at the row's end) of row `row` of the
// space (batch * M + m), the product's values at v (PW_VEC readable floats).
template <int S, class Prog>
PW_FN void gm_epilogue_step(const gm_program& g, int64_t row, int64_t c0, const float* v) {
    GemmAt at;
    at.pos.row = row;
    at.pos.c0 = c0;
    at.pos.cnt = g.n - c0 < PW_VEC ? (int)(g.n - c0) : PW_VEC;
    at.pos.e = row * g.n + c0;
    at.pos.nd = Prog::ndim(g.ep);
    at.v = v;
    at.acc_in = g.acc_in;
    float r[PW_SLOTS][PW_VEC];
    pw_load_inputs<S, Prog>(g.ep, at, r);
    pw_run<S, Prog>(g.ep, at, r);
}

#endif
