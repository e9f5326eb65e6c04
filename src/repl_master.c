/* repl_master.c: the master side of replication (Redis 7.0's protocol).
 *
 * A replica connects as an ordinary client, sends REPLCONF (its port,
 * address, capabilities) and PSYNC <replid> <offset>.  If that history is
 * ours (replid, or replid2 up to second_replid_offset) and the backlog
 * still holds the offset, it gets "+CONTINUE <replid>" and the missing
 * bytes (partial resync).  Otherwise "+FULLRESYNC <replid> <offset>": an
 * RDB child is forked (disk: the child writes dbfilename and we send the
 * file as "$<len>\r\n<bytes>"; diskless: the child writes
 * "$EOF:<mark>\r\n<rdb><mark>" straight to the replicas' sockets, or into
 * a pipe we relay when a TLS replica is among them) and the
 * stream written meanwhile waits in the replica's `pending` buffer until
 * the RDB is through.  From then on every write propagate.c emits reaches
 * the replica as it reaches the backlog; the replica answers REPLCONF ACK
 * <offset> each second, which WAIT and min-replicas-to-write read.
 *
 * The RDB file is written with its own watcher on a dup() of the
 * replica's socket (write interest only), so the client's output buffer
 * stays untouched until the stream starts. */
#include "repl_state.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aof.h"
#include "child.h"
#include "evloop.h"
#include "log.h"
#include "net.h"
#include "persist.h"
#include "reply.h"
#include "resp.h"
#include "util.h"

#define BULK_CHUNK (64 * 1024)   /* bytes per write of the RDB file */
#define BULK_WRITES_PER_EVENT 16 /* then other clients get a turn */


/* ------------------------------------------------------------ replicas */

static repl_replica_t *replica_of(client_t *c) {
    if (!c->repl) {
        repl_replica_t *rep = zcalloc(sizeof(*rep));
        rep->c = c;
        rep->rdb_fd = rep->wfd = -1;
        rep->pending = sds_empty();
        c->repl = rep;
    }
    return c->repl;
}

static void stop_bulk(repl_replica_t *rep) {
    if (rep->wio) evloop_io_free(rep->wio);
    rep->wio = NULL;
    if (rep->wfd >= 0) close(rep->wfd);
    if (rep->rdb_fd >= 0) close(rep->rdb_fd);
    rep->wfd = rep->rdb_fd = -1;
    sds_free(rep->rdb_hdr);
    rep->rdb_hdr = NULL;
}

static void attach(server_t *srv, repl_replica_t *rep, int state) {
    repl_t *r = R(srv);
    rep->state = state;
    rep->ack_ms = srv->mstime;
    rep->c->flags |= CLIENT_REPLICA;
    rep->next = r->replicas;
    r->replicas = rep;
    r->replica_count++;
}

static void detach(server_t *srv, repl_replica_t *rep) {
    repl_t *r = R(srv);
    for (repl_replica_t **pp = &r->replicas; *pp; pp = &(*pp)->next) {
        if (*pp == rep) {
            *pp = rep->next;
            r->replica_count--;
            break;
        }
    }
    if (r->replica_count == 0) r->backlog_idle_since_ms = srv->mstime;
}

void repl_client_freed(client_t *c) {
    server_t *srv = c->srv;
    repl_t *r = R(srv);
    if (!r) return;
    for (repl_waiter_t **pp = &r->waiters; *pp; pp = &(*pp)->next) {
        if ((*pp)->c == c) {
            repl_waiter_t *w = *pp;
            *pp = w->next;
            zfree(w);
            break;
        }
    }
    if (c->repl) {
        repl_replica_t *rep = c->repl;
        bool relayed = rep->relayed;
        if (relayed) log_msg(LL_WARNING, "Connection with replica %s lost during the diskless RDB relay.", c->addr);
        if (c->flags & CLIENT_REPLICA) detach(srv, rep);
        stop_bulk(rep);
        sds_free(rep->pending);
        zfree(rep);
        c->repl = NULL;
        if (relayed) repl_relay_replica_gone(srv); /* the others may be waiting for it */
    }
    if ((c->flags & CLIENT_MASTER) && r->link.master == c) {
        log_msg(LL_NOTICE, "Connection with master lost.");
        r->link.resume_db = c->db->id; /* a +CONTINUE goes on in this db */
        r->link.master = NULL;
        r->link.fd = -1; /* conn_free closes it */
        if (r->link.state == LINK_CONNECTED) r->link.state = LINK_CONNECT;
        r->link.down_since_ms = srv->mstime;
    }
}

