/* plugins.c — the process-wide plugin registry: search paths, what loaded, what was
 * skipped and why, and the engines the plugins provide.
 */
#include <stdlib.h>
#include <string.h>

#include "module.h"

/* _C.set_engine_plugin_paths(paths, mode=PLUGIN_LOADING_ADDITIVE) */
PyObject* hd_set_engine_plugin_paths(PyObject* module, PyObject* args, PyObject* kwargs) {
    static char* kwlist[] = {"paths", "mode", NULL};
    PyObject* paths;
    int mode = HIPDNN_PLUGIN_LOADING_ADDITIVE;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|i:set_engine_plugin_paths", kwlist,
                                     &paths, &mode))
        return NULL;
    if (mode != HIPDNN_PLUGIN_LOADING_ADDITIVE && mode != HIPDNN_PLUGIN_LOADING_ABSOLUTE) {
        PyErr_Format(PyExc_ValueError,
                     "set_engine_plugin_paths: mode %d is not ADDITIVE (0) or ABSOLUTE (1)",
                     mode);
        return NULL;
    }
    if (PyUnicode_Check(paths) || PyBytes_Check(paths)) {
        PyErr_SetString(PyExc_TypeError,
                        "set_engine_plugin_paths: expected a list of paths, got a single "
                        "string (wrap it in a list)");
        return NULL;
    }
    PyObject* list = PySequence_List(paths);
    if (!list) return NULL;
    Py_ssize_t n = PyList_Size(list);
    PyObject* encoded = PyList_New(n); /* bytes objects keep the C strings alive */
    const char** cpaths = PyMem_Calloc((size_t)n + 1, sizeof(char*));
    PyObject* result = NULL;
    if (!encoded || !cpaths) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject* b = NULL;
        if (!PyUnicode_FSConverter(PyList_GetItem(list, i), &b)) goto done;
        PyList_SetItem(encoded, i, b);
        cpaths[i] = PyBytes_AsString(b);
        if (!cpaths[i]) goto done;
    }
    if (hd_check(hd_get_state(module),
                 hipdnnSetEnginePluginPaths_ext((size_t)n, cpaths,
                                                (hipdnnPluginLoadingMode_t)mode),
                 "set_engine_plugin_paths") < 0)
        goto done;
    result = Py_NewRef(Py_None);
done:
    PyMem_Free(cpaths);
    Py_XDECREF(encoded);
    Py_DECREF(list);
    return result;
}

typedef hipdnnStatus_t (*string_list_fn)(size_t* num, char** entries, size_t* max_len);

/* Reads a two-call string list (loaded paths, skipped plugins) into a Python list. */
static PyObject* read_string_list(hd_state* st, string_list_fn fn, const char* ctx) {
    size_t num = 0, max_len = 0;
    hipdnnStatus_t s;
    Py_BEGIN_ALLOW_THREADS /* may load the plugins */
    s = fn(&num, NULL, &max_len);
    Py_END_ALLOW_THREADS
    if (hd_check(st, s, ctx) < 0) return NULL;
    if (num == 0) return PyList_New(0);
    if (max_len == 0) max_len = 1;
    char** entries = PyMem_Calloc(num, sizeof(char*));
    char* storage = PyMem_Calloc(num, max_len);
    PyObject* list = NULL;
    if (!entries || !storage) {
        PyErr_NoMemory();
        goto done;
    }
    for (size_t i = 0; i < num; i++) entries[i] = storage + i * max_len;
    size_t got = num, got_len = max_len;
    s = fn(&got, entries, &got_len);
    if (hd_check(st, s, ctx) < 0) goto done;
    if (got > num) got = num;
    list = PyList_New((Py_ssize_t)got);
    if (!list) goto done;
    for (size_t i = 0; i < got; i++) {
        entries[i][max_len - 1] = '\0'; /* never trust a missing terminator */
        PyObject* v = PyUnicode_DecodeFSDefault(entries[i]);
        if (!v) {
            Py_CLEAR(list);
            goto done;
        }
        PyList_SetItem(list, (Py_ssize_t)i, v);
    }
done:
    PyMem_Free(storage);
    PyMem_Free(entries);
    return list;
}

