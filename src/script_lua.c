/* script_lua.c: the sandboxed Lua 5.1 state and the `redis` library (see
 * script_lua.h).  script.c (EVAL) and function.c (FUNCTION) each own one
 * state; conversions live in script_conv.c.
 *
 * The sandbox, as Redis 7.0 presents it to scripts:
 *   - libraries: base (without dofile, loadfile, print, and getfenv,
 *     setfenv, newproxy unless lua-enable-deprecated-api, as Redis),
 *     table, string, math, cjson, bit, struct, cmsgpack;
 *     no io, os, debug, package/require;
 *   - loadstring/load refuse precompiled chunks (the ESC byte);
 *   - math.random follows lrand48's sequence from its initial state, one
 *     sequence for the life of the state (as Redis 7.0.15: not reseeded per
 *     run); math.randomseed(n) restarts it as srand48(n);
 *   - globals cannot be created or changed, and reading an unknown one is
 *     an error.  The globals, every table they reach and the basic types'
 *     metatables are read-only in the VM itself (our Lua, deps/lua patch
 *     0001): a store by any route (t.x = v, rawset, table.insert,
 *     setmetatable) fails, so no script can plant code that another
 *     script, or another user's, runs later;
 *   - library calls are bounded (sizes, recursion) and long ones call the
 *     count hook (lua_interruptcheck), so SCRIPT KILL stops a script stuck
 *     in a C function too (deps/lua patch 0003, our cjson and bit).
 *
 * Memory: the state allocates through zmalloc (the Lua heap counts in
 * used_memory); an allocation that fails or would take the heap past
 * maxmemory (when set; else half the machine's memory) returns NULL,
 * which Lua turns into a "not enough memory" error instead of an abort.
 *
 * SCRIPT DEBUG: a run with a debugger session (script_run_t.ldb) gets a
 * line hook instead of the busy check, and redis.call, redis.debug and
 * redis.breakpoint report to the session (script_ldb.c).
 *
 * Must not: reply to the caller except in slua_call's final reply, or
 * raise a Lua error while a C resource (argv, a reply buffer) is owned by
 * the current C frame (they are parked in the context and freed later). */
#include "command_meta.h"
#include "script_lua.h"

#include <lauxlib.h>
#include <lualib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "acl.h"
#include "commands.h"
#include "log.h"
#include "persist.h"
#include "repl.h"
#include "reply.h"
#include "script_ldb.h"
#include "sha1.h"
#include "util.h"
#include "zmalloc.h"

#define HOOK_EVERY_INSNS 100000 /* the busy check runs this often */
#define GC_STEP_EVERY_RUNS 50   /* an incremental GC step per so many runs */

typedef struct slua_ctx {
    server_t *srv;
    script_run_t *run; /* the running script, NULL between runs */
    bool functions;
    size_t heap;      /* bytes the Lua heap holds */
    size_t host_half; /* half the machine's memory (the limit without maxmemory) */
    int globals_ref;  /* registry ref of the sealed globals (restore_globals) */
    int capped;       /* > 0 while a script's own work runs: the heap limit applies */
    uint64_t rand48;  /* math.random state */
    int runs_since_gc;
    command_t *last_cmd; /* redis.call's last top-level command (lookup cache) */
    robj **argv;         /* redis.call's last argv (freed on the next call) */
    int argc;
    sds replybuf; /* the fake client's reply, flattened */
    sds errbuf;   /* call_refusal's ACL text */
} slua_ctx;

static slua_ctx *ctx_of(lua_State *L) {
    void *ud;
    lua_getallocf(L, &ud);
    return ud;
}

/* ------------------------------------------------------------- memory */

/* The Lua heap may grow to maxmemory when one is set, else to half the
 * machine's memory: past that an allocation fails and the script gets
 * "not enough memory" (string.rep of gigabytes must not take the host).
 * Never below HEAP_FLOOR: a new state (SCRIPT FLUSH, FUNCTION FLUSH) must
 * build under a tiny maxmemory, and a script allowed under OOM (reads, or
 * allow-oom) must run there, as in Redis, which caps nothing. */
#define HEAP_FLOOR ((size_t)32 << 20)
static size_t heap_limit(const slua_ctx *x) {
    long long maxmem = x->srv->cfg.maxmemory;
    size_t cap = maxmem > 0 ? (size_t)maxmem : x->host_half;
    return cap > HEAP_FLOOR ? cap : HEAP_FLOOR;
}

static void *slua_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    slua_ctx *x = ud;
    if (nsize == 0) {
        if (ptr) {
            zfree(ptr);
            x->heap -= osize;
        }
        return NULL;
    }
    if (!ptr) osize = 0; /* Lua 5.1 passes 0 here, but be safe */
    if (x->capped && nsize > osize && x->heap + (nsize - osize) > heap_limit(x)) return NULL;
    void *p = ztryrealloc(ptr, nsize);
    if (!p) return NULL;
    x->heap = x->heap - osize + nsize;
    return p;
}

/* The heap limit binds a script's own work only: compiling it and running
 * it, inside Lua's protection, where a failed allocation is the script's
 * "not enough memory".  The host's own calls around a run (KEYS and ARGV,
 * reading the reply back, the state's set-up) are outside any protection,
 * where a failed allocation would panic and end the process: they are
 * never refused (their size is the request's or the reply's, bounded
 * elsewhere). */
int slua_pcall(lua_State *L, int nargs, int nresults, int errfunc) {
    slua_ctx *x = ctx_of(L);
    x->capped++;
    int rc = lua_pcall(L, nargs, nresults, errfunc);
    x->capped--;
    return rc;
}

static int capped_load(lua_State *L, const char *code, size_t len, const char *chunkname) {
    slua_ctx *x = ctx_of(L);
    x->capped++;
    int rc = luaL_loadbuffer(L, code, len, chunkname);
    x->capped--;
    return rc;
}

