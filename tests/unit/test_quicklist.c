/* test_quicklist.c: unit tests for src/quicklist.c.
 *
 * The fill rule (entries per node, bytes per node, oversized values), pops,
 * index, insert at node edges and in the middle of full nodes, replace,
 * range deletion, iteration both ways with deletion, and random operations
 * for several fill settings checked against an array of strings, with
 * ql_verify (node links, counts, each listpack) after every step. */
#include <stdlib.h>

#include "listpack.h"
#include "quicklist.h"
#include "test_help.h"
#include "zmalloc.h"

/* ------------------------------- the model -------------------------------- */

typedef struct {
    char *s;
    size_t len;
} mstr_t;
static mstr_t *mv;
static size_t mn, mcap;

static void m_insert(size_t at, const char *s, size_t len) {
    if (mn == mcap) {
        mcap = mcap ? mcap * 2 : 64;
        mv = realloc(mv, mcap * sizeof(*mv));
    }
    memmove(mv + at + 1, mv + at, (mn - at) * sizeof(*mv));
    mv[at].s = malloc(len + 1);
    memcpy(mv[at].s, s, len);
    mv[at].len = len;
    mn++;
}

static void m_delete(size_t at, size_t num) {
    if (at + num > mn) num = mn - at;
    for (size_t i = at; i < at + num; i++) free(mv[i].s);
    memmove(mv + at, mv + at + num, (mn - at - num) * sizeof(*mv));
    mn -= num;
}

static void m_clear(void) {
    m_delete(0, mn);
}

static int entry_is(const ql_entry_t *e, const char *s, size_t len) {
    char buf[32];
    const unsigned char *p = e->str;
    size_t elen = e->len;
    if (!p) {
        elen = (size_t)snprintf(buf, sizeof(buf), "%lld", e->ival);
        p = (const unsigned char *)buf;
    }
    CHECK_EQ_INT(elen, len);
    CHECK_MEM(p, s, len);
    CHECK(ql_entry_equal(e, s, len));
    return 0;
}

static int check_model(quicklist *ql) {
    CHECK(ql_verify(ql));
    CHECK_EQ_INT(ql_count(ql), mn);
    ql_entry_t e;
    ql_iter_t *it = ql_iter_new(ql, QL_HEAD);
    for (size_t i = 0; i < mn; i++) {
        CHECK(ql_next(it, &e));
        if (entry_is(&e, mv[i].s, mv[i].len)) return 1;
    }
    CHECK(!ql_next(it, &e));
    ql_iter_free(it);
    it = ql_iter_new(ql, QL_TAIL);
    for (size_t i = mn; i-- > 0;) {
        CHECK(ql_next(it, &e));
        if (entry_is(&e, mv[i].s, mv[i].len)) return 1;
    }
    CHECK(!ql_next(it, &e));
    ql_iter_free(it);
    if (mn) {
        size_t i = (size_t)random() % mn;
        CHECK(ql_index(ql, (long)i, &e) && entry_is(&e, mv[i].s, mv[i].len) == 0);
        CHECK(ql_index(ql, (long)i - (long)mn, &e) && entry_is(&e, mv[i].s, mv[i].len) == 0);
    }
    CHECK(!ql_index(ql, (long)mn, &e));
    CHECK(!ql_index(ql, -(long)mn - 1, &e));
    return 0;
}

/* Every node within the fill limit, unless it holds a single entry. */
static int check_fill(const quicklist *ql, unsigned long max_count, size_t max_bytes) {
    for (const ql_node_t *n = ql->head; n; n = n->next) {
        if (n->count == 1) continue;
        CHECK(n->count <= max_count);
        CHECK((n->lzf_sz ? n->raw_sz : lp_bytes(n->lp)) <= max_bytes);
    }
    return 0;
}

/* --------------------------------- tests ---------------------------------- */

static int test_fill_by_count(void) {
    quicklist *ql = ql_new(4, 0);
    char buf[16];
    for (int i = 0; i < 10; i++) {
        int n = snprintf(buf, sizeof(buf), "v%d", i);
        ql_push(ql, buf, (size_t)n, QL_TAIL);
    }
    CHECK_EQ_INT(ql->len, 3);
    CHECK_EQ_INT(ql->head->count, 4);
    CHECK_EQ_INT(ql->tail->count, 2);
    /* a positive fill still caps node bytes at 8 KB */
    quicklist *q2 = ql_new(1000, 0);
    static char big[3000];
    memset(big, 'x', sizeof(big));
    for (int i = 0; i < 10; i++) ql_push(q2, big, sizeof(big), QL_HEAD);
    CHECK(check_fill(q2, 1000, 8192) == 0);
    CHECK_EQ_INT(q2->len, 5);
    CHECK(ql_verify(q2));
    ql_free(q2);
    ql_free(ql);
    return 0;
}

