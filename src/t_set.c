/* t_set.c: the set type and its commands (SADD ... SSCAN), plus the small
 * read access of t_set.h that the sorted-set algebra uses.
 *
 * Three encodings, as Redis 7.2 has them:
 *   INTSET   every member a canonical integer, at most set-max-intset-entries;
 *   LISTPACK at most set-max-listpack-entries members of at most
 *            set-max-listpack-value bytes, in insertion order;
 *   HT       a hashtable (lib/hashtable.h) whose entries are the members'
 *            sds strings themselves: one allocation and one slot each.
 * A set moves intset -> listpack (a non-integer arrives while it is small)
 * or -> hashtable (too many members / too long), never back.  Set algebra
 * (SINTER, SUNION, SDIFF and their STORE forms) builds its result as a new
 * set starting from an intset, so results get the encoding they need.
 * Callers: the command table (commands.c) and obj_* through the ops
 * registered from commands_init() (set_type_ops).  Writes publish Redis
 * 7.0's keyspace events (notify.h), "del" last when a key goes. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "dict.h"
#include "hashtable.h"
#include "intset.h"
#include "keyspace.h"
#include "listpack.h"
#include "notify.h"
#include "reply.h"
#include "scan.h"
#include "t_set.h"
#include "util.h"
#include "zmalloc.h"

/* ------------------------------------------------------------ the type */

static const ht_type set_ht_type = {NULL, dict_sds_hash, dict_sds_eq, dict_sds_free};

/* Borrowed member pointers compared by address, for "seen" bookkeeping
 * during sampling. */
static const ht_type set_seen_type = {NULL, ht_hash_pointer, NULL, NULL};

static robj *set_create_ht(size_t expected) {
    ht *t = ht_create(&set_ht_type);
    if (expected) ht_expand(t, expected);
    robj *o = obj_create(OBJ_SET, t);
    o->encoding = OBJ_ENCODING_HT;
    return o;
}

/* Add a member to a hashtable set; true when it was new. */
static bool set_ht_add(ht *t, const char *s, size_t len) {
    sds k = sds_newlen(s, len);
    ht_position pos;
    if (!ht_find_position_for_insert(t, k, &pos, NULL)) {
        sds_free(k);
        return false;
    }
    ht_insert_at_position(t, &pos, k);
    return true;
}

typedef struct set_limits {
    long long intset_entries, lp_entries, lp_value;
} set_limits_t;

static set_limits_t set_limits(const client_t *c) {
    const rl_config_t *cfg = &c->srv->cfg;
    set_limits_t l = {cfg->set_max_intset_entries, cfg->set_max_listpack_entries, cfg->set_max_listpack_value};
    if (l.intset_entries > (1LL << 30)) l.intset_entries = 1LL << 30;
    return l;
}

static robj *set_create_intset(void) {
    robj *o = obj_create(OBJ_SET, intset_new());
    o->encoding = OBJ_ENCODING_INTSET;
    return o;
}

static robj *set_create_listpack(void) {
    robj *o = obj_create(OBJ_SET, lp_new());
    o->encoding = OBJ_ENCODING_LISTPACK;
    return o;
}

/* A new empty set in the encoding its first member s needs. */
static robj *set_create_for(const set_limits_t *l, const char *s, size_t len) {
    long long v;
    if (util_str2ll(s, len, &v) && l->intset_entries >= 1) return set_create_intset();
    if (l->lp_entries >= 1 && (long long)len <= l->lp_value) return set_create_listpack();
    return set_create_ht(0);
}

static unsigned long set_size(const robj *o) {
    switch (o->encoding) {
        case OBJ_ENCODING_INTSET: return intset_len(o->ptr);
        case OBJ_ENCODING_LISTPACK: return lp_length(o->ptr);
        default: return ht_size((const ht *)o->ptr);
    }
}

/* Walks members of any encoding as string views.  The set must not change
 * while the iterator is live. */
typedef struct set_iter {
    robj *o;
    uint32_t ipos;    /* intset: next position */
    unsigned char *p; /* listpack: current entry */
    ht_iter hi;
    char buf[LP_INTBUF_SIZE];
} set_iter_t;

