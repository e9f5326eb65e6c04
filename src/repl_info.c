/* repl_info.c: replication's life cycle and what it shows: init (the
 * `replicaof` directive), the cron and before-sleep entry points, ROLE,
 * INFO replication with Redis 7.0's field names (Sentinel parses them),
 * and the memory figures INFO memory and eviction read. */
#include "repl_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "rdb.h"
#include "reply.h"
#include "util.h"

void repl_init(server_t *srv) {
    repl_t *r = zcalloc(sizeof(*r));
    util_random_hex(r->replid, REPL_ID_LEN);
    memset(r->replid2, '0', REPL_ID_LEN);
    r->second_replid_offset = -1;
    r->stream_db = -1;
    r->link.fd = -1;
    r->link.sync_fd = -1;
    /* PINGs every repl-ping-replica-period from start-up, as Redis's cron
     * counts them: not one at once to the first replica that attaches */
    r->last_ping_ms = util_mstime();
    srv->repl = r;
    persist_on_rdb_done(srv, repl_rdb_child_done); /* a BGSAVE's end reaches the replicas waiting */
    const char *ro = srv->cfg.replicaof;
    if (ro && ro[0]) {
        char host[256];
        int port;
        if (sscanf(ro, "%255s %d", host, &port) == 2) {
            r->link.host = zstrdup(host);
            r->link.port = port;
            r->link.state = LINK_CONNECT; /* the first cron tick connects */
            r->link.down_since_ms = srv->mstime;
        } else log_msg(LL_WARNING, "Ignoring the replicaof directive '%s': expected 'host port'", ro);
    }
}


void repl_close_link(server_t *srv) {
    if (R(srv)) replica_free_link(srv);
}

void repl_free(server_t *srv) {
    repl_t *r = R(srv);
    if (!r) return;
    replica_free_link(srv);
    failover_free(srv);
    zfree(r->link.host);
    sds_free(r->link.applying);
    while (r->waiters) {
        repl_waiter_t *w = r->waiters;
        r->waiters = w->next;
        zfree(w);
    }
    backlog_free(r->backlog);
    zfree(r);
    srv->repl = NULL;
}

void repl_cron(server_t *srv) {
    repl_t *r = R(srv);
    repl_after_aof_flush(srv); /* WAIT/WAITAOF timeouts, background fsyncs; a replica's FACK */
    failover_cron(srv);        /* FAILOVER: hand over as soon as the target caught up */
    if (srv->mstime - r->last_cron_sec_ms < 1000) return;
    r->last_cron_sec_ms = srv->mstime;
    replica_cron(srv);
    master_cron(srv);
}

void repl_before_sleep(server_t *srv) {
    repl_t *r = R(srv);
    if (r->getack_pending && !r->stream_held) {
        r->getack_pending = false;
        static const char getack[] = "*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n";
        if (r->backlog && r->link.state == LINK_NONE) master_feed_raw(srv, getack, sizeof(getack) - 1);
    }
    if (r->waiters) master_check_waiters(srv);
}

void repl_hold_stream(server_t *srv, bool on) { R(srv)->stream_held = on; }

/* ------------------------------------------------------------ memory */

size_t repl_backlog_memory(const server_t *srv) {
    const repl_t *r = R(srv);
    return r && r->backlog ? r->backlog->size + sizeof(*r->backlog) : 0;
}

size_t repl_replica_buffers_memory(const server_t *srv) {
    const repl_t *r = R(srv);
    size_t n = 0;
    if (!r) return 0;
    for (const repl_replica_t *rep = r->replicas; rep; rep = rep->next)
        n += conn_output_bytes(rep->c) + sds_alloc(rep->pending);
    return n;
}

void repl_sync_stats(const server_t *srv, long long *full, long long *partial_ok, long long *partial_err) {
    const repl_t *r = R(srv);
    *full = r ? r->sync_full : 0;
    *partial_ok = r ? r->sync_partial_ok : 0;
    *partial_err = r ? r->sync_partial_err : 0;
}

/* ------------------------------------------------------------ ROLE, INFO */

