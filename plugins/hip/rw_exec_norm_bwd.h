// rw_exec_norm_bwd.h — one thread's phases of a norm backward row (RW_NORM_BWD): xhat and
// g with their sums, dx, and the sums dscale and dbias come from (per row, or column parts);
// also the 16-bit rows held packed.  Included by rw_exec.h only, after rw_exec_norm.h (whose
// rw_unpack and wp_param it uses).
#ifndef HIPDNN_HIP_RW_EXEC_NORM_BWD_H
#define HIPDNN_HIP_RW_EXEC_NORM_BWD_H

// ---- norm backward (RW_NORM_BWD) ------------------------------------------------------------
// A row is one statistic's elements.  Phase 1 computes xhat and g = dy * gamma of the
// thread's vectors (kept in registers when V > 0) and its partial sums; the group combines
// them; phase 2 writes dx.  Column parts (RW_F_COL_PARTS, V of 1 or 2) accumulate dy * xhat
// and dy per column over every row the group takes, in the thread's registers, and are
// stored once at the end: the dscale and dbias of a layer / RMS norm without a second pass
// over x and dy.

// The row's mean (0 for RMS) and inv_variance, as given.
PW_FN void nb_stats(const rw_program& p, const RwRowAt& at, float* mean, float* inv) {
    *mean = p.mode == RW_RMS ? 0.0f : load_one(p.mean.ptr, p.mean.dtype, at.mean);
    *inv = load_one(p.inv_var.ptr, p.inv_var.dtype, at.inv_var);
}

// xhat = (x - mean) * inv in x's place and g = dy * (scale + g1) of one vector, its x, dy
// and scale loaded (scale zeros where dx is not written): the arithmetic both backward
// kernels share, the fp32-holding one (nb_vec) and the 16-bit one (nbp_vec).
PW_FN void nb_xhat_g(const rw_program& p, float mean, float inv, const float* sc, float* xh,
                     const float* dyv, float* g) {
    const float g1 = (p.flags & RW_F_GAMMA1) ? 1.0f : 0.0f;
PW_UNROLL
    for (int j = 0; j < PW_VEC; ++j) {
        xh[j] = (xh[j] - mean) * inv;
        g[j] = dyv[j] * (sc[j] + g1);
    }
}

// xhat and g of vector k (cnt columns), and the four sums: g, g * xhat, dy * xhat, dy.
// DT >= 0: the fast way (x, dy and dx whole aligned vectors of that type, scale a
// contiguous row).  Without dx (no RW_F_STORE_Y) scale is not read: g's sums are dx's.
template <int DT = -1>
PW_FN void nb_vec(const rw_program& p, const RwRowAt& at, int64_t k, int cnt, float mean,
                  float inv, float* xh, float* g, float* dyv, float* sums) {
    float sc[PW_VEC];
    rw_ld<DT>(p, p.x, at.x, k * PW_VEC, cnt, 0.0f, xh);
    rw_ld<DT>(p, p.dy, at.dy, k * PW_VEC, cnt, 0.0f, dyv);
    if (p.flags & (RW_F_STORE_Y | RW_F_EPILOGUE)) {
        rw_ld_param<DT>(p, p.scale, at.scale, k * PW_VEC, cnt, sc);
    } else {
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) sc[j] = 0.0f;
    }
    nb_xhat_g(p, mean, inv, sc, xh, dyv, g);
PW_UNROLL
    for (int j = 0; j < PW_VEC; ++j)
        if (j < cnt) {
            sums[0] += g[j];
            sums[1] += g[j] * xh[j];
            sums[2] += dyv[j] * xh[j];
            sums[3] += dyv[j];
        }
}

