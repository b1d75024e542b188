/* Which kernel of rw_kernels.h or rs_kernels.h runs a program, and that kernel's name.
 *
 * A kernel is one instantiation of a template, compiled at run time (kernel_cache.c) from
 * its name expression ("rw_norm_packed<4, 2, 32, true, 0>": numeric arguments, as the
 * run-time compiler's name lookup takes them).  Host code chooses it, so that the plan
 * knows its kernel before any launch, and the host emulation (emulate.cpp) runs the
 * instantiation named here, which puts this choice under the emulated tests.
 *
 * An id packs the template and its arguments in 64 bits: comparing two is one instruction,
 * which is all that enqueue does on its common path.  hipe_kernel_enumerate runs the
 * choice over every value of the fields it reads, so lists of all kernels (the tests that
 * compile each one) come from this code and cannot drift from it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip_engine.h"

/* The templates: name, arguments, which of them are bool (a bit each), family. */
typedef struct {
    const char* name;
    int nargs;
    unsigned bools;
    int family;
} kernel_template;

static const kernel_template k_templates[HIPE_K_TEMPLATES] = {
    [HIPE_K_REDUCE_ROWS] = {"rw_reduce_rows", 3, 0, HIPE_FAMILY_ROWWISE},           /* OP, PRE, DT */
    [HIPE_K_REDUCE_COLS] = {"rw_reduce_cols", 2, 0, HIPE_FAMILY_ROWWISE},           /* OP, PRE */
    [HIPE_K_SOFTMAX] = {"rw_softmax", 2, 0, HIPE_FAMILY_ROWWISE},                   /* V, DT */
    [HIPE_K_NORM] = {"rw_norm", 3, 0, HIPE_FAMILY_ROWWISE},                         /* V, S, DT */
    [HIPE_K_NORM_BWD] = {"rw_norm_bwd", 3, 0, HIPE_FAMILY_ROWWISE},                 /* V, DT, S */
    [HIPE_K_NORM_BWD_PACKED] = {"rw_norm_bwd_packed", 5, 1u << 2, HIPE_FAMILY_ROWWISE}, /* V, DT,
                                                                   ONE, PT, PARTS */
    [HIPE_K_NORM_PACKED] = {"rw_norm_packed", 5, 1u << 3, HIPE_FAMILY_ROWWISE}, /* NV, DT, L,
                                                                                   ONE, PT */
    [HIPE_K_RS_FORWARD] = {"rs_forward_kernel", 1, 0, HIPE_FAMILY_RESAMPLE},  /* NSP */
    [HIPE_K_RS_BACKWARD] = {"rs_backward_kernel", 1, 0, HIPE_FAMILY_RESAMPLE}, /* NSP */
};

/* Arguments are kept as value + 1024 in 11 bits each, after 8 bits of template. */
#define ARG_BIAS 1024
#define ARG_BITS 11

static hipe_kernel_id make(int t, int a0, int a1, int a2, int a3, int a4) {
    const int a[HIPE_K_MAX_ARGS] = {a0, a1, a2, a3, a4};
    hipe_kernel_id k = (hipe_kernel_id)t;
    for (int i = 0; i < HIPE_K_MAX_ARGS; ++i)
        k |= (hipe_kernel_id)(a[i] + ARG_BIAS) << (8 + ARG_BITS * i);
    return k;
}

int hipe_kernel_template(hipe_kernel_id k, int* args) {
    const int t = (int)(k & 0xff);
    if (t <= HIPE_K_NONE || t >= HIPE_K_TEMPLATES) return HIPE_K_NONE;
    for (int i = 0; i < HIPE_K_MAX_ARGS; ++i)
        args[i] = (int)((k >> (8 + ARG_BITS * i)) & ((1u << ARG_BITS) - 1)) - ARG_BIAS;
    return t;
}

int hipe_kernel_family(hipe_kernel_id k) {
    int args[HIPE_K_MAX_ARGS];
    const int t = hipe_kernel_template(k, args);
    return t == HIPE_K_NONE ? -1 : k_templates[t].family;
}

