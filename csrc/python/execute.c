/* execute.c — VariantPack.execute: run the pack's plan on arrays, each checked against
 * the pack compiled from the plan (variant_pack.c), then hipdnnBackendExecute without the
 * GIL.
 *
 *   pack.execute(handle, arrays, workspace=None)
 *
 * arrays is a list or tuple in pack order (pack.uids) or a dict {uid: array}.  Every check
 * names the tensor ("variant pack: tensor 'x' (uid 1) expects float16 [8, 3, 5, 5], got
 * float32 [8, 3, 5, 5]").  Strides are compared in elements and only where the dim is
 * larger than 1, since a size-1 dim's stride never addresses memory.  With dtype, shape
 * and strides equal to the plan's, every element the engine addresses lies inside the
 * array that was given.
 *
 * The success path parses nothing but the arrays and formats no text: labels and numbers
 * are written only when an error is reported.
 *
 * Host arrays come in through the buffer protocol; device memory as a hipdnn.DeviceArray
 * or any object with __dlpack__ or __cuda_array_interface__ (interop.c), checked the same
 * way.  Each pointer's memory space is declared to the backend as its source says it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_call.h"

/* ---- error reporting (only ever on the failure path) --------------------------------- */

/* "tensor 'x' (uid 1)" or "tensor with uid 1" for an unnamed one. */
static void tensor_label(const hd_pack_tensor* t, char* buf, size_t len) {
    if (t->name && t->name[0])
        snprintf(buf, len, "tensor '%s' (uid %lld)", t->name, (long long)t->uid);
    else
        snprintf(buf, len, "tensor with uid %lld", (long long)t->uid);
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
    if (n < 0) n = 0;
    for (int i = 0; i < n; i++) tmp[i] = v ? (int64_t)v[i] : 0;
    format_ints(tmp, n, buf, len);
}

static void raise_not_a_buffer(const hd_pack_tensor* t, PyObject* obj) {
    char label[320];
    tensor_label(t, label, sizeof(label));
    PyObject* tname = PyType_GetName(Py_TYPE(obj));
    if (!tname) return;
    PyErr_Format(PyExc_TypeError,
                 "variant pack: %s needs an array with the buffer protocol (a NumPy array), "
                 "got %U",
                 label, tname);
    Py_DECREF(tname);
}

/* The buffer refused: say "read-only" when that is why, else pass the reason on. */
static void raise_refused(const hd_pack_tensor* t, PyObject* obj) {
    char label[320];
    tensor_label(t, label, sizeof(label));
    if (t->is_output) {
        Py_buffer ro;
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        if (PyObject_GetBuffer(obj, &ro, PyBUF_RECORDS_RO) == 0) {
            PyBuffer_Release(&ro);
            Py_XDECREF(et);
            Py_XDECREF(ev);
            Py_XDECREF(tb);
            PyErr_Format(PyExc_ValueError,
                         "variant pack: %s is an output but its array is read-only", label);
            return;
        }
        PyErr_Clear();
        PyErr_Restore(et, ev, tb);
    }
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    PyErr_Format(PyExc_ValueError, "variant pack: %s: cannot read the array's buffer (%S)", label,
                 ev ? ev : Py_None);
    Py_XDECREF(et);
    Py_XDECREF(ev);
    Py_XDECREF(tb);
}

static void raise_mismatch(const hd_pack_tensor* t, const Py_buffer* view, int dtype_ok) {
    char label[320], want[256], got[256], got_type[64];
    tensor_label(t, label, sizeof(label));
    hd_format_name(view->format, view->itemsize, got_type, sizeof(got_type));
    format_ints(t->dims, t->ndim, want, sizeof(want));
    format_ssizes(view->shape, view->ndim, got, sizeof(got));
    const char* hint = "";
    if (!dtype_ok && t->dtype == HIPDNN_DATA_BFLOAT16)
        hint = " (bfloat16 takes uint16 bit patterns: see hipdnn.to_bfloat16)";
    PyErr_Format(PyExc_ValueError, "variant pack: %s expects %s %s, got %s %s%s", label,
                 hipdnnSdkDataTypeName(t->dtype), want, got_type, got, hint);
}

