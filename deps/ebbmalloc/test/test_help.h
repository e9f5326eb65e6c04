/* test_help.h: ebbmalloc's own tiny test harness (the library stands alone,
 * so it does not reach into the server's tests/).
 *
 * A test is `static int test_x(void)` returning 0 on success; CHECK fails
 * it with file:line and the expression.  main runs tests with RUN_TEST and
 * returns TEST_REPORT("name"), which prints "name: N passed, N failed" and
 * yields a non-zero exit status when anything failed. */
#ifndef EBB_TEST_HELP_H
#define EBB_TEST_HELP_H

#include <stdio.h>
#include <string.h>

static int test_passed_, test_failed_;

#define CHECK(cond)                                                           \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf(stderr, "  FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
            return 1;                                                         \
        }                                                                     \
    } while (0)

#define CHECK_EQ(a, b)                                                 \
    do {                                                               \
        long long a_ = (long long)(a), b_ = (long long)(b);            \
        if (a_ != b_) {                                                \
            fprintf(stderr, "  FAIL %s:%d: %s == %s (%lld != %lld)\n", \
                    __FILE__, __LINE__, #a, #b, a_, b_);               \
            return 1;                                                  \
        }                                                              \
    } while (0)

#define RUN_TEST(fn)                              \
    do {                                          \
        fflush(stdout);                           \
        if (fn() == 0) {                          \
            test_passed_++;                       \
        } else {                                  \
            test_failed_++;                       \
            fprintf(stderr, "FAILED: %s\n", #fn); \
        }                                         \
    } while (0)

#define TEST_REPORT(name) (                                                   \
    printf("%s: %d passed, %d failed\n", (name), test_passed_, test_failed_), \
    fflush(stdout), test_failed_ ? 1 : 0)

#endif
