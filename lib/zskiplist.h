/* zskiplist.h: the ordered half of a large sorted set: a skiplist of (score,
 * member) ordered by score, then by member bytes, with spans for O(log n)
 * rank queries.
 *
 * Called by t_zset.c, which pairs it with a dict (member -> score) for O(1)
 * ZSCORE; this module knows nothing of that dict, so range deletions report
 * each removed member through a callback.  Pure module: zmalloc and sds
 * only, never server.h.
 *
 * Structure: a header node with ZSL_MAX_LEVEL links; node i at level k links
 * to the next node having at least k+1 levels.  Invariants (zsl_verify checks
 * them all):
 *   - level 0 is a doubly linked list (backward pointers) in strict
 *     (score, member) order; no two nodes share a member;
 *   - span of a link = how many level-0 steps it jumps; a NULL link's span is
 *     the number of nodes after its owner, so rank(x) + span = length;
 *   - `level` is the highest level any node uses (>= 1); `tail` is the last
 *     node or NULL when empty.
 * Ownership: the skiplist owns every member sds; zsl_insert takes it. */
#ifndef RL_ZSKIPLIST_H
#define RL_ZSKIPLIST_H

#include <stdbool.h>
#include <stddef.h>

#include "sds.h"

#define ZSL_MAX_LEVEL 32

typedef struct zsl_node {
    sds ele; /* member, owned */
    double score;
    struct zsl_node *backward; /* previous node at level 0, NULL for the first */
    struct zsl_level {
        struct zsl_node *forward;
        unsigned long span; /* level-0 steps to forward */
    } level[];
} zsl_node_t;

typedef struct zskiplist {
    zsl_node_t *header; /* sentinel, holds no member */
    zsl_node_t *tail;
    unsigned long length; /* nodes, header excluded */
    int level;            /* levels in use, 1..ZSL_MAX_LEVEL */
} zskiplist;

/* Score interval; min/max may be +-inf.  Exclusive bounds are '(' forms. */
typedef struct zsl_range {
    double min, max;
    bool minex, maxex;
} zsl_range_t;

/* One end of a lex interval: "-" (below all), "+" (above all), "[v" or "(v". */
enum { ZSL_LEX_NEG_INF,
       ZSL_LEX_POS_INF,
       ZSL_LEX_VALUE };
typedef struct zsl_lex_bound {
    int kind;       /* ZSL_LEX_* */
    bool exclusive; /* "(v"; false for "[v", "-", "+" */
    sds val;        /* ZSL_LEX_VALUE only, owned by the range */
} zsl_lex_bound_t;
typedef struct zsl_lex_range {
    zsl_lex_bound_t min, max;
} zsl_lex_range_t;

/* Told about each member a range deletion removes, before it is freed. */
typedef void (*zsl_remove_cb)(void *arg, sds ele);

zskiplist *zsl_new(void);
void zsl_free(zskiplist *zsl);        /* frees every member too */
void zsl_free_node(zsl_node_t *node); /* node + member */

/* Insert a member that is not present yet (caller checks, e.g. in its dict).
 * Takes ele.  score must not be NaN. */
zsl_node_t *zsl_insert(zskiplist *zsl, double score, sds ele);
/* Remove (score, ele).  With node == NULL the node and its member are freed;
 * else the unlinked node is handed back for the caller to zsl_free_node. */
bool zsl_delete(zskiplist *zsl, double score, const sds ele, zsl_node_t **node);
/* Move a present member from curscore to newscore (in place when the order
 * allows); returns its node.  The member sds stays the same pointer. */
zsl_node_t *zsl_update_score(zskiplist *zsl, double curscore, const sds ele, double newscore);

/* 1-based rank of (score, ele), 0 if absent. */
unsigned long zsl_get_rank(const zskiplist *zsl, double score, const sds ele);
/* Node at 1-based rank, NULL if out of range.  O(log n). */
zsl_node_t *zsl_get_by_rank(const zskiplist *zsl, unsigned long rank);

