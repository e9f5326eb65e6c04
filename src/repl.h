/* repl.h: replication as the rest of the server sees it (Redis 7.0's PSYNC2
 * protocol): the replication stream, the master side (replicas attached to
 * us), the replica side (our link to a master), WAIT, ROLE, INFO.
 *
 * The files: repl_backlog.c (the circular history of the stream),
 * repl_master.c (SYNC/PSYNC/REPLCONF, full and partial resync, feeding
 * replicas, WAIT, min-replicas), repl_replica.c (REPLICAOF, the handshake,
 * loading the RDB, applying the stream, ACKs), repl_info.c (ROLE, INFO
 * replication, memory figures).  Their shared state is repl_state.h.
 * Callers: server.c (init, cron, before-sleep, free), propagate.c (the
 * write stream), commands.c (write refusals), conn.c (client hooks),
 * keyspace.c/expire.c/evict.c (a replica neither expires nor evicts),
 * persist.c and repl_diskless.c (the RDB child finished), info.c. */
#ifndef RL_REPL_H
#define RL_REPL_H

#include <stdbool.h>
#include <stddef.h>

#include "commands.h"
#include "server.h"

void repl_init(server_t *srv); /* also applies `replicaof` from the config */
void repl_free(server_t *srv);
/* Closes a replica's link to its master, whose socket lives in the event
 * loop: server_free calls it before it frees the loop. */
void repl_close_link(server_t *srv);
/* Every cron tick (pings, ACKs, timeouts, reconnects run once a second). */
void repl_cron(server_t *srv);
/* Before the loop sleeps: GETACK for new WAITers, answer satisfied WAITs. */
void repl_before_sleep(server_t *srv);
/* WAITAOF after the AOF flush and from the cron (background fsyncs):
 * answer waiters whose local fsync came; a replica whose AOF fsynced more
 * since its last ACK sends one. */
void repl_after_aof_flush(server_t *srv);
/* The replication offset: the stream fed so far (with AOF on and no
 * stream, one per write: WAITAOF counts in it). */
long long repl_offset(const server_t *srv);
/* A cluster manual failover (cluster_failover.c) holds the stream still while
 * this master is paused: no PING and no GETACK fed to the replicas, so the
 * offset it told the replica stays the one to reach (Redis skips them
 * then too). */
void repl_hold_stream(server_t *srv, bool on);

/* ----------------------------------------------------- the write stream */
/* Whether writes must be fed to the stream (a backlog exists: some replica
 * attached once, or we are a replica passing the stream on). */
bool repl_stream_on(const server_t *srv);
/* propagate.c: one command in RESP (no SELECT) that changed database dbid.
 * A replica ignores this: it forwards its master's bytes instead. */
void repl_feed(server_t *srv, int dbid, const char *cmd, size_t len);

/* ---------------------------------------------------------- predicates */
bool repl_is_replica(const server_t *srv);
/* The client is our master's link (its commands are the stream). */
bool repl_client_is_master(const client_t *c);
/* The client our master's stream arrives on, NULL when not connected. */
client_t *repl_master_link(server_t *srv);
/* A replica keeps keys until its master deletes them: expired keys look
 * missing to ordinary clients but are not deleted. */
bool repl_keys_expire_locally(const server_t *srv);

/* dispatch.c, before a command whose flags (CMD_*) are flags runs: the
 * error line that refuses it, or NULL: READONLY on a replica, MASTERDOWN
 * when the link is down and stale data is refused, NOREPLICAS when
 * min-replicas-to-write is not met, LOADING while loading. */
const char *repl_command_refusal(client_t *c, uint32_t flags);
/* A replica whose link is down refuses what is not allowed on stale data
 * (replica-serve-stale-data no): scripts check their commands with it. */
bool repl_serving_stale_refused(const server_t *srv);
/* The same refusals for a write a script is about to make (script_lua.c):
 * READONLY or NOREPLICAS, or NULL; none when the script's
 * caller is our master's link. */
const char *repl_write_refusal(server_t *srv, const client_t *caller);

/* conn.c hooks. */
void repl_client_freed(client_t *c);
/* An empty line from a replica of ours: a loading replica's keepalive
 * (Redis's), which counts as an acknowledgement for repl-timeout. */
void repl_replica_newline(client_t *c);
/* The master link's parser consumed bytes [p, p+len) (part or all of a
 * request); after the request ran, repl_master_applied moves the offset
 * over all of it and hands the bytes to our backlog and sub-replicas. */
void repl_master_consumed(client_t *c, const char *p, size_t len);
void repl_master_applied(client_t *c);
/* Before sleep: our master's stream held while a script was busy (conn.c)
 * is applied now that it is not. */
void repl_master_resume(server_t *srv);

/* The RDB child ended (persist.c's BGSAVE or repl_diskless.c's socket
 * child): replicas waiting for it get the file or the stream. */
void repl_rdb_child_done(server_t *srv, bool ok);

/* The RDB's replication aux fields (repl_info.c).  save_info: what to
 * write (false: nothing, no history to continue).  restore_from_rdb: at
 * start-up, after an RDB with them loaded: a replica takes the ID and
 * offset as its own (its PSYNC asks to continue them), a master keeps them
 * as replid2 and continues the offset (its former replicas continue). */
struct rdb_repl_info;
bool repl_rdb_save_info(const server_t *srv, struct rdb_repl_info *out);
void repl_restore_from_rdb(server_t *srv, const struct rdb_repl_info *in);

/* Shutdown (shutdown.c, Redis 7.0's shutdown-timeout): whether every
 * replica has acknowledged all of the stream, and the log of who had when
 * the wait ends. */
bool repl_replicas_in_sync(const server_t *srv);
void repl_log_shutdown_sync(const server_t *srv);

/* INFO and memory (repl_info.c). */
sds repl_info(server_t *srv, sds s);
/* Bytes held by the backlog, and by replicas' output buffers: reported in
 * INFO memory and not counted for eviction (as in Redis). */
size_t repl_backlog_memory(const server_t *srv);
size_t repl_replica_buffers_memory(const server_t *srv);
/* Counters for INFO stats: sync_full, sync_partial_ok, sync_partial_err. */
void repl_sync_stats(const server_t *srv, long long *full, long long *partial_ok, long long *partial_err);


#endif
