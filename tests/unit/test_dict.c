/* test_dict.c: unit tests of the hash table: random operations checked
 * against a model, incremental rehash, embedded keys, scan guarantees. */
#include <stdlib.h>

#include "dict.h"
#include "sds.h"
#include "test_help.h"
#include "zmalloc.h"

static dict_type plain_type = {dict_sds_hash, dict_sds_eq, NULL, dict_sds_free, NULL, false};
static dict_type emb_type = {dict_sds_hash, dict_sds_eq, NULL, NULL, NULL, true};

static sds key_of(int i) { return sds_catprintf(sds_empty(), "key:%012d", i); }

static int run_model(dict_type *type) {
    enum { N = 5000 };
    static int present[N];
    memset(present, 0, sizeof(present));
    dict *d = dict_create(type);
    srandom(42);
    size_t count = 0;
    for (int op = 0; op < 60000; op++) {
        int k = (int)(random() % N);
        sds key = key_of(k);
        int r = (int)(random() % 3);
        if (r < 2) {
            int added = dict_add(d, key, (void *)(long)(k + 1)) == DICT_OK;
            CHECK(added == !present[k]);
            if (added) {
                present[k] = 1;
                count++;
                if (type->embed_key) sds_free(key);
            } else sds_free(key);
        } else {
            int deleted = dict_delete(d, key) == DICT_OK;
            CHECK(deleted == present[k]);
            if (deleted) {
                present[k] = 0;
                count--;
            }
            dict_shrink_if_needed(d);
            sds_free(key);
        }
        CHECK_EQ_INT(dict_size(d), count);
    }
    for (int k = 0; k < N; k++) {
        sds key = key_of(k);
        dict_entry *de = dict_find(d, key);
        CHECK((de != NULL) == present[k]);
        if (de) {
            CHECK_EQ_INT((long)dict_get_val(de), k + 1);
            CHECK(sds_cmp(dict_get_key(d, de), key) == 0);
        }
        sds_free(key);
    }
    dict_release(d);
    return 0;
}

static int test_model_plain(void) { return run_model(&plain_type); }
static int test_model_embedded(void) { return run_model(&emb_type); }

static int test_iter_and_safe_delete(void) {
    dict *d = dict_create(&emb_type);
    for (int i = 0; i < 1000; i++) {
        sds k = key_of(i);
        dict_add(d, k, NULL);
        sds_free(k);
    }
    dict_iter it;
    dict_iter_init(&it, d, true);
    dict_entry *de;
    int seen = 0;
    while ((de = dict_next(&it)) != NULL) {
        seen++;
        dict_delete(d, dict_get_key(d, de));
    }
    dict_iter_release(&it);
    CHECK_EQ_INT(seen, 1000);
    CHECK_EQ_INT(dict_size(d), 0);
    CHECK_EQ_INT(d->pause_rehash, 0);
    dict_release(d);
    return 0;
}

struct scan_ctx {
    dict *d;
    int *seen;
    int n;
};

static void scan_cb(void *p, const dict_entry *de) {
    struct scan_ctx *c = p;
    int k = atoi((char *)dict_get_key(c->d, de) + 4);
    if (k < c->n) c->seen[k] = 1;
}

static int test_scan_covers_all(void) {
    dict *d = dict_create(&emb_type);
    enum { N = 3000 };
    for (int i = 0; i < N; i++) {
        sds k = key_of(i);
        dict_add(d, k, NULL);
        sds_free(k);
    }
    static int seen[N];
    memset(seen, 0, sizeof(seen));
    unsigned long cursor = 0;
    int i = N;
    do {
        struct scan_ctx ctx = {d, seen, N};
        cursor = dict_scan(d, cursor, scan_cb, &ctx);
        /* Grow the table during the scan: no key present throughout may be missed. */
        if (i < N + 4000) {
            sds k = key_of(i++);
            dict_add(d, k, NULL);
            sds_free(k);
        }
    } while (cursor != 0);
    for (int k = 0; k < N; k++) CHECK(seen[k]);
    dict_release(d);
    return 0;
}

static int test_random_and_sample(void) {
    dict *d = dict_create(&emb_type);
    for (int i = 0; i < 100; i++) {
        sds k = key_of(i);
        dict_add(d, k, NULL);
        sds_free(k);
    }
    for (int i = 0; i < 100; i++) CHECK(dict_random_entry(d) != NULL);
    dict_entry *des[16];
    size_t n = dict_sample(d, des, 16);
    CHECK(n > 0 && n <= 16);
    dict_release(d);
    return 0;
}

/* dict_fair_random_entry: a chi-square over 500 entries stays where a
 * uniform draw puts it (df 499: mean 499, sd ~32), also mid-rehash. */
static int fair_chi2(dict *d, int n, int draws, double *chi2) {
    static long hits[500];
    memset(hits, 0, sizeof(hits));
    for (int i = 0; i < draws; i++) {
        dict_entry *de = dict_fair_random_entry(d);
        if (!de) return 1;
        hits[(long)dict_get_val(de) - 1]++;
    }
    double exp = (double)draws / n, x = 0;
    for (int i = 0; i < n; i++) x += (hits[i] - exp) * (hits[i] - exp) / exp;
    *chi2 = x;
    return 0;
}

static int test_fair_random_is_uniform(void) {
    dict *d = dict_create(&plain_type);
    srandom(7);
    for (int i = 0; i < 500; i++) dict_add(d, key_of(i), (void *)(long)(i + 1));
    double chi2;
    CHECK(fair_chi2(d, 500, 250000, &chi2) == 0);
    CHECK(chi2 < 650);
    dict_expand(d, 4096); /* rehashing: both tables are drawn from */
    CHECK(dict_is_rehashing(d));
    CHECK(fair_chi2(d, 500, 250000, &chi2) == 0);
    CHECK(chi2 < 650);
    dict_release(d);
    return 0;
}

static int test_memory_released(void) {
    size_t before = zmalloc_used_memory();
    dict *d = dict_create(&plain_type);
    for (int i = 0; i < 10000; i++) dict_add(d, key_of(i), NULL);
    CHECK(zmalloc_used_memory() > before + 10000 * 24);
    dict_release(d);
    CHECK_EQ_INT(zmalloc_used_memory(), before);
    return 0;
}

int main(void) {
    uint8_t seed[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    dict_set_hash_seed(seed);
    RUN_TEST(test_model_plain);
    RUN_TEST(test_model_embedded);
    RUN_TEST(test_iter_and_safe_delete);
    RUN_TEST(test_scan_covers_all);
    RUN_TEST(test_random_and_sample);
    RUN_TEST(test_fair_random_is_uniform);
    RUN_TEST(test_memory_released);
    return TEST_REPORT("dict");
}
