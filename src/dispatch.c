/* dispatch.c: running a request: resolve, check, then call the handler.
 *
 * Check order follows Redis 7 so clients see the same error for the same
 * mistake: unknown command -> unknown subcommand -> arity -> protected
 * (DEBUG, MODULE LOAD when enable-*-command forbids them) -> NOAUTH ->
 * ACL (NOPERM) -> busy script -> maxmemory (OOM) -> pub/sub context ->
 * MISCONF -> replica rules -> NO_MULTI -> CLIENT PAUSE -> MULTI queueing
 * -> execute.  Errors before execution count as rejected_calls, errors
 * replied by the handler as failed_calls.  After the handler: tracking,
 * the AOF/replica feed, statistics, slowlog, latency, MONITOR.
 *
 * The dispatcher sits above every module it consults; the connection layer
 * reaches it through conn.h's hooks, and the modules that run a command
 * from inside another (EXEC, CLIENT PAUSE's resume, redis.call) through
 * commands_process/commands_call (commands.h), both wired by hooks.c. */
#include "dispatch.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "acl.h"
#include "acl_user.h"
#include "cluster.h"
#include "cluster_bus.h"
#include "db_views.h"
#include "evict.h"
#include "function.h"
#include "latency.h"
#include "latency_track.h"
#include "loading.h"
#include "log.h"
#include "monitor.h"
#include "multi.h"
#include "pause.h"
#include "persist.h"
#include "pubsub.h"
#include "repl.h"
#include "reply.h"
#include "rl_assert.h"
#include "script.h"
#include "slowlog.h"
#include "tracking.h"
#include "util.h"

/* "unknown command 'foo', with args beginning with: 'a' 'b' " */
static void reply_unknown_command(client_t *c) {
    sds args = sds_empty();
    for (int i = 1; i < c->argc && sds_len(args) < 128; i++) {
        size_t room = 128 - sds_len(args);
        args = sds_catprintf(args, "'%.*s' ", (int)room, (char *)c->argv[i]->ptr);
    }
    reply_error(c, "unknown command '%.128s', with args beginning with: %s", (char *)c->argv[0]->ptr, args);
    sds_free(args);
}

/* Whether the len bytes of s spell the command name, ignoring ASCII case
 * (strcasecmp's rule; names in the table are lower case, commands.c
 * checks): inline, since names are a few bytes and a libc call plus
 * strlen cost more than the loop. */
static inline bool same_name(const char *s, size_t len, const char *name) {
    for (size_t i = 0; i < len; i++) {
        unsigned char a = (unsigned char)s[i];
        if ((unsigned)(a - 'A') < 26u) a |= 0x20;
        if (a != (unsigned char)name[i] || !a) return false;
    }
    return name[len] == '\0';
}

/* A pipeline usually repeats one command: compare with the client's last
 * command before hashing the name. */
static command_t *lookup_top(client_t *c) {
    command_t *last = c->lastcmd;
    if (last) {
        if (last->parent) last = last->parent;
        sds name = c->argv[0]->ptr;
        if (same_name(name, sds_len(name), last->name)) return last;
    }
    return dict_fetch_value(c->srv->commands, c->argv[0]->ptr);
}

/* Resolve argv to a command, replying with the right error if it fails. */
static command_t *resolve(client_t *c) {
    command_t *cmd = lookup_top(c);
    if (!cmd) {
        reply_unknown_command(c);
        return NULL;
    }
    if (cmd->subcommands && c->argc >= 2) {
        command_t *sub = commands_find_subcommand(cmd, c->argv[1]->ptr);
        if (!sub) {
            sds up = sds_new(cmd->name);
            sds_toupper(up);
            reply_error(c, "unknown subcommand '%.128s'. Try %s HELP.", (char *)c->argv[1]->ptr, up);
            sds_free(up);
            cmd->rejected_calls++;
            return NULL;
        }
        cmd = sub;
    }
    if (!commands_arity_ok(cmd, c->argc)) {
        reply_error(c, "wrong number of arguments for '%s' command", cmd->fullname);
        cmd->rejected_calls++;
        return NULL;
    }
    return cmd;
}

static bool is_named(const command_t *cmd, const char *name) { return !strcmp(cmd->name, name); }

/* Refused when memory is over maxmemory (Redis 7.0): commands that may
 * grow memory (flags: EXEC's are those of what it runs), and any command
 * queued inside MULTI but EXEC, DISCARD, QUIT and RESET. */
static bool oom_rejects(const client_t *c, const command_t *cmd, uint32_t flags) {
    if (flags & CMD_DENYOOM) return true;
    if (!c->mstate || cmd->parent) return c->mstate != NULL;
    return !is_named(cmd, "exec") && !is_named(cmd, "discard") && !is_named(cmd, "quit") && !is_named(cmd, "reset");
}

