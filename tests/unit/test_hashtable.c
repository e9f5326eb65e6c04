/* test_hashtable.c: unit tests of lib/hashtable: the basic operations, a
 * model-checked random test against a plain array map, the SCAN guarantee
 * under grow and shrink, safe iteration with deletion, sampling, the defrag
 * hook, incremental resizing and the memory per entry. */
#include <stdlib.h>

#include "hashtable.h"
#include "test_help.h"
#include "zmalloc.h"

/* Entries: an integer key and a value, the key inside the entry as the
 * keyspace's entries carry theirs. */
typedef struct item {
    uint64_t key;
    uint64_t val;
} item;

static uint64_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static const void *item_key(const void *e) { return &((const item *)e)->key; }
static uint64_t hash_u64(const void *k) { return mix64(*(const uint64_t *)k); }
/* A poor hash: 16 home buckets at most, so probe chains get long and the
 * everfull marks, wrap-around and rebuilds are exercised. */
static uint64_t hash_poor(const void *k) { return mix64(*(const uint64_t *)k % 16) ^ (*(const uint64_t *)k << 56); }
static bool eq_u64(const void *a, const void *b) { return *(const uint64_t *)a == *(const uint64_t *)b; }
static int freed;
static void item_free(void *e) {
    freed++;
    zfree(e);
}

static const ht_type good_type = {item_key, hash_u64, eq_u64, item_free};
static const ht_type poor_type = {item_key, hash_poor, eq_u64, item_free};

static item *new_item(uint64_t k, uint64_t v) {
    item *it = zmalloc(sizeof(*it));
    it->key = k;
    it->val = v;
    return it;
}

static int test_basic(void) {
    ht *t = ht_create(&good_type);
    CHECK(ht_size(t) == 0);
    void *e;
    uint64_t k = 7;
    CHECK(!ht_find(t, &k, &e));
    CHECK(ht_add(t, new_item(7, 70)));
    item *dup = new_item(7, 71);
    CHECK(!ht_add(t, dup));
    zfree(dup);
    CHECK(ht_find(t, &k, &e) && ((item *)e)->val == 70);
    /* Two-phase insert. */
    ht_position pos;
    uint64_t k8 = 8;
    CHECK(ht_find_position_for_insert(t, &k8, &pos, NULL));
    ht_insert_at_position(t, &pos, new_item(8, 80));
    void *existing = NULL;
    CHECK(!ht_find_position_for_insert(t, &k8, &pos, &existing));
    CHECK(((item *)existing)->val == 80);
    /* Replace the stored pointer with a copy. */
    item *copy = new_item(8, 81);
    CHECK(ht_replace_entry(t, existing, copy));
    zfree(existing);
    CHECK(ht_find(t, &k8, &e) && e == copy);
    /* Pop hands the entry back; delete frees it. */
    CHECK(ht_pop(t, &k8, &e) && e == copy);
    zfree(copy);
    freed = 0;
    CHECK(ht_delete(t, &k));
    CHECK_EQ_INT(freed, 1);
    CHECK(!ht_delete(t, &k));
    CHECK_EQ_INT(ht_size(t), 0);
    CHECK(ht_validate(t));
    ht_release(t);
    return 0;
}

/* Random operations checked after each one against an array indexed by
 * key: add, two-phase add, find, delete, pop, replace, expand, rehash
 * steps, random entry, and a safe iteration deleting as it goes. */