static void raise_strides(const hd_pack_tensor* t, const Py_ssize_t* byte_strides,
                          Py_ssize_t itemsize) {
    char label[320], want[256], got[256];
    tensor_label(t, label, sizeof(label));
    format_ints(t->strides, t->ndim, want, sizeof(want));
    int whole = 1;
    int64_t elems[HIPDNN_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++) {
        if (byte_strides[i] % itemsize != 0) whole = 0;
        elems[i] = (int64_t)(byte_strides[i] / itemsize);
    }
    if (whole) {
        format_ints(elems, t->ndim, got, sizeof(got));
        PyErr_Format(PyExc_ValueError,
                     "variant pack: %s expects strides %s (in elements), got %s", label, want,
                     got);
    } else {
        format_ssizes(byte_strides, t->ndim, got, sizeof(got));
        PyErr_Format(PyExc_ValueError,
                     "variant pack: %s expects strides %s (in elements), got byte strides %s "
                     "that are not multiples of the element size %zd",
                     label, want, got, itemsize);
    }
}

/* ---- the checks ------------------------------------------------------------------- */

/* Gets the buffer of `obj` for tensor `t`, with every check.  On success the caller
 * owns *view; on failure nothing is held. */
static int acquire_checked(const hd_pack_tensor* t, PyObject* obj, Py_buffer* view) {
    if (!PyObject_CheckBuffer(obj)) {
        raise_not_a_buffer(t, obj);
        return -1;
    }
    if (PyObject_GetBuffer(obj, view, t->is_output ? PyBUF_RECORDS : PyBUF_RECORDS_RO) < 0) {
        raise_refused(t, obj);
        return -1;
    }
    int dtype_ok = hd_format_matches(view->format, view->itemsize, t->dtype);
    int shape_ok = view->ndim == t->ndim && view->shape != NULL;
    for (int i = 0; shape_ok && i < t->ndim; i++) shape_ok = view->shape[i] == t->dims[i];
    if (!dtype_ok || !shape_ok) {
        raise_mismatch(t, view, dtype_ok);
        goto fail;
    }
    /* From here the itemsize is the dtype's (> 0) and the shape is the plan's. */
    Py_ssize_t c_strides[HIPDNN_MAX_DIMS];
    const Py_ssize_t* bs = view->strides;
    if (!bs) { /* the buffer protocol's "C-contiguous" */
        Py_ssize_t acc = view->itemsize;
        for (int i = t->ndim - 1; i >= 0; i--) {
            c_strides[i] = acc;
            acc *= view->shape[i];
        }
        bs = c_strides;
    }
    for (int i = 0; i < t->ndim; i++) {
        if (t->dims[i] > 1 &&
            (bs[i] % view->itemsize != 0 || bs[i] / view->itemsize != t->strides[i])) {
            raise_strides(t, bs, view->itemsize);
            goto fail;
        }
    }
    return 0;
fail:
    PyBuffer_Release(view);
    return -1;
}

/* A device value (interop.c) checked against the tensor: dtype, shape, strides in
 * elements (where the dim is above 1), writable for an output.  A ragged tensor's shape and
 * strides are not checked: where its samples lie is its offsets' device data, and cuDNN
 * frontend hands over the batch's tokens alone ([T, H, D] for [B, H, S, D]), a pointer as
 * cuDNN takes (issue 25). */
