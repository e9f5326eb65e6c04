/* rdb_load.c: the RDB reader (see rdb.h).
 *
 * The whole file is mapped (rdb_file_open), so the CRC-64 trailer is
 * checked before a single key is created: a corrupt file is refused whole,
 * never half-loaded.  The mapping's pages come from the page cache, and
 * rdb_load_file hands back those it has passed (during the CRC pass and
 * the load), so a load's peak RSS is the data plus a few MB, not the data
 * plus the file.  Every read is bounds-checked and every error names
 * the byte offset.  Strings are read in place (no copy until the object
 * that keeps them).  Small hashes, sorted sets, list nodes and intsets come
 * as blobs in Redis's layouts, which are also ours (listpack.h, intset.h):
 * a blob with a valid layout, canonical integers and sizes within our
 * config is adopted as it is (one copy per key); when no checksum vouched
 * for the file, or with sanitize-dump-payload yes, sorted-set order and
 * repeated members are checked too (Redis checks them only in that mode).  Everything else (plain
 * types, ziplists, zipmaps, blobs over the limits or failing a check) is
 * decoded by readers of the documented layouts into a flat array of
 * strings (and scores) and built into the encoding the config asks for.
 * Called by persist.c at start-up and by the check tool; the databases
 * should be empty beforehand.
 *
 * rdb_load_stream reads the same format from a source as it arrives (a
 * replica loading its master's RDB from the socket, repl_load.c): the
 * reader's buffer is then a sliding window that need() refills, the CRC
 * runs along and is compared after EOF, keys go to the database set the
 * caller names (a temporary one for repl-diskless-load swapdb). */
#include "rdb.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "t_hash.h"
#include "t_set.h"
#include "crc64.h"
#include "durability_hooks.h"
#include "intset.h"
#include "keyspace.h"
#include "listpack.h"
#include "loading.h"
#include "lzf.h"
#include "quicklist.h"
#include "rdb_stream.h"
#include "util.h"
#include "zset.h"


typedef struct reader {
    const unsigned char *buf;
    size_t len, pos;
    char *err; /* res->err */
    bool failed;
    bool trusted; /* the CRC-64 matched before loading began */
    sds key;      /* the current key (reused) */
    char *lzf;    /* LZF output buffer (reused) */
    size_t lzf_cap;
    db_t *dbs; /* where keys go: srv->dbs, or a replica's temporary set */
    /* Streaming (rdb_load_stream): buf is a window over the source that
     * need() slides and refills; base is the stream offset of buf[0] and
     * crc the CRC-64 of the bytes before it. */
    rdb_source_t *src;
    unsigned char *win; /* == buf, owned */
    size_t cap;         /* bytes of win */
    size_t base;
    uint64_t crc;
    rdb_libs_t *libs; /* FUNCTION2 code kept here instead of loaded, if set */
    rdb_file_t *file; /* buf is this mapped file: drop the pages passed */
    bool merge;       /* RDB_LOAD_MERGE: a key or library already there is replaced */
    size_t reported;  /* bytes of buf told to loading.c so far (not streaming: the source tells it) */
    unsigned polls;   /* streaming: opcodes since loading.c last looked at the clock */
} reader_t;

/* Pages of a mapped file are handed back in steps this large. */
#define DROP_STEP (8u << 20)

/* Give back the mapped pages below upto: they are the page cache's and
 * are read again from it if anything looks back (nothing does). */
static void file_drop(rdb_file_t *f, size_t upto) {
    if (!f || !f->mapped || upto < f->dropped + DROP_STEP) return;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t end = upto & ~(page - 1);
    (void)madvise((void *)(f->buf + f->dropped), end - f->dropped, MADV_DONTNEED);
    f->dropped = end;
}

/* A decoded collection: n strings, and for sorted sets n scores. */
typedef struct elems {
    sds *v;
    double *score;
    size_t n, cap;
} elems_t;