static void process(client_t *c);

/* The flags the checks see (Redis's getCommandFlags): EXEC's are those of
 * what it runs (multi.c), a script's those it declares (script.h); only
 * commands scripts may not call (CMD_NOSCRIPT) can be either. */
static uint32_t command_flags(client_t *c, const command_t *cmd) {
    if (!(cmd->flags & CMD_NOSCRIPT)) return cmd->flags;
    if (c->mstate && is_named(cmd, "exec")) return multi_exec_flags(c, cmd->flags);
    int sflags;
    if (script_eval_declared_flags(c->srv, c, cmd, &sflags) || functions_declared_flags(c->srv, c, cmd, &sflags))
        return script_flags_as_command(cmd->flags, sflags);
    return cmd->flags;
}

/* NOPERM with Redis 7.4's texts; the denial is in the ACL log.  A refused
 * EXEC aborts its transaction, as any refused EXEC does. */
static bool acl_allows_or_reply(client_t *c, command_t *cmd) {
    if (!c->user || c->user->unrestricted) return true; /* the common case, inline */
    int pos;
    int r = acl_check_and_log(c, c->user, cmd, c->argv, c->argc, c->mstate ? ACL_CTX_MULTI : ACL_CTX_TOPLEVEL, &pos);
    if (r == ACL_OK) return true;
    sds msg = acl_cat_denial(sds_new("NOPERM "), r, c->user, cmd, NULL, 0, false);
    if (is_named(cmd, "exec")) multi_exec_abort(c, msg);
    else reply_error(c, "%s", msg);
    sds_free(msg);
    return false;
}

/* CLIENT REPLY SKIP silences exactly the command after it. */
static void advance_reply_skip(client_t *c) {
    c->flags &= ~CLIENT_REPLY_SKIP;
    if (c->flags & CLIENT_REPLY_SKIP_NEXT) {
        c->flags |= CLIENT_REPLY_SKIP;
        c->flags &= ~CLIENT_REPLY_SKIP_NEXT;
    }
}

void dispatch_process(client_t *c) {
    process(c);
    /* ASKING lasts one command, refused ones too, or a whole MULTI
     * (Redis's rule); ASKING itself does not use it up. */
    if ((c->cluster_flags & CLUSTER_CLIENT_ASKING) && !c->mstate && c->lastcmd && strcmp(c->lastcmd->name, "asking"))
        c->cluster_flags &= (uint8_t)~CLUSTER_CLIENT_ASKING;
    if (c->flags & CLIENT_PAUSED) return; /* pause.c runs it later */
    advance_reply_skip(c);
    tracking_command_done(c, c->lastcmd); /* CLIENT CACHING lasts one command */
}

/* A check refused cmd with err: counted, and inside MULTI the transaction
 * is flagged; EXEC itself is aborted with the reason, as Redis does. */
static void reject(client_t *c, command_t *cmd, const char *err) {
    cmd->rejected_calls++;
    if (is_named(cmd, "exec")) {
        multi_exec_abort(c, err);
    } else {
        reply_error(c, "%s", err);
        multi_flag_error(c);
    }
}

