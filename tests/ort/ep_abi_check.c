/* ep_abi_check — hipdnn-ep's plugin-EP ABI checked the way ORT uses it, without a session:
 * the library exports only CreateEpFactories and ReleaseEpFactory; the factory reports this
 * header's API version and sets every member of OrtEpFactory (ORT calls each member its
 * version defines, so a NULL one crashes registration); GetSupportedDevices offers a CPU
 * once, and a GPU at most once; CreateEp with the CPU, and with no device at all, gives an
 * OrtEp whose members are all set; everything releases.
 *
 * When a GPU is offered (hipdnn's device runtime has one: a real GPU, or the tests' fake
 * driver), it is ORT's GPU of the runtime's vendor when the list holds one, else a virtual
 * device of that vendor; its device memory is registered; the factory's allocator
 * allocates, frees and counts it (and refuses host memory info); the data transfer copies
 * host -> device -> device -> host, with and without a sync stream, and refuses host ->
 * host; a sync stream's notification activates and is waited for; CreateEp with the GPU
 * gives an OrtEp with the Memcpy kernel registry, and with both devices an error.
 * EP_ABI_EXPECT_GPU=1 (or 0) requires a GPU offered (or not); unset, either is fine.
 *
 * Prints one line per check and exits 1 if any failed.
 * Usage: ep_abi_check [path/to/libhipdnn_ep.so] */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
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

static const OrtApi* ort;
static const OrtEpApi* ep_api;

static int stat_value(OrtAllocator* a, const char* key) {
    OrtKeyValuePairs* kv = NULL;
    if (!status_ok(ort, a->GetStats(a, &kv), "OrtAllocator::GetStats")) return -1;
    const char* v = ort->GetKeyValue(kv, key);
    int n = v ? atoi(v) : -1;
    ort->ReleaseKeyValuePairs(kv);
    return n;
}

/* The device-memory checks on the GPU hipdnn-ep offered: allocator, data transfer,
 * sync stream and notification. */