static int test_fill_by_bytes(void) {
    static const size_t limits[] = {4096, 8192, 16384, 32768, 65536};
    static char val[100];
    memset(val, 'y', sizeof(val));
    for (int f = -1; f >= -5; f--) {
        quicklist *ql = ql_new(f, 0);
        for (int i = 0; i < 3000; i++) ql_push(ql, val, sizeof(val), i % 2 ? QL_HEAD : QL_TAIL);
        CHECK(check_fill(ql, 1UL << 30, limits[-f - 1]) == 0);
        /* nodes are reasonably full: at least half the limit on average */
        CHECK(ql->len <= 2 * (3000 * 102 / limits[-f - 1] + 1));
        CHECK(ql_verify(ql));
        ql_free(ql);
    }
    /* fill below -5 is clamped; a value larger than the limit gets a node */
    quicklist *ql = ql_new(-9, 0);
    CHECK_EQ_INT(ql->fill, -5);
    ql_set_options(ql, -1, 2);
    CHECK(ql->fill == -1 && ql->compress == 2);
    char *huge = malloc(10000);
    memset(huge, 'h', 10000);
    ql_push(ql, "a", 1, QL_TAIL);
    ql_push(ql, huge, 10000, QL_TAIL);
    ql_push(ql, "b", 1, QL_TAIL);
    CHECK_EQ_INT(ql->len, 3);
    ql_entry_t e;
    CHECK(ql_index(ql, 1, &e) && e.len == 10000 && memcmp(e.str, huge, 10000) == 0);
    free(huge);
    ql_free(ql);
    return 0;
}

static int test_push_pop(void) {
    quicklist *ql = ql_new(3, 0);
    ql_push(ql, "1", 1, QL_TAIL);
    ql_push(ql, "two", 3, QL_TAIL);
    ql_push(ql, "-3", 2, QL_HEAD);
    ql_push(ql, "", 0, QL_HEAD);
    unsigned char *s;
    size_t len;
    long long v;
    CHECK(ql_pop(ql, QL_HEAD, &s, &len, &v));
    CHECK(s != NULL && len == 0);
    zfree(s);
    CHECK(ql_pop(ql, QL_HEAD, &s, &len, &v));
    CHECK(s == NULL && v == -3);
    CHECK(ql_pop(ql, QL_TAIL, &s, &len, &v));
    CHECK(s != NULL && len == 3 && memcmp(s, "two", 3) == 0);
    zfree(s);
    CHECK(ql_pop(ql, QL_TAIL, &s, &len, &v));
    CHECK(s == NULL && v == 1);
    CHECK(!ql_pop(ql, QL_TAIL, &s, &len, &v));
    CHECK(ql->head == NULL && ql->tail == NULL && ql->len == 0);
    CHECK(ql_verify(ql));
    ql_free(ql);
    return 0;
}

/* Inserts in full nodes: at the tail edge (goes to the next node), the head
 * edge (previous node), and the middle (split). */
static int test_insert_full_nodes(void) {
    quicklist *ql = ql_new(3, 0);
    const char *init[] = {"a", "b", "c", "d", "e", "f"};
    for (int i = 0; i < 6; i++) {
        ql_push(ql, init[i], 1, QL_TAIL);
        m_insert(mn, init[i], 1);
    }
    CHECK_EQ_INT(ql->len, 2);
    ql_entry_t e;
    CHECK(ql_index(ql, 2, &e)); /* "c", end of node 1 */
    ql_insert_after(ql, &e, "X", 1);
    m_insert(3, "X", 1);
    if (check_model(ql)) return 1;
    CHECK(ql_index(ql, 3, &e)); /* "X" */
    ql_insert_before(ql, &e, "Y", 1);
    m_insert(3, "Y", 1);
    if (check_model(ql)) return 1;
    CHECK(ql_index(ql, 1, &e)); /* middle of a full node */
    ql_insert_after(ql, &e, "Z", 1);
    m_insert(2, "Z", 1);
    if (check_model(ql)) return 1;
    CHECK(ql_index(ql, -1, &e));
    ql_insert_after(ql, &e, "END", 3);
    m_insert(mn, "END", 3);
    CHECK(ql_index(ql, 0, &e));
    ql_insert_before(ql, &e, "START", 5);
    m_insert(0, "START", 5);
    if (check_model(ql)) return 1;
    if (check_fill(ql, 3, 8192)) return 1;
    ql_free(ql);
    m_clear();
    return 0;
}

