/* db_entry.h: the keyspace's entry: one allocation per key holding the
 * value pointer, the expire time (only for keys with a TTL) and the key
 * itself as an sds built in place.
 *
 * Both tables of a database (keyspace.c: keys, and expires for the keys
 * with a TTL) store pointers to these entries, so a key costs one
 * allocation plus one table slot (two with a TTL), with no dict entry or
 * separate key string.  Only keyspace.c creates, resizes and frees
 * entries; other files read them through the accessors below.  An entry
 * may move (a TTL added to a key without one, active defrag): keyspace.c
 * then updates both table slots. */
#ifndef RL_DB_ENTRY_H
#define RL_DB_ENTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "object.h"
#include "sds.h"

#define DB_ENTRY_HAS_EXPIRE 1 /* an int64 expire time (ms) starts buf */

typedef struct db_entry {
    robj *val;       /* the value; the entry holds one reference */
    uint8_t flags;   /* DB_ENTRY_* */
    uint8_t key_off; /* the key sds starts at buf + key_off */
    char buf[];      /* [int64 expire] [sds header, key, NUL] */
} db_entry;

static inline sds db_entry_key(const db_entry *e) { return (sds)(e->buf + e->key_off); }
static inline robj *db_entry_val(const db_entry *e) { return e->val; }
static inline bool db_entry_has_expire_slot(const db_entry *e) { return e->flags & DB_ENTRY_HAS_EXPIRE; }
/* The expire time in unix ms, -1 when the key has none. */
static inline long long db_entry_expire(const db_entry *e) {
    if (!(e->flags & DB_ENTRY_HAS_EXPIRE)) return -1;
    int64_t when;
    memcpy(&when, e->buf, sizeof(when));
    return when;
}
/* Only for an entry with an expire slot; -1 marks "no TTL" there. */
static inline void db_entry_set_expire(db_entry *e, long long when) {
    int64_t w = when;
    memcpy(e->buf, &w, sizeof(w));
}

/* A new entry for key (copied) and val (its reference taken); with_expire
 * reserves the expire slot and stores when in it. */
db_entry *db_entry_new(const char *key, size_t len, robj *val, bool with_expire, long long when);
/* A copy of e with an expire slot (set to when); e itself is untouched:
 * the caller swaps the table slots, then frees e with zfree. */
db_entry *db_entry_with_expire(const db_entry *e, long long when);
/* Bytes of the entry itself (MEMORY USAGE adds the value's). */
size_t db_entry_mem(const db_entry *e);

#endif