/* The RDB is through: the held stream follows, then the live one. */
static void put_online(server_t *srv, repl_replica_t *rep) {
    rep->state = REPLICA_ONLINE;
    rep->ack_ms = srv->mstime;
    if (sds_len(rep->pending)) reply_raw(rep->c, rep->pending, sds_len(rep->pending));
    sds_free(rep->pending);
    rep->pending = sds_empty();
    log_msg(LL_NOTICE, "Synchronization with replica %s succeeded", rep->c->addr);
}

/* Write-only watcher on the dup()ed socket: the header, then the file. */
static void bulk_writer(int fd, bool readable, bool writable, void *arg) {
    (void)readable;
    repl_replica_t *rep = arg;
    client_t *c = rep->c;
    server_t *srv = c->srv;
    if (!writable) return;
    /* +FULLRESYNC still leaving; once the payload started, a TLS
     * replica's unsent records are conn_write_direct's to finish */
    if (!rep->bulk_started && conn_has_pending_output(c)) return;
    rep->bulk_started = true;
    if (rep->rdb_hdr && sds_len(rep->rdb_hdr)) {
        ssize_t n = conn_write_direct(c, fd, rep->rdb_hdr, sds_len(rep->rdb_hdr));
        if (n < 0) {
            if (errno != EAGAIN && errno != EINTR) repl_replica_close(rep, strerror(errno));
            return;
        }
        sds_range(rep->rdb_hdr, n, -1);
        if (sds_len(rep->rdb_hdr)) return;
    }
    char buf[BULK_CHUNK];
    for (int i = 0; i < BULK_WRITES_PER_EVENT && rep->rdb_off < rep->rdb_size; i++) {
        ssize_t got = pread(rep->rdb_fd, buf, sizeof(buf), rep->rdb_off);
        if (got <= 0) {
            repl_replica_close(rep, "can't read the RDB file");
            stop_bulk(rep);
            return;
        }
        ssize_t n = conn_write_direct(c, fd, buf, (size_t)got);
        if (n < 0) {
            if (errno != EAGAIN && errno != EINTR) {
                repl_replica_close(rep, strerror(errno));
                stop_bulk(rep);
            }
            return;
        }
        rep->rdb_off += n;
        stats_net_out(&srv->stats, n, true);
        if (n < got) return;
    }
    if (rep->rdb_off < rep->rdb_size) return;
    stop_bulk(rep);
    if (conn_has_pending_output(c)) conn_mark_pending_write(c); /* TLS: the last records */
    if (rep->rdb_only) {
        c->flags |= CLIENT_CLOSE_AFTER_REPLY;
        conn_close_async(c);
        return;
    }
    put_online(srv, rep);
}

static void start_bulk(server_t *srv, repl_replica_t *rep) {
    sds path = server_path(srv, srv->cfg.dbfilename);
    rep->rdb_fd = open(path, O_RDONLY | O_CLOEXEC);
    sds_free(path);
    struct stat st;
    if (rep->rdb_fd < 0 || fstat(rep->rdb_fd, &st) != 0) {
        repl_replica_close(rep, "can't open the RDB file");
        return;
    }
    rep->rdb_size = st.st_size;
    rep->rdb_off = 0;
    rep->rdb_hdr = sds_catprintf(sds_empty(), "$%lld\r\n", (long long)st.st_size);
    rep->wfd = dup(rep->c->fd);
    if (rep->wfd < 0) {
        repl_replica_close(rep, strerror(errno));
        return;
    }
    rep->state = REPLICA_SEND_BULK;
    rep->wio = evloop_io_add(srv->loop, rep->wfd, bulk_writer, rep);
    evloop_io_want_read(rep->wio, false);
    evloop_io_want_write(rep->wio, true);
}

/* ------------------------------------------------------ full resync */

/* repl_diskless.c: fork the child that writes to the replicas' sockets. */
int repl_diskless_child_start(server_t *srv, bool functions_only, persist_rdb_done_fn *done);

static void send_fullresync(server_t *srv, repl_replica_t *rep) {
    repl_t *r = R(srv);
    rep->psync_initial_off = r->master_repl_offset;
    if (rep->old_sync) return; /* SYNC: the payload comes without a preamble */
    char line[128];
    int n = snprintf(line, sizeof(line), "+FULLRESYNC %s %lld\r\n", r->replid, r->master_repl_offset);
    reply_raw(rep->c, line, (size_t)n);
}

