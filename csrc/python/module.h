/* module.h — what the files of hipdnn._C share: the module state, the object types
 * and the helpers that turn backend statuses into Python exceptions.
 *
 * The extension uses only the limited C API (Py_LIMITED_API 0x030B0000) and talks to the
 * core only through hipdnn.h.
 */
#ifndef HIPDNN_PY_MODULE_H
#define HIPDNN_PY_MODULE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdio.h>

#include "hipdnn/hipdnn.h"
#include "log.h"

/* Per-module state: exceptions and types live here, not in C globals, so that each
 * (sub)interpreter gets its own. */
typedef struct {
    PyObject* HipdnnError;       /* RuntimeError subclass, base of the others */
    PyObject* InvalidGraphError; /* (HipdnnError, ValueError): BAD_PARAM* statuses */
    PyObject* NotSupportedError; /* HipdnnError: NOT_SUPPORTED */
    PyTypeObject* HandleType;
    PyTypeObject* DescriptorType;
    PyTypeObject* VariantPackType;
    /* callable(level, message) or NULL.  The queue that feeds it is process-wide (log.c):
     * the backend has one logger per process, so there is one queue, not one per state. */
    PyObject* log_callback;
} hd_state;

typedef struct {
    PyObject_HEAD
    hipdnnHandle_t handle;
    PyThread_type_lock lock;  /* serialises execute() and destroy(): use hd_handle_lock */
    unsigned long lock_epoch; /* the fork count of the process when `lock` was made */
} hd_Handle;

/* The handle's lock, made anew if the process forked since it was made (a thread of the
 * parent may have held it; that thread does not exist in the child).  With the GIL held;
 * NULL with MemoryError set. */
PyThread_type_lock hd_handle_lock(hd_Handle* handle);

/* 0 if the handle was not destroyed; else -1 with "<what>: the handle has been destroyed". */
int hd_handle_live(PyObject* handle, const char* what);

typedef struct {
    PyObject_HEAD
    hipdnnBackendDescriptor_t desc;
    int type;        /* hipdnnBackendDescriptorType_t, or -1 when not known */
    int finalized;
    PyObject* keep;  /* list of Python objects the descriptor points at (handles) */
} hd_Descriptor;

/* One tensor of a compiled variant pack: what its array must look like. */
typedef struct {
    int64_t uid;
    char* name; /* PyMem-owned, NUL-terminated; "" when the tensor has no name */
    int dtype;  /* hipdnnDataType_t */
    int ndim;
    int is_output; /* the graph writes it: its array must be writable */
    int64_t dims[HIPDNN_MAX_DIMS];
    int64_t strides[HIPDNN_MAX_DIMS]; /* in elements */
} hd_pack_tensor;

/* _C.VariantPack: what executing one plan needs, read from the plan once (variant_pack.c)
 * and immutable after; execute.c checks arrays against it. */
typedef struct {
    PyObject_HEAD
    PyObject* plan;          /* the EXECUTION_PLAN hd_Descriptor it was compiled from */
    Py_ssize_t n;            /* tensors that take an array (not virtual, not by value) */
    hd_pack_tensor* tensors; /* n of them, in pack order; freed only at dealloc */
    int64_t* uids;           /* n, the same order: VARIANT_PACK_UNIQUE_IDS as is */
    int64_t workspace_size;  /* bytes, >= 0 */
    int memory_space;        /* hipdnnMemorySpace_t of the plan's engine */
} hd_VariantPack;

hd_state* hd_get_state(PyObject* module);
/* Raises TypeError("<what>, got <type name of obj>"); returns NULL. */
PyObject* hd_type_error(const char* what, PyObject* obj);
hd_state* hd_state_of(PyObject* self); /* from an instance of one of our types */

/* ---- errors.c ------------------------------------------------------------------- */

/* Delivers queued backend log messages to this module's callback (log.c); never raises. */
void hd_log_flush(hd_state* st);
/* Raises the exception for a failing status with the backend's last-error message,
 * prefixed by `context` when not NULL.  Always returns NULL. */
PyObject* hd_raise_status(hd_state* st, hipdnnStatus_t status, const char* context);
/* Delivers queued log messages, then raises if status is not SUCCESS.  Returns 0 on
 * success, -1 with an exception set. */
int hd_check(hd_state* st, hipdnnStatus_t status, const char* context);
PyObject* hd_status_name(PyObject* module, PyObject* arg);

/* ---- handle.c / descriptor.c ----------------------------------------------------- */

extern PyType_Spec hd_handle_spec;
extern PyType_Spec hd_descriptor_spec;
/* Wraps a descriptor the caller owns; on failure destroys it and returns NULL. */
PyObject* hd_descriptor_wrap(hd_state* st, hipdnnBackendDescriptor_t desc, int type,
                             int finalized);
const char* hd_descriptor_type_name(int type);

/* ---- plugins.c ------------------------------------------------------------------ */

PyObject* hd_set_engine_plugin_paths(PyObject* module, PyObject* args, PyObject* kwargs);
PyObject* hd_loaded_engine_plugin_paths(PyObject* module, PyObject* unused);
PyObject* hd_skipped_engine_plugins(PyObject* module, PyObject* unused);
PyObject* hd_engines(PyObject* module, PyObject* unused);

/* ---- serialize.c ------------------------------------------------------------------ */

PyObject* hd_serialize(PyObject* module, PyObject* graph);
PyObject* hd_deserialize(PyObject* module, PyObject* data);

/* ---- variant_pack.c / execute.c ---------------------------------------------------- */

extern PyType_Spec hd_variant_pack_spec;
/* VariantPack.execute(handle, arrays, workspace=None) */
PyObject* hd_pack_execute(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                          PyObject* kwnames);

/* ---- dtype.c: hipdnn data types <-> buffer formats ------------------------------- */

/* "float32", "float16", ...; "unknown" otherwise. */
const char* hd_dtype_name(int dtype);
/* Bytes per element; 0 if unknown. */
Py_ssize_t hd_dtype_size(int dtype);
/* Whether a buffer with this struct format and item size holds elements of `dtype`.
 * A bfloat16 tensor takes uint16 bit patterns ('H'). */
int hd_format_matches(const char* format, Py_ssize_t itemsize, int dtype);
/* NumPy-style name of a buffer's element type ("float32", "uint16", "format 'Zd'"),
 * written into buf. */
void hd_format_name(const char* format, Py_ssize_t itemsize, char* buf, size_t len);

#endif /* HIPDNN_PY_MODULE_H */
