/* quicklist.h: the encoding of large lists: a doubly linked list of nodes,
 * each holding a listpack of a bounded size.
 *
 * Called by t_list.c (and rdb.c) once a list outgrows one listpack.  Pure
 * module over listpack.h; zmalloc only, never server.h.
 *
 *   quicklist: head <-> node <-> node <-> ... <-> tail
 *   node:      prev, next, lp (a listpack), count (entries in lp)
 *
 * Node size follows list-max-listpack-size (`fill`): fill > 0 caps entries
 * per node (and bytes at 8 KB, so huge values do not make giant nodes);
 * fill -1..-5 caps node bytes at 4, 8, 16, 32, 64 KB.  A node always takes
 * at least one entry, so a value larger than the cap gets a node of its own.
 *
 * Invariants: no node is empty (a node whose last entry goes is unlinked);
 * node->count == lp_length(node->lp); ql->count is the sum of node counts and
 * ql->len the number of nodes; head/tail are NULL iff count == 0.
 *
 * list-compress-depth (`compress`, depth d > 0): every node but the d
 * nearest each end is kept LZF-compressed when that saves at least 8 bytes
 * (nodes under 48 bytes are left alone), as Redis does.  A node is
 * decompressed while an operation uses it; a read leaves the last node it
 * opened raw until the list's next operation (ql->open), a change
 * compresses what it touched again before it returns.  Code outside this
 * file reads a node's entries through ql_node_listpack(), never n->lp. */
#ifndef RL_QUICKLIST_H
#define RL_QUICKLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QL_HEAD 0 /* push/pop side; iterator direction head -> tail */
#define QL_TAIL 1 /* push/pop side; iterator direction tail -> head */

typedef struct ql_node {
    struct ql_node *prev, *next;
    unsigned char *lp; /* the entries: a listpack, or its LZF form while compressed */
    uint32_t count;    /* entries */
    uint32_t raw_sz;   /* compressed: the listpack's bytes; raw: the size compression last failed on (0: none) */
    uint32_t lzf_sz;   /* bytes of the LZF form; 0 while the node is a plain listpack */
} ql_node_t;

typedef struct quicklist {
    ql_node_t *head, *tail;
    unsigned long count; /* entries in all nodes */
    unsigned long len;   /* nodes */
    int fill;            /* list-max-listpack-size */
    int compress;        /* list-compress-depth: raw nodes kept at each end (0: none compressed) */
    ql_node_t *open;     /* an interior node a read decompressed, compressed again at the next operation */
} quicklist;

/* A position in the list plus the value found there.  Valid until the list
 * is changed by anything but ql_iter_del on the same iterator. */
typedef struct ql_entry {
    quicklist *ql;
    ql_node_t *node;
    unsigned char *p;         /* entry inside node->lp */
    long offset;              /* index of p inside its node */
    const unsigned char *str; /* string value, or NULL for an integer */
    size_t len;               /* bytes of str */
    long long ival;           /* integer value when str == NULL */
} ql_entry_t;

typedef struct ql_iter {
    quicklist *ql;
    ql_node_t *node;  /* node of the next entry, NULL when done */
    unsigned char *p; /* next entry in node, NULL: go to the next node */
    long offset;      /* index of p in node */
    int dir;          /* QL_HEAD: forwards, QL_TAIL: backwards */
} ql_iter_t;

quicklist *ql_new(int fill, int compress);
void ql_set_options(quicklist *ql, int fill, int compress);
void ql_free(quicklist *ql); /* NULL is fine */
quicklist *ql_dup(const quicklist *ql);

void ql_push(quicklist *ql, const void *s, size_t len, int where); /* QL_HEAD/QL_TAIL */
/* Take the ownership of a listpack as a new tail node (empty: just freed).
 * Used to convert a listpack-encoded list; lp may exceed fill. */
void ql_append_listpack(quicklist *ql, unsigned char *lp);
/* Remove the head or tail entry.  String: *str is a zmalloc'd copy of *len
 * bytes (caller zfrees); integer: *str = NULL and *ival is set.  False if
 * the list is empty. */
bool ql_pop(quicklist *ql, int where, unsigned char **str, size_t *len, long long *ival);

/* Entry at index (negative counts from the tail); false if out of range. */
bool ql_index(quicklist *ql, long index, ql_entry_t *e);
/* Insert next to, or replace, an entry from ql_index or an iterator; any
 * iterator over the list is dead afterwards (use ql_iter_del to delete). */
void ql_insert_before(quicklist *ql, ql_entry_t *e, const void *s, size_t len);
void ql_insert_after(quicklist *ql, ql_entry_t *e, const void *s, size_t len);
void ql_replace_entry(quicklist *ql, ql_entry_t *e, const void *s, size_t len);
bool ql_replace_at_index(quicklist *ql, long index, const void *s, size_t len);
/* Delete up to count entries from start (negative from the tail); returns
 * how many went. */
unsigned long ql_del_range(quicklist *ql, long start, unsigned long count);

/* Iteration; the first ql_next returns the head (QL_HEAD) or tail (QL_TAIL),
 * or for ql_iter_at_index the entry at index (an empty iterator if out of
 * range).  ql_iter_del deletes the entry just returned and keeps the
 * iterator valid: the following ql_next returns the entry that came next. */
ql_iter_t *ql_iter_new(quicklist *ql, int dir);
ql_iter_t *ql_iter_at_index(quicklist *ql, int dir, long index);
bool ql_next(ql_iter_t *it, ql_entry_t *e);
void ql_iter_del(ql_iter_t *it, ql_entry_t *e);
void ql_iter_free(ql_iter_t *it);

/* Node n's entries as a plain listpack (decompressed if need be; valid
 * until the list's next operation): rdb_save.c, aof_encode.c. */
unsigned char *ql_node_listpack(quicklist *ql, ql_node_t *n);
/* Nodes held compressed, and the bytes of every node's listpack as if
 * none were (DEBUG OBJECT's ql_uncompressed_size). */
unsigned long ql_compressed_nodes(const quicklist *ql);
size_t ql_raw_bytes(const quicklist *ql);

bool ql_entry_equal(const ql_entry_t *e, const void *s, size_t len);
unsigned long ql_count(const quicklist *ql);
size_t ql_mem_usage(const quicklist *ql); /* struct + nodes + listpacks (compressed ones at their size) */
/* Check the invariants above (and each listpack deeply); tests and DEBUG. */
bool ql_verify(const quicklist *ql);

#endif
