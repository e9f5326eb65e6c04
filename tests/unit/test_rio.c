/* test_rio.c: the writer's memory mode (DUMP payloads): bytes land in the
 * sds in order, the CRC covers exactly them, and the fd mode's CRC agrees
 * for the same bytes. */
#include <unistd.h>

#include "crc64.h"
#include "rio.h"
#include "test_help.h"

static rio_t r1, r2; /* 64 KB each: kept off the stack */

static int test_mem_collects_bytes(void) {
    rio_init_mem(&r1, true);
    rio_write(&r1, "abc", 3);
    for (int i = 0; i < 70000; i++) rio_write(&r1, "x", 1); /* past the inline buffer's size */
    CHECK(rio_flush(&r1) == 0);
    sds s = rio_take_mem(&r1);
    CHECK_EQ_INT(sds_len(s), 70003);
    CHECK(memcmp(s, "abcxx", 5) == 0);
    CHECK(r1.crc == crc64_update(0, s, sds_len(s)));
    CHECK(r1.written == 70003);
    sds_free(s);
    return 0;
}

static int test_fd_and_mem_agree(void) {
    int fd[2];
    CHECK(pipe(fd) == 0);
    rio_init(&r2, fd[1], true);
    rio_init_mem(&r1, true);
    rio_write(&r2, "hello world", 11);
    rio_write(&r1, "hello world", 11);
    CHECK(rio_flush(&r2) == 0);
    char buf[16];
    CHECK(read(fd[0], buf, sizeof(buf)) == 11);
    CHECK(memcmp(buf, "hello world", 11) == 0);
    CHECK(r1.crc == r2.crc);
    sds_free(rio_take_mem(&r1));
    close(fd[0]);
    close(fd[1]);
    return 0;
}

int main(void) {
    RUN_TEST(test_mem_collects_bytes);
    RUN_TEST(test_fd_and_mem_agree);
    return TEST_REPORT("rio");
}
