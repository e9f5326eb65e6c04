/* repl_failover.c: FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms],
 * the coordinated handover of the master role to one of our replicas
 * (Redis 6.2+ semantics, no Sentinel needed).
 *
 *   1. writes are held (pause.c, as CLIENT PAUSE WRITE) so the stream stops
 *      growing; state "waiting-for-sync";
 *   2. once the target (or, without TO, the first online replica) has
 *      acknowledged everything (its ACK each second),
 *      or at the timeout with FORCE, we become its replica and our PSYNC
 *      carries FAILOVER: the target promotes itself and answers +CONTINUE
 *      through its secondary ID; state "failover-in-progress";
 *   3. when our link to it is up, the held writes run (and are refused
 *      with READONLY: we are a replica now); "no-failover" again.
 * The timeout without FORCE, ABORT, or a target that does not take over
 * within FAILOVER_HANDOVER_MS put everything back as it was. */
#include "repl_state.h"

#include <stdio.h>
#include <string.h>

#include "log.h"
#include "durability_hooks.h"
#include "reply.h"
#include "util.h"

#define FAILOVER_HANDOVER_MS 10000 /* from our PSYNC FAILOVER to a connected link */

static repl_failover_t *F(server_t *srv) { return &R(srv)->failover; }

const char *failover_state_name(const server_t *srv) {
    switch (R(srv)->failover.state) {
        case FAILOVER_WAIT_SYNC: return "waiting-for-sync";
        case FAILOVER_IN_PROGRESS: return "failover-in-progress";
    }
    return "no-failover";
}

void failover_free(server_t *srv) {
    zfree(F(srv)->host);
    F(srv)->host = NULL;
}

static void finish(server_t *srv) {
    repl_failover_t *f = F(srv);
    f->state = FAILOVER_NONE;
    failover_free(srv);
    R(srv)->link.psync_failover = false;
    srv->durability_hooks->hold_writes(srv, false);
}

/* Back to being the master we were (no new replication ID: the target did
 * not take over, so our history goes on). */
static void abort_failover(server_t *srv, const char *why) {
    repl_t *r = R(srv);
    log_msg(LL_WARNING, "FAILOVER aborted: %s", why);
    if (F(srv)->state == FAILOVER_IN_PROGRESS && r->link.state != LINK_NONE) {
        replica_free_link(srv);
        zfree(r->link.host);
        r->link.host = NULL;
        r->link.state = LINK_NONE;
        zfree(srv->cfg.replicaof);
        srv->cfg.replicaof = zstrdup("");
        r->stream_db = -1;
    }
    finish(srv);
}

static void failover_link_connected(server_t *srv) {
    if (F(srv)->state != FAILOVER_IN_PROGRESS) return;
    log_msg(LL_NOTICE, "FAILOVER to %s:%d completed.", R(srv)->link.host, R(srv)->link.port);
    finish(srv);
}

/* The address a replica is reached at: the one it announced, else the
 * host part of its connection's peer address. */
static void replica_host(const repl_replica_t *rep, char *ip, size_t size) {
    if (rep->announced_ip[0]) {
        snprintf(ip, size, "%s", rep->announced_ip);
    } else {
        snprintf(ip, size, "%s", rep->c->addr);
        char *colon = strrchr(ip, ':');
        if (colon) *colon = '\0';
    }
}

static bool replica_matches(const repl_replica_t *rep, const char *host, int port) {
    char ip[64];
    replica_host(rep, ip, sizeof(ip));
    return rep->listening_port == port && !strcasecmp(ip, host);
}

static repl_replica_t *find_replica(server_t *srv, const char *host, int port) {
    for (repl_replica_t *rep = R(srv)->replicas; rep; rep = rep->next)
        if (replica_matches(rep, host, port)) return rep;
    return NULL;
}

/* Hand over to rep: become its replica, our PSYNC asking it to take over. */
static void hand_over(server_t *srv, repl_replica_t *rep) {
    repl_failover_t *f = F(srv);
    char ip[64];
    replica_host(rep, ip, sizeof(ip));
    int port = (int)rep->listening_port;
    log_msg(LL_NOTICE, "FAILOVER: handing the master role to %s:%d (offset %lld)", ip, port, R(srv)->master_repl_offset);
    f->state = FAILOVER_IN_PROGRESS;
    f->started_ms = srv->mstime;
    R(srv)->link.psync_failover = true;
    R(srv)->link.on_connected = failover_link_connected; /* repl_replica.c calls it when the link is up */
    replica_set_master(srv, ip, port);                   /* rep may be freed from here on */
}

