/* huge.c: blocks above EBB_LARGE_MAX (2 MiB), each in a mapping of its
 * own.  Callers: alloc.c (alloc, free, realloc), purge.c (the cache's
 * aging and ebb_purge), stats.c, init.c (fork).
 *
 * Layout: the mapping starts on a 4 MiB boundary with one header page (an
 * ebb_chunk_t of kind HUGE whose page_cls map is all NONE, so free() falls
 * to the slow path and finds the kind); the block starts at the next page
 * aligned as asked.  With alignment >= 4 MiB the block itself is
 * chunk-aligned and its header sits one chunk below it, which is where
 * ebb_chunk_of() looks.
 *
 * Freed mappings wait in a small cache before they are unmapped.  Why:
 * mstress's threads each malloc, fill and free a few 2.5-10 MiB blocks,
 * and new threads do it again; with every free unmapped, each of those
 * blocks was faulted in again page by page (under ebbmalloc 102k page
 * faults in a 4-thread run against tcmalloc's 14k, whose page heap keeps
 * freed spans), and every munmap and mmap took the process's address-space
 * lock for writing, which stalls the other threads' page faults.  A huge
 * malloc takes the cached mapping nearest its length (fit(): one more than
 * twice the length gives its tail back, a shorter one is extended or moved
 * with mremap), so its resident pages serve the block.  Bounds: at most
 * HUGE_CACHE_SLOTS mappings of at most HUGE_CACHE_ONE bytes,
 * HUGE_CACHE_BYTES together (a free beyond that unmaps).  They age as dirty
 * pages do: the purge tick unmaps those freed decay_ms ago, ebb_purge all
 * of them, and decay_ms 0 caches nothing.  The cache has its own lock,
 * taken only on a huge malloc or free (each of which costs a mapping's
 * worth of page touching anyway); the counters are atomic. */
#include <errno.h>
#include <string.h>

#include "internal.h"

#ifndef HUGE_CACHE_SLOTS
#define HUGE_CACHE_SLOTS 8
#endif
#define HUGE_CACHE_ONE ((size_t)16 << 20)
#ifndef HUGE_CACHE_BYTES
#define HUGE_CACHE_BYTES ((size_t)32 << 20)
#endif

static size_t huge_mapped, huge_usable; /* bytes, atomic */

typedef struct {
    ebb_lock_t lock;
    ebb_chunk_t *slot[HUGE_CACHE_SLOTS]; /* freed mappings, NULL if empty */
    uint64_t since_ms[HUGE_CACHE_SLOTS]; /* when each was freed */
    size_t bytes;                        /* atomic: mapped bytes cached */
    uint64_t nreused, nfreed;            /* atomic, for the report */
} huge_cache_t;

static huge_cache_t cache = {.lock = EBB_LOCK_INIT};

/* Where a block of size bytes aligned to align starts in a mapping at
 * base, and the mapping length it needs. */
static char *block_at(char *base, size_t align) {
    return (char *)(((uintptr_t)base + EBB_PAGE + align - 1) &
                    ~(uintptr_t)(align - 1));
}

/* Take the cached mapping nearest to len bytes: the smallest that holds
 * it, else the largest; NULL if none waits. */
static ebb_chunk_t *cache_take(size_t len) {
    ebb_chunk_t *best = NULL;
    unsigned at = 0;
    if (__atomic_load_n(&cache.bytes, __ATOMIC_RELAXED) == 0)
        return NULL;
    ebb_lock(&cache.lock);
    for (unsigned i = 0; i < HUGE_CACHE_SLOTS; i++) {
        ebb_chunk_t *c = cache.slot[i];
        if (c == NULL)
            continue;
        bool holds = c->map_size >= len;
        if (best == NULL ||
            (holds && (best->map_size < len || c->map_size < best->map_size)) ||
            (!holds && best->map_size < len && c->map_size > best->map_size)) {
            best = c;
            at = i;
        }
    }
    if (best != NULL) {
        cache.slot[at] = NULL;
        __atomic_sub_fetch(&cache.bytes, best->map_size, __ATOMIC_RELAXED);
    }
    ebb_unlock(&cache.lock);
    return best;
}

