/* What the run-time compiler is, remembered on disk (rtc_facts.c). */
#ifndef HIPDNN_HIP_RTC_FACTS_H
#define HIPDNN_HIP_RTC_FACTS_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HIPE_RTC_MAX_ARCHS 64

typedef struct {
    char compiler[96];             /* "NVRTC 13.0": the kernel cache's key holds it */
    char library[512];             /* the file the loader opened, its real path */
    int narchs;                    /* the sm_XX it makes machine code for; 0: unknown */
    int archs[HIPE_RTC_MAX_ARCHS];
    bool ptx;                      /* it makes PTX too (for GPUs newer than it knows) */
} hipe_rtc_facts;

/* The facts in the file `path`, when it parses whole and what they depended on is as it
 * was: the library file, the loader's cache and the variables that steer the search. */
bool hipe_rtc_facts_read(const char* path, hipe_rtc_facts* f);
/* Writes `f` and what it depends on now to `path` (its folder made; a temporary file
 * renamed, so a reader never sees half of one); false with why. */
bool hipe_rtc_facts_write(const char* path, const hipe_rtc_facts* f, char* why, size_t len);

#ifdef __cplusplus
}
#endif

#endif