static int test_replace_and_del_range(void) {
    quicklist *ql = ql_new(-1, 0);
    char buf[16];
    for (int i = 0; i < 500; i++) {
        int n = snprintf(buf, sizeof(buf), "%d", i);
        ql_push(ql, buf, (size_t)n, QL_TAIL);
        m_insert(mn, buf, (size_t)n);
    }
    CHECK(ql_replace_at_index(ql, 10, "ten", 3));
    m_delete(10, 1);
    m_insert(10, "ten", 3);
    CHECK(!ql_replace_at_index(ql, 500, "x", 1));
    /* a value too big for its node is split out into its own node */
    char *huge = malloc(5000);
    memset(huge, 'q', 5000);
    CHECK(ql_replace_at_index(ql, -250, huge, 5000));
    m_delete(250, 1);
    m_insert(250, huge, 5000);
    free(huge);
    if (check_model(ql)) return 1;
    if (check_fill(ql, 1UL << 30, 4096)) return 1;
    CHECK_EQ_INT(ql_del_range(ql, 5, 100), 100);
    m_delete(5, 100);
    CHECK_EQ_INT(ql_del_range(ql, -10, 100), 10);
    m_delete(mn - 10, 10);
    CHECK_EQ_INT(ql_del_range(ql, 1000, 5), 0);
    CHECK_EQ_INT(ql_del_range(ql, 0, 0), 0);
    if (check_model(ql)) return 1;
    CHECK_EQ_INT(ql_del_range(ql, 0, mn), mn);
    m_clear();
    if (check_model(ql)) return 1;
    ql_free(ql);
    return 0;
}

/* LREM-style: delete every match while iterating, both directions. */
static int test_iter_delete(void) {
    for (int dir = QL_HEAD; dir <= QL_TAIL; dir++) {
        quicklist *ql = ql_new(4, 0);
        for (int i = 0; i < 40; i++) {
            const char *v = i % 3 == 0 ? "del" : "keep";
            ql_push(ql, v, strlen(v), QL_TAIL);
            m_insert(mn, v, strlen(v));
        }
        ql_iter_t *it = ql_iter_new(ql, dir);
        ql_entry_t e;
        int seen = 0, removed = 0;
        while (ql_next(it, &e)) {
            seen++;
            if (ql_entry_equal(&e, "del", 3)) {
                ql_iter_del(it, &e);
                removed++;
            }
        }
        ql_iter_free(it);
        CHECK_EQ_INT(seen, 40);
        CHECK_EQ_INT(removed, 14);
        for (size_t i = mn; i-- > 0;)
            if (mv[i].len == 3) m_delete(i, 1);
        if (check_model(ql)) return 1;
        /* delete everything: nodes empty and are unlinked mid-iteration */
        it = ql_iter_new(ql, dir);
        while (ql_next(it, &e)) ql_iter_del(it, &e);
        ql_iter_free(it);
        CHECK(ql_count(ql) == 0 && ql->len == 0);
        m_clear();
        if (check_model(ql)) return 1;
        ql_free(ql);
    }
    return 0;
}

static int test_iter_at_index(void) {
    quicklist *ql = ql_new(5, 0);
    char buf[16];
    for (int i = 0; i < 23; i++) {
        int n = snprintf(buf, sizeof(buf), "%d", i);
        ql_push(ql, buf, (size_t)n, QL_TAIL);
    }
    ql_entry_t e;
    ql_iter_t *it = ql_iter_at_index(ql, QL_HEAD, 7);
    for (int want = 7; want < 23; want++) {
        CHECK(ql_next(it, &e) && e.str == NULL && e.ival == want);
    }
    CHECK(!ql_next(it, &e));
    ql_iter_free(it);
    it = ql_iter_at_index(ql, QL_TAIL, -3); /* 20, 19, ... 0 */
    for (int want = 20; want >= 0; want--) CHECK(ql_next(it, &e) && e.ival == want);
    CHECK(!ql_next(it, &e));
    ql_iter_free(it);
    it = ql_iter_at_index(ql, QL_HEAD, 23);
    CHECK(!ql_next(it, &e));
    ql_iter_free(it);
    ql_free(ql);
    return 0;
}

