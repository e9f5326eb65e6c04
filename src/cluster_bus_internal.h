/* cluster_bus_internal.h: what the files of the cluster bus share and
 * nothing outside them sees: the bus's state (cluster_bus_t, reached as
 * srv->cluster->bus), a link, and the cross-file functions, grouped
 * under a heading per source file.  The rest of the server uses
 * cluster_bus.h.
 *
 * The files, bottom first; each calls only the ones above it in this
 * list (make check-layers fails on a call cycle):
 *
 *   cluster_link.c      sockets: listeners, one link per peer, send
 *                       buffers and cluster-link-sendbuf-limit, CLUSTER
 *                       LINKS; hands whole messages up through
 *                       cluster_link_ops_t (no call up)
 *   cluster_wire.c       the wire: checking a message, building and
 *                       queueing PING/PONG/MEET (gossip and extensions),
 *                       FAIL, header-only messages
 *   cluster_failure.c   failure reports, PFAIL and FAIL
 *   cluster_failover.c  following a new master, votes, elections,
 *                       CLUSTER FAILOVER and the manual failover
 *   cluster_replica_migration.c  a replica moving to an orphaned master
 *   cluster_forget.c    forgotten nodes: CLUSTER FORGET's list, the
 *                       forgotten-node extension, a node leaving the bus
 *   cluster_relay.c     PUBLISH and SPUBLISH between nodes
 *   cluster_gossip.c    what PING, PONG, MEET and UPDATE tell: the
 *                       handshake, the sender's role, slots and epochs,
 *                       gossip about other nodes, hostname and shard id
 *   cluster_bus.c       the top: a message's dispatch, the cron, start
 *                       and stop */
#ifndef RL_CLUSTER_BUS_INTERNAL_H
#define RL_CLUSTER_BUS_INTERNAL_H

#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster.h"
#include "cluster_msg.h"
#include "evloop.h"

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

/* What a link hands up (cluster_bus.c fills it; cluster_link.c sits
 * below everything that reads a message, so it calls up only through
 * this table). */
typedef struct cluster_link_ops {
    /* One whole message of len bytes (its signature and totlen checked,
     * nothing else); false closes the link. */
    bool (*message)(cluster_link_t *l, const uint8_t *buf, size_t len);
    /* An outgoing link just connected. */
    void (*connected)(cluster_link_t *l);
} cluster_link_ops_t;

/* A failure report: `reporter` said `about` is PFAIL or FAIL at `time`. */
typedef struct fail_report {
    cluster_node_t *about, *reporter;
    long long time;
} fail_report_t;

