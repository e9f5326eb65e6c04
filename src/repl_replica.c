/* repl_replica.c: the replica side of replication (REPLICAOF).
 *
 * The link to the master is a small state machine driven by one watcher
 * on its socket (states in repl_state.h): non-blocking connect, then the
 * handshake, one command and one reply line per state:
 *   PING -> [AUTH [masteruser] masterauth] -> REPLCONF listening-port
 *   -> [REPLCONF ip-address] -> REPLCONF capa eof capa psync2
 *   -> PSYNC <replid> <offset+1>   (or "? -1" with no history)
 * "+CONTINUE [replid]" turns the socket into the master client at once;
 * "+FULLRESYNC <replid> <offset>" is followed by the RDB, either
 * "$<len>\r\n<bytes>" or "$EOF:<mark>\r\n<bytes><mark>" (diskless
 * masters), written to a file that replaces dbfilename (repl_sync_file.c)
 * or, with repl-diskless-load, loaded as it arrives (repl_load.c); then
 * the socket becomes the master client.  Lines are read a byte at a time so
 * nothing past them is consumed; the payload is read in large chunks.
 *
 * The master client (CLIENT_MASTER) runs the stream like any client's
 * requests, its replies dropped; after each command conn.c reports the
 * bytes it consumed (repl_master_applied), which advance our offset and
 * go verbatim to our backlog and our own replicas (chained replication).
 * Every second we send REPLCONF ACK <offset>; a link silent for
 * repl-timeout seconds is dropped and re-established, with PSYNC asking
 * only for what we miss. */
#include "repl_state.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "aof.h"
#include "evloop.h"
#include "durability_hooks.h"
#include "keyspace.h"
#include "log.h"
#include "net.h"
#include "resp.h"
#include "supervise.h"
#include "tls.h"
#include "tls_conn.h"
#include "rdb.h"
#include "reply.h"
#include "util.h"

#define TRANSFER_CHUNK (1024 * 1024)
#define LINE_MAX_LEN 1024

static repl_link_t *L(server_t *srv) { return &R(srv)->link; }

bool repl_is_replica(const server_t *srv) { return R(srv) && R(srv)->link.state != LINK_NONE; }
bool repl_client_is_master(const client_t *c) { return (c->flags & CLIENT_MASTER) != 0; }
bool repl_keys_expire_locally(const server_t *srv) { return !repl_is_replica(srv); }

/* Close the handshake/transfer socket (not the master client's). */
static void close_link_socket(repl_link_t *l) {
    if (l->io) evloop_io_free(l->io);
    l->io = NULL;
    if (l->fd >= 0 && !l->master) close(l->fd);
    l->fd = -1;
    tls_conn_free(l->tls); /* the handshake's; the master client owns its own (become_connected) */
    l->tls = NULL;
    sds_free(l->line);
    l->line = NULL;
    zfree(l->chunk);
    l->chunk = NULL;
    repl_sync_file_discard(l);
}

/* Give up on this attempt; the cron connects again. */
static void link_abort(server_t *srv, const char *why) {
    repl_link_t *l = L(srv);
    if (why) log_msg(LL_WARNING, "MASTER <-> REPLICA sync: %s", why);
    close_link_socket(l);
    if (l->state != LINK_NONE) l->state = LINK_CONNECT;
}

void replica_free_link(server_t *srv) {
    repl_link_t *l = L(srv);
    close_link_socket(l);
    if (l->master) {
        client_t *m = l->master;
        l->master = NULL;
        l->resume_db = m->db->id;
        m->flags &= ~CLIENT_MASTER; /* no "link lost" handling: we dropped it */
        conn_close_async(m);
    }
}

/* ------------------------------------------------------------ TLS */

/* tls-replication: the session's records to the socket (written whole, as
 * the handshake's commands are). */
static bool link_flush_tls(repl_link_t *l) {
    for (;;) {
        size_t len;
        const char *p = tls_conn_output(l->tls, &len);
        if (len == 0) return true;
        if (rio_write_all(l->fd, p, len) != 0) return false;
        tls_conn_sent(l->tls, len);
    }
}

