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
 * One block per field: [field sds][1 byte: value header length][value sds].
 * The table stores the field sds itself (its own key), so a lookup hashes
 * and compares it directly; the value sits right behind it.  Setting a new
 * value builds a new block and swaps the table slot. */

static sds hf_new(const char *f, size_t flen, const char *v, size_t vlen) {
    char *block = zmalloc(sds_embed_size(flen) + 1 + sds_embed_size(vlen));
    sds field = sds_embed(block, f, flen);
    char *vh = field + flen + 1;
    sds value = sds_embed(vh + 1, v, vlen);
    vh[0] = (char)(value - (vh + 1));
    return field;
}

static sds hf_value(const void *field) {
    const char *vh = (const char *)field + sds_len((sds)field) + 1;
    return (sds)(vh + 1 + (uint8_t)vh[0]);
}

static void hf_free(void *field) { zfree((char *)field - sds_hdr_len(field)); }
static size_t hf_bytes(const void *field) { return zmalloc_size((const char *)field - sds_hdr_len((sds)field)); }

static const ht_type hash_ht_type = {NULL, dict_sds_hash, dict_sds_eq, hf_free};

/* Set field f to v in a hashtable hash; true when the field was new. */
static bool hash_ht_set(ht *t, const char *f, size_t flen, const char *v, size_t vlen) {
    sds nf = hf_new(f, flen, v, vlen);
    ht_position pos;
    void *old;
    if (ht_find_position_for_insert(t, nf, &pos, &old)) {
        ht_insert_at_position(t, &pos, nf);
        return true;
    }
    ht_replace_entry(t, old, nf);
    hf_free(old);
    return false;
}

/* ------------------------------------------------------------ the type */

static robj *hash_create(void) {
    robj *o = obj_create(OBJ_HASH, lp_new());
    o->encoding = OBJ_ENCODING_LISTPACK;
    return o;
}

static unsigned long hash_len(const robj *o) {
    if (o->encoding == OBJ_ENCODING_LISTPACK) return lp_length(o->ptr) / 2;
    return ht_size((const ht *)o->ptr);
}

static void hash_convert_to_ht(robj *o) {
    if (o->encoding != OBJ_ENCODING_LISTPACK) return;
    unsigned char *lp = o->ptr;
    ht *d = ht_create(&hash_ht_type);
    ht_expand(d, lp_length(lp) / 2);
    char fbuf[LP_INTBUF_SIZE], vbuf[LP_INTBUF_SIZE];
    for (unsigned char *p = lp_first(lp); p; p = lp_next(lp, lp_next(lp, p))) {
        size_t flen, vlen;
        const unsigned char *f = lp_get_str(p, &flen, fbuf);
        const unsigned char *v = lp_get_str(lp_next(lp, p), &vlen, vbuf);
        hash_ht_set(d, (const char *)f, flen, (const char *)v, vlen);
    }
    lp_free(lp);
    o->ptr = d;
    o->encoding = OBJ_ENCODING_HT;
}

/* Convert before writing argv[first..last] when one of them is too long for
 * a listpack (the same look-ahead Redis does). */