bool hipe_kernel_name(hipe_kernel_id k, char* buf, size_t len) {
    int a[HIPE_K_MAX_ARGS];
    const int t = hipe_kernel_template(k, a);
    if (t == HIPE_K_NONE) {
        snprintf(buf, len, "(no kernel)");
        return false;
    }
    const kernel_template* kt = &k_templates[t];
    size_t at = (size_t)snprintf(buf, len, "%s<", kt->name);
    for (int i = 0; i < kt->nargs && at < len; ++i) {
        const char* sep = i ? ", " : "";
        if (kt->bools & (1u << i))
            at += (size_t)snprintf(buf + at, len - at, "%s%s", sep, a[i] ? "true" : "false");
        else
            at += (size_t)snprintf(buf + at, len - at, "%s%d", sep, a[i]);
    }
    if (at < len) at += (size_t)snprintf(buf + at, len - at, ">");
    return at < len;
}

hipe_kernel_id hipe_kernel_parse(const char* name) {
    for (int t = HIPE_K_NONE + 1; t < HIPE_K_TEMPLATES; ++t) {
        const kernel_template* kt = &k_templates[t];
        const size_t n = strlen(kt->name);
        if (strncmp(name, kt->name, n) != 0 || name[n] != '<') continue;
        const char* s = name + n + 1;
        int a[HIPE_K_MAX_ARGS] = {0, 0, 0, 0, 0};
        for (int i = 0; i < kt->nargs; ++i) {
            if (i > 0) {
                if (s[0] != ',' || s[1] != ' ') return 0;
                s += 2;
            }
            if (kt->bools & (1u << i)) {
                if (strncmp(s, "true", 4) == 0) a[i] = 1, s += 4;
                else if (strncmp(s, "false", 5) == 0) a[i] = 0, s += 5;
                else return 0;
            } else {
                char* end = NULL;
                const long v = strtol(s, &end, 10);
                if (end == s || v < -ARG_BIAS || v >= ARG_BIAS) return 0;
                a[i] = (int)v;
                s = end;
            }
        }
        if (strcmp(s, ">") != 0) return 0;
        return make(t, a[0], a[1], a[2], a[3], a[4]);
    }
    return 0;
}

/* ---- the choice: the row-wise kernels ------------------------------------------------ */

/* The storage type of a packed norm's (or 16-bit norm backward's) scale and bias where a
 * kernel knows it at compile time: x's 16-bit type, or fp32 (for both, and bias absent or
 * alike); -1 otherwise, read from the tensors then.  A type read at run time cost each
 * vector a switch and conversions of every type (RESULTS.md, fourteenth run). */
static int param_type(const rw_program* p) {
    if (!(p->flags & RW_F_STORE_Y)) return p->fast_dt; /* statistics only: no scale, no bias */
    const int t = p->scale.dtype;
    if (t != p->fast_dt && t != PW_F32) return -1;
    return (p->flags & RW_F_BIAS) && p->bias.dtype != t ? -1 : t;
}

static bool is_float_type(int dt) { return dt == PW_F32 || dt == PW_F16 || dt == PW_BF16; }

/* Reductions: the general way (any strides, types, partial vectors), or the fast one in
 * each storage type (rw_program.fast_dt); the combining operations with their transforms
 * that a reduction node has. */
static hipe_kernel_id reduce_kernel(const rw_program* p) {
    static const int8_t ops[][2] = {
        {RW_OP_ADD, RW_PRE_NONE}, {RW_OP_ADD, RW_PRE_ABS},     {RW_OP_ADD, RW_PRE_SQUARE},
        {RW_OP_MUL, RW_PRE_NONE}, {RW_OP_MUL, RW_PRE_NONZERO}, {RW_OP_MAX, RW_PRE_NONE},
        {RW_OP_MAX, RW_PRE_ABS},  {RW_OP_MIN, RW_PRE_NONE},
    };
    bool known = false;
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); ++i)
        known = known || (p->op == ops[i][0] && p->pre == ops[i][1]);
    if (!known) return 0;
    if (p->kind == RW_REDUCE_COLS) return make(HIPE_K_REDUCE_COLS, p->op, p->pre, 0, 0, 0);
    return make(HIPE_K_REDUCE_ROWS, p->op, p->pre, is_float_type(p->fast_dt) ? p->fast_dt : -1, 0, 0);
}

