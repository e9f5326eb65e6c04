/* test_resp.c: the RESP request parser (src/resp.c) on its own: whole and
 * split requests, pipelines, inline commands with quoting, every malformed
 * input the server must reject with its exact text, the limits (including
 * the tighter ones before AUTH), and who owns the arguments.
 *
 * Arguments are made by a counting callback, so each test can check that no
 * argument leaks or is freed twice whatever path the parser took. */
#include <stdlib.h>
#include <string.h>

#include "resp.h"
#include "test_help.h"
#include "zmalloc.h"

typedef struct arg {
    size_t len;
    char bytes[];
} arg_t;

static long live_args; /* made and not yet freed */

static void *make_arg(void *ctx, const char *p, size_t len) {
    (void)ctx;
    arg_t *a = zmalloc(sizeof(*a) + len + 1);
    a->len = len;
    memcpy(a->bytes, p, len);
    a->bytes[len] = '\0';
    live_args++;
    return a;
}

static void free_arg(void *ctx, void *a) {
    (void)ctx;
    live_args--;
    zfree(a);
}

static const resp_limits_t LIM = {512LL * 1024 * 1024, false};
static const resp_limits_t LIM_NOAUTH = {512LL * 1024 * 1024, true};

/* The caller's side of a completed request: take argv, free each arg. */
static void consume(resp_parser_t *p) {
    int argc;
    void **argv = resp_take_argv(p, &argc);
    for (int i = 0; i < argc; i++) free_arg(NULL, argv[i]);
    resp_reset(p);
}

static bool arg_is(resp_parser_t *p, int i, const char *want, size_t len) {
    arg_t *a = p->argv[i];
    return a->len == len && memcmp(a->bytes, want, len) == 0;
}
#define ARG_IS(p, i, s) arg_is((p), (i), (s), sizeof(s) - 1)

/* Parse a whole buffer expecting one error; returns the error text. */
static const char *parse_error(const char *buf, size_t len, const resp_limits_t *lim) {
    resp_parser_t p;
    resp_parser_init(&p, make_arg, free_arg, NULL);
    size_t pos = 0;
    int r = resp_parse(&p, buf, len, &pos, lim);
    const char *err = r == RESP_ERR ? p.error : NULL;
    resp_parser_free(&p);
    return err;
}

static int test_simple_multibulk(void) {
    const char req[] = "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n";
    resp_parser_t p;
    resp_parser_init(&p, make_arg, free_arg, NULL);
    size_t pos = 0;
    CHECK_EQ_INT(resp_parse(&p, req, sizeof(req) - 1, &pos, &LIM), RESP_DONE);
    CHECK_EQ_INT(pos, sizeof(req) - 1);
    CHECK_EQ_INT(p.argc, 3);
    CHECK(ARG_IS(&p, 0, "SET") && ARG_IS(&p, 1, "key") && ARG_IS(&p, 2, "value"));
    CHECK(!resp_in_request(&p) || p.kind == '*');
    consume(&p);
    CHECK(!resp_in_request(&p));
    CHECK_EQ_INT(live_args, 0);
    resp_parser_free(&p);
    return 0;
}

static int test_binary_bulk(void) {
    const char req[] = "*2\r\n$4\r\nECHO\r\n$6\r\na\r\n\0\xff"
                       "b\r\n";
    resp_parser_t p;
    resp_parser_init(&p, make_arg, free_arg, NULL);
    size_t pos = 0;
    CHECK_EQ_INT(resp_parse(&p, req, sizeof(req) - 1, &pos, &LIM), RESP_DONE);
    CHECK(arg_is(&p, 1, "a\r\n\0\xff"
                        "b",
                 6));
    consume(&p);
    resp_parser_free(&p);
    CHECK_EQ_INT(live_args, 0);
    return 0;
}

/* Every prefix of the request is "need more"; the full one completes, and
 * the parser never consumes past what it was given. */
static int split_byte_by_byte(const char *req, size_t len, int want_argc) {
    resp_parser_t p;
    resp_parser_init(&p, make_arg, free_arg, NULL);
    size_t pos = 0;
    for (size_t n = 1; n < len; n++) {
        CHECK_EQ_INT(resp_parse(&p, req, n, &pos, &LIM), RESP_NEED_MORE);
        CHECK(pos <= n);
    }
    CHECK_EQ_INT(resp_parse(&p, req, len, &pos, &LIM), RESP_DONE);
    CHECK_EQ_INT(pos, len);
    CHECK_EQ_INT(p.argc, want_argc);
    consume(&p);
    resp_parser_free(&p);
    CHECK_EQ_INT(live_args, 0);
    return 0;
}

static int test_split_inputs(void) {
    const char mb[] = "*3\r\n$3\r\nSET\r\n$10\r\nabcdefghij\r\n$0\r\n\r\n";
    if (split_byte_by_byte(mb, sizeof(mb) - 1, 3)) return 1;
    const char in[] = "SET key \"quoted value\"\r\n";
    if (split_byte_by_byte(in, sizeof(in) - 1, 3)) return 1;
    return 0;
}

