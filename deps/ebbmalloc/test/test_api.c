/* test_api.c: unit tests of the ebb_* API, single-threaded, linked against
 * libebbmalloc.a (plus a private copy of src/size_class.c to check the
 * class tables directly).  Covers: size class mapping and waste bounds,
 * alignment of every API, realloc growth/shrink/in place, usable size,
 * zero sizes, overflow, huge blocks and their cache, stats consistency, purge, the defrag
 * hint, thread-exit flush, the stats report with its lock counters, the
 * lock-free transfer stacks (blocks freed on another thread), the thread
 * caches' lists, growth and refill sizes, and the empty slabs kept per
 * class. */
#include <stdbool.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "../src/internal.h"
#include "test_help.h"

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

static int test_class_table(void) {
    _ebb_size_class_init();
    CHECK_EQ(_ebb_class_size[0], 8);
    CHECK_EQ(_ebb_class_size[15], 128);
    CHECK_EQ(_ebb_class_size[EBB_NCLASSES - 1], EBB_SMALL_MAX);
    for (unsigned c = 1; c < EBB_NCLASSES; c++)
        CHECK(_ebb_class_size[c] > _ebb_class_size[c - 1]);
    for (unsigned c = 0; c < 16; c++)
        CHECK_EQ(_ebb_class_size[c], 8 * (c + 1));
    /* every request maps to the smallest class that holds it */
    for (size_t s = 0; s <= EBB_SMALL_MAX; s++) {
        unsigned c = _ebb_size_class_of(s);
        CHECK(c < EBB_NCLASSES);
        CHECK(_ebb_class_size[c] >= s);
        CHECK(c == 0 || _ebb_class_size[c - 1] < s);
        if (s <= EBB_LUT_MAX)
            CHECK_EQ(_ebb_class_lut[(s + 7) >> 3], c);
    }
    /* slab tail waste <= 1/16 of the slab always, and <= 1/128 whenever
     * some slab of 1..15 pages allows it */
    for (unsigned c = 0; c < EBB_NCLASSES; c++) {
        size_t size = _ebb_class_size[c], bytes = _ebb_class_pages[c] * EBB_PAGE;
        CHECK(bytes >= size);
        CHECK((bytes % size) * 16 <= bytes);
        bool possible = false;
        for (size_t n = 1; n < 16; n++)
            if (n * EBB_PAGE >= size && ((n * EBB_PAGE) % size) * 128 <= n * EBB_PAGE) possible = true;
        if (possible) CHECK((bytes % size) * 128 <= bytes);
    }
    /* a 1 KB value's string (1,030 bytes) gets a 1,152-byte block, and that
     * class packs exactly: 32 blocks in 9 pages */
    unsigned kb = _ebb_size_class_of(1030);
    CHECK_EQ(_ebb_class_size[kb], 1152);
    CHECK_EQ((_ebb_class_pages[kb] * EBB_PAGE) % 1152, 0);
    return 0;
}

/* Waste bound seen through the API: <= 7 bytes up to 128, < 12.5% for the
 * other small classes (up to 16 KB), < 25% for page-granular large blocks. */
static int test_waste_bound(void) {
    for (size_t s = 1; s <= 3 * 1024 * 1024; s += (s < 20000 ? 1 : 4093)) {
        char *p = ebb_malloc(s);
        CHECK(p != NULL);
        size_t u = ebb_usable_size(p);
        CHECK(u >= s);
        if (s <= 128)
            CHECK(u - s <= 7);
        else if (s <= 16384)
            CHECK((u - s) * 8 < s);
        else
            CHECK((u - s) * 4 < s);
        p[0] = 1;
        p[s - 1] = 2;
        ebb_free(p);
    }
    return 0;
}

static int test_malloc_alignment(void) {
    void *keep[4000];
    int n = 0;
    for (size_t s = 1; s <= 70000 && n < 4000; s += (s < 512 ? 1 : 97)) {
        char *p = ebb_malloc(s);
        CHECK(p != NULL);
        CHECK(((uintptr_t)p & 7) == 0);
        if (s % 16 == 0 || s > 128)
            CHECK(((uintptr_t)p & 15) == 0);
        memset(p, 0xab, s);
        keep[n++] = p;
    }
    for (int i = 0; i < n; i++)
        ebb_free(keep[i]);
    return 0;
}

static int test_aligned_apis(void) {
    size_t sizes[] = {1, 24, 100, 4000, 5000, 20000, 300000, 3 << 20};
    for (size_t a = 8; a <= ((size_t)8 << 20); a *= 2) {
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
            size_t s = sizes[i];
            void *p = NULL;
            CHECK_EQ(ebb_posix_memalign(&p, a, s), 0);
            CHECK(p != NULL && ((uintptr_t)p & (a - 1)) == 0);
            CHECK(ebb_usable_size(p) >= s);
            memset(p, 0x5a, s);
            char *q = ebb_aligned_alloc(a, s);
            CHECK(q != NULL && ((uintptr_t)q & (a - 1)) == 0);
            CHECK(ebb_usable_size(q) >= s);
            memset(q, 0x33, s);
            CHECK(((unsigned char *)p)[s - 1] == 0x5a);
            ebb_free(p);
            ebb_free(q);
        }
    }
    void *p = (void *)1;
    CHECK_EQ(ebb_posix_memalign(&p, 24, 10), EINVAL);
    CHECK_EQ(ebb_posix_memalign(&p, 4, 10), EINVAL);
    CHECK(p == (void *)1);
    errno = 0;
    CHECK(ebb_aligned_alloc(48, 10) == NULL);
    CHECK_EQ(errno, EINVAL);
    return 0;
}

