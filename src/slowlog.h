/* slowlog.h: the slow log (SLOWLOG GET/LEN/RESET/HELP).
 *
 * dispatch.c calls slowlog_record() after each executed command with its
 * duration; commands slower than slowlog-log-slower-than microseconds (-1:
 * never, 0: all) are kept, newest first, up to slowlog-max-len entries.
 * An entry is what Redis shows: id, unix time, duration (us), the argv
 * (at most 32 arguments of at most 128 bytes each), client addr and name. */
#ifndef RL_SLOWLOG_H
#define RL_SLOWLOG_H

#include "commands.h"

typedef struct slowlog slowlog_t;


slowlog_t *slowlog_create(void);
void slowlog_free(slowlog_t *sl);
void slowlog_record(client_t *c, long long duration_us);


#endif
