/* alloc_classes.c: size-class models of ebbmalloc, jemalloc 5.3 (16- and
 * 8-byte quantum), tcmalloc 2.10 and glibc (see alloc_classes.h).
 *
 * Each model is written from the allocator's documented behaviour and
 * checked against the allocator itself by tests/unit/test_alloc_classes.c
 * (usable sizes for every request up to 1 MiB, and the active bytes of a
 * large fill).  What each model says, in short:
 *
 *   ebbmalloc  8..128 by 8, then 8 classes per power of two up to 16 KiB;
 *              a slab spans the pages size_class.c picks (same rule here),
 *              its unused tail is shared by its blocks; a 48-byte span
 *              descriptor per slab plus ~3 KiB of page maps per 4 MiB chunk.
 *              Up to 2 MiB: whole 4 KiB pages; above: a mapping of its own
 *              with one header page.
 *   jemalloc   8, then multiples of the quantum up to 4 quanta, then four
 *              classes per power of two.  Small classes (< 16 KiB) live in
 *              slabs whose size is a common multiple of page and class: no
 *              tail.  Large ones get one extra page (cache-oblivious
 *              padding, on by default in 5.3).  A 128-byte extent
 *              descriptor per slab or large block.
 *   tcmalloc   85 classes up to 256 KiB, taken from tc_nallocx of 2.10; a
 *              span is the fewest 8 KiB pages whose tail is <= 1/8 of it;
 *              above 256 KiB whole 8 KiB pages.  A 48-byte span per span.
 *   libc       a chunk is the request plus an 8-byte size field rounded up
 *              to 16, at least 32; usable = chunk - 8.  From the mmap
 *              threshold on: a mapping of chunk + 8 rounded to 4 KiB pages,
 *              usable = mapping - 16.  Headers live inside the chunks. */
#include "alloc_classes.h"

#include <string.h>

#define KIB ((size_t)1024)

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

static unsigned floor_log2(size_t n) { return 63 - (unsigned)__builtin_clzl(n); }

/* ---------------------------------------------------------------- ebbmalloc */

#define EBB_PAGE (4 * KIB)
#define EBB_SMALL_MAX (16 * KIB)
#define EBB_LARGE_MAX (2 * KIB * KIB)
#define EBB_SPAN_DESC 48.0                             /* bytes: sizeof(ebb_span_t) */
#define EBB_CHUNK_MAPS (3.0 * KIB / (4.0 * KIB * KIB)) /* page maps per chunk byte */

static size_t ebb_class(size_t n) {
    if (n <= 128)
        return round_up(n, 8);
    size_t m = n - 1;
    unsigned k = floor_log2(m);
    return round_up(n, (size_t)1 << (k - 3));
}

/* size_class.c's slab length: for classes up to 128 bytes the fewest pages
 * (up to 4) whose tail plus descriptor is <= 1/256 of the slab; otherwise
 * the fewest pages (up to 15) whose tail is <= 1/128, else the least
 * wasteful. */
static size_t ebb_slab_pages(size_t size) {
    for (size_t n = 1; size <= 128 && n <= 4; n++) {
        size_t bytes = n * EBB_PAGE;
        if ((bytes % size + (size_t)EBB_SPAN_DESC) * 256 <= bytes)
            return n;
    }
    size_t best = 1, best_waste = (size_t)-1;
    for (size_t n = 1; n < 16; n++) {
        size_t bytes = n * EBB_PAGE;
        if (bytes < size)
            continue;
        size_t waste = bytes % size;
        if (waste * 128 <= bytes)
            return n;
        if (waste * 1024 / bytes < best_waste) {
            best_waste = waste * 1024 / bytes;
            best = n;
        }
    }
    return best;
}

static void ebb_block(size_t n, ac_block_t *b) {
    if (n <= EBB_SMALL_MAX) {
        size_t c = ebb_class(n), bytes = ebb_slab_pages(c) * EBB_PAGE, per = bytes / c;
        b->usable = c;
        b->active = (double)bytes / (double)per;
        b->metadata = EBB_SPAN_DESC / (double)per + b->active * EBB_CHUNK_MAPS;
        b->slab = bytes;
    } else if (n <= EBB_LARGE_MAX) {
        b->usable = round_up(n, EBB_PAGE);
        b->active = (double)b->usable;
        b->metadata = EBB_SPAN_DESC + b->active * EBB_CHUNK_MAPS;
    } else {
        b->usable = round_up(n, EBB_PAGE);
        b->active = (double)(b->usable + EBB_PAGE); /* header page */
        b->metadata = 0;
    }
}

/* ---------------------------------------------------------------- jemalloc */

#define JE_PAGE (4 * KIB)
#define JE_SMALL_MAX (14 * KIB) /* largest small class with 4 KiB pages */
#define JE_EDATA 128.0          /* bytes: one extent descriptor */

