/* allocator.c — the OrtAllocator ORT uses for hipdnn-ep's device memory (tensors of the
 * GPU device, initializers copied there, workspaces): every block straight from hipdnn's
 * device runtime (hipdnnDeviceMalloc_ext / Free_ext), no arena.  Each block is recorded
 * with its size, so that GetStats can answer and a Free of a pointer this allocator never
 * gave is reported instead of handed to the runtime.  Every allocation and free is logged
 * at VERBOSE through ORT's default logger. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipdnn_ep.h"

typedef struct {
    void* p;
    size_t bytes;
} block;

struct ep_alloc_table {
    block* live;
    size_t n_live, cap_live;
    uint64_t num_allocs, num_frees;
    uint64_t total, in_use, max_in_use, max_alloc;
};

typedef struct {
    OrtAllocator base; /* first: ORT hands back OrtAllocator* */
    ep_factory* f;
} ep_allocator;

/* Records block p under the factory's lock; false when out of host memory. */
static bool record(ep_factory* f, void* p, size_t bytes) {
    bool ok = true;
    pthread_mutex_lock(&f->lock);
    struct ep_alloc_table* t = f->allocations;
    if (!t) t = f->allocations = calloc(1, sizeof(*t));
    if (t && t->n_live == t->cap_live) {
        size_t cap = t->cap_live ? 2 * t->cap_live : 64;
        block* b = realloc(t->live, cap * sizeof(*b));
        if (b) {
            t->live = b;
            t->cap_live = cap;
        }
    }
    if (!t || t->n_live == t->cap_live) {
        ok = false;
    } else {
        t->live[t->n_live++] = (block){p, bytes};
        ++t->num_allocs;
        t->total += bytes;
        t->in_use += bytes;
        if (t->in_use > t->max_in_use) t->max_in_use = t->in_use;
        if (bytes > t->max_alloc) t->max_alloc = bytes;
    }
    pthread_mutex_unlock(&f->lock);
    return ok;
}

/* Removes block p; its size, or SIZE_MAX when the table does not hold it. */
static size_t forget(ep_factory* f, void* p) {
    size_t bytes = SIZE_MAX;
    pthread_mutex_lock(&f->lock);
    struct ep_alloc_table* t = f->allocations;
    for (size_t i = 0; t && i < t->n_live; ++i)
        if (t->live[i].p == p) {
            bytes = t->live[i].bytes;
            t->live[i] = t->live[--t->n_live];
            ++t->num_frees;
            t->in_use -= bytes;
            break;
        }
    pthread_mutex_unlock(&f->lock);
    return bytes;
}

OrtStatus* ep_device_alloc(ep_factory* f, size_t bytes, const char* what, void** out) {
    *out = NULL;
    if (bytes == 0) return NULL;
    OrtStatus* st = ep_gpu_enter(f->gpu.ordinal, what);
    if (st) return st;
    void* p = NULL;
    hipdnnStatus_t hs = hipdnnDeviceMalloc_ext(&p, bytes);
    if (hs != HIPDNN_STATUS_SUCCESS || !p)
        return ep_status(ORT_FAIL, "%s: %zu bytes of device memory on GPU %d: %s: %s", what,
                         bytes, f->gpu.ordinal, hipdnnGetErrorString(hs),
                         hipdnnPeekLastErrorString_ext());
    if (!record(f, p, bytes)) {
        hipdnnDeviceFree_ext(p);
        return ep_status(ORT_FAIL, "%s: out of host memory recording a block", what);
    }
    ep_log(f->logger, ORT_LOGGING_LEVEL_VERBOSE, ORT_LOGGING_LEVEL_VERBOSE,
           "device memory: %zu bytes at %p on GPU %d (%s)", bytes, p, f->gpu.ordinal, what);
    *out = p;
    return NULL;
}

void ep_device_free(ep_factory* f, void* p) {
    if (!p) return;
    size_t bytes = forget(f, p);
    if (bytes == SIZE_MAX) {
        ep_log(f->logger, ORT_LOGGING_LEVEL_VERBOSE, ORT_LOGGING_LEVEL_ERROR,
               "device memory: Free(%p), which hipdnn-ep's allocator did not give; not freed", p);
        return;
    }
    OrtStatus* st = ep_gpu_enter(f->gpu.ordinal, "device memory free");
    hipdnnStatus_t hs = st ? HIPDNN_STATUS_SUCCESS : hipdnnDeviceFree_ext(p);
    if (st || hs != HIPDNN_STATUS_SUCCESS) {
        ep_log(f->logger, ORT_LOGGING_LEVEL_VERBOSE, ORT_LOGGING_LEVEL_ERROR,
               "device memory: freeing %zu bytes at %p: %s", bytes, p,
               st ? g_ort->GetErrorMessage(st) : hipdnnPeekLastErrorString_ext());
        if (st) g_ort->ReleaseStatus(st);
        return;
    }
    ep_log(f->logger, ORT_LOGGING_LEVEL_VERBOSE, ORT_LOGGING_LEVEL_VERBOSE,
           "device memory: %zu bytes at %p freed", bytes, p);
}