size_t slua_used_memory(lua_State *L) {
    return (size_t)lua_gc(L, LUA_GCCOUNT, 0) * 1024 + (size_t)lua_gc(L, LUA_GCCOUNTB, 0);
}

/* ------------------------------------------------------------- errors */

void slua_push_error_table(lua_State *L, const char *msg, size_t len) {
    /* redis.error_reply's rule: "-CODE text" keeps its code, a text with
     * no code gets ERR; a trailing CR/LF is dropped. */
    const char *code = "ERR";
    size_t codelen = 3;
    if (len > 0 && msg[0] == '-') {
        const char *sp = memchr(msg, ' ', len);
        if (sp) {
            code = msg + 1;
            codelen = (size_t)(sp - msg - 1);
            len -= (size_t)(sp + 1 - msg);
            msg = sp + 1;
        } else {
            msg++;
            len--;
        }
    }
    while (len > 0 && (msg[len - 1] == '\r' || msg[len - 1] == '\n')) len--;
    lua_newtable(L);
    lua_pushliteral(L, "err");
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addlstring(&b, code, codelen);
    luaL_addchar(&b, ' ');
    luaL_addlstring(&b, msg, len);
    luaL_pushresult(&b);
    lua_rawset(L, -3);
}

static void push_err(lua_State *L, const char *text) {
    lua_newtable(L);
    lua_pushliteral(L, "err");
    lua_pushstring(L, text);
    lua_rawset(L, -3);
}

/* The message handler of every script call: turn the error into the
 * {err=..., source=..., line=...} table the final reply is built from. */
static int error_handler(lua_State *L) {
    lua_Debug ar;
    bool have = false;
    if (lua_getstack(L, 1, &ar)) {
        lua_getinfo(L, "nSl", &ar);
        have = true;
        if (!strcmp(ar.what, "C") && lua_getstack(L, 2, &ar)) lua_getinfo(L, "nSl", &ar);
        else if (!strcmp(ar.what, "C")) have = false;
    }
    if (!lua_istable(L, 1)) {
        const char *s;
        if (lua_isstring(L, 1)) s = lua_tostring(L, 1);
        else if (lua_isnil(L, 1)) s = "nil";
        else if (lua_isboolean(L, 1)) s = lua_toboolean(L, 1) ? "true" : "false";
        else s = lua_typename(L, lua_type(L, 1));
        lua_newtable(L);
        lua_pushliteral(L, "err");
        lua_pushfstring(L, "ERR %s", s);
        lua_rawset(L, -3);
        lua_replace(L, 1);
    }
    if (have) {
        lua_pushliteral(L, "source");
        lua_pushstring(L, ar.source);
        lua_rawset(L, 1);
        lua_pushliteral(L, "line");
        lua_pushinteger(L, ar.currentline);
        lua_rawset(L, 1);
    }
    lua_settop(L, 1);
    return 1;
}

/* Errors of the redis.* API are {err="ERR ..."} tables (no position). */
static int raise_err(lua_State *L, const char *msg) {
    lua_newtable(L);
    lua_pushliteral(L, "err");
    lua_pushfstring(L, "ERR %s", msg);
    lua_rawset(L, -3);
    return lua_error(L);
}

/* pcall as Redis 7.0 has it: an error table with an err field comes back
 * as that string, so scripts can print or compare what redis.call raised. */
static int l_pcall(lua_State *L) {
    luaL_checkany(L, 1);
    int status = lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0);
    if (status) {
        if (lua_istable(L, -1)) {
            lua_pushliteral(L, "err");
            lua_rawget(L, -2);
            if (lua_isstring(L, -1)) lua_replace(L, -2);
            else lua_pop(L, 1);
        }
        lua_pushboolean(L, 0);
        lua_insert(L, -2);
        return 2;
    }
    lua_pushboolean(L, 1);
    lua_insert(L, 1);
    return lua_gettop(L);
}

static int nonexistent_global(lua_State *L) {
    const char *name = lua_tostring(L, 2);
    return luaL_error(L, "Script attempted to access nonexistent global variable '%s'", name ? name : "?");
}

/* ------------------------------------------------------------- sandbox */

static uint32_t rand48_next(uint64_t *x) {
    *x = (*x * 0x5DEECE66DULL + 0xB) & ((1ULL << 48) - 1);
    return (uint32_t)(*x >> 17);
}

static void rand48_seed(uint64_t *x, int32_t seed) { *x = ((uint64_t)(uint32_t)seed << 16) | 0x330E; }

static int l_math_random(lua_State *L) {
    slua_ctx *x = ctx_of(L);
    lua_Number r = (lua_Number)(rand48_next(&x->rand48) % 2147483647u) / (lua_Number)2147483647;
    switch (lua_gettop(L)) {
        case 0:
            lua_pushnumber(L, r);
            break;
        case 1: {
            int u = luaL_checkint(L, 1);
            luaL_argcheck(L, 1 <= u, 1, "interval is empty");
            lua_pushnumber(L, floor(r * u) + 1);
            break;
        }
        case 2: {
            int l = luaL_checkint(L, 1), u = luaL_checkint(L, 2);
            luaL_argcheck(L, l <= u, 2, "interval is empty");
            /* the width wraps as Redis's int arithmetic does on x86-64
             * (math.random(-2^31, 2^31-1)), without a signed overflow */
            int width = (int)((unsigned)u - (unsigned)l + 1u);
            lua_pushnumber(L, floor(r * width) + l);
            break;
        }
        default:
            return luaL_error(L, "wrong number of arguments");
    }
    return 1;
}

static int l_math_randomseed(lua_State *L) {
    rand48_seed(&ctx_of(L)->rand48, (int32_t)luaL_checkint(L, 1));
    return 0;
}

