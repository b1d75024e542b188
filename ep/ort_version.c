/* ort_version.c — which OrtApi hipdnn-ep uses in the ONNX Runtime that loads it.
 *
 * One binary runs on every ORT from EP_ORT_API_MIN's release on.  ORT's OrtApi version is
 * its minor version (1.24.1 serves versions 1 to 24), and GetApi gives NULL for a version
 * the runtime does not have, so the version asked for is the lower of the runtime's and
 * the headers' (ORT_API_VERSION).  A member added after EP_ORT_API_MIN must not be called
 * unless ep_ort_api_version() is at least the version that added it (today's headers are
 * those of EP_ORT_API_MIN, so there is no such call yet).  EP_ORT_API_MIN is the version of the
 * newest members hipdnn-ep needs without a fallback (the kernel registry of the GPU's
 * Memcpy kernels, CreateHardwareDevice, GetTensorElementTypeAndShapeDataReference). */
#include <stdio.h>

#include "hipdnn_ep.h"

_Static_assert(ORT_API_VERSION >= EP_ORT_API_MIN, "ONNX Runtime's headers are older than 1.24");

static uint32_t g_api_version;  /* the OrtApi version in use; 0 before CreateEpFactories */
static uint32_t g_runtime_api;  /* the runtime's own (its minor version); 0 if unreadable */
static const char* g_runtime = "?";

uint32_t ep_ort_api_version(void) { return g_api_version; }

const char* ep_ort_runtime(void) { return g_runtime; }

/* ORT 1.24 names a fused node "<ep>_<model hash>_<n>", n counted from 0 in each
 * GetCapability call (1.25 counts per EP): a second call over the same model (a subgraph,
 * or the graph again after ORT inlined a function) that fuses gives the names of the
 * first's, and session creation fails ("Conflicting with a registered kernel").  An
 * unreadable version counts as such a runtime. */
bool ep_ort_fuses_once(void) { return g_runtime_api < 25; }

/* The OrtApi version of an ORT version string ("1.24.1" gives 24); 0 if it is not one. */
static uint32_t api_of(const char* version) {
    unsigned major = 0, minor = 0;
    char dot = 0;
    if (!version || sscanf(version, "%u.%u%c", &major, &minor, &dot) < 2 || major != 1) return 0;
    return minor;
}

/* A status from OrtApi version 1, which every ORT serves: CreateStatus is its first member. */
static OrtStatus* decline(const OrtApiBase* base, const char* msg) {
    const OrtApi* v1 = base->GetApi(1);
    return v1 ? v1->CreateStatus(ORT_FAIL, msg) : NULL;
}

OrtStatus* ep_ort_negotiate(const OrtApiBase* base, const OrtApi** api) {
    *api = NULL;
    const char* runtime = base->GetVersionString ? base->GetVersionString() : NULL;
    if (!runtime) runtime = "(no version string)";
    uint32_t served = api_of(runtime);
    char msg[512];
    if (served && served < EP_ORT_API_MIN) {
        snprintf(msg, sizeof(msg), "hipdnn-ep: ONNX Runtime %s (OrtApi version %u) is too old: "
                 "hipdnn-ep needs ONNX Runtime 1.%d or later (OrtApi version %d)", runtime,
                 served, EP_ORT_API_MIN, EP_ORT_API_MIN);
        return decline(base, msg);
    }
    /* An unreadable version string: ask for the headers' version, which an ORT too old
     * for it refuses (GetApi's NULL). */
    uint32_t want = served && served < ORT_API_VERSION ? served : ORT_API_VERSION;
    *api = base->GetApi(want);
    if (!*api) {
        snprintf(msg, sizeof(msg), "hipdnn-ep: ONNX Runtime %s serves no OrtApi version %u: "
                 "hipdnn-ep needs ONNX Runtime 1.%d or later (OrtApi version %d)", runtime, want,
                 EP_ORT_API_MIN, EP_ORT_API_MIN);
        return decline(base, msg);
    }
    g_api_version = want;
    g_runtime_api = served;
    g_runtime = runtime;
    return NULL;
}
