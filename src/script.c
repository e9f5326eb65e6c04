/* script.c: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, SCRIPT, and the run of any
 * script (see script.h).
 *
 * Scripts are cached by the SHA-1 of their body: EVAL compiles a body once
 * and keeps the function in the Lua registry (script_entry.ref); SCRIPT
 * FLUSH drops the whole Lua state, which returns its memory at once.
 *
 * Eviction (Redis 7.4): a client that sends a new body with every EVAL
 * would grow the cache without end, so the scripts that EVAL created (not
 * SCRIPT LOAD's, which a client relies on for EVALSHA) sit in a
 * least-recently-run list of at most EVAL_LRU_MAX; creating one more drops
 * the head (its body, its registry slot: the Lua GC takes the function)
 * and counts it in INFO evicted_scripts.  A run by EVAL or EVALSHA moves
 * the script to the tail.  A later SCRIPT LOAD of a script EVAL created
 * leaves it evictable, as in 7.4.1.
 *
 * A run: script_run_init (flags, read-only), script_may_run_or_reply (OOM
 * and MISCONF for scripts that declare writes), script_run_begin (the
 * fake client takes the caller's db, the AOF starts staging the effects),
 * slua_call, script_run_end.  While it runs, busy_tick (the engine's
 * script_run_ops_t call from its Lua hook, every 100k instructions) checks
 * the clock: past busy-reply-threshold the script is "timed out": the
 * caller is protected from being freed, other clients are served with
 * -BUSY, and SCRIPT KILL, FUNCTION KILL or SHUTDOWN NOSAVE can end it. */
#include "command_meta.h"
#include "script.h"

#include <errno.h>
#include <lauxlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "evict.h"
#include "evloop.h"
#include "lazyfree.h"
#include "log.h"
#include "persist.h"
#include "repl.h"
#include "reply.h"
#include "rl_assert.h"
#include "script_ldb.h"
#include "sha1.h"
#include "util.h"

/* Invariant: an entry is in the eviction list (lru_prev/lru_next linked,
 * counted in scripting_t.lru_len) iff EVAL created it. */
typedef struct script_entry {
    sds body;
    sds sha;   /* borrowed: the scripts dict's key */
    int ref;   /* the compiled function in the Lua registry */
    int flags; /* SCRIPT_FLAG_* from the shebang */
    bool evictable;
    struct script_entry *lru_prev, *lru_next; /* older, newer */
} script_entry;

#define EVAL_LRU_MAX 500 /* EVAL-created scripts kept (Redis 7.4's LRU_LIST_LENGTH) */

static void entry_free(void *p) {
    script_entry *e = p;
    sds_free(e->body);
    zfree(e);
}

static dict_type scripts_type = {dict_sds_hash, dict_sds_eq, NULL, dict_sds_free, entry_free, false};

#define S(srv) ((srv)->scripting)

/* ------------------------------------------------------------ fake client */

static client_t *fake_new(server_t *srv) {
    client_t *c = zcalloc(sizeof(*c));
    c->fd = -1;
    c->srv = srv;
    c->db = &srv->dbs[0];
    c->resp = 2;
    c->flags = CLIENT_FAKE | CLIENT_AUTHENTICATED | CLIENT_DENY_BLOCKING;
    c->querybuf = sds_empty();
    snprintf(c->addr, sizeof(c->addr), "lua");
    return c;
}

static void fake_free(client_t *f) {
    if (!f) return;
    conn_discard_output(f);
    sds_free(f->querybuf);
    zfree(f);
}

/* ------------------------------------------------------------ lifecycle */

static void eval_state_reset(scripting_t *s, server_t *srv) {
    slua_free(s->L);
    s->L = slua_new(srv, NULL);
    dict_empty(s->scripts);
    s->scripts_bytes = 0;
    s->lru_oldest = s->lru_newest = NULL;
    s->lru_len = 0;
}

void scripting_init(server_t *srv) {
    scripting_t *s = zcalloc(sizeof(*s));
    srv->scripting = s;
    s->scripts = dict_create(&scripts_type);
    s->L = slua_new(srv, NULL);
    s->fake = fake_new(srv);
}

