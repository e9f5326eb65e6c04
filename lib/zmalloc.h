/* zmalloc.h: the server's only door to the memory allocator.
 *
 * Every allocation the server makes goes through these calls, so that
 * used_memory can be counted exactly (by the allocator's usable size) and so
 * that the allocator itself (libc, jemalloc, tcmalloc, tcmalloc_minimal or
 * ebbmalloc) is chosen at compile time in one place: zmalloc.c.  Libraries
 * built into the server (sds, dict, listpack, ...) use these too; they never
 * call malloc directly.
 *
 * Allocation failure calls the out-of-memory handler, which logs and aborts:
 * callers of zmalloc never see NULL.  The ztry* variants return NULL instead. */
#ifndef RL_ZMALLOC_H
#define RL_ZMALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

void *zmalloc(size_t size);
void *zcalloc(size_t size);
void *zrealloc(void *ptr, size_t size); /* may move: the old pointer is dead */
void *ztrymalloc(size_t size);          /* NULL on failure, no abort */
void *ztryrealloc(void *ptr, size_t size);
void zfree(void *ptr); /* zfree(NULL) is a no-op */
char *zstrdup(const char *s);
void *zmemdup(const void *p, size_t len);

/* Usable size of a block zmalloc returned (>= what was asked). */
size_t zmalloc_size(const void *ptr);

/* Bytes currently allocated through zmalloc, summed over all threads. */
size_t zmalloc_used_memory(void);

/* Called with the failed request size; the default logs and aborts. */
void zmalloc_set_oom_handler(void (*handler)(size_t));

/* The allocator's name and version as INFO's mem_allocator shows it,
 * e.g. "jemalloc-5.3.0", "libc", "tcmalloc-2.10". */
const char *zmalloc_lib(void);

/* The allocator's own view of the heap.  A figure the allocator cannot give
 * is 0 (as Redis reports it), never guessed. */
typedef struct zmalloc_stats {
    size_t allocated; /* bytes in live blocks, by the allocator's count */
    size_t active;    /* bytes in pages holding live blocks */
    size_t resident;  /* bytes the allocator holds resident */
    size_t mapped;    /* bytes mapped from the OS */
    size_t retained;  /* bytes unmapped/returned but kept as address space */
    size_t metadata;  /* resident bookkeeping outside `resident` (tcmalloc's spans and caches), else 0 */
    size_t muzzy;     /* jemalloc's muzzy pages (purged lazily, MADV_FREE), else 0 */
} zmalloc_stats_t;
void zmalloc_get_allocator_stats(zmalloc_stats_t *st);
/* False when reading the stats walks the heap (glibc's mallinfo2 visits
 * every free chunk: tens of ms on a fragmented heap), so the cron must not
 * sample them periodically. */
bool zmalloc_allocator_stats_cheap(void);

/* Return free memory to the OS now (MEMORY PURGE).  0 or -1 when the
 * allocator has no such operation. */
int zmalloc_purge(void);

/* Periodic allocator housekeeping from the server cron (ebbmalloc's
 * decay purge when no background thread runs); a no-op elsewhere. */
void zmalloc_maintain(void);

/* Allocator's own human-readable report (MEMORY MALLOC-STATS), written
 * through a callback so the caller decides where it goes. */
void zmalloc_malloc_stats(void (*out)(void *arg, const char *text), void *arg);

/* Active defrag (defrag.c).  zmalloc_has_defrag(): whether the build's
 * allocator can say where a block should live (jemalloc through its
 * experimental.utilization.query mallctl, ebbmalloc through its defrag
 * hint); false with libc and tcmalloc.
 * zmalloc_defrag_move(ptr): if the allocator says ptr sits in a slab used
 * less than its size class on average, copy the block (its whole usable
 * size) to a fuller slab, free the old one and return the new pointer: ptr
 * is then dead and every reference to it must be updated.  NULL when moving
 * would not help (or is unsupported): ptr stays valid.  Both the copy and the
 * free bypass thread caches, so the old slab really empties. */
bool zmalloc_has_defrag(void);
void *zmalloc_defrag_move(void *ptr);

/* Give the calling thread's cached free blocks back to their slabs
 * (jemalloc's thread.tcache.flush, ebb_flush_thread_cache).  Until then the
 * allocator counts them as taken from their slab: the defragger's hints see
 * those slabs fuller than they are and the active figure includes them.
 * defrag.c calls it when a cycle starts and ends; a no-op on libc and
 * tcmalloc. */
void zmalloc_flush_thread_cache(void);

/* The activedefrag default: yes where the allocator can say where a block
 * should move (ebbmalloc, and jemalloc through its utilization query): a
 * size-class allocator cannot reuse a half-empty slab for another class,
 * so after deletes and refills only moving objects gives memory back.
 * Redis defaults to no; its 100mb floor of waste stays, scaled down on
 * small data sets by active-defrag-ignore-percent (defrag.c).  No on libc
 * and tcmalloc, which cannot defragment. */
#if defined(USE_EBBMALLOC) || defined(USE_JEMALLOC)
#define ZMALLOC_DEFRAG_DEFAULT "yes"
#else
#define ZMALLOC_DEFRAG_DEFAULT "no"
#endif

/* Start-up tuning (jemalloc background purge thread). */
void zmalloc_set_background_thread(bool enable);

/* Resident set size of this process in bytes, read from /proc. */
size_t zmalloc_get_rss(void);

/* Physical memory of the machine in bytes (INFO total_system_memory). */
size_t zmalloc_total_system_memory(void);

#endif
