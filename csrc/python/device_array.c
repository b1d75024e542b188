/* device_array.c — _C.DeviceArray: device memory with a shape, strides (in elements) and a
 * hipdnn data type, allocated through the backend's device runtime (hipdnn.h's device
 * API), so it works with whichever GPU runtime the backend found.
 *
 *   DeviceArray(shape, data_type, strides=None)   allocates (strides default: packed)
 *   a.as_strided(shape, strides, offset=0)        a view of a's memory, bounds-checked
 *   a._copy_from_host(buf) / a._copy_to_host(buf) the bytes a's elements span
 *   a.fill_bytes(value)                            memset of those bytes
 *   __dlpack__ / __dlpack_device__ / __cuda_array_interface__   zero-copy export
 *
 * hipdnn.DeviceArray (hipdnn/device.py) adds NumPy conveniences in Python.  A DeviceArray
 * remembers the stream hipdnn last used it on, so exports can order a consumer after that
 * work instead of synchronizing the device.
 */
#include <stdlib.h>
#include <string.h>

#include "dlpack_abi.h"
#include "module.h"

static const char* space_name(int s) {
    return s == HIPDNN_MEMORY_MANAGED ? "managed" : s == HIPDNN_MEMORY_DEVICE ? "device" : "host";
}

/* The stream hipdnn last used the memory on is kept by the owning array (all access is
 * under the GIL). */
static hd_DeviceArray* root_of(hd_DeviceArray* a) {
    while (a->base) a = (hd_DeviceArray*)a->base;
    return a;
}

void hd_device_array_mark_stream(PyObject* obj, hipdnnStream_t stream) {
    hd_DeviceArray* r = root_of((hd_DeviceArray*)obj);
    r->pending_known = 1;
    r->pending = stream;
}

/* ---- construction ------------------------------------------------------------------ */

static int raise_backend(hd_state* st, hipdnnStatus_t s, const char* ctx) {
    return hd_check(st, s, ctx);
}

/* Reads a sequence of ints into out[]; *n its length. */
static int read_ints(PyObject* seq, int64_t* out, int* n, const char* what) {
    PyObject* fast = PySequence_Fast(seq, what);
    if (!fast) return -1;
    Py_ssize_t len = PySequence_Size(fast);
    if (len < 0 || len > HIPDNN_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "%s: %zd values (at most %d)", what, len, HIPDNN_MAX_DIMS);
        Py_DECREF(fast);
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; ++i) {
        PyObject* item = PySequence_GetItem(fast, i);
        if (!item) {
            Py_DECREF(fast);
            return -1;
        }
        out[i] = PyLong_AsLongLong(item);
        Py_DECREF(item);
        if (out[i] == -1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
    }
    *n = (int)len;
    Py_DECREF(fast);
    return 0;
}

/* Bytes the elements span from the first one: 1 + sum((d - 1) * s) elements; -1 when a
 * dim or stride is negative or the size overflows. */
static int64_t span_bytes(int ndim, const int64_t* shape, const int64_t* strides, int64_t item) {
    int64_t span = 1;
    for (int i = 0; i < ndim; ++i) {
        if (shape[i] < 0 || strides[i] < 0) return -1;
        if (shape[i] == 0) return 0;
        if (strides[i] > (INT64_C(1) << 48) || shape[i] > (INT64_C(1) << 48)) return -1;
        span += (shape[i] - 1) * strides[i];
        if (span > (INT64_C(1) << 48)) return -1;
    }
    return span * item;
}

