/* repl_stream.c: the replication history and the stream that carries it.
 *
 * What the rest of durability needs from replication sits here, below
 * persistence: the history's identity (replid, replid2, offset) and its
 * backlog, feeding the stream to the backlog and to each replica
 * (propagate.c writes commands, a replica forwards its master's bytes),
 * the replicas' acknowledgements that WAIT waits for, and the history
 * kept in and restored from an RDB file (rdb_save.c, persist.c).  The
 * orchestration above (repl_master.c, repl_replica.c, repl_failover.c,
 * repl_info.c) calls down into it; this file calls nothing of theirs, so
 * persistence and replication no longer call each other round a circle. */
#include "repl_state.h"

#include <string.h>

#include "log.h"
#include "rdb.h"
#include "reply.h"
#include "resp.h"
#include "util.h"

/* 0 where replication is not set up (the check tools, the AOF fuzzer). */
long long repl_offset(const server_t *srv) { return R(srv) ? R(srv)->master_repl_offset : 0; }

/* Only a master feeds the stream from its own writes: a replica forwards
 * its master's bytes (repl_master_applied), so it need not translate. */
bool repl_stream_on(const server_t *srv) {
    return R(srv) && R(srv)->backlog != NULL && R(srv)->link.state == LINK_NONE;
}

void repl_replica_close(repl_replica_t *rep, const char *why) {
    log_msg(LL_WARNING, "Connection with replica %s lost (%s).", rep->c->addr, why);
    conn_close_async(rep->c);
}

/* Hold the stream for a replica that is still syncing; its limit is the
 * replica output buffer limit, as if it were queued output. */
static void hold_pending(server_t *srv, repl_replica_t *rep, const char *p, size_t len) {
    if (rep->c->flags & (CLIENT_CLOSE_ASAP | CLIENT_CLOSE_AFTER_REPLY)) return;
    rep->pending = sds_catlen(rep->pending, p, len);
    const obuf_limit_t *lim = &srv->cfg.obuf_limits[OBUF_REPLICA];
    if (lim->hard && (long long)sds_len(rep->pending) >= lim->hard) repl_replica_close(rep, "output buffer limit during sync");
}

void master_feed_raw(server_t *srv, const char *p, size_t len) {
    repl_t *r = R(srv);
    backlog_append(r->backlog, p, len);
    r->master_repl_offset += (long long)len;
    for (repl_replica_t *rep = r->replicas; rep; rep = rep->next) {
        switch (rep->state) {
            case REPLICA_ONLINE: reply_raw(rep->c, p, len); break;
            case REPLICA_WAIT_BGSAVE_END:
            case REPLICA_SEND_BULK:
            case REPLICA_ONLINE_ON_ACK: hold_pending(srv, rep, p, len); break;
            default: break; /* WAIT_BGSAVE_START: its RDB will include this */
        }
    }
}

void repl_feed(server_t *srv, int dbid, const char *cmd, size_t len) {
    repl_t *r = R(srv);
    if (r->link.state != LINK_NONE) return;
    if (!r->backlog) {
        /* No stream to feed (propagate.c calls us then only for the AOF),
         * but WAITAOF counts in replication offsets: the offset still
         * moves, by one, as Redis 7.2 moves it. */
        r->master_repl_offset++;
        return;
    }
    if (dbid != r->stream_db) {
        char n[16];
        const char *av[2] = {"SELECT", n};
        size_t lens[2] = {6, (size_t)util_ll2str(n, sizeof(n), dbid)};
        sds sel = resp_cat_command(sds_empty(), 2, av, lens);
        master_feed_raw(srv, sel, sds_len(sel));
        sds_free(sel);
        r->stream_db = dbid;
    }
    master_feed_raw(srv, cmd, len);
}

void master_ensure_backlog(server_t *srv) {
    repl_t *r = R(srv);
    if (r->backlog) return;
    /* A master that wrote without a backlog has a gap in its history: a
     * new ID keeps anyone from continuing across it (Redis does the same). */
    if (r->link.state == LINK_NONE) {
        util_random_hex(r->replid, REPL_ID_LEN);
        memset(r->replid2, '0', REPL_ID_LEN);
        r->second_replid_offset = -1;
    }
    r->backlog = backlog_create((size_t)srv->cfg.repl_backlog_size, r->master_repl_offset + 1);
    r->stream_db = -1;
}

void master_shift_replid(server_t *srv) {
    repl_t *r = R(srv);
    memcpy(r->replid2, r->replid, sizeof(r->replid));
    r->second_replid_offset = r->master_repl_offset + 1;
    util_random_hex(r->replid, REPL_ID_LEN);
    log_msg(LL_NOTICE, "Setting secondary replication ID to %s, valid up to offset: %lld. New replication ID is %s",
            r->replid2, r->second_replid_offset, r->replid);
}

