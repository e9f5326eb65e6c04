/* blocking.c: clients blocked on keys (see blocking.h for the life cycle).
 *
 * Data: per database a dict key -> waitlist (FIFO of waiters, one waiter per
 * blocked client and key); a queue of waitlists whose key was written since
 * the last command (each at most once: waitlist.queued); an array of clients
 * unblocked but not yet resumed (their pipelined input waits behind them).
 *
 * Invariants: a client has CLIENT_BLOCKED iff c->bstate != NULL iff its
 * waiters are linked in their waitlists; a waitlist exists iff it has at
 * least one waiter, and is in the ready queue iff `queued`; a client is in
 * `unblocked` iff it has CLIENT_UNBLOCKED.  Serving re-runs the saved
 * request, so the handlers decide what a served client gets.  Nothing here
 * touches sockets: replies go through reply.c, timers through evloop.h.
 * The last section holds BZPOPMIN/BZPOPMAX/BZMPOP (over zset.h's public
 * interface), which t_zset.c leaves to this file. */
#include "blocking.h"

#include <limits.h>
#include <string.h>

#include "commands.h"
#include "conn.h"
#include "evloop.h"
#include "keyspace.h"
#include "latency_track.h"
#include "notify.h"
#include "persist.h"
#include "reply.h"
#include "slowlog.h"
#include "script.h"
#include "util.h"
#include "zset.h"

typedef struct waitlist waitlist_t;

typedef struct waiter {
    struct waiter *prev, *next; /* neighbours in the key's FIFO */
    waitlist_t *list;
    client_t *c;
    robj *key; /* in bstate->argv (owned there) */
} waiter_t;

struct waitlist {
    waiter_t *head, *tail; /* head = longest waiting */
    size_t len;
    db_t *db;
    sds key;     /* the dict's key */
    bool queued; /* in blocking_t.ready */
};

typedef struct blocked_state {
    db_t *db;
    command_t *cmd;
    int argc;
    robj **argv; /* copy of the request, one reference each */
    int nkeys;
    waiter_t *waiters;     /* nkeys of them */
    int type;              /* OBJ_LIST or OBJ_ZSET: what serves us */
    int timeout_reply;     /* BLOCK_REPLY_* */
    evloop_timer_t *timer; /* NULL when waiting forever */
    robj *ready_key;       /* set during a re-run */
    bool still_blocked;    /* a re-run found nothing again */
} blocked_state_t;

struct blocking {
    server_t *srv;
    dict **waiting;     /* per db: sds key -> waitlist_t * */
    waitlist_t **ready; /* FIFO of written keys with waiters */
    size_t nready, ready_cap;
    client_t **unblocked; /* to resume in before-sleep */
    size_t nunblocked, unblocked_cap;
    size_t blocked_clients;
};

static dict_type waiting_type = {dict_sds_hash, dict_sds_eq, NULL, dict_sds_free, NULL, false};

blocking_t *blocking_create(server_t *srv) {
    blocking_t *b = zcalloc(sizeof(*b));
    b->srv = srv;
    b->waiting = zcalloc(sizeof(dict *) * (size_t)srv->dbnum);
    for (int i = 0; i < srv->dbnum; i++) b->waiting[i] = dict_create(&waiting_type);
    return b;
}

/* Called after every client was freed, so every dict is empty by now. */
void blocking_free(blocking_t *b) {
    if (!b) return;
    for (int i = 0; i < b->srv->dbnum; i++) dict_release(b->waiting[i]);
    zfree(b->waiting);
    zfree(b->ready);
    zfree(b->unblocked);
    zfree(b);
}

size_t blocking_client_count(const server_t *srv) { return srv->blocking ? srv->blocking->blocked_clients : 0; }

/* Does a waiter of wl's go away when its key is deleted (XREADGROUP:
 * Redis 7.2's "blocking on nokey")? */
static bool unblocks_on_nokey(const waitlist_t *wl) {
    for (const waiter_t *w = wl->head; w; w = w->next) {
        const blocked_state_t *bs = w->c->bstate;
        if (bs && bs->cmd && !strcmp(bs->cmd->fullname, "xreadgroup")) return true;
    }
    return false;
}

