/* sha1.c: SHA-1 (see sha1.h).
 *
 * Straight from the standard: 64-byte blocks, an 80-word schedule computed
 * in a 16-word ring, four rounds of 20 steps with their own function and
 * constant.  Big-endian words in and out. */
#include "sha1.h"

#include <string.h>

static uint32_t rol(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

static uint32_t load_be32(const unsigned char *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

static void compress(uint32_t h[5], const unsigned char *blk) {
    uint32_t w[16];
    for (int i = 0; i < 16; i++) w[i] = load_be32(blk + 4 * i);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int t = 0; t < 80; t++) {
        if (t >= 16) {
            uint32_t x = w[(t + 13) & 15] ^ w[(t + 8) & 15] ^ w[(t + 2) & 15] ^ w[t & 15];
            w[t & 15] = rol(x, 1);
        }
        uint32_t f, k;
        if (t < 20) {
            f = (b & c) | (~b & d);
            k = 0x5a827999u;
        } else if (t < 40) {
            f = b ^ c ^ d;
            k = 0x6ed9eba1u;
        } else if (t < 60) {
            f = (b & c) | (b & d) | (c & d);
            k = 0x8f1bbcdcu;
        } else {
            f = b ^ c ^ d;
            k = 0xca62c1d6u;
        }
        uint32_t tmp = rol(a, 5) + f + e + k + w[t & 15];
        e = d;
        d = c;
        c = rol(b, 30);
        b = a;
        a = tmp;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
}

void sha1_init(sha1_ctx *c) {
    c->h[0] = 0x67452301u;
    c->h[1] = 0xefcdab89u;
    c->h[2] = 0x98badcfeu;
    c->h[3] = 0x10325476u;
    c->h[4] = 0xc3d2e1f0u;
    c->total = 0;
    c->used = 0;
}

void sha1_update(sha1_ctx *c, const void *data, size_t len) {
    const unsigned char *p = data;
    c->total += len;
    if (c->used) {
        size_t n = 64 - c->used;
        if (n > len) n = len;
        memcpy(c->block + c->used, p, n);
        c->used += n;
        p += n;
        len -= n;
        if (c->used < 64) return;
        compress(c->h, c->block);
        c->used = 0;
    }
    for (; len >= 64; p += 64, len -= 64) compress(c->h, p);
    memcpy(c->block, p, len);
    c->used = len;
}

void sha1_final(sha1_ctx *c, unsigned char out[20]) {
    uint64_t bits = c->total * 8;
    /* Padding: 0x80, zeros up to 56 mod 64, then the bit length. */
    c->block[c->used++] = 0x80;
    if (c->used > 56) {
        memset(c->block + c->used, 0, 64 - c->used);
        compress(c->h, c->block);
        c->used = 0;
    }
    memset(c->block + c->used, 0, 56 - c->used);
    for (int i = 0; i < 8; i++) c->block[56 + i] = (unsigned char)(bits >> (56 - 8 * i));
    compress(c->h, c->block);
    for (int i = 0; i < 5; i++) {
        out[4 * i] = (unsigned char)(c->h[i] >> 24);
        out[4 * i + 1] = (unsigned char)(c->h[i] >> 16);
        out[4 * i + 2] = (unsigned char)(c->h[i] >> 8);
        out[4 * i + 3] = (unsigned char)c->h[i];
    }
}

void sha1_hex(const void *p, size_t len, char out[41]) {
    static const char digits[] = "0123456789abcdef";
    sha1_ctx c;
    unsigned char d[20];
    sha1_init(&c);
    sha1_update(&c, p, len);
    sha1_final(&c, d);
    for (int i = 0; i < 20; i++) {
        out[2 * i] = digits[d[i] >> 4];
        out[2 * i + 1] = digits[d[i] & 15];
    }
    out[40] = '\0';
}