static int test_realloc(void) {
    /* same class: in place */
    char *p = ebb_malloc(20);
    memcpy(p, "0123456789abcdefghi", 20);
    CHECK(ebb_realloc(p, 24) == p);
    /* grow through classes, large and huge, content kept */
    size_t sizes[] = {100, 1000, 16384, 20000, 100000, 2 << 20, 5 << 20,
                      9 << 20, 3 << 20, 50000, 300, 17};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        p = ebb_realloc(p, sizes[i]);
        CHECK(p != NULL);
        CHECK(ebb_usable_size(p) >= sizes[i]);
        CHECK(memcmp(p, "0123456789abcdef", 16) == 0);
    }
    ebb_free(p);
    /* large: shrink in place, grow in place into a freed neighbour */
    ebb_purge();
    char *a = ebb_malloc(64 * 1024), *b = ebb_malloc(64 * 1024);
    CHECK(a && b);
    memset(a, 7, 64 * 1024);
    CHECK(ebb_realloc(a, 40 * 1024) == a);
    CHECK(ebb_usable_size(a) == 40 * 1024);
    ebb_free(b); /* into the run cache (runcache.c) ... */
    ebb_purge(); /* ... and from there back to the page layer */
    char *a2 = ebb_realloc(a, 120 * 1024);
    CHECK(a2 == a);
    CHECK(ebb_usable_size(a2) >= 120 * 1024);
    CHECK(a2[40 * 1024 - 1] == 7);
    CHECK_EQ(ebb_check(), 0);
    ebb_free(a2);
    /* huge: shrink in place */
    char *h = ebb_malloc(16 << 20);
    h[0] = 9;
    CHECK(ebb_realloc(h, 8 << 20) == h);
    CHECK(ebb_usable_size(h) >= (8 << 20) && ebb_usable_size(h) < (9 << 20));
    CHECK(h[0] == 9);
    ebb_free(h);
    return 0;
}

static int test_zero_and_edges(void) {
    void *a = ebb_malloc(0), *b = ebb_malloc(0);
    CHECK(a != NULL && b != NULL && a != b);
    CHECK(ebb_usable_size(a) >= 1);
    ebb_free(a);
    ebb_free(b);
    ebb_free(NULL);
    CHECK_EQ(ebb_usable_size(NULL), 0);
    void *c = ebb_calloc(0, 10);
    CHECK(c != NULL);
    ebb_free(c);
    void *r = ebb_realloc(NULL, 0);
    CHECK(r != NULL);
    CHECK(ebb_realloc(r, 0) == NULL);
    r = ebb_realloc(NULL, 50);
    CHECK(r != NULL && ebb_usable_size(r) >= 50);
    ebb_free(r);
    return 0;
}

static int test_overflow(void) {
    errno = 0;
    CHECK(ebb_calloc(SIZE_MAX / 2, 3) == NULL);
    CHECK_EQ(errno, ENOMEM);
    errno = 0;
    CHECK(ebb_calloc((size_t)1 << 33, (size_t)1 << 33) == NULL);
    CHECK_EQ(errno, ENOMEM);
    errno = 0;
    CHECK(ebb_malloc(SIZE_MAX) == NULL);
    CHECK_EQ(errno, ENOMEM);
    errno = 0;
    CHECK(ebb_malloc((size_t)PTRDIFF_MAX + 1) == NULL);
    CHECK_EQ(errno, ENOMEM);
    char *p = ebb_malloc(10);
    errno = 0;
    CHECK(ebb_realloc(p, SIZE_MAX - 100) == NULL);
    CHECK_EQ(errno, ENOMEM);
    ebb_free(p); /* still valid after a failed realloc */
    void *q = NULL;
    CHECK_EQ(ebb_posix_memalign(&q, 64, SIZE_MAX - 10), ENOMEM);
    return 0;
}

static int test_huge_and_calloc(void) {
    ebb_stats_t s0, s1, s2;
    ebb_purge(); /* no cached huge mapping from the tests before */
    ebb_stats_get(&s0);
    size_t n = (size_t)64 << 20;
    unsigned char *p = ebb_calloc(1, n);
    CHECK(p != NULL);
    CHECK(p[0] == 0 && p[n / 2] == 0 && p[n - 1] == 0);
    p[n - 1] = 1;
    ebb_stats_get(&s1);
    CHECK(s1.mapped >= s0.mapped + n);
    CHECK(s1.allocated >= s0.allocated + n);
    ebb_free(p);
    ebb_stats_get(&s2);
    CHECK_EQ(s2.mapped, s0.mapped);
    CHECK_EQ(s2.allocated, s0.allocated);
    /* calloc of reused small/large blocks is zeroed too */
    for (int round = 0; round < 2; round++) {
        unsigned char *q = ebb_calloc(100, 300);
        unsigned char *r = ebb_calloc(7, 9);
        for (size_t i = 0; i < 30000; i++)
            CHECK(q[i] == 0);
        for (size_t i = 0; i < 63; i++)
            CHECK(r[i] == 0);
        memset(q, 0xff, 30000);
        memset(r, 0xff, 63);
        ebb_free(q);
        ebb_free(r);
    }
    return 0;
}

static int check_invariants(const ebb_stats_t *s) {
    CHECK(s->allocated <= s->active);
    CHECK(s->active <= s->resident);
    CHECK(s->resident <= s->mapped);
    CHECK_EQ(s->resident + s->retained, s->mapped);
    return 0;
}

static int test_stats_consistency(void) {
    ebb_stats_t base, mid, end;
    ebb_purge();
    ebb_stats_get(&base);
    CHECK(check_invariants(&base) == 0);
    enum { N = 3000 };
    static void *blocks[N];
    size_t held = 0;
    for (int i = 0; i < N; i++) {
        size_t s = (i % 10 == 0) ? 20000 + (size_t)i * 37
                   : (i == 77)   ? (size_t)5 << 20
                                 : 1 + (size_t)(i * 131) % 3000;
        blocks[i] = ebb_malloc(s);
        CHECK(blocks[i] != NULL);
        held += ebb_usable_size(blocks[i]);
    }
    ebb_stats_get(&mid);
    CHECK(check_invariants(&mid) == 0);
    CHECK_EQ(mid.allocated - base.allocated, held);
    CHECK_EQ(ebb_check(), 0);
    for (int i = 0; i < N; i += 2) {
        held -= ebb_usable_size(blocks[i]);
        ebb_free(blocks[i]);
    }
    ebb_stats_get(&mid);
    CHECK_EQ(mid.allocated - base.allocated, held);
    for (int i = 1; i < N; i += 2)
        ebb_free(blocks[i]);
    ebb_purge();
    ebb_stats_get(&end);
    CHECK(check_invariants(&end) == 0);
    CHECK_EQ(end.allocated, base.allocated);
    CHECK_EQ(end.tcache, 0);
    CHECK_EQ(end.dirty, 0);
    CHECK_EQ(ebb_check(), 0);
    return 0;
}

