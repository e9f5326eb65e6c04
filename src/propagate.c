/* propagate.c: the one propagation point (see propagate.h).
 *
 * A command is translated once (aof_translate: relative expiries become
 * absolute; handlers log BLPOP, SPOP... as other commands) into RESP
 * bytes, then emitted to each consumer with its database id; each adds
 * SELECT when its
 * own stream last selected another database (the AOF file and the
 * replication stream start at different times, so they keep separate
 * "current db" states).  Inside a unit (a client's command, a script,
 * EXEC, a served blocked client) commands are collected and emitted at the
 * end, wrapped in MULTI/EXEC when there is more than one, so a replica or
 * a reload never sees half of what one command did (XREADGROUP's XCLAIMs
 * and SETID, the DELs of keys a command found expired with its own
 * write), as Redis 7.0 does.  Units nest: only the outermost one emits,
 * so EXEC and scripts are wrapped once.  PUBLISH goes to the replicas only
 * (propagate_to_replicas), as in Redis: their subscribers get the
 * message, the AOF does not. */
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

/* A unit opened inside another: EXEC's script, a command run while a
 * script is busy.  Deeper units keep their caller's targets. */
#define UNIT_NEST_MAX 8

struct propagate {
    sds scratch;                      /* the translation outside units, reused (no allocation per write) */
    int depth;                        /* nested units open */
    int targets;                      /* PROPAGATE_*: where the unit's commands go now (redis.set_repl) */
    int outer_targets[UNIT_NEST_MAX]; /* each open unit's caller's targets */
    staged_t *staged;
    int nstaged, cap;
};

void propagate_init(server_t *srv) { srv->propagate = zcalloc(sizeof(struct propagate)); }

/* The slots' buffers stay for the next unit (every write command is a
 * unit: no allocation per write), unless one grew large. */
#define STAGED_KEEP_MAX 4096
static void clear_staged(struct propagate *p) {
    for (int i = 0; i < p->nstaged; i++) {
        if (sds_alloc(p->staged[i].cmd) <= STAGED_KEEP_MAX) continue;
        sds_free(p->staged[i].cmd);
        p->staged[i].cmd = NULL;
    }
    p->nstaged = 0;
}

void propagate_free(server_t *srv) {
    struct propagate *p = srv->propagate;
    if (!p) return;
    for (int i = 0; i < p->cap; i++) sds_free(p->staged[i].cmd);
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

/* The next slot of the unit, its buffer empty, or NULL when the unit
 * sends nothing to targets (redis.set_repl). */
static staged_t *stage(struct propagate *p, int dbid, int targets) {
    targets &= p->targets;
    if (!targets) return NULL;
    if (p->nstaged == p->cap) {
        int cap = p->cap ? p->cap * 2 : 8;
        p->staged = zrealloc(p->staged, sizeof(staged_t) * (size_t)cap);
        memset(p->staged + p->cap, 0, sizeof(staged_t) * (size_t)(cap - p->cap));
        p->cap = cap;
    }
    staged_t *st = &p->staged[p->nstaged++];
    if (st->cmd) sds_clear(st->cmd);
    else st->cmd = sds_empty();
    st->dbid = dbid;
    st->targets = targets;
    return st;
}

/* argv translated: staged in the open unit, else emitted now. */
static void translate_to(server_t *srv, int dbid, robj **argv, int argc, int targets) {
    struct propagate *p = srv->propagate;
    if (p->depth > 0) {
        staged_t *st = stage(p, dbid, targets);
        if (st) st->cmd = aof_translate(srv, st->cmd, dbid, argv, argc);
        return;
    }
    if (!p->scratch) p->scratch = sds_empty();
    sds_clear(p->scratch);
    p->scratch = aof_translate(srv, p->scratch, dbid, argv, argc);
    emit_to(srv, dbid, p->scratch, sds_len(p->scratch), targets);
}

void propagate_to_replicas(server_t *srv, int dbid, robj **argv, int argc) {
    if (!repl_stream_on(srv) || srv->loading) return;
    translate_to(srv, dbid, argv, argc, PROPAGATE_REPL);
}

void propagate_command(server_t *srv, int dbid, robj **argv, int argc) {
    if (!propagate_wanted(srv)) return;
    translate_to(srv, dbid, argv, argc, PROPAGATE_ALL);
}

void propagate_del(server_t *srv, int dbid, robj *key, bool lazy) {
    struct propagate *p = srv->propagate;
    if (!propagate_wanted(srv)) return;
    const char *name = lazy ? "UNLINK" : "DEL";
    const char *av[2] = {name, key->ptr};
    size_t lens[2] = {strlen(name), sds_len(key->ptr)};
    if (p->depth > 0) {
        staged_t *st = stage(p, dbid, PROPAGATE_ALL);
        if (st) st->cmd = resp_cat_command(st->cmd, 2, av, lens);
        return;
    }
    if (!p->scratch) p->scratch = sds_empty();
    sds_clear(p->scratch);
    p->scratch = resp_cat_command(p->scratch, 2, av, lens);
    emit(srv, dbid, p->scratch, sds_len(p->scratch));
}

/* The outermost unit sends to both consumers until redis.set_repl says
 * otherwise; a nested one starts with its caller's targets and gives them
 * back when it ends (a command run while a script is busy must not undo
 * the script's redis.set_repl, nor a script inside EXEC leave its own to
 * the commands after it). */
void propagate_unit_begin(server_t *srv) {
    struct propagate *p = srv->propagate;
    if (p->depth == 0) p->targets = PROPAGATE_ALL;
    if (p->depth < UNIT_NEST_MAX) p->outer_targets[p->depth] = p->targets;
    p->depth++;
}

void propagate_unit_targets(server_t *srv, int targets) { srv->propagate->targets = targets; }

void propagate_unit_end(server_t *srv) { propagate_unit_end_as(srv, true); }

void propagate_unit_end_as(server_t *srv, bool may_wrap) {
    struct propagate *p = srv->propagate;
    if (p->depth == 0) return;
    p->depth--;
    p->targets = p->depth > 0 && p->depth < UNIT_NEST_MAX ? p->outer_targets[p->depth] : PROPAGATE_ALL;
    if (p->depth > 0 || p->nstaged == 0) return;
    static const char multi[] = "*1\r\n$5\r\nMULTI\r\n", exec[] = "*1\r\n$4\r\nEXEC\r\n";
    bool wrap = may_wrap && p->nstaged > 1;
    /* MULTI takes the first command's db, so its SELECT comes first; it
     * and EXEC go to both consumers, whatever each command's targets (as
     * Redis 7.0 wraps them). */
    if (wrap) emit(srv, p->staged[0].dbid, multi, sizeof(multi) - 1);
    for (int i = 0; i < p->nstaged; i++)
        emit_to(srv, p->staged[i].dbid, p->staged[i].cmd, sds_len(p->staged[i].cmd), p->staged[i].targets);
    if (wrap) emit(srv, p->staged[p->nstaged - 1].dbid, exec, sizeof(exec) - 1);
    clear_staged(p);
}
