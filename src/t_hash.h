/* t_hash.h: read access to hash values for other commands (SORT's
 * "key->field" patterns, sort.c).  Defined in t_hash.c, which owns the hash
 * encodings; callers never look inside them. */
#ifndef RL_T_HASH_H
#define RL_T_HASH_H

#include <stdbool.h>
#include <stddef.h>

#include "object.h"

/* The value of field f in hash h, or NULL when absent; an integer value is
 * formatted into buf (LP_INTBUF_SIZE bytes). */
const char *hash_type_get(robj *h, const char *f, size_t flen, size_t *vlen, char *buf);

/* The hashtable encoding for RDB loading, saving and AOF rewrite: an empty
 * hash presized for expected fields; adding a pair (copied; false if the
 * field exists); every pair of a hashtable-encoded hash. */
robj *hash_type_create_ht(size_t expected);
bool hash_type_ht_add(robj *h, const char *f, size_t flen, const char *v, size_t vlen);
typedef void hash_pair_fn(void *arg, const char *f, size_t flen, const char *v, size_t vlen);
void hash_type_ht_foreach(robj *h, hash_pair_fn *fn, void *arg);

#endif