void scripting_free(server_t *srv) {
    scripting_t *s = S(srv);
    if (!s) return;
    for (int i = 0; i < s->debug_nchildren; i++) {
        log_msg(LL_WARNING, "Killing debugging session %ld", (long)s->debug_children[i]);
        kill(s->debug_children[i], SIGKILL);
        while (waitpid(s->debug_children[i], NULL, 0) < 0 && errno == EINTR) {}
    }
    zfree(s->debug_children);
    slua_free(s->L);
    dict_release(s->scripts);
    fake_free(s->fake);
    zfree(s);
    srv->scripting = NULL;
}

void scripting_cron(server_t *srv) {
    scripting_t *s = S(srv);
    for (int i = 0; i < s->debug_nchildren;) {
        pid_t pid = waitpid(s->debug_children[i], NULL, WNOHANG);
        if (pid == 0 || (pid < 0 && errno == EINTR)) {
            i++;
            continue;
        }
        s->debug_children[i] = s->debug_children[--s->debug_nchildren];
    }
}

bool script_is_running(const server_t *srv) { return srv->scripting && srv->scripting->run; }

/* ------------------------------------------------------------ busy */

/* What Redis 7.0 lets through while a script is busy (its ALLOW_BUSY
 * commands): what can end it, what a client needs to say who it is or to
 * leave, and the transaction commands, so that a pipelined MULTI is never
 * half refused and its other half run once the script ends. */
static bool allowed_while_busy(client_t *c, command_t *cmd) {
    static const char *const names[] = {"script|kill", "function|kill", "function|stats", "auth", "hello", "quit",
                                        "reset", "replconf", "multi", "discard", "watch", "unwatch"};
    const char *n = cmd->fullname;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (!strcmp(n, names[i])) return true;
    if (!strcmp(n, "shutdown")) {
        for (int i = 1; i < c->argc; i++)
            if (!strcasecmp(c->argv[i]->ptr, "nosave")) return true;
    }
    return false;
}

const char *script_busy_error(client_t *c, command_t *cmd) {
    scripting_t *s = S(c->srv);
    if (!s || !s->run || !s->run->timed_out || c->flags & CLIENT_FAKE) return NULL;
    if (allowed_while_busy(c, cmd)) return NULL;
    return s->run->is_function ? "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
                               : "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
}

static bool busy_tick(script_run_t *run) {
    server_t *srv = run->srv;
    if (!run->timed_out) {
        long long elapsed = util_monotonic_us() / 1000 - run->start_ms;
        if (elapsed < srv->cfg.busy_reply_threshold) return run->killed;
        run->timed_out = true;
        srv->script_busy = true; /* conn.c holds our master's stream meanwhile */
        run->caller->flags |= CLIENT_PROTECTED;
        log_msg(LL_WARNING,
                "Slow script detected: still in execution after %lld milliseconds. "
                "You can try killing the script using the %s command. Script name is: %s.",
                elapsed, run->is_function ? "FUNCTION KILL" : "SCRIPT KILL", run->name);
    }
    conn_serve_while_busy(srv, run->caller);
    if (srv->shutdown_asap) run->killed = true;
    return run->killed;
}

/* SCRIPT KILL / FUNCTION KILL */
void script_kill_or_reply(client_t *c, bool function) {
    scripting_t *s = S(c->srv);
    script_run_t *run = s->run;
    if (!run) {
        reply_error(c, "NOTBUSY No scripts in execution right now.");
        return;
    }
    if (run->caller && (run->caller->flags & CLIENT_MASTER)) {
        reply_error(c, "UNKILLABLE The busy script was sent by a master instance in the context of replication "
                       "and cannot be killed.");
        return;
    }
    if (run->wrote) {
        reply_error(c, "UNKILLABLE Sorry the script already executed write commands against the dataset. You can "
                       "either wait the script termination or kill the server in a hard way using the SHUTDOWN "
                       "NOSAVE command.");
        return;
    }
    /* The other KILL (Redis checks in this order): the BUSY line naming
     * the one that works. */
    if (run->is_function != function) {
        reply_error(c, "BUSY Redis is busy running a script. You can only call %s or SHUTDOWN NOSAVE.",
                    run->is_function ? "FUNCTION KILL" : "SCRIPT KILL");
        return;
    }
    run->killed = true;
    reply_ok(c);
}

/* ------------------------------------------------------------ runs */

