/* test_crc16.c: CRC-16/XMODEM's standard check value, and cluster key
 * slots against what Debian's redis-server 7.0.15 in cluster mode answers
 * to CLUSTER KEYSLOT for the same keys (hash tags included). */
#include "crc16.h"
#include "test_help.h"

static int test_check_value(void) {
    CHECK_EQ_INT(crc16("123456789", 9), 0x31c3); /* CRC-16/XMODEM check */
    CHECK_EQ_INT(crc16("", 0), 0);
    return 0;
}

static int test_redis_slots(void) {
    static const struct {
        const char *key;
        unsigned slot;
    } v[] = {
        {"", 0},
        {"foo", 12182},
        {"bar", 5061},
        {"{user1000}.following", 3443},
        {"{user1000}.followers", 3443},
        {"foo{}{bar}", 8363},
        {"foo{{bar}}zap", 4015},
        {"foo{bar}{zap}", 5061},
        {"{}", 15257},
        {"a{b", 13340},
        {"123456789", 12739},
        {"hello world", 15332},
        {"\\xff", 9804},
    };
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) CHECK_EQ_INT(crc16_key_slot(v[i].key, strlen(v[i].key)), v[i].slot);
    return 0;
}

/* The two-bytes-a-step loop agrees with the plain bitwise definition at
 * every length and alignment. */
static uint16_t crc16_bitwise(const unsigned char *p, size_t len) {
    uint16_t crc = 0;
    for (size_t i = 0; i < len; i++) {
        crc ^= (uint16_t)(p[i] << 8);
        for (int b = 0; b < 8; b++) crc = (uint16_t)((crc & 0x8000) ? (crc << 1) ^ 0x1021 : crc << 1);
    }
    return crc;
}

static int test_matches_bitwise(void) {
    unsigned char buf[300];
    for (size_t i = 0; i < sizeof(buf); i++) buf[i] = (unsigned char)(i * 167 + 13);
    for (size_t off = 0; off < 3; off++)
        for (size_t len = 0; len + off <= sizeof(buf); len += 7)
            CHECK_EQ_INT(crc16((const char *)buf + off, len), crc16_bitwise(buf + off, len));
    return 0;
}

int main(void) {
    RUN_TEST(test_matches_bitwise);
    RUN_TEST(test_check_value);
    RUN_TEST(test_redis_slots);
    return TEST_REPORT("crc16");
}
