/* Graphs to and from FlatBuffers bytes.  Deserialized graphs pass the same validation
 * and inference as built ones, so plugins only ever see checked graphs. */
#include <stdlib.h>
#include <string.h>

#include "descriptor.h"
#include "error.h"

hipdnnStatus_t hipdnnGraphCheckAndEncode(hipdnnGraphState* s, hipdnnSdkGraph* g);
hipdnnStatus_t hipdnnGraphAdoptNodes(hipdnnGraphState* s);

HIPDNN_EXPORT hipdnnStatus_t hipdnnBackendGetSerializedBinaryGraph_ext(
    hipdnnBackendDescriptor_t graph, size_t capacity, size_t* size, uint8_t* data) {
    hipdnnClearError();
    hipdnnStatus_t st = hipdnnDescriptorCheck(graph, HIPDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR,
                                              "hipdnnBackendGetSerializedBinaryGraph_ext");
    if (st) return st;
    if (!size)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NULL_POINTER,
                          "hipdnnBackendGetSerializedBinaryGraph_ext: size is NULL");
    if (!graph->finalized)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED,
                          "hipdnnBackendGetSerializedBinaryGraph_ext: finalize the graph first");
    hipdnnGraphState* s = graph->state;
    *size = s->num_bytes;
    if (!data) return HIPDNN_STATUS_SUCCESS;
    if (capacity < s->num_bytes)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT,
                          "hipdnnBackendGetSerializedBinaryGraph_ext: buffer of %zu bytes, need %zu",
                          capacity, s->num_bytes);
    memcpy(data, s->bytes, s->num_bytes);
    return HIPDNN_STATUS_SUCCESS;
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnBackendCreateAndDeserializeGraph_ext(
    hipdnnBackendDescriptor_t* graph, const uint8_t* data, size_t size) {
    hipdnnClearError();
    if (!graph || !data)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NULL_POINTER,
                          "hipdnnBackendCreateAndDeserializeGraph_ext: %s is NULL",
                          graph ? "data" : "graph");
    *graph = NULL;
    char why[512] = "";
    hipdnnSdkGraph* g = hipdnnSdkGraphDecode(data, size, why, sizeof(why));
    if (!g) return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "deserialize: %s", why);
    hipdnnBackendDescriptor_t d = NULL;
    hipdnnStatus_t st = hipdnnDescriptorNew(HIPDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &d);
    if (st) {
        hipdnnSdkGraphFree(g);
        return st;
    }
    hipdnnGraphState* s = d->state;
    s->name = strdup(g->name);
    st = s->name ? hipdnnGraphCheckAndEncode(s, g)
                 : hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory");
    if (st) {
        /* Keep the checker's message, saying it came from deserialized bytes. */
        char msg[1024];
        strncpy(msg, hipdnnErrorMessage(), sizeof(msg) - 1);
        msg[sizeof(msg) - 1] = '\0';
        hipdnnSdkGraphFree(g);
        hipdnnDescriptorRelease(d);
        return hipdnnFail(st, "deserialize: %s", msg);
    }
    if ((st = hipdnnGraphAdoptNodes(s))) {
        hipdnnDescriptorRelease(d); /* owns g now */
        return st;
    }
    d->finalized = true;
    *graph = d;
    return HIPDNN_STATUS_SUCCESS;
}