typedef struct cluster_bus {
    /* cluster_link.c */
    const cluster_link_ops_t *link_ops;
    int fds[BUS_MAX_LISTENERS];
    evloop_io_t *ios[BUS_MAX_LISTENERS];
    int count;
    cluster_link_t *links;          /* every link, outgoing and accepted */
    long long links_limit_exceeded; /* links freed by cluster-link-sendbuf-limit (CLUSTER INFO) */
    int drop_type;                  /* DEBUG DROP-CLUSTER-PACKET-FILTER: a message type ignored, -1 none */
    /* cluster_failure.c */
    fail_report_t *reports;
    int report_count;
    /* cluster_bus.c */
    long long cron_ticks;
    /* cluster_forget.c: CLUSTER FORGET's names, kept out of gossip for a
     * minute (Redis's blacklist), so that nodes that still know one do
     * not bring it back */
    struct {
        char name[CLUSTER_NAMELEN];
        long long until;
    } forgotten[64];
    int forgotten_count;
    /* cluster_failover.c.  A replica's election (Redis's failover_auth_*):
     * when it asks for votes, whether it did, the votes it got, for which
     * epoch. */
    long long auth_time;
    bool auth_sent;
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

static inline uint64_t hton64(uint64_t v) { return htobe64(v); }
static inline uint64_t ntoh64(uint64_t v) { return be64toh(v); }

/* ------------------------------------------------------- cluster_link.c */

/* Open the listeners on cluster-port; false (logged) if none. */
bool cluster_link_listen(server_t *srv);
/* Every link and listener closed. */
void cluster_link_close_all(server_t *srv);
/* A link on fd (connected: accepted; else a connect in progress), to
 * node if it is an outgoing one (node->link is then set). */
cluster_link_t *cluster_link_create(server_t *srv, int fd, cluster_node_t *node, bool connected);
/* Connect to n's bus port (n->link set if the connect could start). */
void cluster_link_connect(server_t *srv, cluster_node_t *n);
void cluster_link_free(cluster_link_t *l);
/* Queue a whole message (counted in CLUSTER INFO's stats). */
void cluster_link_send(cluster_link_t *l, const void *p, size_t len);
/* An accepted link's messages come from n (an older link from n goes). */
void cluster_link_set_from(cluster_link_t *l, cluster_node_t *n);
/* n is forgotten: its accepted links go with it. */
void cluster_links_from_gone(cluster_bus_t *bus, const cluster_node_t *n);
/* The cron's share: send buffers shrunk or over the limit. */
void cluster_links_cron(server_t *srv);

/* -------------------------------------------------------- cluster_wire.c */

bool cmsg_null_name(const char *name);
/* The header of a message of ours: our slots (our master's if we are a
 * replica), epochs, offset, role, address. */
void cmsg_fill_header(server_t *srv, cmsg_header_t *h, int type, size_t totlen);
/* PING, PONG or MEET on l, with gossip and our extensions. */
void cmsg_send_ping(cluster_link_t *l, int type);
/* msg to every node we have a link to (not in handshake). */
void cmsg_broadcast(server_t *srv, const void *msg, size_t len);
/* FAIL about n, to every node. */
void cmsg_broadcast_fail(server_t *srv, cluster_node_t *n);
/* A message that is a header only (AUTH_REQUEST, AUTH_ACK, MFSTART). */
void cmsg_send_header_only(server_t *srv, cluster_link_t *l, int type, uint8_t mflags0);

/* ---------------------------------------------------- cluster_failure.c */

/* reporter says about is PFAIL or FAIL / no longer (reporter NULL: every
 * report about it). */
void cluster_report_add(cluster_bus_t *bus, cluster_node_t *about, cluster_node_t *reporter);
void cluster_report_del(cluster_bus_t *bus, cluster_node_t *about, cluster_node_t *reporter);
/* n is gone: the reports it made go too. */
void cluster_reports_by_gone(cluster_bus_t *bus, const cluster_node_t *n);
/* PFAIL to FAIL once a majority of masters reports n. */
void cluster_maybe_mark_failing(server_t *srv, cluster_node_t *n);
/* The cron's check of n: unanswered for the node timeout makes it PFAIL. */
void cluster_failure_check(server_t *srv, cluster_node_t *n, long long now);
/* n, marked FAIL, answered our PING: FAIL lifted if Redis would. */
void cluster_failure_answered(server_t *srv, cluster_node_t *n);
/* A FAIL message from sender (buf: the whole message). */
void cluster_failure_handle_fail(server_t *srv, cluster_node_t *sender, const uint8_t *buf);

/* --------------------------------------------------- cluster_failover.c */

/* Become a replica of m. */
void cluster_follow_master(server_t *srv, cluster_node_t *m);
/* A master's vote on FAILOVER_AUTH_REQUEST; an AUTH_ACK counted. */
void cluster_handle_auth_request(server_t *srv, cluster_node_t *sender, const cmsg_header_t *h);
void cluster_handle_auth_ack(server_t *srv, cluster_node_t *sender, const cmsg_header_t *h);
void cluster_election_cron(server_t *srv);
/* The manual failover: a paused master's offset seen, MFSTART, the end
 * of one (ours or our replica's), its cron. */
void cluster_mf_note_master_offset(server_t *srv, cluster_node_t *sender, const cmsg_header_t *h);
void cluster_mf_handle_start(server_t *srv, cluster_node_t *sender, cluster_link_t *l);
void cluster_mf_reset(server_t *srv);
void cluster_mf_cron(server_t *srv);

/* ------------------------------------------ cluster_replica_migration.c */

void cluster_migration_cron(server_t *srv);

/* ----------------------------------------------------- cluster_forget.c */

void cluster_forgotten_add(cluster_bus_t *bus, const char *name, long long until);
bool cluster_is_forgotten(cluster_bus_t *bus, const char *name);
/* The forgotten-node extensions of a PING/PONG/MEET from sender on l. */
void cluster_forgotten_ext_apply(server_t *srv, cluster_link_t *l, cluster_node_t *sender, const cmsg_header_t *h);

/* ------------------------------------------------------ cluster_relay.c */

/* PUBLISH or PUBLISHSHARD from another node: to our subscribers. */
void cluster_relay_deliver(server_t *srv, int type, const uint8_t *buf);

/* ----------------------------------------------------- cluster_gossip.c */

/* A PING, PONG or MEET (sender: the node it names, NULL if unknown or in
 * handshake); false closes the link. */
bool cluster_gossip_handle_ping(cluster_link_t *l, cluster_node_t *sender, const cmsg_header_t *h, int type);
/* UPDATE: a node's slots under a newer epoch. */
void cluster_gossip_handle_update(server_t *srv, const uint8_t *buf);

#endif
