/* crc16.c: CRC-16/XMODEM with a 256-entry table, and the cluster key slot
 * (see crc16.h).  The table is derived from the polynomial at first use
 * rather than written out: 256 numbers typed by hand are a place for a
 * silent typo, and the unit test checks the standard check value. */
#include "crc16.h"

#include <stdbool.h>
#include <string.h>

static uint16_t table[256];
static bool table_ready;

static void build_table(void) {
    for (unsigned i = 0; i < 256; i++) {
        uint16_t v = (uint16_t)(i << 8);
        for (int bit = 0; bit < 8; bit++) v = (uint16_t)((v & 0x8000) ? (v << 1) ^ 0x1021 : v << 1);
        table[i] = v;
    }
    table_ready = true;
}

uint16_t crc16(const char *buf, size_t len) {
    if (!table_ready) build_table();
    uint16_t crc = 0;
    const unsigned char *p = (const unsigned char *)buf;
    for (size_t i = 0; i < len; i++) crc = (uint16_t)((crc << 8) ^ table[((crc >> 8) ^ p[i]) & 0xff]);
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
