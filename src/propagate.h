/* propagate.h: the one propagation point.  Every write that must outlive
 * the command that made it (a client's write, a script's effects, an
 * expiry or eviction as DEL) is turned into its effect once, here, and the
 * same bytes go to the AOF (aof.c) and to the replication stream
 * (repl_master.c), in the same order.
 *
 * persist.c calls propagate_command after a write command; keyspace.c and
 * evict.c call propagate_del; dispatch.c (each client command), blocking.c
 * (each served blocked client), script.c and EXEC (through persist.c) wrap
 * their effects in propagate_unit_begin/end so that more than one command
 * is logged inside MULTI/EXEC, as Redis 7.0 does. */
#ifndef RL_PROPAGATE_H
#define RL_PROPAGATE_H

#include <stdbool.h>

#include "server.h"

void propagate_init(server_t *srv);
void propagate_free(server_t *srv);
/* Whether anything consumes the stream now (AOF on, or a replication
 * backlog), and we are not loading: callers skip building argv otherwise. */
bool propagate_wanted(const server_t *srv);
/* argv ran on db dbid and changed it: log its effect (borrows argv). */
void propagate_command(server_t *srv, int dbid, robj **argv, int argc);
/* A key deleted by the server itself (expiry, eviction): DEL, or UNLINK
 * when it was freed lazily, as Redis propagates it. */
void propagate_del(server_t *srv, int dbid, robj *key, bool lazy);
/* To the replication stream only, never the AOF (PUBLISH, as Redis does). */
void propagate_to_replicas(server_t *srv, int dbid, robj **argv, int argc);
/* Units nest; the outermost end emits what was collected.  targets says
 * where the commands collected from now on go (redis.set_repl): the AOF,
 * the replicas, both (the default at each unit's start) or neither. */
#define PROPAGATE_AOF 1
#define PROPAGATE_REPL 2
#define PROPAGATE_ALL (PROPAGATE_AOF | PROPAGATE_REPL)
void propagate_unit_begin(server_t *srv);
void propagate_unit_targets(server_t *srv, int targets);
void propagate_unit_end(server_t *srv);
/* propagate_unit_end, but never wrapped when may_wrap is false: RANDOMKEY
 * and SCAN log the expired keys they met as separate DELs, as Redis does
 * for commands that touch arbitrary keys. */
void propagate_unit_end_as(server_t *srv, bool may_wrap);

#endif
