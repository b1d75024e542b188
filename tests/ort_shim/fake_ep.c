/* fake_ep.c — a stand-in for hipdnn-ep (libhipdnn_ep.so) that tells the bridge's tests
 * what the bridge did to it, without ONNX Runtime sessions.  Each event is appended as one
 * line to the file named by FAKE_EP_LOG (O_APPEND: lines from several threads stay whole):
 *
 *   load / unload       the library's constructor and destructor (dlopen, dlclose)
 *   create PTR          a factory made by CreateEpFactories
 *   release PTR         a factory freed by ReleaseEpFactory
 *
 * FAKE_EP_FAIL=create or =release makes that call fail with a status (a release that fails
 * frees nothing); FAKE_EP_FACTORIES=N makes N factories per create (default 1).  Both are
 * read at each call, so a test can change them between calls.  Built with
 * -DFAKE_EP_NO_RELEASE it exports no ReleaseEpFactory: a library that is not hipdnn-ep. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "onnxruntime_c_api.h"

#define EXPORT __attribute__((visibility("default")))

static const OrtApi* g_api; /* from the first create: a release comes after one */

static void note(const char* fmt, const void* p) {
    const char* path = getenv("FAKE_EP_LOG");
    if (!path || !path[0]) return;
    char line[128];
    int n = snprintf(line, sizeof(line), fmt, p);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd < 0) return;
    if (n > 0 && write(fd, line, (size_t)n) != n) { /* a short line fails the test */ }
    close(fd);
}

__attribute__((constructor)) static void on_load(void) { note("load\n", NULL); }
__attribute__((destructor)) static void on_unload(void) { note("unload\n", NULL); }

static int failing(const char* what) {
    const char* v = getenv("FAKE_EP_FAIL");
    return v && !strcmp(v, what);
}

static const char* ORT_API_CALL f_name(const OrtEpFactory* f) {
    (void)f;
    return "fake-hipdnn";
}

EXPORT OrtStatus* CreateEpFactories(const char* registered_name, const OrtApiBase* base,
                                    const OrtLogger* logger, OrtEpFactory** factories,
                                    size_t max_factories, size_t* num_factories) {
    (void)registered_name, (void)logger;
    const OrtApi* api = base->GetApi(ORT_API_VERSION);
    g_api = api;
    *num_factories = 0;
    if (failing("create"))
        return api->CreateStatus(ORT_EP_FAIL, "fake hipdnn-ep: create fails on demand");
    const char* v = getenv("FAKE_EP_FACTORIES");
    size_t want = v ? (size_t)strtoul(v, NULL, 10) : 1;
    for (size_t i = 0; i < want && i < max_factories; ++i) {
        OrtEpFactory* f = calloc(1, sizeof(*f));
        if (!f) return api->CreateStatus(ORT_FAIL, "fake hipdnn-ep: out of memory");
        f->ort_version_supported = ORT_API_VERSION;
        f->GetName = f_name;
        factories[(*num_factories)++] = f;
        note("create %p\n", f);
    }
    return NULL;
}

#ifndef FAKE_EP_NO_RELEASE
EXPORT OrtStatus* ReleaseEpFactory(OrtEpFactory* factory) {
    if (failing("release"))
        return g_api->CreateStatus(ORT_EP_FAIL, "fake hipdnn-ep: release fails on demand");
    note("release %p\n", factory);
    free(factory);
    return NULL;
}
#endif
