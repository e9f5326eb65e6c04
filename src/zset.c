/* zset.c: the sorted-set value (see zset.h): listpack and skiplist (with
 * a member table) encodings, conversions between them, and rank-order
 * cursors.
 *
 * Listpack operations are linear walks over (member, score) pairs, which is
 * what the entry limit (128 by default) is for.  Skiplist operations keep
 * the member table and the skiplist in step: the table (lib/hashtable)
 * stores pointers to the skiplist nodes themselves, keyed by the node's
 * member sds, so a member costs its node, its sds and one table slot
 * (about 8.4 bytes) -- no dict entry (24 bytes) and no bucket pointer. */
#include "zset.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "zmalloc.h"

/* Entries are the skiplist's nodes, which own them: the table frees
 * nothing. */
static const void *node_member(const void *node) { return ((const zsl_node_t *)node)->ele; }
static const ht_type zset_members_type = {node_member, dict_sds_hash, dict_sds_eq, NULL};

/* The node of member m, or NULL. */
static zsl_node_t *zs_find(zset_t *zs, const char *m, size_t len) {
    sds k = sds_newlen(m, len);
    void *node = NULL;
    bool found = ht_find(zs->members, k, &node);
    sds_free(k);
    return found ? node : NULL;
}

/* ------------------------------------------------------------ listpack helpers */

static double lp_score(const unsigned char *sp) {
    size_t len;
    long long v;
    const unsigned char *s = lp_get(sp, &len, &v);
    if (!s) return (double)v;
    char buf[128];
    if (len >= sizeof(buf)) len = sizeof(buf) - 1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    return strtod(buf, NULL);
}

/* Member entry of m, or NULL; *sp gets its score entry. */
static unsigned char *lp_zset_find(unsigned char *lp, const char *m, size_t len, unsigned char **sp) {
    unsigned char *p = lp_first(lp);
    if (p) p = lp_find(lp, p, m, len, 1);
    if (p && sp) *sp = lp_next(lp, p);
    return p;
}

/* Insert (m, score) at its place in (score, member) order. */
static unsigned char *lp_zset_insert(unsigned char *lp, const char *m, size_t len, double score) {
    char sbuf[64];
    int slen = util_d2str_short(sbuf, sizeof(sbuf), score);
    for (unsigned char *ep = lp_first(lp); ep; ep = lp_next(lp, lp_next(lp, ep))) {
        double s = lp_score(lp_next(lp, ep));
        if (s > score || (s == score && lp_entry_cmp(ep, m, len) > 0)) {
            unsigned char *newp;
            lp = lp_insert(lp, m, len, ep, LP_BEFORE, &newp);
            return lp_insert(lp, sbuf, (size_t)slen, newp, LP_AFTER, NULL);
        }
    }
    lp = lp_append(lp, m, len);
    return lp_append(lp, sbuf, (size_t)slen);
}

/* ------------------------------------------------------------ create / convert */

robj *zset_create_listpack(void) {
    robj *o = obj_create(OBJ_ZSET, lp_new());
    o->encoding = OBJ_ENCODING_LISTPACK;
    return o;
}

robj *zset_listpack_from_sorted(sds *members, const double *scores, size_t n) {
    unsigned char *lp = lp_new();
    char sbuf[64];
    for (size_t i = 0; i < n; i++) {
        int slen = util_d2str_short(sbuf, sizeof(sbuf), scores[i]);
        lp = lp_append(lp, members[i], sds_len(members[i]));
        lp = lp_append(lp, sbuf, (size_t)slen);
    }
    robj *o = obj_create(OBJ_ZSET, lp);
    o->encoding = OBJ_ENCODING_LISTPACK;
    return o;
}

/* A score entry as a number: an integer, or a string strtod reads whole
 * that is not NaN. */
static bool lp_score_valid(const unsigned char *sp, double *d) {
    size_t len;
    long long v;
    const unsigned char *s = lp_get(sp, &len, &v);
    if (!s) {
        *d = (double)v;
        return true;
    }
    return util_str2d((const char *)s, len, d) && !isnan(*d);
}

