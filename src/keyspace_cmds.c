/* keyspace_cmds.c: generic key commands: DEL, EXISTS, TYPE, RENAME, KEYS,
 * SCAN, RANDOMKEY, EXPIRE family, TTL family, PERSIST, TOUCH, OBJECT,
 * SELECT, SWAPDB, DBSIZE, FLUSHDB, FLUSHALL.  They work on any type through
 * keyspace.c and never look inside values. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "blocking.h"
#include "commands.h"
#include "evict.h"
#include "keyspace.h"
#include "multi.h"
#include "notify.h"
#include "persist.h"
#include "reply.h"
#include "scan.h"
#include "tracking.h"
#include "util.h"

/* DEL frees values now unless lazyfree-lazy-user-del; UNLINK always hands
 * big values to the bio thread (lazyfree.h). */
static void del_generic(client_t *c, bool lazy) {
    long long n = 0;
    for (int j = 1; j < c->argc; j++) {
        db_expire_if_needed(c->db, c->argv[j]);
        if (db_delete_lazy(c->db, c->argv[j], lazy)) {
            notify_keyspace_event(c->srv, NOTIFY_GENERIC, "del", c->argv[j], c->db->id);
            n++;
        }
    }
    reply_ll(c, n);
}

static void cmd_del(client_t *c) { del_generic(c, c->srv->cfg.lazyfree_lazy_user_del); }
static void cmd_unlink(client_t *c) { del_generic(c, true); }

static void cmd_exists(client_t *c) {
    long long n = 0;
    for (int j = 1; j < c->argc; j++)
        if (db_lookup_read(c->db, c->argv[j], LOOKUP_NOTOUCH | LOOKUP_NOSTATS)) n++;
    reply_ll(c, n);
}

static void cmd_touch(client_t *c) {
    long long n = 0;
    for (int j = 1; j < c->argc; j++)
        if (db_lookup_read(c->db, c->argv[j], LOOKUP_NOSTATS)) n++;
    reply_ll(c, n);
}

static void cmd_type(client_t *c) {
    robj *o = db_lookup_read(c->db, c->argv[1], LOOKUP_NOTOUCH | LOOKUP_NOSTATS);
    reply_simple(c, o ? obj_type_name(o->type) : "none");
}

static void rename_generic(client_t *c, bool nx) {
    robj *o = db_lookup_write(c->db, c->argv[1]);
    if (!o) {
        reply_error(c, RL_ERR_NO_KEY);
        return;
    }
    if (sds_cmp(c->argv[1]->ptr, c->argv[2]->ptr) == 0) {
        if (nx) reply_ll(c, 0);
        else reply_ok(c);
        return;
    }
    if (nx && db_lookup_write(c->db, c->argv[2])) {
        reply_ll(c, 0);
        return;
    }
    long long expire = db_get_expire(c->db, c->argv[1]);
    obj_incref(o);
    db_delete(c->db, c->argv[2]);
    /* The new key first: a short string lives in the old key's entry
     * (db_entry.h) and db_add copies it from there. */
    db_add(c->db, c->argv[2], o);
    db_delete(c->db, c->argv[1]);
    if (expire != -1) db_set_expire(c->db, c->argv[2], expire);
    notify_keyspace_event(c->srv, NOTIFY_GENERIC, "rename_from", c->argv[1], c->db->id);
    notify_keyspace_event(c->srv, NOTIFY_GENERIC, "rename_to", c->argv[2], c->db->id);
    if (nx) reply_ll(c, 1);
    else reply_ok(c);
}

static void cmd_rename(client_t *c) { rename_generic(c, false); }
static void cmd_renamenx(client_t *c) { rename_generic(c, true); }

static bool entry_is_live(db_t *db, const db_entry *e) {
    long long when = db_entry_expire(e);
    return when < 0 || when > db->srv->mstime;
}