static void hash_try_convert_args(client_t *c, robj *o, int first, int last) {
    if (o->encoding != OBJ_ENCODING_LISTPACK) return;
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

/* Field entry of a listpack hash, or NULL. */
static unsigned char *lp_hash_find(unsigned char *lp, const char *f, size_t flen) {
    unsigned char *p = lp_first(lp);
    return p ? lp_find(lp, p, f, flen, 1) : NULL;
}

/* Value of field f as a string view (ints formatted into buf, which must
 * hold LP_INTBUF_SIZE bytes).  NULL when the field is absent. */
static const char *hash_get(robj *o, const char *f, size_t flen, size_t *vlen, char *buf) {
    if (o->encoding == OBJ_ENCODING_LISTPACK) {
        unsigned char *p = lp_hash_find(o->ptr, f, flen);
        if (!p) return NULL;
        return (const char *)lp_get_str(lp_next(o->ptr, p), vlen, buf);
    }
    sds key = sds_newlen(f, flen);
    void *field;
    bool found = ht_find(o->ptr, key, &field);
    sds_free(key);
    if (!found) return NULL;
    sds v = hf_value(field);
    *vlen = sds_len(v);
    return v;
}

const char *hash_type_get(robj *h, const char *f, size_t flen, size_t *vlen, char *buf) {
    return hash_get(h, f, flen, vlen, buf);
}

robj *hash_type_create_ht(size_t expected) {
    ht *t = ht_create(&hash_ht_type);
    if (expected) ht_expand(t, expected);
    robj *o = obj_create(OBJ_HASH, t);
    o->encoding = OBJ_ENCODING_HT;
    return o;
}

bool hash_type_ht_add(robj *h, const char *f, size_t flen, const char *v, size_t vlen) {
    sds nf = hf_new(f, flen, v, vlen);
    if (ht_add(h->ptr, nf)) return true;
    hf_free(nf);
    return false;
}

void hash_type_ht_foreach(robj *h, hash_pair_fn *fn, void *arg) {
    ht_iter it;
    void *f;
    ht_iter_init(&it, h->ptr, false);
    while (ht_next(&it, &f)) {
        sds v = hf_value(f);
        fn(arg, f, sds_len((sds)f), v, sds_len(v));
    }
    ht_iter_release(&it);
}

static bool hash_exists(robj *o, sds f) {
    char buf[LP_INTBUF_SIZE];
    size_t len;
    return hash_get(o, f, sds_len(f), &len, buf) != NULL;
}

/* Set field f to v (both borrowed).  Returns true when the field was new.
 * Converts to a hashtable when either is too long or the listpack grows past
 * the entry limit. */
static bool hash_set(client_t *c, robj *o, const char *f, size_t flen, const char *v, size_t vlen) {
    long long maxv = c->srv->cfg.hash_max_listpack_value;
    if (o->encoding == OBJ_ENCODING_LISTPACK && ((long long)flen > maxv || (long long)vlen > maxv))
        hash_convert_to_ht(o); /* e.g. a counter that grew long */
    if (o->encoding == OBJ_ENCODING_LISTPACK) {
        unsigned char *lp = o->ptr;
        unsigned char *p = lp_hash_find(lp, f, flen);
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
    return hash_ht_set(o->ptr, f, flen, v, vlen);
}

static bool hash_delete(robj *o, sds f) {
    if (o->encoding == OBJ_ENCODING_LISTPACK) {
        unsigned char *p = lp_hash_find(o->ptr, f, sds_len(f));
        if (!p) return false;
        o->ptr = lp_delete_range_at(o->ptr, &p, 2);
        return true;
    }
    return ht_delete(o->ptr, f); /* shrinks by itself */
}

/* Walks field/value pairs of either encoding.  Safe iteration is not
 * needed: nothing modifies the hash while one is live. */
typedef struct hash_iter {
    robj *o;
    unsigned char *fp; /* listpack: current field entry */
    ht_iter hi;
    void *de; /* hashtable: current field entry */
    char fbuf[LP_INTBUF_SIZE], vbuf[LP_INTBUF_SIZE];
} hash_iter_t;

static void hash_iter_init(hash_iter_t *it, robj *o) {
    it->o = o;
    it->fp = NULL;
    it->de = NULL;
    if (o->encoding == OBJ_ENCODING_HT) ht_iter_init(&it->hi, o->ptr, false);
}

static bool hash_iter_next(hash_iter_t *it) {
    if (it->o->encoding == OBJ_ENCODING_LISTPACK) {
        unsigned char *lp = it->o->ptr;
        it->fp = it->fp ? lp_next(lp, lp_next(lp, it->fp)) : lp_first(lp);
        return it->fp != NULL;
    }
    return ht_next(&it->hi, &it->de);
}

static const char *hash_iter_field(hash_iter_t *it, size_t *len) {
    if (it->o->encoding == OBJ_ENCODING_LISTPACK) return (const char *)lp_get_str(it->fp, len, it->fbuf);
    sds k = it->de;
    *len = sds_len(k);
    return k;
}

static const char *hash_iter_value(hash_iter_t *it, size_t *len) {
    if (it->o->encoding == OBJ_ENCODING_LISTPACK)
        return (const char *)lp_get_str(lp_next(it->o->ptr, it->fp), len, it->vbuf);
    sds v = hf_value(it->de);
    *len = sds_len(v);
    return v;
}

static void hash_iter_release(hash_iter_t *it) {
    if (it->o->encoding == OBJ_ENCODING_HT) ht_iter_release(&it->hi);
}

static void hash_free_value(robj *o) {
    if (o->encoding == OBJ_ENCODING_LISTPACK) lp_free(o->ptr);
    else ht_release(o->ptr);
}

/* Listpack: its buffer.  Hashtable: the table plus the field blocks
 * measured on up to samples of them (0: all), scaled to the whole. */
static size_t hash_mem_usage(robj *o, size_t samples) {
    if (o->encoding == OBJ_ENCODING_LISTPACK) return lp_mem_usage(o->ptr);
    return ht_mem_usage_sampled(o->ptr, samples, hf_bytes);
}

/* Registered by commands_init(). */
const obj_type_ops_t hash_type_ops = {hash_free_value, hash_mem_usage};

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

static void hset_generic(client_t *c, bool reply_count) {
    if (c->argc % 2 == 1) {
        reply_error_arity(c);
        return;
    }
    robj *o = hash_lookup_or_create(c, c->argv[1]);
    if (!o) return;
    hash_try_convert_args(c, o, 2, c->argc - 1);
    long long created = 0;
    for (int j = 2; j < c->argc; j += 2) {
        sds f = c->argv[j]->ptr, v = c->argv[j + 1]->ptr;
        created += hash_set(c, o, f, sds_len(f), v, sds_len(v));
    }
    db_signal_modified(c->db, c->argv[1]);
    notify_keyspace_event(c->srv, NOTIFY_HASH, "hset", c->argv[1], c->db->id); /* even if no field is new */
    if (reply_count) reply_ll(c, created);
    else reply_ok(c);
}

static void cmd_hset(client_t *c) { hset_generic(c, true); }
static void cmd_hmset(client_t *c) { hset_generic(c, false); }

static void cmd_hsetnx(client_t *c) {
    robj *o = hash_lookup_or_create(c, c->argv[1]);
    if (!o) return;
    if (hash_exists(o, c->argv[2]->ptr)) {
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

static void reply_field_value(client_t *c, robj *o, sds f) {
    char buf[LP_INTBUF_SIZE];
    size_t len;
    const char *v = o ? hash_get(o, f, sds_len(f), &len, buf) : NULL;
    if (v) reply_bulk(c, v, len);
    else reply_null(c);
}

static void cmd_hget(client_t *c) {
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_HASH, false, &wrongtype);
    if (!wrongtype) reply_field_value(c, o, c->argv[2]->ptr);
}

static void cmd_hmget(client_t *c) {
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_HASH, false, &wrongtype);
    if (wrongtype) return;
    reply_array_len(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) reply_field_value(c, o, c->argv[j]->ptr);
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

static void cmd_hlen(client_t *c) {
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_HASH, false, &wrongtype);
    if (!wrongtype) reply_ll(c, o ? (long long)hash_len(o) : 0);
}

static void cmd_hexists(client_t *c) {
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_HASH, false, &wrongtype);
    if (!wrongtype) reply_ll(c, o && hash_exists(o, c->argv[2]->ptr));
}

static void cmd_hstrlen(client_t *c) {
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_HASH, false, &wrongtype);
    if (wrongtype) return;
    char buf[LP_INTBUF_SIZE];
    size_t len = 0;
    sds f = c->argv[2]->ptr;
    if (!o || !hash_get(o, f, sds_len(f), &len, buf)) len = 0;
    reply_ll(c, (long long)len);
}

