/* multi.c: MULTI/EXEC/DISCARD/WATCH/UNWATCH (see multi.h).
 *
 * Invariants:
 *   - c->mstate != NULL  <=>  c is between MULTI and EXEC/DISCARD.
 *   - srv->watched maps "<dbid>\0<key>" to the array of clients watching
 *     it; each client keeps the list of its own watched entries, so both
 *     directions can be undone when it unwatches or disconnects.
 *   - queued argv objects hold a reference each until EXEC or DISCARD. */
#include "acl.h"
#include "multi.h"

#include <string.h>

#include "commands.h"
#include "keyspace.h"
#include "propagate.h"
#include "reply.h"

#define CLIENT_MULTI_ERROR 1 /* a queueing error: EXEC aborts */
#define CLIENT_MULTI_DIRTY 2 /* a watched key changed: EXEC returns null */

typedef struct queued_cmd {
    command_t *cmd;
    int argc;
    robj **argv;
} queued_cmd;

struct multi_state {
    queued_cmd *cmds;
    int count, cap;
    uint32_t cmd_flags;     /* CMD_* of every queued command, or'ed */
    uint32_t cmd_inv_flags; /* the complements, or'ed: a flag one lacks */
};

typedef struct watchers {
    client_t **clients;
    int count, cap;
} watchers;

struct watch_state {
    sds *keys;              /* composite keys in srv->watched */
    unsigned char *expired; /* per key: it was logically expired when watched */
    int count, cap;
    int flags; /* CLIENT_MULTI_* */
};

static void watchers_free(void *p) {
    watchers *w = p;
    zfree(w->clients);
    zfree(w);
}

static dict_type watched_type = {dict_sds_hash, dict_sds_eq, NULL, dict_sds_free, watchers_free, false};

void multi_init(server_t *srv) { srv->watched = dict_create(&watched_type); }

void multi_free(server_t *srv) {
    dict_release(srv->watched);
    srv->watched = NULL;
}

static sds watch_key(int dbid, const char *key, size_t len) {
    sds k = sds_newlen(&dbid, sizeof(dbid));
    return sds_catlen(k, key, len);
}

static struct watch_state *wstate(client_t *c) {
    if (!c->wstate) c->wstate = zcalloc(sizeof(struct watch_state));
    return c->wstate;
}

/* ---------------------------------------------------------------- queue */

bool multi_should_queue(const client_t *c, const command_t *cmd) {
    if (!c->mstate) return false;
    const command_t *top = cmd->parent ? cmd->parent : cmd;
    const char *n = top->name;
    return strcmp(n, "exec") && strcmp(n, "discard") && strcmp(n, "multi") && strcmp(n, "watch") &&
           strcmp(n, "quit") && strcmp(n, "reset");
}

void multi_queue(client_t *c, command_t *cmd, uint32_t flags) {
    struct multi_state *m = c->mstate;
    if (m->count == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 8;
        m->cmds = zrealloc(m->cmds, sizeof(queued_cmd) * (size_t)m->cap);
    }
    m->cmd_flags |= flags;
    m->cmd_inv_flags |= ~flags;
    queued_cmd *q = &m->cmds[m->count++];
    q->cmd = cmd;
    q->argc = c->argc;
    q->argv = zmalloc(sizeof(robj *) * (size_t)c->argc);
    /* what the queue holds counts in the client's memory, so that
     * maxmemory-clients sees a client queueing big values (Redis 7.0's
     * multi-mem: the arguments' bytes and the queue's entries) */
    size_t bytes = sizeof(queued_cmd) + sizeof(robj *) * (size_t)c->argc;
    for (int i = 0; i < c->argc; i++) {
        q->argv[i] = c->argv[i];
        obj_incref(c->argv[i]);
        bytes += obj_string_len(c->argv[i]);
    }
    c->multi_bytes += bytes;
    conn_track_memory(c); /* now: a QUEUED reply may leave without a measure */
    reply_simple(c, "QUEUED");
}

int multi_queued_count(const client_t *c) { return c->mstate ? c->mstate->count : -1; }

int multi_watched_count(const client_t *c) { return c->wstate ? c->wstate->count : 0; }

size_t multi_watched_keys(const server_t *srv) { return srv->watched ? dict_size(srv->watched) : 0; }

void multi_flag_error(client_t *c) {
    if (c->mstate) wstate(c)->flags |= CLIENT_MULTI_ERROR;
}

