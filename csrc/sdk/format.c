/* Bounded message formatting for error strings. */
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