static void cmd_keys(client_t *c) {
    sds pat = c->argv[1]->ptr;
    size_t plen = sds_len(pat);
    bool all = plen == 1 && pat[0] == '*';
    void *slot = reply_deferred_len(c);
    long n = 0;
    ht_iter it;
    void *p;
    ht_iter_init(&it, c->db->keys, true);
    while (ht_next(&it, &p)) {
        sds key = db_entry_key(p);
        if (!all && !util_glob_match(pat, plen, key, sds_len(key), false)) continue;
        if (!entry_is_live(c->db, p)) continue;
        reply_bulk(c, key, sds_len(key));
        n++;
    }
    ht_iter_release(&it);
    reply_set_deferred_array_len(c, slot, n);
}

/* SCAN's walk: the expired keys it met, deleted once the walk is over
 * (deleting during it would free entries it still holds). */
typedef struct scan_expired {
    sds *keys;
    size_t n, cap;
} scan_expired_t;

/* SCAN skips keys that expired but were not yet removed (and removes them
 * afterwards, as a read of each would), and filters TYPE. */
static bool scan_keep_key(client_t *c, const scan_args_t *a, void *entry, void *state) {
    if (!entry_is_live(c->db, entry)) {
        scan_expired_t *ex = state;
        if (ex->n == ex->cap) {
            ex->cap = ex->cap ? ex->cap * 2 : 8;
            ex->keys = zrealloc(ex->keys, ex->cap * sizeof(sds));
        }
        ex->keys[ex->n++] = sds_dup(db_entry_key(entry));
        return false;
    }
    robj view;
    robj *o = db_entry_val(entry, &view);
    return !a->type || strcasecmp(a->type, obj_type_name(o->type)) == 0;
}

static sds scan_key_name(void *entry) { return db_entry_key(entry); }

/* Redis's SCAN expires what it skips: a master deletes the keys (DEL to
 * the AOF and replicas, an "expired" event), a replica leaves them to its
 * master. */
static void cmd_scan(client_t *c) {
    scan_args_t a;
    if (!scan_args_parse_or_reply(c, 1, SCAN_OPT_TYPE, &a)) return;
    scan_expired_t ex = {NULL, 0, 0};
    scan_source_t src = {.t = c->db->keys, .t_name = scan_key_name, .t_keep = scan_keep_key, .state = &ex};
    scan_reply(c, &a, &src);
    for (size_t i = 0; i < ex.n; i++) {
        robj key = {OBJ_STRING, OBJ_ENCODING_RAW, 0, 1, ex.keys[i]};
        db_expire_if_needed(c->db, &key);
        sds_free(ex.keys[i]);
    }
    zfree(ex.keys);
}

static void cmd_randomkey(client_t *c) {
    sds key = db_random_key(c->db);
    if (!key) reply_null(c);
    else reply_bulk_sds_take(c, key);
}

static void cmd_dbsize(client_t *c) { reply_ll(c, (long long)db_size(c->db)); }

/* ---------------------------------------------------------------- expiry */

#define EXP_NX 1
#define EXP_XX 2
#define EXP_GT 4
#define EXP_LT 8

static bool parse_expire_flags_or_reply(client_t *c, int *flags) {
    *flags = 0;
    for (int j = 3; j < c->argc; j++) {
        const char *a = c->argv[j]->ptr;
        if (!strcasecmp(a, "nx")) *flags |= EXP_NX;
        else if (!strcasecmp(a, "xx")) *flags |= EXP_XX;
        else if (!strcasecmp(a, "gt")) *flags |= EXP_GT;
        else if (!strcasecmp(a, "lt")) *flags |= EXP_LT;
        else {
            reply_error(c, "Unsupported option %s", a);
            return false;
        }
    }
    if ((*flags & EXP_NX) && (*flags & (EXP_XX | EXP_GT | EXP_LT))) {
        reply_error(c, "NX and XX, GT or LT options at the same time are not compatible");
        return false;
    }
    if ((*flags & EXP_GT) && (*flags & EXP_LT)) {
        reply_error(c, "GT and LT options at the same time are not compatible");
        return false;
    }
    return true;
}

/* EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT: base is 0 for absolute times,
 * unit_ms 1000 for seconds. */