/* A precompiled chunk is refused with the error Redis's parser gives when
 * it reads one as source text. */
static int load_checked(lua_State *L, const char *s, size_t len, const char *chunkname) {
    if (len > 0 && s[0] == '\033') {
        lua_pushnil(L);
        char id[64];
        size_t n = 0;
        const char *src = chunkname ? chunkname : s;
        while (src[n] && src[n] != '\n' && n < 40) n++;
        snprintf(id, sizeof(id), "%.*s%s", (int)n, src, src[n] ? "..." : "");
        lua_pushfstring(L, "[string \"%s\"]:1: unexpected symbol near 'char(27)'", id);
        return 2;
    }
    if (luaL_loadbuffer(L, s, len, chunkname ? chunkname : s) != 0) {
        lua_pushnil(L);
        lua_insert(L, -2);
        return 2;
    }
    return 1;
}

static int l_loadstring(lua_State *L) {
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    return load_checked(L, s, len, luaL_optstring(L, 2, NULL));
}

/* load(f [, name]): gather f's pieces, then the same check. */
static int l_load(lua_State *L) {
    luaL_checktype(L, 1, LUA_TFUNCTION);
    const char *name = luaL_optstring(L, 2, "=(load)");
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (;;) {
        lua_pushvalue(L, 1);
        lua_call(L, 0, 1);
        if (lua_isnil(L, -1) || (lua_isstring(L, -1) && lua_objlen(L, -1) == 0)) {
            lua_pop(L, 1);
            break;
        }
        if (!lua_isstring(L, -1)) return luaL_error(L, "reader function must return a string");
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    size_t len;
    const char *s = lua_tolstring(L, -1, &len);
    return load_checked(L, s, len, name);
}

/* Open a library and make sure it is the global `name` (a module may
 * only return its table). */
static void open_lib(lua_State *L, const char *name, lua_CFunction fn) {
    lua_pushcfunction(L, fn);
    lua_pushstring(L, name);
    lua_call(L, 1, 1);
    if (name[0] && lua_istable(L, -1)) lua_setglobal(L, name);
    else lua_pop(L, 1);
}

static void set_global_fn(lua_State *L, const char *name, lua_CFunction fn) {
    lua_pushcfunction(L, fn);
    lua_setglobal(L, name);
}

/* The base functions scripts never see, and the ones they see only with
 * lua-enable-deprecated-api yes (as Redis 7.0.15 after CVE-2025-46818:
 * they let a script reach other functions' environments and finalizers). */
static const char *const removed_always[] = {"dofile", "loadfile", "print", NULL};
static const char *const removed_deprecated[] = {"getfenv", "setfenv", "newproxy", NULL};

static void remove_globals(lua_State *L, const char *const names[]) {
    for (int i = 0; names[i]; i++) {
        lua_pushnil(L);
        lua_setglobal(L, names[i]);
    }
}

static void load_libraries(lua_State *L, bool deprecated_api) {
    open_lib(L, "", luaopen_base);
    open_lib(L, LUA_TABLIBNAME, luaopen_table);
    open_lib(L, LUA_STRLIBNAME, luaopen_string);
    open_lib(L, LUA_MATHLIBNAME, luaopen_math);
    open_lib(L, "cjson", slua_open_cjson);
    open_lib(L, "bit", slua_open_bit);
    open_lib(L, "struct", slua_open_struct);
    open_lib(L, "cmsgpack", slua_open_cmsgpack);
    remove_globals(L, removed_always);
    if (!deprecated_api) remove_globals(L, removed_deprecated);
    set_global_fn(L, "loadstring", l_loadstring);
    set_global_fn(L, "pcall", l_pcall);
    set_global_fn(L, "load", l_load);
    lua_getglobal(L, LUA_MATHLIBNAME);
    lua_pushcfunction(L, l_math_random);
    lua_setfield(L, -2, "random");
    lua_pushcfunction(L, l_math_randomseed);
    lua_setfield(L, -2, "randomseed");
    lua_pop(L, 1);
}

/* ------------------------------------------------------------- redis.* */

/* The debugger session that wants redis.call logged now, or NULL. */
static ldb_t *debug_logging(const slua_ctx *x) {
    ldb_t *ldb = x->run ? x->run->ldb : NULL;
    return ldb && ldb_logs_calls(ldb) ? ldb : NULL;
}

/* Parse the fake client's reply into a Lua value; the flattened copy is
 * parked in the context so a Lua error mid-way cannot leak it. */
static void push_fake_reply(lua_State *L, slua_ctx *x, client_t *f) {
    const char *p = f->buf, *end = f->buf + f->bufpos;
    if (f->reply_head) {
        sds_clear(x->replybuf);
        x->replybuf = sds_catlen(x->replybuf, f->buf, f->bufpos);
        for (reply_block *b = f->reply_head; b; b = b->next) x->replybuf = sds_catlen(x->replybuf, b->buf, b->used);
        p = x->replybuf;
        end = p + sds_len(x->replybuf);
    }
    ldb_t *ldb = debug_logging(x);
    if (ldb) ldb_log_reply(ldb, p, (size_t)(end - p));
    /* Emptied before parsing (a Lua error may leave the parse): without
     * blocks, p still reads the static buffer, whose bytes stay intact. */
    conn_discard_output(f);
    if (!sconv_push_reply(L, p, end, 0)) lua_pushnil(L);
}

static void free_argv(slua_ctx *x) {
    for (int i = 0; i < x->argc; i++) obj_decref(x->argv[i]);
    zfree(x->argv);
    x->argv = NULL;
    x->argc = 0;
}

static command_t *resolve_command(slua_ctx *x, robj **argv, int argc) {
    /* Scripts repeat the same few commands: try the last one first. */
    command_t *cmd = x->last_cmd;
    const char *name = argv[0]->ptr;
    if (!cmd || strlen(cmd->name) != sds_len(argv[0]->ptr) || strcasecmp(cmd->name, name)) {
        cmd = commands_lookup(x->srv, name, sds_len(argv[0]->ptr));
        x->last_cmd = cmd;
    }
    if (!cmd) return NULL;
    if (cmd->subcommands && argc >= 2) {
        for (command_t *sub = cmd->subcommands; sub->name; sub++)
            if (!strcasecmp(sub->name, argv[1]->ptr)) return sub;
        return NULL;
    }
    return cmd;
}

/* Check the request before it runs; NULL if allowed, else the error text. */
static const char *call_refusal(slua_ctx *x, command_t *cmd, robj **argv, int argc) {
    script_run_t *run = x->run;
    bool arity_ok = cmd->arity > 0 ? argc == cmd->arity : argc >= -cmd->arity;
    if (!arity_ok) return "ERR Wrong number of args calling Redis command from script";
    if (((cmd->flags & CMD_NOSCRIPT) || (cmd->parent && (cmd->parent->flags & CMD_NOSCRIPT))) &&
        !run->srv->scripts_call_anything)
        return "ERR This Redis command is not allowed from script";
    /* acl.c: the caller's permissions apply to what its script runs;
     * Redis 7.4's text, in x->errbuf until the next refusal. */
    client_t *caller = run->caller;
    int pos;
    int r = acl_check_and_log(caller, caller->user, cmd, argv, argc, ACL_CTX_LUA, &pos);
    if (r != ACL_OK) {
        sds_clear(x->errbuf);
        x->errbuf = sds_cat(x->errbuf, "ERR ACL failure in script: ");
        x->errbuf = acl_cat_denial(x->errbuf, r, caller->user, cmd, NULL, 0, false);
        return x->errbuf;
    }
    /* a command that may replicate (PUBLISH) is a write here: a read-only
     * script must not hold up CLIENT PAUSE WRITE (Redis 7.0) */
    /* a script with a shebang (or a function) keeps to one slot
     * unless allow-cross-slot-keys (Redis 7.0); old EVAL scripts may roam */
    if (run->srv->cluster && !(run->flags & (SCRIPT_FLAG_EVAL_COMPAT | SCRIPT_FLAG_ALLOW_CROSS_SLOT))) {
        int slot = cmd_meta_keys_slot(cmd, argv, argc);
        if (slot == -2 || (slot >= 0 && run->slot >= 0 && slot != run->slot))
            return "ERR Script attempted to access keys that do not hash to the same slot";
        if (slot >= 0) run->slot = slot;
    }
    if ((cmd->flags & (CMD_WRITE | CMD_MAY_REPLICATE)) && run->read_only)
        return "ERR Write commands are not allowed from read-only scripts.";
    if ((cmd->flags & CMD_DENYOOM) && run->oom && !(run->flags & SCRIPT_FLAG_ALLOW_OOM))
        return "OOM command not allowed when used memory > 'maxmemory'.";
    if (!(cmd->flags & CMD_STALE) && repl_serving_stale_refused(run->srv))
        return "ERR Can not execute the command on a stale replica";
    /* Once the script has written, the server's state (a replica lost, a
     * disk error) no longer fails its writes: half a script would stay.
     * persist.c: MISCONF; repl.h: READONLY, NOREPLICAS. */
    const char *err = NULL;
    if ((cmd->flags & CMD_WRITE) && !run->wrote) {
        err = persist_write_refusal(run->srv);
        if (!err) err = repl_write_refusal(run->srv, run->caller);
    }
    return err;
}

/* noted: msg is already in errorstats (sconv_error_noted). */
static int call_fail(lua_State *L, const char *msg, bool raise, bool noted) {
    ldb_t *ldb = debug_logging(ctx_of(L));
    if (ldb) ldb_log_error(ldb, strncmp(msg, "ERR ", 4) ? msg : msg + 4);
    push_err(L, msg);
    if (noted) {
        lua_pushliteral(L, SCONV_NOTED);
        lua_pushboolean(L, 1);
        lua_rawset(L, -3);
    }
    if (raise) return lua_error(L);
    return 1;
}

/* The Lua arguments 1..argc (strings or numbers) as x->argv. */
static void args_to_argv(lua_State *L, slua_ctx *x, int argc) {
    x->argv = zmalloc(sizeof(robj *) * (size_t)argc);
    for (int i = 1; i <= argc; i++) {
        if (lua_type(L, i) == LUA_TNUMBER) {
            /* Lua's own formatting keeps 14 digits; Redis keeps 17. */
            char buf[64];
            int n = snprintf(buf, sizeof(buf), "%.17g", (double)lua_tonumber(L, i));
            x->argv[i - 1] = obj_create_string(buf, (size_t)n);
        } else {
            size_t len;
            const char *s = lua_tolstring(L, i, &len);
            x->argv[i - 1] = obj_create_string(s, len);
        }
        x->argc = i;
    }
}

static void debug_log_command(slua_ctx *x) {
    sds line = sds_empty();
    for (int i = 0; i < x->argc; i++) {
        if (i) line = sds_catlen(line, " ", 1);
        line = sds_catlen(line, x->argv[i]->ptr, sds_len(x->argv[i]->ptr));
    }
    ldb_log_command(x->run->ldb, line);
}

static int redis_call_generic(lua_State *L, bool raise) {
    slua_ctx *x = ctx_of(L);
    script_run_t *run = x->run;
    free_argv(x);
    if (!run) return call_fail(L, "ERR redis.call can only be called inside a script invocation", raise, false);
    int argc = lua_gettop(L);
    if (argc == 0) return call_fail(L, "ERR Please specify at least one argument for this redis lib call", raise, false);
    for (int i = 1; i <= argc; i++) {
        int t = lua_type(L, i);
        if (t != LUA_TSTRING && t != LUA_TNUMBER)
            return call_fail(L, "ERR Lua redis lib command arguments must be strings or integers", raise, false);
    }
    args_to_argv(L, x, argc);
    /* The arguments are in x->argv now: off the stack, which leaves room
     * for the reply however many there were (unpack of 7,999 values). */
    lua_settop(L, 0);
    if (debug_logging(x)) debug_log_command(x);
    command_t *cmd = resolve_command(x, x->argv, argc);
    if (!cmd) return call_fail(L, "ERR Unknown Redis command called from script", raise, false);
    /* A refused command counts in its rejected_calls and errorstats, as a
     * client's would, when refused (a pcall may swallow the error). */
    const char *refusal = call_refusal(x, cmd, x->argv, argc);
    if (refusal) {
        cmd->rejected_calls++;
        reply_note_error(x->srv, refusal, strlen(refusal));
        return call_fail(L, refusal, raise, true);
    }
    client_t *f = run->fake;
    conn_discard_output(f);
    if (cmd->flags & CMD_WRITE) run->wrote = true;
    f->argv = x->argv;
    f->argc = argc;
    f->resp = run->resp;
    run->ops->exec_command(run, cmd);
    f->argv = NULL;
    f->argc = 0;
    free_argv(x);
    push_fake_reply(L, x, f);
    if (raise && lua_istable(L, -1)) {
        lua_pushliteral(L, "err");
        lua_rawget(L, -2);
        bool is_err = lua_isstring(L, -1);
        lua_pop(L, 1);
        if (is_err) return lua_error(L);
    }
    return 1;
}

static int l_redis_call(lua_State *L) { return redis_call_generic(L, true); }
static int l_redis_pcall(lua_State *L) { return redis_call_generic(L, false); }

static int l_redis_sha1hex(lua_State *L) {
    if (lua_gettop(L) != 1) return raise_err(L, "wrong number of arguments");
    size_t len;
    const char *s = lua_tolstring(L, 1, &len);
    char hex[41];
    sha1_hex(s ? s : "", s ? len : 0, hex);
    lua_pushstring(L, hex);
    return 1;
}

static int l_redis_error_reply(lua_State *L) {
    if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
        push_err(L, "ERR wrong number or type of arguments");
        return 1;
    }
    size_t len;
    const char *s = lua_tolstring(L, 1, &len);
    if (len > 0 && s[0] == '-') {
        slua_push_error_table(L, s, len);
    } else {
        /* Redis adds the '-' and then reads the first word as the code. */
        lua_pushfstring(L, "-%s", s);
        size_t l2;
        const char *s2 = lua_tolstring(L, -1, &l2);
        slua_push_error_table(L, s2, l2);
    }
    return 1;
}

