/* slab.c: the blocks inside one slab.  A slab is a span of
 * _ebb_class_pages[cls] pages cut into _ebb_class_size[cls]-byte blocks.
 * Blocks are handed out from the slab's free list first (recently freed,
 * likely in cache), then by bumping through the never-used tail, so a new
 * slab touches its pages only as it fills.  Callers: central.c only, with
 * the pair lock held (remote frees reach a slab's free list only through
 * central.c's collection).  Invariant: used + |free| + (cap - bump) == cap. */
#include "internal.h"

/* Set up span s (pages already SLAB in page.c) for class cls, and mark its
 * pages in the chunk's page class map so free() can find the class. */
void _ebb_slab_init(ebb_span_t *s, unsigned cls) {
    ebb_chunk_t *c = ebb_chunk_of(s);
    s->cls = (uint8_t)cls;
    s->u.slab.free = NULL;
    s->u.slab.used = 0;
    s->u.slab.cap = (uint16_t)(s->npages * EBB_PAGE / _ebb_class_size[cls]);
    s->u.slab.bump = 0;
    s->u.slab.bucket = -1;
    s->u.slab.remote = NULL;
    for (size_t i = 0; i < s->npages; i++)
        c->page_cls[s->page + i] = (uint8_t)cls;
}

/* One block, or NULL if the slab is full. */
void *_ebb_slab_take(ebb_span_t *s) {
    void *b = s->u.slab.free;
    if (b != NULL) {
        s->u.slab.free = *(void **)b;
    } else if (s->u.slab.bump < s->u.slab.cap) {
        b = ebb_span_base(s) + (size_t)s->u.slab.bump * _ebb_class_size[s->cls];
        s->u.slab.bump++;
    } else {
        return NULL;
    }
    s->u.slab.used++;
    return b;
}

void _ebb_slab_put(ebb_span_t *s, void *block) {
    ebb_assert_internal(s->u.slab.used > 0);
    ebb_assert_internal((size_t)((char *)block - ebb_span_base(s)) %
                            _ebb_class_size[s->cls] ==
                        0);
    *(void **)block = s->u.slab.free;
    s->u.slab.free = block;
    s->u.slab.used--;
}
