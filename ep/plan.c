/* plan.c — from a finalized hipdnn operation graph to an execution plan: the heuristics
 * rank the engines (mode and preferred engine from the ep.hipdnn.* options), and the first
 * engine that works in the device's memory space and builds a plan wins.  When none does,
 * the message says why each candidate was passed over, plus hipdnn's support report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipdnn_ep.h"

enum { MAX_CFG = 16 };

/* Appends "name: why" to the list in buf ("; " between), keeping it terminated. */
static void add_reason(char* buf, size_t cap, size_t* len, const char* name, const char* why) {
    if (*len >= cap) return;
    int n = snprintf(buf + *len, cap - *len, "%s%s: %s", *len ? "; " : "", name, why);
    *len = n < 0 ? cap : *len + (size_t)n;
}

/* The knob choices of engine config cfg, (id, value) each, into out (an EPContext payload
 * rebuilds the same config from them). */
static void record_knobs(hipdnnBackendDescriptor_t cfg, ep_plan_part* out) {
    hipdnnBackendDescriptor_t k[16];
    int64_t n = 0;
    out->n_knobs = 0;
    if (hipdnnBackendGetAttribute(cfg, HIPDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                                  HIPDNN_TYPE_BACKEND_DESCRIPTOR, 16, &n, k) != HIPDNN_STATUS_SUCCESS)
        return;
    for (int64_t i = 0; i < n && i < 16; ++i) {
        int64_t c = 0, id = 0, v = 0;
        if (hipdnnBackendGetAttribute(k[i], HIPDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, HIPDNN_TYPE_INT64, 1,
                                      &c, &id) == HIPDNN_STATUS_SUCCESS &&
            hipdnnBackendGetAttribute(k[i], HIPDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, HIPDNN_TYPE_INT64, 1,
                                      &c, &v) == HIPDNN_STATUS_SUCCESS) {
            out->knobs[out->n_knobs][0] = id;
            out->knobs[out->n_knobs++][1] = v;
        }
        hipdnnBackendDestroyDescriptor(k[i]);
    }
}

/* Tries a plan on engine config cfg; true with out filled on success, else hipdnn's
 * message in why (taken before the cleanup, which clears it). */
static bool try_plan(hipdnnHandle_t h, hipdnnBackendDescriptor_t cfg, const char* engine,
                     ep_plan_part* out, char* why, size_t why_len) {
    hipdnnBackendDescriptor_t plan = NULL;
    int64_t n = 0, ws = 0;
    if (hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan) !=
        HIPDNN_STATUS_SUCCESS)
        return false;
    if (hipdnnBackendSetAttribute(plan, HIPDNN_ATTR_EXECUTION_PLAN_HANDLE, HIPDNN_TYPE_HANDLE, 1,
                                  &h) == HIPDNN_STATUS_SUCCESS &&
        hipdnnBackendSetAttribute(plan, HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                  HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg) == HIPDNN_STATUS_SUCCESS &&
        hipdnnBackendFinalize(plan) == HIPDNN_STATUS_SUCCESS &&
        hipdnnBackendGetAttribute(plan, HIPDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                  HIPDNN_TYPE_INT64, 1, &n, &ws) == HIPDNN_STATUS_SUCCESS) {
        out->plan = plan;
        out->workspace = ws;
        snprintf(out->engine, sizeof(out->engine), "%s", engine);
        record_knobs(cfg, out);
        return true;
    }
    snprintf(why, why_len, "%s", hipdnnPeekLastErrorString_ext());
    hipdnnBackendDestroyDescriptor(plan);
    return false;
}

/* The heuristics for graph (mode and preferred engine from opt), finalized; NULL with err
 * set on failure. */
