/* persist.h: durability as the server sees it: SAVE/BGSAVE/BGREWRITEAOF,
 * save points, the one forked child, loading at start-up, saving at
 * shutdown, the MISCONF guard and the INFO persistence figures.
 *
 * lifecycle.c calls persist_init / persist_load_at_startup / persist_cron /
 * persist_before_sleep / persist_shutdown / persist_free; dispatch.c calls
 * persist_write_allowed_or_reply before a write command and
 * persist_after_command after it (feeds the AOF); info.c formats
 * persist_info().  The file formats live in rdb_*.c and aof.c. */
#ifndef RL_PERSIST_H
#define RL_PERSIST_H

#include <stdbool.h>
#include <sys/types.h>

#include "commands.h"
#include "server.h"

enum { PERSIST_CHILD_NONE = 0,
       PERSIST_CHILD_RDB,
       PERSIST_CHILD_AOF };

typedef struct aof aof_t;

/* Owned by persist.c; srv->persist points at it. */
typedef struct persist {
    /* the forked child (at most one, as in Redis) */
    pid_t child_pid; /* -1 when none */
    int child_type;  /* PERSIST_CHILD_* */
    int child_pipe;  /* read end: the child reports its COW bytes */
    long long child_start_ms;
    bool child_writes_no_file;  /* persist_fork_with: its body is not a save */
    long long latest_fork_usec; /* INFO stats */
    long long total_forks;
    /* RDB */
    bool last_bgsave_ok;            /* rdb_last_bgsave_status */
    long long last_bgsave_try;      /* unix s of the last attempt (retry delay after errors) */
    long long last_bgsave_time_sec; /* duration of the last BGSAVE, -1 if none */
    long long rdb_saves;
    long long dirty_at_fork;  /* srv->dirty when the child started */
    size_t rdb_last_cow_size; /* bytes */
    bool bgsave_scheduled;    /* BGSAVE SCHEDULE while the AOF child runs */
    bool loading;
    bool shutdown_done; /* the final save/flush ran (SHUTDOWN or exit) */
    aof_t *aof;         /* aof.c */
} persist_t;

void persist_init(server_t *srv);
void persist_free(server_t *srv);
/* Load the AOF (appendonly yes) or the RDB file; false means start-up
 * must stop (the reason is logged). */
bool persist_load_at_startup(server_t *srv);
/* DEBUG RELOAD: load the RDB file into the (emptied) databases; false when
 * it is missing or unreadable (logged). */
bool persist_reload_rdb(server_t *srv);
void persist_cron(server_t *srv);
void persist_before_sleep(server_t *srv);
/* Final save on shutdown: with save points (or force_save), unless nosave.
 * false if the save failed (SHUTDOWN then replies an error and stays up). */
bool persist_shutdown(server_t *srv, bool nosave, bool force_save);

/* MISCONF guard for write commands (the _or_reply convention). */
bool persist_write_allowed_or_reply(client_t *c);
/* After a command ran: feed the AOF when it was a write that changed
 * something (dirty_before is srv->dirty before the call). */
void persist_after_command(client_t *c, long long dirty_before);
/* A script's effects are logged as one unit (MULTI/EXEC around more than
 * one command) between begin and end; mute drops them (redis.set_repl). */
void persist_effects_begin(server_t *srv);
void persist_effects_mute(server_t *srv, bool mute);
void persist_effects_end(server_t *srv);
/* A command whose effects are logged as other commands (XREADGROUP and
 * XCLAIM log one exact XCLAIM per entry): feed argv to the AOF now, on c's
 * database, and leave the running command itself out.  Borrows argv. */
void persist_propagate(client_t *c, robj **argv, int argc);
/* Whether persist_propagate would log anything now (the AOF is on and not
 * being loaded): callers skip building argv when it would not. */
bool persist_propagation_on(const client_t *c);

/* SAVE in the foreground; 0 or -1 (logged, status set to err). */
int persist_save(server_t *srv);
/* Fork a child; err gets the reason on failure. */
int persist_fork(server_t *srv, int type, const char **err);
/* The same child slot with another body (repl_diskless.c writes the RDB to
 * replicas' sockets); body's return value is the child's exit code. */
typedef int persist_child_fn(server_t *srv, void *arg);
int persist_fork_with(server_t *srv, int type, persist_child_fn *body, void *arg, const char **err);
bool persist_child_active(const server_t *srv);

sds persist_info(server_t *srv, sds s); /* the "# Persistence" section body */
/* Full path of a file in the configured dir (caller sds_frees). */
sds persist_path(const server_t *srv, const char *name);


#endif