/* Ciphertext the socket has now into the session: read()'s results. */
static ssize_t link_pull_tls(repl_link_t *l) {
    char cipher[16 * 1024];
    ssize_t got = read(l->fd, cipher, sizeof(cipher));
    if (got > 0) tls_conn_feed(l->tls, cipher, (size_t)got);
    return got;
}

/* read(2) on the link: plain, or the plaintext of the TLS session, n
 * bytes or all there is: the session never keeps plaintext while the
 * socket is drained (nothing would wake the link for it), except past n
 * (the caller reads on, or the master client takes the session over). */
static ssize_t link_read(repl_link_t *l, void *buf, size_t n) {
    if (!l->tls) return read(l->fd, buf, n);
    size_t done = 0;
    while (done < n) {
        long r = tls_conn_read(l->tls, (char *)buf + done, n - done);
        if (!link_flush_tls(l)) return done ? (ssize_t)done : -1;
        if (r > 0) {
            done += (size_t)r;
            continue;
        }
        if (r == TLS_READ_CLOSED) return (ssize_t)done;
        if (r == TLS_READ_ERROR) {
            log_msg(LL_WARNING, "MASTER <-> REPLICA sync: TLS error: %s", tls_conn_error(l->tls));
            errno = EPROTO;
            return -1;
        }
        ssize_t got = link_pull_tls(l);
        if (got <= 0) return done ? (ssize_t)done : got;
    }
    return (ssize_t)done;
}

static bool link_write(repl_link_t *l, const char *p, size_t n) {
    if (!l->tls) return rio_write_all(l->fd, p, n) == 0;
    return tls_conn_write(l->tls, p, n) == (long)n && link_flush_tls(l);
}

/* ------------------------------------------------------------ sending */

static bool send_command_lens(repl_link_t *l, int argc, const char **argv, const size_t *lens) {
    sds cmd = resp_cat_command(sds_empty(), argc, argv, lens);
    bool ok = link_write(l, cmd, sds_len(cmd));
    sds_free(cmd);
    return ok;
}

static bool send_command(repl_link_t *l, int argc, const char **argv) {
    size_t lens[8];
    for (int i = 0; i < argc; i++) lens[i] = strlen(argv[i]);
    return send_command_lens(l, argc, argv, lens);
}

/* AUTH [masteruser] masterauth: the password is an sds, any bytes. */
static bool send_auth(server_t *srv, repl_link_t *l) {
    const char *user = srv->cfg.masteruser;
    char *pass = srv->cfg.masterauth;
    bool with_user = user && user[0];
    const char *av[3] = {"AUTH", with_user ? user : pass, pass};
    size_t lens[3] = {4, with_user ? strlen(user) : sds_len(pass), sds_len(pass)};
    return send_command_lens(l, with_user ? 3 : 2, av, lens);
}

void replica_send_ack(server_t *srv) {
    repl_link_t *l = L(srv);
    if (l->state != LINK_CONNECTED || !l->master) return;
    char off[32], fack[32];
    util_ll2str(off, sizeof(off), R(srv)->master_repl_offset);
    /* FACK: what our AOF has fsynced, for the master's WAITAOF (7.2). */
    long long fsynced = srv->aof ? aof_fsynced_tag(srv->aof) : -1;
    l->acked_fsynced = fsynced;
    util_ll2str(fack, sizeof(fack), fsynced);
    const char *av[5] = {"REPLCONF", "ACK", off, "FACK", fack};
    size_t lens[5] = {8, 3, strlen(off), 4, strlen(fack)};
    int n = fsynced >= 0 ? 5 : 3;
    sds cmd = resp_cat_command(sds_empty(), n, av, lens);
    l->master->flags |= CLIENT_MASTER_FORCE_REPLY;
    reply_raw(l->master, cmd, sds_len(cmd));
    l->master->flags &= ~CLIENT_MASTER_FORCE_REPLY;
    sds_free(cmd);
}

/* After the AOF flush (appendfsync always fsyncs there), before replies go
 * out, and from the cron (background fsyncs): WAITAOF waiters whose local
 * fsync came are answered now; a replica whose AOF fsynced more since its
 * last ACK tells its master now, not at the next one-second ACK (as Redis
 * 7.2's do). */