/* After freeing 64 MiB of small blocks and ebb_purge(), resident memory is
 * within 4 MiB of what is live, by our stats and by the kernel's RSS. */
static int test_purge_returns_memory(void) {
    enum { N = 64 * 1024 };
    static void *v[N];
    size_t rss0 = rss_bytes();
    for (int i = 0; i < N; i++) {
        v[i] = ebb_malloc(1000);
        memset(v[i], 1, 1000);
    }
    CHECK(rss_bytes() > rss0 + (50 << 20));
    for (int i = 0; i < N; i++)
        ebb_free(v[i]);
    ebb_purge();
    ebb_stats_t s;
    ebb_stats_get(&s);
    CHECK(s.resident - s.metadata < s.allocated + (4 << 20));
#ifndef __SANITIZE_ADDRESS__
    /* under ASan the kernel's count includes the shadow of the 64 MiB
     * written above (8 MiB), which ASan keeps */
    CHECK(rss_bytes() < rss0 + (4 << 20));
#endif
    return 0;
}

static int test_defrag_hint(void) {
    enum { N = 12288 / 64 * 8 }; /* 8 slabs of 64-byte blocks (3 pages) */
    static void *v[N];
    CHECK_EQ(_ebb_class_pages[ebb_class_of(64)], 3);
    ebb_purge();
    for (int i = 0; i < N; i++)
        v[i] = ebb_defrag_alloc(64);
    /* empty the slab holding v[0] but one block; others stay full */
    void *lone = v[0];
    ebb_span_t *slab = ebb_span_of(lone);
    for (int i = 1; i < N; i++)
        if (ebb_span_of(v[i]) == slab) {
            ebb_defrag_free(v[i]);
            v[i] = NULL;
        }
    void *full = NULL;
    for (int i = 1; i < N && !full; i++)
        if (v[i] && ebb_span_of(v[i]) != slab)
            full = v[i];
    CHECK(full != NULL);
    CHECK_EQ(ebb_defrag_hint(lone), 1);
    CHECK_EQ(ebb_defrag_hint(full), 0);
    CHECK_EQ(ebb_defrag_hint(NULL), 0);
    void *big = ebb_malloc(100000);
    CHECK_EQ(ebb_defrag_hint(big), 0);
    ebb_free(big);
    for (int i = 0; i < N; i++)
        ebb_defrag_free(v[i]);
    return 0;
}

/* Blocks freed through the thread cache still count as out of their slab
 * (for the hint and for active) until ebb_flush_thread_cache() gives them
 * back: a slab emptied that way then stops being active, and a slab left
 * with one block is then worth moving it from. */
static int test_flush_thread_cache(void) {
    enum { N = 12288 / 64 * 8 }; /* 8 slabs of 64-byte blocks (3 pages) */
    static void *v[N];
    ebb_purge();
    for (int i = 0; i < N; i++)
        v[i] = ebb_defrag_alloc(64);
    ebb_span_t *lone_slab = ebb_span_of(v[0]), *gone_slab = NULL;
    for (int i = 1; i < N && !gone_slab; i++)
        if (ebb_span_of(v[i]) != lone_slab)
            gone_slab = ebb_span_of(v[i]);
    for (int i = 1; i < N; i++)
        if (ebb_span_of(v[i]) == lone_slab || ebb_span_of(v[i]) == gone_slab) {
            ebb_free(v[i]);
            v[i] = NULL;
        }
    ebb_stats_t before, after;
    ebb_stats_get(&before);
    CHECK(before.tcache > 0);
    ebb_flush_thread_cache();
    ebb_stats_get(&after);
    CHECK_EQ(after.tcache, 0);
    CHECK(after.active + 12288 <= before.active);
    CHECK_EQ(after.allocated, before.allocated);
    CHECK_EQ(ebb_defrag_hint(v[0]), 1);
    CHECK_EQ(ebb_check(), 0);
    for (int i = 0; i < N; i++)
        ebb_defrag_free(v[i]);
    return 0;
}

/* Allocates and frees a few 48-byte blocks: fewer than a bin holds, so
 * they stay in this thread's cache until it exits. */
static void *thread_churn(void *arg) {
    (void)arg;
    void *v[20];
    for (int i = 0; i < 20; i++)
        v[i] = ebb_malloc(48);
    for (int i = 0; i < 20; i++)
        ebb_free(v[i]);
    return NULL;
}

static pthread_barrier_t hold_bar;

/* A live thread with a cache of its own, waiting until released. */
static void *thread_hold(void *arg) {
    (void)arg;
    ebb_free(ebb_malloc(48));
    pthread_barrier_wait(&hold_bar); /* registered */
    pthread_barrier_wait(&hold_bar); /* released */
    return NULL;
}

static void xfer_line(void *arg, const char *text);

static unsigned long long churn_pushes(void) {
    unsigned long long a[4] = {0}, b[4] = {0};
    ebb_stats_print(xfer_line, a);
    pthread_t t;
    if (pthread_create(&t, NULL, thread_churn, NULL) != 0 ||
        pthread_join(t, NULL) != 0)
        return ~0ull;
    ebb_stats_print(xfer_line, b);
    return a[3] == 3 && b[3] == 3 ? b[0] - a[0] : ~0ull;
}

/* A thread's cache is handed over when it exits.  In a program that has
 * never had more than two threads at once, a worker that ends beside the
 * main thread alone gives its bins to their slabs: nothing is pushed and
 * nothing stays cached.  Once three threads have run at once (the holder
 * here, besides), every exit puts its bins onto the transfer stacks as
 * batches, for the next thread to take without a lock, and once those
 * are drained (ebb_purge here, the purge tick otherwise) no byte stays
 * cached anywhere.  The first part needs this to be the first test that
 * starts a thread. */
