/* conn.c: client lifecycle: accept, read and parse, write, limits, close.
 *
 * Reading: one read() per readable event (16 KB, or the rest of a large
 * bulk), then every complete request in the query buffer is executed before
 * returning, so a pipeline costs one read.  Writing: replies are only queued
 * during execution; conn_before_sleep() writes every client with output
 * once per loop iteration (writev of the static buffer and the blocks), and
 * only a client whose socket is full waits for a writable event.
 *
 * TLS clients (accepted on the tls-port) take the same paths: the bytes an
 * engine received are ciphertext, decrypted by tls_conn.c before the
 * parser sees them (tls_input), and the output the engines send is the
 * ciphertext of the queued replies (tls_output_iov), so epoll and
 * io_uring serve TLS without owning anything TLS-specific. */
#include "conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "command_def.h"
#include "evloop.h"
#include "io_engine.h"
#include "log.h"
#include "net.h"
#include "tls.h"
#include "tls_conn.h"
#include "object.h"
#include "util.h"
#include "zmalloc.h"

/* Limits for a client that must still AUTH (Redis's numbers): the bytes of
 * its output list, and of its query buffer. */
#define CONN_UNAUTH_OBUF_MAX 1024
#define CONN_UNAUTH_QUERYBUF_MAX (1024 * 1024)

/* Whether c has to AUTH first: not authenticated, and the default user
 * has a password or is off (Redis's authRequired). */
static bool conn_auth_required(const client_t *c) {
    return !(c->flags & CLIENT_AUTHENTICATED) && c->srv->conn_hooks->auth_required(c);
}

#define MAX_IOV 32
#define QUERYBUF_GREEDY_MAX (1024 * 1024) /* below this the query buffer doubles, above it grows by this much */

/* ------------------------------------------------------------ creation */

/* Spare argument objects (client_t.spare): a pipeline of N requests
 * costs one allocation per argument of the first request instead of a
 * malloc and a free per argument of every request.  Spares live only
 * until the batch of input that freed them ends, so between batches a
 * client holds none (no memory that Redis would not hold). */
static robj *spare_args_take(client_t *c, const char *p, size_t len) {
    /* The smallest spare that fits: a request's short name must not take
     * the block its long key would need (room only knows the bytes of the
     * last use, so a block never grows back). */
    size_t need = obj_embstr_size(len);
    int best = -1;
    for (int i = 0; i < c->spare.n; i++) {
        if (c->spare.room[i] < need || (best >= 0 && c->spare.room[i] >= c->spare.room[best])) continue;
        best = i;
        if (c->spare.room[i] == need) break;
    }
    if (best < 0) return NULL;
    robj *o = c->spare.obj[best];
    c->spare.n--;
    c->spare.obj[best] = c->spare.obj[c->spare.n];
    c->spare.room[best] = c->spare.room[c->spare.n];
    return obj_reuse_embstr(o, p, len);
}

/* Release an argument of a finished request: kept as a spare when it is
 * an embstr nobody else holds (a command that kept it took a reference). */
static void spare_args_put(client_t *c, robj *o) {
    size_t room;
    if (c->spare.n < CLIENT_SPARE_ARGS && (room = obj_reusable_embstr(o)) != 0) {
        c->spare.obj[c->spare.n] = o;
        c->spare.room[c->spare.n++] = room;
        return;
    }
    obj_decref(o);
}

static void spare_args_free(client_t *c) {
    while (c->spare.n > 0) obj_decref(c->spare.obj[--c->spare.n]);
}

static void *make_arg(void *ctx, const char *p, size_t len) {
    client_t *c = ctx;
    if (len <= OBJ_EMBSTR_MAX && c->spare.n > 0) {
        robj *o = spare_args_take(c, p, len);
        if (o) return o;
    }
    return obj_create_string(p, len);
}

static void free_arg(void *ctx, void *arg) {
    (void)ctx;
    obj_decref(arg);
}

static void client_io(int fd, bool readable, bool writable, void *arg);

/* use_ring: served by the io_uring engine when it runs (accepted clients);
 * otherwise, or if the ring refuses it, by an epoll watcher. */
static client_t *client_new(server_t *srv, int fd, bool is_unix, bool use_ring, tls_conn_t *tls) {
    client_t *c = zcalloc(sizeof(*c));
    c->tls = tls;
    c->self_bytes = zmalloc_size(c);
    c->id = ++srv->next_client_id;
    c->fd = fd;
    c->srv = srv;
    c->db = &srv->dbs[0];
    c->resp = 2;
    c->querybuf = sds_empty();
    resp_parser_init(&c->parser, make_arg, free_arg, c);
    c->ctime_ms = c->last_interaction_ms = srv->mstime;
    if (is_unix) c->flags |= CLIENT_UNIX_SOCKET;
    srv->conn_hooks->client_created(c); /* acl.c: the default user; authenticated if it has no password */
    net_peer_name(fd, c->addr, sizeof(c->addr), false);
    net_peer_name(fd, c->laddr, sizeof(c->laddr), true);
    if (!(use_ring && uring_conn_attach(c))) c->io = evloop_io_add(srv->loop, fd, client_io, c);
    c->next = srv->clients_head;
    if (srv->clients_head) srv->clients_head->prev = c;
    srv->clients_head = c;
    srv->client_count++;
    return c;
}

/* The master link stays on epoll: repl_replica.c drives its socket itself
 * until it becomes a client. */
client_t *conn_create_client(server_t *srv, int fd) { return client_new(srv, fd, false, false, NULL); }

/* The bytes each client holds, summed for maxmemory-clients over the
 * clients it may evict (the policy is client_evict.c's). */
size_t conn_client_memory(const client_t *c) {
    return c->self_bytes + sds_alloc_size(c->querybuf) + c->reply_bytes + c->multi_bytes +
           (c->tls ? tls_conn_memory(c->tls) : 0);
}

/* Normal and pub/sub clients count, as in Redis, CLIENT NO-EVICT ones
 * too (they are only never chosen); replication links do not. */
static bool counted(const client_t *c) {
    return !(c->flags &
             (CLIENT_MASTER | CLIENT_REPLICA | CLIENT_FAKE | CLIENT_AOF_LOADER | CLIENT_CLOSE_ASAP | CLIENT_CLOSE_AFTER_REPLY));
}

static void set_tracked(client_t *c, size_t mem) {
    c->srv->clients_evict_mem += mem - c->evict_mem; /* size_t arithmetic: right when mem shrinks too */
    c->evict_mem = mem;
}

void conn_track_memory(client_t *c) {
    /* Off (the default): nothing per request; client_evict.c measures
     * every client once when the setting is turned on. */
    if (!c->srv->cfg.maxmemory_clients) return;
    set_tracked(c, counted(c) ? conn_client_memory(c) : 0);
}

