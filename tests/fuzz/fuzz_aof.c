/* fuzz_aof.c: libFuzzer target for the AOF loader (aof_load_buffer in
 * src/aof.c): the RDB preamble, the command parser the server and
 * redis-like-check-aof share (aof_parse_command), and the replay of each
 * parsed command on the loader's fake client.
 *
 * An AOF is a list of commands, and the loader runs whatever it names, as
 * Redis's does; a file that says DEBUG SLEEP or BGSAVE would make the
 * fuzzer sleep or fork, and those are not the loader's bugs.  So the
 * target keeps only what an AOF holds: the write commands (without
 * FUNCTION, which needs the scripting engine this target does not start)
 * and SELECT/MULTI/EXEC/DISCARD; every other command has its handler
 * removed from the table here, which the loader treats as an unknown
 * command (an error, as for any unknown name).  Transactions are queued
 * until EXEC and dropped when the file ends inside one.  aof-load-truncated
 * is off, so the loader never truncates a file.  Built and run by `make fuzz`. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "aof.h"
#include "blocking.h"
#include "commands.h"
#include "evict.h"
#include "hooks.h"
#include "keyspace.h"
#include "latency.h"
#include "lazyfree.h"
#include "log.h"
#include "monitor.h"
#include "multi.h"
#include "propagate.h"
#include "pubsub.h"
#include "server.h"
#include "slowlog.h"
#include "tracking.h"

static server_t srv;
/* INFO errorstats' table, as server.c builds it (error prefix -> count). */
static dict_type error_stats_type = {dict_sds_hash, dict_sds_eq, NULL, dict_sds_free, NULL, false};

static const char *const kept_names[] = {"select", "multi", "exec", "discard", NULL};

static bool kept(const command_t *cmd) {
    const command_t *top = cmd->parent ? cmd->parent : cmd;
    if (!strcmp(top->name, "function")) return false;
    for (const char *const *n = kept_names; *n; n++)
        if (!strcmp(top->name, *n)) return true;
    return (cmd->flags & CMD_WRITE) != 0;
}

/* Container commands keep the subcommands that pass (XGROUP CREATE). */
static void prune(command_t *cmd) {
    if (cmd->subcommands) {
        for (command_t *sub = cmd->subcommands; sub->name; sub++) prune(sub);
        return;
    }
    if (!kept(cmd)) cmd->proc = NULL;
}

static void setup(void) {
    static int done;
    if (done) return;
    done = 1;
    config_init_defaults(&srv.cfg);
    hooks_register(&srv); /* EXEC and keyspace changes reach the layers above through these */
    srv.cfg.aof_load_truncated = false;
    log_set_level(LL_WARNING + 1); /* the loader's warnings would drown libFuzzer's output */
    srv.stats.errors = dict_create(&error_stats_type);
    obj_create_shared();
    db_init_all(&srv);
    srv.evict = evict_create();
    srv.lazyfree = lazyfree_create(NULL);
    srv.blocking = blocking_create(&srv);
    srv.pubsub = pubsub_create();
    srv.tracking = tracking_create();
    srv.slowlog = slowlog_create(); /* EXEC runs its queue through commands_call */
    srv.latency = latency_create();
    srv.monitors = monitor_create();
    propagate_init(&srv); /* EXEC wraps its queue in a propagation unit */
    commands_init(&srv);
    multi_init(&srv);
    dict_iter it;
    dict_entry *de;
    dict_iter_init(&it, srv.commands, false);
    while ((de = dict_next(&it))) prune(dict_get_val(de));
    dict_iter_release(&it);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    setup();
    aof_load_buffer(&srv, data, size, "fuzz.aof");
    for (int i = 0; i < srv.dbnum; i++) db_empty(&srv.dbs[i]);
    return 0;
}
