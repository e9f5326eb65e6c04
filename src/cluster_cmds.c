/* cluster_cmds.c: the CLUSTER command (Redis 7.0's subcommands, replies in
 * its formats), READONLY, READWRITE and ASKING.
 *
 * With cluster-enabled no, CLUSTER answers "This instance has cluster
 * support disabled" as Redis does; READONLY/READWRITE too.  The state
 * itself is cluster.c's (cluster.h); a subcommand that changes it asks
 * cluster.c to recompute the state and write nodes.conf before the reply
 * leaves (todo_update, todo_save).  MEET, FORGET, FAILOVER and the
 * failure reports go through the bus (cluster_bus.h); REPLICATE starts
 * replication's own PSYNC link (repl_state.h). */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cluster.h"
#include "cluster_bus.h"
#include "commands.h"
#include "keyspace.h"
#include "reply.h"
#include "repl_state.h"
#include "util.h"

#define ERR_DISABLED "This instance has cluster support disabled"

static cluster_t *cluster_or_reply(client_t *c) {
    if (!c->srv->cluster) reply_error(c, ERR_DISABLED);
    else cluster_refresh_myself(c->srv); /* a CONFIG SET of an announce-* shows at once */
    return c->srv->cluster;
}

/* Every change of the slots or nodes ends here before the reply. */
static void changed(cluster_t *cl) {
    cl->todo_update = cl->todo_save = true;
    cluster_count_moving(cl);
}

/* A slot argument: "ERR Invalid or out of range slot" as Redis says. */
static bool slot_or_reply(client_t *c, robj *o, int *slot) {
    long long v;
    if (!util_str2ll(o->ptr, sds_len(o->ptr), &v) || v < 0 || v >= CLUSTER_SLOTS) {
        reply_error(c, "Invalid or out of range slot");
        return false;
    }
    *slot = (int)v;
    return true;
}

static cluster_node_t *node_arg(cluster_t *cl, robj *o) { return cluster_lookup_node(cl, o->ptr, sds_len(o->ptr)); }

/* The node argv[i] names, or NULL with Redis's "Unknown node" sent. */
static cluster_node_t *node_arg_or_reply(client_t *c, cluster_t *cl, int i) {
    cluster_node_t *n = node_arg(cl, c->argv[i]);
    if (!n) reply_error(c, "Unknown node %s", (char *)c->argv[i]->ptr);
    return n;
}

/* SETSLOT MIGRATING/IMPORTING's node: a known master, or NULL with
 * Redis's error sent. */
static cluster_node_t *setslot_target_or_reply(client_t *c, cluster_t *cl) {
    cluster_node_t *n = node_arg(cl, c->argv[4]);
    if (!n) reply_error(c, "I don't know about node %s", (char *)c->argv[4]->ptr);
    else if (n->flags & CNODE_REPLICA) reply_error(c, "Target node is not a master");
    return n && !(n->flags & CNODE_REPLICA) ? n : NULL;
}

/* ---------------------------------------------------------------- INFO */

static void cmd_cluster_info(client_t *c) {
    cluster_t *cl = cluster_or_reply(c);
    if (!cl) return;
    int assigned = 0, ok = 0, pfail = 0, fail = 0;
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        cluster_node_t *n = cl->slots[s];
        if (!n) continue;
        assigned++;
        if (n->flags & CNODE_FAIL) fail++;
        else if (n->flags & CNODE_PFAIL) pfail++;
        else ok++;
    }
    uint64_t my_epoch = (cl->myself->flags & CNODE_REPLICA) && cl->myself->replicaof
                            ? cl->myself->replicaof->config_epoch
                            : cl->myself->config_epoch;
    sds s = sds_catprintf(sds_empty(),
                          "cluster_state:%s\r\ncluster_slots_assigned:%d\r\ncluster_slots_ok:%d\r\n"
                          "cluster_slots_pfail:%d\r\ncluster_slots_fail:%d\r\ncluster_known_nodes:%d\r\n"
                          "cluster_size:%d\r\ncluster_current_epoch:%llu\r\ncluster_my_epoch:%llu\r\n",
                          cl->state == CLUSTER_OK ? "ok" : "fail", assigned, ok, pfail, fail, cl->node_count, cl->size,
                          (unsigned long long)cl->current_epoch, (unsigned long long)my_epoch);
    /* Per message type, only the types seen, as Redis lists them. */
    static const char *const types[11] = {"ping", "pong", "meet", "fail", "publish", "auth-req",
                                          "auth-ack", "update", "mfstart", "module", "publishshard"};
    for (int t = 0; t < 11; t++)
        if (cl->stats_sent_type[t])
            s = sds_catprintf(s, "cluster_stats_messages_%s_sent:%lld\r\n", types[t], cl->stats_sent_type[t]);
    s = sds_catprintf(s, "cluster_stats_messages_sent:%lld\r\n", cl->stats_sent);
    for (int t = 0; t < 11; t++)
        if (cl->stats_received_type[t])
            s = sds_catprintf(s, "cluster_stats_messages_%s_received:%lld\r\n", types[t],
                              cl->stats_received_type[t]);
    s = sds_catprintf(s, "cluster_stats_messages_received:%lld\r\ntotal_cluster_links_buffer_limit_exceeded:%lld\r\n",
                      cl->stats_received, cluster_bus_links_limit_exceeded(c->srv));
    reply_verbatim(c, s, sds_len(s), "txt");
    sds_free(s);
}