static void set_iter_init(set_iter_t *it, robj *o) {
    it->o = o;
    it->ipos = 0;
    it->p = NULL;
    if (o->encoding == OBJ_ENCODING_HT) ht_iter_init(&it->hi, o->ptr, false);
}

static const char *set_iter_next(set_iter_t *it, size_t *len) {
    robj *o = it->o;
    if (o->encoding == OBJ_ENCODING_INTSET) {
        int64_t v;
        if (!intset_get(o->ptr, it->ipos++, &v)) return NULL;
        *len = (size_t)util_ll2str(it->buf, sizeof(it->buf), v);
        return it->buf;
    }
    if (o->encoding == OBJ_ENCODING_LISTPACK) {
        it->p = it->p ? lp_next(o->ptr, it->p) : lp_first(o->ptr);
        return it->p ? (const char *)lp_get_str(it->p, len, it->buf) : NULL;
    }
    void *k;
    if (!ht_next(&it->hi, &k)) return NULL;
    *len = sds_len(k);
    return k;
}

static void set_iter_release(set_iter_t *it) {
    if (it->o->encoding == OBJ_ENCODING_HT) ht_iter_release(&it->hi);
}

static void set_convert(robj *o, int encoding) {
    if (o->encoding == encoding) return;
    unsigned long n = set_size(o);
    void *to;
    if (encoding == OBJ_ENCODING_LISTPACK) {
        to = lp_new();
    } else {
        to = ht_create(&set_ht_type);
        ht_expand(to, n);
    }
    set_iter_t it;
    set_iter_init(&it, o);
    const char *s;
    size_t len;
    while ((s = set_iter_next(&it, &len))) {
        if (encoding == OBJ_ENCODING_LISTPACK) {
            to = lp_append(to, s, len);
        } else {
            set_ht_add(to, s, len);
        }
    }
    set_iter_release(&it);
    if (o->encoding == OBJ_ENCODING_INTSET) intset_free(o->ptr);
    else lp_free(o->ptr);
    o->ptr = to;
    o->encoding = (unsigned)encoding;
}

static bool set_is_member(robj *o, const char *s, size_t len) {
    if (o->encoding == OBJ_ENCODING_INTSET) {
        long long v;
        return util_str2ll(s, len, &v) && intset_find(o->ptr, v);
    }
    if (o->encoding == OBJ_ENCODING_LISTPACK) {
        unsigned char *p = lp_first(o->ptr);
        return p && lp_find(o->ptr, p, s, len, 0);
    }
    sds k = sds_newlen(s, len);
    bool found = ht_find(o->ptr, k, NULL);
    sds_free(k);
    return found;
}

/* Add s (borrowed); true when it was new.  Converts as the limits say. */
static bool set_add(const set_limits_t *l, robj *o, const char *s, size_t len) {
    long long v;
    if (o->encoding == OBJ_ENCODING_INTSET) {
        if (util_str2ll(s, len, &v)) {
            bool added;
            o->ptr = intset_add(o->ptr, v, &added);
            if (added && (long long)intset_len(o->ptr) > l->intset_entries) set_convert(o, OBJ_ENCODING_HT);
            return added;
        }
        bool fits = (long long)intset_len(o->ptr) < l->lp_entries && (long long)len <= l->lp_value &&
                    (long long)intset_max_strlen(o->ptr) <= l->lp_value;
        set_convert(o, fits ? OBJ_ENCODING_LISTPACK : OBJ_ENCODING_HT);
    }
    if (o->encoding == OBJ_ENCODING_LISTPACK) {
        if (set_is_member(o, s, len)) return false;
        if ((long long)lp_length(o->ptr) < l->lp_entries && (long long)len <= l->lp_value &&
            lp_safe_to_add(o->ptr, len)) {
            o->ptr = lp_append(o->ptr, s, len);
            return true;
        }
        set_convert(o, OBJ_ENCODING_HT);
    }
    return set_ht_add(o->ptr, s, len);
}