static int test_dup_append_listpack_mem(void) {
    unsigned char *lp = lp_new();
    for (int i = 0; i < 10; i++) lp = lp_append_int(lp, i);
    quicklist *ql = ql_new(-2, 0);
    ql_append_listpack(ql, lp);
    ql_append_listpack(ql, lp_new()); /* empty: dropped */
    ql_push(ql, "tail", 4, QL_TAIL);
    CHECK_EQ_INT(ql_count(ql), 11);
    CHECK_EQ_INT(ql->len, 1);
    quicklist *c = ql_dup(ql);
    CHECK(ql_verify(c) && ql_count(c) == 11);
    ql_entry_t e;
    CHECK(ql_index(c, 10, &e) && entry_is(&e, "tail", 4) == 0);
    CHECK(ql_index(c, 3, &e) && e.ival == 3);
    size_t mem = ql_mem_usage(ql);
    CHECK(mem >= sizeof(quicklist) + sizeof(ql_node_t) + lp_bytes(ql->head->lp));
    ql_free(ql);
    ql_free(c);
    return 0;
}

static size_t rand_value(char *buf) {
    int kind = (int)(random() % 10);
    if (kind < 3) return (size_t)snprintf(buf, 32, "%ld", random() % 2000 - 1000);
    size_t len = kind == 9 ? (size_t)random() % 3000 : (size_t)random() % 30;
    /* a few letters only: nodes compress (list-compress-depth runs) */
    for (size_t i = 0; i < len; i++) buf[i] = (char)('a' + random() % (kind == 8 ? 2 : 26));
    return len;
}

static int random_run(int fill, int depth, unsigned seed) {
    srandom(seed);
    quicklist *ql = ql_new(fill, depth);
    static char buf[4000];
    ql_entry_t e;
    for (int round = 0; round < 4000; round++) {
        size_t len = rand_value(buf);
        int op = (int)(random() % 10);
        if (mn > 400 && op < 6) op = 6 + op % 4;
        size_t at = mn ? (size_t)random() % mn : 0;
        if (!mn && op >= 2) op = 0;
        switch (op) {
            case 0:
                ql_push(ql, buf, len, QL_TAIL);
                m_insert(mn, buf, len);
                break;
            case 1:
                ql_push(ql, buf, len, QL_HEAD);
                m_insert(0, buf, len);
                break;
            case 2:
            case 3:
                CHECK(ql_index(ql, (long)at, &e));
                if (op == 2) {
                    ql_insert_before(ql, &e, buf, len);
                    m_insert(at, buf, len);
                } else {
                    ql_insert_after(ql, &e, buf, len);
                    m_insert(at + 1, buf, len);
                }
                break;
            case 4:
                CHECK(ql_replace_at_index(ql, (long)at - (long)mn, buf, len));
                m_delete(at, 1);
                m_insert(at, buf, len);
                break;
            case 5: {
                unsigned long num = (unsigned long)random() % 20;
                unsigned long want = at + num > mn ? mn - at : num;
                CHECK_EQ_INT(ql_del_range(ql, (long)at, num), want);
                m_delete(at, num);
                break;
            }
            case 6:
            case 7: {
                unsigned char *s;
                size_t sl;
                long long v;
                int where = op == 6 ? QL_HEAD : QL_TAIL;
                size_t mi = where == QL_HEAD ? 0 : mn - 1;
                CHECK(ql_pop(ql, where, &s, &sl, &v));
                if (s) {
                    CHECK(sl == mv[mi].len && memcmp(s, mv[mi].s, sl) == 0);
                    zfree(s);
                } else {
                    char nb[32];
                    int nl = snprintf(nb, sizeof(nb), "%lld", v);
                    CHECK((size_t)nl == mv[mi].len && memcmp(nb, mv[mi].s, mv[mi].len) == 0);
                }
                m_delete(mi, 1);
                break;
            }
            default: { /* iterate from a random index, deleting some */
                int dir = random() % 2 ? QL_HEAD : QL_TAIL;
                ql_iter_t *it = ql_iter_at_index(ql, dir, (long)at);
                long i = (long)at;
                int steps = 0;
                while (steps++ < 30 && ql_next(it, &e)) {
                    if (entry_is(&e, mv[i].s, mv[i].len)) return 1;
                    if (random() % 3 == 0) {
                        ql_iter_del(it, &e);
                        m_delete((size_t)i, 1);
                        if (dir == QL_HEAD) i--;
                    }
                    i += dir == QL_HEAD ? 1 : -1;
                }
                ql_iter_free(it);
            }
        }
        CHECK_EQ_INT(ql_count(ql), mn);
        if (round % 40 == 0 && check_model(ql)) return 1;
    }
    if (check_model(ql)) return 1;
    if (fill > 0 && check_fill(ql, (unsigned long)fill, 8192)) return 1;
    ql_free(ql);
    m_clear();
    return 0;
}

