/* cluster_nodes.c: the node table of a cluster node and the slots each
 * node claims (cluster.h), and the text CLUSTER NODES and nodes.conf share.
 *
 * The bottom of the cluster modules: cluster.c (state, routing),
 * cluster_config.c (nodes.conf) and cluster_cmds.c call it; it calls
 * none of them.  A node table holds a handful of nodes up to about a
 * thousand: lookups by name walk it. */
#include <stdio.h>
#include <string.h>

#include "cluster.h"
#include "util.h"

/* ------------------------------------------------------------- nodes */

void cluster_random_name(char *name) {
    util_random_hex(name, CLUSTER_NAMELEN);
    name[CLUSTER_NAMELEN] = '\0';
}

cluster_node_t *cluster_node_create(cluster_t *cl, const char *name, int flags) {
    cluster_node_t *n = zcalloc(sizeof(*n));
    if (name) {
        memcpy(n->name, name, CLUSTER_NAMELEN);
        n->name[CLUSTER_NAMELEN] = '\0';
    } else {
        cluster_random_name(n->name);
    }
    cluster_random_name(n->shard_id);
    n->flags = flags;
    n->hostname = sds_empty();
    n->ctime = util_mstime();
    cl->nodes = zrealloc(cl->nodes, sizeof(*cl->nodes) * (size_t)(cl->node_count + 1));
    cl->nodes[cl->node_count++] = n;
    return n;
}

void cluster_set_shard_id(cluster_t *cl, cluster_node_t *n, const char *id) {
    if (!id) return;
    if (memcmp(n->shard_id, id, CLUSTER_NAMELEN)) {
        memcpy(n->shard_id, id, CLUSTER_NAMELEN);
        cl->todo_save = true;
    }
    cluster_node_t *me = cl->myself;
    if (me && me != n && me->replicaof == n && memcmp(me->shard_id, id, CLUSTER_NAMELEN)) {
        memcpy(me->shard_id, id, CLUSTER_NAMELEN); /* after an upgrade from 7.0 the two may differ */
        cl->todo_save = true;
    }
}

cluster_node_t *cluster_lookup_node(cluster_t *cl, const char *name, size_t len) {
    if (len != CLUSTER_NAMELEN) return NULL;
    for (int i = 0; i < cl->node_count; i++)
        if (!memcmp(cl->nodes[i]->name, name, CLUSTER_NAMELEN)) return cl->nodes[i];
    return NULL;
}

void cluster_node_free(cluster_node_t *n) {
    sds_free(n->hostname);
    zfree(n);
}

void cluster_forget_node(cluster_t *cl, cluster_node_t *n) {
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        if (cl->slots[s] == n) cluster_del_slot(cl, s);
        if (cl->migrating_to[s] == n) cl->migrating_to[s] = NULL;
        if (cl->importing_from[s] == n) cl->importing_from[s] = NULL;
    }
    cluster_count_moving(cl);
    for (int i = 0; i < cl->node_count; i++)
        if (cl->nodes[i]->replicaof == n) cl->nodes[i]->replicaof = NULL;
    for (int i = 0; i < cl->node_count; i++) {
        if (cl->nodes[i] != n) continue;
        cl->nodes[i] = cl->nodes[--cl->node_count];
        break;
    }
    cluster_node_free(n);
}

void cluster_count_moving(cluster_t *cl) {
    int n = 0;
    for (int s = 0; s < CLUSTER_SLOTS; s++) n += cl->migrating_to[s] || cl->importing_from[s];
    cl->moving_slots = n;
}

bool cluster_node_has_slot(const cluster_node_t *n, int slot) { return n->slots[slot >> 3] & (1u << (slot & 7)); }

void cluster_add_slot(cluster_t *cl, cluster_node_t *n, int slot) {
    cl->slots[slot] = n;
    cl->unclaimed[slot >> 3] &= (uint8_t) ~(1u << (slot & 7));
    if (!cluster_node_has_slot(n, slot)) {
        n->slots[slot >> 3] |= (uint8_t)(1u << (slot & 7));
        n->numslots++;
    }
}