static bool set_remove(robj *o, const char *s, size_t len) {
    if (o->encoding == OBJ_ENCODING_INTSET) {
        long long v;
        bool removed = false;
        if (util_str2ll(s, len, &v)) o->ptr = intset_remove(o->ptr, v, &removed);
        return removed;
    }
    if (o->encoding == OBJ_ENCODING_LISTPACK) {
        unsigned char *p = lp_first(o->ptr);
        if (p) p = lp_find(o->ptr, p, s, len, 0);
        if (!p) return false;
        o->ptr = lp_delete(o->ptr, p, NULL);
        return true;
    }
    sds k = sds_newlen(s, len);
    bool removed = ht_delete(o->ptr, k); /* shrinks by itself */
    sds_free(k);
    return removed;
}

/* A uniformly chosen member as a fresh sds (caller frees); set non-empty. */
static sds set_random_member(robj *o) {
    if (o->encoding == OBJ_ENCODING_INTSET) return sds_fromll(intset_random(o->ptr));
    if (o->encoding == OBJ_ENCODING_LISTPACK) {
        unsigned char *p = lp_seek(o->ptr, (long)util_random_below(lp_length(o->ptr)));
        char buf[LP_INTBUF_SIZE];
        size_t len;
        const unsigned char *s = lp_get_str(p, &len, buf);
        return sds_newlen(s, len);
    }
    void *k;
    ht_random_entry(o->ptr, &k);
    return sds_dup(k);
}

static void set_free_value(robj *o) {
    if (o->encoding == OBJ_ENCODING_INTSET) intset_free(o->ptr);
    else if (o->encoding == OBJ_ENCODING_LISTPACK) lp_free(o->ptr);
    else ht_release(o->ptr);
}

static size_t member_bytes(const void *member) { return sds_alloc_size((const sds)member); }

static size_t set_mem_usage(robj *o, size_t samples) {
    if (o->encoding == OBJ_ENCODING_INTSET) return intset_mem_usage(o->ptr);
    if (o->encoding == OBJ_ENCODING_LISTPACK) return lp_mem_usage(o->ptr);
    /* The table, plus the member strings measured on up to samples of
     * them (0: all) and scaled to the whole set. */
    return ht_mem_usage_sampled(o->ptr, samples, member_bytes);
}

/* Registered by commands_init(). */
const obj_type_ops_t set_type_ops = {set_free_value, set_mem_usage};

/* ------------------------------------------------------------ lookups */

/* Reply with every member of o as a RESP3 set (array in RESP2). */
static void reply_set_members(client_t *c, robj *o) {
    reply_set_len(c, (long)set_size(o));
    set_iter_t it;
    set_iter_init(&it, o);
    const char *s;
    size_t len;
    while ((s = set_iter_next(&it, &len))) reply_bulk(c, s, len);
    set_iter_release(&it);
}

/* ------------------------------------------------------------ commands */

/* Remove the set at key, which a command just emptied, and publish "del"
 * (after the command's own event, as Redis does). */
static void set_delete_emptied(client_t *c, robj *key) {
    db_delete(c->db, key);
    notify_keyspace_event(c->srv, NOTIFY_GENERIC, "del", key, c->db->id);
}

static void cmd_sadd(client_t *c) {
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_SET, true, &wrongtype);
    if (wrongtype) return;
    set_limits_t l = set_limits(c);
    if (!o) {
        o = set_create_for(&l, c->argv[2]->ptr, sds_len(c->argv[2]->ptr));
        db_add(c->db, c->argv[1], o);
    }
    long long added = 0;
    for (int j = 2; j < c->argc; j++) added += set_add(&l, o, c->argv[j]->ptr, sds_len(c->argv[j]->ptr));
    if (added) {
        db_signal_modified(c->db, c->argv[1]);
        notify_keyspace_event(c->srv, NOTIFY_SET, "sadd", c->argv[1], c->db->id);
    }
    reply_ll(c, added);
}

