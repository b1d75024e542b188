/* ops_norm.c — InstanceNormalization as hipdnn's norm_forward (INSTANCE_NORM: per sample
 * and channel, over the spatial dims), its check, shape rule and lowering (op_table.c).
 * Scale and B are [C], given to hipdnn as [1, C, 1, ...]. */
#include <stdio.h>

#include "lowering.h"

#define WHY(...) (snprintf(why, why_len, __VA_ARGS__), false)

bool ep_check_instancenorm(const ep_model* m, const ep_node* n, char* why, size_t why_len) {
    static const char* const names[] = {"input", "scale", "B"};
    if (n->n_in != 3) return WHY("%d inputs", n->n_in);
    for (int k = 0; k < 3; ++k)
        if (!ep_float_tensor(m, n->in[k], names[k], why, why_len)) return false;
    const ep_value* x = &m->values[n->in[0]];
    if (x->rank < 3) return WHY("input has rank %d; InstanceNormalization needs 3 or more", x->rank);
    for (int k = 1; k < 3; ++k) {
        const ep_value* p = &m->values[n->in[k]];
        if (p->rank != 1) return WHY("%s has rank %d, not 1", names[k], p->rank);
        if (p->dims[0] > 0 && x->dims[1] > 0 && p->dims[0] != x->dims[1])
            return WHY("%s has %lld values for %lld channels", names[k], (long long)p->dims[0],
                       (long long)x->dims[1]);
    }
    return true;
}

bool ep_shape_instancenorm(const ep_model* m, const ep_node* n, const ep_shape* const* in,
                           ep_shape* out, char* why, size_t why_len) {
    (void)m, (void)n;
    if (in[0]->rank < 3) return WHY("input has rank %d; InstanceNormalization needs 3 or more",
                                    in[0]->rank);
    for (int k = 1; k < 3; ++k)
        if (!in[k] || in[k]->rank != 1 || in[k]->dims[0] != in[0]->dims[1])
            return WHY("input %d is not [C] = [%lld]", k, (long long)in[0]->dims[1]);
    out[0] = *in[0];
    return true;
}

bool ep_emit_instancenorm(lw* w, const ep_node* n, int arg) {
    (void)arg;
    const ep_shape* xs = &w->vals[n->in[0]].onnx;
    ep_shape ps = {xs->rank, {0}};
    for (int i = 0; i < xs->rank; ++i) ps.dims[i] = i == 1 ? xs->dims[1] : 1;
    hipdnnBackendDescriptor_t x = lw_get_onnx(w, n->in[0]), scale = lw_get(w, n->in[1], &ps),
                              bias = lw_get(w, n->in[2], &ps);
    hipdnnBackendDescriptor_t op =
        lw_norm_fwd_op(w, HIPDNN_INSTANCE_NORM, HIPDNN_NORM_FWD_INFERENCE, x, scale, bias,
                       ep_attr_float(n, "epsilon", 1e-5f), xs->rank);
    return op &&
           lw_set_t(w, op, HIPDNN_ATTR_OPERATION_NORM_FWD_YDESC, lw_make_out(w, n->out[0], xs)) &&
           lw_op_done(w, op);
}
