/* internal.h: ebbmalloc's types, constants and cross-file prototypes.
 *
 * Included by every src/ file, never by users.  Cross-file functions are
 * named _ebb_<file>_..., OS primitives _ebb_os_...; all are hidden (the
 * build localizes them), so libebbmalloc.a exports only ebb_* symbols.
 *
 * Glossary (4 KiB pages, 4 MiB chunks):
 *   chunk  a 4 MiB-aligned mapping.  An arena chunk starts with a header
 *          (page class map, span start map, span descriptors) and serves
 *          slabs and large runs; a huge chunk is one mapping per huge block.
 *   span   a run of pages inside an arena chunk: free (dirty or clean),
 *          a slab, or a large run.  Its descriptor comes from a pool in
 *          the chunk header; span_of[] maps pages to it.
 *   slab   a span cut into blocks of one size class.
 *   tcache a thread's private free lists, one per class.
 *   arena  a page supply of its own (chunks, free spans, page lock) with
 *          its own per-class central lists; each thread is given one at its
 *          first allocation (the least used), and a chunk, with every slab
 *          and large run in it, belongs to one arena for its whole life.
 *          A block freed by a thread of another arena goes back to its slab
 *          through the slab's lock-free remote list (central.c). */
#ifndef EBB_INTERNAL_H
#define EBB_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../include/ebbmalloc.h"

#define EBB_HIDDEN __attribute__((visibility("hidden")))
#define EBB_LIKELY(x) __builtin_expect(!!(x), 1)
#define EBB_UNLIKELY(x) __builtin_expect(!!(x), 0)

#define EBB_PAGE_SHIFT 12
#define EBB_PAGE ((size_t)1 << EBB_PAGE_SHIFT)
#define EBB_CHUNK_SHIFT 22
#define EBB_CHUNK ((size_t)1 << EBB_CHUNK_SHIFT)
#define EBB_CHUNK_PAGES (EBB_CHUNK / EBB_PAGE)

/* Size classes (size_class.c): 16 classes 8..128 bytes spaced by 8, then 8
 * per power of two up to EBB_SMALL_MAX.  Above that, large runs of whole
 * pages up to EBB_LARGE_MAX, then huge mappings. */
#define EBB_NCLASSES 72
#define EBB_SMALL_MAX ((size_t)16384)
#define EBB_LUT_MAX ((size_t)1024)
#define EBB_LARGE_MAX ((size_t)2 << 20)
#define EBB_CLS_NONE 0xFF

/* Arenas: at most EBB_MAX_ARENAS; how many are used is chosen at start-up
 * (conf.c: arenas, default one per CPU). */
#define EBB_MAX_ARENAS 16

/* ---- assertions ----
 * EBB_DEBUG (make EBB_DEBUG=n; 0 in release builds, 3 in test-sanitize and
 * the debug stress test):
 *   1  ebb_assert: cheap checks of a function's contract
 *   2  ebb_assert_internal: a layer's invariants (slab counts, bucket of a
 *      slab, the arena of a chunk), checked on every slow-path step
 *   3  ebb_assert_expensive: the whole-heap validator ebb_check() after
 *      every purge tick and ebb_purge
 * A failed check writes the expression, file and line to stderr (without
 * allocating) and aborts. */
#ifndef EBB_DEBUG
#define EBB_DEBUG 0
#endif
void _ebb_assert_fail(const char *expr, const char *file, int line)
    __attribute__((noreturn, cold, visibility("hidden")));