static void cmd_srem(client_t *c) {
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_SET, true, &wrongtype);
    if (wrongtype) return;
    if (!o) {
        reply_ll(c, 0);
        return;
    }
    long long removed = 0;
    bool emptied = false;
    for (int j = 2; j < c->argc && !emptied; j++) {
        if (!set_remove(o, c->argv[j]->ptr, sds_len(c->argv[j]->ptr))) continue;
        removed++;
        emptied = set_size(o) == 0;
    }
    if (removed) notify_keyspace_event(c->srv, NOTIFY_SET, "srem", c->argv[1], c->db->id);
    if (emptied) set_delete_emptied(c, c->argv[1]);
    else if (removed) db_signal_modified(c->db, c->argv[1]);
    reply_ll(c, removed);
}

static void cmd_smembers(client_t *c) {
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_SET, false, &wrongtype);
    if (wrongtype) return;
    if (!o) reply_set_len(c, 0);
    else reply_set_members(c, o);
}

static void cmd_sismember(client_t *c) {
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_SET, false, &wrongtype);
    if (wrongtype) return;
    reply_ll(c, o && set_is_member(o, c->argv[2]->ptr, sds_len(c->argv[2]->ptr)));
}

static void cmd_smismember(client_t *c) {
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_SET, false, &wrongtype);
    if (wrongtype) return;
    reply_array_len(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) reply_ll(c, o && set_is_member(o, c->argv[j]->ptr, sds_len(c->argv[j]->ptr)));
}

static void cmd_scard(client_t *c) {
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_SET, false, &wrongtype);
    if (!wrongtype) reply_ll(c, o ? (long long)set_size(o) : 0);
}

static void cmd_smove(client_t *c) {
    robj *src = db_lookup_write(c->db, c->argv[1]);
    robj *dst = db_lookup_write(c->db, c->argv[2]);
    sds ele = c->argv[3]->ptr;
    if (!src) {
        reply_ll(c, 0);
        return;
    }
    if (!db_check_type_or_reply(c, src, OBJ_SET) || (dst && !db_check_type_or_reply(c, dst, OBJ_SET))) return;
    if (src == dst) {
        reply_ll(c, set_is_member(src, ele, sds_len(ele)));
        return;
    }
    if (!set_remove(src, ele, sds_len(ele))) {
        reply_ll(c, 0);
        return;
    }
    /* Events: srem (and del) on the source, then sadd on the destination
     * unless it had the member already. */
    notify_keyspace_event(c->srv, NOTIFY_SET, "srem", c->argv[1], c->db->id);
    if (set_size(src) == 0) set_delete_emptied(c, c->argv[1]);
    else db_signal_modified(c->db, c->argv[1]);
    set_limits_t l = set_limits(c);
    if (!dst) {
        dst = set_create_for(&l, ele, sds_len(ele));
        db_add(c->db, c->argv[2], dst);
    }
    if (set_add(&l, dst, ele, sds_len(ele))) {
        db_signal_modified(c->db, c->argv[2]);
        notify_keyspace_event(c->srv, NOTIFY_SET, "sadd", c->argv[2], c->db->id);
    }
    reply_ll(c, 1);
}

/* ------------------------------------------------------------ SPOP / SRANDMEMBER */

/* SPOP is logged as what it did, so that a replica or a reload does not
 * draw again: SREM key member... (n popped, members[1..n]; members[0] is
 * the key's slot) or DEL when the set went, as Redis logs it. */
static void log_spop(client_t *c, robj **members, long n) {
    members[0] = c->argv[1];
    c->srv->keyspace_hooks->log_as(c, "SREM", members, (int)n + 1);
    for (long i = 1; i <= n; i++) obj_decref(members[i]);
}

static void spop_with_count(client_t *c) {
    long long count;
    if (!cmd_get_range_or_reply(c, c->argv[2], 0, LLONG_MAX, &count, RL_ERR_POSITIVE)) return;
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_SET, true, &wrongtype);
    if (wrongtype) return;
    if (!o || count == 0) {
        reply_set_len(c, 0);
        return;
    }
    unsigned long size = set_size(o);
    notify_keyspace_event(c->srv, NOTIFY_SET, "spop", c->argv[1], c->db->id);
    if ((unsigned long long)count >= size) {
        reply_set_members(c, o);
        set_delete_emptied(c, c->argv[1]);
        c->srv->keyspace_hooks->log_as(c, "DEL", &c->argv[1], 1);
        return;
    }
    /* Pop one random member at a time: removal keeps later draws distinct. */
    bool logging = c->srv->keyspace_hooks->logging_on(c);
    robj **popped = logging ? zmalloc(sizeof(robj *) * (size_t)(count + 1)) : NULL;
    reply_set_len(c, (long)count);
    for (long long i = 0; i < count; i++) {
        sds m = set_random_member(o);
        set_remove(o, m, sds_len(m));
        if (logging) popped[i + 1] = obj_create_string(m, sds_len(m));
        reply_bulk_sds_take(c, m);
    }
    if (logging) log_spop(c, popped, (long)count); /* (not logging: SPOP is not logged either) */
    zfree(popped);
    db_signal_modified(c->db, c->argv[1]);
}