static hipdnnBackendDescriptor_t heuristics(hipdnnBackendDescriptor_t graph, const ep_options* opt,
                                            char* err, size_t err_len) {
    hipdnnBackendDescriptor_t heur = NULL;
    hipdnnStatus_t st = hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur);
    if (st == HIPDNN_STATUS_SUCCESS)
        st = hipdnnBackendSetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_MODE, HIPDNN_TYPE_HEUR_MODE, 1,
                                       &opt->heur);
    if (st == HIPDNN_STATUS_SUCCESS)
        st = hipdnnBackendSetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                                       HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph);
    if (st == HIPDNN_STATUS_SUCCESS && opt->engine[0])
        st = hipdnnBackendSetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_PREFERRED_ENGINE_EXT,
                                       HIPDNN_TYPE_CHAR, (int64_t)strlen(opt->engine), opt->engine);
    if (st == HIPDNN_STATUS_SUCCESS) st = hipdnnBackendFinalize(heur);
    if (st != HIPDNN_STATUS_SUCCESS) {
        snprintf(err, err_len, "heuristics: %s: %s", hipdnnGetErrorString(st),
                 hipdnnPeekLastErrorString_ext());
        hipdnnBackendDestroyDescriptor(heur);
        return NULL;
    }
    return heur;
}

/* How many configs the heuristics ranked without asking every engine (the preferred engine,
 * HIPDNN_ENGINE's or the plan cache's: hipdnn's short cut); 0 when they ranked them all. */
static int64_t partial_count(hipdnnBackendDescriptor_t heur) {
    int64_t n = 0, partial = 0;
    if (hipdnnBackendGetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_PARTIAL_COUNT_EXT, HIPDNN_TYPE_INT64,
                                  1, &n, &partial) != HIPDNN_STATUS_SUCCESS)
        return 0;
    return partial > 0 && partial < MAX_CFG ? partial : 0;
}

/* The first `want` ranked configs (at most MAX_CFG) into cfgs (each to be destroyed), their
 * number in *count; false with err.  Asking for more than a short cut ranked ranks them all
 * (the other engines asked then). */
static bool configs(hipdnnBackendDescriptor_t heur, int64_t want, hipdnnBackendDescriptor_t* cfgs,
                    int64_t* count, char* err, size_t err_len) {
    *count = 0;
    const hipdnnStatus_t st = hipdnnBackendGetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_RESULTS,
                                                        HIPDNN_TYPE_BACKEND_DESCRIPTOR, want,
                                                        count, cfgs);
    if (st != HIPDNN_STATUS_SUCCESS) {
        snprintf(err, err_len, "heuristic results: %s: %s", hipdnnGetErrorString(st),
                 hipdnnPeekLastErrorString_ext());
        return false;
    }
    if (*count > want) *count = want;
    return true;
}

/* Whether engine config cfg's engine could be read: its memory space into *mem (-1 when
 * that cannot be read) and, when name is given, its name. */
static bool cfg_engine(hipdnnBackendDescriptor_t cfg, int64_t* mem, char* name, size_t name_len) {
    hipdnnBackendDescriptor_t eng = NULL;
    int64_t n = 0;
    *mem = -1;
    if (hipdnnBackendGetAttribute(cfg, HIPDNN_ATTR_ENGINECFG_ENGINE, HIPDNN_TYPE_BACKEND_DESCRIPTOR,
                                  1, &n, &eng) != HIPDNN_STATUS_SUCCESS)
        return false;
    hipdnnBackendGetAttribute(eng, HIPDNN_ATTR_ENGINE_MEMORY_SPACE_EXT, HIPDNN_TYPE_INT64, 1, &n,
                              mem);
    if (name)
        hipdnnBackendGetAttribute(eng, HIPDNN_ATTR_ENGINE_NAME_EXT, HIPDNN_TYPE_CHAR,
                                  (int64_t)name_len - 1, &n, name);
    hipdnnBackendDestroyDescriptor(eng);
    return true;
}

/* The heuristics' support report (one line per loaded engine: name, id, then "applicable"
 * or why it declined), to be freed; NULL when there is none. */
static char* support_report(hipdnnBackendDescriptor_t heur) {
    char* report = NULL;
    int64_t rn = 0;
    if (hipdnnBackendGetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_SUPPORT_REPORT_EXT, HIPDNN_TYPE_CHAR,
                                  0, &rn, NULL) != HIPDNN_STATUS_SUCCESS ||
        rn <= 0 || !(report = calloc((size_t)rn + 1, 1)))
        return NULL;
    hipdnnBackendGetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_SUPPORT_REPORT_EXT, HIPDNN_TYPE_CHAR,
                              rn + 1, &rn, report);
    return report;
}

