/* device.c — module functions over the backend's device runtime, and streams given as
 * Python objects. */
#include "module.h"

/* _C.device_runtime() -> (name, device count, reason): name "none" with the reason when
 * there is no GPU runtime with a device. */
PyObject* hd_device_runtime(PyObject* module, PyObject* unused) {
    (void)module;
    (void)unused;
    const char* name = "none";
    int count = 0;
    hipdnnStatus_t s;
    Py_BEGIN_ALLOW_THREADS /* the first call loads the runtime */
    s = hipdnnGetDeviceRuntime_ext(&name, &count);
    Py_END_ALLOW_THREADS
    const char* why = s ? hipdnnPeekLastErrorString_ext() : "";
    return Py_BuildValue("(sis)", name, count, why ? why : "");
}

PyObject* hd_device_synchronize(PyObject* module, PyObject* unused) {
    (void)unused;
    hipdnnStatus_t s;
    Py_BEGIN_ALLOW_THREADS
    s = hipdnnDeviceSynchronize_ext();
    Py_END_ALLOW_THREADS
    if (hd_check(hd_get_state(module), s, "device_synchronize") < 0) return NULL;
    Py_RETURN_NONE;
}

PyObject* hd_stream_synchronize(PyObject* module, PyObject* obj) {
    hipdnnStream_t stream;
    if (hd_stream_from_object(obj, &stream) < 0) return NULL;
    hipdnnStatus_t s;
    Py_BEGIN_ALLOW_THREADS
    s = hipdnnStreamSynchronize_ext(stream);
    Py_END_ALLOW_THREADS
    if (hd_check(hd_get_state(module), s, "stream_synchronize") < 0) return NULL;
    Py_RETURN_NONE;
}

/* _C.pointer_memory_space(address) -> (memory space, device) */
PyObject* hd_pointer_memory_space(PyObject* module, PyObject* ptr) {
    void* p = PyLong_AsVoidPtr(ptr);
    if (!p && PyErr_Occurred()) return NULL;
    hipdnnMemorySpace_t space = HIPDNN_MEMORY_HOST;
    int device = -1;
    if (hd_check(hd_get_state(module), hipdnnPointerGetMemorySpace_ext(p, &space, &device),
                 "pointer_memory_space") < 0)
        return NULL;
    return Py_BuildValue("(ii)", (int)space, device);
}

/* _C.pointer_extent(address, nbytes) -> the bytes of [address, address + nbytes) inside
 * device allocations: nbytes when all are (or the runtime cannot tell), else fewer. */
PyObject* hd_pointer_extent(PyObject* module, PyObject* args) {
    PyObject* ptr;
    unsigned long long bytes;
    if (!PyArg_ParseTuple(args, "OK:pointer_extent", &ptr, &bytes)) return NULL;
    void* p = PyLong_AsVoidPtr(ptr);
    if (!p && PyErr_Occurred()) return NULL;
    uint64_t inside = 0;
    if (hd_check(hd_get_state(module), hipdnnPointerGetExtent_ext(p, (uint64_t)bytes, &inside),
                 "pointer_extent") < 0)
        return NULL;
    return PyLong_FromUnsignedLongLong((unsigned long long)inside);
}

/* A stream: None, an int (the raw hipStream_t / cudaStream_t), a PyTorch stream
 * (.cuda_stream), a CuPy stream (.ptr) or an object with __cuda_stream__() -> (version,
 * handle). */
int hd_stream_from_object(PyObject* obj, hipdnnStream_t* out) {
    *out = NULL;
    if (obj == Py_None) return 0;
    PyObject* value = NULL;
    if (PyLong_Check(obj) && !PyBool_Check(obj)) {
        value = Py_NewRef(obj);
    } else if (PyObject_HasAttrString(obj, "__cuda_stream__")) {
        PyObject* t = PyObject_CallMethod(obj, "__cuda_stream__", NULL);
        if (!t) return -1;
        if (PyTuple_Check(t) && PyTuple_Size(t) == 2) value = Py_NewRef(PyTuple_GetItem(t, 1));
        Py_DECREF(t);
    } else if (PyObject_HasAttrString(obj, "cuda_stream")) {
        value = PyObject_GetAttrString(obj, "cuda_stream");
    } else if (PyObject_HasAttrString(obj, "ptr")) {
        value = PyObject_GetAttrString(obj, "ptr");
    }
    if (!value || !PyLong_Check(value)) {
        Py_XDECREF(value);
        if (PyErr_Occurred()) return -1;
        hd_type_error("a stream must be None, an int (a raw hipStream_t / cudaStream_t), a "
                      "PyTorch or CuPy stream, or have __cuda_stream__()", obj);
        return -1;
    }
    *out = PyLong_AsVoidPtr(value);
    Py_DECREF(value);
    return (!*out && PyErr_Occurred()) ? -1 : 0;
}
