/* quicklist.c: a linked list of listpack nodes; the structure, the fill
 * rule and the invariants are in quicklist.h.
 *
 * Pushes go into the end node while it has room, else into a new node.  An
 * insert in the middle of a full node first tries the neighbour when the
 * position is at the node's edge, else splits the node in two at the
 * position; afterwards adjacent nodes are merged when the pair fits in one,
 * so repeated middle inserts do not leave a trail of half-empty nodes.
 * Deleting a node's last entry unlinks the node.
 *
 * Compression (list-compress-depth d): an operation first makes raw the
 * node it reads or changes (node_open; neighbours it writes through
 * node_raw), and a change ends with settle(): the d nodes at each end raw,
 * the first interior node from each end compressed (a push or pop moves
 * the boundary by one node), and the interior nodes around the change
 * compressed again.  So every operation costs O(d) node steps beyond its
 * own work, and at most one node (the last a read opened) stays raw
 * between operations. */
#include "quicklist.h"

#include <string.h>

#include "listpack.h"
#include "lzf.h"
#include "rl_assert.h"
#include "zmalloc.h"

/* A positive fill also caps node bytes here, so huge values do not make
 * giant nodes (and memmoves) just because the entry count is low. */
#define QL_SAFETY_BYTES 8192
#define QL_FILL_MIN (-5)

static const size_t fill_bytes[] = {4096, 8192, 16384, 32768, 65536};

#define QL_MIN_COMPRESS_BYTES 48 /* smaller nodes are not worth it */
#define QL_MIN_COMPRESS_GAIN 8   /* keep the LZF form only if it saves this much */

/* ------------------------------- compression ----------------------------- */

static size_t node_bytes(const ql_node_t *n) { return n->lzf_sz ? n->raw_sz : lp_bytes(n->lp); }

static void node_compress(ql_node_t *n) {
    if (n->lzf_sz) return;
    size_t sz = lp_bytes(n->lp);
    /* Too small, or this content already failed to shrink at this size. */
    if (sz < QL_MIN_COMPRESS_BYTES || sz == n->raw_sz) return;
    unsigned char *out = zmalloc(sz);
    size_t clen = lzf_compress(n->lp, sz, out, sz - QL_MIN_COMPRESS_GAIN);
    if (clen == 0) {
        zfree(out);
        n->raw_sz = (uint32_t)sz;
        return;
    }
    lp_free(n->lp);
    n->lp = zrealloc(out, clen);
    n->raw_sz = (uint32_t)sz;
    n->lzf_sz = (uint32_t)clen;
}

/* Make n a plain listpack again (it is about to be read or changed). */
static void node_raw(ql_node_t *n) {
    if (!n || !n->lzf_sz) return;
    unsigned char *raw = zmalloc(n->raw_sz);
    size_t got = lzf_decompress(n->lp, n->lzf_sz, raw, n->raw_sz);
    rl_assert(got == n->raw_sz);
    (void)got;
    zfree(n->lp);
    n->lp = raw;
    n->lzf_sz = 0;
    n->raw_sz = 0;
}

/* Whether n is beyond the first and last `compress` nodes. */
static bool is_interior(const quicklist *ql, const ql_node_t *n) {
    if (ql->compress <= 0) return false;
    const ql_node_t *before = n, *after = n;
    for (int i = 0; i < ql->compress; i++) {
        before = before->prev;
        after = after->next;
        if (!before || !after) return false;
    }
    return true;
}

/* Compress again the node a previous read opened (if still interior). */
static void close_open(quicklist *ql) {
    ql_node_t *o = ql->open;
    ql->open = NULL;
    if (o && is_interior(ql, o)) node_compress(o);
}

/* n is about to be read or changed: raw, and remembered if interior so the
 * next operation compresses it again. */
static void node_open(quicklist *ql, ql_node_t *n) {
    if (ql->open != n) close_open(ql);
    if (!n->lzf_sz) return;
    node_raw(n);
    ql->open = n;
}

/* After a change (see the file comment); around: a node next to where it
 * happened, or NULL for a change at the ends only. */