static int parse_layout(PyObject* shape_obj, PyObject* strides_obj, int dtype, hd_DeviceArray* a) {
    if (hipdnnSdkDataTypeSize(dtype) == 0) {
        PyErr_Format(PyExc_ValueError, "DeviceArray: data type %d is not one of hipdnn's", dtype);
        return -1;
    }
    if (read_ints(shape_obj, a->shape, &a->ndim, "DeviceArray: shape must be a sequence of ints") < 0)
        return -1;
    if (strides_obj && strides_obj != Py_None) {
        int n = 0;
        if (read_ints(strides_obj, a->strides, &n,
                      "DeviceArray: strides must be a sequence of ints (elements)") < 0)
            return -1;
        if (n != a->ndim) {
            PyErr_Format(PyExc_ValueError, "DeviceArray: %d strides for %d dims", n, a->ndim);
            return -1;
        }
    } else {
        int64_t acc = 1;
        for (int i = a->ndim - 1; i >= 0; --i) {
            a->strides[i] = acc;
            acc *= a->shape[i] > 0 ? a->shape[i] : 1;
        }
    }
    a->dtype = dtype;
    a->span_bytes = span_bytes(a->ndim, a->shape, a->strides, hipdnnSdkDataTypeSize(dtype));
    if (a->span_bytes < 0) {
        PyErr_SetString(PyExc_ValueError, "DeviceArray: negative dims or strides, or over 2^48 "
                        "elements");
        return -1;
    }
    return 0;
}

static PyObject* array_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
    static char* kwlist[] = {"shape", "data_type", "strides", NULL};
    PyObject *shape, *strides = NULL;
    int dtype;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "Oi|O:DeviceArray", kwlist, &shape, &dtype,
                                     &strides))
        return NULL;
    hd_state* st = hd_state_of_type(type);
    if (!st) return NULL;
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    hd_DeviceArray* a = (hd_DeviceArray*)alloc(type, 0);
    if (!a) return NULL;
    if (parse_layout(shape, strides, dtype, a) < 0) {
        Py_DECREF(a);
        return NULL;
    }
    hipdnnStatus_t s;
    int device = 0;
    /* at least one byte, so that even an empty array has a device pointer of its own */
    size_t bytes = a->span_bytes > 0 ? (size_t)a->span_bytes : 1;
    Py_BEGIN_ALLOW_THREADS
    s = hipdnnDeviceMalloc_ext(&a->alloc, bytes);
    if (!s) s = hipdnnDeviceGet_ext(&device);
    Py_END_ALLOW_THREADS
    if (raise_backend(st, s, "DeviceArray") < 0) {
        Py_DECREF(a);
        return NULL;
    }
    a->ptr = a->alloc;
    a->device = device;
    a->space = HIPDNN_MEMORY_DEVICE;
    return (PyObject*)a;
}

static int array_traverse(PyObject* op, visitproc visit, void* arg) {
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(((hd_DeviceArray*)op)->base);
    return 0;
}

static int array_clear(PyObject* op) {
    Py_CLEAR(((hd_DeviceArray*)op)->base);
    return 0;
}

static void array_dealloc(PyObject* op) {
    hd_DeviceArray* a = (hd_DeviceArray*)op;
    PyTypeObject* tp = Py_TYPE(op);
    PyObject_GC_UnTrack(op);
    array_clear(op);
    if (a->alloc) {
        /* Freeing waits for work using the memory, as the runtime's free does; a failure
         * here (device lost) can only be logged by the backend, never raised. */
        hipdnnDeviceFree_ext(a->alloc);
        a->alloc = NULL;
    }
    freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    tp_free(op);
    Py_DECREF(tp);
}

/* ---- views and copies ---------------------------------------------------------------- */

static PyObject* array_as_strided(PyObject* op, PyObject* args, PyObject* kwargs) {
    static char* kwlist[] = {"shape", "strides", "offset", NULL};
    hd_DeviceArray* self = (hd_DeviceArray*)op;
    PyObject *shape, *strides;
    long long offset = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|L:as_strided", kwlist, &shape, &strides,
                                     &offset))
        return NULL;
    PyTypeObject* tp = Py_TYPE(op);
    allocfunc alloc = (allocfunc)PyType_GetSlot(tp, Py_tp_alloc);
    hd_DeviceArray* v = (hd_DeviceArray*)alloc(tp, 0);
    if (!v) return NULL;
    if (parse_layout(shape, strides, self->dtype, v) < 0) {
        Py_DECREF(v);
        return NULL;
    }
    int64_t item = hipdnnSdkDataTypeSize(self->dtype);
    /* offset * item + span <= the array's bytes, without forming a product that overflows */
    if (offset < 0 || v->span_bytes > self->span_bytes ||
        offset > (self->span_bytes - v->span_bytes) / item) {
        PyErr_Format(PyExc_ValueError, "as_strided: %lld bytes from element %lld reach past the "
                     "%lld bytes of the array", (long long)v->span_bytes, offset,
                     (long long)self->span_bytes);
        Py_DECREF(v);
        return NULL;
    }
    v->ptr = (char*)self->ptr + offset * item;
    v->device = self->device;
    v->space = self->space;
    v->base = Py_NewRef(op);
    return (PyObject*)v;
}

