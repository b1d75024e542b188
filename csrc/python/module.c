/* module.c — hipdnn._C: module definition, state, exceptions and constants.
 *
 * Multi-phase init with per-module state (Modules/xxlimited.c is the template): the
 * exception classes and the types live in the state, and every integer constant of
 * hipdnn.h (enumerators and integer #defines) is exported as an int constant named as in C
 * without the HIPDNN_ prefix (HIPDNN_ATTR_TENSOR_DIMENSIONS -> ATTR_TENSOR_DIMENSIONS).
 */
#include "module.h"

hd_state* hd_get_state(PyObject* module) { return (hd_state*)PyModule_GetState(module); }

hd_state* hd_state_of_type(PyTypeObject* type) {
    /* A Python subclass (hipdnn.DeviceArray) has no module: its first base that has one */
    for (PyTypeObject* t = type; t; t = (PyTypeObject*)PyType_GetSlot(t, Py_tp_base)) {
        PyObject* m = PyType_GetModule(t);
        if (m) return hd_get_state(m);
        PyErr_Clear();
    }
    PyErr_SetString(PyExc_TypeError, "hipdnn._C: an object of a type from no hipdnn module");
    return NULL;
}

hd_state* hd_state_of(PyObject* self) { return hd_state_of_type(Py_TYPE(self)); }

PyObject* hd_type_error(const char* what, PyObject* obj) {
    PyObject* name = PyType_GetName(Py_TYPE(obj));
    if (!name) return NULL;
    PyErr_Format(PyExc_TypeError, "%s, got %U", what, name);
    Py_DECREF(name);
    return NULL;
}

/* ---- constants ----------------------------------------------------------------------- */

/* Every integer constant of hipdnn.h (enumerators and #define HIPDNN_<NAME> <integer>),
 * written by tools/gen_python_constants.py: adding one to hipdnn.h and rerunning it is
 * all that exports it (tests/test_generated_sources.py fails until then). */
static const struct {
    const char* name;
    long value;
} constants[] = {
#include "constants.inc"
};

/* ---- module functions ------------------------------------------------------------- */

static PyObject* hd_version(PyObject* module, PyObject* unused) {
    (void)module;
    (void)unused;
    return PyUnicode_FromString(hipdnnVersionString_ext());
}

static PyObject* hd_dtype_name_py(PyObject* module, PyObject* arg) {
    (void)module;
    long v = PyLong_AsLong(arg);
    if (v == -1 && PyErr_Occurred()) return NULL;
    return PyUnicode_FromString(hipdnnSdkDataTypeName((hipdnnDataType_t)v));
}

/* ---- logging: the callable lives in module state, the queue in log.c --------------- */

/* _C.set_log_callback(callable or None) */
static PyObject* hd_set_log_callback(PyObject* module, PyObject* callback) {
    hd_state* st = hd_get_state(module);
    if (callback != Py_None && !PyCallable_Check(callback)) {
        return hd_type_error("set_log_callback: expected a callable or None", callback);
    }
    /* Without the GIL: the backend waits for a callback in flight on another thread, which
     * may be one (a ctypes one) that needs the GIL. */
    hipdnnStatus_t s;
    if (callback == Py_None) {
        Py_BEGIN_ALLOW_THREADS
        s = hipdnnSetUserLogCallback_ext(NULL, NULL);
        Py_END_ALLOW_THREADS
        hd_log_discard();
        Py_CLEAR(st->log_callback);
    } else {
        PyObject* old = st->log_callback;
        Py_INCREF(callback);
        st->log_callback = callback;
        Py_XDECREF(old);
        Py_BEGIN_ALLOW_THREADS
        s = hipdnnSetUserLogCallback_ext(hd_log_enqueue, NULL);
        Py_END_ALLOW_THREADS
    }
    if (hd_check(st, s, "set_log_callback") < 0) return NULL;
    Py_RETURN_NONE;
}

