/* t_list.c: the list type: its two encodings behind one small API, the list
 * commands (LPUSH ... LMPOP) and the blocking ones (BLPOP ... BLMPOP).
 *
 * Encodings, as Redis 7.2: a new list is one listpack ("listpack"); it
 * becomes a quicklist when a write would take it past list-max-listpack-size
 * (bytes for negative values, entries for positive ones), and goes back to a
 * listpack when removals leave a single quicklist node under half that
 * limit, so a list at the boundary does not flip on every push/pop.
 * Empty lists never exist: the command that empties one deletes the key.
 * Blocking commands that find nothing ask blocking.c to block; when a key
 * is pushed to, blocking.c re-runs them with blocking_ready_key() set, and
 * the same code serves them.  Every change publishes the keyspace event
 * Redis 7.0 names for it (notify.h), then "del" if it emptied the key. */
#include <limits.h>
#include <string.h>

#include "blocking.h"
#include "commands.h"
#include "keyspace.h"
#include "listpack.h"
#include "notify.h"
#include "persist.h"
#include "quicklist.h"
#include "reply.h"
#include "util.h"

#define LIST_HEAD QL_HEAD /* left end; iterating from it goes head -> tail */
#define LIST_TAIL QL_TAIL /* right end */

/* ------------------------------------------------------------ encodings */

/* Bytes per node for list-max-listpack-size -1 .. -5. */
static const size_t list_size_levels[] = {4096, 8192, 16384, 32768, 65536};
/* With a count limit (positive fill), a node still may not pass this. */
#define LIST_SAFETY_BYTES 8192

/* The limit `fill` sets on one listpack: a byte cap or an entry cap. */
static void list_node_limit(long long fill, size_t *max_bytes, size_t *max_count) {
    *max_bytes = SIZE_MAX;
    *max_count = SIZE_MAX;
    if (fill >= 0) {
        *max_count = fill == 0 ? 1 : (size_t)fill;
    } else {
        size_t level = (size_t)(-fill) - 1;
        if (level > 4) level = 4;
        *max_bytes = list_size_levels[level];
    }
}

static bool list_exceeds(long long fill, size_t bytes, size_t count) {
    size_t max_bytes, max_count;
    list_node_limit(fill, &max_bytes, &max_count);
    if (max_bytes != SIZE_MAX) return bytes > max_bytes;
    return bytes > LIST_SAFETY_BYTES || count > max_count;
}

static robj *list_create(void) {
    robj *o = obj_create(OBJ_LIST, lp_new());
    o->encoding = OBJ_ENCODING_LISTPACK;
    return o;
}

/* Convert a listpack list to a quicklist if adding vals[0..n) could take
 * it past the limit (string lengths counted, integers as free: an
 * estimate, as Redis makes it). */
static void list_grow_check(server_t *srv, robj *o, robj **vals, int n) {
    if (o->encoding != OBJ_ENCODING_LISTPACK) return;
    size_t add = 0;
    for (int i = 0; i < n; i++)
        if (obj_is_sds_encoded(vals[i])) add += sds_len(vals[i]->ptr);
    unsigned char *lp = o->ptr;
    if (!list_exceeds(srv->cfg.list_max_listpack_size, lp_bytes(lp) + add, lp_length(lp) + (size_t)n)) return;
    quicklist *ql = ql_new((int)srv->cfg.list_max_listpack_size, (int)srv->cfg.list_compress_depth);
    ql_append_listpack(ql, lp); /* takes lp (frees it if empty) */
    o->ptr = ql;
    o->encoding = OBJ_ENCODING_QUICKLIST;
}

/* After removals: a quicklist of one node under half the limit becomes
 * that node's listpack again. */
static void list_shrink_check(server_t *srv, robj *o) {
    if (o->encoding != OBJ_ENCODING_QUICKLIST) return;
    quicklist *ql = o->ptr;
    if (ql->len != 1) return;
    size_t max_bytes, max_count;
    list_node_limit(srv->cfg.list_max_listpack_size, &max_bytes, &max_count);
    if (lp_bytes(ql->head->lp) > max_bytes / 2 || ql->count > max_count / 2) return;
    unsigned char *lp = ql->head->lp;
    ql->head->lp = NULL; /* ours now; ql_free frees a NULL listpack as a no-op */
    ql_free(ql);
    o->ptr = lp;
    o->encoding = OBJ_ENCODING_LISTPACK;
}

/* ------------------------------------------------------------ list API */

static unsigned long list_len(const robj *o) {
    return o->encoding == OBJ_ENCODING_LISTPACK ? lp_length(o->ptr) : ql_count(o->ptr);
}

