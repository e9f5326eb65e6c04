/* page.c: the page allocator.  Carves arena chunks into spans (slabs and
 * large runs), takes them back, merges free neighbours, and hands pages to
 * the OS for purge.c.  Callers: central.c (slabs), alloc.c (large runs),
 * purge.c (_ebb_page_purge), stats.c.  One global mutex guards it all; it is
 * taken only on slab refills/releases and large allocations, never on the
 * thread-cache fast path.  madvise is called with the lock dropped.
 *
 * Free spans come in two states: DIRTY (pages still resident, reusable at
 * once) and CLEAN (returned to the OS, or never touched).  Each state has
 * bins by length (exact for 1..126 pages, one bin for longer), with a bitmap
 * of non-empty bins.  Allocation takes the smallest fitting dirty span, then
 * the smallest clean one, then maps a new chunk.  DIRTY spans also sit on an
 * LRU list ordered by the time they became dirty, so the decay purge walks
 * it from the head and stops at the first span that is young enough.
 * Span descriptors come from each chunk's pool (desc_new/desc_put), lowest
 * indexes first, so the header pages a chunk touches grow with its number
 * of spans, not its number of pages; st.metadata counts the touched ones.
 * Invariants are listed with ebb_span_t in internal.h. */
#include <string.h>

#include "internal.h"

#define NBINS 128
enum { SET_DIRTY = 0,
       SET_CLEAN = 1 };

static ebb_lock_t page_lock = EBB_LOCK_INIT;
static ebb_span_t *bins[2][NBINS];
static uint64_t binmap[2][NBINS / 64];
static ebb_span_t *lru_head, *lru_tail;
static ebb_chunk_t *chunks;
static ebb_page_stats_t st;

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
        st.metadata += ebb_hdr_touched(c->desc_top + 1) -
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

static void lru_unlink(ebb_span_t *s) {
    ebb_span_t *p = s->u.dirty.lru_prev, *n = s->u.dirty.lru_next;
    if (p) p->u.dirty.lru_next = n;
    else lru_head = n;
    if (n) n->u.dirty.lru_prev = p;
    else lru_tail = p;
}

static void lru_insert_after(ebb_span_t *pos, ebb_span_t *s) {
    s->u.dirty.lru_prev = pos;
    s->u.dirty.lru_next = pos ? pos->u.dirty.lru_next : lru_head;
    if (s->u.dirty.lru_next) s->u.dirty.lru_next->u.dirty.lru_prev = s;
    else lru_tail = s;
    if (pos) pos->u.dirty.lru_next = s;
    else lru_head = s;
}

/* Put s (state DIRTY or CLEAN already set) in its bin.  For a dirty span
 * lru_pos says where in the LRU: after lru_pos (NULL: at the head), or at
 * the tail if lru_pos is s itself. */
static void free_insert(ebb_span_t *s, ebb_span_t *lru_pos) {
    ebb_chunk_t *c = ebb_chunk_of(s);
    int set = set_of(s);
    unsigned b = bin_index(s->npages);
    c->span_of[s->page] = desc_index(c, s);
    c->span_of[s->page + s->npages - 1] = desc_index(c, s);
    s->prev = NULL;
    s->next = bins[set][b];
    if (s->next) s->next->prev = s;
    bins[set][b] = s;
    binmap[set][b / 64] |= (uint64_t)1 << (b % 64);
    if (set == SET_DIRTY) {
        lru_insert_after(lru_pos == s ? lru_tail : lru_pos, s);
        st.dirty += s->npages * EBB_PAGE;
    } else {
        st.retained += s->npages * EBB_PAGE;
    }
}

static void free_remove(ebb_span_t *s) {
    int set = set_of(s);
    unsigned b = bin_index(s->npages);
    if (s->prev) s->prev->next = s->next;
    else bins[set][b] = s->next;
    if (s->next) s->next->prev = s->prev;
    if (bins[set][b] == NULL)
        binmap[set][b / 64] &= ~((uint64_t)1 << (b % 64));
    if (set == SET_DIRTY) {
        lru_unlink(s);
        st.dirty -= s->npages * EBB_PAGE;
    } else {
        st.retained -= s->npages * EBB_PAGE;
    }
}

