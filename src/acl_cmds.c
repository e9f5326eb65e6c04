/* acl_cmds.c: the ACL command (SETUSER, GETUSER, DELUSER, USERS, LIST,
 * WHOAMI, CAT, GENPASS, LOG, SAVE, LOAD, DRYRUN, HELP), replies in Redis
 * 7.0's shapes and texts.  The users, the checks and the files are acl.c's;
 * this file only parses arguments and formats replies. */
#include <limits.h>
#include <string.h>
#include <strings.h>

#include "acl.h"
#include "acl_user.h"
#include "command_meta.h"
#include "commands.h"
#include "reply.h"
#include "util.h"
#include "zmalloc.h"

static void cmd_acl_setuser(client_t *c) {
    sds name = c->argv[2]->ptr;
    if (acl_has_spaces(name, sds_len(name))) {
        reply_error(c, "Usernames can't contain spaces or null characters");
        return;
    }
    sds *rules = zmalloc(sizeof(sds) * (size_t)c->argc);
    for (int j = 3; j < c->argc; j++) rules[j - 3] = c->argv[j]->ptr;
    sds err = acl_setuser(c->srv, name, sds_len(name), rules, c->argc - 3);
    zfree(rules);
    if (err) {
        reply_error(c, "%s", err);
        sds_free(err);
    } else {
        reply_ok(c);
    }
}

static void cmd_acl_deluser(client_t *c) {
    for (int j = 2; j < c->argc; j++) {
        if (!strcmp(c->argv[j]->ptr, "default")) {
            reply_error(c, "The 'default' user cannot be removed");
            return;
        }
    }
    long long deleted = 0;
    for (int j = 2; j < c->argc; j++) deleted += acl_deluser(c->srv, c->argv[j]->ptr, sds_len(c->argv[j]->ptr));
    reply_ll(c, deleted);
}

/* "commands", "keys", "channels" of one selector (3 map pairs). */
static void reply_selector(client_t *c, const acl_selector_t *s) {
    reply_bulk_cstr(c, "commands");
    reply_bulk_sds_take(c, acl_selector_describe_commands(s));
    reply_bulk_cstr(c, "keys");
    reply_bulk_sds_take(c, acl_selector_describe_keys(s));
    reply_bulk_cstr(c, "channels");
    reply_bulk_sds_take(c, acl_selector_describe_channels(s));
}

static void cmd_acl_getuser(client_t *c) {
    acl_user_t *u = acl_find_user(c->srv, c->argv[2]->ptr, sds_len(c->argv[2]->ptr));
    if (!u) {
        reply_null(c);
        return;
    }
    static const struct {
        unsigned flag;
        const char *name;
    } flags[] = {{ACL_USER_ENABLED, "on"}, {ACL_USER_DISABLED, "off"}, {ACL_USER_NOPASS, "nopass"}, {ACL_USER_SANITIZE_SKIP, "skip-sanitize-payload"}, {ACL_USER_SANITIZE, "sanitize-payload"}};
    reply_map_len(c, 6);
    reply_bulk_cstr(c, "flags");
    long nflags = 0;
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) nflags += (u->flags & flags[i].flag) != 0;
    reply_set_len(c, nflags);
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
        if (u->flags & flags[i].flag) reply_bulk_cstr(c, flags[i].name);
    reply_bulk_cstr(c, "passwords");
    reply_array_len(c, u->npasswords);
    for (int i = 0; i < u->npasswords; i++) reply_bulk(c, u->passwords[i], sds_len(u->passwords[i]));
    reply_selector(c, u->sel[0]); /* the root selector, at the top level */
    reply_bulk_cstr(c, "selectors");
    reply_array_len(c, u->nsel - 1);
    for (int i = 1; i < u->nsel; i++) {
        reply_map_len(c, 3);
        reply_selector(c, u->sel[i]);
    }
}

static void reply_user_name(void *arg, acl_user_t *u) { reply_bulk(arg, u->name, sds_len(u->name)); }

static void reply_user_line(void *arg, acl_user_t *u) {
    reply_bulk_sds_take(arg, sds_catprintf(sds_empty(), "user %s %s", u->name, acl_user_describe(u)));
}

static void cmd_acl_users(client_t *c) {
    reply_array_len(c, (long)acl_user_count(c->srv));
    acl_foreach_user(c->srv, reply_user_name, c);
}

