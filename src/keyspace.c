/* keyspace.c: the databases (see keyspace.h).
 *
 * Each db has two hash tables: keys (the key embedded in the entry, the
 * value an robj) and expires (borrowing the key sds of the keys entry, the
 * value an absolute unix time in ms).  An expired key is deleted when it is
 * next looked up (lazy expiry) or by the active cycle in expire.c. */
#include "keyspace.h"

#include <stdlib.h>

#include "blocking.h"
#include "conn.h"
#include "evict.h"
#include "lazyfree.h"
#include "multi.h"
#include "pause.h"
#include "propagate.h"
#include "repl.h"
#include "tracking.h"
#include "notify.h"
#include "reply.h"
#include "util.h"

static dict_type keys_type = {dict_sds_hash, dict_sds_eq, NULL, NULL, obj_decref_void, true};
static dict_type expires_type = {dict_sds_hash, dict_sds_eq, NULL, NULL, NULL, false};

void db_init_all(server_t *srv) {
    srv->dbnum = (int)srv->cfg.databases;
    srv->dbs = zcalloc(sizeof(db_t) * (size_t)srv->dbnum);
    for (int i = 0; i < srv->dbnum; i++) {
        srv->dbs[i].keys = dict_create(&keys_type);
        srv->dbs[i].expires = dict_create(&expires_type);
        srv->dbs[i].id = i;
        srv->dbs[i].srv = srv;
    }
}

void db_free_all(server_t *srv) {
    for (int i = 0; i < srv->dbnum; i++) {
        dict_release(srv->dbs[i].expires);
        dict_release(srv->dbs[i].keys);
    }
    zfree(srv->dbs);
    srv->dbs = NULL;
}

/* ------------------------------------------- temporary sets (swapdb load) */

db_t *db_temp_set_create(server_t *srv) {
    db_t *set = zcalloc(sizeof(db_t) * (size_t)srv->dbnum);
    for (int i = 0; i < srv->dbnum; i++) {
        set[i].keys = dict_create(&keys_type);
        set[i].expires = dict_create(&expires_type);
        set[i].id = i;
        set[i].srv = srv;
    }
    return set;
}

void db_temp_set_swap(server_t *srv, db_t *set) {
    for (int i = 0; i < srv->dbnum; i++) {
        db_t *db = &srv->dbs[i];
        /* WATCHers of any key of the old data lose their transaction. */
        multi_touch_db(srv, i, -1);
        dict *keys = db->keys, *expires = db->expires;
        db->keys = set[i].keys;
        db->expires = set[i].expires;
        set[i].keys = keys;
        set[i].expires = expires;
        db->avg_ttl = 0;
        db->expire_cursor = 0;
        blocking_signal_db_flushed(db); /* stream readers learn their key went */
        blocking_signal_db(db);         /* clients blocked on a key that now exists */
    }
}

void db_temp_set_free(server_t *srv, db_t *set, bool async) {
    for (int i = 0; i < srv->dbnum; i++) {
        if (async) {
            lazyfree_free_tables(srv->lazyfree, set[i].keys, set[i].expires);
        } else {
            dict_release(set[i].expires);
            dict_release(set[i].keys);
        }
    }
    zfree(set);
}

size_t db_size(const db_t *db) { return dict_size(db->keys); }

long long db_get_expire(db_t *db, robj *key) {
    if (dict_size(db->expires) == 0) return -1;
    dict_entry *de = dict_find(db->expires, key->ptr);
    return de ? dict_get_s64(de) : -1;
}

/* Unlink both entries of a key: the expire first, since it borrows the key
 * string owned by the keys entry.  The value is freed now, or on the bio
 * thread when lazy and big (lazyfree.h; memory-pressure hook). */
static bool delete_sds_key(db_t *db, sds key, bool lazy) {
    if (dict_size(db->expires)) dict_delete(db->expires, key);
    dict_entry *de = dict_unlink(db->keys, key);
    if (!de) return false;
    robj *val = dict_get_val(de);
    de->v.ptr = NULL; /* the entry goes now, the value as lazyfree decides */
    dict_free_unlinked(db->keys, de);
    lazyfree_free_value(db->srv->lazyfree, val, lazy);
    return true;
}

