/* central.c: the per-arena, per-class middle layer between thread caches
 * and pages.  Thread caches refill from their arena's lists in batches and
 * flush overflow back, so a block freed on one thread goes back to its slab
 * and can be handed to any other thread: memory is never stranded in a
 * thread.  Callers: tcache.c (take/give), xfer.c (give), stats.c, alloc.c
 * (defrag hint/alloc).
 *
 * Each (arena, class) pair has its own lock and keeps its partial slabs
 * (some blocks out, some free) in 4 buckets by fullness: bucket b (1..4)
 * holds slabs with used/cap in [(b-1)/4, b/4).  Refills take from the
 * fullest bucket first, so nearly-empty slabs are left to drain.  A slab
 * whose last block returns goes to bucket 0 (empty slabs) if the pair
 * keeps fewer than empty_max there (arena 0: up to 64 KiB of slabs, other
 * arenas 16 KiB, doubled up to 1 MiB while the pair churns, see
 * grow_empty_max; none when decay_ms is 0), else back to the page
 * allocator at once.  Bucket 0 is what refills use last; it spares the page lock the
 * free-a-slab/map-a-slab cycle that a producer/consumer pattern causes, and
 * _ebb_central_trim (the purge tick) returns its slabs to the page
 * allocator once they have stayed empty for decay_ms.  Full slabs are in
 * no bucket (bucket == -1).
 *
 * Remote frees.  A slab belongs to the arena of its chunk.  A block given
 * back by a thread of that arena goes to its slab under the pair's lock
 * (a lock that threads of other arenas do not take on their own frees); a
 * block of another arena's slab is pushed, with consecutive blocks of the
 * same slab as one run, onto the slab's lock-free remote list (one
 * compare-and-swap per run).  The push that makes a slab's remote list
 * non-empty also pushes its run's last block, which stays the list's last
 * until the list is collected, onto its pair's pending stack, linked
 * through the block's word 1 (so the span descriptor keeps its 48 bytes;
 * the 8-byte class has no word 1 and gives such runs back under the
 * owner's pair lock instead, taken once per run).  The owning arena
 * collects: a refill, the purge tick (trim), ebb_purge and ebb_check's
 * callers take the whole pending stack with one exchange (under the pair's
 * lock) and, slab by slab, the whole remote list with another, and put the
 * blocks in the slab's free list.  No thread waits for another arena's
 * lock to free a block of 16 bytes or more.  Why it is safe: a block on a
 * remote list still counts in its slab's used, so the slab cannot be
 * emptied and reused before the owner has collected it; a slab has at
 * most one entry on the pending stack (only the push that found its list
 * empty adds one, and only the collector, who has popped it, empties the
 * list); pops take the whole stack, so there is no ABA case.
 *
 * Invariants: used == sum of slab used over the pair's slabs (blocks on
 * remote lists included), cap == sum of slab cap, nempty == length of
 * bucket 0, remote >= blocks on the remote lists of the pending slabs.
 * Lock order: pair lock, then its arena's page lock (a refill may map a
 * new slab); never the reverse, and never two pair locks at once but in
 * ebb_check and fork (all of them, arena-major). */
#define _GNU_SOURCE
#include <sched.h>
#include <string.h>

#include "internal.h"

#define NBUCKETS 4

typedef struct {
    ebb_lock_t lock;
    ebb_span_t *bucket[NBUCKETS + 1]; /* 0: empty slabs; 1..: by fullness */
    uint32_t nempty;                  /* slabs in bucket 0 */
    uint32_t empty_max;               /* most slabs bucket 0 may keep now */
    uint32_t empty_base;              /* its start value (central_init) */
    bool churned;                     /* a slab was retired for want of
                                         room in bucket 0 (slab_returned) */
    uint64_t empty_since;             /* ms: bucket 0 last became non-empty */
    size_t nslabs;                    /* slabs of this pair */
    size_t used;                      /* blocks out of slabs */
    size_t cap;                       /* blocks all slabs hold */
    uint64_t nrefills, nflushes;      /* batches moved */
    void *pending;                    /* atomic: one block per slab with
                                         remote blocks (see above) */
    size_t remote;                    /* atomic: blocks pushed, not collected */
    uint64_t nremote;                 /* atomic: runs pushed */
} __attribute__((aligned(64))) central_t;

