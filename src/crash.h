/* crash.h: the bug report a crashing server writes to its log
 * (crash-log-enabled; see crash.c). */
#ifndef RL_CRASH_H
#define RL_CRASH_H

#include "server.h"

/* Catch SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT for srv: when
 * crash-log-enabled is yes the report goes to the log, then the process
 * dies of the same signal (a core dump where the system keeps one). */
void crash_install(server_t *srv);

#endif
