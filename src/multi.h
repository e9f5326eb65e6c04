/* multi.h: transactions (MULTI/EXEC/DISCARD) and optimistic locking (WATCH).
 *
 * A client in MULTI has its commands queued instead of run; EXEC runs them
 * back to back, so no other client's command lands in between.  WATCHed
 * keys are registered server-wide; any change to one (a write, an expiry, a
 * flush, SWAPDB) marks every client watching it, and their EXEC then
 * returns a null reply without running anything.  The dispatcher
 * (dispatch.c) asks multi_should_queue() before running a command. */
#ifndef RL_MULTI_H
#define RL_MULTI_H

#include <stdbool.h>
#include <stdint.h>

#include "conn.h"

typedef struct command command_t;

void multi_init(server_t *srv);
void multi_free(server_t *srv);
/* True if c is in MULTI and cmd must be queued rather than run. */
bool multi_should_queue(const client_t *c, const command_t *cmd);
/* Queue cmd (replies +QUEUED); flags: the CMD_* it is checked with
 * (a script's declared ones), which EXEC's checks add up. */
void multi_queue(client_t *c, command_t *cmd, uint32_t flags);
/* A command was rejected while queueing: EXEC will abort. */
void multi_flag_error(client_t *c);
/* The flags EXEC (whose own are exec_flags) is checked with: those of the
 * commands it would run (write, may grow memory or replicate, allowed
 * when stale); CLIENT PAUSE WRITE holds it by them too. */
uint32_t multi_exec_flags(const client_t *c, uint32_t exec_flags);
/* EXEC refused before running (e.g. OOM): drop the transaction and reply
 * "-EXECABORT Transaction discarded because of: <err>". */
void multi_exec_abort(client_t *c, const char *err);
/* The i-th queued command of c's MULTI: false past the last one
 * (cluster.c routes EXEC by the keys of all of them). */
bool multi_queued_at(const client_t *c, int i, command_t **cmd, robj ***argv, int *argc);
/* Drop c's transaction without a reply (EXEC redirected elsewhere). */
void multi_discard(client_t *c);
/* Commands queued in c's MULTI, or -1 outside one (CLIENT LIST multi=). */
int multi_queued_count(const client_t *c);
/* Keys the client WATCHes (CLIENT LIST's watch=, Redis 7.4). */
int multi_watched_count(const client_t *c);
/* Distinct keys WATCHed by any client (INFO total_watched_keys). */
size_t multi_watched_keys(const server_t *srv);
/* Release a client's transaction and watches (disconnect, RESET). */
void multi_client_free(client_t *c);

/* Invalidation hooks for the keyspace. */
void multi_touch_key(server_t *srv, int dbid, const sds key);
/* Before database dbid is emptied, or swapped with other (-1: emptied). */
void multi_touch_db(server_t *srv, int dbid, int other);


#endif
