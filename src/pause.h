/* pause.h: CLIENT PAUSE / UNPAUSE (Redis 7.0 semantics).
 *
 * While a pause is in effect (until its deadline or CLIENT UNPAUSE), a
 * client's command that the pause covers (every command for ALL; commands
 * that may write or replicate, or an EXEC of such, for WRITE) is put aside
 * with its arguments and runs when the pause ends, in arrival order; the
 * client reads nothing more meanwhile.  Expiry does not delete keys during a
 * pause (a key past its TTL just looks missing), so the dataset holds still.
 * dispatch.c asks pause_postpone(); conn.c, lifecycle.c and keyspace.c call the
 * hooks; this module never touches sockets. */
#ifndef RL_PAUSE_H
#define RL_PAUSE_H

#include <stdbool.h>

#include "conn.h"

typedef struct pause pause_t;

pause_t *pause_create(void);
void pause_free(pause_t *p);

/* dispatch.c, before running or queueing a command whose flags (CMD_*:
 * EXEC's and scripts' as dispatch.c computes them) say whether a WRITE
 * pause covers it: true if c was put aside (the request now belongs to the
 * pause; the caller must not run it). */
bool pause_postpone(client_t *c, uint32_t flags);
/* True while a pause of any kind is in effect (keyspace.c, expire.c). */
bool pause_active(server_t *srv);
/* Cron and before-sleep: end an expired pause and run what waited. */
void pause_check_deadline(server_t *srv);
/* Hold writes (as CLIENT PAUSE WRITE with no deadline) for a holder:
 * repl_failover.c while FAILOVER hands the master role over, shutdown.c
 * while a shutdown waits for replicas, cluster_failover.c while a replica's
 * CLUSTER FAILOVER catches up with this master.  Off runs what waited unless
 * another holder or a CLIENT PAUSE still holds them. */
enum { PAUSE_HOLD_FAILOVER = 1,
       PAUSE_HOLD_SHUTDOWN = 2,
       PAUSE_HOLD_CLUSTER_MF = 4 };
void pause_hold_writes(server_t *srv, int holder, bool on);
/* info.c: clients whose request waits for the pause (Redis counts them
 * in blocked_clients). */
size_t pause_waiting_count(const server_t *srv);
/* conn.c (conn_free): drop c's postponed request. */
void pause_client_freed(client_t *c);

void cmd_client_pause(client_t *c);
void cmd_client_unpause(client_t *c);

#endif
