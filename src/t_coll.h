/* t_coll.h: small helpers shared by the hash, set and sorted-set commands
 * (t_hash.c, t_set.c, t_zset.c): *SCAN option parsing, replying with a
 * listpack entry, random numbers, and read access to sets for the zset
 * algebra.  The helpers are
 * defined in t_set.c; nothing outside the three type files uses them. */
#ifndef RL_T_COLL_H
#define RL_T_COLL_H

#include <stdbool.h>
#include <stddef.h>

#include "conn.h"

/* Parsed "<cursor> [MATCH pattern] [COUNT n]" of HSCAN/SSCAN/ZSCAN starting
 * at argv[2].  pat is NULL when absent or "*" (matches everything). */
typedef struct coll_scan_args {
    unsigned long cursor;
    long long count;
    const char *pat;
    size_t patlen;
} coll_scan_args_t;

bool coll_scan_parse_or_reply(client_t *c, coll_scan_args_t *a);
bool coll_scan_match(const coll_scan_args_t *a, const char *s, size_t len);


/* Uniform random integer in [0, n). */
unsigned long coll_random_below(unsigned long n);

/* Read access to sets for ZUNION/ZINTER/ZDIFF, which accept sets as
 * inputs (every member scored 1). */
typedef void coll_member_fn(void *arg, const char *s, size_t len);
void coll_set_foreach(robj *set, coll_member_fn *fn, void *arg);
bool coll_set_is_member(robj *set, const char *s, size_t len);
unsigned long coll_set_size(const robj *set);

/* A hash field's value (t_hash.c), for SORT's "key->field" patterns
 * (sort.c): NULL if absent; integers are formatted into buf
 * (LP_INTBUF_SIZE bytes).  SORT also reads sets through coll_set_foreach. */
const char *coll_hash_get(robj *h, const char *f, size_t flen, size_t *vlen, char *buf);

/* The SCAN cursor parser of keyspace_cmds.c (declared there, not in a header). */
bool scan_parse_cursor_or_reply(client_t *c, robj *o, unsigned long *cursor);

#endif