void repl_after_aof_flush(server_t *srv) {
    repl_link_t *l = L(srv);
    R(srv)->aof_fsynced = srv->aof ? aof_fsynced_tag(srv->aof) : -1;
    if (R(srv)->waiters) master_check_waiters(srv);
    if (l->state != LINK_CONNECTED || !l->master || !srv->aof) return;
    if (aof_fsynced_tag(srv->aof) != l->acked_fsynced) replica_send_ack(srv);
}

/* ------------------------------------------------------------ reading */

/* Read one reply line (without CRLF) into l->line; false if incomplete
 * (or the link failed: state is then CONNECT). */
static bool read_line(server_t *srv, sds *out) {
    repl_link_t *l = L(srv);
    if (!l->line) l->line = sds_empty();
    for (;;) {
        char ch;
        ssize_t n = link_read(l, &ch, 1);
        if (n == 0) {
            link_abort(srv, "Master closed the connection");
            return false;
        }
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return false;
            link_abort(srv, strerror(errno));
            return false;
        }
        l->last_io_ms = srv->mstime;
        if (ch == '\n') break;
        if (sds_len(l->line) >= LINE_MAX_LEN) {
            link_abort(srv, "reply line too long");
            return false;
        }
        l->line = sds_catlen(l->line, &ch, 1);
    }
    size_t len = sds_len(l->line);
    if (len && l->line[len - 1] == '\r') sds_setlen(l->line, len - 1);
    *out = l->line;
    l->line = NULL;
    return true;
}

/* ----------------------------------------------------- the master client */

client_t *repl_master_link(server_t *srv) {
    repl_link_t *l = R(srv) ? L(srv) : NULL;
    return l && l->state == LINK_CONNECTED ? l->master : NULL;
}

static void become_connected(server_t *srv, const char *leftover, size_t n) {
    repl_link_t *l = L(srv);
    evloop_io_free(l->io);
    l->io = NULL;
    client_t *m = conn_create_client(srv, l->fd);
    tls_conn_t *tls = l->tls; /* the client takes it over below */
    l->tls = NULL;
    if (l->applying) sds_clear(l->applying);
    m->flags |= CLIENT_MASTER | CLIENT_AUTHENTICATED;
    m->user = NULL; /* the master's stream is applied whatever the default user may do */
    l->master = m;
    l->state = LINK_CONNECTED;
    l->last_io_ms = srv->mstime;
    l->down_since_ms = 0;
    master_ensure_backlog(srv);
    if (l->on_connected) { /* a FAILOVER handover is complete (repl_failover.c) */
        void (*fn)(server_t *) = l->on_connected;
        l->on_connected = NULL;
        fn(srv);
    }
    if (n) {
        m->querybuf = sds_catlen(m->querybuf, leftover, n);
        conn_process_input(m);
    }
    if (tls) conn_adopt_tls(m, tls); /* after the leftover: the session holds what followed it */
}

void repl_master_consumed(client_t *c, const char *p, size_t len) {
    repl_link_t *l = L(c->srv);
    if (l->master != c || len == 0) return;
    if (!l->applying) l->applying = sds_empty();
    l->applying = sds_catlen(l->applying, p, len);
}

void repl_master_resume(server_t *srv) {
    client_t *m = L(srv)->master;
    if (m && !srv->script_busy && m->qb_pos < sds_len(m->querybuf) && !(m->flags & CLIENT_PAUSED))
        conn_process_input(m);
}

void repl_master_applied(client_t *c) {
    server_t *srv = c->srv;
    repl_link_t *l = L(srv);
    if (l->master != c || !l->applying || sds_len(l->applying) == 0) return;
    l->last_io_ms = srv->mstime;
    /* Our backlog and our replicas get exactly the master's bytes. */
    master_feed_raw(srv, l->applying, sds_len(l->applying));
    sds_clear(l->applying);
}

/* ------------------------------------------------------------ the RDB */

