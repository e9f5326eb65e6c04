/* test_aof_parse.c: the AOF command parser (aof_parse_command in
 * src/aof_load.c), which the loader and redis-like-check-aof share.  Every prefix
 * of a valid file must read as "truncated", never as a command or as
 * corruption; damage must be reported at the byte where it is; a count that
 * cannot fit in the bytes left must not size an allocation. */
#include <stdlib.h>
#include <string.h>

#include "aof.h"
#include "test_help.h"
#include "zmalloc.h"

static const char *TWO = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n"
                         "*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n";

static int test_parses_commands_in_sequence(void) {
    const unsigned char *b = (const unsigned char *)TWO;
    size_t len = strlen(TWO), pos = 0;
    aof_cmd_t cmd = {0};
    CHECK_EQ_INT(aof_parse_command(b, len, &pos, &cmd), AOF_PARSE_OK);
    CHECK_EQ_INT(cmd.argc, 3);
    CHECK_EQ_INT(cmd.len[2], 5);
    CHECK_MEM(b + cmd.off[2], "hello", 5);
    CHECK_EQ_INT(aof_parse_command(b, len, &pos, &cmd), AOF_PARSE_OK);
    CHECK_EQ_INT(cmd.argc, 2);
    CHECK_MEM(b + cmd.off[0], "DEL", 3);
    CHECK_EQ_INT(pos, len);
    aof_cmd_free(&cmd);
    return 0;
}

static int test_every_prefix_is_truncated(void) {
    size_t first = strlen("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n");
    for (size_t cut = 0; cut < first; cut++) {
        unsigned char *b = malloc(cut + 1);
        memcpy(b, TWO, cut);
        size_t pos = 0;
        aof_cmd_t cmd = {0};
        int rc = aof_parse_command(b, cut, &pos, &cmd);
        aof_cmd_free(&cmd);
        free(b);
        if (rc != AOF_PARSE_TRUNCATED) {
            fprintf(stderr, "  cut at %zu gave %d\n", cut, rc);
            CHECK(rc == AOF_PARSE_TRUNCATED);
        }
    }
    return 0;
}

static int test_corruption_names_the_byte(void) {
    const char *bad = "*2\r\n$3\r\nGETx\r\n$1\r\nk\r\n"; /* bulk longer than announced */
    size_t pos = 0;
    aof_cmd_t cmd = {0};
    CHECK_EQ_INT(aof_parse_command((const unsigned char *)bad, strlen(bad), &pos, &cmd), AOF_PARSE_CORRUPT);
    CHECK_EQ_INT(pos, 11); /* the 'x' where CRLF should be */
    pos = 0;
    CHECK_EQ_INT(aof_parse_command((const unsigned char *)"#junk\r\n", 7, &pos, &cmd), AOF_PARSE_CORRUPT);
    pos = 0;
    CHECK_EQ_INT(aof_parse_command((const unsigned char *)"*0\r\n", 4, &pos, &cmd), AOF_PARSE_CORRUPT);
    pos = 0;
    CHECK_EQ_INT(aof_parse_command((const unsigned char *)"*1\r\n+OK\r\n+OK\r\n", 14, &pos, &cmd), AOF_PARSE_CORRUPT);
    aof_cmd_free(&cmd);
    return 0;
}

static int test_hostile_count_allocates_nothing(void) {
    /* 3e9 arguments announced, 20 bytes follow: the count is checked against
     * what can follow before it sizes the offset arrays. */
    const char *hostile = "*3000000000\r\n$3\r\nSET\r\n";
    size_t before = zmalloc_used_memory(), pos = 0;
    aof_cmd_t cmd = {0};
    int rc = aof_parse_command((const unsigned char *)hostile, strlen(hostile), &pos, &cmd);
    CHECK(rc != AOF_PARSE_OK);
    CHECK(cmd.cap < 1000);
    CHECK(zmalloc_used_memory() - before < 4096);
    pos = 0;
    const char *overflow = "*99999999999999999999\r\n";
    CHECK_EQ_INT(aof_parse_command((const unsigned char *)overflow, strlen(overflow), &pos, &cmd), AOF_PARSE_CORRUPT);
    aof_cmd_free(&cmd);
    return 0;
}

int main(void) {
    RUN_TEST(test_parses_commands_in_sequence);
    RUN_TEST(test_every_prefix_is_truncated);
    RUN_TEST(test_corruption_names_the_byte);
    RUN_TEST(test_hostile_count_allocates_nothing);
    return TEST_REPORT("aof_parse");
}
