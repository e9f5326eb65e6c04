/* listeners.h: the listening sockets (TCP per bind address, and the unix
 * socket).  lifecycle.c opens them at start-up and closes them at exit;
 * server_cmds.c's CONFIG SET port/bind asks them to follow the new values. */
#ifndef RL_LISTENERS_H
#define RL_LISTENERS_H

#include <stdbool.h>

#include "server.h"

/* Start-up: listen as configured; false (logged) when a required address
 * cannot be bound or nothing would listen. */
bool listeners_open(server_t *srv);
/* After CONFIG SET port/bind: listen on the configured TCP addresses if
 * they changed.  false (logged) leaves no TCP listener: the caller puts
 * the old values back and calls it again. */
bool listeners_follow_config(server_t *srv);
/* Exit: close every listener, remove the unix socket file we created. */
void listeners_close(server_t *srv);

#endif