/* _C.set_log_level(level) with level one of LOG_OFF .. LOG_INFO */
static PyObject* hd_set_log_level(PyObject* module, PyObject* arg) {
    long level = PyLong_AsLong(arg);
    if (level == -1 && PyErr_Occurred()) return NULL;
    if (level < HIPDNN_LOG_OFF || level > HIPDNN_LOG_INFO) {
        PyErr_Format(PyExc_ValueError, "set_log_level: level %ld is not one of 0 (off), "
                     "1 (error), 2 (warn), 3 (info)", level);
        return NULL;
    }
    if (hd_check(hd_get_state(module), hipdnnSetLogLevel_ext((hipdnnLogLevel_t)level),
                 "set_log_level") < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* _C.log_message(level, message): the Python layer's messages go where the backend's go. */
static PyObject* hd_log_message(PyObject* module, PyObject* args) {
    int level;
    const char* message;
    if (!PyArg_ParseTuple(args, "is:log_message", &level, &message)) return NULL;
    if (hd_check(hd_get_state(module), hipdnnLogMessage_ext((hipdnnLogLevel_t)level, message),
                 "log_message") < 0)
        return NULL;
    hd_log_flush(hd_get_state(module));
    Py_RETURN_NONE;
}

/* _C.flush_log(): deliver queued messages now (e.g. after work on other threads). */
static PyObject* hd_flush_log(PyObject* module, PyObject* unused) {
    (void)unused;
    hd_log_flush(hd_get_state(module));
    Py_RETURN_NONE;
}

/* The backend's op table as a list of dicts, one per op:
 *   {"kind", "name", "descriptor_type", "descriptor_name",
 *    "inputs": [(name, attr, is_optional, frontend_name, frontend_suffix)], "outputs": [...],
 *    "attrs": [(name, attr, type, kind, max_count, min, max, default)]}
 * Python lowers every op through it, so no op is spelled out in the extension. */
static PyObject* ports_list(const hipdnnOpPortInfo_ext_t* ports, int32_t n) {
    PyObject* list = PyList_New(n);
    for (int32_t i = 0; list && i < n; i++) {
        /* frontend_name is the port's name where the table leaves it NULL; the suffix
         * stays None, as pygraph derives an output's from its keyword then. */
        const char* fe = ports[i].frontend_name ? ports[i].frontend_name : ports[i].name;
        PyObject* t = Py_BuildValue("(siOsz)", ports[i].name, (int)ports[i].attr,
                                    ports[i].is_optional ? Py_True : Py_False, fe,
                                    ports[i].frontend_suffix);
        if (!t) Py_CLEAR(list);
        else PyList_SetItem(list, i, t);
    }
    return list;
}

static PyObject* hd_op_table(PyObject* module, PyObject* unused) {
    (void)module;
    (void)unused;
    int64_t n = 0;
    hipdnnGetOpCount_ext(&n);
    PyObject* table = PyList_New((Py_ssize_t)n);
    for (int64_t i = 0; table && i < n; i++) {
        const hipdnnOpInfo_ext_t* op = NULL;
        if (hipdnnGetOpInfo_ext(i, &op) != HIPDNN_STATUS_SUCCESS) {
            PyErr_SetString(PyExc_RuntimeError, hipdnnPeekLastErrorString_ext());
            Py_CLEAR(table);
            break;
        }
        PyObject* attrs = PyList_New(op->num_attrs);
        for (int32_t a = 0; attrs && a < op->num_attrs; a++) {
            const hipdnnOpAttrInfo_ext_t* ai = &op->attrs[a];
            PyObject* t = Py_BuildValue("(siiiiLLd)", ai->name, (int)ai->attr, (int)ai->type,
                                        (int)ai->kind, (int)ai->max_count,
                                        (long long)ai->min_value, (long long)ai->max_value,
                                        ai->default_value);
            if (!t) Py_CLEAR(attrs);
            else PyList_SetItem(attrs, a, t);
        }
        PyObject* ins = ports_list(op->inputs, op->num_inputs);
        PyObject* outs = ports_list(op->outputs, op->num_outputs);
        PyObject* d = NULL;
        if (attrs && ins && outs)
            d = Py_BuildValue("{s:i,s:s,s:i,s:s,s:O,s:O,s:O}", "kind", (int)op->kind, "name",
                              op->name, "descriptor_type", (int)op->descriptor_type,
                              "descriptor_name", op->descriptor_name, "inputs", ins, "outputs",
                              outs, "attrs", attrs);
        Py_XDECREF(attrs);
        Py_XDECREF(ins);
        Py_XDECREF(outs);
        if (!d) Py_CLEAR(table);
        else PyList_SetItem(table, (Py_ssize_t)i, d);
    }
    return table;
}

static PyMethodDef module_methods[] = {
    {"device_runtime", hd_device_runtime, METH_NOARGS,
     "device_runtime() -> (name, device count, reason): the GPU runtime the backend uses "
     "(\"hip\", \"cuda\", or \"none\" with the reason)."},
    {"device_synchronize", hd_device_synchronize, METH_NOARGS,
     "Waits for all work on the current device."},
    {"stream_synchronize", hd_stream_synchronize, METH_O,
     "stream_synchronize(stream): waits for the work on a stream (None, int, PyTorch or CuPy "
     "stream)."},
    {"stream_is_capturing", hd_stream_is_capturing, METH_O,
     "stream_is_capturing(stream) -> 0, or 1 while the stream captures a graph (2: its "
     "capture was invalidated)."},
    {"pointer_memory_space", hd_pointer_memory_space, METH_O,
     "pointer_memory_space(address) -> (memory space, device): as the GPU runtime reports "
     "it (host memory: (MEMORY_HOST, -1))."},
    {"pointer_extent", hd_pointer_extent, METH_VARARGS,
     "pointer_extent(address, nbytes) -> how many of the nbytes bytes from address lie in "
     "device allocations, as execute checks device tensors (nbytes: all, or the runtime "
     "cannot tell)."},
    {"describe_array", hd_describe_array, METH_O,
     "describe_array(obj) -> (data_type, shape, element strides, memory space, type name, "
     "address of element 0, read-only) of a DeviceArray or an object with __dlpack__ / "
     "__cuda_array_interface__ (data_type -1: none of hipdnn's, -2: uint16)."},
    {"copy_value", hd_copy_value, METH_VARARGS,
     "copy_value(obj, buffer, to_host): copies the bytes a device value (DeviceArray, "
     "__dlpack__, __cuda_array_interface__) spans from its first element to or from a host "
     "buffer of that length, after the device's pending work."},
    {"log_message", hd_log_message, METH_VARARGS,
     "log_message(level, message): logs through hipdnn's logger (LOG_ERROR .. LOG_INFO)."},
    {"op_table", hd_op_table, METH_NOARGS,
     "op_table()\n--\n\nThe backend's table of operations: one dict per op with its "
     "descriptor type, ports and parameters."},
    {"version", hd_version, METH_NOARGS,
     "version()\n--\n\nThe backend's version string, e.g. '0.2.0'."},
    {"status_name", hd_status_name, METH_O,
     "status_name(status)\n--\n\nThe name of a hipdnnStatus_t value."},
    {"dtype_name", hd_dtype_name_py, METH_O,
     "dtype_name(data_type)\n--\n\nNumPy-style name of a hipdnnDataType_t ('float16')."},
    {"set_engine_plugin_paths", (PyCFunction)(void (*)(void))hd_set_engine_plugin_paths,
     METH_VARARGS | METH_KEYWORDS,
     "set_engine_plugin_paths(paths, mode=PLUGIN_LOADING_ADDITIVE)\n--\n\nWhere engine "
     "plugins are searched; only before the first Handle of the process."},
    {"loaded_engine_plugin_paths", hd_loaded_engine_plugin_paths, METH_NOARGS,
     "loaded_engine_plugin_paths()\n--\n\nPaths of the plugins that loaded (loads them if "
     "needed)."},
    {"skipped_engine_plugins", hd_skipped_engine_plugins, METH_NOARGS,
     "skipped_engine_plugins()\n--\n\nPlugins the loader skipped, as 'path: reason' strings."},
    {"heuristic_plugins", hd_heuristic_plugins, METH_NOARGS,
     "heuristic_plugins()\n--\n\nHeuristic plugins, as 'path\\tname\\tstate' strings."},
    {"engines", hd_engines, METH_NOARGS,
     "engines()\n--\n\nEvery loaded engine as (engine_id, name, plugin_path, memory_space, "
     "priority, is_fallback)."},
    {"plan_cache_info", hd_plan_cache_info, METH_NOARGS,
     "plan_cache_info()\n--\n\n(folder, entries, bytes) of the plan cache; (why it is off, "
     "-1, 0) when HIPDNN_CACHE=0 or no folder is known."},
    {"plan_cache_clear", hd_plan_cache_clear, METH_NOARGS,
     "plan_cache_clear()\n--\n\nRemoves every plan cache entry; returns how many."},
    {"serialize", hd_serialize, METH_O,
     "serialize(graph)\n--\n\nA finalized OPERATIONGRAPH descriptor as FlatBuffers bytes."},
    {"deserialize", hd_deserialize, METH_O,
     "deserialize(data)\n--\n\nA finalized OPERATIONGRAPH descriptor from bytes (verified "
     "first)."},
    {"plan_kernels", hd_plan_kernels, METH_O,
     "plan_kernels(plan)\n--\n\nThe kernels a finalized EXECUTION_PLAN runs, in launch order: "
     "(name, detail, [indices of the graph's OPS it runs]) each.  NotSupportedError when the "
     "engine does not describe its kernels."},
    {"set_log_callback", hd_set_log_callback, METH_O,
     "set_log_callback(callback)\n--\n\ncallback(level, message) receives backend log "
     "messages (on the thread of the next hipdnn call); None restores stderr."},
    {"set_log_level", hd_set_log_level, METH_O,
     "set_log_level(level)\n--\n\nLOG_OFF, LOG_ERROR, LOG_WARN or LOG_INFO."},
    {"flush_log", hd_flush_log, METH_NOARGS,
     "flush_log()\n--\n\nDelivers queued log messages to the callback now."},
    {NULL, NULL, 0, NULL},
};

/* ---- state lifetime ------------------------------------------------------------------ */

static int module_traverse(PyObject* module, visitproc visit, void* arg) {
    hd_state* st = hd_get_state(module);
    if (!st) return 0;
    Py_VISIT(st->HipdnnError);
    Py_VISIT(st->InvalidGraphError);
    Py_VISIT(st->NotSupportedError);
    Py_VISIT(st->HandleType);
    Py_VISIT(st->DescriptorType);
    Py_VISIT(st->VariantPackType);
    Py_VISIT(st->DeviceArrayType);
    Py_VISIT(st->str_cai);
    Py_VISIT(st->str_dlpack);
    Py_VISIT(st->log_callback);
    Py_VISIT(st->torch_tensor);
    Py_VISIT(st->torch_strided);
    Py_VISIT(st->torch_raw_stream);
    for (int i = 0; i < HD_TORCH_DTYPES; ++i) Py_VISIT(st->torch_dtypes[i]);
    for (int i = 0; i < HD_TORCH_NAMES; ++i) Py_VISIT(st->torch_names[i]);
    return 0;
}

static int module_clear(PyObject* module) {
    hd_state* st = hd_get_state(module);
    if (!st) return 0;
    if (st->log_callback) {
        /* The backend must not queue for a callable that is going away. */
        hipdnnSetUserLogCallback_ext(NULL, NULL);
        Py_CLEAR(st->log_callback);
    }
    Py_CLEAR(st->HipdnnError);
    Py_CLEAR(st->InvalidGraphError);
    Py_CLEAR(st->NotSupportedError);
    Py_CLEAR(st->HandleType);
    Py_CLEAR(st->DescriptorType);
    Py_CLEAR(st->VariantPackType);
    Py_CLEAR(st->DeviceArrayType);
    Py_CLEAR(st->str_cai);
    Py_CLEAR(st->str_dlpack);
    Py_CLEAR(st->torch_tensor);
    Py_CLEAR(st->torch_strided);
    Py_CLEAR(st->torch_raw_stream);
    for (int i = 0; i < HD_TORCH_DTYPES; ++i) Py_CLEAR(st->torch_dtypes[i]);
    for (int i = 0; i < HD_TORCH_NAMES; ++i) Py_CLEAR(st->torch_names[i]);
    st->torch_state = 0;
    return 0;
}

static void module_free(void* module) { module_clear((PyObject*)module); }

static int add_exception(PyObject* module, PyObject** slot, const char* name, const char* doc,
                         PyObject* bases) {
    char qual[96];
    snprintf(qual, sizeof(qual), "hipdnn.%s", name);
    *slot = PyErr_NewExceptionWithDoc(qual, doc, bases, NULL);
    if (!*slot) return -1;
    return PyModule_AddObjectRef(module, name, *slot);
}

static int module_exec(PyObject* module) {
    hd_state* st = hd_get_state(module);
    if (hd_log_init() < 0) return -1;

    if (add_exception(module, &st->HipdnnError, "HipdnnError",
                      "A hipdnn backend call failed; .status and .status_name say how.",
                      PyExc_RuntimeError) < 0)
        return -1;
    PyObject* bases = PyTuple_Pack(2, st->HipdnnError, PyExc_ValueError);
    if (!bases) return -1;
    int r = add_exception(module, &st->InvalidGraphError, "InvalidGraphError",
                          "The graph or an argument is invalid (a BAD_PARAM status).", bases);
    Py_DECREF(bases);
    if (r < 0) return -1;
    if (add_exception(module, &st->NotSupportedError, "NotSupportedError",
                      "No engine or feature supports the request (NOT_SUPPORTED).",
                      st->HipdnnError) < 0)
        return -1;

    st->HandleType = (PyTypeObject*)PyType_FromModuleAndSpec(module, &hd_handle_spec, NULL);
    if (!st->HandleType || PyModule_AddType(module, st->HandleType) < 0) return -1;
    st->DescriptorType =
        (PyTypeObject*)PyType_FromModuleAndSpec(module, &hd_descriptor_spec, NULL);
    if (!st->DescriptorType || PyModule_AddType(module, st->DescriptorType) < 0) return -1;
    st->VariantPackType =
        (PyTypeObject*)PyType_FromModuleAndSpec(module, &hd_variant_pack_spec, NULL);
    if (!st->VariantPackType || PyModule_AddType(module, st->VariantPackType) < 0) return -1;
    st->DeviceArrayType =
        (PyTypeObject*)PyType_FromModuleAndSpec(module, &hd_device_array_spec, NULL);
    if (!st->DeviceArrayType || PyModule_AddType(module, st->DeviceArrayType) < 0) return -1;
    st->str_cai = PyUnicode_InternFromString("__cuda_array_interface__");
    st->str_dlpack = PyUnicode_InternFromString("__dlpack__");
    if (!st->str_cai || !st->str_dlpack) return -1;

    for (size_t i = 0; i < sizeof(constants) / sizeof(constants[0]); i++)
        if (PyModule_AddIntConstant(module, constants[i].name, constants[i].value) < 0)
            return -1;
    if (PyModule_AddStringConstant(module, "__version__", hipdnnVersionString_ext()) < 0)
        return -1;
    return 0;
}

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, module_exec},
    {0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "hipdnn._C",
    .m_doc = "hipdnn._C: the CPython binding of the hipdnn backend C API (hipdnn.h).",
    .m_size = sizeof(hd_state),
    .m_methods = module_methods,
    .m_slots = module_slots,
    .m_traverse = module_traverse,
    .m_clear = module_clear,
    .m_free = module_free,
};

PyMODINIT_FUNC PyInit__C(void) { return PyModuleDef_Init(&module_def); }
