/* test_listpack.c: unit tests for src/listpack.c.
 *
 * Encoding edges (each integer width, string length headers at 63/64 and
 * 4095/4096, back-length widths), canonical-integer parsing, find with skip
 * as hashes use it, merge, the conversion helpers, a saturated count, the
 * validator against random corruption, and random operations checked after
 * every step against an array of strings. */
#include <stdint.h>
#include <stdlib.h>

#include "listpack.h"
#include "test_help.h"
#include "zmalloc.h"

/* ------------------------------ the model -------------------------------- */

typedef struct {
    char *s;
    size_t len;
} mstr_t;

typedef struct {
    mstr_t *v;
    size_t n, cap;
} model_t;

static void model_insert(model_t *m, size_t at, const char *s, size_t len) {
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 16;
        m->v = realloc(m->v, m->cap * sizeof(*m->v));
    }
    memmove(m->v + at + 1, m->v + at, (m->n - at) * sizeof(*m->v));
    m->v[at].s = malloc(len ? len : 1);
    memcpy(m->v[at].s, s, len);
    m->v[at].len = len;
    m->n++;
}

static void model_delete(model_t *m, size_t at, size_t num) {
    if (at + num > m->n) num = m->n - at;
    for (size_t i = at; i < at + num; i++) free(m->v[i].s);
    memmove(m->v + at, m->v + at + num, (m->n - at - num) * sizeof(*m->v));
    m->n -= num;
}

static void model_free(model_t *m) {
    model_delete(m, 0, m->n);
    free(m->v);
}

/* Entry p holds exactly s[0..len) in its string form. */
static int entry_is(const unsigned char *p, const char *s, size_t len) {
    char buf[LP_INTBUF_SIZE];
    size_t elen;
    const unsigned char *e = lp_get_str(p, &elen, buf);
    CHECK_EQ_INT(elen, len);
    CHECK_MEM(e, s, len);
    CHECK(lp_entry_equal(p, s, len));
    CHECK_EQ_INT(lp_entry_cmp(p, s, len), 0);
    return 0;
}

/* Walk both directions, seek, and validate deeply. */
static int check_model(unsigned char *lp, const model_t *m) {
    CHECK(lp_validate(lp, lp_bytes(lp), true, NULL, NULL));
    CHECK_EQ_INT(lp_length(lp), m->n);
    unsigned char *p = lp_first(lp);
    for (size_t i = 0; i < m->n; i++) {
        CHECK(p != NULL);
        if (entry_is(p, m->v[i].s, m->v[i].len)) return 1;
        p = lp_next(lp, p);
    }
    CHECK(p == NULL);
    p = lp_last(lp);
    for (size_t i = m->n; i-- > 0;) {
        CHECK(p != NULL);
        if (entry_is(p, m->v[i].s, m->v[i].len)) return 1;
        p = lp_prev(lp, p);
    }
    CHECK(p == NULL);
    if (m->n) {
        size_t i = (size_t)random() % m->n;
        p = lp_seek(lp, (long)i);
        CHECK(p && entry_is(p, m->v[i].s, m->v[i].len) == 0);
        p = lp_seek(lp, (long)i - (long)m->n);
        CHECK(p && entry_is(p, m->v[i].s, m->v[i].len) == 0);
    }
    CHECK(lp_seek(lp, (long)m->n) == NULL);
    CHECK(lp_seek(lp, -(long)m->n - 1) == NULL);
    return 0;
}

/* ------------------------------- encodings ------------------------------- */

static int test_empty(void) {
    unsigned char *lp = lp_new();
    CHECK_EQ_INT(lp_bytes(lp), 7);
    CHECK_EQ_INT(lp_length(lp), 0);
    CHECK(lp_first(lp) == NULL && lp_last(lp) == NULL);
    CHECK(lp_seek(lp, 0) == NULL && lp_seek(lp, -1) == NULL);
    CHECK(lp_find(lp, lp_first(lp), "a", 1, 0) == NULL);
    CHECK(lp_validate(lp, lp_bytes(lp), true, NULL, NULL));
    CHECK(lp_mem_usage(lp) >= 7);
    lp = lp_delete_range(lp, 0, 5);
    CHECK_EQ_INT(lp_length(lp), 0);
    lp_free(lp);
    return 0;
}

