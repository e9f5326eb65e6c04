/* t_hash.c: the hash type and its commands (HSET ... HSCAN).
 *
 * Two encodings.  LISTPACK: one listpack of field, value, field, value ...
 * in insertion order, used while the hash has at most
 * hash-max-listpack-entries fields and no field or value longer than
 * hash-max-listpack-value bytes.  HT: a hashtable (lib/hashtable.h) of
 * field entries, one allocation per field holding the field and its value
 * (see "field entries" below).  A hash only ever goes
 * from listpack to hashtable (never back), as in Redis.
 * Callers: the command table (commands.c) and obj_mem_usage/obj_decref via
 * the ops registered from commands_init() (hash_type_ops).  Writes publish
 * Redis 7.0's keyspace events (notify.h): hset, hdel, hincrby, ... */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "dict.h"
#include "hashtable.h"
#include "keyspace.h"
#include "listpack.h"
#include "notify.h"
#include "reply.h"
#include "t_hash.h"
#include "scan.h"
#include "util.h"
#include "zmalloc.h"

/* ------------------------------------------------------------ field entries
 *
 * One block per field: [field sds][1 byte: value header][8-byte TTL, only
 * when the header's top bit says so][value sds].  The low 7 bits of the
 * header are the value's sds header length.  The table stores the field
 * sds itself (its own key), so a lookup hashes and compares it directly;
 * the value sits right behind it.  Setting a new value builds a new block
 * and swaps the table slot.  Only fields that were given a TTL carry the
 * 8 bytes, so a hash without field TTLs costs what it did before. */

#define HF_TTL_SLOT 0x80

static sds hf_new(const char *f, size_t flen, const char *v, size_t vlen, bool slot, uint64_t ttl) {
    size_t extra = slot ? 8 : 0;
    char *block = zmalloc(sds_embed_size(flen) + 1 + extra + sds_embed_size(vlen));
    sds field = sds_embed(block, f, flen);
    char *vh = field + flen + 1;
    sds value = sds_embed(vh + 1 + extra, v, vlen);
    vh[0] = (char)((value - (vh + 1 + extra)) | (slot ? HF_TTL_SLOT : 0));
    if (slot) memcpy(vh + 1, &ttl, 8);
    return field;
}

static inline char *hf_vh(const void *field) { return (char *)field + sds_len((sds)field) + 1; }
static inline bool hf_has_slot(const void *field) { return (uint8_t)hf_vh(field)[0] & HF_TTL_SLOT; }

static sds hf_value(const void *field) {
    const char *vh = hf_vh(field);
    uint8_t b = (uint8_t)vh[0];
    return (sds)(vh + 1 + ((b & HF_TTL_SLOT) ? 8 : 0) + (b & 0x7f));
}

static uint64_t hf_ttl(const void *field) {
    if (!hf_has_slot(field)) return HASH_TTL_NONE;
    uint64_t t;
    memcpy(&t, hf_vh(field) + 1, 8);
    return t;
}

static void hf_store_ttl(void *field, uint64_t t) { memcpy(hf_vh(field) + 1, &t, 8); }

static void hf_free(void *field) { zfree((char *)field - sds_hdr_len(field)); }
static size_t hf_bytes(const void *field) { return zmalloc_size((const char *)field - sds_hdr_len((sds)field)); }

static const ht_type hash_ht_type = {NULL, dict_sds_hash, dict_sds_eq, hf_free};

/* A hashtable hash that has (had) field TTLs: the same entries under a
 * type of its own, with this bookkeeping behind the table's handle
 * (ht_with_meta).  Invariant: nttl is the number of fields with a TTL;
 * min_ttl is at or before every one of them (HASH_TTL_NONE when nttl is
 * 0): set exactly by a full walk, lowered by every new TTL, left as it
 * is when the earliest field goes, so it may be early, never late. */
typedef struct hash_ttl_meta {
    uint64_t min_ttl;  /* ms: lower bound of the fields' TTLs */
    uint64_t pass_min; /* ms: the earliest TTL the walk in progress has seen */
    size_t nttl;       /* fields with a TTL */
    size_t cursor;     /* the expiry walk's ht_scan cursor (0: between walks) */
} hash_ttl_meta_t;

static const ht_type hash_ht_ttl_type = {NULL, dict_sds_hash, dict_sds_eq, hf_free};

static inline bool ht_has_ttls(const ht *t) { return t->type == &hash_ht_ttl_type; }
static inline hash_ttl_meta_t *ht_ttl_meta(ht *t) { return ht_meta(t); }

/* Count a field's TTL change in the table's bookkeeping. */
static void ht_ttl_account(ht *t, uint64_t old, uint64_t now_ttl) {
    if (!ht_has_ttls(t)) return;
    hash_ttl_meta_t *m = ht_ttl_meta(t);
    if (old != HASH_TTL_NONE) m->nttl--;
    if (now_ttl != HASH_TTL_NONE) {
        m->nttl++;
        if (m->min_ttl == HASH_TTL_NONE || now_ttl < m->min_ttl) m->min_ttl = now_ttl;
        /* a walk in progress may have passed this field's bucket: its end
         * must not set min_ttl after this TTL */
        if (m->cursor && (m->pass_min == HASH_TTL_NONE || now_ttl < m->pass_min)) m->pass_min = now_ttl;
    }
    if (m->nttl == 0) m->min_ttl = HASH_TTL_NONE;
}

/* Set field f to v in a hashtable hash; true when the field was new.  A
 * field that had a TTL keeps it when keep_ttl (HINCRBY), else loses it
 * (HSET), as in Redis 7.4. */
static bool hash_ht_set(ht *t, const char *f, size_t flen, const char *v, size_t vlen, bool keep_ttl) {
    sds nf = hf_new(f, flen, v, vlen, false, 0);
    ht_position pos;
    void *old;
    if (ht_find_position_for_insert(t, nf, &pos, &old)) {
        ht_insert_at_position(t, &pos, nf);
        return true;
    }
    uint64_t ttl = hf_ttl(old);
    if (ttl != HASH_TTL_NONE) {
        if (keep_ttl) {
            hf_free(nf);
            nf = hf_new(f, flen, v, vlen, true, ttl);
        } else {
            ht_ttl_account(t, ttl, HASH_TTL_NONE);
        }
    }
    ht_replace_entry(t, old, nf);
    hf_free(old);
    return false;
}

/* The lookup key for field f: in buf when short (no allocation), else a
 * copy the caller frees with key_done. */
#define FIELD_KEY_BUF (SDS_T5_MAX + 2)
static sds field_key(char *buf, const char *f, size_t flen) {
    return flen <= SDS_T5_MAX ? sds_in_buf_t5(buf, f, flen) : sds_newlen(f, flen);
}
static void key_done(char *buf, sds key) {
    if (key != buf + 1) sds_free(key);
}

static bool hash_ht_delete(ht *t, const char *f, size_t flen) {
    char buf[FIELD_KEY_BUF];
    sds key = field_key(buf, f, flen);
    void *old;
    bool found = ht_pop(t, key, &old);
    key_done(buf, key);
    if (!found) return false;
    ht_ttl_account(t, hf_ttl(old), HASH_TTL_NONE);
    hf_free(old);
    return true;
}

/* Delete entry, a field of t found by a scan: its own sds is the key, so
 * no copy of the name is made. */