void master_disconnect_replicas(server_t *srv) {
    for (repl_replica_t *rep = R(srv)->replicas; rep; rep = rep->next) conn_close_async(rep->c);
}

int repl_acked_count(const server_t *srv, long long off, bool aof) {
    int n = 0;
    for (repl_replica_t *rep = R(srv)->replicas; rep; rep = rep->next)
        if (rep->state == REPLICA_ONLINE && (aof ? rep->aof_off : rep->ack_off) >= off) n++;
    return n;
}

/* Answer w if its condition holds or its time is up (or, for WAITAOF,
 * AOF was turned off under it); false to keep waiting.  Our own AOF's
 * fsynced offset is r->aof_fsynced, which the callers above read. */
static bool waiter_done(server_t *srv, repl_waiter_t *w, long long now) {
    client_t *c = w->c;
    bool expired = w->deadline_ms && now >= w->deadline_ms;
    int acked = repl_acked_count(srv, w->offset, w->aof);
    if (!w->aof) {
        if (acked < w->numreplicas && !expired) return false;
        reply_ll(c, acked);
        return true;
    }
    if (w->numlocal && !srv->cfg.appendonly) {
        reply_error(c, "WAITAOF cannot be used when numlocal is set but appendonly is disabled.");
        return true;
    }
    int local = R(srv)->aof_fsynced >= w->offset;
    if ((acked < w->numreplicas || local < w->numlocal) && !expired) return false;
    reply_array_len(c, 2);
    reply_ll(c, local);
    reply_ll(c, acked);
    return true;
}

void master_check_waiters(server_t *srv) {
    repl_t *r = R(srv);
    long long now = util_mstime();
    repl_waiter_t **pp = &r->waiters;
    while (*pp) {
        repl_waiter_t *w = *pp;
        if (!waiter_done(srv, w, now)) {
            pp = &w->next;
            continue;
        }
        *pp = w->next;
        client_t *c = w->c;
        zfree(w);
        c->flags &= ~CLIENT_REPL_WAIT;
        conn_process_input(c); /* what it pipelined behind WAIT */
    }
}

/* Demotion (REPLICAOF): WAIT and WAITAOF are refused and their clients
 * closed, as Redis (7.0 and 7.4) refuses every blocked client then. */
void master_release_waiters(server_t *srv) {
    repl_t *r = R(srv);
    while (r->waiters) {
        repl_waiter_t *w = r->waiters;
        r->waiters = w->next;
        client_t *c = w->c;
        zfree(w);
        c->flags &= ~CLIENT_REPL_WAIT;
        reply_error(c, "UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)");
        c->flags |= CLIENT_CLOSE_AFTER_REPLY;
    }
}

bool repl_rdb_save_info(const server_t *srv, rdb_repl_info_t *out) {
    const repl_t *r = R(srv);
    if (!r || !r->backlog) return false; /* no history anyone could continue */
    memset(out, 0, sizeof(*out));
    out->valid = true;
    memcpy(out->id, r->replid, sizeof(out->id));
    out->offset = r->master_repl_offset;
    if (r->link.state == LINK_NONE) out->stream_db = r->stream_db < 0 ? 0 : r->stream_db;
    else out->stream_db = r->link.master ? r->link.master->db->id : r->link.resume_db;
    return true;
}

void repl_restore_from_rdb(server_t *srv, const rdb_repl_info_t *in) {
    repl_t *r = R(srv);
    if (!in->valid || in->offset < 0 || r->backlog) return;
    if (r->link.state != LINK_NONE) {
        /* Our PSYNC will ask for in->id from in->offset + 1. */
        memcpy(r->replid, in->id, sizeof(r->replid));
        r->master_repl_offset = in->offset;
        r->link.resume_db = in->stream_db >= 0 && in->stream_db < srv->dbnum ? in->stream_db : 0;
    } else {
        /* A new history that continues the old one's offsets. */
        memcpy(r->replid2, in->id, sizeof(r->replid2));
        r->second_replid_offset = in->offset + 1;
        r->master_repl_offset = in->offset;
    }
    r->backlog = backlog_create((size_t)srv->cfg.repl_backlog_size, r->master_repl_offset + 1);
    r->backlog_idle_since_ms = util_mstime();
    log_msg(LL_NOTICE, "Replication ID %s and offset %lld restored from the RDB file (as %s)", in->id, in->offset,
            r->link.state != LINK_NONE ? "our own, to continue with our master" : "our replid2");
}
