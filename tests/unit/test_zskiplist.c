/* test_zskiplist.c: unit tests for src/zskiplist.c.
 *
 * Range parsing (inclusive/exclusive, +-inf, lex "-"/"+"/"["/"("), ordering
 * of equal scores by member bytes, and random inserts, deletes, score
 * updates and range deletions checked against a sorted array model, with
 * zsl_verify checking spans and links after every step. */
#include <math.h>
#include <stdlib.h>

#include "test_help.h"
#include "zmalloc.h"
#include "zskiplist.h"

/* ------------------------------- the model -------------------------------- */

typedef struct {
    double score;
    char name[16];
    size_t len;
} mentry_t;

enum { MCAP = 4096 };
static mentry_t model[MCAP];
static size_t mlen;

static int mcmp(double s1, const char *e1, size_t l1, double s2, const char *e2, size_t l2) {
    if (s1 != s2) return s1 < s2 ? -1 : 1;
    int c = memcmp(e1, e2, l1 < l2 ? l1 : l2);
    if (c) return c;
    return l1 < l2 ? -1 : l1 > l2 ? 1
                                  : 0;
}

static long mfind(const char *name, size_t len) {
    for (size_t i = 0; i < mlen; i++)
        if (model[i].len == len && memcmp(model[i].name, name, len) == 0) return (long)i;
    return -1;
}

static void madd(double score, const char *name, size_t len) {
    size_t at = 0;
    while (at < mlen && mcmp(model[at].score, model[at].name, model[at].len, score, name, len) < 0) at++;
    memmove(model + at + 1, model + at, (mlen - at) * sizeof(*model));
    model[at].score = score;
    memcpy(model[at].name, name, len);
    model[at].len = len;
    mlen++;
}

static void mdel(size_t at) {
    memmove(model + at, model + at + 1, (mlen - at - 1) * sizeof(*model));
    mlen--;
}

static bool node_is(const zsl_node_t *n, size_t i) {
    return n && n->score == model[i].score && sds_len(n->ele) == model[i].len &&
           memcmp(n->ele, model[i].name, model[i].len) == 0;
}

static int check_model(const zskiplist *zsl) {
    CHECK(zsl_verify(zsl));
    CHECK_EQ_INT(zsl_length(zsl), mlen);
    const zsl_node_t *n = zsl->header->level[0].forward;
    for (size_t i = 0; i < mlen; i++, n = n->level[0].forward) CHECK(node_is(n, i));
    CHECK(n == NULL);
    for (int k = 0; k < 5 && mlen; k++) {
        size_t i = (size_t)random() % mlen;
        sds e = sds_newlen(model[i].name, model[i].len);
        CHECK_EQ_INT(zsl_get_rank(zsl, model[i].score, e), i + 1);
        CHECK_EQ_INT(zsl_get_rank(zsl, model[i].score + 0.5, e), 0);
        sds_free(e);
        CHECK(node_is(zsl_get_by_rank(zsl, i + 1), i));
    }
    CHECK(zsl_get_by_rank(zsl, 0) == NULL);
    CHECK(zsl_get_by_rank(zsl, mlen + 1) == NULL);
    return 0;
}

/* Model answers for a score range: first and last index inside, or -1. */
static void mrange(const zsl_range_t *r, long *first, long *last) {
    *first = *last = -1;
    for (size_t i = 0; i < mlen; i++)
        if (zsl_value_gte_min(model[i].score, r) && zsl_value_lte_max(model[i].score, r)) {
            if (*first < 0) *first = (long)i;
            *last = (long)i;
        }
}

static void mlexrange(const zsl_lex_range_t *r, long *first, long *last) {
    *first = *last = -1;
    for (size_t i = 0; i < mlen; i++)
        if (zsl_lex_gte_min(model[i].name, model[i].len, r) &&
            zsl_lex_lte_max(model[i].name, model[i].len, r)) {
            if (*first < 0) *first = (long)i;
            *last = (long)i;
        }
}