#define WITH_FIELDS 1
#define WITH_VALUES 2

/* HKEYS, HVALS, HGETALL. */
static void hgetall_generic(client_t *c, int what) {
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_HASH, false, &wrongtype);
    if (wrongtype) return;
    if (!o) {
        if (what == (WITH_FIELDS | WITH_VALUES)) reply_map_len(c, 0);
        else reply_empty_array(c);
        return;
    }
    long n = (long)hash_len(o);
    if (what == (WITH_FIELDS | WITH_VALUES)) reply_map_len(c, n);
    else reply_array_len(c, n);
    hash_iter_t it;
    hash_iter_init(&it, o);
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
    const char *cur = hash_get(o, f, sds_len(f), &len, buf);
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
    /* The new value is checked too, as Redis 7.0's hashTypeSet does: 1e308
     * is 309 digits, past hash-max-listpack-value, and turns the hash into
     * a table there (and HGETALL's order with it). */
    if (o->encoding == OBJ_ENCODING_LISTPACK &&
        ((long long)n > c->srv->cfg.hash_max_listpack_value || !lp_safe_to_add(o->ptr, (size_t)n + sds_len(f))))
        hash_convert_to_ht(o);
    hash_set(c, o, f, sds_len(f), out, (size_t)n);
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
    const char *cur = hash_get(o, f, sds_len(f), &len, buf);
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
    /* The new value is checked too, as Redis 7.0's hashTypeSet does: 1e308
     * is 309 digits, past hash-max-listpack-value, and turns the hash into
     * a table there (and HGETALL's order with it). */
    if (o->encoding == OBJ_ENCODING_LISTPACK &&
        ((long long)n > c->srv->cfg.hash_max_listpack_value || !lp_safe_to_add(o->ptr, (size_t)n + sds_len(f))))
        hash_convert_to_ht(o);
    hash_set(c, o, f, sds_len(f), out, (size_t)n);
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
    if (o->encoding == OBJ_ENCODING_LISTPACK) {
        it->fp = lp_seek(o->ptr, (long)(2 * util_random_below(hash_len(o))));
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
    if (!o) {
        reply_null(c);
        return;
    }
    hash_iter_t it;
    hash_iter_random(&it, o);
    reply_pair(c, &it, false);
}

