/* page.c: the page allocator.  Carves arena chunks into spans (slabs and
 * large runs), takes them back, merges free neighbours, and hands pages to
 * the OS for purge.c.  Callers: central.c (slabs), alloc.c (large runs),
 * purge.c (_ebb_page_purge), stats.c.
 *
 * Arenas: each arena (up to EBB_MAX_ARENAS, _ebb_narenas in use) has its
 * own chunks, free bins, dirty LRU, statistics and lock; nothing is shared
 * between arenas, so threads of different arenas never wait for each other
 * here (a large run cut from another arena's dirty pages, borrow_dirty,
 * only try-locks it).  A chunk records its arena, and a span always goes
 * back to the arena of its chunk (a large run freed by another thread
 * takes that arena's lock, not a global one).  Allocation takes the
 * caller's arena (central.c: the arena of the class list that needs a
 * slab; alloc.c: the calling thread's).  The lock is taken on slab
 * refills/releases and large allocations, never on the thread-cache fast
 * path; madvise is called with the lock dropped.
 *
 * Free spans come in two states: DIRTY (pages still resident, reusable at
 * once) and CLEAN (returned to the OS, or never touched).  Each state has
 * bins by length (exact for 1..126 pages, one bin for longer), with a bitmap
 * of non-empty bins.  Allocation takes the smallest fitting dirty span, then
 * the smallest clean one, then maps a new chunk (a large run looks at the
 * other arenas' dirty spans before its own clean ones).  DIRTY spans also
 * sit on an LRU list ordered by the time they became dirty, so the decay
 * purge walks it from the head and stops at the first span that is young
 * enough.
 * Span descriptors come from each chunk's pool (desc_new/desc_put), lowest
 * indexes first, so the header pages a chunk touches grow with its number
 * of spans, not its number of pages; st.metadata counts the touched ones.
 * Invariants are listed with ebb_span_t in internal.h. */
#include <string.h>

#include "internal.h"

#define NBINS 128
enum { SET_DIRTY = 0,
       SET_CLEAN = 1 };

/* One arena's page supply.  Everything in it is guarded by its lock. */
typedef struct {
    ebb_lock_t lock;
    ebb_span_t *bins[2][NBINS];      /* free spans by set and length */
    uint64_t binmap[2][NBINS / 64];  /* non-empty bins */
    ebb_span_t *lru_head, *lru_tail; /* dirty spans, oldest first */
    ebb_chunk_t *chunks;             /* the arena's chunks */
    ebb_page_stats_t st;             /* bytes, as in ebb_page_stats_t */
} __attribute__((aligned(64))) page_arena_t;

unsigned _ebb_narenas = 1;
static page_arena_t pa[EBB_MAX_ARENAS] = {
    [0 ... EBB_MAX_ARENAS - 1] = {.lock = EBB_LOCK_INIT},
};

static page_arena_t *arena_of_chunk(const ebb_chunk_t *c) {
    ebb_assert_internal(c->kind == EBB_CHUNK_ARENA && c->arena < _ebb_narenas);
    return &pa[c->arena];
}

static unsigned bin_index(size_t npages) {
    return npages < NBINS - 1 ? (unsigned)npages : NBINS - 1;
}
static int set_of(const ebb_span_t *s) {
    return s->state == EBB_SPAN_DIRTY ? SET_DIRTY : SET_CLEAN;
}

/* ---- descriptor pool ---- */

static uint16_t desc_index(ebb_chunk_t *c, const ebb_span_t *s) {
    return (uint16_t)(s - c->spans);
}

/* A descriptor of c, zeroed: a freed one if any, else the next never used
 * (which may touch a new header page).  Cannot run out: a chunk has fewer
 * spans than pages. */
static ebb_span_t *desc_new(ebb_chunk_t *c) {
    ebb_span_t *s = c->desc_free;
    if (s != NULL) {
        c->desc_free = s->next;
    } else {
        ebb_assert_internal(c->desc_top < EBB_CHUNK_PAGES);
        arena_of_chunk(c)->st.metadata += ebb_hdr_touched(c->desc_top + 1) -
                                          ebb_hdr_touched(c->desc_top);
        s = &c->spans[c->desc_top++];
    }
    memset(s, 0, sizeof(*s));
    return s;
}

static void desc_put(ebb_chunk_t *c, ebb_span_t *s) {
    s->state = 0;
    s->next = c->desc_free;
    c->desc_free = s;
}