static int check_value(const hd_pack_tensor* t, const hd_value* v) {
    char label[320], want[256], got[256];
    int dtype_ok = v->dtype == t->dtype ||
                   (t->dtype == HIPDNN_DATA_BFLOAT16 && v->dtype == HD_DTYPE_UINT16);
    int shape_ok = v->ndim == t->ndim || t->ragged;
    for (int i = 0; shape_ok && !t->ragged && i < t->ndim; i++) shape_ok = v->shape[i] == t->dims[i];
    if (!dtype_ok || !shape_ok) {
        tensor_label(t, label, sizeof(label));
        format_ints(t->dims, t->ndim, want, sizeof(want));
        format_ints(v->shape, v->ndim, got, sizeof(got));
        PyErr_Format(PyExc_ValueError, "variant pack: %s expects %s %s, got %s %s (%s)", label,
                     hipdnnSdkDataTypeName(t->dtype), want, v->type_name, got, v->kind);
        return -1;
    }
    for (int i = 0; i < t->ndim && !t->ragged; i++) {
        if (t->dims[i] > 1 && v->strides[i] != t->strides[i]) {
            tensor_label(t, label, sizeof(label));
            format_ints(t->strides, t->ndim, want, sizeof(want));
            format_ints(v->strides, v->ndim, got, sizeof(got));
            PyErr_Format(PyExc_ValueError, "variant pack: %s expects strides %s (in elements), "
                         "got %s (%s)", label, want, got, v->kind);
            return -1;
        }
    }
    if (t->is_output && v->readonly) {
        tensor_label(t, label, sizeof(label));
        PyErr_Format(PyExc_ValueError, "variant pack: %s is an output but its %s array is "
                     "read-only", label, v->kind);
        return -1;
    }
    return 0;
}

static void release_array(held_array* h) {
    if (h->held == HELD_BUFFER) PyBuffer_Release(&h->view);
    else if (h->held == HELD_VALUE) hd_value_release(&h->value);
    h->held = HELD_NONE;
}

/* CuPy arrays offer the buffer protocol too, only to refuse it: what the type says of
 * __cuda_array_interface__ decides (on the type, so that no property runs). */
static int type_has_cai(hd_state* st, PyObject* obj) {
    return PyObject_HasAttr((PyObject*)Py_TYPE(obj), st->str_cai) > 0;
}

/* The address and memory space of a tensor's data: a host buffer (buffer protocol), or
 * device memory (interop.c) made ready for use on `stream`. */
static int resolve_pointer(hd_state* st, const hd_pack_tensor* t, PyObject* obj,
                           hipdnnStream_t stream, held_array* h, void** ptr, int64_t* space) {
    if (PyObject_CheckBuffer(obj) && !PyObject_TypeCheck(obj, st->DeviceArrayType) &&
        !type_has_cai(st, obj)) {
        if (acquire_checked(t, obj, &h->view) < 0) return -1;
        h->held = HELD_BUFFER;
        *ptr = h->view.buf;
        *space = HIPDNN_MEMORY_HOST;
        return 0;
    }
    char label[360], what[400];
    tensor_label(t, label, sizeof(label));
    snprintf(what, sizeof(what), "variant pack: %s", label);
    if (hd_value_acquire(st, obj, stream, what, &h->value) < 0) return -1;
    h->held = HELD_VALUE;
    if (check_value(t, &h->value) < 0) return -1;
    *ptr = h->value.ptr;
    *space = h->value.space;
    return 0;
}

/* ---- arguments ------------------------------------------------------------------- */

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

/* Index of `uid` in the pack, or -1: a scan of n int64s, no allocation. */
static Py_ssize_t index_of(const hd_VariantPack* pack, int64_t uid) {
    for (Py_ssize_t i = 0; i < pack->n; i++)
        if (pack->uids[i] == uid) return i;
    return -1;
}

/* Fills objs[0..n) with new references to the arrays in pack order.  Nothing here runs
 * Python code, so the container cannot change under the loop; the references keep each
 * array alive whatever the buffer exports below do. */
