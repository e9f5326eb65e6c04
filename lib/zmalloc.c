/* zmalloc.c: allocator selection, used_memory accounting and allocator stats.
 *
 * This is the only file of the server that knows which allocator it was built
 * with (USE_LIBC_MALLOC, USE_JEMALLOC, USE_TCMALLOC[_MINIMAL], USE_EBBMALLOC,
 * set by src/Makefile).  Each allocator block below provides the same small
 * set of primitives: raw alloc/realloc/free, usable size, stats, purge and a
 * text report.  Everything above it sees one interface (zmalloc.h).
 *
 * used_memory is the sum of usable sizes of live blocks, kept in one relaxed
 * atomic counter so background threads (lazy free) may allocate and free too.
 * Every allocator here can tell a block's usable size, so no size prefix is
 * stored in front of blocks. */
#include "zmalloc.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sizehist.h"

#if defined(USE_JEMALLOC)
#include <jemalloc/jemalloc.h>
#define RAW_MALLOC(n) malloc(n)
#define RAW_CALLOC(n) calloc(1, n)
#define RAW_REALLOC(p, n) realloc(p, n)
#define RAW_FREE(p) free(p)
#define RAW_SIZE(p) malloc_usable_size((void *)(p))
/* The usable size of a fresh block follows from the request alone: nallocx
 * computes the size class without the pointer lookup malloc_usable_size
 * needs (measured: 7% of an RDB load went to that lookup). */
#define NEW_BLOCK_SIZE(p, n) nallocx((n), 0)
#define STR_(x) #x
#define STR(x) STR_(x)
#define ALLOC_LIB "jemalloc-" STR(JEMALLOC_VERSION_MAJOR) "." STR(JEMALLOC_VERSION_MINOR) "." STR(JEMALLOC_VERSION_BUGFIX)
#elif defined(USE_TCMALLOC)
#include <gperftools/malloc_extension_c.h>
#include <gperftools/tcmalloc.h>
#define RAW_MALLOC(n) tc_malloc(n)
#define RAW_CALLOC(n) tc_calloc(1, n)
#define RAW_REALLOC(p, n) tc_realloc(p, n)
#define RAW_FREE(p) tc_free(p)
#define RAW_SIZE(p) tc_malloc_size((void *)(p))
#define STR_(x) #x
#define STR(x) STR_(x)
#if defined(USE_TCMALLOC_MINIMAL)
#define ALLOC_LIB "tcmalloc_minimal-" STR(TC_VERSION_MAJOR) "." STR(TC_VERSION_MINOR)
#else
#define ALLOC_LIB "tcmalloc-" STR(TC_VERSION_MAJOR) "." STR(TC_VERSION_MINOR)
#endif
#elif defined(USE_EBBMALLOC)
#include <ebbmalloc.h>
#define RAW_MALLOC(n) ebb_malloc(n)
#define RAW_CALLOC(n) ebb_calloc(1, n)
#define RAW_REALLOC(p, n) ebb_realloc(p, n)
#define RAW_FREE(p) ebb_free(p)
#define RAW_SIZE(p) ebb_usable_size(p)
#define ALLOC_LIB "ebbmalloc-" EBBMALLOC_VERSION
#else
#include <malloc.h>
#define RAW_MALLOC(n) malloc(n)
#define RAW_CALLOC(n) calloc(1, n)
#define RAW_REALLOC(p, n) realloc(p, n)
#define RAW_FREE(p) free(p)
#define RAW_SIZE(p) malloc_usable_size((void *)(p))
#define ALLOC_LIB "libc"
#endif

#ifndef NEW_BLOCK_SIZE
#define NEW_BLOCK_SIZE(p, n) RAW_SIZE(p)
#endif

static size_t used_memory; /* bytes, updated with relaxed atomics */

static void default_oom(size_t size) {
    fprintf(stderr, "zmalloc: Out of memory trying to allocate %zu bytes\n", size);
    fflush(stderr);
    abort();
}

static void (*oom_handler)(size_t) = default_oom;

void zmalloc_set_oom_handler(void (*handler)(size_t)) { oom_handler = handler ? handler : default_oom; }

static inline void count_add(size_t n) { __atomic_fetch_add(&used_memory, n, __ATOMIC_RELAXED); }
static inline void count_sub(size_t n) { __atomic_fetch_sub(&used_memory, n, __ATOMIC_RELAXED); }

/* used_memory and the size histogram (sizehist.h) move together: a new
 * block of `usable` bytes for a request of `req`, or a freed one. */
static inline void account_alloc(const void *p, size_t req, size_t usable) {
    count_add(usable);
    sizehist_on_alloc((uintptr_t)p, req, usable);
}

