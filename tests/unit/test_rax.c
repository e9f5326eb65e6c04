/* test_rax.c: unit tests for lib/rax.c.
 *
 * Fixed cases for edge splitting and merging (a key that is a prefix of
 * another, the empty key, removal that merges a pass-through node), seeks
 * with each operator on an empty and a small tree, 128-bit big-endian IDs
 * iterating in numeric order, and a seeded random test that runs inserts,
 * removes, finds and seeks followed by a few steps each way against a
 * sorted array of keys, checking rax_validate after every change. */
#include <stdint.h>
#include <stdlib.h>

#include "rax.h"
#include "test_help.h"
#include "zmalloc.h"

#define K(s) (const unsigned char *)(s), strlen(s)

static int test_basic(void) {
    rax_t *r = rax_new();
    void *v;
    CHECK(rax_insert(r, K("annibale"), (void *)1, NULL));
    CHECK(rax_insert(r, K("annie"), (void *)2, NULL));
    CHECK(rax_insert(r, K("ann"), (void *)3, NULL));
    CHECK(rax_insert(r, K(""), (void *)4, NULL));
    CHECK(rax_insert(r, K("b"), (void *)5, NULL));
    CHECK(rax_validate(r));
    CHECK_EQ_INT(rax_size(r), 5);
    CHECK(!rax_try_insert(r, K("ann"), (void *)9));
    CHECK(rax_find(r, K("ann"), &v) && v == (void *)3);
    void *old = NULL;
    CHECK(!rax_insert(r, K("ann"), (void *)7, &old));
    CHECK(old == (void *)3);
    CHECK(rax_find(r, K("ann"), &v) && v == (void *)7);
    CHECK(!rax_find(r, K("an"), NULL));
    CHECK(!rax_find(r, K("annib"), NULL));
    CHECK(!rax_find(r, K("annibalex"), NULL));
    CHECK(rax_find(r, K(""), &v) && v == (void *)4);
    /* Removing "ann" leaves a pass-through node with two children. */
    CHECK(rax_remove(r, K("ann"), &old) && old == (void *)7);
    CHECK(rax_validate(r));
    /* Removing "annie" merges "ann"+"ibale" back into one edge. */
    CHECK(rax_remove(r, K("annie"), NULL));
    CHECK(rax_validate(r));
    CHECK(!rax_remove(r, K("annie"), NULL));
    CHECK(rax_find(r, K("annibale"), &v) && v == (void *)1);
    CHECK(rax_remove(r, K(""), NULL));
    CHECK(rax_remove(r, K("b"), NULL));
    CHECK(rax_remove(r, K("annibale"), NULL));
    CHECK_EQ_INT(rax_size(r), 0);
    CHECK_EQ_INT(r->numnodes, 1);
    CHECK(rax_validate(r));
    rax_free(r, NULL);
    return 0;
}

static int test_seek_empty(void) {
    rax_t *r = rax_new();
    rax_iter_t it;
    rax_iter_start(&it, r);
    const char *ops[] = {"^", "$", "=", ">=", ">", "<=", "<"};
    for (size_t i = 0; i < sizeof(ops) / sizeof(*ops); i++) {
        CHECK(!rax_seek(&it, ops[i], K("x")));
        CHECK(!rax_next(&it));
        CHECK(!rax_prev(&it));
    }
    CHECK(!rax_seek(&it, "??", K("x")));
    rax_iter_stop(&it);
    rax_free(r, NULL);
    return 0;
}

static void be128(unsigned char *buf, uint64_t ms, uint64_t seq) {
    for (int i = 0; i < 8; i++) {
        buf[i] = (unsigned char)(ms >> (56 - 8 * i));
        buf[8 + i] = (unsigned char)(seq >> (56 - 8 * i));
    }
}

