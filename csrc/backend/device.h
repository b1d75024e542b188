/* The GPU runtime, resolved at run time (libamdhip64.so or libcudart.so) so that the
 * backend links none and runs on machines without a GPU.  Only what the backend itself
 * needs: telling host pointers from device pointers. */
#ifndef HIPDNN_BACKEND_DEVICE_H
#define HIPDNN_BACKEND_DEVICE_H

#include "hipdnn/hipdnn.h"

/* Where `ptr` lives.  Without a GPU runtime every pointer is host memory. */
hipdnnMemorySpace_t hipdnnDevicePointerSpace(const void* ptr);
/* "hip", "cuda" or "none". */
const char* hipdnnDeviceRuntimeName(void);

#endif