static void hash_ht_delete_entry(ht *t, void *entry) {
    void *old;
    if (!ht_pop(t, entry, &old)) return;
    ht_ttl_account(t, hf_ttl(old), HASH_TTL_NONE);
    hf_free(old);
}

static void *hash_ht_find(ht *t, const char *f, size_t flen) {
    char buf[FIELD_KEY_BUF];
    sds key = field_key(buf, f, flen);
    void *field;
    bool found = ht_find(t, key, &field);
    key_done(buf, key);
    return found ? field : NULL;
}

/* ------------------------------------------------------------ listpacks
 *
 * LISTPACK: field, value, field, value ... in insertion order.
 * LISTPACK_EX (Redis 7.4's "listpackex", taken by a listpack hash when a
 * field first gets a TTL): field, value, TTL triplets, the TTL an integer
 * entry, 0 for none; fields with a TTL first in TTL order, then the others
 * in insertion order, so the soonest TTL is the third entry.  The layout
 * is Redis's, so RDB type 25 carries it as is. */

static inline bool hash_is_lp(const robj *o) {
    return o->encoding == OBJ_ENCODING_LISTPACK || o->encoding == OBJ_ENCODING_LISTPACK_EX;
}
static inline unsigned hash_lp_step(const robj *o) { return o->encoding == OBJ_ENCODING_LISTPACK_EX ? 3 : 2; }

/* The TTL entry of the triplet whose field is fptr. */
static uint64_t lpex_ttl(unsigned char *lp, unsigned char *fptr) {
    long long t = 0;
    lp_get_int(lp_next(lp, lp_next(lp, fptr)), &t);
    return (uint64_t)t;
}

/* Insert a triplet in TTL order: before the first field whose TTL is none
 * or not earlier; at the end when ttl is none. */
static unsigned char *lpex_insert(unsigned char *lp, const char *f, size_t flen, const char *v, size_t vlen,
                                  uint64_t ttl) {
    unsigned char *at = NULL;
    if (ttl != HASH_TTL_NONE) {
        for (unsigned char *p = lp_first(lp); p; p = lp_next(lp, lp_next(lp, lp_next(lp, p)))) {
            uint64_t t = lpex_ttl(lp, p);
            if (t == HASH_TTL_NONE || t >= ttl) {
                at = p;
                break;
            }
        }
    }
    if (!at) {
        lp = lp_append(lp, f, flen);
        lp = lp_append(lp, v, vlen);
        return lp_append_int(lp, (long long)ttl);
    }
    unsigned char *np;
    lp = lp_insert(lp, f, flen, at, LP_BEFORE, &np);
    lp = lp_insert(lp, v, vlen, np, LP_AFTER, &np);
    return lp_insert_int(lp, (long long)ttl, np, LP_AFTER, NULL);
}

/* Move the triplet at fptr to the place its new TTL gives it. */
static unsigned char *lpex_retime(unsigned char *lp, unsigned char *fptr, uint64_t ttl) {
    char fbuf[LP_INTBUF_SIZE], vbuf[LP_INTBUF_SIZE];
    size_t flen, vlen;
    const unsigned char *f = lp_get_str(fptr, &flen, fbuf);
    const unsigned char *v = lp_get_str(lp_next(lp, fptr), &vlen, vbuf);
    sds fc = sds_newlen(f, flen), vc = sds_newlen(v, vlen);
    lp = lp_delete_range_at(lp, &fptr, 3);
    lp = lpex_insert(lp, fc, flen, vc, vlen, ttl);
    sds_free(fc);
    sds_free(vc);
    return lp;
}

/* ------------------------------------------------------------ the type */

static robj *hash_create(void) {
    robj *o = obj_create(OBJ_HASH, lp_new());
    o->encoding = OBJ_ENCODING_LISTPACK;
    return o;
}

static unsigned long hash_len(const robj *o) {
    if (hash_is_lp(o)) return lp_length(o->ptr) / hash_lp_step(o);
    return ht_size((const ht *)o->ptr);
}

unsigned long hash_type_len(const robj *h) { return hash_len(h); }

static void add_pair_to_ht(void *arg, const char *f, size_t flen, const char *v, size_t vlen, uint64_t ttl) {
    ht *d = arg;
    ht_add(d, hf_new(f, flen, v, vlen, ttl != HASH_TTL_NONE, ttl));
    ht_ttl_account(d, HASH_TTL_NONE, ttl);
}

static void hash_convert_to_ht(robj *o) {
    if (!hash_is_lp(o)) return;
    unsigned char *lp = o->ptr;
    ht *d = ht_create(&hash_ht_type);
    if (o->encoding == OBJ_ENCODING_LISTPACK_EX) d = ht_with_meta(d, &hash_ht_ttl_type, sizeof(hash_ttl_meta_t));
    ht_expand(d, lp_length(lp) / hash_lp_step(o));
    hash_type_foreach(o, add_pair_to_ht, d);
    lp_free(lp);
    o->ptr = d;
    o->encoding = OBJ_ENCODING_HT;
}

/* Make a hash ready for field TTLs: a listpack becomes a listpackex (every
 * field with TTL 0), a hashtable gets its bookkeeping. */
static void hash_enable_ttls(robj *o) {
    if (o->encoding == OBJ_ENCODING_LISTPACK) {
        unsigned char *lp = o->ptr, *ex = lp_new();
        char fbuf[LP_INTBUF_SIZE], vbuf[LP_INTBUF_SIZE];
        for (unsigned char *p = lp_first(lp); p; p = lp_next(lp, lp_next(lp, p))) {
            size_t flen, vlen;
            const unsigned char *f = lp_get_str(p, &flen, fbuf);
            const unsigned char *v = lp_get_str(lp_next(lp, p), &vlen, vbuf);
            ex = lp_append(ex, f, flen);
            ex = lp_append(ex, v, vlen);
            ex = lp_append_int(ex, 0);
        }
        lp_free(lp);
        o->ptr = ex;
        o->encoding = OBJ_ENCODING_LISTPACK_EX;
    } else if (o->encoding == OBJ_ENCODING_HT && !ht_has_ttls(o->ptr)) {
        o->ptr = ht_with_meta(o->ptr, &hash_ht_ttl_type, sizeof(hash_ttl_meta_t));
    }
}

/* Convert before writing argv[first..last] when one of them is too long for
 * a listpack (the same look-ahead Redis does). */
static void hash_try_convert_args(client_t *c, robj *o, int first, int last) {
    if (!hash_is_lp(o)) return;
    size_t total = 0;
    for (int j = first; j <= last; j++) {
        size_t len = sds_len(c->argv[j]->ptr);
        total += len;
        if ((long long)len > c->srv->cfg.hash_max_listpack_value) {
            hash_convert_to_ht(o);
            return;
        }
    }
    if (!lp_safe_to_add(o->ptr, total)) hash_convert_to_ht(o);
}

/* Field entry of a listpack(ex) hash, or NULL. */
static unsigned char *lp_hash_find(robj *o, const char *f, size_t flen) {
    unsigned char *p = lp_first(o->ptr);
    return p ? lp_find(o->ptr, p, f, flen, hash_lp_step(o) - 1) : NULL;
}

/* Value of field f as a string view (ints formatted into buf, which must
 * hold LP_INTBUF_SIZE bytes) and its TTL (HASH_TTL_NONE: none), expired
 * or not.  NULL when the field is absent. */