/* The RDB is in: the master's history becomes ours and the socket turns
 * into the master client (leftover: bytes already read past the RDB). */
static void full_sync_done(server_t *srv, long long keys, long long bytes, const char *leftover, size_t n) {
    repl_t *r = R(srv);
    repl_link_t *l = L(srv);
    /* The master's history is ours now; our replicas must sync again. */
    memcpy(r->replid, l->fullsync_replid, sizeof(r->replid));
    memset(r->replid2, '0', REPL_ID_LEN);
    r->second_replid_offset = -1;
    r->master_repl_offset = l->fullsync_offset;
    backlog_free(r->backlog);
    r->backlog = backlog_create((size_t)srv->cfg.repl_backlog_size, r->master_repl_offset + 1);
    master_disconnect_replicas(srv);
    srv->dirty++;
    if (aof_is_on(srv->aof)) aof_resynced(srv->aof); /* a rewrite: the file must describe the new data */
    log_msg(LL_NOTICE, "MASTER <-> REPLICA sync: Finished with success (%lld keys, %lld bytes)", keys, bytes);
    supervise_tell(srv->cfg.supervised, "STATUS=MASTER <-> REPLICA sync: Finished with success. Ready to accept "
                                        "connections in read-write mode.\n");
    become_connected(srv, leftover, n);
    replica_send_ack(srv); /* a diskless master starts the stream at this ACK */
}

/* While the master's RDB loads, a newline to the master once a second, as
 * Redis's replicas send: it is the master's sign that we are alive (its
 * repl-timeout would otherwise end a long load's link). */
static void ping_master_while_loading(server_t *srv) {
    repl_link_t *l = L(srv);
    if (l->fd >= 0) (void)link_write(l, "\n", 1);
}

/* repl-diskless-load (repl_load.c): the payload is loaded as it arrives. */
static void load_from_socket(server_t *srv) {
    repl_link_t *l = L(srv);
    sds rest = NULL;
    long long keys = 0;
    bool ok = repl_load_from_socket(srv, l->fd, link_read, l->transfer_size, l->transfer_size < 0 ? l->eof_mark : NULL, &rest,
                                    &keys, ping_master_while_loading);
    if (!ok) {
        sds_free(rest);
        link_abort(srv, NULL);
        return;
    }
    long long bytes = srv->load.loaded;
    full_sync_done(srv, keys, bytes, rest, sds_len(rest));
    sds_free(rest);
}

static void flush_old_data(server_t *srv) {
    log_msg(LL_NOTICE, "MASTER <-> REPLICA sync: Flushing old data");
    for (int i = 0; i < srv->dbnum; i++) {
        if (srv->cfg.replica_lazy_flush) db_empty_async(&srv->dbs[i]); /* freed on the bio thread */
        else db_empty(&srv->dbs[i]);
    }
    srv->durability_hooks->flush_functions(srv); /* function.c */
}

/* The whole RDB is in the temp file: it becomes dbfilename and is loaded. */
static void load_sync_file(server_t *srv, long long rdb_len) {
    if (!repl_sync_file_install(srv, rdb_len)) {
        link_abort(srv, NULL);
        return;
    }
    flush_old_data(srv);
    log_msg(LL_NOTICE, "MASTER <-> REPLICA sync: Loading DB in memory");
    long long keys = 0;
    if (!repl_sync_file_load(srv, &keys, ping_master_while_loading)) {
        for (int i = 0; i < srv->dbnum; i++) db_empty(&srv->dbs[i]);
        link_abort(srv, NULL);
        return;
    }
    zfree(L(srv)->chunk);
    L(srv)->chunk = NULL;
    full_sync_done(srv, keys, rdb_len, NULL, 0);
}

/* Keep the last REPL_ID_LEN bytes read; true when they are the EOF mark. */
static bool ends_with_mark(repl_link_t *l, const char *p, size_t n) {
    if (n >= REPL_ID_LEN) {
        memcpy(l->tail, p + n - REPL_ID_LEN, REPL_ID_LEN);
    } else {
        memmove(l->tail, l->tail + n, REPL_ID_LEN - n);
        memcpy(l->tail + REPL_ID_LEN - n, p, n);
    }
    return l->transfer_read >= REPL_ID_LEN && !memcmp(l->tail, l->eof_mark, REPL_ID_LEN);
}

