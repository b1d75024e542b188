/* variant_pack.c — _C.VariantPack(plan): what running one plan needs, compiled once.
 *
 *   pack = _C.VariantPack(plan)        # at build_plans time
 *   pack.execute(handle, [xa, ya])     # arrays in pack order (pack.uids), or {uid: array}
 *
 * Everything is read from the plan itself, through hipdnn.h only: the plan's
 * ENGINE_CONFIG -> ENGINECFG_ENGINE -> ENGINE_OPERATION_GRAPH, that finalized graph's
 * TENSORS_EXT (uid, name, data type, dims, strides, virtual, by value, value) and
 * OUTPUT_UIDS_EXT, and the plan's WORKSPACE_SIZE and MEMORY_SPACE_EXT.  Nothing the
 * caller says about tensors or sizes is trusted: execute.c checks every array against
 * this and nothing else.
 *
 * The pack cannot go stale or be pointed elsewhere: the plan and its graph are finalized
 * (immutable), the pack keeps its plan alive and runs only that plan.
 */
#include <stdlib.h>
#include <string.h>

#include "module.h"

static const char CTX[] = "VariantPack";

/* ---- reading the plan ------------------------------------------------------------- */

/* A descriptor-valued attribute with one value: a new reference the caller destroys. */
static int get_descriptor(hd_state* st, hipdnnBackendDescriptor_t d,
                          hipdnnBackendAttributeName_t attr, const char* what,
                          hipdnnBackendDescriptor_t* out) {
    int64_t n = 0;
    *out = NULL;
    if (hd_check(st, hipdnnBackendGetAttribute(d, attr, HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                                               out),
                 CTX) < 0)
        return -1;
    if (n < 1 || !*out) {
        PyErr_Format(PyExc_ValueError, "VariantPack: the plan has no %s", what);
        return -1;
    }
    return 0;
}

/* Exactly one value of a fixed-size attribute. */
static int get_one(hd_state* st, hipdnnBackendDescriptor_t d, hipdnnBackendAttributeName_t attr,
                   hipdnnBackendAttributeType_t type, void* out, const char* what) {
    int64_t n = 0;
    if (hd_check(st, hipdnnBackendGetAttribute(d, attr, type, 1, &n, out), CTX) < 0) return -1;
    if (n != 1) {
        PyErr_Format(PyExc_ValueError, "VariantPack: %s has %lld values, expected 1", what,
                     (long long)n);
        return -1;
    }
    return 0;
}

/* Up to HIPDNN_MAX_DIMS int64 values; *n is how many the attribute has. */
static int get_dims(hd_state* st, hipdnnBackendDescriptor_t d, hipdnnBackendAttributeName_t attr,
                    int64_t* out, int64_t* n) {
    *n = 0;
    return hd_check(st, hipdnnBackendGetAttribute(d, attr, HIPDNN_TYPE_INT64, HIPDNN_MAX_DIMS, n,
                                                  out),
                    CTX);
}

/* The tensor's name as a PyMem-owned C string ("" when unnamed). */
static char* get_name(hd_state* st, hipdnnBackendDescriptor_t t) {
    int64_t n = 0;
    if (hd_check(st, hipdnnBackendGetAttribute(t, HIPDNN_ATTR_TENSOR_NAME_EXT, HIPDNN_TYPE_CHAR, 0,
                                               &n, NULL),
                 CTX) < 0)
        return NULL;
    if (n < 0 || n > 65536) n = 0; /* a label, not data: never trust a size blindly */
    char* name = PyMem_Calloc((size_t)n + 1, 1);
    if (!name) {
        PyErr_NoMemory();
        return NULL;
    }
    int64_t got = 0;
    if (n > 0 && hd_check(st, hipdnnBackendGetAttribute(t, HIPDNN_ATTR_TENSOR_NAME_EXT,
                                                        HIPDNN_TYPE_CHAR, n + 1, &got, name),
                          CTX) < 0) {
        PyMem_Free(name);
        return NULL;
    }
    name[n] = '\0';
    return name;
}

/* Reads one graph tensor.  *takes_array = 0 for virtual tensors and by-value constants
 * (then nothing else is read); otherwise fills *out, whose name the caller then owns.  A
 * by-value tensor without a value is a runtime scalar: it takes a host array per execute
 * (the backend reads it at enqueue time). */