static inline void account_free(uintptr_t addr, size_t usable) {
    count_sub(usable);
    sizehist_on_free(addr, usable);
}

/* A defrag move copies a block's whole usable size into a new block: the
 * live table follows the usable sizes; no new request is recorded (the
 * program asked for nothing). */
static inline void account_move(size_t old, size_t new_usable) {
    count_sub(old);
    count_add(new_usable);
    sizehist_live_sub(old);
    sizehist_live_add(new_usable);
}

void *ztrymalloc(size_t size) {
    if (size == 0) size = 1;
    void *p = RAW_MALLOC(size);
    if (p) account_alloc(p, size, NEW_BLOCK_SIZE(p, size));
    return p;
}

void *zmalloc(size_t size) {
    void *p = ztrymalloc(size);
    if (!p) oom_handler(size);
    return p;
}

/* Through the allocator's calloc: a big block (a hash table's bucket
 * array of 128 MB when a 10M-key keyspace doubles) comes as fresh zero
 * pages from the OS, touched when used, where malloc + memset faulted in
 * every page at once, inside the command that made the table grow. */
void *zcalloc(size_t size) {
    if (size == 0) size = 1;
    void *p = RAW_CALLOC(size);
    if (!p) oom_handler(size);
    account_alloc(p, size, NEW_BLOCK_SIZE(p, size));
    return p;
}

void *ztryrealloc(void *ptr, size_t size) {
    if (!ptr) return ztrymalloc(size);
    if (size == 0) {
        zfree(ptr);
        return NULL;
    }
    size_t old = RAW_SIZE(ptr);
    uintptr_t old_addr = (uintptr_t)ptr;
    void *p = RAW_REALLOC(ptr, size);
    if (!p) return NULL;
    account_free(old_addr, old);
    account_alloc(p, size, NEW_BLOCK_SIZE(p, size));
    return p;
}

void *zrealloc(void *ptr, size_t size) {
    if (ptr && size == 0) {
        zfree(ptr);
        return NULL;
    }
    void *p = ztryrealloc(ptr, size);
    if (!p) oom_handler(size);
    return p;
}

void zfree(void *ptr) {
    if (!ptr) return;
    account_free((uintptr_t)ptr, RAW_SIZE(ptr));
    RAW_FREE(ptr);
}

char *zstrdup(const char *s) { return zmemdup(s, strlen(s) + 1); }

void *zmemdup(const void *p, size_t len) {
    void *d = zmalloc(len);
    memcpy(d, p, len);
    return d;
}

size_t zmalloc_size(const void *ptr) { return RAW_SIZE(ptr); }
size_t zmalloc_used_memory(void) { return __atomic_load_n(&used_memory, __ATOMIC_RELAXED); }
const char *zmalloc_lib(void) { return ALLOC_LIB; }

/* ---------------------------------------------------------------------------
 * Allocator statistics, purge, reports.
 * ------------------------------------------------------------------------- */

#if defined(USE_JEMALLOC)
static size_t je_stat(const char *name) {
    size_t v = 0, sz = sizeof(v);
    if (mallctl(name, &v, &sz, NULL, 0) != 0) return 0;
    return v;
}

void zmalloc_get_allocator_stats(zmalloc_stats_t *st) {
    uint64_t epoch = 1;
    size_t sz = sizeof(epoch);
    memset(st, 0, sizeof(*st));
    mallctl("epoch", &epoch, &sz, &epoch, sz); /* refresh the cached stats */
    st->allocated = je_stat("stats.allocated");
    st->active = je_stat("stats.active");
    st->resident = je_stat("stats.resident");
    st->mapped = je_stat("stats.mapped");
    st->retained = je_stat("stats.retained");
    char name[64];
    snprintf(name, sizeof(name), "stats.arenas.%d.pmuzzy", MALLCTL_ARENAS_ALL);
    st->muzzy = je_stat(name) * je_stat("arenas.page"); /* pages, every arena's */
}

int zmalloc_purge(void) {
    /* "arena.<MALLCTL_ARENAS_ALL>.purge" purges every arena's dirty and
     * muzzy pages back to the OS. */
    char cmd[64];
    snprintf(cmd, sizeof(cmd), "arena.%d.purge", MALLCTL_ARENAS_ALL);
    return mallctl(cmd, NULL, NULL, NULL, 0) == 0 ? 0 : -1;
}

static void je_write_cb(void *arg, const char *text) {
    void **pair = arg;
    ((void (*)(void *, const char *))pair[0])(pair[1], text);
}