static void cmd_spop(client_t *c) {
    if (c->argc == 3) {
        spop_with_count(c);
        return;
    }
    if (c->argc > 3) {
        reply_error(c, RL_ERR_SYNTAX);
        return;
    }
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_SET, true, &wrongtype);
    if (wrongtype) return;
    if (!o) {
        reply_null(c);
        return;
    }
    sds m = set_random_member(o);
    set_remove(o, m, sds_len(m));
    if (c->srv->keyspace_hooks->logging_on(c)) {
        robj *popped[2] = {NULL, obj_create_string(m, sds_len(m))};
        log_spop(c, popped, 1);
    }
    reply_bulk_sds_take(c, m);
    notify_keyspace_event(c->srv, NOTIFY_SET, "spop", c->argv[1], c->db->id);
    if (set_size(o) == 0) set_delete_emptied(c, c->argv[1]);
    else db_signal_modified(c->db, c->argv[1]);
}

/* count distinct members of a big hashtable set: random draws, skipping
 * repeats, while count is small against the size (expected draws stay
 * below 1.5 * count). */
static void srandmember_sparse(client_t *c, robj *o, unsigned long count) {
    ht *seen = ht_create(&set_seen_type);
    while (ht_size(seen) < count) {
        void *k;
        ht_random_entry(o->ptr, &k);
        if (ht_add(seen, k)) reply_bulk(c, k, sds_len(k));
    }
    ht_release(seen);
}

/* count members drawn uniformly with repetitions from a hashtable set:
 * many draws index every member once and pick from the index; a few use
 * ht_random_entry (uniform). */
static void srandmember_repeats_ht(client_t *c, ht *d, unsigned long count) {
    size_t n = ht_size(d);
    if (count < n / 4) {
        while (count--) {
            void *k;
            ht_random_entry(d, &k);
            reply_bulk(c, k, sds_len(k));
        }
        return;
    }
    sds *all = zmalloc(n * sizeof(sds));
    size_t i = 0;
    ht_iter it;
    void *k;
    ht_iter_init(&it, d, false);
    while (ht_next(&it, &k)) all[i++] = k;
    ht_iter_release(&it);
    while (count--) {
        sds k = all[util_random_below(n)];
        reply_bulk(c, k, sds_len(k));
    }
    zfree(all);
}

static void srandmember_with_count(client_t *c) {
    long long l;
    /* LLONG_MIN has no positive twin; Redis names the range in its error. */
    if (!cmd_get_range_or_reply(c, c->argv[2], -LONG_MAX, LONG_MAX, &l,
                                obj_get_ll(c->argv[2], &l) ? "value is out of range, value must between "
                                                             "-9223372036854775807 and 9223372036854775807"
                                                           : NULL))
        return;
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_SET, false, &wrongtype);
    if (wrongtype) return;
    if (!o || l == 0) {
        reply_empty_array(c);
        return;
    }
    if (l < 0) {
        reply_array_len(c, (long)-l);
        if (o->encoding == OBJ_ENCODING_HT) srandmember_repeats_ht(c, o->ptr, (unsigned long)-l);
        else
            for (long long i = 0; i < -l; i++) reply_bulk_sds_take(c, set_random_member(o));
        return;
    }
    unsigned long size = set_size(o), count = (unsigned long)l;
    if (count > size) count = size;
    reply_array_len(c, (long)count);
    if (o->encoding == OBJ_ENCODING_HT && count * 3 <= size) {
        srandmember_sparse(c, o, count);
        return;
    }
    /* Selection sampling: keep each member with probability
     * still-needed / still-unseen, which yields exactly count members. */
    unsigned long left = size;
    set_iter_t it;
    set_iter_init(&it, o);
    const char *s;
    size_t len;
    while (count && (s = set_iter_next(&it, &len))) {
        if (util_random_below(left--) < count) {
            reply_bulk(c, s, len);
            count--;
        }
    }
    set_iter_release(&it);
}