void blocking_key_counts(const server_t *srv, size_t *keys, size_t *on_nokey) {
    *keys = *on_nokey = 0;
    const blocking_t *b = srv->blocking;
    if (!b) return;
    for (int i = 0; i < srv->dbnum; i++) {
        *keys += dict_size(b->waiting[i]);
        if (dict_size(b->waiting[i]) == 0) continue;
        dict_iter it;
        dict_iter_init(&it, b->waiting[i], false);
        for (dict_entry *de; (de = dict_next(&it));)
            if (unblocks_on_nokey(dict_get_val(de))) (*on_nokey)++;
        dict_iter_release(&it);
    }
}

/* Append p to a growable pointer array. */
static void push_ptr(void ***arr, size_t *n, size_t *cap, void *p) {
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 8;
        *arr = zrealloc(*arr, *cap * sizeof(void *));
    }
    (*arr)[(*n)++] = p;
}

/* Remove the first occurrence of p, keeping the order. */
static void remove_ptr(void **arr, size_t *n, void *p) {
    for (size_t i = 0; i < *n; i++) {
        if (arr[i] == p) {
            memmove(arr + i, arr + i + 1, (*n - i - 1) * sizeof(void *));
            (*n)--;
            return;
        }
    }
}

/* ------------------------------------------------------------ parsing */

/* Redis computes (long long)(seconds * 1000); on x86-64 an out-of-range
 * conversion yields LLONG_MIN, which is why "inf" and 1e30 are reported as
 * negative there.  We produce the same replies without the undefined cast. */
bool blocking_timeout_or_reply(client_t *c, robj *arg, long long *when_ms) {
    long double secs;
    if (!obj_get_long_double(arg, &secs)) {
        reply_error(c, "timeout is not a float or out of range");
        return false;
    }
    long double ms = secs * 1000.0L;
    if (ms >= 9.2e18L) { /* Redis 7.4's check (7.0 went on to call it negative) */
        reply_error(c, "timeout is out of range");
        return false;
    }
    long long t = ms > -9.2e18L ? (long long)ms : LLONG_MIN;
    /* A positive timeout under 1 ms is 1 ms, as in Redis: truncated to 0 it
     * would mean "block forever" (and 0.001 s can come out as 0.99.. ms). */
    if (t == 0 && ms > 0) t = 1;
    if (t < 0) {
        reply_error(c, "timeout is negative");
        return false;
    }
    if (t > 0) {
        long long now = util_mstime();
        if (t > LLONG_MAX - now) {
            reply_error(c, "timeout is out of range");
            return false;
        }
        t += now;
    }
    *when_ms = t;
    return true;
}

bool blocking_allowed(const client_t *c) { return !(c->flags & CLIENT_DENY_BLOCKING); }

robj *blocking_ready_key(const client_t *c) { return c->bstate ? c->bstate->ready_key : NULL; }

/* ------------------------------------------------------------ block */

static void on_timeout(void *arg);

static waitlist_t *waitlist_get(blocking_t *b, db_t *db, robj *key) {
    dict *d = b->waiting[db->id];
    waitlist_t *wl = dict_fetch_value(d, key->ptr);
    if (wl) return wl;
    wl = zcalloc(sizeof(*wl));
    wl->db = db;
    sds k = sds_dup(key->ptr);
    dict_add(d, k, wl);
    wl->key = k;
    return wl;
}

static bool waitlist_has(const waitlist_t *wl, const client_t *c) {
    return wl->tail && wl->tail->c == c; /* a client's waiters are appended together */
}

