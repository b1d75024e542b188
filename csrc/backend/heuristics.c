/* ENGINEHEUR descriptors: ask every loaded engine whether it runs the graph, keep the
 * reason of each that declines, and rank the rest.
 *   A        : by the engine's declared priority, then load order
 *   B        : device engines before host engines, then as A
 *   FALLBACK : only engines flagged FALLBACK (the reference), as A
 * Under A and B a heuristic plugin, when one is active (heuristic_plugins.c), orders the
 * applicable engines instead of the priorities (B still puts device engines first), and
 * its line per engine is kept as HEURISTIC_REPORT_EXT.
 * Under A and B, the config autotuning stored for the graph on this device (plan_cache.c)
 * goes first, with its knobs, when its engine is applicable ("plan cache hit" in the log);
 * the engine's default config keeps its own rank.  A preferred engine goes first when
 * applicable; deselected engines are left out.  The engines HIPDNN_ENGINE names (a
 * comma-separated list) come next, in its order: a process-wide preference a user sets
 * without changing code, under the graph's own, above the cache's.
 * Short cut: when one of those three decides the first result (the first of the
 * preferred engine, HIPDNN_ENGINE's engines and the cached one that is loaded, not
 * deselected and applicable), finalize asks only those engines' plugins (a warm process
 * then pays for no other engine: a vendor library's handle and first heuristic query cost
 * ~100 ms each) and ranks the one config; the others are asked, and the rest ranked with
 * the same first result, when something needs them: RESULTS' count or more than the
 * configs ranked so far, the reports, PARTIAL_COUNT_EXT says how many are.  A full ranking
 * under mode A that nothing of the user's decided leaves its first engine in the plan cache
 * (time -1: ranked, not tuned; hipdnnPlanCacheRemember), so the next process takes the
 * short cut too; such an entry is not "tuned" (no PLAN_CACHE_INDEX_EXT, autotune still runs). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "descriptor.h"
#include "error.h"
#include "handle.h"
#include "device_facts.h"
#include "engine_query.h"
#include "heuristic_plugins.h"
#include "log.h"
#include "plan_cache.h"
#include "registry.h"

typedef struct {
    int32_t engine; /* registry index */
    bool tuned;     /* the plan cache's config: the engine with the entry's knobs */
} heur_result;

typedef struct {
    hipdnnBackendDescriptor_t graph;
    hipdnnBackendHeurMode_t mode;
    char* preferred;
    int64_t num_deselected;
    int64_t* deselected;
    int32_t num_results;
    heur_result* results; /* ranked */
    hipdnnPlanCacheEntry tuned; /* the plan cache's entry, for the result marked tuned */
    bool has_tuned;             /* the cache had an entry (looked up once per finalize) */
    bool tuned_said;            /* its log line is written */
    char* tuned_path;
    int32_t num_engines;        /* the registry's, at finalize */
    bool* ok;                   /* per engine: applicable (asked plugins' engines only) */
    char** why;                 /* per engine: why not */
    bool* asked;                /* per plugin: its engines were asked */
    int32_t partial;            /* results ranked without asking every engine; 0: all were */
    size_t report_len;
    char* report;
    char* heur_report; /* "plugin\tengine\tscore\texplanation" lines; "" for the built-in */
} heur_state;

#define H(d) ((heur_state*)(d)->state)

/* The per-finalize state: what the engines answered, the results and the reports. */
static void free_answers(heur_state* s) {
    if (s->why)
        for (int32_t e = 0; e < s->num_engines; ++e) free(s->why[e]);
    free(s->why);
    free(s->ok);
    free(s->asked);
    free(s->tuned_path);
    s->why = NULL;
    s->ok = s->asked = NULL;
    s->tuned_path = NULL;
}

static void heur_destroy(hipdnnBackendDescriptor_t d) {
    heur_state* s = H(d);
    free_answers(s);
    hipdnnDescriptorRelease(s->graph);
    free(s->preferred);
    free(s->deselected);
    free(s->results);
    free(s->report);
    free(s->heur_report);
}

