/* shutdown.c: SHUTDOWN and a signal's shutdown (see shutdown.h).
 *
 * Order, as in Redis 7.0: a master with lagging replicas holds writes and
 * waits (so a replica promoted after we exit has every write a client was
 * told OK for), then persist.c closes the AOF and makes the final save.
 * Persistence that fails, or the first AOF still being written, abandons
 * the shutdown unless FORCE: the writes resume, the waiting SHUTDOWN
 * callers get Redis's error, and the server keeps running.  SHUTDOWN ABORT
 * ends a wait the same way.  The replicas report their offset once a
 * second (REPLCONF ACK), so a wait lasts about that long even when they
 * are current. */
#include "shutdown.h"

#include <strings.h>

#include "config.h"
#include "listeners.h"
#include "loading.h"
#include "listeners.h"
#include "log.h"
#include "pause.h"
#include "persist.h"
#include "repl.h"
#include "reply.h"
#include "script.h"
#include "supervise.h"
#include "util.h"

#define ERR_SHUTDOWN "Errors trying to SHUTDOWN. Check logs."

static bool must_wait(server_t *srv, int flags) {
    return !(flags & SHUTDOWN_FLAG_NOW) && srv->cfg.shutdown_timeout > 0 && !repl_is_replica(srv) &&
           !repl_replicas_in_sync(srv);
}

/* Persist and let the loop end; false when persistence failed without
 * FORCE (logged). */
static bool finish(server_t *srv, int flags) {
    repl_log_shutdown_sync(srv);
    bool force = flags & SHUTDOWN_FLAG_FORCE;
    if (!persist_shutdown(srv, flags & SHUTDOWN_FLAG_NOSAVE, flags & SHUTDOWN_FLAG_SAVE, force) && !force) {
        log_msg(LL_WARNING, "Errors trying to shut down the server. Check the logs for more information.");
        return false;
    }
    /* No new client from here: the SHUTDOWN caller may see its link close
     * (the loop still runs a round) and must then be refused, as Redis. */
    listeners_close(srv);
    server_request_shutdown(srv);
    return true;
}

/* The wait is over without exiting: writes resume, the SHUTDOWN callers
 * get the error and read on. */
static void give_up_wait(server_t *srv) {
    srv->shutdown_deadline_ms = 0;
    pause_hold_writes(srv, PAUSE_HOLD_SHUTDOWN, false);
    for (client_t *c = srv->clients_head, *next; c; c = next) {
        next = c->next;
        if (!(c->flags & CLIENT_SHUTDOWN_WAIT)) continue;
        c->flags &= ~CLIENT_SHUTDOWN_WAIT;
        reply_error(c, ERR_SHUTDOWN);
        conn_process_input(c); /* what it pipelined behind SHUTDOWN (may free c) */
    }
}

bool shutdown_begin(server_t *srv, int flags, client_t *c) {
    if (srv->shutdown_deadline_ms) { /* one is waiting already: this caller waits for it */
        if (c) c->flags |= CLIENT_SHUTDOWN_WAIT;
        return false;
    }
    log_msg(LL_WARNING, "User requested shutdown..."); /* a signal's too, as Redis logs it */
    supervise_tell(srv->cfg.supervised, "STOPPING=1\n");
    if (must_wait(srv, flags)) {
        srv->shutdown_flags = flags;
        srv->shutdown_deadline_ms = util_mstime() + srv->cfg.shutdown_timeout * 1000;
        pause_hold_writes(srv, PAUSE_HOLD_SHUTDOWN, true);
        if (c) c->flags |= CLIENT_SHUTDOWN_WAIT;
        log_msg(LL_NOTICE, "Waiting for replicas before shutting down.");
        return false;
    }
    if (finish(srv, flags)) return true;
    if (c) reply_error(c, ERR_SHUTDOWN);
    return false;
}

void shutdown_cron(server_t *srv) {
    if (!srv->shutdown_deadline_ms) return;
    if (!repl_replicas_in_sync(srv) && util_mstime() < srv->shutdown_deadline_ms) return;
    if (!finish(srv, srv->shutdown_flags)) give_up_wait(srv);
}

/* SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT] */
void cmd_shutdown(client_t *c) {
    server_t *srv = c->srv;
    int flags = 0;
    bool abort = false;
    for (int j = 1; j < c->argc; j++) {
        const char *a = c->argv[j]->ptr;
        if (!strcasecmp(a, "nosave")) flags |= SHUTDOWN_FLAG_NOSAVE;
        else if (!strcasecmp(a, "save")) flags |= SHUTDOWN_FLAG_SAVE;
        else if (!strcasecmp(a, "now")) flags |= SHUTDOWN_FLAG_NOW;
        else if (!strcasecmp(a, "force")) flags |= SHUTDOWN_FLAG_FORCE;
        else if (!strcasecmp(a, "abort")) abort = true;
        else {
            reply_error(c, RL_ERR_SYNTAX);
            return;
        }
    }
    if ((abort && flags) || ((flags & SHUTDOWN_FLAG_SAVE) && (flags & SHUTDOWN_FLAG_NOSAVE))) {
        reply_error(c, RL_ERR_SYNTAX);
        return;
    }
    if (abort) {
        if (!srv->shutdown_deadline_ms) {
            reply_error(c, "No shutdown in progress.");
            return;
        }
        log_msg(LL_WARNING, "Shutdown manually aborted.");
        give_up_wait(srv);
        reply_ok(c);
        return;
    }
    /* A half-loaded dataset is never saved (loading.h; Redis's rule too). */
    if (loading_active(srv)) flags = (flags & ~SHUTDOWN_FLAG_SAVE) | SHUTDOWN_FLAG_NOSAVE;
    /* Inside a busy script (SHUTDOWN NOSAVE is what may run then) there is
     * no waiting: the loop the wait needs is the script's. */
    if (script_is_running(srv)) flags |= SHUTDOWN_FLAG_NOW;
    /* Exiting: no reply, the connection closes with the server, as in Redis. */
    if (shutdown_begin(srv, flags, c)) c->flags |= CLIENT_CLOSE_AFTER_REPLY;
}