static int count_cb_calls;
static void count_cb(void *arg, sds ele) {
    (void)ele;
    (*(int *)arg)++;
    count_cb_calls++;
}

/* --------------------------------- tests ---------------------------------- */

static int test_parse_ranges(void) {
    zsl_range_t r;
    CHECK(zsl_parse_range("1", "(2.5", &r));
    CHECK(r.min == 1 && !r.minex && r.max == 2.5 && r.maxex);
    CHECK(zsl_parse_range("-inf", "+inf", &r));
    CHECK(isinf(r.min) && r.min < 0 && isinf(r.max) && r.max > 0);
    CHECK(zsl_parse_range("(-inf", "inf", &r) && r.minex);
    CHECK(!zsl_parse_range("abc", "1", &r));
    CHECK(!zsl_parse_range("1", "(", &r));
    CHECK(!zsl_parse_range("", "1", &r));
    CHECK(!zsl_parse_range("nan", "1", &r));
    CHECK(!zsl_parse_range("1x", "2", &r));
    CHECK(zsl_value_gte_min(1, &(zsl_range_t){1, 2, false, false}));
    CHECK(!zsl_value_gte_min(1, &(zsl_range_t){1, 2, true, false}));
    CHECK(!zsl_value_lte_max(2, &(zsl_range_t){1, 2, false, true}));

    zsl_lex_range_t lr;
    CHECK(zsl_parse_lex_range("-", 1, "+", 1, &lr));
    CHECK(lr.min.kind == ZSL_LEX_NEG_INF && lr.max.kind == ZSL_LEX_POS_INF);
    CHECK(zsl_lex_gte_min("", 0, &lr) && zsl_lex_lte_max("\xff\xff", 2, &lr));
    CHECK(!zsl_lex_range_empty(&lr));
    zsl_free_lex_range(&lr);
    CHECK(zsl_parse_lex_range("[a", 2, "(c", 2, &lr));
    CHECK(zsl_lex_gte_min("a", 1, &lr) && !zsl_lex_gte_min("", 0, &lr));
    CHECK(zsl_lex_lte_max("bzzz", 4, &lr) && !zsl_lex_lte_max("c", 1, &lr));
    CHECK(zsl_lex_lte_max("b", 1, &lr) && !zsl_lex_lte_max("ca", 2, &lr));
    zsl_free_lex_range(&lr);
    CHECK(zsl_parse_lex_range("(a", 2, "[a", 2, &lr) && zsl_lex_range_empty(&lr));
    zsl_free_lex_range(&lr);
    CHECK(zsl_parse_lex_range("+", 1, "[z", 2, &lr) && zsl_lex_range_empty(&lr));
    zsl_free_lex_range(&lr);
    CHECK(zsl_parse_lex_range("[b", 2, "-", 1, &lr) && zsl_lex_range_empty(&lr));
    zsl_free_lex_range(&lr);
    CHECK(zsl_parse_lex_range("[", 1, "[", 1, &lr) && !zsl_lex_range_empty(&lr));
    zsl_free_lex_range(&lr);
    CHECK(!zsl_parse_lex_range("a", 1, "+", 1, &lr));
    CHECK(!zsl_parse_lex_range("[a", 2, "", 0, &lr));
    CHECK(!zsl_parse_lex_range("-", 1, "++", 2, &lr));
    return 0;
}

