/* intset.c: sorted array of integers with the narrowest cell width that
 * holds every member; see intset.h for the layout and invariants.
 *
 * Membership is a binary search, insertion and removal are a memmove of the
 * tail, so the set is only meant for the small sizes set-max-intset-entries
 * allows (512 by default).  Adding a member that does not fit the current
 * width "upgrades" the whole array to the wider cells first; such a member is
 * necessarily smaller or larger than every existing one, so it goes at one
 * end.  Cells are little-endian whatever the host, so the block can be
 * written to an RDB file as it is. */
#include "intset.h"

#include <stdlib.h>
#include <string.h>

#include "zmalloc.h"

#define INTSET_HDR ((size_t)offsetof(intset, cells))

/* ------------------------------ cell access ------------------------------ */

static uint32_t width_for(int64_t v) {
    if (v >= INT16_MIN && v <= INT16_MAX) return 2;
    if (v >= INT32_MIN && v <= INT32_MAX) return 4;
    return 8;
}

/* Read cell pos of an array of `width`-byte little-endian cells. */
static int64_t cell_read(const uint8_t *cells, uint32_t width, uint32_t pos) {
    const uint8_t *c = cells + (size_t)pos * width;
    uint64_t u = 0;
    for (uint32_t i = 0; i < width; i++) u |= (uint64_t)c[i] << (8 * i);
    /* sign-extend from width*8 bits */
    if (width < 8) {
        uint64_t sign = (uint64_t)1 << (width * 8 - 1);
        u = (u ^ sign) - sign;
    }
    return (int64_t)u;
}

static void cell_write(uint8_t *cells, uint32_t width, uint32_t pos, int64_t v) {
    uint8_t *c = cells + (size_t)pos * width;
    uint64_t u = (uint64_t)v;
    for (uint32_t i = 0; i < width; i++) c[i] = (uint8_t)(u >> (8 * i));
}

static int64_t get_at(const intset *is, uint32_t pos) {
    return cell_read(is->cells, is->width, pos);
}

static intset *resize(intset *is, uint32_t len) {
    return zrealloc(is, INTSET_HDR + (size_t)len * is->width);
}

/* Binary search: true and *pos = index if found, else false and *pos = the
 * index where v would be inserted to keep the order. */
static bool search(const intset *is, int64_t v, uint32_t *pos) {
    uint32_t lo = 0, hi = is->length; /* answer lies in [lo, hi] */
    if (is->length > 0) {
        /* The common cases of appending at either end skip the search. */
        if (v > get_at(is, is->length - 1)) {
            *pos = is->length;
            return false;
        }
        if (v < get_at(is, 0)) {
            *pos = 0;
            return false;
        }
    }
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int64_t cur = get_at(is, mid);
        if (cur == v) {
            *pos = mid;
            return true;
        }
        if (cur < v) lo = mid + 1;
        else hi = mid;
    }
    *pos = lo;
    return false;
}

/* ---------------------------------- API ---------------------------------- */

intset *intset_new(void) {
    intset *is = zmalloc(INTSET_HDR);
    is->width = 2;
    is->length = 0;
    return is;
}

void intset_free(intset *is) {
    zfree(is);
}

/* Rewrite every cell at the wider width and add v at the front (v < all) or
 * the back (v > all).  Walks from the end so no cell is overwritten before it
 * has been read (new cells are wider, so they end further right). */
static intset *upgrade_and_add(intset *is, int64_t v) {
    uint32_t old_w = is->width, len = is->length;
    uint32_t front = v < 0 ? 1 : 0;
    is->width = width_for(v);
    is = resize(is, len + 1);
    for (uint32_t i = len; i-- > 0;)
        cell_write(is->cells, is->width, i + front, cell_read(is->cells, old_w, i));
    cell_write(is->cells, is->width, front ? 0 : len, v);
    is->length = len + 1;
    return is;
}

intset *intset_add(intset *is, int64_t v, bool *added) {
    uint32_t pos;
    if (added) *added = true;
    if (width_for(v) > is->width) return upgrade_and_add(is, v);
    if (search(is, v, &pos)) {
        if (added) *added = false;
        return is;
    }
    is = resize(is, is->length + 1);
    uint8_t *at = is->cells + (size_t)pos * is->width;
    memmove(at + is->width, at, (size_t)(is->length - pos) * is->width);
    cell_write(is->cells, is->width, pos, v);
    is->length++;
    return is;
}

intset *intset_remove(intset *is, int64_t v, bool *removed) {
    uint32_t pos;
    if (removed) *removed = false;
    if (width_for(v) > is->width || !search(is, v, &pos)) return is;
    uint8_t *at = is->cells + (size_t)pos * is->width;
    memmove(at, at + is->width, (size_t)(is->length - pos - 1) * is->width);
    is->length--;
    if (removed) *removed = true;
    return resize(is, is->length);
}

bool intset_find(const intset *is, int64_t v) {
    uint32_t pos;
    return width_for(v) <= is->width && search(is, v, &pos);
}

bool intset_get(const intset *is, uint32_t pos, int64_t *v) {
    if (pos >= is->length) return false;
    *v = get_at(is, pos);
    return true;
}

uint32_t intset_len(const intset *is) {
    return is->length;
}

size_t intset_blob_len(const intset *is) {
    return INTSET_HDR + (size_t)is->length * is->width;
}

int64_t intset_random(const intset *is) {
    return get_at(is, (uint32_t)((unsigned long)random() % is->length));
}

int64_t intset_min(const intset *is) {
    return get_at(is, 0);
}

int64_t intset_max(const intset *is) {
    return get_at(is, is->length - 1);
}

intset *intset_dup(const intset *is) {
    return zmemdup(is, intset_blob_len(is));
}

static size_t decimal_len(int64_t v) {
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    size_t n = v < 0 ? 2 : 1;
    while (u >= 10) {
        u /= 10;
        n++;
    }
    return n;
}

size_t intset_max_strlen(const intset *is) {
    if (is->length == 0) return 0;
    size_t a = decimal_len(intset_min(is)), b = decimal_len(intset_max(is));
    return a > b ? a : b;
}

bool intset_fits(const intset *is, size_t max_entries) {
    return (size_t)is->length + 1 <= max_entries;
}

bool intset_validate(const void *buf, size_t size, bool deep) {
    intset hdr;
    if (size < INTSET_HDR) return false;
    memcpy(&hdr, buf, INTSET_HDR);
    if (hdr.width != 2 && hdr.width != 4 && hdr.width != 8) return false;
    if ((size - INTSET_HDR) / hdr.width != hdr.length ||
        (size - INTSET_HDR) % hdr.width != 0) return false;
    if (!deep) return true;
    const uint8_t *cells = (const uint8_t *)buf + INTSET_HDR;
    for (uint32_t i = 1; i < hdr.length; i++)
        if (cell_read(cells, hdr.width, i - 1) >= cell_read(cells, hdr.width, i))
            return false;
    return true;
}

size_t intset_mem_usage(const intset *is) {
    return zmalloc_size(is);
}
