// emulate.cpp — the device side of the HIP engine run on the host, for tests on machines
// without a GPU: built with the engine's host code (-DHIPE_HOST_EMULATION) into the test
// plugin libhip_emulated.so, engine "hip_emulated", host memory.  It runs pw_exec.h, the
// code each GPU thread runs, over every step of the iteration space, so the program
// compiler, the indexing and the numerics of the kernel are checked against the
// reference engine wherever the tests run.  The row-wise kernels (rw_exec.h) run the same
// way: the threads of a row one after the other, phase by phase, their partial results
// combined in the order the GPU combines them.  The kernels a GPU compiles at run time
// (kernel_cache.c) are "compiled" here too, through the same cache: the image is the
// kernel's name, and launching it runs the instantiation that name gives (kernel_names.c
// chooses it), so that the emulated tests check the choice as well.  Not a product:
// never installed.
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <type_traits>
#include <vector>

#include "emulate.h"

#include "rw_exec.h"
#include "rs_exec.h"
#include "gm_exec.h"

// ---- capture over the fake driver ------------------------------------------------------

namespace {
typedef int (*capturing_fn)(void*, int*);
typedef int (*launch_fn)(void*, void (*)(const void*), const void*, size_t);
struct fake_entry_points {
    capturing_fn capturing = nullptr;
    launch_fn launch = nullptr;
    fake_entry_points() {
        void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
        if (!lib) return;
        capturing = reinterpret_cast<capturing_fn>(dlsym(lib, "cuStreamIsCapturing"));
        launch = reinterpret_cast<launch_fn>(dlsym(lib, "fakeCudaLaunch"));
        if (!launch) capturing = nullptr; // a real driver: the emulation never captures there
    }
};
const fake_entry_points& fake() {
    static const fake_entry_points f;
    return f;
}
} // namespace

bool emu_capturing(void* stream) {
    int status = 0;
    return stream && fake().capturing && fake().capturing(stream, &status) == 0 && status != 0;
}

bool emu_record(void* stream, void (*run)(const void*), const void* args, size_t size, char* why,
                size_t len) {
    const int r = fake().launch(stream, run, args, size);
    if (r != 0) snprintf(why, len, "kernel launch during a capture failed: CUDA error %d", r);
    return r == 0;
}

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

namespace {
struct pw_launch {
    pw_program prog;
    int slots;
    bool fast;
    int64_t blocks;
};
void run_pointwise(const void* arg) {
    const pw_launch& l = *static_cast<const pw_launch*>(arg);
    if (l.slots == 2) run_grid<2>(l.prog, l.fast, l.blocks);
    else if (l.slots == 4) run_grid<4>(l.prog, l.fast, l.blocks);
    else run_grid<PW_SLOTS>(l.prog, l.fast, l.blocks);
}
} // namespace

extern "C" bool hipe_pointwise_launch(const pw_program* prog, int slots, bool fast,
                                      int64_t grid_cap, void* stream, char* why, size_t len) {
    const int S = slots <= 2 ? 2 : slots <= 4 ? 4 : PW_SLOTS;
    int64_t blocks = fast ? pw_fast_blocks(*prog, HIPE_INTERP_FAST_U(S))
                          : (pw_groups(*prog) + PW_BLOCK - 1) / PW_BLOCK;
    if (blocks > grid_cap) blocks = grid_cap;
    if (blocks < 1) blocks = 1;
    const pw_launch l = {*prog, S, fast, blocks};
    if (emu_capturing(stream)) return emu_record(stream, run_pointwise, &l, sizeof(l), why, len);
    run_pointwise(&l);
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

// What group_combine (rw_kernels.h) computes: an xor butterfly over up to 32 lanes, then the
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
        // rw_exec_norm_bwd.h's nb_walk: group g of set s takes rows g, g + part_groups, ... of it
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
        if (p.flags & (RW_F_STORE_Y | RW_F_EPILOGUE))
            for (int t = 0; t < G; ++t) store(at, t, s_g, s_gx, mean, inv);
    }
    if (parts)
        for (int64_t grp = 0; grp < ngroups; ++grp)
            for (int t = 0; t < G; ++t)
                nb_store_parts<W>(p, grp, t, G, parts_of(grp, t, 0), parts_of(grp, t, 1));
}