static int test_basic_order(void) {
    zskiplist *zsl = zsl_new();
    CHECK(zsl_verify(zsl));
    zsl_insert(zsl, 2, sds_new("b"));
    zsl_insert(zsl, 1, sds_new("z"));
    zsl_insert(zsl, 2, sds_new("a"));
    zsl_insert(zsl, 2, sds_new("ab"));
    zsl_insert(zsl, -INFINITY, sds_new("m"));
    zsl_insert(zsl, INFINITY, sds_new("n"));
    CHECK(zsl_verify(zsl));
    const char *want[] = {"m", "z", "a", "ab", "b", "n"};
    zsl_node_t *n = zsl->header->level[0].forward;
    for (int i = 0; i < 6; i++, n = n->level[0].forward) CHECK(strcmp(n->ele, want[i]) == 0);
    CHECK(strcmp(zsl->tail->ele, "n") == 0);
    sds a = sds_new("a");
    CHECK_EQ_INT(zsl_get_rank(zsl, 2, a), 3);
    CHECK(!zsl_delete(zsl, 3, a, NULL)); /* wrong score */
    zsl_node_t *out;
    CHECK(zsl_delete(zsl, 2, a, &out));
    CHECK(strcmp(out->ele, "a") == 0);
    zsl_free_node(out);
    CHECK_EQ_INT(zsl_get_rank(zsl, 2, a), 0);
    sds_free(a);
    sds b = sds_new("b");
    n = zsl_update_score(zsl, 2, b, 2.5); /* in place */
    CHECK(n && n->score == 2.5 && zsl_verify(zsl));
    n = zsl_update_score(zsl, 2.5, b, -5); /* moves */
    CHECK(n && zsl_get_rank(zsl, -5, b) == 2 && zsl_verify(zsl));
    CHECK(zsl_update_score(zsl, 99, b, 1) == NULL);
    sds_free(b);
    zsl_range_t r = {1, 2, true, false};
    CHECK(strcmp(zsl_first_in_range(zsl, &r)->ele, "ab") == 0);
    CHECK(strcmp(zsl_last_in_range(zsl, &r)->ele, "ab") == 0);
    r = (zsl_range_t){3, 4, false, false};
    CHECK(zsl_first_in_range(zsl, &r) == NULL && zsl_last_in_range(zsl, &r) == NULL);
    r = (zsl_range_t){2, 1, false, false};
    CHECK(!zsl_is_in_range(zsl, &r));
    CHECK(zsl_mem_usage(zsl, 0) > zsl_length(zsl) * sizeof(zsl_node_t));
    CHECK(zsl_mem_usage(zsl, 2) > 0);
    zsl_free(zsl);
    return 0;
}

static int test_random_vs_model(void) {
    srandom(99);
    zskiplist *zsl = zsl_new();
    mlen = 0;
    char name[16];
    int removed_by_cb = 0;
    for (int round = 0; round < 8000; round++) {
        size_t len = (size_t)snprintf(name, sizeof(name), "m%ld", random() % 1500);
        double score = (double)(random() % 200) / 4 - 10;
        long at = mfind(name, len);
        sds e = sds_newlen(name, len);
        int op = (int)(random() % 20);
        if (op < 10) {
            if (at < 0 && mlen < MCAP) {
                zsl_node_t *n = zsl_insert(zsl, score, e);
                CHECK(n && n->ele == e);
                madd(score, name, len);
                e = NULL;
            }
        } else if (op < 14) {
            if (at >= 0) {
                double cur = model[at].score;
                CHECK(!zsl_delete(zsl, cur + 1000, e, NULL));
                CHECK(zsl_delete(zsl, cur, e, NULL));
                mdel((size_t)at);
            } else {
                CHECK(!zsl_delete(zsl, score, e, NULL));
            }
        } else if (op < 18) {
            if (at >= 0) {
                double cur = model[at].score;
                zsl_node_t *n = zsl_update_score(zsl, cur, e, score);
                CHECK(n && n->score == score && sds_cmp(n->ele, e) == 0);
                mdel((size_t)at);
                madd(score, name, len);
            }
        } else {
            /* range queries, and sometimes a range deletion */
            double a = (double)(random() % 240) / 4 - 15, b = (double)(random() % 240) / 4 - 15;
            if (random() % 10 == 0) a = -INFINITY;
            if (random() % 10 == 0) b = INFINITY;
            zsl_range_t r = {a < b ? a : b, a < b ? b : a, random() % 2 == 0, random() % 2 == 0};
            long f, l;
            mrange(&r, &f, &l);
            zsl_node_t *fn = zsl_first_in_range(zsl, &r), *ln = zsl_last_in_range(zsl, &r);
            CHECK(f < 0 ? fn == NULL : node_is(fn, (size_t)f));
            CHECK(l < 0 ? ln == NULL : node_is(ln, (size_t)l));
            CHECK(zsl_is_in_range(zsl, &r) || f < 0);
            if (random() % 4 == 0) {
                int calls = 0;
                unsigned long n = zsl_delete_range_by_score(zsl, &r, count_cb, &calls);
                CHECK_EQ_INT(n, f < 0 ? 0 : l - f + 1);
                CHECK_EQ_INT(calls, n);
                removed_by_cb += calls;
                for (long i = l; f >= 0 && i >= f; i--) mdel((size_t)i);
            } else if (random() % 4 == 0 && mlen) {
                unsigned long s = 1 + (unsigned long)random() % mlen;
                unsigned long en = s + (unsigned long)random() % 5;
                unsigned long want = (en > mlen ? mlen : en) - s + 1;
                int calls = 0;
                CHECK_EQ_INT(zsl_delete_range_by_rank(zsl, s, en, count_cb, &calls), want);
                CHECK_EQ_INT(calls, want);
                for (unsigned long i = 0; i < want; i++) mdel(s - 1);
            }
        }
        sds_free(e);
        if (round % 100 == 0 && check_model(zsl)) return 1;
    }
    CHECK(removed_by_cb > 0);
    if (check_model(zsl)) return 1;
    CHECK_EQ_INT(zsl_delete_range_by_rank(zsl, 1, mlen, NULL, NULL), mlen);
    mlen = 0;
    if (check_model(zsl)) return 1;
    zsl_free(zsl);
    return 0;
}

