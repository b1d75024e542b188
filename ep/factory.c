/* factory.c — the library's two exports and its OrtEpFactory.  ORT calls
 * CreateEpFactories once per RegisterExecutionProviderLibrary; the factory offers the
 * devices hipdnn-ep can run on (the CPU, through hipdnn's host engines, and the GPU of
 * hipdnn's device runtime when it has one, with its device memory) and makes one OrtEp
 * per session.  For the GPU it also gives ORT the device allocator (allocator.c), the
 * data transfer (transfer.c) and sync streams (stream.c).  Every member of OrtEpFactory
 * up to this header's version is set: ORT calls members by the version the library
 * reports, so a NULL one it expects would crash registration. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipdnn_ep.h"
#include "onnxruntime_ep_device_ep_metadata_keys.h"

const OrtApi* g_ort = NULL;
const OrtEpApi* g_ep_api = NULL;

#define EXPORT __attribute__((visibility("default")))

static ep_factory* fac(const OrtEpFactory* f) { return (ep_factory*)f; }

static const char* ORT_API_CALL f_name(const OrtEpFactory* f) {
    (void)f;
    return EP_NAME;
}

static const char* ORT_API_CALL f_vendor(const OrtEpFactory* f) {
    (void)f;
    return EP_VENDOR;
}

static uint32_t ORT_API_CALL f_vendor_id(const OrtEpFactory* f) {
    (void)f;
    return 0; /* no PCI vendor of its own: hipdnn runs on others' devices */
}

static const char* ORT_API_CALL f_version(const OrtEpFactory* f) {
    (void)f;
    return HIPDNN_EP_VERSION;
}

/* ORT's card number of a GPU (its Linux discovery records /sys/class/drm/cardN), or a
 * large one when it gives none. */
static long card_index(const OrtHardwareDevice* d) {
    const OrtKeyValuePairs* kv = g_ort->HardwareDevice_Metadata(d);
    const char* v = kv ? g_ort->GetKeyValue(kv, "card_idx") : NULL;
    return v && *v ? strtol(v, NULL, 10) : 1L << 30;
}

/* The hardware device to offer hipdnn's GPU on: ORT's GPU of the runtime's vendor (the
 * first card of that vendor: hipdnn runs on its device `ordinal`, which is that card on a
 * machine with one GPU of the vendor; hipdnn's runtime does not report PCI addresses to
 * tell several apart), else one made here with the EP API's CreateHardwareDevice, marked
 * is_virtual.  ORT finds GPUs under /sys/class/drm, which containers and sandboxes may
 * hide; and hipdnn-ep's own tests come here: there a fake CUDA driver over host memory
 * (tests/fake_cuda) is hipdnn's "GPU", ORT lists none, and the device made here lets the
 * GPU path run without one.  The factory owns it and releases it last. */
static OrtStatus* gpu_hardware(ep_factory* f, const OrtHardwareDevice* const* devices, size_t n,
                               const OrtHardwareDevice** out, bool* is_virtual) {
    *out = NULL;
    *is_virtual = false;
    for (size_t i = 0; i < n; ++i)
        if (g_ort->HardwareDevice_Type(devices[i]) == OrtHardwareDeviceType_GPU &&
            g_ort->HardwareDevice_VendorId(devices[i]) == f->gpu.vendor_id &&
            (!*out || card_index(devices[i]) < card_index(*out)))
            *out = devices[i];
    if (*out) return NULL;
    if (!f->virtual_gpu) {
        OrtKeyValuePairs* meta = NULL;
        g_ort->CreateKeyValuePairs(&meta);
        g_ort->AddKeyValuePair(meta, kOrtHardwareDevice_MetadataKey_IsVirtual, "1");
        g_ort->AddKeyValuePair(meta, "hipdnn.runtime", f->gpu.runtime);
        OrtStatus* st = g_ep_api->CreateHardwareDevice(
            OrtHardwareDeviceType_GPU, f->gpu.vendor_id, 0,
            f->gpu.vendor_id == EP_VENDOR_NVIDIA ? "NVIDIA" : "AMD", meta, &f->virtual_gpu);
        g_ort->ReleaseKeyValuePairs(meta);
        if (st) return st;
    }
    *out = f->virtual_gpu;
    *is_virtual = true;
    return NULL;
}

