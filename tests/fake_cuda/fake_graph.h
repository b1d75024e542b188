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
    FAKE_CAPTURE_MERGE = 902,       /* CUDA_ERROR_STREAM_CAPTURE_MERGE */
    FAKE_CAPTURE_UNJOINED = 904,    /* CUDA_ERROR_STREAM_CAPTURE_UNJOINED */
    FAKE_CAPTURE_IMPLICIT = 906,    /* CUDA_ERROR_STREAM_CAPTURE_IMPLICIT */
    FAKE_CAPTURED_EVENT = 907,      /* CUDA_ERROR_CAPTURED_EVENT */
    FAKE_CAPTURE_WRONG_THREAD = 908, /* CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD */
    FAKE_GRAPH_EXEC_UPDATE_FAILURE = 910, /* CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE */
};

typedef struct fake_stream fake_stream; /* a CUstream; NULL is the legacy default stream */

/* s when it is a stream cuStreamCreate made and not yet destroyed, else NULL: CUDA's
 * special handles, CU_STREAM_LEGACY (0x1) and CU_STREAM_PER_THREAD (0x2), name default
 * streams, which the fake keeps as NULL, and an unknown handle (a lying
 * __cuda_array_interface__'s stream) is never a pointer to follow. */
fake_stream* fake_stream_real(fake_stream* s);

/* Whether s is capturing (or its capture was invalidated). */
int fake_stream_capturing(fake_stream* s);
/* Called by what a capture forbids (allocating, freeing, synchronizing) on stream s (NULL:
 * no stream): 1, having invalidated the captures concerned, when it is forbidden now: s
 * captures, or a capture forbids the calling thread's unsafe calls (CUDA's modes). */
int fake_capture_forbids(fake_stream* s);
/* Where an event was recorded: a capture in progress (seq, 0: none), the stream, and how
 * much work that stream had recorded in it then. */
typedef struct {
    unsigned long seq;
    fake_stream* stream;
    long ops;
} fake_capture_mark;
/* The mark of an event recorded on s now. */
void fake_capture_mark_on(fake_stream* s, fake_capture_mark* m);
/* Whether the mark's capture is still in progress (the event may not be waited on from
 * the host then: CUDA_ERROR_CAPTURED_EVENT). */
int fake_capture_marked(const fake_capture_mark* m);
/* Stream s waits on an event with mark m: 0, s forked into m's capture (s not capturing)
 * or m's stream joined back (s in that capture); or an error. */
int fake_capture_wait(fake_stream* s, const fake_capture_mark* m);
/* Records a copy (fill 0) or a fill of `value` on a capturing stream: 0 or an error. */
int fake_capture_copy(fake_stream* s, uintptr_t dst, uintptr_t src, size_t bytes, int fill,
                      unsigned char value);
/* A new stream (NULL when out of memory), and freeing one with any capture it holds. */
fake_stream* fake_stream_new(void);
void fake_stream_free(fake_stream* s);

#endif
