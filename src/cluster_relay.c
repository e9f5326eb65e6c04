/* cluster_relay.c: pub/sub across the cluster bus (cluster_bus.h):
 * PUBLISH goes to every node, SPUBLISH to the nodes of our shard (our
 * master, or us, and its replicas), and what other nodes relay reaches
 * our subscribers through pubsub.c.  dispatch.c hands the outgoing
 * messages here; cluster_bus.c's dispatch the incoming ones. */
#include <arpa/inet.h>
#include <string.h>

#include "cluster_bus.h"
#include "cluster_bus_internal.h"
#include "pubsub.h"

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
    cmsg_fill_header(srv, (cmsg_header_t *)buf, shard ? CMSG_PUBLISHSHARD : CMSG_PUBLISH, len);
    uint32_t c32 = htonl((uint32_t)clen), m32 = htonl((uint32_t)mlen);
    memcpy(buf + CMSG_HEADER_LEN, &c32, 4);
    memcpy(buf + CMSG_HEADER_LEN + 4, &m32, 4);
    memcpy(buf + CMSG_HEADER_LEN + 8, chan, clen);
    memcpy(buf + CMSG_HEADER_LEN + 8 + clen, msg, mlen);
    if (!shard) {
        cmsg_broadcast(srv, buf, len);
    } else {
        for (int i = 0; i < cl->node_count; i++) {
            cluster_node_t *n = cl->nodes[i];
            if (n->flags & (CNODE_MYSELF | CNODE_HANDSHAKE) || !n->link || !in_my_shard(cl, n)) continue;
            cluster_link_send(n->link, buf, len);
        }
    }
    zfree(buf);
}

void cluster_relay_deliver(server_t *srv, int type, const uint8_t *buf) {
    uint32_t clen, mlen;
    memcpy(&clen, buf + CMSG_HEADER_LEN, 4);
    memcpy(&mlen, buf + CMSG_HEADER_LEN + 4, 4);
    const char *chan = (const char *)buf + CMSG_HEADER_LEN + 8;
    if (type == CMSG_PUBLISH) pubsub_publish(srv, chan, ntohl(clen), chan + ntohl(clen), ntohl(mlen));
    else pubsub_publish_shard(srv, chan, ntohl(clen), chan + ntohl(clen), ntohl(mlen));
}
