// rw_exec_norm.h — one thread's phases of a norm row (RW_NORM: layer, RMS, instance, batch):
// its sums, the statistics, and y with the pointwise epilogue where there is one; also the
// rows held packed in their 16-bit storage (RW_F_PACKED).  Included by rw_exec.h only.
#ifndef HIPDNN_HIP_RW_EXEC_NORM_H
#define HIPDNN_HIP_RW_EXEC_NORM_H

// ---- norms -------------------------------------------------------------------------------------

// Phase 1: load the row (V > 0); the thread's sum of x (layer) or of x^2 (RMS).
template <int V, int DT = -1>
PW_FN float nm_sum(const rw_program& p, const RwRowAt& at, int t, int G, RwRow<V>& r) {
    float s[PW_VEC];
PW_UNROLL
    for (int j = 0; j < PW_VEC; ++j) s[j] = 0.0f;
    const bool rms = p.mode == RW_RMS;
    if (V > 0) {
PW_UNROLL
        for (int v = 0; v < (V > 0 ? V : 1); ++v) {
            const int64_t k = t + (int64_t)v * G;
            const int cnt = rw_vec_count(p.cols, k);
            if (cnt > 0) rw_ld<DT>(p, p.x, at.x, k * PW_VEC, cnt, 0.0f, r.v[v]);
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j)
                if (j < cnt) s[j] += rms ? r.v[v][j] * r.v[v][j] : r.v[v][j];
        }
    } else {
        float x[PW_VEC];
        for (int64_t k = t; k * PW_VEC < p.cols; k += G) {
            const int cnt = rw_vec_count(p.cols, k);
            rw_ld<DT>(p, p.x, at.x, k * PW_VEC, cnt, 0.0f, x);
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j)
                if (j < cnt) s[j] += rms ? x[j] * x[j] : x[j];
        }
    }
    float a = s[0];
PW_UNROLL
    for (int j = 1; j < PW_VEC; ++j) a += s[j];
    return a;
}

// Phase 2 (mean-centred norms): the thread's sum of (x - mean)^2, from its registers or
// from memory again.
template <int V, int DT = -1>
PW_FN float nm_var(const rw_program& p, const RwRowAt& at, int t, int G, float mean,
                   const RwRow<V>& r) {
    float s[PW_VEC];
PW_UNROLL
    for (int j = 0; j < PW_VEC; ++j) s[j] = 0.0f;
    if (V > 0) {
PW_UNROLL
        for (int v = 0; v < (V > 0 ? V : 1); ++v) {
            const int cnt = rw_vec_count(p.cols, t + (int64_t)v * G);
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j)
                if (j < cnt) {
                    const float d = r.v[v][j] - mean;
                    s[j] += d * d;
                }
        }
    } else {
        float x[PW_VEC];
        for (int64_t k = t; k * PW_VEC < p.cols; k += G) {
            const int cnt = rw_vec_count(p.cols, k);
            rw_ld<DT>(p, p.x, at.x, k * PW_VEC, cnt, 0.0f, x);
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j)
                if (j < cnt) {
                    const float d = x[j] - mean;
                    s[j] += d * d;
                }
        }
    }
    float a = s[0];
PW_UNROLL
    for (int j = 1; j < PW_VEC; ++j) a += s[j];
    return a;
}

// The statistics of a row, from its group's first thread.
PW_FN void nm_store_stats(const rw_program& p, const RwRowAt& at, float mean, float inv) {
    if (p.flags & RW_F_MEAN) store_one(p.mean.ptr, p.mean.dtype, at.mean, mean);
    if (p.flags & RW_F_INV_VAR) store_one(p.inv_var.ptr, p.inv_var.dtype, at.inv_var, inv);
}

// A vector of a row, for the epilogue's loads and stores (pw_exec.h's pw_store finds the
// overload below through the argument's type).
struct RwVec {
    const int64_t* in_off;  // row offsets of the epilogue's inputs
    const int64_t* out_off; // and outputs
    int64_t c0;
    int cnt;
};

PW_FN void pw_store(const pw_program& p, const pw_instr& ins, const RwVec& at, const float* v) {
    rw_store8(p.dims, p.ndim, p.out[ins.a], at.out_off[ins.a], at.c0, at.cnt, v);
}

// The epilogue's inputs but the norm's y (already in slot p.ep_y), for vector `at`.
template <int S>
PW_FN void nm_epilogue_loads(const rw_program& p, const RwVec& at, float (&r)[PW_SLOTS][PW_VEC]) {
PW_UNROLL
    for (int i = 0; i < S; ++i)
        if (i < p.ep.nin && i != p.ep_y)
            rw_load8(p.ep.dims, p.ep.ndim, p.ep.in[i], at.in_off[i], at.c0, at.cnt, 0.0f, r[i]);
}

