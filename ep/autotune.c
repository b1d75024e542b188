/* autotune.c — ep.hipdnn.autotune=1 (docs/onnxruntime.md, "Autotuning"): on a plan's first
 * run, each part's candidate configs (plan.c's ep_plan_candidates: the heuristics' configs
 * for the device's memory and their engines' knob variants) are timed by the backend's
 * hipdnnAutotune_ext on ORT's own buffers, and the fastest runs from then on.  The backend
 * stores it in the plan cache, keyed by the graph's bytes and the device, so that a later
 * session or process (with or without the option) gets it first from the heuristics with
 * no timing (docs/engine_selection.md, "The plan cache"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipdnn_ep.h"

/* "tune_b k1000=1" of candidate c into buf. */
static void config_str(const ep_plan_part* c, char* buf, size_t len) {
    int used = snprintf(buf, len, "%s", c->engine);
    for (int i = 0; i < c->n_knobs && used > 0 && (size_t)used < len; ++i)
        used += snprintf(buf + used, len - (size_t)used, " k%lld=%lld", (long long)c->knobs[i][0],
                         (long long)c->knobs[i][1]);
}

bool ep_autotune_run(hipdnnHandle_t h, const char* name, const ep_plan_part* cand, int n,
                     hipdnnBackendDescriptor_t pack, double budget_ms, const OrtLogger* logger,
                     OrtLoggingLevel level, int64_t* best, char* why, size_t why_len) {
    hipdnnBackendDescriptor_t plans[EP_TUNE_MAX];
    hipdnnAutotuneResult_ext_t res[EP_TUNE_MAX];
    if (n <= 0 || n > EP_TUNE_MAX) return snprintf(why, why_len, "no candidate"), false;
    for (int i = 0; i < n; ++i) plans[i] = cand[i].plan;
    hipdnnAutotuneOptions_ext_t o = {.warmup = 1, .repeat = 10, .budget_ms = budget_ms, .store = 1};
    memset(res, 0, sizeof(res));
    *best = -1;
    hipdnnStatus_t hs = hipdnnAutotune_ext(h, n, plans, pack, &o, res, best);
    if (hs != HIPDNN_STATUS_SUCCESS || *best < 0 || *best >= n) {
        snprintf(why, why_len, "hipdnnAutotune_ext: %s: %s", hipdnnGetErrorString(hs),
                 hipdnnPeekLastErrorString_ext());
        return false;
    }
    for (int i = 0; i < n; ++i) {
        char cfg[256];
        config_str(&cand[i], cfg, sizeof(cfg));
        if (res[i].status == HIPDNN_STATUS_SUCCESS)
            ep_log(logger, level, ORT_LOGGING_LEVEL_INFO, "fused node '%s': autotune: %s: "
                   "median %.4f ms, min %.4f ms, %d runs (%s)%s", name, cfg, res[i].median_ms,
                   res[i].min_ms, res[i].runs,
                   res[i].timer == HIPDNN_AUTOTUNE_TIMER_EVENTS_EXT ? "device events" : "host clock",
                   i == *best ? " <- chosen" : "");
        else
            ep_log(logger, level, ORT_LOGGING_LEVEL_INFO, "fused node '%s': autotune: %s: "
                   "failed: %s", name, cfg, res[i].message);
    }
    char cfg[256];
    config_str(&cand[*best], cfg, sizeof(cfg));
    ep_log(logger, level, ORT_LOGGING_LEVEL_INFO, "fused node '%s': autotuned %d configs in "
           "%.0f ms budget: runs on %s from now on (stored in the plan cache)", name, n,
           budget_ms, cfg);
    return true;
}
