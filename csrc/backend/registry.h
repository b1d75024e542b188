/* The plugin registry: which engine plugins loaded, their engines, and why others were
 * skipped.  Loaded once per process (on the first handle or engine query); after that
 * it is read-only, so lookups need no lock. */
#ifndef HIPDNN_BACKEND_REGISTRY_H
#define HIPDNN_BACKEND_REGISTRY_H

#include <pthread.h>
#include <stdbool.h>

#include "hipdnn/hipdnn.h"
#include "hipdnn/hipdnn_plugin.h"

typedef struct hipdnnPlugin {
    char* path;
    const char* name;
    const char* version; /* hipdnnPluginGetVersion's answer ("?" if none): the plan cache keys on it */
    void* lib;
    uint32_t api_minor; /* 0: ABI 1.0, driven as before; 1: ABI 1.1 */
    void (*last_error)(const char**);
    hipdnnPluginStatus_t (*create)(hipdnnEnginePluginHandle_t*);
    hipdnnPluginStatus_t (*destroy)(hipdnnEnginePluginHandle_t);
    hipdnnPluginStatus_t (*set_stream)(hipdnnEnginePluginHandle_t, hipdnnStream_t);
    hipdnnPluginStatus_t (*get_all_ids)(uint64_t*, uint32_t, uint32_t*);
    hipdnnPluginStatus_t (*get_applicable)(hipdnnEnginePluginHandle_t, const uint8_t*, size_t,
                                           uint64_t*, uint32_t, uint32_t*);
    hipdnnPluginStatus_t (*get_details)(hipdnnEnginePluginHandle_t, uint64_t,
                                        const hipdnnPluginEngineDetails_t**);
    hipdnnPluginStatus_t (*destroy_details)(hipdnnEnginePluginHandle_t,
                                            const hipdnnPluginEngineDetails_t*);
    hipdnnPluginStatus_t (*get_workspace)(hipdnnEnginePluginHandle_t, const uint8_t*, size_t,
                                          const uint8_t*, size_t, size_t*);
    hipdnnPluginStatus_t (*create_context)(hipdnnEnginePluginHandle_t, const uint8_t*, size_t,
                                           const uint8_t*, size_t,
                                           hipdnnEnginePluginExecutionContext_t*);
    hipdnnPluginStatus_t (*destroy_context)(hipdnnEnginePluginHandle_t,
                                            hipdnnEnginePluginExecutionContext_t);
    hipdnnPluginStatus_t (*execute)(hipdnnEnginePluginHandle_t,
                                    hipdnnEnginePluginExecutionContext_t, void*,
                                    const hipdnnPluginDeviceBuffer_t*, uint32_t);
    /* ABI 1.1 (NULL for 1.0 plugins) */
    hipdnnPluginStatus_t (*create_for_device)(hipdnnEnginePluginHandle_t*,
                                              const hipdnnPluginHandleInfo_t*);
    hipdnnPluginStatus_t (*workspace_from_context)(hipdnnEnginePluginHandle_t,
                                                   hipdnnEnginePluginExecutionContext_t, size_t*);
    hipdnnPluginStatus_t (*enqueue)(hipdnnEnginePluginHandle_t,
                                    hipdnnEnginePluginExecutionContext_t, void*, size_t,
                                    const hipdnnPluginTensorBuffer_t*, uint32_t);
    /* optional: NULL means "declined, no reason given" */
    hipdnnPluginStatus_t (*get_reason)(hipdnnEnginePluginHandle_t, uint64_t, const uint8_t*,
                                       size_t, const char**);
    /* optional: NULL means the plugin does not describe its kernels */
    hipdnnPluginStatus_t (*get_kernels)(hipdnnEnginePluginHandle_t,
                                        hipdnnEnginePluginExecutionContext_t,
                                        const hipdnnPluginKernelInfo_t**, uint32_t*);
} hipdnnPlugin;

/* The most knobs an engine may offer; a plugin offering more is dropped with the reason. */
#define HIPDNN_ENGINE_MAX_KNOBS 16
/* The most values a knob may list as its only valid ones (hipdnnPluginKnobValues_t). */
#define HIPDNN_KNOB_MAX_VALUES 16

typedef struct {
    uint64_t id;
    char name[64];
    hipdnnMemorySpace_t memory_space;
    int32_t priority;
    uint32_t flags;
    int32_t plugin; /* index into the plugin list */
    int32_t num_knobs;
    struct hipdnnEngineKnob {
        int64_t id, min, max, def; /* the plugin's hipdnnPluginKnobInfo_t, name aside */
        int64_t stride;            /* >= 1; its hipdnnPluginKnobValues_t, or 1 */
        int32_t num_values;        /* 0: every value on the stride */
        int64_t values[HIPDNN_KNOB_MAX_VALUES];
    } knobs[HIPDNN_ENGINE_MAX_KNOBS];
} hipdnnEngineEntry;

/* Whether any loaded engine runs on device memory (else no GPU runtime is ever needed). */
bool hipdnnRegistryHasDeviceEngine(void);

/* Loads the plugins if not done yet.  Fails only if loading itself could not run
 * (out of memory); a plugin that does not load is logged and skipped. */
hipdnnStatus_t hipdnnRegistryEnsureLoaded(void);

int32_t hipdnnRegistryPluginCount(void);
hipdnnPlugin* hipdnnRegistryPlugin(int32_t index);
int32_t hipdnnRegistryEngineCount(void);
/* Engines are kept sorted by name once loading is done, so an index (ENGINE_GLOBAL_INDEX)
 * does not depend on the order plugins were found in. */
const hipdnnEngineEntry* hipdnnRegistryEngine(int32_t index);
/* Index of the engine with this id or name; -1 if none. */
int32_t hipdnnRegistryFindEngine(uint64_t id);
int32_t hipdnnRegistryFindEngineByName(const char* name);

/* "no engine plugin loaded (searched: ...); <path>: <reason>; ..." */
void hipdnnRegistryWhyNoEngine(char* buf, size_t len);

/* The two-call pattern over n strings (hipdnnGetSkippedEnginePlugins_ext's): out NULL asks
 * for *num and *max_len; fn names the API function in messages. */
hipdnnStatus_t hipdnnReturnStrings(const char* fn, char** list, size_t n, size_t* num,
                                   char** out, size_t* max_len);

/* fork.c: the registry's lock around fork(). */
void hipdnnRegistryForkPrepare(void);
void hipdnnRegistryForkParent(void);
void hipdnnRegistryForkChild(void);

/* The plugin's message for its last failure ("" if it gives none). */
const char* hipdnnPluginLastError(const hipdnnPlugin* p);

#endif
