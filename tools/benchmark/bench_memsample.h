/* bench_memsample.h: --memory-sample, a once-a-second INFO memory poller.
 *
 * Runs in its own thread with its own blocking connection, so it never
 * disturbs the measured connections, and appends one CSV row per second:
 * time,used_memory,used_memory_rss,mem_fragmentation_ratio,allocator_active,
 * allocator_resident,ops_per_sec,vmrss (ops/s from the engine's live reply
 * counter; vmrss from /proc/<process_id>/status when the server is local). */
#ifndef RL_BENCH_MEMSAMPLE_H
#define RL_BENCH_MEMSAMPLE_H

#include "bench_opts.h"

/* Starts the poller; returns 0, or -1 with a message on stderr. */
int bench_memsample_start(const bench_opts_t *o, const char *path);
/* Takes a last sample, stops the thread and closes the file. */
void bench_memsample_stop(void);

#endif