static void remove_from_chain(client_t **head, client_t *c, size_t next_off) {
    for (client_t **pp = head; *pp; pp = (client_t **)((char *)*pp + next_off)) {
        if (*pp == c) {
            *pp = *(client_t **)((char *)c + next_off);
            return;
        }
    }
}

void conn_free(client_t *c) {
    server_t *srv = c->srv;
    srv->conn_hooks->client_freed(c); /* replication, MULTI, waits, subscriptions, tracking, pause, MONITOR */
    set_tracked(c, 0);
    if (c->flags & CLIENT_PENDING_WRITE)
        remove_from_chain(&srv->pending_write, c, offsetof(client_t, next_pending));
    if (c->flags & CLIENT_CLOSE_ASAP) remove_from_chain(&srv->close_asap, c, offsetof(client_t, next_close));
    if (srv->cron_next == c) srv->cron_next = c->next;
    if (c->prev) c->prev->next = c->next;
    else srv->clients_head = c->next;
    if (c->next) c->next->prev = c->prev;
    srv->client_count--;
    if (c->tls) tls_note_closed(srv);
    evloop_io_free(c->io);
    /* A send still in the kernel reads c->buf and the blocks: then the
     * engine calls conn_release() when it has ended. */
    bool send_pending = c->ring && uring_conn_close(c);
    close(c->fd);
    resp_parser_free(&c->parser);
    spare_args_free(c);
    sds_free(c->querybuf);
    sds_free(c->name);
    sds_free(c->lib_name);
    sds_free(c->lib_ver);
    if (!send_pending) conn_release(c);
}

void conn_discard_output(client_t *c) {
    c->bufpos = 0;
    c->sentlen = 0;
    for (reply_block *b = c->reply_head; b;) {
        reply_block *next = b->next;
        zfree(b);
        b = next;
    }
    c->reply_head = c->reply_tail = NULL;
    c->reply_bytes = 0;
}

void conn_release(client_t *c) {
    conn_discard_output(c);
    tls_conn_free(c->tls); /* here: a send in flight read its ciphertext */
    zfree(c);
}

void conn_close_async(client_t *c) {
    if (c->flags & CLIENT_CLOSE_ASAP) return;
    c->flags |= CLIENT_CLOSE_ASAP;
    c->next_close = c->srv->close_asap;
    c->srv->close_asap = c;
    evloop_request_before_sleep(c->srv->loop);
}

/* ------------------------------------------------------------ accepting */

/* Reject with a one-line error written straight to the fresh socket: the
 * client never gets a client_t, so nothing else is allocated for it. */
static void reject(int fd, const char *msg) {
    if (write(fd, msg, strlen(msg)) < 0) { /* the peer is gone anyway */
    }
    close(fd);
}

static const char protected_msg[] =
    "-DENIED Redis is running in protected mode because protected mode is enabled and no password "
    "is set for the default user. Connections are only accepted from the loopback interface. "
    "To accept connections from other hosts, either set a password (requirepass), or disable "
    "protected mode with 'CONFIG SET protected-mode no' from a loopback connection (and persist it "
    "in the config file), or restart the server with '--protected-mode no'. Make sure the server "
    "is not exposed to the internet before doing so.\r\n";

static void accept_one(server_t *srv, int cfd, bool is_unix, bool tls) {
    srv->stats.numconnections++;
    if (srv->client_count >= (size_t)srv->cfg.maxclients) io_engine_settle(srv);
    if (srv->client_count >= (size_t)srv->cfg.maxclients) {
        srv->stats.rejected_conn++;
        reject(cfd, "-ERR max number of clients reached\r\n");
        return;
    }
    /* Protected mode guards a default user without a password (acl.c). */
    if (!is_unix && srv->cfg.protected_mode && srv->conn_hooks->default_user_nopass(srv) &&
        !net_peer_is_loopback(cfd)) {
        srv->stats.rejected_conn++;
        reject(cfd, protected_msg);
        return;
    }
    net_set_client_options(cfd, is_unix, (int)srv->cfg.tcp_keepalive);
    tls_conn_t *t = NULL;
    if (tls) {
        struct ssl_ctx_st *ctx = tls_server_ctx(srv);
        if (!ctx || !(t = tls_conn_new(ctx))) {
            log_msg(LL_WARNING, "Error creating a TLS connection: out of memory or TLS not configured");
            close(cfd);
            return;
        }
        tls_note_accepted(srv);
    }
    client_new(srv, cfd, is_unix, true, t);
}

/* accept() errors about the one pending connection, not the listener. */
static bool accept_error_is_transient(int err) {
    switch (err) {
        case EINTR:
        case ECONNABORTED:
        case EPROTO:
        case ENETDOWN:
        case ENOPROTOOPT:
        case EHOSTDOWN:
        case ENONET:
        case EHOSTUNREACH:
        case EOPNOTSUPP:
        case ENETUNREACH: return true;
        default: return false;
    }
}

/* At most max-new-connections-per-cycle (TLS: max-new-tls-connections-
 * per-cycle, a handshake being dearer) per listener and loop round, as in
 * Redis 7.4: the listener is level-triggered, so the rest are accepted in
 * the next rounds, after the clients already here were served. */
static void accept_clients(server_t *srv, int fd, bool tls) {
    long long max = tls ? srv->cfg.max_new_tls_conns_per_cycle : srv->cfg.max_new_conns_per_cycle;
    for (long long i = 0; i < max; i++) {
        bool is_unix;
        int cfd = net_accept(fd, &is_unix);
        if (cfd < 0) {
            /* A connection that failed between the handshake and accept()
             * (reset, a network error: Linux reports those through accept)
             * costs only itself: go on with the next one, quietly.  Giving
             * up the round on it, with a warning each time, let a stream of
             * such connections starve real clients (CVE-2025-48367). */
            if (accept_error_is_transient(errno)) {
                log_msg(LL_VERBOSE, "Accepting client connection: %s", strerror(errno));
                continue;
            }
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                log_msg(LL_WARNING, "Accepting client connection: %s", strerror(errno));
            return;
        }
        accept_one(srv, cfd, is_unix, tls);
    }
}

void conn_accept_handler(int fd, bool readable, bool writable, void *arg) {
    (void)readable;
    (void)writable;
    accept_clients(arg, fd, false);
}

void conn_tls_accept_handler(int fd, bool readable, bool writable, void *arg) {
    (void)readable;
    (void)writable;
    accept_clients(arg, fd, true);
}

/* ------------------------------------------------------------ reading */

static void protocol_error(client_t *c, const char *msg) {
    c->srv->conn_hooks->protocol_error(c, msg); /* the reply, before the flag that silences replies */
    c->flags |= CLIENT_CLOSE_AFTER_REPLY;
    log_msg(LL_VERBOSE, "Protocol error (%s) from client: id=%llu addr=%s", msg,
            (unsigned long long)c->id, c->addr);
}

static void free_argv(client_t *c) {
    for (int i = 0; i < c->argc; i++) spare_args_put(c, c->argv[i]);
    c->argc = 0;
    c->argv = NULL;
    resp_reset(&c->parser);
}

