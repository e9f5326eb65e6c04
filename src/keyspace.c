/* keyspace.c: the databases (see keyspace.h).
 *
 * Each db has one table of db_entry pointers (db_entry.h: one allocation
 * per key with the value, the optional expire time and the key).  A TTL
 * lives in its key's entry, with a count of such keys per db for INFO
 * keyspace, RDB's RESIZEDB and the expiry cycle; only while keys with a
 * TTL are rare does a second index point at their entries (ttl_index.c,
 * told here of every entry that gains, loses or moves with a TTL), so
 * that the expiry cycle and volatile eviction need not walk past the
 * others.  An expired key
 * is deleted when it is next looked up (lazy expiry) or by that cycle.
 * An entry that must move (a TTL added to a key whose entry has no expire
 * slot, a value that does not fit) gets its table slot updated here. */
#include "keyspace.h"

#include <stdlib.h>

#include "command_def.h"
#include "conn.h"
#include "crc16.h"
#include "db_views.h"
#include "evict_stamp.h"
#include "lazyfree.h"
#include "tracking.h"
#include "ttl_index.h"
#include "notify.h"
#include "reply.h"
#include "util.h"

static const void *entry_key(const void *e) { return db_entry_key(e); }
static void entry_free(void *p) { db_entry_free(p); }

static const ht_type keys_type = {entry_key, dict_sds_hash, dict_sds_eq, entry_free};

ht *db_create_keys_table(void) { return ht_create(&keys_type); }

/* ------------------------------------------------ sets of key names */

/* A db keeps two sets of key names beside its keys table: the hashes with
 * field TTLs and a writable replica's own keys with a TTL.  Each is created
 * on its first name and released, with the cursor of the cycle walking it,
 * when its last name goes. */
static void name_free(void *p) { sds_free(p); }
static const ht_type names_type = {NULL, dict_sds_hash, dict_sds_eq, name_free};

static void names_add(ht **set, sds key) {
    if (!*set) *set = ht_create(&names_type);
    ht_position pos;
    if (ht_find_position_for_insert(*set, key, &pos, NULL)) ht_insert_at_position(*set, &pos, sds_dup(key));
}

static void names_release(ht **set, unsigned long *cursor) {
    if (*set) ht_release(*set);
    *set = NULL;
    *cursor = 0;
}

static void names_remove(ht **set, unsigned long *cursor, sds key) {
    if (!*set) return;
    ht_delete(*set, key);
    if (ht_size(*set) == 0) names_release(set, cursor);
}

/* ------------------------------------------- hashes with field TTLs */

void db_track_field_ttl(db_t *db, sds key) { names_add(&db->hfe_keys, key); }

void db_untrack_field_ttl(db_t *db, sds key) { names_remove(&db->hfe_keys, &db->hfe_cursor, key); }

static void hfe_release(db_t *db) { names_release(&db->hfe_keys, &db->hfe_cursor); }

/* ------------------------------- a writable replica's own keys with a TTL */

/* Redis 7.0's slaveKeysWithExpire: a replica leaves expiry to its master's
 * DEL, but a key a client of its own (replica-read-only no) gave a TTL has
 * no master to expire it; its name is kept here, and expire.c's cycle
 * expires it (db_expire_own_key).  Names only: a name whose key is gone or
 * lost its TTL is dropped when the cycle reaches it; a flush drops all. */
static void track_replica_ttl_key(db_t *db, sds key) {
    server_t *srv = db->srv;
    client_t *cur = srv->current_client;
    if (srv->keyspace_hooks->keys_expire_locally(srv) || srv->cfg.replica_read_only || !cur ||
        (cur->flags & CLIENT_MASTER))
        return;
    names_add(&db->replica_ttl_keys, key);
}

void db_untrack_replica_ttl_key(db_t *db, sds key) {
    names_remove(&db->replica_ttl_keys, &db->own_cursor, key);
}

static void replica_ttl_release(db_t *db) { names_release(&db->replica_ttl_keys, &db->own_cursor); }

size_t db_replica_ttl_keys_count(const server_t *srv) {
    size_t n = 0;
    for (int i = 0; i < srv->dbnum; i++)
        if (srv->dbs[i].replica_ttl_keys) n += ht_size(srv->dbs[i].replica_ttl_keys);
    return n;
}

