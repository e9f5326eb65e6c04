/* cluster_failover.c: failover on the cluster bus (cluster_bus_internal.h),
 * as Redis 7.0 does it.  A replica whose master is FAIL waits a delay by
 * its rank, asks the masters for their votes in a new epoch, and with a
 * majority takes its master's slots and tells everyone (election_cron,
 * promote_myself); a master grants one vote per epoch
 * (cluster_handle_auth_request).  CLUSTER FAILOVER starts a manual one:
 * MFSTART makes the master hold its writes and tell its offset, and the
 * replica's election starts once it reached it (FORCE: at once; TAKEOVER:
 * no election).  A node that sees its master's slots go to another
 * follows that one (cluster_follow_master).  Called by cluster_bus.c's
 * dispatch and cron, cluster_gossip.c and the replica migration; sends
 * through cluster_wire.c. */
#include <stdlib.h>

#include "cluster_bus.h"
#include "cluster_bus_internal.h"
#include "log.h"
#include "pause.h"
#include "repl_state.h"
#include "util.h"

/* ------------------------------------------------------------ failover */

/* Become a replica of m (CLUSTER REPLICATE's effect, from the bus). */
void cluster_follow_master(server_t *srv, cluster_node_t *m) {
    cluster_t *cl = srv->cluster;
    cluster_node_t *me = cl->myself;
    log_msg(LL_NOTICE, "Configuration change detected. Reconfiguring myself as a replica of %.40s", m->name);
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        if (cl->slots[s] == me) cluster_del_slot(cl, s);
        cl->migrating_to[s] = cl->importing_from[s] = NULL;
    }
    cluster_count_moving(cl);
    me->flags = (me->flags & ~(CNODE_MASTER | CNODE_MIGRATE_TO)) | CNODE_REPLICA;
    me->replicaof = m;
    cluster_set_shard_id(cl, me, m->shard_id);
    replica_set_master(srv, m->ip, m->port);
    cluster_mf_reset(srv); /* a master that held writes for its replica lets them run: they are redirected now */
    cl->todo_update = cl->todo_save = true;
}

/* A master's vote (Redis's rules): for a replica of a failing master (or
 * asked with FORCEACK), once per epoch, once per master in twice the node
 * timeout, and only if no slot it claims has a newer owner. */
void cluster_handle_auth_request(server_t *srv, cluster_node_t *sender, const cmsg_header_t *h) {
    cluster_t *cl = srv->cluster;
    cluster_node_t *me = cl->myself, *master = sender->replicaof;
    uint64_t req_epoch = ntoh64(h->current_epoch), req_config = ntoh64(h->config_epoch);
    long long now = util_mstime();
    if ((me->flags & CNODE_REPLICA) || !me->numslots) return;
    if (req_epoch < cl->current_epoch || cl->last_vote_epoch == cl->current_epoch) return;
    if (!(sender->flags & CNODE_REPLICA) || !master) return;
    if (!(master->flags & CNODE_FAIL) && !(h->mflags[0] & CMSG_FLAG0_FORCEACK)) return;
    if (now - master->voted_time < srv->cfg.cluster_node_timeout * 2) return;
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        if (!(h->myslots[s >> 3] & (1u << (s & 7)))) continue;
        if (cl->unclaimed[s >> 3] & (1u << (s & 7))) continue; /* its owner left it */
        if (cl->slots[s] && cl->slots[s]->config_epoch > req_config) return;
    }
    cl->last_vote_epoch = cl->current_epoch;
    master->voted_time = now;
    cl->todo_save = true;
    if (sender->link && sender->link->connected) cmsg_send_header_only(srv, sender->link, CMSG_FAILOVER_AUTH_ACK, 0);
    log_msg(LL_NOTICE, "Failover auth granted to %.40s for epoch %llu", sender->name,
            (unsigned long long)cl->current_epoch);
}

/* The election won: we take our master's slots under the election's epoch
 * and tell everyone. */
static void promote_myself(server_t *srv, uint64_t epoch) {
    cluster_t *cl = srv->cluster;
    cluster_node_t *me = cl->myself, *old = me->replicaof;
    log_msg(LL_NOTICE, "Failover election won: I'm the new master.");
    me->flags = (me->flags & ~CNODE_REPLICA) | CNODE_MASTER;
    me->replicaof = NULL;
    replica_unset_master(srv);
    for (int s = 0; old && s < CLUSTER_SLOTS; s++) {
        if (cl->slots[s] != old) continue;
        cluster_del_slot(cl, s);
        cluster_add_slot(cl, me, s);
    }
    if (me->config_epoch < epoch) me->config_epoch = epoch;
    cluster_mf_reset(srv);
    cl->todo_update = cl->todo_save = true;
    cluster_bus_broadcast_pong(srv);
}

/* Replicas of `master` with a better offset than ours: our delay's rank. */
static int replica_rank(server_t *srv, cluster_node_t *master) {
    cluster_t *cl = srv->cluster;
    long long mine = srv->repl->master_repl_offset;
    int rank = 0;
    for (int i = 0; i < cl->node_count; i++) {
        cluster_node_t *n = cl->nodes[i];
        if (n != cl->myself && n->replicaof == master && (n->flags & CNODE_REPLICA) && n->repl_offset > mine) rank++;
    }
    return rank;
}