static int test_pipeline(void) {
    const char req[] = "*1\r\n$4\r\nPING\r\nPING\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n";
    resp_parser_t p;
    resp_parser_init(&p, make_arg, free_arg, NULL);
    size_t pos = 0, len = sizeof(req) - 1;
    int argcs[3], n = 0;
    while (pos < len) {
        CHECK_EQ_INT(resp_parse(&p, req, len, &pos, &LIM), RESP_DONE);
        argcs[n++] = p.argc;
        consume(&p);
    }
    CHECK_EQ_INT(n, 3);
    CHECK(argcs[0] == 1 && argcs[1] == 1 && argcs[2] == 2);
    CHECK_EQ_INT(resp_parse(&p, req, len, &pos, &LIM), RESP_NEED_MORE);
    resp_parser_free(&p);
    CHECK_EQ_INT(live_args, 0);
    return 0;
}

static int test_inline_quoting(void) {
    const char req[] = "SET q \"a b\\x41\\n\" 'it\\'s'  plain\r\n";
    resp_parser_t p;
    resp_parser_init(&p, make_arg, free_arg, NULL);
    size_t pos = 0;
    CHECK_EQ_INT(resp_parse(&p, req, sizeof(req) - 1, &pos, &LIM), RESP_DONE);
    CHECK_EQ_INT(p.argc, 5);
    CHECK(ARG_IS(&p, 0, "SET") && ARG_IS(&p, 1, "q") && ARG_IS(&p, 2, "a bA\n"));
    CHECK(ARG_IS(&p, 3, "it's") && ARG_IS(&p, 4, "plain"));
    consume(&p);
    /* A bare LF ends a line too; an empty line is a request of 0 args. */
    const char lf[] = "PING\n\r\n";
    pos = 0;
    CHECK_EQ_INT(resp_parse(&p, lf, sizeof(lf) - 1, &pos, &LIM), RESP_DONE);
    CHECK(p.argc == 1 && ARG_IS(&p, 0, "PING"));
    consume(&p);
    CHECK_EQ_INT(resp_parse(&p, lf, sizeof(lf) - 1, &pos, &LIM), RESP_DONE);
    CHECK_EQ_INT(p.argc, 0);
    CHECK_EQ_INT(pos, sizeof(lf) - 1);
    consume(&p);
    resp_parser_free(&p);
    CHECK_EQ_INT(live_args, 0);
    return 0;
}

static int test_empty_multibulk(void) {
    const char req[] = "*0\r\n*-1\r\n";
    resp_parser_t p;
    resp_parser_init(&p, make_arg, free_arg, NULL);
    size_t pos = 0;
    CHECK_EQ_INT(resp_parse(&p, req, sizeof(req) - 1, &pos, &LIM), RESP_DONE);
    CHECK_EQ_INT(p.argc, 0);
    consume(&p);
    CHECK_EQ_INT(resp_parse(&p, req, sizeof(req) - 1, &pos, &LIM), RESP_DONE);
    CHECK_EQ_INT(p.argc, 0);
    CHECK_EQ_INT(pos, sizeof(req) - 1);
    consume(&p);
    resp_parser_free(&p);
    return 0;
}

static int expect_error(const char *buf, size_t len, const resp_limits_t *lim, const char *want) {
    const char *err = parse_error(buf, len, lim);
    if (!err || strcmp(err, want) != 0) {
        fprintf(stderr, "  input %.40s: got '%s', want '%s'\n", buf, err ? err : "(none)", want);
        return 1;
    }
    CHECK_EQ_INT(live_args, 0);
    return 0;
}
#define EXPECT_ERROR(lit, lim, want) CHECK(expect_error((lit), sizeof(lit) - 1, (lim), (want)) == 0)

static int test_malformed_inputs(void) {
    EXPECT_ERROR("*1\r\n$x\r\n", &LIM, "Protocol error: invalid bulk length");
    EXPECT_ERROR("*abc\r\n", &LIM, "Protocol error: invalid multibulk length");
    EXPECT_ERROR("*1\r\nfoo\r\n", &LIM, "Protocol error: expected '$', got 'f'");
    EXPECT_ERROR("*1\r\n$-5\r\n", &LIM, "Protocol error: invalid bulk length");
    EXPECT_ERROR("*1\r\n$ 5\r\n", &LIM, "Protocol error: invalid bulk length");
    EXPECT_ERROR("*3000000000\r\n", &LIM, "Protocol error: invalid multibulk length");
    EXPECT_ERROR("*1048577\r\n", &LIM, "Protocol error: invalid multibulk length");
    EXPECT_ERROR("SET a \"unbalanced\r\n", &LIM, "Protocol error: unbalanced quotes in request");
    EXPECT_ERROR("SET a 'x'y\r\n", &LIM, "Protocol error: unbalanced quotes in request");
    EXPECT_ERROR("*1\r\n$600000000\r\n", &LIM, "Protocol error: invalid bulk length");
    /* An argument already made is freed when a later one is malformed. */
    EXPECT_ERROR("*3\r\n$1\r\na\r\n$1\r\nb\r\nX", &LIM, "Protocol error: expected '$', got 'X'");
    return 0;
}