static hipdnnStatus_t heur_set(hipdnnBackendDescriptor_t d, hipdnnBackendAttributeName_t name,
                               hipdnnBackendAttributeType_t type, int64_t count, const void* v) {
    heur_state* s = H(d);
    hipdnnStatus_t st;
    switch (name) {
    case HIPDNN_ATTR_ENGINEHEUR_MODE: {
        if ((st = hipdnnAttrExpect("ENGINEHEUR", "MODE", HIPDNN_TYPE_HEUR_MODE, type, count, 1, 1, v)))
            return st;
        int m = *(const int*)v;
        if (!hipdnnSdkEnumValid(HIPDNN_TYPE_HEUR_MODE, m))
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "ENGINEHEUR descriptor: unknown MODE %d", m);
        s->mode = (hipdnnBackendHeurMode_t)m;
        return HIPDNN_STATUS_SUCCESS;
    }
    case HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH:
        return hipdnnAttrSetDescriptor("ENGINEHEUR", "OPERATION_GRAPH",
                                       HIPDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, type, count, v,
                                       &s->graph);
    case HIPDNN_ATTR_ENGINEHEUR_PREFERRED_ENGINE_EXT:
        if ((st = hipdnnAttrExpect("ENGINEHEUR", "PREFERRED_ENGINE_EXT", HIPDNN_TYPE_CHAR, type,
                                   count, 0, 63, v)))
            return st;
        return hipdnnAttrSetString(&s->preferred, count, v);
    case HIPDNN_ATTR_ENGINEHEUR_DESELECTED_ENGINES_EXT: {
        if ((st = hipdnnAttrExpect("ENGINEHEUR", "DESELECTED_ENGINES_EXT", HIPDNN_TYPE_INT64, type,
                                   count, 0, 1024, v)))
            return st;
        int64_t* copy = malloc((size_t)count * sizeof(int64_t) + 1);
        if (!copy) return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory");
        if (count) memcpy(copy, v, (size_t)count * sizeof(int64_t));
        free(s->deselected);
        s->deselected = copy;
        s->num_deselected = count;
        return HIPDNN_STATUS_SUCCESS;
    }
    default: return hipdnnAttrUnknown("ENGINEHEUR", name);
    }
}