/* The address other nodes should use for a replica: what it announced,
 * else the address we see it connect from, with its listening port. */
static void replica_ip(const repl_replica_t *rep, char *ip, size_t len) {
    if (rep->announced_ip[0]) {
        snprintf(ip, len, "%s", rep->announced_ip);
        return;
    }
    snprintf(ip, len, "%s", rep->c->addr);
    char *colon = strrchr(ip, ':');
    if (colon) *colon = '\0';
}

static const char *replica_state_name(int state) {
    switch (state) {
        case REPLICA_WAIT_BGSAVE_START:
        case REPLICA_WAIT_BGSAVE_END: return "wait_bgsave";
        case REPLICA_SEND_BULK: return "send_bulk";
        case REPLICA_ONLINE_ON_ACK:
        case REPLICA_ONLINE: return "online";
    }
    return "unknown";
}

bool repl_replicas_in_sync(const server_t *srv) {
    const repl_t *r = R(srv);
    for (repl_replica_t *rep = r->replicas; rep; rep = rep->next)
        if (rep->ack_off < r->master_repl_offset) return false;
    return true;
}

void repl_log_shutdown_sync(const server_t *srv) {
    const repl_t *r = R(srv);
    int n = 0, in_sync = 0;
    for (repl_replica_t *rep = r->replicas; rep; rep = rep->next, n++) {
        if (rep->ack_off >= r->master_repl_offset) {
            in_sync++;
            continue;
        }
        char ip[64];
        replica_ip(rep, ip, sizeof(ip));
        log_msg(LL_WARNING, "Lagging replica %s:%lld reported offset %lld behind master, lag=%lld, state=%s.", ip,
                rep->listening_port, r->master_repl_offset - rep->ack_off, (srv->mstime - rep->ack_ms) / 1000,
                replica_state_name(rep->state));
    }
    if (n) log_msg(LL_NOTICE, "%d of %d replicas are in sync when shutting down.", in_sync, n);
}

static const char *link_state_name(int state) {
    switch (state) {
        case LINK_CONNECT: return "connect";
        case LINK_CONNECTING: return "connecting";
        case LINK_TRANSFER: return "sync";
        case LINK_CONNECTED: return "connected";
        default: return "handshake";
    }
}

void cmd_role(client_t *c) {
    server_t *srv = c->srv;
    repl_t *r = R(srv);
    if (r->link.state == LINK_NONE) {
        reply_array_len(c, 3);
        reply_bulk_cstr(c, "master");
        reply_ll(c, r->master_repl_offset);
        int n = 0;
        for (repl_replica_t *rep = r->replicas; rep; rep = rep->next)
            if (rep->state == REPLICA_ONLINE) n++;
        reply_array_len(c, n);
        for (repl_replica_t *rep = r->replicas; rep; rep = rep->next) {
            if (rep->state != REPLICA_ONLINE) continue;
            char ip[64], port[32], off[32];
            replica_ip(rep, ip, sizeof(ip));
            snprintf(port, sizeof(port), "%lld", rep->listening_port);
            snprintf(off, sizeof(off), "%lld", rep->ack_off);
            reply_array_len(c, 3);
            reply_bulk_cstr(c, ip);
            reply_bulk_cstr(c, port);
            reply_bulk_cstr(c, off);
        }
        return;
    }
    reply_array_len(c, 5);
    reply_bulk_cstr(c, "slave");
    reply_bulk_cstr(c, r->link.host);
    reply_ll(c, r->link.port);
    reply_bulk_cstr(c, link_state_name(r->link.state));
    reply_ll(c, r->link.state == LINK_CONNECTED ? r->master_repl_offset : -1);
}

