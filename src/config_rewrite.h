/* config_rewrite.h: CONFIG REWRITE.
 *
 * Rewrites the file the server was started with so that it yields the
 * running configuration, keeping its comments, blank lines, unknown lines
 * and the order of its directives: a line whose value is still current is
 * kept byte for byte, a changed one is replaced in place, repeated ones are
 * dropped, and directives that differ from their defaults but were not in
 * the file are appended at the end.  Called by server_cmds.c (CONFIG). */
#ifndef RL_CONFIG_REWRITE_H
#define RL_CONFIG_REWRITE_H

#include "server.h"

/* 0 on success; -1 with *err set to a static reason.  force_all writes
 * every directive, defaults too (DEBUG CONFIG-REWRITE-FORCE-ALL). */
int config_rewrite(server_t *srv, bool force_all, const char **err);
/* CONFIG REWRITE handler (server_cmds.c's subcommand table points here). */
void cmd_config_rewrite(client_t *c);

#endif