/* Smallest span of the set with >= npages pages, or NULL. */
static ebb_span_t *find_fit(int set, size_t npages) {
    unsigned b = bin_index(npages);
    for (unsigned w = b / 64; w < NBINS / 64; w++) {
        uint64_t bits = binmap[set][w];
        if (w == b / 64)
            bits &= ~(uint64_t)0 << (b % 64);
        if (!bits)
            continue;
        unsigned i = w * 64 + (unsigned)__builtin_ctzll(bits);
        if (i < NBINS - 1)
            return bins[set][i];
        ebb_span_t *best = NULL;
        for (ebb_span_t *s = bins[set][i]; s; s = s->next)
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

static ebb_chunk_t *chunk_new(void) {
    ebb_chunk_t *c = _ebb_os_map_aligned(EBB_CHUNK, EBB_CHUNK);
    if (c == NULL)
        return NULL;
    if (!_ebb_conf.thp)
        _ebb_os_no_huge_pages(c, EBB_CHUNK);
    memset(c->page_cls, EBB_CLS_NONE, sizeof(c->page_cls));
    c->kind = EBB_CHUNK_ARENA;
    c->next = chunks;
    chunks = c;
    st.nchunks++;
    st.mapped += EBB_CHUNK;
    st.metadata += ebb_hdr_touched(0);
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
    for (size_t i = 0; i < s->npages; i++)
        c->span_of[s->page + i] = desc_index(c, s);
    s->state = (uint8_t)state;
    s->cls = 0;
    if (state == EBB_SPAN_LARGE)
        st.large += s->npages * EBB_PAGE;
    else
        st.slab_pages += s->npages * EBB_PAGE;
}

/* A span of npages pages whose start is aligned to align_pages pages,
 * marked `state` (SLAB or LARGE).  NULL if the OS refuses memory. */
ebb_span_t *_ebb_page_alloc(size_t npages, size_t align_pages, int state) {
    size_t want = npages + (align_pages > 1 ? align_pages - 1 : 0);
    if (npages == 0 || want > EBB_CHUNK_PAGES - EBB_HDR_PAGES)
        return NULL;
    ebb_lock(&page_lock);
    ebb_span_t *s = find_fit(SET_DIRTY, want);
    if (s == NULL)
        s = find_fit(SET_CLEAN, want);
    if (s == NULL && chunk_new() != NULL)
        s = find_fit(SET_CLEAN, want);
    if (s == NULL) {
        ebb_unlock(&page_lock);
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
    ebb_unlock(&page_lock);
    return s;
}

/* Give a slab or large span back; its pages become dirty. */
void _ebb_page_free(ebb_span_t *s) {
    uint64_t now = _ebb_os_now_ms();
    ebb_lock(&page_lock);
    if (s->state == EBB_SPAN_LARGE)
        st.large -= s->npages * EBB_PAGE;
    else
        st.slab_pages -= s->npages * EBB_PAGE;
    release(ebb_chunk_of(s), s, EBB_SPAN_DIRTY, now);
    ebb_unlock(&page_lock);
    _ebb_purge_tick();
}

/* Give back a slab that has already stayed unused for the decay time
 * (central.c's kept empty slabs): its pages are returned to the OS at
 * once, without the lock, and the span becomes clean, instead of waiting
 * a second decay period as a dirty span. */
void _ebb_page_free_purged(ebb_span_t *s) {
    _ebb_os_purge(ebb_span_base(s), s->npages * EBB_PAGE);
    ebb_lock(&page_lock);
    st.slab_pages -= s->npages * EBB_PAGE;
    release(ebb_chunk_of(s), s, EBB_SPAN_CLEAN, 0);
    ebb_unlock(&page_lock);
}

/* Resize a large span in place to npages: shrink by freeing its tail, grow
 * by taking pages from a free right neighbour.  False if it cannot grow. */
bool _ebb_page_resize(ebb_span_t *s, size_t npages) {
    ebb_chunk_t *c = ebb_chunk_of(s);
    bool ok = true;
    ebb_lock(&page_lock);
    if (npages < s->npages) {
        size_t cut = s->npages - npages;
        st.large -= cut * EBB_PAGE;
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
            st.large += need * EBB_PAGE;
        } else {
            ok = false;
        }
    }
    ebb_unlock(&page_lock);
    return ok;
}

/* Return to the OS every dirty span that became dirty at or before
 * cutoff_ms.  Spans are taken off the lists in batches (marked BUSY so no
 * one merges with them), madvised without the lock, then re-added as clean.
 * Returns the bytes purged. */
size_t _ebb_page_purge(uint64_t cutoff_ms) {
    size_t total = 0;
    for (;;) {
        ebb_span_t *batch = NULL;
        int n = 0;
        ebb_lock(&page_lock);
        while (n < 32 && lru_head && lru_head->u.dirty.since_ms <= cutoff_ms) {
            ebb_span_t *s = lru_head;
            free_remove(s);
            s->state = EBB_SPAN_BUSY;
            s->next = batch;
            batch = s;
            n++;
        }
        ebb_unlock(&page_lock);
        if (batch == NULL)
            break;
        for (ebb_span_t *s = batch; s; s = s->next) {
            _ebb_os_purge(ebb_span_base(s), s->npages * EBB_PAGE);
            total += s->npages * EBB_PAGE;
        }
        ebb_lock(&page_lock);
        while (batch) {
            ebb_span_t *s = batch;
            batch = s->next;
            release(ebb_chunk_of(s), s, EBB_SPAN_CLEAN, 0);
        }
        ebb_unlock(&page_lock);
    }
    return total;
}

void _ebb_page_stats(ebb_page_stats_t *out) {
    ebb_lock(&page_lock);
    *out = st;
    ebb_unlock(&page_lock);
}

void _ebb_page_lock_counts(uint64_t *acquired, uint64_t *contended) {
    *acquired = __atomic_load_n(&page_lock.acquired, __ATOMIC_RELAXED);
    *contended = __atomic_load_n(&page_lock.contended, __ATOMIC_RELAXED);
}

void _ebb_page_lock_all(void) {
    ebb_lock(&page_lock);
}

void _ebb_page_unlock_all(int reinit) {
    if (reinit)
        ebb_lock_reinit(&page_lock);
    else
        ebb_unlock(&page_lock);
}

/* ---- consistency check (ebb_check) ----
 * Walks every chunk with the page lock held (the caller holds all class
 * locks, so slab fields are stable) and verifies the invariants written at
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

int _ebb_page_check(size_t *used, size_t *cap) {
    int line = 0;
    size_t dirty = 0, retained = 0, large = 0, slab = 0, nfree = 0, nbinned = 0;
    size_t metadata = 0;
    ebb_lock(&page_lock);
    for (ebb_chunk_t *c = chunks; c; c = c->next) {
        PCHECK(c->kind == EBB_CHUNK_ARENA);
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
            } else {
                PCHECK(s->state == EBB_SPAN_SLAB || s->state == EBB_SPAN_LARGE ||
                       s->state == EBB_SPAN_BUSY);
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
            PCHECK(!bins[set][b] == !(binmap[set][b / 64] >> (b % 64) & 1));
            for (ebb_span_t *s = bins[set][b]; s; s = s->next) {
                PCHECK(set_of(s) == set && bin_index(s->npages) == b);
                PCHECK(s->state == EBB_SPAN_DIRTY || s->state == EBB_SPAN_CLEAN);
                nbinned++;
            }
        }
    size_t nlru = 0;
    for (ebb_span_t *s = lru_head; s; s = s->u.dirty.lru_next, nlru++)
        PCHECK(s->state == EBB_SPAN_DIRTY);
    PCHECK(nbinned == nfree);
    PCHECK(nlru <= nfree);
    PCHECK(dirty == st.dirty && retained == st.retained);
    PCHECK(large == st.large && slab == st.slab_pages);
    PCHECK(metadata == st.metadata);
out:
    ebb_unlock(&page_lock);
    return line;
}
