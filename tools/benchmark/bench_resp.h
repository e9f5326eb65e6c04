/* bench_resp.h: incremental RESP2/RESP3 reply skipper for the benchmark.
 *
 * The benchmark never needs reply contents, only how many complete top-level
 * replies arrived and which were errors.  bench_resp_feed() walks bytes as
 * they come off the socket, keeping only a small nesting stack and a count of
 * bulk bytes still to skip, so bulk payloads are never copied.  Pure: no I/O,
 * no allocation; called by bench_engine.c and bench_net.c. */
#ifndef RL_BENCH_RESP_H
#define RL_BENCH_RESP_H

#include <stddef.h>
#include <stdint.h>

#define BENCH_RESP_MAX_DEPTH 32

typedef struct bench_resp {
    int depth;                               /* open aggregates */
    int64_t remaining[BENCH_RESP_MAX_DEPTH]; /* elements still due per level */
    uint8_t is_attr[BENCH_RESP_MAX_DEPTH];   /* level is a |attribute| */
    int64_t bulk_left;                       /* payload+CRLF bytes to skip */
    int top_error;                           /* current top reply is -ERR/!bulk */
    int stop_on_error;                       /* return right after an error reply (--cluster) */
} bench_resp_t;

typedef struct bench_resp_out {
    uint32_t replies; /* complete top-level replies seen in this call */
    uint32_t errors;  /* of which error replies */
    const char *err;  /* first error line in this call (inside buf), or NULL */
    size_t err_len;   /* its length, without CRLF */
} bench_resp_out_t;

void bench_resp_init(bench_resp_t *r);
/* Consumes as much of buf as forms whole lines or bulk bytes and returns the
 * number of bytes consumed; the unconsumed tail (always a partial header
 * line, so short) must be fed again with more bytes appended.  Returns -1 on
 * a protocol violation.  out is overwritten.  With stop_on_error set, a
 * call returns right after the first error reply, which is then the last
 * reply counted in out. */
long bench_resp_feed(bench_resp_t *r, const char *buf, size_t len, bench_resp_out_t *out);

#endif