static bool busy_tick(script_run_t *run);
static void exec_command(script_run_t *run, command_t *cmd);

/* What the engine (script_lua.c, below this file) calls back during a run. */
static const script_run_ops_t run_ops = {.busy_tick = busy_tick, .exec_command = exec_command};

void script_run_init(script_run_t *run, client_t *caller, const char *name, int flags, bool ro) {
    memset(run, 0, sizeof(*run));
    run->srv = caller->srv;
    run->caller = caller;
    run->fake = S(caller->srv)->fake;
    run->name = name;
    run->flags = flags;
    run->read_only = ro || (flags & SCRIPT_FLAG_NO_WRITES);
    run->resp = 2;
    run->repl = SCRIPT_REPL_ALL;
    run->ops = &run_ops;
    run->ldb = S(caller->srv)->debug; /* SCRIPT DEBUG: this run is debugged */
    run->slot = -1;
}

bool script_may_run_or_reply(script_run_t *run) {
    server_t *srv = run->srv;
    client_t *c = run->caller;
    /* Used memory over the limit at the start decides for the whole run
     * (no eviction in the middle of a script). */
    run->oom = srv->cfg.maxmemory > 0 && !evict_perform(srv);
    /* The shebang's flags stand for the command's (Redis 7.0): a write
     * unless no-writes, allowed on a stale replica only with allow-stale.
     * A script without them is refused on a stale replica too, its writes
     * being checked command by command. */
    uint32_t flags = 0;
    if (srv->cluster && !(run->flags & SCRIPT_FLAG_EVAL_COMPAT) && (run->flags & SCRIPT_FLAG_NO_CLUSTER)) {
        reply_error(c, "Can not run script on cluster, 'no-cluster' flag is set.");
        return false;
    }
    /* command_meta.c: the declared keys' slot, which the script's keys must share */
    if (srv->cluster && c->cmd) run->slot = cmd_meta_keys_slot(c->cmd, c->argv, c->argc);
    if (!(run->flags & SCRIPT_FLAG_EVAL_COMPAT))
        flags = (run->flags & SCRIPT_FLAG_NO_WRITES ? 0 : CMD_WRITE) |
                (run->flags & SCRIPT_FLAG_ALLOW_STALE ? CMD_STALE : 0);
    if ((flags & CMD_WRITE) && run->oom && !(run->flags & SCRIPT_FLAG_ALLOW_OOM)) {
        reply_error(c, RL_ERR_OOM);
        return false;
    }
    /* persist.c: MISCONF; repl.h: READONLY, NOREPLICAS, MASTERDOWN */
    const char *err = flags & CMD_WRITE ? persist_write_refusal(srv) : NULL;
    if (!err) err = repl_command_refusal(c, flags);
    if (err) reply_error(c, "%s", err);
    return err == NULL;
}

void script_run_begin(script_run_t *run) {
    server_t *srv = run->srv;
    S(srv)->run = run;
    run->fake->db = run->caller->db;
    run->fake->user = run->caller->user; /* acl.c: commands run with the caller's rights */
    run->fake->resp = 2;
    run->start_ms = util_monotonic_us() / 1000;
    persist_effects_begin(srv);
}

void script_run_end(script_run_t *run) {
    server_t *srv = run->srv;
    persist_effects_end(srv);
    S(srv)->run = NULL;
    if (run->timed_out) {
        srv->script_busy = false;
        evloop_request_before_sleep(srv->loop); /* repl.h: our master's stream resumes there */
        run->caller->flags &= ~CLIENT_PROTECTED;
        log_msg(LL_WARNING, "Slow script finished in %lld milliseconds", util_monotonic_us() / 1000 - run->start_ms);
        /* A close requested while it ran happens now. */
        if (run->caller->flags & CLIENT_CLOSE_ASAP) evloop_request_before_sleep(srv->loop);
    }
}

static void exec_command(script_run_t *run, command_t *cmd) {
    bool partial = run->repl != SCRIPT_REPL_ALL;
    if (partial) persist_effects_targets(run->srv, run->repl & SCRIPT_REPL_AOF, run->repl & SCRIPT_REPL_REPLICA);
    commands_call(run->fake, cmd);
    if (partial) persist_effects_targets(run->srv, true, true);
}

