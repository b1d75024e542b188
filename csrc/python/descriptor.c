/* descriptor.c — _C.Descriptor: one backend descriptor of any type, driven generically.
 *
 *   d = Descriptor(BACKEND_TENSOR_DESCRIPTOR)
 *   d.set(ATTR_TENSOR_DIMENSIONS, TYPE_INT64, [8, 3, 5, 5])
 *   d.finalize()
 *   d.get(ATTR_TENSOR_DIMENSIONS, TYPE_INT64) -> [8, 3, 5, 5]
 *
 * Python values are converted per hipdnnBackendAttributeType_t.  Descriptors given as
 * values are referenced by the backend itself; the Python objects they came from (and
 * any Handle) are also kept in `keep`, because the backend holds a Handle only as a raw
 * pointer and must never outlive it.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "module.h"

/* The op table entry whose descriptor type this is; NULL if none. */
static const hipdnnOpInfo_ext_t* op_of_type(int type) {
    int64_t n = 0;
    const hipdnnOpInfo_ext_t* info = NULL;
    hipdnnGetOpCount_ext(&n);
    for (int64_t i = 0; i < n; i++)
        if (hipdnnGetOpInfo_ext(i, &info) == HIPDNN_STATUS_SUCCESS && (int)info->descriptor_type == type)
            return info;
    return NULL;
}

const char* hd_descriptor_type_name(int type) {
    const hipdnnOpInfo_ext_t* op = op_of_type(type);
    if (op) return op->descriptor_name;
    switch (type) {
    case HIPDNN_BACKEND_TENSOR_DESCRIPTOR: return "TENSOR";
    case HIPDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR: return "OPERATIONGRAPH";
    case HIPDNN_BACKEND_ENGINEHEUR_DESCRIPTOR: return "ENGINEHEUR";
    case HIPDNN_BACKEND_ENGINE_DESCRIPTOR: return "ENGINE";
    case HIPDNN_BACKEND_ENGINECFG_DESCRIPTOR: return "ENGINECFG";
    case HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: return "EXECUTION_PLAN";
    case HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR: return "VARIANT_PACK";
    case HIPDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR: return "KNOB_CHOICE";
    default: return "UNKNOWN";
    }
}

/* The type of the descriptors an attribute returns, where the header says; -1 else (the
 * wrapper then asks the backend). */
static int returned_descriptor_type(int attr) {
    switch (attr) {
    case HIPDNN_ATTR_OPERATIONGRAPH_TENSORS_EXT: return HIPDNN_BACKEND_TENSOR_DESCRIPTOR;
    case HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH:
    case HIPDNN_ATTR_ENGINE_OPERATION_GRAPH:
        return HIPDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR;
    case HIPDNN_ATTR_ENGINEHEUR_RESULTS:
    case HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG:
        return HIPDNN_BACKEND_ENGINECFG_DESCRIPTOR;
    case HIPDNN_ATTR_ENGINECFG_ENGINE: return HIPDNN_BACKEND_ENGINE_DESCRIPTOR;
    case HIPDNN_ATTR_ENGINECFG_KNOB_CHOICES: return HIPDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR;
    default: return -1;
    }
}

