/* ttl_index.h: a second index of a database's keys that have a TTL, kept
 * only while they are a small minority of its keys.
 *
 * A key's expire time lives in its entry (db_entry.h) and nowhere else,
 * which costs a key with a TTL only those 8 bytes.  Active expiry and the
 * volatile-* eviction policies must find such keys, though: sampling the
 * keys table steps over every key without a TTL, so where one key in a
 * thousand has one, the cycle reads a thousand entries per sample and a
 * full pass takes tens of seconds.  So while a db's keys with a TTL are
 * rare (ttl_index.c says how rare, with hysteresis), a lib/hashtable of
 * pointers to their entries is kept beside the keys table, and the
 * samplers use it; where they are common it is dropped and the samplers
 * walk the keys table, as the per-key figure wants.
 *
 * keyspace.c (and active defrag, for the entries it moves) tells this
 * module of every entry that gains or loses a TTL or moves; nothing else
 * writes the index.  The index holds entry pointers only (it never frees
 * an entry) and lives and dies with its keys table: flushes, SWAPDB and
 * the swapdb load move it along. */
#ifndef RL_TTL_INDEX_H
#define RL_TTL_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db_entry.h"
#include "hashtable.h"
#include "server.h"

/* srv->ttl_index_mode: DEBUG TTL-INDEX sets it for tests and benchmarks. */
enum { TTL_INDEX_AUTO = 0,
       TTL_INDEX_ALWAYS = 1,
       TTL_INDEX_NEVER = 2 };

/* Entry e (in db's keys table) now has a TTL: a new key with one, or
 * EXPIRE on a key without.  Call after db->expires_count counted it. */
void ttl_index_add(db_t *db, db_entry *e);
/* Entry e's TTL ends (its key is deleted, or PERSIST): call before e is
 * freed.  Call after db->expires_count uncounted it. */
void ttl_index_remove(db_t *db, const db_entry *e);
/* An entry with a TTL moved from old (only compared, may be freed) to e. */
void ttl_index_moved(db_t *db, const db_entry *old, db_entry *e);
/* The counts of keys or of keys with a TTL changed: build or drop the
 * index when the share of keys with a TTL crossed a threshold.  Cheap. */
void ttl_index_check(db_t *db);
/* Drop db's index (flush, or db freed); the entries stay. */
void ttl_index_release(db_t *db);
/* The cron: go on building an index created over a big keys table, for
 * about budget_us microseconds. */
void ttl_index_cron(db_t *db, uint64_t budget_us);

/* The index when it holds exactly db's entries with a TTL; NULL when
 * there is none or it is still being built (then walk db->keys). */
ht *ttl_index_table(const db_t *db);
size_t ttl_index_mem(const db_t *db); /* bytes of the index, 0 if none */

/* DEBUG TTL-INDEX: set the mode on every db; describe db's index in buf
 * (state, entries, and whether it matches the keys table: walks it). */
void ttl_index_set_mode(server_t *srv, int mode);
void ttl_index_describe(db_t *db, char *buf, size_t len);

#endif
