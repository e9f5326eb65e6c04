/* test_alloc_classes.c: the allocator models of lib/alloc_classes.c against
 * the allocator this build links with, and the live size histogram
 * (lib/sizehist.c) against zmalloc's own count.
 *
 * On every build: spot values every model must give (from the allocators'
 * documented classes), and the histogram's totals.  On a build linked with
 * an allocator, its model must give that allocator's own usable size for
 * every request up to 64 KiB and for a sweep up to 4 MiB (nallocx for
 * jemalloc and tcmalloc, malloc_usable_size for glibc, ebb_usable_size for
 * ebbmalloc), and the active bytes of a fill of many equal blocks must match
 * the allocator's own stats within 2%.  jemalloc's 8-byte quantum has no
 * library here to ask: only its spot values are checked. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_classes.h"
#include "sizehist.h"
#include "test_help.h"
#include "zmalloc.h"

#if defined(USE_JEMALLOC)
#include <jemalloc/jemalloc.h>
#define OWN_MODEL AC_JEMALLOC
static size_t own_usable(size_t n) { return nallocx(n, 0); }
#elif defined(USE_TCMALLOC)
#include <gperftools/nallocx.h>
#define OWN_MODEL AC_TCMALLOC
static size_t own_usable(size_t n) { return tc_nallocx(n, 0); }
#elif defined(USE_EBBMALLOC)
#include <ebbmalloc.h>
#define OWN_MODEL AC_EBBMALLOC
static size_t own_usable(size_t n) {
    void *p = ebb_malloc(n);
    size_t u = ebb_usable_size(p);
    ebb_free(p);
    return u;
}
#elif !defined(__SANITIZE_ADDRESS__) && !defined(RL_UNDER_SANITIZER)
#include <malloc.h>
#define OWN_MODEL AC_LIBC
static size_t own_usable(size_t n) {
    void *p = malloc(n);
    size_t u = malloc_usable_size(p);
    free(p);
    return u;
}
#endif

static int test_spot_values(void) {
    /* A 1 KB value's sds (1024 + 5 bytes of header and terminator). */
    CHECK_EQ_INT(ac_usable(AC_EBBMALLOC, 1029), 1152);
    CHECK_EQ_INT(ac_usable(AC_JEMALLOC, 1029), 1280);
    CHECK_EQ_INT(ac_usable(AC_JEMALLOC_Q8, 1029), 1280);
    CHECK_EQ_INT(ac_usable(AC_TCMALLOC, 1029), 1152);
    CHECK_EQ_INT(ac_usable(AC_LIBC, 1029), 1032);
    /* Small: where the quantum matters. */
    CHECK_EQ_INT(ac_usable(AC_JEMALLOC, 20), 32);
    CHECK_EQ_INT(ac_usable(AC_JEMALLOC_Q8, 20), 24);
    CHECK_EQ_INT(ac_usable(AC_JEMALLOC_Q8, 33), 40);
    CHECK_EQ_INT(ac_usable(AC_JEMALLOC, 65), 80);
    CHECK_EQ_INT(ac_usable(AC_JEMALLOC, 5), 8);
    CHECK_EQ_INT(ac_usable(AC_EBBMALLOC, 20), 24);
    CHECK_EQ_INT(ac_usable(AC_TCMALLOC, 20), 32);
    CHECK_EQ_INT(ac_usable(AC_LIBC, 1), 24);
    CHECK_EQ_INT(ac_usable(AC_LIBC, 25), 40);
    /* Large: jemalloc's four per power of two plus a padding page. */
    ac_block_t b;
    ac_block(AC_JEMALLOC, 17000, &b);
    CHECK_EQ_INT(b.usable, 20480);
    CHECK_EQ_INT((size_t)b.active, 20480 + 4096);
    ac_block(AC_LIBC, 200000, &b); /* past the mmap threshold */
    CHECK_EQ_INT((size_t)b.active, 200704);
    CHECK_EQ_INT(b.usable, 200704 - 16);
    ac_block(AC_TCMALLOC, 300000, &b);
    CHECK_EQ_INT(b.usable, 303104);
    CHECK(strcmp(ac_name(AC_JEMALLOC_Q8), "jemalloc-q8") == 0);
    CHECK_EQ_INT(ac_current("tcmalloc_minimal"), AC_TCMALLOC);
    CHECK_EQ_INT(ac_current("jemalloc"), AC_JEMALLOC);
    return 0;
}

static int test_bucket_bounds(void) {
    for (size_t s = 1; s < ((size_t)1 << 30); s += (s < 70000 ? 1 : s / 97)) {
        unsigned b = sizehist_bucket(s);
        CHECK(b < SH_NBUCKETS);
        CHECK(s <= sizehist_bucket_upper(b));
        if (b > 0) CHECK(s > sizehist_bucket_upper(b - 1));
    }
    CHECK_EQ_INT(sizehist_bucket(4096), SH_EXACT - 1);
    CHECK_EQ_INT(sizehist_bucket(4097), SH_EXACT);
    CHECK_EQ_INT(sizehist_bucket_upper(SH_EXACT), 4096 + 256);
    return 0;
}