/* Size in bytes of one value of an attribute type; 0 if the type is unknown. */
static size_t value_size(int type) {
    switch (type) {
    case HIPDNN_TYPE_INT64: return sizeof(int64_t);
    case HIPDNN_TYPE_DOUBLE: return sizeof(double);
    case HIPDNN_TYPE_FLOAT: return sizeof(float);
    case HIPDNN_TYPE_BOOLEAN: return sizeof(bool);
    case HIPDNN_TYPE_INT32: return sizeof(int32_t);
    case HIPDNN_TYPE_CHAR: return sizeof(char);
    case HIPDNN_TYPE_DATA_TYPE: return sizeof(hipdnnDataType_t);
    case HIPDNN_TYPE_BACKEND_DESCRIPTOR: return sizeof(hipdnnBackendDescriptor_t);
    case HIPDNN_TYPE_VOID_PTR: return sizeof(void*);
    case HIPDNN_TYPE_HANDLE: return sizeof(hipdnnHandle_t);
    case HIPDNN_TYPE_POINTWISE_MODE_EXT: return sizeof(hipdnnPointwiseMode_t);
    case HIPDNN_TYPE_CONVOLUTION_MODE_EXT: return sizeof(hipdnnConvolutionMode_t);
    case HIPDNN_TYPE_REDUCTION_OPERATOR_TYPE_EXT: return sizeof(hipdnnReduceTensorOp_t);
    case HIPDNN_TYPE_NORM_MODE_EXT: return sizeof(hipdnnBackendNormMode_t);
    case HIPDNN_TYPE_NORM_FWD_PHASE_EXT: return sizeof(hipdnnBackendNormFwdPhase_t);
    case HIPDNN_TYPE_RESAMPLE_MODE_EXT: return sizeof(hipdnnResampleMode_t);
    case HIPDNN_TYPE_PADDING_MODE_EXT: return sizeof(hipdnnPaddingMode_t);
    case HIPDNN_TYPE_RESHAPE_MODE_EXT: return sizeof(hipdnnReshapeMode_t);
    case HIPDNN_TYPE_GENSTATS_MODE_EXT: return sizeof(hipdnnGenStatsMode_t);
    case HIPDNN_TYPE_DIAGONAL_ALIGNMENT_EXT: return sizeof(hipdnnDiagonalAlignment_t);
    case HIPDNN_TYPE_HEUR_MODE: return sizeof(hipdnnBackendHeurMode_t);
    case HIPDNN_TYPE_UINT8_EXT: return sizeof(uint8_t);
    default: return 0;
    }
}

static int is_enum_type(int type) {
    return type == HIPDNN_TYPE_DATA_TYPE || type == HIPDNN_TYPE_POINTWISE_MODE_EXT ||
           type == HIPDNN_TYPE_CONVOLUTION_MODE_EXT || type == HIPDNN_TYPE_HEUR_MODE ||
           type == HIPDNN_TYPE_REDUCTION_OPERATOR_TYPE_EXT || type == HIPDNN_TYPE_NORM_MODE_EXT ||
           type == HIPDNN_TYPE_NORM_FWD_PHASE_EXT || type == HIPDNN_TYPE_RESAMPLE_MODE_EXT ||
           type == HIPDNN_TYPE_PADDING_MODE_EXT || type == HIPDNN_TYPE_RESHAPE_MODE_EXT ||
           type == HIPDNN_TYPE_GENSTATS_MODE_EXT || type == HIPDNN_TYPE_DIAGONAL_ALIGNMENT_EXT;
}

/* ---- lifetime ------------------------------------------------------------------- */

static hd_Descriptor* descriptor_alloc(PyTypeObject* tp) {
    allocfunc alloc = (allocfunc)PyType_GetSlot(tp, Py_tp_alloc);
    hd_Descriptor* self = (hd_Descriptor*)alloc(tp, 0);
    if (!self) return NULL;
    self->desc = NULL;
    self->type = -1;
    self->finalized = 0;
    self->keep = PyList_New(0);
    if (!self->keep) {
        Py_DECREF(self);
        return NULL;
    }
    return self;
}

PyObject* hd_descriptor_wrap(hd_state* st, hipdnnBackendDescriptor_t desc, int type,
                             int finalized) {
    hd_Descriptor* self = descriptor_alloc(st->DescriptorType);
    if (!self) {
        hipdnnBackendDestroyDescriptor(desc);
        return NULL;
    }
    self->desc = desc;
    if (type < 0) {
        hipdnnBackendDescriptorType_t t = HIPDNN_INVALID_TYPE;
        if (hipdnnBackendGetDescriptorType_ext(desc, &t) == HIPDNN_STATUS_SUCCESS) type = (int)t;
    }
    self->type = type;
    self->finalized = finalized;
    return (PyObject*)self;
}

