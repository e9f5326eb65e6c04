/* crc64.c: table-driven CRC-64/Jones (see crc64.h).
 *
 * Reflected form: the polynomial is bit-reversed (0x95ac9329ac4bc9b5) and
 * the register shifts right.  Eight tables process eight input bytes per
 * step ("slicing by 8"): table k maps a byte to the CRC contribution it has
 * when k more zero bytes follow, so the eight lookups of one 64-bit word
 * combine with XOR.  Byte-at-a-time handles the unaligned head and the tail.
 * The tables are built on first use; building them twice from two threads
 * is harmless (both write the same values), so no lock is taken. */
#include "crc64.h"

#include <stdbool.h>
#include <string.h>

#define CRC64_JONES_REFLECTED 0x95ac9329ac4bc9b5ULL

static uint64_t crc_table[8][256];
static volatile bool crc_table_ready;

static void crc64_build_table(void) {
    for (unsigned b = 0; b < 256; b++) {
        uint64_t r = b;
        for (int bit = 0; bit < 8; bit++) r = (r & 1) ? (r >> 1) ^ CRC64_JONES_REFLECTED : r >> 1;
        crc_table[0][b] = r;
    }
    for (unsigned b = 0; b < 256; b++)
        for (int k = 1; k < 8; k++)
            crc_table[k][b] = crc_table[0][crc_table[k - 1][b] & 0xff] ^ (crc_table[k - 1][b] >> 8);
    crc_table_ready = true;
}

uint64_t crc64_update(uint64_t crc, const void *p, size_t len) {
    if (!crc_table_ready) crc64_build_table();
    const unsigned char *s = p;
    while (len && ((uintptr_t)s & 7)) {
        crc = crc_table[0][(crc ^ *s++) & 0xff] ^ (crc >> 8);
        len--;
    }
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        w = __builtin_bswap64(w);
#endif
        crc ^= w;
        crc = crc_table[7][crc & 0xff] ^ crc_table[6][(crc >> 8) & 0xff] ^ crc_table[5][(crc >> 16) & 0xff] ^
              crc_table[4][(crc >> 24) & 0xff] ^ crc_table[3][(crc >> 32) & 0xff] ^
              crc_table[2][(crc >> 40) & 0xff] ^ crc_table[1][(crc >> 48) & 0xff] ^ crc_table[0][crc >> 56];
        s += 8;
        len -= 8;
    }
    while (len--) crc = crc_table[0][(crc ^ *s++) & 0xff] ^ (crc >> 8);
    return crc;
}
