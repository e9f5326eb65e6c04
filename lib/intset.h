/* intset.h: a set of integers kept as one sorted array of fixed-width
 * little-endian cells (the "intset" encoding of small all-integer sets).
 *
 * Called by the set commands (t_set.c) while a set holds only integers and
 * stays under set-max-intset-entries, and by the RDB loader (intset_validate).
 * Pure module: allocates only through zmalloc, never includes server.h.
 *
 * Layout of the single zmalloc'd block:
 *
 *   +-------------+-------------+--------------------------------------+
 *   | width  u32  | length u32  | length cells of `width` bytes, sorted |
 *   +-------------+-------------+--------------------------------------+
 *
 * The two header words are in host order (every supported host is
 * little-endian); the cells are little-endian by construction.
 *
 * Invariants: width is 2, 4 or 8 and is the smallest that holds every member
 * (it only grows: removing the one wide member does not narrow the set);
 * cells are strictly increasing (no duplicates); the block holds exactly
 * 8 + width * length bytes (it is reallocated on every add/remove). */
#ifndef RL_INTSET_H
#define RL_INTSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct intset {
    uint32_t width;  /* bytes per cell: 2, 4 or 8 */
    uint32_t length; /* number of members */
    uint8_t cells[]; /* length * width bytes, little-endian, ascending */
} intset;

/* The RDB intset blob is this struct as it lies in memory (Redis's layout). */
_Static_assert(sizeof(intset) == 8, "intset header: two 32-bit fields, no padding");

intset *intset_new(void);     /* empty set, 16-bit cells */
void intset_free(intset *is); /* NULL is fine */

/* Add v; *added (may be NULL) says whether it was new.  May realloc: the
 * argument is dead, use the returned pointer. */
intset *intset_add(intset *is, int64_t v, bool *added);
/* Remove v; *removed (may be NULL) says whether it was there.  May realloc. */
intset *intset_remove(intset *is, int64_t v, bool *removed);

bool intset_find(const intset *is, int64_t v);               /* binary search */
bool intset_get(const intset *is, uint32_t pos, int64_t *v); /* false if pos out of range */
uint32_t intset_len(const intset *is);
size_t intset_blob_len(const intset *is); /* bytes of the serialized form */
int64_t intset_random(const intset *is);  /* uniform member; set must be non-empty */
int64_t intset_min(const intset *is);     /* set must be non-empty */
int64_t intset_max(const intset *is);     /* set must be non-empty */
intset *intset_dup(const intset *is);

/* Longest decimal form of any member (e.g. 2 for {-5, 10}): what
 * set-max-listpack-value is compared with when converting to a listpack. */
size_t intset_max_strlen(const intset *is);

/* Whether the set may take another member and stay in this encoding. */
bool intset_fits(const intset *is, size_t max_entries);

/* Integrity check of a serialized intset of `size` bytes (RDB loading).
 * Shallow: header sane and size matches.  Deep: also cells strictly
 * ascending.  A width wider than needed is accepted (it is legal here). */
bool intset_validate(const void *buf, size_t size, bool deep);

/* Bytes this set occupies in the allocator (MEMORY USAGE). */
size_t intset_mem_usage(const intset *is);

#endif