static const char *hash_get_ttl(robj *o, const char *f, size_t flen, size_t *vlen, char *buf, uint64_t *ttl) {
    *ttl = HASH_TTL_NONE;
    if (hash_is_lp(o)) {
        unsigned char *p = lp_hash_find(o, f, flen);
        if (!p) return NULL;
        if (o->encoding == OBJ_ENCODING_LISTPACK_EX) *ttl = lpex_ttl(o->ptr, p);
        return (const char *)lp_get_str(lp_next(o->ptr, p), vlen, buf);
    }
    void *field = hash_ht_find(o->ptr, f, flen);
    if (!field) return NULL;
    *ttl = hf_ttl(field);
    sds v = hf_value(field);
    *vlen = sds_len(v);
    return v;
}

/* A TTL that has passed at now (Redis's lazy rule: strictly before). */
static inline bool ttl_passed(uint64_t ttl, long long now) { return ttl != HASH_TTL_NONE && (long long)ttl < now; }

const char *hash_type_get(robj *h, const char *f, size_t flen, size_t *vlen, char *buf) {
    uint64_t ttl;
    const char *v = hash_get_ttl(h, f, flen, vlen, buf, &ttl);
    return v && !ttl_passed(ttl, util_mstime()) ? v : NULL;
}

robj *hash_type_create_ht(size_t expected, bool with_ttls) {
    ht *t = ht_create(&hash_ht_type);
    if (with_ttls) t = ht_with_meta(t, &hash_ht_ttl_type, sizeof(hash_ttl_meta_t));
    if (expected) ht_expand(t, expected);
    robj *o = obj_create(OBJ_HASH, t);
    o->encoding = OBJ_ENCODING_HT;
    return o;
}

bool hash_type_ht_add(robj *h, const char *f, size_t flen, const char *v, size_t vlen, uint64_t ttl) {
    if (ttl != HASH_TTL_NONE) hash_enable_ttls(h);
    sds nf = hf_new(f, flen, v, vlen, ttl != HASH_TTL_NONE, ttl);
    if (ht_add(h->ptr, nf)) {
        ht_ttl_account(h->ptr, HASH_TTL_NONE, ttl);
        return true;
    }
    hf_free(nf);
    return false;
}

void hash_type_foreach(robj *h, hash_pair_fn *fn, void *arg) {
    if (hash_is_lp(h)) {
        unsigned char *lp = h->ptr;
        bool ex = h->encoding == OBJ_ENCODING_LISTPACK_EX;
        char fbuf[LP_INTBUF_SIZE], vbuf[LP_INTBUF_SIZE];
        for (unsigned char *p = lp_first(lp); p;) {
            size_t flen, vlen;
            const unsigned char *f = lp_get_str(p, &flen, fbuf);
            unsigned char *vp = lp_next(lp, p);
            const unsigned char *v = lp_get_str(vp, &vlen, vbuf);
            uint64_t ttl = ex ? lpex_ttl(lp, p) : HASH_TTL_NONE;
            fn(arg, (const char *)f, flen, (const char *)v, vlen, ttl);
            p = lp_next(lp, vp);
            if (ex) p = lp_next(lp, p);
        }
        return;
    }
    ht_iter it;
    void *f;
    ht_iter_init(&it, h->ptr, false);
    while (ht_next(&it, &f)) {
        sds v = hf_value(f);
        fn(arg, f, sds_len((sds)f), v, sds_len(v), hf_ttl(f));
    }
    ht_iter_release(&it);
}

unsigned char *hash_type_lp(robj *h) { return h->ptr; }

robj *hash_type_create_lpex(void) {
    robj *o = obj_create(OBJ_HASH, lp_new());
    o->encoding = OBJ_ENCODING_LISTPACK_EX;
    return o;
}

bool hash_type_add_loaded(server_t *srv, robj *h, const char *f, size_t flen, const char *v, size_t vlen,
                          uint64_t ttl) {
    if (hash_is_lp(h)) {
        long long maxv = srv->cfg.hash_max_listpack_value;
        if ((long long)flen > maxv || (long long)vlen > maxv || !lp_safe_to_add(h->ptr, flen + vlen + 16) ||
            (long long)hash_len(h) >= srv->cfg.hash_max_listpack_entries)
            hash_convert_to_ht(h);
    }
    if (hash_is_lp(h)) {
        if (lp_hash_find(h, f, flen)) return false;
        h->ptr = lpex_insert(h->ptr, f, flen, v, vlen, ttl);
        return true;
    }
    return hash_type_ht_add(h, f, flen, v, vlen, ttl);
}

robj *hash_type_from_lpex(server_t *srv, unsigned char *lp) {
    robj *o = obj_create(OBJ_HASH, lp);
    o->encoding = OBJ_ENCODING_LISTPACK_EX;
    if ((long long)hash_len(o) > srv->cfg.hash_max_listpack_entries ||
        !lp_fits(lp, SIZE_MAX, (size_t)srv->cfg.hash_max_listpack_value))
        hash_convert_to_ht(o);
    return o;
}

/* ------------------------------------------------------------ field TTLs */

bool hash_has_field_ttl(const robj *h) {
    if (h->encoding == OBJ_ENCODING_LISTPACK_EX) return true;
    return h->encoding == OBJ_ENCODING_HT && ht_has_ttls(h->ptr);
}

static bool hash_has_field_ttl_op(const robj *o) { return o->type == OBJ_HASH && hash_has_field_ttl(o); }

uint64_t hash_min_ttl(robj *h, bool exact) {
    if (h->encoding == OBJ_ENCODING_LISTPACK_EX) {
        unsigned char *p = lp_first(h->ptr);
        return p ? lpex_ttl(h->ptr, p) : HASH_TTL_NONE;
    }
    if (h->encoding != OBJ_ENCODING_HT || !ht_has_ttls(h->ptr)) return HASH_TTL_NONE;
    hash_ttl_meta_t *m = ht_ttl_meta(h->ptr);
    if (!exact || m->nttl == 0) return m->min_ttl;
    uint64_t min = HASH_TTL_NONE;
    ht_iter it;
    void *f;
    ht_iter_init(&it, h->ptr, false);
    while (ht_next(&it, &f)) {
        uint64_t t = hf_ttl(f);
        if (t != HASH_TTL_NONE && (min == HASH_TTL_NONE || t < min)) min = t;
    }
    ht_iter_release(&it);
    return min;
}

bool hash_field_ttl(robj *h, const char *f, size_t flen, uint64_t *ttl) {
    char buf[LP_INTBUF_SIZE];
    size_t vlen;
    return hash_get_ttl(h, f, flen, &vlen, buf, ttl) != NULL;
}

bool hash_field_set_ttl(robj *h, const char *f, size_t flen, uint64_t ttl) {
    if (hash_is_lp(h)) {
        if (!lp_hash_find(h, f, flen)) return false;
        hash_enable_ttls(h);
        unsigned char *p = lp_hash_find(h, f, flen);
        if (lpex_ttl(h->ptr, p) != ttl) h->ptr = lpex_retime(h->ptr, p, ttl);
        return true;
    }
    ht *t = h->ptr;
    void *field = hash_ht_find(t, f, flen);
    if (!field) return false;
    if (ttl != HASH_TTL_NONE) {
        hash_enable_ttls(h);
        t = h->ptr;
    }
    uint64_t old = hf_ttl(field);
    if (hf_has_slot(field)) {
        hf_store_ttl(field, ttl);
    } else if (ttl != HASH_TTL_NONE) {
        sds v = hf_value(field);
        sds nf = hf_new(f, flen, v, sds_len(v), true, ttl);
        ht_replace_entry(t, field, nf);
        hf_free(field);
    }
    ht_ttl_account(t, old, ttl);
    return true;
}

