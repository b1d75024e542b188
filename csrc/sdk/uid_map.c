/* uid -> tensor index over a graph's tensors: open addressing, so that code walking every
 * port of every node looks each uid up in constant time (hipdnnSdkGraphFindTensor is a
 * linear scan). */
#include <stdlib.h>
#include <string.h>

#include "hipdnn/hipdnn_sdk.h"

static uint32_t uid_hash(int64_t uid) {
    uint64_t x = (uint64_t)uid * UINT64_C(0x9E3779B97F4A7C15);
    return (uint32_t)(x >> 32);
}

bool hipdnnSdkUidMapInit(hipdnnSdkUidMap* m, const hipdnnSdkGraph* g) {
    int32_t cap = 16;
    while (cap < 2 * g->num_tensors + 2) cap *= 2;
    m->cap = cap;
    m->g = g;
    m->slot = malloc((size_t)cap * sizeof(int32_t));
    if (m->slot) memset(m->slot, 0xff, (size_t)cap * sizeof(int32_t));
    return m->slot != NULL;
}

int32_t hipdnnSdkUidMapInsert(hipdnnSdkUidMap* m, int32_t index) {
    int64_t uid = m->g->tensors[index].uid;
    uint32_t mask = (uint32_t)(m->cap - 1);
    for (uint32_t h = uid_hash(uid) & mask;; h = (h + 1) & mask) {
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
    for (uint32_t h = uid_hash(uid) & mask;; h = (h + 1) & mask) {
        int32_t t = m->slot[h];
        if (t < 0 || m->g->tensors[t].uid == uid) return t;
    }
}

void hipdnnSdkUidMapFree(hipdnnSdkUidMap* m) {
    free(m->slot);
    m->slot = NULL;
}