/* Score ranges.  zsl_parse_range reads NUL-terminated bounds (argv sds are)
 * "1.5", "(1.5", "-inf", "+inf" with strtod as ZRANGEBYSCORE does; false on
 * a malformed bound or NaN. */
bool zsl_parse_range(const char *min, const char *max, zsl_range_t *r);
bool zsl_value_gte_min(double v, const zsl_range_t *r);
bool zsl_value_lte_max(double v, const zsl_range_t *r);
/* Quick test: false when no member can be inside (empty range, or all
 * members on one side).  True does not promise a member: first_in_range does. */
bool zsl_is_in_range(const zskiplist *zsl, const zsl_range_t *r);
zsl_node_t *zsl_first_in_range(const zskiplist *zsl, const zsl_range_t *r);
zsl_node_t *zsl_last_in_range(const zskiplist *zsl, const zsl_range_t *r);

/* Lex ranges (meaningful when all scores are equal, as ZRANGEBYLEX says).
 * zsl_parse_lex_range: false on a malformed item; on success the range owns
 * copies of the values, released by zsl_free_lex_range. */
bool zsl_parse_lex_range(const char *min, size_t minlen, const char *max,
                         size_t maxlen, zsl_lex_range_t *r);
void zsl_free_lex_range(zsl_lex_range_t *r);
bool zsl_lex_gte_min(const void *s, size_t len, const zsl_lex_range_t *r);
bool zsl_lex_lte_max(const void *s, size_t len, const zsl_lex_range_t *r);
bool zsl_lex_range_empty(const zsl_lex_range_t *r);
bool zsl_is_in_lex_range(const zskiplist *zsl, const zsl_lex_range_t *r);
zsl_node_t *zsl_first_in_lex_range(const zskiplist *zsl, const zsl_lex_range_t *r);
zsl_node_t *zsl_last_in_lex_range(const zskiplist *zsl, const zsl_lex_range_t *r);

/* Range deletions; each returns how many members were removed and calls
 * cb (may be NULL) for each one before freeing it. */
unsigned long zsl_delete_range_by_score(zskiplist *zsl, const zsl_range_t *r,
                                        zsl_remove_cb cb, void *arg);
unsigned long zsl_delete_range_by_lex(zskiplist *zsl, const zsl_lex_range_t *r,
                                      zsl_remove_cb cb, void *arg);
/* start..end are 1-based inclusive ranks. */
unsigned long zsl_delete_range_by_rank(zskiplist *zsl, unsigned long start,
                                       unsigned long end, zsl_remove_cb cb, void *arg);

unsigned long zsl_length(const zskiplist *zsl);
/* Bytes held (nodes, header, members) by zmalloc_size.  samples == 0 walks
 * every node; otherwise the first `samples` nodes are averaged and scaled,
 * as MEMORY USAGE SAMPLES does. */
size_t zsl_mem_usage(const zskiplist *zsl, size_t samples);
/* Active defrag.  move(arg, block) returns a new copy of a zmalloc block
 * (the old one is then dead) or NULL when it stays.  zsl_defrag_node
 * offers node x's member sds, then x itself, and repoints the links at x
 * (found by a search for x: O(log n), so a caller may stop between nodes
 * and go on later); it returns x's new address, or NULL when the node
 * stayed (its member may have moved).  zsl_defrag_header offers the
 * header node, the only block zsl points at besides the nodes. */
typedef void *(*zsl_move_fn)(void *arg, void *block);
zsl_node_t *zsl_defrag_node(zskiplist *zsl, zsl_node_t *x, zsl_move_fn move, void *arg);
void zsl_defrag_header(zskiplist *zsl, zsl_move_fn move, void *arg);

/* Check every invariant above; for tests and DEBUG. */
bool zsl_verify(const zskiplist *zsl);

#endif
