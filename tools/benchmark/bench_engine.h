/* bench_engine.h: runs one test: threads, connections, the event loops.
 *
 * bench_engine_run() splits -c connections over --threads workers, each with
 * its own event loop (io_uring, or epoll as the fallback) and histogram (no
 * locks on the hot path), waits for all of them and merges their results.  Workers publish live counters that the
 * progress line and the memory sampler read with relaxed atomics.  Called by
 * main once per test. */
#ifndef RL_BENCH_ENGINE_H
#define RL_BENCH_ENGINE_H

#include <stdint.h>

#include "bench_opts.h"
#include "bench_workload.h"
#include "histogram.h"

#define BENCH_HIST_HIGHEST 60000000000ULL /* 60 s in ns */
#define BENCH_HIST_DIGITS 3

typedef struct bench_result {
    const bench_test_t *test;
    uint64_t requests;                   /* replies received */
    uint64_t errors;                     /* of which error replies */
    uint64_t moved, asked;               /* --cluster: -MOVED / -ASK replies followed */
    uint64_t kind_count[BENCH_MAX_CMDS]; /* replies per template (mixed tests) */
    char first_error[160];               /* text of the first error reply */
    double seconds;                      /* first send .. last reply */
    int clients, threads;                /* as actually used (clients <= -n) */
    const char *engine;                  /* "io_uring" or "epoll" */
    double cpu_user, cpu_sys;            /* this process's CPU seconds during the test */
    hist_t *hist;                        /* latency in ns; caller frees */
} bench_result_t;

/* Called about 4 times a second from the main thread while a test runs. */
typedef void (*bench_progress_fn)(const bench_test_t *t, uint64_t done,
                                  double elapsed, uint64_t p99_ns, void *arg);

/* Runs test t to completion.  Returns 0, or -1 with a message in err (server
 * unreachable, authentication failed, connection lost). */
int bench_engine_run(const bench_opts_t *o, const bench_test_t *t, const char *payload,
                     bench_progress_fn progress, void *parg,
                     bench_result_t *res, char *err, size_t errlen);

/* Replies received since the program started, over all threads. */
uint64_t bench_engine_live_done(void);

#endif