static int l_redis_status_reply(lua_State *L) {
    if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
        push_err(L, "ERR wrong number or type of arguments");
        return 1;
    }
    lua_newtable(L);
    lua_pushliteral(L, "ok");
    lua_pushvalue(L, 1);
    lua_rawset(L, -3);
    return 1;
}

/* A number argument as an int: out of range (or NaN) it is INT_MIN, as
 * Redis's plain cast gives on x86-64, without the cast's undefined
 * behaviour. */
static int arg_int(lua_State *L, int idx) {
    lua_Number n = lua_tonumber(L, idx);
    return n > (lua_Number)INT_MIN - 1 && n < (lua_Number)INT_MAX + 1 ? (int)n : INT_MIN;
}

static int l_redis_log(lua_State *L) {
    int argc = lua_gettop(L);
    if (argc < 2) return raise_err(L, "redis.log() requires two arguments or more.");
    if (!lua_isnumber(L, 1)) return raise_err(L, "First argument must be a number (log level).");
    int level = arg_int(L, 1);
    if (level < LL_DEBUG || level > LL_WARNING) return raise_err(L, "Invalid debug level.");
    sds msg = sds_empty();
    for (int i = 2; i <= argc; i++) {
        size_t len;
        const char *s = lua_tolstring(L, i, &len);
        if (!s) continue;
        if (i > 2) msg = sds_catlen(msg, " ", 1);
        msg = sds_catlen(msg, s, len);
    }
    log_msg(level, "%s", msg);
    sds_free(msg);
    return 0;
}

