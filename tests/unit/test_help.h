/* test_help.h: the tiny harness behind every C unit test.
 *
 * A test file defines functions `static int test_x(void)` that return 0 on
 * success, and a `main` that runs them through RUN_TEST and ends with
 * TEST_REPORT().  A failed CHECK prints file:line and the expression and makes
 * the test return 1.  The report prints "N passed, N failed" alone on a line,
 * which is the closing line CI reads, and the exit code is non-zero when any
 * test failed. */
#ifndef RL_TEST_HELP_H
#define RL_TEST_HELP_H

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

#define CHECK_EQ_INT(a, b)                                             \
    do {                                                               \
        long long a_ = (long long)(a), b_ = (long long)(b);            \
        if (a_ != b_) {                                                \
            fprintf(stderr, "  FAIL %s:%d: %s == %s (%lld != %lld)\n", \
                    __FILE__, __LINE__, #a, #b, a_, b_);               \
            return 1;                                                  \
        }                                                              \
    } while (0)

#define CHECK_MEM(a, b, n) CHECK(memcmp((a), (b), (n)) == 0)

#define RUN_TEST(fn)                              \
    do {                                          \
        if (fn() == 0) {                          \
            test_passed_++;                       \
        } else {                                  \
            test_failed_++;                       \
            fprintf(stderr, "FAILED: %s\n", #fn); \
        }                                         \
    } while (0)

#define TEST_REPORT(name) (                                                   \
    printf("%s: %d passed, %d failed\n", (name), test_passed_, test_failed_), \
    test_failed_ ? 1 : 0)

#endif
