/* zskiplist.c: skiplist ordered by (score, member) with spans; the
 * structure and its invariants are described in zskiplist.h.
 *
 * Every search walks from the top level of the header rightwards while the
 * next node is still "before" the target, then drops a level.  Summing the
 * spans of the links taken gives the rank of where the walk stopped, which is
 * how rank queries and rank-based lookups stay O(log n).  Node heights are
 * random with P(height > k) = 4^-k, so the expected links per node is 4/3. */
#include "zskiplist.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "zmalloc.h"

/* ------------------------------- nodes ----------------------------------- */

static zsl_node_t *node_new(int levels, double score, sds ele) {
    zsl_node_t *n = zmalloc(sizeof(*n) + (size_t)levels * sizeof(struct zsl_level));
    n->score = score;
    n->ele = ele;
    n->backward = NULL;
    return n;
}

void zsl_free_node(zsl_node_t *node) {
    sds_free(node->ele);
    zfree(node);
}

static int random_level(void) {
    int lvl = 1;
    while (lvl < ZSL_MAX_LEVEL && (random() & 0xFFFF) < 0x4000) lvl++;
    return lvl;
}

/* Order of (s1, e1) against (s2, e2): score first, then member bytes. */
static int cmp_entry(double s1, const sds e1, double s2, const sds e2) {
    if (s1 < s2) return -1;
    if (s1 > s2) return 1;
    return sds_cmp(e1, e2);
}

zskiplist *zsl_new(void) {
    zskiplist *zsl = zmalloc(sizeof(*zsl));
    zsl->header = node_new(ZSL_MAX_LEVEL, 0, NULL);
    for (int i = 0; i < ZSL_MAX_LEVEL; i++) {
        zsl->header->level[i].forward = NULL;
        zsl->header->level[i].span = 0;
    }
    zsl->tail = NULL;
    zsl->length = 0;
    zsl->level = 1;
    return zsl;
}

void zsl_free(zskiplist *zsl) {
    if (!zsl) return;
    zsl_node_t *n = zsl->header->level[0].forward;
    while (n) {
        zsl_node_t *next = n->level[0].forward;
        zsl_free_node(n);
        n = next;
    }
    zfree(zsl->header);
    zfree(zsl);
}

/* ---------------------------- insert / delete ---------------------------- */

/* Find, per level, the last node before (score, ele): update[i], and the
 * rank of that node: rank[i].  Returns the level-0 successor of update[0]. */
static zsl_node_t *find_update(const zskiplist *zsl, double score, const sds ele,
                               zsl_node_t **update, unsigned long *rank) {
    zsl_node_t *x = zsl->header;
    for (int i = zsl->level - 1; i >= 0; i--) {
        if (rank) rank[i] = i == zsl->level - 1 ? 0 : rank[i + 1];
        while (x->level[i].forward &&
               cmp_entry(x->level[i].forward->score, x->level[i].forward->ele, score, ele) < 0) {
            if (rank) rank[i] += x->level[i].span;
            x = x->level[i].forward;
        }
        update[i] = x;
    }
    return x->level[0].forward;
}

zsl_node_t *zsl_insert(zskiplist *zsl, double score, sds ele) {
    zsl_node_t *update[ZSL_MAX_LEVEL];
    unsigned long rank[ZSL_MAX_LEVEL];
    find_update(zsl, score, ele, update, rank);
    int lvl = random_level();
    if (lvl > zsl->level) {
        /* New levels start at the header, whose NULL links span everything. */
        for (int i = zsl->level; i < lvl; i++) {
            rank[i] = 0;
            update[i] = zsl->header;
            update[i]->level[i].span = zsl->length;
        }
        zsl->level = lvl;
    }
    zsl_node_t *x = node_new(lvl, score, ele);
    for (int i = 0; i < lvl; i++) {
        x->level[i].forward = update[i]->level[i].forward;
        update[i]->level[i].forward = x;
        /* update[i] is at rank[i], x lands at rank[0] + 1 */
        x->level[i].span = update[i]->level[i].span - (rank[0] - rank[i]);
        update[i]->level[i].span = (rank[0] - rank[i]) + 1;
    }
    for (int i = lvl; i < zsl->level; i++) update[i]->level[i].span++;
    x->backward = update[0] == zsl->header ? NULL : update[0];
    if (x->level[0].forward) x->level[0].forward->backward = x;
    else zsl->tail = x;
    zsl->length++;
    return x;
}

