/* A plugin file is checked before dlopen sees it.  dlopen maps the file's segments, so a
 * copy cut short (an interrupted install, a full disk) raises SIGBUS at the first page
 * past its end, and opening a FIFO named *.so blocks forever.  Here the file is classified
 * with stat before it is opened, opened O_NONBLOCK, checked again with fstat, and only its
 * ELF header and program headers are read, with pread: nothing is mapped.
 *
 * This catches accidents, not adversaries: a file can still change between the check and
 * dlopen, and plugin folders are trusted code (docs/c_api.md, "Security"). */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h> /* ElfW, __ELF_NATIVE_CLASS */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf_check.h"

#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#elif defined(__i386__)
#define HOST_MACHINE EM_386
#elif defined(__arm__)
#define HOST_MACHINE EM_ARM
#elif defined(__powerpc64__)
#define HOST_MACHINE EM_PPC64
#elif defined(__powerpc__)
#define HOST_MACHINE EM_PPC
#elif defined(__riscv)
#define HOST_MACHINE EM_RISCV
#elif defined(__s390__)
#define HOST_MACHINE EM_S390
#endif /* elsewhere the machine is left to dlopen */

#define NATIVE_CLASS (__ELF_NATIVE_CLASS == 64 ? ELFCLASS64 : ELFCLASS32)
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NATIVE_DATA ELFDATA2LSB
#else
#define NATIVE_DATA ELFDATA2MSB
#endif

static const char* machine_name(unsigned m, char* buf, size_t len) {
    switch (m) {
    case EM_X86_64: return "x86-64";
    case EM_AARCH64: return "AArch64";
    case EM_386: return "i386";
    case EM_ARM: return "ARM";
    case EM_PPC64: return "PowerPC64";
    case EM_PPC: return "PowerPC";
    case EM_RISCV: return "RISC-V";
    case EM_S390: return "s390";
    case EM_MIPS: return "MIPS";
    case EM_SPARCV9: return "SPARC V9";
#ifdef EM_AMDGPU
    case EM_AMDGPU: return "AMDGPU";
#endif
    default: snprintf(buf, len, "%u", m); return buf;
    }
}

static const char* file_kind(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    return "not a plain file";
}

/* All n bytes at off, or -1 (EINTR retried; a short file is a short read). */
static int read_at(int fd, void* buf, size_t n, uint64_t off) {
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, (char*)buf + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        got += (size_t)r;
    }
    return 0;
}

static int fail(char* why, size_t len, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char* why, size_t len, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return -1;
}

/* The header of an open regular file of `size` bytes. */
static int check_header(int fd, uint64_t size, char* why, size_t len) {
    ElfW(Ehdr) eh;
    memset(&eh, 0, sizeof(eh));
    size_t head = size < sizeof(eh) ? (size_t)size : sizeof(eh);
    if (size == 0) return fail(why, len, "empty file (0 bytes)");
    if (read_at(fd, &eh, head, 0) != 0) return fail(why, len, "could not read: %s", strerror(errno));
    if (size < SELFMAG || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
        return fail(why, len, "not an ELF file (no ELF magic in its first bytes)");
    if (size < sizeof(eh))
        return fail(why, len, "truncated: %llu bytes, shorter than an ELF header (%zu)",
                    (unsigned long long)size, sizeof(eh));
    if (eh.e_ident[EI_CLASS] != NATIVE_CLASS)
        return fail(why, len, "%s ELF file, this process is %d-bit",
                    eh.e_ident[EI_CLASS] == ELFCLASS32 ? "32-bit"
                    : eh.e_ident[EI_CLASS] == ELFCLASS64 ? "64-bit" : "unknown-class",
                    __ELF_NATIVE_CLASS);
    if (eh.e_ident[EI_DATA] != NATIVE_DATA)
        return fail(why, len, "ELF file of the other byte order (this machine is %s-endian)",
                    NATIVE_DATA == ELFDATA2LSB ? "little" : "big");
    if (eh.e_type != ET_DYN)
        return fail(why, len, "ELF file but not a shared library (%s)",
                    eh.e_type == ET_EXEC ? "an executable" : eh.e_type == ET_REL ? "an object file"
                    : eh.e_type == ET_CORE ? "a core dump" : "unknown type");
#ifdef HOST_MACHINE
    if (eh.e_machine != HOST_MACHINE) {
        char b1[16], b2[16];
        return fail(why, len, "ELF for machine %s, this is %s", machine_name(eh.e_machine, b1, sizeof(b1)),
                    machine_name(HOST_MACHINE, b2, sizeof(b2)));
    }
#endif
    if (eh.e_phnum == 0 || eh.e_phnum == PN_XNUM || eh.e_phentsize != sizeof(ElfW(Phdr)))
        return fail(why, len, "malformed ELF: %u program headers of %u bytes",
                    (unsigned)eh.e_phnum, (unsigned)eh.e_phentsize);
    uint64_t ph_end = (uint64_t)eh.e_phoff + (uint64_t)eh.e_phnum * sizeof(ElfW(Phdr));
    if (eh.e_phoff > size || ph_end > size)
        return fail(why, len, "truncated: program headers end at byte %llu but the file has %llu",
                    (unsigned long long)ph_end, (unsigned long long)size);
    ElfW(Phdr)* ph = malloc((size_t)eh.e_phnum * sizeof(*ph));
    if (!ph) return fail(why, len, "out of memory reading the program headers");
    int rc = 0;
    if (read_at(fd, ph, (size_t)eh.e_phnum * sizeof(*ph), eh.e_phoff) != 0) {
        rc = fail(why, len, "could not read the program headers: %s", strerror(errno));
        goto done;
    }
    int loads = 0;
    for (unsigned i = 0; i < eh.e_phnum; ++i) {
        loads += ph[i].p_type == PT_LOAD;
        if (ph[i].p_filesz == 0) continue;
        /* Every segment with file bytes: loads are mapped, notes and the dynamic section
         * are read through them. */
        uint64_t end = (uint64_t)ph[i].p_offset + (uint64_t)ph[i].p_filesz;
        if (end < (uint64_t)ph[i].p_offset || end > size) {
            rc = fail(why, len, "truncated: segment %u ends at byte %llu but the file has %llu",
                      i, (unsigned long long)end, (unsigned long long)size);
            goto done;
        }
    }
    if (loads == 0) rc = fail(why, len, "malformed ELF: no loadable segment");
done:
    free(ph);
    return rc;
}

int hipdnnElfCheck(const char* path, struct stat* st, char* why, size_t len) {
    /* stat first: opening a device can act on it (a tape rewinds), even non-blocking. */
    if (stat(path, st) != 0) return fail(why, len, "could not open: %s", strerror(errno));
    if (!S_ISREG(st->st_mode)) return fail(why, len, "not a regular file (%s)", file_kind(st->st_mode));
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return fail(why, len, errno == EACCES ? "not readable: %s" : "could not open: %s",
                    strerror(errno));
    int rc;
    if (fstat(fd, st) != 0) rc = fail(why, len, "could not stat: %s", strerror(errno));
    else if (!S_ISREG(st->st_mode)) /* swapped since the stat above */
        rc = fail(why, len, "not a regular file (%s)", file_kind(st->st_mode));
    else rc = check_header(fd, (uint64_t)st->st_size, why, len);
    close(fd);
    return rc;
}
