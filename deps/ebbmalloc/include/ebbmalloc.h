/* ebbmalloc.h: the public interface of ebbmalloc, a general-purpose allocator.
 *
 * Every symbol here starts with ebb_ and is what libebbmalloc.a exports; the
 * server's zmalloc.c is the main caller.  libebbmalloc.so exports these too,
 * plus the standard malloc family (see src/override.c) for LD_PRELOAD use.
 * Runtime settings come from the EBBMALLOC_CONF environment variable; the
 * README lists them.  All functions are thread-safe. */
#ifndef EBBMALLOC_H
#define EBBMALLOC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EBBMALLOC_VERSION "0.1.0"

#if defined(__GNUC__)
#define EBB_API __attribute__((visibility("default")))
#else
#define EBB_API
#endif

/* The malloc family.  They behave as C11/POSIX and glibc document: NULL with
 * errno ENOMEM on failure, ebb_free(NULL) does nothing, ebb_realloc(p, 0)
 * frees p and returns NULL (glibc's choice), ebb_malloc(0) returns a unique
 * pointer. */
EBB_API void *ebb_malloc(size_t size);
EBB_API void *ebb_calloc(size_t n, size_t size);
EBB_API void *ebb_realloc(void *ptr, size_t size);
EBB_API void ebb_free(void *ptr);

/* Bytes usable at ptr: always >= the size asked for.  0 for NULL. */
EBB_API size_t ebb_usable_size(const void *ptr);

/* Aligned allocation.  align must be a power of two (and a multiple of
 * sizeof(void *) for posix_memalign, which returns EINVAL otherwise). */
EBB_API int ebb_posix_memalign(void **out, size_t align, size_t size);
EBB_API void *ebb_aligned_alloc(size_t align, size_t size);

/* Flush the calling thread's cache and return every free page to the OS
 * now, whatever its age. */
EBB_API void ebb_purge(void);

/* Give the calling thread's cached free blocks back to their slabs (and
 * drain the transfer stacks into theirs), so that slab occupancy, the
 * defrag hint and the active figure of ebb_stats_get see them as free.
 * Pages stay resident: the decay purge returns what this empties. */
EBB_API void ebb_flush_thread_cache(void);

/* Cheap periodic work: returns to the OS the free pages that have been
 * unused for longer than the decay time.  Meant for a host's timer (the
 * server's cron calls it 10 times a second); a no-op when nothing is due. */
EBB_API void ebb_maintain(void);

/* Byte counts, all taken at one moment (racy by nature across threads):
 *   allocated  bytes in live blocks, by usable size
 *   active     bytes of pages holding live blocks: slabs with at least one
 *              block handed out (to the program or to a thread cache),
 *              large runs, huge mappings
 *   resident   bytes of mapped pages not returned to the OS
 *   mapped     bytes of all mappings (chunks and huge mappings)
 *   retained   mapped bytes returned to the OS (madvised or never touched)
 *   metadata   bytes of chunk header pages in use (page maps, descriptors)
 *   dirty      free pages still resident, waiting for the decay purge
 *   tcache     bytes sitting in thread caches */
typedef struct {
    size_t allocated, active, resident, mapped, retained, metadata;
    size_t dirty, tcache;
} ebb_stats_t;

EBB_API void ebb_stats_get(ebb_stats_t *out);

/* A human-readable report (totals, settings, one line per size class),
 * written through out() in pieces of text. */
EBB_API void ebb_stats_print(void (*out)(void *arg, const char *text), void *arg);

/* 1 if moving the block at ptr would help fragmentation: it is a small block
 * whose slab is less used than its size class's average; else 0. */
EBB_API int ebb_defrag_hint(const void *ptr);

/* For a defragmenter: allocate and free bypassing the thread cache, so the
 * new block comes from the fullest slab and the old one goes straight back
 * to its (emptying) slab. */
EBB_API void *ebb_defrag_alloc(size_t size);
EBB_API void ebb_defrag_free(void *ptr);

/* Debugging: walk the whole heap and verify its invariants (span tiling,
 * free lists, page maps, slab counts, statistics).  Returns 0 if all hold,
 * else a non-zero code naming the broken check.  Slow: for tests. */
EBB_API int ebb_check(void);

#ifdef __cplusplus
}
#endif

#endif