/* Unlink x given the per-level predecessors; does not free it. */
static void unlink_node(zskiplist *zsl, zsl_node_t *x, zsl_node_t **update) {
    for (int i = 0; i < zsl->level; i++) {
        if (update[i]->level[i].forward == x) {
            update[i]->level[i].span += x->level[i].span - 1;
            update[i]->level[i].forward = x->level[i].forward;
        } else {
            update[i]->level[i].span--;
        }
    }
    if (x->level[0].forward) x->level[0].forward->backward = x->backward;
    else zsl->tail = x->backward;
    while (zsl->level > 1 && zsl->header->level[zsl->level - 1].forward == NULL) {
        zsl->header->level[zsl->level - 1].span = 0;
        zsl->level--;
    }
    zsl->length--;
}

/* ---------------------------- active defrag ------------------------------ */

zsl_node_t *zsl_defrag_node(zskiplist *zsl, zsl_node_t *x, zsl_move_fn move, void *arg) {
    /* update[i] is the last node before x at level i; its link at level i
     * points at x exactly for the levels x has. */
    zsl_node_t *update[ZSL_MAX_LEVEL];
    zsl_node_t *found = find_update(zsl, x->score, x->ele, update, NULL);
    if (found != x) return NULL; /* not in this skiplist: leave it */
    size_t hdr = sds_hdr_len(x->ele);
    char *block = move(arg, x->ele - hdr);
    if (block) x->ele = block + hdr;
    zsl_node_t *n = move(arg, x);
    if (!n) return NULL;
    for (int i = 0; i < zsl->level && update[i]->level[i].forward == x; i++) update[i]->level[i].forward = n;
    if (n->level[0].forward) n->level[0].forward->backward = n;
    else zsl->tail = n;
    return n;
}

void zsl_defrag_header(zskiplist *zsl, zsl_move_fn move, void *arg) {
    /* The first node's backward is NULL, not the header: only zsl->header
     * points at it. */
    zsl_node_t *n = move(arg, zsl->header);
    if (n) zsl->header = n;
}

bool zsl_delete(zskiplist *zsl, double score, const sds ele, zsl_node_t **node) {
    zsl_node_t *update[ZSL_MAX_LEVEL];
    zsl_node_t *x = find_update(zsl, score, ele, update, NULL);
    if (!x || x->score != score || sds_cmp(x->ele, ele) != 0) return false;
    unlink_node(zsl, x, update);
    if (node) *node = x;
    else zsl_free_node(x);
    return true;
}

zsl_node_t *zsl_update_score(zskiplist *zsl, double curscore, const sds ele, double newscore) {
    zsl_node_t *update[ZSL_MAX_LEVEL];
    zsl_node_t *x = find_update(zsl, curscore, ele, update, NULL);
    if (!x || x->score != curscore || sds_cmp(x->ele, ele) != 0) return NULL;
    /* Strictly between its neighbours' scores: the order cannot change. */
    if ((!x->backward || x->backward->score < newscore) &&
        (!x->level[0].forward || x->level[0].forward->score > newscore)) {
        x->score = newscore;
        return x;
    }
    unlink_node(zsl, x, update);
    sds member = x->ele;
    zfree(x);
    return zsl_insert(zsl, newscore, member);
}

/* ---------------------------------- ranks -------------------------------- */

unsigned long zsl_get_rank(const zskiplist *zsl, double score, const sds ele) {
    const zsl_node_t *x = zsl->header;
    unsigned long rank = 0;
    for (int i = zsl->level - 1; i >= 0; i--) {
        while (x->level[i].forward &&
               cmp_entry(x->level[i].forward->score, x->level[i].forward->ele, score, ele) <= 0) {
            rank += x->level[i].span;
            x = x->level[i].forward;
        }
        if (x != zsl->header && x->score == score && sds_cmp(x->ele, ele) == 0) return rank;
    }
    return 0;
}