static int read_tensor(hd_state* st, hipdnnBackendDescriptor_t t, hd_pack_tensor* out,
                       int* takes_array) {
    int32_t is_virtual = 0, is_by_value = 0;
    if (get_one(st, t, HIPDNN_ATTR_TENSOR_IS_VIRTUAL, HIPDNN_TYPE_BOOLEAN, &is_virtual,
                "a tensor's IS_VIRTUAL") < 0 ||
        get_one(st, t, HIPDNN_ATTR_TENSOR_IS_BY_VALUE, HIPDNN_TYPE_BOOLEAN, &is_by_value,
                "a tensor's IS_BY_VALUE") < 0)
        return -1;
    int64_t value_bytes = 0;
    if (is_by_value && hd_check(st, hipdnnBackendGetAttribute(t, HIPDNN_ATTR_TENSOR_VALUE_EXT,
                                                              HIPDNN_TYPE_UINT8_EXT, 0,
                                                              &value_bytes, NULL),
                                CTX) < 0)
        return -1;
    *takes_array = !is_virtual && !(is_by_value && value_bytes > 0);
    if (!*takes_array) return 0;

    hipdnnDataType_t dtype;
    int64_t ndim = 0, nstrides = 0;
    if (get_one(st, t, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT64, &out->uid,
                "a tensor's UNIQUE_ID") < 0 ||
        get_one(st, t, HIPDNN_ATTR_TENSOR_DATA_TYPE, HIPDNN_TYPE_DATA_TYPE, &dtype,
                "a tensor's DATA_TYPE") < 0 ||
        get_dims(st, t, HIPDNN_ATTR_TENSOR_DIMENSIONS, out->dims, &ndim) < 0 ||
        get_dims(st, t, HIPDNN_ATTR_TENSOR_STRIDES, out->strides, &nstrides) < 0)
        return -1;
    if (ndim < 1 || ndim > HIPDNN_MAX_DIMS || nstrides != ndim) {
        PyErr_Format(PyExc_ValueError,
                     "VariantPack: tensor with uid %lld has %lld dims and %lld strides (1 to "
                     "%d of each, as many strides as dims)",
                     (long long)out->uid, (long long)ndim, (long long)nstrides, HIPDNN_MAX_DIMS);
        return -1;
    }
    for (int64_t i = 0; i < ndim; i++) {
        if (out->dims[i] < 1) {
            PyErr_Format(PyExc_ValueError, "VariantPack: tensor with uid %lld has dim %lld",
                         (long long)out->uid, (long long)out->dims[i]);
            return -1;
        }
    }
    int64_t ragged = 0;
    if (hd_check(st, hipdnnBackendGetAttribute(t, HIPDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC,
                                               HIPDNN_TYPE_BACKEND_DESCRIPTOR, 0, &ragged, NULL),
                 CTX) < 0)
        return -1;
    out->dtype = (int)dtype;
    out->ndim = (int)ndim;
    out->is_output = 0;
    out->ragged = ragged > 0;
    out->name = get_name(st, t);
    return out->name ? 0 : -1;
}