void db_init_all(server_t *srv) {
    srv->dbnum = (int)srv->cfg.databases;
    srv->dbs = zcalloc(sizeof(db_t) * (size_t)srv->dbnum);
    for (int i = 0; i < srv->dbnum; i++) {
        srv->dbs[i].keys = db_create_keys_table();
        srv->dbs[i].id = i;
        srv->dbs[i].srv = srv;
    }
    /* Cluster mode serves db 0 only: its keys are counted per hash slot
     * (64 KiB once, nothing per key). */
    if (srv->cfg.cluster_enabled) srv->dbs[0].slot_keys = zcalloc(sizeof(uint32_t) * CRC16_SLOTS);
}

/* The per-slot count of a key added (+1) or removed (-1). */
static inline void slot_count(db_t *db, const char *key, size_t len, int delta) {
    if (db->slot_keys) db->slot_keys[crc16_key_slot(key, len)] += (uint32_t)delta;
}

/* Recount every slot from the table (a swapped-in data set). */
static void slot_recount(db_t *db) {
    if (!db->slot_keys) return;
    memset(db->slot_keys, 0, sizeof(uint32_t) * CRC16_SLOTS);
    ht_iter it;
    ht_iter_init(&it, db->keys, false);
    void *p;
    while (ht_next(&it, &p)) {
        sds k = db_entry_key(p);
        slot_count(db, k, sds_len(k), 1);
    }
    ht_iter_release(&it);
}

void db_free_all(server_t *srv) {
    for (int i = 0; i < srv->dbnum; i++) {
        ttl_index_release(&srv->dbs[i]);
        hfe_release(&srv->dbs[i]);
        replica_ttl_release(&srv->dbs[i]);
        ht_release(srv->dbs[i].keys);
        zfree(srv->dbs[i].slot_keys);
    }
    zfree(srv->dbs);
    srv->dbs = NULL;
    db_views_free(srv->views);
    srv->views = NULL;
}

/* ------------------------------------------------------ value views */

robj *db_value_of(db_t *db, const db_entry *e) {
    if (!db_entry_is_embedded(e)) return db_entry_val(e, NULL);
    return db_entry_val(e, db_views_take(db_views_of(db->srv)));
}

/* ------------------------------------------- temporary sets (swapdb load) */

db_t *db_temp_set_create(server_t *srv) {
    db_t *set = zcalloc(sizeof(db_t) * (size_t)srv->dbnum);
    for (int i = 0; i < srv->dbnum; i++) {
        set[i].keys = db_create_keys_table();
        set[i].id = i;
        set[i].srv = srv;
    }
    return set;
}

void db_temp_set_swap(server_t *srv, db_t *set) {
    for (int i = 0; i < srv->dbnum; i++) {
        db_t *db = &srv->dbs[i];
        ht *keys = db->keys;
        size_t expires = db->expires_count;
        struct ttl_index *index = db->ttl_index;
        ht *hfe = db->hfe_keys;
        db->keys = set[i].keys;
        db->expires_count = set[i].expires_count;
        db->ttl_index = set[i].ttl_index;
        db->hfe_keys = set[i].hfe_keys;
        set[i].keys = keys;
        set[i].expires_count = expires;
        set[i].ttl_index = index;
        set[i].hfe_keys = hfe;
        db->hfe_cursor = set[i].hfe_cursor = 0;
        db->avg_ttl = 0;
        db->expire_cursor = 0;
        slot_recount(db);
        /* WATCH of the old data, stream readers, clients blocked on keys */
        srv->keyspace_hooks->db_replaced(db);
    }
}

void db_temp_set_free(server_t *srv, db_t *set, bool async) {
    for (int i = 0; i < srv->dbnum; i++) {
        ttl_index_release(&set[i]);
        hfe_release(&set[i]);
        if (async) lazyfree_free_tables(srv->lazyfree, set[i].keys);
        else ht_release(set[i].keys);
    }
    zfree(set);
}

size_t db_size(const db_t *db) { return ht_size(db->keys); }

/* The count kept per slot bounds the walk: it stops once every key of the
 * slot (or max of them) is found.  Still a walk of the table in the worst
 * case; see docs/cluster.md for the index this leaves for later. */
size_t db_slot_keys(db_t *db, unsigned slot, sds *out, size_t max) {
    size_t want = db_slot_size(db, slot), n = 0;
    if (want > max) want = max;
    if (want == 0) return 0;
    ht_iter it;
    ht_iter_init(&it, db->keys, false);
    void *p;
    while (n < want && ht_next(&it, &p)) {
        sds k = db_entry_key(p);
        if (crc16_key_slot(k, sds_len(k)) == slot) out[n++] = sds_dup(k);
    }
    ht_iter_release(&it);
    return n;
}
size_t db_expires_size(const db_t *db) { return db->expires_count; }

db_entry *db_find(db_t *db, const sds key) {
    void *e;
    return ht_size(db->keys) && ht_find(db->keys, key, &e) ? e : NULL;
}