static size_t je_class(size_t n, size_t quantum) {
    if (n <= 8)
        return 8;
    if (n <= 4 * quantum)
        return round_up(n, quantum);
    unsigned k = floor_log2(n - 1);
    return round_up(n, (size_t)1 << (k - 2));
}

static size_t gcd(size_t a, size_t b) {
    while (b) {
        size_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static void je_block(size_t n, size_t quantum, ac_block_t *b) {
    size_t c = je_class(n, quantum);
    b->usable = c;
    if (c <= JE_SMALL_MAX) {
        size_t slab = c / gcd(c, JE_PAGE) * JE_PAGE; /* lcm(class, page) */
        b->active = (double)c;
        b->metadata = JE_EDATA * (double)c / (double)slab;
        b->slab = slab;
    } else {
        b->active = (double)(c + JE_PAGE);
        b->metadata = JE_EDATA;
    }
}

/* ---------------------------------------------------------------- tcmalloc */

#define TC_PAGE (8 * KIB)
#define TC_MAX (256 * KIB)
#define TC_SPAN 48.0 /* bytes: one Span */

static const unsigned tc_classes[] = {
    8, 16, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256,
    288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152,
    1280, 1408, 1536, 1792, 2048, 2304, 2560, 2816, 3072, 3328, 4096, 4608, 5120,
    6144, 6656, 8192, 9216, 10240, 12288, 13312, 16384, 20480, 24576, 26624,
    32768, 40960, 49152, 57344, 65536, 73728, 81920, 90112, 98304, 106496,
    114688, 122880, 131072, 139264, 147456, 155648, 163840, 172032, 180224,
    188416, 196608, 204800, 212992, 221184, 229376, 237568, 245760, 253952,
    262144};
#define TC_NCLASSES (sizeof(tc_classes) / sizeof(tc_classes[0]))

static size_t tc_class(size_t n) {
    size_t lo = 0, hi = TC_NCLASSES - 1; /* first class >= n, by bisection */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (tc_classes[mid] >= n)
            hi = mid;
        else
            lo = mid + 1;
    }
    return tc_classes[lo];
}

static size_t tc_span_bytes(size_t c) {
    size_t bytes = 0;
    do {
        bytes += TC_PAGE;
    } while (bytes % c > bytes / 8);
    return bytes;
}

static void tc_block(size_t n, ac_block_t *b) {
    if (n <= TC_MAX) {
        size_t c = tc_class(n), span = tc_span_bytes(c), per = span / c;
        b->usable = c;
        b->active = (double)span / (double)per;
        b->metadata = TC_SPAN / (double)per;
        b->slab = span;
    } else {
        b->usable = round_up(n, TC_PAGE);
        b->active = (double)b->usable;
        b->metadata = TC_SPAN;
    }
}

/* ---------------------------------------------------------------- glibc */

static void libc_block(size_t n, ac_block_t *b) {
    size_t chunk = round_up(n + 8, 16);
    if (chunk < 32)
        chunk = 32;
    if (chunk >= AC_LIBC_MMAP_THRESHOLD) {
        size_t map = round_up(chunk + 8, 4 * KIB);
        b->usable = map - 16;
        b->active = (double)map;
    } else {
        b->usable = chunk - 8;
        b->active = (double)chunk;
    }
    b->metadata = 0;
}

/* ---------------------------------------------------------------- API */

static const char *const names[AC_COUNT] = {
    [AC_EBBMALLOC] = "ebbmalloc", [AC_JEMALLOC] = "jemalloc", [AC_JEMALLOC_Q8] = "jemalloc-q8", [AC_TCMALLOC] = "tcmalloc", [AC_LIBC] = "libc"};

const char *ac_name(ac_id_t a) { return a < AC_COUNT ? names[a] : "?"; }

void ac_block(ac_id_t a, size_t req, ac_block_t *out) {
    if (req == 0)
        req = 1;
    memset(out, 0, sizeof(*out));
    switch (a) {
        case AC_EBBMALLOC: ebb_block(req, out); break;
        case AC_JEMALLOC: je_block(req, 16, out); break;
        case AC_JEMALLOC_Q8: je_block(req, 8, out); break;
        case AC_TCMALLOC: tc_block(req, out); break;
        default: libc_block(req, out); break;
    }
}

size_t ac_usable(ac_id_t a, size_t req) {
    ac_block_t b;
    ac_block(a, req, &b);
    return b.usable;
}

ac_id_t ac_current(const char *malloc_name) {
    if (!strcmp(malloc_name, "ebbmalloc"))
        return AC_EBBMALLOC;
    if (!strcmp(malloc_name, "jemalloc"))
        return AC_JEMALLOC;
    if (!strncmp(malloc_name, "tcmalloc", 8))
        return AC_TCMALLOC;
    if (!strcmp(malloc_name, "libc"))
        return AC_LIBC;
    return AC_COUNT;
}
