/* rax.h: an ordered map from byte strings to pointers, stored as a
 * compressed radix tree (each edge carries a run of bytes).
 *
 * Used by the stream type (node master IDs -> listpacks, pending-entry lists
 * keyed by 128-bit big-endian IDs, consumer groups and consumers keyed by
 * name).  Keys compare as memcmp, shorter first on a common prefix, so
 * big-endian integers iterate in numeric order.  Pure library: zmalloc only,
 * never a server header.
 *
 * Shape: every node but the root holds a non-empty label (the bytes of the
 * edge leading to it) and its key is the concatenation of the labels on the
 * path from the root.  Children are kept sorted by the first byte of their
 * label, and no two children share that byte.  Invariants: a non-root node
 * without a value has at least two children (else it is merged with its only
 * child, or removed when it has none), so the tree has fewer nodes than
 * twice the number of keys.
 *
 * Iterators borrow the tree: any insert or remove invalidates them (seek
 * again afterwards; the stream code does). */
#ifndef RL_RAX_H
#define RL_RAX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct rax_node rax_node_t;

typedef struct rax {
    rax_node_t *root;
    uint64_t numele;    /* keys stored */
    uint64_t numnodes;  /* nodes allocated, root included */
    size_t alloc_bytes; /* bytes requested for nodes and child arrays */
} rax_t;

rax_t *rax_new(void);
/* Free the tree; free_cb (may be NULL) is called with every value. */
void rax_free(rax_t *r, void (*free_cb)(void *));
/* Same, with an extra argument passed through to the callback. */
void rax_free_with(rax_t *r, void (*free_cb)(void *val, void *arg), void *arg);

/* Insert or overwrite.  Returns true when the key is new; when it existed
 * *old (may be NULL) receives the replaced value. */
bool rax_insert(rax_t *r, const unsigned char *key, size_t len, void *val, void **old);
/* Insert only if absent: false (and nothing changed) when the key exists. */
bool rax_try_insert(rax_t *r, const unsigned char *key, size_t len, void *val);
/* Whether the key is present; *val (may be NULL) gets its value. */
bool rax_find(const rax_t *r, const unsigned char *key, size_t len, void **val);
/* Remove the key; *old (may be NULL) gets its value.  False if absent. */
bool rax_remove(rax_t *r, const unsigned char *key, size_t len, void **old);

static inline uint64_t rax_size(const rax_t *r) { return r->numele; }

/* ------------------------------------------------------------ iteration */

#define RAX_ITER_STATIC_KEY 128
#define RAX_ITER_STATIC_DEPTH 32

typedef struct rax_iter {
    rax_t *rt;
    unsigned char *key; /* current key (key_len bytes), valid while positioned */
    size_t key_len;
    void *data; /* current value */
    bool eof;   /* not positioned on a key */
    /* internals: the path from the root to the current node */
    size_t key_cap;
    rax_node_t **nodes;      /* nodes[0] is the root */
    int *idx;                /* idx[i]: index of nodes[i+1] among nodes[i]'s children */
    size_t *klen;            /* key length at nodes[i] */
    size_t depth, depth_cap; /* entries used in nodes/klen; idx has depth-1 */
    unsigned char key_static[RAX_ITER_STATIC_KEY];
    rax_node_t *nodes_static[RAX_ITER_STATIC_DEPTH];
    int idx_static[RAX_ITER_STATIC_DEPTH];
    size_t klen_static[RAX_ITER_STATIC_DEPTH];
} rax_iter_t;

void rax_iter_start(rax_iter_t *it, rax_t *r);
/* Position the iterator.  op: "^" first key, "$" last key, "=", ">=", ">",
 * "<=", "<" relative to key.  Returns false (and sets eof) when no key
 * qualifies; false also for an unknown op. */
bool rax_seek(rax_iter_t *it, const char *op, const unsigned char *key, size_t len);
/* Step to the following / preceding key; false (eof) at the end.  After a
 * seek that found nothing they return false. */
bool rax_next(rax_iter_t *it);
bool rax_prev(rax_iter_t *it);
/* Replace the value of the current key: the one change allowed while
 * iterating (the shape stays).  The iterator must be positioned. */
void rax_iter_set(rax_iter_t *it, void *val);
/* Release memory held by the iterator (not the tree). */
void rax_iter_stop(rax_iter_t *it);

/* The node count the same keys would need with one-byte branch nodes and
 * separate compressed runs (an edge of n > 1 bytes leaving a node with
 * several children costs one extra node): the figure Redis's rax reports,
 * shown by XINFO STREAM as radix-tree-nodes.  Walks the tree. */
uint64_t rax_branch_node_count(const rax_t *r);

/* Check every shape invariant above and the counters (tests, debug). */
bool rax_validate(const rax_t *r);

/* Compare the iterator's current key with key (memcmp order). */
int rax_iter_compare(const rax_iter_t *it, const unsigned char *key, size_t len);

#endif
