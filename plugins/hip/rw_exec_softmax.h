// rw_exec_softmax.h — one thread's phases of a softmax row (RW_SOFTMAX): its max, its sum
// of exp, and the store once the group has combined each.  Included by rw_exec.h only.
#ifndef HIPDNN_HIP_RW_EXEC_SOFTMAX_H
#define HIPDNN_HIP_RW_EXEC_SOFTMAX_H

// ---- softmax ---------------------------------------------------------------------------------

// Phase 1: load the row (V > 0) and the thread's max.
template <int V, int DT = -1>
PW_FN float sm_max(const rw_program& p, const RwRowAt& at, int t, int G, RwRow<V>& r) {
    float m = -RW_INF;
    if (V > 0) {
PW_UNROLL
        for (int v = 0; v < (V > 0 ? V : 1); ++v) {
            const int64_t k = t + (int64_t)v * G;
            const int cnt = rw_vec_count(p.cols, k);
            if (cnt > 0) rw_ld<DT>(p, p.x, at.x, k * PW_VEC, cnt, -RW_INF, r.v[v]);
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j)
                if (j < cnt) m = maximum(m, r.v[v][j]);
        }
    } else {
        float x[PW_VEC];
        for (int64_t k = t; k * PW_VEC < p.cols; k += G) {
            const int cnt = rw_vec_count(p.cols, k);
            rw_ld<DT>(p, p.x, at.x, k * PW_VEC, cnt, -RW_INF, x);
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j)
                if (j < cnt) m = maximum(m, x[j]);
        }
    }
    return m;
}

// exp(x - m), each step rounded as the graph's tensors are.
PW_FN float sm_exp(const rw_program& p, float x, float m) {
    return rw_round(p.round[2], expf(rw_round(p.round[1], x - m)));
}

// Phase 2: e = exp(x - m) in place of x (V > 0) and the thread's sum of e.
template <int V, int DT = -1>
PW_FN float sm_sum(const rw_program& p, const RwRowAt& at, int t, int G, float m, RwRow<V>& r) {
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
                    r.v[v][j] = sm_exp(p, r.v[v][j], m);
                    s[j] += r.v[v][j];
                }
        }
    } else {
        float x[PW_VEC];
        for (int64_t k = t; k * PW_VEC < p.cols; k += G) {
            const int cnt = rw_vec_count(p.cols, k);
            rw_ld<DT>(p, p.x, at.x, k * PW_VEC, cnt, 0.0f, x);
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j)
                if (j < cnt) s[j] += sm_exp(p, x[j], m);
        }
    }
    float a = s[0];
PW_UNROLL
    for (int j = 1; j < PW_VEC; ++j) a += s[j];
    return a;
}

// Phase 3: y = e / s, as e times 1 / s (within an ulp of the division, which costs a
// dozen instructions an element on a GPU).
template <int V, int DT = -1>
PW_FN void sm_store(const rw_program& p, const RwRowAt& at, int t, int G, float m, float s,
                    RwRow<V>& r) {
    const float inv = 1.0f / s;
    if (V > 0) {
PW_UNROLL
        for (int v = 0; v < (V > 0 ? V : 1); ++v) {
            const int64_t k = t + (int64_t)v * G;
            const int cnt = rw_vec_count(p.cols, k);
            if (cnt == 0) continue;
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j) r.v[v][j] = r.v[v][j] * inv;
            rw_st<DT>(p, p.y, at.y, k * PW_VEC, cnt, r.v[v]);
        }
    } else {
        float x[PW_VEC];
        for (int64_t k = t; k * PW_VEC < p.cols; k += G) {
            const int cnt = rw_vec_count(p.cols, k);
            rw_ld<DT>(p, p.x, at.x, k * PW_VEC, cnt, 0.0f, x);
PW_UNROLL
            for (int j = 0; j < PW_VEC; ++j) x[j] = sm_exp(p, x[j], m) * inv;
            rw_st<DT>(p, p.y, at.y, k * PW_VEC, cnt, x);
        }
    }
}

#endif /* HIPDNN_HIP_RW_EXEC_SOFTMAX_H */
