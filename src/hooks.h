/* hooks.h: the wiring of the lower layers' hook tables.
 *
 * A lower layer that must call up (the connection layer handing a request
 * to the dispatcher, for instance) declares a small table of function
 * pointers in its own header; hooks.c, at the top of the layers, fills
 * each table with the upper modules' functions.  lifecycle.c calls
 * hooks_register() first thing in server_init().  README "Layers" lists
 * the tables and why each exists. */
#ifndef RL_HOOKS_H
#define RL_HOOKS_H

#include "server.h"

void hooks_register(server_t *srv);

#endif
