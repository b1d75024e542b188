/* interop.c — device memory from other libraries, zero-copy: what a value given for a
 * tensor describes when it is not a buffer-protocol object.
 *
 *   hipdnn.DeviceArray             read directly (no Python call)
 *   torch.Tensor on a GPU          read from its attributes (DLPack's promise kept with an
 *                                  event): torch's __dlpack__ is Python costing ~19 us
 *   __dlpack__ (PyTorch, CuPy...)  asked for a capsule on the stream we will use, so the
 *                                  producer orders its pending work before ours; the
 *                                  capsule is held, unconsumed, until the call is done
 *   __cuda_array_interface__       read from its dict (version 2 or 3); work on the stream
 *                                  it names is ordered before ours with an event
 *
 * Each gives a pointer, a memory space, a data type, shape and strides in elements.
 */
#include <string.h>

#include "dlpack_abi.h"
#include "module.h"

int hd_is_device_value(hd_state* st, PyObject* obj) {
    if (PyObject_TypeCheck(obj, st->DeviceArrayType)) return 1;
    return PyObject_HasAttr(obj, st->str_dlpack) || PyObject_HasAttr(obj, st->str_cai);
}

void hd_value_release(hd_value* v) {
    /* Not renamed "used_...": the producer's capsule destructor calls its deleter. */
    Py_CLEAR(v->keep);
}

static void set_type_name(hd_value* v) {
    if (v->dtype == HD_DTYPE_UINT16) snprintf(v->type_name, sizeof(v->type_name), "uint16");
    else if (v->dtype >= 0)
        snprintf(v->type_name, sizeof(v->type_name), "%s", hipdnnSdkDataTypeName(v->dtype));
}

static int check_rank(const char* what, const char* kind, long long ndim) {
    if (ndim < 0 || ndim > HIPDNN_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "%s: the %s array has %lld dims (at most %d)", what, kind,
                     ndim, HIPDNN_MAX_DIMS);
        return -1;
    }
    return 0;
}

static void packed_strides(hd_value* v) {
    int64_t acc = 1;
    for (int i = v->ndim - 1; i >= 0; --i) {
        v->strides[i] = acc;
        acc *= v->shape[i];
    }
}

/* ---- DeviceArray ------------------------------------------------------------------- */

static void from_device_array(const hd_DeviceArray* a, hd_value* v) {
    v->kind = "DeviceArray";
    v->ptr = a->ptr;
    v->space = a->space;
    v->dtype = a->dtype;
    v->device = a->device;
    v->readonly = 0;
    v->ndim = a->ndim;
    v->itemsize = hipdnnSdkDataTypeSize(a->dtype);
    memcpy(v->shape, a->shape, sizeof(v->shape));
    memcpy(v->strides, a->strides, sizeof(v->strides));
    set_type_name(v);
}

/* ---- DLPack ------------------------------------------------------------------------ */

static int dl_dtype(hd_DLDataType t) {
    if (t.lanes != 1) return -1;
    switch (t.code) {
    case HD_DL_FLOAT:
        return t.bits == 32 ? HIPDNN_DATA_FLOAT : t.bits == 16 ? HIPDNN_DATA_HALF
               : t.bits == 64 ? HIPDNN_DATA_DOUBLE : -1;
    case HD_DL_BFLOAT: return t.bits == 16 ? HIPDNN_DATA_BFLOAT16 : -1;
    case HD_DL_INT:
        return t.bits == 8 ? HIPDNN_DATA_INT8 : t.bits == 32 ? HIPDNN_DATA_INT32
               : t.bits == 64 ? HIPDNN_DATA_INT64 : -1;
    case HD_DL_UINT: return t.bits == 8 ? HIPDNN_DATA_UINT8 : t.bits == 16 ? HD_DTYPE_UINT16 : -1;
    case HD_DL_BOOL: return t.bits == 8 ? HIPDNN_DATA_BOOLEAN : -1;
    case HD_DL_FLOAT8_E4M3FN: return t.bits == 8 ? HIPDNN_DATA_FP8_E4M3 : -1;
    case HD_DL_FLOAT8_E5M2: return t.bits == 8 ? HIPDNN_DATA_FP8_E5M2 : -1;
    default: return -1;
    }
}

