/* db_views.c: a stack of robj views in fixed blocks (see db_views.h).
 *
 * Blocks never move once allocated, so a view's address stays valid while
 * more are taken; releasing only moves the top back.  The first block is
 * kept for good, the others are freed at the next idle point, so a single
 * MGET of a million short strings costs 16 MB only while it runs. */
#include "db_views.h"

#include "rl_assert.h"
#include "zmalloc.h"

#define VIEWS_PER_BLOCK 256

struct db_views {
    robj **blocks;  /* nblocks pointers to VIEWS_PER_BLOCK robj each */
    size_t nblocks; /* allocated blocks */
    size_t cap;     /* slots in blocks[] */
    size_t used;    /* views handed out: the stack's top */
    int depth;      /* open marks (commands running, nested included) */
};

db_views_t *db_views_create(void) { return zcalloc(sizeof(db_views_t)); }

db_views_t *db_views_of(server_t *srv) {
    if (!srv->views) srv->views = db_views_create();
    return srv->views;
}

static void free_blocks_from(db_views_t *v, size_t keep) {
    for (size_t i = keep; i < v->nblocks; i++) zfree(v->blocks[i]);
    if (v->nblocks > keep) v->nblocks = keep;
}

void db_views_free(db_views_t *v) {
    if (!v) return;
    free_blocks_from(v, 0);
    zfree(v->blocks);
    zfree(v);
}

robj *db_views_take(db_views_t *v) {
    size_t b = v->used / VIEWS_PER_BLOCK;
    if (b == v->nblocks) {
        if (v->nblocks == v->cap) {
            v->cap = v->cap ? v->cap * 2 : 4;
            v->blocks = zrealloc(v->blocks, v->cap * sizeof(*v->blocks));
        }
        v->blocks[v->nblocks++] = zmalloc(VIEWS_PER_BLOCK * sizeof(robj));
    }
    return &v->blocks[b][v->used++ % VIEWS_PER_BLOCK];
}

size_t db_views_mark(db_views_t *v) {
    v->depth++;
    return v->used;
}

void db_views_release(db_views_t *v, size_t mark) {
    rl_assert(v->depth > 0 && mark <= v->used);
    v->depth--;
    v->used = mark;
}

void db_views_idle(db_views_t *v) {
    if (v->depth) return; /* a script's busy tick: its views are live */
    v->used = 0;
    free_blocks_from(v, 1);
}

size_t db_views_in_use(const db_views_t *v) { return v->used; }