/* How old our copy of the master's data is (Redis's data_age): since the
 * master last spoke on a connected link, else since the link went down
 * (never up: as old as can be); the node timeout is not counted, as the
 * master had that long to be found failing. */
static long long replica_data_age(server_t *srv) {
    repl_link_t *l = &R(srv)->link;
    long long now = srv->mstime, age;
    if (l->state == LINK_CONNECTED && l->master) age = now - l->master->last_interaction_ms;
    else age = l->down_since_ms ? now - l->down_since_ms : now;
    if (age > srv->cfg.cluster_node_timeout) age -= srv->cfg.cluster_node_timeout;
    return age;
}

/* cluster-replica-validity-factor (0: any data will do): a replica whose
 * data is older than factor node timeouts plus repl-ping-replica-period
 * does not try to fail its master over. */
static bool replica_data_too_old(server_t *srv) {
    long long factor = srv->cfg.cluster_replica_validity_factor;
    if (!factor) return false;
    long long max_age = srv->cfg.repl_ping_replica_period * 1000 + srv->cfg.cluster_node_timeout * factor;
    return replica_data_age(srv) > max_age;
}

enum { CANT_FAILOVER_NONE = 0,
       CANT_FAILOVER_DATA_AGE };

/* As Redis: a reason is logged again after 5 minutes, and not while the
 * master has been failing for less than the node timeout + 5 s (the log
 * is for replicas stalled a long time). */
static void log_cant_failover(server_t *srv, int reason) {
    cluster_bus_t *bus = srv->cluster->bus;
    cluster_node_t *master = srv->cluster->myself->replicaof;
    long long now = util_mstime();
    if (reason == bus->cant_failover_reason && now - bus->cant_failover_logged < 300000) return;
    bus->cant_failover_reason = reason;
    if (reason == CANT_FAILOVER_NONE) return;
    if (master && (master->flags & CNODE_FAIL) && now - master->fail_time < srv->cfg.cluster_node_timeout + 5000)
        return;
    bus->cant_failover_logged = now;
    if (reason == CANT_FAILOVER_DATA_AGE)
        log_msg(LL_NOTICE, "Currently unable to failover: Disconnected from master for longer than allowed. Please "
                           "check the 'cluster-replica-validity-factor' configuration option.");
}

/* A replica's share of the cron: Redis's election.  When its master is
 * FAIL (or a manual failover may start), it waits 500 ms + up to 500 ms
 * at random + 1 s per better-placed replica (a manual one not at all),
 * then asks every master for its vote in a new epoch; a majority of the
 * masters makes it master. */
void cluster_election_cron(server_t *srv) {
    cluster_t *cl = srv->cluster;
    cluster_bus_t *bus = cl->bus;
    cluster_node_t *me = cl->myself, *master = me->replicaof;
    long long now = util_mstime(), timeout = srv->cfg.cluster_node_timeout;
    long long auth_timeout = timeout * 2 < 2000 ? 2000 : timeout * 2, retry = auth_timeout * 2;
    bool manual = bus->mf_end && bus->mf_can_start;
    if (!(me->flags & CNODE_REPLICA) || !master || !master->numslots) return;
    if (!(master->flags & CNODE_FAIL) && !manual) return;
    if (srv->cfg.cluster_replica_no_failover && !manual) return;
    if (!manual && replica_data_too_old(srv)) {
        log_cant_failover(srv, CANT_FAILOVER_DATA_AGE);
        return;
    }
    log_cant_failover(srv, CANT_FAILOVER_NONE);
    if (bus->auth_time == 0 || now - bus->auth_time > retry) {
        bus->auth_time = bus->mf_end ? now : now + 500 + random() % 500 + replica_rank(srv, master) * 1000;
        bus->auth_sent = false;
        bus->auth_count = 0;
        return;
    }
    if (now < bus->auth_time || now - bus->auth_time > auth_timeout) return;
    if (!bus->auth_sent) {
        cl->current_epoch++;
        bus->auth_epoch = cl->current_epoch;
        bus->auth_sent = true;
        cl->todo_save = true;
        log_msg(LL_NOTICE, "Starting a failover election for epoch %llu.", (unsigned long long)bus->auth_epoch);
        /* A manual failover's votes come even while the master is not
         * failing (FORCEACK), as Redis asks them. */
        for (cluster_link_t *l = bus->links; l; l = l->next)
            if (l->node && l->connected && (l->node->flags & CNODE_MASTER) && l->node->numslots)
                cmsg_send_header_only(srv, l, CMSG_FAILOVER_AUTH_REQUEST, bus->mf_end ? CMSG_FLAG0_FORCEACK : 0);
        return;
    }
    if (bus->auth_count >= cl->size / 2 + 1) {
        bus->auth_time = 0;
        promote_myself(srv, bus->auth_epoch);
    }
}