/* Host <-> device copy of exactly the bytes the elements span. */
static PyObject* copy_host(PyObject* op, PyObject* obj, int to_host) {
    hd_DeviceArray* self = (hd_DeviceArray*)op;
    hd_state* st = hd_state_of(op);
    Py_buffer view;
    int flags = PyBUF_C_CONTIGUOUS | (to_host ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, &view, flags) < 0) return NULL;
    if ((int64_t)view.len != self->span_bytes) {
        PyErr_Format(PyExc_ValueError, "DeviceArray: the host buffer has %zd bytes, the array "
                     "spans %lld", view.len, (long long)self->span_bytes);
        PyBuffer_Release(&view);
        return NULL;
    }
    hipdnnStatus_t s;
    Py_BEGIN_ALLOW_THREADS
    if (to_host) {
        /* hipdnn's work on other streams (which may not wait for the default one) first */
        s = hipdnnDeviceSynchronize_ext();
        if (!s) s = hipdnnDeviceMemcpy_ext(view.buf, self->ptr, (size_t)view.len);
    } else {
        s = hipdnnDeviceSynchronize_ext();
        if (!s) s = hipdnnDeviceMemcpy_ext(self->ptr, view.buf, (size_t)view.len);
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    if (raise_backend(st, s, to_host ? "DeviceArray copy to host" : "DeviceArray copy from host") < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject* array_copy_from_host(PyObject* op, PyObject* obj) { return copy_host(op, obj, 0); }
static PyObject* array_copy_to_host(PyObject* op, PyObject* obj) { return copy_host(op, obj, 1); }

static PyObject* array_fill_bytes(PyObject* op, PyObject* arg) {
    hd_DeviceArray* self = (hd_DeviceArray*)op;
    long value = PyLong_AsLong(arg);
    if (value == -1 && PyErr_Occurred()) return NULL;
    if (value < 0 || value > 255) {
        PyErr_SetString(PyExc_ValueError, "fill_bytes: value must be a byte (0..255)");
        return NULL;
    }
    hipdnnStatus_t s;
    Py_BEGIN_ALLOW_THREADS
    s = hipdnnDeviceSynchronize_ext();
    if (!s) s = hipdnnDeviceMemset_ext(self->ptr, (int)value, (size_t)self->span_bytes);
    Py_END_ALLOW_THREADS
    if (raise_backend(hd_state_of(op), s, "DeviceArray.fill_bytes") < 0) return NULL;
    Py_RETURN_NONE;
}

/* ---- export ---------------------------------------------------------------------------- */

static int dl_device_type(const hd_DeviceArray* a) {
    if (a->space == HIPDNN_MEMORY_MANAGED) return HD_DL_CUDA_MANAGED;
    const char* rt = "none";
    hipdnnGetDeviceRuntime_ext(&rt, NULL);
    return strcmp(rt, "hip") == 0 ? HD_DL_ROCM : HD_DL_CUDA;
}

/* Makes the memory safe to use on `consumer`: work hipdnn left pending on another stream is
 * ordered before it with an event.  Copies and fills are synchronous, so an array hipdnn
 * never executed on has nothing pending; what other libraries enqueue on memory they
 * were given is theirs to order, as between any two CUDA libraries. */
static int ready_on(hd_DeviceArray* a, hipdnnStream_t consumer) {
    const hd_DeviceArray* r = root_of(a);
    hipdnnStream_t pending = r->pending;
    if (!r->pending_known || pending == consumer) return 0;
    hipdnnStatus_t s;
    Py_BEGIN_ALLOW_THREADS
    hipdnnEvent_t ev = NULL;
    s = hipdnnEventCreate_ext(&ev);
    if (!s) s = hipdnnEventRecord_ext(ev, pending);
    if (!s) s = hipdnnStreamWaitEvent_ext(consumer, ev);
    hipdnnEventDestroy_ext(ev);
    Py_END_ALLOW_THREADS
    return raise_backend(hd_state_of((PyObject*)a), s, "DeviceArray: making it ready for a consumer");
}

typedef struct {
    hd_DLManagedTensorVersioned v;   /* used when versioned */
    hd_DLManagedTensor legacy;       /* used otherwise */
    int64_t shape[HIPDNN_MAX_DIMS];
    int64_t strides[HIPDNN_MAX_DIMS];
} dl_export;

static void release_owner(void* ctx) {
    PyGILState_STATE g = PyGILState_Ensure(); /* deleters may run on any thread */
    Py_XDECREF((PyObject*)ctx);
    PyGILState_Release(g);
}

static void deleter_versioned(hd_DLManagedTensorVersioned* m) {
    release_owner(m->manager_ctx);
    free(m); /* v is the first member of dl_export */
}

static void deleter_legacy(hd_DLManagedTensor* m) {
    release_owner(m->manager_ctx);
    free((char*)m - offsetof(dl_export, legacy));
}

static void capsule_versioned(PyObject* cap) {
    if (!PyCapsule_IsValid(cap, "dltensor_versioned")) return; /* consumed: "used_..." */
    hd_DLManagedTensorVersioned* m = PyCapsule_GetPointer(cap, "dltensor_versioned");
    if (m && m->deleter) m->deleter(m);
}

static void capsule_legacy(PyObject* cap) {
    if (!PyCapsule_IsValid(cap, "dltensor")) return;
    hd_DLManagedTensor* m = PyCapsule_GetPointer(cap, "dltensor");
    if (m && m->deleter) m->deleter(m);
}

static int dl_type_of(int dtype, hd_DLDataType* t) {
    t->lanes = 1;
    switch (dtype) {
    case HIPDNN_DATA_FLOAT: t->code = HD_DL_FLOAT; t->bits = 32; return 0;
    case HIPDNN_DATA_HALF: t->code = HD_DL_FLOAT; t->bits = 16; return 0;
    case HIPDNN_DATA_DOUBLE: t->code = HD_DL_FLOAT; t->bits = 64; return 0;
    case HIPDNN_DATA_BFLOAT16: t->code = HD_DL_BFLOAT; t->bits = 16; return 0;
    case HIPDNN_DATA_INT8: t->code = HD_DL_INT; t->bits = 8; return 0;
    case HIPDNN_DATA_INT32: t->code = HD_DL_INT; t->bits = 32; return 0;
    case HIPDNN_DATA_INT64: t->code = HD_DL_INT; t->bits = 64; return 0;
    case HIPDNN_DATA_UINT8: t->code = HD_DL_UINT; t->bits = 8; return 0;
    case HIPDNN_DATA_BOOLEAN: t->code = HD_DL_BOOL; t->bits = 8; return 0;
    default: return -1;
    }
}

static PyObject* array_dlpack(PyObject* op, PyObject* args, PyObject* kwargs) {
    static char* kwlist[] = {"stream", "max_version", "dl_device", "copy", NULL};
    hd_DeviceArray* self = (hd_DeviceArray*)op;
    PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None, *copy = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$OOOO:__dlpack__", kwlist, &stream,
                                     &max_version, &dl_device, &copy))
        return NULL;
    if (copy == Py_True) {
        PyErr_SetString(PyExc_BufferError, "DeviceArray.__dlpack__: copy=True is not supported "
                        "(export shares the memory)");
        return NULL;
    }
    if (dl_device != Py_None) {
        long type = -1, id = -1;
        if (!PyArg_ParseTuple(dl_device, "ll", &type, &id)) return NULL;
        if (type != dl_device_type(self) || id != self->device) {
            PyErr_Format(PyExc_BufferError, "DeviceArray.__dlpack__: the array is on device "
                         "(%d, %d), not (%ld, %ld); copying across devices is not supported",
                         dl_device_type(self), self->device, type, id);
            return NULL;
        }
    }
    hd_DLDataType dt;
    if (dl_type_of(self->dtype, &dt) < 0) {
        PyErr_SetString(PyExc_BufferError, "DeviceArray.__dlpack__: no DLPack type for this data type");
        return NULL;
    }
    /* stream: -1 no synchronization; None or 1 the legacy default stream (CUDA), 0 the
     * default stream (ROCm); else the consumer's stream */
    if (stream != Py_None) {
        long long sv = PyLong_AsLongLong(stream);
        if (sv == -1 && PyErr_Occurred()) return NULL;
        if (sv != -1) {
            hipdnnStream_t cs = sv == 1 || sv == 0 ? NULL : (hipdnnStream_t)(uintptr_t)sv;
            if (ready_on(self, cs) < 0) return NULL;
        }
    } else if (ready_on(self, NULL) < 0) {
        return NULL;
    }
    int versioned = 0;
    if (max_version != Py_None) {
        long major = 0, minor = 0;
        if (!PyArg_ParseTuple(max_version, "ll", &major, &minor)) return NULL;
        versioned = major >= HD_DL_MAJOR;
    }
    dl_export* e = calloc(1, sizeof(*e));
    if (!e) return PyErr_NoMemory();
    memcpy(e->shape, self->shape, sizeof(e->shape));
    memcpy(e->strides, self->strides, sizeof(e->strides));
    hd_DLTensor t = {.data = self->ptr,
                     .device = {dl_device_type(self), self->device},
                     .ndim = self->ndim,
                     .dtype = dt,
                     .shape = e->shape,
                     .strides = e->strides,
                     .byte_offset = 0};
    PyObject* cap;
    if (versioned) {
        e->v.version.major = HD_DL_MAJOR;
        e->v.version.minor = HD_DL_MINOR;
        e->v.manager_ctx = Py_NewRef(op);
        e->v.deleter = deleter_versioned;
        e->v.dl_tensor = t;
        cap = PyCapsule_New(&e->v, "dltensor_versioned", capsule_versioned);
    } else {
        e->legacy.manager_ctx = Py_NewRef(op);
        e->legacy.deleter = deleter_legacy;
        e->legacy.dl_tensor = t;
        cap = PyCapsule_New(&e->legacy, "dltensor", capsule_legacy);
    }
    if (!cap) {
        Py_DECREF(op);
        free(e);
    }
    return cap;
}