static bool fail(reader_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(reader_t *r, const char *fmt, ...) {
    if (r->failed) return false;
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(r->err, 256, "%s at offset %zu", msg, r->base + r->pos);
    r->failed = true;
    return false;
}

#define STREAM_WINDOW (256 * 1024)

/* Streaming: make n bytes available at buf + pos.  The consumed bytes are
 * folded into the running CRC and dropped, the rest moves to the front,
 * the window grows for a string longer than it, and the source fills as
 * much of it as it has.  Views into buf taken before this call are dead
 * (every reader copies a view before its next read). */
static bool refill(reader_t *r, size_t n) {
    if (r->pos) {
        r->crc = crc64_update(r->crc, r->win, r->pos);
        memmove(r->win, r->win + r->pos, r->len - r->pos);
        r->base += r->pos;
        r->len -= r->pos;
        r->pos = 0;
    }
    if (n > r->cap) {
        size_t cap = r->cap;
        while (cap < n) cap *= 2;
        r->win = zrealloc(r->win, cap);
        r->cap = cap;
    }
    r->buf = r->win;
    while (r->len < n) {
        ssize_t got = r->src->read(r->src->arg, r->win + r->len, r->cap - r->len);
        if (got <= 0) return fail(r, got == 0 ? "Unexpected EOF reading RDB file" : "Error reading the RDB stream: %s",
                                  r->src->err[0] ? r->src->err : "read error");
        r->len += (size_t)got;
    }
    return true;
}

static bool need(reader_t *r, size_t n) {
    if (r->len - r->pos >= n) return true;
    if (r->src && !r->failed) return refill(r, n);
    return fail(r, "Unexpected EOF reading RDB file");
}

/* Bytes still to read: the buffer's rest, or for a stream the window's
 * rest plus what the source announced (an unknown length counts as
 * RDB_STREAM_UNKNOWN_LEFT, enough for any plausible count). */
#define RDB_STREAM_UNKNOWN_LEFT (1ULL << 40)
static size_t bytes_left(const reader_t *r) {
    size_t left = r->len - r->pos;
    if (!r->src) return left;
    return left + (r->src->left < 0 ? (size_t)RDB_STREAM_UNKNOWN_LEFT : (size_t)r->src->left);
}

static bool get_u8(reader_t *r, unsigned *v) {
    if (!need(r, 1)) return false;
    *v = r->buf[r->pos++];
    return true;
}

static bool get_bytes(reader_t *r, void *out, size_t n) {
    if (!need(r, n)) return false;
    memcpy(out, r->buf + r->pos, n);
    r->pos += n;
    return true;
}

/* A length, or (when *encoded gets set) a special string encoding. */
static bool get_len_enc(reader_t *r, uint64_t *len, bool *encoded) {
    unsigned b, b2;
    *encoded = false;
    if (!get_u8(r, &b)) return false;
    switch (b >> 6) {
        case RDB_6BITLEN: *len = b & 0x3f; return true;
        case RDB_14BITLEN:
            if (!get_u8(r, &b2)) return false;
            *len = (uint64_t)(b & 0x3f) << 8 | b2;
            return true;
        case RDB_ENCVAL:
            *encoded = true;
            *len = b & 0x3f;
            return true;
    }
    if (b == RDB_32BITLEN) {
        uint32_t be;
        if (!get_bytes(r, &be, 4)) return false;
        *len = be32toh(be);
        return true;
    }
    if (b == RDB_64BITLEN) {
        uint64_t be;
        if (!get_bytes(r, &be, 8)) return false;
        *len = be64toh(be);
        return true;
    }
    return fail(r, "Unknown length encoding %u", b);
}

static bool get_len(reader_t *r, uint64_t *len) {
    bool enc;
    if (!get_len_enc(r, len, &enc)) return false;
    return enc ? fail(r, "Unexpected string encoding where a length belongs") : true;
}

/* One string of the file, copied nowhere: a raw string points into the
 * file buffer, an LZF one into r->lzf (valid until the next LZF string);
 * the integer forms set is_int and ival instead. */
typedef struct strview {
    const char *p;
    size_t len;
    bool is_int;
    long long ival;
} strview_t;

static bool get_lzf(reader_t *r, strview_t *sv) {
    uint64_t clen, ulen;
    if (!get_len(r, &clen) || !get_len(r, &ulen) || !need(r, clen)) return false;
    if (ulen == 0 || ulen > (1ULL << 32) || ulen > clen * 300) return fail(r, "Invalid LZF lengths");
    if (r->lzf_cap < ulen) {
        r->lzf = zrealloc(r->lzf, ulen);
        r->lzf_cap = ulen;
    }
    if (lzf_decompress(r->buf + r->pos, clen, r->lzf, ulen) != ulen) return fail(r, "Invalid LZF compressed string");
    r->pos += clen;
    sv->p = r->lzf;
    sv->len = ulen;
    return true;
}

static bool get_view(reader_t *r, strview_t *sv) {
    uint64_t len;
    bool enc;
    if (!get_len_enc(r, &len, &enc)) return false;
    sv->is_int = false;
    if (!enc) {
        if (!need(r, len)) return false;
        sv->p = (const char *)r->buf + r->pos;
        sv->len = len;
        r->pos += len;
        return true;
    }
    unsigned char b[4];
    switch (len) {
        case RDB_ENC_INT8:
            if (!get_bytes(r, b, 1)) return false;
            sv->ival = (int8_t)b[0];
            break;
        case RDB_ENC_INT16:
            if (!get_bytes(r, b, 2)) return false;
            sv->ival = (int16_t)(b[0] | b[1] << 8);
            break;
        case RDB_ENC_INT32:
            if (!get_bytes(r, b, 4)) return false;
            sv->ival = (int32_t)((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24);
            break;
        case RDB_ENC_LZF:
            return get_lzf(r, sv);
        default:
            return fail(r, "Unknown string encoding %u", (unsigned)len);
    }
    sv->is_int = true;
    return true;
}

/* Any string form (raw, int8/16/32, LZF) as a new sds. */
static sds get_string(reader_t *r) {
    strview_t sv;
    if (!get_view(r, &sv)) return NULL;
    return sv.is_int ? sds_fromll(sv.ival) : sds_newlen(sv.p, sv.len);
}

/* A key into the reader's reusable buffer (the keyspace copies it). */
static bool get_key(reader_t *r) {
    strview_t sv;
    if (!get_view(r, &sv)) return false;
    if (sv.is_int) {
        char buf[LP_INTBUF_SIZE];
        int n = util_ll2str(buf, sizeof(buf), sv.ival);
        r->key = sds_cpylen(r->key, buf, (size_t)n);
    } else {
        r->key = sds_cpylen(r->key, sv.p, sv.len);
    }
    return true;
}

/* A string value straight into its final encoding (int, embstr or raw), as
 * obj_try_encoding would leave it, without an intermediate sds. */
static robj *get_string_object(reader_t *r) {
    strview_t sv;
    if (!get_view(r, &sv)) return NULL;
    long long v = sv.ival;
    if (sv.is_int || (sv.len <= 20 && util_str2ll(sv.p, sv.len, &v))) return obj_create_from_ll(v);
    return obj_create_stored_string(sv.p, sv.len);
}

/* A zmalloc'd copy of len bytes; an empty blob still gets a block (our
 * encodings never hold NULL) but nothing is read from p, which may point
 * at the end of the file. */
static unsigned char *blob_dup(const void *p, size_t len) {
    unsigned char *b = zmalloc(len ? len : 1);
    if (len) memcpy(b, p, len);
    return b;
}

/* A blob (listpack, intset) as a zmalloc'd copy of exactly its size, the
 * form our encodings own. */
static unsigned char *get_blob_copy(reader_t *r, size_t *len) {
    strview_t sv;
    if (!get_view(r, &sv)) return NULL;
    if (sv.is_int) {
        fail(r, "Integer where a blob was expected");
        return NULL;
    }
    *len = sv.len;
    return blob_dup(sv.p, sv.len);
}

static bool skip_string(reader_t *r) {
    sds s = get_string(r);
    sds_free(s);
    return s != NULL;
}

/* Binary double of ZSET_2 (little-endian IEEE 754). */
static bool get_binary_double(reader_t *r, double *d) {
    uint64_t le;
    if (!get_bytes(r, &le, 8)) return false;
    le = le64toh(le);
    memcpy(d, &le, 8);
    return true;
}

/* Text double of the old ZSET type: a length byte (253 nan, 254 +inf,
 * 255 -inf) then that many characters. */
static bool get_text_double(reader_t *r, double *d) {
    unsigned n;
    char buf[256];
    if (!get_u8(r, &n)) return false;
    if (n == 253) *d = NAN;
    else if (n == 254) *d = INFINITY;
    else if (n == 255) *d = -INFINITY;
    else {
        if (!get_bytes(r, buf, n)) return false;
        buf[n] = '\0';
        char *end;
        *d = strtod(buf, &end);
        if (end == buf) return fail(r, "Invalid double value");
    }
    return true;
}

/* ---------------------------------------------------------- element arrays */

static void elems_push(elems_t *e, sds s, double score) {
    if (e->n == e->cap) {
        e->cap = e->cap ? e->cap * 2 : 16;
        e->v = zrealloc(e->v, e->cap * sizeof(sds));
        e->score = zrealloc(e->score, e->cap * sizeof(double));
    }
    e->v[e->n] = s;
    e->score[e->n++] = score;
}

static void elems_free(elems_t *e) {
    for (size_t i = 0; i < e->n; i++) sds_free(e->v[i]);
    zfree(e->v);
    zfree(e->score);
    memset(e, 0, sizeof(*e));
}

/* A count must be plausible for the bytes left (each element takes at
 * least `per` bytes), so a corrupt length cannot make us allocate wildly. */
static bool plausible(reader_t *r, uint64_t n, unsigned per) {
    if (!util_count_fits(n, per, bytes_left(r), UINT64_MAX))
        return fail(r, "Length %llu larger than the file", (unsigned long long)n);
    return true;
}

/* The most keys the rest of the file can hold: a key takes at least three
 * bytes (type, key length, value), so RESIZEDB's hint is clamped to that
 * before it sizes a table. */
#define RDB_MIN_KEY_BYTES 3
#define RDB_STREAM_MAX_HINT (16u * 1024 * 1024) /* a stream of unknown length: at most 16M slots */
static size_t resize_hint(const reader_t *r, uint64_t hint) {
    size_t left = bytes_left(r), most = left / RDB_MIN_KEY_BYTES;
    if (r->src && r->src->left < 0 && most > RDB_STREAM_MAX_HINT) most = RDB_STREAM_MAX_HINT;
    return util_count_fits(hint, RDB_MIN_KEY_BYTES, left, UINT64_MAX) && hint <= most ? (size_t)hint : most;
}

static bool get_strings(reader_t *r, uint64_t n, elems_t *e) {
    if (!plausible(r, n, 1)) return false;
    for (uint64_t i = 0; i < n; i++) {
        sds s = get_string(r);
        if (!s) return false;
        elems_push(e, s, 0);
    }
    return true;
}

/* ------------------------------------------- Redis's listpack and ziplist */

static sds int_sds(long long v) { return sds_fromll(v); }

static bool blob_fail(reader_t *r, const char *what) { return fail(r, "Corrupt %s blob", what); }

/* Decode a listpack in Redis's layout: u32 total bytes, u16 count, entries
 * (encoding, data, back-length), 0xFF.  Integers come out as decimal. */
static bool decode_listpack(reader_t *r, const unsigned char *lp, size_t size, elems_t *e) {
    if (size < 7) return blob_fail(r, "listpack");
    uint32_t total = (uint32_t)lp[0] | (uint32_t)lp[1] << 8 | (uint32_t)lp[2] << 16 | (uint32_t)lp[3] << 24;
    unsigned count = lp[4] | lp[5] << 8;
    if (total != size || lp[size - 1] != 0xFF) return blob_fail(r, "listpack");
    size_t p = 6, got = 0;
    while (p < size - 1) {
        unsigned b = lp[p];
        size_t hdr, dlen = 0;
        long long v = 0;
        bool is_str = false;
        const unsigned char *q = lp + p;
        size_t room = size - 1 - p;
        if ((b & 0x80) == 0) {
            hdr = 1;
            v = b & 0x7f;
        } else if ((b & 0xC0) == 0x80) {
            hdr = 1;
            dlen = b & 0x3f;
            is_str = true;
        } else if ((b & 0xE0) == 0xC0) {
            if (room < 2) return blob_fail(r, "listpack");
            hdr = 2;
            uint64_t u = (uint64_t)(b & 0x1f) << 8 | q[1];
            v = u >= (1u << 12) ? (long long)u - (1 << 13) : (long long)u;
        } else if ((b & 0xF0) == 0xE0) {
            if (room < 2) return blob_fail(r, "listpack");
            hdr = 2;
            dlen = (size_t)(b & 0x0f) << 8 | q[1];
            is_str = true;
        } else if (b == 0xF0) {
            if (room < 5) return blob_fail(r, "listpack");
            hdr = 5;
            dlen = (size_t)q[1] | (size_t)q[2] << 8 | (size_t)q[3] << 16 | (size_t)q[4] << 24;
            is_str = true;
        } else if (b >= 0xF1 && b <= 0xF4) {
            static const unsigned widths[] = {2, 3, 4, 8};
            unsigned w = widths[b - 0xF1];
            if (room < 1 + w) return blob_fail(r, "listpack");
            uint64_t u = 0;
            for (unsigned i = 0; i < w; i++) u |= (uint64_t)q[1 + i] << (8 * i);
            if (w < 8 && (u >> (8 * w - 1))) u |= ~0ULL << (8 * w); /* sign-extend */
            v = (long long)u;
            hdr = 1 + w;
        } else {
            return blob_fail(r, "listpack");
        }
        size_t body = hdr + dlen;
        if (body > room) return blob_fail(r, "listpack");
        size_t bl = body <= 127 ? 1 : body < 16383   ? 2
                                  : body < 2097151   ? 3
                                  : body < 268435455 ? 4
                                                     : 5;
        if (body + bl > room) return blob_fail(r, "listpack");
        size_t back = 0; /* the back-length, read leftwards from its last byte */
        for (size_t i = 0; i < bl; i++) back |= (size_t)(q[body + bl - 1 - i] & 0x7f) << (7 * i);
        if (back != body) return blob_fail(r, "listpack");
        elems_push(e, is_str ? sds_newlen(q + hdr, dlen) : int_sds(v), 0);
        p += body + bl;
        got++;
    }
    if (count != 65535 && count != got) return blob_fail(r, "listpack");
    return true;
}

/* Decode a ziplist (older RDBs): u32 bytes, u32 tail offset, u16 count,
 * entries (prevlen, encoding, data), 0xFF. */
static bool decode_ziplist(reader_t *r, const unsigned char *zl, size_t size, elems_t *e) {
    if (size < 11) return blob_fail(r, "ziplist");
    uint32_t total = (uint32_t)zl[0] | (uint32_t)zl[1] << 8 | (uint32_t)zl[2] << 16 | (uint32_t)zl[3] << 24;
    if (total != size || zl[size - 1] != 0xFF) return blob_fail(r, "ziplist");
    size_t p = 10;
    while (p < size - 1) {
        size_t room = size - 1 - p;
        size_t pl = zl[p] == 0xFE ? 5 : 1;
        if (room < pl + 1) return blob_fail(r, "ziplist");
        p += pl;
        room -= pl;
        const unsigned char *q = zl + p;
        unsigned b = q[0];
        size_t hdr = 1, dlen = 0;
        long long v = 0;
        bool is_str = true;
        if ((b >> 6) == 0) dlen = b & 0x3f;
        else if ((b >> 6) == 1) {
            if (room < 2) return blob_fail(r, "ziplist");
            hdr = 2;
            dlen = (size_t)(b & 0x3f) << 8 | q[1];
        } else if ((b >> 6) == 2) {
            if (room < 5) return blob_fail(r, "ziplist");
            hdr = 5;
            dlen = (size_t)q[1] << 24 | (size_t)q[2] << 16 | (size_t)q[3] << 8 | q[4];
        } else {
            is_str = false;
            unsigned w;
            switch (b) {
                case 0xC0: w = 2; break;
                case 0xD0: w = 4; break;
                case 0xE0: w = 8; break;
                case 0xF0: w = 3; break;
                case 0xFE: w = 1; break;
                default:
                    if (b >= 0xF1 && b <= 0xFD) {
                        w = 0;
                        v = (long long)(b & 0x0f) - 1;
                    } else return blob_fail(r, "ziplist");
            }
            if (room < 1 + w) return blob_fail(r, "ziplist");
            if (w) {
                uint64_t u = 0;
                for (unsigned i = 0; i < w; i++) u |= (uint64_t)q[1 + i] << (8 * i);
                if (w < 8 && (u >> (8 * w - 1))) u |= ~0ULL << (8 * w);
                v = (long long)u;
            }
            hdr = 1 + w;
        }
        if (hdr + dlen > room) return blob_fail(r, "ziplist");
        elems_push(e, is_str ? sds_newlen(q + hdr, dlen) : int_sds(v), 0);
        p += hdr + dlen;
    }
    return true;
}

/* zipmap (hashes from RDB 2-3): zmlen byte, then (len key, len free value)
 * pairs, 0xFF. */
static bool decode_zipmap(reader_t *r, const unsigned char *zm, size_t size, elems_t *e) {
    size_t p = 1;
    bool key = true;
    while (p < size && zm[p] != 0xFF) {
        size_t len;
        if (zm[p] < 254) len = zm[p++];
        else if (zm[p] == 254 && p + 5 <= size) {
            len = (size_t)zm[p + 1] | (size_t)zm[p + 2] << 8 | (size_t)zm[p + 3] << 16 | (size_t)zm[p + 4] << 24;
            p += 5;
            /* a length under 254 has a one-byte form: five bytes for it is
             * a forged payload (CVE-2026-25243), refused as Redis does */
            if (len < 254) return blob_fail(r, "zipmap");
        } else return blob_fail(r, "zipmap");
        size_t fr = 0;
        if (!key) {
            if (p >= size) return blob_fail(r, "zipmap");
            fr = zm[p++];
        }
        if (p + len + fr > size) return blob_fail(r, "zipmap");
        elems_push(e, sds_newlen(zm + p, len), 0);
        p += len + fr;
        key = !key;
    }
    if (p >= size || !key) return blob_fail(r, "zipmap");
    return true;
}

/* Scores of a listpack/ziplist sorted set are the odd entries as text. */
static bool split_scores(reader_t *r, elems_t *in, elems_t *out) {
    if (in->n % 2) return fail(r, "Odd number of entries in a sorted set blob");
    for (size_t i = 0; i < in->n; i += 2) {
        double d;
        if (!util_str2d(in->v[i + 1], sds_len(in->v[i + 1]), &d))
            return fail(r, "Invalid score in a sorted set blob");
        elems_push(out, in->v[i], d);
        in->v[i] = NULL;
    }
    return true;
}

/* ---------------------------------------------------------- building objects */

static bool all_short(const elems_t *e, long long max) {
    for (size_t i = 0; i < e->n; i++)
        if ((long long)sds_len(e->v[i]) > max) return false;
    return true;
}

/* A loaded list: one node becomes the listpack encoding t_list.c starts
 * with, more stay a quicklist. */
static robj *list_object(quicklist *ql) {
    robj *o;
    if (ql->len == 1) {
        o = obj_create(OBJ_LIST, ql->head->lp);
        o->encoding = OBJ_ENCODING_LISTPACK;
        ql->head->lp = NULL;
        ql_free(ql);
    } else {
        o = obj_create(OBJ_LIST, ql);
        o->encoding = OBJ_ENCODING_QUICKLIST;
    }
    return o;
}

static robj *build_list(server_t *srv, elems_t *e) {
    quicklist *ql = ql_new((int)srv->cfg.list_max_listpack_size, (int)srv->cfg.list_compress_depth);
    for (size_t i = 0; i < e->n; i++) ql_push(ql, e->v[i], sds_len(e->v[i]), QL_TAIL);
    return list_object(ql);
}

static robj *build_set(reader_t *r, server_t *srv, elems_t *e) {
    const rl_config_t *cfg = &srv->cfg;
    bool ints = (long long)e->n <= cfg->set_max_intset_entries;
    long long v;
    for (size_t i = 0; ints && i < e->n; i++) ints = util_str2ll(e->v[i], sds_len(e->v[i]), &v);
    robj *o;
    bool dup = false;
    if (ints) {
        intset *is = intset_new();
        for (size_t i = 0; i < e->n; i++) {
            bool added;
            util_str2ll(e->v[i], sds_len(e->v[i]), &v);
            is = intset_add(is, v, &added);
            dup |= !added;
        }
        o = obj_create(OBJ_SET, is);
        o->encoding = OBJ_ENCODING_INTSET;
    } else if ((long long)e->n <= cfg->set_max_listpack_entries && all_short(e, cfg->set_max_listpack_value)) {
        unsigned char *lp = lp_new();
        for (size_t i = 0; i < e->n; i++) {
            unsigned char *f = lp_first(lp);
            if (f && lp_find(lp, f, e->v[i], sds_len(e->v[i]), 0)) dup = true;
            else lp = lp_append(lp, e->v[i], sds_len(e->v[i]));
        }
        o = obj_create(OBJ_SET, lp);
        o->encoding = OBJ_ENCODING_LISTPACK;
    } else {
        o = set_type_create_ht(e->n); /* t_set.c owns the encoding */
        for (size_t i = 0; i < e->n; i++) dup |= !set_type_ht_add(o, e->v[i], sds_len(e->v[i]));
    }
    if (dup) {
        obj_decref(o);
        fail(r, "Duplicate set members detected");
        return NULL;
    }
    return o;
}

static robj *build_hash(reader_t *r, server_t *srv, elems_t *e) {
    if (e->n % 2) {
        fail(r, "Odd number of entries in a hash");
        return NULL;
    }
    const rl_config_t *cfg = &srv->cfg;
    robj *o;
    bool dup = false;
    if ((long long)e->n / 2 <= cfg->hash_max_listpack_entries && all_short(e, cfg->hash_max_listpack_value)) {
        unsigned char *lp = lp_new();
        for (size_t i = 0; i < e->n; i += 2) {
            unsigned char *f = lp_first(lp);
            if (f && lp_find(lp, f, e->v[i], sds_len(e->v[i]), 1)) {
                dup = true;
                continue;
            }
            lp = lp_append(lp, e->v[i], sds_len(e->v[i]));
            lp = lp_append(lp, e->v[i + 1], sds_len(e->v[i + 1]));
        }
        o = obj_create(OBJ_HASH, lp);
        o->encoding = OBJ_ENCODING_LISTPACK;
    } else {
        o = hash_type_create_ht(e->n / 2, false); /* t_hash.c owns the encoding */
        for (size_t i = 0; i < e->n; i += 2)
            dup |= !hash_type_ht_add(o, e->v[i], sds_len(e->v[i]), e->v[i + 1], sds_len(e->v[i + 1]), HASH_TTL_NONE);
    }
    if (dup) {
        obj_decref(o);
        fail(r, "Duplicate hash fields detected");
        return NULL;
    }
    return o;
}

/* Order of two loaded members: by score, then by bytes (the zset order). */
static const elems_t *sort_elems;

static int member_cmp(const void *a, const void *b) {
    sds x = sort_elems->v[*(const size_t *)a], y = sort_elems->v[*(const size_t *)b];
    return sds_cmp(x, y);
}

static int zset_order_cmp(const void *a, const void *b) {
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    double x = sort_elems->score[i], y = sort_elems->score[j];
    if (x != y) return x < y ? -1 : 1;
    return sds_cmp(sort_elems->v[i], sort_elems->v[j]);
}

/* A small sorted set becomes a listpack in one pass: sort once, reject
 * duplicates and NaN, append in order (inserting one by one would rescan
 * the listpack for every member). */
static robj *build_zset_listpack(reader_t *r, elems_t *e) {
    size_t *idx = zmalloc(sizeof(size_t) * (e->n ? e->n : 1));
    for (size_t i = 0; i < e->n; i++) idx[i] = i;
    sort_elems = e;
    qsort(idx, e->n, sizeof(size_t), member_cmp);
    for (size_t i = 1; i < e->n; i++) {
        if (sds_cmp(e->v[idx[i - 1]], e->v[idx[i]]) == 0) {
            zfree(idx);
            fail(r, "Duplicate zset members detected");
            return NULL;
        }
    }
    for (size_t i = 0; i < e->n; i++) {
        if (isnan(e->score[i])) {
            zfree(idx);
            fail(r, "Invalid (NaN) score in a sorted set");
            return NULL;
        }
    }
    qsort(idx, e->n, sizeof(size_t), zset_order_cmp);
    sds *members = zmalloc(sizeof(sds) * (e->n ? e->n : 1));
    double *scores = zmalloc(sizeof(double) * (e->n ? e->n : 1));
    for (size_t i = 0; i < e->n; i++) {
        members[i] = e->v[idx[i]];
        scores[i] = e->score[idx[i]];
    }
    robj *o = zset_listpack_from_sorted(members, scores, e->n);
    zfree(members);
    zfree(scores);
    zfree(idx);
    return o;
}

static robj *build_zset(reader_t *r, server_t *srv, elems_t *e) {
    zset_limits_t l = {srv->cfg.zset_max_listpack_entries, srv->cfg.zset_max_listpack_value};
    if ((long long)e->n <= l.max_entries) {
        bool fits = true;
        for (size_t i = 0; i < e->n && fits; i++) fits = (long long)sds_len(e->v[i]) <= l.max_value;
        if (fits) return build_zset_listpack(r, e);
    }
    robj *o = zset_create_skiplist();
    for (size_t i = 0; i < e->n; i++) {
        int out;
        double ns;
        double cur;
        if (zset_score(o, e->v[i], sds_len(e->v[i]), &cur)) {
            obj_decref(o);
            fail(r, "Duplicate zset members detected");
            return NULL;
        }
        if (!zset_add(o, &l, e->score[i], e->v[i], sds_len(e->v[i]), 0, &out, &ns)) {
            obj_decref(o);
            fail(r, "Invalid (NaN) score in a sorted set");
            return NULL;
        }
    }
    return o;
}

/* -------------------------------------- listpack and intset blobs as they are */

/* What lp_validate's walk checks in each entry of a blob to adopt: the
 * length limit of the config for every stride-th entry from the first (all
 * of a hash's, a sorted set's members), and that no canonical integer is
 * stored as a string.  Our listpack.c keeps every canonical integer as an
 * integer entry, so a value has one encoding and lookups compare bytes or
 * integers; Redis's writer does the same.  A blob that breaks this is
 * rebuilt, not adopted. */
typedef struct lp_check {
    size_t max_len;
    unsigned stride;
    size_t n;
} lp_check_t;

static bool check_entry(const unsigned char *p, void *arg) {
    lp_check_t *c = arg;
    bool limited = c->n++ % c->stride == 0;
    size_t len;
    long long v;
    const unsigned char *s = lp_get(p, &len, &v);
    if (!s) return !limited || c->max_len >= 20 || lp_value_strlen(p) <= c->max_len;
    if (limited && len > c->max_len) return false;
    return len > 20 || !lp_string_to_int64(s, len, &v);
}

/* Whether a listpack blob has the layout and encodings listpack.c expects,
 * 1..n_max entries, and entries within max_len as check_entry says. */
static bool lp_adoptable(unsigned char *lp, size_t len, size_t n_max, size_t max_len, unsigned stride) {
    lp_check_t c = {max_len, stride, 0};
    return lp_validate(lp, len, true, check_entry, &c) && c.n > 0 && c.n <= n_max;
}

/* Redis writes small hashes, sorted sets and list nodes as listpack blobs
 * (and so do we): within our limits they are taken as they are, one copy
 * and a validating walk per key, instead of a string per entry.  NULL (not
 * an error) when the blob must go through decode_listpack and a rebuild. */
static robj *adopt_hash(reader_t *r, server_t *srv, unsigned char *lp, size_t len) {
    const rl_config_t *cfg = &srv->cfg;
    if (!lp_adoptable(lp, len, (size_t)cfg->hash_max_listpack_entries * 2, (size_t)cfg->hash_max_listpack_value, 1) ||
        lp_length(lp) % 2 || (!r->trusted && !lp_entries_unique(lp, 1)))
        return NULL;
    robj *o = obj_create(OBJ_HASH, lp);
    o->encoding = OBJ_ENCODING_LISTPACK;
    return o;
}

static robj *adopt_zset(reader_t *r, server_t *srv, unsigned char *lp, size_t len) {
    zset_limits_t l = {srv->cfg.zset_max_listpack_entries, srv->cfg.zset_max_listpack_value};
    if (!lp_adoptable(lp, len, (size_t)l.max_entries * 2, (size_t)l.max_value, 2) ||
        !zset_listpack_adoptable(lp, !r->trusted))
        return NULL;
    robj *o = obj_create(OBJ_ZSET, lp);
    o->encoding = OBJ_ENCODING_LISTPACK;
    return o;
}

static robj *adopt_intset(reader_t *r, server_t *srv, unsigned char *blob, size_t len) {
    (void)r;
    if (!intset_validate(blob, len, true)) return NULL;
    intset *is = (intset *)blob;
    if (intset_len(is) == 0 || (long long)intset_len(is) > srv->cfg.set_max_intset_entries) return NULL;
    robj *o = obj_create(OBJ_SET, is);
    o->encoding = OBJ_ENCODING_INTSET;
    return o;
}

typedef robj *adopt_fn(reader_t *r, server_t *srv, unsigned char *blob, size_t len);

/* A blob-encoded value: *out is the blob adopted when it can be, else NULL
 * with the blob decoded into e for a build_* to make our encoding of it.
 * False on a read or decode error. */
static bool get_blob_object(reader_t *r, server_t *srv, adopt_fn *adopt,
                            bool (*decode)(reader_t *, const unsigned char *, size_t, elems_t *), elems_t *e,
                            robj **out) {
    size_t len;
    unsigned char *blob = get_blob_copy(r, &len);
    if (!blob) return false;
    if ((*out = adopt(r, srv, blob, len))) return true;
    bool ok = decode(r, blob, len, e);
    zfree(blob);
    return ok;
}

/* Primitives lent to rdb_stream.c (rdb_stream.h). */
/* What the stream codec (rdb_stream.c) reads with. */
static bool in_fail(reader_t *r, const char *msg) { return fail(r, "%s", msg); }
static unsigned char *in_blob(reader_t *r, size_t *len) {
    strview_t sv;
    if (!get_view(r, &sv)) return NULL;
    if (sv.is_int) {
        char buf[LP_INTBUF_SIZE];
        int n = util_ll2str(buf, sizeof(buf), sv.ival);
        *len = (size_t)n;
        return zmemdup(buf, (size_t)n);
    }
    *len = sv.len;
    return blob_dup(sv.p, sv.len);
}

static const rdb_in_ops_t stream_in = {
    .len = get_len, .bytes = get_bytes, .blob = in_blob, .fail = in_fail, .plausible = plausible};

/* ------------------------------------------------------- reading objects */

/* One string blob decoded by fn into e. */
static bool get_blob(reader_t *r, elems_t *e,
                     bool (*fn)(reader_t *, const unsigned char *, size_t, elems_t *)) {
    strview_t sv;
    if (!get_view(r, &sv)) return false;
    if (sv.is_int) return fail(r, "Integer where a blob was expected");
    return fn(r, (const unsigned char *)sv.p, sv.len, e);
}

/* An intset blob's members as decimal strings (when it cannot be adopted). */
static bool decode_intset(reader_t *r, const unsigned char *blob, size_t len, elems_t *e) {
    if (!intset_validate(blob, len, true)) return blob_fail(r, "intset");
    const intset *is = (const intset *)blob; /* zmalloc'd: aligned */
    for (uint32_t i = 0; i < intset_len(is); i++) {
        int64_t v;
        intset_get(is, i, &v);
        elems_push(e, int_sds(v), 0);
    }
    return true;
}

/* One node of a quicklist into ql: a listpack (QUICKLIST_2) taken as it is
 * when it passes the checks, else its entries pushed one by one. */
static bool get_quicklist_node(reader_t *r, int type, quicklist *ql) {
    uint64_t container = RDB_QL_PACKED;
    if (type == RDB_TYPE_LIST_QUICKLIST_2 && !get_len(r, &container)) return false;
    if (container != RDB_QL_PLAIN && container != RDB_QL_PACKED)
        return fail(r, "Unknown quicklist node container %llu", (unsigned long long)container);
    elems_t e = {0};
    bool ok;
    if (container == RDB_QL_PLAIN) {
        sds s = get_string(r);
        if ((ok = s != NULL)) elems_push(&e, s, 0);
    } else if (type == RDB_TYPE_LIST_QUICKLIST) {
        ok = get_blob(r, &e, decode_ziplist);
    } else {
        size_t len;
        unsigned char *lp = get_blob_copy(r, &len);
        if (lp && lp_adoptable(lp, len, SIZE_MAX, SIZE_MAX, 1)) {
            ql_append_listpack(ql, lp);
            return true;
        }
        ok = lp && decode_listpack(r, lp, len, &e);
        zfree(lp);
    }
    for (size_t i = 0; ok && i < e.n; i++) ql_push(ql, e.v[i], sds_len(e.v[i]), QL_TAIL);
    elems_free(&e);
    return ok;
}

static robj *get_quicklist(reader_t *r, server_t *srv, int type) {
    uint64_t nodes;
    if (!get_len(r, &nodes) || !plausible(r, nodes, 1)) return NULL;
    quicklist *ql = ql_new((int)srv->cfg.list_max_listpack_size, (int)srv->cfg.list_compress_depth);
    for (uint64_t i = 0; i < nodes; i++) {
        if (!get_quicklist_node(r, type, ql)) {
            ql_free(ql);
            return NULL;
        }
    }
    return list_object(ql);
}

static bool get_zset_plain(reader_t *r, int type, elems_t *e) {
    uint64_t n;
    if (!get_len(r, &n) || !plausible(r, n, 2)) return false;
    for (uint64_t i = 0; i < n; i++) {
        sds m = get_string(r);
        double d;
        if (!m) return false;
        if (!(type == RDB_TYPE_ZSET_2 ? get_binary_double(r, &d) : get_text_double(r, &d))) {
            sds_free(m);
            return false;
        }
        elems_push(e, m, d);
    }
    return true;
}

static bool get_zset_blob(reader_t *r, elems_t *e) {
    elems_t flat = {0};
    bool ok = get_blob(r, &flat, decode_ziplist) && split_scores(r, &flat, e);
    elems_free(&flat);
    return ok;
}

/* ------------------------------------------- hashes with field TTLs */

static bool get_u64(reader_t *r, uint64_t *v) {
    uint64_t le;
    if (!get_bytes(r, &le, 8)) return false;
    *v = le64toh(le);
    return true;
}

/* Types 24 and 22 (Redis 7.4): [min TTL,] count, then per field its TTL
 * (24: relative to min plus one; 22: absolute; 0: none), field, value. */
static robj *get_hash_metadata(reader_t *r, server_t *srv, int type) {
    uint64_t min = 0, n;
    if (type == RDB_TYPE_HASH_METADATA && !get_u64(r, &min)) return NULL;
    if (!get_len(r, &n) || !plausible(r, n, 3)) return NULL;
    if (n == 0) {
        fail(r, "Empty hash");
        return NULL;
    }
    robj *o = (long long)n > srv->cfg.hash_max_listpack_entries ? hash_type_create_ht(resize_hint(r, n), true)
                                                                : hash_type_create_lpex();
    for (uint64_t i = 0; i < n; i++) {
        uint64_t rel, ttl;
        sds f = NULL, v = NULL;
        if (!get_len(r, &rel) || !(f = get_string(r)) || !(v = get_string(r))) {
            sds_free(f);
            obj_decref(o);
            return NULL;
        }
        bool ok = true;
        if (rel == 0) ttl = HASH_TTL_NONE;
        else if (type == RDB_TYPE_HASH_METADATA_PRE_GA) ttl = rel;
        else if (min <= HASH_TTL_MAX && rel - 1 <= HASH_TTL_MAX - min) ttl = min + rel - 1;
        else ok = false, ttl = UINT64_MAX;
        ok = ok && ttl <= HASH_TTL_MAX;
        if (!ok) fail(r, "invalid expireAt time: %llu", (unsigned long long)ttl);
        else if (!hash_type_add_loaded(srv, o, f, sds_len(f), v, sds_len(v), ttl)) ok = fail(r, "Duplicate hash fields detected");
        sds_free(f);
        sds_free(v);
        if (!ok) {
            obj_decref(o);
            return NULL;
        }
    }
    return o;
}

/* A listpackex blob: field, value, TTL triplets, each TTL an integer
 * within Redis 7.4's range (0: none) and in TTL order, no field twice. */
typedef struct lpex_check {
    size_t n;
    uint64_t last; /* the previous TTL; HASH_TTL_NONE once untimed fields began */
    bool untimed;
    bool ok;
} lpex_check_t;

static bool check_lpex_entry(const unsigned char *p, void *arg) {
    lpex_check_t *c = arg;
    if (c->n++ % 3 != 2) return true;
    long long v;
    if (!lp_get_int(p, &v) || v < 0 || (uint64_t)v > HASH_TTL_MAX) return false;
    if (v == 0) {
        c->untimed = true;
        return true;
    }
    if (c->untimed || (uint64_t)v < c->last) return false; /* out of order */
    c->last = (uint64_t)v;
    return true;
}

/* Types 25 and 23 (Redis 7.4): [min TTL (ignored: the blob has them),]
 * then the blob, adopted as the hash's own listpack. */
static robj *get_hash_lpex(reader_t *r, server_t *srv, int type) {
    uint64_t min;
    if (type == RDB_TYPE_HASH_LISTPACK_EX && !get_u64(r, &min)) return NULL;
    size_t len;
    unsigned char *lp = get_blob_copy(r, &len);
    if (!lp) return NULL;
    lpex_check_t c = {0, 0, false, true};
    if (!lp_validate(lp, len, true, check_lpex_entry, &c) || c.n == 0 || c.n % 3 ||
        (!r->trusted && !lp_entries_unique(lp, 2))) {
        zfree(lp);
        fail(r, "Hash listpack integrity check failed.");
        return NULL;
    }
    return hash_type_from_lpex(srv, lp);
}

/* Read one value of the given RDB type and build it; NULL on error. */
static robj *get_object(reader_t *r, server_t *srv, int type) {
    elems_t e = {0};
    uint64_t n;
    robj *o = NULL;
    bool ok;
    switch (type) {
        case RDB_TYPE_STRING:
            return get_string_object(r);
        case RDB_TYPE_LIST:
            ok = get_len(r, &n) && get_strings(r, n, &e);
            if (ok) o = build_list(srv, &e);
            break;
        case RDB_TYPE_LIST_ZIPLIST:
            if (get_blob(r, &e, decode_ziplist)) o = build_list(srv, &e);
            break;
        case RDB_TYPE_LIST_QUICKLIST:
        case RDB_TYPE_LIST_QUICKLIST_2:
            o = get_quicklist(r, srv, type);
            break;
        case RDB_TYPE_SET:
            ok = get_len(r, &n) && get_strings(r, n, &e);
            if (ok) o = build_set(r, srv, &e);
            break;
        case RDB_TYPE_SET_INTSET:
            if (get_blob_object(r, srv, adopt_intset, decode_intset, &e, &o) && !o) o = build_set(r, srv, &e);
            break;
        case RDB_TYPE_SET_LISTPACK:
            if (get_blob(r, &e, decode_listpack)) o = build_set(r, srv, &e);
            break;
        case RDB_TYPE_ZSET:
        case RDB_TYPE_ZSET_2:
            if (get_zset_plain(r, type, &e)) o = build_zset(r, srv, &e);
            break;
        case RDB_TYPE_ZSET_ZIPLIST:
            if (get_zset_blob(r, &e)) o = build_zset(r, srv, &e);
            break;
        case RDB_TYPE_ZSET_LISTPACK: {
            elems_t flat = {0};
            if (get_blob_object(r, srv, adopt_zset, decode_listpack, &flat, &o) && !o && split_scores(r, &flat, &e))
                o = build_zset(r, srv, &e);
            elems_free(&flat);
            break;
        }
        case RDB_TYPE_HASH:
            ok = get_len(r, &n) && plausible(r, n, 2) && get_strings(r, n * 2, &e);
            if (ok) o = build_hash(r, srv, &e);
            break;
        case RDB_TYPE_HASH_ZIPMAP:
            if (get_blob(r, &e, decode_zipmap)) o = build_hash(r, srv, &e);
            break;
        case RDB_TYPE_HASH_ZIPLIST:
            if (get_blob(r, &e, decode_ziplist)) o = build_hash(r, srv, &e);
            break;
        case RDB_TYPE_HASH_LISTPACK:
            if (get_blob_object(r, srv, adopt_hash, decode_listpack, &e, &o) && !o) o = build_hash(r, srv, &e);
            break;
        case RDB_TYPE_HASH_METADATA:
        case RDB_TYPE_HASH_METADATA_PRE_GA:
            o = get_hash_metadata(r, srv, type);
            break;
        case RDB_TYPE_HASH_LISTPACK_EX:
        case RDB_TYPE_HASH_LISTPACK_EX_PRE_GA:
            o = get_hash_lpex(r, srv, type);
            break;
        case RDB_TYPE_STREAM_LISTPACKS:
        case RDB_TYPE_STREAM_LISTPACKS_2:
        case RDB_TYPE_STREAM_LISTPACKS_3:
            o = rdb_stream_load(r, &stream_in, type); /* rdb_stream.c */
            if (o) srv->stream_groups_seen = true;    /* it may hold groups: rdb_save.c's version scan */
            break;
        case RDB_TYPE_MODULE:
        case RDB_TYPE_MODULE_2:
            fail(r, "Module data type keys (type %d) are not supported by redis-like", type);
            break;
        default:
            fail(r, "Unknown RDB object type %d", type);
    }
    elems_free(&e);
    if (!o && !r->failed) fail(r, "Bad %d object", type);
    return o;
}

/* ------------------------------------------------------------- the file */

/* MODULE_AUX: module id, when, then opcodes of the module's own encoding
 * up to EOF (0).  Skipped: we have no modules. */
static bool skip_module_aux(reader_t *r) {
    uint64_t id, when, op;
    if (!get_len(r, &id) || !get_len(r, &when)) return false;
    for (;;) {
        if (!get_len(r, &op)) return false;
        switch (op) {
            case 0: return true; /* EOF */
            case 1:
            case 2: { /* SINT, UINT */
                uint64_t v;
                if (!get_len(r, &v)) return false;
                break;
            }
            case 3: { /* FLOAT */
                unsigned char f[4];
                if (!get_bytes(r, f, 4)) return false;
                break;
            }
            case 4: { /* DOUBLE */
                double d;
                if (!get_binary_double(r, &d)) return false;
                break;
            }
            case 5: /* STRING */
                if (!skip_string(r)) return false;
                break;
            default: return fail(r, "Unknown module opcode %llu", (unsigned long long)op);
        }
    }
}

static bool check_crc(reader_t *r, int version, bool verify, rdb_load_result_t *res) {
    if (version < 5 || !verify) return true;
    uint64_t stored;
    if (!get_bytes(r, &stored, 8)) return false;
    stored = le64toh(stored);
    if (stored == 0) return true;                            /* written with rdbchecksum no */
    uint64_t crc = crc64_update(r->crc, r->buf, r->pos - 8); /* r->crc: 0 unless streaming */
    if (crc != stored) {
        r->pos -= 8;
        return fail(r, "Wrong RDB checksum expected: (%llx) got: (%llx)", (unsigned long long)stored,
                    (unsigned long long)crc);
    }
    res->checksum_verified = true;
    return true;
}

/* A plain RDB file ends with its trailer, so its CRC can be checked before
 * anything is loaded.  (An AOF preamble is followed by commands: there the
 * caller passes verify_checksum = false and check_crc runs after EOF.) */
static bool precheck_crc(reader_t *r, int version, rdb_load_result_t *res) {
    if (version < 5 || r->len < 9 + 9) return true;
    uint64_t stored;
    memcpy(&stored, r->buf + r->len - 8, 8);
    stored = le64toh(stored);
    if (stored == 0) return true;
    uint64_t crc = 0;
    for (size_t off = 0; off < r->len - 8;) {
        size_t n = r->len - 8 - off < DROP_STEP ? r->len - 8 - off : DROP_STEP;
        crc = crc64_update(crc, r->buf + off, n);
        off += n;
        file_drop(r->file, off);
    }
    if (r->file) r->file->dropped = 0; /* the load reads it again from the start */
    if (crc != stored) {
        size_t save = r->pos;
        r->pos = r->len - 8;
        fail(r, "Wrong RDB checksum expected: (%llx) got: (%llx)", (unsigned long long)stored,
             (unsigned long long)crc);
        r->pos = save;
        return false;
    }
    res->checksum_verified = true;
    return true;
}

/* key-load-delay: a slow load on purpose (tests of what happens during
 * one); a negative -n sleeps 1 us about once in n keys, as Redis's does. */
static void key_load_delay(long long us) {
    if (us < 0) us = util_random_below((unsigned long)-us) == 0 ? 1 : 0;
    if (us > 0) usleep((useconds_t)us);
}

static bool add_key(reader_t *r, server_t *srv, int dbid, sds key, robj *val, long long expire, long long now_ms,
                    rdb_load_result_t *res) {
    if (srv->cfg.key_load_delay) key_load_delay(srv->cfg.key_load_delay);
    db_t *db = &r->dbs[dbid];
    if (expire >= 0 && now_ms > 0 && expire < now_ms) {
        obj_decref(val);
        res->expired++;
        if (loading_active(srv)) srv->rdb_last_load_keys_expired = res->expired; /* INFO, as the load goes */
        return true;
    }
    if (!db_add_loaded(db, key, val, expire)) { /* the key is copied into the table */
        if (!r->merge) {
            obj_decref(val);
            return fail(r, "Duplicate key '%.64s' found", key);
        }
        robj *k = obj_create_string(key, sds_len(key));
        db_delete_lazy(db, k, false);
        obj_decref(k);
        db_add_loaded(db, key, val, expire);
    }
    res->keys++;
    if (loading_active(srv)) srv->rdb_last_load_keys_loaded = res->keys; /* INFO, as the load goes */
    return true;
}

/* An aux field: the replication ones and used-mem are kept, the others
 * (redis-ver, ctime, aof-base, ...) only read. */
static bool get_aux(reader_t *r, rdb_load_result_t *res) {
    sds name = get_string(r);
    sds value = name ? get_string(r) : NULL;
    if (!value) {
        sds_free(name);
        return false;
    }
    long long v = 0;
    bool num = util_str2ll(value, sds_len(value), &v);
    if (!strcmp(name, "repl-id") && sds_len(value) == 40) {
        memcpy(res->repl.id, value, 41);
    } else if (!strcmp(name, "repl-offset") && num) {
        res->repl.offset = v;
        res->repl.valid = true;
    } else if (!strcmp(name, "repl-stream-db") && num && v >= 0 && v < INT_MAX) {
        res->repl.stream_db = (int)v;
    } else if (!strcmp(name, "used-mem") && num) {
        res->used_mem = v;
    }
    sds_free(name);
    sds_free(value);
    return true;
}

static bool load_body(reader_t *r, server_t *srv, int version, long long now_ms, rdb_load_result_t *res) {
    int dbid = 0;
    long long expire = -1;
    for (;;) {
        unsigned type;
        file_drop(r->file, r->pos); /* everything before this opcode is done with */
        if (loading_active(srv)) {  /* between two keys: the clients may be served here */
            bool go_on = true;
            if (!r->src) {
                go_on = loading_advance(srv, (long long)(r->pos - r->reported));
                r->reported = r->pos;
            } else if (++r->polls == 64) { /* a slow stream reads seldom: by time as well */
                r->polls = 0;
                go_on = loading_poll(srv);
            }
            if (!go_on) return fail(r, "Loading stopped: the server is shutting down");
        }
        if (!get_u8(r, &type)) return false;
        switch (type) {
            case RDB_OPCODE_EOF: return true;
            case RDB_OPCODE_EXPIRETIME_MS: {
                uint64_t le;
                if (!get_bytes(r, &le, 8)) return false;
                expire = (long long)le64toh(le);
                continue;
            }
            case RDB_OPCODE_EXPIRETIME: {
                uint32_t le;
                if (!get_bytes(r, &le, 4)) return false;
                expire = (long long)le32toh(le) * 1000;
                continue;
            }
            case RDB_OPCODE_SELECTDB: {
                uint64_t id;
                if (!get_len(r, &id)) return false;
                if (id >= (uint64_t)srv->dbnum)
                    return fail(r, "FATAL: Data file was created with a Redis server configured to handle more than %d databases",
                                srv->dbnum);
                dbid = (int)id;
                continue;
            }
            case RDB_OPCODE_RESIZEDB: {
                uint64_t a, b;
                if (!get_len(r, &a) || !get_len(r, &b)) return false;
                /* Size the tables once instead of growing and rehashing them
             * through the whole load; the hint is untrusted, so it never
             * exceeds the keys the rest of the file can hold. */
                size_t ka = resize_hint(r, a);
                if (ka && ht_size(r->dbs[dbid].keys) == 0) ht_expand(r->dbs[dbid].keys, ka);
                (void)b; /* keys with a TTL: their expire lives in the entry, no second table */
                continue;
            }
            case RDB_OPCODE_AUX:
                if (!get_aux(r, res)) return false;
                if (res->used_mem && loading_active(srv)) srv->load.rdb_used_mem = res->used_mem; /* INFO */
                continue;
            case RDB_OPCODE_IDLE: {
                uint64_t idle;
                if (!get_len(r, &idle)) return false;
                continue;
            }
            case RDB_OPCODE_FREQ: {
                unsigned f;
                if (!get_u8(r, &f)) return false;
                continue;
            }
            case RDB_OPCODE_MODULE_AUX:
                if (!skip_module_aux(r)) return false;
                continue;
            case RDB_OPCODE_FUNCTION2: {
                /* A library's code as one string: function.c loads it again. */
                sds code = get_string(r);
                if (!code) return false;
                if (r->libs) { /* loaded by the caller once the whole stream is in */
                    r->libs->code = zrealloc(r->libs->code, (r->libs->n + 1) * sizeof(sds));
                    r->libs->code[r->libs->n++] = code;
                    continue;
                }
                sds err = srv->durability_hooks->load_function(srv, code, sds_len(code), r->merge); /* function.c */
                sds_free(code);
                if (err) {
                    fail(r, "Failed loading library: %s", err);
                    sds_free(err);
                    return false;
                }
                continue;
            }
            case RDB_OPCODE_FUNCTION:
                return fail(r, "Pre-release function format (opcode 246) is not supported");
        }
        if (!get_key(r)) return false;
        robj *val = get_object(r, srv, (int)type);
        if (!val || !add_key(r, srv, dbid, r->key, val, expire, now_ms, res)) return false;
        expire = -1;
    }
    (void)version;
}

/* "REDIS" and four digits: the version, or -1. */
static int read_header(reader_t *r, rdb_load_result_t *res) {
    char magic[10];
    if (!get_bytes(r, magic, 9)) return -1;
    if (memcmp(magic, "REDIS", 5)) {
        r->pos = 0;
        fail(r, "Wrong signature trying to load DB from file");
        return -1;
    }
    magic[9] = '\0';
    int version = atoi(magic + 5);
    res->version = version;
    if (version < RDB_VERSION_MIN || version > RDB_VERSION_LOAD_MAX) {
        fail(r, "Can't handle RDB format version %d", version);
        return -1;
    }
    return version;
}

/* INFO persistence's rdb_last_load_keys_*: the last load that finished,
 * whatever it was for (start-up, DEBUG RELOAD, a full sync, an AOF's
 * preamble), as in Redis. */
static void note_load(server_t *srv, const rdb_load_result_t *res) {
    srv->rdb_last_load_keys_loaded = res->keys;
    srv->rdb_last_load_keys_expired = res->expired;
}

int rdb_load_stream(server_t *srv, rdb_source_t *src, db_t *dbs, rdb_libs_t *libs, long long now_ms,
                    rdb_load_result_t *res) {
    memset(res, 0, sizeof(*res));
    src->err[0] = '\0';
    reader_t r = {.err = res->err, .dbs = dbs, .src = src, .libs = libs};
    r.cap = STREAM_WINDOW;
    r.buf = r.win = zmalloc(r.cap);
    /* The CRC-64 can only be compared at the end, where a mismatch fails
     * the whole load and the caller drops every key of it before any
     * command sees one; so the blobs are taken as a vouched file's are
     * (no sorted-set order or repeated-member walks) unless
     * sanitize-dump-payload is yes.  A master that writes no checksum
     * (rdbchecksum no) is believed, as Redis believes it. */
    r.trusted = srv->cfg.sanitize_dump_payload != SANITIZE_YES;
    r.key = sds_empty();
    int version = read_header(&r, res);
    bool ok = version >= 0 && load_body(&r, srv, version, now_ms, res) && check_crc(&r, version, true, res);
    sds_free(r.key);
    zfree(r.lzf);
    res->consumed = r.base + r.pos;
    /* Bytes read past the trailer go back to the caller (an EOF mark). */
    src->rest = ok ? sds_newlen(r.win + r.pos, r.len - r.pos) : NULL;
    zfree(r.win);
    if (ok) note_load(srv, res);
    return ok ? 0 : -1;
}

void rdb_libs_free(rdb_libs_t *libs) {
    for (size_t i = 0; i < libs->n; i++) sds_free(libs->code[i]);
    zfree(libs->code);
    libs->code = NULL;
    libs->n = 0;
}

static int load_mem(server_t *srv, const unsigned char *buf, size_t len, rdb_file_t *file, unsigned flags,
                    long long now_ms, rdb_load_result_t *res) {
    memset(res, 0, sizeof(*res));
    bool verify_checksum = flags & RDB_LOAD_VERIFY;
    reader_t r = {.buf = buf, .len = len, .err = res->err, .dbs = srv->dbs, .file = file, .merge = flags & RDB_LOAD_MERGE};
    int version = read_header(&r, res);
    if (version < 0) return -1;
    if (verify_checksum && !precheck_crc(&r, version, res)) return -1;
    /* A matching CRC-64 vouches for the blobs' contents, unless the user
     * asked for every payload to be checked (sanitize-dump-payload yes). */
    r.trusted = res->checksum_verified && srv->cfg.sanitize_dump_payload != SANITIZE_YES;
    r.key = sds_empty();
    bool loaded = load_body(&r, srv, version, now_ms, res);
    sds_free(r.key);
    zfree(r.lzf);
    res->repl.valid = res->repl.valid && res->repl.id[0];
    if (!loaded) return -1;
    /* After EOF: the trailer (absent before version 5). */
    if (version >= 5) {
        if (!verify_checksum && !check_crc(&r, version, true, res)) return -1;
        if (verify_checksum && !need(&r, 8)) return -1;
        if (verify_checksum) r.pos += 8;
    }
    res->consumed = r.pos;
    note_load(srv, res);
    return 0;
}

int rdb_load_buffer(server_t *srv, const unsigned char *buf, size_t len, bool verify_checksum, long long now_ms,
                    rdb_load_result_t *res) {
    return load_mem(srv, buf, len, NULL, verify_checksum ? RDB_LOAD_VERIFY : 0, now_ms, res);
}

int rdb_load_file(server_t *srv, rdb_file_t *f, unsigned flags, long long now_ms, rdb_load_result_t *res) {
    return load_mem(srv, f->buf, f->len, f, flags, now_ms, res);
}

/* True if a loaded collection holds nothing (Redis refuses such a value in
 * a DUMP payload: a key never holds an empty collection). */
static bool value_is_empty(const robj *o) {
    switch (o->type) {
        case OBJ_LIST:
            return o->encoding == OBJ_ENCODING_LISTPACK ? lp_length(o->ptr) == 0 : ((quicklist *)o->ptr)->count == 0;
        case OBJ_SET:
            if (o->encoding == OBJ_ENCODING_INTSET) return intset_len(o->ptr) == 0;
            if (o->encoding == OBJ_ENCODING_LISTPACK) return lp_length(o->ptr) == 0;
            return ht_size((ht *)o->ptr) == 0;
        case OBJ_ZSET: return zset_length(o) == 0;
        case OBJ_HASH: return hash_type_len((robj *)o) == 0;
    }
    return false;
}

robj *rdb_load_value(server_t *srv, const unsigned char *buf, size_t len, bool trusted, char *err) {
    reader_t r = {.buf = buf, .len = len, .err = err, .trusted = trusted, .dbs = srv->dbs};
    err[0] = '\0';
    unsigned type;
    robj *o = NULL;
    if (get_u8(&r, &type)) {
        if (type >= RDB_OPCODE_FUNCTION2) fail(&r, "Opcode %u where a value type was expected", type);
        else {
            r.key = sds_empty();
            o = get_object(&r, srv, (int)type);
            sds_free(r.key);
        }
    }
    zfree(r.lzf);
    if (o && value_is_empty(o)) {
        obj_decref(o);
        o = NULL;
        fail(&r, "Empty collection");
    }
    return o;
}

int rdb_file_open(const char *path, rdb_file_t *f) {
    memset(f, 0, sizeof(*f));
    f->buf = (const unsigned char *)"";
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    f->len = (size_t)st.st_size;
    if (f->len) {
        /* Memory outside zmalloc: file-backed pages, in INFO's
         * rss_code_and_libraries while the load runs, handed back behind it. */
        void *p = mmap(NULL, f->len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        (void)madvise(p, f->len, MADV_SEQUENTIAL); /* read ahead, and older pages go first */
        f->buf = p;
        f->mapped = true;
    }
    close(fd);
    return 0;
}

void rdb_file_close(rdb_file_t *f) {
    if (f->mapped) munmap((void *)f->buf, f->len);
    memset(f, 0, sizeof(*f));
}
