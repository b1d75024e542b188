/* entry_points.h - every function hipdnn.h exports, listed once.
 *
 * The dynamic backend (dynamic_backend.c) expands these lists into its table of resolved
 * pointers, its dlsym loop and its forwarding stubs; tests/test_dynamic_backend.py fails
 * when hipdnn.h exports a function missing here, so a new entry point cannot be
 * forgotten, and the compiler refuses an entry whose parameters differ from hipdnn.h's.
 *
 * HIPDNN_REPORT_ENTRY_POINTS: X(return type, name, (parameters), (arguments)).  They report
 * errors and the version, so they must answer without a backend: their stubs are written
 * by hand.
 * HIPDNN_STATUS_ENTRY_POINTS: X(name, (parameters), (arguments)), each returning
 * hipdnnStatus_t: their stubs are generated, and give HIPDNN_STATUS_NOT_INITIALIZED when
 * no usable backend was loaded. */
#ifndef HIPDNN_DYNAMIC_ENTRY_POINTS_H
#define HIPDNN_DYNAMIC_ENTRY_POINTS_H

#define HIPDNN_REPORT_ENTRY_POINTS(X) \
    X(const char*, hipdnnGetErrorString, (hipdnnStatus_t status), (status))                  \
    X(void, hipdnnGetLastErrorString, (char* message, size_t max_size), (message, max_size)) \
    X(const char*, hipdnnPeekLastErrorString_ext, (void), ())                                \
    X(const char*, hipdnnVersionString_ext, (void), ())