static int dl_space(int32_t device_type) {
    switch (device_type) {
    case HD_DL_CPU:
    case HD_DL_CUDA_HOST:
    case HD_DL_ROCM_HOST: return HIPDNN_MEMORY_HOST;
    case HD_DL_CUDA:
    case HD_DL_ROCM: return HIPDNN_MEMORY_DEVICE;
    case HD_DL_CUDA_MANAGED: return HIPDNN_MEMORY_MANAGED;
    default: return -1;
    }
}

/* The stream argument of __dlpack__: our stream as the protocol spells it (CUDA: 1 is the
 * legacy default stream, 0 is not allowed; ROCm: 0 is the default stream), or None for
 * host memory. */
static PyObject* dlpack_stream_arg(PyObject* obj, hipdnnStream_t stream) {
    PyObject* dev = PyObject_CallMethod(obj, "__dlpack_device__", NULL);
    if (!dev) {
        PyErr_Clear(); /* optional in old producers: assume device memory */
    } else {
        long type = PyTuple_Check(dev) && PyTuple_Size(dev) == 2
                        ? PyLong_AsLong(PyTuple_GetItem(dev, 0)) : -1;
        Py_DECREF(dev);
        if (type == -1 && PyErr_Occurred()) PyErr_Clear();
        if (dl_space((int32_t)type) == HIPDNN_MEMORY_HOST) Py_RETURN_NONE;
    }
    if (stream) return PyLong_FromVoidPtr(stream);
    const char* rt = "none";
    hipdnnGetDeviceRuntime_ext(&rt, NULL);
    return PyLong_FromLong(strcmp(rt, "hip") == 0 ? 0 : 1);
}

static PyObject* call_dlpack(PyObject* obj, PyObject* stream_arg) {
    PyObject* method = PyObject_GetAttrString(obj, "__dlpack__");
    if (!method) return NULL;
    PyObject* args = PyTuple_New(0);
    PyObject* kw = PyDict_New();
    PyObject* ver = Py_BuildValue("(ii)", HD_DL_MAJOR, HD_DL_MINOR);
    PyObject* cap = NULL;
    if (args && kw && ver && PyDict_SetItemString(kw, "stream", stream_arg) == 0 &&
        PyDict_SetItemString(kw, "max_version", ver) == 0) {
        cap = PyObject_Call(method, args, kw);
        if (!cap && PyErr_ExceptionMatches(PyExc_TypeError)) {
            /* a producer older than DLPack 1.0 knows no max_version */
            PyErr_Clear();
            if (PyDict_DelItemString(kw, "max_version") == 0) cap = PyObject_Call(method, args, kw);
        }
    }
    Py_XDECREF(ver);
    Py_XDECREF(kw);
    Py_XDECREF(args);
    Py_DECREF(method);
    return cap;
}

/* obj, or obj.detach() where obj requires grad (torch refuses to export those; hipdnn reads
 * and writes the data as cuDNN does, outside autograd).  A new reference, NULL on error. */
static PyObject* detached(PyObject* obj) {
    PyObject* rg = PyObject_HasAttrString(obj, "detach")
                       ? PyObject_GetAttrString(obj, "requires_grad") : NULL;
    int needs = rg ? PyObject_IsTrue(rg) : 0;
    Py_XDECREF(rg);
    PyErr_Clear();
    if (needs == 1) return PyObject_CallMethod(obj, "detach", NULL);
    Py_INCREF(obj);
    return obj;
}

