/* cluster.c: the cluster state of a node (cluster-enabled yes) and the
 * routing of commands by hash slot.
 *
 * State: the known nodes (myself, and those the bus taught us:
 * cluster_bus.c), the owner of each slot,
 * migrating/importing slots, epochs, and ok/fail.  The cluster is ok when
 * every slot has a node that is not failing (or, with
 * cluster-require-full-coverage no, always); a master waits a short moment
 * after start-up before going ok, as Redis does, so that a restarted node
 * learns of a newer configuration before it serves.
 *
 * Routing follows Redis 7.0's rules, in this order: the keys of the
 * command (all queued commands for EXEC) must share one slot (CROSSSLOT);
 * the slot must have a node (CLUSTERDOWN Hash slot not served); a cluster
 * that is down refuses (CLUSTERDOWN ...); a migrating slot sends missing
 * keys on with -ASK; an importing slot serves an ASKING client, but a
 * multi-key request with keys still missing gets -TRYAGAIN; a READONLY
 * client reads from a replica of the slot's master; any other node's slot
 * is -MOVED. */
#include "cluster.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "blocking.h"
#include "command_def.h"
#include "command_meta.h"
#include "keyspace.h"
#include "log.h"
#include "multi.h"
#include "pubsub.h"
#include "reply.h"
#include "util.h"

#define CLUSTER_WRITABLE_DELAY_MS 2000 /* a master's wait after start-up before going ok */

/* ------------------------------------------------------------- state */

void cluster_update_state(server_t *srv) {
    cluster_t *cl = srv->cluster;
    bool master = cl->myself->flags & CNODE_MASTER;
    /* Right after start-up a master stays down a moment (see the top). */
    if (master && cl->state == CLUSTER_FAIL && srv->mstime - cl->start_ms < CLUSTER_WRITABLE_DELAY_MS) return;
    int state = CLUSTER_OK;
    if (srv->cfg.cluster_require_full_coverage) {
        for (int s = 0; s < CLUSTER_SLOTS; s++) {
            if (!cl->slots[s] || (cl->slots[s]->flags & CNODE_FAIL)) {
                state = CLUSTER_FAIL;
                break;
            }
        }
    }
    int size = 0;
    for (int i = 0; i < cl->node_count; i++)
        if ((cl->nodes[i]->flags & CNODE_MASTER) && cl->nodes[i]->numslots) size++;
    cl->size = size;
    if (state != cl->state) {
        log_msg(LL_WARNING, "Cluster state changed: %s", state == CLUSTER_OK ? "ok" : "fail");
        cl->state = state;
    }
}

/* myself's address as the cluster-announce-* settings say (they may
 * change at run time: the cron applies them, as Redis's does). */
static void announce_myself(server_t *srv) {
    cluster_node_t *me = srv->cluster->myself;
    me->port = (int)(srv->cfg.cluster_announce_port ? srv->cfg.cluster_announce_port : srv->cfg.port);
    me->cport = (int)(srv->cfg.cluster_announce_bus_port ? srv->cfg.cluster_announce_bus_port
                      : srv->cfg.cluster_port            ? srv->cfg.cluster_port
                                                         : srv->cfg.port + 10000);
    if (srv->cfg.cluster_announce_ip[0]) snprintf(me->ip, sizeof(me->ip), "%s", srv->cfg.cluster_announce_ip);
    if (strcmp(me->hostname, srv->cfg.cluster_announce_hostname)) {
        sds_free(me->hostname);
        me->hostname = sds_new(srv->cfg.cluster_announce_hostname);
    }
}

void cluster_refresh_myself(server_t *srv) { announce_myself(srv); }