static void settle(quicklist *ql, ql_node_t *around) {
    close_open(ql);
    if (ql->compress <= 0) return;
    ql_node_t *f = ql->head, *b = ql->tail;
    for (int i = 0; i < ql->compress && f; i++) {
        node_raw(f);
        node_raw(b);
        f = f->next;
        b = b->prev;
    }
    if (f && is_interior(ql, f)) node_compress(f);
    if (b && is_interior(ql, b)) node_compress(b);
    if (!around) return;
    ql_node_t *s = around;
    for (int i = 0; i < 2 && s->prev; i++) s = s->prev;
    for (int i = 0; i < 5 && s; i++, s = s->next)
        if (is_interior(ql, s)) node_compress(s);
}

/* ---------------------------------- nodes -------------------------------- */

static ql_node_t *node_new(unsigned char *lp) {
    ql_node_t *n = zmalloc(sizeof(*n));
    n->prev = n->next = NULL;
    n->lp = lp;
    n->count = (uint32_t)lp_length(lp);
    n->raw_sz = n->lzf_sz = 0;
    return n;
}

/* Whether a node of `count` entries and `bytes` bytes is within fill. */
static bool fits(const quicklist *ql, unsigned long count, size_t bytes) {
    if (ql->fill >= 0) return count <= (unsigned long)ql->fill && bytes <= QL_SAFETY_BYTES;
    return bytes <= fill_bytes[-ql->fill - 1];
}

static bool node_allows(const quicklist *ql, const ql_node_t *n, size_t add_bytes) {
    return n && fits(ql, n->count + 1UL, node_bytes(n) + add_bytes);
}

/* Link n after `at` (NULL: as the new head). */
static void link_after(quicklist *ql, ql_node_t *at, ql_node_t *n) {
    n->prev = at;
    n->next = at ? at->next : ql->head;
    if (n->next) n->next->prev = n;
    else ql->tail = n;
    if (at) at->next = n;
    else ql->head = n;
    ql->len++;
}

static void unlink_free(quicklist *ql, ql_node_t *n) {
    if (n->prev) n->prev->next = n->next;
    else ql->head = n->next;
    if (n->next) n->next->prev = n->prev;
    else ql->tail = n->prev;
    ql->len--;
    if (ql->open == n) ql->open = NULL;
    zfree(n->lp); /* a listpack or its LZF form */
    zfree(n);
}

/* Move entries [k, count) of n into a new node linked after n. */
static ql_node_t *split_node(quicklist *ql, ql_node_t *n, unsigned long k) {
    unsigned char *rest = lp_delete_range(lp_dup(n->lp), 0, k);
    n->lp = lp_delete_range(n->lp, (long)k, n->count - k);
    n->count = (uint32_t)k;
    ql_node_t *r = node_new(rest);
    link_after(ql, n, r);
    return r;
}

/* Fold b = a->next into a when both fit in one node. */
static void try_merge(quicklist *ql, ql_node_t *a) {
    ql_node_t *b = a ? a->next : NULL;
    if (!b) return;
    if (!fits(ql, (unsigned long)a->count + b->count,
              node_bytes(a) + node_bytes(b) - LP_HDR_SIZE - 1)) return;
    node_raw(a);
    node_raw(b);
    a->lp = lp_merge(a->lp, b->lp);
    a->count += b->count;
    unlink_free(ql, b);
}

/* ------------------------------ create / free ---------------------------- */

quicklist *ql_new(int fill, int compress) {
    quicklist *ql = zcalloc(sizeof(*ql));
    ql_set_options(ql, fill, compress);
    return ql;
}

void ql_set_options(quicklist *ql, int fill, int compress) {
    ql->fill = fill < QL_FILL_MIN ? QL_FILL_MIN : fill;
    ql->compress = compress < 0 ? 0 : compress;
}

void ql_free(quicklist *ql) {
    if (!ql) return;
    while (ql->head) unlink_free(ql, ql->head);
    zfree(ql);
}