static int test_ids_order(void) {
    rax_t *r = rax_new();
    unsigned char k[16];
    uint64_t ms[] = {0, 1, 255, 256, 65535, 1700000000000ULL, UINT64_MAX};
    for (size_t i = 0; i < 7; i++)
        for (uint64_t s = 0; s < 3; s++) {
            be128(k, ms[i], s == 2 ? UINT64_MAX : s);
            CHECK(rax_insert(r, k, 16, (void *)(uintptr_t)(i * 3 + s + 1), NULL));
        }
    CHECK(rax_validate(r));
    rax_iter_t it;
    rax_iter_start(&it, r);
    uintptr_t expect = 1;
    for (bool ok = rax_seek(&it, "^", NULL, 0); ok; ok = rax_next(&it)) CHECK((uintptr_t)it.data == expect++);
    CHECK_EQ_INT(expect, 22);
    expect = 21;
    for (bool ok = rax_seek(&it, "$", NULL, 0); ok; ok = rax_prev(&it)) CHECK((uintptr_t)it.data == expect--);
    CHECK_EQ_INT(expect, 0);
    be128(k, 256, 1);
    CHECK(rax_seek(&it, "<=", k, 16) && (uintptr_t)it.data == 11);
    CHECK(rax_seek(&it, "<", k, 16) && (uintptr_t)it.data == 10);
    CHECK(rax_seek(&it, ">", k, 16) && (uintptr_t)it.data == 12);
    be128(k, 300, 0);
    CHECK(rax_seek(&it, "<=", k, 16) && (uintptr_t)it.data == 12);
    CHECK(rax_seek(&it, ">=", k, 16) && (uintptr_t)it.data == 13);
    CHECK(!rax_seek(&it, "=", k, 16));
    rax_iter_stop(&it);
    rax_free(r, NULL);
    return 0;
}

/* ---------------------------------------------------------- the model */

typedef struct {
    unsigned char k[12];
    size_t len;
    uintptr_t v;
} mkey_t;

static int mcmp(const unsigned char *a, size_t al, const unsigned char *b, size_t bl) {
    size_t m = al < bl ? al : bl;
    int c = m ? memcmp(a, b, m) : 0;
    if (c) return c;
    return al < bl ? -1 : al > bl ? 1
                                  : 0;
}

