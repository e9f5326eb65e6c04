/* sizehist.h: the live histogram of allocation sizes that zmalloc keeps.
 *
 * zmalloc.c calls sizehist_on_alloc() and sizehist_on_free() for every block
 * (on every allocator build); MEMORY SIZES and MEMORY ALLOCATOR-ADVICE read a
 * copy with sizehist_read().  The counters are static arrays updated with
 * relaxed atomics: nothing is allocated per call, and a background thread
 * (lazy free) may allocate and free too.
 *
 * Buckets.  Below SH_EXACT_MAX bytes a bucket holds the sizes (8i, 8i+8]:
 * every allocator we model (glibc's 16-byte chunks with an 8-byte header,
 * jemalloc's 8/16-byte quantum, tcmalloc's and ebbmalloc's classes) puts all
 * sizes of one such bucket in the same class, so the exact region loses
 * nothing.  Above it, SH_SUB buckets per power of two, (2^k + j*2^(k-4),
 * 2^k + (j+1)*2^(k-4)]: jemalloc's four and ebbmalloc's eight classes per
 * power of two fall on these boundaries.  The last bucket takes everything
 * from 2^SH_LOG_END up.
 *
 * Two tables, because free() only knows the block's usable size, not what was
 * asked for:
 *   live_*   blocks alive now, by the usable size on this build (+1 on
 *            alloc, -1 on free): exact.
 *   req_*    requests by requested size, +1 on alloc, -1 when the free of
 *            that very block is recognised: a small direct-mapped table of
 *            recent blocks (pointer -> request bucket, SH_RECENT slots)
 *            recognises the frees of short-lived blocks (argv strings,
 *            reply buffers), which are most frees.  A block whose slot was
 *            taken by a later allocation is freed unrecognised and stays
 *            counted here.
 * So within one usable size of this build, req_* counts the live blocks
 * plus some freed long-lived ones, and sizehist_live_requests() splits the
 * exact live count of that usable size in req_*'s proportions.  On a build
 * whose classes are 8 bytes apart (ebbmalloc up to 128 bytes, glibc) the
 * exact region needs no split at all. */
#ifndef RL_SIZEHIST_H
#define RL_SIZEHIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SH_EXACT_MAX 4096                   /* bytes: end of the 8-byte buckets */
#define SH_EXACT (SH_EXACT_MAX / 8)         /* 512 exact buckets */
#define SH_LOG_START 12                     /* log buckets from 2^12 bytes */
#define SH_LOG_END 48                       /* ... to 2^48 (last one open) */
#define SH_SUB 16                           /* log buckets per power of two */
#define SH_NBUCKETS (SH_EXACT + (SH_LOG_END - SH_LOG_START) * SH_SUB)
#define SH_RECENT_SHIFT 12                  /* 4096 slots of recent blocks */

/* Bucket of a size (>= 1). */
static inline unsigned sizehist_bucket(size_t size) {
    if (size <= SH_EXACT_MAX)
        return size ? (unsigned)((size - 1) >> 3) : 0;
    size_t m = size - 1;
    unsigned k = 63 - (unsigned)__builtin_clzl(m); /* 2^k <= m < 2^(k+1) */
    if (k >= SH_LOG_END)
        return SH_NBUCKETS - 1;
    return SH_EXACT + (k - SH_LOG_START) * SH_SUB + (unsigned)((m - ((size_t)1 << k)) >> (k - 4));
}

/* Largest size of a bucket (its bounds are (previous upper, upper]). */
size_t sizehist_bucket_upper(unsigned b);

/* The shared counters (sizehist.c); use the functions below. */
extern uint64_t _sh_live_count[SH_NBUCKETS];
extern uint64_t _sh_live_bytes[SH_NBUCKETS];   /* usable bytes, log buckets only */
extern uint64_t _sh_req_count[SH_NBUCKETS];
extern uint64_t _sh_req_total[SH_NBUCKETS];    /* requests ever, log buckets only */
extern uint64_t _sh_req_bytes[SH_NBUCKETS];    /* their bytes, log buckets only */
/* Recent blocks: slot = hash(ptr); value = ptr << 16 | request bucket, 0
 * when empty.  Pointers fit in 48 bits and buckets in 16. */
