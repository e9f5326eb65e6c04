/* tracking.h: client-side caching (CLIENT TRACKING) as Redis 7.0 does it.
 *
 * A tracking client's reads are remembered in one server-wide table (key
 * name -> ids of the clients that may cache it, whatever the db); a change
 * to a key (keyspace.c's modified-key hook: writes, expiry, eviction) sends
 * each of them one invalidation and forgets the entry.  BCAST clients
 * instead subscribe to key prefixes and get every changed key under them,
 * batched at before-sleep.  Invalidations are RESP3 pushes, or Pub/Sub
 * messages on __redis__:invalidate for a RESP2 client that redirects to a
 * subscribed connection.  dispatch.c, keyspace.c, conn.c and the flush
 * commands call in; this module never touches sockets or the keyspace. */
#ifndef RL_TRACKING_H
#define RL_TRACKING_H

#include <stdbool.h>

#include "conn.h"

typedef struct tracking tracking_t;

tracking_t *tracking_create(void);
void tracking_free(tracking_t *t);

/* After a command ran (dispatch.c): remember the keys a read-only command
 * read, for a tracking client not in BCAST mode. */
void tracking_after_command(client_t *c, const command_t *cmd);
/* Between commands (dispatch.c): CLIENT CACHING applies to the next
 * command only (or to a whole MULTI ... EXEC). */
void tracking_command_done(client_t *c, const command_t *cmd);
/* The outermost command finished: send the invalidations for keys the
 * current client changed itself, after its reply (Redis's order). */
void tracking_flush_pending(server_t *srv);
/* A key changed: invalidate it for the clients that cached it. */
void tracking_invalidate_key(server_t *srv, const sds key);
/* FLUSHDB/FLUSHALL: every tracking client gets a null invalidation and the
 * table is emptied. */
void tracking_on_flush(server_t *srv);
/* Before sleep: the BCAST messages. */
void tracking_before_sleep(server_t *srv);
/* Cron: keep the table within tracking-table-max-keys. */
void tracking_cron(server_t *srv);
/* A client leaves (disconnect or RESET): tracking off. */
void tracking_client_freed(client_t *c);

/* For CLIENT LIST/INFO: the flag letters ('t', 'B', 'R') appended to buf
 * (returns the new length) and the redirect id (-1 when off). */
int tracking_client_flag_letters(const client_t *c, char *buf, int len);
long long tracking_client_redirect(const client_t *c);
bool tracking_client_enabled(const client_t *c);

/* INFO figures. */
long long tracking_clients(const server_t *srv);
long long tracking_total_keys(const server_t *srv);
long long tracking_total_items(const server_t *srv);
long long tracking_total_prefixes(const server_t *srv);

/* CLIENT subcommand handlers (conn_cmds.c lists them). */
void cmd_client_tracking(client_t *c);
void cmd_client_caching(client_t *c);
void cmd_client_getredir(client_t *c);
void cmd_client_trackinginfo(client_t *c);

#endif