static int test_thread_exit_flush(void) {
    ebb_stats_t s;
    ebb_purge();
    CHECK_EQ(churn_pushes(), 0);
    ebb_stats_get(&s);
    CHECK_EQ(s.tcache, 0); /* the slabs have them, without a purge */
    CHECK_EQ(ebb_check(), 0);

    CHECK_EQ(pthread_barrier_init(&hold_bar, NULL, 2), 0);
    pthread_t h;
    CHECK_EQ(pthread_create(&h, NULL, thread_hold, NULL), 0);
    pthread_barrier_wait(&hold_bar);
    ebb_purge();
    unsigned long long pushed = churn_pushes();
    CHECK(pushed > 0 && pushed != ~0ull); /* the exit pushed batches */
    ebb_stats_get(&s);
    CHECK(s.tcache >= 20 * 48); /* they wait on the stacks */
    pthread_barrier_wait(&hold_bar);
    CHECK_EQ(pthread_join(h, NULL), 0);
    pthread_barrier_destroy(&hold_bar);
    CHECK_EQ(ebb_check(), 0);
    ebb_purge();
    ebb_stats_get(&s);
    CHECK_EQ(s.tcache, 0);

    /* beside the main thread alone again, but three have run at once */
    pushed = churn_pushes();
    CHECK(pushed > 0 && pushed != ~0ull);
    ebb_purge();
    CHECK_EQ(ebb_check(), 0);
    return 0;
}

static void collect(void *arg, const char *text) {
    size_t *n = arg;
    if (strstr(text, "allocated:"))
        n[0]++;
    if (strncmp(text, "    64 ", 7) == 0)
        n[1]++;
}

static int test_stats_print(void) {
    void *p = ebb_malloc(64);
    size_t seen[2] = {0, 0};
    ebb_stats_print(collect, seen);
    CHECK_EQ(seen[0], 1);
    CHECK_EQ(seen[1], 1);
    ebb_free(p);
    return 0;
}

/* The lock report: "lock page (all arenas): A acquired, C contended" with C <= A, and
 * a large allocation (a page run) takes the page lock at least once. */
static void lock_line(void *arg, const char *text) {
    unsigned long long *v = arg;
    if (strncmp(text, "lock page (all arenas): ", 24) == 0)
        v[2] = sscanf(text, "lock page (all arenas): %llu acquired, %llu "
                            "contended",
                      &v[0], &v[1]);
}

static int test_lock_counters(void) {
    unsigned long long before[3] = {0, 0, 0}, after[3] = {0, 0, 0};
    ebb_stats_print(lock_line, before);
    void *p = ebb_malloc(400000); /* above runcache.c's sizes */
    CHECK(p != NULL);
    ebb_free(p);
    ebb_stats_print(lock_line, after);
    CHECK_EQ(before[2], 2);
    CHECK_EQ(after[2], 2);
    CHECK(after[0] >= before[0] + 2);
    CHECK(after[1] <= after[0]);
    return 0;
}

/* Reads "transfer batches (no lock): P pushed, Q popped, R refused". */
static void xfer_line(void *arg, const char *text) {
    unsigned long long *v = arg;
    if (strncmp(text, "transfer batches", 16) == 0)
        v[3] = sscanf(text, "transfer batches (no lock): %llu pushed, %llu "
                            "popped, %llu refused",
                      &v[0], &v[1], &v[2]);
}

enum { XN = 20000 };
static void *xblocks[XN];

static void *free_all_x(void *arg) {
    (void)arg;
    for (int i = 0; i < XN; i++)
        ebb_free(xblocks[i]);
    return NULL;
}

/* Blocks allocated here and freed on another thread come back here by
 * the lock-free transfer stacks: batches are pushed by the freeing thread
 * and popped by this thread's refills; the heap stays consistent. */
static int test_transfer_stack(void) {
    unsigned long long a[4] = {0}, b[4] = {0}, c[4] = {0};
    ebb_purge();
    ebb_stats_print(xfer_line, a);
    for (int i = 0; i < XN; i++) {
        xblocks[i] = ebb_malloc(48);
        CHECK(xblocks[i] != NULL);
        memset(xblocks[i], 0x5a, 48);
    }
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, free_all_x, NULL), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
    ebb_stats_print(xfer_line, b);
    CHECK_EQ(b[3], 3);
    CHECK(b[0] > a[0]); /* the freeing thread pushed */
    /* free again on this live thread so batches wait, then refill from
     * them here */
    for (int i = 0; i < XN; i++)
        xblocks[i] = ebb_malloc(48);
    for (int i = 0; i < XN; i++)
        ebb_free(xblocks[i]);
    for (int i = 0; i < XN; i++) {
        xblocks[i] = ebb_malloc(48);
        CHECK(xblocks[i] != NULL);
    }
    ebb_stats_print(xfer_line, c);
    CHECK(c[1] > b[1]); /* refills popped batches */
    CHECK_EQ(ebb_check(), 0);
    for (int i = 0; i < XN; i++)
        ebb_free(xblocks[i]);
    ebb_purge();
    ebb_stats_t s;
    ebb_stats_get(&s);
    CHECK_EQ(s.tcache, 0);
    CHECK_EQ(ebb_check(), 0);
    return 0;
}

/* Blocks that reach this thread in a batch from another thread carry
 * prefetch hints: word 1 of a block malloc returns names the block that a
 * later malloc of the class returns (HINT_AHEAD = 8 further, tcache.c;
 * which blocks the bin follows a hint of is internal and not seen here). */
#define HN 4096
static void *hblocks[HN];
static void *free_all_h(void *arg) {
    (void)arg;
    for (int i = 0; i < HN; i++)
        ebb_free(hblocks[i]);
    return NULL;
}

static int test_prefetch_hints(void) {
    static void *got[HN], *hint[HN];
    ebb_purge();
    for (int i = 0; i < HN; i++)
        hblocks[i] = ebb_malloc(96);
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, free_all_h, NULL), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
    for (int i = 0; i < HN; i++) {
        got[i] = ebb_malloc(96);
        CHECK(got[i] != NULL);
        hint[i] = ((void **)got[i])[1];
    }
    int ahead8 = 0;
    for (int i = 0; i + 8 < HN; i++)
        ahead8 += hint[i] == got[i + 8];
    /* the exiting thread's batches came over with their hints */
    CHECK(ahead8 >= HN / 2);
    for (int i = 0; i < HN; i++)
        ebb_free(got[i]);
    ebb_purge();
    CHECK_EQ(ebb_check(), 0);
    return 0;
}

