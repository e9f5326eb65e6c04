/* resp.c: incremental RESP2 request parser (see resp.h for the contract).
 *
 * A multibulk request moves through: '*' header -> for each element a '$'
 * header (bulk_len set) -> the payload + CRLF.  `pending` counts elements
 * left; when it reaches 0 the request is done.  An inline request is one
 * line, split with sds_splitargs.  Nothing here allocates except argv growth
 * and the caller's make_arg. */
#include "resp.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "sds.h"
#include "util.h"
#include "zmalloc.h"

#define RESP_MIN_ARG_BYTES 6 /* "$0\r\n\r\n": the shortest element */

void resp_parser_init(resp_parser_t *p, resp_make_arg_fn *make, resp_free_arg_fn *free_arg, void *ctx) {
    memset(p, 0, sizeof(*p));
    p->bulk_len = -1;
    p->make_arg = make;
    p->free_arg = free_arg;
    p->ctx = ctx;
}

static void drop_args(resp_parser_t *p) {
    for (int i = 0; i < p->argc; i++) p->free_arg(p->ctx, p->argv[i]);
    p->argc = 0;
}

void resp_reset(resp_parser_t *p) {
    p->kind = 0;
    p->pending = 0;
    p->bulk_len = -1;
    p->argc = 0;
    /* A huge argv from one big request is not kept around. */
    if (p->argv_cap > 1024) {
        zfree(p->argv);
        p->argv = NULL;
        p->argv_cap = 0;
    }
}

void resp_parser_free(resp_parser_t *p) {
    drop_args(p);
    zfree(p->argv);
    p->argv = NULL;
    p->argv_cap = 0;
}

void **resp_take_argv(resp_parser_t *p, int *argc) {
    *argc = p->argc;
    return p->argv;
}

static void reserve(resp_parser_t *p, long n) {
    if (n <= p->argv_cap) return;
    p->argv = zrealloc(p->argv, sizeof(void *) * (size_t)n);
    p->argv_cap = (int)n;
}

static int fail(resp_parser_t *p, const char *msg) {
    drop_args(p);
    p->error = msg;
    return RESP_ERR;
}

static void push_arg(resp_parser_t *p, const char *s, size_t len) {
    reserve(p, p->argc + 1 > p->argv_cap ? (p->argv_cap ? p->argv_cap * 2 : 8) : p->argv_cap);
    p->argv[p->argc++] = p->make_arg(p->ctx, s, len);
}

/* Words separated by blanks, no quoting: arguments straight from the buffer. */
static void split_plain(resp_parser_t *p, const char *s, size_t len) {
    size_t i = 0;
    while (i < len) {
        while (i < len && isspace((unsigned char)s[i])) i++;
        size_t b = i;
        while (i < len && !isspace((unsigned char)s[i])) i++;
        if (i > b) push_arg(p, s + b, i - b);
    }
}

/* Quoted words: the shell-like rules of sds_splitargs. */
static int split_quoted(resp_parser_t *p, const char *s, size_t len) {
    char line_stack[256];
    char *line = len < sizeof(line_stack) ? line_stack : zmalloc(len + 1);
    memcpy(line, s, len);
    line[len] = '\0';
    int argc;
    sds *tokens = sds_splitargs(line, &argc);
    if (line != line_stack) zfree(line);
    if (!tokens) return -1;
    for (int i = 0; i < argc; i++) push_arg(p, tokens[i], sds_len(tokens[i]));
    sds_free_splitres(tokens, argc);
    return 0;
}

static int parse_inline(resp_parser_t *p, const char *buf, size_t len, size_t *pos) {
    const char *start = buf + *pos;
    const char *nl = memchr(start, '\n', len - *pos);
    if (!nl) {
        if (len - *pos > RESP_INLINE_MAX) return fail(p, "Protocol error: too big inline request");
        return RESP_NEED_MORE;
    }
    size_t linelen = (size_t)(nl - start);
    if (linelen > RESP_INLINE_MAX) return fail(p, "Protocol error: too big inline request");
    if (linelen && start[linelen - 1] == '\r') linelen--;
    *pos = (size_t)(nl - buf) + 1;
    if (!memchr(start, '"', linelen) && !memchr(start, '\'', linelen)) {
        split_plain(p, start, linelen); /* the common case: no quoting */
    } else if (split_quoted(p, start, linelen) != 0) {
        return fail(p, "Protocol error: unbalanced quotes in request");
    }
    p->kind = 'i';
    return RESP_DONE; /* argc may be 0: an empty line, which the caller skips */
}

/* Read a "<prefix><integer>\r\n" header at *pos; returns 1 done, 0 need more,
 * -1 malformed number.  too_big_msg is used when the line grows without end. */
static __attribute__((noinline)) int read_header_slow(const char *buf, size_t len, size_t *pos, long long *out, const char **err,
                                                      const char *too_big_msg) {
    const char *start = buf + *pos + 1;
    const char *cr = memchr(start, '\r', len - *pos - 1);
    if (!cr) {
        if (len - *pos > RESP_INLINE_MAX) {
            *err = too_big_msg;
            return -1;
        }
        return 0;
    }
    if (cr + 1 >= buf + len) return 0; /* wait for the \n */
    if (!util_str2ll(start, (size_t)(cr - start), out)) {
        *err = NULL;
        return -1;
    }
    *pos = (size_t)(cr - buf) + 2;
    return 1;
}