long long db_get_expire(db_t *db, robj *key) {
    if (db->expires_count == 0) return -1; /* the common case: no lookup */
    db_entry *e = db_find(db, key->ptr);
    return e ? db_entry_expire(e) : -1;
}

/* Unlink a key from the table.  The value is freed now, or on the bio
 * thread when lazy and big (lazyfree.h; memory-pressure hook). */
static bool delete_sds_key(db_t *db, sds key, bool lazy) {
    void *p;
    if (!ht_pop(db->keys, key, &p)) return false;
    slot_count(db, key, sds_len(key), -1);
    db_entry *e = p;
    if (db_entry_expire(e) >= 0) {
        db->expires_count--;
        ttl_index_remove(db, e);
    }
    robj *val = db_entry_take_val(e); /* NULL: embedded, goes with e */
    db_entry_free_shell(e);
    if (val) lazyfree_free_value(db->srv->lazyfree, val, lazy);
    ttl_index_check(db);
    return true;
}

/* Swap the table slot (and index pointer) of an entry that moved from e
 * to n, and free e's memory. */
static void entry_moved(db_t *db, db_entry *e, db_entry *n) {
    ht_replace_entry(db->keys, e, n);
    if (db_entry_expire(n) >= 0) ttl_index_moved(db, e, n);
    db_entry_free_shell(e);
}

/* Put val in an existing entry and release the old value (lazily under
 * lazyfree-lazy-server-del); LFU stamps carry over (memory-pressure hook).
 * The entry is rebuilt when the value is embedded in it or will be
 * (db_entry.h), so the stored value is returned. */
static db_entry *replace_value_entry(db_t *db, db_entry *e, robj *val);

static robj *replace_value(db_t *db, db_entry *e, robj *val) { return db_value_of(db, replace_value_entry(db, e, val)); }

/* replace_value, returning the (maybe moved) entry rather than a view of
 * its value: plain SET has no use for the view. */
static db_entry *replace_value_entry(db_t *db, db_entry *e, robj *val) {
    robj view;
    robj *old = db_entry_val(e, &view);
    if (old == val) return e;
    evict_stamp_replace(db->srv, val, old);
    robj *owned = db_entry_take_val(e); /* NULL when embedded: goes with e */
    if (obj_has_field_ttl(val)) db_track_field_ttl(db, db_entry_key(e));
    db_entry *n = db_entry_set_val(e, val);
    if (n != e) entry_moved(db, e, n);
    if (owned) lazyfree_free_value(db->srv->lazyfree, owned, db->srv->cfg.lazyfree_lazy_server_del);
    return n;
}

/* force: a write on a writable replica, which deletes the expired key
 * before writing a new one there (Redis's rule; else the write would land
 * on a key that still looks expired). */
static bool expire_if_needed(db_t *db, robj *key, bool force) {
    long long when = db_get_expire(db, key);
    if (when < 0 || when > db->srv->mstime) return false;
    /* repl.h: on a replica the master decides: its link sees the key until
     * the DEL arrives, other clients see it gone, nothing is deleted here. */
    if (!db->srv->keyspace_hooks->keys_expire_locally(db->srv)) {
        client_t *cur = db->srv->current_client;
        if (cur && (cur->flags & CLIENT_MASTER)) return false;
        if (!force) return true;
    }
    /* pause.c: during CLIENT PAUSE the dataset holds still; the key only
     * looks missing until the pause ends. */
    if (db->srv->keyspace_hooks->writes_paused(db->srv)) return true;
    tracking_invalidate_key(db->srv, key->ptr); /* and cached copies */
    delete_sds_key(db, key->ptr, db->srv->cfg.lazyfree_lazy_expire);
    /* AOF and replicas get a DEL; WATCH is invalidated (after the delete: multi.c looks) */
    db->srv->keyspace_hooks->key_expired(db, key, db->srv->cfg.lazyfree_lazy_expire);
    db->srv->stats.expiredkeys++;
    notify_keyspace_event(db->srv, NOTIFY_EXPIRED, "expired", key, db->id); /* notify.c */
    return true;
}

bool db_expire_if_needed(db_t *db, robj *key) { return expire_if_needed(db, key, false); }

bool db_expire_own_key(db_t *db, robj *key) {
    client_t *cur = db->srv->current_client;
    db->srv->current_client = NULL; /* the cron's: not the master's link */
    bool gone = expire_if_needed(db, key, true);
    db->srv->current_client = cur;
    return gone;
}

