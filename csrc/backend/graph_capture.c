/* graph_capture.c — a plan's run recorded into the caller's CUDA or HIP graph, as cuDNN's
 * cudnnBackendPopulateCudaGraph and cudnnBackendUpdateCudaGraph do (hipdnn_tuning.h).
 *
 * The plan's execute is captured on a stream of our own into a graph, which becomes the
 * caller's graph's one node, a child-graph node: whatever the engine enqueues (kernels,
 * copies, fills) is recorded, with no engine having to build graph nodes itself.  Update
 * records again on the new pointers and gives each recorded node its twin's parameters,
 * in place: the shapes must agree (node kinds in order), and the nodes stay the same
 * nodes, which is what the runtime's exec update (cudaGraphExecChildGraphNodeSetParams,
 * cudaGraphExecUpdate) requires to carry the new parameters into an instantiated graph.
 * (Swapping the child node for a new one kept the shape but not the node: CUDA 13 refused
 * the exec update, CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, on the H200.) */
#include <stdio.h>
#include <string.h>

#include "device.h"
#include "error.h"
#include "plan.h"

#define MAX_NODES 256
enum { NODE_CHILD_GRAPH = 4, NODE_EMPTY = 5 };

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

/* graph's nodes, in order, into nodes[*n] (MAX_NODES of room). */
static hipdnnStatus_t nodes_of(const hipdnnDeviceRuntime* rt, void* graph, void** nodes,
                               size_t* n) {
    size_t count = 0;
    hipdnnStatus_t st = rt->graph_nodes(graph, NULL, &count);
    if (!st && count > MAX_NODES)
        return hipdnnFail(HIPDNN_STATUS_NOT_SUPPORTED, "a recorded graph of %zu nodes (at most "
                          "%d are updated)", count, MAX_NODES);
    if (!st && count) st = rt->graph_nodes(graph, nodes, &count);
    *n = st ? 0 : count;
    return st;
}

/* Walks dst and src, recordings of one plan, node by node (child graphs within): with
 * copy 0, checks that they have the same shape; with copy 1, gives each node of dst its
 * twin's parameters.  Shapes are checked whole before anything is copied. */
static hipdnnStatus_t walk(const hipdnnDeviceRuntime* rt, void* dst, void* src, int copy,
                           int depth) {
    static const char fn[] = "hipdnnBackendUpdateDeviceGraph_ext";
    void* a[MAX_NODES];
    void* b[MAX_NODES];
    size_t na = 0, nb = 0;
    hipdnnStatus_t st = nodes_of(rt, dst, a, &na);
    if (!st) st = nodes_of(rt, src, b, &nb);
    if (!st && na != nb)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: the plan recorded on these buffers has "
                          "%zu node%s where the graph's recording has %zu: the engine took "
                          "another path for them (their alignment, say); populate a new graph",
                          fn, nb, nb == 1 ? "" : "s", na);
    for (size_t i = 0; !st && i < na; ++i) {
        int ka = -1, kb = -1;
        st = rt->graph_node_type(a[i], &ka);
        if (!st) st = rt->graph_node_type(b[i], &kb);
        if (st) break;
        if (ka != kb)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: node %zu of the plan recorded on "
                              "these buffers is of kind %d where the graph's is of kind %d: the "
                              "engine took another path for them; populate a new graph", fn, i,
                              kb, ka);
        if (ka == NODE_CHILD_GRAPH) {
            void *ca = NULL, *cb = NULL;
            if (depth > 4)
                return hipdnnFail(HIPDNN_STATUS_NOT_SUPPORTED, "%s: child graphs nested more "
                                  "than 4 deep", fn);
            st = rt->graph_child(a[i], &ca);
            if (!st) st = rt->graph_child(b[i], &cb);
            if (!st) st = walk(rt, ca, cb, copy, depth + 1);
        } else if (ka != NODE_EMPTY && copy) {
            st = rt->graph_copy_params(a[i], b[i], ka);
        }
    }
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
    size_t count = 0;
    int type = -1;
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
    if (!st) st = record(handle, plan, variant_pack, rt, &rec);
    if (!st) st = walk(rt, old, rec, 0, 0);
    if (!st) st = walk(rt, old, rec, 1, 0);
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

int hipdnnDeviceRelaxCapture(const hipdnnDeviceRuntime* rt, hipdnnStream_t stream) {
    int status = 0, mode = 2; /* relaxed */
    if (!rt || !rt->capture_mode || !rt->capture_status) return -1;
    char kept[1024]; /* a failed query must not replace the message of the run it serves */
    snprintf(kept, sizeof(kept), "%s", hipdnnErrorMessage());
    if (rt->capture_status(stream, &status) == HIPDNN_STATUS_SUCCESS && !status &&
        rt->capture_mode(&mode) == HIPDNN_STATUS_SUCCESS)
        return mode;
    if (kept[0]) hipdnnFail(HIPDNN_STATUS_SUCCESS, "%s", kept);
    else hipdnnClearError();
    return -1;
}

void hipdnnDeviceRestoreCapture(const hipdnnDeviceRuntime* rt, int saved) {
    if (saved >= 0) rt->capture_mode(&saved);
}
