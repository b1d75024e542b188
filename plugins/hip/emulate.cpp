// emulate.cpp — the device side of the HIP engine run on the host, for tests on machines
// without a GPU: built with the engine's host code (-DHIPE_HOST_EMULATION) into the test
// plugin libhip_emulated.so, engine "hip_emulated", host memory.  It runs pw_exec.h, the
// code each GPU thread runs, over every step of the iteration space, so the program
// compiler, the indexing and the numerics of the kernel are checked against the
// reference engine wherever the tests run.  The row-wise kernels (rw_exec.h) run the same
// way: the threads of a row one after the other, phase by phase, their partial results
// combined in the order the GPU combines them.  Not a product: never installed.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <type_traits>
#include <vector>

#include "hip_engine.h"

namespace {

struct float4 { float x, y, z, w; };
struct uint4 { unsigned int x, y, z, w; };
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }

inline float hd_half_to_float(unsigned short h) { return hipdnnSdkHalfToFloat(h); }
inline unsigned short hd_float_to_half(float f) { return hipdnnSdkFloatToHalf(f); }
inline float hd_bf16_to_float(unsigned short b) { return hipdnnSdkBfloat16ToFloat(b); }
inline unsigned short hd_float_to_bf16(float f) { return hipdnnSdkFloatToBfloat16(f); }
inline unsigned int hd_pack_half2(float lo, float hi) {
    return (unsigned int)hd_float_to_half(lo) | ((unsigned int)hd_float_to_half(hi) << 16);
}
inline unsigned int hd_pack_bf16x2(float lo, float hi) {
    return (unsigned int)hd_float_to_bf16(lo) | ((unsigned int)hd_float_to_bf16(hi) << 16);
}
inline float hd_rcp(float d) { return 1.0f / d; } // the kernels' is within 1 ulp of this

} // namespace

// A slot is read only after its input was loaded or a PUT wrote it (program.c emits them
// so), which gcc cannot see through the program's switches.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define PW_FN static inline
#define PW_HOST_FN static inline
#define PW_UNROLL _Pragma("GCC unroll 8")
#include "rw_exec.h"
#include "rs_exec.h"

extern "C" const char* hipe_vendor(void) { return "host emulation"; }

extern "C" bool hipe_probe(int* device_count, char* why, size_t len) {
    (void)why;
    (void)len;
    *device_count = 1;
    return true;
}

extern "C" bool hipe_get_device(int* device, char* why, size_t len) {
    (void)why;
    (void)len;
    *device = 0;
    return true;
}

extern "C" bool hipe_set_device(int device, char* why, size_t len) {
    if (device == 0) return true;
    snprintf(why, len, "emulation has only device 0, not %d", device);
    return false;
}

extern "C" bool hipe_sm_count(int device, int* count, char* why, size_t len) {
    (void)device;
    (void)why;
    (void)len;
    *count = 1;
    return true;
}

// Runs every thread of the grid in order, each as the kernel's thread does: the same
// per-thread function (pw_exec.h) with the interpreter's program.
template <int S>
static void run_grid(const pw_program& p, bool fast, int64_t blocks) {
    for (int64_t b = 0; b < blocks; ++b)
        for (int t = 0; t < PW_BLOCK; ++t) {
            if (fast)
                pw_fast_thread<S, HIPE_INTERP_FAST_U(S), PwInterpreted>(p, b, t, blocks);
            else
                pw_generic_thread<S, PwInterpreted>(p, b, t, blocks);
        }
}

extern "C" bool hipe_pointwise_launch(const pw_program* prog, int slots, bool fast,
                                      int64_t grid_cap, void* stream, char* why, size_t len) {
    (void)stream;
    (void)why;
    (void)len;
    const int S = slots <= 2 ? 2 : slots <= 4 ? 4 : PW_SLOTS;
    int64_t blocks = fast ? pw_fast_blocks(*prog, HIPE_INTERP_FAST_U(S))
                          : (pw_groups(*prog) + PW_BLOCK - 1) / PW_BLOCK;
    if (blocks > grid_cap) blocks = grid_cap;
    if (blocks < 1) blocks = 1;
    if (S == 2) run_grid<2>(*prog, fast, blocks);
    else if (S == 4) run_grid<4>(*prog, fast, blocks);
    else run_grid<PW_SLOTS>(*prog, fast, blocks);
    return true;
}