/* read_header_slow's contract.  The usual header, "$3\r\n" (up to 18
 * digits without sign or leading zero, so no overflow), is read here in
 * one pass, inline in the parser; anything else (a sign, "0", more digits,
 * a header cut short) takes the general path, which also gives the
 * errors. */
static inline int read_header(const char *buf, size_t len, size_t *pos, long long *out, const char **err,
                              const char *too_big_msg) {
    const char *start = buf + *pos + 1, *end = buf + len, *q = start;
    if (q < end && *q >= '1' && *q <= '9') {
        long long v = *q++ - '0';
        while (q < end && *q >= '0' && *q <= '9' && q - start < 18) v = v * 10 + (*q++ - '0');
        if (q + 1 < end && *q == '\r') {
            *out = v;
            *pos = (size_t)(q - buf) + 2;
            return 1;
        }
    }
    return read_header_slow(buf, len, pos, out, err, too_big_msg);
}

static int parse_multibulk(resp_parser_t *p, const char *buf, size_t len, size_t *pos, const resp_limits_t *lim) {
    const char *err = NULL;
    if (p->kind == 0) {
        long long n;
        int r = read_header(buf, len, pos, &n, &err, "Protocol error: too big mbulk count string");
        if (r == 0) return RESP_NEED_MORE;
        if (r < 0 || n > INT_MAX) return fail(p, err ? err : "Protocol error: invalid multibulk length");
        if (lim->unauthenticated && n > 10) return fail(p, "Protocol error: unauthenticated multibulk length");
        if (n > 0 && !util_count_fits((uint64_t)n, 0, 0, RESP_MBULK_MAX))
            return fail(p, "Protocol error: invalid multibulk length");
        p->kind = '*';
        if (n <= 0) return RESP_DONE; /* "*0" or "*-1": an empty request, skipped */
        p->pending = (long)n;
        /* argv is sized for the elements the bytes at hand can hold (the
         * rest grows by doubling as they arrive), never for the count
         * alone: "*1000000" costs nothing until the arguments come. */
        size_t avail = len - *pos;
        reserve(p, util_count_fits((uint64_t)n, RESP_MIN_ARG_BYTES, avail, 1024) ? n : 8);
    }
    while (p->pending > 0) {
        if (p->bulk_len == -1) {
            if (*pos >= len) return RESP_NEED_MORE;
            if (buf[*pos] != '$') {
                /* Redis's text names the byte it found instead of '$'. */
                snprintf(p->errbuf, sizeof(p->errbuf), "Protocol error: expected '$', got '%c'", buf[*pos]);
                return fail(p, p->errbuf);
            }
            long long bl;
            int r = read_header(buf, len, pos, &bl, &err, "Protocol error: too big bulk count string");
            if (r == 0) return RESP_NEED_MORE;
            if (r < 0 || bl < 0 || bl > lim->max_bulk_len) return fail(p, err ? err : "Protocol error: invalid bulk length");
            if (lim->unauthenticated && bl > 16384) return fail(p, "Protocol error: unauthenticated bulk length");
            p->bulk_len = bl;
        }
        if (len - *pos < (size_t)p->bulk_len + 2) return RESP_NEED_MORE;
        reserve(p, p->argc + 1 > p->argv_cap ? p->argv_cap * 2 : p->argv_cap);
        p->argv[p->argc++] = p->make_arg(p->ctx, buf + *pos, (size_t)p->bulk_len);
        *pos += (size_t)p->bulk_len + 2;
        p->bulk_len = -1;
        p->pending--;
    }
    return RESP_DONE;
}

int resp_parse(resp_parser_t *p, const char *buf, size_t len, size_t *pos, const resp_limits_t *lim) {
    if (*pos >= len) return RESP_NEED_MORE;
    if (p->kind == '*' || (p->kind == 0 && buf[*pos] == '*')) return parse_multibulk(p, buf, len, pos, lim);
    return parse_inline(p, buf, len, pos);
}

/* "<prefix><n>\r\n" without printf: this runs for every argument of every
 * logged write (printf was 15% of the server's CPU with -P 16). */
static sds cat_header(sds buf, char prefix, long long n) {
    char hdr[32];
    hdr[0] = prefix;
    size_t h = 1 + (size_t)util_ll2str(hdr + 1, sizeof(hdr) - 3, n);
    hdr[h++] = '\r';
    hdr[h++] = '\n';
    return sds_catlen(buf, hdr, h);
}

sds resp_cat_command(sds buf, int argc, const char **argv, const size_t *lens) {
    buf = cat_header(buf, '*', argc);
    for (int i = 0; i < argc; i++) {
        buf = cat_header(buf, '$', (long long)lens[i]);
        buf = sds_catlen(buf, argv[i], lens[i]);
        buf = sds_catlen(buf, "\r\n", 2);
    }
    return buf;
}