void blocking_block(client_t *c, int first, int nkeys, int type, long long timeout_ms, int timeout_reply) {
    if (c->bstate) { /* a re-run that found nothing: keep waiting */
        c->bstate->still_blocked = true;
        return;
    }
    blocking_t *b = c->srv->blocking;
    blocked_state_t *bs = zcalloc(sizeof(*bs));
    bs->db = c->db;
    bs->cmd = c->cmd;
    bs->type = type;
    bs->timeout_reply = timeout_reply;
    bs->argc = c->argc;
    bs->argv = zmalloc(sizeof(robj *) * (size_t)c->argc);
    for (int i = 0; i < c->argc; i++) {
        bs->argv[i] = c->argv[i];
        obj_incref(c->argv[i]);
    }
    bs->waiters = zcalloc(sizeof(waiter_t) * (size_t)nkeys);
    for (int i = 0; i < nkeys; i++) {
        robj *key = bs->argv[first + i]; /* our copy: argv dies after we return */
        waitlist_t *wl = waitlist_get(b, c->db, key);
        if (waitlist_has(wl, c)) continue; /* BLPOP k k 0 waits once on k */
        waiter_t *w = &bs->waiters[bs->nkeys++];
        w->key = key;
        w->c = c;
        w->list = wl;
        w->prev = wl->tail;
        if (wl->tail) wl->tail->next = w;
        else wl->head = w;
        wl->tail = w;
        wl->len++;
    }
    if (timeout_ms > 0) {
        long long delay = timeout_ms - util_mstime();
        bs->timer = evloop_oneshot_add(c->srv->loop, delay > 0 ? (long)(delay * 1000) : 1, on_timeout, c);
    }
    c->bstate = bs;
    c->flags |= CLIENT_BLOCKED;
    b->blocked_clients++;
}

/* ------------------------------------------------------------ unblock */

static void waitlist_remove(blocking_t *b, waiter_t *w) {
    waitlist_t *wl = w->list;
    if (w->prev) w->prev->next = w->next;
    else wl->head = w->next;
    if (w->next) w->next->prev = w->prev;
    else wl->tail = w->prev;
    wl->len--;
    if (wl->len == 0) {
        if (wl->queued) remove_ptr((void **)b->ready, &b->nready, wl);
        dict_delete(b->waiting[wl->db->id], wl->key); /* frees wl->key */
        zfree(wl);
    }
}

/* Undo blocking_block.  resume: queue c so its pipelined input runs. */
static void unblock(client_t *c, bool resume) {
    blocking_t *b = c->srv->blocking;
    blocked_state_t *bs = c->bstate;
    for (int i = 0; i < bs->nkeys; i++) waitlist_remove(b, &bs->waiters[i]);
    evloop_timer_free(bs->timer);
    for (int i = 0; i < bs->argc; i++) obj_decref(bs->argv[i]);
    zfree(bs->argv);
    zfree(bs->waiters);
    zfree(bs);
    c->bstate = NULL;
    c->flags &= ~CLIENT_BLOCKED;
    b->blocked_clients--;
    if (resume && !(c->flags & CLIENT_UNBLOCKED)) {
        c->flags |= CLIENT_UNBLOCKED;
        push_ptr((void ***)&b->unblocked, &b->nunblocked, &b->unblocked_cap, c);
        evloop_request_before_sleep(c->srv->loop);
    }
}

static void on_timeout(void *arg) {
    client_t *c = arg;
    /* The timer is freed by unblock(); libevent allows that in its callback. */
    if (c->bstate->timeout_reply == BLOCK_REPLY_NULL) reply_null(c);
    else reply_null_array(c);
    unblock(c, true);
}

bool blocking_unblock_client(client_t *c, bool error) {
    if (!c->bstate) return false;
    if (error) { /* a failed call of the blocked command (INFO commandstats) */
        command_t *was = c->cmd;
        c->cmd = c->bstate->cmd;
        reply_error(c, "UNBLOCKED client unblocked via CLIENT UNBLOCK");
        c->cmd = was;
    } else if (c->bstate->timeout_reply == BLOCK_REPLY_NULL) reply_null(c);
    else reply_null_array(c);
    unblock(c, true);
    return true;
}

void blocking_redirect(server_t *srv, blocking_moved_fn *moved) {
    if (!srv->blocking->blocked_clients) return;
    for (client_t *c = srv->clients_head; c; c = c->next) {
        blocked_state_t *bs = c->bstate;
        if (!bs) continue;
        robj *keys[64];
        int n = bs->nkeys < 64 ? bs->nkeys : 64;
        for (int i = 0; i < n; i++) keys[i] = bs->waiters[i].key;
        char err[256];
        if (!moved(srv, keys, n, err, sizeof(err))) continue;
        command_t *was = c->cmd; /* a failed call of the blocked command */
        c->cmd = bs->cmd;
        reply_error(c, "%s", err);
        c->cmd = was;
        unblock(c, true);
    }
}

