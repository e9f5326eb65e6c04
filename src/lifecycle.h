/* lifecycle.h: the server's life, as main() drives it: init (start order,
 * loading, listeners, cron), the event loop, shutdown and free.
 *
 * lifecycle.c is the top layer: only server_main.c includes this header. */
#ifndef RL_LIFECYCLE_H
#define RL_LIFECYCLE_H

#include <stdbool.h>

#include "server.h"

bool server_init(server_t *srv);
void server_run(server_t *srv);
void server_free(server_t *srv);

#endif