static void cmd_cluster_myid(client_t *c) {
    cluster_t *cl = cluster_or_reply(c);
    if (cl) reply_bulk(c, cl->myself->name, CLUSTER_NAMELEN);
}

/* Redis 7.2: the shard id (cluster.h). */
static void cmd_cluster_myshardid(client_t *c) {
    cluster_t *cl = cluster_or_reply(c);
    if (cl) reply_bulk(c, cl->myself->shard_id, CLUSTER_NAMELEN);
}

static void cmd_cluster_nodes(client_t *c) {
    if (!cluster_or_reply(c)) return;
    sds s = cluster_nodes_text(c->srv, false);
    reply_verbatim(c, s, sds_len(s), "txt");
    sds_free(s);
}

/* ------------------------------------------------------ SLOTS, SHARDS */

/* One node of a CLUSTER SLOTS range: endpoint, port, id, metadata. */
static void reply_slots_node(client_t *c, const cluster_node_t *n) {
    /* The metadata: what the endpoint is not (the ip, the hostname). */
    int type = c->srv->cfg.cluster_preferred_endpoint_type;
    bool ip = type != CLUSTER_ENDPOINT_IP, host = type != CLUSTER_ENDPOINT_HOSTNAME && n->hostname[0];
    reply_array_len(c, 4);
    reply_bulk_cstr(c, cluster_node_endpoint(c->srv, n)); /* NULL: a null */
    reply_ll(c, n->port);
    reply_bulk(c, n->name, CLUSTER_NAMELEN);
    reply_map_len(c, ip + host);
    if (ip) {
        reply_bulk_cstr(c, "ip");
        reply_bulk_cstr(c, n->ip);
    }
    if (host) {
        reply_bulk_cstr(c, "hostname");
        reply_bulk_cstr(c, n->hostname);
    }
}

static int replicas_of(cluster_t *cl, const cluster_node_t *m, cluster_node_t **out) {
    int n = 0;
    for (int i = 0; i < cl->node_count; i++)
        if (cl->nodes[i]->replicaof == m && (cl->nodes[i]->flags & CNODE_REPLICA)) {
            if (out) out[n] = cl->nodes[i];
            n++;
        }
    return n;
}

static void cmd_cluster_slots(client_t *c) {
    cluster_t *cl = cluster_or_reply(c);
    if (!cl) return;
    void *len = reply_deferred_len(c);
    long ranges = 0;
    for (int start = 0; start < CLUSTER_SLOTS;) {
        cluster_node_t *n = cl->slots[start];
        int end = start;
        while (end + 1 < CLUSTER_SLOTS && cl->slots[end + 1] == n) end++;
        if (n) {
            cluster_node_t **reps = zmalloc(sizeof(*reps) * (size_t)(cl->node_count));
            int nr = replicas_of(cl, n, reps), shown = 0;
            /* Redis 7.0 lists the replicas not failing that have some data
             * (an offset above 0): one still in its first sync is left out */
            for (int i = 0; i < nr; i++) {
                long long off = (reps[i]->flags & CNODE_MYSELF) ? cluster_bus_my_offset(c->srv) : reps[i]->repl_offset;
                if (!(reps[i]->flags & CNODE_FAIL) && off != 0) reps[shown++] = reps[i];
            }
            reply_array_len(c, 3 + shown);
            reply_ll(c, start);
            reply_ll(c, end);
            reply_slots_node(c, n);
            for (int i = 0; i < shown; i++) reply_slots_node(c, reps[i]);
            zfree(reps);
            ranges++;
        }
        start = end + 1;
    }
    reply_set_deferred_array_len(c, len, ranges);
}

static long long node_offset(server_t *srv, const cluster_node_t *n) {
    return (n->flags & CNODE_MYSELF) ? cluster_bus_my_offset(srv) : n->repl_offset;
}

