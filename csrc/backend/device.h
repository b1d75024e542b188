/* The GPU runtime, resolved at run time (libamdhip64.so or libcudart.so) so that the
 * backend links none and runs on machines without a GPU.  Only what the backend itself
 * needs: the current device and telling host pointers from device pointers.  Each call
 * loads the runtime on first use: callers ask only when a device engine is involved or
 * a pointer's space was not declared. */
#ifndef HIPDNN_BACKEND_DEVICE_H
#define HIPDNN_BACKEND_DEVICE_H

#include <stdbool.h>

#include "hipdnn/hipdnn.h"

/* Where `ptr` lives.  Without a GPU runtime every pointer is host memory. */
hipdnnMemorySpace_t hipdnnDevicePointerSpace(const void* ptr);
/* The memory type a runtime's pointer attributes report, as a space (hip5: HIP 5's
 * numbering, else CUDA's and HIP 6's).  Exposed for tests of the tables. */
hipdnnMemorySpace_t hipdnnDeviceSpaceFromType(int type, bool hip5);
/* The calling thread's current device; 0 without a GPU runtime. */
void hipdnnDeviceCurrent(int* device);
/* "hip", "cuda" or "none". */
const char* hipdnnDeviceRuntimeName(void);

#endif
