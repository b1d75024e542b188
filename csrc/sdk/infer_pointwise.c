/* Inference rule of pointwise ops: NumPy broadcasting of the operands onto the output,
 * the output's data type and strides. */
#include <string.h>

#include "hipdnn/hipdnn_sdk.h"
#include "infer_internal.h"

/* Parameters a mode reads must be usable: finite, and softplus's beta not 0 (it divides). */
static bool pointwise_params_ok(err_t* e, const hipdnnSdkNode* n, const char* label) {
    hipdnnPointwiseMode_t m = hipdnnSdkNodeMode(n);
    int slot = -1;
    if (m == HIPDNN_POINTWISE_ELU_FWD || m == HIPDNN_POINTWISE_ELU_BWD) slot = HIPDNN_PW_ELU_ALPHA;
    if (m == HIPDNN_POINTWISE_SOFTPLUS_FWD || m == HIPDNN_POINTWISE_SOFTPLUS_BWD)
        slot = HIPDNN_PW_SOFTPLUS_BETA;
    if (m == HIPDNN_POINTWISE_SWISH_FWD || m == HIPDNN_POINTWISE_SWISH_BWD)
        slot = HIPDNN_PW_SWISH_BETA;
    if (slot < 0) return true;
    double v = n->attrs[slot].d;
    const char* name = hipdnnSdkOpInfoGet(n->kind)->attrs[slot].name;
    if (v - v != 0.0) return fail(e, "%s: %s is %g; it must be finite", label, name, v);
    if (slot == HIPDNN_PW_SOFTPLUS_BETA && v == 0.0)
        return fail(e, "%s: %s is 0; softplus divides by it", label, name);
    return true;
}

bool infer_pointwise(err_t* e, hipdnnSdkNode* n, hipdnnSdkGraph* g, const char* label) {
    const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(n->kind);
    hipdnnPointwiseMode_t mode = hipdnnSdkNodeMode(n);
    unsigned in_set = 0, out_set = 0;
    for (int p = 0; p < HIPDNN_MAX_PORTS; ++p) {
        if (n->inputs[p] != HIPDNN_NO_TENSOR) in_set |= 1u << p;
        if (n->outputs[p] != HIPDNN_NO_TENSOR) out_set |= 1u << p;
    }
    if (!hipdnnSdkPointwiseCheckPorts(mode, in_set, out_set, label, e->buf, e->len)) return false;
    if (!pointwise_params_ok(e, n, label)) return false;
    hipdnnSdkPointwisePorts ports;
    hipdnnSdkPointwisePortsOf(mode, &ports);
    hipdnnSdkTensor* in[3] = {NULL, NULL, NULL};
    for (int k = 0; k < ports.arity; ++k) in[k] = tensor_of(e, g, n->inputs[ports.inputs[k]]);
    hipdnnSdkTensor* y = tensor_of(e, g, n->outputs[ports.output]);
    const char* yport = info->outputs[ports.output].name;
    char a[200], b[200];
    /* Every operand broadcasts onto the output, NumPy-style. */
    hipdnnSdkTensor shape = *in[0];
    for (int k = 1; k < ports.arity; ++k) {
        hipdnnSdkTensor next = shape;
        if (!broadcast(&shape, in[k], 0, &next.ndim, next.dims)) {
            const char* p0 = info->inputs[ports.inputs[0]].name;
            const char* pk = info->inputs[ports.inputs[k]].name;
            if (k == 1)
                return fail(e, "%s: %s '%s' %s and %s '%s' %s do not broadcast", label, p0,
                            in[0]->name, shape_str(in[0], a, sizeof(a)), pk, in[k]->name,
                            shape_str(in[k], b, sizeof(b)));
            return fail(e, "%s: the other inputs broadcast to %s but %s '%s' %s does not "
                        "broadcast with them", label, shape_str(&shape, a, sizeof(a)), pk,
                        in[k]->name, shape_str(in[k], b, sizeof(b)));
        }
        shape = next;
    }
    int32_t r = shape.ndim;
    int64_t dims[HIPDNN_MAX_DIMS];
    memcpy(dims, shape.dims, sizeof(dims));
    if (y->ndim != 0) {
        /* A given output shape may be larger than the inputs; they broadcast into it. */
        int32_t rr = 0;
        int64_t d2[HIPDNN_MAX_DIMS];
        if (broadcast(y, &shape, 0, &rr, d2) && rr == y->ndim &&
            memcmp(d2, y->dims, (size_t)rr * sizeof(int64_t)) == 0) {
            r = y->ndim;
            memcpy(dims, y->dims, sizeof(dims));
        }
    }
    if (mode == HIPDNN_POINTWISE_GEN_INDEX && n->attrs[HIPDNN_PW_AXIS].i[0] >= r)
        return fail(e, "%s: axis %lld is out of range for the output's rank %d", label,
                    (long long)n->attrs[HIPDNN_PW_AXIS].i[0], (int)r);
    if (n->compute_type == HIPDNN_DATA_NOT_SET) n->compute_type = HIPDNN_DATA_FLOAT;
    /* Comparisons and logic give BOOLEAN; otherwise a virtual output takes the compute
     * type and a graph output its first operand's type (cuDNN frontend's defaults). */
    hipdnnDataType_t dtype = y->is_virtual ? n->compute_type : in[0]->data_type;
    if (hipdnnSdkPointwiseIsLogical(mode)) dtype = HIPDNN_DATA_BOOLEAN;
    const hipdnnSdkTensor* like = NULL; /* the first operand shaped as the output */
    for (int k = 0; k < ports.arity && !like; ++k)
        if (in[k]->ndim == r && memcmp(in[k]->dims, dims, (size_t)r * sizeof(int64_t)) == 0)
            like = in[k];
    bool strides_given = y->strides[0] != 0;
    if (!set_output(e, label, yport, y, r, dims, like == in[0] ? in[0] : NULL, dtype))
        return false;
    /* cuDNN frontend's rule: an output shaped as an input takes that input's strides, so
     * a strided view in gives a like view out; unless they would overlap (an aliasing
     * input).  Virtual tensors stay packed: their layout is the engine's business. */
    if (!strides_given && !y->is_virtual && like &&
        !hipdnnSdkStridesOverlap(like->ndim, like->dims, like->strides))
        memcpy(y->strides, like->strides, (size_t)r * sizeof(int64_t));
    return true;
}
