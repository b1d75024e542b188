/* errors.c — backend status -> Python exception carrying the backend's message.
 *
 * BAD_PARAM* statuses are the caller's mistake (InvalidGraphError, also a ValueError);
 * NOT_SUPPORTED says no engine or feature applies; everything else is a HipdnnError.
 * Each exception carries .status (int) and .status_name (str).
 *
 * Queued backend log messages are delivered (log.c) before a status is checked, so that
 * a callback sees what the backend said about a call before its exception.
 */
#include <stdio.h>
#include <string.h>

#include "module.h"

static PyObject* exception_class(hd_state* st, hipdnnStatus_t status) {
    switch (status) {
    case HIPDNN_STATUS_BAD_PARAM:
    case HIPDNN_STATUS_BAD_PARAM_NULL_POINTER:
    case HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED:
    case HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND:
        return st->InvalidGraphError;
    case HIPDNN_STATUS_NOT_SUPPORTED:
        return st->NotSupportedError;
    default:
        return st->HipdnnError;
    }
}

PyObject* hd_raise_status(hd_state* st, hipdnnStatus_t status, const char* context) {
    /* The message is thread-local and a log callback may call hipdnn again: take the
     * message first, deliver queued log messages afterwards. */
    char saved[1024];
    const char* last = hipdnnPeekLastErrorString_ext();
    snprintf(saved, sizeof(saved), "%s", last ? last : "");
    hd_log_flush(st);

    const char* name = hipdnnGetErrorString(status);
    const char* text = saved[0] ? saved : name;
    /* Backend messages quote user data (names from deserialized bytes): never fail on
     * invalid UTF-8. */
    PyObject* msg = context ? PyUnicode_FromFormat("%s: %s", context, text)
                            : PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text), "replace");
    if (!msg) return NULL;
    PyObject* cls = exception_class(st, status);
    PyObject* exc = PyObject_CallFunctionObjArgs(cls, msg, NULL);
    Py_DECREF(msg);
    if (!exc) return NULL;
    PyObject* code = PyLong_FromLong((long)status);
    PyObject* sname = PyUnicode_FromString(name);
    int bad = !code || !sname || PyObject_SetAttrString(exc, "status", code) < 0 ||
              PyObject_SetAttrString(exc, "status_name", sname) < 0;
    Py_XDECREF(code);
    Py_XDECREF(sname);
    if (!bad) PyErr_SetObject(cls, exc);
    Py_DECREF(exc);
    return NULL;
}

void hd_log_flush(hd_state* st) { hd_log_deliver(st->log_callback); }

int hd_check(hd_state* st, hipdnnStatus_t status, const char* context) {
    if (status == HIPDNN_STATUS_SUCCESS) {
        hd_log_flush(st);
        return 0;
    }
    hd_raise_status(st, status, context);
    return -1;
}

/* _C.status_name(status) -> "HIPDNN_STATUS_..." */
PyObject* hd_status_name(PyObject* module, PyObject* arg) {
    (void)module;
    long v = PyLong_AsLong(arg);
    if (v == -1 && PyErr_Occurred()) return NULL;
    return PyUnicode_FromString(hipdnnGetErrorString((hipdnnStatus_t)v));
}
