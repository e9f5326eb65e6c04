/* cluster_replica_migration.c: Redis 7.0's replica migration on the
 * cluster bus (cluster_bus_internal.h): a replica of a master with spare
 * replicas moves to a master left without any (cluster-migration-barrier,
 * cluster-allow-replica-migration).  Run by cluster_bus.c's cron; the
 * move itself is cluster_failover.c's cluster_follow_master. */
#include <string.h>

#include "cluster_bus_internal.h"
#include "log.h"
#include "util.h"

/* n's replicas: how many (*all), how many not FAIL (the return), how many
 * neither FAIL nor PFAIL (*working). */
static int count_replicas(cluster_t *cl, cluster_node_t *n, int *all, int *working) {
    int ok = 0;
    *all = *working = 0;
    for (int i = 0; i < cl->node_count; i++) {
        cluster_node_t *x = cl->nodes[i];
        if (x->replicaof != n || !(x->flags & CNODE_REPLICA)) continue;
        (*all)++;
        if (!(x->flags & CNODE_FAIL)) ok++;
        if (!(x->flags & (CNODE_FAIL | CNODE_PFAIL))) (*working)++;
    }
    return ok;
}

/* Redis 7.0's replica migration: a master that serves slots and had
 * replicas (MIGRATE_TO) but has none left that is not FAIL is orphaned.
 * When there is one, and our master has the most working replicas (at
 * least 2) and more than cluster-migration-barrier of them, the replica
 * with the smallest ID among those of such masters moves to the orphan,
 * once it has been one for CLUSTER_MIGRATION_DELAY_MS. */
#define CLUSTER_MIGRATION_DELAY_MS 5000
void cluster_migration_cron(server_t *srv) {
    cluster_t *cl = srv->cluster;
    cluster_node_t *me = cl->myself, *mine = me->replicaof, *target = NULL, *candidate = me;
    if (!(me->flags & CNODE_REPLICA) || !mine) return;
    int orphans = 0, max_ok = 0, mine_ok = 0, all, working;
    for (int i = 0; i < cl->node_count; i++) {
        cluster_node_t *n = cl->nodes[i];
        if (!(n->flags & CNODE_MASTER)) continue;
        int ok = count_replicas(cl, n, &all, &working);
        if (all) n->flags |= CNODE_MIGRATE_TO;
        if (n->flags & CNODE_FAIL) continue;
        if (!ok && n->numslots && (n->flags & CNODE_MIGRATE_TO)) orphans++;
        if (ok > max_ok) max_ok = ok;
        if (n == mine) mine_ok = ok;
    }
    if (!orphans || max_ok < 2 || mine_ok != max_ok || !srv->cfg.cluster_allow_replica_migration) return;
    if (cl->state != CLUSTER_OK) return;
    count_replicas(cl, mine, &all, &working);
    if (working <= srv->cfg.cluster_migration_barrier) return;
    long long now = util_mstime();
    for (int i = 0; i < cl->node_count; i++) {
        cluster_node_t *n = cl->nodes[i];
        bool master = (n->flags & CNODE_MASTER) != 0;
        int ok = master ? count_replicas(cl, n, &all, &working) : 0;
        if (master && !(n->flags & CNODE_FAIL) && (n->flags & CNODE_MIGRATE_TO) && !ok) {
            if (!target && n->numslots) target = n;
            if (!n->orphaned_time) n->orphaned_time = now;
        } else {
            n->orphaned_time = 0;
        }
        if (!master || ok != max_ok) continue;
        for (int j = 0; j < cl->node_count; j++) {
            cluster_node_t *x = cl->nodes[j];
            if (x->replicaof == n && (x->flags & CNODE_REPLICA) && memcmp(x->name, candidate->name, CLUSTER_NAMELEN) < 0)
                candidate = x;
        }
    }
    if (!target || candidate != me || now - target->orphaned_time <= CLUSTER_MIGRATION_DELAY_MS) return;
    log_msg(LL_NOTICE, "Migrating to orphaned master %.40s", target->name);
    cluster_follow_master(srv, target);
}