/* ------------------------------------------------------------ HSCAN */

static bool hscan_next(void *state, const char **s, size_t *len) {
    hash_iter_t *it = state;
    if (!hash_iter_next(it)) return false;
    *s = hash_iter_field(it, len);
    return true;
}

/* Flat field/value pairs in every protocol, as Redis. */
static long hscan_emit(client_t *c, void *state, dict_entry *de, const char *f, size_t flen) {
    (void)de;
    reply_bulk(c, f, flen);
    size_t vlen;
    const char *v = hash_iter_value(state, &vlen);
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

static void cmd_hscan(client_t *c) {
    scan_args_t a;
    if (!scan_args_parse_or_reply(c, 2, false, &a)) return;
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_HASH, false, &wrongtype);
    if (wrongtype) return;
    if (!o) {
        scan_reply_empty(c);
        return;
    }
    hash_iter_t it;
    scan_source_t src = {.next = hscan_next, .emit = hscan_emit, .state = &it};
    if (o->encoding == OBJ_ENCODING_LISTPACK) {
        hash_iter_init(&it, o);
        scan_reply(c, &a, &src);
        hash_iter_release(&it);
    } else {
        src.t = o->ptr;
        src.t_name = hscan_field_name;
        src.t_emit = hscan_emit_entry;
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
