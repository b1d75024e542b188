/* The only place that talks to the OS loader (plugins, the device runtime, and the
 * dynamic stubs' search for the backend). */
#ifndef HIPDNN_BACKEND_DL_H
#define HIPDNN_BACKEND_DL_H

#include <stddef.h>

void* hipdnnDlOpen(const char* path);             /* RTLD_NOW | RTLD_LOCAL; NULL on failure */
void* hipdnnDlSymbol(void* lib, const char* name); /* NULL if absent */
void hipdnnDlClose(void* lib);
const char* hipdnnDlError(void); /* the loader's last message, never NULL */
/* The first of the NULL-terminated `names` that opens, its name in *opened; NULL when
 * none does, with "name: loader message; ..." for each in `tried` (a device runtime's
 * candidate libraries). */
void* hipdnnDlOpenFirst(const char* const* names, const char** opened, char* tried,
                        size_t len);
/* Folder of the object this file is linked into (no trailing slash), "" if unknown: in
 * the backend, the folder of libhipdnn_backend.so; in libhipdnn_dynamic.a, the folder of
 * the consumer (its executable or shared library). */
const char* hipdnnDlSelfDir(void);

#endif
