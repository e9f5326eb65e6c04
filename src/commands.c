/* commands.c: the command table (see commands.h): every family's rows,
 * their Redis 7.0 metadata, lookup, statistics reset, argument helpers.
 * Running a request is dispatch.c's, above the modules it consults. */
#include "commands.h"

#include <stdio.h>
#include <string.h>

#include "command_meta.h"
#include "config.h"
#include "hdr_hist.h"
#include "net.h"
#include "reply.h"
#include "rl_assert.h"
#include "util.h"

/* Every family's table; a new family adds one line here. */
static command_t *const all_tables[] = {string_commands, keyspace_commands, server_commands, conn_commands,
                                        memory_commands,
                                        hash_commands, hash_ttl_commands, set_commands, zset_commands,
                                        list_commands /* t_list.c */, zset_blocking_commands /* blocking.c */,
                                        multi_commands,
                                        pubsub_commands, slowlog_commands, latency_commands, monitor_commands,
                                        persist_commands /* persist.c */,
                                        dump_commands /* dump.c */, keycopy_commands /* keycopy.c */,
                                        sort_commands /* sort.c */,
                                        lcs_commands /* lcs.c */, lolwut_commands /* lolwut.c */, debug_commands /* debug.c */,
                                        migrate_commands /* migrate.c */, cluster_commands /* cluster_cmds.c */,
                                        command_commands /* command_cmds.c */,
                                        bitmap_commands /* t_bitmap.c */, hll_commands /* hyperloglog.c */,
                                        geo_commands /* geo.c */,
                                        script_commands /* script.c */, function_commands /* function.c */,
                                        stream_commands, stream_cg_commands /* t_stream*.c */,
                                        repl_commands /* repl_cmds.c */,
                                        acl_commands /* acl_cmds.c */, module_commands /* module_cmds.c */};

static dict_type command_dict_type = {dict_sds_hash_nocase, dict_sds_eq_nocase, NULL, dict_sds_free, NULL, false};

/* Redis 7.0's description wins over the family table's entry: arity,
 * flags (those COMMAND INFO shows) and key positions come from the row. */
static void attach_meta(command_t *cmd) {
    const cmd_meta_t *m = cmd_meta_lookup(cmd->fullname);
    cmd->meta = m;
    if (!m) return;
    /* A row that takes more arguments than 7.0's (a 7.2/7.4 option such as
     * ZRANK's WITHSCORE) keeps its own arity. */
    if (!(cmd->arity < 0 && m->arity > 0 && -cmd->arity <= m->arity)) cmd->arity = m->arity;
    cmd->flags = (cmd->flags & ~CMD_META_VISIBLE_FLAGS) | m->flags;
    cmd->first_key = m->first_key;
    cmd->last_key = m->last_key;
    cmd->key_step = m->key_step;
}

static void init_command(command_t *cmd, command_t *parent) {
    cmd->parent = parent;
    /* dispatch.c compares a request's name with the last command's
     * folding only the request's bytes. */
    for (const char *p = cmd->name; *p; p++) rl_assert(*p < 'A' || *p > 'Z');
    if (parent) {
        size_t n = strlen(parent->name) + strlen(cmd->name) + 2;
        cmd->fullname = zmalloc(n);
        snprintf(cmd->fullname, n, "%s|%s", parent->name, cmd->name);
    } else {
        cmd->fullname = zstrdup(cmd->name);
    }
    attach_meta(cmd);
    if (cmd->subcommands)
        for (command_t *sub = cmd->subcommands; sub->name; sub++) init_command(sub, cmd);
}

void commands_init(server_t *srv) {
    srv->commands = dict_create(&command_dict_type);
    obj_register_type(OBJ_HASH, &hash_type_ops);
    obj_register_type(OBJ_SET, &set_type_ops);
    obj_register_type(OBJ_ZSET, &zset_type_ops);
    obj_register_type(OBJ_LIST, &list_type_ops);     /* t_list.c */
    obj_register_type(OBJ_STREAM, &stream_type_ops); /* stream.c */
    for (size_t t = 0; t < sizeof(all_tables) / sizeof(all_tables[0]); t++) {
        for (command_t *cmd = all_tables[t]; cmd->name; cmd++) {
            init_command(cmd, NULL);
            dict_add(srv->commands, sds_new(cmd->name), cmd);
        }
    }
}

static void free_names(command_t *cmd) {
    hdr_hist_free(cmd->latency_hist); /* latency_track.c fills it; the row, and its memory, are the table's */
    cmd->latency_hist = NULL;
    zfree(cmd->fullname);
    cmd->fullname = NULL;
    if (cmd->subcommands)
        for (command_t *sub = cmd->subcommands; sub->name; sub++) free_names(sub);
}

