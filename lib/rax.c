/* rax.c: the compressed radix tree of rax.h.
 *
 * Nodes are one allocation each: header plus the label bytes; the children
 * are a separate pointer array sized exactly (kept sorted by first label
 * byte, at most 256 entries).  Insert splits an edge where the new key
 * leaves it; remove merges a valueless node with its single child, so the
 * shape invariants of rax.h hold after every call.  Iterators keep the path
 * from the root (node, child index, key length per level) so next/prev walk
 * in amortised constant time.  Called by the stream code; must not include
 * any server header. */
#include "rax.h"

#include <string.h>

#include "zmalloc.h"

struct rax_node {
    void *value;        /* meaningful when has_value */
    rax_node_t **child; /* nchild pointers, sorted by label[0] */
    uint32_t len;       /* label bytes (0 only for the root) */
    uint16_t nchild;    /* 0..256 */
    uint8_t has_value;
    unsigned char label[];
};

static rax_node_t *node_new(rax_t *r, const unsigned char *label, size_t len) {
    rax_node_t *n = zmalloc(sizeof(*n) + len);
    n->value = NULL;
    n->child = NULL;
    n->len = (uint32_t)len;
    n->nchild = 0;
    n->has_value = 0;
    if (len) memcpy(n->label, label, len);
    r->numnodes++;
    r->alloc_bytes += sizeof(*n) + len;
    return n;
}

/* Frees the node and its child array, not the children. */
static void node_free(rax_t *r, rax_node_t *n) {
    r->numnodes--;
    r->alloc_bytes -= sizeof(*n) + n->len + sizeof(rax_node_t *) * n->nchild;
    zfree(n->child);
    zfree(n);
}

rax_t *rax_new(void) {
    rax_t *r = zmalloc(sizeof(*r));
    r->numele = 0;
    r->numnodes = 0;
    r->alloc_bytes = 0;
    r->root = node_new(r, NULL, 0);
    return r;
}

/* Index of the child whose label starts with b, or -1; *ins gets the
 * position where such a child would be inserted. */
static int find_child(const rax_node_t *n, unsigned char b, int *ins) {
    int lo = 0, hi = n->nchild - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        unsigned char m = n->child[mid]->label[0];
        if (m == b) return mid;
        if (m < b) lo = mid + 1;
        else hi = mid - 1;
    }
    if (ins) *ins = lo;
    return -1;
}

static void child_insert(rax_t *r, rax_node_t *n, int pos, rax_node_t *c) {
    n->child = zrealloc(n->child, sizeof(rax_node_t *) * (n->nchild + 1u));
    memmove(n->child + pos + 1, n->child + pos, sizeof(rax_node_t *) * (size_t)(n->nchild - pos));
    n->child[pos] = c;
    n->nchild++;
    r->alloc_bytes += sizeof(rax_node_t *);
}

static void child_remove(rax_t *r, rax_node_t *n, int pos) {
    memmove(n->child + pos, n->child + pos + 1, sizeof(rax_node_t *) * (size_t)(n->nchild - pos - 1));
    n->nchild--;
    r->alloc_bytes -= sizeof(rax_node_t *);
    if (n->nchild == 0) {
        zfree(n->child);
        n->child = NULL;
    } else {
        n->child = zrealloc(n->child, sizeof(rax_node_t *) * n->nchild);
    }
}

static size_t common_prefix(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen) {
    size_t m = alen < blen ? alen : blen, i = 0;
    while (i < m && a[i] == b[i]) i++;
    return i;
}

/* ------------------------------------------------------------ insert */

static bool insert_generic(rax_t *r, const unsigned char *key, size_t len, void *val, void **old, bool overwrite) {
    rax_node_t *node = r->root;
    size_t pos = 0;
    for (;;) {
        if (pos == len) {
            if (node->has_value) {
                if (old) *old = node->value;
                if (overwrite) node->value = val;
                return false;
            }
            node->has_value = 1;
            node->value = val;
            r->numele++;
            return true;
        }
        int ins, i = find_child(node, key[pos], &ins);
        if (i < 0) {
            rax_node_t *leaf = node_new(r, key + pos, len - pos);
            leaf->has_value = 1;
            leaf->value = val;
            child_insert(r, node, ins, leaf);
            r->numele++;
            return true;
        }
        rax_node_t *c = node->child[i];
        size_t m = common_prefix(c->label, c->len, key + pos, len - pos);
        if (m == c->len) {
            node = c;
            pos += m;
            continue;
        }
        /* Split c's edge after m bytes: node -> mid(label[0..m)) -> c(rest). */
        rax_node_t *mid = node_new(r, c->label, m);
        size_t rest = c->len - m;
        memmove(c->label, c->label + m, rest);
        r->alloc_bytes -= m;
        c->len = (uint32_t)rest;
        c = zrealloc(c, sizeof(*c) + rest);
        child_insert(r, mid, 0, c);
        node->child[i] = mid;
        if (pos + m == len) {
            mid->has_value = 1;
            mid->value = val;
        } else {
            rax_node_t *leaf = node_new(r, key + pos + m, len - pos - m);
            leaf->has_value = 1;
            leaf->value = val;
            child_insert(r, mid, leaf->label[0] < c->label[0] ? 0 : 1, leaf);
        }
        r->numele++;
        return true;
    }
}