static PyObject* descriptor_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
    static char* kwlist[] = {"type", NULL};
    int dtype;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "i:Descriptor", kwlist, &dtype))
        return NULL;
    hd_state* st = PyType_GetModuleState(type);
    if (!st) return NULL;
    hipdnnBackendDescriptor_t desc = NULL;
    hipdnnStatus_t s = hipdnnBackendCreateDescriptor((hipdnnBackendDescriptorType_t)dtype, &desc);
    if (s != HIPDNN_STATUS_SUCCESS) {
        char ctx[96];
        snprintf(ctx, sizeof(ctx), "Descriptor(%d)", dtype);
        hd_check(st, s, ctx);
        return NULL;
    }
    hd_log_flush(st);
    hd_Descriptor* self = descriptor_alloc(type);
    if (!self) {
        hipdnnBackendDestroyDescriptor(desc);
        return NULL;
    }
    self->desc = desc;
    self->type = dtype;
    return (PyObject*)self;
}

static int descriptor_traverse(PyObject* op, visitproc visit, void* arg) {
    hd_Descriptor* self = (hd_Descriptor*)op;
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(self->keep);
    return 0;
}

/* The backend object goes first: whatever it points at (a Handle) is still alive. */
static int descriptor_clear(PyObject* op) {
    hd_Descriptor* self = (hd_Descriptor*)op;
    if (self->desc) {
        hipdnnBackendDestroyDescriptor(self->desc);
        self->desc = NULL;
    }
    Py_CLEAR(self->keep);
    return 0;
}

static void descriptor_dealloc(PyObject* op) {
    PyTypeObject* tp = Py_TYPE(op);
    PyObject_GC_UnTrack(op);
    descriptor_clear(op);
    freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    tp_free(op);
    Py_DECREF(tp);
}

static int keep_alive(hd_Descriptor* self, PyObject* obj) {
    if (!self->keep) {
        self->keep = PyList_New(0);
        if (!self->keep) return -1;
    }
    return PyList_Append(self->keep, obj);
}

static int check_live(hd_Descriptor* self) {
    if (!self->desc) {
        PyErr_SetString(PyExc_ValueError, "descriptor has been released");
        return -1;
    }
    return 0;
}

/* ---- set -------------------------------------------------------------------------- */

/* Items of `value` as a new list: a list/tuple's items, or [value] for a single one. */
static PyObject* as_item_list(PyObject* value) {
    if (PyList_Check(value) || PyTuple_Check(value)) return PySequence_List(value);
    return Py_BuildValue("[O]", value);
}