void ep_allocations_free(ep_factory* f) {
    struct ep_alloc_table* t = f->allocations;
    if (!t) return;
    if (t->n_live)
        ep_log(f->logger, ORT_LOGGING_LEVEL_VERBOSE, ORT_LOGGING_LEVEL_WARNING,
               "device memory: %zu blocks (%llu bytes) still allocated when the factory is "
               "released", t->n_live, (unsigned long long)t->in_use);
    free(t->live);
    free(t);
    f->allocations = NULL;
}

/* ---- the OrtAllocator ---------------------------------------------------------------- */

static ep_allocator* self(const OrtAllocator* a) { return (ep_allocator*)a; }

static void* ORT_API_CALL a_alloc(OrtAllocator* a, size_t bytes) {
    ep_factory* f = self(a)->f;
    void* p = NULL;
    OrtStatus* st = ep_device_alloc(f, bytes, "OrtAllocator::Alloc", &p);
    if (st) {
        /* ORT turns NULL into its own "allocation failed"; the reason goes to the log */
        ep_log(f->logger, ORT_LOGGING_LEVEL_VERBOSE, ORT_LOGGING_LEVEL_ERROR, "%s",
               g_ort->GetErrorMessage(st));
        g_ort->ReleaseStatus(st);
    }
    return p;
}

static void* ORT_API_CALL a_reserve(OrtAllocator* a, size_t bytes) {
    return a_alloc(a, bytes); /* no arena: a reservation is an allocation */
}

static void ORT_API_CALL a_free(OrtAllocator* a, void* p) { ep_device_free(self(a)->f, p); }

static const OrtMemoryInfo* ORT_API_CALL a_info(const OrtAllocator* a) {
    return self(a)->f->gpu_memory;
}

static OrtStatus* ORT_API_CALL a_stats(const OrtAllocator* a, OrtKeyValuePairs** out) {
    ep_factory* f = self(a)->f;
    struct ep_alloc_table t;
    memset(&t, 0, sizeof(t));
    pthread_mutex_lock(&f->lock);
    if (f->allocations) t = *f->allocations;
    pthread_mutex_unlock(&f->lock);
    g_ort->CreateKeyValuePairs(out);
    const struct {
        const char* key;
        long long value;
    } kv[] = {{"Limit", -1},
              {"InUse", (long long)t.in_use},
              {"TotalAllocated", (long long)t.total},
              {"MaxInUse", (long long)t.max_in_use},
              {"NumAllocs", (long long)t.num_allocs},
              {"NumReserves", 0},
              {"MaxAllocSize", (long long)t.max_alloc}};
    for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); ++i) {
        char v[32];
        snprintf(v, sizeof(v), "%lld", kv[i].value);
        g_ort->AddKeyValuePair(*out, kv[i].key, v);
    }
    return NULL;
}

OrtStatus* ep_allocator_create(ep_factory* f, const OrtMemoryInfo* info, OrtAllocator** out) {
    *out = NULL;
    const char* name = NULL;
    OrtStatus* st = info ? g_ort->MemoryInfoGetName(info, &name) : NULL;
    if (st) g_ort->ReleaseStatus(st); /* only for the message */
    if (!f->gpu_memory || !info ||
        !g_ep_api->MemoryDevice_AreEqual(g_ep_api->MemoryInfo_GetMemoryDevice(info),
                                         f->gpu_memory_device))
        return ep_status(ORT_INVALID_ARGUMENT, "CreateAllocator: memory info '%s' is not the "
                         "device memory hipdnn-ep offered%s", name ? name : "(none)",
                         f->gpu_memory ? "" : " (it offers no GPU: host memory is ORT's)");
    ep_allocator* a = calloc(1, sizeof(*a));
    if (!a) return ep_status(ORT_FAIL, "CreateAllocator: out of memory");
    a->f = f;
    a->base.version = ORT_API_VERSION;
    a->base.Alloc = a_alloc;
    a->base.Free = a_free;
    a->base.Info = a_info;
    a->base.Reserve = a_reserve;
    a->base.GetStats = a_stats;
    a->base.AllocOnStream = NULL; /* optional: ORT calls Alloc */
    ep_log(f->logger, ORT_LOGGING_LEVEL_VERBOSE, ORT_LOGGING_LEVEL_VERBOSE,
           "device allocator %p created for GPU %d (%s)", (void*)a, f->gpu.ordinal, f->gpu.runtime);
    *out = &a->base;
    return NULL;
}

void ep_allocator_release(ep_factory* f, OrtAllocator* a) {
    if (!a) return;
    ep_log(f->logger, ORT_LOGGING_LEVEL_VERBOSE, ORT_LOGGING_LEVEL_VERBOSE,
           "device allocator %p released", (void*)a);
    free(self(a));
}
