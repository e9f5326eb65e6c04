/* central.c: the per-class middle layer between thread caches and pages.
 * Thread caches refill from here in batches and flush overflow back here,
 * so a block freed on one thread goes back to its slab and can be handed
 * to any other thread: memory is never stranded in a thread or arena.
 * Callers: tcache.c (take/give), stats.c, alloc.c (defrag hint/alloc).
 *
 * Each class has its own lock and keeps its partial slabs (some blocks out,
 * some free) in 4 buckets by fullness: bucket b (1..4) holds slabs with
 * used/cap in [(b-1)/4, b/4).  Refills take from the fullest bucket first,
 * so nearly-empty slabs are left to drain.  A slab whose last block returns
 * goes to bucket 0 (empty slabs) if the class keeps fewer than empty_max
 * there (up to 64 KiB of slabs, none when decay_ms is 0), else back to the
 * page allocator at once.  Bucket 0 is what refills use last; it spares
 * the page lock the free-a-slab/map-a-slab cycle that a producer/consumer
 * pattern causes, and _ebb_central_trim (the purge tick) returns its slabs
 * to the page allocator once they have stayed empty for decay_ms.  Full
 * slabs are in no bucket (bucket == -1).  Invariants: used == sum of slab
 * used over the class's slabs, cap == sum of slab cap, nempty == length of
 * bucket 0.  Lock order: class lock, then the page lock (a refill may map
 * a new slab); never the reverse. */
#include <string.h>

#include "internal.h"

#define NBUCKETS 4

typedef struct {
    ebb_lock_t lock;
    ebb_span_t *bucket[NBUCKETS + 1]; /* 0: empty slabs; 1..: by fullness */
    uint32_t nempty;                  /* slabs in bucket 0 */
    uint32_t empty_max;               /* most slabs bucket 0 may keep */
    uint64_t empty_since;             /* ms: bucket 0 last became non-empty */
    size_t nslabs;                    /* slabs of this class */
    size_t used;                      /* blocks out of slabs */
    size_t cap;                       /* blocks all slabs hold */
    uint64_t nrefills, nflushes;      /* batches moved */
} __attribute__((aligned(64))) central_t;

static central_t cent[EBB_NCLASSES] = {
    [0 ... EBB_NCLASSES - 1] = {.lock = EBB_LOCK_INIT},
};

static int bucket_of(const ebb_span_t *s) {
    if (s->u.slab.used >= s->u.slab.cap)
        return -1;
    if (s->u.slab.used == 0)
        return 0;
    return 1 + (int)((uint64_t)s->u.slab.used * NBUCKETS / s->u.slab.cap);
}

/* Bucket 0's bound per class: 64 KiB of slabs, at least one; none when
 * decay_ms is 0 (the caller asked for memory back at once). */
void _ebb_central_init(void) {
    for (unsigned c = 0; c < EBB_NCLASSES; c++) {
        size_t slab = (size_t)_ebb_class_pages[c] * EBB_PAGE;
        size_t n = ((size_t)64 << 10) / slab;
        cent[c].empty_max = _ebb_conf.decay_ms == 0 ? 0 : (uint32_t)(n ? n : 1);
    }
}

static void bucket_unlink(central_t *cc, ebb_span_t *s) {
    if (s->prev) s->prev->next = s->next;
    else cc->bucket[s->u.slab.bucket] = s->next;
    if (s->next) s->next->prev = s->prev;
    if (s->u.slab.bucket == 0)
        cc->nempty--;
    s->u.slab.bucket = -1;
}

/* Move s to the bucket matching its fullness (none when full). */
static void relink(central_t *cc, ebb_span_t *s) {
    int nb = bucket_of(s);
    if (nb == s->u.slab.bucket)
        return;
    if (s->u.slab.bucket >= 0)
        bucket_unlink(cc, s);
    if (nb >= 0) {
        s->prev = NULL;
        s->next = cc->bucket[nb];
        if (s->next) s->next->prev = s;
        cc->bucket[nb] = s;
        s->u.slab.bucket = nb;
        if (nb == 0)
            cc->nempty++;
    }
}

