// emulate_mfma.cpp — AMD's matrix-core matmul kernel (gm_mfma.h) run on the host by its own
// code, with a model of the instruction it calls: a block's 256 threads are 256 host
// threads, 4 wavefronts of 64, its LDS a static buffer, __syncthreads a barrier among them;
// the blocks one after the other in a scrambled order (emu_unit), as emulate_sgemm.cpp runs
// the fp32 kernel.  So the emulated tests check the kernel's loads, LDS stages, lane
// layouts, tile and split-k arrivals wherever they run: no AMD GPU has run it.
//
// The model of v_mfma_f32_32x32x8f16 / v_mfma_f32_32x32x8bf16_1k (one 32 x 32 block, no
// broadcast): each lane puts its two operand words where its wave can read them, the
// wave's 64 threads meet at a barrier, and each lane computes its own 16 results from the
// whole wave's operands by the documented layout (gm_mfma.h's head): lane l holds
// a[l % 32][4 (l / 32) + e], b[4 (l / 32) + e][l % 32], and results
// c[8 (v / 4) + 4 (l / 32) + v % 4][l % 32].  Products of two 16-bit floats are exact in
// fp32; the model adds them to the accumulator in k order (the hardware's order inside one
// instruction is its own: the tests' tolerances cover either).
#include <pthread.h>

#include <mutex>
#include <thread>
#include <vector>

#include "emulate.h"

#include "gm_exec.h"

// gemm.h's (a C header, with C11 atomics)
extern "C" bool hipe_gm_mfma_ok(const gm_program* p, bool* ak, bool* bk);

#define GM_MFMA_HOST_MODEL 1

namespace {
struct dim1 {
    unsigned int x;
};
constexpr int kWaves = 4, kLanes = 64;
pthread_barrier_t g_block;
pthread_barrier_t g_wave[kWaves];
dim1 blockIdx;
thread_local dim1 threadIdx;
thread_local int t_parity; // which of its wave's two exchange buffers a lane writes next
inline void __syncthreads() { pthread_barrier_wait(&g_block); }

// A wave's operands of one instruction; two, alternately, so that one barrier a call
// suffices (a lane writes a buffer again only after every lane passed the next call's
// barrier, so after every lane read it).
struct Exchange {
    uint32_t a[kLanes][2], b[kLanes][2];
};
Exchange g_x[kWaves][2];

typedef float gm_mf_acc __attribute__((vector_size(64)));

// Element e (0..3) of the four 16-bit values in a lane's two words, as fp32.
template <int DT>
float operand(const uint32_t* w, int e) {
    const unsigned short h = (unsigned short)(w[e / 2] >> (16 * (e % 2)));
    return DT == PW_BF16 ? hd_bf16_to_float(h) : hd_half_to_float(h);
}

template <int DT>
void gm_mf_op(gm_mf_acc& acc, uint32_t a0, uint32_t a1, uint32_t b0, uint32_t b1) {
    const int lane = (int)threadIdx.x % kLanes, wave = (int)threadIdx.x / kLanes;
    Exchange& x = g_x[wave][t_parity];
    t_parity ^= 1;
    x.a[lane][0] = a0;
    x.a[lane][1] = a1;
    x.b[lane][0] = b0;
    x.b[lane][1] = b1;
    pthread_barrier_wait(&g_wave[wave]);
    const int j = lane % 32;
    for (int v = 0; v < 16; ++v) {
        const int i = 8 * (v / 4) + 4 * (lane / 32) + v % 4;
        float sum = acc[v];
        for (int k = 0; k < 8; ++k) // a[i][k] in lane i + 32 (k / 4), b[k][j] in j + 32 (k / 4)
            sum = fmaf(operand<DT>(x.a[i + 32 * (k / 4)], k % 4),
                       operand<DT>(x.b[j + 32 * (k / 4)], k % 4), sum);
        acc[v] = sum;
    }
}
} // namespace

#define __shared__ static

#include "gm_kernels.h"

#undef __shared__

namespace {
typedef void (*mfma_fn)(const gm_program&, unsigned char*);

template <int DT, bool AK, bool BK>
void mfma_block(const gm_program& g, unsigned char* smem) {
    gm_mfma<DT, AK, BK, 64, 128, PW_SLOTS, PwInterpreted>(g, smem);
}

template <int DT>
mfma_fn mfma_of(bool ak, bool bk) {
    return ak ? (bk ? mfma_block<DT, true, true> : mfma_block<DT, true, false>)
              : (bk ? mfma_block<DT, false, true> : mfma_block<DT, false, false>);
}

alignas(16) unsigned char g_lds[65536];
} // namespace

bool emu_mfma(const gm_program* g) {
    const int64_t blocks = gm_units(*g);
    bool ak, bk;
    if (!hipe_gm_mfma_ok(g, &ak, &bk) || g->tile_m != 64 || g->tile_n != 128) return false;
    mfma_fn fn = g->a_dtype == PW_BF16 ? mfma_of<PW_BF16>(ak, bk) : mfma_of<PW_F16>(ak, bk);
    static std::mutex one_at_a_time; // the LDS and the barriers are the process's
    std::lock_guard<std::mutex> lock(one_at_a_time);
    pthread_barrier_init(&g_block, nullptr, GM_MF_THREADS);
    for (int w = 0; w < kWaves; ++w) pthread_barrier_init(&g_wave[w], nullptr, kLanes);
    std::vector<std::thread> threads;
    for (int t = 0; t < GM_MF_THREADS; ++t)
        threads.emplace_back([g, blocks, fn, t] {
            threadIdx.x = (unsigned)t;
            t_parity = 0;
            for (int64_t b = 0; b < blocks; ++b) {
                if (t == 0) blockIdx.x = (unsigned)emu_unit(b, blocks);
                __syncthreads(); // every thread sees the block; the last one is done
                fn(*g, g_lds);
                __syncthreads();
            }
        });
    for (std::thread& t : threads) t.join();
    for (int w = 0; w < kWaves; ++w) pthread_barrier_destroy(&g_wave[w]);
    pthread_barrier_destroy(&g_block);
    return true;
}