static central_t cent[EBB_MAX_ARENAS][EBB_NCLASSES] = {
    [0 ... EBB_MAX_ARENAS - 1] = {[0 ... EBB_NCLASSES - 1] = {.lock = EBB_LOCK_INIT}},
};

static unsigned arena_of(const void *p) {
    return ebb_chunk_of(p)->arena;
}

static int bucket_of(const ebb_span_t *s) {
    if (s->u.slab.used >= s->u.slab.cap)
        return -1;
    if (s->u.slab.used == 0)
        return 0;
    return 1 + (int)((uint64_t)s->u.slab.used * NBUCKETS / s->u.slab.cap);
}

/* Arenas: the conf's count, else one per CPU this process may run on (as
 * tcmalloc's per-CPU caches), at most EBB_MAX_ARENAS.  Measured on 2 CPUs
 * (larson and xmalloc-test, 8 threads): 2 arenas ran as fast as 8 or
 * faster, with 15-35% less peak RSS, since every arena a thread touches
 * keeps partial slabs of its own.  sched_getaffinity fills a stack set: no
 * allocation. */
static unsigned arenas_wanted(void) {
    if (_ebb_conf.arenas > 0)
        return (unsigned)_ebb_conf.arenas;
    cpu_set_t set;
    int ncpu = 1;
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        ncpu = CPU_COUNT(&set);
    unsigned n = (unsigned)(ncpu > 0 ? ncpu : 1);
    return n > EBB_MAX_ARENAS ? EBB_MAX_ARENAS : n;
}

/* Bucket 0's bound per pair: arena 0 (the first thread's, all of a
 * single-threaded program) 64 KiB of slabs, the others 16 KiB, so that
 * many arenas do not multiply what is kept; at least one slab; none when
 * decay_ms is 0 (the caller asked for memory back at once). */
void _ebb_central_init(void) {
    _ebb_narenas = arenas_wanted();
    /* only the arenas in use: writing all EBB_MAX_ARENAS x 72 pairs (13 KiB
     * each) touched 200 KiB of zero pages at start-up, a fifth of the peak
     * RSS of a small program */
    for (unsigned a = 0; a < _ebb_narenas; a++)
        for (unsigned c = 0; c < EBB_NCLASSES; c++) {
            size_t slab = (size_t)_ebb_class_pages[c] * EBB_PAGE;
            size_t n = ((size_t)(a == 0 ? 64 : 16) << 10) / slab;
            cent[a][c].empty_base = cent[a][c].empty_max =
                _ebb_conf.decay_ms == 0 ? 0 : (uint32_t)(n ? n : 1);
        }
}

static void bucket_unlink(central_t *cc, ebb_span_t *s) {
    if (s->prev) s->prev->next = s->next;
    else cc->bucket[s->u.slab.bucket] = s->next;
    if (s->next) s->next->prev = s->prev;
    if (s->u.slab.bucket == 0)
        __atomic_store_n(&cc->nempty, cc->nempty - 1, __ATOMIC_RELAXED);
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
            __atomic_store_n(&cc->nempty, cc->nempty + 1, __ATOMIC_RELAXED);
    }
}

static ebb_span_t *fullest_partial(central_t *cc) {
    for (int b = NBUCKETS; b >= 0; b--)
        if (cc->bucket[b])
            return cc->bucket[b];
    return NULL;
}

