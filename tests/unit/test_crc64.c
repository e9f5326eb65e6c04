/* test_crc64.c: the RDB checksum: the standard check value, and the
 * 8-byte-slice path agreeing with byte-at-a-time at every alignment. */
#include "crc64.h"
#include "test_help.h"

static int test_check_value(void) {
    /* CRC-64/Jones of "123456789", the value Redis's own test prints. */
    CHECK(crc64_update(0, "123456789", 9) == 0xe9c6d914c4b8d9caULL);
    return 0;
}

static int test_slices_match_bytes(void) {
    unsigned char buf[4096];
    for (int i = 0; i < (int)sizeof(buf); i++) buf[i] = (unsigned char)(i * 131 + 7);
    for (int off = 0; off < 8; off++) {
        for (size_t len = 0; len < 300; len += 7) {
            uint64_t whole = crc64_update(0, buf + off, len), bytes = 0;
            for (size_t i = 0; i < len; i++) bytes = crc64_update(bytes, buf + off + i, 1);
            CHECK(whole == bytes);
        }
    }
    /* Incremental updates over arbitrary splits give the same result. */
    uint64_t a = crc64_update(crc64_update(0, buf, 1000), buf + 1000, 3096);
    CHECK(a == crc64_update(0, buf, sizeof(buf)));
    return 0;
}

int main(void) {
    RUN_TEST(test_check_value);
    RUN_TEST(test_slices_match_bytes);
    return TEST_REPORT("crc64");
}