/* The entry's knob choices onto config c (finalized KNOB_CHOICE descriptors). */
static hipdnnStatus_t add_knobs(hipdnnBackendDescriptor_t c, const hipdnnPlanCacheEntry* t) {
    hipdnnEngineCfgState* cs = c->state;
    cs->knobs = calloc((size_t)t->num_knobs + 1, sizeof(*cs->knobs));
    if (!cs->knobs) return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory");
    for (int32_t i = 0; i < t->num_knobs; ++i) {
        hipdnnStatus_t st = hipdnnDescriptorNew(HIPDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, &cs->knobs[i]);
        if (st) return st;
        hipdnnKnobChoiceState* k = cs->knobs[i]->state;
        k->knob_id = t->knobs[i][0];
        k->value = t->knobs[i][1];
        cs->knobs[i]->finalized = true;
        cs->num_knobs = i + 1;
    }
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t make_config(hipdnnBackendDescriptor_t graph, int32_t engine,
                                  const hipdnnPlanCacheEntry* tuned,
                                  hipdnnBackendDescriptor_t* out) {
    hipdnnBackendDescriptor_t e = NULL, c = NULL;
    hipdnnStatus_t st = hipdnnDescriptorNew(HIPDNN_BACKEND_ENGINE_DESCRIPTOR, &e);
    if (!st) st = hipdnnDescriptorNew(HIPDNN_BACKEND_ENGINECFG_DESCRIPTOR, &c);
    if (st) {
        hipdnnDescriptorRelease(e);
        return st;
    }
    hipdnnEngineState* es = e->state;
    hipdnnDescriptorRetain(graph);
    es->graph = graph;
    es->engine_index = engine;
    es->has_index = true;
    e->finalized = true;
    hipdnnEngineCfgState* cs = c->state;
    cs->engine = e; /* takes the creation reference */
    c->finalized = true;
    if (tuned && (st = add_knobs(c, tuned)) != HIPDNN_STATUS_SUCCESS) {
        hipdnnDescriptorRelease(c);
        return st;
    }
    *out = c;
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t complete(heur_state* s);

/* The ENGINEHEUR _EXT attributes of hipdnn_tuning.h (finalized descriptor, get only). */
static hipdnnStatus_t heur_get_ext(hipdnnBackendDescriptor_t d, hipdnnBackendAttributeName_t name,
                                   hipdnnBackendAttributeType_t type, int64_t req, int64_t* count,
                                   void* v) {
    heur_state* s = H(d);
    const char* what = name == HIPDNN_ATTR_ENGINEHEUR_HEURISTIC_REPORT_EXT ? "HEURISTIC_REPORT_EXT"
                       : name == HIPDNN_ATTR_ENGINEHEUR_PLAN_CACHE_INDEX_EXT ? "PLAN_CACHE_INDEX_EXT"
                                                                             : "PARTIAL_COUNT_EXT";
    if (!d->finalized)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED,
                          "ENGINEHEUR: %s needs a finalized descriptor", what);
    hipdnnStatus_t st;
    if (name == (hipdnnBackendAttributeName_t)HIPDNN_ATTR_ENGINEHEUR_PARTIAL_COUNT_EXT) {
        const int64_t n = s->partial;
        return hipdnnAttrReturn("ENGINEHEUR", what, HIPDNN_TYPE_INT64, type, req, count, v, &n, 1,
                                sizeof(n));
    }
    if (name == (hipdnnBackendAttributeName_t)HIPDNN_ATTR_ENGINEHEUR_HEURISTIC_REPORT_EXT) {
        if ((st = complete(s))) return st;
        return hipdnnAttrReturnString("ENGINEHEUR", what, type, req, count, v, s->heur_report);
    }
    int64_t at = -1; /* a short cut ranks the tuned config first or not at all */
    for (int64_t i = 0; at < 0 && i < s->num_results; ++i)
        if (s->results[i].tuned) at = i;
    /* the rest ranked only where a tuned entry exists (not one remembered from a ranking) */
    if (at < 0 && s->partial && s->has_tuned && s->tuned.ms >= 0) {
        if ((st = complete(s))) return st;
        for (int64_t i = 0; at < 0 && i < s->num_results; ++i)
            if (s->results[i].tuned) at = i;
    }
    return hipdnnAttrReturn("ENGINEHEUR", what, HIPDNN_TYPE_INT64, type, req, count, v, &at, 1,
                            sizeof(at));
}

static hipdnnStatus_t heur_get(hipdnnBackendDescriptor_t d, hipdnnBackendAttributeName_t name,
                               hipdnnBackendAttributeType_t type, int64_t req, int64_t* count,
                               void* v) {
    heur_state* s = H(d);
    hipdnnStatus_t st;
    if (name == (hipdnnBackendAttributeName_t)HIPDNN_ATTR_ENGINEHEUR_HEURISTIC_REPORT_EXT ||
        name == (hipdnnBackendAttributeName_t)HIPDNN_ATTR_ENGINEHEUR_PLAN_CACHE_INDEX_EXT ||
        name == (hipdnnBackendAttributeName_t)HIPDNN_ATTR_ENGINEHEUR_PARTIAL_COUNT_EXT)
        return heur_get_ext(d, name, type, req, count, v);
    switch (name) {
    case HIPDNN_ATTR_ENGINEHEUR_MODE:
        return hipdnnAttrReturn("ENGINEHEUR", "MODE", HIPDNN_TYPE_HEUR_MODE, type, req, count, v,
                                &s->mode, 1, sizeof(s->mode));
    case HIPDNN_ATTR_ENGINEHEUR_RESULTS: {
        if (!d->finalized)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED,
                              "ENGINEHEUR: RESULTS needs a finalized descriptor");
        if (type != HIPDNN_TYPE_BACKEND_DESCRIPTOR)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                              "ENGINEHEUR descriptor: RESULTS has type BACKEND_DESCRIPTOR");
        /* The count (req 0), or more configs than a short cut ranked, ranks them all. */
        if (s->partial && (req <= 0 || req > s->num_results) && (st = complete(s))) return st;
        *count = s->num_results;
        hipdnnBackendDescriptor_t* out = v;
        for (int64_t i = 0; i < req && i < s->num_results; ++i) {
            const heur_result* r = &s->results[i];
            hipdnnStatus_t st = make_config(s->graph, r->engine, r->tuned ? &s->tuned : NULL,
                                            &out[i]);
            if (st) {
                for (int64_t k = 0; k < i; ++k) hipdnnDescriptorRelease(out[k]);
                return st;
            }
        }
        return HIPDNN_STATUS_SUCCESS;
    }
    case HIPDNN_ATTR_ENGINEHEUR_SUPPORT_REPORT_EXT:
        if (!d->finalized)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED,
                              "ENGINEHEUR: SUPPORT_REPORT_EXT needs a finalized descriptor");
        if ((st = complete(s))) return st;
        return hipdnnAttrReturnString("ENGINEHEUR", "SUPPORT_REPORT_EXT", type, req, count, v,
                                      s->report);
    case HIPDNN_ATTR_ENGINEHEUR_PREFERRED_ENGINE_EXT:
        return hipdnnAttrReturnString("ENGINEHEUR", "PREFERRED_ENGINE_EXT", type, req, count, v,
                                      s->preferred);
    default: return hipdnnAttrUnknown("ENGINEHEUR", name);
    }
}

