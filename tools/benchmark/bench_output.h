/* bench_output.h: everything the benchmark prints or writes about results.
 *
 * Text output in redis-benchmark 7's shape (per-test block, -q one-liners,
 * --csv header and rows), the live progress line, and the --json document.
 * Called by main after each test; reads results, never touches sockets. */
#ifndef RL_BENCH_OUTPUT_H
#define RL_BENCH_OUTPUT_H

#include <stdint.h>

#include "bench_engine.h"
#include "bench_opts.h"

typedef struct bench_hostconf {
    char save[128];      /* CONFIG GET save, "" if unknown */
    char appendonly[32]; /* CONFIG GET appendonly */
} bench_hostconf_t;

void bench_out_begin(const bench_opts_t *o);
/* bench_progress_fn for bench_engine_run(); arg is the bench_opts_t. */
void bench_out_progress(const bench_test_t *t, uint64_t done, double elapsed,
                        uint64_t p99_ns, void *arg);
void bench_out_progress_clear(void);
void bench_out_result(const bench_opts_t *o, const bench_hostconf_t *hc, const bench_result_t *r);

/* Appends a test to the JSON document kept in memory; returns 0 or -1. */
int bench_json_add(const bench_opts_t *o, const bench_result_t *r);
/* Writes the whole document (config + tests so far) to path; 0 or -1. */
int bench_json_write(const bench_opts_t *o, const char *path);
/* Releases the in-memory JSON document. */
void bench_json_free(void);

#endif