/* A thread's blocks of a class sit on two lists of at most M each
 * (tcache.c): the bin's head and a spare set aside when the head fills;
 * when both are full, a free sends the spare, the M older blocks, away.
 * A new thread frees 300 blocks of 48 bytes that this one allocated and
 * reads its cached count (the report's "cached" column: the live
 * threads' lists) after each free: it grows by one up to 2M, and from the
 * next free on drops by M - 1 every M frees.  (The single list of 2M it
 * replaced sent M + 1, and a spare left out of the count shows a peak of
 * M and drops of 2M - 1.)  The lists then give back the blocks they count,
 * newest first. */
enum { LN = 300 };
static void *lblocks[LN];

/* Reads the class table row of size v[0]: "size pages slabs used cap
 * cached ..." into v[1] = cached. */
static void class_cached(void *arg, const char *text) {
    unsigned long long *v = arg, f[6];
    if (sscanf(text, "%llu %llu %llu %llu %llu %llu", &f[0], &f[1], &f[2],
               &f[3], &f[4], &f[5]) == 6 &&
        f[0] == v[0])
        v[1] = f[5];
}

static void *cache_lists(void *arg) {
    int *bad = arg;
    unsigned long long prev = 0, peak = 0, first_send = 0;
    for (int i = 0; i < LN; i++) {
        ebb_free(lblocks[i]);
        unsigned long long v[2] = {48, 0};
        ebb_stats_print(class_cached, v);
        if (v[1] != prev + 1) { /* a list was sent */
            if (first_send == 0) {
                first_send = (unsigned long long)i + 1;
                peak = prev;
            }
            if (prev + 1 - v[1] != peak / 2)
                (*bad)++;
        }
        prev = v[1];
    }
    if (first_send == 0 || peak % 2 != 0 || first_send != peak + 1)
        (*bad)++;
    for (int i = LN - 1; i >= LN - (int)prev; i--)
        if (ebb_malloc(48) != lblocks[i])
            (*bad)++;
    for (int i = LN - 1; i >= LN - (int)prev; i--)
        ebb_free(lblocks[i]);
    return NULL;
}

/* Runs fn on a new thread between two purges (so no batch waits on a
 * transfer stack when it starts) and checks what it counted as bad and
 * the heap after it. */
static int run_in_thread(void *(*fn)(void *)) {
    int bad = 0;
    ebb_purge();
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, fn, &bad), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_EQ(bad, 0);
    ebb_purge();
    CHECK_EQ(ebb_check(), 0);
    return 0;
}

static int test_cache_lists(void) {
    for (int i = 0; i < LN; i++)
        CHECK((lblocks[i] = ebb_malloc(48)) != NULL);
    return run_in_thread(cache_lists);
}

/* Cached blocks of the classes 8..256 B in all threads' caches, in bytes. */
static void small_cached(void *arg, const char *text) {
    unsigned long long *v = arg, f[6];
    if (sscanf(text, "%llu %llu %llu %llu %llu %llu", &f[0], &f[1], &f[2],
               &f[3], &f[4], &f[5]) == 6 &&
        f[0] <= 256)
        *v += f[0] * f[5];
}

static unsigned long long xfer_pushed(void) {
    unsigned long long v[4] = {0, 0, 0, 0};
    ebb_stats_print(xfer_line, v);
    return v[0];
}

/* One cycle: n blocks of size bytes allocated, then all freed. */
static int grow_cycle(size_t size, int n) {
    static void *g[6000];
    for (int i = 0; i < n; i++)
        if ((g[i] = ebb_malloc(size)) == NULL)
            return 1;
    for (int i = 0; i < n; i++)
        ebb_free(g[i]);
    return 0;
}

static void *cache_growth(void *arg) {
    int *bad = arg;
    unsigned long long v[2] = {64, 0}, pushes[8];
    ebb_stats_print(class_cached, v);
    unsigned long long base64 = v[1], base_bytes = 0, bytes = 0;
    ebb_stats_print(small_cached, &base_bytes);
    /* 1,600 blocks of 64 bytes through the cache, 8 times: the first
     * cycles overflow the two lists (batches pushed), the last ones not */
    for (int c = 0; c < 8; c++) {
        unsigned long long before = xfer_pushed();
        *bad += grow_cycle(64, 1600);
        pushes[c] = xfer_pushed() - before;
    }
    if (pushes[0] + pushes[1] + pushes[2] == 0)
        (*bad)++;
    if (pushes[5] + pushes[6] + pushes[7] != 0)
        (*bad)++;
    v[1] = 0;
    ebb_stats_print(class_cached, v);
    /* all of them back in this thread's two lists (with what its last
     * refill from the slabs brought beyond them), within 2 x 1,024 */
    if (v[1] - base64 < 1600 || v[1] - base64 > 2048)
        (*bad)++;
    /* 6,000 blocks in every class up to 256 B: growth stops at the
     * thread's budget, tcache_bytes / 2 over the starting bins (these
     * classes' bins and floors start well under tcache_bytes), so the
     * caches end far below the 16 MB cycled */
    for (size_t size = 8; size <= 256; size += size < 128 ? 8 : 16)
        for (int c = 0; c < 4; c++)
            *bad += grow_cycle(size, 6000);
    ebb_stats_print(small_cached, &bytes);
    if (bytes - base_bytes > 512 * 1024 + 256 * 1024)
        (*bad)++;
    return NULL;
}

/* A class that cycles more blocks than its lists hold grows them
 * (tcache.c, bin_grow), within the thread's budget. */
static int test_cache_growth(void) {
    return run_in_thread(cache_growth);
}

/* A thread's refills of a class it has not cycled through ask for at
 * most half of what it already holds (tcache.c, refill_want): 5 blocks of
 * 768 bytes taken one at a time leave 6 in its cache (refills of 1, 1, 1,
 * 1, 2), not the 12 of a doubling slow start (4 + 8). */
