/* Bounded message formatting for error strings and engines' reasons to decline. */
#include <stdarg.h>
#include <stdio.h>

#include "hipdnn/hipdnn_sdk.h"

void hipdnnSdkFormat(char* buf, size_t len, const char* fmt, ...) {
    if (!buf || len == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

bool hipdnnSdkDecline(char* why, size_t len, const char* who, const char* fmt, ...) {
    if (!why || len == 0) return false;
    size_t at = 0;
    if (who && *who) {
        int n = snprintf(why, len, "%s: ", who);
        at = n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why + at, len - at, fmt, ap);
    va_end(ap);
    for (char* s = why; *s; ++s) /* one line, whatever the names hold */
        if (*s == '\n' || *s == '\r' || *s == '\t') *s = ' ';
    return false;
}