bool rax_insert(rax_t *r, const unsigned char *key, size_t len, void *val, void **old) {
    return insert_generic(r, key, len, val, old, true);
}

bool rax_try_insert(rax_t *r, const unsigned char *key, size_t len, void *val) {
    return insert_generic(r, key, len, val, NULL, false);
}

/* ------------------------------------------------------------ lookup */

bool rax_find(const rax_t *r, const unsigned char *key, size_t len, void **val) {
    const rax_node_t *node = r->root;
    size_t pos = 0;
    while (pos < len) {
        int i = find_child(node, key[pos], NULL);
        if (i < 0) return false;
        const rax_node_t *c = node->child[i];
        if (c->len > len - pos || memcmp(c->label, key + pos, c->len) != 0) return false;
        pos += c->len;
        node = c;
    }
    if (!node->has_value) return false;
    if (val) *val = node->value;
    return true;
}

/* ------------------------------------------------------------ remove */

/* Replace the valueless non-root node parent->child[idx] by its only child,
 * prefixing the child's label with its own. */
static void merge_with_child(rax_t *r, rax_node_t *parent, int idx) {
    rax_node_t *n = parent->child[idx];
    rax_node_t *c = n->child[0];
    size_t total = (size_t)n->len + c->len;
    c = zrealloc(c, sizeof(*c) + total);
    memmove(c->label + n->len, c->label, c->len);
    memcpy(c->label, n->label, n->len);
    r->alloc_bytes += n->len;
    c->len = (uint32_t)total;
    parent->child[idx] = c;
    node_free(r, n);
}

bool rax_remove(rax_t *r, const unsigned char *key, size_t len, void **old) {
    /* The path: path[i] is the node at depth i, pidx[i] its index in path[i-1]. */
    size_t cap = 16, depth = 0;
    rax_node_t *path_static[16];
    int pidx_static[16];
    rax_node_t **path = path_static;
    int *pidx = pidx_static;
    bool found = false;
    rax_node_t *node = r->root;
    size_t pos = 0;
    path[depth] = node;
    pidx[depth++] = -1;
    while (pos < len) {
        int i = find_child(node, key[pos], NULL);
        if (i < 0) goto done;
        rax_node_t *c = node->child[i];
        if (c->len > len - pos || memcmp(c->label, key + pos, c->len) != 0) goto done;
        pos += c->len;
        node = c;
        if (depth == cap) {
            size_t ncap = cap * 2;
            rax_node_t **np = zmalloc(sizeof(*np) * ncap);
            int *ni = zmalloc(sizeof(*ni) * ncap);
            memcpy(np, path, sizeof(*np) * depth);
            memcpy(ni, pidx, sizeof(*ni) * depth);
            if (path != path_static) {
                zfree(path);
                zfree(pidx);
            }
            path = np;
            pidx = ni;
            cap = ncap;
        }
        path[depth] = node;
        pidx[depth++] = i;
    }
    if (!node->has_value) goto done;
    found = true;
    if (old) *old = node->value;
    node->has_value = 0;
    node->value = NULL;
    r->numele--;
    if (depth > 1) {
        rax_node_t *parent = path[depth - 2];
        int idx = pidx[depth - 1];
        if (node->nchild == 0) {
            child_remove(r, parent, idx);
            node_free(r, node);
            /* The parent may now be a valueless pass-through node. */
            if (depth > 2 && !parent->has_value && parent->nchild == 1)
                merge_with_child(r, path[depth - 3], pidx[depth - 2]);
        } else if (node->nchild == 1) {
            merge_with_child(r, parent, idx);
        }
    }
done:
    if (path != path_static) {
        zfree(path);
        zfree(pidx);
    }
    return found;
}

/* ------------------------------------------------------------ free */

static void free_rec(rax_t *r, rax_node_t *n, void (*cb1)(void *), void (*cb2)(void *, void *), void *arg) {
    /* Iterative over siblings, recursive in depth: depth is bounded by the
     * longest key's length. */
    for (int i = 0; i < n->nchild; i++) free_rec(r, n->child[i], cb1, cb2, arg);
    if (n->has_value) {
        if (cb1) cb1(n->value);
        if (cb2) cb2(n->value, arg);
    }
    node_free(r, n);
}

