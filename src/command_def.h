/* command_def.h: what a command is: command_t, its handler type and the
 * CMD_* flags.
 *
 * A type, not a module: it sits at the bottom of the server's layers with
 * server.h, so the connection and reply layer (a client's current command,
 * per-command error counts) can see a command without including the table
 * (commands.h), which sits above them.  The table, its lookup and the
 * argument helpers are commands.h's. */
#ifndef RL_COMMAND_DEF_H
#define RL_COMMAND_DEF_H

#include <stdint.h>

#include "server.h"

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
/* DEBUG, MODULE LOAD/LOADEX/UNLOAD: refused before NOAUTH and ACL unless
 * enable-debug-command / enable-module-command allow the connection (not
 * shown by COMMAND INFO, as in Redis). */
#define CMD_PROTECTED (1u << 22)
/* RANDOMKEY, SCAN: the expired keys they delete are logged one by one,
 * never inside MULTI/EXEC (Redis's CMD_TOUCHES_ARBITRARY_KEYS; not shown
 * by COMMAND INFO). */
#define CMD_TOUCHES_ARBITRARY_KEYS (1u << 23)

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

#endif
