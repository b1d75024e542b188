/* kernels.c — the kernel-fusion report of a built plan: which nodes each kernel runs. */
#include <string.h>

#include "module.h"

/* _C.plan_kernels(plan: Descriptor) -> [(name, detail, [node index, ...]), ...] */
PyObject* hd_plan_kernels(PyObject* module, PyObject* plan) {
    hd_state* st = hd_get_state(module);
    if (!PyObject_TypeCheck(plan, st->DescriptorType))
        return hd_type_error("plan_kernels: expected an EXECUTION_PLAN Descriptor", plan);
    hd_Descriptor* p = (hd_Descriptor*)plan;
    if (!p->desc) {
        PyErr_SetString(PyExc_ValueError, "plan_kernels: descriptor has been released");
        return NULL;
    }
    int64_t n = 0;
    const hipdnnKernelInfo_ext_t* k = NULL;
    /* The GIL stays held: the backend fills the plan's answer on the first call, and the
     * plugin answers from what its context holds (no device work). */
    if (hd_check(st, hipdnnGetPlanKernels_ext(p->desc, &n, &k), "plan_kernels") < 0) return NULL;
    PyObject* out = PyList_New((Py_ssize_t)n);
    if (!out) return NULL;
    for (int64_t i = 0; i < n; ++i) {
        PyObject* nodes = PyList_New((Py_ssize_t)k[i].num_nodes);
        if (!nodes) goto fail;
        for (int64_t j = 0; j < k[i].num_nodes; ++j) {
            PyObject* v = PyLong_FromLongLong((long long)k[i].nodes[j]);
            if (!v) {
                Py_DECREF(nodes);
                goto fail;
            }
            PyList_SetItem(nodes, (Py_ssize_t)j, v);
        }
        /* engine strings: never fail on invalid UTF-8 */
        PyObject* name = PyUnicode_DecodeUTF8(k[i].name, (Py_ssize_t)strlen(k[i].name), "replace");
        PyObject* detail =
            PyUnicode_DecodeUTF8(k[i].detail, (Py_ssize_t)strlen(k[i].detail), "replace");
        PyObject* item = name && detail ? PyTuple_Pack(3, name, detail, nodes) : NULL;
        Py_XDECREF(name);
        Py_XDECREF(detail);
        Py_DECREF(nodes);
        if (!item) goto fail;
        PyList_SetItem(out, (Py_ssize_t)i, item);
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}
