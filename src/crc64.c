/* crc64.c: table-driven CRC-64/Jones (see crc64.h).
 *
 * Reflected form: the polynomial is bit-reversed (0x95ac9329ac4bc9b5) and
 * the register shifts right, one table lookup per input byte.  The table
 * is built on first use; building it twice from two threads is harmless
 * (both write the same values), so no lock is taken. */
#include "crc64.h"

#include <stdbool.h>

#define CRC64_JONES_REFLECTED 0x95ac9329ac4bc9b5ULL

static uint64_t crc_table[256];
static volatile bool crc_table_ready;

static void crc64_build_table(void) {
    for (unsigned b = 0; b < 256; b++) {
        uint64_t r = b;
        for (int bit = 0; bit < 8; bit++) r = (r & 1) ? (r >> 1) ^ CRC64_JONES_REFLECTED : r >> 1;
        crc_table[b] = r;
    }
    crc_table_ready = true;
}

uint64_t crc64_update(uint64_t crc, const void *p, size_t len) {
    if (!crc_table_ready) crc64_build_table();
    const unsigned char *s = p;
    for (size_t i = 0; i < len; i++) crc = crc_table[(crc ^ s[i]) & 0xff] ^ (crc >> 8);
    return crc;
}
