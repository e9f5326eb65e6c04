/* test_intset.c: unit tests for src/intset.c.
 *
 * Boundary widths (int16/int32/int64 edges and the upgrade that each one
 * forces), the serialized-form validator, and a long run of random adds and
 * removes checked after every step against a plain sorted array. */
#include <stdint.h>
#include <stdlib.h>

#include "intset.h"
#include "test_help.h"
#include "zmalloc.h"

/* Whole-set check: length, strict order and every model member found. */
static int check_against_model(const intset *is, const int64_t *model, uint32_t n) {
    CHECK_EQ_INT(intset_len(is), n);
    for (uint32_t i = 0; i < n; i++) {
        int64_t v;
        CHECK(intset_get(is, i, &v));
        CHECK_EQ_INT(v, model[i]);
        CHECK(intset_find(is, model[i]));
    }
    int64_t dummy;
    CHECK(!intset_get(is, n, &dummy));
    CHECK(intset_validate(is, intset_blob_len(is), true));
    if (n) {
        CHECK_EQ_INT(intset_min(is), model[0]);
        CHECK_EQ_INT(intset_max(is), model[n - 1]);
    }
    return 0;
}

static int test_empty(void) {
    intset *is = intset_new();
    CHECK_EQ_INT(intset_len(is), 0);
    CHECK(!intset_find(is, 0));
    CHECK_EQ_INT(intset_blob_len(is), 8);
    CHECK_EQ_INT(intset_max_strlen(is), 0);
    bool removed = true;
    is = intset_remove(is, 5, &removed);
    CHECK(!removed);
    CHECK(intset_mem_usage(is) >= 8);
    intset_free(is);
    return 0;
}

static int test_add_duplicates(void) {
    intset *is = intset_new();
    bool added;
    is = intset_add(is, 7, &added);
    CHECK(added);
    is = intset_add(is, 7, &added);
    CHECK(!added);
    is = intset_add(is, -3, &added);
    CHECK(added);
    is = intset_add(is, 5, &added);
    int64_t model[] = {-3, 5, 7};
    if (check_against_model(is, model, 3)) return 1;
    intset_free(is);
    return 0;
}

/* Every width edge: the last value of a width keeps it, one past upgrades,
 * and the upgraded member lands at the right end of the array. */
static int test_width_edges(void) {
    struct {
        int64_t v;
        uint32_t width;
    } edges[] = {
        {INT16_MAX, 2},
        {INT16_MIN, 2},
        {(int64_t)INT16_MAX + 1, 4},
        {(int64_t)INT16_MIN - 1, 4},
        {INT32_MAX, 4},
        {INT32_MIN, 4},
        {(int64_t)INT32_MAX + 1, 8},
        {(int64_t)INT32_MIN - 1, 8},
        {INT64_MAX, 8},
        {INT64_MIN, 8},
    };
    for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
        intset *is = intset_new();
        is = intset_add(is, 1, NULL);
        is = intset_add(is, -1, NULL);
        is = intset_add(is, edges[i].v, NULL);
        CHECK_EQ_INT(is->width, edges[i].width);
        CHECK_EQ_INT(intset_blob_len(is), 8 + 3 * edges[i].width);
        int64_t model[3] = {-1, 1, edges[i].v};
        if (edges[i].v < 0) {
            model[0] = edges[i].v;
            model[1] = -1;
            model[2] = 1;
        }
        if (check_against_model(is, model, 3)) return 1;
        /* Removing the wide member does not narrow the cells. */
        bool removed;
        is = intset_remove(is, edges[i].v, &removed);
        CHECK(removed);
        CHECK_EQ_INT(is->width, edges[i].width);
        CHECK(intset_find(is, 1) && intset_find(is, -1));
        CHECK(!intset_find(is, edges[i].v));
        intset_free(is);
    }
    /* A narrow set never finds a value too wide for its cells. */
    intset *is = intset_new();
    is = intset_add(is, 0, NULL);
    CHECK(!intset_find(is, INT64_MAX));
    CHECK(!intset_find(is, (int64_t)1 << 32));
    intset_free(is);
    return 0;
}

