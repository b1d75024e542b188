/* fake_graph.h — what fake_cuda.c asks of fake_graph.c: streams that capture. */
#ifndef HIPDNN_TEST_FAKE_GRAPH_H
#define HIPDNN_TEST_FAKE_GRAPH_H

#include <stddef.h>
#include <stdint.h>

/* The driver's error numbers this side returns. */
enum {
    FAKE_INVALID_VALUE = 1,
    FAKE_OUT_OF_MEMORY = 2,
    FAKE_ILLEGAL_STATE = 401,
    FAKE_CAPTURE_UNSUPPORTED = 900, /* CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED */
    FAKE_CAPTURE_INVALIDATED = 901, /* CUDA_ERROR_STREAM_CAPTURE_INVALIDATED */
    FAKE_GRAPH_EXEC_UPDATE_FAILURE = 910, /* CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE */
};

typedef struct fake_stream fake_stream; /* a CUstream; NULL is the legacy default stream */

/* Whether s is capturing (or its capture was invalidated). */
int fake_stream_capturing(fake_stream* s);
/* Called by what a capture forbids (allocating, freeing, synchronizing) on stream s (NULL:
 * no stream): 1, having invalidated the captures concerned, when it is forbidden now. */
int fake_capture_forbids(fake_stream* s);
/* Records a copy (fill 0) or a fill of `value` on a capturing stream: 0 or an error. */
int fake_capture_copy(fake_stream* s, uintptr_t dst, uintptr_t src, size_t bytes, int fill,
                      unsigned char value);
/* A new stream (NULL when out of memory), and freeing one with any capture it holds. */
fake_stream* fake_stream_new(void);
void fake_stream_free(fake_stream* s);

#endif