/* A lookup's access stamp: the LRU clock or LFU counter of e's value. */
static void touch(db_t *db, db_entry *e, robj *val) {
    evict_touch(db->srv, val);                                  /* LRU clock or LFU counter */
    if (db_entry_is_embedded(e)) db_entry_set_lru(e, val->lru); /* val is a view */
}

/* CLIENT NO-TOUCH: its commands leave stamps alone, except TOUCH itself. */
static bool no_touch_client(const server_t *srv) {
    const client_t *cur = srv->current_client;
    return cur && (cur->flags & CLIENT_NO_TOUCH) && !(cur->cmd && !strcmp(cur->cmd->fullname, "touch"));
}

static robj *lookup(db_t *db, robj *key, int flags) {
    db_entry *e = db_find(db, key->ptr);
    if (!e) return NULL;
    robj *val = db_value_of(db, e);
    if (!(flags & LOOKUP_NOTOUCH) && !no_touch_client(db->srv)) touch(db, e, val);
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
    if (expire_if_needed(db, key, !db->srv->cfg.replica_read_only)) return NULL; /* gone, or held by a pause */
    return lookup(db, key, LOOKUP_NONE);
}

bool db_exists(db_t *db, robj *key) {
    if (db_expire_if_needed(db, key)) return false;
    return db_find(db, key->ptr) != NULL;
}

/* Insert a new entry for key at pos (from ht_find_position_for_insert);
 * returns it (its value is a copy of val when embedded). */
static db_entry *insert_new(db_t *db, const ht_position *pos, sds key, robj *val, long long expire_ms) {
    evict_stamp_new(db->srv, val);            /* before: an embedded copy takes the stamp */
    bool field_ttls = obj_has_field_ttl(val); /* before: an embedded val is gone after */
    db_entry *e = db_entry_new(key, sds_len(key), val, expire_ms >= 0, expire_ms);
    ht_insert_at_position(db->keys, pos, e);
    slot_count(db, key, sds_len(key), 1);
    if (field_ttls) db_track_field_ttl(db, key); /* RENAME, MOVE, COPY, RESTORE, loads */
    if (expire_ms >= 0) {
        db->expires_count++;
        ttl_index_add(db, e);
    } else {
        ttl_index_check(db);
    }
    return e;
}

robj *db_add(db_t *db, robj *key, robj *val) {
    ht_position pos;
    if (!ht_find_position_for_insert(db->keys, key->ptr, &pos, NULL)) return NULL; /* callers checked */
    val = db_value_of(db, insert_new(db, &pos, key->ptr, val, -1));
    db_signal_modified(db, key);
    notify_keyspace_event(db->srv, NOTIFY_NEW, "new", key, db->id); /* notify.c */
    return val;
}

bool db_add_loaded(db_t *db, sds key, robj *val, long long expire_ms) {
    ht_position pos;
    if (!ht_find_position_for_insert(db->keys, key, &pos, NULL)) return false;
    insert_new(db, &pos, key, val, expire_ms);
    return true;
}

robj *db_overwrite(db_t *db, robj *key, robj *val) {
    val = replace_value(db, db_find(db, key->ptr), val);
    db_signal_modified(db, key);
    return val;
}

robj *db_unshare_string(db_t *db, robj *key, robj *o) {
    bool replaced;
    robj *w = obj_unshare_string(o, &replaced);
    if (replaced) w = replace_value(db, db_find(db, key->ptr), w);
    return w;
}

/* db_set_key; touch_old: stamp the replaced value first, as the
 * db_lookup_write before it would have (db_lookup_and_set_key). */
/* Add or replace (db_set_key without the signals); returns the entry. */
static db_entry *set_key(db_t *db, robj *key, robj *val, bool keep_ttl, bool touch_old) {
    ht_position pos;
    void *existing;
    db_entry *e;
    if (ht_find_position_for_insert(db->keys, key->ptr, &pos, &existing)) {
        e = insert_new(db, &pos, key->ptr, val, -1);
        notify_keyspace_event(db->srv, NOTIFY_NEW, "new", key, db->id); /* notify.c */
    } else {
        if (touch_old) {
            robj view;
            touch(db, existing, db_entry_val(existing, &view));
        }
        e = replace_value_entry(db, existing, val);
        if (!keep_ttl) db_remove_expire(db, key);
    }
    return e;
}

robj *db_set_key(db_t *db, robj *key, robj *val, bool keep_ttl) {
    val = db_value_of(db, set_key(db, key, val, keep_ttl, false));
    db_signal_modified(db, key);
    return val;
}