static void *refill_follows(void *arg) {
    int *bad = arg;
    enum { K = 5 };
    void *p[K];
    unsigned long long v[2] = {768, 0};
    ebb_stats_print(class_cached, v);
    unsigned long long base = v[1];
    for (int i = 0; i < K; i++)
        if ((p[i] = ebb_malloc(768)) == NULL)
            (*bad)++;
    for (int i = 0; i < K; i++)
        ebb_free(p[i]);
    v[1] = 0;
    ebb_stats_print(class_cached, v);
    if (v[1] < base + K || v[1] > base + K + K / 2 + 1)
        (*bad)++;
    return NULL;
}

/* ...but once the class has cycled (this thread freed more than its two
 * lists hold, here blocks another thread allocated, as larson's threads
 * do), a refill brings a whole list: one malloc after the cache was
 * flushed leaves many more than the 3 of a first slow-start refill. */
enum { CYCLE_N = 2048 };
static void *cycle_blocks[CYCLE_N];

static void *refill_cycled(void *arg) {
    int *bad = arg;
    unsigned long long v[2] = {48, 0};
    void *first = ebb_malloc(48); /* a slow-start refill: 4 blocks */
    ebb_stats_print(class_cached, v);
    unsigned long long slow = v[1];
    for (int i = 0; i < CYCLE_N; i++)
        ebb_free(cycle_blocks[i]);
    ebb_free(first);
    ebb_flush_thread_cache(); /* the caches and transfer stacks empty */
    v[1] = 0;
    ebb_stats_print(class_cached, v);
    unsigned long long base = v[1];
    void *p = ebb_malloc(48);
    v[1] = 0;
    ebb_stats_print(class_cached, v);
    if (p == NULL || slow > base + 3 || v[1] < base + 16)
        (*bad)++;
    ebb_free(p);
    return NULL;
}

static int test_refill_follows_held(void) {
    return run_in_thread(refill_follows);
}

static int test_cycled_refills_whole(void) {
    for (int i = 0; i < CYCLE_N; i++)
        CHECK((cycle_blocks[i] = ebb_malloc(48)) != NULL);
    return run_in_thread(refill_cycled);
}

/* A slab whose last block returns is kept for reuse (counted as dirty:
 * free but resident), and ebb_purge gives it back. */
static int test_empty_slab_kept(void) {
    enum { N = 12288 / 64 * 4 }; /* 4 slabs of 64-byte blocks */
    static void *v[N];
    ebb_stats_t s0, s1, s2;
    ebb_purge();
    ebb_stats_get(&s0);
    for (int i = 0; i < N; i++)
        v[i] = ebb_defrag_alloc(64);
    for (int i = 0; i < N; i++)
        ebb_defrag_free(v[i]);
    ebb_stats_get(&s1);
    CHECK(s1.dirty >= s0.dirty + 12288); /* kept, resident, not active */
    CHECK_EQ(s1.active, s0.active);
    CHECK_EQ(s1.allocated, s0.allocated);
    CHECK_EQ(ebb_check(), 0);
    ebb_purge();
    ebb_stats_get(&s2);
    CHECK_EQ(s2.active, s0.active);
    CHECK_EQ(s2.dirty, 0);
    return 0;
}

/* A pair that keeps retiring empty slabs and mapping new ones (a burst
 * of frees, then a burst of allocations, as a producer/consumer queue
 * does) raises its bound on kept empty slabs: after a few such rounds a
 * burst of 20 slabs' worth takes no page lock at all; ebb_purge gives
 * every kept slab back. */
static int test_empty_slab_churn(void) {
    enum { N = 12288 / 64 * 20 }; /* 20 slabs of 64-byte blocks */
    static void *v[N];
    unsigned long long z[3] = {0}, a[3] = {0}, b[3] = {0};
    ebb_stats_t s;
    ebb_purge();
    for (int round = 0; round < 8; round++) {
        if (round == 7) { /* z to a: what a report itself takes */
            ebb_stats_print(lock_line, z);
            ebb_stats_print(lock_line, a);
        }
        for (int i = 0; i < N; i++) {
            v[i] = ebb_defrag_alloc(64);
            CHECK(v[i] != NULL);
        }
        for (int i = 0; i < N; i++)
            ebb_defrag_free(v[i]);
    }
    ebb_stats_print(lock_line, b);
    CHECK_EQ(a[2], 2);
    CHECK_EQ(b[0] - a[0], a[0] - z[0]); /* no page lock in the last round */
    CHECK_EQ(ebb_check(), 0);
    ebb_purge();
    ebb_stats_get(&s);
    CHECK_EQ(s.dirty, 0);
    CHECK_EQ(ebb_check(), 0);
    return 0;
}

/* Reads "large runs cached (no lock): P pushed, Q popped, R refused, B
 * bytes waiting". */
static void runs_line(void *arg, const char *text) {
    unsigned long long *v = arg;
    if (strncmp(text, "large runs cached", 17) == 0)
        v[4] = sscanf(text, "large runs cached (no lock): %llu pushed, %llu "
                            "popped, %llu refused, %llu bytes waiting",
                      &v[0], &v[1], &v[2], &v[3]);
}

static void *free_one(void *arg) {
    ebb_free(arg);
    return NULL;
}

/* A freed large run (16 KiB .. 256 KiB) waits on its page count's stack
 * and the next malloc of that length takes it without the page lock, also
 * when another thread freed it; a malloc of another length drains the
 * cache first; it counts as cached and dirty, not
 * allocated or active; the
 * stacks are bounded (4 MiB) and ebb_purge empties them. */
