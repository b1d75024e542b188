/* hipdnn's cache folder, shared by the backend's plan cache and the engines' kernel caches
 * (docs/engine_selection.md): one walk of HIPDNN_CACHE / HIPDNN_CACHE_DIR / XDG_CACHE_HOME /
 * HOME, and one mkdir -p, so that every cache agrees where it lives and when it is off. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hipdnn/hipdnn_sdk.h"

bool hipdnnSdkCacheDir(const char* sub, char* dir, size_t len, char* why, size_t why_len) {
    const char* off = getenv("HIPDNN_CACHE");
    if (off && strcmp(off, "0") == 0) {
        hipdnnSdkFormat(why, why_len, "HIPDNN_CACHE=0");
        return false;
    }
    const char* root = getenv("HIPDNN_CACHE_DIR");
    const char* xdg = getenv("XDG_CACHE_HOME");
    const char* home = getenv("HOME");
    int n;
    if (root && *root)
        n = snprintf(dir, len, "%s/%s", root, sub);
    else if (xdg && xdg[0] == '/')
        n = snprintf(dir, len, "%s/hipdnn/%s", xdg, sub);
    else if (home && home[0] == '/')
        n = snprintf(dir, len, "%s/.cache/hipdnn/%s", home, sub);
    else {
        hipdnnSdkFormat(why, why_len, "neither HIPDNN_CACHE_DIR, XDG_CACHE_HOME nor HOME is set");
        return false;
    }
    if (n < 0 || (size_t)n >= len) {
        hipdnnSdkFormat(why, why_len, "the cache folder's path is over %zu bytes", len);
        return false;
    }
    return true;
}

bool hipdnnSdkMakeDirs(const char* dir, char* why, size_t why_len) {
    char path[4096];
    if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path)) {
        hipdnnSdkFormat(why, why_len, "path too long: %.64s...", dir);
        return false;
    }
    for (char* s = path + 1;; ++s) {
        const bool end = *s == '\0';
        if (*s == '/' || end) {
            *s = '\0';
            if (mkdir(path, 0700) != 0 && errno != EEXIST) {
                hipdnnSdkFormat(why, why_len, "mkdir %s: %s", path, strerror(errno));
                return false;
            }
            if (end) break;
            *s = '/';
        }
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        hipdnnSdkFormat(why, why_len, "%s is not a folder", dir);
        return false;
    }
    return true;
}
