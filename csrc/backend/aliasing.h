/* aliasing.h — outputs over inputs' memory at execute (aliasing.c). */
#ifndef HIPDNN_BACKEND_ALIASING_H
#define HIPDNN_BACKEND_ALIASING_H

#include <stdbool.h>
#include <stdint.h>

#include "hipdnn/hipdnn.h"
#include "hipdnn/hipdnn_plugin.h"
#include "hipdnn/hipdnn_sdk.h"

/* span_bytes of a ragged tensor (sdpa's THD layouts): where its samples lie is the offsets
 * tensor's device data, which the host cannot read without a copy and a synchronization
 * (neither allowed while another stream captures a graph, issue 25); so neither its extent
 * nor its overlap with other tensors is checked on the host.  cuDNN frontend hands over
 * the batch's tokens alone, less than the dims reach. */
#define HIPDNN_SPAN_RAGGED (-2)

/* The copies made for one execute. */
typedef struct {
    void** copies;
    bool* on_device;
    uint32_t n;
    hipdnnStream_t stream;
} hipdnnAliasStaging;

/* Points every input of bufs[nb] whose bytes overlap an output's at a copy of it (on the
 * device, enqueued on `stream`, for a device engine); BAD_PARAM naming both when two
 * outputs overlap.  span_bytes: by tensor index, the bytes each reaches, -1 past int64,
 * HIPDNN_SPAN_RAGGED for a ragged tensor, left out (hipdnnGraphState's).  hipdnnAliasRelease frees the copies once the run is enqueued
 * (waiting for the stream when a copy is on the device). */
hipdnnStatus_t hipdnnAliasStage(const hipdnnSdkGraph* g, const int64_t* span_bytes,
                                hipdnnPluginTensorBuffer_t* bufs,
                                uint32_t nb, bool device_engine, hipdnnStream_t stream,
                                hipdnnAliasStaging* s);
void hipdnnAliasRelease(hipdnnAliasStaging* s);

#endif