static void reply_shard_node(client_t *c, const cluster_node_t *n) {
    bool host = n->hostname[0];
    reply_map_len(c, 7 + host);
    reply_bulk_cstr(c, "id");
    reply_bulk(c, n->name, CLUSTER_NAMELEN);
    reply_bulk_cstr(c, "port");
    reply_ll(c, n->port);
    reply_bulk_cstr(c, "ip");
    reply_bulk_cstr(c, n->ip);
    reply_bulk_cstr(c, "endpoint");
    reply_bulk_cstr(c, cluster_node_endpoint(c->srv, n));
    if (host) {
        reply_bulk_cstr(c, "hostname");
        reply_bulk_cstr(c, n->hostname);
    }
    reply_bulk_cstr(c, "role");
    reply_bulk_cstr(c, (n->flags & CNODE_REPLICA) ? "replica" : "master");
    reply_bulk_cstr(c, "replication-offset");
    long long off = node_offset(c->srv, n);
    reply_ll(c, off);
    /* a replica without data yet (offset 0: in its full sync) is loading */
    reply_bulk_cstr(c, "health");
    reply_bulk_cstr(c, (n->flags & CNODE_FAIL)                  ? "fail"
                       : (n->flags & CNODE_REPLICA) && off == 0 ? "loading"
                                                                : "online");
}

/* One shard per master: its slot ranges and its nodes. */
static void cmd_cluster_shards(client_t *c) {
    cluster_t *cl = cluster_or_reply(c);
    if (!cl) return;
    void *len = reply_deferred_len(c);
    long shards = 0;
    for (int i = 0; i < cl->node_count; i++) {
        cluster_node_t *m = cl->nodes[i];
        if (!(m->flags & CNODE_MASTER) || (m->flags & CNODE_HANDSHAKE)) continue;
        shards++;
        reply_map_len(c, 2);
        reply_bulk_cstr(c, "slots");
        void *slen = reply_deferred_len(c);
        long bounds = 0;
        for (int s = 0; s < CLUSTER_SLOTS; s++) {
            if (!cluster_node_has_slot(m, s)) continue;
            int e = s;
            while (e + 1 < CLUSTER_SLOTS && cluster_node_has_slot(m, e + 1)) e++;
            reply_ll(c, s);
            reply_ll(c, e);
            bounds += 2;
            s = e;
        }
        reply_set_deferred_array_len(c, slen, bounds);
        reply_bulk_cstr(c, "nodes");
        cluster_node_t **reps = zmalloc(sizeof(*reps) * (size_t)cl->node_count);
        int nr = replicas_of(cl, m, reps);
        reply_array_len(c, 1 + nr);
        reply_shard_node(c, m);
        for (int r = 0; r < nr; r++) reply_shard_node(c, reps[r]);
        zfree(reps);
    }
    reply_set_deferred_array_len(c, len, shards);
}

static void cmd_cluster_links(client_t *c) {
    if (cluster_or_reply(c)) cluster_bus_reply_links(c);
}

/* ----------------------------------------------------------- key slots */

static void cmd_cluster_keyslot(client_t *c) {
    if (!cluster_or_reply(c)) return;
    sds k = c->argv[2]->ptr;
    reply_ll(c, crc16_key_slot(k, sds_len(k)));
}

static void cmd_cluster_countkeysinslot(client_t *c) {
    if (!cluster_or_reply(c)) return;
    long long slot;
    if (!cmd_get_ll_or_reply(c, c->argv[2], &slot, NULL)) return;
    if (slot < 0 || slot >= CLUSTER_SLOTS) {
        reply_error(c, "Invalid slot");
        return;
    }
    reply_ll(c, (long long)db_slot_size(&c->srv->dbs[0], (unsigned)slot));
}

static void cmd_cluster_getkeysinslot(client_t *c) {
    if (!cluster_or_reply(c)) return;
    long long slot, max;
    if (!cmd_get_ll_or_reply(c, c->argv[2], &slot, NULL) || !cmd_get_ll_or_reply(c, c->argv[3], &max, NULL)) return;
    if (slot < 0 || slot >= CLUSTER_SLOTS || max < 0) {
        reply_error(c, "Invalid slot or number of keys");
        return;
    }
    db_t *db = &c->srv->dbs[0];
    size_t have = db_slot_size(db, (unsigned)slot);
    if ((size_t)max > have) max = (long long)have;
    sds *keys = zmalloc(sizeof(sds) * (size_t)(max ? max : 1));
    size_t n = db_slot_keys(db, (unsigned)slot, keys, (size_t)max);
    reply_array_len(c, (long)n);
    for (size_t i = 0; i < n; i++) reply_bulk_sds_take(c, keys[i]);
    zfree(keys);
}

/* --------------------------------------------------------- slot owners */

/* ADDSLOTS/DELSLOTS and their RANGE forms: the slots are checked first,
 * then all assigned or freed. */