static void cmd_acl_list(client_t *c) {
    reply_array_len(c, (long)acl_user_count(c->srv));
    acl_foreach_user(c->srv, reply_user_line, c);
}

static void cmd_acl_whoami(client_t *c) { reply_bulk_cstr(c, acl_client_username(c)); }

static bool aclfile_set_or_reply(client_t *c) {
    const char *f = c->srv->cfg.aclfile;
    if (f && f[0]) return true;
    reply_error(c, "This Redis instance is not configured to use an ACL file. You may want to specify users via the "
                   "ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration "
                   "file set) in order to store users in the Redis configuration.");
    return false;
}

static void cmd_acl_load(client_t *c) {
    if (!aclfile_set_or_reply(c)) return;
    sds errors = acl_load_file(c->srv, c->srv->cfg.aclfile);
    if (!errors) {
        reply_ok(c);
        return;
    }
    reply_error(c, "%s", errors);
    sds_free(errors);
}

static void cmd_acl_save(client_t *c) {
    if (!aclfile_set_or_reply(c)) return;
    if (acl_save_file(c->srv, c->srv->cfg.aclfile))
        reply_ok(c);
    else
        reply_error(c, "There was an error trying to save the ACLs. Please check the server logs for more information");
}

static void cmd_acl_cat(client_t *c) {
    if (c->argc > 3) {
        reply_subcommand_syntax_error(c);
        return;
    }
    if (c->argc == 2) {
        reply_array_len(c, ACL_CAT_COUNT);
        for (int j = 0; j < ACL_CAT_COUNT; j++) reply_bulk_cstr(c, acl_category_names[j]);
        return;
    }
    int cat = cmd_meta_acl_category_index(c->argv[2]->ptr);
    if (cat < 0) {
        reply_error(c, "Unknown category '%.128s'", (char *)c->argv[2]->ptr);
        return;
    }
    void *len = reply_deferred_len(c);
    long n = 0;
    for (int id = 0; id < acl_cmdtab_count(); id++) {
        if (!(acl_cmdtab_categories(id) & (1ull << cat))) continue;
        reply_bulk_cstr(c, acl_cmdtab_name(id));
        n++;
    }
    reply_set_deferred_array_len(c, len, n);
}

#define GENPASS_MAX_BITS 4096

static void cmd_acl_genpass(client_t *c) {
    if (c->argc > 3) {
        reply_subcommand_syntax_error(c);
        return;
    }
    long long bits = 256;
    if (c->argc == 3 && !cmd_get_ll_or_reply(c, c->argv[2], &bits, NULL)) return;
    if (bits <= 0 || bits > GENPASS_MAX_BITS) {
        reply_error(c, "ACL GENPASS argument must be the number of bits for the output password, a positive number "
                       "up to %d",
                    GENPASS_MAX_BITS);
        return;
    }
    char pass[GENPASS_MAX_BITS / 4];
    size_t chars = (size_t)(bits + 3) / 4;
    util_random_hex(pass, chars);
    reply_bulk(c, pass, chars);
}

static void cmd_acl_log(client_t *c) {
    if (c->argc > 3) {
        reply_subcommand_syntax_error(c);
        return;
    }
    long long count = 10;
    if (c->argc == 3) {
        if (!strcasecmp(c->argv[2]->ptr, "reset")) {
            acl_log_reset(c->srv);
            reply_ok(c);
            return;
        }
        if (!cmd_get_ll_or_reply(c, c->argv[2], &count, NULL)) return;
        if (count < 0) count = 0;
    }
    acl_reply_log(c, (long)(count > LONG_MAX ? LONG_MAX : count));
}

