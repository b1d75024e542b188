/* pack_runs.c — a compiled variant pack's runs other than execute (execute.c):
 * VariantPack.autotune (hipdnnAutotune_ext) and VariantPack.record_graph (graph capture),
 * each on arrays checked as execute checks them. */
#include "exec_call.h"

/* ---- autotune ------------------------------------------------------------------- */

/* The plans' descriptors (each a Descriptor of the list); NULL with an exception. */
static hipdnnBackendDescriptor_t* plan_list(hd_state* st, PyObject* plans, Py_ssize_t* n) {
    if (!PyList_Check(plans) || (*n = PyList_Size(plans)) < 1) {
        PyErr_SetString(PyExc_ValueError, "autotune: plans must be a non-empty list of plans");
        return NULL;
    }
    hipdnnBackendDescriptor_t* v = PyMem_Calloc((size_t)*n, sizeof(*v));
    if (!v) return (hipdnnBackendDescriptor_t*)PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < *n; i++) {
        PyObject* d = PyList_GetItem(plans, i);
        if (!PyObject_TypeCheck(d, st->DescriptorType) || !((hd_Descriptor*)d)->desc) {
            PyMem_Free(v);
            PyErr_Format(PyExc_TypeError, "autotune: plans[%zd] is not a live Descriptor", i);
            return NULL;
        }
        v[i] = ((hd_Descriptor*)d)->desc;
    }
    return v;
}

/* [(status, runs, median_ms, min_ms, timer, message)] per plan. */
static PyObject* autotune_rows(const hipdnnAutotuneResult_ext_t* r, Py_ssize_t n) {
    PyObject* rows = PyList_New(n);
    for (Py_ssize_t i = 0; rows && i < n; i++) {
        PyObject* row = Py_BuildValue("(iiddis)", (int)r[i].status, (int)r[i].runs, r[i].median_ms,
                                      r[i].min_ms, (int)r[i].timer, r[i].message);
        if (!row) Py_CLEAR(rows);
        else PyList_SetItem(rows, i, row);
    }
    return rows;
}

/* hipdnnAutotune_ext without the GIL, under the handle's lock. */
static int autotune_without_gil(hd_state* st, hd_Handle* handle, Py_ssize_t n,
                                const hipdnnBackendDescriptor_t* plans, hipdnnBackendDescriptor_t vp,
                                const hipdnnAutotuneOptions_ext_t* o, hipdnnAutotuneResult_ext_t* r,
                                int64_t* best) {
    PyThread_type_lock lock = hd_handle_lock(handle);
    if (!lock) return -1;
    hipdnnStatus_t s;
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(lock, WAIT_LOCK);
    s = hipdnnAutotune_ext(handle->handle, (int64_t)n, plans, vp, o, r, best);
    PyThread_release_lock(lock);
    Py_END_ALLOW_THREADS
    return hd_check(st, s, "autotune");
}

PyObject* hd_pack_autotune(PyObject* op, PyObject* args, PyObject* kwargs) {
    static char* names[] = {"handle", "arrays", "workspace", "plans", "warmup", "repeat",
                            "budget_ms", "store", NULL};
    hd_VariantPack* pack = (hd_VariantPack*)op;
    hd_state* st = hd_state_of(op);
    PyObject *h, *arrays, *ws, *plans;
    hipdnnAutotuneOptions_ext_t o = {1, 10, 1000.0, 1};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!OOO|iidp", names, st->HandleType, &h,
                                     &arrays, &ws, &plans, &o.warmup, &o.repeat, &o.budget_ms,
                                     &o.store))
        return NULL;
    hd_Handle* handle = (hd_Handle*)h;
    if (hd_handle_live(h, "autotune") < 0) return NULL;
    Py_ssize_t n = 0;
    /* A tuple of our own: the plans stay alive while the GIL is released. */
    PyObject* held = PyList_Check(plans) ? PyList_AsTuple(plans) : NULL;
    hipdnnBackendDescriptor_t* descs = plan_list(st, plans, &n);
    if (!descs || !held) {
        Py_XDECREF(held);
        PyMem_Free(descs);
        return NULL;
    }
    hipdnnAutotuneResult_ext_t* r = PyMem_Calloc((size_t)n, sizeof(*r));
    exec_call c;
    hipdnnBackendDescriptor_t vp = NULL;
    int64_t best = -1;
    PyObject* result = NULL;
    if (!r) PyErr_NoMemory();
    else if (hd_call_init(&c, pack->n) == 0 && hd_call_gather(st, pack, handle, arrays, ws, &c) == 0 &&
             (vp = hd_make_variant_pack(st, pack, c.ptrs, c.spaces, c.ws_ptr)) != NULL &&
             autotune_without_gil(st, handle, n, descs, vp, &o, r, &best) == 0) {
        PyObject* rows = autotune_rows(r, n);
        if (rows) result = Py_BuildValue("(LN)", (long long)best, rows);
    }
    if (vp) hipdnnBackendDestroyDescriptor(vp);
    if (r) hd_call_release(&c);
    PyMem_Free(r);
    PyMem_Free(descs);
    Py_DECREF(held);
    return result;
}

