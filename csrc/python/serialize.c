/* serialize.c — a finalized operation graph <-> FlatBuffers bytes.
 *
 * Deserialization hands the bytes to the backend, which verifies them before use, so
 * corrupted or truncated input raises instead of crashing.
 */
#include "module.h"

/* _C.serialize(graph: Descriptor) -> bytes */
PyObject* hd_serialize(PyObject* module, PyObject* graph) {
    hd_state* st = hd_get_state(module);
    if (!PyObject_TypeCheck(graph, st->DescriptorType))
        return hd_type_error("serialize: expected an OPERATIONGRAPH Descriptor", graph);
    hd_Descriptor* g = (hd_Descriptor*)graph;
    if (!g->desc) {
        PyErr_SetString(PyExc_ValueError, "serialize: descriptor has been released");
        return NULL;
    }
    size_t size = 0;
    if (hd_check(st, hipdnnBackendGetSerializedBinaryGraph_ext(g->desc, 0, &size, NULL),
                 "serialize") < 0)
        return NULL;
    if (size > (size_t)PY_SSIZE_T_MAX) return PyErr_NoMemory();
    uint8_t* data = PyMem_Malloc(size ? size : 1);
    if (!data) return PyErr_NoMemory();
    size_t written = 0;
    PyObject* result = NULL;
    if (hd_check(st, hipdnnBackendGetSerializedBinaryGraph_ext(g->desc, size, &written, data),
                 "serialize") == 0) {
        if (written > size) {
            PyErr_Format(PyExc_RuntimeError,
                         "serialize: backend reported %zu bytes after sizing %zu", written,
                         size);
        } else {
            result = PyBytes_FromStringAndSize((const char*)data, (Py_ssize_t)written);
        }
    }
    PyMem_Free(data);
    return result;
}

/* _C.deserialize(data: bytes-like) -> Descriptor (OPERATIONGRAPH, finalized) */
PyObject* hd_deserialize(PyObject* module, PyObject* data) {
    hd_state* st = hd_get_state(module);
    if (!PyObject_CheckBuffer(data) || PyUnicode_Check(data))
        return hd_type_error("deserialize: expected bytes", data);
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0) return NULL;
    hipdnnBackendDescriptor_t graph = NULL;
    hipdnnStatus_t s =
        hipdnnBackendCreateAndDeserializeGraph_ext(&graph, (const uint8_t*)view.buf,
                                                   (size_t)view.len);
    PyBuffer_Release(&view);
    if (hd_check(st, s, NULL) < 0) return NULL;
    return hd_descriptor_wrap(st, graph, HIPDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, 1);
}
