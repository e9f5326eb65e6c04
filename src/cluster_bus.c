/* cluster_bus.c: the cluster bus (cluster_bus.h): listeners on
 * cluster-port, one link per peer, and what PING, PONG, MEET, FAIL and
 * UPDATE messages do to the cluster state.
 *
 * Trust boundary: every byte read here comes from the network.  A link
 * reads a message only once its declared length (totlen, at most
 * CMSG_MAX_LEN) has arrived, and cluster_msg_valid() checks that the
 * length agrees with the type, the gossip count and every extension's
 * length before anything is read from it; a bad signature or an
 * impossible length closes the link.
 *
 * The life of a peer, as in Redis 7.0: CLUSTER MEET (or gossip naming an
 * unknown node) adds it in handshake under a random name; the cron
 * connects and sends MEET (or PING); its PONG gives its real name, and
 * the handshake ends.  From then on each PING/PONG header tells its slots
 * (a higher configEpoch wins a slot), its role and epochs, and its gossip
 * names the nodes it knows, which we meet in turn.  A node that leaves a
 * PING unanswered for cluster-node-timeout is PFAIL; when a majority of
 * masters report it (in gossip) it becomes FAIL and a FAIL message tells
 * everyone. */
#include "cluster_bus.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cluster_msg.h"
#include "evloop.h"
#include "log.h"
#include "net.h"
#include "pause.h"
#include "pubsub.h"
#include "reply.h"
#include "repl.h"
#include "repl_state.h"
#include "util.h"

#define BUS_MAX_LISTENERS 16

typedef struct cluster_link {
    server_t *srv;
    int fd;
    evloop_io_t *io;
    cluster_node_t *node; /* the peer of an outgoing link; NULL for an accepted one */
    cluster_node_t *from; /* the peer of an accepted link, once a message named it (CLUSTER LINKS "from") */
    bool connected;
    long long ctime; /* unix ms */
    sds sndbuf;      /* queued output */
    uint8_t *rcvbuf; /* input until a whole message is there */
    size_t rcv_len, rcv_cap;
    struct cluster_link *next, *prev; /* on the bus's list of links */
} cluster_link_t;

/* A failure report: `reporter` said `about` is PFAIL or FAIL at `time`. */
typedef struct fail_report {
    cluster_node_t *about, *reporter;
    long long time;
} fail_report_t;

typedef struct cluster_bus {
    int fds[BUS_MAX_LISTENERS];
    evloop_io_t *ios[BUS_MAX_LISTENERS];
    int count;
    cluster_link_t *links; /* every link, outgoing and accepted */
    fail_report_t *reports;
    int report_count;
    long long cron_ticks;
    /* A replica's election (Redis's failover_auth_*): when it asks for
     * votes, whether it did, the votes it got, for which epoch. */
    long long auth_time;
    bool auth_sent;
    /* CLUSTER FORGET's names, kept out of gossip for a minute (Redis's
     * blacklist), so that nodes that still know one do not bring it back */
    struct {
        char name[CLUSTER_NAMELEN];
        long long until;
    } forgotten[64];
    int forgotten_count;
    long long links_limit_exceeded; /* links freed by cluster-link-sendbuf-limit (CLUSTER INFO) */
    int drop_type;                  /* DEBUG DROP-CLUSTER-PACKET-FILTER: a message type ignored, -1 none */
    int auth_count;
    uint64_t auth_epoch;
    /* A manual failover (CLUSTER FAILOVER; Redis's mf_*).  On the replica:
     * mf_end, mf_master_offset (the paused master's offset, -1 until it
     * told it), mf_can_start (caught up, or FORCE).  On the master:
     * mf_end and mf_replica, the replica whose MFSTART holds our writes;
     * mf_unhold lifts the hold at the next cron (not inside a message's
     * handling, where running the held writes has no place). */
    long long mf_end; /* unix ms, 0 = none in progress */
    long long mf_master_offset;
    bool mf_can_start, mf_unhold;
    cluster_node_t *mf_replica;
    /* Why the last election could not start, and when that was logged. */
    int cant_failover_reason;
    long long cant_failover_logged;
} cluster_bus_t;

static void link_free(cluster_link_t *l);
static void link_set_from(cluster_link_t *l, cluster_node_t *n);
static void links_from_gone(struct cluster_bus *bus, const cluster_node_t *n);
static void links_cron(server_t *srv);
static void send_ping(cluster_link_t *l, int type);
static void follow_master(server_t *srv, cluster_node_t *m);
static void election_cron(server_t *srv);
static bool is_forgotten(struct cluster_bus *bus, const char *name);
static void mf_note_master_offset(server_t *srv, cluster_node_t *sender, const cmsg_header_t *h);
static void mf_handle_start(server_t *srv, cluster_node_t *sender, cluster_link_t *l);
static void mf_reset(server_t *srv);
static void mf_cron(server_t *srv);
static void migration_cron(server_t *srv);
static void forgotten_add(struct cluster_bus *bus, const char *name, long long until);

static uint64_t hton64(uint64_t v) { return htobe64(v); }
static uint64_t ntoh64(uint64_t v) { return be64toh(v); }

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

