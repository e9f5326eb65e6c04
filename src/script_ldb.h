/* script_ldb.h: the Lua debugger behind SCRIPT DEBUG YES|SYNC (Redis's
 * LDB, the protocol `redis-cli --ldb` speaks).
 *
 * A session belongs to one EVAL run.  script.c sets it up (detaches the
 * client's socket from the I/O engine, forks for YES) and hands it to the
 * engine in script_run_t.ldb; the engine (script_lua.c) sets a line hook
 * that calls ldb_hook_stop() and lets redis.call, redis.debug and
 * redis.breakpoint log through the calls below.  When the hook stops, this
 * file runs the read-eval-print loop itself, blocking on the client's
 * socket: the debugger's commands (step, continue, list, print, break,
 * trace, eval, redis, maxlen, abort, help) arrive as RESP arrays and every
 * answer leaves as an array of status lines.  Nothing here knows the event
 * loop, the client structure or TLS: only the two calls of ldb_io_t. */
#ifndef RL_SCRIPT_LDB_H
#define RL_SCRIPT_LDB_H

#include <lua.h>
#include <stdbool.h>

#include "sds.h"

typedef struct ldb ldb_t;

/* The client's connection, blocking both ways (script.c: plain or TLS).
 * recv: up to cap bytes of what the client sent, waiting for some; 0 or
 * less when it is gone.  send: all n bytes out, false when it is gone. */
typedef struct ldb_io {
    void *ctx;
    long (*recv)(void *ctx, char *buf, size_t cap);
    bool (*send)(void *ctx, const char *p, size_t n);
} ldb_io_t;

/* A session over io for the script `body` (its whole text, shebang
 * included: line numbers count it).  pending: bytes the client already
 * sent that the I/O engine had read (taken over). */
ldb_t *ldb_new(ldb_io_t io, const char *body, size_t len, sds pending);
/* The script ended: "<endsession>" and the logs still queued go out. */
void ldb_end(ldb_t *l);
void ldb_free(ldb_t *l);

/* From the engine's hook (line and count events).  Stops when the session
 * asks to (step, breakpoint, redis.breakpoint(), or a run past
 * busy_ms without a stop) and runs the prompt until the user resumes.
 * NULL to go on, else the error text the script must end with. */
const char *ldb_hook_stop(ldb_t *l, lua_State *L, lua_Debug *ar, long long busy_ms);

/* redis.call's logging: true while redis.call should log (stepping, or
 * the prompt's `redis` command). */
bool ldb_logs_calls(const ldb_t *l);
/* The command about to run, its arguments joined by spaces (taken). */
void ldb_log_command(ldb_t *l, sds args);
/* A refusal before the command ran ("Unknown Redis command..."). */
void ldb_log_error(ldb_t *l, const char *msg);
/* The command's RESP reply (an error reply is logged as an error too). */
void ldb_log_reply(ldb_t *l, const char *p, size_t len);

/* redis.debug(...): its arguments, with the script's current line. */
void ldb_log_debug(ldb_t *l, lua_State *L);
/* redis.breakpoint(): stop at the next line. */
void ldb_request_break(ldb_t *l);

#endif