/* ------------------------------------------------------------ shebang */

int script_flag_from_name(const char *name) {
    static const struct {
        const char *name;
        int flag;
    } names[] = {
        {"no-writes", SCRIPT_FLAG_NO_WRITES}, {"allow-oom", SCRIPT_FLAG_ALLOW_OOM}, {"allow-stale", SCRIPT_FLAG_ALLOW_STALE}, {"no-cluster", SCRIPT_FLAG_NO_CLUSTER}, {"allow-cross-slot-keys", SCRIPT_FLAG_ALLOW_CROSS_SLOT}};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (!strcmp(names[i].name, name)) return names[i].flag;
    return -1;
}

bool script_parse_shebang(const char *body, size_t len, int *flags, size_t *body_off, sds *err) {
    *flags = SCRIPT_FLAG_EVAL_COMPAT;
    *body_off = 0;
    if (len < 2 || body[0] != '#' || body[1] != '!') return true;
    const char *nl = memchr(body, '\n', len);
    if (!nl) {
        *err = sds_new("Invalid script shebang");
        return false;
    }
    *flags = 0;
    *body_off = (size_t)(nl - body);
    int argc = 0;
    sds line = sds_newlen(body, (size_t)(nl - body));
    sds *parts = sds_splitargs(line, &argc);
    sds_free(line);
    bool ok = true;
    if (!parts || argc == 0 || strcmp(parts[0], "#!lua")) {
        *err = sds_catprintf(sds_empty(), "Unexpected engine in script shebang: %s", parts && argc ? parts[0] : "");
        ok = false;
    }
    for (int i = 1; ok && i < argc; i++) {
        if (strncmp(parts[i], "flags=", 6)) {
            *err = sds_catprintf(sds_empty(), "Unknown lua shebang option: %s", parts[i]);
            ok = false;
            break;
        }
        sds list = sds_new(parts[i] + 6);
        char *save = NULL;
        for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            int f = script_flag_from_name(tok);
            if (f < 0) {
                *err = sds_catprintf(sds_empty(), "Unexpected flag in script shebang: %s", tok);
                ok = false;
                break;
            }
            *flags |= f;
        }
        sds_free(list);
    }
    if (parts) sds_free_splitres(parts, argc);
    return ok;
}

/* ------------------------------------------------------------ command flags */

uint32_t script_flags_as_command(uint32_t cmd_flags, int script_flags) {
    cmd_flags &= ~(CMD_STALE | CMD_DENYOOM | CMD_WRITE | CMD_MAY_REPLICATE);
    if (!(script_flags & (SCRIPT_FLAG_ALLOW_OOM | SCRIPT_FLAG_NO_WRITES))) cmd_flags |= CMD_DENYOOM;
    if (!(script_flags & SCRIPT_FLAG_NO_WRITES)) cmd_flags |= CMD_WRITE;
    if (script_flags & SCRIPT_FLAG_ALLOW_STALE) cmd_flags |= CMD_STALE;
    return cmd_flags;
}

/* ------------------------------------------------------------ EVAL */

/* ------------------------------------------------------------ eviction */

static void lru_unlink(scripting_t *s, script_entry *e) {
    if (e->lru_prev) e->lru_prev->lru_next = e->lru_next;
    else s->lru_oldest = e->lru_next;
    if (e->lru_next) e->lru_next->lru_prev = e->lru_prev;
    else s->lru_newest = e->lru_prev;
    e->lru_prev = e->lru_next = NULL;
    s->lru_len--;
}

static void lru_append(scripting_t *s, script_entry *e) {
    e->lru_prev = s->lru_newest;
    e->lru_next = NULL;
    if (s->lru_newest) s->lru_newest->lru_next = e;
    else s->lru_oldest = e;
    s->lru_newest = e;
    s->lru_len++;
}

/* A run of an EVAL-created script makes it the newest. */
static void lru_touch(scripting_t *s, script_entry *e) {
    if (!e->evictable || s->lru_newest == e) return;
    lru_unlink(s, e);
    lru_append(s, e);
}

/* Drop the least recently run EVAL script: its registry slot (the
 * function becomes garbage for the Lua GC), its body and its entry. */
