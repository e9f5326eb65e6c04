/* defrag.h: active defragmentation, driven by the server cron.
 *
 * After many deletes, live blocks sit scattered over allocator slabs that
 * are mostly free; the allocator cannot give those pages back while one
 * block lives in them.  When activedefrag is on and the allocator's own
 * fragmentation (allocator_active / allocator_allocated) passes the
 * configured thresholds, defrag_cron() walks the keyspace a little at a
 * time and moves blocks the allocator says would be better placed
 * (zmalloc_defrag_move), updating every pointer to them.  Works with
 * jemalloc and ebbmalloc builds; config.c refuses activedefrag elsewhere.
 * Callers: lifecycle.c (create/free, cron), info.c (stats). */
#ifndef RL_DEFRAG_H
#define RL_DEFRAG_H

#include <stdbool.h>

#include "server.h"

typedef struct defrag_stats {
    long long hits;            /* blocks moved */
    long long misses;          /* blocks looked at and left in place */
    long long key_hits;        /* keys with at least one block moved */
    long long key_misses;      /* keys looked at with nothing moved */
    long long total_time_ms;   /* wall time of finished and current cycles */
    long long current_time_ms; /* of the current cycle, 0 when idle */
    int running_cpu_pct;       /* effort of the current cycle, 0 when idle */
} defrag_stats_t;

defrag_t *defrag_create(void);
void defrag_free(defrag_t *df);
/* Drop the slice timer (before the event loop is freed at shutdown). */
void defrag_release_timer(defrag_t *df);
/* One slice of work, within the CPU share the fragmentation calls for. */
void defrag_cron(server_t *srv);
void defrag_get_stats(server_t *srv, defrag_stats_t *out);
void defrag_reset_stats(defrag_t *df);
/* DEBUG DEFRAG-PASS: one whole pass over the keyspace now, every offered
 * block moved whatever the allocator says (any allocator, libc too: under
 * ASan a pointer left at a moved block is a use after free).  Returns the
 * blocks moved, or -1 while a cycle is running. */
long long defrag_debug_pass(server_t *srv);

#endif