/* ---- free lists ---- */

static void lru_unlink(page_arena_t *a, ebb_span_t *s) {
    ebb_span_t *p = s->u.dirty.lru_prev, *n = s->u.dirty.lru_next;
    if (p) p->u.dirty.lru_next = n;
    else a->lru_head = n;
    if (n) n->u.dirty.lru_prev = p;
    else a->lru_tail = p;
}

static void lru_insert_after(page_arena_t *a, ebb_span_t *pos, ebb_span_t *s) {
    s->u.dirty.lru_prev = pos;
    s->u.dirty.lru_next = pos ? pos->u.dirty.lru_next : a->lru_head;
    if (s->u.dirty.lru_next) s->u.dirty.lru_next->u.dirty.lru_prev = s;
    else a->lru_tail = s;
    if (pos) pos->u.dirty.lru_next = s;
    else a->lru_head = s;
}

/* Put s (state DIRTY or CLEAN already set) in its bin.  For a dirty span
 * lru_pos says where in the LRU: after lru_pos (NULL: at the head), or at
 * the tail if lru_pos is s itself. */
static void free_insert(ebb_span_t *s, ebb_span_t *lru_pos) {
    ebb_chunk_t *c = ebb_chunk_of(s);
    page_arena_t *a = arena_of_chunk(c);
    int set = set_of(s);
    unsigned b = bin_index(s->npages);
    ebb_assert_internal(s->npages > 0 && s->page >= EBB_HDR_PAGES &&
                        s->page + s->npages <= EBB_CHUNK_PAGES);
    c->span_of[s->page] = desc_index(c, s);
    c->span_of[s->page + s->npages - 1] = desc_index(c, s);
    s->prev = NULL;
    s->next = a->bins[set][b];
    if (s->next) s->next->prev = s;
    a->bins[set][b] = s;
    a->binmap[set][b / 64] |= (uint64_t)1 << (b % 64);
    if (set == SET_DIRTY) {
        lru_insert_after(a, lru_pos == s ? a->lru_tail : lru_pos, s);
        /* an atomic store: purge_other_arenas reads it without the lock */
        __atomic_store_n(&a->st.dirty, a->st.dirty + s->npages * EBB_PAGE,
                         __ATOMIC_RELAXED);
    } else {
        a->st.retained += s->npages * EBB_PAGE;
    }
}

static void free_remove(ebb_span_t *s) {
    page_arena_t *a = arena_of_chunk(ebb_chunk_of(s));
    int set = set_of(s);
    unsigned b = bin_index(s->npages);
    ebb_assert_internal(s->state == EBB_SPAN_DIRTY || s->state == EBB_SPAN_CLEAN);
    if (s->prev) s->prev->next = s->next;
    else a->bins[set][b] = s->next;
    if (s->next) s->next->prev = s->prev;
    if (a->bins[set][b] == NULL)
        a->binmap[set][b / 64] &= ~((uint64_t)1 << (b % 64));
    if (set == SET_DIRTY) {
        lru_unlink(a, s);
        __atomic_store_n(&a->st.dirty, a->st.dirty - s->npages * EBB_PAGE,
                         __ATOMIC_RELAXED);
    } else {
        a->st.retained -= s->npages * EBB_PAGE;
    }
}

/* Smallest span of the set with >= npages pages, or NULL. */
static ebb_span_t *find_fit(page_arena_t *a, int set, size_t npages) {
    unsigned b = bin_index(npages);
    for (unsigned w = b / 64; w < NBINS / 64; w++) {
        uint64_t bits = a->binmap[set][w];
        if (w == b / 64)
            bits &= ~(uint64_t)0 << (b % 64);
        if (!bits)
            continue;
        unsigned i = w * 64 + (unsigned)__builtin_ctzll(bits);
        if (i < NBINS - 1)
            return a->bins[set][i];
        ebb_span_t *best = NULL;
        for (ebb_span_t *s = a->bins[set][i]; s; s = s->next)
            if (s->npages >= npages && (!best || s->npages < best->npages))
                best = s;
        return best;
    }
    return NULL;
}

/* Take the first npages of free span s; the rest stays free in the same
 * state and LRU position.  Returns s, now BUSY and npages long (its
 * span_of entries are the caller's to set). */