bool hash_field_delete(robj *h, const char *f, size_t flen) {
    if (hash_is_lp(h)) {
        unsigned char *p = lp_hash_find(h, f, flen);
        if (!p) return false;
        h->ptr = lp_delete_range_at(h->ptr, &p, hash_lp_step(h));
        return true;
    }
    return hash_ht_delete(h->ptr, f, flen); /* shrinks by itself */
}

/* Set field f to v (both borrowed).  Returns true when the field was new.
 * Converts to a hashtable when either is too long or the listpack grows past
 * the entry limit.  A field's TTL goes unless keep_ttl. */
static bool hash_set_ex(client_t *c, robj *o, const char *f, size_t flen, const char *v, size_t vlen, bool keep_ttl) {
    long long maxv = c->srv->cfg.hash_max_listpack_value;
    /* the new pair is checked as Redis 7.0's hashTypeSet does: 1e308 from
     * HINCRBYFLOAT is 309 digits, past hash-max-listpack-value, and turns
     * the hash into a table there (and HGETALL's order with it) */
    if (hash_is_lp(o) && ((long long)flen > maxv || (long long)vlen > maxv || !lp_safe_to_add(o->ptr, flen + vlen)))
        hash_convert_to_ht(o); /* e.g. a counter that grew long */
    if (o->encoding == OBJ_ENCODING_LISTPACK) {
        unsigned char *lp = o->ptr;
        unsigned char *p = lp_hash_find(o, f, flen);
        if (p) {
            p = lp_next(lp, p);
            o->ptr = lp_replace(lp, &p, v, vlen);
            return false;
        }
        lp = lp_append(lp, f, flen);
        o->ptr = lp_append(lp, v, vlen);
        if ((long long)hash_len(o) > c->srv->cfg.hash_max_listpack_entries) hash_convert_to_ht(o);
        return true;
    }
    if (o->encoding == OBJ_ENCODING_LISTPACK_EX) {
        unsigned char *lp = o->ptr;
        unsigned char *p = lp_hash_find(o, f, flen);
        if (p) {
            bool had_ttl = lpex_ttl(lp, p) != HASH_TTL_NONE;
            unsigned char *vp = lp_next(lp, p);
            lp = lp_replace(lp, &vp, v, vlen);
            if (had_ttl && !keep_ttl) lp = lpex_retime(lp, lp_prev(lp, vp), HASH_TTL_NONE);
            o->ptr = lp;
            return false;
        }
        o->ptr = lpex_insert(lp, f, flen, v, vlen, HASH_TTL_NONE);
        if ((long long)hash_len(o) > c->srv->cfg.hash_max_listpack_entries) hash_convert_to_ht(o);
        return true;
    }
    return hash_ht_set(o->ptr, f, flen, v, vlen, keep_ttl);
}

static bool hash_set(client_t *c, robj *o, const char *f, size_t flen, const char *v, size_t vlen) {
    return hash_set_ex(c, o, f, flen, v, vlen, false);
}

static bool hash_delete(robj *o, sds f) { return hash_field_delete(o, f, sds_len(f)); }

/* Walks field/value pairs of either encoding.  Safe iteration is not
 * needed: nothing modifies the hash while one is live.  With skip_before
 * set (a time in ms), fields whose TTL passed before it are stepped over. */
typedef struct hash_iter {
    robj *o;
    unsigned char *fp; /* listpack: current field entry */
    ht_iter hi;
    void *de; /* hashtable: current field entry */
    long long skip_before;
    char fbuf[LP_INTBUF_SIZE], vbuf[LP_INTBUF_SIZE];
} hash_iter_t;

static void hash_iter_init(hash_iter_t *it, robj *o) {
    it->o = o;
    it->fp = NULL;
    it->de = NULL;
    it->skip_before = 0;
    if (o->encoding == OBJ_ENCODING_HT) ht_iter_init(&it->hi, o->ptr, false);
}

static uint64_t hash_iter_ttl(hash_iter_t *it) {
    if (it->o->encoding == OBJ_ENCODING_LISTPACK_EX) return lpex_ttl(it->o->ptr, it->fp);
    if (it->o->encoding == OBJ_ENCODING_HT) return hf_ttl(it->de);
    return HASH_TTL_NONE;
}

static bool hash_iter_next(hash_iter_t *it) {
    for (;;) {
        if (hash_is_lp(it->o)) {
            unsigned char *lp = it->o->ptr;
            if (!it->fp) {
                it->fp = lp_first(lp);
            } else {
                it->fp = lp_next(lp, lp_next(lp, it->fp));
                if (it->fp && it->o->encoding == OBJ_ENCODING_LISTPACK_EX) it->fp = lp_next(lp, it->fp);
            }
            if (!it->fp) return false;
        } else if (!ht_next(&it->hi, &it->de)) {
            return false;
        }
        if (!it->skip_before || !ttl_passed(hash_iter_ttl(it), it->skip_before)) return true;
    }
}

static const char *hash_iter_field(hash_iter_t *it, size_t *len) {
    if (hash_is_lp(it->o)) return (const char *)lp_get_str(it->fp, len, it->fbuf);
    sds k = it->de;
    *len = sds_len(k);
    return k;
}

static const char *hash_iter_value(hash_iter_t *it, size_t *len) {
    if (hash_is_lp(it->o)) return (const char *)lp_get_str(lp_next(it->o->ptr, it->fp), len, it->vbuf);
    sds v = hf_value(it->de);
    *len = sds_len(v);
    return v;
}

static void hash_iter_release(hash_iter_t *it) {
    if (it->o->encoding == OBJ_ENCODING_HT) ht_iter_release(&it->hi);
}

static void hash_free_value(robj *o) {
    if (hash_is_lp(o)) lp_free(o->ptr);
    else ht_release(o->ptr);
}

/* Listpack: its buffer.  Hashtable: the table plus the field blocks
 * measured on up to samples of them (0: all), scaled to the whole. */
static size_t hash_mem_usage(robj *o, size_t samples) {
    if (hash_is_lp(o)) return lp_mem_usage(o->ptr);
    return ht_mem_usage_sampled(o->ptr, samples, hf_bytes);
}

/* Registered by commands_init(). */
const obj_type_ops_t hash_type_ops = {hash_free_value, hash_mem_usage, hash_has_field_ttl_op};

/* ------------------------------------------------------------ field expiry */

static robj *hdel_name(void) {
    static robj *name;
    if (!name) name = obj_create_string("HDEL", 4);
    return name;
}

/* The field's HDEL to the AOF and the replicas, and the counter: f an
 * sds, borrowed (propagation translates argv at once, keeps none of it). */
static void propagate_field_expiry_sds(db_t *db, robj *key, sds f) {
    robj fo = {OBJ_STRING, OBJ_ENCODING_RAW, 0, 1, f};
    robj *argv[3] = {hdel_name(), key, &fo};
    db->srv->keyspace_hooks->propagate(db, argv, 3);
    db->srv->stats.expired_subkeys++;
}

static void propagate_field_expiry(db_t *db, robj *key, const char *f, size_t flen) {
    sds fs = sds_newlen(f, flen);
    propagate_field_expiry_sds(db, key, fs);
    sds_free(fs);
}

