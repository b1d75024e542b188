/* memcpy.c — the MemcpyFromHost and MemcpyToHost kernels of the GPU device.  Where a
 * fused node of the GPU reads a value a node of ORT's CPU EP makes (or the other way),
 * ORT puts a Memcpy node between them and assigns it to hipdnn-ep; a compiling EP without
 * these kernels gets ORT's generic CPU ones, which in ONNX Runtime 1.30 leave the copy's
 * result in host memory (the fused node then sees host pointers).  So hipdnn-ep registers
 * its own, in a kernel registry beside its compiled nodes: the copy is enqueued on the
 * run's sync stream, and a copy to the host also waits for it, so that the CPU node after
 * it reads finished data. */
#include <stdio.h>
#include <stdlib.h>

#include "hipdnn_ep.h"

typedef struct {
    OrtKernelImpl base; /* first: ORT hands back OrtKernelImpl* */
    ep_factory* f;
    bool to_host;
} copy_kernel;

static OrtStatus* ORT_API_CALL k_compute(OrtKernelImpl* impl, OrtKernelContext* ctx) {
    copy_kernel* k = (copy_kernel*)impl;
    const char* op = k->to_host ? "MemcpyToHost" : "MemcpyFromHost";
    const OrtValue* in = NULL;
    OrtValue* out = NULL;
    ONNXTensorElementDataType et;
    const int64_t* dims = NULL;
    size_t nd = 0, bytes = 0;
    const void* src = NULL;
    void* dst = NULL;
    void* stream = NULL;
    OrtStatus* st = g_ort->KernelContext_GetInput(ctx, 0, &in);
    if (!st && !in) st = ep_status(ORT_INVALID_ARGUMENT, "%s: no input", op);
    if (!st) st = g_ort->GetTensorElementTypeAndShapeDataReference(in, &et, &dims, &nd);
    if (!st) st = g_ort->KernelContext_GetOutput(ctx, 0, dims, nd, &out);
    if (!st) st = g_ort->GetTensorSizeInBytes(in, &bytes);
    if (!st) st = g_ort->GetTensorData(in, &src);
    if (!st) st = g_ort->GetTensorMutableData(out, &dst);
    if (!st) st = g_ort->KernelContext_GetGPUComputeStream(ctx, &stream);
    if (!st) st = ep_gpu_enter(k->f->gpu.ordinal, op);
    if (st || bytes == 0) return st;
    hipdnnStatus_t hs;
    const char* call;
    if (stream) {
        call = "hipdnnDeviceMemcpyAsync_ext";
        hs = hipdnnDeviceMemcpyAsync_ext(dst, src, bytes, stream);
        if (hs == HIPDNN_STATUS_SUCCESS && k->to_host) {
            call = "hipdnnStreamSynchronize_ext";
            hs = hipdnnStreamSynchronize_ext(stream);
        }
    } else {
        call = "hipdnnDeviceMemcpy_ext";
        hs = hipdnnDeviceMemcpy_ext(dst, src, bytes);
    }
    if (hs != HIPDNN_STATUS_SUCCESS)
        return ep_status(ORT_FAIL, "%s: %zu bytes %s: %s: %s: %s", op, bytes,
                         k->to_host ? "to the host" : "to the GPU", call, hipdnnGetErrorString(hs),
                         hipdnnPeekLastErrorString_ext());
    ep_log(k->f->logger, ORT_LOGGING_LEVEL_VERBOSE, ORT_LOGGING_LEVEL_VERBOSE,
           "%s: %zu bytes %s GPU %d (stream %p)", op, bytes, k->to_host ? "from" : "to",
           k->f->gpu.ordinal, stream);
    return NULL;
}

static void ORT_API_CALL k_release(OrtKernelImpl* impl) { free(impl); }

static OrtStatus* make_kernel(ep_factory* f, bool to_host, OrtKernelImpl** out) {
    copy_kernel* k = calloc(1, sizeof(*k));
    if (!k) return ep_status(ORT_FAIL, "Memcpy kernel: out of memory");
    k->f = f;
    k->to_host = to_host;
    k->base.ort_version_supported = ORT_API_VERSION;
    k->base.flags = 0;
    k->base.Compute = k_compute;
    k->base.Release = k_release;
    k->base.PrePackWeight = NULL; /* optional: nothing to pre-pack */
    k->base.SetSharedPrePackedWeight = NULL;
    *out = &k->base;
    return NULL;
}

static OrtStatus* ORT_API_CALL create_from_host(void* state, const OrtKernelInfo* info,
                                                OrtKernelImpl** out) {
    (void)info;
    return make_kernel(state, false, out);
}

static OrtStatus* ORT_API_CALL create_to_host(void* state, const OrtKernelInfo* info,
                                              OrtKernelImpl** out) {
    (void)info;
    return make_kernel(state, true, out);
}

/* Every tensor type a Memcpy node may carry between the CPU EP and a fused node. */
static const ONNXTensorElementDataType k_types[] = {
    ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,   ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16, ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8,    ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16,   ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32,   ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64,   ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL};

static OrtStatus* add_kernel(OrtKernelRegistry* reg, ep_factory* f, const char* op, bool to_host) {
    enum { N = sizeof(k_types) / sizeof(k_types[0]) };
    const OrtDataType* types[N];
    for (int i = 0; i < N; ++i) {
        OrtStatus* st = g_ep_api->GetTensorDataType(k_types[i], &types[i]);
        if (st) return st;
    }
    OrtKernelDefBuilder* b = NULL;
    OrtKernelDef* def = NULL;
    OrtStatus* st = g_ep_api->CreateKernelDefBuilder(&b);
    if (!st) st = g_ep_api->KernelDefBuilder_SetOperatorType(b, op);
    if (!st) st = g_ep_api->KernelDefBuilder_SetDomain(b, "");
    if (!st) st = g_ep_api->KernelDefBuilder_SetSinceVersion(b, 1, 1);
    if (!st) st = g_ep_api->KernelDefBuilder_SetExecutionProvider(b, EP_NAME);
    if (!st) st = to_host ? g_ep_api->KernelDefBuilder_SetOutputMemType(b, 0, OrtMemTypeCPUOutput)
                          : g_ep_api->KernelDefBuilder_SetInputMemType(b, 0, OrtMemTypeCPUInput);
    if (!st) st = g_ep_api->KernelDefBuilder_AddTypeConstraint(b, "T", types, N);
    if (!st) st = g_ep_api->KernelDefBuilder_Build(b, &def);
    if (!st)
        st = g_ep_api->KernelRegistry_AddKernel(reg, def, to_host ? create_to_host : create_from_host, f);
    if (def) g_ep_api->ReleaseKernelDef(def);
    if (b) g_ep_api->ReleaseKernelDefBuilder(b);
    return st;
}

OrtStatus* ep_memcpy_registry(ep_factory* f, OrtKernelRegistry** out) {
    *out = NULL;
    OrtKernelRegistry* reg = NULL;
    OrtStatus* st = g_ep_api->CreateKernelRegistry(&reg);
    if (!st) st = add_kernel(reg, f, "MemcpyFromHost", false);
    if (!st) st = add_kernel(reg, f, "MemcpyToHost", true);
    if (st) {
        if (reg) g_ep_api->ReleaseKernelRegistry(reg);
        return st;
    }
    *out = reg;
    return NULL;
}