static PyObject* array_dlpack_device(PyObject* op, PyObject* unused) {
    (void)unused;
    hd_DeviceArray* self = (hd_DeviceArray*)op;
    return Py_BuildValue("(ii)", dl_device_type(self), self->device);
}

static const char* typestr_of(int dtype) {
    switch (dtype) {
    case HIPDNN_DATA_FLOAT: return "<f4";
    case HIPDNN_DATA_HALF: return "<f2";
    case HIPDNN_DATA_DOUBLE: return "<f8";
    case HIPDNN_DATA_BFLOAT16: return "<u2"; /* no bfloat16 in the protocol: its bits */
    case HIPDNN_DATA_INT8: return "|i1";
    case HIPDNN_DATA_UINT8: return "|u1";
    case HIPDNN_DATA_INT32: return "<i4";
    case HIPDNN_DATA_INT64: return "<i8";
    case HIPDNN_DATA_BOOLEAN: return "|b1";
    default: return NULL;
    }
}

static PyObject* int64_tuple(const int64_t* v, int n, int64_t scale) {
    PyObject* t = PyTuple_New(n);
    if (!t) return NULL;
    for (int i = 0; i < n; ++i) {
        PyObject* x = PyLong_FromLongLong(v[i] * scale);
        if (!x) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SetItem(t, i, x);
    }
    return t;
}