static void expire_generic(client_t *c, long long base, long long unit_ms) {
    long long when;
    int flags;
    /* Options are validated before the time argument, as in Redis. */
    if (!parse_expire_flags_or_reply(c, &flags)) return;
    if (!cmd_get_ll_or_reply(c, c->argv[2], &when, NULL)) return;
    if (unit_ms == 1000) {
        if (when > LLONG_MAX / 1000 || when < LLONG_MIN / 1000) goto invalid;
        when *= 1000;
    }
    if ((when > 0 && base > LLONG_MAX - when) || (when < 0 && base < LLONG_MIN - when)) goto invalid;
    when += base;
    if (!db_lookup_write(c->db, c->argv[1])) {
        reply_ll(c, 0);
        return;
    }
    long long cur = db_get_expire(c->db, c->argv[1]);
    if (flags) {
        if ((flags & EXP_NX) && cur != -1) goto no;
        if ((flags & EXP_XX) && cur == -1) goto no;
        /* A key without TTL counts as an infinite TTL for GT and LT. */
        if ((flags & EXP_GT) && (cur == -1 || when <= cur)) goto no;
        if ((flags & EXP_LT) && cur != -1 && when >= cur) goto no;
    }
    if (when <= c->srv->mstime) {
        db_delete(c->db, c->argv[1]); /* a time in the past deletes at once */
        notify_keyspace_event(c->srv, NOTIFY_GENERIC, "del", c->argv[1], c->db->id);
    } else {
        db_set_expire(c->db, c->argv[1], when);
        notify_keyspace_event(c->srv, NOTIFY_GENERIC, "expire", c->argv[1], c->db->id);
        db_signal_modified(c->db, c->argv[1]);
    }
    reply_ll(c, 1);
    return;
no:
    reply_ll(c, 0);
    return;
invalid:
    reply_error(c, "invalid expire time in '%s' command", c->cmd->fullname);
}

static void cmd_expire(client_t *c) { expire_generic(c, c->srv->mstime, 1000); }
static void cmd_pexpire(client_t *c) { expire_generic(c, c->srv->mstime, 1); }
static void cmd_expireat(client_t *c) { expire_generic(c, 0, 1000); }
static void cmd_pexpireat(client_t *c) { expire_generic(c, 0, 1); }

/* TTL, PTTL, EXPIRETIME, PEXPIRETIME. */
static void ttl_generic(client_t *c, bool ms, bool absolute) {
    if (!db_lookup_read(c->db, c->argv[1], LOOKUP_NOTOUCH)) {
        reply_ll(c, -2);
        return;
    }
    long long when = db_get_expire(c->db, c->argv[1]);
    if (when == -1) {
        reply_ll(c, -1);
        return;
    }
    long long v = absolute ? when : when - c->srv->mstime;
    if (v < 0) v = 0;
    reply_ll(c, ms ? v : (absolute ? v / 1000 : (v + 500) / 1000));
}

static void cmd_ttl(client_t *c) { ttl_generic(c, false, false); }
static void cmd_pttl(client_t *c) { ttl_generic(c, true, false); }
static void cmd_expiretime(client_t *c) { ttl_generic(c, false, true); }
static void cmd_pexpiretime(client_t *c) { ttl_generic(c, true, true); }

static void cmd_persist(client_t *c) {
    if (!db_lookup_write(c->db, c->argv[1])) {
        reply_ll(c, 0);
        return;
    }
    bool removed = db_remove_expire(c->db, c->argv[1]);
    if (removed) notify_keyspace_event(c->srv, NOTIFY_GENERIC, "persist", c->argv[1], c->db->id);
    if (removed) db_signal_modified(c->db, c->argv[1]);
    reply_ll(c, removed);
}

/* ---------------------------------------------------------------- OBJECT */

static bool lfu_policy(const server_t *srv) {
    return srv->cfg.maxmemory_policy == MAXMEMORY_ALLKEYS_LFU || srv->cfg.maxmemory_policy == MAXMEMORY_VOLATILE_LFU;
}

static robj *object_lookup(client_t *c) {
    robj *o = db_lookup_read(c->db, c->argv[2], LOOKUP_NOTOUCH | LOOKUP_NOSTATS);
    if (!o) reply_null(c);
    return o;
}