static int test_random_vs_model(void) {
    int fills[] = {1, 3, 16, 128, -1, -2};
    for (int depth = 0; depth <= 2; depth++)
        for (size_t i = 0; i < sizeof(fills) / sizeof(*fills); i++)
            if (random_run(fills[i], depth, 1000 + (unsigned)i)) {
                fprintf(stderr, "  (fill %d, compress depth %d)\n", fills[i], depth);
                return 1;
            }
    return 0;
}

/* Interior nodes (not within depth of an end) left plain though big
 * enough to compress (48 bytes; all values here compress well). */
static unsigned long raw_interior(const quicklist *ql) {
    unsigned long k = 0, i = 0;
    for (const ql_node_t *n = ql->head; n; n = n->next, i++)
        if (i >= (unsigned long)ql->compress && i + (unsigned long)ql->compress < ql->len && !n->lzf_sz &&
            lp_bytes(n->lp) >= 48)
            k++;
    return k;
}

static int test_compress_depth(void) {
    char v[200];
    memset(v, 'x', sizeof(v));
    quicklist *plain = ql_new(4, 0), *ql = ql_new(4, 1), *ql2 = ql_new(4, 2);
    for (int i = 0; i < 40; i++) {
        int n = snprintf(v, 16, "value-%d", i);
        v[n] = 'x';
        ql_push(plain, v, sizeof(v), QL_TAIL);
        ql_push(ql, v, sizeof(v), QL_TAIL);
        ql_push(ql2, v, sizeof(v), QL_HEAD);
    }
    /* 10 nodes: every one but the depth nearest each end is compressed */
    CHECK_EQ_INT(ql->len, 10);
    CHECK_EQ_INT(ql_compressed_nodes(plain), 0);
    CHECK_EQ_INT(ql_compressed_nodes(ql), 8);
    CHECK_EQ_INT(ql_compressed_nodes(ql2), 6);
    CHECK(ql_mem_usage(ql) * 2 < ql_mem_usage(plain));
    CHECK_EQ_INT(ql_raw_bytes(ql), ql_raw_bytes(plain));
    CHECK(ql_verify(ql) && ql_verify(ql2));
    /* A read opens one interior node; the next change compresses it again. */
    ql_entry_t e;
    CHECK(ql_index(ql, 21, &e));
    CHECK(e.len == sizeof(v) && memcmp(e.str, "value-21", 8) == 0);
    CHECK_EQ_INT(raw_interior(ql), 1);
    ql_push(ql, v, sizeof(v), QL_HEAD);
    CHECK_EQ_INT(raw_interior(ql), 0);
    /* Pops move the ends inwards: the nodes now at the ends are raw. */
    unsigned char *s;
    size_t sl;
    long long iv;
    for (int i = 0; i < 9; i++) {
        CHECK(ql_pop(ql, QL_TAIL, &s, &sl, &iv));
        zfree(s);
    }
    CHECK(ql_verify(ql) && !ql->tail->lzf_sz && !ql->head->lzf_sz);
    CHECK_EQ_INT(raw_interior(ql), 0);
    /* Middle changes, then every interior node is compressed again. */
    CHECK(ql_index(ql, 12, &e));
    ql_insert_after(ql, &e, "new", 3);
    CHECK(ql_replace_at_index(ql, 17, v, 100));
    CHECK_EQ_INT(ql_del_range(ql, 5, 6), 6);
    CHECK(ql_verify(ql));
    CHECK_EQ_INT(raw_interior(ql), 0);
    quicklist *copy = ql_dup(ql);
    CHECK(ql_verify(copy) && ql_count(copy) == ql_count(ql));
    ql_free(copy);
    ql_free(plain);
    ql_free(ql);
    ql_free(ql2);
    return 0;
}

int main(void) {
    RUN_TEST(test_fill_by_count);
    RUN_TEST(test_fill_by_bytes);
    RUN_TEST(test_push_pop);
    RUN_TEST(test_insert_full_nodes);
    RUN_TEST(test_replace_and_del_range);
    RUN_TEST(test_iter_delete);
    RUN_TEST(test_iter_at_index);
    RUN_TEST(test_dup_append_listpack_mem);
    RUN_TEST(test_random_vs_model);
    RUN_TEST(test_compress_depth);
    free(mv);
    return TEST_REPORT("quicklist");
}