/* One line, no tabs or newlines, so the report stays one engine per line. */
static void sanitize(char* s) {
    for (; *s; ++s)
        if (*s == '\n' || *s == '\t' || *s == '\r') *s = ' ';
}

static bool better(const hipdnnEngineEntry* a, const hipdnnEngineEntry* b,
                   hipdnnBackendHeurMode_t mode) {
    if (mode == HIPDNN_HEUR_MODE_B && a->memory_space != b->memory_space)
        return a->memory_space == HIPDNN_MEMORY_DEVICE;
    return a->priority > b->priority;
}

/* The graph is set, finalized and has a handle; the preferred engine, if any, is loaded
 * (plugins are loaded here, on first need). */
static hipdnnStatus_t check_heur_inputs(const heur_state* s) {
    if (!s->graph)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "ENGINEHEUR: OPERATION_GRAPH is not set");
    if (!s->graph->finalized)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED,
                          "ENGINEHEUR: the operation graph is not finalized");
    const hipdnnGraphState* gs = s->graph->state;
    if (!gs->handle)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "ENGINEHEUR: the operation graph has no "
                          "HANDLE; engines check support on the graph's handle (set "
                          "OPERATIONGRAPH_HANDLE, also on a deserialized graph)");
    hipdnnRegistryEnsureLoaded();
    if (s->preferred && *s->preferred && hipdnnRegistryFindEngineByName(s->preferred) < 0)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                          "ENGINEHEUR: preferred engine '%s' is not loaded (see `python -m hipdnn "
                          "info` for the engines)", s->preferred);
    return HIPDNN_STATUS_SUCCESS;
}

/* Applicable engines the user deselected, or that FALLBACK mode does not take, are left
 * out, with that as their reason. */
