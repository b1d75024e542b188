/* hipdnnCreate and friends. */
#include <stdbool.h>
#include <stdlib.h>

#include "device.h"
#include "error.h"
#include "handle.h"
#include "log.h"
#include "registry.h"

/* The live handles, so that fork() can take every handle's lock and the child gets them
 * unlocked, with no plugin call half done (fork.c).  While a fork waits for the locks,
 * g_forking parks new callers of hipdnnHandleLock on g_live_lock, so that a thread running
 * plans back to back cannot starve the fork. */
static pthread_mutex_t g_live_lock = PTHREAD_MUTEX_INITIALIZER;
static hipdnnHandle_t g_live;
static atomic_bool g_forking;

void hipdnnHandleLock(hipdnnHandle_t h) {
    hipdnnLogDeferBegin();
    if (atomic_load(&g_forking)) {
        pthread_mutex_lock(&g_live_lock);
        pthread_mutex_unlock(&g_live_lock);
    }
    pthread_mutex_lock(&h->lock);
}

void hipdnnHandleUnlock(hipdnnHandle_t h) {
    pthread_mutex_unlock(&h->lock);
    hipdnnLogDeferEnd();
}

void hipdnnHandlesForkPrepare(void) {
    pthread_mutex_lock(&g_live_lock);
    atomic_store(&g_forking, true);
    for (hipdnnHandle_t h = g_live; h; h = h->next) pthread_mutex_lock(&h->lock);
}

void hipdnnHandlesForkParent(void) {
    for (hipdnnHandle_t h = g_live; h; h = h->next) pthread_mutex_unlock(&h->lock);
    atomic_store(&g_forking, false);
    pthread_mutex_unlock(&g_live_lock);
}

/* The child's one thread did not lock them (another thread id): fresh locks. */
void hipdnnHandlesForkChild(void) {
    for (hipdnnHandle_t h = g_live; h; h = h->next) pthread_mutex_init(&h->lock, NULL);
    atomic_store(&g_forking, false);
    pthread_mutex_init(&g_live_lock, NULL);
}

hipdnnStatus_t hipdnnHandleCheck(hipdnnHandle_t h, const char* what) {
    if (!h) return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NULL_POINTER, "%s: handle is NULL", what);
    if (h->magic != HIPDNN_HANDLE_MAGIC)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                          "%s: not a live hipdnn handle (destroyed or foreign pointer)", what);
    return HIPDNN_STATUS_SUCCESS;
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnCreate(hipdnnHandle_t* handle) {
    hipdnnClearError();
    if (!handle) return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NULL_POINTER, "hipdnnCreate: handle is NULL");
    *handle = NULL;
    hipdnnStatus_t st = hipdnnRegistryEnsureLoaded();
    if (st) return st;
    if (hipdnnRegistryEngineCount() == 0) {
        char why[900];
        hipdnnRegistryWhyNoEngine(why, sizeof(why));
        return hipdnnFail(HIPDNN_STATUS_PLUGIN_ERROR, "hipdnnCreate: %s", why);
    }
    hipdnnHandle_t h = calloc(1, sizeof(*h));
    int32_t n = hipdnnRegistryPluginCount();
    hipdnnEnginePluginHandle_t* ph = calloc((size_t)n + 1, sizeof(*ph));
    if (!h || !ph) {
        free(h);
        free(ph);
        return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "hipdnnCreate: out of memory");
    }
    /* Only device engines need the device, and only they justify loading a GPU runtime. */
    if (hipdnnRegistryHasDeviceEngine()) hipdnnDeviceCurrent(&h->device);
    h->magic = HIPDNN_HANDLE_MAGIC;
    atomic_init(&h->refs, 1);
    h->num_plugins = n;
    h->plugin_handles = ph;
    pthread_mutex_init(&h->lock, NULL);
    pthread_mutex_lock(&g_live_lock);
    h->next = g_live;
    if (g_live) g_live->prev = h;
    g_live = h;
    pthread_mutex_unlock(&g_live_lock);
    *handle = h;
    return HIPDNN_STATUS_SUCCESS;
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnDestroy(hipdnnHandle_t h) {
    hipdnnClearError();
    if (!h) return HIPDNN_STATUS_SUCCESS;
    hipdnnStatus_t st = hipdnnHandleCheck(h, "hipdnnDestroy");
    if (st) return st;
    hipdnnHandleRelease(h);
    return HIPDNN_STATUS_SUCCESS;
}

void hipdnnHandleRetain(hipdnnHandle_t h) { atomic_fetch_add(&h->refs, 1); }

