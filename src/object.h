/* object.h: value objects (robj): a type, an encoding, an LRU/LFU stamp, a
 * reference count and a pointer to the encoded data.
 *
 * Strings are encoded as INT (the value itself in ptr), EMBSTR (robj and sds
 * in one immutable allocation: up to 44 bytes for any string, up to
 * OBJ_EMBED_MAX for one stored under a key, which is then copied into the
 * key's entry) or RAW (a separate sds, editable in place).  Collection
 * types register their free/usage callbacks with obj_register_type() so this
 * file does not depend on every encoding.  Shared objects (small integers)
 * are pinned with OBJ_SHARED_REFCOUNT and never freed. */
#ifndef RL_OBJECT_H
#define RL_OBJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sds.h"

/* 5 is Redis's module type (unused here); streams keep Redis's number 6. */
enum { OBJ_STRING = 0,
       OBJ_LIST = 1,
       OBJ_SET = 2,
       OBJ_ZSET = 3,
       OBJ_HASH = 4,
       OBJ_STREAM = 6,
       OBJ_TYPE_MAX = 7 };

/* Encoding numbers follow Redis's, so tools that print them agree. */
enum {
    OBJ_ENCODING_RAW = 0,
    OBJ_ENCODING_INT = 1,
    OBJ_ENCODING_HT = 2,
    OBJ_ENCODING_INTSET = 6,
    OBJ_ENCODING_SKIPLIST = 7,
    OBJ_ENCODING_EMBSTR = 8,
    OBJ_ENCODING_QUICKLIST = 9,
    OBJ_ENCODING_STREAM = 10,
    OBJ_ENCODING_LISTPACK = 11,
    OBJ_ENCODING_LISTPACK_EX = 12, /* a hash's field, value, TTL triplets (Redis 7.4) */
};

#define OBJ_SHARED_REFCOUNT INT32_MAX
/* A view of a string value living inside its keyspace entry (db_entry.h,
 * db_views.h): never freed through obj_decref, its bytes go when the entry
 * does and the view itself at the end of the command. */
#define OBJ_EMBEDDED_REFCOUNT (INT32_MAX - 1)
#define OBJ_SHARED_INTEGERS 10000
#define OBJ_EMBSTR_MAX 44 /* longer strings are reported "raw", as Redis does */
/* Strings a key stores (SET and friends, RDB load) are made EMBSTR, one
 * immutable allocation, up to this length; the keyspace then copies them
 * into the key's own entry (db_entry.h), saving the robj and the separate
 * block.  Longer ones stay RAW behind a pointer: copying them on every
 * store and move would cost more than the ~40 bytes it saves. */
#define OBJ_EMBED_MAX 4096
#define LRU_BITS 24
#define LRU_CLOCK_MAX ((1 << LRU_BITS) - 1)
#define LRU_CLOCK_RESOLUTION 1000 /* ms per LRU clock tick */

typedef struct robj {
    unsigned type : 4;
    unsigned encoding : 4;
    unsigned lru : LRU_BITS; /* LRU clock (s) or LFU: 16-bit minutes + 8-bit counter */
    int refcount;
    void *ptr;
} robj;

typedef struct obj_type_ops {
    void (*free_value)(robj *o);                  /* free o->ptr per encoding */
    size_t (*mem_usage)(robj *o, size_t samples); /* bytes of o->ptr's data */
    bool (*has_field_ttl)(const robj *o);         /* hashes: may a field carry a TTL (NULL: never) */
} obj_type_ops_t;

void obj_register_type(int type, const obj_type_ops_t *ops);

robj *obj_create(int type, void *ptr);              /* takes ptr */
robj *obj_create_string(const char *p, size_t len); /* embstr or raw */
robj *obj_create_raw_string(const char *p, size_t len);
robj *obj_create_embstr(const char *p, size_t len);
/* Reuse of a request's argument objects (conn.c, within a pipeline):
 * obj_embstr_size is the block an embstr of len bytes needs;
 * obj_reusable_embstr says how many bytes o's block surely has when o is
 * an embstr string nobody else holds (refcount 1, bytes in its own
 * block), else 0; obj_reuse_embstr rewrites such an o in place to hold
 * p[0..len), whose obj_embstr_size(len) must fit those bytes, as a fresh
 * obj_create_embstr would be. */
size_t obj_embstr_size(size_t len);
size_t obj_reusable_embstr(const robj *o);
robj *obj_reuse_embstr(robj *o, const char *p, size_t len);
/* A string value to store under a key: int, embstr up to OBJ_EMBED_MAX
 * bytes, raw above (RDB load, RESTORE). */
robj *obj_create_stored_string(const char *p, size_t len);
robj *obj_create_from_ll(long long v); /* may return a shared object */
robj *obj_create_from_sds(sds s);      /* takes s */
void obj_incref(robj *o);
void obj_decref(robj *o);
void obj_decref_void(void *o);

/* Compact a string value for storage: int if it is a canonical integer,
 * embstr up to OBJ_EMBED_MAX bytes, trimmed otherwise.  Returns the object to keep (maybe a
 * different one); the argument's reference is consumed. */
robj *obj_try_encoding(robj *o);

static inline bool obj_is_embedded(const robj *o) { return o->refcount == OBJ_EMBEDDED_REFCOUNT; }
static inline bool obj_is_sds_encoded(const robj *o) {
    return o->encoding == OBJ_ENCODING_RAW || o->encoding == OBJ_ENCODING_EMBSTR;
}
/* String view of a string object: sds as is, or INT printed into buf. */
const char *obj_string_view(const robj *o, char *buf, size_t bufsize, size_t *len);
size_t obj_string_len(const robj *o);
/* The object as a fresh sds (caller frees). */
sds obj_to_sds(const robj *o);
/* Ensure o->ptr is a raw sds that can be modified in place (APPEND,
 * SETRANGE): returns an unshared raw object, maybe a new one. */
robj *obj_unshare_string(robj *o, bool *replaced);

bool obj_get_ll(const robj *o, long long *out);
bool obj_get_double(const robj *o, double *out);
bool obj_get_long_double(const robj *o, long double *out);

const char *obj_type_name(int type);
const char *obj_encoding_name(int encoding);
/* What OBJECT ENCODING says of o: an embstr longer than OBJ_EMBSTR_MAX is
 * "raw", as Redis, which only makes embstr up to that length, says. */
const char *obj_encoding_name_of(const robj *o);
size_t obj_mem_usage(robj *o, size_t samples);
/* Whether o is a hash that may hold fields with a TTL (the keyspace keeps
 * such keys in the db's set for active field expiry). */
bool obj_has_field_ttl(const robj *o);

/* The LRU clock, maintained by the server cron. */
void obj_set_lru_clock(unsigned clock);
unsigned obj_lru_clock(void);
unsigned long long obj_idle_ms(const robj *o);

void obj_create_shared(void);
extern robj *shared_integers[OBJ_SHARED_INTEGERS];

#endif