static void process(client_t *c) {
    server_t *srv = c->srv;
    c->cmd = NULL;
    command_t *cmd = resolve(c);
    if (!cmd) {
        multi_flag_error(c); /* inside MULTI, EXEC will abort */
        return;
    }
    c->lastcmd = cmd; /* CLIENT LIST's cmd= names queued commands too */
    const char *prot = commands_protected_refusal(c, cmd);
    if (prot) {
        reject(c, cmd, prot);
        return;
    }
    if (!(c->flags & CLIENT_AUTHENTICATED) && !(cmd->flags & CMD_NO_AUTH) && acl_auth_required(c)) {
        reply_error(c, RL_ERR_NOAUTH);
        cmd->rejected_calls++;
        multi_flag_error(c);
        return;
    }
    /* acl.c: the user's permissions (a NO_MULTI command inside MULTI gets
     * its own error below, as Redis checks that first). */
    if (!(c->mstate && (cmd->flags & CMD_NO_MULTI)) && !acl_allows_or_reply(c, cmd)) {
        cmd->rejected_calls++;
        multi_flag_error(c);
        return;
    }
    /* cluster.c: the slot of the keys is served elsewhere, or not at all
     * (-MOVED, -ASK, -CROSSSLOT, -CLUSTERDOWN...); Redis's place in the
     * checks, right after ACL; a script that declares writes routes as one. */
    uint32_t flags = command_flags(c, cmd);
    if (srv->cluster && !cluster_route_or_reply(c, cmd, (flags & CMD_WRITE) != 0)) return;
    /* script.c: while a script runs too long, only what can end it runs
     * (before the OOM check: no eviction under a running script). */
    const char *busy = script_busy_error(c, cmd);
    if (busy) {
        reject(c, cmd, busy);
        return;
    }
    /* Our master's stream is applied whatever our memory (Redis's rule). */
    if (!(c->flags & CLIENT_MASTER) && oom_rejects(c, cmd, flags) && !evict_perform(srv)) {
        reject(c, cmd, RL_ERR_OOM);
        return;
    }
    /* pubsub.c: a RESP2 client in subscribed mode may only manage its
     * subscriptions (RESP3 multiplexes pushes with ordinary replies). */
    if ((c->flags & CLIENT_PUBSUB) && c->resp == 2 && !pubsub_allowed_in_context(cmd)) {
        reply_error(c, "Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are "
                       "allowed in this context",
                    cmd->fullname);
        cmd->rejected_calls++;
        multi_flag_error(c);
        return;
    }
    /* persist.c: MISCONF while the last save or AOF write failed, for
     * writes and for PING (as Redis 7.0: a health check then reports the
     * fault); our master's writes are not refused (see
     * replica-ignore-disk-write-errors). */
    if ((flags & CMD_WRITE) && (c->flags & CLIENT_MASTER)) persist_check_master_write(c->srv);
    const char *err = NULL;
    if (((flags & CMD_WRITE) || is_named(cmd, "ping")) && !(c->flags & CLIENT_MASTER))
        err = persist_write_refusal(c->srv);
    /* repl.h: READONLY replica, MASTERDOWN, NOREPLICAS; loading.h: LOADING. */
    if (!err) err = repl_command_refusal(c, flags);
    if (!err) err = loading_refusal(c, flags);
    if (err) {
        reject(c, cmd, err);
        return;
    }
    /* SAVE, SHUTDOWN and the like cannot wait in a transaction (Redis's
     * NO_MULTI flag): refused now, and EXEC will abort. */
    if (c->mstate && (cmd->flags & CMD_NO_MULTI)) {
        reply_error(c, "Command not allowed inside a transaction");
        cmd->rejected_calls++;
        multi_flag_error(c);
        return;
    }
    /* pause.c: under CLIENT PAUSE the request waits (even to be queued). */
    if (pause_postpone(c, flags)) return;
    if (multi_should_queue(c, cmd)) {
        multi_queue(c, cmd, flags);
        return;
    }
    dispatch_call(c, cmd);
}

/* Debug builds (RL_DEBUG >= 2): every command answers, blocks, or is
 * closing its client; a handler that returns silently leaves its client
 * waiting forever, so it is named in the log before the abort. */
static void check_replied(client_t *c, command_t *cmd, unsigned long long replies_before) {
#if RL_DEBUG >= 2
    if (c->reply_calls != replies_before) return;
    /* CLIENT REPLY OFF|SKIP answers nothing, by request. */
    if (c->flags & (CLIENT_BLOCKED | CLIENT_CLOSE_AFTER_REPLY | CLIENT_CLOSE_ASAP | CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP |
                    CLIENT_REPLY_SKIP_NEXT | CLIENT_REPL_WAIT | CLIENT_SHUTDOWN_WAIT | CLIENT_MASTER | CLIENT_REPLICA))
        return;
    log_msg(LL_WARNING, "command '%s' neither replied nor blocked", cmd->fullname ? cmd->fullname : cmd->name);
    rl_assert_fail("command replied or blocked", __FILE__, __LINE__);
#else
    (void)c, (void)cmd, (void)replies_before;
#endif
}