static void cmd_object_encoding(client_t *c) {
    robj *o = object_lookup(c);
    if (o) reply_bulk_cstr(c, obj_encoding_name_of(o));
}

static void cmd_object_refcount(client_t *c) {
    robj *o = object_lookup(c);
    if (o) reply_ll(c, obj_is_embedded(o) ? 1 : o->refcount); /* embedded: only its key refers to it */
}

static void cmd_object_idletime(client_t *c) {
    robj *o = object_lookup(c);
    if (!o) return;
    if (lfu_policy(c->srv)) {
        reply_error(c, "An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching "
                       "between policies at runtime LRU and LFU data will take some time to adjust.");
        return;
    }
    reply_ll(c, (long long)(obj_idle_ms(o) / 1000));
}

static void cmd_object_freq(client_t *c) {
    robj *o = object_lookup(c);
    if (!o) return;
    if (!lfu_policy(c->srv)) {
        reply_error(c, "An LFU maxmemory policy is not selected, access frequency not tracked. Please note that "
                       "when switching between policies at runtime LRU and LFU data will take some time to adjust.");
        return;
    }
    reply_ll(c, evict_lfu_counter(c->srv, o)); /* with the decay due by now */
}

static void cmd_object_help(client_t *c) {
    static const char *help[] = {
        "ENCODING <key>", "    Return the kind of internal representation used in order to store the value",
        "    associated with a <key>.",
        "FREQ <key>", "    Return the access frequency index of the <key>. The returned integer is",
        "    proportional to the logarithm of the recent access frequency of the key.",
        "IDLETIME <key>", "    Return the idle time of the <key>, that is the approximated number of",
        "    seconds elapsed since the last access to the key.",
        "REFCOUNT <key>", "    Return the number of references of the value associated with the specified",
        "    <key>.", NULL};
    reply_help(c, "OBJECT", help);
}

static command_t object_subcommands[] = {
    {"encoding", cmd_object_encoding, 3, CMD_READONLY, 2, 2, 1, "generic", "Inspect the internal encoding of a Redis object", "2.2.3", NULL},
    {"refcount", cmd_object_refcount, 3, CMD_READONLY, 2, 2, 1, "generic", "Get the number of references to the value of the key", "2.2.3", NULL},
    {"idletime", cmd_object_idletime, 3, CMD_READONLY, 2, 2, 1, "generic", "Get the time since a Redis object was last accessed", "2.2.3", NULL},
    {"freq", cmd_object_freq, 3, CMD_READONLY, 2, 2, 1, "generic", "Get the logarithmic access frequency counter of a Redis object", "4.0.0", NULL},
    {"help", cmd_object_help, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "generic", "Show helpful text about the different subcommands", "6.2.0", NULL},
    {0},
};

/* ---------------------------------------------------------------- databases */

/* The index must be an int and name an existing database.  A bad number
 * gets invalid_msg; with NULL, Redis's generic int texts (SELECT). */
static bool db_index_or_reply(client_t *c, robj *arg, const char *invalid_msg, long long *id) {
    if (!invalid_msg) {
        if (!cmd_get_ll_or_reply(c, arg, id, NULL)) return false;
        if (*id < INT_MIN || *id > INT_MAX) {
            reply_error(c, "value is out of range, value must between %d and %d", INT_MIN, INT_MAX);
            return false;
        }
    } else if (!obj_get_ll(arg, id) || *id < INT_MIN || *id > INT_MAX) {
        reply_error(c, "%s", invalid_msg);
        return false;
    }
    if (*id < 0 || *id >= c->srv->dbnum) {
        reply_error(c, RL_ERR_DB_INDEX);
        return false;
    }
    return true;
}

static void cmd_select(client_t *c) {
    long long id;
    /* Cluster mode serves db 0 only (Redis 7.0's check, after the parse). */
    if (c->srv->cfg.cluster_enabled) {
        if (!cmd_get_range_or_reply(c, c->argv[1], INT_MIN, INT_MAX, &id, NULL)) return;
        if (id != 0) {
            reply_error(c, "SELECT is not allowed in cluster mode");
            return;
        }
    }
    if (!db_index_or_reply(c, c->argv[1], NULL, &id)) return;
    c->db = &c->srv->dbs[id];
    reply_ok(c);
}

