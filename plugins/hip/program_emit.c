/* Emitting the accumulator program of a pointwise graph (program.h): a chain of nodes
 * stays in the accumulator; inputs sit in slots; a value read again later is parked in a
 * slot, freed after its last read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program.h"

typedef struct {
    compiler* c;
    pw_program* prog;
    int32_t acc;       /* tensor index the accumulator holds, -1 none */
    bool busy[PW_SLOTS];
    int max_slot;      /* highest slot used + 1 */
} emitter;

static bool emit(emitter* e, int op, int fn, int a, unsigned flags, const float* p) {
    pw_program* prog = e->prog;
    if (prog->ninstr >= PW_MAX_INSTRS)
        return decline(e->c->why, e->c->len, "graph '%s' needs more than %d instructions for "
                       "one fused kernel", e->c->g->name, PW_MAX_INSTRS);
    pw_instr* in = &prog->instr[prog->ninstr++];
    memset(in, 0, sizeof(*in));
    in->op = (uint8_t)op;
    in->fn = (uint8_t)fn;
    in->a = (uint8_t)a;
    in->flags = (uint8_t)flags;
    if (p) {
        in->p0 = p[0];
        in->p1 = p[1];
        in->p2 = p[2];
    }
    return true;
}

static int take_slot(emitter* e) {
    for (int s = 0; s < PW_SLOTS; ++s)
        if (!e->busy[s]) {
            e->busy[s] = true;
            if (s + 1 > e->max_slot) e->max_slot = s + 1;
            return s;
        }
    return -1;
}

/* Where a value is read from: flags and index of an operand that is not the accumulator. */
static bool operand(emitter* e, int32_t t, int* a, unsigned* flags) {
    compiler* c = e->c;
    if (c->kind[t] == KIND_SCALAR) {
        *a = c->index[t];
        *flags = PW_SCALAR;
        return true;
    }
    *a = c->slot[t];
    *flags = 0;
    return *a >= 0;
}

/* Parks the accumulator's value in a slot if it is still needed and held nowhere else. */
static bool spill(emitter* e) {
    compiler* c = e->c;
    int32_t t = e->acc;
    if (t < 0 || c->kind[t] == KIND_SCALAR || c->uses[t] == 0 || c->slot[t] >= 0) return true;
    int s = take_slot(e);
    if (s < 0)
        return decline(c->why, c->len, "graph '%s' needs more than %d values live at once for "
                       "one fused kernel", c->g->name, PW_SLOTS);
    c->slot[t] = s;
    return emit(e, PW_PUT, 0, s, 0, NULL);
}

/* The accumulator takes the value of tensor t. */
static bool get(emitter* e, int32_t t) {
    if (e->acc == t) return true;
    if (!spill(e)) return false;
    int a;
    unsigned flags;
    if (!operand(e, t, &a, &flags))
        return decline(e->c->why, e->c->len, "internal: value of tensor index %d is held nowhere",
                       (int)t);
    e->acc = t;
    return emit(e, PW_GET, 0, a, flags, NULL);
}

/* A read of t is done: frees its slot after its last use. */
static void release(emitter* e, int32_t t) {
    compiler* c = e->c;
    if (c->kind[t] == KIND_SCALAR) return;
    if (--c->uses[t] == 0 && c->slot[t] >= 0) {
        e->busy[c->slot[t]] = false;
        c->slot[t] = -1;
    }
}

static bool finish_node(emitter* e, int32_t y);

/* y = (x - mean) * inv_variance * scale + bias, as four binary steps on the accumulator
 * (the reference engine's order of operations). */
static bool emit_batchnorm(emitter* e, const hipdnnSdkNode* n) {
    compiler* c = e->c;
    static const int fns[4] = {PW_SUB, PW_MUL, PW_MUL, PW_ADD};
    int32_t t[5];
    for (int p = 0; p < 5; ++p) t[p] = hipdnnSdkUidMapFind(&c->map, n->inputs[p]);
    if (!get(e, t[HIPDNN_BN_X])) return false;
    for (int p = 1; p < 5; ++p) /* x read again as a statistic: it must sit in a slot too */
        if (t[p] == t[HIPDNN_BN_X] && !spill(e)) return false;
    for (int p = 1; p < 5; ++p) {
        int a;
        unsigned flags;
        if (!operand(e, t[p], &a, &flags))
            return decline(c->why, c->len, "internal: operand of node '%s' is held nowhere",
                           n->name);
        if (!emit(e, PW_BINARY, fns[p - 1], a, flags, NULL)) return false;
    }
    for (int p = 0; p < 5; ++p) release(e, t[p]);
    return true;
}