/* Bucket 0's bound adapts to churn: a pair that maps a new slab after it
 * had to retire an empty one for want of room (a producer/consumer pair
 * emptying slabs in bursts: xmalloc-test's 64-byte class retired and
 * re-mapped 100k slabs a second through the page lock) doubles its bound,
 * up to EMPTY_CAP bytes of slabs; the purge tick puts it back to its start
 * value once the kept slabs have aged out (_ebb_central_trim).  Memory is
 * not the price it seems: a retired slab's pages stay dirty (resident) in
 * the page layer for decay_ms as well. */
#define EMPTY_CAP ((size_t)1 << 20)
static void grow_empty_max(central_t *cc, unsigned cls) {
    if (!cc->churned || cc->empty_base == 0)
        return;
    cc->churned = false;
    size_t cap = EMPTY_CAP / ((size_t)_ebb_class_pages[cls] * EBB_PAGE);
    if (cc->empty_max < cap)
        cc->empty_max = (uint32_t)(2 * (size_t)cc->empty_max < cap
                                       ? 2 * (size_t)cc->empty_max
                                       : cap);
}

static ebb_span_t *new_slab(central_t *cc, unsigned arena, unsigned cls) {
    grow_empty_max(cc, cls);
    ebb_span_t *s =
        _ebb_page_alloc(arena, _ebb_class_pages[cls], 1, EBB_SPAN_SLAB);
    if (s == NULL)
        return NULL;
    _ebb_slab_init(s, cls);
    cc->nslabs++;
    cc->cap += s->u.slab.cap;
    return s;
}

/* Take empty slab s off its class (lock held) onto *list for page_free
 * after the lock is dropped. */
