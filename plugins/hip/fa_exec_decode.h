// fa_exec_decode.h — what the decode path's kernels (fa_kernels_decode.h) share with the
// host emulation: which (b, key head, key range) a block takes, its packed rows, the keys
// each sees, and where the ranges' partial rows lie in the workspace (fa_program.h).
#ifndef HIPDNN_HIP_FA_EXEC_DECODE_H
#define HIPDNN_HIP_FA_EXEC_DECODE_H

#include "fa_exec.h"

// A decode block: sample b, key / value head g, key range s; the sample's lengths, the
// keys [klo, khi) any of its rows sees within the range (both 0 when none), the scale.
struct FdBlock {
    int64_t b, g, s, lq, lkv, klo, khi;
    float scale2;
};

// Range s's keys: [s * split_keys, (s + 1) * split_keys).
PW_FN void fd_range(const fa_program& p, int64_t s, int64_t* lo, int64_t* hi) {
    *lo = s * p.split_keys;
    *hi = *lo + p.split_keys;
}

// Row i's keys within range s: [*lo, *hi), empty (lo == hi) past L_q or outside it.
PW_FN void fd_row_keys(const fa_program& p, const FdBlock& k, int64_t i, int64_t* lo, int64_t* hi) {
    int64_t a, e, ra, re;
    fa_bounds(p, k.lq, k.lkv, i, &a, &e);
    fd_range(p, k.s, &ra, &re);
    a = a > ra ? a : ra;
    e = e < re ? e : re;
    if (i >= k.lq || a >= e) a = e = 0;
    *lo = a;
    *hi = e;
}

PW_FN FdBlock fd_block(const fa_program& p, int64_t bid) {
    FdBlock k;
    const int64_t bg = bid / p.splits;
    k.s = bid - bg * p.splits;
    k.b = bg / p.hk;
    k.g = bg - k.b * p.hk;
    fa_lengths(p, k.b, &k.lq, &k.lkv);
    k.scale2 = fa_scale_log2(p);
    k.klo = k.khi = 0;
    // the rows' keys grow with i (fa_bounds): the first row's start, the last one's end,
    // within the range
    const int64_t last = (p.sq < k.lq ? p.sq : k.lq) - 1;
    if (last < 0) return k;
    int64_t a, e, ra, re, unused;
    fa_bounds(p, k.lq, k.lkv, 0, &a, &unused);
    fa_bounds(p, k.lq, k.lkv, last, &unused, &e);
    fd_range(p, k.s, &ra, &re);
    a = a > ra ? a : ra;
    e = e < re ? e : re;
    if (a < e) {
        k.klo = a;
        k.khi = e;
    }
    return k;
}

// Packed row r of a block (r < group * sq): its query head and query.
PW_FN void fd_row_of(const fa_program& p, const FdBlock& k, int64_t r, int64_t* h, int64_t* i) {
    const int64_t hh = r / p.sq;
    *h = k.g * p.group + hh;
    *i = r - hh * p.sq;
}

// The row (b, h, i) among the B * H_q * S_q rows, and their count.
PW_FN int64_t fd_row_id(const fa_program& p, int64_t b, int64_t h, int64_t i) {
    return (b * p.hq + h) * p.sq + i;
}

PW_FN int64_t fd_rows(const fa_program& p) { return p.b * p.hq * p.sq; }

// Range s's partial o of a row (D_v floats), and its m (base 2) and l.
PW_FN float* fd_part_o(const fa_program& p, int64_t s, int64_t row) {
    return p.part + (s * fd_rows(p) + row) * p.dv;
}

PW_FN float* fd_part_ml(const fa_program& p, int64_t s, int64_t row) {
    return p.part + p.splits * fd_rows(p) * p.dv + (s * fd_rows(p) + row) * 2;
}

// The ranges' maximum M and sum L of a row, in range order; a range that saw no key has
// m = -inf, l = 0 and weighs 0.
PW_FN void fd_combine_ml(const fa_program& p, int64_t row, float* mx, float* sum) {
    float m = -__builtin_huge_valf(), l = 0.0f;
    for (int64_t s = 0; s < p.splits; ++s) m = fmaxf(m, fd_part_ml(p, s, row)[0]);
    for (int64_t s = 0; m != -__builtin_huge_valf() && s < p.splits; ++s) {
        const float* ml = fd_part_ml(p, s, row);
        if (ml[0] != -__builtin_huge_valf()) l = fmaf(ml[1], exp2f(ml[0] - m), l);
    }
    *mx = m;
    *sum = l;
}

// Range s's weight in the row whose maximum is m.
PW_FN float fd_weight(const fa_program& p, int64_t s, int64_t row, float m) {
    const float ms = fd_part_ml(p, s, row)[0];
    return ms == -__builtin_huge_valf() ? 0.0f : exp2f(ms - m);
}

// Which (b, h, i) row id `row` is.
PW_FN void fd_row_coords(const fa_program& p, int64_t row, int64_t* b, int64_t* h, int64_t* i) {
    const int64_t bh = row / p.sq;
    *i = row - bh * p.sq;
    *b = bh / p.hq;
    *h = bh - *b * p.hq;
}

#endif