/* Version 3; "stream" is the stream hipdnn last used the memory on (1: the legacy default
 * stream), absent when nothing is known to be pending. */
static PyObject* array_cai(PyObject* op, void* closure) {
    (void)closure;
    hd_DeviceArray* self = (hd_DeviceArray*)op;
    const char* ts = typestr_of(self->dtype);
    if (!ts) {
        PyErr_SetString(PyExc_AttributeError, "no __cuda_array_interface__ type for this data type");
        return NULL;
    }
    int64_t item = hipdnnSdkDataTypeSize(self->dtype);
    PyObject* shape = int64_tuple(self->shape, self->ndim, 1);
    PyObject* strides = int64_tuple(self->strides, self->ndim, item);
    PyObject* d = NULL;
    if (shape && strides)
        d = Py_BuildValue("{s:O,s:s,s:(N,O),s:O,s:i}", "shape", shape, "typestr", ts, "data",
                          PyLong_FromVoidPtr(self->ptr), Py_False, "strides", strides,
                          "version", 3);
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    if (!d) return NULL;
    const hd_DeviceArray* r = root_of(self);
    if (r->pending_known) {
        PyObject* s = PyLong_FromVoidPtr(r->pending ? r->pending : (void*)(uintptr_t)1);
        if (!s || PyDict_SetItemString(d, "stream", s) < 0) {
            Py_XDECREF(s);
            Py_DECREF(d);
            return NULL;
        }
        Py_DECREF(s);
    }
    return d;
}

