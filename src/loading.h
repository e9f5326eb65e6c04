/* loading.h: a load that clients wait for while it runs, as Redis 7.0
 * serves them during one: the RDB or AOF loaded at start-up (persist.c),
 * the RDB of a replica's full sync from disk (repl_sync_file.c) or from
 * the socket (repl_load.c).
 *
 * The loader reports the bytes it has read (loading_advance); every
 * loading-process-events-interval-bytes of them the other clients are
 * served (conn_serve_while_busy): dispatch.c answers what lacks Redis's
 * "loading" flag with -LOADING (loading_refusal), so no command that
 * touches the keyspace runs inside the load; INFO persistence shows
 * loading:1 and the loading_* fields (loading_info).  Loads that run
 * inside a command (DEBUG RELOAD, DEBUG LOADAOF) serve nobody. */
#ifndef RL_LOADING_H
#define RL_LOADING_H

#include <stdbool.h>
#include <stdint.h>

#include "server.h"

#define LOADING_ERR "LOADING Redis is loading the dataset in memory"

/* A load of total bytes (0: unknown) begins; async: repl-diskless-load
 * swapdb of our own history, where reads see the old data and only
 * "no-async-loading" commands are refused.  keepalive (or NULL) is called
 * about once a second while the clients are served (a replica's newline
 * to its master, which then knows it alive). */
typedef void loading_keepalive_fn(server_t *srv);
void loading_begin(server_t *srv, bool async, long long total, loading_keepalive_fn *keepalive);
void loading_end(server_t *srv);
static inline bool loading_active(const server_t *srv) { return srv->load.active; }
static inline bool loading_async(const server_t *srv) { return srv->load.active && srv->load.async; }
/* n more bytes were read: serves the clients when an interval is passed.
 * false: a SHUTDOWN came meanwhile, the loader should stop. */
bool loading_advance(server_t *srv, long long n);
/* Serve the clients now (a loader waiting for its bytes). */
void loading_serve(server_t *srv);
/* A loader fed by a socket (whose reads are few when it is slow): serves
 * the clients if they waited LOADING_SERVE_MS; false as loading_advance. */
#define LOADING_SERVE_MS 100
bool loading_poll(server_t *srv);
/* The error for a command with these flags from c meanwhile, or NULL. */
const char *loading_refusal(const client_t *c, uint32_t flags);
/* INFO persistence: the loading_* fields while a load runs (s may realloc). */
sds loading_info(const server_t *srv, sds s);

#endif
