/* context_check.c — what an EPContext payload's graph may touch (docs/onnxruntime.md,
 * "EPContext models").  The checksum catches accidents only: a payload made on purpose
 * can carry a hipdnn graph whose bound tensors reach past ORT's buffers.  So each part's
 * deserialized graph is held to the shapes the payload records (already matched to the
 * EPContext node's own) and to the node's element types before any plan is built:
 *   - a binding names a non-virtual, non-by-value tensor of its graph, one binding each,
 *     and every such tensor has one (a by-value tensor carries its value);
 *   - its data type is the one hipdnn-ep gives that ONNX element type (float, half, bool;
 *     float for the kernel's zero);
 *   - the elements its strides reach fit the buffer: the input's element count, 1 for the
 *     zero; an output's tensor has exactly the output's elements, with no two at one
 *     address, so it writes every element once and nothing past them;
 *   - an input and the zero are never written; an output is bound once over all parts.
 * At Run the kernel takes only the recorded input shapes (kernel.c's find_plan). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipdnn/hipdnn_sdk.h"
#include "hipdnn_ep.h"

typedef struct {
    int64_t uid;
    char name[128];
    hipdnnDataType_t type;
    int32_t rank;
    int64_t dims[HIPDNN_MAX_DIMS], strides[HIPDNN_MAX_DIMS];
    bool is_virtual, by_value, has_value, written;
    int bound; /* bindings naming it */
} ctx_tensor;

/* One TENSOR descriptor of the graph into t; false when an attribute cannot be read. */
static bool read_tensor(hipdnnBackendDescriptor_t d, ctx_tensor* t) {
    int64_t n = 0, nv = 0, ns = 0;
    memset(t, 0, sizeof(*t));
    bool ok =
        hipdnnBackendGetAttribute(d, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT64, 1, &n,
                                  &t->uid) == HIPDNN_STATUS_SUCCESS &&
        hipdnnBackendGetAttribute(d, HIPDNN_ATTR_TENSOR_DATA_TYPE, HIPDNN_TYPE_DATA_TYPE, 1, &n,
                                  &t->type) == HIPDNN_STATUS_SUCCESS &&
        hipdnnBackendGetAttribute(d, HIPDNN_ATTR_TENSOR_DIMENSIONS, HIPDNN_TYPE_INT64,
                                  HIPDNN_MAX_DIMS, &n, t->dims) == HIPDNN_STATUS_SUCCESS &&
        n >= 0 && n <= HIPDNN_MAX_DIMS &&
        hipdnnBackendGetAttribute(d, HIPDNN_ATTR_TENSOR_STRIDES, HIPDNN_TYPE_INT64,
                                  HIPDNN_MAX_DIMS, &ns, t->strides) == HIPDNN_STATUS_SUCCESS &&
        hipdnnBackendGetAttribute(d, HIPDNN_ATTR_TENSOR_IS_VIRTUAL, HIPDNN_TYPE_BOOLEAN, 1, &nv,
                                  &t->is_virtual) == HIPDNN_STATUS_SUCCESS &&
        hipdnnBackendGetAttribute(d, HIPDNN_ATTR_TENSOR_IS_BY_VALUE, HIPDNN_TYPE_BOOLEAN, 1,
                                  &nv, &t->by_value) == HIPDNN_STATUS_SUCCESS &&
        hipdnnBackendGetAttribute(d, HIPDNN_ATTR_TENSOR_VALUE_EXT, HIPDNN_TYPE_UINT8_EXT, 0, &nv,
                                  NULL) == HIPDNN_STATUS_SUCCESS;
    t->rank = (int32_t)n;
    t->has_value = nv > 0;
    /* a finalized graph infers every stride; none read would leave them unknown */
    if (ok && ns != n) ok = t->is_virtual || t->by_value;
    if (ok && hipdnnBackendGetAttribute(d, HIPDNN_ATTR_TENSOR_NAME_EXT, HIPDNN_TYPE_CHAR,
                                        (int64_t)sizeof(t->name) - 1, &n, t->name) !=
                  HIPDNN_STATUS_SUCCESS)
        snprintf(t->name, sizeof(t->name), "?");
    t->name[sizeof(t->name) - 1] = '\0';
    return ok;
}