static ebb_span_t *carve(ebb_span_t *s, size_t npages) {
    ebb_chunk_t *c = ebb_chunk_of(s);
    ebb_span_t *lru_prev =
        s->state == EBB_SPAN_DIRTY ? s->u.dirty.lru_prev : NULL;
    free_remove(s);
    if (s->npages > npages) {
        ebb_span_t *r = desc_new(c);
        r->page = (uint16_t)(s->page + npages);
        r->npages = (uint32_t)(s->npages - npages);
        r->state = s->state;
        r->u.dirty.since_ms = s->u.dirty.since_ms;
        free_insert(r, lru_prev);
        s->npages = (uint32_t)npages;
    }
    s->state = EBB_SPAN_BUSY;
    return s;
}

/* ---- chunks ---- */

static ebb_chunk_t *chunk_new(page_arena_t *a) {
    ebb_chunk_t *c = _ebb_os_map_aligned(EBB_CHUNK, EBB_CHUNK);
    if (c == NULL)
        return NULL;
    if (!_ebb_conf.thp)
        _ebb_os_no_huge_pages(c, EBB_CHUNK);
    memset(c->page_cls, EBB_CLS_NONE, sizeof(c->page_cls));
    c->kind = EBB_CHUNK_ARENA;
    c->arena = (uint32_t)(a - pa);
    c->next = a->chunks;
    a->chunks = c;
    a->st.nchunks++;
    a->st.mapped += EBB_CHUNK;
    a->st.metadata += ebb_hdr_touched(0);
    ebb_span_t *s = desc_new(c);
    s->page = EBB_HDR_PAGES;
    s->npages = EBB_CHUNK_PAGES - EBB_HDR_PAGES;
    s->state = EBB_SPAN_CLEAN;
    free_insert(s, s);
    return c;
}

/* Return the pages of span s (page and npages set, on no list) to the
 * free lists in the given state, merging with free neighbours of the same
 * state; merged-away descriptors go back to the pool. */
static void release(ebb_chunk_t *c, ebb_span_t *s, int state, uint64_t now) {
    if (s->page > EBB_HDR_PAGES) {
        ebb_span_t *l = &c->spans[c->span_of[s->page - 1]];
        if (l->state == state) {
            free_remove(l);
            l->npages += s->npages;
            desc_put(c, s);
            s = l;
        }
    }
    size_t rp = (size_t)s->page + s->npages;
    if (rp < EBB_CHUNK_PAGES) {
        ebb_span_t *r = &c->spans[c->span_of[rp]];
        if (r->state == state) {
            free_remove(r);
            s->npages += r->npages;
            desc_put(c, r);
        }
    }
    s->state = (uint8_t)state;
    s->u.dirty.since_ms = now;
    free_insert(s, s);
}

static void mark_used(ebb_span_t *s, int state) {
    ebb_chunk_t *c = ebb_chunk_of(s);
    page_arena_t *a = arena_of_chunk(c);
    for (size_t i = 0; i < s->npages; i++)
        c->span_of[s->page + i] = desc_index(c, s);
    s->state = (uint8_t)state;
    s->cls = 0;
    if (state == EBB_SPAN_LARGE)
        a->st.large += s->npages * EBB_PAGE;
    else
        a->st.slab_pages += s->npages * EBB_PAGE;
}

static size_t arena_purge(page_arena_t *a, uint64_t cutoff_ms, size_t keep);

/* Dirty pages of one arena cannot serve another's slabs (a chunk belongs
 * to its arena for life; large runs may borrow, borrow_dirty), so when an
 * arena grows into clean pages while another holds many dirty ones, the
 * process's RSS grows by both.  It happens when
 * blocks circulate between arenas (transfer stacks, remote frees): one
 * arena's slabs empty while the other's threads map new ones.
 * xmalloc-test at 8 threads peaked at 40.6 MiB with 25.6 MiB of it dirty
 * (free, resident) pages; so an arena that had to take clean pages purges
 * every other arena's dirty pages beyond PRESSURE_KEEP, oldest first, at
 * once rather than after decay_ms, but only pages dirty for decay_ms / 10
 * or more (1 s by default; none with decay_ms -1).  Without that age two
 * arenas that trade pages purged each other's just-freed pages, which the
 * owner then faulted in again, growing and purging the other in turn:
 * mstress at 8 threads spent 3.2 s in the kernel against 0.5 s, 4.3 s
 * wall against 1.7 s (tcmalloc 1.75 s).  The check reads the other arenas'
 * dirty bytes without their locks (written with atomic stores), so an
 * arena that grows while the others hold little dirty memory (every new
 * slab from clean pages) takes no other lock.  The caller holds no page
 * lock (page locks are never nested) and may hold its class lock, which
 * comes before any page lock. */
