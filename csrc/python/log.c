/* log.c — backend log messages queued for a Python callable.
 *
 * The backend may log from any thread while holding its own log lock.  Taking the GIL
 * there could deadlock against a thread that holds the GIL and is about to log, so the
 * C callback only queues the message; queued messages are handed to the Python callable
 * (with the GIL held) when the next hipdnn._C call returns, or on flush_log().
 *
 * A leaf of the extension: no module state, no exceptions of ours, no other _C file.
 *
 * The queue is process-wide on purpose.  The backend keeps one log callback per process
 * (hipdnnSetUserLogCallback_ext), and calls it on any thread without the GIL, possibly
 * while a module instance is being torn down.  A queue in module state would be freed
 * under such a call; a static one never is.  Whichever module instance flushes next
 * delivers the messages to its callable.
 *
 * fork(): the queue's lock is held around it (pthread_atfork), so a child never finds it
 * held by a thread that does not exist there, nor the list half linked.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

#define QUEUE_MAX 1024

typedef struct entry {
    struct entry* next;
    int level;
    char text[]; /* NUL-terminated */
} entry;

static PyThread_type_lock g_lock;
static entry* g_head;
static entry* g_tail;
static int g_count;
static long g_dropped;

static void fork_prepare(void) {
    if (g_lock) PyThread_acquire_lock(g_lock, WAIT_LOCK);
}

static void fork_release(void) {
    if (g_lock) PyThread_release_lock(g_lock);
}

int hd_log_init(void) {
    if (!g_lock) {
        g_lock = PyThread_allocate_lock();
        if (!g_lock) {
            PyErr_NoMemory();
            return -1;
        }
        /* Only the queue is ours: the backend keeps its own locks fork-safe. */
        if (pthread_atfork(fork_prepare, fork_release, fork_release) != 0) {
            PyErr_NoMemory();
            return -1;
        }
    }
    return 0;
}

/* Runs on any thread, without the GIL: no Python calls here. */
void hd_log_enqueue(hipdnnLogLevel_t level, const char* message, void* user_data) {
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
    *dropped = 0;
    if (!g_lock) return NULL;
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

void hd_log_discard(void) {
    long dropped;
    free_all(take_all(&dropped));
}

void hd_log_deliver(PyObject* callback) {
    if (!g_lock || !callback) return;
    long dropped = 0;
    entry* list = take_all(&dropped);
    if (!list && !dropped) return;
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    Py_INCREF(callback); /* the callable may replace itself */
    if (dropped) {
        PyObject* r = PyObject_CallFunction(callback, "is", (int)HIPDNN_LOG_WARN,
                                            "hipdnn._C: log queue overflowed; messages dropped");
        if (!r) PyErr_WriteUnraisable(callback);
        Py_XDECREF(r);
    }
    for (entry* e = list; e; e = e->next) {
        PyObject* text = PyUnicode_DecodeUTF8(e->text, (Py_ssize_t)strlen(e->text), "replace");
        PyObject* r = text ? PyObject_CallFunction(callback, "iN", e->level, text) : NULL;
        if (!r) PyErr_WriteUnraisable(callback);
        Py_XDECREF(r);
    }
    Py_DECREF(callback);
    free_all(list);
    PyErr_Restore(et, ev, tb);
}