void rax_free(rax_t *r, void (*free_cb)(void *)) {
    if (!r) return;
    free_rec(r, r->root, free_cb, NULL, NULL);
    zfree(r);
}

void rax_free_with(rax_t *r, void (*free_cb)(void *, void *), void *arg) {
    if (!r) return;
    free_rec(r, r->root, NULL, free_cb, arg);
    zfree(r);
}

/* ------------------------------------------------------------ iterator */

void rax_iter_start(rax_iter_t *it, rax_t *r) {
    it->rt = r;
    it->key = it->key_static;
    it->key_cap = RAX_ITER_STATIC_KEY;
    it->key_len = 0;
    it->data = NULL;
    it->eof = true;
    it->nodes = it->nodes_static;
    it->idx = it->idx_static;
    it->klen = it->klen_static;
    it->depth_cap = RAX_ITER_STATIC_DEPTH;
    it->depth = 0;
}

void rax_iter_stop(rax_iter_t *it) {
    if (it->key != it->key_static) zfree(it->key);
    if (it->nodes != it->nodes_static) {
        zfree(it->nodes);
        zfree(it->idx);
        zfree(it->klen);
    }
    it->key = it->key_static;
    it->nodes = it->nodes_static;
    it->idx = it->idx_static;
    it->klen = it->klen_static;
}

static void it_reset(rax_iter_t *it) {
    it->nodes[0] = it->rt->root;
    it->klen[0] = 0;
    it->key_len = 0;
    it->depth = 1;
    it->eof = false;
}

static rax_node_t *it_top(const rax_iter_t *it) { return it->nodes[it->depth - 1]; }

static void it_push(rax_iter_t *it, int childidx) {
    rax_node_t *c = it_top(it)->child[childidx];
    if (it->depth == it->depth_cap) {
        size_t ncap = it->depth_cap * 2;
        rax_node_t **nn = zmalloc(sizeof(*nn) * ncap);
        int *ni = zmalloc(sizeof(*ni) * ncap);
        size_t *nk = zmalloc(sizeof(*nk) * ncap);
        memcpy(nn, it->nodes, sizeof(*nn) * it->depth);
        memcpy(ni, it->idx, sizeof(*ni) * it->depth);
        memcpy(nk, it->klen, sizeof(*nk) * it->depth);
        if (it->nodes != it->nodes_static) {
            zfree(it->nodes);
            zfree(it->idx);
            zfree(it->klen);
        }
        it->nodes = nn;
        it->idx = ni;
        it->klen = nk;
        it->depth_cap = ncap;
    }
    if (it->key_len + c->len > it->key_cap) {
        size_t ncap = (it->key_len + c->len) * 2;
        if (it->key == it->key_static) {
            unsigned char *k = zmalloc(ncap);
            memcpy(k, it->key, it->key_len);
            it->key = k;
        } else {
            it->key = zrealloc(it->key, ncap);
        }
        it->key_cap = ncap;
    }
    memcpy(it->key + it->key_len, c->label, c->len);
    it->key_len += c->len;
    it->idx[it->depth - 1] = childidx;
    it->nodes[it->depth] = c;
    it->klen[it->depth] = it->key_len;
    it->depth++;
}

static void it_pop(rax_iter_t *it) {
    it->depth--;
    it->key_len = it->klen[it->depth - 1];
}

static bool it_found(rax_iter_t *it) {
    rax_node_t *n = it_top(it);
    it->data = n->value;
    it->eof = false;
    return true;
}

static bool it_eof(rax_iter_t *it) {
    it->eof = true;
    it->data = NULL;
    return false;
}

/* From the top node, go down to the smallest key in its subtree. */
static bool it_leftmost(rax_iter_t *it) {
    while (!it_top(it)->has_value) {
        if (it_top(it)->nchild == 0) return it_eof(it); /* empty tree */
        it_push(it, 0);
    }
    return it_found(it);
}

/* From the top node, go down to the largest key in its subtree. */
static bool it_rightmost(rax_iter_t *it) {
    while (it_top(it)->nchild > 0) it_push(it, it_top(it)->nchild - 1);
    if (!it_top(it)->has_value) return it_eof(it); /* empty tree */
    return it_found(it);
}

/* The smallest key after the whole subtree of the top node. */
static bool it_up_next(rax_iter_t *it) {
    while (it->depth > 1) {
        int i = it->idx[it->depth - 2];
        it_pop(it);
        if (i + 1 < it_top(it)->nchild) {
            it_push(it, i + 1);
            return it_leftmost(it);
        }
    }
    return it_eof(it);
}

/* The smallest key greater than the top node's key. */
static bool it_step_next(rax_iter_t *it) {
    if (it_top(it)->nchild > 0) {
        it_push(it, 0);
        return it_leftmost(it);
    }
    return it_up_next(it);
}