/* Push the string value v (borrowed) at one end. */
static void list_push(robj *o, robj *v, int where) {
    char buf[32];
    size_t len;
    const char *s = obj_string_view(v, buf, sizeof(buf), &len);
    if (o->encoding == OBJ_ENCODING_LISTPACK)
        o->ptr = where == LIST_HEAD ? lp_prepend(o->ptr, s, len) : lp_append(o->ptr, s, len);
    else
        ql_push(o->ptr, s, len, where);
}

static robj *value_obj(const unsigned char *s, size_t len, long long ival) {
    return s ? obj_create_string((const char *)s, len) : obj_create_from_ll(ival);
}

/* Remove one end's value and return it as a new string object (caller
 * decrefs), or NULL when the list is empty. */
static robj *list_pop(robj *o, int where) {
    if (o->encoding == OBJ_ENCODING_LISTPACK) {
        unsigned char *p = where == LIST_HEAD ? lp_first(o->ptr) : lp_last(o->ptr);
        if (!p) return NULL;
        size_t len;
        long long ival;
        const unsigned char *s = lp_get(p, &len, &ival);
        robj *v = value_obj(s, len, ival);
        o->ptr = lp_delete(o->ptr, p, NULL);
        return v;
    }
    unsigned char *s;
    size_t len;
    long long ival;
    if (!ql_pop(o->ptr, where, &s, &len, &ival)) return NULL;
    robj *v = value_obj(s, len, ival);
    zfree(s);
    return v;
}

/* An iterator over either encoding.  Only list_iter_delete may change the
 * list while it is live. */
typedef struct list_iter {
    robj *o;
    int dir;          /* LIST_HEAD: towards the tail; LIST_TAIL: back */
    unsigned char *p; /* listpack: the next entry, NULL at the end */
    ql_iter_t *qi;    /* quicklist */
} list_iter_t;

typedef struct list_entry {
    unsigned char *p; /* listpack entry */
    ql_entry_t qe;    /* quicklist entry */
} list_entry_t;

/* index: 0-based, negative from the tail, must be in range. */
static void list_iter_init(list_iter_t *it, robj *o, long index, int dir) {
    it->o = o;
    it->dir = dir;
    it->p = NULL;
    it->qi = NULL;
    if (o->encoding == OBJ_ENCODING_LISTPACK) it->p = lp_seek(o->ptr, index);
    else it->qi = ql_iter_at_index(o->ptr, dir, index);
}

static void list_iter_release(list_iter_t *it) {
    if (it->qi) ql_iter_free(it->qi);
    it->qi = NULL;
}

static bool list_next(list_iter_t *it, list_entry_t *e) {
    if (it->o->encoding == OBJ_ENCODING_QUICKLIST) return ql_next(it->qi, &e->qe);
    if (!it->p) return false;
    e->p = it->p;
    it->p = it->dir == LIST_HEAD ? lp_next(it->o->ptr, it->p) : lp_prev(it->o->ptr, it->p);
    return true;
}

/* The entry's value as bytes (buf: LP_INTBUF_SIZE bytes for integers). */
static const char *list_entry_value(const robj *o, const list_entry_t *e, char *buf, size_t *len) {
    if (o->encoding == OBJ_ENCODING_LISTPACK) return (const char *)lp_get_str(e->p, len, buf);
    if (e->qe.str) {
        *len = e->qe.len;
        return (const char *)e->qe.str;
    }
    *len = (size_t)util_ll2str(buf, LP_INTBUF_SIZE, e->qe.ival);
    return buf;
}

static bool list_entry_equal(const robj *o, const list_entry_t *e, robj *v) {
    char buf[32];
    size_t len;
    const char *s = obj_string_view(v, buf, sizeof(buf), &len);
    if (o->encoding == OBJ_ENCODING_LISTPACK) return lp_entry_equal(e->p, s, len);
    return ql_entry_equal(&e->qe, s, len);
}

/* Delete the entry just returned by list_next; the iteration goes on. */
static void list_iter_delete(list_iter_t *it, list_entry_t *e) {
    robj *o = it->o;
    if (o->encoding == OBJ_ENCODING_QUICKLIST) {
        ql_iter_del(it->qi, &e->qe);
        return;
    }
    unsigned char *next;
    o->ptr = lp_delete(o->ptr, e->p, &next);
    if (it->dir == LIST_HEAD) it->p = next;
    else it->p = next ? lp_prev(o->ptr, next) : lp_last(o->ptr);
}

/* Insert v next to entry e (where: LP_BEFORE / LP_AFTER).  Every iterator
 * over the list is dead afterwards. */
static void list_insert(robj *o, list_entry_t *e, robj *v, int where) {
    char buf[32];
    size_t len;
    const char *s = obj_string_view(v, buf, sizeof(buf), &len);
    if (o->encoding == OBJ_ENCODING_LISTPACK) o->ptr = lp_insert(o->ptr, s, len, e->p, where, NULL);
    else if (where == LP_BEFORE) ql_insert_before(o->ptr, &e->qe, s, len);
    else ql_insert_after(o->ptr, &e->qe, s, len);
}