void blocking_unblock_all(server_t *srv, const char *err) {
    for (client_t *c = srv->clients_head; c; c = c->next) {
        if (!c->bstate) continue;
        command_t *was = c->cmd; /* a failed call of the blocked command */
        c->cmd = c->bstate->cmd;
        reply_error(c, "%s", err);
        c->cmd = was;
        unblock(c, false);
        c->flags |= CLIENT_CLOSE_AFTER_REPLY;
    }
}

void blocking_client_freed(client_t *c) {
    if (c->bstate) unblock(c, false);
    if (c->flags & CLIENT_UNBLOCKED) {
        blocking_t *b = c->srv->blocking;
        remove_ptr((void **)b->unblocked, &b->nunblocked, c);
        c->flags &= ~CLIENT_UNBLOCKED;
    }
}

void blocking_resume_unblocked(server_t *srv) {
    blocking_t *b = srv->blocking;
    while (b->nunblocked) {
        client_t *c = b->unblocked[0];
        remove_ptr((void **)b->unblocked, &b->nunblocked, c);
        c->flags &= ~CLIENT_UNBLOCKED;
        if (!(c->flags & (CLIENT_CLOSE_ASAP | CLIENT_CLOSE_AFTER_REPLY))) conn_process_input(c);
    }
}

/* ------------------------------------------------------------ serving */

void blocking_signal_db_flushed(db_t *db) {
    blocking_t *b = db->srv->blocking;
    if (!b || b->blocked_clients == 0) return;
    dict_iter it;
    dict_entry *de;
    dict_iter_init(&it, b->waiting[db->id], false);
    while ((de = dict_next(&it))) {
        waitlist_t *wl = dict_get_val(de);
        if (wl->queued) continue;
        wl->queued = true;
        push_ptr((void ***)&b->ready, &b->nready, &b->ready_cap, wl);
    }
    dict_iter_release(&it);
}

void blocking_signal_key(db_t *db, robj *key) {
    blocking_t *b = db->srv->blocking;
    if (!b || b->blocked_clients == 0) return;
    waitlist_t *wl = dict_fetch_value(b->waiting[db->id], key->ptr);
    if (!wl || wl->queued) return;
    wl->queued = true;
    push_ptr((void ***)&b->ready, &b->nready, &b->ready_cap, wl);
}

static bool has_stream_reader(const waitlist_t *wl) {
    for (const waiter_t *w = wl->head; w; w = w->next)
        if (w->c->bstate->type == OBJ_STREAM) return true;
    return false;
}

void blocking_signal_db(db_t *db) {
    blocking_t *b = db->srv->blocking;
    if (!b || b->blocked_clients == 0 || dict_size(b->waiting[db->id]) == 0) return;
    dict_iter it;
    dict_entry *de;
    dict_iter_init(&it, b->waiting[db->id], false);
    while ((de = dict_next(&it))) {
        waitlist_t *wl = dict_get_val(de);
        /* A key that is gone matters to stream readers only: XREADGROUP
         * fails when its stream went away (SWAPDB with an empty db), as in
         * Redis 7.0; XREAD re-blocks. */
        if (wl->queued || (!db_find(db, dict_get_key(b->waiting[db->id], de)) && !has_stream_reader(wl))) continue;
        wl->queued = true;
        push_ptr((void ***)&b->ready, &b->nready, &b->ready_cap, wl);
    }
    dict_iter_release(&it);
}

/* Run c's saved request again, looking only at key.  The handler either
 * serves c (which then leaves every waitlist) or calls blocking_block. */
