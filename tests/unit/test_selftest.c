/* test_selftest.c: the memory test of `--test-memory` (src/selftest.c) passes
 * sound memory and catches a fault: two virtual pages backed by one physical
 * page behave as RAM whose address lines alias, which the address pattern
 * must report. */
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "selftest.h"
#include "test_help.h"

static int passes_seen;

static void count_pass(int pass, void *arg) {
    (void)arg;
    passes_seen = pass;
}

static int test_sound_memory_passes(void) {
    size_t words = (64 * 1024) / sizeof(unsigned long);
    unsigned long *buf = mmap(NULL, words * sizeof(unsigned long), PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(buf != MAP_FAILED);
    passes_seen = 0;
    CHECK_EQ_INT(memtest_run(buf, words, 3, count_pass, NULL), 0);
    CHECK_EQ_INT(passes_seen, 3);
    munmap(buf, words * sizeof(unsigned long));
    return 0;
}

static int test_aliased_pages_fail(void) {
    long page = sysconf(_SC_PAGESIZE);
    int fd = memfd_create("memtest", 0);
    CHECK(fd >= 0);
    CHECK(ftruncate(fd, page) == 0);
    char *area = mmap(NULL, (size_t)page * 2, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(area != MAP_FAILED);
    /* both halves of the area show the same page */
    CHECK(mmap(area, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == area);
    CHECK(mmap(area + page, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == area + page);
    size_t words = (size_t)page * 2 / sizeof(unsigned long);
    size_t bad = memtest_run((unsigned long *)(void *)area, words, 1, NULL, NULL);
    /* the second half's addresses overwrite the first half's: every word of
     * the first page reads back wrong in the address pattern */
    CHECK(bad >= (size_t)page / sizeof(unsigned long));
    munmap(area, (size_t)page * 2);
    close(fd);
    return 0;
}

int main(void) {
    RUN_TEST(test_sound_memory_passes);
    RUN_TEST(test_aliased_pages_fail);
    return TEST_REPORT("selftest");
}