/* The events a push or pop at one end publishes, as Redis names them. */
static const char *push_event(int where) { return where == LIST_HEAD ? "lpush" : "rpush"; }
static const char *pop_event(int where) { return where == LIST_HEAD ? "lpop" : "rpop"; }

/* After removing values from the list at key: publish `event`, then
 * delete the key when empty (publishing "del" after it, the order Redis
 * keeps) or maybe go back to a listpack; either way the key was modified. */
static void list_after_remove(client_t *c, robj *key, robj *o, const char *event) {
    notify_keyspace_event(c->srv, NOTIFY_LIST, event, key, c->db->id);
    if (list_len(o) == 0) {
        db_delete(c->db, key);
        notify_keyspace_event(c->srv, NOTIFY_GENERIC, "del", key, c->db->id);
        return;
    }
    list_shrink_check(c->srv, o);
    db_signal_modified(c->db, key);
}

/* ------------------------------------------------------------ object ops */

static void list_free_value(robj *o) {
    if (o->encoding == OBJ_ENCODING_LISTPACK) lp_free(o->ptr);
    else ql_free(o->ptr);
}

static size_t list_mem_usage(robj *o, size_t samples) {
    (void)samples; /* exact: every node is counted */
    return o->encoding == OBJ_ENCODING_LISTPACK ? lp_mem_usage(o->ptr) : ql_mem_usage(o->ptr);
}

const obj_type_ops_t list_type_ops = {list_free_value, list_mem_usage};

/* ------------------------------------------------------------ argument parsing */

/* LEFT / RIGHT (any case) into LIST_HEAD / LIST_TAIL. */
static bool where_or_reply(client_t *c, robj *arg, int *where) {
    if (!strcasecmp(arg->ptr, "left")) *where = LIST_HEAD;
    else if (!strcasecmp(arg->ptr, "right")) *where = LIST_TAIL;
    else {
        reply_error(c, RL_ERR_SYNTAX);
        return false;
    }
    return true;
}

/* ------------------------------------------------------------ push */

/* Every node of a list is a listpack (no plain nodes here), whose 32-bit
 * sizes cannot hold an element of 4 GB: with proto-max-bulk-len raised,
 * such an element was truncated (CVE-2021-32628).  An element that would
 * take a listpack past its safety limit (1 GB) is refused with Redis 6.2's
 * error, before anything changes. */
static bool list_elements_fit_or_reply(client_t *c, robj **argv, int n) {
    for (int j = 0; j < n; j++) {
        size_t len = argv[j]->encoding == OBJ_ENCODING_INT ? 20 : sds_len(argv[j]->ptr);
        if (!lp_safe_to_add(NULL, len + 16)) { /* + the listpack's header and entry overhead */
            reply_error(c, "Element too large");
            return false;
        }
    }
    return true;
}

static void push_generic(client_t *c, int where, bool only_existing) {
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_LIST, true, &wrongtype);
    if (wrongtype) return;
    if (!list_elements_fit_or_reply(c, c->argv + 2, c->argc - 2)) return;
    bool created = !o;
    if (!o) {
        if (only_existing) {
            reply_ll(c, 0);
            return;
        }
        o = list_create();
        db_add(c->db, c->argv[1], o);
    }
    list_grow_check(c->srv, o, c->argv + 2, c->argc - 2);
    for (int j = 2; j < c->argc; j++) list_push(o, c->argv[j], where);
    if (!created) db_signal_modified(c->db, c->argv[1]);
    notify_keyspace_event(c->srv, NOTIFY_LIST, push_event(where), c->argv[1], c->db->id);
    reply_ll(c, (long long)list_len(o));
}

static void cmd_lpush(client_t *c) { push_generic(c, LIST_HEAD, false); }
static void cmd_rpush(client_t *c) { push_generic(c, LIST_TAIL, false); }
static void cmd_lpushx(client_t *c) { push_generic(c, LIST_HEAD, true); }
static void cmd_rpushx(client_t *c) { push_generic(c, LIST_TAIL, true); }

/* ------------------------------------------------------------ pop */

/* Pop up to count values from one end and reply them as an array;
 * returns how many. */
static long pop_range_reply(client_t *c, robj *o, int where, long long count) {
    unsigned long len = list_len(o);
    long n = count > (long long)len ? (long)len : (long)count;
    reply_array_len(c, n);
    for (long i = 0; i < n; i++) {
        robj *v = list_pop(o, where);
        reply_bulk_obj(c, v);
        obj_decref(v);
    }
    return n;
}

/* The blocking and multi-key pops are logged as the plain pop they did
 * (LPOP key [n]), as Redis 7.0 does: a replica must not block or pick a
 * key of its own.  count < 0: the form without a count. */