zsl_node_t *zsl_get_by_rank(const zskiplist *zsl, unsigned long rank) {
    zsl_node_t *x = zsl->header;
    unsigned long traversed = 0;
    if (rank == 0 || rank > zsl->length) return NULL;
    for (int i = zsl->level - 1; i >= 0; i--) {
        while (x->level[i].forward && traversed + x->level[i].span <= rank) {
            traversed += x->level[i].span;
            x = x->level[i].forward;
        }
        if (traversed == rank) return x;
    }
    return NULL;
}

unsigned long zsl_length(const zskiplist *zsl) {
    return zsl->length;
}

/* ------------------------------ score ranges ----------------------------- */

static bool parse_bound(const char *s, double *v, bool *ex) {
    char *end;
    *ex = false;
    if (s[0] == '(') {
        *ex = true;
        s++;
    }
    if (s[0] == '\0') return false;
    *v = strtod(s, &end);
    return *end == '\0' && !isnan(*v);
}

bool zsl_parse_range(const char *min, const char *max, zsl_range_t *r) {
    return parse_bound(min, &r->min, &r->minex) && parse_bound(max, &r->max, &r->maxex);
}

bool zsl_value_gte_min(double v, const zsl_range_t *r) {
    return r->minex ? v > r->min : v >= r->min;
}

bool zsl_value_lte_max(double v, const zsl_range_t *r) {
    return r->maxex ? v < r->max : v <= r->max;
}

static bool range_empty(const zsl_range_t *r) {
    return r->min > r->max || (r->min == r->max && (r->minex || r->maxex));
}

bool zsl_is_in_range(const zskiplist *zsl, const zsl_range_t *r) {
    if (range_empty(r) || !zsl->tail) return false;
    return zsl_value_gte_min(zsl->tail->score, r) &&
           zsl_value_lte_max(zsl->header->level[0].forward->score, r);
}

zsl_node_t *zsl_first_in_range(const zskiplist *zsl, const zsl_range_t *r) {
    if (!zsl_is_in_range(zsl, r)) return NULL;
    zsl_node_t *x = zsl->header;
    for (int i = zsl->level - 1; i >= 0; i--)
        while (x->level[i].forward && !zsl_value_gte_min(x->level[i].forward->score, r))
            x = x->level[i].forward;
    x = x->level[0].forward; /* exists: the range is not past the tail */
    return zsl_value_lte_max(x->score, r) ? x : NULL;
}

zsl_node_t *zsl_last_in_range(const zskiplist *zsl, const zsl_range_t *r) {
    if (!zsl_is_in_range(zsl, r)) return NULL;
    zsl_node_t *x = zsl->header;
    for (int i = zsl->level - 1; i >= 0; i--)
        while (x->level[i].forward && zsl_value_lte_max(x->level[i].forward->score, r))
            x = x->level[i].forward;
    return x != zsl->header && zsl_value_gte_min(x->score, r) ? x : NULL;
}

/* ------------------------------- lex ranges ------------------------------ */

static bool parse_lex_bound(const char *s, size_t len, zsl_lex_bound_t *b) {
    b->val = NULL;
    b->exclusive = false;
    if (len == 1 && s[0] == '-') {
        b->kind = ZSL_LEX_NEG_INF;
        return true;
    }
    if (len == 1 && s[0] == '+') {
        b->kind = ZSL_LEX_POS_INF;
        return true;
    }
    if (len == 0 || (s[0] != '(' && s[0] != '[')) return false;
    b->kind = ZSL_LEX_VALUE;
    b->exclusive = s[0] == '(';
    b->val = sds_newlen(s + 1, len - 1);
    return true;
}

bool zsl_parse_lex_range(const char *min, size_t minlen, const char *max,
                         size_t maxlen, zsl_lex_range_t *r) {
    r->max.val = NULL;
    if (!parse_lex_bound(min, minlen, &r->min) || !parse_lex_bound(max, maxlen, &r->max)) {
        zsl_free_lex_range(r);
        return false;
    }
    return true;
}

void zsl_free_lex_range(zsl_lex_range_t *r) {
    sds_free(r->min.val);
    sds_free(r->max.val);
    r->min.val = r->max.val = NULL;
}

/* Order of s against a bound: "-" is below everything, "+" above. */
static int lex_cmp(const void *s, size_t len, const zsl_lex_bound_t *b) {
    if (b->kind == ZSL_LEX_NEG_INF) return 1;
    if (b->kind == ZSL_LEX_POS_INF) return -1;
    size_t blen = sds_len(b->val);
    int c = memcmp(s, b->val, len < blen ? len : blen);
    if (c) return c;
    return len < blen ? -1 : len > blen ? 1
                                        : 0;
}

