/* test_hll.c: the HyperLogLog format library (lib/hll.c): bytes identical
 * to a value Redis 7.0 made, the cached cardinality, sparse and dense
 * agreeing register for register, promotion at the size limit, corrupt
 * sparse bodies detected, and the estimator's error at several sizes. */
#include <stdio.h>

#include "hll.h"
#include "test_help.h"
#include "zmalloc.h"

/* PFADD h a b c on Redis 7.0.15, before PFCOUNT (stale cache flag set). */
static const unsigned char REDIS_ABC[] = "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80"
                                         "`\xf3\x80P\xb1\x84K\xfb\x80"
                                         "BZ";

static sds add_all(sds s, int from, int to, size_t sparse_max) {
    char buf[32];
    for (int i = from; i < to; i++) {
        int n = snprintf(buf, sizeof(buf), "elem:%d", i);
        hll_add(&s, (unsigned char *)buf, (size_t)n, sparse_max);
    }
    return s;
}

static int test_matches_redis_bytes(void) {
    sds s = hll_new();
    CHECK_EQ_INT(sds_len(s), HLL_HDR_SIZE + 2);
    CHECK(hll_header_ok((unsigned char *)s, sds_len(s)));
    CHECK_EQ_INT(hll_add(&s, (unsigned char *)"a", 1, 3000), 1);
    CHECK_EQ_INT(hll_add(&s, (unsigned char *)"b", 1, 3000), 1);
    CHECK_EQ_INT(hll_add(&s, (unsigned char *)"c", 1, 3000), 1);
    CHECK_EQ_INT(hll_add(&s, (unsigned char *)"a", 1, 3000), 0);
    CHECK_EQ_INT(sds_len(s), sizeof(REDIS_ABC) - 1);
    CHECK_MEM(s, REDIS_ABC, sizeof(REDIS_ABC) - 1);
    sds d = hll_sparse_decode((unsigned char *)s, sds_len(s));
    CHECK(strcmp(d, "Z:8436 v:1,1 Z:4274 v:2,1 Z:3068 v:1,1 Z:603") == 0);
    sds_free(d);
    bool inv = false;
    CHECK_EQ_INT(hll_count((unsigned char *)s, sds_len(s), &inv), 3);
    CHECK(!inv);
    sds_free(s);
    return 0;
}

static int test_cache_field(void) {
    unsigned char hdr[HLL_HDR_SIZE] = "HYLL";
    hll_cache_set(hdr, 0x0102030405060708ULL);
    CHECK(hll_cache_valid(hdr));
    CHECK(hll_cache_get(hdr) == 0x0102030405060708ULL);
    CHECK_EQ_INT(hdr[8], 0x08); /* little endian */
    hll_cache_invalidate(hdr);
    CHECK(!hll_cache_valid(hdr));
    return 0;
}

static int test_dense_registers(void) {
    unsigned char *regs = zcalloc(HLL_DENSE_SIZE);
    for (long i = 0; i < HLL_REGISTERS; i++) hll_dense_put(regs, i, (uint8_t)((i * 7) & 63));
    for (long i = 0; i < HLL_REGISTERS; i++) CHECK_EQ_INT(hll_dense_get(regs, i), (i * 7) & 63);
    /* Register 1 spans bytes 0 and 1: bits 6..11. */
    memset(regs, 0, HLL_DENSE_SIZE);
    hll_dense_put(regs, 1, 63);
    CHECK_EQ_INT(regs[0], 0xc0);
    CHECK_EQ_INT(regs[1], 0x0f);
    zfree(regs);
    return 0;
}

static int test_sparse_equals_dense(void) {
    sds sp = add_all(hll_new(), 0, 2000, 1u << 30);
    sds de = hll_new();
    CHECK(hll_to_dense(&de));
    de = add_all(de, 0, 2000, 0);
    CHECK_EQ_INT(hll_encoding((unsigned char *)sp), HLL_SPARSE);
    CHECK_EQ_INT(hll_encoding((unsigned char *)de), HLL_DENSE);
    bool inv = false;
    uint64_t a = hll_count((unsigned char *)sp, sds_len(sp), &inv);
    uint64_t b = hll_count((unsigned char *)de, sds_len(de), &inv);
    CHECK(!inv && a == b);
    CHECK(hll_to_dense(&sp));
    CHECK_EQ_INT(sds_len(sp), HLL_DENSE_SIZE);
    for (long i = 0; i < HLL_REGISTERS; i++)
        CHECK_EQ_INT(hll_dense_get((unsigned char *)sp + HLL_HDR_SIZE, i),
                     hll_dense_get((unsigned char *)de + HLL_HDR_SIZE, i));
    sds_free(sp);
    sds_free(de);
    return 0;
}