bool hash_expire_field(db_t *db, robj *key, robj *h, const char *f, size_t flen, bool notify) {
    hash_field_delete(h, f, flen);
    propagate_field_expiry(db, key, f, flen);
    if (notify) notify_keyspace_event(db->srv, NOTIFY_HASH, "hexpired", key, db->id);
    bool gone = hash_len(h) == 0;
    if (gone) {
        if (notify) notify_keyspace_event(db->srv, NOTIFY_GENERIC, "del", key, db->id);
        db_delete(db, key); /* frees h */
    }
    db_signal_modified(db, key);
    return gone;
}

/* Whether this server deletes expired fields now: a master that is not
 * loading nor held by CLIENT PAUSE (Redis 7.4's conditions). */
static bool fields_expire_locally(server_t *srv) {
    return srv->keyspace_hooks->keys_expire_locally(srv) && !srv->loading && !srv->keyspace_hooks->writes_paused(srv);
}

/* A field a command reads whose TTL is ttl: live, or expired (deleted
 * here on a master; a replica's own clients see it missing, its master's
 * link sees it until the master's HDEL). */
static hash_field_state_t hash_field_live(client_t *c, robj *key, robj *h, const char *f, size_t flen, uint64_t ttl,
                                          int flags) {
    server_t *srv = c->srv;
    if (!ttl_passed(ttl, srv->mstime)) return HASH_FIELD_LIVE;
    if (!srv->keyspace_hooks->keys_expire_locally(srv)) {
        client_t *cur = srv->current_client;
        return cur && (cur->flags & CLIENT_MASTER) ? HASH_FIELD_LIVE : HASH_FIELD_EXPIRED;
    }
    if (!fields_expire_locally(srv)) return HASH_FIELD_EXPIRED;
    return hash_expire_field(c->db, key, h, f, flen, !(flags & HASH_LAZY_QUIET)) ? HASH_FIELD_HASH_GONE
                                                                                 : HASH_FIELD_EXPIRED;
}

/* The value of field f for a command, with lazy expiry: NULL when absent
 * or expired (then *state says whether the hash went with it). */
static const char *hash_get_live(client_t *c, robj *key, robj *o, const char *f, size_t flen, size_t *vlen,
                                 char *buf, int flags, hash_field_state_t *state) {
    uint64_t ttl;
    *state = HASH_FIELD_LIVE;
    const char *v = hash_get_ttl(o, f, flen, vlen, buf, &ttl);
    if (!v) return NULL;
    *state = hash_field_live(c, key, o, f, flen, ttl, flags);
    return *state == HASH_FIELD_LIVE ? v : NULL;
}

/* Delete every expired field of h now (HRANDFIELD, as Redis 7.4 does):
 * true when the hash went with them. */
static bool hash_expire_all_due(client_t *c, robj *key, robj *h) {
    if (!hash_has_field_ttl(h) || !fields_expire_locally(c->srv)) return false;
    uint64_t min = hash_min_ttl(h, false);
    if (min == HASH_TTL_NONE || (long long)min >= c->srv->mstime) return false;
    size_t n = 0;
    bool more = true;
    while (more && hash_len(h)) n += hash_expire_due(c->db, key, h, c->srv->mstime - 1, SIZE_MAX, &more);
    if (!n) return false;
    notify_keyspace_event(c->srv, NOTIFY_HASH, "hexpired", key, c->db->id);
    if (hash_len(h) == 0) {
        notify_keyspace_event(c->srv, NOTIFY_GENERIC, "del", key, c->db->id);
        db_delete(c->db, key);
        db_signal_modified(c->db, key);
        return true;
    }
    db_signal_modified(c->db, key);
    return false;
}

typedef struct due_ctx {
    long long now;
    size_t max;
    void **doomed; /* the due entries themselves (no entry moves while they wait) */
    size_t n, cap;
    uint64_t min_left;
} due_ctx_t;

static void due_collect(void *priv, void *field) {
    due_ctx_t *d = priv;
    uint64_t t = hf_ttl(field);
    if (t == HASH_TTL_NONE) return;
    if ((long long)t <= d->now && d->n < d->max) {
        if (d->n == d->cap) {
            d->cap = d->cap ? d->cap * 2 : 16;
            d->doomed = zrealloc(d->doomed, d->cap * sizeof(void *));
        }
        d->doomed[d->n++] = field;
    } else if (d->min_left == HASH_TTL_NONE || t < d->min_left) {
        d->min_left = t;
    }
}

/* The hashtable's walk: a slice of buckets from the saved cursor, the
 * due fields collected then deleted; a finished walk sets min_ttl to the
 * earliest TTL it left. */
static size_t ht_expire_due(db_t *db, robj *key, robj *h, long long now, size_t max, bool *more) {
    ht *t = h->ptr;
    hash_ttl_meta_t *m = ht_ttl_meta(t);
    due_ctx_t d = {now, max, NULL, 0, 0, HASH_TTL_NONE};
    if (m->cursor == 0) m->pass_min = HASH_TTL_NONE;
    size_t buckets = 0;
    do {
        m->cursor = ht_scan(t, m->cursor, due_collect, &d);
    } while (m->cursor && ++buckets < 256 && d.n < max);
    if (d.min_left != HASH_TTL_NONE && (m->pass_min == HASH_TTL_NONE || d.min_left < m->pass_min))
        m->pass_min = d.min_left;
    bool walk_done = m->cursor == 0 && d.n < max;
    size_t cursor = m->cursor, n = d.n;
    for (size_t i = 0; i < d.n; i++) {
        propagate_field_expiry_sds(db, key, d.doomed[i]); /* the entry is its field's sds */
        hash_ht_delete_entry(h->ptr, d.doomed[i]);
    }
    zfree(d.doomed);
    if (hash_len(h) == 0) {
        *more = false;
        return n;
    }
    t = h->ptr;
    m = ht_ttl_meta(t);
    m->cursor = cursor;
    if (walk_done) {
        m->min_ttl = m->nttl ? m->pass_min : HASH_TTL_NONE;
        m->cursor = 0;
    }
    *more = m->cursor != 0 || d.n >= max;
    return n;
}

size_t hash_expire_due(db_t *db, robj *key, robj *h, long long now, size_t max, bool *more) {
    *more = false;
    if (h->encoding == OBJ_ENCODING_HT) return ht_has_ttls(h->ptr) ? ht_expire_due(db, key, h, now, max, more) : 0;
    if (h->encoding != OBJ_ENCODING_LISTPACK_EX) return 0;
    size_t n = 0;
    while (n < max && hash_len(h)) {
        unsigned char *p = lp_first(h->ptr);
        uint64_t t = lpex_ttl(h->ptr, p);
        if (t == HASH_TTL_NONE || (long long)t > now) break;
        char fbuf[LP_INTBUF_SIZE];
        size_t flen;
        const unsigned char *f = lp_get_str(p, &flen, fbuf);
        sds fc = sds_newlen(f, flen);
        h->ptr = lp_delete_range_at(h->ptr, &p, 3);
        propagate_field_expiry_sds(db, key, fc);
        sds_free(fc);
        n++;
    }
    *more = n == max && hash_len(h);
    return n;
}

/* ------------------------------------------------------------ lookups */

/* The hash at key for writing, created when missing; NULL after replying
 * WRONGTYPE. */
