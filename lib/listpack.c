/* listpack.c: entries of strings and integers packed in one buffer; the
 * byte layout and invariants are drawn in listpack.h.
 *
 * Every change funnels through lp_splice(), which replaces a byte range by a
 * gap of another size (memmove of the tail plus one zrealloc to the exact new
 * size), so the bookkeeping of `total` lives in one place.  The buffer is
 * always exactly `total` bytes: used_memory sees no hidden slack beyond the
 * allocator's own rounding.  Costs: walking is O(n), insert/delete O(n) for
 * the memmove; callers keep listpacks small (the *-max-listpack-* limits). */
#include "listpack.h"
#include "rl_assert.h"

#include <stdio.h>
#include <string.h>

#include "zmalloc.h"

/* Redis reads our listpacks as RDB blobs: 32-bit total bytes, 16-bit count. */
static_assert(LP_HDR_SIZE == 4 + 2, "listpack header layout is Redis's");

#define LP_END 0xFF
#define LP_COUNT_UNKNOWN 0xFFFF

/* Encoding tags of the multi-byte forms (first byte of the entry). */
#define LP_STR32 0xF0
#define LP_INT16 0xF1
#define LP_INT24 0xF2
#define LP_INT32 0xF3
#define LP_INT64 0xF4

/* ------------------------- little-endian fields -------------------------- */