static int l_redis_setresp(lua_State *L) {
    slua_ctx *x = ctx_of(L);
    if (lua_gettop(L) != 1) return raise_err(L, "redis.setresp() requires one argument.");
    int resp = arg_int(L, 1);
    if (resp != 2 && resp != 3) return raise_err(L, "RESP version must be 2 or 3.");
    if (x->run) x->run->resp = resp;
    return 0;
}

static int l_redis_set_repl(lua_State *L) {
    slua_ctx *x = ctx_of(L);
    if (lua_gettop(L) != 1) return raise_err(L, "redis.set_repl() requires one argument.");
    int flags = arg_int(L, 1);
    if (flags & ~SCRIPT_REPL_ALL) return raise_err(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.");
    if (x->run) x->run->repl = flags;
    return 0;
}

static int l_redis_replicate_commands(lua_State *L) {
    lua_pushboolean(L, 1); /* always on since 7.0: effects are what is replicated */
    return 1;
}

/* The debugger's calls: without a session, breakpoint() says false and
 * debug() does nothing, as in Redis. */
static int l_redis_breakpoint(lua_State *L) {
    slua_ctx *x = ctx_of(L);
    ldb_t *ldb = x->run ? x->run->ldb : NULL;
    if (ldb) ldb_request_break(ldb);
    lua_pushboolean(L, ldb != NULL);
    return 1;
}

static int l_redis_debug(lua_State *L) {
    slua_ctx *x = ctx_of(L);
    if (x->run && x->run->ldb) ldb_log_debug(x->run->ldb, L);
    return 0;
}

static int l_redis_acl_check_cmd(lua_State *L) {
    slua_ctx *x = ctx_of(L);
    if (!x->run) return raise_err(L, "redis.acl_check_cmd can only be called inside a script invocation");
    int argc = lua_gettop(L);
    if (argc == 0) return raise_err(L, "Please specify at least one argument for this redis lib call");
    for (int i = 1; i <= argc; i++) {
        int t = lua_type(L, i);
        if (t != LUA_TSTRING && t != LUA_TNUMBER)
            return raise_err(L, "Lua redis lib command arguments must be strings or integers");
    }
    free_argv(x);
    args_to_argv(L, x, argc);
    command_t *cmd = resolve_command(x, x->argv, argc);
    if (!cmd) {
        free_argv(x);
        return raise_err(L, "Invalid command passed to redis.acl_check_cmd()");
    }
    /* The caller's user, without logging: this only asks. */
    int pos;
    bool ok = acl_check_cmd(x->run->caller->user, cmd, x->argv, argc, &pos) == ACL_OK;
    free_argv(x);
    lua_pushboolean(L, ok);
    return 1;
}

static void set_fn(lua_State *L, const char *name, lua_CFunction fn) {
    lua_pushcfunction(L, fn);
    lua_setfield(L, -2, name);
}

static void set_int(lua_State *L, const char *name, int v) {
    lua_pushinteger(L, v);
    lua_setfield(L, -2, name);
}

/* redis.REDIS_VERSION and REDIS_VERSION_NUM (0x00MMmmpp) into the table on
 * top: the scripts' redis table and FUNCTION LOAD's both have them. */
static void set_version(lua_State *L) {
    lua_pushstring(L, RL_REDIS_COMPAT_VERSION);
    lua_setfield(L, -2, "REDIS_VERSION");
    int maj = 0, min = 0, patch = 0;
    sscanf(RL_REDIS_COMPAT_VERSION, "%d.%d.%d", &maj, &min, &patch);
    set_int(L, "REDIS_VERSION_NUM", (maj << 16) | (min << 8) | patch);
}

/* functions: FUNCTION's state, whose `redis` lacks EVAL's debugger and
 * replication-mode calls (as in Redis 7.0). */
static void register_redis_lib(lua_State *L, bool functions) {
    lua_newtable(L);
    set_fn(L, "call", l_redis_call);
    set_fn(L, "pcall", l_redis_pcall);
    set_fn(L, "sha1hex", l_redis_sha1hex);
    set_fn(L, "error_reply", l_redis_error_reply);
    set_fn(L, "status_reply", l_redis_status_reply);
    set_fn(L, "log", l_redis_log);
    set_fn(L, "setresp", l_redis_setresp);
    set_fn(L, "set_repl", l_redis_set_repl);
    if (!functions) {
        set_fn(L, "replicate_commands", l_redis_replicate_commands);
        set_fn(L, "breakpoint", l_redis_breakpoint);
        set_fn(L, "debug", l_redis_debug);
    }
    set_fn(L, "acl_check_cmd", l_redis_acl_check_cmd);
    set_int(L, "LOG_DEBUG", LL_DEBUG);
    set_int(L, "LOG_VERBOSE", LL_VERBOSE);
    set_int(L, "LOG_NOTICE", LL_NOTICE);
    set_int(L, "LOG_WARNING", LL_WARNING);
    set_int(L, "REPL_NONE", 0);
    set_int(L, "REPL_AOF", SCRIPT_REPL_AOF);
    set_int(L, "REPL_SLAVE", SCRIPT_REPL_REPLICA);
    set_int(L, "REPL_REPLICA", SCRIPT_REPL_REPLICA);
    set_int(L, "REPL_ALL", SCRIPT_REPL_ALL);
    set_version(L);
    lua_setglobal(L, "redis");
}

/* ------------------------------------------------------------- state */

/* Mark the table on top read-only, and every table reachable from it
 * through fields and metatables: a library's nested tables (none today,
 * but a module may add one) must not be a way around the flag.  The
 * `seen` table (at index seen) stops cycles such as _G._G. */
static void seal_tree(lua_State *L, int seen) {
    int t = lua_gettop(L);
    lua_pushvalue(L, t);
    lua_rawget(L, seen);
    bool done = lua_toboolean(L, -1);
    lua_pop(L, 1);
    if (done) return;
    lua_pushvalue(L, t);
    lua_pushboolean(L, 1);
    lua_rawset(L, seen);
    lua_checkstack(L, 4);
    lua_pushnil(L);
    while (lua_next(L, t)) {
        if (lua_istable(L, -1)) seal_tree(L, seen);
        lua_pop(L, 1);
    }
    if (lua_getmetatable(L, t)) {
        seal_tree(L, seen);
        lua_pop(L, 1);
    }
    lua_setreadonly(L, t, 1);
}

/* Seal the globals and everything they reach, and the metatables of the
 * basic types (strings' holds their methods): from now on no script can
 * change what another script, or another user's, will run (CVE-2022-24735,
 * CVE-2025-46818).  The flag lives in the VM (deps/lua patch 0001), so
 * rawset, table.insert and setmetatable meet it as `t.x = v` does. */
static void lock_globals(lua_State *L, slua_ctx *x) {
    if (!x->functions) set_global_fn(L, "__redis__err__handler", error_handler); /* EVAL's, by name, as in Redis */
    /* Unknown globals are an error to read (Redis's text), to write one is
     * a read-only error like any other store. */
    lua_newtable(L);
    lua_pushcfunction(L, nonexistent_global);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, LUA_GLOBALSINDEX);

    lua_newtable(L); /* seen */
    int seen = lua_gettop(L);
    lua_pushvalue(L, LUA_GLOBALSINDEX);
    seal_tree(L, seen);
    lua_pop(L, 1);
    static const int basic_types[] = {LUA_TNIL, LUA_TBOOLEAN, LUA_TLIGHTUSERDATA, LUA_TNUMBER,
                                      LUA_TSTRING, LUA_TFUNCTION, LUA_TTHREAD};
    for (size_t i = 0; i < sizeof(basic_types) / sizeof(basic_types[0]); i++) {
        switch (basic_types[i]) {
            case LUA_TNIL: lua_pushnil(L); break;
            case LUA_TBOOLEAN: lua_pushboolean(L, 0); break;
            case LUA_TLIGHTUSERDATA: lua_pushlightuserdata(L, x); break;
            case LUA_TNUMBER: lua_pushinteger(L, 0); break;
            case LUA_TSTRING: lua_pushliteral(L, ""); break;
            case LUA_TFUNCTION: lua_pushcfunction(L, nonexistent_global); break;
            default: lua_pushthread(L); break;
        }
        if (lua_getmetatable(L, -1)) {
            seal_tree(L, seen);
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 1); /* seen */
    lua_pushvalue(L, LUA_GLOBALSINDEX);
    x->globals_ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

/* With lua-enable-deprecated-api, setfenv(0, t) swaps the running thread's
 * globals, which every later script would see: each run ends with the
 * sealed globals put back. */
static void restore_globals(lua_State *L, slua_ctx *x) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, x->globals_ref);
    if (!lua_rawequal(L, -1, LUA_GLOBALSINDEX)) lua_replace(L, LUA_GLOBALSINDEX);
    else lua_pop(L, 1);
}