static int run_model(const ht_type *type, int nkeys, int ops, unsigned seed) {
    uint64_t *vals = zcalloc(sizeof(uint64_t) * (size_t)nkeys); /* 0: absent */
    ht *t = ht_create(type);
    srandom(seed);
    size_t count = 0;
    for (int op = 0; op < ops; op++) {
        uint64_t k = (uint64_t)(random() % nkeys);
        int r = (int)(random() % 100);
        void *e;
        if (r < 40) {
            uint64_t v = (uint64_t)op + 1;
            item *it = new_item(k, v);
            bool added = ht_add(t, it);
            CHECK(added == (vals[k] == 0));
            if (added) {
                vals[k] = v;
                count++;
            } else zfree(it);
        } else if (r < 50) {
            ht_position pos;
            void *ex = NULL;
            bool absent = ht_find_position_for_insert(t, &k, &pos, &ex);
            CHECK(absent == (vals[k] == 0));
            if (absent) {
                ht_insert_at_position(t, &pos, new_item(k, (uint64_t)op + 1));
                vals[k] = (uint64_t)op + 1;
                count++;
            } else CHECK(((item *)ex)->val == vals[k]);
        } else if (r < 65) {
            bool found = ht_find(t, &k, &e);
            CHECK(found == (vals[k] != 0));
            if (found) CHECK(((item *)e)->val == vals[k] && ((item *)e)->key == k);
        } else if (r < 80) {
            bool deleted = ht_delete(t, &k);
            CHECK(deleted == (vals[k] != 0));
            if (deleted) {
                vals[k] = 0;
                count--;
            }
        } else if (r < 88) {
            bool popped = ht_pop(t, &k, &e);
            CHECK(popped == (vals[k] != 0));
            if (popped) {
                CHECK(((item *)e)->key == k);
                zfree(e);
                vals[k] = 0;
                count--;
            }
        } else if (r < 93) {
            if (ht_find(t, &k, &e)) {
                item *moved = new_item(k, ((item *)e)->val);
                CHECK(ht_replace_entry(t, e, moved));
                zfree(e);
            }
        } else if (r < 95) {
            if (ht_random_entry(t, &e)) CHECK(vals[((item *)e)->key] == ((item *)e)->val);
            else CHECK(count == 0);
        } else if (r < 97) {
            ht_rehash_steps(t, (size_t)(random() % 4));
        } else if (r < 98) {
            ht_expand(t, count * 2 + 10);
        } else if (op % 7 == 0) {
            /* Safe iteration deleting every entry with an odd value. */
            ht_iter it;
            ht_iter_init(&it, t, true);
            size_t seen = 0;
            while (ht_next(&it, &e)) {
                item *x = e;
                CHECK(vals[x->key] == x->val);
                seen++;
                if (x->val & 1) {
                    uint64_t kk = x->key;
                    vals[kk] = 0;
                    count--;
                    CHECK(ht_delete(t, &kk));
                }
            }
            ht_iter_release(&it);
            CHECK_EQ_INT(seen, count + (seen - count));
        }
        CHECK_EQ_INT(ht_size(t), count);
        if (op % 997 == 0) CHECK(ht_validate(t));
    }
    CHECK(ht_validate(t));
    for (int k = 0; k < nkeys; k++) {
        uint64_t kk = (uint64_t)k;
        void *e;
        bool found = ht_find(t, &kk, &e);
        CHECK(found == (vals[k] != 0));
    }
    freed = 0;
    ht_release(t);
    CHECK_EQ_INT(freed, count);
    zfree(vals);
    return 0;
}

static int test_model_good_hash(void) { return run_model(&good_type, 3000, 200000, 1); }
static int test_model_small_keyspace(void) { return run_model(&good_type, 40, 50000, 2); }
static int test_model_poor_hash(void) { return run_model(&poor_type, 600, 60000, 3); }

/* SCAN's guarantee under resize.  Keys 0..stable-1 stay for the whole scan;
 * between scan calls, bursts of other keys come and go, so the table grows
 * and shrinks several times while the scan runs (and stops mid-resize).
 * Every stable key must be reported at least once; nothing that was never
 * inserted may be reported. */
typedef struct scan_seen {
    uint32_t *hits;
    size_t limit;
    bool bogus;
} scan_seen;

static void count_hit(void *p, void *e) {
    scan_seen *s = p;
    uint64_t k = ((item *)e)->key;
    if (k >= s->limit) s->bogus = true;
    else s->hits[k]++;
}

static int run_scan_resize(const ht_type *type, unsigned seed) {
    enum { STABLE = 2000,
           CHURN = 40000 };
    ht *t = ht_create(type);
    srandom(seed);
    for (uint64_t k = 0; k < STABLE; k++) CHECK(ht_add(t, new_item(k, k)));
    scan_seen s = {zcalloc(sizeof(uint32_t) * (STABLE + CHURN)), STABLE + CHURN, false};
    size_t cursor = 0, steps = 0, grows = 0, shrinks = 0;
    int8_t last_exp = t->exp[0];
    uint64_t next_churn = STABLE;
    do {
        cursor = ht_scan(t, cursor, count_hit, &s);
        steps++;
        /* Grow phase then shrink phase, alternating every 60 steps. */
        if ((steps / 60) % 2 == 0) {
            for (int i = 0; i < 300 && next_churn < STABLE + CHURN; i++, next_churn++)
                CHECK(ht_add(t, new_item(next_churn, 0)));
        } else {
            for (uint64_t k = STABLE; k < next_churn; k++) {
                if (random() % 3 == 0) ht_delete(t, &k);
            }
        }
        ht_rehash_steps(t, (size_t)(random() % 3));
        int8_t e = t->exp[ht_is_resizing(t) ? 1 : 0];
        if (e > last_exp) grows++;
        if (e < last_exp) shrinks++;
        last_exp = e;
        CHECK(steps < 10000000);
    } while (cursor != 0);
    CHECK(!s.bogus);
    for (int k = 0; k < STABLE; k++) {
        if (s.hits[k] == 0) fprintf(stderr, "  key %d never reported\n", k);
        CHECK(s.hits[k] >= 1);
    }
    CHECK(grows >= 1);
    CHECK(shrinks >= 1);
    zfree(s.hits);
    ht_release(t);
    return 0;
}