template <int V, int DT, int S>
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
            nb_store<V, DT, S>(p, at, t, G, s_g, s_gx, mean, inv, xh[t], g[t]);
        });
}

// As rw_norm_bwd_packed (rw_kernels.h) runs it (each row's x and dy loaded in its turn).
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

// ---- the instantiation a kernel's name gives ---------------------------------------------

// f(std::integral_constant<int, V>) for the V among Vs that v is; false for none.
template <int... Vs, class F>
bool pick(int v, F&& f) {
    bool ran = false;
    (void)((v == Vs ? (ran = f(std::integral_constant<int, Vs>()), true) : false) || ...);
    return ran;
}

// The combining operations with the transforms a reduction has (kernel_names.c's list).
constexpr bool reduction_exists(int op, int pre) {
    return (op == RW_OP_ADD && pre != RW_PRE_NONZERO) ||
           (op == RW_OP_MUL && (pre == RW_PRE_NONE || pre == RW_PRE_NONZERO)) ||
           (op == RW_OP_MAX && (pre == RW_PRE_NONE || pre == RW_PRE_ABS)) ||
           (op == RW_OP_MIN && pre == RW_PRE_NONE);
}

template <class F>
bool pick_reduction(int op, int pre, F&& f) {
    return pick<RW_OP_ADD, RW_OP_MUL, RW_OP_MAX, RW_OP_MIN>(op, [&](auto o) {
        return pick<RW_PRE_NONE, RW_PRE_ABS, RW_PRE_SQUARE, RW_PRE_NONZERO>(pre, [&](auto q) {
            constexpr int OP = std::decay_t<decltype(o)>::value, PRE = std::decay_t<decltype(q)>::value;
            if constexpr (reduction_exists(OP, PRE)) return f(o, q);
            else return false;
        });
    });
}

#define ARG(x) std::decay_t<decltype(x)>::value

// The row-wise kernel of one template with arguments a, run over p; with p NULL, only
// whether the emulation has that instantiation.  One function a template (hip_engine.h's
// HIPE_K_*), as kernel_names.c lists their arguments.
static bool run_reduce_rows(const int* a, const rw_program* p) {
    return pick_reduction(a[0], a[1], [&](auto op, auto pre) {
        return pick<-1, PW_F32, PW_F16, PW_BF16>(a[2], [&](auto dt) {
            if (p) emulate_reduce_rows<ARG(op), ARG(pre), ARG(dt)>(*p);
            return true;
        });
    });
}

static bool run_reduce_cols(const int* a, const rw_program* p) {
    return pick_reduction(a[0], a[1], [&](auto op, auto pre) {
        if (p) emulate_reduce_cols<ARG(op), ARG(pre)>(*p);
        return true;
    });
}

static bool run_softmax(const int* a, const rw_program* p) {
    return pick<0, 1, 2, 4, 8>(a[0], [&](auto v) {
        return pick<-1, PW_F32, PW_F16, PW_BF16>(a[1], [&](auto dt) {
            if constexpr (ARG(dt) >= 0 && (ARG(v) == 0 || ARG(v) == 8)) return false;
            else {
                if (p) emulate_softmax<ARG(v), ARG(dt)>(*p);
                return true;
            }
        });
    });
}

static bool run_norm(const int* a, const rw_program* p) {
    return pick<0, 1, 2, 4, 8>(a[0], [&](auto v) {
        return pick<0, PW_SLOTS>(a[1], [&](auto s) {
            return pick<-1, PW_F32, PW_F16, PW_BF16>(a[2], [&](auto dt) {
                constexpr int V = ARG(v), S = ARG(s), DT = ARG(dt);
                // the fast way: 1 to 4 vectors, no epilogue; an epilogue: 1 vector at most
                if constexpr ((DT >= 0 && (V == 0 || V == 8 || S > 0)) || (S > 0 && V > 1))
                    return false;
                else {
                    if (p) emulate_norm<V, S, DT>(*p);
                    return true;
                }
            });
        });
    });
}