/* Converts one Python item to the C value at dst.  `ctx` names the call for errors. */
static int convert_item(hd_state* st, hd_Descriptor* self, int type, PyObject* item, void* dst,
                        const char* ctx) {
    if (type == HIPDNN_TYPE_INT64 || is_enum_type(type)) {
        if (PyFloat_Check(item)) {
            PyErr_Format(PyExc_TypeError, "%s: expected an int, got a float", ctx);
            return -1;
        }
        PyObject* idx = PyNumber_Index(item);
        if (!idx) return -1;
        long long v = PyLong_AsLongLong(idx);
        Py_DECREF(idx);
        if (v == -1 && PyErr_Occurred()) return -1;
        if (type == HIPDNN_TYPE_INT64) {
            *(int64_t*)dst = (int64_t)v;
        } else {
            if (v < -2147483647LL - 1 || v > 2147483647LL) {
                PyErr_Format(PyExc_OverflowError, "%s: enum value %lld out of range", ctx, v);
                return -1;
            }
            *(int*)dst = (int)v;
        }
        return 0;
    }
    switch (type) {
    case HIPDNN_TYPE_DOUBLE:
    case HIPDNN_TYPE_FLOAT: {
        double v = PyFloat_AsDouble(item);
        if (v == -1.0 && PyErr_Occurred()) return -1;
        if (type == HIPDNN_TYPE_DOUBLE) *(double*)dst = v;
        else *(float*)dst = (float)v;
        return 0;
    }
    case HIPDNN_TYPE_BOOLEAN: {
        int v = PyObject_IsTrue(item);
        if (v < 0) return -1;
        *(bool*)dst = v != 0;
        return 0;
    }
    case HIPDNN_TYPE_INT32: {
        long v = PyLong_AsLong(item);
        if (v == -1 && PyErr_Occurred()) return -1;
        if (v < INT32_MIN || v > INT32_MAX) {
            PyErr_Format(PyExc_OverflowError, "%s: %ld out of int32 range", ctx, v);
            return -1;
        }
        *(int32_t*)dst = (int32_t)v;
        return 0;
    }
    case HIPDNN_TYPE_BACKEND_DESCRIPTOR: {
        if (!PyObject_TypeCheck(item, st->DescriptorType)) {
            char what[256];
            snprintf(what, sizeof(what), "%s: expected a hipdnn._C.Descriptor", ctx);
            hd_type_error(what, item);
            return -1;
        }
        hd_Descriptor* d = (hd_Descriptor*)item;
        if (check_live(d) < 0) return -1;
        *(hipdnnBackendDescriptor_t*)dst = d->desc;
        return keep_alive(self, item);
    }
    case HIPDNN_TYPE_HANDLE: {
        if (!PyObject_TypeCheck(item, st->HandleType)) {
            char what[256];
            snprintf(what, sizeof(what), "%s: expected a hipdnn._C.Handle", ctx);
            hd_type_error(what, item);
            return -1;
        }
        if (hd_handle_live(item, ctx) < 0) return -1;
        *(hipdnnHandle_t*)dst = ((hd_Handle*)item)->handle;
        return keep_alive(self, item);
    }
    case HIPDNN_TYPE_VOID_PTR: {
        void* p = NULL;
        if (item != Py_None) {
            p = PyLong_AsVoidPtr(item);
            if (!p && PyErr_Occurred()) return -1;
        }
        *(void**)dst = p;
        return 0;
    }
    case HIPDNN_TYPE_UINT8_EXT: {
        long v = PyLong_AsLong(item);
        if (v == -1 && PyErr_Occurred()) return -1;
        if (v < 0 || v > 255) {
            PyErr_Format(PyExc_ValueError, "%s: byte value %ld out of range 0..255", ctx, v);
            return -1;
        }
        *(uint8_t*)dst = (uint8_t)v;
        return 0;
    }
    default:
        PyErr_Format(PyExc_ValueError, "%s: unknown attribute type %d", ctx, type);
        return -1;
    }
}

static PyObject* call_set(hd_state* st, hd_Descriptor* self, int attr, int type, int64_t count,
                          const void* values, const char* ctx) {
    hipdnnStatus_t s = hipdnnBackendSetAttribute(self->desc, (hipdnnBackendAttributeName_t)attr,
                                                 (hipdnnBackendAttributeType_t)type, count, values);
    if (hd_check(st, s, ctx) < 0) return NULL;
    Py_RETURN_NONE;
}