void cluster_handle_auth_ack(server_t *srv, cluster_node_t *sender, const cmsg_header_t *h) {
    cluster_t *cl = srv->cluster;
    /* A vote counts from a master with slots, for this election. */
    if ((sender->flags & CNODE_MASTER) && sender->numslots && ntoh64(h->current_epoch) >= cl->bus->auth_epoch &&
        cl->bus->auth_sent) {
        cl->bus->auth_count++;
        /* The vote that makes the majority promotes us now, not at the
         * next cron tick (Redis does it before its next sleep). */
        if (cl->bus->auth_count >= cl->size / 2 + 1) cluster_election_cron(srv);
    }
}

void cluster_bus_failover(server_t *srv, int mode) {
    cluster_t *cl = srv->cluster;
    cluster_bus_t *bus = cl->bus;
    cluster_mf_reset(srv);
    bus->mf_end = util_mstime() + CLUSTER_MF_TIMEOUT_MS;
    if (mode == CLUSTER_FAILOVER_TAKEOVER) {
        log_msg(LL_WARNING, "Taking over the master (user request).");
        cl->current_epoch++;
        promote_myself(srv, cl->current_epoch);
        return;
    }
    bus->auth_time = 0;
    if (mode == CLUSTER_FAILOVER_FORCE) {
        log_msg(LL_WARNING, "Forced failover user request accepted.");
        bus->mf_can_start = true;
        return;
    }
    log_msg(LL_WARNING, "Manual failover user request accepted.");
    cluster_node_t *master = cl->myself->replicaof;
    if (master && master->link) cmsg_send_header_only(srv, master->link, CMSG_MFSTART, 0);
}

/* ------------------------------------------------------- manual failover */

/* The replica: our master's header with PAUSED carries the offset it
 * stopped at; the first one during our manual failover is the target. */
void cluster_mf_note_master_offset(server_t *srv, cluster_node_t *sender, const cmsg_header_t *h) {
    cluster_t *cl = srv->cluster;
    cluster_bus_t *bus = cl->bus;
    cluster_node_t *me = cl->myself;
    if (!bus->mf_end || !(me->flags & CNODE_REPLICA) || me->replicaof != sender) return;
    if (!(h->mflags[0] & CMSG_FLAG0_PAUSED) || bus->mf_master_offset != -1) return;
    bus->mf_master_offset = (long long)ntoh64(h->offset);
    log_msg(LL_WARNING, "Received replication offset for paused master manual failover: %lld",
            bus->mf_master_offset);
}

/* The master: MFSTART from one of our replicas.  Writes are held (and the
 * replication PINGs, so the offset stands still) until the failover ends
 * or times out; the PING sent back at once tells the replica the offset. */
void cluster_mf_handle_start(server_t *srv, cluster_node_t *sender, cluster_link_t *l) {
    cluster_t *cl = srv->cluster;
    cluster_bus_t *bus = cl->bus;
    if (sender->replicaof != cl->myself || !(cl->myself->flags & CNODE_MASTER)) return;
    cluster_mf_reset(srv);
    bus->mf_end = util_mstime() + CLUSTER_MF_TIMEOUT_MS;
    bus->mf_replica = sender;
    bus->mf_unhold = false;
    pause_hold_writes(srv, PAUSE_HOLD_CLUSTER_MF, true);
    repl_hold_stream(srv, true);
    log_msg(LL_WARNING, "Manual failover requested by replica %.40s.", sender->name);
    cmsg_send_ping(l, CMSG_PING);
}

/* Ends a manual failover, ours or our replica's (done, timed out, or a
 * role change); a master's held writes run at the next cron. */
void cluster_mf_reset(server_t *srv) {
    cluster_bus_t *bus = srv->cluster->bus;
    if (!bus) return;
    if (bus->mf_replica) bus->mf_unhold = true;
    bus->mf_end = 0;
    bus->mf_can_start = false;
    bus->mf_replica = NULL;
    bus->mf_master_offset = -1;
}

/* Every cron tick: the timeout; a master pings the replica that asked
 * (each PING says PAUSED and the offset); a replica that has applied the
 * master's stream up to that offset may start the election. */
void cluster_mf_cron(server_t *srv) {
    cluster_t *cl = srv->cluster;
    cluster_bus_t *bus = cl->bus;
    if (bus->mf_unhold) {
        bus->mf_unhold = false;
        repl_hold_stream(srv, false);
        pause_hold_writes(srv, PAUSE_HOLD_CLUSTER_MF, false);
    }
    if (!bus->mf_end) return;
    if (util_mstime() > bus->mf_end) {
        log_msg(LL_WARNING, "Manual failover timed out.");
        cluster_mf_reset(srv);
        return;
    }
    cluster_node_t *r = bus->mf_replica;
    if (r && r->link && r->link->connected) cmsg_send_ping(r->link, CMSG_PING);
    if ((cl->myself->flags & CNODE_REPLICA) && !bus->mf_can_start && bus->mf_master_offset != -1 &&
        R(srv)->master_repl_offset >= bus->mf_master_offset) {
        bus->mf_can_start = true;
        log_msg(LL_WARNING, "All master replication stream processed, manual failover can start.");
    }
}

void cluster_bus_follow(server_t *srv, cluster_node_t *m) { cluster_follow_master(srv, m); }
