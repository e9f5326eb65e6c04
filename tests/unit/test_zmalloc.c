/* test_zmalloc.c: the allocator shim (src/zmalloc.c) for whichever
 * allocator this build chose: used_memory comes back to where it started
 * after any mix of alloc/realloc/free, usable sizes cover the request, the
 * try-variants fail softly, the OOM handler sees failures, and the
 * allocator's own stats and the RSS reader give sensible figures. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test_help.h"
#include "zmalloc.h"

/* Under AddressSanitizer (SANITIZER=address forces libc) the sanitizer's
 * allocator serves malloc: mallinfo2 does not see it and a huge request
 * aborts unless ASAN_OPTIONS=allocator_may_return_null=1, so those checks
 * are left out of such builds. */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

/* A request no allocator can satisfy (but small enough not to be rejected
 * before reaching it as an overflow of the size type). */
#define HUGE_REQUEST ((size_t)1 << 50)

static int test_used_memory_returns_to_start(void) {
    size_t start = zmalloc_used_memory();
    enum { N = 500 };
    void *p[N];
    size_t sum = 0;
    for (int i = 0; i < N; i++) {
        size_t sz = (size_t)1 << (i % 21); /* 1 B .. 1 MB */
        sz += (size_t)(i * 7) % 13;
        p[i] = zmalloc(sz);
        CHECK(p[i] != NULL);
        CHECK(zmalloc_size(p[i]) >= sz);
        memset(p[i], 0xab, sz);
        sum += zmalloc_size(p[i]);
    }
    CHECK_EQ_INT(zmalloc_used_memory() - start, sum);
    for (int i = 0; i < N; i += 2) { /* grow and shrink half of them */
        size_t sz = (i % 3 == 0) ? 3 * ((size_t)1 << (i % 21)) + 5 : 7;
        p[i] = zrealloc(p[i], sz);
        CHECK(zmalloc_size(p[i]) >= sz);
    }
    for (int i = 0; i < N; i++) zfree(p[i]);
    CHECK_EQ_INT(zmalloc_used_memory(), start);
    return 0;
}

static int test_exact_accounting_per_call(void) {
    size_t start = zmalloc_used_memory();
    char *s = zstrdup("hello");
    CHECK(strcmp(s, "hello") == 0);
    CHECK_EQ_INT(zmalloc_used_memory() - start, zmalloc_size(s));
    unsigned char *z = zcalloc(1000);
    for (int i = 0; i < 1000; i++) CHECK(z[i] == 0);
    CHECK_EQ_INT(zmalloc_used_memory() - start, zmalloc_size(s) + zmalloc_size(z));
    void *d = zmemdup("abc", 3);
    CHECK(memcmp(d, "abc", 3) == 0);
    zfree(s);
    zfree(z);
    zfree(d);
    zfree(NULL);
    CHECK_EQ_INT(zmalloc_used_memory(), start);
    void *r = zrealloc(NULL, 100); /* realloc of NULL allocates */
    CHECK(r && zmalloc_size(r) >= 100);
    CHECK(zrealloc(r, 0) == NULL); /* realloc to 0 frees */
    CHECK_EQ_INT(zmalloc_used_memory(), start);
    void *m0 = zmalloc(0); /* a real, freeable block */
    CHECK(m0 != NULL);
    zfree(m0);
    CHECK_EQ_INT(zmalloc_used_memory(), start);
    return 0;
}

static int test_realloc_keeps_content(void) {
    unsigned char *p = zmalloc(10);
    for (int i = 0; i < 10; i++) p[i] = (unsigned char)i;
    p = zrealloc(p, 100000);
    for (int i = 0; i < 10; i++) CHECK(p[i] == i);
    p = zrealloc(p, 5);
    for (int i = 0; i < 5; i++) CHECK(p[i] == i);
    zfree(p);
    return 0;
}

static int test_try_variants_fail_softly(void) {
    if (UNDER_ASAN) return 0;
    size_t start = zmalloc_used_memory();
    CHECK(ztrymalloc(HUGE_REQUEST) == NULL);
    CHECK_EQ_INT(zmalloc_used_memory(), start);
    char *p = zmalloc(16);
    memcpy(p, "still here", 11);
    size_t with_p = zmalloc_used_memory();
    CHECK(ztryrealloc(p, HUGE_REQUEST) == NULL);
    CHECK(strcmp(p, "still here") == 0); /* the old block is untouched */
    CHECK_EQ_INT(zmalloc_used_memory(), with_p);
    zfree(p);
    CHECK_EQ_INT(zmalloc_used_memory(), start);
    return 0;
}

static size_t oom_seen;
static void record_oom(size_t size) { oom_seen = size; }

