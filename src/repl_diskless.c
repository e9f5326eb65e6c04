/* repl_diskless.c: diskless full resync (repl-diskless-sync yes).
 *
 * The forked child (child.c's one slot, RDB type) produces
 * "$EOF:<40 random chars>\r\n", the RDB, and the same 40 chars: the
 * replica, which announced "capa eof", reads until the mark instead of a
 * known length.  Two ways to the replicas:
 *
 * - Direct (every replica of the batch on plain TCP): the child writes to
 *   each waiting replica's socket (one replica: while serialising;
 *   several: the dataset is serialised into memory once, then sent to
 *   each).  The sockets are non-blocking (they are the parent's), so the
 *   child waits in rio_write_all when one is full; a replica that went
 *   away is skipped and the others still get their copy.
 * - Relayed (the batch holds a TLS replica): a TLS session lives in the
 *   parent (tls_conn.c, over memory BIOs), so the child cannot write into
 *   it.  The child writes the stream into a pipe; the parent reads the pipe
 *   from its event loop, one chunk of RELAY_CHUNK bytes at a time, and
 *   writes the chunk to every replica of the batch (conn_write_direct
 *   encrypts it in the session and sends what the socket takes, on a dup()
 *   of the socket with a write-only watcher, as the disk-based sync does).
 *   Backpressure: the next chunk is read only once every replica took the
 *   whole chunk and its socket took all the ciphertext, so a replica's
 *   output never holds more than one chunk's records; a replica that fails
 *   a write or is freed is dropped and the others go on.  The sync ends
 *   (repl_master.c's done callback: online state, the held stream) once
 *   the pipe reached its end, every replica drained, and the child was
 *   reaped, whichever comes last.
 *
 * The parent holds the stream meanwhile and starts it at the replica's
 * first ACK (the replica sends one as soon as it has loaded). */
#include "repl_state.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "child.h"
#include "evloop.h"
#include "log.h"
#include "rdb.h"
#include "rio.h"
#include "util.h"
#include "zmalloc.h"

#define DISKLESS_MAX_TARGETS 64
#define RELAY_CHUNK (64 * 1024) /* bytes read from the pipe, then written to every replica */

typedef struct diskless_job {
    int fds[DISKLESS_MAX_TARGETS];
    int n;
    int pipe_rd, pipe_wr; /* relayed: the pipe (the child writes pipe_wr); -1 direct */
    bool functions_only;  /* the batch asked for REPLCONF rdb-filter-only functions */
} diskless_job_t;

/* The parent's side of a relayed sync.  Invariant: while len > 0 every
 * relayed replica has rdb_off <= len, and the pipe is read only when
 * every one of them reached len with no ciphertext left to send. */
typedef struct rdb_relay {
    int fd;                    /* the pipe's read end (non-blocking) */
    evloop_io_t *io;           /* its watcher; read interest only between chunks */
    size_t len;                /* bytes of buf in the chunk being relayed, 0 between chunks */
    bool eof;                  /* the child closed its end (or the pipe failed) */
    bool child_over, child_ok; /* the child was reaped before the relay ended: its result */
    long long relayed;         /* payload bytes read from the pipe */
    char buf[RELAY_CHUNK];
} rdb_relay_t;

/* One replica (the usual case): the RDB goes to its socket as it is
 * serialised, so the transfer overlaps the dump. */
static int diskless_child_one(server_t *srv, int fd, const char *mark, const rdb_save_opts_t *opts, const char *to) {
    char hdr[64];
    int hl = snprintf(hdr, sizeof(hdr), "$EOF:%s\r\n", mark);
    if (rio_write_all(fd, hdr, (size_t)hl) != 0) return 1;
    rio_t *r = zmalloc(sizeof(*r));
    rio_init(r, fd, srv->cfg.rdbchecksum);
    int rc = rdb_write_dataset(srv, r, opts);
    if (rc == 0) rc = rio_flush(r);
    long long sent = (long long)r->written;
    zfree(r);
    child_count_sent(hl + sent);
    if (rc != 0 || rio_write_all(fd, mark, REPL_ID_LEN) != 0) return 1;
    child_count_sent(REPL_ID_LEN);
    log_msg(LL_NOTICE, "Diskless RDB transfer: %lld bytes streamed to the %s", sent, to);
    return 0;
}