static robj *hash_lookup_or_create(client_t *c, robj *key) {
    robj *o = db_lookup_write(c->db, key);
    if (!o) {
        o = hash_create();
        db_add(c->db, key, o);
        return o;
    }
    return db_check_type_or_reply(c, o, OBJ_HASH) ? o : NULL;
}

/* ------------------------------------------------------------ commands */

/* Set pairs fv[0..2n) in hash o at key: the look-ahead conversion, the
 * values, the signal and the hset event; returns how many fields were new. */
static long long set_pairs(client_t *c, robj *key, robj *o, robj **fv, int n) {
    if (hash_is_lp(o)) {
        size_t total = 0;
        for (int j = 0; j < 2 * n && hash_is_lp(o); j++) {
            size_t len = sds_len(fv[j]->ptr);
            total += len;
            if ((long long)len > c->srv->cfg.hash_max_listpack_value) hash_convert_to_ht(o);
        }
        if (hash_is_lp(o) && !lp_safe_to_add(o->ptr, total)) hash_convert_to_ht(o);
    }
    long long created = 0;
    for (int j = 0; j < 2 * n; j += 2) {
        sds f = fv[j]->ptr, v = fv[j + 1]->ptr;
        created += hash_set(c, o, f, sds_len(f), v, sds_len(v));
    }
    db_signal_modified(c->db, key);
    notify_keyspace_event(c->srv, NOTIFY_HASH, "hset", key, c->db->id); /* even if no field is new */
    return created;
}

robj *hash_type_set_pairs(client_t *c, robj *key, robj **fv, int npairs) {
    robj *o = hash_lookup_or_create(c, key);
    set_pairs(c, key, o, fv, npairs);
    return o;
}

static void hset_generic(client_t *c, bool reply_count) {
    if (c->argc % 2 == 1) {
        reply_error_arity(c);
        return;
    }
    robj *o = hash_lookup_or_create(c, c->argv[1]);
    if (!o) return;
    long long created = set_pairs(c, c->argv[1], o, c->argv + 2, (c->argc - 2) / 2);
    if (reply_count) reply_ll(c, created);
    else reply_ok(c);
}

static void cmd_hset(client_t *c) { hset_generic(c, true); }
static void cmd_hmset(client_t *c) { hset_generic(c, false); }

/* The field's value for a command that is about to write the hash, with
 * lazy expiry; *o becomes a fresh hash when the expiry took the key. */
static const char *hash_get_for_write(client_t *c, robj **o, sds f, size_t *len, char *buf) {
    hash_field_state_t st;
    const char *v = hash_get_live(c, c->argv[1], *o, f, sds_len(f), len, buf, 0, &st);
    if (st == HASH_FIELD_HASH_GONE) {
        *o = hash_create();
        db_add(c->db, c->argv[1], *o);
    }
    return v;
}

static void cmd_hsetnx(client_t *c) {
    robj *o = hash_lookup_or_create(c, c->argv[1]);
    if (!o) return;
    char buf[LP_INTBUF_SIZE];
    size_t len;
    if (hash_get_for_write(c, &o, c->argv[2]->ptr, &len, buf)) {
        reply_ll(c, 0);
        return;
    }
    hash_try_convert_args(c, o, 2, 3);
    sds f = c->argv[2]->ptr, v = c->argv[3]->ptr;
    hash_set(c, o, f, sds_len(f), v, sds_len(v));
    db_signal_modified(c->db, c->argv[1]);
    notify_keyspace_event(c->srv, NOTIFY_HASH, "hset", c->argv[1], c->db->id); /* Redis's name for it */
    reply_ll(c, 1);
}

/* One field's value or null; the state of a lazily expired field. */
static hash_field_state_t reply_field_value(client_t *c, robj *o, sds f, int flags) {
    char buf[LP_INTBUF_SIZE];
    size_t len;
    hash_field_state_t st = HASH_FIELD_LIVE;
    const char *v = o ? hash_get_live(c, c->argv[1], o, f, sds_len(f), &len, buf, flags, &st) : NULL;
    if (v) reply_bulk(c, v, len);
    else reply_null(c);
    return st;
}

static void cmd_hget(client_t *c) {
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_HASH, false, &wrongtype);
    if (!wrongtype) reply_field_value(c, o, c->argv[2]->ptr, 0);
}

/* Fields that expire while HMGET reads them: one hexpired (and del) event
 * after the reply, as Redis 7.4 sends them. */
static void cmd_hmget(client_t *c) {
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_HASH, false, &wrongtype);
    if (wrongtype) return;
    reply_array_len(c, c->argc - 2);
    bool expired = false, gone = false;
    for (int j = 2; j < c->argc; j++) {
        hash_field_state_t st = reply_field_value(c, gone ? NULL : o, c->argv[j]->ptr, HASH_LAZY_QUIET);
        expired |= st != HASH_FIELD_LIVE;
        gone |= st == HASH_FIELD_HASH_GONE;
    }
    if (expired) notify_keyspace_event(c->srv, NOTIFY_HASH, "hexpired", c->argv[1], c->db->id);
    if (gone) notify_keyspace_event(c->srv, NOTIFY_GENERIC, "del", c->argv[1], c->db->id);
}

static void cmd_hdel(client_t *c) {
    robj *o = db_lookup_write(c->db, c->argv[1]);
    if (!o) {
        reply_ll(c, 0);
        return;
    }
    if (!db_check_type_or_reply(c, o, OBJ_HASH)) return;
    long long deleted = 0;
    bool emptied = false;
    for (int j = 2; j < c->argc && !emptied; j++) {
        if (!hash_delete(o, c->argv[j]->ptr)) continue;
        deleted++;
        emptied = hash_len(o) == 0;
    }
    if (deleted) notify_keyspace_event(c->srv, NOTIFY_HASH, "hdel", c->argv[1], c->db->id);
    if (emptied) {
        db_delete(c->db, c->argv[1]); /* frees o */
        notify_keyspace_event(c->srv, NOTIFY_GENERIC, "del", c->argv[1], c->db->id);
    } else if (deleted) {
        db_signal_modified(c->db, c->argv[1]);
    }
    reply_ll(c, deleted);
}

/* Expired fields not yet deleted count, as in Redis 7.4. */
static void cmd_hlen(client_t *c) {
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_HASH, false, &wrongtype);
    if (!wrongtype) reply_ll(c, o ? (long long)hash_len(o) : 0);
}

static void cmd_hexists(client_t *c) {
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_HASH, false, &wrongtype);
    if (wrongtype) return;
    char buf[LP_INTBUF_SIZE];
    size_t len;
    hash_field_state_t st;
    sds f = c->argv[2]->ptr;
    reply_ll(c, o && hash_get_live(c, c->argv[1], o, f, sds_len(f), &len, buf, 0, &st));
}

static void cmd_hstrlen(client_t *c) {
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_HASH, false, &wrongtype);
    if (wrongtype) return;
    char buf[LP_INTBUF_SIZE];
    size_t len = 0;
    hash_field_state_t st;
    sds f = c->argv[2]->ptr;
    if (!o || !hash_get_live(c, c->argv[1], o, f, sds_len(f), &len, buf, 0, &st)) len = 0;
    reply_ll(c, (long long)len);
}

#define WITH_FIELDS 1
#define WITH_VALUES 2

