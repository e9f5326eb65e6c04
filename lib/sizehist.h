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
 *   req_*    every request ever made, by the requested size (only grows).
 * Within one usable size of this build, the live blocks are assumed to have
 * the same mix of requested sizes as all requests that landed there
 * (sizehist_live_requests() does that split).  For the exact region on a
 * build whose classes are 8 bytes apart the split is exact; on coarser
 * builds it is exact as long as a class is not shared by short-lived and
 * long-lived blocks of different sizes. */
#ifndef RL_SIZEHIST_H
#define RL_SIZEHIST_H

#include <stddef.h>
#include <stdint.h>

#define SH_EXACT_MAX 4096                   /* bytes: end of the 8-byte buckets */
#define SH_EXACT (SH_EXACT_MAX / 8)         /* 512 exact buckets */
#define SH_LOG_START 12                     /* log buckets from 2^12 bytes */
#define SH_LOG_END 48                       /* ... to 2^48 (last one open) */
#define SH_SUB 16                           /* log buckets per power of two */
#define SH_NBUCKETS (SH_EXACT + (SH_LOG_END - SH_LOG_START) * SH_SUB)

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
extern uint64_t _sh_req_bytes[SH_NBUCKETS];    /* requested bytes, log buckets only */

/* A live block of `usable` bytes appeared (an allocation, or a block moved
 * by defrag, which asks for nothing new). */
static inline void sizehist_live_add(size_t usable) {
    unsigned u = sizehist_bucket(usable);
    __atomic_fetch_add(&_sh_live_count[u], 1, __ATOMIC_RELAXED);
    if (u >= SH_EXACT) __atomic_fetch_add(&_sh_live_bytes[u], usable, __ATOMIC_RELAXED);
}

/* A block of `usable` bytes was handed out for a request of `req` bytes.
 * Byte sums are kept only above the exact region, where a bucket is wide. */
static inline void sizehist_on_alloc(size_t req, size_t usable) {
    unsigned r = sizehist_bucket(req);
    __atomic_fetch_add(&_sh_req_count[r], 1, __ATOMIC_RELAXED);
    if (r >= SH_EXACT) __atomic_fetch_add(&_sh_req_bytes[r], req, __ATOMIC_RELAXED);
    sizehist_live_add(usable);
}

/* A block of `usable` bytes was freed. */
static inline void sizehist_on_free(size_t usable) {
    unsigned u = sizehist_bucket(usable);
    __atomic_fetch_sub(&_sh_live_count[u], 1, __ATOMIC_RELAXED);
    if (u >= SH_EXACT) __atomic_fetch_sub(&_sh_live_bytes[u], usable, __ATOMIC_RELAXED);
}

/* A copy of the counters, taken bucket by bucket (a block allocated or freed
 * during the copy may be seen in one table and not the other). */
typedef struct sizehist {
    uint64_t live_count[SH_NBUCKETS];
    uint64_t live_bytes[SH_NBUCKETS];   /* usable bytes; exact buckets: count * upper */
    uint64_t req_count[SH_NBUCKETS];
    uint64_t req_bytes[SH_NBUCKETS];    /* exact buckets: count * upper */
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