/* _C.loaded_engine_plugin_paths() -> [path, ...] */
PyObject* hd_loaded_engine_plugin_paths(PyObject* module, PyObject* unused) {
    (void)unused;
    return read_string_list(hd_get_state(module), hipdnnGetLoadedEnginePluginPaths_ext,
                            "loaded_engine_plugin_paths");
}

/* _C.skipped_engine_plugins() -> ["path: reason", ...] */
PyObject* hd_skipped_engine_plugins(PyObject* module, PyObject* unused) {
    (void)unused;
    return read_string_list(hd_get_state(module), hipdnnGetSkippedEnginePlugins_ext,
                            "skipped_engine_plugins");
}

/* _C.heuristic_plugins() -> ["path\tname\tstate", ...] */
PyObject* hd_heuristic_plugins(PyObject* module, PyObject* unused) {
    (void)unused;
    return read_string_list(hd_get_state(module), hipdnnGetHeuristicPlugins_ext,
                            "heuristic_plugins");
}

/* _C.engines() -> [(engine_id, name, plugin_path, memory_space, priority, is_fallback)] */
PyObject* hd_engines(PyObject* module, PyObject* unused) {
    (void)unused;
    hd_state* st = hd_get_state(module);
    int64_t count = 0;
    hipdnnStatus_t s;
    Py_BEGIN_ALLOW_THREADS /* may load the plugins */
    s = hipdnnGetEngineCount_ext(&count);
    Py_END_ALLOW_THREADS
    if (hd_check(st, s, "engines") < 0) return NULL;
    PyObject* list = PyList_New(0);
    if (!list) return NULL;
    for (int64_t i = 0; i < count; i++) {
        hipdnnEngineInfo_ext_t info;
        memset(&info, 0, sizeof(info));
        if (hd_check(st, hipdnnGetEngineInfo_ext(i, &info), "engines") < 0) goto fail;
        info.name[sizeof(info.name) - 1] = '\0';
        info.plugin_path[sizeof(info.plugin_path) - 1] = '\0';
        PyObject* path = PyUnicode_DecodeFSDefault(info.plugin_path);
        if (!path) goto fail;
        PyObject* name =
            PyUnicode_DecodeUTF8(info.name, (Py_ssize_t)strlen(info.name), "replace");
        if (!name) {
            Py_DECREF(path);
            goto fail;
        }
        PyObject* t = Py_BuildValue("(KNNiii)", (unsigned long long)info.engine_id, name, path,
                                    (int)info.memory_space, (int)info.priority,
                                    (int)info.is_fallback);
        if (!t) goto fail;
        int r = PyList_Append(list, t);
        Py_DECREF(t);
        if (r < 0) goto fail;
    }
    return list;
fail:
    Py_DECREF(list);
    return NULL;
}

/* _C.plan_cache_info() -> (folder, entries, bytes), or (reason it is off, -1, 0) */
PyObject* hd_plan_cache_info(PyObject* module, PyObject* unused) {
    (void)unused;
    char dir[4096];
    int64_t entries = 0, bytes = 0;
    hipdnnStatus_t s;
    Py_BEGIN_ALLOW_THREADS
    s = hipdnnPlanCacheInfo_ext(dir, sizeof(dir), &entries, &bytes);
    Py_END_ALLOW_THREADS
    if (s == HIPDNN_STATUS_NOT_SUPPORTED)
        return Py_BuildValue("(sLL)", hipdnnPeekLastErrorString_ext(), -1LL, 0LL);
    if (hd_check(hd_get_state(module), s, "plan_cache_info") < 0) return NULL;
    PyObject* path = PyUnicode_DecodeFSDefault(dir);
    return path ? Py_BuildValue("(NLL)", path, (long long)entries, (long long)bytes) : NULL;
}

/* _C.plan_cache_clear() -> how many entries were removed */
PyObject* hd_plan_cache_clear(PyObject* module, PyObject* unused) {
    (void)unused;
    int64_t removed = 0;
    hipdnnStatus_t s;
    Py_BEGIN_ALLOW_THREADS
    s = hipdnnPlanCacheClear_ext(&removed);
    Py_END_ALLOW_THREADS
    if (hd_check(hd_get_state(module), s, "plan_cache_clear") < 0) return NULL;
    return PyLong_FromLongLong((long long)removed);
}