/* ---- graph capture ---------------------------------------------------------------- */

PyObject* hd_pack_record_graph(PyObject* op, PyObject* args, PyObject* kwargs) {
    static char* names[] = {"handle", "arrays", "workspace", "graph", "update", NULL};
    hd_VariantPack* pack = (hd_VariantPack*)op;
    hd_state* st = hd_state_of(op);
    PyObject *h, *arrays, *ws, *graph_obj;
    int update = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!OOO|p", names, st->HandleType, &h, &arrays,
                                     &ws, &graph_obj, &update))
        return NULL;
    hd_Handle* handle = (hd_Handle*)h;
    if (hd_handle_live(h, "populate_cuda_graph") < 0) return NULL;
    void* graph = PyLong_AsVoidPtr(graph_obj);
    if (!graph) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "populate_cuda_graph: the graph is NULL");
        return NULL;
    }
    if (pack->workspace_size && (!ws || ws == Py_None)) /* it must outlive the graph */
        return PyErr_Format(PyExc_ValueError, "%s: the plan needs a workspace of %lld bytes: "
                            "pass one that lives as long as the graph",
                            update ? "update_cuda_graph" : "populate_cuda_graph",
                            (long long)pack->workspace_size);
    PyObject* plan_obj = pack->plan ? Py_NewRef(pack->plan) : NULL;
    if (!plan_obj) {
        PyErr_SetString(PyExc_ValueError, "populate_cuda_graph: the plan has been released");
        return NULL;
    }
    hipdnnBackendDescriptor_t plan = ((hd_Descriptor*)plan_obj)->desc;
    exec_call c;
    hipdnnBackendDescriptor_t vp = NULL;
    PyObject* result = NULL;
    if (hd_call_init(&c, pack->n) == 0 && hd_call_gather(st, pack, handle, arrays, ws, &c) == 0 &&
        (vp = hd_make_variant_pack(st, pack, c.ptrs, c.spaces, c.ws_ptr)) != NULL) {
        PyThread_type_lock lock = hd_handle_lock(handle);
        hipdnnStatus_t s = HIPDNN_STATUS_SUCCESS;
        if (lock) {
            Py_BEGIN_ALLOW_THREADS
            PyThread_acquire_lock(lock, WAIT_LOCK);
            s = update ? hipdnnBackendUpdateDeviceGraph_ext(handle->handle, plan, vp, graph)
                       : hipdnnBackendPopulateDeviceGraph_ext(handle->handle, plan, vp, graph);
            PyThread_release_lock(lock);
            Py_END_ALLOW_THREADS
        }
        if (lock && hd_check(st, s, NULL) == 0) result = Py_NewRef(Py_None);
    }
    if (vp) hipdnnBackendDestroyDescriptor(vp);
    hd_call_release(&c);
    Py_DECREF(plan_obj);
    return result;
}

PyObject* hd_stream_is_capturing(PyObject* module, PyObject* obj) {
    hipdnnStream_t stream;
    if (hd_stream_from_object(obj, &stream) < 0) return NULL;
    int capturing = 0;
    if (hd_check(hd_get_state(module), hipdnnStreamIsCapturing_ext(stream, &capturing),
                 "stream_is_capturing") < 0)
        return NULL;
    return PyLong_FromLong(capturing);
}