/* ---- properties -------------------------------------------------------------------- */

static PyObject* get_shape(PyObject* op, void* c) {
    (void)c;
    hd_DeviceArray* a = (hd_DeviceArray*)op;
    return int64_tuple(a->shape, a->ndim, 1);
}
static PyObject* get_strides(PyObject* op, void* c) {
    (void)c;
    hd_DeviceArray* a = (hd_DeviceArray*)op;
    return int64_tuple(a->strides, a->ndim, hipdnnSdkDataTypeSize(a->dtype));
}
static PyObject* get_element_strides(PyObject* op, void* c) {
    (void)c;
    hd_DeviceArray* a = (hd_DeviceArray*)op;
    return int64_tuple(a->strides, a->ndim, 1);
}
static PyObject* get_ndim(PyObject* op, void* c) {
    (void)c;
    return PyLong_FromLong(((hd_DeviceArray*)op)->ndim);
}
static PyObject* get_size(PyObject* op, void* c) {
    (void)c;
    hd_DeviceArray* a = (hd_DeviceArray*)op;
    int64_t n = 1;
    for (int i = 0; i < a->ndim; ++i) n *= a->shape[i];
    return PyLong_FromLongLong(n);
}
static PyObject* get_itemsize(PyObject* op, void* c) {
    (void)c;
    return PyLong_FromSsize_t(hipdnnSdkDataTypeSize(((hd_DeviceArray*)op)->dtype));
}
static PyObject* get_span(PyObject* op, void* c) {
    (void)c;
    return PyLong_FromLongLong(((hd_DeviceArray*)op)->span_bytes);
}
static PyObject* get_data_type(PyObject* op, void* c) {
    (void)c;
    return PyLong_FromLong(((hd_DeviceArray*)op)->dtype);
}
static PyObject* get_data_ptr(PyObject* op, void* c) {
    (void)c;
    return PyLong_FromVoidPtr(((hd_DeviceArray*)op)->ptr);
}
static PyObject* get_device(PyObject* op, void* c) {
    (void)c;
    return PyLong_FromLong(((hd_DeviceArray*)op)->device);
}
static PyObject* get_memory_space(PyObject* op, void* c) {
    (void)c;
    return PyLong_FromLong(((hd_DeviceArray*)op)->space);
}
static PyObject* get_base(PyObject* op, void* c) {
    (void)c;
    PyObject* b = ((hd_DeviceArray*)op)->base;
    return Py_NewRef(b ? b : Py_None);
}

