/* check.h — the C tests' framework: CHECK macros that report file:line and the backend's
 * last-error string on failure, counters, and a closing line "N passed, N failed".
 *
 *   CHECK(cond)                      a condition
 *   CHECK_MSG(cond, fmt, ...)        a condition, with a printf-style detail on failure
 *   CHECK_OK(call)                   a hipdnn call that must succeed
 *   CHECK_STATUS(call, want)         a hipdnn call that must give status `want`
 *   CHECK_ERR_CONTAINS(text)         the message of the last CHECK_OK/CHECK_STATUS call
 *   CHECK_STR_CONTAINS(s, text)      a string holds a substring
 *   CHECK_EQ_INT(a, b)               two integers (both printed on failure)
 *   REQUIRE(cond) / REQUIRE_OK(call) like CHECK, but return from the (void) test on failure
 * Every CHECK* is an expression giving 1 on success, 0 on failure.
 *
 * Each test is a `static void test_x(void)` run with RUN_TEST(test_x); main ends with
 * `return check_finish();`.  check_run_in_child runs a test in a forked process, for
 * tests that need process-global state of their own (the plugin registry loads once per
 * process); its counts are added to the parent's.  A child that runs past
 * CHECK_CHILD_TIMEOUT_S seconds is ended by SIGALRM and counts as a failure, so a test
 * that hangs fails instead of hanging the suite.
 */
#ifndef HIPDNN_TEST_CHECK_H
#define HIPDNN_TEST_CHECK_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hipdnn/hipdnn.h"

#ifndef CHECK_CHILD_TIMEOUT_S
#define CHECK_CHILD_TIMEOUT_S 300
#endif

static int check_passed;
static int check_failed;
/* The message of the last call checked with CHECK_OK / CHECK_STATUS, copied at once:
 * the backend's own string is only valid until the next hipdnn call. */
static char check_last_error[4096];
static hipdnnStatus_t check_last_status;

static inline void check_note_call(hipdnnStatus_t st) {
    check_last_status = st;
    const char* m = hipdnnPeekLastErrorString_ext();
    snprintf(check_last_error, sizeof(check_last_error), "%s", m ? m : "(NULL)");
}

static inline int check_report(int ok, const char* file, int line, const char* what, const char* detail) {
    if (ok) {
        ++check_passed;
        return 1;
    }
    ++check_failed;
    const char* last = hipdnnPeekLastErrorString_ext();
    fprintf(stdout, "FAIL %s:%d: %s%s%s\n     last error: \"%s\"\n", file, line, what,
            detail && *detail ? " — " : "", detail ? detail : "", last ? last : "(NULL)");
    fflush(stdout);
    return 0;
}

static inline int check_msg_impl(int ok, const char* file, int line, const char* what, const char* fmt,
                          ...) __attribute__((format(printf, 5, 6)));
static inline int check_msg_impl(int ok, const char* file, int line, const char* what, const char* fmt,
                          ...) {
    char detail[1024] = "";
    if (!ok) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(detail, sizeof(detail), fmt, ap);
        va_end(ap);
    }
    return check_report(ok, file, line, what, detail);
}

static inline int check_status_impl(hipdnnStatus_t got, hipdnnStatus_t want, const char* file, int line,
                             const char* call) {
    check_note_call(got);
    if (got == want) {
        ++check_passed;
        return 1;
    }
    ++check_failed;
    fprintf(stdout, "FAIL %s:%d: %s\n     gave %s, expected %s\n     message: \"%s\"\n", file,
            line, call, hipdnnGetErrorString(got), hipdnnGetErrorString(want), check_last_error);
    fflush(stdout);
    return 0;
}

static inline int check_contains_impl(const char* s, const char* text, const char* file, int line,
                               const char* what) {
    char detail[4400];
    int ok = s && text && strstr(s, text) != NULL;
    if (!ok)
        snprintf(detail, sizeof(detail), "\"%s\" does not contain \"%s\"", s ? s : "(NULL)",
                 text ? text : "(NULL)");
    return check_report(ok, file, line, what, ok ? "" : detail);
}

static inline int check_eq_int_impl(long long a, long long b, const char* file, int line,
                             const char* what) {
    char detail[128];
    snprintf(detail, sizeof(detail), "%lld != %lld", a, b);
    return check_report(a == b, file, line, what, a == b ? "" : detail);
}

