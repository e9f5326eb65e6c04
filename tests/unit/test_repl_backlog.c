/* test_repl_backlog.c: the replication backlog (src/repl_backlog.c): the
 * offset invariants of repl_state.h hold through wrap-around, oversized
 * appends and resizes, and a read from any held offset returns exactly
 * the stream's bytes from there (checked against a flat copy). */
#include <stdlib.h>
#include <string.h>

#include "repl_state.h"
#include "test_help.h"

static char flat[1 << 16]; /* every byte ever appended; stream offset o is flat[o - 1] */
static long long flat_len;

typedef struct collect {
    char buf[1 << 16];
    size_t len;
} collect_t;

static collect_t got;

static void gather(void *arg, const char *p, size_t len) {
    collect_t *c = arg;
    memcpy(c->buf + c->len, p, len);
    c->len += len;
}

static void feed(repl_backlog_t *b, size_t n, unsigned seed) {
    char tmp[4096];
    for (size_t i = 0; i < n; i++) tmp[i] = (char)('a' + (seed + i) % 26);
    backlog_append(b, tmp, n);
    memcpy(flat + flat_len, tmp, n);
    flat_len += (long long)n;
}

/* Everything the backlog claims to hold matches the stream. */
static int check_all(repl_backlog_t *b) {
    CHECK_EQ_INT(b->first_off + (long long)b->histlen, flat_len + 1);
    CHECK(b->histlen <= b->size);
    for (long long from = b->first_off; from <= flat_len + 1; from += 7) {
        got.len = 0;
        backlog_foreach_from(b, from, gather, &got);
        CHECK_EQ_INT(got.len, flat_len + 1 - from);
        CHECK_MEM(got.buf, flat + from - 1, got.len);
    }
    CHECK(!backlog_has(b, b->first_off - 1) || b->first_off == 1);
    CHECK(!backlog_has(b, flat_len + 2));
    return 0;
}

static int test_wraps_and_reads_back(void) {
    flat_len = 0;
    repl_backlog_t *b = backlog_create(100, 1);
    CHECK(backlog_has(b, 1)); /* empty: "nothing missing" is held */
    for (unsigned i = 0; i < 40; i++) {
        feed(b, 1 + (i * 13) % 37, i);
        if (check_all(b)) return 1;
    }
    feed(b, 250, 3); /* one append bigger than the buffer */
    if (check_all(b)) return 1;
    CHECK_EQ_INT(b->histlen, 100);
    backlog_free(b);
    return 0;
}

static int test_resize_keeps_newest(void) {
    flat_len = 0;
    repl_backlog_t *b = backlog_create(64, 1);
    feed(b, 150, 1);
    backlog_resize(b, 32); /* shrink: the newest 32 bytes stay */
    CHECK_EQ_INT(b->histlen, 32);
    if (check_all(b)) return 1;
    backlog_resize(b, 200); /* grow: history kept, room for more */
    if (check_all(b)) return 1;
    feed(b, 100, 2);
    if (check_all(b)) return 1;
    CHECK_EQ_INT(b->histlen, 132);
    backlog_free(b);
    return 0;
}

static int test_starts_at_any_offset(void) {
    flat_len = 0;
    repl_backlog_t *b = backlog_create(50, 1001); /* a history that began elsewhere */
    CHECK(backlog_has(b, 1001) && !backlog_has(b, 1000) && !backlog_has(b, 1002));
    backlog_append(b, "hello", 5);
    CHECK(backlog_has(b, 1003) && backlog_has(b, 1006) && !backlog_has(b, 1007));
    got.len = 0;
    backlog_foreach_from(b, 1003, gather, &got);
    CHECK_EQ_INT(got.len, 3);
    CHECK_MEM(got.buf, "llo", 3);
    backlog_free(b);
    return 0;
}

int main(void) {
    RUN_TEST(test_wraps_and_reads_back);
    RUN_TEST(test_resize_keeps_newest);
    RUN_TEST(test_starts_at_any_offset);
    return TEST_REPORT("test_repl_backlog");
}