/* Each integer lands in the narrowest form: entry bytes = body + 1. */
static int test_int_edges(void) {
    struct {
        long long v;
        size_t body;
    } cases[] = {
        {0, 1},
        {127, 1},
        {128, 2},
        {-1, 2},
        {4095, 2},
        {-4096, 2},
        {4096, 3},
        {-4097, 3},
        {INT16_MAX, 3},
        {INT16_MIN, 3},
        {INT16_MAX + 1, 4},
        {INT16_MIN - 1, 4},
        {(1 << 23) - 1, 4},
        {-(1 << 23), 4},
        {1 << 23, 5},
        {-(1 << 23) - 1, 5},
        {INT32_MAX, 5},
        {INT32_MIN, 5},
        {(long long)INT32_MAX + 1, 9},
        {(long long)INT32_MIN - 1, 9},
        {INT64_MAX, 9},
        {INT64_MIN, 9},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        unsigned char *lp = lp_new();
        lp = lp_append_int(lp, cases[i].v);
        CHECK_EQ_INT(lp_bytes(lp), 7 + cases[i].body + 1);
        long long got;
        CHECK(lp_get_int(lp_first(lp), &got));
        CHECK_EQ_INT(got, cases[i].v);
        /* The same number given as a string takes the integer form. */
        char s[32];
        int n = snprintf(s, sizeof(s), "%lld", cases[i].v);
        lp = lp_append(lp, s, (size_t)n);
        CHECK_EQ_INT(lp_bytes(lp), 7 + 2 * (cases[i].body + 1));
        CHECK(lp_get_int(lp_last(lp), &got));
        CHECK_EQ_INT(got, cases[i].v);
        CHECK(lp_find(lp, lp_first(lp), s, (size_t)n, 0) == lp_first(lp));
        CHECK_EQ_INT(lp_value_strlen(lp_first(lp)), n);
        CHECK(lp_validate(lp, lp_bytes(lp), true, NULL, NULL));
        lp_free(lp);
    }
    return 0;
}

/* String headers of 1/2/5 bytes and back-lengths of 1/2/3 bytes, with
 * Redis's size boundaries (an RDB file carries listpacks as they are). */
static int test_string_edges(void) {
    struct {
        size_t len;
        size_t entry;
    } cases[] = {
        {0, 2},
        {1, 3},
        {63, 65},
        {64, 64 + 2 + 1},
        {125, 125 + 2 + 1}, /* body 127: 1-byte back-length */
        {126, 126 + 2 + 2}, /* body 128: 2-byte back-length */
        {4095, 4095 + 2 + 2},
        {4096, 4096 + 5 + 2},
        {16377, 16377 + 5 + 2}, /* body 16382: the last 2-byte back-length */
        {16378, 16378 + 5 + 3}, /* body 16383: 3 bytes, as Redis writes it */
        {16379, 16379 + 5 + 3}, /* body 16384 */
        {70000, 70000 + 5 + 3},
    };
    char *big = malloc(70001);
    for (size_t i = 0; i < 70001; i++) big[i] = (char)('a' + i % 26);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        unsigned char *lp = lp_new();
        lp = lp_append_int(lp, 1);
        lp = lp_append(lp, big, cases[i].len);
        lp = lp_append_int(lp, 2);
        CHECK_EQ_INT(lp_bytes(lp), 7 + 2 + cases[i].entry + 2);
        CHECK_EQ_INT(lp_encoded_size(big, cases[i].len), cases[i].entry);
        unsigned char *mid = lp_prev(lp, lp_last(lp)); /* walks the back-length */
        CHECK(mid == lp_next(lp, lp_first(lp)));
        if (entry_is(mid, big, cases[i].len)) return 1;
        CHECK(lp_validate(lp, lp_bytes(lp), true, NULL, NULL));
        lp_free(lp);
    }
    free(big);
    return 0;
}

