/* bench_cluster.h: what --cluster needs to know about a Redis Cluster.
 *
 * bench_cluster_load() asks the node given with -h/-p for CLUSTER NODES
 * (as redis-benchmark does: it also lists masters that own no slot yet, the
 * targets of an ASK) and keeps the masters' addresses and the slot -> master
 * table.  bench_key_slot() is Redis Cluster's key hash (CRC16-XMODEM of the
 * key or of its {hash tag}, modulo 16384); bench_request_slot() finds the
 * key of a request the workload built.  bench_cluster_redirect() parses a
 * -MOVED / -ASK error.  Loaded once by main before the tests; the workers
 * copy the slot table and update their copy on -MOVED (bench_worker.c). */
#ifndef RL_BENCH_CLUSTER_H
#define RL_BENCH_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

#include "bench_opts.h"

#define BENCH_CLUSTER_SLOTS 16384
#define BENCH_CLUSTER_MAX_NODES 64
#define BENCH_NO_NODE 0xff

typedef struct bench_cnode {
    char host[256];
    int port;
} bench_cnode_t;

typedef struct bench_cluster {
    int nnodes; /* masters, in CLUSTER NODES order */
    bench_cnode_t nodes[BENCH_CLUSTER_MAX_NODES];
    uint8_t slot_node[BENCH_CLUSTER_SLOTS]; /* index in nodes, BENCH_NO_NODE if unowned */
} bench_cluster_t;

uint16_t bench_crc16(const char *buf, size_t len);
unsigned bench_key_slot(const char *key, size_t len);
/* Slot of the first key (argument 1) of a multibulk request, or -1 when the
 * request has no key (PING, an inline command). */
int bench_request_slot(const char *req, size_t len);

/* Fills cl from o's node; 0, or -1 with a message in err. */
int bench_cluster_load(const bench_opts_t *o, bench_cluster_t *cl, char *err, size_t errlen);
/* Index of the master at host:port, or -1. */
int bench_cluster_find(const bench_cluster_t *cl, const char *host, size_t hostlen, int port);

/* An error reply "MOVED <slot> <host>:<port>" or "ASK ...": returns 1 with
 * *ask, *slot and *node (index in cl, -1 when the address is not a known
 * master) filled, 0 for any other error. */
int bench_cluster_redirect(const bench_cluster_t *cl, const char *e, size_t len, int *ask,
                           unsigned *slot, int *node);

#endif
