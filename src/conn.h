/* conn.h: clients (connections): lifecycle, query buffer, reply buffers.
 *
 * A client is created when a listener accepts, reads requests into its query
 * buffer, hands each complete request to the command layer (commands.c), and
 * writes replies from its output buffers.  Replies are queued by reply.c and
 * flushed by conn_flush_pending() at the end of each event-loop iteration,
 * so a pipeline read in one go is answered with one write.  Protocol errors
 * and limits close the connection after the error reply is flushed. */
#ifndef RL_CONN_H
#define RL_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "resp.h"
#include "server.h"

#define CLIENT_BUF_SIZE (16 * 1024)      /* static reply buffer */
#define CLIENT_READ_CHUNK (16 * 1024)    /* bytes per read() */
#define REPLY_BLOCK_MIN (16 * 1024)

/* client flags */
#define CLIENT_CLOSE_AFTER_REPLY (1u << 0)  /* close once output is flushed */
#define CLIENT_CLOSE_ASAP (1u << 1)         /* close at the next before-sleep */
#define CLIENT_PENDING_WRITE (1u << 2)      /* on srv->pending_write */
#define CLIENT_AUTHENTICATED (1u << 3)
#define CLIENT_UNIX_SOCKET (1u << 4)
#define CLIENT_IN_WRITE_WAIT (1u << 5)      /* socket full: waiting for EV_WRITE */
/* blocking.c owns these three (see blocking.h) */
#define CLIENT_BLOCKED (1u << 7)           /* waiting on keys: input paused */
#define CLIENT_UNBLOCKED (1u << 8)         /* served/timed out; input resumes at before-sleep */
#define CLIENT_DENY_BLOCKING (1u << 9)     /* e.g. inside EXEC: blocking commands must not block */
#define CLIENT_PREVENT_PROP (1u << 12)     /* persist.c: the handler fed the AOF itself */

typedef struct reply_block {
    struct reply_block *next;
    size_t size, used;       /* bytes of buf[] allocated / filled */
    char buf[];
} reply_block;

typedef struct command command_t;

struct client {
    uint64_t id;
    int fd;
    server_t *srv;
    db_t *db;
    evloop_io_t *io;
    unsigned flags;
    int resp;                    /* protocol: 2 or 3 */
    sds name;                    /* CLIENT SETNAME, or NULL */
    sds lib_name, lib_ver;       /* CLIENT SETINFO */
    char addr[64];               /* "ip:port" of the peer */
    char laddr[64];              /* "ip:port" of our end */

    sds querybuf;
    size_t qb_pos;               /* bytes of querybuf already parsed */
    size_t querybuf_peak;
    resp_parser_t parser;
    int argc;
    robj **argv;                 /* current request, owned by the parser */
    command_t *cmd, *lastcmd;

    char buf[CLIENT_BUF_SIZE];   /* replies go here first... */
    size_t bufpos;
    size_t sentlen;              /* bytes of the head already written */
    reply_block *reply_head, *reply_tail;   /* ...then into blocks */
    size_t reply_bytes;          /* bytes held in blocks */

    long long ctime_ms;          /* connection time */
    long long last_interaction_ms;
    client_t *next, *prev;       /* srv->clients_head list */
    client_t *next_pending;      /* srv->pending_write list */
    client_t *next_close;        /* srv->close_asap list */
    long long commands_processed;
    struct blocked_state *bstate;   /* blocking.c: set iff CLIENT_BLOCKED */
    /* pub/sub and introspection (pubsub.c, monitor.c) */
    struct pubsub_client *ps;    /* subscriptions; NULL until the first SUBSCRIBE */
    long long obuf_soft_since_ms;   /* when output first exceeded the soft limit; 0 = not over */
    struct multi_state *mstate;     /* multi.c: queued commands, set iff in MULTI */
    struct watch_state *wstate;     /* multi.c: WATCHed keys and their dirty flag */
};

/* Accept handler for listeners (registered by server.c). */
void conn_accept_handler(int fd, bool readable, bool writable, void *arg);
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
bool conn_has_pending_output(const client_t *c);
/* Enforce client-output-buffer-limit after output was queued: a client
 * over its class's hard limit, or over the soft limit for too long, is
 * closed asynchronously (its output is dropped). */
void conn_check_output_limit(client_t *c);
size_t conn_output_bytes(const client_t *c);

#endif
