/* graph_capture.c — a plan's run recorded into the caller's CUDA or HIP graph, as cuDNN's
 * cudnnBackendPopulateCudaGraph and cudnnBackendUpdateCudaGraph do (hipdnn_tuning.h).
 *
 * The plan's execute is captured on a stream of our own into a graph, which becomes the
 * caller's graph's one node, a child-graph node: whatever the engine enqueues (kernels,
 * copies, fills) is recorded, with no engine having to build graph nodes itself.  Update
 * records again on the new pointers and swaps the child for the new recording; the shapes
 * must agree (node kinds in order), which is what the runtime's exec update
 * (cudaGraphExecChildGraphNodeSetParams, cudaGraphExecUpdate) requires to carry the new
 * parameters into an instantiated graph. */
#include <stdio.h>
#include <string.h>

#include "device.h"
#include "error.h"
#include "plan.h"

#define MAX_NODES 256
enum { NODE_CHILD_GRAPH = 4 };

static hipdnnStatus_t need_runtime(const char* fn, hipdnnGraph_t graph,
                                   const hipdnnDeviceRuntime** rt) {
    *rt = hipdnnDeviceRuntimeGet();
    if (!graph) return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NULL_POINTER, "%s: graph is NULL", fn);
    if (!*rt)
        return hipdnnFail(HIPDNN_STATUS_NOT_SUPPORTED, "%s: no device runtime (%s)", fn,
                          hipdnnDeviceRuntimeWhyNone());
    if (!(*rt)->capture_begin)
        return hipdnnFail(HIPDNN_STATUS_NOT_SUPPORTED, "%s: the %s runtime (%s) has no stream "
                          "capture", fn, (*rt)->name, (*rt)->library);
    return HIPDNN_STATUS_SUCCESS;
}

/* The plan's run on the pack, recorded on a stream made for it, into *rec. */
static hipdnnStatus_t record(hipdnnHandle_t handle, hipdnnBackendDescriptor_t plan,
                             hipdnnBackendDescriptor_t vp, const hipdnnDeviceRuntime* rt,
                             void** rec) {
    hipdnnStream_t cap = NULL;
    *rec = NULL;
    hipdnnStatus_t st = rt->stream_create(&cap);
    if (st) return st;
    st = hipdnnExecuteRecorded(handle, plan, vp, cap, rec);
    rt->stream_destroy(cap);
    return st;
}

/* The kinds of graph's nodes, in order, into kinds[*n]. */
static hipdnnStatus_t shape_of(const hipdnnDeviceRuntime* rt, void* graph, int* kinds, size_t* n) {
    void* nodes[MAX_NODES];
    size_t count = 0;
    hipdnnStatus_t st = rt->graph_nodes(graph, NULL, &count);
    if (!st && count > MAX_NODES)
        return hipdnnFail(HIPDNN_STATUS_NOT_SUPPORTED, "a recorded graph of %zu nodes (at most "
                          "%d are compared)", count, MAX_NODES);
    if (!st && count) st = rt->graph_nodes(graph, nodes, &count);
    for (size_t i = 0; !st && i < count; ++i) st = rt->graph_node_type(nodes[i], &kinds[i]);
    *n = count;
    return st;
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnBackendPopulateDeviceGraph_ext(hipdnnHandle_t handle,
                                                                  hipdnnBackendDescriptor_t plan,
                                                                  hipdnnBackendDescriptor_t variant_pack,
                                                                  hipdnnGraph_t graph) {
    static const char fn[] = "hipdnnBackendPopulateDeviceGraph_ext";
    hipdnnClearError();
    const hipdnnDeviceRuntime* rt;
    hipdnnStatus_t st = need_runtime(fn, graph, &rt);
    size_t count = 0;
    if (!st) st = rt->graph_nodes(graph, NULL, &count);
    if (!st && count)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: the graph has %zu node%s; populate fills "
                          "an empty graph (update_cuda_graph re-records one it filled)", fn, count,
                          count == 1 ? "" : "s");
    void* rec = NULL;
    if (!st) st = record(handle, plan, variant_pack, rt, &rec);
    if (!st) st = rt->graph_add_child(graph, rec);
    if (rec) rt->graph_destroy(rec);
    return st;
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnBackendUpdateDeviceGraph_ext(hipdnnHandle_t handle,
                                                                hipdnnBackendDescriptor_t plan,
                                                                hipdnnBackendDescriptor_t variant_pack,
                                                                hipdnnGraph_t graph) {
    static const char fn[] = "hipdnnBackendUpdateDeviceGraph_ext";
    hipdnnClearError();
    const hipdnnDeviceRuntime* rt;
    hipdnnStatus_t st = need_runtime(fn, graph, &rt);
    void* node = NULL;
    void* old = NULL;
    size_t count = 0, n_old = 0, n_new = 0;
    int type = -1, k_old[MAX_NODES], k_new[MAX_NODES];
    if (!st) st = rt->graph_nodes(graph, NULL, &count);
    if (!st && count == 1) st = rt->graph_nodes(graph, &node, &count);
    if (!st && count == 1) st = rt->graph_node_type(node, &type);
    if (st) return st;
    if (count != 1 || type != NODE_CHILD_GRAPH)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: the graph was not filled by populate "
                          "(it holds %zu node%s, not one child graph)", fn, count,
                          count == 1 ? "" : "s");
    void* rec = NULL;
    st = rt->graph_child(node, &old);
    if (!st) st = shape_of(rt, old, k_old, &n_old);
    if (!st) st = record(handle, plan, variant_pack, rt, &rec);
    if (!st) st = shape_of(rt, rec, k_new, &n_new);
    if (!st && (n_old != n_new || memcmp(k_old, k_new, n_old * sizeof(int)) != 0))
        st = hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: the plan recorded on these buffers has %zu "
                        "node%s where the graph's recording has %zu, or other kinds: the engine "
                        "took another path for them (their alignment, say); populate a new graph",
                        fn, n_new, n_new == 1 ? "" : "s", n_old);
    /* the one node goes and its successor comes in the same place: the graph's shape, what
     * an exec update compares, stays */
    if (!st) st = rt->graph_destroy_node(node);
    if (!st) st = rt->graph_add_child(graph, rec);
    if (rec) rt->graph_destroy(rec);
    return st;
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnStreamIsCapturing_ext(hipdnnStream_t stream, int* capturing) {
    hipdnnClearError();
    if (!capturing)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NULL_POINTER,
                          "hipdnnStreamIsCapturing_ext: capturing is NULL");
    *capturing = 0;
    const hipdnnDeviceRuntime* rt = hipdnnDeviceRuntimeGet();
    if (!rt || !rt->capture_status) return HIPDNN_STATUS_SUCCESS;
    return rt->capture_status(stream, capturing);
}