static void slots_change(client_t *c, bool add, bool ranges) {
    cluster_t *cl = cluster_or_reply(c);
    if (!cl) return;
    if (ranges && c->argc % 2 == 1) {
        reply_error_arity(c);
        return;
    }
    uint8_t *seen = zcalloc(CLUSTER_SLOTS);
    bool ok = true;
    for (int i = 2; ok && i < c->argc; i += ranges ? 2 : 1) {
        int start, end;
        if (!slot_or_reply(c, c->argv[i], &start)) {
            ok = false;
            break;
        }
        end = start;
        if (ranges) {
            if (!slot_or_reply(c, c->argv[i + 1], &end)) {
                ok = false;
                break;
            }
            if (start > end) {
                reply_error(c, "start slot number %d is greater than end slot number %d", start, end);
                ok = false;
                break;
            }
        }
        for (int s = start; ok && s <= end; s++) {
            if (add && cl->slots[s]) {
                reply_error(c, "Slot %d is already busy", s);
                ok = false;
            } else if (!add && !cl->slots[s]) {
                reply_error(c, "Slot %d is already unassigned", s);
                ok = false;
            } else if (seen[s]++) {
                reply_error(c, "Slot %d specified multiple times", s);
                ok = false;
            }
        }
    }
    if (ok) {
        for (int s = 0; s < CLUSTER_SLOTS; s++) {
            if (!seen[s]) continue;
            if (add) {
                cl->importing_from[s] = NULL; /* as Redis: an added slot is no longer imported */
                cluster_add_slot(cl, cl->myself, s);
            } else {
                cluster_del_slot(cl, s);
            }
        }
        changed(cl);
        reply_ok(c);
    }
    zfree(seen);
}

static void cmd_cluster_addslots(client_t *c) { slots_change(c, true, false); }
static void cmd_cluster_addslotsrange(client_t *c) { slots_change(c, true, true); }
static void cmd_cluster_delslots(client_t *c) { slots_change(c, false, false); }
static void cmd_cluster_delslotsrange(client_t *c) { slots_change(c, false, true); }

static void cmd_cluster_flushslots(client_t *c) {
    cluster_t *cl = cluster_or_reply(c);
    if (!cl) return;
    if (db_size(&c->srv->dbs[0]) != 0) {
        reply_error(c, "DB must be empty to perform CLUSTER FLUSHSLOTS.");
        return;
    }
    for (int s = 0; s < CLUSTER_SLOTS; s++)
        if (cl->slots[s] == cl->myself) cluster_del_slot(cl, s);
    changed(cl);
    reply_ok(c);
}

/* SETSLOT <slot> IMPORTING|MIGRATING|NODE <id> | STABLE */
static void cmd_cluster_setslot(client_t *c) {
    cluster_t *cl = cluster_or_reply(c);
    if (!cl) return;
    if (cl->myself->flags & CNODE_REPLICA) {
        reply_error(c, "Please use SETSLOT only with masters.");
        return;
    }
    int slot;
    if (!slot_or_reply(c, c->argv[2], &slot)) return;
    const char *action = c->argv[3]->ptr;
    bool has_node = c->argc == 5, stable = c->argc == 4 && !strcasecmp(action, "stable");
    if (!stable && !(has_node && (!strcasecmp(action, "migrating") || !strcasecmp(action, "importing") ||
                                  !strcasecmp(action, "node")))) {
        reply_error(c, "Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP");
        return;
    }
    bool announce = false;
    if (stable) {
        cl->migrating_to[slot] = cl->importing_from[slot] = NULL;
    } else if (!strcasecmp(action, "migrating")) {
        if (cl->slots[slot] != cl->myself) {
            reply_error(c, "I'm not the owner of hash slot %u", slot);
            return;
        }
        cluster_node_t *n = setslot_target_or_reply(c, cl);
        if (!n) return;
        cl->migrating_to[slot] = n;
    } else if (!strcasecmp(action, "importing")) {
        if (cl->slots[slot] == cl->myself) {
            reply_error(c, "I'm already the owner of hash slot %u", slot);
            return;
        }
        cluster_node_t *n = setslot_target_or_reply(c, cl);
        if (!n) return;
        cl->importing_from[slot] = n;
    } else {
        cluster_node_t *n = node_arg_or_reply(c, cl, 4);
        if (!n) return;
        if (n->flags & CNODE_REPLICA) {
            reply_error(c, "Target node is not a master");
            return;
        }
        if (cl->slots[slot] == cl->myself && n != cl->myself && db_slot_size(&c->srv->dbs[0], (unsigned)slot)) {
            reply_error(c,
                        "Can't assign hashslot %d to a different node while I still hold keys for this hash slot.",
                        slot);
            return;
        }
        /* The last key left: a migrating slot is done. */
        if (db_slot_size(&c->srv->dbs[0], (unsigned)slot) == 0 && cl->migrating_to[slot])
            cl->migrating_to[slot] = NULL;
        /* Imported to us: a new config epoch, as Redis bumps it without
         * consensus, so the change wins over the old owner's claim. */
        if (n == cl->myself && cl->importing_from[slot]) {
            cl->importing_from[slot] = NULL;
            if (cl->myself->config_epoch == 0 || cl->myself->config_epoch != cl->current_epoch) {
                cl->current_epoch++;
                cl->myself->config_epoch = cl->current_epoch;
            }
            announce = true;
        }
        bool was_mine = cl->slots[slot] == cl->myself;
        cluster_del_slot(cl, slot);
        cluster_add_slot(cl, n, slot);
        /* A master that gave its last slot away serves the new owner as a
         * replica (Redis 7.0, unless cluster-allow-replica-migration no). */
        if (was_mine && n != cl->myself && cl->myself->numslots == 0 && c->srv->cfg.cluster_allow_replica_migration)
            cluster_bus_follow(c->srv, n);
    }
    changed(cl);
    /* An import ended here: every node learns it now, not at the next
     * gossip round (clients refresh their slot maps from any node). */
    if (announce) cluster_bus_broadcast_pong(c->srv);
    reply_ok(c);
}

