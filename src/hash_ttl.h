/* hash_ttl.h: hash field expiry's commands (hash_ttl_commands, registered
 * by commands_init) and its active cycle, which expire.c runs after the
 * keys' own.  See hash_ttl.c. */
#ifndef RL_HASH_TTL_H
#define RL_HASH_TTL_H

#include "server.h"

/* Expire due hash fields in every db until deadline_us (util_monotonic_us
 * clock) or until no hash has a due field; returns the fields expired. */
long long hash_ttl_active_expire(server_t *srv, long long deadline_us);

#endif
