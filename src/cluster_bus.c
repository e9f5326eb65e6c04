/* cluster_bus.c: the top of the cluster bus (cluster_bus.h): where a
 * message from a link goes, the bus's cron, start and stop.
 *
 * The bus is split by concern, each file below this one (the list and
 * the shared state are in cluster_bus_internal.h): cluster_link.c reads
 * and writes the sockets and hands each whole message up through the
 * cluster_link_ops_t filled here; cluster_wire.c checks and builds
 * messages; cluster_gossip.c applies PING/PONG/MEET and UPDATE,
 * cluster_failure.c failure reports and FAIL, cluster_failover.c votes,
 * elections and the manual failover, cluster_replica_migration.c moves a
 * replica to an orphaned master, cluster_forget.c forgets nodes,
 * cluster_relay.c relays pub/sub.
 *
 * Trust boundary: every message comes from the network; process_message
 * runs cluster_msg_valid() on it (the lengths agree with the type, the
 * gossip count and every extension) before any handler reads a field. */
#include "cluster_bus.h"

#include <arpa/inet.h>
#include <stdlib.h>

#include "cluster_bus_internal.h"
#include "log.h"
#include "repl.h"
#include "repl_state.h"
#include "util.h"

/* ------------------------------------------------------------ messages */

/* A message from a node we know (not in handshake): its current epoch,
 * and the offset a master paused for our manual failover tells. */
static void note_known_sender(server_t *srv, cluster_node_t *sender, const cmsg_header_t *h) {
    cluster_t *cl = srv->cluster;
    uint64_t cur = ntoh64(h->current_epoch);
    if (cur > cl->current_epoch) {
        cl->current_epoch = cur;
        cl->todo_save = true;
    }
    cluster_mf_note_master_offset(srv, sender, h);
}

/* One whole message (cluster_link_ops_t.message); false closes the link. */
static bool process_message(cluster_link_t *l, const uint8_t *buf, size_t len) {
    server_t *srv = l->srv;
    cluster_t *cl = srv->cluster;
    const cmsg_header_t *h = (const cmsg_header_t *)buf;
    int type = ntohs(h->type);
    cl->stats_received++;
    if (type < CMSG_TYPES) cl->stats_received_type[type]++;
    if (type == cl->bus->drop_type) {
        log_msg(LL_WARNING, "Dropping packet that matches debug drop filter");
        return true;
    }
    if (!cluster_msg_valid(buf, len)) {
        log_msg(LL_WARNING, "Cluster bus: a malformed message (type %d, %zu bytes) ignored", type, len);
        return true;
    }
    cluster_node_t *sender = cluster_lookup_node(cl, h->sender, CLUSTER_NAMELEN);
    if (sender == cl->myself) return false; /* a node with our name: not a peer */
    if (sender && (sender->flags & CNODE_HANDSHAKE)) sender = NULL;
    if (sender) note_known_sender(srv, sender, h);
    if (sender && !l->node && l->from != sender) cluster_link_set_from(l, sender);
    if (type == CMSG_PING || type == CMSG_PONG || type == CMSG_MEET)
        return cluster_gossip_handle_ping(l, sender, h, type);
    if (!sender) return true; /* other messages only from nodes we know */
    if (type == CMSG_FAIL) cluster_failure_handle_fail(srv, sender, buf);
    else if (type == CMSG_UPDATE) cluster_gossip_handle_update(srv, buf);
    else if (type == CMSG_FAILOVER_AUTH_REQUEST) cluster_handle_auth_request(srv, sender, h);
    else if (type == CMSG_MFSTART) cluster_mf_handle_start(srv, sender, l);
    else if (type == CMSG_FAILOVER_AUTH_ACK) cluster_handle_auth_ack(srv, sender, h);
    else if (type == CMSG_PUBLISH || type == CMSG_PUBLISHSHARD) cluster_relay_deliver(srv, type, buf);
    /* MODULE: for a module of the receiver; we are a node with none, and
     * Redis drops a message no module registered for without a word. */
    return true;
}

/* An outgoing link connected (cluster_link_ops_t.connected): MEET if
 * CLUSTER MEET asked for one, else PING. */
static void link_connected(cluster_link_t *l) {
    bool meet = l->node && (l->node->flags & CNODE_MEET);
    cmsg_send_ping(l, meet ? CMSG_MEET : CMSG_PING);
    if (l->node) l->node->flags &= ~CNODE_MEET;
}

static const cluster_link_ops_t link_ops = {
    .message = process_message,
    .connected = link_connected,
};

/* ---------------------------------------------------------------- cron */