/* FUNCTION LOAD's environment, as Redis 7.0's: only redis.register_function,
 * redis.log, the LOG_* levels and the version; anything else (math,
 * string, redis.call, redis.setresp...) is a nonexistent global while the
 * library's code runs, and is there for its functions when they run. */
static void build_load_env(lua_State *L, lua_CFunction register_fn) {
    lua_newtable(L); /* env */
    lua_newtable(L); /* env.redis */
    set_fn(L, "register_function", register_fn);
    set_fn(L, "log", l_redis_log);
    set_int(L, "LOG_DEBUG", LL_DEBUG);
    set_int(L, "LOG_VERBOSE", LL_VERBOSE);
    set_int(L, "LOG_NOTICE", LL_NOTICE);
    set_int(L, "LOG_WARNING", LL_WARNING);
    set_version(L);
    lua_newtable(L); /* env, redis, mt: unknown names are errors */
    lua_pushcfunction(L, nonexistent_global);
    lua_setfield(L, -2, "__index");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_setreadonly(L, -1, 1);
    lua_pushvalue(L, -1);
    lua_setmetatable(L, -3); /* redis's metatable */
    lua_insert(L, -2);       /* env, mt, redis */
    lua_setreadonly(L, -1, 1);
    lua_setfield(L, -3, "redis"); /* env, mt */
    lua_setmetatable(L, -2);      /* env (same rules) */
    lua_setreadonly(L, -1, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, "__rl_load_env");
}

