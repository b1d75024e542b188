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
#include "hipdnn/hipdnn_sdk.h"
#include "log.h"

#define HD_TORCH_DTYPES 10 /* the torch data types of interop.c's k_torch_dtypes */
#define HD_TORCH_NAMES 10  /* the names of interop.c's k_torch_names */

/* Per-module state: exceptions and types live here, not in C globals, so that each
 * (sub)interpreter gets its own. */
typedef struct {
    PyObject* HipdnnError;       /* RuntimeError subclass, base of the others */
    PyObject* InvalidGraphError; /* (HipdnnError, ValueError): BAD_PARAM* statuses */
    PyObject* NotSupportedError; /* HipdnnError: NOT_SUPPORTED */
    PyTypeObject* HandleType;
    PyTypeObject* DescriptorType;
    PyTypeObject* VariantPackType;
    PyTypeObject* DeviceArrayType;
    /* Interned attribute names looked up per call: a name made afresh each time would be
     * kept by CPython's type-attribute cache, one string per lookup, up to its size. */
    PyObject* str_cai;    /* "__cuda_array_interface__" */
    PyObject* str_dlpack; /* "__dlpack__" */
    /* callable(level, message) or NULL.  The queue that feeds it is process-wide (log.c):
     * the backend has one logger per process, so there is one queue, not one per state. */
    PyObject* log_callback;
    /* PyTorch, looked up once it is imported (interop.c, never importing it): the type
     * torch.Tensor, torch.strided, torch._C._cuda_getCurrentRawStream and the data types
     * hipdnn reads, so that a tensor is read from its attributes without __dlpack__. */
    int torch_state; /* 0: not imported yet; 1: ready; -1: not usable (older or other) */
    PyObject* torch_tensor;
    PyObject* torch_strided;
    PyObject* torch_raw_stream;
    PyObject* torch_dtypes[HD_TORCH_DTYPES];
    PyObject* torch_names[HD_TORCH_NAMES]; /* interned, as str_cai */
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
    int ragged;    /* it has a ragged offset: a device array of any shape stands for it */
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

/* _C.DeviceArray (device_array.c): device memory with a shape, strides and a data type;
 * owns its allocation, or is a view that keeps its base alive. */
typedef struct {
    PyObject_HEAD
    void* ptr;          /* element (0, ..., 0) */
    void* alloc;        /* owned allocation, freed at dealloc; NULL in a view */
    PyObject* base;     /* the DeviceArray a view keeps alive; NULL when owning */
    int64_t span_bytes; /* bytes from ptr that the elements touch */
    int ndim;
    int dtype;          /* hipdnnDataType_t */
    int device;         /* device ordinal */
    int space;          /* HIPDNN_MEMORY_DEVICE or HIPDNN_MEMORY_MANAGED */
    int pending_known;  /* owning array: hipdnn used the memory on `pending` last */
    hipdnnStream_t pending;
    int64_t shape[HIPDNN_MAX_DIMS];
    int64_t strides[HIPDNN_MAX_DIMS]; /* elements */
} hd_DeviceArray;

/* A value given for a tensor that is not a buffer-protocol object (interop.c): a
 * DeviceArray, or an object with __dlpack__ or __cuda_array_interface__ (PyTorch, CuPy,
 * Numba...).  What it describes, and what is held until hd_value_release. */
#define HD_DTYPE_UINT16 (-2) /* 16-bit unsigned: accepted as bfloat16 bit patterns */
typedef struct {
    void* ptr;
    int space;        /* hipdnnMemorySpace_t */
    int dtype;        /* hipdnnDataType_t, HD_DTYPE_UINT16, or -1 (none of ours) */
    int device;       /* -1 for host memory */
    int readonly;
    int ndim;
    int64_t itemsize;
    int64_t shape[HIPDNN_MAX_DIMS];
    int64_t strides[HIPDNN_MAX_DIMS]; /* elements */
    const char* kind; /* "DeviceArray", "PyTorch tensor", "DLPack", "__cuda_array_interface__" */
    char type_name[64]; /* "float32", or the producer's own spelling when it is none of ours */
    PyObject* keep;   /* DLPack capsule or PyTorch tensor, held until release */
} hd_value;

hd_state* hd_get_state(PyObject* module);
/* Raises TypeError("<what>, got <type name of obj>"); returns NULL. */
PyObject* hd_type_error(const char* what, PyObject* obj);
hd_state* hd_state_of(PyObject* self); /* from an instance of one of our types */
hd_state* hd_state_of_type(PyTypeObject* type); /* also for Python subclasses of them */

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
PyObject* hd_heuristic_plugins(PyObject* module, PyObject* unused);
PyObject* hd_engines(PyObject* module, PyObject* unused);
PyObject* hd_plan_cache_info(PyObject* module, PyObject* unused);
PyObject* hd_plan_cache_clear(PyObject* module, PyObject* unused);

/* ---- serialize.c ------------------------------------------------------------------ */

PyObject* hd_serialize(PyObject* module, PyObject* graph);
PyObject* hd_deserialize(PyObject* module, PyObject* data);

/* ---- kernels.c ------------------------------------------------------------------------ */

PyObject* hd_plan_kernels(PyObject* module, PyObject* plan);

/* ---- variant_pack.c / execute.c ---------------------------------------------------- */

extern PyType_Spec hd_variant_pack_spec;
/* VariantPack.execute(handle, arrays, workspace=None) */
/* pack.autotune(handle, arrays, workspace, plans, warmup, repeat, budget_ms, store) ->
 * (best index, [(status, runs, median_ms, min_ms, timer, message)]): hipdnnAutotune_ext. */
PyObject* hd_pack_autotune(PyObject* self, PyObject* args, PyObject* kwargs);
PyObject* hd_pack_record_graph(PyObject* self, PyObject* args, PyObject* kwargs);
PyObject* hd_pack_execute(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                          PyObject* kwnames);
/* pack.run_keyed(handle, dict, keys, workspace) -> bool: pygraph.execute's fast path. */
PyObject* hd_pack_run_keyed(PyObject* self, PyObject* const* args, Py_ssize_t nargs);

/* ---- device_array.c / interop.c / device.c ------------------------------------------ */

extern PyType_Spec hd_device_array_spec;
/* Records that hipdnn enqueued work using a DeviceArray's memory on `stream`. */
void hd_device_array_mark_stream(PyObject* array, hipdnnStream_t stream);
/* Whether obj is a DeviceArray, or has __dlpack__ / __cuda_array_interface__. */
int hd_is_device_value(hd_state* st, PyObject* obj);
/* Describes obj (see hd_value); 0, or -1 with an exception naming `what` ("variant pack:
 * tensor 'x' (uid 1)").  stream: where the caller will use the memory: a DLPack producer
 * is asked to make it ready there, and work pending on a __cuda_array_interface__
 * producer's stream is ordered before it. */
int hd_value_acquire(hd_state* st, PyObject* obj, hipdnnStream_t stream, const char* what,
                     hd_value* v);
void hd_value_release(hd_value* v);
/* The bytes a value's elements span from its element 0: 0, or -1 for a type not hipdnn's
 * (another width, several lanes), a negative stride or a span past int64. */
int hd_value_span_bytes(const hd_value* v, int64_t* bytes);
/* _C.describe_array(obj) -> (data_type, shape, strides in elements, memory space, type
 * name, address of element 0, read-only) */
PyObject* hd_describe_array(PyObject* module, PyObject* obj);
/* _C.copy_value(obj, buffer, to_host): a device value's spanned bytes to or from host. */
PyObject* hd_copy_value(PyObject* module, PyObject* args);
/* Module functions over the backend's device runtime (device.c). */
PyObject* hd_device_runtime(PyObject* module, PyObject* unused);
PyObject* hd_device_synchronize(PyObject* module, PyObject* unused);
PyObject* hd_stream_synchronize(PyObject* module, PyObject* stream);
PyObject* hd_stream_is_capturing(PyObject* module, PyObject* stream);
PyObject* hd_pointer_memory_space(PyObject* module, PyObject* ptr);
PyObject* hd_pointer_extent(PyObject* module, PyObject* args);
/* A stream given as an int, None, or an object with .cuda_stream (PyTorch), .ptr (CuPy)
 * or __cuda_stream__(); 0 with *out set, or -1 with a TypeError. */
int hd_stream_from_object(PyObject* obj, hipdnnStream_t* out);

/* ---- dtype.c: hipdnn data types <-> buffer formats ------------------------------- */

/* Whether a buffer with this struct format and item size holds elements of `dtype`.
 * A bfloat16 tensor takes uint16 bit patterns ('H'). */
int hd_format_matches(const char* format, Py_ssize_t itemsize, int dtype);
/* NumPy-style name of a buffer's element type ("float32", "uint16", "format 'Zd'"),
 * written into buf. */
void hd_format_name(const char* format, Py_ssize_t itemsize, char* buf, size_t len);

#endif /* HIPDNN_PY_MODULE_H */