/* Packed norm rows: (vectors a thread, threads a row) as rwc_register_geometry
 * (rowwise_program.c) picks them, 16-bit types; the lean variants where the rows are one
 * dim and the parameters' type is known, else the general one. */
static hipe_kernel_id packed_norm_kernel(const rw_program* p) {
    const int dt = p->fast_dt, nv = p->vecs, l = p->group;
    if (dt != PW_F16 && dt != PW_BF16) return 0;
    if (!((nv == 2 && l == 32) || (nv == 4 && (l == 32 || l == 64 || l == 128)))) return 0;
    if (p->nrd == 1) {
        const int pt = param_type(p);
        if (pt == dt || pt == PW_F32) return make(HIPE_K_NORM_PACKED, nv, dt, l, 1, pt);
    }
    return make(HIPE_K_NORM_PACKED, nv, dt, l, 0, -1);
}

/* Norm backward of 16-bit rows, 1 or 2 vectors a thread: without column parts the general
 * variant (held to 64 registers, its addressing costs little there); with them in shared
 * memory where the block's fit, the lean variants as for the norm, else in registers. */
static hipe_kernel_id packed_bwd_kernel(const rw_program* p) {
    const int v = p->vecs, dt = p->fast_dt;
    if (v != 1 && v != 2) return 0;
    if (!(p->flags & RW_F_COL_PARTS)) return make(HIPE_K_NORM_BWD_PACKED, v, dt, 0, -1, NB_PARTS_NONE);
    if (v == 2 && p->group > NB_SHARED_THREADS(2)) /* rows of 4097 to 8192 elements */
        return make(HIPE_K_NORM_BWD_PACKED, v, dt, 0, -1, NB_PARTS_REGS);
    if (p->nrd == 1) {
        const int pt = param_type(p);
        if (pt == dt || pt == PW_F32) return make(HIPE_K_NORM_BWD_PACKED, v, dt, 1, pt, NB_PARTS_SHARED);
    }
    return make(HIPE_K_NORM_BWD_PACKED, v, dt, 0, -1, NB_PARTS_SHARED);
}

/* Softmax and norms the fast way hold their rows in 1, 2 or 4 vectors a thread; the
 * general way in up to 8, or none (rows read again: vecs 0). */
static bool fast_vectors(int v) { return v == 1 || v == 2 || v == 4; }

hipe_kernel_id hipe_rw_kernel(const rw_program* p) {
    const int f = p->fast_dt;
    if (f >= 0 && !is_float_type(f)) return 0;
    switch (p->kind) {
    case RW_REDUCE:
    case RW_REDUCE_COLS: return reduce_kernel(p);
    case RW_SOFTMAX:
        if (f >= 0) return fast_vectors(p->vecs) ? make(HIPE_K_SOFTMAX, p->vecs, f, 0, 0, 0) : 0;
        return fast_vectors(p->vecs) || p->vecs == 0 || p->vecs == 8
                   ? make(HIPE_K_SOFTMAX, p->vecs, -1, 0, 0, 0)
                   : 0;
    case RW_NORM: {
        const bool ep = (p->flags & RW_F_EPILOGUE) != 0;
        if (p->flags & RW_F_PACKED) return packed_norm_kernel(p);
        if (f >= 0) /* the fast way runs no epilogue */
            return fast_vectors(p->vecs) && !ep ? make(HIPE_K_NORM, p->vecs, 0, f, 0, 0) : 0;
        if (ep) /* epilogues: one vector a thread at most */
            return p->vecs <= 1 && p->vecs >= 0 ? make(HIPE_K_NORM, p->vecs, PW_SLOTS, -1, 0, 0) : 0;
        return fast_vectors(p->vecs) || p->vecs == 0 || p->vecs == 8
                   ? make(HIPE_K_NORM, p->vecs, 0, -1, 0, 0)
                   : 0;
    }
    case RW_NORM_BWD: {
        const int ep = (p->flags & RW_F_EPILOGUE) ? PW_SLOTS : 0; /* the general way only */
        if (ep && f >= 0) return 0;
        if (f == PW_F16 || f == PW_BF16) return packed_bwd_kernel(p);
        if (f == PW_F32) /* the fast way holds its rows: 1 or 2 vectors a thread */
            return p->vecs == 1 || p->vecs == 2 ? make(HIPE_K_NORM_BWD, p->vecs, PW_F32, 0, 0, 0) : 0;
        return p->vecs >= 0 && p->vecs <= 2 ? make(HIPE_K_NORM_BWD, p->vecs, -1, ep, 0, 0) : 0;
    }
    default: return 0;
    }
}

