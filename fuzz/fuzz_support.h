/* fuzz_support.h — what the libFuzzer targets of fuzz/ share: one handle for the process,
 * a reader that turns the fuzzer's bytes into numbers, and running a finalized graph on
 * the reference engine with buffers sized exactly from the graph's own tensors (so ASan
 * sees any access outside them).
 *
 * A broken invariant is a crash on purpose: fz_fail prints what and aborts, and libFuzzer
 * saves the input that did it. */
#ifndef HIPDNN_FUZZ_SUPPORT_H
#define HIPDNN_FUZZ_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

#include "hipdnn/hipdnn.h"

/* Bounds that keep one input fast: graphs over them are checked but not run. */
#define FZ_MAX_RUN_BYTES (4u << 20)     /* all non-virtual tensors together */
#define FZ_MAX_RUN_WORK (INT64_C(1) << 23) /* estimated multiply-adds */
#define FZ_MAX_RUN_NODES 256
#define FZ_MAX_WORKSPACE (INT64_C(64) << 20)

/* The process's handle (created on first use, log output off).  Aborts if none can be made:
 * the fuzz build always has the reference engine. */
hipdnnHandle_t fz_handle(void);

/* Prints "fuzz invariant: ..." with the backend's last message, then aborts. */
void fz_fail(const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2), noreturn))
#endif
    ;

/* Consumes the fuzzer's bytes front to back; past the end every read gives 0. */
typedef struct {
    const uint8_t* p;
    size_t n;
} fz_reader;

uint8_t fz_u8(fz_reader* r);
uint16_t fz_u16(fz_reader* r);
uint32_t fz_u32(fz_reader* r);
uint64_t fz_u64(fz_reader* r);
/* A value in [lo, hi] (hi >= lo), from as few bytes as the range needs. */
int64_t fz_range(fz_reader* r, int64_t lo, int64_t hi);
/* Mostly small numbers, sometimes an extreme one (0, -1, INT64_MAX, 2^40 ...). */
int64_t fz_int(fz_reader* r);
/* A double, sometimes NaN, +-Inf, -0 or a subnormal. */
double fz_double(fz_reader* r);

/* Outputs of one run, concatenated in OUTPUT_UIDS order (NULL when not wanted). */
typedef struct {
    uint8_t* bytes;
    size_t size;
    int ran; /* 1 if some engine ran the graph */
} fz_outputs;

void fz_outputs_free(fz_outputs* o);

/* Gives `graph` (finalized) the process handle if it has none, asks the heuristics for
 * engines and runs up to two of them, each on fresh buffers: inputs filled from `seed`
 * (special values included), outputs poisoned.  Graphs over the FZ_MAX_* bounds are not
 * run.  Failures of the library must be clean statuses; anything else aborts.  With `out`,
 * the first engine's outputs are kept there. */
void fz_run_graph(hipdnnBackendDescriptor_t graph, uint64_t seed, fz_outputs* out);

/* Runs a finalized EXECUTION_PLAN once, as fz_run_graph runs each of its plans (bounds
 * included), on the graph its engine config leads to. */
void fz_run_plan(hipdnnBackendDescriptor_t plan, uint64_t seed);

/* Serializes a finalized graph (malloc'd bytes, caller frees); aborts on failure, which a
 * finalized graph must never give. */
uint8_t* fz_serialize(hipdnnBackendDescriptor_t graph, size_t* size);

/* Serialize -> deserialize -> serialize must reach a fixed point: bytes the library wrote
 * are bytes it reads back, to the same bytes.  Aborts otherwise. */
void fz_check_round_trip(hipdnnBackendDescriptor_t graph);

#endif /* HIPDNN_FUZZ_SUPPORT_H */