static int test_scan_under_resize(void) {
    for (unsigned seed = 1; seed <= 6; seed++)
        if (run_scan_resize(&good_type, seed)) return 1;
    return 0;
}

static int test_scan_under_resize_poor_hash(void) { return run_scan_resize(&poor_type, 11); }

/* Without modifications a scan reports every entry exactly once, also
 * when it starts in the middle of a resize. */
static int test_scan_exactly_once(void) {
    for (int mid_resize = 0; mid_resize < 2; mid_resize++) {
        ht *t = ht_create(&good_type);
        enum { N = 20000 };
        for (uint64_t k = 0; k < N; k++) CHECK(ht_add(t, new_item(k, k)));
        if (mid_resize) {
            CHECK(ht_expand(t, N * 4));
            ht_rehash_steps(t, 100);
            CHECK(ht_is_resizing(t));
        }
        scan_seen s = {zcalloc(sizeof(uint32_t) * N), N, false};
        size_t cursor = 0;
        do cursor = ht_scan(t, cursor, count_hit, &s);
        while (cursor);
        for (int k = 0; k < N; k++) CHECK_EQ_INT(s.hits[k], 1);
        zfree(s.hits);
        ht_release(t);
    }
    return 0;
}

static int test_safe_iter_delete_all(void) {
    ht *t = ht_create(&good_type);
    enum { N = 5000 };
    for (uint64_t k = 0; k < N; k++) CHECK(ht_add(t, new_item(k, k)));
    CHECK(ht_expand(t, N * 8)); /* iterate across both tables */
    ht_rehash_steps(t, 50);
    CHECK(ht_is_resizing(t));
    static uint8_t seen[N];
    memset(seen, 0, sizeof(seen));
    ht_iter it;
    ht_iter_init(&it, t, true);
    void *e;
    while (ht_next(&it, &e)) {
        uint64_t k = ((item *)e)->key;
        CHECK(seen[k] == 0);
        seen[k] = 1;
        CHECK(ht_delete(t, &k));
    }
    ht_iter_release(&it);
    for (int k = 0; k < N; k++) CHECK(seen[k]);
    CHECK_EQ_INT(ht_size(t), 0);
    CHECK(ht_validate(t));
    ht_release(t);
    return 0;
}

static int test_random_is_uniform(void) {
    ht *t = ht_create(&good_type);
    enum { N = 50,
           DRAWS = 100000 };
    for (uint64_t k = 0; k < N; k++) CHECK(ht_add(t, new_item(k, k)));
    int hits[N] = {0};
    srandom(5);
    for (int i = 0; i < DRAWS; i++) {
        void *e;
        CHECK(ht_random_entry(t, &e));
        hits[((item *)e)->key]++;
    }
    for (int k = 0; k < N; k++) CHECK(hits[k] > DRAWS / N * 8 / 10 && hits[k] < DRAWS / N * 12 / 10);
    void *out[16];
    size_t n = ht_sample(t, out, 16);
    CHECK_EQ_INT(n, 16);
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) CHECK(out[i] != out[j]);
    ht_release(t);
    return 0;
}

/* The defrag hook: every entry moves to a fresh copy, the table stores the
 * new addresses and every lookup finds the copy. */
static void *move_item(void *p, void *e) {
    (void)p;
    item *copy = new_item(((item *)e)->key, ((item *)e)->val + 1);
    zfree(e);
    return copy;
}

static void *move_block(void *priv, void *p) {
    (void)priv;
    size_t n = zmalloc_size(p);
    void *copy = zmalloc(n);
    memcpy(copy, p, n);
    zfree(p);
    return copy;
}