static int from_dlpack(PyObject* obj, hipdnnStream_t stream, const char* what, hd_value* v) {
    v->kind = "DLPack";
    PyObject* stream_arg = dlpack_stream_arg(obj, stream);
    if (!stream_arg) return -1;
    PyObject* src = detached(obj);
    PyObject* cap = src ? call_dlpack(src, stream_arg) : NULL;
    Py_XDECREF(src);
    Py_DECREF(stream_arg);
    if (!cap) {
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        PyErr_Format(PyExc_ValueError, "%s: __dlpack__ failed (%S)", what, ev ? ev : Py_None);
        Py_XDECREF(et);
        Py_XDECREF(ev);
        Py_XDECREF(tb);
        return -1;
    }
    v->keep = cap;
    const hd_DLTensor* t = NULL;
    if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
        const hd_DLManagedTensorVersioned* m = PyCapsule_GetPointer(cap, "dltensor_versioned");
        if (!m) return -1;
        if (m->version.major != HD_DL_MAJOR) {
            PyErr_Format(PyExc_ValueError, "%s: DLPack %u.%u; hipdnn reads %d.x", what,
                         m->version.major, m->version.minor, HD_DL_MAJOR);
            return -1;
        }
        v->readonly = (m->flags & HD_DL_FLAG_READ_ONLY) != 0;
        t = &m->dl_tensor;
    } else if (PyCapsule_IsValid(cap, "dltensor")) {
        const hd_DLManagedTensor* m = PyCapsule_GetPointer(cap, "dltensor");
        if (!m) return -1;
        t = &m->dl_tensor;
    } else {
        PyErr_Format(PyExc_ValueError, "%s: __dlpack__ returned no unconsumed DLPack capsule",
                     what);
        return -1;
    }
    if (check_rank(what, "DLPack", t->ndim) < 0) return -1;
    v->space = dl_space(t->device.device_type);
    if (v->space < 0) {
        PyErr_Format(PyExc_ValueError, "%s: DLPack device type %d is neither host nor a CUDA / "
                     "ROCm device", what, (int)t->device.device_type);
        return -1;
    }
    v->device = v->space == HIPDNN_MEMORY_HOST ? -1 : t->device.device_id;
    v->dtype = dl_dtype(t->dtype);
    v->itemsize = (t->dtype.bits * (int64_t)t->dtype.lanes + 7) / 8;
    if (v->dtype == -1)
        snprintf(v->type_name, sizeof(v->type_name), "DLPack type (code %u, %u bits, %u lanes)",
                 t->dtype.code, t->dtype.bits, t->dtype.lanes);
    else
        set_type_name(v);
    v->ptr = (char*)t->data + t->byte_offset;
    v->ndim = t->ndim;
    for (int i = 0; i < v->ndim; ++i) v->shape[i] = t->shape[i];
    if (t->strides)
        for (int i = 0; i < v->ndim; ++i) v->strides[i] = t->strides[i];
    else
        packed_strides(v);
    return 0;
}

static int order_after(PyObject* stream_obj, hipdnnStream_t ours, const char* what);

/* ---- PyTorch tensors -------------------------------------------------------------------
 * torch.Tensor.__dlpack__ is Python that costs about 19 us a call (torch 2.11, on the H100
 * machine: most of an execute's host time with two tensors).  An exact torch.Tensor on a
 * CUDA / ROCm device, strided and with no conjugate or negative bit (what torch's own
 * export accepts of a detached tensor) is read from its attributes instead, and DLPack's promise,
 * that the tensor's pending work on torch's current stream comes before ours, is kept as
 * __cuda_array_interface__ producers' is: an event when the streams differ.  Anything else
 * (host tensors, subclasses...) goes the protocol way, so what is accepted and refused, and
 * every message, stays DLPack's.  A tensor that requires grad is read as its data, as
 * cuDNN's frontend reads data_ptr(): hipdnn is not part of autograd. */