/* The "$<len>" or "$EOF:<mark>" line; false when the link was dropped or
 * the payload went to repl_load.c (the transfer is then over). */
static bool start_transfer(server_t *srv, sds line) {
    repl_link_t *l = L(srv);
    if (line[0] == '-') {
        log_msg(LL_WARNING, "MASTER aborted replication with an error: %s", line + 1);
        link_abort(srv, NULL);
        return false;
    }
    if (line[0] != '$') {
        log_msg(LL_WARNING, "Bad protocol from MASTER, the first byte is not '$': %s", line);
        link_abort(srv, NULL);
        return false;
    }
    bool to_parser = repl_load_wanted(srv);
    const char *to = to_parser ? "to parser" : "to disk"; /* Redis's words */
    if (!strncmp(line + 1, "EOF:", 4) && sds_len(line) == 5 + REPL_ID_LEN) {
        memcpy(l->eof_mark, line + 5, REPL_ID_LEN);
        l->transfer_size = -1;
        log_msg(LL_NOTICE, "MASTER <-> REPLICA sync: receiving streamed RDB from master with EOF %s", to);
    } else {
        long long v;
        if (!util_str2ll(line + 1, sds_len(line) - 1, &v) || v < 0) {
            link_abort(srv, "bad bulk length from MASTER");
            return false;
        }
        l->transfer_size = v;
        log_msg(LL_NOTICE, "MASTER <-> REPLICA sync: receiving %lld bytes from master %s", v, to);
    }
    l->transfer_read = 0;
    if (to_parser) {
        load_from_socket(srv);
        return false;
    }
    if (!repl_sync_file_open(srv)) {
        link_abort(srv, NULL);
        return false;
    }
    if (!l->chunk) l->chunk = zmalloc(TRANSFER_CHUNK);
    return true;
}

/* Read the payload into the sync file; returns when the socket has no
 * more for now. */
static void read_transfer(server_t *srv) {
    repl_link_t *l = L(srv);
    if (l->transfer_size == -2) {
        sds line;
        if (!read_line(srv, &line)) return;
        bool go = sds_len(line) > 0 && start_transfer(srv, line); /* a newline: the master is preparing */
        sds_free(line);
        if (!go) return;
    }
    for (int rounds = 0; rounds < 64 || l->tls; rounds++) { /* TLS: on until the socket is dry (link_read) */
        size_t want = TRANSFER_CHUNK;
        if (l->transfer_size >= 0) {
            long long left = l->transfer_size - l->transfer_read;
            if (left <= 0) break;
            if ((long long)want > left) want = (size_t)left;
        }
        ssize_t n = link_read(l, l->chunk, want);
        if (n == 0) {
            link_abort(srv, "Master closed the connection during the transfer");
            return;
        }
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
            link_abort(srv, strerror(errno));
            return;
        }
        l->transfer_read += n;
        stats_net_in(&srv->stats, n, true);
        l->last_io_ms = l->transfer_last_ms = srv->mstime;
        if (!repl_sync_file_write(srv, l->chunk, (size_t)n)) {
            link_abort(srv, NULL);
            return;
        }
        if (l->transfer_size < 0 && ends_with_mark(l, l->chunk, (size_t)n)) {
            load_sync_file(srv, l->transfer_read - REPL_ID_LEN);
            return;
        }
    }
    if (l->transfer_size >= 0 && l->transfer_read == l->transfer_size) load_sync_file(srv, l->transfer_size);
}

/* ------------------------------------------------------------ handshake */

static void send_psync(server_t *srv) {
    repl_t *r = R(srv);
    repl_link_t *l = L(srv);
    char off[32];
    const char *av[4] = {"PSYNC", "?", "-1", "FAILOVER"};
    if (r->backlog) {
        util_ll2str(off, sizeof(off), r->master_repl_offset + 1);
        av[1] = r->replid;
        av[2] = off;
    }
    /* FAILOVER (repl_failover.c): the target promotes itself on this PSYNC. */
    if (!send_command(l, l->psync_failover && r->backlog ? 4 : 3, av)) {
        link_abort(srv, "can't send PSYNC");
        return;
    }
    l->state = LINK_RECV_PSYNC;
}