static bool is_null_name(const char *name) {
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

static void fill_header(server_t *srv, cmsg_header_t *h, int type, size_t totlen) {
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

static void link_send(cluster_link_t *l, const void *p, size_t len) {
    l->sndbuf = sds_catlen(l->sndbuf, p, len);
    l->srv->cluster->stats_sent++;
    uint16_t type;
    memcpy(&type, (const uint8_t *)p + offsetof(cmsg_header_t, type), sizeof(type));
    if (ntohs(type) < CMSG_TYPES) l->srv->cluster->stats_sent_type[ntohs(type)]++;
    if (l->connected) evloop_io_want_write(l->io, true);
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
static void send_ping(cluster_link_t *l, int type) {
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
    fill_header(srv, h, type, totlen);
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
    link_send(l, buf, totlen);
    zfree(buf);
    zfree(picked);
}

/* FAIL about n, to every node we have a link to. */
static void broadcast(server_t *srv, const void *msg, size_t len) {
    for (cluster_link_t *l = srv->cluster->bus->links; l; l = l->next)
        if (l->node && !(l->node->flags & (CNODE_HANDSHAKE | CNODE_MYSELF))) link_send(l, msg, len);
}

static void broadcast_fail(server_t *srv, cluster_node_t *n) {
    size_t len = CMSG_HEADER_LEN + CLUSTER_NAMELEN;
    uint8_t *buf = zcalloc(len);
    fill_header(srv, (cmsg_header_t *)buf, CMSG_FAIL, len);
    memcpy(buf + CMSG_HEADER_LEN, n->name, CLUSTER_NAMELEN);
    broadcast(srv, buf, len);
    zfree(buf);
}

/* Whether n serves the slots we serve (our master, or myself if we are
 * one, and its replicas): where SPUBLISH goes (Redis's
 * clusterGetNodesServingMySlots). */
static bool in_my_shard(cluster_t *cl, const cluster_node_t *n) {
    cluster_node_t *me = cl->myself, *master = (me->flags & CNODE_REPLICA) ? me->replicaof : me;
    if (!master) return false;
    return n == master || ((n->flags & CNODE_REPLICA) && n->replicaof == master);
}

void cluster_bus_publish(server_t *srv, const char *chan, size_t clen, const char *msg, size_t mlen, bool shard) {
    if (!srv->cluster || !srv->cluster->bus) return;
    cluster_t *cl = srv->cluster;
    size_t len = CMSG_HEADER_LEN + 8 + clen + mlen;
    uint8_t *buf = zcalloc(len);
    fill_header(srv, (cmsg_header_t *)buf, shard ? CMSG_PUBLISHSHARD : CMSG_PUBLISH, len);
    uint32_t c32 = htonl((uint32_t)clen), m32 = htonl((uint32_t)mlen);
    memcpy(buf + CMSG_HEADER_LEN, &c32, 4);
    memcpy(buf + CMSG_HEADER_LEN + 4, &m32, 4);
    memcpy(buf + CMSG_HEADER_LEN + 8, chan, clen);
    memcpy(buf + CMSG_HEADER_LEN + 8 + clen, msg, mlen);
    if (!shard) {
        broadcast(srv, buf, len);
    } else {
        for (int i = 0; i < cl->node_count; i++) {
            cluster_node_t *n = cl->nodes[i];
            if (n->flags & (CNODE_MYSELF | CNODE_HANDSHAKE) || !n->link || !in_my_shard(cl, n)) continue;
            link_send(n->link, buf, len);
        }
    }
    zfree(buf);
}

/* ------------------------------------------------------ failure reports */

static void report_add(cluster_bus_t *bus, cluster_node_t *about, cluster_node_t *reporter) {
    for (int i = 0; i < bus->report_count; i++)
        if (bus->reports[i].about == about && bus->reports[i].reporter == reporter) {
            bus->reports[i].time = util_mstime();
            return;
        }
    bus->reports = zrealloc(bus->reports, sizeof(*bus->reports) * (size_t)(bus->report_count + 1));
    bus->reports[bus->report_count++] = (fail_report_t){about, reporter, util_mstime()};
}

static void report_del(cluster_bus_t *bus, cluster_node_t *about, cluster_node_t *reporter) {
    for (int i = 0; i < bus->report_count; i++)
        if (bus->reports[i].about == about && (!reporter || bus->reports[i].reporter == reporter))
            bus->reports[i--] = bus->reports[--bus->report_count];
}

/* Reports younger than twice the node timeout, about n. */
static int report_count(server_t *srv, cluster_node_t *n) {
    cluster_bus_t *bus = srv->cluster->bus;
    long long max_age = srv->cfg.cluster_node_timeout * 2, now = util_mstime();
    int count = 0;
    for (int i = 0; i < bus->report_count; i++) {
        if (now - bus->reports[i].time > max_age) {
            bus->reports[i--] = bus->reports[--bus->report_count];
            continue;
        }
        if (bus->reports[i].about == n) count++;
    }
    return count;
}

int cluster_bus_failure_reports(server_t *srv, cluster_node_t *n) {
    return srv->cluster->bus ? report_count(srv, n) : 0;
}

/* PFAIL to FAIL: when the masters that report n, with us if we are one,
 * are a majority of the cluster's size. */
static void maybe_mark_failing(server_t *srv, cluster_node_t *n) {
    cluster_t *cl = srv->cluster;
    if (!(n->flags & CNODE_PFAIL) || (n->flags & CNODE_FAIL)) return;
    int needed = cl->size / 2 + 1;
    int failures = report_count(srv, n) + ((cl->myself->flags & CNODE_MASTER) ? 1 : 0);
    if (failures < needed) return;
    log_msg(LL_NOTICE, "Marking node %.40s as failing (quorum reached).", n->name);
    n->flags = (n->flags & ~CNODE_PFAIL) | CNODE_FAIL;
    n->fail_time = util_mstime();
    broadcast_fail(srv, n);
    cl->todo_update = cl->todo_save = true;
}

/* ------------------------------------------------------------ handling */

/* The sender's address: the one its header announces, else the link's
 * peer address. */
static void peer_ip(cluster_link_t *l, const char *myip, char *out) {
    if (myip[0]) {
        snprintf(out, CMSG_IP_LEN, "%.*s", CMSG_IP_LEN - 1, myip);
        return;
    }
    char addr[128];
    net_peer_name(l->fd, addr, sizeof(addr), false);
    char *colon = strrchr(addr, ':');
    if (colon) *colon = '\0';
    snprintf(out, CMSG_IP_LEN, "%.45s", addr);
}

static cluster_node_t *handshake_in_progress(cluster_t *cl, const char *ip, int port, int cport) {
    for (int i = 0; i < cl->node_count; i++) {
        cluster_node_t *n = cl->nodes[i];
        if ((n->flags & CNODE_HANDSHAKE) && !strcasecmp(n->ip, ip) && n->port == port && n->cport == cport) return n;
    }
    return NULL;
}

static bool start_handshake(server_t *srv, const char *ip, int port, int cport, bool meet) {
    cluster_t *cl = srv->cluster;
    unsigned char addr[16];
    if (inet_pton(AF_INET, ip, addr) != 1 && inet_pton(AF_INET6, ip, addr) != 1) return false;
    if (port <= 0 || port > 65535 || cport <= 0 || cport > 65535) return false;
    if (handshake_in_progress(cl, ip, port, cport)) return true;
    cluster_node_t *n = cluster_node_create(cl, NULL, CNODE_HANDSHAKE | (meet ? CNODE_MEET : 0));
    snprintf(n->ip, sizeof(n->ip), "%s", ip);
    n->port = port;
    n->cport = cport;
    return true;
}

bool cluster_bus_meet(server_t *srv, const char *ip, int port, int cport) {
    return start_handshake(srv, ip, port, cport, true);
}

/* A slot bitmap from a master whose epoch is `epoch`: each slot it claims
 * that is free, left unclaimed by its owner, or held by a node of an older
 * epoch, becomes its. */
static void update_slots(server_t *srv, cluster_node_t *sender, uint64_t epoch, const uint8_t *slots) {
    cluster_t *cl = srv->cluster;
    cluster_node_t *me = cl->myself, *cur = (me->flags & CNODE_REPLICA) ? me->replicaof : me;
    int cur_slots = cur ? cur->numslots : 0, claimed = 0, taken_from_cur = 0;
    bool changed = false;
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        uint8_t bit = (uint8_t)(1u << (s & 7));
        if (!(slots[s >> 3] & bit)) continue;
        claimed++;
        if (cl->slots[s] == sender) {
            cl->unclaimed[s >> 3] &= (uint8_t)~bit;
            continue;
        }
        if (cl->importing_from[s]) continue;
        if (cl->slots[s] && !(cl->unclaimed[s >> 3] & bit) && cl->slots[s]->config_epoch >= epoch) continue;
        if (cur && cl->slots[s] == cur) taken_from_cur++;
        cluster_del_slot(cl, s);
        cluster_add_slot(cl, sender, s);
        changed = true;
    }
    /* Slots the sender no longer claims while it is their owner stay bound
     * to it (a few redirections rather than CLUSTERDOWN, as in Redis), marked
     * unclaimed so that no UPDATE spreads that ownership. */
    for (int s = 0; s < CLUSTER_SLOTS; s++)
        if (cl->slots[s] == sender && !(slots[s >> 3] & (1u << (s & 7))))
            cl->unclaimed[s >> 3] |= (uint8_t)(1u << (s & 7));
    if (changed) cl->todo_update = cl->todo_save = true;
    /* Our master (or we) lost every slot to the sender: a failover
     * happened while we were away (the sender took exactly our slots), or
     * a reshard emptied it and cluster-allow-replica-migration lets us
     * follow the sender, as Redis 7.0. */
    if (cur && cur != sender && cur_slots && !cur->numslots && (sender->flags & CNODE_MASTER) &&
        (srv->cfg.cluster_allow_replica_migration || claimed == taken_from_cur))
        follow_master(srv, sender);
}

/* The sender claims a slot whose owner we know under a newer epoch: tell
 * it (UPDATE with that owner's slots), as Redis does, so a node that was
 * away learns at once that it lost them. */
static void send_update_if_stale(server_t *srv, cluster_node_t *sender, uint64_t epoch, const uint8_t *slots) {
    cluster_t *cl = srv->cluster;
    if (!sender->link || !sender->link->connected) return;
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        if (!(slots[s >> 3] & (1u << (s & 7)))) continue;
        cluster_node_t *owner = cl->slots[s];
        if (!owner || owner == sender || owner->config_epoch <= epoch) continue;
        if (cl->unclaimed[s >> 3] & (1u << (s & 7))) continue;
        size_t len = CMSG_HEADER_LEN + sizeof(cmsg_update_t);
        uint8_t *buf = zcalloc(len);
        fill_header(srv, (cmsg_header_t *)buf, CMSG_UPDATE, len);
        cmsg_update_t *u = (cmsg_update_t *)(buf + CMSG_HEADER_LEN);
        u->config_epoch = hton64(owner->config_epoch);
        memcpy(u->nodename, owner->name, CLUSTER_NAMELEN);
        for (size_t i = 0; i < sizeof(u->slots); i++) /* not the slots it no longer claims */
            u->slots[i] = owner->slots[i] & (uint8_t)~cl->unclaimed[i];
        link_send(sender->link, buf, len);
        zfree(buf);
        return;
    }
}

/* Two masters with one configEpoch: the one with the smaller name takes
 * a new epoch (Redis's collision rule), so every slot has one winner. */
static void handle_epoch_collision(cluster_t *cl, cluster_node_t *sender) {
    cluster_node_t *me = cl->myself;
    if (sender->config_epoch != me->config_epoch || !(sender->flags & CNODE_MASTER) || !(me->flags & CNODE_MASTER))
        return;
    if (memcmp(sender->name, me->name, CLUSTER_NAMELEN) <= 0) return;
    cl->current_epoch++;
    me->config_epoch = cl->current_epoch;
    cl->todo_save = true;
    log_msg(LL_NOTICE, "WARNING: configEpoch collision with node %.40s. configEpoch set to %llu", sender->name,
            (unsigned long long)me->config_epoch);
}

static void process_gossip(server_t *srv, cluster_node_t *sender, const cmsg_header_t *h) {
    cluster_t *cl = srv->cluster;
    const cmsg_gossip_t *g = (const cmsg_gossip_t *)((const uint8_t *)h + CMSG_HEADER_LEN);
    int count = ntohs(h->count);
    for (int i = 0; i < count; i++) {
        int flags = ntohs(g[i].flags);
        cluster_node_t *n = cluster_lookup_node(cl, g[i].nodename, CLUSTER_NAMELEN);
        if (n) {
            if (n == cl->myself || !sender || !(sender->flags & CNODE_MASTER)) continue;
            if (flags & (CNODE_FAIL | CNODE_PFAIL)) {
                report_add(cl->bus, n, sender);
                maybe_mark_failing(srv, n);
            } else {
                report_del(cl->bus, n, sender);
            }
            continue;
        }
        if (is_null_name(g[i].nodename) || (flags & CNODE_NOADDR) || is_forgotten(cl->bus, g[i].nodename)) continue;
        char ip[CMSG_IP_LEN];
        memcpy(ip, g[i].ip, sizeof(ip));
        ip[sizeof(ip) - 1] = '\0';
        if (sender) start_handshake(srv, ip, ntohs(g[i].port), ntohs(g[i].cport), false);
    }
}

static bool is_hex_id(const char *s) {
    for (int i = 0; i < CLUSTER_NAMELEN; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
    return true;
}

/* The hostname and shard id extensions.  A sender without a shard id
 * (Redis 7.0) is in its master's shard, or keeps the one we gave it: as
 * in Redis 7.2, only our own view needs to be consistent. */
static void process_extensions(cluster_t *cl, cluster_node_t *sender, const cmsg_header_t *h) {
    if (!sender) return;
    const char *shard_id = NULL;
    bool hostname = false;
    const uint8_t *p = (const uint8_t *)h + CMSG_HEADER_LEN + (size_t)ntohs(h->count) * sizeof(cmsg_gossip_t);
    unsigned exts = (h->mflags[0] & CMSG_FLAG0_EXT_DATA) ? ntohs(h->extensions) : 0;
    for (unsigned i = 0; i < exts; i++) {
        const cmsg_ext_t *e = (const cmsg_ext_t *)p;
        uint32_t len = ntohl(e->length);
        if (ntohs(e->type) == CMSG_EXT_HOSTNAME) {
            size_t max = len - sizeof(cmsg_ext_t), hl = strnlen(e->data, max);
            hostname = true;
            if (sds_len(sender->hostname) != hl || memcmp(sender->hostname, e->data, hl)) {
                sds_free(sender->hostname);
                sender->hostname = sds_newlen(e->data, hl);
            }
        } else if (ntohs(e->type) == CMSG_EXT_SHARDID && len >= CMSG_EXT_SHARDID_LEN && is_hex_id(e->data)) {
            shard_id = e->data; /* a bad one is ignored: nodes.conf must load again */
        }
        p += len;
    }
    /* no hostname extension: the sender announces none (any more), as Redis */
    if (!hostname && sds_len(sender->hostname)) sds_clear(sender->hostname);
    if (!shard_id) shard_id = sender->replicaof ? sender->replicaof->shard_id : sender->shard_id;
    cluster_set_shard_id(cl, sender, shard_id);
}

/* Redis 7.2's forgotten-node extension (a CLUSTER FORGET elsewhere): the
 * node is forgotten here too and kept out of gossip for the TTL it
 * carries, unless it is myself, our master, the sender or this link's
 * peer.  Run last: the node may be named in this very message. */
static void process_forgotten_ext(server_t *srv, cluster_link_t *l, cluster_node_t *sender, const cmsg_header_t *h) {
    cluster_t *cl = srv->cluster;
    if (!(h->mflags[0] & CMSG_FLAG0_EXT_DATA)) return;
    const uint8_t *p = (const uint8_t *)h + CMSG_HEADER_LEN + (size_t)ntohs(h->count) * sizeof(cmsg_gossip_t);
    for (unsigned i = 0; i < ntohs(h->extensions); i++) {
        const cmsg_ext_t *e = (const cmsg_ext_t *)p;
        uint32_t len = ntohl(e->length);
        p += len;
        if (ntohs(e->type) != CMSG_EXT_FORGOTTEN_NODE || len < sizeof(cmsg_ext_t) + sizeof(cmsg_ext_forgotten_t))
            continue;
        cmsg_ext_forgotten_t f;
        memcpy(&f, e->data, sizeof(f));
        cluster_node_t *n = cluster_lookup_node(cl, f.name, CLUSTER_NAMELEN);
        cluster_node_t *me = cl->myself;
        if (!n || n == me || n == sender || n == l->node || n == l->from) continue;
        if ((me->flags & CNODE_REPLICA) && me->replicaof == n) continue;
        uint64_t ttl = ntoh64(f.ttl);
        if (ttl > 3600) ttl = 3600; /* a lying TTL does not bar a node for good */
        forgotten_add(cl->bus, f.name, util_mstime() + (long long)ttl * 1000);
        log_msg(LL_NOTICE, "Node %.40s forgotten as %.40s asked (for %llu s)", n->name, sender->name,
                (unsigned long long)ttl);
        cluster_bus_node_gone(srv, n);
        cluster_forget_node(cl, n);
        cl->todo_update = cl->todo_save = true;
    }
}

/* The role, slots and epochs a PING/PONG/MEET header tells about its sender. */
static void apply_sender_header(server_t *srv, cluster_node_t *sender, const cmsg_header_t *h, cluster_link_t *l) {
    cluster_t *cl = srv->cluster;
    sender->repl_offset = (long long)ntoh64(h->offset);
    /* the sender's nofailover flag, as it says it now */
    sender->flags = (sender->flags & ~CNODE_NOFAILOVER) | (ntohs(h->flags) & CNODE_NOFAILOVER);
    sender->port = ntohs(h->port);
    sender->cport = ntohs(h->cport);
    if (h->myip[0] || !sender->ip[0]) peer_ip(l, h->myip, sender->ip);
    if (is_null_name(h->slaveof)) {
        /* a replica promoted may be an orphan to refill by replica
         * migration, as a master that had replicas (Redis) */
        if (sender->flags & CNODE_REPLICA) {
            cl->todo_update = cl->todo_save = true;
            sender->flags |= CNODE_MIGRATE_TO;
        }
        sender->flags = (sender->flags & ~CNODE_REPLICA) | CNODE_MASTER;
        sender->replicaof = NULL;
    } else {
        cluster_node_t *m = cluster_lookup_node(cl, h->slaveof, CLUSTER_NAMELEN);
        if (!(sender->flags & CNODE_REPLICA) || sender->replicaof != m) cl->todo_update = cl->todo_save = true;
        if (sender->flags & CNODE_MASTER) {
            for (int s = 0; s < CLUSTER_SLOTS; s++)
                if (cl->slots[s] == sender) cluster_del_slot(cl, s);
        }
        sender->flags = (sender->flags & ~CNODE_MASTER) | CNODE_REPLICA;
        sender->replicaof = m;
    }
    uint64_t epoch = ntoh64(h->config_epoch);
    if (epoch > sender->config_epoch) { /* a replica's header carries its master's */
        sender->config_epoch = epoch;
        cl->todo_save = true;
    }
    if (sender->flags & CNODE_MASTER) {
        if (memcmp(sender->slots, h->myslots, sizeof(h->myslots))) {
            update_slots(srv, sender, epoch, h->myslots);
            send_update_if_stale(srv, sender, epoch, h->myslots);
        }
        handle_epoch_collision(cl, sender);
    }
}

static void learn_my_ip(server_t *srv, cluster_link_t *l) {
    cluster_node_t *me = srv->cluster->myself;
    if (srv->cfg.cluster_announce_ip[0]) return;
    char addr[128];
    net_peer_name(l->fd, addr, sizeof(addr), true);
    char *colon = strrchr(addr, ':');
    if (colon) *colon = '\0';
    if (strcmp(me->ip, addr)) {
        snprintf(me->ip, sizeof(me->ip), "%.45s", addr);
        srv->cluster->todo_save = true;
        log_msg(LL_NOTICE, "IP address for this node updated to %s", me->ip);
    }
}

/* A handshake node answered under its real name: take it (or drop the
 * handshake entry if we knew that name already). */
static cluster_node_t *end_handshake(cluster_t *cl, cluster_link_t *l, const cmsg_header_t *h) {
    cluster_node_t *hs = l->node, *known = cluster_lookup_node(cl, h->sender, CLUSTER_NAMELEN);
    if (known || is_forgotten(cl->bus, h->sender)) {
        l->node = NULL; /* the link goes with the handshake node */
        hs->link = NULL;
        cluster_forget_node(cl, hs);
        return NULL;
    }
    memcpy(hs->name, h->sender, CLUSTER_NAMELEN);
    hs->name[CLUSTER_NAMELEN] = '\0';
    hs->flags &= ~(CNODE_HANDSHAKE | CNODE_MEET);
    hs->flags |= is_null_name(h->slaveof) ? CNODE_MASTER : CNODE_REPLICA;
    cl->todo_save = cl->todo_update = true;
    log_msg(LL_NOTICE, "Handshake with node %.40s completed.", hs->name);
    return hs;
}

/* ------------------------------------------------------------ failover */

/* Become a replica of m (CLUSTER REPLICATE's effect, from the bus). */
static void follow_master(server_t *srv, cluster_node_t *m) {
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
    mf_reset(srv); /* a master that held writes for its replica lets them run: they are redirected now */
    cl->todo_update = cl->todo_save = true;
}

static void send_header_only(server_t *srv, cluster_link_t *l, int type, uint8_t mflags0) {
    cmsg_header_t h;
    fill_header(srv, &h, type, sizeof(h));
    h.mflags[0] |= mflags0;
    link_send(l, &h, sizeof(h));
}

/* A master's vote (Redis's rules): for a replica of a failing master (or
 * asked with FORCEACK), once per epoch, once per master in twice the node
 * timeout, and only if no slot it claims has a newer owner. */
static void handle_auth_request(server_t *srv, cluster_node_t *sender, const cmsg_header_t *h) {
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
    if (sender->link && sender->link->connected) send_header_only(srv, sender->link, CMSG_FAILOVER_AUTH_ACK, 0);
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
    mf_reset(srv);
    cl->todo_update = cl->todo_save = true;
    for (cluster_link_t *l = cl->bus->links; l; l = l->next)
        if (l->node && l->connected && !(l->node->flags & CNODE_HANDSHAKE)) send_ping(l, CMSG_PONG);
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
static void election_cron(server_t *srv) {
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
                send_header_only(srv, l, CMSG_FAILOVER_AUTH_REQUEST, bus->mf_end ? CMSG_FLAG0_FORCEACK : 0);
        return;
    }
    if (bus->auth_count >= cl->size / 2 + 1) {
        bus->auth_time = 0;
        promote_myself(srv, bus->auth_epoch);
    }
}

void cluster_bus_failover(server_t *srv, int mode) {
    cluster_t *cl = srv->cluster;
    cluster_bus_t *bus = cl->bus;
    mf_reset(srv);
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
    if (master && master->link) send_header_only(srv, master->link, CMSG_MFSTART, 0);
}

/* ------------------------------------------------------- manual failover */

/* The replica: our master's header with PAUSED carries the offset it
 * stopped at; the first one during our manual failover is the target. */
static void mf_note_master_offset(server_t *srv, cluster_node_t *sender, const cmsg_header_t *h) {
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
static void mf_handle_start(server_t *srv, cluster_node_t *sender, cluster_link_t *l) {
    cluster_t *cl = srv->cluster;
    cluster_bus_t *bus = cl->bus;
    if (sender->replicaof != cl->myself || !(cl->myself->flags & CNODE_MASTER)) return;
    mf_reset(srv);
    bus->mf_end = util_mstime() + CLUSTER_MF_TIMEOUT_MS;
    bus->mf_replica = sender;
    bus->mf_unhold = false;
    pause_hold_writes(srv, PAUSE_HOLD_CLUSTER_MF, true);
    repl_hold_stream(srv, true);
    log_msg(LL_WARNING, "Manual failover requested by replica %.40s.", sender->name);
    send_ping(l, CMSG_PING);
}

/* Ends a manual failover, ours or our replica's (done, timed out, or a
 * role change); a master's held writes run at the next cron. */
static void mf_reset(server_t *srv) {
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
static void mf_cron(server_t *srv) {
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
        mf_reset(srv);
        return;
    }
    cluster_node_t *r = bus->mf_replica;
    if (r && r->link && r->link->connected) send_ping(r->link, CMSG_PING);
    if ((cl->myself->flags & CNODE_REPLICA) && !bus->mf_can_start && bus->mf_master_offset != -1 &&
        R(srv)->master_repl_offset >= bus->mf_master_offset) {
        bus->mf_can_start = true;
        log_msg(LL_WARNING, "All master replication stream processed, manual failover can start.");
    }
}

/* ----------------------------------------------------- replica migration */

/* n's replicas: how many (*all), how many not FAIL (the return), how many
 * neither FAIL nor PFAIL (*working). */
static int count_replicas(cluster_t *cl, cluster_node_t *n, int *all, int *working) {
    int ok = 0;
    *all = *working = 0;
    for (int i = 0; i < cl->node_count; i++) {
        cluster_node_t *x = cl->nodes[i];
        if (x->replicaof != n || !(x->flags & CNODE_REPLICA)) continue;
        (*all)++;
        if (!(x->flags & CNODE_FAIL)) ok++;
        if (!(x->flags & (CNODE_FAIL | CNODE_PFAIL))) (*working)++;
    }
    return ok;
}

/* Redis 7.0's replica migration: a master that serves slots and had
 * replicas (MIGRATE_TO) but has none left that is not FAIL is orphaned.
 * When there is one, and our master has the most working replicas (at
 * least 2) and more than cluster-migration-barrier of them, the replica
 * with the smallest ID among those of such masters moves to the orphan,
 * once it has been one for CLUSTER_MIGRATION_DELAY_MS. */
#define CLUSTER_MIGRATION_DELAY_MS 5000
static void migration_cron(server_t *srv) {
    cluster_t *cl = srv->cluster;
    cluster_node_t *me = cl->myself, *mine = me->replicaof, *target = NULL, *candidate = me;
    if (!(me->flags & CNODE_REPLICA) || !mine) return;
    int orphans = 0, max_ok = 0, mine_ok = 0, all, working;
    for (int i = 0; i < cl->node_count; i++) {
        cluster_node_t *n = cl->nodes[i];
        if (!(n->flags & CNODE_MASTER)) continue;
        int ok = count_replicas(cl, n, &all, &working);
        if (all) n->flags |= CNODE_MIGRATE_TO;
        if (n->flags & CNODE_FAIL) continue;
        if (!ok && n->numslots && (n->flags & CNODE_MIGRATE_TO)) orphans++;
        if (ok > max_ok) max_ok = ok;
        if (n == mine) mine_ok = ok;
    }
    if (!orphans || max_ok < 2 || mine_ok != max_ok || !srv->cfg.cluster_allow_replica_migration) return;
    if (cl->state != CLUSTER_OK) return;
    count_replicas(cl, mine, &all, &working);
    if (working <= srv->cfg.cluster_migration_barrier) return;
    long long now = util_mstime();
    for (int i = 0; i < cl->node_count; i++) {
        cluster_node_t *n = cl->nodes[i];
        bool master = (n->flags & CNODE_MASTER) != 0;
        int ok = master ? count_replicas(cl, n, &all, &working) : 0;
        if (master && !(n->flags & CNODE_FAIL) && (n->flags & CNODE_MIGRATE_TO) && !ok) {
            if (!target && n->numslots) target = n;
            if (!n->orphaned_time) n->orphaned_time = now;
        } else {
            n->orphaned_time = 0;
        }
        if (!master || ok != max_ok) continue;
        for (int j = 0; j < cl->node_count; j++) {
            cluster_node_t *x = cl->nodes[j];
            if (x->replicaof == n && (x->flags & CNODE_REPLICA) && memcmp(x->name, candidate->name, CLUSTER_NAMELEN) < 0)
                candidate = x;
        }
    }
    if (!target || candidate != me || now - target->orphaned_time <= CLUSTER_MIGRATION_DELAY_MS) return;
    log_msg(LL_NOTICE, "Migrating to orphaned master %.40s", target->name);
    follow_master(srv, target);
}

/* One whole, valid message; false closes the link. */
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
    if (sender) {
        uint64_t cur = ntoh64(h->current_epoch);
        if (cur > cl->current_epoch) {
            cl->current_epoch = cur;
            cl->todo_save = true;
        }
        mf_note_master_offset(srv, sender, h);
    }
    if (sender && !l->node && l->from != sender) link_set_from(l, sender);
    bool ping_like = type == CMSG_PING || type == CMSG_PONG || type == CMSG_MEET;
    if (ping_like) {
        if (type == CMSG_MEET || !cl->myself->ip[0]) learn_my_ip(srv, l);
        if (!sender && type == CMSG_MEET) {
            /* Someone asked to join: add it in handshake; our PING's PONG
             * will give us its name. */
            char ip[CMSG_IP_LEN];
            peer_ip(l, h->myip, ip);
            start_handshake(srv, ip, ntohs(h->port), ntohs(h->cport), false);
            process_gossip(srv, NULL, h);
        }
        if (type != CMSG_PONG) send_ping(l, CMSG_PONG);
        if (l->node && (l->node->flags & CNODE_HANDSHAKE)) {
            if (type == CMSG_PONG) {
                sender = end_handshake(cl, l, h);
                if (!sender) return false;
            }
        }
        if (l->node && type == CMSG_PONG && sender == l->node) {
            l->node->pong_received = util_mstime();
            l->node->ping_sent = 0;
            if (l->node->flags & CNODE_PFAIL) {
                l->node->flags &= ~CNODE_PFAIL;
                cl->todo_update = true;
            } else if ((l->node->flags & CNODE_FAIL) && (l->node->flags & CNODE_REPLICA || !l->node->numslots)) {
                l->node->flags &= ~CNODE_FAIL; /* a replica or a master without slots comes back at once */
                cl->todo_update = cl->todo_save = true;
            } else if ((l->node->flags & CNODE_FAIL) &&
                       util_mstime() - l->node->fail_time > 2 * srv->cfg.cluster_node_timeout) {
                /* a master still serving its slots, reachable again, that no
                 * replica replaced within twice the node timeout (Redis) */
                log_msg(LL_NOTICE,
                        "Clear FAIL state for node %.40s: is reachable again and nobody is serving its slots after some time.",
                        l->node->name);
                l->node->flags &= ~CNODE_FAIL;
                cl->todo_update = cl->todo_save = true;
            }
        }
        if (sender) {
            apply_sender_header(srv, sender, h, l);
            process_extensions(cl, sender, h);
            process_gossip(srv, sender, h);
            process_forgotten_ext(srv, l, sender, h);
        }
        return true;
    }
    if (!sender) return true; /* other messages only from nodes we know */
    if (type == CMSG_FAIL) {
        cluster_node_t *n = cluster_lookup_node(cl, (const char *)buf + CMSG_HEADER_LEN, CLUSTER_NAMELEN);
        if (n && n != cl->myself && !(n->flags & CNODE_FAIL)) {
            log_msg(LL_NOTICE, "FAIL message received from %.40s about %.40s", sender->name, n->name);
            n->flags = (n->flags & ~CNODE_PFAIL) | CNODE_FAIL;
            n->fail_time = util_mstime();
            cl->todo_update = cl->todo_save = true;
        }
    } else if (type == CMSG_UPDATE) {
        const cmsg_update_t *u = (const cmsg_update_t *)(buf + CMSG_HEADER_LEN);
        cluster_node_t *n = cluster_lookup_node(cl, u->nodename, CLUSTER_NAMELEN);
        uint64_t epoch = ntoh64(u->config_epoch);
        if (n && n != cl->myself && n->config_epoch < epoch) {
            /* It owns slots: it is a master now, whatever we thought. */
            n->flags = (n->flags & ~CNODE_REPLICA) | CNODE_MASTER;
            n->replicaof = NULL;
            n->config_epoch = epoch;
            update_slots(srv, n, epoch, u->slots);
        }
    } else if (type == CMSG_FAILOVER_AUTH_REQUEST) {
        handle_auth_request(srv, sender, h);
    } else if (type == CMSG_MFSTART) {
        mf_handle_start(srv, sender, l);
    } else if (type == CMSG_FAILOVER_AUTH_ACK) {
        /* A vote counts from a master with slots, for this election. */
        if ((sender->flags & CNODE_MASTER) && sender->numslots && ntoh64(h->current_epoch) >= cl->bus->auth_epoch &&
            cl->bus->auth_sent)
            cl->bus->auth_count++;
    } else if (type == CMSG_PUBLISH || type == CMSG_PUBLISHSHARD) {
        uint32_t clen, mlen;
        memcpy(&clen, buf + CMSG_HEADER_LEN, 4);
        memcpy(&mlen, buf + CMSG_HEADER_LEN + 4, 4);
        const char *chan = (const char *)buf + CMSG_HEADER_LEN + 8;
        if (type == CMSG_PUBLISH) pubsub_publish(srv, chan, ntohl(clen), chan + ntohl(clen), ntohl(mlen));
        else pubsub_publish_shard(srv, chan, ntohl(clen), chan + ntohl(clen), ntohl(mlen));
    }
    /* MODULE: for a module of the receiver; we are a node with none, and
     * Redis drops a message no module registered for without a word. */
    return true;
}

/* --------------------------------------------------------------- links */

/* Write what is queued; false when the link failed (and is freed). */
static bool link_flush(cluster_link_t *l) {
    while (sds_len(l->sndbuf)) {
        ssize_t n = write(l->fd, l->sndbuf, sds_len(l->sndbuf));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
        if (n <= 0) {
            link_free(l);
            return false;
        }
        sds_range(l->sndbuf, n, -1);
    }
    evloop_io_want_write(l->io, false);
    return true;
}

static void link_read(cluster_link_t *l) {
    for (;;) {
        if (l->rcv_cap - l->rcv_len < 16384) {
            l->rcv_cap = l->rcv_cap * 2 + 16384;
            l->rcvbuf = zrealloc(l->rcvbuf, l->rcv_cap);
        }
        ssize_t n = read(l->fd, l->rcvbuf + l->rcv_len, l->rcv_cap - l->rcv_len);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (n <= 0) {
            link_free(l);
            return;
        }
        l->rcv_len += (size_t)n;
        /* Every whole message in the buffer. */
        while (l->rcv_len >= 8) {
            uint32_t totlen;
            memcpy(&totlen, l->rcvbuf + 4, 4);
            totlen = ntohl(totlen);
            if (memcmp(l->rcvbuf, "RCmb", 4) || totlen < 8 || totlen > CMSG_MAX_LEN) {
                log_msg(LL_WARNING, "Cluster bus: not a cluster message (or %u bytes long): link closed", totlen);
                link_free(l);
                return;
            }
            if (l->rcv_len < totlen) break;
            if (!process_message(l, l->rcvbuf, totlen)) {
                link_free(l);
                return;
            }
            memmove(l->rcvbuf, l->rcvbuf + totlen, l->rcv_len - totlen);
            l->rcv_len -= totlen;
        }
    }
}

static void link_event(int fd, bool readable, bool writable, void *arg) {
    (void)fd;
    cluster_link_t *l = arg;
    if (!l->connected && writable) {
        if (net_connect_result(l->fd) != 0) {
            link_free(l);
            return;
        }
        l->connected = true;
        if (l->node) l->node->link_connected = true;
        bool meet = l->node && (l->node->flags & CNODE_MEET);
        send_ping(l, meet ? CMSG_MEET : CMSG_PING);
        if (l->node) l->node->flags &= ~CNODE_MEET;
    }
    if (writable && l->connected && !link_flush(l)) return;
    if (readable) link_read(l);
}

static cluster_link_t *link_create(server_t *srv, int fd, cluster_node_t *node, bool connected) {
    cluster_bus_t *bus = srv->cluster->bus;
    cluster_link_t *l = zcalloc(sizeof(*l));
    l->srv = srv;
    l->fd = fd;
    l->node = node;
    l->connected = connected;
    l->ctime = util_mstime();
    l->sndbuf = sds_empty();
    l->io = evloop_io_add(srv->loop, fd, link_event, l);
    if (!connected) evloop_io_want_write(l->io, true);
    l->next = bus->links;
    if (bus->links) bus->links->prev = l;
    bus->links = l;
    if (node) {
        node->link = l;
        node->link_connected = connected;
    }
    return l;
}

static void link_free(cluster_link_t *l) {
    cluster_bus_t *bus = l->srv->cluster->bus;
    if (l->prev) l->prev->next = l->next;
    else bus->links = l->next;
    if (l->next) l->next->prev = l->prev;
    if (l->node && l->node->link == l) {
        l->node->link = NULL;
        l->node->link_connected = false;
    }
    evloop_io_free(l->io);
    close(l->fd);
    sds_free(l->sndbuf);
    zfree(l->rcvbuf);
    zfree(l);
}

static void accept_event(int fd, bool readable, bool writable, void *arg) {
    (void)readable, (void)writable;
    server_t *srv = arg;
    for (int i = 0; i < 100; i++) {
        bool is_unix;
        int cfd = net_accept(fd, &is_unix);
        if (cfd < 0) return;
        net_set_nodelay(cfd, true);
        link_create(srv, cfd, NULL, true);
    }
}

#define FORGET_TTL_MS 60000

static void forgotten_add(cluster_bus_t *bus, const char *name, long long until) {
    int i = 0;
    while (i < bus->forgotten_count && memcmp(bus->forgotten[i].name, name, CLUSTER_NAMELEN)) i++;
    if (i == bus->forgotten_count) i = bus->forgotten_count < 64 ? bus->forgotten_count++ : (int)(random() % 64);
    memcpy(bus->forgotten[i].name, name, CLUSTER_NAMELEN);
    bus->forgotten[i].until = until;
}

void cluster_bus_forget(server_t *srv, const char *name) {
    cluster_bus_t *bus = srv->cluster->bus;
    if (!bus) return;
    forgotten_add(bus, name, util_mstime() + FORGET_TTL_MS);
}

static bool is_forgotten(cluster_bus_t *bus, const char *name) {
    long long now = util_mstime();
    for (int i = 0; i < bus->forgotten_count; i++) {
        if (bus->forgotten[i].until < now) {
            bus->forgotten[i--] = bus->forgotten[--bus->forgotten_count];
            continue;
        }
        if (!memcmp(bus->forgotten[i].name, name, CLUSTER_NAMELEN)) return true;
    }
    return false;
}

void cluster_bus_node_gone(server_t *srv, cluster_node_t *n) {
    cluster_bus_t *bus = srv->cluster->bus;
    if (!bus) return;
    if (n->link) link_free(n->link);
    if (bus->mf_replica == n) mf_reset(srv);
    links_from_gone(bus, n);
    report_del(bus, n, NULL);
    for (int i = 0; i < bus->report_count; i++)
        if (bus->reports[i].reporter == n) bus->reports[i--] = bus->reports[--bus->report_count];
}

/* ---------------------------------------------------------------- cron */

static void connect_node(server_t *srv, cluster_node_t *n) {
    char err[256];
    int fd = net_connect_tcp_nonblock(n->ip, n->cport, NULL, err, sizeof(err));
    if (fd < 0) return;
    net_set_nodelay(fd, true);
    link_create(srv, fd, n, false);
    if (!n->ping_sent) n->ping_sent = util_mstime(); /* a link that never connects counts as unanswered */
}

void cluster_bus_cron(server_t *srv) {
    cluster_t *cl = srv->cluster;
    cluster_bus_t *bus = cl->bus;
    long long now = util_mstime(), timeout = srv->cfg.cluster_node_timeout;
    long long hs_timeout = timeout < 1000 ? 1000 : timeout;
    bus->cron_ticks++;
    for (int i = 0; i < cl->node_count; i++) {
        cluster_node_t *n = cl->nodes[i];
        if (n == cl->myself || (n->flags & CNODE_NOADDR)) continue;
        if ((n->flags & CNODE_HANDSHAKE) && now - n->ctime > hs_timeout) {
            cluster_bus_node_gone(srv, n);
            cluster_forget_node(cl, n);
            i--;
            continue;
        }
        if (!n->link && n->ip[0] && n->cport) connect_node(srv, n);
    }
    /* Once a second: ping the node we heard from least recently among a few. */
    if (bus->cron_ticks % 10 == 0 && cl->node_count > 1) {
        cluster_node_t *oldest = NULL;
        for (int j = 0; j < 5; j++) {
            cluster_node_t *n = cl->nodes[random() % cl->node_count];
            if (n == cl->myself || !n->link || !n->link->connected || n->ping_sent || (n->flags & CNODE_HANDSHAKE))
                continue;
            if (!oldest || n->pong_received < oldest->pong_received) oldest = n;
        }
        if (oldest) send_ping(oldest->link, CMSG_PING);
    }
    for (int i = 0; i < cl->node_count; i++) {
        cluster_node_t *n = cl->nodes[i];
        if (n == cl->myself || (n->flags & (CNODE_NOADDR | CNODE_HANDSHAKE))) continue;
        cluster_link_t *l = n->link;
        /* Half the timeout without a PONG: the link may be stuck, redo it. */
        if (l && now - l->ctime > timeout && n->ping_sent && now - n->ping_sent > timeout / 2) {
            link_free(l);
            continue;
        }
        if (l && l->connected && !n->ping_sent && now - n->pong_received > timeout / 2) send_ping(l, CMSG_PING);
        if (n->ping_sent && now - n->ping_sent > timeout && !(n->flags & (CNODE_PFAIL | CNODE_FAIL))) {
            log_msg(LL_NOTICE, "*** NODE %.40s possibly failing", n->name);
            n->flags |= CNODE_PFAIL;
            cl->todo_update = true;
        }
        if (n->flags & CNODE_PFAIL) maybe_mark_failing(srv, n);
    }
    /* A replica by its nodes.conf (a restart) follows its master, as
     * Redis's cron does when it is a replica with no master set. */
    cluster_node_t *me = cl->myself;
    /* cluster-replica-no-failover shows as our nofailover flag, which our
     * headers carry to the others (Redis's clusterUpdateMyselfFlags) */
    int nofailover = srv->cfg.cluster_replica_no_failover ? CNODE_NOFAILOVER : 0;
    if ((me->flags & CNODE_NOFAILOVER) != nofailover) {
        me->flags = (me->flags & ~CNODE_NOFAILOVER) | nofailover;
        cl->todo_update = cl->todo_save = true;
    }
    if ((me->flags & CNODE_REPLICA) && me->replicaof && me->replicaof->ip[0] && me->replicaof->port &&
        !repl_is_replica(srv))
        replica_set_master(srv, me->replicaof->ip, me->replicaof->port);
    mf_cron(srv);
    links_cron(srv);
    election_cron(srv);
    migration_cron(srv);
}

/* ------------------------------------------------------- start and stop */

bool cluster_bus_init(server_t *srv) {
    cluster_t *cl = srv->cluster;
    cluster_bus_t *bus = zcalloc(sizeof(*bus));
    bus->mf_master_offset = -1;
    bus->drop_type = -1;
    cl->bus = bus;
    int port = cl->myself->cport;
    if (srv->cfg.cluster_port) port = (int)srv->cfg.cluster_port;
    for (int i = 0; i < srv->cfg.bind_count && bus->count < BUS_MAX_LISTENERS; i++) {
        const char *addr = srv->cfg.bind[i];
        bool optional = addr[0] == '-';
        if (optional) addr++;
        char err[256];
        int fd = net_listen_tcp(addr, port, (int)srv->cfg.tcp_backlog, err, sizeof(err));
        if (fd < 0) {
            if (optional) continue;
            log_msg(LL_WARNING, "Could not bind the cluster bus on %s:%d: %s", addr, port, err);
            return false;
        }
        bus->fds[bus->count] = fd;
        bus->ios[bus->count++] = evloop_io_add(srv->loop, fd, accept_event, srv);
    }
    if (!bus->count) {
        log_msg(LL_WARNING, "The cluster bus has no address to listen on");
        return false;
    }
    return true;
}

void cluster_bus_free(server_t *srv) {
    cluster_t *cl = srv->cluster;
    if (!cl || !cl->bus) return;
    cluster_bus_t *bus = cl->bus;
    while (bus->links) link_free(bus->links);
    for (int i = 0; i < bus->count; i++) {
        evloop_io_free(bus->ios[i]);
        close(bus->fds[i]);
    }
    zfree(bus->reports);
    zfree(bus);
    cl->bus = NULL;
}

/* ---------------------------------------------------------------- LINKS */

/* Links as Redis 7.0 keeps them: one outgoing link per node (n->link),
 * and the accepted link a node's messages arrive on, known once a message
 * named its sender (l->from; a newer one replaces an older, as a peer
 * that reconnected leaves its old link behind).  Both count towards
 * cluster-link-sendbuf-limit, CLUSTER LINKS and mem_cluster_links. */

static cluster_link_t *link_from(cluster_bus_t *bus, const cluster_node_t *n) {
    for (cluster_link_t *l = bus->links; l; l = l->next)
        if (l->from == n) return l;
    return NULL;
}

static void link_set_from(cluster_link_t *l, cluster_node_t *n) {
    cluster_bus_t *bus = l->srv->cluster->bus;
    cluster_link_t *old;
    while ((old = link_from(bus, n)) != NULL) link_free(old);
    l->from = n;
}

/* n is forgotten: its accepted links go with it. */
static void links_from_gone(cluster_bus_t *bus, const cluster_node_t *n) {
    cluster_link_t *l;
    while ((l = link_from(bus, n)) != NULL) link_free(l);
}

/* The cron's share: a send buffer mostly empty is shrunk (so its
 * allocation tells what it holds), one over cluster-link-sendbuf-limit
 * frees its link (the cron connects again; the peer reconnects an
 * accepted one), as Redis 7.0 does every 100 ms. */
static void links_cron(server_t *srv) {
    cluster_bus_t *bus = srv->cluster->bus;
    unsigned long long limit = (unsigned long long)srv->cfg.cluster_link_sendbuf_limit;
    cluster_link_t *next;
    for (cluster_link_t *l = bus->links; l; l = next) {
        next = l->next;
        if (!l->node && !l->from) continue; /* not a node's link yet */
        if (sds_avail(l->sndbuf) / 4 > sds_len(l->sndbuf)) l->sndbuf = sds_remove_free(l->sndbuf);
        unsigned long long mem = sds_alloc(l->sndbuf);
        if (!limit || mem <= limit) continue;
        cluster_node_t *peer = l->node ? l->node : l->from;
        log_msg(LL_WARNING,
                "Freeing cluster link(%s node %.40s, used memory: %llu) due to exceeding send buffer memory limit.",
                l->node ? "to" : "from", peer->name, mem);
        bus->links_limit_exceeded++;
        link_free(l);
    }
}

long long cluster_bus_links_limit_exceeded(server_t *srv) {
    return srv->cluster && srv->cluster->bus ? srv->cluster->bus->links_limit_exceeded : 0;
}

size_t cluster_bus_links_memory(server_t *srv) {
    if (!srv->cluster || !srv->cluster->bus) return 0;
    size_t mem = 0;
    for (cluster_link_t *l = srv->cluster->bus->links; l; l = l->next)
        if (l->node || l->from) mem += sizeof(*l) + sds_alloc(l->sndbuf) + l->rcv_cap;
    return mem;
}

static void reply_link(client_t *c, const cluster_link_t *l, bool to) {
    reply_map_len(c, 6);
    reply_bulk_cstr(c, "direction");
    reply_bulk_cstr(c, to ? "to" : "from");
    reply_bulk_cstr(c, "node");
    reply_bulk(c, to ? l->node->name : l->from->name, CLUSTER_NAMELEN);
    reply_bulk_cstr(c, "create-time");
    reply_ll(c, l->ctime);
    reply_bulk_cstr(c, "events");
    reply_bulk_cstr(c, sds_len(l->sndbuf) || !l->connected ? "rw" : "r");
    reply_bulk_cstr(c, "send-buffer-allocated");
    reply_ll(c, (long long)sds_alloc(l->sndbuf));
    reply_bulk_cstr(c, "send-buffer-used");
    reply_ll(c, (long long)sds_len(l->sndbuf));
}

/* Per node, its outgoing link then its accepted one (Redis's order). */
void cluster_bus_reply_links(client_t *c) {
    cluster_t *cl = c->srv->cluster;
    cluster_bus_t *bus = cl->bus;
    long n = 0;
    for (int i = 0; bus && i < cl->node_count; i++) n += (cl->nodes[i]->link != NULL) + (link_from(bus, cl->nodes[i]) != NULL);
    reply_array_len(c, n);
    for (int i = 0; bus && i < cl->node_count; i++) {
        cluster_node_t *node = cl->nodes[i];
        if (node->link) reply_link(c, node->link, true);
        cluster_link_t *in = link_from(bus, node);
        if (in) reply_link(c, in, false);
    }
}

/* DEBUG DROP-CLUSTER-PACKET-FILTER: messages of TYPE are read and counted,
 * then ignored (-1: none), as Redis 7.0's tests use it to cut gossip. */
void cluster_bus_set_drop_type(server_t *srv, int type) {
    if (srv->cluster && srv->cluster->bus) srv->cluster->bus->drop_type = type;
}

/* DEBUG CLUSTERLINK KILL: closes our link to N (to), its link to us
 * (from), or both; the cron connects again, the peer does for its own. */
void cluster_bus_kill_links(server_t *srv, cluster_node_t *n, bool to, bool from) {
    if (!srv->cluster || !srv->cluster->bus) return;
    if (to && n->link) link_free(n->link);
    cluster_link_t *in = from ? link_from(srv->cluster->bus, n) : NULL;
    if (in) link_free(in);
}

void cluster_bus_follow(server_t *srv, cluster_node_t *m) { follow_master(srv, m); }
