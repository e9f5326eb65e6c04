/* script.h: scripting as the server sees it: EVAL/EVALSHA/SCRIPT (script.c),
 * the run of any script (EVAL or FCALL) with its busy state, the fake
 * client that runs redis.call, and the INFO figures.  FUNCTION/FCALL live
 * in function.c and share the run machinery declared here.
 *
 * dispatch.c asks script_busy_error() before every command: while a script
 * runs past busy-reply-threshold, other clients get -BUSY except for the
 * few commands that can end it or that a transaction needs.  lifecycle.c calls scripting_init and
 * scripting_free; info.c calls scripting_info_memory.
 *
 * Layering: function.c builds on this file (FCALL runs through the same
 * run) and this file on script_lua.c (the engine), never the other way:
 * the engine calls back through script_run_t's ops, and FUNCTION's
 * lifecycle and figures are wired by lifecycle.c and info.c. */
#ifndef RL_SCRIPT_H
#define RL_SCRIPT_H

#include <stdbool.h>
#include <sys/types.h>

#include "commands.h"
#include "script_lua.h"

typedef struct functions functions_t; /* function.c */

typedef struct scripting {
    lua_State *L;         /* EVAL's state */
    dict *scripts;        /* sha1 hex (sds) -> script_entry */
    size_t scripts_bytes; /* bytes of cached bodies (used_memory_scripts_eval) */
    /* EVAL-created scripts, least recently run first (script.c: eviction) */
    struct script_entry *lru_oldest, *lru_newest;
    size_t lru_len;
    client_t *fake;         /* runs redis.call for EVAL and FCALL */
    script_run_t *run;      /* the running script, or NULL */
    functions_t *functions; /* function.c */
    ldb_t *debug;           /* the session the next run gets (SCRIPT DEBUG), or NULL */
    pid_t *debug_children;  /* forked debugging sessions (SCRIPT DEBUG YES) */
    int debug_nchildren;
} scripting_t;

void scripting_init(server_t *srv);
/* Kills the forked debugging sessions still running. */
void scripting_free(server_t *srv);
/* Cron: reap the forked debugging sessions that ended. */
void scripting_cron(server_t *srv);

/* Dispatch gate: NULL, or the -BUSY error (without the '-') cmd gets. */
const char *script_busy_error(client_t *c, command_t *cmd);
bool script_is_running(const server_t *srv);

/* The run of one script, shared by EVAL and FCALL. */
void script_run_init(script_run_t *run, client_t *caller, const char *name, int flags, bool ro);
/* Pre-run checks for scripts that may write (OOM, MISCONF); false after
 * replying. */
bool script_may_run_or_reply(script_run_t *run);
void script_run_begin(script_run_t *run);
void script_run_end(script_run_t *run);

/* SCRIPT KILL (function=false) / FUNCTION KILL. */
void script_kill_or_reply(client_t *c, bool function);

/* "#!lua flags=..." -> *flags, *body_off (where the code starts: the
 * shebang's newline, so line numbers stay right).  false + *err (caller
 * frees) on a bad shebang. */
bool script_parse_shebang(const char *body, size_t len, int *flags, size_t *body_off, sds *err);
/* "no-writes" ... -> SCRIPT_FLAG_*, or -1. */
int script_flag_from_name(const char *name);

/* A script that declares flags (a shebang, a function's flags) stands for
 * what they say, not for its command's own flags (Redis 7.0's
 * getCommandFlags): a write (and refused under OOM unless allow-oom)
 * unless no-writes, allowed on a stale replica with allow-stale, never
 * "may replicate".  as_command maps them onto the command's; the other
 * finds the flags of the script an EVAL/EVALSHA[_RO] request names
 * (cached, or the shebang of a body not cached yet): false for other
 * commands and for scripts without a shebang. */
uint32_t script_flags_as_command(uint32_t cmd_flags, int script_flags);
bool script_eval_declared_flags(server_t *srv, const client_t *c, const command_t *cmd, int *flags);

/* FUNCTION's figures (function.c), which the "memory" section prints among
 * EVAL's: info.c gathers them, so this file needs nothing of function.c. */
typedef struct scripting_fn_figures {
    size_t functions, libraries; /* number_of_functions, number_of_libraries */
    size_t vm_bytes;             /* used_memory_vm_functions */
    size_t overhead_bytes;       /* used_memory_functions */
} scripting_fn_figures_t;
sds scripting_info_memory(server_t *srv, sds s, const scripting_fn_figures_t *fn);
/* Bytes of EVAL's Lua heap (used_memory_vm_eval): allocated by zmalloc. */
size_t scripting_vm_memory(server_t *srv);
/* The EVAL script cache: bodies, table, entries (INFO used_memory_scripts_eval,
 * MEMORY STATS lua.caches). */
size_t scripting_cache_memory(server_t *srv);

extern command_t script_commands[];

#endif
