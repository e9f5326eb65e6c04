/* evict.h: maxmemory enforcement and the access stamps it relies on.
 *
 * evict_perform() runs before every command that may grow memory
 * (CMD_DENYOOM, from dispatch.c).  Over maxmemory it deletes keys chosen by
 * maxmemory-policy until used_memory is back under the limit, for as long
 * as maxmemory-eviction-tenacity allows, a timer going on between commands
 * after that; when nothing may be evicted (noeviction, or volatile-* with
 * no key that has a TTL) the command is refused with -OOM.  The stamps it reads (robj.lru) are
 * evict_stamp.h's. */
#ifndef RL_EVICT_H
#define RL_EVICT_H

#include <stdbool.h>

#include "evict_stamp.h"
#include "server.h"

#define EVICT_POOL_SIZE 16

typedef struct evict evict_t;

evict_t *evict_create(void);
void evict_free(evict_t *ev);

/* Make room under maxmemory: true if memory is under the limit (or there is
 * none), possibly after evicting keys; false when nothing more can be
 * evicted (or the policy is noeviction), so the caller refuses the write. */
bool evict_perform(server_t *srv);
/* The next slice of an eviction that ran out of its time (tenacity). */
void evict_before_sleep(server_t *srv);
/* INFO's total_eviction_exceeded_time and current_eviction_exceeded_time:
 * ms during which eviction had not got memory under maxmemory (all spells,
 * and the one going on). */
long long evict_exceeded_total_ms(const server_t *srv);
long long evict_exceeded_current_ms(const server_t *srv);
/* CONFIG RESETSTAT: the total back to 0; a spell still running counts
 * from now, as in Redis. */
void evict_reset_stats(server_t *srv);

#endif
