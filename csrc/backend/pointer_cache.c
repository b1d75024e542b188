/* What the GPU runtime said of the device pointers execute was given, kept per thread so
 * that a plan run again on the same memory asks the driver nothing (a cuPointerGetAttributes
 * and a cuCtxGetCurrent a pointer were most of hipdnn's own host time of a small execute).
 *
 * Only device and managed memory with a known range is kept: {base, size, space, device}.
 * A pointer inside a kept range takes its answer, and the extent check starts from that
 * range; anything else (host memory, memory the runtime does not know) is asked every
 * time, so a wrong pointer is refused as before.  Every free made through hipdnn (its
 * device runtime's free: hipdnnDeviceFree_ext, DeviceArray, hipdnn-ep's allocator, the
 * backend's own copies) drops every thread's ranges, so memory hipdnn frees and hands out
 * again is asked about afresh.  Memory another allocator frees (cudaFree, a caching
 * allocator's release) hipdnn cannot see, so a refusal made from a kept answer is asked
 * again before it stands, and the cache is off unless $HIPDNN_POINTER_CACHE=1. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"

#define SLOTS 16

typedef struct {
    uintptr_t base;
    size_t size;
    hipdnnMemorySpace_t space;
    int device;
} range_entry;

static _Thread_local struct {
    unsigned epoch; /* g_epoch when these entries were asked (0: never) */
    unsigned used;
    unsigned next; /* the slot replaced next once all are used */
    range_entry e[SLOTS];
} t_cache;

static atomic_uint g_epoch = 1;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static bool g_enabled;

/* Off unless asked for: PyTorch's caching allocator frees and maps segments again behind
 * hipdnn's back, and a range kept from before refused its tensors (cuDNN frontend's
 * matmul fuzzer on the H200: 432 of 1 495 cases), while the saving did not stand out of
 * the host benchmark's noise there. */
static void read_env(void) {
    const char* v = getenv("HIPDNN_POINTER_CACHE");
    g_enabled = v && strcmp(v, "1") == 0;
}

void hipdnnPointerCacheDrop(void) { atomic_fetch_add_explicit(&g_epoch, 1, memory_order_acq_rel); }

/* The kept range ptr lies in; NULL if none (the cache emptied first when a free came
 * since it was filled). */
static const range_entry* lookup(uintptr_t p) {
    unsigned now = atomic_load_explicit(&g_epoch, memory_order_acquire);
    if (t_cache.epoch != now) {
        t_cache.epoch = now;
        t_cache.used = t_cache.next = 0;
        return NULL;
    }
    for (unsigned i = 0; i < t_cache.used; ++i)
        if (p - t_cache.e[i].base < t_cache.e[i].size) return &t_cache.e[i];
    return NULL;
}

/* Drops the kept ranges ptr lies in (an answer about to be asked afresh). */
static void forget(uintptr_t p) {
    unsigned now = atomic_load_explicit(&g_epoch, memory_order_acquire);
    if (t_cache.epoch != now) return; /* lookup empties it anyway */
    for (unsigned i = 0; i < t_cache.used;)
        if (p - t_cache.e[i].base < t_cache.e[i].size) t_cache.e[i] = t_cache.e[--t_cache.used];
        else ++i;
    t_cache.next = 0;
}

/* Keeps what the runtime answered under the epoch lookup read before asking it: a free
 * made meanwhile (by another thread) empties the cache at the next lookup. */
static void keep(const range_entry* r) {
    unsigned slot = t_cache.used < SLOTS ? t_cache.used++ : t_cache.next++ % SLOTS;
    t_cache.e[slot] = *r;
}

bool hipdnnDevicePointerFacts(const hipdnnDeviceRuntime* rt, const void* ptr,
                              hipdnnMemorySpace_t* space, int* device, uintptr_t* base,
                              size_t* size, bool fresh) {
    pthread_once(&g_once, read_env);
    if (g_enabled && fresh) forget((uintptr_t)ptr);
    const range_entry* hit = g_enabled && !fresh ? lookup((uintptr_t)ptr) : NULL;
    if (hit) {
        *space = hit->space;
        *device = hit->device;
        *base = hit->base;
        *size = hit->size;
        return true;
    }
    *size = 0;
    *device = -1;
    if (rt->pointer_info) { /* one query for the space and the range */
        rt->pointer_info(ptr, space, device, base, size);
    } else {
        *space = rt->pointer_space(ptr, device);
        bool ranged = *space != HIPDNN_MEMORY_HOST && rt->pointer_range &&
                      rt->pointer_range(ptr, base, size);
        if (!ranged) *size = 0;
    }
    if (g_enabled && *space != HIPDNN_MEMORY_HOST && *size)
        keep(&(range_entry){*base, *size, *space, *device});
    return false;
}