static int collect_arrays(const hd_VariantPack* pack, PyObject* arrays, PyObject** objs) {
    Py_ssize_t n = pack->n;
    if (PyDict_Check(arrays)) {
        Py_ssize_t pos = 0;
        PyObject *key, *value;
        while (PyDict_Next(arrays, &pos, &key, &value)) {
            if (!PyLong_Check(key) || PyBool_Check(key)) {
                hd_type_error("variant pack: keys must be uids (int)", key);
                return -1;
            }
            long long uid = PyLong_AsLongLong(key); /* an int: runs no Python code */
            if (uid == -1 && PyErr_Occurred()) return -1;
            Py_ssize_t i = index_of(pack, (int64_t)uid);
            if (i < 0) {
                PyErr_Format(PyExc_ValueError,
                             "variant pack: uid %lld is not a tensor of the plan's graph that "
                             "takes an array",
                             uid);
                return -1;
            }
            if (objs[i]) {
                char label[320];
                tensor_label(&pack->tensors[i], label, sizeof(label));
                PyErr_Format(PyExc_ValueError, "variant pack: %s is given twice", label);
                return -1;
            }
            objs[i] = Py_NewRef(value);
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            if (!objs[i]) {
                char label[320];
                tensor_label(&pack->tensors[i], label, sizeof(label));
                PyErr_Format(PyExc_ValueError, "variant pack: no array for %s", label);
                return -1;
            }
        }
        return 0;
    }
    int is_list = PyList_Check(arrays);
    if (!is_list && !PyTuple_Check(arrays)) {
        hd_type_error("variant pack: expected a list or tuple of arrays in pack order, or a "
                      "dict {uid: array}",
                      arrays);
        return -1;
    }
    Py_ssize_t len = is_list ? PyList_Size(arrays) : PyTuple_Size(arrays);
    if (len != n) {
        PyErr_Format(PyExc_ValueError, "variant pack: %zd arrays for %zd tensors (pack order: "
                     "see VariantPack.uids)", len, n);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject* item = is_list ? PyList_GetItem(arrays, i) : PyTuple_GetItem(arrays, i);
        if (!item) return -1;
        objs[i] = Py_NewRef(item);
    }
    return 0;
}

/* The workspace: the caller's buffer or device array (held in *h), memory allocated here
 * (*own / *own_device, freed by the caller), or none.  Never smaller than the plan's size. */
static int get_workspace(hd_state* st, const hd_VariantPack* pack, PyObject* ws_obj,
                         hipdnnStream_t stream, held_array* h, void** own, void** own_device,
                         void** ptr) {
    long long need = (long long)pack->workspace_size;
    if (ws_obj && ws_obj != Py_None && (!PyObject_CheckBuffer(ws_obj) ||
                                        PyObject_TypeCheck(ws_obj, st->DeviceArrayType))) {
        if (hd_value_acquire(st, ws_obj, stream, "execute: workspace", &h->value) < 0) return -1;
        h->held = HELD_VALUE;
        int64_t bytes = 0;
        if (hd_value_span_bytes(&h->value, &bytes) < 0) {
            PyErr_Format(PyExc_ValueError, "execute: workspace (%s) is %s: a workspace takes one "
                         "of hipdnn's data types (whole bytes, one lane) and strides that are "
                         "not negative", h->value.kind, h->value.type_name);
            return -1;
        }
        if (h->value.readonly || bytes < need) {
            PyErr_Format(PyExc_ValueError, "execute: workspace (%s) has %lld bytes%s but the "
                         "plan needs %lld", h->value.kind, (long long)bytes,
                         h->value.readonly ? " and is read-only" : "", need);
            return -1;
        }
        *ptr = h->value.ptr;
        return 0;
    }
    if (ws_obj && ws_obj != Py_None) {
        Py_buffer* view = &h->view;
        if (PyObject_GetBuffer(ws_obj, view, PyBUF_WRITABLE) < 0) {
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError,
                            "execute: workspace must be a writable, contiguous buffer (e.g. "
                            "numpy.empty(size, numpy.uint8))");
            return -1;
        }
        h->held = HELD_BUFFER;
        if ((long long)view->len < need) {
            PyErr_Format(PyExc_ValueError,
                         "execute: workspace has %zd bytes but the plan needs %lld", view->len,
                         need);
            return -1;
        }
        *ptr = view->len ? view->buf : NULL;
        return 0;
    }
    if (need == 0) return 0;
    if (pack->memory_space != HIPDNN_MEMORY_HOST) {
        /* Allocated for this call and freed after the stream finished (slow: pass a
         * workspace to avoid both); never while the stream captures a graph. */
        int capturing = 0;
        if (hipdnnStreamIsCapturing_ext(stream, &capturing) == HIPDNN_STATUS_SUCCESS && capturing) {
            PyErr_Format(PyExc_ValueError, "execute: the handle's stream is capturing a graph "
                         "and the plan needs a workspace of %lld bytes: pass one (none can be "
                         "allocated, nor freed after the run, during a capture)", need);
            return -1;
        }
        hipdnnStatus_t s;
        Py_BEGIN_ALLOW_THREADS
        s = hipdnnDeviceMalloc_ext(own_device, (size_t)need);
        Py_END_ALLOW_THREADS
        if (hd_check(st, s, "execute: device workspace") < 0) return -1;
        *ptr = *own_device;
        return 0;
    }
    *own = calloc((size_t)need, 1);
    if (!*own) {
        PyErr_NoMemory();
        return -1;
    }
    *ptr = *own;
    return 0;
}

