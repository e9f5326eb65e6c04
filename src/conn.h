/* conn.h: clients (connections): lifecycle, query buffer, reply buffers.
 *
 * A client is created when a listener accepts, reads requests into its query
 * buffer, hands each complete request to the command layer (dispatch.c, through
 * conn_hooks_t), and
 * writes replies from its output buffers.  Replies are queued by reply.c and
 * flushed by conn_flush_pending() at the end of each event-loop iteration,
 * so a pipeline read in one go is answered with one write.  Protocol errors
 * and limits close the connection after the error reply is flushed.
 *
 * reply.c sits on top of this module (it fills the output buffers and asks
 * conn.c to schedule the write and check the limits); conn.c never calls a
 * reply builder: a protocol error goes up through conn_hooks_t like a
 * request does, so the two do not include each other. */
#ifndef RL_CONN_H
#define RL_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "resp.h"
#include "server.h"

#define CLIENT_BUF_SIZE (16 * 1024)   /* static reply buffer */
#define CLIENT_READ_CHUNK (16 * 1024) /* bytes per read() */
#define CLIENT_SPARE_ARGS 8           /* argument objects a pipeline batch reuses */
#define REPLY_BLOCK_MIN (16 * 1024)

/* Client flags (client_t.flags): every bit in this one list, each with the
 * module that sets and clears it.  A new owner adds its bit here. */
#define CLIENT_CLOSE_AFTER_REPLY (1u << 0)    /* conn.c: close once output is flushed */
#define CLIENT_CLOSE_ASAP (1u << 1)           /* conn.c: close at the next before-sleep */
#define CLIENT_PENDING_WRITE (1u << 2)        /* conn.c: on srv->pending_write */
#define CLIENT_AUTHENTICATED (1u << 3)        /* conn_cmds.c: AUTH/HELLO passed */
#define CLIENT_UNIX_SOCKET (1u << 4)          /* conn.c */
#define CLIENT_IN_WRITE_WAIT (1u << 5)        /* conn.c: socket full, waiting for EV_WRITE */
#define CLIENT_FORCE_PROP (1u << 6)           /* persist.c: logged though it changed nothing */
#define CLIENT_BLOCKED (1u << 7)              /* blocking.c: waiting on keys, input paused */
#define CLIENT_UNBLOCKED (1u << 8)            /* blocking.c: served/timed out, input resumes at before-sleep */
#define CLIENT_DENY_BLOCKING (1u << 9)        /* blocking.c: e.g. inside EXEC, must not block */
#define CLIENT_REPLY_OFF (1u << 10)           /* conn_cmds.c: CLIENT REPLY OFF, replies dropped */
#define CLIENT_REPLY_SKIP (1u << 11)          /* conn_cmds.c: this command's reply is dropped */
#define CLIENT_REPLY_SKIP_NEXT (1u << 12)     /* conn_cmds.c: CLIENT REPLY SKIP, drop the next one */
#define CLIENT_PUSHING (1u << 13)             /* pubsub.c, tracking.c: a push is written, not silenced */
#define CLIENT_NO_EVICT (1u << 14)            /* conn_cmds.c: CLIENT NO-EVICT on */
#define CLIENT_PAUSED (1u << 15)              /* pause.c: its request waits for CLIENT PAUSE to end */
#define CLIENT_PREVENT_PROP (1u << 16)        /* persist.c: the handler fed the AOF itself (persist_propagate) */
#define CLIENT_CLOSE_AFTER_COMMAND (1u << 17) /* acl.c: its user went away; closed once this reply is queued */
#define CLIENT_PROPAGATE_REPL (1u << 18)      /* pubsub.c: PUBLISH goes to replicas only (persist.c sends it) */
#define CLIENT_SHUTDOWN_WAIT (1u << 19)       /* shutdown.c: its SHUTDOWN waits for replicas, input paused */
#define CLIENT_PUBSUB (1u << 20)              /* pubsub.c: in subscribed mode */
#define CLIENT_MONITOR (1u << 21)             /* monitor.c: receives every command */
#define CLIENT_LUA_DEBUG (1u << 22)           /* script.c: SCRIPT DEBUG YES|SYNC, its next EVAL is debugged */
#define CLIENT_LUA_DEBUG_SYNC (1u << 23)      /* script.c: SCRIPT DEBUG SYNC (no fork) */
#define CLIENT_FAKE (1u << 24)                /* script.c: runs redis.call, replies stay in its buffers */
#define CLIENT_PROTECTED (1u << 25)           /* script.c: its script runs long, not freed until it returns */
#define CLIENT_MASTER (1u << 26)              /* repl_replica.c: our master's link; replies are not sent */
#define CLIENT_MASTER_FORCE_REPLY (1u << 27)  /* repl_replica.c: this write (REPLCONF ACK) goes to the master */
#define CLIENT_REPLICA (1u << 28)             /* repl_master.c: a replica attached to us (SYNC/PSYNC) */
#define CLIENT_REPL_WAIT (1u << 29)           /* repl_master.c: blocked in WAIT, input paused */
#define CLIENT_AOF_LOADER (1u << 30)          /* aof.c: replays the AOF; an error reply is unexpected */
#define CLIENT_NO_TOUCH (1u << 31)            /* conn_cmds.c: CLIENT NO-TOUCH on, keyspace.c reads it */