static void discard_transaction(client_t *c) {
    struct multi_state *m = c->mstate;
    if (!m) return;
    for (int i = 0; i < m->count; i++) {
        for (int j = 0; j < m->cmds[i].argc; j++) obj_decref(m->cmds[i].argv[j]);
        zfree(m->cmds[i].argv);
    }
    zfree(m->cmds);
    zfree(m);
    c->mstate = NULL;
    c->multi_bytes = 0;
    conn_track_memory(c);
    if (c->wstate) c->wstate->flags &= ~CLIENT_MULTI_ERROR;
}

/* ---------------------------------------------------------------- watch */

static void unwatch_all(client_t *c) {
    struct watch_state *w = c->wstate;
    if (!w) return;
    for (int i = 0; i < w->count; i++) {
        dict_entry *de = dict_find(c->srv->watched, w->keys[i]);
        if (de) {
            watchers *ws = dict_get_val(de);
            for (int j = 0; j < ws->count; j++) {
                if (ws->clients[j] == c) {
                    ws->clients[j] = ws->clients[--ws->count];
                    break;
                }
            }
            if (ws->count == 0) dict_delete(c->srv->watched, w->keys[i]);
        }
        sds_free(w->keys[i]);
    }
    w->count = 0;
    w->flags &= ~CLIENT_MULTI_DIRTY;
}

/* The key exists in db (expired or not). */
static bool key_in_db(db_t *db, const char *key, size_t len) {
    if (db_size(db) == 0) return false;
    sds k = sds_newlen(key, len);
    bool found = db_find(db, k) != NULL;
    sds_free(k);
    return found;
}

/* The key is in db with a TTL already past (not yet deleted). */
static bool key_is_expired(db_t *db, const char *key, size_t len) {
    if (db_expires_size(db) == 0) return false;
    sds k = sds_newlen(key, len);
    db_entry *de = db_find(db, k);
    sds_free(k);
    return de && db_entry_expire(de) >= 0 && db_entry_expire(de) <= db->srv->mstime;
}

/* Index of composite key k among c's watched keys, or -1. */
static int watch_index(client_t *c, const sds k) {
    struct watch_state *w = c->wstate;
    for (int i = 0; w && i < w->count; i++)
        if (sds_cmp(w->keys[i], k) == 0) return i;
    return -1;
}

static void watch_one(client_t *c, robj *key) {
    struct watch_state *w = wstate(c);
    sds k = watch_key(c->db->id, key->ptr, sds_len(key->ptr));
    for (int i = 0; i < w->count; i++) {
        if (sds_cmp(w->keys[i], k) == 0) { /* already watched */
            sds_free(k);
            return;
        }
    }
    dict_entry *de = dict_find(c->srv->watched, k);
    watchers *ws;
    if (de) {
        ws = dict_get_val(de);
    } else {
        ws = zcalloc(sizeof(*ws));
        dict_add(c->srv->watched, sds_dup(k), ws);
    }
    if (ws->count == ws->cap) {
        ws->cap = ws->cap ? ws->cap * 2 : 4;
        ws->clients = zrealloc(ws->clients, sizeof(client_t *) * (size_t)ws->cap);
    }
    ws->clients[ws->count++] = c;
    if (w->count == w->cap) {
        w->cap = w->cap ? w->cap * 2 : 4;
        w->keys = zrealloc(w->keys, sizeof(sds) * (size_t)w->cap);
        w->expired = zrealloc(w->expired, (size_t)w->cap);
    }
    /* A key already expired when watched is treated as absent: its
     * deletion is no change (Redis 7.0). */
    w->expired[w->count] = key_is_expired(c->db, key->ptr, sds_len(key->ptr));
    w->keys[w->count++] = k;
}

void multi_touch_key(server_t *srv, int dbid, const sds key) {
    if (!srv->watched || dict_size(srv->watched) == 0) return;
    sds k = watch_key(dbid, key, sds_len(key));
    watchers *ws = dict_fetch_value(srv->watched, k);
    if (ws) {
        bool present = key_in_db(&srv->dbs[dbid], key, sds_len(key));
        for (int i = 0; i < ws->count; i++) {
            struct watch_state *w = wstate(ws->clients[i]);
            int idx = watch_index(ws->clients[i], k);
            if (idx >= 0 && w->expired[idx]) {
                /* Watched while already expired: its deletion changes
                 * nothing logically; the key is now plainly absent. */
                if (!present) w->expired[idx] = 0;
                continue;
            }
            w->flags |= CLIENT_MULTI_DIRTY;
        }
    }
    sds_free(k);
}