/* The next child serves the replicas waiting to start that want the same
 * RDB as the first of them (a filtered RDB is another file; the others
 * wait for the child after it): that RDB's filter. */
static bool next_batch_filter(const repl_t *r) {
    for (const repl_replica_t *rep = r->replicas; rep; rep = rep->next)
        if (rep->state == REPLICA_WAIT_BGSAVE_START) return rep->functions_only;
    return false;
}

/* Fork for the replicas waiting to start (next_batch_filter), when no child
 * runs.  Diskless waits repl-diskless-sync-delay seconds for more
 * replicas to arrive (or until repl-diskless-sync-max-replicas are
 * waiting).  A filtered RDB goes to the sockets whatever
 * repl-diskless-sync says (as in Redis: dump.rdb must stay whole), with
 * no delay then. */
static void maybe_start_sync(server_t *srv) {
    repl_t *r = R(srv);
    int waiting = 0;
    bool all_eof = true, filtered = next_batch_filter(r);
    for (repl_replica_t *rep = r->replicas; rep; rep = rep->next) {
        if (rep->state != REPLICA_WAIT_BGSAVE_START || rep->functions_only != filtered) continue;
        waiting++;
        /* (a TLS replica's diskless payload is relayed by us: repl_diskless.c) */
        if (!rep->capa_eof) all_eof = false;
    }
    /* A relay outlives its child while the pipe drains: the next sync waits. */
    if (waiting == 0 || child_active(srv) || repl_relay_active(srv)) return;
    bool diskless = (srv->cfg.repl_diskless_sync || filtered) && all_eof;
    if (diskless && srv->cfg.repl_diskless_sync) {
        long long max = srv->cfg.repl_diskless_sync_max_replicas;
        bool enough = max > 0 && waiting >= max;
        if (!r->diskless_wait_since_ms) r->diskless_wait_since_ms = srv->mstime;
        if (!enough && srv->mstime - r->diskless_wait_since_ms < srv->cfg.repl_diskless_sync_delay * 1000) return;
    }
    r->diskless_wait_since_ms = 0;
    r->stream_db = -1; /* the stream after the snapshot starts with SELECT */
    for (repl_replica_t *rep = r->replicas; rep; rep = rep->next) {
        if (rep->state != REPLICA_WAIT_BGSAVE_START || rep->functions_only != filtered) continue;
        rep->state = REPLICA_WAIT_BGSAVE_END;
        send_fullresync(srv, rep);
    }
    int rc;
    const char *err = "fork failed";
    if (diskless) {
        /* The +FULLRESYNC lines must be on the wire before the child writes. */
        for (repl_replica_t *rep = r->replicas; rep; rep = rep->next)
            if (rep->state == REPLICA_WAIT_BGSAVE_END && !conn_flush_now(rep->c)) {
                rep->state = REPLICA_WAIT_BGSAVE_START; /* not in this child's batch */
                repl_replica_close(rep, "can't write +FULLRESYNC");
            }
        rc = repl_diskless_child_start(srv, filtered, repl_rdb_child_done);
    } else {
        rc = persist_bgsave(srv, &err) ? 0 : -1; /* its end calls repl_rdb_child_done (repl_init) */
    }
    if (rc != 0) {
        log_msg(LL_WARNING, "Can't start the RDB child for replication: %s", err);
        for (repl_replica_t *rep = r->replicas; rep; rep = rep->next)
            if (rep->state == REPLICA_WAIT_BGSAVE_END) repl_replica_close(rep, "BGSAVE failed");
        return;
    }
    r->rdb_child_for_repl = true;
    r->rdb_child_diskless = diskless;
    log_msg(LL_NOTICE, "Starting BGSAVE for SYNC with target: %s", diskless ? "replicas sockets" : "disk");
}