// Emulation runs the interpreter; the generated source is still written by plugin.c for
// HIPDNN_HIP_JIT_DUMP, which the tests compile with NVRTC where it is installed.
extern "C" bool hipe_jit_available(char* why, size_t len) {
    snprintf(why, len, "host emulation interprets");
    return false;
}

extern "C" bool hipe_jit_build(const char* source, int device, hipe_jit_kernels* kernels,
                               char* why, size_t len) {
    (void)source;
    (void)device;
    memset(kernels, 0, sizeof(*kernels));
    return hipe_jit_available(why, len);
}

extern "C" bool hipe_jit_launch(void* kernel, const pw_program* prog, int fast_u,
                                int64_t grid_cap, void* stream, char* why, size_t len) {
    (void)kernel;
    (void)prog;
    (void)fast_u;
    (void)grid_cap;
    (void)stream;
    snprintf(why, len, "host emulation interprets");
    return false;
}

// ---- the row-wise kernels ----------------------------------------------------------------

namespace {

// What group_combine (rowwise.hip) computes: an xor butterfly over up to 32 lanes, then the
// 32-lane groups' results folded in order.
template <int OP, class T>
T host_combine(const std::vector<T>& v, int G) {
    std::vector<T> w(v.begin(), v.begin() + G), n(G);
    const int lanes = G < 32 ? G : 32;
    for (int off = lanes >> 1; off > 0; off >>= 1) {
        for (int i = 0; i < G; ++i) n[i] = rd_op<OP>(w[i], w[i ^ off]);
        w.swap(n);
    }
    T r = w[0];
    for (int k = 1; k < G / 32; ++k) r = rd_op<OP>(r, w[32 * k]);
    return r;
}

template <int OP, int PRE, int DT>
void emulate_reduce_rows(const rw_program& p) {
    const int G = p.group;
    std::vector<typename RdAcc<OP>::T> part(G);
    const int64_t nrows = p.rows * p.splits;
    for (int64_t row = 0; row < nrows; ++row) {
        int64_t xrow, c0, c1;
        rd_part(p, row, &xrow, &c0, &c1);
        uint32_t coord[RW_DIMS];
        rw_row_coords(p, xrow, coord);
        const int64_t roff = rw_row_offset(p.x, coord);
        for (int t = 0; t < G; ++t) part[t] = rd_row_partial<OP, PRE, DT>(p, roff, c0, c1, t, G);
        rd_row_store(p, row, host_combine<OP>(part, G));
    }
}

template <int NV, int DT, int L, bool ONE, int PT>
void emulate_norm_packed(const rw_program& p) {
    std::vector<RwPacked<NV>> regs(L);
    std::vector<float> part(L);
    const bool rms = p.mode == RW_RMS;
    for (int64_t row = 0; row < p.rows; ++row) {
        const RwRowAt at = rw_row_at_t<ONE>(p, row);
        for (int l = 0; l < L; ++l)
            part[l] = rms ? wp_load<NV, DT, WP_SUM_SQ, L>(p, at, l, regs[l])
                          : wp_load<NV, DT, WP_SUM, L>(p, at, l, regs[l]);
        const float sum = host_combine<RW_OP_ADD>(part, L);
        const float mean = nm_mean(p, sum);
        float sq = sum;
        if (!rms) {
            for (int l = 0; l < L; ++l) part[l] = wp_var<NV, DT, L>(p, l, mean, regs[l]);
            sq = host_combine<RW_OP_ADD>(part, L);
        }
        const float inv = nm_inv(p, sq);
        nm_store_stats(p, at, mean, inv);
        if (p.flags & RW_F_STORE_Y)
            for (int l = 0; l < L; ++l) wp_norm_store<NV, DT, L, PT>(p, at, l, mean, inv, regs[l]);
    }
}

// As packed_rows (rowwise.hip) picks them.
template <int NV, int DT, int L>
void emulate_packed_variant(const rw_program& p) {
    const int pt = p.nrd == 1 ? wp_param_type(p) : -1;
    if (pt == DT) emulate_norm_packed<NV, DT, L, true, DT>(p);
    else if (pt == PW_F32) emulate_norm_packed<NV, DT, L, true, PW_F32>(p);
    else emulate_norm_packed<NV, DT, L, false, -1>(p);
}

template <int DT>
bool emulate_packed_dt(const rw_program& p) {
    switch (p.vecs * 1024 + p.group) {
    case 2 * 1024 + 32: emulate_packed_variant<2, DT, 32>(p); return true;
    case 4 * 1024 + 32: emulate_packed_variant<4, DT, 32>(p); return true;
    case 4 * 1024 + 64: emulate_packed_variant<4, DT, 64>(p); return true;
    case 4 * 1024 + 128: emulate_packed_variant<4, DT, 128>(p); return true;
    default: return false;
    }
}

bool emulate_packed(const rw_program& p) {
    if (p.fast_dt == PW_BF16) return emulate_packed_dt<PW_BF16>(p);
    if (p.fast_dt == PW_F16) return emulate_packed_dt<PW_F16>(p);
    return false;
}

template <int OP, int PRE>
void emulate_reduce_cols(const rw_program& p) {
    const int W = p.x.contiguous ? PW_VEC : 1;
    const int64_t nout = p.rows * p.splits;
    for (int64_t o = 0; o < nout; o += W) {
        typename RdAcc<OP>::T acc[RW_COL_Y][PW_VEC];
        for (int ty = 0; ty < RW_COL_Y; ++ty) rd_col_partial<OP, PRE>(p, o, ty, acc[ty]);
        for (int ty = 1; ty < RW_COL_Y; ++ty)
            for (int j = 0; j < PW_VEC; ++j) acc[0][j] = rd_op<OP>(acc[0][j], acc[ty][j]);
        rd_col_store(p, o, acc[0]);
    }
}

template <int V, int DT>
void emulate_softmax(const rw_program& p) {
    const int G = p.group;
    std::vector<RwRow<V>> regs(G);
    std::vector<float> part(G);
    for (int64_t row = 0; row < p.rows; ++row) {
        const RwRowAt at = rw_row_at(p, row);
        for (int t = 0; t < G; ++t) part[t] = sm_max<V, DT>(p, at, t, G, regs[t]);
        const float m = rw_round(p.round[0], host_combine<RW_OP_MAX>(part, G));
        for (int t = 0; t < G; ++t) part[t] = sm_sum<V, DT>(p, at, t, G, m, regs[t]);
        const float s = rw_round(p.round[3], host_combine<RW_OP_ADD>(part, G));
        for (int t = 0; t < G; ++t) sm_store<V, DT>(p, at, t, G, m, s, regs[t]);
    }
}

template <int V, int S, int DT>
void emulate_norm(const rw_program& p) {
    const int G = p.group;
    std::vector<RwRow<V>> regs(G);
    std::vector<float> part(G);
    for (int64_t row = 0; row < p.rows; ++row) {
        const RwRowAt at = rw_row_at(p, row);
        for (int t = 0; t < G; ++t) part[t] = nm_sum<V, DT>(p, at, t, G, regs[t]);
        const float sum = host_combine<RW_OP_ADD>(part, G);
        const float mean = nm_mean(p, sum);
        float sq = sum;
        if (p.mode != RW_RMS) {
            for (int t = 0; t < G; ++t) part[t] = nm_var<V, DT>(p, at, t, G, mean, regs[t]);
            sq = host_combine<RW_OP_ADD>(part, G);
        }
        const float inv = nm_inv(p, sq);
        nm_store_stats(p, at, mean, inv);
        if (p.flags & (RW_F_STORE_Y | RW_F_EPILOGUE))
            for (int t = 0; t < G; ++t) nm_store<V, S, DT>(p, at, t, G, mean, inv, regs[t]);
    }
}

// A norm backward kernel's rows one after the other, its G threads phase by phase (W:
// vectors of column parts a thread keeps; at: the kernel's addressing).  load(at, t, mean,
// inv, sums, cp1, cp2, parts) is a thread's phase 1 into its own registers, store(at, t,
// s_g, s_gx, mean, inv) its dx.
template <int W, class At, class Load, class Store>
void emulate_bwd_rows(const rw_program& p, At row_at, Load load, Store store) {
    const int G = p.group;
    const bool parts = (p.flags & RW_F_COL_PARTS) != 0;
    const int64_t ngroups = parts ? p.part_sets * p.part_groups : 1;
    std::vector<float> s0(G), s1(G), s2(G), s3(G);
    // each group's threads' column parts, as each thread of the kernel keeps its own
    std::vector<float> cp((size_t)(ngroups * G * W * PW_VEC * 2), 0.0f);
    auto parts_of = [&](int64_t grp, int t, int which) {
        return reinterpret_cast<float(*)[PW_VEC]>(&cp[(size_t)(((grp * G + t) * 2 + which) * W * PW_VEC)]);
    };
    for (int64_t row = 0; row < p.rows; ++row) {
        const RwRowAt at = row_at(row);
        // rw_exec.h's nb_walk: group g of set s takes rows g, g + part_groups, ... of it
        const int64_t set = parts ? row / p.set_rows : 0;
        const int64_t grp = parts ? set * p.part_groups + (row - set * p.set_rows) % p.part_groups : 0;
        float mean, inv, sums[4];
        nb_stats(p, at, &mean, &inv);
        for (int t = 0; t < G; ++t) {
            load(at, t, mean, inv, sums, parts_of(grp, t, 0), parts_of(grp, t, 1), parts);
            s0[t] = sums[0];
            s1[t] = sums[1];
            s2[t] = sums[2];
            s3[t] = sums[3];
        }
        const float s_g = host_combine<RW_OP_ADD>(s0, G), s_gx = host_combine<RW_OP_ADD>(s1, G);
        if (p.flags & RW_F_ROW_SUMS)
            nb_store_sums(p, at, host_combine<RW_OP_ADD>(s2, G), host_combine<RW_OP_ADD>(s3, G));
        if (p.flags & RW_F_STORE_Y)
            for (int t = 0; t < G; ++t) store(at, t, s_g, s_gx, mean, inv);
    }
    if (parts)
        for (int64_t grp = 0; grp < ngroups; ++grp)
            for (int t = 0; t < G; ++t)
                nb_store_parts<W>(p, grp, t, G, parts_of(grp, t, 0), parts_of(grp, t, 1));
}

template <int V, int DT>
void emulate_norm_bwd(const rw_program& p) {
    const int G = p.group;
    std::vector<RwRow<V>> xh(G), g(G);
    emulate_bwd_rows<(V > 0 ? V : 1)>(
        p, [&](int64_t row) { return rw_row_at(p, row); },
        [&](const RwRowAt& at, int t, float mean, float inv, float* sums, float(*cp1)[PW_VEC],
            float(*cp2)[PW_VEC], bool parts) {
            nb_load<V, DT>(p, at, t, G, mean, inv, xh[t], g[t], sums, cp1, cp2, parts);
        },
        [&](const RwRowAt& at, int t, float s_g, float s_gx, float mean, float inv) {
            nb_store<V, DT>(p, at, t, G, s_g, s_gx, mean, inv, xh[t], g[t]);
        });
}

// As rw_norm_bwd_packed (rowwise.hip) runs it (each row's x and dy loaded in its turn).
template <int V, int DT, bool ONE, int PT>
void emulate_norm_bwd_packed(const rw_program& p) {
    const int G = p.group;
    std::vector<NbPacked<V>> regs(G);
    emulate_bwd_rows<V>(
        p, [&](int64_t row) { return rw_row_at_t<ONE>(p, row); },
        [&](const RwRowAt& at, int t, float mean, float inv, float* sums, float(*cp1)[PW_VEC],
            float(*cp2)[PW_VEC], bool parts) {
            nbp_fetch<V>(p, at, t, G, regs[t]);
            nbp_sums<V, DT, PT>(p, at, t, G, mean, inv, regs[t], sums, cp1, cp2, parts);
        },
        [&](const RwRowAt& at, int t, float s_g, float s_gx, float mean, float inv) {
            nbp_store<V, DT, PT>(p, at, t, G, s_g, s_gx, mean, inv, regs[t]);
        });
}

template <int V, int DT>
void emulate_bwd_packed_variant(const rw_program& p) {
    const int pt = p.nrd == 1 ? wp_param_type(p) : -1;
    if (pt == DT) emulate_norm_bwd_packed<V, DT, true, DT>(p);
    else if (pt == PW_F32) emulate_norm_bwd_packed<V, DT, true, PW_F32>(p);
    else emulate_norm_bwd_packed<V, DT, false, -1>(p);
}

template <int DT>
bool emulate_bwd_packed(const rw_program& p) {
    if (p.vecs == 1) emulate_bwd_packed_variant<1, DT>(p);
    else if (p.vecs == 2) emulate_bwd_packed_variant<2, DT>(p);
    else return false;
    return true;
}

// The fast way's storage type as a template argument, as kernel_of (rowwise.hip) picks it.
template <class F>
bool with_fast_dt(int dt, F f) {
    switch (dt) {
    case PW_F32: f(std::integral_constant<int, PW_F32>()); return true;
    case PW_F16: f(std::integral_constant<int, PW_F16>()); return true;
    case PW_BF16: f(std::integral_constant<int, PW_BF16>()); return true;
    default: f(std::integral_constant<int, -1>()); return true;
    }
}

template <int OP, int PRE>
bool emulate_reduce(const rw_program& p) {
    if (p.kind == RW_REDUCE_COLS) emulate_reduce_cols<OP, PRE>(p);
    else with_fast_dt(p.fast_dt, [&](auto dt) { emulate_reduce_rows<OP, PRE, decltype(dt)::value>(p); });
    return true;
}

template <int V>
bool emulate_softmax_v(const rw_program& p) {
    return with_fast_dt(p.fast_dt, [&](auto dt) { emulate_softmax<V, decltype(dt)::value>(p); });
}

template <int V, int S>
bool emulate_norm_v(const rw_program& p) {
    if (S > 0 || V > 4 || V == 0) { // the kernels' fast way has no epilogue, 1 to 4 vectors
        emulate_norm<V, S, -1>(p);
        return true;
    }
    return with_fast_dt(p.fast_dt, [&](auto dt) { emulate_norm<V, S, decltype(dt)::value>(p); });
}

bool emulate_rowwise(const rw_program& p) {
    switch (p.kind) {
    case RW_REDUCE:
    case RW_REDUCE_COLS:
        switch (p.op * 4 + p.pre) {
        case RW_OP_ADD * 4 + RW_PRE_NONE: return emulate_reduce<RW_OP_ADD, RW_PRE_NONE>(p);
        case RW_OP_ADD * 4 + RW_PRE_ABS: return emulate_reduce<RW_OP_ADD, RW_PRE_ABS>(p);
        case RW_OP_ADD * 4 + RW_PRE_SQUARE: return emulate_reduce<RW_OP_ADD, RW_PRE_SQUARE>(p);
        case RW_OP_MUL * 4 + RW_PRE_NONE: return emulate_reduce<RW_OP_MUL, RW_PRE_NONE>(p);
        case RW_OP_MUL * 4 + RW_PRE_NONZERO: return emulate_reduce<RW_OP_MUL, RW_PRE_NONZERO>(p);
        case RW_OP_MAX * 4 + RW_PRE_NONE: return emulate_reduce<RW_OP_MAX, RW_PRE_NONE>(p);
        case RW_OP_MAX * 4 + RW_PRE_ABS: return emulate_reduce<RW_OP_MAX, RW_PRE_ABS>(p);
        case RW_OP_MIN * 4 + RW_PRE_NONE: return emulate_reduce<RW_OP_MIN, RW_PRE_NONE>(p);
        default: return false;
        }
    case RW_SOFTMAX:
        switch (p.vecs) {
        case 0: emulate_softmax<0, -1>(p); return true;
        case 1: return emulate_softmax_v<1>(p);
        case 2: return emulate_softmax_v<2>(p);
        case 4: return emulate_softmax_v<4>(p);
        case 8: emulate_softmax<8, -1>(p); return true;
        default: return false;
        }
    case RW_NORM: {
        if (p.flags & RW_F_PACKED) return emulate_packed(p);
        const bool ep = (p.flags & RW_F_EPILOGUE) != 0;
        switch (p.vecs * 2 + ep) {
        case 0: return emulate_norm_v<0, 0>(p);
        case 1: return emulate_norm_v<0, PW_SLOTS>(p);
        case 2: return emulate_norm_v<1, 0>(p);
        case 3: return emulate_norm_v<1, PW_SLOTS>(p);
        case 4: return emulate_norm_v<2, 0>(p);
        case 8: return emulate_norm_v<4, 0>(p);
        case 16: return emulate_norm_v<8, 0>(p);
        default: return false;
        }
    }
    case RW_NORM_BWD:
        if (p.fast_dt == PW_BF16) return emulate_bwd_packed<PW_BF16>(p);
        if (p.fast_dt == PW_F16) return emulate_bwd_packed<PW_F16>(p);
        switch (p.vecs) {
        case 0: emulate_norm_bwd<0, -1>(p); return true; // the fast way holds its rows
        case 1: p.fast_dt == PW_F32 ? emulate_norm_bwd<1, PW_F32>(p) : emulate_norm_bwd<1, -1>(p); return true;
        case 2: p.fast_dt == PW_F32 ? emulate_norm_bwd<2, PW_F32>(p) : emulate_norm_bwd<2, -1>(p); return true;
        default: return false;
        }
    default: return false;
    }
}

} // namespace

extern "C" bool hipe_rowwise_launch(const rw_program* prog, int64_t grid_cap, void* stream,
                                    char* why, size_t len) {
    (void)grid_cap;
    (void)stream;
    if (emulate_rowwise(*prog)) return true;
    snprintf(why, len, "internal: no row-wise kernel for kind %d (op %d, pre %d, %d vectors)",
             prog->kind, prog->op, prog->pre, prog->vecs);
    return false;
}

extern "C" bool hipe_resample_launch(const rs_program* prog, int64_t grid_cap, void* stream,
                                     char* why, size_t len) {
    (void)grid_cap;
    (void)stream;
    for (int64_t e = 0; e < prog->total; ++e) {
        switch (prog->nsp * 2 + prog->backward) {
        case 2: rs_forward<1>(*prog, e); break;
        case 3: rs_backward<1>(*prog, e); break;
        case 4: rs_forward<2>(*prog, e); break;
        case 5: rs_backward<2>(*prog, e); break;
        case 6: rs_forward<3>(*prog, e); break;
        case 7: rs_backward<3>(*prog, e); break;
        default:
            snprintf(why, len, "internal: no resample kernel for %d spatial dims", prog->nsp);
            return false;
        }
    }
    return true;
}