sds slua_run_library(lua_State *L, const char *code, size_t len, lua_Hook timeout_hook) {
    if (len > 0 && code[0] == '\033') return sds_new("Error compiling function: bytecode loading is disabled");
    if (capped_load(L, code, len, "@user_function") != 0) {
        sds err = sds_catprintf(sds_empty(), "Error compiling function: %s", lua_tostring(L, -1));
        lua_pop(L, 1);
        return err;
    }
    /* The chunk's globals: an empty read-only table reading through a
     * read-only metatable whose __index is the load environment now, the
     * real globals later. */
    lua_newtable(L); /* fn, E */
    lua_newtable(L); /* fn, E, M */
    lua_getfield(L, LUA_REGISTRYINDEX, "__rl_load_env");
    lua_setfield(L, -2, "__index");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_pushvalue(L, -1);
    lua_setmetatable(L, -3); /* fn, E, M */
    lua_setreadonly(L, -1, 1);
    lua_setreadonly(L, -2, 1);
    lua_insert(L, -3);  /* M, fn, E */
    lua_setfenv(L, -2); /* M, fn */
    lua_pushcfunction(L, error_handler);
    lua_insert(L, -2); /* M, handler, fn */
    if (timeout_hook) lua_sethook(L, timeout_hook, LUA_MASKCOUNT, HOOK_EVERY_INSNS);
    int rc = slua_pcall(L, 0, 0, -2);
    lua_sethook(L, NULL, 0, 0);
    sds err = NULL;
    if (rc) {
        const char *msg = NULL;
        if (lua_istable(L, -1)) {
            lua_getfield(L, -1, "err");
            msg = lua_tostring(L, -1);
            lua_pop(L, 1);
        } else {
            msg = lua_tostring(L, -1);
        }
        err = sds_catprintf(sds_empty(), "Error registering functions: %s", msg ? msg : "unknown error");
        lua_pop(L, 1);
    }
    lua_pop(L, 1); /* the handler */
    /* From now on the library's functions see the normal globals. */
    lua_setreadonly(L, -1, 0);
    lua_pushvalue(L, LUA_GLOBALSINDEX);
    lua_setfield(L, -2, "__index");
    lua_setreadonly(L, -1, 1);
    lua_pop(L, 1); /* M */
    return err;
}

lua_State *slua_new(server_t *srv, lua_CFunction register_fn) {
    slua_ctx *x = zcalloc(sizeof(*x));
    x->srv = srv;
    x->functions = register_fn != NULL;
    x->replybuf = sds_empty();
    x->errbuf = sds_empty();
    size_t total = zmalloc_total_system_memory();
    x->host_half = total ? total / 2 : SIZE_MAX;
    x->rand48 = 0x1234ABCD330EULL; /* lrand48's initial state, as Redis 7.0 starts */
    lua_State *L = lua_newstate(slua_alloc, x);
    if (!L) {
        sds_free(x->replybuf);
        sds_free(x->errbuf);
        zfree(x);
        return NULL;
    }
    load_libraries(L, srv->cfg.lua_enable_deprecated_api);
    register_redis_lib(L, x->functions);
    lock_globals(L, x);
    if (register_fn) build_load_env(L, register_fn);
    return L;
}