static void propagate_pop(client_t *c, robj *key, int where, long count) {
    persist_propagate_pop(c, where == LIST_HEAD ? "LPOP" : "RPOP", key, count);
}

static void pop_generic(client_t *c, int where) {
    if (c->argc > 3) {
        reply_error_arity(c);
        return;
    }
    bool has_count = c->argc == 3;
    long long count = 0;
    if (has_count && !cmd_get_range_or_reply(c, c->argv[2], 0, LONG_MAX, &count, RL_ERR_POSITIVE)) return;
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_LIST, true, &wrongtype);
    if (wrongtype) return;
    if (!o) {
        if (has_count) reply_null_array(c);
        else reply_null(c);
        return;
    }
    if (has_count) {
        pop_range_reply(c, o, where, count);
        if (count == 0) return; /* nothing changed */
    } else {
        robj *v = list_pop(o, where);
        reply_bulk_obj(c, v);
        obj_decref(v);
    }
    list_after_remove(c, c->argv[1], o, pop_event(where));
}

static void cmd_lpop(client_t *c) { pop_generic(c, LIST_HEAD); }
static void cmd_rpop(client_t *c) { pop_generic(c, LIST_TAIL); }

/* LMPOP / BLMPOP on keys: the first non-empty list gives up to count
 * values; reply [key, [values]].  Returns false if every key is missing
 * (nothing replied), true after replying (values or WRONGTYPE). */
static bool mpop_serve(client_t *c, robj **keys, int nkeys, int where, long long count) {
    for (int j = 0; j < nkeys; j++) {
        bool wrongtype;
        robj *o = db_lookup_typed_or_reply(c, keys[j], OBJ_LIST, true, &wrongtype);
        if (wrongtype) return true;
        if (!o) continue;
        reply_array_len(c, 2);
        reply_bulk_obj(c, keys[j]);
        propagate_pop(c, keys[j], where, pop_range_reply(c, o, where, count));
        list_after_remove(c, keys[j], o, pop_event(where));
        return true;
    }
    return false;
}

/* Parse "numkeys key... LEFT|RIGHT [COUNT n]" starting at argv[idx]. */
static bool mpop_args_or_reply(client_t *c, int idx, int *nkeys, int *where, long long *count) {
    long long n;
    if (!cmd_get_range_or_reply(c, c->argv[idx], 1, LONG_MAX, &n, "numkeys should be greater than 0")) return false;
    if (n > c->argc - idx - 2) { /* no room left for LEFT|RIGHT */
        reply_error(c, RL_ERR_SYNTAX);
        return false;
    }
    int where_idx = idx + (int)n + 1;
    if (!where_or_reply(c, c->argv[where_idx], where)) return false;
    *count = -1;
    for (int j = where_idx + 1; j < c->argc; j++) {
        if (*count == -1 && !strcasecmp(c->argv[j]->ptr, "count") && j + 1 < c->argc) {
            j++;
            if (!cmd_get_range_or_reply(c, c->argv[j], 1, LONG_MAX, count, "count should be greater than 0"))
                return false;
        } else {
            reply_error(c, RL_ERR_SYNTAX);
            return false;
        }
    }
    if (*count == -1) *count = 1;
    *nkeys = (int)n;
    return true;
}

static void cmd_lmpop(client_t *c) {
    int nkeys, where;
    long long count;
    if (!mpop_args_or_reply(c, 1, &nkeys, &where, &count)) return;
    if (!mpop_serve(c, c->argv + 2, nkeys, where, count)) reply_null_array(c);
}

/* ------------------------------------------------------------ reading */

static void cmd_llen(client_t *c) {
    robj *o = db_lookup_read(c->db, c->argv[1], LOOKUP_NONE);
    if (!db_check_type_or_reply(c, o, OBJ_LIST)) return;
    reply_ll(c, o ? (long long)list_len(o) : 0);
}

static void cmd_lrange(client_t *c) {
    long long start, end;
    if (!cmd_get_range_or_reply(c, c->argv[2], LONG_MIN, LONG_MAX, &start, NULL) ||
        !cmd_get_range_or_reply(c, c->argv[3], LONG_MIN, LONG_MAX, &end, NULL))
        return;
    robj *o = db_lookup_read(c->db, c->argv[1], LOOKUP_NONE);
    if (!db_check_type_or_reply(c, o, OBJ_LIST)) return;
    long long len = o ? (long long)list_len(o) : 0;
    if (start < 0) start += len;
    if (end < 0) end += len;
    if (start < 0) start = 0;
    if (start > end || start >= len) {
        reply_empty_array(c);
        return;
    }
    if (end >= len) end = len - 1;
    long n = (long)(end - start + 1);
    reply_array_len(c, n);
    list_iter_t it;
    list_entry_t e;
    list_iter_init(&it, o, (long)start, LIST_HEAD);
    char buf[LP_INTBUF_SIZE];
    while (n-- > 0 && list_next(&it, &e)) {
        size_t vlen;
        const char *s = list_entry_value(o, &e, buf, &vlen);
        reply_bulk(c, s, vlen);
    }
    list_iter_release(&it);
}

