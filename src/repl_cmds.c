/* repl_cmds.c: the replication commands' table entries (SYNC, PSYNC,
 * REPLCONF, WAIT, REPLICAOF/SLAVEOF, FAILOVER, ROLE).
 *
 * The handlers live with the side of replication they drive
 * (repl_master.c, repl_replica.c, repl_failover.c, repl_info.c); the table
 * sits in the commands layer above them all, so that registering a
 * handler is never a call from one replication module into another.
 * commands.c merges it into the command table. */
#include "commands.h"
#include "repl_state.h"

command_t repl_commands[] = {
    {"sync", cmd_sync, 1, CMD_ADMIN | CMD_NOSCRIPT | CMD_NO_MULTI, 0, 0, 0, "server", "Internal command used for replication", "1.0.0", NULL},
    {"psync", cmd_psync, -3, CMD_ADMIN | CMD_NOSCRIPT | CMD_NO_MULTI, 0, 0, 0, "server", "Internal command used for replication", "2.8.0", NULL},
    {"replconf", cmd_replconf, -1, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "An internal command for configuring the replication stream", "3.0.0", NULL},
    {"waitaof", cmd_waitaof, 4, CMD_NOSCRIPT, 0, 0, 0, "generic", "Blocks until all of the preceding write commands sent by the connection are written to the append-only file of the master and/or replicas.", "7.2.0", NULL},
    {"wait", cmd_wait, 3, CMD_NOSCRIPT, 0, 0, 0, "generic", "Wait for the synchronous replication of all the write commands sent in the context of the current connection", "3.0.0", NULL},
    {"replicaof", cmd_replicaof, 3, CMD_ADMIN | CMD_NOSCRIPT | CMD_STALE, 0, 0, 0, "server", "Make the server a replica of another instance, or promote it as master.", "5.0.0", NULL},
    {"slaveof", cmd_replicaof, 3, CMD_ADMIN | CMD_NOSCRIPT | CMD_STALE, 0, 0, 0, "server", "Make the server a replica of another instance, or promote it as master.", "1.0.0", NULL},
    {"failover", cmd_failover, -1, CMD_ADMIN | CMD_NOSCRIPT | CMD_STALE, 0, 0, 0, "server", "Start a coordinated failover between this server and one of its replicas.", "6.2.0", NULL},
    {"role", cmd_role, 1, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST, 0, 0, 0, "server", "Return the role of the instance in the context of replication", "2.8.12", NULL},
    {NULL},
};