static const char VP_CTX[] = "execute: variant pack";

/* A finalized VARIANT_PACK descriptor over uids/ptrs/workspace; NULL with an exception. */
/* spaces: each pointer's memory space as its source declares it. */
hipdnnBackendDescriptor_t hd_make_variant_pack(hd_state* st, const hd_VariantPack* pack,
                                                   void** ptrs, const int64_t* spaces,
                                                   void* ws_ptr) {
    hipdnnBackendDescriptor_t vp = NULL;
    if (hd_check(st, hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &vp),
                 VP_CTX) < 0)
        return NULL;
    if (hd_check(st, hipdnnBackendSetAttribute(vp, HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
                                               HIPDNN_TYPE_INT64, (int64_t)pack->n, pack->uids),
                 VP_CTX) < 0 ||
        hd_check(st, hipdnnBackendSetAttribute(vp, HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                               HIPDNN_TYPE_VOID_PTR, (int64_t)pack->n, ptrs),
                 VP_CTX) < 0 ||
        hd_check(st, hipdnnBackendSetAttribute(vp, HIPDNN_ATTR_VARIANT_PACK_MEMORY_SPACES_EXT,
                                               HIPDNN_TYPE_INT64, (int64_t)pack->n, spaces),
                 VP_CTX) < 0 ||
        hd_check(st, hipdnnBackendSetAttribute(vp, HIPDNN_ATTR_VARIANT_PACK_WORKSPACE,
                                               HIPDNN_TYPE_VOID_PTR, 1, &ws_ptr),
                 VP_CTX) < 0 ||
        hd_check(st, hipdnnBackendFinalize(vp), VP_CTX) < 0) {
        hipdnnBackendDestroyDescriptor(vp);
        vp = NULL;
    }
    return vp;
}

/* ---- execute ------------------------------------------------------------------- */