// Phase 1.  cp1 / cp2: the thread's column parts (V vectors), added to when `parts`.
template <int V, int DT = -1>
PW_FN void nb_load(const rw_program& p, const RwRowAt& at, int t, int G, float mean, float inv,
                   RwRow<V>& xh, RwRow<V>& g, float* sums, float (*cp1)[PW_VEC],
                   float (*cp2)[PW_VEC], bool parts) {
PW_UNROLL
    for (int i = 0; i < 4; ++i) sums[i] = 0.0f;
    if (V > 0) {
PW_UNROLL
        for (int v = 0; v < (V > 0 ? V : 1); ++v) {
            const int64_t k = t + (int64_t)v * G;
            const int cnt = rw_vec_count(p.cols, k);
            if (cnt == 0) continue;
            float dyv[PW_VEC];
            nb_vec<DT>(p, at, k, cnt, mean, inv, xh.v[v], g.v[v], dyv, sums);
            if (parts)
PW_UNROLL
                for (int j = 0; j < PW_VEC; ++j) {
                    cp1[v][j] += dyv[j] * xh.v[v][j];
                    cp2[v][j] += dyv[j];
                }
        }
    } else {
        float x[PW_VEC], gg[PW_VEC], dyv[PW_VEC];
        for (int64_t k = t; k * PW_VEC < p.cols; k += G)
            nb_vec<DT>(p, at, k, rw_vec_count(p.cols, k), mean, inv, x, gg, dyv, sums);
    }
}

// dx of one vector: stored (RW_F_STORE_Y), then the epilogue over it (S > 0 and
// RW_F_EPILOGUE: dx in slot p.ep_y, read as stored, as a norm's y is).
template <int S, int DT = -1>
PW_FN void nb_finish_vec(const rw_program& p, const RwRowAt& at, const int64_t* in_off,
                         const int64_t* out_off, int64_t k, int cnt, float* dx) {
    const bool ep = S > 0 && (p.flags & RW_F_EPILOGUE);
    if (ep)
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) dx[j] = rw_round(p.y.dtype, dx[j]);
    if (p.flags & RW_F_STORE_Y) rw_st<DT>(p, p.y, at.y, k * PW_VEC, cnt, dx);
    if (ep) {
        float r[PW_SLOTS][PW_VEC];
        const RwVec rv{in_off, out_off, k * PW_VEC, cnt};
        put_slot<S>(p.ep_y, r, dx);
        nm_epilogue_loads<S>(p, rv, r);
        float acc[PW_VEC], o[PW_VEC];
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) acc[j] = 0.0f;
        PwInterpreted::run<S>(p.ep, rv, r, acc, o);
    }
}

// Phase 2: dx = inv * (g - s_g / n - xhat * s_gx / n), without the s_g term for RMS (no
// mean was taken); S: the epilogue's slots (0 without one).
template <int V, int DT = -1, int S = 0>
PW_FN void nb_store(const rw_program& p, const RwRowAt& at, int t, int G, float s_g, float s_gx,
                    float mean, float inv, RwRow<V>& xh, RwRow<V>& g) {
    const float a = p.mode == RW_RMS ? 0.0f : s_g / (float)p.cols, b = s_gx / (float)p.cols;
    int64_t in_off[S > 0 ? PW_MAX_INPUTS : 1], out_off[S > 0 ? PW_MAX_OUTPUTS : 1];
    if (S > 0 && (p.flags & RW_F_EPILOGUE)) nm_epilogue_rows(p, at.row, in_off, out_off);
    float dx[PW_VEC];
    if (V > 0) {
PW_UNROLL
        for (int v = 0; v < (V > 0 ? V : 1); ++v) {
            const int64_t k = t + (int64_t)v * G;
            const int cnt = rw_vec_count(p.cols, k);
            if (cnt == 0) continue;
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j) dx[j] = inv * (g.v[v][j] - a - xh.v[v][j] * b);
            nb_finish_vec<S, DT>(p, at, in_off, out_off, k, cnt, dx);
        }
    } else {
        float x[PW_VEC], gg[PW_VEC], dyv[PW_VEC], unused[4];
        for (int64_t k = t; k * PW_VEC < p.cols; k += G) {
            const int cnt = rw_vec_count(p.cols, k);
            nb_vec<DT>(p, at, k, cnt, mean, inv, x, gg, dyv, unused);
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j) dx[j] = inv * (gg[j] - a - x[j] * b);
            nb_finish_vec<S, DT>(p, at, in_off, out_off, k, cnt, dx);
        }
    }
}

