/* cluster_bus.h: the cluster bus: Redis 7.0's binary node-to-node
 * protocol on cluster-port (default port + 10000).
 *
 * Each node keeps one outgoing link to every other node it knows and
 * accepts theirs; over them go PING, PONG and MEET (a header with the
 * sender's slots, epochs and role, then gossip about other nodes and
 * extensions), FAIL and UPDATE; what they say is applied to cluster.c's
 * state.  The message layout is cluster_msg.h's.  The bus is a group of
 * files, one per concern (links, the wire, gossip, failure detection,
 * failover, replica migration, forgotten nodes, pub/sub relay), with
 * cluster_bus.c on top; cluster_bus_internal.h lists them and holds what
 * they share.  This header is what the rest of the server calls. */
#ifndef RL_CLUSTER_BUS_H
#define RL_CLUSTER_BUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster.h"

/* Open the bus listeners (start-up, after cluster_init); false (logged)
 * stops the start. */
bool cluster_bus_init(server_t *srv);
void cluster_bus_free(server_t *srv);
/* The cron's share (every 100 ms): links, pings, timeouts, failure
 * detection. */
void cluster_bus_cron(server_t *srv);
/* CLUSTER MEET: start a handshake with ip:port (bus port cport); false
 * if the address is not a valid one. */
bool cluster_bus_meet(server_t *srv, const char *ip, int port, int cport);
/* A PONG to every node we have a link to: our slots and epoch, now
 * rather than at the next gossip round (after a failover or an import). */
void cluster_bus_broadcast_pong(server_t *srv);
/* CLUSTER FORGET: name stays out of what gossip adds for 60 s. */
void cluster_bus_forget(server_t *srv, const char *name);
/* Before a node is forgotten: its links go. */
void cluster_bus_node_gone(server_t *srv, cluster_node_t *n);
/* Links for CLUSTER LINKS: how many, and one's fields. */
void cluster_bus_reply_links(client_t *c);
/* Links freed for exceeding cluster-link-sendbuf-limit (CLUSTER INFO's
 * total_cluster_links_buffer_limit_exceeded), and what the links of
 * nodes take (INFO's mem_cluster_links), in bytes. */
long long cluster_bus_links_limit_exceeded(server_t *srv);
size_t cluster_bus_links_memory(server_t *srv);
void cluster_bus_set_drop_type(server_t *srv, int type);
long long cluster_bus_my_offset(server_t *srv);
/* Myself becomes a replica of master m (its slots, if any, dropped). */
void cluster_bus_follow(server_t *srv, cluster_node_t *m);
void cluster_bus_kill_links(server_t *srv, cluster_node_t *n, bool to, bool from);
/* CLUSTER FAILOVER on a replica, as Redis 7.0: without an option, MFSTART
 * to the master, which holds its writes and tells its offset; once we
 * reached it, an election whose requests carry FORCEACK.  FORCE: that
 * election at once; TAKEOVER: no election, a new epoch and the master's
 * slots.  A manual failover not done in CLUSTER_MF_TIMEOUT_MS is given up
 * (and the master's writes run again). */
enum { CLUSTER_FAILOVER_DEFAULT = 0,
       CLUSTER_FAILOVER_FORCE,
       CLUSTER_FAILOVER_TAKEOVER };
#define CLUSTER_MF_TIMEOUT_MS 5000
void cluster_bus_failover(server_t *srv, int mode);
/* COUNT-FAILURE-REPORTS: live reports about n. */
int cluster_bus_failure_reports(server_t *srv, cluster_node_t *n);
/* PUBLISH: the message to every node; SPUBLISH (shard): PUBLISHSHARD to
 * the other nodes of our shard (our master and its replicas). */
void cluster_bus_publish(server_t *srv, const char *chan, size_t clen, const char *msg, size_t mlen, bool shard);

/* Whether buf (len bytes, a whole message by its totlen) is a well-formed
 * message: lengths agree with the type, the gossip count and the
 * extensions.  The fuzz target calls it. */
bool cluster_msg_valid(const uint8_t *buf, size_t len);

#endif
