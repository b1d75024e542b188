/* bridge.c — the bridge's two exports.  CreateEpFactories loads hipdnn-ep on first use and
 * hands back hipdnn-ep's own factories, untouched, so that the umbrella talks to hipdnn-ep
 * directly from then on; ReleaseEpFactory forwards, and unloads hipdnn-ep once no factory
 * it made is left.  An umbrella may create factories several times in one process (a
 * session and a device probe, from several threads), so hipdnn-ep stays loaded while any
 * factory is outstanding.  One mutex covers the count and the library, and is held across
 * the forwarded calls: a release must never dlclose hipdnn-ep under a create that is still
 * running inside it. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge.h"

#define EXPORT __attribute__((visibility("default")))

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static bridge_lib g_lib;          /* open exactly while g_n_live > 0 (outside the lock) */
static OrtEpFactory** g_live;     /* hipdnn-ep's factories handed out, not yet released */
static size_t g_n_live, g_cap_live;
static const OrtApi* g_api;       /* the caller's, for ReleaseEpFactory's own errors */

static OrtStatus* status(const OrtApi* api, OrtErrorCode code, const char* msg) {
    return api ? api->CreateStatus(code, msg) : NULL;
}

/* Closes hipdnn-ep when nothing of it is left in use: the last release, or a create that
 * failed or made nothing. */
static void close_if_unused(void) {
    if (g_n_live) return;
    bridge_lib_close(&g_lib);
    free(g_live);
    g_live = NULL;
    g_cap_live = 0;
}

static bool reserve(size_t more) {
    if (g_n_live + more <= g_cap_live) return true;
    size_t cap = g_cap_live ? g_cap_live : 4;
    while (cap < g_n_live + more) cap *= 2;
    OrtEpFactory** grown = realloc(g_live, cap * sizeof(*grown));
    if (!grown) return false;
    g_live = grown;
    g_cap_live = cap;
    return true;
}

EXPORT OrtStatus* CreateEpFactories(const char* registered_name, const OrtApiBase* ort_api_base,
                                    const OrtLogger* default_logger, OrtEpFactory** factories,
                                    size_t max_factories, size_t* num_factories) {
    if (num_factories) *num_factories = 0;
    if (!ort_api_base) return NULL; /* no API to report with */
    const OrtApi* api = ort_api_base->GetApi(ORT_API_VERSION);
    if (!api) {
        /* CreateStatus is the first member of every OrtApi version, so version 1's table can
         * still say what is wrong. */
        char msg[256];
        snprintf(msg, sizeof(msg), BRIDGE_PREFIX "ONNX Runtime %s does not serve API version %d "
                 "(built against it; ONNX Runtime 1.%d or later is needed)",
                 ort_api_base->GetVersionString ? ort_api_base->GetVersionString() : "?",
                 ORT_API_VERSION, ORT_API_VERSION); /* API version N came with ORT 1.N */
        return status(ort_api_base->GetApi(1), ORT_FAIL, msg);
    }
    if (!num_factories || (!factories && max_factories))
        return status(api, ORT_INVALID_ARGUMENT,
                      BRIDGE_PREFIX "CreateEpFactories: num_factories or factories is NULL");

    pthread_mutex_lock(&g_lock);
    g_api = api;
    if (!g_lib.handle) {
        char why[4 * PATH_MAX];
        OrtErrorCode code = bridge_lib_open(&g_lib, why, sizeof(why));
        if (code != ORT_OK) {
            pthread_mutex_unlock(&g_lock);
            return status(api, code, why); /* nothing counted: a retry loads afresh */
        }
    }
    size_t n = 0;
    OrtStatus* st = g_lib.create(registered_name, ort_api_base, default_logger, factories,
                                 max_factories, &n);
    if (st || n > max_factories) {
        /* On failure the caller ignores the factories (ORT does too), so none is counted. */
        close_if_unused();
        pthread_mutex_unlock(&g_lock);
        return st ? st : status(api, ORT_FAIL, BRIDGE_PREFIX "hipdnn-ep returned more "
                                               "factories than there was room for");
    }
    if (!reserve(n)) {
        for (size_t i = 0; i < n; ++i) {
            OrtStatus* rst = g_lib.release(factories[i]);
            if (rst) api->ReleaseStatus(rst);
        }
        close_if_unused();
        pthread_mutex_unlock(&g_lock);
        return status(api, ORT_FAIL, BRIDGE_PREFIX "out of memory counting factories");
    }
    if (n) memcpy(g_live + g_n_live, factories, n * sizeof(*factories)); /* g_live may be NULL */
    g_n_live += n;
    close_if_unused(); /* hipdnn-ep made none: nothing will be released */
    pthread_mutex_unlock(&g_lock);
    *num_factories = n;
    return NULL;
}

EXPORT OrtStatus* ReleaseEpFactory(OrtEpFactory* factory) {
    pthread_mutex_lock(&g_lock);
    size_t i = 0;
    while (i < g_n_live && g_live[i] != factory) ++i;
    if (!factory || i == g_n_live) {
        /* Forwarding a pointer hipdnn-ep did not make would have it free another
         * backend's factory, or one twice. */
        OrtStatus* st = status(g_api, ORT_INVALID_ARGUMENT, BRIDGE_PREFIX "ReleaseEpFactory: "
                               "not a factory this bridge handed out, or released already");
        pthread_mutex_unlock(&g_lock);
        return st;
    }
    OrtStatus* st = g_lib.release(factory);
    if (st) {
        /* The factory may still be alive, and its functions live in hipdnn-ep: keep both
         * counted and loaded rather than risk a call into unmapped code. */
        pthread_mutex_unlock(&g_lock);
        return st;
    }
    g_live[i] = g_live[--g_n_live];
    close_if_unused();
    pthread_mutex_unlock(&g_lock);
    return NULL;
}