static int test_upgrade_keeps_order(void) {
    intset *is = intset_new();
    for (int64_t v = -100; v <= 100; v += 3) is = intset_add(is, v, NULL);
    is = intset_add(is, (int64_t)1 << 40, NULL);
    is = intset_add(is, -((int64_t)1 << 40), NULL);
    CHECK_EQ_INT(is->width, 8);
    int64_t prev = INT64_MIN;
    for (uint32_t i = 0; i < intset_len(is); i++) {
        int64_t v;
        CHECK(intset_get(is, i, &v));
        CHECK(v > prev || i == 0);
        prev = v;
    }
    CHECK_EQ_INT(intset_min(is), -((int64_t)1 << 40));
    CHECK_EQ_INT(intset_max(is), (int64_t)1 << 40);
    intset_free(is);
    return 0;
}

static int test_max_strlen_and_fits(void) {
    intset *is = intset_new();
    is = intset_add(is, -5, NULL);
    is = intset_add(is, 10, NULL);
    CHECK_EQ_INT(intset_max_strlen(is), 2);
    is = intset_add(is, INT64_MIN, NULL);
    CHECK_EQ_INT(intset_max_strlen(is), 20); /* "-9223372036854775808" */
    CHECK(intset_fits(is, 4));
    CHECK(!intset_fits(is, 3));
    intset_free(is);
    return 0;
}

static int test_validate(void) {
    intset *is = intset_new();
    for (int v = 0; v < 10; v++) is = intset_add(is, v * 1000, NULL);
    size_t n = intset_blob_len(is);
    CHECK(intset_validate(is, n, true));
    CHECK(!intset_validate(is, n - 1, false)); /* size mismatch */
    CHECK(!intset_validate(is, 7, false));     /* shorter than a header */
    intset *bad = intset_dup(is);
    bad->width = 3;
    CHECK(!intset_validate(bad, n, false));
    bad->width = 2;
    /* swap two cells: shallow passes, deep catches the disorder */
    uint8_t tmp[2];
    memcpy(tmp, bad->cells, 2);
    memcpy(bad->cells, bad->cells + 2, 2);
    memcpy(bad->cells + 2, tmp, 2);
    CHECK(intset_validate(bad, n, false));
    CHECK(!intset_validate(bad, n, true));
    /* a duplicate is also out of order */
    memcpy(bad->cells, bad->cells + 2, 2);
    CHECK(!intset_validate(bad, n, true));
    intset_free(bad);
    intset_free(is);
    return 0;
}

static int64_t rand_value(int round) {
    /* Mostly small values (many collisions), sometimes each wider class. */
    switch (random() % 8) {
        case 0: return (int64_t)(random() % 70000) - 35000;
        case 1:
            if (round > 2000) return ((int64_t)random() << 20) - ((int64_t)1 << 50);
            return random() % 50;
        default: return (int64_t)(random() % 400) - 200;
    }
}

static int test_random_vs_model(void) {
    srandom(12345);
    enum { CAP = 5000 };
    static int64_t model[CAP];
    uint32_t n = 0;
    intset *is = intset_new();
    for (int round = 0; round < 20000; round++) {
        int64_t v = rand_value(round);
        uint32_t pos = 0;
        while (pos < n && model[pos] < v) pos++;
        bool present = pos < n && model[pos] == v;
        bool changed;
        if (random() % 3 != 0 && n < CAP) {
            is = intset_add(is, v, &changed);
            CHECK(changed == !present);
            if (!present) {
                memmove(model + pos + 1, model + pos, (n - pos) * sizeof(*model));
                model[pos] = v;
                n++;
            }
        } else {
            is = intset_remove(is, v, &changed);
            CHECK(changed == present);
            if (present) {
                memmove(model + pos, model + pos + 1, (n - pos - 1) * sizeof(*model));
                n--;
            }
        }
        CHECK_EQ_INT(intset_len(is), n);
        if (round % 500 == 0 && check_against_model(is, model, n)) return 1;
        if (n && round % 97 == 0) CHECK(intset_find(is, intset_random(is)));
    }
    if (check_against_model(is, model, n)) return 1;
    CHECK(intset_mem_usage(is) >= intset_blob_len(is));
    intset_free(is);
    return 0;
}

int main(void) {
    RUN_TEST(test_empty);
    RUN_TEST(test_add_duplicates);
    RUN_TEST(test_width_edges);
    RUN_TEST(test_upgrade_keeps_order);
    RUN_TEST(test_max_strlen_and_fits);
    RUN_TEST(test_validate);
    RUN_TEST(test_random_vs_model);
    return TEST_REPORT("intset");
}