static void cmd_lindex(client_t *c) {
    robj *o = db_lookup_read(c->db, c->argv[1], LOOKUP_NONE);
    if (!o) {
        reply_null(c);
        return;
    }
    if (!db_check_type_or_reply(c, o, OBJ_LIST)) return;
    long long index;
    if (!cmd_get_range_or_reply(c, c->argv[2], LONG_MIN, LONG_MAX, &index, NULL)) return;
    if (o->encoding == OBJ_ENCODING_LISTPACK) {
        unsigned char *p = lp_seek(o->ptr, (long)index);
        if (!p) {
            reply_null(c);
            return;
        }
        char buf[LP_INTBUF_SIZE];
        size_t len;
        const unsigned char *s = lp_get_str(p, &len, buf);
        reply_bulk(c, (const char *)s, len);
        return;
    }
    list_entry_t e;
    if (!ql_index(o->ptr, (long)index, &e.qe)) {
        reply_null(c);
        return;
    }
    char buf[LP_INTBUF_SIZE];
    size_t len;
    const char *s = list_entry_value(o, &e, buf, &len);
    reply_bulk(c, s, len);
}

/* LPOS key element [RANK r] [COUNT n] [MAXLEN m] */
static void cmd_lpos(client_t *c) {
    long long rank = 1, count = -1, maxlen = 0; /* count -1: no COUNT given */
    for (int j = 3; j < c->argc; j++) {
        const char *opt = c->argv[j]->ptr;
        bool more = j + 1 < c->argc;
        if (!strcasecmp(opt, "rank") && more) {
            if (!cmd_get_range_or_reply(c, c->argv[++j], LONG_MIN, LONG_MAX, &rank, NULL)) return;
            if (rank == 0) {
                reply_error(c, "RANK can't be zero: use 1 to start from the first match, 2 from the second ... "
                               "or use negative to start from the end of the list");
                return;
            }
            if (rank == LLONG_MIN) { /* cannot be negated */
                reply_error(c, "value is out of range, value must between -9223372036854775807 and "
                               "9223372036854775807");
                return;
            }
        } else if (!strcasecmp(opt, "count") && more) {
            if (!cmd_get_range_or_reply(c, c->argv[++j], 0, LONG_MAX, &count, "COUNT can't be negative")) return;
        } else if (!strcasecmp(opt, "maxlen") && more) {
            if (!cmd_get_range_or_reply(c, c->argv[++j], 0, LONG_MAX, &maxlen, "MAXLEN can't be negative")) return;
        } else {
            reply_error(c, RL_ERR_SYNTAX);
            return;
        }
    }
    int dir = LIST_HEAD;
    if (rank < 0) {
        rank = -rank;
        dir = LIST_TAIL;
    }
    robj *o = db_lookup_read(c->db, c->argv[1], LOOKUP_NONE);
    if (!o) {
        if (count != -1) reply_empty_array(c);
        else reply_null(c);
        return;
    }
    if (!db_check_type_or_reply(c, o, OBJ_LIST)) return;
    void *slot = count != -1 ? reply_deferred_len(c) : NULL;
    long long len = (long long)list_len(o), index = 0, matches = 0, found = -1, emitted = 0;
    list_iter_t it;
    list_entry_t e;
    list_iter_init(&it, o, dir == LIST_HEAD ? 0 : -1, dir);
    while ((maxlen == 0 || index < maxlen) && list_next(&it, &e)) {
        if (list_entry_equal(o, &e, c->argv[2]) && ++matches >= rank) {
            found = dir == LIST_HEAD ? index : len - index - 1;
            if (!slot) break;
            reply_ll(c, found);
            emitted++;
            if (count && emitted >= count) break;
        }
        index++;
    }
    list_iter_release(&it);
    if (slot) reply_set_deferred_array_len(c, slot, emitted);
    else if (found >= 0) reply_ll(c, found);
    else reply_null(c);
}

/* ------------------------------------------------------------ changing */