enum { KNOB_TF32 = 20000 }; /* the hip and blaslt engines' "tf32" (hipdnn's own knob id) */

/* Engine config cfg's engine: its global index and knob ranges (id, min, max, default each)
 * and listed values (stride, count, values... each), as the backend gives them. */
static bool engine_knobs(hipdnnBackendDescriptor_t cfg, int64_t* index, int64_t* info,
                         int64_t* n_info, int64_t* vals, int64_t* n_vals) {
    hipdnnBackendDescriptor_t eng = NULL;
    int64_t n = 0;
    if (hipdnnBackendGetAttribute(cfg, HIPDNN_ATTR_ENGINECFG_ENGINE, HIPDNN_TYPE_BACKEND_DESCRIPTOR,
                                  1, &n, &eng) != HIPDNN_STATUS_SUCCESS)
        return false;
    bool ok = hipdnnBackendGetAttribute(eng, HIPDNN_ATTR_ENGINE_GLOBAL_INDEX, HIPDNN_TYPE_INT64, 1,
                                        &n, index) == HIPDNN_STATUS_SUCCESS &&
              hipdnnBackendGetAttribute(eng, HIPDNN_ATTR_ENGINE_KNOB_INFO_EXT, HIPDNN_TYPE_INT64, 64,
                                        n_info, info) == HIPDNN_STATUS_SUCCESS &&
              hipdnnBackendGetAttribute(eng, HIPDNN_ATTR_ENGINE_KNOB_VALUES_EXT, HIPDNN_TYPE_INT64,
                                        256, n_vals, vals) == HIPDNN_STATUS_SUCCESS &&
              *n_info <= 64 && *n_vals <= 256;
    hipdnnBackendDestroyDescriptor(eng);
    return ok;
}

/* ep.hipdnn.use_tf32: engine config cfg's engine with its "tf32" knob at 1 (the engine's
 * other knobs at their defaults), to be destroyed; NULL where the option is off or the
 * engine has no such knob. */
static hipdnnBackendDescriptor_t tf32_config(hipdnnBackendDescriptor_t g, const ep_options* opt,
                                             hipdnnBackendDescriptor_t cfg) {
    int64_t index = -1, info[64], vals[256], n_info = 0, n_vals = 0;
    if (!opt->use_tf32 || !engine_knobs(cfg, &index, info, &n_info, vals, &n_vals)) return NULL;
    for (int64_t i = 0; i + 3 < n_info; i += 4)
        if (info[i] == KNOB_TF32) {
            int64_t choice[1][2] = {{KNOB_TF32, 1}};
            char why[512];
            return ep_make_config(g, index, 1, choice, why, sizeof(why));
        }
    return NULL;
}

/* try_plan on cfg, first with TF32 where ep.hipdnn.use_tf32 allows it and the engine has the
 * knob (a plan it declines, such as a layout its TF32 kernel cannot read, falls back to
 * cfg's exact one). */
static bool try_plan_tf32(hipdnnHandle_t h, hipdnnBackendDescriptor_t g, const ep_options* opt,
                          hipdnnBackendDescriptor_t cfg, const char* engine, ep_plan_part* out,
                          char* why, size_t why_len) {
    hipdnnBackendDescriptor_t t = tf32_config(g, opt, cfg);
    const bool ok = t && try_plan(h, t, engine, out, why, why_len);
    if (t) hipdnnBackendDestroyDescriptor(t);
    return ok || try_plan(h, cfg, engine, out, why, why_len);
}