/* Execute every complete request in buf[*pos..len): the query buffer, or
 * (io_uring) a receive buffer parsed in place.  Stops at a request that is
 * not complete, or when the client may not run more now. */
static void run_requests(client_t *c, const char *buf, size_t len, size_t *pos) {
    server_t *srv = c->srv;
    srv->clock_chain_us = -1; /* dispatch.c: one clock read per command of this batch */
    /* Redis's query buffer holds the batch while its commands run (CLIENT
     * LIST shows qbuf=26 for its own request): a receive buffer parsed in
     * place counts the same. */
    c->input_batch_len = buf == c->querybuf ? 0 : len;
    while (*pos < len) {
        if (c->flags & (CLIENT_CLOSE_AFTER_REPLY | CLIENT_CLOSE_ASAP)) break;
        if (c->flags & (CLIENT_BLOCKED | CLIENT_PAUSED | CLIENT_REPL_WAIT | CLIENT_SHUTDOWN_WAIT))
            break; /* the rest waits until it is served */
        /* Our master's stream is not refused with -BUSY while a script runs
         * too long: it waits, read but not applied (repl.h resumes it). */
        if ((c->flags & CLIENT_MASTER) && srv->script_busy) break;
        size_t req_start = *pos;
        resp_limits_t lim = {srv->cfg.proto_max_bulk_len, conn_auth_required(c)};
        int r = resp_parse(&c->parser, buf, len, pos, &lim);
        /* repl.h: the master link's offset counts every byte of a request,
         * also the part a previous read already parsed */
        if (c->flags & CLIENT_MASTER) srv->conn_hooks->master_consumed(c, buf + req_start, *pos - req_start);
        if (r == RESP_NEED_MORE) break;
        if (r == RESP_ERR) {
            protocol_error(c, c->parser.error);
            resp_reset(&c->parser);
            break;
        }
        int argc;
        c->argv = (robj **)resp_take_argv(&c->parser, &argc);
        c->argc = argc;
        c->partial_since_ms = 0;    /* a request completed */
        c->input_rest = buf + *pos; /* conn_detach: what follows this request */
        c->input_rest_len = len - *pos;
        /* The command runs, then the clients blocked on keys it wrote are
         * served before anyone else runs a command (a push and its pop
         * look atomic): hooks.c's run_request. */
        srv->conn_hooks->run_request(c);
        free_argv(c);
        c->input_rest = NULL;
        c->input_rest_len = 0;
    }
    srv->clock_chain_us = 0;
    c->input_batch_len = 0;
    spare_args_free(c);
}

/* After a batch of input: track unfinished requests, close a client whose
 * last reply is already gone. */
static void input_done(client_t *c) {
    /* Bytes of an unfinished request wait here: note since when (a client
     * trickling one byte a second is not idle, but never finishes). */
    if (c->qb_pos < sds_len(c->querybuf) || resp_in_request(&c->parser)) {
        if (!c->partial_since_ms) c->partial_since_ms = c->srv->mstime;
    } else {
        c->partial_since_ms = 0;
    }
    /* A client told to close after its reply whose reply is already gone
     * (or was never queued) has nothing left to wait for. */
    if ((c->flags & CLIENT_CLOSE_AFTER_REPLY) && !conn_has_pending_output(c)) conn_close_async(c);
    conn_track_memory(c);
}

/* Execute every complete request in the query buffer. */
static void process_input(client_t *c) {
    run_requests(c, c->querybuf, sds_len(c->querybuf), &c->qb_pos);
    input_done(c);
    /* Drop what was consumed; a partial request stays at the front. */
    if (c->qb_pos > 0) {
        size_t len = sds_len(c->querybuf);
        if (c->qb_pos >= len) sds_clear(c->querybuf);
        else sds_range(c->querybuf, (ssize_t)c->qb_pos, -1);
        c->qb_pos = 0;
    }
}

void conn_process_input(client_t *c) { process_input(c); }

/* Bytes to ask read() for.  Inside a large bulk the rest of it is read in
 * one go, but never more than the bulk bytes already received (so the
 * buffer at most doubles per read): a header announcing 500 MB followed by
 * 40 KB costs about 80 KB, while a real large value still arrives in
 * O(log n) reallocations.  *exact is set in that case, since the doubling
 * is already done here. */
static size_t read_size(const client_t *c, bool *exact) {
    *exact = false;
    if (c->parser.kind != '*' || c->parser.bulk_len < (long long)CLIENT_READ_CHUNK) return CLIENT_READ_CHUNK;
    size_t have = sds_len(c->querybuf) - c->qb_pos;
    size_t want = (size_t)c->parser.bulk_len + 2;
    if (want <= have || want - have <= CLIENT_READ_CHUNK) return CLIENT_READ_CHUNK;
    size_t ahead = have > CLIENT_READ_CHUNK ? have : CLIENT_READ_CHUNK;
    *exact = true;
    return want - have < ahead ? want - have : ahead;
}

/* Make room for readlen more bytes, greedy growth stopping at
 * client-query-buffer-limit; returns the bytes to read. */
static size_t reserve_query_room(client_t *c) {
    size_t limit = (size_t)c->srv->cfg.client_query_buffer_limit;
    size_t len = sds_len(c->querybuf);
    bool exact;
    size_t readlen = read_size(c, &exact);
    if (len < limit && readlen > limit - len) readlen = limit - len;
    if (sds_avail(c->querybuf) >= readlen) return readlen;
    /* A first buffer (or one the cron shrank) is made just big enough, as
     * Redis's: an idle client then holds one read's worth, not two. */
    if (sds_alloc(c->querybuf) < CLIENT_READ_CHUNK) exact = true;
    size_t need = len + readlen;
    size_t cap = exact ? need : need < QUERYBUF_GREEDY_MAX ? need * 2
                                                           : need + QUERYBUF_GREEDY_MAX;
    if (cap > limit) cap = need > limit ? need : limit;
    c->querybuf = sds_make_room_exact(c->querybuf, cap - len);
    return readlen;
}

/* client-query-buffer-limit, as Redis applies it: to the bytes waiting,
 * not to the allocation (an allocator rounds a buffer grown to the limit
 * past it), and never to our master's link, whose commands are whatever
 * its clients sent (logged when it closes c).  A client that still has to
 * AUTH gets 1 MB at most (Redis 7.4's rule; 7.0 relies on the 10 x 16 KB
 * argument limits alone, but a client stalled behind CLIENT PAUSE could
 * still fill the 1 GB default with pipelined requests before AUTH). */
static bool query_over_limit(client_t *c) {
    size_t len = sds_len(c->querybuf);
    if ((c->flags & CLIENT_MASTER) ||
        (len <= (size_t)c->srv->cfg.client_query_buffer_limit &&
         (len <= CONN_UNAUTH_QUERYBUF_MAX || !conn_auth_required(c))))
        return false;
    log_msg(LL_WARNING, "Closing client that reached max query buffer length: id=%llu addr=%s (qbuf=%zu, alloc=%zu)",
            (unsigned long long)c->id, c->addr, sds_len(c->querybuf), sds_alloc(c->querybuf));
    c->srv->stats.qbuf_limit_disconnections++;
    return true;
}

