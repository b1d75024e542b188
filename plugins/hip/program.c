/* Compiling a graph of pointwise nodes into one pw_program (pw_program.h), and with it the
 * engine's support check: whatever compiles, runs.
 *
 * Steps: check every node and tensor (program_check.c: the bytes are re-checked even
 * though the backend validated them, since the kernel indexes with them); find the
 * iteration space (program_space.c: the NumPy broadcast of every tensor); number the
 * program's tensors (here); order the space's dims as the first full-size output lies in
 * memory and merge dims that every tensor walks contiguously (program_space.c); then emit
 * the accumulator program (program_emit.c), parking in slots only values that are read
 * again later. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program.h"

static void compiler_free(compiler* c) {
    hipdnnSdkUidMapFree(&c->map);
    free(c->kind);
    free(c->index);
    free(c->uses);
    free(c->slot);
    free(c->written);
    free(c->coords);
}

/* Numbers the inputs, scalars and outputs, and records what enqueue must fill in. */
static bool number_tensors(compiler* c, hipe_plan* plan, const hipdnnSdkTensor** ts) {
    const hipdnnSdkGraph* g = c->g;
    pw_program* prog = &plan->prog;
    int nin = 0, nout = 0, nsc = 0;
    const hipdnnSdkTensor* outs[PW_MAX_OUTPUTS];
    for (int32_t i = 0; i < g->num_nodes; ++i) { /* in order of first use */
        const hipdnnSdkNode* n = &g->nodes[i];
        int nports = pwc_node_inputs(n);
        if (pwc_is_gen_index(n)) { /* its coordinates: an input without memory */
            if (nin == PW_MAX_INPUTS)
                return decline(c->why, c->len, "graph '%s' has more than %d input tensors "
                               "for one fused kernel", g->name, PW_MAX_INPUTS);
            int32_t t = g->num_tensors + i;
            plan->in_uid[nin] = HIPDNN_NO_TENSOR;
            prog->in[nin].dtype = PW_INDEX;
            ts[nin] = &c->coords[i];
            c->in_index[nin] = t;
            c->index[t] = nin++;
        }
        for (int p = 0; p <= nports; ++p) { /* the inputs, then the output */
            int64_t uid = p < nports ? pwc_node_input(n, p) : pwc_node_output(n);
            int32_t t = uid == HIPDNN_NO_TENSOR ? -1 : hipdnnSdkUidMapFind(&c->map, uid);
            if (t < 0 || c->index[t] >= 0) continue;
            const hipdnnSdkTensor* tt = &g->tensors[t];
            if (c->kind[t] == KIND_INPUT) {
                if (nin == PW_MAX_INPUTS)
                    return decline(c->why, c->len, "graph '%s' has more than %d input tensors "
                                   "for one fused kernel", g->name, PW_MAX_INPUTS);
                plan->in_uid[nin] = tt->uid;
                prog->in[nin].dtype = pwc_storage_of(tt->data_type);
                ts[nin] = tt;
                c->in_index[nin] = t;
                c->index[t] = nin++;
            } else if (c->kind[t] == KIND_SCALAR) {
                if (nsc == PW_MAX_SCALARS)
                    return decline(c->why, c->len, "graph '%s' has more than %d pass-by-value "
                                   "tensors for one fused kernel", g->name, PW_MAX_SCALARS);
                plan->scalar_uid[nsc] = tt->has_value ? -1 : tt->uid;
                plan->scalar_dtype[nsc] = tt->data_type;
                prog->scalar[nsc] =
                    tt->has_value ? (float)hipdnnSdkLoadAsDouble(tt->value, tt->data_type, 0) : 0.0f;
                c->index[t] = nsc++;
            } else if (c->kind[t] == KIND_NODE && !tt->is_virtual) {
                if (nout == PW_MAX_OUTPUTS)
                    return decline(c->why, c->len, "graph '%s' has more than %d output tensors "
                                   "for one fused kernel", g->name, PW_MAX_OUTPUTS);
                if (pwc_output_overlaps(c, tt)) {
                    char sd[160];
                    pwc_format_dims(tt->strides, tt->ndim, sd, sizeof(sd));
                    return decline(c->why, c->len, "output '%s' (uid %lld): strides %s make "
                                   "elements overlap", tt->name, (long long)tt->uid, sd);
                }
                plan->out_uid[nout] = tt->uid;
                prog->out[nout].dtype = pwc_storage_of(tt->data_type);
                outs[nout] = tt;
                c->index[t] = nout++;
            }
        }
    }
    if (nin == 0)
        return decline(c->why, c->len, "graph '%s' reads no tensor from memory and makes no "
                       "indices", g->name);
    if (nout == 0)
        return decline(c->why, c->len, "graph '%s' writes no tensor (mark an output)", g->name);
    for (int o = 0; o < nout; ++o) ts[nin + o] = outs[o];
    prog->nin = nin;
    prog->nout = nout;
    plan->nscalars = nsc;
    return true;
}

