/* device_facts.h — a device's bandwidth and peak FLOP rate, for the heuristic plugins'
 * hipdnnHeuristicDeviceInfo_t (device_facts.c). */
#ifndef HIPDNN_BACKEND_DEVICE_FACTS_H
#define HIPDNN_BACKEND_DEVICE_FACTS_H

#include <stdbool.h>
#include <stdint.h>

#include "hipdnn/hipdnn_sdk.h"

/* From what the device runtime reports of `device` (hipdnnDeviceFacts): its
 * multiprocessors, its memory bandwidth in bytes/s (two transfers a memory clock across
 * the bus) and its dense peak FLOP/s (multiprocessors x core clock x what one does a
 * clock on `arch`: tensor cores for 16-bit inputs when `narrow`, else fp32 FMAs), each 0
 * where the runtime or the table does not know. */
void hipdnnDevicePeaks(int device, const char* arch, bool narrow, int32_t* sm_count,
                       double* bytes_per_s, double* flops);
/* Whether a matmul, convolution or attention node of g reads 16-bit or narrower inputs
 * (its peak is then the tensor cores'). */
bool hipdnnGraphIsNarrow(const hipdnnSdkGraph* g);

#endif
