/* uid -> tensor index over a graph's tensors: open addressing, so that code walking every
 * port of every node looks each uid up in constant time (hipdnnSdkGraphFindTensor is a
 * linear scan). */
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "hipdnn/hipdnn_sdk.h"

/* uids come from graph bytes, so anyone can choose them: with a fixed hash, uids chosen to
 * collide made every lookup a scan (20 000 nodes took 5 s to deserialize).  Each map keys
 * its hash with the kernel's per-process random bytes and the map's own address, and mixes
 * with MurmurHash3's finalizer, so colliding uids cannot be chosen in advance. */
static uint64_t map_seed(const void* slot) {
    uint64_t seed = (uint64_t)(uintptr_t)slot * UINT64_C(0x9E3779B97F4A7C15);
    const void* at_random = (const void*)getauxval(AT_RANDOM);
    if (at_random) {
        uint64_t r;
        memcpy(&r, at_random, sizeof(r));
        seed ^= r;
    }
    return seed;
}

static uint32_t uid_hash(const hipdnnSdkUidMap* m, int64_t uid) {
    uint64_t x = (uint64_t)uid ^ m->seed;
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    x ^= x >> 33;
    return (uint32_t)x;
}

bool hipdnnSdkUidMapInit(hipdnnSdkUidMap* m, const hipdnnSdkGraph* g) {
    int32_t cap = 16;
    while (cap < 2 * g->num_tensors + 2) cap *= 2;
    m->cap = cap;
    m->g = g;
    m->slot = malloc((size_t)cap * sizeof(int32_t));
    if (m->slot) memset(m->slot, 0xff, (size_t)cap * sizeof(int32_t));
    m->seed = map_seed(m->slot);
    return m->slot != NULL;
}

int32_t hipdnnSdkUidMapInsert(hipdnnSdkUidMap* m, int32_t index) {
    int64_t uid = m->g->tensors[index].uid;
    uint32_t mask = (uint32_t)(m->cap - 1);
    for (uint32_t h = uid_hash(m, uid) & mask;; h = (h + 1) & mask) {
        int32_t o = m->slot[h];
        if (o < 0) {
            m->slot[h] = index;
            return -1;
        }
        if (m->g->tensors[o].uid == uid) return o;
    }
}

bool hipdnnSdkUidMapBuild(hipdnnSdkUidMap* m, const hipdnnSdkGraph* g) {
    if (!hipdnnSdkUidMapInit(m, g)) return false;
    for (int32_t i = 0; i < g->num_tensors; ++i) hipdnnSdkUidMapInsert(m, i);
    return true;
}

int32_t hipdnnSdkUidMapFind(const hipdnnSdkUidMap* m, int64_t uid) {
    uint32_t mask = (uint32_t)(m->cap - 1);
    for (uint32_t h = uid_hash(m, uid) & mask;; h = (h + 1) & mask) {
        int32_t t = m->slot[h];
        if (t < 0 || m->g->tensors[t].uid == uid) return t;
    }
}

void hipdnnSdkUidMapFree(hipdnnSdkUidMap* m) {
    free(m->slot);
    m->slot = NULL;
}