static void send_capa(server_t *srv) {
    const char *av[5] = {"REPLCONF", "capa", "eof", "capa", "psync2"};
    if (!send_command(L(srv), 5, av)) link_abort(srv, "can't send REPLCONF capa");
    else L(srv)->state = LINK_RECV_CAPA;
}

static void send_port(server_t *srv) {
    char port[16];
    /* A TLS replica is reached on its tls-port (as Redis announces it) */
    long long own = srv->cfg.tls_replication && srv->cfg.tls_port ? srv->cfg.tls_port : srv->cfg.port;
    long long p = srv->cfg.replica_announce_port ? srv->cfg.replica_announce_port : own;
    util_ll2str(port, sizeof(port), p);
    const char *av[3] = {"REPLCONF", "listening-port", port};
    if (!send_command(L(srv), 3, av)) link_abort(srv, "can't send REPLCONF listening-port");
    else L(srv)->state = LINK_RECV_PORT;
}

static void got_psync_reply(server_t *srv, sds line) {
    repl_t *r = R(srv);
    repl_link_t *l = L(srv);
    if (!strncmp(line, "+FULLRESYNC", 11)) {
        char id[REPL_ID_LEN + 1];
        long long off;
        if (sscanf(line + 11, " %40s %lld", id, &off) != 2 || strlen(id) != REPL_ID_LEN) {
            link_abort(srv, "bad +FULLRESYNC reply");
            return;
        }
        memcpy(l->fullsync_replid, id, sizeof(id));
        l->fullsync_offset = off;
        l->state = LINK_TRANSFER;
        l->transfer_size = -2;
        log_msg(LL_NOTICE, "Full resync from master: %s:%lld", id, off);
        return;
    }
    if (!strncmp(line, "+CONTINUE", 9)) {
        const char *id = line + 9;
        while (*id == ' ') id++;
        if (strlen(id) == REPL_ID_LEN && strcmp(id, r->replid)) {
            /* The master's history went on under a new ID (a failover):
             * ours follows, the old one stays valid as replid2. */
            memcpy(r->replid2, r->replid, sizeof(r->replid));
            r->second_replid_offset = r->master_repl_offset + 1;
            memcpy(r->replid, id, REPL_ID_LEN);
            master_disconnect_replicas(srv);
        }
        log_msg(LL_NOTICE, "MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.");
        become_connected(srv, NULL, 0);
        /* The master's stream goes on in the db it last selected for us. */
        if (l->resume_db > 0 && l->resume_db < srv->dbnum) l->master->db = &srv->dbs[l->resume_db];
        return;
    }
    log_msg(LL_WARNING, "Unexpected reply to PSYNC from master: %s", line);
    link_abort(srv, NULL);
}