bool zset_listpack_adoptable(unsigned char *lp, bool deep) {
    if (lp_length(lp) % 2) return false;
    if (!deep) return true;
    unsigned char *prev = NULL;
    double prev_score = 0;
    for (unsigned char *ep = lp_first(lp); ep; ep = lp_next(lp, lp_next(lp, ep))) {
        double score;
        if (!lp_score_valid(lp_next(lp, ep), &score)) return false;
        if (prev) {
            char buf[LP_INTBUF_SIZE];
            size_t len;
            const unsigned char *m = lp_get_str(ep, &len, buf);
            if (score < prev_score || (score == prev_score && lp_entry_cmp(prev, m, len) >= 0)) return false;
        }
        prev = ep;
        prev_score = score;
    }
    return lp_entries_unique(lp, 1);
}

static zset_t *zset_new(void) {
    zset_t *zs = zmalloc(sizeof(*zs));
    zs->members = ht_create(&zset_members_type);
    zs->zsl = zsl_new();
    return zs;
}

robj *zset_create_skiplist(void) {
    robj *o = obj_create(OBJ_ZSET, zset_new());
    o->encoding = OBJ_ENCODING_SKIPLIST;
    return o;
}

unsigned long zset_length(const robj *o) {
    if (o->encoding == OBJ_ENCODING_LISTPACK) return lp_length(o->ptr) / 2;
    return ((const zset_t *)o->ptr)->zsl->length;
}

/* Insert a member known to be absent into the skiplist pair. */
static void zs_insert(zset_t *zs, double score, const char *m, size_t len) {
    zsl_node_t *node = zsl_insert(zs->zsl, score, sds_newlen(m, len));
    ht_add(zs->members, node);
}

void zset_convert_to_skiplist(robj *o) {
    if (o->encoding != OBJ_ENCODING_LISTPACK) return;
    unsigned char *lp = o->ptr;
    zset_t *zs = zset_new();
    ht_expand(zs->members, lp_length(lp) / 2);
    char buf[LP_INTBUF_SIZE];
    for (unsigned char *ep = lp_first(lp); ep; ep = lp_next(lp, lp_next(lp, ep))) {
        size_t len;
        const unsigned char *m = lp_get_str(ep, &len, buf);
        zs_insert(zs, lp_score(lp_next(lp, ep)), (const char *)m, len);
    }
    lp_free(lp);
    o->ptr = zs;
    o->encoding = OBJ_ENCODING_SKIPLIST;
}

void zset_convert_to_listpack_if_fits(robj *o, const zset_limits_t *l, size_t maxlen, size_t totlen) {
    if (o->encoding != OBJ_ENCODING_SKIPLIST) return;
    zset_t *zs = o->ptr;
    if ((long long)zs->zsl->length > l->max_entries || (long long)maxlen > l->max_value) return;
    if (!lp_safe_to_add(NULL, totlen)) return;
    unsigned char *lp = lp_new();
    char sbuf[64];
    for (zsl_node_t *n = zs->zsl->header->level[0].forward; n; n = n->level[0].forward) {
        lp = lp_append(lp, n->ele, sds_len(n->ele));
        int slen = util_d2str_short(sbuf, sizeof(sbuf), n->score);
        lp = lp_append(lp, sbuf, (size_t)slen);
    }
    ht_release(zs->members);
    zsl_free(zs->zsl);
    zfree(zs);
    o->ptr = lp;
    o->encoding = OBJ_ENCODING_LISTPACK;
}

/* ------------------------------------------------------------ members */

bool zset_score(robj *o, const char *m, size_t len, double *score) {
    if (o->encoding == OBJ_ENCODING_LISTPACK) {
        unsigned char *sp;
        if (!lp_zset_find(o->ptr, m, len, &sp)) return false;
        *score = lp_score(sp);
        return true;
    }
    zsl_node_t *node = zs_find(o->ptr, m, len);
    if (!node) return false;
    *score = node->score;
    return true;
}

