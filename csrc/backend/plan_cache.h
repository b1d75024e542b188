/* The persistent plan cache (docs/engine_selection.md): the engine config autotuning chose
 * for a graph on a device, kept on disk so that later processes rank it first. */
#ifndef HIPDNN_BACKEND_PLAN_CACHE_H
#define HIPDNN_BACKEND_PLAN_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "descriptor.h"
#include "registry.h"

/* A tuned engine config: the engine's name, its knob choices and the median time it took. */
typedef struct {
    char engine[64];
    int32_t num_knobs;
    int64_t knobs[HIPDNN_ENGINE_MAX_KNOBS][2]; /* (knob id, value) */
    double ms;
} hipdnnPlanCacheEntry;

/* ---- the folder (cache_dir.c) ---- */

/* The plan cache's folder, hipdnnSdkCacheDir("plans"): $HIPDNN_CACHE_DIR/plans, else
 * $XDG_CACHE_HOME/hipdnn/plans, else $HOME/.cache/hipdnn/plans; false with `why` when
 * HIPDNN_CACHE=0 or nothing says where. */
bool hipdnnPlanCacheDir(char* dir, size_t len, char* why, size_t why_len);
/* Creates the folder (mode 0700) and takes its lock file's flock (exclusive): the writers of
 * other processes wait.  Returns the lock's fd, or -1 with `why`. */
int hipdnnPlanCacheLock(const char* dir, char* why, size_t why_len);
void hipdnnPlanCacheUnlock(int fd);
/* Under the lock: removes the least recently used entries (by mtime; a hit touches its
 * file) until at most $HIPDNN_CACHE_MAX_PLANS (default 4096) remain. */
void hipdnnPlanCacheEvict(const char* dir);

/* ---- entries (plan_cache.c) ---- */

/* The entry for the graph on its handle's device with this process's hipdnn and plugins:
 * true with *out (and the file in `path`) on a hit.  An entry that is damaged, or from
 * another hipdnn, device or plugin set, is ignored with one log line (and a damaged one
 * removed), never trusted. */
bool hipdnnPlanCacheLookup(const hipdnnGraphState* gs, hipdnnPlanCacheEntry* out, char* path,
                           size_t path_len);
/* Writes (or replaces) the graph's entry: a temporary file renamed over it, under the
 * folder's lock, then eviction.  Errors: NOT_SUPPORTED (cache off or no folder), INTERNAL_ERROR
 * (the file system's message). */
hipdnnStatus_t hipdnnPlanCacheStore(const hipdnnGraphState* gs, const hipdnnPlanCacheEntry* e);
/* Remembers the heuristics' first engine for the graph (its default knobs, time_ms -1:
 * ranked, not tuned) where no entry is there yet, so that a later process asks that engine
 * alone (heuristics.c's short cut) instead of every engine, whose vendor libraries take
 * ~100 ms each to start.  A tuned entry is never replaced.  Quiet: the cache off or a
 * failed write only logs (info), and sets no error.  Eviction runs on one store in 32
 * (chosen by the graph's hash), as a folder of thousands of entries takes milliseconds
 * to scan; the folder may pass its bound by a few dozen entries between evictions. */
void hipdnnPlanCacheRemember(const hipdnnGraphState* gs, const char* engine);

#endif