static int test_run_cache(void) {
    unsigned long long z[3] = {0}, a[3] = {0}, b[3] = {0};
    unsigned long long r0[5] = {0}, r1[5] = {0}, r2[5] = {0};
    ebb_stats_t s0, s1;
    ebb_purge();
    ebb_stats_get(&s0);
    char *p = ebb_malloc(100000); /* 25 pages */
    CHECK(p != NULL);
    memset(p, 1, 100000);
    ebb_free(p);
    ebb_stats_get(&s1);
    CHECK_EQ(s1.allocated, s0.allocated);
    CHECK_EQ(s1.active, s0.active); /* free: dirty, not active */
    CHECK(s1.dirty >= s0.dirty + 25 * 4096);
    CHECK_EQ(s1.tcache, s0.tcache + 25 * 4096);
    ebb_stats_print(lock_line, z);
    ebb_stats_print(lock_line, a);
    char *q = ebb_malloc(100000);
    CHECK(q == p); /* the same run, from the stack */
    ebb_free(q);
    q = ebb_malloc(99000); /* same page count */
    CHECK(q == p);
    ebb_stats_print(lock_line, b);
    CHECK_EQ(b[0] - a[0], a[0] - z[0]); /* no page lock taken */
    /* freed on another thread, reused here */
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, free_one, q), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK(ebb_malloc(100000) == p);
    ebb_free(p);
    /* a malloc of a length no run waits for gives the others back first,
     * so the page layer serves it from their pages */
    ebb_stats_print(runs_line, r0);
    CHECK_EQ(r0[3], 25 * 4096);
    char *other = ebb_malloc(30 * 4096);
    CHECK(other != NULL);
    ebb_stats_print(runs_line, r0);
    CHECK_EQ(r0[3], 0);
    ebb_free(other);
    CHECK_EQ(ebb_check(), 0); /* drains the stacks */
    /* bound: 32 runs of 256 KiB freed, at most 4 MiB of them kept */
    enum { NR = 32 };
    static void *r[NR];
    ebb_stats_print(runs_line, r0);
    CHECK_EQ(r0[4], 4);
    for (int i = 0; i < NR; i++) {
        r[i] = ebb_malloc(256 * 1024);
        CHECK(r[i] != NULL);
    }
    for (int i = 0; i < NR; i++)
        ebb_free(r[i]);
    ebb_stats_print(runs_line, r1);
    CHECK_EQ(r1[0] - r0[0], 16); /* 16 x 256 KiB = the bound */
    CHECK_EQ(r1[2] - r0[2], NR - 16);
    CHECK_EQ(r1[3], 4 << 20);
    CHECK_EQ(ebb_check(), 0);
    ebb_purge();
    ebb_stats_print(runs_line, r2);
    CHECK_EQ(r2[3], 0);
    ebb_stats_get(&s1);
    CHECK_EQ(s1.tcache, 0);
    CHECK_EQ(s1.allocated, s0.allocated);
    return 0;
}

/* Reads "huge mappings: F freed, R reused from the cache, B bytes
 * cached". */
static void huge_line(void *arg, const char *text) {
    unsigned long long *v = arg;
    if (strncmp(text, "huge mappings", 13) == 0)
        v[3] = sscanf(text, "huge mappings: %llu freed, %llu reused from the "
                            "cache, %llu bytes cached",
                      &v[0], &v[1], &v[2]);
}

/* A freed huge block's mapping is kept and serves the next huge malloc
 * (no new mapping, pages still resident): as it is, extended for a longer
 * block, its tail unmapped for a much shorter one; calloc zeroes a reused
 * one, and ebb_purge unmaps the rest: mapped comes back to where it was. */
static int test_huge_cache(void) {
    unsigned long long h0[4] = {0}, h1[4] = {0};
    ebb_stats_t s0, s1;
    size_t n = (size_t)5 << 20;
    ebb_purge();
    ebb_stats_get(&s0);
    ebb_stats_print(huge_line, h0);
    CHECK_EQ(h0[3], 3);
    CHECK_EQ(h0[2], 0);
    char *p = ebb_malloc(n);
    CHECK(p != NULL);
    memset(p, 1, n);
    ebb_free(p);
    ebb_stats_get(&s1);
    CHECK(s1.mapped >= s0.mapped + n); /* kept */
    CHECK_EQ(s1.active, s0.active);    /* free: dirty, not active */
    CHECK_EQ(s1.allocated, s0.allocated);
    CHECK(s1.dirty >= s0.dirty + n);
    CHECK(check_invariants(&s1) == 0);
    char *q = ebb_malloc(n - 1000);
    CHECK(q == p); /* the same mapping */
    ebb_stats_get(&s1);
    CHECK(s1.allocated >= s0.allocated + n - 1000);
    CHECK(ebb_usable_size(q) >= n - 1000);
    ebb_free(q);
    /* calloc of a reused mapping (half the size still fits) is zero */
    unsigned char *z = ebb_calloc(1, (size_t)3 << 20);
    CHECK(z == (unsigned char *)p);
    for (size_t i = 0; i < ((size_t)3 << 20); i += 4096)
        CHECK(z[i] == 0 && z[i + 4095] == 0);
    ebb_free(z);
    ebb_stats_print(huge_line, h1);
    CHECK_EQ(h1[0] - h0[0], 3);
    CHECK_EQ(h1[1] - h0[1], 2);
    CHECK(h1[2] >= n);
    /* a longer block: the cached mapping is extended (or moved) and
     * serves it; the first pages of the block are those it had */
    char *big = ebb_malloc((size_t)12 << 20);
    CHECK(big != NULL);
    memset(big, 2, (size_t)12 << 20);
    ebb_stats_print(huge_line, h1);
    CHECK_EQ(h1[1] - h0[1], 3);
    CHECK_EQ(h1[2], 0);
    ebb_free(big);
    ebb_stats_print(huge_line, h1);
    CHECK(h1[2] >= ((size_t)12 << 20));
    /* a block less than half the mapping: the tail goes back to the OS */
    char *small = ebb_malloc((size_t)3 << 20);
    CHECK(small == big);
    ebb_stats_get(&s1);
    CHECK(s1.mapped < s0.mapped + ((size_t)4 << 20));
    CHECK(s1.mapped >= s0.mapped + ((size_t)3 << 20));
    CHECK(ebb_usable_size(small) >= ((size_t)3 << 20));
    memset(small, 3, (size_t)3 << 20);
    ebb_free(small);
    ebb_purge();
    ebb_stats_print(huge_line, h1);
    CHECK_EQ(h1[2], 0);
    ebb_stats_get(&s1);
    CHECK_EQ(s1.mapped, s0.mapped);
    CHECK_EQ(s1.dirty, s0.dirty);
    return 0;
}

