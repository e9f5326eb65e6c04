/* evict.h: maxmemory enforcement and the access stamps it relies on.
 *
 * evict_perform() runs before every command that may grow memory
 * (CMD_DENYOOM, from commands.c).  Over maxmemory it deletes keys chosen by
 * maxmemory-policy until used_memory is back under the limit; when nothing
 * may be evicted (noeviction, or volatile-* with no key that has a TTL) the
 * command is refused with -OOM.  keyspace.c calls the stamp functions so
 * that robj.lru holds what the policy needs:
 *   LRU policies: the LRU clock (seconds, 24 bits) of the last access;
 *   LFU policies: 16-bit minutes of the last decay << 8 | 8-bit log counter. */
#ifndef RL_EVICT_H
#define RL_EVICT_H

#include <stdbool.h>

#include "server.h"

#define EVICT_POOL_SIZE 16
#define LFU_INIT_VAL 5 /* a new key's counter, so it is not evicted first */

typedef struct evict evict_t;

evict_t *evict_create(void);
void evict_free(evict_t *ev);

/* Make room under maxmemory: true if memory is under the limit (or there is
 * none), possibly after evicting keys; false when nothing more can be
 * evicted (or the policy is noeviction), so the caller refuses the write. */
bool evict_perform(server_t *srv);

bool evict_policy_is_lfu(int policy);
/* A key was read or written: update its stamp (lookup() calls this). */
void evict_touch(server_t *srv, robj *val);
/* val is stored under a new key: an LFU stamp starts at LFU_INIT_VAL. */
void evict_stamp_new(server_t *srv, robj *val);
/* val replaces old under the same key: LFU keeps the key's frequency. */
void evict_stamp_replace(server_t *srv, robj *val, const robj *old);
/* RESTORE ... FREQ/IDLETIME: set the stamp the policy uses (freq under an
 * LFU policy, idle seconds under the others; -1 = not given). */
void evict_stamp_restore(server_t *srv, robj *val, long long lfu_freq, long long lru_idle_s);
/* The LFU counter of val after the decay due since its last access, as
 * OBJECT FREQ reports it. */
unsigned evict_lfu_counter(server_t *srv, const robj *val);

#endif
