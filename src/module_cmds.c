/* module_cmds.c: MODULE, on a server without a module API.
 *
 * redis-like loads no Redis modules (README: not planned), and says so in
 * Redis's own terms rather than with "unknown command": MODULE LIST is the
 * empty list it truly is (clients probe it for RedisJSON and the like),
 * MODULE HELP is Redis's, and LOAD, LOADEX and UNLOAD fail with the errors
 * Redis gives for a library it cannot load and a module it does not have,
 * a load logging why.  enable-module-command guards those three as in
 * Redis 7.0 (no, yes, local: CMD_PROTECTED, checked by the dispatcher
 * before NOAUTH and ACL); a `loadmodule` line stops start-up
 * (config.c). */
#include "commands.h"
#include "log.h"
#include "reply.h"

static void cmd_module_list(client_t *c) { reply_empty_array(c); }

/* LOAD path [arg ...] and LOADEX path [CONFIG name value ...] [ARGS ...]:
 * whatever the arguments, there is nothing to load them into. */
static void cmd_module_load(client_t *c) {
    log_msg(LL_WARNING, "Module %s failed to load: redis-like has no module API", (const char *)c->argv[2]->ptr);
    reply_error(c, "Error loading the extension. Please check the server logs.");
}

static void cmd_module_unload(client_t *c) {
    reply_error(c, "Error unloading module: no such module with that name");
}

static void cmd_module_help(client_t *c) {
    static const char *help[] = {
        "LIST",
        "    Return a list of loaded modules.",
        "LOAD <path> [<arg> ...]",
        "    Load a module library from <path>, passing to it any optional arguments.",
        "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
        "    Load a module library from <path>, while passing it module configurations and optional arguments.",
        "UNLOAD <name>",
        "    Unload a module.",
        NULL};
    reply_help(c, "MODULE", help);
}

#define MODULE_FLAGS (CMD_ADMIN | CMD_NOSCRIPT)

static command_t module_subcommands[] = {
    {"help", cmd_module_help, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Show helpful text about the different subcommands", "5.0.0", NULL},
    {"list", cmd_module_list, 2, MODULE_FLAGS, 0, 0, 0, "server", "List all modules loaded by the server", "4.0.0", NULL},
    {"load", cmd_module_load, -3, MODULE_FLAGS | CMD_PROTECTED, 0, 0, 0, "server", "Load a module", "4.0.0", NULL},
    {"loadex", cmd_module_load, -3, MODULE_FLAGS | CMD_PROTECTED, 0, 0, 0, "server", "Load a module with extended parameters", "7.0.0", NULL},
    {"unload", cmd_module_unload, 3, MODULE_FLAGS | CMD_PROTECTED, 0, 0, 0, "server", "Unload a module", "4.0.0", NULL},
    {0},
};

command_t module_commands[] = {
    {"module", NULL, -2, 0, 0, 0, 0, "server", "A container for module commands", "4.0.0", module_subcommands},
    {0},
};