/* Fields of o a reader sees: those whose TTL has not passed. */
static unsigned long hash_live_len(client_t *c, robj *o) {
    if (!hash_has_field_ttl(o)) return hash_len(o);
    uint64_t min = hash_min_ttl(o, false);
    if (min == HASH_TTL_NONE || (long long)min >= c->srv->mstime) return hash_len(o);
    unsigned long n = 0;
    hash_iter_t it;
    hash_iter_init(&it, o);
    it.skip_before = c->srv->mstime;
    while (hash_iter_next(&it)) n++;
    hash_iter_release(&it);
    return n;
}

/* HKEYS, HVALS, HGETALL: expired fields are left out, not deleted. */
static void hgetall_generic(client_t *c, int what) {
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_HASH, false, &wrongtype);
    if (wrongtype) return;
    if (!o) {
        if (what == (WITH_FIELDS | WITH_VALUES)) reply_map_len(c, 0);
        else reply_empty_array(c);
        return;
    }
    long n = (long)hash_live_len(c, o);
    if (what == (WITH_FIELDS | WITH_VALUES)) reply_map_len(c, n);
    else reply_array_len(c, n);
    hash_iter_t it;
    hash_iter_init(&it, o);
    if (hash_has_field_ttl(o)) it.skip_before = c->srv->mstime;
    while (hash_iter_next(&it)) {
        size_t len;
        const char *s;
        if (what & WITH_FIELDS) {
            s = hash_iter_field(&it, &len);
            reply_bulk(c, s, len);
        }
        if (what & WITH_VALUES) {
            s = hash_iter_value(&it, &len);
            reply_bulk(c, s, len);
        }
    }
    hash_iter_release(&it);
}

static void cmd_hkeys(client_t *c) { hgetall_generic(c, WITH_FIELDS); }
static void cmd_hvals(client_t *c) { hgetall_generic(c, WITH_VALUES); }
static void cmd_hgetall(client_t *c) { hgetall_generic(c, WITH_FIELDS | WITH_VALUES); }

static void cmd_hincrby(client_t *c) {
    long long incr, v = 0;
    if (!cmd_get_ll_or_reply(c, c->argv[3], &incr, NULL)) return;
    robj *o = hash_lookup_or_create(c, c->argv[1]);
    if (!o) return;
    char buf[LP_INTBUF_SIZE];
    size_t len;
    sds f = c->argv[2]->ptr;
    const char *cur = hash_get_for_write(c, &o, f, &len, buf);
    if (cur && !util_str2ll(cur, len, &v)) {
        reply_error(c, "hash value is not an integer");
        return;
    }
    if ((incr < 0 && v < 0 && incr < LLONG_MIN - v) || (incr > 0 && v > 0 && incr > LLONG_MAX - v)) {
        reply_error(c, RL_ERR_OVERFLOW);
        return;
    }
    v += incr;
    char out[32];
    int n = util_ll2str(out, sizeof(out), v);
    hash_try_convert_args(c, o, 2, 2);
    hash_set_ex(c, o, f, sds_len(f), out, (size_t)n, true); /* the field keeps its TTL */
    db_signal_modified(c->db, c->argv[1]);
    notify_keyspace_event(c->srv, NOTIFY_HASH, "hincrby", c->argv[1], c->db->id);
    reply_ll(c, v);
}

static void cmd_hincrbyfloat(client_t *c) {
    long double incr, v = 0;
    if (!obj_get_long_double(c->argv[3], &incr)) {
        reply_error(c, RL_ERR_NOT_FLOAT);
        return;
    }
    if (isnan(incr) || isinf(incr)) {
        reply_error(c, "value is NaN or Infinity");
        return;
    }
    robj *o = hash_lookup_or_create(c, c->argv[1]);
    if (!o) return;
    char buf[LP_INTBUF_SIZE];
    size_t len;
    sds f = c->argv[2]->ptr;
    const char *cur = hash_get_for_write(c, &o, f, &len, buf);
    if (cur && !util_str2ld(cur, len, &v)) {
        reply_error(c, "hash value is not a float");
        return;
    }
    v += incr;
    if (isnan(v) || isinf(v)) {
        reply_error(c, "increment would produce NaN or Infinity");
        return;
    }
    /* Room for the widest long double in %.17Lf (about 4950 digits), as
     * INCRBYFLOAT has: a 256-byte buffer cut 1e400 to 255 digits, stored
     * a different number than the reply Redis gives (all 401 digits). */
    char out[5 * 1024];
    int n = util_ld2str(out, sizeof(out), v);
    hash_try_convert_args(c, o, 2, 2);
    hash_set_ex(c, o, f, sds_len(f), out, (size_t)n, true); /* the field keeps its TTL */
    db_signal_modified(c->db, c->argv[1]);
    notify_keyspace_event(c->srv, NOTIFY_HASH, "hincrbyfloat", c->argv[1], c->db->id);
    reply_bulk(c, out, (size_t)n);
    const keyspace_hooks_t *log = c->srv->keyspace_hooks;
    if (log->logging_on(c)) { /* logged as the value it set, as Redis does */
        robj *args[3] = {c->argv[1], c->argv[2], obj_create_string(out, (size_t)n)};
        log->log_as(c, "HSET", args, 3);
        obj_decref(args[2]);
    }
}

/* ------------------------------------------------------------ HRANDFIELD */

static void reply_pair(client_t *c, hash_iter_t *it, bool withvalues) {
    size_t len;
    const char *s;
    if (withvalues && c->resp > 2) reply_array_len(c, 2);
    s = hash_iter_field(it, &len);
    reply_bulk(c, s, len);
    if (withvalues) {
        s = hash_iter_value(it, &len);
        reply_bulk(c, s, len);
    }
}

/* Position an iterator on a uniformly chosen pair. */
static void hash_iter_random(hash_iter_t *it, robj *o) {
    hash_iter_init(it, o);
    if (hash_is_lp(o)) {
        it->fp = lp_seek(o->ptr, (long)(hash_lp_step(o) * util_random_below(hash_len(o))));
    } else {
        ht_random_entry(o->ptr, &it->de);
    }
}

/* Every pair once, in storage order, keeping each with probability
 * still-needed / still-unseen (selection sampling): exactly `count`
 * distinct pairs, uniformly chosen. */
static void hrandfield_distinct(client_t *c, robj *o, unsigned long count, bool withvalues) {
    unsigned long left = hash_len(o);
    hash_iter_t it;
    hash_iter_init(&it, o);
    while (count && hash_iter_next(&it)) {
        if (util_random_below(left--) < count) {
            reply_pair(c, &it, withvalues);
            count--;
        }
    }
    hash_iter_release(&it);
}

/* count pairs drawn uniformly with repetitions from a hashtable hash:
 * many draws index every entry once, a few use ht_random_entry (also
 * uniform, but a probe per draw). */
static void hrandfield_repeats_ht(client_t *c, robj *o, unsigned long count, bool withvalues) {
    ht *d = o->ptr;
    size_t n = ht_size(d);
    void **all = NULL;
    if (count >= n / 4) {
        all = zmalloc(n * sizeof(void *));
        size_t i = 0;
        ht_iter hi;
        ht_iter_init(&hi, d, false);
        while (ht_next(&hi, &all[i])) i++;
        ht_iter_release(&hi);
    }
    while (count--) {
        hash_iter_t it;
        hash_iter_init(&it, o);
        if (all) it.de = all[util_random_below(n)];
        else ht_random_entry(d, &it.de);
        reply_pair(c, &it, withvalues);
        hash_iter_release(&it);
    }
    zfree(all);
}