static int test_oom_handler_is_called(void) {
    if (UNDER_ASAN) return 0;
    zmalloc_set_oom_handler(record_oom);
    void *p = zmalloc(HUGE_REQUEST);
    zmalloc_set_oom_handler(NULL); /* back to the aborting default */
    CHECK(p == NULL);
    CHECK_EQ_INT(oom_seen, HUGE_REQUEST);
    return 0;
}

#define THREADS 4
#define PER_THREAD 20000

static void *churn(void *arg) {
    unsigned seed = (unsigned)(uintptr_t)arg;
    void *keep[64] = {0};
    for (int i = 0; i < PER_THREAD; i++) {
        seed = seed * 1103515245u + 12345u;
        int slot = (int)(seed >> 16) % 64;
        zfree(keep[slot]);
        keep[slot] = zmalloc(1 + (seed >> 8) % 4000);
    }
    for (int i = 0; i < 64; i++) zfree(keep[i]);
    return NULL;
}

static int test_counter_is_thread_safe(void) {
    size_t start = zmalloc_used_memory();
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) CHECK(pthread_create(&t[i], NULL, churn, (void *)(uintptr_t)(i + 1)) == 0);
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    CHECK_EQ_INT(zmalloc_used_memory(), start);
    return 0;
}

static int test_allocator_stats(void) {
    const char *lib = zmalloc_lib();
    CHECK(lib && *lib);
    CHECK(strncmp(lib, RL_MALLOC_NAME, strlen(RL_MALLOC_NAME)) == 0);
    size_t big = 16 * 1024 * 1024;
    void *p = zmalloc(big);
    memset(p, 1, big);
    zmalloc_stats_t st;
    zmalloc_get_allocator_stats(&st);
    if (UNDER_ASAN) {
        zfree(p);
        return 0;
    }
    CHECK(st.allocated >= big);
    if (!strcmp(RL_MALLOC_NAME, "libc")) {
        CHECK_EQ_INT(st.active, 0); /* glibc cannot tell: 0, not a guess */
        CHECK_EQ_INT(st.resident, 0);
    } else {
        CHECK(st.active >= st.allocated);
        CHECK(st.resident >= st.active);
        CHECK(st.mapped >= st.resident || !strncmp(lib, "tcmalloc", 8));
    }
    zfree(p);
    zmalloc_stats_t after;
    zmalloc_get_allocator_stats(&after);
    CHECK(after.allocated + big / 2 <= st.allocated); /* the stats see the free */
    CHECK_EQ_INT(zmalloc_purge(), 0);
    return 0;
}

static void collect(void *arg, const char *text) {
    size_t *n = arg;
    *n += strlen(text);
}

static int test_malloc_stats_report(void) {
    size_t n = 0;
    zmalloc_malloc_stats(collect, &n);
    CHECK(n > 100);
    return 0;
}

static int test_rss_and_system_memory(void) {
    size_t rss = zmalloc_get_rss();
    CHECK(rss > 0);
    size_t big = 32 * 1024 * 1024;
    char *p = zmalloc(big);
    memset(p, 7, big); /* touch every page */
    size_t rss2 = zmalloc_get_rss();
    CHECK(rss2 >= rss + big / 2);
    CHECK(zmalloc_total_system_memory() > rss2);
    zfree(p);
    return 0;
}

/* zcalloc of a big block: zero, counted, and not faulted in by us (the
 * allocator's calloc takes fresh zero pages from the OS): a hash table's
 * doubling must not touch 128 MB inside one command. */
static int test_big_zcalloc_is_lazy(void) {
    size_t big = 256 * 1024 * 1024;
    size_t used = zmalloc_used_memory(), rss = zmalloc_get_rss();
    unsigned char *p = zcalloc(big);
    CHECK(zmalloc_used_memory() >= used + big);
    size_t rss2 = zmalloc_get_rss();
    CHECK(rss2 < rss + big / 4);
    for (size_t i = 0; i < big; i += 4096 * 97) CHECK(p[i] == 0);
    CHECK(p[big - 1] == 0);
    zfree(p);
    CHECK(zmalloc_used_memory() == used);
    /* Small blocks are zeroed too (from reused memory). */
    unsigned char *q = zmalloc(256);
    memset(q, 0xab, 256);
    zfree(q);
    q = zcalloc(256);
    for (int i = 0; i < 256; i++) CHECK(q[i] == 0);
    zfree(q);
    return 0;
}

int main(void) {
    RUN_TEST(test_used_memory_returns_to_start);
    RUN_TEST(test_exact_accounting_per_call);
    RUN_TEST(test_realloc_keeps_content);
    RUN_TEST(test_try_variants_fail_softly);
    RUN_TEST(test_oom_handler_is_called);
    RUN_TEST(test_counter_is_thread_safe);
    RUN_TEST(test_allocator_stats);
    RUN_TEST(test_malloc_stats_report);
    RUN_TEST(test_rss_and_system_memory);
    RUN_TEST(test_big_zcalloc_is_lazy);
    return TEST_REPORT("zmalloc");
}
