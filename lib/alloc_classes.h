/* alloc_classes.h: the size classes of every allocator the project supports,
 * as tables this build can evaluate whatever allocator it is linked with.
 *
 * For a request of n bytes, each model answers what that allocator's
 * malloc_usable_size (or nallocx) would say, and how many bytes of the
 * allocator's active pages the block takes (its class plus its share of a
 * slab's unused tail, a chunk header, a page of padding).  Separately, the
 * metadata an allocator keeps outside those pages (descriptors per slab or
 * span).  The server's MEMORY ALLOCATOR-ADVICE (src/alloc_advice.c) sums
 * these over the live size histogram (sizehist.h); tests/unit/
 * test_alloc_classes.c checks the tables against the allocator this build
 * links with.  No allocator is called here: the models are pure functions. */
#ifndef RL_ALLOC_CLASSES_H
#define RL_ALLOC_CLASSES_H

#include <stddef.h>

typedef enum ac_id {
    AC_EBBMALLOC,   /* deps/ebbmalloc 0.1 */
    AC_JEMALLOC,    /* jemalloc 5.3, 16-byte quantum (Debian's build) */
    AC_JEMALLOC_Q8, /* jemalloc 5.3 configured --with-lg-quantum=3 */
    AC_TCMALLOC,    /* gperftools tcmalloc 2.10 (tcmalloc_minimal: same classes) */
    AC_LIBC,        /* glibc 2.3x ptmalloc, 64-bit */
    AC_COUNT
} ac_id_t;

typedef struct ac_block {
    size_t usable;   /* bytes malloc_usable_size would report */
    double active;   /* bytes of active pages the block takes, tail share included */
    double metadata; /* bytes of bookkeeping outside those pages, per block */
    size_t slab;     /* bytes of the slab/span its class is carved from; 0 if
                        the block has pages of its own */
} ac_block_t;

/* A heap filled with blocks of one class has, on average, half a slab of
 * that class still free (the slab being filled), plus a thread cache's
 * worth of freed blocks of about the same size: one half slab per class in
 * use is what the advice adds for it. */
#define AC_PARTIAL_SLABS_PER_CLASS 0.5

/* The name as INFO's mem_allocator spells it, without the version
 * ("ebbmalloc", "jemalloc", "jemalloc-q8", "tcmalloc", "libc"). */
const char *ac_name(ac_id_t a);

/* The model of one block of `req` bytes (req >= 1). */
void ac_block(ac_id_t a, size_t req, ac_block_t *out);

/* Shorthand for ac_block(...).usable. */
size_t ac_usable(ac_id_t a, size_t req);

/* The allocator this build is linked with (by RL_MALLOC_NAME: tcmalloc and
 * tcmalloc_minimal share a model), or AC_COUNT when it has none (a
 * sanitizer's allocator). */
ac_id_t ac_current(const char *malloc_name);

/* glibc's default mmap threshold: requests whose chunk reaches it get a
 * mapping of their own (glibc raises it at run time when such a block is
 * freed, up to 32 MiB; the model keeps the default). */
#define AC_LIBC_MMAP_THRESHOLD ((size_t)128 * 1024)

#endif