/* Fills self from the finalized graph `graph`. */
static int read_graph(hd_state* st, hd_VariantPack* self, hipdnnBackendDescriptor_t graph) {
    int64_t nt = 0, nout = 0, got = 0;
    hipdnnBackendDescriptor_t* descs = NULL;
    int64_t* outputs = NULL;
    int rc = -1;

    if (hd_check(st, hipdnnBackendGetAttribute(graph, HIPDNN_ATTR_OPERATIONGRAPH_TENSORS_EXT,
                                               HIPDNN_TYPE_BACKEND_DESCRIPTOR, 0, &nt, NULL),
                 CTX) < 0 ||
        hd_check(st, hipdnnBackendGetAttribute(graph, HIPDNN_ATTR_OPERATIONGRAPH_OUTPUT_UIDS_EXT,
                                               HIPDNN_TYPE_INT64, 0, &nout, NULL),
                 CTX) < 0)
        return -1;
    if (nt < 0 || nt > (1 << 20) || nout < 0 || nout > (1 << 20)) {
        PyErr_Format(PyExc_ValueError, "VariantPack: the graph reports %lld tensors and %lld "
                     "outputs", (long long)nt, (long long)nout);
        return -1;
    }
    descs = PyMem_Calloc((size_t)nt + 1, sizeof(*descs));
    outputs = PyMem_Calloc((size_t)nout + 1, sizeof(*outputs));
    self->tensors = PyMem_Calloc((size_t)nt + 1, sizeof(*self->tensors));
    self->uids = PyMem_Calloc((size_t)nt + 1, sizeof(*self->uids));
    if (!descs || !outputs || !self->tensors || !self->uids) {
        PyErr_NoMemory();
        goto done;
    }
    if (hd_check(st, hipdnnBackendGetAttribute(graph, HIPDNN_ATTR_OPERATIONGRAPH_TENSORS_EXT,
                                               HIPDNN_TYPE_BACKEND_DESCRIPTOR, nt, &got, descs),
                 CTX) < 0)
        goto done;
    if (got != nt) {
        PyErr_Format(PyExc_ValueError, "VariantPack: the graph reported %lld tensors, then %lld",
                     (long long)nt, (long long)got);
        goto done;
    }
    if (hd_check(st, hipdnnBackendGetAttribute(graph, HIPDNN_ATTR_OPERATIONGRAPH_OUTPUT_UIDS_EXT,
                                               HIPDNN_TYPE_INT64, nout, &got, outputs),
                 CTX) < 0)
        goto done;
    if (got < nout) nout = got;

    for (int64_t i = 0; i < nt; i++) {
        hd_pack_tensor* t = &self->tensors[self->n];
        int takes_array = 0;
        if (read_tensor(st, descs[i], t, &takes_array) < 0) goto done;
        if (!takes_array) continue;
        for (Py_ssize_t k = 0; k < self->n; k++) {
            if (self->uids[k] == t->uid) {
                PyMem_Free(t->name);
                t->name = NULL;
                PyErr_Format(PyExc_ValueError, "VariantPack: the graph has uid %lld twice",
                             (long long)t->uid);
                goto done;
            }
        }
        for (int64_t k = 0; k < nout; k++)
            if (outputs[k] == t->uid) t->is_output = 1;
        self->uids[self->n] = t->uid;
        self->n++;
    }
    rc = 0;
done:
    if (descs)
        for (int64_t i = 0; i < nt; i++)
            if (descs[i]) hipdnnBackendDestroyDescriptor(descs[i]);
    PyMem_Free(descs);
    PyMem_Free(outputs);
    return rc;
}

static int compile(hd_state* st, hd_VariantPack* self, hipdnnBackendDescriptor_t plan) {
    hipdnnBackendDescriptor_t cfg = NULL, engine = NULL, graph = NULL;
    int64_t space = 0;
    int rc = -1;
    if (get_one(st, plan, HIPDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, HIPDNN_TYPE_INT64,
                &self->workspace_size, "the plan's WORKSPACE_SIZE") < 0 ||
        get_one(st, plan, HIPDNN_ATTR_EXECUTION_PLAN_MEMORY_SPACE_EXT, HIPDNN_TYPE_INT64, &space,
                "the plan's MEMORY_SPACE_EXT") < 0)
        return -1;
    if (self->workspace_size < 0 || (uint64_t)self->workspace_size > (uint64_t)PY_SSIZE_T_MAX) {
        PyErr_Format(PyExc_ValueError, "VariantPack: the plan reports a workspace of %lld bytes",
                     (long long)self->workspace_size);
        return -1;
    }
    self->memory_space = space == HIPDNN_MEMORY_HOST ? HIPDNN_MEMORY_HOST : HIPDNN_MEMORY_DEVICE;
    if (get_descriptor(st, plan, HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, "engine config",
                       &cfg) < 0 ||
        get_descriptor(st, cfg, HIPDNN_ATTR_ENGINECFG_ENGINE, "engine", &engine) < 0 ||
        get_descriptor(st, engine, HIPDNN_ATTR_ENGINE_OPERATION_GRAPH, "operation graph",
                       &graph) < 0)
        goto done;
    rc = read_graph(st, self, graph);
done:
    if (graph) hipdnnBackendDestroyDescriptor(graph);
    if (engine) hipdnnBackendDestroyDescriptor(engine);
    if (cfg) hipdnnBackendDestroyDescriptor(cfg);
    return rc;
}

/* ---- lifetime ------------------------------------------------------------------- */