quicklist *ql_dup(const quicklist *ql) {
    quicklist *c = ql_new(ql->fill, ql->compress);
    for (const ql_node_t *n = ql->head; n; n = n->next) {
        ql_node_t *d = zmalloc(sizeof(*d));
        *d = *n; /* counts and the compressed state, then its own bytes */
        d->lp = zmemdup(n->lp, n->lzf_sz ? n->lzf_sz : lp_bytes(n->lp));
        link_after(c, c->tail, d);
        c->count += n->count;
    }
    settle(c, NULL);
    return c;
}

/* ------------------------------- push / pop ------------------------------ */

void ql_push(quicklist *ql, const void *s, size_t len, int where) {
    ql_node_t *n = where == QL_HEAD ? ql->head : ql->tail;
    if (!node_allows(ql, n, lp_encoded_size(s, len))) {
        n = node_new(lp_new());
        link_after(ql, where == QL_HEAD ? NULL : ql->tail, n);
    }
    n->lp = where == QL_HEAD ? lp_prepend(n->lp, s, len) : lp_append(n->lp, s, len);
    n->count++;
    ql->count++;
    settle(ql, NULL);
}

void ql_append_listpack(quicklist *ql, unsigned char *lp) {
    if (lp_length(lp) == 0) {
        lp_free(lp);
        return;
    }
    ql_node_t *n = node_new(lp);
    link_after(ql, ql->tail, n);
    ql->count += n->count;
    settle(ql, NULL);
}

/* Remove the entry e points at; unlinks its node when it empties.
 * Returns the entry that followed it in the node (NULL if none). */
static unsigned char *delete_entry(quicklist *ql, ql_node_t *n, unsigned char *p) {
    unsigned char *next;
    n->lp = lp_delete(n->lp, p, &next);
    n->count--;
    ql->count--;
    if (n->count == 0) {
        unlink_free(ql, n);
        return NULL;
    }
    return next;
}

bool ql_pop(quicklist *ql, int where, unsigned char **str, size_t *len, long long *ival) {
    ql_node_t *n = where == QL_HEAD ? ql->head : ql->tail;
    if (!n) return false;
    node_open(ql, n); /* an end node is raw, unless the depth is 0 */
    unsigned char *p = where == QL_HEAD ? lp_first(n->lp) : lp_last(n->lp);
    const unsigned char *s = lp_get(p, len, ival);
    *str = s ? zmemdup(s, *len ? *len : 1) : NULL;
    delete_entry(ql, n, p);
    settle(ql, NULL);
    return true;
}

/* -------------------------------- by index ------------------------------- */

static void fill_entry(quicklist *ql, ql_node_t *n, unsigned char *p, long offset, ql_entry_t *e) {
    e->ql = ql;
    e->node = n;
    e->p = p;
    e->offset = offset;
    e->str = lp_get(p, &e->len, &e->ival);
}

bool ql_index(quicklist *ql, long index, ql_entry_t *e) {
    long long signed_i = index < 0 ? (long long)ql->count + index : index;
    if (signed_i < 0 || (unsigned long long)signed_i >= ql->count) return false;
    unsigned long i = (unsigned long)signed_i;
    ql_node_t *n;
    unsigned long base; /* index of n's first entry */
    if (i < ql->count / 2) {
        for (n = ql->head, base = 0; base + n->count <= i; n = n->next) base += n->count;
    } else {
        for (n = ql->tail, base = ql->count - n->count; base > i; n = n->prev)
            base -= n->prev->count;
    }
    node_open(ql, n);
    fill_entry(ql, n, lp_seek(n->lp, (long)(i - base)), (long)(i - base), e);
    return true;
}

/* Insert s next to e (after or before).  See the file comment for the
 * order of choices when e's node is full. */
