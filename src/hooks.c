/* hooks.c: fills the hook tables of the lower layers (see hooks.h).
 *
 * Each function here is what a lower layer would have called directly if
 * it could include the module above it.  Their bodies are the order in
 * which the upper modules are told, so that order is read in one place. */
#include "hooks.h"

#include "acl.h"
#include "blocking.h"
#include "commands.h"
#include "conn.h"
#include "dispatch.h"
#include "durability_hooks.h"
#include "function.h"
#include "keyspace.h"
#include "monitor.h"
#include "multi.h"
#include "pause.h"
#include "persist.h"
#include "propagate.h"
#include "pubsub.h"
#include "reply.h"
#include "repl.h"
#include "tracking.h"

/* ------------------------------------------------------- conn.c's hooks */

/* Every module holding per-client state lets go of it; replication first
 * (a replica leaving or our master link dropping may still look at the
 * client's other state). */
static void conn_hook_client_freed(client_t *c) {
    repl_client_freed(c);
    multi_client_free(c);
    blocking_client_freed(c); /* leave every wait list, drop the saved request */
    pubsub_client_freed(c);   /* drop every subscription */
    tracking_client_freed(c); /* tracking off, BCAST prefixes left */
    pause_client_freed(c);    /* a postponed request is dropped */
    monitor_client_freed(c);  /* leave the MONITOR feed */
}

static void conn_hook_run_request(client_t *c) {
    if (c->argc > 0) dispatch_process(c);
    else if (c->flags & CLIENT_REPLICA) repl_replica_newline(c); /* repl.h: a loading replica's keepalive */
    /* the offset moves past the applied request (not one a pause holds) */
    if ((c->flags & (CLIENT_MASTER | CLIENT_PAUSED)) == CLIENT_MASTER) repl_master_applied(c);
    /* Serve clients blocked on keys this command wrote, before anyone
     * else runs a command (a push and its pop look atomic). */
    blocking_handle_ready(c->srv);
}

/* Counted in errorstats like any error reply, as Redis does. */
static void conn_hook_protocol_error(client_t *c, const char *msg) { reply_error(c, "%s", msg); }

static void conn_hook_before_sleep(server_t *srv) {
    blocking_resume_unblocked(srv);            /* their replies are flushed by conn.c just after */
    pause_check_deadline(srv);                 /* postponed requests run when a pause ends */
    repl_master_resume(srv);                   /* our master's stream held during a busy script */
    tracking_before_sleep(srv);                /* BCAST invalidations */
    if (srv->views) db_views_idle(srv->views); /* views taken outside any command */
}

static void conn_hook_client_info(const client_t *c, conn_client_info_t *out) {
    int n = tracking_client_flag_letters(c, out->tracking_flags, 0);
    out->tracking_flags[n] = '\0';
    out->sub = pubsub_client_channels(c);
    out->psub = pubsub_client_patterns(c);
    out->ssub = pubsub_client_shard_channels(c);
    out->multi = multi_queued_count(c);
    out->watch = multi_watched_count(c);
    out->user = acl_client_username(c);
    out->redir = tracking_client_redirect(c);
}

static const conn_hooks_t conn_hooks = {
    .client_created = acl_client_init,
    .client_freed = conn_hook_client_freed,
    .default_user_nopass = acl_default_nopass,
    .auth_required = acl_auth_required,
    .master_consumed = repl_master_consumed,
    .run_request = conn_hook_run_request,
    .protocol_error = conn_hook_protocol_error,
    .before_sleep = conn_hook_before_sleep,
    .client_info = conn_hook_client_info,
};

/* ------------------------------------ commands.c's hooks: the dispatcher */

static const dispatch_hooks_t dispatch_hooks = {
    .process = dispatch_process,
    .call = dispatch_call,
};

/* --------------------------------------------------- keyspace.c's hooks */

static void keyspace_key_expired(db_t *db, robj *key, bool lazy) {
    propagate_del(db->srv, db->id, key, lazy);  /* AOF and replicas: DEL (or UNLINK) */
    multi_touch_key(db->srv, db->id, key->ptr); /* an expiry invalidates WATCH */
}

static void keyspace_key_modified(db_t *db, robj *key) {
    blocking_signal_key(db, key);               /* wakes clients blocked on key, if any */
    multi_touch_key(db->srv, db->id, key->ptr); /* invalidates WATCH */
}

static void keyspace_db_flushed(db_t *db) {
    multi_touch_db(db->srv, db->id, -1);
    blocking_signal_db_flushed(db);
}

/* A swapdb load put other data under db: what a flush tells, and the
 * clients blocked on keys that may exist now. */
static void keyspace_db_replaced(db_t *db) {
    keyspace_db_flushed(db);
    blocking_signal_db(db);
}

static void keyspace_propagate(db_t *db, robj **argv, int argc) { propagate_command(db->srv, db->id, argv, argc); }

static const keyspace_hooks_t keyspace_hooks = {
    .keys_expire_locally = repl_keys_expire_locally,
    .writes_paused = pause_active,
    .key_expired = keyspace_key_expired,
    .key_modified = keyspace_key_modified,
    .db_flushed = keyspace_db_flushed,
    .db_replaced = keyspace_db_replaced,
    .logging_on = persist_propagation_on,
    .log_as = persist_propagate_as,
    .propagate = keyspace_propagate,
};

/* ------------------------------------------ the durability layer's hooks */

static bool durability_replay_queue(client_t *c, command_t *cmd) {
    if (!multi_should_queue(c, cmd)) return false;
    multi_queue(c, cmd, cmd->flags);
    return true;
}

/* Clients blocked on keys of a master that turns replica: an error and
 * the close, Redis's text (their pops would fight the new master's). */
static void durability_became_replica(server_t *srv) {
    blocking_unblock_all(srv, "UNBLOCKED force unblock from blocking operation, instance state changed (master -> "
                              "replica?)");
}

/* FAILOVER's write hold, one of pause.c's holders. */
static void failover_hold_writes(server_t *srv, bool on) { pause_hold_writes(srv, PAUSE_HOLD_FAILOVER, on); }

static const durability_hooks_t durability_hooks = {
    .foreach_function = functions_foreach_library,
    .load_function = functions_load_code,
    .flush_functions = functions_flush,
    .replay_queue = durability_replay_queue,
    .replay_end = multi_client_free,
    .hold_writes = failover_hold_writes,
    .became_replica = durability_became_replica,
};

void hooks_register(server_t *srv) {
    srv->durability_hooks = &durability_hooks;
    srv->keyspace_hooks = &keyspace_hooks;
    srv->conn_hooks = &conn_hooks;
    srv->dispatch_hooks = &dispatch_hooks;
}
