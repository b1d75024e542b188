/* fuzz_graph_bytes — arbitrary bytes as a serialized graph.
 *
 * Whatever the bytes, hipdnnBackendCreateAndDeserializeGraph_ext gives a graph or a clean
 * status with a message.  A graph it accepts must describe itself, serialize to bytes it
 * reads back to the same bytes, and run on the reference engine with buffers of exactly
 * its tensors' sizes (graphs too big to run quickly are left out). */
#include <stdlib.h>
#include <string.h>

#include "fuzz_support.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fz_handle(); /* load the plugins before the first input, not inside one */
    /* The bytes at an offset of size % 8 from an 8-aligned address: callers' buffers can
     * sit anywhere, and [long] vectors must be read as such (bug 10). */
    uint8_t* copy = malloc(size + 8);
    if (!copy) fz_fail("out of memory");
    memcpy(copy + size % 8, data, size);
    hipdnnBackendDescriptor_t g = NULL;
    hipdnnStatus_t st = hipdnnBackendCreateAndDeserializeGraph_ext(&g, copy + size % 8, size);
    free(copy);
    if (st != HIPDNN_STATUS_SUCCESS) {
        if (g) fz_fail("a failed deserialize returned a descriptor");
        if (hipdnnPeekLastErrorString_ext()[0] == '\0')
            fz_fail("deserialize failed with %s but left no message", hipdnnGetErrorString(st));
        return 0;
    }
    int64_t n = 0;
    if (hipdnnBackendGetAttribute(g, HIPDNN_ATTR_OPERATIONGRAPH_DESCRIPTION_EXT, HIPDNN_TYPE_CHAR,
                                  0, &n, NULL) || n <= 0)
        fz_fail("a deserialized graph has no description");
    char* text = malloc((size_t)n + 1);
    if (!text || hipdnnBackendGetAttribute(g, HIPDNN_ATTR_OPERATIONGRAPH_DESCRIPTION_EXT,
                                           HIPDNN_TYPE_CHAR, n + 1, &n, text) ||
        strlen(text) != (size_t)n)
        fz_fail("description of a deserialized graph");
    free(text);
    fz_check_round_trip(g);
    uint64_t seed = size;
    for (size_t i = 0; i < size && i < 64; ++i) seed = seed * 131 + data[i];
    fz_run_graph(g, seed, NULL);
    hipdnnBackendDestroyDescriptor(g);
    return 0;
}