static void rerun(client_t *c, robj *key) {
    blocked_state_t *bs = c->bstate;
    bs->ready_key = key;
    bs->still_blocked = false;
    c->argv = bs->argv;
    c->argc = bs->argc;
    c->db = bs->db;
    c->cmd = bs->cmd;
    c->srv->mstime = util_mstime();
    /* The served command changes the dataset now: the AOF must see it. */
    long long dirty_before = c->srv->dirty, start = util_ustime();
    size_t views_mark = db_views_mark(db_views_of(c->srv)); /* db_views.h */
    persist_effects_begin(c->srv);                          /* its XCLAIMs and SETID as one MULTI/EXEC */
    bs->cmd->proc(c);
    persist_after_command(c, dirty_before);
    persist_effects_end(c->srv);
    db_views_release(c->srv->views, views_mark);
    /* A served command enters its latency histogram and the slow log now,
     * with the time it ran (not the time it waited), as in Redis 7.0. */
    if (!bs->still_blocked) {
        long long ran = util_ustime() - start;
        latency_track_record(c->srv, bs->cmd, ran);
        slowlog_record(c, ran);
    }
    c->argv = NULL;
    c->argc = 0;
    c->cmd = NULL;
    bs->ready_key = NULL;
    if (!bs->still_blocked) unblock(c, true);
}

/* Serve the waiters of one written key in arrival order while the key
 * holds a value they can take.  Clients that arrive meanwhile (none can:
 * handlers never block others) would wait for the next write. */
static void serve_waitlist(waitlist_t *wl) {
    db_t *db = wl->db;
    size_t todo = wl->len;
    waiter_t *w = wl->head;
    while (w && todo-- > 0) {
        waiter_t *next = w->next;
        robj *o = db_lookup_read(db, w->key, LOOKUP_NOTOUCH | LOOKUP_NOSTATS);
        client_t *c = w->c;
        /* Stream readers re-run on any write, the key gone or of another
         * type included: XREADGROUP then fails, as in Redis 7.0. */
        bool stream_reader = c->bstate->type == OBJ_STREAM;
        if (!o && !stream_reader) return; /* emptied: the rest keep waiting */
        /* A client being closed must not swallow a value. */
        if ((stream_reader || (int)o->type == c->bstate->type) &&
            !(c->flags & (CLIENT_CLOSE_ASAP | CLIENT_CLOSE_AFTER_REPLY))) {
            bool last = next == NULL;
            rerun(c, w->key); /* may free w and (if last) wl */
            if (last) return;
        }
        w = next;
    }
}

void blocking_handle_ready(server_t *srv) {
    blocking_t *b = srv->blocking;
    /* Not in the middle of a script (other clients are served while a long
     * one runs): its pushes are served once it has finished. */
    if (script_is_running(srv)) return;
    /* Serving may write more keys (BLMOVE's destination): they join the
     * queue and are served in the same pass, so chains resolve atomically. */
    while (b->nready) {
        waitlist_t *wl = b->ready[0];
        remove_ptr((void **)b->ready, &b->nready, wl);
        wl->queued = false;
        serve_waitlist(wl);
    }
}

/* ------------------------------------------------------------ BZPOPMIN, BZPOPMAX, BZMPOP
 *
 * The blocking sorted-set pops live here (t_zset.c leaves them to the
 * blocking machinery) and use only zset.h's public interface: walk from
 * the lowest or highest rank, copy the member, delete it. */

/* Pop up to count members of the zset o at key from one end.  nested:
 * BZMPOP's [key, [[member, score] ...]]; else BZPOP's [key, member, score]. */
static void bzpop_reply(client_t *c, robj *key, robj *o, bool max, long long count, bool nested) {
    unsigned long len = zset_length(o);
    long n = count > (long long)len ? (long)len : (long)count;
    reply_array_len(c, nested ? 2 : 3);
    reply_bulk_obj(c, key);
    if (nested) reply_array_len(c, n);
    for (long i = 0; i < n; i++) {
        zset_cursor_t cur;
        zset_cursor_at_rank(&cur, o, 0, max);
        size_t mlen;
        const char *m = zset_cursor_member(&cur, &mlen);
        sds member = sds_newlen(m, mlen); /* copied: the delete frees m */
        double score = zset_cursor_score(&cur);
        zset_delete(o, member, mlen);
        if (nested) reply_array_len(c, 2);
        reply_bulk_sds_take(c, member);
        reply_double(c, score);
    }
    /* logged as the non-blocking pop it did (ZPOPMIN key [n]), as in Redis */
    persist_propagate_pop(c, max ? "ZPOPMAX" : "ZPOPMIN", key, nested ? n : -1);
    /* The pop's event, then "del" if it emptied the key: Redis's order. */
    notify_keyspace_event(c->srv, NOTIFY_ZSET, max ? "zpopmax" : "zpopmin", key, c->db->id);
    if (zset_length(o) == 0) {
        db_delete(c->db, key);
        notify_keyspace_event(c->srv, NOTIFY_GENERIC, "del", key, c->db->id);
    } else {
        db_signal_modified(c->db, key);
    }
}

