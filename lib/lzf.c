/* lzf.c: LZF compressor and decompressor (see lzf.h for the format).
 *
 * Compression: a table of up to 8192 slots (about two per input byte, so
 * short strings clear little of it) maps a hash of the next 3 input bytes to
 * the last position they were seen; a hit within 8191 bytes that really
 * matches becomes a back-reference (3..264 bytes), anything else is copied
 * into the current literal run (at most 32 bytes, whose control byte is
 * reserved first and filled in when the run closes).  Decompression checks
 * every read and write against the buffer bounds, since its input comes
 * from files that may be corrupt. */
#include "lzf.h"

#include <stdint.h>
#include <string.h>

#define LZF_HASH_BITS 13
#define LZF_MAX_OFF (1u << 13) /* distances 1..8192 (stored minus one) */
#define LZF_MAX_REF (264u)     /* 2 + 7 + 255 */
#define LZF_MAX_LIT 32u

static inline uint32_t lzf_hash(const unsigned char *p, unsigned bits) {
    uint32_t v = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
    return (v * 2654435761u) >> (32 - bits);
}

size_t lzf_compress(const void *in, size_t in_len, void *out, size_t out_len) {
    const unsigned char *ip = in;
    unsigned char *op = out;
    uint32_t table[1u << LZF_HASH_BITS]; /* position + 1; 0 = empty */
    /* About two slots per input byte: most strings are short, and clearing
     * the whole 32 KB table for each was a sixth of an RDB save. */
    unsigned bits = 6;
    while (bits < LZF_HASH_BITS && ((size_t)1 << bits) < 2 * in_len) bits++;
    memset(table, 0, sizeof(uint32_t) << bits);
    size_t i = 0, o = 0, lit = 0;
    if (in_len == 0 || out_len < 2) return 0;
    o++; /* control byte of the first literal run */
    while (i < in_len) {
        size_t ref = 0; /* the last two bytes can only be literals */
        if (i + 2 < in_len) {
            uint32_t h = lzf_hash(ip + i, bits);
            ref = table[h];
            table[h] = (uint32_t)(i + 1);
        }
        if (ref && i - (ref - 1) <= LZF_MAX_OFF && !memcmp(ip + ref - 1, ip + i, 3)) {
            size_t r = ref - 1, off = i - r - 1, len = 3;
            size_t max = in_len - i < LZF_MAX_REF ? in_len - i : LZF_MAX_REF;
            while (len < max && ip[r + len] == ip[i + len]) len++;
            if (lit) op[o - lit - 1] = (unsigned char)(lit - 1);
            else o--; /* drop the unused control byte */
            if (o + 4 > out_len) return 0;
            size_t l = len - 2;
            if (l < 7) {
                op[o++] = (unsigned char)((off >> 8) + (l << 5));
            } else {
                op[o++] = (unsigned char)((off >> 8) + (7u << 5));
                op[o++] = (unsigned char)(l - 7);
            }
            op[o++] = (unsigned char)(off & 0xff);
            /* Remember a couple of the positions skipped over. */
            for (size_t k = i + 1; k < i + len && k + 2 < in_len && k < i + 3; k++)
                table[lzf_hash(ip + k, bits)] = (uint32_t)(k + 1);
            i += len;
            lit = 0;
            o++; /* control byte of the next literal run */
            continue;
        }
        if (o >= out_len) return 0;
        op[o++] = ip[i++];
        if (++lit == LZF_MAX_LIT) {
            op[o - lit - 1] = LZF_MAX_LIT - 1;
            lit = 0;
            o++;
        }
    }
    if (lit) op[o - lit - 1] = (unsigned char)(lit - 1);
    else o--;
    return o > out_len ? 0 : o;
}

size_t lzf_decompress(const void *in, size_t in_len, void *out, size_t out_len) {
    const unsigned char *ip = in;
    unsigned char *op = out;
    size_t i = 0, o = 0;
    while (i < in_len) {
        unsigned ctrl = ip[i++];
        if (ctrl < 32) {
            size_t n = ctrl + 1;
            if (i + n > in_len || o + n > out_len) return 0;
            memcpy(op + o, ip + i, n);
            i += n;
            o += n;
            continue;
        }
        size_t len = ctrl >> 5;
        if (len == 7) {
            if (i >= in_len) return 0;
            len += ip[i++];
        }
        if (i >= in_len) return 0;
        size_t back = ((size_t)(ctrl & 0x1f) << 8) + ip[i++] + 1;
        len += 2;
        if (back > o || o + len > out_len) return 0;
        /* Byte by byte: the source may overlap the bytes being written. */
        for (size_t k = 0; k < len; k++, o++) op[o] = op[o - back];
    }
    return o;
}