void cluster_del_slot(cluster_t *cl, int slot) {
    cluster_node_t *n = cl->slots[slot];
    cl->unclaimed[slot >> 3] &= (uint8_t) ~(1u << (slot & 7));
    if (!n) return;
    cluster_node_t *me = cl->myself;
    if (me && (n == me || ((me->flags & CNODE_REPLICA) && me->replicaof == n))) {
        cl->shard_lost[slot >> 3] |= (uint8_t)(1u << (slot & 7));
        cl->shard_lost_any = true;
    }
    if (cluster_node_has_slot(n, slot)) {
        n->slots[slot >> 3] &= (uint8_t) ~(1u << (slot & 7));
        n->numslots--;
    }
    cl->slots[slot] = NULL;
}

/* ---------------------------------------------------------- describing */

sds cluster_cat_flags(sds s, int flags) {
    static const struct {
        int flag;
        const char *word;
    } words[] = {{CNODE_MYSELF, "myself"}, {CNODE_MASTER, "master"}, {CNODE_REPLICA, "slave"}, {CNODE_PFAIL, "fail?"}, {CNODE_FAIL, "fail"}, {CNODE_HANDSHAKE, "handshake"}, {CNODE_NOADDR, "noaddr"}, {CNODE_NOFAILOVER, "nofailover"}};
    size_t len = sds_len(s);
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        if (!(flags & words[i].flag)) continue;
        if (sds_len(s) != len) s = sds_cat(s, ",");
        s = sds_cat(s, words[i].word);
    }
    if (sds_len(s) == len) s = sds_cat(s, "noflags");
    return s;
}

/* "<id> <ip>:<port>@<cport>[,<hostname>] <flags> <master> <ping> <pong>
 * <epoch> <link> <slots>..." as Redis 7.0 writes it; nodes.conf's address
 * is "<ip>:<port>@<cport>,[<hostname>],shard-id=<id>" as 7.2 writes it. */
sds cluster_cat_node_line(server_t *srv, sds s, const cluster_node_t *n, bool slot_info, bool aux) {
    cluster_t *cl = srv->cluster;
    s = sds_catprintf(s, "%s %s:%d@%d", n->name, n->ip, n->port, n->cport);
    if (n->hostname[0] || aux) s = sds_catprintf(s, ",%s", n->hostname);
    if (aux) s = sds_catprintf(s, ",shard-id=%s", n->shard_id);
    s = sds_cat(s, " ");
    s = cluster_cat_flags(s, n->flags);
    s = sds_catprintf(s, " %s %lld %lld %llu %s", n->replicaof ? n->replicaof->name : "-", n->ping_sent,
                      n->pong_received, (unsigned long long)n->config_epoch,
                      (n->flags & CNODE_MYSELF) || n->link_connected ? "connected" : "disconnected");
    for (int start = -1, s2 = 0; s2 <= CLUSTER_SLOTS; s2++) {
        bool has = s2 < CLUSTER_SLOTS && cluster_node_has_slot(n, s2);
        if (has && start < 0) start = s2;
        if (!has && start >= 0) {
            if (start == s2 - 1) s = sds_catprintf(s, " %d", start);
            else s = sds_catprintf(s, " %d-%d", start, s2 - 1);
            start = -1;
        }
    }
    if (slot_info && (n->flags & CNODE_MYSELF)) {
        for (int sl = 0; sl < CLUSTER_SLOTS; sl++) {
            if (cl->migrating_to[sl]) s = sds_catprintf(s, " [%d->-%s]", sl, cl->migrating_to[sl]->name);
            else if (cl->importing_from[sl]) s = sds_catprintf(s, " [%d-<-%s]", sl, cl->importing_from[sl]->name);
        }
    }
    return s;
}

sds cluster_nodes_text(server_t *srv, bool aux) {
    cluster_t *cl = srv->cluster;
    sds s = sds_empty();
    for (int i = 0; i < cl->node_count; i++) {
        if (cl->nodes[i]->flags & CNODE_HANDSHAKE) continue;
        s = cluster_cat_node_line(srv, s, cl->nodes[i], true, aux);
        s = sds_cat(s, "\n");
    }
    return s;
}
