/* memory.h: memory figures as INFO memory and MEMORY STATS report them, and
 * the MEMORY command.  Figures are computed from the cron's simultaneous
 * sample (srv->mem) plus the live used_memory, never guessed: a figure the
 * allocator cannot give stays 0 and so do ratios built on it. */
#ifndef RL_MEMORY_H
#define RL_MEMORY_H

#include <stddef.h>

#include "server.h"

typedef struct mem_report {
    size_t used, peak, startup, rss;
    size_t overhead;       /* startup + clients + keyspace tables */
    size_t clients_normal; /* query and output buffers of clients */
    size_t io_buffers;     /* the io_uring engine's resident mappings (mem_io_buffers), cron sample */
    size_t dataset;        /* used - overhead */
    size_t keys;           /* keys in all dbs */
    size_t bytes_per_key;
    double dataset_perc, peak_perc;
    zmalloc_stats_t alloc;
    double allocator_frag_ratio, allocator_rss_ratio, rss_overhead_ratio, frag_ratio;
    long long allocator_frag_bytes, allocator_rss_bytes, rss_overhead_bytes, frag_bytes;
    size_t db_overhead_main[64], db_overhead_expires[64]; /* first 64 dbs, for MEMORY STATS */
} mem_report_t;

void memory_report(server_t *srv, mem_report_t *r);

#endif
