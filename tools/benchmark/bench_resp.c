/* bench_resp.c: counts complete RESP replies without copying them (see
 * bench_resp.h).  State machine: either skipping bulk payload bytes
 * (bulk_left > 0) or expecting a header line "<type><text>\r\n".  Scalars
 * complete one element; aggregates push a level that completes when its
 * last element does.  Invariant: depth == 0 and bulk_left == 0 between
 * top-level replies. */
#include "bench_resp.h"

#include <string.h>

void bench_resp_init(bench_resp_t *r) {
    memset(r, 0, sizeof(*r));
}

/* An element finished: close every aggregate it completes.  Returns 1 when a
 * top-level reply (not an attribute) is now complete. */
static int resp_element_done(bench_resp_t *r) {
    while (r->depth > 0) {
        if (--r->remaining[r->depth - 1] > 0)
            return 0;
        r->depth--;
        if (r->depth == 0 && r->is_attr[0])
            return 0; /* an attribute precedes the real reply */
    }
    return 1;
}

static int64_t resp_parse_int(const char *p, const char *end, int *ok) {
    int neg = 0;
    int64_t v = 0;
    *ok = 0;
    if (p < end && *p == '-') {
        neg = 1;
        p++;
    }
    if (p == end)
        return 0;
    for (; p < end; p++) {
        if (*p < '0' || *p > '9')
            return 0;
        v = v * 10 + (*p - '0');
        if (v > (int64_t)1 << 50)
            return 0;
    }
    *ok = 1;
    return neg ? -v : v;
}

long bench_resp_feed(bench_resp_t *r, const char *buf, size_t len, bench_resp_out_t *out) {
    size_t pos = 0;
    memset(out, 0, sizeof(*out));
    while (pos < len) {
        int complete = 0;
        if (r->bulk_left > 0) {
            size_t take = len - pos;
            if ((int64_t)take > r->bulk_left)
                take = (size_t)r->bulk_left;
            pos += take;
            r->bulk_left -= (int64_t)take;
            if (r->bulk_left > 0)
                break;
            complete = resp_element_done(r);
        } else {
            const char *line = buf + pos;
            const char *nl = memchr(line, '\n', len - pos);
            if (!nl)
                break; /* partial header line: caller keeps it */
            const char *end = nl > line && nl[-1] == '\r' ? nl - 1 : nl;
            pos = (size_t)(nl - buf) + 1;
            int ok = 1;
            int64_t n = 0;
            char type = line[0];
            switch (type) {
                case '-':
                    if (r->depth == 0) {
                        r->top_error = 1;
                        if (!out->err) {
                            out->err = line + 1;
                            out->err_len = (size_t)(end - line - 1);
                        }
                    }
                    /* fall through */
                case '+':
                case ':':
                case '_':
                case ',':
                case '#':
                case '(':
                    complete = resp_element_done(r);
                    break;
                case '!':
                    if (r->depth == 0)
                        r->top_error = 1;
                    /* fall through */
                case '$':
                case '=':
                    n = resp_parse_int(line + 1, end, &ok);
                    if (!ok)
                        return -1;
                    if (n < 0) {
                        complete = resp_element_done(r);
                    } else {
                        r->bulk_left = n + 2;
                        continue;
                    }
                    break;
                case '*':
                case '~':
                case '>':
                case '%':
                case '|':
                    n = resp_parse_int(line + 1, end, &ok);
                    if (!ok)
                        return -1;
                    if (type == '%' || type == '|')
                        n *= 2;
                    if (n <= 0) {
                        complete = resp_element_done(r);
                        break;
                    }
                    if (r->depth == BENCH_RESP_MAX_DEPTH)
                        return -1;
                    r->remaining[r->depth] = n;
                    r->is_attr[r->depth] = type == '|';
                    r->depth++;
                    continue;
                default:
                    return -1;
            }
        }
        if (complete) {
            int was_error = r->top_error;
            out->replies++;
            out->errors += (uint32_t)was_error;
            r->top_error = 0;
            if (was_error && r->stop_on_error)
                break;
        }
    }
    return (long)pos;
}
