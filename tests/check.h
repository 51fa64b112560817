/* check.h — the tiny test harness shared by every tests/test_*.c program.
 *
 * Each CHECK counts a pass or prints "FAIL file:line: condition detail" with its
 * numbers; a test program ends with check_summary(), which prints "# counts P F"
 * for tests/run.sh and returns the exit status (non-zero on any failure). EXPECT_USER_ERROR runs an expression
 * that must call die_user() and checks the message contains a substring.
 */
#ifndef CHECK_H
#define CHECK_H

#include "core/core.h"
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

static int check_passed = 0, check_failed = 0;

static void check_report(int ok, const char *file, int line, const char *what, const char *detail)
{
    if (ok) {
        check_passed++;
    } else {
        check_failed++;
        printf("FAIL %s:%d: %s %s\n", file, line, what, detail);
    }
}

#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        char check_detail_[512];                                             \
        snprintf(check_detail_, sizeof check_detail_, __VA_ARGS__);          \
        check_report(!!(cond), __FILE__, __LINE__, #cond, check_detail_);    \
    } while (0)

/* |a - b| <= tol * max(1, |b|)  (relative for large values, absolute near 0) */
#define CHECK_CLOSE(a, b, tol, what)                                                   \
    do {                                                                               \
        double ca_ = (a), cb_ = (b), ct_ = (tol);                                      \
        double scale_ = fabs(cb_) > 1 ? fabs(cb_) : 1;                                 \
        CHECK(fabs(ca_ - cb_) <= ct_ * scale_, "%s: got %.17g expected %.17g (tol %g)", \
              what, ca_, cb_, ct_);                                                    \
    } while (0)

/* Catching die_user() in-process. */
static jmp_buf check_jmp;
static char check_msg[1024];
__attribute__((unused)) static void check_error_hook(const char *msg)
{
    snprintf(check_msg, sizeof check_msg, "%s", msg);
    longjmp(check_jmp, 1);
}

#define EXPECT_USER_ERROR(expr, substring)                                                 \
    do {                                                                                   \
        check_msg[0] = '\0';                                                               \
        set_user_error_hook(check_error_hook);                                             \
        volatile int raised_ = 0;                                                                 \
        if (setjmp(check_jmp) == 0) {                                                      \
            expr;                                                                          \
        } else {                                                                           \
            raised_ = 1;                                                                   \
        }                                                                                  \
        set_user_error_hook(NULL);                                                         \
        CHECK(raised_ && strstr(check_msg, substring), "expected a user error containing " \
              "'%s', got %s'%s'", substring, raised_ ? "" : "no error ", check_msg);       \
    } while (0)

static int check_summary(void)
{
    printf("# counts %d %d\n", check_passed, check_failed);
    return check_failed ? 1 : 0;
}

#endif