void failover_cron(server_t *srv) {
    repl_t *r = R(srv);
    repl_failover_t *f = F(srv);
    if (f->state == FAILOVER_NONE) return;
    if (f->state == FAILOVER_IN_PROGRESS) {
        if (srv->mstime - f->started_ms > FAILOVER_HANDOVER_MS) abort_failover(srv, "the target did not take over");
        return;
    }
    repl_replica_t *target = NULL;
    if (f->host) {
        target = find_replica(srv, f->host, f->port);
        if (!target || target->state != REPLICA_ONLINE) {
            abort_failover(srv, "the target replica went away");
            return;
        }
        if (target->ack_off < r->master_repl_offset) target = NULL;
    } else {
        for (repl_replica_t *rep = r->replicas; rep && !target; rep = rep->next)
            if (rep->state == REPLICA_ONLINE && rep->ack_off >= r->master_repl_offset) target = rep;
    }
    bool timed_out = f->deadline_ms && srv->mstime >= f->deadline_ms;
    if (!target && timed_out && f->force) target = find_replica(srv, f->host, f->port);
    if (target) {
        hand_over(srv, target);
        return;
    }
    if (timed_out) abort_failover(srv, "replica did not sync in time");
    /* No GETACK here: it would grow the stream it waits for (a GETACK's
     * answer leaves the GETACK out); the replicas' ACK each second reports
     * every byte, and with writes held nothing else is added. */
}

/* FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms] */
void cmd_failover(client_t *c) {
    server_t *srv = c->srv;
    repl_t *r = R(srv);
    repl_failover_t *f = F(srv);
    const char *host = NULL;
    long long port = 0, timeout = 0;
    bool force = false, abort_req = false, has_timeout = false;
    for (int i = 1; i < c->argc; i++) {
        const char *a = c->argv[i]->ptr;
        if (!strcasecmp(a, "to") && i + 2 < c->argc && !host) {
            host = c->argv[i + 1]->ptr;
            if (!cmd_get_range_or_reply(c, c->argv[i + 2], 0, 65535, &port, "Invalid port")) return;
            i += 2;
        } else if (!strcasecmp(a, "force") && !force) {
            force = true;
        } else if (!strcasecmp(a, "abort") && !abort_req) {
            abort_req = true;
        } else if (!strcasecmp(a, "timeout") && i + 1 < c->argc && !has_timeout) {
            if (!cmd_get_ll_or_reply(c, c->argv[++i], &timeout, NULL)) return;
            if (timeout <= 0) {
                reply_error(c, "FAILOVER timeout must be greater than 0");
                return;
            }
            has_timeout = true;
        } else {
            reply_error(c, RL_ERR_SYNTAX);
            return;
        }
    }
    if (abort_req) {
        if (host || force || has_timeout) {
            reply_error(c, RL_ERR_SYNTAX); /* Redis 7.0.15's answer */
            return;
        }
        if (f->state == FAILOVER_NONE) {
            reply_error(c, "No failover in progress.");
            return;
        }
        abort_failover(srv, "aborted by the user");
        reply_ok(c);
        return;
    }
    if (r->link.state != LINK_NONE) {
        reply_error(c, "FAILOVER is not valid when server is a replica.");
        return;
    }
    if (f->state != FAILOVER_NONE) {
        reply_error(c, "FAILOVER already in progress.");
        return;
    }
    if (!r->replicas) {
        reply_error(c, "FAILOVER requires connected replicas.");
        return;
    }
    if (force && (!has_timeout || !host)) {
        reply_error(c, "FAILOVER with force option requires both a timeout and target HOST and IP.");
        return;
    }
    if (host) {
        repl_replica_t *rep = find_replica(srv, host, (int)port);
        if (!rep) {
            reply_error(c, "FAILOVER target HOST and PORT is not a replica.");
            return;
        }
        if (rep->state != REPLICA_ONLINE) {
            reply_error(c, "FAILOVER target replica is not online.");
            return;
        }
        f->host = zstrdup(host);
        f->port = (int)port;
    }
    f->force = force;
    f->deadline_ms = has_timeout ? srv->mstime + timeout : 0;
    f->state = FAILOVER_WAIT_SYNC;
    srv->durability_hooks->hold_writes(srv, true);
    log_msg(LL_NOTICE, "FAILOVER requested to %s:%lld.", host ? host : "any replica", port);
    reply_ok(c);
}