static void retire(central_t *cc, ebb_span_t *s, ebb_span_t **list) {
    ebb_assert_internal(s->u.slab.used == 0 && s->u.slab.remote == NULL);
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

/* Blocks have just been put back into slab s of pair cc (lock held): move
 * it to its bucket; a slab left empty stays in bucket 0 while the pair has
 * room there, else goes onto *empties for the page allocator, which the
 * caller calls after dropping the lock. */
static void slab_returned(central_t *cc, ebb_span_t *s, ebb_span_t **empties) {
    ebb_assert_internal(s->state == EBB_SPAN_SLAB &&
                        s->u.slab.used <= s->u.slab.cap);
    if (s->u.slab.used != 0) {
        relink(cc, s);
    } else if (cc->nempty < cc->empty_max) {
        if (cc->nempty == 0)
            cc->empty_since = _ebb_os_now_ms();
        relink(cc, s);
    } else {
        cc->churned = true;
        retire(cc, s, empties);
    }
}

static inline void **word(void *block) {
    return (void **)block;
}

/* Take the remote frees of every pending slab of pair cc into the slabs'
 * free lists (lock held).  An entry of the pending stack is the last
 * block of its slab's remote list; its word 1 links to the next entry. */
static void collect_remote(central_t *cc, ebb_span_t **empties) {
    if (__atomic_load_n(&cc->pending, __ATOMIC_RELAXED) == NULL)
        return;
    void *e = __atomic_exchange_n(&cc->pending, NULL, __ATOMIC_ACQUIRE);
    size_t n = 0;
    while (e != NULL) {
        void *next = word(e)[1];
        ebb_span_t *s = ebb_span_of(e);
        void *b = __atomic_exchange_n(&s->u.slab.remote, NULL, __ATOMIC_ACQUIRE);
        ebb_assert_internal(b != NULL && s->state == EBB_SPAN_SLAB &&
                            &cent[arena_of(s)][s->cls] == cc);
        while (b != NULL) {
            void *nb = *(void **)b;
            ebb_assert_internal(nb != NULL || b == e);
            _ebb_slab_put(s, b);
            b = nb;
            n++;
        }
        slab_returned(cc, s, empties);
        e = next;
    }
    ebb_assert_internal(n <= cc->used);
    cc->used -= n;
    __atomic_sub_fetch(&cc->remote, n, __ATOMIC_RELAXED);
}

/* The 8-byte class: a run of n blocks of slab s (head .. NULL) back under
 * the owning pair's lock.  The caller holds no pair lock. */
static void owner_put_run(ebb_span_t *s, void *head, unsigned n) {
    central_t *cc = &cent[arena_of(s)][s->cls];
    ebb_span_t *empties = NULL;
    ebb_lock(&cc->lock);
    while (head != NULL) {
        void *nb = *(void **)head;
        _ebb_slab_put(s, head);
        head = nb;
    }
    slab_returned(cc, s, &empties);
    ebb_assert_internal(n <= cc->used);
    cc->used -= n;
    cc->nflushes++;
    ebb_unlock(&cc->lock);
    free_spans(empties, false);
}

/* Push a run of n blocks of slab s (head .. tail, linked through word 0)
 * onto its remote list; lock-free.  The push that finds the list empty
 * also puts tail on its pair's pending stack. */
static void remote_push(ebb_span_t *s, void *head, void *tail, unsigned n) {
    if (EBB_UNLIKELY(_ebb_class_size[s->cls] < 16)) {
        *(void **)tail = NULL;
        owner_put_run(s, head, n);
        return;
    }
    central_t *cc = &cent[arena_of(s)][s->cls];
    __atomic_add_fetch(&cc->remote, n, __ATOMIC_RELAXED);
    __atomic_add_fetch(&cc->nremote, 1, __ATOMIC_RELAXED);
    void *old = __atomic_load_n(&s->u.slab.remote, __ATOMIC_RELAXED);
    do {
        *(void **)tail = old;
    } while (!__atomic_compare_exchange_n(&s->u.slab.remote, &old, head, true,
                                          __ATOMIC_RELEASE, __ATOMIC_RELAXED));
    if (old != NULL)
        return;
    void *top = __atomic_load_n(&cc->pending, __ATOMIC_RELAXED);
    do {
        word(tail)[1] = top;
    } while (!__atomic_compare_exchange_n(&cc->pending, &top, tail, true,
                                          __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

/* Up to `want` blocks of class cls from the given arena's slabs, linked
 * through word 0 onto *head.  Remote frees waiting for the pair are
 * collected first.  Returns how many; 0 only when the OS refuses memory. */
unsigned _ebb_central_take(unsigned arena, unsigned cls, unsigned want,
                           void **head) {
    ebb_assert(arena < _ebb_narenas && cls < EBB_NCLASSES);
    central_t *cc = &cent[arena][cls];
    ebb_span_t *empties = NULL;
    void *list = *head;
    unsigned n = 0;
    ebb_lock(&cc->lock);
    collect_remote(cc, &empties);
    while (n < want) {
        ebb_span_t *s = fullest_partial(cc);
        if (s == NULL && (s = new_slab(cc, arena, cls)) == NULL)
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
    free_spans(empties, false);
    *head = list;
    return n;
}

/* Return n blocks of class cls (a list linked through word 0) to their
 * slabs, from a thread of the given arena: others' blocks first, onto
 * their slabs' remote lists, one run per stretch of blocks of one slab,
 * with no lock held (the 8-byte class's runs take their owner's lock, so
 * no lock of ours may be held then: two threads of two arenas would wait
 * for each other, as measured once in rptest); then the arena's own
 * blocks under its pair lock. */
void _ebb_central_give(unsigned arena, unsigned cls, void *head, unsigned n) {
    ebb_assert(arena < _ebb_narenas && cls < EBB_NCLASSES);
    central_t *cc = &cent[arena][cls];
    ebb_span_t *empties = NULL, *rs = NULL;
    void *rhead = NULL, *rtail = NULL, *mine = NULL;
    unsigned local = 0, rn = 0;
    for (unsigned i = 0; i < n; i++) {
        void *b = head;
        head = *(void **)b;
        ebb_span_t *s = ebb_span_of(b);
        ebb_assert_internal(s->state == EBB_SPAN_SLAB && s->cls == cls);
        if (arena_of(b) == arena) {
            *(void **)b = mine;
            mine = b;
            local++;
            continue;
        }
        if (s != rs) {
            if (rs != NULL)
                remote_push(rs, rhead, rtail, rn);
            rs = s;
            rtail = b;
            rhead = NULL;
            rn = 0;
        }
        *(void **)b = rhead;
        rhead = b;
        rn++;
    }
    ebb_assert_internal(head == NULL);
    if (rs != NULL)
        remote_push(rs, rhead, rtail, rn);
    if (local == 0)
        return;
    ebb_lock(&cc->lock);
    while (mine != NULL) {
        void *b = mine;
        mine = *(void **)b;
        ebb_span_t *s = ebb_span_of(b);
        _ebb_slab_put(s, b);
        slab_returned(cc, s, &empties);
    }
    ebb_assert_internal(local <= cc->used);
    cc->used -= local;
    cc->nflushes++;
    ebb_unlock(&cc->lock);
    free_spans(empties, false);
}

/* For every pair: collect its remote frees, then give back its empty
 * slabs if bucket 0 became non-empty at least decay_ms before now: their
 * pages go to the OS at once (the decay has been served).  With all set
 * (ebb_purge), every kept slab goes back as dirty pages, and the caller
 * purges those right after. */
void _ebb_central_trim(uint64_t now, long decay_ms, bool all) {
    for (unsigned a = 0; a < _ebb_narenas; a++)
        for (unsigned c = 0; c < EBB_NCLASSES; c++) {
            central_t *cc = &cent[a][c];
            if (__atomic_load_n(&cc->nempty, __ATOMIC_RELAXED) == 0 &&
                __atomic_load_n(&cc->pending, __ATOMIC_RELAXED) == NULL)
                continue;
            ebb_span_t *empties = NULL, *aged = NULL;
            ebb_lock(&cc->lock);
            collect_remote(cc, &empties);
            if (all ||
                (decay_ms >= 0 && cc->empty_since + (uint64_t)decay_ms <= now)) {
                while (cc->bucket[0] != NULL)
                    retire(cc, cc->bucket[0], &aged);
                cc->empty_max = cc->empty_base; /* the burst is over */
                cc->churned = false;
            }
            ebb_unlock(&cc->lock);
            free_spans(empties, false);
            free_spans(aged, !all);
        }
}

/* Class cls summed over the arenas. */
void _ebb_central_stats(unsigned cls, ebb_central_stats_t *out) {
    memset(out, 0, sizeof(*out));
    for (unsigned a = 0; a < _ebb_narenas; a++) {
        central_t *cc = &cent[a][cls];
        ebb_lock(&cc->lock);
        out->nslabs += cc->nslabs;
        out->used += cc->used;
        out->cap += cc->cap;
        out->nrefills += cc->nrefills;
        out->nflushes += cc->nflushes;
        out->nempty += cc->nempty;
        out->lock_acquired += cc->lock.acquired;
        out->lock_contended +=
            __atomic_load_n(&cc->lock.contended, __ATOMIC_RELAXED);
        out->remote += __atomic_load_n(&cc->remote, __ATOMIC_RELAXED);
        out->nremote += __atomic_load_n(&cc->nremote, __ATOMIC_RELAXED);
        ebb_unlock(&cc->lock);
    }
}

/* 1 if ptr's slab is used less than its pair on average (strictly), so
 * moving the block elsewhere helps that slab empty.  The average leaves
 * out the empty slabs the pair keeps: they hold no block to move, and
 * counting their capacity would make every slab look fuller than average
 * (measured: the server's defrag test stalled above its target). */
int _ebb_central_defrag_hint(const void *ptr) {
    unsigned cls = ebb_chunk_of(ptr)->page_cls[ebb_page_index(ptr)];
    if (cls == EBB_CLS_NONE)
        return 0;
    central_t *cc = &cent[arena_of(ptr)][cls];
    ebb_span_t *s = ebb_span_of(ptr);
    ebb_lock(&cc->lock);
    uint64_t cap = cc->cap - (uint64_t)cc->nempty * s->u.slab.cap;
    int hint = (uint64_t)s->u.slab.used * cap <
               (uint64_t)cc->used * s->u.slab.cap;
    ebb_unlock(&cc->lock);
    return hint;
}

void _ebb_central_lock_all(void) {
    for (unsigned a = 0; a < _ebb_narenas; a++)
        for (unsigned c = 0; c < EBB_NCLASSES; c++)
            ebb_lock(&cent[a][c].lock);
}

void _ebb_central_unlock_all(int reinit) {
    for (unsigned a = 0; a < _ebb_narenas; a++)
        for (unsigned c = 0; c < EBB_NCLASSES; c++) {
            if (reinit)
                ebb_lock_reinit(&cent[a][c].lock);
            else
                ebb_unlock(&cent[a][c].lock);
        }
}

/* One pair's lists against the page walk's sums (all locks held).  Returns
 * 0 or a code: 10000 + class for totals, 20000 + class for a slab in the
 * wrong bucket, 30000 + class for bucket 0's count, 40000 + class for the
 * pending stack. */
static int check_pair(unsigned a, unsigned c, size_t used, size_t cap) {
    central_t *cc = &cent[a][c];
    if (used != cc->used || cap != cc->cap)
        return 10000 + (int)c;
    size_t nempty = 0;
    for (int b = 0; b <= NBUCKETS; b++)
        for (ebb_span_t *s = cc->bucket[b]; s; s = s->next) {
            if (s->state != EBB_SPAN_SLAB || s->cls != c || arena_of(s) != a ||
                s->u.slab.bucket != b || bucket_of(s) != b)
                return 20000 + (int)c;
            nempty += b == 0;
        }
    if (nempty != cc->nempty || nempty > cc->empty_max)
        return 30000 + (int)c;
    /* other threads may still push (never pop) meanwhile: both lists only
     * grow at their heads, so walking from a snapshot is safe */
    size_t listed = 0;
    for (void *e = __atomic_load_n(&cc->pending, __ATOMIC_ACQUIRE); e;
         e = word(e)[1]) {
        ebb_span_t *s = ebb_span_of(e);
        if (s->state != EBB_SPAN_SLAB || s->cls != c || arena_of(s) != a)
            return 40000 + (int)c;
        for (void *b = __atomic_load_n(&s->u.slab.remote, __ATOMIC_ACQUIRE); b;
             b = *(void **)b)
            listed++;
    }
    if (listed > __atomic_load_n(&cc->remote, __ATOMIC_RELAXED))
        return 40000 + (int)c;
    return 0;
}

/* ebb_check(): the transfer stacks and cached large runs are drained first; then with every pair
 * lock held, each arena's page walk (under its page lock) sums slab
 * used/cap per class, which must equal the pair's totals; every slab on a
 * bucket list must be partial, of the pair, and in the right bucket.  The
 * sums live in static arrays: all pair locks are held while they are used. */
int ebb_check(void) {
    static size_t used[EBB_NCLASSES], cap[EBB_NCLASSES];
    ebb_ensure_init();
    _ebb_xfer_drain_all();
    _ebb_runcache_drain();
    _ebb_central_lock_all();
    int bad = 0;
    for (unsigned a = 0; a < _ebb_narenas && !bad; a++) {
        memset(used, 0, sizeof(used));
        memset(cap, 0, sizeof(cap));
        bad = _ebb_page_check(a, used, cap);
        for (unsigned c = 0; c < EBB_NCLASSES && !bad; c++)
            bad = check_pair(a, c, used[c], cap[c]);
    }
    _ebb_central_unlock_all(0);
    return bad;
}