#define EBB_ASSERT_AT(level, cond)                         \
    do {                                                   \
        if (EBB_DEBUG >= (level) && EBB_UNLIKELY(!(cond))) \
            _ebb_assert_fail(#cond, __FILE__, __LINE__);   \
    } while (0)
#define ebb_assert(cond) EBB_ASSERT_AT(1, cond)
#define ebb_assert_internal(cond) EBB_ASSERT_AT(2, cond)
#define ebb_assert_expensive(cond) EBB_ASSERT_AT(3, cond)

/* Span states. */
enum { EBB_SPAN_DIRTY = 1,
       EBB_SPAN_CLEAN,
       EBB_SPAN_SLAB,
       EBB_SPAN_LARGE,
       EBB_SPAN_BUSY };

/* Span descriptor.  Invariants: a free span (DIRTY/CLEAN) is in exactly one
 * free bin of its state, and a DIRTY one also in the dirty LRU, oldest first;
 * two free neighbours of the same state never coexist (they are merged).
 * span_of[] (the descriptor's index in spans[]) is right for every page of
 * a used span and for the first and last page of a free one.  Every
 * descriptor below its chunk's desc_top is either a span's or on the
 * chunk's desc_free list (state 0).  For a slab: used + |free list| + (cap - bump)
 * == cap; used counts blocks handed out to threads (program, tcache or a
 * transfer stack, or waiting on its remote list: those are collected into
 * the free list by the owning arena only); a slab with used == 0 is one
 * central.c keeps empty. */
typedef struct ebb_span {
    struct ebb_span *next, *prev; /* free bin list / central bucket list */
    uint32_t npages;              /* length in pages */
    uint16_t page;                /* index of first page in its chunk */
    uint8_t state;                /* EBB_SPAN_* */
    uint8_t cls;                  /* slab: size class; large: 0 */
    union {
        struct {
            void *free;    /* freed blocks, linked through word 0 */
            void *remote;  /* atomic: blocks freed by other arenas' threads */
            uint16_t used; /* blocks out of the slab */
            uint16_t cap;  /* blocks the slab holds (<= 15 pages / 8 B) */
            uint16_t bump; /* blocks [bump, cap) never handed out */
            int8_t bucket; /* central fullness bucket, -1 if full */
        } slab;
        struct {
            struct ebb_span *lru_next, *lru_prev;
            uint64_t since_ms; /* when it became dirty */
        } dirty;
    } u;
} ebb_span_t;

/* The descriptor pool's size, and hence the header pages a chunk touches
 * and the slab lengths size_class.c picks, assume 48 bytes. */
_Static_assert(sizeof(ebb_span_t) == 48, "span descriptor is 48 bytes");

enum { EBB_CHUNK_ARENA = 0x41524e41,
       EBB_CHUNK_HUGE = 0x48554745 };

/* Chunk header.  page_cls comes first so that free() finds a block's class
 * with one load; for a huge chunk it is all EBB_CLS_NONE.  The header is
 * sized for the worst case (a span per page) but only touched as far as it
 * is used: spans[] is a pool handed out from index 0 (freed descriptors are
 * reused first), so a chunk of 3-page slabs touches a third of it.  Pages
 * past desc_top's are never written and cost no memory. */
typedef struct ebb_chunk {
    uint8_t page_cls[EBB_CHUNK_PAGES]; /* class of a slab page, or NONE */
    uint32_t kind;                     /* EBB_CHUNK_ARENA / _HUGE */
    /* huge chunks only */
    char *map_base;  /* start of the whole mapping */
    size_t map_size; /* bytes mapped */
    size_t usable;   /* bytes usable at the block */
    /* arena chunks only */
    uint32_t arena;                    /* owning arena, for its life */
    struct ebb_chunk *next;            /* the arena's chunks */
    ebb_span_t *desc_free;             /* free descriptors, by next */
    uint32_t desc_top;                 /* spans[desc_top..] never used */
    uint16_t span_of[EBB_CHUNK_PAGES]; /* page -> index in spans[] */
    ebb_span_t spans[EBB_CHUNK_PAGES]; /* descriptor pool */
} ebb_chunk_t;

#define EBB_HDR_PAGES ((sizeof(ebb_chunk_t) + EBB_PAGE - 1) / EBB_PAGE)
/* Header bytes written once descriptors [0, top) have been handed out. */
static inline size_t ebb_hdr_touched(size_t top) {
    return (offsetof(ebb_chunk_t, spans) + top * sizeof(ebb_span_t) +
            EBB_PAGE - 1) &
           ~(EBB_PAGE - 1);
}

/* The header that governs ptr.  ptr - 1 makes a chunk-aligned huge block
 * (alignment >= 4 MiB) find its header one chunk below; every other block
 * lies at least one page past its chunk start. */
static inline ebb_chunk_t *ebb_chunk_of(const void *ptr) {
    return (ebb_chunk_t *)(((uintptr_t)ptr - 1) & ~(uintptr_t)(EBB_CHUNK - 1));
}
static inline size_t ebb_page_index(const void *ptr) {
    return ((uintptr_t)ptr >> EBB_PAGE_SHIFT) & (EBB_CHUNK_PAGES - 1);
}
static inline char *ebb_span_base(ebb_span_t *s) {
    ebb_chunk_t *c = ebb_chunk_of(s);
    return (char *)c + ((size_t)s->page << EBB_PAGE_SHIFT);
}
static inline ebb_span_t *ebb_span_of(const void *ptr) {
    ebb_chunk_t *c = ebb_chunk_of(ptr);
    return &c->spans[c->span_of[ebb_page_index(ptr)]];
}
static inline size_t ebb_page_round(size_t n) {
    return (n + EBB_PAGE - 1) & ~(EBB_PAGE - 1);
}

/* ---- locks with wait counters ----
 * Every lock of the allocator is an ebb_lock_t: a mutex plus two counters,
 * acquisitions and contended acquisitions (the trylock failed, so the
 * thread had to wait).  ebb_stats_print reports them per lock, which is
 * how we see where threads wait.  acquired is written under the lock,
 * contended before it (atomically); both are read without the lock. */
typedef struct {
    pthread_mutex_t m;
    uint64_t acquired;  /* acquisitions */
    uint64_t contended; /* of those, how many had to wait (atomic) */
} ebb_lock_t;
#define EBB_LOCK_INIT \
    { .m = PTHREAD_MUTEX_INITIALIZER }

static inline void ebb_lock(ebb_lock_t *l) {
    if (EBB_UNLIKELY(pthread_mutex_trylock(&l->m) != 0)) {
        __atomic_add_fetch(&l->contended, 1, __ATOMIC_RELAXED);
        pthread_mutex_lock(&l->m);
    }
    __atomic_store_n(&l->acquired, l->acquired + 1, __ATOMIC_RELAXED);
}
/* Acquire l if it is free, else give up at once (not counted as a wait). */
static inline bool ebb_trylock(ebb_lock_t *l) {
    if (pthread_mutex_trylock(&l->m) != 0)
        return false;
    __atomic_store_n(&l->acquired, l->acquired + 1, __ATOMIC_RELAXED);
    return true;
}
static inline void ebb_unlock(ebb_lock_t *l) {
    pthread_mutex_unlock(&l->m);
}
/* Fork child: the lock is re-made free; counters are kept. */
static inline void ebb_lock_reinit(ebb_lock_t *l) {
    pthread_mutex_init(&l->m, NULL);
}

/* ---- conf.c: settings, read once from EBBMALLOC_CONF ---- */
typedef struct {
    long decay_ms;         /* dirty page age before purge; -1 never */
    int purge_free;        /* 1: MADV_FREE, 0: MADV_DONTNEED */
    size_t tcache_bytes;   /* bound of one thread cache */
    int stats_print;       /* print stats to stderr at exit */
    int background_thread; /* run the purge thread */
    int thp;               /* 0: MADV_NOHUGEPAGE on chunks, 1: leave */
    long arenas;           /* arenas to use; 0: one per CPU (at most MAX) */
} ebb_conf_t;
extern ebb_conf_t _ebb_conf EBB_HIDDEN;
void _ebb_conf_init(void) EBB_HIDDEN;
size_t _ebb_conf_describe(char *buf, size_t len) EBB_HIDDEN;

/* ---- size_class.c ---- */
extern uint32_t _ebb_class_size[EBB_NCLASSES] EBB_HIDDEN;
extern uint8_t _ebb_class_pages[EBB_NCLASSES] EBB_HIDDEN;
extern uint8_t _ebb_class_lut[EBB_LUT_MAX / 8 + 1] EBB_HIDDEN;
void _ebb_size_class_init(void) EBB_HIDDEN;
unsigned _ebb_size_class_of(size_t size) EBB_HIDDEN; /* size <= SMALL_MAX */
static inline unsigned ebb_class_of(size_t size) {
    if (EBB_LIKELY(size <= EBB_LUT_MAX))
        return _ebb_class_lut[(size + 7) >> 3];
    return _ebb_size_class_of(size);
}

/* ---- os.c: the only user of mmap/munmap/madvise/mremap ---- */
void *_ebb_os_map_aligned(size_t size, size_t align) EBB_HIDDEN;
void _ebb_os_unmap(void *addr, size_t size) EBB_HIDDEN;
void _ebb_os_purge(void *addr, size_t size) EBB_HIDDEN;
void _ebb_os_no_huge_pages(void *addr, size_t size) EBB_HIDDEN;
bool _ebb_os_grow_in_place(void *addr, size_t old_size, size_t new_size)
    EBB_HIDDEN;
bool _ebb_os_move(void *from, size_t size, void *to) EBB_HIDDEN;
uint64_t _ebb_os_now_ms(void) EBB_HIDDEN;
void _ebb_os_write_err(const char *text) EBB_HIDDEN;

/* ---- page.c: the page allocator, one per arena (each with its lock) ---- */
typedef struct {
    size_t mapped, retained, dirty, large, slab_pages; /* bytes */
    size_t metadata;                                   /* header bytes touched (ebb_hdr_touched per chunk) */
    size_t nchunks;
} ebb_page_stats_t;
extern unsigned _ebb_narenas EBB_HIDDEN; /* arenas in use, 1..MAX */
ebb_span_t *_ebb_page_alloc(unsigned arena, size_t npages, size_t align_pages,
                            int state) EBB_HIDDEN;
void _ebb_page_free(ebb_span_t *s) EBB_HIDDEN;
void _ebb_page_free_purged(ebb_span_t *s) EBB_HIDDEN;
bool _ebb_page_resize(ebb_span_t *s, size_t npages) EBB_HIDDEN;
size_t _ebb_page_purge(uint64_t cutoff_ms) EBB_HIDDEN;
void _ebb_page_stats(ebb_page_stats_t *out) EBB_HIDDEN;
int _ebb_page_check(unsigned arena, size_t *used, size_t *cap) EBB_HIDDEN;
void _ebb_page_lock_all(void) EBB_HIDDEN;
void _ebb_page_lock_counts(uint64_t *acquired, uint64_t *contended) EBB_HIDDEN;
void _ebb_page_unlock_all(int reinit) EBB_HIDDEN;

/* ---- slab.c: blocks inside one slab (caller holds the class lock) ---- */
void _ebb_slab_init(ebb_span_t *s, unsigned cls) EBB_HIDDEN;
void *_ebb_slab_take(ebb_span_t *s) EBB_HIDDEN;
void _ebb_slab_put(ebb_span_t *s, void *block) EBB_HIDDEN;

/* ---- central.c: per-arena, per-class middle layer ---- */
typedef struct {
    size_t nslabs, used, cap;               /* slabs, blocks out, blocks held */
    size_t remote;                          /* of used, on remote lists */
    uint64_t nremote;                       /* remote frees (runs pushed) */
    uint64_t nrefills, nflushes;            /* batches moved */
    uint64_t lock_acquired, lock_contended; /* the class lock */
    size_t nempty;                          /* of nslabs, kept empty (central.c) */
} ebb_central_stats_t;
unsigned _ebb_central_take(unsigned arena, unsigned cls, unsigned want,
                           void **head) EBB_HIDDEN;
void _ebb_central_give(unsigned arena, unsigned cls, void *head, unsigned n)
    EBB_HIDDEN;
void _ebb_central_stats(unsigned cls, ebb_central_stats_t *out) EBB_HIDDEN;
void _ebb_central_init(void) EBB_HIDDEN;
void _ebb_central_trim(uint64_t now, long decay_ms, bool all) EBB_HIDDEN;
int _ebb_central_defrag_hint(const void *ptr) EBB_HIDDEN;
void _ebb_central_lock_all(void) EBB_HIDDEN;
void _ebb_central_unlock_all(int reinit) EBB_HIDDEN;

/* ---- xfer.c: lock-free per-class stacks of block batches ---- */
void _ebb_xfer_init(unsigned cls, uint32_t bin_max) EBB_HIDDEN;
bool _ebb_xfer_push(unsigned cls, void *head, uint32_t n) EBB_HIDDEN;
uint32_t _ebb_xfer_pop(unsigned cls, void **head) EBB_HIDDEN;
void _ebb_xfer_drain(unsigned cls) EBB_HIDDEN;
void _ebb_xfer_drain_all(void) EBB_HIDDEN;
size_t _ebb_xfer_pending(unsigned cls) EBB_HIDDEN;
void _ebb_xfer_counts(uint64_t out[3]) EBB_HIDDEN;

/* ---- runcache.c: lock-free stacks of freed large runs, by page count ---- */
#define EBB_RUN_MAX_PAGES 64 /* runs up to 256 KiB are cached */
bool _ebb_runcache_push(ebb_span_t *s) EBB_HIDDEN;
ebb_span_t *_ebb_runcache_pop(size_t npages) EBB_HIDDEN;
void _ebb_runcache_drain(void) EBB_HIDDEN;
size_t _ebb_runcache_bytes(void) EBB_HIDDEN;
void _ebb_runcache_counts(uint64_t out[3]) EBB_HIDDEN;

/* ---- tcache.c: per-thread caches ---- */
typedef struct {
    void *head;      /* free blocks, linked through word 0 */
    uint16_t count;  /* length of head's list */
    uint16_t hinted; /* the first `hinted` blocks carry a prefetch hint in
                        word 1 (a block further down the list, tcache.c) */
    uint16_t max;    /* most blocks on head (128 at most at the start,
                        bin_grow may double it up to 64 KiB of blocks): a
                        free that finds it full moves the list to the
                        spare (tcache.c) */
    uint16_t held;   /* blocks this thread took in by refills less those
                        it sent away, saturating (tcache.c, refill_want) */
} ebb_tbin_t;
enum { EBB_TC_SENT = 1,
       EBB_TC_CYCLED = 2 };
enum { EBB_TC_NEW = 0,
       EBB_TC_LIVE,
       EBB_TC_DEAD };
typedef struct ebb_tcache {
    ebb_tbin_t bins[EBB_NCLASSES];
    /* per class, a full list set aside by a free (tcache.c); apart from
     * the bins, as only the slow paths touch them */
    void *spare[EBB_NCLASSES];
    uint16_t spare_n[EBB_NCLASSES];
    /* per class, EBB_TC_SENT when a full spare went away, cleared by the
     * next refill, which then grows the bin (tcache.c, bin_grow); and
     * EBB_TC_CYCLED from then on (refill_want).  Flags in one byte: a
     * larger cache struct (360 bytes more) raised larson's peak RSS by 2-3
     * MiB, all of it outside the heap (each thread's static TLS) */
    uint8_t sent[EBB_NCLASSES];
    uint32_t grow_left;                     /* bytes the bins may still grow by */
    int state;                              /* EBB_TC_* */
    uint32_t arena;                         /* this thread's arena (0 until LIVE) */
    struct ebb_tcache *reg_next, *reg_prev; /* registry of live caches */
} ebb_tcache_t;
extern __thread ebb_tcache_t _ebb_tc
    __attribute__((tls_model("initial-exec"))) EBB_HIDDEN;
void *_ebb_tcache_alloc_slow(unsigned cls) EBB_HIDDEN;
void _ebb_tcache_free_slow(void *ptr, unsigned cls) EBB_HIDDEN;
void _ebb_tcache_flush_self(void) EBB_HIDDEN;
unsigned _ebb_tcache_arena(void) EBB_HIDDEN;        /* the caller's, set up if new */
size_t _ebb_tcache_cached(unsigned cls) EBB_HIDDEN; /* blocks, all threads */
void _ebb_tcache_global_init(void) EBB_HIDDEN;
void _ebb_tcache_lock_all(void) EBB_HIDDEN;
void _ebb_tcache_lock_counts(uint64_t *acquired, uint64_t *contended)
    EBB_HIDDEN;
void _ebb_tcache_unlock_all(int reinit) EBB_HIDDEN;

/* ---- huge.c: one mapping per huge block, freed ones cached a while ---- */
void *_ebb_huge_alloc(size_t size, size_t align, bool *fresh) EBB_HIDDEN;
void _ebb_huge_free(ebb_chunk_t *c) EBB_HIDDEN;
void *_ebb_huge_realloc(void *ptr, size_t size) EBB_HIDDEN;
void _ebb_huge_trim(uint64_t cutoff_ms) EBB_HIDDEN;
void _ebb_huge_stats(size_t *mapped, size_t *usable, size_t *cached)
    EBB_HIDDEN;
void _ebb_huge_counts(uint64_t out[2]) EBB_HIDDEN;
void _ebb_huge_lock(void) EBB_HIDDEN;
void _ebb_huge_unlock(int reinit) EBB_HIDDEN;

/* ---- alloc.c: slow paths shared with override.c ---- */
void *_ebb_malloc_slow(size_t size) EBB_HIDDEN;
void _ebb_free_slow(void *ptr, unsigned cls) EBB_HIDDEN;
void *_ebb_memalign(size_t align, size_t size) EBB_HIDDEN;

/* ---- purge.c ---- */
void _ebb_purge_tick(void) EBB_HIDDEN;
void _ebb_purge_after_fork_child(void) EBB_HIDDEN;

/* ---- init.c ---- */
extern int _ebb_ready EBB_HIDDEN;
void _ebb_init_slow(void) EBB_HIDDEN;
static inline void ebb_ensure_init(void) {
    if (EBB_UNLIKELY(!__atomic_load_n(&_ebb_ready, __ATOMIC_ACQUIRE)))
        _ebb_init_slow();
}

/* Pop the first block of a non-empty bin.  A block with a hint names one
 * HINT_AHEAD blocks further down (tcache.c), which is prefetched (for writing: the
 * program writes what malloc returns): blocks that another thread freed
 * are cold here, and without it the load of each block's word 0 was half
 * of xmalloc-test's time. */
static inline void *ebb_tbin_pop(ebb_tbin_t *b) {
    void *p = b->head;
    b->head = *(void **)p;
    if (b->hinted != 0) {
        b->hinted--;
        __builtin_prefetch(((void **)p)[1], 1, 3);
    }
    __atomic_store_n(&b->count, b->count - 1, __ATOMIC_RELAXED);
    return p;
}

/* ---- fast paths, shared by alloc.c and override.c ----
 * A hit is a pop or push on the thread's list for the class: no lock, no
 * atomic read-modify-write (the relaxed stores of count are plain moves,
 * there only so stats can read the counts from another thread). */
static inline void *ebb_fast_malloc(size_t size) {
    if (EBB_LIKELY(size <= EBB_LUT_MAX)) {
        /* relaxed: a thread's first call may race with another thread's
         * init writing the table; the bin it picks is then empty and the
         * slow path, after init, looks the class up again */
        unsigned cls =
            __atomic_load_n(&_ebb_class_lut[(size + 7) >> 3], __ATOMIC_RELAXED);
        ebb_tbin_t *b = &_ebb_tc.bins[cls];
        if (EBB_LIKELY(b->head != NULL))
            return ebb_tbin_pop(b);
    }
    return _ebb_malloc_slow(size);
}

static inline void ebb_fast_free(void *ptr) {
    if (EBB_UNLIKELY(ptr == NULL))
        return;
    unsigned cls = ebb_chunk_of(ptr)->page_cls[ebb_page_index(ptr)];
    if (EBB_LIKELY(cls != EBB_CLS_NONE)) {
        ebb_tbin_t *b = &_ebb_tc.bins[cls];
        if (EBB_LIKELY(b->count < b->max)) {
            *(void **)ptr = b->head;
            b->head = ptr;
            b->hinted = 0;
            __atomic_store_n(&b->count, b->count + 1, __ATOMIC_RELAXED);
            return;
        }
    }
    _ebb_free_slow(ptr, cls);
}

#endif