static int test_canonical_ints(void) {
    const char *yes[] = {"0", "1", "-1", "123", "-5", "9223372036854775807",
                         "-9223372036854775808"};
    const char *no[] = {"", "-", "-0", "0123", "+1", " 1", "1 ", "1a", "00",
                        "9223372036854775808", "-9223372036854775809",
                        "18446744073709551616", "123456789012345678901"};
    long long v;
    for (size_t i = 0; i < sizeof(yes) / sizeof(*yes); i++)
        CHECK(lp_string_to_int64(yes[i], strlen(yes[i]), &v));
    CHECK(lp_string_to_int64("-9223372036854775808", 20, &v) && v == INT64_MIN);
    for (size_t i = 0; i < sizeof(no) / sizeof(*no); i++) {
        CHECK(!lp_string_to_int64(no[i], strlen(no[i]), &v));
        /* stored as a string, so it reads back byte for byte */
        unsigned char *lp = lp_append(lp_new(), no[i], strlen(no[i]));
        size_t len;
        CHECK(lp_get(lp_first(lp), &len, &v) != NULL);
        CHECK_EQ_INT(len, strlen(no[i]));
        CHECK(lp_find(lp, lp_first(lp), no[i], strlen(no[i]), 0) != NULL);
        lp_free(lp);
    }
    /* "0123" and "123" are different members. */
    unsigned char *lp = lp_append(lp_new(), "0123", 4);
    CHECK(lp_find(lp, lp_first(lp), "123", 3, 0) == NULL);
    lp = lp_append(lp, "123", 3);
    CHECK(lp_find(lp, lp_first(lp), "123", 3, 0) == lp_last(lp));
    lp_free(lp);
    return 0;
}

/* ---------------------------- operations ---------------------------------- */

static int test_insert_replace_delete(void) {
    unsigned char *lp = lp_new(), *p, *np;
    lp = lp_append(lp, "b", 1);
    lp = lp_prepend(lp, "a", 1);
    lp = lp_append_int(lp, 300);
    lp = lp_prepend_int(lp, -7); /* -7 a b 300 */
    p = lp_seek(lp, 1);
    lp = lp_insert(lp, "x", 1, p, LP_AFTER, &np); /* -7 a x b 300 */
    CHECK(entry_is(np, "x", 1) == 0);
    lp = lp_insert_int(lp, 42, np, LP_BEFORE, &np); /* -7 a 42 x b 300 */
    CHECK(entry_is(np, "42", 2) == 0);
    p = lp_last(lp);
    lp = lp_insert(lp, "z", 1, p, LP_AFTER, NULL); /* ... 300 z */
    p = lp_seek(lp, 3);
    lp = lp_replace(lp, &p, "a much longer replacement value", 31);
    CHECK(entry_is(p, "a much longer replacement value", 31) == 0);
    lp = lp_replace_int(lp, &p, 5);
    CHECK(entry_is(p, "5", 1) == 0);
    const char *want[] = {"-7", "a", "42", "5", "b", "300", "z"};
    CHECK_EQ_INT(lp_length(lp), 7);
    p = lp_first(lp);
    for (int i = 0; i < 7; i++, p = lp_next(lp, p))
        if (entry_is(p, want[i], strlen(want[i]))) return 1;
    p = lp_seek(lp, 2);
    lp = lp_delete(lp, p, &np);
    CHECK(entry_is(np, "5", 1) == 0);
    lp = lp_delete(lp, lp_last(lp), &np);
    CHECK(np == NULL);
    lp = lp_delete_range(lp, -2, 10); /* drops b 300 */
    CHECK_EQ_INT(lp_length(lp), 3);
    CHECK(entry_is(lp_last(lp), "5", 1) == 0);
    CHECK(lp_validate(lp, lp_bytes(lp), true, NULL, NULL));
    lp_free(lp);
    return 0;
}

/* A hash as field,value pairs: find with skip 1 only matches fields. */
static int test_find_skip(void) {
    unsigned char *lp = lp_new();
    char k[16], v[16];
    for (int i = 0; i < 50; i++) {
        int kl = snprintf(k, sizeof(k), "f%d", i), vl = snprintf(v, sizeof(v), "f%d", i + 1);
        lp = lp_append(lp, k, (size_t)kl);
        lp = lp_append(lp, v, (size_t)vl);
    }
    lp = lp_append(lp, "1000", 4);
    lp = lp_append(lp, "f0", 2);
    for (int i = 0; i < 50; i++) {
        int kl = snprintf(k, sizeof(k), "f%d", i);
        unsigned char *p = lp_find(lp, lp_first(lp), k, (size_t)kl, 1);
        CHECK(p == lp_seek(lp, 2 * i));
    }
    /* "f50" exists only as a value: invisible to a field search */
    CHECK(lp_find(lp, lp_first(lp), "f50", 3, 1) == NULL);
    CHECK(lp_find(lp, lp_first(lp), "f50", 3, 0) == lp_seek(lp, 99));
    CHECK(lp_find(lp, lp_first(lp), "1000", 4, 1) == lp_seek(lp, 100));
    /* searching values: start at the first value */
    CHECK(lp_find(lp, lp_seek(lp, 1), "f0", 2, 1) == lp_seek(lp, 101));
    lp_free(lp);
    return 0;
}