typedef struct reply_block {
    struct reply_block *next;
    size_t size, used; /* bytes of buf[] allocated / filled */
    char buf[];
} reply_block;

typedef struct command command_t;

struct client {
    uint64_t id;
    int fd;
    server_t *srv;
    db_t *db;
    evloop_io_t *io;         /* epoll engine: its watcher; NULL on io_uring */
    struct uring_conn *ring; /* io_uring_engine.c: its operations; NULL on epoll */
    struct tls_conn *tls;    /* tls_conn.c: its TLS session when it came on the tls-port, else NULL */
    unsigned flags;
    uint8_t cluster_flags; /* cluster.h: CLUSTER_CLIENT_READONLY, _ASKING */
    int resp;              /* protocol: 2 or 3 */
    sds name;              /* CLIENT SETNAME, or NULL */
    sds lib_name, lib_ver; /* CLIENT SETINFO */
    char addr[64];         /* "ip:port" of the peer */
    char laddr[64];        /* "ip:port" of our end */

    sds querybuf;
    size_t qb_pos;          /* bytes of querybuf already parsed */
    const char *input_rest; /* during a request: the input after it (query buffer or receive buffer) */
    size_t input_rest_len;
    size_t input_batch_len; /* while a receive buffer parsed in place runs: its bytes (CLIENT LIST qbuf) */
    size_t querybuf_peak;
    size_t querybuf_tick_peak; /* the query buffer's longest since the cron's last visit (its resize) */
    resp_parser_t parser;
    int argc;
    robj **argv; /* current request, owned by the parser */
    command_t *cmd, *lastcmd;
    /* Argument objects of finished requests, kept for the next requests of
     * the same batch of input (a pipeline) instead of a free and a malloc
     * each; emptied when the batch ends (conn.c: spare_args_*). */
    struct {
        int n;
        robj *obj[CLIENT_SPARE_ARGS];
        size_t room[CLIENT_SPARE_ARGS]; /* bytes the block surely has (obj_embstr_size) */
    } spare;

    char buf[CLIENT_BUF_SIZE]; /* replies go here first... */
    size_t bufpos;
    size_t buf_peak;                      /* most of buf used in the current 5 s window (CLIENT LIST rbp) */
    long long buf_peak_since_ms;          /* that window's start (conn.c's cron) */
    size_t multi_bytes;                   /* multi.c: what the queued MULTI commands hold (CLIENT LIST multi-mem) */
    size_t sentlen;                       /* bytes of the head already written */
    reply_block *reply_head, *reply_tail; /* ...then into blocks */
    size_t reply_bytes;                   /* bytes held in blocks */
    unsigned long long reply_calls;       /* reply_raw calls; counted at RL_DEBUG >= 2 only */
    bool replica_replied;                 /* dispatch.c: a replica's own command tried to answer (dropped) */