static OrtStatus* offer(ep_factory* f, const OrtHardwareDevice* hw, bool gpu, bool is_virtual,
                        OrtEpDevice** out) {
    OrtKeyValuePairs* meta = NULL;
    g_ort->CreateKeyValuePairs(&meta);
    char ordinal[16];
    snprintf(ordinal, sizeof(ordinal), "%d", f->gpu.ordinal);
    g_ort->AddKeyValuePair(meta, "hipdnn.device", gpu ? "gpu" : "cpu");
    g_ort->AddKeyValuePair(meta, "hipdnn.version", HIPDNN_EP_VERSION);
    if (gpu) {
        g_ort->AddKeyValuePair(meta, "hipdnn.runtime", f->gpu.runtime);
        g_ort->AddKeyValuePair(meta, "hipdnn.device_id", ordinal);
        g_ort->AddKeyValuePair(meta, "hipdnn.virtual_device", is_virtual ? "1" : "0");
    }
    OrtStatus* st = g_ep_api->CreateEpDevice(&f->base, hw, meta, NULL, out);
    g_ort->ReleaseKeyValuePairs(meta);
    if (!st && gpu) st = g_ep_api->EpDevice_AddAllocatorInfo(*out, f->gpu_memory);
    if (st && *out) {
        g_ep_api->ReleaseEpDevice(*out);
        *out = NULL;
    }
    return st;
}

/* The CPU ORT lists, once; then hipdnn's GPU when its device runtime has one. */
static OrtStatus* ORT_API_CALL f_supported_devices(OrtEpFactory* base,
                                                   const OrtHardwareDevice* const* devices,
                                                   size_t num_devices, OrtEpDevice** ep_devices,
                                                   size_t max_ep_devices, size_t* num_ep_devices) {
    ep_factory* f = fac(base);
    *num_ep_devices = 0;
    for (size_t i = 0; i < num_devices && *num_ep_devices < max_ep_devices; ++i) {
        if (g_ort->HardwareDevice_Type(devices[i]) != OrtHardwareDeviceType_CPU) continue;
        OrtEpDevice* d = NULL;
        OrtStatus* st = offer(f, devices[i], false, false, &d);
        if (st) return st;
        ep_devices[(*num_ep_devices)++] = d;
        break;
    }
    if (!f->gpu_memory || *num_ep_devices >= max_ep_devices) return NULL;
    const OrtHardwareDevice* hw = NULL;
    bool is_virtual = false;
    OrtStatus* st = gpu_hardware(f, devices, num_devices, &hw, &is_virtual);
    OrtEpDevice* d = NULL;
    if (!st) st = offer(f, hw, true, is_virtual, &d);
    if (st) return st;
    ep_devices[(*num_ep_devices)++] = d;
    ep_log(f->logger, ORT_LOGGING_LEVEL_VERBOSE, ORT_LOGGING_LEVEL_INFO,
           "offering GPU %d of the %s runtime (vendor 0x%04x, %s hardware device)",
           f->gpu.ordinal, f->gpu.runtime, f->gpu.vendor_id,
           is_virtual ? "a virtual" : "ORT's");
    return NULL;
}

