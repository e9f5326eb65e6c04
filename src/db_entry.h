/* db_entry.h: the keyspace's entry: one allocation per key holding the
 * value (embedded when it is an immutable string or an integer, otherwise
 * a pointer to it), the expire time (only for keys with a TTL) and the key
 * itself as an sds built in place.
 *
 * A database's keys table (keyspace.c) stores pointers to these entries,
 * so a key costs one allocation plus one table slot, with no dict entry,
 * separate key string or, for strings, separate value object; a TTL adds
 * only its 8 bytes here (there is no second table for expires).  Only
 * keyspace.c (and active defrag, which moves entries byte for byte)
 * creates, resizes and frees entries; other files read them through the
 * accessors below.  An entry may move (a TTL added to a key without one, a
 * new value that does not fit, active defrag): its one table slot is then
 * updated.  Nothing inside an entry points into it, so a move is a copy.
 *
 * Two layouts, told apart by bit 0 of the first byte:
 *
 *   pointer:  [robj *val | 1][flags][expire?][key sds]
 *   embedded: [flags][lru, 3 bytes][expire?][key sds][value sds | int64]
 *
 * A pointer is at least 8-aligned, so its low byte (little-endian) has the
 * tag bit 1 free; an embedded entry's flags byte has it 0.  The flags say
 * whether the expire is there, how long the key's sds header is and, when
 * embedded, what the value is (an sds of a given header length, or an
 * int64).  An embedded value has no robj: db_entry_val fills a caller's
 * robj (a "view", db_views.h) with type string, encoding EMBSTR or INT,
 * the stored LRU/LFU stamp, refcount OBJ_EMBEDDED_REFCOUNT and ptr at the
 * value inside the entry.  Such a value is immutable: commands that edit a
 * string in place first copy it to a RAW object (obj_unshare_string),
 * which is stored through the pointer layout.  Strings of other encodings
 * (RAW), shared integers (a pointer costs less than a copy) and other
 * types use the pointer layout.
 *
 * 16-byte key, 3-byte value, no TTL: 4 (flags, lru) + 18 (key, a one-byte
 * sds header: sds.h) + 5 (value) = 27 bytes, a 32-byte block.  100-byte
 * value: 4 + 18 + 104 = 126, a 128-byte block. */
#ifndef RL_DB_ENTRY_H
#define RL_DB_ENTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "object.h"
#include "sds.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "db_entry.h tells its layouts apart by the low byte of a pointer: little-endian only"
#endif

/* The flags byte (offset 0 embedded, 8 in the pointer layout). */
#define DB_ENTRY_POINTER_TAG 1  /* bit 0 of the first byte: pointer layout */
#define DB_ENTRY_HAS_EXPIRE 2   /* an int64 expire time (ms) starts buf */
#define DB_ENTRY_KEYHDR_SHIFT 2 /* 3 bits: the key sds header's size code */
#define DB_ENTRY_VAL_SHIFT 5    /* 3 bits, embedded only: the value's kind */
#define DB_ENTRY_VAL_INT 5      /* value kind: an int64 (else an sds header code) */
#define DB_ENTRY_EMB_HDR 4      /* flags + 24-bit lru */

typedef struct db_entry db_entry; /* either layout; see above */

typedef struct db_entry_ptr {
    uintptr_t tagged_val; /* robj * | 1 */
    uint8_t flags;        /* DB_ENTRY_* */
    char buf[];           /* [int64 expire] [sds header, key, NUL] */
} db_entry_ptr;

/* sds header sizes (sds.h: 1, 3, 5, 9 or 17 bytes) as 3-bit codes. */
static inline size_t db_entry_hdr_size(unsigned code) {
    static const uint8_t sizes[5] = {1, 3, 5, 9, 17};
    return sizes[code];
}

static inline bool db_entry_is_embedded(const db_entry *e) { return !(*(const uint8_t *)e & DB_ENTRY_POINTER_TAG); }
static inline uint8_t db_entry_flags(const db_entry *e) {
    return db_entry_is_embedded(e) ? *(const uint8_t *)e : ((const db_entry_ptr *)e)->flags;
}
static inline char *db_entry_buf(const db_entry *e) {
    return db_entry_is_embedded(e) ? (char *)e + DB_ENTRY_EMB_HDR : (char *)((const db_entry_ptr *)e)->buf;
}
static inline sds db_entry_key(const db_entry *e) {
    uint8_t f = db_entry_flags(e);
    size_t hdr = db_entry_hdr_size((f >> DB_ENTRY_KEYHDR_SHIFT) & 7);
    return (sds)(db_entry_buf(e) + ((f & DB_ENTRY_HAS_EXPIRE) ? sizeof(int64_t) : 0) + hdr);
}
/* The value: the stored robj in the pointer layout, else *view filled in
 * (see above) and returned.  view must outlive every use of the result. */
robj *db_entry_val(const db_entry *e, robj *view);
/* The LRU/LFU stamp (robj.lru) of the value, and setting it. */
unsigned db_entry_lru(const db_entry *e);
void db_entry_set_lru(db_entry *e, unsigned lru);
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
 * embeddable string is copied in (with its lru) and val released,
 * anything else is pointed to.  with_expire reserves the expire slot and
 * stores when. */
db_entry *db_entry_new(const char *key, size_t len, robj *val, bool with_expire, long long when);
/* A copy of e with an expire slot (set to when); e itself is untouched
 * and still owns its value: the caller swaps the table slots, then frees
 * e with db_entry_free_shell. */
db_entry *db_entry_with_expire(const db_entry *e, long long when);
/* Put val (reference taken, as db_entry_new) in e's place: returns e
 * itself when val could be stored in it (a pointer swapped, or an embedded
 * value overwritten by one of the same stored size), else a new entry with e's key
 * and expire (swap the table slots, then db_entry_free_shell(e)).  The
 * old value is not released: see db_entry_take_val.  val may be a view of
 * e's own value (it is copied before e is freed). */
db_entry *db_entry_set_val(db_entry *e, robj *val);
/* The value of an entry about to be freed, for the caller to release
 * (lazily or not); NULL when it is embedded and goes with the entry. */
robj *db_entry_take_val(db_entry *e);
/* Free the entry's memory only (its value was taken or moved). */
void db_entry_free_shell(db_entry *e);
/* Free the entry and its value now. */
void db_entry_free(db_entry *e);
/* Bytes of the entry itself (MEMORY USAGE adds the value's). */
size_t db_entry_mem(const db_entry *e);

#endif