void slua_free(lua_State *L) {
    if (!L) return;
    slua_ctx *x = ctx_of(L);
    lua_close(L);
    free_argv(x);
    sds_free(x->replybuf);
    sds_free(x->errbuf);
    zfree(x);
}

/* Lua 5.1 has no emergency collection: a script that failed at the heap
 * limit leaves its garbage counted, and with the collector's threshold
 * above the limit no step comes before every later script (another
 * user's too) fails "not enough memory" as well.  After a failure with
 * the heap past half its limit, collect everything now. */
static void collect_after_failure(lua_State *L) {
    slua_ctx *x = ctx_of(L);
    if (x->heap > heap_limit(x) / 2) lua_gc(L, LUA_GCCOLLECT, 0);
}

sds slua_compile(lua_State *L, const char *code, size_t len, const char *chunkname) {
    if (len > 0 && code[0] == '\033') return sds_new("bytecode loading is disabled");
    if (capped_load(L, code, len, chunkname) == 0) return NULL;
    size_t elen;
    const char *e = lua_tolstring(L, -1, &elen);
    sds err = sds_newlen(e ? e : "unknown error", e ? elen : 13);
    lua_pop(L, 1);
    collect_after_failure(L);
    return err;
}

/* ------------------------------------------------------------- running */

static void busy_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    slua_ctx *x = ctx_of(L);
    script_run_t *run = x->run;
    if (!run) return;
    if (!run->killed && !run->ops->busy_tick(run)) return;
    /* Keep raising at every line so a pcall in the script cannot swallow it. */
    lua_sethook(L, busy_hook, LUA_MASKLINE, 0);
    push_err(L, "ERR Script killed by user with SCRIPT KILL...");
    lua_error(L);
}

/* A debugging session's hook (line and count events): stops where the
 * session says, and ends the script when the user aborts. */
static void debug_hook(lua_State *L, lua_Debug *ar) {
    slua_ctx *x = ctx_of(L);
    script_run_t *run = x->run;
    if (!run || !run->ldb) return;
    const char *err = ldb_hook_stop(run->ldb, L, ar, run->srv->cfg.busy_reply_threshold);
    if (!err) return;
    push_err(L, err);
    lua_error(L);
}

static void push_array(lua_State *L, robj **v, int n) {
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        char buf[32];
        size_t len;
        const char *p = obj_string_view(v[i], buf, sizeof(buf), &len);
        lua_pushlstring(L, p, len);
        lua_rawseti(L, -2, i + 1);
    }
}

/* The error reply for a failed run, from the handler's table. */
static void reply_run_error(lua_State *L, script_run_t *run) {
    client_t *c = run->caller;
    if (!lua_istable(L, -1)) {
        const char *msg = lua_isstring(L, -1) ? lua_tostring(L, -1) : "execution failure";
        reply_error(c, "Error running script %s, %.100s", run->name, msg);
        return;
    }
    lua_getfield(L, -1, "err");
    lua_getfield(L, -2, "source");
    lua_getfield(L, -3, "line");
    const char *msg = lua_tostring(L, -3);
    const char *source = lua_tostring(L, -2);
    sds s = sds_new(msg ? msg : "ERR unknown error");
    if (source && lua_isnumber(L, -1))
        s = sds_catprintf(s, " script: %s, on %s:%d.", run->name, source, (int)lua_tointeger(L, -1));
    lua_pop(L, 3);
    /* counted once: when redis.call met it, or now */
    if (sconv_error_noted(L)) reply_error_raw_noted(c, s, sds_len(s));
    else reply_error_raw(c, s, sds_len(s));
    sds_free(s);
}

void slua_call(lua_State *L, script_run_t *run, robj **keys, int nkeys, robj **args, int nargs, bool as_globals) {
    slua_ctx *x = ctx_of(L);
    lua_pushcfunction(L, error_handler);
    lua_insert(L, -2); /* handler, fn */
    int base = lua_gettop(L) - 1;
    int nargs_lua = 0;
    if (as_globals) { /* the run's own KEYS and ARGV: the seal lifted to set them */
        lua_setreadonly(L, LUA_GLOBALSINDEX, 0);
        push_array(L, keys, nkeys);
        lua_setfield(L, LUA_GLOBALSINDEX, "KEYS");
        push_array(L, args, nargs);
        lua_setfield(L, LUA_GLOBALSINDEX, "ARGV");
        lua_setreadonly(L, LUA_GLOBALSINDEX, 1);
    } else {
        push_array(L, keys, nkeys);
        push_array(L, args, nargs);
        nargs_lua = 2;
    }
    x->run = run;
    if (run->ldb) lua_sethook(L, debug_hook, LUA_MASKLINE | LUA_MASKCOUNT, HOOK_EVERY_INSNS);
    else lua_sethook(L, busy_hook, LUA_MASKCOUNT, HOOK_EVERY_INSNS);
    int err = slua_pcall(L, nargs_lua, 1, base);
    lua_sethook(L, NULL, 0, 0);
    x->run = NULL;
    free_argv(x);
    if (err) reply_run_error(L, run);
    else sconv_reply_value(run->caller, L, run->resp, 0);
    lua_settop(L, base - 1);
    restore_globals(L, x);
    if (err) collect_after_failure(L);
    if (++x->runs_since_gc >= GC_STEP_EVERY_RUNS) {
        lua_gc(L, LUA_GCSTEP, GC_STEP_EVERY_RUNS);
        x->runs_since_gc = 0;
    }
}
