/* xfer.c: lock-free transfer stacks, one per size class, that carry whole
 * batches of free blocks from a thread cache that overflows to one that
 * runs dry, without touching slabs or taking a lock.  Callers: tcache.c
 * (push on flush, pop on refill), purge.c and central.c (drain), stats.c.
 *
 * Why: a block freed on another thread than the one that allocates (a
 * producer/consumer queue, larson's hand-over of a table) used to go back
 * to its slab one block at a time under the class lock, and the allocating
 * thread took it out again the same way.  Now the freeing thread pushes its
 * flushed batch with one compare-and-swap and the allocating thread takes a
 * batch with one exchange, O(1) per batch either way.
 *
 * Layout: a batch is a NULL-terminated list linked through word 0 (as in a
 * thread cache); its first block's word 1 holds the next batch on the
 * stack in its low 48 bits and the batch's length in its high 16, so a
 * push or pop touches one block (the length used to sit in the second
 * block: one more cache miss on a block another thread wrote last, 2% of
 * larson).  Hence only classes of 16 bytes and more, and batches of 2 to
 * 65535 blocks.
 * The stack top is a tagged pointer: the address in the low 48 bits (user
 * space is below 2^47 on x86-64 Linux), a counter bumped by every push and
 * pop in the high 16, so a pop whose top was popped and pushed again in
 * between fails its compare-and-swap instead of installing a stale next
 * (the ABA problem).  Such a pop may read word 1 of a block another thread
 * now owns; that is harmless, because arena memory is never unmapped and
 * the value is thrown away when the compare-and-swap fails.  (A first
 * version took the whole stack with an exchange and pushed the rest back,
 * which walked every waiting batch: 6% of larson's time.)
 *
 * Bounds: at most `limit` blocks (4 MiB of them, at least 8 thread-cache
 * refills) wait on a class's stack; beyond that a flush goes to the slabs
 * (central.c) as before.  A smaller bound (8 refills) was measured too
 * small: with more threads than cores, a freeing thread fills it within a
 * fraction of its time slice while the allocating threads wait for a core,
 * and 80% of batches went the locked way (xmalloc-test, 2+2 threads); 1
 * MiB still refused 270k batches against 1.2M pushed there in 5 s, 4 MiB
 * 94k against 1.7M.  Blocks on a stack are no more resident than they
 * would be on their slabs (a slab's free pages stay dirty for decay_ms
 * anyway).  The
 * purge tick, ebb_purge and ebb_check drain every stack into
 * the slabs, so empty slabs are found and memory returns even when no
 * thread allocates the class again.  Blocks on a stack count as out of
 * their slabs (central used) and as cached (ebb_stats_t.tcache).
 * Fork: a batch held between pop and push-back by a thread that does not
 * exist in the child is lost to the child, like a vanished thread's cache. */
#include "internal.h"

#define XFER_REFILLS 8
#define XFER_BYTES ((size_t)4 << 20)

#define TAG_SHIFT 48
#define PTR_MASK (((uint64_t)1 << TAG_SHIFT) - 1)

typedef struct {
    uint64_t top;                     /* atomic: newest batch (tagged, see above) */
    size_t pending;                   /* atomic: blocks on the stack */
    uint32_t limit;                   /* most blocks allowed to wait; 0: class not served */
    uint64_t pushed, popped, refused; /* atomic: batches, for the report */
} __attribute__((aligned(64))) xfer_t;

static xfer_t xf[EBB_NCLASSES];

static inline void **word(void *block) {
    return (void **)block;
}
static inline void *top_ptr(uint64_t top) {
    return (void *)(uintptr_t)(top & PTR_MASK);
}
/* p as the new top, with old's counter bumped. */
static inline uint64_t top_next(void *p, uint64_t old) {
    return (uint64_t)(uintptr_t)p |
           ((old & ~PTR_MASK) + ((uint64_t)1 << TAG_SHIFT));
}

/* A batch's word 1: the next batch and this batch's length. */
static inline void *link_make(void *next, uint32_t n) {
    return (void *)((uintptr_t)next | ((uintptr_t)n << TAG_SHIFT));
}
static inline void *link_next(void *link) {
    return (void *)((uintptr_t)link & PTR_MASK);
}
static inline uint32_t link_len(void *link) {
    return (uint32_t)((uintptr_t)link >> TAG_SHIFT);
}