/* Move an existing member to a new score. */
static void zset_update(robj *o, const char *m, size_t len, double cur, double score) {
    if (o->encoding == OBJ_ENCODING_LISTPACK) {
        unsigned char *ep = lp_zset_find(o->ptr, m, len, NULL);
        o->ptr = lp_delete_range_at(o->ptr, &ep, 2);
        o->ptr = lp_zset_insert(o->ptr, m, len, score);
        return;
    }
    zset_t *zs = o->ptr;
    zsl_node_t *node = zs_find(zs, m, len);
    /* The node may be replaced (when the order changes): the table slot
     * follows it. */
    zsl_node_t *moved = zsl_update_score(zs->zsl, cur, node->ele, score);
    if (moved != node) ht_replace_entry(zs->members, node, moved);
}

bool zset_add(robj *o, const zset_limits_t *l, double score, const char *m, size_t len, int in, int *out,
              double *newscore) {
    *out = 0;
    if (isnan(score)) {
        *out = ZADD_OUT_NAN;
        return false;
    }
    double cur;
    if (zset_score(o, m, len, &cur)) {
        if (in & ZADD_IN_NX) {
            *out |= ZADD_OUT_NOP;
            return true;
        }
        if (in & ZADD_IN_INCR) {
            score += cur;
            if (isnan(score)) {
                *out |= ZADD_OUT_NAN;
                return false;
            }
        }
        if (((in & ZADD_IN_LT) && score >= cur) || ((in & ZADD_IN_GT) && score <= cur)) {
            *out |= ZADD_OUT_NOP;
            return true;
        }
        if (newscore) *newscore = score;
        if (score != cur) {
            zset_update(o, m, len, cur, score);
            *out |= ZADD_OUT_UPDATED;
        }
        return true;
    }
    if (in & ZADD_IN_XX) {
        *out |= ZADD_OUT_NOP;
        return true;
    }
    if (o->encoding == OBJ_ENCODING_LISTPACK) {
        if ((long long)zset_length(o) + 1 > l->max_entries || (long long)len > l->max_value ||
            !lp_safe_to_add(o->ptr, len)) {
            zset_convert_to_skiplist(o);
        } else {
            o->ptr = lp_zset_insert(o->ptr, m, len, score);
        }
    }
    if (o->encoding == OBJ_ENCODING_SKIPLIST) zs_insert(o->ptr, score, m, len);
    if (newscore) *newscore = score;
    *out |= ZADD_OUT_ADDED;
    return true;
}

bool zset_delete(robj *o, const char *m, size_t len) {
    if (o->encoding == OBJ_ENCODING_LISTPACK) {
        unsigned char *ep = lp_zset_find(o->ptr, m, len, NULL);
        if (!ep) return false;
        o->ptr = lp_delete_range_at(o->ptr, &ep, 2);
        return true;
    }
    zset_t *zs = o->ptr;
    sds k = sds_newlen(m, len);
    void *p;
    bool found = ht_pop(zs->members, k, &p);
    sds_free(k);
    if (!found) return false;
    /* Out of the table first, then the skiplist frees node and member. */
    zsl_node_t *node = p;
    zsl_delete(zs->zsl, node->score, node->ele, NULL);
    return true;
}

long zset_rank(robj *o, const char *m, size_t len, bool rev) {
    unsigned long n = zset_length(o);
    if (o->encoding == OBJ_ENCODING_LISTPACK) {
        unsigned char *lp = o->ptr;
        long r = 0;
        for (unsigned char *ep = lp_first(lp); ep; ep = lp_next(lp, lp_next(lp, ep)), r++)
            if (lp_entry_equal(ep, m, len)) return rev ? (long)n - 1 - r : r;
        return -1;
    }
    zset_t *zs = o->ptr;
    zsl_node_t *node = zs_find(zs, m, len);
    if (!node) return -1;
    unsigned long r = zsl_get_rank(zs->zsl, node->score, node->ele);
    return rev ? (long)(n - r) : (long)(r - 1);
}

/* ------------------------------------------------------------ range deletion */

/* Told by a skiplist range deletion about each member before it is freed. */
static void zs_table_remove(void *arg, sds ele) { ht_pop(arg, ele, NULL); }

/* Listpack: delete the pairs for which pred() is true. */
typedef bool lp_pair_pred(unsigned char *ep, unsigned char *sp, unsigned long rank, const void *arg);