/* The fast way needs every tensor contiguous (element e at offset e everywhere).  A thread
 * then loads U vectors of PW_VEC elements of every input before computing any: U = 4 up
 * to 256 bytes in flight a thread (two fp32 inputs), fewer vectors for more inputs, so
 * that the raw data takes at most 64 registers.  Measured on an H100 for two inputs:
 * fp32 ran at 94-99.6% of copy bandwidth with U = 4 (and with U = 1) but 87-90% with
 * U = 2; bf16 at 99-100% with any of them. */
static void choose_fast_way(hipe_plan* plan) {
    const pw_program* p = &plan->prog;
    int bytes = 0;
    plan->fast = 1;
    for (int i = 0; i < p->nin; ++i) {
        plan->fast &= p->in[i].contiguous != 0;
        bytes += PW_VEC * pwc_storage_bytes(p->in[i].dtype);
    }
    for (int i = 0; i < p->nout; ++i) plan->fast &= p->out[i].contiguous != 0;
    plan->fast_u = bytes <= 64 ? 4 : bytes <= 128 ? 2 : 1;
}

static bool compile_pointwise(const hipdnnSdkGraph* g, hipe_plan* plan, bool in_order, char* why,
                              size_t len) {
    memset(plan, 0, sizeof(*plan));
    if (!g || g->num_nodes < 1 || !g->nodes)
        return decline(why, len, "graph '%s' has no operations", g && g->name ? g->name : "");
    compiler c = {.g = g, .why = why, .len = len, .in_order = in_order};
    /* per tensor, then per node (gen_index's coordinates: index num_tensors + node) */
    size_t n = (size_t)(g->num_tensors > 0 ? g->num_tensors : 0) + (size_t)g->num_nodes;
    c.kind = calloc(n, sizeof(int32_t));
    c.index = malloc(n * sizeof(int32_t));
    c.uses = calloc(n, sizeof(int32_t));
    c.slot = malloc(n * sizeof(int32_t));
    c.written = calloc(n, sizeof(bool));
    c.coords = calloc((size_t)g->num_nodes, sizeof(hipdnnSdkTensor));
    bool ok = c.kind && c.index && c.uses && c.slot && c.written && c.coords &&
              hipdnnSdkUidMapInit(&c.map, g);
    if (!ok) {
        compiler_free(&c);
        return decline(why, len, "out of memory while compiling graph '%s'", g->name);
    }
    for (size_t i = 0; i < n; ++i) c.index[i] = c.slot[i] = -1;
    for (int32_t i = 0; i < g->num_tensors && ok; ++i) {
        int32_t other = hipdnnSdkUidMapInsert(&c.map, i);
        if (other >= 0)
            ok = decline(why, len, "tensors '%s' and '%s' share uid %lld", g->tensors[other].name,
                         g->tensors[i].name, (long long)g->tensors[i].uid);
    }
    const hipdnnSdkTensor* ts[PW_MAX_INPUTS + PW_MAX_OUTPUTS];
    ok = ok && pwc_check_nodes(&c) && pwc_find_space(&c) && number_tensors(&c, plan, ts);
    if (ok) {
        int nt = plan->prog.nin + plan->prog.nout;
        pwc_lay_out(&c, ts, nt, pwc_reference_tensor(&c, ts, plan->prog.nin, nt), &plan->prog);
        ok = pwc_emit_program(&c, plan);
        choose_fast_way(plan);
        const pw_program* p = &plan->prog;
        int64_t last = p->dims[p->ndim - 1];
        if (ok && p->ndim > 1 && (p->n / last) * ((last + PW_VEC - 1) / PW_VEC) >= (INT64_C(1) << 31))
            ok = decline(why, len, "graph '%s': a broadcast or strided iteration space of %lld "
                         "elements in %d dims needs over 2^31 steps (dense ones have no limit)",
                         g->name, (long long)p->n, p->ndim);
    }
    compiler_free(&c);
    return ok;
}

bool hipe_compile_pointwise(const hipdnnSdkGraph* g, hipe_plan* plan, char* why, size_t len) {
    return compile_pointwise(g, plan, false, why, len);
}

bool hipe_compile_pointwise_in_order(const hipdnnSdkGraph* g, hipe_plan* plan, char* why,
                                     size_t len) {
    return compile_pointwise(g, plan, true, why, len);
}

void hipe_describe(const hipe_plan* plan, char* buf, size_t len) {
    static const char* const ops[] = {"get", "put", "binary", "unary", "round", "store",
                                      "select"};
    const pw_program* p = &plan->prog;
    char dims[160];
    pwc_format_dims(p->dims, p->ndim, dims, sizeof(dims));
    size_t used = (size_t)snprintf(buf, len, "%d in, %d out, %d scalars, space %s, %d slots%s:",
                                   p->nin, p->nout, plan->nscalars, dims, plan->slots,
                                   plan->fast ? ", contiguous" : "");
    for (int i = 0; i < p->ninstr && used < len; ++i)
        used += (size_t)snprintf(buf + used, len - used, " %s%s%d",
                                 ops[p->instr[i].op < 7 ? p->instr[i].op : 0],
                                 p->instr[i].flags & PW_SCALAR ? " s" : " ", p->instr[i].a);
}
