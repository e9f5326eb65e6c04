/* db_entry.h: the keyspace's entry: one allocation per key holding the
 * value (embedded when it is a short string or an integer, otherwise a
 * pointer to it), the expire time (only for keys with a TTL) and the key
 * itself as an sds built in place.
 *
 * A database's keys table (keyspace.c) stores pointers to these entries,
 * so a key costs one allocation plus one table slot, with no dict entry,
 * separate key string or, for short strings, separate value object; a TTL
 * adds only its 8 bytes here (there is no second table for expires).
 * Only keyspace.c (and active defrag, through db_entry_moved) creates,
 * resizes and frees entries; other files read them through the accessors
 * below.  An entry may move (a TTL added to a key without one, a new value
 * that does not fit, active defrag): its one table slot is then updated.
 *
 * Two layouts, told apart by bit 0 of the first word:
 *
 *   pointer:  [robj *val | 1][flags][expire?][key sds]
 *   embedded: [robj, type string][flags][expire?][key sds][value sds?]
 *
 * A pointer is at least 8-aligned, so the tag bit 1 is free; an embedded
 * entry starts with the robj's first byte, whose low 4 bits are the type,
 * OBJ_STRING = 0.  The embedded robj (encoding EMBSTR, ptr at the value
 * sds behind the key, or INT, ptr the integer) is the key's value itself:
 * lookups return its address, so every reader of string values works
 * unchanged.  Its refcount is OBJ_EMBEDDED_REFCOUNT: obj_incref/decref
 * leave it alone and it dies with its entry, so nothing may keep such a
 * value past the deletion or overwrite of its key (RENAME and MOVE build
 * the new key before deleting the old one).  Strings of other encodings
 * (RAW: mutable in place, Redis reports them "raw"), shared integers (a
 * pointer costs less than a copy) and other types use the pointer layout.
 *
 * 16-byte key, 3-byte value, no TTL: 16 (robj) + 1 (flags) + 18 (key, a
 * one-byte sds header: sds.h) + 5 (value) = 40 bytes, one allocation. */
#ifndef RL_DB_ENTRY_H
#define RL_DB_ENTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "object.h"
#include "sds.h"

#define DB_ENTRY_HAS_EXPIRE 1   /* an int64 expire time (ms) starts buf */
#define DB_ENTRY_KEYHDR_SHIFT 2 /* flags >> this: the key sds's header bytes */

typedef struct db_entry db_entry; /* either layout; see above */

typedef struct db_entry_ptr {
    uintptr_t tagged_val; /* robj * | 1 */
    uint8_t flags;        /* DB_ENTRY_* and the key header length */
    char buf[];           /* [int64 expire] [sds header, key, NUL] */
} db_entry_ptr;

typedef struct db_entry_emb {
    robj obj;      /* the value; refcount OBJ_EMBEDDED_REFCOUNT */
    uint8_t flags; /* as in db_entry_ptr */
    char buf[];    /* [int64 expire] [key sds] [value sds, EMBSTR only] */
} db_entry_emb;

static inline bool db_entry_is_embedded(const db_entry *e) {
    uintptr_t w;
    memcpy(&w, e, sizeof(w));
    return !(w & 1);
}
static inline uint8_t db_entry_flags(const db_entry *e) {
    return db_entry_is_embedded(e) ? ((const db_entry_emb *)e)->flags : ((const db_entry_ptr *)e)->flags;
}
static inline char *db_entry_buf(const db_entry *e) {
    return db_entry_is_embedded(e) ? (char *)((const db_entry_emb *)e)->buf : (char *)((const db_entry_ptr *)e)->buf;
}
static inline sds db_entry_key(const db_entry *e) {
    uint8_t f = db_entry_flags(e);
    return (sds)(db_entry_buf(e) + ((f & DB_ENTRY_HAS_EXPIRE) ? sizeof(int64_t) : 0) + (f >> DB_ENTRY_KEYHDR_SHIFT));
}
static inline robj *db_entry_val(const db_entry *e) {
    if (db_entry_is_embedded(e)) return (robj *)&((const db_entry_emb *)e)->obj;
    return (robj *)(((const db_entry_ptr *)e)->tagged_val & ~(uintptr_t)1);
}
static inline bool db_entry_has_expire_slot(const db_entry *e) { return db_entry_flags(e) & DB_ENTRY_HAS_EXPIRE; }
/* The expire time in unix ms, -1 when the key has none. */
static inline long long db_entry_expire(const db_entry *e) {
    if (!db_entry_has_expire_slot(e)) return -1;
    int64_t when;
    memcpy(&when, db_entry_buf(e), sizeof(when));
    return when;
}
/* Only for an entry with an expire slot; -1 marks "no TTL" there. */
static inline void db_entry_set_expire(db_entry *e, long long when) {
    int64_t w = when;
    memcpy(db_entry_buf(e), &w, sizeof(w));
}

/* A new entry for key (copied) and val, whose reference it takes: an
 * embeddable string is copied in and val released, anything else is
 * pointed to.  with_expire reserves the expire slot and stores when. */
db_entry *db_entry_new(const char *key, size_t len, robj *val, bool with_expire, long long when);
/* A copy of e with an expire slot (set to when); e itself is untouched
 * and still owns its value: the caller swaps the table slots, then frees
 * e with db_entry_free_shell. */
db_entry *db_entry_with_expire(const db_entry *e, long long when);
/* Put val (reference taken, as db_entry_new) in e's place: returns e
 * itself when val could be stored in it, else a new entry with e's key
 * and expire (swap the table slots, then db_entry_free_shell(e)).  The
 * old value is not released: see db_entry_take_val. */
db_entry *db_entry_set_val(db_entry *e, robj *val);
/* The value of an entry about to be freed, for the caller to release
 * (lazily or not); NULL when it is embedded and goes with the entry. */
robj *db_entry_take_val(db_entry *e);
/* Free the entry's memory only (its value was taken or moved). */
void db_entry_free_shell(db_entry *e);
/* Free the entry and its value now. */
void db_entry_free(db_entry *e);
/* After e was copied byte for byte to new_e (active defrag), fix what
 * points inside it.  old is only used as an address. */
void db_entry_moved(const void *old, db_entry *new_e);
/* Bytes of the entry itself (MEMORY USAGE adds the value's). */
size_t db_entry_mem(const db_entry *e);

#endif