#define PRESSURE_KEEP ((size_t)4 << 20)
static void purge_other_arenas(unsigned arena) {
    long decay = _ebb_conf.decay_ms;
    if (decay < 0)
        return;
    uint64_t now = _ebb_os_now_ms(), age = (uint64_t)decay / 10;
    uint64_t cutoff = now > age ? now - age : 0;
    for (unsigned i = 0; i < _ebb_narenas; i++)
        if (i != arena &&
            __atomic_load_n(&pa[i].st.dirty, __ATOMIC_RELAXED) > PRESSURE_KEEP)
            arena_purge(&pa[i], cutoff, PRESSURE_KEEP);
}

/* A large run's pages may come from any arena's dirty spans: the run
 * goes back to its chunk's arena when freed (_ebb_page_free), under that
 * arena's lock, so nothing but its pages ties it to the thread that asked.
 * (A slab could not: central.c files a slab, and the blocks freed into it,
 * by its chunk's arena.)  Without this, an arena out of dirty pages grew
 * into clean ones while the other held megabytes of freed runs: mstress at
 * 4 threads peaked at 50 MiB, 41 MiB with one arena.  Called with no page
 * lock held (they are never nested); only arenas whose lock is free at
 * once are looked at.  Returns the arena whose dirty span *out fits
 * `want` pages, that arena's lock held; NULL if none has one. */
static page_arena_t *borrow_dirty(unsigned arena, size_t want,
                                  ebb_span_t **out) {
    for (unsigned i = 0; i < _ebb_narenas; i++) {
        page_arena_t *b = &pa[i];
        if (i == arena ||
            __atomic_load_n(&b->st.dirty, __ATOMIC_RELAXED) < want * EBB_PAGE ||
            !ebb_trylock(&b->lock))
            continue;
        *out = find_fit(b, SET_DIRTY, want);
        if (*out != NULL)
            return b;
        ebb_unlock(&b->lock);
    }
    return NULL;
}

/* A span of npages pages of the given arena whose start is aligned to
 * align_pages pages, marked `state` (SLAB or LARGE).  NULL if the OS
 * refuses memory. */
ebb_span_t *_ebb_page_alloc(unsigned arena, size_t npages, size_t align_pages,
                            int state) {
    size_t want = npages + (align_pages > 1 ? align_pages - 1 : 0);
    if (npages == 0 || want > EBB_CHUNK_PAGES - EBB_HDR_PAGES)
        return NULL;
    ebb_assert(arena < _ebb_narenas);
    ebb_assert(state == EBB_SPAN_SLAB || state == EBB_SPAN_LARGE);
    page_arena_t *a = &pa[arena];
    ebb_lock(&a->lock);
    ebb_span_t *s = find_fit(a, SET_DIRTY, want);
    if (s == NULL && state == EBB_SPAN_LARGE && _ebb_narenas > 1) {
        ebb_unlock(&a->lock);
        page_arena_t *b = borrow_dirty(arena, want, &s);
        if (b != NULL) {
            a = b;
        } else {
            ebb_lock(&a->lock);
            s = find_fit(a, SET_DIRTY, want);
        }
    }
    bool grew = s == NULL; /* clean pages: the RSS grows */
    if (s == NULL)
        s = find_fit(a, SET_CLEAN, want);
    if (s == NULL && chunk_new(a) != NULL)
        s = find_fit(a, SET_CLEAN, want);
    if (s == NULL) {
        ebb_unlock(&a->lock);
        return NULL;
    }
    int orig = s->state;
    uint64_t since = s->u.dirty.since_ms;
    s = carve(s, want);
    if (want > npages) {
        /* Aligned: keep the aligned middle, give back lead and tail (the
         * lead keeps s's descriptor).  The middle's span_of must be right
         * before release() looks at it. */
        ebb_chunk_t *c = ebb_chunk_of(s);
        uintptr_t addr = (uintptr_t)ebb_span_base(s);
        uintptr_t align = align_pages * EBB_PAGE;
        size_t lead = (((addr + align - 1) & ~(align - 1)) - addr) / EBB_PAGE;
        size_t first = s->page, tail = want - lead - npages;
        ebb_span_t *m = lead ? desc_new(c) : s;
        m->page = (uint16_t)(first + lead);
        m->npages = (uint32_t)npages;
        m->state = EBB_SPAN_BUSY;
        for (size_t i = 0; i < npages; i++)
            c->span_of[m->page + i] = desc_index(c, m);
        if (tail) {
            ebb_span_t *t = desc_new(c);
            t->page = (uint16_t)(first + lead + npages);
            t->npages = (uint32_t)tail;
            release(c, t, orig, since);
        }
        if (lead) {
            s->npages = (uint32_t)lead;
            release(c, s, orig, since);
        }
        s = m;
    }
    mark_used(s, state);
    ebb_unlock(&a->lock);
    if (grew && _ebb_narenas > 1)
        purge_other_arenas(arena);
    return s;
}

