/* The softmax pattern (reduction max, sub, exp, reduction add, div over the same rows)
 * compiled into one row-wise program (rowwise.h): one kernel, one pass over each row where
 * it fits in registers. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rowwise.h"

/* How a virtual tensor between the softmax's steps rounds its value. */
static bool rounding(const hipdnnSdkTensor* t, int32_t* r, const char* label, char* why, size_t len) {
    switch (t->data_type) {
    case HIPDNN_DATA_FLOAT: *r = -1; return true;
    case HIPDNN_DATA_HALF: *r = PW_F16; return true;
    case HIPDNN_DATA_BFLOAT16: *r = PW_BF16; return true;
    default:
        return decline(why, len, "%s: '%s' (uid %lld): data type %s not supported (float32, "
                       "float16, bfloat16)", label, t->name, (long long)t->uid,
                       hipdnnSdkDataTypeName(t->data_type));
    }
}

int hipe_rw_softmax(const hipdnnSdkGraph* g, const hipdnnSdkNode* const* nodes, hipe_stage* st,
                    char* why, size_t len) {
    char label[200];
    hipdnnSdkFormat(label, sizeof(label), "softmax of nodes '%s' .. '%s'", nodes[0]->name,
                    nodes[4]->name);
    const hipdnnSdkTensor* x = rwc_find(g, nodes[0]->inputs[HIPDNN_RED_X]);
    const hipdnnSdkTensor* y = rwc_find(g, nodes[4]->outputs[HIPDNN_PW_Y]);
    const hipdnnSdkTensor* steps[4] = {rwc_find(g, nodes[0]->outputs[0]), rwc_find(g, nodes[1]->outputs[0]),
                                       rwc_find(g, nodes[2]->outputs[0]), rwc_find(g, nodes[3]->outputs[0])};
    if (!x || !y || !steps[0] || !steps[1] || !steps[2] || !steps[3])
        return decline(why, len, "%s: a tensor is not in the graph", label);
    for (int i = 0; i < 5; ++i)
        if (!rwc_compute_ok(nodes[i], label, why, len)) return 0;
    if (!rwc_tensor_ok(x, label, "x", false, why, len) || !rwc_tensor_ok(y, label, "y", true, why, len))
        return 0;
    memset(st, 0, sizeof(*st));
    st->kind = HIPE_STAGE_ROWWISE;
    rw_program* p = &st->rw;
    for (int i = 0; i < 4; ++i)
        if (!rounding(steps[i], &p->round[i], label, why, len)) return 0;
    bool col[HIPDNN_MAX_DIMS];
    for (int i = 0; i < x->ndim; ++i) col[i] = steps[0]->dims[i] == 1 && x->dims[i] != 1;
    space s;
    rwc_space_init(&s, x, col);
    if (!rwc_space_add(&s, x, &p->x, label, "x", why, len) ||
        !rwc_space_add(&s, y, &p->y, label, "y", why, len) || !rwc_space_lay_out(&s, p, label, why, len))
        return 0;
    p->kind = RW_SOFTMAX;
    p->flags = RW_F_STORE_Y;
    p->splits = 1;
    rwc_register_geometry(p, rwc_storage_size(p->x.dtype), false, true);
    rwc_bind(st, x->uid, PTR(x), -1);
    rwc_bind(st, y->uid, PTR(y), -1);
    if (p->vecs)
        hipdnnSdkFormat(st->what, sizeof(st->what), "softmax '%s': %lld rows of %lld, each in the "
                        "registers of %d threads (%d vectors a thread): one pass", nodes[4]->name,
                        (long long)p->rows, (long long)p->cols, p->group, p->vecs);
    else
        hipdnnSdkFormat(st->what, sizeof(st->what), "softmax '%s': %lld rows of %lld, %d threads "
                        "a row, read three times (too long for registers)", nodes[4]->name,
                        (long long)p->rows, (long long)p->cols, p->group);
    return 1;
}