/* Serve from the first non-empty zset among c->argv[first..first+nkeys)
 * (only the ready key during a re-run), or block.  count -1: BZPOP form. */
static void bzpop_generic(client_t *c, int first, int nkeys, bool max, long long count, long long timeout) {
    robj *ready = blocking_ready_key(c);
    robj **keys = ready ? &ready : c->argv + first;
    int n = ready ? 1 : nkeys;
    for (int j = 0; j < n; j++) {
        robj *o = db_lookup_write(c->db, keys[j]);
        if (!o) continue;
        if (!db_check_type_or_reply(c, o, OBJ_ZSET)) return;
        bzpop_reply(c, keys[j], o, max, count < 0 ? 1 : count, count >= 0);
        return;
    }
    if (!blocking_allowed(c)) reply_null_array(c);
    else blocking_block(c, first, nkeys, OBJ_ZSET, timeout, BLOCK_REPLY_NULL_ARRAY);
}

static void bzpop_minmax(client_t *c, bool max) {
    long long timeout;
    if (!blocking_timeout_or_reply(c, c->argv[c->argc - 1], &timeout)) return;
    bzpop_generic(c, 1, c->argc - 2, max, -1, timeout);
}

static void cmd_bzpopmin(client_t *c) { bzpop_minmax(c, false); }
static void cmd_bzpopmax(client_t *c) { bzpop_minmax(c, true); }

/* BZMPOP timeout numkeys key... MIN|MAX [COUNT n] */
static void cmd_bzmpop(client_t *c) {
    long long numkeys, count = -1, timeout;
    if (!cmd_get_range_or_reply(c, c->argv[2], 1, LONG_MAX, &numkeys, "numkeys should be greater than 0")) return;
    if (numkeys > c->argc - 4) { /* no room left for MIN|MAX */
        reply_error(c, RL_ERR_SYNTAX);
        return;
    }
    int where_idx = 3 + (int)numkeys;
    bool max = !strcasecmp(c->argv[where_idx]->ptr, "max");
    if (!max && strcasecmp(c->argv[where_idx]->ptr, "min")) {
        reply_error(c, RL_ERR_SYNTAX);
        return;
    }
    for (int j = where_idx + 1; j < c->argc; j++) {
        if (count == -1 && !strcasecmp(c->argv[j]->ptr, "count") && j + 1 < c->argc) {
            if (!cmd_get_range_or_reply(c, c->argv[++j], 1, LONG_MAX, &count, "count should be greater than 0")) return;
        } else {
            reply_error(c, RL_ERR_SYNTAX);
            return;
        }
    }
    if (!blocking_timeout_or_reply(c, c->argv[1], &timeout)) return;
    bzpop_generic(c, 3, (int)numkeys, max, count == -1 ? 1 : count, timeout);
}

command_t zset_blocking_commands[] = {
    {"bzpopmin", cmd_bzpopmin, -3, CMD_WRITE | CMD_FAST | CMD_BLOCKING, 1, -2, 1, "sorted_set", "Remove and return the member with the lowest score from one or more sorted sets, or block until one is available", "5.0.0", NULL},
    {"bzpopmax", cmd_bzpopmax, -3, CMD_WRITE | CMD_FAST | CMD_BLOCKING, 1, -2, 1, "sorted_set", "Remove and return the member with the highest score from one or more sorted sets, or block until one is available", "5.0.0", NULL},
    {"bzmpop", cmd_bzmpop, -5, CMD_WRITE | CMD_BLOCKING, 0, 0, 0, "sorted_set", "Remove and return members with scores in a sorted set or block until one is available", "7.0.0", NULL},
    {0},
};
