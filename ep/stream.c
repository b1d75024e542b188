/* stream.c — ORT's sync streams for hipdnn-ep's GPU: each OrtSyncStreamImpl owns a hipdnn
 * stream (the vendor's own stream, blocking like the runtime's default one), which ORT
 * hands to the fused nodes' compute functions (KernelContext_GetGPUComputeStream: kernel.c
 * sets it on the handle and enqueues the plan there) and to data transfers.  A
 * notification is an event recorded on that stream: another stream of the device waits
 * for it on the device, the host by synchronizing it. */
#include <stdio.h>
#include <stdlib.h>

#include "hipdnn_ep.h"

typedef struct {
    OrtSyncStreamImpl base; /* first: ORT hands back OrtSyncStreamImpl* */
    ep_factory* f;
    hipdnnStream_t stream;
} ep_stream;

typedef struct {
    OrtSyncNotificationImpl base; /* first */
    ep_factory* f;
    hipdnnStream_t stream; /* where Activate records */
    hipdnnEvent_t event;
} ep_notification;

static OrtStatus* failed(const char* what, hipdnnStatus_t hs) {
    return ep_status(ORT_FAIL, "sync stream: %s: %s: %s", what, hipdnnGetErrorString(hs),
                     hipdnnPeekLastErrorString_ext());
}

/* ---- notifications ------------------------------------------------------------------- */

static ep_notification* note(OrtSyncNotificationImpl* n) { return (ep_notification*)n; }

static OrtStatus* ORT_API_CALL n_activate(OrtSyncNotificationImpl* n) {
    OrtStatus* st = ep_gpu_enter(note(n)->f->gpu.ordinal, "sync notification");
    if (st) return st;
    hipdnnStatus_t hs = hipdnnEventRecord_ext(note(n)->event, note(n)->stream);
    return hs == HIPDNN_STATUS_SUCCESS ? NULL : failed("hipdnnEventRecord_ext", hs);
}

static OrtStatus* ORT_API_CALL n_wait_device(OrtSyncNotificationImpl* n, OrtSyncStream* consumer) {
    OrtStatus* st = ep_gpu_enter(note(n)->f->gpu.ordinal, "sync notification");
    if (st) return st;
    hipdnnStream_t s = consumer ? (hipdnnStream_t)g_ort->SyncStream_GetHandle(consumer) : NULL;
    hipdnnStatus_t hs = hipdnnStreamWaitEvent_ext(s, note(n)->event);
    return hs == HIPDNN_STATUS_SUCCESS ? NULL : failed("hipdnnStreamWaitEvent_ext", hs);
}

static OrtStatus* ORT_API_CALL n_wait_host(OrtSyncNotificationImpl* n) {
    OrtStatus* st = ep_gpu_enter(note(n)->f->gpu.ordinal, "sync notification");
    if (st) return st;
    hipdnnStatus_t hs = hipdnnEventSynchronize_ext(note(n)->event);
    return hs == HIPDNN_STATUS_SUCCESS ? NULL : failed("hipdnnEventSynchronize_ext", hs);
}

static void ORT_API_CALL n_release(OrtSyncNotificationImpl* n) {
    if (!n) return;
    OrtStatus* st = ep_gpu_enter(note(n)->f->gpu.ordinal, "sync notification release");
    if (st) g_ort->ReleaseStatus(st);
    hipdnnEventDestroy_ext(note(n)->event);
    free(note(n));
}

/* ---- streams ------------------------------------------------------------------------- */

static ep_stream* strm(OrtSyncStreamImpl* s) { return (ep_stream*)s; }

static void* ORT_API_CALL s_handle(OrtSyncStreamImpl* s) { return strm(s)->stream; }