bool cluster_init(server_t *srv) {
    if (srv->cfg.port > 65535 - 10000 && !srv->cfg.cluster_port) {
        log_msg(LL_WARNING, "Redis port number too high. Cluster communication port is 10,000 port numbers higher "
                            "than your Redis port. Your Redis port number must be 55535 or less.");
        return false;
    }
    cluster_t *cl = zcalloc(sizeof(*cl));
    srv->cluster = cl;
    cl->lock_fd = -1;
    cl->state = CLUSTER_FAIL;
    cl->size = 1; /* as Redis starts it, until the first update after the start-up wait */
    cl->start_ms = srv->mstime;
    cl->config_path = server_path(srv, srv->cfg.cluster_config_file);
    int r = cluster_config_load(srv);
    if (r < 0) return false;
    cluster_count_moving(cl);
    if (r == 0) {
        cl->myself = cluster_node_create(cl, NULL, CNODE_MYSELF | CNODE_MASTER);
        log_msg(LL_NOTICE, "No cluster configuration found, I'm %s", cl->myself->name);
    }
    cl->myself->port = (int)(srv->cfg.cluster_announce_port ? srv->cfg.cluster_announce_port : srv->cfg.port);
    cl->myself->cport = (int)(srv->cfg.cluster_announce_bus_port ? srv->cfg.cluster_announce_bus_port
                              : srv->cfg.cluster_port            ? srv->cfg.cluster_port
                                                                 : srv->cfg.port + 10000);
    if (srv->cfg.cluster_announce_ip[0])
        snprintf(cl->myself->ip, sizeof(cl->myself->ip), "%s", srv->cfg.cluster_announce_ip);
    sds_free(cl->myself->hostname);
    cl->myself->hostname = sds_new(srv->cfg.cluster_announce_hostname);
    /* Save now: it creates and locks the file, so a second process
     * started on the same nodes.conf stops here. */
    const char *err;
    if (!cluster_config_save(srv, &err)) {
        log_msg(LL_WARNING, "%s", err);
        return false;
    }
    cluster_update_state(srv);
    return true;
}

void cluster_free(server_t *srv) {
    cluster_t *cl = srv->cluster;
    if (!cl) return;
    for (int i = 0; i < cl->node_count; i++) cluster_node_free(cl->nodes[i]);
    zfree(cl->nodes);
    if (cl->lock_fd >= 0) close(cl->lock_fd);
    sds_free(cl->config_path);
    zfree(cl);
    srv->cluster = NULL;
}

void cluster_cron(server_t *srv) {
    announce_myself(srv);
    cluster_update_state(srv);
}

/* A blocked client's keys (blocking.c asks): the error it gets when its
 * slot is now another node's (and not being imported here), or the
 * cluster went down for it, as Redis redirects blocked clients. */
static bool blocked_keys_moved(server_t *srv, robj **keys, int nkeys, char *err, size_t errlen) {
    cluster_t *cl = srv->cluster;
    for (int i = 0; i < nkeys; i++) {
        int slot = (int)crc16_key_slot(keys[i]->ptr, sds_len(keys[i]->ptr));
        cluster_node_t *n = cl->slots[slot];
        if (cl->state != CLUSTER_OK && !srv->cfg.cluster_allow_reads_when_down) {
            snprintf(err, errlen, "CLUSTERDOWN The cluster is down");
            return true;
        }
        if (!n) {
            snprintf(err, errlen, "CLUSTERDOWN Hash slot not served");
            return true;
        }
        bool readonly_replica = (cl->myself->flags & CNODE_REPLICA) && cl->myself->replicaof == n;
        if (n != cl->myself && !cl->importing_from[slot] && !readonly_replica) {
            const char *endpoint = cluster_node_endpoint(srv, n);
            snprintf(err, errlen, "MOVED %d %s:%d", slot, endpoint ? endpoint : "?", n->port);
            return true;
        }
    }
    return false;
}

/* Shard channels of the slots our shard lost: their subscribers get
 * sunsubscribe (cluster.h, shard_lost). */
static void drop_lost_shard_channels(server_t *srv) {
    cluster_t *cl = srv->cluster;
    cl->shard_lost_any = false;
    pubsub_shard_drop_slots(srv, cl->shard_lost);
    memset(cl->shard_lost, 0, sizeof(cl->shard_lost));
}

void cluster_before_sleep(server_t *srv) {
    cluster_t *cl = srv->cluster;
    if (cl->shard_lost_any) drop_lost_shard_channels(srv);
    if (cl->todo_update) {
        cl->todo_update = false;
        cluster_update_state(srv);
        blocking_redirect(srv, blocked_keys_moved); /* slots or the state changed */
    }
    if (cl->todo_save) {
        cl->todo_save = false;
        const char *err;
        if (!cluster_config_save(srv, &err)) log_msg(LL_WARNING, "%s", err);
    }
}

/* ---------------------------------------------------------- describing */

