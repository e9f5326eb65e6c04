/* bench_workload.h: what the benchmark sends.
 *
 * bench_tests_build() turns the options into the list of tests (the default
 * redis-benchmark list, a -t selection, a --ratio mix or a custom command),
 * each holding one or two command templates.  A bench_gen_t (one per worker
 * thread) draws keys, value sizes and command choices; a bench_batch_t (one
 * per connection) holds up to -P requests pre-built in one buffer and only
 * rewrites the 12-digit key numbers between batches.  No allocation after
 * bench_batch_init(); called by bench_engine.c. */
#ifndef RL_BENCH_WORKLOAD_H
#define RL_BENCH_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "bench_opts.h"

#define BENCH_RAND_TAG "__rand_int__"
#define BENCH_RAND_LEN 12 /* strlen(BENCH_RAND_TAG) == digits written */
#define BENCH_MAX_RAND_PER_ARG 8

typedef struct bench_arg {
    const char *text; /* literal bytes (unused for a value argument) */
    uint32_t len;
    uint8_t is_value;                          /* the payload: -d bytes or a drawn size */
    uint8_t nrand;                             /* __rand_int__ tags to rewrite (0 without -r) */
    uint32_t rand_pos[BENCH_MAX_RAND_PER_ARG]; /* their offsets in text */
} bench_arg_t;

typedef struct bench_cmd {
    int argc;
    bench_arg_t *argv;
    int is_inline;   /* sent as "PING\r\n" rather than multibulk */
    uint32_t weight; /* share of requests in a mixed test */
} bench_cmd_t;

#define BENCH_MAX_CMDS 2

typedef struct bench_test {
    char *name; /* as printed: "SET", "LRANGE_100 (first 100 elements)" */
    bench_cmd_t cmds[BENCH_MAX_CMDS];
    int ncmds;
    int variable; /* requests differ in shape: rebuild every batch */
    int one_draw; /* every __rand_int__ of a request gets the same number (--cluster MSET) */
} bench_test_t;

/* Builds the test list; returns the count (0 means nothing selected) and
 * stores a malloc'd array in *out. */
int bench_tests_build(const bench_opts_t *o, bench_test_t **out);
void bench_tests_free(bench_test_t *v, int n);
/* Upper bound of one request's bytes for test t. */
size_t bench_test_max_request(const bench_opts_t *o, const bench_test_t *t);

/* Per-thread generator state. */
typedef struct bench_gen {
    const bench_opts_t *o;
    const bench_test_t *t;
    uint64_t rng;                /* splitmix64 state */
    uint64_t seq, seq_step;      /* sequential key pattern */
    double zipf_a;               /* keyspace^(1-s) - 1, for --key-pattern zipf */
    uint64_t zipf_mul, zipf_add; /* rank -> key: (rank * mul + add) % keyspace */
    uint32_t cmd_weight_total, size_weight_total;
    const char *payload; /* shared value bytes, >= max value size */
} bench_gen_t;

void bench_gen_init(bench_gen_t *g, const bench_opts_t *o, const bench_test_t *t,
                    const char *payload, int thread_idx, int nthreads);
uint64_t bench_gen_rand(bench_gen_t *g);
/* Next key number in 0..keyspace-1 following --key-pattern. */
uint64_t bench_gen_key(bench_gen_t *g);

/* The value bytes every thread copies from (random letters, made once). */
char *bench_payload_create(uint32_t size, uint64_t seed);

/* One connection's request buffer.  Invariant: bytes [0, slot_end[i]) hold
 * requests 0..i; rand_offs[rand_end[i-1] .. rand_end[i]) locate request i's
 * key numbers; kinds[i] says which template request i came from. */
typedef struct bench_batch {
    char *buf;
    size_t cap;
    int slots; /* -P */
    size_t *slot_end;
    uint32_t *rand_end;
    uint32_t *rand_offs;
    uint32_t rand_cap;
    uint8_t *kinds;
} bench_batch_t;

int bench_batch_init(bench_batch_t *b, bench_gen_t *g, int slots);
void bench_batch_free(bench_batch_t *b);
/* Prepares the first k (<= slots) requests; returns their byte length. */
size_t bench_batch_next(bench_batch_t *b, bench_gen_t *g, int k);

#endif
