/* locate.c — finding libhipdnn_ep.so and opening it.  Every call to the OS loader in the
 * bridge is here.  RTLD_LOCAL: hipdnn-ep's symbols (and hipdnn's, through it) must not
 * satisfy lookups of the umbrella's other backends; RTLD_NOW: a missing dependency shows
 * at load, where it can be reported, rather than at a first call. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge.h"

/* Appends to a message without overflowing it; a message cut short still ends in '\0'. */
static void append(char* buf, size_t len, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void append(char* buf, size_t len, const char* fmt, ...) {
    size_t used = strnlen(buf, len);
    if (used + 1 >= len) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

static const char g_anchor; /* an address inside this library, for dladdr */

/* This library's folder with BRIDGE_EP_FILE appended; false when the loader cannot say
 * where this library is (then the candidate is skipped, and the message says so). */
static bool beside_me(char* out, size_t len) {
    Dl_info info;
    if (!dladdr(&g_anchor, &info) || !info.dli_fname) return false;
    const char* slash = strrchr(info.dli_fname, '/');
    /* A bare name means the loader found us through its search path: the folder is not
     * known, and that path is the last candidate anyway. */
    if (!slash) return false;
    int n = snprintf(out, len, "%.*s/%s", (int)(slash - info.dli_fname), info.dli_fname,
                     BRIDGE_EP_FILE);
    return n > 0 && (size_t)n < len;
}

/* One candidate: opened and resolved (ORT_OK), not opened (ORT_NO_SUCHFILE), or opened
 * but not hipdnn-ep (ORT_FAIL; closed again).  The reason is appended to `why`. */
static OrtErrorCode try_open(bridge_lib* lib, const char* path, const char* origin, char* why,
                             size_t why_len) {
    dlerror(); /* a stale error from elsewhere must not be reported as ours */
    void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char* e = dlerror();
        append(why, why_len, "\n  %s (%s): %s", path, origin, e ? e : "dlopen failed");
        return ORT_NO_SUCHFILE;
    }
    /* dlsym gives void*; POSIX guarantees it converts to a function pointer. */
    void* create = dlsym(h, "CreateEpFactories");
    void* release = dlsym(h, "ReleaseEpFactory");
    if (!create || !release) {
        append(why, why_len, "\n  %s (%s): opened, but it does not export %s", path, origin,
               !create ? (!release ? "CreateEpFactories nor ReleaseEpFactory"
                                   : "CreateEpFactories")
                       : "ReleaseEpFactory");
        dlclose(h);
        return ORT_FAIL;
    }
    /* HIPDNN_EP_LIBRARY naming this bridge would have it forward to itself forever. */
    Dl_info mine, theirs;
    if (dladdr(&g_anchor, &mine) && dladdr(create, &theirs) &&
        mine.dli_fbase == theirs.dli_fbase) {
        append(why, why_len, "\n  %s (%s): that is this bridge, not hipdnn-ep", path, origin);
        dlclose(h);
        return ORT_FAIL;
    }
    lib->handle = h;
    memcpy(&lib->create, &create, sizeof(lib->create));
    memcpy(&lib->release, &release, sizeof(lib->release));
    return ORT_OK;
}

OrtErrorCode bridge_lib_open(bridge_lib* lib, char* why, size_t why_len) {
    if (why_len) why[0] = '\0';
    append(why, why_len, BRIDGE_PREFIX "could not load hipdnn-ep; tried:");
    const char* env = getenv(BRIDGE_EP_ENV);
    /* An explicit choice is not second-guessed: falling back to another copy would hide
     * a wrong setting behind a library that happens to load. */
    if (env && env[0]) return try_open(lib, env, BRIDGE_EP_ENV, why, why_len);

    OrtErrorCode worst = ORT_NO_SUCHFILE;
    char beside[PATH_MAX];
    if (beside_me(beside, sizeof(beside))) {
        OrtErrorCode rc = try_open(lib, beside, "beside libhipdnn_ort_bridge.so", why, why_len);
        if (rc == ORT_OK) return ORT_OK;
        if (rc == ORT_FAIL) worst = ORT_FAIL;
    } else {
        append(why, why_len,
               "\n  (the folder of libhipdnn_ort_bridge.so is unknown: not searched)");
    }
    OrtErrorCode rc = try_open(lib, BRIDGE_EP_FILE, "the loader's search path", why, why_len);
    if (rc == ORT_OK) return ORT_OK;
    append(why, why_len, "\n  (set " BRIDGE_EP_ENV " to the path of " BRIDGE_EP_FILE ")");
    return rc == ORT_FAIL ? ORT_FAIL : worst;
}

void bridge_lib_close(bridge_lib* lib) {
    if (!lib->handle) return;
    dlclose(lib->handle);
    lib->handle = NULL;
    lib->create = NULL;
    lib->release = NULL;
}
