/* commands.h: the command table and dispatch.
 *
 * Each command family (t_string.c, keyspace.c, ...) exports a table of
 * command_t ending with a zeroed entry; commands.c gathers them into one
 * dictionary and dispatches requests: lookup, arity, authentication, then
 * the handler, then statistics.  Container commands (CONFIG, CLIENT,
 * OBJECT, ...) carry a subcommand table and are dispatched on argv[1].
 * What a command is (command_t, the CMD_* flags) is command_def.h's, so
 * that the layers below the table (reply.c counts failed calls) may see it. */
#ifndef RL_COMMANDS_H
#define RL_COMMANDS_H

#include <stdbool.h>
#include <stdint.h>

#include "command_def.h"
#include "conn.h"

void commands_init(server_t *srv);
void commands_free(server_t *srv);
command_t *commands_lookup(server_t *srv, const char *name, size_t len);
/* The command or subcommand (XGROUP CREATE) argv names, or NULL; no reply. */
command_t *commands_lookup_argv(server_t *srv, robj **argv, int argc);
/* argc (the name included) fits cmd's arity; handlers rely on it. */
bool commands_arity_ok(const command_t *cmd, int argc);
/* The subcommand of parent named name (case-insensitive), or NULL. */
command_t *commands_find_subcommand(command_t *parent, const char *name);
/* Run the request in c->argc/c->argv; the reply is queued on c.  The
 * dispatcher (dispatch.c) sits above this table: both calls go through
 * the hooks it registers at start-up (hooks.c), so a module below it
 * (pause.c resuming a client) can run a request. */
void commands_process(client_t *c);
/* Execute an already resolved and checked command, with statistics
 * (EXEC runs its queued commands through this, redis.call too). */
void commands_call(client_t *c, command_t *cmd);

/* dispatch.c's entry points, for the two calls above. */
typedef struct dispatch_hooks {
    void (*process)(client_t *c);
    void (*call)(client_t *c, command_t *cmd);
} dispatch_hooks_t;
void commands_reset_stats(server_t *srv);
/* Iterate every command and subcommand (for INFO commandstats). */
void commands_foreach(server_t *srv, void (*fn)(void *arg, command_t *cmd), void *arg);

/* Parse an integer argument; on failure reply msg (default: "value is not
 * an integer or out of range") and return false. */
bool cmd_get_ll_or_reply(client_t *c, robj *o, long long *out, const char *msg);
/* Same, also requiring min <= value <= max. */
bool cmd_get_range_or_reply(client_t *c, robj *o, long long min, long long max, long long *out, const char *msg);

/* A yes|no|local setting (enable-debug-command, enable-protected-configs;
 * DEBUG_CMD_* values): whether it lets client c in.  "local" is a client
 * on loopback or a Unix socket, or one with no socket at all (a script's
 * or the AOF loader's). */
bool cmd_local_mode_allows(const client_t *c, int mode);
/* A CMD_PROTECTED command's refusal (Redis's text) when enable-debug-command
 * or enable-module-command does not allow c's connection, else NULL. */
const char *commands_protected_refusal(const client_t *c, const command_t *cmd);

/* Tables exported by the command families. */
extern command_t string_commands[];
extern command_t keyspace_commands[];
extern command_t server_commands[];
extern command_t command_commands[]; /* command_cmds.c: COMMAND */
extern command_t conn_commands[];
extern command_t memory_commands[];
extern command_t multi_commands[];    /* multi.c */
extern command_t script_commands[];   /* script.c: EVAL*, SCRIPT */
extern command_t function_commands[]; /* function.c: FUNCTION, FCALL* */
extern command_t hash_commands[];
extern command_t hash_ttl_commands[]; /* hash_ttl.c */
extern command_t set_commands[];
extern command_t zset_commands[];
extern command_t list_commands[];                         /* t_list.c */
extern command_t dump_commands[];                         /* dump.c: DUMP, RESTORE */
extern command_t keycopy_commands[];                      /* keycopy.c: COPY, MOVE */
extern command_t sort_commands[];                         /* sort.c: SORT, SORT_RO */
extern command_t lcs_commands[];                          /* lcs.c */
extern command_t cluster_commands[];                      /* cluster_cmds.c: CLUSTER, READONLY, READWRITE, ASKING */
extern command_t lolwut_commands[];                       /* lolwut.c */
extern command_t debug_commands[];                        /* debug.c */
extern command_t migrate_commands[];                      /* migrate.c */
extern command_t bitmap_commands[];                       /* t_bitmap.c */
extern command_t hll_commands[];                          /* hyperloglog.c */
extern command_t geo_commands[];                          /* geo.c */
extern command_t zset_blocking_commands[];                /* blocking.c: BZPOPMIN, BZPOPMAX, BZMPOP */
extern command_t stream_commands[], stream_cg_commands[]; /* t_stream.c, t_stream_cg.c */
/* Declared here rather than in their modules' headers, so the table
 * includes none of the modules above it. */
extern command_t pubsub_commands[], slowlog_commands[], latency_commands[], monitor_commands[]; /* their .c */
extern command_t persist_commands[];                                                            /* persist.c */
extern command_t repl_commands[];                                                               /* repl_master.c, repl_replica.c, repl_info.c */
extern command_t acl_commands[];                                                                /* acl_cmds.c: ACL */
extern command_t module_commands[];                                                             /* module_cmds.c: MODULE */
extern const obj_type_ops_t list_type_ops, stream_type_ops;
/* Object ops of the collection types, registered by commands_init(). */
extern const obj_type_ops_t hash_type_ops, set_type_ops, zset_type_ops;

#endif