static void cmd_lset(client_t *c) {
    robj *o = db_lookup_write(c->db, c->argv[1]);
    if (!o) {
        reply_error(c, RL_ERR_NO_KEY);
        return;
    }
    if (!db_check_type_or_reply(c, o, OBJ_LIST)) return;
    long long index;
    if (!cmd_get_range_or_reply(c, c->argv[2], LONG_MIN, LONG_MAX, &index, NULL)) return;
    if (!list_elements_fit_or_reply(c, c->argv + 3, 1)) return;
    list_grow_check(c->srv, o, c->argv + 3, 1);
    char buf[32];
    size_t len;
    const char *s = obj_string_view(c->argv[3], buf, sizeof(buf), &len);
    bool done;
    if (o->encoding == OBJ_ENCODING_LISTPACK) {
        unsigned char *p = lp_seek(o->ptr, (long)index);
        done = p != NULL;
        if (done) o->ptr = lp_replace(o->ptr, &p, s, len);
    } else {
        done = ql_replace_at_index(o->ptr, (long)index, s, len);
    }
    if (!done) {
        reply_error(c, RL_ERR_OUT_OF_RANGE);
        return;
    }
    list_shrink_check(c->srv, o); /* a big value may have been replaced by a small one */
    db_signal_modified(c->db, c->argv[1]);
    notify_keyspace_event(c->srv, NOTIFY_LIST, "lset", c->argv[1], c->db->id);
    reply_ok(c);
}

/* LINSERT key BEFORE|AFTER pivot element */
static void cmd_linsert(client_t *c) {
    int where;
    if (!strcasecmp(c->argv[2]->ptr, "after")) where = LP_AFTER;
    else if (!strcasecmp(c->argv[2]->ptr, "before")) where = LP_BEFORE;
    else {
        reply_error(c, RL_ERR_SYNTAX);
        return;
    }
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_LIST, true, &wrongtype);
    if (wrongtype) return;
    if (!o) {
        reply_ll(c, 0);
        return;
    }
    if (!list_elements_fit_or_reply(c, c->argv + 4, 1)) return;
    list_grow_check(c->srv, o, c->argv + 4, 1);
    list_iter_t it;
    list_entry_t e;
    list_iter_init(&it, o, 0, LIST_HEAD);
    bool found = false;
    while (list_next(&it, &e)) {
        if (list_entry_equal(o, &e, c->argv[3])) {
            found = true;
            break;
        }
    }
    if (found) list_insert(o, &e, c->argv[4], where);
    list_iter_release(&it);
    if (!found) {
        reply_ll(c, -1);
        return;
    }
    db_signal_modified(c->db, c->argv[1]);
    notify_keyspace_event(c->srv, NOTIFY_LIST, "linsert", c->argv[1], c->db->id);
    reply_ll(c, (long long)list_len(o));
}

/* LREM key count element: count > 0 from the head, < 0 from the tail,
 * 0 all. */
static void cmd_lrem(client_t *c) {
    long long count;
    if (!cmd_get_range_or_reply(c, c->argv[2], LONG_MIN, LONG_MAX, &count, NULL)) return;
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_LIST, true, &wrongtype);
    if (wrongtype) return;
    if (!o) {
        reply_ll(c, 0);
        return;
    }
    int dir = count < 0 ? LIST_TAIL : LIST_HEAD;
    unsigned long long todo = count < 0 ? 0ULL - (unsigned long long)count : (unsigned long long)count;
    long long removed = 0;
    list_iter_t it;
    list_entry_t e;
    list_iter_init(&it, o, dir == LIST_HEAD ? 0 : -1, dir);
    while (list_next(&it, &e)) {
        if (!list_entry_equal(o, &e, c->argv[3])) continue;
        list_iter_delete(&it, &e);
        removed++;
        if (todo && (unsigned long long)removed == todo) break;
    }
    list_iter_release(&it);
    if (removed) list_after_remove(c, c->argv[1], o, "lrem");
    reply_ll(c, removed);
}

static void cmd_ltrim(client_t *c) {
    long long start, end;
    if (!cmd_get_range_or_reply(c, c->argv[2], LONG_MIN, LONG_MAX, &start, NULL) ||
        !cmd_get_range_or_reply(c, c->argv[3], LONG_MIN, LONG_MAX, &end, NULL))
        return;
    robj *o = db_lookup_write(c->db, c->argv[1]);
    if (!o) {
        reply_ok(c);
        return;
    }
    if (!db_check_type_or_reply(c, o, OBJ_LIST)) return;
    long long len = (long long)list_len(o), ltrim, rtrim;
    if (start < 0) start += len;
    if (end < 0) end += len;
    if (start < 0) start = 0;
    if (start > end || start >= len) {
        ltrim = len; /* empty range: everything goes */
        rtrim = 0;
    } else {
        if (end >= len) end = len - 1;
        ltrim = start;
        rtrim = len - end - 1;
    }
    if (o->encoding == OBJ_ENCODING_LISTPACK) {
        if (ltrim) o->ptr = lp_delete_range(o->ptr, 0, (unsigned long)ltrim);
        if (rtrim) o->ptr = lp_delete_range(o->ptr, (long)-rtrim, (unsigned long)rtrim);
    } else {
        if (ltrim) ql_del_range(o->ptr, 0, (unsigned long)ltrim);
        if (rtrim) ql_del_range(o->ptr, (long)-rtrim, (unsigned long)rtrim);
    }
    list_after_remove(c, c->argv[1], o, "ltrim"); /* published even if nothing went */
    reply_ok(c);
}

