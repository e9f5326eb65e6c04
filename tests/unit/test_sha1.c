/* test_sha1.c: SHA-1 against the standard's test vectors, and incremental
 * updates over every split agreeing with one-shot hashing. */
#include <string.h>

#include "sha1.h"
#include "test_help.h"

static int test_vectors(void) {
    char hex[41];
    sha1_hex("", 0, hex);
    CHECK(strcmp(hex, "da39a3ee5e6b4b0d3255bfef95601890afd80709") == 0);
    sha1_hex("abc", 3, hex);
    CHECK(strcmp(hex, "a9993e364706816aba3e25717850c26c9cd0d89d") == 0);
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sha1_hex(two, strlen(two), hex);
    CHECK(strcmp(hex, "84983e441c3bd26ebaae4aa1f95129e5e54670f1") == 0);
    /* Redis names "return 1" by this digest (EVALSHA clients rely on it). */
    sha1_hex("return 1", 8, hex);
    CHECK(strcmp(hex, "e0e1f9fabfc9d4800c877a703b823ac0578ff8db") == 0);
    return 0;
}

static int test_million_a(void) {
    sha1_ctx c;
    unsigned char chunk[1000], d[20];
    memset(chunk, 'a', sizeof(chunk));
    sha1_init(&c);
    for (int i = 0; i < 1000; i++) sha1_update(&c, chunk, sizeof(chunk));
    sha1_final(&c, d);
    static const unsigned char want[20] = {0x34, 0xaa, 0x97, 0x3c, 0xd4, 0xc4, 0xda, 0xa4, 0xf6, 0x1e,
                                           0xeb, 0x2b, 0xdb, 0xad, 0x27, 0x31, 0x65, 0x34, 0x01, 0x6f};
    CHECK(memcmp(d, want, 20) == 0);
    return 0;
}

static int test_splits(void) {
    unsigned char buf[300];
    for (int i = 0; i < 300; i++) buf[i] = (unsigned char)(i * 7 + 3);
    unsigned char whole[20], parts[20];
    sha1_ctx c;
    sha1_init(&c);
    sha1_update(&c, buf, sizeof(buf));
    sha1_final(&c, whole);
    for (size_t cut = 0; cut <= sizeof(buf); cut += 13) {
        sha1_init(&c);
        sha1_update(&c, buf, cut);
        sha1_update(&c, buf + cut, sizeof(buf) - cut);
        sha1_final(&c, parts);
        CHECK(memcmp(whole, parts, 20) == 0);
    }
    return 0;
}

int main(void) {
    RUN_TEST(test_vectors);
    RUN_TEST(test_million_a);
    RUN_TEST(test_splits);
    return TEST_REPORT("sha1");
}