static const struct { const char* name; int dtype; int size; } k_torch_dtypes[HD_TORCH_DTYPES] = {
    {"float32", HIPDNN_DATA_FLOAT, 4}, {"float16", HIPDNN_DATA_HALF, 2},
    {"bfloat16", HIPDNN_DATA_BFLOAT16, 2}, {"float64", HIPDNN_DATA_DOUBLE, 8},
    {"int8", HIPDNN_DATA_INT8, 1}, {"uint8", HIPDNN_DATA_UINT8, 1},
    {"int32", HIPDNN_DATA_INT32, 4}, {"int64", HIPDNN_DATA_INT64, 8},
    {"bool", HIPDNN_DATA_BOOLEAN, 1}, {"uint16", HD_DTYPE_UINT16, 2},
};

/* The attribute names read per tensor, interned once (fresh names each call would be kept
 * by CPython's type-attribute cache). */
enum { TN_TORCH, TN_IS_CUDA, TN_IS_CONJ, TN_IS_NEG, TN_LAYOUT, TN_DTYPE,
       TN_DATA_PTR, TN_GET_DEVICE, TN_SHAPE, TN_STRIDE };
static const char* const k_torch_names[HD_TORCH_NAMES] = {
    "torch", "is_cuda", "is_conj", "is_neg", "layout", "dtype", "data_ptr",
    "get_device", "shape", "stride"};

/* Whether the torch objects are cached: looked up once torch is in sys.modules (hipdnn never
 * imports it); a torch without them (too old: no uint16 or no raw-stream query) is never
 * read this way. */
static int torch_ready(hd_state* st) {
    if (st->torch_state) return st->torch_state > 0;
    for (int i = 0; i < HD_TORCH_NAMES; ++i) {
        if (!st->torch_names[i]) st->torch_names[i] = PyUnicode_InternFromString(k_torch_names[i]);
        if (!st->torch_names[i]) {
            PyErr_Clear();
            return 0;
        }
    }
    PyObject* torch = PyImport_GetModule(st->torch_names[TN_TORCH]);
    if (!torch) {
        PyErr_Clear();
        return 0; /* not imported (yet): asked again next time */
    }
    PyObject* c = PyObject_GetAttrString(torch, "_C");
    st->torch_tensor = PyObject_GetAttrString(torch, "Tensor");
    st->torch_strided = PyObject_GetAttrString(torch, "strided");
    st->torch_raw_stream = c ? PyObject_GetAttrString(c, "_cuda_getCurrentRawStream") : NULL;
    int ok = st->torch_tensor && PyType_Check(st->torch_tensor) && st->torch_strided &&
             st->torch_raw_stream;
    for (int i = 0; i < HD_TORCH_DTYPES && ok; ++i)
        ok = (st->torch_dtypes[i] = PyObject_GetAttrString(torch, k_torch_dtypes[i].name)) != NULL;
    Py_XDECREF(c);
    Py_DECREF(torch);
    PyErr_Clear();
    st->torch_state = ok ? 1 : -1;
    if (!ok) {
        Py_CLEAR(st->torch_tensor);
        Py_CLEAR(st->torch_strided);
        Py_CLEAR(st->torch_raw_stream);
        for (int i = 0; i < HD_TORCH_DTYPES; ++i) Py_CLEAR(st->torch_dtypes[i]);
    }
    return ok;
}

/* obj.name, or obj.name() when call. */
static PyObject* torch_get(PyObject* obj, PyObject* name, int call) {
    return call ? PyObject_CallMethodObjArgs(obj, name, NULL) : PyObject_GetAttr(obj, name);
}

/* obj.name as a truth value, or obj.name() when call: 1, 0, or -1 (an error, cleared). */
static int torch_flag(PyObject* obj, PyObject* name, int call) {
    PyObject* r = torch_get(obj, name, call);
    int t = r ? PyObject_IsTrue(r) : -1;
    Py_XDECREF(r);
    if (t < 0) PyErr_Clear();
    return t;
}

/* obj.name(), or obj.name when !call, as an int64; -1 with the error cleared when it fails. */
static int torch_int(PyObject* obj, PyObject* name, int call, long long* out) {
    PyObject* r = torch_get(obj, name, call);
    *out = r ? PyLong_AsLongLong(r) : -1;
    Py_XDECREF(r);
    if (PyErr_Occurred()) {
        PyErr_Clear();
        return -1;
    }
    return 0;
}