/* Reads "remote frees (no lock): R runs pushed, W blocks waiting". */
static void remote_line(void *arg, const char *text) {
    unsigned long long *v = arg;
    if (strncmp(text, "arenas: ", 8) == 0)
        v[3] = strtoull(text + 8, NULL, 10);
    if (strncmp(text, "remote frees", 12) == 0)
        v[2] = sscanf(text, "remote frees (no lock): %llu runs pushed, %llu "
                            "blocks waiting",
                      &v[0], &v[1]);
}

enum { RN = 3000 };
static void *rblocks[RN];
static size_t rsize;

static void *alloc_remote(void *arg) {
    (void)arg;
    for (int i = 0; i < RN; i++) {
        rblocks[i] = ebb_defrag_alloc(rsize); /* straight from the slabs */
        if (rblocks[i]) memset(rblocks[i], 0x3c, rsize);
    }
    return NULL;
}

/* A thread gets an arena of its own, and blocks of its arena freed by
 * this thread (arena 0) go onto their slabs' remote lists without a lock
 * (48 bytes) or back under the owner's lock (the 8-byte class); ebb_purge
 * collects them, and nothing is lost: allocated, tcache and the heap
 * check come back to where they were. */
static int test_remote_free(void) {
    size_t sizes[2] = {48, 8};
    for (int k = 0; k < 2; k++) {
        unsigned long long a[4] = {0}, b[4] = {0}, c[4] = {0};
        ebb_stats_t s0, s1;
        rsize = sizes[k];
        ebb_purge();
        ebb_stats_get(&s0);
        ebb_stats_print(remote_line, a);
        CHECK_EQ(a[2], 2);
        pthread_t t;
        CHECK_EQ(pthread_create(&t, NULL, alloc_remote, NULL), 0);
        CHECK_EQ(pthread_join(t, NULL), 0);
        void *mine = ebb_defrag_alloc(rsize);
        CHECK(mine != NULL);
        for (int i = 0; i < RN; i++) {
            CHECK(rblocks[i] != NULL);
            if (a[3] > 1)
                CHECK(ebb_chunk_of(rblocks[i])->arena !=
                      ebb_chunk_of(mine)->arena);
        }
        for (int i = 0; i < RN; i++)
            ebb_defrag_free(rblocks[i]);
        ebb_defrag_free(mine);
        ebb_stats_print(remote_line, b);
        CHECK(a[3] >= 1);
        if (a[3] > 1 && rsize >= 16) {
            CHECK(b[0] > a[0]);                        /* runs were pushed */
            CHECK(b[1] >= (unsigned long long)RN / 2); /* and wait */
        }
        CHECK_EQ(ebb_check(), 0);
        ebb_purge();
        ebb_stats_print(remote_line, c);
        CHECK_EQ(c[1], 0); /* collected */
        ebb_stats_get(&s1);
        CHECK_EQ(s1.allocated, s0.allocated);
        CHECK_EQ(s1.tcache, 0);
        CHECK_EQ(ebb_check(), 0);
    }
    return 0;
}

/* Two threads of two arenas free each other's 8-byte blocks mixed with
 * their own, so each flush holds blocks of both arenas.  The 8-byte class
 * gives others' blocks back under their owner's lock: a flush that held
 * its own lock meanwhile deadlocked with its mirror image (rptest, 4
 * threads).  An alarm turns a hang into a failure. */
enum { SWAP_N = 4096,
       SWAP_ROUNDS = 40 };
static void *swap_blocks[2][SWAP_N];
static pthread_barrier_t swap_bar;

static void *swap_thread(void *arg) {
    int me = (int)(intptr_t)arg;
    for (int r = 0; r < SWAP_ROUNDS; r++) {
        for (int i = 0; i < SWAP_N; i++)
            swap_blocks[me][i] = ebb_malloc(8);
        pthread_barrier_wait(&swap_bar);
        /* mine at even indexes, the other's at odd ones */
        for (int i = 0; i < SWAP_N; i++)
            ebb_free(swap_blocks[(i & 1) ? 1 - me : me][i]);
        pthread_barrier_wait(&swap_bar);
    }
    return NULL;
}

static int test_cross_arena_small_frees(void) {
    pthread_t t[2];
    alarm(120);
    CHECK_EQ(pthread_barrier_init(&swap_bar, NULL, 2), 0);
    for (int i = 0; i < 2; i++)
        CHECK_EQ(pthread_create(&t[i], NULL, swap_thread, (void *)(intptr_t)i), 0);
    for (int i = 0; i < 2; i++)
        CHECK_EQ(pthread_join(t[i], NULL), 0);
    alarm(0);
    pthread_barrier_destroy(&swap_bar);
    CHECK_EQ(ebb_check(), 0);
    return 0;
}

int main(void) {
    RUN_TEST(test_class_table);
    RUN_TEST(test_waste_bound);
    RUN_TEST(test_malloc_alignment);
    RUN_TEST(test_aligned_apis);
    RUN_TEST(test_realloc);
    RUN_TEST(test_zero_and_edges);
    RUN_TEST(test_overflow);
    RUN_TEST(test_huge_and_calloc);
    RUN_TEST(test_huge_cache);
    RUN_TEST(test_stats_consistency);
    RUN_TEST(test_purge_returns_memory);
    RUN_TEST(test_defrag_hint);
    RUN_TEST(test_flush_thread_cache);
    RUN_TEST(test_thread_exit_flush);
    RUN_TEST(test_stats_print);
    RUN_TEST(test_lock_counters);
    RUN_TEST(test_transfer_stack);
    RUN_TEST(test_prefetch_hints);
    RUN_TEST(test_cache_lists);
    RUN_TEST(test_cache_growth);
    RUN_TEST(test_refill_follows_held);
    RUN_TEST(test_cycled_refills_whole);
    RUN_TEST(test_empty_slab_kept);
    RUN_TEST(test_empty_slab_churn);
    RUN_TEST(test_run_cache);
    RUN_TEST(test_remote_free);
    RUN_TEST(test_cross_arena_small_frees);
    return TEST_REPORT("ebbmalloc api");
}