// y of one vector from x (v in place), then its store and the epilogue.
template <int S, int DT = -1>
PW_FN void nm_finish_vec(const rw_program& p, const RwRowAt& at, const int64_t* in_off,
                         const int64_t* out_off, int64_t k, int cnt, float mean, float inv,
                         float* v) {
    float sc[PW_VEC], b[PW_VEC];
    rw_ld_param<DT>(p, p.scale, at.scale, k * PW_VEC, cnt, sc);
    if (p.flags & RW_F_BIAS) {
        rw_ld_param<DT>(p, p.bias, at.bias, k * PW_VEC, cnt, b);
    } else {
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) b[j] = 0.0f;
    }
    const float g1 = (p.flags & RW_F_GAMMA1) ? 1.0f : 0.0f;
    // an epilogue reads y as stored (rounded to y's type); the store rounds it anyway
    const bool round = S > 0 && (p.flags & RW_F_EPILOGUE);
PW_UNROLL
    for (int j = 0; j < PW_VEC; ++j) {
        const float y = (v[j] - mean) * inv * (sc[j] + g1) + b[j];
        v[j] = round ? rw_round(p.y.dtype, y) : y;
    }
    if (p.flags & RW_F_STORE_Y) rw_st<DT>(p, p.y, at.y, k * PW_VEC, cnt, v);
    if (S > 0 && (p.flags & RW_F_EPILOGUE)) {
        float r[PW_SLOTS][PW_VEC];
        const RwVec rv{in_off, out_off, k * PW_VEC, cnt};
        put_slot<S>(p.ep_y, r, v);
        nm_epilogue_loads<S>(p, rv, r);
        float acc[PW_VEC], o[PW_VEC];
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) acc[j] = 0.0f;
        PwInterpreted::run<S>(p.ep, rv, r, acc, o);
    }
}

// The epilogue's row offsets of row `row`.
PW_FN void nm_epilogue_rows(const rw_program& p, int64_t row, int64_t* in_off, int64_t* out_off) {
    uint32_t coord[RW_DIMS];
    rw_row_coords(p, row, coord);
    for (int i = 0; i < PW_MAX_INPUTS; ++i)
        in_off[i] = i < p.ep.nin ? rw_row_offset(p.ep.in[i], coord) : 0;
    for (int i = 0; i < PW_MAX_OUTPUTS; ++i)
        out_off[i] = i < p.ep.nout ? rw_row_offset(p.ep.out[i], coord) : 0;
}

// Phase 3: y for each of the thread's vectors (S: the epilogue's slots, 0 without one).
// mean is 0 for RMS norms.
template <int V, int S, int DT = -1>
PW_FN void nm_store(const rw_program& p, const RwRowAt& at, int t, int G, float mean, float inv,
                    RwRow<V>& r) {
    int64_t in_off[PW_MAX_INPUTS], out_off[PW_MAX_OUTPUTS];
    if (S > 0 && (p.flags & RW_F_EPILOGUE)) nm_epilogue_rows(p, at.row, in_off, out_off);
    if (V > 0) {
PW_UNROLL
        for (int v = 0; v < (V > 0 ? V : 1); ++v) {
            const int64_t k = t + (int64_t)v * G;
            const int cnt = rw_vec_count(p.cols, k);
            if (cnt > 0) nm_finish_vec<S, DT>(p, at, in_off, out_off, k, cnt, mean, inv, r.v[v]);
        }
    } else {
        float x[PW_VEC];
        for (int64_t k = t; k * PW_VEC < p.cols; k += G) {
            const int cnt = rw_vec_count(p.cols, k);
            rw_ld<DT>(p, p.x, at.x, k * PW_VEC, cnt, 0.0f, x);
            nm_finish_vec<S, DT>(p, at, in_off, out_off, k, cnt, mean, inv, x);
        }
    }
}

// The statistics from the combined sums: mean (0 for RMS) and 1 / sqrt(var + eps).
PW_FN float nm_mean(const rw_program& p, float sum) {
    return p.mode == RW_RMS ? 0.0f : sum / (float)p.cols;
}

PW_FN float nm_inv(const rw_program& p, float sum_sq) {
    return 1.0f / sqrtf(sum_sq / (float)p.cols + p.eps);
}


