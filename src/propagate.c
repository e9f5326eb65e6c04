/* propagate.c: the one propagation point (see propagate.h).
 *
 * A command is translated once (aof_translate: relative expiries become
 * absolute; handlers log BLPOP, SPOP... as other commands) into RESP
 * bytes, then emitted to each consumer with its database id; each adds
 * SELECT when its
 * own stream last selected another database (the AOF file and the
 * replication stream start at different times, so they keep separate
 * "current db" states).  Inside a unit (a script, EXEC) commands are
 * collected and emitted at the end, wrapped in MULTI/EXEC when there is
 * more than one, so a replica or a reload never sees half of a
 * transaction.  PUBLISH goes to the replicas only (propagate_to_replicas),
 * as in Redis: their subscribers get the message, the AOF does not. */
#include "propagate.h"

#include <string.h>

#include "aof.h"
#include "repl.h"
#include "resp.h"
#include "zmalloc.h"

typedef struct staged {
    int dbid;
    sds cmd;
    int targets; /* PROPAGATE_*: PUBLISH goes to the replicas only */
} staged_t;

struct propagate {
    sds scratch; /* the translation outside units, reused (no allocation per write) */
    int depth;   /* nested units open */
    int targets; /* PROPAGATE_*: where the unit's commands go now (redis.set_repl) */
    staged_t *staged;
    int nstaged, cap;
};

void propagate_init(server_t *srv) { srv->propagate = zcalloc(sizeof(struct propagate)); }

static void clear_staged(struct propagate *p) {
    for (int i = 0; i < p->nstaged; i++) sds_free(p->staged[i].cmd);
    p->nstaged = 0;
}

void propagate_free(server_t *srv) {
    struct propagate *p = srv->propagate;
    if (!p) return;
    clear_staged(p);
    zfree(p->staged);
    sds_free(p->scratch);
    zfree(p);
    srv->propagate = NULL;
}

static bool aof_wants(const server_t *srv) { return srv->aof && !srv->loading && aof_is_on(srv->aof); }

bool propagate_wanted(const server_t *srv) {
    if (srv->loading) return false;
    return aof_wants(srv) || repl_stream_on(srv);
}

/* Each consumer named in targets gets the same bytes, in the same order. */
static void emit_to(server_t *srv, int dbid, const char *cmd, size_t len, int targets) {
    if ((targets & PROPAGATE_AOF) && aof_wants(srv)) aof_append(srv, dbid, cmd, len);
    /* repl_feed also moves the offset WAITAOF counts in when no stream is fed */
    if ((targets & PROPAGATE_REPL) && (repl_stream_on(srv) || aof_wants(srv))) repl_feed(srv, dbid, cmd, len);
}

static void emit(server_t *srv, int dbid, const char *cmd, size_t len) { emit_to(srv, dbid, cmd, len, PROPAGATE_ALL); }

static void emit_or_stage_to(server_t *srv, int dbid, sds cmd, int targets) {
    struct propagate *p = srv->propagate;
    if (p->depth == 0) {
        emit_to(srv, dbid, cmd, sds_len(cmd), targets);
        sds_free(cmd);
        return;
    }
    targets &= p->targets;
    if (!targets) {
        sds_free(cmd);
        return;
    }
    if (p->nstaged == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 8;
        p->staged = zrealloc(p->staged, sizeof(staged_t) * (size_t)p->cap);
    }
    p->staged[p->nstaged++] = (staged_t){dbid, cmd, targets};
}

static void emit_or_stage(server_t *srv, int dbid, sds cmd) { emit_or_stage_to(srv, dbid, cmd, PROPAGATE_ALL); }

void propagate_to_replicas(server_t *srv, int dbid, robj **argv, int argc) {
    if (!repl_stream_on(srv) || srv->loading) return;
    emit_or_stage_to(srv, dbid, aof_translate(srv, sds_empty(), dbid, argv, argc), PROPAGATE_REPL);
}

void propagate_command(server_t *srv, int dbid, robj **argv, int argc) {
    struct propagate *p = srv->propagate;
    if (!propagate_wanted(srv)) return;
    if (p->depth > 0) {
        emit_or_stage(srv, dbid, aof_translate(srv, sds_empty(), dbid, argv, argc));
        return;
    }
    if (!p->scratch) p->scratch = sds_empty();
    sds_clear(p->scratch);
    p->scratch = aof_translate(srv, p->scratch, dbid, argv, argc);
    emit(srv, dbid, p->scratch, sds_len(p->scratch));
}

void propagate_del(server_t *srv, int dbid, robj *key, bool lazy) {
    if (!propagate_wanted(srv)) return;
    const char *name = lazy ? "UNLINK" : "DEL";
    const char *av[2] = {name, key->ptr};
    size_t lens[2] = {strlen(name), sds_len(key->ptr)};
    emit_or_stage(srv, dbid, resp_cat_command(sds_empty(), 2, av, lens));
}

void propagate_unit_begin(server_t *srv) {
    struct propagate *p = srv->propagate;
    if (p->depth++ == 0) p->targets = PROPAGATE_ALL;
}

void propagate_unit_targets(server_t *srv, int targets) { srv->propagate->targets = targets; }

void propagate_unit_end(server_t *srv) {
    struct propagate *p = srv->propagate;
    if (p->depth == 0 || --p->depth > 0) return;
    p->targets = PROPAGATE_ALL;
    if (p->nstaged == 0) return;
    static const char multi[] = "*1\r\n$5\r\nMULTI\r\n", exec[] = "*1\r\n$4\r\nEXEC\r\n";
    bool wrap = p->nstaged > 1;
    /* MULTI takes the first command's db, so its SELECT comes first; it
     * and EXEC go to both consumers, whatever each command's targets (as
     * Redis 7.0 wraps them). */
    if (wrap) emit(srv, p->staged[0].dbid, multi, sizeof(multi) - 1);
    for (int i = 0; i < p->nstaged; i++)
        emit_to(srv, p->staged[i].dbid, p->staged[i].cmd, sds_len(p->staged[i].cmd), p->staged[i].targets);
    if (wrap) emit(srv, p->staged[p->nstaged - 1].dbid, exec, sizeof(exec) - 1);
    clear_staged(p);
}