void repl_rdb_child_done(server_t *srv, bool ok) {
    repl_t *r = R(srv);
    /* (while a relay drains, another child's end is not ours: the relay
     * calls in once it is through) */
    if (!r || !r->rdb_child_for_repl || repl_relay_active(srv)) return;
    r->rdb_child_for_repl = false;
    for (repl_replica_t *rep = r->replicas; rep; rep = rep->next) {
        if (rep->state != REPLICA_WAIT_BGSAVE_END) continue;
        if (!ok) {
            repl_replica_close(rep, "the RDB child failed");
        } else if (r->rdb_child_diskless) {
            if (rep->rdb_only) {
                rep->c->flags |= CLIENT_CLOSE_AFTER_REPLY;
                conn_close_async(rep->c);
            } else if (rep->acked_during_sync) {
                put_online(srv, rep); /* it loaded before the cron reaped the child */
            } else {
                /* The stream starts once it has loaded: its first ACK. */
                rep->state = REPLICA_ONLINE_ON_ACK;
            }
        } else {
            start_bulk(srv, rep);
        }
    }
    if (ok && !r->rdb_child_diskless) repl_sync_file_written(srv);
    r->rdb_child_diskless = false;
    maybe_start_sync(srv);
}

/* ----------------------------------------------------- SYNC and PSYNC */

static void send_backlog_piece(void *arg, const char *p, size_t len) { reply_raw(arg, p, len); }

static bool try_partial(server_t *srv, client_t *c, const char *replid, long long off) {
    repl_t *r = R(srv);
    bool ours = !strcasecmp(replid, r->replid);
    bool former = !strcasecmp(replid, r->replid2) && off <= r->second_replid_offset;
    if (!r->backlog || (!ours && !former) || !backlog_has(r->backlog, off)) {
        if (strcmp(replid, "?")) {
            r->sync_partial_err++;
            log_msg(LL_NOTICE, "Partial resynchronization not accepted for replica %s (replid %s offset %lld)",
                    c->addr, replid, off);
        }
        return false;
    }
    repl_replica_t *rep = replica_of(c);
    attach(srv, rep, REPLICA_ONLINE);
    rep->psync_initial_off = off - 1;
    rep->ack_off = off - 1;
    char line[128];
    int n = rep->capa_psync2 ? snprintf(line, sizeof(line), "+CONTINUE %s\r\n", r->replid)
                             : snprintf(line, sizeof(line), "+CONTINUE\r\n");
    reply_raw(c, line, (size_t)n);
    backlog_foreach_from(r->backlog, off, send_backlog_piece, c);
    r->sync_partial_ok++;
    log_msg(LL_NOTICE, "Partial resynchronization request from %s accepted. Sending %lld bytes of backlog starting "
                       "from offset %lld.",
            c->addr, r->master_repl_offset + 1 - off, off);
    return true;
}

static void sync_generic(client_t *c, bool psync) {
    server_t *srv = c->srv;
    repl_t *r = R(srv);
    if (c->flags & CLIENT_REPLICA) return; /* a second SYNC on a replica link is ignored */
    if (r->link.state != LINK_NONE && r->link.state != LINK_CONNECTED) {
        reply_error(c, "NOMASTERLINK Can't SYNC while not connected with my master");
        return;
    }
    /* Replies not yet sent (a TLS session's own records, its session
     * tickets after the handshake, are not replies: they go first). */
    if (conn_output_bytes(c) > 0) {
        reply_error(c, "SYNC and PSYNC are invalid with pending output");
        return;
    }
    long long off = -1;
    if (psync && c->argc > 3 && !strcasecmp(c->argv[3]->ptr, "failover")) {
        /* FAILOVER: our master hands its role over to us (repl_failover.c
         * on its side); it must be following our very history. */
        if (r->link.state == LINK_NONE || strcasecmp(c->argv[1]->ptr, r->replid)) {
            reply_error(c, "PSYNC FAILOVER replid must match my replid.");
            return;
        }
        log_msg(LL_NOTICE, "Failover request received for replid %s.", r->replid);
        replica_unset_master(srv); /* promoted: the old history stays reachable as replid2 */
    }
    if (psync) {
        /* An offset that is not a number: the error, and no sync at all
         * (Redis 7.0.15 and 7.4; earlier 7.0s went on with a full one). */
        if (!obj_get_ll(c->argv[2], &off)) {
            reply_error(c, RL_ERR_NOT_INT);
            log_msg(LL_WARNING, "Replica %s asks for synchronization but with a wrong offset", c->addr);
            return;
        }
        if (try_partial(srv, c, c->argv[1]->ptr, off)) return;
    }
    /* repl-disable-tcp-nodelay: fewer, larger packets to this replica
     * (more lag), as Redis does from the full sync on. */
    if (srv->cfg.repl_disable_tcp_nodelay) net_set_nodelay(c->fd, false);
    repl_replica_t *rep = replica_of(c);
    rep->old_sync = !psync;
    master_ensure_backlog(srv);
    attach(srv, rep, REPLICA_WAIT_BGSAVE_START);
    r->sync_full++;
    log_msg(LL_NOTICE, "Replica %s asks for synchronization; full resync", c->addr);
    maybe_start_sync(srv);
}