static bool run_norm_bwd(const int* a, const rw_program* p) {
    return pick<0, 1, 2>(a[0], [&](auto v) {
        return pick<-1, PW_F32>(a[1], [&](auto dt) {
            return pick<0, PW_SLOTS>(a[2], [&](auto s) {
                // the fast way holds its rows and runs no epilogue
                if constexpr (ARG(dt) >= 0 && (ARG(v) == 0 || ARG(s) > 0)) return false;
                else {
                    if (p) emulate_norm_bwd<ARG(v), ARG(dt), ARG(s)>(*p);
                    return true;
                }
            });
        });
    });
}

// Where a thread keeps its column parts (a[4]) changes no value.
static bool run_norm_bwd_packed(const int* a, const rw_program* p) {
    return pick<1, 2>(a[0], [&](auto v) {
        return pick<PW_F16, PW_BF16>(a[1], [&](auto dt) {
            return pick<0, 1>(a[2], [&](auto one) {
                return pick<-1, PW_F32, PW_F16, PW_BF16>(a[3], [&](auto pt) {
                    constexpr int PT = ARG(pt);
                    if constexpr (ARG(one) != (PT >= 0) || (PT > 0 && PT != ARG(dt))) return false;
                    else
                        return pick<NB_PARTS_NONE, NB_PARTS_REGS, NB_PARTS_SHARED>(a[4], [&](auto) {
                            if (p) emulate_norm_bwd_packed<ARG(v), ARG(dt), ARG(one) != 0, PT>(*p);
                            return true;
                        });
                });
            });
        });
    });
}

static bool run_norm_packed(const int* a, const rw_program* p) {
    return pick<2, 4>(a[0], [&](auto nv) {
        return pick<PW_F16, PW_BF16>(a[1], [&](auto dt) {
            return pick<32, 64, 128>(a[2], [&](auto l) {
                return pick<0, 1>(a[3], [&](auto one) {
                    return pick<-1, PW_F32, PW_F16, PW_BF16>(a[4], [&](auto pt) {
                        constexpr int NV = ARG(nv), DT = ARG(dt), L = ARG(l), PT = ARG(pt);
                        constexpr bool ONE = ARG(one) != 0;
                        if constexpr (ONE != (PT >= 0) || (PT > 0 && PT != DT) || (NV == 2 && L != 32))
                            return false;
                        else {
                            if (p) emulate_norm_packed<NV, DT, L, ONE, PT>(*p);
                            return true;
                        }
                    });
                });
            });
        });
    });
}

// Runs the row-wise kernel of template t with arguments a over p; with p NULL, only says
// whether the emulation has that instantiation.
bool run_rowwise(int t, const int* a, const rw_program* p) {
    switch (t) {
    case HIPE_K_REDUCE_ROWS: return run_reduce_rows(a, p);
    case HIPE_K_REDUCE_COLS: return run_reduce_cols(a, p);
    case HIPE_K_SOFTMAX: return run_softmax(a, p);
    case HIPE_K_NORM: return run_norm(a, p);
    case HIPE_K_NORM_BWD: return run_norm_bwd(a, p);
    case HIPE_K_NORM_BWD_PACKED: return run_norm_bwd_packed(a, p);
    case HIPE_K_NORM_PACKED: return run_norm_packed(a, p);
    default: return false;
    }
}

bool run_resample(int t, const int* a, const rs_program* p) {
    if (t != HIPE_K_RS_FORWARD && t != HIPE_K_RS_BACKWARD) return false;
    return pick<1, 2, 3>(a[0], [&](auto nsp) {
        for (int64_t e = 0; p && e < p->total; ++e) {
            if (t == HIPE_K_RS_FORWARD) rs_forward<ARG(nsp)>(*p, e);
            else rs_backward<ARG(nsp)>(*p, e);
        }
        return true;
    });
}

#undef ARG

bool emulates(hipe_kernel_id k) {
    int a[HIPE_K_MAX_ARGS];
    const int t = hipe_kernel_template(k, a);
    return hipe_kernel_family(k) == HIPE_FAMILY_ROWWISE ? run_rowwise(t, a, nullptr)
                                                         : run_resample(t, a, nullptr);
}

const char k_image_head[] = "hipdnn emulated kernel\n";

} // namespace

// ---- the run-time compiler, emulated --------------------------------------------------------