bool ep_plan_choose(hipdnnHandle_t h, hipdnnBackendDescriptor_t graph, const ep_options* opt,
                    hipdnnMemorySpace_t space, ep_plan_part* out, char* err, size_t err_len) {
    hipdnnBackendDescriptor_t heur = heuristics(graph, opt, err, err_len);
    if (!heur) return false;
    char reasons[768] = "", why[512];
    size_t rl = 0;
    bool found = false, listed = true;
    int64_t chosen = -1;
    /* a short cut's config first (a warm process asks no other engine), the rest only when
     * it does not build here */
    const int64_t partial = partial_count(heur);
    for (int pass = partial ? 0 : 1; pass < 2 && !found && listed; ++pass) {
        hipdnnBackendDescriptor_t cfgs[MAX_CFG];
        int64_t count = 0;
        listed = configs(heur, pass ? MAX_CFG : partial, cfgs, &count, err, err_len);
        for (int64_t i = 0; i < count; ++i) {
            char name[64] = "";
            int64_t mem;
            if (!found && i >= (pass ? partial : 0) && cfg_engine(cfgs[i], &mem, name, sizeof(name))) {
                /* a device engine cannot read host tensors, nor a host engine device ones */
                if (mem != (int64_t)space)
                    add_reason(reasons, sizeof(reasons), &rl, name, "another memory space");
                else if (try_plan_tf32(h, graph, opt, cfgs[i], name, out, why, sizeof(why)))
                    found = true, chosen = i;
                else
                    add_reason(reasons, sizeof(reasons), &rl, name, why);
            }
            hipdnnBackendDestroyDescriptor(cfgs[i]);
        }
    }
    if (found) {
        int64_t cached = -1, n = 0;
        hipdnnBackendGetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_PLAN_CACHE_INDEX_EXT,
                                  HIPDNN_TYPE_INT64, 1, &n, &cached);
        out->from_cache = chosen == cached;
    } else if (listed) {
        char* report = support_report(heur);
        snprintf(err, err_len, "no engine runs this graph in %s memory (%s)%s%s",
                 space == HIPDNN_MEMORY_HOST ? "host" : "device", rl ? reasons : "no candidates",
                 report ? "; support report: " : "", report ? report : "");
        free(report);
    }
    hipdnnBackendDestroyDescriptor(heur);
    return found;
}

/* The memory space of the loaded engine named `name`; -1 when none is. */
static int64_t engine_space(const char* name) {
    int64_t count = 0;
    if (hipdnnGetEngineCount_ext(&count) != HIPDNN_STATUS_SUCCESS) return -1;
    for (int64_t i = 0; i < count; ++i) {
        hipdnnEngineInfo_ext_t info;
        if (hipdnnGetEngineInfo_ext(i, &info) == HIPDNN_STATUS_SUCCESS && !strcmp(info.name, name))
            return (int64_t)info.memory_space;
    }
    return -1;
}

/* "name: reason" for each engine of `space` in the heuristics' support report (one line
 * per loaded engine: name, id, then "applicable" or why it declined). */