/* Give a slab or large span back to its chunk's arena; its pages become
 * dirty. */
void _ebb_page_free(ebb_span_t *s) {
    uint64_t now = _ebb_os_now_ms();
    ebb_chunk_t *c = ebb_chunk_of(s);
    page_arena_t *a = arena_of_chunk(c);
    ebb_assert(s->state == EBB_SPAN_SLAB || s->state == EBB_SPAN_LARGE);
    ebb_lock(&a->lock);
    if (s->state == EBB_SPAN_LARGE)
        a->st.large -= s->npages * EBB_PAGE;
    else
        a->st.slab_pages -= s->npages * EBB_PAGE;
    release(c, s, EBB_SPAN_DIRTY, now);
    ebb_unlock(&a->lock);
    _ebb_purge_tick();
}

/* Give back a slab that has already stayed unused for the decay time
 * (central.c's kept empty slabs): its pages are returned to the OS at
 * once, without the lock, and the span becomes clean, instead of waiting
 * a second decay period as a dirty span. */
void _ebb_page_free_purged(ebb_span_t *s) {
    ebb_chunk_t *c = ebb_chunk_of(s);
    page_arena_t *a = arena_of_chunk(c);
    ebb_assert(s->state == EBB_SPAN_SLAB);
    _ebb_os_purge(ebb_span_base(s), s->npages * EBB_PAGE);
    ebb_lock(&a->lock);
    a->st.slab_pages -= s->npages * EBB_PAGE;
    release(c, s, EBB_SPAN_CLEAN, 0);
    ebb_unlock(&a->lock);
}

/* Resize a large span in place to npages: shrink by freeing its tail, grow
 * by taking pages from a free right neighbour.  False if it cannot grow. */
bool _ebb_page_resize(ebb_span_t *s, size_t npages) {
    ebb_chunk_t *c = ebb_chunk_of(s);
    page_arena_t *a = arena_of_chunk(c);
    bool ok = true;
    ebb_assert(s->state == EBB_SPAN_LARGE && npages > 0);
    ebb_lock(&a->lock);
    if (npages < s->npages) {
        size_t cut = s->npages - npages;
        a->st.large -= cut * EBB_PAGE;
        s->npages = (uint32_t)npages;
        ebb_span_t *t = desc_new(c);
        t->page = (uint16_t)(s->page + npages);
        t->npages = (uint32_t)cut;
        release(c, t, EBB_SPAN_DIRTY, _ebb_os_now_ms());
    } else if (npages > s->npages) {
        size_t rp = (size_t)s->page + s->npages, need = npages - s->npages;
        ebb_span_t *r = rp < EBB_CHUNK_PAGES ? &c->spans[c->span_of[rp]] : NULL;
        if (r && (r->state == EBB_SPAN_DIRTY || r->state == EBB_SPAN_CLEAN) &&
            r->npages >= need) {
            carve(r, need);
            for (size_t i = 0; i < need; i++)
                c->span_of[rp + i] = desc_index(c, s);
            desc_put(c, r);
            s->npages = (uint32_t)npages;
            a->st.large += need * EBB_PAGE;
        } else {
            ok = false;
        }
    }
    ebb_unlock(&a->lock);
    return ok;
}

/* Return to the OS every dirty span that became dirty at or before
 * cutoff_ms, oldest first, while the arena holds more than keep dirty
 * bytes.  Spans are taken off the lists in batches (marked BUSY so no
 * one merges with them), madvised without the lock, then re-added as clean.
 * Returns the bytes purged. */
