/* expire.h: the active expiry cycle, run from the server cron. */
#ifndef RL_EXPIRE_H
#define RL_EXPIRE_H

#include "server.h"

void expire_active_cycle(server_t *srv);

#endif
