/* Per-call scratch of the kernels (conv, matmul, pointwise programs, batchnorm): one
 * block per call, cut into 64-byte aligned pieces.  The block is the tail of the plan's
 * workspace, sized at plan time from each kernel's own formula (ref_conv_scratch_doubles,
 * ref_matmul_scratch_doubles, ref_fused_scratch_doubles, ...); only a caller that gives
 * no room, or too little, gets a malloc'd block. */
#include <stdlib.h>

#include "reference_cpu.h"

#define ALIGN_DOUBLES 8 /* 64 bytes: a cache line, and a whole AVX-512 vector */

int64_t ref_scratch_piece(int64_t n) {
    return (n + ALIGN_DOUBLES - 1) / ALIGN_DOUBLES * ALIGN_DOUBLES;
}

bool ref_scratch_open(ref_scratch* s, int64_t total, const ref_region* room,
                      const hipdnnSdkNode* node) {
    s->block = NULL;
    double* base = NULL;
    if (room && room->data && room->doubles >= total + ALIGN_DOUBLES) {
        base = room->data; /* the plan's workspace: no allocation while executing */
    } else {
        /* Room to round the start up to the alignment. */
        s->block = ref_alloc_doubles(total + ALIGN_DOUBLES, node);
        if (!s->block) return false;
        base = s->block;
    }
    uintptr_t start = ((uintptr_t)base + ALIGN_DOUBLES * sizeof(double) - 1) &
                      ~(uintptr_t)(ALIGN_DOUBLES * sizeof(double) - 1);
    s->next = (double*)start;
    return true;
}

double* ref_scratch_take(ref_scratch* s, int64_t n) {
    double* p = s->next;
    s->next += ref_scratch_piece(n);
    return p;
}

void ref_scratch_close(ref_scratch* s) {
    free(s->block);
    s->block = s->next = NULL;
}