static int test_cmp_merge_fits(void) {
    unsigned char *a = lp_new(), *b = lp_new();
    a = lp_append(a, "abc", 3);
    a = lp_append_int(a, 10);
    b = lp_append(b, "hello", 5);
    b = lp_append_int(b, -99999);
    CHECK(lp_entry_cmp(lp_first(a), "abd", 3) < 0);
    CHECK(lp_entry_cmp(lp_first(a), "ab", 2) > 0);
    CHECK(lp_entry_cmp(lp_first(a), "abcd", 4) < 0);
    CHECK(lp_entry_cmp(lp_last(a), "9", 1) < 0); /* "10" < "9" bytewise */
    CHECK(lp_entry_cmp(lp_last(a), "10", 2) == 0);
    CHECK(!lp_entry_equal(lp_last(a), "010", 3));
    a = lp_merge(a, b);
    CHECK_EQ_INT(lp_length(a), 4);
    CHECK(entry_is(lp_seek(a, 2), "hello", 5) == 0);
    CHECK(entry_is(lp_last(a), "-99999", 6) == 0);
    CHECK(entry_is(lp_prev(a, lp_seek(a, 2)), "10", 2) == 0);
    CHECK(lp_validate(a, lp_bytes(a), true, NULL, NULL));
    CHECK(lp_fits(a, 4, 6));
    CHECK(!lp_fits(a, 3, 6));
    CHECK(!lp_fits(a, 4, 5)); /* "-99999" is 6 bytes */
    CHECK(lp_safe_to_add(a, 100));
    CHECK(!lp_safe_to_add(a, LP_SAFETY_SIZE));
    unsigned char *c = lp_dup(a);
    CHECK(lp_bytes(c) == lp_bytes(a) && memcmp(c, a, lp_bytes(a)) == 0);
    c = lp_shrink_to_fit(c);
    CHECK_EQ_INT(lp_bytes(c), lp_bytes(a));
    lp_free(a);
    lp_free(b);
    lp_free(c);
    return 0;
}

/* Past 65534 entries the header count saturates and length walks. */
static int test_count_saturation(void) {
    /* Built by merging 1000-entry blocks: 70000 single appends would cost
     * minutes of reallocation under ASan. */
    unsigned char *lp = lp_new();
    for (int blk = 0; blk < 70; blk++) {
        unsigned char *part = lp_new();
        for (int i = 0; i < 1000; i++) part = lp_append_int(part, blk * 1000 + i);
        lp = lp_merge(lp, part);
        lp_free(part);
    }
    CHECK_EQ_INT(lp_length(lp), 70000);
    lp = lp_append(lp, "tail", 4);
    CHECK_EQ_INT(lp_length(lp), 70001);
    lp = lp_delete(lp, lp_last(lp), NULL);
    CHECK(lp_validate(lp, lp_bytes(lp), true, NULL, NULL));
    long long v;
    CHECK(lp_get_int(lp_seek(lp, -1), &v) && v == 69999);
    CHECK(lp_get_int(lp_seek(lp, 40000), &v) && v == 40000);
    lp = lp_delete_range(lp, 0, 60000);
    CHECK_EQ_INT(lp_length(lp), 10000);
    CHECK(lp_get_int(lp_first(lp), &v) && v == 60000);
    CHECK(lp_validate(lp, lp_bytes(lp), true, NULL, NULL));
    lp_free(lp);
    return 0;
}

static bool reject_long(const unsigned char *p, void *arg) {
    (*(int *)arg)++;
    return lp_value_strlen(p) <= 5;
}

