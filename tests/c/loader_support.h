/* loader_support.h — queries of the plugin registry for the loader tests: the two-call
 * lists (loaded paths, skipped plugins), engines by name, and a graph's support report. */
#ifndef HIPDNN_TEST_LOADER_SUPPORT_H
#define HIPDNN_TEST_LOADER_SUPPORT_H

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "graph_builder.h"
#include "hipdnn/hipdnn.h"
#include "hipdnn/hipdnn_sdk.h"

typedef struct {
    size_t n;
    char** items;
} ls_list;

static inline void ls_list_free(ls_list* l) {
    for (size_t i = 0; i < l->n; ++i) free(l->items[i]);
    free(l->items);
    l->n = 0;
    l->items = NULL;
}

typedef hipdnnStatus_t (*ls_two_call_fn)(size_t*, char**, size_t*);

/* The two-call pattern: count and longest length first, then the strings.  Checks that
 * the first call's max_len is the longest string's length plus one. */
static inline int ls_fetch(ls_two_call_fn fn, const char* what, ls_list* out) {
    out->n = 0;
    out->items = NULL;
    size_t n = 0, max_len = 0;
    if (!CHECK_OK(fn(&n, NULL, &max_len))) return 0;
    if (n == 0) return 1;
    if (!CHECK_MSG(max_len > 1, "%s: %zu entries but max_len %zu", what, n, max_len)) return 0;
    char** bufs = calloc(n, sizeof(char*));
    if (!bufs) return 0;
    for (size_t i = 0; i < n; ++i) {
        bufs[i] = malloc(max_len);
        if (!bufs[i]) {
            out->items = bufs;
            out->n = i;
            return 0;
        }
        memset(bufs[i], '#', max_len);
    }
    size_t n2 = n, len2 = max_len;
    out->items = bufs;
    out->n = n;
    if (!CHECK_OK(fn(&n2, bufs, &len2))) return 0;
    CHECK_MSG(n2 == n, "%s: second call gave %zu entries, first %zu", what, n2, n);
    size_t longest = 0;
    for (size_t i = 0; i < n; ++i) {
        if (!CHECK_MSG(memchr(bufs[i], '\0', max_len) != NULL, "%s[%zu] is not terminated", what,
                       i)) {
            bufs[i][max_len - 1] = '\0';
        }
        size_t l = strlen(bufs[i]);
        if (l > longest) longest = l;
    }
    CHECK_MSG(longest + 1 == max_len, "%s: max_len %zu but the longest entry has %zu chars", what,
              max_len, longest);
    return 1;
}

static inline int ls_loaded(ls_list* out) {
    return ls_fetch(hipdnnGetLoadedEnginePluginPaths_ext, "loaded plugin paths", out);
}

static inline int ls_skipped(ls_list* out) {
    return ls_fetch(hipdnnGetSkippedEnginePlugins_ext, "skipped plugins", out);
}

/* Index of the first entry holding both needles (b may be NULL), or -1. */
static inline int ls_find(const ls_list* l, const char* a, const char* b) {
    for (size_t i = 0; i < l->n; ++i)
        if (strstr(l->items[i], a) && (!b || strstr(l->items[i], b))) return (int)i;
    return -1;
}

static inline void ls_print(const ls_list* l, const char* what) {
    printf("   %s (%zu):\n", what, l->n);
    for (size_t i = 0; i < l->n; ++i) printf("     %s\n", l->items[i]);
}

/* Engines named `name`; *info gets the last one found. */
static inline int ls_engines_named(const char* name, hipdnnEngineInfo_ext_t* info) {
    int64_t count = 0;
    if (!CHECK_OK(hipdnnGetEngineCount_ext(&count))) return -1;
    int found = 0;
    for (int64_t i = 0; i < count; ++i) {
        hipdnnEngineInfo_ext_t e;
        memset(&e, 0, sizeof(e));
        if (!CHECK_OK(hipdnnGetEngineInfo_ext(i, &e))) continue;
        if (strcmp(e.name, name) == 0) {
            ++found;
            if (info) *info = e;
        }
    }
    return found;
}

/* Number of engines flagged as fallback (reference); *info gets the last one. */
static inline int ls_fallback_engines(hipdnnEngineInfo_ext_t* info) {
    int64_t count = 0;
    if (!CHECK_OK(hipdnnGetEngineCount_ext(&count))) return -1;
    int found = 0;
    for (int64_t i = 0; i < count; ++i) {
        hipdnnEngineInfo_ext_t e;
        memset(&e, 0, sizeof(e));
        if (CHECK_OK(hipdnnGetEngineInfo_ext(i, &e)) && e.is_fallback) {
            ++found;
            if (info) *info = e;
        }
    }
    return found;
}

/* Every engine's id is the FNV-1a hash of its name and its info is complete. */
static inline void ls_check_engine_infos(void) {
    int64_t count = -1;
    if (!CHECK_OK(hipdnnGetEngineCount_ext(&count))) return;
    for (int64_t i = 0; i < count; ++i) {
        hipdnnEngineInfo_ext_t e;
        memset(&e, 0, sizeof(e));
        if (!CHECK_OK(hipdnnGetEngineInfo_ext(i, &e))) continue;
        CHECK_MSG(e.name[0] != '\0', "engine %lld has no name", (long long)i);
        CHECK_MSG(e.engine_id == hipdnnSdkFnv1a64(e.name),
                  "engine '%s' has id %016llx, not FNV-1a of its name", e.name,
                  (unsigned long long)e.engine_id);
        CHECK_MSG(e.plugin_path[0] != '\0', "engine '%s' has no plugin path", e.name);
        CHECK(e.memory_space == HIPDNN_MEMORY_HOST || e.memory_space == HIPDNN_MEMORY_DEVICE);
    }
    hipdnnEngineInfo_ext_t e;
    hipdnnStatus_t st = hipdnnGetEngineInfo_ext(count, &e);
    check_note_call(st);
    CHECK_MSG(st == HIPDNN_STATUS_BAD_PARAM || st == HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND,
              "engine index %lld (one past the end) gave %s", (long long)count,
              hipdnnGetErrorString(st));
    st = hipdnnGetEngineInfo_ext(-1, &e);
    CHECK_MSG(st == HIPDNN_STATUS_BAD_PARAM || st == HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND,
              "engine index -1 gave %s", hipdnnGetErrorString(st));
}

/* Lower-cased copy for case-blind searches. */
static inline void ls_lower(const char* s, char* out, size_t len) {
    size_t i = 0;
    for (; s[i] && i + 1 < len; ++i) out[i] = (char)tolower((unsigned char)s[i]);
    out[i] = '\0';
}

#endif /* HIPDNN_TEST_LOADER_SUPPORT_H */
