/* crc16.h: CRC-16/XMODEM (polynomial 0x1021, initial value 0, no
 * reflection) and Redis Cluster's hash slot of a key built on it.
 *
 * A key's slot is crc16 of the key modulo 16384, except that a key with a
 * hash tag (the bytes between the first '{' and the first '}' after it,
 * when there is at least one byte between them) hashes only the tag, so
 * that related keys ("{user1}.a", "{user1}.b") share a slot.  Pure
 * functions: no state, no server header. */
#ifndef RL_CRC16_H
#define RL_CRC16_H

#include <stddef.h>
#include <stdint.h>

#define CRC16_SLOTS 16384

uint16_t crc16(const char *buf, size_t len);
/* The cluster hash slot (0..16383) of the len bytes of key. */
unsigned crc16_key_slot(const char *key, size_t len);

#endif
