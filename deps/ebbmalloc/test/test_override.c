/* test_override.c: the standard entry points of libebbmalloc.so.  Built
 * against libc and run under LD_PRELOAD=libebbmalloc.so by run_tests.sh;
 * it first proves ebbmalloc is the malloc in use (ebb_usable_size, found
 * with dlsym, recognises malloc's blocks and reports our class sizes), then
 * checks each of malloc, free, calloc, realloc, reallocarray,
 * posix_memalign, aligned_alloc, memalign, valloc, pvalloc and
 * malloc_usable_size. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "test_help.h"

static size_t (*ebb_usable)(const void *);

static int test_is_ebbmalloc(void) {
    ebb_usable = (size_t(*)(const void *))dlsym(RTLD_DEFAULT, "ebb_usable_size");
    CHECK(ebb_usable != NULL);
    void *p = malloc(20);
    CHECK_EQ(ebb_usable(p), 24); /* glibc would say 24 too, so: */
    void *q = malloc(130);
    CHECK_EQ(malloc_usable_size(q), 144); /* 8 classes per doubling: glibc says 136, jemalloc 160 */
    free(p);
    free(q);
    return 0;
}

static int test_standard_entry_points(void) {
    volatile size_t huge_n = SIZE_MAX / 4; /* hidden from -Walloc-size */
    char *p = malloc(100);
    CHECK(p != NULL);
    memset(p, 1, 100);
    p = realloc(p, 5000);
    CHECK(p != NULL && p[99] == 1);
    CHECK(malloc_usable_size(p) >= 5000);
    free(p);
    int *z = calloc(1000, sizeof(int));
    for (int i = 0; i < 1000; i++)
        CHECK(z[i] == 0);
    free(z);
    errno = 0;
    CHECK(calloc(huge_n, 8) == NULL && errno == ENOMEM);
    int *arr = reallocarray(NULL, 100, sizeof(int));
    CHECK(arr != NULL);
    errno = 0;
    CHECK(reallocarray(arr, huge_n, 8) == NULL && errno == ENOMEM);
    free(arr);
    void *a = NULL;
    CHECK_EQ(posix_memalign(&a, 256, 1000), 0);
    CHECK(((uintptr_t)a & 255) == 0);
    free(a);
    CHECK_EQ(posix_memalign(&a, 3, 1000), EINVAL);
    void *b = aligned_alloc(64, 640);
    CHECK(b && ((uintptr_t)b & 63) == 0);
    free(b);
    void *c = memalign(8192, 100);
    CHECK(c && ((uintptr_t)c & 8191) == 0);
    free(c);
    long page = sysconf(_SC_PAGESIZE);
    void *d = valloc(10);
    CHECK(d && ((uintptr_t)d & (uintptr_t)(page - 1)) == 0);
    free(d);
    void *e = pvalloc(10);
    CHECK(e && ((uintptr_t)e & (uintptr_t)(page - 1)) == 0);
    CHECK(malloc_usable_size(e) >= (size_t)page);
    free(e);
    CHECK(realloc(malloc(10), 0) == NULL);
    free(NULL);
    return 0;
}

int main(void) {
    RUN_TEST(test_is_ebbmalloc);
    RUN_TEST(test_standard_entry_points);
    return TEST_REPORT("ebbmalloc override");
}