/* Corruption is rejected or accepted, never read out of bounds (ASan). */
static int test_validate(void) {
    unsigned char *lp = lp_new();
    lp = lp_append(lp, "hello", 5);
    lp = lp_append_int(lp, 12345);
    lp = lp_append(lp, "world!", 6);
    size_t n = lp_bytes(lp);
    int seen = 0;
    CHECK(lp_validate(lp, n, true, NULL, NULL));
    CHECK(!lp_validate(lp, n, true, reject_long, &seen)); /* "world!" */
    CHECK_EQ_INT(seen, 3);
    CHECK(!lp_validate(lp, n - 1, false, NULL, NULL));
    CHECK(!lp_validate(lp, 6, false, NULL, NULL));
    unsigned char *bad = lp_dup(lp);
    bad[n - 1] = 0; /* no end marker */
    CHECK(!lp_validate(bad, n, false, NULL, NULL));
    memcpy(bad, lp, n);
    bad[4] = 2; /* wrong count */
    CHECK(lp_validate(bad, n, false, NULL, NULL));
    CHECK(!lp_validate(bad, n, true, NULL, NULL));
    memcpy(bad, lp, n);
    bad[6] = 0xF7; /* invalid encoding */
    CHECK(!lp_validate(bad, n, true, NULL, NULL));
    memcpy(bad, lp, n);
    bad[6] = 0x80 | 40; /* string runs past end */
    CHECK(!lp_validate(bad, n, true, NULL, NULL));
    memcpy(bad, lp, n);
    bad[6 + 6] ^= 1; /* back-length mismatch */
    CHECK(!lp_validate(bad, n, true, NULL, NULL));
    lp_free(bad);
    /* Random byte flips: each must either validate or be rejected, and a
     * buffer that validates must walk cleanly both ways. */
    srandom(7);
    for (int round = 0; round < 3000; round++) {
        unsigned char *c = lp_dup(lp);
        int flips = 1 + (int)(random() % 3);
        for (int f = 0; f < flips; f++)
            c[LP_HDR_SIZE + (size_t)random() % (n - LP_HDR_SIZE)] = (unsigned char)random();
        if (lp_validate(c, n, true, NULL, NULL)) {
            unsigned long cnt = 0;
            for (unsigned char *p = lp_first(c); p; p = lp_next(c, p)) cnt++;
            CHECK_EQ_INT(cnt, lp_length(c));
            for (unsigned char *p = lp_last(c); p; p = lp_prev(c, p)) cnt--;
            CHECK_EQ_INT(cnt, 0);
        }
        lp_free(c);
    }
    lp_free(lp);
    return 0;
}

/* ------------------------------ random vs model --------------------------- */

static size_t rand_value(char *buf) {
    switch (random() % 6) {
        case 0: return (size_t)snprintf(buf, 32, "%ld", random() % 300 - 150);
        case 1: return (size_t)snprintf(buf, 32, "%lld", (long long)random() * random() - 5);
        case 2: return (size_t)snprintf(buf, 32, "0%ld", random() % 100); /* not canonical */
        case 3: {
            size_t len = (size_t)random() % 5000 < 50 ? 4000 + (size_t)random() % 200
                                                      : (size_t)random() % 80;
            for (size_t i = 0; i < len; i++) buf[i] = (char)(random() % 256);
            return len;
        }
        default: {
            size_t len = (size_t)random() % 20;
            for (size_t i = 0; i < len; i++) buf[i] = (char)('a' + random() % 26);
            return len;
        }
    }
}