static void read_tls(client_t *c);

/* After a read() of n bytes (epoll): true when there is nothing to parse,
 * the client freed on an error or EOF, or the read would block. */
static bool read_ended(client_t *c, ssize_t n) {
    if (n > 0) return false;
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return true;
        log_msg(LL_VERBOSE, "Reading from client: %s", strerror(errno));
    } else {
        log_msg(LL_VERBOSE, "Client closed connection id=%llu addr=%s", (unsigned long long)c->id, c->addr);
    }
    conn_free(c);
    return true;
}

static void read_from_client(client_t *c) {
    server_t *srv = c->srv;
    if (c->tls) {
        read_tls(c);
        return;
    }
    size_t readlen = reserve_query_room(c);
    size_t cur = sds_len(c->querybuf);
    ssize_t n = read(c->fd, c->querybuf + cur, readlen);
    srv->stats.io_reads++;
    if (read_ended(c, n)) return;
    sds_setlen(c->querybuf, cur + (size_t)n);
    stats_net_in(&srv->stats, n, c->flags & CLIENT_MASTER);
    c->last_interaction_ms = srv->mstime;
    if (sds_len(c->querybuf) > c->querybuf_peak) c->querybuf_peak = sds_len(c->querybuf);
    if (sds_len(c->querybuf) > c->querybuf_tick_peak) c->querybuf_tick_peak = sds_len(c->querybuf);
    if (query_over_limit(c)) {
        conn_free(c);
        return;
    }
    process_input(c);
}

/* Append n received bytes to the query buffer, growing it as reads do
 * (doubling below 1 MB) but never past client-query-buffer-limit by
 * greed alone; more bytes waiting than the limit close the client (false:
 * c was freed). */
static bool query_append(client_t *c, const char *p, size_t n) {
    size_t limit = (size_t)c->srv->cfg.client_query_buffer_limit;
    size_t len = sds_len(c->querybuf);
    if (sds_avail(c->querybuf) < n) {
        size_t need = len + n;
        size_t cap = need < QUERYBUF_GREEDY_MAX ? need * 2 : need + QUERYBUF_GREEDY_MAX;
        if (cap > limit) cap = need > limit ? need : limit;
        c->querybuf = sds_make_room_exact(c->querybuf, cap - len);
    }
    memcpy(c->querybuf + len, p, n);
    sds_setlen(c->querybuf, len + n);
    if (sds_len(c->querybuf) > c->querybuf_peak) c->querybuf_peak = sds_len(c->querybuf);
    if (sds_len(c->querybuf) > c->querybuf_tick_peak) c->querybuf_tick_peak = sds_len(c->querybuf);
    if (query_over_limit(c)) {
        conn_free(c);
        return false;
    }
    return true;
}

/* io_uring: requests are parsed straight from the receive buffer while the
 * query buffer is empty (the usual case: whole requests per receive); only
 * an unfinished request, or input that must wait (blocked, paused), is
 * copied.  Behind a non-empty query buffer, bytes are appended as a read
 * would. */
static bool plain_input(client_t *c, const char *p, size_t n) {
    if (sds_len(c->querybuf) == 0) {
        if (n > c->querybuf_peak) c->querybuf_peak = n;
        size_t pos = 0;
        run_requests(c, p, n, &pos);
        if (pos < n && !query_append(c, p + pos, n - pos)) return false;
        input_done(c);
        return true;
    }
    if (!query_append(c, p, n)) return false;
    process_input(c);
    return true;
}

static void tls_input(client_t *c, const char *p, size_t n);

void conn_input(client_t *c, const char *p, size_t n) {
    server_t *srv = c->srv;
    if (c->flags & (CLIENT_CLOSE_AFTER_REPLY | CLIENT_CLOSE_ASAP)) return; /* epoll stops reading too */
    srv->stats.io_reads++;
    stats_net_in(&srv->stats, (long long)n, c->flags & CLIENT_MASTER);
    c->last_interaction_ms = srv->mstime;
    if (c->tls) tls_input(c, p, n);
    else plain_input(c, p, n);
}

/* ------------------------------------------------------------ TLS */

/* A TLS failure (a refused handshake, a bad record, plain text on the
 * tls-port): logged, the alert OpenSSL wrote is sent if any, then c
 * closes.  Nothing queued for it in plain text is sent any more. */
static void tls_failed(client_t *c, const char *why) {
    server_t *srv = c->srv;
    bool during_handshake = !tls_conn_handshake_done(c->tls);
    if (during_handshake) tls_note_handshake(srv, false);
    log_msg(LL_VERBOSE, "Error %s client TLS connection id=%llu addr=%s: %s",
            during_handshake ? "accepting a" : "reading from", (unsigned long long)c->id, c->addr, why);
    conn_discard_output(c);
    if (tls_conn_has_output(c->tls)) {
        c->flags |= CLIENT_CLOSE_AFTER_REPLY;
        conn_mark_pending_write(c);
    } else {
        conn_close_async(c);
    }
}

/* Ciphertext arrived (either engine): decrypt all of it and run what it
 * holds as conn_input does with plain bytes.  Handshake messages OpenSSL
 * answers with are queued as output. */
static void tls_input(client_t *c, const char *p, size_t n) {
    server_t *srv = c->srv;
    tls_conn_feed(c->tls, p, n);
    char plain[CLIENT_READ_CHUNK];
    for (;;) {
        long r = tls_conn_read(c->tls, plain, sizeof(plain));
        if (tls_conn_take_handshake_event(c->tls)) tls_note_handshake(srv, true);
        if (r > 0) {
            if (!plain_input(c, plain, (size_t)r)) return; /* freed: query buffer limit */
            if (c->flags & (CLIENT_CLOSE_AFTER_REPLY | CLIENT_CLOSE_ASAP)) break;
            continue;
        }
        if (r == TLS_READ_AGAIN) break;
        if (r == TLS_READ_CLOSED) {
            log_msg(LL_VERBOSE, "Client closed TLS connection id=%llu addr=%s", (unsigned long long)c->id, c->addr);
            conn_close_async(c);
            return;
        }
        tls_failed(c, tls_conn_error(c->tls));
        return;
    }
    if (tls_conn_has_output(c->tls)) conn_mark_pending_write(c);
    tls_conn_trim(c->tls);
}

void conn_adopt_tls(client_t *c, tls_conn_t *t) {
    c->tls = t;
    tls_note_accepted(c->srv);
    tls_input(c, "", 0);
}