/* Descriptor.set(attr, type, values) */
static PyObject* descriptor_set(PyObject* op, PyObject* args, PyObject* kwargs) {
    static char* kwlist[] = {"attr", "type", "values", NULL};
    hd_Descriptor* self = (hd_Descriptor*)op;
    hd_state* st = hd_state_of(op);
    int attr, type;
    PyObject* value;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "iiO:set", kwlist, &attr, &type, &value))
        return NULL;
    if (check_live(self) < 0) return NULL;
    char ctx[128];
    snprintf(ctx, sizeof(ctx), "set attribute %d on %s descriptor", attr,
             hd_descriptor_type_name(self->type));
    size_t size = value_size(type);
    if (size == 0) {
        PyErr_Format(PyExc_ValueError, "%s: unknown attribute type %d", ctx, type);
        return NULL;
    }

    if (type == HIPDNN_TYPE_CHAR) {
        const char* text;
        Py_ssize_t n;
        if (PyUnicode_Check(value)) {
            text = PyUnicode_AsUTF8AndSize(value, &n);
            if (!text) return NULL;
        } else if (PyBytes_Check(value)) {
            if (PyBytes_AsStringAndSize(value, (char**)&text, &n) < 0) return NULL;
        } else {
            char what[256];
            snprintf(what, sizeof(what), "%s: expected a str", ctx);
            return hd_type_error(what, value);
        }
        return call_set(st, self, attr, type, (int64_t)n, text, ctx);
    }
    if (type == HIPDNN_TYPE_UINT8_EXT && PyObject_CheckBuffer(value)) {
        Py_buffer view;
        if (PyObject_GetBuffer(value, &view, PyBUF_SIMPLE) < 0) return NULL;
        PyObject* r = call_set(st, self, attr, type, (int64_t)view.len, view.buf, ctx);
        PyBuffer_Release(&view);
        return r;
    }

    PyObject* items = as_item_list(value);
    if (!items) return NULL;
    Py_ssize_t n = PyList_Size(items);
    PyObject* result = NULL;
    /* One spare element so that count 0 still passes a valid pointer. */
    unsigned char* buf = PyMem_Calloc((size_t)n + 1, size);
    if (!buf) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (convert_item(st, self, type, PyList_GetItem(items, i), buf + (size_t)i * size, ctx) <
            0)
            goto done;
    }
    result = call_set(st, self, attr, type, (int64_t)n, buf, ctx);
done:
    PyMem_Free(buf);
    Py_DECREF(items);
    return result;
}

/* ---- get -------------------------------------------------------------------------- */

static PyObject* values_to_python(hd_state* st, hd_Descriptor* self, int attr, int type,
                                  unsigned char* buf, int64_t n) {
    if (type == HIPDNN_TYPE_CHAR)
        return PyUnicode_DecodeUTF8((const char*)buf, (Py_ssize_t)n, "replace");
    if (type == HIPDNN_TYPE_UINT8_EXT) return PyBytes_FromStringAndSize((const char*)buf, n);
    PyObject* list = PyList_New((Py_ssize_t)n);
    if (!list) return NULL;
    size_t size = value_size(type);
    for (int64_t i = 0; i < n; i++) {
        const void* p = buf + (size_t)i * size;
        PyObject* v = NULL;
        if (type == HIPDNN_TYPE_INT64) v = PyLong_FromLongLong(*(const int64_t*)p);
        else if (is_enum_type(type)) v = PyLong_FromLong(*(const int*)p);
        else if (type == HIPDNN_TYPE_DOUBLE) v = PyFloat_FromDouble(*(const double*)p);
        else if (type == HIPDNN_TYPE_FLOAT) v = PyFloat_FromDouble(*(const float*)p);
        else if (type == HIPDNN_TYPE_BOOLEAN) v = PyBool_FromLong(*(const bool*)p);
        else if (type == HIPDNN_TYPE_INT32) v = PyLong_FromLong(*(const int32_t*)p);
        else if (type == HIPDNN_TYPE_VOID_PTR || type == HIPDNN_TYPE_HANDLE)
            v = PyLong_FromVoidPtr(*(void* const*)p);
        else if (type == HIPDNN_TYPE_BACKEND_DESCRIPTOR) {
            hipdnnBackendDescriptor_t d = *(const hipdnnBackendDescriptor_t*)p;
            /* The backend created it for us; until wrapped it is ours to destroy. */
            *(hipdnnBackendDescriptor_t*)(buf + (size_t)i * size) = NULL;
            /* A new descriptor may point into this one's graph: keep it alive. */
            v = hd_descriptor_wrap(st, d, returned_descriptor_type(attr), 1);
            if (v && keep_alive((hd_Descriptor*)v, (PyObject*)self) < 0) Py_CLEAR(v);
        }
        if (!v) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SetItem(list, (Py_ssize_t)i, v);
    }
    return list;
}

