/* cluster_wire.c: the cluster bus's wire format (cluster_msg.h): the
 * check every message from the network passes before anything reads a
 * field of it (cluster_msg_valid, also the fuzz target's subject), and
 * building and queueing our own messages: the header, PING/PONG/MEET
 * with their gossip section and extensions, FAIL, the header-only ones.
 * It only writes to links (cluster_link.c) and reads the cluster state;
 * what a message received does is the files above it. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_bus.h"
#include "cluster_bus_internal.h"
#include "repl.h"
#include "repl_state.h"
#include "util.h"

/* ---------------------------------------------------------- validation */

static bool valid_extensions(const uint8_t *p, size_t len, unsigned n) {
    for (unsigned i = 0; i < n; i++) {
        if (len < sizeof(cmsg_ext_t)) return false;
        uint32_t elen;
        memcpy(&elen, p, sizeof(elen));
        elen = ntohl(elen);
        if (elen < sizeof(cmsg_ext_t) || elen % 8 || elen > len) return false;
        p += elen;
        len -= elen;
    }
    return len == 0;
}

bool cluster_msg_valid(const uint8_t *buf, size_t len) {
    if (len < 8 || memcmp(buf, "RCmb", 4)) return false;
    uint32_t totlen;
    memcpy(&totlen, buf + 4, 4);
    if (ntohl(totlen) != len || len < CMSG_HEADER_LEN) return false;
    const cmsg_header_t *h = (const cmsg_header_t *)buf;
    if (ntohs(h->ver) != CMSG_PROTO_VER) return false;
    size_t data = len - CMSG_HEADER_LEN;
    const uint8_t *d = buf + CMSG_HEADER_LEN;
    switch (ntohs(h->type)) {
        case CMSG_PING:
        case CMSG_PONG:
        case CMSG_MEET: {
            size_t gossip = (size_t)ntohs(h->count) * sizeof(cmsg_gossip_t);
            if (gossip > data) return false;
            unsigned exts = (h->mflags[0] & CMSG_FLAG0_EXT_DATA) ? ntohs(h->extensions) : 0;
            return valid_extensions(d + gossip, data - gossip, exts);
        }
        case CMSG_FAIL: return data == CLUSTER_NAMELEN;
        case CMSG_UPDATE: return data == sizeof(cmsg_update_t);
        case CMSG_PUBLISH:
        case CMSG_PUBLISHSHARD: {
            if (data < 8) return false;
            uint32_t cl, ml;
            memcpy(&cl, d, 4);
            memcpy(&ml, d + 4, 4);
            return (uint64_t)ntohl(cl) + ntohl(ml) + 8 <= data;
        }
        case CMSG_FAILOVER_AUTH_REQUEST:
        case CMSG_FAILOVER_AUTH_ACK:
        case CMSG_MFSTART: return data == 0;
        case CMSG_MODULE: { /* module id (8), length (4), type (1), payload */
            if (data < 13) return false;
            uint32_t plen;
            memcpy(&plen, d + 8, 4);
            return (uint64_t)ntohl(plen) + 13 == data;
        }
        default: return true; /* later types: read by nobody */
    }
}

/* ------------------------------------------------------------ building */

bool cmsg_null_name(const char *name) {
    for (int i = 0; i < CLUSTER_NAMELEN; i++)
        if (name[i]) return false;
    return true;
}

/* The replication offset our headers tell: 0 on a replica in a full sync
 * (transfer and load), as Redis's replica offset, so that the others
 * leave it out of CLUSTER SLOTS until it has its data. */
long long cluster_bus_my_offset(server_t *srv) {
    if (repl_is_replica(srv) && srv->repl->link.state == LINK_TRANSFER) return 0;
    return srv->repl->master_repl_offset;
}

void cmsg_fill_header(server_t *srv, cmsg_header_t *h, int type, size_t totlen) {
    cluster_t *cl = srv->cluster;
    cluster_node_t *me = cl->myself, *master = (me->flags & CNODE_REPLICA) && me->replicaof ? me->replicaof : me;
    memset(h, 0, sizeof(*h));
    memcpy(h->sig, "RCmb", 4);
    h->totlen = htonl((uint32_t)totlen);
    h->ver = htons(CMSG_PROTO_VER);
    h->port = htons((uint16_t)me->port);
    h->type = htons((uint16_t)type);
    h->current_epoch = hton64(cl->current_epoch);
    h->config_epoch = hton64(master->config_epoch);
    h->offset = hton64((uint64_t)cluster_bus_my_offset(srv));
    memcpy(h->sender, me->name, CLUSTER_NAMELEN);
    memcpy(h->myslots, master->slots, sizeof(h->myslots));
    if (master != me) memcpy(h->slaveof, master->name, CLUSTER_NAMELEN);
    if (srv->cfg.cluster_announce_ip[0]) snprintf(h->myip, sizeof(h->myip), "%s", srv->cfg.cluster_announce_ip);
    h->cport = htons((uint16_t)me->cport);
    h->flags = htons((uint16_t)me->flags);
    h->state = (uint8_t)cl->state;
    /* A master holding its writes for a replica's manual failover says so:
     * the offset above is the one that replica must reach. */
    if (master == me && (me->flags & CNODE_MASTER) && cl->bus && cl->bus->mf_end)
        h->mflags[0] |= CMSG_FLAG0_PAUSED;
}

