/* alloc.c: the public malloc family (ebb_malloc ... ebb_aligned_alloc) and
 * the slow paths behind the inline fast paths of internal.h.  Dispatches by
 * size: small (<= 16 KiB) through the thread cache, large (<= 2 MiB) as a
 * page run from page.c (up to 256 KiB first from runcache.c's stacks of
 * freed runs, where their frees go too), huge as its own mapping (huge.c).  On free the
 * pointer alone says which: the chunk header's page class map names a small
 * block's class; otherwise the chunk kind tells large from huge.
 * Callers: the program (via ebbmalloc.h) and override.c. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

static void *large_alloc(size_t size, size_t align) {
    if (size > PTRDIFF_MAX) {
        errno = ENOMEM;
        return NULL;
    }
    if (size <= EBB_LARGE_MAX && align <= EBB_LARGE_MAX / 2) {
        size_t apages = align > EBB_PAGE ? align / EBB_PAGE : 1;
        size_t npages = ebb_page_round(size) / EBB_PAGE;
        ebb_span_t *s = apages == 1 ? _ebb_runcache_pop(npages) : NULL;
        if (s == NULL) {
            /* no run of this length waits: give the others back first, so
             * that the page layer can serve this one from their pages
             * rather than map more (espresso, whose run lengths vary:
             * 4 MiB of cached runs of other lengths raised its peak RSS
             * from 3.2 to 4.0 MiB) */
            if (_ebb_runcache_bytes() != 0)
                _ebb_runcache_drain();
            s = _ebb_page_alloc(_ebb_tcache_arena(), npages, apages,
                                EBB_SPAN_LARGE);
        }
        if (s == NULL) {
            errno = ENOMEM;
            return NULL;
        }
        return ebb_span_base(s);
    }
    return _ebb_huge_alloc(size, align, NULL);
}

static void *small_alloc(unsigned cls) {
    ebb_tbin_t *b = &_ebb_tc.bins[cls];
    if (b->head != NULL)
        return ebb_tbin_pop(b);
    void *p = _ebb_tcache_alloc_slow(cls);
    if (p == NULL)
        errno = ENOMEM;
    return p;
}

void *_ebb_malloc_slow(size_t size) {
    ebb_ensure_init();
    if (size <= EBB_SMALL_MAX)
        return small_alloc(ebb_class_of(size));
    return large_alloc(size, EBB_PAGE);
}

void _ebb_free_slow(void *ptr, unsigned cls) {
    if (cls != EBB_CLS_NONE) {
        _ebb_tcache_free_slow(ptr, cls);
        return;
    }
    ebb_chunk_t *c = ebb_chunk_of(ptr);
    if (c->kind == EBB_CHUNK_HUGE) {
        _ebb_huge_free(c);
        return;
    }
    ebb_span_t *s = ebb_span_of(ptr);
    if (!_ebb_runcache_push(s))
        _ebb_page_free(s);
}

void *ebb_malloc(size_t size) {
    return ebb_fast_malloc(size);
}

void ebb_free(void *ptr) {
    ebb_fast_free(ptr);
}

void *ebb_calloc(size_t n, size_t size) {
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    if (total > EBB_LARGE_MAX) {
        ebb_ensure_init();
        bool fresh;
        void *h = _ebb_huge_alloc(total, EBB_PAGE, &fresh);
        if (h != NULL && !fresh) /* a new mapping is zero already */
            memset(h, 0, total);
        return h;
    }
    void *p = ebb_fast_malloc(total);
    if (p != NULL)
        memset(p, 0, total);
    return p;
}

size_t ebb_usable_size(const void *ptr) {
    if (ptr == NULL)
        return 0;
    ebb_chunk_t *c = ebb_chunk_of(ptr);
    unsigned cls = c->page_cls[ebb_page_index(ptr)];
    if (cls != EBB_CLS_NONE)
        return _ebb_class_size[cls];
    if (c->kind == EBB_CHUNK_HUGE)
        return c->usable;
    ebb_span_t *s = ebb_span_of(ptr);
    return s->npages * EBB_PAGE - (size_t)((const char *)ptr - ebb_span_base(s));
}