void zmalloc_malloc_stats(void (*out)(void *arg, const char *text), void *arg) {
    void *pair[2] = {(void *)out, arg};
    malloc_stats_print(je_write_cb, pair, NULL);
}

/* Active defrag with a stock jemalloc.  experimental.utilization.query
 * fills, for a pointer, the address of the slab the bin allocates from
 * next (slabcur), the free and total regions and the byte size of the
 * pointer's own slab, and the free and total regions of its whole bin.
 * Nothing here depends on jemalloc's size classes or quantum.  A block is
 * worth moving when
 *   - it lives in a slab (nregs > 1; large blocks have a run of their own),
 *   - that slab has free regions (a full slab cannot be emptied by us),
 *   - it is not the slab new blocks come from (we would move into it),
 *   - its slab is used less than 9/8 of the bin's average use:
 *       (nregs - nfree) / nregs  <  9/8 * (bin_nregs - bin_nfree) / bin_nregs.
 * The copy lands in slabcur (bypassing the thread cache), which fills up
 * and is never a source, so sparse slabs drain until jemalloc can give
 * their pages back.  The 1/8 margin keeps draining slabs that are only
 * about average once the worst are gone; without it the heap settles
 * with every slab at the average and ~20% of its pages still free. */
typedef struct je_util {
    void *slabcur;
    size_t nfree, nregs, size, bin_nfree, bin_nregs;
} je_util_t;

static size_t je_util_mib[4];
static size_t je_util_miblen;
static int je_util_state; /* 0 not looked up yet, 1 available, -1 missing */

bool zmalloc_has_defrag(void) {
    if (je_util_state == 0) {
        je_util_miblen = sizeof(je_util_mib) / sizeof(je_util_mib[0]);
        je_util_state = mallctlnametomib("experimental.utilization.query", je_util_mib, &je_util_miblen) == 0 ? 1 : -1;
    }
    return je_util_state == 1;
}

static bool je_worth_moving(const void *ptr) {
    je_util_t u;
    size_t sz = sizeof(u);
    if (!zmalloc_has_defrag()) return false;
    if (mallctlbymib(je_util_mib, je_util_miblen, &u, &sz, (void *)&ptr, sizeof(ptr)) != 0) return false;
    if (u.nregs <= 1 || u.nfree == 0 || u.bin_nregs == 0) return false;
    const char *p = ptr, *cur = u.slabcur;
    if (cur && p >= cur && p < cur + u.size) return false;
    size_t used = u.nregs - u.nfree, bin_used = u.bin_nregs - u.bin_nfree;
    return (unsigned __int128)used * u.bin_nregs * 8 < (unsigned __int128)bin_used * u.nregs * 9;
}

void *zmalloc_defrag_move(void *ptr) {
    if (!je_worth_moving(ptr)) return NULL;
    size_t size = RAW_SIZE(ptr);
    void *n = mallocx(size, MALLOCX_TCACHE_NONE);
    if (!n) return NULL;
    memcpy(n, ptr, size);
    account_move(size, RAW_SIZE(n));
    dallocx(ptr, MALLOCX_TCACHE_NONE);
    return n;
}

bool zmalloc_allocator_stats_cheap(void) { return true; }

void zmalloc_set_background_thread(bool enable) {
    bool v = enable;
    mallctl("background_thread", NULL, NULL, &v, sizeof(v));
}

void zmalloc_flush_thread_cache(void) { mallctl("thread.tcache.flush", NULL, NULL, NULL, 0); }

void zmalloc_maintain(void) {}

#elif defined(USE_TCMALLOC)
static size_t tc_prop(const char *name) {
    size_t v = 0;
    return MallocExtension_GetNumericProperty(name, &v) ? v : 0;
}

/* tcmalloc's figures mapped to jemalloc's meanings:
 *   allocated = generic.current_allocated_bytes (live blocks)
 *   mapped    = generic.heap_size (page heap, incl. unmapped pages)
 *   retained  = tcmalloc.pageheap_unmapped_bytes (released to the OS)
 *   resident  = heap_size - unmapped (everything still backed by memory)
 *   active    = resident - pageheap_free (pages in spans, incl. cached
 *               free objects in the thread/central caches) */
void zmalloc_get_allocator_stats(zmalloc_stats_t *st) {
    memset(st, 0, sizeof(*st));
    size_t heap = tc_prop("generic.heap_size");
    size_t unmapped = tc_prop("tcmalloc.pageheap_unmapped_bytes");
    size_t pfree = tc_prop("tcmalloc.pageheap_free_bytes");
    st->allocated = tc_prop("generic.current_allocated_bytes");
    st->mapped = heap;
    st->retained = unmapped;
    st->resident = heap - unmapped;
    st->active = st->resident - pfree;
    /* total_physical_bytes adds the metadata (spans, caches' structures)
     * that tcmalloc takes from the OS outside its page heap. */
    size_t physical = tc_prop("generic.total_physical_bytes");
    st->metadata = physical > st->resident ? physical - st->resident : 0;
}