// A row's sums of dy * xhat and dy (RW_F_ROW_SUMS), from its group's first thread.
PW_FN void nb_store_sums(const rw_program& p, const RwRowAt& at, float dyx, float dy) {
    if (p.sum_dyx.ptr) store_one(p.sum_dyx.ptr, p.sum_dyx.dtype, at.sum_dyx, dyx);
    if (p.sum_dy.ptr) store_one(p.sum_dy.ptr, p.sum_dy.dtype, at.sum_dy, dy);
}

template <int V>
PW_FN void nb_zero_parts(float (*cp1)[PW_VEC], float (*cp2)[PW_VEC]) {
PW_UNROLL
    for (int v = 0; v < (V > 0 ? V : 1); ++v)
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) cp1[v][j] = cp2[v][j] = 0.0f;
}

// The rows group q of a norm backward takes: lo + i for i = g, g + step, ... below n.  With
// column parts (RW_F_COL_PARTS) a group takes rows of one set only (rw_program.part_sets),
// else the grid strides over every row.  Every group of the grid loops ceil(n / step)
// times (a row past the end redoes the last row and stores nothing).
struct NbWalk {
    int64_t lo, g, step, n;
    bool group_valid; // a group past the grid's parts takes no row
};

PW_FN NbWalk nb_walk(const rw_program& p, int64_t q, int64_t grid_groups) {
    if (!(p.flags & RW_F_COL_PARTS)) return NbWalk{0, q, grid_groups, p.rows, true};
    const int64_t set = q / p.part_groups;
    return NbWalk{set * p.set_rows, q - set * p.part_groups, p.part_groups, p.set_rows,
                  set < p.part_sets};
}

// Row i0 + g of the walk, or the last row where that is past the end (valid false).
PW_FN int64_t nb_walk_row(const rw_program& p, const NbWalk& w, int64_t i0, bool* valid) {
    *valid = w.group_valid && i0 + w.g < w.n;
    return *valid ? w.lo + i0 + w.g : p.rows - 1;
}

// The column parts of group `grp` (fp32, [part_sets * part_groups, cols] packed).
template <int V>
PW_FN void nb_store_parts(const rw_program& p, int64_t grp, int t, int G, float (*cp1)[PW_VEC],
                          float (*cp2)[PW_VEC]) {
    if (grp >= p.part_groups * p.part_sets) return;
PW_UNROLL
    for (int v = 0; v < (V > 0 ? V : 1); ++v) {
        const int64_t k = t + (int64_t)v * G;
        const int cnt = rw_vec_count(p.cols, k);
        const int64_t at = grp * p.cols + k * PW_VEC;
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j)
            if (j < cnt) {
                if (p.sum_dyx.ptr) static_cast<float*>(p.sum_dyx.ptr)[at + j] = cp1[v][j];
                if (p.sum_dy.ptr) static_cast<float*>(p.sum_dy.ptr)[at + j] = cp2[v][j];
            }
    }
}


// ---- norm backward of 16-bit rows held packed (the fast way, V of 1 or 2) -------------------
// x and dy held as loaded (4 registers a vector each, where xhat and g in fp32 took 16), with
// xhat and g computed again for dx; rows one dim and the scale's type known where ONE and PT
// say so, as the packed norm's.  The fp32-holding kernel took 123 registers, two blocks of 256
// threads an SM, and 0.84x PyTorch's layernorm backward (RESULTS.md, fourteenth run).  Same
// arithmetic as nb_vec / nb_store, element for element.

template <int V>
struct NbPacked {
    uint4 x[V], dy[V];
};