static OrtStatus* ORT_API_CALL s_notification(OrtSyncStreamImpl* s, OrtSyncNotificationImpl** out) {
    *out = NULL;
    ep_stream* es = strm(s);
    OrtStatus* st = ep_gpu_enter(es->f->gpu.ordinal, "sync notification");
    if (st) return st;
    ep_notification* n = calloc(1, sizeof(*n));
    if (!n) return ep_status(ORT_FAIL, "sync stream: out of memory");
    hipdnnStatus_t hs = hipdnnEventCreate_ext(&n->event);
    if (hs != HIPDNN_STATUS_SUCCESS) {
        free(n);
        return failed("hipdnnEventCreate_ext", hs);
    }
    n->f = es->f;
    n->stream = es->stream;
    n->base.ort_version_supported = ORT_API_VERSION;
    n->base.Release = n_release;
    n->base.Activate = n_activate;
    n->base.WaitOnDevice = n_wait_device;
    n->base.WaitOnHost = n_wait_host;
    *out = &n->base;
    return NULL;
}

static OrtStatus* ORT_API_CALL s_flush(OrtSyncStreamImpl* s) {
    OrtStatus* st = ep_gpu_enter(strm(s)->f->gpu.ordinal, "sync stream flush");
    if (st) return st;
    hipdnnStatus_t hs = hipdnnStreamSynchronize_ext(strm(s)->stream);
    return hs == HIPDNN_STATUS_SUCCESS ? NULL : failed("hipdnnStreamSynchronize_ext", hs);
}

static OrtStatus* ORT_API_CALL s_run_end(OrtSyncStreamImpl* s) {
    (void)s; /* nothing is kept per run: workspaces belong to the kernels (kernel.c) */
    return NULL;
}

static void ORT_API_CALL s_release(OrtSyncStreamImpl* s) {
    if (!s) return;
    ep_stream* es = strm(s);
    OrtStatus* st = ep_gpu_enter(es->f->gpu.ordinal, "sync stream release");
    if (st) g_ort->ReleaseStatus(st);
    /* work still queued finishes first: the runtime's destroy does not cancel it */
    hipdnnStatus_t hs = hipdnnStreamDestroy_ext(es->stream);
    ep_log(es->f->logger, ORT_LOGGING_LEVEL_VERBOSE,
           hs == HIPDNN_STATUS_SUCCESS ? ORT_LOGGING_LEVEL_VERBOSE : ORT_LOGGING_LEVEL_WARNING,
           "sync stream %p released%s%s", es->stream, hs == HIPDNN_STATUS_SUCCESS ? "" : ": ",
           hs == HIPDNN_STATUS_SUCCESS ? "" : hipdnnPeekLastErrorString_ext());
    free(es);
}

OrtStatus* ep_stream_create(ep_factory* f, const OrtMemoryDevice* device, OrtSyncStreamImpl** out) {
    *out = NULL;
    if (!f->gpu_memory_device || !device ||
        !g_ep_api->MemoryDevice_AreEqual(device, f->gpu_memory_device))
        return NULL; /* not hipdnn-ep's device memory: no stream of ours */
    OrtStatus* st = ep_gpu_enter(f->gpu.ordinal, "CreateSyncStreamForDevice");
    if (st) return st;
    ep_stream* s = calloc(1, sizeof(*s));
    if (!s) return ep_status(ORT_FAIL, "CreateSyncStreamForDevice: out of memory");
    hipdnnStatus_t hs = hipdnnStreamCreate_ext(&s->stream);
    if (hs != HIPDNN_STATUS_SUCCESS) {
        free(s);
        return failed("hipdnnStreamCreate_ext", hs);
    }
    s->f = f;
    s->base.ort_version_supported = ORT_API_VERSION;
    s->base.Release = s_release;
    s->base.GetHandle = s_handle;
    s->base.CreateNotification = s_notification;
    s->base.Flush = s_flush;
    s->base.OnSessionRunEnd = s_run_end;
    ep_log(f->logger, ORT_LOGGING_LEVEL_VERBOSE, ORT_LOGGING_LEVEL_VERBOSE,
           "sync stream %p created on GPU %d", s->stream, f->gpu.ordinal);
    *out = &s->base;
    return NULL;
}