static void lru_evict_oldest(server_t *srv) {
    scripting_t *s = S(srv);
    script_entry *e = s->lru_oldest;
    rl_assert(e && e->evictable);
    lru_unlink(s, e);
    luaL_unref(s->L, LUA_REGISTRYINDEX, e->ref);
    s->scripts_bytes -= sds_len(e->body);
    dict_delete(s->scripts, e->sha); /* frees the key, the body and e */
    srv->stats.evictedscripts++;
}

/* Compile and cache body (already known not to be cached); NULL after
 * replying the error.  by_eval: EVAL created it, so it may be evicted. */
static script_entry *script_create_or_reply(client_t *c, sds sha, const char *body, size_t len, bool by_eval) {
    scripting_t *s = S(c->srv);
    int flags;
    size_t off;
    sds err = NULL;
    if (!script_parse_shebang(body, len, &flags, &off, &err)) {
        reply_error(c, "%s", err);
        sds_free(err);
        return NULL;
    }
    err = slua_compile(s->L, body + off, len - off, "@user_script");
    if (err) {
        reply_error(c, "Error compiling script (new function): %s", err);
        sds_free(err);
        return NULL;
    }
    if (by_eval)
        while (s->lru_len >= EVAL_LRU_MAX) lru_evict_oldest(c->srv);
    script_entry *e = zcalloc(sizeof(*e));
    e->ref = luaL_ref(s->L, LUA_REGISTRYINDEX);
    e->body = sds_newlen(body, len);
    e->flags = flags;
    e->sha = sds_dup(sha);
    e->evictable = by_eval;
    if (by_eval) lru_append(s, e);
    dict_add(s->scripts, e->sha, e);
    s->scripts_bytes += len;
    return e;
}

static sds body_sha(const robj *o) {
    char buf[32], hex[41];
    size_t len;
    const char *p = obj_string_view(o, buf, sizeof(buf), &len);
    sha1_hex(p, len, hex);
    return sds_newlen(hex, 40);
}

static void eval_generic(client_t *c, bool by_sha, bool ro) {
    scripting_t *s = S(c->srv);
    long long numkeys;
    if (!cmd_get_ll_or_reply(c, c->argv[2], &numkeys, NULL)) return;
    if (numkeys > c->argc - 3) {
        reply_error(c, "Number of keys can't be greater than number of args");
        return;
    }
    if (numkeys < 0) {
        reply_error(c, "Number of keys can't be negative");
        return;
    }
    sds sha;
    if (by_sha) {
        sha = sds_newlen(c->argv[1]->ptr, sds_len(c->argv[1]->ptr));
        sds_tolower(sha);
    } else {
        sha = body_sha(c->argv[1]);
    }
    script_entry *e = dict_fetch_value(s->scripts, sha);
    if (!e && by_sha) {
        sds_free(sha);
        reply_error(c, "NOSCRIPT No matching script. Please use EVAL.");
        return;
    }
    if (!e) {
        char buf[32];
        size_t len;
        const char *body = obj_string_view(c->argv[1], buf, sizeof(buf), &len);
        e = script_create_or_reply(c, sha, body, len, true);
        if (!e) {
            sds_free(sha);
            return;
        }
    }
    if (ro && !(e->flags & (SCRIPT_FLAG_NO_WRITES | SCRIPT_FLAG_EVAL_COMPAT))) {
        sds_free(sha);
        reply_error(c, "Can not execute a script with write flag using *_ro command.");
        return;
    }
    script_run_t run;
    script_run_init(&run, c, sha, e->flags, ro);
    if (!script_may_run_or_reply(&run)) {
        sds_free(sha);
        return;
    }
    lru_touch(s, e); /* a refused run (above) leaves its place, as 7.4.1's */
    script_run_begin(&run);
    lua_rawgeti(s->L, LUA_REGISTRYINDEX, e->ref);
    slua_call(s->L, &run, c->argv + 3, (int)numkeys, c->argv + 3 + numkeys, c->argc - 3 - (int)numkeys, true);
    script_run_end(&run);
    sds_free(sha);
}

/* ------------------------------------------------------------ SCRIPT DEBUG */

/* In a forked session's child: no listener, no other client's socket
 * (a client the parent closes must see its connection end), default
 * signals, big values freed in place (no lazy-free thread here). */
