/* Status names and the thread-local last-error message. */
#include <stdarg.h>
#include <stdio.h>

#include "error.h"

static _Thread_local char t_message[1024];

hipdnnStatus_t hipdnnFail(hipdnnStatus_t status, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t_message, sizeof(t_message), fmt, ap);
    va_end(ap);
    return status;
}

void hipdnnClearError(void) { t_message[0] = '\0'; }

const char* hipdnnErrorMessage(void) { return t_message; }

HIPDNN_EXPORT void hipdnnGetLastErrorString(char* message, size_t max_size) {
    if (message && max_size > 0) snprintf(message, max_size, "%s", t_message);
    t_message[0] = '\0';
}

HIPDNN_EXPORT const char* hipdnnPeekLastErrorString_ext(void) { return t_message; }

HIPDNN_EXPORT const char* hipdnnGetErrorString(hipdnnStatus_t status) {
#define NAME(s)                                                                               \
    case s: return #s
    switch (status) {
        NAME(HIPDNN_STATUS_SUCCESS);
        NAME(HIPDNN_STATUS_NOT_INITIALIZED);
        NAME(HIPDNN_STATUS_BAD_PARAM);
        NAME(HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
        NAME(HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED);
        NAME(HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND);
        NAME(HIPDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT);
        NAME(HIPDNN_STATUS_BAD_PARAM_STREAM_MISMATCH);
        NAME(HIPDNN_STATUS_NOT_SUPPORTED);
        NAME(HIPDNN_STATUS_INTERNAL_ERROR);
        NAME(HIPDNN_STATUS_ALLOC_FAILED);
        NAME(HIPDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED);
        NAME(HIPDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED);
        NAME(HIPDNN_STATUS_EXECUTION_FAILED);
        NAME(HIPDNN_STATUS_PLUGIN_ERROR);
    }
#undef NAME
    return "HIPDNN_STATUS_UNKNOWN";
}

HIPDNN_EXPORT const char* hipdnnVersionString_ext(void) {
#define HIPDNN_STR2(x) #x
#define HIPDNN_STR(x) HIPDNN_STR2(x)
    return HIPDNN_STR(HIPDNN_VERSION_MAJOR) "." HIPDNN_STR(HIPDNN_VERSION_MINOR) "." HIPDNN_STR(
        HIPDNN_VERSION_PATCH);
}
