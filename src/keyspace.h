/* keyspace.h: the databases: lookups with lazy expiry, adding, replacing
 * and deleting keys, expire times.  Command handlers use these, never the
 * dicts directly, so statistics and expiry stay right.  Generic key commands
 * (DEL, EXISTS, SCAN, EXPIRE, ...) live in keyspace_cmds.c. */
#ifndef RL_KEYSPACE_H
#define RL_KEYSPACE_H

#include <stdbool.h>

#include "db_entry.h"
#include "db_views.h"
#include "server.h"

/* What keyspace.c needs from the layers above it: the data layer tells
 * them that keys changed and asks whether expiry may delete now; hooks.c
 * fills the table at start-up.  Every entry is set. */
typedef struct keyspace_hooks {
    bool (*keys_expire_locally)(const server_t *srv);    /* repl: false on a replica (the master sends DELs) */
    bool (*writes_paused)(server_t *srv);                /* pause.c: CLIENT PAUSE holds the dataset still */
    void (*key_expired)(db_t *db, robj *key, bool lazy); /* after the delete: the DEL to AOF/replicas, WATCH */
    void (*key_modified)(db_t *db, robj *key);           /* blocked clients, WATCH */
    void (*db_flushed)(db_t *db);                        /* WATCH, blocked stream readers */
    void (*db_replaced)(db_t *db);                       /* swapdb load: as flushed, and keys that now exist */
    /* persist.c, for the data layer's own commands (SPOP, HINCRBYFLOAT)
     * logged as other commands: whether an AOF or a replica would get a
     * write now, and persist_propagate_as */
    bool (*logging_on)(const client_t *c);
    void (*log_as)(client_t *c, const char *name, robj **args, int nargs);
    /* propagate.c: a write the server makes by itself on db (a hash
     * field's expiry as HDEL), to the AOF and replicas */
    void (*propagate)(db_t *db, robj **argv, int argc);
} keyspace_hooks_t;

#define LOOKUP_NONE 0
#define LOOKUP_NOTOUCH (1 << 0) /* do not update LRU */
#define LOOKUP_NOSTATS (1 << 1) /* do not count hits/misses */

void db_init_all(server_t *srv);
void db_free_all(server_t *srv);

robj *db_lookup_read(db_t *db, robj *key, int flags); /* counts hit/miss */
robj *db_lookup_write(db_t *db, robj *key);
/* Add a key that does not exist: takes a reference to val.  Returns the
 * stored value, which is a view of a copy when val is an immutable string
 * (embedded in the key's entry, db_entry.h): use it, not val, to read the
 * value after, and keep neither past a later db_* call on the key. */
robj *db_add(db_t *db, robj *key, robj *val);
/* Loading (RDB/AOF start-up): add key with one table lookup, no signals
 * or notifications.  False if the key exists (val is then not taken). */
bool db_add_loaded(db_t *db, sds key, robj *val, long long expire_ms);
/* Replace the value of an existing key (the TTL stays): takes val;
 * returns the stored value, as db_add. */
robj *db_overwrite(db_t *db, robj *key, robj *val);
/* The string value o of key made private and writable in place (Redis's
 * dbUnshareStringValue): no signal and no change counted, since the
 * bytes are still the same; returns the stored value, as db_add. */
robj *db_unshare_string(db_t *db, robj *key, robj *o);
/* Add or replace; removes the TTL unless keep_ttl: takes val; returns the
 * stored value, as db_add. */
robj *db_set_key(db_t *db, robj *key, robj *val, bool keep_ttl);
/* db_lookup_write(db, key) then db_set_key(db, key, val, false), with one
 * hash and table walk for both (plain SET): the same expiry, LRU/LFU
 * touch of the old value, replacement and signals; returns nothing (no
 * view of the stored value is made). */
void db_lookup_and_set_key(db_t *db, robj *key, robj *val);
bool db_delete(db_t *db, robj *key); /* lazy as lazyfree-lazy-server-del says */
/* Delete with the value freed on the bio thread if lazy and big (UNLINK,
 * DEL under lazyfree-lazy-user-del, eviction). */
