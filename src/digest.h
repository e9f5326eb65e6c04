/* digest.h: DEBUG DIGEST and DIGEST-VALUE, the SHA1 fingerprint of the
 * data set and of single values, computed the way Redis 7.0 computes them
 * so that a digest taken here equals one taken on redis-server holding the
 * same data (Redis's test suite compares masters with replicas by it, and
 * our differential tests compare us with Redis by it).
 *
 * Unordered collections (keys, set members, hash fields, zset members)
 * are xor-ed together, ordered ones (list elements, stream entries) are
 * chained, so the digest does not depend on encodings or table order. */
#ifndef RL_DIGEST_H
#define RL_DIGEST_H

#include "server.h"

#define DIGEST_LEN 20

/* The whole data set: every database's keys, values and whether each has
 * a TTL.  All zeroes when every database is empty. */
void digest_dataset(server_t *srv, unsigned char out[DIGEST_LEN]);
/* One value (xor-ed into out, which the caller zeroes), with its TTL's
 * presence (expire_ms >= 0). */
void digest_value(robj *val, long long expire_ms, unsigned char out[DIGEST_LEN]);
/* out as 40 lower-case hex digits and a NUL. */
void digest_hex(const unsigned char d[DIGEST_LEN], char out[2 * DIGEST_LEN + 1]);

#endif