/* --------------------------------------------------------------- nodes */

static void cmd_cluster_meet(client_t *c) {
    cluster_t *cl = cluster_or_reply(c);
    if (!cl) return;
    long long port, cport = 0;
    if (!util_str2ll(c->argv[3]->ptr, sds_len(c->argv[3]->ptr), &port) || port < 0 || port > 65535) {
        reply_error(c, "Invalid TCP base port specified: %s", (char *)c->argv[3]->ptr);
        return;
    }
    if (c->argc == 5 &&
        (!util_str2ll(c->argv[4]->ptr, sds_len(c->argv[4]->ptr), &cport) || cport < 0 || cport > 65535)) {
        reply_error(c, "Invalid TCP bus port specified: %s", (char *)c->argv[4]->ptr);
        return;
    }
    if (c->argc == 4) cport = port + 10000;
    if (!cluster_bus_meet(c->srv, c->argv[2]->ptr, (int)port, (int)cport)) {
        reply_error(c, "Invalid node address specified: %s:%s", (char *)c->argv[2]->ptr, (char *)c->argv[3]->ptr);
        return;
    }
    reply_ok(c);
}

static void cmd_cluster_forget(client_t *c) {
    cluster_t *cl = cluster_or_reply(c);
    if (!cl) return;
    cluster_node_t *n = node_arg_or_reply(c, cl, 2);
    if (!n) return;
    if (n == cl->myself) {
        reply_error(c, "I tried hard but I can't forget myself...");
        return;
    }
    if ((cl->myself->flags & CNODE_REPLICA) && cl->myself->replicaof == n) {
        reply_error(c, "Can't forget my master!");
        return;
    }
    cluster_bus_forget(c->srv, n->name);
    cluster_bus_node_gone(c->srv, n);
    cluster_forget_node(cl, n);
    changed(cl);
    reply_ok(c);
}

static void cmd_cluster_replicate(client_t *c) {
    cluster_t *cl = cluster_or_reply(c);
    if (!cl) return;
    cluster_node_t *n = node_arg_or_reply(c, cl, 2);
    if (!n) return;
    if (n == cl->myself) {
        reply_error(c, "Can't replicate myself");
        return;
    }
    if (n->flags & CNODE_REPLICA) {
        reply_error(c, "I can only replicate a master, not a replica.");
        return;
    }
    if ((cl->myself->flags & CNODE_MASTER) && (cl->myself->numslots || db_size(&c->srv->dbs[0]))) {
        reply_error(c, "To set a master the node must be empty and without assigned slots.");
        return;
    }
    /* Our role changes now; the PSYNC link to the master is replication's
     * own (repl_replica.c), and our next PINGs tell the cluster. */
    cl->myself->flags = (cl->myself->flags & ~(CNODE_MASTER | CNODE_MIGRATE_TO)) | CNODE_REPLICA;
    cl->myself->replicaof = n;
    cluster_set_shard_id(cl, cl->myself, n->shard_id);
    for (int s = 0; s < CLUSTER_SLOTS; s++) cl->migrating_to[s] = cl->importing_from[s] = NULL;
    replica_set_master(c->srv, n->ip, n->port);
    changed(cl);
    reply_ok(c);
}

static void cmd_cluster_replicas(client_t *c) {
    cluster_t *cl = cluster_or_reply(c);
    if (!cl) return;
    cluster_node_t *n = node_arg_or_reply(c, cl, 2);
    if (!n) return;
    if (n->flags & CNODE_REPLICA) {
        reply_error(c, "The specified node is not a master");
        return;
    }
    cluster_node_t **reps = zmalloc(sizeof(*reps) * (size_t)cl->node_count);
    int nr = replicas_of(cl, n, reps);
    reply_array_len(c, nr);
    for (int i = 0; i < nr; i++) {
        sds line = cluster_cat_node_line(c->srv, sds_empty(), reps[i], false, false);
        reply_bulk_sds_take(c, line);
    }
    zfree(reps);
}

static void cmd_cluster_count_failure_reports(client_t *c) {
    cluster_t *cl = cluster_or_reply(c);
    if (!cl) return;
    cluster_node_t *n = node_arg_or_reply(c, cl, 2);
    if (!n) return;
    reply_ll(c, cluster_bus_failure_reports(c->srv, n));
}