/* binary_select: the mask t in the accumulator, x and b from slots or scalars. */
static bool emit_select(emitter* e, const hipdnnSdkNode* n) {
    compiler* c = e->c;
    int32_t x = hipdnnSdkUidMapFind(&c->map, pwc_node_input(n, 0));
    int32_t b = hipdnnSdkUidMapFind(&c->map, pwc_node_input(n, 1));
    int32_t t = hipdnnSdkUidMapFind(&c->map, pwc_node_input(n, 2));
    if (!get(e, t)) return false;
    if ((x == t || b == t) && !spill(e)) return false; /* the mask read as a value too */
    int ax, ab;
    unsigned fx, fb;
    if (!operand(e, x, &ax, &fx) || !operand(e, b, &ab, &fb))
        return decline(c->why, c->len, "internal: operand of node '%s' is held nowhere",
                       n->name);
    if (!emit(e, PW_SELECT, ab, ax, fx | (fb & PW_SCALAR ? PW_SCALAR_B : 0u), NULL)) return false;
    release(e, x);
    release(e, b);
    release(e, t);
    return true;
}

static bool emit_node(emitter* e, const hipdnnSdkNode* n) {
    compiler* c = e->c;
    int32_t y = hipdnnSdkUidMapFind(&c->map, pwc_node_output(n));
    if (n->kind == HIPDNN_OP_BATCHNORM_INFERENCE) {
        if (!emit_batchnorm(e, n)) return false;
        e->acc = y;
        return finish_node(e, y);
    }
    hipdnnPointwiseMode_t mode = hipdnnSdkNodeMode(n);
    int fn = pwc_fn_of(mode);
    int arity = hipdnnSdkPointwiseArity(mode);
    float p[3];
    pwc_params_of(n, p);
    if (pwc_is_gen_index(n)) { /* the coordinates are its input */
        int32_t coords = c->g->num_tensors + (int32_t)(n - c->g->nodes);
        if (!get(e, coords)) return false;
        release(e, coords);
    } else if (mode == HIPDNN_POINTWISE_BINARY_SELECT) {
        if (!emit_select(e, n)) return false;
    } else if (arity == 1) {
        int32_t x = hipdnnSdkUidMapFind(&c->map, pwc_node_input(n, 0));
        if (!get(e, x) || !emit(e, PW_UNARY, fn, 0, 0, p)) return false;
        release(e, x);
    } else {
        /* acc = f(main, other), or f(other, main) reversed when acc already holds the
         * second operand (b, or dy of the _BWD modes) */
        int32_t x = hipdnnSdkUidMapFind(&c->map, pwc_node_input(n, 0));
        int32_t b = hipdnnSdkUidMapFind(&c->map, pwc_node_input(n, 1));
        int32_t main = x, other = b;
        unsigned rev = 0;
        if (e->acc == b && e->acc != x) {
            main = b;
            other = x;
            rev = PW_REVERSED;
        }
        if (!get(e, main)) return false;
        if (other == main && !spill(e)) return false; /* f(t, t): t must also sit in a slot */
        int a;
        unsigned flags;
        if (!operand(e, other, &a, &flags))
            return decline(c->why, c->len, "internal: operand of node '%s' is held nowhere",
                           n->name);
        if (!emit(e, PW_BINARY, fn, a, flags | rev, p)) return false;
        release(e, x);
        release(e, b);
    }
    e->acc = y;
    return finish_node(e, y);
}

/* The node's result y is in the accumulator: rounded if a later node reads it, stored if
 * it is an output. */
static bool finish_node(emitter* e, int32_t y) {
    compiler* c = e->c;
    const hipdnnSdkTensor* yt = &c->g->tensors[y];
    int storage = pwc_storage_of(yt->data_type);
    /* Later nodes read the value as stored; STORE itself rounds what only it reads.  BOOLEAN
     * and integer values are exact 0 / 1 or integers already. */
    bool round = storage == PW_F16 || storage == PW_BF16;
    if (round && c->uses[y] > 0 && !emit(e, PW_ROUND, 0, storage, 0, NULL)) return false;
    if (!yt->is_virtual) {
        const pw_tensor* out = &e->prog->out[c->index[y]];
        if (!emit(e, PW_STORE, storage, c->index[y], out->contiguous ? PW_CONTIG : 0, NULL))
            return false;
    }
    return true;
}

bool pwc_emit_program(compiler* c, hipe_plan* plan) {
    emitter e = {.c = c, .prog = &plan->prog, .acc = -1};
    for (int i = 0; i < plan->prog.nin; ++i) /* inputs sit in slots 0..nin-1 */
        c->slot[c->in_index[i]] = take_slot(&e);
    bool ok = true;
    for (int32_t i = 0; i < c->g->num_nodes && ok; ++i) ok = emit_node(&e, &c->g->nodes[i]);
    plan->slots = e.max_slot <= 2 ? 2 : e.max_slot <= 4 ? 4 : PW_SLOTS;
    return ok;
}