/* Put val in an existing entry and release the old value (lazily under
 * lazyfree-lazy-server-del); LFU stamps carry over (memory-pressure hook). */
static void replace_value(db_t *db, dict_entry *de, robj *val) {
    robj *old = dict_get_val(de);
    if (old == val) return;
    evict_stamp_replace(db->srv, val, old);
    de->v.ptr = val;
    lazyfree_free_value(db->srv->lazyfree, old, db->srv->cfg.lazyfree_lazy_server_del);
}

bool db_expire_if_needed(db_t *db, robj *key) {
    long long when = db_get_expire(db, key);
    if (when < 0 || when > db->srv->mstime) return false;
    /* repl.h: on a replica the master decides: its link sees the key until
     * the DEL arrives, other clients see it gone, nothing is deleted here. */
    if (!repl_keys_expire_locally(db->srv)) {
        client_t *cur = db->srv->current_client;
        return !(cur && (cur->flags & CLIENT_MASTER));
    }
    /* pause.c: during CLIENT PAUSE the dataset holds still; the key only
     * looks missing until the pause ends. */
    if (pause_active(db->srv)) return true;
    tracking_invalidate_key(db->srv, key->ptr); /* and cached copies */
    delete_sds_key(db, key->ptr, db->srv->cfg.lazyfree_lazy_expire);
    propagate_del(db->srv, db->id, key, db->srv->cfg.lazyfree_lazy_expire); /* AOF and replicas: DEL */
    multi_touch_key(db->srv, db->id, key->ptr);                             /* an expiry invalidates WATCH (after: multi.c looks) */
    db->srv->stats.expiredkeys++;
    notify_keyspace_event(db->srv, NOTIFY_EXPIRED, "expired", key, db->id); /* notify.c */
    return true;
}

static robj *lookup(db_t *db, robj *key, int flags) {
    dict_entry *de = dict_find(db->keys, key->ptr);
    if (!de) return NULL;
    robj *val = dict_get_val(de);
    if (!(flags & LOOKUP_NOTOUCH)) evict_touch(db->srv, val); /* LRU clock or LFU counter */
    return val;
}

robj *db_lookup_read(db_t *db, robj *key, int flags) {
    robj *val = NULL;
    if (!db_expire_if_needed(db, key)) val = lookup(db, key, flags);
    if (!(flags & LOOKUP_NOSTATS)) {
        if (val) db->srv->stats.keyspace_hits++;
        else db->srv->stats.keyspace_misses++;
    }
    if (!val) notify_keyspace_event(db->srv, NOTIFY_KEY_MISS, "keymiss", key, db->id); /* notify.c */
    return val;
}

robj *db_lookup_write(db_t *db, robj *key) {
    if (db_expire_if_needed(db, key)) return NULL; /* gone, or held by a pause */
    return lookup(db, key, LOOKUP_NONE);
}

bool db_exists(db_t *db, robj *key) {
    if (db_expire_if_needed(db, key)) return false;
    return dict_find(db->keys, key->ptr) != NULL;
}

void db_add(db_t *db, robj *key, robj *val) {
    dict_add(db->keys, key->ptr, val);
    evict_stamp_new(db->srv, val);
    db_signal_modified(db, key);
    notify_keyspace_event(db->srv, NOTIFY_NEW, "new", key, db->id); /* notify.c */
}

bool db_add_loaded(db_t *db, sds key, robj *val, long long expire_ms) {
    dict_entry *existing;
    dict_entry *de = dict_add_raw(db->keys, key, &existing);
    if (!de) return false;
    de->v.ptr = val;
    evict_stamp_new(db->srv, val);
    if (expire_ms >= 0) {
        /* The expires entry borrows the key string embedded in de. */
        dict_entry *ee = dict_add_raw(db->expires, dict_get_key(db->keys, de), NULL);
        if (ee) dict_set_s64(ee, expire_ms);
    }
    return true;
}

void db_overwrite(db_t *db, robj *key, robj *val) {
    dict_entry *de = dict_find(db->keys, key->ptr);
    replace_value(db, de, val);
    db_signal_modified(db, key);
}

