/* cluster_forget.c: forgetting nodes on the cluster bus
 * (cluster_bus_internal.h): CLUSTER FORGET's list of names kept out of
 * gossip for a while (so that nodes that still know one do not bring it
 * back), Redis 7.2's forgotten-node extension (a FORGET elsewhere obeyed
 * here), and what goes with a node that leaves: its links, its failure
 * reports, a manual failover it was part of.  Called by cluster_cmds.c
 * (FORGET, a node reset), cluster_gossip.c and cluster_bus.c. */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_bus.h"
#include "cluster_bus_internal.h"
#include "log.h"
#include "util.h"

/* ------------------------------------------------------ the list */

#define FORGET_TTL_MS 60000

void cluster_forgotten_add(cluster_bus_t *bus, const char *name, long long until) {
    int i = 0;
    while (i < bus->forgotten_count && memcmp(bus->forgotten[i].name, name, CLUSTER_NAMELEN)) i++;
    if (i == bus->forgotten_count) i = bus->forgotten_count < 64 ? bus->forgotten_count++ : (int)(random() % 64);
    memcpy(bus->forgotten[i].name, name, CLUSTER_NAMELEN);
    bus->forgotten[i].until = until;
}

void cluster_bus_forget(server_t *srv, const char *name) {
    cluster_bus_t *bus = srv->cluster->bus;
    if (!bus) return;
    cluster_forgotten_add(bus, name, util_mstime() + FORGET_TTL_MS);
}

bool cluster_is_forgotten(cluster_bus_t *bus, const char *name) {
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

/* ------------------------------------------- the forgotten-node extension */

/* Redis 7.2's forgotten-node extension (a CLUSTER FORGET elsewhere): the
 * node is forgotten here too and kept out of gossip for the TTL it
 * carries, unless it is myself, our master, the sender or this link's
 * peer.  Run last: the node may be named in this very message. */
void cluster_forgotten_ext_apply(server_t *srv, cluster_link_t *l, cluster_node_t *sender, const cmsg_header_t *h) {
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
        cluster_forgotten_add(cl->bus, f.name, util_mstime() + (long long)ttl * 1000);
        log_msg(LL_NOTICE, "Node %.40s forgotten as %.40s asked (for %llu s)", n->name, sender->name,
                (unsigned long long)ttl);
        cluster_bus_node_gone(srv, n);
        cluster_forget_node(cl, n);
        cl->todo_update = cl->todo_save = true;
    }
}

/* --------------------------------------------------- a node leaves */

/* Before a node is forgotten (FORGET, the extension, a handshake that
 * timed out, a reset): what the bus holds about it goes. */
void cluster_bus_node_gone(server_t *srv, cluster_node_t *n) {
    cluster_bus_t *bus = srv->cluster->bus;
    if (!bus) return;
    if (n->link) cluster_link_free(n->link);
    if (bus->mf_replica == n) cluster_mf_reset(srv);
    cluster_links_from_gone(bus, n);
    cluster_report_del(bus, n, NULL);
    cluster_reports_by_gone(bus, n);
}