/* Descriptor.get(attr, type, count=None) */
static PyObject* descriptor_get(PyObject* op, PyObject* args, PyObject* kwargs) {
    static char* kwlist[] = {"attr", "type", "count", NULL};
    hd_Descriptor* self = (hd_Descriptor*)op;
    hd_state* st = hd_state_of(op);
    int attr, type;
    PyObject* count_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "ii|O:get", kwlist, &attr, &type,
                                     &count_obj))
        return NULL;
    if (check_live(self) < 0) return NULL;
    char ctx[128];
    snprintf(ctx, sizeof(ctx), "get attribute %d of %s descriptor", attr,
             hd_descriptor_type_name(self->type));
    size_t size = value_size(type);
    if (size == 0) {
        PyErr_Format(PyExc_ValueError, "%s: unknown attribute type %d", ctx, type);
        return NULL;
    }
    long long c = -1; /* count=None: all there are */
    if (count_obj != Py_None) {
        c = PyLong_AsLongLong(count_obj);
        if (c == -1 && PyErr_Occurred()) return NULL;
        if (c < 0) {
            PyErr_Format(PyExc_ValueError, "%s: count must be >= 0, got %lld", ctx, c);
            return NULL;
        }
    }
    /* never more room than the attribute holds: count=2**40 is not 2**40 elements' memory.
     * A small count is asked for as it is, without the sizing query: an ENGINEHEUR's
     * RESULTS count ranks every engine, its first config does not (heuristics.c). */
    int64_t available = c;
    if (c < 0 || c > 64) {
        hipdnnStatus_t qs = hipdnnBackendGetAttribute(
            self->desc, (hipdnnBackendAttributeName_t)attr, (hipdnnBackendAttributeType_t)type, 0,
            &available, NULL);
        if (hd_check(st, qs, ctx) < 0) return NULL;
    }
    int64_t requested = c >= 0 && c < available ? (int64_t)c : available;
    if (requested < 0 || (uint64_t)requested > (uint64_t)(PY_SSIZE_T_MAX / 16) / size) {
        PyErr_Format(PyExc_OverflowError, "%s: count %lld too large", ctx, (long long)requested);
        return NULL;
    }
    /* CHAR values come NUL-terminated when there is room: ask for one more. */
    int64_t room = requested + (type == HIPDNN_TYPE_CHAR ? 1 : 0);
    unsigned char* buf = PyMem_Calloc((size_t)room + 1, size);
    if (!buf) return PyErr_NoMemory();
    int64_t got = 0;
    hipdnnStatus_t s = hipdnnBackendGetAttribute(self->desc, (hipdnnBackendAttributeName_t)attr,
                                                 (hipdnnBackendAttributeType_t)type, room, &got,
                                                 buf);
    if (s != HIPDNN_STATUS_SUCCESS) {
        PyMem_Free(buf);
        hd_check(st, s, ctx);
        return NULL;
    }
    hd_log_flush(st);
    int64_t n = got < requested ? got : requested;
    if (n < 0) n = 0;
    PyObject* result = values_to_python(st, self, attr, type, buf, n);
    if (type == HIPDNN_TYPE_BACKEND_DESCRIPTOR) {
        /* Whatever was not wrapped (an error part way) is still ours. */
        for (int64_t i = 0; i < n; i++) {
            hipdnnBackendDescriptor_t d = ((hipdnnBackendDescriptor_t*)buf)[i];
            if (d) hipdnnBackendDestroyDescriptor(d);
        }
    }
    PyMem_Free(buf);
    return result;
}

/* ---- finalize and properties ----------------------------------------------------- */

