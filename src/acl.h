/* acl.h: access control, as Redis 7.0 defines it: users, their rules and
 * selectors, the permission check that runs before every command, and the
 * ACL log.
 *
 * Three files share the work.  acl_user.c holds one user and its selectors:
 * the rule language of ACL SETUSER ("on", ">pass", "+@read", "~app:*",
 * "(...)"), and the text ACL LIST / GETUSER print.  acl.c holds the
 * registry (srv->acl): the users by name, the default user bound to
 * requirepass, authentication, the permission check, the log, the aclfile
 * and the clients of changed users.  acl_cmds.c serves the ACL command.
 *
 * Command permissions are bits indexed by an id per command and
 * subcommand; the ids cover every row of Redis 7.0's command table
 * (command_meta.h), so categories and "+cmd" rules mean exactly what they
 * mean in Redis, plus our own commands that Redis lacks.  Keys come from
 * the same key specs COMMAND GETKEYS uses (cmd_meta_get_keys). */
#ifndef RL_ACL_H
#define RL_ACL_H

#include <stdbool.h>
#include <stdint.h>

#include "commands.h"
#include "conn.h"
#include "sds.h"

typedef struct acl_user acl_user_t;
typedef struct acl acl_t;

/* What a check found (the order ranks errors, as Redis ranks them when no
 * selector allows a command: a key or channel beats a command). */
enum { ACL_OK = 0,
       ACL_DENIED_CMD,
       ACL_DENIED_KEY,
       ACL_DENIED_AUTH,
       ACL_DENIED_CHANNEL };
/* Where a denial happened, for ACL LOG's "context". */
enum { ACL_CTX_TOPLEVEL = 0,
       ACL_CTX_MULTI,
       ACL_CTX_LUA };

/* The registry: created by server_init() after commands_init(); loads the
 * config's user lines or the aclfile.  Returns false (after printing why)
 * when they are invalid, which stops start-up. */
bool acl_init(server_t *srv);
void acl_free(server_t *srv);
/* The default user needs no password (AUTH <pass> is then refused). */
bool acl_default_nopass(const server_t *srv);
/* A client must authenticate before running commands (default user has a
 * password or is off, and the client has not authenticated). */
bool acl_auth_required(const client_t *c);
/* Bind a new client to the default user, authenticated iff it needs no
 * password. */
void acl_client_init(client_t *c);
/* The client's user has skip-sanitize-payload (RESTORE under
 * sanitize-dump-payload clients trusts its payloads). */
bool acl_client_skips_sanitize(const client_t *c);
/* The name of the client's user ("default" for internal clients). */
const char *acl_client_username(const client_t *c);

/* AUTH / HELLO AUTH: true and the client bound to the user on success;
 * false (logged as an auth failure) otherwise.  No reply is sent. */
bool acl_authenticate(client_t *c, robj *username, robj *password);
/* requirepass changed: the default user's passwords follow it. */
void acl_update_default_password(server_t *srv, const sds pass);

/* CONFIG SET of requirepass or acl-pubsub-default took effect. */
void acl_config_changed(server_t *srv, const char *name);

/* The check before a command runs: ACL_OK, or a denial with *argpos set to
 * the offending key or channel argument.  u NULL means unrestricted. */
int acl_check_cmd(acl_user_t *u, const command_t *cmd, robj **argv, int argc, int *argpos);
/* The name denials use for cmd (Redis's full name for it). */
const char *acl_cmd_name(const command_t *cmd);
/* Same, recording a denial in the ACL log (client-info from c, user u)
 * and the INFO counters under the given context (ACL_CTX_*). */
int acl_check_and_log(client_t *c, acl_user_t *u, const command_t *cmd, robj **argv, int argc, int ctx,
                      int *argpos);
/* Appends to s Redis 7.4's text for denial r (ACL_DENIED_CMD, _KEY or
 * _CHANNEL) of cmd to u: "User <name> has no permissions to run the '<cmd>'
 * command", "No permissions to access a key" / "a channel"; verbose (ACL
 * DRYRUN) names the key or channel arg instead: "User <name> has no
 * permissions to access the '<arg>' key". */
sds acl_cat_denial(sds s, int r, const acl_user_t *u, const command_t *cmd, const char *arg, size_t arglen,
                   bool verbose);
/* The user may run cmd and reach every key with these key-spec flags
 * (SORT BY/GET patterns need it). */
bool acl_check_unrestricted_keys(acl_user_t *u, const command_t *cmd, robj **argv, int argc, unsigned ksf_flags);

/* The registry, for the ACL command (acl_cmds.c). */
acl_user_t *acl_find_user(server_t *srv, const char *name, size_t len);
/* Create or change a user; NULL on success, else the error text (nothing
 * changed).  Caller frees the error. */
sds acl_setuser(server_t *srv, const char *name, size_t namelen, sds *rules, int nrules);
/* Delete a user and close its clients; false if there was none. */
bool acl_deluser(server_t *srv, const char *name, size_t len);
/* Every user in name order. */
void acl_foreach_user(server_t *srv, void (*fn)(void *arg, acl_user_t *u), void *arg);
size_t acl_user_count(const server_t *srv);
/* ACL SAVE: true, or false after logging why (the old file is intact).
 * A relative path is in dir, as for acl_load_file. */
bool acl_save_file(server_t *srv, const char *path);
/* ACL LOAD: NULL, or the errors (caller frees); on error nothing changed. */
sds acl_load_file(server_t *srv, const char *path);
/* ACL LOG [count] / ACL LOG RESET. */
void acl_reply_log(client_t *c, long count);
void acl_log_reset(server_t *srv);

/* Counters for INFO stats. */
typedef struct acl_stats {
    long long denied_auth, denied_cmd, denied_key, denied_channel;
} acl_stats_t;
const acl_stats_t *acl_get_stats(const server_t *srv);
void acl_reset_stats(server_t *srv);

/* CONFIG REWRITE: the "user ..." lines describing every user, in name
 * order (used when no aclfile is configured).  Caller frees each with
 * sds_free and the array with zfree. */
sds *acl_config_lines(server_t *srv, int *count);


#endif
