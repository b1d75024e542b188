/* dtype.c — hipdnn data types against buffer-protocol struct formats (their names and
 * sizes are the SDK's, hipdnnSdkDataTypeName / hipdnnSdkDataTypeSize).
 *
 * Formats are classified by kind (signed, unsigned, float, bool) and item size rather
 * than by letter, because 'l' and 'q' are both int64 on LP64 and NumPy picks either.
 */
#include <stdio.h>
#include <string.h>

#include "module.h"

typedef enum { KIND_NONE, KIND_SIGNED, KIND_UNSIGNED, KIND_FLOAT, KIND_BOOL } kind_t;

static kind_t format_kind(const char* format) {
    if (!format) return KIND_UNSIGNED; /* no format means unsigned bytes ('B') */
    const char* f = format;
    if (*f == '@' || *f == '=') {
        f++;
    } else if (*f == '<' || *f == '>' || *f == '!') {
        /* Explicit byte order: only the machine's own is usable. */
        const unsigned one = 1;
        int little = *(const unsigned char*)&one == 1;
        if ((*f == '<') != little) return KIND_NONE;
        f++;
    }
    if (f[0] == '\0' || f[1] != '\0') return KIND_NONE; /* counts, structs, pointers */
    switch (f[0]) {
    case 'b': case 'h': case 'i': case 'l': case 'q': case 'n': return KIND_SIGNED;
    case 'B': case 'H': case 'I': case 'L': case 'Q': case 'N': return KIND_UNSIGNED;
    case 'e': case 'f': case 'd': return KIND_FLOAT;
    case '?': return KIND_BOOL;
    default: return KIND_NONE;
    }
}

int hd_format_matches(const char* format, Py_ssize_t itemsize, int dtype) {
    kind_t k = format_kind(format);
    switch (dtype) {
    case HIPDNN_DATA_FLOAT: return k == KIND_FLOAT && itemsize == 4;
    case HIPDNN_DATA_DOUBLE: return k == KIND_FLOAT && itemsize == 8;
    case HIPDNN_DATA_HALF: return k == KIND_FLOAT && itemsize == 2;
    case HIPDNN_DATA_BFLOAT16: return k == KIND_UNSIGNED && itemsize == 2;
    case HIPDNN_DATA_INT8: return k == KIND_SIGNED && itemsize == 1;
    case HIPDNN_DATA_INT32: return k == KIND_SIGNED && itemsize == 4;
    case HIPDNN_DATA_INT64: return k == KIND_SIGNED && itemsize == 8;
    case HIPDNN_DATA_UINT8: return k == KIND_UNSIGNED && itemsize == 1;
    case HIPDNN_DATA_BOOLEAN: return k == KIND_BOOL && itemsize == 1;
    default: return 0;
    }
}

void hd_format_name(const char* format, Py_ssize_t itemsize, char* buf, size_t len) {
    const char* base = NULL;
    switch (format_kind(format)) {
    case KIND_SIGNED: base = "int"; break;
    case KIND_UNSIGNED: base = "uint"; break;
    case KIND_FLOAT: base = "float"; break;
    case KIND_BOOL: snprintf(buf, len, "bool"); return;
    case KIND_NONE: break;
    }
    if (base)
        snprintf(buf, len, "%s%d", base, (int)(itemsize * 8));
    else
        snprintf(buf, len, "format '%s'", format ? format : "B");
}
