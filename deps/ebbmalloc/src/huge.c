/* huge.c: blocks above EBB_LARGE_MAX (2 MiB), each in a mapping of its
 * own, returned to the OS the moment it is freed.  Callers: alloc.c.
 *
 * Layout: the mapping starts on a 4 MiB boundary with one header page (an
 * ebb_chunk_t of kind HUGE whose page_cls map is all NONE, so free() falls
 * to the slow path and finds the kind); the block starts at the next page
 * aligned as asked.  With alignment >= 4 MiB the block itself is
 * chunk-aligned and its header sits one chunk below it, which is where
 * ebb_chunk_of() looks.  No lock: only atomic counters are shared. */
#include <errno.h>
#include <string.h>

#include "internal.h"

static size_t huge_mapped, huge_usable; /* bytes, atomic */

void *_ebb_huge_alloc(size_t size, size_t align) {
    if (align < EBB_PAGE)
        align = EBB_PAGE;
    if (size > ((size_t)1 << 46) || align > ((size_t)1 << 40)) {
        errno = ENOMEM;
        return NULL;
    }
    size_t len = EBB_PAGE + ebb_page_round(size) + (align > EBB_PAGE ? align : 0);
    char *base = _ebb_os_map_aligned(len, EBB_CHUNK);
    if (base == NULL) {
        errno = ENOMEM;
        return NULL;
    }
    if (!_ebb_conf.thp)
        _ebb_os_no_huge_pages(base, len);
    char *ptr = (char *)(((uintptr_t)base + EBB_PAGE + align - 1) &
                         ~(uintptr_t)(align - 1));
    ebb_chunk_t *c = ebb_chunk_of(ptr);
    memset(c->page_cls, EBB_CLS_NONE, sizeof(c->page_cls));
    c->kind = EBB_CHUNK_HUGE;
    c->map_base = base;
    c->map_size = len;
    c->usable = (size_t)(base + len - ptr);
    __atomic_add_fetch(&huge_mapped, len, __ATOMIC_RELAXED);
    __atomic_add_fetch(&huge_usable, c->usable, __ATOMIC_RELAXED);
    return ptr;
}

void _ebb_huge_free(ebb_chunk_t *c) {
    __atomic_sub_fetch(&huge_mapped, c->map_size, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&huge_usable, c->usable, __ATOMIC_RELAXED);
    _ebb_os_unmap(c->map_base, c->map_size);
}

/* Resize in place: shrink by unmapping the tail, grow by extending the
 * mapping where the address space allows.  Returns ptr, or NULL when the
 * caller must move the block (new size not huge, or no room to grow). */
void *_ebb_huge_realloc(void *ptr, size_t size) {
    ebb_chunk_t *c = ebb_chunk_of(ptr);
    if (size <= EBB_LARGE_MAX || size > ((size_t)1 << 46))
        return NULL;
    size_t head = (size_t)((char *)ptr - c->map_base);
    size_t new_len = head + ebb_page_round(size);
    if (new_len < c->map_size) {
        _ebb_os_unmap(c->map_base + new_len, c->map_size - new_len);
    } else if (new_len > c->map_size) {
        if (!_ebb_os_grow_in_place(c->map_base, c->map_size, new_len))
            return NULL;
    } else {
        return ptr;
    }
    size_t new_usable = new_len - head;
    __atomic_add_fetch(&huge_mapped, new_len - c->map_size, __ATOMIC_RELAXED);
    __atomic_add_fetch(&huge_usable, new_usable - c->usable, __ATOMIC_RELAXED);
    c->map_size = new_len;
    c->usable = new_usable;
    return ptr;
}

void _ebb_huge_stats(size_t *mapped, size_t *usable) {
    *mapped = __atomic_load_n(&huge_mapped, __ATOMIC_RELAXED);
    *usable = __atomic_load_n(&huge_usable, __ATOMIC_RELAXED);
}