bool zsl_lex_gte_min(const void *s, size_t len, const zsl_lex_range_t *r) {
    int c = lex_cmp(s, len, &r->min);
    return r->min.exclusive ? c > 0 : c >= 0;
}

bool zsl_lex_lte_max(const void *s, size_t len, const zsl_lex_range_t *r) {
    int c = lex_cmp(s, len, &r->max);
    return r->max.exclusive ? c < 0 : c <= 0;
}

bool zsl_lex_range_empty(const zsl_lex_range_t *r) {
    if (r->min.kind == ZSL_LEX_POS_INF || r->max.kind == ZSL_LEX_NEG_INF) return true;
    if (r->min.kind != ZSL_LEX_VALUE || r->max.kind != ZSL_LEX_VALUE) return false;
    int c = sds_cmp(r->min.val, r->max.val);
    return c > 0 || (c == 0 && (r->min.exclusive || r->max.exclusive));
}

static bool ele_gte_min(const sds e, const zsl_lex_range_t *r) {
    return zsl_lex_gte_min(e, sds_len(e), r);
}

static bool ele_lte_max(const sds e, const zsl_lex_range_t *r) {
    return zsl_lex_lte_max(e, sds_len(e), r);
}

bool zsl_is_in_lex_range(const zskiplist *zsl, const zsl_lex_range_t *r) {
    if (zsl_lex_range_empty(r) || !zsl->tail) return false;
    return ele_gte_min(zsl->tail->ele, r) && ele_lte_max(zsl->header->level[0].forward->ele, r);
}

zsl_node_t *zsl_first_in_lex_range(const zskiplist *zsl, const zsl_lex_range_t *r) {
    if (!zsl_is_in_lex_range(zsl, r)) return NULL;
    zsl_node_t *x = zsl->header;
    for (int i = zsl->level - 1; i >= 0; i--)
        while (x->level[i].forward && !ele_gte_min(x->level[i].forward->ele, r))
            x = x->level[i].forward;
    x = x->level[0].forward;
    return ele_lte_max(x->ele, r) ? x : NULL;
}

zsl_node_t *zsl_last_in_lex_range(const zskiplist *zsl, const zsl_lex_range_t *r) {
    if (!zsl_is_in_lex_range(zsl, r)) return NULL;
    zsl_node_t *x = zsl->header;
    for (int i = zsl->level - 1; i >= 0; i--)
        while (x->level[i].forward && ele_lte_max(x->level[i].forward->ele, r))
            x = x->level[i].forward;
    return x != zsl->header && ele_gte_min(x->ele, r) ? x : NULL;
}

/* ---------------------------- range deletions ---------------------------- */

/* Remove nodes from x onwards while keep_going(x) holds; update[] holds the
 * predecessors of x, which stay valid as the run is removed. */
typedef bool (*run_pred)(const zsl_node_t *x, const void *arg, unsigned long rank);

static unsigned long delete_run(zskiplist *zsl, zsl_node_t *x, zsl_node_t **update,
                                unsigned long rank, run_pred keep_going, const void *parg,
                                zsl_remove_cb cb, void *arg) {
    unsigned long removed = 0;
    while (x && keep_going(x, parg, rank + removed + 1)) {
        zsl_node_t *next = x->level[0].forward;
        unlink_node(zsl, x, update);
        if (cb) cb(arg, x->ele);
        zsl_free_node(x);
        removed++;
        x = next;
    }
    return removed;
}

static bool score_pred(const zsl_node_t *x, const void *r, unsigned long rank) {
    (void)rank;
    return zsl_value_lte_max(x->score, r);
}

static bool lex_pred(const zsl_node_t *x, const void *r, unsigned long rank) {
    (void)rank;
    return ele_lte_max(x->ele, r);
}

static bool rank_pred(const zsl_node_t *x, const void *end, unsigned long rank) {
    (void)x;
    return rank <= *(const unsigned long *)end;
}