static void apply_user_choice(const heur_state* s, int32_t ne, bool* ok, char** why) {
    for (int32_t e = 0; e < ne; ++e) {
        const hipdnnEngineEntry* en = hipdnnRegistryEngine(e);
        if (!ok[e]) continue;
        char buf[200] = "";
        for (int64_t k = 0; k < s->num_deselected; ++k)
            if ((uint64_t)s->deselected[k] == en->id) snprintf(buf, sizeof(buf), "deselected by the user");
        if (!buf[0] && s->mode == HIPDNN_HEUR_MODE_FALLBACK && !(en->flags & HIPDNN_ENGINE_FLAG_FALLBACK))
            snprintf(buf, sizeof(buf), "applicable, but heur mode FALLBACK takes only fallback engines");
        if (buf[0]) {
            ok[e] = false;
            why[e] = strdup(buf);
        }
    }
}

/* Moves the first result of registry engine `want` (its tuned config, when the cache put
 * one first) to the front of s->results, if it is there. */
static void put_first(heur_state* s, int32_t want) {
    for (int32_t k = 0; k < s->num_results; ++k)
        if (s->results[k].engine == want) {
            heur_result r = s->results[k];
            memmove(s->results + 1, s->results, (size_t)k * sizeof(heur_result));
            s->results[0] = r;
            return;
        }
}

/* The plan cache's entry for the graph (modes A and B), looked up once per finalize. */
static void lookup_tuned(heur_state* s) {
    char path[4200];
    s->has_tuned = s->mode != HIPDNN_HEUR_MODE_FALLBACK &&
                   hipdnnPlanCacheLookup(s->graph->state, &s->tuned, path, sizeof(path));
    /* a remembered ranking (time -1) is mode A's: B orders engines otherwise */
    if (s->has_tuned && s->tuned.ms < 0 && s->mode != HIPDNN_HEUR_MODE_A) s->has_tuned = false;
    if (s->has_tuned) s->tuned_path = strdup(path);
}

/* One log line per finalize: the entry's config is ranked first, or why it is not. */
static void say_tuned(heur_state* s, int32_t e) {
    const hipdnnGraphState* gs = s->graph->state;
    if (s->tuned_said) return;
    s->tuned_said = true;
    if (e < 0 || !s->ok[e]) {
        hipdnnLog(HIPDNN_LOG_INFO, "plan cache: graph '%s' was tuned to engine %s, which %s here; "
                  "every engine is ranked", gs->name ? gs->name : "", s->tuned.engine,
                  e < 0 ? "is not loaded" : "is not applicable");
        return;
    }
    char knobs[256] = "";
    size_t off = 0;
    for (int32_t i = 0; i < s->tuned.num_knobs; ++i) {
        int w = snprintf(knobs + off, sizeof(knobs) - off, " k%lld=%lld", (long long)s->tuned.knobs[i][0],
                         (long long)s->tuned.knobs[i][1]);
        if (w > 0 && off + (size_t)w < sizeof(knobs)) off += (size_t)w;
    }
    if (s->tuned.ms < 0)
        hipdnnLog(HIPDNN_LOG_INFO, "plan cache hit: graph '%s' runs on %s (ranked first by an "
                  "earlier process's heuristics; %s)", gs->name ? gs->name : "", s->tuned.engine,
                  s->tuned_path ? s->tuned_path : "");
    else
        hipdnnLog(HIPDNN_LOG_INFO, "plan cache hit: graph '%s' runs on %s%s%s (tuned: %.4g ms; %s)",
                  gs->name ? gs->name : "", s->tuned.engine, off ? " with knobs" : "", knobs,
                  s->tuned.ms, s->tuned_path ? s->tuned_path : "");
}

/* The plan cache's config for the graph, first, when its engine is applicable here. */
static void prefer_tuned(heur_state* s) {
    if (!s->has_tuned) return;
    const int32_t e = hipdnnRegistryFindEngineByName(s->tuned.engine);
    say_tuned(s, e);
    if (e < 0 || !s->ok[e]) return;
    memmove(s->results + 1, s->results, (size_t)s->num_results * sizeof(heur_result));
    s->results[0] = (heur_result){e, s->tuned.ms >= 0};
    ++s->num_results;
}

