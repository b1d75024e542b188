/* device_facts.c — a device's bandwidth and peak FLOP rate from what its runtime reports
 * (device_facts.h).  The runtime gives counts and clocks; what one multiprocessor does a
 * clock is the architecture's, from the table below: dense (no sparsity) FLOPs a clock,
 * 16-bit inputs on tensor cores (matrix cores) with fp32 accumulation, and fp32 FMAs
 * (two FLOPs each) on the vector units.  Each row is checked against its datasheet at
 * the datasheet's clock in the comment; at the clock the runtime reports (often the
 * boost clock) the peak comes out somewhat higher.  An architecture not listed gets 0:
 * the heuristic plugin then uses its own estimate. */
#include <stdio.h>
#include <string.h>

#include "device.h"
#include "device_facts.h"

static const struct {
    const char* arch;
    int flop16, flop32; /* dense FLOPs a clock a multiprocessor (compute unit) */
} k_rates[] = {
    {"sm_70", 1024, 128},  /* V100: 80 SMs x 1.53 GHz: 125 TFLOP/s 16-bit, 15.7 fp32 */
    {"sm_75", 1024, 128},  /* T4: 40 x 1.59 GHz: 65, 8.1 */
    {"sm_80", 2048, 128},  /* A100: 108 x 1.41 GHz: 312, 19.5 */
    {"sm_86", 1024, 256},  /* A10: 72 x 1.695 GHz: 125, 31.2 */
    {"sm_89", 1024, 256},  /* L40S: 142 x 2.52 GHz: 366, 91.6 */
    {"sm_90", 4096, 256},  /* H100 SXM: 132 x 1.83 GHz: 989, 61.8 (67 at 1.98 GHz) */
    {"sm_100", 8192, 256}, /* B200: 148 x 1.86 GHz: 2250, 70 */
    {"gfx90a", 1024, 128}, /* MI250X, one GCD: 110 CUs x 1.7 GHz: 191, 23.9 */
    {"gfx942", 2048, 256}, /* MI300X: 304 x 2.1 GHz: 1307, 163 */
};

void hipdnnDevicePeaks(int device, const char* arch, bool narrow, int32_t* sm_count,
                       double* bytes_per_s, double* flops) {
    hipdnnDeviceFacts f = {0};
    const hipdnnDeviceRuntime* rt = hipdnnDeviceRuntimeGet();
    if (rt && rt->facts) rt->facts(device, &f);
    *sm_count = f.sm_count;
    /* DDR, GDDR and HBM all move data on both clock edges */
    *bytes_per_s = 2.0 * f.mem_clock_khz * 1e3 * (f.bus_width_bits / 8.0);
    *flops = 0;
    for (size_t k = 0; k < sizeof(k_rates) / sizeof(k_rates[0]); ++k)
        if (arch && strcmp(arch, k_rates[k].arch) == 0)
            *flops = (double)f.sm_count * f.clock_khz * 1e3 *
                     (narrow ? k_rates[k].flop16 : k_rates[k].flop32);
}

static bool narrow_type(hipdnnDataType_t t) {
    return t == HIPDNN_DATA_HALF || t == HIPDNN_DATA_BFLOAT16 || t == HIPDNN_DATA_INT8 ||
           t == HIPDNN_DATA_FP8_E4M3 || t == HIPDNN_DATA_FP8_E5M2;
}

bool hipdnnGraphIsNarrow(const hipdnnSdkGraph* g) {
    for (int32_t i = 0; g && i < g->num_nodes; ++i) {
        const hipdnnSdkNode* n = &g->nodes[i];
        bool heavy = n->kind == HIPDNN_OP_MATMUL || n->kind == HIPDNN_OP_CONV_FPROP ||
                     n->kind == HIPDNN_OP_CONV_DGRAD || n->kind == HIPDNN_OP_CONV_WGRAD ||
                     n->kind == HIPDNN_OP_SDPA_FWD || n->kind == HIPDNN_OP_SDPA_BWD;
        const hipdnnSdkTensor* a = heavy ? hipdnnSdkGraphFindTensor(g, n->inputs[0]) : NULL;
        if (a && narrow_type(a->data_type)) return true;
    }
    return false;
}