// ---- norm rows held packed (RW_F_PACKED, the fast way of 16-bit storage) ------------------
// Thread t of the row's L threads holds vectors t, t + L, ... of x as loaded (a 16-byte
// vector is 4 registers of 8 values) and unpacks them in each pass.  Every vector is whole
// and aligned (fast_dt), vectors past the row's end are skipped.

template <int NV>
struct RwPacked {
    uint4 q[NV];
};

template <int DT>
PW_FN void rw_unpack(const uint4& q, float* v) {
    const unsigned int w[4] = {q.x, q.y, q.z, q.w};
PW_UNROLL
    for (int k = 0; k < 4; ++k) {
        v[2 * k] = from16(DT, w[k] & 0xffffu);
        v[2 * k + 1] = from16(DT, w[k] >> 16);
    }
}

enum { WP_SUM = 1, WP_SUM_SQ = 2 };

// Phase 1: load the lane's vectors; their sum or sum of squares.
template <int NV, int DT, int WHAT, int L>
PW_FN float wp_load(const rw_program& p, const RwRowAt& at, int lane, RwPacked<NV>& r) {
    const int64_t nvec = p.cols / PW_VEC;
    float acc = 0.0f;
PW_UNROLL
    for (int i = 0; i < NV; ++i) {
        const int64_t k = lane + (int64_t)i * L;
        if (k >= nvec) continue;
        r.q[i] = *reinterpret_cast<const uint4*>(static_cast<const unsigned short*>(p.x.ptr) +
                                                 at.x + k * PW_VEC);
    }
PW_UNROLL
    for (int i = 0; i < NV; ++i) {
        if (lane + (int64_t)i * L >= nvec) continue;
        float v[PW_VEC];
        rw_unpack<DT>(r.q[i], v);
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j)
            acc = WHAT == WP_SUM ? acc + v[j] : fmaf(v[j], v[j], acc);
    }
    return acc;
}

// Norm phase 2 (mean-centred norms): the lane's sum of (x - mean)^2.
template <int NV, int DT, int L>
PW_FN float wp_var(const rw_program& p, int lane, float mean, const RwPacked<NV>& r) {
    const int64_t nvec = p.cols / PW_VEC;
    float acc = 0.0f;
PW_UNROLL
    for (int i = 0; i < NV; ++i) {
        if (lane + (int64_t)i * L >= nvec) continue;
        float v[PW_VEC];
        rw_unpack<DT>(r.q[i], v);
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) {
            const float d = v[j] - mean;
            acc = fmaf(d, d, acc);
        }
    }
    return acc;
}

// Vector k of a packed norm's scale or bias (storage type PT, or t's where -1) at the row's
// offset `at`: PW_VEC columns of a contiguous row, or the row's one value (RW_F_ROW_PARAMS).
template <int PT>
PW_FN void wp_param(const rw_program& p, const pw_tensor& t, int64_t at, int64_t k, float* v) {
    const int dt = PT >= 0 ? PT : t.dtype;
    if (p.flags & RW_F_ROW_PARAMS) {
        const float one = load_one(t.ptr, dt, at);
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) v[j] = one;
    } else {
        load_vec(t.ptr, dt, at + k * PW_VEC, v);
    }
}

// Norm phase 3: y for each of the lane's vectors (mean 0 for RMS norms).  PT: scale's and
// bias's storage type where the kernel knows it (kernel_names.c's param_type), -1 where it
// reads it from the tensors.
template <int NV, int DT, int L, int PT = -1>
PW_FN void wp_norm_store(const rw_program& p, const RwRowAt& at, int lane, float mean, float inv,
                         const RwPacked<NV>& r) {
    const int64_t nvec = p.cols / PW_VEC;
    const bool bias = (p.flags & RW_F_BIAS) != 0;
    const float g1 = (p.flags & RW_F_GAMMA1) ? 1.0f : 0.0f;
PW_UNROLL
    for (int i = 0; i < NV; ++i) {
        const int64_t k = lane + (int64_t)i * L;
        if (k >= nvec) continue;
        float v[PW_VEC], sc[PW_VEC], b[PW_VEC];
        wp_param<PT>(p, p.scale, at.scale, k, sc);
        if (bias) {
            wp_param<PT>(p, p.bias, at.bias, k, b);
        } else {
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j) b[j] = 0.0f;
        }
        rw_unpack<DT>(r.q[i], v);
PW_UNROLL
        for (int j = 0; j < PW_VEC; ++j) v[j] = (v[j] - mean) * inv * (sc[j] + g1) + b[j];
        store_vec(p.y.ptr, DT, at.y + k * PW_VEC, v);
    }
}

#endif /* HIPDNN_HIP_RW_EXEC_NORM_H */
