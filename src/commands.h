/* commands.h: the command table and dispatch.
 *
 * Each command family (t_string.c, keyspace.c, ...) exports a table of
 * command_t ending with a zeroed entry; commands.c gathers them into one
 * dictionary and dispatches requests: lookup, arity, authentication, then
 * the handler, then statistics.  Container commands (CONFIG, CLIENT,
 * OBJECT, ...) carry a subcommand table and are dispatched on argv[1]. */
#ifndef RL_COMMANDS_H
#define RL_COMMANDS_H

#include <stdbool.h>
#include <stdint.h>

#include "conn.h"

#define CMD_WRITE (1u << 0)
#define CMD_READONLY (1u << 1)
#define CMD_DENYOOM (1u << 2)
#define CMD_ADMIN (1u << 3)
#define CMD_PUBSUB (1u << 4)
#define CMD_NOSCRIPT (1u << 5)
#define CMD_BLOCKING (1u << 6)
#define CMD_LOADING (1u << 7)
#define CMD_STALE (1u << 8)
#define CMD_FAST (1u << 9)
#define CMD_NO_AUTH (1u << 10)
#define CMD_MAY_REPLICATE (1u << 11)
#define CMD_SENTINEL (1u << 12)
#define CMD_NO_MULTI (1u << 13)
/* The rest of Redis 7.0's flags, set from command_meta.h's table. */
#define CMD_SKIP_MONITOR (1u << 14)
#define CMD_SKIP_SLOWLOG (1u << 15)
#define CMD_ASKING (1u << 16)
#define CMD_NO_MANDATORY_KEYS (1u << 17)
#define CMD_NO_ASYNC_LOADING (1u << 18)
#define CMD_MOVABLE_KEYS (1u << 19)
#define CMD_ALLOW_BUSY (1u << 20)
#define CMD_MODULE (1u << 21)

typedef void command_proc(client_t *c);
typedef struct cmd_meta cmd_meta_t; /* command_meta.h */

struct command {
    const char *name; /* lowercase */
    command_proc *proc;
    int arity; /* n = exactly n args, -n = at least n */
    uint32_t flags;
    int first_key, last_key, key_step; /* key positions for COMMAND */
    const char *group;                 /* "string", "generic", ... for COMMAND DOCS */
    const char *summary;
    const char *since;
    struct command *subcommands; /* zero-terminated table or NULL */
    /* Redis 7.0's row for this command (command_meta.h), attached by
     * commands_init(); when present, arity, flags and key positions above
     * are overwritten from it, so the table entry's values only matter for
     * commands Redis lacks. */
    const cmd_meta_t *meta;
    int acl_id; /* acl_user.c: bit index in ACL permission maps */
    /* runtime statistics (INFO commandstats) */
    struct command *parent;
    char *fullname; /* "config|get" */
    long long calls, usec, rejected_calls, failed_calls;
    struct hdr_hist *latency_hist; /* latency_track.c: NULL until the first tracked call */
};

void commands_init(server_t *srv);
void commands_free(server_t *srv);
command_t *commands_lookup(server_t *srv, const char *name, size_t len);
/* The command or subcommand (XGROUP CREATE) argv names, or NULL; no reply. */
command_t *commands_lookup_argv(server_t *srv, robj **argv, int argc);
/* argc (the name included) fits cmd's arity; handlers rely on it. */
bool commands_arity_ok(const command_t *cmd, int argc);
/* Run the request in c->argc/c->argv; the reply is queued on c. */
void commands_process(client_t *c);
/* Execute an already resolved and checked command, with statistics
 * (EXEC runs its queued commands through this). */
void commands_call(client_t *c, command_t *cmd);
void commands_reset_stats(server_t *srv);
/* Iterate every command and subcommand (for INFO commandstats). */
void commands_foreach(server_t *srv, void (*fn)(void *arg, command_t *cmd), void *arg);

/* Parse an integer argument; on failure reply msg (default: "value is not
 * an integer or out of range") and return false. */
bool cmd_get_ll_or_reply(client_t *c, robj *o, long long *out, const char *msg);
/* Same, also requiring min <= value <= max. */
bool cmd_get_range_or_reply(client_t *c, robj *o, long long min, long long max, long long *out, const char *msg);

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
extern command_t set_commands[];
extern command_t zset_commands[];
extern command_t list_commands[];                         /* t_list.c */
extern command_t dump_commands[];                         /* dump.c: DUMP, RESTORE */
extern command_t keycopy_commands[];                      /* keycopy.c: COPY, MOVE */
extern command_t sort_commands[];                         /* sort.c: SORT, SORT_RO */
extern command_t lcs_commands[];                          /* lcs.c */
extern command_t lolwut_commands[];                       /* lolwut.c */
extern command_t debug_commands[];                        /* debug.c */
extern command_t migrate_commands[];                      /* migrate.c */
extern command_t bitmap_commands[];                       /* t_bitmap.c */
extern command_t hll_commands[];                          /* hyperloglog.c */
extern command_t geo_commands[];                          /* geo.c */
extern command_t zset_blocking_commands[];                /* blocking.c: BZPOPMIN, BZPOPMAX, BZMPOP */
extern command_t stream_commands[], stream_cg_commands[]; /* t_stream.c, t_stream_cg.c */
extern const obj_type_ops_t list_type_ops, stream_type_ops;
/* Object ops of the collection types, registered by commands_init(). */
extern const obj_type_ops_t hash_type_ops, set_type_ops, zset_type_ops;

#endif