static void debug_child_init(server_t *srv, client_t *c) {
    log_set_child();
    lazyfree_forget_thread(srv->lazyfree);
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    for (int i = 0; i < srv->listen_count; i++) close(srv->listen_fds[i]);
    for (client_t *o = srv->clients_head; o; o = o->next)
        if (o != c && o->fd >= 0) close(o->fd);
    log_msg(LL_WARNING, "Redis forked for debugging eval");
}

/* The session talks to the client directly, over TLS too (a forked
 * child goes on with its copy of the TLS session: the parent only closes
 * its socket, it sends nothing more on it). */
static long debug_recv(void *ctx, char *buf, size_t cap) { return conn_recv_blocking(ctx, buf, cap); }
static bool debug_send(void *ctx, const char *p, size_t n) { return conn_send_blocking(ctx, p, n); }

/* The debugged EVAL, with the session in S->debug for the run to take.
 * Whatever happens (a compile error, a bad key count), the session ends
 * with "<endsession>" before the reply, as Redis's does. */
static void debug_run(client_t *c, sds pending, bool ro) {
    scripting_t *s = S(c->srv);
    char buf[32];
    size_t len;
    const char *body = obj_string_view(c->argv[1], buf, sizeof(buf), &len);
    ldb_t *l = ldb_new((ldb_io_t){.ctx = c, .recv = debug_recv, .send = debug_send}, body, len, pending);
    s->debug = l;
    eval_generic(c, false, ro);
    s->debug = NULL;
    ldb_end(l);
    ldb_free(l);
}

/* EVAL for a client in SCRIPT DEBUG YES|SYNC.  Its socket leaves the I/O
 * engine (the debugger reads and writes it directly); YES forks and the
 * child runs the session on a copy of the dataset (nothing it does
 * reaches the parent), SYNC runs it here while every other client waits.
 * Either way the connection ends with the session, as in Redis. */
static void eval_debugged(client_t *c, bool ro) {
    server_t *srv = c->srv;
    sds pending = conn_detach(c);
    bool sync = c->flags & CLIENT_LUA_DEBUG_SYNC;
    if (!sync) {
        pid_t pid = fork();
        if (pid < 0) {
            sds_free(pending);
            reply_error(c, "Fork() failed: can't run EVAL in debugging mode: %s", strerror(errno));
            conn_flush_wait(c);
            conn_discard_output(c);
            conn_close_async(c);
            return;
        }
        if (pid > 0) { /* the parent forgets the client: the child has it */
            sds_free(pending);
            scripting_t *s = S(srv);
            s->debug_children = zrealloc(s->debug_children, sizeof(pid_t) * (size_t)(s->debug_nchildren + 1));
            s->debug_children[s->debug_nchildren++] = pid;
            conn_close_async(c);
            return;
        }
        debug_child_init(srv, c);
    } else {
        log_msg(LL_WARNING, "Redis synchronous debugging eval session started");
    }
    debug_run(c, pending, ro);
    conn_flush_wait(c);
    conn_discard_output(c);
    if (!sync) {
        log_msg(LL_WARNING, "Lua debugging session child exiting");
        _exit(0);
    }
    log_msg(LL_WARNING, "Redis synchronous debugging eval session ended");
    conn_close_async(c);
}

/* Inside EXEC a debugged EVAL would write its session into the middle
 * of the transaction's reply: there the script runs undebugged. */
static bool debugging(const client_t *c) { return (c->flags & CLIENT_LUA_DEBUG) && !(c->flags & CLIENT_DENY_BLOCKING); }

static void eval_or_debug(client_t *c, bool ro) {
    if (debugging(c)) eval_debugged(c, ro);
    else eval_generic(c, false, ro);
}

static void evalsha_unless_debug(client_t *c, bool ro) {
    if (debugging(c)) reply_error(c, "Please use EVAL instead of EVALSHA for debugging");
    else eval_generic(c, true, ro);
}

static void cmd_eval(client_t *c) { eval_or_debug(c, false); }
static void cmd_evalsha(client_t *c) { evalsha_unless_debug(c, false); }
static void cmd_eval_ro(client_t *c) { eval_or_debug(c, true); }
static void cmd_evalsha_ro(client_t *c) { evalsha_unless_debug(c, true); }

