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

HIPDNN_EXPORT const char* hipdnnGetLastErrorString(void) { return t_message; }

HIPDNN_EXPORT const char* hipdnnGetErrorString(hipdnnStatus_t status) {
    switch (status) {
    case HIPDNN_STATUS_SUCCESS: return "HIPDNN_STATUS_SUCCESS";
    case HIPDNN_STATUS_NOT_INITIALIZED: return "HIPDNN_STATUS_NOT_INITIALIZED";
    case HIPDNN_STATUS_BAD_PARAM: return "HIPDNN_STATUS_BAD_PARAM";
    case HIPDNN_STATUS_BAD_PARAM_NULL_POINTER: return "HIPDNN_STATUS_BAD_PARAM_NULL_POINTER";
    case HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED: return "HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED";
    case HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND: return "HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND";
    case HIPDNN_STATUS_NOT_SUPPORTED: return "HIPDNN_STATUS_NOT_SUPPORTED";
    case HIPDNN_STATUS_INTERNAL_ERROR: return "HIPDNN_STATUS_INTERNAL_ERROR";
    case HIPDNN_STATUS_ALLOC_FAILED: return "HIPDNN_STATUS_ALLOC_FAILED";
    case HIPDNN_STATUS_EXECUTION_FAILED: return "HIPDNN_STATUS_EXECUTION_FAILED";
    case HIPDNN_STATUS_PLUGIN_ERROR: return "HIPDNN_STATUS_PLUGIN_ERROR";
    }
    return "HIPDNN_STATUS_UNKNOWN";
}

HIPDNN_EXPORT const char* hipdnnVersionString_ext(void) {
#define HIPDNN_STR2(x) #x
#define HIPDNN_STR(x) HIPDNN_STR2(x)
    return HIPDNN_STR(HIPDNN_VERSION_MAJOR) "." HIPDNN_STR(HIPDNN_VERSION_MINOR) "." HIPDNN_STR(
        HIPDNN_VERSION_PATCH);
}