/* Checks in Redis 7.0's order: count, then the option, then its range. */
static void hrandfield_with_count(client_t *c) {
    long long l;
    if (!cmd_get_range_or_reply(c, c->argv[2], -LONG_MAX, LONG_MAX, &l, NULL)) return;
    if (c->argc > 4 || (c->argc == 4 && strcasecmp(c->argv[3]->ptr, "withvalues"))) {
        reply_error(c, RL_ERR_SYNTAX);
        return;
    }
    bool withvalues = c->argc == 4;
    if (withvalues && (l < -LONG_MAX / 2 || l > LONG_MAX / 2)) {
        reply_error(c, "value is out of range");
        return;
    }
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_HASH, false, &wrongtype);
    if (wrongtype) return;
    if (o && hash_expire_all_due(c, c->argv[1], o)) o = NULL; /* Redis 7.4: expired fields go first */
    if (!o || l == 0) {
        reply_empty_array(c);
        return;
    }
    unsigned long size = hash_len(o);
    if (l < 0) { /* repetitions allowed */
        unsigned long count = (unsigned long)-l;
        reply_array_len(c, (long)(withvalues && c->resp == 2 ? count * 2 : count));
        if (o->encoding == OBJ_ENCODING_HT) {
            hrandfield_repeats_ht(c, o, count, withvalues);
            return;
        }
        while (count--) {
            hash_iter_t it;
            hash_iter_random(&it, o);
            reply_pair(c, &it, withvalues);
        }
        return;
    }
    unsigned long count = (unsigned long)l;
    if (count > size) count = size;
    reply_array_len(c, (long)(withvalues && c->resp == 2 ? count * 2 : count));
    hrandfield_distinct(c, o, count, withvalues);
}

static void cmd_hrandfield(client_t *c) {
    if (c->argc >= 3) {
        hrandfield_with_count(c);
        return;
    }
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_HASH, false, &wrongtype);
    if (wrongtype) return;
    if (o && hash_expire_all_due(c, c->argv[1], o)) o = NULL; /* Redis 7.4: expired fields go first */
    if (!o) {
        reply_null(c);
        return;
    }
    hash_iter_t it;
    hash_iter_random(&it, o);
    reply_pair(c, &it, false);
}

/* ------------------------------------------------------------ HSCAN */

/* A compact hash's walk: expired fields stepped over (Redis 7.4), values
 * left out under NOVALUES. */
typedef struct hscan_state {
    hash_iter_t it;
    bool novalues;
    long long now;
} hscan_state_t;

static bool hscan_next(void *state, const char **s, size_t *len) {
    hscan_state_t *st = state;
    if (!hash_iter_next(&st->it)) return false;
    *s = hash_iter_field(&st->it, len);
    return true;
}

/* Flat field/value pairs in every protocol, as Redis. */
static long hscan_emit(client_t *c, void *state, dict_entry *de, const char *f, size_t flen) {
    (void)de;
    hscan_state_t *st = state;
    reply_bulk(c, f, flen);
    if (st->novalues) return 1;
    size_t vlen;
    const char *v = hash_iter_value(&st->it, &vlen);
    reply_bulk(c, v, vlen);
    return 2;
}

static sds hscan_field_name(void *entry) { return entry; }

static long hscan_emit_entry(client_t *c, void *entry) {
    sds v = hf_value(entry);
    reply_bulk(c, entry, sds_len((sds)entry));
    reply_bulk(c, v, sds_len(v));
    return 2;
}

static bool hscan_keep_entry(client_t *c, const scan_args_t *a, void *entry, void *state) {
    (void)c;
    (void)a;
    return !ttl_passed(hf_ttl(entry), ((hscan_state_t *)state)->now);
}

static void cmd_hscan(client_t *c) {
    scan_args_t a;
    if (!scan_args_parse_or_reply(c, 2, SCAN_OPT_NOVALUES, &a)) return;
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_HASH, false, &wrongtype);
    if (wrongtype) return;
    if (!o) {
        scan_reply_empty(c);
        return;
    }
    hscan_state_t st = {.novalues = a.novalues, .now = c->srv->mstime};
    scan_source_t src = {.next = hscan_next, .emit = hscan_emit, .state = &st};
    if (hash_is_lp(o)) {
        hash_iter_init(&st.it, o);
        if (hash_has_field_ttl(o)) st.it.skip_before = st.now;
        scan_reply(c, &a, &src);
        hash_iter_release(&st.it);
    } else {
        src.t = o->ptr;
        src.t_name = hscan_field_name;
        src.t_emit = a.novalues ? NULL : hscan_emit_entry;
        if (hash_has_field_ttl(o)) src.t_keep = hscan_keep_entry;
        scan_reply(c, &a, &src);
    }
}

command_t hash_commands[] = {
    {"hset", cmd_hset, -4, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "hash", "Set the string value of a hash field", "2.0.0", NULL},
    {"hsetnx", cmd_hsetnx, 4, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "hash", "Set the value of a hash field, only if the field does not exist", "2.0.0", NULL},
    {"hmset", cmd_hmset, -4, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "hash", "Set multiple hash fields to multiple values", "2.0.0", NULL},
    {"hget", cmd_hget, 3, CMD_READONLY | CMD_FAST, 1, 1, 1, "hash", "Get the value of a hash field", "2.0.0", NULL},
    {"hmget", cmd_hmget, -3, CMD_READONLY | CMD_FAST, 1, 1, 1, "hash", "Get the values of all the given hash fields", "2.0.0", NULL},
    {"hgetall", cmd_hgetall, 2, CMD_READONLY, 1, 1, 1, "hash", "Get all the fields and values in a hash", "2.0.0", NULL},
    {"hdel", cmd_hdel, -3, CMD_WRITE | CMD_FAST, 1, 1, 1, "hash", "Delete one or more hash fields", "2.0.0", NULL},
    {"hlen", cmd_hlen, 2, CMD_READONLY | CMD_FAST, 1, 1, 1, "hash", "Get the number of fields in a hash", "2.0.0", NULL},
    {"hexists", cmd_hexists, 3, CMD_READONLY | CMD_FAST, 1, 1, 1, "hash", "Determine if a hash field exists", "2.0.0", NULL},
    {"hkeys", cmd_hkeys, 2, CMD_READONLY, 1, 1, 1, "hash", "Get all the fields in a hash", "2.0.0", NULL},
    {"hvals", cmd_hvals, 2, CMD_READONLY, 1, 1, 1, "hash", "Get all the values in a hash", "2.0.0", NULL},
    {"hincrby", cmd_hincrby, 4, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "hash", "Increment the integer value of a hash field by the given number", "2.0.0", NULL},
    {"hincrbyfloat", cmd_hincrbyfloat, 4, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "hash", "Increment the float value of a hash field by the given amount", "2.6.0", NULL},
    {"hstrlen", cmd_hstrlen, 3, CMD_READONLY | CMD_FAST, 1, 1, 1, "hash", "Get the length of the value of a hash field", "3.2.0", NULL},
    {"hrandfield", cmd_hrandfield, -2, CMD_READONLY, 1, 1, 1, "hash", "Get one or multiple random fields from a hash", "6.2.0", NULL},
    {"hscan", cmd_hscan, -3, CMD_READONLY, 1, 1, 1, "hash", "Incrementally iterate hash fields and associated values", "2.8.0", NULL},
    {0},
};