static sds info_replica_side(server_t *srv, sds s) {
    repl_t *r = R(srv);
    repl_link_t *l = &r->link;
    bool up = l->state == LINK_CONNECTED;
    long long last_io = up && l->master ? (srv->mstime - l->master->last_interaction_ms) / 1000 : -1;
    /* Read, not yet applied: a request parsed but held (CLIENT PAUSE), or
     * cut in two by a read, and the bytes still unparsed. */
    long long read_off = r->master_repl_offset;
    if (up && l->master)
        read_off += (long long)((l->applying ? sds_len(l->applying) : 0) + sds_len(l->master->querybuf) -
                                l->master->qb_pos);
    s = sds_catprintf(s,
                      "master_host:%s\r\n"
                      "master_port:%d\r\n"
                      "master_link_status:%s\r\n"
                      "master_last_io_seconds_ago:%lld\r\n"
                      "master_sync_in_progress:%d\r\n"
                      "slave_read_repl_offset:%lld\r\n"
                      "slave_repl_offset:%lld\r\n",
                      l->host, l->port, up ? "up" : "down", last_io, l->state == LINK_TRANSFER ? 1 : 0, read_off,
                      r->master_repl_offset);
    if (l->state == LINK_TRANSFER) {
        /* As Redis counts them: an EOF-marked transfer has total 0, and a
         * load from the socket (repl_load.c) reads nothing "to disk". */
        long long total = l->transfer_size >= 0 ? l->transfer_size : 0;
        long long got = l->sync_path ? l->transfer_read : 0;
        s = sds_catprintf(s,
                          "master_sync_total_bytes:%lld\r\n"
                          "master_sync_read_bytes:%lld\r\n"
                          "master_sync_left_bytes:%lld\r\n"
                          "master_sync_perc:%.2f\r\n"
                          "master_sync_last_io_seconds_ago:%lld\r\n",
                          total, got, total - got, total > 0 ? (double)got * 100 / (double)total : 0.0,
                          (srv->mstime - l->last_io_ms) / 1000);
    }
    if (!up)
        s = sds_catprintf(s, "master_link_down_since_seconds:%lld\r\n",
                          l->down_since_ms ? (srv->mstime - l->down_since_ms) / 1000 : -1);
    return sds_catprintf(s,
                         "slave_priority:%lld\r\n"
                         "slave_read_only:%d\r\n"
                         "replica_announced:%d\r\n",
                         srv->cfg.replica_priority, srv->cfg.replica_read_only ? 1 : 0, srv->cfg.replica_announced ? 1 : 0);
}

sds repl_info(server_t *srv, sds s) {
    repl_t *r = R(srv);
    bool replica = r->link.state != LINK_NONE;
    s = sds_catprintf(s, "role:%s\r\n", replica ? "slave" : "master");
    if (replica) s = info_replica_side(srv, s);
    int n = 0;
    for (repl_replica_t *rep = r->replicas; rep; rep = rep->next) n++;
    s = sds_catprintf(s, "connected_slaves:%d\r\n", n);
    if (srv->cfg.min_replicas_to_write > 0 && srv->cfg.min_replicas_max_lag > 0)
        s = sds_catprintf(s, "min_slaves_good_slaves:%d\r\n", master_good_replicas(srv));
    int i = 0;
    for (repl_replica_t *rep = r->replicas; rep; rep = rep->next, i++) {
        char ip[64];
        replica_ip(rep, ip, sizeof(ip));
        s = sds_catprintf(s, "slave%d:ip=%s,port=%lld,state=%s,offset=%lld,lag=%lld\r\n", i, ip, rep->listening_port,
                          replica_state_name(rep->state), rep->ack_off, (srv->mstime - rep->ack_ms) / 1000);
    }
    const repl_backlog_t *b = r->backlog;
    return sds_catprintf(s,
                         "master_failover_state:%s\r\n"
                         "master_replid:%s\r\n"
                         "master_replid2:%s\r\n"
                         "master_repl_offset:%lld\r\n"
                         "second_repl_offset:%lld\r\n"
                         "repl_backlog_active:%d\r\n"
                         "repl_backlog_size:%lld\r\n"
                         "repl_backlog_first_byte_offset:%lld\r\n"
                         "repl_backlog_histlen:%zu\r\n",
                         failover_state_name(srv), r->replid, r->replid2, r->master_repl_offset, r->second_replid_offset, b ? 1 : 0,
                         srv->cfg.repl_backlog_size, b ? b->first_off : 0, b ? b->histlen : 0);
}
