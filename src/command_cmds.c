/* command_cmds.c: the COMMAND command and its subcommands.
 *
 * COMMAND, COMMAND INFO|DOCS|LIST|COUNT|GETKEYS|GETKEYSANDFLAGS|HELP, all
 * served from the generated metadata through command_meta.c, for the
 * commands that have a handler in this server.  Registered by commands.c;
 * it reads the command dictionary and never changes it. */
#include <string.h>
#include <strings.h>

#include "command_meta.h"
#include "commands.h"
#include "reply.h"
#include "util.h"
#include "zmalloc.h"

/* Full name "container|sub" (or plain) -> an implemented command, or NULL. */
static command_t *lookup_fullname(client_t *c, robj *name) {
    const char *s = name->ptr, *bar = strchr(s, '|');
    command_t *cmd = commands_lookup(c->srv, s, bar ? (size_t)(bar - s) : sds_len(name->ptr));
    if (!cmd || !bar) return cmd;
    if (!cmd->subcommands) return NULL;
    for (command_t *sub = cmd->subcommands; sub->name; sub++)
        if (!strcasecmp(sub->name, bar + 1)) return sub;
    return NULL;
}

typedef struct {
    client_t *c;
    long n;
} walk_t;

static void info_one(void *arg, command_t *cmd) {
    walk_t *w = arg;
    if (cmd->parent) return; /* containers list their subcommands */
    cmd_meta_reply_info(w->c, cmd);
    w->n++;
}

static void cmd_command(client_t *c) {
    walk_t w = {c, 0};
    void *slot = reply_deferred_len(c);
    commands_foreach(c->srv, info_one, &w);
    reply_set_deferred_array_len(c, slot, w.n);
}

static void cmd_command_count(client_t *c) { reply_ll(c, (long long)dict_size(c->srv->commands)); }

/* COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN glob] */
typedef struct {
    client_t *c;
    long n;
    int kind; /* 0 none, 1 module, 2 aclcat, 3 pattern */
    uint64_t cat;
    sds pattern;
} list_walk_t;

static void list_one(void *arg, command_t *cmd) {
    list_walk_t *w = arg;
    if (w->kind == 1 || !cmd_meta_listed(cmd)) return; /* no modules: nothing belongs to one */
    if (w->kind == 2 && !(cmd_meta_acl_categories(cmd) & w->cat)) return;
    if (w->kind == 3 && !util_glob_match(w->pattern, sds_len(w->pattern), cmd->fullname, strlen(cmd->fullname), true))
        return;
    reply_bulk_cstr(w->c, cmd->fullname);
    w->n++;
}

static void cmd_command_list(client_t *c) {
    list_walk_t w = {c, 0, 0, 0, NULL};
    if (c->argc == 5 && !strcasecmp(c->argv[2]->ptr, "filterby")) {
        const char *kind = c->argv[3]->ptr;
        if (!strcasecmp(kind, "module")) w.kind = 1;
        else if (!strcasecmp(kind, "aclcat")) w.kind = 2;
        else if (!strcasecmp(kind, "pattern")) w.kind = 3;
        if (w.kind == 2) {
            int idx = cmd_meta_acl_category_index(c->argv[4]->ptr);
            if (idx < 0) w.kind = 1; /* an unknown category matches nothing */
            else w.cat = 1ull << idx;
        }
        w.pattern = c->argv[4]->ptr;
    }
    if (c->argc != 2 && w.kind == 0) {
        reply_error(c, RL_ERR_SYNTAX);
        return;
    }
    void *slot = reply_deferred_len(c);
    commands_foreach(c->srv, list_one, &w);
    reply_set_deferred_array_len(c, slot, w.n);
}

static void cmd_command_info(client_t *c) {
    if (c->argc == 2) {
        cmd_command(c);
        return;
    }
    reply_array_len(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        command_t *cmd = lookup_fullname(c, c->argv[j]);
        if (cmd) cmd_meta_reply_info(c, cmd);
        else reply_null(c);
    }
}

static void docs_one(void *arg, command_t *cmd) {
    walk_t *w = arg;
    if (cmd->parent) return;
    reply_bulk_cstr(w->c, cmd->fullname);
    cmd_meta_reply_docs(w->c, cmd);
    w->n++;
}

static void cmd_command_docs(client_t *c) {
    walk_t w = {c, 0};
    void *slot = reply_deferred_len(c);
    if (c->argc == 2) {
        commands_foreach(c->srv, docs_one, &w);
    } else {
        for (int j = 2; j < c->argc; j++) {
            command_t *cmd = lookup_fullname(c, c->argv[j]);
            if (!cmd) continue;
            reply_bulk_cstr(c, cmd->fullname);
            cmd_meta_reply_docs(c, cmd);
            w.n++;
        }
    }
    reply_set_deferred_map_len(c, slot, w.n);
}