// $HIPDNN_EMULATED_NO_RTC (tests): behave as a GPU build without a run-time compiler, whose
// support check declines row-wise and pooling graphs.
extern "C" bool hipe_rtc_available(char* why, size_t len) {
    const char* no = getenv("HIPDNN_EMULATED_NO_RTC");
    if (no && *no && strcmp(no, "0") != 0) {
        snprintf(why, len, "no NVRTC was found (HIPDNN_EMULATED_NO_RTC is set)");
        return false;
    }
    return true;
}

extern "C" bool hipe_rtc_target_of(int device, hipe_rtc_target* t, char* why, size_t len) {
    (void)device;
    memset(t, 0, sizeof(*t));
    if (!hipe_rtc_available(why, len)) return false;
    t->dialect = HIPE_RTC_CUDA; // the source the emulation "compiles" is NVRTC's
    snprintf(t->arch, sizeof(t->arch), "host");
    snprintf(t->compiler, sizeof(t->compiler), "host emulation");
    snprintf(t->scope, sizeof(t->scope), "host");
    return true;
}

// The image: a head and the kernel's name; its "lowered name" is the name.
extern "C" bool hipe_rtc_compile(const hipe_rtc_target* t, const char* source, const char* name,
                                 void** image, size_t* size, char** lowered, char* why, size_t len) {
    (void)t;
    (void)source;
    *image = nullptr;
    *lowered = nullptr;
    const hipe_kernel_id k = hipe_kernel_parse(name);
    if ((!k || !emulates(k)) && strcmp(name, HIPE_GEMM_KERNEL) != 0 &&
        !emulated_attention_of(name)) {
        snprintf(why, len, "the emulation has no kernel %s", name);
        return false;
    }
    *size = sizeof(k_image_head) - 1 + strlen(name);
    char* text = (char*)malloc(*size + 1);
    *lowered = strdup(name);
    if (!text || !*lowered) {
        free(text);
        free(*lowered);
        *lowered = nullptr;
        snprintf(why, len, "out of memory");
        return false;
    }
    snprintf(text, *size + 1, "%s%s", k_image_head, name);
    *image = text;
    return true;
}

extern "C" bool hipe_rtc_load(const hipe_rtc_target* t, int device, const void* image, size_t size,
                              const char* lowered, void** kernel, char* why, size_t len) {
    (void)t;
    (void)device;
    *kernel = nullptr;
    const size_t head = sizeof(k_image_head) - 1;
    const char* text = static_cast<const char*>(image);
    if (size <= head || size - head >= HIPE_KERNEL_NAME_LEN || memcmp(text, k_image_head, head) != 0) {
        snprintf(why, len, "not an emulated kernel image (%zu bytes)", size);
        return false;
    }
    char name[HIPE_KERNEL_NAME_LEN];
    memcpy(name, text + head, size - head);
    name[size - head] = '\0';
    const hipe_kernel_id k = hipe_kernel_parse(name); // 0: the matmul or attention kernel
    const int attention = emulated_attention_of(name);
    if (strcmp(name, lowered) != 0 ||
        (k ? !emulates(k) : strcmp(name, HIPE_GEMM_KERNEL) != 0 && !attention)) {
        snprintf(why, len, "the image names kernel '%s', not %s", name, lowered);
        return false;
    }
    emulated_kernel* e = (emulated_kernel*)malloc(sizeof(*e)); // kept for the process
    if (!e) {
        snprintf(why, len, "out of memory");
        return false;
    }
    e->id = k;
    e->attention = attention;
    *kernel = e;
    return true;
}

// Runs the instantiation the kernel names over every row (or element): the grid does not
// matter to the emulation.  The kernel must be the one kernel_names.c chooses for the
// program, as staged_run.c launches it.
namespace {
struct rtc_launch {
    int t, a[HIPE_K_MAX_ARGS];
    bool rows;
    union {
        rw_program rw;
        rs_program rs;
    };
};
void run_rtc(const void* arg) {
    const rtc_launch& l = *static_cast<const rtc_launch*>(arg);
    (void)(l.rows ? run_rowwise(l.t, l.a, &l.rw) : run_resample(l.t, l.a, &l.rs));
}
} // namespace

