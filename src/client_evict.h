/* client_evict.h: maxmemory-clients, Redis 7.0's client eviction (see
 * client_evict.c). */
#ifndef RL_CLIENT_EVICT_H
#define RL_CLIENT_EVICT_H

#include "conn.h"

/* The limit in bytes, 0 when there is none. */
size_t client_evict_limit(const server_t *srv);
/* While the clients that may be evicted hold more than the limit, close
 * the largest (asynchronously: safe from any caller).  After each round
 * of replies is written (so a change of the limit applies at once too),
 * and from the cron. */
void client_evict_run(server_t *srv);

#endif
