/* durability_hooks.h: what the durability layer (rdb_*.c, aof.c,
 * repl_*.c) needs from the execution layer above it.
 *
 * The function libraries are data the RDB and the AOF carry and a full
 * sync replaces, but their registry lives with the scripting engine
 * (function.c); a MULTI block replayed from the AOF is queued as it was
 * when it ran (multi.c); FAILOVER holds writes as CLIENT PAUSE does
 * (pause.c).  hooks.c fills the table at start-up (srv->durability_hooks);
 * every entry is set. */
#ifndef RL_DURABILITY_HOOKS_H
#define RL_DURABILITY_HOOKS_H

#include <stdbool.h>
#include <stddef.h>

#include "server.h"

typedef struct durability_hooks {
    /* function.c: each library's code, for RDB saves and AOF rewrites */
    void (*foreach_function)(server_t *srv, void (*fn)(void *arg, const char *code, size_t len), void *arg);
    /* NULL, or the error (caller frees); replace: a library of the same name
     * is replaced (DEBUG RELOAD MERGE) instead of refused */
    sds (*load_function)(server_t *srv, const char *code, size_t len, bool replace);
    void (*flush_functions)(server_t *srv); /* a full sync or DEBUG LOADAOF replaces them */
    /* multi.c, while the AOF is replayed */
    bool (*replay_queue)(client_t *c, command_t *cmd); /* true: queued inside MULTI, not run */
    void (*replay_end)(client_t *c);                   /* an unfinished MULTI is dropped, never run */
    /* pause.c: FAILOVER holds writes while the replica catches up */
    void (*hold_writes)(server_t *srv, bool on);
    /* blocking.c: a master turned replica lets its blocked clients go */
    void (*became_replica)(server_t *srv);
} durability_hooks_t;

#endif