const char *cluster_node_endpoint(server_t *srv, const cluster_node_t *n) {
    switch (srv->cfg.cluster_preferred_endpoint_type) {
        case CLUSTER_ENDPOINT_HOSTNAME: return n->hostname[0] ? n->hostname : "?";
        case CLUSTER_ENDPOINT_UNKNOWN: return NULL;
        default: return n->ip;
    }
}

/* ------------------------------------------------------------ routing */

enum { ROUTE_HERE,
       ROUTE_CROSSSLOT,
       ROUTE_UNBOUND,
       ROUTE_DOWN,
       ROUTE_DOWN_RO,
       ROUTE_MOVED,
       ROUTE_ASK,
       ROUTE_TRYAGAIN };

typedef struct route {
    int slot;             /* -1 until a key is seen */
    robj *first_key;      /* the first key met */
    cluster_node_t *node; /* the slot's owner */
    bool migrating, importing, multiple_keys;
    int missing, existing; /* keys absent / present here, in a moving slot */
    bool write;            /* some command writes */
    bool shard_channels;   /* SSUBSCRIBE, SUNSUBSCRIBE, SPUBLISH: the "keys" are shard channels */
} route_t;

/* Redis 7.0's is_pubsubshard: channels are not keys of a moving slot (the
 * source serves them until SETSLOT NODE), a replica serves them without
 * READONLY, and cluster-allow-pubsubshard-when-down rules a down cluster. */
static bool is_shard_pubsub(const command_t *cmd) {
    if (!(cmd->flags & CMD_PUBSUB) || cmd->parent) return false;
    return !strcmp(cmd->name, "ssubscribe") || !strcmp(cmd->name, "sunsubscribe") || !strcmp(cmd->name, "spublish");
}

/* One key of the request into the route; false when it is in another
 * slot than the keys before it. */
static bool route_add_key(client_t *c, route_t *r, robj *key) {
    cluster_t *cl = c->srv->cluster;
    int slot = (int)crc16_key_slot(key->ptr, sds_len(key->ptr));
    if (r->slot < 0) {
        r->slot = slot;
        r->first_key = key;
        /* Our own 2 KB bitmap stays in cache; the 128 KB owner table
         * (a cache miss a request) is read only for others' slots. */
        const cluster_node_t *me = cl->myself;
        r->node = (me->slots[slot >> 3] & (1u << (slot & 7))) ? cl->myself : cl->slots[slot];
        if (r->node && cl->moving_slots) {
            if (cl->importing_from[slot]) r->importing = true;
            else if (r->node == cl->myself && cl->migrating_to[slot]) r->migrating = true;
        }
    } else if (slot != r->slot) {
        return false;
    } else if (sds_len(key->ptr) != sds_len(r->first_key->ptr) ||
               memcmp(key->ptr, r->first_key->ptr, sds_len(key->ptr))) {
        r->multiple_keys = true;
    }
    if ((r->migrating || r->importing) && r->node && !r->shard_channels) {
        /* A key past its TTL counts as missing (not deleted here: no DEL
         * to propagate), as in Redis 7.0.15, on the clock of now. */
        long long when = db_find(&c->srv->dbs[0], key->ptr) ? db_get_expire(&c->srv->dbs[0], key) : -2;
        if (when == -1 || when > util_mstime()) r->existing++;
        else r->missing++;
    }
    return true;
}

/* Add cmd's keys to the route; false at a key of another slot.  A
 * command whose keys sit at fixed positions (most) is read from its
 * first/last/step; the others through their key specs (command_meta.c). */
static bool route_add_command(client_t *c, route_t *r, command_t *cmd, robj **argv, int argc) {
    if (cmd->flags & CMD_WRITE) r->write = true;
    if (!(cmd->flags & CMD_MOVABLE_KEYS)) {
        if (cmd->first_key <= 0) return true;
        int last = cmd->last_key < 0 ? argc + cmd->last_key : cmd->last_key;
        for (int i = cmd->first_key; i <= last && i<argc; i += cmd->key_step> 0 ? cmd->key_step : 1)
            if (!route_add_key(c, r, argv[i])) return false;
        return true;
    }
    cmd_key_ref_t local[16], *refs = local;
    int n = cmd_meta_get_keys(cmd, argv, argc, local, 16);
    if (n > 16) {
        refs = zmalloc(sizeof(*refs) * (size_t)n);
        n = cmd_meta_get_keys(cmd, argv, argc, refs, n);
    }
    bool ok = true;
    for (int i = 0; i < n && ok; i++) ok = route_add_key(c, r, argv[refs[i].pos]);
    if (refs != local) zfree(refs);
    return ok;
}