static void handshake_step(server_t *srv) {
    repl_link_t *l = L(srv);
    sds line;
    if (!read_line(srv, &line)) return;
    int state = l->state;
    bool err = line[0] == '-';
    switch (state) {
        case LINK_RECV_PONG:
            /* -NOAUTH is fine here: AUTH comes next. */
            if (err && strncmp(line, "-NOAUTH", 7) && strncmp(line, "-NOPERM", 7) &&
                strncmp(line, "-ERR operation not permitted", 28)) {
                log_msg(LL_WARNING, "Error reply to PING from master: '%s'", line);
                link_abort(srv, NULL);
                break;
            }
            if (srv->cfg.masterauth && sds_len(srv->cfg.masterauth)) {
                if (!send_auth(srv, l)) link_abort(srv, "can't send AUTH");
                else l->state = LINK_RECV_AUTH;
            } else {
                send_port(srv);
            }
            break;
        case LINK_RECV_AUTH:
            if (err) {
                log_msg(LL_WARNING, "Unable to AUTH to MASTER: %s", line);
                link_abort(srv, NULL);
                break;
            }
            send_port(srv);
            break;
        case LINK_RECV_PORT:
            if (err) log_msg(LL_NOTICE, "(Non critical) Master does not understand REPLCONF listening-port: %s", line);
            if (srv->cfg.replica_announce_ip && srv->cfg.replica_announce_ip[0]) {
                const char *av[3] = {"REPLCONF", "ip-address", srv->cfg.replica_announce_ip};
                if (!send_command(l, 3, av)) link_abort(srv, "can't send REPLCONF ip-address");
                else l->state = LINK_RECV_IP;
            } else {
                send_capa(srv);
            }
            break;
        case LINK_RECV_IP:
            if (err) log_msg(LL_NOTICE, "(Non critical) Master does not understand REPLCONF ip-address: %s", line);
            send_capa(srv);
            break;
        case LINK_RECV_CAPA:
            if (err) log_msg(LL_NOTICE, "(Non critical) Master does not understand REPLCONF capa: %s", line);
            send_psync(srv);
            break;
        case LINK_RECV_PSYNC:
            if (sds_len(line) == 0) break; /* keepalive newline */
            got_psync_reply(srv, line);
            break;
    }
    sds_free(line);
}

static void send_ping(server_t *srv) {
    repl_link_t *l = L(srv);
    const char *av[1] = {"PING"};
    if (!send_command(l, 1, av)) link_abort(srv, "can't send PING");
    else l->state = LINK_RECV_PONG;
}

/* The TLS handshake with the master, a step per readable event. */
static void tls_step(server_t *srv) {
    repl_link_t *l = L(srv);
    for (;;) {
        int h = tls_conn_handshake(l->tls);
        if (!link_flush_tls(l)) {
            link_abort(srv, "can't send the TLS handshake");
            return;
        }
        if (h < 0) {
            sds why = sds_catprintf(sds_empty(), "TLS handshake with MASTER failed: %s", tls_conn_error(l->tls));
            link_abort(srv, why);
            sds_free(why);
            return;
        }
        if (h == 1) break;
        ssize_t got = link_pull_tls(l);
        if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
            link_abort(srv, "Master closed the connection during the TLS handshake");
            return;
        }
        if (got < 0) return; /* more when readable */
        l->last_io_ms = srv->mstime;
    }
    log_msg(LL_NOTICE, "MASTER <-> REPLICA sync: TLS handshake with MASTER done");
    send_ping(srv);
}

static void link_io(int fd, bool readable, bool writable, void *arg) {
    (void)fd;
    server_t *srv = arg;
    repl_link_t *l = L(srv);
    if (l->state == LINK_CONNECTING) {
        if (!writable) return;
        int e = net_connect_result(l->fd);
        if (e) {
            log_msg(LL_WARNING, "Error condition on socket for SYNC: %s", strerror(e));
            link_abort(srv, NULL);
            return;
        }
        evloop_io_want_write(l->io, false);
        log_msg(LL_NOTICE, "Non blocking connect for SYNC fired the event.");
        if (srv->cfg.tls_replication) {
            struct ssl_ctx_st *ctx = tls_client_ctx(srv);
            if (!ctx || !(l->tls = tls_conn_new_client(ctx))) {
                link_abort(srv, "TLS is not configured (tls-replication yes)");
                return;
            }
            l->state = LINK_TLS;
            tls_step(srv);
            return;
        }
        send_ping(srv);
        return;
    }
    if (!readable) return;
    if (l->state == LINK_TLS) {
        tls_step(srv);
        if (l->state != LINK_RECV_PONG) return;
    }
    /* Several replies may be waiting; a step that moves on reads again. */
    for (int i = 0; i < 8 && l->state >= LINK_RECV_PONG && l->state <= LINK_RECV_PSYNC; i++) {
        int before = l->state;
        handshake_step(srv);
        if (l->state == before) return;
    }
    if (l->state == LINK_TRANSFER) read_transfer(srv);
}

