/* ebb-return-figures.c: prints how fast ebbmalloc gives freed memory back
 * to the OS, for BENCHMARKS.md ("ebbmalloc micro-benchmarks").
 *   idle   128 MiB allocated on one thread, freed on another, then no
 *          allocator call at all: RSS sampled every 100 ms (read(2) on a
 *          stack buffer, no stdio) until 95% of it is gone or decay + 5 s;
 *   purge  the same, keeping a live heap of 16 MiB, then ebb_purge():
 *          RSS above the start-up RSS against the live bytes.
 * Run with the settings under test in EBBMALLOC_CONF (default decay 10 s).
 * Build: cc -std=gnu11 -O2 -pthread -Ideps/ebbmalloc/include
 *        utils/bench/ebb-return-figures.c deps/ebbmalloc/libebbmalloc.a */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ebbmalloc.h"

#define NSMALL (64 * 1024)        /* 1000-byte blocks: 62.5 MiB */
#define NLARGE 640                /* 100,000-byte blocks: 61 MiB */
#define NLIVE (16 * 1024)         /* 1000-byte blocks kept live: 15.6 MiB */

static void *small_blocks[NSMALL], *large_blocks[NLARGE], *live_blocks[NLIVE];

/* Resident bytes from /proc/self/statm without touching the allocator. */
static long rss_bytes(void) {
    char buf[128];
    int fd = open("/proc/self/statm", O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
    if (fd >= 0) close(fd);
    if (n <= 0) return 0;
    buf[n] = '\0';
    char *p = strchr(buf, ' ');
    return p ? strtol(p + 1, NULL, 10) * sysconf(_SC_PAGESIZE) : 0;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *make_all(void *arg) {
    (void)arg;
    for (int i = 0; i < NSMALL; i++)
        memset(small_blocks[i] = ebb_malloc(1000), 3, 1000);
    for (int i = 0; i < NLARGE; i++)
        memset(large_blocks[i] = ebb_malloc(100000), 4, 100000);
    return NULL;
}

static void *free_all(void *arg) {
    (void)arg;
    for (int i = 0; i < NSMALL; i++) ebb_free(small_blocks[i]);
    for (int i = 0; i < NLARGE; i++) ebb_free(large_blocks[i]);
    return NULL;
}

static void on_thread(void *(*fn)(void *)) {
    pthread_t t;
    if (pthread_create(&t, NULL, fn, NULL) != 0) abort();
    pthread_join(t, NULL);
}

/* Freed from another thread, then idle: when is 95% of it back? */
static void idle_return(double limit_s) {
    long rss0 = rss_bytes();
    on_thread(make_all);
    long rss1 = rss_bytes();
    on_thread(free_all);
    double t0 = now_s(), at95 = -1;
    long rss = rss1;
    while (now_s() - t0 < limit_s) {
        usleep(100 * 1000);
        rss = rss_bytes();
        if ((rss1 - rss) * 100 >= (rss1 - rss0) * 95) {
            at95 = now_s() - t0;
            break;
        }
    }
    printf("idle: rss %ld -> %ld -> %ld KiB; freed %.1f MiB, returned %.1f%%, ",
           rss0 >> 10, rss1 >> 10, rss >> 10, (double)(rss1 - rss0) / 1048576.0,
           100.0 * (double)(rss1 - rss) / (double)(rss1 - rss0));
    if (at95 >= 0) printf("95%% back after %.1f s\n", at95);
    else printf("95%% NOT back within %.1f s\n", limit_s);
}

/* A live heap stays; the rest is freed on another thread, then purged. */
static void purge_return(void) {
    long rss0 = rss_bytes();
    for (int i = 0; i < NLIVE; i++)
        memset(live_blocks[i] = ebb_malloc(1000), 5, 1000);
    on_thread(make_all);
    on_thread(free_all);
    long rss1 = rss_bytes();
    ebb_purge();
    long rss2 = rss_bytes();
    ebb_stats_t s;
    ebb_stats_get(&s);
    long above = rss2 - rss0;
    printf("purge: rss %ld KiB before ebb_purge, %ld after; above start-up %.2f MiB for %.2f MiB live "
           "(allocated %.2f MiB): excess %.2f MiB\n", rss1 >> 10, rss2 >> 10, (double)above / 1048576.0,
           NLIVE * 1000.0 / 1048576.0, (double)s.allocated / 1048576.0,
           (double)(above - (long)s.allocated) / 1048576.0);
    for (int i = 0; i < NLIVE; i++) ebb_free(live_blocks[i]);
}

int main(int argc, char **argv) {
    double limit = argc > 1 ? atof(argv[1]) : 15.0;
    idle_return(limit);
    purge_return();
    return 0;
}
