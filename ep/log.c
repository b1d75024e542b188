/* log.c — ORT statuses and log lines, each prefixed "hipdnn-ep: " so that a message in a
 * long ORT log says where it came from. */
#include <stdarg.h>
#include <stdio.h>

#include "hipdnn_ep.h"

OrtStatus* ep_status(OrtErrorCode code, const char* fmt, ...) {
    char msg[2048];
    int n = snprintf(msg, sizeof(msg), "hipdnn-ep: ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
    va_end(ap);
    return g_ort->CreateStatus(code, msg);
}

void ep_log(const OrtLogger* logger, OrtLoggingLevel threshold, OrtLoggingLevel level,
            const char* fmt, ...) {
    if (!logger || level < threshold) return;
    char msg[2048];
    int n = snprintf(msg, sizeof(msg), "hipdnn-ep: ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
    va_end(ap);
    /* A logging failure is not the caller's problem: the message is dropped. */
    OrtStatus* st = g_ort->Logger_LogMessage(logger, level, msg, __FILE__, __LINE__, "hipdnn-ep");
    if (st) g_ort->ReleaseStatus(st);
}