/* An int tuple (torch.Size is one) of n <= HIPDNN_MAX_DIMS into out; -1 when it is not. */
static int torch_tuple(PyObject* obj, PyObject* name, int call, int64_t* out, int* n) {
    PyObject* r = torch_get(obj, name, call);
    int rc = r && PyTuple_Check(r) && PyTuple_Size(r) <= HIPDNN_MAX_DIMS ? 0 : -1;
    if (rc == 0) {
        *n = (int)PyTuple_Size(r);
        for (int i = 0; i < *n && rc == 0; ++i) {
            out[i] = PyLong_AsLongLong(PyTuple_GetItem(r, i));
            if (out[i] == -1 && PyErr_Occurred()) rc = -1;
        }
    }
    Py_XDECREF(r);
    if (rc < 0) PyErr_Clear();
    return rc;
}

/* 1: v describes obj; 0: obj is not such a tensor, nothing set (take the protocol way);
 * -1: an error is set. */
static int from_torch(hd_state* st, PyObject* obj, hipdnnStream_t stream, const char* what,
                      hd_value* v) {
    if (!torch_ready(st) || (PyObject*)Py_TYPE(obj) != st->torch_tensor) return 0;
    PyObject* const* n = st->torch_names;
    if (torch_flag(obj, n[TN_IS_CUDA], 0) != 1 || torch_flag(obj, n[TN_IS_CONJ], 1) != 0 || torch_flag(obj, n[TN_IS_NEG], 1) != 0)
        return 0;
    PyObject* layout = PyObject_GetAttr(obj, n[TN_LAYOUT]);
    PyObject* dtype = layout ? PyObject_GetAttr(obj, n[TN_DTYPE]) : NULL;
    int k = -1;
    for (int i = 0; dtype && i < HD_TORCH_DTYPES && k < 0; ++i)
        if (dtype == st->torch_dtypes[i]) k = i;
    const int strided = layout == st->torch_strided;
    Py_XDECREF(layout);
    Py_XDECREF(dtype);
    PyErr_Clear();
    long long ptr = 0, device = -1;
    int64_t shape[HIPDNN_MAX_DIMS], strides[HIPDNN_MAX_DIMS];
    int ndim = 0, nstrides = -1;
    if (!strided || k < 0 || torch_int(obj, n[TN_DATA_PTR], 1, &ptr) < 0 ||
        torch_int(obj, n[TN_GET_DEVICE], 1, &device) < 0 || device < 0 ||
        torch_tuple(obj, n[TN_SHAPE], 0, shape, &ndim) < 0 ||
        torch_tuple(obj, n[TN_STRIDE], 1, strides, &nstrides) < 0 || nstrides != ndim)
        return 0;
    /* DLPack's promise: torch's current stream on that device comes before ours. */
    PyObject* theirs = PyObject_CallFunction(st->torch_raw_stream, "L", device);
    if (!theirs) return -1;
    int rc = order_after(theirs, stream, what);
    Py_DECREF(theirs);
    if (rc < 0) return -1;
    v->kind = "PyTorch tensor";
    v->ptr = (void*)(uintptr_t)ptr;
    v->space = HIPDNN_MEMORY_DEVICE;
    v->device = (int)device;
    v->dtype = k_torch_dtypes[k].dtype;
    v->itemsize = k_torch_dtypes[k].size;
    v->readonly = 0;
    v->ndim = ndim;
    memcpy(v->shape, shape, sizeof(shape[0]) * (size_t)ndim);
    memcpy(v->strides, strides, sizeof(strides[0]) * (size_t)ndim);
    set_type_name(v);
    Py_INCREF(obj);
    v->keep = obj;
    return 1;
}

/* ---- __cuda_array_interface__ ----------------------------------------------------------- */