static void declines(hipdnnBackendDescriptor_t heur, hipdnnMemorySpace_t space, char* why,
                     size_t why_len, size_t* len) {
    char* report = support_report(heur);
    if (!report) return;
    char* save = NULL;
    for (char* line = strtok_r(report, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char* tab = strchr(line, '\t');
        char* reason = tab ? strchr(tab + 1, '\t') : NULL;
        if (!reason) continue;
        *tab = '\0';
        if (engine_space(line) != (int64_t)space) continue;
        ++reason;
        size_t nl = strlen(line); /* engines often start their reason with their name */
        if (!strncmp(reason, line, nl) && !strncmp(reason + nl, ": ", 2)) reason += nl + 2;
        /* applicable but not among the results: the heuristic mode left it out */
        add_reason(why, why_len, len, line,
                   strcmp(reason, "applicable") ? reason
                                                : "applicable, but not ranked in this heuristic "
                                                  "mode");
    }
    free(report);
}

bool ep_plan_check(hipdnnHandle_t h, hipdnnBackendDescriptor_t graph, const ep_options* opt,
                   hipdnnMemorySpace_t space, char* why, size_t why_len) {
    (void)h; /* the graph's handle is the one the heuristics ask on */
    hipdnnBackendDescriptor_t heur = heuristics(graph, opt, why, why_len);
    if (!heur) return false;
    bool found = false, listed = true;
    const int64_t partial = partial_count(heur); /* as ep_plan_choose: a short cut's first */
    for (int pass = partial ? 0 : 1; pass < 2 && !found && listed; ++pass) {
        hipdnnBackendDescriptor_t cfgs[MAX_CFG];
        int64_t count = 0;
        listed = configs(heur, pass ? MAX_CFG : partial, cfgs, &count, why, why_len);
        for (int64_t i = 0; i < count; ++i) {
            int64_t mem;
            if (!found && cfg_engine(cfgs[i], &mem, NULL, 0)) found = mem == (int64_t)space;
            hipdnnBackendDestroyDescriptor(cfgs[i]);
        }
    }
    if (!found && listed) {
        size_t len = 0;
        why[0] = '\0';
        declines(heur, space, why, why_len, &len);
        if (!len)
            snprintf(why, why_len, "no engine for %s memory is loaded",
                     space == HIPDNN_MEMORY_HOST ? "host" : "device");
    }
    hipdnnBackendDestroyDescriptor(heur);
    return found;
}

/* ---- engine configs by hand: EPContext payloads (context.c) and autotuning (kernel.c) ---- */

static bool hip_ok(hipdnnStatus_t hs, const char* what, char* why, size_t why_len) {
    if (hs == HIPDNN_STATUS_SUCCESS) return true;
    snprintf(why, why_len, "%s: %s: %s", what, hipdnnGetErrorString(hs),
             hipdnnPeekLastErrorString_ext());
    return false;
}

hipdnnBackendDescriptor_t ep_make_config(hipdnnBackendDescriptor_t g, int64_t index, int n_knobs,
                                         int64_t (*knobs)[2], char* why, size_t why_len) {
    hipdnnBackendDescriptor_t eng = NULL, cfg = NULL, k[16] = {0};
    bool ok = hip_ok(hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_ENGINE_DESCRIPTOR, &eng),
                     "engine", why, why_len) &&
              hip_ok(hipdnnBackendSetAttribute(eng, HIPDNN_ATTR_ENGINE_OPERATION_GRAPH,
                                               HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g), "engine graph",
                     why, why_len) &&
              hip_ok(hipdnnBackendSetAttribute(eng, HIPDNN_ATTR_ENGINE_GLOBAL_INDEX, HIPDNN_TYPE_INT64,
                                               1, &index), "engine index", why, why_len) &&
              hip_ok(hipdnnBackendFinalize(eng), "engine finalize", why, why_len);
    for (int i = 0; ok && i < n_knobs; ++i)
        ok = hip_ok(hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, &k[i]),
                    "knob choice", why, why_len) &&
             hip_ok(hipdnnBackendSetAttribute(k[i], HIPDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
                                              HIPDNN_TYPE_INT64, 1, &knobs[i][0]), "knob id", why,
                    why_len) &&
             hip_ok(hipdnnBackendSetAttribute(k[i], HIPDNN_ATTR_KNOB_CHOICE_KNOB_VALUE,
                                              HIPDNN_TYPE_INT64, 1, &knobs[i][1]), "knob value", why,
                    why_len) &&
             hip_ok(hipdnnBackendFinalize(k[i]), "knob choice finalize", why, why_len);
    ok = ok &&
         hip_ok(hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg),
                "engine config", why, why_len) &&
         hip_ok(hipdnnBackendSetAttribute(cfg, HIPDNN_ATTR_ENGINECFG_ENGINE,
                                          HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &eng), "config engine",
                why, why_len) &&
         hip_ok(hipdnnBackendSetAttribute(cfg, HIPDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                                          HIPDNN_TYPE_BACKEND_DESCRIPTOR, n_knobs, k), "knob choices",
                why, why_len) &&
         hip_ok(hipdnnBackendFinalize(cfg), "engine config finalize", why, why_len);
    for (int i = 0; i < n_knobs; ++i) hipdnnBackendDestroyDescriptor(k[i]);
    hipdnnBackendDestroyDescriptor(eng);
    if (!ok) {
        hipdnnBackendDestroyDescriptor(cfg);
        return NULL;
    }
    return cfg;
}


/* The values of one knob worth timing besides its default `dflt`: those the engine lists
 * (`only`), else those on its stride from lo to hi; at most 8, spread evenly. */
