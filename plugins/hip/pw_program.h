/* pw_program.h — a fused pointwise graph as the kernel runs it: the iteration space, the
 * tensors, and a short program over registers.  Plain C data, built by the host code
 * (program.c, C11) and passed by value to the kernel (pointwise.hip), so this header is
 * read by both compilers.
 *
 * Every element of the iteration space runs the whole program in fp32.  A thread takes
 * PW_VEC consecutive elements of one row (the innermost dim) at a time and keeps, per
 * element, an accumulator and PW_SLOTS registers: graph inputs are loaded into slots
 * 0..nin-1 first (one read of each input), then the instructions run:
 *
 *   GET a       acc = slot a (or scalar a)
 *   PUT a       slot a = acc (a value needed again later)
 *   BINARY f a  acc = f(acc, slot a or scalar a), or f(operand, acc) when REVERSED; the
 *               _BWD functions take (x, dy)
 *   UNARY f     acc = f(acc) with the node's parameters p0..p2 (relu: lower clip, upper
 *               clip, lower clip slope; elu alpha, softplus beta, swish beta: p0)
 *   ROUND d     acc = acc rounded to fp16 / bf16 (a tensor of that type, virtual or not)
 *   STORE a     output a = acc (one write of each output); fn is the output's storage
 *               type and flags has PW_CONTIG where it is contiguous, so that a generated
 *               kernel has them as constants
 *   SELECT a    acc = acc != 0 ? operand a : operand fn (binary_select, acc the mask;
 *               PW_SCALAR / PW_SCALAR_B say which operand is a scalar)
 *
 * gen_index reads an input of storage type PW_INDEX: no memory, each value its offset,
 * with stride 1 along the axis and 0 elsewhere, so the value is the coordinate.
 *
 * A chain of nodes keeps its value in the accumulator, so it costs one instruction per
 * node; only values read twice are parked in slots. */
#ifndef HIPDNN_HIP_PW_PROGRAM_H
#define HIPDNN_HIP_PW_PROGRAM_H

#if !defined(__CUDACC_RTC__) && !defined(__HIPCC_RTC__) /* run-time compilers: the prelude */
#include <stdint.h>
#endif

#define PW_MAX_DIMS 8
#define PW_MAX_INPUTS 8
#define PW_MAX_OUTPUTS 4
#define PW_MAX_SCALARS 8
#define PW_MAX_INSTRS 48
#define PW_SLOTS 8   /* values a thread holds at once, inputs included */
#define PW_VEC 8     /* elements per thread and step: one 16-byte load of 16-bit data */
#define PW_BLOCK 128 /* threads per block (small blocks fill an SM better at high register counts) */

/* Storage types: BOOL (one byte, 0 or 1), I32 and I64 (outputs only), INDEX (inputs
 * only: coordinates, above). */
enum { PW_F32 = 0, PW_F16 = 1, PW_BF16 = 2, PW_BOOL = 3, PW_I32 = 4, PW_I64 = 5, PW_INDEX = 6 };

/* Opcodes. */
enum {
    PW_GET = 0, PW_PUT = 1, PW_BINARY = 2, PW_UNARY = 3, PW_ROUND = 4, PW_STORE = 5,
    PW_SELECT = 6
};

/* Functions of BINARY and UNARY (the reference engine's definitions, in fp32). */
enum {
    PW_ADD = 0, PW_SUB, PW_MUL, PW_DIV, PW_MAX, PW_MIN, /* binary */
    PW_IDENTITY, PW_RELU, PW_SIGMOID, PW_TANH, PW_GELU, PW_EXP, /* unary */
    /* binary */
    PW_ADD_SQUARE, PW_MOD, PW_POW, PW_CMP_EQ, PW_CMP_NEQ, PW_CMP_GT, PW_CMP_GE, PW_CMP_LT,
    PW_CMP_LE, PW_AND, PW_OR, PW_RELU_BWD, PW_TANH_BWD, PW_SIGMOID_BWD, PW_ELU_BWD,
    PW_GELU_BWD, PW_SOFTPLUS_BWD, PW_SWISH_BWD, PW_GELU_TANH_BWD,
    /* unary */
    PW_SQRT, PW_RSQRT, PW_RECIPROCAL, PW_ABS, PW_NEG, PW_CEIL, PW_FLOOR, PW_LOG, PW_SIN, PW_COS,
    PW_TAN, PW_ERF, PW_ELU, PW_SOFTPLUS, PW_SWISH, PW_GELU_TANH, PW_NOT
};

/* Instruction flags. */
#define PW_SCALAR 1u   /* operand a is scalar[a], not slot a */
#define PW_REVERSED 2u /* BINARY: acc = f(operand, acc) */
#define PW_CONTIG 4u   /* STORE: the output is contiguous */
#define PW_SCALAR_B 8u /* SELECT: operand fn is scalar[fn], not slot fn */

typedef struct {
    uint8_t op, fn, a, flags;
    float p0, p1, p2; /* the function's parameters (above) */
} pw_instr;

typedef struct {
    void* ptr;                       /* set at enqueue */
    int64_t strides[PW_MAX_DIMS];    /* elements, over the iteration dims; 0: broadcast */
    int32_t dtype;                   /* PW_F32 ... PW_INDEX */
    int32_t contiguous;              /* offset = linear index in the iteration space */
    uint32_t bcast_mask;             /* outputs: dims it is broadcast along (bit d); such an
                                        output is written only where those coordinates are 0 */
    int32_t reserved;
} pw_tensor;

typedef struct {
    int32_t ndim;                 /* >= 1; dims merged wherever every tensor allows */
    int32_t nin, nout, ninstr;
    int32_t aligned;              /* set at enqueue: every contiguous tensor is 16-byte aligned */
    int32_t reserved;
    int64_t dims[PW_MAX_DIMS];    /* the iteration space, outermost first */
    int64_t n;                    /* its element count */
    pw_tensor in[PW_MAX_INPUTS];
    pw_tensor out[PW_MAX_OUTPUTS];
    pw_instr instr[PW_MAX_INSTRS];
    float scalar[PW_MAX_SCALARS]; /* by-value tensors: constants, or read at enqueue */
} pw_program;

#endif