static int cai_dtype(const char* s, int64_t* itemsize) {
    static const struct { const char* s; int dtype; int size; } k[] = {
        {"f4", HIPDNN_DATA_FLOAT, 4}, {"f2", HIPDNN_DATA_HALF, 2}, {"f8", HIPDNN_DATA_DOUBLE, 8},
        {"i1", HIPDNN_DATA_INT8, 1},  {"u1", HIPDNN_DATA_UINT8, 1}, {"i4", HIPDNN_DATA_INT32, 4},
        {"i8", HIPDNN_DATA_INT64, 8}, {"b1", HIPDNN_DATA_BOOLEAN, 1}, {"u2", HD_DTYPE_UINT16, 2},
    };
    *itemsize = 0;
    if (strlen(s) < 3 || (s[0] != '<' && s[0] != '|' && s[0] != '=')) return -1;
    for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); ++i)
        if (strcmp(s + 1, k[i].s) == 0) {
            *itemsize = k[i].size;
            return k[i].dtype;
        }
    return -1;
}

/* An int64 tuple (shape or strides) into out[n]. */
static int int_tuple(PyObject* t, int64_t* out, int n, const char* what, const char* field) {
    if (!PyTuple_Check(t) || PyTuple_Size(t) != n) {
        PyErr_Format(PyExc_ValueError, "%s: __cuda_array_interface__['%s'] is not a tuple of %d "
                     "ints", what, field, n);
        return -1;
    }
    for (int i = 0; i < n; ++i) {
        out[i] = PyLong_AsLongLong(PyTuple_GetItem(t, i));
        if (out[i] == -1 && PyErr_Occurred()) return -1;
    }
    return 0;
}

/* Whether stream `theirs` is capturing a graph and `ours` is not (issue 25: torch's
 * current stream inside `with torch.cuda.graph(...)`, a handle on a stream of its own).
 * The work `theirs` holds then is recorded, not run, so there is nothing to wait for; and
 * waiting on an event recorded there would fork `ours` into that capture (CUDA), which
 * would record hipdnn's run into it on a branch never joined back: the capture would end
 * with CUDA_ERROR_STREAM_CAPTURE_UNJOINED.  Asked of `ours` only when `theirs` captures. */
static int captures_alone(hipdnnStream_t theirs, hipdnnStream_t ours) {
    int t = 0, o = 0;
    if (!theirs || hipdnnStreamIsCapturing_ext(theirs, &t) != HIPDNN_STATUS_SUCCESS || !t)
        return 0;
    return hipdnnStreamIsCapturing_ext(ours, &o) == HIPDNN_STATUS_SUCCESS && !o;
}

/* Work on the producer's stream comes before ours: an event recorded there, waited on
 * here (1 is CUDA's legacy default stream, the same as a NULL stream), unless the
 * producer's stream is capturing a graph and ours is not (captures_alone). */
static int order_after(PyObject* stream_obj, hipdnnStream_t ours, const char* what) {
    if (!stream_obj || stream_obj == Py_None) return 0;
    void* theirs = PyLong_AsVoidPtr(stream_obj);
    if (!theirs && PyErr_Occurred()) return -1;
    if ((uintptr_t)theirs == 1) theirs = NULL;
    if (theirs == ours) return 0;
    if (captures_alone(theirs, ours)) return 0;
    hipdnnEvent_t ev = NULL;
    hipdnnStatus_t s = hipdnnEventCreate_ext(&ev);
    if (!s) s = hipdnnEventRecord_ext(ev, theirs);
    if (!s) s = hipdnnStreamWaitEvent_ext(ours, ev);
    hipdnnEventDestroy_ext(ev);
    if (s) {
        PyErr_Format(PyExc_RuntimeError, "%s: ordering after the array's stream %p: %s", what,
                     theirs, hipdnnPeekLastErrorString_ext());
        return -1;
    }
    return 0;
}

