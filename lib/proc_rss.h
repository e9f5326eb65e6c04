/* proc_rss.h: this process's resident pages by kind of mapping, read from
 * /proc/self/smaps: file-backed pages (the binary, shared libraries,
 * mapped files), thread stacks, the mappings a caller names as its own
 * (the io_uring engine's buffers) and io_uring's rings, and every other
 * anonymous page (the allocator's heap among them).
 *
 * memory.c builds INFO memory's and MEMORY STATS's account of the whole
 * RSS on it.  A library: no server state; the caller passes the address
 * ranges it wants counted apart.  It reads /proc, so it costs a fraction
 * of a millisecond: INFO and MEMORY call it, the cron does not. */
#ifndef RL_PROC_RSS_H
#define RL_PROC_RSS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A range the caller counts apart: its own mapping.  The kernel merges
 * neighbouring anonymous mappings of the same flags into one, so give the
 * mapping flags of its own (the io_uring engine's carry MADV_DONTFORK): a
 * mapping that overlaps a range is counted whole. */
typedef struct proc_range {
    uintptr_t start, end; /* [start, end) */
} proc_range_t;

typedef struct proc_rss {
    size_t total;  /* every mapping's Rss: VmRSS as the mappings see it */
    size_t file;   /* file-backed mappings, their .bss (the anonymous mapping right after), [vdso] */
    size_t stacks; /* [stack] and the mappings holding another thread's stack pointer */
    size_t io;     /* mappings inside the caller's io ranges, and io_uring's rings (anon_inode:[io_uring]) */
    size_t anon;   /* the remaining anonymous pages: the allocator's, and anything else's */
    int threads;   /* threads whose stack was found (the main one included) */
} proc_rss_t;

/* Fill *out from /proc/self/smaps; false (and *out zeroed) if it cannot be
 * read. */
bool proc_rss_read(const proc_range_t *io, size_t nio, proc_rss_t *out);

#endif