// Runs the instantiation the kernel names over every row (or element): the grid does not
// matter to the emulation.  The kernel must be the one kernel_names.c chooses for the
// program, as staged_run.c launches it.
extern "C" bool hipe_rtc_launch(void* kernel, int64_t blocks, int threads, const void* arg,
                                void* stream, char* why, size_t len) {
    (void)blocks;
    (void)threads;
    const hipe_kernel_id k = static_cast<const emulated_kernel*>(kernel)->id;
    rtc_launch l;
    memset(&l, 0, sizeof(l));
    l.t = hipe_kernel_template(k, l.a);
    l.rows = hipe_kernel_family(k) == HIPE_FAMILY_ROWWISE;
    const hipe_kernel_id chosen = l.rows ? hipe_rw_kernel(static_cast<const rw_program*>(arg))
                                         : hipe_rs_kernel(static_cast<const rs_program*>(arg));
    char name[HIPE_KERNEL_NAME_LEN], want[HIPE_KERNEL_NAME_LEN];
    if (chosen != k) {
        hipe_kernel_name(k, name, sizeof(name));
        hipe_kernel_name(chosen, want, sizeof(want));
        snprintf(why, len, "internal: kernel %s launched for a program that runs %s", name, want);
        return false;
    }
    if (l.rows) l.rw = *static_cast<const rw_program*>(arg);
    else l.rs = *static_cast<const rs_program*>(arg);
    if (emu_capturing(stream) && emulates(k))
        return emu_record(stream, run_rtc, &l, sizeof(l), why, len);
    if (l.rows ? run_rowwise(l.t, l.a, &l.rw) : run_resample(l.t, l.a, &l.rs)) return true;
    hipe_kernel_name(k, name, sizeof(name));
    snprintf(why, len, "internal: the emulation has no kernel %s", name);
    return false;
}

// The emulation is never a sm_90 target, so GM_WGMMA is never planned: no tensor maps.
extern "C" bool hipe_gm_tensor_map(unsigned char* map, int dtype, const void* base,
                                   const uint64_t* dims, const uint64_t* strides,
                                   const uint32_t* box, char* why, size_t len) {
    (void)map, (void)dtype, (void)base, (void)dims, (void)strides, (void)box;
    snprintf(why, len, "the emulation has no tensor memory accelerator");
    return false;
}

// A matmul: each row of the product in fp32 (k in order, fused multiply-adds), rounded to
// the product's type, then the epilogue over it as the kernels run it (gm_exec.h).  With
// its k split, the one launch as the kernels make it: each (range, tile) unit's sum into
// the workspace in the kernels' layout and its arrival (gm_arrive, the kernels' own code),
// the units in a scrambled order (emu_unit) so that a tile's last range is any of
// them; the last sums the ranges in order, rounds, and runs the epilogue over the tile.

// The i-th unit (or block) of n to run: (i * stride + n - 1) % n, a stride coprime with n
// near 5n/8, so that neither the first nor the last range of a tile is always the last to
// arrive (of two units, the second runs first).
int64_t emu_unit(int64_t i, int64_t n) {
    int64_t s = n * 5 / 8 + 1;
    for (;; ++s) {
        int64_t a = s, b = n;
        while (b) {
            const int64_t t = a % b;
            a = b;
            b = t;
        }
        if (a == 1) break;
    }
    return (i * (s % n) + n - 1) % n;
}