static void cmd_cluster_failover(client_t *c) {
    cluster_t *cl = cluster_or_reply(c);
    if (!cl) return;
    if (c->argc == 3 && strcasecmp(c->argv[2]->ptr, "force") && strcasecmp(c->argv[2]->ptr, "takeover")) {
        reply_error(c, "syntax error");
        return;
    }
    if (c->argc > 3) {
        reply_error(c, "syntax error");
        return;
    }
    if (!(cl->myself->flags & CNODE_REPLICA)) {
        reply_error(c, "You should send CLUSTER FAILOVER to a replica");
        return;
    }
    if (!cl->myself->replicaof) {
        reply_error(c, "I'm a replica but my master is unknown to me");
        return;
    }
    bool takeover = c->argc == 3 && !strcasecmp(c->argv[2]->ptr, "takeover");
    bool force = c->argc == 3 && !strcasecmp(c->argv[2]->ptr, "force");
    if (!force && !takeover && ((cl->myself->replicaof->flags & CNODE_FAIL) || !cl->myself->replicaof->link)) {
        reply_error(c, "Master is down or failed, please use CLUSTER FAILOVER FORCE");
        return;
    }
    cluster_bus_failover(c->srv, takeover ? CLUSTER_FAILOVER_TAKEOVER
                                 : force  ? CLUSTER_FAILOVER_FORCE
                                          : CLUSTER_FAILOVER_DEFAULT);
    reply_ok(c);
}

/* -------------------------------------------------------------- epochs */

static void cmd_cluster_bumpepoch(client_t *c) {
    cluster_t *cl = cluster_or_reply(c);
    if (!cl) return;
    uint64_t max = cl->current_epoch;
    for (int i = 0; i < cl->node_count; i++)
        if (cl->nodes[i]->config_epoch > max) max = cl->nodes[i]->config_epoch;
    bool bumped = cl->myself->config_epoch == 0 || cl->myself->config_epoch != max;
    if (bumped) {
        cl->current_epoch++;
        cl->myself->config_epoch = cl->current_epoch;
        changed(cl);
    }
    char buf[64];
    snprintf(buf, sizeof(buf), "%s %llu", bumped ? "BUMPED" : "STILL", (unsigned long long)cl->myself->config_epoch);
    reply_simple(c, buf);
}

static void cmd_cluster_set_config_epoch(client_t *c) {
    cluster_t *cl = cluster_or_reply(c);
    if (!cl) return;
    long long epoch;
    if (!cmd_get_ll_or_reply(c, c->argv[2], &epoch, NULL)) return;
    if (epoch < 0) {
        reply_error(c, "Invalid config epoch specified: %lld", epoch);
        return;
    }
    if (cl->node_count > 1) {
        reply_error(c, "The user can assign a config epoch only when the node does not know any other node.");
        return;
    }
    if (cl->myself->config_epoch != 0) {
        reply_error(c, "Node config epoch is already non-zero");
        return;
    }
    cl->myself->config_epoch = (uint64_t)epoch;
    if (cl->current_epoch < (uint64_t)epoch) cl->current_epoch = (uint64_t)epoch;
    changed(cl);
    reply_ok(c);
}

/* ------------------------------------------------------ reset and save */

static void cmd_cluster_reset(client_t *c) {
    cluster_t *cl = cluster_or_reply(c);
    if (!cl) return;
    bool hard = false;
    if (c->argc == 3) {
        if (!strcasecmp(c->argv[2]->ptr, "hard")) hard = true;
        else if (strcasecmp(c->argv[2]->ptr, "soft")) {
            reply_error(c, "syntax error");
            return;
        }
    } else if (c->argc > 3) {
        reply_error(c, "syntax error");
        return;
    }
    if ((cl->myself->flags & CNODE_MASTER) && db_size(&c->srv->dbs[0]) != 0) {
        reply_error(c, "CLUSTER RESET can't be called with master nodes containing keys");
        return;
    }
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        cluster_del_slot(cl, s);
        cl->migrating_to[s] = cl->importing_from[s] = NULL;
    }
    while (cl->node_count > 1) {
        cluster_node_t *n = cl->nodes[0] == cl->myself ? cl->nodes[1] : cl->nodes[0];
        cluster_bus_node_gone(c->srv, n);
        cluster_forget_node(cl, n);
    }
    /* A replica turns into an empty master, as Redis: no longer
     * replicating, its copy of the old master's data gone. */
    if (cl->myself->flags & CNODE_REPLICA) {
        replica_unset_master(c->srv);
        for (int i = 0; i < c->srv->dbnum; i++) db_empty(&c->srv->dbs[i]);
    }
    cl->myself->flags = CNODE_MYSELF | CNODE_MASTER;
    cl->myself->replicaof = NULL;
    if (hard) {
        cl->current_epoch = cl->last_vote_epoch = 0;
        cl->myself->config_epoch = 0;
        cluster_random_name(cl->myself->name);
        cluster_random_name(cl->myself->shard_id);
    }
    changed(cl);
    reply_ok(c);
}