/* epoll: one read of ciphertext, then as the io_uring engine's input. */
static void read_tls(client_t *c) {
    char cipher[CLIENT_READ_CHUNK];
    ssize_t n = read(c->fd, cipher, sizeof(cipher));
    if (read_ended(c, n)) return;
    conn_input(c, cipher, (size_t)n);
}

/* Encrypt queued replies into the TLS session, a bounded amount per call
 * (a huge reply is not doubled in memory at once). */
#define TLS_ENCRYPT_MAX (256 * 1024)
static int plain_output_iov(client_t *c, struct iovec *iov, int max);
static void consume_output(client_t *c, size_t n);

static void tls_encrypt_pending(client_t *c) {
    size_t done = 0;
    while (done < TLS_ENCRYPT_MAX && c->bufpos + c->reply_bytes > 0) {
        struct iovec v[MAX_IOV];
        int cnt = plain_output_iov(c, v, MAX_IOV);
        if (cnt == 0) return;
        for (int i = 0; i < cnt; i++) {
            long w = tls_conn_write(c->tls, v[i].iov_base, v[i].iov_len);
            if (w < 0) {
                tls_failed(c, tls_conn_error(c->tls));
                return;
            }
            if (w == 0) return; /* handshake not done */
            consume_output(c, (size_t)w);
            done += (size_t)w;
            if ((size_t)w < v[i].iov_len || done >= TLS_ENCRYPT_MAX) return;
        }
    }
}

/* The ciphertext to send: what is left of the last, else the queued
 * replies encrypted now.  One vector. */
static int tls_output_iov(client_t *c, struct iovec *iov) {
    size_t len;
    const char *p = tls_conn_output(c->tls, &len);
    if (len == 0) {
        tls_encrypt_pending(c);
        p = tls_conn_output(c->tls, &len);
    }
    if (len == 0) return 0;
    iov[0].iov_base = (void *)p;
    iov[0].iov_len = len;
    return 1;
}

/* ------------------------------------------------------------ writing */

static bool plain_pending(const client_t *c) { return c->bufpos > 0 || c->reply_head != NULL; }

/* A TLS client's replies wait for its handshake: until then only the
 * handshake's own messages are output. */
bool conn_has_pending_output(const client_t *c) {
    if (c->tls) return tls_conn_has_output(c->tls) || (plain_pending(c) && tls_conn_handshake_done(c->tls));
    return plain_pending(c);
}
size_t conn_output_bytes(const client_t *c) { return c->bufpos + c->reply_bytes; }

void conn_mark_pending_write(client_t *c) {
    /* script.c's fake client keeps its replies: redis.call reads them back */
    if (c->flags & (CLIENT_PENDING_WRITE | CLIENT_FAKE)) return;
    c->flags |= CLIENT_PENDING_WRITE;
    c->next_pending = c->srv->pending_write;
    c->srv->pending_write = c;
    evloop_request_before_sleep(c->srv->loop);
}

/* pubsub.c/monitor.c hook: output-buffer limits by client class (Redis's
 * rule: monitors count as normal clients, subscribers as pubsub).  Only the
 * block list is measured; the static buffer is bounded anyway.  A client
 * that has not authenticated (and must) may queue 1 KB of blocks at most,
 * whatever its class's limits (CVE-2025-21605: one that pipelined requests
 * without reading the -NOAUTH replies grew the server without bound; Redis
 * 7.0.15 as Debian ships it closes such a client past 1 KB). */
void conn_check_output_limit(client_t *c) {
    if (c->flags & (CLIENT_CLOSE_ASAP | CLIENT_CLOSE_AFTER_REPLY | CLIENT_FAKE)) return;
    if (c->flags & CLIENT_MASTER) return; /* its output is dropped anyway */
    int cls = (c->flags & CLIENT_REPLICA) ? OBUF_REPLICA : (c->flags & CLIENT_PUBSUB) ? OBUF_PUBSUB
                                                                                      : OBUF_NORMAL;
    const obuf_limit_t *lim = &c->srv->cfg.obuf_limits[cls];
    long long used = (long long)c->reply_bytes;
    bool over_hard = (lim->hard && used >= lim->hard) || (used > CONN_UNAUTH_OBUF_MAX && conn_auth_required(c));
    bool over_soft = false;
    if (lim->soft && used >= lim->soft) {
        long long now = c->srv->mstime;
        if (c->obuf_soft_since_ms == 0) c->obuf_soft_since_ms = now;
        else if (now - c->obuf_soft_since_ms > lim->soft_secs * 1000) over_soft = true;
    } else {
        c->obuf_soft_since_ms = 0;
    }
    if (!over_hard && !over_soft) return;
    log_msg(LL_WARNING, "Client id=%llu addr=%s scheduled to be closed ASAP for overcoming of output buffer limits.",
            (unsigned long long)c->id, c->addr);
    c->srv->stats.obuf_limit_disconnections++;
    conn_close_async(c);
}

/* Account n written bytes: drop the static buffer and whole blocks. */
static void consume_output(client_t *c, size_t n) {
    if (c->bufpos > 0) {
        size_t left = c->bufpos - c->sentlen;
        if (n < left) {
            c->sentlen += n;
            return;
        }
        n -= left;
        if (c->bufpos > c->buf_peak) c->buf_peak = c->bufpos;
        c->bufpos = 0;
        c->sentlen = 0;
    }
    while (c->reply_head) {
        reply_block *b = c->reply_head;
        size_t left = b->used - c->sentlen;
        if (n < left) {
            c->sentlen += n;
            return;
        }
        n -= left;
        c->reply_head = b->next;
        if (!c->reply_head) c->reply_tail = NULL;
        c->reply_bytes -= b->used;
        c->sentlen = 0;
        zfree(b);
    }
}

static void consume_sent(client_t *c, size_t n) {
    if (c->tls) tls_conn_sent(c->tls, n);
    else consume_output(c, n);
}