static void unmap_all(ebb_chunk_t **drop, unsigned n) {
    for (unsigned i = 0; i < n; i++) {
        __atomic_sub_fetch(&huge_mapped, drop[i]->map_size, __ATOMIC_RELAXED);
        _ebb_os_unmap(drop[i]->map_base, drop[i]->map_size);
    }
}

/* Keep the freed mapping of c; false if it is not cacheable or the cache
 * is full (the caller unmaps it). */
static bool cache_put(ebb_chunk_t *c) {
    if (_ebb_conf.decay_ms == 0 || c->map_size > HUGE_CACHE_ONE ||
        (char *)c != c->map_base)
        return false;
    bool kept = false;
    ebb_lock(&cache.lock);
    if (cache.bytes + c->map_size <= HUGE_CACHE_BYTES) {
        for (unsigned i = 0; i < HUGE_CACHE_SLOTS; i++) {
            if (cache.slot[i] != NULL)
                continue;
            cache.slot[i] = c;
            cache.since_ms[i] = _ebb_os_now_ms();
            __atomic_add_fetch(&cache.bytes, c->map_size, __ATOMIC_RELAXED);
            kept = true;
            break;
        }
    }
    ebb_unlock(&cache.lock);
    return kept;
}

/* Make the cached mapping c exactly len bytes: a tail past twice len is
 * unmapped; a short one is extended in place or, where the address space
 * after it is taken, moved (its resident pages with it) into a new aligned
 * mapping of len bytes.  Returns the header (moved or not), or NULL when
 * no new mapping could be made (c is unmapped then). */
static ebb_chunk_t *fit(ebb_chunk_t *c, size_t len) {
    size_t old = c->map_size;
    if (old >= len) {
        if (old / 2 <= len)
            return c; /* the slack stays with the block (usable size) */
        _ebb_os_unmap(c->map_base + len, old - len);
        __atomic_sub_fetch(&huge_mapped, old - len, __ATOMIC_RELAXED);
        c->map_size = len;
        return c;
    }
    if (!_ebb_os_grow_in_place(c->map_base, old, len)) {
        char *to = _ebb_os_map_aligned(len, EBB_CHUNK);
        if (to == NULL || !_ebb_os_move(c->map_base, old, to)) {
            if (to != NULL)
                _ebb_os_unmap(to, len);
            unmap_all(&c, 1);
            return NULL;
        }
        if (!_ebb_conf.thp)
            _ebb_os_no_huge_pages(to, len);
        c = (ebb_chunk_t *)to;
        c->map_base = to;
    }
    __atomic_add_fetch(&huge_mapped, len - old, __ATOMIC_RELAXED);
    c->map_size = len;
    return c;
}

/* *fresh (if not NULL) tells whether the block comes from a new mapping,
 * hence is zero (calloc skips its memset then). */
void *_ebb_huge_alloc(size_t size, size_t align, bool *fresh) {
    if (align < EBB_PAGE)
        align = EBB_PAGE;
    if (size > ((size_t)1 << 46) || align > ((size_t)1 << 40)) {
        errno = ENOMEM;
        return NULL;
    }
    size_t len = EBB_PAGE + ebb_page_round(size) + (align > EBB_PAGE ? align : 0);
    ebb_chunk_t *c = align == EBB_PAGE ? cache_take(len) : NULL;
    if (c != NULL)
        c = fit(c, len);
    if (c != NULL) {
        /* the header is intact: kind, page_cls and map_* were set when it
         * was mapped; only the usable length follows the new block */
        char *ptr = block_at(c->map_base, align);
        size_t usable = (size_t)(c->map_base + c->map_size - ptr);
        __atomic_add_fetch(&huge_usable, usable, __ATOMIC_RELAXED);
        __atomic_add_fetch(&cache.nreused, 1, __ATOMIC_RELAXED);
        c->usable = usable;
        if (fresh != NULL)
            *fresh = false;
        return ptr;
    }
    char *base = _ebb_os_map_aligned(len, EBB_CHUNK);
    if (base == NULL) {
        errno = ENOMEM;
        return NULL;
    }
    if (!_ebb_conf.thp)
        _ebb_os_no_huge_pages(base, len);
    char *ptr = block_at(base, align);
    c = ebb_chunk_of(ptr);
    memset(c->page_cls, EBB_CLS_NONE, sizeof(c->page_cls));
    c->kind = EBB_CHUNK_HUGE;
    c->map_base = base;
    c->map_size = len;
    c->usable = (size_t)(base + len - ptr);
    __atomic_add_fetch(&huge_mapped, len, __ATOMIC_RELAXED);
    __atomic_add_fetch(&huge_usable, c->usable, __ATOMIC_RELAXED);
    if (fresh != NULL)
        *fresh = true;
    return ptr;
}

