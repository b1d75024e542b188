/* log.c — backend log messages to a Python callable.
 *
 * The backend may log from any thread while holding its own log lock.  Taking the GIL
 * there could deadlock against a thread that holds the GIL and is about to log, so the
 * C callback only queues the message; queued messages are handed to the Python callable
 * (with the GIL held) when the next hipdnn._C call returns, or on flush_log().
 */
#include <stdlib.h>
#include <string.h>

#include "module.h"

#define QUEUE_MAX 1024

typedef struct entry {
    struct entry* next;
    int level;
    char text[]; /* NUL-terminated */
} entry;

/* Process-wide, like the backend's logger it mirrors. */
static PyThread_type_lock g_lock;
static entry* g_head;
static entry* g_tail;
static int g_count;
static long g_dropped;

int hd_log_init(void) {
    if (!g_lock) {
        g_lock = PyThread_allocate_lock();
        if (!g_lock) {
            PyErr_NoMemory();
            return -1;
        }
    }
    return 0;
}

/* Runs on any thread, without the GIL: no Python calls here. */
static void queue_message(hipdnnLogLevel_t level, const char* message, void* user_data) {
    (void)user_data;
    if (!g_lock || !message) return;
    size_t n = strlen(message);
    entry* e = malloc(sizeof(entry) + n + 1);
    if (e) {
        e->next = NULL;
        e->level = (int)level;
        memcpy(e->text, message, n + 1);
    }
    PyThread_acquire_lock(g_lock, WAIT_LOCK);
    if (!e || g_count >= QUEUE_MAX) {
        g_dropped++;
        free(e);
    } else {
        if (g_tail) g_tail->next = e;
        else g_head = e;
        g_tail = e;
        g_count++;
    }
    PyThread_release_lock(g_lock);
}

static entry* take_all(long* dropped) {
    PyThread_acquire_lock(g_lock, WAIT_LOCK);
    entry* list = g_head;
    *dropped = g_dropped;
    g_head = g_tail = NULL;
    g_count = 0;
    g_dropped = 0;
    PyThread_release_lock(g_lock);
    return list;
}

static void free_all(entry* e) {
    while (e) {
        entry* next = e->next;
        free(e);
        e = next;
    }
}

/* Calls the Python callable for each queued message.  Never raises: an exception from
 * the callable is reported as unraisable, and any exception already set is kept. */
void hd_log_flush(hd_state* st) {
    if (!g_lock || !st->log_callback) return;
    long dropped = 0;
    entry* list = take_all(&dropped);
    if (!list && !dropped) return;
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    PyObject* cb = st->log_callback;
    Py_INCREF(cb); /* the callable may replace itself */
    if (dropped) {
        PyObject* r = PyObject_CallFunction(cb, "is", (int)HIPDNN_LOG_WARN,
                                            "hipdnn._C: log queue overflowed; messages dropped");
        if (!r) PyErr_WriteUnraisable(cb);
        Py_XDECREF(r);
    }
    for (entry* e = list; e; e = e->next) {
        PyObject* text = PyUnicode_DecodeUTF8(e->text, (Py_ssize_t)strlen(e->text), "replace");
        PyObject* r = text ? PyObject_CallFunction(cb, "iN", e->level, text) : NULL;
        if (!r) PyErr_WriteUnraisable(cb);
        Py_XDECREF(r);
    }
    Py_DECREF(cb);
    free_all(list);
    PyErr_Restore(et, ev, tb);
}

/* _C.set_log_callback(callable or None) */
PyObject* hd_set_log_callback(PyObject* module, PyObject* callback) {
    hd_state* st = hd_get_state(module);
    if (callback != Py_None && !PyCallable_Check(callback)) {
        return hd_type_error("set_log_callback: expected a callable or None", callback);
    }
    hipdnnStatus_t s;
    if (callback == Py_None) {
        s = hipdnnSetUserLogCallback_ext(NULL, NULL);
        long dropped;
        free_all(take_all(&dropped));
        Py_CLEAR(st->log_callback);
    } else {
        PyObject* old = st->log_callback;
        Py_INCREF(callback);
        st->log_callback = callback;
        Py_XDECREF(old);
        s = hipdnnSetUserLogCallback_ext(queue_message, NULL);
    }
    if (hd_check(st, s, "set_log_callback") < 0) return NULL;
    Py_RETURN_NONE;
}

/* _C.set_log_level(level) with level one of LOG_OFF .. LOG_INFO */
PyObject* hd_set_log_level(PyObject* module, PyObject* arg) {
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

/* _C.flush_log(): deliver queued messages now (e.g. after work on other threads). */
PyObject* hd_flush_log(PyObject* module, PyObject* unused) {
    (void)unused;
    hd_log_flush(hd_get_state(module));
    Py_RETURN_NONE;
}