static PyObject* pack_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
    static char* kwlist[] = {"plan", NULL};
    PyObject* plan_obj;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:VariantPack", kwlist, &plan_obj))
        return NULL;
    hd_state* st = PyType_GetModuleState(type);
    if (!st) return NULL;
    if (!PyObject_TypeCheck(plan_obj, st->DescriptorType))
        return hd_type_error("VariantPack: plan must be an EXECUTION_PLAN Descriptor", plan_obj);
    hd_Descriptor* plan = (hd_Descriptor*)plan_obj;
    if (plan->type != HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR) {
        PyErr_Format(PyExc_TypeError,
                     "VariantPack: plan must be an EXECUTION_PLAN Descriptor, got a %s Descriptor",
                     hd_descriptor_type_name(plan->type));
        return NULL;
    }
    if (!plan->desc || !plan->finalized) {
        PyErr_SetString(PyExc_ValueError, plan->desc ? "VariantPack: the plan is not finalized"
                                                     : "VariantPack: the plan has been released");
        return NULL;
    }
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    hd_VariantPack* self = (hd_VariantPack*)alloc(type, 0); /* zero-filled */
    if (!self) return NULL;
    self->plan = Py_NewRef(plan_obj);
    if (compile(st, self, plan->desc) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject*)self;
}

static int pack_traverse(PyObject* op, visitproc visit, void* arg) {
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(((hd_VariantPack*)op)->plan);
    return 0;
}

/* Only the reference goes: the compiled tensors stay valid until dealloc, so a pack
 * cleared by the collector still never reads freed memory (execute refuses it). */
static int pack_clear(PyObject* op) {
    Py_CLEAR(((hd_VariantPack*)op)->plan);
    return 0;
}

static void pack_dealloc(PyObject* op) {
    hd_VariantPack* self = (hd_VariantPack*)op;
    PyTypeObject* tp = Py_TYPE(op);
    PyObject_GC_UnTrack(op);
    pack_clear(op);
    if (self->tensors)
        for (Py_ssize_t i = 0; i < self->n; i++) PyMem_Free(self->tensors[i].name);
    PyMem_Free(self->tensors);
    PyMem_Free(self->uids);
    self->tensors = NULL;
    self->uids = NULL;
    freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    tp_free(op);
    Py_DECREF(tp);
}

/* ---- properties --------------------------------------------------------------------- */

static PyObject* int64_tuple(const int64_t* v, Py_ssize_t n) {
    PyObject* t = PyTuple_New(n);
    if (!t) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject* x = PyLong_FromLongLong(v[i]);
        if (!x) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SetItem(t, i, x);
    }
    return t;
}

static PyObject* pack_get_plan(PyObject* op, void* closure) {
    (void)closure;
    PyObject* plan = ((hd_VariantPack*)op)->plan;
    return Py_NewRef(plan ? plan : Py_None);
}

static PyObject* pack_get_uids(PyObject* op, void* closure) {
    (void)closure;
    hd_VariantPack* self = (hd_VariantPack*)op;
    return int64_tuple(self->uids, self->n);
}

static PyObject* pack_get_tensors(PyObject* op, void* closure) {
    (void)closure;
    hd_VariantPack* self = (hd_VariantPack*)op;
    PyObject* all = PyTuple_New(self->n);
    if (!all) return NULL;
    for (Py_ssize_t i = 0; i < self->n; i++) {
        const hd_pack_tensor* t = &self->tensors[i];
        PyObject* name = PyUnicode_DecodeUTF8(t->name, (Py_ssize_t)strlen(t->name), "replace");
        PyObject* dims = int64_tuple(t->dims, t->ndim);
        PyObject* strides = int64_tuple(t->strides, t->ndim);
        PyObject* item = name && dims && strides
                             ? Py_BuildValue("(LOiOOO)", (long long)t->uid, name, t->dtype, dims,
                                             strides, t->is_output ? Py_True : Py_False)
                             : NULL;
        Py_XDECREF(name);
        Py_XDECREF(dims);
        Py_XDECREF(strides);
        if (!item) {
            Py_DECREF(all);
            return NULL;
        }
        PyTuple_SetItem(all, i, item);
    }
    return all;
}

static PyObject* pack_get_workspace_size(PyObject* op, void* closure) {
    (void)closure;
    return PyLong_FromLongLong(((hd_VariantPack*)op)->workspace_size);
}