static int test_oversized_lines(void) {
    size_t n = 70 * 1024;
    char *buf = malloc(n + 8);
    memset(buf, 'A', n);
    const char *err = parse_error(buf, n, &LIM);
    CHECK(err && !strcmp(err, "Protocol error: too big inline request"));
    /* Exactly at the limit without a newline is still only "need more". */
    resp_parser_t p;
    resp_parser_init(&p, make_arg, free_arg, NULL);
    size_t pos = 0;
    CHECK_EQ_INT(resp_parse(&p, buf, RESP_INLINE_MAX, &pos, &LIM), RESP_NEED_MORE);
    resp_parser_free(&p);
    memcpy(buf, "*1\r\n$", 5);
    memset(buf + 5, '1', n - 5);
    err = parse_error(buf, n, &LIM);
    CHECK(err && !strcmp(err, "Protocol error: too big bulk count string"));
    buf[0] = '*';
    memset(buf + 1, '1', n - 1);
    err = parse_error(buf, n, &LIM);
    CHECK(err && !strcmp(err, "Protocol error: too big mbulk count string"));
    free(buf);
    CHECK_EQ_INT(live_args, 0);
    return 0;
}

static int test_configurable_bulk_limit(void) {
    resp_limits_t small = {1024 * 1024, false};
    EXPECT_ERROR("*1\r\n$1048577\r\n", &small, "Protocol error: invalid bulk length");
    CHECK(parse_error("*1\r\n$1048576\r\n", 14, &small) == NULL);
    return 0;
}

static int test_unauthenticated_limits(void) {
    EXPECT_ERROR("*11\r\n", &LIM_NOAUTH, "Protocol error: unauthenticated multibulk length");
    EXPECT_ERROR("*2\r\n$4\r\nAUTH\r\n$16385\r\n", &LIM_NOAUTH, "Protocol error: unauthenticated bulk length");
    CHECK(parse_error("*10\r\n", 5, &LIM_NOAUTH) == NULL);
    CHECK(parse_error("*1\r\n$16384\r\n", 12, &LIM_NOAUTH) == NULL);
    CHECK(parse_error("*11\r\n$16385\r\n", 13, &LIM) == NULL);
    CHECK_EQ_INT(live_args, 0);
    return 0;
}

static int test_free_mid_request(void) {
    const char req[] = "*3\r\n$1\r\na\r\n$1\r\nb\r\n$5\r\nhel";
    resp_parser_t p;
    resp_parser_init(&p, make_arg, free_arg, NULL);
    size_t pos = 0;
    CHECK_EQ_INT(resp_parse(&p, req, sizeof(req) - 1, &pos, &LIM), RESP_NEED_MORE);
    CHECK(resp_in_request(&p));
    CHECK_EQ_INT(live_args, 2);
    resp_parser_free(&p); /* a client closing mid-request */
    CHECK_EQ_INT(live_args, 0);
    return 0;
}

static int test_many_arguments(void) {
    int n = 3000;
    size_t cap = 16 + (size_t)n * 16, len = 0;
    char *buf = malloc(cap);
    len += (size_t)sprintf(buf, "*%d\r\n", n);
    for (int i = 0; i < n; i++) len += (size_t)sprintf(buf + len, "$%d\r\n%d\r\n", i < 10 ? 1 : i < 100 ? 2
                                                                                            : i < 1000  ? 3
                                                                                                        : 4,
                                                       i);
    resp_parser_t p;
    resp_parser_init(&p, make_arg, free_arg, NULL);
    size_t pos = 0;
    CHECK_EQ_INT(resp_parse(&p, buf, len, &pos, &LIM), RESP_DONE);
    CHECK_EQ_INT(p.argc, n);
    CHECK(ARG_IS(&p, 2999, "2999") && ARG_IS(&p, 0, "0"));
    consume(&p);
    CHECK(p.argv_cap <= 1024); /* a huge argv is not kept after reset */
    resp_parser_free(&p);
    free(buf);
    CHECK_EQ_INT(live_args, 0);
    return 0;
}

int main(void) {
    RUN_TEST(test_simple_multibulk);
    RUN_TEST(test_binary_bulk);
    RUN_TEST(test_split_inputs);
    RUN_TEST(test_pipeline);
    RUN_TEST(test_inline_quoting);
    RUN_TEST(test_empty_multibulk);
    RUN_TEST(test_malformed_inputs);
    RUN_TEST(test_oversized_lines);
    RUN_TEST(test_configurable_bulk_limit);
    RUN_TEST(test_unauthenticated_limits);
    RUN_TEST(test_free_mid_request);
    RUN_TEST(test_many_arguments);
    return TEST_REPORT("resp");
}
