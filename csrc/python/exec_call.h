/* exec_call.h — what one run of a compiled variant pack holds (execute.c), shared by the
 * pack's other runs: autotune and graph capture (pack_runs.c). */
#ifndef HIPDNN_PY_EXEC_CALL_H
#define HIPDNN_PY_EXEC_CALL_H

#include "module.h"

/* Tensors up to this count need no heap for the per-call arrays. */
#define STACK_TENSORS 16

/* How a value was taken, so that it is released the same way. */
enum { HELD_NONE = 0, HELD_BUFFER = 1, HELD_VALUE = 2 };

typedef struct {
    int held;
    Py_buffer view; /* HELD_BUFFER */
    hd_value value; /* HELD_VALUE */
} held_array;

/* What one execute call holds: the arrays (new references), how each is held, the
 * pointers and memory spaces handed to the backend, and the workspace.  Per-tensor
 * arrays live in the struct up to STACK_TENSORS; hd_call_release frees it all, whatever
 * step failed. */
typedef struct {
    Py_ssize_t n;
    PyObject** objs;
    held_array* held;
    void** ptrs;
    int64_t* spaces;
    held_array ws_held;
    void* ws_own;    /* host workspace allocated here */
    void* ws_device; /* device workspace allocated here */
    void* ws_ptr;
    hipdnnStream_t stream;
    PyObject* stack_objs[STACK_TENSORS];
    held_array stack_held[STACK_TENSORS];
    void* stack_ptrs[STACK_TENSORS];
    int64_t stack_spaces[STACK_TENSORS];
} exec_call;

/* -1 with MemoryError when the per-tensor arrays cannot be had; c is releasable either way. */
int hd_call_init(exec_call* c, Py_ssize_t n);
void hd_call_release(exec_call* c);
/* The handle's stream, every array's pointer and memory space (checked against the
 * pack), and the workspace, into c; -1 with an exception. */
int hd_call_gather(hd_state* st, const hd_VariantPack* pack, hd_Handle* handle,
                   PyObject* arrays, PyObject* ws_obj, exec_call* c);
/* A finalized VARIANT_PACK descriptor over the call's pointers; NULL with an exception. */
hipdnnBackendDescriptor_t hd_make_variant_pack(hd_state* st, const hd_VariantPack* pack,
                                               void** ptrs, const int64_t* spaces,
                                               void* ws_ptr);

#endif