static size_t arena_purge(page_arena_t *a, uint64_t cutoff_ms, size_t keep) {
    size_t total = 0;
    for (;;) {
        ebb_span_t *batch = NULL;
        int n = 0;
        ebb_lock(&a->lock);
        while (n < 32 && a->lru_head &&
               a->lru_head->u.dirty.since_ms <= cutoff_ms &&
               a->st.dirty > keep) {
            ebb_span_t *s = a->lru_head;
            free_remove(s);
            s->state = EBB_SPAN_BUSY;
            s->next = batch;
            batch = s;
            n++;
        }
        ebb_unlock(&a->lock);
        if (batch == NULL)
            break;
        for (ebb_span_t *s = batch; s; s = s->next) {
            _ebb_os_purge(ebb_span_base(s), s->npages * EBB_PAGE);
            total += s->npages * EBB_PAGE;
        }
        ebb_lock(&a->lock);
        while (batch) {
            ebb_span_t *s = batch;
            batch = s->next;
            release(ebb_chunk_of(s), s, EBB_SPAN_CLEAN, 0);
        }
        ebb_unlock(&a->lock);
    }
    return total;
}

size_t _ebb_page_purge(uint64_t cutoff_ms) {
    size_t total = 0;
    for (unsigned i = 0; i < _ebb_narenas; i++)
        total += arena_purge(&pa[i], cutoff_ms, 0);
    return total;
}

/* The sum over arenas. */
void _ebb_page_stats(ebb_page_stats_t *out) {
    ebb_page_stats_t t = {0};
    for (unsigned i = 0; i < _ebb_narenas; i++) {
        ebb_lock(&pa[i].lock);
        ebb_page_stats_t *s = &pa[i].st;
        t.mapped += s->mapped;
        t.retained += s->retained;
        t.dirty += s->dirty;
        t.large += s->large;
        t.slab_pages += s->slab_pages;
        t.metadata += s->metadata;
        t.nchunks += s->nchunks;
        ebb_unlock(&pa[i].lock);
    }
    *out = t;
}

/* Summed over the arenas' page locks. */
void _ebb_page_lock_counts(uint64_t *acquired, uint64_t *contended) {
    *acquired = *contended = 0;
    for (unsigned i = 0; i < EBB_MAX_ARENAS; i++) {
        *acquired += __atomic_load_n(&pa[i].lock.acquired, __ATOMIC_RELAXED);
        *contended += __atomic_load_n(&pa[i].lock.contended, __ATOMIC_RELAXED);
    }
}

void _ebb_page_lock_all(void) {
    for (unsigned i = 0; i < _ebb_narenas; i++)
        ebb_lock(&pa[i].lock);
}

void _ebb_page_unlock_all(int reinit) {
    for (unsigned i = 0; i < _ebb_narenas; i++) {
        if (reinit)
            ebb_lock_reinit(&pa[i].lock);
        else
            ebb_unlock(&pa[i].lock);
    }
}

/* ---- consistency check (ebb_check) ----
 * Walks every chunk of one arena with its page lock held (the caller holds
 * all class locks, so slab fields are stable) and verifies the invariants written at
 * ebb_span_t.  Adds each class's slab used/cap into used[]/cap[].  Returns
 * 0, or the line number of the first broken invariant. */
#define PCHECK(cond)         \
    do {                     \
        if (!(cond)) {       \
            line = __LINE__; \
            goto out;        \
        }                    \
    } while (0)

static size_t list_len(void *p, size_t limit) {
    size_t n = 0;
    while (p && n <= limit) {
        p = *(void **)p;
        n++;
    }
    return n;
}