/* A database is emptied (FLUSHDB/FLUSHALL) or, with other >= 0, swapped
 * with database other (SWAPDB): a watcher is marked only if its key
 * existed here, or exists in the other database; a key watched while
 * expired, or replaced by an expired one, counts as absent (Redis 7.0). */
void multi_touch_db(server_t *srv, int dbid, int other) {
    if (!srv->watched || dict_size(srv->watched) == 0) return;
    db_t *db = &srv->dbs[dbid], *odb = other >= 0 ? &srv->dbs[other] : NULL;
    dict_iter it;
    dict_entry *de;
    dict_iter_init(&it, srv->watched, false);
    while ((de = dict_next(&it))) {
        sds k = dict_get_key(srv->watched, de);
        int id;
        memcpy(&id, k, sizeof(id));
        if (id != dbid) continue;
        const char *key = k + sizeof(id);
        size_t len = sds_len(k) - sizeof(id);
        bool here = key_in_db(db, key, len), there = odb && key_in_db(odb, key, len);
        if (!here && !there) continue;
        bool there_expired = there && key_is_expired(odb, key, len);
        watchers *ws = dict_get_val(de);
        for (int i = 0; i < ws->count; i++) {
            struct watch_state *w = wstate(ws->clients[i]);
            int idx = watch_index(ws->clients[i], k);
            if (idx >= 0 && w->expired[idx]) {
                if (!there) {
                    w->expired[idx] = 0; /* the expired key is gone: no change */
                    continue;
                }
                if (there_expired) continue; /* still expired */
            } else if (!here && there_expired) {
                if (idx >= 0) w->expired[idx] = 1; /* absent, replaced by an expired key */
                continue;
            }
            w->flags |= CLIENT_MULTI_DIRTY;
        }
    }
    dict_iter_release(&it);
}

/* A watched key that has logically expired by EXEC time counts as changed,
 * even if nobody touched it and it was not yet collected. */
static bool watched_key_expired(client_t *c) {
    struct watch_state *w = c->wstate;
    if (!w) return false;
    for (int i = 0; i < w->count; i++) {
        int id;
        memcpy(&id, w->keys[i], sizeof(id));
        db_t *db = &c->srv->dbs[id];
        sds key = w->keys[i] + sizeof(id);
        if (w->expired[i]) continue; /* was expired when WATCHed */
        if (key_is_expired(db, key, sds_len(w->keys[i]) - sizeof(id))) return true;
    }
    return false;
}

void multi_client_free(client_t *c) {
    discard_transaction(c);
    unwatch_all(c);
    if (c->wstate) {
        zfree(c->wstate->keys);
        zfree(c->wstate->expired);
        zfree(c->wstate);
        c->wstate = NULL;
    }
}

/* EXEC is checked as what it will run (Redis 7.0): a write if one queued
 * command writes, refused on OOM if one may grow memory, refused on a
 * stale replica or while loading unless every queued command is allowed
 * there.  A state change after queueing (min-replicas, a lost master)
 * thus aborts the transaction instead of running half of it. */
uint32_t multi_exec_flags(const client_t *c, uint32_t exec_flags) {
    const struct multi_state *m = c->mstate;
    if (!m) return exec_flags;
    uint32_t f = exec_flags | (m->cmd_flags & (CMD_WRITE | CMD_DENYOOM | CMD_MAY_REPLICATE | CMD_NO_ASYNC_LOADING));
    return f & ~(m->cmd_inv_flags & (CMD_STALE | CMD_LOADING));
}

void multi_exec_abort(client_t *c, const char *err) {
    discard_transaction(c);
    unwatch_all(c);
    reply_error(c, "EXECABORT Transaction discarded because of: %s", err);
}

/* ---------------------------------------------------------------- commands */

static void cmd_multi(client_t *c) {
    if (c->mstate) {
        reply_error(c, "MULTI calls can not be nested");
        return;
    }
    c->mstate = zcalloc(sizeof(struct multi_state));
    reply_ok(c);
}

