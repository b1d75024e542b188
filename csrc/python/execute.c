/* execute.c — run a plan on arrays: build the variant pack from buffer-protocol objects,
 * checked against the graph's tensors, then hipdnnBackendExecute without the GIL.
 *
 *   _C.execute(handle, plan, specs, arrays, workspace=None, workspace_size=0)
 *
 * specs is a sequence of (uid, name, data_type, dims, strides, is_output), one per
 * tensor that needs memory, and arrays holds the matching objects in the same order.
 * Every check names the tensor ("variant pack: tensor 'x' (uid 1) expects float16
 * [8, 3, 5, 5], got float32 [8, 3, 5, 5]").  Strides are compared in elements and only
 * where the dim is larger than 1, since a size-1 dim's stride never addresses memory.
 *
 * Host arrays come in through the buffer protocol; device arrays will come in through
 * resolve_pointer() below.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "module.h"

typedef struct {
    int64_t uid;
    const char* name; /* borrowed from the spec tuple, alive for the call */
    int dtype;
    int ndim;
    int64_t dims[HIPDNN_MAX_DIMS];
    int64_t strides[HIPDNN_MAX_DIMS];
    int is_output;
} spec_t;

/* "tensor 'x' (uid 1)" or "tensor with uid 1" for an unnamed one. */
static void tensor_label(const spec_t* sp, char* buf, size_t len) {
    if (sp->name && sp->name[0])
        snprintf(buf, len, "tensor '%s' (uid %lld)", sp->name, (long long)sp->uid);
    else
        snprintf(buf, len, "tensor with uid %lld", (long long)sp->uid);
}

static void format_ints(const int64_t* v, int n, char* buf, size_t len) {
    size_t used = 0;
    used += (size_t)snprintf(buf, len, "[");
    for (int i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%lld", i ? ", " : "", (long long)v[i]);
    if (used < len) snprintf(buf + used, len - used, "]");
}

static void format_ssizes(const Py_ssize_t* v, int n, char* buf, size_t len) {
    int64_t tmp[64];
    if (n > 64) n = 64;
    for (int i = 0; i < n; i++) tmp[i] = v ? (int64_t)v[i] : 0;
    format_ints(tmp, n, buf, len);
}

static int parse_int_list(PyObject* seq, int64_t* out, int max, int* n, const char* what,
                          Py_ssize_t index) {
    PyObject* list = PySequence_List(seq);
    if (!list) return -1;
    Py_ssize_t len = PyList_Size(list);
    if (len > max) {
        PyErr_Format(PyExc_ValueError, "execute: spec %zd has %zd %s (at most %d)", index, len,
                     what, max);
        Py_DECREF(list);
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        long long v = PyLong_AsLongLong(PyList_GetItem(list, i));
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(list);
            return -1;
        }
        out[i] = (int64_t)v;
    }
    *n = (int)len;
    Py_DECREF(list);
    return 0;
}

static int parse_spec(PyObject* obj, Py_ssize_t index, spec_t* sp) {
    PyObject *dims, *strides;
    long long uid;
    int is_output, ndim_s = 0;
    if (!PyTuple_Check(obj) ||
        !PyArg_ParseTuple(obj, "LsiOOp", &uid, &sp->name, &sp->dtype, &dims, &strides,
                          &is_output)) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError,
                         "execute: spec %zd must be a tuple (uid, name, data_type, dims, "
                         "strides, is_output)",
                         index);
        return -1;
    }
    sp->uid = (int64_t)uid;
    sp->is_output = is_output;
    if (parse_int_list(dims, sp->dims, HIPDNN_MAX_DIMS, &sp->ndim, "dims", index) < 0 ||
        parse_int_list(strides, sp->strides, HIPDNN_MAX_DIMS, &ndim_s, "strides", index) < 0)
        return -1;
    if (ndim_s != sp->ndim) {
        PyErr_Format(PyExc_ValueError, "execute: spec %zd has %d dims but %d strides", index,
                     sp->ndim, ndim_s);
        return -1;
    }
    return 0;
}

