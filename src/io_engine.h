/* io_engine.h: which engine moves client bytes, and the io_uring one's
 * interface to the connection layer.
 *
 * Two engines serve client sockets (`io-engine auto|epoll|io_uring`):
 *  - epoll: libevent watches each client's fd; conn.c calls read() and
 *    write()/writev() itself (one system call per socket operation);
 *  - io_uring (io_uring_engine.c): each client has one multishot receive
 *    armed on a ring, feeding buffers of a provided-buffer ring, and its
 *    replies leave as send operations queued during the loop round and
 *    submitted together at before-sleep.  Requests that came meanwhile
 *    start the next round at once; otherwise the loop sleeps in the ring
 *    (evloop_set_sleeper) until the first completion: no request waits
 *    for others.  libevent still owns timers, signals, listeners and
 *    epoll clients, whose readiness wakes that sleep too.
 * conn.c owns the client's buffers and their rules (query-buffer limit,
 * output-buffer limits, close after reply); the engine only moves bytes and
 * calls back up through io_conn_ops_t, which conn.c fills and lifecycle.c
 * hands to io_engine_init (the engine never names a conn.c function).  Clients
 * that some module drives by fd itself (the master link of a replica) stay
 * on epoll under either engine. */
#ifndef RL_IO_ENGINE_H
#define RL_IO_ENGINE_H

#include <stdbool.h>
#include <stddef.h>

#include "proc_rss.h"
#include "server.h"

struct iovec;

/* What the engine asks of the connection layer above it (conn.c's
 * conn_io_ops()): the engine is below conn and reaches up only through
 * these. */
typedef struct io_conn_ops {
    /* n bytes arrived for c (borrowed); may free c */
    void (*input)(client_t *c, const char *p, size_t n);
    /* a send ended: n >= 0 bytes taken, or -errno; queues the rest or frees c */
    void (*sent)(client_t *c, long n);
    /* vectors over c's unsent output (at most max); the count */
    int (*output_iov)(client_t *c, struct iovec *iov, int max);
    bool (*has_pending_output)(const client_t *c);
    /* try c's output again in the next round (no submission slot now) */
    void (*mark_pending_write)(client_t *c);
    /* the peer hung up or failed: free c */
    void (*free)(client_t *c);
    /* the last part of freeing c, delayed while a send read its buffers */
    void (*release)(client_t *c);
} io_conn_ops_t;

/* Start the engine `io-engine` asks for: auto tries io_uring and falls back
 * to epoll with one log line; io_uring that cannot start is an error
 * (false, logged).  After evloop_create. */
bool io_engine_init(server_t *srv, const io_conn_ops_t *ops);
/* After every client was freed, before evloop_free. */
void io_engine_free(server_t *srv);
/* "epoll" or "io_uring": the engine in use (INFO server io_engine). */
const char *io_engine_name(const server_t *srv);

/* Per client (conn.c).  attach: arm its receive; false = keep it on epoll. */
bool uring_conn_attach(client_t *c);
/* The client is being freed: cancel its operations.  True if a send still
 * reads its output buffers: conn.c then leaves the client's memory to the
 * engine, which calls conn_release() once the send has ended. */
bool uring_conn_close(client_t *c);
/* Queue a send of c's pending output unless one is in flight (its
 * completion queues the next).  Submitted at io_engine_before_sleep. */
void uring_conn_flush(client_t *c);
/* Wait until c has no send in flight (other completions are kept for the
 * loop), so its output may be written directly (conn_flush_now). */
void uring_conn_wait_send(client_t *c);

/* The engine lets go of c's socket for good (conn_detach): the send in
 * flight ends, the receive is cancelled and waited for; bytes it had
 * received are appended to `caught`, which is returned. */
sds uring_conn_detach(client_t *c, sds caught);

/* conn_before_sleep: run the completions there are (one io_uring_enter
 * only when the kernel holds receive work for us), then, at its end,
 * submit every queued operation in one system call. */
void io_engine_run_ready(server_t *srv);
void io_engine_submit(server_t *srv);
/* Serve completions now, except those of `skip` (a client whose command
 * is running: conn_serve_while_busy during a long script). */
void io_engine_serve_now(server_t *srv, client_t *skip);
/* Accepting at maxclients: run the completions the kernel already holds,
 * so that a client which hung up before the newcomer connected has given
 * its slot back (on epoll its hang-up is an event ahead of the accept). */
void io_engine_settle(server_t *srv);

/* server_before_sleep, after a whole round: true to run the next round
 * now (completions are ready or the kernel holds receive work, fewer than
 * a bound of rounds ran back to back), without a trip through libevent. */
bool io_engine_continue(server_t *srv, unsigned rounds);

/* Once a second from the server cron: shrink the receive buffer ring to
 * the load and give back the pages of buffers left idle. */
void io_engine_cron(server_t *srv);
/* Give back the pages of every receive buffer waiting in the ring now
 * (MEMORY PURGE). */
void io_engine_release_idle(server_t *srv);
/* Resident bytes of the engine's own mappings (receive buffers, their
 * ring, the kernel's rings): INFO mem_io_buffers, 0 on epoll. */
size_t io_engine_memory(const server_t *srv);
/* The engine's own mappings (at most max; the count), for the account
 * of the RSS by kind (memory.c, lib/proc_rss.c). */
size_t io_engine_ranges(const server_t *srv, proc_range_t *r, size_t max);

/* INFO stats: the io_uring engine's loop rounds, io_uring_enter calls,
 * submissions, sleeps, and how many rounds and enters each reply followed
 * its request by (nothing on epoll). */
sds io_engine_info(server_t *srv, sds s);

#endif