void hipdnnHandleRelease(hipdnnHandle_t h) {
    if (atomic_fetch_sub(&h->refs, 1) != 1) return;
    /* Still listed, so a fork waits for the plugins to finish destroying. */
    hipdnnHandleLock(h);
    for (int32_t i = 0; i < h->num_plugins; ++i)
        if (h->plugin_handles[i]) hipdnnRegistryPlugin(i)->destroy(h->plugin_handles[i]);
    hipdnnHandleUnlock(h);
    pthread_mutex_lock(&g_live_lock);
    if (h->prev) h->prev->next = h->next;
    else g_live = h->next;
    if (h->next) h->next->prev = h->prev;
    pthread_mutex_unlock(&g_live_lock);
    free(h->plugin_handles);
    pthread_mutex_destroy(&h->lock);
    h->magic = 0;
    free(h);
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnSetStream(hipdnnHandle_t h, hipdnnStream_t stream) {
    hipdnnClearError();
    hipdnnStatus_t st = hipdnnHandleCheck(h, "hipdnnSetStream");
    if (st) return st;
    hipdnnHandleLock(h);
    h->stream = stream;
    for (int32_t i = 0; i < h->num_plugins && !st; ++i) {
        hipdnnPlugin* p = hipdnnRegistryPlugin(i);
        if (h->plugin_handles[i] &&
            p->set_stream(h->plugin_handles[i], stream) != HIPDNN_PLUGIN_STATUS_SUCCESS)
            st = hipdnnFail(HIPDNN_STATUS_PLUGIN_ERROR, "hipdnnSetStream: plugin %s: %s", p->path,
                            hipdnnPluginLastError(p));
    }
    hipdnnHandleUnlock(h);
    return st;
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnGetDevice_ext(hipdnnHandle_t h, int* device) {
    hipdnnClearError();
    hipdnnStatus_t st = hipdnnHandleCheck(h, "hipdnnGetDevice_ext");
    if (st) return st;
    if (!device)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NULL_POINTER, "hipdnnGetDevice_ext: device is NULL");
    *device = h->device;
    return HIPDNN_STATUS_SUCCESS;
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnGetStream(hipdnnHandle_t h, hipdnnStream_t* stream) {
    hipdnnClearError();
    hipdnnStatus_t st = hipdnnHandleCheck(h, "hipdnnGetStream");
    if (st) return st;
    if (!stream) return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NULL_POINTER, "hipdnnGetStream: stream is NULL");
    *stream = h->stream;
    return HIPDNN_STATUS_SUCCESS;
}

hipdnnStatus_t hipdnnHandlePluginHandle(hipdnnHandle_t h, int32_t index,
                                        hipdnnEnginePluginHandle_t* out) {
    if (index < 0 || index >= h->num_plugins)
        return hipdnnFail(HIPDNN_STATUS_INTERNAL_ERROR, "plugin index %d out of range", (int)index);
    hipdnnHandleLock(h);
    const hipdnnStatus_t st = hipdnnHandlePluginHandleLocked(h, index, out);
    hipdnnHandleUnlock(h);
    return st;
}

/* Takes no lock: the slot array is sized at hipdnnCreate and never reallocated, and each
 * thread makes only its own plugin's slot (engine_query.c), so slots of different plugins
 * may be made at once while one thread holds the lock for them all. */
hipdnnStatus_t hipdnnHandlePluginHandleLocked(hipdnnHandle_t h, int32_t index,
                                              hipdnnEnginePluginHandle_t* out) {
    if (index < 0 || index >= h->num_plugins)
        return hipdnnFail(HIPDNN_STATUS_INTERNAL_ERROR, "plugin index %d out of range", (int)index);
    hipdnnStatus_t st = HIPDNN_STATUS_SUCCESS;
    if (!h->plugin_handles[index]) {
        hipdnnPlugin* p = hipdnnRegistryPlugin(index);
        hipdnnEnginePluginHandle_t ph = NULL;
        hipdnnPluginHandleInfo_t info = {(uint32_t)sizeof(info), h->device};
        hipdnnPluginStatus_t cs = p->create_for_device ? p->create_for_device(&ph, &info)
                                                       : p->create(&ph);
        if (cs != HIPDNN_PLUGIN_STATUS_SUCCESS)
            st = hipdnnFail(HIPDNN_STATUS_PLUGIN_ERROR, "plugin %s: create failed: %s", p->path,
                            hipdnnPluginLastError(p));
        else if (h->stream && p->set_stream(ph, h->stream) != HIPDNN_PLUGIN_STATUS_SUCCESS) {
            st = hipdnnFail(HIPDNN_STATUS_PLUGIN_ERROR, "plugin %s: set stream failed: %s", p->path,
                            hipdnnPluginLastError(p));
            p->destroy(ph);
        } else
            h->plugin_handles[index] = ph;
    }
    *out = h->plugin_handles[index];
    return st;
}