void cmd_sync(client_t *c) { sync_generic(c, false); }
void cmd_psync(client_t *c) { sync_generic(c, true); }

/* ------------------------------------------------------------ REPLCONF */

void repl_replica_newline(client_t *c) {
    if (c->repl) c->repl->ack_ms = c->srv->mstime;
}

/* fack: the offset the replica's AOF has fsynced (Redis 7.2), -1 = none sent. */
static void got_ack(server_t *srv, repl_replica_t *rep, long long off, long long fack) {
    if (off > rep->ack_off) rep->ack_off = off;
    if (fack > rep->aof_off) rep->aof_off = fack;
    rep->ack_ms = srv->mstime;
    if (rep->state == REPLICA_ONLINE_ON_ACK) {
        put_online(srv, rep);
    } else if (rep->state == REPLICA_WAIT_BGSAVE_END) {
        rep->acked_during_sync = true;
        /* It has loaded the whole RDB, so the child that wrote it has most
         * likely ended: reap it now rather than at the next cron tick, or
         * the writes of those up to 100 ms stay held from the replica (a
         * client reading its own write from the replica misses it). */
        child_reap(srv);
    }
    if (R(srv)->waiters) evloop_request_before_sleep(srv->loop);
}

/* REPLCONF rdb-filter-only "<filter> ...": what the RDB of this sync
 * holds.  Redis 7.0 knows one filter, "functions" (the libraries without
 * the keys: redis-cli --functions-rdb); "" clears it.  Its error texts. */
static bool set_rdb_filter(client_t *c, const char *spec) {
    int n;
    sds *words = sds_splitargs(spec, &n);
    if (!words) {
        reply_error(c, "Missing rdb-filter-only values");
        return false;
    }
    bool functions_only = false;
    for (int i = 0; i < n; i++) {
        if (strcasecmp(words[i], "functions")) {
            reply_error(c, "Unsupported rdb-filter-only option: %s", words[i]);
            sds_free_splitres(words, n);
            return false;
        }
        functions_only = true;
    }
    sds_free_splitres(words, n);
    replica_of(c)->functions_only = functions_only;
    return true;
}

void cmd_replconf(client_t *c) {
    server_t *srv = c->srv;
    if (c->argc % 2 == 0) {
        reply_error(c, RL_ERR_SYNTAX);
        return;
    }
    for (int i = 1; i < c->argc; i += 2) {
        const char *opt = c->argv[i]->ptr;
        robj *val = c->argv[i + 1];
        long long v;
        if (!strcasecmp(opt, "listening-port")) {
            if (!cmd_get_ll_or_reply(c, val, &v, NULL)) return;
            replica_of(c)->listening_port = v;
        } else if (!strcasecmp(opt, "ip-address")) {
            snprintf(replica_of(c)->announced_ip, sizeof(replica_of(c)->announced_ip), "%s", (char *)val->ptr);
        } else if (!strcasecmp(opt, "capa")) {
            if (!strcasecmp(val->ptr, "eof")) replica_of(c)->capa_eof = true;
            else if (!strcasecmp(val->ptr, "psync2")) replica_of(c)->capa_psync2 = true;
        } else if (!strcasecmp(opt, "ack")) {
            /* Sent by replicas, never answered: ACK <offset> [FACK <aof-offset>]. */
            long long fack = -1;
            if (c->argc > i + 3 && !strcasecmp(c->argv[i + 2]->ptr, "fack") && !obj_get_ll(c->argv[i + 3], &fack))
                return;
            if ((c->flags & CLIENT_REPLICA) && obj_get_ll(val, &v)) got_ack(srv, c->repl, v, fack);
            return;
        } else if (!strcasecmp(opt, "getack")) {
            if (c->flags & CLIENT_MASTER) replica_send_ack(srv);
            return;
        } else if (!strcasecmp(opt, "rdb-only")) {
            if (!obj_get_ll(val, &v) || (v != 0 && v != 1)) {
                reply_error(c, "rdb-only value must be 0 or 1");
                return;
            }
            replica_of(c)->rdb_only = v == 1;
        } else if (!strcasecmp(opt, "rdb-filter-only")) {
            if (!set_rdb_filter(c, val->ptr)) return;
        } else {
            reply_error(c, "Unrecognized REPLCONF option: %s", opt);
            return;
        }
    }
    reply_ok(c);
}