static int from_cai(PyObject* obj, hipdnnStream_t stream, const char* what, hd_value* v) {
    v->kind = "__cuda_array_interface__";
    PyObject* d = PyObject_GetAttrString(obj, "__cuda_array_interface__");
    if (!d) return -1;
    int rc = -1;
    if (!PyDict_Check(d)) {
        PyErr_Format(PyExc_ValueError, "%s: __cuda_array_interface__ is not a dict", what);
        goto done;
    }
    PyObject* shape = PyDict_GetItemString(d, "shape");
    PyObject* typestr = PyDict_GetItemString(d, "typestr");
    PyObject* data = PyDict_GetItemString(d, "data");
    PyObject* strides = PyDict_GetItemString(d, "strides");
    PyObject* mask = PyDict_GetItemString(d, "mask");
    if (!shape || !typestr || !data || !PyTuple_Check(shape) || !PyUnicode_Check(typestr) ||
        !PyTuple_Check(data) || PyTuple_Size(data) != 2) {
        PyErr_Format(PyExc_ValueError, "%s: __cuda_array_interface__ lacks shape, typestr or "
                     "data", what);
        goto done;
    }
    if (mask && mask != Py_None) {
        PyErr_Format(PyExc_ValueError, "%s: masked __cuda_array_interface__ arrays are not "
                     "supported", what);
        goto done;
    }
    if (check_rank(what, "__cuda_array_interface__", (long long)PyTuple_Size(shape)) < 0) goto done;
    v->ndim = (int)PyTuple_Size(shape);
    if (int_tuple(shape, v->shape, v->ndim, what, "shape") < 0) goto done;
    const char* ts = PyUnicode_AsUTF8AndSize(typestr, NULL);
    if (!ts) goto done;
    v->dtype = cai_dtype(ts, &v->itemsize);
    if (v->dtype == -1) snprintf(v->type_name, sizeof(v->type_name), "typestr '%s'", ts);
    else set_type_name(v);
    v->ptr = PyLong_AsVoidPtr(PyTuple_GetItem(data, 0));
    if (!v->ptr && PyErr_Occurred()) goto done;
    v->readonly = PyObject_IsTrue(PyTuple_GetItem(data, 1)) == 1;
    v->space = HIPDNN_MEMORY_DEVICE;
    v->device = -1; /* not said; the backend asks the runtime */
    if (strides && strides != Py_None) {
        int64_t bytes[HIPDNN_MAX_DIMS];
        if (int_tuple(strides, bytes, v->ndim, what, "strides") < 0) goto done;
        for (int i = 0; i < v->ndim; ++i) {
            if (v->itemsize == 0 || bytes[i] % v->itemsize != 0) {
                PyErr_Format(PyExc_ValueError, "%s: __cuda_array_interface__ byte strides are "
                             "not multiples of the item size", what);
                goto done;
            }
            v->strides[i] = bytes[i] / v->itemsize;
        }
    } else {
        packed_strides(v);
    }
    rc = order_after(PyDict_GetItemString(d, "stream"), stream, what);
done:
    Py_DECREF(d);
    return rc;
}

int hd_value_acquire(hd_state* st, PyObject* obj, hipdnnStream_t stream, const char* what,
                     hd_value* v) {
    memset(v, 0, sizeof(*v));
    v->dtype = -1;
    if (PyObject_TypeCheck(obj, st->DeviceArrayType)) {
        from_device_array((const hd_DeviceArray*)obj, v);
        return 0;
    }
    int rc = from_torch(st, obj, stream, what, v);
    if (rc != 0) {
        if (rc < 0) hd_value_release(v);
        return rc < 0 ? -1 : 0;
    }
    if (PyObject_HasAttr(obj, st->str_dlpack))
        rc = from_dlpack(obj, stream, what, v);
    else if (PyObject_HasAttr(obj, st->str_cai))
        rc = from_cai(obj, stream, what, v);
    else {
        PyObject* name = PyType_GetName(Py_TYPE(obj));
        if (name) {
            PyErr_Format(PyExc_TypeError, "%s needs an array with the buffer protocol (a "
                         "NumPy array), a hipdnn.DeviceArray, or an object with __dlpack__ or "
                         "__cuda_array_interface__ (PyTorch, CuPy), got %U", what, name);
            Py_DECREF(name);
        }
        return -1;
    }
    if (rc < 0) hd_value_release(v);
    return rc;
}