static void cmd_cluster_saveconfig(client_t *c) {
    cluster_t *cl = cluster_or_reply(c);
    if (!cl) return;
    const char *err;
    if (cluster_config_save(c->srv, &err)) reply_ok(c);
    else reply_error(c, "error saving the cluster node config: %s", err);
}

static void cmd_cluster_help(client_t *c) {
    static const char *help[] = {
        "ADDSLOTS <slot> [<slot> ...]",
        "    Assign slots to current node.",
        "ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
        "    Assign slots which are between <start-slot> and <end-slot> to current node.",
        "BUMPEPOCH",
        "    Advance the cluster config epoch.",
        "COUNT-FAILURE-REPORTS <node-id>",
        "    Return number of failure reports for <node-id>.",
        "COUNTKEYSINSLOT <slot>",
        "    Return the number of keys in <slot>.",
        "DELSLOTS <slot> [<slot> ...]",
        "    Delete slots information from current node.",
        "DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
        "    Delete slots information which are between <start-slot> and <end-slot> from current node.",
        "FAILOVER [FORCE|TAKEOVER]",
        "    Promote current replica node to being a master.",
        "FORGET <node-id>",
        "    Remove a node from the cluster.",
        "GETKEYSINSLOT <slot> <count>",
        "    Return key names stored by current node in a slot.",
        "FLUSHSLOTS",
        "    Delete current node own slots information.",
        "INFO",
        "    Return information about the cluster.",
        "KEYSLOT <key>",
        "    Return the hash slot for <key>.",
        "MEET <ip> <port> [<bus-port>]",
        "    Connect nodes into a working cluster.",
        "MYID",
        "    Return the node id.",
        "NODES",
        "    Return cluster configuration seen by node. Output format:",
        "    <id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
        "REPLICATE <node-id>",
        "    Configure current node as replica to <node-id>.",
        "RESET [HARD|SOFT]",
        "    Reset current node (default: soft).",
        "SET-CONFIG-EPOCH <epoch>",
        "    Set config epoch of current node.",
        "SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
        "    Set slot state.",
        "REPLICAS <node-id>",
        "    Return <node-id> replicas.",
        "SAVECONFIG",
        "    Force saving cluster configuration on disk.",
        "SLOTS",
        "    Return information about slots range mappings. Each range is made of:",
        "    start, end, master and replicas IP addresses, ports and ids",
        "SHARDS",
        "    Return information about slot range mappings and the nodes associated with them.",
        "LINKS",
        "    Return information about all network links between this node and its peers.",
        "    Output format is an array where each array element is a map containing attributes of a link",
        NULL};
    if (cluster_or_reply(c)) reply_help(c, "CLUSTER", help);
}

/* ---------------------------------------------- READONLY, READWRITE, ASKING */

static void cmd_readonly(client_t *c) {
    if (!cluster_or_reply(c)) return;
    c->cluster_flags |= CLUSTER_CLIENT_READONLY;
    reply_ok(c);
}

static void cmd_readwrite(client_t *c) {
    if (!cluster_or_reply(c)) return;
    c->cluster_flags &= (uint8_t)~CLUSTER_CLIENT_READONLY;
    reply_ok(c);
}

static void cmd_asking(client_t *c) {
    if (!cluster_or_reply(c)) return;
    c->cluster_flags |= CLUSTER_CLIENT_ASKING;
    reply_ok(c);
}