/* -1 with MemoryError when the per-tensor arrays cannot be had; c is releasable either way. */
int hd_call_init(exec_call* c, Py_ssize_t n) {
    c->n = n;
    c->ws_held = (held_array){0};
    c->ws_own = c->ws_device = c->ws_ptr = NULL;
    c->stream = NULL;
    if (n <= STACK_TENSORS) {
        c->objs = c->stack_objs;
        c->held = c->stack_held;
        c->ptrs = c->stack_ptrs;
        c->spaces = c->stack_spaces;
        memset(c->stack_objs, 0, sizeof(c->stack_objs));
        for (Py_ssize_t i = 0; i < n; i++) c->stack_held[i].held = HELD_NONE;
        return 0;
    }
    c->objs = PyMem_Calloc((size_t)n, sizeof(*c->objs));
    c->held = PyMem_Calloc((size_t)n, sizeof(*c->held));
    c->ptrs = PyMem_Calloc((size_t)n, sizeof(*c->ptrs));
    c->spaces = PyMem_Calloc((size_t)n, sizeof(*c->spaces));
    if (!c->objs || !c->held || !c->ptrs || !c->spaces) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

void hd_call_release(exec_call* c) {
    if (c->held)
        for (Py_ssize_t i = 0; i < c->n; i++) release_array(&c->held[i]);
    release_array(&c->ws_held);
    free(c->ws_own);
    if (c->ws_device) {
        Py_BEGIN_ALLOW_THREADS
        hipdnnStreamSynchronize_ext(c->stream); /* the engine may still be using it */
        hipdnnDeviceFree_ext(c->ws_device);
        Py_END_ALLOW_THREADS
    }
    if (c->objs)
        for (Py_ssize_t i = 0; i < c->n; i++) Py_XDECREF(c->objs[i]);
    if (c->objs != c->stack_objs) {
        PyMem_Free(c->objs);
        PyMem_Free(c->held);
        PyMem_Free(c->ptrs);
        PyMem_Free(c->spaces);
    }
}

/* The handle's stream, the pointer and memory space of each of c->objs (checked against
 * the pack), and the workspace, into c; -1 with an exception. */
static int resolve_all(hd_state* st, const hd_VariantPack* pack, hd_Handle* handle,
                       PyObject* ws_obj, exec_call* c) {
    if (hd_check(st, hipdnnGetStream(handle->handle, &c->stream), "execute") < 0) return -1;
    for (Py_ssize_t i = 0; i < c->n; i++)
        if (resolve_pointer(st, &pack->tensors[i], c->objs[i], c->stream, &c->held[i],
                            &c->ptrs[i], &c->spaces[i]) < 0)
            return -1;
    return get_workspace(st, pack, ws_obj, c->stream, &c->ws_held, &c->ws_own, &c->ws_device,
                         &c->ws_ptr);
}

/* The handle's stream, every array's pointer and memory space (checked against the
 * pack), and the workspace, into c; -1 with an exception. */
int hd_call_gather(hd_state* st, const hd_VariantPack* pack, hd_Handle* handle,
                   PyObject* arrays, PyObject* ws_obj, exec_call* c) {
    if (collect_arrays(pack, arrays, c->objs) < 0) return -1;
    return resolve_all(st, pack, handle, ws_obj, c);
}

/* hipdnnBackendExecute without the GIL, under the handle's lock. */
static int execute_without_gil(hd_state* st, hd_Handle* handle, hipdnnBackendDescriptor_t plan,
                               hipdnnBackendDescriptor_t vp) {
    PyThread_type_lock lock = hd_handle_lock(handle);
    if (!lock) return -1;
    hipdnnStatus_t s;
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(lock, WAIT_LOCK);
    s = hipdnnBackendExecute(handle->handle, plan, vp);
    PyThread_release_lock(lock);
    Py_END_ALLOW_THREADS
    return hd_check(st, s, NULL);
}

/* DeviceArrays remember the stream, so that their exports wait for the call's work. */
static void mark_streams(hd_state* st, const exec_call* c) {
    for (Py_ssize_t i = 0; i < c->n; i++)
        if (c->held[i].held == HELD_VALUE && PyObject_TypeCheck(c->objs[i], st->DeviceArrayType))
            hd_device_array_mark_stream(c->objs[i], c->stream);
}

PyObject* hd_pack_execute(PyObject* op, PyObject* const* args, Py_ssize_t nargs,
                          PyObject* kwnames) {
    static const char* const names[] = {"handle", "arrays", "workspace"};
    hd_VariantPack* pack = (hd_VariantPack*)op;
    hd_state* st = hd_state_of(op);
    PyObject* a[3];
    if (parse_fast(args, nargs, kwnames, names, 3, 2, a) < 0) return NULL;
    if (!PyObject_TypeCheck(a[0], st->HandleType))
        return hd_type_error("execute: handle must be a hipdnn._C.Handle", a[0]);
    hd_Handle* handle = (hd_Handle*)a[0];
    /* Our own reference: the plan outlives this call whatever happens to the pack. */
    PyObject* plan_obj = pack->plan ? Py_NewRef(pack->plan) : NULL;
    hipdnnBackendDescriptor_t plan = plan_obj ? ((hd_Descriptor*)plan_obj)->desc : NULL;
    if (!plan || !handle->handle) {
        PyErr_SetString(PyExc_ValueError, plan ? "execute: the handle has been destroyed"
                                               : "execute: the plan has been released");
        Py_XDECREF(plan_obj);
        return NULL;
    }
    exec_call c;
    hipdnnBackendDescriptor_t vp = NULL;
    PyObject* result = NULL;
    if (hd_call_init(&c, pack->n) == 0 && hd_call_gather(st, pack, handle, a[1], a[2], &c) == 0 &&
        (vp = hd_make_variant_pack(st, pack, c.ptrs, c.spaces, c.ws_ptr)) != NULL &&
        execute_without_gil(st, handle, plan, vp) == 0) {
        mark_streams(st, &c);
        result = Py_NewRef(Py_None);
    }
    if (vp) hipdnnBackendDestroyDescriptor(vp);
    hd_call_release(&c);
    Py_DECREF(plan_obj);
    return result;
}

/* ---- pygraph's fast path ------------------------------------------------------------ */

/* c->objs from a dict holding exactly `keys` (pack order), each value neither None nor an
 * int (a device address pygraph wraps first); 0 when the dict is otherwise. */
static int collect_keyed(const hd_VariantPack* pack, PyObject* dict, PyObject* keys,
                         exec_call* c) {
    if (!PyDict_CheckExact(dict) || !PyTuple_CheckExact(keys) ||
        PyTuple_Size(keys) != pack->n || PyDict_Size(dict) != pack->n)
        return 0;
    for (Py_ssize_t i = 0; i < pack->n; i++) {
        PyObject* v = PyDict_GetItemWithError(dict, PyTuple_GetItem(keys, i));
        if (!v || v == Py_None || PyLong_Check(v)) return 0;
        c->objs[i] = Py_NewRef(v);
    }
    return 1;
}

/* 1: ran; 0: not run (the caller takes the checked way); -1: the engine failed. */
static int run_keyed(hd_state* st, hd_VariantPack* pack, hd_Handle* handle,
                     hipdnnBackendDescriptor_t plan, PyObject* const* args, exec_call* c) {
    hipdnnBackendDescriptor_t vp = NULL;
    if (hd_call_init(c, pack->n) < 0 || !collect_keyed(pack, args[1], args[2], c) ||
        resolve_all(st, pack, handle, args[3], c) < 0 ||
        !(vp = hd_make_variant_pack(st, pack, c->ptrs, c->spaces, c->ws_ptr)))
        return 0;
    PyThread_type_lock lock = hd_handle_lock(handle);
    hipdnnStatus_t s = HIPDNN_STATUS_NOT_INITIALIZED;
    if (lock) {
        Py_BEGIN_ALLOW_THREADS
        PyThread_acquire_lock(lock, WAIT_LOCK);
        s = hipdnnBackendExecute(handle->handle, plan, vp);
        PyThread_release_lock(lock);
        Py_END_ALLOW_THREADS
    }
    hipdnnBackendDestroyDescriptor(vp);
    if (s == HIPDNN_STATUS_SUCCESS) mark_streams(st, c);
    /* only the engine's own failure comes after it ran: any other is the checks' */
    if (s == HIPDNN_STATUS_EXECUTION_FAILED) return hd_check(st, s, NULL);
    return s == HIPDNN_STATUS_SUCCESS;
}

PyObject* hd_pack_run_keyed(PyObject* op, PyObject* const* args, Py_ssize_t nargs) {
    hd_VariantPack* pack = (hd_VariantPack*)op;
    hd_state* st = hd_state_of(op);
    if (nargs != 4)
        return PyErr_Format(PyExc_TypeError, "run_keyed() takes 4 arguments (%zd given)", nargs);
    if (!PyObject_TypeCheck(args[0], st->HandleType) || !((hd_Handle*)args[0])->handle ||
        !pack->plan || PyLong_Check(args[3]))
        Py_RETURN_FALSE;
    /* Our own reference: the plan outlives this call whatever happens to the pack. */
    PyObject* plan_obj = Py_NewRef(pack->plan);
    hipdnnBackendDescriptor_t plan = ((hd_Descriptor*)plan_obj)->desc;
    exec_call c = {0};
    int rc = plan ? run_keyed(st, pack, (hd_Handle*)args[0], plan, args, &c) : 0;
    if (rc == 0) PyErr_Clear();
    hd_call_release(&c);
    Py_DECREF(plan_obj);
    return rc < 0 ? NULL : PyBool_FromLong(rc);
}