    long long ctime_ms; /* connection time */
    long long last_interaction_ms;
    long long partial_since_ms; /* a request has been incomplete since then; 0 = none pending */
    client_t *next, *prev;      /* srv->clients_head list */
    client_t *next_pending;     /* srv->pending_write list */
    client_t *next_close;       /* srv->close_asap list */
    long long commands_processed;
    long long woff;               /* dispatch.c: the replication offset after its last propagated write (WAIT, WAITAOF) */
    struct blocked_state *bstate; /* blocking.c: set iff CLIENT_BLOCKED */
    /* pub/sub and introspection (pubsub.c, monitor.c) */
    struct pubsub_client *ps;         /* subscriptions; NULL until the first SUBSCRIBE */
    long long obuf_soft_since_ms;     /* when output first exceeded the soft limit; 0 = not over */
    struct multi_state *mstate;       /* multi.c: queued commands, set iff in MULTI */
    struct watch_state *wstate;       /* multi.c: WATCHed keys and their dirty flag */
    struct tracking_client *tracking; /* tracking.c: NULL until CLIENT TRACKING */
    struct repl_replica *repl;        /* repl_master.c: set iff CLIENT_REPLICA */
    struct acl_user *user;            /* acl.c: whose permissions apply; NULL = unrestricted (internal) */
    size_t evict_mem;                 /* conn.c: its memory when last measured, 0 if maxmemory-clients ignores it */
    size_t self_bytes;                /* conn.c: what the allocator gave this struct (asked once: it never moves) */
};

/* What conn.c needs from the layers above it.  The connection layer reads
 * requests and writes replies; it knows no command, user or per-client
 * feature, so it reaches them through this table, filled once at start-up
 * by hooks.c (the wiring, at the top of the layers; see docs/development.md, "Layers").
 * Every entry is set. */
typedef struct conn_client_info {
    char tracking_flags[4]; /* tracking.c: "t", "R", "B" letters, NUL-terminated */
    size_t sub, psub, ssub; /* pubsub.c: subscriptions */
    int multi;              /* multi.c: queued commands, -1 outside MULTI */
    int watch;              /* multi.c: WATCHed keys */
    const char *user;       /* acl.c */
    long long redir;        /* tracking.c: CLIENT TRACKING REDIRECT target */
} conn_client_info_t;

typedef struct conn_hooks {
    void (*client_created)(client_t *c);                             /* acl.c: the default user */
    void (*client_freed)(client_t *c);                               /* every module drops its per-client state */
    bool (*default_user_nopass)(const server_t *srv);                /* acl.c: protected mode applies only then */
    bool (*auth_required)(const client_t *c);                        /* acl.c: c must AUTH before running commands */
    void (*master_consumed)(client_t *c, const char *p, size_t len); /* repl: master link bytes parsed */
    void (*run_request)(client_t *c);                                /* a complete request in c->argv (argc may be 0): dispatch and after */
    void (*protocol_error)(client_t *c, const char *msg);            /* reply.c: the error reply, before conn.c closes */
    void (*before_sleep)(server_t *srv);                             /* unblocked clients, pauses, BCAST */
    void (*client_info)(const client_t *c, conn_client_info_t *out); /* CLIENT LIST fields of other modules */
} conn_hooks_t;

/* Accept handler for listeners (registered by lifecycle.c). */
void conn_accept_handler(int fd, bool readable, bool writable, void *arg);
/* c (the master link, just created) goes on over the TLS session the
 * replication handshake ran on: c owns t, and the plaintext t still holds
 * is run now. */
void conn_adopt_tls(client_t *c, struct tls_conn *t);
/* write(2) of n bytes to fd (a dup of c's socket) for a module that writes
 * a payload itself (a replica's RDB): a TLS client's bytes are encrypted
 * in its session first, its unsent records go before them; the count
 * taken, or -1 with errno (EAGAIN: try again when writable). */
ssize_t conn_write_direct(client_t *c, int fd, const char *p, size_t n);
/* A client out of the I/O engine (conn_detach) talked to directly, plain
 * or TLS, waiting in poll(): the Lua debugger's session.  recv: up to cap
 * bytes of plaintext, 0 or less when the client is gone; send: all n
 * bytes, false when it is gone. */
