/* crc64.h: the 64-bit CRC that closes every RDB file (the "Jones" variant:
 * polynomial 0xad93d23594c935a9, bit-reflected input and output, initial
 * value 0, no final xor; check value of "123456789" is 0xe9c6d914c4b8d9ca).
 * Pure module: rio.c, rdb_load.c and the check tools call it. */
#ifndef RL_CRC64_H
#define RL_CRC64_H

#include <stddef.h>
#include <stdint.h>

/* Continue crc over len bytes at p (start with crc = 0). */
uint64_t crc64_update(uint64_t crc, const void *p, size_t len);

#endif