/* All scores equal (as ZRANGEBYLEX requires): lex queries and deletions. */
static int test_lex_vs_model(void) {
    srandom(5);
    zskiplist *zsl = zsl_new();
    mlen = 0;
    char name[16];
    for (int i = 0; i < 400; i++) {
        size_t len = (size_t)random() % 4;
        for (size_t k = 0; k < len; k++) name[k] = (char)("ab\xff"[random() % 3]);
        if (mfind(name, len) >= 0) continue;
        zsl_insert(zsl, 0, sds_newlen(name, len));
        madd(0, name, len);
    }
    CHECK(check_model(zsl) == 0);
    const char *items[] = {"-", "+", "[", "(", "[a", "(a", "[ab", "(b", "[b\xff", "(\xff", "[\xff\xff"};
    size_t nitems = sizeof(items) / sizeof(*items);
    for (int round = 0; round < 300; round++) {
        const char *mn = items[random() % nitems], *mx = items[random() % nitems];
        zsl_lex_range_t r;
        CHECK(zsl_parse_lex_range(mn, strlen(mn), mx, strlen(mx), &r));
        long f, l;
        mlexrange(&r, &f, &l);
        zsl_node_t *fn = zsl_first_in_lex_range(zsl, &r), *ln = zsl_last_in_lex_range(zsl, &r);
        CHECK(f < 0 ? fn == NULL : node_is(fn, (size_t)f));
        CHECK(l < 0 ? ln == NULL : node_is(ln, (size_t)l));
        if (round % 25 == 0) {
            int calls = 0;
            unsigned long n = zsl_delete_range_by_lex(zsl, &r, count_cb, &calls);
            CHECK_EQ_INT(n, f < 0 ? 0 : l - f + 1);
            for (long i = l; f >= 0 && i >= f; i--) mdel((size_t)i);
            CHECK(check_model(zsl) == 0);
        }
        zsl_free_lex_range(&r);
    }
    zsl_free(zsl);
    return 0;
}