static void cmd_srandmember(client_t *c) {
    if (c->argc == 3) {
        srandmember_with_count(c);
        return;
    }
    if (c->argc > 3) {
        reply_error(c, RL_ERR_SYNTAX);
        return;
    }
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_SET, false, &wrongtype);
    if (wrongtype) return;
    if (!o) reply_null(c);
    else reply_bulk_sds_take(c, set_random_member(o));
}

/* ------------------------------------------------------------ set algebra */

/* Look up every key of argv[first..first+n); missing keys give NULL.
 * Returns NULL after replying WRONGTYPE; caller frees the array. */
static robj **set_lookup_all(client_t *c, int first, int n, bool write) {
    robj **sets = zmalloc(sizeof(robj *) * (size_t)n);
    for (int j = 0; j < n; j++) {
        bool wrongtype;
        sets[j] = db_lookup_typed_or_reply(c, c->argv[first + j], OBJ_SET, write, &wrongtype);
        if (wrongtype) {
            zfree(sets);
            return NULL;
        }
    }
    return sets;
}

static int cmp_set_size(const void *a, const void *b) {
    unsigned long x = set_size(*(robj *const *)a), y = set_size(*(robj *const *)b);
    return x < y ? -1 : x > y;
}

/* An empty result of a STORE command: dstkey goes, and "del" is published
 * only if there was something to delete. */
static void set_store_nothing(client_t *c, robj *dstkey) {
    if (db_delete(c->db, dstkey)) notify_keyspace_event(c->srv, NOTIFY_GENERIC, "del", dstkey, c->db->id);
}

/* Store result at dstkey (taking it) and publish `event` ("sinterstore"
 * ...), or delete dstkey when the result is empty; replies with the
 * cardinality. */
static void set_store_result(client_t *c, robj *dstkey, robj *result, const char *event) {
    long long n = (long long)set_size(result);
    if (n == 0) {
        obj_decref(result);
        set_store_nothing(c, dstkey);
    } else {
        db_set_key(c->db, dstkey, result, false);
        notify_keyspace_event(c->srv, NOTIFY_SET, event, dstkey, c->db->id);
    }
    reply_ll(c, n);
}

typedef enum { SINTER_REPLY,
               SINTER_STORE,
               SINTER_CARD } sinter_mode_t;

/* SINTER, SINTERSTORE, SINTERCARD over argv[first..first+n).  Walks the
 * smallest set and keeps the members every other set has. */
static void sinter_generic(client_t *c, int first, int n, robj *dstkey, sinter_mode_t mode, long long limit) {
    robj **sets = set_lookup_all(c, first, n, dstkey != NULL);
    if (!sets) return;
    bool any_missing = false;
    for (int j = 0; j < n; j++) any_missing |= sets[j] == NULL;
    if (any_missing) {
        zfree(sets);
        if (mode == SINTER_STORE) {
            set_store_nothing(c, dstkey);
            reply_ll(c, 0);
        } else if (mode == SINTER_CARD) {
            reply_ll(c, 0);
        } else {
            reply_set_len(c, 0);
        }
        return;
    }
    qsort(sets, (size_t)n, sizeof(robj *), cmp_set_size);
    set_limits_t l = set_limits(c);
    robj *result = mode == SINTER_STORE ? set_create_intset() : NULL;
    void *slot = mode == SINTER_REPLY ? reply_deferred_len(c) : NULL;
    long long card = 0;
    set_iter_t it;
    set_iter_init(&it, sets[0]);
    const char *s;
    size_t len;
    while ((s = set_iter_next(&it, &len))) {
        int j = 1;
        while (j < n && (sets[j] == sets[0] || set_is_member(sets[j], s, len))) j++;
        if (j < n) continue;
        card++;
        if (mode == SINTER_REPLY) reply_bulk(c, s, len);
        else if (mode == SINTER_STORE) set_add(&l, result, s, len);
        else if (limit && card >= limit) break;
    }
    set_iter_release(&it);
    zfree(sets);
    if (mode == SINTER_REPLY) reply_set_deferred_set_len(c, slot, (long)card);
    else if (mode == SINTER_CARD) reply_ll(c, card);
    else set_store_result(c, dstkey, result, "sinterstore");
}

