/* cluster_link.c: the cluster bus's sockets (cluster_bus_internal.h):
 * the listeners on cluster-port, one link per peer (an outgoing one per
 * node we know, and the ones peers open to us), their send buffers and
 * cluster-link-sendbuf-limit, CLUSTER LINKS and mem_cluster_links.
 *
 * Trust boundary: every byte read here comes from the network.  A link
 * hands a message up only once its declared length (totlen, at most
 * CMSG_MAX_LEN) has arrived; a bad signature or an impossible length
 * closes the link.  What a message means is not this file's business: it
 * goes up through cluster_link_ops_t (cluster_bus.c's), as does a connect
 * that completed, so this file calls nothing of the bus above it. */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "cluster_bus.h"
#include "cluster_bus_internal.h"
#include "log.h"
#include "net.h"
#include "reply.h"
#include "util.h"

/* ---------------------------------------------------------- one link */

void cluster_link_send(cluster_link_t *l, const void *p, size_t len) {
    l->sndbuf = sds_catlen(l->sndbuf, p, len);
    l->srv->cluster->stats_sent++;
    uint16_t type;
    memcpy(&type, (const uint8_t *)p + offsetof(cmsg_header_t, type), sizeof(type));
    if (ntohs(type) < CMSG_TYPES) l->srv->cluster->stats_sent_type[ntohs(type)]++;
    if (l->connected) evloop_io_want_write(l->io, true);
}


/* Write what is queued; false when the link failed (and is freed). */
static bool link_flush(cluster_link_t *l) {
    while (sds_len(l->sndbuf)) {
        ssize_t n = write(l->fd, l->sndbuf, sds_len(l->sndbuf));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
        if (n <= 0) {
            cluster_link_free(l);
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
            cluster_link_free(l);
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
                cluster_link_free(l);
                return;
            }
            if (l->rcv_len < totlen) break;
            if (!l->srv->cluster->bus->link_ops->message(l, l->rcvbuf, totlen)) {
                cluster_link_free(l);
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
            cluster_link_free(l);
            return;
        }
        l->connected = true;
        if (l->node) l->node->link_connected = true;
        l->srv->cluster->bus->link_ops->connected(l);
    }
    if (writable && l->connected && !link_flush(l)) return;
    if (readable) link_read(l);
}

cluster_link_t *cluster_link_create(server_t *srv, int fd, cluster_node_t *node, bool connected) {
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

void cluster_link_free(cluster_link_t *l) {
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
        cluster_link_create(srv, cfd, NULL, true);
    }
}


/* ------------------------------------------------------- listen, connect */

bool cluster_link_listen(server_t *srv) {
    cluster_bus_t *bus = srv->cluster->bus;
    int port = srv->cluster->myself->cport;
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

void cluster_link_close_all(server_t *srv) {
    cluster_bus_t *bus = srv->cluster->bus;
    while (bus->links) cluster_link_free(bus->links);
    for (int i = 0; i < bus->count; i++) {
        evloop_io_free(bus->ios[i]);
        close(bus->fds[i]);
    }
}

void cluster_link_connect(server_t *srv, cluster_node_t *n) {
    char err[256];
    int fd = net_connect_tcp_nonblock(n->ip, n->cport, NULL, err, sizeof(err));
    if (fd < 0) return;
    net_set_nodelay(fd, true);
    cluster_link_create(srv, fd, n, false);
    if (!n->ping_sent) n->ping_sent = util_mstime(); /* a link that never connects counts as unanswered */
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

void cluster_link_set_from(cluster_link_t *l, cluster_node_t *n) {
    cluster_bus_t *bus = l->srv->cluster->bus;
    cluster_link_t *old;
    while ((old = link_from(bus, n)) != NULL) cluster_link_free(old);
    l->from = n;
}

/* n is forgotten: its accepted links go with it. */
void cluster_links_from_gone(cluster_bus_t *bus, const cluster_node_t *n) {
    cluster_link_t *l;
    while ((l = link_from(bus, n)) != NULL) cluster_link_free(l);
}

/* The cron's share: a send buffer mostly empty is shrunk (so its
 * allocation tells what it holds), one over cluster-link-sendbuf-limit
 * frees its link (the cron connects again; the peer reconnects an
 * accepted one), as Redis 7.0 does every 100 ms. */
void cluster_links_cron(server_t *srv) {
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
        cluster_link_free(l);
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

/* DEBUG CLUSTERLINK KILL: closes our link to N (to), its link to us
 * (from), or both; the cron connects again, the peer does for its own. */
void cluster_bus_kill_links(server_t *srv, cluster_node_t *n, bool to, bool from) {
    if (!srv->cluster || !srv->cluster->bus) return;
    if (to && n->link) cluster_link_free(n->link);
    cluster_link_t *in = from ? link_from(srv->cluster->bus, n) : NULL;
    if (in) cluster_link_free(in);
}