static int knob_values(int64_t lo, int64_t hi, int64_t dflt, int64_t stride, const int64_t* only,
                       int64_t n_only, int64_t* out) {
    int64_t all[64], n = 0, step = stride > 0 ? stride : 1;
    if (n_only > 0)
        for (int64_t i = 0; i < n_only && n < 64; ++i) all[n++] = only[i];
    else if (hi >= lo && (hi - lo) / step < 64)
        for (int64_t v = lo; v <= hi; v += step) all[n++] = v;
    else if (hi >= lo) /* a wide range: its ends and points spread between */
        for (int64_t i = 0; i < 8; ++i) all[n++] = lo + (hi - lo) / step * i / 7 * step;
    int64_t others[64], m = 0;
    for (int64_t i = 0; i < n; ++i)
        if (all[i] != dflt && (!m || others[m - 1] != all[i])) others[m++] = all[i];
    int k = 0;
    for (int64_t i = 0; i < 8 && i < m; ++i) out[k++] = others[m <= 8 ? i : (m - 1) * i / 7];
    return k;
}

/* The knob variants of engine config cfg's engine (one knob changed each) as plans into
 * out[max]; the count.  The "tf32" knob is never swept: each variant has it at 1 where
 * ep.hipdnn.use_tf32 says so (tf32 = 1 in the engine's knobs), else at its default. */
static int knob_variants(hipdnnHandle_t h, hipdnnBackendDescriptor_t g, const ep_options* opt,
                         hipdnnBackendDescriptor_t cfg, const char* engine, ep_plan_part* out,
                         int max) {
    int64_t info[64], vals[256], n_info = 0, n_vals = 0, index = -1;
    bool ok = engine_knobs(cfg, &index, info, &n_info, vals, &n_vals), tf32 = false;
    for (int64_t i = 0; ok && i + 3 < n_info; i += 4) tf32 = tf32 || info[i] == KNOB_TF32;
    tf32 = tf32 && opt->use_tf32;
    int count = 0;
    for (int64_t i = 0, at = 0; ok && i + 3 < n_info && at + 1 < n_vals && count < max; i += 4) {
        int64_t only = vals[at + 1], v[8];
        if (only < 0 || at + 2 + only > n_vals) break;
        int nv = knob_values(info[i + 1], info[i + 2], info[i + 3], vals[at], vals + at + 2, only, v);
        at += 2 + only;
        if (info[i] == KNOB_TF32) continue;
        for (int j = 0; j < nv && count < max; ++j) {
            int64_t choice[2][2] = {{info[i], v[j]}, {KNOB_TF32, 1}};
            char why[512];
            hipdnnBackendDescriptor_t c =
                ep_make_config(g, index, tf32 ? 2 : 1, choice, why, sizeof(why));
            if (c && try_plan(h, c, engine, &out[count], why, sizeof(why))) ++count;
            hipdnnBackendDestroyDescriptor(c);
        }
    }
    return count;
}

int ep_plan_candidates(hipdnnHandle_t h, hipdnnBackendDescriptor_t g, const ep_options* opt,
                       hipdnnMemorySpace_t space, ep_plan_part* out, int max) {
    hipdnnBackendDescriptor_t cfgs[MAX_CFG];
    int64_t count = 0;
    char err[512], names[MAX_CFG][64];
    hipdnnBackendDescriptor_t heur = heuristics(g, opt, err, sizeof(err));
    if (!heur) return 0;
    if (!configs(heur, MAX_CFG, cfgs, &count, err, sizeof(err))) { /* every engine's */
        hipdnnBackendDestroyDescriptor(heur);
        return 0;
    }
    int n = 0, tuned[MAX_CFG], n_tuned = 0;
    for (int64_t i = 0; i < count; ++i) {
        int64_t mem;
        char name[64] = "";
        if (n < max && cfg_engine(cfgs[i], &mem, name, sizeof(name)) && mem == (int64_t)space &&
            try_plan_tf32(h, g, opt, cfgs[i], name, &out[n], err, sizeof(err))) {
            bool seen = false; /* each engine's knobs are swept once, from its first config */
            for (int j = 0; j < n_tuned; ++j) seen = seen || !strcmp(names[j], name);
            if (!seen) {
                snprintf(names[n_tuned], sizeof(names[0]), "%s", name);
                tuned[n_tuned++] = (int)i;
            }
            ++n;
        }
    }
    for (int j = 0; j < n_tuned && n < max; ++j)
        n += knob_variants(h, g, opt, cfgs[tuned[j]], names[j], out + n, max - n);
    for (int64_t i = 0; i < count; ++i) hipdnnBackendDestroyDescriptor(cfgs[i]);
    hipdnnBackendDestroyDescriptor(heur);
    return n;
}