static void connect_to_master(server_t *srv) {
    repl_link_t *l = L(srv);
    char err[256];
    log_msg(LL_NOTICE, "Connecting to MASTER %s:%d", l->host, l->port);
    int fd = net_connect_tcp_nonblock(l->host, l->port, srv->cfg.bind_source_addr, err, sizeof(err));
    if (fd < 0) {
        log_msg(LL_WARNING, "Unable to connect to MASTER: %s", err);
        return;
    }
    l->fd = fd;
    l->state = LINK_CONNECTING;
    l->last_io_ms = l->handshake_start_ms = srv->mstime;
    l->io = evloop_io_add(srv->loop, fd, link_io, srv);
    evloop_io_want_write(l->io, true);
    log_msg(LL_NOTICE, "MASTER <-> REPLICA sync started");
}

/* ------------------------------------------------------------ REPLICAOF */

void replica_set_master(server_t *srv, const char *host, int port) {
    repl_link_t *l = L(srv);
    bool was_master = l->state == LINK_NONE;
    replica_free_link(srv);
    zfree(l->host);
    l->host = zstrdup(host);
    l->port = port;
    l->state = LINK_CONNECT;
    l->down_since_ms = srv->mstime;
    /* WAITers on a former master get what they have; clients blocked on
     * keys are let go (hooks.c). */
    if (was_master) {
        master_release_waiters(srv);
        srv->durability_hooks->became_replica(srv);
    }
    zfree(srv->cfg.replicaof);
    char buf[300];
    snprintf(buf, sizeof(buf), "%s %d", host, port);
    srv->cfg.replicaof = zstrdup(buf);
    connect_to_master(srv);
}

void replica_unset_master(server_t *srv) {
    repl_t *r = R(srv);
    repl_link_t *l = L(srv);
    if (l->state == LINK_NONE) return;
    replica_free_link(srv);
    zfree(l->host);
    l->host = NULL;
    l->state = LINK_NONE;
    zfree(srv->cfg.replicaof);
    srv->cfg.replicaof = zstrdup("");
    /* A new history: former peers continue through replid2 (PSYNC2). */
    if (r->backlog) master_shift_replid(srv);
    master_ensure_backlog(srv);
    master_disconnect_replicas(srv);
    r->stream_db = -1;
    log_msg(LL_NOTICE, "MASTER MODE enabled (user request from '%s')",
            srv->current_client ? srv->current_client->addr : "config");
}

void cmd_replicaof(client_t *c) {
    server_t *srv = c->srv;
    if (srv->cfg.cluster_enabled) { /* CLUSTER REPLICATE does it there */
        reply_error(c, "REPLICAOF not allowed in cluster mode.");
        return;
    }
    if (!strcasecmp(c->argv[1]->ptr, "no") && !strcasecmp(c->argv[2]->ptr, "one")) {
        replica_unset_master(srv);
        reply_ok(c);
        return;
    }
    if (c->flags & CLIENT_REPLICA) {
        reply_error(c, "Command is not valid when client is a replica.");
        return;
    }
    long long port;
    if (!cmd_get_range_or_reply(c, c->argv[2], 0, 65535, &port, "Invalid master port")) return;
    repl_link_t *l = L(srv);
    if (l->state != LINK_NONE && l->port == port && !strcasecmp(l->host, c->argv[1]->ptr)) {
        reply_simple(c, "OK Already connected to specified master");
        return;
    }
    replica_set_master(srv, c->argv[1]->ptr, (int)port);
    reply_ok(c);
}

/* ------------------------------------------------------------ cron */

void replica_cron(server_t *srv) {
    repl_link_t *l = L(srv);
    long long timeout = srv->cfg.repl_timeout * 1000;
    switch (l->state) {
        case LINK_NONE: return;
        case LINK_CONNECT: connect_to_master(srv); return;
        case LINK_CONNECTED:
            if (l->master && srv->mstime - l->master->last_interaction_ms > timeout) {
                log_msg(LL_WARNING, "MASTER timeout: no data nor PING received...");
                conn_close_async(l->master);
                return;
            }
            replica_send_ack(srv);
            return;
        default:
            if (srv->mstime - l->last_io_ms > timeout) link_abort(srv, "Timeout connecting to the MASTER...");
            return;
    }
}