static PyObject* pack_get_memory_space(PyObject* op, void* closure) {
    (void)closure;
    return PyLong_FromLong(((hd_VariantPack*)op)->memory_space);
}

static PyObject* pack_repr(PyObject* op) {
    hd_VariantPack* self = (hd_VariantPack*)op;
    return PyUnicode_FromFormat("<hipdnn._C.VariantPack %zd tensors, workspace %lld B, %s>",
                                self->n, (long long)self->workspace_size,
                                self->memory_space == HIPDNN_MEMORY_HOST ? "host" : "device");
}

static PyMethodDef pack_methods[] = {
    {"execute", (PyCFunction)(void (*)(void))hd_pack_execute, METH_FASTCALL | METH_KEYWORDS,
     "execute($self, handle, arrays, workspace=None)\n--\n\nRuns the plan. arrays: one array "
     "(a buffer-protocol object for host memory; a DeviceArray or an object with __dlpack__ "
     "or __cuda_array_interface__ for device memory) per tensor in pack order (see uids), or "
     "a dict {uid: array}; each is checked "
     "against the plan's graph (dtype, shape, strides in elements, writable outputs). "
     "workspace: a writable buffer of at least workspace_size bytes; None allocates one for "
     "a host plan."},
    {"run_keyed", (PyCFunction)(void (*)(void))hd_pack_run_keyed, METH_FASTCALL,
     "run_keyed($self, handle, variant_pack, keys, workspace, /)\n--\n\npygraph.execute's "
     "fast path: runs the plan on a dict holding exactly `keys` (a tuple, pack order) whose "
     "values pass execute's checks and returns True; returns False, with nothing run and no "
     "exception, when anything differs (the caller then takes the checked way, which says "
     "what).  A failure of the engine itself raises."},
    {"autotune", (PyCFunction)(void (*)(void))hd_pack_autotune, METH_VARARGS | METH_KEYWORDS,
     "autotune($self, handle, arrays, workspace, plans, warmup=1, repeat=10, budget_ms=1000.0, "
     "store=True)\n--\n\nTimes each plan (EXECUTION_PLAN Descriptors of this pack's graph) on "
     "the arrays, as execute takes them, with the outputs put back afterwards "
     "(hipdnnAutotune_ext); the workspace must suit every plan.  Returns (index of the "
     "fastest, [(status, runs, median_ms, min_ms, timer, message)] per plan)."},
    {"record_graph", (PyCFunction)(void (*)(void))hd_pack_record_graph, METH_VARARGS | METH_KEYWORDS,
     "record_graph($self, handle, arrays, workspace, graph, update=False)\n--\n\nRecords the "
     "plan's run on the arrays (as execute takes them) into graph, a cudaGraph_t / hipGraph_t "
     "address: populate (an empty graph) or update (one populate filled); "
     "hipdnnBackendPopulateDeviceGraph_ext / hipdnnBackendUpdateDeviceGraph_ext."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef pack_getset[] = {
    {"plan", pack_get_plan, NULL, "The EXECUTION_PLAN Descriptor it runs.", NULL},
    {"uids", pack_get_uids, NULL, "Uids of the tensors that take an array, in pack order.",
     NULL},
    {"tensors", pack_get_tensors, NULL,
     "(uid, name, data_type, dims, strides, is_output) per tensor, in pack order.", NULL},
    {"workspace_size", pack_get_workspace_size, NULL, "Bytes of workspace the plan needs.",
     NULL},
    {"memory_space", pack_get_memory_space, NULL, "MEMORY_HOST or MEMORY_DEVICE.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot pack_slots[] = {
    {Py_tp_new, pack_new},
    {Py_tp_dealloc, pack_dealloc},
    {Py_tp_traverse, pack_traverse},
    {Py_tp_clear, pack_clear},
    {Py_tp_repr, pack_repr},
    {Py_tp_methods, pack_methods},
    {Py_tp_getset, pack_getset},
    {Py_tp_doc, "VariantPack(plan)\n--\n\nWhat running a finalized EXECUTION_PLAN needs, read "
                "from the plan: its graph's tensors that take arrays, which of them are "
                "written, the workspace size and the memory space."},
    {0, NULL},
};

PyType_Spec hd_variant_pack_spec = {
    .name = "hipdnn._C.VariantPack",
    .basicsize = sizeof(hd_VariantPack),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = pack_slots,
};