#define CL_ADMIN (CMD_ADMIN | CMD_STALE)
static command_t cluster_subcommands[] = {
    {"addslots", cmd_cluster_addslots, -3, CL_ADMIN, 0, 0, 0, "cluster", "Assign new hash slots to receiving node", "3.0.0", NULL},
    {"addslotsrange", cmd_cluster_addslotsrange, -4, CL_ADMIN, 0, 0, 0, "cluster", "Assign new hash slots to receiving node", "7.0.0", NULL},
    {"bumpepoch", cmd_cluster_bumpepoch, 2, CL_ADMIN, 0, 0, 0, "cluster", "Advance the cluster config epoch", "3.0.0", NULL},
    {"count-failure-reports", cmd_cluster_count_failure_reports, 3, CL_ADMIN, 0, 0, 0, "cluster", "Return the number of failure reports active for a given node", "3.0.0", NULL},
    {"countkeysinslot", cmd_cluster_countkeysinslot, 3, CMD_STALE, 0, 0, 0, "cluster", "Return the number of local keys in the specified hash slot", "3.0.0", NULL},
    {"delslots", cmd_cluster_delslots, -3, CL_ADMIN, 0, 0, 0, "cluster", "Set hash slots as unbound in receiving node", "3.0.0", NULL},
    {"delslotsrange", cmd_cluster_delslotsrange, -4, CL_ADMIN, 0, 0, 0, "cluster", "Set hash slots as unbound in receiving node", "7.0.0", NULL},
    {"failover", cmd_cluster_failover, -2, CL_ADMIN, 0, 0, 0, "cluster", "Forces a replica to perform a manual failover of its master.", "3.0.0", NULL},
    {"flushslots", cmd_cluster_flushslots, 2, CL_ADMIN, 0, 0, 0, "cluster", "Delete a node's own slots information", "3.0.0", NULL},
    {"forget", cmd_cluster_forget, 3, CL_ADMIN, 0, 0, 0, "cluster", "Remove a node from the nodes table", "3.0.0", NULL},
    {"getkeysinslot", cmd_cluster_getkeysinslot, 4, CMD_STALE, 0, 0, 0, "cluster", "Return local key names in the specified hash slot", "3.0.0", NULL},
    {"help", cmd_cluster_help, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "cluster", "Show helpful text about the different subcommands", "5.0.0", NULL},
    {"info", cmd_cluster_info, 2, CMD_STALE, 0, 0, 0, "cluster", "Provides info about Redis Cluster node state", "3.0.0", NULL},
    {"keyslot", cmd_cluster_keyslot, 3, CMD_STALE, 0, 0, 0, "cluster", "Returns the hash slot of the specified key", "3.0.0", NULL},
    {"links", cmd_cluster_links, 2, CMD_STALE, 0, 0, 0, "cluster", "Returns a list of all TCP links to and from peer nodes in cluster", "7.0.0", NULL},
    {"meet", cmd_cluster_meet, -4, CL_ADMIN, 0, 0, 0, "cluster", "Force a node cluster to handshake with another node", "3.0.0", NULL},
    {"myid", cmd_cluster_myid, 2, CMD_STALE, 0, 0, 0, "cluster", "Return the node id", "3.0.0", NULL},
    {"myshardid", cmd_cluster_myshardid, 2, CMD_STALE, 0, 0, 0, "cluster", "Return the node's shard id", "7.2.0", NULL},
    {"nodes", cmd_cluster_nodes, 2, CMD_STALE, 0, 0, 0, "cluster", "Get Cluster config for the node", "3.0.0", NULL},
    {"replicas", cmd_cluster_replicas, 3, CL_ADMIN, 0, 0, 0, "cluster", "List replica nodes of the specified master node", "5.0.0", NULL},
    {"replicate", cmd_cluster_replicate, 3, CL_ADMIN, 0, 0, 0, "cluster", "Reconfigure a node as a replica of the specified master node", "3.0.0", NULL},
    {"reset", cmd_cluster_reset, -2, CL_ADMIN | CMD_NOSCRIPT, 0, 0, 0, "cluster", "Reset a Redis Cluster node", "3.0.0", NULL},
    {"saveconfig", cmd_cluster_saveconfig, 2, CL_ADMIN, 0, 0, 0, "cluster", "Forces the node to save cluster state on disk", "3.0.0", NULL},
    {"set-config-epoch", cmd_cluster_set_config_epoch, 3, CL_ADMIN, 0, 0, 0, "cluster", "Set the configuration epoch in a new node", "3.0.0", NULL},
    {"setslot", cmd_cluster_setslot, -4, CL_ADMIN, 0, 0, 0, "cluster", "Bind a hash slot to a specific node", "3.0.0", NULL},
    {"shards", cmd_cluster_shards, 2, CMD_STALE, 0, 0, 0, "cluster", "Get array of cluster slots to node mappings", "7.0.0", NULL},
    {"slaves", cmd_cluster_replicas, 3, CL_ADMIN, 0, 0, 0, "cluster", "List replica nodes of the specified master node", "3.0.0", NULL},
    {"slots", cmd_cluster_slots, 2, CMD_STALE, 0, 0, 0, "cluster", "Get array of Cluster slot to node mappings", "3.0.0", NULL},
    {0},
};

command_t cluster_commands[] = {
    {"cluster", NULL, -2, 0, 0, 0, 0, "cluster", "A container for cluster commands", "3.0.0", cluster_subcommands},
    {"readonly", cmd_readonly, 1, CMD_FAST | CMD_LOADING | CMD_STALE, 0, 0, 0, "cluster", "Enables read queries for a connection to a cluster replica node", "3.0.0", NULL},
    {"readwrite", cmd_readwrite, 1, CMD_FAST | CMD_LOADING | CMD_STALE, 0, 0, 0, "cluster", "Disables read queries for a connection to a cluster replica node", "3.0.0", NULL},
    {"asking", cmd_asking, 1, CMD_FAST, 0, 0, 0, "cluster", "Sent by cluster clients after an -ASK redirect", "3.0.0", NULL},
    {0},
};