static uint64_t rd_le(const unsigned char *p, unsigned n) {
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void wr_le(unsigned char *p, uint64_t v, unsigned n) {
    for (unsigned i = 0; i < n; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static size_t lp_total(const unsigned char *lp) { return (size_t)rd_le(lp, 4); }
static void lp_set_total(unsigned char *lp, size_t t) { wr_le(lp, t, 4); }
static unsigned lp_count_raw(const unsigned char *lp) { return (unsigned)rd_le(lp + 4, 2); }

/* Adjust the cached count; once it has saturated it stays "unknown". */
static void lp_count_add(unsigned char *lp, long delta) {
    unsigned raw = lp_count_raw(lp);
    if (raw == LP_COUNT_UNKNOWN) return;
    long n = (long)raw + delta;
    wr_le(lp + 4, n >= LP_COUNT_UNKNOWN ? LP_COUNT_UNKNOWN : (uint64_t)n, 2);
}

/* ------------------------------ entry sizes ------------------------------ */

/* Bytes of the encoding header plus data of the entry starting at p. */
static size_t body_size(const unsigned char *p) {
    unsigned char b = p[0];
    if (b < 0x80) return 1;
    if ((b & 0xC0) == 0x80) return 1 + (size_t)(b & 0x3F);
    if ((b & 0xE0) == 0xC0) return 2;
    if ((b & 0xF0) == 0xE0) return 2 + (((size_t)(b & 0x0F) << 8) | p[1]);
    switch (b) {
        case LP_STR32: return 5 + (size_t)rd_le(p + 1, 4);
        case LP_INT16: return 3;
        case LP_INT24: return 4;
        case LP_INT32: return 5;
        case LP_INT64: return 9;
        default: return 0; /* end marker or invalid: not an entry */
    }
}

/* Header bytes that must be readable before body_size(p) is meaningful. */
static size_t header_need(unsigned char b) {
    if (b < 0x80 || (b & 0xC0) == 0x80) return 1;
    if ((b & 0xE0) == 0xC0 || (b & 0xF0) == 0xE0) return 2;
    return b == LP_STR32 ? 5 : 1;
}

/* Bytes of the back-length.  Redis switches to the next size one value
 * early (16383, not 16384, takes three bytes) and its reader insists on
 * exactly its own sizes, so ours are the same: a listpack we write to an
 * RDB file must load there byte for byte. */
static unsigned backlen_size(size_t body) {
    if (body < (1u << 7)) return 1;
    if (body < (1u << 14) - 1) return 2;
    if (body < (1u << 21) - 1) return 3;
    if (body < (1u << 28) - 1) return 4;
    return 5;
}

/* Rightmost byte = low 7 bits; a set high bit says a byte follows leftwards. */
static void backlen_write(unsigned char *dst, size_t body) {
    unsigned n = backlen_size(body);
    for (unsigned i = n; i-- > 0;) {
        dst[i] = (unsigned char)(body & 0x7F) | (i > 0 ? 0x80 : 0);
        body >>= 7;
    }
}

/* Read a back-length whose last byte is at `last`; *nbytes gets its size.
 * Reads at most 5 bytes and never left of `floor`; returns SIZE_MAX if the
 * encoding runs past either limit. */
static size_t backlen_read(const unsigned char *last, const unsigned char *floor,
                           unsigned *nbytes) {
    size_t v = 0;
    for (unsigned i = 0; i < 5; i++) {
        if (last - i < floor) break;
        unsigned char b = *(last - i);
        v |= (size_t)(b & 0x7F) << (7 * i);
        if (!(b & 0x80)) {
            if (nbytes) *nbytes = i + 1;
            return v;
        }
    }
    return SIZE_MAX;
}

static size_t entry_size(const unsigned char *p) {
    size_t body = body_size(p);
    return body + backlen_size(body);
}

/* ------------------------------- encoding -------------------------------- */

/* An entry about to be written: the header (whole entry for integers) and
 * the string data, which is not copied until the write. */
typedef struct lp_enc {
    unsigned char hdr[9];
    size_t hdr_len;
    const unsigned char *data;
    size_t data_len;
} lp_enc_t;

static void enc_int(lp_enc_t *e, long long v) {
    e->data = NULL;
    e->data_len = 0;
    if (v >= 0 && v <= 127) {
        e->hdr[0] = (unsigned char)v;
        e->hdr_len = 1;
    } else if (v >= -4096 && v <= 4095) {
        unsigned u = (unsigned)v & 0x1FFF;
        e->hdr[0] = (unsigned char)(0xC0 | (u >> 8));
        e->hdr[1] = (unsigned char)(u & 0xFF);
        e->hdr_len = 2;
    } else {
        unsigned n;
        if (v >= INT16_MIN && v <= INT16_MAX) {
            e->hdr[0] = LP_INT16;
            n = 2;
        } else if (v >= -(1LL << 23) && v < (1LL << 23)) {
            e->hdr[0] = LP_INT24;
            n = 3;
        } else if (v >= INT32_MIN && v <= INT32_MAX) {
            e->hdr[0] = LP_INT32;
            n = 4;
        } else {
            e->hdr[0] = LP_INT64;
            n = 8;
        }
        wr_le(e->hdr + 1, (uint64_t)v, n);
        e->hdr_len = 1 + n;
    }
}

static void enc_str(lp_enc_t *e, const void *s, size_t len) {
    long long v;
    if (lp_string_to_int64(s, len, &v)) {
        enc_int(e, v);
        return;
    }
    e->data = s;
    e->data_len = len;
    if (len < 64) {
        e->hdr[0] = (unsigned char)(0x80 | len);
        e->hdr_len = 1;
    } else if (len < 4096) {
        e->hdr[0] = (unsigned char)(0xE0 | (len >> 8));
        e->hdr[1] = (unsigned char)(len & 0xFF);
        e->hdr_len = 2;
    } else {
        e->hdr[0] = LP_STR32;
        wr_le(e->hdr + 1, len, 4);
        e->hdr_len = 5;
    }
}

static size_t enc_size(const lp_enc_t *e) {
    size_t body = e->hdr_len + e->data_len;
    return body + backlen_size(body);
}

static void enc_write(unsigned char *dst, const lp_enc_t *e) {
    memcpy(dst, e->hdr, e->hdr_len);
    if (e->data_len) memcpy(dst + e->hdr_len, e->data, e->data_len);
    backlen_write(dst + e->hdr_len + e->data_len, e->hdr_len + e->data_len);
}

/* --------------------------- the one mutator ----------------------------- */

/* Replace the `del` bytes at offset `off` by a gap of `ins` bytes (contents
 * undefined) and fix `total`.  Grows before moving and shrinks after, so the
 * tail is never lost.  Returns the possibly moved buffer. */
static unsigned char *lp_splice(unsigned char *lp, size_t off, size_t del, size_t ins) {
    size_t total = lp_total(lp);
    /* Only entries change: the header and the end byte stay where they are. */
    rl_assert(off >= LP_HDR_SIZE && off + del <= total - 1);
    size_t tail = total - off - del;
    size_t ntotal = total - del + ins;
    if (ins > del) {
        lp = zrealloc(lp, ntotal);
        memmove(lp + off + ins, lp + off + del, tail);
    } else if (ins < del) {
        memmove(lp + off + ins, lp + off + del, tail);
        lp = zrealloc(lp, ntotal);
    }
    lp_set_total(lp, ntotal);
    return lp;
}

/* ---------------------------- create / free ------------------------------ */

unsigned char *lp_new(void) {
    unsigned char *lp = zmalloc(LP_HDR_SIZE + 1);
    lp_set_total(lp, LP_HDR_SIZE + 1);
    wr_le(lp + 4, 0, 2);
    lp[LP_HDR_SIZE] = LP_END;
    return lp;
}

void lp_free(unsigned char *lp) {
    zfree(lp);
}

unsigned char *lp_shrink_to_fit(unsigned char *lp) {
    return zrealloc(lp, lp_total(lp));
}

unsigned char *lp_dup(const unsigned char *lp) {
    return zmemdup(lp, lp_total(lp));
}

/* -------------------------------- adding --------------------------------- */

static unsigned char *insert_enc(unsigned char *lp, const lp_enc_t *e,
                                 unsigned char *p, int where, unsigned char **newp) {
    if (where == LP_AFTER && *p != LP_END) p += entry_size(p);
    size_t off = (size_t)(p - lp);
    lp = lp_splice(lp, off, 0, enc_size(e));
    enc_write(lp + off, e);
    lp_count_add(lp, 1);
    if (newp) *newp = lp + off;
    return lp;
}

unsigned char *lp_insert(unsigned char *lp, const void *s, size_t len,
                         unsigned char *p, int where, unsigned char **newp) {
    lp_enc_t e;
    enc_str(&e, s, len);
    return insert_enc(lp, &e, p, where, newp);
}

unsigned char *lp_insert_int(unsigned char *lp, long long v, unsigned char *p,
                             int where, unsigned char **newp) {
    lp_enc_t e;
    enc_int(&e, v);
    return insert_enc(lp, &e, p, where, newp);
}

unsigned char *lp_append(unsigned char *lp, const void *s, size_t len) {
    return lp_insert(lp, s, len, lp + lp_total(lp) - 1, LP_BEFORE, NULL);
}

unsigned char *lp_append_int(unsigned char *lp, long long v) {
    return lp_insert_int(lp, v, lp + lp_total(lp) - 1, LP_BEFORE, NULL);
}

unsigned char *lp_append_batch(unsigned char *lp, const lp_item_t *items, size_t n) {
    lp_enc_t stack[32];
    lp_enc_t *enc = n <= 32 ? stack : zmalloc(sizeof(*enc) * n);
    size_t add = 0;
    for (size_t i = 0; i < n; i++) {
        if (items[i].s) enc_str(&enc[i], items[i].s, items[i].len);
        else enc_int(&enc[i], items[i].v);
        add += enc_size(&enc[i]);
    }
    size_t off = lp_total(lp) - 1; /* the end marker */
    lp = lp_splice(lp, off, 0, add);
    for (size_t i = 0; i < n; i++) {
        enc_write(lp + off, &enc[i]);
        off += enc_size(&enc[i]);
    }
    lp_count_add(lp, (long)n);
    if (enc != stack) zfree(enc);
    return lp;
}

unsigned char *lp_prepend(unsigned char *lp, const void *s, size_t len) {
    return lp_insert(lp, s, len, lp + LP_HDR_SIZE, LP_BEFORE, NULL);
}

unsigned char *lp_prepend_int(unsigned char *lp, long long v) {
    return lp_insert_int(lp, v, lp + LP_HDR_SIZE, LP_BEFORE, NULL);
}

static unsigned char *replace_enc(unsigned char *lp, unsigned char **p, const lp_enc_t *e) {
    size_t off = (size_t)(*p - lp);
    lp = lp_splice(lp, off, entry_size(*p), enc_size(e));
    enc_write(lp + off, e);
    *p = lp + off;
    return lp;
}

unsigned char *lp_replace(unsigned char *lp, unsigned char **p, const void *s, size_t len) {
    lp_enc_t e;
    enc_str(&e, s, len);
    return replace_enc(lp, p, &e);
}

unsigned char *lp_replace_int(unsigned char *lp, unsigned char **p, long long v) {
    lp_enc_t e;
    enc_int(&e, v);
    return replace_enc(lp, p, &e);
}

unsigned char *lp_merge(unsigned char *lp, const unsigned char *other) {
    size_t n = lp_total(other) - LP_HDR_SIZE - 1;
    size_t off = lp_total(lp) - 1;
    unsigned long cnt = lp_length(other);
    lp = lp_splice(lp, off, 0, n);
    memcpy(lp + off, other + LP_HDR_SIZE, n);
    lp_count_add(lp, (long)cnt);
    return lp;
}

/* ------------------------------- deleting -------------------------------- */

/* A saturated count cannot be decremented; after a delete, count again so
 * a listpack that shrank below the limit gets its O(1) length back.  Only
 * listpacks of 65535+ entries pay this walk. */
static void lp_recount(unsigned char *lp) {
    unsigned long n = 0;
    for (const unsigned char *p = lp + LP_HDR_SIZE; *p != LP_END; p += entry_size(p)) n++;
    wr_le(lp + 4, n >= LP_COUNT_UNKNOWN ? LP_COUNT_UNKNOWN : n, 2);
}

unsigned char *lp_delete_range_at(unsigned char *lp, unsigned char **p, unsigned long num) {
    unsigned char *q = *p;
    unsigned long n = 0;
    while (n < num && *q != LP_END) {
        q += entry_size(q);
        n++;
    }
    size_t off = (size_t)(*p - lp);
    lp = lp_splice(lp, off, (size_t)(q - *p), 0);
    lp_count_add(lp, -(long)n);
    if (lp_count_raw(lp) == LP_COUNT_UNKNOWN) lp_recount(lp);
    *p = lp[off] == LP_END ? NULL : lp + off;
    return lp;
}

unsigned char *lp_delete(unsigned char *lp, unsigned char *p, unsigned char **newp) {
    lp = lp_delete_range_at(lp, &p, 1);
    if (newp) *newp = p;
    return lp;
}

unsigned char *lp_delete_range(unsigned char *lp, long index, unsigned long num) {
    unsigned char *p = lp_seek(lp, index);
    if (!p || num == 0) return lp;
    return lp_delete_range_at(lp, &p, num);
}

/* -------------------------------- walking -------------------------------- */

unsigned char *lp_first(unsigned char *lp) {
    unsigned char *p = lp + LP_HDR_SIZE;
    return *p == LP_END ? NULL : p;
}

unsigned char *lp_next(unsigned char *lp, unsigned char *p) {
    (void)lp;
    p += entry_size(p);
    return *p == LP_END ? NULL : p;
}

/* Also works with p at the end marker, which yields the last entry. */
unsigned char *lp_prev(unsigned char *lp, unsigned char *p) {
    if (p == lp + LP_HDR_SIZE) return NULL;
    unsigned nb = 0;
    size_t body = backlen_read(p - 1, lp + LP_HDR_SIZE, &nb);
    return p - nb - body;
}

unsigned char *lp_last(unsigned char *lp) {
    return lp_prev(lp, lp + lp_total(lp) - 1);
}

unsigned char *lp_seek(unsigned char *lp, long index) {
    unsigned long n = lp_length(lp);
    if (index < 0) index += (long)n;
    if (index < 0 || (unsigned long)index >= n) return NULL;
    unsigned char *p;
    if ((unsigned long)index < n / 2) {
        p = lp_first(lp);
        while (index-- > 0) p += entry_size(p);
    } else {
        p = lp_last(lp);
        for (unsigned long i = n - 1; i > (unsigned long)index; i--) p = lp_prev(lp, p);
    }
    return p;
}

/* -------------------------------- reading -------------------------------- */

const unsigned char *lp_get(const unsigned char *p, size_t *len, long long *ival) {
    unsigned char b = p[0];
    if (b < 0x80) {
        *ival = b;
        return NULL;
    }
    if ((b & 0xC0) == 0x80) {
        *len = b & 0x3F;
        return p + 1;
    }
    if ((b & 0xE0) == 0xC0) {
        long long u = ((long long)(b & 0x1F) << 8) | p[1];
        *ival = (u & 0x1000) ? u - 0x2000 : u;
        return NULL;
    }
    if ((b & 0xF0) == 0xE0) {
        *len = ((size_t)(b & 0x0F) << 8) | p[1];
        return p + 2;
    }
    switch (b) {
        case LP_STR32: *len = (size_t)rd_le(p + 1, 4); return p + 5;
        case LP_INT16: *ival = (int16_t)rd_le(p + 1, 2); return NULL;
        case LP_INT24: {
            long long u = (long long)rd_le(p + 1, 3);
            *ival = (u & 0x800000) ? u - 0x1000000 : u;
            return NULL;
        }
        case LP_INT32: *ival = (int32_t)rd_le(p + 1, 4); return NULL;
        default: *ival = (long long)rd_le(p + 1, 8); return NULL; /* LP_INT64 */
    }
}

const unsigned char *lp_get_str(const unsigned char *p, size_t *len, char *buf) {
    long long v;
    const unsigned char *s = lp_get(p, len, &v);
    if (s) return s;
    *len = (size_t)snprintf(buf, LP_INTBUF_SIZE, "%lld", v);
    return (const unsigned char *)buf;
}

bool lp_get_int(const unsigned char *p, long long *v) {
    size_t len;
    return lp_get(p, &len, v) == NULL;
}

size_t lp_value_strlen(const unsigned char *p) {
    char buf[LP_INTBUF_SIZE];
    size_t len;
    lp_get_str(p, &len, buf);
    return len;
}

bool lp_entry_equal(const unsigned char *p, const void *s, size_t len) {
    size_t elen;
    long long v, sv;
    const unsigned char *e = lp_get(p, &elen, &v);
    if (e) return elen == len && memcmp(e, s, len) == 0;
    return lp_string_to_int64(s, len, &sv) && sv == v;
}

int lp_entry_cmp(const unsigned char *p, const void *s, size_t len) {
    char buf[LP_INTBUF_SIZE];
    size_t elen;
    const unsigned char *e = lp_get_str(p, &elen, buf);
    size_t n = elen < len ? elen : len;
    int c = n ? memcmp(e, s, n) : 0;
    if (c) return c;
    return elen < len ? -1 : elen > len ? 1
                                        : 0;
}

/* The needle's integer form is computed once, then each visited entry is a
 * single byte compare of lengths or of integers. */
unsigned char *lp_find(unsigned char *lp, unsigned char *p, const void *s,
                       size_t len, unsigned skip) {
    long long sv;
    bool s_is_int = lp_string_to_int64(s, len, &sv);
    (void)lp;
    while (p && *p != LP_END) {
        size_t elen;
        long long v;
        const unsigned char *e = lp_get(p, &elen, &v);
        if (e ? (elen == len && memcmp(e, s, len) == 0) : (s_is_int && v == sv))
            return p;
        for (unsigned i = 0; i <= skip; i++) {
            p += entry_size(p);
            if (*p == LP_END) return NULL;
        }
    }
    return NULL;
}

unsigned long lp_length(const unsigned char *lp) {
    unsigned raw = lp_count_raw(lp);
    if (raw != LP_COUNT_UNKNOWN) return raw;
    unsigned long n = 0;
    for (const unsigned char *p = lp + LP_HDR_SIZE; *p != LP_END; p += entry_size(p)) n++;
    return n;
}

size_t lp_bytes(const unsigned char *lp) {
    return lp_total(lp);
}

size_t lp_mem_usage(const unsigned char *lp) {
    return zmalloc_size(lp);
}

/* --------------------------- conversion helpers -------------------------- */

bool lp_string_to_int64(const void *str, size_t len, long long *v) {
    const unsigned char *s = str;
    size_t i = 0;
    bool neg = false;
    if (len == 0 || len > 20) return false;
    if (s[0] == '-') {
        neg = true;
        i = 1;
        if (len == 1) return false;
    }
    if (s[i] == '0') { /* only "0" itself */
        if (len == 1) {
            *v = 0;
            return true;
        }
        return false;
    }
    uint64_t u = 0;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        unsigned d = s[i] - '0';
        if (u > (UINT64_MAX - d) / 10) return false;
        u = u * 10 + d;
    }
    if (neg) {
        if (u > (uint64_t)INT64_MAX + 1) return false;
        *v = (long long)(0 - u);
    } else {
        if (u > (uint64_t)INT64_MAX) return false;
        *v = (long long)u;
    }
    return true;
}

/* Packed encodings stay far below the 4 GB their 32-bit sizes can count:
 * past this, hashes, sets and sorted sets convert, XADD starts a node or
 * refuses the record, a list refuses the element.  Only a test lowers it
 * (the one mutable global here, written from the main thread only). */
static size_t safety_limit = LP_SAFETY_SIZE;

size_t lp_safety_limit(void) { return safety_limit; }
void lp_set_safety_limit(size_t bytes) { safety_limit = bytes ? bytes : LP_SAFETY_SIZE; }

bool lp_safe_to_add(const unsigned char *lp, size_t add) {
    size_t cur = lp ? lp_total(lp) : 0;
    return cur + add <= safety_limit;
}

bool lp_fits(const unsigned char *lp, size_t max_entries, size_t max_value) {
    if (lp_length(lp) > max_entries) return false;
    for (const unsigned char *p = lp + LP_HDR_SIZE; *p != LP_END; p += entry_size(p))
        if (lp_value_strlen(p) > max_value) return false;
    return true;
}

size_t lp_encoded_size(const void *s, size_t len) {
    lp_enc_t e;
    enc_str(&e, s, len);
    return enc_size(&e);
}

bool lp_entries_unique(unsigned char *lp, unsigned skip) {
    for (unsigned char *p = lp_first(lp); p;) {
        unsigned char *next = p;
        for (unsigned i = 0; i <= skip && next; i++) next = lp_next(lp, next);
        if (!next) return true;
        char buf[LP_INTBUF_SIZE];
        size_t len;
        const unsigned char *s = lp_get_str(p, &len, buf);
        if (lp_find(lp, next, s, len, skip)) return false;
        p = next;
    }
    return true;
}

/* --------------------------------- validate ------------------------------ */

/* Check the entry at p fits before `end` (the end marker) and is coherent;
 * returns its size or 0 if it is not. */
static size_t validate_entry(const unsigned char *p, const unsigned char *end) {
    size_t room = (size_t)(end - p);
    unsigned char b = p[0];
    if (b > LP_INT64) return 0; /* 0xF5..0xFE invalid, 0xFF end */
    if (header_need(b) > room) return 0;
    size_t body = body_size(p);
    if (body == 0 || body > room) return 0;
    unsigned bl = backlen_size(body);
    if (bl > room - body) return 0;
    unsigned got = 0;
    if (backlen_read(p + body + bl - 1, p + body, &got) != body || got != bl) return 0;
    return body + bl;
}

bool lp_validate(const unsigned char *buf, size_t size, bool deep,
                 lp_validate_cb cb, void *arg) {
    if (size < LP_HDR_SIZE + 1) return false;
    if (lp_total(buf) != size || buf[size - 1] != LP_END) return false;
    if (!deep) return true;
    const unsigned char *end = buf + size - 1;
    const unsigned char *p = buf + LP_HDR_SIZE;
    unsigned long n = 0;
    while (p < end) {
        size_t sz = validate_entry(p, end);
        if (sz == 0) return false;
        if (cb && !cb(p, arg)) return false;
        p += sz;
        n++;
    }
    unsigned raw = lp_count_raw(buf);
    /* "unknown" is only written once the count reached 65535 and is
     * recounted by deletes, so it always means at least that many. */
    return raw == LP_COUNT_UNKNOWN ? n >= LP_COUNT_UNKNOWN : n == raw;
}
