/* test_purge.c: memory goes back to the OS after the decay time, while the
 * program is idle.  Run as `test_purge MODE`:
 *   bg        background purge thread (the default), no allocator calls
 *             while idle
 *   maintain  no background thread; the "host" calls ebb_maintain() every
 *             100 ms as the server's cron does
 * In both, 128 MiB is allocated on one thread and freed on another; right
 * after, the pages are still dirty (decay has not run); then >= 95% of
 * them must leave RSS while the program stays idle: on a quiet machine
 * within decay + 1.5 s (the time is printed), but the check allows 15 s
 * because a loaded machine may not schedule the purge thread for seconds,
 * and that is not what this test is about.
 *   pressure  the purge across arenas: an arena that grows into clean pages
 *             returns another arena's dirty pages beyond 4 MiB, but only
 *             those dirty for decay_ms / 10 or more, so that two arenas
 *             trading pages do not purge what the other is about to reuse
 *   borrow    a large run takes another arena's dirty pages before its own
 *             arena's clean ones
 * The mode picks EBBMALLOC_CONF (set before the first call, so conf.c
 * parsing is tested too). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "ebbmalloc.h"
#include "test_help.h"

#define EBB_TEST_SLAB ((size_t)16384) /* the largest small class */
#define NSMALL (64 * 1024)
#define NLARGE 640
static void *small_blocks[NSMALL], *large_blocks[NLARGE];
static const char *mode;

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static size_t rss_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, res = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &res) != 2)
            res = 0;
        fclose(f);
    }
    return (size_t)res * (size_t)sysconf(_SC_PAGESIZE);
}

static void *make_all(void *arg) {
    (void)arg;
    for (int i = 0; i < NSMALL; i++) {
        small_blocks[i] = ebb_malloc(1000);
        memset(small_blocks[i], 3, 1000);
    }
    for (int i = 0; i < NLARGE; i++) {
        large_blocks[i] = ebb_malloc(100000);
        memset(large_blocks[i], 4, 100000);
    }
    return NULL;
}

static void *free_all(void *arg) {
    (void)arg;
    for (int i = 0; i < NSMALL; i++)
        ebb_free(small_blocks[i]);
    for (int i = 0; i < NLARGE; i++)
        ebb_free(large_blocks[i]);
    return NULL;
}

static int found_setting;
static void find_setting(void *arg, const char *text) {
    if (strstr(text, (const char *)arg))
        found_setting = 1;
}

static int test_idle_return(void) {
    int use_maintain = strcmp(mode, "maintain") == 0;
    ebb_stats_print(find_setting, "decay_ms:500,");
    CHECK(found_setting);
    size_t rss0 = rss_bytes();
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, make_all, NULL), 0);
    pthread_join(t, NULL);
    size_t rss1 = rss_bytes();
    CHECK(rss1 > rss0 + (120 << 20));
    long long t0 = now_ms();
    CHECK_EQ(pthread_create(&t, NULL, free_all, NULL), 0);
    pthread_join(t, NULL);
    ebb_stats_t s;
    ebb_stats_get(&s);
    /* Not purged at once: decay (unless the freeing thread itself took
     * longer than the decay time, as it can on a loaded machine). */
    if (now_ms() - t0 < 250)
        CHECK(s.dirty > (100 << 20));
    size_t rss2 = rss1;
    for (int i = 0; i < 150; i++) { /* poll every 100 ms, at most 15 s */
        usleep(100 * 1000);
        if (use_maintain)
            ebb_maintain();
        rss2 = rss_bytes();
        ebb_stats_get(&s);
        if (s.dirty == 0 && (rss1 - rss2) * 100 >= (rss1 - rss0) * 95)
            break;
    }
    fprintf(stderr, "  %s: rss %zu -> %zu -> %zu KiB, dirty %zu, returned after %lld ms\n", mode,
            rss0 >> 10, rss1 >> 10, rss2 >> 10, s.dirty, now_ms() - t0);
    CHECK(s.dirty == 0);
    CHECK((rss1 - rss2) * 100 >= (rss1 - rss0) * 95);
    return 0;
}

/* The other arena's pages: a thread (given arena 1, as this one has arena
 * 0) allocates n blocks of `size` bytes, touches them, frees them and
 * exits, leaving their pages dirty in its arena. */
#define PR_N 1920 /* of 16 KiB: 30 MiB */
static void *pr_blocks[PR_N];
static size_t pr_size;

static void pr_grow(void **out, int n, size_t size) {
    for (int i = 0; i < n; i++) {
        out[i] = ebb_malloc(size);
        memset(out[i], 6, size);
    }
}