static void cmd_swapdb(client_t *c) {
    long long a, b;
    if (c->srv->cfg.cluster_enabled) {
        reply_error(c, "SWAPDB is not allowed in cluster mode");
        return;
    }
    if (!db_index_or_reply(c, c->argv[1], "invalid first DB index", &a)) return;
    if (!db_index_or_reply(c, c->argv[2], "invalid second DB index", &b)) return;
    if (a != b) {
        db_t *x = &c->srv->dbs[a], *y = &c->srv->dbs[b];
        /* Clients stay on their db index: they see the other data set. */
        /* WATCH: keys that exist on either side change (before the swap). */
        multi_touch_db(c->srv, (int)a, (int)b);
        multi_touch_db(c->srv, (int)b, (int)a);
        db_t tmp = *x;
        x->keys = y->keys;
        x->expires_count = y->expires_count;
        x->avg_ttl = y->avg_ttl;
        x->expire_cursor = y->expire_cursor;
        x->ttl_index = y->ttl_index; /* ttl_index.h: it goes with its keys table */
        x->hfe_keys = y->hfe_keys;   /* so do the hashes with field TTLs */
        x->hfe_cursor = y->hfe_cursor;
        y->keys = tmp.keys;
        y->expires_count = tmp.expires_count;
        y->avg_ttl = tmp.avg_ttl;
        y->expire_cursor = tmp.expire_cursor;
        y->ttl_index = tmp.ttl_index;
        y->hfe_keys = tmp.hfe_keys;
        y->hfe_cursor = tmp.hfe_cursor;
        c->srv->dirty++;
        /* Clients blocked on a key that now exists are served. */
        blocking_signal_db(x);
        blocking_signal_db(y);
    }
    reply_ok(c);
}

/* FLUSHDB/FLUSHALL take an optional ASYNC or SYNC; without one,
 * lazyfree-lazy-user-flush decides.  *async tells which. */
static bool flush_mode_or_reply(client_t *c, bool *async) {
    *async = c->srv->cfg.lazyfree_lazy_user_flush;
    if (c->argc == 1) return true;
    if (c->argc == 2 && (!strcasecmp(c->argv[1]->ptr, "async") || !strcasecmp(c->argv[1]->ptr, "sync"))) {
        *async = !strcasecmp(c->argv[1]->ptr, "async");
        return true;
    }
    reply_error(c, RL_ERR_SYNTAX);
    return false;
}

static long long flush_one(db_t *db, bool async) { return async ? db_empty_async(db) : db_empty(db); }

static void cmd_flushdb(client_t *c) {
    bool async;
    if (!flush_mode_or_reply(c, &async)) return;
    c->srv->dirty += flush_one(c->db, async);
    tracking_on_flush(c->srv); /* tracking.c: every cache is stale */
    persist_force_propagate(c);
    reply_ok(c);
}

static void cmd_flushall(client_t *c) {
    bool async;
    if (!flush_mode_or_reply(c, &async)) return;
    for (int i = 0; i < c->srv->dbnum; i++) c->srv->dirty += flush_one(&c->srv->dbs[i], async);
    tracking_on_flush(c->srv); /* tracking.c: every cache is stale */
    persist_after_flushall(c->srv);
    persist_force_propagate(c);
    reply_ok(c);
}