static void cmd_acl_dryrun(client_t *c) {
    acl_user_t *u = acl_find_user(c->srv, c->argv[2]->ptr, sds_len(c->argv[2]->ptr));
    if (!u) {
        reply_error(c, "User '%s' not found", (char *)c->argv[2]->ptr);
        return;
    }
    robj **argv = c->argv + 3;
    int argc = c->argc - 3;
    command_t *cmd = commands_lookup_argv(c->srv, argv, argc);
    if (!cmd && argc == 1) { /* a container callable alone (COMMAND) */
        command_t *top = commands_lookup(c->srv, argv[0]->ptr, sds_len(argv[0]->ptr));
        if (top && top->proc) cmd = top;
    }
    if (!cmd) {
        reply_error(c, "Command '%s' not found", (char *)argv[0]->ptr);
        return;
    }
    if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity) {
        reply_error(c, "wrong number of arguments for '%s' command", cmd->fullname);
        return;
    }
    int pos = 0;
    int r = acl_check_cmd(u, cmd, argv, argc, &pos);
    if (r == ACL_OK) {
        reply_ok(c);
        return;
    }
    sds arg = r == ACL_DENIED_CMD ? NULL : argv[pos]->ptr;
    reply_bulk_sds_take(c, acl_cat_denial(sds_empty(), r, u, cmd, arg, arg ? sds_len(arg) : 0, true));
}

static void cmd_acl_help(client_t *c) {
    static const char *help[] = {
        "CAT [<category>]",
        "    List all commands that belong to <category>, or all command categories",
        "    when no category is specified.",
        "DELUSER <username> [<username> ...]",
        "    Delete a list of users.",
        "DRYRUN <username> <command> [<arg> ...]",
        "    Returns whether the user can execute the given command without executing the command.",
        "GETUSER <username>",
        "    Get the user's details.",
        "GENPASS [<bits>]",
        "    Generate a secure 256-bit user password. The optional `bits` argument can",
        "    be used to specify a different size.",
        "LIST",
        "    Show users details in config file format.",
        "LOAD",
        "    Reload users from the ACL file.",
        "LOG [<count> | RESET]",
        "    Show the ACL log entries.",
        "SAVE",
        "    Save the current config to the ACL file.",
        "SETUSER <username> <attribute> [<attribute> ...]",
        "    Create or modify a user with the specified attributes.",
        "USERS",
        "    List all the registered usernames.",
        "WHOAMI",
        "    Return the current connection username.",
        NULL};
    reply_help(c, "ACL", help);
}

#define ACL_FLAGS (CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE)

static command_t acl_subcommands[] = {
    {"cat", cmd_acl_cat, -2, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "List the ACL categories or the commands inside a category", "6.0.0", NULL},
    {"deluser", cmd_acl_deluser, -3, ACL_FLAGS, 0, 0, 0, "server", "Remove the specified ACL users and the associated rules", "6.0.0", NULL},
    {"dryrun", cmd_acl_dryrun, -4, ACL_FLAGS, 0, 0, 0, "server", "Returns whether the user can execute the given command without executing the command.", "7.0.0", NULL},
    {"genpass", cmd_acl_genpass, -2, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Generate a pseudorandom secure password to use for ACL users", "6.0.0", NULL},
    {"getuser", cmd_acl_getuser, 3, ACL_FLAGS, 0, 0, 0, "server", "Get the rules for a specific ACL user", "6.0.0", NULL},
    {"help", cmd_acl_help, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Show helpful text about the different subcommands", "6.0.0", NULL},
    {"list", cmd_acl_list, 2, ACL_FLAGS, 0, 0, 0, "server", "List the current ACL rules in ACL config file format", "6.0.0", NULL},
    {"load", cmd_acl_load, 2, ACL_FLAGS, 0, 0, 0, "server", "Reload the ACLs from the configured ACL file", "6.0.0", NULL},
    {"log", cmd_acl_log, -2, ACL_FLAGS, 0, 0, 0, "server", "List latest events denied because of ACLs in place", "6.0.0", NULL},
    {"save", cmd_acl_save, 2, ACL_FLAGS, 0, 0, 0, "server", "Save the current ACL rules in the configured ACL file", "6.0.0", NULL},
    {"setuser", cmd_acl_setuser, -3, ACL_FLAGS, 0, 0, 0, "server", "Modify or create the rules for a specific ACL user", "6.0.0", NULL},
    {"users", cmd_acl_users, 2, ACL_FLAGS, 0, 0, 0, "server", "List the username of all the configured ACL rules", "6.0.0", NULL},
    {"whoami", cmd_acl_whoami, 2, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Return the name of the user associated to the current connection", "6.0.0", NULL},
    {0},
};

command_t acl_commands[] = {
    {"acl", NULL, -2, 0, 0, 0, 0, "server", "A container for Access List Control commands", "6.0.0", acl_subcommands},
    {0},
};