/* Handshakes that timed out are dropped; a node without a link gets one. */
static void cron_handshakes_and_connects(server_t *srv, long long now) {
    cluster_t *cl = srv->cluster;
    long long timeout = srv->cfg.cluster_node_timeout, hs_timeout = timeout < 1000 ? 1000 : timeout;
    for (int i = 0; i < cl->node_count; i++) {
        cluster_node_t *n = cl->nodes[i];
        if (n == cl->myself || (n->flags & CNODE_NOADDR)) continue;
        if ((n->flags & CNODE_HANDSHAKE) && now - n->ctime > hs_timeout) {
            cluster_bus_node_gone(srv, n);
            cluster_forget_node(cl, n);
            i--;
            continue;
        }
        if (!n->link && n->ip[0] && n->cport) cluster_link_connect(srv, n);
    }
}

/* Once a second: ping the node we heard from least recently among a few. */
static void cron_ping_one(server_t *srv) {
    cluster_t *cl = srv->cluster;
    if (cl->bus->cron_ticks % 10 != 0 || cl->node_count <= 1) return;
    cluster_node_t *oldest = NULL;
    for (int j = 0; j < 5; j++) {
        cluster_node_t *n = cl->nodes[random() % cl->node_count];
        if (n == cl->myself || !n->link || !n->link->connected || n->ping_sent || (n->flags & CNODE_HANDSHAKE))
            continue;
        if (!oldest || n->pong_received < oldest->pong_received) oldest = n;
    }
    if (oldest) cmsg_send_ping(oldest->link, CMSG_PING);
}

/* Each node: a stuck link redone, a PING at half the timeout without a
 * PONG, then failure detection. */
static void cron_node_timeouts(server_t *srv, long long now) {
    cluster_t *cl = srv->cluster;
    long long timeout = srv->cfg.cluster_node_timeout;
    for (int i = 0; i < cl->node_count; i++) {
        cluster_node_t *n = cl->nodes[i];
        if (n == cl->myself || (n->flags & (CNODE_NOADDR | CNODE_HANDSHAKE))) continue;
        cluster_link_t *l = n->link;
        /* Half the timeout without a PONG: the link may be stuck, redo it. */
        if (l && now - l->ctime > timeout && n->ping_sent && now - n->ping_sent > timeout / 2) {
            cluster_link_free(l);
            continue;
        }
        if (l && l->connected && !n->ping_sent && now - n->pong_received > timeout / 2) cmsg_send_ping(l, CMSG_PING);
        cluster_failure_check(srv, n, now);
    }
}

/* Our own state the others must see, and what a restart from nodes.conf
 * left undone: cluster-replica-no-failover shows as our nofailover flag,
 * which our headers carry (Redis's clusterUpdateMyselfFlags); a replica
 * by its nodes.conf follows its master again, as Redis's cron does. */
static void cron_myself(server_t *srv) {
    cluster_t *cl = srv->cluster;
    cluster_node_t *me = cl->myself;
    unsigned nofailover = srv->cfg.cluster_replica_no_failover ? CNODE_NOFAILOVER : 0;
    if ((me->flags & CNODE_NOFAILOVER) != nofailover) {
        me->flags = (me->flags & ~CNODE_NOFAILOVER) | nofailover;
        cl->todo_update = cl->todo_save = true;
    }
    if ((me->flags & CNODE_REPLICA) && me->replicaof && me->replicaof->ip[0] && me->replicaof->port &&
        !repl_is_replica(srv))
        replica_set_master(srv, me->replicaof->ip, me->replicaof->port);
}

void cluster_bus_cron(server_t *srv) {
    long long now = util_mstime();
    srv->cluster->bus->cron_ticks++;
    cron_handshakes_and_connects(srv, now);
    cron_ping_one(srv);
    cron_node_timeouts(srv, now);
    cron_myself(srv);
    cluster_mf_cron(srv);
    cluster_links_cron(srv);
    cluster_election_cron(srv);
    cluster_migration_cron(srv);
}

/* ------------------------------------------------------- start and stop */

bool cluster_bus_init(server_t *srv) {
    cluster_bus_t *bus = zcalloc(sizeof(*bus));
    bus->mf_master_offset = -1;
    bus->drop_type = -1;
    bus->link_ops = &link_ops;
    srv->cluster->bus = bus;
    return cluster_link_listen(srv);
}

void cluster_bus_free(server_t *srv) {
    cluster_t *cl = srv->cluster;
    if (!cl || !cl->bus) return;
    cluster_bus_t *bus = cl->bus;
    cluster_link_close_all(srv);
    zfree(bus->reports);
    zfree(bus);
    cl->bus = NULL;
}

/* DEBUG DROP-CLUSTER-PACKET-FILTER: messages of TYPE are read and counted,
 * then ignored (-1: none), as Redis 7.0's tests use it to cut gossip. */
void cluster_bus_set_drop_type(server_t *srv, int type) {
    if (srv->cluster && srv->cluster->bus) srv->cluster->bus->drop_type = type;
}