static bool flush_tls_now(client_t *c) {
    while (conn_has_pending_output(c)) {
        struct iovec v;
        if (tls_output_iov(c, &v) == 0) continue; /* nothing encrypted: the check above ends it */
        ssize_t n = write(c->fd, v.iov_base, v.iov_len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        stats_net_out(&c->srv->stats, n, c->flags & CLIENT_REPLICA);
        consume_sent(c, (size_t)n);
    }
    return true;
}

/* Send what the session holds straight to fd: false with errno when the
 * socket took not all of it (EAGAIN) or failed. */
static bool tls_drain_direct(client_t *c, int fd) {
    for (;;) {
        size_t len;
        const char *o = tls_conn_output(c->tls, &len);
        if (len == 0) return true;
        ssize_t w = write(fd, o, len);
        if (w < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        tls_conn_sent(c->tls, (size_t)w);
    }
}

ssize_t conn_write_direct(client_t *c, int fd, const char *p, size_t n) {
    if (!c->tls) return write(fd, p, n);
    if (c->ring) uring_conn_wait_send(c); /* its send reads the session's output buffer */
    if (!tls_drain_direct(c, fd)) return -1;
    long w = tls_conn_write(c->tls, p, n);
    if (w < 0 || (w == 0 && n > 0)) {
        errno = EIO;
        return -1;
    }
    if (!tls_drain_direct(c, fd) && errno != EAGAIN && errno != EWOULDBLOCK) return -1;
    return (ssize_t)w;
}

bool conn_flush_now(client_t *c) {
    if (c->ring) { /* io_uring: the send in flight first, in order */
        uring_conn_wait_send(c);
        if (c->flags & CLIENT_CLOSE_ASAP) return false;
    }
    if (c->tls) return flush_tls_now(c);
    while (conn_has_pending_output(c)) {
        const char *p;
        size_t len;
        if (c->bufpos > 0) {
            p = c->buf + c->sentlen;
            len = c->bufpos - c->sentlen;
        } else {
            p = c->reply_head->buf + c->sentlen;
            len = c->reply_head->used - c->sentlen;
        }
        if (len == 0) {
            consume_output(c, 0);
            continue;
        }
        ssize_t n = write(c->fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        stats_net_out(&c->srv->stats, n, c->flags & CLIENT_REPLICA);
        consume_output(c, (size_t)n);
    }
    return true;
}

bool conn_flush_wait(client_t *c) {
    for (;;) {
        errno = 0;
        if (conn_flush_now(c)) return true;
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return false;
        struct pollfd pfd = {.fd = c->fd, .events = POLLOUT};
        if (poll(&pfd, 1, -1) < 0 && errno != EINTR) return false;
    }
}

sds conn_detach(client_t *c) {
    /* Pipelined after the running request, then what the engine holds. */
    sds caught = c->input_rest ? sds_newlen(c->input_rest, c->input_rest_len) : sds_empty();
    if (c->ring && c->tls) { /* the engine holds ciphertext: the session decrypts it later */
        sds cipher = uring_conn_detach(c, sds_empty());
        tls_conn_feed(c->tls, cipher, sds_len(cipher));
        sds_free(cipher);
    } else if (c->ring) {
        caught = uring_conn_detach(c, caught);
    }
    evloop_io_free(c->io);
    c->io = NULL;
    return caught;
}

/* Wait until fd is ready for events: false when poll fails. */
static bool wait_fd(int fd, short events) {
    struct pollfd pfd = {.fd = fd, .events = events};
    return poll(&pfd, 1, -1) >= 0 || errno == EINTR;
}

/* The session's ciphertext out to c->fd, waiting while the socket is full. */
static bool tls_drain_blocking(client_t *c) {
    while (!tls_drain_direct(c, c->fd)) {
        if (errno != EAGAIN && errno != EWOULDBLOCK) return false;
        if (!wait_fd(c->fd, POLLOUT)) return false;
    }
    return true;
}

long conn_recv_blocking(client_t *c, char *buf, size_t cap) {
    char cipher[CLIENT_READ_CHUNK];
    for (;;) {
        if (c->tls) {
            long r = tls_conn_read(c->tls, buf, cap);
            if (r > 0) return r;
            if (r != TLS_READ_AGAIN) return -1;    /* close_notify or a bad record */
            if (!tls_drain_blocking(c)) return -1; /* what OpenSSL answered with */
        }
        char *dst = c->tls ? cipher : buf;
        size_t want = c->tls ? sizeof(cipher) : cap;
        ssize_t n = read(c->fd, dst, want);
        if (n > 0 && !c->tls) return n;
        if (n > 0) {
            tls_conn_feed(c->tls, cipher, (size_t)n);
            continue;
        }
        if (n == 0) return 0;
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
        if (!wait_fd(c->fd, POLLIN)) return -1;
    }
}

bool conn_send_blocking(client_t *c, const char *p, size_t n) {
    if (c->tls) {
        if (!tls_drain_blocking(c)) return false; /* earlier records first */
        if (tls_conn_write(c->tls, p, n) != (long)n) return false;
        return tls_drain_blocking(c);
    }
    while (n > 0) {
        ssize_t w = write(c->fd, p, n);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
        } else if (w < 0 && errno == EINTR) {
            continue;
        } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!wait_fd(c->fd, POLLOUT)) return false;
        } else {
            return false;
        }
    }
    return true;
}

int conn_output_iov(client_t *c, struct iovec *iov, int max) {
    if (c->tls) return max > 0 ? tls_output_iov(c, iov) : 0;
    return plain_output_iov(c, iov, max);
}

static int plain_output_iov(client_t *c, struct iovec *iov, int max) {
    int cnt = 0;
    size_t off = c->sentlen;
    if (c->bufpos > 0) {
        iov[cnt].iov_base = c->buf + off;
        iov[cnt++].iov_len = c->bufpos - off;
        off = 0;
    }
    for (reply_block *b = c->reply_head; b && cnt < max; b = b->next) {
        if (b->used == off) {
            off = 0;
            continue;
        }
        iov[cnt].iov_base = b->buf + off;
        iov[cnt++].iov_len = b->used - off;
        off = 0;
    }
    if (cnt == 0) consume_output(c, 0); /* only empty blocks left: drop them */
    return cnt;
}

/* io_uring: a send ended.  Never frees c here (its caller may still hold
 * it): errors and close-after-reply go through conn_close_async. */
void conn_sent(client_t *c, long n) {
    if (n < 0) {
        if (n == -EAGAIN || n == -EINTR) {
            conn_mark_pending_write(c);
        } else if (n != -ECANCELED) {
            log_msg(LL_VERBOSE, "Error writing to client: %s", strerror((int)-n));
            conn_close_async(c);
        }
        return;
    }
    stats_net_out(&c->srv->stats, n, c->flags & CLIENT_REPLICA);
    consume_sent(c, (size_t)n);
    conn_track_memory(c);
    if (conn_has_pending_output(c)) conn_mark_pending_write(c);
    else if (c->flags & CLIENT_CLOSE_AFTER_REPLY) conn_close_async(c);
}

/* Write as much as the socket takes.  Returns -1 if the client was freed. */
static int write_to_client(client_t *c) {
    server_t *srv = c->srv;
    while (conn_has_pending_output(c)) {
        struct iovec iov[MAX_IOV];
        int cnt = conn_output_iov(c, iov, MAX_IOV);
        if (cnt == 0) continue;
        /* One buffer (the usual reply): plain write, the cheaper syscall. */
        ssize_t n = cnt == 1 ? write(c->fd, iov[0].iov_base, iov[0].iov_len) : writev(c->fd, iov, cnt);
        srv->stats.io_writes++;
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) break;
            if (errno == EINTR) continue;
            log_msg(LL_VERBOSE, "Error writing to client: %s", strerror(errno));
            conn_free(c);
            return -1;
        }
        stats_net_out(&c->srv->stats, n, c->flags & CLIENT_REPLICA);
        consume_sent(c, (size_t)n);
    }
    conn_track_memory(c);
    if (!conn_has_pending_output(c)) {
        if (c->flags & CLIENT_IN_WRITE_WAIT) {
            c->flags &= ~CLIENT_IN_WRITE_WAIT;
            evloop_io_want_write(c->io, false);
        }
        if (c->flags & CLIENT_CLOSE_AFTER_REPLY) {
            conn_free(c);
            return -1;
        }
    } else if (!(c->flags & CLIENT_IN_WRITE_WAIT)) {
        c->flags |= CLIENT_IN_WRITE_WAIT;
        evloop_io_want_write(c->io, true);
    }
    return 0;
}