/* HIPDNN_ENGINE's names, split in place in `list`: their count. */
static int env_names(char* list, size_t len, char** names, int max) {
    const char* env = getenv("HIPDNN_ENGINE");
    if (!env || !*env) return 0;
    snprintf(list, len, "%s", env);
    int n = 0;
    for (char *save = NULL, *t = strtok_r(list, ", ", &save); t && n < max;
         t = strtok_r(NULL, ", ", &save))
        names[n++] = t;
    return n;
}

/* A name in HIPDNN_ENGINE no loaded engine has is logged (once per finalize) and skipped. */
static void warn_env_names(void) {
    char list[512], *names[32];
    const int n = env_names(list, sizeof(list), names, 32);
    for (int i = 0; i < n; ++i)
        if (hipdnnRegistryFindEngineByName(names[i]) < 0)
            hipdnnLog(HIPDNN_LOG_WARN, "HIPDNN_ENGINE names '%s', which is not a loaded engine "
                      "(see `python -m hipdnn info`): skipped", names[i]);
}

/* The engines HIPDNN_ENGINE names, first in its order (the last named moved first, then
 * the one before it...). */
static void prefer_from_env(heur_state* s) {
    char list[512], *names[32];
    for (int i = env_names(list, sizeof(list), names, 32) - 1; i >= 0; --i) {
        const int32_t want = hipdnnRegistryFindEngineByName(names[i]);
        if (want >= 0) put_first(s, want);
    }
}

static bool deselected(const heur_state* s, int32_t e) {
    for (int64_t k = 0; k < s->num_deselected; ++k)
        if ((uint64_t)s->deselected[k] == hipdnnRegistryEngine(e)->id) return true;
    return false;
}

/* Asks plugin pi's engines unless asked already. */
static void ask_once(heur_state* s, int32_t pi) {
    if (s->asked[pi]) return;
    s->asked[pi] = true;
    hipdnnAskPlugins(s->graph->state, &pi, 1, s->num_engines, s->ok, s->why);
}

/* Asks every plugin not asked yet, at once (engine_query.c): on a GPU the vendor
 * libraries' handles and first queries then overlap. */
static void ask_the_rest(heur_state* s) {
    const int32_t np = hipdnnRegistryPluginCount();
    int32_t* todo = malloc((size_t)np * sizeof(int32_t) + 1);
    int32_t n = 0;
    for (int32_t pi = 0; pi < np; ++pi) {
        if (s->asked[pi]) continue;
        if (!todo) { /* no memory for the list: one at a time */
            ask_once(s, pi);
            continue;
        }
        s->asked[pi] = true;
        todo[n++] = pi;
    }
    hipdnnAskPlugins(s->graph->state, todo, n, s->num_engines, s->ok, s->why);
    free(todo);
}

/* The short cut (top of file): true with the one result ranked when the preferred engine,
 * HIPDNN_ENGINE's or the cached one decides the first; only their plugins are asked. */
static bool shortcut(heur_state* s) {
    if (s->mode == HIPDNN_HEUR_MODE_FALLBACK) return false;
    char list[512], *names[34];
    int n = 0;
    if (s->preferred && *s->preferred) names[n++] = s->preferred;
    n += env_names(list, sizeof(list), names + n, 32);
    if (s->has_tuned) names[n++] = s->tuned.engine;
    const int32_t tuned = s->has_tuned ? hipdnnRegistryFindEngineByName(s->tuned.engine) : -1;
    for (int i = 0; i < n; ++i) {
        const int32_t e = hipdnnRegistryFindEngineByName(names[i]);
        if (e < 0 || deselected(s, e)) continue;
        ask_once(s, hipdnnRegistryEngine(e)->plugin);
        if (!s->ok[e]) continue;
        s->results[0] = (heur_result){e, e == tuned && s->tuned.ms >= 0};
        s->num_results = s->partial = 1;
        if (e == tuned) say_tuned(s, e);
        hipdnnLog(HIPDNN_LOG_INFO, "heuristics: graph '%s': %s ranked first (%s) without asking "
                  "the other engines", ((hipdnnGraphState*)s->graph->state)->name ?
                  ((hipdnnGraphState*)s->graph->state)->name : "", names[i],
                  i == 0 && s->preferred && *s->preferred ? "the preferred engine"
                  : e == tuned && i == n - 1
                      ? (s->tuned.ms < 0 ? "remembered from an earlier process" : "its tuned config")
                      : "HIPDNN_ENGINE");
        return true;
    }
    return false;
}