/* ------------------------------------------------- WAIT, min-replicas */


int master_good_replicas(const server_t *srv) {
    int n = 0;
    for (repl_replica_t *rep = R(srv)->replicas; rep; rep = rep->next)
        if (rep->state == REPLICA_ONLINE && (srv->mstime - rep->ack_ms) / 1000 <= srv->cfg.min_replicas_max_lag) n++;
    return n;
}

/* Block c until w's condition holds (master_check_waiters answers). */
static void add_waiter(client_t *c, repl_waiter_t *w) {
    repl_t *r = R(c->srv);
    w->c = c;
    w->next = r->waiters;
    r->waiters = w;
    c->flags |= CLIENT_REPL_WAIT;
    r->getack_pending = true;
    evloop_request_before_sleep(c->srv->loop);
}

/* WAIT's and WAITAOF's timeout in ms: Redis's texts for a bad one. */
static bool wait_timeout_or_reply(client_t *c, robj *arg, long long *timeout) {
    if (!cmd_get_ll_or_reply(c, arg, timeout, "timeout is not an integer or out of range")) return false;
    if (*timeout < 0) {
        reply_error(c, "timeout is negative");
        return false;
    }
    if (*timeout > LLONG_MAX - c->srv->mstime) { /* Redis 7.4 */
        reply_error(c, "timeout is out of range");
        return false;
    }
    return true;
}

void cmd_wait(client_t *c) {
    server_t *srv = c->srv;
    repl_t *r = R(srv);
    if (r->link.state != LINK_NONE) {
        reply_error(c, "WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a "
                       "replica is configured to be writable (which is not the default) writes to replicas are just "
                       "local and are not propagated.");
        return;
    }
    long long num, timeout;
    if (!cmd_get_ll_or_reply(c, c->argv[1], &num, NULL)) return;
    if (!wait_timeout_or_reply(c, c->argv[2], &timeout)) return;
    long long off = c->woff; /* its own last write, as Redis */
    int acked = repl_acked_count(srv, off, false);
    if (acked >= num || (c->flags & CLIENT_DENY_BLOCKING)) {
        reply_ll(c, acked);
        return;
    }
    repl_waiter_t *w = zcalloc(sizeof(*w));
    w->offset = off;
    w->numreplicas = (long)num;
    w->deadline_ms = timeout ? srv->mstime + timeout : 0;
    add_waiter(c, w);
}

static void reply_waitaof(client_t *c, int local, int replicas) {
    reply_array_len(c, 2);
    reply_ll(c, local);
    reply_ll(c, replicas);
}

/* WAITAOF numlocal numreplicas timeout (Redis 7.2): until this server's
 * AOF (numlocal 1) and numreplicas replicas' AOFs have fsynced every write
 * this client made so far (up to its last write's offset, woff);
 * [local, replicas] as they stand when it returns. */
void cmd_waitaof(client_t *c) {
    server_t *srv = c->srv;
    repl_t *r = R(srv);
    long long numlocal, numreplicas, timeout;
    if (!cmd_get_ll_or_reply(c, c->argv[1], &numlocal, NULL)) return;
    if (numlocal < 0 || numlocal > 1) {
        reply_error(c, "value is out of range, value must between 0 and 1" /* sic, Redis 7.4 */);
        return;
    }
    if (!cmd_get_ll_or_reply(c, c->argv[2], &numreplicas, NULL)) return;
    if (numreplicas < 0) {
        reply_error(c, "value is out of range, must be positive");
        return;
    }
    if (!wait_timeout_or_reply(c, c->argv[3], &timeout)) return;
    if (r->link.state != LINK_NONE) {
        reply_error(c, "WAITAOF cannot be used with replica instances. Please also note that writes to replicas are "
                       "just local and are not propagated.");
        return;
    }
    if (numlocal && !srv->cfg.appendonly) {
        reply_error(c, "WAITAOF cannot be used when numlocal is set but appendonly is disabled.");
        return;
    }
    r->aof_fsynced = srv->aof ? aof_fsynced_tag(srv->aof) : -1;
    long long off = c->woff; /* its own last write, as Redis */
    int acked = repl_acked_count(srv, off, true);
    int local = r->aof_fsynced >= off;
    if ((acked >= numreplicas && local >= numlocal) || (c->flags & CLIENT_DENY_BLOCKING)) {
        reply_waitaof(c, local, acked);
        return;
    }
    repl_waiter_t *w = zcalloc(sizeof(*w));
    w->aof = true;
    w->numlocal = (int)numlocal;
    w->offset = off;
    w->numreplicas = (long)numreplicas;
    w->deadline_ms = timeout ? srv->mstime + timeout : 0;
    add_waiter(c, w);
}