namespace {
// One unit of a split product: its range's sums of its tile into the workspace; the tile's
// last range sums them all and runs the epilogue.
void run_gemm_unit(const gm_program* g, int64_t unit, std::vector<float>& row) {
    const int64_t tiles = g->batches * g->tiles_m * g->tiles_n;
    const int64_t tile = unit % tiles, range = unit / tiles;
    const int64_t batch = tile / ((int64_t)g->tiles_m * g->tiles_n);
    const int64_t t = tile - batch * g->tiles_m * g->tiles_n;
    const int64_t m0 = t / g->tiles_n * g->tile_m, n0 = t % g->tiles_n * g->tile_n;
    const int64_t elems = (int64_t)g->tile_m * g->tile_n;
    int64_t a_off, b_off;
    gm_batch_offsets(*g, batch, &a_off, &b_off);
    const int64_t k0 = range * g->split_k, k1 = k0 + g->split_k < g->k ? k0 + g->split_k : g->k;
    float* part = g->partial + unit * elems;
    for (int64_t r = 0; r < g->tile_m; ++r)
        for (int64_t c = 0; c < g->tile_n; ++c) {
            const int64_t m = m0 + r, n = n0 + c;
            float acc = 0.0f;
            for (int64_t k = k0; m < g->m && n < g->n && k < k1; ++k)
                acc = fmaf(gm_a_at(*g, g->a_dtype, a_off, m, k), gm_b_at(*g, g->b_dtype, b_off, k, n),
                           acc);
            part[r * g->tile_n + c] = acc;
        }
    __threadfence();
    if (!gm_arrive((unsigned long long*)g->arrive + tile, (unsigned long long)g->nonce, g->splits))
        return;
    __threadfence();
    for (int64_t r = 0; r < g->tile_m && m0 + r < g->m; ++r) {
        for (int64_t c = 0; c < g->tile_n; ++c) {
            float sum = 0.0f;
            for (int64_t sp = 0; sp < g->splits; ++sp)
                sum += g->partial[(sp * tiles + tile) * elems + r * g->tile_n + c];
            row[(size_t)c] = gm_round(g->acc_round, sum);
        }
        for (int64_t c0 = 0; c0 < g->tile_n && n0 + c0 < g->n; c0 += PW_VEC)
            gm_epilogue_step<PW_SLOTS, PwInterpreted>(*g, batch, m0 + r, n0 + c0, &row[(size_t)c0]);
    }
}

void run_gemm(const void* arg) {
    const gm_program* g = static_cast<const gm_program*>(arg);
    if (g->kernel == GM_SGEMM && emu_sgemm(g)) return;
    if (g->kernel == GM_MFMA && emu_mfma(g)) return;
    if (g->splits > 1) {
        std::vector<float> row((size_t)g->tile_n + PW_VEC, 0.0f);
        const int64_t units = gm_units(*g);
        for (int64_t i = 0; i < units; ++i) run_gemm_unit(g, emu_unit(i, units), row);
        return;
    }
    std::vector<float> row((size_t)g->n + PW_VEC, 0.0f);
    for (int64_t batch = 0; batch < g->batches; ++batch) {
        int64_t a_off, b_off;
        gm_batch_offsets(*g, batch, &a_off, &b_off);
        for (int64_t m = 0; m < g->m; ++m) {
            for (int64_t n = 0; n < g->n; ++n) {
                float acc = 0.0f;
                for (int64_t k = 0; k < g->k; ++k)
                    acc = fmaf(gm_a_at(*g, g->a_dtype, a_off, m, k),
                               gm_b_at(*g, g->b_dtype, b_off, k, n), acc);
                row[(size_t)n] = gm_round(g->acc_round, acc);
            }
            for (int64_t c0 = 0; c0 < g->n; c0 += PW_VEC)
                gm_epilogue_step<PW_SLOTS, PwInterpreted>(*g, batch, m, c0, &row[(size_t)c0]);
        }
    }
}
} // namespace

extern "C" bool hipe_gm_launch(void* kernel, const gm_program* g, const gm_tma* tma,
                               int64_t blocks, int threads, int smem, void* stream, char* why,
                               size_t len) {
    (void)tma;
    (void)threads;
    (void)smem;
    if (!kernel || static_cast<const emulated_kernel*>(kernel)->id != 0 ||
        static_cast<const emulated_kernel*>(kernel)->attention) {
        snprintf(why, len, "internal: a matmul launched with another kernel");
        return false;
    }
    if (blocks != gm_units(*g) || (g->splits > 1 && (!g->partial || !g->arrive || !g->nonce))) {
        snprintf(why, len, "internal: a matmul grid of %lld blocks for %lld x %d x %d tiles "
                 "of %d k ranges", (long long)blocks, (long long)g->batches, g->tiles_m,
                 g->tiles_n, g->splits);
        return false;
    }
    if (emu_capturing(stream)) return emu_record(stream, run_gemm, g, sizeof(*g), why, len);
    run_gemm(g);
    return true;
}
