/* ep_version_check — hipdnn-ep's OrtApi version negotiation (ep/ort_version.c), driven
 * through CreateEpFactories with an OrtApiBase that poses as another ONNX Runtime release:
 * its GetVersionString says that release, and its GetApi serves the versions that release
 * has (forwarding to the ORT this is linked against, which must have them too) and counts
 * every version asked for.
 *
 *   the ORT linked      a factory, asking for min(its version, ORT_API_VERSION) only
 *   "1.99.0"            a factory, asking for ORT_API_VERSION only (never a newer one)
 *   "1.23.2" (API 23)   no factory; a status naming 1.23.2 and 1.24, asking for API 1 only
 *   "1.7.0"             likewise, naming 1.7.0
 *   "garbage"           the headers' version asked for: a factory where the ORT serves it
 *
 * Prints one line per check and exits 1 if any failed.
 * Usage: ep_version_check [path/to/libhipdnn_ep.so] */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxruntime_c_api.h"

#ifndef HIPDNN_EP_LIBRARY
#define HIPDNN_EP_LIBRARY "libhipdnn_ep.so"
#endif

static int failures;
static const OrtApiBase* real;
static const char* posed_version;
static uint32_t posed_api;       /* the highest OrtApi version the posing release serves */
static uint32_t asked[8], n_asked;

static void expect(int ok, const char* what) {
    printf("%s %s\n", ok ? "ok  " : "FAIL", what);
    failures += !ok;
}

static const OrtApi* ORT_API_CALL posed_get_api(uint32_t version) NO_EXCEPTION {
    if (n_asked < sizeof(asked) / sizeof(asked[0])) asked[n_asked] = version;
    ++n_asked;
    return version <= posed_api ? real->GetApi(version) : NULL;
}

static const char* ORT_API_CALL posed_version_string(void) NO_EXCEPTION { return posed_version; }

static const OrtApiBase posed = {posed_get_api, posed_version_string};

/* CreateEpFactories as `version` (serving up to `api`): the status's message, "" when it
 * made a factory (released here), or NULL when it returned neither. */
static char* pose(CreateEpApiFactoriesFn create, ReleaseEpApiFactoryFn release,
                  const char* version, uint32_t api, char* msg, size_t size) {
    posed_version = version;
    posed_api = api;
    n_asked = 0;
    OrtEpFactory* f[2] = {0};
    size_t n = 0;
    OrtStatus* st = create("hipdnn", &posed, NULL, f, 2, &n);
    const OrtApi* ort = real->GetApi(1);
    if (st) {
        snprintf(msg, size, "%s", ort->GetErrorMessage(st));
        ort->ReleaseStatus(st);
        expect(n == 0, "no factory with an error");
        return msg;
    }
    if (n != 1 || !f[0]) return NULL;
    release(f[0]);
    msg[0] = 0;
    return msg;
}

static int asked_only(uint32_t version) { return n_asked == 1 && asked[0] == version; }

int main(int argc, char** argv) {
    const char* path = argc > 1 ? argv[1] : HIPDNN_EP_LIBRARY;
    real = OrtGetApiBase();
    const char* linked = real->GetVersionString();
    unsigned major = 0, minor = 0;
    if (sscanf(linked, "%u.%u", &major, &minor) != 2 || major != 1 || minor < 24) {
        printf("FAIL the ORT linked, %s, is not 1.24 or later\n", linked);
        return 1;
    }
    printf("ok   the ORT linked is %s\n", linked);
    void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        printf("FAIL dlopen %s: %s\n", path, dlerror());
        return 1;
    }
    CreateEpApiFactoriesFn create = (CreateEpApiFactoriesFn)dlsym(lib, "CreateEpFactories");
    ReleaseEpApiFactoryFn release = (ReleaseEpApiFactoryFn)dlsym(lib, "ReleaseEpFactory");
    if (!create || !release) {
        printf("FAIL %s does not export CreateEpFactories and ReleaseEpFactory\n", path);
        return 1;
    }
    char msg[1024], what[256];
    uint32_t want = minor < ORT_API_VERSION ? minor : ORT_API_VERSION;

    char* m = pose(create, release, linked, minor, msg, sizeof(msg));
    snprintf(what, sizeof(what), "as itself (%s): a factory, OrtApi %u asked for, nothing newer",
             linked, want);
    expect(m && !m[0] && asked_only(want), what);

    m = pose(create, release, "1.99.0", 99, msg, sizeof(msg));
    snprintf(what, sizeof(what), "as 1.99.0: a factory on the headers' OrtApi %d, nothing newer "
             "asked for", ORT_API_VERSION);
    expect(m && !m[0] && asked_only(ORT_API_VERSION), what);

    const char* old[] = {"1.23.2", "1.7.0"};
    for (int i = 0; i < 2; ++i) {
        m = pose(create, release, old[i], (uint32_t)atoi(old[i] + 2), msg, sizeof(msg));
        snprintf(what, sizeof(what), "as %s: refused, naming %s and ONNX Runtime 1.24", old[i],
                 old[i]);
        expect(m && m[0] && strstr(m, old[i]) && strstr(m, "ONNX Runtime 1.24 or later") &&
               strstr(m, "too old") && asked_only(1), what);
        if (m && m[0]) printf("     the message: %s\n", m);
    }

    m = pose(create, release, "garbage", ORT_API_VERSION, msg, sizeof(msg));
    snprintf(what, sizeof(what), "an unreadable version string: OrtApi %d asked for, a factory",
             ORT_API_VERSION);
    expect(m && !m[0] && asked_only(ORT_API_VERSION), what);
    m = pose(create, release, "garbage", 23, msg, sizeof(msg));
    expect(m && m[0] && strstr(m, "garbage") && strstr(m, "1.24 or later"),
           "an unreadable version string where that OrtApi is not served: refused, naming it");

    printf(failures ? "%d FAILED\n" : "all ok\n", failures);
    return failures ? 1 : 0;
}
