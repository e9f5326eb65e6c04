/* sizehist.c: the counters of the live allocation-size histogram (see
 * sizehist.h), a consistent-enough copy of them, and the split of the live
 * blocks by requested size that the allocator advice works from.
 * Called by zmalloc.c (counters) and by the server's MEMORY SIZES /
 * MEMORY ALLOCATOR-ADVICE (reads); allocates nothing itself. */
#include "sizehist.h"

#include <string.h>

uint64_t _sh_live_count[SH_NBUCKETS];
uint64_t _sh_live_bytes[SH_NBUCKETS];
uint64_t _sh_req_count[SH_NBUCKETS];
uint64_t _sh_req_bytes[SH_NBUCKETS];

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
        out->live_count[b] = __atomic_load_n(&_sh_live_count[b], __ATOMIC_RELAXED);
        out->req_count[b] = __atomic_load_n(&_sh_req_count[b], __ATOMIC_RELAXED);
        if (b < SH_EXACT) {
            out->live_bytes[b] = out->live_count[b] * sizehist_bucket_upper(b);
            out->req_bytes[b] = out->req_count[b] * sizehist_bucket_upper(b);
        } else {
            out->live_bytes[b] = __atomic_load_n(&_sh_live_bytes[b], __ATOMIC_RELAXED);
            out->req_bytes[b] = __atomic_load_n(&_sh_req_bytes[b], __ATOMIC_RELAXED);
        }
    }
}

/* A representative size of a bucket: its upper bound in the exact region
 * (every size there behaves the same), the mean of its sizes above. */
static size_t bucket_size(unsigned b, uint64_t count, uint64_t bytes) {
    if (b < SH_EXACT || count == 0)
        return b < SH_NBUCKETS - 1 ? sizehist_bucket_upper(b) : (size_t)1 << SH_LOG_END;
    return (size_t)(bytes / count);
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
        size_t req = bucket_size(b, h->req_count[b], h->req_bytes[b]);
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
        out[n].req = bucket_size(b, h->req_count[b], h->req_bytes[b]);
        out[n].count = live * (double)h->req_count[b] / (double)landed[u];
        n++;
    }
    for (unsigned u = 0; u < SH_NBUCKETS && n < cap; u++) {
        if (landed[u] || !h->live_count[u] || (int64_t)h->live_count[u] < 0)
            continue;
        out[n].req = bucket_size(u, h->live_count[u], h->live_bytes[u]);
        out[n].count = (double)h->live_count[u];
        n++;
    }
    return n;
}
