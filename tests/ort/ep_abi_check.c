/* ep_abi_check — hipdnn-ep's plugin-EP ABI checked the way ORT uses it, without a session:
 * the library exports only CreateEpFactories and ReleaseEpFactory; the factory reports this
 * header's API version and sets every member of OrtEpFactory (ORT calls each member its
 * version defines, so a NULL one crashes registration); GetSupportedDevices offers a CPU
 * once and a GPU never; CreateEp with that device, and with no device at all, gives an
 * OrtEp whose members are all set; everything releases.  Prints one line per check and
 * exits 1 if any failed.  Usage: ep_abi_check [path/to/libhipdnn_ep.so] */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "onnxruntime_c_api.h"

#ifndef HIPDNN_EP_LIBRARY
#define HIPDNN_EP_LIBRARY "libhipdnn_ep.so"
#endif

static int failures;

static void expect(int ok, const char* what) {
    printf("%s %s\n", ok ? "ok  " : "FAIL", what);
    failures += !ok;
}

static int status_ok(const OrtApi* ort, OrtStatus* st, const char* what) {
    if (!st) return 1;
    printf("FAIL %s: %s\n", what, ort->GetErrorMessage(st));
    ort->ReleaseStatus(st);
    ++failures;
    return 0;
}

/* Every function pointer after the leading version field is set. */
static int all_members_set(const void* obj, size_t size, size_t first, const char* what) {
    const unsigned char* p = obj;
    int ok = 1;
    for (size_t off = first; off + sizeof(void*) <= size; off += sizeof(void*)) {
        void* fn = NULL;
        memcpy(&fn, p + off, sizeof(fn));
        if (!fn) {
            printf("FAIL %s: member at offset %zu is NULL\n", what, off);
            ok = 0;
        }
    }
    return ok;
}

int main(int argc, char** argv) {
    const char* path = argc > 1 ? argv[1] : HIPDNN_EP_LIBRARY;
    const OrtApi* ort = OrtGetApiBase()->GetApi(ORT_API_VERSION);
    if (!ort) {
        printf("FAIL libonnxruntime serves no API version %d\n", ORT_API_VERSION);
        return 1;
    }
    const OrtEpApi* ep_api = ort->GetEpApi();
    void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        printf("FAIL dlopen %s: %s\n", path, dlerror());
        return 1;
    }
    CreateEpApiFactoriesFn create = (CreateEpApiFactoriesFn)dlsym(lib, "CreateEpFactories");
    ReleaseEpApiFactoryFn release = (ReleaseEpApiFactoryFn)dlsym(lib, "ReleaseEpFactory");
    expect(create && release, "CreateEpFactories and ReleaseEpFactory are exported");
    if (!create || !release) return 1;

    OrtEpFactory* factories[4] = {0};
    size_t n = 0;
    if (!status_ok(ort, create("hipdnn", OrtGetApiBase(), NULL, factories, 4, &n),
                   "CreateEpFactories"))
        return 1;
    expect(n == 1 && factories[0], "one factory");
    if (n != 1) return 1;
    OrtEpFactory* f = factories[0];
    expect(f->ort_version_supported == ORT_API_VERSION, "factory reports ORT_API_VERSION");
    expect(all_members_set(f, sizeof(*f), offsetof(OrtEpFactory, GetName), "OrtEpFactory"),
           "every OrtEpFactory member is set");
    expect(!strcmp(f->GetName(f), "hipdnn"), "factory name is 'hipdnn'");
    expect(f->GetVersion(f) && f->GetVersion(f)[0], "factory has a version");

    OrtHardwareDevice *cpu = NULL, *gpu = NULL;
    status_ok(ort, ep_api->CreateHardwareDevice(OrtHardwareDeviceType_CPU, 0, 0, "test", NULL, &cpu),
              "CreateHardwareDevice CPU");
    status_ok(ort, ep_api->CreateHardwareDevice(OrtHardwareDeviceType_GPU, 0x1002, 1, "test", NULL, &gpu),
              "CreateHardwareDevice GPU");
    const OrtHardwareDevice* hw[3] = {gpu, cpu, cpu};
    OrtEpDevice* offered[8] = {0};
    size_t n_offered = 0;
    if (status_ok(ort, f->GetSupportedDevices(f, hw, 3, offered, 8, &n_offered), "GetSupportedDevices"))
        expect(n_offered == 1 && offered[0], "the CPU is offered once, the GPU not");

    OrtSessionOptions* so = NULL;
    status_ok(ort, ort->CreateSessionOptions(&so), "CreateSessionOptions");
    const OrtHardwareDevice* chosen[1] = {cpu};
    const OrtKeyValuePairs* meta[1] = {n_offered ? ort->EpDevice_EpMetadata(offered[0]) : NULL};
    for (int with_device = 1; with_device >= 0; --with_device) {
        OrtEp* ep = NULL;
        const char* what = with_device ? "CreateEp with the CPU" : "CreateEp with no device";
        if (!status_ok(ort, f->CreateEp(f, with_device ? chosen : NULL, with_device ? meta : NULL,
                                        with_device ? 1 : 0, so, NULL, &ep), what))
            continue;
        expect(ep && ep->ort_version_supported == ORT_API_VERSION, "OrtEp reports ORT_API_VERSION");
        expect(ep && all_members_set(ep, sizeof(*ep), offsetof(OrtEp, GetName), "OrtEp"),
               "every OrtEp member is set");
        expect(ep && !strcmp(ep->GetName(ep), "hipdnn"), "EP name is 'hipdnn'");
        f->ReleaseEp(f, ep);
    }
    ort->ReleaseSessionOptions(so);
    for (size_t i = 0; i < n_offered; ++i) ep_api->ReleaseEpDevice(offered[i]);
    ep_api->ReleaseHardwareDevice(cpu);
    ep_api->ReleaseHardwareDevice(gpu);
    status_ok(ort, release(f), "ReleaseEpFactory");
    /* Not dlclose'd: UBSan keeps the name of each instrumented module it has seen, and
     * reports it as leaked once the module is gone (the sanitizer build runs this). */
    (void)lib;
    printf("%s\n", failures ? "FAILED" : "all ok");
    return failures ? 1 : 0;
}