#define CHECK(cond) check_report(!!(cond), __FILE__, __LINE__, #cond, "")
#define CHECK_MSG(cond, ...) check_msg_impl(!!(cond), __FILE__, __LINE__, #cond, __VA_ARGS__)
#define CHECK_STATUS(call, want) check_status_impl((call), (want), __FILE__, __LINE__, #call)
#define CHECK_OK(call) CHECK_STATUS(call, HIPDNN_STATUS_SUCCESS)
#define CHECK_ERR_CONTAINS(text)                                                                \
    check_contains_impl(check_last_error, (text), __FILE__, __LINE__, "last message")
#define CHECK_ERR_NONEMPTY()                                                                    \
    check_report(check_last_error[0] != '\0', __FILE__, __LINE__,                               \
                 "the failing call left a message", "message is empty")
#define CHECK_STR_CONTAINS(s, text) check_contains_impl((s), (text), __FILE__, __LINE__, #s)
#define CHECK_EQ_INT(a, b)                                                                      \
    check_eq_int_impl((long long)(a), (long long)(b), __FILE__, __LINE__, #a " == " #b)

#define REQUIRE(cond)                                                                           \
    do {                                                                                        \
        if (!CHECK(cond)) return;                                                               \
    } while (0)
#define REQUIRE_OK(call)                                                                        \
    do {                                                                                        \
        if (!CHECK_OK(call)) return;                                                            \
    } while (0)

#define RUN_TEST(fn)                                                                            \
    do {                                                                                        \
        int check_failed_before_ = check_failed;                                                \
        fprintf(stdout, "-- %s\n", #fn);                                                        \
        fflush(stdout);                                                                         \
        fn();                                                                                   \
        if (check_failed != check_failed_before_)                                               \
            fprintf(stdout, "   %s: %d failure(s)\n", #fn, check_failed - check_failed_before_); \
    } while (0)

/* Runs fn in a child process; the child's counts travel back through a pipe.  A child
 * that crashes or exits without reporting counts as one failure. */
static inline void check_run_in_child(const char* name, void (*fn)(void)) {
    int fds[2];
    fprintf(stdout, "-- %s (own process)\n", name);
    fflush(stdout);
    if (pipe(fds) != 0) {
        check_report(0, __FILE__, __LINE__, "pipe()", name);
        return;
    }
    pid_t pid = fork();
    if (pid < 0) {
        check_report(0, __FILE__, __LINE__, "fork()", name);
        close(fds[0]);
        close(fds[1]);
        return;
    }
    if (pid == 0) {
        close(fds[0]);
        alarm(CHECK_CHILD_TIMEOUT_S);
        check_passed = check_failed = 0;
        fn();
        int counts[2] = {check_passed, check_failed};
        ssize_t w = write(fds[1], counts, sizeof(counts));
        fflush(stdout);
        _exit(w == (ssize_t)sizeof(counts) ? 0 : 3);
    }
    close(fds[1]);
    int counts[2] = {0, 0};
    ssize_t r = read(fds[0], counts, sizeof(counts));
    close(fds[0]);
    int wstatus = 0;
    waitpid(pid, &wstatus, 0);
    if (r != (ssize_t)sizeof(counts) || !WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
        char detail[200];
        snprintf(detail, sizeof(detail), "child for %s died (%s %d)%s", name,
                 WIFSIGNALED(wstatus) ? "signal" : "exit status",
                 WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : WEXITSTATUS(wstatus),
                 WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGALRM
                     ? ": it hung past CHECK_CHILD_TIMEOUT_S" : "");
        check_report(0, __FILE__, __LINE__, "child process reported its counts", detail);
        return;
    }
    check_passed += counts[0];
    check_failed += counts[1];
    if (counts[1]) fprintf(stdout, "   %s: %d failure(s)\n", name, counts[1]);
}

static inline int check_finish(void) {
    fprintf(stdout, "%d passed, %d failed\n", check_passed, check_failed);
    fflush(stdout);
    return check_failed == 0 && check_passed > 0 ? 0 : 1;
}

#endif /* HIPDNN_TEST_CHECK_H */