static int test_promotion_at_limit(void) {
    sds s = add_all(hll_new(), 0, 5000, 3000);
    CHECK_EQ_INT(hll_encoding((unsigned char *)s), HLL_DENSE);
    sds_free(s);
    s = add_all(hll_new(), 0, 100, 3000);
    CHECK_EQ_INT(hll_encoding((unsigned char *)s), HLL_SPARSE);
    CHECK(sds_len(s) <= 3000);
    /* A value above 32 cannot be sparse. */
    CHECK_EQ_INT(hll_raise(&s, 5, 40, 3000), 1);
    CHECK_EQ_INT(hll_encoding((unsigned char *)s), HLL_DENSE);
    CHECK_EQ_INT(hll_dense_get((unsigned char *)s + HLL_HDR_SIZE, 5), 40);
    sds_free(s);
    return 0;
}

static int test_corrupt_detected(void) {
    sds s = add_all(hll_new(), 0, 10, 3000);
    sds extra = sds_catlen(sds_dup(s), "\x7f\xff", 2); /* 16384 more zeros */
    bool inv = false;
    hll_count((unsigned char *)extra, sds_len(extra), &inv);
    CHECK(inv);
    uint8_t *max = zcalloc(HLL_REGISTERS);
    CHECK(!hll_merge_max(max, (unsigned char *)extra, sds_len(extra)));
    CHECK(!hll_to_dense(&extra));
    CHECK_EQ_INT(hll_add(&extra, (unsigned char *)"zz", 2, 3000) >= 0 ? 0 : -1, 0);
    sds_free(extra);
    sds cut = sds_dup(s);
    sds_setlen(cut, HLL_HDR_SIZE + 1); /* opcodes missing */
    inv = false;
    hll_count((unsigned char *)cut, sds_len(cut), &inv);
    CHECK(inv);
    CHECK(!hll_merge_max(max, (unsigned char *)cut, sds_len(cut)));
    sds_free(cut);
    /* Headers: bad magic, unknown encoding, dense of the wrong size. */
    unsigned char h[HLL_HDR_SIZE + 2];
    memcpy(h, s, sizeof(h));
    h[0] = 'X';
    CHECK(!hll_header_ok(h, sizeof(h)));
    memcpy(h, s, sizeof(h));
    h[4] = 2;
    CHECK(!hll_header_ok(h, sizeof(h)));
    h[4] = HLL_DENSE;
    CHECK(!hll_header_ok(h, sizeof(h)));
    CHECK(!hll_header_ok(h, 10));
    zfree(max);
    sds_free(s);
    return 0;
}

static int test_estimator_error(void) {
    sds s = hll_new();
    int sizes[] = {1, 10, 100, 1000, 10000, 100000};
    int done = 0;
    for (size_t k = 0; k < sizeof(sizes) / sizeof(*sizes); k++) {
        s = add_all(s, done, sizes[k], 3000);
        done = sizes[k];
        bool inv = false;
        double est = (double)hll_count((unsigned char *)s, sds_len(s), &inv);
        double err = est > done ? est - done : done - est;
        CHECK(!inv);
        CHECK(err <= done * 0.03 + 0.5); /* standard error 0.81% */
    }
    uint8_t zero[HLL_REGISTERS] = {0};
    CHECK_EQ_INT(hll_count_registers(zero), 0);
    sds_free(s);
    return 0;
}

static int test_murmur_tail_lengths(void) {
    /* Every tail length takes its own path; changing one byte of the key
     * must change the hash, and the same key must hash the same. */
    unsigned char key[16];
    for (int i = 0; i < 16; i++) key[i] = (unsigned char)(i + 1);
    for (size_t len = 1; len <= 16; len++) {
        uint64_t h = hll_murmur64a(key, len, 0xadc83b19ULL);
        CHECK(h == hll_murmur64a(key, len, 0xadc83b19ULL));
        key[len - 1] ^= 0x40;
        CHECK(h != hll_murmur64a(key, len, 0xadc83b19ULL));
        key[len - 1] ^= 0x40;
    }
    return 0;
}

int main(void) {
    RUN_TEST(test_matches_redis_bytes);
    RUN_TEST(test_cache_field);
    RUN_TEST(test_dense_registers);
    RUN_TEST(test_sparse_equals_dense);
    RUN_TEST(test_promotion_at_limit);
    RUN_TEST(test_corrupt_detected);
    RUN_TEST(test_estimator_error);
    RUN_TEST(test_murmur_tail_lengths);
    return TEST_REPORT("hll");
}