static OrtStatus* ORT_API_CALL f_create_ep(OrtEpFactory* base,
                                           const OrtHardwareDevice* const* devices,
                                           const OrtKeyValuePairs* const* metadata,
                                           size_t num_devices, const OrtSessionOptions* so,
                                           const OrtLogger* logger, OrtEp** ep) {
    ep_factory* f = fac(base);
    (void)metadata;
    /* ORT passes the devices the session selected among those offered; none or only the
     * CPU both mean the host path, the GPU the device path. */
    int cpus = 0, gpus = 0;
    for (size_t i = 0; devices && i < num_devices; ++i) {
        if (!devices[i]) continue;
        OrtHardwareDeviceType t = g_ort->HardwareDevice_Type(devices[i]);
        if (t == OrtHardwareDeviceType_CPU) {
            ++cpus;
        } else if (t == OrtHardwareDeviceType_GPU && f->gpu_memory &&
                   g_ort->HardwareDevice_VendorId(devices[i]) == f->gpu.vendor_id) {
            ++gpus;
        } else {
            return ep_status(ORT_INVALID_ARGUMENT, "device %zu (type %d, vendor 0x%04x) is not "
                             "one hipdnn-ep offered (%s)", i, (int)t,
                             g_ort->HardwareDevice_VendorId(devices[i]),
                             f->gpu_memory ? "the CPU, and the GPU of hipdnn's device runtime"
                                           : "the CPU only: hipdnn's device runtime has no GPU");
        }
    }
    if (cpus && gpus)
        return ep_status(ORT_INVALID_ARGUMENT, "one session runs hipdnn-ep on the CPU or on the "
                         "GPU, not both: choose one of its OrtEpDevices");
    return ep_create(f, so, logger, gpus ? EP_DEVICE_GPU : EP_DEVICE_CPU, ep);
}

static void ORT_API_CALL f_release_ep(OrtEpFactory* f, OrtEp* ep) {
    (void)f;
    ep_destroy(ep);
}

static OrtStatus* ORT_API_CALL f_validate_compat(OrtEpFactory* f,
                                                 const OrtHardwareDevice* const* devices,
                                                 size_t num_devices, const char* info,
                                                 OrtCompiledModelCompatibility* out) {
    (void)f, (void)devices, (void)num_devices, (void)info;
    /* hipdnn-ep writes no EPContext nodes yet, so no compiled model is its own */
    *out = OrtCompiledModelCompatibility_EP_NOT_APPLICABLE;
    return NULL;
}

static OrtStatus* ORT_API_CALL f_create_allocator(OrtEpFactory* f, const OrtMemoryInfo* info,
                                                  const OrtKeyValuePairs* options,
                                                  OrtAllocator** allocator) {
    (void)options; /* no arena, so nothing to configure */
    *allocator = NULL;
    if (!info) return NULL; /* host memory: ORT's own CPU allocator */
    return ep_allocator_create(fac(f), info, allocator);
}

static void ORT_API_CALL f_release_allocator(OrtEpFactory* f, OrtAllocator* allocator) {
    ep_allocator_release(fac(f), allocator);
}

static OrtStatus* ORT_API_CALL f_create_data_transfer(OrtEpFactory* f,
                                                      OrtDataTransferImpl** dt) {
    return ep_transfer_create(fac(f), dt); /* NULL without a GPU: host to host is ORT's */
}

/* With a GPU: ORT gives each run a stream of ours (stream.c) and orders its copies and
 * other EPs' work after ours through notifications.  Host memory needs no stream. */
static bool ORT_API_CALL f_is_stream_aware(const OrtEpFactory* f) {
    return fac(f)->gpu_memory != NULL;
}

static OrtStatus* ORT_API_CALL f_create_sync_stream(OrtEpFactory* f, const OrtMemoryDevice* dev,
                                                    const OrtKeyValuePairs* options,
                                                    OrtSyncStreamImpl** stream) {
    (void)options; /* a hipdnn stream has nothing to configure */
    return ep_stream_create(fac(f), dev, stream);
}

static OrtStatus* ORT_API_CALL f_incompat(OrtEpFactory* f, const OrtHardwareDevice* hw,
                                          OrtDeviceEpIncompatibilityDetails* details) {
    (void)f, (void)hw, (void)details; /* compatible: the details stay as ORT made them */
    return NULL;
}

static OrtStatus* ORT_API_CALL f_importer(OrtEpFactory* f, const OrtEpDevice* d,
                                          OrtExternalResourceImporterImpl** out) {
    (void)f, (void)d;
    *out = NULL;
    return NULL;
}

static OrtStatus* ORT_API_CALL f_num_domains(OrtEpFactory* f, size_t* n) {
    (void)f;
    *n = 0;
    return NULL;
}