static void cmd_sinter(client_t *c) { sinter_generic(c, 1, c->argc - 1, NULL, SINTER_REPLY, 0); }
static void cmd_sinterstore(client_t *c) { sinter_generic(c, 2, c->argc - 2, c->argv[1], SINTER_STORE, 0); }

static void cmd_sintercard(client_t *c) {
    long long numkeys, limit = 0;
    if (!cmd_get_range_or_reply(c, c->argv[1], 1, LONG_MAX, &numkeys, "numkeys should be greater than 0")) return;
    if (numkeys > c->argc - 2) {
        reply_error(c, "Number of keys can't be greater than number of args");
        return;
    }
    for (int j = 2 + (int)numkeys; j < c->argc; j++) {
        if (!strcasecmp(c->argv[j]->ptr, "limit") && j + 1 < c->argc) {
            if (!cmd_get_range_or_reply(c, c->argv[++j], 0, LONG_MAX, &limit, "LIMIT can't be negative")) return;
        } else {
            reply_error(c, RL_ERR_SYNTAX);
            return;
        }
    }
    sinter_generic(c, 2, (int)numkeys, NULL, SINTER_CARD, limit);
}

/* SUNION, SDIFF and their STORE forms over argv[first..first+n). */
static void sunion_diff_generic(client_t *c, int first, int n, robj *dstkey, bool diff) {
    robj **sets = set_lookup_all(c, first, n, dstkey != NULL);
    if (!sets) return;
    set_limits_t l = set_limits(c);
    robj *result = set_create_intset();
    for (int j = 0; j < (diff ? 1 : n); j++) {
        if (!sets[j]) continue;
        set_iter_t it;
        set_iter_init(&it, sets[j]);
        const char *s;
        size_t len;
        while ((s = set_iter_next(&it, &len))) {
            bool keep = true;
            for (int k = 1; diff && keep && k < n; k++) keep = !sets[k] || !set_is_member(sets[k], s, len);
            if (keep) set_add(&l, result, s, len);
        }
        set_iter_release(&it);
    }
    zfree(sets);
    if (dstkey) {
        set_store_result(c, dstkey, result, diff ? "sdiffstore" : "sunionstore");
        return;
    }
    reply_set_members(c, result);
    obj_decref(result);
}

static void cmd_sunion(client_t *c) { sunion_diff_generic(c, 1, c->argc - 1, NULL, false); }
static void cmd_sunionstore(client_t *c) { sunion_diff_generic(c, 2, c->argc - 2, c->argv[1], false); }
static void cmd_sdiff(client_t *c) { sunion_diff_generic(c, 1, c->argc - 1, NULL, true); }
static void cmd_sdiffstore(client_t *c) { sunion_diff_generic(c, 2, c->argc - 2, c->argv[1], true); }

/* ------------------------------------------------------------ SSCAN */

static bool sscan_next(void *state, const char **s, size_t *len) {
    return (*s = set_iter_next(state, len)) != NULL;
}

static long sscan_emit(client_t *c, void *state, dict_entry *de, const char *m, size_t len) {
    (void)state;
    (void)de;
    reply_bulk(c, m, len);
    return 1;
}

static sds sscan_member_name(void *entry) { return entry; }