unsigned long zsl_delete_range_by_score(zskiplist *zsl, const zsl_range_t *r,
                                        zsl_remove_cb cb, void *arg) {
    zsl_node_t *update[ZSL_MAX_LEVEL], *x = zsl->header;
    if (range_empty(r)) return 0;
    for (int i = zsl->level - 1; i >= 0; i--) {
        while (x->level[i].forward && !zsl_value_gte_min(x->level[i].forward->score, r))
            x = x->level[i].forward;
        update[i] = x;
    }
    return delete_run(zsl, x->level[0].forward, update, 0, score_pred, r, cb, arg);
}

unsigned long zsl_delete_range_by_lex(zskiplist *zsl, const zsl_lex_range_t *r,
                                      zsl_remove_cb cb, void *arg) {
    zsl_node_t *update[ZSL_MAX_LEVEL], *x = zsl->header;
    if (zsl_lex_range_empty(r)) return 0;
    for (int i = zsl->level - 1; i >= 0; i--) {
        while (x->level[i].forward && !ele_gte_min(x->level[i].forward->ele, r))
            x = x->level[i].forward;
        update[i] = x;
    }
    return delete_run(zsl, x->level[0].forward, update, 0, lex_pred, r, cb, arg);
}

unsigned long zsl_delete_range_by_rank(zskiplist *zsl, unsigned long start,
                                       unsigned long end, zsl_remove_cb cb, void *arg) {
    zsl_node_t *update[ZSL_MAX_LEVEL], *x = zsl->header;
    unsigned long traversed = 0;
    if (start == 0 || start > end) return 0;
    for (int i = zsl->level - 1; i >= 0; i--) {
        while (x->level[i].forward && traversed + x->level[i].span < start) {
            traversed += x->level[i].span;
            x = x->level[i].forward;
        }
        update[i] = x;
    }
    /* x is at rank start-1; the run begins at rank start */
    return delete_run(zsl, x->level[0].forward, update, start - 1, rank_pred, &end, cb, arg);
}

/* ------------------------------ accounting ------------------------------- */

static size_t node_usage(const zsl_node_t *n) {
    return zmalloc_size(n) + sds_alloc_size(n->ele);
}

size_t zsl_mem_usage(const zskiplist *zsl, size_t samples) {
    size_t total = zmalloc_size(zsl) + zmalloc_size(zsl->header), sum = 0, seen = 0;
    for (const zsl_node_t *n = zsl->header->level[0].forward; n; n = n->level[0].forward) {
        if (samples && seen == samples) break;
        sum += node_usage(n);
        seen++;
    }
    if (seen == 0) return total;
    if (seen == zsl->length) return total + sum;
    return total + (size_t)((double)sum / (double)seen * (double)zsl->length);
}

/* --------------------------------- verify -------------------------------- */

bool zsl_verify(const zskiplist *zsl) {
    const zsl_node_t *prev = NULL;
    unsigned long n = 0;
    /* Level 0: order, backward links, tail, length. */
    for (const zsl_node_t *x = zsl->header->level[0].forward; x; x = x->level[0].forward) {
        if (x->backward != prev) return false;
        if (prev && cmp_entry(prev->score, prev->ele, x->score, x->ele) >= 0) return false;
        if (isnan(x->score)) return false;
        prev = x;
        n++;
    }
    if (n != zsl->length || zsl->tail != prev) return false;
    if (zsl->level < 1 || zsl->level > ZSL_MAX_LEVEL) return false;
    /* Every level: spans add up to ranks; levels above `level` are empty. */
    for (int i = 0; i < ZSL_MAX_LEVEL; i++) {
        const zsl_node_t *x = zsl->header;
        unsigned long rank = 0;
        if (i >= zsl->level) {
            if (x->level[i].forward) return false;
            continue;
        }
        while (x) {
            const zsl_node_t *f = x->level[i].forward;
            unsigned long want = 0;
            if (f) {
                /* count level-0 steps from x to f */
                const zsl_node_t *y = x;
                while (y && y != f) {
                    y = y->level[0].forward;
                    want++;
                }
                if (!y) return false;
            } else {
                want = zsl->length - rank;
            }
            if (x->level[i].span != want) return false;
            rank += want;
            x = f;
        }
        if (i > 0 && i == zsl->level - 1 && zsl->level > 1 && !zsl->header->level[i].forward)
            return false; /* top level must be in use */
    }
    return true;
}