static unsigned long lp_delete_where(robj *o, lp_pair_pred *pred, const void *arg) {
    unsigned long removed = 0, rank = 0;
    unsigned char *ep = lp_first(o->ptr);
    while (ep) {
        unsigned char *sp = lp_next(o->ptr, ep);
        if (pred(ep, sp, rank++, arg)) {
            o->ptr = lp_delete_range_at(o->ptr, &ep, 2);
            removed++;
        } else {
            ep = lp_next(o->ptr, sp);
        }
    }
    return removed;
}

static bool pred_score(unsigned char *ep, unsigned char *sp, unsigned long rank, const void *arg) {
    (void)ep, (void)rank;
    double v = lp_score(sp);
    return zsl_value_gte_min(v, arg) && zsl_value_lte_max(v, arg);
}

/* Listpack lex deletion as Redis does it: from the first member in range
 * (zset_cursor_in_lex, with its first/last check) for as long as members
 * stay <= max.  With differing scores the members are not in lex order,
 * and the run stops where Redis's stops. */
static unsigned long lp_delete_lex_run(robj *o, const zsl_lex_range_t *r) {
    zset_cursor_t cur;
    zset_cursor_in_lex(&cur, o, r, false);
    unsigned char *ep = cur.ep;
    unsigned long removed = 0;
    while (ep) {
        char buf[LP_INTBUF_SIZE];
        size_t len;
        const unsigned char *m = lp_get_str(ep, &len, buf);
        if (!zsl_lex_lte_max(m, len, r)) break;
        o->ptr = lp_delete_range_at(o->ptr, &ep, 2);
        removed++;
    }
    return removed;
}


unsigned long zset_delete_range_by_rank(robj *o, unsigned long start, unsigned long end) {
    if (o->encoding == OBJ_ENCODING_LISTPACK) {
        unsigned char *ep = lp_seek(o->ptr, (long)(2 * start));
        if (ep) o->ptr = lp_delete_range_at(o->ptr, &ep, 2 * (end - start + 1));
        return end - start + 1;
    }
    zset_t *zs = o->ptr;
    return zsl_delete_range_by_rank(zs->zsl, start + 1, end + 1, zs_table_remove, zs->members);
}

unsigned long zset_delete_range_by_score(robj *o, const zsl_range_t *r) {
    if (o->encoding == OBJ_ENCODING_LISTPACK) return lp_delete_where(o, pred_score, r);
    zset_t *zs = o->ptr;
    return zsl_delete_range_by_score(zs->zsl, r, zs_table_remove, zs->members);
}

unsigned long zset_delete_range_by_lex(robj *o, const zsl_lex_range_t *r) {
    if (o->encoding == OBJ_ENCODING_LISTPACK) return lp_delete_lex_run(o, r);
    zset_t *zs = o->ptr;
    return zsl_delete_range_by_lex(zs->zsl, r, zs_table_remove, zs->members);
}

/* ------------------------------------------------------------ cursors */

static void cursor_init(zset_cursor_t *cur, robj *o, bool rev) {
    cur->o = o;
    cur->rev = rev;
    cur->ep = NULL;
    cur->node = NULL;
}

void zset_cursor_at_rank(zset_cursor_t *cur, robj *o, unsigned long rank, bool rev) {
    cursor_init(cur, o, rev);
    unsigned long n = zset_length(o);
    if (rank >= n) return;
    unsigned long fwd = rev ? n - 1 - rank : rank;
    if (o->encoding == OBJ_ENCODING_LISTPACK) cur->ep = lp_seek(o->ptr, (long)(2 * fwd));
    else cur->node = zsl_get_by_rank(((zset_t *)o->ptr)->zsl, fwd + 1);
}

void zset_cursor_next(zset_cursor_t *cur) {
    if (cur->ep) {
        unsigned char *lp = cur->o->ptr;
        if (cur->rev) {
            unsigned char *p = lp_prev(lp, cur->ep);
            cur->ep = p ? lp_prev(lp, p) : NULL;
        } else {
            cur->ep = lp_next(lp, lp_next(lp, cur->ep));
        }
    } else if (cur->node) {
        cur->node = cur->rev ? cur->node->backward : cur->node->level[0].forward;
    }
}