/* Whether n belongs in a gossip section sent to `to`. */
static bool gossip_candidate(cluster_t *cl, cluster_node_t *n, cluster_node_t *to) {
    if (n == cl->myself || n == to) return false;
    if (n->flags & (CNODE_HANDSHAKE | CNODE_NOADDR)) return false;
    return n->link || n->numslots;
}

static void fill_gossip(cmsg_gossip_t *g, const cluster_node_t *n) {
    memset(g, 0, sizeof(*g));
    memcpy(g->nodename, n->name, CLUSTER_NAMELEN);
    g->ping_sent = htonl((uint32_t)(n->ping_sent / 1000));
    g->pong_received = htonl((uint32_t)(n->pong_received / 1000));
    snprintf(g->ip, sizeof(g->ip), "%s", n->ip);
    g->port = htons((uint16_t)n->port);
    g->cport = htons((uint16_t)n->cport);
    g->flags = htons((uint16_t)n->flags);
}

/* PING, PONG or MEET: the header, gossip about up to a tenth of the
 * nodes (at least 3, all of a small cluster, every PFAIL one), the
 * hostname extension when we have one, and the shard id extension. */
void cmsg_send_ping(cluster_link_t *l, int type) {
    server_t *srv = l->srv;
    cluster_t *cl = srv->cluster;
    cluster_node_t *to = l->node;
    int wanted = cl->node_count / 10;
    if (wanted < 3) wanted = 3;
    cluster_node_t **picked = zmalloc(sizeof(*picked) * (size_t)(cl->node_count + 1));
    int n = 0;
    /* A random start, then in order: every node gets its turn. */
    int start = cl->node_count ? (int)(random() % cl->node_count) : 0;
    for (int i = 0; i < cl->node_count && n < wanted; i++) {
        cluster_node_t *x = cl->nodes[(start + i) % cl->node_count];
        if (gossip_candidate(cl, x, to) && !(x->flags & CNODE_PFAIL)) picked[n++] = x;
    }
    for (int i = 0; i < cl->node_count; i++) {
        cluster_node_t *x = cl->nodes[i];
        if ((x->flags & CNODE_PFAIL) && gossip_candidate(cl, x, to)) picked[n++] = x;
    }
    size_t hostlen = sds_len(cl->myself->hostname);
    size_t host_ext = hostlen ? sizeof(cmsg_ext_t) + ((hostlen + 1 + 7) / 8) * 8 : 0;
    size_t totlen = CMSG_HEADER_LEN + (size_t)n * sizeof(cmsg_gossip_t) + host_ext + CMSG_EXT_SHARDID_LEN;
    uint8_t *buf = zcalloc(totlen);
    cmsg_header_t *h = (cmsg_header_t *)buf;
    cmsg_fill_header(srv, h, type, totlen);
    h->count = htons((uint16_t)n);
    cmsg_gossip_t *g = (cmsg_gossip_t *)(buf + CMSG_HEADER_LEN);
    for (int i = 0; i < n; i++) fill_gossip(&g[i], picked[i]);
    uint8_t *p = buf + CMSG_HEADER_LEN + (size_t)n * sizeof(cmsg_gossip_t);
    if (host_ext) {
        cmsg_ext_t *e = (cmsg_ext_t *)p;
        e->length = htonl((uint32_t)host_ext);
        e->type = htons(CMSG_EXT_HOSTNAME);
        memcpy(e->data, cl->myself->hostname, hostlen);
        p += host_ext;
    }
    cmsg_ext_t *e = (cmsg_ext_t *)p;
    e->length = htonl(CMSG_EXT_SHARDID_LEN);
    e->type = htons(CMSG_EXT_SHARDID);
    memcpy(e->data, cl->myself->shard_id, CLUSTER_NAMELEN);
    h->extensions = htons(host_ext ? 2 : 1);
    h->mflags[0] |= CMSG_FLAG0_EXT_DATA;
    if (to && type != CMSG_PONG) to->ping_sent = util_mstime();
    cluster_link_send(l, buf, totlen);
    zfree(buf);
    zfree(picked);
}

/* msg to every node we have a link to. */
void cmsg_broadcast(server_t *srv, const void *msg, size_t len) {
    for (cluster_link_t *l = srv->cluster->bus->links; l; l = l->next)
        if (l->node && !(l->node->flags & (CNODE_HANDSHAKE | CNODE_MYSELF))) cluster_link_send(l, msg, len);
}

/* FAIL about n, to every node we have a link to. */
void cmsg_broadcast_fail(server_t *srv, cluster_node_t *n) {
    size_t len = CMSG_HEADER_LEN + CLUSTER_NAMELEN;
    uint8_t *buf = zcalloc(len);
    cmsg_fill_header(srv, (cmsg_header_t *)buf, CMSG_FAIL, len);
    memcpy(buf + CMSG_HEADER_LEN, n->name, CLUSTER_NAMELEN);
    cmsg_broadcast(srv, buf, len);
    zfree(buf);
}

void cmsg_send_header_only(server_t *srv, cluster_link_t *l, int type, uint8_t mflags0) {
    cmsg_header_t h;
    cmsg_fill_header(srv, &h, type, sizeof(h));
    h.mflags[0] |= mflags0;
    cluster_link_send(l, &h, sizeof(h));
}

void cluster_bus_broadcast_pong(server_t *srv) {
    for (cluster_link_t *l = srv->cluster->bus->links; l; l = l->next)
        if (l->node && l->connected && !(l->node->flags & CNODE_HANDSHAKE)) cmsg_send_ping(l, CMSG_PONG);
}