void _ebb_huge_free(ebb_chunk_t *c) {
    __atomic_sub_fetch(&huge_usable, c->usable, __ATOMIC_RELAXED);
    __atomic_add_fetch(&cache.nfreed, 1, __ATOMIC_RELAXED);
    if (cache_put(c))
        return;
    unmap_all(&c, 1);
}

/* Unmap the cached mappings freed at or before cutoff_ms (UINT64_MAX:
 * all of them). */
void _ebb_huge_trim(uint64_t cutoff_ms) {
    ebb_chunk_t *drop[HUGE_CACHE_SLOTS];
    unsigned n = 0;
    if (__atomic_load_n(&cache.bytes, __ATOMIC_RELAXED) == 0)
        return;
    ebb_lock(&cache.lock);
    for (unsigned i = 0; i < HUGE_CACHE_SLOTS; i++) {
        if (cache.slot[i] == NULL || cache.since_ms[i] > cutoff_ms)
            continue;
        drop[n++] = cache.slot[i];
        __atomic_sub_fetch(&cache.bytes, cache.slot[i]->map_size,
                           __ATOMIC_RELAXED);
        cache.slot[i] = NULL;
    }
    ebb_unlock(&cache.lock);
    unmap_all(drop, n);
}

/* Resize in place: shrink by unmapping the tail, grow by extending the
 * mapping where the address space allows.  Returns ptr, or NULL when the
 * caller must move the block (new size not huge, or no room to grow). */
void *_ebb_huge_realloc(void *ptr, size_t size) {
    ebb_chunk_t *c = ebb_chunk_of(ptr);
    if (size <= EBB_LARGE_MAX || size > ((size_t)1 << 46))
        return NULL;
    size_t head = (size_t)((char *)ptr - c->map_base);
    size_t new_len = head + ebb_page_round(size);
    if (new_len < c->map_size) {
        _ebb_os_unmap(c->map_base + new_len, c->map_size - new_len);
    } else if (new_len > c->map_size) {
        if (!_ebb_os_grow_in_place(c->map_base, c->map_size, new_len))
            return NULL;
    } else {
        return ptr;
    }
    size_t new_usable = new_len - head;
    __atomic_add_fetch(&huge_mapped, new_len - c->map_size, __ATOMIC_RELAXED);
    __atomic_add_fetch(&huge_usable, new_usable - c->usable, __ATOMIC_RELAXED);
    c->map_size = new_len;
    c->usable = new_usable;
    return ptr;
}

/* mapped: every huge mapping, cached ones too; usable: bytes of blocks in
 * use; cached: mapped bytes of the cached (freed, resident) mappings. */
void _ebb_huge_stats(size_t *mapped, size_t *usable, size_t *cached) {
    *mapped = __atomic_load_n(&huge_mapped, __ATOMIC_RELAXED);
    *usable = __atomic_load_n(&huge_usable, __ATOMIC_RELAXED);
    *cached = __atomic_load_n(&cache.bytes, __ATOMIC_RELAXED);
}

/* Huge frees, and of the huge mallocs those served by a cached mapping. */
void _ebb_huge_counts(uint64_t out[2]) {
    out[0] = __atomic_load_n(&cache.nfreed, __ATOMIC_RELAXED);
    out[1] = __atomic_load_n(&cache.nreused, __ATOMIC_RELAXED);
}

void _ebb_huge_lock(void) {
    ebb_lock(&cache.lock);
}

void _ebb_huge_unlock(int reinit) {
    if (reinit)
        ebb_lock_reinit(&cache.lock);
    else
        ebb_unlock(&cache.lock);
}
