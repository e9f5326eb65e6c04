/* blocking.h: clients blocked on keys (BLPOP, BLMOVE, BLMPOP, BZPOPMIN, ...).
 *
 * A blocking handler that finds nothing to pop calls blocking_block(): the
 * client keeps a copy of its request and waits on each key, first come first
 * served per key.  When a write makes a watched key exist (db_signal_modified
 * -> blocking_signal_key), the key is queued as ready; after the writing
 * command, blocking_handle_ready() re-runs each waiter's command restricted
 * to that key (blocking_ready_key), so the served client's reply has exactly
 * the shape of an immediate one.  Timeouts are one-shot event-loop timers.
 * Callers: t_list.c / t_zset.c (handlers), conn.c (hooks), lifecycle.c, info.c. */
#ifndef RL_BLOCKING_H
#define RL_BLOCKING_H

#include <stdbool.h>
#include <stddef.h>

#include "server.h"

/* What a timed-out client receives. */
enum { BLOCK_REPLY_NULL_ARRAY = 0,
       BLOCK_REPLY_NULL = 1 };

blocking_t *blocking_create(server_t *srv);
void blocking_free(blocking_t *b);

/* ---------------------------------------------------------- for handlers */
/* Parse a timeout in (float) seconds into an absolute unix time in ms
 * (0 = wait forever), replying Redis's error when it is invalid. */
bool blocking_timeout_or_reply(client_t *c, robj *arg, long long *when_ms);
/* False when the client must not block (inside MULTI/EXEC, scripts): the
 * handler then replies as if the timeout had expired at once. */
bool blocking_allowed(const client_t *c);
/* Block c on the keys c->argv[first .. first+nkeys) (the request is copied)
 * until one becomes a value of `type`, or until timeout_ms (absolute,
 * 0 = never).
 * During a re-run this only says "still nothing": the client stays blocked
 * with its original keys and deadline. */
void blocking_block(client_t *c, int first, int nkeys, int type, long long timeout_ms, int timeout_reply);
/* During a re-run of a blocked command: the key that became ready (the
 * handler must only look at it); NULL on a first run. */
robj *blocking_ready_key(const client_t *c);

/* ------------------------------------------------------------- hooks */
/* keyspace.c (db_signal_modified): key was written; cheap when nobody waits. */
void blocking_signal_key(db_t *db, robj *key);
/* keyspace_cmds.c (SWAPDB): db holds another data set now; every waited-on
 * key that exists in it is ready (the re-run checks its type), and stream
 * readers re-run on keys that are gone (XREADGROUP then fails). */
void blocking_signal_db(db_t *db);
/* keyspace.c (FLUSHDB/FLUSHALL): every waited-on key of db is gone; stream
 * readers re-run (XREADGROUP then fails as in Redis 7.0). */
void blocking_signal_db_flushed(db_t *db);
/* conn.c, after each command: serve the clients waiting on ready keys
 * (returns at once when no key is ready). */
void blocking_handle_ready(server_t *srv);
/* conn.c (conn_free): forget c, whether blocked or waiting to resume. */
void blocking_client_freed(client_t *c);
/* conn.c (conn_before_sleep): let clients unblocked since the last call
 * run the requests they pipelined behind the blocking command. */
void blocking_resume_unblocked(server_t *srv);
/* CLIENT UNBLOCK: answer a blocked c as its timeout would, or with the
 * UNBLOCKED error, and let it go on; false if c is not blocked. */
bool blocking_unblock_client(client_t *c, bool error);
/* Every client blocked on keys gets err and is closed once it is sent
 * (a master turning replica: its clients' pops would desync it from its
 * new master, as Redis 7.0 reasons). */
void blocking_unblock_all(server_t *srv, const char *err);
/* info.c: blocked_clients. */
size_t blocking_client_count(const server_t *srv);
/* INFO (Redis 7.2): keys with blocked clients, and those of them whose
 * clients are let go when the key is deleted (XREADGROUP). */
void blocking_key_counts(const server_t *srv, size_t *keys, size_t *on_nokey);
/* Cluster mode: for every blocked client, `moved` looks at the keys it
 * waits on; when it writes an error into err (its slot left this node,
 * the cluster went down), the client gets it as its reply and is
 * unblocked. */
typedef bool blocking_moved_fn(server_t *srv, robj **keys, int nkeys, char *err, size_t errlen);
void blocking_redirect(server_t *srv, blocking_moved_fn *moved);

#endif
