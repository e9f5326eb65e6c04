/* sha1.h: SHA-1 (FIPS 180-4) for script names.
 *
 * EVAL names a script by the SHA-1 of its body, as Redis does, so
 * EVALSHA digests computed by clients match ours.  Pure library: no
 * server headers, no allocation.  Not for security uses. */
#ifndef RL_SHA1_H
#define RL_SHA1_H

#include <stddef.h>
#include <stdint.h>

typedef struct sha1_ctx {
    uint32_t h[5];           /* running hash */
    uint64_t total;          /* bytes hashed so far */
    unsigned char block[64]; /* pending partial block */
    size_t used;             /* bytes in block */
} sha1_ctx;

void sha1_init(sha1_ctx *c);
void sha1_update(sha1_ctx *c, const void *data, size_t len);
void sha1_final(sha1_ctx *c, unsigned char out[20]);
/* Digest of p[0..len) as 40 lowercase hex digits plus a NUL. */
void sha1_hex(const void *p, size_t len, char out[41]);

#endif