/* Try to keep the block where it is; true if ptr now holds size bytes. */
static bool resize_in_place(void *ptr, size_t size) {
    ebb_chunk_t *c = ebb_chunk_of(ptr);
    unsigned cls = c->page_cls[ebb_page_index(ptr)];
    if (cls != EBB_CLS_NONE)
        return size <= EBB_SMALL_MAX && ebb_class_of(size) == cls;
    if (c->kind == EBB_CHUNK_HUGE)
        return _ebb_huge_realloc(ptr, size) != NULL;
    if (size <= EBB_SMALL_MAX || size > EBB_LARGE_MAX)
        return false;
    return _ebb_page_resize(ebb_span_of(ptr), ebb_page_round(size) / EBB_PAGE);
}

void *ebb_realloc(void *ptr, size_t size) {
    if (ptr == NULL)
        return ebb_fast_malloc(size);
    if (size == 0) {
        ebb_fast_free(ptr);
        return NULL;
    }
    if (resize_in_place(ptr, size))
        return ptr;
    void *q = ebb_fast_malloc(size);
    if (q == NULL)
        return NULL;
    size_t old = ebb_usable_size(ptr);
    memcpy(q, ptr, old < size ? old : size);
    ebb_fast_free(ptr);
    return q;
}

/* align: a power of two.  Small requests use the first class whose size
 * is a multiple of align (slabs start on a page, so every block of such a
 * class is aligned); others use an aligned page run or huge mapping. */
void *_ebb_memalign(size_t align, size_t size) {
    ebb_ensure_init();
    if (align <= 8)
        return ebb_fast_malloc(size);
    if (align <= EBB_PAGE && size <= EBB_SMALL_MAX) {
        size_t want = size < align ? align : size;
        for (unsigned c = ebb_class_of(want); c < EBB_NCLASSES; c++)
            if (_ebb_class_size[c] % align == 0)
                return small_alloc(c);
    }
    if (size > EBB_LARGE_MAX && align <= EBB_PAGE)
        return _ebb_huge_alloc(size, align, NULL);
    return large_alloc(size < EBB_SMALL_MAX + 1 ? EBB_SMALL_MAX + 1 : size,
                       align);
}

int ebb_posix_memalign(void **out, size_t align, size_t size) {
    if (align < sizeof(void *) || (align & (align - 1)) != 0)
        return EINVAL;
    int saved = errno;
    void *p = _ebb_memalign(align, size);
    if (p == NULL) {
        errno = saved;
        return ENOMEM;
    }
    *out = p;
    return 0;
}

void *ebb_aligned_alloc(size_t align, size_t size) {
    if (align == 0 || (align & (align - 1)) != 0) {
        errno = EINVAL;
        return NULL;
    }
    return _ebb_memalign(align, size);
}

void *ebb_defrag_alloc(size_t size) {
    ebb_ensure_init();
    if (size > EBB_SMALL_MAX)
        return ebb_fast_malloc(size);
    void *one = NULL;
    if (_ebb_central_take(_ebb_tcache_arena(), ebb_class_of(size), 1, &one) ==
        0) {
        errno = ENOMEM;
        return NULL;
    }
    return one;
}

void ebb_defrag_free(void *ptr) {
    if (ptr == NULL)
        return;
    unsigned cls = ebb_chunk_of(ptr)->page_cls[ebb_page_index(ptr)];
    if (cls == EBB_CLS_NONE) {
        _ebb_free_slow(ptr, cls);
        return;
    }
    *(void **)ptr = NULL;
    _ebb_central_give(_ebb_tcache_arena(), cls, ptr, 1);
}

int ebb_defrag_hint(const void *ptr) {
    if (ptr == NULL)
        return 0;
    return _ebb_central_defrag_hint(ptr);
}