/* The command argv[2..] names, as the dispatcher would resolve it. */
static command_t *getkeys_target(client_t *c) {
    command_t *cmd = commands_lookup(c->srv, c->argv[2]->ptr, sds_len(c->argv[2]->ptr));
    if (cmd && cmd->subcommands && c->argc >= 4) {
        command_t *found = NULL;
        for (command_t *sub = cmd->subcommands; sub->name; sub++)
            if (!strcasecmp(sub->name, c->argv[3]->ptr)) found = sub;
        cmd = found;
    }
    return cmd;
}

static bool has_keys(const command_t *cmd) {
    if (!cmd->meta) return cmd->first_key > 0;
    for (int i = 0; i < cmd->meta->nkey_specs; i++)
        if (!(cmd->meta->key_specs[i].flags & KSF_NOT_KEY)) return true;
    return false;
}

static void getkeys(client_t *c, bool with_flags) {
    command_t *cmd = getkeys_target(c);
    int argc = c->argc - 2;
    if (!cmd) {
        reply_error(c, "Invalid command specified");
        return;
    }
    if (!has_keys(cmd)) {
        reply_error(c, "The command has no key arguments");
        return;
    }
    if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity) {
        reply_error(c, "Invalid number of arguments specified for command");
        return;
    }
    cmd_key_ref_t small[16], *refs = small;
    int n = cmd_meta_get_keys(cmd, c->argv + 2, argc, refs, 16);
    if (n > 16) {
        refs = zmalloc(sizeof(*refs) * (size_t)n);
        n = cmd_meta_get_keys(cmd, c->argv + 2, argc, refs, n);
    }
    if (n <= 0) {
        if (cmd->flags & CMD_NO_MANDATORY_KEYS) reply_array_len(c, 0);
        else reply_error(c, "Invalid arguments specified for command");
    } else {
        reply_array_len(c, n);
        for (int i = 0; i < n; i++) {
            if (with_flags) reply_array_len(c, 2);
            reply_bulk_obj(c, c->argv[2 + refs[i].pos]);
            if (with_flags) cmd_meta_reply_key_flags(c, refs[i].flags);
        }
    }
    if (refs != small) zfree(refs);
}

static void cmd_command_getkeys(client_t *c) { getkeys(c, false); }
static void cmd_command_getkeysandflags(client_t *c) { getkeys(c, true); }

static void cmd_command_help(client_t *c) {
    static const char *help[] = {
        "(no subcommand)",
        "    Return details about all Redis commands.",
        "COUNT",
        "    Return the total number of commands in this Redis server.",
        "LIST",
        "    Return a list of all commands in this Redis server.",
        "INFO [<command-name> ...]",
        "    Return details about multiple Redis commands.",
        "    If no command names are given, documentation details for all",
        "    commands are returned.",
        "DOCS [<command-name> ...]",
        "    Return documentation details about multiple Redis commands.",
        "    If no command names are given, documentation details for all",
        "    commands are returned.",
        "GETKEYS <full-command>",
        "    Return the keys from a full Redis command.",
        "GETKEYSANDFLAGS <full-command>",
        "    Return the keys and the access flags from a full Redis command.",
        NULL};
    reply_help(c, "COMMAND", help);
}

static command_t command_subcommands[] = {
    {"count", cmd_command_count, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Get total number of commands", "2.8.13", NULL},
    {"list", cmd_command_list, -2, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Get an array of command names", "7.0.0", NULL},
    {"info", cmd_command_info, -2, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Get array of specific command details", "2.8.13", NULL},
    {"docs", cmd_command_docs, -2, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Get array of specific command documentation", "7.0.0", NULL},
    {"getkeys", cmd_command_getkeys, -3, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Extract keys given a full Redis command", "2.8.13", NULL},
    {"getkeysandflags", cmd_command_getkeysandflags, -3, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Extract keys and access flags given a full Redis command", "7.0.0", NULL},
    {"help", cmd_command_help, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Show helpful text about the different subcommands", "5.0.0", NULL},
    {0},
};

/* COMMAND with no argument lists everything; with one, it is a container.
 * The dispatcher resolves subcommands only when argc >= 2. */
static void cmd_command_container(client_t *c) { cmd_command(c); }

command_t command_commands[] = {
    {"command", cmd_command_container, -1, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Get array of Redis command details", "2.8.13", command_subcommands},
    {0},
};