void commands_free(server_t *srv) {
    dict_iter it;
    dict_entry *de;
    dict_iter_init(&it, srv->commands, false);
    while ((de = dict_next(&it))) free_names(dict_get_val(de));
    dict_iter_release(&it);
    dict_release(srv->commands);
    srv->commands = NULL;
}

command_t *commands_lookup(server_t *srv, const char *name, size_t len) {
    sds key = sds_newlen(name, len);
    command_t *cmd = dict_fetch_value(srv->commands, key);
    sds_free(key);
    return cmd;
}

command_t *commands_find_subcommand(command_t *parent, const char *name) {
    for (command_t *sub = parent->subcommands; sub->name; sub++)
        if (!strcasecmp(sub->name, name)) return sub;
    return NULL;
}

void commands_foreach(server_t *srv, void (*fn)(void *arg, command_t *cmd), void *arg) {
    dict_iter it;
    dict_entry *de;
    dict_iter_init(&it, srv->commands, false);
    while ((de = dict_next(&it))) {
        command_t *cmd = dict_get_val(de);
        fn(arg, cmd);
        if (cmd->subcommands)
            for (command_t *sub = cmd->subcommands; sub->name; sub++) fn(arg, sub);
    }
    dict_iter_release(&it);
}

static void reset_one(void *arg, command_t *cmd) {
    (void)arg;
    cmd->calls = cmd->usec = cmd->rejected_calls = cmd->failed_calls = 0;
    hdr_hist_free(cmd->latency_hist); /* latency_track.c fills it; the row, and its memory, are the table's */
    cmd->latency_hist = NULL;
}

void commands_reset_stats(server_t *srv) { commands_foreach(srv, reset_one, NULL); }

bool commands_arity_ok(const command_t *cmd, int argc) {
    return cmd->arity > 0 ? argc == cmd->arity : argc >= -cmd->arity;
}

command_t *commands_lookup_argv(server_t *srv, robj **argv, int argc) {
    command_t *cmd = dict_fetch_value(srv->commands, argv[0]->ptr);
    if (cmd && cmd->subcommands) cmd = argc >= 2 ? commands_find_subcommand(cmd, argv[1]->ptr) : NULL;
    return cmd;
}

/* The dispatcher (dispatch.c) sits above the modules that run a command
 * from inside another (EXEC, a client resumed after CLIENT PAUSE,
 * redis.call): they call these, which reach it through the hooks it
 * registers at start-up (hooks.c). */
void commands_process(client_t *c) { c->srv->dispatch_hooks->process(c); }
void commands_call(client_t *c, command_t *cmd) { c->srv->dispatch_hooks->call(c, cmd); }

bool cmd_local_mode_allows(const client_t *c, int mode) {
    if (mode == DEBUG_CMD_YES) return true;
    return mode == DEBUG_CMD_LOCAL && (c->fd < 0 || net_peer_is_loopback(c->fd));
}

const char *commands_protected_refusal(const client_t *c, const command_t *cmd) {
    if (!(cmd->flags & CMD_PROTECTED)) return NULL;
    if (cmd->parent) { /* MODULE LOAD, LOADEX, UNLOAD */
        if (cmd_local_mode_allows(c, c->srv->cfg.enable_module_command)) return NULL;
        return "MODULE command not allowed. If the enable-module-command option is set to \"local\", you can run it "
               "from a local connection, otherwise you need to set this option in the configuration file, and then "
               "restart the server.";
    }
    if (cmd_local_mode_allows(c, c->srv->cfg.enable_debug_command)) return NULL;
    return "DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from "
           "a local connection, otherwise you need to set this option in the configuration file, and then restart "
           "the server.";
}

bool cmd_get_ll_or_reply(client_t *c, robj *o, long long *out, const char *msg) {
    if (!obj_get_ll(o, out)) {
        reply_error(c, "%s", msg ? msg : RL_ERR_NOT_INT);
        return false;
    }
    return true;
}

bool cmd_get_range_or_reply(client_t *c, robj *o, long long min, long long max, long long *out, const char *msg) {
    long long v;
    if (!obj_get_ll(o, &v)) {
        reply_error(c, "%s", msg ? msg : RL_ERR_NOT_INT);
        return false;
    }
    if (v < min || v > max) {
        if (msg) reply_error(c, "%s", msg);
        else reply_error(c, "value is out of range, value must between %lld and %lld", min, max);
        return false;
    }
    *out = v;
    return true;
}
