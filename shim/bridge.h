/* bridge.h — libhipdnn_ort_bridge.so, the forwarding shim an umbrella ONNX Runtime EP
 * loads as one of its backends (docs/onnxruntime_shim.md).  Internal: the library exports
 * only CreateEpFactories and ReleaseEpFactory (bridge.c), ORT's plugin-EP entry points,
 * which forward to hipdnn-ep (libhipdnn_ep.so) loaded at run time.
 *
 *   bridge.c   the two exports: reference counting, under one mutex
 *   locate.c   finding and opening libhipdnn_ep.so (the only caller of the OS loader) */
#ifndef HIPDNN_ORT_BRIDGE_H
#define HIPDNN_ORT_BRIDGE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "onnxruntime_c_api.h" /* includes onnxruntime_ep_c_api.h */

#define BRIDGE_PREFIX "hipdnn ORT bridge: "
#define BRIDGE_EP_FILE "libhipdnn_ep.so"
#define BRIDGE_EP_ENV "HIPDNN_EP_LIBRARY"

typedef struct {
    void* handle; /* NULL when closed */
    CreateEpApiFactoriesFn create;
    ReleaseEpApiFactoryFn release;
} bridge_lib;

/* Opens hipdnn-ep and resolves its two entry points.  Candidates, in order: the path in
 * $HIPDNN_EP_LIBRARY alone when it is set and not empty; otherwise libhipdnn_ep.so in this
 * library's own folder, then libhipdnn_ep.so through the loader's search path.  On failure
 * returns ORT_NO_SUCHFILE (no candidate opened) or ORT_FAIL (one opened but lacked an
 * entry point), leaves `lib` closed, and writes into `why` every candidate tried with the
 * loader's reason.  Returns ORT_OK on success.  Not thread-safe: the caller holds the
 * bridge's lock. */
OrtErrorCode bridge_lib_open(bridge_lib* lib, char* why, size_t why_len);

/* Closes what bridge_lib_open opened; a closed lib is left alone. */
void bridge_lib_close(bridge_lib* lib);

#endif /* HIPDNN_ORT_BRIDGE_H */
