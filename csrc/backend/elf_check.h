/* Checks a plugin file before dlopen maps it (elf_check.c). */
#ifndef HIPDNN_BACKEND_ELF_CHECK_H
#define HIPDNN_BACKEND_ELF_CHECK_H

#include <stddef.h>
#include <sys/stat.h>

/* 0 if `path` is a readable regular file holding a shared library for this machine whose
 * segments all lie inside the file, with *st its status.  Else -1 and `why` says what is
 * wrong ("not a regular file (a FIFO)", "truncated: segment 2 ends at byte N but the
 * file has M", "ELF for machine AArch64, this is x86-64", ...).  Never blocks on a FIFO
 * or device, never maps the file. */
int hipdnnElfCheck(const char* path, struct stat* st, char* why, size_t len);

#endif