/* The graph's tensors, with `written` set for those its nodes write; NULL with why. */
static ctx_tensor* graph_tensors(hipdnnBackendDescriptor_t g, int* count, char* why,
                                 size_t why_len) {
    int64_t n = 0, nw = 0;
    if (hipdnnBackendGetAttribute(g, HIPDNN_ATTR_OPERATIONGRAPH_TENSORS_EXT,
                                  HIPDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n, NULL) ||
        hipdnnBackendGetAttribute(g, HIPDNN_ATTR_OPERATIONGRAPH_OUTPUT_UIDS_EXT,
                                  HIPDNN_TYPE_INT64, 0, &nw, NULL) || n < 0 || nw < 0)
        return snprintf(why, why_len, "its graph's tensors: %s", hipdnnPeekLastErrorString_ext()),
               NULL;
    hipdnnBackendDescriptor_t* d = calloc((size_t)n + 1, sizeof(*d));
    int64_t* w = calloc((size_t)nw + 1, sizeof(*w));
    ctx_tensor* t = calloc((size_t)n + 1, sizeof(*t));
    bool ok = d && w && t &&
              !hipdnnBackendGetAttribute(g, HIPDNN_ATTR_OPERATIONGRAPH_TENSORS_EXT,
                                         HIPDNN_TYPE_BACKEND_DESCRIPTOR, n, &n, d) &&
              !hipdnnBackendGetAttribute(g, HIPDNN_ATTR_OPERATIONGRAPH_OUTPUT_UIDS_EXT,
                                         HIPDNN_TYPE_INT64, nw, &nw, w);
    for (int64_t i = 0; ok && i < n; ++i) ok = read_tensor(d[i], &t[i]);
    for (int64_t i = 0; d && i < n; ++i) hipdnnBackendDestroyDescriptor(d[i]);
    for (int64_t k = 0; ok && k < nw; ++k)
        for (int64_t i = 0; i < n; ++i) t[i].written = t[i].written || t[i].uid == w[k];
    free(d);
    free(w);
    if (!ok) {
        free(t);
        return snprintf(why, why_len, "its graph's tensors cannot be read"), NULL;
    }
    *count = (int)n;
    return t;
}

/* The data type hipdnn-ep gives an ONNX element type (lower.c's lw_bound), or NOT_SET. */
static hipdnnDataType_t type_of(int32_t elem) {
    return elem == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT     ? HIPDNN_DATA_FLOAT
           : elem == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16 ? HIPDNN_DATA_HALF
           : elem == ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL    ? HIPDNN_DATA_BOOLEAN
                                                           : HIPDNN_DATA_NOT_SET;
}

static int64_t shape_elements(const ep_shape* s) {
    int64_t n = 1;
    for (int d = 0; d < s->rank; ++d) n *= s->dims[d];
    return n;
}

