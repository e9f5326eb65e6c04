/* crc16.c: CRC-16/XMODEM, two bytes a step, and the cluster key slot (see
 * crc16.h).  Every command of a cluster node hashes its keys here, so the
 * loop matters: with the usual table T, two bytes b0 b1 turn the CRC
 * (h, l) into U[h ^ b0] ^ T[l ^ b1], where U[x] = (low byte of T[x]) << 8
 * ^ T[high byte of T[x]] (the CRC is linear in its input), which halves
 * the chain of dependent lookups.  The tables are derived from the
 * polynomial at first use rather than written out (512 numbers typed by
 * hand are a place for a silent typo); the unit test checks the standard
 * check value and Redis's slots. */
#include "crc16.h"

#include <stdbool.h>
#include <string.h>

static uint16_t table[256], table2[256]; /* T and U above */
static bool table_ready;

static void build_table(void) {
    for (unsigned i = 0; i < 256; i++) {
        uint16_t v = (uint16_t)(i << 8);
        for (int bit = 0; bit < 8; bit++) v = (uint16_t)((v & 0x8000) ? (v << 1) ^ 0x1021 : v << 1);
        table[i] = v;
    }
    for (unsigned i = 0; i < 256; i++) table2[i] = (uint16_t)(((table[i] & 0xff) << 8) ^ table[table[i] >> 8]);
    table_ready = true;
}

uint16_t crc16(const char *buf, size_t len) {
    if (!table_ready) build_table();
    uint16_t crc = 0;
    const unsigned char *p = (const unsigned char *)buf;
    for (; len >= 2; p += 2, len -= 2) crc = table2[(crc >> 8) ^ p[0]] ^ table[(crc & 0xff) ^ p[1]];
    if (len) crc = (uint16_t)((crc << 8) ^ table[(crc >> 8) ^ p[0]]);
    return crc;
}

unsigned crc16_key_slot(const char *key, size_t len) {
    const char *open = memchr(key, '{', len);
    if (open) {
        size_t start = (size_t)(open - key) + 1;
        const char *close = memchr(key + start, '}', len - start);
        /* "{}" (nothing between) hashes the whole key, as Redis does */
        if (close && close > key + start) return crc16(key + start, (size_t)(close - (key + start))) & (CRC16_SLOTS - 1);
    }
    return crc16(key, len) & (CRC16_SLOTS - 1);
}