bool script_eval_declared_flags(server_t *srv, const client_t *c, const command_t *cmd, int *flags) {
    bool by_sha = cmd->proc == cmd_evalsha || cmd->proc == cmd_evalsha_ro;
    if ((!by_sha && cmd->proc != cmd_eval && cmd->proc != cmd_eval_ro) || c->argc < 2) return false;
    char buf[32];
    size_t len;
    const char *arg = obj_string_view(c->argv[1], buf, sizeof(buf), &len);
    if (by_sha && len != 40) return false;
    sds sha = by_sha ? sds_newlen(arg, len) : body_sha(c->argv[1]);
    sds_tolower(sha);
    script_entry *e = dict_fetch_value(S(srv)->scripts, sha);
    sds_free(sha);
    if (e) {
        *flags = e->flags;
    } else {
        /* not cached yet: its shebang says (a bad one fails when it runs) */
        size_t off;
        sds err = NULL;
        if (by_sha || !script_parse_shebang(arg, len, flags, &off, &err)) {
            sds_free(err);
            return false;
        }
    }
    return !(*flags & SCRIPT_FLAG_EVAL_COMPAT);
}

/* ------------------------------------------------------------ SCRIPT */

static void cmd_script_load(client_t *c) {
    scripting_t *s = S(c->srv);
    sds sha = body_sha(c->argv[2]);
    if (!dict_find(s->scripts, sha)) {
        char buf[32];
        size_t len;
        const char *body = obj_string_view(c->argv[2], buf, sizeof(buf), &len);
        if (!script_create_or_reply(c, sha, body, len, false)) {
            sds_free(sha);
            return;
        }
    }
    reply_bulk(c, sha, sds_len(sha));
    sds_free(sha);
}

static void cmd_script_exists(client_t *c) {
    scripting_t *s = S(c->srv);
    reply_array_len(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) {
        sds sha = sds_dup(c->argv[i]->ptr);
        sds_tolower(sha);
        reply_ll(c, dict_find(s->scripts, sha) ? 1 : 0);
        sds_free(sha);
    }
}

static void cmd_script_flush(client_t *c) {
    if (c->argc > 3 || (c->argc == 3 && strcasecmp(c->argv[2]->ptr, "sync") && strcasecmp(c->argv[2]->ptr, "async"))) {
        reply_error(c, "SCRIPT FLUSH only support SYNC|ASYNC option");
        return;
    }
    eval_state_reset(S(c->srv), c->srv);
    reply_ok(c);
}

static void cmd_script_kill(client_t *c) { script_kill_or_reply(c, false); }

static void cmd_script_help(client_t *c) {
    static const char *lines[] = {
        "DEBUG (YES|SYNC|NO)",
        "    Set the debug mode for subsequent scripts executed.",
        "EXISTS <sha1> [<sha1> ...]",
        "    Return information about the existence of the scripts in the script cache.",
        "FLUSH [ASYNC|SYNC]",
        "    Flush the Lua scripts cache. Very dangerous on replicas.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the scripts cache.",
        "    * SYNC: Synchronously flush the scripts cache.",
        "KILL",
        "    Kill the currently executing Lua script.",
        "LOAD <script>",
        "    Load a script into the scripts cache without executing it.",
        NULL};
    reply_help(c, "SCRIPT", lines);
}

static void cmd_script_debug(client_t *c) {
    if (c->flags & CLIENT_DENY_BLOCKING) {
        reply_error(c, "SCRIPT DEBUG must be called outside MULTI");
        return;
    }
    const char *mode = c->argv[2]->ptr;
    if (!strcasecmp(mode, "no")) {
        c->flags &= ~(CLIENT_LUA_DEBUG | CLIENT_LUA_DEBUG_SYNC);
    } else if (!strcasecmp(mode, "yes")) {
        c->flags = (c->flags | CLIENT_LUA_DEBUG) & ~CLIENT_LUA_DEBUG_SYNC;
    } else if (!strcasecmp(mode, "sync")) {
        c->flags |= CLIENT_LUA_DEBUG | CLIENT_LUA_DEBUG_SYNC;
    } else {
        reply_error(c, "Use SCRIPT DEBUG YES/SYNC/NO");
        return;
    }
    reply_ok(c);
}

/* ------------------------------------------------------------ INFO */

size_t scripting_vm_memory(server_t *srv) { return slua_used_memory(S(srv)->L); }