bool db_delete_lazy(db_t *db, robj *key, bool lazy);
bool db_exists(db_t *db, robj *key);
long long db_empty(db_t *db);       /* returns keys removed */
long long db_empty_async(db_t *db); /* same, freeing on the bio thread */
size_t db_size(const db_t *db);
/* Cluster mode (db->slot_keys): the keys of hash slot `slot`, kept as
 * each key is added or deleted. */
static inline size_t db_slot_size(const db_t *db, unsigned slot) { return db->slot_keys ? db->slot_keys[slot] : 0; }
/* Up to max names (new sds, caller frees) of keys in slot, into out;
 * returns how many.  The walk ends as soon as it has them all. */
size_t db_slot_keys(db_t *db, unsigned slot, sds *out, size_t max);
size_t db_expires_size(const db_t *db); /* keys with a TTL */
/* The entry of key, expired or not, without touching LRU or stats. */
db_entry *db_find(db_t *db, const sds key);
/* The value of an entry as commands see it: the stored robj, or for an
 * embedded value a view valid until the end of the running command
 * (db_views.h).  Lookups return these. */
robj *db_value_of(db_t *db, const db_entry *e);
/* A fresh, empty keys table (SWAPDB, lazy flush). */
ht *db_create_keys_table(void);
/* repl-diskless-load swapdb: a set of srv->dbnum empty databases outside
 * srv, loaded while the live ones keep serving; swap exchanges their
 * tables with the live ones (clients stay on their index, WATCH and
 * blocked clients are told); free drops a set (async: on the bio thread). */
db_t *db_temp_set_create(server_t *srv);
void db_temp_set_swap(server_t *srv, db_t *set);
void db_temp_set_free(server_t *srv, db_t *set, bool async);

void db_set_expire(db_t *db, robj *key, long long when_ms);
long long db_get_expire(db_t *db, robj *key); /* -1 if none */
bool db_remove_expire(db_t *db, robj *key);
/* Delete key if expired; true if it was (or is logically) expired. */
bool db_expire_if_needed(db_t *db, robj *key);
/* A writable replica's own keys given a TTL by its clients (Redis's
 * slaveKeysWithExpire), in db->replica_ttl_keys: expire.c's cycle deletes
 * key if its TTL passed (true: gone or logically gone) and untracks the
 * names whose key is gone or has no TTL; the count is INFO's
 * slave_expires_tracked_keys. */
bool db_expire_own_key(db_t *db, robj *key);
void db_untrack_replica_ttl_key(db_t *db, sds key);
size_t db_replica_ttl_keys_count(const server_t *srv);
/* Called when a key is logically modified (WATCH, notifications later). */
void db_signal_modified(db_t *db, robj *key);

/* The db's set of hashes whose fields may have a TTL (hash field expiry,
 * hash_ttl.c): every value stored under a key through this module joins
 * it when obj_has_field_ttl says so; commands that give a field its first
 * TTL call db_track_field_ttl; active field expiry walks the set (NULL
 * when empty) and drops names that no longer hold such a hash. */
void db_track_field_ttl(db_t *db, sds key);
void db_untrack_field_ttl(db_t *db, sds key);
static inline ht *db_field_ttl_keys(db_t *db) { return db->hfe_keys; }

/* Random live key as a new sds, or NULL if the db is empty. */
sds db_random_key(db_t *db);

/* WRONGTYPE reply when o exists with another type (the _or_reply convention). */
bool db_check_type_or_reply(client_t *c, robj *o, int type);
/* The value at key if it has `type` (looked up for writing when `write`);
 * NULL when the key is missing, or of another type: then WRONGTYPE was sent
 * and *wrongtype is true. */
robj *db_lookup_typed_or_reply(client_t *c, robj *key, int type, bool write, bool *wrongtype);

#endif