static ebb_span_t *fullest_partial(central_t *cc) {
    for (int b = NBUCKETS; b >= 0; b--)
        if (cc->bucket[b])
            return cc->bucket[b];
    return NULL;
}

static ebb_span_t *new_slab(central_t *cc, unsigned cls) {
    ebb_span_t *s = _ebb_page_alloc(_ebb_class_pages[cls], 1, EBB_SPAN_SLAB);
    if (s == NULL)
        return NULL;
    _ebb_slab_init(s, cls);
    cc->nslabs++;
    cc->cap += s->u.slab.cap;
    return s;
}

/* Up to `want` blocks of class cls, linked through word 0 onto *head.
 * Returns how many; 0 only when the OS refuses memory. */
unsigned _ebb_central_take(unsigned cls, unsigned want, void **head) {
    central_t *cc = &cent[cls];
    void *list = *head;
    unsigned n = 0;
    ebb_lock(&cc->lock);
    while (n < want) {
        ebb_span_t *s = fullest_partial(cc);
        if (s == NULL && (s = new_slab(cc, cls)) == NULL)
            break;
        void *b;
        while (n < want && (b = _ebb_slab_take(s)) != NULL) {
            *(void **)b = list;
            list = b;
            n++;
        }
        relink(cc, s);
    }
    cc->used += n;
    cc->nrefills++;
    ebb_unlock(&cc->lock);
    *head = list;
    return n;
}

/* Take empty slab s off its class (lock held) onto *list for page_free
 * after the lock is dropped. */
static void retire(central_t *cc, ebb_span_t *s, ebb_span_t **list) {
    if (s->u.slab.bucket >= 0)
        bucket_unlink(cc, s);
    memset(&ebb_chunk_of(s)->page_cls[s->page], EBB_CLS_NONE, s->npages);
    cc->nslabs--;
    cc->cap -= s->u.slab.cap;
    s->next = *list;
    *list = s;
}

/* aged: the spans have been unused for the decay time already, so their
 * pages go back to the OS now rather than after another decay period. */
static void free_spans(ebb_span_t *list, bool aged) {
    while (list) {
        ebb_span_t *s = list;
        list = s->next;
        if (aged)
            _ebb_page_free_purged(s);
        else
            _ebb_page_free(s);
    }
}

/* Return n blocks (a list linked through word 0) to their slabs.  A slab
 * left empty stays in bucket 0 while the class has room there, else goes
 * back to the page allocator after the lock is dropped. */
void _ebb_central_give(unsigned cls, void *head, unsigned n) {
    central_t *cc = &cent[cls];
    ebb_span_t *empties = NULL;
    ebb_lock(&cc->lock);
    for (unsigned i = 0; i < n; i++) {
        void *b = head;
        head = *(void **)b;
        ebb_span_t *s = ebb_span_of(b);
        _ebb_slab_put(s, b);
        if (s->u.slab.used != 0) {
            relink(cc, s);
        } else if (cc->nempty < cc->empty_max) {
            if (cc->nempty == 0)
                cc->empty_since = _ebb_os_now_ms();
            relink(cc, s);
        } else {
            retire(cc, s, &empties);
        }
    }
    cc->used -= n;
    cc->nflushes++;
    ebb_unlock(&cc->lock);
    free_spans(empties, false);
}

/* Give back the empty slabs of every class whose bucket 0 became
 * non-empty at least decay_ms before now: their pages go to the OS at once
 * (the decay has been served).  With all set (ebb_purge), every kept slab
 * goes back as dirty pages, and the caller purges those right after. */
