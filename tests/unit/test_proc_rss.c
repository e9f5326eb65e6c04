/* test_proc_rss.c: unit tests for lib/proc_rss.c, the RSS by kind of
 * mapping behind INFO memory's rss_* fields: pages touched in a range the
 * caller names go to io and leave when given back; a thread blocked in a
 * system call has its stack found; the parts add up to the total, which
 * matches the kernel's VmRSS. */
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "proc_rss.h"
#include "test_help.h"

#define REGION (64 * 4096)

static size_t vm_rss(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    size_t kb = 0;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "VmRSS: %zu kB", &kb) == 1) break;
    if (f) fclose(f);
    return kb * 1024;
}

static int test_io_range_counted_and_given_back(void) {
    char *p = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED);
    madvise(p, REGION, MADV_DONTFORK); /* flags of its own, as the engine's: not merged with a neighbour */
    memset(p, 1, REGION / 2);          /* 32 pages */
    proc_range_t r = {(uintptr_t)p, (uintptr_t)p + REGION};
    proc_rss_t a;
    CHECK(proc_rss_read(&r, 1, &a));
    CHECK(a.io >= REGION / 2);
    CHECK(a.io < REGION / 2 + 4096 * 4);
    CHECK_EQ_INT(a.total, a.file + a.stacks + a.io + a.anon);
    size_t kernel = vm_rss();
    CHECK(a.total <= kernel + kernel / 50 && a.total >= kernel - kernel / 50);
    CHECK(a.file > 0);   /* this binary and libc */
    CHECK(a.stacks > 0); /* [stack] */
    madvise(p, REGION, MADV_DONTNEED);
    proc_rss_t b;
    CHECK(proc_rss_read(&r, 1, &b));
    CHECK(b.io < 4096 * 4);
    munmap(p, REGION);
    return 0;
}

static int waiter_fd[2];
static void *waiter(void *arg) {
    (void)arg;
    char c;
    return (void *)(long)read(waiter_fd[0], &c, 1); /* blocked in a system call */
}

static int test_thread_stack_found(void) {
    proc_rss_t a;
    CHECK(proc_rss_read(NULL, 0, &a));
    CHECK(pipe(waiter_fd) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, waiter, NULL) == 0);
    usleep(50 * 1000);
    proc_rss_t b;
    CHECK(proc_rss_read(NULL, 0, &b));
    CHECK_EQ_INT(b.threads, a.threads + 1);
    CHECK(b.stacks > a.stacks);
    CHECK(write(waiter_fd[1], "x", 1) == 1);
    pthread_join(t, NULL);
    close(waiter_fd[0]);
    close(waiter_fd[1]);
    return 0;
}

int main(void) {
    RUN_TEST(test_io_range_counted_and_given_back);
    RUN_TEST(test_thread_stack_found);
    return TEST_REPORT("proc_rss");
}
