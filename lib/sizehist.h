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

#define SH_EXACT_MAX 4096           /* bytes: end of the 8-byte buckets */
#define SH_EXACT (SH_EXACT_MAX / 8) /* 512 exact buckets */
#define SH_LOG_START 12             /* log buckets from 2^12 bytes */
#define SH_LOG_END 48               /* ... to 2^48 (last one open) */
#define SH_SUB 16                   /* log buckets per power of two */
#define SH_NBUCKETS (SH_EXACT + (SH_LOG_END - SH_LOG_START) * SH_SUB)
#define SH_RECENT_SHIFT 12 /* 4096 slots of recent blocks */

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

/* The counters (sizehist.c); use the functions below.  Two sets: one that
 * only the owner thread (the server's main thread, which makes nearly every
 * allocation) writes, with plain loads and stores and no locked
 * instruction, and one that every other thread updates with atomic adds.
 * A reader sums the two (modulo 2^64: a block allocated on one side and
 * freed on the other nets out). */
typedef struct sh_counters {
    uint64_t live_count[SH_NBUCKETS];
    uint64_t live_bytes[SH_NBUCKETS]; /* usable bytes, log buckets only */
    uint64_t req_count[SH_NBUCKETS];
    uint64_t req_total[SH_NBUCKETS]; /* requests ever, log buckets only */
    uint64_t req_bytes[SH_NBUCKETS]; /* their bytes, log buckets only */
} sh_counters_t;
extern sh_counters_t _sh_owner, _sh_shared;
extern __thread bool _sh_is_owner;
/* Recent blocks: slot = hash(ptr); value = ptr << 16 | request bucket, 0
 * when empty.  Pointers fit in 48 bits and buckets in 16.  Plain 64-bit
 * loads and stores from any thread: a race between two threads on one slot
 * can only lose an entry (that block's free is then not recognised). */
extern uint64_t _sh_recent[1u << SH_RECENT_SHIFT];

/* The calling thread becomes the owner (call once, from the thread that
 * allocates most: the server's main thread, before any other starts). */
void sizehist_own_thread(void);

static inline unsigned sizehist_slot(uintptr_t addr) {
    return (unsigned)((addr >> 4) * 0x9E3779B97F4A7C15ull >> (64 - SH_RECENT_SHIFT));
}

/* CFLAGS=-DRL_NO_SIZEHIST builds the server without the counting (the
 * histogram stays empty): only for measuring what the counting costs
 * (utils/bench/bench-sizehist-overhead.py). */
#ifdef RL_NO_SIZEHIST
#define SH_COUNTING 0
#else
#define SH_COUNTING 1
#endif

/* counter += v: field is the offset of one counter inside sh_counters_t. */
static inline void sh_add(size_t field, uint64_t v) {
    if (_sh_is_owner) {
        uint64_t *c = (uint64_t *)((char *)&_sh_owner + field);
        __atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
    } else {
        __atomic_fetch_add((uint64_t *)((char *)&_sh_shared + field), v, __ATOMIC_RELAXED);
    }
}
#define SH_FIELD(name, i) (offsetof(sh_counters_t, name) + (size_t)(i) * sizeof(uint64_t))

/* A live block of `usable` bytes appeared (an allocation, or a block moved
 * by defrag, which asks for nothing new). */
static inline void sizehist_live_add(size_t usable) {
    if (!SH_COUNTING) return;
    unsigned u = sizehist_bucket(usable);
    sh_add(SH_FIELD(live_count, u), 1);
    if (u >= SH_EXACT) sh_add(SH_FIELD(live_bytes, u), usable);
}

/* A live block of `usable` bytes went away (a free, or the old copy of a
 * block moved by defrag). */
static inline void sizehist_live_sub(size_t usable) {
    if (!SH_COUNTING) return;
    unsigned u = sizehist_bucket(usable);
    sh_add(SH_FIELD(live_count, u), (uint64_t)-1);
    if (u >= SH_EXACT) sh_add(SH_FIELD(live_bytes, u), (uint64_t)0 - usable);
}

/* The block at addr, `usable` bytes, was handed out for a request of `req`
 * bytes.  Byte sums of requests are cumulative (the mean size of a wide
 * bucket), kept only above the exact region. */
static inline void sizehist_on_alloc(uintptr_t addr, size_t req, size_t usable) {
    if (!SH_COUNTING) return;
    unsigned r = sizehist_bucket(req);
    sh_add(SH_FIELD(req_count, r), 1);
    if (r >= SH_EXACT) {
        sh_add(SH_FIELD(req_total, r), 1);
        sh_add(SH_FIELD(req_bytes, r), req);
    }
    __atomic_store_n(&_sh_recent[sizehist_slot(addr)], (uint64_t)addr << 16 | r, __ATOMIC_RELAXED);
    sizehist_live_add(usable);
}

/* The block at addr, `usable` bytes, is being freed (an address, not a
 * pointer: realloc's caller passes the old block's, which is dead).  If it
 * is still the recent block of its slot, its request is known: take it back
 * and empty the slot. */
static inline void sizehist_on_free(uintptr_t addr, size_t usable) {
    if (!SH_COUNTING) return;
    uint64_t *slot = &_sh_recent[sizehist_slot(addr)];
    uint64_t v = __atomic_load_n(slot, __ATOMIC_RELAXED);
    if (v >> 16 == (uint64_t)addr) {
        __atomic_store_n(slot, 0, __ATOMIC_RELAXED);
        sh_add(SH_FIELD(req_count, v & 0xFFFF), (uint64_t)-1);
    }
    sizehist_live_sub(usable);
}

/* A copy of the counters, taken bucket by bucket (a block allocated or freed
 * during the copy may be seen in one table and not the other). */
typedef struct sizehist {
    uint64_t live_count[SH_NBUCKETS];
    uint64_t live_bytes[SH_NBUCKETS]; /* usable bytes; exact buckets: count * upper */
    uint64_t req_count[SH_NBUCKETS];  /* requests not seen freed */
    uint64_t req_mean[SH_NBUCKETS];   /* mean request ever (exact buckets: upper) */
} sizehist_t;
void sizehist_read(sizehist_t *out);

/* One group of live blocks with (estimated) one requested size. */
typedef struct sizehist_group {
    size_t req;   /* bytes asked for per block */
    double count; /* live blocks (a fraction after the split) */
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
