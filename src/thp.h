/* thp.h: transparent huge pages for this process, as disable-thp asks
 * (see thp.c). */
#ifndef RL_THP_H
#define RL_THP_H

#include <stdbool.h>

#include "server.h"

/* The kernel's mode, from the text of
 * /sys/kernel/mm/transparent_hugepage/enabled: true when the bracketed
 * word is "always" (every anonymous mapping may get huge pages). */
bool thp_always(const char *sysfs_text);
/* At start-up: with disable-thp and the kernel's mode "always", opt this
 * process out (prctl); warn when the mode stays "always" for it. */
void thp_apply(const server_t *srv);

#endif
