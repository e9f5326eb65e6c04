/* zset.h: the sorted-set value in its two encodings, behind one interface
 * for the commands in t_zset.c (the only caller).
 *
 * LISTPACK: member, score, member, score ... ordered by (score, member);
 * scores are stored as their shortest text (util_d2str), so whole numbers
 * become listpack integers.  SKIPLIST: a zset_t pairing a zskiplist (order
 * and ranks; its nodes own the members) with a member table (lib/hashtable)
 * of pointers to those nodes, keyed by their member, for O(1) ZSCORE.
 * Invariant: the table holds exactly the skiplist's nodes, so both halves
 * agree on members and scores by construction; the table owns nothing.
 * A cursor (zset_cursor_t) walks members in rank order either way. */
#ifndef RL_ZSET_H
#define RL_ZSET_H

#include <stdbool.h>
#include <stddef.h>

#include "dict.h"
#include "hashtable.h"
#include "listpack.h"
#include "object.h"
#include "zskiplist.h"

typedef struct zset {
    ht *members; /* zsl's nodes, keyed by member (node->ele) */
    zskiplist *zsl;
} zset_t;

typedef struct zset_limits {
    long long max_entries; /* zset-max-listpack-entries */
    long long max_value;   /* zset-max-listpack-value, bytes */
} zset_limits_t;

/* ZADD input and output flags. */
#define ZADD_IN_INCR (1 << 0)
#define ZADD_IN_NX (1 << 1)
#define ZADD_IN_XX (1 << 2)
#define ZADD_IN_GT (1 << 3)
#define ZADD_IN_LT (1 << 4)
#define ZADD_OUT_NOP (1 << 0)
#define ZADD_OUT_NAN (1 << 1)
#define ZADD_OUT_ADDED (1 << 2)
#define ZADD_OUT_UPDATED (1 << 3)

robj *zset_create_listpack(void);
/* A listpack zset from n unique members already in (score, member) order,
 * appended as they come (the RDB loader sorts and checks them first). */
robj *zset_listpack_from_sorted(sds *members, const double *scores, size_t n);
/* Whether a listpack read from a file can be a zset's listpack as it is:
 * (member, score) pairs and, when deep, every score a number (not NaN), in
 * (score, member) order, no member twice.  The caller has validated the
 * listpack's layout and checked the entry limits. */
bool zset_listpack_adoptable(unsigned char *lp, bool deep);
robj *zset_create_skiplist(void);
unsigned long zset_length(const robj *o);
void zset_convert_to_skiplist(robj *o);
/* Back to a listpack when the limits allow (store commands do this). */
void zset_convert_to_listpack_if_fits(robj *o, const zset_limits_t *l, size_t maxlen, size_t totlen);

bool zset_score(robj *o, const char *m, size_t len, double *score);
/* Add or update as ZADD does with the given ZADD_IN_* flags; false (with
 * ZADD_OUT_NAN) when the result would be NaN.  *newscore gets the score
 * stored, when there was one. */
bool zset_add(robj *o, const zset_limits_t *l, double score, const char *m, size_t len, int in, int *out,
              double *newscore);
bool zset_delete(robj *o, const char *m, size_t len);
/* 0-based rank (from the top when rev), -1 when absent. */
long zset_rank(robj *o, const char *m, size_t len, bool rev);

/* Range deletions; ranks are 0-based inclusive.  Return members removed. */
unsigned long zset_delete_range_by_rank(robj *o, unsigned long start, unsigned long end);
unsigned long zset_delete_range_by_score(robj *o, const zsl_range_t *r);
unsigned long zset_delete_range_by_lex(robj *o, const zsl_lex_range_t *r);

/* Rank-order walk (descending when rev).  The zset must not change while a
 * cursor is in use. */
typedef struct zset_cursor {
    robj *o;
    bool rev;
    unsigned char *ep; /* listpack: member entry, NULL at the end */
    zsl_node_t *node;  /* skiplist: node, NULL at the end */
    char buf[LP_INTBUF_SIZE];
} zset_cursor_t;

void zset_cursor_at_rank(zset_cursor_t *cur, robj *o, unsigned long rank, bool rev);
void zset_cursor_in_range(zset_cursor_t *cur, robj *o, const zsl_range_t *r, bool rev);
void zset_cursor_in_lex(zset_cursor_t *cur, robj *o, const zsl_lex_range_t *r, bool rev);
static inline bool zset_cursor_valid(const zset_cursor_t *cur) { return cur->ep || cur->node; }
const char *zset_cursor_member(zset_cursor_t *cur, size_t *len);
double zset_cursor_score(const zset_cursor_t *cur);
void zset_cursor_next(zset_cursor_t *cur);

void zset_free_value(robj *o);
size_t zset_mem_usage(robj *o, size_t samples);

#endif