PyObject* hd_describe_array(PyObject* module, PyObject* obj) {
    hd_state* st = hd_get_state(module);
    hd_value v;
    if (hd_value_acquire(st, obj, NULL, "describe_array", &v) < 0) return NULL;
    PyObject* shape = PyTuple_New(v.ndim);
    PyObject* strides = PyTuple_New(v.ndim);
    PyObject* out = NULL;
    if (shape && strides) {
        int ok = 1;
        for (int i = 0; i < v.ndim && ok; ++i) {
            PyObject* a = PyLong_FromLongLong(v.shape[i]);
            PyObject* b = PyLong_FromLongLong(v.strides[i]);
            ok = a && b;
            if (a) PyTuple_SetItem(shape, i, a);
            if (b) PyTuple_SetItem(strides, i, b);
        }
        if (ok) {
            const char* name = v.dtype == HD_DTYPE_UINT16 ? "uint16" : v.type_name;
            PyObject* address = PyLong_FromVoidPtr(v.ptr);
            if (address)
                out = Py_BuildValue("(iOOisNO)", v.dtype, shape, strides, v.space, name, address,
                                    v.readonly ? Py_True : Py_False);
        }
    }
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    hd_value_release(&v);
    return out;
}

int hd_value_span_bytes(const hd_value* v, int64_t* bytes) {
    /* one of hipdnn's types (lanes 1, whole bytes), strides forward, no overflow */
    int64_t span;
    if (v->dtype == -1 || v->itemsize < 1 || v->itemsize > 8 ||
        !hipdnnSdkSpanElements(v->ndim, v->shape, v->strides, &span))
        return -1;
    return __builtin_mul_overflow(span, v->itemsize, bytes) ? -1 : 0;
}

/* _C.copy_value(obj, buffer, to_host): copies the bytes a device value's elements span
 * (from its element 0; strides must not be negative) to or from a host buffer of exactly
 * that length, after the device's pending work.  What staging a host engine's plan on
 * device tensors needs (hipdnn/_pygraph/host_staging.py). */
PyObject* hd_copy_value(PyObject* module, PyObject* args) {
    PyObject *obj, *buffer;
    int to_host;
    if (!PyArg_ParseTuple(args, "OOp:copy_value", &obj, &buffer, &to_host)) return NULL;
    hd_state* st = hd_get_state(module);
    hd_value v;
    if (hd_value_acquire(st, obj, NULL, "copy_value", &v) < 0) return NULL;
    int64_t span;
    if (hd_value_span_bytes(&v, &span) < 0) {
        hd_value_release(&v);
        PyErr_Format(PyExc_ValueError, "copy_value: the %s is not of one of hipdnn's data types "
                     "or has negative strides or too many bytes", v.kind);
        return NULL;
    }
    Py_buffer view;
    int flags = PyBUF_C_CONTIGUOUS | (to_host ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(buffer, &view, flags) < 0) {
        hd_value_release(&v);
        return NULL;
    }
    hipdnnStatus_t s = HIPDNN_STATUS_SUCCESS;
    if ((int64_t)view.len != span || (!to_host && v.readonly)) {
        PyErr_Format(PyExc_ValueError, "copy_value: the host buffer has %zd bytes, the %s "
                     "spans %lld%s", view.len, v.kind, (long long)span,
                     !to_host && v.readonly ? " and is read-only" : "");
    } else if (span) {
        Py_BEGIN_ALLOW_THREADS
        s = hipdnnDeviceSynchronize_ext();
        if (!s && to_host) s = hipdnnDeviceMemcpy_ext(view.buf, v.ptr, (size_t)span);
        else if (!s) s = hipdnnDeviceMemcpy_ext(v.ptr, view.buf, (size_t)span);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&view);
    hd_value_release(&v);
    if (PyErr_Occurred() || hd_check(st, s, "copy_value") < 0) return NULL;
    Py_RETURN_NONE;
}
