/* program.h — the pointwise program compiler (program.c) as its files see it: the state of
 * one compile and the steps each file takes.
 *
 *   program_check.c  each node's mode, ports and storage; the checks of nodes and tensors
 *   program_space.c  the iteration space: broadcast, dim order, merging
 *   program_emit.c   the accumulator program
 *   program.c        numbering the tensors, the steps in order, the fast way */
#ifndef HIPDNN_HIP_PROGRAM_H
#define HIPDNN_HIP_PROGRAM_H

#include "hip_engine.h"

/* ---- per-graph working state -------------------------------------------------------- */

enum { KIND_UNUSED = 0, KIND_INPUT, KIND_SCALAR, KIND_NODE };

typedef struct {
    const hipdnnSdkGraph* g;
    hipdnnSdkUidMap map;
    int32_t* kind;     /* per tensor index: KIND_* */
    int32_t* index;    /* per tensor index: input / scalar / output number (-1 none) */
    int32_t* uses;     /* per tensor index: reads by nodes not yet emitted */
    int32_t* slot;     /* per tensor index: slot holding the value, -1 none */
    bool* written;
    hipdnnSdkTensor* coords; /* per node: gen_index's coordinate input (a pseudo tensor
                                whose index is num_tensors + node) */
    int32_t in_index[PW_MAX_INPUTS]; /* tensor (or pseudo tensor) index of input i */
    int32_t R;         /* rank of the iteration space before merging */
    int64_t S[PW_MAX_DIMS];
    char* why;
    size_t len;
    bool in_order; /* the space's dims as they are: neither reordered nor merged */
} compiler;

/* ---- nodes and checks (program_check.c) --------------------------------------------- */

/* The kernel's function (PW_*) of a pointwise mode; 0 for binary_select (its own opcode),
 * -1 for a mode the kernel lacks. */
int pwc_fn_of(hipdnnPointwiseMode_t m);
/* The function's one parameter (elu's alpha, softplus's and swish's beta) or relu's three. */
void pwc_params_of(const hipdnnSdkNode* n, float* p);
/* The kernel's storage type (PW_*) of a data type, -1 for none; its bytes (0: no memory). */
int pwc_storage_of(hipdnnDataType_t t);
int pwc_storage_bytes(int storage);
bool pwc_is_gen_index(const hipdnnSdkNode* n);
/* How many tensors a node reads (0 for what this engine does not run); input k and the
 * output (pointwise modes name their own ports). */
int pwc_node_inputs(const hipdnnSdkNode* n);
int64_t pwc_node_input(const hipdnnSdkNode* n, int k);
int64_t pwc_node_output(const hipdnnSdkNode* n);
/* Every node: its op, mode, compute type, ports and tensors; classifies the tensors. */
bool pwc_check_nodes(compiler* c);

/* ---- the iteration space (program_space.c) ------------------------------------------- */

void pwc_format_dims(const int64_t* d, int n, char* buf, size_t len);
/* S: the broadcast of every data tensor's dims, right-aligned. */
bool pwc_find_space(compiler* c);
/* Whether two elements of output t would share an address. */
bool pwc_output_overlaps(const compiler* c, const hipdnnSdkTensor* t);
/* The first full-size output, else input, of the program's tensors ts (nin inputs first,
 * nt in all): its memory order becomes the iteration order. */
int pwc_reference_tensor(const compiler* c, const hipdnnSdkTensor* const* ts, int nin, int nt);
/* Orders and merges the dims of S for every program tensor (inputs then outputs, in
 * prog->in / prog->out order, given as their graph tensors `ts`). */
void pwc_lay_out(const compiler* c, const hipdnnSdkTensor* const* ts, int nt, int ref,
                 pw_program* prog);

/* ---- the program (program_emit.c) --------------------------------------------------- */

/* Emits every node into plan->prog (its tensors numbered and laid out) and sets
 * plan->slots; false with the reason. */
bool pwc_emit_program(compiler* c, hipe_plan* plan);

#endif /* HIPDNN_HIP_PROGRAM_H */