void _ebb_central_trim(uint64_t now, long decay_ms, bool all) {
    for (unsigned c = 0; c < EBB_NCLASSES; c++) {
        central_t *cc = &cent[c];
        if (__atomic_load_n(&cc->nempty, __ATOMIC_RELAXED) == 0)
            continue;
        ebb_span_t *empties = NULL;
        ebb_lock(&cc->lock);
        if (all || (decay_ms >= 0 && cc->empty_since + (uint64_t)decay_ms <= now))
            while (cc->bucket[0] != NULL)
                retire(cc, cc->bucket[0], &empties);
        ebb_unlock(&cc->lock);
        free_spans(empties, !all);
    }
}

void _ebb_central_stats(unsigned cls, ebb_central_stats_t *out) {
    central_t *cc = &cent[cls];
    ebb_lock(&cc->lock);
    out->nslabs = cc->nslabs;
    out->used = cc->used;
    out->cap = cc->cap;
    out->nrefills = cc->nrefills;
    out->nflushes = cc->nflushes;
    out->nempty = cc->nempty;
    out->lock_acquired = cc->lock.acquired;
    out->lock_contended =
        __atomic_load_n(&cc->lock.contended, __ATOMIC_RELAXED);
    ebb_unlock(&cc->lock);
}

/* 1 if ptr's slab is used less than its class on average (strictly), so
 * moving the block elsewhere helps that slab empty.  The average leaves
 * out the empty slabs the class keeps: they hold no block to move, and
 * counting their capacity would make every slab look fuller than average
 * (measured: the server's defrag test stalled above its target). */
int _ebb_central_defrag_hint(const void *ptr) {
    unsigned cls = ebb_chunk_of(ptr)->page_cls[ebb_page_index(ptr)];
    if (cls == EBB_CLS_NONE)
        return 0;
    central_t *cc = &cent[cls];
    ebb_span_t *s = ebb_span_of(ptr);
    ebb_lock(&cc->lock);
    uint64_t cap = cc->cap - (uint64_t)cc->nempty * s->u.slab.cap;
    int hint = (uint64_t)s->u.slab.used * cap <
               (uint64_t)cc->used * s->u.slab.cap;
    ebb_unlock(&cc->lock);
    return hint;
}

void _ebb_central_lock_all(void) {
    for (unsigned c = 0; c < EBB_NCLASSES; c++)
        ebb_lock(&cent[c].lock);
}

void _ebb_central_unlock_all(int reinit) {
    for (unsigned c = 0; c < EBB_NCLASSES; c++) {
        if (reinit)
            ebb_lock_reinit(&cent[c].lock);
        else
            ebb_unlock(&cent[c].lock);
    }
}

/* ebb_check(): the transfer stacks are drained first; then with every
 * class lock and then the page lock held, the page walk sums slab used/cap per class, which must equal the class totals;
 * every slab on a bucket list must be partial and in the right bucket. */
int ebb_check(void) {
    size_t used[EBB_NCLASSES] = {0}, cap[EBB_NCLASSES] = {0};
    ebb_ensure_init();
    _ebb_xfer_drain_all();
    _ebb_central_lock_all();
    int bad = _ebb_page_check(used, cap);
    for (unsigned c = 0; c < EBB_NCLASSES && !bad; c++) {
        central_t *cc = &cent[c];
        if (used[c] != cc->used || cap[c] != cc->cap)
            bad = 10000 + (int)c;
        size_t nempty = 0;
        for (int b = 0; b <= NBUCKETS && !bad; b++)
            for (ebb_span_t *s = cc->bucket[b]; s && !bad; s = s->next) {
                if (s->state != EBB_SPAN_SLAB || s->cls != c ||
                    s->u.slab.bucket != b || bucket_of(s) != b)
                    bad = 20000 + (int)c;
                nempty += b == 0;
            }
        if (!bad && (nempty != cc->nempty || nempty > cc->empty_max))
            bad = 30000 + (int)c;
    }
    _ebb_central_unlock_all(0);
    return bad;
}