/* Binding b against tensor t: false with why (which names neither; the caller does). */
static bool check_binding(const ep_model* m, const ep_binding* b, const ctx_tensor* t,
                          const ep_shape* in, const ep_shape* out, char* why, size_t why_len) {
    int64_t span = 0;
    bool is_out = b->kind == EP_BIND_OUTPUT, is_zero = b->kind == EP_BIND_ZERO;
    int v = is_zero ? -1 : is_out ? m->outputs[b->index] : m->inputs[b->index];
    const ep_shape* s = is_zero ? NULL : is_out ? &out[b->index] : &in[b->index];
    hipdnnDataType_t want = is_zero ? HIPDNN_DATA_FLOAT : type_of(m->values[v].elem_type);
    int64_t room = s ? shape_elements(s) : 1;
    if (t->is_virtual || t->by_value)
        return snprintf(why, why_len, "is %s, so no memory may be bound to it",
                        t->is_virtual ? "virtual" : "by value"), false;
    if (t->bound > 1) return snprintf(why, why_len, "is bound %d times", t->bound), false;
    if (want == HIPDNN_DATA_NOT_SET || t->type != want)
        return snprintf(why, why_len, "has data type %s where the buffer holds %s (ONNX "
                        "element type %d)", hipdnnSdkDataTypeName(t->type),
                        want == HIPDNN_DATA_NOT_SET ? "a type hipdnn-ep never binds"
                                                    : hipdnnSdkDataTypeName(want),
                        is_zero ? 1 : (int)m->values[v].elem_type), false;
    if (!hipdnnSdkSpanElements(t->rank, t->dims, t->strides, &span) || span > room)
        return snprintf(why, why_len, "reaches %lld elements through its strides, and the "
                        "buffer holds %lld", (long long)span, (long long)room), false;
    if ((!is_out) && t->written)
        return snprintf(why, why_len, "is written by the graph, and %s is only read",
                        is_zero ? "the kernel's zero" : "an input"), false;
    if (is_out && hipdnnSdkElementCount(t->rank, t->dims) != room)
        return snprintf(why, why_len, "has %lld elements for an output of %lld",
                        (long long)hipdnnSdkElementCount(t->rank, t->dims), (long long)room),
               false;
    if (is_out && hipdnnSdkStridesOverlap(t->rank, t->dims, t->strides))
        return snprintf(why, why_len, "has strides that put two of its elements at one "
                        "address"), false;
    return true;
}

/* "input 1 'w' [4, 3, 3, 3]" of binding b into buf. */
static void binding_str(const ep_model* m, const ep_binding* b, const ep_shape* in,
                        const ep_shape* out, char* buf, size_t len) {
    char dims[160];
    if (b->kind == EP_BIND_ZERO) {
        snprintf(buf, len, "the kernel's float 0");
        return;
    }
    bool o = b->kind == EP_BIND_OUTPUT;
    ep_shape_str(o ? &out[b->index] : &in[b->index], dims, sizeof(dims));
    snprintf(buf, len, "%s %d '%s' %s", o ? "output" : "input", b->index,
             m->values[o ? m->outputs[b->index] : m->inputs[b->index]].name, dims);
}

bool ep_context_check_part(const ep_model* m, hipdnnBackendDescriptor_t g, int part,
                           const ep_binding* bind, int n_bind, const ep_shape* in,
                           const ep_shape* out, int* out_bound, char* why, size_t why_len) {
    int n = 0;
    ctx_tensor* t = graph_tensors(g, &n, why, why_len);
    if (!t) return false;
    int* at = calloc((size_t)n_bind + 1, sizeof(int));
    bool ok = at != NULL;
    if (!ok) snprintf(why, why_len, "out of memory");
    for (int i = 0; ok && i < n_bind; ++i) {
        at[i] = 0;
        while (at[i] < n && t[at[i]].uid != bind[i].uid) ++at[i];
        if (at[i] == n)
            ok = (snprintf(why, why_len, "part %d binds uid %lld, which names no tensor of its "
                           "graph", part, (long long)bind[i].uid), false);
        else ++t[at[i]].bound;
    }
    for (int i = 0; ok && i < n_bind; ++i) {
        char what[320], reason[320];
        binding_str(m, &bind[i], in, out, what, sizeof(what));
        const ctx_tensor* x = &t[at[i]];
        if (bind[i].kind == EP_BIND_OUTPUT && out_bound[bind[i].index]++)
            ok = (snprintf(reason, sizeof(reason), "is the second tensor bound to it"), false);
        else ok = check_binding(m, &bind[i], x, in, out, reason, sizeof(reason));
        if (!ok)
            snprintf(why, why_len, "part %d: tensor '%s' (uid %lld), bound to %s, %s", part,
                     x->name, (long long)x->uid, what, reason);
    }
    for (int i = 0; ok && i < n; ++i) {
        bool needs = !t[i].is_virtual && !(t[i].by_value && t[i].has_value);
        if (needs && !t[i].bound)
            ok = (snprintf(why, why_len, "part %d: tensor '%s' (uid %lld) is %s, and no "
                           "memory is bound to it", part, t[i].name, (long long)t[i].uid,
                           t[i].by_value ? "by value with no value" : "not virtual"), false);
    }
    free(at);
    free(t);
    return ok;
}