static int diskless_child(server_t *srv, void *arg) {
    diskless_job_t *job = arg;
    char mark[REPL_ID_LEN + 1];
    util_random_hex(mark, REPL_ID_LEN);
    mark[REPL_ID_LEN] = '\0';
    rdb_save_opts_t opts = {srv->cfg.rdbcompression, srv->cfg.rdbchecksum, false, srv->cfg.rdb_key_save_delay,
                            job->functions_only};
    if (job->pipe_wr >= 0) {
        /* Relayed: the stream goes into the pipe (blocking), the parent
         * sends it on.  The bytes count where the parent writes them. */
        close(job->pipe_rd);
        int rc = diskless_child_one(srv, job->pipe_wr, mark, &opts, "pipe");
        close(job->pipe_wr);
        return rc;
    }
    if (job->n == 1) return diskless_child_one(srv, job->fds[0], mark, &opts, "replica");
    /* Several: serialise once into memory, then the same bytes to each. */
    rio_t *r = zmalloc(sizeof(*r));
    rio_init_mem(r, srv->cfg.rdbchecksum);
    if (rdb_write_dataset(srv, r, &opts) != 0) return 1;
    sds rdb = rio_take_mem(r);
    zfree(r);
    char hdr[64];
    int hl = snprintf(hdr, sizeof(hdr), "$EOF:%s\r\n", mark);
    int ok = 0;
    for (int i = 0; i < job->n; i++) {
        int fd = job->fds[i];
        if (rio_write_all(fd, hdr, (size_t)hl) == 0 && rio_write_all(fd, rdb, sds_len(rdb)) == 0 &&
            rio_write_all(fd, mark, REPL_ID_LEN) == 0) {
            ok++;
            child_count_sent((long long)(hl + sds_len(rdb) + REPL_ID_LEN));
        }
    }
    log_msg(LL_NOTICE, "Diskless RDB transfer: %zu bytes sent to %d of %d replicas", sds_len(rdb), ok, job->n);
    sds_free(rdb);
    return ok > 0 ? 0 : 1;
}

/* ------------------------------------------------- the relay (parent) */

static bool relay_target(const repl_replica_t *rep) {
    return rep->relayed && rep->state == REPLICA_WAIT_BGSAVE_END &&
           !(rep->c->flags & (CLIENT_CLOSE_ASAP | CLIENT_CLOSE_AFTER_REPLY));
}

static void relay_stop_writer(repl_replica_t *rep) {
    if (rep->wio) evloop_io_free(rep->wio);
    rep->wio = NULL;
    if (rep->wfd >= 0) close(rep->wfd);
    rep->wfd = -1;
}

static void relay_drop(repl_replica_t *rep, const char *why) {
    relay_stop_writer(rep);
    rep->relayed = false;
    repl_replica_close(rep, why);
}

/* Write what rep has not taken of the chunk (and the session's records
 * left from it); true when it has all of it on the wire.  Otherwise its
 * watcher waits for the socket, or it was dropped. */
static bool relay_push(server_t *srv, repl_replica_t *rep) {
    rdb_relay_t *rl = R(srv)->relay;
    client_t *c = rep->c;
    for (;;) {
        size_t left = rl->len - (size_t)rep->rdb_off;
        /* TLS: a call with nothing left sends the records still held */
        ssize_t n = conn_write_direct(c, rep->wfd, rl->buf + rep->rdb_off, left);
        if (n < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                relay_drop(rep, strerror(errno));
                return false;
            }
            break;
        }
        rep->rdb_off += n;
        stats_net_out(&srv->stats, n, true);
        if (n > 0) rep->relay_progress_ms = srv->mstime;
        if (n == 0 || (size_t)rep->rdb_off == rl->len) break;
    }
    bool done = (size_t)rep->rdb_off == rl->len && !conn_has_pending_output(c);
    evloop_io_want_write(rep->wio, !done);
    return done;
}

static void relay_end(server_t *srv);

/* Every relay target took the chunk: read the next one (read interest on),
 * or, at the pipe's end, finish. */
