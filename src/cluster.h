/* cluster.h: Redis Cluster's node state (cluster-enabled yes): the nodes
 * this node knows, who serves each of the 16384 hash slots, epochs, slots
 * being migrated, the cluster's ok/fail state, and the routing of a
 * command to the node that serves its keys (-MOVED, -ASK, -TRYAGAIN,
 * -CROSSSLOT, -CLUSTERDOWN).
 *
 * cluster.c owns the state (srv->cluster, NULL with cluster mode off) and
 * the routing that dispatch.c asks before a command runs; cluster_nodes.c
 * the node table and slot bitmaps; cluster_config.c reads and writes
 * nodes.conf; the cluster bus (cluster_bus.h: cluster_bus.c and the files
 * cluster_bus_internal.h lists) speaks to the other nodes and applies what
 * they say here; cluster_cmds.c holds the
 * CLUSTER command, READONLY, READWRITE and ASKING (docs/cluster.md). */
#ifndef RL_CLUSTER_H
#define RL_CLUSTER_H

#include <stdbool.h>
#include <stdint.h>

#include "conn.h"
#include "crc16.h"
#include "server.h"

#define CLUSTER_SLOTS CRC16_SLOTS
#define CLUSTER_NAMELEN 40

/* Node flags, with the words CLUSTER NODES and nodes.conf use for them;
 * the values are Redis's, as the bus carries them. */
#define CNODE_MASTER 1
#define CNODE_REPLICA 2
#define CNODE_PFAIL 4
#define CNODE_FAIL 8
#define CNODE_MYSELF 16
#define CNODE_HANDSHAKE 32
#define CNODE_NOADDR 64
#define CNODE_MEET 128
#define CNODE_MIGRATE_TO 256
#define CNODE_NOFAILOVER 512

/* A client's cluster flags (client_t.cluster_flags). */
#define CLUSTER_CLIENT_READONLY 1 /* READONLY: reads served by a replica of the slot's master */
#define CLUSTER_CLIENT_ASKING 2   /* ASKING: the next command may use an importing slot */

enum { CLUSTER_OK = 0,
       CLUSTER_FAIL };

typedef struct cluster_node {
    char name[CLUSTER_NAMELEN + 1];     /* 40 hex digits and a NUL */
    char shard_id[CLUSTER_NAMELEN + 1]; /* Redis 7.2's: a master's random one, its replicas take it */
    int flags;                          /* CNODE_* */
    uint64_t config_epoch;
    uint8_t slots[CLUSTER_SLOTS / 8]; /* the slots it claims */
    int numslots;
    struct cluster_node *replicaof;     /* its master, for a replica */
    long long ping_sent, pong_received; /* unix ms, 0 = none */
    char ip[46];                        /* "" = not known yet */
    int port, cport, tls_port;
    sds hostname;              /* "" = none */
    long long ctime;           /* unix ms it was created (a handshake times out) */
    long long fail_time;       /* unix ms FAIL was set */
    struct cluster_link *link; /* cluster_link.c: our outgoing link to it, or NULL */
    bool link_connected;       /* that link is up (CLUSTER NODES: connected) */
    long long voted_time;      /* unix ms we last voted for a replica of it */
    long long repl_offset;     /* the replication offset its last header told */
    long long orphaned_time;   /* cluster_replica_migration.c: unix ms since it is a master without working replicas, 0 = not */
} cluster_node_t;