int _ebb_page_check(unsigned arena, size_t *used, size_t *cap) {
    int line = 0;
    size_t dirty = 0, retained = 0, large = 0, slab = 0, nfree = 0, nbinned = 0;
    size_t metadata = 0;
    page_arena_t *a = &pa[arena];
    ebb_lock(&a->lock);
    for (ebb_chunk_t *c = a->chunks; c; c = c->next) {
        PCHECK(c->kind == EBB_CHUNK_ARENA && c->arena == arena);
        PCHECK(c->desc_top <= EBB_CHUNK_PAGES);
        size_t nspans = 0, npooled = list_len(c->desc_free, c->desc_top);
        for (ebb_span_t *d = c->desc_free; d && npooled <= c->desc_top; d = d->next)
            PCHECK(d->state == 0 && d >= c->spans && d < c->spans + c->desc_top);
        metadata += ebb_hdr_touched(c->desc_top);
        int prev_state = 0;
        for (size_t p = EBB_HDR_PAGES; p < EBB_CHUNK_PAGES;) {
            PCHECK(c->span_of[p] < c->desc_top);
            ebb_span_t *s = &c->spans[c->span_of[p]];
            nspans++;
            PCHECK(s->page == p && s->npages > 0);
            PCHECK(p + s->npages <= EBB_CHUNK_PAGES);
            size_t last = p + s->npages - 1;
            if (s->state == EBB_SPAN_DIRTY || s->state == EBB_SPAN_CLEAN) {
                PCHECK(s->state != prev_state); /* merged neighbours */
                PCHECK(c->span_of[last] == c->span_of[p]);
                *(s->state == EBB_SPAN_DIRTY ? &dirty : &retained) +=
                    s->npages * EBB_PAGE;
                nfree++;
            } else if (s->state == EBB_SPAN_BUSY) {
                /* a free span taken off the lists by a purge that is
                 * madvising it without the lock (or was, in a fork
                 * parent): like a free span, only its ends are mapped */
                PCHECK(c->span_of[last] == c->span_of[p]);
            } else {
                PCHECK(s->state == EBB_SPAN_SLAB || s->state == EBB_SPAN_LARGE);
                for (size_t i = p; i <= last; i++)
                    PCHECK(c->span_of[i] == c->span_of[p]);
            }
            if (s->state == EBB_SPAN_LARGE)
                large += s->npages * EBB_PAGE;
            if (s->state == EBB_SPAN_SLAB && s->u.slab.used == 0 &&
                c->page_cls[p] == EBB_CLS_NONE) {
                /* emptied by central.c, on its way to _ebb_page_free (or
                 * orphaned by a fork in that window): no class owns it.
                 * (An empty slab central.c keeps still has its class.) */
                slab += s->npages * EBB_PAGE;
                for (size_t i = p; i <= last; i++)
                    PCHECK(c->page_cls[i] == EBB_CLS_NONE);
            } else if (s->state == EBB_SPAN_SLAB) {
                slab += s->npages * EBB_PAGE;
                PCHECK(s->cls < EBB_NCLASSES);
                PCHECK(s->npages == _ebb_class_pages[s->cls]);
                for (size_t i = p; i <= last; i++)
                    PCHECK(c->page_cls[i] == s->cls);
                PCHECK(s->u.slab.used <= s->u.slab.cap); /* 0: kept empty */
                PCHECK(s->u.slab.used > 0 || s->u.slab.remote == NULL);
                PCHECK(s->u.slab.bump <= s->u.slab.cap);
                PCHECK(s->u.slab.used + list_len(s->u.slab.free, s->u.slab.cap) +
                           (s->u.slab.cap - s->u.slab.bump) ==
                       s->u.slab.cap);
                used[s->cls] += s->u.slab.used;
                cap[s->cls] += s->u.slab.cap;
            } else {
                for (size_t i = p; i <= last; i++)
                    PCHECK(c->page_cls[i] == EBB_CLS_NONE);
            }
            prev_state = s->state;
            p += s->npages;
        }
        PCHECK(nspans + npooled == c->desc_top);
    }
    for (int set = 0; set < 2; set++)
        for (unsigned b = 0; b < NBINS; b++) {
            PCHECK(!a->bins[set][b] == !(a->binmap[set][b / 64] >> (b % 64) & 1));
            for (ebb_span_t *s = a->bins[set][b]; s; s = s->next) {
                PCHECK(set_of(s) == set && bin_index(s->npages) == b);
                PCHECK(s->state == EBB_SPAN_DIRTY || s->state == EBB_SPAN_CLEAN);
                nbinned++;
            }
        }
    size_t nlru = 0;
    for (ebb_span_t *s = a->lru_head; s; s = s->u.dirty.lru_next, nlru++)
        PCHECK(s->state == EBB_SPAN_DIRTY);
    PCHECK(nbinned == nfree);
    PCHECK(nlru <= nfree);
    PCHECK(dirty == a->st.dirty && retained == a->st.retained);
    PCHECK(large == a->st.large && slab == a->st.slab_pages);
    PCHECK(metadata == a->st.metadata);
out:
    ebb_unlock(&a->lock);
    return line;
}
