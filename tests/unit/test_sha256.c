/* test_sha256.c: SHA-256 against FIPS 180-4's test vectors (and the digest
 * Redis stores for a known password), and incremental updates over every
 * split agreeing with one-shot hashing. */
#include <string.h>

#include "sha256.h"
#include "test_help.h"

static int test_vectors(void) {
    char hex[SHA256_HEX_LEN + 1];
    sha256_hex("", 0, hex);
    CHECK(strcmp(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") == 0);
    sha256_hex("abc", 3, hex);
    CHECK(strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0);
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sha256_hex(two, strlen(two), hex);
    CHECK(strcmp(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1") == 0);
    /* ACL SETUSER u >password: the hash ACL GETUSER shows in Redis. */
    sha256_hex("password", 8, hex);
    CHECK(strcmp(hex, "5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8") == 0);
    return 0;
}

static int test_million_a(void) {
    sha256_ctx c;
    unsigned char chunk[1000], d[SHA256_DIGEST_LEN];
    memset(chunk, 'a', sizeof(chunk));
    sha256_init(&c);
    for (int i = 0; i < 1000; i++) sha256_update(&c, chunk, sizeof(chunk));
    sha256_final(&c, d);
    static const unsigned char want[SHA256_DIGEST_LEN] = {
        0xcd, 0xc7, 0x6e, 0x5c, 0x99, 0x14, 0xfb, 0x92, 0x81, 0xa1, 0xc7, 0xe2, 0x84, 0xd7, 0x3e, 0x67,
        0xf1, 0x80, 0x9a, 0x48, 0xa4, 0x97, 0x20, 0x0e, 0x04, 0x6d, 0x39, 0xcc, 0xc7, 0x11, 0x2c, 0xd0};
    CHECK(memcmp(d, want, sizeof(want)) == 0);
    return 0;
}

static int test_splits(void) {
    unsigned char buf[300];
    for (int i = 0; i < 300; i++) buf[i] = (unsigned char)(i * 7 + 3);
    unsigned char whole[SHA256_DIGEST_LEN], parts[SHA256_DIGEST_LEN];
    sha256_ctx c;
    sha256_init(&c);
    sha256_update(&c, buf, sizeof(buf));
    sha256_final(&c, whole);
    for (size_t cut = 0; cut <= sizeof(buf); cut += 13) {
        sha256_init(&c);
        sha256_update(&c, buf, cut);
        sha256_update(&c, buf + cut, sizeof(buf) - cut);
        sha256_final(&c, parts);
        CHECK(memcmp(whole, parts, sizeof(whole)) == 0);
    }
    return 0;
}

int main(void) {
    RUN_TEST(test_vectors);
    RUN_TEST(test_million_a);
    RUN_TEST(test_splits);
    return TEST_REPORT("sha256");
}