/* Under A and B, the active heuristic plugin's order of s->results (B: device engines
 * still first), and its lines into s->heur_report; nothing changes without one. */
static void plugin_order(heur_state* s) {
    int32_t n = s->num_results, order[256];
    hipdnnHeuristicExplanation* why = calloc((size_t)n + 1, sizeof(*why));
    char used[64] = "";
    const hipdnnGraphState* gs = s->graph->state;
    if (s->mode == HIPDNN_HEUR_MODE_FALLBACK || n > 256 || !why) goto done;
    for (int32_t k = 0; k < n; ++k) order[k] = s->results[k].engine;
    if (!hipdnnHeuristicRank(gs->bytes, gs->num_bytes, hipdnnGraphIsNarrow(gs->graph),
                             gs->handle->device, order, n, why, used, sizeof(used)))
        goto done;
    size_t len = (size_t)n * (HIPDNN_HEURISTIC_EXPLANATION_LEN + 160) + 1, off = 0;
    char* r = calloc(len, 1);
    if (!r) goto done;
    int32_t at = 0;
    for (int pass = s->mode == HIPDNN_HEUR_MODE_B ? 0 : 1; pass < 2; ++pass)
        for (int32_t k = 0; k < n; ++k) {
            const hipdnnEngineEntry* e = hipdnnRegistryEngine(order[k]);
            bool device = e->memory_space == HIPDNN_MEMORY_DEVICE;
            if (pass == 0 ? !device : (s->mode == HIPDNN_HEUR_MODE_B && device)) continue;
            s->results[at++] = (heur_result){order[k], false};
            int w = snprintf(r + off, len - off, "%s\t%s\t%.6g\t%s\n", used, e->name,
                             why[k].score, why[k].text);
            if (w > 0 && off + (size_t)w < len) off += (size_t)w;
        }
    free(s->heur_report);
    s->heur_report = r;
done:
    free(why);
}

/* s->results: the engines left, by insertion in the mode's order (stable in load order),
 * or as the heuristic plugin orders them, then the plan cache's config, HIPDNN_ENGINE's,
 * then the preferred one first. */
static void rank_engines(heur_state* s) {
    s->num_results = 0;
    for (int32_t e = 0; e < s->num_engines; ++e) {
        if (!s->ok[e]) continue;
        int32_t k = s->num_results++;
        while (k > 0 && better(hipdnnRegistryEngine(e), hipdnnRegistryEngine(s->results[k - 1].engine),
                               s->mode)) {
            s->results[k] = s->results[k - 1];
            --k;
        }
        s->results[k] = (heur_result){e, false};
    }
    plugin_order(s);
    prefer_tuned(s);
    prefer_from_env(s);
    if (s->preferred && *s->preferred) put_first(s, hipdnnRegistryFindEngineByName(s->preferred));
}

/* s->report: one line per engine, "name\tid\tapplicable" or its reason. */
static void write_report(heur_state* s) {
    size_t off = 0;
    for (int32_t e = 0; e < s->num_engines; ++e) {
        const hipdnnEngineEntry* en = hipdnnRegistryEngine(e);
        if (s->why[e]) sanitize(s->why[e]);
        int k = snprintf(s->report + off, s->report_len - off, "%s\t%llu\t%s\n", en->name,
                         (unsigned long long)en->id,
                         s->ok[e] ? "applicable" : (s->why[e] ? s->why[e] : "?"));
        if (k > 0 && off + (size_t)k < s->report_len) off += (size_t)k;
    }
}