static void *pr_fill_and_free(void *arg) {
    int n = (int)(intptr_t)arg;
    pr_grow(pr_blocks, n, pr_size);
    for (int i = 0; i < n; i++)
        ebb_free(pr_blocks[i]);
    return NULL;
}

/* 0, or pthread_create's error. */
static int pr_other_arena(int n, size_t size) {
    pthread_t t;
    pr_size = size;
    ebb_free(ebb_malloc(16)); /* this thread: arena 0 */
    int rc = pthread_create(&t, NULL, pr_fill_and_free, (void *)(intptr_t)n);
    if (rc == 0)
        pthread_join(t, NULL);
    return rc;
}

/* Slabs (16 KiB blocks, one a slab) cannot come from another arena's
 * pages, so arena 0 grows into clean ones; the young dirty pages of arena
 * 1 stay, the ones 2 s old go. */
static int test_pressure_purge(void) {
    static void *mine[2 * 512];
    long long t0 = now_ms();
    CHECK_EQ(pr_other_arena(PR_N, EBB_TEST_SLAB), 0);
    ebb_stats_t s;
    ebb_stats_get(&s);
    size_t before = s.dirty;
    CHECK(before >= (size_t)20 << 20);
    pr_grow(mine, 512, EBB_TEST_SLAB); /* 8 MiB */
    ebb_stats_get(&s);
    size_t young = s.dirty;
    long long young_ms = now_ms() - t0;
    /* decay_ms 20000: pages younger than 2 s stay (unless this machine
     * took that long to get here) */
    if (young_ms < 1500)
        CHECK(young + (1 << 20) >= before);
    usleep(2200 * 1000);
    pr_grow(mine + 512, 512, EBB_TEST_SLAB);
    ebb_stats_get(&s);
    fprintf(stderr, "  pressure: dirty %zu KiB, %zu KiB after %lld ms, %zu KiB after 2.2 s more\n",
            before >> 10, young >> 10, young_ms, s.dirty >> 10);
    CHECK(s.dirty <= (5 << 20));
    for (int i = 0; i < 2 * 512; i++)
        ebb_free(mine[i]);
    CHECK_EQ(ebb_check(), 0);
    return 0;
}

/* Large runs may take another arena's dirty pages (page.c,
 * borrow_dirty): 8 MiB of them come out of arena 1's 30 MiB of freed runs,
 * with no new chunk mapped, and go back there when freed. */
#define BR_BLOCK (300 * 1024) /* a large run, above the run cache's 256 KiB */
static int test_borrow_large(void) {
    static void *mine[28];
    CHECK_EQ(pr_other_arena(100, BR_BLOCK), 0);
    ebb_stats_t s0, s1, s2;
    ebb_stats_get(&s0);
    CHECK(s0.dirty >= (size_t)100 * BR_BLOCK - (1 << 20));
    pr_grow(mine, 28, BR_BLOCK);
    ebb_stats_get(&s1);
    fprintf(stderr, "  borrow: dirty %zu -> %zu KiB, mapped %zu -> %zu KiB\n",
            s0.dirty >> 10, s1.dirty >> 10, s0.mapped >> 10, s1.mapped >> 10);
    CHECK(s0.dirty - s1.dirty >= (size_t)28 * BR_BLOCK);
    CHECK_EQ(s1.mapped, s0.mapped);
    for (int i = 0; i < 28; i++)
        ebb_free(mine[i]);
    ebb_stats_get(&s2);
    CHECK(s2.dirty >= s0.dirty);
    CHECK_EQ(ebb_check(), 0);
    return 0;
}

int main(int argc, char **argv) {
    mode = argc > 1 ? argv[1] : "bg";
    if (strcmp(mode, "pressure") == 0) {
        setenv("EBBMALLOC_CONF", "decay_ms:20000,arenas:2", 1);
        RUN_TEST(test_pressure_purge);
    } else if (strcmp(mode, "borrow") == 0) {
        setenv("EBBMALLOC_CONF", "decay_ms:20000,arenas:2", 1);
        RUN_TEST(test_borrow_large);
    } else {
        if (strcmp(mode, "maintain") == 0)
            setenv("EBBMALLOC_CONF", "decay_ms:500,background_thread:false", 1);
        else
            setenv("EBBMALLOC_CONF", "decay_ms:500,tcache_bytes:65536", 1);
        RUN_TEST(test_idle_return);
    }
    char name[64];
    snprintf(name, sizeof(name), "ebbmalloc purge (%s)", mode);
    return TEST_REPORT(name);
}