/* ---- the choice: pooling --------------------------------------------------------------- */

/* One kernel per spatial rank, so that the window loops unroll and the indices stay in
 * registers. */
hipe_kernel_id hipe_rs_kernel(const rs_program* p) {
    if (p->nsp < 1 || p->nsp > RS_MAX_SP) return 0;
    return make(p->backward ? HIPE_K_RS_BACKWARD : HIPE_K_RS_FORWARD, p->nsp, 0, 0, 0, 0);
}

/* ---- every kernel there is --------------------------------------------------------------- */

typedef struct {
    hipe_kernel_id* out;
    int max, n;
    hipe_kernel_id seen[1024]; /* open addressing; 0: empty */
} kernel_set;

static void add(kernel_set* s, hipe_kernel_id k) {
    if (!k) return;
    size_t h = (size_t)((k * UINT64_C(0x9E3779B97F4A7C15)) >> 54); /* 10 bits */
    while (s->seen[h] && s->seen[h] != k) h = (h + 1) & 1023;
    if (s->seen[h]) return;
    s->seen[h] = k;
    if (s->n < s->max) s->out[s->n] = k;
    s->n++;
}

static int by_value(const void* a, const void* b) {
    const hipe_kernel_id x = *(const hipe_kernel_id*)a, y = *(const hipe_kernel_id*)b;
    return x < y ? -1 : x > y;
}

int hipe_kernel_enumerate(hipe_kernel_id* out, int max) {
    kernel_set* s = calloc(1, sizeof(*s));
    if (!s) return -1;
    s->out = out;
    s->max = max;
    /* every value of each field hipe_rw_kernel reads, and some it never gets */
    static const int vecs[] = {-1, 0, 1, 2, 3, 4, 8, 16};
    static const unsigned bits[] = {RW_F_PACKED, RW_F_EPILOGUE, RW_F_COL_PARTS, RW_F_STORE_Y, RW_F_BIAS};
    const unsigned nflags = 1u << (sizeof(bits) / sizeof(bits[0]));
    rw_program p;
    memset(&p, 0, sizeof(p));
    for (p.kind = -1; p.kind <= RW_NORM_BWD + 1; ++p.kind)
        for (p.fast_dt = -1; p.fast_dt <= PW_BOOL; ++p.fast_dt)
            for (size_t v = 0; v < sizeof(vecs) / sizeof(vecs[0]); ++v)
                for (p.group = 1; p.group <= 2 * RW_MAX_GROUP; p.group *= 2)
                    for (unsigned m = 0; m < nflags; ++m)
                        for (p.nrd = 1; p.nrd <= 2; ++p.nrd)
                            for (p.scale.dtype = PW_F32; p.scale.dtype <= PW_BF16; ++p.scale.dtype)
                                for (p.bias.dtype = PW_F32; p.bias.dtype <= PW_BF16; ++p.bias.dtype)
                                    for (p.op = -1; p.op <= RW_OP_MIN + 1; ++p.op)
                                        for (p.pre = -1; p.pre <= RW_PRE_NONZERO + 1; ++p.pre) {
                                            p.vecs = vecs[v];
                                            p.flags = 0;
                                            for (size_t b = 0; b < sizeof(bits) / sizeof(bits[0]); ++b)
                                                if (m & (1u << b)) p.flags |= bits[b];
                                            add(s, hipe_rw_kernel(&p));
                                        }
    rs_program r;
    memset(&r, 0, sizeof(r));
    for (r.nsp = -1; r.nsp <= RS_MAX_SP + 1; ++r.nsp)
        for (r.backward = 0; r.backward <= 1; ++r.backward) add(s, hipe_rs_kernel(&r));
    const int n = s->n;
    free(s);
    if (n <= max) qsort(out, (size_t)n, sizeof(*out), by_value);
    return n;
}