/* Asks the engines not asked yet and ranks them all; the first result stays what a short
 * cut ranked, as the same preferences decide it. */
static hipdnnStatus_t complete(heur_state* s) {
    if (!s->partial) return HIPDNN_STATUS_SUCCESS;
    const heur_result first = s->results[0];
    const bool had = s->num_results > 0;
    const hipdnnGraphState* gs = s->graph->state;
    hipdnnLog(HIPDNN_LOG_INFO, "heuristics: graph '%s': the other engines asked now (every "
              "config, a report or the tuned config's rank was wanted)", gs->name ? gs->name : "");
    ask_the_rest(s);
    apply_user_choice(s, s->num_engines, s->ok, s->why);
    rank_engines(s);
    write_report(s);
    s->partial = 0;
    if (had && (s->num_results < 1 || s->results[0].engine != first.engine ||
        s->results[0].tuned != first.tuned))
        return hipdnnFail(HIPDNN_STATUS_INTERNAL_ERROR, "ENGINEHEUR: the full ranking put %s "
                          "first, not %s as the short cut did",
                          s->num_results ? hipdnnRegistryEngine(s->results[0].engine)->name : "nothing",
                          hipdnnRegistryEngine(first.engine)->name);
    return HIPDNN_STATUS_SUCCESS;
}

/* After a full ranking under mode A with no cache entry and nothing the user set deciding
 * it (preferred, deselected, HIPDNN_ENGINE), the first engine goes to the plan cache, so
 * the next process's short cut asks it alone. */
static void remember(heur_state* s) {
    char list[512], *names[1];
    if (s->mode != HIPDNN_HEUR_MODE_A || s->has_tuned || s->num_results < 1 ||
        (s->preferred && *s->preferred) || s->num_deselected > 0 ||
        env_names(list, sizeof(list), names, 1) > 0)
        return;
    hipdnnPlanCacheRemember(s->graph->state, hipdnnRegistryEngine(s->results[0].engine)->name);
}

static hipdnnStatus_t heur_finalize(hipdnnBackendDescriptor_t d) {
    heur_state* s = H(d);
    hipdnnStatus_t st = check_heur_inputs(s);
    if (st) return st;
    free_answers(s); /* a failed finalize may be retried */
    free(s->results);
    free(s->report);
    free(s->heur_report);
    const int32_t ne = hipdnnRegistryEngineCount();
    s->num_engines = ne;
    s->heur_report = strdup("");
    s->num_results = s->partial = 0;
    s->tuned_said = false;
    s->ok = calloc((size_t)ne + 1, sizeof(bool));
    s->why = calloc((size_t)ne + 1, sizeof(char*));
    s->asked = calloc((size_t)hipdnnRegistryPluginCount() + 1, sizeof(bool));
    s->results = calloc((size_t)ne + 2, sizeof(heur_result)); /* + the tuned config */
    s->report_len = 64 + (size_t)ne * 700;
    s->report = calloc(s->report_len, 1);
    if (!s->ok || !s->why || !s->asked || !s->results || !s->report || !s->heur_report)
        return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory");
    warn_env_names();
    lookup_tuned(s);
    if (shortcut(s)) return HIPDNN_STATUS_SUCCESS;
    s->partial = 1; /* complete() asks every engine not asked yet */
    s->num_results = 0;
    st = complete(s);
    if (!st) remember(s);
    return st;
}

const hipdnnDescriptorClass hipdnnHeurClass = {
    "ENGINEHEUR", sizeof(heur_state), NULL, heur_destroy, heur_set, heur_get, heur_finalize,
};
