/* dump.h: the DUMP payload (a value in RDB encoding + RDB version +
 * CRC-64, as Redis 7.0 makes it) and the DUMP/RESTORE commands.
 * keycopy.c duplicates values through it (COPY); the RESTORE fuzz target
 * (tests/fuzz/fuzz_restore.c) drives dump_payload_verify/_load. */
#ifndef RL_DUMP_H
#define RL_DUMP_H

#include <stdbool.h>
#include <stddef.h>

#include "server.h"

/* The payload of val (caller frees). */
sds dump_payload_create(server_t *srv, robj *val);
/* Version and checksum of a payload are right. */
bool dump_payload_verify(const unsigned char *p, size_t len);
/* The value of a verified payload as a new object, or NULL with err (256
 * bytes) saying why. */
robj *dump_payload_load(client_t *c, const unsigned char *p, size_t len, char *err);
/* A deep copy of val (COPY); NULL only if the value cannot be encoded. */
robj *dump_copy_value(server_t *srv, robj *val);

#endif
