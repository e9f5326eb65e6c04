/* cluster_gossip.c: what PING, PONG, MEET and UPDATE tell
 * (cluster_bus_internal.h), as in Redis 7.0.
 *
 * The life of a peer: CLUSTER MEET (or gossip naming an unknown node)
 * adds it in handshake under a random name; the cron connects and sends
 * MEET (or PING); its PONG gives its real name, and the handshake ends.
 * From then on each PING/PONG header tells its slots (a higher
 * configEpoch wins a slot; an UPDATE tells a node that lost some), its
 * role and epochs, and its gossip names the nodes it knows, which we meet
 * in turn, and the ones it finds failing (cluster_failure.c's reports).
 * Extensions carry its hostname and shard id (the forgotten-node one is
 * cluster_forget.c's).  Called by cluster_bus.c's dispatch; the message
 * was checked (cluster_msg_valid) before. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cluster_bus.h"
#include "cluster_bus_internal.h"
#include "log.h"
#include "net.h"
#include "util.h"

/* ------------------------------------------------------------ handshake */

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

/* -------------------------------------------------------- slots, epochs */

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
        cluster_follow_master(srv, sender);
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
        cmsg_fill_header(srv, (cmsg_header_t *)buf, CMSG_UPDATE, len);
        cmsg_update_t *u = (cmsg_update_t *)(buf + CMSG_HEADER_LEN);
        u->config_epoch = hton64(owner->config_epoch);
        memcpy(u->nodename, owner->name, CLUSTER_NAMELEN);
        for (size_t i = 0; i < sizeof(u->slots); i++) /* not the slots it no longer claims */
            u->slots[i] = owner->slots[i] & (uint8_t)~cl->unclaimed[i];
        cluster_link_send(sender->link, buf, len);
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

/* ------------------------------------------------ gossip, extensions */

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
                cluster_report_add(cl->bus, n, sender);
                cluster_maybe_mark_failing(srv, n);
            } else {
                cluster_report_del(cl->bus, n, sender);
            }
            continue;
        }
        if (cmsg_null_name(g[i].nodename) || (flags & CNODE_NOADDR) || cluster_is_forgotten(cl->bus, g[i].nodename)) continue;
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


/* The role, slots and epochs a PING/PONG/MEET header tells about its sender. */
static void apply_sender_header(server_t *srv, cluster_node_t *sender, const cmsg_header_t *h, cluster_link_t *l) {
    cluster_t *cl = srv->cluster;
    sender->repl_offset = (long long)ntoh64(h->offset);
    /* the sender's nofailover flag, as it says it now */
    sender->flags = (sender->flags & ~CNODE_NOFAILOVER) | (ntohs(h->flags) & CNODE_NOFAILOVER);
    sender->port = ntohs(h->port);
    sender->cport = ntohs(h->cport);
    if (h->myip[0] || !sender->ip[0]) peer_ip(l, h->myip, sender->ip);
    if (cmsg_null_name(h->slaveof)) {
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
    if (known || cluster_is_forgotten(cl->bus, h->sender)) {
        l->node = NULL; /* the link goes with the handshake node */
        hs->link = NULL;
        cluster_forget_node(cl, hs);
        return NULL;
    }
    memcpy(hs->name, h->sender, CLUSTER_NAMELEN);
    hs->name[CLUSTER_NAMELEN] = '\0';
    hs->flags &= ~(CNODE_HANDSHAKE | CNODE_MEET);
    hs->flags |= cmsg_null_name(h->slaveof) ? CNODE_MASTER : CNODE_REPLICA;
    cl->todo_save = cl->todo_update = true;
    log_msg(LL_NOTICE, "Handshake with node %.40s completed.", hs->name);
    return hs;
}

/* ------------------------------------------------------------ messages */

/* A PONG from the peer of our outgoing link: it answered. */
static void note_pong(server_t *srv, cluster_node_t *n) {
    n->pong_received = util_mstime();
    n->ping_sent = 0;
    if (n->flags & CNODE_PFAIL) {
        n->flags &= ~CNODE_PFAIL;
        srv->cluster->todo_update = true;
    } else if (n->flags & CNODE_FAIL) {
        cluster_failure_answered(srv, n);
    }
}

bool cluster_gossip_handle_ping(cluster_link_t *l, cluster_node_t *sender, const cmsg_header_t *h, int type) {
    server_t *srv = l->srv;
    cluster_t *cl = srv->cluster;
    if (type == CMSG_MEET || !cl->myself->ip[0]) learn_my_ip(srv, l);
    if (!sender && type == CMSG_MEET) {
        /* Someone asked to join: add it in handshake; our PING's PONG
         * will give us its name. */
        char ip[CMSG_IP_LEN];
        peer_ip(l, h->myip, ip);
        start_handshake(srv, ip, ntohs(h->port), ntohs(h->cport), false);
        process_gossip(srv, NULL, h);
    }
    if (type != CMSG_PONG) cmsg_send_ping(l, CMSG_PONG);
    if (l->node && (l->node->flags & CNODE_HANDSHAKE)) {
        if (type == CMSG_PONG) {
            sender = end_handshake(cl, l, h);
            if (!sender) return false;
        }
    }
    if (l->node && type == CMSG_PONG && sender == l->node) note_pong(srv, l->node);
    if (sender) {
        apply_sender_header(srv, sender, h, l);
        process_extensions(cl, sender, h);
        process_gossip(srv, sender, h);
        cluster_forgotten_ext_apply(srv, l, sender, h);
    }
    return true;
}

void cluster_gossip_handle_update(server_t *srv, const uint8_t *buf) {
    cluster_t *cl = srv->cluster;
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
}
