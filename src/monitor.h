/* monitor.h: the MONITOR feed.
 *
 * A client that sends MONITOR receives every command other clients run, one
 * status line each, formatted as Redis does:
 *   +1700000000.123456 [0 127.0.0.1:54321] "SET" "k" "v"
 * dispatch.c calls monitor_feed() after each executed command (before
 * EVAL and FCALL, so that the commands they run follow them); conn.c calls
 * monitor_client_freed() when a client goes; RESET calls monitor_stop(). */
#ifndef RL_MONITOR_H
#define RL_MONITOR_H

#include "commands.h"

typedef struct monitors monitors_t;


monitors_t *monitor_create(void);
void monitor_free(monitors_t *m);
/* Send c's current command (c->cmd, c->argv) to every monitor. */
void monitor_feed(client_t *c);
/* Leave monitor mode (RESET, conn_free). */
void monitor_stop(client_t *c);
void monitor_client_freed(client_t *c);
size_t monitor_count(const server_t *srv);
/* Arguments that never appear in MONITOR or SLOWLOG (passwords of AUTH and
 * HELLO ... AUTH user pass): true if argv[j] must show as "(redacted)". */
bool monitor_arg_redacted(const client_t *c, int j);


#endif