/* Many nodes: levels grow, and ranks stay right across the whole length. */
static int test_large_ranks(void) {
    srandom(1);
    zskiplist *zsl = zsl_new();
    char name[16];
    for (int i = 0; i < 20000; i++) {
        int n = snprintf(name, sizeof(name), "e%05d", i);
        zsl_insert(zsl, (double)(i / 3), sds_newlen(name, (size_t)n));
    }
    CHECK(zsl_verify(zsl));
    CHECK(zsl->level > 4);
    for (int i = 0; i < 20000; i += 997) {
        int n = snprintf(name, sizeof(name), "e%05d", i);
        sds e = sds_newlen(name, (size_t)n);
        CHECK_EQ_INT(zsl_get_rank(zsl, (double)(i / 3), e), i + 1);
        CHECK(sds_cmp(zsl_get_by_rank(zsl, (unsigned long)i + 1)->ele, e) == 0);
        sds_free(e);
    }
    CHECK_EQ_INT(zsl_delete_range_by_rank(zsl, 2, 19999, NULL, NULL), 19998);
    CHECK(zsl_verify(zsl));
    CHECK_EQ_INT(zsl_length(zsl), 2);
    zsl_free(zsl);
    return 0;
}

/* A move that always copies (odd calls only when `every` is 2), as a
 * defragmenting allocator would for blocks in sparse slabs. */
static int moves, calls, every;
static void *move_always(void *arg, void *block) {
    (void)arg;
    if (calls++ % every) return NULL;
    size_t n = zmalloc_size(block);
    void *copy = zmalloc(n);
    memcpy(copy, block, n);
    zfree(block);
    moves++;
    return copy;
}

/* Every node (and the header) offered to a move: links, spans, tail and
 * backward pointers stay right (zsl_verify and the model), each moved
 * node has a new address, and a node of another skiplist is refused. */
static int test_defrag_moves(void) {
    for (every = 1; every <= 2; every++) {
        zskiplist *zsl = zsl_new();
        mlen = 0;
        char name[16];
        for (int i = 0; i < 1500; i++) {
            size_t len = (size_t)snprintf(name, sizeof(name), "m%d", (int)(random() % 100000));
            if (mfind(name, len) >= 0) continue;
            double score = (double)(random() % 50); /* ties ordered by member */
            madd(score, name, len);
            zsl_insert(zsl, score, sds_newlen(name, len));
        }
        zsl_node_t *old_header = zsl->header;
        moves = calls = 0;
        zsl_defrag_header(zsl, move_always, NULL);
        CHECK(every == 2 || zsl->header != old_header);
        /* Collect the nodes first: the walk must not follow moved links. */
        zsl_node_t **nodes = zmalloc(mlen * sizeof(*nodes));
        size_t n = 0;
        for (zsl_node_t *x = zsl->header->level[0].forward; x; x = x->level[0].forward) nodes[n++] = x;
        CHECK_EQ_INT(n, mlen);
        size_t moved = 0;
        for (size_t i = 0; i < n; i += 1 + (size_t)(random() % 2)) { /* skip some: a partial pass */
            zsl_node_t *before = nodes[i];
            zsl_node_t *after = zsl_defrag_node(zsl, before, move_always, NULL);
            if (after) {
                CHECK(after != before);
                moved++;
            }
            if (i % 97 == 0 && check_model(zsl)) return 1;
        }
        CHECK(moved > 0);
        CHECK(every == 2 || moved > n / 3);
        if (check_model(zsl)) return 1;
        zskiplist *other = zsl_new();
        zsl_node_t *stranger = zsl_insert(other, 1, sds_new("m1"));
        CHECK(zsl_defrag_node(zsl, stranger, move_always, NULL) == NULL);
        zsl_free(other);
        zfree(nodes);
        zsl_free(zsl);
    }
    return 0;
}

int main(void) {
    RUN_TEST(test_parse_ranges);
    RUN_TEST(test_basic_order);
    RUN_TEST(test_random_vs_model);
    RUN_TEST(test_lex_vs_model);
    RUN_TEST(test_large_ranks);
    RUN_TEST(test_defrag_moves);
    return TEST_REPORT("zskiplist");
}
