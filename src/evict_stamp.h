/* evict_stamp.h: the access stamp of every value (robj.lru), as the
 * maxmemory policies need it:
 *   LRU policies: the LRU clock (seconds, 24 bits) of the last access;
 *   LFU policies: 16-bit minutes of the last decay << 8 | 8-bit log counter.
 *
 * keyspace.c calls the stamp functions when it stores or looks up a value;
 * evict.c (the eviction loop, above the keyspace) reads them. */
#ifndef RL_EVICT_STAMP_H
#define RL_EVICT_STAMP_H

#include <stdbool.h>

#include "server.h"

#define LFU_INIT_VAL 5 /* a new key's counter, so it is not evicted first */

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