static void insert_at(quicklist *ql, ql_entry_t *e, const void *s, size_t len, bool after) {
    ql_node_t *n = e->node;
    size_t add = lp_encoded_size(s, len);
    bool at_tail = after && e->offset == (long)n->count - 1;
    bool at_head = !after && e->offset == 0;
    ql->count++;
    if (node_allows(ql, n, add)) {
        n->lp = lp_insert(n->lp, s, len, e->p, after ? LP_AFTER : LP_BEFORE, NULL);
        n->count++;
        settle(ql, n);
        return;
    }
    if (at_tail && node_allows(ql, n->next, add)) {
        node_raw(n->next);
        n->next->lp = lp_prepend(n->next->lp, s, len);
        n->next->count++;
        settle(ql, n);
        return;
    }
    if (at_head && node_allows(ql, n->prev, add)) {
        node_raw(n->prev);
        n->prev->lp = lp_append(n->prev->lp, s, len);
        n->prev->count++;
        settle(ql, n);
        return;
    }
    ql_node_t *fresh = node_new(lp_append(lp_new(), s, len));
    if (at_tail || at_head) {
        link_after(ql, at_tail ? n : n->prev, fresh);
        settle(ql, fresh);
        return;
    }
    /* Middle of a full node: split, put the value between the halves, and
     * let it join a half if it fits. */
    split_node(ql, n, (unsigned long)e->offset + (after ? 1 : 0));
    link_after(ql, n, fresh);
    try_merge(ql, fresh);
    try_merge(ql, n);
    settle(ql, n);
}

void ql_insert_before(quicklist *ql, ql_entry_t *e, const void *s, size_t len) {
    insert_at(ql, e, s, len, false);
}

void ql_insert_after(quicklist *ql, ql_entry_t *e, const void *s, size_t len) {
    insert_at(ql, e, s, len, true);
}

void ql_replace_entry(quicklist *ql, ql_entry_t *e, const void *s, size_t len) {
    ql_node_t *n = e->node;
    unsigned long off = (unsigned long)e->offset;
    n->lp = lp_replace(n->lp, &e->p, s, len);
    if (n->count > 1 && !fits(ql, n->count, lp_bytes(n->lp))) {
        /* The new value made the node too big: give it a node of its own. */
        if (off + 1 < n->count) split_node(ql, n, off + 1);
        if (off > 0) split_node(ql, n, off);
    }
    settle(ql, n);
}

bool ql_replace_at_index(quicklist *ql, long index, const void *s, size_t len) {
    ql_entry_t e;
    if (!ql_index(ql, index, &e)) return false;
    ql_replace_entry(ql, &e, s, len);
    return true;
}

unsigned long ql_del_range(quicklist *ql, long start, unsigned long count) {
    ql_entry_t e;
    if (count == 0 || !ql_index(ql, start, &e)) return 0;
    ql_node_t *n = e.node, *before = n->prev;
    unsigned long off = (unsigned long)e.offset, deleted = 0;
    while (n && deleted < count) {
        ql_node_t *next = n->next;
        unsigned long take = n->count - off;
        if (take > count - deleted) take = count - deleted;
        if (off == 0 && take == n->count) {
            unlink_free(ql, n);
        } else {
            node_raw(n);
            n->lp = lp_delete_range(n->lp, (long)off, take);
            n->count -= (uint32_t)take;
        }
        deleted += take;
        ql->count -= take;
        n = next;
        off = 0;
    }
    /* The nodes cut short are next to each other now, after `before`. */
    settle(ql, before ? before : ql->head);
    return deleted;
}

/* -------------------------------- iterator ------------------------------- */

/* Point the iterator at the first (forwards) or last entry of node n. */
static void iter_enter(ql_iter_t *it, ql_node_t *n) {
    it->node = n;
    if (!n) {
        it->p = NULL;
        return;
    }
    node_open(it->ql, n);
    it->p = it->dir == QL_HEAD ? lp_first(n->lp) : lp_last(n->lp);
    it->offset = it->dir == QL_HEAD ? 0 : (long)n->count - 1;
}

ql_iter_t *ql_iter_new(quicklist *ql, int dir) {
    ql_iter_t *it = zmalloc(sizeof(*it));
    it->ql = ql;
    it->dir = dir;
    iter_enter(it, dir == QL_HEAD ? ql->head : ql->tail);
    return it;
}