/* Gets the buffer of `obj` for tensor `sp`, with every check.  On success the caller
 * owns *view; on failure nothing is held. */
static int acquire_checked(const spec_t* sp, PyObject* obj, Py_buffer* view) {
    char label[320];
    tensor_label(sp, label, sizeof(label));
    if (!PyObject_CheckBuffer(obj)) {
        PyObject* tname = PyType_GetName(Py_TYPE(obj));
        if (tname) {
            PyErr_Format(PyExc_TypeError,
                         "variant pack: %s needs an array with the buffer protocol (a NumPy "
                         "array), got %U",
                         label, tname);
            Py_DECREF(tname);
        }
        return -1;
    }
    int flags = sp->is_output ? PyBUF_RECORDS : PyBUF_RECORDS_RO;
    if (PyObject_GetBuffer(obj, view, flags) < 0) {
        if (sp->is_output) {
            /* Tell "read-only" apart from other refusals. */
            Py_buffer ro;
            if (PyObject_GetBuffer(obj, &ro, PyBUF_RECORDS_RO) == 0) {
                PyBuffer_Release(&ro);
                PyErr_Clear();
                PyErr_Format(PyExc_ValueError,
                             "variant pack: %s is an output but its array is read-only", label);
                return -1;
            }
        }
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        PyErr_Format(PyExc_ValueError, "variant pack: %s: cannot read the array's buffer (%S)",
                     label, ev ? ev : Py_None);
        Py_XDECREF(et);
        Py_XDECREF(ev);
        Py_XDECREF(tb);
        return -1;
    }

    char want_dims[256], got_dims[256];
    int dtype_ok = hd_format_matches(view->format, view->itemsize, sp->dtype);
    int shape_ok = view->ndim == sp->ndim;
    for (int i = 0; shape_ok && i < sp->ndim; i++)
        shape_ok = view->shape && view->shape[i] == sp->dims[i];
    if (!dtype_ok || !shape_ok) {
        char got_type[64];
        hd_format_name(view->format, view->itemsize, got_type, sizeof(got_type));
        format_ints(sp->dims, sp->ndim, want_dims, sizeof(want_dims));
        format_ssizes(view->shape, view->ndim, got_dims, sizeof(got_dims));
        const char* hint = "";
        if (!dtype_ok && sp->dtype == HIPDNN_DATA_BFLOAT16)
            hint = " (bfloat16 takes uint16 bit patterns: see hipdnn.to_bfloat16)";
        PyErr_Format(PyExc_ValueError, "variant pack: %s expects %s %s, got %s %s%s", label,
                     hd_dtype_name(sp->dtype), want_dims, got_type, got_dims, hint);
        goto fail;
    }

    int strides_ok = 1, byte_aligned = 1;
    for (int i = 0; i < sp->ndim; i++) {
        Py_ssize_t bs = view->strides ? view->strides[i] : 0;
        if (bs % view->itemsize != 0) byte_aligned = 0;
        if (sp->dims[i] > 1 && (bs % view->itemsize != 0 || bs / view->itemsize != sp->strides[i]))
            strides_ok = 0;
    }
    if (!strides_ok) {
        format_ints(sp->strides, sp->ndim, want_dims, sizeof(want_dims));
        if (byte_aligned) {
            int64_t got[HIPDNN_MAX_DIMS];
            for (int i = 0; i < sp->ndim; i++)
                got[i] = (int64_t)(view->strides[i] / view->itemsize);
            format_ints(got, sp->ndim, got_dims, sizeof(got_dims));
            PyErr_Format(PyExc_ValueError,
                         "variant pack: %s expects strides %s (in elements), got %s", label,
                         want_dims, got_dims);
        } else {
            format_ssizes(view->strides, view->ndim, got_dims, sizeof(got_dims));
            PyErr_Format(PyExc_ValueError,
                         "variant pack: %s expects strides %s (in elements), got byte "
                         "strides %s that are not multiples of the element size %zd",
                         label, want_dims, got_dims, view->itemsize);
        }
        goto fail;
    }
    return 0;
fail:
    PyBuffer_Release(view);
    return -1;
}