static PyObject* descriptor_finalize(PyObject* op, PyObject* unused) {
    (void)unused;
    hd_Descriptor* self = (hd_Descriptor*)op;
    hd_state* st = hd_state_of(op);
    if (check_live(self) < 0) return NULL;
    char ctx[96];
    snprintf(ctx, sizeof(ctx), "finalize %s descriptor", hd_descriptor_type_name(self->type));
    /* Not releasing the GIL: finalizing a graph writes into the tensor descriptors that
     * other Python threads could be setting at the same time. */
    hipdnnStatus_t s = hipdnnBackendFinalize(self->desc);
    if (s != HIPDNN_STATUS_SUCCESS) {
        /* The backend's message already names the node or tensor; no prefix. */
        hd_check(st, s, NULL);
        return NULL;
    }
    hd_log_flush(st);
    self->finalized = 1;
    Py_RETURN_NONE;
}

static PyObject* descriptor_get_type(PyObject* op, void* closure) {
    (void)closure;
    return PyLong_FromLong(((hd_Descriptor*)op)->type);
}

static PyObject* descriptor_get_type_name(PyObject* op, void* closure) {
    (void)closure;
    return PyUnicode_FromString(hd_descriptor_type_name(((hd_Descriptor*)op)->type));
}

static PyObject* descriptor_get_finalized(PyObject* op, void* closure) {
    (void)closure;
    return PyBool_FromLong(((hd_Descriptor*)op)->finalized);
}

static PyObject* descriptor_get_address(PyObject* op, void* closure) {
    (void)closure;
    return PyLong_FromVoidPtr(((hd_Descriptor*)op)->desc);
}

static PyObject* descriptor_repr(PyObject* op) {
    hd_Descriptor* self = (hd_Descriptor*)op;
    return PyUnicode_FromFormat("<hipdnn._C.Descriptor %s%s>",
                                hd_descriptor_type_name(self->type),
                                self->finalized ? " finalized" : "");
}

static PyMethodDef descriptor_methods[] = {
    {"set", (PyCFunction)(void (*)(void))descriptor_set, METH_VARARGS | METH_KEYWORDS,
     "set($self, attr, type, values)\n--\n\nSets an attribute. `values` is one value or a list; "
     "a str for TYPE_CHAR, bytes for TYPE_UINT8_EXT, Descriptor objects for "
     "TYPE_BACKEND_DESCRIPTOR, a Handle for TYPE_HANDLE."},
    {"get", (PyCFunction)(void (*)(void))descriptor_get, METH_VARARGS | METH_KEYWORDS,
     "get($self, attr, type, count=None)\n--\n\nReads an attribute: a list of values, a str for "
     "TYPE_CHAR, bytes for TYPE_UINT8_EXT. Returned descriptors are new and owned by Python. "
     "count=None reads all."},
    {"finalize", descriptor_finalize, METH_NOARGS,
     "finalize($self)\n--\n\nChecks the descriptor and makes it immutable."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef descriptor_getset[] = {
    {"type", descriptor_get_type, NULL, "The descriptor type (-1 if not known).", NULL},
    {"type_name", descriptor_get_type_name, NULL, "The descriptor type's name.", NULL},
    {"finalized", descriptor_get_finalized, NULL, "Whether finalize() succeeded.", NULL},
    {"address", descriptor_get_address, NULL, "The backend handle as an int.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot descriptor_slots[] = {
    {Py_tp_new, descriptor_new},
    {Py_tp_dealloc, descriptor_dealloc},
    {Py_tp_traverse, descriptor_traverse},
    {Py_tp_clear, descriptor_clear},
    {Py_tp_repr, descriptor_repr},
    {Py_tp_methods, descriptor_methods},
    {Py_tp_getset, descriptor_getset},
    {Py_tp_doc, "Descriptor(type)\n--\n\nA backend descriptor of the given "
                "hipdnnBackendDescriptorType_t (BACKEND_*_DESCRIPTOR)."},
    {0, NULL},
};

PyType_Spec hd_descriptor_spec = {
    .name = "hipdnn._C.Descriptor",
    .basicsize = sizeof(hd_Descriptor),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = descriptor_slots,
};