/* The live table, summed, is used_memory (both follow usable sizes). */
static int test_histogram_matches_used_memory(void) {
    static sizehist_t h;
    enum { N = 3000 };
    static void *p[N];
    for (int i = 0; i < N; i++) p[i] = zmalloc((size_t)(i * 37) % 70000 + 1);
    for (int i = 0; i < N; i += 3) p[i] = zrealloc(p[i], (size_t)(i * 11) % 9000 + 1);
    sizehist_read(&h);
    uint64_t sum = 0;
    for (unsigned b = 0; b < SH_NBUCKETS; b++) sum += h.live_bytes[b];
    /* Exact buckets count each block at its bucket's upper bound, which is
     * the usable size wherever classes are 8 bytes apart; on other builds it
     * can only over-count, by less than 8 bytes a block. */
    size_t used = zmalloc_used_memory();
    CHECK(sum >= used);
    uint64_t live = 0;
    for (unsigned b = 0; b < SH_NBUCKETS; b++) live += h.live_count[b];
    CHECK(sum - used < live * 8);
    for (int i = 0; i < N; i++) zfree(p[i]);
    static sizehist_t h2;
    sizehist_read(&h2);
    uint64_t live2 = 0;
    for (unsigned b = 0; b < SH_NBUCKETS; b++) live2 += h2.live_count[b];
    CHECK_EQ_INT(live - live2, N);
    return 0;
}

/* A block freed soon after it was allocated is recognised: its request no
 * longer counts.  A long-lived one keeps counting until its free. */
static int test_short_lived_requests_forgotten(void) {
    static sizehist_t h0, h1;
    unsigned b = sizehist_bucket(2001);
    sizehist_read(&h0);
    for (int i = 0; i < 1000; i++) zfree(zmalloc(2001));
    void *keep = zmalloc(2001);
    sizehist_read(&h1);
    CHECK_EQ_INT(h1.req_count[b] - h0.req_count[b], 1);
    zfree(keep);
    sizehist_read(&h1);
    CHECK_EQ_INT(h1.req_count[b], h0.req_count[b]);
    return 0;
}

#ifdef OWN_MODEL
static int test_own_usable_sizes(void) {
    for (size_t n = 1; n <= 65536; n++) {
        size_t want = own_usable(n), got = ac_usable(OWN_MODEL, n);
        if (want != got) fprintf(stderr, "  %s: request %zu: model %zu, allocator %zu\n", ac_name(OWN_MODEL), n, got, want);
        CHECK_EQ_INT(got, want);
    }
    for (size_t n = 65536; n <= ((size_t)4 << 20); n += 4093) CHECK_EQ_INT(ac_usable(OWN_MODEL, n), own_usable(n));
    return 0;
}

/* Many equal blocks: the allocator's active bytes (glibc: allocated) grow
 * by the model's active bytes per block. */
static size_t own_active(void) {
    zmalloc_stats_t st;
    zmalloc_get_allocator_stats(&st);
    return OWN_MODEL == AC_LIBC ? st.allocated : st.active;
}

static int test_own_active_bytes(void) {
    static const size_t sizes[] = {20, 48, 100, 200, 1029, 3000, 9000, 40000, 300000};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        size_t n = sizes[i], count = ((size_t)48 << 20) / n;
        ac_block_t b;
        ac_block(OWN_MODEL, n, &b);
        void **p = malloc(count * sizeof(void *));
        /* Start from flushed caches: a purge tick during the loop would
         * otherwise flush blocks cached by earlier tests, empty their
         * slabs and take them out of "active" while this class grows. */
        zmalloc_purge();
        size_t before = own_active();
        for (size_t j = 0; j < count; j++) p[j] = zmalloc(n);
        size_t grew = own_active() - before;
        double want = b.active * (double)count, err = ((double)grew - want) / want;
        if (err > 0.02 || err < -0.02)
            fprintf(stderr, "  %s: %zu x %zu bytes: active grew %zu, model %.0f (%+.2f%%)\n", ac_name(OWN_MODEL), count, n, grew, want, err * 100);
        CHECK(err <= 0.02 && err >= -0.02);
        for (size_t j = 0; j < count; j++) zfree(p[j]);
        free(p);
        zmalloc_purge();
    }
    return 0;
}
#endif

int main(void) {
#if defined(OWN_MODEL) && !defined(USE_JEMALLOC) && !defined(USE_TCMALLOC) && !defined(USE_EBBMALLOC)
    mallopt(M_MMAP_THRESHOLD, (int)AC_LIBC_MMAP_THRESHOLD); /* pin glibc's moving threshold */
#endif
    /* First, on a heap with no free chunks yet: glibc hands a request a
     * free chunk up to 31 bytes larger than its own when it finds one. */
#ifdef OWN_MODEL
    RUN_TEST(test_own_usable_sizes);
#endif
    RUN_TEST(test_spot_values);
    RUN_TEST(test_bucket_bounds);
    RUN_TEST(test_histogram_matches_used_memory); /* shared counters */
    RUN_TEST(test_short_lived_requests_forgotten);
    sizehist_own_thread(); /* the owner's, from now on */
    RUN_TEST(test_histogram_matches_used_memory);
    RUN_TEST(test_short_lived_requests_forgotten);
#ifdef OWN_MODEL
    RUN_TEST(test_own_active_bytes);
#endif
    return TEST_REPORT("alloc_classes");
}