static void relay_check(server_t *srv) {
    rdb_relay_t *rl = R(srv)->relay;
    if (!rl) return;
    int targets = 0;
    bool all_done = true;
    for (repl_replica_t *rep = R(srv)->replicas; rep; rep = rep->next) {
        if (!relay_target(rep)) continue;
        targets++;
        if ((size_t)rep->rdb_off < rl->len || conn_has_pending_output(rep->c)) all_done = false;
    }
    if (!all_done) return;
    rl->len = 0;
    if (targets == 0 && !rl->eof) {
        /* Nobody left to send to: the child gets EPIPE and ends. */
        log_msg(LL_WARNING, "Diskless RDB relay: no replica left, stopping the transfer");
        rl->eof = true;
    }
    if (rl->eof) {
        relay_end(srv);
        return;
    }
    if (rl->io) evloop_io_want_read(rl->io, true);
}

static void relay_writable(int fd, bool readable, bool writable, void *arg) {
    (void)fd;
    (void)readable;
    repl_replica_t *rep = arg;
    server_t *srv = rep->c->srv;
    if (!writable || !R(srv)->relay || !relay_target(rep)) return;
    if (relay_push(srv, rep)) relay_check(srv);
}

static void relay_readable(int fd, bool readable, bool writable, void *arg) {
    (void)writable;
    server_t *srv = arg;
    rdb_relay_t *rl = R(srv)->relay;
    if (!readable || !rl || rl->len > 0) return;
    ssize_t n = read(fd, rl->buf, sizeof(rl->buf));
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (n <= 0) {
        if (n < 0) log_msg(LL_WARNING, "Diskless RDB relay: can't read the pipe: %s", strerror(errno));
        rl->eof = true;
        relay_check(srv);
        return;
    }
    rl->len = (size_t)n;
    rl->relayed += n;
    evloop_io_want_read(rl->io, false); /* until every replica took this chunk */
    for (repl_replica_t *rep = R(srv)->replicas; rep; rep = rep->next) {
        if (!relay_target(rep)) continue;
        rep->rdb_off = 0;
        rep->relay_progress_ms = srv->mstime;
        relay_push(srv, rep);
    }
    relay_check(srv);
}

static void relay_free(server_t *srv) {
    rdb_relay_t *rl = R(srv)->relay;
    if (!rl) return;
    for (repl_replica_t *rep = R(srv)->replicas; rep; rep = rep->next) {
        if (!rep->relayed) continue;
        relay_stop_writer(rep);
        rep->relayed = false;
        rep->rdb_off = 0;
    }
    if (rl->io) evloop_io_free(rl->io);
    if (rl->fd >= 0) close(rl->fd);
    zfree(rl);
    R(srv)->relay = NULL;
}

/* The pipe is through and every replica has its bytes; if the child was
 * reaped already, the sync finishes now (else at its reaping). */
static void relay_end(server_t *srv) {
    rdb_relay_t *rl = R(srv)->relay;
    if (!rl->child_over) {
        /* Closing our end: a child still writing (every replica dropped)
         * gets EPIPE and ends; then it is reaped and we finish. */
        if (rl->io) evloop_io_free(rl->io);
        rl->io = NULL;
        if (rl->fd >= 0) close(rl->fd);
        rl->fd = -1;
        for (repl_replica_t *rep = R(srv)->replicas; rep; rep = rep->next)
            if (rep->relayed) relay_stop_writer(rep);
        return;
    }
    bool ok = rl->child_ok;
    log_msg(LL_NOTICE, "Diskless RDB relay: %lld bytes relayed to the replicas", rl->relayed);
    relay_free(srv);
    R(srv)->diskless_done(srv, ok);
}

bool repl_relay_active(const server_t *srv) { return R(srv) && R(srv)->relay; }

void repl_relay_replica_gone(server_t *srv) {
    if (R(srv) && R(srv)->relay) relay_check(srv);
}

void repl_relay_cron(server_t *srv) {
    rdb_relay_t *rl = R(srv)->relay;
    if (!rl || rl->len == 0) return;
    bool dropped = false;
    for (repl_replica_t *rep = R(srv)->replicas; rep; rep = rep->next) {
        if (!relay_target(rep) || ((size_t)rep->rdb_off == rl->len && !conn_has_pending_output(rep->c))) continue;
        if (srv->mstime - rep->relay_progress_ms <= srv->cfg.repl_timeout * 1000) continue;
        relay_drop(rep, "timeout during the diskless RDB relay");
        dropped = true;
    }
    if (dropped) relay_check(srv); /* the others need not wait for it */
}