void dispatch_call(client_t *c, command_t *cmd) {
    server_t *srv = c->srv;
    c->cmd = c->lastcmd = cmd;
    client_t *outer = srv->current_client; /* EXEC runs commands inside a command */
    /* One clock read serves both the cached time commands see and the
     * start of the duration measurement; inside a pipelined batch the
     * previous command's end is that read (server.h: clock_chain_us), so
     * only parsing the request lies between.  Not with maxmemory, where
     * eviction may run between two commands and is not theirs. */
    bool chain = !outer && srv->clock_chain_us != 0 && srv->cfg.maxmemory <= 0;
    long long start = chain && srv->clock_chain_us > 0 ? srv->clock_chain_us : util_ustime();
    /* A command run by another (a script's, EXEC's) sees the time its
     * caller started at: keys do not expire in the middle of a script,
     * which a replica replaying its effects could not reproduce. */
    if (!outer) srv->mstime = start / 1000;
    long long dirty_before = srv->dirty;
    long long woff_before = repl_offset(srv);
    unsigned long long replies_before = c->reply_calls;
    srv->current_client = c;
    if (!outer) srv->top_client = c;
    /* Views of embedded values (db_views.h) live as long as the command:
     * its propagation and tracking below included. */
    size_t views_mark = db_views_mark(db_views_of(srv));
    /* monitor.c: EVAL and FCALL are shown before the commands they run
     * (Redis's SKIP_MONITOR commands are fed first, not after). */
    if (cmd->flags & CMD_SKIP_MONITOR) monitor_feed(c);
    /* persist.c: what a client's command logs (its own write, the DELs of
     * the expired keys it met, XREADGROUP's XCLAIMs...) reaches the AOF
     * and the replicas as one MULTI/EXEC when it is more than one command,
     * as in Redis 7.0; EXEC's and a script's commands are inside it. */
    if (!outer) persist_effects_begin(srv);
    /* A replica's link carries our stream: a command it sent that would
     * answer (a rogue PING, GET...) must not put its reply in the stream.
     * The reply is dropped and the replica disconnected, as Redis does
     * (REPLCONF ACK answers nothing; a second SYNC is ignored). */
    bool rogue_watch = (c->flags & CLIENT_REPLICA) && !(c->flags & CLIENT_REPLY_OFF) &&
                       strcmp(cmd->name, "replconf") && strcmp(cmd->name, "sync") && strcmp(cmd->name, "psync");
    if (rogue_watch) {
        c->flags |= CLIENT_REPLY_OFF;
        c->replica_replied = false;
    }
    cmd->proc(c);
    if (rogue_watch) {
        c->flags &= ~CLIENT_REPLY_OFF;
        if (c->replica_replied) {
            sds info = conn_info_string(sds_empty(), c);
            log_msg(LL_WARNING, "Replica generated a reply to command '%s', disconnecting it: %s", cmd->fullname,
                    info);
            sds_free(info);
            conn_close_async(c);
        }
    }
    check_replied(c, cmd, replies_before);
    /* cluster_relay.c: PUBLISH reaches every node of a cluster, SPUBLISH
     * the other nodes of our shard (pubsub.c sits below the bus and
     * cannot hand them over itself). */
    if (srv->cluster && (cmd->flags & CMD_PUBSUB) && !cmd->parent) {
        bool shard = !strcmp(cmd->name, "spublish"); /* SPUBLISH: to our shard's nodes only */
        if (shard || !strcmp(cmd->name, "publish")) {
            char buf[32];
            size_t mlen;
            const char *msg = obj_string_view(c->argv[2], buf, sizeof(buf), &mlen);
            sds chan = c->argv[1]->ptr;
            cluster_bus_publish(srv, chan, sds_len(chan), msg, mlen, shard);
        }
    }
    /* acl.c: the client's user was deleted by this very command. */
    if (c->flags & CLIENT_CLOSE_AFTER_COMMAND) c->flags = (c->flags & ~CLIENT_CLOSE_AFTER_COMMAND) | CLIENT_CLOSE_AFTER_REPLY;
    tracking_after_command(c, cmd); /* tracking.c: remember the keys it read */
    srv->current_client = outer;
    if (!outer) srv->top_client = NULL;
    /* The caller's own invalidations follow its reply (Redis's order). */
    if (!outer) tracking_flush_pending(srv);
    /* persist.c: log a write that changed the dataset to the AOF. */
    if ((cmd->flags & CMD_WRITE) || (c->flags & CLIENT_PROPAGATE_REPL)) persist_after_command(c, dirty_before);
    if (!outer) persist_effects_end_as(srv, !(cmd->flags & CMD_TOUCHES_ARBITRARY_KEYS));
    /* WAIT and WAITAOF wait for the caller's own last write (Redis's woff) */
    if (repl_offset(srv) != woff_before) c->woff = repl_offset(srv);
    long long end = util_ustime(), dur = end - start;
    if (chain) srv->clock_chain_us = end;
    cmd->calls++;
    cmd->usec += dur;
    srv->stats.numcommands++;
    if (!outer) srv->stats.eventloop_duration_cmd_sum += dur; /* a top-level call: part of its loop round */
    c->commands_processed++;
    /* Introspection (slowlog.c, latency.c, monitor.c); a command that
     * blocked is not finished yet, so it is not timed. */
    if (!(c->flags & CLIENT_BLOCKED)) {
        slowlog_record(c, dur);
        latency_record_command(srv, cmd, dur);
        latency_track_record(srv, cmd, dur);
    }
    if (!(cmd->flags & CMD_SKIP_MONITOR)) monitor_feed(c);
    db_views_release(srv->views, views_mark);
    c->cmd = NULL;
}