/* Called once at start-up with each class's thread-cache bound. */
void _ebb_xfer_init(unsigned cls, uint32_t bin_max) {
    size_t size = _ebb_class_size[cls], n = XFER_BYTES / size;
    if (n < XFER_REFILLS * (size_t)bin_max)
        n = XFER_REFILLS * (size_t)bin_max;
    xf[cls].limit = (size >= 16 && bin_max >= 4) ? (uint32_t)n : 0;
}

/* Push batch head (n blocks, NULL-terminated through word 0).  False if
 * the class is not served or its stack is full: the caller keeps it. */
bool _ebb_xfer_push(unsigned cls, void *head, uint32_t n) {
    xfer_t *x = &xf[cls];
    if (x->limit == 0 || n < 2 || n > 0xFFFF)
        return false;
    if (__atomic_load_n(&x->pending, __ATOMIC_RELAXED) + n > x->limit) {
        __atomic_add_fetch(&x->refused, 1, __ATOMIC_RELAXED);
        return false;
    }
    __atomic_add_fetch(&x->pushed, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&x->pending, n, __ATOMIC_RELAXED);
    uint64_t old = __atomic_load_n(&x->top, __ATOMIC_RELAXED);
    do {
        word(head)[1] = link_make(top_ptr(old), n);
    } while (!__atomic_compare_exchange_n(&x->top, &old, top_next(head, old),
                                          true, __ATOMIC_RELEASE,
                                          __ATOMIC_RELAXED));
    return true;
}

/* One batch of class cls into *head (which must be empty); returns its
 * length, 0 if the stack is empty. */
uint32_t _ebb_xfer_pop(unsigned cls, void **head) {
    xfer_t *x = &xf[cls];
    uint64_t old = __atomic_load_n(&x->top, __ATOMIC_ACQUIRE);
    void *b, *link;
    do {
        b = top_ptr(old);
        if (b == NULL)
            return 0;
        /* may be stale if b was taken meanwhile: then the CAS fails */
        link = __atomic_load_n(&word(b)[1], __ATOMIC_RELAXED);
        if (__atomic_compare_exchange_n(&x->top, &old,
                                        top_next(link_next(link), old), true,
                                        __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
            break;
    } while (1);
    uint32_t n = link_len(link);
    __atomic_sub_fetch(&x->pending, n, __ATOMIC_RELAXED);
    __atomic_add_fetch(&x->popped, 1, __ATOMIC_RELAXED);
    *head = b;
    return n;
}

/* Return every batch on cls's stack to the slabs (from the caller's arena:
 * blocks of other arenas go onto their slabs' remote lists). */
void _ebb_xfer_drain(unsigned cls) {
    xfer_t *x = &xf[cls];
    uint64_t old = __atomic_load_n(&x->top, __ATOMIC_RELAXED);
    if (top_ptr(old) == NULL)
        return;
    while (!__atomic_compare_exchange_n(&x->top, &old, top_next(NULL, old),
                                        true, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
        ;
    void *b = top_ptr(old);
    while (b != NULL) {
        void *next = link_next(word(b)[1]);
        uint32_t n = link_len(word(b)[1]);
        __atomic_sub_fetch(&x->pending, n, __ATOMIC_RELAXED);
        _ebb_central_give(_ebb_tc.arena, cls, b, n);
        b = next;
    }
}

void _ebb_xfer_drain_all(void) {
    for (unsigned c = 0; c < EBB_NCLASSES; c++)
        _ebb_xfer_drain(c);
}

size_t _ebb_xfer_pending(unsigned cls) {
    return __atomic_load_n(&xf[cls].pending, __ATOMIC_RELAXED);
}

/* Batches pushed, popped by a refill, and refused (stack full), all
 * classes together. */
void _ebb_xfer_counts(uint64_t out[3]) {
    out[0] = out[1] = out[2] = 0;
    for (unsigned c = 0; c < EBB_NCLASSES; c++) {
        out[0] += __atomic_load_n(&xf[c].pushed, __ATOMIC_RELAXED);
        out[1] += __atomic_load_n(&xf[c].popped, __ATOMIC_RELAXED);
        out[2] += __atomic_load_n(&xf[c].refused, __ATOMIC_RELAXED);
    }
}