static void check_gpu_memory(OrtEpFactory* f, const OrtEpDevice* gpu) {
    const OrtMemoryInfo* dev = ort->EpDevice_MemoryInfo(gpu, OrtDeviceMemoryType_DEFAULT);
    expect(dev != NULL, "the GPU's device memory is registered");
    expect(ort->EpDevice_MemoryInfo(gpu, OrtDeviceMemoryType_HOST_ACCESSIBLE) == NULL,
           "no host-accessible memory is registered");
    if (!dev) return;
    OrtMemoryInfoDeviceType dt = OrtMemoryInfoDeviceType_CPU;
    ort->MemoryInfoGetDeviceType(dev, &dt);
    expect(dt == OrtMemoryInfoDeviceType_GPU, "device memory is of device type GPU");
    expect(ort->MemoryInfoGetVendorId(dev) == ort->HardwareDevice_VendorId(ort->EpDevice_Device(gpu)),
           "device memory has the GPU's vendor id");

    OrtMemoryInfo* cpu_info = NULL;
    status_ok(ort, ort->CreateCpuMemoryInfo(OrtDeviceAllocator, OrtMemTypeDefault, &cpu_info),
              "CreateCpuMemoryInfo");
    OrtAllocator* refused = NULL;
    OrtStatus* st = f->CreateAllocator(f, cpu_info, NULL, &refused);
    expect(st && !refused && strstr(ort->GetErrorMessage(st), "is not the device memory"),
           "CreateAllocator refuses host memory info, saying why");
    if (st) ort->ReleaseStatus(st);

    OrtAllocator* a = NULL;
    if (!status_ok(ort, f->CreateAllocator(f, dev, NULL, &a), "CreateAllocator")) return;
    int same = -1;
    status_ok(ort, ort->CompareMemoryInfo(a->Info(a), dev, &same), "CompareMemoryInfo");
    expect(a->version == ORT_API_VERSION && same == 0 && a->Alloc && a->Free && a->Reserve,
           "the allocator reports the device memory info");
    int before = stat_value(a, "NumAllocs");
    void* p = a->Alloc(a, 256);
    expect(p != NULL, "Alloc(256) gives device memory");
    expect(stat_value(a, "NumAllocs") == before + 1 && stat_value(a, "InUse") >= 256,
           "GetStats counts the allocation");
    a->Free(a, p);
    expect(stat_value(a, "InUse") == 0, "Free returns it");

    /* host -> device -> device -> host, each checked against the source */
    enum { N = 64 };
    float host[N], back[N];
    for (int i = 0; i < N; ++i) host[i] = (float)i * 0.5f - 7.0f, back[i] = -1e30f;
    const int64_t shape[1] = {N};
    OrtValue *h = NULL, *d1 = NULL, *d2 = NULL, *hb = NULL;
    status_ok(ort, ort->CreateTensorWithDataAsOrtValue(cpu_info, host, sizeof(host), shape, 1,
                                                       ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &h),
              "host tensor");
    status_ok(ort, ort->CreateTensorWithDataAsOrtValue(cpu_info, back, sizeof(back), shape, 1,
                                                       ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &hb),
              "host result tensor");
    status_ok(ort, ort->CreateTensorAsOrtValue(a, shape, 1, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &d1),
              "device tensor 1");
    status_ok(ort, ort->CreateTensorAsOrtValue(a, shape, 1, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &d2),
              "device tensor 2");
    OrtDataTransferImpl* t = NULL;
    status_ok(ort, f->CreateDataTransfer(f, &t), "CreateDataTransfer");
    expect(t != NULL, "a data transfer is given");
    if (t && h && hb && d1 && d2) {
        const OrtMemoryDevice* hd = ep_api->Value_GetMemoryDevice(h);
        const OrtMemoryDevice* gd = ep_api->Value_GetMemoryDevice(d1);
        expect(t->CanCopy(t, hd, gd) && t->CanCopy(t, gd, hd) && t->CanCopy(t, gd, gd),
               "CanCopy host <-> device and device -> device");
        expect(!t->CanCopy(t, hd, hd), "CanCopy refuses host -> host (ORT's own)");
        const OrtValue* src[3] = {h, d1, d2};
        OrtValue* dst[3] = {d1, d2, hb};
        status_ok(ort, t->CopyTensors(t, src, dst, NULL, 3), "CopyTensors without a stream");
        expect(!memcmp(host, back, sizeof(host)), "host -> device -> device -> host, no stream");
        const OrtValue* bad_src[1] = {h};
        OrtValue* bad_dst[1] = {hb};
        st = t->CopyTensors(t, bad_src, bad_dst, NULL, 1);
        expect(st && strstr(ort->GetErrorMessage(st), "no copy from host to host"),
               "CopyTensors refuses host -> host, saying why");
        if (st) ort->ReleaseStatus(st);

        OrtSyncStream* stream = NULL;
        if (status_ok(ort, ort->CreateSyncStreamForEpDevice(gpu, NULL, &stream),
                      "CreateSyncStreamForEpDevice")) {
            expect(ort->SyncStream_GetHandle(stream) != NULL, "the sync stream has a native handle");
            for (int i = 0; i < N; ++i) host[i] = (float)(N - i), back[i] = -1e30f;
            OrtSyncStream* streams[3] = {stream, stream, stream};
            status_ok(ort, t->CopyTensors(t, src, dst, streams, 3), "CopyTensors on a stream");
            expect(!memcmp(host, back, sizeof(host)), "host -> device -> device -> host on a stream");
            ort->ReleaseSyncStream(stream);
        }
        t->Release(t);
    }
    ort->ReleaseValue(h);
    ort->ReleaseValue(hb);
    ort->ReleaseValue(d1);
    ort->ReleaseValue(d2);
    expect(stat_value(a, "InUse") == 0, "the device tensors' memory is returned");
    f->ReleaseAllocator(f, a);

    /* the factory's own stream and a notification on it */
    OrtSyncStreamImpl* s = NULL;
    const OrtMemoryDevice* md = ep_api->MemoryInfo_GetMemoryDevice(dev);
    if (status_ok(ort, f->CreateSyncStreamForDevice(f, md, NULL, &s), "CreateSyncStreamForDevice") &&
        s) {
        OrtSyncNotificationImpl* n = NULL;
        if (status_ok(ort, s->CreateNotification(s, &n), "CreateNotification") && n) {
            status_ok(ort, n->Activate(n), "notification Activate");
            status_ok(ort, n->WaitOnHost(n), "notification WaitOnHost");
            n->Release(n);
        }
        status_ok(ort, s->Flush(s), "stream Flush");
        status_ok(ort, s->OnSessionRunEnd(s), "stream OnSessionRunEnd");
        s->Release(s);
    }
    expect(s != NULL, "a sync stream for device memory");
    OrtSyncStreamImpl* none = NULL;
    status_ok(ort, f->CreateSyncStreamForDevice(f, ep_api->MemoryInfo_GetMemoryDevice(cpu_info),
                                                NULL, &none), "CreateSyncStreamForDevice (host)");
    expect(none == NULL, "no sync stream for host memory");
    ort->ReleaseMemoryInfo(cpu_info);
}