static int test_random_vs_model(void) {
    srandom(4242);
    static char buf[5000];
    model_t m = {0};
    unsigned char *lp = lp_new(), *p;
    for (int round = 0; round < 6000; round++) {
        size_t len = rand_value(buf);
        size_t at = m.n ? (size_t)random() % m.n : 0;
        int op = (int)(random() % 9);
        if (m.n > 300 && op < 5) op = 6; /* keep it bounded */
        switch (m.n ? op : 0) {
            case 0:
                lp = lp_append(lp, buf, len);
                model_insert(&m, m.n, buf, len);
                break;
            case 1:
                lp = lp_prepend(lp, buf, len);
                model_insert(&m, 0, buf, len);
                break;
            case 2:
                p = lp_seek(lp, (long)at);
                lp = lp_insert(lp, buf, len, p, LP_BEFORE, &p);
                model_insert(&m, at, buf, len);
                CHECK(entry_is(p, buf, len) == 0);
                break;
            case 3:
                p = lp_seek(lp, (long)at);
                lp = lp_insert(lp, buf, len, p, LP_AFTER, &p);
                model_insert(&m, at + 1, buf, len);
                CHECK(entry_is(p, buf, len) == 0);
                break;
            case 4:
                p = lp_seek(lp, (long)at);
                lp = lp_replace(lp, &p, buf, len);
                model_delete(&m, at, 1);
                model_insert(&m, at, buf, len);
                CHECK(entry_is(p, buf, len) == 0);
                break;
            case 5: {
                long long v = (long long)random() - (1LL << 30);
                len = (size_t)snprintf(buf, 32, "%lld", v);
                p = lp_seek(lp, (long)at);
                lp = lp_replace_int(lp, &p, v);
                model_delete(&m, at, 1);
                model_insert(&m, at, buf, len);
                break;
            }
            case 6:
                p = lp_seek(lp, -(long)(m.n - at));
                lp = lp_delete(lp, p, &p);
                model_delete(&m, at, 1);
                if (at < m.n) CHECK(entry_is(p, m.v[at].s, m.v[at].len) == 0);
                else CHECK(p == NULL);
                break;
            case 7: {
                size_t num = (size_t)random() % 6;
                lp = lp_delete_range(lp, (long)at, num);
                model_delete(&m, at, num);
                break;
            }
            default: { /* find a member: the model's first match */
                size_t j = 0;
                while (!(m.v[j].len == m.v[at].len &&
                         memcmp(m.v[j].s, m.v[at].s, m.v[at].len) == 0)) j++;
                p = lp_find(lp, lp_first(lp), m.v[at].s, m.v[at].len, 0);
                CHECK(p == lp_seek(lp, (long)j));
            }
        }
        if (round % 50 == 0 && check_model(lp, &m)) return 1;
        CHECK_EQ_INT(lp_length(lp), m.n);
    }
    if (check_model(lp, &m)) return 1;
    CHECK(lp_mem_usage(lp) >= lp_bytes(lp));
    lp_free(lp);
    model_free(&m);
    return 0;
}

/* lp_append_batch writes exactly what one lp_append per item would, with
 * integers, canonical-integer strings and long strings mixed (40 items:
 * past the encoder's stack array). */
static int test_append_batch(void) {
    static char big[5000];
    memset(big, 'b', sizeof(big));
    lp_item_t items[40];
    unsigned char *one = lp_new();
    for (int i = 0; i < 40; i++) {
        if (i % 4 == 0) items[i] = (lp_item_t){NULL, 0, (long long)i * 1000003 - 7000000};
        else if (i % 4 == 1) items[i] = (lp_item_t){"12345", 5, 0};
        else if (i % 4 == 2) items[i] = (lp_item_t){big, (size_t)(i * 100), 0};
        else items[i] = (lp_item_t){"", 0, 0};
        one = items[i].s ? lp_append(one, items[i].s, items[i].len) : lp_append_int(one, items[i].v);
    }
    unsigned char *batch = lp_append_batch(lp_append_int(lp_new(), 9), items + 1, 39);
    unsigned char *first = lp_first(batch);
    batch = lp_replace(batch, &first, NULL, 0);
    first = lp_first(batch);
    batch = lp_replace_int(batch, &first, items[0].v);
    CHECK_EQ_INT(lp_bytes(one), lp_bytes(batch));
    CHECK_MEM(one, batch, lp_bytes(one));
    CHECK_EQ_INT(lp_length(batch), 40);
    CHECK(lp_validate(batch, lp_bytes(batch), true, NULL, NULL));
    lp_free(one);
    lp_free(batch);
    return 0;
}

int main(void) {
    RUN_TEST(test_empty);
    RUN_TEST(test_int_edges);
    RUN_TEST(test_string_edges);
    RUN_TEST(test_canonical_ints);
    RUN_TEST(test_insert_replace_delete);
    RUN_TEST(test_find_skip);
    RUN_TEST(test_cmp_merge_fits);
    RUN_TEST(test_count_saturation);
    RUN_TEST(test_validate);
    RUN_TEST(test_random_vs_model);
    RUN_TEST(test_append_batch);
    return TEST_REPORT("listpack");
}