/* ------------------------------------------------------------ moving */

/* Pop from the list src (at argv[1], existing) and push to argv[2]; reply
 * the value.  The destination's type is checked before anything moves.
 * Events, in Redis's order: the push on the destination, then the pop on
 * the source (and its "del" when emptied). */
static bool move_generic(client_t *c, robj *src, int from, int to) {
    bool wrongtype;
    robj *dst = db_lookup_typed_or_reply(c, c->argv[2], OBJ_LIST, true, &wrongtype);
    if (wrongtype) return false;
    robj *v = list_pop(src, from);
    if (!dst) {
        dst = list_create();
        db_add(c->db, c->argv[2], dst);
    } else {
        db_signal_modified(c->db, c->argv[2]);
    }
    list_grow_check(c->srv, dst, &v, 1);
    list_push(dst, v, to);
    notify_keyspace_event(c->srv, NOTIFY_LIST, push_event(to), c->argv[2], c->db->id);
    reply_bulk_obj(c, v);
    obj_decref(v);
    list_after_remove(c, c->argv[1], src, pop_event(from)); /* src == dst: it is not empty */
    return true;
}

static void lmove_generic(client_t *c, int from, int to) {
    bool wrongtype;
    robj *src = db_lookup_typed_or_reply(c, c->argv[1], OBJ_LIST, true, &wrongtype);
    if (wrongtype) return;
    if (!src) reply_null(c);
    else move_generic(c, src, from, to);
}

static void cmd_lmove(client_t *c) {
    int from, to;
    if (!where_or_reply(c, c->argv[3], &from) || !where_or_reply(c, c->argv[4], &to)) return;
    lmove_generic(c, from, to);
}

static void cmd_rpoplpush(client_t *c) { lmove_generic(c, LIST_TAIL, LIST_HEAD); }

/* ------------------------------------------------------------ blocking */

/* Nothing to serve: block, or (inside EXEC) answer at once with the
 * command's empty reply (null for BLMOVE, null array for the pops).  A real
 * timeout is a null array for all of them, as Redis 7 replies. */
static void block_or_timeout(client_t *c, int first, int nkeys, long long timeout, bool null_if_denied) {
    if (!blocking_allowed(c)) {
        if (null_if_denied) reply_null(c);
        else reply_null_array(c);
        return;
    }
    blocking_block(c, first, nkeys, OBJ_LIST, timeout, BLOCK_REPLY_NULL_ARRAY);
}

/* The keys a blocking pop looks at: all of them, or during a re-run only
 * the one that was pushed to. */
static robj **bpop_keys(client_t *c, int first, int *nkeys, robj **ready) {
    *ready = blocking_ready_key(c);
    if (!*ready) return c->argv + first;
    *nkeys = 1;
    return ready;
}

static void bpop_generic(client_t *c, int where) {
    long long timeout;
    if (!blocking_timeout_or_reply(c, c->argv[c->argc - 1], &timeout)) return;
    int nkeys = c->argc - 2;
    robj *ready;
    robj **keys = bpop_keys(c, 1, &nkeys, &ready);
    for (int j = 0; j < nkeys; j++) {
        bool wrongtype;
        robj *o = db_lookup_typed_or_reply(c, keys[j], OBJ_LIST, true, &wrongtype);
        if (wrongtype) return;
        if (!o) continue;
        robj *v = list_pop(o, where);
        reply_array_len(c, 2);
        reply_bulk_obj(c, keys[j]);
        reply_bulk_obj(c, v);
        obj_decref(v);
        propagate_pop(c, keys[j], where, -1);
        list_after_remove(c, keys[j], o, pop_event(where));
        return;
    }
    block_or_timeout(c, 1, c->argc - 2, timeout, false);
}

static void cmd_blpop(client_t *c) { bpop_generic(c, LIST_HEAD); }
static void cmd_brpop(client_t *c) { bpop_generic(c, LIST_TAIL); }

static void bmove_generic(client_t *c, int from, int to, robj *timeout_arg) {
    long long timeout;
    if (!blocking_timeout_or_reply(c, timeout_arg, &timeout)) return;
    bool wrongtype;
    robj *src = db_lookup_typed_or_reply(c, c->argv[1], OBJ_LIST, true, &wrongtype);
    if (wrongtype) return;
    if (!src) {
        block_or_timeout(c, 1, 1, timeout, true);
        return;
    }
    if (!move_generic(c, src, from, to)) return;
    /* logged as the non-blocking move (LMOVE, RPOPLPUSH), as in Redis */
    if (c->argc == 6) persist_propagate_as(c, "LMOVE", c->argv + 1, 4);
    else persist_propagate_as(c, "RPOPLPUSH", c->argv + 1, 2);
}

