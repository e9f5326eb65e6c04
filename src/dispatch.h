/* dispatch.h: running a request (dispatch.c).
 *
 * Above the command table and every module whose checks a request passes;
 * only hooks.c includes this header: lower layers reach the dispatcher
 * through conn.h's run_request hook and commands.h's commands_process /
 * commands_call, which go through the table below. */
#ifndef RL_DISPATCH_H
#define RL_DISPATCH_H

#include "commands.h"

/* Run the request in c->argc/c->argv; the reply is queued on c. */
void dispatch_process(client_t *c);
/* Execute an already resolved and checked command, with statistics. */
void dispatch_call(client_t *c, command_t *cmd);

#endif