/* The largest key smaller than the top node's key. */
static bool it_step_prev(rax_iter_t *it) {
    while (it->depth > 1) {
        int i = it->idx[it->depth - 2];
        it_pop(it);
        if (i > 0) {
            it_push(it, i - 1);
            return it_rightmost(it);
        }
        if (it_top(it)->has_value) return it_found(it);
    }
    return it_eof(it);
}

void rax_iter_set(rax_iter_t *it, void *val) {
    if (it->eof) return;
    it_top(it)->value = val;
    it->data = val;
}

bool rax_next(rax_iter_t *it) { return it->eof ? false : it_step_next(it); }
bool rax_prev(rax_iter_t *it) { return it->eof ? false : it_step_prev(it); }

/* Position at the smallest key >= key (> key when strict). */
static bool seek_ge(rax_iter_t *it, const unsigned char *key, size_t len, bool strict) {
    it_reset(it);
    size_t pos = 0;
    for (;;) {
        rax_node_t *node = it_top(it);
        if (pos == len) {
            if (!strict && node->has_value) return it_found(it);
            return it_step_next(it);
        }
        int ins, i = find_child(node, key[pos], &ins);
        if (i < 0) {
            if (ins < node->nchild) {
                it_push(it, ins);
                return it_leftmost(it);
            }
            return it_up_next(it);
        }
        rax_node_t *c = node->child[i];
        size_t m = common_prefix(c->label, c->len, key + pos, len - pos);
        it_push(it, i);
        if (m == c->len) {
            pos += m;
            continue;
        }
        /* The key leaves c's edge: c's subtree is wholly above or below. */
        if (pos + m == len || c->label[m] > key[pos + m]) return it_leftmost(it);
        return it_up_next(it);
    }
}

int rax_iter_compare(const rax_iter_t *it, const unsigned char *key, size_t len) {
    size_t m = it->key_len < len ? it->key_len : len;
    int c = m ? memcmp(it->key, key, m) : 0;
    if (c) return c;
    return it->key_len < len ? -1 : it->key_len > len ? 1
                                                      : 0;
}

bool rax_seek(rax_iter_t *it, const char *op, const unsigned char *key, size_t len) {
    if (!strcmp(op, "^")) {
        it_reset(it);
        return it_leftmost(it);
    }
    if (!strcmp(op, "$")) {
        it_reset(it);
        return it_rightmost(it);
    }
    if (!strcmp(op, ">=")) return seek_ge(it, key, len, false);
    if (!strcmp(op, ">")) return seek_ge(it, key, len, true);
    if (!strcmp(op, "=")) {
        if (!seek_ge(it, key, len, false)) return false;
        if (rax_iter_compare(it, key, len) != 0) return it_eof(it);
        return true;
    }
    if (!strcmp(op, "<=") || !strcmp(op, "<")) {
        /* The predecessor of the first key above (or at) key. */
        if (seek_ge(it, key, len, op[1] == '\0' ? false : true)) return it_step_prev(it);
        it_reset(it);
        return it_rightmost(it);
    }
    it_reset(it);
    return it_eof(it);
}

/* ------------------------------------------------------------ statistics */

static uint64_t branch_count_rec(const rax_node_t *n) {
    uint64_t total = 1;
    for (int i = 0; i < n->nchild; i++) {
        const rax_node_t *c = n->child[i];
        if (n->nchild >= 2 && c->len > 1) total++; /* the run after the branch byte */
        total += branch_count_rec(c);
    }
    return total;
}

uint64_t rax_branch_node_count(const rax_t *r) { return branch_count_rec(r->root); }

/* ------------------------------------------------------------ validation */

static bool validate_rec(const rax_node_t *n, bool is_root, uint64_t *ele, uint64_t *nodes, size_t *bytes) {
    (*nodes)++;
    *bytes += sizeof(*n) + n->len + sizeof(rax_node_t *) * n->nchild;
    if (n->has_value) (*ele)++;
    if (!is_root && n->len == 0) return false;
    if (!is_root && !n->has_value && n->nchild < 2) return false;
    for (int i = 0; i < n->nchild; i++) {
        if (i > 0 && n->child[i - 1]->label[0] >= n->child[i]->label[0]) return false;
        if (!validate_rec(n->child[i], false, ele, nodes, bytes)) return false;
    }
    return true;
}

bool rax_validate(const rax_t *r) {
    uint64_t ele = 0, nodes = 0;
    size_t bytes = 0;
    if (r->root->len != 0) return false;
    if (!validate_rec(r->root, true, &ele, &nodes, &bytes)) return false;
    return ele == r->numele && nodes == r->numnodes && bytes == r->alloc_bytes;
}