size_t scripting_cache_memory(server_t *srv) {
    scripting_t *sc = S(srv);
    return sc->scripts_bytes + dict_mem_usage(sc->scripts) + dict_size(sc->scripts) * sizeof(script_entry);
}

sds scripting_info_memory(server_t *srv, sds s, const scripting_fn_figures_t *fn) {
    scripting_t *sc = S(srv);
    size_t vm_eval = slua_used_memory(sc->L);
    size_t vm_fn = fn->vm_bytes;
    size_t fn_bytes = fn->overhead_bytes;
    size_t scripts = scripting_cache_memory(srv);
    char h1[32], h2[32], h3[32];
    util_bytes_to_human(h1, sizeof(h1), vm_eval);
    util_bytes_to_human(h2, sizeof(h2), vm_eval + vm_fn);
    util_bytes_to_human(h3, sizeof(h3), scripts + fn_bytes);
    return sds_catprintf(s,
                         "used_memory_lua:%zu\r\n"
                         "used_memory_vm_eval:%zu\r\n"
                         "used_memory_lua_human:%s\r\n"
                         "used_memory_scripts_eval:%zu\r\n"
                         "number_of_cached_scripts:%zu\r\n"
                         "number_of_functions:%zu\r\n"
                         "number_of_libraries:%zu\r\n"
                         "used_memory_vm_functions:%zu\r\n"
                         "used_memory_vm_total:%zu\r\n"
                         "used_memory_vm_total_human:%s\r\n"
                         "used_memory_functions:%zu\r\n"
                         "used_memory_scripts:%zu\r\n"
                         "used_memory_scripts_human:%s\r\n",
                         vm_eval, vm_eval, h1, scripts, dict_size(sc->scripts), fn->functions, fn->libraries,
                         vm_fn, vm_eval + vm_fn, h2, fn_bytes, scripts + fn_bytes, h3);
}

/* ------------------------------------------------------------ table */

static command_t script_subcommands[] = {
    {"load", cmd_script_load, 3, CMD_NOSCRIPT | CMD_STALE, 0, 0, 0, "scripting", "Load a server-side Lua script to the script cache.", "2.6.0", NULL},
    {"exists", cmd_script_exists, -3, CMD_NOSCRIPT, 0, 0, 0, "scripting", "Determine whether server-side Lua scripts exist in the script cache.", "2.6.0", NULL},
    {"flush", cmd_script_flush, -2, CMD_NOSCRIPT, 0, 0, 0, "scripting", "Remove all server-side Lua scripts from the script cache.", "2.6.0", NULL},
    {"kill", cmd_script_kill, 2, CMD_NOSCRIPT, 0, 0, 0, "scripting", "Terminate a server-side Lua script during execution.", "2.6.0", NULL},
    {"debug", cmd_script_debug, 3, CMD_NOSCRIPT, 0, 0, 0, "scripting", "Set the debug mode for server-side Lua scripts.", "3.2.0", NULL},
    {"help", cmd_script_help, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "scripting", "Show helpful text about the different subcommands", "5.0.0", NULL},
    {0},
};

command_t script_commands[] = {
    {"eval", cmd_eval, -3, CMD_NOSCRIPT | CMD_STALE | CMD_MAY_REPLICATE, 0, 0, 0, "scripting", "Execute a Lua script server side", "2.6.0", NULL},
    {"evalsha", cmd_evalsha, -3, CMD_NOSCRIPT | CMD_STALE | CMD_MAY_REPLICATE, 0, 0, 0, "scripting", "Execute a Lua script server side", "2.6.0", NULL},
    {"eval_ro", cmd_eval_ro, -3, CMD_NOSCRIPT | CMD_STALE | CMD_READONLY, 0, 0, 0, "scripting", "Execute a read-only Lua script server side", "7.0.0", NULL},
    {"evalsha_ro", cmd_evalsha_ro, -3, CMD_NOSCRIPT | CMD_STALE | CMD_READONLY, 0, 0, 0, "scripting", "Execute a read-only Lua script server side", "7.0.0", NULL},
    {"script", NULL, -2, 0, 0, 0, 0, "scripting", "A container for Lua scripts management commands", "2.6.0", script_subcommands},
    {0},
};
