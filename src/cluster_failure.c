/* cluster_failure.c: failure detection on the cluster bus
 * (cluster_bus_internal.h), as Redis 7.0 does it.  A node that leaves a
 * PING unanswered for cluster-node-timeout is PFAIL here; masters' gossip
 * about it are failure reports, each valid for twice the node timeout;
 * when the masters that report it (with us if we are one) are a majority
 * of the cluster's size, it becomes FAIL and a FAIL message tells every
 * node, which marks it FAIL at once.  Called by the gossip handling and
 * the cron (cluster_bus.c); sends through cluster_wire.c. */
#include <string.h>

#include "cluster_bus.h"
#include "cluster_bus_internal.h"
#include "log.h"
#include "util.h"

void cluster_report_add(cluster_bus_t *bus, cluster_node_t *about, cluster_node_t *reporter) {
    for (int i = 0; i < bus->report_count; i++)
        if (bus->reports[i].about == about && bus->reports[i].reporter == reporter) {
            bus->reports[i].time = util_mstime();
            return;
        }
    bus->reports = zrealloc(bus->reports, sizeof(*bus->reports) * (size_t)(bus->report_count + 1));
    bus->reports[bus->report_count++] = (fail_report_t){about, reporter, util_mstime()};
}

void cluster_report_del(cluster_bus_t *bus, cluster_node_t *about, cluster_node_t *reporter) {
    for (int i = 0; i < bus->report_count; i++)
        if (bus->reports[i].about == about && (!reporter || bus->reports[i].reporter == reporter))
            bus->reports[i--] = bus->reports[--bus->report_count];
}

/* Reports younger than twice the node timeout, about n. */
static int report_count(server_t *srv, cluster_node_t *n) {
    cluster_bus_t *bus = srv->cluster->bus;
    long long max_age = srv->cfg.cluster_node_timeout * 2, now = util_mstime();
    int count = 0;
    for (int i = 0; i < bus->report_count; i++) {
        if (now - bus->reports[i].time > max_age) {
            bus->reports[i--] = bus->reports[--bus->report_count];
            continue;
        }
        if (bus->reports[i].about == n) count++;
    }
    return count;
}

void cluster_reports_by_gone(cluster_bus_t *bus, const cluster_node_t *n) {
    for (int i = 0; i < bus->report_count; i++)
        if (bus->reports[i].reporter == n) bus->reports[i--] = bus->reports[--bus->report_count];
}

int cluster_bus_failure_reports(server_t *srv, cluster_node_t *n) {
    return srv->cluster->bus ? report_count(srv, n) : 0;
}

/* PFAIL to FAIL: when the masters that report n, with us if we are one,
 * are a majority of the cluster's size. */
void cluster_maybe_mark_failing(server_t *srv, cluster_node_t *n) {
    cluster_t *cl = srv->cluster;
    if (!(n->flags & CNODE_PFAIL) || (n->flags & CNODE_FAIL)) return;
    int needed = cl->size / 2 + 1;
    int failures = report_count(srv, n) + ((cl->myself->flags & CNODE_MASTER) ? 1 : 0);
    if (failures < needed) return;
    log_msg(LL_NOTICE, "Marking node %.40s as failing (quorum reached).", n->name);
    n->flags = (n->flags & ~CNODE_PFAIL) | CNODE_FAIL;
    n->fail_time = util_mstime();
    cmsg_broadcast_fail(srv, n);
    cl->todo_update = cl->todo_save = true;
}

/* ------------------------------------------------------------ PFAIL, FAIL */

void cluster_failure_check(server_t *srv, cluster_node_t *n, long long now) {
    cluster_t *cl = srv->cluster;
    long long timeout = srv->cfg.cluster_node_timeout;
    if (n->ping_sent && now - n->ping_sent > timeout && !(n->flags & (CNODE_PFAIL | CNODE_FAIL))) {
        log_msg(LL_NOTICE, "*** NODE %.40s possibly failing", n->name);
        n->flags |= CNODE_PFAIL;
        cl->todo_update = true;
    }
    if (n->flags & CNODE_PFAIL) cluster_maybe_mark_failing(srv, n);
}

void cluster_failure_handle_fail(server_t *srv, cluster_node_t *sender, const uint8_t *buf) {
    cluster_t *cl = srv->cluster;
    cluster_node_t *n = cluster_lookup_node(cl, (const char *)buf + CMSG_HEADER_LEN, CLUSTER_NAMELEN);
    if (n && n != cl->myself && !(n->flags & CNODE_FAIL)) {
        log_msg(LL_NOTICE, "FAIL message received from %.40s about %.40s", sender->name, n->name);
        n->flags = (n->flags & ~CNODE_PFAIL) | CNODE_FAIL;
        n->fail_time = util_mstime();
        cl->todo_update = cl->todo_save = true;
    }
}

/* As Redis's clearNodeFailureIfNeeded: a replica or a master without
 * slots is back at once; a master still serving slots in our view (no
 * replica took them over) once its FAIL is older than twice the node
 * timeout.  Without the second rule a master that failed and came back
 * before anyone replaced it stayed FAIL here for good (and the cluster
 * down for its slots), as did one that got slots again (a TAKEOVER) while
 * we still had it FAIL. */
#define CLUSTER_FAIL_UNDO_TIME_MULT 2
void cluster_failure_answered(server_t *srv, cluster_node_t *n) {
    cluster_t *cl = srv->cluster;
    bool replica = (n->flags & CNODE_REPLICA) != 0;
    if (replica || !n->numslots) {
        log_msg(LL_NOTICE, "Clear FAIL state for node %.40s: %s is reachable again.", n->name,
                replica ? "replica" : "master without slots");
    } else if (util_mstime() - n->fail_time > srv->cfg.cluster_node_timeout * CLUSTER_FAIL_UNDO_TIME_MULT) {
        log_msg(LL_NOTICE,
                "Clear FAIL state for node %.40s: is reachable again and nobody is serving its slots after some time.",
                n->name);
    } else {
        return;
    }
    n->flags &= ~CNODE_FAIL;
    cl->todo_update = cl->todo_save = true;
}
