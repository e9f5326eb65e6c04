/* t_hash.h: access to hash values for other modules: SORT's "key->field"
 * patterns (sort.c), RDB and AOF (rdb_*.c, aof_encode.c), DEBUG DIGEST,
 * and the field TTL commands and active field expiry (hash_ttl.c).
 * Defined in t_hash.c, which owns the hash encodings; callers never look
 * inside them.
 *
 * Field TTLs (Redis 7.4's hash field expiry) are absolute Unix times in
 * ms, 1 .. HASH_TTL_MAX; HASH_TTL_NONE (0) is "no TTL", the value a
 * listpackex hash stores for such a field. */
#ifndef RL_T_HASH_H
#define RL_T_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "object.h"
#include "server.h"

#define HASH_TTL_NONE 0ULL
#define HASH_TTL_MAX ((1ULL << 48) - 1) /* Redis 7.4's EB_EXPIRE_TIME_MAX */

/* The value of field f in hash h, or NULL when absent or expired (no
 * deletion: SORT's lookups); an integer value is formatted into buf
 * (LP_INTBUF_SIZE bytes). */
const char *hash_type_get(robj *h, const char *f, size_t flen, size_t *vlen, char *buf);

/* The hashtable encoding for RDB loading: an empty hash presized for
 * expected fields (with_ttls: ready for field TTLs); adding a pair
 * (copied; false if the field exists) with its TTL (HASH_TTL_NONE: none). */
robj *hash_type_create_ht(size_t expected, bool with_ttls);
bool hash_type_ht_add(robj *h, const char *f, size_t flen, const char *v, size_t vlen, uint64_t ttl);
/* Every pair of a hash of any encoding with its TTL (HASH_TTL_NONE: none),
 * expired fields included (RDB, AOF rewrite, DEBUG DIGEST). */
typedef void hash_pair_fn(void *arg, const char *f, size_t flen, const char *v, size_t vlen, uint64_t ttl);
void hash_type_foreach(robj *h, hash_pair_fn *fn, void *arg);
unsigned long hash_type_len(const robj *h);
/* A listpackex hash adopted from an RDB blob of field, value, TTL triplets
 * (takes lp); converted to a hashtable when over the listpack limits. */
robj *hash_type_from_lpex(server_t *srv, unsigned char *lp);
/* RDB types 22 and 24: an empty listpackex hash, and adding a field with
 * its TTL in TTL order (false when the field exists), converted to a
 * hashtable past the listpack limits. */
robj *hash_type_create_lpex(void);
bool hash_type_add_loaded(server_t *srv, robj *h, const char *f, size_t flen, const char *v, size_t vlen,
                          uint64_t ttl);
/* The listpack of a listpack or listpackex hash (RDB save). */
unsigned char *hash_type_lp(robj *h);

/* ------------------------------------------------ field TTLs (hash_ttl.c) */

/* Whether h may hold fields with a TTL (listpackex, or a hashtable made
 * ready for them); the exact count of such fields of a hashtable. */
bool hash_has_field_ttl(const robj *h);
/* The soonest field TTL of h, or HASH_TTL_NONE; exact when `exact`, else
 * possibly earlier than any field's (a hashtable's cheap lower bound). */
uint64_t hash_min_ttl(robj *h, bool exact);
/* Field f's TTL in *ttl; false when the field does not exist. */
bool hash_field_ttl(robj *h, const char *f, size_t flen, uint64_t *ttl);
/* Give field f the TTL ttl (HASH_TTL_NONE removes it), making h ready for
 * TTLs first; false when the field does not exist. */
bool hash_field_set_ttl(robj *h, const char *f, size_t flen, uint64_t ttl);
/* Delete field f; true when it existed. */
bool hash_field_delete(robj *h, const char *f, size_t flen);

/* HSET's work without its reply: set npairs field/value pairs from fv
 * under key (created when missing, which the caller checked is a hash or
 * absent), with the hset event; returns the hash. */
robj *hash_type_set_pairs(client_t *c, robj *key, robj **fv, int npairs);

/* A hash field read by a command that found it past its TTL (lazy
 * expiry, hash_field_live): kept (a replica, a load, a pause, or
 * HASH_LAZY_KEEP), deleted, or deleted with the hash, whose key is gone. */
typedef enum { HASH_FIELD_LIVE,
               HASH_FIELD_EXPIRED,
               HASH_FIELD_HASH_GONE } hash_field_state_t;
#define HASH_LAZY_QUIET 1 /* no hexpired/del events: the caller sends them once */
/* Field expiry as Redis 7.4 does it: the field's HDEL to the AOF and the
 * replicas, expired_subkeys, the hexpired event, and when it was the last
 * one the key deleted with a del event. */
bool hash_expire_field(db_t *db, robj *key, robj *h, const char *f, size_t flen, bool notify); /* true: key gone */
/* Delete the fields of h whose TTL is at or before now, at most max of
 * them, each as hash_expire_field does without events; returns how many.
 * A hashtable is walked a slice at a time: *more says whether fields may
 * remain to check (call again). */
size_t hash_expire_due(db_t *db, robj *key, robj *h, long long now, size_t max, bool *more);

#endif