/* ------------------------------------------------------------ cron */

static void ping_replicas(server_t *srv) {
    repl_t *r = R(srv);
    if (r->link.state != LINK_NONE || !r->backlog || !r->replicas || r->stream_held) return;
    if (srv->mstime - r->last_ping_ms < srv->cfg.repl_ping_replica_period * 1000) return;
    r->last_ping_ms = srv->mstime;
    static const char ping[] = "*1\r\n$4\r\nPING\r\n";
    master_feed_raw(srv, ping, sizeof(ping) - 1);
}

void master_cron(server_t *srv) {
    repl_t *r = R(srv);
    ping_replicas(srv);
    maybe_start_sync(srv); /* after another child ended, or the diskless delay passed */
    repl_relay_cron(srv);  /* a TLS replica that stopped reading mid-relay */
    for (repl_replica_t *rep = r->replicas; rep; rep = rep->next) {
        /* Waiting for the snapshot: a newline keeps its repl-timeout at bay
         * (not while a diskless child owns the socket). */
        if (rep->state == REPLICA_WAIT_BGSAVE_START ||
            (rep->state == REPLICA_WAIT_BGSAVE_END && !r->rdb_child_diskless))
            reply_raw(rep->c, "\n", 1);
        if (rep->state == REPLICA_ONLINE && !rep->rdb_only && !rep->old_sync &&
            srv->mstime - rep->ack_ms > srv->cfg.repl_timeout * 1000)
            repl_replica_close(rep, "timeout");
    }
    if (r->backlog && r->link.state == LINK_NONE && !r->replicas && srv->cfg.repl_backlog_ttl > 0 &&
        srv->mstime - r->backlog_idle_since_ms > srv->cfg.repl_backlog_ttl * 1000) {
        log_msg(LL_NOTICE, "Replication backlog freed after %lld seconds without connected replicas.",
                srv->cfg.repl_backlog_ttl);
        backlog_free(r->backlog);
        r->backlog = NULL;
    }
    if (r->backlog && r->backlog->size != (size_t)srv->cfg.repl_backlog_size)
        backlog_resize(r->backlog, (size_t)srv->cfg.repl_backlog_size);
    repl_sync_file_cron(srv);
}

/* ------------------------------------------------------- write refusals */

const char *repl_write_refusal(server_t *srv, const client_t *caller) {
    if (caller->flags & CLIENT_MASTER) return NULL;
    if (R(srv)->link.state != LINK_NONE)
        return srv->cfg.replica_read_only ? "READONLY You can't write against a read only replica." : NULL;
    if (srv->cfg.min_replicas_to_write > 0 && srv->cfg.min_replicas_max_lag > 0 &&
        master_good_replicas(srv) < srv->cfg.min_replicas_to_write)
        return "NOREPLICAS Not enough good replicas to write.";
    return NULL;
}

bool repl_serving_stale_refused(const server_t *srv) {
    const repl_t *r = R(srv);
    return r->link.state != LINK_NONE && r->link.state != LINK_CONNECTED && !srv->cfg.replica_serve_stale_data;
}

const char *repl_command_refusal(client_t *c, uint32_t flags) {
    server_t *srv = c->srv;
    repl_t *r = R(srv);
    if (c->flags & CLIENT_MASTER) return NULL;
    const char *err = flags & CMD_WRITE ? repl_write_refusal(srv, c) : NULL;
    if (err || r->link.state == LINK_NONE) return err;
    if (!(flags & CMD_STALE) && repl_serving_stale_refused(srv))
        return "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.";
    return NULL; /* -LOADING: loading.h, after these */
}
