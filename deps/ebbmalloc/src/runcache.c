/* runcache.c: lock-free stacks of freed large runs, one per page count,
 * so that a large block (16 KiB .. RUN_MAX_PAGES pages) freed by any
 * thread is handed to the next malloc of the same page count without the
 * page lock.  Callers: alloc.c (pop on a large malloc, push on its free),
 * purge.c and central.c's ebb_check (drain), stats.c.
 *
 * Why: every large malloc and free took its arena's page lock, with a span
 * split or merge under it, and a run freed by a thread of another arena
 * took that arena's lock.  A server's values of 16-256 KiB and
 * xmalloc-test's 32 KiB batch records (allocated by a producer, freed by a
 * consumer) take that path once per block.  The stacks are shared by all
 * threads rather than per thread, so that a producer/consumer pair reuses
 * runs too (a per-thread cache would only ever fill on the consumer's side).
 *
 * Layout: a run waits as it was handed out (a LARGE span, its pages and
 * its chunk's arena unchanged); the stack links span descriptors through
 * their `next` field, which a LARGE span does not use otherwise, so the
 * run's own memory is never touched.  The top is a tagged pointer as in
 * xfer.c (descriptor address in the low 48 bits, a counter in the high
 * 16), so a pop that raced with a pop and push of the same span fails its
 * compare-and-swap; a stale `next` read meanwhile comes from a chunk
 * header, which stays mapped.
 *
 * Bounds: at most RUN_CACHE_BYTES of runs wait on all stacks together;
 * beyond that a free goes to the page layer as before.  The purge tick,
 * ebb_purge and ebb_check drain every stack into the page layer (where the
 * runs' pages become dirty and age as usual), so memory a program stops
 * using still goes back to the OS.  Waiting runs count as cached
 * (ebb_stats_t.tcache), not allocated, and stay active.
 * Fork: a run between pop and use by a thread that does not exist in the
 * child is lost to the child, like a vanished thread's cache. */
#include "internal.h"

#define RUN_MIN_PAGES ((EBB_SMALL_MAX + EBB_PAGE) / EBB_PAGE) /* 5 */
#define RUN_CACHE_BYTES ((size_t)4 << 20)

#define TAG_SHIFT 48
#define PTR_MASK (((uint64_t)1 << TAG_SHIFT) - 1)

typedef struct {
    uint64_t top; /* atomic: newest span (tagged) */
} __attribute__((aligned(64))) run_stack_t;

static run_stack_t stacks[EBB_RUN_MAX_PAGES + 1];
static size_t cached_bytes;                 /* atomic */
static uint64_t npushed, npopped, nrefused; /* atomic, for the report */

static inline ebb_span_t *top_span(uint64_t top) {
    return (ebb_span_t *)(uintptr_t)(top & PTR_MASK);
}
static inline uint64_t top_next(ebb_span_t *s, uint64_t old) {
    return (uint64_t)(uintptr_t)s |
           ((old & ~PTR_MASK) + ((uint64_t)1 << TAG_SHIFT));
}

/* Keep large span s for reuse; false if it is not of a cached length or
 * the cache is full (the caller frees it to the page layer). */
bool _ebb_runcache_push(ebb_span_t *s) {
    size_t np = s->npages, bytes = np * EBB_PAGE;
    ebb_assert(s->state == EBB_SPAN_LARGE);
    if (np < RUN_MIN_PAGES || np > EBB_RUN_MAX_PAGES)
        return false;
    if (__atomic_add_fetch(&cached_bytes, bytes, __ATOMIC_RELAXED) >
        RUN_CACHE_BYTES) {
        __atomic_sub_fetch(&cached_bytes, bytes, __ATOMIC_RELAXED);
        __atomic_add_fetch(&nrefused, 1, __ATOMIC_RELAXED);
        return false;
    }
    run_stack_t *st = &stacks[np];
    uint64_t old = __atomic_load_n(&st->top, __ATOMIC_RELAXED);
    do {
        __atomic_store_n(&s->next, top_span(old), __ATOMIC_RELAXED);
    } while (!__atomic_compare_exchange_n(&st->top, &old, top_next(s, old),
                                          true, __ATOMIC_RELEASE,
                                          __ATOMIC_RELAXED));
    __atomic_add_fetch(&npushed, 1, __ATOMIC_RELAXED);
    return true;
}

/* A waiting run of exactly npages pages, or NULL. */
ebb_span_t *_ebb_runcache_pop(size_t npages) {
    if (npages < RUN_MIN_PAGES || npages > EBB_RUN_MAX_PAGES)
        return NULL;
    run_stack_t *st = &stacks[npages];
    uint64_t old = __atomic_load_n(&st->top, __ATOMIC_ACQUIRE);
    ebb_span_t *s;
    do {
        s = top_span(old);
        if (s == NULL)
            return NULL;
        /* stale if s was taken meanwhile: then the CAS fails */
        ebb_span_t *next = __atomic_load_n(&s->next, __ATOMIC_RELAXED);
        if (__atomic_compare_exchange_n(&st->top, &old, top_next(next, old),
                                        true, __ATOMIC_ACQUIRE,
                                        __ATOMIC_ACQUIRE))
            break;
    } while (1);
    ebb_assert_internal(s->state == EBB_SPAN_LARGE && s->npages == npages);
    __atomic_sub_fetch(&cached_bytes, npages * EBB_PAGE, __ATOMIC_RELAXED);
    __atomic_add_fetch(&npopped, 1, __ATOMIC_RELAXED);
    return s;
}

/* Every waiting run back to the page layer. */
void _ebb_runcache_drain(void) {
    for (size_t np = RUN_MIN_PAGES; np <= EBB_RUN_MAX_PAGES; np++) {
        run_stack_t *st = &stacks[np];
        uint64_t old = __atomic_load_n(&st->top, __ATOMIC_RELAXED);
        if (top_span(old) == NULL)
            continue;
        while (!__atomic_compare_exchange_n(&st->top, &old,
                                            top_next(NULL, old), true,
                                            __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            ;
        for (ebb_span_t *s = top_span(old), *next; s != NULL; s = next) {
            next = s->next;
            __atomic_sub_fetch(&cached_bytes, np * EBB_PAGE, __ATOMIC_RELAXED);
            _ebb_page_free(s);
        }
    }
}

size_t _ebb_runcache_bytes(void) {
    return __atomic_load_n(&cached_bytes, __ATOMIC_RELAXED);
}

/* Runs pushed, popped by a malloc, and refused (cache full). */
void _ebb_runcache_counts(uint64_t out[3]) {
    out[0] = __atomic_load_n(&npushed, __ATOMIC_RELAXED);
    out[1] = __atomic_load_n(&npopped, __ATOMIC_RELAXED);
    out[2] = __atomic_load_n(&nrefused, __ATOMIC_RELAXED);
}
