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
    size_t db_lut;                                        /* the keyspace tables' bucket arrays (keys, TTL index), all dbs */
    size_t db_rehashing;                                  /* of which arrays being emptied by a resize (7.4's rehashing overhead) */
    size_t db_rehashing_count;                            /* tables resizing now */
} mem_report_t;

void memory_report(server_t *srv, mem_report_t *r);

/* The whole RSS, part by part (INFO memory's rss_* fields, MEMORY STATS's
 * rss.*, docs/memory.md).  The parts add up to `total` exactly:
 *   total = allocator + io + stacks + code + other
 *   allocator = lua + replication + clients + allocator_rest
 * Read now from /proc/self/smaps (lib/proc_rss.c) and the allocator. */
typedef struct mem_rss_parts {
    size_t total;          /* every mapping's resident pages (VmRSS) */
    size_t allocator;      /* the allocator's resident pages (its own figure; the anonymous rest on libc) */
    size_t lua;            /* of which the Lua heaps of EVAL and FUNCTION (zmalloc'd) */
    size_t replication;    /* of which the replication backlog and replicas' buffers */
    size_t clients;        /* of which normal clients' query and output buffers */
    size_t allocator_rest; /* of which the rest: the data set, tables, free pages the allocator keeps */
    size_t io;             /* the io_uring engine's buffers and rings */
    size_t stacks;         /* thread stacks */
    size_t code;           /* file-backed pages: the binary, libraries, their .bss, mapped files */
    size_t other;          /* anonymous pages no part above explains (malloc of libraries, ...) */
    int threads;           /* threads whose stack was found */
    bool ok;               /* false: /proc/self/smaps could not be read, all 0 */
} mem_rss_parts_t;

void memory_rss_parts(server_t *srv, const mem_report_t *r, mem_rss_parts_t *p);

#endif