static PyObject* array_repr(PyObject* op) {
    hd_DeviceArray* a = (hd_DeviceArray*)op;
    char dims[160];
    size_t used = (size_t)snprintf(dims, sizeof(dims), "[");
    for (int i = 0; i < a->ndim && used < sizeof(dims); ++i)
        used += (size_t)snprintf(dims + used, sizeof(dims) - used, "%s%lld", i ? ", " : "",
                                 (long long)a->shape[i]);
    if (used < sizeof(dims)) snprintf(dims + used, sizeof(dims) - used, "]");
    return PyUnicode_FromFormat("<hipdnn.DeviceArray %s %s, %s memory of device %d at %p>",
                                hipdnnSdkDataTypeName(a->dtype), dims, space_name(a->space),
                                a->device, a->ptr);
}

static PyMethodDef array_methods[] = {
    {"as_strided", (PyCFunction)(void (*)(void))array_as_strided, METH_VARARGS | METH_KEYWORDS,
     "as_strided($self, shape, strides, offset=0)\n--\n\nA view of this array's memory: strides and "
     "offset in elements; every element must lie within the array's span."},
    {"_copy_from_host", array_copy_from_host, METH_O,
     "Copies a C-contiguous host buffer of exactly nbytes_spanned bytes in."},
    {"_copy_to_host", array_copy_to_host, METH_O,
     "Copies the spanned bytes out into a writable C-contiguous host buffer (after "
     "synchronizing the device)."},
    {"fill_bytes", array_fill_bytes, METH_O,
     "fill_bytes($self, value, /)\n--\n\nSets every byte the elements span to value (0..255)."},
    {"__dlpack__", (PyCFunction)(void (*)(void))array_dlpack, METH_VARARGS | METH_KEYWORDS,
     "__dlpack__($self, *, stream=None, max_version=None, dl_device=None, copy=None)\n--\n\n"
     "A DLPack "
     "capsule sharing this memory; the consumer's stream is ordered after hipdnn's work."},
    {"__dlpack_device__", array_dlpack_device, METH_NOARGS,
     "(device type, device id) as DLPack numbers them."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef array_getset[] = {
    {"shape", get_shape, NULL, "Dims, a tuple.", NULL},
    {"strides", get_strides, NULL, "Strides in bytes, as NumPy gives them.", NULL},
    {"element_strides", get_element_strides, NULL, "Strides in elements, as hipdnn takes them.",
     NULL},
    {"ndim", get_ndim, NULL, "Number of dims.", NULL},
    {"size", get_size, NULL, "Number of elements.", NULL},
    {"itemsize", get_itemsize, NULL, "Bytes per element.", NULL},
    {"nbytes_spanned", get_span, NULL, "Bytes from the first element to past the last.", NULL},
    {"data_type", get_data_type, NULL, "The hipdnn data type (an int).", NULL},
    {"data_ptr", get_data_ptr, NULL, "Address of the first element.", NULL},
    {"device", get_device, NULL, "Device ordinal.", NULL},
    {"memory_space", get_memory_space, NULL, "MEMORY_DEVICE or MEMORY_MANAGED.", NULL},
    {"base", get_base, NULL, "The array a view shares memory with, or None.", NULL},
    {"__cuda_array_interface__", array_cai, NULL,
     "Version 3 of the CUDA Array Interface (bfloat16 as its '<u2' bits).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot array_slots[] = {
    {Py_tp_new, array_new},
    {Py_tp_dealloc, array_dealloc},
    {Py_tp_traverse, array_traverse},
    {Py_tp_clear, array_clear},
    {Py_tp_repr, array_repr},
    {Py_tp_methods, array_methods},
    {Py_tp_getset, array_getset},
    {Py_tp_doc, "DeviceArray(shape, data_type, strides=None)\n--\n\nDevice memory allocated "
                "through hipdnn's device runtime: shape, strides in elements (default packed), "
                "a hipdnn data type."},
    {0, NULL},
};

PyType_Spec hd_device_array_spec = {
    .name = "hipdnn._C.DeviceArray",
    .basicsize = sizeof(hd_DeviceArray),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_BASETYPE,
    .slots = array_slots,
};
