/* The only place that talks to the OS loader (plugins and the device runtime). */
#ifndef HIPDNN_BACKEND_DL_H
#define HIPDNN_BACKEND_DL_H

void* hipdnnDlOpen(const char* path);             /* RTLD_NOW | RTLD_LOCAL; NULL on failure */
void* hipdnnDlSymbol(void* lib, const char* name); /* NULL if absent */
void hipdnnDlClose(void* lib);
const char* hipdnnDlError(void); /* the loader's last message, never NULL */
/* Folder holding libhipdnn_backend.so (no trailing slash), "" if unknown. */
const char* hipdnnDlBackendDir(void);

#endif