command_t keyspace_commands[] = {
    {"del", cmd_del, -2, CMD_WRITE, 1, -1, 1, "generic", "Delete a key", "1.0.0", NULL},
    {"unlink", cmd_unlink, -2, CMD_WRITE | CMD_FAST, 1, -1, 1, "generic", "Delete a key asynchronously in another thread", "4.0.0", NULL},
    {"exists", cmd_exists, -2, CMD_READONLY | CMD_FAST, 1, -1, 1, "generic", "Determine if a key exists", "1.0.0", NULL},
    {"touch", cmd_touch, -2, CMD_READONLY | CMD_FAST, 1, -1, 1, "generic", "Alters the last access time of a key(s)", "3.2.1", NULL},
    {"type", cmd_type, 2, CMD_READONLY | CMD_FAST, 1, 1, 1, "generic", "Determine the type stored at key", "1.0.0", NULL},
    {"rename", cmd_rename, 3, CMD_WRITE, 1, 2, 1, "generic", "Rename a key", "1.0.0", NULL},
    {"renamenx", cmd_renamenx, 3, CMD_WRITE | CMD_FAST, 1, 2, 1, "generic", "Rename a key, only if the new key does not exist", "1.0.0", NULL},
    {"keys", cmd_keys, 2, CMD_READONLY, 0, 0, 0, "generic", "Find all keys matching the given pattern", "1.0.0", NULL},
    {"scan", cmd_scan, -2, CMD_READONLY | CMD_TOUCHES_ARBITRARY_KEYS, 0, 0, 0, "generic", "Incrementally iterate the keys space", "2.8.0", NULL},
    {"randomkey", cmd_randomkey, 1, CMD_READONLY | CMD_TOUCHES_ARBITRARY_KEYS, 0, 0, 0, "generic", "Return a random key from the keyspace", "1.0.0", NULL},
    {"dbsize", cmd_dbsize, 1, CMD_READONLY | CMD_FAST, 0, 0, 0, "server", "Return the number of keys in the selected database", "1.0.0", NULL},
    {"expire", cmd_expire, -3, CMD_WRITE | CMD_FAST, 1, 1, 1, "generic", "Set a key's time to live in seconds", "1.0.0", NULL},
    {"pexpire", cmd_pexpire, -3, CMD_WRITE | CMD_FAST, 1, 1, 1, "generic", "Set a key's time to live in milliseconds", "2.6.0", NULL},
    {"expireat", cmd_expireat, -3, CMD_WRITE | CMD_FAST, 1, 1, 1, "generic", "Set the expiration for a key as a UNIX timestamp", "1.2.0", NULL},
    {"pexpireat", cmd_pexpireat, -3, CMD_WRITE | CMD_FAST, 1, 1, 1, "generic", "Set the expiration for a key as a UNIX timestamp specified in milliseconds", "2.6.0", NULL},
    {"ttl", cmd_ttl, 2, CMD_READONLY | CMD_FAST, 1, 1, 1, "generic", "Get the time to live for a key in seconds", "1.0.0", NULL},
    {"pttl", cmd_pttl, 2, CMD_READONLY | CMD_FAST, 1, 1, 1, "generic", "Get the time to live for a key in milliseconds", "2.6.0", NULL},
    {"expiretime", cmd_expiretime, 2, CMD_READONLY | CMD_FAST, 1, 1, 1, "generic", "Get the expiration Unix timestamp for a key", "7.0.0", NULL},
    {"pexpiretime", cmd_pexpiretime, 2, CMD_READONLY | CMD_FAST, 1, 1, 1, "generic", "Get the expiration Unix timestamp for a key in milliseconds", "7.0.0", NULL},
    {"persist", cmd_persist, 2, CMD_WRITE | CMD_FAST, 1, 1, 1, "generic", "Remove the expiration from a key", "2.2.0", NULL},
    {"object", NULL, -2, 0, 0, 0, 0, "generic", "A container for object introspection commands", "2.2.3", object_subcommands},
    {"select", cmd_select, 2, CMD_LOADING | CMD_STALE | CMD_FAST, 0, 0, 0, "connection", "Change the selected database for the current connection", "1.0.0", NULL},
    {"swapdb", cmd_swapdb, 3, CMD_WRITE | CMD_FAST, 0, 0, 0, "server", "Swaps two Redis databases", "4.0.0", NULL},
    {"flushdb", cmd_flushdb, -1, CMD_WRITE, 0, 0, 0, "server", "Remove all keys from the current database", "1.0.0", NULL},
    {"flushall", cmd_flushall, -1, CMD_WRITE, 0, 0, 0, "server", "Remove all keys from all databases", "1.0.0", NULL},
    {0},
};