static int test_defrag_moves_entries(void) {
    ht *t = ht_create(&poor_type);
    enum { N = 3000 };
    for (uint64_t k = 0; k < N; k++) CHECK(ht_add(t, new_item(k, k)));
    size_t cursor = 0;
    do cursor = ht_scan_defrag(t, cursor, move_item, NULL);
    while (cursor);
    ht_defrag_tables(t, move_block, NULL);
    CHECK(ht_validate(t));
    for (uint64_t k = 0; k < N; k++) {
        void *e;
        CHECK(ht_find(t, &k, &e));
        CHECK(((item *)e)->val == k + 1);
    }
    ht_release(t);
    return 0;
}

/* Growth is spread out: an insert that starts a resize moves nothing
 * itself, and each later operation moves at most one non-empty bucket. */
static int test_incremental_resize(void) {
    ht *t = ht_create(&good_type);
    uint64_t k = 0;
    while (!ht_is_resizing(t) || ht_buckets(t) < 1024 + 2048) CHECK(ht_add(t, new_item(k++, 0)));
    size_t before = t->used[0];
    CHECK(before > 1000);
    long idx = t->rehash_idx;
    uint64_t probe = 1;
    ht_find(t, &probe, NULL);
    CHECK(t->rehash_idx - idx <= 11);
    CHECK(t->used[0] + 9 >= before);
    CHECK(!ht_rehash_us(t, 1000000));
    CHECK(!ht_is_resizing(t));
    CHECK(ht_validate(t));
    ht_release(t);
    return 0;
}

/* Bytes of table per entry at the keyspace benchmark's size: 1M entries in
 * 2^17 buckets of 64 bytes. */
static int test_memory_per_entry(void) {
    static const ht_type plain = {NULL, hash_u64, NULL, NULL};
    ht *t = ht_create(&plain);
    enum { N = 1000000 };
    /* The entries are fake addresses: the table never reads through a
     * pointer when the type has no entry_key callback. */
    uint64_t *keys = zmalloc(sizeof(uint64_t) * N);
    for (size_t i = 0; i < N; i++) keys[i] = i;
    static const ht_type by_addr = {NULL, hash_u64, eq_u64, NULL};
    ht_release(t);
    t = ht_create(&by_addr);
    for (size_t i = 0; i < N; i++) CHECK(ht_add(t, &keys[i]));
    ht_rehash_us(t, 10000000);
    CHECK_EQ_INT(ht_buckets(t), 1 << 17);
    CHECK(ht_mem_usage(t) < (size_t)9 * N);
    for (size_t i = 0; i < N; i += 1000) CHECK(ht_find(t, &keys[i], NULL));
    ht_release(t);
    zfree(keys);
    return 0;
}

/* Sampled entry bytes: all entries counted exactly with samples 0; a
 * sample of uniform entries scales to the same total; the empty table is
 * its handle and arrays only. */
static size_t item_bytes(const void *e) { return 100 + (((const item *)e)->val & 1); }

static int test_mem_usage_sampled(void) {
    ht *t = ht_create(&good_type);
    CHECK_EQ_INT(ht_mem_usage_sampled(t, 0, item_bytes), ht_mem_usage(t));
    for (uint64_t i = 0; i < 1000; i++) CHECK(ht_add(t, new_item(i, i)));
    size_t base = ht_mem_usage(t);
    CHECK_EQ_INT(ht_mem_usage_sampled(t, 0, item_bytes), base + 1000 * 100 + 500);
    size_t est = ht_mem_usage_sampled(t, 10, item_bytes);
    CHECK(est >= base + 1000 * 100 && est <= base + 1000 * 101);
    ht_release(t);
    return 0;
}

int main(void) {
    RUN_TEST(test_basic);
    RUN_TEST(test_model_good_hash);
    RUN_TEST(test_model_small_keyspace);
    RUN_TEST(test_model_poor_hash);
    RUN_TEST(test_scan_under_resize);
    RUN_TEST(test_scan_under_resize_poor_hash);
    RUN_TEST(test_scan_exactly_once);
    RUN_TEST(test_safe_iter_delete_all);
    RUN_TEST(test_random_is_uniform);
    RUN_TEST(test_defrag_moves_entries);
    RUN_TEST(test_incremental_resize);
    RUN_TEST(test_memory_per_entry);
    RUN_TEST(test_mem_usage_sampled);
    return TEST_REPORT("hashtable");
}
