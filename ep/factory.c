/* factory.c — the library's two exports and its OrtEpFactory.  ORT calls
 * CreateEpFactories once per RegisterExecutionProviderLibrary; the factory offers the
 * devices hipdnn-ep can run on (this slice: the CPU, through hipdnn's host engines) and
 * makes one OrtEp per session.  Every member of OrtEpFactory up to this header's version
 * is set: ORT calls members by the version the library reports, so a NULL one it expects
 * would crash registration. */
#include <stdlib.h>
#include <string.h>

#include "hipdnn_ep.h"

const OrtApi* g_ort = NULL;
const OrtEpApi* g_ep_api = NULL;

#define EXPORT __attribute__((visibility("default")))

typedef struct {
    OrtEpFactory base; /* first: ORT hands back OrtEpFactory* */
    char registered_name[128];
    const OrtLogger* default_logger;
} hip_factory;

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

/* The CPU ORT lists is offered, once.  A GPU device is the next slice: it will be offered
 * when hipdnn's device runtime reports one, with EpDevice_AddAllocatorInfo for its memory
 * and CreateDataTransfer / CreateAllocator below giving real implementations. */
static OrtStatus* ORT_API_CALL f_supported_devices(OrtEpFactory* f,
                                                   const OrtHardwareDevice* const* devices,
                                                   size_t num_devices, OrtEpDevice** ep_devices,
                                                   size_t max_ep_devices, size_t* num_ep_devices) {
    *num_ep_devices = 0;
    for (size_t i = 0; i < num_devices && *num_ep_devices < max_ep_devices; ++i) {
        if (g_ort->HardwareDevice_Type(devices[i]) != OrtHardwareDeviceType_CPU) continue;
        OrtKeyValuePairs* meta = NULL;
        g_ort->CreateKeyValuePairs(&meta);
        g_ort->AddKeyValuePair(meta, "hipdnn.device", "cpu");
        g_ort->AddKeyValuePair(meta, "hipdnn.version", HIPDNN_EP_VERSION);
        OrtEpDevice* d = NULL;
        OrtStatus* st = g_ep_api->CreateEpDevice(f, devices[i], meta, NULL, &d);
        g_ort->ReleaseKeyValuePairs(meta);
        if (st) return st;
        ep_devices[(*num_ep_devices)++] = d;
        break;
    }
    return NULL;
}

static OrtStatus* ORT_API_CALL f_create_ep(OrtEpFactory* f,
                                           const OrtHardwareDevice* const* devices,
                                           const OrtKeyValuePairs* const* metadata,
                                           size_t num_devices, const OrtSessionOptions* so,
                                           const OrtLogger* logger, OrtEp** ep) {
    (void)f, (void)metadata;
    /* ORT passes the devices the session selected among those offered; none or only the
     * CPU both mean the host path. */
    for (size_t i = 0; devices && i < num_devices; ++i)
        if (devices[i] && g_ort->HardwareDevice_Type(devices[i]) != OrtHardwareDeviceType_CPU)
            return ep_status(ORT_INVALID_ARGUMENT, "device %zu is not a CPU; this build of "
                             "hipdnn-ep offers only the CPU", i);
    return ep_create(so, logger, EP_DEVICE_CPU, ep);
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
    (void)f, (void)info, (void)options;
    *allocator = NULL; /* host memory: ORT's own CPU allocator */
    return NULL;
}

static void ORT_API_CALL f_release_allocator(OrtEpFactory* f, OrtAllocator* allocator) {
    (void)f, (void)allocator; /* none is ever made */
}

static OrtStatus* ORT_API_CALL f_create_data_transfer(OrtEpFactory* f,
                                                      OrtDataTransferImpl** dt) {
    (void)f;
    *dt = NULL; /* host to host: ORT copies */
    return NULL;
}

static bool ORT_API_CALL f_is_stream_aware(const OrtEpFactory* f) {
    (void)f;
    return false;
}

static OrtStatus* ORT_API_CALL f_create_sync_stream(OrtEpFactory* f, const OrtMemoryDevice* dev,
                                                    const OrtKeyValuePairs* options,
                                                    OrtSyncStreamImpl** stream) {
    (void)f, (void)dev, (void)options;
    *stream = NULL;
    return NULL;
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
    /* The API of the headers this was built with; an older ORT gives NULL, and then there
     * is no OrtApi to make a status with. */
    const OrtApi* api = base->GetApi(ORT_API_VERSION);
    if (!api) return NULL;
    g_ort = api;
    g_ep_api = api->GetEpApi();
    if (!g_ep_api) return ep_status(ORT_FAIL, "this ONNX Runtime has no plugin EP API");
    if (max_factories < 1) return ep_status(ORT_INVALID_ARGUMENT, "no room for a factory");
    hip_factory* f = calloc(1, sizeof(*f));
    if (!f) return ep_status(ORT_FAIL, "out of memory");
    strncpy(f->registered_name, registered_name ? registered_name : "", sizeof(f->registered_name) - 1);
    f->default_logger = default_logger;
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
    free(factory);
    return NULL;
}