void conn_before_sleep(void *arg) {
    server_t *srv = arg;
    srv->conn_hooks->before_sleep(srv); /* resumed clients and BCAST pushes: flushed just below */
    while (srv->pending_write) {
        client_t *c = srv->pending_write;
        srv->pending_write = c->next_pending;
        c->flags &= ~CLIENT_PENDING_WRITE;
        if (c->flags & CLIENT_CLOSE_ASAP) continue;
        if (c->flags & CLIENT_IN_WRITE_WAIT) continue; /* the write event will do it */
        if (c->ring) uring_conn_flush(c);
        else write_to_client(c);
    }
    client_t *kept = NULL; /* a client running a script is freed after it returns */
    while (srv->close_asap) {
        client_t *c = srv->close_asap;
        srv->close_asap = c->next_close;
        if (c->flags & CLIENT_PROTECTED) {
            c->next_close = kept;
            kept = c;
            continue;
        }
        c->flags &= ~CLIENT_CLOSE_ASAP;
        conn_free(c);
    }
    srv->close_asap = kept;
    io_engine_submit(srv); /* the round's sends, re-armed receives and cancels: one system call */
}

/* While a script runs past busy-reply-threshold, the event loop is not
 * running (the script is inside one of its callbacks, and libevent does
 * not re-enter): script.c's hook calls this to accept, read and answer
 * other clients with a zero-timeout poll.  `skip` (the script's caller)
 * is not read.  Clients are found again by id after the poll, since
 * serving one may free another. */
void conn_serve_while_busy(server_t *srv, client_t *skip) {
    size_t cap = (size_t)srv->listen_count + srv->client_count;
    if (cap == 0) return;
    struct pollfd *pf = zmalloc(sizeof(*pf) * cap);
    uint64_t *ids = zmalloc(sizeof(*ids) * cap);
    size_t n = 0;
    for (int i = 0; i < srv->listen_count && n < cap; i++, n++) {
        pf[n] = (struct pollfd){.fd = srv->listen_fds[i], .events = POLLIN};
        ids[n] = 0;
    }
    for (client_t *c = srv->clients_head; c && n < cap; c = c->next) {
        if (c == skip || c->fd < 0 || c->ring || (c->flags & (CLIENT_CLOSE_ASAP | CLIENT_CLOSE_AFTER_REPLY))) continue;
        pf[n] = (struct pollfd){.fd = c->fd, .events = (short)(POLLIN | ((c->flags & CLIENT_IN_WRITE_WAIT) ? POLLOUT : 0))};
        ids[n++] = c->id;
    }
    if (poll(pf, (nfds_t)n, 0) > 0) {
        for (size_t i = 0; i < n; i++) {
            if (!pf[i].revents) continue;
            if (ids[i] == 0) {
                accept_clients(srv, pf[i].fd, srv->listen_tls[i]);
                continue;
            }
            client_t *c = srv->clients_head;
            while (c && c->id != ids[i]) c = c->next;
            if (c) client_io(c->fd, (pf[i].revents & (POLLIN | POLLHUP | POLLERR)) != 0, (pf[i].revents & POLLOUT) != 0, c);
        }
    }
    zfree(pf);
    zfree(ids);
    io_engine_serve_now(srv, skip); /* io_uring clients: their completions */
    conn_before_sleep(srv);
}

void conn_read_if_ready(client_t *c) {
    if (c->fd < 0 || c->ring || (c->flags & (CLIENT_CLOSE_ASAP | CLIENT_CLOSE_AFTER_REPLY))) return;
    struct pollfd pf = {.fd = c->fd, .events = POLLIN};
    if (poll(&pf, 1, 0) > 0 && (pf.revents & (POLLIN | POLLHUP | POLLERR))) client_io(c->fd, true, false, c);
}

static void client_io(int fd, bool readable, bool writable, void *arg) {
    (void)fd;
    client_t *c = arg;
    if (writable && write_to_client(c) < 0) return;
    if (readable && !(c->flags & (CLIENT_CLOSE_AFTER_REPLY | CLIENT_CLOSE_ASAP))) read_from_client(c);
}

/* ------------------------------------------------------------ cron, info */

/* The query buffer's free space is given back as Redis 7.0's
 * clientsCronResizeQueryBuffer does, once it wastes more than 4 KB: all of
 * it after 2 s of quiet (an idle connection holds no buffer; it grows again
 * on demand), and while busy the part above the largest input since the
 * last visit once the buffer is past 32 KB and twice that (a big bulk's
 * buffer does not stay with a client that now sends small requests). */
#define QUERYBUF_IDLE_MS 2000
#define QUERYBUF_KEEP (4 * 1024)
#define QUERYBUF_RESIZE_THRESHOLD (32 * 1024)

static void resize_querybuf(client_t *c, long long now) {
    size_t len = sds_len(c->querybuf), alloc = sds_alloc(c->querybuf);
    size_t peak = c->querybuf_tick_peak;
    c->querybuf_tick_peak = len;
    if (alloc - len <= QUERYBUF_KEEP) return;
    if (now - c->last_interaction_ms >= QUERYBUF_IDLE_MS) {
        if (len == 0) {
            sds_free(c->querybuf);
            c->querybuf = sds_empty();
            c->querybuf_peak = 0;
        } else {
            c->querybuf = sds_remove_free(c->querybuf);
        }
        return;
    }
    if (alloc <= QUERYBUF_RESIZE_THRESHOLD || alloc / 2 <= peak) return;
    size_t keep = len > peak ? len : peak;
    /* inside a bulk: room for the rest of it, which is coming */
    if (c->parser.kind == '*' && c->parser.bulk_len > 0 && (size_t)c->parser.bulk_len + 2 > keep)
        keep = (size_t)c->parser.bulk_len + 2;
    if (keep >= alloc) return;
    sds s = sds_newlen(c->querybuf, len);
    if (keep > len) s = sds_make_room_exact(s, keep - len);
    sds_free(c->querybuf);
    c->querybuf = s;
}

/* One client's turn in the cron: shrink its idle query buffer, close it
 * past `timeout` (may free c). */
/* A TLS handshake gets this long: a client that opened the connection and
 * never finished it holds no slot for ever, whatever `timeout` says. */
#define TLS_HANDSHAKE_TIMEOUT_MS 10000