long conn_recv_blocking(client_t *c, char *buf, size_t cap);
bool conn_send_blocking(client_t *c, const char *p, size_t n);
/* The same for a tls-port listener: its clients speak TLS (tls_conn.c). */
void conn_tls_accept_handler(int fd, bool readable, bool writable, void *arg);
/* Free now (removes from every list, closes the socket). */
void conn_free(client_t *c);
/* Close at the next before-sleep (safe inside a command). */
void conn_close_async(client_t *c);
/* Called by the reply layer whenever output is queued. */
void conn_mark_pending_write(client_t *c);
/* Flush every client with pending output; free clients marked to close. */
void conn_before_sleep(void *arg);
/* Run the requests waiting in the query buffer (blocking.c resumes a client
 * unblocked after it had pipelined more commands). */
void conn_process_input(client_t *c);
/* Close idle clients (timeout directive); called from cron. */
void conn_cron(server_t *srv);
/* Text of CLIENT LIST / CLIENT INFO for one client. */
sds conn_info_string(sds s, client_t *c);
/* Bytes a client holds: the struct with its reply buffer, the query
 * buffer, the reply blocks (CLIENT LIST's tot-mem). */
size_t conn_client_memory(const client_t *c);
/* Measure c again into srv->clients_evict_mem, the bytes of the clients
 * maxmemory-clients bounds (client_evict.c): 0 for replication links and
 * clients being closed.  Nothing while maxmemory-clients is 0. */
void conn_track_memory(client_t *c);
bool conn_has_pending_output(const client_t *c);
/* Enforce client-output-buffer-limit after output was queued: a client
 * over its class's hard limit, or over the soft limit for too long, is
 * closed asynchronously (its output is dropped). */
void conn_check_output_limit(client_t *c);
size_t conn_output_bytes(const client_t *c);
/* A client over an already connected socket (repl_replica.c: the master
 * link becomes a client once the RDB is loaded). */
client_t *conn_create_client(server_t *srv, int fd);
/* Write c's queued output now, without freeing it on error (false: not
 * all of it left; the caller decides).  repl_master.c: +FULLRESYNC must
 * be on the wire before a diskless child writes to the same socket. */
bool conn_flush_now(client_t *c);
/* conn_flush_now, waiting in poll() while the socket is full; false on
 * an error (errno says which). */
bool conn_flush_wait(client_t *c);
/* Take c's socket away from the I/O engine for good: script.c's debugger
 * then reads and writes it itself until the client is closed.  Returns
 * the input not run yet: what followed the running request, then what
 * the engine had received (caller frees). */
sds conn_detach(client_t *c);
/* Serve other clients while a long script runs (script.c's hook). */
void conn_serve_while_busy(server_t *srv, client_t *skip);
/* Read c now if its socket (an epoll one) has input waiting: c may be
 * freed by it.  What a replica does with its master link before serving
 * io_uring clients (lifecycle.c). */
void conn_read_if_ready(client_t *c);
/* Drop everything queued for c, unsent (a fake client's replies once the
 * script engine has read them). */
void conn_discard_output(client_t *c);

/* The io_uring engine's calls into the connection layer, which it reaches
 * only through the table conn_io_ops() returns (io_engine.h). */
struct iovec;
struct io_conn_ops;
const struct io_conn_ops *conn_io_ops(void);
/* n bytes arrived for c (borrowed: parsed in place, the unparsed rest is
 * copied to the query buffer).  May free c. */
void conn_input(client_t *c, const char *p, size_t n);
/* A send of c's output ended: n >= 0 bytes taken by the kernel, or -errno.
 * Queues the rest, or frees c (error, close after reply). */
void conn_sent(client_t *c, long n);
/* Vectors over c's unsent output (at most max); the count. */
int conn_output_iov(client_t *c, struct iovec *iov, int max);
/* The last part of conn_free, delayed while a send read c's buffers. */
void conn_release(client_t *c);

#endif