static void cmd_sscan(client_t *c) {
    scan_args_t a;
    if (!scan_args_parse_or_reply(c, 2, 0, &a)) return;
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_SET, false, &wrongtype);
    if (wrongtype) return;
    if (!o) {
        scan_reply_empty(c);
        return;
    }
    set_iter_t it;
    scan_source_t src = {.next = sscan_next, .emit = sscan_emit, .state = &it};
    if (o->encoding != OBJ_ENCODING_HT) {
        set_iter_init(&it, o);
        scan_reply(c, &a, &src);
        set_iter_release(&it);
    } else {
        src.t = o->ptr;
        src.t_name = sscan_member_name;
        scan_reply(c, &a, &src);
    }
}

command_t set_commands[] = {
    {"sadd", cmd_sadd, -3, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "set", "Add one or more members to a set", "1.0.0", NULL},
    {"srem", cmd_srem, -3, CMD_WRITE | CMD_FAST, 1, 1, 1, "set", "Remove one or more members from a set", "1.0.0", NULL},
    {"smembers", cmd_smembers, 2, CMD_READONLY, 1, 1, 1, "set", "Get all the members in a set", "1.0.0", NULL},
    {"sismember", cmd_sismember, 3, CMD_READONLY | CMD_FAST, 1, 1, 1, "set", "Determine if a given value is a member of a set", "1.0.0", NULL},
    {"smismember", cmd_smismember, -3, CMD_READONLY | CMD_FAST, 1, 1, 1, "set", "Returns the membership associated with the given elements for a set", "6.2.0", NULL},
    {"scard", cmd_scard, 2, CMD_READONLY | CMD_FAST, 1, 1, 1, "set", "Get the number of members in a set", "1.0.0", NULL},
    {"spop", cmd_spop, -2, CMD_WRITE | CMD_FAST, 1, 1, 1, "set", "Remove and return one or multiple random members from a set", "1.0.0", NULL},
    {"srandmember", cmd_srandmember, -2, CMD_READONLY, 1, 1, 1, "set", "Get one or multiple random members from a set", "1.0.0", NULL},
    {"smove", cmd_smove, 4, CMD_WRITE | CMD_FAST, 1, 2, 1, "set", "Move a member from one set to another", "1.0.0", NULL},
    {"sinter", cmd_sinter, -2, CMD_READONLY, 1, -1, 1, "set", "Intersect multiple sets", "1.0.0", NULL},
    {"sintercard", cmd_sintercard, -3, CMD_READONLY, 0, 0, 0, "set", "Intersect multiple sets and return the cardinality of the result", "7.0.0", NULL},
    {"sinterstore", cmd_sinterstore, -3, CMD_WRITE | CMD_DENYOOM, 1, -1, 1, "set", "Intersect multiple sets and store the resulting set in a key", "1.0.0", NULL},
    {"sunion", cmd_sunion, -2, CMD_READONLY, 1, -1, 1, "set", "Add multiple sets", "1.0.0", NULL},
    {"sunionstore", cmd_sunionstore, -3, CMD_WRITE | CMD_DENYOOM, 1, -1, 1, "set", "Add multiple sets and store the resulting set in a key", "1.0.0", NULL},
    {"sdiff", cmd_sdiff, -2, CMD_READONLY, 1, -1, 1, "set", "Subtract multiple sets", "1.0.0", NULL},
    {"sdiffstore", cmd_sdiffstore, -3, CMD_WRITE | CMD_DENYOOM, 1, -1, 1, "set", "Subtract multiple sets and store the resulting set in a key", "1.0.0", NULL},
    {"sscan", cmd_sscan, -3, CMD_READONLY, 1, 1, 1, "set", "Incrementally iterate Set elements", "2.6.0", NULL},
    {0},
};

/* ------------------------------------------------------------ t_set.h read access */

void set_type_foreach(robj *set, set_member_fn *fn, void *arg) {
    set_iter_t it;
    set_iter_init(&it, set);
    const char *s;
    size_t len;
    while ((s = set_iter_next(&it, &len))) fn(arg, s, len);
    set_iter_release(&it);
}

bool set_type_is_member(robj *set, const char *s, size_t len) { return set_is_member(set, s, len); }

robj *set_type_create_ht(size_t expected) { return set_create_ht(expected); }
bool set_type_ht_add(robj *set, const char *s, size_t len) { return set_ht_add(set->ptr, s, len); }
unsigned long set_type_size(const robj *set) { return set_size(set); }