typedef struct cluster {
    cluster_node_t *myself;
    cluster_node_t **nodes; /* every known node, myself included */
    int node_count;
    uint64_t current_epoch, last_vote_epoch;
    int state; /* CLUSTER_OK / CLUSTER_FAIL */
    int size;  /* masters serving at least one slot */
    cluster_node_t *slots[CLUSTER_SLOTS];
    cluster_node_t *migrating_to[CLUSTER_SLOTS];
    cluster_node_t *importing_from[CLUSTER_SLOTS];
    /* Slots bound to an owner that stopped claiming them (Redis: owner_not_claiming_slot). */
    uint8_t unclaimed[CLUSTER_SLOTS / 8];
    int moving_slots;   /* slots migrating or importing (cluster_count_moving): 0 spares routing two lookups */
    char *config_path;  /* nodes.conf's full path (an sds) */
    int lock_fd;        /* the locked nodes.conf, -1 before the first save */
    bool todo_save;     /* write nodes.conf at before-sleep */
    bool todo_update;   /* recompute the state at before-sleep */
    long long start_ms; /* a master waits a moment after start before going ok */
    long long stats_sent, stats_received;
    long long stats_sent_type[11], stats_received_type[11]; /* per bus message type (CLUSTER INFO) */
    struct cluster_bus *bus;                                /* cluster_bus_internal.h: listeners, links, timers */
    /* Slots our shard (myself, or our master) lost since the last
     * before-sleep: their shard channels' subscribers get sunsubscribe
     * there (Redis 7.0 drops them as the slot goes). */
    uint8_t shard_lost[CLUSTER_SLOTS / 8];
    bool shard_lost_any;
} cluster_t;

/* Start-up (cluster-enabled yes): load nodes.conf or create myself, lock
 * the file; false (logged) stops the start. */
bool cluster_init(server_t *srv);
void cluster_free(server_t *srv);
/* Before sleeping: the state recomputed, nodes.conf written, when a
 * command asked for it (todo_update, todo_save). */
void cluster_before_sleep(server_t *srv);
/* myself's address from the cluster-announce-* settings (CONFIG SET
 * may have changed them). */
void cluster_refresh_myself(server_t *srv);
/* The cron: the state after the start-up wait. */
void cluster_cron(server_t *srv);

/* Routing: true when c's command (cmd, argv) may run here; otherwise the
 * redirection or refusal was replied.  Called by dispatch.c only with
 * cluster mode on. */
bool cluster_route_or_reply(client_t *c, command_t *cmd, bool write);

/* cluster_nodes.c: nodes and their slots. */
cluster_node_t *cluster_node_create(cluster_t *cl, const char *name, int flags);
cluster_node_t *cluster_lookup_node(cluster_t *cl, const char *name, size_t len);
void cluster_forget_node(cluster_t *cl, cluster_node_t *n);
void cluster_node_free(cluster_node_t *n);
bool cluster_node_has_slot(const cluster_node_t *n, int slot);
/* Assign slot to n (it must be free) / free it. */
void cluster_add_slot(cluster_t *cl, cluster_node_t *n, int slot);
void cluster_del_slot(cluster_t *cl, int slot);
/* Recount moving_slots: after any change of migrating_to/importing_from. */
void cluster_count_moving(cluster_t *cl);
/* Recompute state and size (after slot or node changes). */
void cluster_update_state(server_t *srv);
/* A new random name for n (or shard id). */
void cluster_random_name(char *name);
/* n's shard id is now id (40 hex digits; NULL: left as it is); a replica
 * of n (myself) takes it too, and nodes.conf is saved when one changed. */
void cluster_set_shard_id(cluster_t *cl, cluster_node_t *n, const char *id);
/* The endpoint redirections and CLUSTER SLOTS show for n, as
 * cluster-preferred-endpoint-type says; NULL for unknown-endpoint
 * (SLOTS shows a null, a redirection "?"). */
const char *cluster_node_endpoint(server_t *srv, const cluster_node_t *n);
/* The flags as CLUSTER NODES shows them ("myself,master"). */
sds cluster_cat_flags(sds s, int flags);
/* One node's CLUSTER NODES line (no newline); with slot_info, myself's
 * migrating and importing slots too; with aux, nodes.conf's aux fields
 * after the hostname (",shard-id=<id>", as Redis 7.2 writes them). */
sds cluster_cat_node_line(server_t *srv, sds s, const cluster_node_t *n, bool slot_info, bool aux);
/* The whole CLUSTER NODES text (one line per node, each ending "\n");
 * aux as above (nodes.conf). */
sds cluster_nodes_text(server_t *srv, bool aux);

/* cluster_config.c: nodes.conf.  Load: 1 loaded, 0 no file (start
 * afresh), -1 corrupt or unreadable (logged with the line). */
int cluster_config_load(server_t *srv);
/* Write nodes.conf (temp file, fsync, rename, the lock moved to the new
 * file); false with *err (static text) set. */
bool cluster_config_save(server_t *srv, const char **err);

#endif
