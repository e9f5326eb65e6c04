/* central.c: the per-class middle layer between thread caches and pages.
 * Thread caches refill from here in batches and flush overflow back here,
 * so a block freed on one thread goes back to its slab and can be handed
 * to any other thread: memory is never stranded in a thread or arena.
 * Callers: tcache.c (take/give), stats.c, alloc.c (defrag hint/alloc).
 *
 * Each class has its own lock and keeps its partial slabs (some blocks out,
 * some free) in 4 buckets by fullness: bucket b holds slabs with
 * used/cap in [b/4, (b+1)/4).  Refills take from the fullest bucket first,
 * so nearly-empty slabs are left to drain and go back to the page
 * allocator as soon as their last block returns.  Full slabs are in no
 * bucket (bucket == -1).  Invariant: used == sum of slab used over the
 * class's slabs, cap == sum of slab cap.  Lock order: class lock, then the
 * page lock (a refill may map a new slab); never the reverse. */
#include <string.h>

#include "internal.h"

#define NBUCKETS 4

typedef struct {
    ebb_lock_t lock;
    ebb_span_t *bucket[NBUCKETS];   /* partial slabs by fullness */
    size_t nslabs;                  /* slabs of this class */
    size_t used;                    /* blocks out of slabs */
    size_t cap;                     /* blocks all slabs hold */
    uint64_t nrefills, nflushes;    /* batches moved */
} __attribute__((aligned(64))) central_t;

static central_t cent[EBB_NCLASSES] = {
    [0 ... EBB_NCLASSES - 1] = { .lock = EBB_LOCK_INIT },
};

static int bucket_of(const ebb_span_t *s) {
    if (s->u.slab.used >= s->u.slab.cap)
        return -1;
    return (int)((uint64_t)s->u.slab.used * NBUCKETS / s->u.slab.cap);
}

static void bucket_unlink(central_t *cc, ebb_span_t *s) {
    if (s->prev) s->prev->next = s->next;
    else cc->bucket[s->u.slab.bucket] = s->next;
    if (s->next) s->next->prev = s->prev;
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
    }
}

static ebb_span_t *fullest_partial(central_t *cc) {
    for (int b = NBUCKETS - 1; b >= 0; b--)
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

/* Return n blocks (a list linked through word 0) to their slabs.  Slabs
 * left empty go back to the page allocator after the lock is dropped. */
void _ebb_central_give(unsigned cls, void *head, unsigned n) {
    central_t *cc = &cent[cls];
    ebb_span_t *empties = NULL;
    ebb_lock(&cc->lock);
    for (unsigned i = 0; i < n; i++) {
        void *b = head;
        head = *(void **)b;
        ebb_span_t *s = ebb_span_of(b);
        _ebb_slab_put(s, b);
        if (s->u.slab.used == 0) {
            if (s->u.slab.bucket >= 0)
                bucket_unlink(cc, s);
            memset(&ebb_chunk_of(s)->page_cls[s->page], EBB_CLS_NONE,
                   s->npages);
            cc->nslabs--;
            cc->cap -= s->u.slab.cap;
            s->next = empties;
            empties = s;
        } else {
            relink(cc, s);
        }
    }
    cc->used -= n;
    cc->nflushes++;
    ebb_unlock(&cc->lock);
    while (empties) {
        ebb_span_t *s = empties;
        empties = s->next;
        _ebb_page_free(s);
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
    out->lock_acquired = cc->lock.acquired;
    out->lock_contended =
        __atomic_load_n(&cc->lock.contended, __ATOMIC_RELAXED);
    ebb_unlock(&cc->lock);
}

/* 1 if ptr's slab is used less than its class on average (strictly), so
 * moving the block elsewhere helps that slab empty. */
int _ebb_central_defrag_hint(const void *ptr) {
    unsigned cls = ebb_chunk_of(ptr)->page_cls[ebb_page_index(ptr)];
    if (cls == EBB_CLS_NONE)
        return 0;
    central_t *cc = &cent[cls];
    ebb_span_t *s = ebb_span_of(ptr);
    ebb_lock(&cc->lock);
    int hint = (uint64_t)s->u.slab.used * cc->cap <
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

/* ebb_check(): with every class lock and then the page lock held, the page
 * walk sums slab used/cap per class, which must equal the class totals;
 * every slab on a bucket list must be partial and in the right bucket. */
int ebb_check(void) {
    size_t used[EBB_NCLASSES] = { 0 }, cap[EBB_NCLASSES] = { 0 };
    ebb_ensure_init();
    _ebb_central_lock_all();
    int bad = _ebb_page_check(used, cap);
    for (unsigned c = 0; c < EBB_NCLASSES && !bad; c++) {
        central_t *cc = &cent[c];
        if (used[c] != cc->used || cap[c] != cc->cap)
            bad = 10000 + (int)c;
        for (int b = 0; b < NBUCKETS && !bad; b++)
            for (ebb_span_t *s = cc->bucket[b]; s && !bad; s = s->next)
                if (s->state != EBB_SPAN_SLAB || s->cls != c ||
                    s->u.slab.bucket != b || bucket_of(s) != b)
                    bad = 20000 + (int)c;
    }
    _ebb_central_unlock_all(0);
    return bad;
}
