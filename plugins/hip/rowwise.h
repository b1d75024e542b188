/* rowwise.h — the row-wise program compiler (rowwise_program.c) as its op families' files
 * see it: the checks every row-wise node makes, the row space a node's tensors are laid
 * out in, the register geometry of a row, and binding a stage's pointers.
 *
 *   rowwise_program.c    what every family shares (below), the grid, the fast way
 *   rowwise_reduction.c  reductions, cut into parts where the rows are few
 *   rowwise_softmax.c    the softmax pattern
 *   rowwise_norm.c       norms forward (with a pointwise epilogue) and backward */
#ifndef HIPDNN_HIP_ROWWISE_H
#define HIPDNN_HIP_ROWWISE_H

#include <stddef.h>

#include "staged.h"

/* The kernel's storage type (PW_F32, PW_F16, PW_BF16) of a data type, -1 for others; its
 * bytes. */
int rwc_storage_of(hipdnnDataType_t t);
int rwc_storage_size(int s);
/* The tensor of uid, NULL for HIPDNN_NO_TENSOR or one not in g. */
const hipdnnSdkTensor* rwc_find(const hipdnnSdkGraph* g, int64_t uid);
/* A node's compute type: fp32 compute (unset, fp32, or 16-bit types computed in fp32). */
bool rwc_compute_ok(const hipdnnSdkNode* n, const char* label, char* why, size_t len);
/* A tensor the kernel reads or writes: stored as fp32 / fp16 / bf16, sane dims and
 * strides, and (outputs) no two elements at one address. */
bool rwc_tensor_ok(const hipdnnSdkTensor* t, const char* label, const char* port, bool output,
                   char* why, size_t len);

/* ---- the row space -------------------------------------------------------------------- */

#define SPACE_MAX 24 /* x, y, statistics, scale, bias, and an epilogue's tensors */

typedef struct {
    int R;                              /* x's rank */
    int64_t dims[HIPDNN_MAX_DIMS];      /* x's dims */
    bool col[HIPDNN_MAX_DIMS];          /* a reduced (normalized) axis */
    int n;
    int64_t st[SPACE_MAX][HIPDNN_MAX_DIMS]; /* strides of each tensor over x's axes */
    pw_tensor* dst[SPACE_MAX];
} space;

/* The row space of x, whose axes `col` are reduced (normalized). */
void rwc_space_init(space* s, const hipdnnSdkTensor* x, const bool* col);
/* Adds tensor t (NumPy broadcasting against x, right-aligned) whose row-space strides go
 * to *dst. */
bool rwc_space_add(space* s, const hipdnnSdkTensor* t, pw_tensor* dst, const char* label,
                   const char* port, char* why, size_t len);
/* Orders the axes as x lies in memory (largest stride first), merges neighbours that every
 * tensor walks as one, and writes the dims and each tensor's strides into p. */
bool rwc_space_lay_out(space* s, rw_program* p, const char* label, char* why, size_t len);

/* ---- geometry ----------------------------------------------------------------------------- */

static inline int64_t pow2_at_least(int64_t n) {
    int64_t p = 1;
    while (p < n) p <<= 1;
    return p;
}

static inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Softmax and norms: a row in the registers of its group when it fits, G threads of V
 * vectors each; longer rows read again from memory (vecs 0). */
void rwc_register_geometry(rw_program* p, int esize, bool epilogue, bool softmax);

/* ---- binding ------------------------------------------------------------------------------ */

/* Tensor uid's pointer (scalar_dtype -1), or a runtime scalar's value of that
 * hipdnnDataType_t, goes to byte `offset` of the stage's program. */
void rwc_bind(hipe_stage* st, int64_t uid, size_t offset, int32_t scalar_dtype);
#define PTR(field) offsetof(rw_program, field.ptr)

#endif /* HIPDNN_HIP_ROWWISE_H */