int zmalloc_purge(void) {
    MallocExtension_ReleaseFreeMemory();
    return 0;
}

void zmalloc_malloc_stats(void (*out)(void *arg, const char *text), void *arg) {
    size_t cap = 64 * 1024;
    char *buf = RAW_MALLOC(cap);
    if (!buf) return;
    MallocExtension_GetStats(buf, (int)cap);
    out(arg, buf);
    RAW_FREE(buf);
}

bool zmalloc_has_defrag(void) { return false; }
void *zmalloc_defrag_move(void *ptr) {
    (void)ptr;
    return NULL;
}
bool zmalloc_allocator_stats_cheap(void) { return true; }
void zmalloc_set_background_thread(bool enable) { (void)enable; }

void zmalloc_maintain(void) {}
void zmalloc_flush_thread_cache(void) {}

#elif defined(USE_EBBMALLOC)
void zmalloc_get_allocator_stats(zmalloc_stats_t *st) {
    ebb_stats_t es;
    memset(st, 0, sizeof(*st));
    ebb_stats_get(&es);
    st->allocated = es.allocated;
    st->active = es.active;
    st->resident = es.resident;
    st->mapped = es.mapped;
    st->retained = es.retained;
}

int zmalloc_purge(void) {
    ebb_purge();
    return 0;
}

void zmalloc_malloc_stats(void (*out)(void *arg, const char *text), void *arg) { ebb_stats_print(out, arg); }
bool zmalloc_has_defrag(void) { return true; }

/* ebbmalloc decides itself (ebb_defrag_hint: the block's slab is used less
 * than its class on average) and has cache-bypassing alloc/free. */
void *zmalloc_defrag_move(void *ptr) {
    if (!ebb_defrag_hint(ptr)) return NULL;
    size_t size = RAW_SIZE(ptr);
    void *n = ebb_defrag_alloc(size);
    if (!n) return NULL;
    memcpy(n, ptr, size);
    account_move(size, RAW_SIZE(n));
    ebb_defrag_free(ptr);
    return n;
}

bool zmalloc_allocator_stats_cheap(void) { return true; }
void zmalloc_set_background_thread(bool enable) { (void)enable; }
void zmalloc_maintain(void) { ebb_maintain(); }
void zmalloc_flush_thread_cache(void) { ebb_flush_thread_cache(); }

#else /* libc */
/* glibc tells what it has handed out and what it got from the OS, but has no
 * notion of active or resident pages: those are reported as 0. */
void zmalloc_get_allocator_stats(zmalloc_stats_t *st) {
    struct mallinfo2 mi = mallinfo2();
    memset(st, 0, sizeof(*st));
    st->allocated = mi.uordblks + mi.hblkhd;
    st->mapped = mi.arena + mi.hblkhd;
}

int zmalloc_purge(void) {
    malloc_trim(0);
    return 0;
}

void zmalloc_malloc_stats(void (*out)(void *arg, const char *text), void *arg) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return;
    malloc_info(0, f);
    fclose(f);
    if (buf) out(arg, buf);
    free(buf); /* open_memstream's buffer comes from libc malloc */
}

bool zmalloc_has_defrag(void) { return false; }
void *zmalloc_defrag_move(void *ptr) {
    (void)ptr;
    return NULL;
}
/* Not from the cron: mallinfo2 walks every free chunk of every arena. */
bool zmalloc_allocator_stats_cheap(void) { return false; }
void zmalloc_set_background_thread(bool enable) { (void)enable; }
void zmalloc_maintain(void) {}
void zmalloc_flush_thread_cache(void) {}
#endif

/* ---------------------------------------------------------------------------
 * Process memory from /proc.
 * ------------------------------------------------------------------------- */

size_t zmalloc_get_rss(void) {
    char buf[4096];
    FILE *f = fopen("/proc/self/stat", "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* Field 24 is rss in pages; skip past the command name, which is in
     * parentheses and may itself hold spaces. */
    char *p = strrchr(buf, ')');
    if (!p) return 0;
    int field = 2;
    while (*p && field < 24) {
        if (*p == ' ') field++;
        p++;
    }
    return (size_t)strtoull(p, NULL, 10) * (size_t)sysconf(_SC_PAGESIZE);
}

size_t zmalloc_total_system_memory(void) {
    return (size_t)sysconf(_SC_PHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
}