ql_iter_t *ql_iter_at_index(quicklist *ql, int dir, long index) {
    ql_entry_t e;
    ql_iter_t *it = zmalloc(sizeof(*it));
    it->ql = ql;
    it->dir = dir;
    /* Not through ql_iter_new: entering an end node would compress again
     * the node ql_index just opened. */
    if (!ql_index(ql, index, &e)) {
        iter_enter(it, NULL);
        return it;
    }
    it->node = e.node;
    it->p = e.p;
    it->offset = e.offset;
    return it;
}

bool ql_next(ql_iter_t *it, ql_entry_t *e) {
    while (it->node && !it->p)
        iter_enter(it, it->dir == QL_HEAD ? it->node->next : it->node->prev);
    if (!it->node) return false;
    fill_entry(it->ql, it->node, it->p, it->offset, e);
    if (it->dir == QL_HEAD) {
        it->p = lp_next(it->node->lp, it->p);
        it->offset++;
    } else {
        it->p = lp_prev(it->node->lp, it->p);
        it->offset--;
    }
    return true;
}

void ql_iter_del(ql_iter_t *it, ql_entry_t *e) {
    ql_node_t *n = e->node, *prev = n->prev, *next = n->next;
    bool node_goes = n->count == 1;
    unsigned char *after = delete_entry(it->ql, n, e->p);
    if (node_goes) {
        /* n was unlinked and freed: the ends may have moved; continue in
         * the neighbour */
        settle(it->ql, NULL);
        iter_enter(it, it->dir == QL_HEAD ? next : prev);
        return;
    }
    it->node = n;
    if (it->dir == QL_HEAD) {
        it->p = after; /* the entry that slid into place */
        it->offset = e->offset;
    } else {
        it->p = e->offset == 0 ? NULL : (after ? lp_prev(n->lp, after) : lp_last(n->lp));
        it->offset = e->offset - 1;
    }
}

void ql_iter_free(ql_iter_t *it) {
    zfree(it);
}

/* --------------------------------- misc ---------------------------------- */

unsigned char *ql_node_listpack(quicklist *ql, ql_node_t *n) {
    node_open(ql, n);
    return n->lp;
}

unsigned long ql_compressed_nodes(const quicklist *ql) {
    unsigned long k = 0;
    for (const ql_node_t *n = ql->head; n; n = n->next) k += n->lzf_sz != 0;
    return k;
}

size_t ql_raw_bytes(const quicklist *ql) {
    size_t total = 0;
    for (const ql_node_t *n = ql->head; n; n = n->next) total += node_bytes(n);
    return total;
}

bool ql_entry_equal(const ql_entry_t *e, const void *s, size_t len) {
    return lp_entry_equal(e->p, s, len);
}

unsigned long ql_count(const quicklist *ql) {
    return ql->count;
}

size_t ql_mem_usage(const quicklist *ql) {
    size_t total = zmalloc_size(ql);
    for (const ql_node_t *n = ql->head; n; n = n->next)
        total += zmalloc_size(n) + zmalloc_size(n->lp); /* a listpack or its LZF form */
    return total;
}

bool ql_verify(const quicklist *ql) {
    unsigned long count = 0, len = 0;
    const ql_node_t *prev = NULL;
    for (const ql_node_t *n = ql->head; n; prev = n, n = n->next) {
        if (n->prev != prev || n->count == 0) return false;
        unsigned char *raw = n->lp;
        if (n->lzf_sz) { /* compressed: it must come back whole, and be interior */
            raw = zmalloc(n->raw_sz);
            bool whole = lzf_decompress(n->lp, n->lzf_sz, raw, n->raw_sz) == n->raw_sz;
            if (!whole || !is_interior(ql, n)) {
                zfree(raw);
                return false;
            }
        }
        bool ok = n->count == lp_length(raw) && lp_validate(raw, lp_bytes(raw), true, NULL, NULL);
        if (raw != n->lp) zfree(raw);
        if (!ok) return false;
        count += n->count;
        len++;
    }
    return ql->tail == prev && count == ql->count && len == ql->len &&
           (ql->head == NULL) == (ql->count == 0);
}
