/* The plan cache's folder: where it is, its lock, LRU eviction, and the public info / clear
 * calls (`python -m hipdnn cache`).  Entries are written to a temporary name and renamed
 * (plan_cache.c), so readers take no lock; writers, eviction and clearing hold the folder's
 * flock so that concurrent processes never remove what another is renaming in. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "hipdnn/hipdnn_sdk.h"
#include "plan_cache.h"

#define DEFAULT_MAX_PLANS 4096

bool hipdnnPlanCacheDir(char* dir, size_t len, char* why, size_t why_len) {
    return hipdnnSdkCacheDir("plans", dir, len, why, why_len);
}

int hipdnnPlanCacheLock(const char* dir, char* why, size_t why_len) {
    if (!hipdnnSdkMakeDirs(dir, why, why_len)) return -1;
    char path[4200];
    snprintf(path, sizeof(path), "%s/.lock", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(why, why_len, "open %s: %s", path, strerror(errno));
        return -1;
    }
    while (flock(fd, LOCK_EX) != 0) {
        if (errno == EINTR) continue;
        snprintf(why, why_len, "flock %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

void hipdnnPlanCacheUnlock(int fd) {
    if (fd < 0) return;
    flock(fd, LOCK_UN);
    close(fd);
}

typedef struct {
    char name[64];
    struct timespec used;
    off_t size;
} entry_file;

static bool is_entry(const char* name) {
    const size_t n = strlen(name);
    return n > 5 && name[0] != '.' && strcmp(name + n - 5, ".plan") == 0 && n < 64;
}

/* Every entry file of the folder (name, mtime, size): a malloc'd array, *n of them. */
static entry_file* list_entries(const char* dir, size_t* n) {
    *n = 0;
    DIR* d = opendir(dir);
    if (!d) return NULL;
    size_t cap = 64;
    entry_file* v = malloc(cap * sizeof(*v));
    for (struct dirent* e; v && (e = readdir(d)) != NULL;) {
        if (!is_entry(e->d_name)) continue;
        char path[4200];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
        if (*n == cap) {
            entry_file* w = realloc(v, (cap *= 2) * sizeof(*v));
            if (!w) break;
            v = w;
        }
        snprintf(v[*n].name, sizeof(v[*n].name), "%s", e->d_name);
        v[*n].used = st.st_mtim;
        v[*n].size = st.st_size;
        ++*n;
    }
    closedir(d);
    return v;
}

static int older_first(const void* a, const void* b) {
    const struct timespec* x = &((const entry_file*)a)->used;
    const struct timespec* y = &((const entry_file*)b)->used;
    if (x->tv_sec != y->tv_sec) return x->tv_sec < y->tv_sec ? -1 : 1;
    return (x->tv_nsec > y->tv_nsec) - (x->tv_nsec < y->tv_nsec);
}

static size_t max_plans(void) {
    const char* env = getenv("HIPDNN_CACHE_MAX_PLANS");
    char* end = NULL;
    long long v = env && *env ? strtoll(env, &end, 10) : 0;
    return v > 0 && end && !*end ? (size_t)v : DEFAULT_MAX_PLANS;
}

void hipdnnPlanCacheEvict(const char* dir) {
    size_t n = 0;
    entry_file* v = list_entries(dir, &n);
    const size_t keep = max_plans();
    if (v && n > keep) {
        qsort(v, n, sizeof(*v), older_first);
        for (size_t i = 0; i < n - keep; ++i) {
            char path[4200];
            snprintf(path, sizeof(path), "%s/%s", dir, v[i].name);
            unlink(path);
        }
    }
    free(v);
}

/* ---- public ------------------------------------------------------------------------- */

HIPDNN_EXPORT hipdnnStatus_t hipdnnPlanCacheInfo_ext(char* dir, size_t dir_len, int64_t* entries,
                                                     int64_t* bytes) {
    if (!dir || !entries || !bytes)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NULL_POINTER, "hipdnnPlanCacheInfo_ext: NULL argument");
    char why[256] = "";
    *entries = *bytes = 0;
    if (dir_len) dir[0] = '\0';
    if (!hipdnnPlanCacheDir(dir, dir_len, why, sizeof(why)))
        return hipdnnFail(HIPDNN_STATUS_NOT_SUPPORTED, "plan cache off: %s", why[0] ? why : "path too long");
    size_t n = 0;
    entry_file* v = list_entries(dir, &n);
    for (size_t i = 0; v && i < n; ++i) *bytes += (int64_t)v[i].size;
    *entries = v ? (int64_t)n : 0;
    free(v);
    return HIPDNN_STATUS_SUCCESS;
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnPlanCacheClear_ext(int64_t* removed) {
    char dir[4096], why[512] = "";
    if (removed) *removed = 0;
    if (!hipdnnPlanCacheDir(dir, sizeof(dir), why, sizeof(why)))
        return hipdnnFail(HIPDNN_STATUS_NOT_SUPPORTED, "plan cache off: %s", why[0] ? why : "path too long");
    struct stat st;
    if (stat(dir, &st) != 0) return HIPDNN_STATUS_SUCCESS; /* nothing cached yet */
    int fd = hipdnnPlanCacheLock(dir, why, sizeof(why));
    if (fd < 0) return hipdnnFail(HIPDNN_STATUS_INTERNAL_ERROR, "plan cache: %s", why);
    size_t n = 0;
    entry_file* v = list_entries(dir, &n);
    for (size_t i = 0; v && i < n; ++i) {
        char path[4200];
        snprintf(path, sizeof(path), "%s/%s", dir, v[i].name);
        if (unlink(path) == 0 && removed) ++*removed;
    }
    free(v);
    hipdnnPlanCacheUnlock(fd);
    return HIPDNN_STATUS_SUCCESS;
}
