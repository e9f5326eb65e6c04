/* bench_sweep.h: --latency-sweep, latency against throughput for one or
 * more servers.
 *
 * For each target (--target, or the -h/-p server) the sweep measures the
 * closed-loop maximum (-c connections, one request in flight each, as
 * redis-benchmark -c N), takes the base target's median as 100%, then runs
 * the open loop (requests sent on schedule, latency counted from the
 * scheduled time) at each --sweep-points share of it, the targets taking
 * turns at every point in a rotating order, --sweep-runs times.  It prints
 * per rate and target the achieved rate, p50/p99/p99.9 and the server's CPU
 * per request (INFO cpu, where the server reports it), writes them with
 * every run to --json, and draws the curves with gnuplot (--plot).  Called
 * by main instead of the test loop; runs tests through bench_engine_run. */
#ifndef RL_BENCH_SWEEP_H
#define RL_BENCH_SWEEP_H

#include "bench_opts.h"
#include "bench_workload.h"

/* Runs the whole sweep of test t; 0, or 1 after printing why it failed. */
int bench_sweep_run(const bench_opts_t *o, const bench_test_t *t, const char *payload);

#endif