/* Index of the first model key >= k. */
static size_t lower_bound(mkey_t *m, size_t n, const unsigned char *k, size_t len) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (mcmp(m[mid].k, m[mid].len, k, len) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static void rand_key(unsigned char *k, size_t *len) {
    /* Small alphabet and lengths: many shared prefixes, splits and merges. */
    *len = (size_t)(rand() % 7);
    for (size_t i = 0; i < *len; i++) k[i] = (unsigned char)("abc\x00\xff"[rand() % 5]);
}

static int check_at(rax_iter_t *it, mkey_t *m, size_t n, long pos, bool ok) {
    if (pos < 0 || (size_t)pos >= n) {
        CHECK(!ok);
        CHECK(it->eof);
        return 0;
    }
    CHECK(ok);
    CHECK(mcmp(it->key, it->key_len, m[pos].k, m[pos].len) == 0);
    CHECK((uintptr_t)it->data == m[pos].v);
    return 0;
}

static int test_random_model(void) {
    srand(12345);
    rax_t *r = rax_new();
    mkey_t *m = malloc(sizeof(*m) * 20000);
    size_t n = 0;
    rax_iter_t it;
    rax_iter_start(&it, r);
    for (int step = 0; step < 60000; step++) {
        unsigned char k[12];
        size_t len;
        rand_key(k, &len);
        size_t lb = lower_bound(m, n, k, len);
        bool present = lb < n && mcmp(m[lb].k, m[lb].len, k, len) == 0;
        int op = rand() % 10;
        if (op < 4) {
            uintptr_t v = (uintptr_t)step + 1;
            void *old = NULL;
            bool added = rax_insert(r, k, len, (void *)v, &old);
            CHECK(added == !present);
            if (present) {
                CHECK((uintptr_t)old == m[lb].v);
                m[lb].v = v;
            } else {
                memmove(m + lb + 1, m + lb, sizeof(*m) * (n - lb));
                memcpy(m[lb].k, k, len);
                m[lb].len = len;
                m[lb].v = v;
                n++;
            }
            CHECK(rax_validate(r));
        } else if (op < 7) {
            void *old = NULL;
            CHECK(rax_remove(r, k, len, &old) == present);
            if (present) {
                CHECK((uintptr_t)old == m[lb].v);
                memmove(m + lb, m + lb + 1, sizeof(*m) * (n - lb - 1));
                n--;
            }
            CHECK(rax_validate(r));
        } else if (op == 7) {
            void *v = NULL;
            CHECK(rax_find(r, k, len, &v) == present);
            if (present) CHECK((uintptr_t)v == m[lb].v);
        } else {
            static const char *ops[] = {"^", "$", "=", ">=", ">", "<=", "<"};
            const char *sop = ops[rand() % 7];
            long pos;
            if (!strcmp(sop, "^")) pos = 0;
            else if (!strcmp(sop, "$")) pos = (long)n - 1;
            else if (!strcmp(sop, "=")) pos = present ? (long)lb : -1;
            else if (!strcmp(sop, ">=")) pos = (long)lb;
            else if (!strcmp(sop, ">")) pos = (long)lb + (present ? 1 : 0);
            else if (!strcmp(sop, "<=")) pos = (long)lb - (present ? 0 : 1);
            else pos = (long)lb - 1;
            bool ok = rax_seek(&it, sop, k, len);
            if (check_at(&it, m, n, pos, ok)) return 1;
            if (!ok) continue;
            bool fwd = rand() % 2;
            for (int s = rand() % 6; s > 0; s--) {
                pos += fwd ? 1 : -1;
                ok = fwd ? rax_next(&it) : rax_prev(&it);
                if (check_at(&it, m, n, pos, ok)) return 1;
                if (!ok) break;
            }
        }
        CHECK_EQ_INT(rax_size(r), n);
    }
    rax_iter_stop(&it);
    rax_free(r, NULL);
    free(m);
    return 0;
}

static int freed;
static void count_free(void *v) { freed += v != NULL; }

static int test_free_callback_and_long_keys(void) {
    rax_t *r = rax_new();
    /* Keys longer than the iterator's static buffers. */
    unsigned char big[600];
    for (int i = 0; i < 40; i++) {
        memset(big, 'x', sizeof(big));
        big[i * 10] = 'y';
        CHECK(rax_insert(r, big, sizeof(big) - (size_t)i, (void *)(uintptr_t)(i + 1), NULL));
    }
    CHECK(rax_validate(r));
    rax_iter_t it;
    rax_iter_start(&it, r);
    int count = 0;
    for (bool ok = rax_seek(&it, "^", NULL, 0); ok; ok = rax_next(&it)) count++;
    CHECK_EQ_INT(count, 40);
    count = 0;
    for (bool ok = rax_seek(&it, "$", NULL, 0); ok; ok = rax_prev(&it)) count++;
    CHECK_EQ_INT(count, 40);
    /* Values may be replaced while walking; the walk is unaffected. */
    count = 0;
    for (bool ok = rax_seek(&it, "^", NULL, 0); ok; ok = rax_next(&it)) {
        rax_iter_set(&it, (void *)(uintptr_t)(1000 + count));
        count++;
    }
    CHECK_EQ_INT(count, 40);
    count = 0;
    for (bool ok = rax_seek(&it, "^", NULL, 0); ok; ok = rax_next(&it)) CHECK((uintptr_t)it.data == (uintptr_t)(1000 + count++));
    rax_iter_stop(&it);
    freed = 0;
    rax_free(r, count_free);
    CHECK_EQ_INT(freed, 40);
    return 0;
}

int main(void) {
    RUN_TEST(test_basic);
    RUN_TEST(test_seek_empty);
    RUN_TEST(test_ids_order);
    RUN_TEST(test_random_model);
    RUN_TEST(test_free_callback_and_long_keys);
    return TEST_REPORT("rax");
}