/* Start relaying: every replica of the batch gets a write watcher on a
 * dup() of its socket (its client's own output stays untouched). */
static void relay_start(server_t *srv, int fd) {
    rdb_relay_t *rl = zcalloc(sizeof(*rl));
    rl->fd = fd;
    R(srv)->relay = rl;
    for (repl_replica_t *rep = R(srv)->replicas; rep; rep = rep->next) {
        if (rep->state != REPLICA_WAIT_BGSAVE_END) continue;
        rep->wfd = dup(rep->c->fd);
        if (rep->wfd < 0) {
            repl_replica_close(rep, strerror(errno));
            continue;
        }
        rep->relayed = true;
        rep->rdb_off = 0;
        rep->wio = evloop_io_add(srv->loop, rep->wfd, relay_writable, rep);
        evloop_io_want_read(rep->wio, false);
        evloop_io_want_write(rep->wio, false);
    }
    rl->io = evloop_io_add(srv->loop, fd, relay_readable, srv);
}

/* ------------------------------------------------------- start and end */

/* In the parent: the replicas in this batch get the stream, or are
 * dropped.  Nothing was saved to disk, so BGSAVE's figures stay as they
 * are; at shutdown (killed) nobody is waiting any more. */
static void diskless_done(server_t *srv, const child_exit_t *ex, void *arg) {
    (void)arg;
    rdb_relay_t *rl = R(srv)->relay;
    if (!rl) stats_net_out(&srv->stats, ex->sent_bytes, true); /* the child wrote to the replicas' sockets */
    if (ex->killed) {
        relay_free(srv);
        return;
    }
    if (rl) {
        /* Relayed: what the pipe still holds goes out first. */
        rl->child_over = true;
        rl->child_ok = ex->ok;
        if (rl->eof && rl->len == 0) relay_end(srv); /* else at the pipe's end */
        return;
    }
    R(srv)->diskless_done(srv, ex->ok);
}

int repl_diskless_child_start(server_t *srv, bool functions_only, persist_rdb_done_fn *done) {
    R(srv)->diskless_done = done; /* called by name, it would close a call cycle */
    diskless_job_t targets = {.n = 0, .pipe_rd = -1, .pipe_wr = -1, .functions_only = functions_only};
    bool tls = false;
    for (repl_replica_t *rep = R(srv)->replicas; rep; rep = rep->next) {
        if (rep->state != REPLICA_WAIT_BGSAVE_END) continue;
        if (rep->c->tls) tls = true;
        if (targets.n < DISKLESS_MAX_TARGETS) targets.fds[targets.n++] = rep->c->fd;
    }
    /* A batch with a TLS replica is relayed whole, its plain replicas
     * included: one serialisation streamed through the pipe (the direct
     * path's several-replica case keeps the whole RDB in the child's
     * memory), one transfer state to follow, and the same end for all.
     * A plain-only batch keeps the direct path: no copy through us. */
    if (tls) {
        int p[2];
        if (pipe2(p, O_CLOEXEC) != 0) return -1;
        targets.pipe_rd = p[0];
        targets.pipe_wr = p[1];
        if (fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK) != 0) {
            close(p[0]);
            close(p[1]);
            return -1;
        }
    }
    const char *err;
    /* targets lives on this stack: the child gets its own copy at fork. */
    child_job_t job = {.type = CHILD_RDB, .what = "RDB", .title = "redis-rdb-to-slaves", .body = diskless_child, .body_arg = &targets, .done = diskless_done};
    bool started = child_start(srv, &job, &err);
    if (!tls) return started ? 0 : -1;
    close(targets.pipe_wr); /* the child's end: its exit is the pipe's end */
    if (!started) {
        close(targets.pipe_rd);
        return -1;
    }
    relay_start(srv, targets.pipe_rd);
    log_msg(LL_NOTICE, "Diskless RDB goes through a pipe (TLS replicas): the parent relays it");
    return 0;
}
