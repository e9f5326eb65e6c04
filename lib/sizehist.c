/* sizehist.c: the counters of the live allocation-size histogram (see
 * sizehist.h), a consistent-enough copy of them, and the split of the live
 * blocks by requested size that the allocator advice works from.
 * Called by zmalloc.c (counters) and by the server's MEMORY SIZES /
 * MEMORY ALLOCATOR-ADVICE (reads); allocates nothing itself. */
#include "sizehist.h"

#include <string.h>

sh_counters_t _sh_owner, _sh_shared;
__thread bool _sh_is_owner;
uint64_t _sh_recent[1u << SH_RECENT_SHIFT];

void sizehist_own_thread(void) { _sh_is_owner = true; }

/* One counter, both sets summed (each read is a whole 64-bit word). */
static uint64_t sum(const uint64_t *owner, const uint64_t *shared) {
    return __atomic_load_n(owner, __ATOMIC_RELAXED) + __atomic_load_n(shared, __ATOMIC_RELAXED);
}

size_t sizehist_bucket_upper(unsigned b) {
    if (b < SH_EXACT)
        return ((size_t)b + 1) * 8;
    if (b >= SH_NBUCKETS - 1)
        return SIZE_MAX;
    unsigned k = SH_LOG_START + (b - SH_EXACT) / SH_SUB, j = (b - SH_EXACT) % SH_SUB;
    return ((size_t)1 << k) + ((size_t)(j + 1) << (k - 4));
}

void sizehist_read(sizehist_t *out) {
    for (unsigned b = 0; b < SH_NBUCKETS; b++) {
        out->live_count[b] = sum(&_sh_owner.live_count[b], &_sh_shared.live_count[b]);
        out->req_count[b] = sum(&_sh_owner.req_count[b], &_sh_shared.req_count[b]);
        /* A free recognised on the other side of a lost slot race can take
         * a request count below zero: count it as none. */
        if ((int64_t)out->req_count[b] < 0) out->req_count[b] = 0;
        if (b < SH_EXACT) {
            out->live_bytes[b] = out->live_count[b] * sizehist_bucket_upper(b);
            out->req_mean[b] = sizehist_bucket_upper(b);
        } else {
            out->live_bytes[b] = sum(&_sh_owner.live_bytes[b], &_sh_shared.live_bytes[b]);
            uint64_t total = sum(&_sh_owner.req_total[b], &_sh_shared.req_total[b]);
            uint64_t bytes = sum(&_sh_owner.req_bytes[b], &_sh_shared.req_bytes[b]);
            out->req_mean[b] = total ? bytes / total : sizehist_bucket_upper(b - 1) + 1;
        }
    }
}

/* The size of the live blocks of a bucket with no request to match: their
 * mean usable size. */
static size_t live_size(const sizehist_t *h, unsigned b) {
    return b < SH_EXACT ? sizehist_bucket_upper(b) : (size_t)(h->live_bytes[b] / h->live_count[b]);
}

/* Two passes over the request buckets: first how many requests landed in
 * each live bucket of this build, then each request bucket's share of that
 * live bucket's blocks. */
size_t sizehist_live_requests(const sizehist_t *h, size_t (*usable_of)(size_t req),
                              sizehist_group_t *out, size_t cap) {
    static __thread uint64_t landed[SH_NBUCKETS];   /* requests per live bucket */
    static __thread uint16_t lands_in[SH_NBUCKETS]; /* request bucket -> live bucket */
    size_t n = 0;
    memset(landed, 0, sizeof(landed));
    for (unsigned b = 0; b < SH_NBUCKETS; b++) {
        if (!h->req_count[b])
            continue;
        size_t req = h->req_mean[b];
        lands_in[b] = (uint16_t)sizehist_bucket(usable_of(req));
        landed[lands_in[b]] += h->req_count[b];
    }
    for (unsigned b = 0; b < SH_NBUCKETS && n < cap; b++) {
        if (!h->req_count[b])
            continue;
        unsigned u = lands_in[b];
        double live = (double)h->live_count[u];
        if (live <= 0 || (int64_t)h->live_count[u] < 0)
            continue;
        out[n].req = h->req_mean[b];
        out[n].count = live * (double)h->req_count[b] / (double)landed[u];
        n++;
    }
    for (unsigned u = 0; u < SH_NBUCKETS && n < cap; u++) {
        if (landed[u] || !h->live_count[u] || (int64_t)h->live_count[u] < 0)
            continue;
        out[n].req = live_size(h, u);
        out[n].count = (double)h->live_count[u];
        n++;
    }
    return n;
}
