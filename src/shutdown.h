/* shutdown.h: SHUTDOWN and the shutdown a signal asks for, as Redis 7.0
 * does them (shutdown-timeout, shutdown-on-sigterm / -sigint).
 *
 * lifecycle.c hands signals here (shutdown_begin with the configured
 * flags) and calls shutdown_cron each tick; the SHUTDOWN command is here.
 * The process exits when server_run's loop sees shutdown_asap, which
 * shutdown_begin or shutdown_cron set once the final persistence is done
 * (persist.c). */
#ifndef RL_SHUTDOWN_H
#define RL_SHUTDOWN_H

#include <stdbool.h>

#include "conn.h"

/* Shut down with SHUTDOWN_FLAG_* (config.h) flags.  A master whose
 * replicas have not acknowledged the whole stream first waits for them, up
 * to shutdown-timeout seconds, writes held (not with NOW); c, the SHUTDOWN
 * caller or NULL for a signal, waits with it and gets no reply.  true: the
 * server exits now; false: it waits, or it could not persist and FORCE
 * was not given (c then got the error, a signal's failure is logged). */
bool shutdown_begin(server_t *srv, int flags, client_t *c);
/* Each cron tick: end a wait once the replicas caught up or time is up. */
void shutdown_cron(server_t *srv);

void cmd_shutdown(client_t *c);

#endif