extern uint64_t _sh_recent[1u << SH_RECENT_SHIFT];

static inline unsigned sizehist_slot(uintptr_t addr) {
    return (unsigned)((addr >> 4) * 0x9E3779B97F4A7C15ull >> (64 - SH_RECENT_SHIFT));
}

/* A live block of `usable` bytes appeared (an allocation, or a block moved
 * by defrag, which asks for nothing new). */
static inline void sizehist_live_add(size_t usable) {
    unsigned u = sizehist_bucket(usable);
    __atomic_fetch_add(&_sh_live_count[u], 1, __ATOMIC_RELAXED);
    if (u >= SH_EXACT) __atomic_fetch_add(&_sh_live_bytes[u], usable, __ATOMIC_RELAXED);
}

/* A live block of `usable` bytes went away (a free, or the old copy of a
 * block moved by defrag). */
static inline void sizehist_live_sub(size_t usable) {
    unsigned u = sizehist_bucket(usable);
    __atomic_fetch_sub(&_sh_live_count[u], 1, __ATOMIC_RELAXED);
    if (u >= SH_EXACT) __atomic_fetch_sub(&_sh_live_bytes[u], usable, __ATOMIC_RELAXED);
}

/* The block at addr, `usable` bytes, was handed out for a request of `req`
 * bytes.  Byte sums of requests are cumulative (the mean size of a wide
 * bucket), kept only above the exact region. */
static inline void sizehist_on_alloc(uintptr_t addr, size_t req, size_t usable) {
    unsigned r = sizehist_bucket(req);
    __atomic_fetch_add(&_sh_req_count[r], 1, __ATOMIC_RELAXED);
    if (r >= SH_EXACT) {
        __atomic_fetch_add(&_sh_req_total[r], 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&_sh_req_bytes[r], req, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&_sh_recent[sizehist_slot(addr)], (uint64_t)addr << 16 | r, __ATOMIC_RELAXED);
    sizehist_live_add(usable);
}

/* The block at addr, `usable` bytes, is being freed (an address, not a
 * pointer: realloc's caller passes the old block's, which is dead).  If it
 * is still the recent block of its slot, its request is known: take it back
 * (the compare-and-swap makes two threads freeing into one slot safe). */
static inline void sizehist_on_free(uintptr_t addr, size_t usable) {
    uint64_t *slot = &_sh_recent[sizehist_slot(addr)];
    uint64_t v = __atomic_load_n(slot, __ATOMIC_RELAXED);
    if (v >> 16 == (uint64_t)addr &&
        __atomic_compare_exchange_n(slot, &v, 0, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        __atomic_fetch_sub(&_sh_req_count[v & 0xFFFF], 1, __ATOMIC_RELAXED);
    sizehist_live_sub(usable);
}

/* A copy of the counters, taken bucket by bucket (a block allocated or freed
 * during the copy may be seen in one table and not the other). */
typedef struct sizehist {
    uint64_t live_count[SH_NBUCKETS];
    uint64_t live_bytes[SH_NBUCKETS];   /* usable bytes; exact buckets: count * upper */
    uint64_t req_count[SH_NBUCKETS];    /* requests not seen freed */
    uint64_t req_mean[SH_NBUCKETS];     /* mean request ever (exact buckets: upper) */
} sizehist_t;
void sizehist_read(sizehist_t *out);

/* One group of live blocks with (estimated) one requested size. */
typedef struct sizehist_group {
    size_t req;        /* bytes asked for per block */
    double count;      /* live blocks (a fraction after the split) */
} sizehist_group_t;

/* The live blocks split by requested size (see the header comment).
 * usable_of(req) is this build's usable size for a request, so that each
 * request bucket is matched with the live bucket its blocks land in.  Fills
 * out[] (caller provides SH_NBUCKETS * 2 entries) and returns how many;
 * live blocks with no matching request (never expected) are reported with
 * req = their usable size. */
size_t sizehist_live_requests(const sizehist_t *h, size_t (*usable_of)(size_t req),
                              sizehist_group_t *out, size_t cap);

#endif