int main(int argc, char** argv) {
    const char* path = argc > 1 ? argv[1] : HIPDNN_EP_LIBRARY;
    const char* expect_gpu = getenv("EP_ABI_EXPECT_GPU");
    ort = OrtGetApiBase()->GetApi(ORT_API_VERSION);
    if (!ort) {
        printf("FAIL libonnxruntime serves no API version %d\n", ORT_API_VERSION);
        return 1;
    }
    ep_api = ort->GetEpApi();
    OrtEnv* env = NULL; /* ORT's default logger, which sync streams log through */
    if (!status_ok(ort, ort->CreateEnv(ORT_LOGGING_LEVEL_WARNING, "ep_abi_check", &env), "CreateEnv"))
        return 1;
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

    /* a GPU of no vendor hipdnn's runtimes have, and one each of NVIDIA's and AMD's */
    OrtHardwareDevice *cpu = NULL, *other = NULL, *nvidia = NULL, *amd = NULL;
    status_ok(ort, ep_api->CreateHardwareDevice(OrtHardwareDeviceType_CPU, 0, 0, "test", NULL, &cpu),
              "CreateHardwareDevice CPU");
    status_ok(ort, ep_api->CreateHardwareDevice(OrtHardwareDeviceType_GPU, 0x1234, 1, "test", NULL,
                                                &other), "CreateHardwareDevice GPU 0x1234");
    status_ok(ort, ep_api->CreateHardwareDevice(OrtHardwareDeviceType_GPU, 0x10de, 0x2335, "test",
                                                NULL, &nvidia), "CreateHardwareDevice GPU 0x10de");
    status_ok(ort, ep_api->CreateHardwareDevice(OrtHardwareDeviceType_GPU, 0x1002, 0x74a1, "test",
                                                NULL, &amd), "CreateHardwareDevice GPU 0x1002");
    const OrtHardwareDevice* hw[3] = {other, cpu, cpu};
    OrtEpDevice* offered[8] = {0};
    size_t n_offered = 0;
    const OrtEpDevice *cpu_dev = NULL, *gpu_dev = NULL;
    int n_cpu = 0, n_gpu = 0;
    if (status_ok(ort, f->GetSupportedDevices(f, hw, 3, offered, 8, &n_offered), "GetSupportedDevices"))
        for (size_t i = 0; i < n_offered; ++i) {
            OrtHardwareDeviceType t = ort->HardwareDevice_Type(ort->EpDevice_Device(offered[i]));
            if (t == OrtHardwareDeviceType_CPU) ++n_cpu, cpu_dev = offered[i];
            if (t == OrtHardwareDeviceType_GPU) ++n_gpu, gpu_dev = offered[i];
        }
    expect(n_cpu == 1 && n_cpu + n_gpu == (int)n_offered, "the CPU is offered once");
    expect(n_gpu <= 1, "a GPU is offered at most once");
    printf("note %s\n", n_gpu ? "a GPU is offered (hipdnn's device runtime has one)"
                              : "no GPU is offered (hipdnn's device runtime has none)");
    if (expect_gpu && *expect_gpu)
        expect(n_gpu == (atoi(expect_gpu) ? 1 : 0), atoi(expect_gpu) ? "EP_ABI_EXPECT_GPU=1: a GPU is offered"
                                                                    : "EP_ABI_EXPECT_GPU=0: no GPU is offered");
    uint32_t vendor = 0;
    if (gpu_dev) {
        const OrtHardwareDevice* g = ort->EpDevice_Device(gpu_dev);
        vendor = ort->HardwareDevice_VendorId(g);
        const OrtKeyValuePairs* md = ort->HardwareDevice_Metadata(g);
        const char* virt = md ? ort->GetKeyValue(md, "is_virtual") : NULL;
        expect((vendor == 0x10de || vendor == 0x1002) && g != other && virt && !strcmp(virt, "1"),
               "with no GPU of the runtime's vendor listed, a virtual one of that vendor is offered");
        const OrtKeyValuePairs* em = ort->EpDevice_EpMetadata(gpu_dev);
        const char* kind = em ? ort->GetKeyValue(em, "hipdnn.device") : NULL;
        expect(kind && !strcmp(kind, "gpu"), "its metadata says hipdnn.device=gpu");
        check_gpu_memory(f, gpu_dev);
        /* listed: that GPU is offered, not a virtual one */
        const OrtHardwareDevice* hw2[3] = {nvidia, amd, cpu};
        OrtEpDevice* offered2[8] = {0};
        size_t n2 = 0;
        if (status_ok(ort, f->GetSupportedDevices(f, hw2, 3, offered2, 8, &n2), "GetSupportedDevices 2")) {
            const OrtHardwareDevice* chosen = NULL;
            for (size_t i = 0; i < n2; ++i)
                if (ort->HardwareDevice_Type(ort->EpDevice_Device(offered2[i])) == OrtHardwareDeviceType_GPU)
                    chosen = ort->EpDevice_Device(offered2[i]);
            expect(chosen == (vendor == 0x10de ? nvidia : amd),
                   "ORT's GPU of the runtime's vendor is offered when listed");
            for (size_t i = 0; i < n2; ++i) ep_api->ReleaseEpDevice(offered2[i]);
        }
    }

    OrtSessionOptions* so = NULL;
    status_ok(ort, ort->CreateSessionOptions(&so), "CreateSessionOptions");
    /* 2: the CPU, 1: no device, 0: the GPU (when offered) */
    for (int which = 2; which >= (gpu_dev ? 0 : 1); --which) {
        const OrtEpDevice* d = which == 2 ? cpu_dev : which == 0 ? gpu_dev : NULL;
        const OrtHardwareDevice* chosen[1] = {d ? ort->EpDevice_Device(d) : NULL};
        const OrtKeyValuePairs* meta[1] = {d ? ort->EpDevice_EpMetadata(d) : NULL};
        OrtEp* ep = NULL;
        const char* what = which == 2 ? "CreateEp with the CPU" : which == 1 ? "CreateEp with no device"
                                                                             : "CreateEp with the GPU";
        if (!status_ok(ort, f->CreateEp(f, d ? chosen : NULL, d ? meta : NULL, d ? 1 : 0, so, NULL,
                                        &ep), what))
            continue;
        expect(ep && ep->ort_version_supported == ORT_API_VERSION, "OrtEp reports ORT_API_VERSION");
        expect(ep && all_members_set(ep, sizeof(*ep), offsetof(OrtEp, GetName), "OrtEp"),
               "every OrtEp member is set");
        expect(ep && !strcmp(ep->GetName(ep), "hipdnn"), "EP name is 'hipdnn'");
        const OrtKernelRegistry* reg = NULL;
        status_ok(ort, ep->GetKernelRegistry(ep, &reg), "GetKernelRegistry");
        expect(which == 0 ? reg != NULL : reg == NULL,
               which == 0 ? "on the GPU the EP has a kernel registry (Memcpy kernels)"
                          : "on the CPU the EP has no kernel registry");
        f->ReleaseEp(f, ep);
    }
    if (gpu_dev) {
        const OrtHardwareDevice* both[2] = {ort->EpDevice_Device(cpu_dev), ort->EpDevice_Device(gpu_dev)};
        const OrtKeyValuePairs* meta[2] = {ort->EpDevice_EpMetadata(cpu_dev), ort->EpDevice_EpMetadata(gpu_dev)};
        OrtEp* ep = NULL;
        OrtStatus* st = f->CreateEp(f, both, meta, 2, so, NULL, &ep);
        expect(st && !ep && strstr(ort->GetErrorMessage(st), "not both"),
               "CreateEp with the CPU and the GPU at once is refused, saying why");
        if (st) ort->ReleaseStatus(st);
    }
    ort->ReleaseSessionOptions(so);
    for (size_t i = 0; i < n_offered; ++i) ep_api->ReleaseEpDevice(offered[i]);
    ep_api->ReleaseHardwareDevice(cpu);
    ep_api->ReleaseHardwareDevice(other);
    ep_api->ReleaseHardwareDevice(nvidia);
    ep_api->ReleaseHardwareDevice(amd);
    status_ok(ort, release(f), "ReleaseEpFactory");
    ort->ReleaseEnv(env);
    /* Not dlclose'd: UBSan keeps the name of each instrumented module it has seen, and
     * reports it as leaked once the module is gone (the sanitizer build runs this). */
    (void)lib;
    printf("%s\n", failures ? "FAILED" : "all ok");
    return failures ? 1 : 0;
}