#define HIPDNN_STATUS_ENTRY_POINTS(X) \
    X(hipdnnGetOpCount_ext, (int64_t* count), (count))                                       \
    X(hipdnnGetOpInfo_ext, (int64_t index, const hipdnnOpInfo_ext_t** info), (index, info))  \
    X(hipdnnCreate, (hipdnnHandle_t* handle), (handle))                                      \
    X(hipdnnDestroy, (hipdnnHandle_t handle), (handle))                                      \
    X(hipdnnSetStream, (hipdnnHandle_t handle, hipdnnStream_t stream), (handle, stream))     \
    X(hipdnnGetStream, (hipdnnHandle_t handle, hipdnnStream_t* stream), (handle, stream))    \
    X(hipdnnGetDevice_ext, (hipdnnHandle_t handle, int* device), (handle, device))           \
    X(hipdnnGetDeviceRuntime_ext,                                                            \
      (const char** name, int* device_count), (name, device_count))                          \
    X(hipdnnDeviceGet_ext, (int* device), (device))                                          \
    X(hipdnnDeviceSet_ext, (int device), (device))                                           \
    X(hipdnnDeviceMalloc_ext, (void** ptr, size_t size), (ptr, size))                        \
    X(hipdnnDeviceFree_ext, (void* ptr), (ptr))                                              \
    X(hipdnnDeviceMemcpy_ext, (void* dst, const void* src, size_t size), (dst, src, size))   \
    X(hipdnnDeviceMemcpyAsync_ext,                                                           \
      (void* dst, const void* src, size_t size, hipdnnStream_t stream),                      \
      (dst, src, size, stream))                                                              \
    X(hipdnnDeviceMemset_ext, (void* ptr, int value, size_t size), (ptr, value, size))       \
    X(hipdnnDeviceMemsetAsync_ext,                                                           \
      (void* ptr, int value, size_t size, hipdnnStream_t stream),                            \
      (ptr, value, size, stream))                                                            \
    X(hipdnnDeviceSynchronize_ext, (void), ())                                               \
    X(hipdnnStreamCreate_ext, (hipdnnStream_t* stream), (stream))                            \
    X(hipdnnStreamDestroy_ext, (hipdnnStream_t stream), (stream))                            \
    X(hipdnnStreamSynchronize_ext, (hipdnnStream_t stream), (stream))                        \
    X(hipdnnStreamWaitEvent_ext,                                                             \
      (hipdnnStream_t stream, hipdnnEvent_t event), (stream, event))                         \
    X(hipdnnEventCreate_ext, (hipdnnEvent_t* event), (event))                                \
    X(hipdnnEventDestroy_ext, (hipdnnEvent_t event), (event))                                \
    X(hipdnnEventRecord_ext, (hipdnnEvent_t event, hipdnnStream_t stream), (event, stream))  \
    X(hipdnnEventSynchronize_ext, (hipdnnEvent_t event), (event))                            \
    X(hipdnnEventElapsedTime_ext,                                                            \
      (float* ms, hipdnnEvent_t start, hipdnnEvent_t end), (ms, start, end))                 \
    X(hipdnnPointerGetMemorySpace_ext,                                                       \
      (const void* ptr, hipdnnMemorySpace_t* space, int* device), (ptr, space, device))      \
    X(hipdnnPointerGetExtent_ext,                                                            \
      (const void* ptr, uint64_t bytes, uint64_t* inside), (ptr, bytes, inside))             \
    X(hipdnnBackendCreateDescriptor,                                                         \
      (hipdnnBackendDescriptorType_t type, hipdnnBackendDescriptor_t* desc), (type, desc))   \
    X(hipdnnBackendDestroyDescriptor, (hipdnnBackendDescriptor_t desc), (desc))              \
    X(hipdnnBackendGetDescriptorType_ext,                                                    \
      (hipdnnBackendDescriptor_t desc, hipdnnBackendDescriptorType_t* type), (desc, type))   \
    X(hipdnnBackendSetAttribute,                                                             \
      (hipdnnBackendDescriptor_t desc, hipdnnBackendAttributeName_t name,                    \
       hipdnnBackendAttributeType_t type, int64_t count, const void* values),                \
      (desc, name, type, count, values))                                                     \
    X(hipdnnBackendGetAttribute,                                                             \
      (hipdnnBackendDescriptor_t desc, hipdnnBackendAttributeName_t name,                    \
       hipdnnBackendAttributeType_t type, int64_t requested, int64_t* count, void* values),  \
      (desc, name, type, requested, count, values))                                          \
    X(hipdnnBackendFinalize, (hipdnnBackendDescriptor_t desc), (desc))                       \
    X(hipdnnBackendExecute,                                                                  \
      (hipdnnHandle_t handle, hipdnnBackendDescriptor_t plan,                                \
       hipdnnBackendDescriptor_t variant_pack),                                              \
      (handle, plan, variant_pack))                                                          \
    X(hipdnnAutotune_ext,                                                                    \
      (hipdnnHandle_t handle, int64_t num_plans, const hipdnnBackendDescriptor_t* plans,     \
       hipdnnBackendDescriptor_t variant_pack, const hipdnnAutotuneOptions_ext_t* options,   \
       hipdnnAutotuneResult_ext_t* results, int64_t* best),                                  \
      (handle, num_plans, plans, variant_pack, options, results, best))                      \
    X(hipdnnPlanCacheInfo_ext, (char* dir, size_t dir_len, int64_t* entries, int64_t* bytes), \
      (dir, dir_len, entries, bytes))                                                        \
    X(hipdnnPlanCacheClear_ext, (int64_t* removed), (removed))                               \
    X(hipdnnGetHeuristicPlugins_ext, (size_t* num, char** entries, size_t* max_len),          \
      (num, entries, max_len))                                                               \
    X(hipdnnBackendPopulateDeviceGraph_ext,                                              \
      (hipdnnHandle_t handle, hipdnnBackendDescriptor_t plan,                            \
       hipdnnBackendDescriptor_t variant_pack, hipdnnGraph_t graph),                     \
      (handle, plan, variant_pack, graph))                                               \
    X(hipdnnBackendUpdateDeviceGraph_ext,                                                \
      (hipdnnHandle_t handle, hipdnnBackendDescriptor_t plan,                            \
       hipdnnBackendDescriptor_t variant_pack, hipdnnGraph_t graph),                     \
      (handle, plan, variant_pack, graph))                                               \
    X(hipdnnStreamIsCapturing_ext, (hipdnnStream_t stream, int* capturing),              \
      (stream, capturing))                                                               \
    X(hipdnnGetPlanKernels_ext,                                                              \
      (hipdnnBackendDescriptor_t plan, int64_t* num_kernels,                                 \
       const hipdnnKernelInfo_ext_t** kernels),                                              \
      (plan, num_kernels, kernels))                                                          \
    X(hipdnnBackendGetSerializedBinaryGraph_ext,                                             \
      (hipdnnBackendDescriptor_t graph, size_t capacity, size_t* size, uint8_t* data),       \
      (graph, capacity, size, data))                                                         \
    X(hipdnnBackendCreateAndDeserializeGraph_ext,                                            \
      (hipdnnBackendDescriptor_t* graph, const uint8_t* data, size_t size),                  \
      (graph, data, size))                                                                   \
    X(hipdnnSetEnginePluginPaths_ext,                                                        \
      (size_t num_paths, const char* const* paths, hipdnnPluginLoadingMode_t mode),          \
      (num_paths, paths, mode))                                                              \
    X(hipdnnGetLoadedEnginePluginPaths_ext,                                                  \
      (size_t* num_paths, char** paths, size_t* max_len), (num_paths, paths, max_len))       \
    X(hipdnnGetEngineCount_ext, (int64_t* count), (count))                                   \
    X(hipdnnGetEngineInfo_ext, (int64_t index, hipdnnEngineInfo_ext_t* info), (index, info)) \
    X(hipdnnGetSkippedEnginePlugins_ext,                                                     \
      (size_t* num, char** entries, size_t* max_len), (num, entries, max_len))               \
    X(hipdnnSetUserLogCallback_ext,                                                          \
      (hipdnnLogCallback_t callback, void* user_data), (callback, user_data))                \
    X(hipdnnSetLogLevel_ext, (hipdnnLogLevel_t level), (level))                              \
    X(hipdnnLogMessage_ext, (hipdnnLogLevel_t level, const char* message), (level, message))

#endif
