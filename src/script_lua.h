/* script_lua.h: the Lua 5.1 engine shared by EVAL (script.c) and FUNCTION
 * (function.c): a sandboxed state, the `redis` library, the calls into
 * Lua and the RESP <-> Lua conversions (script_conv.c).
 *
 * One script runs at a time; its context (script_run_t) says who called,
 * under which flags, and what the script did so far.  redis.call runs
 * commands through commands_call() on a fake client (no socket), so
 * notifications, WATCH and the AOF see them as any client's commands.
 * Nothing here replies to the caller except slua_call's final reply. */
#ifndef RL_SCRIPT_LUA_H
#define RL_SCRIPT_LUA_H

#include <lua.h>
#include <stdbool.h>

#include "conn.h"

/* Script flags: from an EVAL shebang or a function's flags table. */
#define SCRIPT_FLAG_NO_WRITES (1 << 0)
#define SCRIPT_FLAG_ALLOW_OOM (1 << 1)
#define SCRIPT_FLAG_ALLOW_STALE (1 << 2)
#define SCRIPT_FLAG_NO_CLUSTER (1 << 3)
#define SCRIPT_FLAG_ALLOW_CROSS_SLOT (1 << 4)
#define SCRIPT_FLAG_EVAL_COMPAT (1 << 5) /* EVAL without a shebang: 6.x rules */

/* redis.set_repl flags */
#define SCRIPT_REPL_AOF 1
#define SCRIPT_REPL_REPLICA 2
#define SCRIPT_REPL_ALL 3

typedef struct script_run script_run_t;
typedef struct ldb ldb_t; /* script_ldb.h */

/* What the engine asks of the run's owner (script.c sets them in
 * script_run_init): the engine sits below script.c and does not include it. */
typedef struct script_run_ops {
    /* From the Lua hook every 100k instructions: the busy check; true stops
     * the script. */
    bool (*busy_tick)(script_run_t *run);
    /* Run one redis.call command on run->fake (argv already set). */
    void (*exec_command)(script_run_t *run, command_t *cmd);
} script_run_ops_t;

struct script_run {
    const script_run_ops_t *ops;
    server_t *srv;
    client_t *caller;         /* who ran EVAL/FCALL; protected while we run */
    client_t *fake;           /* runs redis.call's commands */
    const char *name;         /* sha1 (EVAL) or function name, for error texts */
    int flags;                /* SCRIPT_FLAG_* */
    int slot;                 /* cluster: the slot of the keys used so far, -1 none */
    bool read_only;           /* EVAL_RO/FCALL_RO or no-writes: writes refused */
    bool is_function;         /* FUNCTION KILL vs SCRIPT KILL, BUSY text */
    bool wrote;               /* a write command ran: SCRIPT KILL refuses */
    bool timed_out;           /* past busy-reply-threshold: others get -BUSY */
    bool killed;              /* SCRIPT/FUNCTION KILL or SHUTDOWN asked to stop */
    bool oom;                 /* used_memory was over maxmemory at the start */
    int resp;                 /* protocol of redis.call replies (redis.setresp) */
    int repl;                 /* SCRIPT_REPL_* (redis.set_repl) */
    long long start_ms;       /* monotonic start, for the busy threshold */
    long long last_events_ms; /* when the hook last served other clients */
    ldb_t *ldb;               /* SCRIPT DEBUG's session, or NULL */
};

/* The sandboxed state; a register_fn selects the FUNCTION flavour: it
 * becomes redis.register_function in the library load environment. */
lua_State *slua_new(server_t *srv, lua_CFunction register_fn);
/* FUNCTION LOAD: compile and run a library's code (after its shebang
 * line) in the load environment; NULL or the error text (caller frees).
 * timeout_hook (may be NULL) runs every 100k instructions. */
sds slua_run_library(lua_State *L, const char *code, size_t len, lua_Hook timeout_hook);
void slua_free(lua_State *L);
size_t slua_used_memory(lua_State *L); /* bytes of the Lua heap */
/* lua_pcall with the heap limit in force: a script's own work runs under
 * it, the host's calls around it never fail for it. */
int slua_pcall(lua_State *L, int nargs, int nresults, int errfunc);

/* Compile `code` as chunk `chunkname`; on success the function is left on
 * the stack and NULL returned, else an sds error text (caller frees). */
sds slua_compile(lua_State *L, const char *code, size_t len, const char *chunkname);

/* Run the function on top of the stack (popped) for run->caller and
 * reply to it.  EVAL passes keys/args as KEYS/ARGV globals (as_globals),
 * FCALL as the callback's two table arguments. */
void slua_call(lua_State *L, script_run_t *run, robj **keys, int nkeys, robj **args, int nargs, bool as_globals);

/* Build a `{err=...}` table the way redis.error_reply does. */
void slua_push_error_table(lua_State *L, const char *msg, size_t len);

/* script_conv.c: RESP reply bytes -> Lua value (redis.call's result). */
const char *sconv_push_reply(lua_State *L, const char *p, const char *end, int depth);
/* Lua value at the top of the stack -> reply on c; script_resp is the
 * protocol the script asked for (booleans differ between 2 and 3). */
void sconv_reply_value(client_t *c, lua_State *L, int script_resp, int depth);
/* An {err=...} table's field saying the error is already in errorstats
 * (its command replied it, or redis.call's checks refused the call: Redis
 * names it so, and scripts see it); noted reads it from the table on top. */
#define SCONV_NOTED "ignore_error_stats_update"
bool sconv_error_noted(lua_State *L);

/* Lua C modules (lua_cmsgpack.c, lua_struct.c, lua_cjson.c, lua_bit.c). */
int slua_open_cmsgpack(lua_State *L);
int slua_open_struct(lua_State *L);
int slua_open_cjson(lua_State *L);
int slua_open_bit(lua_State *L);

#endif
