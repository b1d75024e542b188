/* handle.c — _C.Handle: owns one hipdnnHandle_t.
 *
 * Creating the first handle loads the engine plugins; after that the plugin paths are
 * fixed for the process.  A handle also carries the lock that keeps destroy() from
 * pulling the handle from under an execute() running without the GIL.
 *
 * fork(): a thread of the parent may hold that lock when the process forks, and it does
 * not exist in the child; so every fork bumps g_forks (pthread_atfork), and a handle
 * whose lock predates the last fork gets a new one on first use (the old one is left:
 * freeing a lock that is held is undefined).  The backend keeps its own locks fork-safe.
 */
#include <pthread.h>

#include "module.h"

static unsigned long g_forks;
static pthread_once_t g_forks_once = PTHREAD_ONCE_INIT;

static void count_fork(void) { ++g_forks; }

static void watch_forks(void) { (void)pthread_atfork(NULL, NULL, count_fork); }

PyThread_type_lock hd_handle_lock(hd_Handle* self) {
    if (!self->lock || self->lock_epoch != g_forks) {
        PyThread_type_lock lock = PyThread_allocate_lock();
        if (!lock) {
            PyErr_NoMemory();
            return NULL;
        }
        self->lock = lock;
        self->lock_epoch = g_forks;
    }
    return self->lock;
}

static PyObject* handle_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
    static char* kwlist[] = {NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, ":Handle", kwlist)) return NULL;
    hd_state* st = PyType_GetModuleState(type);
    if (!st) return NULL;
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    hd_Handle* self = (hd_Handle*)alloc(type, 0);
    if (!self) return NULL;
    self->handle = NULL;
    self->lock = NULL;
    pthread_once(&g_forks_once, watch_forks);
    if (!hd_handle_lock(self)) {
        Py_DECREF(self);
        return NULL;
    }
    hipdnnHandle_t h = NULL;
    hipdnnStatus_t s;
    Py_BEGIN_ALLOW_THREADS /* the first handle dlopens every plugin */
    s = hipdnnCreate(&h);
    Py_END_ALLOW_THREADS
    if (hd_check(st, s, "Handle()") < 0) {
        Py_DECREF(self);
        return NULL;
    }
    self->handle = h;
    return (PyObject*)self;
}

static void handle_dealloc(PyObject* op) {
    hd_Handle* self = (hd_Handle*)op;
    PyTypeObject* tp = Py_TYPE(op);
    if (self->handle) {
        hipdnnDestroy(self->handle);
        self->handle = NULL;
    }
    /* Not one inherited from before a fork: another thread may have held it. */
    if (self->lock && self->lock_epoch == g_forks) PyThread_free_lock(self->lock);
    self->lock = NULL;
    freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    tp_free(op);
    Py_DECREF(tp);
}

/* A destroyed handle refuses every use with this, never a NULL handed to the backend. */
int hd_handle_live(PyObject* op, const char* what) {
    if (((hd_Handle*)op)->handle) return 0;
    PyErr_Format(PyExc_ValueError, "%s: the handle has been destroyed", what);
    return -1;
}

static PyObject* handle_set_stream(PyObject* op, PyObject* arg) {
    hd_Handle* self = (hd_Handle*)op;
    hipdnnStream_t stream = NULL; /* an int, or a PyTorch / CuPy stream object */
    if (hd_handle_live(op, "Handle.set_stream") < 0) return NULL;
    if (hd_stream_from_object(arg, &stream) < 0) return NULL;
    if (hd_check(hd_state_of(op), hipdnnSetStream(self->handle, stream), "Handle.set_stream") <
        0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject* handle_get_stream(PyObject* op, PyObject* unused) {
    (void)unused;
    hd_Handle* self = (hd_Handle*)op;
    hipdnnStream_t stream = NULL;
    if (hd_handle_live(op, "Handle.get_stream") < 0) return NULL;
    if (hd_check(hd_state_of(op), hipdnnGetStream(self->handle, &stream), "Handle.get_stream") <
        0)
        return NULL;
    return PyLong_FromVoidPtr(stream);
}

/* Plans and graphs built on the handle keep their own reference to it (the backend
 * counts them), so destroying it here only ends this object's use of it. */
static PyObject* handle_destroy(PyObject* op, PyObject* unused) {
    (void)unused;
    hd_Handle* self = (hd_Handle*)op;
    if (hd_handle_live(op, "Handle.destroy") < 0) return NULL;
    /* Wait for a call running on it without the GIL (execute holds the lock). */
    PyThread_type_lock lock = hd_handle_lock(self);
    if (!lock) return NULL;
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(lock, WAIT_LOCK);
    Py_END_ALLOW_THREADS
    hipdnnHandle_t h = self->handle;
    self->handle = NULL;
    PyThread_release_lock(lock);
    if (hd_check(hd_state_of(op), hipdnnDestroy(h), "Handle.destroy") < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject* handle_is_destroyed(PyObject* op, void* closure) {
    (void)closure;
    return PyBool_FromLong(((hd_Handle*)op)->handle == NULL);
}

static PyObject* handle_repr(PyObject* op) {
    hd_Handle* self = (hd_Handle*)op;
    if (!self->handle) return PyUnicode_FromString("<hipdnn._C.Handle (destroyed)>");
    return PyUnicode_FromFormat("<hipdnn._C.Handle %p>", (void*)self->handle);
}

static PyGetSetDef handle_getset[] = {
    {"destroyed", handle_is_destroyed, NULL, "Whether destroy() was called.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef handle_methods[] = {
    {"set_stream", handle_set_stream, METH_O,
     "set_stream($self, stream)\n--\n\nSets the stream engines run on: None (the default "
     "stream), an int (a raw hipStream_t / cudaStream_t), a PyTorch stream, a CuPy stream, or "
     "an object with __cuda_stream__()."},
    {"get_stream", handle_get_stream, METH_NOARGS,
     "get_stream($self)\n--\n\nThe stream as an int address (0 = default stream)."},
    {"destroy", handle_destroy, METH_NOARGS,
     "destroy($self)\n--\n\nReleases the handle now rather than when the object is collected. "
     "Plans built on it keep working (through other handles); using this object again "
     "raises ValueError."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot handle_slots[] = {
    {Py_tp_new, handle_new},
    {Py_tp_dealloc, handle_dealloc},
    {Py_tp_repr, handle_repr},
    {Py_tp_methods, handle_methods},
    {Py_tp_getset, handle_getset},
    {Py_tp_doc, "Handle()\n--\n\nA hipdnn handle: the stream engines run on. The first "
                "handle of the process loads the engine plugins."},
    {0, NULL},
};

PyType_Spec hd_handle_spec = {
    .name = "hipdnn._C.Handle",
    .basicsize = sizeof(hd_Handle),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = handle_slots,
};
