/* evict.h: maxmemory enforcement.  Called before every command that may
 * grow memory (CMD_DENYOOM).  The eviction policies themselves belong to the
 * memory-pressure issue; until then only noeviction semantics exist: a write
 * over the limit is refused with -OOM. */
#ifndef RL_EVICT_H
#define RL_EVICT_H

#include "server.h"

/* RL_OK if memory is under maxmemory (or no limit), RL_ERR otherwise. */
int evict_perform(server_t *srv);

#endif