static OrtStatus* ORT_API_CALL f_domains(OrtEpFactory* f, OrtCustomOpDomain** domains, size_t n) {
    (void)f, (void)domains, (void)n;
    return NULL;
}

EXPORT OrtStatus* CreateEpFactories(const char* registered_name, const OrtApiBase* base,
                                    const OrtLogger* default_logger, OrtEpFactory** factories,
                                    size_t max_factories, size_t* num_factories) {
    *num_factories = 0;
    const OrtApi* api = NULL;
    OrtStatus* refused = ep_ort_negotiate(base, &api); /* ort_version.c */
    if (refused || !api) return refused;
    g_ort = api;
    g_ep_api = api->GetEpApi();
    if (!g_ep_api) return ep_status(ORT_FAIL, "this ONNX Runtime has no plugin EP API");
    ep_log(default_logger, ORT_LOGGING_LEVEL_VERBOSE, ORT_LOGGING_LEVEL_INFO,
           "ONNX Runtime %s: OrtApi version %u in use (built with version %d; ONNX Runtime "
           "1.%d or later runs it)", base->GetVersionString(), ep_ort_api_version(),
           ORT_API_VERSION, EP_ORT_API_MIN);
    if (max_factories < 1) return ep_status(ORT_INVALID_ARGUMENT, "no room for a factory");
    ep_factory* f = calloc(1, sizeof(*f));
    if (!f) return ep_status(ORT_FAIL, "out of memory");
    strncpy(f->registered_name, registered_name ? registered_name : "", sizeof(f->registered_name) - 1);
    f->logger = default_logger;
    pthread_mutex_init(&f->lock, NULL);
    ep_gpu_probe(&f->gpu);
    if (f->gpu.present) {
        OrtStatus* st = g_ort->CreateMemoryInfo_V2(
            "hipdnn_gpu", OrtMemoryInfoDeviceType_GPU, f->gpu.vendor_id, f->gpu.ordinal,
            OrtDeviceMemoryType_DEFAULT, 0, OrtDeviceAllocator, &f->gpu_memory);
        if (st) {
            pthread_mutex_destroy(&f->lock);
            free(f);
            return st;
        }
        f->gpu_memory_device = g_ep_api->MemoryInfo_GetMemoryDevice(f->gpu_memory);
    } else {
        ep_log(default_logger, ORT_LOGGING_LEVEL_VERBOSE, ORT_LOGGING_LEVEL_INFO,
               "offering the CPU only: %s", f->gpu.reason);
    }
    OrtEpFactory* b = &f->base;
    b->ort_version_supported = ORT_API_VERSION;
    b->GetName = f_name;
    b->GetVendor = f_vendor;
    b->GetSupportedDevices = f_supported_devices;
    b->CreateEp = f_create_ep;
    b->ReleaseEp = f_release_ep;
    b->GetVendorId = f_vendor_id;
    b->GetVersion = f_version;
    b->ValidateCompiledModelCompatibilityInfo = f_validate_compat;
    b->CreateAllocator = f_create_allocator;
    b->ReleaseAllocator = f_release_allocator;
    b->CreateDataTransfer = f_create_data_transfer;
    b->IsStreamAware = f_is_stream_aware;
    b->CreateSyncStreamForDevice = f_create_sync_stream;
    b->GetHardwareDeviceIncompatibilityDetails = f_incompat;
    b->CreateExternalResourceImporterForDevice = f_importer;
    b->GetNumCustomOpDomains = f_num_domains;
    b->GetCustomOpDomains = f_domains;
    factories[0] = b;
    *num_factories = 1;
    return NULL;
}

EXPORT OrtStatus* ReleaseEpFactory(OrtEpFactory* factory) {
    if (!factory) return NULL;
    ep_factory* f = fac(factory);
    /* ORT has released the OrtEpDevices (which point at these) and every allocator */
    if (f->virtual_gpu) g_ep_api->ReleaseHardwareDevice(f->virtual_gpu);
    if (f->gpu_memory) g_ort->ReleaseMemoryInfo(f->gpu_memory);
    ep_allocations_free(f);
    pthread_mutex_destroy(&f->lock);
    free(f);
    return NULL;
}
