/* size_class.c: the size classes of small blocks and how many pages a slab
 * of each class spans.  Built once by _ebb_size_class_init() (called from
 * init.c); read everywhere, mostly through ebb_class_of() in internal.h.
 *
 * Classes: 8, 16, ..., 128 (8 apart: a key-value server's small objects,
 * e.g. a 3-byte string with its header, fit to the byte), then eight per
 * power of two: 144, 160, ..., 256, 288, ..., 15360, 16384.
 * Waste bound: below 128 bytes at most 7 bytes; above, a request s in
 * (2^k, 2^(k+1)] lands in a class at most 2^(k-3) - 1 bytes larger, so the
 * internal waste is < 12.5% of the request.  (With four per power of two a
 * 1 KB value's string, 1,030 bytes, took a 1,280-byte block: 24% lost on
 * every such value; now 1,152.)  Slabs are sized so the unused
 * tail is at most 1/128 of it where 1..15 pages allow, else the least
 * possible (test/test_api.c checks both); classes up to 128 bytes may take
 * up to 4 pages to keep tail plus descriptor under 1/256. */
#include "internal.h"

uint32_t _ebb_class_size[EBB_NCLASSES];
uint8_t _ebb_class_pages[EBB_NCLASSES];
uint8_t _ebb_class_lut[EBB_LUT_MAX / 8 + 1];

/* Class index of a request of 1..EBB_SMALL_MAX bytes, by arithmetic. */
unsigned _ebb_size_class_of(size_t size) {
    if (size <= 128)
        return size == 0 ? 0 : (unsigned)((size - 1) >> 3);
    size_t m = size - 1;
    unsigned k = 63 - (unsigned)__builtin_clzl(m); /* 2^k <= m < 2^(k+1) */
    return 16 + (k - 7) * 8 + (unsigned)((m - ((size_t)1 << k)) >> (k - 3));
}

/* A slab costs its unused tail plus one span descriptor in its chunk's
 * header (page.c hands descriptors out from a pool, so fewer, longer slabs
 * touch fewer header pages).  For the classes up to 128 bytes, which hold a
 * key-value server's small objects by the million and have hundreds of
 * blocks per slab at any length, take the fewest pages up to 4 whose tail
 * plus descriptor is <= 1/256 of the slab: the 24- and 48-byte classes of
 * a small key-value pair get 3-page slabs with no tail (1-page slabs lost
 * 16 bytes of every 4 KiB, and their descriptors another 1.2%).  Larger
 * classes keep short slabs, so few blocks pin a slab under churn.
 * Otherwise: the fewest pages whose tail is <= 1/128, else the least
 * wasteful.  (With 1/16 the 1280-byte class took 1-page slabs of 3 blocks
 * and a 256-byte tail: 6% of every 1 KB value lost; 5 pages hold 16 blocks
 * exactly.) */
static uint8_t slab_pages_for(size_t size) {
    for (unsigned n = 1; size <= 128 && n <= 4; n++) {
        size_t bytes = n * EBB_PAGE;
        if ((bytes % size + sizeof(ebb_span_t)) * 256 <= bytes)
            return (uint8_t)n;
    }
    unsigned best = 1;
    size_t best_waste = (size_t)-1;
    for (unsigned n = 1; n < 16; n++) {
        size_t bytes = n * EBB_PAGE;
        if (bytes < size)
            continue;
        size_t waste = bytes % size;
        if (waste * 128 <= bytes)
            return (uint8_t)n;
        if (waste * 1024 / bytes < best_waste) {
            best_waste = waste * 1024 / bytes;
            best = n;
        }
    }
    return (uint8_t)best;
}

void _ebb_size_class_init(void) {
    unsigned c = 0;
    for (size_t s = 8; s <= 128; s += 8)
        _ebb_class_size[c++] = (uint32_t)s;
    for (size_t base = 128; base < EBB_SMALL_MAX; base *= 2)
        for (size_t i = 1; i <= 8; i++)
            _ebb_class_size[c++] = (uint32_t)(base + i * (base / 8));
    for (c = 0; c < EBB_NCLASSES; c++)
        _ebb_class_pages[c] = slab_pages_for(_ebb_class_size[c]);
    /* read without a lock by other threads' first malloc (internal.h) */
    for (size_t i = 0; i <= EBB_LUT_MAX / 8; i++)
        __atomic_store_n(&_ebb_class_lut[i], (uint8_t)_ebb_size_class_of(i * 8),
                         __ATOMIC_RELAXED);
}