// Phase 1a: load the thread's vectors of x and dy (the kernel does so for the next row
// while the group combines this one's sums).
template <int V>
PW_FN void nbp_fetch(const rw_program& p, const RwRowAt& at, int t, int G, NbPacked<V>& r) {
    const int64_t nvec = p.cols / PW_VEC;
PW_UNROLL
    for (int v = 0; v < V; ++v) {
        const int64_t k = t + (int64_t)v * G;
        if (k >= nvec) continue;
        r.x[v] = *reinterpret_cast<const uint4*>(static_cast<const unsigned short*>(p.x.ptr) +
                                                 at.x + k * PW_VEC);
        r.dy[v] = *reinterpret_cast<const uint4*>(static_cast<const unsigned short*>(p.dy.ptr) +
                                                  at.dy + k * PW_VEC);
    }
}

// Vector v of the thread's held x and dy, unpacked to xhat and dy (in x's and dy's place)
// and g = dy * (scale + g1) of it (scale read only when `scaled`: without dx it is not).
template <int V, int DT, int PT>
PW_FN void nbp_vec(const rw_program& p, const RwRowAt& at, const NbPacked<V>& r, int v, int64_t k,
                   float mean, float inv, bool scaled, float* xh, float* dyv, float* g) {
    float sc[PW_VEC];
    rw_unpack<DT>(r.x[v], xh);
    rw_unpack<DT>(r.dy[v], dyv);
    if (scaled) {
        wp_param<PT>(p, p.scale, at.scale, k, sc);
    } else {
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) sc[j] = 0.0f;
    }
    nb_xhat_g(p, mean, inv, sc, xh, dyv, g);
}

// Phase 1b: the four sums and the column parts of the vectors held.
template <int V, int DT, int PT>
PW_FN void nbp_sums(const rw_program& p, const RwRowAt& at, int t, int G, float mean, float inv,
                    const NbPacked<V>& r, float* sums, float (*cp1)[PW_VEC],
                    float (*cp2)[PW_VEC], bool parts) {
    const int64_t nvec = p.cols / PW_VEC;
    const bool dx = (p.flags & RW_F_STORE_Y) != 0; // without dx, scale is not read
PW_UNROLL
    for (int i = 0; i < 4; ++i) sums[i] = 0.0f;
PW_UNROLL
    for (int v = 0; v < V; ++v) {
        const int64_t k = t + (int64_t)v * G;
        if (k >= nvec) continue;
        float xh[PW_VEC], dyv[PW_VEC], g[PW_VEC];
        nbp_vec<V, DT, PT>(p, at, r, v, k, mean, inv, dx, xh, dyv, g);
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) {
            sums[0] += g[j];
            sums[1] += g[j] * xh[j];
            sums[2] += dyv[j] * xh[j];
            sums[3] += dyv[j];
            if (parts) {
                cp1[v][j] += dyv[j] * xh[j];
                cp2[v][j] += dyv[j];
            }
        }
    }
}

// Phase 2: dx = inv * (g - s_g / n - xhat * s_gx / n), as nb_store.
template <int V, int DT, int PT>
PW_FN void nbp_store(const rw_program& p, const RwRowAt& at, int t, int G, float s_g, float s_gx,
                     float mean, float inv, const NbPacked<V>& r) {
    const int64_t nvec = p.cols / PW_VEC;
    const float a = p.mode == RW_RMS ? 0.0f : s_g / (float)p.cols, b = s_gx / (float)p.cols;
PW_UNROLL
    for (int v = 0; v < V; ++v) {
        const int64_t k = t + (int64_t)v * G;
        if (k >= nvec) continue;
        float xh[PW_VEC], dyv[PW_VEC], g[PW_VEC];
        nbp_vec<V, DT, PT>(p, at, r, v, k, mean, inv, true, xh, dyv, g);
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) xh[j] = inv * (g[j] - a - xh[j] * b);
        store_vec(p.y.ptr, DT, at.y + k * PW_VEC, xh);
    }
}

#endif /* HIPDNN_HIP_RW_EXEC_NORM_BWD_H */
