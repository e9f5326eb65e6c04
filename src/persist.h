/* persist.h: durability as the server sees it: SAVE/BGSAVE/BGREWRITEAOF,
 * save points, loading at start-up, saving at shutdown, the MISCONF guard
 * and the INFO persistence figures.
 *
 * lifecycle.c calls persist_init / persist_load_at_startup / persist_cron /
 * persist_before_sleep / persist_shutdown / persist_free; dispatch.c calls
 * persist_write_refusal before a write command and
 * persist_after_command after it (feeds the AOF); info.c formats
 * persist_info().  The file formats live in rdb_*.c and aof.c, the forked
 * child in child.c. */
#ifndef RL_PERSIST_H
#define RL_PERSIST_H

#include <stdbool.h>
#include <sys/types.h>

#include "commands.h"
#include "server.h"

/* Owned by persist.c; srv->persist points at it.  The forked child is
 * child.c's, the AOF aof.c's (srv->aof). */
typedef struct persist persist_t;

void persist_init(server_t *srv);
void persist_free(server_t *srv);
/* Load the AOF (appendonly yes) or the RDB file; false means start-up
 * must stop (the reason is logged). */
bool persist_load_at_startup(server_t *srv);
/* DEBUG RELOAD: load the RDB file into the databases (emptied first, or
 * not: a key or library already there then fails the load, or with merge
 * is replaced); false when it is missing, unreadable or failed (logged). */
bool persist_reload_rdb(server_t *srv, bool merge);
/* DEBUG LOADAOF: write out what the AOF buffers, empty the databases and
 * the function libraries, replay the AOF's files; false when they could
 * not be loaded (logged). */
bool persist_reload_aof(server_t *srv);
void persist_cron(server_t *srv);
void persist_before_sleep(server_t *srv);
/* Final save on shutdown: with save points (or force_save), unless nosave.
 * false if the save failed, or AOF's first base is still being written
 * and not force (SHUTDOWN then replies an error, a signal is logged, and
 * the server stays up). */
bool persist_shutdown(server_t *srv, bool nosave, bool force_save, bool force);

/* MISCONF guard for write commands (dispatch.c, scripts): the error line
 * that refuses them now, or NULL; the text lives until the next call. */
const char *persist_write_refusal(server_t *srv);
/* A write from our master while our own writes are refused: as Redis 7.0,
 * the replica stops (abort, logged) unless replica-ignore-disk-write-errors
 * is yes, which applies it and logs that once every 10 s. */
void persist_check_master_write(server_t *srv);
/* After a command ran: feed the AOF when it was a write that changed
 * something (dirty_before is srv->dirty before the call). */
void persist_after_command(client_t *c, long long dirty_before);
/* A client's command's, a served blocked client's or a script's effects
 * are logged as one unit (MULTI/EXEC around more than one command)
 * between begin and end; targets says whether those from now on go to the
 * AOF, to the replicas (redis.set_repl).  end_as with may_wrap false logs
 * them without MULTI/EXEC (RANDOMKEY's and SCAN's expired keys). */
void persist_effects_begin(server_t *srv);
void persist_effects_targets(server_t *srv, bool aof, bool replicas);
void persist_effects_end(server_t *srv);
void persist_effects_end_as(server_t *srv, bool may_wrap);
/* A command whose effects are logged as other commands (XREADGROUP and
 * XCLAIM log one exact XCLAIM per entry): feed argv to the AOF now, on c's
 * database, and leave the running command itself out.  Borrows argv. */
void persist_propagate(client_t *c, robj **argv, int argc);
/* The running command is logged as `name args...` instead of itself, the
 * rewrites Redis 7.0 makes so that a replica or a reload repeats the effect
 * and never blocks or draws again (BLPOP as LPOP, SPOP as SREM, GETDEL as
 * DEL...).  More than one call logs them as one MULTI/EXEC unit when the
 * caller wraps them in persist_effects_begin/end.  Borrows args; builds
 * nothing when no AOF or replica would get it. */
void persist_propagate_as(client_t *c, const char *name, robj **args, int nargs);
/* persist_propagate_as for the pops: `name key [count]` (count < 0: the
 * form without one), as blocking and multi-key pops are logged. */
void persist_propagate_pop(client_t *c, const char *name, robj *key, long count);
/* The running command is logged even if it changed nothing (FLUSHDB and
 * FLUSHALL on empty databases: a replica must flush all the same). */
void persist_force_propagate(client_t *c);
/* FLUSHALL's file side, as Redis: an RDB child is stopped and, with save
 * points, the emptied data set is saved at once, so a restart does not
 * bring the flushed keys back. */
void persist_after_flushall(server_t *srv);
/* Whether persist_propagate would log anything now (the AOF is on and not
 * being loaded): callers skip building argv when it would not. */
bool persist_propagation_on(const client_t *c);

/* SAVE in the foreground; 0 or -1 (logged, status set to err). */
int persist_save(server_t *srv);
/* BGSAVE: an RDB child writing dbfilename (also a disk-based full sync's
 * snapshot, repl_master.c).  When it ends, the listener set with
 * persist_on_rdb_done is told.  false with *err when it could not fork. */
bool persist_bgsave(server_t *srv, const char **err);
/* Who hears that a BGSAVE child ended (ok: the file is written):
 * replication registers itself at init, so that persistence, below it,
 * never calls it by name. */
typedef void persist_rdb_done_fn(server_t *srv, bool ok);
void persist_on_rdb_done(server_t *srv, persist_rdb_done_fn *fn);

/* No save points and no AOF (rdb-del-sync-files removes the RDB files of
 * full syncs only then, as Redis does). */
bool persist_all_disabled(const server_t *srv);
sds persist_info(server_t *srv, sds s); /* the "# Persistence" section body */


#endif
