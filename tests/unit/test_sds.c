/* test_sds.c: unit tests of the sds string library. */
#include "sds.h"
#include "test_help.h"
#include "zmalloc.h"

static int test_basic(void) {
    sds s = sds_new("foo");
    CHECK_EQ_INT(sds_len(s), 3);
    s = sds_cat(s, "bar");
    CHECK_EQ_INT(sds_len(s), 6);
    CHECK(strcmp(s, "foobar") == 0);
    s = sds_catprintf(s, "%d-%s", 42, "x");
    CHECK(strcmp(s, "foobar42-x") == 0);
    sds_range(s, 1, -2);
    CHECK(strcmp(s, "oobar42-") == 0);
    sds_range(s, 100, 200);
    CHECK_EQ_INT(sds_len(s), 0);
    sds_free(s);
    return 0;
}

static int test_binary_and_growth(void) {
    sds s = sds_newlen("a\0b", 3);
    CHECK_EQ_INT(sds_len(s), 3);
    /* Grow across every header type boundary and verify content. */
    for (int i = 0; i < 70000; i++) s = sds_catlen(s, "x", 1);
    CHECK_EQ_INT(sds_len(s), 70003);
    CHECK(s[1] == '\0' && s[2] == 'b' && s[70002] == 'x' && s[70003] == '\0');
    CHECK(sds_alloc(s) >= sds_len(s));
    sds_free(s);
    sds big = sds_growzero(sds_empty(), 300);
    CHECK_EQ_INT(sds_len(big), 300);
    CHECK(big[299] == 0);
    sds_free(big);
    return 0;
}

static int test_cmp_and_ll(void) {
    sds a = sds_new("abc"), b = sds_new("abd"), c = sds_new("ab");
    CHECK(sds_cmp(a, b) < 0);
    CHECK(sds_cmp(a, c) > 0);
    CHECK(sds_cmp(a, a) == 0);
    sds n = sds_fromll(-9223372036854775807LL - 1);
    CHECK(strcmp(n, "-9223372036854775808") == 0);
    sds_free(a);
    sds_free(b);
    sds_free(c);
    sds_free(n);
    return 0;
}

static int test_splitargs(void) {
    int argc;
    sds *v = sds_splitargs("set \"a b\" 'c\\'d' \"\\x41\\n\"", &argc);
    CHECK(v != NULL);
    CHECK_EQ_INT(argc, 4);
    CHECK(strcmp(v[1], "a b") == 0);
    CHECK(strcmp(v[2], "c'd") == 0);
    CHECK(strcmp(v[3], "A\n") == 0);
    sds_free_splitres(v, argc);
    CHECK(sds_splitargs("get \"unterminated", &argc) == NULL);
    CHECK(sds_splitargs("get \"a\"b", &argc) == NULL);
    v = sds_splitargs("   ", &argc);
    CHECK(v != NULL && argc == 0);
    sds_free_splitres(v, argc);
    return 0;
}

static int test_embed_and_accounting(void) {
    size_t before = zmalloc_used_memory();
    char buf[300];
    /* Up to 31 bytes: the one-byte header (length in the flags byte). */
    CHECK_EQ_INT(sds_embed_size(16), 1 + 16 + 1);
    sds e = sds_embed(buf, "key:000000000001", 16);
    CHECK_EQ_INT(sds_len(e), 16);
    CHECK_EQ_INT(sds_avail(e), 0);
    CHECK_EQ_INT(sds_hdr_len(e), 1);
    CHECK(strcmp(e, "key:000000000001") == 0);
    sds d = sds_dup(e); /* an ordinary heap copy */
    CHECK(sds_cmp(d, e) == 0 && sds_len(d) == 16);
    d = sds_cat(d, "x");
    CHECK_EQ_INT(sds_len(d), 17);
    sds_free(d);
    CHECK_EQ_INT(sds_len(sds_embed(buf, "", 0)), 0);
    char big[300];
    memset(big, 'a', sizeof(big));
    CHECK_EQ_INT(sds_embed_size(31), 1 + 31 + 1);
    CHECK_EQ_INT(sds_len(sds_embed(buf, big, 31)), 31);
    CHECK_EQ_INT(sds_embed_size(32), 3 + 32 + 1); /* past T5: the 8-bit header */
    e = sds_embed(buf, big, 32);
    CHECK_EQ_INT(sds_len(e), 32);
    CHECK_EQ_INT(sds_embed_size(256), 5 + 256 + 1);
    CHECK_EQ_INT(sds_len(sds_embed(buf, big, 256)), 256);
    sds_setlen(sds_embed(buf, big, 20), 5); /* shrinking a T5 string */
    CHECK_EQ_INT(sds_len(buf + 1), 5);
    sds s = sds_new("hello");
    CHECK(zmalloc_used_memory() >= before + 9);
    sds_free(s);
    CHECK_EQ_INT(zmalloc_used_memory(), before);
    return 0;
}

static int test_repr(void) {
    sds r = sds_catrepr(sds_empty(), "a\"\n\x01", 4);
    CHECK(strcmp(r, "\"a\\\"\\n\\x01\"") == 0);
    sds_free(r);
    return 0;
}

int main(void) {
    RUN_TEST(test_basic);
    RUN_TEST(test_binary_and_growth);
    RUN_TEST(test_cmp_and_ll);
    RUN_TEST(test_splitargs);
    RUN_TEST(test_embed_and_accounting);
    RUN_TEST(test_repr);
    return TEST_REPORT("sds");
}
