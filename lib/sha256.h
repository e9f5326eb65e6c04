/* sha256.h: SHA-256 (FIPS 180-4) for ACL password hashes.
 *
 * ACL users keep only the SHA-256 of each password, as hex, so ACL LIST and
 * the aclfile never hold a cleartext password and '#<hash>' rules written
 * by Redis are accepted unchanged.  Pure library: no server headers, no
 * allocation. */
#ifndef RL_SHA256_H
#define RL_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_LEN 32
#define SHA256_HEX_LEN 64

typedef struct sha256_ctx {
    uint32_t h[8];           /* running hash */
    uint64_t total;          /* bytes hashed so far */
    unsigned char block[64]; /* pending partial block */
    size_t used;             /* bytes in block */
} sha256_ctx;

void sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *data, size_t len);
void sha256_final(sha256_ctx *c, unsigned char out[SHA256_DIGEST_LEN]);
/* Digest of p[0..len) as 64 lowercase hex digits plus a NUL. */
void sha256_hex(const void *p, size_t len, char out[SHA256_HEX_LEN + 1]);

#endif
