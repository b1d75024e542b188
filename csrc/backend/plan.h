/* EXECUTION_PLAN state, shared with execute.c. */
#ifndef HIPDNN_BACKEND_PLAN_H
#define HIPDNN_BACKEND_PLAN_H

#include "descriptor.h"
#include "handle.h"

typedef struct {
    hipdnnHandle_t handle;           /* retained once finalized */
    hipdnnBackendDescriptor_t config; /* ENGINECFG */
    hipdnnBackendDescriptor_t graph;  /* OPERATIONGRAPH, kept alive with the plan */
    int32_t engine;                   /* registry index */
    int32_t plugin;
    hipdnnEnginePluginHandle_t plugin_handle;
    hipdnnEnginePluginExecutionContext_t ctx;
    size_t workspace_size;
    /* hipdnnGetPlanKernels_ext's answer, made on its first call: the kernels, and one block
     * holding their node indices and strings */
    int64_t num_kernels;
    hipdnnKernelInfo_ext_t* kernels;
    void* kernel_data;
} hipdnnPlanState;

/* hipdnnBackendExecute's checks and run, with the engine's enqueue recorded on stream
 * `cap` (a capture of its own) into *graph instead of run (execute.c, for
 * graph_capture.c); NOT_SUPPORTED for an engine on the host. */
hipdnnStatus_t hipdnnExecuteRecorded(hipdnnHandle_t handle, hipdnnBackendDescriptor_t plan,
                                     hipdnnBackendDescriptor_t variant_pack, hipdnnStream_t cap,
                                     void** graph);

#endif
