/* pause.c: CLIENT PAUSE / UNPAUSE (see pause.h).
 *
 * State: the pause kind (none, WRITE, ALL) and its deadline in ms; a new
 * CLIENT PAUSE only widens them (the stronger kind, the later deadline), as
 * in Redis.  Postponed clients wait in a FIFO with their request; each has
 * CLIENT_PAUSED set, which stops conn.c from parsing more of its input. */
#include "pause.h"

#include <string.h>
#include <strings.h>

#include "commands.h"
#include "conn.h"
#include "multi.h"
#include "reply.h"
#include "util.h"
#include "zmalloc.h"

enum { PAUSE_NONE = 0,
       PAUSE_WRITE = 1,
       PAUSE_ALL = 2 };

typedef struct waiting {
    client_t *c;
    robj **argv; /* the request, owned here while waiting */
    int argc;
} waiting_t;

struct pause {
    int type;         /* PAUSE_* of CLIENT PAUSE */
    int holders;      /* PAUSE_HOLD_*: FAILOVER, a shutdown waiting for replicas, CLUSTER FAILOVER */
    long long end_ms; /* unix ms */
    waiting_t *waiting;
    size_t n, cap;
};

pause_t *pause_create(void) { return zcalloc(sizeof(pause_t)); }

size_t pause_waiting_count(const server_t *srv) { return srv->pause ? srv->pause->n : 0; }

static void drop_request(waiting_t *w) {
    for (int i = 0; i < w->argc; i++) obj_decref(w->argv[i]);
    zfree(w->argv);
}

void pause_free(pause_t *p) {
    if (!p) return;
    for (size_t i = 0; i < p->n; i++) drop_request(&p->waiting[i]);
    zfree(p->waiting);
    zfree(p);
}

/* The pause in force: CLIENT PAUSE's, or WRITE while something holds. */
static int effective(const pause_t *p) {
    if (p->type != PAUSE_NONE) return p->type;
    return p->holders ? PAUSE_WRITE : PAUSE_NONE;
}

bool pause_active(server_t *srv) { return effective(srv->pause) != PAUSE_NONE; }

/* Writes, and commands that may replicate (PUBLISH, ...), or an EXEC of
 * any of them (flags: dispatch.c's). */
static bool covered(uint32_t flags, int type) {
    return type == PAUSE_ALL || (flags & (CMD_WRITE | CMD_MAY_REPLICATE));
}

bool pause_postpone(client_t *c, uint32_t flags) {
    pause_t *p = c->srv->pause;
    /* Our replicas' links are never paused: their ACKs are what WAIT and
     * FAILOVER wait for.  Our master's stream is, as in Redis 7.0: a
     * paused replica stops applying it (in order: the link parses no
     * further request meanwhile) and its offset stays where it was. */
    if (c->flags & CLIENT_REPLICA) return false;
    int type = effective(p);
    if (type == PAUSE_NONE || !covered(flags, type)) return false;
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 8;
        p->waiting = zrealloc(p->waiting, p->cap * sizeof(waiting_t));
    }
    /* The argv array belongs to the parser (reused for the next request):
     * copy it; the references move to the copy, and with argc 0 conn.c
     * releases nothing. */
    robj **argv = zmalloc(sizeof(robj *) * (size_t)c->argc);
    memcpy(argv, c->argv, sizeof(robj *) * (size_t)c->argc);
    p->waiting[p->n++] = (waiting_t){c, argv, c->argc};
    c->argc = 0;
    c->flags |= CLIENT_PAUSED;
    return true;
}

static void end_pause(server_t *srv) {
    pause_t *p = srv->pause;
    p->type = PAUSE_NONE;
    p->end_ms = 0;
    /* Run the postponed requests in arrival order; a request may pause the
     * server again, and then the rest wait for that pause. */
    while (p->n && effective(p) == PAUSE_NONE) {
        waiting_t w = p->waiting[0];
        memmove(p->waiting, p->waiting + 1, (p->n - 1) * sizeof(waiting_t));
        p->n--;
        client_t *c = w.c;
        c->flags &= ~CLIENT_PAUSED;
        c->argv = w.argv;
        c->argc = w.argc;
        srv->conn_hooks->run_request(c); /* as conn.c runs a request (hooks.c) */
        /* Put aside again, the references moved to a new copy (argc is 0
         * then); otherwise they are released here. */
        for (int i = 0; i < c->argc; i++) obj_decref(c->argv[i]);
        zfree(w.argv);
        c->argv = NULL;
        c->argc = 0;
        if (!(c->flags & CLIENT_PAUSED)) conn_process_input(c);
    }
}

void pause_hold_writes(server_t *srv, int holder, bool on) {
    pause_t *p = srv->pause;
    p->holders = on ? p->holders | holder : p->holders & ~holder;
    if (!p->holders && p->type == PAUSE_NONE) end_pause(srv);
}

void pause_check_deadline(server_t *srv) {
    pause_t *p = srv->pause;
    if (p->type != PAUSE_NONE && util_mstime() >= p->end_ms) end_pause(srv);
}

void pause_client_freed(client_t *c) {
    pause_t *p = c->srv->pause;
    if (!(c->flags & CLIENT_PAUSED)) return;
    for (size_t i = 0; i < p->n; i++) {
        if (p->waiting[i].c != c) continue;
        drop_request(&p->waiting[i]);
        memmove(p->waiting + i, p->waiting + i + 1, (p->n - i - 1) * sizeof(waiting_t));
        p->n--;
        break;
    }
    c->flags &= ~CLIENT_PAUSED;
}

/* CLIENT PAUSE timeout-ms [WRITE|ALL] */
void cmd_client_pause(client_t *c) {
    pause_t *p = c->srv->pause;
    long long ms;
    int type = PAUSE_ALL;
    if (!cmd_get_ll_or_reply(c, c->argv[2], &ms, "timeout is not an integer or out of range")) return;
    if (ms < 0) {
        reply_error(c, "timeout is negative");
        return;
    }
    if (c->argc == 4) {
        if (!strcasecmp(c->argv[3]->ptr, "write")) type = PAUSE_WRITE;
        else if (strcasecmp(c->argv[3]->ptr, "all")) {
            reply_error(c, "CLIENT PAUSE mode must be WRITE or ALL");
            return;
        }
    } else if (c->argc > 4) {
        reply_subcommand_syntax_error(c);
        return;
    }
    long long end = util_mstime() + ms;
    if (type > p->type) p->type = type;
    if (end > p->end_ms) p->end_ms = end;
    reply_ok(c);
}

void cmd_client_unpause(client_t *c) {
    reply_ok(c);
    if (c->srv->pause->type != PAUSE_NONE) end_pause(c->srv);
}