static bool is_exec(const command_t *cmd) { return !strcmp(cmd->name, "exec"); }

/* Which node serves c's request: Redis 7.0's getNodeByQuery (see the top). */
static int route(client_t *c, command_t *cmd, bool write, cluster_node_t **to, int *slot) {
    cluster_t *cl = c->srv->cluster;
    route_t r = {.slot = -1, .shard_channels = is_shard_pubsub(cmd), .write = write};
    if (is_exec(cmd)) {
        if (!c->mstate) return ROUTE_HERE; /* EXEC without MULTI fails by itself */
        command_t *q;
        robj **argv;
        int argc;
        for (int i = 0; multi_queued_at(c, i, &q, &argv, &argc); i++)
            if (!route_add_command(c, &r, q, argv, argc)) return ROUTE_CROSSSLOT;
    } else if (!route_add_command(c, &r, cmd, c->argv, c->argc)) {
        return ROUTE_CROSSSLOT;
    }
    if (r.slot < 0) return ROUTE_HERE; /* no keys: any node serves it */
    *slot = r.slot;
    if (!r.node) return ROUTE_UNBOUND;
    if (cl->state != CLUSTER_OK) {
        if (r.shard_channels) {
            if (!c->srv->cfg.cluster_allow_pubsubshard_when_down) return ROUTE_DOWN;
        } else if (!c->srv->cfg.cluster_allow_reads_when_down) return ROUTE_DOWN;
        else if (r.write) return ROUTE_DOWN_RO;
    }
    /* MIGRATE moves the keys of a migrating slot: it runs here. */
    if ((r.migrating || r.importing) && !strcmp(cmd->name, "migrate")) return ROUTE_HERE;
    /* Keys of a migrating slot not here: ASK the target, unless some are
     * still here (then neither node has them all: try again later). */
    if (r.migrating && r.missing) {
        if (r.existing) return ROUTE_TRYAGAIN;
        *to = cl->migrating_to[r.slot];
        return ROUTE_ASK;
    }
    if (r.importing && ((c->cluster_flags & CLUSTER_CLIENT_ASKING) || (cmd->flags & CMD_ASKING))) {
        if (r.multiple_keys && r.missing) return ROUTE_TRYAGAIN;
        return ROUTE_HERE;
    }
    if (((c->cluster_flags & CLUSTER_CLIENT_READONLY) || r.shard_channels) && !r.write &&
        (cl->myself->flags & CNODE_REPLICA) &&
        cl->myself->replicaof == r.node)
        return ROUTE_HERE;
    if (r.node != cl->myself) {
        *to = r.node;
        return ROUTE_MOVED;
    }
    return ROUTE_HERE;
}

bool cluster_route_or_reply(client_t *c, command_t *cmd, bool write) {
    /* Our master's stream and the AOF are applied as they come. */
    if (c->flags & (CLIENT_MASTER | CLIENT_AOF_LOADER)) return true;
    cluster_node_t *to = NULL;
    int slot = 0;
    int r = route(c, cmd, write, &to, &slot);
    if (r == ROUTE_HERE) return true;
    if (is_exec(cmd)) multi_discard(c); /* as Redis: the transaction goes, the redirection is the reply */
    else multi_flag_error(c);
    cmd->rejected_calls++;
    switch (r) {
        case ROUTE_CROSSSLOT: reply_error(c, "CROSSSLOT Keys in request don't hash to the same slot"); break;
        case ROUTE_UNBOUND: reply_error(c, "CLUSTERDOWN Hash slot not served"); break;
        case ROUTE_DOWN: reply_error(c, "CLUSTERDOWN The cluster is down"); break;
        case ROUTE_DOWN_RO: reply_error(c, "CLUSTERDOWN The cluster is down and only accepts read commands"); break;
        case ROUTE_TRYAGAIN: reply_error(c, "TRYAGAIN Multiple keys request during rehashing of slot"); break;
        case ROUTE_MOVED:
        case ROUTE_ASK:
            reply_error(c, "%s %d %s:%d", r == ROUTE_MOVED ? "MOVED" : "ASK", slot, cluster_node_endpoint(c->srv, to),
                        to->port);
            break;
    }
    return false;
}