static void cmd_blmove(client_t *c) {
    int from, to;
    if (!where_or_reply(c, c->argv[3], &from) || !where_or_reply(c, c->argv[4], &to)) return;
    bmove_generic(c, from, to, c->argv[5]);
}

static void cmd_brpoplpush(client_t *c) { bmove_generic(c, LIST_TAIL, LIST_HEAD, c->argv[3]); }

/* BLMPOP timeout numkeys key... LEFT|RIGHT [COUNT n] */
static void cmd_blmpop(client_t *c) {
    int nkeys, where;
    long long count, timeout;
    if (!mpop_args_or_reply(c, 2, &nkeys, &where, &count)) return;
    if (!blocking_timeout_or_reply(c, c->argv[1], &timeout)) return;
    int n = nkeys;
    robj *ready;
    robj **keys = bpop_keys(c, 3, &n, &ready);
    if (mpop_serve(c, keys, n, where, count)) return;
    block_or_timeout(c, 3, nkeys, timeout, false);
}

/* ------------------------------------------------------------ table */

#define W (CMD_WRITE)
#define WD (CMD_WRITE | CMD_DENYOOM)
#define R (CMD_READONLY)
command_t list_commands[] = {
    {"lpush", cmd_lpush, -3, WD | CMD_FAST, 1, 1, 1, "list", "Prepend one or multiple elements to a list", "1.0.0", NULL},
    {"rpush", cmd_rpush, -3, WD | CMD_FAST, 1, 1, 1, "list", "Append one or multiple elements to a list", "1.0.0", NULL},
    {"lpushx", cmd_lpushx, -3, WD | CMD_FAST, 1, 1, 1, "list", "Prepend an element to a list, only if the list exists", "2.2.0", NULL},
    {"rpushx", cmd_rpushx, -3, WD | CMD_FAST, 1, 1, 1, "list", "Append an element to a list, only if the list exists", "2.2.0", NULL},
    {"lpop", cmd_lpop, -2, W | CMD_FAST, 1, 1, 1, "list", "Remove and get the first elements in a list", "1.0.0", NULL},
    {"rpop", cmd_rpop, -2, W | CMD_FAST, 1, 1, 1, "list", "Remove and get the last elements in a list", "1.0.0", NULL},
    {"lmpop", cmd_lmpop, -4, W, 0, 0, 0, "list", "Pop elements from a list", "7.0.0", NULL},
    {"llen", cmd_llen, 2, R | CMD_FAST, 1, 1, 1, "list", "Get the length of a list", "1.0.0", NULL},
    {"lrange", cmd_lrange, 4, R, 1, 1, 1, "list", "Get a range of elements from a list", "1.0.0", NULL},
    {"lindex", cmd_lindex, 3, R, 1, 1, 1, "list", "Get an element from a list by its index", "1.0.0", NULL},
    {"lpos", cmd_lpos, -3, R, 1, 1, 1, "list", "Return the index of matching elements on a list", "6.0.6", NULL},
    {"lset", cmd_lset, 4, WD, 1, 1, 1, "list", "Set the value of an element in a list by its index", "1.0.0", NULL},
    {"linsert", cmd_linsert, 5, WD, 1, 1, 1, "list", "Insert an element before or after another element in a list", "2.2.0", NULL},
    {"lrem", cmd_lrem, 4, W, 1, 1, 1, "list", "Remove elements from a list", "1.0.0", NULL},
    {"ltrim", cmd_ltrim, 4, W, 1, 1, 1, "list", "Trim a list to the specified range", "1.0.0", NULL},
    {"lmove", cmd_lmove, 5, WD, 1, 2, 1, "list", "Pop an element from a list, push it to another list and return it", "6.2.0", NULL},
    {"rpoplpush", cmd_rpoplpush, 3, WD, 1, 2, 1, "list", "Remove the last element in a list, prepend it to another list and return it", "1.2.0", NULL},
    {"blpop", cmd_blpop, -3, W | CMD_BLOCKING, 1, -2, 1, "list", "Remove and get the first element in a list, or block until one is available", "2.0.0", NULL},
    {"brpop", cmd_brpop, -3, W | CMD_BLOCKING, 1, -2, 1, "list", "Remove and get the last element in a list, or block until one is available", "2.0.0", NULL},
    {"blmove", cmd_blmove, 6, WD | CMD_BLOCKING, 1, 2, 1, "list", "Pop an element from a list, push it to another list and return it; or block until one is available", "6.2.0", NULL},
    {"brpoplpush", cmd_brpoplpush, 4, WD | CMD_BLOCKING, 1, 2, 1, "list", "Pop an element from a list, push it to another list and return it; or block until one is available", "2.2.0", NULL},
    {"blmpop", cmd_blmpop, -5, W | CMD_BLOCKING, 0, 0, 0, "list", "Pop elements from a list, or block until one is available", "7.0.0", NULL},
    {0},
};
#undef W
#undef WD
#undef R