void db_lookup_and_set_key(db_t *db, robj *key, robj *val) {
    /* A key that looks expired but stays (a replica's, or one held by a
     * pause) is one db_lookup_write would not have found, so not touched. */
    bool gone = expire_if_needed(db, key, !db->srv->cfg.replica_read_only);
    set_key(db, key, val, false, !gone);
    db_signal_modified(db, key);
}

bool db_delete(db_t *db, robj *key) { return db_delete_lazy(db, key, db->srv->cfg.lazyfree_lazy_server_del); }

bool db_delete_lazy(db_t *db, robj *key, bool lazy) {
    bool deleted = delete_sds_key(db, key->ptr, lazy);
    if (deleted) db_signal_modified(db, key);
    return deleted;
}

long long db_empty(db_t *db) {
    long long n = (long long)ht_size(db->keys);
    db->srv->keyspace_hooks->db_flushed(db); /* WATCH; stream readers learn their key is gone */
    ttl_index_release(db);
    hfe_release(db);
    replica_ttl_release(db);
    ht_empty(db->keys);
    if (db->slot_keys) memset(db->slot_keys, 0, sizeof(uint32_t) * CRC16_SLOTS);
    db->expires_count = 0;
    db->avg_ttl = 0;
    db->expire_cursor = 0;
    ttl_index_check(db); /* a forced index (DEBUG TTL-INDEX) starts afresh */
    return n;
}

/* FLUSH* ASYNC: fresh tables now, the old ones freed on the bio thread
 * (memory-pressure hook). */
long long db_empty_async(db_t *db) {
    long long n = (long long)ht_size(db->keys);
    db->srv->keyspace_hooks->db_flushed(db); /* WATCH; stream readers learn their key is gone */
    ttl_index_release(db);
    hfe_release(db);
    replica_ttl_release(db);
    lazyfree_free_tables(db->srv->lazyfree, db->keys);
    db->keys = db_create_keys_table();
    if (db->slot_keys) memset(db->slot_keys, 0, sizeof(uint32_t) * CRC16_SLOTS);
    db->expires_count = 0;
    db->avg_ttl = 0;
    db->expire_cursor = 0;
    ttl_index_check(db);
    return n;
}

void db_set_expire(db_t *db, robj *key, long long when_ms) {
    db_entry *e = db_find(db, key->ptr);
    if (!e) return;
    if (when_ms >= 0) track_replica_ttl_key(db, key->ptr);
    if (!db_entry_has_expire_slot(e)) {
        /* The entry grows by the expire slot: a new allocation, swapped
         * into the keys table. */
        db_entry *n = db_entry_with_expire(e, when_ms);
        entry_moved(db, e, n); /* e was not indexed: no TTL */
        if (when_ms >= 0) {
            db->expires_count++;
            ttl_index_add(db, n);
        }
        return;
    }
    bool had = db_entry_expire(e) >= 0;
    db_entry_set_expire(e, when_ms);
    if (!had && when_ms >= 0) {
        db->expires_count++;
        ttl_index_add(db, e);
    }
    if (had && when_ms < 0) {
        db->expires_count--;
        ttl_index_remove(db, e);
        ttl_index_check(db);
    }
}

bool db_remove_expire(db_t *db, robj *key) {
    if (db->expires_count == 0) return false;
    db_entry *e = db_find(db, key->ptr);
    if (!e || db_entry_expire(e) < 0) return false;
    db_entry_set_expire(e, -1); /* the slot stays: a later TTL needs no move */
    db->expires_count--;
    ttl_index_remove(db, e);
    ttl_index_check(db);
    return true;
}

void db_signal_modified(db_t *db, robj *key) {
    db->srv->dirty++;
    db->srv->keyspace_hooks->key_modified(db, key); /* wakes clients blocked on key; invalidates WATCH */
    tracking_invalidate_key(db->srv, key->ptr);     /* tracking.c: client-side caches */
}

sds db_random_key(db_t *db) {
    /* Expired keys met on the way are deleted; give up after many tries so
     * a db full of expired-but-not-yet-collected keys cannot loop forever. */
    for (int tries = 0; tries < 100 && ht_size(db->keys); tries++) {
        void *p;
        if (!ht_random_entry(db->keys, &p)) break;
        db_entry *e = p;
        sds key = db_entry_key(e);
        long long when = db_entry_expire(e);
        if (when >= 0 && when <= db->srv->mstime && tries < 99) {
            /* expired as a lookup expires it: DEL logged, "expired" event;
             * on a replica it only looks missing (then, after many tries,
             * it is returned all the same, as Redis does) */
            robj *k = obj_create_string(key, sds_len(key));
            bool gone = db_expire_if_needed(db, k);
            obj_decref(k);
            if (gone) continue;
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
