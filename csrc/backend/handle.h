/* The handle: a stream and, per loaded plugin, that plugin's handle for this stream
 * (created on first use, so a handle costs nothing for plugins it never runs). */
#ifndef HIPDNN_BACKEND_HANDLE_H
#define HIPDNN_BACKEND_HANDLE_H

#include <pthread.h>
#include <stdatomic.h>

#include "hipdnn/hipdnn.h"
#include "hipdnn/hipdnn_plugin.h"

#define HIPDNN_HANDLE_MAGIC 0x68646e48u /* "hdnH" */

struct hipdnnHandle {
    uint32_t magic;
    atomic_int refs; /* the user's, plus one per live execution plan */
    hipdnnStream_t stream;
    int device; /* current GPU device at hipdnnCreate; 0 without device engines */
    pthread_mutex_t lock;
    int32_t num_plugins;
    hipdnnEnginePluginHandle_t* plugin_handles; /* by registry plugin index; NULL = not yet */
    struct hipdnnHandle* prev; /* the live handles, for fork (fork.c) */
    struct hipdnnHandle* next;
};

/* Plans keep their handle alive: hipdnnDestroy only drops the user's reference. */
void hipdnnHandleRetain(hipdnnHandle_t h);
void hipdnnHandleRelease(hipdnnHandle_t h);
hipdnnStatus_t hipdnnHandleCheck(hipdnnHandle_t h, const char* what);
/* This handle's plugin handle for plugin `index`, created (with the stream set) if new. */
hipdnnStatus_t hipdnnHandlePluginHandle(hipdnnHandle_t h, int32_t index,
                                        hipdnnEnginePluginHandle_t* out);
/* The same, for a caller that holds h's lock (or whose thread holds it on its behalf and
 * waits for it, as engine_query.c's workers): one thread per plugin index at a time. */
hipdnnStatus_t hipdnnHandlePluginHandleLocked(hipdnnHandle_t h, int32_t index,
                                              hipdnnEnginePluginHandle_t* out);

/* A plugin handle runs one call at a time: every plugin call on h's plugin handles is
 * made between these.  Log messages of the region are delivered at Unlock (log.h). */
void hipdnnHandleLock(hipdnnHandle_t h);
void hipdnnHandleUnlock(hipdnnHandle_t h);

/* fork.c: every live handle's lock around fork(), taken in list order. */
void hipdnnHandlesForkPrepare(void);
void hipdnnHandlesForkParent(void);
void hipdnnHandlesForkChild(void);

#endif
