/* oom.h: the process's OOM score, set from oom-score-adj and
 * oom-score-adj-values (see oom.c). */
#ifndef RL_OOM_H
#define RL_OOM_H

#include <stdbool.h>

#include "server.h"

/* Which of oom-score-adj-values applies (their order in the directive). */
enum { OOM_CLASS_MASTER = 0,
       OOM_CLASS_REPLICA,
       OOM_CLASS_BGCHILD };

/* Make /proc/self/oom_score_adj what the configuration asks for a process
 * of class cls; false (logged) if it could not be read or written. */
bool oom_apply(server_t *srv, int cls);

#endif