static void cron_client(server_t *srv, client_t *c, long long timeout_ms) {
    resize_querybuf(c, srv->mstime);
    if (c->tls && !tls_conn_handshake_done(c->tls) && srv->mstime - c->ctime_ms > TLS_HANDSHAKE_TIMEOUT_MS) {
        tls_note_handshake(srv, false);
        log_msg(LL_VERBOSE, "Closing client whose TLS handshake did not finish id=%llu addr=%s",
                (unsigned long long)c->id, c->addr);
        conn_free(c);
        return;
    }
    if (srv->mstime - c->buf_peak_since_ms >= 5000) { /* Redis's window for rbp */
        c->buf_peak = c->bufpos;
        c->buf_peak_since_ms = srv->mstime;
    }
    conn_track_memory(c); /* replies others pushed to it (pub/sub, MONITOR) */
    if (timeout_ms <= 0) return;
    if (c->flags & (CLIENT_BLOCKED | CLIENT_SHUTDOWN_WAIT)) return; /* as Redis: blocked clients have their own timeout */
    if (c->flags & (CLIENT_MASTER | CLIENT_REPLICA)) return;        /* repl-timeout governs replication links */
    if (srv->mstime - c->last_interaction_ms > timeout_ms) {
        log_msg(LL_VERBOSE, "Closing idle client");
        conn_free(c);
    } else if (c->partial_since_ms && srv->mstime - c->partial_since_ms > timeout_ms) {
        /* Beyond Redis: `timeout` also bounds how long one request may
         * take to arrive, so a slow-drip client cannot hold a
         * connection (and its buffer) forever. */
        log_msg(LL_VERBOSE, "Closing client whose request took longer than timeout id=%llu addr=%s",
                (unsigned long long)c->id, c->addr);
        conn_free(c);
    }
}

/* Each tick visits clients/hz clients, at least CRON_MIN_CLIENTS (all of
 * them when there are fewer), going on where the previous tick stopped:
 * every client comes round about once a second, and a tick with 10,000
 * clients visits 1,000 of them at hz 10, or 125 at the 80 that dynamic-hz
 * gives it (server_adapt_hz), as Redis's clientsCron.  Walking them all
 * each tick made a tick's stall grow with the number of clients. */
#define CRON_MIN_CLIENTS 5
void conn_cron(server_t *srv) {
    long long timeout_ms = srv->cfg.timeout * 1000;
    size_t n = srv->client_count / (size_t)srv->hz;
    if (n < CRON_MIN_CLIENTS) n = CRON_MIN_CLIENTS;
    if (n > srv->client_count) n = srv->client_count;
    for (size_t i = 0; i < n; i++) {
        client_t *c = srv->cron_next ? srv->cron_next : srv->clients_head;
        if (!c) break;
        srv->cron_next = c->next; /* before c may be freed */
        cron_client(srv, c, timeout_ms);
    }
}

sds conn_info_string(sds s, client_t *c) {
    long long now = c->srv->mstime;
    char flags[16]; /* room for every flag letter */
    int fl = 0;
    conn_client_info_t info;
    c->srv->conn_hooks->client_info(c, &info);
    if (c->flags & CLIENT_REPLICA) flags[fl++] = 'S'; /* repl_master.c */
    if (c->flags & CLIENT_MASTER) flags[fl++] = 'M';  /* repl_replica.c */
    if (c->flags & CLIENT_MONITOR) flags[fl++] = 'O'; /* monitor.c */
    if (c->flags & CLIENT_PUBSUB) flags[fl++] = 'P';  /* pubsub.c */
    if (c->flags & CLIENT_CLOSE_AFTER_REPLY) flags[fl++] = 'c';
    if (c->flags & (CLIENT_BLOCKED | CLIENT_PAUSED)) flags[fl++] = 'b';
    if (c->flags & CLIENT_UNIX_SOCKET) flags[fl++] = 'U';
    for (const char *t = info.tracking_flags; *t; t++) flags[fl++] = *t; /* t, R, B */
    if (c->mstate) flags[fl++] = 'x';
    if (c->flags & CLIENT_NO_EVICT) flags[fl++] = 'e';
    if (c->flags & CLIENT_NO_TOUCH) flags[fl++] = 'T';
    if (fl == 0) flags[fl++] = 'N';
    flags[fl] = '\0';
    char events[3] = {0};
    events[0] = 'r';
    if (c->flags & CLIENT_IN_WRITE_WAIT) events[1] = 'w';
    size_t qbuf = sds_len(c->querybuf) + c->input_batch_len;
    /* An empty buffer's few bytes of allocator slack are no buffer: 0, as
     * Redis shows a buffer its cron gave back. */
    size_t qbuf_free = sds_len(c->querybuf) == 0 && sds_alloc(c->querybuf) < 16 ? 0 : sds_avail(c->querybuf);
    size_t obl = c->bufpos, oll = 0;
    for (reply_block *b = c->reply_head; b; b = b->next) oll++;
    /* argv-mem: the arguments of the command running (the caller's own
     * CLIENT LIST); an idle client has none */
    size_t argv_mem = 0;
    for (int i = 0; i < c->argc; i++) argv_mem += obj_string_len(c->argv[i]);
    size_t totmem = conn_client_memory(c) + argv_mem + sizeof(robj *) * (size_t)c->argc;
    return sds_catprintf(s,
                         "id=%llu addr=%s laddr=%s fd=%d name=%s age=%lld idle=%lld flags=%s db=%d sub=%zu psub=%zu ssub=%zu "
                         "multi=%d watch=%d qbuf=%zu qbuf-free=%zu argv-mem=%zu multi-mem=%zu rbs=%d rbp=%zu obl=%zu oll=%zu omem=%zu "
                         "tot-mem=%zu events=%s cmd=%s user=%s redir=%lld resp=%d lib-name=%s lib-ver=%s",
                         (unsigned long long)c->id, c->addr, c->laddr, c->fd, c->name ? c->name : "",
                         (now - c->ctime_ms) / 1000, (now - c->last_interaction_ms) / 1000, flags, c->db->id,
                         info.sub, info.psub, info.ssub, info.multi, info.watch,
                         qbuf, qbuf_free, argv_mem, c->multi_bytes, CLIENT_BUF_SIZE, c->buf_peak, obl, oll, c->reply_bytes, totmem,
                         events, c->lastcmd ? c->lastcmd->fullname : "NULL", info.user, info.redir, c->resp,
                         c->lib_name ? c->lib_name : "", c->lib_ver ? c->lib_ver : "");
}

/* The engine's way up (io_engine.h): lifecycle.c passes it to
 * io_engine_init, so the engine below never calls conn.c by name. */
static const io_conn_ops_t conn_ops_for_engine = {
    .input = conn_input,
    .sent = conn_sent,
    .output_iov = conn_output_iov,
    .has_pending_output = conn_has_pending_output,
    .mark_pending_write = conn_mark_pending_write,
    .free = conn_free,
    .release = conn_release,
};

const io_conn_ops_t *conn_io_ops(void) { return &conn_ops_for_engine; }
