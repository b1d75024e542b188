// emulate_sgemm.cpp — the fp32 register-tiled matmul kernel (gm_sgemm.h) run on the host by
// its own code: a block's 256 threads are 256 host threads, its shared memory the kernel's
// static arrays, __syncthreads a barrier among them; the blocks one after the other, in a
// scrambled order (emu_unit) so that where k is split a tile's last range to arrive,
// the one that sums them, is any of its ranges.  So the emulated tests check that kernel's
// loads, stages, tiles and split-k arrivals (its atomics: emulate.h's), not only the plan
// (emulate_mfma.cpp runs AMD's matrix-core kernel so; emulate.cpp every other matmul by a
// plain loop over k).
#include <pthread.h>

#include <mutex>
#include <thread>
#include <vector>

#include "emulate.h"

#include "gm_exec.h"

// gemm.h's (a C header, with C11 atomics)
extern "C" bool hipe_gm_sgemm_ok(const gm_program* p, bool* ak, bool* bk);

namespace {
struct dim1 {
    unsigned int x;
};
pthread_barrier_t g_barrier;
dim1 blockIdx;
thread_local dim1 threadIdx;
inline void __syncthreads() { pthread_barrier_wait(&g_barrier); }
} // namespace

#define __shared__ static

#include "gm_kernels.h"

#undef __shared__

namespace {
typedef void (*sgemm_fn)(const gm_program&);

template <int BM, int BN, bool AK, bool BK, int CONV>
void sgemm_block(const gm_program& g) {
    gm_sgemm<BM, BN, AK, BK, CONV, PW_SLOTS, PwInterpreted>(g);
}

template <int BM, int BN>
sgemm_fn sgemm_of(bool ak, bool bk, bool conv) {
    if (conv) return sgemm_block<BM, BN, false, true, GM_CONV_FPROP>;
    return ak ? (bk ? sgemm_block<BM, BN, true, true, 0> : sgemm_block<BM, BN, true, false, 0>)
              : (bk ? sgemm_block<BM, BN, false, true, 0> : sgemm_block<BM, BN, false, false, 0>);
}
} // namespace

bool emu_sgemm(const gm_program* g) {
    const int64_t blocks = gm_units(*g);
    bool ak, bk;
    if (!hipe_gm_sgemm_ok(g, &ak, &bk)) return false;
    const bool conv = g->conv == GM_CONV_FPROP;
    sgemm_fn fn = g->tile_m == 128 && g->tile_n == 128 ? sgemm_of<128, 128>(ak, bk, conv)
                  : g->tile_m == 128 && g->tile_n == 64 ? sgemm_of<128, 64>(ak, bk, conv)
                  : g->tile_m == 64 && g->tile_n == 64  ? sgemm_of<64, 64>(ak, bk, conv)
                                                        : nullptr;
    if (!fn) return false;
    static std::mutex one_at_a_time; // the shared memory and the barrier are the process's
    std::lock_guard<std::mutex> lock(one_at_a_time);
    pthread_barrier_init(&g_barrier, nullptr, GM_SG_THREADS);
    std::vector<std::thread> threads;
    for (int t = 0; t < GM_SG_THREADS; ++t)
        threads.emplace_back([g, blocks, fn, t] {
            threadIdx.x = (unsigned)t;
            for (int64_t b = 0; b < blocks; ++b) {
                if (t == 0) blockIdx.x = (unsigned)emu_unit(b, blocks);
                __syncthreads(); // every thread sees the block; the last one is done
                fn(*g);
                __syncthreads();
            }
        });
    for (std::thread& t : threads) t.join();
    pthread_barrier_destroy(&g_barrier);
    return true;
}