/* The device address of a tensor's data.  Host arrays only, for now: this is where
 * DLPack / __cuda_array_interface__ objects will be resolved. */
static int resolve_pointer(const spec_t* sp, PyObject* obj, Py_buffer* view, void** ptr) {
    if (acquire_checked(sp, obj, view) < 0) return -1;
    *ptr = view->buf;
    return 0;
}

/* Minimal FASTCALL keyword parsing: fills out[] by position or keyword name. */
static int parse_fast(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                      const char* const* names, int nnames, int nrequired, PyObject** out) {
    for (int i = 0; i < nnames; i++) out[i] = NULL;
    if (nargs > nnames) {
        PyErr_Format(PyExc_TypeError, "execute() takes at most %d arguments (%zd given)", nnames,
                     nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nargs; i++) out[i] = args[i];
    Py_ssize_t nkw = kwnames ? PyTuple_Size(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject* key = PyTuple_GetItem(kwnames, k);
        const char* s = key ? PyUnicode_AsUTF8AndSize(key, NULL) : NULL;
        if (!s) return -1;
        int found = -1;
        for (int i = 0; i < nnames; i++)
            if (strcmp(s, names[i]) == 0) found = i;
        if (found < 0) {
            PyErr_Format(PyExc_TypeError, "execute() got an unexpected keyword argument '%s'", s);
            return -1;
        }
        if (out[found]) {
            PyErr_Format(PyExc_TypeError, "execute() got multiple values for argument '%s'", s);
            return -1;
        }
        out[found] = args[nargs + k];
    }
    for (int i = 0; i < nrequired; i++) {
        if (!out[i]) {
            PyErr_Format(PyExc_TypeError, "execute() missing required argument '%s'", names[i]);
            return -1;
        }
    }
    return 0;
}

PyObject* hd_execute(PyObject* module, PyObject* const* args, Py_ssize_t nargs,
                     PyObject* kwnames) {
    static const char* const names[] = {"handle", "plan", "specs", "arrays", "workspace",
                                        "workspace_size"};
    hd_state* st = hd_get_state(module);
    PyObject* a[6];
    if (parse_fast(args, nargs, kwnames, names, 6, 4, a) < 0) return NULL;
    PyObject *handle_obj = a[0], *plan_obj = a[1], *specs_obj = a[2], *arrays_obj = a[3];
    PyObject* ws_obj = a[4] ? a[4] : Py_None;
    long long ws_size = 0;
    if (a[5] && a[5] != Py_None) {
        ws_size = PyLong_AsLongLong(a[5]);
        if (ws_size == -1 && PyErr_Occurred()) return NULL;
        if (ws_size < 0) {
            PyErr_Format(PyExc_ValueError, "execute: workspace_size %lld < 0", ws_size);
            return NULL;
        }
    }
    if (!PyObject_TypeCheck(handle_obj, st->HandleType))
        return hd_type_error("execute: handle must be a hipdnn._C.Handle", handle_obj);
    if (!PyObject_TypeCheck(plan_obj, st->DescriptorType))
        return hd_type_error("execute: plan must be an EXECUTION_PLAN Descriptor", plan_obj);
    hd_Handle* handle = (hd_Handle*)handle_obj;
    hd_Descriptor* plan = (hd_Descriptor*)plan_obj;
    if (!plan->desc) {
        PyErr_SetString(PyExc_ValueError, "execute: the plan has been released");
        return NULL;
    }

    PyObject* specs = PySequence_Tuple(specs_obj);
    if (!specs) return NULL;
    PyObject* arrays = PySequence_Tuple(arrays_obj);
    if (!arrays) {
        Py_DECREF(specs);
        return NULL;
    }
    Py_ssize_t n = PyTuple_Size(specs);
    PyObject* result = NULL;
    spec_t* sp = NULL;
    Py_buffer* views = NULL;
    int64_t* uids = NULL;
    void** ptrs = NULL;
    Py_ssize_t acquired = 0;
    Py_buffer ws_view;
    int ws_held = 0;
    void* ws_own = NULL;
    void* ws_ptr = NULL;
    hipdnnBackendDescriptor_t vp = NULL;

    if (PyTuple_Size(arrays) != n) {
        PyErr_Format(PyExc_ValueError, "execute: %zd specs but %zd arrays", n,
                     PyTuple_Size(arrays));
        goto done;
    }
    sp = PyMem_Calloc((size_t)n + 1, sizeof(spec_t));
    views = PyMem_Calloc((size_t)n + 1, sizeof(Py_buffer));
    uids = PyMem_Calloc((size_t)n + 1, sizeof(int64_t));
    ptrs = PyMem_Calloc((size_t)n + 1, sizeof(void*));
    if (!sp || !views || !uids || !ptrs) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (parse_spec(PyTuple_GetItem(specs, i), i, &sp[i]) < 0) goto done;
        if (resolve_pointer(&sp[i], PyTuple_GetItem(arrays, i), &views[i], &ptrs[i]) < 0)
            goto done;
        acquired = i + 1;
        uids[i] = sp[i].uid;
    }

    if (ws_obj != Py_None) {
        if (PyObject_GetBuffer(ws_obj, &ws_view, PyBUF_WRITABLE) < 0) {
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError,
                            "execute: workspace must be a writable, contiguous buffer (e.g. "
                            "numpy.empty(size, numpy.uint8))");
            goto done;
        }
        ws_held = 1;
        if ((long long)ws_view.len < ws_size) {
            PyErr_Format(PyExc_ValueError,
                         "execute: workspace has %zd bytes but the plan needs %lld",
                         ws_view.len, ws_size);
            goto done;
        }
        ws_ptr = ws_view.len ? ws_view.buf : NULL;
    } else if (ws_size > 0) {
        ws_own = calloc((size_t)ws_size, 1);
        if (!ws_own) {
            PyErr_NoMemory();
            goto done;
        }
        ws_ptr = ws_own;
    }

    if (hd_check(st, hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &vp),
                 "execute: variant pack") < 0)
        goto done;
    if (hd_check(st, hipdnnBackendSetAttribute(vp, HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
                                               HIPDNN_TYPE_INT64, (int64_t)n, uids),
                 "execute: variant pack") < 0 ||
        hd_check(st, hipdnnBackendSetAttribute(vp, HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                               HIPDNN_TYPE_VOID_PTR, (int64_t)n, ptrs),
                 "execute: variant pack") < 0 ||
        hd_check(st, hipdnnBackendSetAttribute(vp, HIPDNN_ATTR_VARIANT_PACK_WORKSPACE,
                                               HIPDNN_TYPE_VOID_PTR, 1, &ws_ptr),
                 "execute: variant pack") < 0 ||
        hd_check(st, hipdnnBackendFinalize(vp), "execute: variant pack") < 0)
        goto done;

    hipdnnStatus_t s;
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(handle->lock, WAIT_LOCK);
    s = hipdnnBackendExecute(handle->handle, plan->desc, vp);
    PyThread_release_lock(handle->lock);
    Py_END_ALLOW_THREADS
    if (hd_check(st, s, NULL) < 0) goto done;
    result = Py_NewRef(Py_None);

done:
    hipdnnBackendDestroyDescriptor(vp);
    for (Py_ssize_t i = 0; i < acquired; i++) PyBuffer_Release(&views[i]);
    if (ws_held) PyBuffer_Release(&ws_view);
    free(ws_own);
    PyMem_Free(ptrs);
    PyMem_Free(uids);
    PyMem_Free(views);
    PyMem_Free(sp);
    Py_DECREF(arrays);
    Py_DECREF(specs);
    return result;
}