void db_set_key(db_t *db, robj *key, robj *val, bool keep_ttl) {
    dict_entry *existing;
    dict_entry *de = dict_add_raw(db->keys, key->ptr, &existing);
    if (de) {
        de->v.ptr = val;
        evict_stamp_new(db->srv, val);
        notify_keyspace_event(db->srv, NOTIFY_NEW, "new", key, db->id); /* notify.c */
    } else {
        replace_value(db, existing, val);
        if (!keep_ttl && dict_size(db->expires)) dict_delete(db->expires, key->ptr);
    }
    db_signal_modified(db, key);
}

bool db_delete(db_t *db, robj *key) { return db_delete_lazy(db, key, db->srv->cfg.lazyfree_lazy_server_del); }

bool db_delete_lazy(db_t *db, robj *key, bool lazy) {
    bool deleted = delete_sds_key(db, key->ptr, lazy);
    if (deleted) db_signal_modified(db, key);
    return deleted;
}

long long db_empty(db_t *db) {
    long long n = (long long)dict_size(db->keys);
    multi_touch_db(db->srv, db->id, -1);
    blocking_signal_db_flushed(db); /* stream readers learn their key is gone */
    dict_empty(db->expires);
    dict_empty(db->keys);
    db->avg_ttl = 0;
    db->expire_cursor = 0;
    return n;
}

/* FLUSH* ASYNC: fresh tables now, the old ones freed on the bio thread
 * (memory-pressure hook). */
long long db_empty_async(db_t *db) {
    long long n = (long long)dict_size(db->keys);
    multi_touch_db(db->srv, db->id, -1);
    blocking_signal_db_flushed(db); /* stream readers learn their key is gone */
    lazyfree_free_tables(db->srv->lazyfree, db->keys, db->expires);
    db->keys = dict_create(&keys_type);
    db->expires = dict_create(&expires_type);
    db->avg_ttl = 0;
    db->expire_cursor = 0;
    return n;
}

void db_set_expire(db_t *db, robj *key, long long when_ms) {
    dict_entry *kde = dict_find(db->keys, key->ptr);
    if (!kde) return;
    /* The expires entry points at the key string inside the keys entry. */
    dict_entry *existing;
    dict_entry *de = dict_add_raw(db->expires, dict_get_key(db->keys, kde), &existing);
    dict_set_s64(de ? de : existing, when_ms);
}

bool db_remove_expire(db_t *db, robj *key) {
    return dict_size(db->expires) && dict_delete(db->expires, key->ptr) == DICT_OK;
}

void db_signal_modified(db_t *db, robj *key) {
    db->srv->dirty++;
    blocking_signal_key(db, key);               /* wakes clients blocked on key, if any */
    multi_touch_key(db->srv, db->id, key->ptr); /* invalidates WATCH */
    tracking_invalidate_key(db->srv, key->ptr); /* tracking.c: client-side caches */
}

sds db_random_key(db_t *db) {
    /* Expired keys met on the way are deleted; give up after many tries so
     * a db full of expired-but-not-yet-collected keys cannot loop forever. */
    for (int tries = 0; tries < 100 && dict_size(db->keys); tries++) {
        dict_entry *de = dict_random_entry(db->keys);
        sds key = dict_get_key(db->keys, de);
        dict_entry *ee = dict_size(db->expires) ? dict_find(db->expires, key) : NULL;
        if (ee && dict_get_s64(ee) <= db->srv->mstime) {
            if (tries < 99) {
                sds copy = sds_dup(key);
                delete_sds_key(db, copy, db->srv->cfg.lazyfree_lazy_expire);
                db->srv->stats.expiredkeys++;
                sds_free(copy);
                continue;
            }
        }
        return sds_dup(key);
    }
    return NULL;
}

robj *db_lookup_typed_or_reply(client_t *c, robj *key, int type, bool write, bool *wrongtype) {
    robj *o = write ? db_lookup_write(c->db, key) : db_lookup_read(c->db, key, LOOKUP_NONE);
    *wrongtype = o && !db_check_type_or_reply(c, o, type);
    return *wrongtype ? NULL : o;
}

bool db_check_type_or_reply(client_t *c, robj *o, int type) {
    if (o && (int)o->type != type) {
        reply_error(c, RL_ERR_WRONGTYPE);
        return false;
    }
    return true;
}
