/* t_hash.h: read access to hash values for other commands (SORT's
 * "key->field" patterns, sort.c).  Defined in t_hash.c, which owns the hash
 * encodings; callers never look inside them. */
#ifndef RL_T_HASH_H
#define RL_T_HASH_H

#include <stddef.h>

#include "object.h"

/* The value of field f in hash h, or NULL when absent; an integer value is
 * formatted into buf (LP_INTBUF_SIZE bytes). */
const char *hash_type_get(robj *h, const char *f, size_t flen, size_t *vlen, char *buf);

#endif