const char *zset_cursor_member(zset_cursor_t *cur, size_t *len) {
    if (cur->ep) return (const char *)lp_get_str(cur->ep, len, cur->buf);
    *len = sds_len(cur->node->ele);
    return cur->node->ele;
}

double zset_cursor_score(const zset_cursor_t *cur) {
    if (cur->ep) return lp_score(lp_next(cur->o->ptr, cur->ep));
    return cur->node->score;
}

/* Listpack: from the first (or last) pair, walk until in_range says yes
 * or the walk has passed the range. */
void zset_cursor_in_range(zset_cursor_t *cur, robj *o, const zsl_range_t *r, bool rev) {
    cursor_init(cur, o, rev);
    if (o->encoding == OBJ_ENCODING_SKIPLIST) {
        zset_t *zs = o->ptr;
        cur->node = rev ? zsl_last_in_range(zs->zsl, r) : zsl_first_in_range(zs->zsl, r);
        return;
    }
    zset_cursor_at_rank(cur, o, 0, rev);
    for (; zset_cursor_valid(cur); zset_cursor_next(cur)) {
        double v = zset_cursor_score(cur);
        if (!rev && zsl_value_gte_min(v, r)) {
            if (!zsl_value_lte_max(v, r)) cur->ep = NULL;
            return;
        }
        if (rev && zsl_value_lte_max(v, r)) {
            if (!zsl_value_gte_min(v, r)) cur->ep = NULL;
            return;
        }
    }
}

/* Listpack: the last member is >= min and the first <= max. */
static bool lex_ends_overlap(robj *o, unsigned long n, const zsl_lex_range_t *r) {
    zset_cursor_t c;
    size_t len;
    zset_cursor_at_rank(&c, o, n - 1, false);
    const char *m = zset_cursor_member(&c, &len);
    if (!zsl_lex_gte_min(m, len, r)) return false;
    zset_cursor_at_rank(&c, o, 0, false);
    m = zset_cursor_member(&c, &len);
    return zsl_lex_lte_max(m, len, r);
}

void zset_cursor_in_lex(zset_cursor_t *cur, robj *o, const zsl_lex_range_t *r, bool rev) {
    cursor_init(cur, o, rev);
    if (o->encoding == OBJ_ENCODING_SKIPLIST) {
        zset_t *zs = o->ptr;
        cur->node = rev ? zsl_last_in_lex_range(zs->zsl, r) : zsl_first_in_lex_range(zs->zsl, r);
        return;
    }
    /* As Redis does (and as the skiplist path does): an empty range, or
     * one the first and last members show to be outside, finds nothing,
     * before any scan.  With differing scores the members are not in lex
     * order, so this check decides replies Redis gives. */
    unsigned long n = zset_length(o);
    if (zsl_lex_range_empty(r) || n == 0 || !lex_ends_overlap(o, n, r)) {
        cur->ep = NULL;
        return;
    }
    zset_cursor_at_rank(cur, o, 0, rev);
    for (; zset_cursor_valid(cur); zset_cursor_next(cur)) {
        size_t len;
        const char *m = zset_cursor_member(cur, &len);
        if (!rev && zsl_lex_gte_min(m, len, r)) {
            if (!zsl_lex_lte_max(m, len, r)) cur->ep = NULL;
            return;
        }
        if (rev && zsl_lex_lte_max(m, len, r)) {
            if (!zsl_lex_gte_min(m, len, r)) cur->ep = NULL;
            return;
        }
    }
}

/* ------------------------------------------------------------ object ops */

void zset_free_value(robj *o) {
    if (o->encoding == OBJ_ENCODING_LISTPACK) {
        lp_free(o->ptr);
        return;
    }
    zset_t *zs = o->ptr;
    ht_release(zs->members);
    zsl_free(zs->zsl);
    zfree(zs);
}

size_t zset_mem_usage(robj *o, size_t samples) {
    if (o->encoding == OBJ_ENCODING_LISTPACK) return lp_mem_usage(o->ptr);
    zset_t *zs = o->ptr;
    return zmalloc_size(zs) + ht_mem_usage(zs->members) + zsl_mem_usage(zs->zsl, samples);
}