bool multi_queued_at(const client_t *c, int i, command_t **cmd, robj ***argv, int *argc) {
    if (!c->mstate || i < 0 || i >= c->mstate->count) return false;
    queued_cmd *q = &c->mstate->cmds[i];
    *cmd = q->cmd;
    *argv = q->argv;
    *argc = q->argc;
    return true;
}

void multi_discard(client_t *c) { discard_transaction(c); }

static void cmd_discard(client_t *c) {
    if (!c->mstate) {
        reply_error(c, "DISCARD without MULTI");
        return;
    }
    discard_transaction(c);
    unwatch_all(c);
    reply_ok(c);
}

/* Redis 7.0's texts for a queued command the user may no longer run. */
static bool exec_acl_allows_or_reply(client_t *c, command_t *cmd) {
    int pos;
    int r = acl_check_and_log(c, c->user, cmd, c->argv, c->argc, ACL_CTX_MULTI, &pos);
    if (r == ACL_OK) return true;
    const char *why = r == ACL_DENIED_CMD   ? "no permission to execute the command or subcommand"
                      : r == ACL_DENIED_KEY ? "no permission to touch the specified keys"
                                            : "no permission to access one of the channels used as arguments";
    reply_error(c, "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC "
                   "call. This command is no longer allowed for the following reason: %s",
                why);
    return false;
}

static void cmd_exec(client_t *c) {
    if (!c->mstate) {
        reply_error(c, "EXEC without MULTI");
        return;
    }
    int flags = c->wstate ? c->wstate->flags : 0;
    if (flags & CLIENT_MULTI_ERROR) {
        discard_transaction(c);
        unwatch_all(c);
        reply_error(c, "EXECABORT Transaction discarded because of previous errors.");
        return;
    }
    if ((flags & CLIENT_MULTI_DIRTY) || watched_key_expired(c)) {
        discard_transaction(c);
        unwatch_all(c);
        reply_null_array(c);
        return;
    }
    /* Watches end before running: the transaction's own writes must not
     * mark this client. */
    unwatch_all(c);
    struct multi_state *m = c->mstate;
    c->mstate = NULL;
    int saved_argc = c->argc;
    robj **saved_argv = c->argv;
    command_t *saved_cmd = c->cmd;
    reply_array_len(c, m->count);
    c->flags |= CLIENT_DENY_BLOCKING;
    /* propagate.c: the writes reach the AOF and replicas as one MULTI/EXEC */
    propagate_unit_begin(c->srv);
    c->srv->in_exec = true;
    for (int i = 0; i < m->count; i++) {
        c->argc = m->cmds[i].argc;
        c->argv = m->cmds[i].argv;
        /* acl.c: the rules may have changed since the command was queued. */
        if (!exec_acl_allows_or_reply(c, m->cmds[i].cmd)) continue;
        commands_call(c, m->cmds[i].cmd);
    }
    c->srv->in_exec = false;
    propagate_unit_end(c->srv);
    c->flags &= ~CLIENT_DENY_BLOCKING;
    c->argc = saved_argc;
    c->argv = saved_argv;
    c->cmd = c->lastcmd = saved_cmd; /* CLIENT LIST's cmd=exec, as in Redis */
    c->mstate = m;
    discard_transaction(c);
}

static void cmd_watch(client_t *c) {
    if (c->mstate) {
        reply_error(c, "WATCH inside MULTI is not allowed");
        return;
    }
    for (int j = 1; j < c->argc; j++) watch_one(c, c->argv[j]);
    reply_ok(c);
}

static void cmd_unwatch(client_t *c) {
    unwatch_all(c);
    reply_ok(c);
}

command_t multi_commands[] = {
    {"multi", cmd_multi, 1, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST, 0, 0, 0, "transactions", "Mark the start of a transaction block", "1.2.0", NULL},
    {"exec", cmd_exec, 1, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "transactions", "Execute all commands issued after MULTI", "1.2.0", NULL},
    {"discard", cmd_discard, 1, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST, 0, 0, 0, "transactions", "Discard all commands issued after MULTI", "2.0.0", NULL},
    {"watch", cmd_watch, -2, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST, 1, -1, 1, "transactions", "Watch the given keys to determine execution of the MULTI/EXEC block", "2.2.0", NULL},
    {"unwatch", cmd_unwatch, 1, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST, 0, 0, 0, "transactions", "Forget about all watched keys", "2.2.0", NULL},
    {0},
};
